/* sched_prune.c: a generated schedule less one stage's primitives.
 *
 * The schedule generator's rules keep to what lowers, but where one of
 * its schedules does not (bounds inference cannot prove an access of one
 * stage in range), dropping the whole schedule would leave every stage of
 * the kernel naive: an ONNX network of 126 stages ran 30x slower for one
 * convolution's tile.  lower_kernel instead drops the primitives of the
 * stage the first error is in and tries again (lower_prune_stage below),
 * a few times, before it falls back to the naive nest.
 *
 * The stage whose rule holds a source location is found by the rule's
 * range; a rule copied from a called kernel shares its range with the
 * same rule of every other call of that kernel, and all of them go.
 * Where that stage has no primitive left, the stages that read it lose
 * theirs (a reader's tile rounded up past the end makes the region it
 * needs of the stage larger than the stage's inputs: tail = round_up).  A
 * primitive goes when it applies to a stage that goes, or names one
 * (compute_at(y, ...), cache_read(..., [y_local])) or a name that a
 * primitive that went made (a loop split off, a cache stage), and what
 * it made goes with it.  Inside a specialization, the same.
 */
#include <string.h>

#include "lower/lower.h"
#include "sema/sema.h"

typedef struct {
	const char **names; int n, cap;   /* stages and loops that go */
} Gone;

static bool
gone(const Gone *g, const char *name)
{
	for (int i = 0; name && i < g->n; i++)
		if (!strcmp(g->names[i], name))
			return true;
	return false;
}

static void
go(Gone *g, const char *name)
{
	if (name && !gone(g, name))
		*ARENA_PUSH(perm, g->names, g->n, g->cap) = name;
}

static bool
arg_names_gone(const Gone *g, const SchedArg *a)
{
	if (a->kind == ARG_NAME && gone(g, a->str))
		return true;
	for (int i = 0; a->kind == ARG_LIST && i < a->nlist; i++)
		if (arg_names_gone(g, &a->list[i]))
			return true;
	return false;
}

/* prims[0..n) less what goes, into *out; the number dropped */
static int
prune(Gone *g, const SchedPrim *prims, int n, SchedPrim **out, int *nout)
{
	int cap = 0, dropped = 0;
	*out = NULL;
	*nout = 0;
	for (int i = 0; i < n; i++) {
		const SchedPrim *p = &prims[i];
		if (p->form == SCHED_PRIM && p->body) {      /* specialize */
			SchedPrim *q = ARENA_PUSH(perm, *out, *nout, cap);
			*q = *p;
			dropped += prune(g, p->body, p->nbody, &q->body, &q->nbody);
			continue;
		}
		bool drop = gone(g, p->stage);
		for (int a = 0; !drop && a < p->nargs; a++)
			drop = arg_names_gone(g, &p->args[a]);
		if (!drop) {
			*ARENA_PUSH(perm, *out, *nout, cap) = *p;
			continue;
		}
		dropped++;
		for (int o = 0; o < p->nouts; o++)
			go(g, p->outs[o]);
	}
	return dropped;
}

typedef struct {
	const Gone *g;
	bool reads;
} Reads;

static bool
reads_walk(Expr *e, void *ctx)
{
	Reads *r = ctx;
	if (e->kind == EXPR_ACCESS && e->call.tensor && gone(r->g, e->call.tensor->name))
		r->reads = true;
	return !r->reads;
}

Schedule *
lower_prune_stage(Kernel *k, Schedule *s, Loc at)
{
	if (!s || !at.file)
		return NULL;
	Gone g = { 0 };
	for (int i = 0; i < k->ntensors; i++) {
		Tensor *t = k->tensors[i];
		Rule *r = t->rule;
		if (r && r->loc.file == at.file && r->loc.begin <= at.begin && at.begin < r->loc.end)
			go(&g, t->name);
	}
	if (!g.n)
		return NULL;
	Schedule *n = arena_alloc(perm, sizeof *n);
	*n = *s;
	if (prune(&g, s->prims, s->nprims, &n->prims, &n->nprims))
		return n;
	/* nothing of its own left: its readers' */
	Gone readers = { 0 };
	for (int i = 0; i < k->ntensors; i++) {
		Reads r = { &g, false };
		if (k->tensors[i]->rule)
			check_walk(k->tensors[i]->rule->value, reads_walk, &r);
		if (r.reads)
			go(&readers, k->tensors[i]->name);
	}
	if (readers.n && prune(&readers, s->prims, s->nprims, &n->prims, &n->nprims))
		return n;
	return NULL;
}
