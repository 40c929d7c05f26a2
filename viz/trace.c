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

static Val
call(Run *r, IrExpr *e)
{
	Val a[3] = { { 0 } }, y;
	if (e->call.ck != CALL_BUILTIN) {
		/* a tensorize intrinsic: one hardware operation, whose accesses
		 * depend on its emitter; counted, not drawn (txc.1, VIZ) */
		r->t->intrinsic = e->call.name;
		r->t->intrinsic_calls++;
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

static void
exec_alloc(Run *r, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
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
	int64_t at = r->t->nev - 1;   /* the body may move the events */
	*ARENA_PUSH(perm, r->live, r->nlive, r->caplive) = st;
	exec(r, s->alloc.body);
	r->nlive--;
	VizEvent *f = event(r, VIZ_FREE, st->tensor, b->ndims);
	e = &r->t->ev[at];
	memcpy(f->coord, e->coord, 2 * b->ndims * sizeof *f->coord);
	f->elem = e->elem;
	f->alloc = e->alloc;
	free(st->data);
	st->data = NULL;
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
	int64_t t0 = r->tick, end = t0;
	int thread0 = r->thread, lane0 = r->lane;

	*ARENA_PUSH(perm, r->loops, r->nloops, r->caploops) = 0;
	for (int64_t i = 0; i < n; i++) {
		step(r);
		if (vec) {
			r->tick = t0;
			r->lane = (int)i;
		} else if (par && i % chunk == 0) {
			r->tick = t0;
			int64_t th = (int64_t)thread0 * nthreads + i / chunk;
			if (th > INT32_MAX / 2)
				fail(r, "too many threads to draw (nested parallel loops)");
			r->thread = (int)th;
			if (r->thread + 1 > r->t->threads)
				r->t->threads = r->thread + 1;
		}
		Val v = { .i = min + i };
		r->loops[r->nloops - 1] = v.i;
		bind(r, s->loop.var, v);
		exec(r, s->loop.body);
		r->nenv--;
		if (r->tick > end)
			end = r->tick;
	}
	r->nloops--;
	r->tick = end;
	r->thread = thread0;
	r->lane = lane0;
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
