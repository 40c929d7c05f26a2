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
 *
 * In a GPU kernel such tests would run in every step of a register tile:
 * the block and thread loops are not partitioned (partition.c), so a
 * thread of a whole tile pays for the edge one.  There, a nest of
 * unrolled loops whose bounded extents E_k (constant bound n_k) do not
 * depend on the nest's own loops is unswitched first,
 *
 *     if (E_1 >= n_1 && E_2 >= n_2 ...) { the nest, extents n_k } else { the nest }
 *
 * so that whole tiles run copies with no test (the If is uniform across
 * the nest, one test per entry into it).
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

/* ---- unswitching a GPU nest on its whole extents --------------------------- */

typedef struct {
	IrVisitor v;
	Var *bound[64];    /* loop and let variables bound inside the nest */
	int nbound;
	bool skip;         /* not unswitched: a table overflowed, or a statement
	                      a branch on a thread must not hold (nest_unsafe_stmt) */
	IrExpr *ext[16];   /* bounded extents of the nest's unrolled loops */
	int64_t max[16];
	int next;
} Nest;

static void
nest_let(IrVisitor *v, IrStmt *s)
{
	Nest *n = (Nest *)v;
	if (n->nbound < 64)
		n->bound[n->nbound++] = s->let.var;
	else
		n->skip = true;
	ir_visit_stmt_children(v, s);
}

static void
nest_for(IrVisitor *v, IrStmt *s)
{
	Nest *n = (Nest *)v;
	int64_t c;
	if (s->loop.fk == FOR_GPU_BLOCK || s->loop.fk == FOR_GPU_THREAD)
		n->skip = true;
	if (n->nbound < 64)
		n->bound[n->nbound++] = s->loop.var;
	else
		n->skip = true;
	IrExpr *ext = simplify_expr(s->loop.extent, NULL);
	if (s->loop.fk == FOR_UNROLLED && !ir_is_const(ext, &c) && bounds_const_max(ext, &c) &&
	    c >= 1 && c <= UNROLL_MAX) {
		if (n->next < 16) {
			n->ext[n->next] = ext;
			n->max[n->next++] = c;
		} else
			n->skip = true;
	}
	ir_visit_stmt_children(v, s);
}

/* What a branch on a thread's index must not hold: a buffer's allocation
 * or a store to shared memory (a block's cooperative copy and its
 * barriers), a GPU loop, or an intrinsic call (mma.sync: the whole warp
 * takes part). */
static void
nest_unsafe_stmt(IrVisitor *v, IrStmt *s)
{
	((Nest *)v)->skip = true;
	(void)s;
}

static void
nest_store(IrVisitor *v, IrStmt *s)
{
	if (s->store.buf->scope == SCOPE_SHARED)
		((Nest *)v)->skip = true;
	ir_visit_stmt_children(v, s);
}

static void
nest_call(IrVisitor *v, IrExpr *e)
{
	if (e->call.ck == CALL_INTRINSIC)
		((Nest *)v)->skip = true;
	ir_visit_expr_children(v, e);
}

/* Replaces the extents the unswitch proved whole by their bounds. */
typedef struct {
	IrMutator m;
	Nest *n;
	bool *keep;
} Whole;

static IrStmt *
whole_for(IrMutator *m, IrStmt *s)
{
	Whole *w = (Whole *)m;
	IrStmt *r = ir_mutate_stmt_children(m, s);
	if (!r || r->kind != IS_FOR || r->loop.fk != FOR_UNROLLED)
		return r;
	IrExpr *ext = simplify_expr(s->loop.extent, NULL);
	for (int i = 0; i < w->n->next; i++)
		if (w->keep[i] && ir_expr_equal(ext, w->n->ext[i])) {
			IrStmt *c = ir_for(r->loop.var, r->loop.min,
			    ir_int(r->loop.extent->type, w->n->max[i]), FOR_UNROLLED, r->loop.body);
			c->loc = r->loc;
			return c;
		}
	return r;
}

/* The unswitched nest, or s when none of its extents can be. */
static IrStmt *
unswitch_nest(IrStmt *s)
{
	Nest n;
	memset(&n, 0, sizeof n);
	n.v.stmt[IS_FOR] = nest_for;
	n.v.stmt[IS_LET] = nest_let;
	n.v.stmt[IS_ALLOCATE] = nest_unsafe_stmt;
	n.v.stmt[IS_STORE] = nest_store;
	n.v.expr[IR_CALL] = nest_call;
	ir_visit_stmt(&n.v, s);
	if (n.skip || n.next == 0)
		return s;
	bool keep[16];
	IrExpr *cond = NULL;
	for (int i = 0; i < n.next; i++) {
		keep[i] = true;
		for (int j = 0; j < n.nbound && keep[i]; j++)
			keep[i] = !ir_uses_var(n.ext[i], n.bound[j]);
		for (int j = 0; j < i && keep[i]; j++)
			keep[i] = !(keep[j] && ir_expr_equal(n.ext[i], n.ext[j]));
		if (!keep[i])
			continue;
		/* min(E, n) >= n is E >= n */
		IrExpr *e = n.ext[i];
		int64_t k;
		if (e->kind == IR_MIN && ir_is_const(e->b, &k) && k == n.max[i])
			e = e->a;
		else if (e->kind == IR_MIN && ir_is_const(e->a, &k) && k == n.max[i])
			e = e->b;
		IrExpr *c = ir_binop(IR_GE, e, ir_int(e->type, n.max[i]));
		cond = cond ? ir_binop(IR_AND, cond, c) : c;
	}
	if (!cond)
		return s;
	Whole w = { .m = {.stmt = {[IS_FOR] = whole_for}}, .n = &n, .keep = keep };
	IrStmt *fast = ir_mutate_stmt(&w.m, s);
	IrStmt *r = ir_if(simplify_expr(cond, NULL), fast, s);
	r->loc = s->loc;
	return r;
}

/* Unswitches the outermost unrolled nests inside GPU loops. */
static IrStmt *
gpu_nests_for(IrMutator *m, IrStmt *s)
{
	if (s->loop.fk == FOR_UNROLLED)
		return unswitch_nest(s);
	return ir_mutate_stmt_children(m, s);
}

static IrStmt *
gpu_kernels_for(IrMutator *m, IrStmt *s)
{
	if (s->loop.fk == FOR_GPU_BLOCK || s->loop.fk == FOR_GPU_THREAD) {
		IrMutator in = {.stmt = {[IS_FOR] = gpu_nests_for}};
		return ir_mutate_stmt(&in, s);
	}
	return ir_mutate_stmt_children(m, s);
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
	IrMutator g = {.stmt = {[IS_FOR] = gpu_kernels_for}};
	s = ir_mutate_stmt(&g, s);
	IrMutator m = {.stmt = {[IS_FOR] = unroll_for}};
	return ir_mutate_stmt(&m, s);
}
