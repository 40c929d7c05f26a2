/* partition.c: loop partitioning (Halide's PartitionLoops).
 *
 * A guard split leaves `if (io*8 + ii < M && jo*32 + ji < N)` around the
 * body of a tile, and the vectorizer turns such a guard into masked loads
 * and stores in the hottest loop.  For most iterations of io the guard
 * holds for every inner iteration, so each serial or parallel loop whose
 * body has guards is split in three:
 *
 *     for (io, 0, io_s)        { body }              prologue
 *     for (io, io_s, io_e - io_s) { body, solved guards dropped }  steady
 *     for (io, io_e, end - io_e)   { body }          epilogue
 *
 * A boundary copy's select, padded[...] = select(c, x[...], 0), is a
 * guard too: the steady state stores x[...] (Halide's likely()).  On a
 * loop the schedule marks with partition(axis), so is every select on a
 * scalar condition in a stored value, such as a padding test inlined into
 * its consumer, y = y + select(c, x[...], 0) * w; and an inner loop that
 * starts at the loop's tile, (q, qo*8, 8), is q = qo*8 + an offset in
 * [0, 7], taken at its worst (a register tile computed at qo).
 * A conjunct of a guard is solved for the loop when it is a comparison
 * linear in the loop variable (coefficient c != 0) whose other terms,
 * taken at their worst over the loops inside (their ranges must not
 * depend on the loop variable), give a bound: c*v + rest >= 0 holds for
 * every inner iteration when v >= ceil(-min(rest) / c) (c > 0) or
 * v <= floor(min(rest) / -c) (c < 0).  The steady range is where every
 * solved conjunct holds; it is clamped into the loop, so any size works
 * (an empty steady range runs everything in the prologue and epilogue).
 * A side that no conjunct bounds has no part: with upper bounds only (a
 * tile's tail) there is no prologue.  The prologue and epilogue of a
 * parallel loop are serial.  Loops inside the steady state are
 * partitioned in turn; the prologue and epilogue are not (they are
 * short), but where a conjunct is the only
 * bound on its side and exact (free of inner loops, and of anything the
 * bounds widen, such as f % N) it is false throughout the
 * prologue or epilogue, and its guard goes (a boundary copy's first and
 * last rows store 0 with no test and no masked load).  A loop is partitioned
 * only where that pays for the copies of its body: a solved guard sits in
 * a loop inside it (it runs many times per iteration), or the body has no
 * loops of its own (vector lanes aside), so the guarded code is most of
 * it; a guard on one vector store after a loop nest is left alone.  Vectorized,
 * unrolled and GPU loops are not partitioned: they have constant extents
 * and the vectorizer predicates them; nothing inside a vectorized loop is
 * partitioned either.  When the body also holds a repeating loop with
 * no solved guard (an accumulator's nest beside its guarded store, as
 * tail=round_up leaves it), splitting the loop would copy that nest for
 * nothing: the loop stays whole and each smallest guarded statement is
 * unswitched instead, `if (lo <= v < hi) { it, guards dropped } else { it }`
 * (the If sinks through blocks, allocations, lets and loops with shared
 * parts).  Runs after flatten's simplify, before unroll and vectorize; the
 * next simplify folds what the new bounds make constant.
 */
#include <string.h>

#include "lower/lower.h"

/* A guard conjunct solved for the loop being partitioned. */
typedef struct {
	IrStmt *ifs;           /* the If it belongs to (or the store whose
	                          value is a select on it) */
	IrExpr *conj;          /* the conjunct (a node of ifs->ifs.cond) */
	bool ok;               /* solved at every place the If appears */
	IrExpr *bound;         /* the bound it gives */
	int side;              /* +1: a lower bound on v, -1: an upper one */
	bool exact;            /* c*v + d0 >= 0 with d0 its own lower bound
	                          (no inner loop, nothing widened): false
	                          wherever the bound fails */
} Solved;

typedef struct {
	Var *v;                /* the loop variable */
	bool selects;          /* partition(v): every select in a stored value
	                          is a guard, and inner loops may start at v's
	                          tile (else only a boundary copy's select) */
	BoundsScope *inner;    /* ranges of the loops inside, innermost first */
	struct { Var *var; IrExpr *value; } *lets;       /* lets inside */
	int nlets, caplets;
	IrExpr **lo; int nlo, caplo;     /* v >= each */
	IrExpr **hi; int nhi, caphi;     /* v <= each */
	Solved *sol; int nsol, capsol;
	bool in_vector;
	int depth;             /* loops entered that repeat (not vectorized) */
	bool loops;            /* the body has such a loop */
	bool hot;              /* a guard solved inside such a loop */
} Solve;

static bool
is_index(IrExpr *e)
{
	return e->type.lanes == 1 && (e->type.code == TY_I64 || e->type.code == TY_I32);
}

static IrExpr *
widen(IrExpr *e)
{
	return e->type.code == TY_I64 ? e : ir_cast(ir_i64, e);
}

/* The conjunct as d >= 0 (i64), or NULL if it is not an integer comparison. */
static IrExpr *
as_nonneg(IrExpr *c)
{
	if (c->kind < IR_LT || c->kind > IR_GE || c->kind == IR_EQ || c->kind == IR_NE)
		return NULL;
	if (!is_index(c->a) || !is_index(c->b))
		return NULL;
	IrExpr *a = widen(c->a), *b = widen(c->b);
	switch (c->kind) {
	case IR_LT: return ir_sub(ir_sub(b, a), ir_i64c(1));   /* a < b: b - a - 1 >= 0 */
	case IR_LE: return ir_sub(b, a);
	case IR_GT: return ir_sub(ir_sub(a, b), ir_i64c(1));
	case IR_GE: return ir_sub(a, b);
	default: return NULL;
	}
}

static IrExpr *
unlet(Solve *S, IrExpr *e)
{
	for (int i = S->nlets - 1; i >= 0; i--)
		if (ir_uses_var(e, S->lets[i].var))
			e = ir_substitute(e, S->lets[i].var, S->lets[i].value);
	return e;
}

static bool
uses_inner(IrExpr *e, BoundsScope *inner)
{
	for (BoundsScope *s = inner; s; s = s->next)
		if (ir_uses_var(e, s->var))
			return true;
	return false;
}

/* Solves one conjunct for S->v; false if it says nothing usable.  *out
 * gets the bound, its side and whether the conjunct is exact. */
static bool
solve_conj(Solve *S, IrExpr *conj, Solved *out)
{
	IrExpr *d = as_nonneg(conj);
	if (!d)
		return false;
	d = simplify_expr(unlet(S, d), NULL);
	if (!ir_uses_var(d, S->v))
		return false;
	IrExpr *d0 = simplify_expr(ir_substitute(d, S->v, ir_i64c(0)), NULL);
	IrExpr *d1 = simplify_expr(ir_substitute(d, S->v, ir_i64c(1)), NULL);
	int64_t c;
	if (!ir_is_const(simplify_expr(ir_sub(d1, d0), NULL), &c) || c == 0 ||
	    c > INT32_MAX || c < -INT32_MAX)
		return false;
	/* d = c*v + d0 exactly, if d0 no longer mentions v */
	if (ir_uses_var(d0, S->v))
		return false;
	IrExpr *check = simplify_expr(ir_sub(d, ir_add(ir_mul(ir_var(S->v), ir_i64c(c)), d0)), NULL);
	int64_t z;
	if (!ir_is_const(check, &z) || z != 0)
		return false;
	IrExpr *rmin = bounds_of_expr(d0, S->inner).min;
	if (!rmin || ir_uses_var(rmin, S->v) || uses_inner(rmin, S->inner))
		return false;
	IrExpr *bound;
	if (c > 0)   /* v >= ceil(-rmin / c) */
		bound = simplify_expr(ir_div(ir_add(ir_unop(IR_NEG, rmin), ir_i64c(c - 1)),
		    ir_i64c(c)), NULL);
	else         /* v <= floor(rmin / -c) */
		bound = simplify_expr(ir_div(rmin, ir_i64c(-c)), NULL);
	IrExpr ***list = c > 0 ? &S->lo : &S->hi;
	int *n = c > 0 ? &S->nlo : &S->nhi, *cap = c > 0 ? &S->caplo : &S->caphi;
	out->side = c > 0 ? 1 : -1;
	/* exact when the bound is d0 itself: bounds_of_expr widens what it
	 * cannot track (f_1 % N + r >= 1 gives r >= 1, the worst case over
	 * f_1 % N, though at f_1 % N = 3 the conjunct holds at r = 0) */
	out->exact = !uses_inner(d0, S->inner) &&
	    ir_expr_equal(simplify_expr(rmin, NULL), d0);
	for (int i = 0; i < *n; i++)
		if (ir_expr_equal((*list)[i], bound)) {
			out->bound = (*list)[i];
			return true;
		}
	*ARENA_PUSH(ir_arena, *list, *n, *cap) = bound;
	out->bound = bound;
	return true;
}

static void
note(Solve *S, IrStmt *ifs, IrExpr *conj, bool ok, const Solved *how)
{
	for (int i = 0; i < S->nsol; i++)
		if (S->sol[i].ifs == ifs && S->sol[i].conj == conj) {
			Solved *o = &S->sol[i];
			o->ok &= ok;
			o->exact &= ok && o->bound == how->bound && o->side == how->side &&
			    how->exact;
			return;
		}
	Solved *n = ARENA_PUSH(ir_arena, S->sol, S->nsol, S->capsol);
	*n = *how;
	n->ifs = ifs;
	n->conj = conj;
	n->ok = ok;
	n->exact &= ok;
}

static void
solve_cond(Solve *S, IrStmt *ifs, IrExpr *c)
{
	if (c->kind == IR_AND) {
		solve_cond(S, ifs, c->a);
		solve_cond(S, ifs, c->b);
		return;
	}
	Solved how = { 0 };
	bool ok = solve_conj(S, c, &how);
	S->hot |= ok && S->depth > 0;
	note(S, ifs, c, ok, &how);
}

/* ---- selects in a stored value ------------------------------------------
 * A select on a scalar condition in a stored value: a boundary copy's
 * padded[...] = select(in range, x[...], 0), or a padding test inlined into
 * its consumer, y = y + select(in range, x[...], 0) * w.  Its condition
 * guards the store (Solved.ifs is the store): the steady state takes the
 * first value, a prologue or epilogue where the condition is known false
 * the second. */
static bool
is_guard_select(IrExpr *e)
{
	return e->kind == IR_SELECT && e->a->type.lanes == 1;
}

static void solve_cond(Solve *S, IrStmt *ifs, IrExpr *c);
static bool any_dropped(Solve *S, IrStmt *ifs, IrExpr *c);

typedef struct {
	IrVisitor v;
	Solve *S;
	IrStmt *store;
	bool solve;            /* solve each condition; else look for dropped ones */
	bool any;
} SelectVisit;

static void
visit_select(IrVisitor *v, IrExpr *e)
{
	SelectVisit *x = (SelectVisit *)v;
	if (is_guard_select(e)) {
		if (x->solve)
			solve_cond(x->S, x->store, e->a);
		else
			x->any |= any_dropped(x->S, x->store, e->a);
	}
	ir_visit_expr_children(v, e);
}

static const IrVisitor select_visit = { .expr = { [IR_SELECT] = visit_select } };

/* Solves the conditions of the store's selects (solve), or says whether
 * one of them has a conjunct that the steady state drops. */
static bool
store_selects(Solve *S, IrStmt *store, bool solve)
{
	SelectVisit x = { select_visit, S, store, solve, false };
	ir_visit_expr(&x.v, store->store.value);
	return x.any;
}

static IrExpr *drop_cond(Solve *S, IrStmt *ifs, IrExpr *c);
static bool any_false(Solve *S, IrStmt *ifs, IrExpr *c, int side);

typedef struct {
	IrMutator m;
	Solve *S;
	IrStmt *store;
	int side;              /* 0: the steady state; +1 / -1: below / above it */
} SelectMut;

static IrExpr *
mut_select(IrMutator *m, IrExpr *e)
{
	SelectMut *x = (SelectMut *)m;
	if (!is_guard_select(e))
		return ir_mutate_expr_children(m, e);
	if (x->side != 0 && any_false(x->S, x->store, e->a, x->side))
		return ir_mutate_expr(m, e->c);
	IrExpr *c = x->side != 0 ? e->a : drop_cond(x->S, x->store, e->a);
	IrExpr *t = ir_mutate_expr(m, e->b), *f = ir_mutate_expr(m, e->c);
	if (!c)
		return t;
	if (c == e->a && t == e->b && f == e->c)
		return e;
	return ir_select(c, t, f);
}

static const IrMutator select_mut = { .expr = { [IR_SELECT] = mut_select } };

/* The store with its selects resolved for the steady state (side 0) or
 * outside it (side +1 or -1). */
static IrStmt *
resolve_selects(Solve *S, IrStmt *s, int side)
{
	SelectMut x = { select_mut, S, s, side };
	IrExpr *v = ir_mutate_expr(&x.m, s->store.value);
	if (v == s->store.value)
		return s;
	IrStmt *r = ir_store(s->store.buf, s->store.idx, s->store.nidx, v, s->store.pred);
	r->loc = s->loc;
	return r;
}

/* An upper bound of e that does not use v: e itself, or for min(a, b)
 * one of them (or the min of both); NULL if there is none. */
static IrExpr *
free_max(IrExpr *e, Var *v)
{
	if (!ir_uses_var(e, v))
		return e;
	if (e->kind != IR_MIN)
		return NULL;
	IrExpr *a = free_max(e->a, v), *b = free_max(e->b, v);
	return a && b ? ir_min(a, b) : a ? a : b;
}

/* Walks the loop body: inner loop ranges and lets in scope, guards solved. */
static void
collect(Solve *S, IrStmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_FOR: {
		BoundsScope *saved = S->inner;
		bool vec = S->in_vector;
		int nlets = S->nlets;
		IrExpr *min = unlet(S, s->loop.min), *ub;
		if (S->selects && ir_uses_var(min, S->v) &&
		    (ub = free_max(unlet(S, s->loop.extent), S->v))) {
			/* a loop that starts at v's tile, (q, qo*8, 8): q is
			 * qo*8 + an offset in [0, 7], so that its guards are
			 * linear in v with the offset at its worst */
			Var *off = ir_new_var(s->loop.var->name, ir_i64);
			ARENA_PUSH(ir_arena, S->lets, S->nlets, S->caplets);
			S->lets[nlets].var = s->loop.var;
			S->lets[nlets].value = ir_add(min, ir_var(off));
			S->inner = bounds_push(S->inner, off,
			    (Interval){ir_i64c(0), ir_sub(ub, ir_i64c(1))});
		} else {
			IrExpr *max = ir_sub(ir_add(s->loop.min, s->loop.extent), ir_i64c(1));
			S->inner = bounds_push(S->inner, s->loop.var, (Interval){min, unlet(S, max)});
		}
		S->in_vector |= s->loop.fk == FOR_VECTORIZED;
		bool repeats = s->loop.fk != FOR_VECTORIZED;
		S->depth += repeats;
		S->loops |= repeats;
		collect(S, s->loop.body);
		S->depth -= repeats;
		S->inner = saved;
		S->in_vector = vec;
		S->nlets = nlets;
		return;
	}
	case IS_LET: {
		int n = S->nlets;
		IrExpr *value = unlet(S, s->let.value);
		ARENA_PUSH(ir_arena, S->lets, S->nlets, S->caplets);
		S->lets[n].var = s->let.var;
		S->lets[n].value = value;
		collect(S, s->let.body);
		S->nlets = n;
		return;
	}
	case IS_IF:
		if (s->ifs.cond->type.lanes == 1)
			solve_cond(S, s, s->ifs.cond);
		collect(S, s->ifs.then_s);
		collect(S, s->ifs.else_s);
		return;
	case IS_STORE:
		if (S->selects)
			store_selects(S, s, true);
		else if (is_guard_select(s->store.value))
			solve_cond(S, s, s->store.value->a);
		return;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			collect(S, s->block.stmts[i]);
		return;
	case IS_ALLOCATE:
		collect(S, s->alloc.body);
		return;
	case IS_PRODUCE:
		collect(S, s->produce.body);
		return;
	default:
		return;
	}
}

/* ---- the steady state: solved conjuncts dropped ------------------------- */

typedef struct {
	IrMutator m;
	Solve *S;
} Drop;

static bool
dropped(Solve *S, IrStmt *ifs, IrExpr *conj)
{
	for (int i = 0; i < S->nsol; i++)
		if (S->sol[i].ifs == ifs && S->sol[i].conj == conj)
			return S->sol[i].ok;
	return false;
}

static IrExpr *
drop_cond(Solve *S, IrStmt *ifs, IrExpr *c)
{
	if (c->kind == IR_AND) {
		IrExpr *a = drop_cond(S, ifs, c->a), *b = drop_cond(S, ifs, c->b);
		if (!a || !b)
			return a ? a : b;
		return a == c->a && b == c->b ? c : ir_binop(IR_AND, a, b);
	}
	return dropped(S, ifs, c) ? NULL : c;
}

static IrStmt *
drop_if(IrMutator *m, IrStmt *s)
{
	Solve *S = ((Drop *)m)->S;
	IrExpr *c = drop_cond(S, s, s->ifs.cond);
	IrStmt *t = ir_mutate_stmt(m, s->ifs.then_s);
	IrStmt *f = s->ifs.else_s ? ir_mutate_stmt(m, s->ifs.else_s) : NULL;
	if (!c)
		return t;
	if (c == s->ifs.cond && t == s->ifs.then_s && f == s->ifs.else_s)
		return s;
	if (!t && !f)
		return NULL;
	IrStmt *r = t ? ir_if(c, t, f) : ir_if(ir_unop(IR_NOT, c), f, NULL);
	r->loc = s->loc;
	return r;
}

static IrStmt *
drop_store(IrMutator *m, IrStmt *s)
{
	return resolve_selects(((Drop *)m)->S, s, 0);
}

static const IrMutator drop_table = {
	.stmt = { [IS_IF] = drop_if, [IS_STORE] = drop_store },
};

/* ---- the prologue and epilogue: conjuncts known false ------------------- */

/* Below the steady range (side +1) or above it (side -1), a conjunct that
 * is exact (Solved.exact) and the only bound on its side fails at every
 * iteration: v < lo = max(min, lo1) clamped to end means v < lo1, and
 * v >= hi = max(min(end, hi1 + 1), lo) with v < end means v > hi1.  With
 * two bounds on a side either may be the one that fails. */
static bool
one_bound(Solve *S, int side)
{
	return (side > 0 ? S->nlo : S->nhi) == 1;
}

static bool
known_false(Solve *S, IrStmt *ifs, IrExpr *conj, int side)
{
	for (int i = 0; i < S->nsol; i++)
		if (S->sol[i].ifs == ifs && S->sol[i].conj == conj)
			return S->sol[i].ok && S->sol[i].exact && S->sol[i].side == side;
	return false;
}

static bool
any_false(Solve *S, IrStmt *ifs, IrExpr *c, int side)
{
	if (c->kind == IR_AND)
		return any_false(S, ifs, c->a, side) || any_false(S, ifs, c->b, side);
	return known_false(S, ifs, c, side);
}

typedef struct {
	IrMutator m;
	Solve *S;
	int side;
} Falsify;

static IrStmt *
false_if(IrMutator *m, IrStmt *s)
{
	Falsify *F = (Falsify *)m;
	if (s->ifs.cond->type.lanes == 1 && any_false(F->S, s, s->ifs.cond, F->side))
		return s->ifs.else_s ? ir_mutate_stmt(m, s->ifs.else_s) : NULL;
	return ir_mutate_stmt_children(m, s);
}

/* a boundary copy outside its range stores the select's other value */
static IrStmt *
false_store(IrMutator *m, IrStmt *s)
{
	Falsify *F = (Falsify *)m;
	return resolve_selects(F->S, s, F->side);
}

static const IrMutator false_table = {
	.stmt = { [IS_IF] = false_if, [IS_STORE] = false_store },
};

/* The body below (side +1) or above (side -1) the steady range. */
static IrStmt *
outside(Solve *S, IrStmt *body, int side)
{
	if (!one_bound(S, side))
		return body;
	Falsify F = { false_table, S, side };
	return ir_mutate_stmt(&F.m, body);
}

/* ---- unswitching the guarded statements only ---------------------------- */

static bool
any_dropped(Solve *S, IrStmt *ifs, IrExpr *c)
{
	if (c->kind == IR_AND)
		return any_dropped(S, ifs, c->a) || any_dropped(S, ifs, c->b);
	return dropped(S, ifs, c);
}

/* The one body of a loop, let, allocation or produce; NULL for others. */
static IrStmt *
body_of(IrStmt *s)
{
	switch (s->kind) {
	case IS_FOR: return s->loop.body;
	case IS_LET: return s->let.body;
	case IS_ALLOCATE: return s->alloc.body;
	case IS_PRODUCE: return s->produce.body;
	default: return NULL;
	}
}

/* Whether s holds a guard solved for the loop (that the steady state drops). */
static bool
guarded(Solve *S, IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_IF:
		if (s->ifs.cond->type.lanes == 1 && any_dropped(S, s, s->ifs.cond))
			return true;
		return guarded(S, s->ifs.then_s) || guarded(S, s->ifs.else_s);
	case IS_STORE:
		return store_selects(S, s, false);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (guarded(S, s->block.stmts[i]))
				return true;
		return false;
	default:
		return body_of(s) && guarded(S, body_of(s));
	}
}

/* Whether s has a loop that repeats and holds no solved guard: code that a
 * split of the loop would copy for nothing. */
static bool
shares_loop(Solve *S, IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_FOR:
		if (s->loop.fk != FOR_VECTORIZED && !guarded(S, s))
			return true;
		return shares_loop(S, s->loop.body);
	case IS_IF:
		return shares_loop(S, s->ifs.then_s) || shares_loop(S, s->ifs.else_s);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (shares_loop(S, s->block.stmts[i]))
				return true;
		return false;
	default:
		return body_of(s) && shares_loop(S, body_of(s));
	}
}

/* An If unswitch() made: the pass partitions its steady branch with the
 * loop variable in the steady range, and leaves the other (the guarded
 * original, short) alone. */
typedef struct {
	IrStmt *ifs;
	Var *v;
	Interval steady;
} Unswitched;

typedef struct {
	Solve *S;
	IrExpr *cond;          /* the loop variable in its steady range */
	Interval steady;
	Unswitched **list; int *n, *cap;
} Place;

static IrStmt *
with_body(IrStmt *s, IrStmt *body)
{
	IrStmt *r = arena_alloc(ir_arena, sizeof *r);
	*r = *s;
	switch (s->kind) {
	case IS_FOR: r->loop.body = body; break;
	case IS_LET: r->let.body = body; break;
	case IS_ALLOCATE: r->alloc.body = body; break;
	case IS_PRODUCE: r->produce.body = body; break;
	default: ICE("with_body: statement kind %d", (int)s->kind);
	}
	return r;
}

/* s with each smallest statement that holds the solved guards and no loop
 * worth sharing replaced by if (steady) { it, guards dropped } else { it }:
 * the If sinks through blocks, allocations, lets and loops whose other
 * parts it would otherwise copy. */
static IrStmt *
unswitch(Place *pl, IrStmt *s)
{
	if (!s || !guarded(pl->S, s))
		return s;
	if (s->kind == IS_BLOCK) {
		IrStmt **out = arena_alloc(ir_arena, s->block.n * sizeof *out);
		for (int i = 0; i < s->block.n; i++)
			out[i] = unswitch(pl, s->block.stmts[i]);
		return ir_block(out, s->block.n);
	}
	IrStmt *b = body_of(s);
	if (b && (s->kind != IS_FOR || shares_loop(pl->S, b)))
		return with_body(s, unswitch(pl, b));
	Drop D = { drop_table, pl->S };
	IrStmt *steady = ir_mutate_stmt(&D.m, s);
	IrStmt *r = steady ? ir_if(pl->cond, steady, s) : ir_if(ir_unop(IR_NOT, pl->cond), s, NULL);
	r->loc = s->loc;
	if (steady) {
		Unswitched *u = ARENA_PUSH(ir_arena, *pl->list, *pl->n, *pl->cap);
		u->ifs = r;
		u->v = pl->S->v;
		u->steady = pl->steady;
	}
	return r;
}

/* ---- the pass ----------------------------------------------------------- */

typedef struct {
	IrMutator m;
	BoundsScope *scope;    /* enclosing loops */
	Unswitched *unsw; int nunsw, capunsw;
} Part;

static bool
partitionable(ForKind fk)
{
	return fk == FOR_SERIAL || fk == FOR_PARALLEL;
}

static IrExpr *
fold(Part *P, IrExpr *e)
{
	return simplify_expr(e, P->scope);
}

static IrStmt *
loop(Var *v, IrExpr *min, IrExpr *end, IrStmt *like, ForKind fk, IrStmt *body)
{
	IrStmt *r = ir_for(v, min, simplify_expr(ir_sub(end, min), NULL), fk, body);
	r->loop.gpu_dim = like->loop.gpu_dim;
	r->loop.partition = like->loop.partition;
	r->loc = like->loc;
	return r;
}

/* Binds e to a fresh variable around body unless it is simple. */
static IrStmt *
bind(IrExpr **e, const char *name, IrStmt *(*make)(void *), void *ctx)
{
	if ((*e)->kind == IR_INT || (*e)->kind == IR_VAR)
		return make(ctx);
	IrExpr *value = *e;
	Var *x = ir_new_var(name, ir_i64);
	*e = ir_var(x);
	return ir_let_stmt(x, value, make(ctx));
}

typedef struct {
	IrStmt *s;
	IrExpr *min, *end, *lo, *hi;
	bool pro, epi;         /* the prologue / epilogue may run */
	IrStmt *steady;
	Part *P;               /* unswitching: the pass (else NULL) */
	Solve *S;
} Split;

static IrStmt *
make_loops(void *ctx)
{
	Split *sp = ctx;
	IrStmt *s = sp->s;
	if (sp->P) {
		/* one loop; its guarded statements test the steady range */
		IrExpr *v = ir_var(s->loop.var), *c = NULL;
		if (sp->pro)
			c = ir_binop(IR_GE, v, sp->lo);
		if (sp->epi) {
			IrExpr *h = ir_binop(IR_LT, v, sp->hi);
			c = c ? ir_binop(IR_AND, c, h) : h;
		}
		Place pl = { sp->S, c, { sp->lo, ir_sub(sp->hi, ir_i64c(1)) },
		    &sp->P->unsw, &sp->P->nunsw, &sp->P->capunsw };
		IrStmt *body;
		if (!c) {
			Drop D = { drop_table, sp->S };
			body = ir_mutate_stmt(&D.m, s->loop.body);
		} else {
			body = unswitch(&pl, s->loop.body);
		}
		BoundsScope *outer = sp->P->scope;
		sp->P->scope = bounds_push(outer, s->loop.var,
		    (Interval){sp->min, simplify_expr(ir_sub(sp->end, ir_i64c(1)), NULL)});
		body = body ? ir_mutate_stmt(&sp->P->m, body) : NULL;
		sp->P->scope = outer;
		if (!body)
			return NULL;
		return ir_for_like(s, s->loop.min, s->loop.extent, body);
	}
	/* The prologue and epilogue of a parallel loop run on the calling
	 * thread: they are a boundary's few rows or a tile's tail, and as
	 * parallel loops each was a closure of its own to compile (a padded
	 * copy's last row cost 3% of the bench conv3x3's compile time). */
	ForKind fk = s->loop.fk, edge = fk == FOR_PARALLEL ? FOR_SERIAL : fk;
	IrStmt *parts[3] = { NULL, NULL, NULL }, *b;
	if (sp->pro && (b = outside(sp->S, s->loop.body, 1)))
		parts[0] = loop(s->loop.var, sp->min, sp->lo, s, edge, b);
	if (sp->steady)
		parts[1] = loop(s->loop.var, sp->lo, sp->hi, s, fk, sp->steady);
	if (sp->epi && (b = outside(sp->S, s->loop.body, -1)))
		parts[2] = loop(s->loop.var, sp->hi, sp->end, s, edge, b);
	return ir_block(parts, 3);
}

static IrStmt *
bind_hi(void *ctx)
{
	Split *sp = ctx;
	const char *name = arena_printf(ir_arena, "%s_e", sp->s->loop.var->name);
	return bind(&sp->hi, name, make_loops, sp);
}

static IrStmt *
part_for(IrMutator *m, IrStmt *s)
{
	Part *P = (Part *)m;
	BoundsScope *outer = P->scope;
	if (s->loop.fk == FOR_VECTORIZED)
		return s;
	IrExpr *min = s->loop.min, *end = fold(P, ir_add(s->loop.min, s->loop.extent));
	IrExpr *max = fold(P, ir_sub(end, ir_i64c(1)));
	BoundsScope *in = bounds_push(outer, s->loop.var, (Interval){min, max});
	if (!partitionable(s->loop.fk) || min->type.code != TY_I64) {
		P->scope = in;
		IrStmt *body = ir_mutate_stmt(m, s->loop.body);
		P->scope = outer;
		if (body == s->loop.body)
			return s;
		if (!body)
			return NULL;
		return ir_for_like(s, s->loop.min, s->loop.extent, body);
	}
	Solve S = { .v = s->loop.var, .selects = s->loop.partition };
	collect(&S, s->loop.body);
	bool any = false;
	for (int i = 0; i < S.nsol; i++)
		any |= S.sol[i].ok;
	/* worth a second copy of the body: a guard that inner loops repeat, or
	 * a body that is little more than the guarded code (no loops of its own) */
	if (!any || (!S.hot && S.loops)) {
		P->scope = in;
		IrStmt *body = ir_mutate_stmt(m, s->loop.body);
		P->scope = outer;
		if (body == s->loop.body)
			return s;
		if (!body)
			return NULL;
		return ir_for_like(s, s->loop.min, s->loop.extent, body);
	}
	/* the steady range [lo, hi), clamped into [min, end] with lo <= hi.
	 * With no lower bound (a tile's tail guard bounds v from above only)
	 * it starts at min and there is no prologue, with no upper bound it
	 * runs to end and there is no epilogue: clamped, min(min, end) - min
	 * and end - max(end, lo) do not fold to 0, and the empty copy cost its
	 * compile time (every packing loop of the tuned matmul had one). */
	IrExpr *lo = min, *hi = end;
	for (int i = 0; i < S.nlo; i++)
		lo = ir_max(lo, S.lo[i]);
	for (int i = 0; i < S.nhi; i++)
		hi = ir_min(hi, ir_add(S.hi[i], ir_i64c(1)));
	if (S.nlo > 0)
		lo = fold(P, ir_min(lo, end));
	if (S.nhi > 0)
		hi = fold(P, ir_max(hi, lo));

	int64_t a, b;
	if (shares_loop(&S, s->loop.body)) {
		Split sp = { s, min, end, lo, hi, true, true, NULL, P, &S };
		sp.pro = !ir_is_const(fold(P, ir_sub(lo, min)), &a) || a != 0;
		sp.epi = !ir_is_const(fold(P, ir_sub(end, hi)), &b) || b != 0;
		const char *name = arena_printf(ir_arena, "%s_s", s->loop.var->name);
		return bind(&sp.lo, name, bind_hi, &sp);
	}
	Drop D = { drop_table, &S };
	IrStmt *steady = ir_mutate_stmt(&D.m, s->loop.body);
	/* inside the steady state, v ranges over [lo, hi) */
	P->scope = bounds_push(outer, s->loop.var, (Interval){lo, fold(P, ir_sub(hi, ir_i64c(1)))});
	steady = steady ? ir_mutate_stmt(m, steady) : NULL;
	P->scope = outer;

	Split sp = { s, min, end, lo, hi, true, true, steady, NULL, &S };
	sp.pro = !ir_is_const(fold(P, ir_sub(lo, min)), &a) || a != 0;
	sp.epi = !ir_is_const(fold(P, ir_sub(end, hi)), &b) || b != 0;
	const char *name = arena_printf(ir_arena, "%s_s", s->loop.var->name);
	return bind(&sp.lo, name, bind_hi, &sp);
}

static IrStmt *
part_let(IrMutator *m, IrStmt *s)
{
	Part *P = (Part *)m;
	BoundsScope *outer = P->scope;
	if (ir_is_int(s->let.value->type) && s->let.value->type.lanes == 1)
		P->scope = bounds_push(outer, s->let.var, bounds_of_expr(s->let.value, outer));
	IrStmt *body = ir_mutate_stmt(m, s->let.body);
	P->scope = outer;
	if (body == s->let.body)
		return s;
	if (!body)
		return NULL;
	IrStmt *r = ir_let_stmt(s->let.var, s->let.value, body);
	r->loc = s->loc;
	return r;
}

/* What an entry-point assert guarantees to the statements after it: the
 * sizes' `M >= 0` and -D's `M == 1024` put M in scope with that range. */
static BoundsScope *
assume(BoundsScope *scope, IrExpr *c)
{
	int64_t k;
	if (c->kind == IR_AND)
		return assume(assume(scope, c->a), c->b);
	if ((c->kind == IR_GE || c->kind == IR_EQ) && c->a->kind == IR_VAR &&
	    ir_is_const(c->b, &k) && c->a->type.code == TY_I64 && !bounds_lookup(scope, c->a->var))
		return bounds_push(scope, c->a->var,
		    (Interval){c->b, c->kind == IR_EQ ? c->b : NULL});
	return bounds_refine(scope, c);
}

static IrStmt *
part_block(IrMutator *m, IrStmt *s)
{
	Part *P = (Part *)m;
	BoundsScope *outer = P->scope;
	IrStmt **out = arena_alloc(ir_arena, s->block.n * sizeof *out);
	bool changed = false;
	for (int i = 0; i < s->block.n; i++) {
		IrStmt *c = s->block.stmts[i];
		out[i] = ir_mutate_stmt(m, c);
		changed |= out[i] != c;
		if (c->kind == IS_ASSERT)
			P->scope = assume(P->scope, c->assrt.cond);
	}
	P->scope = outer;
	return changed ? ir_block(out, s->block.n) : s;
}

/* An unswitched If: its steady branch is partitioned with the loop
 * variable in the steady range; the guarded branch stays as it is. */
static IrStmt *
part_if(IrMutator *m, IrStmt *s)
{
	Part *P = (Part *)m;
	for (int i = 0; i < P->nunsw; i++) {
		Unswitched *u = &P->unsw[i];
		if (u->ifs != s)
			continue;
		BoundsScope *outer = P->scope;
		P->scope = bounds_push(outer, u->v, u->steady);
		IrStmt *t = ir_mutate_stmt(m, s->ifs.then_s);
		P->scope = outer;
		if (t == s->ifs.then_s)
			return s;
		IrStmt *r = t ? ir_if(s->ifs.cond, t, s->ifs.else_s)
		    : ir_if(ir_unop(IR_NOT, s->ifs.cond), s->ifs.else_s, NULL);
		r->loc = s->loc;
		return r;
	}
	return ir_mutate_stmt_children(m, s);
}

static const IrMutator part_table = {
	.stmt = { [IS_FOR] = part_for, [IS_LET] = part_let, [IS_BLOCK] = part_block,
	    [IS_IF] = part_if },
};

IrStmt *
partition_loops(IrStmt *s)
{
	if (!ir_arena)
		ir_arena = arena_new();
	Part P = { part_table, NULL, NULL, 0, 0 };
	return ir_mutate_stmt(&P.m, s);
}
