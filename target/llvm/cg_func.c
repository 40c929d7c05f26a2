/* cg_func.c: an LLVM module of entry points with the C ABI of target.h.
 *
 *     int NAME(int64_t size..., scalar..., const T *in..., T *out...)
 *
 * Sizes are i64; f16 scalars arrive as their 16 bits (uint16_t in C) and
 * bools as a byte; tensor pointers are noalias (inputs also readonly).
 * The entry point first checks that no tensor pointer is NULL, then runs
 * the body (whose asserts check sizes).  Every function, the entry point
 * or an outlined parallel body, has one failure exit: it frees the heap
 * buffers still live (slots in the entry block, NULL when not live) and
 * returns the code stored in rc_slot; messages go through libtxrt's
 * txrt_set_error, so callers read txrt_last_error().
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

/* ---- names in scope ----------------------------------------------------- */

static void
bind(Cg *cg, Var *v, Buffer *b, LLVMValueRef value)
{
	CgBind *e = ARENA_PUSH(ir_arena, cg->binds, cg->nbinds, cg->capbinds);
	e->var = v;
	e->buf = b;
	e->value = value;
}

void
cg_bind_var(Cg *cg, Var *v, LLVMValueRef value)
{
	bind(cg, v, NULL, value);
}

void
cg_bind_buf(Cg *cg, Buffer *b, LLVMValueRef ptr)
{
	bind(cg, NULL, b, ptr);
}

LLVMValueRef
cg_lookup_var(Cg *cg, Var *v)
{
	for (int i = cg->nbinds - 1; i >= 0; i--)
		if (cg->binds[i].var == v)
			return cg->binds[i].value;
	ICE("variable '%s' used outside its scope", v->name);
}

LLVMValueRef
cg_lookup_buf(Cg *cg, Buffer *b)
{
	for (int i = cg->nbinds - 1; i >= 0; i--)
		if (cg->binds[i].buf == b)
			return cg->binds[i].value;
	ICE("buffer '%s' used outside its allocation", b->name);
}

int
cg_scope_mark(Cg *cg)
{
	return cg->nbinds;
}

void
cg_scope_pop(Cg *cg, int mark)
{
	cg->nbinds = mark;
}

/* ---- libtxrt ------------------------------------------------------------- */

LLVMValueRef
cg_runtime(Cg *cg, const char *name, LLVMTypeRef *fty)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMTypeRef t;
	LLVMValueRef fn;

	if (!strcmp(name, "txrt_parallel_for")) {
		LLVMTypeRef p[4] = { ptr, ptr, i64, i64 };
		t = LLVMFunctionType(i32, p, 4, 0);
	} else if (!strcmp(name, "txrt_alloc") || !strcmp(name, "txrt_cuda_malloc")) {
		t = LLVMFunctionType(ptr, &i64, 1, 0);
	} else if (!strcmp(name, "txrt_free") || !strcmp(name, "txrt_cuda_free")) {
		t = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), &ptr, 1, 0);
	} else if (!strcmp(name, "txrt_cuda_launch")) {
		LLVMTypeRef p[10] = { ptr, i32, i64, i64, i64, i64, i64, i64, i64, ptr };
		t = LLVMFunctionType(i32, p, 10, 0);
	} else if (!strcmp(name, "txrt_vta_run")) {
		LLVMTypeRef p[6] = { ptr, i64, ptr, i32, ptr, ptr };
		t = LLVMFunctionType(i32, p, 6, 0);
	} else if (!strcmp(name, "txrt_cuda_constant")) {
		LLVMTypeRef p[3] = { ptr, ptr, i64 };
		t = LLVMFunctionType(i32, p, 3, 0);
	} else if (!strcmp(name, "txrt_cuda_tensor_map")) {
		LLVMTypeRef p[9] = { ptr, ptr, i32, i32, i64, i64, i32, i32, i32 };
		t = LLVMFunctionType(i32, p, 9, 0);
	} else if (!strcmp(name, "txrt_cuda_mode")) {
		t = LLVMFunctionType(i32, NULL, 0, 0);
	} else if (!strcmp(name, "txrt_cpu_require")) {
		LLVMTypeRef p[2] = { ptr, ptr };
		t = LLVMFunctionType(i32, p, 2, 0);
	} else if (!strcmp(name, "txrt_set_error")) {
		t = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), &ptr, 1, 1);
	} else {
		ICE("unknown libtxrt function %s", name);
	}
	fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(cg->mod, name, t);
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		    LLVMCreateEnumAttribute(cg->ctx,
		    LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
	}
	*fty = t;
	return fn;
}

/* A private constant (a string, a table) initialised with init. */
LLVMValueRef
cg_private_const(Cg *cg, LLVMValueRef init, const char *name)
{
	LLVMValueRef g = LLVMAddGlobal(cg->mod, LLVMTypeOf(init), name);

	LLVMSetInitializer(g, init);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
	return g;
}

LLVMValueRef
cg_cstring(Cg *cg, const char *s)
{
	return cg_private_const(cg, LLVMConstStringInContext(cg->ctx, s, strlen(s), 0), ".str");
}

/* txrt_set_error("%s", msg), msg a pointer to a string. */
static void
set_error(Cg *cg, LLVMValueRef msg)
{
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_set_error", &fty);
	LLVMValueRef args[2] = { cg_cstring(cg, "%s"), msg };

	LLVMBuildCall2(cg->b, fty, fn, args, 2, "");
}

void
cg_set_error(Cg *cg, const char *msg)
{
	set_error(cg, cg_cstring(cg, msg));
}

/* ---- functions ------------------------------------------------------------- */

LLVMValueRef
cg_entry_alloca(Cg *cg, LLVMTypeRef t, unsigned align, const char *name)
{
	LLVMBuilderRef ab = LLVMCreateBuilderInContext(cg->ctx);
	LLVMValueRef a;

	LLVMPositionBuilderAtEnd(ab, cg->fn->alloca_bb);
	a = LLVMBuildAlloca(ab, t, name);
	LLVMSetAlignment(a, align);
	LLVMDisposeBuilder(ab);
	return a;
}

void
cg_fn_begin(Cg *cg, CgFn *fn, LLVMValueRef llfn)
{
	memset(fn, 0, sizeof *fn);
	fn->fn = llfn;
	fn->outer = cg->fn;
	cg->fn = fn;
	fn->alloca_bb = LLVMAppendBasicBlockInContext(cg->ctx, llfn, "entry");
	LLVMPositionBuilderAtEnd(cg->b, LLVMAppendBasicBlockInContext(cg->ctx, llfn, "body"));
}

/* With this many heap buffers freed by txrt_free or more, their slots are
 * one array that the failure exit frees in a loop.  As separate slots,
 * LLVM turns each into a value with a phi in the failure exit over every
 * failing check after its allocation: n buffers and as many checks (a
 * pipeline of n stages at the root) make n * n phi operands, and the code
 * generator's time grows with their square (a 200-stage pipeline took
 * seconds in the control flow optimizer and register coalescer). */
enum { HEAP_ARRAY_MIN = 4 };

/* Ends the current function: the normal path returns 0. */
void
cg_fn_end(Cg *cg)
{
	CgFn *fn = cg->fn;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMBasicBlockRef body = LLVMGetNextBasicBlock(fn->alloca_bb);
	int nplain = 0;

	LLVMBuildRet(cg->b, LLVMConstInt(i32, 0, 0));
	LLVMPositionBuilderAtEnd(cg->b, fn->alloca_bb);
	for (int i = 0; i < fn->nheap; i++)
		nplain += !fn->heap[i].free_fn;
	LLVMTypeRef arrt = LLVMArrayType(ptr, (unsigned)nplain);
	LLVMValueRef arr = NULL;
	if (nplain >= HEAP_ARRAY_MIN) {
		/* the plain slots become the array's elements */
		arr = LLVMBuildAlloca(cg->b, arrt, "heap");
		LLVMSetAlignment(arr, 8);
		for (int i = 0, k = 0; i < fn->nheap; i++) {
			if (fn->heap[i].free_fn)
				continue;
			LLVMValueRef idx[2] = { LLVMConstInt(i64, 0, 0), LLVMConstInt(i64, (unsigned)k++, 0) };
			LLVMValueRef el = LLVMBuildGEP2(cg->b, arrt, arr, idx, 2, "slot");
			LLVMReplaceAllUsesWith(fn->heap[i].slot, el);
			LLVMInstructionEraseFromParent(fn->heap[i].slot);
			fn->heap[i].slot = el;
		}
	}
	/* heap slots start empty */
	for (int i = 0; i < fn->nheap; i++)
		LLVMBuildStore(cg->b, LLVMConstNull(ptr), fn->heap[i].slot);
	LLVMBuildBr(cg->b, body);
	if (fn->fail_bb) {
		LLVMTypeRef fty;
		LLVMPositionBuilderAtEnd(cg->b, fn->fail_bb);
		for (int i = 0; i < fn->nheap; i++) {
			if (arr && !fn->heap[i].free_fn)
				continue;
			LLVMValueRef fr = cg_runtime(cg, fn->heap[i].free_fn ? fn->heap[i].free_fn :
			    "txrt_free", &fty);
			LLVMValueRef p = LLVMBuildLoad2(cg->b, ptr, fn->heap[i].slot, "");
			LLVMBuildCall2(cg->b, fty, fr, &p, 1, "");
		}
		if (arr) {   /* for (k = 0; k < nplain; k++) txrt_free(heap[k]); */
			LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
			LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(cg->ctx, fn->fn, "free");
			LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, fn->fn, "freed");
			LLVMBuildBr(cg->b, loop);
			LLVMPositionBuilderAtEnd(cg->b, loop);
			LLVMValueRef k = LLVMBuildPhi(cg->b, i64, "k");
			LLVMValueRef idx[2] = { LLVMConstInt(i64, 0, 0), k };
			LLVMValueRef p = LLVMBuildLoad2(cg->b, ptr,
			    LLVMBuildGEP2(cg->b, arrt, arr, idx, 2, ""), "");
			LLVMValueRef fr = cg_runtime(cg, "txrt_free", &fty);
			LLVMBuildCall2(cg->b, fty, fr, &p, 1, "");
			LLVMValueRef next = LLVMBuildAdd(cg->b, k, LLVMConstInt(i64, 1, 0), "");
			LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
			LLVMAddIncoming(k, &zero, &from, 1);
			LLVMAddIncoming(k, &next, &loop, 1);
			LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, next,
			    LLVMConstInt(i64, (unsigned)nplain, 0), ""), loop, done);
			LLVMPositionBuilderAtEnd(cg->b, done);
		}
		LLVMBuildRet(cg->b, LLVMBuildLoad2(cg->b, i32, fn->rc_slot, "rc"));
	}
	cg->fn = fn->outer;
}

/* When cond holds, a new error block: the builder is left in it, and the
 * block the normal path goes on in is returned (for leave_with). */
static LLVMBasicBlockRef
error_block(Cg *cg, LLVMValueRef cond)
{
	CgFn *fn = cg->fn;

	if (!fn->fail_bb) {
		fn->fail_bb = LLVMAppendBasicBlockInContext(cg->ctx, fn->fn, "fail");
		fn->rc_slot = cg_entry_alloca(cg, LLVMInt32TypeInContext(cg->ctx), 4, "rc");
	}
	LLVMBasicBlockRef eb = LLVMAppendBasicBlockInContext(cg->ctx, fn->fn, "error");
	LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(cg->ctx, fn->fn, "ok");
	LLVMBuildCondBr(cg->b, cond, eb, cont);
	LLVMPositionBuilderAtEnd(cg->b, eb);
	return cont;
}

/* Ends an error block: the function fails with rc; the builder goes on
 * in cont. */
static void
leave_with(Cg *cg, LLVMValueRef rc, LLVMBasicBlockRef cont)
{
	LLVMBuildStore(cg->b, rc, cg->fn->rc_slot);
	LLVMBuildBr(cg->b, cg->fn->fail_bb);
	LLVMPositionBuilderAtEnd(cg->b, cont);
}

void
cg_fail_if(Cg *cg, LLVMValueRef cond, LLVMValueRef rc, const char *msg)
{
	LLVMBasicBlockRef cont = error_block(cg, cond);
	if (msg)
		cg_set_error(cg, msg);
	leave_with(cg, rc, cont);
}

void
cg_fail_if_fmt(Cg *cg, LLVMValueRef cond, LLVMValueRef rc, const char *fmt,
    LLVMValueRef *args, int nargs)
{
	LLVMBasicBlockRef cont = error_block(cg, cond);
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_set_error", &fty);
	LLVMValueRef *a = arena_alloc(ir_arena, (size_t)(nargs + 1) * sizeof *a);
	a[0] = cg_cstring(cg, fmt);
	for (int i = 0; i < nargs; i++)
		a[i + 1] = args[i];
	LLVMBuildCall2(cg->b, fty, fn, a, (unsigned)nargs + 1, "");
	leave_with(cg, rc, cont);
}

/* The ABI type of a size or scalar parameter. */
LLVMTypeRef
cg_abi_type(Cg *cg, IrType t)
{
	if (t.code == TY_F16)
		return LLVMInt16TypeInContext(cg->ctx);
	if (t.code == TY_BOOL)
		return LLVMInt8TypeInContext(cg->ctx);
	if (t.code == TY_I64)     /* also under index32 */
		return LLVMInt64TypeInContext(cg->ctx);
	return cg_type(cg, t);
}

/* The value of a parameter received with its ABI type. */
LLVMValueRef
cg_from_abi(Cg *cg, IrType t, LLVMValueRef v)
{
	if (t.code == TY_F16)
		return LLVMBuildBitCast(cg->b, v, cg_type(cg, t), "");
	if (t.code == TY_BOOL)
		return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	if (t.code == TY_I64 && cg->index32)
		return LLVMBuildTrunc(cg->b, v, cg_type(cg, t), "");
	return v;
}

static LLVMTypeRef
entry_type(Cg *cg, IrFunc *f)
{
	int n = f->nparams + f->nargs;
	LLVMTypeRef *p = arena_alloc(ir_arena, (n + 1) * sizeof *p);

	for (int i = 0; i < f->nparams; i++)
		p[i] = cg_abi_type(cg, f->params[i]->type);
	for (int i = 0; i < f->nargs; i++)
		p[f->nparams + i] = LLVMPointerTypeInContext(cg->ctx, 0);
	return LLVMFunctionType(LLVMInt32TypeInContext(cg->ctx), p, n, 0);
}

void
cg_attr(Cg *cg, LLVMValueRef fn, unsigned idx, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(cg->ctx, kind, 0));
}

/* The entry checks as one test: when any of bad[0..n) holds, the first
 * one that does sets its message and leaves with its code.  The checks
 * are bits of a mask; one branch tests it, and the failure block looks
 * the first set bit's message and code up in two constant tables.  A
 * block and a call per check, as cg_fail_if makes them, cost a kernel
 * with a dozen size parameters a tenth of its compile time (LLVM's code
 * generator merging their blocks). */
static void
fail_first(Cg *cg, int n, LLVMValueRef *bad, const int *rc, const char **msg)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);

	for (int at = 0; at < n; at += 64) {
		int m = n - at < 64 ? n - at : 64;
		if (m == 1) {
			cg_fail_if(cg, bad[at], LLVMConstInt(i32, (unsigned)rc[at], 0), msg[at]);
			continue;
		}
		LLVMValueRef mask = LLVMBuildZExt(cg->b, bad[at], i64, "");
		for (int i = 1; i < m; i++)
			mask = LLVMBuildOr(cg->b, mask, LLVMBuildShl(cg->b,
			    LLVMBuildZExt(cg->b, bad[at + i], i64, ""), LLVMConstInt(i64, (unsigned)i, 0),
			    ""), "");
		LLVMBasicBlockRef cont = error_block(cg, LLVMBuildICmp(cg->b, LLVMIntNE, mask,
		    LLVMConstInt(i64, 0, 0), ""));
		LLVMValueRef *msgs = arena_alloc(ir_arena, (size_t)m * sizeof *msgs);
		LLVMValueRef *codes = arena_alloc(ir_arena, (size_t)m * sizeof *codes);
		for (int i = 0; i < m; i++) {
			msgs[i] = cg_cstring(cg, msg[at + i]);
			codes[i] = LLVMConstInt(i32, (unsigned)rc[at + i], 0);
		}
		LLVMValueRef tm = cg_private_const(cg, LLVMConstArray2(ptr, msgs, (uint64_t)m), ".tab");
		LLVMValueRef tc = cg_private_const(cg, LLVMConstArray2(i32, codes, (uint64_t)m), ".tab");
		LLVMValueRef args[2] = { mask, LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0) };
		LLVMValueRef first = cg_call_intrinsic(cg, "llvm.cttz", &i64, 1, args, 2);
		LLVMValueRef at_m = LLVMBuildGEP2(cg->b, ptr, tm, &first, 1, "");
		LLVMValueRef at_c = LLVMBuildGEP2(cg->b, i32, tc, &first, 1, "");
		set_error(cg, LLVMBuildLoad2(cg->b, ptr, at_m, ""));
		leave_with(cg, LLVMBuildLoad2(cg->b, i32, at_c, ""), cont);
	}
}

LLVMValueRef
cg_no_elements(Cg *cg, Buffer *b)
{
	LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx);
	LLVMValueRef any = LLVMConstInt(i1, 0, 0);
	for (int k = 0; k < b->ndims; k++) {
		if (!b->extent[k])
			return LLVMConstInt(i1, 1, 0);
		LLVMValueRef e = cg_expr(cg, b->extent[k]);
		any = LLVMBuildOr(cg->b, any, LLVMBuildICmp(cg->b, LLVMIntEQ, e,
		    LLVMConstNull(LLVMTypeOf(e)), ""), "");
	}
	return any;
}

/* A constant tensor (tx.5 CONSTANTS): its bytes as a private, read-only
 * global aligned to 64 bytes (a cache line, any vector load). */
static LLVMValueRef
const_global(Cg *cg, IrFunc *f, Buffer *b)
{
	Tensor *t = b->tensor;
	LLVMValueRef init = LLVMConstStringInContext(cg->ctx, (const char *)t->cdata,
	    (unsigned)t->cbytes, 1);
	LLVMValueRef g = LLVMAddGlobal(cg->mod, LLVMTypeOf(init),
	    arena_printf(ir_arena, "%s.const.%s", f->name, b->name));
	LLVMSetInitializer(g, init);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	LLVMSetUnnamedAddr(g, 1);
	LLVMSetAlignment(g, 64);
	return g;
}

void
cg_baseline(Cg *cg, LLVMValueRef fn)
{
	if (!cg->isa)
		return;
	static const char cpu[] = "x86-64";
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(cg->ctx,
	    "target-cpu", 10, cpu, (unsigned)strlen(cpu)));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(cg->ctx,
	    "target-features", 15, "", 0));
}

/* Before anything else: whether the CPU has the instruction sets the
 * module is compiled for (rt/cpu.c), asked once, the answer kept in the
 * object; TXRT_ERR_CPU with libtxrt's message when it lacks one. */
static void
isa_check(Cg *cg, IrFunc *f)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	/* one a function, so that the parts of a split module (llvm_split.c)
	 * share none */
	LLVMValueRef ok = LLVMAddGlobal(cg->mod, i32, arena_printf(ir_arena, "%s.cpu_ok", f->name));
	LLVMSetLinkage(ok, LLVMInternalLinkage);
	LLVMSetInitializer(ok, LLVMConstInt(i32, 0, 0));
	LLVMSetAlignment(ok, 4);
	LLVMValueRef seen = LLVMBuildLoad2(cg->b, i32, ok, "cpu_ok");
	LLVMSetOrdering(seen, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(seen, 4);
	LLVMBasicBlockRef ask = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "cpu_ask");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "cpu_known");
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntEQ, seen, LLVMConstInt(i32, 1, 0), ""),
	    done, ask);
	LLVMPositionBuilderAtEnd(cg->b, ask);
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_cpu_require", &fty);
	LLVMValueRef args[2] = { cg_cstring(cg, cg->isa), cg_cstring(cg, f->name) };
	LLVMValueRef rc = LLVMBuildCall2(cg->b, fty, fn, args, 2, "");
	cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstInt(i32, 0, 0), ""), rc, NULL);
	LLVMValueRef st = LLVMBuildStore(cg->b, LLVMConstInt(i32, 1, 0), ok);
	LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(st, 4);
	LLVMBuildBr(cg->b, done);
	LLVMPositionBuilderAtEnd(cg->b, done);
}

static void
gen_entry(Cg *cg, IrFunc *f)
{
	LLVMValueRef fn = LLVMAddFunction(cg->mod, f->name, entry_type(cg, f));
	CgFn cf;

	cg->ir = f;
	cg->npar = 0;
	cg_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
	for (int i = 0; i < f->nargs; i++) {
		unsigned idx = f->nparams + i + 1;
		cg_attr(cg, fn, idx, "noalias");
		if (f->args[i]->is_input)
			cg_attr(cg, fn, idx, "readonly");
	}
	cg_alias_scopes(cg, f);
	cg_fn_begin(cg, &cf, fn);
	if (cg->dib)
		cf.di_scope = cg_debug_subprogram(cg, f->name,
		    f->kernel ? f->kernel->loc : loc_none, fn);
	cg_debug_loc(cg, f->kernel ? f->kernel->loc : loc_none);
	for (int i = 0; i < f->nparams; i++) {
		LLVMValueRef p = LLVMGetParam(fn, i);
		LLVMSetValueName2(p, f->params[i]->name, strlen(f->params[i]->name));
		cg_bind_var(cg, f->params[i], cg_from_abi(cg, f->params[i]->type, p));
	}
	if (cg->isa)
		isa_check(cg, f);
	/* the checks: the sizes (signs, -D values, no overflow: what the
	 * no-elements tests below compute is then in range), no NULL tensor,
	 * then the body's other leading asserts */
	IrStmt *body = f->body;
	int nas = 0, n = 0, nsz = ir_size_checks(body);
	while (body->kind == IS_BLOCK && nas < body->block.n &&
	    body->block.stmts[nas]->kind == IS_ASSERT)
		nas++;
	LLVMValueRef *bad = arena_alloc(ir_arena, (size_t)(f->nargs + nas + 1) * sizeof *bad);
	int *rc = arena_alloc(ir_arena, (size_t)(f->nargs + nas + 1) * sizeof *rc);
	const char **msg = arena_alloc(ir_arena, (size_t)(f->nargs + nas + 1) * sizeof *msg);
	for (int i = 0; i < nsz; i++, n++) {
		IrStmt *a = body->block.stmts[i];
		bad[n] = LLVMBuildNot(cg->b, cg_expr(cg, a->assrt.cond), "");
		rc[n] = a->assrt.code;
		msg[n] = a->assrt.msg ? a->assrt.msg : "assertion failed";
	}
	for (int i = 0; i < f->nargs; i++, n++) {
		Buffer *b = f->args[i];
		LLVMValueRef p = LLVMGetParam(fn, f->nparams + i);
		msg[n] = arena_printf(ir_arena, "%s: argument '%s' is NULL", f->name, b->name);
		LLVMSetValueName2(p, b->name, strlen(b->name));
		/* NULL is fine for a tensor of no elements (PyTorch's empty
		 * tensors): the loops touch none of it */
		bad[n] = LLVMBuildAnd(cg->b, LLVMBuildIsNull(cg->b, p, ""),
		    LLVMBuildNot(cg->b, cg_no_elements(cg, b), ""), "");
		rc[n] = TXC_ERR_NULL;
		cg_bind_buf(cg, b, p);
	}
	for (int i = 0; i < f->nconsts; i++) {
		LLVMValueRef g = const_global(cg, f, f->consts[i]), d = NULL;
		/* a target whose tensors live elsewhere (the GPU's memory) */
		if (cg->hooks && cg->hooks->constant)
			d = cg->hooks->constant(cg, f->consts[i], g);
		cg_bind_buf(cg, f->consts[i], d ? d : g);
	}
	for (int i = nsz; i < nas; i++, n++) {
		IrStmt *a = body->block.stmts[i];
		bad[n] = LLVMBuildNot(cg->b, cg_expr(cg, a->assrt.cond), "");
		rc[n] = a->assrt.code;
		msg[n] = a->assrt.msg ? a->assrt.msg : "assertion failed";
	}
	fail_first(cg, n, bad, rc, msg);
	if (nas)
		body = ir_block(body->block.stmts + nas, body->block.n - nas);
	cg_stmt(cg, body);
	if (!cf.work) {
		/* nothing but the checks, allocations and parallel calls:
		 * llvm_emit.c generates its code quickly, after the IR passes */
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		    LLVMCreateStringAttribute(cg->ctx, CG_DISPATCH_ONLY,
		    (unsigned)strlen(CG_DISPATCH_ONLY), "", 0));
	}
	cg_fn_end(cg);
	cg->nbinds = 0;
	cg->nscoped = 0;
}

void
cg_packed_wrapper(Cg *cg, IrFunc *f)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMTypeRef fty = LLVMFunctionType(i32, &ptr, 1, 0);
	char *name = arena_printf(ir_arena, "%s__packed", f->name);
	LLVMValueRef fn = LLVMAddFunction(cg->mod, name, fty);
	cg_baseline(cg, fn);
	LLVMValueRef target = LLVMGetNamedFunction(cg->mod, f->name);
	int n = f->nparams + f->nargs;
	LLVMValueRef *args = arena_alloc(ir_arena, (n + 1) * sizeof *args);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(cg->ctx);

	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
	for (int i = 0; i < n; i++) {
		LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(cg->ctx), i, 0);
		LLVMValueRef slot = LLVMBuildGEP2(b, ptr, LLVMGetParam(fn, 0), &idx, 1, "");
		LLVMValueRef p = LLVMBuildLoad2(b, ptr, slot, "");
		/* scalars: args[i] points to the value; tensors: args[i] is it */
		args[i] = i < f->nparams ?
		    LLVMBuildLoad2(b, cg_abi_type(cg, f->params[i]->type), p, "") : p;
	}
	LLVMBuildRet(b, LLVMBuildCall2(b, LLVMGlobalGetValueType(target), target, args, n, ""));
	LLVMDisposeBuilder(b);
}

/* Whether the comma-separated list holds name. */
static bool
has_isa(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* For a machine with AVX-512: the 512-bit vectors a schedule asked for
 * (vectorize by 16 f32, the zmm micro-kernels) stay whole in every
 * function of the module, also on CPUs whose tuning prefers 256-bit
 * vectors (Skylake-X to Sapphire Rapids), where X86 would split them
 * into ymm halves; LLVM's own vectorizer keeps its preferred width. */
static void
wide_vectors(Cg *cg)
{
	static const char k[] = "min-legal-vector-width", v[] = "512";
	for (LLVMValueRef f = LLVMGetFirstFunction(cg->mod); f; f = LLVMGetNextFunction(f))
		if (LLVMCountBasicBlocks(f))
			LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
			    LLVMCreateStringAttribute(cg->ctx, k, sizeof k - 1, v, sizeof v - 1));
}

static _Thread_local const char *next_features;

void
cg_set_features(const char *list)
{
	next_features = list;
}

bool
cg_module(Cg *cg, LLVMContextRef ctx, const char *name, IrFunc **funcs, int n,
    LLVMTargetDataRef td, const char *triple, bool debug, bool contract,
    bool runtime_kernels, bool vector_math, const char *isa)
{
	int errors = diag_errors();

	memset(cg, 0, sizeof *cg);
	cg->isa = isa && *isa ? isa : NULL;
	cg->features = next_features;
	next_features = NULL;
	cg->ctx = ctx;
	cg->mod = LLVMModuleCreateWithNameInContext(name, ctx);
	cg->b = LLVMCreateBuilderInContext(ctx);
	cg->td = td;
	cg->contract = contract;
	cg->runtime_kernels = runtime_kernels;
	cg->vector_math = vector_math;
	LLVMSetTarget(cg->mod, triple);
	if (td) {
		char *dl = LLVMCopyStringRepOfTargetData(td);
		LLVMSetDataLayout(cg->mod, dl);
		LLVMDisposeMessage(dl);
	}
	if (debug)
		cg_debug_module(cg, funcs, n);
	for (int i = 0; i < n; i++)
		gen_entry(cg, funcs[i]);
	if (cg->isa && has_isa(cg->isa, "avx512f"))
		wide_vectors(cg);
	if (cg->dib)
		cg_debug_finish(cg);
	LLVMDisposeBuilder(cg->b);
	cg->b = NULL;
	return diag_errors() == errors;
}

bool
cg_module_hooked(Cg *cg, LLVMContextRef ctx, const char *name, IrFunc **funcs, int n,
    LLVMTargetDataRef td, const char *triple, bool contract, const CgHooks *hooks,
    void *hook_ctx)
{
	int errors = diag_errors();

	if (!cg_module(cg, ctx, name, NULL, 0, td, triple, false, contract, false, false, NULL))
		return false;
	cg->hooks = hooks;
	cg->hook_ctx = hook_ctx;
	cg->b = LLVMCreateBuilderInContext(ctx);
	for (int i = 0; i < n; i++)
		gen_entry(cg, funcs[i]);
	LLVMDisposeBuilder(cg->b);
	cg->b = NULL;
	return diag_errors() == errors;
}

void
cg_entries(Cg *cg, IrFunc **funcs, int n)
{
	for (int i = 0; i < n; i++)
		gen_entry(cg, funcs[i]);
}
