/* gpu_shared.c: a kernel's shared buffers packed into one dynamic arena,
 * and its local buffers checked.
 *
 * Every block-level allocation (gpu_spmd made them shared) gets a place
 * in the block's one arena of dynamic shared memory: its size is the
 * largest its extents take in any block (a constant, or an expression of
 * the kernel's parameters that the host evaluates before the launch), its
 * offset the sum of the sizes of the buffers still live or not yet freed
 * by a barrier, each rounded up to 16 bytes: once a statement that
 * allocated buffers has ended, their bytes are reused after the next
 * barrier at the same level (a tile of one phase and a tile of the next
 * share them), so the arena is the most that is live at once.  A
 * constant arena larger than any GPU's shared memory is an error here;
 * one computed at run time is checked by libtxrt against the device's
 * limit before the launch.  A local buffer (per thread) must
 * have a constant size: it lives in registers or the thread's stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda.h"

#define LOCAL_LIMIT (16 * 1024)   /* bytes per thread (as cg_stmt.c's stack) */

typedef struct {
	GpuKernel *k;
	BoundsScope *scope;
	IrExpr *next;             /* the next free offset */
	IrExpr *peak;             /* the most the arena holds at once */
	bool ok;
} Sh;

static int64_t
elem_bytes(ScalarType t)
{
	int bits = ir_bits(t);
	return bits < 8 ? 1 : bits / 8;
}

static IrExpr *
round16(IrExpr *e)
{
	return simplify_expr(ir_mul(ir_div(ir_add(e, ir_i64c(15)), ir_i64c(16)), ir_i64c(16)),
	    NULL);
}

static void
place(Sh *S, Buffer *b, Loc at)
{
	IrExpr *bytes = ir_i64c(elem_bytes(b->elem));
	for (int d = 0; d < b->ndims; d++) {
		IrExpr *e = b->extent[d];
		int64_t c;
		if (ir_is_const(e, &c) || bounds_const_max(e, &c)) {
			e = ir_i64c(c);
		} else if (!gpu_host_expr(S->k, e)) {
			Interval iv = bounds_of_expr(e, S->scope);
			if (!iv.max || !gpu_host_expr(S->k, iv.max)) {
				diag_error(at, "shared buffer '%s' of kernel '%s' has an extent "
				    "(%s) with no bound the host can compute", b->name, S->k->name,
				    ir_expr_str(b->extent[d]));
				S->ok = false;
				return;
			}
			e = iv.max;
		}
		bytes = ir_mul(bytes, e->type.code == TY_I64 ? e : ir_cast(ir_i64, e));
	}
	bytes = round16(bytes);
	/* a TMA box lands at 128 bytes, a swizzled one at the swizzle's
	 * 1024-byte repeat (gpu_tma.c); a swizzled tile of a wgmma kernel
	 * starts at a multiple of 1024 bytes too (and the arena is so
	 * aligned: cuda_ptx.c), where the hardware's swizzle of absolute
	 * addresses is gpu_swizzle.c's of the buffer's */
	int64_t align = b->tma ? (b->swizzle_row ? 1024 : 128) :
	    S->k->wgmma && b->swizzle_row ? 1024 : 0;
	if (align)
		S->next = simplify_expr(ir_mul(ir_div(ir_add(S->next, ir_i64c(align - 1)),
		    ir_i64c(align)), ir_i64c(align)), NULL);
	GpuShared *g = ARENA_PUSH(ir_arena, S->k->shared, S->k->nshared, S->k->capshared);
	g->buf = b;
	g->loc = at;
	g->offset = S->next;
	g->bytes = bytes;
	S->next = simplify_expr(ir_add(S->next, bytes), NULL);
	S->peak = simplify_expr(ir_max(S->peak, S->next), NULL);
}

static void
walk(Sh *S, IrStmt *s)
{
	if (!s || !S->ok)
		return;
	switch (s->kind) {
	case IS_FOR: {
		BoundsScope *saved = S->scope;
		Interval iv = { s->loop.min, simplify_expr(ir_sub(ir_add(s->loop.min,
		    s->loop.extent), ir_i64c(1)), NULL) };
		S->scope = bounds_push(S->scope, s->loop.var, iv);
		walk(S, s->loop.body);
		S->scope = saved;
		return;
	}
	case IS_LET: {
		BoundsScope *saved = S->scope;
		bool bvar = false;
		for (int d = 0; d < 3; d++)
			bvar |= S->k->bvar[d] == s->let.var;
		if (!bvar)   /* a block id: its range is in the scope already */
			S->scope = bounds_push(S->scope, s->let.var,
			    bounds_of_expr(s->let.value, S->scope));
		walk(S, s->let.body);
		S->scope = saved;
		return;
	}
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		Loc at = s->loc.file ? s->loc : S->k->loc;
		if (b->scope == SCOPE_SHARED) {
			place(S, b, at);
		} else {
			int64_t n = elem_bytes(b->elem), c;
			for (int d = 0; d < b->ndims && n <= LOCAL_LIMIT; d++) {
				if (!(ir_is_const(b->extent[d], &c) || bounds_const_max(b->extent[d], &c))) {
					diag_error(at, "'%s' is local to each thread of kernel '%s' "
					    "but its extent (%s) is not a constant", b->name, S->k->name,
					    ir_expr_str(b->extent[d]));
					diag_note(at, "compute it at a loop whose region of it has "
					    "a constant size (inside a split by a constant), or at a "
					    "block-level loop to put it in shared memory");
					S->ok = false;
					return;
				}
				n *= c;
			}
			if (n > LOCAL_LIMIT) {
				diag_error(at, "'%s' takes more than %d bytes in each thread of "
				    "kernel '%s'", b->name, LOCAL_LIMIT, S->k->name);
				S->ok = false;
				return;
			}
		}
		walk(S, s->alloc.body);
		return;
	}
	case IS_PRODUCE: walk(S, s->produce.body); return;
	case IS_IF:
		walk(S, s->ifs.then_s);
		walk(S, s->ifs.else_s);
		return;
	case IS_BLOCK: {
		/* what a statement allocated is dead once it ends, and its bytes
		 * are free for the next ones after a barrier at this level (no
		 * thread still reads them when another writes) */
		IrExpr *base = S->next;
		for (int i = 0; i < s->block.n; i++) {
			IrStmt *c = s->block.stmts[i];
			if (c->kind == IS_EVALUATE && c->eval.value->kind == IR_CALL &&
			    c->eval.value->call.ck == CALL_INTRINSIC &&
			    !strcmp(c->eval.value->call.name, GPU_BARRIER))
				S->next = base;
			else
				walk(S, c);
		}
		return;
	}
	default:
		return;
	}
}

bool
gpu_shared(GpuKernel *k)
{
	Sh S = { k, NULL, ir_i64c(0), ir_i64c(0), true };
	for (int d = 0; d < 3; d++)
		if (k->bvar[d]) {
			Interval iv = { k->bmin[d], simplify_expr(ir_sub(ir_add(k->bmin[d], k->grid[d]),
			    ir_i64c(1)), NULL) };
			S.scope = bounds_push(S.scope, k->bvar[d], iv);
		}
	walk(&S, k->fn->body);
	k->shared_bytes = S.peak;
	int64_t c;
	if (S.ok && ir_is_const(S.peak, &c) && c > GPU_MAX_SHARED) {
		diag_error(k->loc, "kernel '%s' needs %lld bytes of shared memory per block; a "
		    "block of sm_80 has at most %d", k->name, (long long)c, GPU_MAX_SHARED);
		for (int i = 0; i < k->nshared; i++) {
			int64_t b = 0;
			ir_is_const(k->shared[i].bytes, &b);
			diag_note(k->shared[i].loc, "'%s' takes %lld bytes", k->shared[i].buf->name, (long long)b);
		}
		return false;
	}
	return S.ok;
}

GpuShared *
gpu_shared_find(GpuKernel *k, Buffer *b)
{
	for (int i = 0; i < k->nshared; i++)
		if (k->shared[i].buf == b)
			return &k->shared[i];
	return NULL;
}
