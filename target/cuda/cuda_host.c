/* cuda_host.c: the host object of a cuda compile.
 *
 * It holds, for the host's triple:
 *   - the entry points, with the C ABI of target.h and device pointers for
 *     the tensors: the CPU backend's entry code (argument and size checks)
 *     with two hooks: a launch (gpu.launch) packs the kernel's parameters
 *     as cuLaunchKernel's kernelParams and calls txrt_cuda_launch with the
 *     grid, block and shared bytes computed here, at run time; a stage
 *     computed at root is allocated with txrt_cuda_malloc (freed with
 *     txrt_cuda_free, also on the failure exit);
 *   - the PTX text of every kernel of the file (cuda_ptx.c);
 *   - every kernel compiled a second time for the host, NAME__emu(void
 *     **params), for libtxrt's emulator: the ids and barriers call the
 *     emulator (txrt_emu_id, txrt_emu_barrier), shared buffers sit in the
 *     block arena it gives (txrt_emu_shared), and every load and store
 *     first calls txrt_emu_access with the buffer's index in the kernel's
 *     table, so the emulator checks bounds and shared-memory races;
 *   - a kernel's 32-bit twin (gpu_index32.c), if it has one, in both forms
 *     after all the others in the table; the launch picks it when its
 *     condition on the sizes holds;
 *   - the module that ties them together (txrt_cuda_module of rt/txrt.h):
 *     { abi, ptx, kernels, nkernels, cache }, each kernel { name, emu,
 *     buffer names, buffer kinds, nbuffers }.
 */
#include <string.h>

#include "target/cuda/cuda_cg.h"

/* What the hooks need: the file's kernels and the module global. */
typedef struct {
	GpuFunc **gf;
	int n;
	LLVMValueRef module;      /* the txrt_cuda_module global */
	/* emulator: the kernel being emitted and its buffer table */
	GpuKernel *k;
	Buffer **bufs; int nbufs, capbufs;
} Host;

/* ---- the entry points ---------------------------------------------------- */

static GpuFunc *
func_of(Host *H, IrFunc *f, int *base)
{
	*base = 0;
	for (int i = 0; i < H->n; i++) {
		if (H->gf[i]->host == f)
			return H->gf[i];
		*base += H->gf[i]->nk;
	}
	ICE("no GPU function for '%s'", f->name);
}

static LLVMValueRef
i64v(Cg *cg, IrExpr *e)
{
	return cg_index(cg, e, 1);
}

static LLVMValueRef
host_launch(Cg *cg, IrExpr *e)
{
	Host *H = cg->hook_ctx;
	if (!cuda_is(e, GPU_LAUNCH))
		return NULL;
	int base;
	GpuFunc *gf = func_of(H, cg->ir, &base);
	int64_t idx;
	if (!ir_is_const(e->call.args[0], &idx) || idx < 0 || idx >= gf->nk)
		ICE("a launch of an unknown kernel");
	GpuKernel *k = gf->k[idx];
	IrFunc *f = k->fn;
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	int n = f->nparams + f->nargs, nt = n + cuda_tma_nparams(k);
	LLVMValueRef arr = cg_entry_alloca(cg, LLVMArrayType(ptr, (unsigned)(nt ? nt : 1)), 8,
	    "kparams");
	for (int i = 0; i < n; i++) {
		LLVMValueRef v, slot;
		if (i < f->nparams) {
			IrType t = f->params[i]->type;
			v = cg_lookup_var(cg, f->params[i]);
			/* to the ABI type: f16 as its bits, bool as a byte */
			if (t.code == TY_F16)
				v = LLVMBuildBitCast(cg->b, v, cg_abi_type(cg, t), "");
			else if (t.code == TY_BOOL)
				v = LLVMBuildZExt(cg->b, v, cg_abi_type(cg, t), "");
			slot = cg_entry_alloca(cg, cg_abi_type(cg, t), 8, f->params[i]->name);
		} else {
			v = cg_lookup_buf(cg, f->args[i - f->nparams]);
			slot = cg_entry_alloca(cg, ptr, 8, f->args[i - f->nparams]->name);
		}
		LLVMBuildStore(cg->b, v, slot);
		LLVMValueRef at = LLVMConstInt(i64, (unsigned)i, 0);
		LLVMBuildStore(cg->b, slot, LLVMBuildGEP2(cg->b, ptr, arr, &at, 1, ""));
	}
	cuda_tma_host(cg, k, arr, n);   /* the tensor maps, tma_on */
	/* the 32-bit twin where its condition holds (gpu_index32.c) */
	LLVMValueRef which = LLVMConstInt(i32, (unsigned)(base + idx), 0);
	if (k->i32)
		which = LLVMBuildSelect(cg->b, cg_expr(cg, k->i32_if),
		    LLVMConstInt(i32, (unsigned)k->i32_slot, 0), which, "kernel");
	LLVMValueRef args[10] = {
		H->module, which,
		i64v(cg, k->grid[0]), i64v(cg, k->grid[1]), i64v(cg, k->grid[2]),
		i64v(cg, k->block[0]), i64v(cg, k->block[1]), i64v(cg, k->block[2]),
		i64v(cg, k->shared_bytes), arr,
	};
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_cuda_launch", &fty);
	LLVMValueRef rc = LLVMBuildCall2(cg->b, fty, fn, args, 10, "rc");
	/* libtxrt has set the message */
	cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstInt(i32, 0, 0), ""), rc, NULL);
	return LLVMConstInt(i32, 0, 0);
}

static bool
host_allocate(Cg *cg, IrStmt *s)
{
	cg_alloc_heap(cg, s, "txrt_cuda_malloc", "txrt_cuda_free");
	return true;
}

/* A constant tensor (a model's weights): its device copy, made by
 * libtxrt on the entry point's first call and kept in a slot of the
 * object for the process's life (txrt_cuda_constant). */
static LLVMValueRef
host_constant(Cg *cg, Buffer *b, LLVMValueRef host)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMValueRef slot = LLVMAddGlobal(cg->mod, ptr, arena_printf(ir_arena, "%s.dev.%s",
	    cg->ir->name, b->name));
	LLVMSetLinkage(slot, LLVMInternalLinkage);
	LLVMSetInitializer(slot, LLVMConstNull(ptr));
	LLVMSetAlignment(slot, 8);
	LLVMValueRef args[3] = { slot, host,
		LLVMConstInt(i64, (unsigned long long)b->tensor->cbytes, 0) };
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_cuda_constant", &fty);
	LLVMValueRef rc = LLVMBuildCall2(cg->b, fty, fn, args, 3, "rc");
	cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstInt(i32, 0, 0), ""), rc, NULL);
	return LLVMBuildLoad2(cg->b, ptr, slot, b->name);
}

static const CgHooks host_hooks = {
	.intrinsic = host_launch,
	.allocate = host_allocate,
	.constant = host_constant,
};

/* ---- the emulator's kernels ------------------------------------------- */

static LLVMValueRef
emu_call(Cg *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, int np,
    LLVMValueRef *args)
{
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)np, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(cg->mod, name, fty);
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(
		    cg->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
	}
	return LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)np, "");
}

static int buf_index(Host *H, Buffer *b);

/* An asynchronous piece of a tile's copy: txrt_emu_copy_async records it,
 * to land at the thread's wait (checked there and at every access before
 * it); false for a synchronous one. */
static bool
emu_copy(Cg *cg, IrExpr *e)
{
	Host *H = cg->hook_ctx;
	int64_t w = 0, async = 0;
	ir_is_const(e->call.args[2], &w);
	ir_is_const(e->call.args[4], &async);
	if (!async)
		return false;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef pt[10] = { i32, ptr, i64, i64, i32, ptr, i64, i64, i32, i64 };
	LLVMValueRef args[10];
	for (int k = 0; k < 2; k++) {
		Buffer *b = e->call.args[k]->load.buf;
		args[4 * k] = LLVMConstInt(i32, (unsigned)buf_index(H, b), 0);
		args[4 * k + 1] = cg_lookup_buf(cg, b);
		args[4 * k + 2] = LLVMBuildSExt(cg->b, cg_index(cg, simplify_expr(gpu_swizzle_index(b,
		    e->call.args[k]->load.idx[0]), NULL), 1), i64, "");
		args[4 * k + 3] = LLVMBuildSExt(cg->b, cg_buffer_elems(cg, b), i64, "");
	}
	args[8] = LLVMConstInt(i32, (unsigned long long)(16 / w), 0);
	args[9] = LLVMBuildSExt(cg->b, cg_index(cg, e->call.args[3], 1), i64, "");
	emu_call(cg, "txrt_emu_copy_async", LLVMVoidTypeInContext(cg->ctx), pt, 10, args);
	return true;
}

/* Hopper's warpgroup calls (gpu_wgmma.c): a wgmma is txrt_emu_wgmma with
 * the descriptors the PTX passes (addresses relative to the arena, which
 * the hardware's shared window is at 1024-byte alignment), the registers
 * of the thread's block and N; the fence and the wait, and the fill and
 * store (the fragment's registers touched), tell the emulator, which
 * reports a fragment touched while a call is in flight, and a write to
 * shared memory that a group in flight reads (txrt_emu_wgmma_wait: the
 * commit and wait, or the wait alone). */
static bool
emu_wgmma(Cg *cg, IrExpr *e)
{
	Host *H = cg->hook_ctx;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0), vd = LLVMVoidTypeInContext(cg->ctx);
	if (gpu_wgmma_sync_is(e) && e->call.nargs >= 2) {
		int64_t kind = 0, count = 0;
		ir_is_const(e->call.args[0], &kind);
		ir_is_const(e->call.args[1], &count);
		if (kind == GPU_WGMMA_FENCE) {
			LLVMValueRef a = LLVMConstInt(i32, 0, 0);
			emu_call(cg, "txrt_emu_wgmma_sync", vd, &i32, 1, &a);
		} else {
			LLVMTypeRef pt[2] = { i32, i32 };
			LLVMValueRef a[2] = {
				LLVMConstInt(i32, kind == GPU_WGMMA_COMMIT_WAIT, 0),
				LLVMConstInt(i32, (unsigned long long)count, 0),
			};
			emu_call(cg, "txrt_emu_wgmma_wait", vd, pt, 2, a);
		}
		return true;
	}
	if (gpu_wgmma_fill_is(e) || gpu_wgmma_store_is(e)) {
		LLVMValueRef a = LLVMConstInt(i32, 2, 0);   /* the registers touched */
		emu_call(cg, "txrt_emu_wgmma_sync", vd, &i32, 1, &a);
		cg_stmt(cg, gpu_wgmma_fill_is(e) ? gpu_wgmma_fill_lanes(e) : gpu_wgmma_store_lanes(e));
		return true;
	}
	if (!gpu_wgmma_is(e))
		return false;
	IrExpr **x = e->call.args;
	LLVMValueRef arena = LLVMBuildPtrToInt(cg->b, emu_call(cg, "txrt_emu_shared", ptr, NULL, 0,
	    NULL), i64, "");
	LLVMTypeRef pt[11] = { i32, ptr, i64, i32, ptr, i64, i64, i64, ptr, i32, i32 };
	LLVMValueRef args[11];
	for (int k = 0; k < 2; k++) {
		int op = k ? 9 : 6;
		Buffer *b = x[op]->load.buf;
		args[3 * k] = LLVMConstInt(i32, (unsigned)buf_index(H, b), 0);
		args[3 * k + 1] = cg_lookup_buf(cg, b);
		args[3 * k + 2] = LLVMBuildSExt(cg->b, cg_buffer_elems(cg, b), i64, "");
		LLVMValueRef addr = LLVMBuildSub(cg->b, LLVMBuildPtrToInt(cg->b,
		    cuda_wgmma_tile(cg, e, op), i64, ""), arena, "");
		args[6 + k] = cuda_wgmma_desc(cg, e, op, addr);
	}
	LLVMValueRef reg = cg_index(cg, simplify_expr(x[3]->load.idx[0], NULL), 1);
	args[8] = LLVMBuildGEP2(cg->b, LLVMFloatTypeInContext(cg->ctx), cg_lookup_buf(cg,
	    x[3]->load.buf), &reg, 1, "");
	args[9] = LLVMConstInt(i32, (unsigned long long)gpu_wgmma_width(e), 0);
	/* flags: 1 bf16, 2 scale-d (accumulate), 8 b transposed */
	args[10] = LLVMConstInt(i32, (x[6]->load.buf->elem == TY_BF16 ? 1 : 0) | 2 | 8, 0);
	emu_call(cg, "txrt_emu_wgmma", vd, pt, 11, args);
	return true;
}

static LLVMValueRef
emu_intrinsic(Cg *cg, IrExpr *e)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	if (cuda_is(e, GPU_TID) || cuda_is(e, GPU_BID)) {
		int which = cuda_dim_arg(e) + (cuda_is(e, GPU_BID) ? 3 : 0);
		LLVMValueRef a = LLVMConstInt(i32, (unsigned)which, 0);
		return LLVMBuildTrunc(cg->b, emu_call(cg, "txrt_emu_id", i64, &i32, 1, &a),
		    cg_index_type(cg), "");
	}
	if (cuda_is(e, GPU_BARRIER)) {
		int64_t n = 0;
		if (e->call.nargs && ir_is_const(e->call.args[0], &n) && n > 0) {
			/* counting n threads (gpu_wspec.c) */
			LLVMValueRef a = LLVMConstInt(i32, (unsigned long long)n, 0);
			emu_call(cg, "txrt_emu_barrier_n", LLVMVoidTypeInContext(cg->ctx), &i32, 1, &a);
		} else {
			emu_call(cg, "txrt_emu_barrier", LLVMVoidTypeInContext(cg->ctx), NULL, 0, NULL);
		}
		return LLVMConstInt(i32, 0, 0);
	}
	if (gpu_copy_is(e) && !emu_copy(cg, e))
		cg_stmt(cg, gpu_copy_scalar(e));   /* synchronous: element by element */
	if (gpu_copy_is(e))
		return LLVMConstInt(i32, 0, 0);
	if (e->call.ck == CALL_INTRINSIC && (!strcmp(e->call.name, ASYNC_COMMIT) ||
	    !strcmp(e->call.name, ASYNC_WAIT))) {
		/* the thread's commit groups, landed at its waits (rt/cuda_emu.c) */
		int64_t n = 0;
		if (e->call.nargs)
			ir_is_const(e->call.args[0], &n);
		LLVMValueRef a = LLVMConstInt(i32, (unsigned long long)n, 0);
		emu_call(cg, e->call.nargs ? "txrt_emu_async_wait" : "txrt_emu_async_commit",
		    LLVMVoidTypeInContext(cg->ctx), &i32, e->call.nargs ? 1 : 0, &a);
		return LLVMConstInt(i32, 0, 0);
	}
	Host *H = cg->hook_ctx;
	LLVMValueRef tma = cuda_tma_emu(cg, H->k, e, gpu_tma_is(e) ?
	    buf_index(H, e->call.args[0]->load.buf) : -1);
	if (tma)
		return tma;
	if (emu_wgmma(cg, e))
		return LLVMConstInt(i32, 0, 0);
	if (gpu_mma_is(e)) {
		/* each lane's 8 results, every access checked (gpu_mma.c) */
		cg_stmt(cg, gpu_mma_lanes(e));
		return LLVMConstInt(i32, 0, 0);
	}
	if (gpu_mma_fill_is(e) || gpu_mma_store_is(e)) {
		/* the lane's registers of a fragment's block (gpu_mma.c) */
		cg_stmt(cg, gpu_mma_fill_is(e) ? gpu_mma_fill_lanes(e) : gpu_mma_store_lanes(e));
		return LLVMConstInt(i32, 0, 0);
	}
	return NULL;
}

static bool
emu_allocate(Cg *cg, IrStmt *s)
{
	Host *H = cg->hook_ctx;
	GpuShared *g = gpu_shared_find(H->k, s->alloc.buf);
	if (!g)
		return false;
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMValueRef arena = emu_call(cg, "txrt_emu_shared", ptr, NULL, 0, NULL);
	LLVMValueRef off = cg_index(cg, g->offset, 1);
	int mark = cg_scope_mark(cg);
	cg_bind_buf(cg, s->alloc.buf, LLVMBuildGEP2(cg->b, LLVMInt8TypeInContext(cg->ctx), arena,
	    &off, 1, s->alloc.buf->name));
	cg_stmt(cg, s->alloc.body);
	cg_scope_pop(cg, mark);
	return true;
}

static int
buf_index(Host *H, Buffer *b)
{
	for (int i = 0; i < H->nbufs; i++)
		if (H->bufs[i] == b)
			return i;
	ICE("buffer '%s' is not in kernel '%s'", b->name, H->k->name);
}

static void
emu_access(Cg *cg, Buffer *b, LLVMValueRef base, LLVMValueRef off, LLVMValueRef active,
    bool write)
{
	Host *H = cg->hook_ctx;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef pt[7] = { i32, ptr, i64, i64, i32, i32, i32 };
	int bits = ir_bits(b->elem);
	LLVMValueRef args[7] = {
		LLVMConstInt(i32, (unsigned)buf_index(H, b), 0), base,
		LLVMBuildSExt(cg->b, off, i64, ""),     /* i32 in a 32-bit kernel */
		LLVMBuildSExt(cg->b, cg_buffer_elems(cg, b), i64, ""),
		LLVMConstInt(i32, (unsigned)(bits < 8 ? 1 : bits / 8), 0),
		LLVMConstInt(i32, write, 0),
		active ? LLVMBuildZExt(cg->b, active, i32, "") : LLVMConstInt(i32, 1, 0),
	};
	emu_call(cg, "txrt_emu_access", LLVMVoidTypeInContext(cg->ctx), pt, 7, args);
}

static const CgHooks emu_hooks = {
	.intrinsic = emu_intrinsic,
	.allocate = emu_allocate,
	.access = emu_access,
};

static void
collect_allocs(Host *H, IrStmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_ALLOCATE:
		*ARENA_PUSH(ir_arena, H->bufs, H->nbufs, H->capbufs) = s->alloc.buf;
		collect_allocs(H, s->alloc.body);
		return;
	case IS_FOR: collect_allocs(H, s->loop.body); return;
	case IS_LET: collect_allocs(H, s->let.body); return;
	case IS_PRODUCE: collect_allocs(H, s->produce.body); return;
	case IS_IF:
		collect_allocs(H, s->ifs.then_s);
		collect_allocs(H, s->ifs.else_s);
		return;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			collect_allocs(H, s->block.stmts[i]);
		return;
	default:
		return;
	}
}

/* One kernel's entry of the table: { name, emu, buffers, kinds, nbuffers }. */
static LLVMValueRef
kernel_entry(Cg *cg, Host *H, GpuKernel *k, LLVMTypeRef kt)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	char *ename = arena_printf(ir_arena, "%s__emu", k->name);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, ename, LLVMFunctionType(
	    LLVMVoidTypeInContext(cg->ctx), &ptr, 1, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	H->k = k;
	H->bufs = NULL;
	H->nbufs = H->capbufs = 0;
	for (int i = 0; i < k->fn->nargs; i++)
		*ARENA_PUSH(ir_arena, H->bufs, H->nbufs, H->capbufs) = k->fn->args[i];
	collect_allocs(H, k->fn->body);
	cg->hooks = &emu_hooks;
	cuda_kernel_fn(cg, k, fn, true);
	LLVMValueRef *names = arena_alloc(ir_arena, (size_t)(H->nbufs + 1) * sizeof *names);
	LLVMValueRef *kinds = arena_alloc(ir_arena, (size_t)(H->nbufs + 1) * sizeof *kinds);
	for (int i = 0; i < H->nbufs; i++) {
		names[i] = cg_cstring(cg, H->bufs[i]->name);
		kinds[i] = LLVMConstInt(i8, H->bufs[i]->scope == SCOPE_SHARED ? 1 :
		    H->bufs[i]->scope == SCOPE_LOCAL ? 2 : 0, 0);
	}
	LLVMValueRef fields[5] = {
		cg_cstring(cg, k->name), fn,
		cg_private_const(cg, LLVMConstArray2(ptr, names, (uint64_t)H->nbufs), ".bufs"),
		cg_private_const(cg, LLVMConstArray2(i8, kinds, (uint64_t)H->nbufs), ".kinds"),
		LLVMConstInt(i32, (unsigned)H->nbufs, 0),
	};
	return LLVMConstNamedStruct(kt, fields, 5);
}

bool
cuda_host_emit(GpuFunc **gf, int n, const char *ptx, const LlvmOptions *o, EmitKind kind,
    bool packed, FILE *out)
{
	LlvmOptions ho = *o;
	ho.codegen_threads = 1;     /* one module: the table refers to every kernel */
	char *triple = NULL;
	LLVMTargetMachineRef tm = llvm_emit_machine(&ho, &triple);
	if (!tm)
		return false;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0), i32 = LLVMInt32TypeInContext(ctx);
	Host H = { gf, n, NULL, NULL, NULL, 0, 0 };
	IrFunc **hosts = arena_alloc(ir_arena, (size_t)(n + 1) * sizeof *hosts);
	int nk = 0, ntwins = 0;
	for (int i = 0; i < n; i++) {
		hosts[i] = gf[i]->host;
		nk += gf[i]->nk;
	}
	/* the 32-bit twins after every kernel (their launches choose them) */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++)
			if (gf[i]->k[j]->i32)
				gf[i]->k[j]->i32_slot = nk + ntwins++;
	Cg cg;
	bool ok = cg_module(&cg, ctx, "txc", NULL, 0, td, triple, false, !o->no_contract, false,
	    !o->no_vector_math, NULL);
	LLVMTypeRef mt = LLVMStructCreateNamed(ctx, "txrt_cuda_module");
	LLVMTypeRef mf[5] = { i32, ptr, ptr, i32, ptr };
	LLVMStructSetBody(mt, mf, 5, 0);
	LLVMTypeRef kt = LLVMStructCreateNamed(ctx, "txrt_cuda_kernel");
	LLVMTypeRef kf[5] = { ptr, ptr, ptr, ptr, i32 };
	LLVMStructSetBody(kt, kf, 5, 0);
	/* the module global first: the entry points refer to it */
	H.module = LLVMAddGlobal(cg.mod, mt, "txc_cuda_module");
	LLVMSetLinkage(H.module, LLVMInternalLinkage);
	cg.hooks = &host_hooks;
	cg.hook_ctx = &H;
	cg.b = LLVMCreateBuilderInContext(ctx);
	int errors = diag_errors();
	cg_entries(&cg, hosts, n);
	for (int i = 0; packed && i < n; i++)
		cg_packed_wrapper(&cg, hosts[i]);
	cg.dlpack_device = 2;     /* kDLCUDA */
	for (int i = 0; o->dlpack && i < n; i++)
		cg_dlpack_entry(&cg, hosts[i]);
	LLVMValueRef *entries = arena_alloc(ir_arena, (size_t)(nk + ntwins + 1) * sizeof *entries);
	int at = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++)
			entries[at++] = kernel_entry(&cg, &H, gf[i]->k[j], kt);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++)
			if (gf[i]->k[j]->i32)
				entries[at++] = kernel_entry(&cg, &H, gf[i]->k[j]->i32, kt);
	LLVMValueRef fields[5] = {
		LLVMConstInt(i32, 1, 0), cg_cstring(&cg, ptx),
		cg_private_const(&cg, LLVMConstArray2(kt, entries, (uint64_t)at), ".kernels"),
		LLVMConstInt(i32, (unsigned)at, 0), LLVMConstNull(ptr),
	};
	LLVMSetInitializer(H.module, LLVMConstNamedStruct(mt, fields, 5));
	LLVMDisposeBuilder(cg.b);
	cg.b = NULL;
	ok = ok && diag_errors() == errors;
	if (ok)
		ok = llvm_write_module(cg.mod, tm, &ho, kind, out);
	LLVMDisposeModule(cg.mod);
	LLVMDisposeTargetData(td);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return ok;
}
