/* space.c: a schedule template's knob space: points, indices, moves.
 *
 * A point gives each knob of the template an index into its values
 * (Schedule.knobs, sema/knobs.c); points are numbered mixed-radix, knob 0
 * fastest, so a small space is swept by counting.  Random numbers are
 * xorshift64*, seeded by --seed, so a run is repeatable.  The knob isa
 * (the compile target's instruction sets, sema/knobs.c) is not searched:
 * it keeps the value the target takes, since a plan for registers the
 * machine lacks only runs split (and slower) there.
 */
#include <string.h>

#include "tune/tune.h"

#include "sema/sema.h"

Space
space_of(Schedule *s)
{
	Space sp = { .s = s, .nknobs = s->nknobs, .size = 1 };
	sp.nvalues = arena_alloc(perm, (s->nknobs + 1) * sizeof *sp.nvalues);
	sp.base = arena_alloc(perm, (s->nknobs + 1) * sizeof *sp.base);
	for (int i = 0; i < s->nknobs; i++) {
		sp.nvalues[i] = s->knobs[i]->nargs;
		sp.base[i] = 0;
		if (s->knobs[i]->knob == intern_cstr("isa") && knobs_isa()) {
			/* -K isa=VALUE's, else the target's */
			sp.base[i] = knobs_default(s->knobs[i]);
			for (int v = 0; v < s->knobs[i]->nargs; v++)
				if (!strcmp(knobs_value_text(&s->knobs[i]->args[v]), knobs_isa()))
					sp.base[i] = v;
			sp.nvalues[i] = 1;
		}
		sp.size *= sp.nvalues[i];
	}
	return sp;
}

void
space_point(const Space *sp, uint64_t idx, int *point)
{
	for (int i = 0; i < sp->nknobs; i++) {
		point[i] = sp->base[i] + (int)(idx % (uint64_t)sp->nvalues[i]);
		idx /= (uint64_t)sp->nvalues[i];
	}
}

uint64_t
space_index(const Space *sp, const int *point)
{
	uint64_t idx = 0;
	for (int i = sp->nknobs - 1; i >= 0; i--)
		idx = idx * (uint64_t)sp->nvalues[i] + (uint64_t)(point[i] - sp->base[i]);
	return idx;
}

uint64_t
space_rand(uint64_t *rng)
{
	uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

void
space_random(const Space *sp, uint64_t *rng, int *point)
{
	for (int i = 0; i < sp->nknobs; i++)
		point[i] = sp->base[i] + (int)(space_rand(rng) % (uint64_t)sp->nvalues[i]);
}

void
space_neighbour(const Space *sp, uint64_t *rng, const int *from, int *to)
{
	for (int i = 0; i < sp->nknobs; i++)
		to[i] = from[i];
	int movable = 0;
	for (int i = 0; i < sp->nknobs; i++)
		movable += sp->nvalues[i] > 1;
	if (movable == 0)
		return;
	int pick = (int)(space_rand(rng) % (uint64_t)movable);
	for (int i = 0; i < sp->nknobs; i++) {
		if (sp->nvalues[i] < 2 || pick-- > 0)
			continue;
		int v = (int)(space_rand(rng) % (uint64_t)(sp->nvalues[i] - 1));
		to[i] = v >= from[i] ? v + 1 : v;
		return;
	}
}

const char *
space_describe(const Space *sp, const int *point, bool as_flags)
{
	const char *d = "";
	for (int i = 0; i < sp->nknobs; i++) {
		SchedPrim *kn = sp->s->knobs[i];
		d = arena_printf(perm, "%s%s%s%s=%s", d, i ? " " : "", as_flags ? "-K " : "",
		    kn->knob, knobs_value_text(&kn->args[point[i]]));
	}
	return d;
}
