/* cg_par.c: parallel loops as closures that libtxrt's thread pool runs.
 *
 *     parallel (i, min, extent) body
 * becomes an internal function
 *     int NAME.parN(void *closure, int64_t begin, int64_t end)
 * that reloads the values of the caller's scope it uses (variables and
 * buffer pointers) from the closure and runs the body serially over
 * [begin, end), and a call
 *     rc = txrt_parallel_for(NAME.parN, &closure, min, min + extent)
 * whose failure leaves the caller through its failure exit (the message
 * was set by the thread that failed and forwarded by libtxrt).
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

/* ---- what the body uses ---------------------------------------------------
 * The closure holds only the values of the caller's scope that the body
 * refers to: variables, buffers it loads or stores, and the variables in
 * the shapes of those buffers and of the ones it allocates (their sizes
 * and strides are computed from them).  A scope can hold dozens of sizes
 * and hoisted strides, and every one captured is a store in the caller
 * that LLVM cannot remove (the closure escapes into the thread pool). */
typedef struct {
	IrVisitor v;
	Cg *cg;
	bool *used;            /* per binding of cg->binds */
	Buffer **seen; int nseen, capseen;
} Uses;

/* Marks the innermost binding of v or b (the one a lookup finds). */
static void
mark(Uses *u, Var *v, Buffer *b)
{
	for (int i = u->cg->nbinds - 1; i >= 0; i--)
		if (v ? u->cg->binds[i].var == v : u->cg->binds[i].buf == b) {
			u->used[i] = true;
			return;
		}
}

/* b is used; shape: also the variables of its shape (a multi-dimensional
 * access computes its strides from them, an allocation its size). */
static void
uses_buffer(Uses *u, Buffer *b, bool shape)
{
	mark(u, NULL, b);
	if (!shape)
		return;
	for (int i = 0; i < u->nseen; i++)
		if (u->seen[i] == b)
			return;
	*ARENA_PUSH(ir_arena, u->seen, u->nseen, u->capseen) = b;
	for (int d = 0; d < b->ndims; d++) {
		ir_visit_expr(&u->v, b->min ? b->min[d] : NULL);
		ir_visit_expr(&u->v, b->extent ? b->extent[d] : NULL);
		ir_visit_expr(&u->v, b->stride ? b->stride[d] : NULL);
	}
}

static void
uses_var(IrVisitor *v, IrExpr *e)
{
	mark((Uses *)v, e->var, NULL);
}

/* A flat access (cg_mem.c) needs only the buffer's address. */
static void
uses_load(IrVisitor *v, IrExpr *e)
{
	uses_buffer((Uses *)v, e->load.buf, !e->load.buf->flat && e->load.nidx > 1);
	ir_visit_expr_children(v, e);
}

static void
uses_stmt_buffer(IrVisitor *v, IrStmt *s)
{
	if (s->kind == IS_STORE)
		uses_buffer((Uses *)v, s->store.buf, !s->store.buf->flat && s->store.nidx > 1);
	else
		uses_buffer((Uses *)v, s->alloc.buf, true);
	ir_visit_stmt_children(v, s);
}

static const IrVisitor uses_table = {
	.expr = {[IR_VAR] = uses_var, [IR_LOAD] = uses_load},
	.stmt = {[IS_STORE] = uses_stmt_buffer, [IS_ALLOCATE] = uses_stmt_buffer},
};

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
	int n = cg->nbinds, nf = 0;
	LLVMTypeRef *fields = arena_alloc(ir_arena, (n + 1) * sizeof *fields);
	int *from = arena_alloc(ir_arena, (n + 1) * sizeof *from);
	Uses u = { uses_table, cg, arena_alloc(ir_arena, (n + 1) * sizeof(bool)), NULL, 0, 0 };
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

	/* the closure: the values in scope that the body uses */
	memset(u.used, 0, (size_t)(n + 1) * sizeof(bool));
	ir_visit_stmt(&u.v, s->loop.body);
	for (int i = 0; i < n; i++)
		if (u.used[i]) {
			from[nf] = i;
			fields[nf++] = LLVMTypeOf(saved[i].value);
		}
	st = LLVMStructTypeInContext(cg->ctx, fields, nf, 0);
	closure = cg_entry_alloca(cg, st, 8, "closure");
	for (int i = 0; i < nf; i++)
		LLVMBuildStore(cg->b, saved[from[i]].value,
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
	for (int i = 0; i < nf; i++) {
		LLVMValueRef v = LLVMBuildLoad2(cg->b, fields[i],
		    LLVMBuildStructGEP2(cg->b, st, LLVMGetParam(fn, 0), i, ""), "");
		if (saved[from[i]].var)
			cg_bind_var(cg, saved[from[i]].var, v);
		else
			cg_bind_buf(cg, saved[from[i]].buf, v);
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
