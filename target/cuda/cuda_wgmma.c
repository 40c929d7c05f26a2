/* cuda_wgmma.c: Hopper's warpgroup calls (gpu_wgmma.c) through LLVM: the
 * matrix descriptors, and the PTX as inline assembly (LLVM 19 has no
 * wgmma intrinsics).
 *
 * A wgmma call is one asm statement
 *     wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 {d...}, adesc,
 *         bdesc, p, 1, 1, 0, 1;
 * (.bf16 for bf16; imm-trans-b 1: b is N-major) whose N/2 accumulators
 * are outputs tied to the same registers as inputs, and the fence and the
 * commit and wait around a row of calls (GPU_WGMMA_SYNC: the row is one
 * wgmma group, wgmma.wait_group N its count) are asm statements that take
 * and give back every accumulator of the row, so LLVM keeps the calls
 * between them and reads the results only after the wait.  Fill and
 * store are the threads' registers as IR (gpu_wgmma.c).  The emulator's
 * kernels (cuda_host.c) pass the same descriptors to txrt_emu_wgmma.
 */
#include <string.h>

#include "target/cuda/cuda_cg.h"

LLVMValueRef
cuda_wgmma_tile(Cg *cg, IrExpr *call, int op)
{
	IrExpr *ld = call->call.args[op];
	LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx);
	LLVMValueRef idx = cg_index(cg, simplify_expr(gpu_swizzle_panel(ld->load.buf,
	    ld->load.idx[0]), NULL), 1);
	return LLVMBuildGEP2(cg->b, i16, cg_lookup_buf(cg, ld->load.buf), &idx, 1, "");
}

LLVMValueRef
cuda_wgmma_desc(Cg *cg, IrExpr *call, int op, LLVMValueRef addr)
{
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMValueRef a = LLVMBuildLShr(cg->b, LLVMBuildAnd(cg->b, addr, LLVMConstInt(i64, 0x3ffff, 0),
	    ""), LLVMConstInt(i64, 4, 0), "");
	return LLVMBuildOr(cg->b, a, LLVMConstInt(i64, gpu_wgmma_desc_bits(call, op), 0), "desc");
}

/* The registers s of the blocks c[i] (n[i] / 2 each), as loads. */
static int
acc_loads(IrExpr **c, int64_t *n, int nb, IrExpr **out, int cap)
{
	int k = 0;
	for (int i = 0; i < nb; i++)
		for (int s = 0; s < n[i] / 2 && k < cap; s++)
			out[k++] = gpu_wgmma_slot(c[i], s);
	return k;
}

enum { MAXREGS = 512 };

/* asm text with outputs $0 .. $nacc-1 tied to the accumulators, the other
 * inputs (constraints `inc`) after them; the results stored back. */
static void
tied_asm(Cg *cg, const char *text, LLVMValueRef *in, int nin, const char *inc, IrExpr **acc,
    int nacc)
{
	LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
	LLVMTypeRef *ft = arena_alloc(ir_arena, (size_t)(nacc + nin) * sizeof *ft);
	LLVMTypeRef *pt = arena_alloc(ir_arena, (size_t)(nacc + nin) * sizeof *pt);
	LLVMValueRef *args = arena_alloc(ir_arena, (size_t)(nacc + nin) * sizeof *args);
	char *cons = arena_printf(ir_arena, "%s", "");
	for (int i = 0; i < nacc; i++) {
		ft[i] = f32;
		cons = arena_printf(ir_arena, "%s%s=f", cons, i ? "," : "");
	}
	if (nin)
		cons = arena_printf(ir_arena, "%s,%s", cons, inc);
	for (int i = 0; i < nin; i++) {
		pt[i] = LLVMTypeOf(in[i]);
		args[i] = in[i];
	}
	for (int i = 0; i < nacc; i++) {
		pt[nin + i] = f32;
		args[nin + i] = cg_expr(cg, acc[i]);
		cons = arena_printf(ir_arena, "%s,%d", cons, i);
	}
	cons = arena_printf(ir_arena, "%s,~{memory}", cons);
	LLVMTypeRef ret = LLVMStructTypeInContext(cg->ctx, ft, (unsigned)nacc, 0);
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)(nin + nacc), 0);
	LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), cons, strlen(cons), 1, 0,
	    LLVMInlineAsmDialectATT, 0);
	LLVMValueRef r = LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)(nin + nacc), "");
	int mark = cg_scope_mark(cg);
	for (int i = 0; i < nacc; i++) {
		Var *v = ir_new_var("wg_d", ir_f32);
		cg_bind_var(cg, v, LLVMBuildExtractValue(cg->b, r, (unsigned)i, ""));
		cg_stmt(cg, ir_store(acc[i]->load.buf, acc[i]->load.idx, 1, ir_var(v), NULL));
	}
	cg_scope_pop(cg, mark);
}

/* The shared-window address of operand op's first element. */
static LLVMValueRef
shared_addr(Cg *cg, IrExpr *call, int op)
{
	LLVMValueRef p = LLVMBuildAddrSpaceCast(cg->b, cuda_wgmma_tile(cg, call, op),
	    LLVMPointerTypeInContext(cg->ctx, 3), "");
	return LLVMBuildPtrToInt(cg->b, p, LLVMInt64TypeInContext(cg->ctx), "");
}

static void
ptx_wgmma(Cg *cg, IrExpr *e)
{
	IrExpr **x = e->call.args;
	int64_t n = gpu_wgmma_width(e);
	bool bf = x[6]->load.buf->elem == TY_BF16;
	IrExpr *acc[MAXREGS];
	int nacc = acc_loads(&x[3], &n, 1, acc, MAXREGS);
	char *regs = arena_printf(ir_arena, "%s", "");
	for (int i = 0; i < nacc; i++)
		regs = arena_printf(ir_arena, "%s%s$%d", regs, i ? ", " : "", i);
	const char *t = bf ? "bf16" : "f16";
	char *text = arena_printf(ir_arena, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, $%d, $%d, p, 1, 1, 0, 1;\n"
	    "}", nacc + 2, (long long)n, t, t, regs, nacc,
	    nacc + 1);
	LLVMValueRef in[3] = {
		cuda_wgmma_desc(cg, e, 6, shared_addr(cg, e, 6)),
		cuda_wgmma_desc(cg, e, 9, shared_addr(cg, e, 9)),
		LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 1, 0),   /* scale-d: accumulate */
	};
	tied_asm(cg, text, in, 3, "l,l,r", acc, nacc);
}

static void
ptx_sync(Cg *cg, IrExpr *e)
{
	int64_t kind = 0, count = 0;
	ir_is_const(e->call.args[0], &kind);
	ir_is_const(e->call.args[1], &count);
	int nb = (e->call.nargs - 2) / 2;
	IrExpr **c = arena_alloc(ir_arena, (size_t)(nb + 1) * sizeof *c);
	int64_t *n = arena_alloc(ir_arena, (size_t)(nb + 1) * sizeof *n);
	for (int i = 0; i < nb; i++) {
		c[i] = e->call.args[2 + 2 * i];
		ir_is_const(e->call.args[3 + 2 * i], &n[i]);
	}
	IrExpr *acc[MAXREGS];
	int nacc = acc_loads(c, n, nb, acc, MAXREGS);
	const char *text = kind == GPU_WGMMA_FENCE ? "wgmma.fence.sync.aligned;" :
	    arena_printf(ir_arena, "%swgmma.wait_group.sync.aligned %lld;",
	    kind == GPU_WGMMA_COMMIT_WAIT ? "wgmma.commit_group.sync.aligned;\n" : "",
	    (long long)count);
	tied_asm(cg, text, NULL, 0, "", acc, nacc);
}

LLVMValueRef
cuda_wgmma_ptx(Cg *cg, IrExpr *e)
{
	if (gpu_wgmma_is(e))
		ptx_wgmma(cg, e);
	else if (gpu_wgmma_sync_is(e))
		ptx_sync(cg, e);
	else if (gpu_wgmma_fill_is(e))
		cg_stmt(cg, gpu_wgmma_fill_lanes(e));
	else if (gpu_wgmma_store_is(e))
		cg_stmt(cg, gpu_wgmma_store_lanes(e));
	else
		return NULL;
	return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
}

void
cuda_wgmma_proxy_fence(Cg *cg)
{
	LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), NULL, 0, 0);
	static const char text[] = "fence.proxy.async.shared::cta;", cons[] = "~{memory}";
	LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons,
	    strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	LLVMBuildCall2(cg->b, fty, fn, NULL, 0, "");
}
