/* intrin_panel.c: intrin_dot.c's zmm VNNI kernel (i8_vnni_zmm) on a
 * contiguous panel of b.
 *
 * Where b's four rows of a k group lie within 64 * nv bytes (0 <= bsk <= NR:
 * the packed panel BL of the gemm_i8 schedule, bsk = NR), each group is
 * one or two 64-byte loads, put into vpdpbusd's lanes by one vpermb
 * (vpermi2b for 32 columns) with an index computed once from bsk, instead
 * of four loads of a row and six byte shuffles a vector.  b is the
 * unsigned operand (b xor 0x80 = b + 128) and a the signed one, so a's
 * four bytes are a broadcast operand of vpdpbusd straight from memory;
 * the excess, 128 times the sum of a's row, is summed before the k loop
 * (vpdpbusd of 64 bytes of the row by ones: 1/64 of the loop's work per
 * row and vector; in a kernel with taps, over every tap's row), and the
 * row's sums start from minus it.
 */
#include "target/llvm/intrin_dot.h"

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
		src = dot_shuffle(cg, lo, hi, m, 128);
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
			v[o++] = LLVMBuildAdd(cg->b, dot_shuffle(cg, v[i], y, m[0], L),
			    dot_shuffle(cg, v[i], y, m[1], L), "");
		}
		n = o;
		w = h;
	}
	LLVMValueRef seven = cg_broadcast(cg, intrin_i32(cg, 7), L);
	for (int i = 0; i < n; i++) {
		for (int h = w / 2; h >= 1; h /= 2) {   /* within each row's w lanes */
			for (int l = 0; l < L; l++)
				m[0][l] = l ^ h;
			v[i] = LLVMBuildAdd(cg->b, v[i], dot_shuffle(cg, v[i], v[i], m[0], L), "");
		}
		v[i] = LLVMBuildNeg(cg->b, LLVMBuildShl(cg->b, v[i], seven, ""), "");
	}
	int per = L / w;        /* rows a vector */
	for (int r = 0; r < d->mr; r++) {
		for (int l = 0; l < L; l++)
			m[0][l] = r % per * w;
		d->rs[r] = dot_shuffle(cg, v[r / per], v[r / per], m[0], L);
	}
}

/* The sums of a's rows over k < K, added to s: 64 bytes a step by
 * vpdpbusd with ones, the last K % 64 masked (intrin_taps' body: once a
 * tap, a where the tap puts it). */
typedef struct {
	Dot *d;
	LLVMValueRef K, tail;   /* tail: the bytes below K % 64 */
} RowSums;

static void
row_sums(Cg *cg, void *ctx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *s)
{
	(void)b;
	RowSums *w = ctx;
	Dot *d = w->d;
	LLVMValueRef K = w->K, a0 = d->a, rows[MAXR], cur[MAXR];
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx), v64 = LLVMVectorType(i8, 64);
	LLVMValueRef ones = cg_broadcast(cg, intrin_i32(cg, 0x01010101), d->k->lanes);
	d->a = a;
	for (int r = 0; r < d->mr; r++)
		rows[r] = dot_a_row(cg, d, r);
	d->a = a0;
	IntrinLoop l;
	intrin_loop_open(cg, &l, "rsum", intrin_i64(cg, 0), s, d->mr);
	LLVMValueRef k = l.iv, next = LLVMBuildAdd(cg->b, k, intrin_i64(cg, 64), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, next, K, ""), l.body, l.exit);
	LLVMPositionBuilderAtEnd(cg->b, l.body);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef x = intrin_vload(cg, v64, intrin_gep(cg, i8, rows[r], k), 1, NULL);
		cur[r] = dot_instr(cg, d, l.phis[r], ones, LLVMBuildBitCast(cg->b, x, d->acc, ""));
	}
	intrin_loop_close(cg, &l, next, cur, s);
	/* the last K % 64 bytes, masked, where there are some */
	LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef tail = intrin_block(cg, "rsumtail"), join = intrin_block(cg, "rsumjoin");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, k, K, ""), tail, join);
	LLVMPositionBuilderAtEnd(cg->b, tail);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef x = intrin_vload(cg, v64, intrin_gep(cg, i8, rows[r], k), 1, w->tail);
		cur[r] = dot_instr(cg, d, s[r], ones, LLVMBuildBitCast(cg->b, x, d->acc, ""));
	}
	LLVMBasicBlockRef tend = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, join);
	LLVMPositionBuilderAtEnd(cg->b, join);
	for (int r = 0; r < d->mr; r++) {
		LLVMValueRef phi = LLVMBuildPhi(cg->b, d->acc, "rsum");
		LLVMValueRef in[2] = { s[r], cur[r] };
		LLVMBasicBlockRef bbs[2] = { from, tend };
		LLVMAddIncoming(phi, in, bbs, 2);
		s[r] = phi;
	}
}

/* Before the k loop: the permutation indices, the masks of the panel's
 * loads (masked_block: bytes below 3 bsk + nr), minus 128 times each
 * row's sum */
void
dot_panel_prepare(Cg *cg, Dot *d, LLVMValueRef K)
{
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
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
	LLVMValueRef s[MAXR];
	for (int r = 0; r < d->mr; r++)
		s[r] = LLVMConstNull(d->acc);
	/* the tail's mask before the taps (K - k there is K % 64 at every
	 * tap, which LLVM did not see) */
	RowSums w = { d, K, bytes_below(cg, 0, LLVMBuildAnd(cg->b, K, intrin_i64(cg, 63), "")) };
	intrin_taps(cg, &d->taps, d->a, d->b, s, d->mr, row_sums, &w);
	row_totals(cg, d, s);
}

/* One k group at k (last: the tail's last row, then b row by row) */
void
dot_panel_step(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *acc)
{
	LLVMValueRef pb[MAXV];
	if (last) {
		dot_pack_b(cg, d, k, last, pb);
	} else if (d->rows) {   /* four loads of NR bytes, put side by side */
		int NR = d->nv * d->k->lanes, m[64];
		LLVMValueRef row[4], valid;
		for (int q = 0; q < 4; q++) {
			LLVMValueRef kq = dot_row_index(cg, k, q, NULL, &valid);
			LLVMValueRef p = intrin_gep(cg, d->e, d->b, intrin_mul(cg, kq, d->bsk));
			row[q] = intrin_vload(cg, LLVMVectorType(d->e, (unsigned)NR), p, 1,
			    d->nrv ? dot_lane_mask(cg, d, 0, NR) : NULL);
		}
		for (int i = 0; i < 64; i++)
			m[i] = i;
		LLVMValueRef lo = dot_shuffle(cg, row[0], row[1], m, 2 * NR);
		LLVMValueRef hi = dot_shuffle(cg, row[2], row[3], m, 2 * NR);
		if (d->nv == 1) {
			lo = dot_shuffle(cg, lo, hi, m, 64);
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
		LLVMValueRef pa = dot_pack_a(cg, d, r, k, last);
		for (int v = 0; v < d->nv; v++)
			acc[r * d->nv + v] = dot_instr(cg, d, acc[r * d->nv + v], pb[v], pa);
	}
}
