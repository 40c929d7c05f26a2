/* callcopy.c: a callee's names, expressions and rules in its caller's
 * terms, for calls.c (tx.5 CALLS).  Its tensors become the caller's (the
 * arguments, the results, RESULT__STAGE for its other stages: calls.c
 * pairs them, calls_tput), its parameters the argument expressions, its
 * axes keep their names unless the caller uses them (then NAME_1,
 * NAME_2, ...), and a size in a rule becomes an i64 cast of its
 * expression, as the callee computed it.
 */
#include <string.h>

#include "sema/calls.h"

const char **calls_made;
int calls_nmade, calls_capmade;

bool
calls_name_used(Kernel *k, const char *n)
{
	if (sema_name_taken(k, n))
		return true;
	for (int i = 0; i < k->nitems; i++) {
		Call *c = k->items[i].call;
		for (int j = 0; c && j < c->nouts; j++)
			if (c->outs[j] == n)
				return true;
	}
	for (int i = 0; i < calls_nmade; i++)
		if (calls_made[i] == n)
			return true;
	return false;
}

const char *
calls_tmap(Ex *x, const char *n)
{
	for (int i = 0; i < x->nt; i++)
		if (x->tfrom[i] == n)
			return x->tto[i];
	return NULL;
}

void
calls_tput(Ex *x, const char *from, const char *to)
{
	int n = x->nt, cap = x->capt;
	*ARENA_PUSH(perm, x->tfrom, n, cap) = from;
	n = x->nt;
	*ARENA_PUSH(perm, x->tto, n, x->capt) = to;
	x->nt = n;
}

/* Whether n is the caller's name of a callee tensor. */
static bool
is_target(Ex *x, const char *n)
{
	for (int j = 0; j < x->nt; j++)
		if (x->tto[j] == n)
			return true;
	return false;
}

/* The caller's name for a callee axis: its own, or NAME_1 ... where the
 * caller already uses it. */
static const char *
axis_name(Ex *x, const char *a)
{
	if (!a)
		return NULL;
	for (int i = 0; i < x->na; i++)
		if (x->afrom[i] == a)
			return x->ato[i];
	const char *n = a;
	for (int i = 1; calls_name_used(x->k, n) || calls_tmap(x, n) || is_target(x, n); i++)
		n = intern_cstr(arena_printf(perm, "%s_%d", a, i));
	int cnt = x->na, cap = x->capa;
	*ARENA_PUSH(perm, x->afrom, cnt, cap) = a;
	cnt = x->na;
	*ARENA_PUSH(perm, x->ato, cnt, x->capa) = n;
	x->na = cnt;
	return n;
}

/* The axes in scope in a callee expression: a rule's pure axes, then the
 * axes of the reductions around. */
struct Scope {
	const char **names; int n;
	RedAxis *red; int nred;
	struct Scope *up;
};

static bool
in_scope(Scope *s, const char *n)
{
	for (; s; s = s->up) {
		for (int i = 0; i < s->n; i++)
			if (s->names[i] == n)
				return true;
		for (int i = 0; i < s->nred; i++)
			if (s->red[i].name == n)
				return true;
	}
	return false;
}

Param *
calls_callee_param(Kernel *f, const char *n)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].name == n)
			return &f->params[i];
	return NULL;
}

/* A callee expression in the caller's terms. */
Expr *
calls_sub(Ex *x, Scope *s, Expr *e)
{
	if (!e)
		return NULL;
	Expr *n = arena_alloc(perm, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case EXPR_NAME: {
		if (in_scope(s, e->id.name)) {
			n->id.name = axis_name(x, e->id.name);
			return n;
		}
		Param *pa = calls_callee_param(x->f, e->id.name);
		if (pa && x->psub[pa->index]) {
			Expr *v = callexpr_dup(x->psub[pa->index]);
			if (!pa->is_size)
				return v;
			v->loc = e->loc;
			if (x->nocast || v->kind == EXPR_NAME)
				return v;
			/* in a rule, a size is an i64: `8` or `N * 2` in its place
			 * computes in i64 too, as the callee's did */
			Expr *c = ast_expr(EXPR_CAST, e->loc);
			c->call.cast_to = TY_INDEX;
			c->call.name = type_name(TY_INDEX);
			c->call.name_loc = e->loc;
			c->call.nargs = 1;
			c->call.args = arena_alloc(perm, 2 * sizeof *c->call.args);
			c->call.args[0] = v;
			return c;
		}
		const char *t = calls_tmap(x, e->id.name);
		if (t)
			n->id.name = t;
		return n;
	}
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT: {
		if (e->kind == EXPR_ACCESS) {
			const char *t = calls_tmap(x, e->call.name);
			if (t)
				n->call.name = t;
		}
		n->call.args = arena_alloc(perm, (size_t)(e->call.nargs + 1) * sizeof *n->call.args);
		for (int i = 0; i < e->call.nargs; i++)
			n->call.args[i] = calls_sub(x, s, e->call.args[i]);
		return n;
	}
	case EXPR_UNARY: case EXPR_BINARY:
		n->bin.a = calls_sub(x, s, e->bin.a);
		n->bin.b = calls_sub(x, s, e->bin.b);
		return n;
	case EXPR_REDUCE: {
		Scope in = { .red = e->reduce.axes, .nred = e->reduce.naxes, .up = s };
		n->reduce.axes = arena_alloc(perm, (size_t)(e->reduce.naxes + 1) * sizeof *n->reduce.axes);
		for (int i = 0; i < e->reduce.naxes; i++) {
			RedAxis *a = &n->reduce.axes[i];
			*a = e->reduce.axes[i];
			a->name = axis_name(x, a->name);
			x->nocast++;
			a->lo = calls_sub(x, s, a->lo);
			a->hi = calls_sub(x, s, a->hi);
			x->nocast--;
		}
		n->reduce.body = calls_sub(x, &in, e->reduce.body);
		n->reduce.where = calls_sub(x, &in, e->reduce.where);
		return n;
	}
	default:
		return n;
	}
}

Rule *
calls_copy_rule(Ex *x, Rule *r)
{
	Rule *n = arena_alloc(perm, sizeof *n);
	*n = *r;
	n->tensor = NULL;
	n->tgroup = NULL;
	n->upd_assoc = false;
	n->upd_other = NULL;
	const char *name = calls_tmap(x, r->name);
	n->name = name ? name : r->name;
	n->site = x->site;
	n->site_name = r->name;
	for (int j = 0; j < x->nouts; j++)
		if (n->name == x->outs[j])
			n->name_loc = x->out_locs[j];
	if (r->update) {
		Scope dom = { .red = r->upd.axes, .nred = r->upd.naxes };
		n->upd.axes = arena_alloc(perm, (size_t)(r->upd.naxes + 1) * sizeof *n->upd.axes);
		for (int i = 0; i < r->upd.naxes; i++) {
			RedAxis *a = &n->upd.axes[i];
			*a = r->upd.axes[i];
			a->name = axis_name(x, a->name);
			x->nocast++;
			a->lo = calls_sub(x, NULL, a->lo);
			a->hi = calls_sub(x, NULL, a->hi);
			x->nocast--;
		}
		n->upd.where = calls_sub(x, &dom, r->upd.where);
		n->value = calls_sub(x, &dom, r->value);
		if (r->upd_add) {
			n->target = n->value->bin.a;
			n->upd_rhs = n->value->bin.b;
		} else {
			n->target = calls_sub(x, &dom, r->target);
		}
		return n;
	}
	Scope pure = { .names = r->axes, .n = r->naxes };
	n->axes = arena_alloc(perm, (size_t)(r->naxes + 1) * sizeof *n->axes);
	for (int i = 0; i < r->naxes; i++)
		n->axes[i] = axis_name(x, r->axes[i]);
	n->value = calls_sub(x, &pure, r->value);
	return n;
}

void
calls_emit(Ex *x, KernelItem it)
{
	*ARENA_PUSH(perm, x->items, x->nitems, x->capitems) = it;
}
