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
	LLVMTypeRef f32, v8, i64, ptr;
	int mr, nv;
	LLVMValueRef c, a, b, csi, asi, ask, bsk;
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
vload(Cg *cg, Fma *f, LLVMValueRef p)
{
	LLVMValueRef v = LLVMBuildLoad2(cg->b, f->v8, p, "");
	LLVMSetAlignment(v, 4);
	return v;
}

/* One k step: acc[r][v] += a[r, k] * b[k, v*8 .. v*8+7]. */
static void
step(Cg *cg, Fma *f, LLVMValueRef k, LLVMValueRef *acc)
{
	LLVMValueRef bv[MAXACC], fma_args[3];
	LLVMTypeRef over = f->v8;
	LLVMValueRef brow = gep(cg, f->f32, f->b, mul(cg, k, f->bsk));
	for (int v = 0; v < f->nv; v++)
		bv[v] = vload(cg, f, gep(cg, f->f32, brow, c64(f, v * 8)));
	LLVMValueRef acol = gep(cg, f->f32, f->a, mul(cg, k, f->ask));
	for (int r = 0; r < f->mr; r++) {
		LLVMValueRef ap = gep(cg, f->f32, acol, mul(cg, c64(f, r), f->asi));
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
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, exit);
	memcpy(acc, phis, sizeof(LLVMValueRef) * (size_t)n);
	*kout = k;
}

static void
fma_outer(Cg *cg, IrExpr *e)
{
	IrExpr **x = e->call.args;
	int64_t mr, nr;
	if (e->call.nargs != 12 || !ir_is_const(x[0], &mr) || !ir_is_const(x[1], &nr) ||
	    nr % 8 != 0 || mr * (nr / 8) > MAXACC)
		ICE("fma_outer: malformed call");
	Fma f;
	f.f32 = LLVMFloatTypeInContext(cg->ctx);
	f.v8 = LLVMVectorType(f.f32, 8);
	f.i64 = LLVMInt64TypeInContext(cg->ctx);
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
	LLVMValueRef acc[MAXACC], cptr[MAXACC], k;
	for (int r = 0; r < f.mr; r++)
		for (int v = 0; v < f.nv; v++) {
			LLVMValueRef row = gep(cg, f.f32, f.c, mul(cg, c64(&f, r), f.csi));
			cptr[r * f.nv + v] = gep(cg, f.f32, row, c64(&f, v * 8));
			acc[r * f.nv + v] = vload(cg, &f, cptr[r * f.nv + v]);
		}
	kloop(cg, &f, c64(&f, 0), K, UNROLL, acc, &k);
	kloop(cg, &f, k, K, 1, acc, &k);
	for (int i = 0; i < f.mr * f.nv; i++) {
		LLVMValueRef st = LLVMBuildStore(cg->b, acc[i], cptr[i]);
		LLVMSetAlignment(st, 4);
	}
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
