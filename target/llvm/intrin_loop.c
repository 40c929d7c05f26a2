/* intrin_loop.c: the loops the CPU micro-kernels (intrin_cpu.c's f32
 * kernels, intrin_dot.c's i8 and bf16 ones) build around their
 * accumulators: a counted loop whose accumulators are phis, and the tap
 * loops of a kernel with taps (lower/ir.h), which run the kernel's k
 * loop once a tap with a and b moved by the tap's strides, so that the
 * block of c stays in registers across all taps.
 */
#include <string.h>

#include "target/llvm/cg.h"

void
intrin_no_unroll(Cg *cg, LLVMValueRef br)
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

void
intrin_loop_open(Cg *cg, IntrinLoop *l, const char *name, LLVMValueRef from,
    const LLVMValueRef *acc, int n)
{
	char bn[16];
	if (n > INTRIN_LOOP_ACC)
		ICE("intrin_loop_open: %d accumulators", n);
	l->n = n;
	l->pre = LLVMGetInsertBlock(cg->b);
	l->head = intrin_block(cg, name);
	snprintf(bn, sizeof bn, "%sbody", name);
	l->body = intrin_block(cg, bn);
	snprintf(bn, sizeof bn, "%sdone", name);
	l->exit = intrin_block(cg, bn);
	LLVMBuildBr(cg->b, l->head);
	LLVMPositionBuilderAtEnd(cg->b, l->head);
	l->iv = LLVMBuildPhi(cg->b, LLVMInt64TypeInContext(cg->ctx), name);
	LLVMAddIncoming(l->iv, &from, &l->pre, 1);
	for (int i = 0; i < n; i++) {
		l->phis[i] = LLVMBuildPhi(cg->b, LLVMTypeOf(acc[i]), "acc");
		LLVMAddIncoming(l->phis[i], (LLVMValueRef *)&acc[i], &l->pre, 1);
	}
}

void
intrin_loop_close(Cg *cg, IntrinLoop *l, LLVMValueRef next, LLVMValueRef *cur, LLVMValueRef *acc)
{
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(l->iv, &next, &latch, 1);
	for (int i = 0; i < l->n; i++)
		LLVMAddIncoming(l->phis[i], &cur[i], &latch, 1);
	intrin_no_unroll(cg, LLVMBuildBr(cg->b, l->head));
	LLVMPositionBuilderAtEnd(cg->b, l->exit);
	memcpy(acc, l->phis, sizeof(LLVMValueRef) * (size_t)l->n);
}

/* The tap levels from lev on, a and b already moved by the outer ones. */
static void
taps_from(Cg *cg, const IntrinTaps *t, int lev, LLVMValueRef a, LLVMValueRef b,
    LLVMValueRef *acc, int n, IntrinTapBody *body, void *ctx)
{
	if (lev == t->ntaps) {
		body(cg, ctx, a, b, acc);
		return;
	}
	IntrinLoop l;
	intrin_loop_open(cg, &l, "tap", intrin_i64(cg, 0), acc, n);
	LLVMValueRef i = l.iv;
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, i, t->tap[lev], ""), l.body, l.exit);
	LLVMPositionBuilderAtEnd(cg->b, l.body);
	LLVMValueRef cur[INTRIN_LOOP_ACC];
	memcpy(cur, l.phis, sizeof(LLVMValueRef) * (size_t)n);
	taps_from(cg, t, lev + 1, intrin_gep(cg, t->aelem ? t->aelem : t->elem, a,
	    intrin_mul(cg, i, t->as[lev])),
	    intrin_gep(cg, t->elem, b, intrin_mul(cg, i, t->bs[lev])), cur, n, body, ctx);
	intrin_loop_close(cg, &l, LLVMBuildAdd(cg->b, i, intrin_i64(cg, 1), ""), cur, acc);
}

void
intrin_taps(Cg *cg, const IntrinTaps *t, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *acc,
    int n, IntrinTapBody *body, void *ctx)
{
	taps_from(cg, t, 0, a, b, acc, n, body, ctx);
}

void
intrin_taps_params(IntrinTaps *t, LLVMTypeRef elem, bool taps, const LLVMValueRef *p)
{
	memset(t, 0, sizeof *t);
	t->elem = elem;
	t->ntaps = taps ? FMA_MAX_TAPS : 0;
	for (int i = 0; i < t->ntaps; i++) {
		t->tap[i] = p[INTRIN_PARAMS + 3 * i];
		t->as[i] = p[INTRIN_PARAMS + 3 * i + 1];
		t->bs[i] = p[INTRIN_PARAMS + 3 * i + 2];
	}
}
