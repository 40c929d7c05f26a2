/* intrin_cpu.c: the CPU intrinsics of stdlib/intrinsics/cpu.tx, emitted
 * as LLVM vector code (the "how" half of the tensorize table).
 *
 * fma_outer(mr, nr, K, c, cs_i, cs_j, a, as_i, as_k, b, bs_k, bs_j, first,
 * MR, NR): c[mr x nr] += a[mr x K] * b[K x nr] for a block of at most the
 * constant MR x NR, with cs_j = bs_j = 1 (tensorize.c checked); when
 * `first` is non-zero c's old values are not used
 * (tensorize.c's reset form).  The sum lives in MR * NR/W vector
 * registers (phis of the k loop, so they never go through memory) that
 * start from zero; each k step loads NR/W vectors of b, broadcasts MR
 * elements of a and issues the fused multiply-adds.  W, the f32 lanes of
 * a vector, is the call's: 8 for "fma_outer" (AVX2's ymm), 16 for
 * "fma_outer_zmm" (AVX-512's zmm, whose kernels ask LLVM to keep 512-bit
 * vectors whole); one emitter builds both.  c's lines are
 * prefetched on entry and its old values added after the k loop, so a
 * block of c that is not in cache does not stall the start; c is stored
 * once at the end.  Each tensor argument is a scalar load at the tile's first
 * element: its address is what is passed.
 *
 * The micro-kernel is one internal function per shape (txc.fma_outer.MRxNR,
 * noinline), called from every place the nest uses it, so LLVM optimises
 * and selects its instructions once however often the loop nest (and
 * partition.c's copies of it) calls it.  For the common shapes and
 * strides libtxrt has a prebuilt copy (txrt_fma_outer_..., written by
 * txc --runtime-kernels, see rt_shapes below), which the module calls
 * instead when Cg.runtime_kernels says the target can run it.
 * Inside, the micro-kernel picks one of:
 *   - the full block (extents MR and NR), k unrolled by 4;
 *   - full columns and 1..MR-1 rows (the bottom edge, and M = 1): a copy
 *     of the kernel per row count, plain loads, and for one or two rows
 *     two or four interleaved sets of accumulators so that the FMA
 *     latency stays hidden;
 *   - otherwise the masked kernel: rows past mr re-read a's last valid
 *     row and are never stored, columns past nr are masked off in every
 *     load of b and c and in the stores (llvm.masked.load/store:
 *     vmaskmovps), so no element outside the block is touched.
 * At the edges of C, tensorize.c passes mr and nr as max(min(6, M - i0), 0)
 * and the like, and the block's full size as the last two arguments (the
 * simplifier drops the min where the sizes are constants that make it
 * redundant).
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

/* accumulators (14 x 32 in zmm: 28), rows, interleaved sets, k unroll */
enum { MAXACC = 32, MAXSET = 4, UNROLL = 4 };

typedef struct {
	LLVMTypeRef f32, vt, i64, i1, ptr;   /* vt: <lanes x float> */
	int lanes;              /* f32 lanes of a vector register: 8 (ymm) or 16 (zmm) */
	int mr, nv;             /* register rows and vectors per row */
	int sets;               /* interleaved accumulator sets (1, 2 or 4) */
	LLVMValueRef c, a, b, csi, asi, ask, bsk, first;
	/* the masked kernel: a's row per register row, the lane masks of b
	 * (NULL: plain loads) and of c per row */
	LLVMValueRef arow[MAXACC], bmask[MAXACC], cmask[MAXACC][MAXACC];
	bool masked;
	/* c transposed (ctrans_store): csi is then c's column stride, its
	 * rows contiguous; rowvalid: the masked kernel's rows below mr */
	bool ctrans;
	LLVMValueRef rowvalid;
	/* taps (lower/ir.h): the k loop runs inside tap loops, outermost
	 * first, each moving a and b by its strides */
	IntrinTaps taps;
} Fma;

static LLVMValueRef
vload(Cg *cg, Fma *f, LLVMValueRef p, LLVMValueRef mask)
{
	return intrin_vload(cg, f->vt, p, 4, mask);
}

static void
vstore(Cg *cg, Fma *f, LLVMValueRef v, LLVMValueRef p, LLVMValueRef mask)
{
	(void)f;
	intrin_vstore(cg, v, p, 4, mask);
}

/* One k step: acc[r][v] += a[r, k] * b[k, v*W .. v*W+W-1] (W lanes). */
static void
step(Cg *cg, Fma *f, LLVMValueRef k, LLVMValueRef *acc)
{
	LLVMValueRef bv[MAXACC], fma_args[3];
	LLVMTypeRef over = f->vt;
	LLVMValueRef brow = intrin_gep(cg, f->f32, f->b, intrin_mul(cg, k, f->bsk));
	for (int v = 0; v < f->nv; v++)
		bv[v] = vload(cg, f, intrin_gep(cg, f->f32, brow, intrin_i64(cg, v * f->lanes)),
		    f->bmask[v]);
	LLVMValueRef acol = intrin_gep(cg, f->f32, f->a, intrin_mul(cg, k, f->ask));
	for (int r = 0; r < f->mr; r++) {
		LLVMValueRef ap = intrin_gep(cg, f->f32, acol, intrin_mul(cg, f->arow[r], f->asi));
		LLVMValueRef s = LLVMBuildLoad2(cg->b, f->f32, ap, "");
		LLVMSetAlignment(s, 4);
		LLVMValueRef bc = cg_broadcast(cg, s, f->lanes);
		for (int v = 0; v < f->nv; v++) {
			fma_args[0] = bc;
			fma_args[1] = bv[v];
			fma_args[2] = acc[r * f->nv + v];
			acc[r * f->nv + v] = cg_call_intrinsic(cg, "llvm.fma", &over, 1, fma_args, 3);
		}
	}
}

/* for (k = from; k + by <= end; k += by) step...  with the accumulators
 * as phis (n of them: sets of mr * nv, step u updating set u % sets);
 * acc holds the values on entry and on exit. */
static void
kloop(Cg *cg, Fma *f, LLVMValueRef from, LLVMValueRef end, int by, LLVMValueRef *acc,
    LLVMValueRef *kout)
{
	int per = f->mr * f->nv, n = per * f->sets;
	IntrinLoop l;
	intrin_loop_open(cg, &l, "k", from, acc, n);
	LLVMValueRef k = l.iv, last = LLVMBuildAdd(cg->b, k, intrin_i64(cg, by), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, last, end, ""), l.body, l.exit);
	LLVMPositionBuilderAtEnd(cg->b, l.body);
	LLVMValueRef cur[MAXACC * MAXSET];
	memcpy(cur, l.phis, sizeof(LLVMValueRef) * (size_t)n);
	for (int u = 0; u < by; u++)
		step(cg, f, LLVMBuildAdd(cg->b, k, intrin_i64(cg, u), ""),
		    cur + per * (u % f->sets));
	intrin_loop_close(cg, &l, last, cur, acc);
	*kout = k;
}

/* The reduction inside the taps (intrin_taps' body): k from 0 to K (by
 * `by` steps, then one at a time) with a and b where the taps put them. */
typedef struct {
	Fma *f;
	LLVMValueRef K;
	int by;
} Sweep;

static void
sweep_body(Cg *cg, void *ctx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *acc)
{
	Sweep *w = ctx;
	Fma *f = w->f;
	LLVMValueRef k, a0 = f->a, b0 = f->b;
	f->a = a;
	f->b = b;
	kloop(cg, f, intrin_i64(cg, 0), w->K, w->by, acc, &k);
	if (w->by > 1) {
		int sets = f->sets;
		f->sets = 1;
		kloop(cg, f, k, w->K, 1, acc, &k);
		f->sets = sets;
	}
	f->a = a0;
	f->b = b0;
}

/* The whole reduction into acc: sweep_body inside the tap loops (the
 * accumulators phis of each). */
static void
ksweep(Cg *cg, Fma *f, LLVMValueRef K, int by, LLVMValueRef *acc)
{
	Sweep w = { f, K, by };
	intrin_taps(cg, &f->taps, f->a, f->b, acc, f->mr * f->nv * f->sets, sweep_body, &w);
}

/* Asks for the lines of c's block at the start of the kernel: they arrive
 * while the k loop runs, and c is only read after it (finish), so a block
 * of c that is not in cache costs no stall.  A prefetch never faults, so
 * the lines past a masked edge are harmless. */
static void
prefetch_c(Cg *cg, Fma *f, LLVMValueRef *cptr)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), over = LLVMTypeOf(f->c);
	for (int r = 0; r < f->mr; r++)
		for (int v = 0; v < f->nv; v++) {
			LLVMValueRef args[4] = { cptr[r * f->nv + v], LLVMConstInt(i32, 1, 0),
			    LLVMConstInt(i32, 3, 0), LLVMConstInt(i32, 1, 0) };
			cg_call_intrinsic(cg, "llvm.prefetch", &over, 1, args, 4);
		}
}

/* The n sums in acc started from zero; unless f->first holds (the reset
 * form), c's values (at ptr[i] under mask[i]) are added to them now. */
static void
finish(Cg *cg, Fma *f, int n, LLVMValueRef *acc, LLVMValueRef *ptr, LLVMValueRef *mask)
{
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef load = intrin_block(cg, "cload"), join = intrin_block(cg, "cstore");
	LLVMBuildCondBr(cg->b, f->first, join, load);
	LLVMPositionBuilderAtEnd(cg->b, load);
	LLVMValueRef sum[MAXACC * 16];
	for (int i = 0; i < n; i++)
		sum[i] = LLVMBuildFAdd(cg->b, vload(cg, f, ptr[i], mask[i]), acc[i], "");
	LLVMBasicBlockRef load_end = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, join);
	LLVMPositionBuilderAtEnd(cg->b, join);
	for (int i = 0; i < n; i++) {
		LLVMValueRef phi = LLVMBuildPhi(cg->b, f->vt, "c");
		LLVMValueRef in[2] = { acc[i], sum[i] };
		LLVMBasicBlockRef from[2] = { pre, load_end };
		LLVMAddIncoming(phi, in, from, 2);
		acc[i] = phi;
	}
}

/* m[0..w) transposed in registers (w = 8 or 16 lanes): rows i and i + b
 * swap their off-diagonal b x b blocks for b = w/2 .. 1, one two-input
 * shuffle a row and step (vpermt2ps on AVX-512). */
static void
transpose(Cg *cg, LLVMValueRef *m, unsigned w)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	for (unsigned b = w / 2; b >= 1; b /= 2)
		for (unsigned i = 0; i < w; i++) {
			if (i & b)
				continue;
			LLVMValueRef lo[16], hi[16];
			for (unsigned l = 0; l < w; l++) {
				lo[l] = LLVMConstInt(i32, (l & b) ? w + l - b : l, 0);
				hi[l] = LLVMConstInt(i32, (l & b) ? w + l : l + b, 0);
			}
			LLVMValueRef A = m[i], B = m[i + b];
			m[i] = LLVMBuildShuffleVector(cg->b, A, B, LLVMConstVector(lo, w), "");
			m[i + b] = LLVMBuildShuffleVector(cg->b, A, B, LLVMConstVector(hi, w), "");
		}
}

/* The block's sums into a c stored transposed (f->ctrans: c[i, j] at c +
 * i + j * csi): the rows (at most a vector's lanes) become one vector a
 * column, lanes past the block's rows off; unless f->first, c's column is
 * loaded under the same mask and added; then stored. */
static void
ctrans_store(Cg *cg, Fma *f, LLVMValueRef *acc)
{
	unsigned w = (unsigned)f->lanes;
	LLVMValueRef lane[16], cols[MAXACC * 16], ptr[MAXACC * 16], mask[MAXACC * 16];
	for (unsigned l = 0; l < w; l++)
		lane[l] = LLVMConstInt(f->i1, l < (unsigned)f->mr, 0);
	LLVMValueRef rows = LLVMConstVector(lane, w);
	if (f->rowvalid)
		rows = LLVMBuildAnd(cg->b, rows, f->rowvalid, "");
	int n = 0;
	for (int v = 0; v < f->nv; v++) {
		LLVMValueRef m[16];
		for (unsigned i = 0; i < w; i++)
			m[i] = (int)i < f->mr ? acc[i * f->nv + v] : LLVMConstNull(f->vt);
		transpose(cg, m, w);
		for (unsigned l = 0; l < w; l++, n++) {
			LLVMValueRef j = intrin_i64(cg, v * f->lanes + (int)l);
			ptr[n] = intrin_gep(cg, f->f32, f->c,
			    LLVMBuildAdd(cg->b, f->arow[0], intrin_mul(cg, j, f->csi), ""));
			mask[n] = rows;
			if (f->bmask[v]) {   /* column j inside the block's nr */
				LLVMValueRef on = LLVMBuildExtractElement(cg->b, f->bmask[v],
				    LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), l, 0), "");
				mask[n] = LLVMBuildAnd(cg->b, rows, cg_broadcast(cg, on, f->lanes), "");
			}
			cols[n] = m[l];
		}
	}
	finish(cg, f, n, cols, ptr, mask);
	for (int i = 0; i < n; i++)
		vstore(cg, f, cols[i], ptr[i], mask[i]);
}

/* The kernel body for the masks and rows set in f: prefetch c, run k (by
 * `by` steps, then one at a time) from zero, add c, store. */
static void
block(Cg *cg, Fma *f, LLVMValueRef K, int by)
{
	int per = f->mr * f->nv;
	LLVMValueRef acc[MAXACC * MAXSET], cptr[MAXACC];
	for (int r = 0; r < f->mr; r++)
		for (int v = 0; v < f->nv; v++) {
			LLVMValueRef row = intrin_gep(cg, f->f32, f->c,
			    intrin_mul(cg, f->arow[r], f->csi));
			cptr[r * f->nv + v] = intrin_gep(cg, f->f32, row,
			    intrin_i64(cg, v * f->lanes));
		}
	if (!f->ctrans)
		prefetch_c(cg, f, cptr);
	for (int i = 0; i < per * f->sets; i++)
		acc[i] = LLVMConstNull(f->vt);
	ksweep(cg, f, K, by, acc);
	for (int s = 1; s < f->sets; s++)
		for (int i = 0; i < per; i++)
			acc[i] = LLVMBuildFAdd(cg->b, acc[i], acc[s * per + i], "");
	if (f->ctrans) {
		ctrans_store(cg, f, acc);
		return;
	}
	LLVMValueRef cmask[MAXACC];
	for (int i = 0; i < per; i++)
		cmask[i] = f->cmask[i / f->nv][i % f->nv];
	finish(cg, f, per, acc, cptr, cmask);
	for (int r = 0; r < f->mr; r++)
		for (int v = 0; v < f->nv; v++)
			vstore(cg, f, acc[r * f->nv + v], cptr[r * f->nv + v], f->cmask[r][v]);
}

/* The masked kernel for runtime extents mr, nr (0 < mr <= MR, nr <= NR). */
static void
masked_block(Cg *cg, Fma *f, LLVMValueRef mr, LLVMValueRef nr, LLVMValueRef K)
{
	unsigned w = (unsigned)f->lanes;
	LLVMValueRef nrv = cg_broadcast(cg, nr, f->lanes), ones = LLVMConstAllOnes(LLVMVectorType(f->i1, w));
	LLVMValueRef last = LLVMBuildSub(cg->b, mr, intrin_i64(cg, 1), "");
	if (f->ctrans) {   /* lanes are rows there */
		LLVMValueRef lane[16];
		for (int l = 0; l < f->lanes; l++)
			lane[l] = intrin_i64(cg, l);
		f->rowvalid = LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMConstVector(lane, w),
		    cg_broadcast(cg, mr, f->lanes), "rows");
	}
	for (int v = 0; v < f->nv; v++) {
		LLVMValueRef lane[16];
		for (int l = 0; l < f->lanes; l++)
			lane[l] = intrin_i64(cg, v * f->lanes + l);
		f->bmask[v] = LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMConstVector(lane, w), nrv, "cols");
	}
	for (int r = 0; r < f->mr; r++) {
		LLVMValueRef in = LLVMBuildICmp(cg->b, LLVMIntSLT, intrin_i64(cg, r), mr, "");
		f->arow[r] = LLVMBuildSelect(cg->b, in, intrin_i64(cg, r), last, "row");
		LLVMValueRef rowm = LLVMBuildSelect(cg->b, in, ones,
		    LLVMConstNull(LLVMVectorType(f->i1, w)), "");
		for (int v = 0; v < f->nv; v++)
			f->cmask[r][v] = LLVMBuildAnd(cg->b, rowm, f->bmask[v], "");
	}
	f->masked = true;
	block(cg, f, K, 1);
}

static void
plain(Fma *f, int mr)
{
	f->mr = mr;
	f->masked = false;
	f->rowvalid = NULL;
	for (int r = 0; r < MAXACC; r++) {
		f->bmask[r] = NULL;
		for (int v = 0; v < MAXACC; v++)
			f->cmask[r][v] = NULL;
	}
}

/* The block of rows rows from row r on (f->arow[i] = r + i), with enough
 * independent accumulators to cover the FMA latency. */
static void
rows_at(Cg *cg, Fma *f, LLVMValueRef r, int rows, LLVMValueRef K)
{
	plain(f, rows);
	for (int i = 0; i < rows; i++)
		f->arow[i] = LLVMBuildAdd(cg->b, r, intrin_i64(cg, i), "");
	f->sets = rows * f->nv >= 8 ? 1 : (8 + rows * f->nv - 1) / (rows * f->nv);
	if (f->sets > MAXSET)
		f->sets = MAXSET;
	block(cg, f, K, f->sets);
	f->sets = 1;
	for (int i = 0; i < rows; i++)
		f->arow[i] = intrin_i64(cg, i);
}

/* Fewer than MR rows with full columns (the bottom edge): two rows at a
 * time, for (r = 0; r + 2 <= mr; r += 2), then the last one if mr is
 * odd.  Two copies of the kernel for every row count: a copy per count
 * cost more compile time than it gains on the edge rows, and pairs keep
 * the loads of B at one per FMA (a single row needs 3 loads per 2). */
static void
row_loop(Cg *cg, Fma *f, LLVMValueRef mr, LLVMValueRef K)
{
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef head = intrin_block(cg, "rows"), body = intrin_block(cg, "rowpair");
	LLVMBasicBlockRef exit = intrin_block(cg, "rowlast"), one = intrin_block(cg, "rowone");
	LLVMBasicBlockRef done = intrin_block(cg, "rowdone");
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, head);
	LLVMValueRef r = LLVMBuildPhi(cg->b, f->i64, "r"), zero = intrin_i64(cg, 0);
	LLVMAddIncoming(r, &zero, &pre, 1);
	LLVMValueRef next = LLVMBuildAdd(cg->b, r, intrin_i64(cg, 2), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, next, mr, ""), body, exit);
	LLVMPositionBuilderAtEnd(cg->b, body);
	rows_at(cg, f, r, 2, K);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(r, &next, &latch, 1);
	intrin_no_unroll(cg, LLVMBuildBr(cg->b, head));
	LLVMPositionBuilderAtEnd(cg->b, exit);
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, r, mr, ""), one, done);
	LLVMPositionBuilderAtEnd(cg->b, one);
	rows_at(cg, f, r, 1, K);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
}

/* The micro-kernel's name: txc.fma_outer.MRxNR (internal to the module)
 * or txrt_fma_outer_MRxNR (libtxrt's), then each stride built in, e.g.
 * txc.fma_outer.6x16.i1.k6.b16 (tags c, i, k, b: csi, asi, ask, bsk);
 * the 16-lane (zmm) kernels are txc.fma_outer_zmm.MRxNR... */
static void
kernel_name(char *name, size_t size, bool runtime, int lanes, int MR, int NR, const int64_t *cst)
{
	char sep = runtime ? '_' : '.';
	snprintf(name, size, "%sfma_outer%s%c%dx%d",
	    runtime ? CG_RUNTIME_KERNEL_PREFIX : CG_KERNEL_PREFIX, lanes == 16 ? "_zmm" : "", sep,
	    MR, NR);
	intrin_name_strides(name, size, sep, cst);
}

/* The declaration of a micro-kernel (intrin_decl), internal to the
 * module, or libtxrt's (runtime). */
static LLVMValueRef
kernel_decl(Cg *cg, const char *name, bool runtime, int lanes, LLVMTypeRef *fty, bool taps)
{
	static const char *const attrs[] = { "noinline", "nounwind", "nofree", "nosync", NULL };
	return intrin_decl_taps(cg, name, !runtime, lanes, attrs, fty, taps);
}

/* The micro-kernel MR x NR of vectors of `lanes` f32 with the strides cst
 * (-1: an argument) built in, defined in the module under its name
 * (kernel_name, then ".taps" for a kernel with tap loops, then suffix). */
static LLVMValueRef
kernel_fn(Cg *cg, int lanes, int MR, int NR, const int64_t *cst, bool runtime, LLVMTypeRef *fty,
    const char *suffix, bool taps)
{
	char name[96];
	kernel_name(name, sizeof name, runtime, lanes, MR, NR, cst);
	if (taps)
		strncat(name, ".taps", sizeof name - strlen(name) - 1);
	if (suffix)
		strncat(name, suffix, sizeof name - strlen(name) - 1);
	LLVMValueRef fn = kernel_decl(cg, name, runtime, lanes, fty, taps);
	if (LLVMCountBasicBlocks(fn))
		return fn;
	IntrinSaved saved;
	LLVMValueRef p[INTRIN_TAPS_PARAMS];
	intrin_begin(cg, &saved, fn, cst, p);
	Fma f;
	memset(&f, 0, sizeof f);
	f.f32 = LLVMFloatTypeInContext(cg->ctx);
	f.lanes = lanes;
	f.vt = LLVMVectorType(f.f32, (unsigned)lanes);
	f.i64 = LLVMInt64TypeInContext(cg->ctx);
	f.i1 = LLVMInt1TypeInContext(cg->ctx);
	f.nv = NR / lanes;
	f.sets = 1;
	f.ctrans = suffix && !strcmp(suffix, ".ct");
	f.c = p[0], f.csi = p[1], f.a = p[2], f.asi = p[3], f.ask = p[4];
	f.b = p[5], f.bsk = p[6], f.first = p[10];
	intrin_taps_params(&f.taps, f.f32, taps, p);
	LLVMValueRef K = p[7], vm = p[8], vn = p[9];
	for (int r = 0; r < MAXACC; r++)
		f.arow[r] = intrin_i64(cg, r);
	LLVMBasicBlockRef bfull = intrin_block(cg, "full"), bedge = intrin_block(cg, "edge");
	LLVMBasicBlockRef bmask = intrin_block(cg, "masked"), done = intrin_block(cg, "done");
	LLVMValueRef colsfull = LLVMBuildICmp(cg->b, LLVMIntEQ, vn, intrin_i64(cg, NR), "");
	LLVMValueRef isfull = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntEQ, vm, intrin_i64(cg, MR), ""), colsfull, "");
	LLVMBuildCondBr(cg->b, isfull, bfull, bedge);
	/* the full block */
	LLVMPositionBuilderAtEnd(cg->b, bfull);
	plain(&f, MR);
	/* k unrolled by 4, except where the block leaves under two vector
	 * registers free and holds 24 accumulators or more (14 x 32 in zmm:
	 * 28 + 2 + 1 of 32): there LLVM 19's scheduler hoists the broadcasts
	 * of later k steps and spills (95 stack accesses per 112 FMAs for
	 * skylake-avx512; none unrolled once) */
	int regs = lanes == 16 ? 32 : 16, used = MR * f.nv + f.nv + 1;
	block(cg, &f, K, regs - used < 2 && MR * f.nv >= 24 ? 1 : UNROLL);
	LLVMBuildBr(cg->b, done);
	/* an empty block does nothing; full columns: a kernel per row count */
	LLVMPositionBuilderAtEnd(cg->b, bedge);
	LLVMValueRef some = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntSGT, vm, intrin_i64(cg, 0), ""),
	    LLVMBuildICmp(cg->b, LLVMIntSGT, vn, intrin_i64(cg, 0), ""), "");
	LLVMBasicBlockRef bsome = intrin_block(cg, "some");
	LLVMBuildCondBr(cg->b, some, bsome, done);
	LLVMPositionBuilderAtEnd(cg->b, bsome);
	if (MR > 1) {   /* one row: the block is full or masked */
		LLVMBasicBlockRef brows = LLVMInsertBasicBlockInContext(cg->ctx, bmask, "rows");
		LLVMBuildCondBr(cg->b, LLVMBuildAnd(cg->b, colsfull,
		    LLVMBuildICmp(cg->b, LLVMIntSLT, vm, intrin_i64(cg, MR), ""), ""), brows, bmask);
		LLVMPositionBuilderAtEnd(cg->b, brows);
		if (taps && MR >= 4) {
			/* one row short, a convolution's first or last tile
			 * under a tap that reads the border there (tensorize_guards.c,
			 * tz_absorb_heads): a whole kernel of MR - 1 rows, where
			 * the pairs would stream b MR / 2 times */
			LLVMBasicBlockRef bshort = LLVMInsertBasicBlockInContext(cg->ctx, bmask, "short");
			LLVMBasicBlockRef bpairs = LLVMInsertBasicBlockInContext(cg->ctx, bmask, "pairs");
			LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, vm,
			    intrin_i64(cg, MR - 1), ""), bshort, bpairs);
			LLVMPositionBuilderAtEnd(cg->b, bshort);
			plain(&f, MR - 1);
			int left = regs - ((MR - 1) * f.nv + f.nv + 1);
			block(cg, &f, K, left < 2 && (MR - 1) * f.nv >= 24 ? 1 : UNROLL);
			LLVMBuildBr(cg->b, done);
			LLVMPositionBuilderAtEnd(cg->b, bpairs);
		}
		row_loop(cg, &f, vm, K);
		LLVMBuildBr(cg->b, done);
	} else {
		LLVMBuildBr(cg->b, bmask);
	}
	/* the rest: masked columns (and clamped rows) */
	LLVMPositionBuilderAtEnd(cg->b, bmask);
	plain(&f, MR);
	masked_block(cg, &f, vm, vn, K);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
	LLVMBuildRetVoid(cg->b);
	intrin_end(cg, &saved);
	return fn;
}

/* libtxrt's prebuilt micro-kernels (txc --runtime-kernels writes them
 * when libtxrt is built): every shape of stdlib/intrinsics/cpu.tx, AVX2's
 * and AVX-512's (below), in the
 * three stride patterns that schedules tensorize, c's row stride always
 * an argument:
 *   - a and b packed in panels: a[i, k] at i + k*MR, b[k, j] at j + k*NR
 *     (the GotoBLAS nest of stdlib/tuned/matmul.tx);
 *   - a row-major (a[i, k] at i*lda + k), b packed (convolutions over a
 *     packed filter);
 *   - both row-major (a tensorized matmul without packing).
 * An object calls libtxrt's copy instead of building its own when the
 * target can run it (llvm_emit.c: x86-64 with AVX2 and FMA); code
 * generation for the micro-kernel is then about half of the compile time
 * of a GotoBLAS matmul it no longer pays. */
static const int rt_shapes[][2] = { { 6, 16 }, { 4, 24 }, { 8, 8 }, { 12, 8 }, { 1, 64 } };
static const int rt_shapes_zmm[][2] = { { 14, 32 }, { 8, 48 }, { 6, 64 }, { 12, 16 }, { 1, 128 } };
enum { RT_FORMS = 3, RT_SHAPES = 5 };

/* The strides (csi, asi, ask, bsk) of form f; -1: an argument. */
static void
rt_form(int f, int MR, int NR, int64_t *s)
{
	s[0] = -1;
	s[1] = f == 0 ? 1 : -1;
	s[2] = f == 0 ? MR : 1;
	s[3] = f == 2 ? -1 : NR;
}

/* Whether libtxrt has the kernel MR x NR for the strides cst (c's row
 * stride aside); if so, its strides are left in rt. */
static bool
rt_kernel(int lanes, int MR, int NR, const int64_t *cst, int64_t *rt)
{
	const int (*shapes)[2] = lanes == 16 ? rt_shapes_zmm : rt_shapes;
	for (size_t i = 0; i < RT_SHAPES; i++) {
		if (shapes[i][0] != MR || shapes[i][1] != NR)
			continue;
		for (int f = 0; f < RT_FORMS; f++) {
			rt_form(f, MR, NR, rt);
			if (rt[1] == cst[1] && rt[2] == cst[2] && rt[3] == cst[3])
				return true;
		}
	}
	return false;
}

/* The AVX-512 kernels (rt_shapes_zmm) come twice: NAME_avx512, for
 * x86-64-v4 (zmm registers), and NAME_avx2, the same IR under the
 * module's x86-64-v3 (each 512-bit vector two ymm halves); NAME, the one
 * libtxrt exports, asks the CPU once (txrt_cpu_has, kept in a global:
 * racing first calls store the same answer) and calls one of them.  So
 * one library, and the objects calling it, run on AVX2-only and AVX-512
 * machines alike. */
static const char zmm_isa[] = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl";

static void
string_attr(Cg *cg, LLVMValueRef fn, const char *k, const char *v)
{
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
	    LLVMCreateStringAttribute(cg->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

static void
zmm_dispatch(Cg *cg, int MR, int NR, const int64_t *s)
{
	LLVMTypeRef fty, i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMValueRef wide = kernel_fn(cg, 16, MR, NR, s, true, &fty, "_avx512", false);
	LLVMValueRef half = kernel_fn(cg, 16, MR, NR, s, true, &fty, "_avx2", false);
	LLVMSetLinkage(wide, LLVMInternalLinkage);
	LLVMSetLinkage(half, LLVMInternalLinkage);
	string_attr(cg, wide, "target-cpu", "x86-64-v4");
	string_attr(cg, wide, "target-features", "+prfchw,+evex512");
	char name[96];
	kernel_name(name, sizeof name, true, 16, MR, NR, s);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, name, fty);
	/* the CPU's answer: 0 not asked yet, 1 AVX-512, 2 not */
	LLVMValueRef ok = LLVMGetNamedGlobal(cg->mod, "txrt.zmm_ok");
	if (!ok) {
		ok = LLVMAddGlobal(cg->mod, i32, "txrt.zmm_ok");
		LLVMSetLinkage(ok, LLVMInternalLinkage);
		LLVMSetInitializer(ok, LLVMConstInt(i32, 0, 0));
	}
	LLVMTypeRef hty = LLVMFunctionType(i32, &ptr, 1, 0);
	LLVMValueRef has = LLVMGetNamedFunction(cg->mod, "txrt_cpu_has");
	if (!has)
		has = LLVMAddFunction(cg->mod, "txrt_cpu_has", hty);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry");
	LLVMBasicBlockRef ask = LLVMAppendBasicBlockInContext(cg->ctx, fn, "ask");
	LLVMBasicBlockRef pick = LLVMAppendBasicBlockInContext(cg->ctx, fn, "pick");
	LLVMBasicBlockRef bw = LLVMAppendBasicBlockInContext(cg->ctx, fn, "zmm");
	LLVMBasicBlockRef bh = LLVMAppendBasicBlockInContext(cg->ctx, fn, "ymm");
	LLVMPositionBuilderAtEnd(cg->b, entry);
	LLVMValueRef v = LLVMBuildLoad2(cg->b, i32, ok, "known");
	LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(v, 4);
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, v, LLVMConstInt(i32, 0, 0), ""),
	    ask, pick);
	LLVMPositionBuilderAtEnd(cg->b, ask);
	LLVMValueRef isa = LLVMBuildGlobalStringPtr(cg->b, zmm_isa, "txrt.zmm_isa");
	LLVMValueRef r = LLVMBuildCall2(cg->b, hty, has, &isa, 1, "");
	LLVMValueRef a = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntNE, r,
	    LLVMConstInt(i32, 0, 0), ""), LLVMConstInt(i32, 1, 0), LLVMConstInt(i32, 2, 0), "");
	LLVMValueRef st = LLVMBuildStore(cg->b, a, ok);
	LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(st, 4);
	LLVMBuildBr(cg->b, pick);
	LLVMPositionBuilderAtEnd(cg->b, pick);
	LLVMValueRef k = LLVMBuildPhi(cg->b, i32, "cpu");
	LLVMValueRef in[2] = { v, a };
	LLVMBasicBlockRef from[2] = { entry, ask };
	LLVMAddIncoming(k, in, from, 2);
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, k, LLVMConstInt(i32, 1, 0), ""),
	    bw, bh);
	LLVMValueRef p[11];
	LLVMGetParams(fn, p);
	LLVMPositionBuilderAtEnd(cg->b, bw);
	LLVMBuildCall2(cg->b, fty, wide, p, 11, "");
	LLVMBuildRetVoid(cg->b);
	LLVMPositionBuilderAtEnd(cg->b, bh);
	LLVMBuildCall2(cg->b, fty, half, p, 11, "");
	LLVMBuildRetVoid(cg->b);
}

void
intrin_cpu_runtime_kernels(Cg *cg)
{
	LLVMTypeRef fty;
	int64_t s[4];
	for (size_t i = 0; i < RT_SHAPES; i++)
		for (int f = 0; f < RT_FORMS; f++) {
			rt_form(f, rt_shapes[i][0], rt_shapes[i][1], s);
			kernel_fn(cg, 8, rt_shapes[i][0], rt_shapes[i][1], s, true, &fty, NULL, false);
		}
	for (size_t i = 0; i < RT_SHAPES; i++)
		for (int f = 0; f < RT_FORMS; f++) {
			rt_form(f, rt_shapes_zmm[i][0], rt_shapes_zmm[i][1], s);
			zmm_dispatch(cg, rt_shapes_zmm[i][0], rt_shapes_zmm[i][1], s);
		}
}

/* One fma_outer call with vectors of `lanes` f32: 8 for "fma_outer"
 * (AVX2's ymm), 16 for "fma_outer_zmm" (AVX-512's zmm; on a CPU without
 * AVX-512 LLVM legalises each into two ymm halves, so the kernel still
 * runs, at the AVX2 width). */
static void
fma_outer(Cg *cg, IrExpr *e, int lanes)
{
	int64_t mr, nr, cst[4];
	IrFmaArgs fa;
	if (!intrin_decode(e, lanes, &mr, &nr, cst) || !ir_fma_args(e, &fa) ||
	    mr * (nr / lanes) > MAXACC || mr > MAXACC || nr / lanes > MAXACC)
		ICE("fma_outer: malformed call");
	bool taps = fa.ntaps > 0;
	/* c stored transposed (its rows contiguous, tensorize.c allows it for
	 * blocks of at most a vector's rows): the kernel gets c's column
	 * stride where the row stride goes, and stores through
	 * ctrans_store; a local kernel (libtxrt has none of this form) */
	int64_t one;
	if (ir_is_const(fa.csi, &one) && one == 1 && !(ir_is_const(fa.csj, &one) && one == 1) &&
	    mr <= lanes) {
		IrFmaArgs sw = fa;
		sw.csi = fa.csj;
		sw.csj = fa.csi;
		IrExpr *t = ir_fma_call_like(e, &sw);
		if (!intrin_decode(t, lanes, &mr, &nr, cst))
			ICE("fma_outer: malformed call");
		LLVMTypeRef fty;
		LLVMValueRef fn = kernel_fn(cg, lanes, (int)mr, (int)nr, cst, false, &fty, ".ct", taps);
		intrin_call(cg, t, fn, fty);
		return;
	}
	if (mr == 1)    /* one row: the row strides of c and a are never used */
		cst[0] = cst[1] = -1;
	LLVMTypeRef fty;
	LLVMValueRef fn;
	int64_t rt[4];
	if (cg->runtime_kernels && !taps && rt_kernel(lanes, (int)mr, (int)nr, cst, rt)) {
		char name[80];
		kernel_name(name, sizeof name, true, lanes, (int)mr, (int)nr, rt);
		fn = kernel_decl(cg, name, true, lanes, &fty, false);
	} else {
		fn = kernel_fn(cg, lanes, (int)mr, (int)nr, cst, false, &fty, NULL, taps);
	}
	intrin_call(cg, e, fn, fty);
}

LLVMValueRef
intrin_cpu_emit(Cg *cg, IrExpr *e)
{
	cg->fn->work++;
	if (intrin_amx_emit(cg, e) || intrin_dot_emit(cg, e))
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	int lanes = ir_fma_outer_lanes(e->call.name);
	if (lanes)
		fma_outer(cg, e, lanes);
	else
		ICE("intrinsic '%s' has no CPU implementation", e->call.name);
	return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
}
