/* tuple.c: tuple reductions with a user combiner (tx.5 TUPLE REDUCTIONS).
 *
 *     m[i], s[i] = reduce(k < N) (x[i, k], 1.0)
 *         combine (a, b), (c, d) -> (max(a, c), b * exp(a - max(a, c)) + d * exp(c - max(a, c)))
 *         identity (-1.0e30, 0.0);
 *
 * folds the combiner over the range in order, from the identity: the
 * accumulators (a, b) start at the identity and, for each point of the
 * ranges (the first range outermost, as in sum) where the `where` holds,
 * become the combiner of themselves and the values (c, d) there.  It is
 * rewritten here, before resolve, into a pure rule and an update
 * definition (tx.5 UPDATES) per output, the combiner's parameters
 * replaced by the outputs' current values and the values:
 *
 *     m[i] = -1.0e30;   for (k < N) m[i] = max(m[i], x[i, k]);
 *     s[i] = 0.0;       for (k < N) s[i] = s[i] * exp(m[i] - ...) + ...;
 *
 * marked as one group (Rule.tgroup): stages.c computes the outputs one
 * after the other, the first output last, and lowering runs the updates
 * of the group together in the first output's update nest, each reading
 * the values all of them had before the step (lower.c).  So each output
 * point holds one accumulator tuple, its own elements, and the range is
 * scheduled on the first output.  A combiner declared `combine
 * associative` may also be rfactored (partial tuples of chunks of the
 * range, combined in the range's order by the combiner: sched_stages.c).
 * Checks here: an identity is given, every tuple has one element per
 * output, the combiner's parameters are distinct names, the combiner and
 * the identity read no tensor or axis, the ranges' bounds do not use the
 * outputs' axes, outputs declared with their shape and naming the same
 * axes.
 */
#include <string.h>

#include "sema/sema.h"

typedef struct {
	const char **from;
	Expr **to;
	int n;
	TupleRed *rec;     /* records the copies of to[n / 2 ..] (the values) */
} Subst;

/* a copy of e with each name in s replaced by a copy of its expression */
static Expr *
copy(Expr *e, const Subst *s)
{
	if (!e)
		return NULL;
	if (e->kind == EXPR_NAME && s)
		for (int i = 0; i < s->n; i++)
			if (e->id.name == s->from[i]) {
				Expr *c = copy(s->to[i], NULL);
				int v = i - s->n / 2;
				if (s->rec && v >= 0)
					*ARENA_PUSH(perm, s->rec->ecopies[v], s->rec->necopies[v],
					    s->rec->capecopies[v]) = c;
				return c;
			}
	Expr *n = arena_alloc(perm, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		n->call.args = arena_alloc(perm, (size_t)(e->call.nargs + 1) * sizeof *n->call.args);
		for (int i = 0; i < e->call.nargs; i++)
			n->call.args[i] = copy(e->call.args[i], s);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		n->bin.a = copy(e->bin.a, s);
		n->bin.b = copy(e->bin.b, s);
		break;
	case EXPR_REDUCE:
		n->reduce.axes = arena_alloc(perm, (size_t)(e->reduce.naxes + 1) * sizeof *n->reduce.axes);
		for (int i = 0; i < e->reduce.naxes; i++) {
			n->reduce.axes[i] = e->reduce.axes[i];
			n->reduce.axes[i].lo = copy(e->reduce.axes[i].lo, s);
			n->reduce.axes[i].hi = copy(e->reduce.axes[i].hi, s);
		}
		n->reduce.body = copy(e->reduce.body, s);
		n->reduce.where = copy(e->reduce.where, s);
		break;
	default:
		break;
	}
	return n;
}

/* The first access, reduction or name among `bad` in e, reported as the
 * error `what` uses it; false when there is none. */
static bool
reads(Expr *e, const char *what, const char **bad, int nbad)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_NAME:
		for (int i = 0; i < nbad; i++)
			if (e->id.name == bad[i]) {
				diag_error(e->loc, "%s uses the axis '%s'; it may use only constants, "
				    "scalar parameters and the combiner's parameters", what, e->id.name);
				return true;
			}
		return false;
	case EXPR_ACCESS:
		diag_error(e->loc, "%s reads the tensor '%s'; it may use only constants, scalar parameters "
		    "and the combiner's parameters (what is read at each point goes in the "
		    "values after the range)", what, e->call.name);
		return true;
	case EXPR_REDUCE:
		diag_error(e->loc, "%s cannot hold a reduction", what);
		return true;
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			if (reads(e->call.args[i], what, bad, nbad))
				return true;
		return false;
	case EXPR_UNARY: case EXPR_BINARY:
		return reads(e->bin.a, what, bad, nbad) || reads(e->bin.b, what, bad, nbad);
	default:
		return false;
	}
}

static bool
uses_name(Expr *e, const char *name)
{
	Expr *x = e;
	if (!x)
		return false;
	switch (x->kind) {
	case EXPR_NAME:
		return x->id.name == name;
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < x->call.nargs; i++)
			if (uses_name(x->call.args[i], name))
				return true;
		return false;
	case EXPR_UNARY: case EXPR_BINARY:
		return uses_name(x->bin.a, name) || uses_name(x->bin.b, name);
	default:
		return false;
	}
}

static Tensor *
decl_of(Kernel *k, const char *n)
{
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].decl && k->items[i].decl->name == n)
			return k->items[i].decl;
	return NULL;
}

static bool
arity(int got, int n, Loc loc, const char *what)
{
	if (got == n)
		return true;
	diag_error(loc, "a tuple reduction of %d outputs takes %d %s, not %d", n, n, what, got);
	return false;
}

/* name[axes] */
static Expr *
access(Loc loc, const char *name, const char **axes, Loc *locs, int nd)
{
	Expr *a = ast_expr(EXPR_ACCESS, loc);
	a->call.name = name;
	a->call.name_loc = loc;
	a->call.nargs = nd;
	a->call.args = arena_alloc(perm, (size_t)(nd + 1) * sizeof *a->call.args);
	for (int d = 0; d < nd; d++)
		a->call.args[d] = ast_name(locs[d], axes[d]);
	return a;
}

static void
push(Kernel *k, int *cap, Tensor *decl, Rule *rule)
{
	KernelItem *it = ARENA_PUSH(perm, k->items, k->nitems, *cap);
	it->decl = decl;
	it->rule = rule;
}

/* Checks t and rewrites it; false (nothing added) after an error. */
static bool
rewrite(Kernel *k, Rule *r, int *cap)
{
	TupleRed *t = r->tuple;
	int n = t->n;
	if (!t->ident) {
		diag_error(t->loc, "a tuple reduction without an identity: add 'identity (...)' "
		    "after the combiner, the value of each output over an empty range");
		return false;
	}
	if (!arity(t->nvals, n, t->vals[0]->loc, "values") ||
	    !arity(t->naccs, n, t->comb_loc, "accumulators in its combiner") ||
	    !arity(t->nelems, n, t->comb_loc, "values in its combiner") ||
	    !arity(t->ncomb, n, t->comb[0]->loc, "results from its combiner") ||
	    !arity(t->nident, n, t->ident_loc, "identities"))
		return false;
	/* the outputs: declared, the same axis names */
	const char **axes = arena_alloc(perm, (size_t)(t->nlhs[0] + t->nraxes + 1) * sizeof *axes);
	Loc *locs = arena_alloc(perm, (size_t)(t->nlhs[0] + 1) * sizeof *locs);
	int nd = t->nlhs[0];
	for (int j = 0; j < n; j++) {
		if (!decl_of(k, t->names[j])) {
			diag_error(t->name_locs[j], "the output '%s' of a tuple reduction must be "
			    "declared with its shape", t->names[j]);
			return false;
		}
		if (decl_of(k, t->names[j])->ndims != t->nlhs[j]) {
			diag_error(t->name_locs[j], "'%s' has %d dimension%s but this tuple reduction "
			    "names %d ax%s", t->names[j], decl_of(k, t->names[j])->ndims,
			    decl_of(k, t->names[j])->ndims == 1 ? "" : "s", t->nlhs[j],
			    t->nlhs[j] == 1 ? "is" : "es");
			return false;
		}
		for (int j2 = 0; j2 < j; j2++)
			if (t->names[j2] == t->names[j]) {
				diag_error(t->name_locs[j], "'%s' is twice an output of this tuple "
				    "reduction", t->names[j]);
				return false;
			}
		if (t->nlhs[j] != nd) {
			diag_error(t->name_locs[j], "the outputs of a tuple reduction name the same "
			    "axes ('%s' has %d, '%s' %d)", t->names[0], nd, t->names[j], t->nlhs[j]);
			return false;
		}
		for (int d = 0; d < nd; d++) {
			Expr *e = t->lhs[j][d];
			if (e->kind != EXPR_NAME || (j > 0 && e->id.name != axes[d])) {
				diag_error(e->loc, e->kind != EXPR_NAME ? "an index on the left of '=' "
				    "must be an axis name" : "the outputs of a tuple reduction name the "
				    "same axes in the same order");
				return false;
			}
			axes[d] = e->id.name;
			locs[d] = e->loc;
			for (int q = 0; q < t->nraxes; q++) {
				RedAxis *ra = &t->raxes[q];
				if (e->id.name == ra->name) {
					diag_error(ra->loc, "the reduction axis '%s' is also a pure axis",
					    ra->name);
					return false;
				}
				Expr *b = uses_name(ra->hi, e->id.name) ? ra->hi :
				    uses_name(ra->lo, e->id.name) ? ra->lo : NULL;
				if (b) {
					diag_error(b->loc, "the bound of a tuple reduction cannot use the "
					    "pure axis '%s' (a size or a constant)", e->id.name);
					return false;
				}
			}
		}
	}
	for (int q = 0; q < t->nraxes; q++)
		axes[nd + q] = t->raxes[q].name;
	/* the combiner: distinct parameter names; it and the identity read
	 * no tensor and no axis */
	const char **pn = arena_alloc(perm, (size_t)(2 * n + 1) * sizeof *pn);
	for (int j = 0; j < 2 * n; j++) {
		Expr *p = j < n ? t->accs[j] : t->elems[j - n];
		if (p->kind != EXPR_NAME) {
			diag_error(p->loc, "a parameter of a combiner must be a name");
			return false;
		}
		pn[j] = p->id.name;
		for (int j2 = 0; j2 < j; j2++)
			if (pn[j2] == pn[j]) {
				diag_error(p->loc, "the combiner names '%s' twice", pn[j]);
				return false;
			}
		bool range = false;
		for (int q = 0; q < t->nraxes; q++)
			range |= t->raxes[q].name == pn[j];
		if (sema_name_taken(k, pn[j]) || range) {
			diag_error(p->loc, "the combiner's parameter '%s' hides a name of the kernel",
			    pn[j]);
			return false;
		}
		for (int d = 0; d < nd; d++)
			if (axes[d] == pn[j]) {
				diag_error(p->loc, "the combiner's parameter '%s' hides an axis", pn[j]);
				return false;
			}
	}
	for (int j = 0; j < n; j++)
		if (reads(t->comb[j], "the combiner of a tuple reduction", axes, nd + t->nraxes) ||
		    reads(t->ident[j], "the identity of a tuple reduction", axes, nd + t->nraxes))
			return false;
	for (int j = 0; j < n; j++)
		if (reads(t->ident[j], "the identity of a tuple reduction", pn, 2 * n))
			return false;
	/* each output: its identity, then its update, the combiner's
	 * parameters replaced by the outputs' current values and the values */
	t->outs = arena_alloc(perm, (size_t)(n + 1) * sizeof *t->outs);
	Subst s = { pn, arena_alloc(perm, (size_t)(2 * n + 1) * sizeof(Expr *)), 2 * n, t };
	t->ecopies = arena_alloc(perm, (size_t)(n + 1) * sizeof *t->ecopies);
	t->necopies = arena_alloc(perm, (size_t)(n + 1) * sizeof *t->necopies);
	t->capecopies = arena_alloc(perm, (size_t)(n + 1) * sizeof *t->capecopies);
	for (int j = 0; j < n; j++) {
		t->outs[j] = decl_of(k, t->names[j]);
		s.to[j] = access(t->accs[j]->loc, t->names[j], axes, locs, nd);
		s.to[n + j] = t->vals[j];
	}
	for (int j = 0; j < n; j++) {
		Rule *o = j == 0 ? r : arena_alloc(perm, sizeof *o);
		if (j > 0) {
			*o = *r;
			o->name = t->names[j];
			o->name_loc = t->name_locs[j];
		}
		o->tuple = NULL;
		o->naxes = nd;
		o->axes = axes;
		o->axis_locs = locs;
		o->value = copy(t->ident[j], NULL);
		if (j > 0)
			push(k, cap, NULL, o);
	}
	for (int j = 0; j < n; j++) {
		Rule *u = arena_alloc(perm, sizeof *u);
		u->loc = r->loc;
		u->name = t->names[j];
		u->name_loc = t->name_locs[j];
		u->update = true;
		u->upd.naxes = t->nraxes;
		u->upd.axes = arena_alloc(perm, (size_t)(t->nraxes + 1) * sizeof *u->upd.axes);
		for (int q = 0; q < t->nraxes; q++) {
			u->upd.axes[q] = t->raxes[q];
			u->upd.axes[q].lo = copy(t->raxes[q].lo, NULL);
			u->upd.axes[q].hi = copy(t->raxes[q].hi, NULL);
		}
		u->upd.where = copy(t->where, NULL);
		u->target = access(t->name_locs[j], t->names[j], axes, locs, nd);
		u->value = copy(t->comb[j], &s);
		u->tgroup = t;
		u->tpos = j;
		push(k, cap, NULL, u);
	}
	return true;
}
void
tuple_kernel(Kernel *k)
{
	int n = k->nitems, cap = k->nitems;
	for (int i = 0; i < n; i++) {
		Rule *r = k->items[i].rule;
		if (r && r->tuple && !rewrite(k, r, &cap)) {
			/* keep the outputs defined, so that later passes say no more */
			TupleRed *t = r->tuple;
			for (int j = 0; j < t->n; j++) {
				Rule *o = j == 0 ? r : arena_alloc(perm, sizeof *o);
				*o = *r;
				o->tuple = NULL;
				o->name = t->names[j];
				o->name_loc = t->name_locs[j];
				o->value = ast_int(r->loc, 0);
				o->axes = arena_alloc(perm, (size_t)(t->nlhs[j] + 1) * sizeof *o->axes);
				o->axis_locs = arena_alloc(perm, (size_t)(t->nlhs[j] + 1) * sizeof *o->axis_locs);
				o->naxes = 0;
				for (int d = 0; d < t->nlhs[j]; d++)
					if (t->lhs[j][d]->kind == EXPR_NAME) {
						o->axis_locs[o->naxes] = t->lhs[j][d]->loc;
						o->axes[o->naxes++] = t->lhs[j][d]->id.name;
					}
				Tensor *dt = decl_of(k, t->names[j]);
				if (dt && dt->ndims != o->naxes) {
					/* axes of its own, for the shape it has */
					o->axes = arena_alloc(perm, (size_t)(dt->ndims + 1) * sizeof *o->axes);
					o->axis_locs = arena_alloc(perm, (size_t)(dt->ndims + 1) * sizeof *o->axis_locs);
					for (int d = 0; d < dt->ndims; d++) {
						o->axes[d] = intern_cstr(arena_printf(perm, "tuple_axis%d", d));
						o->axis_locs[d] = t->name_locs[j];
					}
					o->naxes = dt->ndims;
				}
				if (j > 0)
					push(k, &cap, NULL, o);
			}
		}
	}
}
