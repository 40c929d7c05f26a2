/* scans.c: scans (recurrences), tx.5 SCANS.
 *
 * A scan is a declared tensor defined by initial values at steps 0 .. m-1
 * of one axis, its scan axis (`s[0, i] = x[0, i];`), and an update for
 * the later steps (`s[t, i] = s[t - 1, i] + x[t, i];`).  This file checks
 * them: the initial steps are 0 .. m-1 along one axis, the update reads a
 * scan of its group only at `t - c` with 1 <= c <= m (earlier steps that
 * exist), or another state of its group at `t` (the current step, which
 * stages.c orders within the step); an initial value reads a peer only at
 * a constant step up to its own.  It groups the scans whose updates read
 * each other's earlier steps (they advance in the same steps, like an
 * LSTM's h and c).  Runs after resolve, before stages.
 */
#include <stdlib.h>
#include <string.h>

#include "sema/sema.h"

static const char *
text_of(Loc l)
{
	const SrcFile *f = source_get(l.file);
	if (!f || l.end < l.begin || l.end > f->len)
		return "?";
	return arena_strndup(perm, f->text + l.begin, l.end - l.begin);
}

/* The step an access to scan u reads, relative to the current step of the
 * scan `reader`: 1 for u[t - 1, ...], 0 for u[t, ...], -1 for u[t + 1,
 * ...].  False when that index is not the reader's scan axis plus or
 * minus a constant. */
bool
scans_step_back(Tensor *reader, Expr *access, int64_t *back)
{
	Tensor *u = access->call.tensor;
	if (!u || !u->ninits || !reader->ninits || u->scan_dim >= access->call.nargs)
		return false;
	Expr *e = access->call.args[u->scan_dim];
	int64_t c = 0;
	if (e->kind == EXPR_BINARY && (e->bin.op == OP_SUB || e->bin.op == OP_ADD) &&
	    e->bin.b->kind == EXPR_INT) {
		c = e->bin.op == OP_SUB ? e->bin.b->ival : -e->bin.b->ival;
		e = e->bin.a;
	}
	if (e->kind != EXPR_NAME || e->id.ref != REF_PURE_AXIS || e->id.axis != reader->scan_dim)
		return false;
	*back = c;
	return true;
}

/* ---- groups: union-find over the tensors' indices ------------------ */

static int
find(int *up, int i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

typedef struct {
	Kernel *k;
	Tensor *t;         /* the scan whose rule is walked */
	Rule *r;
	int *up;
	int pass;          /* 0: grouping and the checks that need no group, 1: the rest */
} Walk;

static bool
reads(Expr *e, void *ctx)
{
	Walk *w = ctx;
	if (e->kind != EXPR_ACCESS || !e->call.tensor || !e->call.tensor->ninits)
		return true;
	Tensor *u = e->call.tensor;
	if (w->r->init) {
		if (w->pass == 0 && u == w->t)
			diag_error(e->loc, "the initial value of scan '%s' cannot read '%s' itself",
			    w->t->name, w->t->name);
		else if (w->pass == 1 && u != w->t &&
		    find(w->up, u->index) == find(w->up, w->t->index)) {
			/* a peer at a step already computed: a constant up to this one */
			Expr *at = u->scan_dim < e->call.nargs ? e->call.args[u->scan_dim] : NULL;
			if (!at || at->kind != EXPR_INT || at->ival > w->r->init_step)
				diag_error(e->loc, "the initial value of scan '%s' at step %lld reads "
				    "'%s', a scan updated in the same steps, at a step that is not a "
				    "constant up to %lld", w->t->name, (long long)w->r->init_step,
				    text_of(e->loc), (long long)w->r->init_step);
		}
		return true;
	}
	int64_t back;
	bool step = scans_step_back(w->t, e, &back);
	const char *ax = w->r->axes[w->t->scan_dim];
	if (w->pass == 0) {
		if (u == w->t && !step) {
			diag_error(e->loc, "the update of scan '%s' reads '%s' at a step txc cannot "
			    "place: its index along the scan axis must be '%s - c' for a constant c",
			    w->t->name, text_of(e->loc), ax);
		} else if (u == w->t && back <= 0) {
			diag_error(e->loc, "the update of scan '%s' reads '%s', %s step along its "
			    "scan axis '%s': an update reads only earlier steps (%s - 1, %s - 2, ...)",
			    w->t->name, text_of(e->loc), back == 0 ? "its current" : "a later",
			    ax, ax, ax);
		} else if (step && back > w->t->ninits) {
			diag_error(e->loc, "the update of scan '%s' reads '%s', %lld steps back, but "
			    "'%s' has %d initial step%s: at %s = %d that is step %lld", w->t->name,
			    text_of(e->loc), (long long)back, w->t->name, w->t->ninits,
			    w->t->ninits == 1 ? "" : "s", ax, w->t->ninits,
			    (long long)(w->t->ninits - back));
			diag_note(w->t->inits[0]->loc, "give initial values for steps 0 to %lld",
			    (long long)back - 1);
		} else if (step && back >= 1 && u != w->t) {
			int a = find(w->up, u->index), b = find(w->up, w->t->index);
			if (a != b)
				w->up[a > b ? a : b] = a < b ? a : b;
		}
		return true;
	}
	if (u == w->t || find(w->up, u->index) != find(w->up, w->t->index))
		return true;
	if (!step || back < 0)
		diag_error(e->loc, "the update of scan '%s' reads '%s', a scan updated in the "
		    "same steps, %s: it may read '%s' at '%s' (this step, computed first) or "
		    "earlier steps only", w->t->name, text_of(e->loc),
		    step ? "at a later step" : "at a step that is not its scan axis minus a constant",
		    u->name, ax);
	return true;
}

static int
by_step(const void *a, const void *b)
{
	const Rule *x = *(Rule *const *)a, *y = *(Rule *const *)b;
	return (x->init_step > y->init_step) - (x->init_step < y->init_step);
}

/* The initial steps and the update of scan t. */
static bool
check_scan(Tensor *t)
{
	qsort(t->inits, t->ninits, sizeof *t->inits, by_step);
	Rule *first = t->inits[0];
	bool ok = true;
	if (!t->rule) {
		diag_error(first->loc, "scan '%s' has initial values but no update: add a rule "
		    "%s[...] = ... that reads its earlier steps", t->name, t->name);
		ok = false;
	}
	for (int i = 0; i < t->ninits; i++) {
		Rule *r = t->inits[i];
		if (r->init_dim != first->init_dim) {
			diag_error(r->init_loc, "the initial values of scan '%s' must give their step "
			    "in the same position (dimension %d)", t->name, first->init_dim);
			diag_note(first->init_loc, "the first initial step is here");
			ok = false;
		} else if (r->init_step != i) {
			if (i > 0 && r->init_step == t->inits[i - 1]->init_step) {
				diag_error(r->init_loc, "step %lld of scan '%s' is defined twice",
				    (long long)r->init_step, t->name);
				diag_note(t->inits[i - 1]->init_loc, "previous definition here");
			} else {
				diag_error(r->init_loc, "the initial steps of scan '%s' must be 0, 1, ... "
				    "without a gap: step %d is missing", t->name, i);
			}
			ok = false;
			break;
		}
		if (r->value && r->value->kind == EXPR_REDUCE) {
			diag_error(r->value->loc, "the initial value of scan '%s' cannot be a "
			    "reduction; compute it in a stage of its own", t->name);
			ok = false;
		}
	}
	t->scan_dim = first->init_dim;
	if (t->rule && t->rule->value && t->rule->value->kind == EXPR_REDUCE) {
		diag_error(t->rule->value->loc, "the update of scan '%s' cannot be a reduction; "
		    "compute the reduction in a stage of its own", t->name);
		ok = false;
	}
	return ok;
}

void
scans_kernel(Kernel *k)
{
	int *up = arena_alloc(perm, (size_t)(k->ntensors + 1) * sizeof *up);
	bool *ok = arena_alloc(perm, (size_t)(k->ntensors + 1) * sizeof *ok);
	for (int i = 0; i < k->ntensors; i++) {
		Tensor *t = k->tensors[i];
		up[i] = i;
		ok[i] = t->ninits > 0 && check_scan(t);
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < k->ntensors; i++) {
			Tensor *t = k->tensors[i];
			if (!ok[i])
				continue;
			for (int j = 0; j < t->ninits; j++) {
				Walk w = { k, t, t->inits[j], up, pass };
				check_walk(t->inits[j]->value, reads, &w);
			}
			Walk w = { k, t, t->rule, up, pass };
			check_walk(t->rule->value, reads, &w);
		}
	for (int i = 0; i < k->ntensors; i++)
		k->tensors[i]->scan_group = find(up, i);
}
