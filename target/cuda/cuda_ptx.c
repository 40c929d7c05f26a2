/* cuda_ptx.c: GPU kernels to PTX through LLVM's NVPTX backend.
 *
 * Each GpuKernel (after gpu_spmd and gpu_shared) becomes an LLVM function
 * with the PTX kernel calling convention: its variables with the entry
 * point's ABI types (sizes i64, f16 as i16, bool as i8), then its buffers
 * as pointers (noalias; inputs readonly, which gives ld.global.nc).  The
 * body is the CPU backend's statements and expressions (target/llvm) with
 * the hooks below: thread and block ids from the PTX special registers,
 * barriers as bar.sync 0, shared buffers at their offset in one external
 * (dynamic) shared array, and math functions from the PTX instructions
 * (ex2, lg2, sin, cos approximations; tanh and erf built on them), which
 * are within a few ulp of the host's libm for f32.  A kernel with
 * GpuKernel.index32 (gpu_index32.c: the kernel itself, or the 32-bit twin
 * that follows it) computes the IR's i64 values as i32 (Cg.index32),
 * sign-extended only into the addresses.  A constant block size
 * becomes the kernel's .maxntid, so LLVM knows the ids' ranges.  The
 * module is optimised with txc's pipeline and printed as PTX; cuda_kernel_fn
 * is shared with the emulator's copy of the kernels (cuda_host.c).
 */
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "target/cuda/cuda_cg.h"

#define PTX_KERNEL_CC 71   /* LLVMPTXKernelCallConv */

/* ---- shared with the emulator ------------------------------------------ */

void
cuda_kernel_fn(Cg *cg, GpuKernel *k, LLVMValueRef fn, bool packed)
{
	IrFunc *f = k->fn;
	CgFn cf;
	cg->ir = f;
	cg->index32 = k->index32;
	cg_alias_scopes(cg, f);
	cg_fn_begin(cg, &cf, fn);
	LLVMBasicBlockRef body_bb = LLVMGetInsertBlock(cg->b);
	/* the values come from the entry block: move them there */
	LLVMPositionBuilderAtEnd(cg->b, cf.alloca_bb);
	LLVMValueRef *v = arena_alloc(ir_arena, (size_t)(f->nparams + f->nargs + 1) * sizeof *v);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	for (int i = 0; i < f->nparams + f->nargs; i++) {
		if (!packed) {
			v[i] = LLVMGetParam(fn, (unsigned)i);
			continue;
		}
		/* params[i] points to the value (cuLaunchKernel's kernelParams) */
		LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(cg->ctx), (unsigned)i, 0);
		LLVMValueRef slot = LLVMBuildLoad2(cg->b, ptr, LLVMBuildGEP2(cg->b, ptr,
		    LLVMGetParam(fn, 0), &idx, 1, ""), "");
		v[i] = LLVMBuildLoad2(cg->b, i < f->nparams ? cg_abi_type(cg, f->params[i]->type) :
		    ptr, slot, "");
	}
	for (int i = 0; i < f->nparams; i++)
		cg_bind_var(cg, f->params[i], cg_from_abi(cg, f->params[i]->type, v[i]));
	for (int i = 0; i < f->nargs; i++)
		cg_bind_buf(cg, f->args[i], v[f->nparams + i]);
	cuda_tma_bind(cg, k, fn, f->nparams + f->nargs, packed);
	LLVMPositionBuilderAtEnd(cg->b, body_bb);
	cg_stmt(cg, f->body);
	LLVMBuildRetVoid(cg->b);
	LLVMPositionBuilderAtEnd(cg->b, cf.alloca_bb);
	LLVMBuildBr(cg->b, body_bb);
	if (cf.fail_bb || cf.nheap)
		ICE("kernel '%s' has a failure exit or heap buffers", k->name);
	cg->fn = cf.outer;
	cg->nbinds = 0;
	cg->nscoped = 0;
	cg->index32 = false;
}

LLVMTypeRef
cuda_kernel_type(Cg *cg, GpuKernel *k)
{
	IrFunc *f = k->fn;
	int n = f->nparams + f->nargs + cuda_tma_nparams(k);
	LLVMTypeRef *p = arena_alloc(ir_arena, (size_t)(n + 1) * sizeof *p);
	for (int i = 0; i < f->nparams; i++)
		p[i] = cg_abi_type(cg, f->params[i]->type);
	for (int i = 0; i < f->nargs; i++)
		p[f->nparams + i] = LLVMPointerTypeInContext(cg->ctx, 0);
	cuda_tma_param_types(cg, k, p + f->nparams + f->nargs);
	return LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), p, (unsigned)n, 0);
}

/* The intrinsic's dimension argument (0..2). */
int
cuda_dim_arg(IrExpr *e)
{
	int64_t d = 0;
	if (e->call.nargs != 1 || !ir_is_const(e->call.args[0], &d) || d < 0 || d > 2)
		ICE("%s with a bad dimension", e->call.name);
	return (int)d;
}

bool
cuda_is(IrExpr *e, const char *name)
{
	return e->call.ck == CALL_INTRINSIC && !strcmp(e->call.name, name);
}

/* ---- the NVPTX hooks --------------------------------------------------- */

static LLVMValueRef
sreg(Cg *cg, const char *which, int d)
{
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", which, "xyz"[d]);
	LLVMValueRef v = cg_call_intrinsic(cg, name, NULL, 0, NULL, 0);
	return LLVMBuildZExt(cg->b, v, cg_index_type(cg), "");
}

/* Two elements of a or b for one register of an mma: <2 x half> for f16,
 * their bits packed in an i32 for bf16 (what the intrinsics take). */
static LLVMValueRef
mma_pair(Cg *cg, bool bf, LLVMValueRef lo, LLVMValueRef hi)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMTypeRef pair = LLVMVectorType(bf ? LLVMInt16TypeInContext(cg->ctx) :
	    LLVMHalfTypeInContext(cg->ctx), 2);
	LLVMValueRef v = LLVMGetUndef(pair);
	v = LLVMBuildInsertElement(cg->b, v, lo, LLVMConstInt(i32, 0, 0), "");
	v = LLVMBuildInsertElement(cg->b, v, hi, LLVMConstInt(i32, 1, 0), "");
	return bf ? LLVMBuildBitCast(cg->b, v, i32, "") : v;
}

/* One ldmatrix.sync.aligned.m8n8.x4 (.trans) of operand op (6: a, 9: b;
 * gpu_mma.c): the lane's 4 registers, each element beyond the call's
 * extents replaced by zero (an i32 mask a register: fewer live values
 * than a select a half, which made ptxas spill). */
static void
ptx_ldmatrix(Cg *cg, IrExpr *e, int op, bool bf, LLVMValueRef out[4])
{
	LLVMContextRef ctx = cg->ctx;
	LLVMTypeRef i16 = LLVMInt16TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef p3 = LLVMPointerTypeInContext(ctx, 3);
	IrExpr *lane = gpu_id(GPU_TID, 0);
	IrExpr *g = ir_div(lane, ir_i64c(4)), *t = ir_mod(lane, ir_i64c(4));
	LLVMValueRef base = cg_lookup_buf(cg, e->call.args[op]->load.buf);
	Buffer *tile = e->call.args[op]->load.buf;
	LLVMValueRef idx = cg_index(cg, simplify_expr(gpu_swizzle_index(tile,
	    gpu_ldmatrix_row(e, op, lane)), NULL), 1);
	LLVMValueRef p = LLVMBuildGEP2(cg->b, i16, base, &idx, 1, "");
	p = LLVMBuildAddrSpaceCast(cg->b, p, p3, "");
	/* b stored n-major: plain, register m is (n half m & 1, k half m >> 1) */
	bool nt = op == 9 && gpu_mma_b_nt(e), plain = op == 6 || nt;
	LLVMValueRef r = cg_call_intrinsic(cg, plain ?
	    "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16" :
	    "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16", &p3, 1, &p, 1);
	for (int m = 0; m < 4; m++) {
		LLVMValueRef x = LLVMBuildExtractValue(cg->b, r, (unsigned)m, "ldm");
		/* an i32 mask of the halves inside the extents */
		LLVMValueRef mask = NULL;
		for (int q = 0; q < 2; q++) {
			/* a: (g + 8 (m & 1), 2t + q + 8 (m >> 1)); b: (2t + q + 8 (m & 1), g + 8 (m >> 1));
			 * b n-major: (2t + q + 8 (m >> 1), g + 8 (m & 1)) */
			IrExpr *pair = ir_add(ir_mul(t, ir_i64c(2)), ir_i64c(q + 8 * (plain ? m >> 1 : m & 1)));
			IrExpr *one = ir_add(g, ir_i64c(8 * (plain ? m & 1 : m >> 1)));
			IrExpr *ok = op == 6 ? gpu_mma_inside(e, op, one, pair) :
			    gpu_mma_inside(e, op, pair, one);
			LLVMValueRef half = LLVMConstInt(i32, q ? 0xffff0000u : 0xffffu, 0);
			if (ok)
				half = LLVMBuildSelect(cg->b, cg_expr(cg, simplify_expr(ok, NULL)), half,
				    LLVMConstInt(i32, 0, 0), "");
			mask = mask ? LLVMBuildOr(cg->b, mask, half, "") : half;
		}
		if (!LLVMIsConstant(mask))
			x = LLVMBuildAnd(cg->b, x, mask, "");
		/* ptx_mma takes b's registers as (n half) * 2 + (k half) */
		out[nt ? (m & 1) * 2 + (m >> 1) : m] = bf ? x : LLVMBuildBitCast(cg->b, x,
		    LLVMVectorType(LLVMHalfTypeInContext(ctx), 2), "");
	}
}

/* The tensor cores' block (gpu_mma.c): each lane loads its fragments of a,
 * b and c as the m16n8k16 layout assigns them (lane = 4g + t: a's rows g
 * and g + 8, columns 2t, 2t + 1 and 8 more; b's rows 2t, 2t + 1 and 8
 * more, column g; c as gpu_mma_owned says), then two mma.sync (the two
 * halves of the 16 columns) and stores its 8 results.  f16 and bf16
 * inputs have the same layout; only the instruction differs. */
static LLVMValueRef
ptx_mma(Cg *cg, IrExpr *e)
{
	LLVMContextRef ctx = cg->ctx;
	bool bf = gpu_mma_input_type(e) == TY_BF16;
	LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef reg = bf ? i32 : LLVMVectorType(LLVMHalfTypeInContext(ctx), 2);
	LLVMTypeRef ret = LLVMStructTypeInContext(ctx, (LLVMTypeRef[]){ f32, f32, f32, f32 }, 4, 0);
	LLVMTypeRef pt[10] = { reg, reg, reg, reg, reg, reg, f32, f32, f32, f32 };
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, 10, 0);
	const char *name = bf ? "llvm.nvvm.mma.m16n8k16.row.col.bf16" :
	    "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, fty);
	IrExpr *lane = gpu_id(GPU_TID, 0);
	IrExpr *g = ir_div(lane, ir_i64c(4)), *t = ir_mod(lane, ir_i64c(4));
	LLVMValueRef a[4], bm[4];
	bool ldm = gpu_mma_ldmatrix(e);
	if (ldm) {
		ptx_ldmatrix(cg, e, 6, bf, a);
		ptx_ldmatrix(cg, e, 9, bf, bm);
	}
	for (int rs = 0; !ldm && rs < 4; rs++) {
		LLVMValueRef x[2];
		for (int q = 0; q < 2; q++) {
			IrExpr *i = ir_add(g, ir_i64c(8 * (rs & 1)));
			IrExpr *k = ir_add(ir_mul(t, ir_i64c(2)), ir_i64c(q + 8 * (rs >> 1)));
			IrExpr *ld;
			gpu_mma_element(e, i, NULL, NULL, &ld, NULL, k);
			x[q] = cg_expr(cg, ld);
		}
		a[rs] = mma_pair(cg, bf, x[0], x[1]);
	}
	int mark = cg_scope_mark(cg);
	IrStmt *stores[8];
	int ns = 0;
	for (int h = 0; h < 2; h++) {
		LLVMValueRef args[10];
		memcpy(args, a, sizeof a);
		for (int s = 0; s < 2; s++) {
			if (ldm) {
				args[4 + s] = bm[h * 2 + s];
				continue;
			}
			LLVMValueRef x[2];
			for (int q = 0; q < 2; q++) {
				IrExpr *k = ir_add(ir_mul(t, ir_i64c(2)), ir_i64c(q + 8 * s));
				IrExpr *j = ir_add(g, ir_i64c(8 * h)), *ld;
				gpu_mma_element(e, NULL, j, NULL, NULL, &ld, k);
				x[q] = cg_expr(cg, ld);
			}
			args[4 + s] = mma_pair(cg, bf, x[0], x[1]);
		}
		IrExpr *cl[4];
		for (int r = 0; r < 2; r++)
			for (int q = 0; q < 2; q++) {
				cl[r * 2 + q] = gpu_mma_c(e, lane, r, h, q);
				args[6 + r * 2 + q] = cg_expr(cg, cl[r * 2 + q]);
			}
		LLVMValueRef d = LLVMBuildCall2(cg->b, fty, fn, args, 10, "mma");
		for (int x = 0; x < 4; x++) {
			Var *v = ir_new_var("mma_d", ir_f32);
			cg_bind_var(cg, v, LLVMBuildExtractValue(cg->b, d, (unsigned)x, ""));
			stores[ns++] = ir_store(cl[x]->load.buf, cl[x]->load.idx, 1, ir_var(v), NULL);
		}
	}
	for (int x = 0; x < ns; x++)
		cg_stmt(cg, stores[x]);
	cg_scope_pop(cg, mark);
	return LLVMConstInt(i32, 0, 0);
}

/* A piece of a tile's copy (gpu_copy.c): one 16-byte load and store, or
 * cp.async.cg.shared.global.16 with the src-size operand (the bytes past
 * it zero-filled) when async, if both addresses are 16-byte aligned;
 * scalar copies otherwise.  A swizzled destination's piece is moved whole
 * (gpu_swizzle.c keeps the order inside a piece). */
static void
ptx_copy(Cg *cg, IrExpr *e)
{
	LLVMContextRef ctx = cg->ctx;
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef p1 = LLVMPointerTypeInContext(ctx, 1), p3 = LLVMPointerTypeInContext(ctx, 3);
	IrExpr *d = e->call.args[0], *s = e->call.args[1];
	int64_t w = 0, async = 0;
	ir_is_const(e->call.args[2], &w);
	ir_is_const(e->call.args[4], &async);
	int64_t esize = 16 / w;
	/* a swizzled tile's piece: where its first element lives (the piece
	 * starts at a multiple of w there: gpu_copy_spread) */
	LLVMValueRef doff = cg_index(cg, simplify_expr(ir_mul(gpu_swizzle_index(d->load.buf,
	    d->load.idx[0]), ir_i64c(esize)), NULL), 1);
	LLVMValueRef soff = cg_index(cg, simplify_expr(ir_mul(s->load.idx[0], ir_i64c(esize)), NULL), 1);
	LLVMValueRef dp = LLVMBuildGEP2(cg->b, i8, cg_lookup_buf(cg, d->load.buf), &doff, 1, "");
	LLVMValueRef sp = LLVMBuildGEP2(cg->b, i8, cg_lookup_buf(cg, s->load.buf), &soff, 1, "");
	LLVMValueRef valid = cg_expr(cg, e->call.args[3]);
	LLVMValueRef low = LLVMBuildOr(cg->b, LLVMBuildPtrToInt(cg->b, dp, i64, ""),
	    LLVMBuildPtrToInt(cg->b, sp, i64, ""), "");
	LLVMValueRef ok = LLVMBuildICmp(cg->b, LLVMIntEQ, LLVMBuildAnd(cg->b, low,
	    LLVMConstInt(i64, 15, 0), ""), LLVMConstInt(i64, 0, 0), "aligned");
	if (!async)
		ok = LLVMBuildAnd(cg->b, ok, LLVMBuildICmp(cg->b, LLVMIntEQ, valid,
		    LLVMConstInt(LLVMTypeOf(valid), (unsigned long long)w, 0), ""), "");
	LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(ctx, cg->fn->fn, "copy16");
	LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(ctx, cg->fn->fn, "copy1");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, cg->fn->fn, "copied");
	LLVMBuildCondBr(cg->b, ok, fast, slow);
	LLVMPositionBuilderAtEnd(cg->b, fast);
	LLVMValueRef d3 = LLVMBuildAddrSpaceCast(cg->b, dp, p3, "");
	LLVMValueRef s1 = LLVMBuildAddrSpaceCast(cg->b, sp, p1, "");
	if (async) {
		/* past the edge nothing is read: the address stays the buffer's */
		LLVMValueRef none = LLVMBuildICmp(cg->b, LLVMIntSLE, valid,
		    LLVMConstInt(LLVMTypeOf(valid), 0, 0), "");
		s1 = LLVMBuildSelect(cg->b, none, LLVMBuildAddrSpaceCast(cg->b,
		    cg_lookup_buf(cg, s->load.buf), p1, ""), s1, "");
		LLVMValueRef bytes = LLVMBuildTrunc(cg->b, LLVMBuildMul(cg->b, LLVMBuildSelect(cg->b,
		    none, LLVMConstInt(LLVMTypeOf(valid), 0, 0), valid, ""),
		    LLVMConstInt(LLVMTypeOf(valid), (unsigned long long)esize, 0), ""), i32, "");
		LLVMValueRef args[3] = { d3, s1, bytes };
		cg_call_intrinsic(cg, "llvm.nvvm.cp.async.cg.shared.global.16.s", NULL, 0, args, 3);
	} else {
		LLVMTypeRef v4 = LLVMVectorType(i32, 4);
		LLVMValueRef x = LLVMBuildLoad2(cg->b, v4, s1, "");
		LLVMSetAlignment(x, 16);
		LLVMValueRef st = LLVMBuildStore(cg->b, x, d3);
		LLVMSetAlignment(st, 16);
	}
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, slow);
	cg_stmt(cg, gpu_copy_scalar(e));
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
}

static GpuKernel *cur_kernel(Cg *cg);

static LLVMValueRef
ptx_intrinsic(Cg *cg, IrExpr *e)
{
	if (gpu_copy_is(e)) {
		ptx_copy(cg, e);
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	}
	if (e->call.ck == CALL_INTRINSIC && !strcmp(e->call.name, ASYNC_COMMIT)) {
		cg_call_intrinsic(cg, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	}
	if (e->call.ck == CALL_INTRINSIC && !strcmp(e->call.name, ASYNC_WAIT)) {
		int64_t n = 0;
		ir_is_const(e->call.args[0], &n);
		LLVMValueRef a = LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)n, 0);
		cg_call_intrinsic(cg, "llvm.nvvm.cp.async.wait.group", NULL, 0, &a, 1);
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	}
	LLVMValueRef tma = cuda_tma_ptx(cg, cur_kernel(cg), e);
	if (tma)
		return tma;
	if (gpu_mma_is(e))
		return ptx_mma(cg, e);
	LLVMValueRef wg = cuda_wgmma_ptx(cg, e);
	if (wg)
		return wg;
	if (gpu_mma_fill_is(e) || gpu_mma_store_is(e)) {
		cg_stmt(cg, gpu_mma_fill_is(e) ? gpu_mma_fill_lanes(e) : gpu_mma_store_lanes(e));
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	}
	if (cuda_is(e, GPU_TID))
		return sreg(cg, "tid", cuda_dim_arg(e));
	if (cuda_is(e, GPU_BID))
		return sreg(cg, "ctaid", cuda_dim_arg(e));
	if (cuda_is(e, GPU_BARRIER)) {
		/* what the threads wrote (cp.async included) made visible to the
		 * async proxy, which wgmma reads shared memory through */
		if (cur_kernel(cg)->wgmma)
			cuda_wgmma_proxy_fence(cg);
		int64_t n = 0;
		if (e->call.nargs && ir_is_const(e->call.args[0], &n) && n > 0) {
			/* the consumers' barrier of a warp-specialised kernel
			 * (gpu_wspec.c): named barrier 1, n threads */
			char text[48];
			snprintf(text, sizeof text, "bar.sync 1, %lld;", (long long)n);
			LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), NULL, 0, 0);
			LLVMValueRef a = LLVMGetInlineAsm(fty, text, strlen(text), "~{memory}", 9, 1, 0,
			    LLVMInlineAsmDialectATT, 0);
			LLVMBuildCall2(cg->b, fty, a, NULL, 0, "");
		} else {
			cg_call_intrinsic(cg, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
		}
		return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
	}
	return NULL;
}

/* The kernel being emitted (hook_ctx). */
static GpuKernel *
cur_kernel(Cg *cg)
{
	return cg->hook_ctx;
}

static bool
ptx_allocate(Cg *cg, IrStmt *s)
{
	GpuShared *g = gpu_shared_find(cur_kernel(cg), s->alloc.buf);
	if (!g)
		return false;
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
	LLVMValueRef arena = LLVMGetNamedGlobal(cg->mod, "txc_shared");
	if (!arena) {
		arena = LLVMAddGlobalInAddressSpace(cg->mod, LLVMArrayType(i8, 0), "txc_shared", 3);
		LLVMSetLinkage(arena, LLVMExternalLinkage);
		LLVMSetAlignment(arena, 16);
	}
	/* TMA boxes and wgmma's swizzled tiles: the swizzle's 1024-byte
	 * repeat (gpu_shared.c) */
	if (cur_kernel(cg)->ntma || cur_kernel(cg)->wgmma)
		LLVMSetAlignment(arena, 1024);
	LLVMValueRef base = LLVMBuildAddrSpaceCast(cg->b, arena,
	    LLVMPointerTypeInContext(cg->ctx, 0), "");
	LLVMValueRef off = cg_index(cg, g->offset, 1);
	int mark = cg_scope_mark(cg);
	cg_bind_buf(cg, s->alloc.buf, LLVMBuildGEP2(cg->b, i8, base, &off, 1, s->alloc.buf->name));
	cg_stmt(cg, s->alloc.body);
	cg_scope_pop(cg, mark);
	return true;
}

static LLVMValueRef
fconst(Cg *cg, double v)
{
	return LLVMConstReal(LLVMFloatTypeInContext(cg->ctx), v);
}

static LLVMValueRef
nvvm1(Cg *cg, const char *name, LLVMValueRef x)
{
	return cg_call_intrinsic(cg, name, NULL, 0, &x, 1);
}

/* e^x as 2^(x log2 e) */
static LLVMValueRef
ptx_exp(Cg *cg, LLVMValueRef x)
{
	return nvvm1(cg, "llvm.nvvm.ex2.approx.f", LLVMBuildFMul(cg->b, x,
	    fconst(cg, 1.4426950408889634), ""));
}

/* erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7) */
static LLVMValueRef
ptx_erf(Cg *cg, LLVMValueRef x)
{
	LLVMBuilderRef b = cg->b;
	LLVMValueRef ax = cg_call_intrinsic(cg, "llvm.fabs", (LLVMTypeRef[]){ LLVMTypeOf(x) }, 1,
	    &x, 1);
	LLVMValueRef t = LLVMBuildFDiv(b, fconst(cg, 1.0), LLVMBuildFAdd(b, fconst(cg, 1.0),
	    LLVMBuildFMul(b, fconst(cg, 0.3275911), ax, ""), ""), "");
	static const double c[] = { 1.061405429, -1.453152027, 1.421413741, -0.284496736,
		0.254829592 };
	LLVMValueRef p = fconst(cg, c[0]);
	for (int i = 1; i < 5; i++)
		p = LLVMBuildFAdd(b, LLVMBuildFMul(b, p, t, ""), fconst(cg, c[i]), "");
	p = LLVMBuildFMul(b, p, t, "");
	LLVMValueRef e = ptx_exp(cg, LLVMBuildFNeg(b, LLVMBuildFMul(b, ax, ax, ""), ""));
	LLVMValueRef y = LLVMBuildFSub(b, fconst(cg, 1.0), LLVMBuildFMul(b, p, e, ""), "");
	LLVMValueRef neg = LLVMBuildFCmp(b, LLVMRealOLT, x, fconst(cg, 0.0), "");
	return LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, y, ""), y, "erf");
}

static LLVMValueRef
ptx_builtin(Cg *cg, IrExpr *e, LLVMValueRef *a)
{
	Builtin bi = e->call.builtin;
	bool transcendental = bi == BI_EXP || bi == BI_LOG || bi == BI_SIN || bi == BI_COS ||
	    bi == BI_POW || bi == BI_TANH || bi == BI_ERF || bi == BI_SIGMOID;
	if (!transcendental)
		return NULL;
	if (e->type.code != TY_F32 || e->type.lanes != 1) {
		diag_error(e->loc.file ? e->loc : cur_kernel(cg)->loc, "%s on %s in a GPU kernel: "
		    "the cuda target computes exp, log, sin, cos, pow, tanh, erf and sigmoid in "
		    "f32 only", ir_builtin_name(bi), ir_type_str(e->type));
		diag_note(e->loc.file ? e->loc : cur_kernel(cg)->loc, "cast the argument to f32 "
		    "and the result back");
		return LLVMGetUndef(cg_type(cg, e->type));
	}
	LLVMBuilderRef b = cg->b;
	switch (bi) {
	case BI_EXP:
		return ptx_exp(cg, a[0]);
	case BI_LOG:
		return LLVMBuildFMul(b, nvvm1(cg, "llvm.nvvm.lg2.approx.f", a[0]),
		    fconst(cg, 0.6931471805599453), "");
	case BI_SIN:
		return nvvm1(cg, "llvm.nvvm.sin.approx.f", a[0]);
	case BI_COS:
		return nvvm1(cg, "llvm.nvvm.cos.approx.f", a[0]);
	case BI_POW:
		return nvvm1(cg, "llvm.nvvm.ex2.approx.f", LLVMBuildFMul(b, a[1],
		    nvvm1(cg, "llvm.nvvm.lg2.approx.f", a[0]), ""));
	case BI_TANH: {
		/* 1 - 2 / (e^(2x) + 1): exact at the limits */
		LLVMValueRef e2 = ptx_exp(cg, LLVMBuildFMul(b, a[0], fconst(cg, 2.0), ""));
		return LLVMBuildFSub(b, fconst(cg, 1.0), LLVMBuildFDiv(b, fconst(cg, 2.0),
		    LLVMBuildFAdd(b, e2, fconst(cg, 1.0), ""), ""), "tanh");
	}
	case BI_ERF:
		return ptx_erf(cg, a[0]);
	case BI_SIGMOID:
		return LLVMBuildFDiv(b, fconst(cg, 1.0), LLVMBuildFAdd(b, fconst(cg, 1.0),
		    ptx_exp(cg, LLVMBuildFNeg(b, a[0], "")), ""), "sigmoid");
	default:
		return NULL;
	}
}

/* The power of two that an integer index is a multiple of, as its form
 * shows (a sum of multiples of 4 is one; a variable, a division or a
 * remainder, whatever value it takes, is a multiple of 1), at most 2^16. */
static int
pow2_of(IrExpr *e)
{
	int a, b;
	switch (e->kind) {
	case IR_INT:
		if (!e->ival)
			return 16;
		for (a = 0; a < 16 && !(e->ival & ((int64_t)1 << a)); a++)
			;
		return a;
	case IR_ADD: case IR_SUB: case IR_MIN: case IR_MAX:
		a = pow2_of(e->a), b = pow2_of(e->b);
		return a < b ? a : b;
	case IR_MUL:
		a = pow2_of(e->a) + pow2_of(e->b);
		return a > 16 ? 16 : a;
	case IR_SHL:
		if (e->b->kind == IR_INT && e->b->ival >= 0 && e->b->ival < 16) {
			a = pow2_of(e->a) + (int)e->b->ival;
			return a > 16 ? 16 : a;
		}
		return 0;
	case IR_NEG:
		return pow2_of(e->a);
	case IR_SELECT:
		a = pow2_of(e->b), b = pow2_of(e->c);
		return a < b ? a : b;
	case IR_CAST:
		return e->type.code == e->a->type.code || ir_bits(e->type.code) >=
		    ir_bits(e->a->type.code) ? pow2_of(e->a) : 0;
	default:
		return 0;
	}
}

/* A scalar access of a shared buffer: the arena is 16-byte aligned and
 * each buffer's offset in it a multiple of 16 (gpu_shared.c), so an
 * element whose index is a multiple of 4 f32 is 16-byte aligned, and the
 * NVPTX load/store vectorizer may make it and its 3 neighbours one
 * ld.shared.v4.f32.  LLVM finds the same from the index's known bits,
 * but only as deep as its analysis goes (6 operations): an index of
 * several thread ids and a slot (tz/4*64 + ty*8 + ko%2*1024 + 128) is
 * deeper. */
static unsigned
ptx_align(Cg *cg, Buffer *b, IrExpr **idx, int nidx)
{
	if (nidx != 1 || !b->flat || !gpu_shared_find(cur_kernel(cg), b))
		return 0;
	int bits = ir_bits(b->elem), p = pow2_of(idx[0]);
	if (bits < 8 || p > 8)
		return bits < 8 ? 0 : 16;
	int64_t bytes = (int64_t)(bits / 8) << p;
	return bytes >= 16 ? 16 : (unsigned)bytes;
}

static const CgHooks ptx_hooks = {
	.intrinsic = ptx_intrinsic,
	.builtin = ptx_builtin,
	.allocate = ptx_allocate,
	.align = ptx_align,
};

/* nvvm.annotations: !{ptr @fn, !"maxntidx", i32 n} per dimension */
static void
max_threads(Cg *cg, GpuKernel *k, LLVMValueRef fn)
{
	static const char *const keys[] = { "maxntidx", "maxntidy", "maxntidz" };
	for (int d = 0; d < 3; d++) {
		int64_t n;
		if (!ir_is_const(k->block[d], &n))
			return;
	}
	for (int d = 0; d < 3; d++) {
		int64_t n = 1;
		ir_is_const(k->block[d], &n);
		LLVMValueRef ops[3] = {
			fn, LLVMMDStringInContext(cg->ctx, keys[d], (unsigned)strlen(keys[d])),
			LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)n, 0)
		};
		LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations",
		    LLVMMDNodeInContext(cg->ctx, ops, 3));
	}
}

/* TMA (tma(), gpu_tma.c) needs sm_90 and PTX 8.0; false after a
 * diagnostic at each tma() of an older arch. */
static bool
tma_arch(GpuFunc **gf, int n, const char *arch, const char **features)
{
	int num = 0;
	bool ok = true, any = false;
	if (strncmp(arch, "sm_", 3) == 0)
		num = atoi(arch + 3);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++)
			for (int m = 0; m < gf[i]->k[j]->ntma; m++) {
				any = true;
				if (num >= 90)
					continue;
				diag_error(gf[i]->k[j]->tma[m].loc, "tma of '%s' needs --cuda-arch=sm_90 or "
				    "later (the Tensor Memory Accelerator); this compile is for %s",
				    gf[i]->k[j]->tma[m].tile->name, arch);
				ok = false;
			}
	if (any && !**features)
		*features = "+ptx80";   /* LLVM 19 says 7.8 for sm_90 */
	return ok;
}

/* Kernels with wgmma need sm_90a: an error at each one's first call. */
static bool
wgmma_arch(GpuFunc **gf, int n, const char *arch)
{
	bool ok = true;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++) {
			GpuKernel *k = gf[i]->k[j];
			if (!k->wgmma || !strcmp(arch, "sm_90a"))
				continue;
			Loc at = gpu_wgmma_loc(k->fn->body);
			diag_error(at.file ? at : k->loc, "kernel '%s' uses wgmma (Hopper's warpgroup "
			    "tensor cores), which only sm_90a has, but it is compiled for %s", k->name,
			    arch);
			diag_note(at.file ? at : k->loc, "compile with --cuda-arch=sm_90a (the PTX "
			    "then loads on compute capability 9.0 only)");
			ok = false;
		}
	return ok;
}

/* The NVPTX code generator's load/store vectorizer merges consecutive
 * accesses (4 f32 of a row of a shared tile into one ld.shared.v4.f32)
 * only when the first carries the vector's alignment; cg_stmt gives each
 * access its element's.  The alignment is provable here: the shared
 * arena is 16-byte aligned and every buffer's offset in it a multiple of
 * 16 (gpu_shared.c), and the index's low bits are known where its terms
 * are multiples of 4 (tx*8 + 4, a row stride of 128).  infer-address-spaces
 * first turns the generic pointers into shared ones, so that the known
 * bits reach the arena's alignment through its address; infer-alignment
 * then writes the alignment the bits prove on each load and store. */
static LLVMErrorRef
vector_ready(LLVMModuleRef mod, LLVMTargetMachineRef tm)
{
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(mod, "function(infer-address-spaces,infer-alignment)",
	    tm, po);
	LLVMDisposePassBuilderOptions(po);
	return err;
}

char *
cuda_ptx(GpuFunc **gf, int n, const LlvmOptions *o, const CudaOptions *co)
{
	LlvmOptions po = *o;
	po.triple = "nvptx64-nvidia-cuda";
	po.cpu = co && co->arch ? co->arch : "sm_80";
	po.features = co && co->ptx_features ? co->ptx_features : "";
	if (!tma_arch(gf, n, po.cpu, &po.features))
		return NULL;
	if (!wgmma_arch(gf, n, po.cpu))
		return NULL;
	if (!*po.features && !strcmp(po.cpu, "sm_90a"))
		po.features = "+ptx80";   /* wgmma's PTX ISA */
	po.debug = false;
	po.dlpack = false;
	char *triple = NULL;
	LLVMTargetMachineRef tm = llvm_emit_machine(&po, &triple);
	if (!tm)
		return NULL;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	Cg cg;
	char *ptx = NULL;
	bool ok = cg_module_hooked(&cg, ctx, "txc_cuda", NULL, 0, td, triple, !o->no_contract,
	    &ptx_hooks, NULL);
	cg.b = LLVMCreateBuilderInContext(ctx);
	int errors = diag_errors();
	for (int i = 0; ok && i < n; i++)
		for (int j = 0; j < 2 * gf[i]->nk; j++) {
			/* each kernel, then its 32-bit twin if it has one (not
			 * after errors: they would be said twice) */
			GpuKernel *k = j % 2 ? gf[i]->k[j / 2]->i32 : gf[i]->k[j / 2];
			if (!k || (j % 2 && diag_errors() != errors))
				continue;
			LLVMValueRef fn = LLVMAddFunction(cg.mod, k->name, cuda_kernel_type(&cg, k));
			LLVMSetFunctionCallConv(fn, PTX_KERNEL_CC);
			cg_attr(&cg, fn, LLVMAttributeFunctionIndex, "nounwind");
			for (int a = 0; a < k->fn->nargs; a++) {
				unsigned idx = (unsigned)(k->fn->nparams + a + 1);
				cg_attr(&cg, fn, idx, "noalias");
				if (k->fn->args[a]->is_input)
					cg_attr(&cg, fn, idx, "readonly");
			}
			cuda_tma_param_attrs(&cg, k, fn, k->fn->nparams + k->fn->nargs);
			cg.hook_ctx = k;
			cuda_kernel_fn(&cg, k, fn, false);
			max_threads(&cg, k, fn);
		}
	LLVMDisposeBuilder(cg.b);
	cg.b = NULL;
	ok = ok && diag_errors() == errors;
	if (ok) {
		char *msg = NULL;
		if (LLVMVerifyModule(cg.mod, LLVMReturnStatusAction, &msg)) {
			if (getenv("TXC_DUMP_BAD_LLVM"))
				LLVMDumpModule(cg.mod);
			ICE("the cuda backend built an invalid module: %s", msg);
		}
		LLVMDisposeMessage(msg);
		LLVMErrorRef err = llvm_optimise(cg.mod, &po, tm);
		if (!err && po.opt_level > 0)
			err = vector_ready(cg.mod, tm);
		if (err) {
			char *m = LLVMGetErrorMessage(err);
			diag_error(loc_none, "LLVM optimisation of the GPU kernels failed: %s", m);
			LLVMDisposeErrorMessage(m);
			ok = false;
		}
	}
	if (ok && getenv("TXC_DUMP_PTX_IR"))
		LLVMDumpModule(cg.mod);
	LLVMMemoryBufferRef mb = NULL;
	if (ok) {
		char *err = NULL;
		if (LLVMTargetMachineEmitToMemoryBuffer(tm, cg.mod, LLVMAssemblyFile, &err, &mb)) {
			diag_error(loc_none, "LLVM cannot emit PTX: %s", err ? err : "");
			LLVMDisposeMessage(err);
			ok = false;
		} else {
			size_t len = LLVMGetBufferSize(mb);
			ptx = malloc(len + 1);
			if (!ptx)
				diag_fatal("out of memory");
			memcpy(ptx, LLVMGetBufferStart(mb), len);
			ptx[len] = 0;
			LLVMDisposeMemoryBuffer(mb);
		}
	}
	LLVMDisposeModule(cg.mod);
	LLVMDisposeTargetData(td);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return ptx;
}
