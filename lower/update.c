/* update.c: the schedules of stages with an update definition (tx.5
 * UPDATES, txc-schedule(7) UPDATES).
 *
 * `for (r < N) h[clamp(x[r], 0, B - 1)] += 1;` runs after h's pure value,
 * in one nest of its own: the loops made from its reduction axes (the
 * update's domain) and from the pure axes it keeps in their places
 * (h[c, x[r, c]] keeps c), in the stage's leaf order.  What a schedule may
 * do to it:
 *   - loops of kept pure axes: anything (two values of c write different
 *     elements), except shift_inward tails, which would apply the update
 *     twice to the elements they recompute;
 *   - loops of the domain: split and unroll (the order stays), reorder
 *     only when the update is associative (+=, max(h[..], v), ...: sema);
 *     never parallel, vectorized or bound to GPU threads (two steps may
 *     update the same element at once); rfactor only when associative
 *     (sched_stages.c makes the stage of partial results, Halide's
 *     parallel histogram);
 *   - the stage is computed whole at root (its positions depend on the
 *     data), nothing is computed at its loops, and it compiles for the cpu
 *     target only, but for the outputs of a tuple reduction (tx.5 TUPLE
 *     REDUCTIONS), which also compile for cuda (each thread folding its
 *     points' range; their rfactor, sched_stages.c, is for the cpu only).
 * Runs after the primitives and compute levels (sched.c), before bounds
 * inference, which computes such a stage's whole shape and proves each
 * position in bounds as it proves a read (a gather clamped into range).
 */
#include <string.h>

#include "lower/lower.h"
#include "sema/sema.h"

static uint64_t
nest_roots(LStage *s)
{
	uint64_t roots = s->ukeep;
	for (int j = 0; j < s->nred && s->ndims + j < 64; j++)
		roots |= (uint64_t)1 << (s->ndims + j);
	return roots;
}

bool
update_in_nest(LStage *s, int pos)
{
	uint64_t r = axes_roots(s, s->leaves[pos]);
	return s->upd && r && !(r & ~nest_roots(s));
}

static const char *
verb(ForKind fk)
{
	switch (fk) {
	case FOR_PARALLEL: return "parallelize";
	case FOR_VECTORIZED: return "vectorize";
	default: return "bind";
	}
}

bool
update_kind_ok(LStage *s, Axis *a, ForKind fk, Loc at)
{
	if (!s->upd || !a->red || (fk != FOR_PARALLEL && fk != FOR_VECTORIZED &&
	    fk != FOR_GPU_BLOCK && fk != FOR_GPU_THREAD))
		return true;
	if (s->tlead) {
		diag_error(at, "cannot %s '%s' of '%s': it runs the steps of a tuple reduction, "
		    "each of which combines the accumulators the step before it left", verb(fk),
		    a->name, s->name);
		const char *r = s->axes[s->rax[0]].name;
		diag_note(s->uloc, "the combiner runs over the range in order (tx.5 TUPLE "
		    "REDUCTIONS); a pure axis of '%s' may run in parallel or vectorized%s",
		    s->tlead->name, s->tassoc && s->t ? arena_printf(ir_arena, ", and so may "
		    "chunks of the range, as partial tuples of this associative combiner: "
		    "%s.split(%s, 64) -> (%so, %si); %s.rfactor(%so) -> %s_rf; "
		    "%s_rf.parallel(%so)", s->name, r, r, r, s->name, r, s->name, s->name, r) :
		    s->t ? "; a combiner declared 'combine associative' may be rfactored into "
		    "partial tuples of chunks of the range" : "");
		return false;
	}
	diag_error(at, "cannot %s '%s' of '%s': it runs the steps of the update definition, "
	    "and two steps may update the same element of '%s' at once (its position "
	    "depends on the data)", verb(fk), a->name, s->name, s->name);
	diag_note(s->uloc, "the update runs its steps one after the other (tx.5 UPDATES); a "
	    "pure axis that it keeps in its place may run in parallel (h[c, b] = 0; "
	    "for (r < N) h[c, clamp(x[c, r], 0, B - 1)] += 1; keeps c)%s", s->uassoc ?
	    arena_printf(ir_arena, ", and so may chunks of the steps of this associative "
	    "update rfactored into partial results: %s.split(%s, 64) -> (%so, %si); "
	    "%s.rfactor(%so) -> %s_rf; %s_rf.parallel(%so)", s->name, a->name, a->name,
	    a->name, s->name, a->name, s->name, s->name, a->name) : "");
	return false;
}

static bool
shift_tail(SchedPrim *sp)
{
	for (int i = 0; i < sp->nargs; i++)
		if (sp->args[i].key && !strcmp(sp->args[i].key, "tail") && sp->args[i].str &&
		    !strcmp(sp->args[i].str, "shift_inward"))
			return true;
	return false;
}

bool
update_prim_ok(LStage *s, SchedPrim *sp)
{
	if (!s->upd)
		return true;
	switch (sp->prim_id) {
	case PRIM_COMPUTE_INLINE: case PRIM_COMPUTE_AT: case PRIM_STORE_AT:
		diag_error(sp->loc, "'%s' has an update definition: it is computed whole, at "
		    "root (the positions it updates depend on the data)", s->name);
		return false;
	case PRIM_RFACTOR:
		if (s->tlead && !s->tassoc) {
			diag_error(sp->loc, "cannot rfactor '%s': the combiner of '%s' is not declared "
			    "associative, so the steps of its tuple reduction must run in order",
			    s->name, s->name);
			diag_note(s->uloc, "rfactor combines partial tuples of chunks of the range by "
			    "the combiner; write 'combine associative' where the combiner is "
			    "(tx.5 TUPLE REDUCTIONS)");
			return false;
		}
		if (s->tlead && s->tlead != s) {
			diag_error(sp->loc, "cannot rfactor '%s': the range of its tuple reduction is "
			    "scheduled on the first output, '%s'", s->name, s->tlead->name);
			return false;
		}
		if (s->uassoc || s->tassoc)
			return true;     /* partial results per chunk: sched_stages.c */
		diag_error(sp->loc, "cannot rfactor the update definition of '%s': it is not "
		    "associative, so its steps must run in order", s->name);
		diag_note(s->uloc, "rfactor computes partial results of chunks of the steps "
		    "and combines them: an update of the form %s[...] += v, or max or min of "
		    "its current value and v, allows it", s->name);
		return false;
	case PRIM_CACHE_WRITE: case PRIM_TENSORIZE:
		diag_error(sp->loc, "%s does not apply to '%s', which has an update definition "
		    "(tx.5 UPDATES)", sp->prim, s->name);
		return false;
	case PRIM_SPLIT: case PRIM_TILE:
		for (int i = 0; i < (sp->prim_id == PRIM_TILE ? 2 : 1) && shift_tail(sp); i++) {
			SchedArg *a = sched_arg(sp, i);
			int ax = a && a->str ? stage_axis(s, intern_cstr(a->str)) : -1;
			if (ax < 0 || !(axes_roots(s, ax) & s->ukeep))
				continue;
			diag_error(sp->loc, "tail=shift_inward recomputes elements, and the update "
			    "definition of '%s' would apply twice to them; use guard or exact",
			    s->name);
			return false;
		}
		return true;
	default:
		return true;
	}
}

/* The path of axis a through the splits from its root reduction axis j:
 * j, then 0 for an outer and 1 for an inner loop at each split; loops in
 * lexicographic order of their paths run the domain in its own order.
 * False for an axis a fuse made. */
static bool
path_of(LStage *s, int a, int *out, int *n)
{
	if (*n >= 32)
		return false;
	for (int j = 0; j < s->nred; j++)
		if (s->rax[j] == a) {
			out[(*n)++] = j;
			return true;
		}
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (!r->fuse && (r->outer == a || r->inner == a)) {
			if (!path_of(s, r->parent, out, n) || *n >= 32)
				return false;
			out[(*n)++] = r->inner == a;
			return true;
		}
	}
	return false;
}

static int
path_cmp(const int *a, int na, const int *b, int nb)
{
	for (int i = 0; i < na && i < nb; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return na < nb ? -1 : na > nb;
}

static const char *
domain_list(LStage *s)
{
	char *out = "";
	for (int j = 0; j < s->nred; j++)
		out = arena_printf(ir_arena, "%s%s'%s'", out, j ? ", " : "", s->axes[s->rax[j]].name);
	return out;
}

/* An output of a tuple reduction other than the first: its range runs in
 * the first output's update nest, so its own loops of the range must stay
 * as they were. */
static bool
tuple_member(LStage *s)
{
	for (int i = 0; i < s->nleaves; i++) {
		Axis *a = &s->axes[s->leaves[i]];
		if (a->red && (a->fk != FOR_SERIAL || a->made.file)) {
			diag_error(a->made.file ? a->made : a->fk_loc, "the range of the tuple "
			    "reduction of '%s' runs in the loops of its first output, '%s': schedule "
			    "'%s' there", s->name, s->tlead->name, a->name);
			return false;
		}
	}
	for (int i = 0; i < s->nrels; i++)
		if (s->axes[s->rels[i].parent].red || s->axes[s->rels[i].outer].red) {
			diag_error(s->rels[i].loc, "the range of the tuple reduction of '%s' runs in "
			    "the loops of its first output, '%s': schedule it there", s->name,
			    s->tlead->name);
			return false;
		}
	return true;
}

/* The position of the first loop of s's domain that runs out of the order
 * of its steps, *before the loop it runs inside; -1: none, -2: a loop a
 * fuse made (its order is unknown). */
int
update_order_breach(LStage *s, int *before)
{
	int prev[32], nprev = 0, prevleaf = -1;
	for (int i = 0; i < s->nleaves; i++) {
		int a = s->leaves[i];
		if (!s->axes[a].red)
			continue;
		int cur[32], ncur = 0;
		if (!path_of(s, a, cur, &ncur))
			return -2;
		if (prevleaf >= 0 && path_cmp(prev, nprev, cur, ncur) > 0) {
			*before = prevleaf;
			return i;
		}
		memcpy(prev, cur, ncur * sizeof *cur);
		nprev = ncur;
		prevleaf = i;
	}
	return -1;
}

static bool
check_one(Lower *L, LStage *s)
{
	bool ok = true;
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	if (strcmp(target, "cpu") && !(s->tlead && !strcmp(target, "cuda"))) {
		if (s->tlead) {     /* said once, on the first output */
			if (s->tmem)
				diag_error(s->uloc, "the tuple reduction of '%s' compiles for the cpu "
				    "and cuda targets only, not %s", s->name, target);
			return false;
		}
		diag_error(s->uloc, "'%s' has an update definition: those compile for the cpu "
		    "target only, not %s", s->name, target);
		return false;
	}
	for (int i = 0; i < L->nstages; i++) {
		LStage *p = L->stages[i];
		Level *lv = p->compute.kind == LEVEL_AT && p->compute.stage == s ? &p->compute :
		    p->store_set && p->store.kind == LEVEL_AT && p->store.stage == s ? &p->store : NULL;
		if (lv) {
			diag_error(lv->loc, "'%s' cannot be computed or stored at a loop of '%s', "
			    "which has an update definition; compute it at root", p->name, s->name);
			ok = false;
		}
	}
	/* a loop of kept and other pure axes runs in neither nest whole */
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (!r->fuse)
			continue;
		uint64_t roots = axes_roots(s, r->parent);
		if ((roots & s->ukeep) && (roots & ~nest_roots(s))) {
			diag_error(r->loc, "cannot fuse '%s' and '%s' of '%s': its update definition "
			    "keeps one of them in its place and not the other", s->axes[r->outer].name,
			    s->axes[r->inner].name, s->name);
			ok = false;
		}
		if (!s->uassoc && s->axes[r->parent].red) {
			diag_error(r->loc, "cannot fuse '%s' and '%s' of '%s': %s, and txc keeps the "
			    "order of its steps only through splits", s->axes[r->outer].name,
			    s->axes[r->inner].name, s->name, s->tlead ? "the steps of its tuple "
			    "reduction run in order" : "its update definition is not associative");
			ok = false;
		}
	}
	if (ok && s->tlead && s->tlead != s)
		ok = tuple_member(s);
	if (!ok || s->uassoc)
		return ok;
	/* not associative: the loops of the domain in the order of its steps */
	int prevleaf, i = update_order_breach(s, &prevleaf);
	if (i == -2)
		return false;
	if (i >= 0) {
		{
			Axis *x = &s->axes[s->leaves[i]], *y = &s->axes[s->leaves[prevleaf]];
			diag_error(s->reordered.file ? s->reordered : s->loc, "cannot run loop '%s' of '%s' outside "
			    "'%s': %s, so its steps must run in the order of its ranges (%s, the "
			    "first outermost)", y->name, s->name, x->name, s->tlead ? "it runs a tuple "
			    "reduction, whose combiner is applied in order" : "its update definition "
			    "is not associative", domain_list(s));
			if (s->tlead)
				diag_note(s->uloc, "even an associative combiner keeps the order: "
				    "rfactor combines its partial tuples in the order of the chunks");
			else
				diag_note(s->uloc, "an update of the form %s[...] += v, or max or min of "
				    "its current value and v, may run its steps in any order", s->name);
			return false;
		}
	}
	return ok;
}

bool
update_schedule(Lower *L)
{
	bool ok = true;
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->upd)
			ok &= check_one(L, L->stages[i]);
	return ok;
}
