/* cuda.c: the cuda rules of the schedule generator (txc-schedule(7)
 * AUTO-SCHEDULING), so that every kernel compiles for the GPU.
 *
 *   G1  every stage that can be inlined is (as Ansor and MetaSchedule do
 *       on GPUs: recomputing is cheaper than a trip through memory);
 *   G2  a stage at root gets a kernel of its own: its pure loops fused,
 *       split by T threads, the outer part bound to blockIdx.x and the
 *       inner to threadIdx.x; its reductions run in each thread;
 *   G3  a long reduction along a unit-stride axis with few outputs per
 *       block: a cross-thread reduction (split by T, rfactor, the lanes
 *       bound to threadIdx.x at the output's block loop);
 *   G4  a contraction: a register tile per thread (cache_write(local)),
 *       16 x 16 threads of 4 x 4 outputs, a 64 x 64 block;
 *
 *   G0  a tuple reduction or a range that depends on a pure axis: its
 *       points over blocks of threads, each range folded in order.
 *
 * A kernel that cannot map gets no schedule, and the reason: a scan or an
 * update definition (cuda runs neither), a stage with no pure axis (no
 * loop to bind).
 */
#include <string.h>

#include "auto/auto.h"

typedef struct {
	AutoGraph *g;
	FILE *fp;
	const AutoOptions *o;
	bool inl[AUTO_MAXS];
	int T;
} Gpu;

static int64_t
ext_or(int64_t e)
{
	return e > 0 ? e : AUTO_REP_SIZE;
}

static bool
read_in_special(Gpu *c, int si)
{
	AutoStage *s = &c->g->s[si];
	for (int i = 0; i < s->ncons; i++)
		if (c->g->s[s->cons[i]].kind == AK_SPECIAL)
			return true;
	return false;
}

/* G2 on stage s: fused pure loops over blocks of T threads.  Returns the
 * block loop's name. */
static const char *
bind_flat(Gpu *c, AutoStage *s, const char **fused_out)
{
	const char *cur = s->pure[0];
	for (int d = 1; d < s->npure; d++) {
		const char *f = auto_fresh(c->g, d + 1 == s->npure ? "fused" : "fuse_part");
		fprintf(c->fp, "  %s.fuse(%s, %s) -> %s;\n", s->name, cur, s->pure[d], f);
		cur = f;
	}
	int64_t total = 1;
	for (int d = 0; d < s->npure; d++)
		total *= ext_or(s->pext[d]);
	int T = c->T;
	while (T > 32 && total < 4 * (int64_t)T)
		T /= 2;
	const char *bo = auto_fresh(c->g, "block"), *th = auto_fresh(c->g, "thread");
	fprintf(c->fp, "  %s.split(%s, %d) -> (%s, %s);\n", s->name, cur, T, bo, th);
	fprintf(c->fp, "  %s.bind(%s, blockIdx.x);\n", s->name, bo);
	fprintf(c->fp, "  %s.bind(%s, threadIdx.x);\n", s->name, th);
	if (fused_out)
		*fused_out = cur;
	return bo;
}

bool
auto_cuda(FILE *fp, AutoGraph *g, const AutoOptions *o)
{
	Gpu c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.fp = fp;
	c.o = o;
	c.T = 256;
	/* what has no loop to bind cannot run in a kernel: say so */
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (s->t->ninits > 0) {
			o->why[0] = arena_printf(perm, "'%s' is a scan, and scans compile for the cpu "
			    "target only", s->name);
			return false;
		}
		if (s->t->update) {
			o->why[0] = arena_printf(perm, "'%s' has an update definition, and those "
			    "compile for the cpu target only", s->name);
			return false;
		}
		if (s->npure == 0) {
			o->why[0] = arena_printf(perm, "'%s' has no pure axis: a total has no loop to "
			    "bind to GPU blocks (compute it on the cpu, or give it a dimension of "
			    "extent 1)", s->name);
			return false;
		}
	}
	fprintf(fp, "// txc-auto v1: %s for cuda (%d threads a block)\n", g->k->name, c.T);
	fprintf(fp, "schedule %s as auto for cuda {\n", g->k->name);
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (!s->output && s->kind == AK_PURE && !s->in_index && s->ncons > 0 &&
		    !read_in_special(&c, i)) {
			c.inl[i] = true;
			fprintf(fp, "  // G1: %s inlined\n  %s.compute_inline();\n", s->name, s->name);
		}
	}
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (c.inl[i])
			continue;
		if (s->kind == AK_SPECIAL) {
			/* a tuple reduction or a triangular range: each thread folds
			 * its points' range in order */
			fprintf(fp, "  // G0: %s (a tuple reduction or a triangular range): its points "
			    "over blocks of threads, each range folded in order\n", s->name);
			bind_flat(&c, s, NULL);
			continue;
		}
		int64_t rows = 1;
		for (int d = 0; d < s->npure; d++)
			rows *= ext_or(s->pext[d]);
		if (s->kind == AK_REDUCE && s->nred == 1 && !s->rwhere && ext_or(s->rext[0]) >= 64 &&
		    rows < 16384) {
			int T = ext_or(s->rext[0]) >= 256 ? 128 : 64;
			const char *ko = auto_fresh(g, "ko"), *ki = auto_fresh(g, "ki");
			const char *rf = auto_fresh(g, arena_printf(perm, "%s_threads", s->name));
			fprintf(fp, "  // G3: %s, a long reduction, across %d threads a row\n", s->name, T);
			fprintf(fp, "  %s.split(%s, %d) -> (%s, %s);\n", s->name, s->red[0], T, ko, ki);
			fprintf(fp, "  %s.rfactor(%s) -> %s;\n", s->name, ki, rf);
			const char *cur = s->pure[0];
			for (int d = 1; d < s->npure; d++) {
				const char *f = auto_fresh(g, "rows");
				fprintf(fp, "  %s.fuse(%s, %s) -> %s;\n", s->name, cur, s->pure[d], f);
				cur = f;
			}
			fprintf(fp, "  %s.bind(%s, blockIdx.x);\n", s->name, cur);
			fprintf(fp, "  %s.compute_at(%s, %s);\n", rf, s->name, cur);
			fprintf(fp, "  %s.bind(%s, threadIdx.x);\n", rf, ki);
			continue;
		}
		fprintf(fp, "  // G2: %s, its points spread over blocks of threads\n", s->name);
		bind_flat(&c, s, NULL);
	}
	fprintf(fp, "}\n");
	return true;
}
