/* attach.c: the schedule generator's entry point for the driver, txc
 * bench, viz and tune: the generated text is parsed and checked like a
 * user's schedule and added to the program as `schedule K as auto for
 * TARGET`, marked generated (lowering then falls back to the naive nest
 * if it ever fails, unless TXC_AUTO_STRICT=1).
 */
#include <stdlib.h>
#include <string.h>

#include "auto/auto.h"
#include "parser/parser.h"
#include "sema/sema.h"

bool
auto_strict(void)
{
	const char *e = getenv("TXC_AUTO_STRICT");
	return e && *e && strcmp(e, "0");
}

char *
auto_text(Program *p, Kernel *k, const AutoRequest *r, const char **why)
{
	const char *target = r->target ? r->target : "cpu";
	if (why)
		*why = NULL;
	if (k->intr_target) {
		if (why)
			*why = "an intrinsic declaration has no schedule";
		return NULL;
	}
	AutoGraph *g = arena_alloc(perm, sizeof *g);
	auto_graph(g, k, r->defs, r->vals, r->ndefs);
	if (g->too_big) {
		if (why)
			*why = arena_printf(perm, "the kernel has more stages than the generator "
			    "handles (%d)", AUTO_MAXS);
		return NULL;
	}
	AutoMachine m;
	auto_machine(&m, r->cpu, r->features);
	const char *no = "the rules found nothing to do";
	AutoOptions o = { .m = &m, .target = target, .tmpl = r->tmpl, .why = &no, .p = p,
	    .cuda_arch = r->cuda_arch };
	char *buf = NULL;
	size_t len = 0;
	/* fusion (fuse.c): the groups the rules schedule as units, and the
	 * calls that keep their callee's own schedule (none with no_fusion) */
	AutoFusion *f = arena_alloc(perm, sizeof *f);
	auto_fuse(g, p, r->no_fusion ? NULL : target, m.threads, f);
	o.fusion = f;
	if (!r->no_fusion) {
		if (f->any_fixed) {
			FILE *pp = open_memstream(&buf, &len);
			if (!pp)
				return NULL;
			int kn = auto_transfer(pp, g, f, r->tmpl);
			fclose(pp);
			if (kn >= 0) {
				o.prelude = arena_strdup(perm, buf);
				o.knobs_used = kn;
			} else {
				for (int i = 0; i < g->n; i++)
					g->s[i].fixed = g->s[i].keep = false;
			}
			free(buf);
			buf = NULL;
			len = 0;
		}
	}
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		return NULL;
	bool ok = !strcmp(target, "cuda") ? auto_cuda(fp, g, &o) :
	    !strcmp(target, "vta") ? auto_vta(fp, g, &o) : auto_cpu(fp, g, &o);
	fclose(fp);
	if (!ok) {
		free(buf);
		if (why)
			*why = no;
		return NULL;
	}
	char *t = arena_strdup(perm, buf);
	free(buf);
	return t;
}

static bool
has_auto(Program *p, Kernel *k, const char *target)
{
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (s && s->name && !strcmp(s->name, "auto") && s->target &&
		    !strcmp(s->target, target) && (s->k ? s->k == k : !strcmp(s->kernel, k->name)))
			return true;
	}
	return false;
}

bool
auto_wanted(Program *p, Kernel *k, const char *target, const char *schedule, bool no_auto)
{
	target = target ? target : "cpu";
	if (schedule)
		return !strcmp(schedule, "auto");
	if (no_auto || k->intr_target)
		return false;
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (s && !s->name && s->target && !strcmp(s->target, target) &&
		    (s->k ? s->k == k : !strcmp(s->kernel, k->name)))
			return false;
	}
	return true;
}

/* Parses and checks text as kernel k's schedule `auto`; adds it to p when
 * keep and it passes.  Whether it passed. */
static bool
try_text(Program *p, Kernel *k, const char *text, bool keep)
{
	int before = diag_errors();
	uint32_t file = source_add(arena_printf(perm, "<auto schedule of %s>", k->name), text,
	    strlen(text));
	Program *q = parse_program(file);
	Schedule *s = diag_errors() == before && q && q->nschedules == 1 ? q->schedules[0] : NULL;
	if (!s)
		return false;
	s->k = k;
	s->generated = true;
	Schedule **v = arena_alloc(perm, (size_t)(p->nschedules + 1) * sizeof *v);
	if (p->nschedules)
		memcpy(v, p->schedules, (size_t)p->nschedules * sizeof *v);
	v[p->nschedules] = s;
	Schedule **old = p->schedules;
	p->schedules = v;
	p->nschedules++;
	knobs_program(p);
	bool ok = schedule_check_one(p, s) && diag_errors() == before;
	if (!ok || !keep) {
		p->nschedules--;   /* dropped */
		p->schedules = old;
	}
	return ok;
}

/* The text to use: with the callees' own schedules where fuse.c applies
 * them and they pass the checks, else the rules' alone. */
static char *
usable_text(Program *p, Kernel *k, const AutoRequest *r, const char **why, bool keep,
    bool *attached)
{
	*attached = false;
	char *text = auto_text(p, k, r, why);
	if (!text)
		return NULL;
	AutoRequest plain = *r;
	plain.no_fusion = true;
	char *alone = r->no_fusion ? text : auto_text(p, k, &plain, why);
	bool strict = auto_strict();
	if (!alone || strcmp(alone, text)) {
		diag_mute(true);
		bool ok = try_text(p, k, text, keep);
		diag_mute(false);
		if (ok) {
			*attached = keep;
			return text;
		}
		if (!alone)
			return NULL;
	}
	if (!strict)
		diag_mute(true);
	*attached = try_text(p, k, alone, keep) && keep;
	if (!strict)
		diag_mute(false);
	return alone;
}

char *
auto_text_checked(Program *p, Kernel *k, const AutoRequest *r, const char **why)
{
	bool attached;
	return usable_text(p, k, r, why, false, &attached);
}

bool
auto_attach(Program *p, Kernel *k, const AutoRequest *r)
{
	const char *target = r->target ? r->target : "cpu";
	if (has_auto(p, k, target))
		return true;
	/* the template: its default point is what --print-auto-schedule
	 * prints, and --tuning-log and txc tune find its knobs */
	AutoRequest rt = *r;
	rt.tmpl = true;
	const char *why;
	bool attached;
	int before = diag_errors();
	char *text = usable_text(p, k, &rt, &why, true, &attached);
	if (!text && k->nstages > AUTO_MAXS)
		diag_warn(k->name_loc, "'%s' has %d stages, more than the %d the schedule generator "
		    "handles: it keeps its naive loop nest (write a schedule, or split the kernel)",
		    k->name, k->nstages, AUTO_MAXS);
	if (!text)
		return true;   /* no schedule: the kernel keeps its naive nest */
	if (!auto_strict())
		return true;   /* one that failed its checks: the naive nest */
	return attached && diag_errors() == before;
}
