/* sched_finish.c: what follows the schedule primitives (sched.c): it
 * resolves compute_at/store_at loops in the final nests, inlines
 * compute_inline stages into their consumers, and checks what needs the
 * whole schedule (every use enclosed, no parallel loop between a buffer's
 * storage and its computation).
 */

#include "lower/lower.h"
#include "sema/sema.h"

bool
sched_consumes(LStage *c, LStage *p)
{
	return c != p && !c->input && sched_reads(c, p);
}

typedef struct { LStage *p; } InlineCtx;

/* The index arithmetic of an inlined value in normal form: a producer
 * indexed by a split consumer axis (Bp[j/16, k, j%16] of Bp[jb, k, jj] =
 * B[k, jb*16 + jj]) reads B[k, j], not B[k, j/16*16 + j%16], which the
 * vectorizer would otherwise turn into a gather. */
static IrExpr *
tidy_fn(IrExpr *e, void *ctx)
{
	bool cmp = e->kind >= IR_EQ && e->kind <= IR_GE;
	if (e->kind != IR_LOAD && !cmp)
		return NULL;
	IrExpr *x = arena_alloc(ir_arena, sizeof *x);
	*x = *e;
	if (cmp) {
		x->a = lin_normalize(stage_map(e->a, tidy_fn, ctx));
		x->b = lin_normalize(stage_map(e->b, tidy_fn, ctx));
		return x;
	}
	x->a = stage_map(e->a, tidy_fn, ctx);
	x->load.idx = arena_alloc(ir_arena, (e->load.nidx + 1) * sizeof *x->load.idx);
	for (int i = 0; i < e->load.nidx; i++)
		x->load.idx[i] = lin_normalize(stage_map(e->load.idx[i], tidy_fn, ctx));
	return x;
}

static IrExpr *
inline_fn(IrExpr *e, void *ctx)
{
	InlineCtx *ic = ctx;
	if (e->kind != IR_LOAD || e->load.buf != ic->p->buf)
		return NULL;
	IrExpr *v = ic->p->value;
	for (int d = 0; d < ic->p->ndims; d++)
		v = stage_subst(v, ic->p->axes[d].var, stage_map(e->load.idx[d], inline_fn, ctx));
	return stage_map(v, tidy_fn, NULL);
}

static bool
resolve_level(LStage *s, Level *lv, const char *what)
{
	(void)s;
	if (lv->kind != LEVEL_AT || !lv->stage)
		return true;
	LStage *t = lv->stage;
	lv->leaf = lv->axis ? stage_leaf(t, lv->axis) : -1;
	if (lv->leaf >= 0)
		return true;
	if (lv->axis && sched_poisoned(t->poison, t->npoison, lv->axis))
		return false;     /* the primitive that would have made it failed */
	bool gone = false;
	for (int i = 0; i < t->naxes; i++)
		gone |= t->axes[i].name == lv->axis;
	diag_error(lv->loc, "%s names loop '%s' of '%s', which %s its final loop nest; its loops "
	    "are %s", what, lv->axis ? lv->axis : "?", t->name,
	    gone ? "a later primitive replaced in" : "is not in", stage_leaf_list(t));
	return false;
}

/* Whether c reads p, directly or through other stages. */
bool
sched_depends(Lower *L, LStage *c, LStage *p, int depth)
{
	if (sched_consumes(c, p))
		return true;
	for (int i = 0; i < L->nstages && depth < 64; i++) {
		LStage *d = L->stages[i];
		if (d != c && d != p && !d->input && sched_consumes(c, d) && sched_depends(L, d, p, depth + 1))
			return true;
	}
	return false;
}

static const char *
where_computed(LStage *d)
{
	if (d->compute.kind != LEVEL_AT)
		return "and is computed at root";
	LStage *t = d->compute.stage;
	return arena_printf(ir_arena, "and is computed at loop '%s' of '%s'",
	    t->axes[t->leaves[d->compute.leaf]].name, t->name);
}

/* Whether s is computed inside loop `leaf` of t (or deeper). */
static bool
nested_in(LStage *s, LStage *t, int leaf)
{
	for (int guard = 0; s && guard < 64; guard++) {
		if (s == t)
			return true;
		if (s->compute.kind != LEVEL_AT)
			return false;
		if (s->compute.stage == t)
			return s->compute.leaf >= leaf;
		s = s->compute.stage;
	}
	return false;
}

bool
sched_finish(Lower *L)
{
	int before = diag_errors();
	/* inline in compute order: a stage's value is complete before use */
	for (int i = 0; i < L->nstages; i++) {
		LStage *p = L->stages[i];
		if (p->compute.kind != LEVEL_INLINE)
			continue;
		InlineCtx ic = { p };
		for (int j = i + 1; j < L->nstages; j++) {
			LStage *c = L->stages[j];
			c->value = stage_map(c->value, inline_fn, &ic);
			c->rbody = stage_map(c->rbody, inline_fn, &ic);
			c->rpred = stage_map(c->rpred, inline_fn, &ic);
			c->uval = stage_map(c->uval, inline_fn, &ic);
			c->upred = stage_map(c->upred, inline_fn, &ic);
			for (int d = 0; c->uidx && d < c->ndims; d++)
				c->uidx[d] = stage_map(c->uidx[d], inline_fn, &ic);
		}
	}
	bool ok = true;
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		ok &= resolve_level(s, &s->compute, "compute_at");
		if (s->store_set)
			ok &= resolve_level(s, &s->store, "store_at");
	}
	if (!ok)
		return false;
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (s->compute.kind == LEVEL_AT) {
			LStage *t = s->compute.stage;
			int leaf = s->compute.leaf;
			if (t->compute.kind == LEVEL_INLINE) {
				diag_error(s->compute.loc, "'%s' is inlined, so '%s' cannot be computed "
				    "at its loops", t->name, s->name);
				continue;
			}
			bool used = sched_consumes(t, s);
			for (int j = 0; j < L->nstages && !used; j++)
				used = L->stages[j] != t && L->stages[j]->compute.kind != LEVEL_INLINE &&
				    sched_consumes(L->stages[j], s) && nested_in(L->stages[j], t, leaf);
			if (!used && !sched_depends(L, t, s, 0)) {
				diag_error(s->compute.loc, "'%s' does not use '%s', so '%s' cannot be "
				    "computed at its loops", t->name, s->name, s->name);
				continue;
			}
			/* any stage that reads s must run inside the loop (Halide's rule:
			 * a consumer of a consumer will do when the uses are enclosed) */
			for (int j = 0; j < L->nstages; j++) {
				LStage *d = L->stages[j];
				if (d == t || d->compute.kind == LEVEL_INLINE || !sched_consumes(d, s))
					continue;
				if (!nested_in(d, t, leaf)) {
					const char *ln = t->axes[t->leaves[leaf]].name;
					diag_error(s->compute.loc, "loop '%s' of '%s' does not enclose every "
					    "use of '%s': '%s' uses it %s", ln, t->name, s->name, d->name,
					    where_computed(d));
					/* a reduction or an output cannot be inlined: no such hint */
					if (sched_depends(L, t, d, 0))
						diag_note(s->compute.loc, "'%s' reads '%s' through '%s': compute "
						    "'%s' inside that loop first (%s.compute_at(%s, %s))%s",
						    t->name, s->name, d->name, d->name, d->name, t->name, ln,
						    d->nred == 0 && !d->output ? ", or inline it" : "");
					else
						diag_note(s->compute.loc, "compute '%s' at root, or at a loop that "
						    "encloses '%s' as well", s->name, d->name);
					break;
				}
			}
		}
		if (!s->store_set)
			continue;
		if (s->compute.kind != LEVEL_AT) {
			diag_error(s->store.loc, "store_at/store_root of '%s' needs compute_at: a stage "
			    "computed %s is stored there", s->name,
			    s->compute.kind == LEVEL_INLINE ? "inline is not" : "at root");
			continue;
		}
		LStage *t = s->compute.stage;
		int lo = -1;
		if (s->store.kind == LEVEL_AT) {
			if (s->store.stage != t || s->store.leaf > s->compute.leaf) {
				diag_error(s->store.loc, "store_at must name a loop that encloses the "
				    "compute_at loop ('%s' of '%s')",
				    t->axes[t->leaves[s->compute.leaf]].name, t->name);
				continue;
			}
			lo = s->store.leaf;
		}
		for (int l = lo + 1; l <= s->compute.leaf; l++)
			if (t->axes[t->leaves[l]].fk == FOR_PARALLEL) {
				diag_error(s->store.loc, "parallel loop '%s' of '%s' lies between the storage "
				    "and the computation of '%s'; its threads would share one buffer",
				    t->axes[t->leaves[l]].name, t->name, s->name);
				diag_note(t->axes[t->leaves[l]].fk_loc, "made parallel here");
				break;
			}
	}
	return diag_errors() == before;
}
