/* trace.c: runs a lowered loop nest in an interpreter and records every
 * load and store (txc viz).
 *
 * The nest is the one --print-loops shows: loops keep their kinds and
 * accesses their coordinates, so events name tensor elements and the
 * lines of the printed nest.  Values are computed for real (seeded random
 * inputs) so that data-dependent selects take the branches they would;
 * f16 is computed as f32, bf16 as f32 rounded to bf16 after each
 * operation.  The clock: every store (or effect) takes one tick; the
 * iterations of a parallel loop are cut into one contiguous chunk per
 * thread, as libtxrt's pool does, and the chunks start at the same tick; a vectorized loop's lanes all run at the same tick, as one
 * vector instruction does; GPU block and thread loops run every
 * iteration at once.  A loop's end is its slowest chunk's end.
 *
 * Errors (a limit, a failing assert, an IR form this does not run) print
 * one line and longjmp out of the run.
 */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"

typedef union {
	int64_t i;
	double f;
} Val;

/* A variable's value while in scope. */
typedef struct {
	Var *v;
	Val val;
} Bind;

/* A live allocation of a buffer (or an argument's memory). */
typedef struct {
	Buffer *buf;
	int tensor;
	int64_t *min, *ext, n;
	Val *data;
} Store;

/* The copies of a shared stage computed inside a GPU block's thread
 * loops (exec_shared_alloc): the k-th allocation of each thread is the
 * k-th copy. */
typedef struct {
	Store *st;
	int64_t at;              /* its ALLOC event */
	int64_t ready;           /* the tick its copy ends, or -1 */
} Phase;

typedef struct {
	Buffer *buf;
	Phase *phase; int n, cap;
	int thread, count;       /* the thread running, and its allocations so far */
	int cur;                 /* the copy in use, or -1 */
} Coop;

typedef struct {
	VizTrace *t;
	const VizOptions *o;
	Bind *env; int nenv, capenv;
	Store **live; int nlive, caplive;
	int64_t *loops; int nloops, caploops;   /* enclosing loops' values */
	struct Prod { const char *name; bool update; } *prod;   /* produce markers */
	int nprod, capprod;
	VizLines *lines;         /* nest.c */
	int64_t tick;
	int thread, lane, line;
	int store_tensor;       /* the statement being run stores this tensor */
	int64_t capev;
	int nallocs;             /* allocations so far */
	int64_t gpu_block;       /* the GPU block being run (its number), or -1 */
	int64_t gpu_threads;     /* its threads */
	int thread_depth;        /* GPU thread loops around the statement */
	Coop *coop; int ncoop, capcoop;   /* the block's shared copies */
	int64_t max_events;
	jmp_buf fail;
} Run;

static void fail(Run *r, const char *fmt, ...) TXC_PRINTF(2, 3) TXC_NORETURN;

static void
fail(Run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txc viz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	longjmp(r->fail, 1);
}

static void
step(Run *r)
{
	if (++r->t->steps > VIZ_MAX_STEPS)
		fail(r, "the kernel runs more than %lld loop iterations and statements at "
		    "these sizes (the limit for a picture); use smaller sizes", VIZ_MAX_STEPS);
}

/* ---- tensors ------------------------------------------------------------ */

static int
tensor_of(VizTrace *t, Buffer *b)
{
	for (int i = 0; i < t->ntensors; i++)
		if (!strcmp(t->tensors[i].name, b->name))
			return i;
	return -1;
}

static int
add_tensor(VizTrace *t, Buffer *b, int *cap)
{
	int i = tensor_of(t, b);
	if (i >= 0)
		return i;
	VizTensor *v = ARENA_PUSH(perm, t->tensors, t->ntensors, *cap);
	memset(v, 0, sizeof *v);
	v->name = b->name;
	v->elem = b->elem;
	v->ndims = b->ndims;
	v->arg = b->abi_index >= 0;
	v->input = b->is_input;
	v->lo = arena_alloc(perm, (b->ndims + 1) * sizeof *v->lo);
	v->ext = arena_alloc(perm, (b->ndims + 1) * sizeof *v->ext);
	return t->ntensors - 1;
}

static void
collect_allocs(VizTrace *t, IrStmt *s, int *cap)
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_FOR: collect_allocs(t, s->loop.body, cap); break;
	case IS_LET: collect_allocs(t, s->let.body, cap); break;
	case IS_ALLOCATE:
		add_tensor(t, s->alloc.buf, cap);
		collect_allocs(t, s->alloc.body, cap);
		break;
	case IS_PRODUCE: collect_allocs(t, s->produce.body, cap); break;
	case IS_IF:
		collect_allocs(t, s->ifs.then_s, cap);
		collect_allocs(t, s->ifs.else_s, cap);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			collect_allocs(t, s->block.stmts[i], cap);
		break;
	default: break;
	}
}

/* ---- events ------------------------------------------------------------- */

static VizEvent *
event(Run *r, VizKind kind, int tensor, int ndims)
{
	VizTrace *t = r->t;
	if (t->nev >= r->max_events)
		fail(r, "the trace has more than %lld loads and stores at these sizes (the "
		    "limit for a picture); use smaller sizes", (long long)r->max_events);
	if (t->nev == r->capev) {
		r->capev = r->capev ? 2 * r->capev : 1024;
		t->ev = realloc(t->ev, (size_t)r->capev * sizeof *t->ev);
		if (!t->ev)
			diag_fatal("out of memory for the trace");
	}
	VizEvent *e = &t->ev[t->nev++];
	memset(e, 0, sizeof *e);
	e->tick = r->tick;
	e->thread = r->thread;
	e->lane = r->lane;
	e->line = r->line;
	e->kind = kind;
	e->tensor = tensor;
	e->by = r->store_tensor;
	e->coord = arena_alloc(perm, (2 * ndims + 1) * sizeof *e->coord);
	return e;
}

/* ---- values --------------------------------------------------------------- */

static Val
lookup(Run *r, Var *v)
{
	for (int i = r->nenv - 1; i >= 0; i--)
		if (r->env[i].v == v)
			return r->env[i].val;
	fail(r, "variable '%s' has no value (an IR form txc viz does not run)", v->name);
}

static void
bind(Run *r, Var *v, Val x)
{
	*ARENA_PUSH(perm, r->env, r->nenv, r->capenv) = (Bind){ v, x };
}

/* x (of type `from`) as a value of type t. */
static Val
convert(ScalarType from, ScalarType t, Val x)
{
	Val y;
	bool ff = type_is_float(from), tf = type_is_float(t);
	if (tf) {
		double d = ff ? x.f : from == TY_U64 ? (double)(uint64_t)x.i : (double)x.i;
		y.f = t == TY_F64 ? d : t == TY_BF16 ? ir_bf16_value(d) : (double)(float)d;
	} else if (ff) {
		double d = x.f;
		if (t == TY_BOOL)
			y.i = d != 0;
		else if (isnan(d) || d >= 9.2e18 || d <= -9.2e18)
			y.i = 0;   /* out of range: undefined in C; any value will do here */
		else
			y.i = ir_wrap(t, (int64_t)d);
	} else
		y.i = t == TY_BOOL ? x.i != 0 : ir_wrap(t, x.i);
	return y;
}

static Val eval(Run *r, IrExpr *e);
static int64_t eval_int(Run *r, IrExpr *e);
static bool in_update(Run *r, const char *name);

static Store *
storage(Run *r, Buffer *b)
{
	for (int i = r->nlive - 1; i >= 0; i--)
		if (r->live[i]->buf == b)
			return r->live[i];
	/* another Buffer of the same stage (a specialization's copy) */
	for (int i = r->nlive - 1; i >= 0; i--)
		if (!strcmp(r->live[i]->buf->name, b->name))
			return r->live[i];
	fail(r, "'%s' is accessed where it is not allocated", b->name);
}

/* The offset of an access, recorded as an event. */
static int64_t
access(Run *r, VizKind kind, Buffer *b, IrExpr **idx, int nidx, Store **sp)
{
	Store *st = storage(r, b);
	if (nidx != b->ndims || (b->flat && b->ndims != 1))
		fail(r, "a flattened access to '%s' (an IR form txc viz does not run)", b->name);
	int32_t c[16];
	if (nidx > 16)
		fail(r, "'%s' has more than 16 dimensions", b->name);
	int64_t off = 0;
	for (int d = 0; d < nidx; d++) {
		Val x = eval(r, idx[d]);
		if (x.i < st->min[d] || x.i >= st->min[d] + st->ext[d]) {
			char *s = ir_expr_str(idx[d]);
			fail(r, "%s of '%s' outside its allocation: index %d is %lld (%s), not in "
			    "[%lld, %lld)", kind == VIZ_LOAD ? "a load" : "a store", b->name, d,
			    (long long)x.i, s, (long long)st->min[d], (long long)(st->min[d] + st->ext[d]));
		}
		c[d] = (int32_t)x.i;
		off = off * st->ext[d] + (x.i - st->min[d]);
	}
	VizEvent *e = event(r, kind, st->tensor, nidx);
	memcpy(e->coord, c, nidx * sizeof *c);
	*sp = st;
	return off;
}

static double
fmath(Builtin bi, double a, double b, double c)
{
	switch (bi) {
	case BI_EXP: return exp(a);
	case BI_LOG: return log(a);
	case BI_SQRT: return sqrt(a);
	case BI_RSQRT: return 1 / sqrt(a);
	case BI_TANH: return tanh(a);
	case BI_SIN: return sin(a);
	case BI_COS: return cos(a);
	case BI_ERF: return erf(a);
	case BI_SIGMOID: return 1 / (1 + exp(-a));
	case BI_ABS: return fabs(a);
	case BI_FLOOR: return floor(a);
	case BI_CEIL: return ceil(a);
	case BI_ROUND: return rint(a);
	case BI_POW: return pow(a, b);
	case BI_MIN: return fmin(a, b);
	case BI_MAX: return fmax(a, b);
	case BI_CLAMP: return fmin(fmax(a, b), c);
	default: return NAN;
	}
}

/* ---- tensorize calls --------------------------------------------------------- */

/* Where element `off` of a store's flat buffer is, as an event. */
static VizEvent *
flat_event(Run *r, VizKind kind, Store *st, int64_t off, const char *what)
{
	Buffer *b = st->buf;
	if (off < 0 || off >= st->n)
		fail(r, "the intrinsic '%s' %s element %lld of '%s', outside its allocation of "
		    "%lld", what, kind == VIZ_LOAD ? "loads" : "stores", (long long)off, b->name,
		    (long long)st->n);
	VizEvent *e = event(r, kind, st->tensor, b->ndims);
	for (int d = b->ndims - 1; d >= 0; d--) {
		int64_t ext = st->ext[d] > 0 ? st->ext[d] : 1;
		e->coord[d] = (int32_t)(st->min[d] + off % ext);
		off /= ext;
	}
	return e;
}

/* A tensorize call: the hardware operation its meaning says (lower/ir.h,
 * IrTensorizeCall), with every element it loads and stores, all at one
 * tick as one instruction; each element of c is a lane of it. */
static void
intrinsic(Run *r, IrExpr *e)
{
	const IrTensorizeCall *m = e->call.tz;
	int64_t ext[IR_TZ_MAXDIMS], stride[3][IR_TZ_MAXDIMS], base[3];
	Store *st[3];
	int pos = m->naxes;
	if (m->naxes > IR_TZ_MAXDIMS)
		fail(r, "the intrinsic '%s' has too many axes to draw", e->call.name);
	for (int a = 0; a < m->naxes; a++)
		ext[a] = eval_int(r, e->call.args[a]);
	for (int t = 0; t < 3; t++) {
		IrExpr *ld = e->call.args[pos++];
		if (ld->kind != IR_LOAD)
			fail(r, "the intrinsic '%s' (an IR form txc viz does not run)", e->call.name);
		st[t] = storage(r, ld->load.buf);
		base[t] = 0;
		for (int d = 0; d < ld->load.nidx; d++)
			base[t] = base[t] * st[t]->ext[d] + (eval_int(r, ld->load.idx[d]) - st[t]->min[d]);
		for (int d = 0; d < m->ndims[t]; d++)
			stride[t][d] = eval_int(r, e->call.args[pos++]);
	}
	bool reset = m->reset >= 0 && eval_int(r, e->call.args[m->reset]);
	ScalarType ct = st[0]->buf->elem;
	bool in_c[IR_TZ_MAXDIMS] = { false };
	for (int d = 0; d < m->ndims[0]; d++)
		in_c[m->axis[0][d]] = true;
	int64_t pt[IR_TZ_MAXDIMS] = { 0 };
	int saved = r->store_tensor, lane0 = r->lane;
	r->store_tensor = st[0]->tensor;
	r->lane = 0;
	bool empty = false;   /* no reduction point: c stays (or is reset) */
	for (int a = 0; a < m->naxes; a++) {
		if (ext[a] <= 0 && in_c[a])
			goto done;
		empty |= ext[a] <= 0;
	}
	/* the points of c (its axes odometer-style), then of the reduction */
	for (;;) {
		int64_t oc = base[0];
		for (int d = 0; d < m->ndims[0]; d++)
			oc += stride[0][d] * pt[m->axis[0][d]];
		Val acc = { 0 };
		if (!reset) {
			flat_event(r, VIZ_LOAD, st[0], oc, e->call.name);
			acc = st[0]->data[oc];
		} else if (type_is_float(ct))
			acc.f = 0;
		for (;;) {
			if (empty)
				break;
			Val x[2];
			for (int t = 1; t < 3; t++) {
				int64_t o = base[t];
				for (int d = 0; d < m->ndims[t]; d++)
					o += stride[t][d] * pt[m->axis[t][d]];
				flat_event(r, VIZ_LOAD, st[t], o, e->call.name);
				x[t - 1] = convert(st[t]->buf->elem, ct, st[t]->data[o]);
			}
			if (type_is_float(ct))
				acc.f = convert(TY_F64, ct, (Val){ .f = acc.f + x[0].f * x[1].f }).f;
			else
				acc.i = ir_wrap(ct, (int64_t)((uint64_t)acc.i + (uint64_t)x[0].i * (uint64_t)x[1].i));
			int a = m->naxes - 1;
			while (a >= 0 && (in_c[a] || ++pt[a] == ext[a])) {
				if (!in_c[a])
					pt[a] = 0;
				a--;
			}
			if (a < 0)
				break;
		}
		VizEvent *s = flat_event(r, VIZ_STORE, st[0], oc, e->call.name);
		s->update = !reset && in_update(r, st[0]->buf->name);   /* reset: c's first value */
		s->by = -1;
		s->iter = arena_alloc(perm, (r->nloops + 1) * sizeof *s->iter);
		if (r->nloops)
			memcpy(s->iter, r->loops, r->nloops * sizeof *s->iter);
		st[0]->data[oc] = acc;
		r->lane++;
		int a = m->naxes - 1;
		while (a >= 0 && (!in_c[a] || ++pt[a] == ext[a])) {
			if (in_c[a])
				pt[a] = 0;
			a--;
		}
		if (a < 0)
			break;
	}
done:
	r->store_tensor = saved;
	r->lane = lane0;
}

static Val
call(Run *r, IrExpr *e)
{
	Val a[3] = { { 0 } }, y;
	if (e->call.ck != CALL_BUILTIN) {
		/* a tensorize intrinsic: one hardware operation, drawn from its
		 * meaning; another target call is counted, not drawn */
		r->t->intrinsic = e->call.name;
		r->t->intrinsic_calls++;
		if (e->call.tz)
			intrinsic(r, e);
		else
			r->t->intrinsic_undrawn++;
		return a[0];
	}
	for (int i = 0; i < e->call.nargs && i < 3; i++)
		a[i] = eval(r, e->call.args[i]);
	ScalarType t = e->type.code;
	if (type_is_float(t)) {
		y.f = fmath(e->call.builtin, a[0].f, a[1].f, a[2].f);
		if (t != TY_F64)
			y.f = t == TY_BF16 ? ir_bf16_value(y.f) : (double)(float)y.f;
		return y;
	}
	bool u = ir_is_uint(e->type);
	int64_t x = a[0].i, p = a[1].i, q = a[2].i;
#define LT(m, n) (u ? (uint64_t)(m) < (uint64_t)(n) : (m) < (n))
	switch (e->call.builtin) {
	case BI_ABS: y.i = u || x >= 0 ? x : (int64_t)(0 - (uint64_t)x); break;
	case BI_MIN: y.i = LT(p, x) ? p : x; break;
	case BI_MAX: y.i = LT(x, p) ? p : x; break;
	case BI_CLAMP: y.i = LT(x, p) ? p : LT(q, x) ? q : x; break;
	default: y.i = x; break;   /* floor, ceil, round of an integer */
	}
#undef LT
	y.i = ir_wrap(t, y.i);
	return y;
}

static Val
binop(Run *r, IrExpr *e)
{
	Val a = eval(r, e->a), y;
	/* && and || skip their right side as the backends' guards do */
	if (e->kind == IR_AND && !a.i)
		return a;
	if (e->kind == IR_OR && a.i)
		return a;
	Val b = eval(r, e->b);
	IrType t = e->a->type;
	if (ir_is_float(t)) {
		double x = a.f, z = b.f, v;
		switch (e->kind) {
		case IR_ADD: v = x + z; break;
		case IR_SUB: v = x - z; break;
		case IR_MUL: v = x * z; break;
		case IR_DIV: v = x / z; break;
		case IR_MOD: v = z != 0 ? x - z * floor(x / z) : NAN; break;
		case IR_MIN: v = fmin(x, z); break;
		case IR_MAX: v = fmax(x, z); break;
		case IR_EQ: y.i = x == z; return y;
		case IR_NE: y.i = x != z; return y;
		case IR_LT: y.i = x < z; return y;
		case IR_LE: y.i = x <= z; return y;
		case IR_GT: y.i = x > z; return y;
		case IR_GE: y.i = x >= z; return y;
		default: fail(r, "'%s' on floating point", ir_expr_names[e->kind]);
		}
		y.f = t.code == TY_F64 ? v : t.code == TY_BF16 ? ir_bf16_value(v) : (double)(float)v;
		return y;
	}
	int64_t x = a.i, z = b.i;
	uint64_t ux = (uint64_t)x, uz = (uint64_t)z, v;
	bool u = ir_is_uint(t) || ir_is_bool(t);
	int bits = ir_bits(t.code);
	switch (e->kind) {
	case IR_ADD: v = ux + uz; break;
	case IR_SUB: v = ux - uz; break;
	case IR_MUL: v = ux * uz; break;
	case IR_DIV: v = z == 0 ? 0 : u ? ux / uz : (uint64_t)fold_floordiv(x, z); break;
	case IR_MOD: v = z == 0 ? 0 : u ? ux % uz : (uint64_t)fold_floormod(x, z); break;
	case IR_MIN: v = (u ? ux < uz : x < z) ? ux : uz; break;
	case IR_MAX: v = (u ? ux > uz : x > z) ? ux : uz; break;
	case IR_BITAND: case IR_AND: v = ux & uz; break;
	case IR_BITOR: case IR_OR: v = ux | uz; break;
	case IR_BITXOR: v = ux ^ uz; break;
	case IR_SHL: v = uz >= (uint64_t)bits ? 0 : ux << uz; break;
	case IR_SHR:
		if (uz >= (uint64_t)bits)
			v = u || x >= 0 ? 0 : ~(uint64_t)0;
		else
			v = u ? ux >> uz : x >= 0 ? ux >> uz : ~(~ux >> uz);
		break;
	case IR_EQ: y.i = x == z; return y;
	case IR_NE: y.i = x != z; return y;
	case IR_LT: y.i = u ? ux < uz : x < z; return y;
	case IR_LE: y.i = u ? ux <= uz : x <= z; return y;
	case IR_GT: y.i = u ? ux > uz : x > z; return y;
	case IR_GE: y.i = u ? ux >= uz : x >= z; return y;
	default: fail(r, "the operation '%s'", ir_expr_names[e->kind]);
	}
	y.i = ir_wrap(e->type.code, (int64_t)v);
	return y;
}

static Val
eval(Run *r, IrExpr *e)
{
	Val y;
	if (e->type.lanes != 1)
		fail(r, "a vector expression (txc viz runs the nest before vectorize)");
	switch (e->kind) {
	case IR_INT: y.i = e->ival; return y;
	case IR_FLOAT: y.f = e->fval; return y;
	case IR_VAR: return lookup(r, e->var);
	case IR_NOT: y = eval(r, e->a); y.i = !y.i; return y;
	case IR_NEG:
		y = eval(r, e->a);
		if (ir_is_float(e->type))
			y.f = -y.f;
		else
			y.i = ir_wrap(e->type.code, (int64_t)(0 - (uint64_t)y.i));
		return y;
	case IR_BITNOT: y = eval(r, e->a); y.i = ir_wrap(e->type.code, ~y.i); return y;
	case IR_SELECT:
		/* only the branch taken is evaluated (lower/ir.h's contract) */
		return eval(r, eval(r, e->a).i ? e->b : e->c);
	case IR_CAST: return convert(e->a->type.code, e->type.code, eval(r, e->a));
	case IR_LOAD: {
		if (e->a && !eval(r, e->a).i) {
			y.i = 0;
			y.f = 0;
			return y;
		}
		Store *st;
		int64_t off = access(r, VIZ_LOAD, e->load.buf, e->load.idx, e->load.nidx, &st);
		return st->data[off];
	}
	case IR_CALL: return call(r, e);
	case IR_LET: {
		Val v = eval(r, e->a);
		bind(r, e->var, v);
		y = eval(r, e->b);
		r->nenv--;
		return y;
	}
	case IR_RAMP: case IR_BROADCAST:
		fail(r, "a vector expression (txc viz runs the nest before vectorize)");
	default:
		return binop(r, e);
	}
}

static int64_t
eval_int(Run *r, IrExpr *e)
{
	return eval(r, e).i;
}

/* ---- statements ------------------------------------------------------------ */

static void exec(Run *r, IrStmt *s);

static int64_t
bytes_of(ScalarType t)
{
	return type_bits(t) <= 8 ? 1 : type_bits(t) / 8;
}

static bool
in_update(Run *r, const char *name)
{
	for (int i = r->nprod - 1; i >= 0; i--)
		if (!strcmp(r->prod[i].name, name))
			return r->prod[i].update;
	return false;
}

static void
exec_store(Run *r, IrStmt *s)
{
	Buffer *b = s->store.buf;
	Store *st = storage(r, b);
	int saved = r->store_tensor;
	r->store_tensor = st->tensor;
	if (!s->store.pred || eval_int(r, s->store.pred)) {
		/* the value first, then the element: loads precede the store */
		Val v = eval(r, s->store.value);
		int64_t off = access(r, VIZ_STORE, b, s->store.idx, s->store.nidx, &st);
		VizEvent *e = &r->t->ev[r->t->nev - 1];
		e->update = in_update(r, b->name);
		e->by = -1;
		e->iter = arena_alloc(perm, (r->nloops + 1) * sizeof *e->iter);
		if (r->nloops)
			memcpy(e->iter, r->loops, r->nloops * sizeof *e->iter);
		st->data[off] = convert(s->store.value->type.code, b->elem, v);
		r->tick++;
	}
	r->store_tensor = saved;
}

/* A new allocation of b, with its ALLOC event (its index in *at). */
static Store *
new_store(Run *r, Buffer *b, int64_t *at)
{
	Store *st = arena_alloc(perm, sizeof *st);
	st->buf = b;
	st->tensor = tensor_of(r->t, b);
	st->min = arena_alloc(perm, (b->ndims + 1) * sizeof *st->min);
	st->ext = arena_alloc(perm, (b->ndims + 1) * sizeof *st->ext);
	st->n = 1;
	for (int d = 0; d < b->ndims; d++) {
		st->min[d] = b->min && b->min[d] ? eval_int(r, b->min[d]) : 0;
		st->ext[d] = eval_int(r, b->extent[d]);
		if (st->ext[d] < 0)
			st->ext[d] = 0;
		if (st->ext[d] > VIZ_MAX_ELEMS || st->n * st->ext[d] > VIZ_MAX_ELEMS)
			fail(r, "'%s' allocates more than %d elements at these sizes (the limit "
			    "for a picture); use smaller sizes", b->name, VIZ_MAX_ELEMS);
		st->n *= st->ext[d];
	}
	st->data = calloc((size_t)st->n + 1, sizeof *st->data);
	if (!st->data)
		diag_fatal("out of memory");
	VizEvent *e = event(r, VIZ_ALLOC, st->tensor, b->ndims);
	for (int d = 0; d < b->ndims; d++) {
		e->coord[d] = (int32_t)st->min[d];
		e->coord[b->ndims + d] = (int32_t)st->ext[d];
	}
	e->elem = st->n * bytes_of(b->elem);   /* bytes, until viz_finish */
	e->alloc = r->nallocs++;
	*at = r->t->nev - 1;   /* later events may move the array */
	return st;
}

/* The FREE event of the allocation whose ALLOC event is at `at`. */
static void
free_event(Run *r, Store *st, int64_t at)
{
	int nd = st->buf->ndims;
	VizEvent *f = event(r, VIZ_FREE, st->tensor, nd);
	VizEvent *e = &r->t->ev[at];
	memcpy(f->coord, e->coord, 2 * nd * sizeof *f->coord);
	f->elem = e->elem;
	f->alloc = e->alloc;
}

static void exec_spread(Run *r, IrStmt *s);

/* A shared stage computed inside a block's thread loops: the cuda target
 * (gpu_threads.c) makes it one copy per block, which the block's threads
 * make together before a barrier, and which they all then read.  Here the
 * threads run one after another, so the first to reach the k-th
 * allocation of a buffer makes its k-th copy, spread over the threads as
 * a block-level nest; the others find it made and wait for its end (the
 * barrier).  The copies live until the block ends; each one's FREE event
 * is when the next one is made (the GPU reuses the memory). */
static void
exec_shared_alloc(Run *r, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	Coop *c = NULL;
	for (int i = 0; i < r->ncoop && !c; i++)
		if (r->coop[i].buf == b)
			c = &r->coop[i];
	if (!c) {
		c = ARENA_PUSH(perm, r->coop, r->ncoop, r->capcoop);
		memset(c, 0, sizeof *c);
		c->buf = b;
		c->thread = -1;
	}
	if (c->thread != r->thread) {
		c->thread = r->thread;
		c->count = 0;
	}
	int k = c->count++;
	if (k >= c->n) {
		if (c->n)
			free_event(r, c->phase[c->n - 1].st, c->phase[c->n - 1].at);
		Phase *p = ARENA_PUSH(perm, c->phase, c->n, c->cap);
		p->st = new_store(r, b, &p->at);
		p->ready = -1;
	}
	Phase *p = &c->phase[k];
	if (p->ready >= 0 && r->tick < p->ready)
		r->tick = p->ready;
	c->cur = k;
	*ARENA_PUSH(perm, r->live, r->nlive, r->caplive) = p->st;
	exec(r, s->alloc.body);
	r->nlive--;
	c->cur = -1;
}

/* The end of a block: its shared copies are freed. */
static void
end_block(Run *r)
{
	for (int i = 0; i < r->ncoop; i++) {
		Coop *c = &r->coop[i];
		if (c->n)
			free_event(r, c->phase[c->n - 1].st, c->phase[c->n - 1].at);
		for (int k = 0; k < c->n; k++) {
			free(c->phase[k].st->data);
			c->phase[k].st->data = NULL;
		}
	}
	r->ncoop = 0;
}

/* The produce of a shared copy (exec_shared_alloc): made once, by the
 * block's threads together, as a block-level nest (exec_for spreads it);
 * true when s is one. */
static bool
exec_coop_produce(Run *r, IrStmt *s)
{
	Coop *c = NULL;
	for (int i = 0; i < r->ncoop && !c; i++)
		if (r->coop[i].cur >= 0 && !strcmp(r->coop[i].buf->name, s->produce.name))
			c = &r->coop[i];
	if (!c)
		return false;
	Phase *p = &c->phase[c->cur];
	if (p->ready >= 0)
		return true;      /* made by an earlier thread */
	int depth = r->thread_depth, thread = r->thread;
	r->thread_depth = 0;
	r->thread = (int)(r->gpu_block * r->gpu_threads);
	*ARENA_PUSH(perm, r->prod, r->nprod, r->capprod) =
	    (struct Prod){ s->produce.name, s->produce.update };
	exec(r, s->produce.body);
	r->nprod--;
	r->thread_depth = depth;
	r->thread = thread;
	p->ready = r->tick;
	return true;
}

static void
exec_alloc(Run *r, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if (b->scope == SCOPE_SHARED && r->thread_depth > 0 && r->gpu_block >= 0) {
		exec_shared_alloc(r, s);
		return;
	}
	int64_t at;
	Store *st = new_store(r, b, &at);
	*ARENA_PUSH(perm, r->live, r->nlive, r->caplive) = st;
	exec(r, s->alloc.body);
	r->nlive--;
	free_event(r, st, at);
	free(st->data);
	st->data = NULL;
}

/* ---- GPU blocks -------------------------------------------------------------
 * Inside a block, code outside the thread loops is the block's: the cuda
 * target (target/cuda/gpu_threads.c) spreads a nest that computes a pure
 * stage (the copy of a tile into shared memory) over the block's threads,
 * thread t taking the points t, t + T, t + 2T ... of the nest in order,
 * and runs anything else (an update) on the block's thread 0.  The trace
 * does the same, so a page shows the cooperative copy as the GPU runs it. */

static bool
has_loop(IrStmt *s, ForKind fk)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_FOR: return s->loop.fk == fk || has_loop(s->loop.body, fk);
	case IS_LET: return has_loop(s->let.body, fk);
	case IS_ALLOCATE: return has_loop(s->alloc.body, fk);
	case IS_PRODUCE: return has_loop(s->produce.body, fk);
	case IS_IF: return has_loop(s->ifs.then_s, fk) || has_loop(s->ifs.else_s, fk);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (has_loop(s->block.stmts[i], fk))
				return true;
		return false;
	default: return false;
	}
}

/* Whether every variable of e has a value here. */
typedef struct {
	IrVisitor v;
	Run *r;
	bool ok;
} Bound;

static void
bound_var(IrVisitor *v, IrExpr *e)
{
	Bound *b = (Bound *)v;
	bool found = false;
	for (int i = b->r->nenv - 1; i >= 0 && !found; i--)
		found = b->r->env[i].v == e->var;
	b->ok &= found;
}

static bool
computable(Run *r, IrExpr *e)
{
	Bound b = { .v = {.expr = {[IR_VAR] = bound_var}}, .r = r, .ok = true };
	ir_visit_expr(&b.v, e);
	return b.ok;
}

/* The block's threads: per dimension, the largest extent of a thread
 * loop in s that can be computed at the block's level. */
static void
block_dims(Run *r, IrStmt *s, int64_t dim[3])
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_FOR:
		if (s->loop.fk == FOR_GPU_THREAD && s->loop.gpu_dim >= 0 && s->loop.gpu_dim < 3 &&
		    computable(r, s->loop.extent)) {
			int64_t n = eval_int(r, s->loop.extent);
			if (n > dim[s->loop.gpu_dim])
				dim[s->loop.gpu_dim] = n;
		}
		block_dims(r, s->loop.body, dim);
		break;
	case IS_LET: block_dims(r, s->let.body, dim); break;
	case IS_ALLOCATE: block_dims(r, s->alloc.body, dim); break;
	case IS_PRODUCE: block_dims(r, s->produce.body, dim); break;
	case IS_IF:
		block_dims(r, s->ifs.then_s, dim);
		block_dims(r, s->ifs.else_s, dim);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			block_dims(r, s->block.stmts[i], dim);
		break;
	default: break;
	}
}

static bool
uses_chain(IrExpr *e, IrStmt **chain, int n)
{
	for (int i = 0; i < n; i++)
		if (ir_uses_var(e, chain[i]->loop.var))
			return true;
	return false;
}

/* A block-level nest spread over the block's threads, in rounds of T
 * points; a round starts when the one before it ends. */
static void
exec_spread(Run *r, IrStmt *s)
{
	IrStmt *chain[16], *body = s;
	int64_t min[16], ext[16], total = 1;
	int n = 0;
	while (body->kind == IS_FOR && n < 16 && body->loop.fk != FOR_GPU_THREAD &&
	    body->loop.fk != FOR_GPU_BLOCK && !uses_chain(body->loop.min, chain, n) &&
	    !uses_chain(body->loop.extent, chain, n)) {
		min[n] = eval_int(r, body->loop.min);
		ext[n] = eval_int(r, body->loop.extent);
		if (ext[n] < 0)
			ext[n] = 0;
		if (ext[n] && total > VIZ_MAX_STEPS / ext[n])
			fail(r, "a block-level loop nest of more than %lld points (the limit for a "
			    "picture); use smaller sizes", VIZ_MAX_STEPS);
		total *= ext[n];
		chain[n++] = body;
		body = body->loop.body;
	}
	int64_t T = r->gpu_threads, rstart = r->tick, rend = r->tick;
	int thread0 = r->thread;
	for (int i = 0; i < n; i++)
		*ARENA_PUSH(perm, r->loops, r->nloops, r->caploops) = 0;
	for (int64_t q = 0; q < total; q++) {
		step(r);
		if (q % T == 0)
			rstart = rend;
		r->tick = rstart;
		int64_t th = r->gpu_block * T + q % T;
		if (th > INT32_MAX / 2)
			fail(r, "too many threads to draw");
		r->thread = (int)th;
		if (r->thread + 1 > r->t->threads)
			r->t->threads = r->thread + 1;
		int64_t rest = q;
		for (int i = n - 1; i >= 0; i--) {
			Val v = { .i = min[i] + rest % ext[i] };
			rest /= ext[i];
			r->loops[r->nloops - n + i] = v.i;
			bind(r, chain[i]->loop.var, v);
		}
		exec(r, body);
		r->nenv -= n;
		if (r->tick > rend)
			rend = r->tick;
	}
	r->nloops -= n;
	r->tick = rend;
	r->thread = thread0;
}

static void
exec_for(Run *r, IrStmt *s)
{
	int64_t min = eval_int(r, s->loop.min), n = eval_int(r, s->loop.extent);
	ForKind fk = s->loop.fk;
	bool vec = fk == FOR_VECTORIZED;
	bool par = fk == FOR_PARALLEL || fk == FOR_GPU_BLOCK || fk == FOR_GPU_THREAD;
	int64_t nthreads = fk == FOR_PARALLEL ? r->o->threads : n;
	if (nthreads > n)
		nthreads = n;
	int64_t chunk = par && nthreads > 0 ? (n + nthreads - 1) / nthreads : n;
	/* a block-level nest of a GPU block that computes a pure stage */
	if (r->gpu_block >= 0 && r->thread_depth == 0 && !par && r->gpu_threads > 1 &&
	    !has_loop(s, FOR_GPU_THREAD) && !(r->nprod && r->prod[r->nprod - 1].update)) {
		exec_spread(r, s);
		return;
	}
	int64_t t0 = r->tick, end = t0;
	int thread0 = r->thread, lane0 = r->lane;
	int64_t block0 = r->gpu_block, bthreads0 = r->gpu_threads;
	bool innermost_block = fk == FOR_GPU_BLOCK && !has_loop(s->loop.body, FOR_GPU_BLOCK);
	bool first_thread_loop = fk == FOR_GPU_THREAD && r->thread_depth == 0 && block0 >= 0;
	/* the first thread loop of a block numbers its threads from the
	 * block's number, not from its thread 0 */
	int64_t base = first_thread_loop ? block0 : thread0;
	r->thread_depth += fk == FOR_GPU_THREAD;

	*ARENA_PUSH(perm, r->loops, r->nloops, r->caploops) = 0;
	for (int64_t i = 0; i < n; i++) {
		step(r);
		if (vec) {
			r->tick = t0;
			r->lane = (int)i;
		} else if (par && i % chunk == 0) {
			r->tick = t0;
			int64_t th = base * nthreads + i / chunk;
			if (th > INT32_MAX / 2)
				fail(r, "too many threads to draw (nested parallel loops)");
			r->thread = (int)th;
			if (r->thread + 1 > r->t->threads)
				r->t->threads = r->thread + 1;
		}
		Val v = { .i = min + i };
		r->loops[r->nloops - 1] = v.i;
		bind(r, s->loop.var, v);
		if (innermost_block) {
			/* code outside the thread loops runs on the block's thread 0 */
			int64_t dim[3] = { 1, 1, 1 };
			block_dims(r, s->loop.body, dim);
			r->gpu_block = r->thread;
			r->gpu_threads = dim[0] * dim[1] * dim[2];
			if (r->gpu_block * r->gpu_threads > INT32_MAX / 2)
				fail(r, "too many threads to draw");
			r->thread = (int)(r->gpu_block * r->gpu_threads);
			if (r->thread + 1 > r->t->threads)
				r->t->threads = r->thread + 1;
		}
		exec(r, s->loop.body);
		if (innermost_block)
			end_block(r);
		r->nenv--;
		if (r->tick > end)
			end = r->tick;
	}
	r->nloops--;
	r->tick = end;
	r->thread = thread0;
	r->lane = lane0;
	r->gpu_block = block0;
	r->gpu_threads = bthreads0;
	r->thread_depth -= fk == FOR_GPU_THREAD;
}

static void
exec(Run *r, IrStmt *s)
{
	if (!s)
		return;
	if (s->kind != IS_BLOCK) {
		step(r);
		int line = viz_line_of(r->lines, s);
		if (line)
			r->line = line;
	}
	switch (s->kind) {
	case IS_FOR: exec_for(r, s); break;
	case IS_LET: {
		Val v = eval(r, s->let.value);
		bind(r, s->let.var, v);
		exec(r, s->let.body);
		r->nenv--;
		break;
	}
	case IS_STORE: exec_store(r, s); break;
	case IS_ALLOCATE: exec_alloc(r, s); break;
	case IS_IF:
		exec(r, eval_int(r, s->ifs.cond) ? s->ifs.then_s : s->ifs.else_s);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			exec(r, s->block.stmts[i]);
		break;
	case IS_EVALUATE:
		eval(r, s->eval.value);
		r->tick++;
		break;
	case IS_ASSERT:
		if (!eval_int(r, s->assrt.cond))
			fail(r, "the kernel fails at these sizes: %s", s->assrt.msg);
		break;
	case IS_PRODUCE:
		if (r->ncoop && exec_coop_produce(r, s))
			break;
		*ARENA_PUSH(perm, r->prod, r->nprod, r->capprod) =
		    (struct Prod){ s->produce.name, s->produce.update };
		exec(r, s->produce.body);
		r->nprod--;
		break;
	default:
		fail(r, "the statement '%s' (an IR form txc viz does not run)",
		    (unsigned)s->kind < IR_STMT_COUNT ? ir_stmt_names[s->kind] : "?");
	}
}

/* ---- the run ------------------------------------------------------------- */

static uint64_t rng;

static double
rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}

bool
viz_trace(IrFunc *f, const double *params, const VizOptions *o, VizTrace *t)
{
	Run r = { 0 };
	int cap = 0;
	bool ok = false;

	memset(t, 0, sizeof *t);
	t->f = f;
	t->params = params;
	r.t = t;
	r.o = o;
	r.lane = -1;
	r.gpu_block = -1;
	r.store_tensor = -1;
	r.max_events = o->max_events > 0 ? o->max_events : VIZ_MAX_EVENTS;
	rng = o->seed;
	r.lines = viz_nest(t);
	for (int i = 0; i < f->nargs; i++)
		add_tensor(t, f->args[i], &cap);
	collect_allocs(t, f->body, &cap);
	int capi = 0;
	for (int i = 0; f->kernel && i < f->kernel->nstages; i++) {
		const char *name = f->kernel->stages[i]->name;
		bool found = false;
		for (int j = 0; j < t->ntensors && !found; j++)
			found = !strcmp(t->tensors[j].name, name);
		if (!found)
			*ARENA_PUSH(perm, t->inlined, t->ninlined, capi) = name;
	}
	if (setjmp(r.fail)) {
		for (int i = 0; i < r.nlive; i++)
			if (r.live[i]->buf->abi_index < 0)
				free(r.live[i]->data);
		for (int i = 0; i < r.ncoop; i++)
			for (int k = 0; k < r.coop[i].n; k++)
				if (r.coop[i].phase[k].st->data != NULL)
					free(r.coop[i].phase[k].st->data);
		goto done;
	}
	for (int i = 0; i < f->nparams; i++) {
		Var *v = f->params[i];
		Val x;
		if (type_is_float(v->type.code))
			x.f = params[i];
		else
			x.i = (int64_t)params[i];
		bind(&r, v, x);
	}
	/* the arguments: shapes from the parameters, inputs random */
	for (int i = 0; i < f->nargs; i++) {
		Buffer *b = f->args[i];
		Store *st = arena_alloc(perm, sizeof *st);
		VizTensor *vt = &t->tensors[tensor_of(t, b)];
		st->buf = b;
		st->tensor = tensor_of(t, b);
		st->min = arena_alloc(perm, (b->ndims + 1) * sizeof *st->min);
		st->ext = arena_alloc(perm, (b->ndims + 1) * sizeof *st->ext);
		st->n = 1;
		for (int d = 0; d < b->ndims; d++) {
			st->ext[d] = eval_int(&r, b->extent[d]);
			if (st->ext[d] < 0)
				fail(&r, "'%s' has a negative extent at these sizes", b->name);
			if (st->ext[d] > VIZ_MAX_ELEMS || st->n * st->ext[d] > VIZ_MAX_ELEMS)
				fail(&r, "'%s' has more than %d elements at these sizes (the limit "
				    "for a picture); use smaller sizes", b->name, VIZ_MAX_ELEMS);
			st->n *= st->ext[d];
			vt->ext[d] = st->ext[d];
		}
		st->data = arena_alloc(perm, (size_t)(st->n + 1) * sizeof *st->data);
		for (int64_t j = 0; j < st->n && b->is_input; j++) {
			double x = floor(rnd() * 128) / 64 - 1;
			Val v = { .f = x };
			st->data[j] = type_is_float(b->elem) ? v :
			    convert(TY_F64, b->elem, (Val){ .f = floor(rnd() * 16) - (type_is_signed(b->elem) ? 8 : 0) });
		}
		*ARENA_PUSH(perm, r.live, r.nlive, r.caplive) = st;
	}
	exec(&r, f->body);
	t->ticks = r.tick;
	if (t->threads == 0)
		t->threads = 1;
	ok = true;
done:
	return ok;
}
