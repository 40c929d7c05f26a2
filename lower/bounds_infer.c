/* bounds_infer.c: the region of every stage; then its accesses checked.
 *
 * Like Halide's BoundsInference: consumers first (reverse compute order),
 * each stage's region is what its consumers need, taken from their
 * scheduled loop nests: at root, the union over every consumer's whole
 * domain; at a loop of its consumer (compute_at), what one iteration of
 * that loop needs, in terms of the enclosing loop variables; stages
 * computed inside that loop add what they need.  The allocation is the
 * region at the store level.  The regions size the buffers and the
 * producers' loops, shapes included when they are inferred.
 *
 * Then bounds_check.c proves every access to a tensor with a declared
 * shape inside it (bounds_check_stages), over the scopes this file gives
 * (bounds_infer_scope).
 */
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"

typedef struct {
	Lower *L;
	LStage *p;             /* the producer whose accesses are collected */
	VarRange *scope;
	IrExpr **lo, **hi;     /* per dimension of p; NULL until first use */
	bool *seen;
	bool bad;
	VarRange *facts;       /* where p is computed: unions of needs fold under it */
	/* scope is built when an access of p is first met (need_scope): most
	 * stages read nothing of most others, and a scope costs a walk down
	 * the ranges of every loop bounded so far */
	LStage *c;             /* whose loops, inside loop `leaf` */
	int leaf;
	VarRange *base;        /* the ranges around them */
	bool scoped;
	/* the stages computed at a loop of another, in compute order (region
	 * lists them once, not once per consumer) */
	LStage **at; int nat;
} Need;

/* ---- the scope of a question: which variables vary ------------------ */

/* Whether root axis `root` of c is split with tail=round_up (directly or
 * through the outer or inner axes of its splits): while L->rounding, a
 * stage computed inside c's blocks sees whole blocks of it. */
static bool
rounded_root(Lower *L, LStage *c, int root)
{
	if (!L->rounding)
		return false;
	for (int i = 0; i < c->nrels; i++) {
		Rel *r = &c->rels[i];
		if (r->fuse || !r->round_up)
			continue;
		int a = r->parent;
		for (bool up = true; up && a != root; ) {
			up = false;
			for (int j = 0; j < c->nrels; j++)
				if (!c->rels[j].fuse && (c->rels[j].outer == a || c->rels[j].inner == a)) {
					a = c->rels[j].parent;
					up = true;
					break;
				}
		}
		if (a == root)
			return true;
	}
	return false;
}

/* The variables of c that vary inside loop `leaf` (-1: all of c), with
 * c's root axes bounded by what its loops cover there.  A store level's
 * region holds every region computed inside it: while L->storing, whole
 * blocks count at c's root too (a stage stored at root and computed in a
 * rounded block writes the block's points past the end). */
static VarRange *
stage_scope_from(Lower *L, LStage *c, int leaf, VarRange *base)
{
	VarRange *r = base;
	for (int i = leaf + 1; i < c->nleaves; i++) {
		Axis *a = &c->axes[c->leaves[i]];
		VarRange *g = r;
		while (g && g->var != a->var)
			g = g->next;
		if (g)
			r = lin_push(r, a->var, g->lo, g->hi, true);
	}
	int nroots = c->ndims + c->nred;
	for (int k = 0; k < nroots; k++) {
		int ax = k < c->ndims ? k : c->rax[k - c->ndims];
		Axis *a = &c->axes[ax];
		IrExpr *dlo = c->dmin[k];
		IrExpr *dhi = c->dmax[k];
		if (a->leaf)
			continue;     /* its loop variable: pushed above if it varies */
		IrExpr *lo = dlo, *hi = dhi;
		if (leaf >= 0 && !a->tainted && !lin_varies(axes_root_value(c, ax), r)) {
			/* fixed in one iteration of the loop (i = f/M of a fused f):
			 * a symbol in [dlo, dhi]; lower.c replaces it by its value */
			r = lin_push(r, a->var, dlo, dhi, false);
			continue;
		}
		bool whole = rounded_root(L, c, ax);   /* the block, past the end */
		if (leaf >= 0 || (whole && L->storing)) {
			IrExpr *l, *h;
			if (lin_interval(axes_root_value(c, ax), r, NULL, &l, &h)) {
				lo = whole ? l : lin_max(l, dlo, r);
				hi = whole ? h : lin_min(h, dhi, r);
			}
		}
		r = lin_push(r, a->var, lo, hi, true);
	}
	return r;
}

/* stage_scope_from over the ranges of the loops bounded so far. */
VarRange *
bounds_infer_scope(Lower *L, LStage *c, int leaf)
{
	return stage_scope_from(L, c, leaf, L->ranges);
}

/* ---- collecting the accesses -------------------------------------- */

/* The variables that vary in n's question: c's loops inside `leaf`,
 * where c's loops run (facts.c).  Only with guards: a region that c's
 * facts narrow may hold points that p's own check, under p's weaker
 * facts, cannot place (the first run keeps every kernel that compiled
 * without facts as it was). */
static VarRange *
need_scope(Need *n)
{
	if (!n->scoped) {
		Lower *L = n->L;
		VarRange *cbase = facts_scope(L, n->base, L->guards ? n->c->ffloor : NULL);
		n->scope = stage_scope_from(L, n->c, n->leaf, cbase);
		n->scoped = true;
	}
	return n->scope;
}

/* e with its min and max folded where r decides them (min(0, N - 1) is 0
 * where N >= 1). */
static IrExpr *
fold_minmax(IrExpr *e, VarRange *r)
{
	if (!e || (e->kind != IR_MIN && e->kind != IR_MAX))
		return e;
	IrExpr *a = fold_minmax(e->a, r), *b = fold_minmax(e->b, r);
	return e->kind == IR_MIN ? lin_min(a, b, r) : lin_max(a, b, r);
}

static void
add_need(Need *n, int d, IrExpr *lo, IrExpr *hi)
{
	if (!lo || !hi) {
		n->bad = true;
		return;
	}
	VarRange *r = n->facts ? n->facts : n->L->ranges;
	if (!n->seen[d]) {
		n->lo[d] = fold_minmax(lo, r);
		n->hi[d] = fold_minmax(hi, r);
		n->seen[d] = true;
		return;
	}
	n->lo[d] = lin_min(n->lo[d], lo, r);
	n->hi[d] = lin_max(n->hi[d], hi, r);
}

/* lin_interval, and where the bounds still vary (a loop bounded by another
 * ranging loop: k in [0, i] for sum(k <= i) with i ranging too) the
 * bounds' own ranges, until only symbols are left. */
static bool
deep_interval(IrExpr *e, VarRange *r, Fact *f, IrExpr **lo, IrExpr **hi)
{
	if (!lin_interval(e, r, f, lo, hi))
		return false;
	for (int it = 0; it < 8 && *lo && *hi && (lin_varies(*lo, r) || lin_varies(*hi, r)); it++) {
		IrExpr *l1, *h1, *l2, *h2;
		if (!lin_interval(*lo, r, NULL, &l1, &h1) || !lin_interval(*hi, r, NULL, &l2, &h2))
			break;
		*lo = l1, *hi = h2;
	}
	return true;
}

/* A load of a buffer allocated inside the loops (a local or shared cache)
 * in an index: the region cannot follow its data (table[idx[i]] read
 * through a copy of idx: the copy is a different buffer in each
 * iteration), so it is a variable that ranges over every value (the clamp
 * around it gives the table's whole range). */
typedef struct {
	IrMutator m;
	VarRange *scope;
} CacheLoads;

static IrExpr *
unknown_cache_load(IrMutator *m, IrExpr *e)
{
	CacheLoads *c = (CacheLoads *)m;
	if (e->load.buf->scope != SCOPE_GLOBAL && e->type.lanes == 1) {
		Var *v = ir_new_var("data", e->type);
		c->scope = lin_push(c->scope, v, NULL, NULL, true);
		return ir_var(v);
	}
	return ir_mutate_expr_children(m, e);
}

static IrExpr *
without_cache_loads(IrExpr *e, VarRange **scope)
{
	CacheLoads c = { .m = {.expr = {[IR_LOAD] = unknown_cache_load}}, .scope = *scope };
	IrExpr *r = ir_mutate_expr(&c.m, e);
	*scope = c.scope;
	return r;
}

static void
walk(Need *n, IrExpr *e, Fact *f)
{
	if (!e)
		return;
	if (e->kind == IR_SELECT) {
		walk(n, e->a, f);
		walk(n, e->b, lin_facts(e->a, true, f));
		walk(n, e->c, lin_facts(e->a, false, f));
		return;
	}
	if (e->kind == IR_LOAD) {
		for (int d = 0; d < e->load.nidx; d++) {
			walk(n, e->load.idx[d], f);
			if (e->load.buf == n->p->buf) {
				IrExpr *lo, *hi;
				VarRange *sc = need_scope(n);
				IrExpr *ix = without_cache_loads(e->load.idx[d], &sc);
				if (!deep_interval(ix, sc, f, &lo, &hi) && !n->bad) {
					diag_error(e->load.idx[d]->loc.file ? e->load.idx[d]->loc : e->loc,
					    "cannot bound index '%s' of '%s': txc needs index expressions whose "
					    "range follows from the loops", stage_loc_text(e->load.idx[d]->loc),
					    n->p->name);
				}
				/* a loop bounded by another ranging loop (sum(k <= i), i ranging
				 * too): the bound's own range, until only symbols are left */
				for (int it = 0; it < 8 && lo && hi &&
				    (lin_varies(lo, n->scope) || lin_varies(hi, n->scope)); it++) {
					IrExpr *l1, *h1, *l2, *h2;
					if (!lin_interval(lo, n->scope, NULL, &l1, &h1) ||
					    !lin_interval(hi, n->scope, NULL, &l2, &h2))
						break;
					lo = l1, hi = h2;
				}
				add_need(n, d, lo, hi);
			}
		}
		walk(n, e->a, f);
		return;
	}
	walk(n, e->a, f);
	walk(n, e->b, f);
	walk(n, e->c, f);
	if (e->kind == IR_CALL)
		for (int i = 0; i < e->call.nargs; i++)
			walk(n, e->call.args[i], f);
}

/* The GPU thread loops around loop `leaf` of c (and around c's own compute
 * level, up the chain of compute_at) made to vary: a stage in shared
 * memory computed inside them is computed once for the whole block, so
 * its region covers every thread's (TVM's relaxation of thread loops for
 * shared storage).  gpu_spmd (target/cuda) then spreads its computation
 * over the threads. */
static VarRange *
relax_threads(Lower *L, LStage *c, int leaf, VarRange *r)
{
	LStage *chain[64];
	int cleaf[64], nchain = 0;
	for (int depth = 0; c && depth < 64; depth++) {
		for (int i = 0; i <= leaf && i < c->nleaves; i++) {
			Axis *a = &c->axes[c->leaves[i]];
			if (a->fk != FOR_GPU_THREAD)
				continue;
			VarRange *g = L->ranges;
			while (g && g->var != a->var)
				g = g->next;
			if (g)
				r = lin_push(r, a->var, g->lo, g->hi, true);
		}
		/* c's split or fused axes whose value depends on a thread id
		 * (min(io*16, N - 16) + ii, a shifted tail) vary with it */
		for (int k = 0; k < c->ndims + c->nred; k++) {
			int ax = k < c->ndims ? k : c->rax[k - c->ndims];
			if (c->axes[ax].leaf)
				continue;
			IrExpr *val = axes_root_value(c, ax), *lo, *hi;
			if (val && lin_varies(val, r) && lin_interval(val, r, NULL, &lo, &hi))
				r = lin_push(r, c->axes[ax].var, lo, hi, true);
		}
		chain[nchain] = c;
		cleaf[nchain++] = leaf;
		if (c->compute.kind != LEVEL_AT)
			break;
		leaf = c->compute.leaf;
		c = c->compute.stage;
	}
	/* then the loops of the chain whose bounds follow a thread id (a
	 * per-thread stage's own loops over its tile, at ty*4 + ri), outer
	 * stages first: they range over every thread's tile */
	for (int s = nchain - 1; s >= 0; s--)
		for (int i = 0; i <= cleaf[s] && i < chain[s]->nleaves; i++) {
			Axis *a = &chain[s]->axes[chain[s]->leaves[i]];
			if (a->fk == FOR_GPU_THREAD)
				continue;
			VarRange *g = r;
			while (g && g->var != a->var)
				g = g->next;
			IrExpr *lo, *hi, *lo2, *hi2;
			if (g && g->lo && g->hi && (lin_varies(g->lo, r) || lin_varies(g->hi, r)) &&
			    lin_interval(g->lo, r, NULL, &lo, &hi) &&
			    lin_interval(g->hi, r, NULL, &lo2, &hi2))
				r = lin_push(r, a->var, lo, hi2, true);
		}
	return r;
}

static void needs(Lower *L, LStage *p, LStage *c, int leaf, Need *out);

/* What c's own definition and the stages computed in its loop `leaf`
 * need of p, bounded over the loops inside `leaf`. */
static void
needs(Lower *L, LStage *p, LStage *c, int leaf, Need *out)
{
	if (!c->bounded)
		return;
	VarRange *base = L->ranges;
	bool relaxed = p->scope == SCOPE_SHARED && leaf >= 0;
	if (relaxed)   /* under c's own loops */
		base = relax_threads(L, c, leaf, base);
	Need n = { .L = L, .p = p, .facts = out->facts, .c = c, .leaf = leaf, .base = base,
	    .at = out->at, .nat = out->nat };
	n.lo = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *n.lo);
	n.hi = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *n.hi);
	n.seen = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *n.seen);
	walk(&n, c->value, NULL);
	walk(&n, c->rpred, NULL);
	walk(&n, c->rbody, lin_facts(c->rpred, true, NULL));
	if (c->upd) {     /* an update definition: its position, where, value */
		for (int d = 0; d < c->ndims; d++)
			walk(&n, c->uidx[d], NULL);
		walk(&n, c->upred, NULL);
		walk(&n, c->uval, lin_facts(c->upred, true, NULL));
	}
	for (int i = 0; i < out->nat; i++) {
		LStage *d = out->at[i];
		if (d == p || d->compute.stage != c || d->compute.leaf < leaf)
			continue;
		Need m = { .L = L, .p = p, .lo = n.lo, .hi = n.hi, .seen = n.seen, .facts = out->facts };
		Need dn = { .L = L, .p = p, .facts = out->facts, .at = out->at, .nat = out->nat };
		dn.lo = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *dn.lo);
		dn.hi = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *dn.hi);
		dn.seen = arena_alloc(ir_arena, (p->ndims + 1) * sizeof *dn.seen);
		needs(L, p, d, -1, &dn);
		VarRange *ds = NULL;
		for (int k = 0; k < p->ndims; k++) {
			if (!dn.seen[k])
				continue;
			IrExpr *l1, *h1, *l2, *h2;
			/* over c's loops inside leaf, where d runs (c's body may not) */
			if (!ds)
				ds = stage_scope_from(L, c, leaf, facts_scope(L, base, L->guards ? d->gfloor : NULL));
			deep_interval(dn.lo[k], ds, NULL, &l1, &h1);
			deep_interval(dn.hi[k], ds, NULL, &l2, &h2);
			add_need(&m, k, l1, h2);
		}
		n.bad |= dn.bad || m.bad;
	}
	for (int k = 0; k < p->ndims; k++)
		if (n.seen[k]) {
			if (relaxed && !n.bad) {
				/* the loops' bounds hold the relaxed thread ids: over them too;
				 * a region that still depends on the thread would be one
				 * thread's, in a buffer the whole block shares */
				IrExpr *l = NULL, *h = NULL, *l2 = NULL, *h2 = NULL;
				if (!n.lo[k] || !n.hi[k] || !lin_interval(n.lo[k], base, NULL, &l, &h) ||
				    !lin_interval(n.hi[k], base, NULL, &l2, &h2) ||
				    lin_varies(l, base) || lin_varies(h2, base)) {
					diag_error(p->compute.loc.file ? p->compute.loc : p->loc, "cannot "
					    "bound the region of shared '%s' over the block's threads: "
					    "dimension %d needs [%s, %s], which depends on the thread in a "
					    "way txc cannot bound", p->name, k,
					    n.lo[k] ? ir_expr_str(n.lo[k]) : "?",
					    n.hi[k] ? ir_expr_str(n.hi[k]) : "?");
					diag_note(p->compute.loc.file ? p->compute.loc : p->loc, "compute it at "
					    "a loop outside the thread loops, or index the threads' stage "
					    "without %% and / of the thread ids (no fuse before the split)");
					n.bad = true;
					break;
				}
				n.lo[k] = l;
				n.hi[k] = h2;
			}
			Need *o = out;
			add_need(o, k, n.lo[k], n.hi[k]);
		}
	out->bad |= n.bad;
}

/* ---- regions ------------------------------------------------------ */

static bool
region(Lower *L, LStage *s, Level *lv, IrExpr **mn, IrExpr **ex, IrExpr **mx)
{
	Need n = { .L = L, .p = s, .facts = facts_scope(L, L->ranges, s->gfloor) };
	n.at = arena_alloc(ir_arena, (L->nstages + 1) * sizeof *n.at);
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->compute.kind == LEVEL_AT)
			n.at[n.nat++] = L->stages[i];
	n.lo = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *n.lo);
	n.hi = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *n.hi);
	n.seen = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *n.seen);
	if (lv->kind == LEVEL_AT) {
		needs(L, s, lv->stage, lv->leaf, &n);
	} else {
		for (int i = 0; i < L->nstages; i++) {
			LStage *c = L->stages[i];
			if (c != s && !c->input && c->compute.kind == LEVEL_ROOT)
				needs(L, s, c, -1, &n);
		}
	}
	if (n.bad)
		return false;
	for (int d = 0; d < s->ndims; d++) {
		if (!n.seen[d]) {
			if (s->shape) {       /* nothing reads it: its declared shape */
				mn[d] = ir_i64c(0);
				ex[d] = s->shape[d];
				mx[d] = lin_normalize(ir_sub(s->shape[d], ir_i64c(1)));
			} else {
				mn[d] = ir_i64c(0);
				ex[d] = ir_i64c(0);
				mx[d] = ir_i64c(-1);
			}
			continue;
		}
		mn[d] = lin_normalize(n.lo[d]);
		mx[d] = lin_normalize(n.hi[d]);
		ex[d] = lin_extent(mn[d], mx[d]);
	}
	return true;
}

/* The range of loop `pos` of s: its root axis's region, or 0 to its
 * extent - 1. */
static void
leaf_range(LStage *s, int pos, IrExpr **lo, IrExpr **hi)
{
	int ax = s->leaves[pos];
	int k = -1;
	if (ax < s->ndims)
		k = ax;
	for (int j = 0; j < s->nred; j++)
		if (s->rax[j] == ax)
			k = s->ndims + j;
	*lo = k >= 0 ? s->dmin[k] : ir_i64c(0);
	*hi = k >= 0 ? s->dmax[k] : lin_normalize(ir_sub(s->axes[ax].ext, ir_i64c(1)));
}

static void
push_loops(Lower *L, LStage *s)
{
	for (int i = 0; i < s->nleaves; i++) {
		IrExpr *lo, *hi;
		leaf_range(s, i, &lo, &hi);
		L->ranges = lin_push(L->ranges, s->axes[s->leaves[i]].var, lo, hi, false);
	}
	/* root axes made into other loops: their ranges, for regions that
	 * name them (bounds_infer_scope) */
	for (int k = 0; k < s->ndims + s->nred; k++) {
		int ax = k < s->ndims ? k : s->rax[k - s->ndims];
		if (!s->axes[ax].leaf)
			L->ranges = lin_push(L->ranges, s->axes[ax].var, s->dmin[k], s->dmax[k], false);
	}
}

/* ---- split tails ----------------------------------------------------- */

/* exact and shift_inward need an extent known at entry: checked there (or
 * now, when constant).  Inside a loop nest the extent varies, so such a
 * split falls back to a guard, which computes the same values. */
static void
tails(Lower *L, LStage *s)
{
	bool changed = false;
	const char *where = L->sched && L->sched->name ?
	    arena_printf(ir_arena, "schedule '%s'", L->sched->name) : "the default schedule";
	if (L->opt && L->opt->special)
		where = arena_printf(ir_arena, "specialize (%s) of %s", L->opt->special, where);
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (r->fuse || r->tail == TAIL_GUARD)
			continue;
		IrExpr *pe = lin_normalize(s->axes[r->parent].ext);
		const char *an = s->axes[r->parent].name;
		int64_t c;
		if (!pe)
			continue;
		if (ir_is_const(pe, &c)) {
			if (r->tail == TAIL_EXACT && c % r->factor)
				diag_error(r->loc, "tail=exact needs the extent of '%s' (%lld) to be a "
				    "multiple of %lld", an, (long long)c, (long long)r->factor);
			if (r->tail == TAIL_SHIFT && c < r->factor)
				diag_error(r->loc, "tail=shift_inward needs at least %lld iterations of "
				    "'%s'; it has %lld", (long long)r->factor, an, (long long)c);
		} else if (lin_is_static(pe, L->ranges)) {
			IrExpr *f = ir_i64c(r->factor);
			if (r->tail == TAIL_EXACT)
				stage_add_check(L, ir_binop(IR_EQ, ir_binop(IR_MOD, pe, f), ir_i64c(0)), 3,
				    arena_printf(ir_arena, "%s: %s must be a multiple of %lld (tail=exact "
				    "split of '%s' of '%s' in %s)", L->k->name, ir_expr_str(pe),
				    (long long)r->factor, an, s->name, where));
			else if ((lin_assume_ge(L->ranges, pe, r->factor), true))
				stage_add_check(L, ir_binop(IR_GE, pe, f), 2,
				    arena_printf(ir_arena, "%s: %s must be at least %lld (tail=shift_inward "
				    "split of '%s' of '%s' in %s)", L->k->name, ir_expr_str(pe),
				    (long long)r->factor, an, s->name, where));
		} else {
			r->tail = TAIL_GUARD;
			changed = true;
		}
	}
	if (changed)
		axes_extents(s);
}

/* ---- the pass ------------------------------------------------------ */

/* Whether some stage reads s's buffer (after inlining). */
static bool
reads(LStage *r, LStage *s)
{
	return sched_reads(r, s);
}

/* The sizes' floors where s is computed (facts.c): at a loop of its
 * consumer, where that loop and the ones around it run; at root, the
 * kernel's.  While L->guards (bounds_infer_stages), a stage whose readers
 * all run only where, say, W >= 1 more than that is computed only there,
 * under that guard: at root, a clamp-to-edge border read at rows -1 to H
 * of it; at a loop, clamp(j, 0, W - 1) of a loop inside it (the region
 * [min(0, W - 1), W - 1] is [0, W - 1] where the loop over W runs, and
 * nothing is read where it does not).  Outputs are computed everywhere. */
static void
computed_where(Lower *L, LStage *s)
{
	s->guard = NULL;
	s->ffloor = NULL;
	if (s->compute.kind == LEVEL_AT) {
		LStage *c = s->compute.stage;
		s->gfloor = facts_copy(L, c->gfloor ? c->gfloor : L->floor0);
		for (int i = 0; c->bounded && i <= s->compute.leaf && i < c->nleaves; i++) {
			IrExpr *lo, *hi;
			leaf_range(c, i, &lo, &hi);
			facts_nonempty(L, lo, hi, s->gfloor);
		}
	} else {
		s->gfloor = facts_copy(L, L->floor0);
	}
	if (s->output || !L->guards)
		return;
	int64_t *f = NULL;
	for (int i = 0; i < L->nstages; i++) {
		LStage *r = L->stages[i];
		if (r == s || r->input || r->compute.kind == LEVEL_INLINE || !reads(r, s))
			continue;
		if (!r->ffloor)
			return;     /* not bounded: no facts */
		if (!f)
			f = facts_copy(L, r->ffloor);
		else
			facts_meet(L, f, r->ffloor);
	}
	if (!f)
		return;
	int64_t *at = facts_copy(L, s->gfloor);
	facts_join(L, s->gfloor, f);
	s->guard = facts_cond(L, s->gfloor, at);
}

/* A region's extent is negative where its consumer's loop runs past a
 * guarded tail (min(1, N - io*4 - ii) rows): nothing is computed or read
 * there, and the buffer is empty rather than of a negative size. */
static IrExpr *
alloc_extent(Lower *L, IrExpr *e)
{
	if (lin_prove_le(ir_i64c(0), e, L->ranges))
		return e;
	return ir_max(e, ir_i64c(0));
}

static bool
has_fuse(LStage *s)
{
	for (int i = 0; i < s->nrels; i++)
		if (s->rels[i].fuse)
			return true;
	return false;
}

/* Stages of VTA's accumulator keep whole blocks.  A stage tensorized in
 * acc: a pure axis that is a loop of the intrinsic (a leaf from the
 * tensorize axis inward) whose declared extent is a constant (the packed
 * layout's 16) covers it all, even where the consumers read fewer (a
 * dense layer of 7 outputs reads 7 of the block's 16), so the GEMM's
 * extents match.  A stage that reads an acc stage (the epilogue, which
 * VTA's ALU computes a row of 16 at a time) covers its last dimension so
 * too.  The extra columns are computed from padded operands (their
 * bounds inferred from these regions and checked) and never read. */
static void
pad_dim(LStage *s, int d)
{
	int64_t e, c;
	if (d >= s->ndims || !ir_is_const(s->shape[d], &e) || e <= 0 ||
	    !ir_is_const(s->dext[d], &c) || c >= e)
		return;
	s->dmin[d] = ir_i64c(0);
	s->dext[d] = ir_i64c(e);
	s->dmax[d] = ir_i64c(e - 1);
}

static void
pad_vta_blocks(Lower *L, LStage *s)
{
	if (!s->shape || s->ndims == 0 || !L->opt || !L->opt->target ||
	    strcmp(L->opt->target, "vta"))
		return;
	if (s->scope == SCOPE_VTA_ACC)
		for (int t = 0; t < L->ntz; t++) {
			if (L->tz[t].s != s)
				continue;
			int from = stage_leaf(s, L->tz[t].axis);
			for (int i = from; i >= 0 && i < s->nleaves; i++)
				pad_dim(s, s->leaves[i]);
		}
	for (int i = 0; i < L->nstages; i++) {
		LStage *p = L->stages[i];
		if (p != s && p->scope == SCOPE_VTA_ACC && sched_consumes(s, p)) {
			pad_dim(s, s->ndims - 1);
			break;
		}
	}
}

/* A root stage with a declared shape whose consumers compute whole
 * blocks (tail = round_up) past the end of what they need would compute
 * the blocks' extra points itself, and so would every stage before it:
 * a classifier's last matmul, 12 rows a block, made a network of batch 1
 * compute 12 images.  Along a dimension its own loops do not round, its
 * region is cut back to its shape instead, and the extra points' reads of
 * it are clamped into the region (bounds_check.c), their results never
 * stored.  The first pass, without rounding, proved every read that
 * counts inside the shape.  Where the shape and the rounded region are
 * constants and the region is at most a quarter larger, it stays rounded:
 * a padded row more costs less than a clamp on each read in the blocks'
 * inner loops (ResNet-18's 7 x 7 layers). */
static void
cut_to_shape(Lower *L, LStage *s)
{
	s->cut = 0;
	if (!L->rounding || !s->shape || s->compute.kind != LEVEL_ROOT || s->store_set ||
	    s->scope == SCOPE_VTA_ACC || (L->opt && L->opt->target &&
	    !strcmp(L->opt->target, "vta")))
		return;
	for (int d = 0; d < s->ndims && d < 64; d++) {
		if (rounded_root(L, s, d))
			continue;
		IrExpr *top = lin_normalize(ir_sub(s->shape[d], ir_i64c(1)));
		if (lin_prove_le(s->dmax[d], top, L->ranges))
			continue;
		int64_t e, lo, hi;
		if (ir_is_const(s->shape[d], &e) && ir_is_const(s->dmin[d], &lo) &&
		    ir_is_const(s->dmax[d], &hi) && (hi - lo + 1) * 4 <= e * 5)
			continue;
		s->dmax[d] = lin_min(s->dmax[d], top, L->ranges);
		s->dext[d] = lin_normalize(ir_add(ir_sub(s->dmax[d], s->dmin[d]), ir_i64c(1)));
		s->cut |= (uint64_t)1 << d;
	}
}

static bool
infer(Lower *L)
{
	int before = diag_errors();
	L->floor0 = facts_base(L);
	for (int i = L->nstages - 1; i >= 0; i--) {
		LStage *s = L->stages[i];
		if (s->input || s->compute.kind == LEVEL_INLINE)
			continue;
		s->bounded = false;
		int nroots = s->ndims + s->nred;
		s->dmin = arena_alloc(ir_arena, (nroots + 1) * sizeof *s->dmin);
		s->dext = arena_alloc(ir_arena, (nroots + 1) * sizeof *s->dext);
		s->amin = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *s->amin);
		s->aext = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *s->aext);
		s->dmax = arena_alloc(ir_arena, (nroots + 1) * sizeof *s->dmax);
		IrExpr **amax = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *amax);
		for (int k = 0; k < s->nred; k++) {
			s->dmin[s->ndims + k] = s->rmin[k];
			s->dext[s->ndims + k] = s->rext[k];
			s->dmax[s->ndims + k] = lin_normalize(ir_sub(ir_add(s->rmin[k], s->rext[k]), ir_i64c(1)));
		}
		computed_where(L, s);
		if (s->output || s->scan || s->upd) {
			/* a scan is computed whole (its steps read each other); one
			 * of a group one step at a time, in its lead's scan loop;
			 * an update definition writes where the data says */
			for (int d = 0; d < s->ndims; d++) {
				s->dmin[d] = s->amin[d] = ir_i64c(0);
				s->dext[d] = s->aext[d] = s->shape[d];
				s->dmax[d] = lin_normalize(ir_sub(s->shape[d], ir_i64c(1)));
				if (s->scan && s->scan_lead != s && d == s->scan_dim) {
					LStage *ld = s->scan_lead;
					s->dmin[d] = s->dmax[d] = ir_var(ld->axes[ld->scan_dim].var);
					s->dext[d] = ir_i64c(1);
				}
				if (!s->output) {
					s->buf->min[d] = s->amin[d];
					s->buf->extent[d] = s->aext[d];
				}
			}
		} else {
			int e = diag_errors();
			if (!region(L, s, &s->compute, s->dmin, s->dext, s->dmax)) {
				if (diag_errors() == e)    /* never leave a stage unbounded quietly */
					diag_error(s->compute.kind == LEVEL_AT ? s->compute.loc : s->loc,
					    "cannot bound the region of '%s' that its consumers need: txc "
					    "needs index expressions whose range follows from the loops", s->name);
				continue;
			}
			pad_vta_blocks(L, s);
			cut_to_shape(L, s);
			/* a loop past a guarded tail runs a negative number of times,
			 * that is none; fused, two such extents would multiply to a
			 * positive one */
			if (has_fuse(s))
				for (int d = 0; d < s->ndims; d++)
					s->dext[d] = alloc_extent(L, s->dext[d]);
			Level *st = s->store_set ? &s->store : &s->compute;
			L->storing = L->rounding && st != &s->compute;
			bool stored = st != &s->compute && region(L, s, st, s->amin, s->aext, amax);
			L->storing = false;
			if (!stored) {
				memcpy(s->amin, s->dmin, s->ndims * sizeof *s->amin);
				memcpy(s->aext, s->dext, s->ndims * sizeof *s->aext);
			}
			for (int d = 0; d < s->ndims; d++) {
				s->buf->min[d] = s->amin[d];
				s->buf->extent[d] = alloc_extent(L, s->aext[d]);
			}
		}
		s->bounded = true;
		axes_extents(s);
		tails(L, s);
		/* its body runs where its own loops do too */
		s->ffloor = facts_copy(L, s->gfloor);
		for (int k = 0; k < nroots; k++)
			facts_nonempty(L, s->dmin[k], s->dmax[k], s->ffloor);
		push_loops(L, s);
	}
	if (diag_errors() != before)
		return false;
	L->regions_ok = true;      /* lower_stages may run (for its own errors) */
	bounds_check_stages(L);
	return diag_errors() == before;
}

static bool
any_round_up(Lower *L)
{
	for (int i = 0; i < L->nstages; i++)
		for (int j = 0; j < L->stages[i]->nrels; j++)
			if (L->stages[i]->rels[j].round_up)
				return true;
	return false;
}

/* Without tail=round_up, one pass.  With it, a first pass without rounding
 * proves every access the kernel needs (and reports the ones it cannot),
 * then a second pass rounds the regions up and clamps what only whole
 * blocks read past the end. */
static bool
infer_rounded(Lower *L)
{
	L->rounding = false;
	if (!any_round_up(L))
		return infer(L);
	VarRange *ranges = L->ranges;
	int nchecks = L->nchecks;
	if (!infer(L))
		return false;
	L->ranges = ranges;
	L->nchecks = nchecks;
	L->rounding = true;
	return infer(L);
}

/* First without guards (no root stage relies on its consumers' facts),
 * quietly; where that fails, again with them: guards appear only in a
 * kernel whose proofs need them (facts.c), and the diagnostics are the
 * second run's.  On cuda a guard is a condition on the sizes alone, the
 * same for every thread: around a root stage it stays on the host and
 * skips the stage's kernel launches; at a loop inside a kernel no thread
 * diverges from another at its barriers.  (A Reshape that flattens a
 * pooled H * W reads (q / W') % H' of a map of H' rows, in bounds only
 * where W' >= 1.)  VTA's instruction streams take none. */
bool
bounds_infer_stages(Lower *L)
{
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	L->guards = false;
	if (strcmp(target, "cpu") && strcmp(target, "cuda"))
		return infer_rounded(L);
	VarRange *ranges = L->ranges;
	int nchecks = L->nchecks;
	diag_mute(true);
	bool ok = infer_rounded(L);
	diag_mute(false);
	if (ok)
		return true;
	L->ranges = ranges;
	L->nchecks = nchecks;
	L->regions_ok = false;
	L->guards = true;
	return infer_rounded(L);
}
