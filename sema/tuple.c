/* tuple.c: tuple reductions with a user combiner (tx.5 TUPLE REDUCTIONS).
 *
 *     m[i], s[i] = reduce(k < N) (x[i, k], 1.0)
 *         combine (a, b), (c, d) -> (max(a, c), b * exp(a - max(a, c)) + d * exp(c - max(a, c)))
 *         identity (-1.0e30, 0.0);
 *
 * folds the combiner over the range in order, from the identity: the
 * accumulators (a, b) start at the identity and, for k = 0, 1, ... N - 1,
 * become the combiner of themselves and the values (c, d) at k.  It is
 * rewritten here, before resolve, into a group of scans along k (tx.5
 * SCANS) that step together, one per output, and a rule that takes the
 * last step:
 *
 *     m_fold: f32[N + 1, M];   m_fold[0, i] = -1.0e30;
 *     m_fold[k, i] = max(m_fold[k - 1, i], x[i, k - 1]);
 *     s_fold ... likewise;     m[i] = m_fold[N, i];
 *
 * so the order is the range's under every schedule: the step axis is
 * serial (a scan's), the other axes schedule as a scan's do.  Checks
 * here: an identity is given, every tuple has one element per output,
 * the combiner's parameters are distinct names and the combiner and the
 * identity read no tensor or axis, one range 'k < N' whose bound does not
 * use the outputs' axes, outputs declared with their shape and naming the
 * same axes.
 */
#include <string.h>

#include "sema/sema.h"

typedef struct {
	const char **from;
	Expr **to;
	int n;
} Subst;

/* a copy of e with each name in s replaced by a copy of its expression */
static Expr *
copy(Expr *e, const Subst *s)
{
	if (!e)
		return NULL;
	if (e->kind == EXPR_NAME && s)
		for (int i = 0; i < s->n; i++)
			if (e->id.name == s->from[i])
				return copy(s->to[i], NULL);
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

static Expr *
access(Loc loc, const char *name, Expr *first, const char **axes, Loc *locs, int nd)
{
	Expr *a = ast_expr(EXPR_ACCESS, loc);
	a->call.name = name;
	a->call.name_loc = loc;
	a->call.nargs = nd + 1;
	a->call.args = arena_alloc(perm, (size_t)(nd + 2) * sizeof *a->call.args);
	a->call.args[0] = first;
	for (int d = 0; d < nd; d++)
		a->call.args[d + 1] = ast_name(locs[d], axes[d]);
	return a;
}

static Rule *
scan_rule(Rule *proto, const char *name, bool init, const char **axes, Loc *locs, int nd,
    Loc step_loc, Expr *value)
{
	Rule *r = arena_alloc(perm, sizeof *r);
	r->loc = proto->loc;
	r->name = name;
	r->name_loc = proto->name_loc;
	r->naxes = nd + 1;
	r->axes = arena_alloc(perm, (size_t)(nd + 2) * sizeof *r->axes);
	r->axis_locs = arena_alloc(perm, (size_t)(nd + 2) * sizeof *r->axis_locs);
	r->axes[0] = init ? NULL : axes[nd];
	r->axis_locs[0] = step_loc;
	for (int d = 0; d < nd; d++) {
		r->axes[d + 1] = axes[d];
		r->axis_locs[d + 1] = locs[d];
	}
	if (init) {
		r->init = true;
		r->init_dim = 0;
		r->init_step = 0;
		r->init_loc = step_loc;
	}
	r->value = value;
	return r;
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
	/* the range: one `k < N` or `k <= N` */
	Expr *rg = t->ranges[0];
	if (t->nranges != 1 || rg->kind != EXPR_BINARY ||
	    (rg->bin.op != OP_LT && rg->bin.op != OP_LE) || rg->bin.a->kind != EXPR_NAME) {
		diag_error(rg->loc, "a tuple reduction takes one range, 'k < N' or 'k <= N'");
		return false;
	}
	const char *ax = rg->bin.a->id.name;
	Expr *hi = rg->bin.b;
	if (rg->bin.op == OP_LE)
		hi = ast_binary(OP_ADD, rg->bin.op_loc, hi, ast_int(hi->loc, 1));
	/* the outputs: declared, the same axis names */
	const char **axes = arena_alloc(perm, (size_t)(t->nlhs[0] + 2) * sizeof *axes);
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
			if (e->id.name == ax) {
				diag_error(rg->bin.a->loc, "the reduction axis '%s' is also a pure axis", ax);
				return false;
			}
			if (uses_name(hi, e->id.name)) {
				diag_error(hi->loc, "the bound of a tuple reduction cannot use the pure "
				    "axis '%s' (a size or a constant)", e->id.name);
				return false;
			}
		}
	}
	axes[nd] = ax;
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
		if (sema_name_taken(k, pn[j]) || pn[j] == ax) {
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
		if (reads(t->comb[j], "the combiner of a tuple reduction", axes, nd + 1) ||
		    reads(t->ident[j], "the identity of a tuple reduction", axes, nd + 1))
			return false;
	for (int j = 0; j < n; j++)
		if (reads(t->ident[j], "the identity of a tuple reduction", pn, 2 * n))
			return false;
	/* the scans, one per output, stepping together along ax */
	const char **sn = arena_alloc(perm, (size_t)(n + 1) * sizeof *sn);
	for (int j = 0; j < n; j++) {
		const char *base = arena_printf(perm, "%s_fold", t->names[j]);
		sn[j] = intern_cstr(base);
		for (int i = 2; sema_name_taken(k, sn[j]); i++)
			sn[j] = intern_cstr(arena_printf(perm, "%s%d", base, i));
		Tensor *out = decl_of(k, t->names[j]);
		Tensor *d = arena_alloc(perm, sizeof *d);
		d->loc = t->loc;
		d->name = sn[j];
		d->role = ROLE_TEMP;
		d->elem = out->elem;
		d->declared = true;
		d->abi_index = -1;
		d->stage_index = -1;
		d->ndims = out->ndims + 1;
		d->shape = arena_alloc(perm, (size_t)(d->ndims + 1) * sizeof *d->shape);
		d->shape[0] = ast_binary(OP_ADD, hi->loc, copy(hi, NULL), ast_int(hi->loc, 1));
		d->shape[0]->loc = hi->loc;
		for (int i = 0; i < out->ndims; i++)
			d->shape[i + 1] = copy(out->shape[i], NULL);
		push(k, cap, d, NULL);
	}
	Loc sl = rg->bin.a->loc;
	Expr *prev = ast_binary(OP_SUB, sl, ast_name(sl, ax), ast_int(sl, 1));
	prev->loc = sl;
	Subst back = { &ax, &prev, 1 };
	Subst s = { pn, arena_alloc(perm, (size_t)(2 * n + 1) * sizeof(Expr *)), 2 * n };
	for (int j = 0; j < n; j++) {
		s.to[j] = access(t->accs[j]->loc, sn[j], copy(prev, NULL), axes, locs, nd);
		s.to[n + j] = copy(t->vals[j], &back);
	}
	for (int j = 0; j < n; j++) {
		Rule proto = *r;
		proto.name_loc = t->name_locs[j];
		push(k, cap, NULL, scan_rule(&proto, sn[j], true, axes, locs, nd, t->ident_loc,
		    copy(t->ident[j], NULL)));
		push(k, cap, NULL, scan_rule(&proto, sn[j], false, axes, locs, nd, sl,
		    copy(t->comb[j], &s)));
	}
	/* each output takes the last step */
	for (int j = 0; j < n; j++) {
		Rule *o = j == 0 ? r : arena_alloc(perm, sizeof *o);
		if (j > 0) {
			*o = *r;
			o->name = t->names[j];
			o->name_loc = t->name_locs[j];
		}
		o->tuple = NULL;
		o->naxes = nd;
		o->fold_axis = ax;
		o->fold = sn[j];
		o->axes = axes;
		o->axis_locs = locs;
		Expr *a = ast_expr(EXPR_ACCESS, t->loc);
		a->call.name = sn[j];
		a->call.name_loc = t->loc;
		a->call.nargs = nd + 1;
		a->call.args = arena_alloc(perm, (size_t)(nd + 2) * sizeof *a->call.args);
		a->call.args[0] = copy(hi, NULL);
		for (int d = 0; d < nd; d++)
			a->call.args[d + 1] = ast_name(locs[d], axes[d]);
		o->value = a;
		if (j > 0)
			push(k, cap, NULL, o);
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
