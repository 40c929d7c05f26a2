/* cg_stmt.c: LLVM code for IR statements.
 *
 * Loops count an i64 from min while below min + extent (a phi in the loop
 * header); serial, unrolled and vectorized loops that are still loops are
 * all serial here (lowering has already replicated unrolled bodies and
 * turned vectorized ones into vector expressions), parallel loops go to
 * cg_par.c.  An allocation of constant size up to STACK_LIMIT bytes is an
 * alloca in the function's entry block; others call txrt_alloc, are freed
 * when their body ends, and are tracked in a slot so that the failure
 * exit frees them too.  Asserts set the message and return their code.
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

#define STACK_LIMIT (16 * 1024)   /* as the C backend */

/* Asks LLVM to vectorize (hint > 1: that many lanes, not unrolling it
 * first) or to unroll fully (hint < 0) a loop that lowering left as a
 * vectorized or unrolled loop: !llvm.loop on the latch branch. */
static void
loop_metadata(Cg *cg, LLVMValueRef br, int hint)
{
	LLVMMetadataRef ops[4], props[3];
	LLVMTypeRef i1 = LLVMInt1TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	int n = 0;

#define PROP(name, v) do { \
	LLVMMetadataRef kv[2] = { LLVMMDStringInContext2(cg->ctx, name, strlen(name)), \
	    LLVMValueAsMetadata(v) }; \
	props[n++] = LLVMMDNodeInContext2(cg->ctx, kv, 2); } while (0)
	if (hint > 1) {
		PROP("llvm.loop.vectorize.enable", LLVMConstInt(i1, 1, 0));
		PROP("llvm.loop.vectorize.width", LLVMConstInt(i32, (unsigned)hint, 0));
		LLVMMetadataRef name = LLVMMDStringInContext2(cg->ctx, "llvm.loop.unroll.disable", 24);
		props[n++] = LLVMMDNodeInContext2(cg->ctx, &name, 1);
	} else {
		LLVMMetadataRef name = LLVMMDStringInContext2(cg->ctx, "llvm.loop.unroll.full", 21);
		props[n++] = LLVMMDNodeInContext2(cg->ctx, &name, 1);
	}
#undef PROP
	/* a loop ID refers to itself: build it around a temporary */
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->ctx, NULL, 0);
	ops[0] = tmp;
	for (int i = 0; i < n; i++)
		ops[i + 1] = props[i];
	LLVMMetadataRef id = LLVMMDNodeInContext2(cg->ctx, ops, n + 1);
	LLVMMetadataReplaceAllUsesWith(tmp, id);
	LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->ctx, "llvm.loop", 9),
	    LLVMMetadataAsValue(cg->ctx, id));
}

void
cg_loop(Cg *cg, LLVMValueRef min, LLVMValueRef end, const char *name,
    CgLoopBody body, void *arg)
{
	LLVMTypeRef i64 = LLVMTypeOf(min);     /* cg_index_type */
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, name);
	LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "body");
	LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "done");
	LLVMValueRef i, next, br;
	int hint = cg->loop_hint;

	cg->loop_hint = 0;
	LLVMBuildBr(cg->b, head);
	LLVMPositionBuilderAtEnd(cg->b, head);
	i = LLVMBuildPhi(cg->b, i64, name);
	LLVMAddIncoming(i, &min, &pre, 1);
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, i, end, ""), bb, exit);
	LLVMPositionBuilderAtEnd(cg->b, bb);
	body(cg, i, arg);
	/* i < end <= INT64_MAX, so i + 1 cannot overflow */
	next = LLVMBuildNSWAdd(cg->b, i, LLVMConstInt(i64, 1, 0), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
	LLVMAddIncoming(i, &next, &latch, 1);
	br = LLVMBuildBr(cg->b, head);
	if (hint)
		loop_metadata(cg, br, hint);
	LLVMPositionBuilderAtEnd(cg->b, exit);
}

/* The body of a serial loop: binds the counter (in the variable's own
 * integer type) and emits the statement. */
static void
serial_body(Cg *cg, LLVMValueRef i, void *arg)
{
	IrStmt *s = arg;
	Var *v = s->loop.var;
	int mark = cg_scope_mark(cg);

	if (v->type.code != TY_I64)
		i = LLVMBuildTrunc(cg->b, i, cg_type(cg, v->type), "");
	cg_bind_var(cg, v, i);
	cg_stmt(cg, s->loop.body);
	cg_scope_pop(cg, mark);
}

static void
gen_for(Cg *cg, IrStmt *s)
{
	LLVMValueRef min, end;
	int64_t c;

	switch (s->loop.fk) {
	case FOR_PARALLEL:
		cg_parallel_for(cg, s);
		return;
	case FOR_GPU_BLOCK:
	case FOR_GPU_THREAD:
		diag_error(s->loc, "loop '%s' is bound to a GPU %s, which the cpu target does not have",
		    s->loop.var->name, s->loop.fk == FOR_GPU_BLOCK ? "block" : "thread");
		break;
	default:
		break;
	}
	min = cg_index(cg, s->loop.min, 1);
	end = LLVMBuildAdd(cg->b, min, cg_index(cg, s->loop.extent, 1), "end");
	if (s->loop.fk == FOR_VECTORIZED && ir_is_const(s->loop.extent, &c) && c > 1 && c <= 64)
		cg->loop_hint = (int)c;
	else if (s->loop.fk == FOR_UNROLLED)
		cg->loop_hint = -1;
	cg_loop(cg, min, end, s->loop.var->name, serial_body, s);
}

static void
gen_allocate(Cg *cg, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem);
	unsigned long long esize = LLVMABISizeOfType(cg->td, et);
	int64_t n = 1, c;
	bool constant = true;
	int mark = cg_scope_mark(cg);

	if (cg->hooks && cg->hooks->allocate && cg->hooks->allocate(cg, s))
		return;
	/* a clamped extent (min(16, N - jo*16)) is allocated at its bound */
	for (int d = 0; d < b->ndims; d++) {
		if (!(ir_is_const(b->extent[d], &c) || bounds_const_max(b->extent[d], &c)) ||
		    c < 0 || c > STACK_LIMIT) {
			constant = false;
			break;
		}
		n *= c;
		if (n > STACK_LIMIT)
			constant = false;
	}
	if (constant && (unsigned long long)n * esize <= STACK_LIMIT) {
		LLVMValueRef p = cg_entry_alloca(cg, LLVMArrayType(et, (unsigned)n), 64, b->name);
		cg_bind_buf(cg, b, p);
		cg_stmt(cg, s->alloc.body);
		cg_scope_pop(cg, mark);
		return;
	}
	cg_alloc_heap(cg, s, "txrt_alloc", "txrt_free");
}

/* The heap: alloc_fn(elems * size); NULL fails as the C backend does. */
void
cg_alloc_heap(Cg *cg, IrStmt *s, const char *alloc_fn, const char *free_fn)
{
	Buffer *b = s->alloc.buf;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	unsigned long long esize = LLVMABISizeOfType(cg->td, et);
	int mark = cg_scope_mark(cg);
	CgHeap *h = ARENA_PUSH(ir_arena, cg->fn->heap, cg->fn->nheap, cg->fn->capheap);
	h->free_fn = strcmp(free_fn, "txrt_free") ? free_fn : NULL;
	h->slot = cg_entry_alloca(cg, LLVMPointerTypeInContext(cg->ctx, 0), 8, "slot");
	LLVMValueRef slot = h->slot;
	LLVMValueRef bytes = LLVMBuildMul(cg->b, cg_buffer_elems(cg, b),
	    LLVMConstInt(i64, esize, 0), "bytes");
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, alloc_fn, &fty);
	LLVMValueRef p = LLVMBuildCall2(cg->b, fty, fn, &bytes, 1, b->name);
	cg_fail_if(cg, LLVMBuildIsNull(cg->b, p, ""),
	    LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), TXC_ERR_ALLOC, 0),
	    arena_printf(ir_arena, "%s: out of memory allocating '%s'", cg->ir->name, b->name));
	LLVMBuildStore(cg->b, p, slot);
	cg_bind_buf(cg, b, p);
	cg_stmt(cg, s->alloc.body);
	cg_scope_pop(cg, mark);
	fn = cg_runtime(cg, free_fn, &fty);
	LLVMBuildCall2(cg->b, fty, fn, &p, 1, "");
	LLVMBuildStore(cg->b, LLVMConstNull(LLVMPointerTypeInContext(cg->ctx, 0)), slot);
}

static void
gen_if(Cg *cg, IrStmt *s)
{
	LLVMValueRef c = cg_expr(cg, s->ifs.cond);
	LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "then");
	LLVMBasicBlockRef eb = s->ifs.else_s ?
	    LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "else") : NULL;
	LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "endif");

	if (s->ifs.cond->type.lanes != 1)
		ICE("if with a vector condition");
	LLVMBuildCondBr(cg->b, c, tb, eb ? eb : jb);
	LLVMPositionBuilderAtEnd(cg->b, tb);
	cg_stmt(cg, s->ifs.then_s);
	LLVMBuildBr(cg->b, jb);
	if (eb) {
		LLVMPositionBuilderAtEnd(cg->b, eb);
		cg_stmt(cg, s->ifs.else_s);
		LLVMBuildBr(cg->b, jb);
	}
	LLVMPositionBuilderAtEnd(cg->b, jb);
}

void
cg_stmt(Cg *cg, IrStmt *s)
{
	int mark;

	if (!s)
		return;
	if (s->loc.file)
		cg_debug_loc(cg, s->loc);
	switch (s->kind) {
	case IS_FOR:
		gen_for(cg, s);
		break;
	case IS_LET:
		mark = cg_scope_mark(cg);
		cg_bind_var(cg, s->let.var, cg_expr(cg, s->let.value));
		cg_stmt(cg, s->let.body);
		cg_scope_pop(cg, mark);
		break;
	case IS_STORE:
		cg_store(cg, s);
		break;
	case IS_ALLOCATE:
		gen_allocate(cg, s);
		break;
	case IS_IF:
		gen_if(cg, s);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n;) {
			int k = cg_store_transposed(cg, s->block.stmts + i, s->block.n - i);
			if (k) {
				i += k;
				continue;
			}
			cg_stmt(cg, s->block.stmts[i++]);
		}
		break;
	case IS_EVALUATE:
		cg_expr(cg, s->eval.value);
		break;
	case IS_ASSERT: {
		LLVMValueRef c = cg_expr(cg, s->assrt.cond);
		cg_fail_if(cg, LLVMBuildNot(cg->b, c, ""),
		    LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned)s->assrt.code, 0),
		    s->assrt.msg ? s->assrt.msg : "assertion failed");
		break;
	}
	case IS_PRODUCE:
		cg_stmt(cg, s->produce.body);
		break;
	default:
		ICE("statement kind %d in the LLVM backend", (int)s->kind);
	}
}
