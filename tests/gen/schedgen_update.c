/* schedgen_update.c: random schedules of stages with an update definition
 * (tx.5 UPDATES, txc-schedule(7) UPDATES), for schedgen.c.
 *
 * The update's domain becomes reduction loops of its stage (roots bit
 * 16 + a), after the pure ones.  What schedgen.c may then draw: anything
 * on the pure loops but a shift_inward split of an axis the update keeps
 * in its place and a fuse of a kept axis with one it does not keep; the
 * domain's loops stay serial (schedgen.c never parallelizes or vectorizes
 * a reduction loop) and, unless the update is associative, in the order
 * of its steps: no tile or fuse of two of them, and a reorder keeps them
 * in their order (pure loops may go anywhere among them).  The stage
 * stays at root, nothing is computed at its loops, no cache_write or
 * rfactor (schedgen.c).  The certainly illegal primitives: a domain loop
 * parallel or vectorized, the stage computed inline, and for an update
 * that is not associative rfactor or two domain loops swapped.
 * The outputs of a tuple reduction (tx.5 TUPLE REDUCTIONS) are update
 * definitions too, whose range runs in the first output's nest: that one
 * draws it as any update's domain (never associative here: its steps keep
 * their order; rfactor is illegal, or, where the combiner is declared
 * associative, drawn by schedgen.c on the outermost range loop), the
 * others have no loops of it.
 */
#include <stdio.h>
#include <string.h>

#include "tests/gen/schedgen.h"

static int
const_of(Expr *e)
{
	return e && e->kind == EXPR_INT && e->ival > 0 && e->ival < 1000000 ? (int)e->ival : 0;
}

void
updgen_setup(Stage *s)
{
	Rule *u = s->t->update;
	s->upd = true;
	s->uassoc = u->upd_assoc;
	for (int d = 0; d < u->naxes && d < 16; d++)
		if (u->axes && u->axes[d])
			s->ukeep |= 1u << d;
	s->tassoc = u->tgroup && u->tpos == 0 && u->tgroup->assoc;
	s->tmember = u->tgroup && u->tpos != 0;
	if (s->tmember)
		return;     /* a tuple's range: its first output's loops */
	for (int a = 0; a < u->upd.naxes && s->nloops < MAXL; a++) {
		Loop *l = &s->loops[s->nloops++];
		memset(l, 0, sizeof *l);
		l->name = u->upd.axes[a].name;
		l->red = true;
		l->roots = a < 16 ? 1u << (16 + a) : 0;
		if (!u->upd.axes[a].lo)
			l->ext = const_of(u->upd.axes[a].hi);
	}
}

/* A shift_inward split of l. */
bool
updgen_split_ok(Stage *s, const Loop *l)
{
	return !s->upd || !(l->roots & s->ukeep);
}

bool
updgen_tile_ok(Stage *s, const Loop *x, const Loop *y)
{
	return !s->upd || s->uassoc || !(x->red && y->red);
}

bool
updgen_fuse_ok(Stage *s, const Loop *a, const Loop *b)
{
	if (!s->upd)
		return true;
	if (a->red && b->red)
		return s->uassoc;
	unsigned pure = (a->roots | b->roots) & 0xffffu;
	return !(pure & s->ukeep) || !(pure & ~s->ukeep);
}

/* The domain's loops in `after` in the order they have now. */
bool
updgen_order_ok(Stage *s, const Loop *after, int n)
{
	if (!s->upd || s->uassoc)
		return true;
	for (int i = 0, k = 0; i < n; i++) {
		if (!after[i].red)
			continue;
		while (k < s->nloops && !s->loops[k].red)
			k++;
		if (k >= s->nloops || after[i].name != s->loops[k++].name)
			return false;
	}
	return true;
}

void
updgen_inject(Stage *s, char *why)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].red)
			c[n++] = i;
	const char *l = n ? s->loops[c[rnd(n)]].name : NULL;
	switch (n ? rnd(5) : 4) {
	case 0:
		emit("  %s.parallel(%s);\n", s->name, l);
		snprintf(why, 160, "parallel over step '%s' of the update of '%s'", l, s->name);
		return;
	case 1:
		emit("  %s.vectorize(%s);\n", s->name, l);
		snprintf(why, 160, "vectorize of step '%s' of the update of '%s'", l, s->name);
		return;
	case 2:
		if (!s->uassoc && !(s->t && s->t->update && s->t->update->tgroup &&
		    s->t->update->tgroup->assoc)) {
			emit("  %s.rfactor(%s) -> %s;\n", s->name, l, fresh_name("R"));
			snprintf(why, 160, "rfactor of the update of '%s', not associative", s->name);
			return;
		}
		/* fall through */
	case 3:
		if (!s->uassoc) {
			/* its first domain loop split, the inner part outside */
			const char *o = fresh_name(s->loops[c[0]].name), *in = fresh_name(s->loops[c[0]].name);
			emit("  %s.split(%s, 2) -> (%s, %s);\n", s->name, s->loops[c[0]].name, o, in);
			emit("  %s.reorder(%s, %s);\n", s->name, in, o);
			snprintf(why, 160, "steps of the update of '%s' out of order", s->name);
			return;
		}
		/* fall through */
	default:
		if (!s->output) {
			emit("  %s.compute_inline();\n", s->name);
			snprintf(why, 160, "compute_inline of '%s', which has an update", s->name);
		} else {
			emit("  %s.parallel(nosuch);\n", s->name);
			snprintf(why, 160, "parallel of an axis that '%s' does not have", s->name);
		}
		return;
	}
}
