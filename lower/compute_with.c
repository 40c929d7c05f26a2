/* compute_with.c: stages that share a loop nest (Halide's compute_with).
 *
 * `v.compute_with(m, x)` runs v in m's loops, outermost down to and
 * including loop x of m: one nest whose shared iterations compute first
 * the earlier stage (in compute order) and then the later one, so two
 * outputs reading the same input read it once.  The stages fused into one
 * (its lead, m) form a group; this pass checks, after bounds inference,
 * that the group can share the loops: both computed at root on the cpu,
 * neither a scan nor tensorized, the same number of iterations from the
 * same start in each shared loop, a reduction loop only where the other
 * has one, and no stage reading another of its group where the shared
 * loops have not computed the element yet (the same point or a provably
 * earlier iteration of serial loops, never a reduction still running in
 * them), nor a stage computed between the group's members that reads an
 * earlier one.
 * A stage fused into a member joins that member's group.  It sets
 * with_depth on every member and on the lead, and `with` on every member
 * to the lead; lower.c builds the nest.
 */
#include <string.h>

#include "lower/lower.h"

bool
compute_with_member(LStage *s)
{
	return s->with_depth > 0;
}

static const char *
leaf_name(LStage *s, int pos)
{
	return s->axes[s->leaves[pos]].name;
}

static const char *
show(IrExpr *e)
{
	return e ? ir_expr_str(lin_normalize(e)) : "?";
}

/* Whether a and b are the same for every size. */
static bool
same_value(Lower *L, IrExpr *a, IrExpr *b)
{
	if (!a || !b)
		return false;
	a = lin_normalize(a);
	b = lin_normalize(b);
	if (!strcmp(ir_expr_str(a), ir_expr_str(b)))
		return true;
	return lin_prove_le(a, b, L->ranges) && lin_prove_le(b, a, L->ranges);
}

/* The first loop of a leaf: its root's region start, or 0. */
static IrExpr *
loop_min(LStage *s, int pos)
{
	int ax = s->leaves[pos];
	if (ax < s->ndims)
		return s->dmin[ax];
	for (int j = 0; j < s->nred; j++)
		if (s->rax[j] == ax)
			return s->dmin[s->ndims + j];
	return ir_i64c(0);
}

/* e with the loop variables of v's first n leaves renamed to m's. */
static IrExpr *
to_lead(LStage *v, LStage *m, int n, IrExpr *e)
{
	for (int l = 0; l < n && e; l++)
		e = stage_subst(e, v->axes[v->leaves[l]].var, ir_var(m->axes[m->leaves[l]].var));
	return e;
}

/* ---- the position of a loop from a point of the stage's domain ---------
 * The inverse of axes.c: given the root coordinates x (per pure axis),
 * the value loop variable `a` takes where that element is computed; NULL
 * where a split shifts its tail inward (two loop points give one element). */

static const char *
kind(ForKind fk)
{
	return fk == FOR_SERIAL ? "serial" : ir_for_kind_name(fk);
}

static IrExpr *position(LStage *s, int a, IrExpr **x);

static IrExpr *
root_pos(LStage *s, int a, IrExpr **x)
{
	if (a >= s->ndims)
		return NULL;        /* a reduction axis: never read across */
	return lin_normalize(ir_sub(x[a], s->dmin[a]));
}

static IrExpr *
position(LStage *s, int a, IrExpr **x)
{
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (r->fuse && r->parent == a) {
			IrExpr *o = position(s, r->outer, x), *in = position(s, r->inner, x);
			IrExpr *ie = s->axes[r->inner].ext;
			if (!o || !in || !ie)
				return NULL;
			return lin_normalize(ir_add(ir_mul(o, ie), in));
		}
		if (!r->fuse && (r->outer == a || r->inner == a)) {
			if (r->tail == TAIL_SHIFT)
				return NULL;
			IrExpr *p = position(s, r->parent, x);
			if (!p)
				return NULL;
			return ir_binop(a == r->outer ? IR_DIV : IR_MOD, p, ir_i64c(r->factor));
		}
	}
	return root_pos(s, a, x);
}

/* The value of leaf variable `pos` (a root leaf counts from its start). */
static IrExpr *
leaf_value(LStage *s, int pos, IrExpr **x)
{
	int a = s->leaves[pos];
	IrExpr *p = position(s, a, x);
	if (p && a < s->ndims)
		p = lin_normalize(ir_add(p, s->dmin[a]));
	return p;
}

typedef struct {
	Lower *L;
	LStage *m, *v;      /* v reads m; m's loops are the shared ones */
	int depth;
	IrExpr *bad;        /* the first read at a point not computed yet */
	bool unknown;       /* a shift_inward split: cannot tell */
	int running;        /* >= 0: bad reads m while its reduction loop `running` runs */
	int unordered;      /* >= 0: bad reads another iteration of this parallel shared loop */
} Reads;

/* A read of m is fine where the element is computed at the same point
 * of the shared loops or at an earlier iteration: at the first shared
 * loop where the two differ, m's is provably the smaller, and no
 * reduction loop of m comes before it (at the same point of a shared
 * reduction loop the value is not complete). */
static IrExpr *
check_read(IrExpr *e, void *ctx)
{
	Reads *r = ctx;
	if (e->kind != IR_LOAD || e->load.buf != r->m->buf || r->bad)
		return NULL;
	LStage *m = r->m, *v = r->v;
	IrExpr **at = arena_alloc(ir_arena, (m->ndims + 1) * sizeof *at);
	IrExpr **here = arena_alloc(ir_arena, (v->ndims + 1) * sizeof *here);
	for (int d = 0; d < m->ndims && d < e->load.nidx; d++)
		at[d] = e->load.idx[d];
	for (int d = 0; d < v->ndims; d++)
		here[d] = ir_var(v->axes[d].var);
	for (int l = 0; l < r->depth; l++) {
		if (m->axes[m->leaves[l]].red) {
			r->running = l;
			r->bad = e;
			return NULL;
		}
		IrExpr *want = leaf_value(v, l, here);   /* where v is */
		IrExpr *got = leaf_value(m, l, at);      /* where m computed the element */
		if (!want || !got) {
			r->unknown = true;
			r->bad = e;
			return NULL;
		}
		if (same_value(r->L, got, want))
			continue;
		ForKind fk = m->axes[m->leaves[l]].fk;
		if (fk != FOR_SERIAL && fk != FOR_UNROLLED) {
			r->unordered = l;     /* its iterations run in no order */
			r->bad = e;
			return NULL;
		}
		/* an earlier iteration: computed (in the innermost shared loop, the
		 * same one will do: m runs first in it) */
		if (!lin_prove_le(lin_normalize(got), lin_normalize(l == r->depth - 1 ? want :
		    ir_sub(want, ir_i64c(1))), r->L->ranges))
			r->bad = e;
		return NULL;
	}
	return NULL;
}

/* v, later in the group's order, reads m: only what the shared loops
 * computed at the same point or before, and only finished values. */
static bool
reads_ok(Lower *L, LStage *m, LStage *v, int depth)
{
	if (!sched_consumes(v, m))
		return true;
	Reads r = { L, m, v, depth, NULL, false, -1, -1 };
	stage_map(v->value, check_read, &r);
	stage_map(v->rbody, check_read, &r);
	stage_map(v->rpred, check_read, &r);
	if (!r.bad)
		return true;
	Loc at = r.bad->loc.file ? r.bad->loc : v->loc;
	Loc with = v->with_loc.file ? v->with_loc : m->with_loc;
	if (r.running >= 0) {
		diag_error(at, "'%s' reads '%s' at '%s' while the shared loop '%s', a reduction "
		    "loop of '%s', still runs: the value is complete only after it", v->name,
		    m->name, stage_loc_text(r.bad->loc), leaf_name(m, r.running), m->name);
		diag_note(with, "fuse down to a loop outside the reduction loops of '%s'", m->name);
		return false;
	}
	if (r.unordered >= 0) {
		diag_error(at, "'%s' reads '%s' at '%s', an element another iteration of "
		    "the shared loop '%s' computes, and that loop is %s: its iterations run in "
		    "no order", v->name, m->name, stage_loc_text(r.bad->loc),
		    leaf_name(m, r.unordered), kind(m->axes[m->leaves[r.unordered]].fk));
		diag_note(with, "do not share loop '%s', or leave it serial",
		    leaf_name(m, r.unordered));
		return false;
	}
	if (r.unknown)
		diag_error(at, "'%s' reads '%s' (%s) and a split with tail=shift_inward maps two "
		    "points of the shared loops to one element: txc cannot tell which point "
		    "computes it", v->name, m->name, stage_loc_text(r.bad->loc));
	else
		diag_error(at, "'%s' reads '%s' at '%s', an element that the shared loops (down "
		    "to '%s') compute at a later iteration, or one txc cannot prove earlier",
		    v->name, m->name, stage_loc_text(r.bad->loc), leaf_name(m, depth - 1));
	diag_note(with, "compute_with runs '%s' and '%s' in one loop nest; a stage may read "
	    "another of its group only where the same or an earlier iteration computed it",
	    m->name, v->name);
	return false;
}

/* One member of lead m's group, fused down to `depth` loops: the loops
 * match. */
static bool
loops_match(Lower *L, LStage *m, LStage *v, int depth)
{
	if (v->nleaves < depth) {
		diag_error(v->with_loc, "'%s' has %d loop%s (%s) but compute_with(%s, %s) shares "
		    "%d", v->name, v->nleaves, v->nleaves == 1 ? "" : "s", stage_leaf_list(v),
		    m->name, v->with_axis, depth);
		return false;
	}
	for (int l = 0; l < depth; l++) {
		Axis *a = &m->axes[m->leaves[l]], *b = &v->axes[v->leaves[l]];
		if (a->red != b->red) {
			diag_error(v->with_loc, "loop %d of '%s' ('%s') is a %s loop but loop %d of "
			    "'%s' ('%s') is a %s one: a reduction loop can be shared only with "
			    "another reduction loop", l + 1, m->name, a->name,
			    a->red ? "reduction" : "pure", l + 1, v->name, b->name,
			    b->red ? "reduction" : "pure");
			return false;
		}
		IrExpr *ea = a->ext, *eb = to_lead(v, m, l, b->ext);
		IrExpr *ma = loop_min(m, l), *mb = to_lead(v, m, l, loop_min(v, l));
		if (!same_value(L, ea, eb) || !same_value(L, ma, mb)) {
			diag_error(v->with_loc, "loop '%s' of '%s' and loop '%s' of '%s' iterate "
			    "different domains (%s from %s, and %s from %s): shared loops need the "
			    "same extents after both stages' splits", a->name, m->name, b->name,
			    v->name, show(ea), show(ma), show(eb), show(mb));
			return false;
		}
		if (b->fk != FOR_SERIAL && b->fk != a->fk) {
			diag_error(b->fk_loc.file ? b->fk_loc : v->with_loc, "loop '%s' of '%s' is %s, "
			    "but compute_with shares it with loop '%s' of '%s', which is %s: the "
			    "shared loops run as '%s' schedules them", b->name, v->name,
			    kind(b->fk), a->name, m->name, kind(a->fk), m->name);
			return false;
		}
	}
	return true;
}

static bool
can_share(Lower *L, LStage *s, LStage *lead)
{
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	if (strcmp(target, "cpu")) {
		diag_error(s->with_loc, "compute_with is for cpu schedules (native and C); on "
		    "%s, compute '%s' and '%s' in separate nests", target, s->name, lead->name);
		return false;
	}
	LStage *both[2] = { lead, s };
	for (int i = 0; i < 2; i++) {
		LStage *x = both[i];
		if (x->compute.kind != LEVEL_ROOT) {
			diag_error(s->with_loc, "compute_with shares loops of stages computed at root; "
			    "'%s' is %s", x->name, x->compute.kind == LEVEL_INLINE ? "inlined" :
			    "computed at a loop of another stage");
			return false;
		}
		if (x->scan) {
			diag_error(s->with_loc, "'%s' is a scan: its steps run in their own loop "
			    "(tx.5 SCANS), which compute_with cannot share", x->name);
			return false;
		}
		if (x->upd) {
			diag_error(s->with_loc, "'%s' has an update definition: its update runs in a "
			    "nest of its own (tx.5 UPDATES), which compute_with cannot share", x->name);
			return false;
		}
		for (int j = 0; j < L->ntz; j++)
			if (L->tz[j].s == x) {
				diag_error(s->with_loc, "'%s' is tensorized; compute_with and tensorize "
				    "do not combine", x->name);
				return false;
			}
	}
	return true;
}

bool
compute_with_check(Lower *L)
{
	int before = diag_errors();
	for (int i = 0; i < L->nstages; i++)
		L->stages[i]->with_depth = 0;
	/* a stage fused into a member of a group joins the group: the
	 * members nearest the lead first */
	int *hops = arena_alloc(ir_arena, (L->nstages + 1) * sizeof *hops);
	for (int i = 0; i < L->nstages; i++) {
		LStage *x = L->stages[i];
		hops[i] = 0;
		while (x->with && hops[i] <= L->nstages) {
			x = x->with;
			hops[i]++;
		}
		if (hops[i] > L->nstages) {
			diag_error(L->stages[i]->with_loc, "the compute_with of '%s' and the stages it "
			    "names form a cycle: one of them must lead", L->stages[i]->name);
			return false;
		}
	}
	for (int round = 1; round <= L->nstages; round++)
		for (int i = 0; i < L->nstages; i++) {
			LStage *s = L->stages[i], *named = s->with, *m = named;
			if (!named || hops[i] != round)
				continue;
			while (m->with)
				m = m->with;
			int pos = stage_leaf(named, s->with_axis);
			if (pos < 0) {
				if (!sched_poisoned(named->poison, named->npoison, s->with_axis))
					diag_error(s->with_loc, "compute_with names loop '%s' of '%s', which is "
					    "not in its final loop nest; its loops are %s", s->with_axis,
					    named->name, stage_leaf_list(named));
				continue;
			}
			if (named != m && !named->with_depth)
				continue;        /* its own compute_with failed */
			if (named != m && pos >= named->with_depth) {
				diag_error(s->with_loc, "loop '%s' of '%s' is not one of the loops it shares "
				    "with '%s' (compute_with): those are its first %d", s->with_axis,
				    named->name, m->name, named->with_depth);
				continue;
			}
			if (!can_share(L, s, m) || !loops_match(L, m, s, pos + 1))
				continue;
			s->with = m;
			s->with_depth = pos + 1;
			if (m->with_depth < pos + 1)
				m->with_depth = pos + 1;   /* the lead runs in every shared loop */
		}
	if (diag_errors() != before)
		return false;
	/* the order within a shared iteration is compute order: a later stage
	 * may read an earlier one at the same point only */
	for (int i = 0; i < L->nstages; i++) {
		LStage *m = L->stages[i];
		if (!m->with_depth || m->with)
			continue;
		int first = -1, last = -1;
		for (int j = 0; j < L->nstages; j++) {
			LStage *a = L->stages[j];
			if (a != m && a->with != m)
				continue;
			if (first < 0)
				first = j;
			last = j;
			for (int k = j + 1; k < L->nstages; k++) {
				LStage *b = L->stages[k];
				if ((b == m || b->with == m) && !reads_ok(L, a, b,
				    a->with_depth < b->with_depth ? a->with_depth : b->with_depth))
					goto next;
			}
		}
		/* inside shared loop l - 1, the stages that share no deeper loop run
		 * whole, before loop l when no stage sharing it comes first in
		 * compute order, else after it: no stage that shares loop l may
		 * read one that runs after the loop */
		for (int l = 1; l < m->with_depth; l++) {
			int deep = -1;
			for (int j = first; j <= last; j++) {
				LStage *a = L->stages[j];
				if ((a != m && a->with != m) || a->with_depth <= l)
					continue;
				if (deep < 0)
					deep = j;
				for (int k = deep + 1; k < j; k++) {
					LStage *x = L->stages[k];
					if ((x != m && x->with != m) || x->with_depth != l ||
					    !sched_depends(L, a, x, 0))
						continue;
					diag_error(x->with_loc.file ? x->with_loc : x->loc, "'%s' shares %d "
					    "loop%s, so it runs after loop '%s', which '%s' shares too; but "
					    "'%s' reads '%s'", x->name, l, l == 1 ? "" : "s", leaf_name(m, l),
					    a->name, a->name, x->name);
					diag_note(a->with_loc.file ? a->with_loc : a->loc, "fuse '%s' down to "
					    "a loop outside '%s' instead", a->name, leaf_name(m, l));
					goto next;
				}
			}
		}
		/* the nest runs where the last of them would: no stage between may
		 * read an earlier one */
		for (int j = first + 1; j < last; j++) {
			LStage *w = L->stages[j];
			if (w == m || w->with == m || w->input || w->compute.kind != LEVEL_ROOT)
				continue;
			for (int k = first; k < j; k++) {
				LStage *a = L->stages[k];
				if ((a == m || a->with == m) && sched_depends(L, w, a, 0)) {
					diag_error(w->loc, "'%s' reads '%s' and is computed before '%s', which "
					    "compute_with places in one loop nest with '%s': the nest runs "
					    "after '%s'", w->name, a->name, L->stages[last]->name, a->name,
					    w->name);
					diag_note(L->stages[last]->with_loc.file ? L->stages[last]->with_loc :
					    w->loc, "fuse '%s' into the nest too, or compute '%s' in a "
					    "nest of its own", w->name, L->stages[last]->name);
					goto next;
				}
			}
		}
		/* a stage computed inside the shared loops runs before the group's
		 * bodies there: it may not read the group */
		for (int j = 0; j < L->nstages; j++) {
			LStage *p = L->stages[j];
			if (p->compute.kind != LEVEL_AT)
				continue;
			LStage *t = p->compute.stage;
			if (t != m && t->with != m)
				continue;
			for (int k = first; k <= last; k++) {
				LStage *a = L->stages[k];
				if ((a == m || a->with == m) && sched_consumes(p, a)) {
					diag_error(p->compute.loc, "'%s' is computed at a loop of '%s' and "
					    "reads '%s' of the same compute_with group; compute it at root",
					    p->name, t->name, a->name);
					goto next;
				}
			}
		}
	next:;
	}
	return diag_errors() == before;
}
