/* intrin_cpu.c: the CPU intrinsics of stdlib/intrinsics/cpu.tx, emitted
 * as LLVM vector code (the "how" half of the tensorize table).
 *
 * fma_outer(MR, NR, K, c, cs_i, cs_j, a, as_i, as_k, b, bs_k, bs_j):
 * c[MR x NR] += a[MR x K] * b[K x NR], with cs_j = bs_j = 1 (tensorize.c
 * checked).  The block of c is loaded into MR * NR/8 vector registers
 * (phis of the k loop, so they never go through memory), each k step
 * loads NR/8 vectors of b, broadcasts MR elements of a and issues the
 * fused multiply-adds; c is stored once at the end.  The k loop is
 * unrolled by 4 with a remainder loop.  Each tensor argument is a scalar
 * load at the tile's first element: its address is what is passed.
 *
 * At the edges of C, tensorize.c passes MR and NR as max(min(6, M - i0), 0)
 * and the like: the constant inside the min is the block's full size.
 * Then the full block runs when both extents reach it, and otherwise a
 * masked copy of the same kernel: rows past MR re-read a's last valid row
 * and are never stored, columns past NR are masked off in every load of
 * b and c and in the stores (llvm.masked.load/store: vmaskmovps), so no
 * element outside the block is touched.
 */
#include <string.h>

#include "target/llvm/cg.h"

enum { MAXACC = 16, UNROLL = 4 };

/* The address of a scalar load (flat index after flatten.c). */
static LLVMValueRef
address_of(Cg *cg, IrExpr *ld)
{
	if (ld->kind != IR_LOAD || ld->load.nidx != 1)
		ICE("intrinsic argument is not a flat load");
	Buffer *b = ld->load.buf;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem);
	LLVMValueRef off = cg_index(cg, ld->load.idx[0], 1);
	return LLVMBuildGEP2(cg->b, et, cg_lookup_buf(cg, b), &off, 1, "tile");
}

typedef struct {
	LLVMTypeRef f32, v8, i64, i1, ptr;
	int mr, nv;
	LLVMValueRef c, a, b, csi, asi, ask, bsk;
	/* the masked kernel: a's row per register row, the lane masks of b
	 * (NULL: plain loads) and of c per row */
	LLVMValueRef arow[MAXACC], bmask[MAXACC], cmask[MAXACC][MAXACC];
	bool masked;
} Fma;

static LLVMValueRef
gep(Cg *cg, LLVMTypeRef t, LLVMValueRef p, LLVMValueRef off)
{
	return LLVMBuildGEP2(cg->b, t, p, &off, 1, "");
}

static LLVMValueRef
mul(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildMul(cg->b, a, b, "");
}

static LLVMValueRef
c64(Fma *f, int64_t v)
{
	return LLVMConstInt(f->i64, (unsigned long long)v, 1);
}

static LLVMValueRef
vload(Cg *cg, Fma *f, LLVMValueRef p, LLVMValueRef mask)
{
	if (mask) {
		LLVMTypeRef over[2] = { f->v8, LLVMTypeOf(p) };
		LLVMValueRef args[4] = { p, LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 4, 0),
		    mask, LLVMConstNull(f->v8) };
		return cg_call_intrinsic(cg, "llvm.masked.load", over, 2, args, 4);
	}
	LLVMValueRef v = LLVMBuildLoad2(cg->b, f->v8, p, "");
	LLVMSetAlignment(v, 4);
	return v;
}

static void
vstore(Cg *cg, Fma *f, LLVMValueRef v, LLVMValueRef p, LLVMValueRef mask)
{
	if (mask) {
		LLVMTypeRef over[2] = { f->v8, LLVMTypeOf(p) };
		LLVMValueRef args[4] = { v, p, LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 4, 0),
		    mask };
		cg_call_intrinsic(cg, "llvm.masked.store", over, 2, args, 4);
		return;
	}
	LLVMValueRef st = LLVMBuildStore(cg->b, v, p);
	LLVMSetAlignment(st, 4);
}

/* One k step: acc[r][v] += a[r, k] * b[k, v*8 .. v*8+7]. */
static void
step(Cg *cg, Fma *f, LLVMValueRef k, LLVMValueRef *acc)
{
	LLVMValueRef bv[MAXACC], fma_args[3];
	LLVMTypeRef over = f->v8;
	LLVMValueRef brow = gep(cg, f->f32, f->b, mul(cg, k, f->bsk));
	for (int v = 0; v < f->nv; v++)
		bv[v] = vload(cg, f, gep(cg, f->f32, brow, c64(f, v * 8)), f->bmask[v]);
	LLVMValueRef acol = gep(cg, f->f32, f->a, mul(cg, k, f->ask));
	for (int r = 0; r < f->mr; r++) {
		LLVMValueRef ap = gep(cg, f->f32, acol, mul(cg, f->arow[r], f->asi));
		LLVMValueRef s = LLVMBuildLoad2(cg->b, f->f32, ap, "");
		LLVMSetAlignment(s, 4);
		LLVMValueRef bc = cg_broadcast(cg, s, 8);
		for (int v = 0; v < f->nv; v++) {
			fma_args[0] = bc;
			fma_args[1] = bv[v];
			fma_args[2] = acc[r * f->nv + v];
			acc[r * f->nv + v] = cg_call_intrinsic(cg, "llvm.fma", &over, 1, fma_args, 3);
		}
	}
}

/* Marks a loop latch so that LLVM neither unrolls nor vectorizes it again
 * (the k loop is unrolled here already; re-unrolling only costs compile
 * time). */
static void
no_unroll(Cg *cg, LLVMValueRef br)
{
	const char *props[2] = { "llvm.loop.unroll.disable", "llvm.loop.vectorize.width" };
	LLVMMetadataRef ops[3], kv[2];
	kv[0] = LLVMMDStringInContext2(cg->ctx, props[0], strlen(props[0]));
	ops[1] = LLVMMDNodeInContext2(cg->ctx, kv, 1);
	kv[0] = LLVMMDStringInContext2(cg->ctx, props[1], strlen(props[1]));
	kv[1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 1, 0));
	ops[2] = LLVMMDNodeInContext2(cg->ctx, kv, 2);
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->ctx, NULL, 0);
	ops[0] = tmp;
	LLVMMetadataRef id = LLVMMDNodeInContext2(cg->ctx, ops, 3);
	LLVMMetadataReplaceAllUsesWith(tmp, id);
	LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->ctx, "llvm.loop", 9),
	    LLVMMetadataAsValue(cg->ctx, id));
}

/* for (k = from; k + by <= end; k += by) step...  with the accumulators
 * as phis; acc holds the values on entry and on exit. */
static void
kloop(Cg *cg, Fma *f, LLVMValueRef from, LLVMValueRef end, int by, LLVMValueRef *acc,
    LLVMValueRef *kout)
{
	int n = f->mr * f->nv;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "k");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "kbody");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "kdone");
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, head);
	LLVMValueRef k = LLVMBuildPhi(cg->b, f->i64, "k");
	LLVMAddIncoming(k, &from, &pre, 1);
	LLVMValueRef phis[MAXACC];
	for (int i = 0; i < n; i++) {
		phis[i] = LLVMBuildPhi(cg->b, f->v8, "acc");
		LLVMAddIncoming(phis[i], &acc[i], &pre, 1);
	}
	LLVMValueRef last = LLVMBuildAdd(cg->b, k, c64(f, by), "");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLE, last, end, ""), body, exit);
	LLVMPositionBuilderAtEnd(cg->b, body);
	LLVMValueRef cur[MAXACC];
	memcpy(cur, phis, sizeof(LLVMValueRef) * (size_t)n);
	for (int u = 0; u < by; u++)
		step(cg, f, LLVMBuildAdd(cg->b, k, c64(f, u), ""), cur);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(k, &last, &latch, 1);
	for (int i = 0; i < n; i++)
		LLVMAddIncoming(phis[i], &cur[i], &latch, 1);
	no_unroll(cg, LLVMBuildBr(cg->b, head));
	LLVMPositionBuilderAtEnd(cg->b, exit);
	memcpy(acc, phis, sizeof(LLVMValueRef) * (size_t)n);
	*kout = k;
}

/* The kernel body for the masks and rows set in f: load c, run k, store. */
static void
block(Cg *cg, Fma *f, LLVMValueRef K)
{
	LLVMValueRef acc[MAXACC], cptr[MAXACC], k;
	for (int r = 0; r < f->mr; r++)
		for (int v = 0; v < f->nv; v++) {
			LLVMValueRef row = gep(cg, f->f32, f->c, mul(cg, f->arow[r], f->csi));
			cptr[r * f->nv + v] = gep(cg, f->f32, row, c64(f, v * 8));
			acc[r * f->nv + v] = vload(cg, f, cptr[r * f->nv + v], f->cmask[r][v]);
		}
	if (f->masked) {        /* edges: compact code, one k per trip */
		kloop(cg, f, c64(f, 0), K, 1, acc, &k);
	} else {
		kloop(cg, f, c64(f, 0), K, UNROLL, acc, &k);
		kloop(cg, f, k, K, 1, acc, &k);
	}
	for (int r = 0; r < f->mr; r++)
		for (int v = 0; v < f->nv; v++)
			vstore(cg, f, acc[r * f->nv + v], cptr[r * f->nv + v], f->cmask[r][v]);
}

/* The block's full size behind an edge extent max(min(C, e), 0), or -1. */
static int64_t
capacity(IrExpr *e)
{
	int64_t c, best = -1;
	if (ir_is_const(e, &c))
		return c;
	if (e->kind == IR_MAX) {
		int64_t x = capacity(e->a), y = capacity(e->b);
		return x > y ? x : y;
	}
	if (e->kind == IR_MIN) {
		int64_t x = capacity(e->a), y = capacity(e->b);
		if (x >= 0 && (best < 0 || x < best))
			best = x;
		if (y >= 0 && (best < 0 || y < best))
			best = y;
	}
	return best;
}

/* The masked kernel for runtime extents mr, nr (0 <= mr <= MR, nr <= NR). */
static void
masked_block(Cg *cg, Fma *f, LLVMValueRef mr, LLVMValueRef nr, LLVMValueRef K)
{
	LLVMValueRef nrv = cg_broadcast(cg, nr, 8), ones = LLVMConstAllOnes(LLVMVectorType(f->i1, 8));
	LLVMValueRef last = LLVMBuildSub(cg->b, mr, c64(f, 1), "");
	for (int v = 0; v < f->nv; v++) {
		LLVMValueRef lane[8];
		for (int l = 0; l < 8; l++)
			lane[l] = c64(f, v * 8 + l);
		f->bmask[v] = LLVMBuildICmp(cg->b, LLVMIntSLT, LLVMConstVector(lane, 8), nrv, "cols");
	}
	for (int r = 0; r < f->mr; r++) {
		LLVMValueRef in = LLVMBuildICmp(cg->b, LLVMIntSLT, c64(f, r), mr, "");
		f->arow[r] = LLVMBuildSelect(cg->b, in, c64(f, r), last, "row");
		LLVMValueRef rowm = LLVMBuildSelect(cg->b, in, ones,
		    LLVMConstNull(LLVMVectorType(f->i1, 8)), "");
		for (int v = 0; v < f->nv; v++)
			f->cmask[r][v] = LLVMBuildAnd(cg->b, rowm, f->bmask[v], "");
	}
	f->masked = true;
	block(cg, f, K);
}

static void
fma_outer(Cg *cg, IrExpr *e)
{
	IrExpr **x = e->call.args;
	int64_t mr = capacity(x[0]), nr = capacity(x[1]), c;
	if (e->call.nargs != 12 || mr <= 0 || nr <= 0 || nr % 8 != 0 ||
	    mr * (nr / 8) > MAXACC)
		ICE("fma_outer: malformed call");
	Fma f;
	memset(&f, 0, sizeof f);
	f.f32 = LLVMFloatTypeInContext(cg->ctx);
	f.v8 = LLVMVectorType(f.f32, 8);
	f.i64 = LLVMInt64TypeInContext(cg->ctx);
	f.i1 = LLVMInt1TypeInContext(cg->ctx);
	f.mr = (int)mr;
	f.nv = (int)(nr / 8);
	LLVMValueRef K = cg_index(cg, x[2], 1);
	f.c = address_of(cg, x[3]);
	f.csi = cg_index(cg, x[4], 1);
	f.a = address_of(cg, x[6]);
	f.asi = cg_index(cg, x[7], 1);
	f.ask = cg_index(cg, x[8], 1);
	f.b = address_of(cg, x[9]);
	f.bsk = cg_index(cg, x[10], 1);
	for (int r = 0; r < f.mr; r++)
		f.arow[r] = c64(&f, r);
	bool full = ir_is_const(x[0], &c) && c == mr && ir_is_const(x[1], &c) && c == nr;
	if (full) {
		block(cg, &f, K);
		return;
	}
	/* if (mr == MR && nr == NR) full; else if (mr > 0 && nr > 0) masked */
	LLVMValueRef vm = cg_index(cg, x[0], 1), vn = cg_index(cg, x[1], 1);
	LLVMBasicBlockRef bfull = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "full");
	LLVMBasicBlockRef bedge = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "edge");
	LLVMBasicBlockRef bmask = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "masked");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "blockdone");
	LLVMValueRef isfull = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntEQ, vm, c64(&f, mr), ""),
	    LLVMBuildICmp(cg->b, LLVMIntEQ, vn, c64(&f, nr), ""), "");
	LLVMBuildCondBr(cg->b, isfull, bfull, bedge);
	LLVMPositionBuilderAtEnd(cg->b, bfull);
	block(cg, &f, K);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, bedge);
	LLVMValueRef some = LLVMBuildAnd(cg->b,
	    LLVMBuildICmp(cg->b, LLVMIntSGT, vm, c64(&f, 0), ""),
	    LLVMBuildICmp(cg->b, LLVMIntSGT, vn, c64(&f, 0), ""), "");
	LLVMBuildCondBr(cg->b, some, bmask, done);
	LLVMPositionBuilderAtEnd(cg->b, bmask);
	masked_block(cg, &f, vm, vn, K);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
}

LLVMValueRef
intrin_cpu_emit(Cg *cg, IrExpr *e)
{
	if (!strcmp(e->call.name, "fma_outer"))
		fma_outer(cg, e);
	else
		ICE("intrinsic '%s' has no CPU implementation", e->call.name);
	return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
}
