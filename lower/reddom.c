/* reddom.c: reductions whose range depends on pure axes (tx.5 REDUCTIONS,
 * txc-schedule(7) LEGALITY): `sum(k <= i)`, `sum(i - R <= k <= i + R)`.
 *
 * Loop k of such a reduction runs from a bound in terms of i, so every
 * loop made from i runs outside every loop made from k (a vectorized or
 * reordered i inside k would leave the bound without its variable), and
 * stages a primitive makes of it (rfactor, cache_write) get the range in
 * their own axes' names (sched_stages.c); one that would not is refused.
 * A range that only uses size parameters is a box, as before, and needs
 * nothing of this.
 * Runs after the primitives (sched.c), before bound inference.
 */
#include "lower/lower.h"

typedef struct {
	LStage *s;
	Lower *L;
	uint64_t pure;       /* the pure root axes the bounds use, as bits */
	Var *foreign;        /* a variable of no axis or parameter of s */
} Uses;

static IrExpr *
var_fn(IrExpr *e, void *ctx)
{
	Uses *u = ctx;
	if (e->kind != IR_VAR)
		return NULL;
	for (int d = 0; d < u->s->ndims; d++)
		if (u->s->axes[d].var == e->var) {
			u->pure |= d < 64 ? (uint64_t)1 << d : 0;
			return NULL;
		}
	for (int i = 0; i < u->L->k->nparams; i++)
		if (u->L->params[i] == e->var)
			return NULL;
	if (!u->foreign)
		u->foreign = e->var;
	return NULL;
}

/* The source of reduction axis r's range, as written. */
static const char *
range_text(LStage *s, int r)
{
	Expr *v = s->t && s->t->rule ? s->t->rule->value : NULL;
	if (!v || v->kind != EXPR_REDUCE || r >= v->reduce.naxes)
		return "its range";
	return stage_loc_text(v->reduce.axes[r].loc);
}

static bool
check_stage(Lower *L, LStage *s)
{
	for (int r = 0; r < s->nred; r++) {
		Uses u = { s, L, 0, NULL };
		stage_map(s->rmin[r], var_fn, &u);
		stage_map(s->rext[r], var_fn, &u);
		const char *k = s->axes[s->rax[r]].name;
		if (u.foreign) {
			diag_error(s->loc, "the range of '%s' in '%s' uses '%s', which is not one of "
			    "its axes: txc cannot move this range to the stage a primitive made",
			    k, s->name, u.foreign->name);
			return false;
		}
		if (!u.pure)
			continue;
		uint64_t rbit = (uint64_t)1 << (s->ndims + r < 64 ? s->ndims + r : 63);
		int first = -1;
		for (int p = 0; p < s->nleaves && first < 0; p++)
			if (axes_roots(s, s->leaves[p]) & rbit)
				first = p;
		for (int p = first + 1; first >= 0 && p < s->nleaves; p++) {
			uint64_t rb = axes_roots(s, s->leaves[p]);
			if (!(rb & u.pure))
				continue;
			int d = 0;
			while (!(rb & u.pure & ((uint64_t)1 << d)))
				d++;
			Axis *a = &s->axes[s->leaves[p]];
			diag_error(a->fk_loc.file ? a->fk_loc : s->loc, "loop '%s' of '%s' runs inside "
			    "loop '%s', but the range of '%s' depends on '%s' (%s): the loops of '%s' "
			    "must run outside those of '%s'", a->name, s->name,
			    s->axes[s->leaves[first]].name, k, s->axes[d].name,
			    range_text(s, r), s->axes[d].name, k);
			diag_note(s->loc, "reorder them, or give the reduction a range of sizes and "
			    "keep the dependence as a condition: sum(%s < N where ...)", k);
			return false;
		}
	}
	return true;
}

bool
reddom_check(Lower *L)
{
	bool ok = true;
	for (int i = 0; i < L->nstages; i++)
		if (!L->stages[i]->input && L->stages[i]->nred > 0)
			ok &= check_stage(L, L->stages[i]);
	return ok;
}

/* The value lower.c gives pure axis d of s in terms of the loops.  Bound
 * inference proved the range of a reduction axis over d's region (k <= j,
 * j < M); past a guarded tail the loops run on with j beyond it, storing
 * nothing, so there j is clamped into its region, which keeps the loop of
 * k, and the stages computed in it, where the proof holds. */
IrExpr *
reddom_root_value(LStage *s, int d)
{
	IrExpr *v = axes_root_value(s, d);
	if (!s->axes[d].tainted || !s->dmin || !s->dmax)
		return v;
	for (int r = 0; r < s->nred; r++)
		if (ir_uses_var(s->rmin[r], s->axes[d].var) || ir_uses_var(s->rext[r], s->axes[d].var))
			return ir_max(ir_min(v, s->dmax[d]), s->dmin[d]);
	return v;
}
