/* intrin_dot.h: what intrin_dot.c (the integer and bf16 micro-kernels)
 * shares with intrin_panel.c (the zmm VNNI kernel on a packed panel of
 * b): the kinds, one kernel's state, and the steps both build from.
 */
#ifndef TXC_TARGET_LLVM_INTRIN_DOT_H
#define TXC_TARGET_LLVM_INTRIN_DOT_H

#include "target/llvm/cg.h"

typedef struct {
	const char *emit;
	int lanes;              /* 32-bit lanes of a vector: 8 ymm, 16 zmm */
	int group;              /* k summed into one lane per instruction */
	bool bf16;              /* bf16 -> f32 (else i8 -> i32) */
	const char *need;       /* LLVM's name of the instruction set */
	bool a16;               /* a already widened to i16 (i8_madd_a16) */
} DotKind;

enum { MAXV = 8, MAXR = 32 };

typedef struct {
	const DotKind *k;
	LLVMTypeRef i64, i32, e, acc;   /* e: an input element (i8 or i16), acc: the accumulator vector */
	LLVMTypeRef ea;         /* a's element: e, or i16 (DotKind.a16) */
	int mr, nv;
	bool emulate;           /* TXC_DOT_EMULATE: see emulated() */
	bool perm;              /* b's columns in pack_b_pairs' order */
	LLVMValueRef c, a, b, csi, asi, ask, bsk, first;
	/* masked_block: the block's extents (NULL in the full block), and
	 * the lane masks of b's loads built before the loops (lane_masks:
	 * from column v * lanes on, lanes, twice as many, and NR of them) */
	LLVMValueRef mrv, nrv;
	LLVMValueRef lmask[MAXV][3];
	bool words;             /* no AVX512BW: its rows of b by b_row_words */
	/* ...or whole (bwhole) where they end by bmax, b's last element
	 * (bok: b's strides allow it; intrin_dot.c's whole_rows) */
	bool bwhole;
	LLVMValueRef bmax, bok;
	/* vnni_panel: b unsigned, a signed (intrin_panel.c) */
	bool bu;
	bool rows;              /* b's rows apart: loaded one by one */
	bool vbmi;              /* vpermb/vpermi2b there (else emulated) */
	LLVMValueRef idx[2], bmask[2], rs[MAXR];
	/* bf16: a's row pointers, computed once before the k loop (rows
	 * past mr clamped); NULL elsewhere */
	LLVMValueRef arow[MAXR];
	/* a kernel with taps (lower/ir.h): the k loop, and the panel path's
	 * sums of a's rows, run inside their loops (intrin_taps) */
	IntrinTaps taps;
} Dot;

/* ---- intrin_dot.c ----------------------------------------------------------- */
/* shufflevector x, y by the constant mask m[0..n-1] */
LLVMValueRef dot_shuffle(Cg *cg, LLVMValueRef x, LLVMValueRef y, const int *m, int n);
/* Row k + q of b, or (valid false) zero, its address clamped to row
 * last so that it is never out of the operand. */
LLVMValueRef dot_row_index(Cg *cg, LLVMValueRef k, int q, LLVMValueRef last,
    LLVMValueRef *valid);
/* The lanes col .. col + n - 1 that are columns of the block (< nr);
 * Dot.lmask's where it has them */
LLVMValueRef dot_lane_mask(Cg *cg, Dot *d, int col, int n);
/* a[r, k .. k+G-1] broadcast to every lane, as dot_pack_b's lanes are;
 * dot_pack_a: the same for the k group at k (last: the tail's last row) */
LLVMValueRef dot_a_row(Cg *cg, Dot *d, int r);
LLVMValueRef dot_pack_a(Cg *cg, Dot *d, int r, LLVMValueRef k, LLVMValueRef last);
/* The nv vectors of b for the k group at k (last: the tail's last row,
 * NULL in the main loop), in the lanes the kind's instruction takes. */
void dot_pack_b(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *pb);
/* Lanes q, q+g, q+2g... of x (n of them) */
LLVMValueRef dot_every(Cg *cg, LLVMValueRef x, int q, int g, int n);
/* acc + the dot products of pa and pb's lane groups */
LLVMValueRef dot_instr(Cg *cg, Dot *d, LLVMValueRef acc, LLVMValueRef pa, LLVMValueRef pb);

/* ---- intrin_edge.c: b's rows in a partial block without AVX512BW ------ */
/* The columns col .. col + n - 1 (< nr) of b's row at p (its column 0),
 * zero past nr: whole 32-bit words, then the rest of one */
LLVMValueRef dot_edge_row(Cg *cg, Dot *d, LLVMValueRef p, int col, int n);
/* Before the tap loops: d->bmax and d->bok (b's last element in the
 * block; whether b's strides let rows be loaded whole) */
void dot_edge_extent(Cg *cg, Dot *d, LLVMValueRef K);
/* The rows of the tap at b (b0: the block's b) that may be loaded whole,
 * as a bound on k */
LLVMValueRef dot_edge_rows(Cg *cg, Dot *d, LLVMValueRef b, LLVMValueRef b0);

/* ---- intrin_panel.c ------------------------------------------------------ */
/* Before the k loop of the panel path (Dot.bu): the permute indices and
 * masks from b's k stride, and d->rs, minus 128 times each row of a's
 * sum, the accumulators' start. */
void dot_panel_prepare(Cg *cg, Dot *d, LLVMValueRef K);
/* One k group at k of the panel path (last: the tail's last row, then b
 * row by row) into acc[r * nv + v]. */
void dot_panel_step(Cg *cg, Dot *d, LLVMValueRef k, LLVMValueRef last, LLVMValueRef *acc);

#endif
