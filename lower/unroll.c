/* unroll.c: replaces unrolled loops of constant extent by copies of their
 * body, one per value of the loop variable.
 *
 * A loop whose extent is not a constant but has a constant bound
 * (min(6, M - io*6): a tile clamped at the edge) becomes that many copies,
 * each under `if (i < extent)`.  Any other non-constant extent, or one
 * above UNROLL_MAX, stays a serial loop.
 * Variables bound inside the body (lets) get fresh names in each copy, so
 * that a backend never sees one variable bound twice in one scope.
 */
#include "lower/ir.h"

enum { UNROLL_MAX = 64 };

/* Gives the lets in a copy of a body fresh variables. */
static IrStmt *
fresh_let_stmt(IrMutator *m, IrStmt *s)
{
	Var *v = ir_new_var(s->let.var->name, s->let.var->type);
	IrStmt *body = ir_substitute_stmt(s->let.body, s->let.var, ir_var(v));
	IrExpr *val = ir_mutate_expr(m, s->let.value);
	body = ir_mutate_stmt(m, body);
	IrStmt *r = ir_let_stmt(v, val, body);
	r->loc = s->loc;
	return r;
}

static IrExpr *
fresh_let_expr(IrMutator *m, IrExpr *e)
{
	Var *v = ir_new_var(e->var->name, e->var->type);
	IrExpr *body = ir_mutate_expr(m, ir_substitute(e->b, e->var, ir_var(v)));
	return ir_let(v, ir_mutate_expr(m, e->a), body);
}

static const IrMutator fresh_table = {
	.expr = {[IR_LET] = fresh_let_expr},
	.stmt = {[IS_LET] = fresh_let_stmt},
};

IrStmt *
unroll_loop(IrStmt *s)
{
	int64_t n;
	IrExpr *ext = simplify_expr(s->loop.extent, NULL);
	IrExpr *limit = NULL;    /* a bounded extent: copy i runs if i < limit */
	if (!ir_is_const(ext, &n) && bounds_const_max(ext, &n) && n >= 1 && n <= UNROLL_MAX)
		limit = ext;
	else if (!ir_is_const(ext, &n) || n > UNROLL_MAX) {
		IrStmt *r = ir_for(s->loop.var, s->loop.min, s->loop.extent,
		    FOR_SERIAL, s->loop.body);
		r->loc = s->loc;
		return r;
	}
	if (n <= 0)
		return NULL;
	IrStmt **copies = arena_alloc(ir_arena, n * sizeof *copies);
	for (int64_t i = 0; i < n; i++) {
		IrExpr *v = simplify_expr(ir_add(s->loop.min,
		    ir_int(s->loop.var->type, i)), NULL);
		IrStmt *c = ir_substitute_stmt(s->loop.body, s->loop.var, v);
		if (limit)
			c = ir_if(ir_binop(IR_LT, ir_int(limit->type, i), limit), c, NULL);
		if (i > 0) {
			IrMutator fresh = fresh_table;
			c = ir_mutate_stmt(&fresh, c);
		}
		copies[i] = c;
	}
	return ir_block(copies, (int)n);
}

static IrStmt *
unroll_for(IrMutator *m, IrStmt *s)
{
	IrStmt *inner = ir_mutate_stmt_children(m, s);
	if (!inner || inner->kind != IS_FOR || inner->loop.fk != FOR_UNROLLED)
		return inner;
	return unroll_loop(inner);
}

IrStmt *
unroll_loops(IrStmt *s)
{
	IrMutator m = {.stmt = {[IS_FOR] = unroll_for}};
	return ir_mutate_stmt(&m, s);
}
