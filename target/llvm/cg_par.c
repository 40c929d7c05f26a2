/* cg_par.c: parallel loops as closures that libtxrt's thread pool runs.
 *
 *     parallel (i, min, extent) body
 * becomes an internal function
 *     int NAME.parN(void *closure, int64_t begin, int64_t end)
 * that reloads every value in scope (variables and buffer pointers) from
 * the closure and runs the body serially over [begin, end), and a call
 *     rc = txrt_parallel_for(NAME.parN, &closure, min, min + extent)
 * whose failure leaves the caller through its failure exit (the message
 * was set by the thread that failed and forwarded by libtxrt).  Capturing
 * the whole scope keeps this simple; LLVM drops the loads the body does
 * not use.
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

static void
par_body(Cg *cg, LLVMValueRef i, void *arg)
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

void
cg_parallel_for(Cg *cg, IrStmt *s)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	int n = cg->nbinds;
	LLVMTypeRef *fields = arena_alloc(ir_arena, (n + 1) * sizeof *fields);
	LLVMTypeRef st, fty, params[3] = { ptr, i64, i64 };
	LLVMValueRef closure, fn, min, end;
	CgBind *saved = cg->binds;
	int saved_cap = cg->capbinds;
	LLVMBasicBlockRef saved_bb;
	LLVMValueRef saved_mask = cg->mask;
	Loc saved_loc = cg->cur_loc;
	CgFn pf;

	min = cg_index(cg, s->loop.min, 1);
	end = LLVMBuildAdd(cg->b, min, cg_index(cg, s->loop.extent, 1), "end");

	/* the closure: every value in scope */
	for (int i = 0; i < n; i++)
		fields[i] = LLVMTypeOf(saved[i].value);
	st = LLVMStructTypeInContext(cg->ctx, fields, n, 0);
	closure = cg_entry_alloca(cg, st, 8, "closure");
	for (int i = 0; i < n; i++)
		LLVMBuildStore(cg->b, saved[i].value,
		    LLVMBuildStructGEP2(cg->b, st, closure, i, ""));

	/* the outlined body */
	fty = LLVMFunctionType(i32, params, 3, 0);
	fn = LLVMAddFunction(cg->mod,
	    arena_printf(ir_arena, "%s.par%d", cg->ir->name, cg->npar++), fty);
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->ctx,
	    LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
	saved_bb = LLVMGetInsertBlock(cg->b);
	cg->mask = NULL;
	cg_fn_begin(cg, &pf, fn);
	if (cg->dib)
		pf.di_scope = cg_debug_subprogram(cg, LLVMGetValueName(fn), s->loc, fn);
	cg_debug_loc(cg, s->loc);
	cg->binds = NULL;
	cg->nbinds = cg->capbinds = 0;
	for (int i = 0; i < n; i++) {
		LLVMValueRef v = LLVMBuildLoad2(cg->b, fields[i],
		    LLVMBuildStructGEP2(cg->b, st, LLVMGetParam(fn, 0), i, ""), "");
		if (saved[i].var)
			cg_bind_var(cg, saved[i].var, v);
		else
			cg_bind_buf(cg, saved[i].buf, v);
	}
	cg_loop(cg, LLVMGetParam(fn, 1), LLVMGetParam(fn, 2), s->loop.var->name, par_body, s);
	cg_fn_end(cg);

	/* back in the caller: run it on the pool */
	cg->binds = saved;
	cg->nbinds = n;
	cg->capbinds = saved_cap;
	cg->mask = saved_mask;
	LLVMPositionBuilderAtEnd(cg->b, saved_bb);
	cg_debug_loc(cg, saved_loc);
	LLVMTypeRef pty;
	LLVMValueRef pfor = cg_runtime(cg, "txrt_parallel_for", &pty);
	LLVMValueRef args[4] = { fn, closure, min, end };
	LLVMValueRef rc = LLVMBuildCall2(cg->b, pty, pfor, args, 4, "rc");
	cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstInt(i32, 0, 0), ""), rc, NULL);
}
