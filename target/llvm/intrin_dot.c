/* intrin_dot.c: the CPU's integer and bf16 micro-kernels of
 * stdlib/intrinsics/cpu.tx, emitted as LLVM vector code.
 *
 * Each computes c[i, j] (+)= sum(k < K) a[i, k] * b[k, j] over an MR x NR
 * block, the products widened (i8 to i32, bf16 to f32), with the call of
 * fma_outer (lower/ir.h: mr, nr, K, c, strides, a, strides, b, strides,
 * first, MR, NR).  The hardware's dot-product instructions sum a group
 * of G consecutive k into each 32-bit lane of the accumulator, so each
 * k step takes G rows of b, interleaved in registers so that lane j holds
 * b[k .. k+G-1, j], and G elements of a row of a broadcast as one 32-bit
 * value:
 *
 *   i8_madd      AVX2, G 2: a and b sign-extended to i16, vpmaddwd (two
 *                i16 products summed into i32: exact, no saturation),
 *                vpaddd into the accumulators.
 *   i8_vnni      AVX-VNNI (ymm) and AVX512-VNNI (zmm), G 4: vpdpbusd
 *   i8_vnni_zmm  multiplies unsigned bytes by signed ones.  a is made
 *                unsigned by adding 128 (a xor 0x80), so each lane sums
 *                (a + 128) * b = a * b + 128 * b; the same instruction
 *                with a = 1 sums b's column over k into one compensation
 *                vector per vector of b (1/MR more instructions), and
 *                128 times it is subtracted at the end.  Every step is
 *                modulo 2^32, as the i32 sum the kernel declares.  The
 *                zmm kernel on a packed panel of b (vnni_panel, below)
 *                turns the roles round: b unsigned, a broadcast from
 *                memory, 128 times a's row sums subtracted.
 *   bf16_widen   AVX2, G 1: bf16 widened to f32 (a 16-bit shift), FMA.
 *   bf16_dp_zmm  AVX512_BF16, G 2: vdpbf16ps.
 *
 * With G 2 and an even number of vectors of b, two rows of twice a
 * vector's columns are interleaved within 128-bit blocks (vpunpcklwd and
 * vpunpckhwd, no lane-crossing shuffle: pack_b_pairs), and the
 * accumulators' column order is restored once after the k loop.
 *
 * A K that is no multiple of G ends with one step whose missing rows of
 * a and b are zero (addresses clamped to the last row: nothing outside
 * the operands is read).  The full block (mr = MR, nr = NR) runs the
 * vector code; a partial block at the edges of C runs the same vector
 * code masked (masked_block): rows past mr re-read a's last valid row and
 * are never stored, columns past nr are masked off in every load of b
 * (llvm.masked.load, zero there) and in the loads and stores of c, so no
 * element outside the block is touched (before, scalar loops, some 30
 * times slower: a 3x3 int8 convolution whose rows of 56 left an 8-column
 * edge ran at 2 GOP/s against 75 with none).  One
 * internal function per kind, shape and set of constant strides
 * (txc.dot.KIND.MRxNR...), as intrin_cpu.c's.  The target CPU must have
 * the kind's instruction set (Cg.features): otherwise an error, never an
 * instruction the CPU lacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/llvm/cg.h"

typedef struct {
	const char *emit;
	int lanes;              /* 32-bit lanes of a vector: 8 ymm, 16 zmm */
	int group;              /* k summed into one lane per instruction */
	bool bf16;              /* bf16 -> f32 (else i8 -> i32) */
	const char *need;       /* LLVM's name of the instruction set */
} DotKind;

static const DotKind kinds[] = {
	{ "i8_madd", 8, 2, false, "avx2" },
	{ "i8_vnni", 8, 4, false, "avxvnni" },
	{ "i8_vnni_zmm", 16, 4, false, "avx512vnni" },
	{ "bf16_widen", 8, 1, true, "fma" },
	{ "bf16_dp_zmm", 16, 2, true, "avx512bf16" },
};

enum { MAXV = 8, MAXR = 32 };

typedef struct {
	const DotKind *k;
	LLVMTypeRef i64, i32, e, acc;   /* e: an input element (i8 or i16), acc: the accumulator vector */
	int mr, nv;
	bool emulate;           /* TXC_DOT_EMULATE: see emulated() */
	bool perm;              /* b's columns in pack_b_pairs' order */
	LLVMValueRef c, a, b, csi, asi, ask, bsk, first;
	/* masked_block: the block's extents (NULL in the full block) */
	LLVMValueRef mrv, nrv;
	/* vnni_panel: b unsigned, a signed (panel_* below) */
	bool bu;
	bool rows;              /* b's rows apart: loaded one by one */
	bool vbmi;              /* vpermb/vpermi2b there (else emulated) */
	LLVMValueRef idx[2], bmask[2], rs[MAXR];
} Dot;

const char *
intrin_dot_needs(const char *emit)
{
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(kinds[i].emit, emit))
			return kinds[i].need;
	return NULL;
}

static LLVMValueRef
load(Cg *cg, LLVMTypeRef t, LLVMValueRef p)
{
	LLVMValueRef v = LLVMBuildLoad2(cg->b, t, p, "");
	LLVMSetAlignment(v, 1);
	return v;
}

/* shufflevector x, y by the constant mask m[0..n-1] */
static LLVMValueRef
shuffle(Cg *cg, LLVMValueRef x, LLVMValueRef y, const int *m, int n)
{
	LLVMValueRef v[128];
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	for (int i = 0; i < n; i++)
		v[i] = LLVMConstInt(i32, (unsigned)m[i], 0);
	return LLVMBuildShuffleVector(cg->b, x, y, LLVMConstVector(v, (unsigned)n), "");
}

/* x and y (n lanes each) interleaved in groups of g: x's first g, y's
 * first g, x's next g... */
static LLVMValueRef
interleave(Cg *cg, LLVMValueRef x, LLVMValueRef y, int n, int g)
{
	int m[64];
	for (int i = 0; i < 2 * n; i++) {
		int grp = i / g, in = i % g;
		m[i] = (grp / 2) * g + in + (grp % 2 ? n : 0);
	}
	return shuffle(cg, x, y, m, 2 * n);
}

/* f32 lanes of bf16 bits (i16 or a vector of them): the bits shifted up */
static LLVMValueRef
widen_bf16(Cg *cg, Dot *d, LLVMValueRef x, int lanes)
{
	LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
	LLVMTypeRef it = lanes ? LLVMVectorType(d->i32, (unsigned)lanes) : d->i32;
	LLVMValueRef sh = lanes ? cg_broadcast(cg, intrin_i32(cg, 16), lanes) : intrin_i32(cg, 16);
	LLVMValueRef w = LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, x, it, ""), sh, "");
	return LLVMBuildBitCast(cg->b, w, lanes ? LLVMVectorType(f32, (unsigned)lanes) : f32, "");
}

/* Row k + q of b, or (valid false) zero, its address clamped to row
 * last so that it is never out of the operand. */
static LLVMValueRef
row_index(Cg *cg, LLVMValueRef k, int q, LLVMValueRef last, LLVMValueRef *valid)
{
	LLVMValueRef kq = LLVMBuildAdd(cg->b, k, intrin_i64(cg, q), "");
	if (!last) {
		*valid = NULL;
		return kq;
	}
	*valid = LLVMBuildICmp(cg->b, LLVMIntSLE, kq, last, "");
	return LLVMBuildSelect(cg->b, *valid, kq, last, "");
}

/* The lanes col .. col + n - 1 that are columns of the block (< nr) */
static LLVMValueRef
lane_mask(Cg *cg, Dot *d, int col, int n)
{
	LLVMValueRef lane[64];
	for (int i = 0; i < n; i++)
		lane[i] = intrin_i64(cg, col + i);
	return LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMConstVector(lane, (unsigned)n),
	    cg_broadcast(cg, d->nrv, n), "cols");
}

/* Row k + q of b from column col on, n elements (row_index: zero past
 * last; masked_block: zero past nr). */
static LLVMValueRef
b_row(Cg *cg, Dot *d, LLVMValueRef k, int q, LLVMValueRef last, int col, int n)
{
	LLVMTypeRef rowt = LLVMVectorType(d->e, (unsigned)n);
	LLVMValueRef valid;
	LLVMValueRef kq = row_index(cg, k, q, last, &valid);
	LLVMValueRef p = intrin_gep(cg, d->e, d->b, LLVMBuildAdd(cg->b, intrin_mul(cg, kq, d->bsk),
	    intrin_i64(cg, col), ""));
	/* masked_block: columns col + i < nr only */
	LLVMValueRef row = intrin_vload(cg, rowt, p, 1, d->nrv ? lane_mask(cg, d, col, n) : NULL);
	if (valid)
		row = LLVMBuildSelect(cg->b, valid, row, LLVMConstNull(rowt), "");
	return row;
}

/* Pairs of k (G 2) with an even number of vectors of b: each two
 * vectors' 2L columns are loaded at once and interleaved within 128-bit
 * blocks (vpunpcklwd and vpunpckhwd: no shuffle crosses a block), which
 * leaves the columns in another order: lane 4l+m of the first vector is
 * column 8l+m, of the second 8l+4+m.  unpermute() puts them back once,
 * after the k loop. */
static void
pack_b_pairs(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *pb)
{
	int L = d->k->lanes;
	LLVMTypeRef w = LLVMVectorType(LLVMInt16TypeInContext(cg->ctx), (unsigned)(2 * L));
	for (int v = 0; v < d->nv; v += 2) {
		LLVMValueRef rows[2];
		for (int q = 0; q < 2; q++) {
			rows[q] = b_row(cg, d, k, q, last, v * L, 2 * L);
			if (!d->k->bf16)
				rows[q] = LLVMBuildSExt(cg->b, rows[q], w, "");
		}
		for (int h = 0; h < 2; h++) {
			int m[64];
			for (int i = 0; i < 2 * L; i++) {
				int blk = i / 8, t = i % 8;
				m[i] = (t % 2 ? 2 * L : 0) + 8 * blk + 4 * h + t / 2;
			}
			LLVMValueRef x = shuffle(cg, rows[0], rows[1], m, 2 * L);
			if (d->k->bf16)
				x = LLVMBuildBitCast(cg->b, x, LLVMVectorType(LLVMBFloatTypeInContext(cg->ctx),
				    (unsigned)(2 * L)), "");
			pb[v + h] = x;
		}
	}
}

/* The accumulators of pack_b_pairs' column order back in order. */
static void
unpermute(Cg *cg, Dot *d, LLVMValueRef *acc)
{
	int L = d->k->lanes;
	for (int r = 0; r < d->mr; r++)
		for (int v = 0; v < d->nv; v += 2) {
			LLVMValueRef a = acc[r * d->nv + v], b = acc[r * d->nv + v + 1];
			for (int h = 0; h < 2; h++) {
				int m[32];
				for (int j = 0; j < L; j++) {
					int c = h * L + j, blk = c / 8, t = c % 8;
					m[j] = t < 4 ? 4 * blk + t : L + 4 * blk + t - 4;
				}
				acc[r * d->nv + v + h] = shuffle(cg, a, b, m, L);
			}
		}
}

/* The nv vectors of b for the k group at k (last: the tail's last row,
 * NULL in the main loop), in the lanes the kind's instruction takes. */
static void
pack_b(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *pb)
{
	int L = d->k->lanes, G = d->k->group;
	if (d->perm) {
		pack_b_pairs(cg, d, k, last, pb);
		return;
	}
	for (int v = 0; v < d->nv; v++) {
		LLVMValueRef rows[4];
		for (int q = 0; q < G; q++)
			rows[q] = b_row(cg, d, k, q, last, v * L, L);
		LLVMValueRef x;
		if (G == 1) {
			x = widen_bf16(cg, d, rows[0], L);
		} else if (G == 2 && !d->k->bf16) {
			LLVMTypeRef w = LLVMVectorType(LLVMInt16TypeInContext(cg->ctx), (unsigned)L);
			x = interleave(cg, LLVMBuildSExt(cg->b, rows[0], w, ""),
			    LLVMBuildSExt(cg->b, rows[1], w, ""), L, 1);
		} else if (G == 2) {
			x = interleave(cg, rows[0], rows[1], L, 1);
			x = LLVMBuildBitCast(cg->b, x, LLVMVectorType(LLVMBFloatTypeInContext(cg->ctx),
			    (unsigned)(2 * L)), "");
		} else {
			LLVMValueRef r01 = interleave(cg, rows[0], rows[1], L, 1);
			LLVMValueRef r23 = interleave(cg, rows[2], rows[3], L, 1);
			x = LLVMBuildBitCast(cg->b, interleave(cg, r01, r23, 2 * L, 2), d->acc, "");
		}
		pb[v] = x;
	}
}

/* a[r, k .. k+G-1] broadcast to every lane, as pack_b's lanes are. */
static LLVMValueRef
a_row(Cg *cg, Dot *d, int r)
{
	LLVMValueRef ri = intrin_i64(cg, r);
	if (d->mrv)     /* rows past mr: the last one again (never stored) */
		ri = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, ri, d->mrv, ""), ri,
		    LLVMBuildSub(cg->b, d->mrv, intrin_i64(cg, 1), ""), "row");
	return intrin_gep(cg, d->e, d->a, intrin_mul(cg, ri, d->asi));
}

static LLVMValueRef
pack_a(Cg *cg, Dot *d, int r, LLVMValueRef k, LLVMValueRef last)
{
	int L = d->k->lanes, G = d->k->group;
	LLVMValueRef row = a_row(cg, d, r);
	LLVMValueRef el[4];
	for (int q = 0; q < G; q++) {
		LLVMValueRef valid;
		LLVMValueRef kq = row_index(cg, k, q, last, &valid);
		el[q] = load(cg, d->e, intrin_gep(cg, d->e, row, intrin_mul(cg, kq, d->ask)));
		if (valid)
			el[q] = LLVMBuildSelect(cg->b, valid, el[q], LLVMConstNull(d->e), "");
	}
	if (G == 1) {
		/* a broadcast as i16 to both halves of every lane, shifted up
		 * as i32 (vpbroadcastw, vpslld): a's bits << 16, the f32 */
		LLVMValueRef x = LLVMBuildBitCast(cg->b, cg_broadcast(cg, el[0], 2 * L),
		    LLVMVectorType(d->i32, (unsigned)L), "");
		x = LLVMBuildShl(cg->b, x, cg_broadcast(cg, intrin_i32(cg, 16), L), "");
		return LLVMBuildBitCast(cg->b, x, d->acc, "");
	}
	if (!d->k->bf16 && G == 2) {
		/* the pair's two bytes as one i16 (one load when adjacent),
		 * broadcast, then every byte sign-extended to i16: the pair in
		 * every lane (vpbroadcastw, vpmovsxbw) */
		LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx);
		LLVMValueRef w = LLVMBuildOr(cg->b, LLVMBuildZExt(cg->b, el[0], i16, ""),
		    LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, el[1], i16, ""),
		    LLVMConstInt(i16, 8, 0), ""), "");
		LLVMValueRef bytes = LLVMBuildBitCast(cg->b, cg_broadcast(cg, w, L),
		    LLVMVectorType(d->e, (unsigned)(2 * L)), "");
		return LLVMBuildSExt(cg->b, bytes, LLVMVectorType(i16, (unsigned)(2 * L)), "");
	}
	/* the G elements packed into one i32 by shifts (a vector built by
	 * insertelement became a chain of vpinsrw per lane), then broadcast */
	int bits = 32 / G;
	LLVMTypeRef et = LLVMIntTypeInContext(cg->ctx, (unsigned)bits);
	LLVMValueRef word = NULL;
	for (int q = 0; q < G; q++) {
		LLVMValueRef x = el[q];
		if (!d->k->bf16 && G == 2)        /* i8 pairs as i16 pairs */
			x = LLVMBuildSExt(cg->b, x, et, "");
		x = LLVMBuildZExt(cg->b, x, d->i32, "");
		if (q)
			x = LLVMBuildShl(cg->b, x, intrin_i32(cg, q * bits), "");
		word = word ? LLVMBuildOr(cg->b, word, x, "") : x;
	}
	if (G == 4 && !d->bu)    /* vpdpbusd's unsigned a: each byte + 128 (one load of a's
	                * four bytes when they are adjacent) */
		word = LLVMBuildXor(cg->b, word, intrin_i32(cg, (int64_t)0x80808080u), "");
	LLVMValueRef bc = cg_broadcast(cg, word, L);
	if (G == 2 && !d->k->bf16)
		return LLVMBuildBitCast(cg->b, bc, LLVMVectorType(et, (unsigned)(2 * L)), "");
	if (d->k->bf16)
		return LLVMBuildBitCast(cg->b, bc, LLVMVectorType(LLVMBFloatTypeInContext(cg->ctx),
		    (unsigned)(2 * L)), "");
	return bc;
}

/* Lanes q, q+g, q+2g... of x (n of them) */
static LLVMValueRef
every(Cg *cg, LLVMValueRef x, int q, int g, int n)
{
	int m[64];
	for (int i = 0; i < n; i++)
		m[i] = i * g + q;
	return shuffle(cg, x, LLVMGetUndef(LLVMTypeOf(x)), m, n);
}

/* TXC_DOT_EMULATE=1: vpdpbusd and vdpbf16ps as plain vector code, which
 * any x86-64 runs (slowly): a test switch, so that the VNNI and BF16
 * kernels' packing, tails and compensation are checked by running them
 * on CPUs without those instructions (tests/run/stdlib_int8.sh).  Their
 * arithmetic as Intel documents it: vpdpbusd adds the four products of
 * unsigned bytes of a and signed bytes of b (modulo 2^32); vdpbf16ps
 * adds the odd pair's product, then the even one's. */
static LLVMValueRef
emulated(Cg *cg, Dot *d, LLVMValueRef acc, LLVMValueRef pa, LLVMValueRef pb)
{
	int L = d->k->lanes, G = d->k->group;
	if (!d->k->bf16) {
		LLVMTypeRef b8 = LLVMVectorType(LLVMInt8TypeInContext(cg->ctx), (unsigned)(G * L));
		LLVMTypeRef w = LLVMVectorType(d->i32, (unsigned)(G * L));
		LLVMValueRef x = LLVMBuildZExt(cg->b, LLVMBuildBitCast(cg->b, pa, b8, ""), w, "");
		LLVMValueRef y = LLVMBuildSExt(cg->b, LLVMBuildBitCast(cg->b, pb, b8, ""), w, "");
		LLVMValueRef p = LLVMBuildMul(cg->b, x, y, "");
		for (int q = 0; q < G; q++)
			acc = LLVMBuildAdd(cg->b, acc, every(cg, p, q, G, L), "");
		return acc;
	}
	LLVMTypeRef h = LLVMVectorType(LLVMInt16TypeInContext(cg->ctx), (unsigned)(G * L));
	LLVMValueRef x = widen_bf16(cg, d, LLVMBuildBitCast(cg->b, pa, h, ""), G * L);
	LLVMValueRef y = widen_bf16(cg, d, LLVMBuildBitCast(cg->b, pb, h, ""), G * L);
	LLVMValueRef p = LLVMBuildFMul(cg->b, x, y, "");
	for (int q = G - 1; q >= 0; q--)
		acc = LLVMBuildFAdd(cg->b, acc, every(cg, p, q, G, L), "");
	return acc;
}

/* acc + the dot products of pa and pb's lane groups */
static LLVMValueRef
dot(Cg *cg, Dot *d, LLVMValueRef acc, LLVMValueRef pa, LLVMValueRef pb)
{
	LLVMValueRef args[3] = { acc, pa, pb };
	bool zmm = d->k->lanes == 16;
	if (d->emulate && d->k->group > 1 && (d->k->group == 4 || d->k->bf16))
		return emulated(cg, d, acc, pa, pb);
	if (d->k->group == 1) {
		LLVMValueRef f[3] = { pa, pb, acc };
		LLVMTypeRef t = d->acc;
		return cg_call_intrinsic(cg, "llvm.fma", &t, 1, f, 3);
	}
	if (d->k->bf16)
		return cg_call_intrinsic(cg, "llvm.x86.avx512bf16.dpbf16ps.512", NULL, 0, args, 3);
	if (d->k->group == 4)
		return cg_call_intrinsic(cg, zmm ? "llvm.x86.avx512.vpdpbusd.512" :
		    "llvm.x86.avx512.vpdpbusd.256", NULL, 0, args, 3);
	LLVMValueRef m = cg_call_intrinsic(cg, zmm ? "llvm.x86.avx512.pmaddw.d.512" :
	    "llvm.x86.avx2.pmadd.wd", NULL, 0, args + 1, 2);
	return LLVMBuildAdd(cg->b, acc, m, "");
}

/* ---- vnni_panel: the zmm VNNI kernel on a contiguous panel of b ------
 * Where b's four rows of a k group lie within 64 * nv bytes (0 <= bsk <= NR:
 * the packed panel BL of the gemm_i8 schedule, bsk = NR), each group is
 * one or two 64-byte loads, put into vpdpbusd's lanes by one vpermb
 * (vpermi2b for 32 columns) with an index computed once from bsk, instead
 * of four loads of a row and six byte shuffles a vector.  b is the
 * unsigned operand (b xor 0x80 = b + 128) and a the signed one, so a's
 * four bytes are a broadcast operand of vpdpbusd straight from memory;
 * the excess, 128 times the sum of a's row, is summed before the k loop
 * (vpdpbusd of 64 bytes of the row by ones: 1/64 of the loop's work per
 * row and vector), and the row's sums start from minus it. */

/* vpermi2b (hi: byte t of the result is byte idx[t] of lo:hi) or vpermb
 * (hi NULL); lane by lane under TXC_DOT_EMULATE without AVX512_VBMI */
static LLVMValueRef
permute_bytes(Cg *cg, Dot *d, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef idx)
{
	if (d->vbmi) {
		LLVMValueRef a[3] = { lo, idx, hi };
		if (!hi)
			return cg_call_intrinsic(cg, "llvm.x86.avx512.permvar.qi.512", NULL, 0, a, 2);
		return cg_call_intrinsic(cg, "llvm.x86.avx512.vpermi2var.qi.512", NULL, 0, a, 3);
	}
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
	LLVMValueRef src = lo, out = LLVMGetUndef(LLVMTypeOf(lo));
	if (hi) {
		int m[128];
		for (int i = 0; i < 128; i++)
			m[i] = i;
		src = shuffle(cg, lo, hi, m, 128);
	}
	for (int t = 0; t < 64; t++) {
		LLVMValueRef it = LLVMBuildAnd(cg->b, LLVMBuildExtractElement(cg->b, idx,
		    intrin_i32(cg, t), ""), LLVMConstInt(i8, hi ? 127 : 63, 0), "");
		LLVMValueRef x = LLVMBuildExtractElement(cg->b, src, LLVMBuildZExt(cg->b, it, d->i32, ""), "");
		out = LLVMBuildInsertElement(cg->b, out, x, intrin_i32(cg, t), "");
	}
	return out;
}

/* The lanes 0 .. 63 (plus off) below n: n - off clamped to 0 .. 64, then
 * one compare of bytes */
static LLVMValueRef
bytes_below(Cg *cg, int off, LLVMValueRef n)
{
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
	LLVMValueRef t[64], zero = intrin_i64(cg, 0), full = intrin_i64(cg, 64);
	n = LLVMBuildSub(cg->b, n, intrin_i64(cg, off), "");
	n = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, n, zero, ""), zero, n, "");
	n = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSGT, n, full, ""), full, n, "");
	for (int i = 0; i < 64; i++)
		t[i] = LLVMConstInt(i8, (unsigned)i, 0);
	return LLVMBuildICmp(cg->b, LLVMIntULT, LLVMConstVector(t, 64),
	    cg_broadcast(cg, LLVMBuildTrunc(cg->b, n, i8, ""), 64), "");
}

/* d->rs[r]: -128 times the sum of the lanes of s[r], in every lane.  The
 * rows are summed together, a transpose as it goes: two vectors of R rows
 * of w lanes each make one of 2R rows of w/2 lanes (two shuffles and an
 * add), until one vector holds 16 rows or each row one lane; then the
 * lanes of a row are added within the vector and each row broadcast (a
 * third as many instructions as a reduction of each row alone). */
static void
row_totals(Cg *cg, Dot *d, LLVMValueRef *s)
{
	int L = d->k->lanes, n = d->mr, w = L, m[2][32];
	LLVMValueRef v[MAXR];
	for (int r = 0; r < n; r++)
		v[r] = s[r];
	while (w > 1 && n > 1) {
		int R = L / w, h = w / 2, o = 0;
		for (int i = 0; i < L; i++) {
			int row = i / h, j = i % h, src = row < R ? 0 : L;
			row %= R;
			m[0][i] = src + row * w + j;
			m[1][i] = src + row * w + j + h;
		}
		for (int i = 0; i < n; i += 2) {
			LLVMValueRef y = i + 1 < n ? v[i + 1] : LLVMConstNull(d->acc);
			v[o++] = LLVMBuildAdd(cg->b, shuffle(cg, v[i], y, m[0], L),
			    shuffle(cg, v[i], y, m[1], L), "");
		}
		n = o;
		w = h;
	}
	LLVMValueRef seven = cg_broadcast(cg, intrin_i32(cg, 7), L);
	for (int i = 0; i < n; i++) {
		for (int h = w / 2; h >= 1; h /= 2) {   /* within each row's w lanes */
			for (int l = 0; l < L; l++)
				m[0][l] = l ^ h;
			v[i] = LLVMBuildAdd(cg->b, v[i], shuffle(cg, v[i], v[i], m[0], L), "");
		}
		v[i] = LLVMBuildNeg(cg->b, LLVMBuildShl(cg->b, v[i], seven, ""), "");
	}
	int per = L / w;        /* rows a vector */
	for (int r = 0; r < d->mr; r++) {
		for (int l = 0; l < L; l++)
			m[0][l] = r % per * w;
		d->rs[r] = shuffle(cg, v[r / per], v[r / per], m[0], L);
	}
}

/* Before the k loop: the permutation indices, the masks of the panel's
 * loads (masked_block: bytes below 3 bsk + nr), minus 128 times each
 * row's sum */
static void
panel_prepare(Cg *cg, Dot *d, LLVMValueRef K)
{
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx), v64 = LLVMVectorType(i8, 64);
	int NR = d->nv * d->k->lanes;
	LLVMValueRef bs = cg_broadcast(cg, d->rows ? LLVMConstInt(i8, (unsigned)NR, 0) :
	    LLVMBuildTrunc(cg->b, d->bsk, i8, ""), 64);
	for (int v = 0; v < d->nv; v++) {
		LLVMValueRef q[64], c[64];
		for (int t = 0; t < 64; t++) {
			q[t] = LLVMConstInt(i8, (unsigned)(t % 4), 0);
			c[t] = LLVMConstInt(i8, (unsigned)(16 * v + t / 4), 0);
		}
		d->idx[v] = LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, LLVMConstVector(q, 64), bs, ""),
		    LLVMConstVector(c, 64), "idx");
		d->bmask[v] = NULL;
		if (d->nrv && !d->rows)
			d->bmask[v] = bytes_below(cg, 64 * v, LLVMBuildAdd(cg->b,
			    intrin_mul(cg, d->bsk, intrin_i64(cg, 3)), d->nrv, ""));
	}
	LLVMValueRef rows[MAXR], phis[MAXR], s[MAXR], zero = intrin_i64(cg, 0);
	LLVMValueRef ones = cg_broadcast(cg, intrin_i32(cg, 0x01010101), d->k->lanes);
	for (int r = 0; r < d->mr; r++)
		rows[r] = a_row(cg, d, r);
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef head = intrin_block(cg, "rsum"), body = intrin_block(cg, "rsumbody");
	LLVMBasicBlockRef exit = intrin_block(cg, "rsumdone");
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, head);
	LLVMValueRef k = LLVMBuildPhi(cg->b, d->i64, "k0");
	LLVMAddIncoming(k, &zero, &pre, 1);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef z = LLVMConstNull(d->acc);
		phis[r] = LLVMBuildPhi(cg->b, d->acc, "rsum");
		LLVMAddIncoming(phis[r], &z, &pre, 1);
	}
	LLVMValueRef next = LLVMBuildAdd(cg->b, k, intrin_i64(cg, 64), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, next, K, ""), body, exit);
	LLVMPositionBuilderAtEnd(cg->b, body);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef x = intrin_vload(cg, v64, intrin_gep(cg, i8, rows[r], k), 1, NULL);
		s[r] = dot(cg, d, phis[r], ones, LLVMBuildBitCast(cg->b, x, d->acc, ""));
	}
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(k, &next, &latch, 1);
	for (int r = 0; r < d->mr; r++)
		LLVMAddIncoming(phis[r], &s[r], &latch, 1);
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, exit);
	/* the last K % 64 bytes, masked, where there are some */
	LLVMBasicBlockRef tail = intrin_block(cg, "rsumtail"), join = intrin_block(cg, "rsumjoin");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, k, K, ""), tail, join);
	LLVMPositionBuilderAtEnd(cg->b, tail);
	LLVMValueRef m = bytes_below(cg, 0, LLVMBuildSub(cg->b, K, k, ""));
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef x = intrin_vload(cg, v64, intrin_gep(cg, i8, rows[r], k), 1, m);
		s[r] = dot(cg, d, phis[r], ones, LLVMBuildBitCast(cg->b, x, d->acc, ""));
	}
	LLVMBasicBlockRef tend = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, join);
	LLVMPositionBuilderAtEnd(cg->b, join);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef phi = LLVMBuildPhi(cg->b, d->acc, "rsum");
		LLVMValueRef in[2] = { phis[r], s[r] };
		LLVMBasicBlockRef bbs[2] = { exit, tend };
		LLVMAddIncoming(phi, in, bbs, 2);
		s[r] = phi;
	}
	row_totals(cg, d, s);
}

/* One k group at k (last: the tail's last row, then b row by row) */
static void
panel_step(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *acc)
{
	LLVMValueRef pb[MAXV];
	if (last) {
		pack_b(cg, d, k, last, pb);
	} else if (d->rows) {   /* four loads of NR bytes, put side by side */
		int NR = d->nv * d->k->lanes, m[64];
		LLVMValueRef row[4], valid;
		for (int q = 0; q < 4; q++) {
			LLVMValueRef kq = row_index(cg, k, q, NULL, &valid);
			LLVMValueRef p = intrin_gep(cg, d->e, d->b, intrin_mul(cg, kq, d->bsk));
			row[q] = intrin_vload(cg, LLVMVectorType(d->e, (unsigned)NR), p, 1,
			    d->nrv ? lane_mask(cg, d, 0, NR) : NULL);
		}
		for (int i = 0; i < 64; i++)
			m[i] = i;
		LLVMValueRef lo = shuffle(cg, row[0], row[1], m, 2 * NR);
		LLVMValueRef hi = shuffle(cg, row[2], row[3], m, 2 * NR);
		if (d->nv == 1) {
			lo = shuffle(cg, lo, hi, m, 64);
			hi = NULL;
		}
		for (int v = 0; v < d->nv; v++)
			pb[v] = LLVMBuildBitCast(cg->b, permute_bytes(cg, d, lo, hi, d->idx[v]), d->acc, "");
	} else {
		LLVMTypeRef v64 = LLVMVectorType(d->e, 64);
		LLVMValueRef p = intrin_gep(cg, d->e, d->b, intrin_mul(cg, k, d->bsk));
		LLVMValueRef lo = intrin_vload(cg, v64, p, 1, d->bmask[0]), hi = NULL;
		if (d->nv == 2)
			hi = intrin_vload(cg, v64, intrin_gep(cg, d->e, p, intrin_i64(cg, 64)), 1,
			    d->bmask[1]);
		for (int v = 0; v < d->nv; v++)
			pb[v] = LLVMBuildBitCast(cg->b, permute_bytes(cg, d, lo, hi, d->idx[v]), d->acc, "");
	}
	LLVMValueRef x80 = cg_broadcast(cg, intrin_i32(cg, (int64_t)0x80808080u), d->k->lanes);
	for (int v = 0; v < d->nv; v++)
		pb[v] = LLVMBuildXor(cg->b, pb[v], x80, "");
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef pa = pack_a(cg, d, r, k, last);
		for (int v = 0; v < d->nv; v++)
			acc[r * d->nv + v] = dot(cg, d, acc[r * d->nv + v], pb[v], pa);
	}
}

/* One k group at k: acc[r * nv + v] and comp[v] (VNNI's sums of b) */
static void
step(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *acc, LLVMValueRef *comp)
{
	LLVMValueRef pb[MAXV];
	pack_b(cg, d, k, last, pb);
	if (comp) {
		LLVMValueRef ones = cg_broadcast(cg, intrin_i32(cg, 0x01010101), d->k->lanes);
		for (int v = 0; v < d->nv; v++)
			comp[v] = dot(cg, d, comp[v], ones, pb[v]);
	}
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef pa = pack_a(cg, d, r, k, last);
		for (int v = 0; v < d->nv; v++)
			acc[r * d->nv + v] = dot(cg, d, acc[r * d->nv + v], pa, pb[v]);
	}
}

/* The full block: the k loop over whole groups with the accumulators as
 * phis, the tail group, the compensation, c added unless first, stored. */
static void
full_block(Cg *cg, Dot *d, LLVMValueRef K)
{
	int G = d->k->group, n = d->mr * d->nv, nc = G == 4 && !d->bu ? d->nv : 0;
	LLVMValueRef init[MAXR * MAXV + MAXV], *acc = init, *comp = init + n;
	for (int i = 0; i < n + nc; i++)
		init[i] = LLVMConstNull(d->acc);
	if (d->bu) {   /* a * (b + 128) summed: less 128 * a summed, from the start */
		panel_prepare(cg, d, K);
		for (int i = 0; i < n; i++)
			init[i] = d->rs[i / d->nv];
	}
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef head = intrin_block(cg, "k"), body = intrin_block(cg, "kbody");
	LLVMBasicBlockRef exit = intrin_block(cg, "kdone");
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, head);
	LLVMValueRef k = LLVMBuildPhi(cg->b, d->i64, "k"), zero = intrin_i64(cg, 0);
	LLVMAddIncoming(k, &zero, &pre, 1);
	LLVMValueRef phis[MAXR * MAXV + MAXV], cur[MAXR * MAXV + MAXV];
	for (int i = 0; i < n + nc; i++) {
		phis[i] = LLVMBuildPhi(cg->b, d->acc, "acc");
		LLVMAddIncoming(phis[i], &init[i], &pre, 1);
		cur[i] = phis[i];
	}
	LLVMValueRef next = LLVMBuildAdd(cg->b, k, intrin_i64(cg, G), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, next, K, ""), body, exit);
	LLVMPositionBuilderAtEnd(cg->b, body);
	if (d->bu)
		panel_step(cg, d, k, NULL, cur);
	else
		step(cg, d, k, NULL, cur, nc ? cur + n : NULL);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(k, &next, &latch, 1);
	for (int i = 0; i < n + nc; i++)
		LLVMAddIncoming(phis[i], &cur[i], &latch, 1);
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, exit);
	for (int i = 0; i < n + nc; i++)
		acc[i] = phis[i];
	if (G > 1) {   /* the rows k .. K-1 of a last, partial group */
		LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
		LLVMBasicBlockRef tail = intrin_block(cg, "ktail");
		LLVMBasicBlockRef join = intrin_block(cg, "ktaildone");
		LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, k, K, ""), tail, join);
		LLVMPositionBuilderAtEnd(cg->b, tail);
		for (int i = 0; i < n + nc; i++)
			cur[i] = acc[i];
		LLVMValueRef last = LLVMBuildSub(cg->b, K, intrin_i64(cg, 1), "");
		if (d->bu)
			panel_step(cg, d, k, last, cur);
		else
			step(cg, d, k, last, cur, nc ? cur + n : NULL);
		LLVMBasicBlockRef tend = LLVMGetInsertBlock(cg->b);
		LLVMBuildBr(cg->b, join);
		LLVMPositionBuilderAtEnd(cg->b, join);
		for (int i = 0; i < n + nc; i++) {
			LLVMValueRef phi = LLVMBuildPhi(cg->b, d->acc, "acc");
			LLVMValueRef in[2] = { acc[i], cur[i] };
			LLVMBasicBlockRef bbs[2] = { from, tend };
			LLVMAddIncoming(phi, in, bbs, 2);
			acc[i] = phi;
		}
	}
	if (d->perm)
		unpermute(cg, d, acc);
	if (nc) {      /* (a + 128) * b summed: less 128 * b summed */
		LLVMValueRef seven = cg_broadcast(cg, intrin_i32(cg, 7), d->k->lanes);
		for (int i = 0; i < n; i++)
			acc[i] = LLVMBuildSub(cg->b, acc[i],
			    LLVMBuildShl(cg->b, comp[i % d->nv], seven, ""), "");
	}
	LLVMValueRef cptr[MAXR * MAXV];
	for (int r = 0; r < d->mr; r++)
		for (int v = 0; v < d->nv; v++)
			cptr[r * d->nv + v] = intrin_gep(cg, LLVMGetElementType(d->acc), d->c,
			    LLVMBuildAdd(cg->b, intrin_mul(cg, intrin_i64(cg, r), d->csi),
			    intrin_i64(cg, v * d->k->lanes), ""));
	/* masked_block: the columns < nr of the rows < mr */
	LLVMValueRef sum[MAXR * MAXV], cmask[MAXR * MAXV];
	for (int i = 0; i < n; i++)
		cmask[i] = d->nrv ? LLVMBuildAnd(cg->b, lane_mask(cg, d, i % d->nv * d->k->lanes,
		    d->k->lanes), cg_broadcast(cg, LLVMBuildICmp(cg->b, LLVMIntSLT,
		    intrin_i64(cg, i / d->nv), d->mrv, ""), d->k->lanes), "cmask") : NULL;
	LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef add = intrin_block(cg, "cload"), store = intrin_block(cg, "cstore");
	LLVMBuildCondBr(cg->b, d->first, store, add);
	LLVMPositionBuilderAtEnd(cg->b, add);
	for (int i = 0; i < n; i++) {
		LLVMValueRef old = intrin_vload(cg, d->acc, cptr[i], 4, cmask[i]);
		sum[i] = d->k->bf16 ? LLVMBuildFAdd(cg->b, old, acc[i], "") :
		    LLVMBuildAdd(cg->b, old, acc[i], "");
	}
	LLVMBuildBr(cg->b, store);
	LLVMPositionBuilderAtEnd(cg->b, store);
	for (int i = 0; i < n; i++) {
		LLVMValueRef phi = LLVMBuildPhi(cg->b, d->acc, "c");
		LLVMValueRef in[2] = { acc[i], sum[i] };
		LLVMBasicBlockRef bbs[2] = { from, add };
		LLVMAddIncoming(phi, in, bbs, 2);
		acc[i] = phi;
	}
	for (int i = 0; i < n; i++)
		intrin_vstore(cg, acc[i], cptr[i], 4, cmask[i]);
}

/* full_block; on the panel path (vnni_panel, where ok and, when a's k
 * stride is not built in, it is 1 at run time) b's rows loaded together
 * where panel is true at run time, else one by one */
static void
block(Cg *cg, Dot *d, LLVMValueRef K, bool ok, LLVMValueRef panel)
{
	if (!ok) {
		full_block(cg, d, K);
		return;
	}
	LLVMBasicBlockRef join = intrin_block(cg, "blockdone");
	LLVMValueRef ask = d->ask;
	if (!LLVMIsConstant(ask)) {
		LLVMBasicBlockRef unit = intrin_block(cg, "kunit"), other = intrin_block(cg, "kstride");
		LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, d->ask, intrin_i64(cg, 1), ""),
		    unit, other);
		LLVMPositionBuilderAtEnd(cg->b, other);
		full_block(cg, d, K);
		LLVMBuildBr(cg->b, join);
		LLVMPositionBuilderAtEnd(cg->b, unit);
		d->ask = intrin_i64(cg, 1);     /* a's four bytes one load */
	}
	LLVMBasicBlockRef fast = intrin_block(cg, "panel"), slow = intrin_block(cg, "rows");
	LLVMBuildCondBr(cg->b, panel, fast, slow);
	LLVMPositionBuilderAtEnd(cg->b, fast);
	d->bu = true;
	full_block(cg, d, K);
	d->bu = false;
	LLVMBuildBr(cg->b, join);
	LLVMPositionBuilderAtEnd(cg->b, slow);
	d->bu = d->rows = true;
	full_block(cg, d, K);
	d->bu = d->rows = false;
	d->ask = ask;
	LLVMBuildBr(cg->b, join);
	LLVMPositionBuilderAtEnd(cg->b, join);
}

/* A partial block (the edges of C: 0 < mr <= MR, nr <= NR, one of them
 * less): full_block's vector code with rows past mr clamped and columns
 * past nr masked; nothing when the block is empty. */
static void
masked_block(Cg *cg, Dot *d, LLVMValueRef mr, LLVMValueRef nr, LLVMValueRef K,
    LLVMBasicBlockRef done, bool panel)
{
	LLVMBasicBlockRef run = intrin_block(cg, "masked");
	LLVMValueRef some = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntSGT, mr, intrin_i64(cg, 0), ""),
	    LLVMBuildICmp(cg->b, LLVMIntSGT, nr, intrin_i64(cg, 0), ""), "");
	LLVMBuildCondBr(cg->b, some, run, done);
	LLVMPositionBuilderAtEnd(cg->b, run);
	d->mrv = mr;
	d->nrv = nr;
	/* b's rows loaded together where they are 0 to NR apart */
	block(cg, d, K, panel, LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntSGE, d->bsk, intrin_i64(cg, 0), ""),
	    LLVMBuildICmp(cg->b, LLVMIntSLE, d->bsk, intrin_i64(cg, d->nv * d->k->lanes), ""), ""));
	d->mrv = d->nrv = NULL;
	LLVMBuildBr(cg->b, done);
}

/* The kernel txc.dot.KIND.MRxNR, then the strides built in (tags c, i,
 * k, b: intrin_name_strides), built once */
static LLVMValueRef
kernel_fn(Cg *cg, const DotKind *k, int MR, int NR, const int64_t *cst, bool emulate,
    int panelkind, LLVMTypeRef *fty)
{
	static const char *const attrs[] = { "noinline", "nounwind", NULL };
	char name[96];
	snprintf(name, sizeof name, "%sdot.%s.%dx%d", CG_KERNEL_PREFIX, k->emit, MR, NR);
	intrin_name_strides(name, sizeof name, '.', cst);
	if (emulate)
		strncat(name, ".emulated", sizeof name - strlen(name) - 1);
	if (panelkind && k->group == 4 && k->lanes == 16)
		strncat(name, panelkind == 1 ? ".vbmi" : ".panel", sizeof name - strlen(name) - 1);
	LLVMValueRef fn = intrin_decl(cg, name, true, k->lanes, attrs, fty);
	if (LLVMCountBasicBlocks(fn))
		return fn;
	IntrinSaved saved;
	LLVMValueRef p[11];
	intrin_begin(cg, &saved, fn, cst, p);
	Dot d;
	memset(&d, 0, sizeof d);
	d.k = k;
	d.emulate = emulate;
	d.i64 = LLVMInt64TypeInContext(cg->ctx);
	d.i32 = LLVMInt32TypeInContext(cg->ctx);
	d.e = k->bf16 ? LLVMInt16TypeInContext(cg->ctx) : LLVMInt8TypeInContext(cg->ctx);
	d.acc = LLVMVectorType(k->bf16 ? LLVMFloatTypeInContext(cg->ctx) : d.i32, (unsigned)k->lanes);
	d.mr = MR;
	d.nv = NR / k->lanes;
	d.perm = k->group == 2 && d.nv % 2 == 0;
	d.vbmi = panelkind == 1;
	/* vnni_panel: zmm VNNI, a's k contiguous (built in, or tested at run
	 * time), one or two vectors of b, AVX512_VBMI's byte permutes (or
	 * their emulation) */
	bool panel = k->group == 4 && k->lanes == 16 && (cst[2] == 1 || cst[2] < 0) &&
	    d.nv <= 2 && panelkind;
	d.c = p[0], d.csi = p[1], d.a = p[2], d.asi = p[3], d.ask = p[4];
	d.b = p[5], d.bsk = p[6], d.first = p[10];
	LLVMValueRef K = p[7], vm = p[8], vn = p[9];
	LLVMBasicBlockRef bfull = intrin_block(cg, "full"), bedge = intrin_block(cg, "edge");
	LLVMBasicBlockRef done = intrin_block(cg, "done");
	LLVMValueRef isfull = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntEQ, vm, intrin_i64(cg, MR), ""),
	    LLVMBuildICmp(cg->b, LLVMIntEQ, vn, intrin_i64(cg, NR), ""), "");
	LLVMBuildCondBr(cg->b, isfull, bfull, bedge);
	LLVMPositionBuilderAtEnd(cg->b, bfull);
	block(cg, &d, K, panel, LLVMBuildICmp(cg->b, LLVMIntEQ, d.bsk, intrin_i64(cg, NR), ""));
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, bedge);
	masked_block(cg, &d, vm, vn, K, done, panel);
	LLVMPositionBuilderAtEnd(cg->b, done);
	LLVMBuildRetVoid(cg->b);
	intrin_end(cg, &saved);
	return fn;
}

static bool
has_feature(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

bool
intrin_dot_emit(Cg *cg, IrExpr *e)
{
	const DotKind *k = NULL;
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(kinds[i].emit, e->call.name))
			k = &kinds[i];
	if (!k)
		return false;
	const char *em = getenv("TXC_DOT_EMULATE");
	bool emulate = em && *em == '1' && strcmp(k->need, "avx2") && strcmp(k->need, "fma");
	if (!emulate && (!cg->features || !has_feature(cg->features, k->need))) {
		unsigned bit = 1u << (k - kinds);
		if (cg->dot_errors & bit)
			return true;   /* said once a module */
		cg->dot_errors |= bit;
		diag_error(e->loc, "the micro-kernel (emit \"%s\") needs the instruction set %s, "
		    "which the target CPU %s", k->emit, k->need,
		    cg->features ? "lacks" : "does not have (an x86-64 target is needed)");
		diag_note(e->loc, "choose a CPU that has it (--cpu, --features=+%s), or leave the "
		    "isa knob at its default, the widest table the target has", k->need);
		return true;
	}
	int64_t mr, nr, cst[4];
	if (!intrin_decode(e, k->lanes, &mr, &nr, cst) || mr > MAXR || nr / k->lanes > MAXV)
		ICE("%s: malformed call", k->emit);
	LLVMTypeRef fty;
	/* TXC_DOT_PANEL=0: never the panel path (a test and measuring switch) */
	const char *pe = getenv("TXC_DOT_PANEL");
	int panelkind = 0;         /* 1: vpermb there, 2: emulated */
	if (!(pe && *pe == '0'))
		panelkind = cg->features && has_feature(cg->features, "avx512vbmi") ? 1 : emulate ? 2 : 0;
	LLVMValueRef fn = kernel_fn(cg, k, (int)mr, (int)nr, cst, emulate, panelkind, &fty);
	intrin_call(cg, e, fn, fty);
	return true;
}
