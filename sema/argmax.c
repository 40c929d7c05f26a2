/* argmax.c: argmax and argmin (tx.5 REDUCTIONS) as two reductions.
 *
 *     y[i] = argmax(k < N) x[i, k];
 *
 * becomes a stage of the values and a reduction of the indices:
 *
 *     y_argmax[i] = maximum(k < N) x[i, k];
 *     y[i] = minimum(k < N where x[i, k] == y_argmax[i] || x[i, k] != x[i, k]) k;
 *
 * so the result is the smallest index of the largest value (ties go to
 * the first), or the first NaN's index when the row holds a NaN (as
 * numpy's argmax); both reductions are associative and commutative, so
 * every schedule, rfactor included, gives the same index.  Over an empty
 * range it is minimum's identity, the largest i64.  The stage of the
 * values is an ordinary stage: schedules name it (y_argmax).  Runs on the
 * parsed kernel, before resolve.
 */
#include <string.h>

#include "sema/sema.h"

/* Whether a parameter, tensor or stage of k is named n (argmax.c and
 * tuple.c make fresh stage names with it). */
bool
sema_name_taken(Kernel *k, const char *n)
{
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].name == n)
			return true;
	for (int i = 0; i < k->nitems; i++)
		if ((k->items[i].decl && k->items[i].decl->name == n) ||
		    (k->items[i].rule && k->items[i].rule->name == n))
			return true;
	return false;
}

static Expr *
binary(Op op, Expr *a, Expr *b)
{
	return ast_binary(op, a->loc, a, b);
}

static void
rewrite(Kernel *k, Rule *r, int *cap)
{
	Expr *v = r->value;
	bool amax = v->reduce.op == RED_ARGMAX;
	if (v->reduce.naxes != 1) {
		diag_error(v->loc, "%s takes one range (the index it gives is along one axis)",
		    amax ? "argmax" : "argmin");
		r->value = ast_int(v->loc, 0);
		return;
	}
	for (int i = 0; i < r->naxes; i++)
		if (!r->axes[i]) {
			diag_error(v->loc, "%s cannot give the initial value of a scan",
			    amax ? "argmax" : "argmin");
			r->value = ast_int(v->loc, 0);
			return;
		}
	/* the stage of the values: NAME_argmax[axes] = maximum(range) body */
	const char *base = arena_printf(perm, "%s_%s", r->name, amax ? "argmax" : "argmin");
	const char *name = intern_cstr(base);
	for (int i = 2; sema_name_taken(k, name); i++)
		name = intern_cstr(arena_printf(perm, "%s%d", base, i));
	Rule *m = arena_alloc(perm, sizeof *m);
	*m = *r;
	m->name = name;
	m->tensor = NULL;
	Expr *mv = callexpr_dup(v);
	mv->reduce.op = amax ? RED_MAX : RED_MIN;
	m->value = mv;
	/* the indices: minimum(range where (W) && (b == M[axes] || b != b)) k */
	Expr *at = ast_expr(EXPR_ACCESS, v->loc);
	at->call.name = name;
	at->call.name_loc = v->loc;
	at->call.nargs = r->naxes;
	at->call.args = arena_alloc(perm, (size_t)(r->naxes + 1) * sizeof *at->call.args);
	for (int i = 0; i < r->naxes; i++)
		at->call.args[i] = ast_name(r->axis_locs[i], r->axes[i]);
	Expr *hit = binary(OP_OR, binary(OP_EQ, callexpr_dup(v->reduce.body), at),
	    binary(OP_NE, callexpr_dup(v->reduce.body), callexpr_dup(v->reduce.body)));
	Expr *w = v->reduce.where ? binary(OP_AND, v->reduce.where, hit) : hit;
	v->reduce.op = RED_MIN;
	v->reduce.where = w;
	v->reduce.body = ast_name(v->reduce.axes[0].loc, v->reduce.axes[0].name);
	/* an integer tensor takes the index in its own type */
	for (int i = 0; i < k->nitems; i++) {
		Tensor *t = k->items[i].decl;
		if (!t || t->name != r->name || !type_is_int(t->elem) || t->elem == TY_I64)
			continue;
		Expr *c = ast_expr(EXPR_CAST, v->reduce.body->loc);
		c->call.cast_to = t->elem;
		c->call.name = type_name(t->elem);
		c->call.name_loc = c->loc;
		c->call.nargs = 1;
		c->call.args = arena_alloc(perm, 2 * sizeof *c->call.args);
		c->call.args[0] = v->reduce.body;
		v->reduce.body = c;
		break;
	}
	KernelItem *it = ARENA_PUSH(perm, k->items, k->nitems, *cap);
	it->decl = NULL;
	it->rule = m;
}

void
argmax_kernel(Kernel *k)
{
	int n = k->nitems, cap = k->nitems;
	for (int i = 0; i < n; i++) {
		Rule *r = k->items[i].rule;
		if (r && !r->update && r->value && r->value->kind == EXPR_REDUCE &&
		    (r->value->reduce.op == RED_ARGMAX || r->value->reduce.op == RED_ARGMIN))
			rewrite(k, r, &cap);
	}
}
