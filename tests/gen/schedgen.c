/* schedgen.c: random schedules for a kernel (tests/gen/fuzz-schedules.sh,
 * tests/gen/fuzz-gpu-schedules.sh).
 *
 *     schedgen [-n COUNT] [-s SEED] [-k KERNEL] [-i PERCENT] [-t cpu|cuda] -o DIR FILE.tx
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
 * non-reductions, keeps parallel loops out of store_at ranges.  A scan
 * (tx.5 SCANS) stays at root and keeps its scan loops serial and in order
 * (other loops go outside them only where its update reads its earlier
 * steps at its own index along them; a group's scan loop is left alone).
 * A reordering that would put a loop of a pure axis inside the loops of a
 * reduction whose range uses that axis (sum(k <= i)) is left out.  Now and
 * then two stages of the same domain share their loops (compute_with, the
 * earlier scheduled as a copy of the later): schedgen_with.c.  A stage
 * with an update definition (tx.5 UPDATES) stays at root with nothing
 * computed at its loops; schedgen_update.c keeps its steps serial and,
 * unless the update is associative, in order, and draws its illegal
 * primitives.
 *
 * About PERCENT (-i, default 15) percent of the schedules get one
 * primitive that is certainly illegal (an axis that does not exist, fuse
 * of loops that are not adjacent, parallel over a reduction axis,
 * shift_inward on a reduction axis, compute_inline of an output, a zero
 * factor, compute_at on a loop split away, compute_at on its own stage;
 * for a scan: its scan axis parallel, vectorized or fused, the scan
 * inlined).
 * The first line of each file says which:
 *
 *     // schedgen: expect ok
 *     // schedgen: expect error: parallel over reduction axis 'k' of 'C'
 *
 * "ok" means "probably legal": txc may still reject it with a diagnostic,
 * but if it accepts it the result must match the unscheduled kernel.  An
 * "error" schedule must be rejected with a diagnostic.
 *
 * -t cuda writes `schedule KERNEL as g for cuda { ... }` instead (the cpu
 * schedules are as before, byte for byte): every stage is inlined, bound
 * to GPU blocks and threads in a kernel of its own (gpu_tile, or split and
 * bind on one to three axes, blockIdx.z or threadIdx.z for another one,
 * serial loops between the block and thread loops or inside the threads,
 * unroll and vectorize there, factors from 1 to 32 or a longer row of
 * threads, odd ones now and then for the tails), or computed at a loop of
 * its only consumer: at a block-level loop (shared memory) or at or inside
 * its thread loops with a region of constant size (local).  Inputs get
 * shared copies at a block-level loop (the outer part of a split
 * reduction between the block and thread loops gives the tiled matmul;
 * double-buffered now and then) or inside the thread loops (TVM's way),
 * or local ones; reductions now and then keep their tile in registers
 * (cache_write(local) at a thread loop, with shared copies at its outer
 * reduction loop), or reduce across the block's threads (rfactor of the
 * inner part of a split, bound to threadIdx.x).  About PERCENT percent get
 * one certainly illegal GPU primitive: thread loops with no block loop,
 * two loops on one blockIdx dimension, a reduction axis bound to threads,
 * blocks of more than 1024 threads, parallel.  schedgen exits 3 when no
 * cuda schedule can run the kernel (an output with no pure axis, or a scan:
 * scans compile for the cpu only).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/ast.h"
#include "parser/parser.h"
#include "sema/sema.h"
#include "tests/gen/schedgen.h"
#include "auto/auto.h"

Stage st[MAXS];
int nst;
Kernel *kern;
static uint64_t rng;
static uint64_t rng_part;      /* partition's own stream: adding it left the
                                  rest of every schedule as it was */
uint64_t rng_with;

char out[16384];
size_t outlen;
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

int
rnd(int n)
{
	return n <= 0 ? 0 : (int)(next() % (uint64_t)n);
}

bool
chance(int percent)
{
	return rnd(100) < percent;
}

/* ---- output ---------------------------------------------------------------- */

void
emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + outlen, sizeof out - outlen, fmt, ap);
	va_end(ap);
	if (n > 0 && outlen + (size_t)n < sizeof out)
		outlen += (size_t)n;
}

void
illegal(const char *why)
{
	if (!expect)
		expect = why;
}

/* ---- the kernel's structure ---------------------------------------------- */

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

const char *
fresh_name(const char *prefix)
{
	char b[64];
	do
		snprintf(b, sizeof b, "%s_%d", prefix, ++fresh);
	while (name_used(b));
	return arena_strdup(perm, b);
}

/* The inputs each stage reads (tensor indices). */
static int in_reads[MAXS][MAXS], nin_reads[MAXS];

/* ---- scans (tx.5 SCANS) ----------------------------------------------------- */

static bool
row_read(Expr *e, void *ctx)
{
	Stage *s = ctx;
	if (e->kind != EXPR_ACCESS || e->call.tensor != s->t)
		return true;
	for (int d = 0; d < e->call.nargs; d++) {
		Expr *x = e->call.args[d];
		if (d != s->t->scan_dim && !(x->kind == EXPR_NAME && x->id.ref == REF_PURE_AXIS &&
		    x->id.axis == d))
			s->rows = false;
	}
	return true;
}

static void
scan_setup(Stage *s)
{
	s->scan = true;
	s->rows = true;
	check_walk(s->t->rule->value, row_read, s);
	for (int i = 0; i < kern->ntensors; i++) {
		Tensor *u = kern->tensors[i];
		if (u != s->t && u->ninits > 0 && u->scan_group == s->t->scan_group)
			s->pinned = true;
	}
}

/* Whether loops l[0..n) keep the loops of every pure axis a reduction's
 * range uses outside that reduction's loops. */
static bool
order_ok(Stage *s, const Loop *l, int n)
{
	for (int p = 0; p < n; p++)
		for (int a = 0; a < 16; a++)
			if ((l[p].roots >> (16 + a) & 1) && s->dep[a])
				for (int q = p + 1; q < n; q++)
					if (l[q].roots & s->dep[a])
						return false;
	return true;
}

/* Whether a primitive may move or split loop l of s. */
static bool
movable(Stage *s, Loop *l)
{
	return !l->scan || !s->pinned;
}


/* The kernel's stages from the library's stage graph (auto/graph.c: the
 * same graph the schedule generator reads): axes, constant extents, the
 * pure axes reduction ranges use, consumers and inputs. */
static void
setup(void)
{
	static AutoGraph g;
	auto_graph(&g, kern, NULL, NULL, 0);
	nst = 0;
	fresh = 0;
	for (int i = 0; i < g.n && nst < MAXS; i++) {
		AutoStage *a = &g.s[i];
		Tensor *t = a->t;
		Stage *s = &st[nst++];
		memset(s, 0, sizeof *s);
		s->name = t->name;
		s->t = t;
		s->output = t->role == ROLE_OUT;
		s->redirect = -1;
		for (int d = 0; d < a->npure && s->nloops < MAXL; d++) {
			Loop *l = &s->loops[s->nloops++];
			l->name = a->pure[d];
			l->ext = (int)a->pconst[d];
			l->scan = t->ninits > 0 && d == t->scan_dim;
			l->roots = d < 16 ? 1u << d : 0;
		}
		if (t->rule && t->rule->value && t->rule->value->kind == EXPR_REDUCE) {
			s->reduction = true;
			for (int r = 0; r < a->nred && s->nloops < MAXL; r++) {
				Loop *l = &s->loops[s->nloops++];
				l->name = a->red[r];
				l->red = true;
				l->roots = r < 16 ? 1u << (16 + r) : 0;
				if (r < 16)
					s->dep[r] = a->rdep[r];
				l->ext = (int)a->rconst_ext[r];
			}
		}
		if (t->update)
			updgen_setup(s);
	}
	for (int i = 0; i < nst; i++) {
		AutoStage *a = &g.s[i];
		st[i].ncons = 0;
		for (int c = 0; c < a->ncons; c++)
			if (a->cons[c] < nst)
				st[i].cons[st[i].ncons++] = a->cons[c];
		nin_reads[i] = 0;
		for (int c = 0; c < a->ninputs && c < MAXS; c++)
			in_reads[i][nin_reads[i]++] = a->inputs[c];
		if (st[i].t->ninits > 0)
			scan_setup(&st[i]);
	}
}

/* ---- primitives ------------------------------------------------------------- */

static int
pure_loop(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (!s->loops[i].red && !s->loops[i].scan)
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

/* `s.rfactor(loop i) -> NAME` (NAME fresh, from prefix): the new stage
 * takes s's reduction as it was; s now reduces over loop i only, and is
 * frozen, as is the new stage. */
static const char *
rfactor_at(Stage *s, int i, const char *prefix)
{
	const char *n = fresh_name(prefix);
	emit("  %s.rfactor(%s) -> %s;\n", s->name, s->loops[i].name, n);
	Stage *w = &st[nst++];
	*w = *s;
	w->name = n;
	w->t = NULL;
	w->output = false;
	w->frozen = true;
	w->tassoc = false;
	s->frozen = true;
	s->tassoc = false;
	s->redirect = nst - 1;
	const char *keep = s->loops[i].name;
	for (int j = s->nloops - 1; j >= 0; j--)
		if (s->loops[j].red && s->loops[j].name != keep)
			drop(s, j);
	return n;
}

static const int factors[] = { 2, 3, 4, 5, 7, 8, 16 };
static bool no_exact;      /* rfactor follows: exact splits of reductions are refused */

static void
do_split(Stage *s, int i)
{
	if (s->nloops + 1 >= MAXL || !movable(s, &s->loops[i]))
		return;
	Loop l = s->loops[i];
	int f = factors[rnd(7)];
	const char *tail = "";
	int r = rnd(100);
	if (r < 10)
		tail = ", tail = guard";
	else if (r < 16 && !no_exact)
		tail = ", tail = exact";
	else if (r < 24 && !l.red && !s->reduction && updgen_split_ok(s, &l))
		tail = ", tail = shift_inward";
	else if (r >= 24 && r < 34)
		tail = ", tail = round_up";
	const char *o = fresh_name(l.name), *in = fresh_name(l.name);
	emit("  %s.split(%s, %d%s) -> (%s, %s);\n", s->name, l.name, f, tail, o, in);
	Loop lo = { .name = o, .red = l.red, .ext = l.ext ? (l.ext + f - 1) / f : 0, .scan = l.scan, .roots = l.roots };
	Loop li = { .name = in, .red = l.red, .ext = f, .scan = l.scan, .roots = l.roots };
	drop(s, i);
	insert(s, i, li);
	insert(s, i, lo);
}

static void
do_tile(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i + 1 < s->nloops; i++)
		if (s->loops[i].red == s->loops[i + 1].red && movable(s, &s->loops[i]) &&
		    movable(s, &s->loops[i + 1]) && !(s->loops[i].scan && s->loops[i + 1].scan) &&
		    (s->rows || !(s->loops[i].scan || s->loops[i + 1].scan)) &&
		    updgen_tile_ok(s, &s->loops[i], &s->loops[i + 1]))
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
		{ .name = xo, .red = x.red, .ext = x.ext ? (x.ext + fx - 1) / fx : 0, .scan = x.scan, .roots = x.roots },
		{ .name = yo, .red = y.red, .ext = y.ext ? (y.ext + fy - 1) / fy : 0, .scan = y.scan, .roots = y.roots },
		{ .name = xi, .red = x.red, .ext = fx, .scan = x.scan, .roots = x.roots },
		{ .name = yi, .red = y.red, .ext = fy, .scan = y.scan, .roots = y.roots },
	};
	for (int j = 3; j >= 0; j--)
		insert(s, i, l[j]);
}

static void
do_fuse(Stage *s)
{
	int c[MAXL], n = 0;
	for (int i = 0; i + 1 < s->nloops; i++)
		if (s->loops[i].red == s->loops[i + 1].red && !s->loops[i].vec && !s->loops[i + 1].vec &&
		    !s->loops[i].scan && !s->loops[i + 1].scan &&
		    updgen_fuse_ok(s, &s->loops[i], &s->loops[i + 1]))
			c[n++] = i;
	if (!n)
		return;
	int i = c[rnd(n)];
	Loop a = s->loops[i], b = s->loops[i + 1];
	const char *f = fresh_name("f");
	emit("  %s.fuse(%s, %s) -> %s;\n", s->name, a.name, b.name, f);
	Loop l = { .name = f, .red = a.red, .ext = a.ext && b.ext ? a.ext * b.ext : 0,
		.par = a.par || b.par, .roots = a.roots | b.roots };
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
	Loop after[MAXL];
	memcpy(after, s->loops, sizeof after);
	for (int i = 0; i < n; i++)
		after[pos[i]] = perm_[i];
	if (!order_ok(s, after, s->nloops))
		return;     /* a loop a reduction's range uses inside that reduction */
	if (!updgen_order_ok(s, after, s->nloops))
		return;     /* the steps of an update that is not associative */
	if (s->scan) {
		/* the scan loops keep their order; other loops go outside them only
		 * over independent rows; a group's scan loop stays */
		int last = -1;
		for (int i = 0; i < s->nloops; i++) {
			if (!movable(s, &after[i]) && after[i].name != s->loops[i].name)
				return;
			if (after[i].scan)
				last = i;
		}
		for (int i = 0, k = 0; i < s->nloops; i++) {
			if (!after[i].scan)
				continue;
			while (!s->loops[k].scan)
				k++;
			if (after[i].name != s->loops[k++].name)
				return;
		}
		for (int i = 0; i < last && !s->rows; i++)
			if (!after[i].scan)
				return;
	}
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
	if (l->red || !l->ext || l->ext > 32 || l->par || l->vec || l->scan)
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
		if (!s->loops[j].red && !s->loops[j].scan) {
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
void
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
	if (c->inlined || c->upd)     /* nothing at the loops of an update */
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

/* One illegal primitive on scan s: its scan axis parallel, vectorized or
 * fused, or the scan computed somewhere else than at root. */
static void
scan_inject(Stage *s, char *why)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].scan)
			c[n++] = i;
	int i = n ? c[rnd(n)] : 0;
	const char *l = n ? s->loops[i].name : NULL;
	switch (n ? rnd(4) : 3) {
	case 0:
		emit("  %s.parallel(%s);\n", s->name, l);
		snprintf(why, 160, "parallel over scan axis '%s' of '%s'", l, s->name);
		return;
	case 1:
		emit("  %s.vectorize(%s);\n", s->name, l);
		snprintf(why, 160, "vectorize of scan axis '%s' of '%s'", l, s->name);
		return;
	case 2:
		if (s->nloops >= 2 && ((i + 1 < s->nloops && !s->loops[i + 1].scan) ||
		    (i > 0 && !s->loops[i - 1].scan))) {
			/* with a loop of another axis (two parts of the scan axis fuse back) */
			int j = i + 1 < s->nloops && !s->loops[i + 1].scan ? i : i - 1;
			emit("  %s.fuse(%s, %s) -> %s;\n", s->name, s->loops[j].name,
			    s->loops[j + 1].name, fresh_name("f"));
			snprintf(why, 160, "fuse of scan axis '%s' of '%s'", l, s->name);
			return;
		}
		/* fall through */
	default:
		if (!s->output) {
			emit("  %s.compute_inline();\n", s->name);
			snprintf(why, 160, "compute_inline of scan '%s'", s->name);
		} else {
			emit("  %s.parallel(nosuch);\n", s->name);
			snprintf(why, 160, "parallel of an axis that '%s' does not have", s->name);
		}
		return;
	}
}

static void
inject(Stage *s)
{
	char *why = arena_alloc(perm, 160);   /* lives as long as the run */
	if (s->scan && chance(70)) {
		scan_inject(s, why);
		illegal(why);
		return;
	} else if (s->upd && chance(70)) {
		updgen_inject(s, why);
		illegal(why);
		return;
	}
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
	with_pick();      /* compute_with now and then: schedgen_with.c */
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
		if (s->scan || s->upd)      /* computed whole, at root */
			place = chance(50) ? 0 : 1;
		if ((with_lead(si) || with_member(si)) && !s->output)
			place = 1;
		if (place == 2) {
			emit("  %s.compute_inline();\n", s->name);
			s->inlined = true;
			if (si == inject_at)
				inject(s);
			continue;
		}
		/* cache_write or rfactor, rarely, before the loops change */
		if (with_lead(si))
			with_shape_lead(s);
		else if (with_member(si))
			with_shape_member(s);
		else if (!s->scan && !s->upd && chance(6) && nst < MAXS) {
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
		} else if (s->tassoc && chance(30) && nst < MAXS) {
			/* the first output of a tuple reduction whose combiner is
			 * associative: rfactor of its outermost range loop (chunks of
			 * consecutive steps), split first now and then; the partial
			 * tuples' chunk loop parallel now and then */
			int i = 0;
			while (i < s->nloops && !s->loops[i].red)
				i++;
			if (i < s->nloops) {
				if (chance(60)) {
					no_exact = true;
					do_split(s, i);
					no_exact = false;
				}
				const char *keep = s->loops[i].name;
				const char *n = rfactor_at(s, i, "P");
				if (chance(50))
					emit("  %s.parallel(%s);\n", n, keep);
			}
		} else if (s->reduction && chance(10) && nst < MAXS) {
			if (chance(50)) {
				int i = red_loop(s);
				no_exact = true;
				if (i >= 0)
					do_split(s, i);
				no_exact = false;
			}
			const char *n = rfactor_at(s, red_loop(s), "R");
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
		/* cache_read of an input this stage reads (not for a tuple's
		 * output other than the first: rfactor of the first leaves it
		 * reading nothing) */
		if (nin_reads[si] && chance(8) && !s->inlined && !s->tmember) {
			Stage *rd = s;     /* the stage that reads it now */
			while (rd->redirect >= 0)
				rd = &st[rd->redirect];
			Tensor *t = kern->tensors[in_reads[si][rnd(nin_reads[si])]];
			const char *n = fresh_name("C");
			emit("  %s.cache_read(local, [%s]) -> %s;\n", t->name, rd->name, n);
			int at = attach_loop(rd);
			if (at >= 0 && chance(70) && !rd->upd)
				emit("  %s.compute_at(%s, %s);\n", n, rd->name, rd->loops[at].name);
		}
		if (with_member(si))
			with_fuse(s);
		if (si == inject_at)
			inject(s);
	}
}

/* ---- cuda mode --------------------------------------------------------------------
 *
 * Each stage is inlined, computed in a kernel of its own (its loops bound:
 * block loops outermost, then serial loops such as the outer part of a
 * split reduction, the thread loops, the rest inside each thread), or
 * computed at a loop of its only consumer: at the innermost block loop or
 * a serial loop between the block and thread loops (shared memory, its
 * loops spread over the block's threads), or at or inside the thread
 * loops where the loops further in have constant extents (a per-thread
 * region of constant size).  The loop record of each stage (Loop.gb, .gd,
 * .zone) says where its loops went, which is what attaching a producer or
 * a copy of an input to them needs.  With thread loops, the serial loops
 * between them and the block loops are block-level code; without, every
 * loop inside the blocks is the code of one thread. */

enum { G_SERIAL, G_BLOCK, G_THREAD };                    /* Loop.gb */
enum { Z_BLOCK, Z_MID, Z_THREAD, Z_INNER };              /* Loop.zone */
enum { GK_KERNEL, GK_INLINE, GK_SHARED, GK_LOCAL };      /* Stage.gk */
/* certainly illegal GPU primitives */
enum { INJ_NO_BLOCK, INJ_DUP_BLOCK, INJ_RED_THREAD, INJ_BIG_BLOCK, INJ_PARALLEL, INJ_N };

static const char gxyz[] = "xyz";
static bool gpu_mode;

/* A factor for a thread loop, at most lim: mostly a power of two up to 32,
 * now and then 1 or an odd one (tails). */
static int
gfactor(int lim)
{
	static const int pow2[] = { 2, 4, 8, 16, 32, 4, 8, 16 }, odd[] = { 3, 5, 7 };
	int r = rnd(100), v;
	if (r < 4)
		v = 1;
	else if (r < 18)
		v = odd[rnd(3)];
	else
		v = pow2[rnd(8)];
	while (v > lim && v > 1)
		v = v % 2 ? v - 1 : v / 2;
	return v;
}

/* The same, at least 2 (a split that leaves a loop of one iteration is
 * not much of a split). */
static int
gfactor2(int lim)
{
	int v = gfactor(lim);
	return v < 2 ? (lim >= 3 ? 3 : 2) : v;
}

static int
gfind(Stage *s, const char *name)
{
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].name == name)
			return i;
	return -1;
}

/* Replaces loop i of s by (o, in), in loops i and i + 1. */
static bool
gsplit_loops(Stage *s, int i, int f, const char *o, const char *in)
{
	if (s->nloops + 1 >= MAXL)
		return false;
	Loop l = s->loops[i], lo = l, li = l;
	lo.name = o;
	lo.ext = l.ext ? (l.ext + f - 1) / f : 0;
	li.name = in;
	li.ext = f;
	lo.tiled = li.tiled = false;
	drop(s, i);
	insert(s, i, li);
	insert(s, i, lo);
	return true;
}

/* split(loop i, f) -> loops i, i + 1, with a tail option now and then. */
static bool
gsplit(Stage *s, int i, int f, bool tails)
{
	if (s->nloops + 1 >= MAXL)
		return false;
	Loop l = s->loops[i];
	const char *tail = "";
	if (tails) {
		int r = rnd(100);
		if (r < 8)
			tail = ", tail = guard";
		else if (r < 11 && !l.red && !s->reduction)
			tail = ", tail = shift_inward";
		else if (r < 14)
			tail = ", tail = round_up";
	}
	const char *o = fresh_name(l.name), *in = fresh_name(l.name);
	emit("  %s.split(%s, %d%s) -> (%s, %s);\n", s->name, l.name, f, tail, o, in);
	return gsplit_loops(s, i, f, o, in);
}

static int
gcount(Stage *s, bool red, int gb)
{
	int n = 0;
	for (int i = 0; i < s->nloops; i++)
		n += s->loops[i].red == red && s->loops[i].gb == gb;
	return n;
}

/* A random loop of s with the given reduction flag and binding, or -1. */
static int
gpick(Stage *s, bool red, int gb)
{
	int c[MAXL], n = 0;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].red == red && s->loops[i].gb == gb)
			c[n++] = i;
	return n ? c[rnd(n)] : -1;
}

static void
gshuffle(Loop *l, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = rnd(i + 1);
		Loop t = l[i];
		l[i] = l[j], l[j] = t;
	}
}

/* Block or thread loops, z outermost (mostly). */
static void
gsort_dims(Loop *l, int n)
{
	if (chance(20)) {
		gshuffle(l, n);
		return;
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && l[j - 1].gd < l[j].gd; j--) {
			Loop t = l[j];
			l[j] = l[j - 1], l[j - 1] = t;
		}
}

/* The last loop of s in zone z, or -1. */
static int
glast(Stage *s, int z)
{
	int r = -1;
	for (int i = 0; i < s->nloops; i++)
		if (s->loops[i].zone == z)
			r = i;
	return r;
}

/* A loop at or inside the thread loops of kernel stage c with constant
 * extents further in (a per-thread region of constant size), or -1. */
static int
glocal_loop(Stage *c)
{
	int lt = glast(c, Z_THREAD);
	if (lt < 0)
		return -1;
	int j0 = lt;
	for (int k = lt + 1; k < c->nloops; k++)
		if (!c->loops[k].ext)
			j0 = k;
	return j0 + rnd(c->nloops - j0);
}

/* A block-level loop of kernel stage c (its innermost block loop or a
 * serial loop between the block and thread loops), or -1.  Without thread
 * loops the loops inside the blocks are the code of one thread. */
static int
gshared_loop(Stage *c)
{
	int lb = glast(c, Z_BLOCK), c_[MAXL], n = 0;
	for (int i = 0; i < c->nloops; i++)
		if (c->loops[i].zone == Z_MID && glast(c, Z_THREAD) >= 0)
			c_[n++] = i;
	if (n && (lb < 0 || chance(50)))
		return c_[rnd(n)];
	return lb;
}

static bool
gbig_ok(Loop *l)
{
	return !l->red && l->gb == G_SERIAL && (!l->ext || l->ext >= 64);
}

/* Puts the loops of s in order (blocks, serial loops, threads, the rest:
 * a loop goes to the serial zone between the blocks and the threads with
 * mid_pct percent, ko always) and writes the reorder and the binds. */
static void
gplace(Stage *s, int inj, const char *ko, int mid_pct)
{
	Loop B[MAXL], M[MAXL], T[MAXL], I[MAXL];
	int nb = 0, nm = 0, nt = 0, ni = 0;
	for (int i = 0; i < s->nloops; i++) {
		Loop l = s->loops[i];
		if (l.gb == G_BLOCK)
			l.zone = Z_BLOCK, B[nb++] = l;
		else if (l.gb == G_THREAD)
			l.zone = Z_THREAD, T[nt++] = l;
		else if (l.name == ko || (l.zone != Z_INNER && chance(l.red ? mid_pct - 5 : mid_pct)))
			l.zone = Z_MID, M[nm++] = l;
		else
			l.zone = Z_INNER, I[ni++] = l;
	}
	gsort_dims(B, nb);
	gsort_dims(T, nt);
	if (chance(15))
		gshuffle(I, ni);
	Loop order[MAXL];
	int n = 0;
	for (int i = 0; i < nb; i++) order[n++] = B[i];
	for (int i = 0; i < nm; i++) order[n++] = M[i];
	for (int i = 0; i < nt; i++) order[n++] = T[i];
	for (int i = 0; i < ni; i++) order[n++] = I[i];
	bool same = true;
	for (int i = 0; i < n; i++)
		same &= order[i].name == s->loops[i].name;
	bool binds_first = chance(30);
	for (int pass = 0; pass < 2; pass++) {
		if ((pass == 0) == binds_first) {
			for (int i = 0; i < s->nloops; i++) {
				Loop *l = &s->loops[i];
				if (l->tiled || l->gb == G_SERIAL || (l->gb == G_BLOCK && inj == INJ_NO_BLOCK))
					continue;
				emit("  %s.bind(%s, %s.%c);\n", s->name, l->name,
				    l->gb == G_BLOCK ? "blockIdx" : "threadIdx", gxyz[l->gd]);
			}
		} else if (!same) {
			emit("  %s.reorder(", s->name);
			for (int i = 0; i < n; i++)
				emit("%s%s", i ? ", " : "", order[i].name);
			emit(");\n");
		}
	}
	memcpy(s->loops, order, (size_t)n * sizeof *order);
}

/* Binds the loops of s, a stage computed in a kernel of its own. */
static void
cuda_kernel(Stage *s, int inj)
{
	int tprod = 1;
	bool bused[3] = { false, false, false }, tused[3] = { false, false, false };
	for (int i = 0; i < s->nloops; i++) {
		s->loops[i].gb = G_SERIAL;
		s->loops[i].zone = -1;
		s->loops[i].tiled = false;
	}
	/* fuse two adjacent pure loops now and then (then split and bind it) */
	if (chance(12) && inj != INJ_BIG_BLOCK) {
		int c[MAXL], n = 0;
		for (int i = 0; i + 1 < s->nloops; i++)
			if (!s->loops[i].red && !s->loops[i + 1].red)
				c[n++] = i;
		if (n) {
			int i = c[rnd(n)];
			Loop a = s->loops[i], b = s->loops[i + 1];
			const char *f = fresh_name("f");
			emit("  %s.fuse(%s, %s) -> %s;\n", s->name, a.name, b.name, f);
			drop(s, i + 1);
			s->gfused = true;
			s->loops[i].name = f;
			s->loops[i].ext = a.ext && b.ext ? a.ext * b.ext : 0;
		}
	}
	int npure = gcount(s, false, G_SERIAL);
	int nbig = 0;
	for (int i = 0; i < s->nloops; i++)
		nbig += gbig_ok(&s->loops[i]);
	bool tile = npure >= 2 && inj != INJ_DUP_BLOCK &&
	    (inj == INJ_BIG_BLOCK ? nbig >= 2 && chance(50) : chance(40));
	if (tile) {
		/* gpu_tile(x, y): the last two pure loops, mostly */
		int pos[MAXL], n = 0;
		for (int i = 0; i < s->nloops; i++)
			if (!s->loops[i].red && (inj != INJ_BIG_BLOCK || gbig_ok(&s->loops[i])))
				pos[n++] = i;
		int a = n - 2, b = n - 1;
		if (chance(40)) {
			a = rnd(n - 1);
			b = a + 1 + rnd(n - a - 1);
		}
		if (chance(15)) {
			int t = a;
			a = b, b = t;
		}
		const char *x = s->loops[pos[a]].name, *y = s->loops[pos[b]].name;
		int fx, fy;
		if (inj == INJ_BIG_BLOCK) {
			fx = 64, fy = 32;
			if (chance(50))
				fx = 32, fy = 64;
		} else {
			fy = gfactor(32);
			fx = gfactor(32);
		}
		const char *xo = fresh_name(x), *yo = fresh_name(y);
		const char *xi = fresh_name(x), *yi = fresh_name(y);
		emit("  %s.gpu_tile(%s, %s, %d, %d) -> (%s, %s, %s, %s);\n", s->name, x, y, fx, fy,
		    xo, yo, xi, yi);
		if (s->nloops + 2 < MAXL) {
			gsplit_loops(s, gfind(s, x), fx, xo, xi);
			gsplit_loops(s, gfind(s, y), fy, yo, yi);
			/* the four loops take their four slots in the order xo, yo, xi, yi */
			const char *nm[4] = { xo, yo, xi, yi };
			int p[4];
			Loop l[4];
			for (int i = 0; i < 4; i++) {
				p[i] = gfind(s, nm[i]);
				l[i] = s->loops[p[i]];
			}
			for (int i = 1; i < 4; i++)
				for (int j = i; j > 0 && p[j - 1] > p[j]; j--) {
					int t = p[j];
					p[j] = p[j - 1], p[j - 1] = t;
				}
			static const int gb[4] = { G_BLOCK, G_BLOCK, G_THREAD, G_THREAD };
			static const int gd[4] = { 1, 0, 1, 0 };
			for (int i = 0; i < 4; i++) {
				l[i].gb = gb[i];
				l[i].gd = gd[i];
				l[i].tiled = true;
				s->loops[p[i]] = l[i];
			}
		}
		bused[0] = bused[1] = tused[0] = tused[1] = true;
		tprod = fx * fy;
	} else if (npure) {
		/* split + bind on one, two or three pure loops */
		int nd = 1 + (npure >= 2 && chance(55));
		nd += nd == 2 && npure >= 3 && chance(25);
		if (inj == INJ_BIG_BLOCK)
			nd = nbig >= 2 && chance(50) ? 2 : 1;
		const char *nm[3];
		int dims[3];
		int chosen = 0;
		while (chosen < nd) {
			int i = gpick(s, false, G_SERIAL);
			if (inj == INJ_BIG_BLOCK) {
				int c[MAXL], n = 0;
				for (int j = 0; j < s->nloops; j++)
					if (gbig_ok(&s->loops[j]))
						c[n++] = j;
				i = n ? c[rnd(n)] : i;
			}
			s->loops[i].gb = -1;     /* taken */
			nm[chosen++] = s->loops[i].name;
		}
		/* dimensions: x for the innermost, mostly */
		for (int k = 0; k < nd; k++) {
			dims[k] = 0;
			for (int j = 0; j < nd; j++)
				dims[k] += gfind(s, nm[j]) > gfind(s, nm[k]);
		}
		if (chance(20))
			for (int k = nd - 1; k > 0; k--) {
				int j = rnd(k + 1), t = dims[k];
				dims[k] = dims[j], dims[j] = t;
			}
		bool have_block = false;
		for (int k = 0; k < nd; k++) {
			int i = gfind(s, nm[k]), d = dims[k], r = rnd(100);
			int lim = d == 2 ? 64 : 1024;
			s->loops[i].gb = G_SERIAL;
			if (inj == INJ_BIG_BLOCK) {
				/* 2048 threads in x, or 64 * 32 */
				int f = nd == 1 ? 2048 : k == 0 ? 64 : 32;
				if (!gsplit(s, i, f, false))
					continue;
				s->loops[i].gb = G_BLOCK, s->loops[i].gd = d;
				s->loops[i + 1].gb = G_THREAD, s->loops[i + 1].gd = d;
				bused[d] = tused[d] = true;
				tprod *= f;
				continue;
			}
			if (have_block && r < 10 && s->loops[i].ext && s->loops[i].ext <= lim &&
			    tprod * s->loops[i].ext <= 1024) {
				/* a loop of constant extent straight to the threads */
				s->loops[i].gb = G_THREAD, s->loops[i].gd = d;
				tused[d] = true;
				tprod *= s->loops[i].ext;
			} else if (r < 22) {
				/* straight to the blocks: one thread in that dimension */
				s->loops[i].gb = G_BLOCK, s->loops[i].gd = d;
				bused[d] = have_block = true;
			} else {
				int room = 1024 / tprod < lim ? 1024 / tprod : lim;
				int f = gfactor(room);
				if (nd == 1 && chance(25))   /* a long row of threads */
					f = 64 << rnd(3);
				if (f > room)
					f = room;
				if (!gsplit(s, i, f, true))
					continue;
				s->loops[i].gb = G_BLOCK, s->loops[i].gd = d;
				s->loops[i + 1].gb = G_THREAD, s->loops[i + 1].gd = d;
				bused[d] = tused[d] = have_block = true;
				tprod *= f;
			}
		}
	}
	/* other pure loops: to a free block dimension, or to threadIdx.z */
	for (int d = 2; d >= 0; d--) {
		if (bused[d] || !chance(d == 2 ? 45 : 25))
			continue;
		int i = gpick(s, false, G_SERIAL);
		if (i < 0)
			break;
		s->loops[i].gb = G_BLOCK, s->loops[i].gd = d;
		bused[d] = true;
	}
	if (!tused[2] && chance(15) && inj != INJ_BIG_BLOCK) {
		int i = gpick(s, false, G_SERIAL);
		if (i >= 0 && s->loops[i].ext && s->loops[i].ext <= 64 &&
		    tprod * s->loops[i].ext <= 1024) {
			s->loops[i].gb = G_THREAD, s->loops[i].gd = 2;
			tused[2] = true;
			tprod *= s->loops[i].ext;
		}
	}
	/* illegal: a second loop on a block dimension already taken */
	if (inj == INJ_DUP_BLOCK) {
		int used[3], n = 0;
		for (int d = 0; d < 3; d++)
			if (bused[d])
				used[n++] = d;
		int d = n ? used[rnd(n)] : 0;
		int i = gpick(s, false, G_SERIAL);
		if (i < 0 || !n) {
			/* none left: split a block loop into two on the same dimension */
			i = gpick(s, false, G_BLOCK);
			if (i >= 0 && gsplit(s, i, 2 + rnd(2), false)) {
				d = s->loops[i].gd;
				s->loops[i + 1].gb = G_BLOCK;
				s->loops[i + 1].gd = d;
			} else {
				emit("  %s.bind(%s, blockIdx.x);\n", s->name, s->loops[0].name);
				emit("  %s.bind(%s, blockIdx.x);\n", s->name, s->loops[s->nloops - 1].name);
			}
		} else {
			s->loops[i].gb = G_BLOCK;
			s->loops[i].gd = d;
		}
		illegal(arena_printf(perm, "two loops of '%s' bound to blockIdx.%c", s->name, gxyz[d]));
	}
	/* a reduction: its outer part between the block and the thread loops */
	const char *ko = NULL;
	if (s->reduction && chance(40)) {
		int i = gpick(s, true, G_SERIAL);
		if (i >= 0 && gsplit(s, i, gfactor2(32), false)) {
			ko = s->loops[i].name;
			s->loops[i + 1].zone = Z_INNER;
		}
	}
	gplace(s, inj, ko, 30);
	int ni = 0;
	for (int i = 0; i < s->nloops; i++)
		ni += s->loops[i].zone == Z_INNER;
	if (inj == INJ_NO_BLOCK) {
		if (gcount(s, false, G_BLOCK) && !gcount(s, false, G_THREAD) &&
		    !gcount(s, true, G_THREAD))
			/* make sure there is a thread loop to complain about */
			for (int i = 0; i < s->nloops; i++)
				if (s->loops[i].gb == G_BLOCK && !s->loops[i].tiled) {
					emit("  %s.bind(%s, threadIdx.x);\n", s->name, s->loops[i].name);
					break;
				}
		for (int i = 0; i < s->nloops; i++)
			if (s->loops[i].tiled && s->loops[i].gb == G_BLOCK)
				emit("  %s.bind(%s, threadIdx.z);\n", s->name, s->loops[i].name);
		illegal(arena_printf(perm, "loops of '%s' bound to threads with no loop bound to "
		    "blockIdx", s->name));
		for (int i = 0; i < s->nloops; i++)
			if (s->loops[i].gb == G_BLOCK)
				s->loops[i].gb = G_SERIAL;
	}
	/* inside the threads: a serial split, an unroll, a vectorize */
	if (ni && chance(30)) {
		int i = glast(s, Z_INNER) - rnd(ni);
		if (i >= 0 && s->loops[i].zone == Z_INNER && !s->loops[i].red)
			gsplit(s, i, gfactor2(8), false);
	}
	if (chance(30)) {
		int c[MAXL], k = 0;
		for (int i = 0; i < s->nloops; i++)
			if ((s->loops[i].zone == Z_INNER || s->loops[i].zone == Z_MID) &&
			    s->loops[i].ext > 0 && s->loops[i].ext <= 16)
				c[k++] = i;
		if (k) {
			int i = c[rnd(k)];
			emit("  %s.unroll(%s);\n", s->name, s->loops[i].name);
			s->loops[i].vec = true;     /* leave it alone from now on */
		}
	}
	if (chance(15)) {
		/* a per-thread serial loop in the end; the innermost, mostly */
		int c[MAXL], k = 0;
		for (int i = 0; i < s->nloops; i++)
			if (s->loops[i].zone == Z_INNER && !s->loops[i].red && s->loops[i].ext > 0 &&
			    s->loops[i].ext <= 32 && !s->loops[i].vec)
				c[k++] = i;
		if (k) {
			int i = chance(60) ? c[k - 1] : c[rnd(k)];
			emit("  %s.vectorize(%s);\n", s->name, s->loops[i].name);
			s->loops[i].vec = true;
		}
	}
}

/* The stage that reads s now (its only consumer), or NULL. */
static Stage *
gconsumer(Stage *s)
{
	if (s->ncons != 1)
		return NULL;
	Stage *c = &st[s->cons[0]];
	if (c->inlined || c->redirect >= 0)
		return NULL;
	return c;
}

/* Whether the loops of s after loop at all have constant extents (a
 * region of constant size there, as double_buffer needs). */
static bool
gconst_after(Stage *s, int at)
{
	for (int i = at + 1; i < s->nloops; i++)
		if (!s->loops[i].ext)
			return false;
	return true;
}

/* cache_read(shared) of one or two of the inputs stage si reads into the
 * reader rd (si itself, or the cache_write stage that computes it now), at
 * loop at of rd; double-buffered now and then where at is a serial loop
 * with a region of constant size inside. */
static void
gshared_copies(int si, Stage *rd, int at, bool serial)
{
	int nin = nin_reads[si];
	int a = rnd(nin), k = chance(35) && nin > 1 ? 2 : 1;
	bool db = serial && !st[si].gfused && gconst_after(rd, at) && chance(35);
	for (int j = 0; j < k; j++) {
		Tensor *t = kern->tensors[in_reads[si][(a + j) % nin]];
		const char *n = fresh_name("S");
		emit("  %s.cache_read(shared, [%s]) -> %s;\n", t->name, rd->name, n);
		emit("  %s.compute_at(%s, %s);\n", n, rd->name, rd->loops[at].name);
		if (db)
			emit("  %s.double_buffer();\n", n);
	}
}

/* A shared or local copy of an input that kernel stage si reads, computed
 * at one of its loops: a block-level loop, or (TVM's way: its region is
 * then the whole block's) a loop at or inside the thread loops. */
static void
cuda_cache(int si)
{
	Stage *s = &st[si];
	int nin = nin_reads[si];
	if (!nin || s->gk != GK_KERNEL || s->redirect >= 0)
		return;
	int r = rnd(100), lt = glast(s, Z_THREAD);
	if (r < 30) {
		int at = gshared_loop(s);
		if (at >= 0)
			gshared_copies(si, s, at, s->loops[at].zone == Z_MID);
	} else if (r < 40 && lt >= 0) {
		gshared_copies(si, s, lt + rnd(s->nloops - lt), false);
	} else if (r < 48) {
		int at = glocal_loop(s);
		if (at < 0)
			return;
		Tensor *t = kern->tensors[in_reads[si][rnd(nin)]];
		const char *n = fresh_name("L");
		emit("  %s.cache_read(local, [%s]) -> %s;\n", t->name, s->name, n);
		emit("  %s.compute_at(%s, %s);\n", n, s->name, s->loops[at].name);
	}
}

/* TVM's register tile: w, the cache_write stage of kernel stage si
 * computed at one of its thread loops, gets its reduction loop split and
 * outermost, and shared copies of the inputs at the outer part (bound
 * inference widens them to the whole block's tile, which the block's
 * threads copy together). */
static void
cuda_register_tile(int si, Stage *w)
{
	int r = gpick(w, true, G_SERIAL);
	if (r < 0 || w->nloops + 2 >= MAXL || !nin_reads[si])
		return;
	for (int i = 0; i < w->nloops; i++)
		w->loops[i].zone = Z_INNER;
	gsplit(w, r, gfactor2(16), false);
	const char *ko = w->loops[r].name, *ki = w->loops[r + 1].name;
	emit("  %s.reorder(%s, %s", w->name, ko, ki);
	for (int i = 0; i < w->nloops; i++)
		if (!w->loops[i].red)
			emit(", %s", w->loops[i].name);
	emit(");\n");
	/* only the position of ko matters from here on */
	int p = 0;
	for (int i = 0; i < w->nloops; i++)
		if (w->loops[i].name == ko)
			p = i;
	Loop l = w->loops[p];
	drop(w, p);
	insert(w, 0, l);
	gshared_copies(si, w, 0, true);
}

/* A reduction across a block's threads: a reduction loop of stage si split
 * by f, its inner part factored out (rfactor) into a stage computed at the
 * innermost block loop (in shared memory) with that axis bound to
 * threadIdx.x; the stage then combines the f partial results (a tree in
 * shared memory).  Its pure loops go to the blocks, one of them now and
 * then split over threadIdx.y. */
static bool
cuda_tree(int si)
{
	static const int F[] = { 8, 16, 32, 64, 48, 5, 24, 128 };
	Stage *s = &st[si];
	int r = gpick(s, true, G_SERIAL);
	if (r < 0 || !gcount(s, false, G_SERIAL) || nst >= MAXS || s->nloops + 3 >= MAXL)
		return false;
	for (int i = 0; i < s->nloops; i++) {
		s->loops[i].gb = G_SERIAL;
		s->loops[i].zone = -1;
		s->loops[i].tiled = false;
	}
	int f = F[rnd(8)];
	gsplit(s, r, f, false);
	const char *ki = s->loops[r + 1].name, *rn = fresh_name("R");
	emit("  %s.rfactor(%s) -> %s;\n", s->name, ki, rn);
	Stage *w = &st[nst++];
	*w = *s;
	w->name = rn;
	w->t = NULL;
	w->output = false;
	w->frozen = true;
	w->gk = GK_SHARED;
	s->redirect = nst - 1;
	/* the stage reduces over ki only now */
	for (int j = s->nloops - 1; j >= 0; j--)
		if (s->loops[j].red && s->loops[j].name != ki)
			drop(s, j);
	int p = gpick(s, false, G_SERIAL);
	if (chance(35) && f <= 256) {
		int fy = 2 << rnd(3);
		while (fy * f > 1024)
			fy /= 2;
		gsplit(s, p, fy, false);
		s->loops[p].gb = G_BLOCK, s->loops[p].gd = 0;
		s->loops[p + 1].gb = G_THREAD, s->loops[p + 1].gd = 1;
	} else {
		s->loops[p].gb = G_BLOCK, s->loops[p].gd = 0;
	}
	for (int d = 1; d < 3; d++) {
		int i = gpick(s, false, G_SERIAL);
		if (i >= 0 && chance(60))
			s->loops[i].gb = G_BLOCK, s->loops[i].gd = d;
	}
	gplace(s, -1, NULL, 0);
	emit("  %s.compute_at(%s, %s);\n", rn, s->name, s->loops[glast(s, Z_BLOCK)].name);
	emit("  %s.bind(%s, threadIdx.x);\n", rn, ki);
	return true;
}

/* Whether injection kind k applies to stage s. */
static bool
inj_ok(int si, int k)
{
	Stage *s = &st[si];
	int npure = 0, nbig = 0;
	for (int i = 0; i < s->nloops; i++) {
		npure += !s->loops[i].red;
		nbig += gbig_ok(&s->loops[i]);
	}
	switch (k) {
	/* no longer illegal: a stage whose thread loops have no block loop
	 * around them runs as a grid of one block (target/cuda/gpu_split.c,
	 * txc-schedule.7); what stays illegal, a thread loop outside a block
	 * loop, is tests/diag/cuda-thread-without-block.tx */
	case INJ_NO_BLOCK: return false;
	case INJ_DUP_BLOCK: return npure > 0;
	case INJ_RED_THREAD: return s->reduction;
	case INJ_BIG_BLOCK: return nbig > 0;
	case INJ_PARALLEL: return s->nloops > 0;
	default: return false;
	}
}

static void
generate_cuda(int illegal_pct)
{
	setup();
	outlen = 0;
	expect = NULL;
	int inject_at = chance(illegal_pct) ? rnd(nst) : -1;
	for (int si = nst - 1; si >= 0; si--) {
		Stage *s = &st[si];
		s->gk = GK_KERNEL;
		int npure = 0;
		for (int i = 0; i < s->nloops; i++)
			npure += !s->loops[i].red;
		int inj = -1;
		if (si == inject_at) {
			int k0 = rnd(INJ_N);
			for (int k = 0; k < INJ_N && inj < 0; k++)
				if (inj_ok(si, (k0 + k) % INJ_N))
					inj = (k0 + k) % INJ_N;
		}
		Stage *c = gconsumer(s);
		int place = GK_KERNEL;
		if (!s->output) {
			int r = rnd(100);
			if (!npure)
				place = !s->reduction ? GK_INLINE : chance(50) ? GK_SHARED : GK_LOCAL;
			else if (r < 25 && !s->reduction)
				place = GK_INLINE;
			else if (r < 50)
				place = GK_KERNEL;
			else if (r < 75)
				place = GK_SHARED;
			else
				place = GK_LOCAL;
			/* attach to a consumer in a kernel of its own (now and then to
			 * one computed in shared memory) */
			if (place >= GK_SHARED && (!c || !(c->gk == GK_KERNEL ||
			    (c->gk == GK_SHARED && place == GK_SHARED && chance(30)))))
				place = !s->reduction && (!npure || chance(40)) ? GK_INLINE : GK_KERNEL;
		}
		if (inj >= 0 && (place == GK_INLINE || (inj != INJ_PARALLEL && inj != INJ_RED_THREAD)))
			place = GK_KERNEL;
		s->gk = place;
		switch (place) {
		case GK_INLINE:
			emit("  %s.compute_inline();\n", s->name);
			s->inlined = true;
			break;
		case GK_KERNEL: {
			/* cache_write(local) of a reduction, computed in each thread */
			const char *w = NULL;
			if (s->reduction && inj < 0 && chance(10) && cuda_tree(si))
				break;
			if (s->reduction && inj < 0 && chance(10) && nst < MAXS) {
				w = fresh_name("W");
				emit("  %s.cache_write(local) -> %s;\n", s->name, w);
				Stage *ws = &st[nst++];
				*ws = *s;
				ws->name = w;
				ws->t = NULL;
				ws->output = false;
				ws->frozen = true;
				ws->gk = GK_LOCAL;
				s->cached = true;
				s->redirect = nst - 1;
				for (int i = s->nloops - 1; i >= 0; i--)
					if (s->loops[i].red)
						drop(s, i);
				s->reduction = false;
				s = &st[si];
			}
			cuda_kernel(s, inj);
			if (!s->output && chance(50))
				emit("  %s.compute_root();\n", s->name);
			if (w) {
				int at = glocal_loop(s);
				if (at < 0)
					at = gshared_loop(s);
				if (at >= 0)
					emit("  %s.compute_at(%s, %s);\n", w, s->name, s->loops[at].name);
				else
					illegal(arena_printf(perm, "'%s' is not bound", w));
				if (at >= 0 && at >= glast(s, Z_THREAD) && glast(s, Z_THREAD) >= 0 && chance(60))
					cuda_register_tile(si, &st[s->redirect]);
			}
			break;
		}
		case GK_SHARED:
		case GK_LOCAL: {
			int at = place == GK_LOCAL ? glocal_loop(c) : -1;
			if (at < 0) {
				place = s->gk = GK_SHARED;
				at = c->gk == GK_SHARED ? rnd(c->nloops) : gshared_loop(c);
			}
			/* its own loops: a serial split now and then */
			if (s->nloops && chance(25))
				gsplit(s, rnd(s->nloops), gfactor2(16), false);
			for (int i = 0; i < s->nloops; i++) {
				s->loops[i].gb = G_SERIAL;
				s->loops[i].zone = Z_MID;
			}
			if (at >= 0)
				emit("  %s.compute_at(%s, %s);\n", s->name, c->name, c->loops[at].name);
			else
				emit("  %s.compute_root();\n", s->name);
			if (inj == INJ_PARALLEL) {
				int i = rnd(s->nloops);
				emit("  %s.parallel(%s);\n", s->name, s->loops[i].name);
				illegal(arena_printf(perm, "parallel loop '%s' of '%s' on the cuda target",
				    s->loops[i].name, s->name));
			}
			break;
		}
		}
		if (s->gk == GK_KERNEL) {
			if (inj == INJ_PARALLEL) {
				int i = gpick(s, false, G_SERIAL);
				if (i < 0)
					i = rnd(s->nloops);
				emit("  %s.parallel(%s);\n", s->name, s->loops[i].name);
				illegal(arena_printf(perm, "parallel loop '%s' of '%s' on the cuda target",
				    s->loops[i].name, s->name));
			}
			if (inj != INJ_NO_BLOCK)
				cuda_cache(si);
		}
		if (inj == INJ_RED_THREAD) {
			int i = gpick(s, true, G_SERIAL);
			if (i < 0)
				i = gpick(s, true, G_THREAD);
			if (i < 0) {
				for (int j = 0; j < s->nloops && i < 0; j++)
					if (s->loops[j].red)
						i = j;
			}
			int d = rnd(3);
			if (i >= 0) {
				emit("  %s.bind(%s, threadIdx.%c);\n", s->name, s->loops[i].name, gxyz[d]);
				illegal(arena_printf(perm, "reduction axis '%s' of '%s' bound to threadIdx.%c",
				    s->loops[i].name, s->name, gxyz[d]));
			}
		}
		if (inj == INJ_BIG_BLOCK)
			illegal(arena_printf(perm, "more than 1024 threads in a block of '%s'", s->name));
	}
}

/* Whether every stage can run on the GPU: a stage with no pure axis that
 * must be computed (an output, a reduction) has no loop to bind. */
static const char *
cuda_unbindable(void)
{
	setup();
	for (int i = 0; i < nst; i++)
		if (st[i].scan || st[i].upd)
			return st[i].name;     /* scans and updates compile for the cpu only */
	for (int i = 0; i < nst; i++) {
		int npure = 0;
		for (int j = 0; j < st[i].nloops; j++)
			npure += !st[i].loops[j].red;
		if (!npure && st[i].output)
			return st[i].name;
	}
	return NULL;
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
	fprintf(stderr, "usage: schedgen [-n COUNT] [-s SEED] [-k KERNEL] [-i PERCENT] [-t cpu|cuda] -o DIR FILE.tx\n");
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
		else if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
			const char *t = argv[++i];
			if (strcmp(t, "cuda") == 0)
				gpu_mode = true;
			else if (strcmp(t, "cpu") != 0)
				usage();
		} else if (argv[i][0] == '-' || file)
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
	const char *zero = gpu_mode ? cuda_unbindable() : NULL;
	if (zero) {
		Tensor *zt = ast_find_tensor(kern, zero);
		if (zt && zt->update)
			fprintf(stderr, "schedgen: %s: '%s' of kernel '%s' has an update definition: "
			    "those compile for the cpu only\n", file, zero, kern->name);
		else if (zt && zt->ninits > 0)
			fprintf(stderr, "schedgen: %s: '%s' of kernel '%s' is a scan: scans compile "
			    "for the cpu only\n", file, zero, kern->name);
		else
			fprintf(stderr, "schedgen: %s: output '%s' of kernel '%s' has no pure axis "
			    "to bind to GPU blocks: no cuda schedule can run it\n", file, zero, kern->name);
		return 3;
	}
	for (int n = 1; n <= count; n++) {
		rng = seed * 0x100000001b3ull + (uint64_t)n * 0x9e3779b97f4a7c15ull;
		rng_part = rng ^ 0x5851f42d4c957f2dull;
		rng_with = rng ^ 0x2545f4914f6cdd1dull;
		if (gpu_mode) {
			/* one stream per schedule (the cpu streams of schedules n and n + 1
			 * are one draw apart, which their schedules show) */
			rng = next() ^ (uint64_t)n << 40;
			rng = next();
		}
		if (gpu_mode)
			generate_cuda(illegal_pct);
		else
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
		fprintf(f, "\nschedule %s as g for %s {\n%.*s}\n", kern->name, gpu_mode ? "cuda" : "cpu",
		    (int)outlen, out);
		if (fclose(f) != 0) {
			perror(path);
			return 2;
		}
	}
	return 0;
}
