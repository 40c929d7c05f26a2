/* schedgen.c: random schedules for a kernel (tests/gen/fuzz-schedules.sh).
 *
 *     schedgen [-n COUNT] [-s SEED] [-k KERNEL] [-i PERCENT] -o DIR FILE.tx
 *
 * Parses and checks FILE.tx with txc's own front end, learns the kernel's
 * stages, their pure and reduction axes and who reads whom, and writes
 * COUNT files DIR/g0001.tx ...: each is FILE.tx followed by one random cpu
 * schedule `schedule KERNEL as g for cpu { ... }`.  The generator tracks
 * the loops every primitive leaves (split, tile and fuse make new names,
 * reorder permutes) so that most schedules are legal: it tiles adjacent
 * loops, vectorizes constant inner loops, parallelizes pure loops,
 * partitions a loop now and then (from a random stream of its own), attaches
 * a producer only to its single consumer's final loops, inlines only
 * non-reductions, keeps parallel loops out of store_at ranges.
 *
 * About PERCENT (-i, default 15) percent of the schedules get one
 * primitive that is certainly illegal (an axis that does not exist, fuse
 * of loops that are not adjacent, parallel over a reduction axis,
 * shift_inward on a reduction axis, compute_inline of an output, a zero
 * factor, compute_at on a loop split away, compute_at on its own stage).
 * The first line of each file says which:
 *
 *     // schedgen: expect ok
 *     // schedgen: expect error: parallel over reduction axis 'k' of 'C'
 *
 * "ok" means "probably legal": txc may still reject it with a diagnostic,
 * but if it accepts it the result must match the unscheduled kernel.  An
 * "error" schedule must be rejected with a diagnostic.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/ast.h"
#include "parser/parser.h"
#include "sema/sema.h"

#define MAXS 32        /* stages */
#define MAXL 24        /* loops of a stage */

typedef struct {
	const char *name;
	bool red;          /* a reduction axis, or made from one */
	int ext;           /* constant extent, 0: not known to be constant */
	bool par, vec;
} Loop;

typedef struct {
	const char *name;
	Tensor *t;         /* NULL for stages a primitive made */
	bool output, reduction;
	Loop loops[MAXL];
	int nloops;
	int cons[MAXS];    /* stages that read it */
	int ncons;
	bool inlined;
	bool frozen;       /* after rfactor or cache_write: leave its loops alone */
	bool cached;       /* cache_write applied */
	int redirect;      /* cache_write or rfactor moved its reads to this stage, or -1 */
} Stage;

static Stage st[MAXS];
static int nst;
static Kernel *kern;
static uint64_t rng;
static uint64_t rng_part;      /* partition's own stream: adding it left the
                                  rest of every schedule as it was */

static char out[16384];
static size_t outlen;
static const char *expect;     /* NULL: ok */
static int fresh;

/* ---- random numbers ----------------------------------------------------- */

static uint64_t
next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
rnd(int n)
{
	return n <= 0 ? 0 : (int)(next() % (uint64_t)n);
}

static bool
chance(int percent)
{
	return rnd(100) < percent;
}

/* ---- output ---------------------------------------------------------------- */

static void
emit(const char *fmt, ...) TXC_PRINTF(1, 2);

static void
emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + outlen, sizeof out - outlen, fmt, ap);
	va_end(ap);
	if (n > 0 && outlen + (size_t)n < sizeof out)
		outlen += (size_t)n;
}

static void
illegal(const char *why)
{
	if (!expect)
		expect = why;
}

/* ---- the kernel's structure ---------------------------------------------- */

static int
stage_of(Tensor *t)
{
	for (int i = 0; i < nst; i++)
		if (st[i].t == t)
			return i;
	return -1;
}

/* Whether a name is taken by a tensor or parameter of the kernel or by
 * any stage or loop so far. */
static bool
name_used(const char *n)
{
	for (int i = 0; i < kern->ntensors; i++)
		if (strcmp(kern->tensors[i]->name, n) == 0)
			return true;
	for (int i = 0; i < kern->nparams; i++)
		if (strcmp(kern->params[i].name, n) == 0)
			return true;
	for (int i = 0; i < nst; i++) {
		if (strcmp(st[i].name, n) == 0)
			return true;
		for (int j = 0; j < st[i].nloops; j++)
			if (strcmp(st[i].loops[j].name, n) == 0)
				return true;
	}
	return false;
}

static const char *
fresh_name(const char *prefix)
{
	char b[64];
	do
		snprintf(b, sizeof b, "%s_%d", prefix, ++fresh);
	while (name_used(b));
	return arena_strdup(perm, b);
}

static int
const_of(Expr *e)
{
	return e && e->kind == EXPR_INT && e->ival > 0 && e->ival < 1000000 ? (int)e->ival : 0;
}

/* Records which stages read tensor accesses in e (consumer c). */
static void
reads(Expr *e, int c, int *inputs, int *ninputs)
{
	if (!e)
		return;
	switch (e->kind) {
	case EXPR_ACCESS: {
		int s = stage_of(e->call.tensor);
		if (s >= 0 && s != c) {
			bool seen = false;
			for (int i = 0; i < st[s].ncons; i++)
				seen |= st[s].cons[i] == c;
			if (!seen && st[s].ncons < MAXS)
				st[s].cons[st[s].ncons++] = c;
		} else if (s < 0 && inputs && e->call.tensor) {
			int idx = e->call.tensor->index;
			bool seen = false;
			for (int i = 0; i < *ninputs; i++)
				seen |= inputs[i] == idx;
			if (!seen && *ninputs < MAXS)
				inputs[(*ninputs)++] = idx;
		}
		for (int i = 0; i < e->call.nargs; i++)
			reads(e->call.args[i], c, inputs, ninputs);
		break;
	}
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			reads(e->call.args[i], c, inputs, ninputs);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		reads(e->bin.a, c, inputs, ninputs);
		reads(e->bin.b, c, inputs, ninputs);
		break;
	case EXPR_REDUCE:
		reads(e->reduce.body, c, inputs, ninputs);
		break;
	default:
		break;
	}
}

/* The inputs each stage reads (tensor indices). */
static int in_reads[MAXS][MAXS], nin_reads[MAXS];

static void
setup(void)
{
	nst = 0;
	fresh = 0;
	for (int i = 0; i < kern->nstages && nst < MAXS; i++) {
		Tensor *t = kern->stages[i];
		Stage *s = &st[nst++];
		memset(s, 0, sizeof *s);
		s->name = t->name;
		s->t = t;
		s->output = t->role == ROLE_OUT;
		s->redirect = -1;
		Rule *r = t->rule;
		for (int d = 0; r && d < r->naxes && s->nloops < MAXL; d++) {
			Loop *l = &s->loops[s->nloops++];
			l->name = r->axes[d];
			l->ext = t->shape && d < t->ndims ? const_of(t->shape[d]) : 0;
		}
		if (r && r->value && r->value->kind == EXPR_REDUCE) {
			s->reduction = true;
			Reduce *rd = &r->value->reduce;
			for (int a = 0; a < rd->naxes && s->nloops < MAXL; a++) {
				Loop *l = &s->loops[s->nloops++];
				l->name = rd->axes[a].name;
				l->red = true;
				if (!rd->axes[a].lo)
					l->ext = const_of(rd->axes[a].hi);
			}
		}
	}
	for (int i = 0; i < nst; i++) {
		nin_reads[i] = 0;
		if (st[i].t->rule)
			reads(st[i].t->rule->value, i, in_reads[i], &nin_reads[i]);
	}
}

/* ---- primitives ------------------------------------------------------------- */

static int
pure_loop(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (!s->loops[i].red)
			c[n++] = i;
	return n ? c[rnd(n)] : -1;
}

static int
red_loop(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].red)
			c[n++] = i;
	return n ? c[rnd(n)] : -1;
}

static void
insert(Stage *s, int at, Loop l)
{
	if (s->nloops >= MAXL)
		return;
	memmove(&s->loops[at + 1], &s->loops[at], (size_t)(s->nloops - at) * sizeof(Loop));
	s->loops[at] = l;
	s->nloops++;
}

static void
drop(Stage *s, int at)
{
	memmove(&s->loops[at], &s->loops[at + 1], (size_t)(s->nloops - at - 1) * sizeof(Loop));
	s->nloops--;
}

static const int factors[] = { 2, 3, 4, 5, 7, 8, 16 };
static bool no_exact;      /* rfactor follows: exact splits of reductions are refused */

static void
do_split(Stage *s, int i)
{
	if (s->nloops + 1 >= MAXL)
		return;
	Loop l = s->loops[i];
	int f = factors[rnd(7)];
	const char *tail = "";
	int r = rnd(100);
	if (r < 10)
		tail = ", tail = guard";
	else if (r < 16 && !no_exact)
		tail = ", tail = exact";
	else if (r < 24 && !l.red && !s->reduction)
		tail = ", tail = shift_inward";
	else if (r >= 24 && r < 34)
		tail = ", tail = round_up";
	const char *o = fresh_name(l.name), *in = fresh_name(l.name);
	emit("  %s.split(%s, %d%s) -> (%s, %s);\n", s->name, l.name, f, tail, o, in);
	Loop lo = { o, l.red, l.ext ? (l.ext + f - 1) / f : 0, false, false };
	Loop li = { in, l.red, f, false, false };
	drop(s, i);
	insert(s, i, li);
	insert(s, i, lo);
}

static void
do_tile(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i + 1 < s->nloops; i++)
		if (s->loops[i].red == s->loops[i + 1].red)
			c[n++] = i;
	if (!n || s->nloops + 2 >= MAXL)
		return;
	int i = c[rnd(n)];
	Loop x = s->loops[i], y = s->loops[i + 1];
	int fx = factors[rnd(7)], fy = factors[rnd(7)];
	const char *xo = fresh_name(x.name), *yo = fresh_name(y.name);
	const char *xi = fresh_name(x.name), *yi = fresh_name(y.name);
	emit("  %s.tile(%s, %s, %d, %d%s) -> (%s, %s, %s, %s);\n", s->name, x.name, y.name,
	    fx, fy, chance(10) ? ", tail = guard" : chance(12) ? ", tail = round_up" : "",
	    xo, yo, xi, yi);
	drop(s, i + 1);
	drop(s, i);
	Loop l[4] = {
		{ xo, x.red, x.ext ? (x.ext + fx - 1) / fx : 0, false, false },
		{ yo, y.red, y.ext ? (y.ext + fy - 1) / fy : 0, false, false },
		{ xi, x.red, fx, false, false },
		{ yi, y.red, fy, false, false },
	};
	for (int j = 3; j >= 0; j--)
		insert(s, i, l[j]);
}

static void
do_fuse(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i + 1 < s->nloops; i++)
		if (s->loops[i].red == s->loops[i + 1].red && !s->loops[i].vec && !s->loops[i + 1].vec)
			c[n++] = i;
	if (!n)
		return;
	int i = c[rnd(n)];
	Loop a = s->loops[i], b = s->loops[i + 1];
	const char *f = fresh_name("f");
	emit("  %s.fuse(%s, %s) -> %s;\n", s->name, a.name, b.name, f);
	Loop l = { f, a.red, a.ext && b.ext ? a.ext * b.ext : 0, a.par || b.par, false };
	drop(s, i + 1);
	s->loops[i] = l;
}

static void
do_reorder(Stage *s)
{
	if (s->nloops < 2)
		return;
	int idx[MAXL], n = 2 + rnd(s->nloops - 1), pos[MAXL];
	for (int i = 0; i < s->nloops; i++)
		idx[i] = i;
	for (int i = s->nloops - 1; i > 0; i--) {     /* a random subset */
		int j = rnd(i + 1), t = idx[i];
		idx[i] = idx[j], idx[j] = t;
	}
	for (int i = 0; i < n; i++)
		pos[i] = idx[i];
	for (int i = 1; i < n; i++)                    /* the slots, in order */
		for (int j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
			int t = pos[j];
			pos[j] = pos[j - 1], pos[j - 1] = t;
		}
	Loop perm_[MAXL];
	for (int i = 0; i < n; i++)
		perm_[i] = s->loops[idx[i]];
	emit("  %s.reorder(", s->name);
	for (int i = 0; i < n; i++)
		emit("%s%s", i ? ", " : "", perm_[i].name);
	emit(");\n");
	for (int i = 0; i < n; i++)                    /* listed outer to inner */
		s->loops[pos[i]] = perm_[i];
}

static void
do_unroll(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].ext > 0 && s->loops[i].ext <= 16 && !s->loops[i].vec && !s->loops[i].par)
			c[n++] = i;
	if (!n)
		return;
	emit("  %s.unroll(%s);\n", s->name, s->loops[c[rnd(n)]].name);
}

static void
do_vectorize(Stage *s)
{
	if (!s->nloops)
		return;
	Loop *l = &s->loops[s->nloops - 1];
	if (l->red || !l->ext || l->ext > 32 || l->par || l->vec)
		return;
	emit("  %s.vectorize(%s);\n", s->name, l->name);
	l->vec = true;
}

static void
do_parallel(Stage *s)
{
	/* the outermost pure loop, mostly */
	int i = -1;
	for (int j = 0; j < s->nloops; j++)
		if (!s->loops[j].red) {
			i = j;
			break;
		}
	if (chance(30))
		i = pure_loop(s);
	if (i < 0 || s->loops[i].vec || s->loops[i].par)
		return;
	for (int j = 0; j < i; j++)    /* keep one parallel level */
		if (s->loops[j].par)
			return;
	emit("  %s.parallel(%s);\n", s->name, s->loops[i].name);
	s->loops[i].par = true;
}

/* partition(axis) on a loop of s that repeats, now and then. */
static void
do_partition(Stage *s)
{
	uint64_t saved = rng;
	rng = rng_part;
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (!s->loops[i].vec)
			c[n++] = i;
	if (n && chance(15))
		emit("  %s.partition(%s);\n", s->name, s->loops[c[rnd(n)]].name);
	rng_part = rng;
	rng = saved;
}

/* Loop primitives on one stage. */
static void
shape_loops(Stage *s)
{
	int n = rnd(5);
	for (int k = 0; k < n; k++) {
		int r = rnd(100);
		if (r < 30) {
			int i = rnd(s->nloops);
			if (s->nloops && !s->loops[i].vec)
				do_split(s, i);
		} else if (r < 42)
			do_tile(s);
		else if (r < 52)
			do_fuse(s);
		else if (r < 66)
			do_reorder(s);
		else if (r < 76)
			do_unroll(s);
		else if (r < 88)
			do_vectorize(s);
		else
			do_parallel(s);
	}
	do_partition(s);
}

/* A loop of consumer c to attach to, outside any vectorized loop; -1: none. */
static int
attach_loop(Stage *c)
{
	int lim = c->nloops;
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].vec) {
			lim = i;
			break;
		}
	return lim ? rnd(lim) : -1;
}

/* compute_at (and maybe store_at) of s into its only consumer. */
static bool
attach(Stage *s)
{
	if (s->ncons != 1)
		return false;
	Stage *c = &st[s->cons[0]];
	while (c->redirect >= 0)   /* its reads moved to a cache or rfactor stage */
		c = &st[c->redirect];
	if (c->inlined)
		return false;
	int at = attach_loop(c);
	if (at < 0)
		return false;
	if (chance(30)) {
		int sa = rnd(at + 1);
		bool ok = true;
		for (int j = sa + 1; j <= at; j++)
			ok &= !c->loops[j].par;
		if (ok)
			emit("  %s.store_at(%s, %s);\n", s->name, c->name, c->loops[sa].name);
	} else if (chance(8)) {
		bool ok = true;
		for (int j = 0; j <= at; j++)
			ok &= !c->loops[j].par;
		if (ok)
			emit("  %s.store_root();\n", s->name);
	}
	if (at >= 0)
		emit("  %s.compute_at(%s, %s);\n", s->name, c->name, c->loops[at].name);
	else
		emit("  %s.compute_root();\n", s->name);
	return true;
}

/* ---- certainly illegal primitives --------------------------------------------- */

static void
inject(Stage *s)
{
	char *why = arena_alloc(perm, 160);   /* lives as long as the run */
	switch (rnd(8)) {
	case 0:
		emit("  %s.split(nosuch, 4) -> (%s, %s);\n", s->name, fresh_name("q"), fresh_name("q"));
		snprintf(why, 160, "split of an axis that '%s' does not have", s->name);
		break;
	case 1:
		if (s->nloops >= 3 && !s->frozen) {
			int i = rnd(s->nloops - 2), j = i + 2 + rnd(s->nloops - i - 2);
			emit("  %s.fuse(%s, %s) -> %s;\n", s->name, s->loops[i].name,
			    s->loops[j].name, fresh_name("f"));
			snprintf(why, 160, "fuse of non-adjacent loops '%s' and '%s' of '%s'",
			    s->loops[i].name, s->loops[j].name, s->name);
			break;
		}
		/* fall through */
	case 2:
		if (s->reduction && !s->frozen && red_loop(s) >= 0) {
			const char *n = s->loops[red_loop(s)].name;
			emit("  %s.parallel(%s);\n", s->name, n);
			snprintf(why, 160, "parallel over reduction axis '%s' of '%s'", n, s->name);
			break;
		}
		/* fall through */
	case 3:
		if (s->reduction && !s->frozen && red_loop(s) >= 0) {
			const char *n = s->loops[red_loop(s)].name;
			emit("  %s.split(%s, 2, tail = shift_inward) -> (%s, %s);\n", s->name, n,
			    fresh_name("q"), fresh_name("q"));
			snprintf(why, 160, "shift_inward on reduction axis '%s' of '%s'", n, s->name);
			break;
		}
		/* fall through */
	case 4:
		if (s->output) {
			emit("  %s.compute_inline();\n", s->name);
			snprintf(why, 160, "compute_inline of output '%s'", s->name);
			break;
		}
		/* fall through */
	case 5:
		if (s->nloops) {
			emit("  %s.split(%s, 0) -> (%s, %s);\n", s->name, s->loops[0].name,
			    fresh_name("q"), fresh_name("q"));
			snprintf(why, 160, "split by 0");
			break;
		}
		/* fall through */
	case 6:
		if (s->ncons >= 1 && s->nloops) {
			/* an axis of the consumer that is gone (or never was) */
			Stage *c = &st[s->cons[0]];
			emit("  %s.compute_at(%s, %s);\n", s->name, c->name, "gone_axis");
			snprintf(why, 160, "compute_at on a loop that '%s' does not have", c->name);
			break;
		}
		/* fall through */
	default:
		if (s->nloops) {
			emit("  %s.compute_at(%s, %s);\n", s->name, s->name, s->loops[0].name);
			snprintf(why, 160, "compute_at of '%s' on its own loop", s->name);
		} else {
			emit("  %s.split(nosuch, 4) -> (%s, %s);\n", s->name, fresh_name("q"), fresh_name("q"));
			snprintf(why, 160, "split of an axis that '%s' does not have", s->name);
		}
		break;
	}
	illegal(why);
}

/* ---- one schedule ------------------------------------------------------------- */

static void
generate(int illegal_pct)
{
	setup();
	outlen = 0;
	expect = NULL;
	int inject_at = chance(illegal_pct) ? rnd(nst) : -1;
	int norig = nst;
	for (int si = norig - 1; si >= 0; si--) {
		Stage *s = &st[si];
		/* placement of an intermediate stage, decided first */
		int place = 0;   /* 0 default, 1 root, 2 inline, 3 at */
		if (!s->output) {
			int r = rnd(100);
			if (r < 25)
				place = 0;
			else if (r < 45)
				place = 1;
			else if (r < 70 && !s->reduction)
				place = 2;
			else
				place = 3;
		}
		if (place == 2) {
			emit("  %s.compute_inline();\n", s->name);
			s->inlined = true;
			if (si == inject_at)
				inject(s);
			continue;
		}
		/* cache_write or rfactor, rarely, before the loops change */
		if (chance(6) && nst < MAXS) {
			const char *n = fresh_name("W");
			emit("  %s.cache_write(local) -> %s;\n", s->name, n);
			Stage *w = &st[nst++];
			*w = *s;
			w->name = n;
			w->t = NULL;
			w->output = false;
			w->frozen = true;
			s->cached = true;
			s->redirect = nst - 1;
			/* the original keeps its pure loops (a copy); the cache stage
			 * computes, and goes at one of them */
			for (int i = s->nloops - 1; i >= 0; i--)
				if (s->loops[i].red)
					drop(s, i);
			s->reduction = false;
			shape_loops(s);
			int at = attach_loop(s);
			if (at >= 0 && chance(70))
				emit("  %s.compute_at(%s, %s);\n", n, s->name, s->loops[at].name);
		} else if (s->reduction && chance(10) && nst < MAXS) {
			if (chance(50)) {
				int i = red_loop(s);
				no_exact = true;
				if (i >= 0)
					do_split(s, i);
				no_exact = false;
			}
			int i = red_loop(s);
			const char *n = fresh_name("R");
			emit("  %s.rfactor(%s) -> %s;\n", s->name, s->loops[i].name, n);
			Stage *w = &st[nst++];
			*w = *s;
			w->name = n;
			w->t = NULL;
			w->output = false;
			w->frozen = true;
			s->frozen = true;
			s->redirect = nst - 1;
			/* the original now reduces over the rfactored axis only */
			const char *keep = s->loops[i].name;
			for (int j = s->nloops - 1; j >= 0; j--)
				if (s->loops[j].red && s->loops[j].name != keep)
					drop(s, j);
			if (chance(40))
				emit("  %s.compute_root();\n", n);
			if (chance(30)) {
				int p = pure_loop(s);
				if (p >= 0)
					emit("  %s.parallel(%s);\n", n, s->loops[p].name);
			}
		} else {
			shape_loops(s);
		}
		if (place == 1)
			emit("  %s.compute_root();\n", s->name);
		else if (place == 3 && !attach(s))
			emit("  %s.compute_root();\n", s->name);
		/* cache_read of an input this stage reads */
		if (nin_reads[si] && chance(8) && !s->inlined) {
			Stage *rd = s;     /* the stage that reads it now */
			while (rd->redirect >= 0)
				rd = &st[rd->redirect];
			Tensor *t = kern->tensors[in_reads[si][rnd(nin_reads[si])]];
			const char *n = fresh_name("C");
			emit("  %s.cache_read(local, [%s]) -> %s;\n", t->name, rd->name, n);
			int at = attach_loop(rd);
			if (at >= 0 && chance(70))
				emit("  %s.compute_at(%s, %s);\n", n, rd->name, rd->loops[at].name);
		}
		if (si == inject_at)
			inject(s);
	}
}

/* ---- main ---------------------------------------------------------------------- */

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, got;
	char *b = malloc(cap + 1);
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += got) == cap)
			b = realloc(b, (cap *= 2) + 1);
	fclose(f);
	if (!b)
		return NULL;
	char *r = arena_strndup(perm, b, n);   /* the run's arena holds it */
	free(b);
	return r;
}

static void
usage(void)
{
	fprintf(stderr, "usage: schedgen [-n COUNT] [-s SEED] [-k KERNEL] [-i PERCENT] -o DIR FILE.tx\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	int count = 10, illegal_pct = 15;
	uint64_t seed = 1;
	const char *dir = NULL, *kname = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "-n") == 0)
			count = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "-s") == 0)
			seed = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && strcmp(argv[i], "-o") == 0)
			dir = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "-k") == 0)
			kname = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "-i") == 0)
			illegal_pct = atoi(argv[++i]);
		else if (argv[i][0] == '-' || file)
			usage();
		else
			file = argv[i];
	}
	if (!file || !dir)
		usage();
	perm = arena_new();
	char *text = slurp(file);
	uint32_t id = text ? source_load(file) : 0;
	if (!id) {
		fprintf(stderr, "schedgen: cannot read %s\n", file);
		return 2;
	}
	Program *p = parse_program(id);
	if (diag_errors() || !sema_check(p)) {
		fprintf(stderr, "schedgen: %s does not pass txc's front end\n", file);
		return 2;
	}
	for (int i = 0; i < p->nkernels && !kern; i++)
		if (p->kernels[i] && (!kname || strcmp(p->kernels[i]->name, kname) == 0))
			kern = p->kernels[i];
	if (!kern || kern->nstages == 0) {
		fprintf(stderr, "schedgen: no kernel%s%s with stages in %s\n", kname ? " " : "",
		    kname ? kname : "", file);
		return 2;
	}
	for (int n = 1; n <= count; n++) {
		rng = seed * 0x100000001b3ull + (uint64_t)n * 0x9e3779b97f4a7c15ull;
		rng_part = rng ^ 0x5851f42d4c957f2dull;
		generate(illegal_pct);
		char path[4096];
		snprintf(path, sizeof path, "%s/g%04d.tx", dir, n);
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 2;
		}
		fprintf(f, "// schedgen: expect %s%s\n", expect ? "error: " : "ok", expect ? expect : "");
		fprintf(f, "// schedgen -s %llu, schedule %d of %s\n", (unsigned long long)seed, n, file);
		fputs(text, f);
		fprintf(f, "\nschedule %s as g for cpu {\n%.*s}\n", kern->name, (int)outlen, out);
		if (fclose(f) != 0) {
			perror(path);
			return 2;
		}
	}
	return 0;
}
