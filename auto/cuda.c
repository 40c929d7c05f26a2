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
 *   G4  a contraction (one operand misses the row axis, another the
 *       column): a 64 x 64 block (32 on short axes) of 16 x 16 threads,
 *       each a 4 x 4 tile of sums in registers (cache_write(local), or in
 *       the element-wise reader's threads), the first reduction axis in
 *       steps of 8 with each input operand copied to shared memory per
 *       step (cache_read(shared), fetched by all the block's threads):
 *       the stdlib matmul's plan;
 *   G5  a contraction of f16 or bf16 operands summed in f32, in the form
 *       of the tensor-core intrinsic (intrinsics/cuda.tx, which the driver
 *       loads for the cuda target): the stdlib matmul_f16's plan, 64 x 64
 *       outputs a block of 2 x 2 warps, each 2 x 2 mma blocks of 16 x 16 x
 *       16, the operands' tiles of 32 along k in a 3-slot ring in shared
 *       memory filled by cp.async (pipeline(3)), the tile rounded up so
 *       edges need no tests; with --cuda-arch=sm_90a, where the stage is
 *       C[i, j] = sum(k) A[i, k] * B[k, j] of at least 64 x 64 x 32,
 *       Hopper's plan instead (bench/kernels/hgemm_sm90a_cuda.tx): 128 x
 *       128 outputs a block (64 on short axes), a warpgroup per 64 rows
 *       accumulating with wgmma.mma_async from swizzled tiles;
 *
 *   G6  a total (a reduction with no pure axis: the sum of a whole
 *       tensor, ONNX's ReduceMax with no axes): its inner reduction axes
 *       fused while their ranges are plain (a constant or a size), split
 *       by T, the inner part rfactored onto T threads of one block
 *       (each folds a strided share), their T partial results folded by
 *       one thread; a scalar stage of no reduction (a mean's division)
 *       runs in a thread of its own (the cuda target's one-block rule);
 *
 *   G0  a tuple reduction or a range that depends on a pure axis: its
 *       points over blocks of threads, each range folded in order.
 *
 * A kernel that cannot map gets no schedule, and the reason: a scan or an
 * update definition (cuda runs neither), a stage with no pure axis (no
 * loop to bind) other than a total G6 takes.
 */
#include <string.h>

#include "auto/auto.h"

typedef struct {
	AutoGraph *g;
	FILE *fp;
	const AutoOptions *o;
	bool *inl;                /* per stage (arena arrays of g->n) */
	bool *mma;                /* G5 fires on it */
	bool *mma_in;             /* an operand of a G5 stage: not inlined */
	bool *placed;             /* computed in another stage's thread (G4) */
	int T;
} Gpu;

/* Stage r's pure axes other than row and col (a batch) fused into one
 * loop on blockIdx.z (G4, G5); nothing when there are none. */
static void
bind_batch(Gpu *c, AutoStage *r, int row, int col)
{
	const char *z = NULL;
	for (int d = 0; d < r->npure; d++) {
		if (d == row || d == col)
			continue;
		if (!z) {
			z = r->pure[d];
			continue;
		}
		const char *f = auto_fresh(c->g, "bz");
		fprintf(c->fp, "  %s.fuse(%s, %s) -> %s;\n", r->name, z, r->pure[d], f);
		z = f;
	}
	if (z)
		fprintf(c->fp, "  %s.bind(%s, blockIdx.z);\n", r->name, z);
}

/* ---- G5: contractions on the tensor cores ------------------------------- */

typedef struct {
	Expr *a, *b;        /* the accesses: a reads the tile's rows, b its columns */
	int row, col;       /* the pure axes of the tile's rows and columns */
	Kernel *intr;       /* the intrinsic */
	Kernel *fill, *store;   /* a fragment's zeroing and its store (emit mma_fill, mma_store) */
	/* G5 on sm_90a: the warpgroup intrinsics (wgmma, its fill and store)
	 * for bm x bn blocks, where the stage takes them (else NULL) */
	Kernel *wg, *wg_fill, *wg_store;
	int bm, bn;
} Mma;

/* The tensor-core intrinsic of p (or its imports) emitted as emit for
 * cuda; for "mma" one whose first two inputs have type t. */
static Kernel *
warp_intrinsic(Program *p, const char *emit, ScalarType t, int depth)
{
	if (!p || depth > 64)
		return NULL;
	for (int i = 0; i < p->nintrinsics; i++) {
		Kernel *k = p->intrinsics[i];
		if (k && k->intr_target && !strcmp(k->intr_target, "cuda") && k->intr_emit &&
		    !strcmp(k->intr_emit, emit) && (strcmp(emit, "mma") || (k->ntensors >= 3 &&
		    k->tensors[0]->elem == t && k->tensors[1]->elem == t)))
			return k;
	}
	for (int i = 0; i < p->nimports; i++) {
		Kernel *k = p->imports[i] ? warp_intrinsic(p->imports[i]->prog, emit, t, depth + 1) :
		    NULL;
		if (k)
			return k;
	}
	return NULL;
}

/* The intrinsic of p (or its imports) called name, for cuda. */
static Kernel *
named_intrinsic(Program *p, const char *name, int depth)
{
	if (!p || depth > 64)
		return NULL;
	for (int i = 0; i < p->nintrinsics; i++) {
		Kernel *k = p->intrinsics[i];
		if (k && k->intr_target && !strcmp(k->intr_target, "cuda") && !strcmp(k->name, name))
			return k;
	}
	for (int i = 0; i < p->nimports; i++) {
		Kernel *k = p->imports[i] ? named_intrinsic(p->imports[i]->prog, name, depth + 1) :
		    NULL;
		if (k)
			return k;
	}
	return NULL;
}

/* f32(X[...]) with X of type f16 or bf16 whose indices are plain axes:
 * the access, else NULL. */
static Expr *
half_access(Expr *e)
{
	if (e->kind != EXPR_CAST || e->call.cast_to != TY_F32 || e->call.nargs != 1)
		return NULL;
	Expr *x = e->call.args[0];
	if (x->kind != EXPR_ACCESS || !x->call.tensor ||
	    (x->call.tensor->elem != TY_F16 && x->call.tensor->elem != TY_BF16))
		return NULL;
	for (int i = 0; i < x->call.nargs; i++) {
		Expr *ix = x->call.args[i];
		if (ix->kind != EXPR_NAME ||
		    (ix->id.ref != REF_PURE_AXIS && ix->id.ref != REF_RED_AXIS))
			return NULL;
	}
	return x;
}

/* The pure axes (bits) access x names, and whether it names reduction
 * axis 0 exactly once and no other axis twice. */
static bool
axes_of(Expr *x, unsigned *pure)
{
	int nk = 0;
	*pure = 0;
	for (int i = 0; i < x->call.nargs; i++) {
		Expr *ix = x->call.args[i];
		if (ix->id.ref == REF_RED_AXIS) {
			nk++;
			continue;
		}
		if (ix->id.axis < 0 || ix->id.axis >= 32 || (*pure & (1u << ix->id.axis)))
			return false;
		*pure |= 1u << ix->id.axis;
	}
	return nk == 1;
}

/* Whether access x is X[axis a, axis b] exactly (REF_RED_AXIS for k). */
static bool
two_axes(const Expr *x, RefKind ra, int a, RefKind rb, int b)
{
	if (x->call.nargs != 2)
		return false;
	const Expr *i = x->call.args[0], *j = x->call.args[1];
	return i->id.ref == ra && (ra == REF_RED_AXIS || i->id.axis == a) && j->id.ref == rb &&
	    (rb == REF_RED_AXIS || j->id.axis == b);
}

/* G5 on sm_90a (--cuda-arch=sm_90a): Hopper's warpgroup plan where the
 * contraction is C[i, j] = sum(k) A[i, k] * B[k, j] with two operands of
 * their own, no batch, and at least a 64 x 64 x 32 block (sizes not known
 * count as large): m's wg intrinsics set, else left NULL (the sm_80 plan,
 * which Hopper runs too). */
static void
wg_match(Gpu *c, AutoStage *s, Mma *m)
{
	const char *arch = c->o->cuda_arch;
	m->wg = m->wg_fill = m->wg_store = NULL;
	if (!arch || strcmp(arch, "sm_90a") || s->npure != 2 ||
	    m->a->call.tensor == m->b->call.tensor ||
	    !two_axes(m->a, REF_PURE_AXIS, m->row, REF_RED_AXIS, 0) ||
	    !two_axes(m->b, REF_RED_AXIS, 0, REF_PURE_AXIS, m->col))
		return;
	int64_t er = s->pext[m->row], ec = s->pext[m->col], ek = s->rext[0];
	if ((er > 0 && er < 64) || (ec > 0 && ec < 64) || (ek > 0 && ek < 32))
		return;
	m->bm = er > 0 && er < 128 ? 64 : 128;
	m->bn = ec > 0 && ec < 128 ? 64 : 128;
	const char *t = m->a->call.tensor->elem == TY_BF16 ? "bf16" : "f16";
	Program *p = c->o->p;
	m->wg = named_intrinsic(p, arena_printf(perm, "wgmma_64x%dx16_%s", m->bn, t), 0);
	m->wg_fill = named_intrinsic(p, arena_printf(perm, "wgmma_fill_64x%d_f32", m->bn), 0);
	m->wg_store = named_intrinsic(p, arena_printf(perm, "wgmma_store_64x%d_f32", m->bn), 0);
	if (!m->wg || !m->wg_fill || !m->wg_store)
		m->wg = m->wg_fill = m->wg_store = NULL;
}

/* Whether stage si is a contraction the tensor cores take (G5). */
static bool
g5_match(Gpu *c, int si, Mma *m)
{
	AutoStage *s = &c->g->s[si];
	Rule *r = s->t->rule;
	if (!c->o->p || s->kind != AK_REDUCE || s->nred != 1 || s->rwhere || s->npure < 2 ||
	    s->npure > 16 || s->t->elem != TY_F32 || s->rop != RED_SUM || !r ||
	    r->value->kind != EXPR_REDUCE || r->value->reduce.naxes != 1 ||
	    r->value->reduce.axes[0].lo)
		return false;
	Expr *body = r->value->reduce.body;
	if (body->kind != EXPR_BINARY || body->bin.op != OP_MUL)
		return false;
	Expr *x = half_access(body->bin.a), *y = half_access(body->bin.b);
	if (!x || !y || x->call.tensor->elem != y->call.tensor->elem)
		return false;
	unsigned px, py;
	if (!axes_of(x, &px) || !axes_of(y, &py))
		return false;
	/* the tile's axes: the last pure axis one operand names and the other
	 * does not, for each operand; the one first in the output's order
	 * gives the rows */
	int ax = -1, ay = -1;
	for (int d = 0; d < s->npure; d++) {
		if ((px & (1u << d)) && !(py & (1u << d)))
			ax = d;
		if ((py & (1u << d)) && !(px & (1u << d)))
			ay = d;
	}
	if (ax < 0 || ay < 0)
		return false;
	/* the sizes: at least one intrinsic block along each of them */
	if ((s->pext[ax] > 0 && s->pext[ax] < 16) || (s->pext[ay] > 0 && s->pext[ay] < 16) ||
	    (s->rext[0] > 0 && s->rext[0] < 16))
		return false;
	m->intr = warp_intrinsic(c->o->p, "mma", x->call.tensor->elem, 0);
	m->fill = warp_intrinsic(c->o->p, "mma_fill", TY_F32, 0);
	m->store = warp_intrinsic(c->o->p, "mma_store", TY_F32, 0);
	if (!m->intr || !m->fill || !m->store)
		return false;
	if (ax < ay) {
		m->a = x, m->b = y, m->row = ax, m->col = ay;
	} else {
		m->a = y, m->b = x, m->row = ay, m->col = ax;
	}
	wg_match(c, s, m);
	return true;
}

static int g4_consumer(Gpu *c, int si);

typedef struct {
	Tensor *t;
	bool plain;
} Plain;

static void
plain_walk(Expr *acc, bool in_index, void *ctx)
{
	Plain *w = ctx;
	if (acc->call.tensor != w->t)
		return;
	if (in_index)
		w->plain = false;
	for (int i = 0; i < acc->call.nargs; i++) {
		Expr *ix = acc->call.args[i];
		if (ix->kind != EXPR_NAME || ix->id.ref != REF_PURE_AXIS || ix->id.axis != i)
			w->plain = false;
	}
}

/* Whether stage r reads stage s only at r's own axes (C[s, i, j] reads
 * acc[s, i, j]). */
static bool
reads_plainly(AutoStage *r, AutoStage *s)
{
	Plain w = { s->t, true };
	auto_accesses(r, plain_walk, &w);
	return w.plain;
}

/* Whether an operand's shared tile (access x, 16-bit: half_access) can
 * be swizzled: its rows, x's last index across the tile, are 32, 64 or a
 * multiple of 128 bytes (flatten.c's rule).  A row along k spans the
 * step of 32 (or K where K is a smaller constant); along the tile's rows
 * or columns, bm or bn (or the extent where smaller). */
static bool
swizzle_fits(const AutoStage *s, const Mma *m, const Expr *x, int bm, int bn)
{
	const Expr *ix = x->call.args[x->call.nargs - 1];
	int64_t ext, step;
	if (ix->id.ref == REF_RED_AXIS) {
		ext = s->rext[0];
		step = 32;
	} else if (ix->id.axis == m->row) {
		ext = s->pext[m->row];
		step = bm;
	} else {
		ext = s->pext[m->col];
		step = bn;
	}
	int64_t bytes = (ext > 0 && ext < step ? ext : step) * 2;
	return bytes == 32 || bytes == 64 || (bytes >= 128 && bytes % 128 == 0);
}

/* G5's operand tiles: each operand copied to shared memory for frag at
 * its loop ko (one copy where both are one tensor), in a ring of 3
 * filled by cp.async, swizzled where swa (a) and swb (b) say. */
static void
shared_tiles(Gpu *c, const Mma *m, const char *frag, const char *ko, bool swa, bool swb)
{
	FILE *fp = c->fp;
	const char *ta = m->a->call.tensor->name, *tb = m->b->call.tensor->name;
	const char *as = auto_fresh(c->g, arena_printf(perm, "%s_shared", ta));
	fprintf(fp, "  %s.cache_read(shared, [%s]) -> %s;\n", ta, frag, as);
	const char *bs = as;
	if (tb != ta) {
		bs = auto_fresh(c->g, arena_printf(perm, "%s_shared", tb));
		fprintf(fp, "  %s.cache_read(shared, [%s]) -> %s;\n", tb, frag, bs);
	}
	const char *tiles[2] = { as, bs };
	bool sw[2] = { swa, swb };
	for (int t = 0; t < (bs != as ? 2 : 1); t++) {
		fprintf(fp, "  %s.compute_at(%s, %s);\n", tiles[t], frag, ko);
		fprintf(fp, "  %s.pipeline(3);\n", tiles[t]);
		if (sw[t])
			fprintf(fp, "  %s.swizzle();\n", tiles[t]);
	}
}

/* G5 on sm_90a, stage si (no consumer): bench/kernels/hgemm_sm90a_cuda.tx's
 * plan.  bm x bn outputs a block, a warpgroup (128 threads) for each 64
 * rows, its 64 x bn sums in registers (a warpgroup fragment), zeroed,
 * accumulated by wgmma.mma_async from the operands' shared tiles (32
 * along k, 3 slots filled by cp.async, swizzled: the rows wgmma's
 * descriptors read) and stored by the warpgroup. */
static void
g5_wgmma(Gpu *c, int si, const Mma *m)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	FILE *fp = c->fp;
	fprintf(fp, "  // G5: %s is a contraction of %s operands: Hopper's warpgroup tensor cores "
	    "(%s, sm_90a), %d x %d outputs a block of %d warpgroups, each 64 x %d with its sums in "
	    "registers, the operands' tiles of 32 along %s in shared memory, 3 slots filled by "
	    "cp.async, both swizzled\n", s->name, type_name(m->a->call.tensor->elem), m->wg->name,
	    m->bm, m->bn, m->bm / 64, m->bn, s->red[0]);
	const char *frag = auto_fresh(g, arena_printf(perm, "%s_frag", s->name));
	const char *row = s->pure[m->row], *col = s->pure[m->col];
	const char *bi = auto_fresh(g, "bi"), *bj = auto_fresh(g, "bj");
	const char *ii = auto_fresh(g, "ii"), *jj = auto_fresh(g, "jj");
	const char *wg = auto_fresh(g, "wg"), *si_ = auto_fresh(g, "si");
	fprintf(fp, "  %s.cache_write(fragment) -> %s;\n", s->name, frag);
	fprintf(fp, "  %s.tile(%s, %s, %d, %d, tail = round_up) -> (%s, %s, %s, %s);\n", s->name,
	    row, col, m->bm, m->bn, bi, bj, ii, jj);
	fprintf(fp, "  %s.split(%s, 64) -> (%s, %s);\n", s->name, ii, wg, si_);
	fprintf(fp, "  %s.reorder(%s, %s, %s, %s, %s);\n", s->name, bi, bj, wg, si_, jj);
	fprintf(fp, "  %s.bind(%s, blockIdx.y);\n", s->name, bi);
	fprintf(fp, "  %s.bind(%s, blockIdx.x);\n", s->name, bj);
	fprintf(fp, "  %s.bind(%s, threadIdx.z);\n", s->name, wg);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", s->name, si_, m->wg_store->name);
	const char *ko = auto_fresh(g, "ko"), *kk = auto_fresh(g, "kk");
	const char *kio = auto_fresh(g, "kio"), *ki = auto_fresh(g, "ki");
	fprintf(fp, "  %s.compute_at(%s, %s);\n", frag, s->name, wg);
	fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", frag, s->red[0], ko, kk);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", frag, kk, kio, ki);
	fprintf(fp, "  %s.reorder(%s, %s, %s, %s, %s);\n", frag, ko, kio, row, col, ki);
	fprintf(fp, "  %s.unroll(%s);\n", frag, kio);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", frag, row, m->wg_fill->name);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", frag, row, m->wg->name);
	shared_tiles(c, m, frag, ko, true, true);
	c->placed[si] = true;
}

/* G5 on stage si; R: its element-wise consumer the sums go into (si when
 * none).  issue 34's plan: the sums of a warp's 32 x 32 in its registers
 * (a fragment), zeroed, accumulated and stored by the tensor cores; the
 * operands' tiles of 32 along k in shared memory, 3 slots filled two steps
 * ahead by asynchronous copies (pipeline(3)), their rows swizzled where
 * their length allows (swizzle(): ldmatrix's 8 rows in distinct banks
 * without padding).  With a
 * consumer the sums are stored to shared memory at the consumer's block,
 * where its threads read them. */
static void
g5(Gpu *c, int si, const Mma *m, int R)
{
	AutoGraph *g = c->g;
	if (R == si && m->wg) {
		g5_wgmma(c, si, m);
		return;
	}
	AutoStage *s = &g->s[si];
	AutoStage *r = &g->s[R];
	FILE *fp = c->fp;
	int64_t er = s->pext[m->row] > 0 ? s->pext[m->row] : AUTO_REP_SIZE;
	int64_t ec = s->pext[m->col] > 0 ? s->pext[m->col] : AUTO_REP_SIZE;
	int bm = er >= 64 ? 64 : 32, bn = ec >= 64 ? 64 : 32;
	fprintf(fp, "  // G5: %s is a contraction of %s operands: the tensor cores (%s), "
	    "%d x %d outputs a block of %d x %d warps, each 2 x 2 blocks of 16 x 16 x 16 with "
	    "its sums in registers (a fragment), the operands' tiles of 32 along %s "
	    "in shared memory, 3 slots filled by cp.async", s->name, type_name(m->a->call.tensor->elem),
	    m->intr->name, bm, bn, bm / 32, bn / 32, s->red[0]);
	bool swa = swizzle_fits(s, m, m->a, bm, bn), swb = swizzle_fits(s, m, m->b, bm, bn);
	if (swa || swb)
		fprintf(fp, ", %s", swa && swb ? "both swizzled" : swa ? "a's swizzled" : "b's swizzled");
	if (R != si)
		fprintf(fp, "; the sums stored to shared memory for %s's threads", r->name);
	fputc('\n', fp);
	const char *frag = auto_fresh(g, arena_printf(perm, "%s_frag", s->name));
	/* the block: tiles of R (s itself, or the consumer) */
	const char *row = r->pure[m->row], *col = r->pure[m->col];
	const char *bi = auto_fresh(g, "bi"), *bj = auto_fresh(g, "bj");
	const char *ii = auto_fresh(g, "ii"), *jj = auto_fresh(g, "jj");
	if (R != si)
		fprintf(fp, "  %s.set_scope(shared);\n", s->name);
	else   /* before the tile: the fragment has the stage's own axes */
		fprintf(fp, "  %s.cache_write(fragment) -> %s;\n", s->name, frag);
	fprintf(fp, "  %s.tile(%s, %s, %d, %d, tail = round_up) -> (%s, %s, %s, %s);\n", r->name,
	    row, col, bm, bn, bi, bj, ii, jj);
	/* the other pure axes outermost, fused, on blockIdx.z */
	if (r->npure > 2) {
		fprintf(fp, "  %s.reorder(", r->name);
		for (int d = 0; d < r->npure; d++)
			if (d != m->row && d != m->col)
				fprintf(fp, "%s, ", r->pure[d]);
		fprintf(fp, "%s, %s, %s, %s);\n", bi, bj, ii, jj);
		bind_batch(c, r, m->row, m->col);
	}
	fprintf(fp, "  %s.bind(%s, blockIdx.y);\n", r->name, bi);
	fprintf(fp, "  %s.bind(%s, blockIdx.x);\n", r->name, bj);
	/* the warps' stores of the sums: s's own loops over the block's tile */
	const char *srow = row, *scol = col;
	if (R != si) {
		fprintf(fp, "  %s.compute_at(%s, %s);\n", s->name, r->name, bj);
		srow = s->pure[m->row];
		scol = s->pure[m->col];
	} else {
		srow = ii;
		scol = jj;
	}
	if (R != si)
		fprintf(fp, "  %s.cache_write(fragment) -> %s;\n", s->name, frag);
	const char *wi = auto_fresh(g, "wi"), *mi = auto_fresh(g, "mi");
	const char *wj = auto_fresh(g, "wj"), *nj = auto_fresh(g, "nj");
	const char *sm = auto_fresh(g, "sm"), *sr = auto_fresh(g, "sr");
	const char *sn = auto_fresh(g, "sn"), *sc = auto_fresh(g, "sc");
	fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", s->name, srow, wi, mi);
	fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", s->name, scol, wj, nj);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", s->name, mi, sm, sr);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", s->name, nj, sn, sc);
	fprintf(fp, "  %s.reorder(%s, %s, %s, %s, %s, %s);\n", s->name, wi, wj, sm, sn, sr, sc);
	fprintf(fp, "  %s.bind(%s, threadIdx.z);\n", s->name, wi);
	fprintf(fp, "  %s.bind(%s, threadIdx.y);\n", s->name, wj);
	fprintf(fp, "  %s.unroll(%s);\n", s->name, sm);
	fprintf(fp, "  %s.unroll(%s);\n", s->name, sn);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", s->name, sr, m->store->name);
	/* the sums: a warp's 32 x 32 fragment, 2 x 2 intrinsic blocks */
	const char *tm = auto_fresh(g, "tm"), *ti = auto_fresh(g, "ti");
	const char *tn = auto_fresh(g, "tn"), *tj = auto_fresh(g, "tj");
	const char *ko = auto_fresh(g, "ko"), *kk = auto_fresh(g, "kk");
	const char *kio = auto_fresh(g, "kio"), *ki = auto_fresh(g, "ki");
	fprintf(fp, "  %s.compute_at(%s, %s);\n", frag, s->name, wj);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", frag, s->pure[m->row], tm, ti);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", frag, s->pure[m->col], tn, tj);
	fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", frag, s->red[0], ko, kk);
	fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", frag, kk, kio, ki);
	fprintf(fp, "  %s.reorder(%s, %s, %s, %s, %s, %s, %s);\n", frag, ko, kio, tm, tn, ti, tj, ki);
	fprintf(fp, "  %s.unroll(%s);\n", frag, kio);
	fprintf(fp, "  %s.unroll(%s);\n", frag, tm);
	fprintf(fp, "  %s.unroll(%s);\n", frag, tn);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", frag, ti, m->fill->name);
	fprintf(fp, "  %s.tensorize(%s, %s);\n", frag, ti, m->intr->name);
	shared_tiles(c, m, frag, ko, swa, swb);
	if (R != si) {
		/* the consumer: the same warps, a warp's 32 lanes along a row */
		const char *iz = auto_fresh(g, "iz"), *ir = auto_fresh(g, "ir");
		const char *iy = auto_fresh(g, "iy"), *is = auto_fresh(g, "is");
		const char *jo = auto_fresh(g, "jo"), *jx = auto_fresh(g, "jx");
		fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", r->name, ii, iz, ir);
		fprintf(fp, "  %s.split(%s, 16) -> (%s, %s);\n", r->name, ir, iy, is);
		fprintf(fp, "  %s.split(%s, 32) -> (%s, %s);\n", r->name, jj, jo, jx);
		fprintf(fp, "  %s.reorder(%s, %s, %s, %s, %s);\n", r->name, iz, iy, is, jo, jx);
		fprintf(fp, "  %s.bind(%s, threadIdx.z);\n", r->name, iz);
		fprintf(fp, "  %s.bind(%s, threadIdx.y);\n", r->name, iy);
		fprintf(fp, "  %s.bind(%s, threadIdx.x);\n", r->name, jx);
	}
	c->placed[si] = c->placed[R] = true;
}

/* ---- G4: contractions ------------------------------------------------------ */

typedef struct {
	Tensor *t;            /* an input operand */
	const char *reader;   /* the stage whose rule reads it (the contraction or an inlined one) */
	bool miss_row, miss_col;
} Operand;

typedef struct {
	Operand op[8];
	int n;
	bool bad;
} Operands;

typedef struct {
	Gpu *c;
	Operands *o;
	const char *reader;
	int row, col;         /* the contraction's pure axes (indices into the reader's, when direct) */
	bool direct;
} OpWalk;

static void op_walk(Expr *acc, bool in_index, void *ctx);

/* The input operands of stage si, through inlined stages. */
static void
operands(Gpu *c, int si, Operands *o, int row, int col, bool direct, const char *reader)
{
	OpWalk w = { c, o, reader, row, col, direct };
	auto_accesses(&c->g->s[si], op_walk, &w);
}

static bool
uses(Expr *acc, int d)
{
	for (int i = 0; i < acc->call.nargs; i++)
		if (auto_coeff(acc->call.args[i], true, d) != 0)
			return true;
	return false;
}

static void
op_walk(Expr *acc, bool in_index, void *ctx)
{
	OpWalk *w = ctx;
	Tensor *t = acc->call.tensor;
	if (in_index || !t) {
		w->o->bad = true;
		return;
	}
	int p = auto_stage_index(w->c->g, t);
	if (p >= 0) {
		if (!w->c->inl[p] || !w->direct) {
			w->o->bad = true;   /* a stage of its own, or two levels of inlining */
			return;
		}
		/* an inlined stage: its reads, the row and column axes followed
		 * to the inlined stage's own axes where the access names them
		 * (wt[k, j]: j is wt's axis 1), or missed where it does not use
		 * them */
		if (acc->call.nargs != w->c->g->s[p].npure) {
			w->o->bad = true;
			return;
		}
		int in[2] = { w->row, w->col };
		for (int q = 0; q < 2; q++) {
			int a = in[q];
			if (a < 0)
				continue;
			if (!uses(acc, a)) {
				in[q] = -2;
				continue;
			}
			/* the one index that uses the axis, with stride 1 (w + rx) */
			in[q] = -1;
			int nuse = 0;
			for (int d = 0; d < acc->call.nargs; d++) {
				int64_t k = auto_coeff(acc->call.args[d], true, a);
				if (k != 0)
					nuse++;
				if (k == 1)
					in[q] = d;
			}
			if (nuse != 1)
				in[q] = -1;
			if (in[q] < 0) {
				w->o->bad = true;
				return;
			}
		}
		operands(w->c, p, w->o, in[0], in[1], false, w->c->g->s[p].name);
		return;
	}
	for (int i = 0; i < w->o->n; i++)
		if (w->o->op[i].t == t && w->o->op[i].reader == w->reader)
			return;
	if (w->o->n >= 8) {
		w->o->bad = true;
		return;
	}
	Operand *op = &w->o->op[w->o->n++];
	op->t = t;
	op->reader = w->reader;
	op->miss_row = w->row == -2 || (w->row >= 0 && !uses(acc, w->row));
	op->miss_col = w->col == -2 || (w->col >= 0 && !uses(acc, w->col));
}

/* The contraction's block and thread tiles, or false. */
static bool
g4_plan(Gpu *c, int si, int *row, Operands *o)
{
	AutoStage *s = &c->g->s[si];
	if (s->kind != AK_REDUCE || s->rwhere || s->npure < 2 || s->nred < 1)
		return false;
	int col = s->npure - 1;
	memset(o, 0, sizeof *o);
	/* the row axis: one an operand misses, while another misses the
	 * column; first one that the operands read along the column miss (B
	 * of a matmul misses i; a convolution's image misses k) */
	for (int pass = 0; pass < 2; pass++)
	for (int r = s->npure - 2; r >= 0; r--) {
		memset(o, 0, sizeof *o);
		operands(c, si, o, r, col, true, s->name);
		if (o->bad)
			return false;
		bool mr = false, mc = false;
		for (int i = 0; i < o->n; i++) {
			mr |= o->op[i].miss_row && (pass == 1 || !o->op[i].miss_col);
			mc |= o->op[i].miss_col;
		}
		if (mr && mc && (s->pext[r] <= 0 || s->pext[r] >= 16) &&
		    (s->pext[col] <= 0 || s->pext[col] >= 16)) {
			*row = r;
			return true;
		}
	}
	return false;
}

/* The element-wise consumer of si a contraction's tile goes into: its one
 * reader, not inlined, reading it at its own axes; -1 if none. */
static int
g4_consumer(Gpu *c, int si)
{
	AutoStage *s = &c->g->s[si];
	if (s->output || s->ncons != 1)
		return -1;
	int ci = s->cons[0];
	AutoStage *r = &c->g->s[ci];
	if (c->inl[ci] || r->kind != AK_PURE || r->npure != s->npure)
		return -1;
	return ci;
}

static void
g4(Gpu *c, int si, int row, Operands *o, int R)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	AutoStage *r = &g->s[R];
	FILE *fp = c->fp;
	int col = s->npure - 1;
	int64_t er = s->pext[row] > 0 ? s->pext[row] : AUTO_REP_SIZE;
	int64_t ec = s->pext[col] > 0 ? s->pext[col] : AUTO_REP_SIZE;
	int bm = er >= 64 ? 64 : 32, bn = ec >= 64 ? 64 : 32;
	const char *L;
	if (R == si) {
		L = auto_fresh(g, arena_printf(perm, "%s_local", s->name));
		fprintf(fp, "  // G4: %s is a contraction: %d x %d blocks of %d x %d threads, each a "
		    "4 x 4 tile of sums in registers, operands in shared memory\n", s->name, bm, bn,
		    bm / 4, bn / 4);
		fprintf(fp, "  %s.cache_write(local) -> %s;\n", s->name, L);
	} else {
		L = s->name;
		fprintf(fp, "  // G4: %s, a contraction, computed in the threads of %s: %d x %d "
		    "blocks, 4 x 4 sums a thread, operands in shared memory\n", s->name, r->name,
		    bm, bn);
	}
	const char *ro = auto_fresh(g, "by"), *co = auto_fresh(g, "bx");
	const char *ri = auto_fresh(g, "rows"), *ci = auto_fresh(g, "cols");
	const char *ty = auto_fresh(g, "ty"), *tx = auto_fresh(g, "tx");
	const char *rr = auto_fresh(g, "rr"), *rc = auto_fresh(g, "rc");
	fprintf(fp, "  %s.tile(%s, %s, %d, %d, tail = round_up) -> (%s, %s, %s, %s);\n", r->name,
	    r->pure[row], r->pure[col], bm, bn, ro, co, ri, ci);
	fprintf(fp, "  %s.split(%s, 4) -> (%s, %s);\n", r->name, ri, ty, rr);
	fprintf(fp, "  %s.split(%s, 4) -> (%s, %s);\n", r->name, ci, tx, rc);
	/* the other pure axes outermost, then fused, on blockIdx.z */
	fprintf(fp, "  %s.reorder(", r->name);
	for (int d = 0; d < r->npure; d++)
		if (d != row && d != col)
			fprintf(fp, "%s, ", r->pure[d]);
	fprintf(fp, "%s, %s, %s, %s, %s, %s);\n", ro, co, ty, tx, rr, rc);
	bind_batch(c, r, row, col);
	fprintf(fp, "  %s.bind(%s, blockIdx.y);\n", r->name, ro);
	fprintf(fp, "  %s.bind(%s, blockIdx.x);\n", r->name, co);
	fprintf(fp, "  %s.bind(%s, threadIdx.y);\n", r->name, ty);
	fprintf(fp, "  %s.bind(%s, threadIdx.x);\n", r->name, tx);
	fprintf(fp, "  %s.unroll(%s);\n", r->name, rr);
	fprintf(fp, "  %s.unroll(%s);\n", r->name, rc);
	fprintf(fp, "  %s.compute_at(%s, %s);\n", L, r->name, tx);
	const char *ko = auto_fresh(g, "ko"), *ki = auto_fresh(g, "ki");
	fprintf(fp, "  %s.split(%s, 8) -> (%s, %s);\n", L, s->red[0], ko, ki);
	fprintf(fp, "  %s.reorder(%s, %s", L, ko, ki);
	for (int k = 1; k < s->nred; k++)
		fprintf(fp, ", %s", s->red[k]);
	fprintf(fp, ", %s, %s);\n", s->pure[row], s->pure[col]);
	fprintf(fp, "  %s.unroll(%s);\n", L, s->pure[row]);
	fprintf(fp, "  %s.unroll(%s);\n", L, s->pure[col]);
	for (int i = 0; i < o->n; i++) {
		const char *reader = o->op[i].reader == s->name ? L : o->op[i].reader;
		const char *sh = auto_fresh(g, arena_printf(perm, "%s_shared", o->op[i].t->name));
		fprintf(fp, "  %s.cache_read(shared, [%s]) -> %s;\n", o->op[i].t->name, reader, sh);
		fprintf(fp, "  %s.compute_at(%s, %s);\n", sh, L, ko);
	}
	c->placed[si] = true;
}

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
		total = auto_mul(total, ext_or(s->pext[d]));
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

/* G6 takes stage s: a plain total, or a scalar of no reduction */
static bool
g6_total(const AutoStage *s)
{
	return s->npure == 0 && ((s->kind == AK_REDUCE && s->nred > 0 && !s->rwhere) ||
	    (s->kind == AK_PURE && s->nred == 0));
}

/* G6 on a total: one block of threads, each folding a strided share */
static void
g6(Gpu *c, AutoStage *s)
{
	if (s->nred == 0) {
		fprintf(c->fp, "  // G6: %s, a scalar, in one thread\n", s->name);
		return;
	}
	fprintf(c->fp, "  // G6: %s, a total, over the threads of one block\n", s->name);
	/* the innermost axis, and the axes around it while their ranges are
	 * plain (a fused range of other extents defeats bounds inference) */
	int d = s->nred - 1;
	const char *cur = s->red[d];
	int64_t total = ext_or(s->rext[d]);
	while (d > 0 && s->rplain[d] && s->rplain[d - 1]) {
		d--;
		const char *f = auto_fresh(c->g, "all");
		fprintf(c->fp, "  %s.fuse(%s, %s) -> %s;\n", s->name, s->red[d], cur, f);
		cur = f;
		total = auto_mul(total, ext_or(s->rext[d]));
	}
	int T = c->T;
	while (T > 32 && total < 4 * (int64_t)T)
		T /= 2;
	const char *ko = auto_fresh(c->g, "ko"), *ki = auto_fresh(c->g, "ki");
	const char *rf = auto_fresh(c->g, arena_printf(perm, "%s_threads", s->name));
	fprintf(c->fp, "  %s.split(%s, %d) -> (%s, %s);\n", s->name, cur, T, ko, ki);
	fprintf(c->fp, "  %s.rfactor(%s) -> %s;\n", s->name, ki, rf);
	fprintf(c->fp, "  %s.bind(%s, threadIdx.x);\n", rf, ki);
}

/* G1: an element-wise stage is computed in its readers' threads. */
static bool
g1_inlines(Gpu *c, int i)
{
	AutoStage *s = &c->g->s[i];
	return !s->output && s->kind == AK_PURE && !s->in_index && s->ncons > 0 && !s->fixed &&
	    !s->keep && !c->mma_in[i] && !read_in_special(c, i);
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
	c.inl = arena_alloc(perm, sizeof *c.inl * (size_t)(g->n + 1));
	c.placed = arena_alloc(perm, sizeof *c.placed * (size_t)(g->n + 1));
	c.mma = arena_alloc(perm, sizeof *c.mma * (size_t)(g->n + 1));
	c.mma_in = arena_alloc(perm, sizeof *c.mma_in * (size_t)(g->n + 1));
	/* what has no loop to bind cannot run in a kernel: say so */
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (s->fixed) {
			c.placed[i] = true;   /* a called kernel's own schedule (transfer.c) */
			continue;
		}
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
		/* a scalar G1 inlines (PyTorch's float(h * w) before a mean)
		 * needs no loop of its own */
		if (s->npure == 0 && !g1_inlines(&c, i) && !g6_total(s)) {
			o->why[0] = arena_printf(perm, "'%s' has no pure axis: a total has no loop to "
			    "bind to GPU blocks (compute it on the cpu, or give it a dimension of "
			    "extent 1)", s->name);
			return false;
		}
	}
	fprintf(fp, "// txc-auto v1: %s for cuda (%d threads a block)\n", g->k->name, c.T);
	fprintf(fp, "schedule %s as auto for cuda {\n", g->k->name);
	if (o->prelude)
		fputs(o->prelude, fp);
	/* G5 first: its operands stay stages of their own (the tensor cores
	 * read them as they are, through shared memory) */
	Mma *mm = arena_alloc(perm, sizeof *mm * (size_t)(g->n + 1));
	for (int i = 0; i < g->n; i++) {
		if (g->s[i].fixed || !g5_match(&c, i, &mm[i]))
			continue;
		c.mma[i] = true;
		int pa = auto_stage_index(g, mm[i].a->call.tensor);
		int pb = auto_stage_index(g, mm[i].b->call.tensor);
		if (pa >= 0)
			c.mma_in[pa] = true;
		if (pb >= 0)
			c.mma_in[pb] = true;
	}
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (g1_inlines(&c, i)) {
			c.inl[i] = true;
			fprintf(fp, "  // G1: %s inlined\n  %s.compute_inline();\n", s->name, s->name);
		}
	}
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (c.inl[i] || c.placed[i])
			continue;
		if (c.mma[i]) {
			g5(&c, i, &mm[i], i);
			continue;
		}
		if (g6_total(s)) {
			g6(&c, s);
			continue;
		}
		/* G5 with its element-wise consumer: the sums go into its threads */
		if (s->kind == AK_PURE) {
			int p = i - 1;
			while (p >= 0 && !(c.mma[p] && !c.placed[p] && g4_consumer(&c, p) == i &&
			    reads_plainly(s, &g->s[p])))
				p--;
			if (p >= 0) {
				g5(&c, p, &mm[p], i);
				continue;
			}
		}
		/* G4: a contraction whose element-wise reader is this stage */
		if (s->kind == AK_PURE) {
			bool done = false;
			for (int p = i - 1; p >= 0 && !done; p--) {
				int row;
				Operands ops;
				if (!c.inl[p] && !c.placed[p] && !c.mma[p] && g4_consumer(&c, p) == i &&
				    g4_plan(&c, p, &row, &ops)) {
					g4(&c, p, row, &ops, i);
					done = true;
				}
			}
			if (done)
				continue;
		}
		if (s->kind == AK_REDUCE) {
			int row;
			Operands ops;
			if (g4_plan(&c, i, &row, &ops)) {
				g4(&c, i, row, &ops, i);
				continue;
			}
		}
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
			rows = auto_mul(rows, ext_or(s->pext[d]));
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
