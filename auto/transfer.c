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
 * the calls (the stdlib's schedules list the same sets).  Arguments that
 * are words of the language (a memory scope, a thread tag, an intrinsic,
 * a pragma's text) keep their spelling.  A specialize is decided at the
 * call's sizes (the -D values through the call's arguments): the callee's
 * schedule at those sizes is what is renamed.  The
 * result and the chain before the last stage are inlined first.  The text
 * then goes through the parser and the checks like any schedule; if they
 * refuse it, attach.c schedules the kernel without it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auto/auto.h"
#include "sema/sema.h"

typedef struct {
	AutoGraph *g;
	CallSite *cs;
	const char *y, *T;              /* the callee's output, and the stage taking its loops */
	const char *R;                  /* the call's result (T, or inlined into T) */
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

/* ---- specialize: decided at the call's sizes ------------------------------ */

/* The value of e: in the callee's terms (callee) its parameters are the
 * call's arguments, in the caller's its sizes their -D values.  False
 * when some value is not known when the kernel is compiled (a size with
 * no -D, a scalar parameter) or the arithmetic fails. */
static bool
value_at(Ren *r, Expr *e, bool callee, int depth, int64_t *v)
{
	if (!e || depth > 16)
		return false;
	int64_t a, b;
	switch (e->kind) {
	case EXPR_INT: case EXPR_BOOL:
		*v = e->ival;
		return true;
	case EXPR_NAME:
		if (callee) {
			Kernel *f = r->cs->callee;
			for (int i = 0; i < f->nparams; i++)
				if (!strcmp(f->params[i].name, e->id.name))
					return r->cs->psub && r->cs->psub[i] &&
					    value_at(r, r->cs->psub[i], false, depth + 1, v);
			return false;
		}
		for (int i = 0; i < r->g->k->nparams; i++) {
			Param *pa = &r->g->k->params[i];
			if (!pa->is_size || strcmp(pa->name, e->id.name))
				continue;
			for (int d = 0; d < r->g->ndefs; d++)
				if (r->g->defs[d] && !strcmp(r->g->defs[d], pa->name)) {
					*v = r->g->vals[d];
					return true;
				}
		}
		return false;
	case EXPR_CAST:
		return value_at(r, e->call.args[0], callee, depth, v);
	case EXPR_CALL:
		if (e->call.nargs != 2 || !e->call.name || (strcmp(e->call.name, "min") &&
		    strcmp(e->call.name, "max")) || !value_at(r, e->call.args[0], callee, depth, &a) ||
		    !value_at(r, e->call.args[1], callee, depth, &b))
			return false;
		*v = !strcmp(e->call.name, "min") ? (a < b ? a : b) : (a > b ? a : b);
		return true;
	case EXPR_SELECT:
		if (!value_at(r, e->call.args[0], callee, depth, &a))
			return false;
		return value_at(r, e->call.args[a ? 1 : 2], callee, depth, v);
	case EXPR_UNARY:
		if (!value_at(r, e->bin.a, callee, depth, &a))
			return false;
		if (e->bin.op == OP_NOT)
			*v = !a;
		else if (e->bin.op == OP_NEG && a != INT64_MIN)
			*v = -a;
		else
			return false;
		return true;
	case EXPR_BINARY:
		if (!value_at(r, e->bin.a, callee, depth, &a) ||
		    !value_at(r, e->bin.b, callee, depth, &b))
			return false;
		switch (e->bin.op) {
		case OP_ADD: return !__builtin_add_overflow(a, b, v);
		case OP_SUB: return !__builtin_sub_overflow(a, b, v);
		case OP_MUL: return !__builtin_mul_overflow(a, b, v);
		case OP_DIV:   /* rounds toward negative infinity (tx.5) */
			if (b == 0 || (b == -1 && a == INT64_MIN))
				return false;
			*v = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
			return true;
		case OP_MOD:   /* never negative */
			if (b == 0 || b == INT64_MIN || (b == -1 && a == INT64_MIN))
				return false;
			*v = ((a % b) + (b < 0 ? -b : b)) % (b < 0 ? -b : b);
			return true;
		case OP_EQ: *v = a == b; return true;
		case OP_NE: *v = a != b; return true;
		case OP_LT: *v = a < b; return true;
		case OP_LE: *v = a <= b; return true;
		case OP_GT: *v = a > b; return true;
		case OP_GE: *v = a >= b; return true;
		case OP_AND: *v = a && b; return true;
		case OP_OR: *v = a || b; return true;
		default: return false;
		}
	default:
		return false;
	}
}

/* The callee's statements with its specializations decided at the call:
 * every size the conditions read is known when the caller is compiled
 * (-D; on VTA always), so the nest the callee would run at those sizes
 * is the statements before the first condition that holds and its body,
 * or, when none holds, the general ones.  A condition not known then:
 * r->bad (the schedule is not transferred). */
static const SchedPrim *
decide_specializations(Ren *r, const SchedPrim *in, int n, int *nout)
{
	SchedPrim *out = arena_alloc(perm, (size_t)(n + 1) * sizeof *out);
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (!in[i].cond || in[i].form != SCHED_PRIM) {
			out[k++] = in[i];
			continue;
		}
		int64_t v;
		if (!value_at(r, in[i].cond, true, 0, &v)) {
			r->bad = true;   /* a condition only the run decides */
			break;
		}
		if (!v)
			continue;
		SchedPrim *o = arena_alloc(perm, (size_t)(k + in[i].nbody + 1) * sizeof *o);
		memcpy(o, out, (size_t)k * sizeof *o);
		for (int j = 0; j < in[i].nbody; j++)
			o[k++] = in[i].body[j];
		*nout = k;
		return o;
	}
	*nout = k;
	return out;
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
			/* a reader list ([yp] of cache_read) names the stages whose
			 * reads are redirected: the callee output's reads are the
			 * result's, which is inlined into the chain's last stage
			 * only once the schedule is applied */
			if (l[i].kind == ARG_NAME && !strcmp(l[i].str, r->y) && r->R && !r->absorb)
				l[i].str = r->R;
			else
				rename_arg(r, &l[i], ctx);
		}
		a->list = l;
	}
}

/* Whether positional argument j of primitive prim names a stage, a
 * tensor or an axis (renamed), rather than a word of the language (a
 * memory scope such as acc, a thread tag), an intrinsic, a pragma's text
 * or a number, which keep their spelling: VTA's `acc.set_scope(acc)`
 * names the stage acc and the scope acc.  An unknown primitive: every
 * name is renamed (the checks then report it as they would the callee's). */
static bool
arg_is_name(const char *prim, int j)
{
	const PrimInfo *pi = prim_lookup(prim);
	if (!pi)
		return true;
	int nd = 0;
	while (nd < 4 && pi->args[nd].what)
		nd++;
	if (nd == 0)
		return true;
	switch (pi->args[j < nd ? j : nd - 1].kind) {
	case PARG_WORD: case PARG_TEXT: case PARG_INT:
		return false;
	case PARG_IDENT:   /* an intrinsic, or a dimension of the stage */
		return pi->id == PRIM_REORDER_STORAGE || pi->id == PRIM_STORAGE_ALIGN;
	default:
		return true;
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
			r->bad = true;   /* specialize in a when: not decided */
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
		for (int j = 0, pos = 0; j < p->nargs; j++) {
			p->args[j] = in[i].args[j];
			if (p->args[j].key || !arg_is_name(p->prim, pos++)) {
				/* tail = exact, a scope, an intrinsic, a number: only a
				 * knob in its place (split(m, mt)) is renamed */
				const char *k = p->args[j].kind == ARG_NAME ?
				    lookup(r->kfrom, r->kto, r->nk, p->args[j].str) : NULL;
				if (k)
					p->args[j].str = k;
				continue;
			}
			/* compute_at(S, loop): the loop is one of S's */
			const char *ctx = stage;
			if (j > 0 && in[i].args[0].kind == ARG_NAME && p->prim &&
			    (!strcmp(p->prim, "compute_at") || !strcmp(p->prim, "store_at") ||
			    !strcmp(p->prim, "compute_with")))
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
			.R = res->name,
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
		src = decide_specializations(&r, src, nsrc, &nsrc);
		if (r.bad)
			return -1;
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
