/* unroll.c: replaces unrolled loops of constant extent by copies of their
 * body, one per value of the loop variable.
 *
 * A loop whose extent is not a constant but has a constant bound
 * (min(6, M - io*6): a tile clamped at the edge) becomes that many copies,
 * each under `if (i < extent)`.  Any other non-constant extent, or one
 * above UNROLL_MAX, stays a serial loop.  Nested unrolled loops that
 * would make more than UNROLL_COPIES_MAX copies of their innermost body
 * are an error naming the product and the limit (64 x 64 x 64 took
 * minutes and gigabytes).
 * Variables bound inside the body (lets) get fresh names in each copy, so
 * that a backend never sees one variable bound twice in one scope.
 */
#include <string.h>

#include "lower/ir.h"

/* The longest loop unrolled, and the most copies of a body that nested
 * unrolled loops may make (txc-schedule(7) unroll). */
enum { UNROLL_MAX = 64, UNROLL_COPIES_MAX = 1024 };

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

/* The copies nested unrolled loops make of their innermost body: the
 * product of their extents along the worst chain of them (64 x 64 x 64
 * took minutes and gigabytes), and that chain's loops. */
typedef struct {
	IrVisitor v;
	int64_t prod, worst;
	IrStmt *chain[16], *worst_chain[16];
	int depth, worst_depth;
} Copies;

static void
copies_for(IrVisitor *v, IrStmt *s)
{
	Copies *c = (Copies *)v;
	int64_t n;
	IrExpr *ext = s->loop.extent;
	bool counted = s->loop.fk == FOR_UNROLLED &&
	    (ir_is_const(ext, &n) || bounds_const_max(ext, &n)) && n >= 1 && n <= UNROLL_MAX;
	if (!counted) {
		ir_visit_stmt_children(v, s);
		return;
	}
	int64_t keep = c->prod;
	c->prod = c->prod > INT64_MAX / n ? INT64_MAX : c->prod * n;
	if (c->depth < 16)
		c->chain[c->depth] = s;
	c->depth++;
	if (c->prod > c->worst) {
		c->worst = c->prod;
		c->worst_depth = c->depth < 16 ? c->depth : 16;
		memcpy(c->worst_chain, c->chain, (size_t)c->worst_depth * sizeof *c->chain);
	}
	ir_visit_stmt_children(v, s);
	c->depth--;
	c->prod = keep;
}

IrStmt *
unroll_loops(IrStmt *s)
{
	Copies c = { .v = {.stmt = {[IS_FOR] = copies_for}}, .prod = 1, .worst = 1 };
	ir_visit_stmt(&c.v, s);
	if (c.worst > UNROLL_COPIES_MAX) {
		const char *how = "";
		for (int i = 0; i < c.worst_depth; i++) {
			int64_t n;
			IrExpr *ext = c.worst_chain[i]->loop.extent;
			if (!ir_is_const(ext, &n))
				bounds_const_max(ext, &n);
			how = arena_printf(ir_arena, "%s%s%s %lld", how, i ? " x " : "",
			    c.worst_chain[i]->loop.var->name, (long long)n);
		}
		IrStmt *at = c.worst_chain[0];
		for (int i = 0; i < c.worst_depth && !at->loc.file; i++)
			at = c.worst_chain[i];
		diag_error(at->loc, "unrolling makes %lld copies of a loop body (%s), more than "
		    "the limit of %d", (long long)c.worst, how, UNROLL_COPIES_MAX);
		diag_note(at->loc, "unroll fewer of these loops, or split them by smaller factors "
		    "first");
		return NULL;
	}
	IrMutator m = {.stmt = {[IS_FOR] = unroll_for}};
	return ir_mutate_stmt(&m, s);
}
