/* schedshare.c: schedules shared between kernels (tx.5 SCHEDULES).
 *
 *     schedule conv2d_vta for vta = conv2d_vta_packed;
 *     schedule conv2d_vta as serial for vta = conv2d_vta_packed;
 *
 * give conv2d_vta a copy of the statements of conv2d_vta_packed's schedule
 * of the same name (or the unnamed one) for the same target, as if they
 * were written again; they are then checked against conv2d_vta's own
 * stages and axes like any schedule (a kernel whose stages have the same
 * names, as a kernel and its twin on packed tensors do).  This runs first
 * in sema, before the calls are expanded (layouts.c reads the caller's
 * schedules) and before the knobs (knobs.c: a template shared is a
 * template of each kernel, with its own point).  A schedule shared from
 * one that is itself shared follows the chain.  An unknown kernel, no
 * such schedule, or a chain that comes back to the schedule is an error
 * at the name after '='.
 */
#include <string.h>

#include "sema/sema.h"

static SchedArg *
copy_args(const SchedArg *a, int n)
{
	SchedArg *c = arena_alloc(perm, (size_t)(n + 1) * sizeof *c);
	for (int i = 0; i < n; i++) {
		c[i] = a[i];
		if (a[i].kind == ARG_LIST)
			c[i].list = copy_args(a[i].list, a[i].nlist);
	}
	return c;
}

/* A deep copy: sema resolves a specialize condition in place, against
 * the kernel of the schedule holding it. */
static SchedPrim *
copy_prims(const SchedPrim *p, int n)
{
	SchedPrim *c = arena_alloc(perm, (size_t)(n + 1) * sizeof *c);
	for (int i = 0; i < n; i++) {
		c[i] = p[i];
		c[i].args = copy_args(p[i].args, p[i].nargs);
		c[i].cond = callexpr_dup(p[i].cond);
		c[i].body = copy_prims(p[i].body, p[i].nbody);
	}
	return c;
}

static bool
same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The schedule of kernel k named name (NULL: unnamed) for target t, in p
 * or what it imports. */
static Schedule *
find(Program *p, const char *k, const char *name, const char *t, int depth)
{
	for (int i = 0; p && depth < 64 && i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (s && !s->generated && same(s->kernel, k) && same(s->name, name) &&
		    same(s->target, t))
			return s;
	}
	for (int i = 0; p && depth < 64 && i < p->nimports; i++) {
		Schedule *s = p->imports[i] ? find(p->imports[i]->prog, k, name, t, depth + 1) : NULL;
		if (s)
			return s;
	}
	return NULL;
}

static const char *
what(Schedule *s)
{
	return s->name ? arena_printf(perm, "schedule '%s' of '%s' for %s", s->name, s->kernel,
	    s->target) : arena_printf(perm, "schedule of '%s' for %s", s->kernel, s->target);
}

/* Fills s from the schedule it shares (the program s is in is p). */
static void
share(Program *p, Schedule *s)
{
	if (!s->from || s->share_state == 2)
		return;
	if (s->share_state == 1) {
		if (same(s->from, s->kernel))
			diag_error(s->from_loc, "the %s is shared from itself", what(s));
		else
			diag_error(s->from_loc, "the %s is shared from itself, through '%s'",
			    what(s), s->from);
		s->share_state = 2;
		return;
	}
	s->share_state = 1;
	Schedule *src = NULL;
	if (!sema_find_kernel(p, s->from))
		diag_error(s->from_loc, "the %s is shared from unknown kernel '%s'", what(s),
		    s->from);
	else if (!(src = find(p, s->from, s->name, s->target, 0)) && s->name)
		diag_error(s->from_loc, "'%s' has no schedule '%s' for %s to share", s->from,
		    s->name, s->target);
	else if (!src)
		diag_error(s->from_loc, "'%s' has no unnamed schedule for %s to share", s->from,
		    s->target);
	if (src && src->from)
		share(p, src);
	if (src && s->share_state == 1) {
		/* the statements as written: knobs.c may have made the
		 * source's prims one point of its template already */
		const SchedPrim *from = src->tmpl ? src->tmpl : src->prims;
		int n = src->tmpl ? src->ntmpl : src->nprims;
		s->prims = copy_prims(from, n);
		s->nprims = n;
	}
	s->share_state = 2;
}

void
schedshare_program(Program *p)
{
	for (int i = 0; p && i < p->nschedules; i++)
		if (p->schedules[i])
			share(p, p->schedules[i]);
}
