/* vtagen.c: random VTA schedules for the packed matmul of
 * tests/run/vta_matmul.tx and the packed convolution of
 * tests/run/vta_conv.tx (tests/gen/fuzz-vta-schedules.sh).
 *
 *     vtagen [-n COUNT] [-s SEED] -k gemm|conv -o DIR
 *
 * writes DIR/0.sched ... DIR/COUNT-1.sched.  Each starts with a line
 *
 *     // sizes: O=7 N=3 M=5
 *
 * (the sizes to compile it with, -D O=7 ..., and to give the harness),
 * then one `schedule KERNEL as g for vta { ... }` block, to be appended
 * to the kernel's .tx file in place of its own schedules.  Schedule i
 * depends on SEED and i only, not on COUNT.
 *
 * What is random (every schedule is meant to be legal by the rules of
 * txc-schedule(7) and txc(1), VTA: txc must compile it, an SRAM overflow
 * at a large tile aside, which these sizes make rare, and its result must
 * be the CPU's):
 *   - the sizes: gemm O 1..40, N 1..6, M 1..12; conv CB 1..3, OB 1..6,
 *     H and W 1..14, KH and KW in {1, 3} (mostly equal), P 0..2, S 1..2,
 *     with an output of at least one pixel;
 *   - the tiles of the output's block loops (split, or tile for two
 *     adjacent ones; factors up to a little over the extent, so guarded
 *     tails and single tiles both happen, or in about a third of the
 *     schedules only factors that divide the extents, and no guard
 *     anywhere) and the order of the loops (block loops outside the
 *     tile's, or any permutation), j innermost;
 *   - where the accumulator is computed: at one of the output's loops, or
 *     at the root (the whole output in acc);
 *   - virtual threads: an output loop at or outside that level split in
 *     two threads (split by 2 binding the inner part, or by half the
 *     extent binding the outer part), the thread loop put just outside
 *     the accumulator's level or made that level;
 *   - the epilogue in place, or through acc.cache_write(acc) (the sum in
 *     accw, computed at the same loop of the output or at one of acc's);
 *   - the update nest: the reduction's block axis (n, c) split or not, now
 *     and then a pure axis split too, the loops in any order with the
 *     tensorized j and k innermost;
 *   - where the loads are computed (A / pad into inp, B / w into wgt): at
 *     one of the reduction loops of the update nest (its block loops or a
 *     tap loop), now and then at one of its other loops or at the root;
 *   - conv: where the bias (cache_read into acc) is computed, at any loop
 *     of the output but j, or at the root.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXL 16

typedef struct {
	char name[16];
	int ext;
} Loop;

static uint64_t rstate;

static uint64_t rnd(void) /* splitmix64 */
{
	uint64_t z = (rstate += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rint_in(int lo, int hi) /* lo..hi inclusive */
{
	return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

static int chance(int pct)
{
	return (int)(rnd() % 100) < pct;
}

static int cdiv(int a, int b)
{
	return (a + b - 1) / b;
}

static void shuffle(Loop *l, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = rint_in(0, i);
		Loop t = l[i];
		l[i] = l[j];
		l[j] = t;
	}
}

static Loop mk(const char *name, int ext)
{
	Loop l;
	snprintf(l.name, sizeof l.name, "%s", name);
	l.ext = ext;
	return l;
}

static void insert(Loop *l, int *n, int at, Loop x)
{
	memmove(&l[at + 1], &l[at], (size_t)(*n - at) * sizeof *l);
	l[at] = x;
	(*n)++;
}

static void print_loops(FILE *f, const Loop *l, int n, const char *tail)
{
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", l[i].name);
	if (tail)
		fprintf(f, "%s%s", n ? ", " : "", tail);
}

/* A tiling factor for a loop of extent e: mostly 1..e, now and then a
 * little more than e (one guarded tile); exact: one that divides e. */
static int factor(int e, int cap, bool exact)
{
	int hi = e < cap ? e : cap;
	if (exact) {
		int f;
		do
			f = rint_in(1, hi);
		while (e % f);
		return f;
	}
	if (chance(10))
		return e + rint_in(1, 3);
	return rint_in(1, hi);
}

typedef struct {
	const char *kernel;
	const char *out;       /* the output stage: C, y */
	int nax;               /* its block axes (j aside) */
	const char *ax[3];
	int ext[3];
	int cap[3];            /* largest tile factor */
	int nred;              /* reduction axes of the sum (k aside) */
	const char *red[3];    /* red[0] is the block axis (n, c), others taps */
	int rext[3];
	const char *load[2];   /* inp, wgt */
	bool bias;             /* conv: bias.cache_read(acc, [y]) -> bl */
} Kernel;

static void gen(FILE *f, Kernel *K)
{
	Loop c[MAXL];          /* the output's loops, j aside */
	int nc = 0;

	fprintf(f, "schedule %s as g for vta {\n", K->kernel);
	if (strcmp(K->kernel, "conv") == 0) {
		fprintf(f, "  pad.set_scope(inp);\n");
		fprintf(f, "  acc.set_scope(acc);\n");
		fprintf(f, "  w.cache_read(wgt, [acc]) -> wl;\n");
		fprintf(f, "  bias.cache_read(acc, [y]) -> bl;\n");
	} else {
		fprintf(f, "  acc.set_scope(acc);\n");
		fprintf(f, "  A.cache_read(inp, [acc]) -> Ai;\n");
		fprintf(f, "  B.cache_read(wgt, [acc]) -> Bi;\n");
	}
	bool cw = chance(30);
	if (cw)
		fprintf(f, "  acc.cache_write(acc) -> accw;\n");
	const char *U = cw ? "accw" : "acc";
	/* exact tiles now and then: no guard anywhere */
	bool exact = chance(30);

	/* tiles of the output's block loops */
	bool split[3];
	int fac[3];
	for (int a = 0; a < K->nax; a++) {
		split[a] = chance(60);
		fac[a] = split[a] ? factor(K->ext[a], K->cap[a], exact) : 0;
	}
	bool tiled[3] = { false, false, false };
	Loop outer[3], inner[3];
	int nout = 0, ninn = 0;
	for (int a = 0; a < K->nax; a++) {
		char o[16], i[16];
		snprintf(o, sizeof o, "%so", K->ax[a]);
		snprintf(i, sizeof i, "%si", K->ax[a]);
		if (!split[a]) {
			c[nc++] = mk(K->ax[a], K->ext[a]);
			continue;
		}
		if (tiled[a])
			continue;
		if (a + 1 < K->nax && split[a + 1] && chance(40)) {
			/* tile(x, y, fx, fy) -> (xo, yo, xi, yi) */
			char o2[16], i2[16];
			snprintf(o2, sizeof o2, "%so", K->ax[a + 1]);
			snprintf(i2, sizeof i2, "%si", K->ax[a + 1]);
			fprintf(f, "  %s.tile(%s, %s, %d, %d) -> (%s, %s, %s, %s);\n", K->out,
			    K->ax[a], K->ax[a + 1], fac[a], fac[a + 1], o, o2, i, i2);
			tiled[a + 1] = true;
			c[nc++] = mk(o, cdiv(K->ext[a], fac[a]));
			c[nc++] = mk(o2, cdiv(K->ext[a + 1], fac[a + 1]));
			c[nc++] = mk(i, fac[a]);
			c[nc++] = mk(i2, fac[a + 1]);
			outer[nout++] = c[nc - 4];
			outer[nout++] = c[nc - 3];
			inner[ninn++] = c[nc - 2];
			inner[ninn++] = c[nc - 1];
			continue;
		}
		fprintf(f, "  %s.split(%s, %d) -> (%s, %s);\n", K->out, K->ax[a], fac[a], o, i);
		c[nc++] = mk(o, cdiv(K->ext[a], fac[a]));
		c[nc++] = mk(i, fac[a]);
		outer[nout++] = c[nc - 2];
		inner[ninn++] = c[nc - 1];
	}
	/* the loop order: block loops outside the tile's (unsplit loops on
	 * either side), or any permutation */
	Loop ord[MAXL];
	int nord = 0;
	if (chance(75)) {
		for (int a = 0; a < K->nax; a++) {
			if (split[a])
				continue;
			if (chance(50))
				outer[nout++] = mk(K->ax[a], K->ext[a]);
			else
				inner[ninn++] = mk(K->ax[a], K->ext[a]);
		}
		shuffle(outer, nout);
		shuffle(inner, ninn);
		for (int i = 0; i < nout; i++)
			ord[nord++] = outer[i];
		for (int i = 0; i < ninn; i++)
			ord[nord++] = inner[i];
	} else {
		memcpy(ord, c, (size_t)nc * sizeof *c);
		nord = nc;
		shuffle(ord, nord);
	}

	/* the accumulator's level: -1 the root */
	int p = chance(8) ? -1 : rint_in(0, nord - 1);

	/* virtual threads: split a loop at or outside the level in two */
	char vt[16] = "";
	int q = p < 0 ? -1 : chance(70) ? rint_in(p > 0 ? p - 1 : 0, p) : rint_in(0, p);
	if (q >= 0 && chance(40) && !(exact && ord[q].ext % 2)) {
		Loop x = ord[q];
		Loop rest, thr;
		snprintf(thr.name, sizeof thr.name, "%.12s_vt", x.name);
		snprintf(rest.name, sizeof rest.name, "%.12s_r", x.name);
		if (chance(50)) {
			fprintf(f, "  %s.split(%s, 2) -> (%s, %s);\n", K->out, x.name, rest.name, thr.name);
			rest.ext = cdiv(x.ext, 2);
			thr.ext = 2;
		} else {
			int h = cdiv(x.ext, 2);
			fprintf(f, "  %s.split(%s, %d) -> (%s, %s);\n", K->out, x.name, h, thr.name, rest.name);
			thr.ext = cdiv(x.ext, h);
			rest.ext = h;
		}
		ord[q] = rest;
		/* the thread loop just outside the level's loop (which stays
		 * the level), or just inside it and made the level */
		insert(ord, &nord, chance(50) ? p : p + 1, thr);
		p++;
		strcpy(vt, thr.name);
	}
	/* write the order unless it is the one the splits left */
	bool same = nord == nc;
	for (int i = 0; same && i < nord; i++)
		same = strcmp(ord[i].name, c[i].name) == 0;
	if (!same || chance(20)) {
		fprintf(f, "  %s.reorder(", K->out);
		print_loops(f, ord, nord, "j");
		fprintf(f, ");\n");
	}
	if (vt[0])
		fprintf(f, "  %s.bind(%s, vthread);\n", K->out, vt);
	if (p >= 0)
		fprintf(f, "  acc.compute_at(%s, %s);\n", K->out, ord[p].name);
	if (cw) {
		if (p >= 0 && chance(70))
			fprintf(f, "  accw.compute_at(%s, %s);\n", K->out, ord[p].name);
		else if (chance(90)) {
			/* at one of acc's own loops (its axes keep their names) */
			int a = rint_in(0, K->nax - 1);
			fprintf(f, "  accw.compute_at(acc, %s);\n", K->ax[a]);
		}
		/* else at the root: the whole sum, then the copies */
	}
	if (K->bias) {
		int r = rint_in(0, 9);
		if (r == 0)
			; /* the root: the whole bias once */
		else if (r <= 6 && p >= 0)
			fprintf(f, "  bl.compute_at(%s, %s);\n", K->out, ord[rint_in(0, p)].name);
		else
			fprintf(f, "  bl.compute_at(%s, %s);\n", K->out, ord[rint_in(0, nord - 1)].name);
	}

	/* the update nest */
	Loop u[MAXL];
	int nu = 0;
	Loop red[MAXL];
	int nred = 0;
	for (int a = 0; a < K->nax; a++) {
		if (!exact && chance(10) && K->ext[a] > 1) {
			char o[16], i[16];
			int fa = rint_in(1, K->ext[a] < 4 ? K->ext[a] : 4);
			snprintf(o, sizeof o, "%s_o", K->ax[a]);
			snprintf(i, sizeof i, "%s_i", K->ax[a]);
			fprintf(f, "  %s.split(%s, %d) -> (%s, %s);\n", U, K->ax[a], fa, o, i);
			u[nu++] = mk(o, 0);
			u[nu++] = mk(i, 0);
		} else
			u[nu++] = mk(K->ax[a], 0);
	}
	for (int r = 0; r < K->nred; r++) {
		if (r == 0 && chance(50)) {
			char o[16], i[16];
			snprintf(o, sizeof o, "%so", K->red[r]);
			snprintf(i, sizeof i, "%si", K->red[r]);
			fprintf(f, "  %s.split(%s, %d) -> (%s, %s);\n", U, K->red[r],
			    factor(K->rext[r], K->rext[r], exact), o, i);
			red[nred++] = mk(o, 0);
			red[nred++] = mk(i, 0);
		} else
			red[nred++] = mk(K->red[r], 0);
	}
	for (int i = 0; i < nred; i++)
		u[nu++] = red[i];
	shuffle(u, nu);
	fprintf(f, "  %s.reorder(", U);
	print_loops(f, u, nu, "j, k");
	fprintf(f, ");\n");
	for (int l = 0; l < 2; l++) {
		int r = rint_in(0, 99);
		if (r < 6)
			continue; /* the root: the whole tensor once */
		const char *at = r < 14 ? u[rint_in(0, nu - 1)].name : red[rint_in(0, nred - 1)].name;
		fprintf(f, "  %s.compute_at(%s, %s);\n", K->load[l], U, at);
	}
	fprintf(f, "  %s.tensorize(j, vta_gemm);\n", U);
	fprintf(f, "}\n");
}

static void gen_gemm(FILE *f)
{
	int O = chance(10) ? 1 : rint_in(1, 40);
	int N = rint_in(1, 6), M = chance(10) ? 1 : rint_in(1, 12);
	Kernel K = {
		.kernel = "gemm", .out = "C",
		.nax = 2, .ax = { "o", "m" }, .ext = { O, M }, .cap = { 8, 6 },
		.nred = 1, .red = { "n" }, .rext = { N },
		.load = { "Ai", "Bi" },
	};
	fprintf(f, "// sizes: O=%d N=%d M=%d\n", O, N, M);
	gen(f, &K);
}

static void gen_conv(FILE *f)
{
	int CB = rint_in(1, 3), OB = rint_in(1, 6);
	int KH = chance(50) ? 3 : 1, KW = chance(80) ? KH : 4 - KH;
	int S = rint_in(1, 2), P, H, W;
	do {
		P = rint_in(0, 2);
		H = chance(10) ? 1 : rint_in(1, 14);
		W = chance(10) ? 1 : rint_in(1, 14);
	} while (H + 2 * P < KH || W + 2 * P < KW);
	int OH = (H + 2 * P - KH) / S + 1, OW = (W + 2 * P - KW) / S + 1;
	Kernel K = {
		.kernel = "conv", .out = "y",
		.nax = 3, .ax = { "o", "h", "v" }, .ext = { OB, OH, OW }, .cap = { 4, 8, 8 },
		.nred = 3, .red = { "c", "kh", "kw" }, .rext = { CB, KH, KW },
		.load = { "pad", "wl" }, .bias = true,
	};
	fprintf(f, "// sizes: CB=%d OB=%d H=%d W=%d KH=%d KW=%d P=%d S=%d\n", CB, OB, H, W, KH, KW, P, S);
	gen(f, &K);
}

static void usage(void)
{
	fprintf(stderr, "usage: vtagen [-n COUNT] [-s SEED] -k gemm|conv -o DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long count = 10;
	unsigned long long seed = 1;
	const char *kernel = NULL, *dir = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1] || a[2] || i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		char *end;
		switch (a[1]) {
		case 'n':
			count = strtol(v, &end, 10);
			if (*end || count < 0)
				usage();
			break;
		case 's':
			seed = strtoull(v, &end, 10);
			if (*end)
				usage();
			break;
		case 'k':
			kernel = v;
			break;
		case 'o':
			dir = v;
			break;
		default:
			usage();
		}
	}
	if (!kernel || !dir || (strcmp(kernel, "gemm") != 0 && strcmp(kernel, "conv") != 0))
		usage();
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "vtagen: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (long i = 0; i < count; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%ld.sched", dir, i);
		FILE *f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "vtagen: %s: %s\n", path, strerror(errno));
			return 1;
		}
		/* schedule i's stream: a hash of (SEED, i, kernel) */
		rstate = seed * 0x100000001b3ull + (uint64_t)(kernel[0] == 'c') * 0x5851f42d4c957f2dull;
		rstate = rnd() + (uint64_t)i;
		rstate = rnd();
		if (kernel[0] == 'g')
			gen_gemm(f);
		else
			gen_conv(f);
		if (fclose(f) != 0) {
			fprintf(stderr, "vtagen: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}
