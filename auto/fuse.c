/* fuse.c: operator kinds and fusion groups (txc-schedule(7) FUSION).
 *
 * Each stage gets the kind of its rule, as TVM's graph level gives one to
 * each operator: element-wise (every read at the stage's own point),
 * broadcast (reads at a subset of its axes), injective (any other reads, no
 * reduction), reduction, complex-out-fusable (a reduction with reuse: some
 * operand is read at points that leave out a pure axis, as a matmul's or a
 * convolution's are), opaque (scans, updates, tuple reductions).
 *
 * Stages are grouped by TVM's three rules, applied to stages:
 *   F1  an injective (or simpler) stage fuses into its one injective reader;
 *   F2  a reduction absorbs its injective inputs;
 *   F3  element-wise and broadcast stages that read a complex-out-fusable
 *       stage at its own points fuse onto its output, in a chain.
 * and one guard against fusions that make things slower:
 *   F0  a stage read by several stages, read inside an index, opaque, or
 *       expensive (exp, division, ...) and read more than once per reader's
 *       point is never fused: fusing it would compute it again and again.
 * A group's anchor is its member of the highest kind.  When the anchor is
 * a stage of a called kernel (tx(5) CALLS) that has a schedule of its own
 * for the target, that schedule, renamed into the caller's names, schedules
 * the whole call and the chain F3 fused onto it: the chain's last stage
 * takes the role of the callee's output and the stages before it are
 * inlined into it (so conv2d_nchw's tiles compute the caller's ReLU);
 * on VTA there is no chain (the ALU cannot compute the caller's int8
 * stages on the callee's narrowed output), only the call.
 * Every other stage is left to the generator's rules.
 */
#include <stdlib.h>
#include <string.h>

#include "auto/auto.h"
#include "sema/sema.h"

static const char *kind_names[] = {
	[FK_ELEMWISE] = "element-wise", [FK_BROADCAST] = "broadcast",
	[FK_INJECTIVE] = "injective", [FK_REDUCE] = "reduction",
	[FK_OUTFUSE] = "complex-out-fusable", [FK_OPAQUE] = "opaque",
};

const char *
auto_fuse_kind_name(FuseKind k)
{
	return k <= FK_OPAQUE ? kind_names[k] : "?";
}

/* ---- kinds ------------------------------------------------------------------ */

typedef struct {
	const AutoStage *s;
	FuseKind kind;
	bool reuse;        /* some read leaves out a pure axis (a reduction's) */
} KindWalk;

/* Whether index e is exactly pure axis d. */
static bool
is_axis(Expr *e, int d)
{
	while (e && e->kind == EXPR_CAST)
		e = e->call.args[0];
	return e && e->kind == EXPR_NAME && e->id.ref == REF_PURE_AXIS && (d < 0 || e->id.axis == d);
}

static void
kind_access(Expr *acc, bool in_index, void *ctx)
{
	KindWalk *w = ctx;
	const AutoStage *s = w->s;
	int n = acc->call.nargs;
	FuseKind k = FK_ELEMWISE;
	if (n != s->npure)
		k = FK_BROADCAST;
	int last = -1;
	for (int i = 0; i < n; i++) {
		Expr *e = acc->call.args[i];
		if (is_axis(e, i) && k == FK_ELEMWISE)
			continue;
		while (e && e->kind == EXPR_CAST)
			e = e->call.args[0];
		if (is_axis(e, -1) && e->id.axis > last) {
			if (k == FK_ELEMWISE)
				k = FK_BROADCAST;
			last = e->id.axis;
			continue;
		}
		k = FK_INJECTIVE;
	}
	if (k == FK_ELEMWISE)
		for (int i = 0; i < n; i++)
			last = i;
	if (in_index)
		k = FK_INJECTIVE;
	if (k > w->kind)
		w->kind = k;
	/* reuse: a pure axis of the stage that no index of this read uses */
	for (int d = 0; d < s->npure; d++) {
		bool used = false;
		for (int i = 0; i < n && !used; i++)
			used = auto_coeff(acc->call.args[i], true, d) != 0;
		if (!used)
			w->reuse = true;
	}
}

static FuseKind
stage_kind(const AutoStage *s)
{
	if (s->kind == AK_SPECIAL && !s->tri)
		return FK_OPAQUE;
	KindWalk w = { .s = s, .kind = FK_ELEMWISE };
	auto_accesses(s, kind_access, &w);
	if (s->kind == AK_SPECIAL || s->kind == AK_REDUCE)
		return w.reuse && s->npure > 0 ? FK_OUTFUSE : FK_REDUCE;
	return w.kind;
}

/* ---- how a reader reads a producer -------------------------------------------- */

typedef struct {
	const Tensor *of;
	int reads;         /* accesses to it */
	bool identity;     /* every one at the reader's own point */
	bool reuse;        /* some read varies with a reduction axis or misses a pure axis */
	const AutoStage *r;
} ReadWalk;

static void
read_access(Expr *acc, bool in_index, void *ctx)
{
	(void)in_index;
	ReadWalk *w = ctx;
	if (acc->call.tensor != w->of)
		return;
	w->reads++;
	int n = acc->call.nargs;
	if (n != w->r->npure)
		w->identity = false;
	for (int i = 0; i < n; i++)
		if (!is_axis(acc->call.args[i], i))
			w->identity = false;
	for (int d = 0; d < w->r->nred; d++)
		for (int i = 0; i < n; i++)
			if (auto_coeff(acc->call.args[i], false, d) != 0)
				w->reuse = true;
}

static ReadWalk
reads_of(const AutoStage *reader, const Tensor *of)
{
	ReadWalk w = { .of = of, .identity = true, .r = reader };
	auto_accesses(reader, read_access, &w);
	return w;
}

/* ---- the groups ---------------------------------------------------------------- */

static int
find(AutoFusion *f, int i)
{
	while (f->parent[i] != i)
		i = f->parent[i] = f->parent[f->parent[i]];
	return i;
}

/* Joins the groups of a and b, unless both hold a reduction (a group has
 * one anchor of that weight at most).  Whether they are one group now. */
static bool
join(AutoFusion *f, bool *heavy, int a, int b)
{
	a = find(f, a);
	b = find(f, b);
	if (a == b)
		return true;
	if (heavy[a] && heavy[b])
		return false;
	f->parent[a] = b;
	heavy[b] |= heavy[a];
	return true;
}

/* The schedule of kernel k for target (unnamed), in p or what it imports. */
static Schedule *
callee_schedule(Program *p, Kernel *k, const char *target, int depth)
{
	if (!p || depth > 32)
		return NULL;
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (s && !s->name && !s->generated && s->target && !strcmp(s->target, target) &&
		    (s->k ? s->k == k : !strcmp(s->kernel, k->name)))
			return s;
	}
	for (int i = 0; i < p->nimports; i++) {
		Schedule *s = p->imports[i] ? callee_schedule(p->imports[i]->prog, k, target, depth + 1) :
		    NULL;
		if (s)
			return s;
	}
	return NULL;
}

static CallSite *
site_of(const AutoStage *s)
{
	return s->t->rule ? s->t->rule->site : NULL;
}

/* The callee output's rule axes (the axes its schedule names). */
static Rule *
callee_rule(Kernel *f, const char *name)
{
	for (int i = 0; i < f->nitems; i++)
		if (f->items[i].rule && f->items[i].rule->name == name && !f->items[i].rule->update &&
		    !f->items[i].rule->init)
			return f->items[i].rule;
	return NULL;
}

static int
outputs_of(Kernel *f)
{
	int n = 0;
	for (int i = 0; i < f->ntensors; i++)
		n += f->tensors[i]->role == ROLE_OUT;
	return n;
}

/* Whether schedule s caches its output y (`y.cache_write(...) -> yl` at
 * the top level, in the point and in the template): then a chain fused
 * onto a reduction result can take y's loops, the result yl's place. */
static bool
caches_output(const SchedPrim *p, int n, const char *y)
{
	for (int i = 0; i < n; i++)
		if (p[i].form == SCHED_PRIM && p[i].prim && !strcmp(p[i].prim, "cache_write") &&
		    p[i].stage && !strcmp(p[i].stage, y) && p[i].nouts == 1)
			return true;
	return false;
}

/* Decides whether the call whose result is stage R takes its callee's
 * schedule, with the chain F3 fused onto R. */
static void
plan_transfer(AutoGraph *g, Program *p, const char *target, AutoFusion *f, int R)
{
	CallSite *cs = site_of(&g->s[R]);
	int a = f->group[R];
	Schedule *sch = callee_schedule(p, cs->callee, target, 0);
	if (!sch) {
		f->note[a] = arena_printf(perm, "'%s' has no schedule for %s", cs->callee->name,
		    target);
		return;
	}
	if (outputs_of(cs->callee) != 1) {
		f->note[a] = arena_printf(perm, "'%s' has several outputs", cs->callee->name);
		return;
	}
	Rule *yr = callee_rule(cs->callee, g->s[R].t->rule->site_name);
	if (!yr || g->s[R].kind == AK_SPECIAL) {
		f->note[a] = "the call's result is not a plain stage";
		return;
	}
	for (int i = 0; i < g->n; i++)
		if (site_of(&g->s[i]) == cs && g->s[i].t->rule->site_name == NULL) {
			f->note[a] = "the call holds a stage of no name";
			return;
		}
	/* the chain fused onto the result: each member the one reader of the
	 * one before, at its own points, in the result's group, a stage of
	 * the caller's own; the result and all but the last member inlinable */
	int T = R;
	int *chain = arena_alloc(perm, sizeof *chain * (size_t)(g->n + 1)), nchain = 0;
	/* a reduction result is not inlined: it takes the place of the
	 * callee's cache of its output, whose loops the chain's last stage
	 * takes (conv + bias + ReLU: the sums per tile in a local buffer, the
	 * epilogue where they are stored) */
	const char *yn = g->s[R].t->rule->site_name;
	bool absorb = g->s[R].kind == AK_REDUCE && caches_output(sch->prims, sch->nprims, yn) &&
	    (!sch->tmpl || caches_output(sch->tmpl, sch->ntmpl, yn));
	/* on VTA the callee's output is stored as its schedule stores it (an
	 * int8 tile narrowed by the ALU's clamp): the caller's stages after it
	 * compute in int8 on that narrowed value, which the ALU, computing in
	 * int32 in acc, cannot (nor |, &, ^ or a division); they stay with the
	 * generator's rules, on the host, as the rules alone leave them */
	bool vta = !strcmp(target, "vta");
	while (!vta && g->s[T].ncons == 1 && !g->s[T].output &&
	    (g->s[T].kind == AK_PURE || (T == R && absorb))) {
		int n = g->s[T].cons[0];
		if (f->group[n] != a || site_of(&g->s[n]) || g->s[n].npure != g->s[R].npure ||
		    g->s[n].kind == AK_SPECIAL || !reads_of(&g->s[n], g->s[T].t).identity)
			break;
		chain[nchain++] = n;
		T = n;
	}
	f->from[R] = sch;
	f->tail[R] = T;
	for (int i = 0; i < g->n; i++)
		if (site_of(&g->s[i]) == cs) {
			f->fixed[i] = true;
			f->by[i] = R;
		}
	for (int i = 0; i < nchain; i++) {
		f->fixed[chain[i]] = true;
		f->by[chain[i]] = R;
	}
}

void
auto_fuse(AutoGraph *g, Program *p, const char *target, int threads, AutoFusion *f)
{
	(void)threads;
	memset(f, 0, sizeof *f);
	size_t n1 = (size_t)g->n + 1;
	f->kind = arena_alloc(perm, sizeof *f->kind * n1);
	f->parent = arena_alloc(perm, sizeof *f->parent * n1);
	f->anchor = arena_alloc(perm, sizeof *f->anchor * n1);
	f->group = arena_alloc(perm, sizeof *f->group * n1);
	f->why = arena_alloc(perm, sizeof *f->why * n1);
	f->note = arena_alloc(perm, sizeof *f->note * n1);
	f->from = arena_alloc(perm, sizeof *f->from * n1);
	f->tail = arena_alloc(perm, sizeof *f->tail * n1);
	f->fixed = arena_alloc(perm, sizeof *f->fixed * n1);
	f->by = arena_alloc(perm, sizeof *f->by * n1);
	/* sched: a stage of a call whose callee has a schedule for the target */
	bool *sched = arena_alloc(perm, sizeof *sched * n1);
	for (int i = 0; i < g->n; i++) {
		f->parent[i] = i;
		f->kind[i] = stage_kind(&g->s[i]);
		f->by[i] = f->tail[i] = -1;
		CallSite *cs = site_of(&g->s[i]);
		sched[i] = cs && target && callee_schedule(p, cs->callee, target, 0);
	}
	bool *heavy = arena_alloc(perm, sizeof *heavy * n1);
	for (int i = 0; i < g->n; i++)
		heavy[i] = f->kind[i] >= FK_REDUCE;
	/* F3: element-wise and broadcast readers onto a complex-out-fusable
	 * output, in a chain */
	for (int i = 0; i < g->n; i++) {
		if (f->kind[i] != FK_OUTFUSE)
			continue;
		int cur = i;
		while (!g->s[cur].output && g->s[cur].ncons == 1) {
			int c = g->s[cur].cons[0];
			ReadWalk w = reads_of(&g->s[c], g->s[cur].t);
			if (f->kind[c] > FK_BROADCAST || !w.identity || g->s[c].npure != g->s[i].npure ||
			    !join(f, heavy, cur, c))
				break;
			f->why[c] = arena_printf(perm, "F3: %s onto the output of %s",
			    auto_fuse_kind_name(f->kind[c]), g->s[i].name);
			cur = c;
		}
	}
	/* F1, F2: producers into their one reader; F0 guards */
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (f->why[i])
			continue;   /* F3 placed it */
		if (f->kind[i] == FK_OPAQUE) {
			f->why[i] = "F0: opaque (a scan, an update or a tuple reduction): a group of its own";
			continue;
		}
		if (s->output || s->ncons == 0)
			continue;
		if (s->ncons > 1) {
			f->why[i] = arena_printf(perm, "F0: read by %d stages: computed once, not fused",
			    s->ncons);
			continue;
		}
		if (s->in_index) {
			f->why[i] = "F0: read inside an index (a table): not fused";
			continue;
		}
		int c = s->cons[0];
		if (f->kind[i] > FK_INJECTIVE)
			continue;
		ReadWalk w = reads_of(&g->s[c], s->t);
		if (f->kind[c] == FK_OPAQUE) {
			f->why[i] = arena_printf(perm, "F0: its reader %s is opaque: not fused",
			    g->s[c].name);
			continue;
		}
		CallSite *a = site_of(s), *b = site_of(&g->s[c]);
		if (a != b && ((a && sched[i]) || (b && sched[c]))) {
			f->why[i] = arena_printf(perm, "F0: %s is a stage of another call, scheduled by "
			    "its kernel's own schedule: not fused", g->s[c].name);
			continue;
		}
		if ((s->expensive || s->flops > 8) && (w.reads > 1 || w.reuse || !w.identity)) {
			f->why[i] = arena_printf(perm, "F0: expensive and read at several points by %s: "
			    "computed once, not fused", g->s[c].name);
			continue;
		}
		if (!join(f, heavy, i, c)) {
			f->why[i] = arena_printf(perm, "F0: %s's group has a reduction already: not fused",
			    g->s[c].name);
			continue;
		}
		f->why[i] = f->kind[c] <= FK_INJECTIVE ?
		    arena_printf(perm, "F1: an injective chain into %s", g->s[c].name) :
		    arena_printf(perm, "F2: absorbed by the reduction %s", g->s[c].name);
	}
	/* anchors: the member of the highest kind, the last of ties */
	for (int i = 0; i < g->n; i++)
		f->anchor[i] = -1;
	for (int i = 0; i < g->n; i++) {
		int r = find(f, i);
		int a = f->anchor[r];
		if (a < 0 || f->kind[i] >= f->kind[a])
			f->anchor[r] = i;
	}
	for (int i = 0; i < g->n; i++)
		f->group[i] = f->anchor[find(f, i)];
	/* the calls whose result is here: each may take its callee's schedule */
	for (int i = 0; i < g->n && target; i++) {
		CallSite *cs = site_of(&g->s[i]);
		Tensor *ct = cs ? ast_find_tensor(cs->callee, g->s[i].t->rule->site_name) : NULL;
		if (ct && ct->role == ROLE_OUT && !f->fixed[i])
			plan_transfer(g, p, target, f, i);
	}
	for (int i = 0; i < g->n; i++)
		f->any_fixed |= f->fixed[i];
}

/* ---- --print-fusion ------------------------------------------------------------- */

void
auto_print_fusion(FILE *fp, AutoGraph *g, const AutoFusion *f, const char *target)
{
	fprintf(fp, "fusion of %s for %s: %d stage%s\n", g->k->name, target, g->n,
	    g->n == 1 ? "" : "s");
	int ng = 0;
	for (int a = 0; a < g->n; a++) {
		if (f->group[a] != a)
			continue;
		ng++;
		int nm = 0;
		for (int i = 0; i < g->n; i++)
			nm += f->group[i] == a;
		fprintf(fp, "group %d: anchor %s (%s), %d stage%s\n", ng, g->s[a].name,
		    auto_fuse_kind_name(f->kind[a]), nm, nm == 1 ? "" : "s");
		for (int i = 0; i < g->n; i++) {
			if (f->group[i] != a)
				continue;
			CallSite *cs = site_of(&g->s[i]);
			fprintf(fp, "  %-16s %-20s", g->s[i].name, auto_fuse_kind_name(f->kind[i]));
			if (i == a)
				fputs(" the anchor", fp);
			if (f->why[i] && (i != a || !strncmp(f->why[i], "F0", 2)))
				fprintf(fp, "%s%s", i == a ? "; " : " ", f->why[i]);
			if (cs)
				fprintf(fp, " [stage '%s' of %s]", g->s[i].t->rule->site_name,
				    cs->callee->name);
			fputc('\n', fp);
		}
		bool said = false;
		for (int R = 0; R < g->n; R++) {
			if (!f->from[R] || f->group[R] != a)
				continue;
			CallSite *cs = site_of(&g->s[R]);
			int line, col;
			source_linecol(cs->at.file, cs->at.begin, &line, &col);
			fprintf(fp, "  scheduled by: %s's schedule for %s (the call of line %d)",
			    cs->callee->name, target, line);
			if (f->tail[R] != R)
				fprintf(fp, ", the loops of its output '%s' given to %s",
				    g->s[R].t->rule->site_name, g->s[f->tail[R]].name);
			fputc('\n', fp);
			said = true;
		}
		if (said) {
			const char *rest = NULL;
			for (int i = 0; i < g->n; i++)
				if (f->group[i] == a && !f->fixed[i])
					rest = rest ? arena_printf(perm, "%s, %s", rest, g->s[i].name) :
					    g->s[i].name;
			if (rest && !strcmp(target, "vta"))
				fprintf(fp, "  and by the generator's rules: %s (on VTA the call's output "
				    "is stored as its schedule stores it; the stages after it run on the "
				    "host)\n", rest);
			else if (rest)
				fprintf(fp, "  and by the generator's rules: %s (the call's output is not "
				    "a stage they can be computed in)\n", rest);
		}
		if (!said && f->fixed[a])
			fprintf(fp, "  scheduled by: %s's schedule, with the call of %s\n",
			    site_of(&g->s[a])->callee->name, g->s[f->by[a]].name);
		else if (!said && f->note[a])
			fprintf(fp, "  scheduled by: the generator's rules (%s)\n", f->note[a]);
		else if (!said)
			fputs("  scheduled by: the generator's rules\n", fp);
	}
}

bool
auto_print_kernel_fusion(FILE *fp, Program *p, Kernel *k, const AutoRequest *r)
{
	const char *target = r->target ? r->target : "cpu";
	if (k->intr_target)
		return true;
	AutoGraph *g = arena_alloc(perm, sizeof *g);
	auto_graph(g, k, r->defs, r->vals, r->ndefs);
	if (g->too_big) {
		diag_error(k->name_loc, "'%s' has more stages than the fusion pass handles (%d)",
		    k->name, AUTO_MAXS);
		return false;
	}
	AutoMachine m;
	auto_machine(&m, r->cpu, r->features);
	AutoFusion *f = arena_alloc(perm, sizeof *f);
	auto_fuse(g, p, target, m.threads, f);
	auto_print_fusion(fp, g, f, target);
	return true;
}
