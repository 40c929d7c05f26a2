/* stages.c: the dependency graph between a kernel's stages.
 *
 * Stage S depends on stage T when S's rule reads T.  The graph must be
 * acyclic (a cycle is reported with its path and where each edge reads);
 * the compute order (Kernel.stages, Tensor.stage_index) is topological with
 * ties broken by source order; an intermediate stage nobody reads gets a
 * warning.
 */
#include <stdio.h>
#include <string.h>

#include "sema/sema.h"

typedef struct {
	int to;      /* stage number read */
	Loc at;      /* the first access that reads it */
} Edge;

typedef struct {
	Tensor *t;
	Edge *deps; int ndeps, capdeps;
	int color;   /* DFS: 0 new, 1 on the path, 2 done */
	bool placed;
	bool read;   /* some other stage reads it */
} Node;

typedef struct {
	Kernel *k;
	Node *nodes; int n;
	int *num;    /* tensor index -> stage number, or -1 */
	int cur;     /* the stage whose rule is being scanned */
	bool update; /* its update definition, which reads its current value */
	int *path; int npath;
} Graph;

static bool
add_edge(Expr *e, void *ctx)
{
	Graph *g = ctx;
	Tensor *t = e->kind == EXPR_ACCESS ? e->call.tensor : NULL;
	if (!t || !t->rule || t->index < 0 || t->index >= g->k->ntensors)
		return true;
	int to = g->num[t->index];
	if (to < 0)
		return true;
	Node *s = &g->nodes[g->cur];
	/* a scan reading its own or its group's earlier steps (scans.c) */
	Tensor *ct = s->t;
	int64_t back;
	if (g->update && t == ct)
		return true;
	/* a tuple reduction's outputs read each other's current values */
	if (g->update && t->update && ct->update && t->update->tgroup &&
	    t->update->tgroup == ct->update->tgroup)
		return true;
	if (t->ninits && ct->ninits && t->scan_group == ct->scan_group &&
	    (t == ct || (scans_step_back(ct, e, &back) && back >= 1)))
		return true;
	for (int i = 0; i < s->ndeps; i++)
		if (s->deps[i].to == to)
			return true;
	Edge *ed = ARENA_PUSH(perm, s->deps, s->ndeps, s->capdeps);
	ed->to = to;
	ed->at = e->loc;
	if (to != g->cur)
		g->nodes[to].read = true;
	return true;
}

static Loc
edge_loc(Graph *g, int from, int to)
{
	Node *s = &g->nodes[from];
	for (int i = 0; i < s->ndeps; i++)
		if (s->deps[i].to == to)
			return s->deps[i].at;
	return loc_none;
}

/* Reports the cycle path[from..] -> path[from].  A long cycle is shown by
 * its first and last stages, with a note on each of its first edges. */
static void
report_cycle(Graph *g, int from)
{
	enum { SHOWN = 8 };
	int first = g->path[from], len = g->npath - from;
	Tensor *ft = g->nodes[first].t;
	if (len == 1) {
		diag_error(edge_loc(g, first, first), "stage '%s' reads itself", ft->name);
		diag_note(ft->rule->name_loc, "a recurrence is a scan: give its first steps "
		    "(%s[0%s] = ...;) and read only earlier ones (tx.5 SCANS)", ft->name,
		    ft->ndims > 1 ? ", ..." : "");
		return;
	}
	char *msg = arena_strdup(perm, ft->name);
	for (int i = 1; i < len; i++) {
		if (len > SHOWN && i == SHOWN - 2) {
			msg = arena_printf(perm, "%s -> ...", msg);
			i = len - 2;
		}
		msg = arena_printf(perm, "%s -> %s", msg, g->nodes[g->path[from + i]].t->name);
	}
	if (len > SHOWN)
		diag_error(ft->rule->name_loc, "stages depend on each other in a cycle of %d: "
		    "%s -> %s", len, msg, ft->name);
	else
		diag_error(ft->rule->name_loc, "stages depend on each other in a cycle: %s -> %s",
		    msg, ft->name);
	for (int i = 0; i < len && i < SHOWN; i++) {
		int a = g->path[from + i];
		int b = i + 1 < len ? g->path[from + i + 1] : first;
		diag_note(edge_loc(g, a, b), "'%s' reads '%s' here", g->nodes[a].t->name,
		    g->nodes[b].t->name);
	}
	for (int i = 0; i < len; i++) {
		Tensor *t = g->nodes[g->path[from + i]].t;
		if (t->ninits > 0) {
			diag_note(t->rule->name_loc, "'%s' is a scan: a stage computed between its "
			    "steps (reading its earlier steps, read by its update) is not supported; "
			    "write the update as one expression of the earlier steps (tx.5 SCANS)",
			    t->name);
			break;
		}
	}
}

/* Depth-first search from s with an explicit stack (a pipeline may be a
 * chain of thousands of stages); g->path is the stack, edge[] the next
 * edge to follow at each level.  A dependency on the path is a cycle. */
static void
dfs(Graph *g, int s, int *edge)
{
	g->npath = 0;
	g->path[g->npath] = s;
	edge[g->npath++] = 0;
	g->nodes[s].color = 1;
	while (g->npath > 0) {
		int top = g->path[g->npath - 1];
		Node *nd = &g->nodes[top];
		int *e = &edge[g->npath - 1];
		if (*e == nd->ndeps) {
			nd->color = 2;
			g->npath--;
			continue;
		}
		int d = nd->deps[(*e)++].to;
		if (g->nodes[d].color == 0) {
			g->nodes[d].color = 1;
			g->path[g->npath] = d;
			edge[g->npath++] = 0;
		} else if (g->nodes[d].color == 1) {
			int from = g->npath - 1;
			while (from > 0 && g->path[from] != d)
				from--;
			report_cycle(g, from);
		}
	}
}

/* ---- compute order: a min-heap of ready stages by source position ---- */

static void
heap_push(int *h, int *n, int v)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static int
heap_pop(int *h, int *n)
{
	int top = h[0], v = h[--*n], i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
	return top;
}

/* Topological order, ties broken by source order; stages left in a cycle
 * (already reported) follow in source order. */
static void
order(Graph *g, Kernel *k)
{
	int n = g->n;
	int *indeg = arena_alloc(perm, (size_t)(n + 1) * sizeof *indeg);
	int *heap = arena_alloc(perm, (size_t)(n + 1) * sizeof *heap);
	int **users = arena_alloc(perm, (size_t)(n + 1) * sizeof *users);
	int *nusers = arena_alloc(perm, (size_t)(n + 1) * sizeof *nusers);
	int *capusers = arena_alloc(perm, (size_t)(n + 1) * sizeof *capusers);
	for (int s = 0; s < n; s++)
		for (int j = 0; j < g->nodes[s].ndeps; j++) {
			int d = g->nodes[s].deps[j].to;
			indeg[s]++;
			*ARENA_PUSH(perm, users[d], nusers[d], capusers[d]) = s;
		}
	int nheap = 0, next_stuck = 0;
	for (int s = 0; s < n; s++)
		if (indeg[s] == 0)
			heap_push(heap, &nheap, s);
	k->stages = arena_alloc(perm, (size_t)(n + 1) * sizeof *k->stages);
	k->nstages = 0;
	while (k->nstages < n) {
		int pick;
		if (nheap > 0) {
			pick = heap_pop(heap, &nheap);
		} else {
			while (g->nodes[next_stuck].placed)
				next_stuck++;
			pick = next_stuck;
		}
		if (g->nodes[pick].placed)
			continue;
		g->nodes[pick].placed = true;
		g->nodes[pick].t->stage_index = k->nstages;
		k->stages[k->nstages++] = g->nodes[pick].t;
		for (int j = 0; j < nusers[pick]; j++) {
			int u = users[pick][j];
			if (--indeg[u] == 0 && !g->nodes[u].placed)
				heap_push(heap, &nheap, u);
		}
	}
}

/* The scans of a group advance in the same steps (one loop, lowering):
 * a stage that reads one of them comes after the last of them in compute
 * order, not between them. */
static void
group_scans(Graph *g, Kernel *k)
{
	for (int last = k->nstages - 1; last >= 0; last--) {
		Tensor *t = k->stages[last];
		if (!t->ninits)
			continue;
		int first = last;
		for (int i = 0; i < last; i++)
			if (k->stages[i]->ninits && k->stages[i]->scan_group == t->scan_group) {
				first = i;
				break;
			}
		if (first == last)
			continue;
		/* between first and last: members stay, readers of members move */
		bool *moved = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *moved);
		Tensor **out = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *out);
		int n = 0, nm = 0;
		Tensor **mv = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *mv);
		for (int i = first; i <= last; i++) {
			Tensor *s = k->stages[i];
			bool member = s->ninits && s->scan_group == t->scan_group;
			Node *nd = &g->nodes[g->num[s->index]];
			for (int j = 0; !member && j < nd->ndeps && !moved[i]; j++) {
				Tensor *d = g->nodes[nd->deps[j].to].t;
				if ((d->ninits && d->scan_group == t->scan_group) ||
				    (d->stage_index >= first && d->stage_index < i && moved[d->stage_index]))
					moved[i] = true;
			}
			if (moved[i])
				mv[nm++] = s;
			else
				out[n++] = s;
		}
		for (int i = 0; i < nm; i++)
			out[n++] = mv[i];
		for (int i = 0; i < n; i++) {
			k->stages[first + i] = out[i];
			out[i]->stage_index = first + i;
		}
		last = first;   /* the group is done: go on below it */
	}
}

static TupleRed *
tuple_of(Tensor *t)
{
	return t->update ? t->update->tgroup : NULL;
}

/* The outputs of a tuple reduction are updated together, in the first
 * output's update nest (lower.c): they come one after the other in
 * compute order, the first output last, and a stage that reads one of
 * them after them all.  A stage that reads an output and is read by the
 * values is a cycle through the reduction. */
static void
group_tuples(Graph *g, Kernel *k)
{
	Tensor **leads = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *leads);
	int nleads = 0;
	for (int i = 0; i < k->nstages; i++)
		if (tuple_of(k->stages[i]) && k->stages[i]->update->tpos == 0)
			leads[nleads++] = k->stages[i];
	for (int l = 0; l < nleads; l++) {
		TupleRed *tg = tuple_of(leads[l]);
		int first = -1, last = -1;
		for (int i = 0; i < k->nstages; i++)
			if (tuple_of(k->stages[i]) == tg) {
				if (first < 0)
					first = i;
				last = i;
			}
		bool *after = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *after);
		Tensor **out = arena_alloc(perm, (size_t)(k->nstages + 1) * sizeof *out);
		int n = 0;
		for (int i = first; i <= last; i++) {
			Tensor *s = k->stages[i];
			if (tuple_of(s) == tg)
				continue;
			Node *nd = &g->nodes[g->num[s->index]];
			for (int j = 0; j < nd->ndeps && !after[i]; j++) {
				Tensor *d = g->nodes[nd->deps[j].to].t;
				after[i] = tuple_of(d) == tg ||
				    (d->stage_index >= first && d->stage_index < i && after[d->stage_index]);
			}
		}
		for (int i = first; i <= last; i++) {
			Tensor *s = k->stages[i];
			if (tuple_of(s) != tg)
				continue;
			Node *nd = &g->nodes[g->num[s->index]];
			for (int j = 0; j < nd->ndeps; j++) {
				Tensor *d = g->nodes[nd->deps[j].to].t;
				if (d->stage_index >= first && d->stage_index <= last && after[d->stage_index]) {
					diag_error(nd->deps[j].at, "the tuple reduction of '%s' reads '%s', "
					    "which reads an output of the same tuple reduction (a cycle: "
					    "the outputs are computed together)", s->name, d->name);
					return;
				}
			}
		}
		/* the stages the group does not feed, the outputs (the first one
		 * last), the stages that read them */
		for (int pass = 0; pass < 4; pass++)
			for (int i = first; i <= last; i++) {
				Tensor *s = k->stages[i];
				bool member = tuple_of(s) == tg;
				bool take = pass == 0 ? !member && !after[i] :
				    pass == 1 ? member && s->update->tpos != 0 :
				    pass == 2 ? member && s->update->tpos == 0 : !member && after[i];
				if (take)
					out[n++] = s;
			}
		for (int i = 0; i < n; i++) {
			k->stages[first + i] = out[i];
			out[i]->stage_index = first + i;
		}
	}
}

void
stages_kernel(Kernel *k)
{
	Graph g = { .k = k };
	int cap = 0;
	g.num = arena_alloc(perm, (size_t)(k->ntensors + 1) * sizeof *g.num);
	/* stages in source order of their rules */
	for (int i = 0; i < k->ntensors; i++)
		g.num[i] = -1;
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (!r || !r->tensor || r->tensor->rule != r)
			continue;
		Node *nd = ARENA_PUSH(perm, g.nodes, g.n, cap);
		nd->t = r->tensor;
		g.num[r->tensor->index] = g.n - 1;
	}
	for (g.cur = 0; g.cur < g.n; g.cur++)
		for (int j = -1; j < g.nodes[g.cur].t->ninits; j++)
			check_walk(j < 0 ? g.nodes[g.cur].t->rule->value :
			    g.nodes[g.cur].t->inits[j]->value, add_edge, &g);
	/* an update definition's reads belong to its stage (tx.5 UPDATES) */
	g.update = true;
	for (g.cur = 0; g.cur < g.n; g.cur++) {
		Rule *u = g.nodes[g.cur].t->update;
		if (!u)
			continue;
		check_walk(u->value, add_edge, &g);
		check_walk(u->target, add_edge, &g);
		check_walk(u->upd.where, add_edge, &g);
	}
	g.update = false;
	g.path = arena_alloc(perm, (size_t)(g.n + 1) * sizeof *g.path);
	int *edge = arena_alloc(perm, (size_t)(g.n + 1) * sizeof *edge);
	for (int i = 0; i < g.n; i++)
		if (g.nodes[i].color == 0)
			dfs(&g, i, edge);
	order(&g, k);
	group_scans(&g, k);
	group_tuples(&g, k);
	for (int i = 0; i < g.n; i++)
		if (g.nodes[i].t->role == ROLE_TEMP && !g.nodes[i].read)
			diag_warn(g.nodes[i].t->rule->name_loc, "stage '%s' is never used",
			    g.nodes[i].t->name);
}
