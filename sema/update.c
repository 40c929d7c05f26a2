/* update.c: update definitions, tx.5 UPDATES.
 *
 * `for (r < N) h[clamp(x[r], 0, B - 1)] += 1;` updates a stage already
 * defined by a pure rule, over a domain of reduction axes, at positions
 * that may depend on the data.  resolve.c binds it to its stage and keeps
 * the pure axes its left side names in their own positions; this file
 * checks the rest: the domain's axes (distinct, shadowing nothing, bounds
 * over sizes and constants), no reduction inside, and that the update
 * reads its own stage only at the position it writes (its current
 * value).  It also finds whether the update is an associative combination
 * of that value with the rest (+=, max(h[..], v), ...), which decides the
 * schedules lowering allows (lower/update.c); the updates a tuple
 * reduction becomes (tuple.c) are not: their combiner decides.  Runs
 * after reduce, before stages; that each position lies inside the stage
 * is proved by bound inference, as for a read.
 */
#include "sema/sema.h"

static const char *
text_of(Loc l)
{
	const SrcFile *f = source_get(l.file);
	if (!f || l.end < l.begin || l.end > f->len)
		return "?";
	return arena_strndup(perm, f->text + l.begin, l.end - l.begin);
}

/* Whether two checked expressions are the same, node for node (also the
 * schedule generator's test of two reads at one index: auto/cpu.c). */
bool
sema_same_expr(Expr *a, Expr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case EXPR_INT: case EXPR_BOOL:
		return a->ival == b->ival;
	case EXPR_FLOAT:
		return a->fval == b->fval;
	case EXPR_NAME:
		return a->id.name == b->id.name && a->id.ref == b->id.ref;
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		if (a->call.name != b->call.name || a->call.nargs != b->call.nargs ||
		    a->call.cast_to != b->call.cast_to)
			return false;
		for (int i = 0; i < a->call.nargs; i++)
			if (!sema_same_expr(a->call.args[i], b->call.args[i]))
				return false;
		return true;
	case EXPR_UNARY: case EXPR_BINARY:
		return a->bin.op == b->bin.op && sema_same_expr(a->bin.a, b->bin.a) &&
		    sema_same_expr(a->bin.b, b->bin.b);
	default:
		return false;
	}
}

typedef struct {
	Rule *r;
	bool bad;
} Walk;

/* A reduction inside, or a read of the stage elsewhere than its target. */
static bool
inside(Expr *e, void *ctx)
{
	Walk *w = ctx;
	Rule *r = w->r;
	if (e->kind == EXPR_REDUCE) {
		diag_error(e->loc, "an update definition cannot hold a reduction; compute it "
		    "in a stage of its own");
		w->bad = true;
		return false;
	}
	if (e->kind == EXPR_ACCESS && e->call.tensor == r->tensor && e != r->target &&
	    !sema_same_expr(e, r->target)) {
		diag_error(e->loc, "the update of '%s' reads '%s' at another position than the "
		    "one it writes: %s", r->name, r->name, text_of(e->loc));
		diag_note(r->target->loc, "it may read only its current value, %s (each step "
		    "reads what the steps before it left there)", text_of(r->target->loc));
		w->bad = true;
		return false;
	}
	return true;
}

static bool
reads_target(Expr *e, void *ctx)
{
	Walk *w = ctx;
	if (e->kind == EXPR_ACCESS && e->call.tensor == w->r->tensor)
		w->bad = true;
	return !w->bad;
}

static bool
is_target(Rule *r, Expr *e, Expr *other)
{
	if (!sema_same_expr(e, r->target))
		return false;
	Walk w = { r, false };
	check_walk(other, reads_target, &w);
	return !w.bad;
}

/* value = current op other, with op associative: sum, product, max, min. */
static void
classify(Rule *r)
{
	Expr *v = r->value;
	Expr *a = NULL, *b = NULL;
	r->upd_assoc = false;
	if (v->kind == EXPR_BINARY && (v->bin.op == OP_ADD || v->bin.op == OP_MUL)) {
		a = v->bin.a, b = v->bin.b;
		r->upd_op = v->bin.op == OP_ADD ? RED_SUM : RED_PROD;
	} else if (v->kind == EXPR_CALL && v->call.nargs == 2 &&
	    (types_builtin(v->call.name) == BI_MAX || types_builtin(v->call.name) == BI_MIN)) {
		a = v->call.args[0], b = v->call.args[1];
		r->upd_op = types_builtin(v->call.name) == BI_MAX ? RED_MAX : RED_MIN;
	} else {
		return;
	}
	if (is_target(r, a, b))
		r->upd_other = b;
	else if (is_target(r, b, a))
		r->upd_other = a;
	else
		return;
	r->upd_assoc = true;
}

static void
check_domain(Kernel *k, Rule *r)
{
	Tensor *t = r->tensor;
	for (int i = 0; i < r->upd.naxes; i++) {
		RedAxis *ax = &r->upd.axes[i];
		ax->index = i;
		if (ax->lo)
			shapes_size_expr(ax->lo, "the range of an update");
		if (ax->hi)
			shapes_size_expr(ax->hi, "the range of an update");
		bool bad = false;
		for (int j = 0; j < i && !bad; j++)
			if (r->upd.axes[j].name == ax->name) {
				diag_error(ax->loc, "axis '%s' appears twice in the update's ranges",
				    ax->name);
				bad = true;
			}
		for (int j = 0; t && t->rule && j < t->rule->naxes && !bad; j++)
			if (t->rule->axes[j] == ax->name) {
				diag_error(ax->loc, "the update's axis '%s' has the name of a pure axis "
				    "of '%s'", ax->name, t->name);
				diag_note(t->rule->axis_locs[j], "pure axis '%s' here", ax->name);
				bad = true;
			}
		Param *pa = bad ? NULL : resolve_param(k, ax->name);
		Tensor *tt = bad || pa ? NULL : resolve_tensor(k, ax->name);
		if (pa)
			diag_error(ax->loc, "the update's axis '%s' shadows the parameter '%s'",
			    ax->name, ax->name);
		else if (tt)
			diag_error(ax->loc, "the update's axis '%s' has the name of the tensor '%s'",
			    ax->name, ax->name);
	}
}

void
update_kernel(Kernel *k)
{
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (!r || !r->update)
			continue;
		if (!r->tensor) {      /* resolve.c reported it; the domain still */
			for (int j = 0; j < r->upd.naxes; j++)
				r->upd.axes[j].index = j;
			continue;
		}
		check_domain(k, r);
		Walk w = { r, false };
		check_walk(r->value, inside, &w);
		for (int d = 0; d < r->target->call.nargs; d++)
			check_walk(r->target->call.args[d], inside, &w);
		check_walk(r->upd.where, inside, &w);
		if (!w.bad && !r->tgroup)   /* a tuple reduction: its combiner decides */
			classify(r);
	}
}
