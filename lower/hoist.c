/* hoist.c: moves loop-invariant divisions by run-time values out of loops.
 *
 * For each loop (innermost first), the largest integer subexpressions of
 * its body that use none of the variables bound in the loop (its counter,
 * inner counters, lets) and hold a division or modulo by a non-constant
 * are computed once in a let around the loop:
 *
 *     for (wi, 0, 6) { y[nkb/KB*S1 + nkb%KB*S2 + wi*8] = ... }
 *  -> let inv0 = nkb/KB*S1 + nkb%KB*S2
 *     for (wi, 0, 6) { y[inv0 + wi*8] = ... }
 *
 * This is the invariant code LLVM's LICM cannot move: a division by a
 * variable is not safe to speculate for it, so `nkb/KB` (a fused loop
 * split back into its two indices) stayed in the loop that stores each
 * vector of an output block, and a run-time shape's strides and extents
 * (`(W + 2*PW - DW*(S - 1) - 1)/SW`) were computed again in every access
 * and block.  Here they may move, since division and modulo are total in
 * the IR (x/0 and x%0 are 0, INT_MIN/-1 wraps: cg_expr.c, target/c): a
 * hoisted one may run where a guard in the loop would have skipped it,
 * but it cannot trap.  The rest of the invariant arithmetic is left to
 * LLVM, which hoists it as well; hoisting it here too gave LLVM's loop
 * strength reduction more bases to weigh (max_pool2d: 83 -> 102 M
 * instructions to compile, for the same code).
 *
 * Only pure arithmetic on scalar integers moves: no loads (memory may
 * change in the loop), no calls, no selects.  Equal subexpressions share
 * one let.  GPU and vectorized loops are left alone, and nothing moves
 * out of a GPU loop's body.  The pipeline runs it last, for CPU code
 * (pipeline.c): conv2d_nchw8c had 133 divisions in its unoptimised LLVM
 * IR, and compiles in a quarter fewer instructions with them hoisted.
 */
#include "lower/ir.h"

typedef struct {
	IrMutator m;
	Var **bound; int nbound, capbound;   /* variables bound in the loop */
	IrExpr **exprs; Var **vars; int n, cap, capv;   /* hoisted so far */
	int *counter;
} Hoist;

/* ---- which variables a loop binds ---------------------------------------- */

typedef struct {
	IrVisitor v;
	Hoist *h;
} Binders;

static void
add_bound(Hoist *h, Var *v)
{
	*ARENA_PUSH(ir_arena, h->bound, h->nbound, h->capbound) = v;
}

static void
bind_stmt(IrVisitor *v, IrStmt *s)
{
	Hoist *h = ((Binders *)v)->h;
	if (s->kind == IS_FOR)
		add_bound(h, s->loop.var);
	else if (s->kind == IS_LET)
		add_bound(h, s->let.var);
	ir_visit_stmt_children(v, s);
}

static void
bind_expr(IrVisitor *v, IrExpr *e)
{
	add_bound(((Binders *)v)->h, e->var);
	ir_visit_expr_children(v, e);
}

/* ---- what may move ----------------------------------------------------------- */

/* Pure integer arithmetic over variables not bound in the loop; *vars
 * counts the variables it uses. */
static bool
movable(Hoist *h, IrExpr *e, int *vars)
{
	if (!e)
		return true;
	if (e->type.lanes != 1 || !ir_is_int(e->type))
		return false;
	switch (e->kind) {
	case IR_INT:
		return true;
	case IR_VAR:
		for (int i = 0; i < h->nbound; i++)
			if (h->bound[i] == e->var)
				return false;
		++*vars;
		return true;
	case IR_DIV: case IR_MOD:
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX:
	case IR_NEG: case IR_SHL: case IR_SHR: case IR_BITAND: case IR_BITOR:
	case IR_BITXOR: case IR_BITNOT: case IR_CAST:
		return movable(h, e->a, vars) && movable(h, e->b, vars);
	default:
		return false;
	}
}

/* Whether e (movable) divides by something that is not a constant. */
static bool
divides(IrExpr *e)
{
	int64_t c;
	if (!e || e->kind == IR_INT || e->kind == IR_VAR)
		return false;
	if ((e->kind == IR_DIV || e->kind == IR_MOD) && !ir_is_const(e->b, &c))
		return true;
	return divides(e->a) || divides(e->b);
}

static IrExpr *
hoist_expr(IrMutator *m, IrExpr *e)
{
	Hoist *h = (Hoist *)m;
	int vars = 0;
	if (e->kind != IR_INT && e->kind != IR_VAR && e->kind != IR_CAST &&
	    movable(h, e, &vars) && vars > 0 && divides(e)) {
		for (int i = 0; i < h->n; i++)
			if (ir_expr_equal(h->exprs[i], e))
				return ir_var(h->vars[i]);
		Var *v = ir_new_var(arena_printf(ir_arena, "inv%d", (*h->counter)++),
		    e->type);
		int n = h->n;
		*ARENA_PUSH(ir_arena, h->exprs, h->n, h->cap) = e;
		*ARENA_PUSH(ir_arena, h->vars, n, h->capv) = v;
		return ir_var(v);
	}
	return ir_mutate_expr_children(m, e);
}

static IrStmt *hoist_for(IrMutator *m, IrStmt *s);

static bool
gpu_loop(IrStmt *s)
{
	return s->loop.fk == FOR_GPU_BLOCK || s->loop.fk == FOR_GPU_THREAD ||
	    s->loop.fk == FOR_VTHREAD;
}

/* Inside the loop being hoisted from: a GPU loop's body is another
 * function (the kernel), whose values do not move out to the host. */
static IrStmt *
keep_gpu(IrMutator *m, IrStmt *s)
{
	return gpu_loop(s) ? s : ir_mutate_stmt_children(m, s);
}

static const IrMutator loop_table = {.stmt = {[IS_FOR] = hoist_for}};

static IrStmt *
hoist_for(IrMutator *m, IrStmt *s)
{
	int *counter = ((Hoist *)m)->counter;
	/* inner loops first */
	IrStmt *loop = ir_mutate_stmt_children(m, s);
	if (!loop || loop->kind != IS_FOR || gpu_loop(loop) ||
	    loop->loop.fk == FOR_VECTORIZED)
		return loop;
	Hoist h = {.counter = counter};
	for (int i = 0; i < IR_EXPR_COUNT; i++)
		h.m.expr[i] = hoist_expr;
	h.m.stmt[IS_FOR] = keep_gpu;
	add_bound(&h, loop->loop.var);
	Binders b = {.v = {.stmt = {[IS_FOR] = bind_stmt, [IS_LET] = bind_stmt},
	    .expr = {[IR_LET] = bind_expr}}, .h = &h};
	ir_visit_stmt(&b.v, loop->loop.body);
	IrStmt *body = ir_mutate_stmt(&h.m, loop->loop.body);
	if (h.n == 0)
		return loop;
	IrStmt *r = ir_for(loop->loop.var, loop->loop.min, loop->loop.extent,
	    loop->loop.fk, body);
	r->loc = loop->loc;
	for (int i = h.n - 1; i >= 0; i--)
		r = ir_let_stmt(h.vars[i], h.exprs[i], r);
	return r;
}

IrStmt *
hoist_invariants(IrStmt *s)
{
	int counter = 0;
	Hoist h = {.m = loop_table, .counter = &counter};
	return ir_mutate_stmt(&h.m, s);
}
