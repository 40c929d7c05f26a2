/* stage.c: the stages of a kernel as lowering sees them.
 *
 * Turns a checked kernel into LStages (lower.h): one per tensor, inputs
 * first, then the stages in compute order, each with its definition as IR
 * expressions over its axis variables (types converted as sema decided:
 * operands widened to the type their operator computes in, indices to
 * i64, the value to the tensor's element type), its buffer, and the
 * default schedule (loops in axis order, computed at root).  Also the
 * small expression helpers the other lowering files share.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lower/lower.h"
#include "sema/sema.h"

/* ---- names --------------------------------------------------------- */

static bool
name_used(Lower *L, const char *n)
{
	for (int i = 0; i < L->nnames; i++)
		if (L->names[i] == n)
			return true;
	return false;
}

static const char *
claim(Lower *L, const char *n)
{
	n = intern_cstr(n);
	*ARENA_PUSH(ir_arena, L->names, L->nnames, L->capnames) = n;
	return n;
}

/* A fresh i64 variable called `name`, or `alt`, or `alt.N`: loop variable
 * names are unique in a function, so every backend can use them as is. */
static Var *
fresh_var(Lower *L, const char *name, const char *alt)
{
	const char *n = intern_cstr(name);
	if (name_used(L, n) && alt) {
		n = intern_cstr(alt);
		for (int i = 2; name_used(L, n); i++)
			n = intern_cstr(arena_printf(ir_arena, "%s%d", alt, i));
	}
	return ir_new_var(claim(L, n), ir_i64);
}

Var *
stage_var(Lower *L, const char *name)
{
	return fresh_var(L, name, name);
}

/* A uniquely named variable of type t (a let's). */
Var *
stage_typed_var(Lower *L, const char *name, IrType t)
{
	Var *v = fresh_var(L, name, name);
	v->type = t;
	return v;
}

/* ---- expression helpers -------------------------------------------- */

static IrExpr *
clone(IrExpr *e)
{
	IrExpr *n = arena_alloc(ir_arena, sizeof *n);
	*n = *e;
	return n;
}

IrExpr *
stage_map(IrExpr *e, IrExpr *(*fn)(IrExpr *, void *), void *ctx)
{
	if (!e)
		return NULL;
	IrExpr *r = fn(e, ctx);
	if (r)
		return r;
	IrExpr *a = stage_map(e->a, fn, ctx);
	IrExpr *b = stage_map(e->b, fn, ctx);
	IrExpr *c = stage_map(e->c, fn, ctx);
	IrExpr **args = NULL;
	int n = 0;
	bool changed = a != e->a || b != e->b || c != e->c;
	if (e->kind == IR_LOAD || e->kind == IR_CALL) {
		IrExpr **old = e->kind == IR_LOAD ? e->load.idx : e->call.args;
		n = e->kind == IR_LOAD ? e->load.nidx : e->call.nargs;
		args = arena_alloc(ir_arena, (n + 1) * sizeof *args);
		for (int i = 0; i < n; i++) {
			args[i] = stage_map(old[i], fn, ctx);
			changed |= args[i] != old[i];
		}
	}
	if (!changed)
		return e;
	IrExpr *x = clone(e);
	x->a = a, x->b = b, x->c = c;
	if (e->kind == IR_LOAD)
		x->load.idx = args;
	else if (e->kind == IR_CALL)
		x->call.args = args;
	return x;
}

typedef struct { Var *v; IrExpr *to; } Subst;

static IrExpr *
subst_fn(IrExpr *e, void *ctx)
{
	Subst *s = ctx;
	return e->kind == IR_VAR && e->var == s->v ? s->to : NULL;
}

IrExpr *
stage_subst(IrExpr *e, Var *v, IrExpr *to)
{
	Subst s = { v, to };
	return stage_map(e, subst_fn, &s);
}

typedef struct { Buffer *from, *to; bool found; } Redirect;

static IrExpr *
redirect_fn(IrExpr *e, void *ctx)
{
	Redirect *r = ctx;
	if (e->kind != IR_LOAD || e->load.buf != r->from)
		return NULL;
	r->found = true;
	if (!r->to)
		return e;
	IrExpr **idx = arena_alloc(ir_arena, (e->load.nidx + 1) * sizeof *idx);
	for (int i = 0; i < e->load.nidx; i++)
		idx[i] = stage_map(e->load.idx[i], redirect_fn, r);
	IrExpr *x = clone(e);
	x->load.buf = r->to;
	x->load.idx = idx;
	return x;
}

bool
stage_reads(IrExpr *e, Buffer *b)
{
	Redirect r = { b, NULL, false };
	stage_map(e, redirect_fn, &r);
	return r.found;
}

IrExpr *
stage_redirect(IrExpr *e, Buffer *from, Buffer *to)
{
	Redirect r = { from, to, false };
	return stage_map(e, redirect_fn, &r);
}

IrExpr *
stage_identity(ReduceOp op, ScalarType t)
{
	IrType ty = ir_scalar(t);
	bool fl = type_is_float(t);
	switch (op) {
	case RED_SUM:
		return fl ? ir_float(ty, 0.0) : ir_int(ty, 0);
	case RED_PROD:
		return fl ? ir_float(ty, 1.0) : ir_int(ty, 1);
	case RED_MAX:
		if (fl)
			return ir_float(ty, -INFINITY);
		if (t == TY_BOOL)
			return ir_int(ty, 0);
		if (!type_is_signed(t))
			return ir_int(ty, 0);
		return ir_int(ty, type_bits(t) == 64 ? INT64_MIN : -((int64_t)1 << (type_bits(t) - 1)));
	case RED_MIN:
		if (fl)
			return ir_float(ty, INFINITY);
		if (t == TY_BOOL)
			return ir_int(ty, 1);
		if (!type_is_signed(t))
			return ir_int(ty, type_bits(t) == 64 ? -1 : (int64_t)(((uint64_t)1 << type_bits(t)) - 1));
		return ir_int(ty, type_bits(t) == 64 ? INT64_MAX : ((int64_t)1 << (type_bits(t) - 1)) - 1);
	case RED_ARGMAX: case RED_ARGMIN:    /* rewritten by sema (argmax.c) */
		break;
	}
	return NULL;
}

IrExpr *
stage_combine(ReduceOp op, IrExpr *a, IrExpr *b)
{
	bool isbool = a->type.code == TY_BOOL;
	switch (op) {
	case RED_SUM:
		return ir_binop(isbool ? IR_OR : IR_ADD, a, b);
	case RED_PROD:
		return ir_binop(isbool ? IR_AND : IR_MUL, a, b);
	case RED_MAX:
		return ir_binop(isbool ? IR_OR : IR_MAX, a, b);
	case RED_MIN:
		return ir_binop(isbool ? IR_AND : IR_MIN, a, b);
	case RED_ARGMAX: case RED_ARGMIN:    /* rewritten by sema (argmax.c) */
		break;
	}
	return a;
}

void
stage_add_check(Lower *L, IrExpr *cond, int code, const char *msg)
{
	*ARENA_PUSH(ir_arena, L->checks, L->nchecks, L->capchecks) = ir_assert(cond, code, msg);
}

const char *
stage_loc_text(Loc loc)
{
	const SrcFile *f = source_get(loc.file);
	if (!f || loc.end < loc.begin || loc.end > f->len)
		return "?";
	return arena_strndup(ir_arena, f->text + loc.begin, loc.end - loc.begin);
}

/* ---- AST expressions to IR ----------------------------------------- */

static ScalarType
concrete(ScalarType t)
{
	if (t == TY_INT_LIT)
		return TY_I32;
	if (t == TY_FLOAT_LIT)
		return TY_F32;
	if (t == TY_ERROR || t >= TY_COUNT)
		return TY_I64;
	return t;
}

static IrExpr *
cast_to(IrExpr *x, ScalarType t)
{
	t = concrete(t);
	if (x->type.code == t)
		return x;
	IrExpr *c = ir_cast(ir_scalar(t), x);
	c->loc = x->loc;
	return c;
}

static LStage *
stage_of(Lower *L, Tensor *t)
{
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->t == t)
			return L->stages[i];
	return NULL;
}

static IrExpr *conv(Lower *L, LStage *s, Expr *e);

static IrExpr *
conv_to(Lower *L, LStage *s, Expr *e, ScalarType t)
{
	return cast_to(conv(L, s, e), t);
}

static IrExprKind
binop_kind(Op op)
{
	switch (op) {
	case OP_ADD: return IR_ADD;
	case OP_SUB: return IR_SUB;
	case OP_MUL: return IR_MUL;
	case OP_DIV: return IR_DIV;
	case OP_MOD: return IR_MOD;
	case OP_SHL: return IR_SHL;
	case OP_SHR: return IR_SHR;
	case OP_BITAND: return IR_BITAND;
	case OP_BITOR: return IR_BITOR;
	case OP_BITXOR: return IR_BITXOR;
	case OP_EQ: return IR_EQ;
	case OP_NE: return IR_NE;
	case OP_LT: return IR_LT;
	case OP_LE: return IR_LE;
	case OP_GT: return IR_GT;
	case OP_GE: return IR_GE;
	case OP_AND: return IR_AND;
	case OP_OR: return IR_OR;
	default: return IR_ADD;
	}
}

static IrExpr *
conv_binary(Lower *L, LStage *s, Expr *e)
{
	Op op = e->bin.op;
	ScalarType t = concrete(e->type);
	if (op >= OP_EQ && op <= OP_GE) {
		t = sema_unify(e->bin.a->type, e->bin.b->type);
		if (t == TY_ERROR)
			t = concrete(e->bin.a->type);
	} else if (op == OP_AND || op == OP_OR) {
		t = TY_BOOL;
	}
	t = concrete(t);
	return ir_binop(binop_kind(op), conv_to(L, s, e->bin.a, t), conv_to(L, s, e->bin.b, t));
}

static IrExpr *
conv_call(Lower *L, LStage *s, Expr *e)
{
	ScalarType t = concrete(e->type);
	int n = e->call.nargs;
	IrExpr **a = arena_alloc(ir_arena, (n + 1) * sizeof *a);
	for (int i = 0; i < n; i++)
		a[i] = conv_to(L, s, e->call.args[i], t);
	switch (e->call.builtin) {
	case BI_MIN:
		return ir_binop(IR_MIN, a[0], a[1]);
	case BI_MAX:
		return ir_binop(IR_MAX, a[0], a[1]);
	case BI_CLAMP:
		return ir_binop(IR_MIN, ir_binop(IR_MAX, a[0], a[1]), a[2]);
	default:
		return ir_call_builtin(e->call.builtin, ir_scalar(t), a, n);
	}
}

static IrExpr *
conv_name(Lower *L, LStage *s, Expr *e)
{
	switch (e->id.ref) {
	case REF_SIZE:
	case REF_SCALAR:
		return L->param_value[e->id.param->index];
	case REF_PURE_AXIS:
		return ir_var(s->axes[e->id.axis].var);
	case REF_RED_AXIS:
		return ir_var(s->axes[s->rax[e->id.red->index]].var);
	default:
		ICE("unresolved name '%s' in lowering", e->id.name);
	}
}

/* stage_conv_subst: checked expressions that conv replaces by a copy of
 * an IR load (the partial results of rfactor of a tuple reduction) */
static Expr **hook_from;
static IrExpr **hook_to;
static int nhooks;

static IrExpr *
conv(Lower *L, LStage *s, Expr *e)
{
	ScalarType t = concrete(e->type);
	IrExpr *x = NULL;
	for (int i = 0; i < nhooks; i++)
		if (hook_from[i] == e) {
			IrExpr *p = hook_to[i];
			IrExpr **idx = arena_alloc(ir_arena, (p->load.nidx + 1) * sizeof *idx);
			memcpy(idx, p->load.idx, p->load.nidx * sizeof *idx);
			return cast_to(ir_load(p->load.buf, idx, p->load.nidx, NULL, 1), t);
		}
	switch (e->kind) {
	case EXPR_INT:
		if (type_is_float(t))
			x = ir_float(ir_scalar(t), (double)e->ival);
		else
			x = ir_int(ir_scalar(t), t == TY_BOOL ? e->ival != 0 : e->ival);
		break;
	case EXPR_FLOAT:
		x = type_is_float(t) ? ir_float(ir_scalar(t), e->fval)
		                     : ir_int(ir_scalar(t), (int64_t)e->fval);
		break;
	case EXPR_BOOL:
		x = ir_int(ir_bool, e->ival != 0);
		break;
	case EXPR_NAME:
		x = conv_name(L, s, e);
		break;
	case EXPR_ACCESS: {
		LStage *p = stage_of(L, e->call.tensor);
		if (!p)
			ICE("access to unknown tensor '%s'", e->call.name);
		IrExpr **idx = arena_alloc(ir_arena, (e->call.nargs + 1) * sizeof *idx);
		for (int i = 0; i < e->call.nargs; i++) {
			idx[i] = conv_to(L, s, e->call.args[i], TY_I64);
			if (idx[i]->loc.file == 0)
				idx[i] = clone(idx[i]);
			idx[i]->loc = e->call.args[i]->loc;
		}
		x = ir_load(p->buf, idx, e->call.nargs, NULL, 1);
		break;
	}
	case EXPR_CALL:
		x = conv_call(L, s, e);
		break;
	case EXPR_CAST:
		x = ir_cast(ir_scalar(concrete(e->call.cast_to)), conv(L, s, e->call.args[0]));
		break;
	case EXPR_UNARY:
		if (e->bin.op == OP_NOT)
			x = ir_unop(IR_NOT, conv_to(L, s, e->bin.a, TY_BOOL));
		else
			x = ir_unop(e->bin.op == OP_NEG ? IR_NEG : IR_BITNOT, conv_to(L, s, e->bin.a, t));
		break;
	case EXPR_BINARY:
		x = conv_binary(L, s, e);
		break;
	case EXPR_SELECT:
		x = ir_select(conv_to(L, s, e->call.args[0], TY_BOOL),
		    conv_to(L, s, e->call.args[1], t), conv_to(L, s, e->call.args[2], t));
		break;
	case EXPR_REDUCE:
		ICE("a reduction inside an expression reached lowering");
	}
	if (x->loc.file == 0) {
		/* constructors may share immediates: never stamp a shared node */
		if (x->kind == IR_INT || x->kind == IR_FLOAT || x->kind == IR_VAR)
			x = clone(x);
		x->loc = e->loc;
	}
	return x;
}

/* ---- stages ----------------------------------------------------------- */

int
stage_add_axis(Lower *L, LStage *s, const char *name, bool red)
{
	Axis *a = ARENA_PUSH(ir_arena, s->axes, s->naxes, s->capaxes);
	a->name = intern_cstr(name);
	a->red = red;
	a->leaf = true;
	a->fk = FOR_SERIAL;
	a->var = fresh_var(L, name, arena_printf(ir_arena, "%s_%s", s->name, name));
	return s->naxes - 1;
}

int
stage_leaf(LStage *s, const char *name)
{
	for (int i = 0; i < s->nleaves; i++)
		if (s->axes[s->leaves[i]].name == name)
			return i;
	return -1;
}

int
stage_axis(LStage *s, const char *name)
{
	int i = stage_leaf(s, name);
	return i < 0 ? -1 : s->leaves[i];
}

const char *
stage_leaf_list(LStage *s)
{
	char *out = "";
	for (int i = 0; i < s->nleaves; i++)
		out = arena_printf(ir_arena, "%s%s'%s'", out, i ? ", " : "", s->axes[s->leaves[i]].name);
	return *out ? out : "none";
}

LStage *
stage_find(Lower *L, const char *name)
{
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->name == name)
			return L->stages[i];
	return NULL;
}

/* A new stage at position `at` of the compute order (-1: the end). */
LStage *
stage_new(Lower *L, const char *name, ScalarType elem, int ndims, int at)
{
	LStage *s = arena_alloc(ir_arena, sizeof *s);
	s->name = intern_cstr(name);
	s->elem = elem;
	s->ndims = ndims;
	s->compute.kind = LEVEL_ROOT;
	s->scope = SCOPE_GLOBAL;
	s->buf = ir_new_buffer(s->name, elem, ndims);
	s->buf->ndims = ndims;
	if (!s->buf->min)
		s->buf->min = arena_alloc(ir_arena, (ndims + 1) * sizeof(IrExpr *));
	if (!s->buf->extent)
		s->buf->extent = arena_alloc(ir_arena, (ndims + 1) * sizeof(IrExpr *));
	s->buf->abi_index = -1;
	s->buf->scope = SCOPE_GLOBAL;
	ARENA_PUSH(ir_arena, L->stages, L->nstages, L->capstages);
	if (at < 0 || at >= L->nstages)
		at = L->nstages - 1;
	memmove(&L->stages[at + 1], &L->stages[at], (L->nstages - 1 - at) * sizeof *L->stages);
	L->stages[at] = s;
	return s;
}

static void
define(Lower *L, LStage *s)
{
	Rule *r = s->t->rule;
	for (int d = 0; d < s->ndims; d++)
		stage_add_axis(L, s, r->axes[d], false);
	Expr *v = r->value;
	s->loc = r->loc;
	if (v->kind == EXPR_REDUCE) {
		s->red = true;
		s->rop = v->reduce.op;
		s->nred = v->reduce.naxes;
		s->rmin = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rmin);
		s->rext = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rext);
		s->rax = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rax);
		for (int i = 0; i < s->nred; i++) {
			RedAxis *ra = &v->reduce.axes[i];
			s->rax[i] = stage_add_axis(L, s, ra->name, true);
			s->rmin[i] = ra->lo ? conv_to(L, s, ra->lo, TY_I64) : ir_i64c(0);
			s->rext[i] = lin_normalize(ir_sub(conv_to(L, s, ra->hi, TY_I64), s->rmin[i]));
		}
		s->rbody = conv_to(L, s, v->reduce.body, s->elem);
		if (v->reduce.where)   /* only where it holds (tx.5 REDUCTIONS) */
			s->rpred = conv_to(L, s, v->reduce.where, TY_BOOL);
	} else {
		s->value = conv_to(L, s, v, s->elem);
	}
	if (s->t->ninits > 0) {
		/* a scan: step t < m takes initial value t, the others the update */
		Tensor *t = s->t;
		IrExpr *tv = ir_var(s->axes[t->scan_dim].var);
		IrExpr *init = conv_to(L, s, t->inits[t->ninits - 1]->value, s->elem);
		for (int j = t->ninits - 2; j >= 0; j--)
			init = ir_select(ir_binop(IR_LT, tv, ir_i64c(j + 1)),
			    conv_to(L, s, t->inits[j]->value, s->elem), init);
		s->value = ir_select(ir_binop(IR_LT, tv, ir_i64c(t->ninits)), init, s->value);
		s->value->loc = r->loc;
		s->scan = true;
		s->scan_dim = t->scan_dim;
		s->scan_init = t->ninits;
		s->scan_lead = s;
	}
	if (s->t->update && !s->red) {
		/* an update definition: its domain as reduction axes, after the
		 * pure ones; its position and value over both */
		Rule *u = s->t->update;
		s->upd = true;
		s->uassoc = u->upd_assoc;
		s->uop = u->upd_op;
		s->uloc = u->loc;
		s->nred = u->upd.naxes;
		s->rmin = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rmin);
		s->rext = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rext);
		s->rax = arena_alloc(ir_arena, (s->nred + 1) * sizeof *s->rax);
		for (int i = 0; i < s->nred; i++) {
			RedAxis *ra = &u->upd.axes[i];
			s->rax[i] = stage_add_axis(L, s, ra->name, true);
			s->rmin[i] = ra->lo ? conv_to(L, s, ra->lo, TY_I64) : ir_i64c(0);
			s->rext[i] = lin_normalize(ir_sub(conv_to(L, s, ra->hi, TY_I64), s->rmin[i]));
		}
		s->uidx = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *s->uidx);
		for (int d = 0; d < s->ndims; d++) {
			s->uidx[d] = conv_to(L, s, u->target->call.args[d], TY_I64);
			if (d < 64 && u->axes[d])
				s->ukeep |= (uint64_t)1 << d;
		}
		s->uval = conv_to(L, s, u->value, s->elem);
		if (u->upd.where)
			s->upred = conv_to(L, s, u->upd.where, TY_BOOL);
	}
	s->leaves = arena_alloc(ir_arena, (s->naxes + 1) * sizeof *s->leaves);
	s->nleaves = s->capleaves = s->naxes;
	for (int i = 0; i < s->naxes; i++)
		s->leaves[i] = i;
}

/* e as IR of type t over s's axes, with each from[i] replaced by the
 * load to[i] (converted to from[i]'s type). */
IrExpr *
stage_conv_subst(Lower *L, LStage *s, Expr *e, ScalarType t, Expr **from, IrExpr **to, int n)
{
	hook_from = from;
	hook_to = to;
	nhooks = n;
	IrExpr *x = conv_to(L, s, e, t);
	nhooks = 0;
	return x;
}

/* e, an expression of output m of the tuple reduction s leads, over s's
 * axis variables: m's axes stand for the same points (the same pure axes
 * and ranges, in the same order). */
IrExpr *
stage_as_lead(LStage *s, LStage *m, IrExpr *e)
{
	if (m == s || !e)
		return e;
	for (int k = 0; k < s->ndims + s->nred && k < m->ndims + m->nred; k++) {
		int am = k < m->ndims ? k : m->rax[k - m->ndims];
		int as = k < s->ndims ? k : s->rax[k - s->ndims];
		e = stage_subst(e, m->axes[am].var, ir_var(s->axes[as].var));
	}
	return e;
}

IrExpr *
stage_param_expr(Lower *L, Expr *e)
{
	return conv_to(L, NULL, e, e->type);
}

static Buffer *
argument_of(const Lower *like, Tensor *t)
{
	for (int i = 0; like && i < like->nstages; i++)
		if (like->stages[i]->t == t)
			return like->stages[i]->buf;
	return NULL;
}

Lower *
stage_build(Program *p, Kernel *k, const LowerOptions *opt, const Lower *like)
{
	if (!ir_arena)
		ir_arena = arena_new();
	Lower *L = arena_alloc(ir_arena, sizeof *L);
	L->p = p;
	L->k = k;
	L->opt = opt;
	L->params = arena_alloc(ir_arena, (k->nparams + 1) * sizeof *L->params);
	L->param_value = arena_alloc(ir_arena, (k->nparams + 1) * sizeof *L->param_value);
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		L->params[i] = like ? like->params[i] :
		    ir_new_var(claim(L, pa->name), ir_scalar(concrete(pa->type)));
		if (like)
			claim(L, pa->name);
		L->param_value[i] = ir_var(L->params[i]);
		if (pa->is_size)
			L->ranges = lin_push(L->ranges, L->params[i], ir_i64c(0), NULL, false);
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].is_size)
			stage_add_check(L, ir_binop(IR_GE, ir_var(L->params[i]), ir_i64c(0)), 2,
			    arena_printf(ir_arena, "%s: size %s must not be negative", k->name,
			    k->params[i].name));
	/* after the sign checks, so that a negative size is reported as one */
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		for (int d = 0; opt && d < opt->ndefs; d++)
			if (pa->is_size && intern_cstr(opt->def_names[d]) == pa->name) {
				L->param_value[i] = ir_i64c(opt->def_values[d]);
				stage_add_check(L, ir_binop(IR_EQ, ir_var(L->params[i]),
				    ir_i64c(opt->def_values[d])), 2,
				    arena_printf(ir_arena, "%s: %s must be %lld (fixed at compile time with -D)",
				    k->name, pa->name, (long long)opt->def_values[d]));
			}
	}
	/* inputs first, then the stages in compute order */
	for (int i = 0; i < k->ntensors; i++) {
		Tensor *t = k->tensors[i];
		if (t->role == ROLE_IN) {
			LStage *s = stage_new(L, t->name, t->elem, t->ndims, -1);
			s->t = t;
			s->input = true;
		}
	}
	for (int i = 0; i < k->nstages; i++) {
		Tensor *t = k->stages[i];
		LStage *s = stage_new(L, t->name, t->elem, t->ndims, -1);
		s->t = t;
		s->output = t->role == ROLE_OUT;
	}
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		Buffer *shared = s->t->abi_index >= 0 ? argument_of(like, s->t) : NULL;
		if (shared)
			s->buf = shared;
		Buffer *b = s->buf;
		b->tensor = s->t;
		b->abi_index = s->t->abi_index;
		b->is_input = s->input;
		if (s->t->shape && !s->t->shape_inferred) {
			s->shape = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *s->shape);
			for (int d = 0; d < s->ndims; d++) {
				s->shape[d] = lin_normalize(conv_to(L, NULL, s->t->shape[d], TY_I64));
				if ((s->input || s->output) && !shared) {
					b->min[d] = ir_i64c(0);
					b->extent[d] = s->shape[d];
					if (!lin_prove_le(ir_i64c(0), s->shape[d], L->ranges))
						stage_add_check(L, ir_binop(IR_GE, s->shape[d], ir_i64c(0)), 2,
						    arena_printf(ir_arena, "%s: extent %d of '%s' (%s) must not be negative",
						    k->name, d, s->name, stage_loc_text(s->t->shape[d]->loc)));
				}
			}
		}
	}
	L->nbase_checks = L->nchecks;
	/* definitions, outputs first so that their axes get the plain names */
	for (int i = L->nstages - 1; i >= 0; i--)
		if (!L->stages[i]->input)
			define(L, L->stages[i]);
	/* the outputs of each tuple reduction, on its first one */
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		TupleRed *tg = s->t && s->t->update ? s->t->update->tgroup : NULL;
		if (!tg)
			continue;
		s->tlead = stage_find(L, tg->names[0]);
		s->tassoc = tg->assoc;
		if (s->tlead == s) {
			s->ntmem = tg->n;
			s->tmem = arena_alloc(ir_arena, (size_t)(tg->n + 1) * sizeof *s->tmem);
			for (int j = 0; j < tg->n; j++)
				s->tmem[j] = stage_find(L, tg->names[j]);
		}
	}
	return L;
}
