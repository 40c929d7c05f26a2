/* sliding.c: the sliding window (Halide's): a stage stored outside the
 * loop it is computed in computes, in each iteration after the first, only
 * the part of its region that the iterations before have not stored.
 *
 *     f.store_at(g, yo); f.compute_at(g, yi);      g reads f[y .. y + 2]
 *
 * computes rows y .. y + 2 of f at yi = 0, then only row y + 2: each row
 * once, where the plain rule (bounds_infer.c) computes each three times.
 * The region of one dimension of f, [min(v), end(v)) in the compute loop
 * v, becomes [v > v0 ? max(min(v), end(v - 1)) : min(v), end(v)).  That
 * holds when min and end never decrease as v steps (proved), the other
 * dimensions do not depend on v, v and every loop between the store and
 * compute levels (at root: up the stages c is computed in) run in order,
 * serial or unrolled, every iteration computes f (no guard), and f is a
 * pure stage (no reduction, update or scan) whose sliding dimension is one
 * serial loop of its own.  Elsewhere the region stays as it was, which is
 * always correct.  CPU target only.  storage_fold.c then shrinks the
 * buffer. */
#include <string.h>

#include "lower/lower.h"

/* The compute loop of s as (stage, leaf), when the buffer lives outside it. */
static bool
levels(LStage *s, LStage **c, int *leaf)
{
	if (s->compute.kind != LEVEL_AT || !s->store_set)
		return false;
	*c = s->compute.stage;
	*leaf = s->compute.leaf;
	if (s->store.kind == LEVEL_ROOT)
		return true;
	return s->store.kind == LEVEL_AT && s->store.stage == *c && s->store.leaf < *leaf;
}

/* Whether every loop from the buffer's level down to the compute loop
 * (leaf of c) runs in order on one thread: serial or unrolled.  At root
 * that includes the loops of the stages c is computed in (a parallel loop
 * there would have two threads share, and race on, a folded ring). */
static bool
in_order(LStage *s, LStage *c, int leaf)
{
	int from = s->store.kind == LEVEL_AT ? s->store.leaf + 1 : 0;
	for (int depth = 0; c && depth < 64; depth++) {
		for (int i = from; i <= leaf && i < c->nleaves; i++) {
			ForKind fk = c->axes[c->leaves[i]].fk;
			if (fk != FOR_SERIAL && fk != FOR_UNROLLED)
				return false;
		}
		if (s->store.kind == LEVEL_AT || c->compute.kind != LEVEL_AT)
			return true;
		leaf = c->compute.leaf;
		c = c->compute.stage;
		from = 0;
	}
	return false;
}

/* Whether another stage is computed or stored at one of s's loops, or
 * fused with it. */
static bool
attached_to(Lower *L, LStage *s)
{
	for (int i = 0; i < L->nstages; i++) {
		LStage *p = L->stages[i];
		if ((p->compute.kind == LEVEL_AT && p->compute.stage == s) ||
		    (p->store_set && p->store.kind == LEVEL_AT && p->store.stage == s) ||
		    p->with == s)
			return true;
	}
	return s->with != NULL;
}

static bool
tensorized(Lower *L, LStage *s)
{
	for (int i = 0; i < L->ntz; i++)
		if (L->tz[i].s == s)
			return true;
	return false;
}

/* The first value of loop `leaf` of c. */
static IrExpr *
loop_start(LStage *c, int leaf)
{
	int ax = c->leaves[leaf];
	return ax < c->ndims ? c->dmin[ax] : ir_i64c(0);
}

/* The root dimension d of s as one plain loop: a leaf of its own, serial. */
static bool
plain_leaf(LStage *s, int d)
{
	return s->axes[d].leaf && s->axes[d].fk == FOR_SERIAL;
}

/* Whether e never decreases as v grows, by its form: sums, products by
 * constants >= 0, min, max and floor divisions by positive constants of
 * such terms (a clamp to the edge, min(max(y - 1, 0), H - 1), is one). */
static bool
nondecreasing(IrExpr *e, Var *v)
{
	int64_t c;
	if (!ir_uses_var(e, v))
		return true;
	switch (e->kind) {
	case IR_VAR: return e->var == v;
	case IR_CAST: return ir_is_int(e->type) && nondecreasing(e->a, v);
	case IR_ADD: case IR_MIN: case IR_MAX:
		return nondecreasing(e->a, v) && nondecreasing(e->b, v);
	case IR_SUB: return nondecreasing(e->a, v) && !ir_uses_var(e->b, v);
	case IR_MUL:
		return (ir_is_const(e->b, &c) && c >= 0 && nondecreasing(e->a, v)) ||
		    (ir_is_const(e->a, &c) && c >= 0 && nondecreasing(e->b, v));
	case IR_DIV: return ir_is_const(e->b, &c) && c > 0 && nondecreasing(e->a, v);
	default: return false;
	}
}

/* a <= b where b is a with v one step further (proved, or by form) */
static bool
steps_up(Lower *L, IrExpr *a_prev, IrExpr *a, Var *v)
{
	return lin_prove_le(a_prev, a, L->ranges) || nondecreasing(a, v);
}

static void
slide(Lower *L, LStage *s)
{
	LStage *c;
	int leaf;
	if (s->input || s->output || s->red || s->upd || s->scan || s->guard || !s->bounded ||
	    !levels(s, &c, &leaf) || attached_to(L, s) || tensorized(L, s))
		return;
	Axis *va = &c->axes[c->leaves[leaf]];
	if (!in_order(s, c, leaf))
		return;
	Var *v = va->var;
	int dim = -1;
	for (int d = 0; d < s->ndims; d++) {
		if (!ir_uses_var(s->dmin[d], v) && !ir_uses_var(s->dext[d], v))
			continue;
		if (dim >= 0)
			return;          /* the region moves in two dimensions */
		dim = d;
	}
	if (dim < 0 || !plain_leaf(s, dim))
		return;
	IrExpr *mn = s->dmin[dim];
	/* the end as bound inference found it (dmax + 1: a clamp keeps its
	 * form there, where min + extent is a tangle of mins and maxes) */
	IrExpr *end = lin_normalize(ir_add(s->dmax[dim] ? s->dmax[dim] :
	    ir_sub(ir_add(mn, s->dext[dim]), ir_i64c(1)), ir_i64c(1)));
	IrExpr *prev = lin_normalize(ir_sub(ir_var(v), ir_i64c(1)));
	IrExpr *mn_prev = ir_substitute(mn, v, prev), *end_prev = ir_substitute(end, v, prev);
	if (!steps_up(L, mn_prev, mn, v) || !steps_up(L, end_prev, end, v))
		return;
	IrExpr *later = ir_binop(IR_GT, ir_var(v), loop_start(c, leaf));
	IrExpr *from_later = lin_max(mn, end_prev, L->ranges);
	/* the rows one iteration reads, for storage_fold.c: the extent, or
	 * max - min + 1 where that has the simpler constant bound */
	int64_t w1, w2;
	IrExpr *w = lin_normalize(ir_add(ir_sub(s->dmax[dim] ? s->dmax[dim] : end, mn), ir_i64c(1)));
	bool k1 = bounds_const_max(s->dext[dim], &w1), k2 = bounds_const_max(w, &w2);
	s->slide_window = k1 && (!k2 || w1 <= w2) ? s->dext[dim] : w;
	s->dmin[dim] = ir_select(later, from_later, mn);
	s->dext[dim] = ir_select(later, lin_normalize(ir_sub(end, from_later)), s->dext[dim]);
	s->dmax[dim] = lin_normalize(ir_sub(end, ir_i64c(1)));
	s->slide_dim = dim;
	s->slide_var = v;
	axes_extents(s);
}

void
sliding_window(Lower *L)
{
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	for (int i = 0; i < L->nstages; i++)
		L->stages[i]->slide_dim = -1;
	if (strcmp(target, "cpu"))
		return;
	for (int i = 0; i < L->nstages; i++)
		slide(L, L->stages[i]);
}
