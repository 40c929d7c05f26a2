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
 *                zmm kernel on a packed panel of b (vnni_panel,
 *                intrin_panel.c) turns the roles round: b unsigned, a
 *                broadcast from memory, 128 times a's row sums
 *                subtracted.
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
 * edge ran at 2 GOP/s against 75 with none).  Without AVX512BW (AVX2,
 * whose masked loads are of 32-bit elements only, and LLVM's masked
 * byte load a branch per byte) b's rows are loaded whole where they end
 * inside b's block (most rows: what lies past nr is b's buffer still,
 * and lands in sums never stored), the others by 32-bit words
 * (intrin_edge.c).  A kernel with taps
 * (lower/ir.h: c[i, j] = sum(r, s, k) a[i, r, s, k] * b[r, s, k, j]) runs
 * the k loop with its tail inside intrin_loop.c's tap loops, the sums
 * (and VNNI's sums of b) phis of each, so c is loaded and stored once a
 * call and the compensation applied once (txc.dot....taps).  One
 * internal function per kind, shape and set of constant strides
 * (txc.dot.KIND.MRxNR...), as intrin_cpu.c's.  The target CPU must have
 * the kind's instruction set (Cg.features): otherwise an error, never an
 * instruction the CPU lacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/llvm/intrin_dot.h"


static const DotKind kinds[] = {
	{ "i8_madd", 8, 2, false, "avx2", false },
	{ "i8_madd_a16", 8, 2, false, "avx2", true },
	{ "i8_vnni", 8, 4, false, "avxvnni", false },
	{ "i8_vnni_zmm", 16, 4, false, "avx512vnni", false },
	{ "bf16_widen", 8, 1, true, "fma", false },
	{ "bf16_dp_zmm", 16, 2, true, "avx512bf16", false },
};


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
LLVMValueRef
dot_shuffle(Cg *cg, LLVMValueRef x, LLVMValueRef y, const int *m, int n)
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
	return dot_shuffle(cg, x, y, m, 2 * n);
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
LLVMValueRef
dot_row_index(Cg *cg, LLVMValueRef k, int q, LLVMValueRef last, LLVMValueRef *valid)
{
	LLVMValueRef kq = LLVMBuildAdd(cg->b, k, intrin_i64(cg, q), "");
	if (!last) {
		*valid = NULL;
		return kq;
	}
	*valid = LLVMBuildICmp(cg->b, LLVMIntSLE, kq, last, "");
	return LLVMBuildSelect(cg->b, *valid, kq, last, "");
}

/* The lanes col .. col + n - 1 that are columns of the block (< nr);
 * Dot.lmask's where it has them */
LLVMValueRef
dot_lane_mask(Cg *cg, Dot *d, int col, int n)
{
	int L = d->k->lanes, v = col / L, w = n == L ? 0 : n == 2 * L ? 1 : 2;
	if (col % L == 0 && v < MAXV && (w < 2 || col == 0) && d->lmask[v][w])
		return d->lmask[v][w];
	LLVMValueRef lane[64];
	for (int i = 0; i < n; i++)
		lane[i] = intrin_i64(cg, col + i);
	return LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMConstVector(lane, (unsigned)n),
	    cg_broadcast(cg, d->nrv, n), "cols");
}

/* Dot.lmask, before the loops of a masked block: built inside the k loop
 * they were not hoisted out of the tap loops (3 vpcmpgtq and 3 kunpck a
 * k step in the 8 x 32 bf16 kernel); unused ones are dropped */
static void
lane_masks(Cg *cg, Dot *d)
{
	int L = d->k->lanes, NR = d->nv * L;
	LLVMValueRef m[MAXV][3];
	memset(m, 0, sizeof m);
	for (int v = 0; v < d->nv; v++) {
		m[v][0] = dot_lane_mask(cg, d, v * L, L);
		if (v % 2 == 0 && v + 1 < d->nv && 2 * L <= 64)
			m[v][1] = dot_lane_mask(cg, d, v * L, 2 * L);
	}
	if (NR <= 64 && NR != L && NR != 2 * L)
		m[0][2] = dot_lane_mask(cg, d, 0, NR);
	memcpy(d->lmask, m, sizeof m);
}

/* Row k + q of b from column col on, n elements (row_index: zero past
 * last; masked_block: zero past nr). */
static LLVMValueRef
b_row(Cg *cg, Dot *d, LLVMValueRef k, int q, LLVMValueRef last, int col, int n)
{
	LLVMTypeRef rowt = LLVMVectorType(d->e, (unsigned)n);
	LLVMValueRef valid;
	LLVMValueRef kq = dot_row_index(cg, k, q, last, &valid);
	LLVMValueRef row;
	if (d->nrv && d->words && !d->bwhole) {
		row = dot_edge_row(cg, d, intrin_gep(cg, d->e, d->b, intrin_mul(cg, kq, d->bsk)), col, n);
		if (valid)
			row = LLVMBuildSelect(cg->b, valid, row, LLVMConstNull(rowt), "");
		return row;
	}
	LLVMValueRef p = intrin_gep(cg, d->e, d->b, LLVMBuildAdd(cg->b, intrin_mul(cg, kq, d->bsk),
	    intrin_i64(cg, col), ""));
	/* masked_block: columns col + i < nr only */
	row = intrin_vload(cg, rowt, p, 1, d->nrv && !d->bwhole ? dot_lane_mask(cg, d, col, n) :
	    NULL);
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
			LLVMValueRef x = dot_shuffle(cg, rows[0], rows[1], m, 2 * L);
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
				acc[r * d->nv + v + h] = dot_shuffle(cg, a, b, m, L);
			}
		}
}

/* The nv vectors of b for the k group at k (last: the tail's last row,
 * NULL in the main loop), in the lanes the kind's instruction takes. */
void
dot_pack_b(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *pb)
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
LLVMValueRef
dot_a_row(Cg *cg, Dot *d, int r)
{
	if (d->arow[r])
		return d->arow[r];
	LLVMValueRef ri = intrin_i64(cg, r);
	if (d->mrv)     /* rows past mr: the last one again (never stored) */
		ri = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, ri, d->mrv, ""), ri,
		    LLVMBuildSub(cg->b, d->mrv, intrin_i64(cg, 1), ""), "row");
	return intrin_gep(cg, d->ea, d->a, intrin_mul(cg, ri, d->asi));
}

LLVMValueRef
dot_pack_a(Cg *cg, Dot *d, int r, LLVMValueRef k, LLVMValueRef last)
{
	int L = d->k->lanes, G = d->k->group;
	LLVMValueRef row = dot_a_row(cg, d, r);
	LLVMValueRef el[4];
	if (d->k->bf16 && G == 2 && !last && LLVMIsConstant(d->ask) &&
	    LLVMConstIntGetSExtValue(d->ask) == 1) {
		/* a's pair adjacent, both rows valid: one 32-bit load, which
		 * LLVM folds into vdpbf16ps as a broadcast operand (two
		 * 16-bit loads joined by a shift were not merged) */
		LLVMValueRef p = intrin_gep(cg, d->e, row, k);
		LLVMValueRef w = load(cg, d->i32, p);
		return LLVMBuildBitCast(cg->b, cg_broadcast(cg, w, L),
		    LLVMVectorType(LLVMBFloatTypeInContext(cg->ctx), (unsigned)(2 * L)), "");
	}
	if (d->k->a16 && !last && LLVMIsConstant(d->ask) && LLVMConstIntGetSExtValue(d->ask) == 1) {
		/* a's pair, widened already, adjacent: one 32-bit load
		 * broadcast (vpbroadcastd from memory, no shuffle: the
		 * i8_madd pair's vpbroadcastw and vpmovsxbw were 8 of the 28
		 * vector instructions of a 4 x 16 step) */
		LLVMValueRef w = load(cg, d->i32, intrin_gep(cg, d->ea, row, k));
		return LLVMBuildBitCast(cg->b, cg_broadcast(cg, w, L),
		    LLVMVectorType(d->ea, (unsigned)(2 * L)), "");
	}
	for (int q = 0; q < G; q++) {
		LLVMValueRef valid;
		LLVMValueRef kq = dot_row_index(cg, k, q, last, &valid);
		el[q] = load(cg, d->ea, intrin_gep(cg, d->ea, row, intrin_mul(cg, kq, d->ask)));
		if (valid)
			el[q] = LLVMBuildSelect(cg->b, valid, el[q], LLVMConstNull(d->ea), "");
	}
	if (G == 1) {
		/* a broadcast as i16 to both halves of every lane, shifted up
		 * as i32 (vpbroadcastw, vpslld): a's bits << 16, the f32 */
		LLVMValueRef x = LLVMBuildBitCast(cg->b, cg_broadcast(cg, el[0], 2 * L),
		    LLVMVectorType(d->i32, (unsigned)L), "");
		x = LLVMBuildShl(cg->b, x, cg_broadcast(cg, intrin_i32(cg, 16), L), "");
		return LLVMBuildBitCast(cg->b, x, d->acc, "");
	}
	if (!d->k->bf16 && G == 2 && !d->k->a16) {
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
		if (!d->k->bf16 && G == 2 && !d->k->a16)  /* i8 pairs as i16 pairs */
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
LLVMValueRef
dot_every(Cg *cg, LLVMValueRef x, int q, int g, int n)
{
	int m[64];
	for (int i = 0; i < n; i++)
		m[i] = i * g + q;
	return dot_shuffle(cg, x, LLVMGetUndef(LLVMTypeOf(x)), m, n);
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
			acc = LLVMBuildAdd(cg->b, acc, dot_every(cg, p, q, G, L), "");
		return acc;
	}
	LLVMTypeRef h = LLVMVectorType(LLVMInt16TypeInContext(cg->ctx), (unsigned)(G * L));
	LLVMValueRef x = widen_bf16(cg, d, LLVMBuildBitCast(cg->b, pa, h, ""), G * L);
	LLVMValueRef y = widen_bf16(cg, d, LLVMBuildBitCast(cg->b, pb, h, ""), G * L);
	LLVMValueRef p = LLVMBuildFMul(cg->b, x, y, "");
	for (int q = G - 1; q >= 0; q--)
		acc = LLVMBuildFAdd(cg->b, acc, dot_every(cg, p, q, G, L), "");
	return acc;
}

/* acc + the dot products of pa and pb's lane groups */
LLVMValueRef
dot_instr(Cg *cg, Dot *d, LLVMValueRef acc, LLVMValueRef pa, LLVMValueRef pb)
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
	if (d->k->bf16) {
		/* a (the broadcast pair) last, the operand that may be memory:
		 * LLVM then folds its load as {1to16} instead of a
		 * vbroadcastss a vdpbf16ps; the products are the same either
		 * way round */
		LLVMValueRef ba[3] = { acc, pb, pa };
		return cg_call_intrinsic(cg, "llvm.x86.avx512bf16.dpbf16ps.512", NULL, 0, ba, 3);
	}
	if (d->k->group == 4)
		return cg_call_intrinsic(cg, zmm ? "llvm.x86.avx512.vpdpbusd.512" :
		    "llvm.x86.avx512.vpdpbusd.256", NULL, 0, args, 3);
	LLVMValueRef m = cg_call_intrinsic(cg, zmm ? "llvm.x86.avx512.pmaddw.d.512" :
	    "llvm.x86.avx2.pmadd.wd", NULL, 0, args + 1, 2);
	return LLVMBuildAdd(cg->b, acc, m, "");
}

/* One k group at k: acc[r * nv + v] and comp[v] (VNNI's sums of b) */
static void
step(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *acc, LLVMValueRef *comp)
{
	LLVMValueRef pb[MAXV];
	dot_pack_b(cg, d, k, last, pb);
	if (comp) {
		LLVMValueRef ones = cg_broadcast(cg, intrin_i32(cg, 0x01010101), d->k->lanes);
		for (int v = 0; v < d->nv; v++)
			comp[v] = dot_instr(cg, d, comp[v], ones, pb[v]);
	}
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef pa = dot_pack_a(cg, d, r, k, last);
		for (int v = 0; v < d->nv; v++)
			acc[r * d->nv + v] = dot_instr(cg, d, acc[r * d->nv + v], pa, pb[v]);
	}
}

/* The loop over k's whole groups from `from` while they end by K, its
 * sums phis of cur (on entry and exit); the k it stops at */
static LLVMValueRef
kloop(Cg *cg, Dot *d, LLVMValueRef from, LLVMValueRef K, LLVMValueRef *cur, int n, int nc)
{
	int G = d->k->group;
	IntrinLoop l;
	intrin_loop_open(cg, &l, "k", from, cur, n + nc);
	LLVMValueRef k = l.iv, next = LLVMBuildAdd(cg->b, k, intrin_i64(cg, G), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, next, K, ""), l.body, l.exit);
	LLVMPositionBuilderAtEnd(cg->b, l.body);
	LLVMValueRef c[INTRIN_LOOP_ACC];
	memcpy(c, l.phis, sizeof(LLVMValueRef) * (size_t)(n + nc));
	if (d->bu)
		dot_panel_step(cg, d, k, NULL, c);
	else
		step(cg, d, k, NULL, c, nc ? c + n : NULL);
	intrin_loop_close(cg, &l, next, c, cur);
	return k;
}

/* The k loop of full_block (intrin_taps' body, once a tap): whole
 * groups with the accumulators as phis (in a masked block without
 * AVX512BW, first those of whole_rows, b's rows loaded whole), then the
 * tail group, with a and b where the taps put them. */
typedef struct {
	Dot *d;
	LLVMValueRef K;
	int nacc;               /* the sums, then VNNI's sums of b */
} KSweep;

static void
ksweep(Cg *cg, void *ctx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *acc)
{
	KSweep *w = ctx;
	Dot *d = w->d;
	LLVMValueRef K = w->K, a0 = d->a, b0 = d->b;
	int G = d->k->group, n = d->mr * d->nv, nc = w->nacc - n;
	d->a = a;
	d->b = b;
	/* a's rows once, not at every k step: bf16's, and in the masked
	 * blocks, where each row clamped past mr cost a compare, a select
	 * and a multiply a row and step (6 instructions a vpdpbusd in the
	 * 16 x 16 kernel of a 1 x 1 convolution's 14-column rows: 238 GOP/s,
	 * 328 hoisted; AVX2's vpmaddwd likewise); elsewhere LLVM keeps the
	 * unclamped rows better itself (hoisted there too, a's strided path
	 * spilled) */
	if (d->k->bf16 || (d->mrv && (d->bu || d->words)))
		for (int r = 0; r < d->mr; r++)
			d->arow[r] = dot_a_row(cg, d, r);
	LLVMValueRef k = intrin_i64(cg, 0);
	if (d->nrv && d->words && d->bmax) {
		LLVMValueRef lim = dot_edge_rows(cg, d, b, b0);
		d->bwhole = true;
		k = kloop(cg, d, k, LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, lim, K, ""),
		    lim, K, ""), acc, n, nc);
		d->bwhole = false;
	}
	k = kloop(cg, d, k, K, acc, n, nc);
	LLVMValueRef cur[INTRIN_LOOP_ACC];
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
			dot_panel_step(cg, d, k, last, cur);
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
	d->a = a0;
	d->b = b0;
	memset(d->arow, 0, sizeof d->arow);
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
		dot_panel_prepare(cg, d, K);
		for (int i = 0; i < n; i++)
			init[i] = d->rs[i / d->nv];
	}
	if (d->nrv)
		lane_masks(cg, d);
	if (d->nrv && d->words && !d->bu)
		dot_edge_extent(cg, d, K);
	KSweep w = { d, K, n + nc };
	intrin_taps(cg, &d->taps, d->a, d->b, acc, n + nc, ksweep, &w);
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
		cmask[i] = d->nrv ? LLVMBuildAnd(cg->b, dot_lane_mask(cg, d, i % d->nv * d->k->lanes,
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
	memset(d->arow, 0, sizeof d->arow);
	memset(d->lmask, 0, sizeof d->lmask);
	d->bmax = d->bok = NULL;
}

/* full_block; on the panel path (vnni_panel, where ok and, when a's k
 * stride is not built in, it is 1 at run time) b's rows loaded together
 * where panel is true at run time, else one by one; bf16 pairs with a's
 * k stride not built in: twice, for a stride of 1 at run time (a's pair
 * one 32-bit load) and for any other */
static void
block(Cg *cg, Dot *d, LLVMValueRef K, bool ok, LLVMValueRef panel)
{
	bool unit2 = !ok && d->k->bf16 && d->k->group == 2 && !LLVMIsConstant(d->ask);
	if (!ok && !unit2) {
		full_block(cg, d, K);
		return;
	}
	LLVMBasicBlockRef join = intrin_block(cg, "blockdone");
	LLVMValueRef ask = d->ask;
	if (unit2) {
		/* a's k stride 1 at run time (weights read as they are by a
		 * 1 x 1 convolution): a's pairs one load each */
		LLVMBasicBlockRef unit = intrin_block(cg, "kunit"), other = intrin_block(cg, "kstride");
		LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, ask, intrin_i64(cg, 1), ""),
		    unit, other);
		LLVMPositionBuilderAtEnd(cg->b, other);
		full_block(cg, d, K);
		LLVMBuildBr(cg->b, join);
		LLVMPositionBuilderAtEnd(cg->b, unit);
		d->ask = intrin_i64(cg, 1);
		full_block(cg, d, K);
		d->ask = ask;
		LLVMBuildBr(cg->b, join);
		LLVMPositionBuilderAtEnd(cg->b, join);
		return;
	}
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
    int panelkind, bool taps, LLVMTypeRef *fty)
{
	static const char *const attrs[] = { "noinline", "nounwind", NULL };
	char name[96];
	snprintf(name, sizeof name, "%sdot.%s.%dx%d", CG_KERNEL_PREFIX, k->emit, MR, NR);
	intrin_name_strides(name, sizeof name, '.', cst);
	if (emulate)
		strncat(name, ".emulated", sizeof name - strlen(name) - 1);
	if (panelkind && k->group == 4 && k->lanes == 16)
		strncat(name, panelkind == 1 ? ".vbmi" : ".panel", sizeof name - strlen(name) - 1);
	if (taps)
		strncat(name, ".taps", sizeof name - strlen(name) - 1);
	LLVMValueRef fn = intrin_decl_taps(cg, name, true, k->lanes, attrs, fty, taps);
	if (LLVMCountBasicBlocks(fn))
		return fn;
	IntrinSaved saved;
	LLVMValueRef p[INTRIN_TAPS_PARAMS];
	intrin_begin(cg, &saved, fn, cst, p);
	Dot d;
	memset(&d, 0, sizeof d);
	d.k = k;
	d.emulate = emulate;
	d.i64 = LLVMInt64TypeInContext(cg->ctx);
	d.i32 = LLVMInt32TypeInContext(cg->ctx);
	d.e = k->bf16 ? LLVMInt16TypeInContext(cg->ctx) : LLVMInt8TypeInContext(cg->ctx);
	d.ea = k->a16 ? LLVMInt16TypeInContext(cg->ctx) : d.e;
	d.acc = LLVMVectorType(k->bf16 ? LLVMFloatTypeInContext(cg->ctx) : d.i32, (unsigned)k->lanes);
	d.mr = MR;
	d.nv = NR / k->lanes;
	d.perm = k->group == 2 && d.nv % 2 == 0;
	d.words = !(cg->features && intrin_has_feature(cg->features, "avx512bw"));
	d.vbmi = panelkind == 1;
	/* vnni_panel: zmm VNNI, a's k contiguous (built in, or tested at run
	 * time), one or two vectors of b, AVX512_VBMI's byte permutes (or
	 * their emulation) */
	bool panel = k->group == 4 && k->lanes == 16 && (cst[2] == 1 || cst[2] < 0) &&
	    d.nv <= 2 && panelkind;
	d.c = p[0], d.csi = p[1], d.a = p[2], d.asi = p[3], d.ask = p[4];
	d.b = p[5], d.bsk = p[6], d.first = p[10];
	intrin_taps_params(&d.taps, d.e, taps, p);
	d.taps.aelem = d.ea;
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
	if (!emulate && (!cg->features || !intrin_has_feature(cg->features, k->need))) {
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
	IrFmaArgs fa;
	if (!intrin_decode(e, k->lanes, &mr, &nr, cst) || !ir_fma_args(e, &fa) || mr > MAXR ||
	    nr / k->lanes > MAXV)
		ICE("%s: malformed call", k->emit);
	LLVMTypeRef fty;
	/* TXC_DOT_PANEL=0: never the panel path (a test and measuring switch) */
	const char *pe = getenv("TXC_DOT_PANEL");
	int panelkind = 0;         /* 1: vpermb there, 2: emulated */
	if (!(pe && *pe == '0'))
		panelkind = cg->features && intrin_has_feature(cg->features, "avx512vbmi") ? 1 : emulate ? 2 : 0;
	LLVMValueRef fn = kernel_fn(cg, k, (int)mr, (int)nr, cst, emulate, panelkind, fa.ntaps > 0,
	    &fty);
	intrin_call(cg, e, fn, fty);
	return true;
}
