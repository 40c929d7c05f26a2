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
 * thread, as libtxrt's pool does, and the chunks start at the same tick;
 * a vectorized loop's lanes all run at the same tick, as one vector
 * instruction does; GPU block and thread loops run every iteration at
 * once (the code of a block outside its thread loops: trace_gpu.c); a
 * tensorize call is one tick (trace_tensorize.c).  A loop's end is its slowest chunk's end.
 *
 * Errors (a limit, a failing assert, an IR form this does not run) print
 * one line and longjmp out of the run.
 */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "viz/trace.h"

void
tr_fail(Run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txc viz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	longjmp(r->fail, 1);
}

void
tr_step(Run *r)
{
	if (++r->t->steps > VIZ_MAX_STEPS)
		tr_fail(r, "the kernel runs more than %lld loop iterations and statements at "
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

VizEvent *
tr_event(Run *r, VizKind kind, int tensor, int ndims)
{
	VizTrace *t = r->t;
	if (t->nev >= r->max_events)
		tr_fail(r, "the trace has more than %lld loads and stores at these sizes (the "
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
	tr_fail(r, "variable '%s' has no value (an IR form txc viz does not run)", v->name);
}

void
tr_bind(Run *r, Var *v, Val x)
{
	*ARENA_PUSH(perm, r->env, r->nenv, r->capenv) = (Bind){ v, x };
}

/* x (of type `from`) as a value of type t. */
Val
tr_convert(ScalarType from, ScalarType t, Val x)
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

Store *
tr_storage(Run *r, Buffer *b)
{
	for (int i = r->nlive - 1; i >= 0; i--)
		if (r->live[i]->buf == b)
			return r->live[i];
	/* another Buffer of the same stage (a specialization's copy) */
	for (int i = r->nlive - 1; i >= 0; i--)
		if (!strcmp(r->live[i]->buf->name, b->name))
			return r->live[i];
	tr_fail(r, "'%s' is accessed where it is not allocated", b->name);
}

/* The offset of an access, recorded as an event. */
static int64_t
access(Run *r, VizKind kind, Buffer *b, IrExpr **idx, int nidx, Store **sp)
{
	Store *st = tr_storage(r, b);
	if (nidx != b->ndims || (b->flat && b->ndims != 1))
		tr_fail(r, "a flattened access to '%s' (an IR form txc viz does not run)", b->name);
	int32_t c[16];
	if (nidx > 16)
		tr_fail(r, "'%s' has more than 16 dimensions", b->name);
	int64_t off = 0;
	for (int d = 0; d < nidx; d++) {
		Val x = tr_eval(r, idx[d]), slot = x;
		if (b->fold > 0 && d == b->fold_dim && st->ring && x.i >= 0 && x.i < b->fold) {
			/* a ring (storage_fold.c): a store names the stage's row
			 * (its index is row % fold), a load finds the row its slot
			 * holds; both are drawn at that row */
			if (kind == VIZ_STORE && idx[d]->kind == IR_MOD)
				st->ring[x.i] = tr_eval(r, idx[d]->a).i;
			if (st->ring[x.i] != INT64_MIN)
				x.i = st->ring[x.i];
		}
		if (slot.i < st->min[d] || slot.i >= st->min[d] + st->ext[d]) {
			char *s = ir_expr_str(idx[d]);
			tr_fail(r, "%s of '%s' outside its allocation: index %d is %lld (%s), not in "
			    "[%lld, %lld)", kind == VIZ_LOAD ? "a load" : "a store", b->name, d,
			    (long long)x.i, s, (long long)st->min[d], (long long)(st->min[d] + st->ext[d]));
		}
		c[d] = (int32_t)x.i;
		off = off * st->ext[d] + (slot.i - st->min[d]);
	}
	VizEvent *e = tr_event(r, kind, st->tensor, nidx);
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

/* t->intrinsic: the names of the intrinsics called, in order of first
 * call, joined by ", " (mma_fill, mma, mma_store) */
static void
intrinsic_named(VizTrace *t, const char *name)
{
	const char *p = t->intrinsic;
	size_t n = strlen(name);
	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return;
		p = strchr(p, ',');
		p = p ? p + 2 : NULL;
	}
	t->intrinsic = t->intrinsic ? arena_printf(perm, "%s, %s", t->intrinsic, name) : name;
}

static Val
call(Run *r, IrExpr *e)
{
	Val a[3] = { { 0 } }, y;
	if (e->call.ck != CALL_BUILTIN) {
		/* a tensorize intrinsic: one hardware operation, drawn from its
		 * meaning; another target call is counted, not drawn */
		intrinsic_named(r->t, e->call.name);
		r->t->intrinsic_calls++;
		if (e->call.tz)
			tr_intrinsic(r, e);
		else
			r->t->intrinsic_undrawn++;
		return a[0];
	}
	for (int i = 0; i < e->call.nargs && i < 3; i++)
		a[i] = tr_eval(r, e->call.args[i]);
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
	Val a = tr_eval(r, e->a), y;
	/* && and || skip their right side as the backends' guards do */
	if (e->kind == IR_AND && !a.i)
		return a;
	if (e->kind == IR_OR && a.i)
		return a;
	Val b = tr_eval(r, e->b);
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
		default: tr_fail(r, "'%s' on floating point", ir_expr_names[e->kind]);
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
	default: tr_fail(r, "the operation '%s'", ir_expr_names[e->kind]);
	}
	y.i = ir_wrap(e->type.code, (int64_t)v);
	return y;
}

Val
tr_eval(Run *r, IrExpr *e)
{
	Val y;
	if (e->type.lanes != 1)
		tr_fail(r, "a vector expression (txc viz runs the nest before vectorize)");
	switch (e->kind) {
	case IR_INT: y.i = e->ival; return y;
	case IR_FLOAT: y.f = e->fval; return y;
	case IR_VAR: return lookup(r, e->var);
	case IR_NOT: y = tr_eval(r, e->a); y.i = !y.i; return y;
	case IR_NEG:
		y = tr_eval(r, e->a);
		if (ir_is_float(e->type))
			y.f = -y.f;
		else
			y.i = ir_wrap(e->type.code, (int64_t)(0 - (uint64_t)y.i));
		return y;
	case IR_BITNOT: y = tr_eval(r, e->a); y.i = ir_wrap(e->type.code, ~y.i); return y;
	case IR_SELECT:
		/* only the branch taken is evaluated (lower/ir.h's contract) */
		return tr_eval(r, tr_eval(r, e->a).i ? e->b : e->c);
	case IR_CAST: return tr_convert(e->a->type.code, e->type.code, tr_eval(r, e->a));
	case IR_LOAD: {
		if (e->a && !tr_eval(r, e->a).i) {
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
		Val v = tr_eval(r, e->a);
		tr_bind(r, e->var, v);
		y = tr_eval(r, e->b);
		r->nenv--;
		return y;
	}
	case IR_RAMP: case IR_BROADCAST:
		tr_fail(r, "a vector expression (txc viz runs the nest before vectorize)");
	default:
		return binop(r, e);
	}
}

int64_t
tr_eval_int(Run *r, IrExpr *e)
{
	return tr_eval(r, e).i;
}

/* ---- statements ------------------------------------------------------------ */

static int64_t
bytes_of(ScalarType t)
{
	return type_bits(t) <= 8 ? 1 : type_bits(t) / 8;
}

bool
tr_in_update(Run *r, const char *name)
{
	for (int i = r->nprod - 1; i >= 0; i--)
		if (!strcmp(r->prod[i].name, name))
			return r->prod[i].update;
	/* no marker of its own: a tuple reduction's other outputs, which
	 * the first output's update nest updates together with it */
	return r->nprod > 0 && r->prod[r->nprod - 1].update;
}

/* The tensor that the statements after a let store its value in (a tuple
 * reduction's `let s_next = ...; ...; s[i] = s_next`), or -1: the loads
 * of the let's value are made for that store. */
static int
let_consumer(Run *r, IrStmt *s, Var *v)
{
	while (s) {
		if (s->kind == IS_STORE) {
			Store *st;
			if (!ir_uses_var(s->store.value, v))
				return -1;
			st = tr_storage(r, s->store.buf);
			return st->tensor;
		}
		if (s->kind == IS_LET) {
			s = s->let.body;
		} else if (s->kind == IS_BLOCK) {
			for (int i = 0; i < s->block.n; i++) {
				IrStmt *c = s->block.stmts[i];
				if (c->kind == IS_STORE && ir_uses_var(c->store.value, v))
					return tr_storage(r, c->store.buf)->tensor;
				if (c->kind != IS_STORE && c->kind != IS_LET)
					return -1;
			}
			return -1;
		} else {
			return -1;
		}
	}
	return -1;
}

static void
exec_store(Run *r, IrStmt *s)
{
	Buffer *b = s->store.buf;
	Store *st = tr_storage(r, b);
	int saved = r->store_tensor;
	r->store_tensor = st->tensor;
	if (!s->store.pred || tr_eval_int(r, s->store.pred)) {
		/* the value first, then the element: loads precede the store */
		Val v = tr_eval(r, s->store.value);
		int64_t off = access(r, VIZ_STORE, b, s->store.idx, s->store.nidx, &st);
		VizEvent *e = &r->t->ev[r->t->nev - 1];
		e->update = tr_in_update(r, b->name);
		e->by = -1;
		e->iter = arena_alloc(perm, (r->nloops + 1) * sizeof *e->iter);
		if (r->nloops)
			memcpy(e->iter, r->loops, r->nloops * sizeof *e->iter);
		st->data[off] = tr_convert(s->store.value->type.code, b->elem, v);
		r->tick++;
	}
	r->store_tensor = saved;
}

/* A new allocation of b, with its ALLOC tr_event (its index in *at). */
Store *
tr_new_store(Run *r, Buffer *b, int64_t *at)
{
	Store *st = arena_alloc(perm, sizeof *st);
	st->buf = b;
	st->tensor = tensor_of(r->t, b);
	st->min = arena_alloc(perm, (b->ndims + 1) * sizeof *st->min);
	st->ext = arena_alloc(perm, (b->ndims + 1) * sizeof *st->ext);
	st->n = 1;
	for (int d = 0; d < b->ndims; d++) {
		st->min[d] = b->min && b->min[d] ? tr_eval_int(r, b->min[d]) : 0;
		st->ext[d] = tr_eval_int(r, b->extent[d]);
		if (st->ext[d] < 0)
			st->ext[d] = 0;
		if (st->ext[d] > VIZ_MAX_ELEMS || st->n * st->ext[d] > VIZ_MAX_ELEMS)
			tr_fail(r, "'%s' allocates more than %d elements at these sizes (the limit "
			    "for a picture); use smaller sizes", b->name, VIZ_MAX_ELEMS);
		st->n *= st->ext[d];
	}
	st->data = calloc((size_t)st->n + 1, sizeof *st->data);
	if (!st->data)
		diag_fatal("out of memory");
	VizEvent *e = tr_event(r, VIZ_ALLOC, st->tensor, b->ndims);
	for (int d = 0; d < b->ndims; d++) {
		e->coord[d] = (int32_t)st->min[d];
		e->coord[b->ndims + d] = (int32_t)st->ext[d];
	}
	if (b->fold > 0 && b->fold_dim < b->ndims && st->ext[b->fold_dim] == b->fold) {
		/* a ring (storage_fold.c): drawn as the rows it stands for */
		st->ring = arena_alloc(perm, (size_t)b->fold * sizeof *st->ring);
		for (int64_t k = 0; k < b->fold; k++)
			st->ring[k] = INT64_MIN;
		int64_t lo = tr_eval_int(r, b->fold_min), n = tr_eval_int(r, b->fold_extent);
		if (n < 0 || n > VIZ_MAX_ELEMS)
			tr_fail(r, "'%s' stands for more than %d rows at these sizes (the limit for a "
			    "picture); use smaller sizes", b->name, VIZ_MAX_ELEMS);
		e->coord[b->fold_dim] = (int32_t)lo;
		e->coord[b->ndims + b->fold_dim] = (int32_t)n;
	}
	e->elem = st->n * bytes_of(b->elem);   /* bytes, until viz_finish */
	e->alloc = r->nallocs++;
	*at = r->t->nev - 1;   /* later events may move the array */
	return st;
}

/* The FREE event of the allocation whose ALLOC event is at `at`. */
void
tr_free_event(Run *r, Store *st, int64_t at)
{
	int nd = st->buf->ndims;
	VizEvent *f = tr_event(r, VIZ_FREE, st->tensor, nd);
	VizEvent *e = &r->t->ev[at];
	memcpy(f->coord, e->coord, 2 * nd * sizeof *f->coord);
	f->elem = e->elem;
	f->alloc = e->alloc;
}

static void
exec_alloc(Run *r, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if (b->scope == SCOPE_SHARED && r->thread_depth > 0 && r->gpu_block >= 0) {
		tr_shared_alloc(r, s);
		return;
	}
	int64_t at;
	Store *st = tr_new_store(r, b, &at);
	*ARENA_PUSH(perm, r->live, r->nlive, r->caplive) = st;
	tr_exec(r, s->alloc.body);
	r->nlive--;
	tr_free_event(r, st, at);
	free(st->data);
	st->data = NULL;
}

static void
exec_for(Run *r, IrStmt *s)
{
	int64_t min = tr_eval_int(r, s->loop.min), n = tr_eval_int(r, s->loop.extent);
	ForKind fk = s->loop.fk;
	bool vec = fk == FOR_VECTORIZED;
	bool par = fk == FOR_PARALLEL || fk == FOR_GPU_BLOCK || fk == FOR_GPU_THREAD;
	int64_t nthreads = fk == FOR_PARALLEL ? r->o->threads : n;
	if (nthreads > n)
		nthreads = n;
	int64_t chunk = par && nthreads > 0 ? (n + nthreads - 1) / nthreads : n;
	/* a block-level nest of a GPU block that computes a pure stage */
	if (r->gpu_block >= 0 && r->thread_depth == 0 && !par && r->gpu_threads > 1 &&
	    !ir_has_loop(s, FOR_GPU_THREAD) && !(r->nprod && r->prod[r->nprod - 1].update)) {
		tr_spread(r, s);
		return;
	}
	int64_t t0 = r->tick, end = t0;
	int thread0 = r->thread, lane0 = r->lane;
	int64_t block0 = r->gpu_block, bthreads0 = r->gpu_threads;
	bool innermost_block = fk == FOR_GPU_BLOCK && !ir_has_loop(s->loop.body, FOR_GPU_BLOCK);
	bool first_thread_loop = fk == FOR_GPU_THREAD && r->thread_depth == 0 && block0 >= 0;
	/* the first thread loop of a block numbers its threads from the
	 * block's number, not from its thread 0 */
	int64_t base = first_thread_loop ? block0 : thread0;
	r->thread_depth += fk == FOR_GPU_THREAD;

	*ARENA_PUSH(perm, r->loops, r->nloops, r->caploops) = 0;
	for (int64_t i = 0; i < n; i++) {
		tr_step(r);
		if (vec) {
			r->tick = t0;
			r->lane = (int)i;
		} else if (par && i % chunk == 0) {
			r->tick = t0;
			int64_t th = base * nthreads + i / chunk;
			if (th > INT32_MAX / 2)
				tr_fail(r, "too many threads to draw (nested parallel loops)");
			r->thread = (int)th;
			if (r->thread + 1 > r->t->threads)
				r->t->threads = r->thread + 1;
		}
		Val v = { .i = min + i };
		r->loops[r->nloops - 1] = v.i;
		tr_bind(r, s->loop.var, v);
		if (innermost_block) {
			/* code outside the thread loops runs on the block's thread 0 */
			int64_t dim[3] = { 1, 1, 1 };
			tr_block_dims(r, s->loop.body, dim);
			r->gpu_block = r->thread;
			r->gpu_threads = dim[0] * dim[1] * dim[2];
			if (r->gpu_block * r->gpu_threads > INT32_MAX / 2)
				tr_fail(r, "too many threads to draw");
			r->thread = (int)(r->gpu_block * r->gpu_threads);
			if (r->thread + 1 > r->t->threads)
				r->t->threads = r->thread + 1;
		}
		tr_exec(r, s->loop.body);
		if (innermost_block)
			tr_end_block(r);
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

void
tr_exec(Run *r, IrStmt *s)
{
	if (!s)
		return;
	if (s->kind != IS_BLOCK) {
		tr_step(r);
		int line = viz_line_of(r->lines, s);
		if (line)
			r->line = line;
	}
	switch (s->kind) {
	case IS_FOR: exec_for(r, s); break;
	case IS_LET: {
		int saved = r->store_tensor;
		if (saved < 0)
			r->store_tensor = let_consumer(r, s->let.body, s->let.var);
		Val v = tr_eval(r, s->let.value);
		r->store_tensor = saved;
		tr_bind(r, s->let.var, v);
		tr_exec(r, s->let.body);
		r->nenv--;
		break;
	}
	case IS_STORE: exec_store(r, s); break;
	case IS_ALLOCATE: exec_alloc(r, s); break;
	case IS_IF:
		tr_exec(r, tr_eval_int(r, s->ifs.cond) ? s->ifs.then_s : s->ifs.else_s);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			tr_exec(r, s->block.stmts[i]);
		break;
	case IS_EVALUATE:
		tr_eval(r, s->eval.value);
		r->tick++;
		break;
	case IS_ASSERT:
		if (!tr_eval_int(r, s->assrt.cond))
			tr_fail(r, "the kernel fails at these sizes: %s", s->assrt.msg);
		break;
	case IS_PRODUCE:
		if (r->ncoop && tr_coop_produce(r, s))
			break;
		*ARENA_PUSH(perm, r->prod, r->nprod, r->capprod) =
		    (struct Prod){ s->produce.name, s->produce.update };
		tr_exec(r, s->produce.body);
		r->nprod--;
		break;
	default:
		tr_fail(r, "the statement '%s' (an IR form txc viz does not run)",
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
		tr_bind(&r, v, x);
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
			st->ext[d] = tr_eval_int(&r, b->extent[d]);
			if (st->ext[d] < 0)
				tr_fail(&r, "'%s' has a negative extent at these sizes", b->name);
			if (st->ext[d] > VIZ_MAX_ELEMS || st->n * st->ext[d] > VIZ_MAX_ELEMS)
				tr_fail(&r, "'%s' has more than %d elements at these sizes (the limit "
				    "for a picture); use smaller sizes", b->name, VIZ_MAX_ELEMS);
			st->n *= st->ext[d];
			vt->ext[d] = st->ext[d];
		}
		st->data = arena_alloc(perm, (size_t)(st->n + 1) * sizeof *st->data);
		for (int64_t j = 0; j < st->n && b->is_input; j++) {
			double x = floor(rnd() * 128) / 64 - 1;
			Val v = { .f = x };
			st->data[j] = type_is_float(b->elem) ? v :
			    tr_convert(TY_F64, b->elem, (Val){ .f = floor(rnd() * 16) - (type_is_signed(b->elem) ? 8 : 0) });
		}
		*ARENA_PUSH(perm, r.live, r.nlive, r.caplive) = st;
	}
	tr_exec(&r, f->body);
	t->ticks = r.tick;
	if (t->threads == 0)
		t->threads = 1;
	ok = true;
done:
	return ok;
}
