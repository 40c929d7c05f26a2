/* scan.c: the schedules of scans (tx.5 SCANS, txc-schedule(7) SCANS).
 *
 * Step t of a scan reads steps before it, so the loops made from its scan
 * axis run serially (unroll keeps the order; parallel, vectorize and bind
 * do not), outer before inner, and never fused; a loop of another axis may
 * sit outside them only where every read of an earlier step keeps that
 * axis's own index (independent rows: `s[t - 1, i]`, not `s[t - 1, i +
 * 1]`).  A scan is computed whole at root, on the cpu target.  The scans of
 * a group (sema/scans.c: their updates read each other's earlier steps)
 * advance together: each is computed one step at a time inside the scan
 * loop of the last of them (its lead), which must be its outermost loop.
 * Runs after the primitives and compute levels (sched.c), before bounds
 * inference, which computes a scan's whole shape.
 */
#include <string.h>

#include "lower/lower.h"

/* The loops made from axis a by splits, outermost first. */
static void
split_order(LStage *s, int a, int *out, int *n)
{
	if (*n >= 64)
		return;
	if (s->axes[a].leaf) {
		out[(*n)++] = a;
		return;
	}
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (!r->fuse && r->parent == a) {
			split_order(s, r->outer, out, n);
			split_order(s, r->inner, out, n);
			return;
		}
	}
}

typedef struct {
	LStage *s;
	bool *same;        /* per dimension: every read of an earlier step keeps it */
	IrExpr *bad;       /* the first read that does not */
} Reads;

static IrExpr *
self_read(IrExpr *e, void *ctx)
{
	Reads *r = ctx;
	if (e->kind != IR_LOAD || e->load.buf != r->s->buf)
		return NULL;
	for (int d = 0; d < e->load.nidx && d < r->s->ndims; d++) {
		IrExpr *x = e->load.idx[d];
		if (d != r->s->scan_dim && !(x->kind == IR_VAR && x->var == r->s->axes[d].var)) {
			if (r->same[d] && !r->bad)
				r->bad = e;
			r->same[d] = false;
		}
	}
	return NULL;
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

static bool
check_one(Lower *L, LStage *s)
{
	bool ok = true;
	const char *sa = s->axes[s->scan_dim].name;
	if (s->compute.kind != LEVEL_ROOT || s->store_set) {
		Loc at = s->store_set ? s->store.loc : s->compute.loc;
		diag_error(at.file ? at : s->loc, "scan '%s' is computed whole, at root: it cannot "
		    "be %s", s->name, s->compute.kind == LEVEL_INLINE ? "inlined (its steps read "
		    "its earlier steps from its buffer)" : "computed or stored at a loop of another "
		    "stage");
		return false;
	}
	if (!stage_reads(s->value, s->buf)) {
		diag_error(s->loc, "a primitive moved the reads scan '%s' makes of its own earlier "
		    "steps (cache_write cannot apply to a scan)", s->name);
		return false;
	}
	uint64_t sbit = (uint64_t)1 << s->scan_dim;
	int last = -1;
	for (int p = 0; p < s->nleaves; p++) {
		Axis *a = &s->axes[s->leaves[p]];
		uint64_t rb = axes_roots(s, s->leaves[p]);
		if (!(rb & sbit))
			continue;
		last = p;
		if (rb != sbit) {
			diag_error(a->made.file ? a->made : s->loc, "cannot fuse the scan axis '%s' of "
			    "'%s' with another axis: its steps run in order, one after another",
			    sa, s->name);
			ok = false;
		}
		if (a->fk != FOR_SERIAL && a->fk != FOR_UNROLLED) {
			diag_error(a->fk_loc.file ? a->fk_loc : s->loc, "cannot %s '%s' of scan '%s': "
			    "it is made from the scan axis '%s', and step %s reads step %s - 1, so the "
			    "steps run one after another", verb(a->fk), a->name, s->name, sa, sa, sa);
			diag_note(a->fk_loc.file ? a->fk_loc : s->loc, "%s an axis of independent "
			    "rows instead (another axis of '%s')", verb(a->fk), s->name);
			ok = false;
		}
	}
	if (!ok)
		return false;
	/* the scan loops outer before inner */
	int order[64], n = 0, k = 0;
	split_order(s, s->scan_dim, order, &n);
	for (int p = 0; p < s->nleaves; p++) {
		if (!(axes_roots(s, s->leaves[p]) & sbit))
			continue;
		if (k < n && order[k] != s->leaves[p]) {
			diag_error(s->axes[order[k]].made.file ? s->axes[order[k]].made : s->loc,
			    "the loops of scan '%s' made from its scan axis '%s' must stay in order "
			    "(outer before inner: %s before %s): its steps run one after another",
			    s->name, sa, s->axes[order[k]].name, s->axes[s->leaves[p]].name);
			return false;
		}
		k++;
	}
	/* loops outside the last scan loop: independent rows only */
	Reads r = { s, arena_alloc(ir_arena, (s->ndims + 1) * sizeof *r.same), NULL };
	for (int d = 0; d < s->ndims; d++)
		r.same[d] = true;
	stage_map(s->value, self_read, &r);
	for (int p = 0; p < last; p++) {
		uint64_t rb = axes_roots(s, s->leaves[p]);
		if (rb & sbit)
			continue;
		for (int d = 0; d < s->ndims; d++)
			if ((rb >> d & 1) && !r.same[d]) {
				Axis *a = &s->axes[s->leaves[p]];
				diag_error(s->loc, "loop '%s' of scan '%s' runs outside its scan loop "
				    "'%s', but a step reads other positions along '%s' of earlier steps "
				    "('%s'), which would not be computed yet", a->name, s->name,
				    s->axes[s->leaves[last]].name, s->axes[d].name,
				    r.bad ? stage_loc_text(r.bad->loc) : "?");
				diag_note(s->loc, "reorder so that the loops of '%s' come first", sa);
				return false;
			}
	}
	(void)L;
	return true;
}

/* The scans of a group computed in the steps of its last one. */
static bool
group(Lower *L, LStage *lead)
{
	bool any = false;
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (s != lead && s->scan && s->t->scan_group == lead->t->scan_group) {
			s->scan_lead = lead;
			any = true;
		}
	}
	if (!any)
		return true;
	int pos = stage_leaf(lead, lead->axes[lead->scan_dim].name);
	if (pos != 0) {
		diag_error(lead->loc, "scan '%s' steps together with other scans (%s reads their "
		    "earlier steps), so its scan axis '%s' must be its outermost loop, not split: "
		    "the others are computed one step at a time inside it", lead->name,
		    lead->name, lead->axes[lead->scan_dim].name);
		return false;
	}
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (s == lead || !s->scan || s->scan_lead != lead)
			continue;
		IrExpr *a = lin_normalize(s->shape[s->scan_dim]);
		IrExpr *b = lin_normalize(lead->shape[lead->scan_dim]);
		if (strcmp(ir_expr_str(a), ir_expr_str(b))) {
			diag_error(s->loc, "scans '%s' and '%s' step together, so their scan axes need "
			    "the same extent (%s and %s)", s->name, lead->name, ir_expr_str(a),
			    ir_expr_str(b));
			return false;
		}
		s->compute.kind = LEVEL_AT;
		s->compute.stage = lead;
		s->compute.leaf = pos;
		s->compute.axis = lead->axes[lead->scan_dim].name;
		s->compute.loc = s->loc;
		s->store_set = true;
		s->store.kind = LEVEL_ROOT;
		s->store.loc = s->loc;
	}
	return true;
}

bool
scan_schedule(Lower *L)
{
	bool ok = true;
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (!s->scan)
			continue;
		if (strcmp(target, "cpu")) {
			diag_error(s->loc, "scan '%s': scans compile for the cpu target only, not %s",
			    s->name, target);
			return false;
		}
		ok &= check_one(L, s);
	}
	if (!ok)
		return false;
	/* the last scan of each group leads it */
	for (int i = L->nstages - 1; i >= 0; i--) {
		LStage *s = L->stages[i];
		if (s->scan && s->scan_lead == s && !group(L, s))
			return false;
	}
	return true;
}
