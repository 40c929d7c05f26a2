/* inlining.c: rule C1 of the cpu generator (txc-schedule(7)
 * AUTO-SCHEDULING): which stages are inlined into their readers.  A cheap
 * stage with no reduction, read at one index by each reader, is inlined,
 * unless a reader is in another fusion group that holds a reduction (a
 * convolution group's output is stored, not computed again per tap), it
 * is a boundary copy a reader takes plane by plane or a contraction reads
 * as a broadcast window (C1b), or a transposed copy a reduction reads
 * (packed per strip instead).
 */
#include <string.h>

#include "auto/cpu.h"
#include "sema/sema.h"


/* Whether s, read by its consumers, is read in one place of each: its
 * accesses in each consumer all the same index. */
static bool
read_once_each(Cpu *c, int si)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	for (int i = 0; i < s->ncons; i++) {
		AutoStage *r = &g->s[s->cons[i]];
		if (r->kind == AK_SPECIAL)
			return false;
		Accs a;
		cpu_accesses_of(r, s->t, &a);
		if (a.more)
			return false;
		for (int j = 1; j < a.n; j++)
			for (int d = 0; d < a.acc[0]->call.nargs; d++)
				if (!sema_same_expr(a.acc[0]->call.args[d], a.acc[j]->call.args[d]))
					return false;
	}
	return true;
}

/* Whether s copies an input in another order (a transpose): its last
 * axis is not the unit-stride index of what it reads. */
bool
inlining_transposing(const AutoStage *s)
{
	if (s->npure < 2)
		return false;
	Accs a;
	cpu_accesses_of(s, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (cpu_uses_pure(a.acc[i], s->npure - 1) && !cpu_unit_last(a.acc[i], s->npure - 1))
			return true;
	return false;
}

/* A boundary copy that a consumer reads plane by plane (its outer indices
 * the consumer's own outer axes, the last two shifted by constants), as a
 * depthwise convolution reads its padded input: computed per plane. */
static bool
plane_read(Cpu *c, int si)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (!s->boundary || s->ncons != 1 || s->npure < 3)
		return false;
	AutoStage *r = &g->s[s->cons[0]];
	if (r->npure != s->npure)
		return false;
	Accs a;
	cpu_accesses_of(r, s->t, &a);
	for (int i = 0; i < a.n; i++)
		for (int d = 0; d < s->npure - 2; d++)
			if (!cpu_identity_at(a.acc[i], d))
				return false;
	return a.n > 0;
}

/* Whether s may be inlined into its readers as far as the fusion groups
 * go: each reader is of s's group, or of a group with no reduction (an
 * element-wise chain of its own).  A stage of another group is its
 * group's output: inlined into a convolution's reads it would be computed
 * again for every tap and every output channel. */
static bool
group_ok(Cpu *c, int si)
{
	const AutoFusion *f = c->o->fusion;
	if (!f)
		return true;
	AutoStage *s = &c->g->s[si];
	for (int i = 0; i < s->ncons; i++) {
		int r = s->cons[i];
		if (f->group[r] != f->group[si] && f->kind[f->group[r]] >= FK_REDUCE)
			return false;
	}
	return true;
}

/* C1b: a boundary copy (padding) that a contraction reads with a window
 * and without its vector axis (one broadcast value per vector of sums, as
 * an NCHWc convolution reads its input) is kept: inlined, its test would
 * run for every tap of every output; computed once, the tile reads it
 * with no test. */
static bool
broadcast_window(Cpu *c, int si)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (!s->boundary || s->ncons < 1)
		return false;
	for (int i = 0; i < s->ncons; i++) {
		AutoStage *r = &g->s[s->cons[i]];
		if (r->kind != AK_REDUCE || r->npure < 1)
			return false;
		Accs a;
		cpu_accesses_of(r, s->t, &a);
		if (a.n < 1 || a.more)
			return false;
		for (int j = 0; j < a.n; j++) {
			if (cpu_uses_pure(a.acc[j], r->npure - 1))
				return false;
			bool window = false;
			for (int k = 0; k < a.acc[j]->call.nargs && !window; k++)
				for (int d = 0; d < r->nred && !window; d++)
					window = auto_coeff(a.acc[j]->call.args[k], false, d) != 0;
			if (!window)
				return false;
		}
	}
	return true;
}

void
inlining_decide(Cpu *c)
{
	AutoGraph *g = c->g;
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (s->output || s->kind != AK_PURE || s->in_index || s->ncons == 0 || s->fixed ||
		    s->keep)
			continue;
		if (s->expensive || !group_ok(c, i) || !read_once_each(c, i) || plane_read(c, i) ||
		    broadcast_window(c, i))
			continue;
		if (inlining_transposing(s)) {
			/* a transposed copy a reduction reads: packed per strip */
			bool by_red = false;
			for (int j = 0; j < s->ncons; j++)
				by_red |= g->s[s->cons[j]].kind == AK_REDUCE;
			if (by_red) {
				c->pack[i] = true;
				continue;
			}
		}
		c->place[i] = P_INLINE;
		s->inlined = true;
	}
}
