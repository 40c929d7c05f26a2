/* reduce.c: where reductions may appear and what their ranges may say.
 *
 * A reduction is the whole right-hand side of its rule (anything else
 * would need a temporary per use: the message says to make it a stage of
 * its own), reductions do not nest, range bounds use size parameters,
 * constants and the rule's pure axes (a triangle, a window around i; never
 * another reduction axis), a `where` condition holds no reduction,
 * and reduction axis names are distinct and shadow nothing.
 */
#include "sema/sema.h"

static void
check_axes(Kernel *k, Rule *r, Reduce *red)
{
	for (int i = 0; i < red->naxes; i++) {
		RedAxis *ax = &red->axes[i];
		ax->index = i;
		if (ax->lo)
			shapes_bound_expr(ax->lo);
		if (ax->hi)
			shapes_bound_expr(ax->hi);
		if (!ax->name)
			continue;
		bool bad = false;
		for (int j = 0; j < i && !bad; j++)
			if (red->axes[j].name == ax->name) {
				diag_error(ax->loc, "reduction axis '%s' appears twice", ax->name);
				diag_note(red->axes[j].loc, "previous definition here");
				bad = true;
			}
		for (int j = 0; r && j < r->naxes && !bad; j++)
			if (r->axes[j] == ax->name) {
				diag_error(ax->loc, "reduction axis '%s' shadows the pure axis '%s'",
				    ax->name, ax->name);
				diag_note(r->axis_locs[j], "pure axis '%s' here", ax->name);
				bad = true;
			}
		Param *pa = bad ? NULL : resolve_param(k, ax->name);
		Tensor *t = bad || pa ? NULL : resolve_tensor(k, ax->name);
		if (pa) {
			diag_error(ax->loc, "reduction axis '%s' shadows the parameter '%s'",
			    ax->name, ax->name);
			diag_note(pa->loc, "'%s' declared here", ax->name);
		} else if (t) {
			diag_error(ax->loc, "reduction axis '%s' has the name of the tensor '%s'",
			    ax->name, ax->name);
			diag_note(t->loc, "'%s' declared here", ax->name);
		}
	}
}

static void
scan(Kernel *k, Rule *r, Expr *e, bool top, bool inside)
{
	if (!e)
		return;
	switch (e->kind) {
	case EXPR_REDUCE:
		if (inside)
			diag_error(e->loc, "reductions cannot be nested; compute the inner one "
			    "in a stage of its own");
		else if (!top)
			diag_error(e->loc, "a reduction must be the whole right-hand side of a "
			    "rule; compute it in a stage of its own");
		check_axes(k, r, &e->reduce);
		scan(k, r, e->reduce.body, false, true);
		scan(k, r, e->reduce.where, false, true);
		break;
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			scan(k, r, e->call.args[i], false, inside);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		scan(k, r, e->bin.a, false, inside);
		scan(k, r, e->bin.b, false, inside);
		break;
	default:
		break;
	}
}

void
reduce_kernel(Kernel *k)
{
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (r && !r->update)   /* an update's value: update.c */
			scan(k, r, r->value, true, false);
	}
}
