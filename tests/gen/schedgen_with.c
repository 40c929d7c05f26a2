/* schedgen_with.c: compute_with in random schedules (schedgen.c).
 *
 * Now and then (from a random stream of its own, so the other schedules
 * stay as they were) two stages of a kernel with the same domain -- the
 * same extents along their pure axes and the same reduction ranges,
 * neither reading the other, neither a scan -- are fused: the later one
 * (the lead) is shaped as usual, the earlier one gets the same primitives
 * with its own axis names, and `A.compute_with(B, L)` shares B's loops
 * down to a random one of them, L.  Both are computed at root.  Such a
 * schedule is "probably legal" as the others are: txc may still refuse it
 * with a diagnostic (a stage computed between the two reads the earlier
 * one), and where it accepts it the result must match.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gen/schedgen.h"

static int lead = -1, member = -1;
static size_t text_from, text_to;     /* the lead's shaping in out[] */
static char text[8192];

static uint64_t
next_with(void)
{
	uint64_t z = (rng_with += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
rnd_with(int n)
{
	return n <= 0 ? 0 : (int)(next_with() % (uint64_t)n);
}

/* An expression as .tx source (to compare extents). */
static char *
source(Expr *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		return NULL;
	if (e)
		ast_format_expr(fp, e);
	fclose(fp);
	return buf;
}

static bool
same_expr(Expr *a, Expr *b)
{
	char *x = source(a), *y = source(b);
	bool same = x && y && strcmp(x, y) == 0;
	free(x);
	free(y);
	return same;
}

static bool
reads_stage(int c, int p)
{
	for (int i = 0; i < st[p].ncons; i++)
		if (st[p].cons[i] == c)
			return true;
	return false;
}

static Reduce *
reduce_of(Stage *s)
{
	Rule *r = s->t ? s->t->rule : NULL;
	return r && r->value && r->value->kind == EXPR_REDUCE ? &r->value->reduce : NULL;
}

/* Whether a and b iterate the same domain, axis by axis. */
static bool
same_domain(Stage *a, Stage *b)
{
	Tensor *x = a->t, *y = b->t;
	if (!x || !y || !x->rule || !y->rule || x->ninits || y->ninits || !x->shape || !y->shape)
		return false;
	if (x->ndims != y->ndims || a->nloops != b->nloops || a->reduction != b->reduction)
		return false;
	for (int d = 0; d < x->ndims; d++)
		if (!same_expr(x->shape[d], y->shape[d]))
			return false;
	Reduce *p = reduce_of(a), *q = reduce_of(b);
	if (!p != !q || (p && p->naxes != q->naxes))
		return false;
	for (int k = 0; p && k < p->naxes; k++) {
		if (a->dep[k] || b->dep[k] || p->where || q->where)
			return false;
		if (!same_expr(p->axes[k].lo, q->axes[k].lo) || !same_expr(p->axes[k].hi, q->axes[k].hi))
			return false;
	}
	return true;
}

void
with_pick(void)
{
	lead = member = -1;
	if (rnd_with(100) >= 30)
		return;
	int pairs[64][2], n = 0;
	for (int b = 0; b < nst; b++)
		for (int a = 0; a < b && n < 64; a++)
			if (!st[a].scan && !st[b].scan && !st[a].upd && !st[b].upd && !reads_stage(a, b) &&
			    !reads_stage(b, a) &&
			    same_domain(&st[a], &st[b])) {
				pairs[n][0] = a;
				pairs[n++][1] = b;
			}
	if (!n)
		return;
	int k = rnd_with(n);
	member = pairs[k][0];
	lead = pairs[k][1];
}

bool
with_lead(int si)
{
	return si == lead;
}

bool
with_member(int si)
{
	return si == member;
}

void
with_shape_lead(Stage *s)
{
	text_from = outlen;
	shape_loops(s);
	text_to = outlen;
	size_t n = text_to - text_from < sizeof text - 1 ? text_to - text_from : sizeof text - 1;
	memcpy(text, out + text_from, n);
	text[n] = 0;
}

/* The root axis names of s, in loop order before any primitive. */
static const char *
root_name(Stage *s, int i)
{
	Rule *r = s->t->rule;
	if (i < r->naxes)
		return r->axes[i];
	Reduce *rd = reduce_of(s);
	return rd && i - r->naxes < rd->naxes ? rd->axes[i - r->naxes].name : NULL;
}

/* name of the lead's as the member's: its root axes by position */
static const char *
mapped(Stage *m, Stage *l, const char *name, size_t len)
{
	for (int i = 0; i < l->nloops; i++) {
		const char *r = root_name(l, i), *to = root_name(m, i);
		if (r && to && strlen(r) == len && !strncmp(r, name, len))
			return to;
	}
	return NULL;
}

void
with_shape_member(Stage *s)
{
	Stage *l = &st[lead];
	/* its loops: the lead's, with its own axis names */
	for (int i = 0; i < l->nloops; i++) {
		Loop lp = l->loops[i];
		const char *to = mapped(s, l, lp.name, strlen(lp.name));
		if (to)
			lp.name = to;
		s->loops[i] = lp;
	}
	s->nloops = l->nloops;
	/* the lead's primitives, line by line, for s */
	size_t ln = strlen(l->name);
	for (const char *p = text; *p; ) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
		const char *q = p, *end = p + len;
		while (q < end && *q == ' ')
			q++;
		if ((size_t)(end - q) > ln && !strncmp(q, l->name, ln) && q[ln] == '.') {
			emit("  %s", s->name);
			q += ln;
		}
		while (q < end) {
			if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_') {
				const char *w = q;
				while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
				    (*q >= '0' && *q <= '9') || *q == '_'))
					q++;
				const char *to = mapped(s, l, w, (size_t)(q - w));
				if (to)
					emit("%s", to);
				else
					emit("%.*s", (int)(q - w), w);
			} else {
				emit("%c", *q++);
			}
		}
		p += len;
	}
}

void
with_fuse(Stage *s)
{
	Stage *l = &st[lead];
	if (!l->nloops)
		return;
	int d = rnd_with(l->nloops);
	emit("  %s.compute_with(%s, %s);\n", s->name, l->name, l->loops[d].name);
}
