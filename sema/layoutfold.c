/* layoutfold.c: a layout transform of a constant tensor computed at
 * compile time (tx.5 LAYOUTS).
 *
 * When a rewritten call (layouts.c) transforms a tensor the caller holds
 * as a constant (`const w: f32[...] = file(...)`, weights), the transform
 * kernel's rule is evaluated here on the constant's bytes, and the result
 * is a new constant of the caller (read-only data in the object, as every
 * constant) instead of a stage computed at run time.  Only what a layout
 * transform is folds: a kernel of one input and one output, f32, sizes
 * only, one rule of index arithmetic, comparisons, selects, min and max,
 * casts and reads of the input (in bounds); any other kernel is computed
 * at run time as usual.  Integer / and % round as everywhere (toward
 * negative infinity, never negative).
 *
 * layoutfold_zero evaluates an element-wise rule at a zero of the tensor
 * it reads (layouts.c), in that tensor's element type: each integer
 * value keeps the type it has (a read, a cast, or the other operand's
 * for a literal) and wraps to its width, as the generated code does
 * (i8(c - 32) at c = 0 is -32, u8(0 - 32) is 224).
 */
#include <math.h>
#include <string.h>

#include "sema/sema.h"

/* At most this many elements are computed at compile time. */
#define FOLD_MAX ((int64_t)1 << 26)

typedef struct {
	bool flt;
	int64_t i;
	double d;
	ScalarType ty;           /* an integer's type; TY_ERROR: an index or a literal */
} Val;

typedef struct {
	Kernel *f;
	int64_t *size;           /* by parameter index; -1: unknown */
	const char **axes; int naxes;
	int64_t *at;             /* the point */
	Tensor *in;              /* the kernel's input */
	Tensor *src;             /* the constant it reads */
	int64_t *sdims;
	ScalarType zero;         /* layoutfold_zero: the element type of in */
	bool bad;
} Ev;

static int64_t
floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b, r = a % b;
	return r && (r < 0) != (b < 0) ? q - 1 : q;
}

static double
num(Val v)
{
	return v.flt ? v.d : (double)v.i;
}

static Val
ival(int64_t i)
{
	return (Val){ false, i, 0, TY_ERROR };
}

/* v as a value of integer type t (its low bits, as C converts). */
static Val
wrap(Val v, ScalarType t)
{
	v.ty = t;
	int bits = type_bits(t);
	if (v.flt || !type_is_int(t) || t == TY_INT_LIT || bits >= 64)
		return v;
	uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v.i & m;
	if (type_is_signed(t) && (u >> (bits - 1)))
		v.i = (int64_t)(u | ~m);
	else
		v.i = (int64_t)u;
	return v;
}

static Val eval(Ev *ev, Expr *e);

static Val
binary(Ev *ev, Expr *e)
{
	Val a = eval(ev, e->bin.a);
	if (e->bin.op == OP_AND || e->bin.op == OP_OR) {
		bool x = num(a) != 0;
		if (e->bin.op == OP_AND ? !x : x)
			return ival(x);
		return ival(num(eval(ev, e->bin.b)) != 0);
	}
	Val b = eval(ev, e->bin.b);
	bool flt = a.flt || b.flt;
	ScalarType ty = a.ty != TY_ERROR ? a.ty : b.ty;   /* a literal takes the other's */
	uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
	if (!flt && ty == TY_U64) {
		ev->bad = true;   /* past INT64_MAX the int64 arithmetic here is not u64's */
		return ival(0);
	}
	switch (e->bin.op) {
	case OP_ADD: case OP_SUB: case OP_MUL:
		if (flt)
			return (Val){ true, 0, e->bin.op == OP_ADD ? num(a) + num(b) :
			    e->bin.op == OP_SUB ? num(a) - num(b) : num(a) * num(b), TY_ERROR };
		return wrap(ival((int64_t)(e->bin.op == OP_ADD ? ua + ub : e->bin.op == OP_SUB ?
		    ua - ub : ua * ub)), ty);
	case OP_DIV: case OP_MOD:
		if (flt && e->bin.op == OP_DIV)
			return (Val){ true, 0, num(a) / num(b), TY_ERROR };
		if (flt || b.i == 0 || (b.i == -1 && a.i == INT64_MIN)) {
			ev->bad = true;
			return ival(0);
		}
		return wrap(ival(e->bin.op == OP_DIV ? floordiv(a.i, b.i) :
		    a.i - floordiv(a.i, b.i) * b.i), ty);
	case OP_SHL: case OP_SHR:
		if (flt || ty == TY_ERROR || b.i < 0 || b.i >= type_bits(ty)) {
			ev->bad = true;
			return ival(0);
		}
		if (e->bin.op == OP_SHL)
			return wrap(ival((int64_t)(ua << b.i)), ty);
		/* >> of a signed value is arithmetic: floor(a / 2^b) */
		return wrap(ival(type_is_signed(ty) ? floordiv(a.i, (int64_t)1 << b.i) :
		    (int64_t)(ua >> b.i)), ty);
	case OP_BITAND: case OP_BITOR: case OP_BITXOR:
		if (flt) {
			ev->bad = true;
			return ival(0);
		}
		return wrap(ival((int64_t)(e->bin.op == OP_BITAND ? ua & ub :
		    e->bin.op == OP_BITOR ? ua | ub : ua ^ ub)), ty);
	case OP_EQ: return ival(flt ? num(a) == num(b) : a.i == b.i);
	case OP_NE: return ival(flt ? num(a) != num(b) : a.i != b.i);
	case OP_LT: return ival(flt ? num(a) < num(b) : a.i < b.i);
	case OP_LE: return ival(flt ? num(a) <= num(b) : a.i <= b.i);
	case OP_GT: return ival(flt ? num(a) > num(b) : a.i > b.i);
	case OP_GE: return ival(flt ? num(a) >= num(b) : a.i >= b.i);
	default:
		ev->bad = true;
		return ival(0);
	}
}

/* A read of the input: the constant's element, in bounds. */
static Val
access(Ev *ev, Expr *e)
{
	if (!ev->src && e->call.name == ev->in->name)   /* layoutfold_zero */
		return type_is_int(ev->zero) ? wrap(ival(0), ev->zero) :
		    (Val){ true, 0, 0.0, TY_ERROR };
	if (!ev->src || e->call.name != ev->in->name || e->call.nargs != ev->src->ndims) {
		ev->bad = true;
		return ival(0);
	}
	int64_t off = 0;
	for (int d = 0; d < e->call.nargs; d++) {
		Val x = eval(ev, e->call.args[d]);
		if (x.flt || x.i < 0 || x.i >= ev->sdims[d]) {
			ev->bad = true;
			return ival(0);
		}
		off = off * ev->sdims[d] + x.i;
	}
	float f;
	memcpy(&f, ev->src->cdata + 4 * off, 4);
	return (Val){ true, 0, f, TY_ERROR };
}

static Val
eval(Ev *ev, Expr *e)
{
	if (ev->bad || !e) {
		ev->bad = true;
		return ival(0);
	}
	switch (e->kind) {
	case EXPR_INT: case EXPR_BOOL:
		return ival(e->ival);
	case EXPR_FLOAT:
		return (Val){ true, 0, e->fval, TY_ERROR };
	case EXPR_NAME:
		for (int i = 0; i < ev->naxes; i++)
			if (ev->axes[i] == e->id.name)
				return ival(ev->at[i]);
		for (int i = 0; ev->f && i < ev->f->nparams; i++)
			if (ev->f->params[i].name == e->id.name && ev->size[i] >= 0)
				return ival(ev->size[i]);
		break;
	case EXPR_UNARY: {
		Val a = eval(ev, e->bin.a);
		if (e->bin.op == OP_NEG)
			return a.flt ? (Val){ true, 0, -a.d, TY_ERROR } :
			    wrap(ival((int64_t)(0 - (uint64_t)a.i)), a.ty);
		if (e->bin.op == OP_NOT)
			return ival(num(a) == 0);
		break;
	}
	case EXPR_BINARY:
		return binary(ev, e);
	case EXPR_SELECT:
		return num(eval(ev, e->call.args[0])) != 0 ? eval(ev, e->call.args[1]) :
		    eval(ev, e->call.args[2]);
	case EXPR_ACCESS:
		return access(ev, e);
	case EXPR_CAST: {
		Val a = eval(ev, e->call.args[0]);
		ScalarType to = e->call.cast_to;
		if (type_is_float(to))
			return (Val){ true, 0, to == TY_F32 ? (float)num(a) : num(a), TY_ERROR };
		if (!type_is_int(to) || (a.flt && !(a.d > -9.2e18 && a.d < 9.2e18)))
			break;
		return wrap(ival(a.flt ? (int64_t)a.d : a.i), to);
	}
	case EXPR_CALL: {
		Builtin b = types_builtin(e->call.name);
		if ((b == BI_MIN || b == BI_MAX) && e->call.nargs == 2 && !e->call.keys) {
			Val x = eval(ev, e->call.args[0]), y = eval(ev, e->call.args[1]);
			bool lt = x.flt || y.flt ? num(x) < num(y) : x.i < y.i;
			return (b == BI_MIN) == lt ? x : y;
		}
		break;
	}
	default:
		break;
	}
	ev->bad = true;
	return ival(0);
}

/* An extent of f (of its sizes and constants), or -1. */
static int64_t
extent(Ev *ev, Expr *e)
{
	int naxes = ev->naxes;
	ev->naxes = 0;
	Val v = eval(ev, e);
	ev->naxes = naxes;
	if (ev->bad || v.flt || v.i < 0)
		return -1;
	return v.i;
}

Tensor *
layoutfold_const(Kernel *f, Tensor *src, const char *name, Loc at)
{
	Tensor *in = NULL, *out = NULL;
	Rule *rule = NULL;
	int nin = 0, nout = 0, nrules = 0;
	for (int i = 0; i < f->nparams; i++)
		if (!f->params[i].is_size)
			return NULL;
	for (int i = 0; i < f->nitems; i++) {
		KernelItem *it = &f->items[i];
		if (it->call)
			return NULL;
		if (it->decl && it->decl->role == ROLE_IN && !it->decl->is_const) {
			in = it->decl;
			nin++;
		} else if (it->decl && it->decl->role == ROLE_OUT) {
			out = it->decl;
			nout++;
		} else if (it->decl) {
			return NULL;
		}
		if (it->rule) {
			rule = it->rule;
			nrules++;
		}
	}
	if (nin != 1 || nout != 1 || nrules != 1 || !src->cdata || src->elem != TY_F32 ||
	    in->elem != TY_F32 || out->elem != TY_F32 || rule->name != out->name ||
	    rule->update || rule->init || rule->tuple || !rule->value ||
	    rule->value->kind == EXPR_REDUCE || rule->naxes != out->ndims ||
	    in->ndims != src->ndims)
		return NULL;
	Ev ev = { .f = f, .in = in, .src = src };
	ev.size = arena_alloc(perm, (size_t)(f->nparams + 1) * sizeof *ev.size);
	for (int i = 0; i < f->nparams; i++)
		ev.size[i] = -1;
	ev.sdims = arena_alloc(perm, (size_t)(src->ndims + 1) * sizeof *ev.sdims);
	/* the sizes from the constant's extents (each a literal) */
	for (int d = 0; d < in->ndims; d++) {
		if (src->shape[d]->kind != EXPR_INT)
			return NULL;
		ev.sdims[d] = src->shape[d]->ival;
		Expr *e = in->shape[d];
		for (int i = 0; e->kind == EXPR_NAME && i < f->nparams; i++)
			if (f->params[i].name == e->id.name)
				ev.size[i] = ev.sdims[d];
	}
	for (int d = 0; d < in->ndims; d++)
		if (extent(&ev, in->shape[d]) != ev.sdims[d])
			return NULL;
	int64_t n = 1;
	Expr **shape = arena_alloc(perm, (size_t)(out->ndims + 1) * sizeof *shape);
	int64_t *dims = arena_alloc(perm, (size_t)(out->ndims + 1) * sizeof *dims);
	for (int d = 0; d < out->ndims; d++) {
		dims[d] = extent(&ev, out->shape[d]);
		if (dims[d] < 0 || (dims[d] && n > FOLD_MAX / dims[d]))
			return NULL;
		n *= dims[d];
		shape[d] = ast_int(at, dims[d]);
	}
	float *data = arena_alloc(perm, (size_t)n * 4 + 4);
	ev.axes = rule->axes;
	ev.naxes = rule->naxes;
	ev.at = arena_alloc(perm, (size_t)(out->ndims + 1) * sizeof *ev.at);
	for (int64_t p = 0; p < n; p++) {
		int64_t rest = p;
		for (int d = out->ndims - 1; d >= 0; d--) {
			ev.at[d] = dims[d] ? rest % dims[d] : 0;
			rest = dims[d] ? rest / dims[d] : 0;
		}
		Val v = eval(&ev, rule->value);
		if (ev.bad)
			return NULL;
		data[p] = (float)num(v);
	}
	Tensor *t = arena_alloc(perm, sizeof *t);
	*t = *src;
	t->loc = at;
	t->name = name;
	t->shape = shape;
	t->ndims = out->ndims;
	t->cdata = (const unsigned char *)data;
	t->cbytes = (size_t)n * 4;
	t->cmem = true;
	t->cpath = arena_printf(perm, "%s(%s)", f->name, src->name);
	t->abi_index = -1;
	t->stage_index = -1;
	t->rule = NULL;
	return t;
}

bool
layoutfold_zero(Expr *e, const char *t, ScalarType elem)
{
	Tensor in = { .name = t };
	Ev ev = { .in = &in, .zero = elem };
	Val v = eval(&ev, e);
	return !ev.bad && num(v) == 0;
}
