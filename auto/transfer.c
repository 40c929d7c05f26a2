/* transfer.c: a called kernel's own schedule, renamed into the caller
 * (txc-schedule(7) FUSION).
 *
 * fuse.c decides which calls keep their callee's schedule; this file
 * writes that schedule's statements with every name the caller gives:
 * the callee's tensors become the call's stages and arguments (its
 * output the last stage of the chain fused onto it, whose loops then
 * carry the callee output's names by position), its axes their caller's
 * names, the stages its primitives make (cache_read, cache_write,
 * rfactor) and its knobs fresh names prefixed by the call's result, but
 * for the knob isa, the compile target's (sema/knobs.c), which keeps its
 * name so that its default stays the target's, declared once for all
 * the calls (the stdlib's schedules list the same sets).  The
 * result and the chain before the last stage are inlined first.  The text
 * then goes through the parser and the checks like any schedule; if they
 * refuse it, attach.c schedules the kernel without it.
 */
#include <stdlib.h>
#include <string.h>

#include "auto/auto.h"
#include "sema/sema.h"

typedef struct {
	AutoGraph *g;
	CallSite *cs;
	const char *y, *T;              /* the callee's output, and the stage taking its loops */
	Rule *yrule, *trule;
	const char *prefix;             /* the call's result */
	const char *absorb;             /* a reduction result taking the place of the
	                                   callee's cache of its output, or NULL */
	const char **kfrom, **kto; int nk, capk;   /* knobs */
	const char **sfrom, **sto; int ns, caps;   /* stages the primitives make */
	bool *isa_declared;             /* the knob isa is declared already */
	bool bad;
} Ren;

static const char *
lookup(const char **from, const char **to, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(from[i], name))
			return to[i];
	return NULL;
}

/* The caller's name for a callee tensor, or NULL. */
static const char *
tensor_name(Ren *r, const char *n)
{
	const char *t = lookup(r->sfrom, r->sto, r->ns, n);
	if (t)
		return t;
	if (!strcmp(n, r->y))
		return r->T;
	t = lookup(r->cs->tfrom, r->cs->tto, r->cs->nt, n);
	if (t) {
		int si = -1;
		for (int i = 0; i < r->g->n; i++)
			if (!strcmp(r->g->s[i].name, t))
				si = i;
		if (si >= 0 && !r->g->s[si].fixed)
			r->g->s[si].keep = true;   /* a stage of the caller the schedule names */
	}
	return t;
}

/* The caller's name for a name the callee's schedule writes where a
 * stage, a loop of stage ctx (a callee name) or a knob may stand. */
static const char *
rename_name(Ren *r, const char *n, const char *ctx)
{
	if (!n)
		return n;
	const char *t = lookup(r->kfrom, r->kto, r->nk, n);
	if (t)
		return t;
	if ((t = tensor_name(r, n)))
		return t;
	if (ctx && !strcmp(ctx, r->y) && r->yrule && r->trule)
		for (int d = 0; d < r->yrule->naxes && d < r->trule->naxes; d++)
			if (r->yrule->axes[d] && !strcmp(r->yrule->axes[d], n))
				return r->trule->axes[d];
	if ((t = lookup(r->cs->afrom, r->cs->ato, r->cs->na, n)))
		return t;
	return n;
}

/* A knob's name in a `when` condition. */
static Expr *
rename_expr(Ren *r, Expr *e)
{
	if (!e)
		return NULL;
	Expr *n = arena_alloc(perm, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case EXPR_NAME: {
		const char *k = lookup(r->kfrom, r->kto, r->nk, e->id.name);
		if (k)
			n->id.name = k;
		break;
	}
	case EXPR_UNARY: case EXPR_BINARY:
		n->bin.a = rename_expr(r, e->bin.a);
		n->bin.b = rename_expr(r, e->bin.b);
		break;
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT: case EXPR_ACCESS:
		n->call.args = arena_alloc(perm, (size_t)(e->call.nargs + 1) * sizeof *n->call.args);
		for (int i = 0; i < e->call.nargs; i++)
			n->call.args[i] = rename_expr(r, e->call.args[i]);
		break;
	default:
		break;
	}
	return n;
}

static void
rename_arg(Ren *r, SchedArg *a, const char *ctx)
{
	if (a->kind == ARG_NAME)
		a->str = rename_name(r, a->str, ctx);
	if (a->kind == ARG_LIST) {
		SchedArg *l = arena_alloc(perm, (size_t)(a->nlist + 1) * sizeof *l);
		for (int i = 0; i < a->nlist; i++) {
			l[i] = a->list[i];
			rename_arg(r, &l[i], ctx);
		}
		a->list = l;
	}
}

static bool
makes_stage(const char *prim)
{
	return prim && (!strcmp(prim, "cache_read") || !strcmp(prim, "cache_write") ||
	    !strcmp(prim, "rfactor"));
}

static SchedPrim *
rename_prims(Ren *r, const SchedPrim *in, int n)
{
	SchedPrim *out = arena_alloc(perm, (size_t)(n + 1) * sizeof *out);
	for (int i = 0; i < n; i++) {
		SchedPrim *p = &out[i];
		*p = in[i];
		if (p->form == SCHED_KNOB && p->knob == intern_cstr("isa")) {
			if (*r->isa_declared)
				p->form = SCHED_PRIM;   /* no stage, no condition: dropped */
			*r->isa_declared = true;
			continue;
		}
		if (p->form == SCHED_KNOB) {
			const char *k = auto_fresh(r->g, arena_printf(perm, "%s_%s", r->prefix, p->knob));
			int nk = r->nk, capk = r->capk;
			*ARENA_PUSH(perm, r->kfrom, nk, capk) = p->knob;
			nk = r->nk;
			*ARENA_PUSH(perm, r->kto, nk, r->capk) = k;
			r->nk = nk;
			p->knob = k;
			continue;
		}
		if (p->cond && p->form != SCHED_WHEN) {
			r->bad = true;   /* specialize: a condition on the callee's sizes */
			return out;
		}
		if (p->cond) {
			p->cond = rename_expr(r, p->cond);
			p->body = rename_prims(r, p->body, p->nbody);
			continue;
		}
		const char *stage = p->stage;
		if (r->absorb && p->prim && !strcmp(p->prim, "cache_write") && p->nouts == 1 &&
		    stage && !strcmp(stage, r->y)) {
			/* y.cache_write(...) -> yl: yl is the result itself */
			int ns = r->ns, caps = r->caps;
			*ARENA_PUSH(perm, r->sfrom, ns, caps) = in[i].outs[0];
			ns = r->ns;
			*ARENA_PUSH(perm, r->sto, ns, r->caps) = r->absorb;
			r->ns = ns;
			p->stage = NULL;   /* dropped */
			continue;
		}
		p->stage = rename_name(r, p->stage, NULL);
		p->args = arena_alloc(perm, (size_t)(p->nargs + 1) * sizeof *p->args);
		for (int j = 0; j < p->nargs; j++) {
			p->args[j] = in[i].args[j];
			/* compute_at(S, loop): the loop is one of S's */
			const char *ctx = stage;
			if (j > 0 && in[i].args[0].kind == ARG_NAME && !strcmp(p->prim, "compute_at"))
				ctx = in[i].args[0].str;
			rename_arg(r, &p->args[j], ctx);
		}
		p->outs = arena_alloc(perm, (size_t)(p->nouts + 1) * sizeof *p->outs);
		for (int j = 0; j < p->nouts; j++) {
			p->outs[j] = in[i].outs[j];
			if (!makes_stage(p->prim))
				continue;
			const char *to = auto_fresh(r->g, arena_printf(perm, "%s__%s", r->prefix,
			    in[i].outs[j]));
			int ns = r->ns, caps = r->caps;
			*ARENA_PUSH(perm, r->sfrom, ns, caps) = in[i].outs[j];
			ns = r->ns;
			*ARENA_PUSH(perm, r->sto, ns, r->caps) = to;
			r->ns = ns;
			p->outs[j] = to;
		}
	}
	return out;
}

static int
count_knobs(const SchedPrim *p, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += p[i].form == SCHED_KNOB ? 1 : p[i].form == SCHED_WHEN ?
		    count_knobs(p[i].body, p[i].nbody) : 0;
	return k;
}

int
auto_transfer(FILE *fp, AutoGraph *g, const AutoFusion *f, bool tmpl)
{
	int knobs = 0;
	bool isa_declared = false;
	for (int R = 0; R < g->n; R++) {
		if (!f->from[R])
			continue;
		Schedule *s = f->from[R];
		AutoStage *res = &g->s[R], *tail = &g->s[f->tail[R]];
		CallSite *cs = res->t->rule->site;
		Ren r = { .g = g, .cs = cs, .y = res->t->rule->site_name, .T = tail->name,
			.prefix = cs->result, .trule = tail->t->rule,
			.absorb = res->kind == AK_REDUCE && f->tail[R] != R ? res->name : NULL,
			.isa_declared = &isa_declared };
		for (int i = 0; i < cs->callee->nitems; i++) {
			Rule *yr = cs->callee->items[i].rule;
			if (yr && yr->name == r.y && !yr->update && !yr->init)
				r.yrule = yr;
		}
		bool use_tmpl = tmpl && s->tmpl;
		const SchedPrim *src = use_tmpl ? s->tmpl : s->prims;
		int nsrc = use_tmpl ? s->ntmpl : s->nprims;
		for (int i = 0; i < g->n; i++)
			if (f->by[i] == R)
				g->s[i].fixed = true;
		SchedPrim *out = rename_prims(&r, src, nsrc);
		if (r.bad)
			return -1;
		fprintf(fp, "  // F: the call of %s (%s): %s's own schedule for %s", cs->callee->name,
		    cs->result, cs->callee->name, s->target);
		if (f->tail[R] != R)
			fprintf(fp, ", %s in place of its output", tail->name);
		fputc('\n', fp);
		/* the result (unless a reduction: it stays, in the place of the
		 * callee's cache) and the chain up to the tail, inlined into it */
		for (int i = r.absorb ? res->cons[0] : R; i != f->tail[R]; i = g->s[i].cons[0])
			fprintf(fp, "  %s.compute_inline();\n", g->s[i].name);
		int nout = 0;
		for (int i = 0; i < nsrc; i++)
			if (out[i].stage || out[i].form != SCHED_PRIM || out[i].cond)
				out[nout++] = out[i];
		ast_format_prims(fp, out, nout, 1);
		knobs += use_tmpl ? count_knobs(src, nsrc) : 0;
	}
	return knobs;
}
