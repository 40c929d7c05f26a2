/* intrin_edge.c: intrin_dot.c's loads of b in a partial block (the edges
 * of C, masked_block) on CPUs without AVX512BW.
 *
 * AVX2 has masked loads of 32-bit elements only, and LLVM turns a masked
 * load of bytes (or of i16) into a test and a branch per element: the 4 x
 * 16 int8 kernel's edge blocks took 57% of a 3 x 3 convolution's time for
 * 14% of its sums, and every block of a 1 x 1 one on 14-column rows ran
 * so (24 GOP/s).  Two ways round it: a row of b whose NR columns end by
 * the last element of b's block is loaded whole (b lies in one flat
 * buffer, so everything between two of its elements is that buffer's;
 * the columns past nr land in sums that are never stored); the few rows
 * left, by 32-bit words and a clamped tail (dot_edge_row).
 */
#include "target/llvm/intrin_dot.h"

static LLVMValueRef
load(Cg *cg, LLVMTypeRef t, LLVMValueRef p)
{
	LLVMValueRef v = LLVMBuildLoad2(cg->b, t, p, "");
	LLVMSetAlignment(v, 1);
	return v;
}

static LLVMValueRef
smin(Cg *cg, LLVMValueRef x, LLVMValueRef y)
{
	return LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, x, y, ""), x, y, "");
}

/* masked_block's row of b (Dot.words): the columns col .. col + n - 1
 * that are < nr of the row at p (its column 0), i8 or i16, zero past nr:
 * the whole 32-bit words of the valid columns in one vpmaskmovd, and the
 * part of a word left (up to 3 bytes or 1 word) from single elements at
 * addresses clamped to column nr - 1 (the block has a column: nothing
 * outside the row is read), shifted into one word, masked, and put in its
 * lane.  Every count and mask but the loads is the same at each k, for
 * LLVM to hoist. */
LLVMValueRef
dot_edge_row(Cg *cg, Dot *d, LLVMValueRef p, int col, int n)
{
	int eb = LLVMGetIntTypeWidth(d->e) / 8, per = 4 / eb, nw = n / per;
	LLVMValueRef nb = smin(cg, LLVMBuildSub(cg->b, d->nrv, intrin_i64(cg, col), ""),
	    intrin_i64(cg, n));
	nb = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, nb, intrin_i64(cg, 0), ""),
	    intrin_i64(cg, 0), nb, "");
	LLVMValueRef whole = LLVMBuildSDiv(cg->b, nb, intrin_i64(cg, per), "");   /* nb >= 0 */
	LLVMValueRef rem = LLVMBuildSub(cg->b, nb, intrin_mul(cg, whole, intrin_i64(cg, per)), "");
	LLVMValueRef lane[16];
	for (int i = 0; i < nw; i++)
		lane[i] = intrin_i64(cg, i);
	LLVMValueRef lanes = LLVMConstVector(lane, (unsigned)nw);
	LLVMValueRef wv = cg_broadcast(cg, whole, nw);
	LLVMTypeRef wt = LLVMVectorType(d->i32, (unsigned)nw);
	LLVMValueRef v = intrin_vload(cg, wt, intrin_gep(cg, d->e, p, intrin_i64(cg, col)), 1,
	    LLVMBuildICmp(cg->b, LLVMIntSLT, lanes, wv, "words"));
	LLVMValueRef word = NULL;
	LLVMValueRef first = LLVMBuildAdd(cg->b, intrin_i64(cg, col),
	    intrin_mul(cg, whole, intrin_i64(cg, per)), "");
	LLVMValueRef lastc = LLVMBuildSub(cg->b, d->nrv, intrin_i64(cg, 1), "");
	for (int t = 0; t < per - 1; t++) {
		LLVMValueRef at = smin(cg, LLVMBuildAdd(cg->b, first, intrin_i64(cg, t), ""), lastc);
		LLVMValueRef x = load(cg, d->e, intrin_gep(cg, d->e, p, at));
		x = LLVMBuildZExt(cg->b, x, d->i32, "");
		if (t)
			x = LLVMBuildShl(cg->b, x, intrin_i32(cg, 8 * eb * t), "");
		word = word ? LLVMBuildOr(cg->b, word, x, "") : x;
	}
	/* the rem elements' bits: (1 << 8 eb rem) - 1, rem < per */
	LLVMValueRef keep = LLVMBuildSub(cg->b, LLVMBuildShl(cg->b, intrin_i32(cg, 1),
	    LLVMBuildTrunc(cg->b, LLVMBuildMul(cg->b, rem, intrin_i64(cg, 8 * eb), ""), d->i32, ""),
	    ""), intrin_i32(cg, 1), "");
	LLVMValueRef tail = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, lanes, wv, ""),
	    cg_broadcast(cg, LLVMBuildAnd(cg->b, word, keep, ""), nw), LLVMConstNull(wt), "");
	v = LLVMBuildOr(cg->b, v, tail, "");
	return LLVMBuildBitCast(cg->b, v, LLVMVectorType(d->e, (unsigned)n), "");
}

/* Dot.bmax and bok for dot_edge_rows, before the tap loops: b's last
 * element of the block (the offset of its row K - 1 in the last tap,
 * column nr - 1), where every stride is >= 0 and b's k stride > 0
 * (bok); elsewhere no row is loaded whole. */
void
dot_edge_extent(Cg *cg, Dot *d, LLVMValueRef K)
{
	LLVMValueRef zero = intrin_i64(cg, 0), one = intrin_i64(cg, 1);
	LLVMValueRef ok = LLVMBuildICmp(cg->b, LLVMIntSGT, d->bsk, zero, "");
	LLVMValueRef end = LLVMBuildAdd(cg->b, intrin_mul(cg, LLVMBuildSub(cg->b, K, one, ""),
	    d->bsk), LLVMBuildSub(cg->b, d->nrv, one, ""), "");
	for (int i = 0; i < d->taps.ntaps; i++) {
		ok = LLVMBuildAnd(cg->b, ok, LLVMBuildICmp(cg->b, LLVMIntSGE, d->taps.bs[i], zero, ""),
		    "");
		end = LLVMBuildAdd(cg->b, end, intrin_mul(cg, LLVMBuildSub(cg->b, d->taps.tap[i], one,
		    ""), d->taps.bs[i]), "");
	}
	d->bmax = end;
	d->bok = ok;
}

/* masked_block without AVX512BW (Dot.words): the rows k whose NR columns
 * from the tap's b end by d->bmax, the last element of b's block (the
 * operand lies in one flat buffer, so everything between two of its
 * elements is that buffer's: such a row is loaded whole, vmovdqu, its
 * columns past nr landing in sums that are never stored); the rows
 * before the first that does not, as a bound on k */
LLVMValueRef
dot_edge_rows(Cg *cg, Dot *d, LLVMValueRef b, LLVMValueRef b0)
{
	LLVMValueRef off = LLVMBuildSub(cg->b, LLVMBuildPtrToInt(cg->b, b, d->i64, ""),
	    LLVMBuildPtrToInt(cg->b, b0, d->i64, ""), "");
	int eb = (int)LLVMGetIntTypeWidth(d->e) / 8;
	if (eb > 1)
		off = LLVMBuildSDiv(cg->b, off, intrin_i64(cg, eb), "");
	LLVMValueRef room = LLVMBuildSub(cg->b, d->bmax, LLVMBuildAdd(cg->b, off,
	    intrin_i64(cg, d->nv * d->k->lanes - 1), ""), "");
	LLVMValueRef step = LLVMBuildSelect(cg->b, d->bok, d->bsk, intrin_i64(cg, 1), "");
	LLVMValueRef rows = LLVMBuildAdd(cg->b, LLVMBuildSDiv(cg->b, room, step, ""),
	    intrin_i64(cg, 1), "");
	LLVMValueRef ok = LLVMBuildAnd(cg->b, d->bok, LLVMBuildICmp(cg->b, LLVMIntSGE, room,
	    intrin_i64(cg, 0), ""), "");
	return LLVMBuildSelect(cg->b, ok, rows, intrin_i64(cg, 0), "");
}
