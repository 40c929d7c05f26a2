/* gpu_allreduce.c: a reduction across a block's threads as a tree in
 * shared memory (TVM's LowerThreadAllreduce, its shared-memory form).
 *
 * A cross-thread reduction is written with rfactor: the factored stage's
 * pure axis is bound to threads and its partial results sit in shared
 * memory (computed at the block loop), and the final stage sums them:
 *
 *     for (r, 0, T) { y[j] = y[j] op part[e + r] }      (at block level)
 *
 * gpu_spmd would run that loop on thread 0.  When T is a constant and op
 * is +, *, min or max, it becomes instead: the T partial results copied
 * to a scratch buffer of the block (spread over its threads), then
 * log2(T) halving steps, each a barrier and every thread t below the half
 * combining elements t and t + half, and last thread 0 combining the one
 * result left into y[j].  The order of the combinations changes, which
 * the language allows for reductions (tx(5)); the result is the same up
 * to rounding.
 */
#include <string.h>

#include "target/cuda/cuda.h"

/* e as base + v (coefficient 1, base free of v); NULL if it is not. */
static IrExpr *
minus_var(IrExpr *e, Var *v)
{
	IrExpr *base = simplify_expr(ir_sub(e, ir_var(v)), NULL);
	return ir_uses_var(base, v) ? NULL : base;
}

static bool
combinable(IrExprKind k)
{
	return k == IR_ADD || k == IR_MUL || k == IR_MIN || k == IR_MAX;
}

static IrStmt *
at_threads(IrExpr *nthreads, IrExpr *tid, IrExpr *count, Var *t, IrStmt *body)
{
	/* for (q, 0, ceil(count / n)) { let t = q*n + tid; if (t < count) body } */
	Var *q = ir_new_var("q", ir_i64);
	body = ir_if(ir_binop(IR_LT, ir_var(t), count), body, NULL);
	body = ir_let_stmt(t, ir_add(ir_mul(ir_var(q), nthreads), tid), body);
	IrExpr *trips = ir_div(ir_sub(ir_add(count, nthreads), ir_i64c(1)), nthreads);
	return ir_for(q, ir_i64c(0), simplify_expr(trips, NULL), FOR_SERIAL, body);
}

IrStmt *
gpu_allreduce(IrStmt *s, IrExpr *nthreads, IrExpr *tid, IrExpr *first)
{
	int64_t T;
	if (!s || s->kind != IS_FOR || s->loop.fk == FOR_GPU_THREAD ||
	    s->loop.fk == FOR_GPU_BLOCK || !ir_is_const(s->loop.extent, &T) || T < 2 ||
	    T > 1 << 20)
		return NULL;
	IrStmt *st = s->loop.body;
	Var *r = s->loop.var;
	if (st->kind != IS_STORE || st->store.pred || st->store.nidx != 1 ||
	    ir_uses_var(st->store.idx[0], r))
		return NULL;
	IrExpr *v = st->store.value;
	if (v->type.lanes != 1 || !combinable(v->kind))
		return NULL;
	/* y[j] op part[e + r], either way round */
	IrExpr *self = v->a, *other = v->b;
	if (!(self->kind == IR_LOAD && self->load.buf == st->store.buf && self->load.nidx == 1 &&
	    ir_expr_equal(self->load.idx[0], st->store.idx[0]))) {
		self = v->b;
		other = v->a;
	}
	if (!(self->kind == IR_LOAD && self->load.buf == st->store.buf && self->load.nidx == 1 &&
	    ir_expr_equal(self->load.idx[0], st->store.idx[0]) && !self->a))
		return NULL;
	if (other->kind != IR_LOAD || other->a || other->load.nidx != 1 ||
	    other->load.buf->scope != SCOPE_SHARED || other->load.buf == st->store.buf)
		return NULL;
	IrExpr *base = minus_var(other->load.idx[0], r);
	if (!base)
		return NULL;
	/* r's range may start elsewhere than 0 */
	base = simplify_expr(ir_add(base, s->loop.min), NULL);
	Buffer *part = other->load.buf;

	Buffer *scratch = ir_new_buffer("txc_red", part->elem, 1);
	scratch->extent[0] = ir_i64c(T);
	scratch->min[0] = ir_i64c(0);
	scratch->scope = SCOPE_SHARED;
	scratch->flat = true;
	Var *t = ir_new_var("t", ir_i64);
	IrExpr *ti = ir_var(t);
	IrExpr *idx0 = simplify_expr(ir_add(base, ti), NULL);
	IrStmt *copy = at_threads(nthreads, tid, ir_i64c(T), t,
	    ir_store(scratch, &ti, 1, ir_load(part, &idx0, 1, NULL, 1), NULL));
	IrStmt *steps = NULL;
	int64_t P = 1;
	while (P * 2 < T)
		P *= 2;
	/* first fold the top T - P elements onto the bottom ones, then halve */
	for (int64_t half = P, n = T - P; half >= 1; n = half / 2, half /= 2) {
		Var *u = ir_new_var("t", ir_i64);
		IrExpr *ui = ir_var(u), *hi = ir_add(ui, ir_i64c(half));
		IrExpr *val = ir_binop(v->kind, ir_load(scratch, &ui, 1, NULL, 1),
		    ir_load(scratch, &hi, 1, NULL, 1));
		steps = ir_seq(steps, ir_seq(gpu_barrier(), at_threads(nthreads, tid, ir_i64c(n), u,
		    ir_store(scratch, &ui, 1, val, NULL))));
	}
	IrExpr *zero = ir_i64c(0);
	IrExpr *res = self == v->a ? ir_binop(v->kind, self, ir_load(scratch, &zero, 1, NULL, 1)) :
	    ir_binop(v->kind, ir_load(scratch, &zero, 1, NULL, 1), self);
	IrStmt *last = ir_if(first, ir_store(st->store.buf, st->store.idx, 1, res, NULL), NULL);
	IrStmt *body = ir_seq(copy, ir_seq(steps, ir_seq(gpu_barrier(), last)));
	IrStmt *a = ir_allocate(scratch, simplify_stmt(body));
	a->loc = s->loc;
	return a;
}
