/* gpu_copy.c: a block's copy of a tile from global into shared memory in
 * pieces of 16 bytes (gpu_threads.c's spread, when the nest allows it).
 *
 * A block-level nest that stores one element of a global buffer into a
 * shared one per iteration,
 *
 *     for (ax0, ...) { for (ax1, m, min(K - ko*32, 32)) {
 *       As[ax0*40 + ax1 - ...] = A[min(ax0, M - 1)*K + ax1] } }
 *
 * with unit steps in the inner variable on both sides and an inner extent
 * whose constant bound is a multiple of W = 16 / element bytes, is spread
 * over the block's threads W elements at a time: each thread's share is a
 * call
 *
 *     gpu.copy(As[d], A[s], W, valid, async)
 *
 * that copies elements s .. s + valid - 1 of A to d .. d + valid - 1 of As
 * and zeroes d + valid .. d + W - 1 (valid is what is left of the inner
 * extent, at most W; a clamp of the inner index to the edge of A, min(x,
 * E), ends it at E: past the tensor's edge the copy holds zeros, not the
 * repeated edge element, which only the rounded-up parts of tiles past
 * the edge read).  The emitters (cuda_ptx.c, cuda_c.c) make it one 16-byte
 * load and store, or with async one cp.async.cg ... 16 with the src-size
 * operand, when both addresses are 16-byte aligned at run time, and W
 * scalar copies otherwise (a row of an odd K); the emulator (cuda_host.c,
 * rt/cuda_emu.c) copies element by element, an async copy landing at its
 * thread's wait (ASYNC_WAIT, lower/double_buffer.c).  Into a swizzled
 * tile (gpu_swizzle.c) the pieces must start at multiples of W, so that
 * each is one piece of the permuted layout.  A tile that wgmma reads
 * (gpu_wgmma.c: the tensor cores read whole blocks, whatever the extents)
 * is copied whole, every row and column of its slot (slot_rows), even
 * where -D folded the extents to constants below the slot's: the pieces
 * past the extents have valid 0, zeros.
 */
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda.h"
#include "target/cuda/gpu_spmd.h"

bool
gpu_copy_is(IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, GPU_COPY) && e->call.nargs == GPU_COPY_NARGS;
}

/* The step of e when v steps by 1, if a constant. */
static bool
unit_step(IrExpr *e, Var *v)
{
	int64_t c;
	IrExpr *d = simplify_expr(ir_sub(ir_substitute(e, v, ir_add(ir_var(v), ir_i64c(1))), e),
	    NULL);
	return ir_is_const(d, &c) && c == 1;
}

/* A clamp min(x, E) of the inner variable in a source index. */
typedef struct {
	IrMutator m;
	Var *v;
	IrExpr *x, *limit;        /* the clamp found */
	int n;                    /* clamps found (more than one: no copy) */
	bool other;               /* v under a max or another clamp form */
} Clamp;

static IrExpr *
clamp_min(IrMutator *m, IrExpr *e)
{
	Clamp *c = (Clamp *)m;
	bool ua = ir_uses_var(e->a, c->v), ub = ir_uses_var(e->b, c->v);
	if (ua == ub)
		return ua ? (c->other = true, e) : e;
	c->n++;
	c->x = ua ? e->a : e->b;
	c->limit = ua ? e->b : e->a;
	return c->x;
}

static IrExpr *
clamp_max(IrMutator *m, IrExpr *e)
{
	Clamp *c = (Clamp *)m;
	if (ir_uses_var(e, c->v))
		c->other = true;
	return e;
}

/* The chain of loops spread() takes (n of them, at most 16). */
static int
copy_chain(IrStmt *s, IrStmt **chain)
{
	int n = 0;
	while (s->kind == IS_FOR && n < 16 && s->loop.fk != FOR_GPU_THREAD &&
	    s->loop.fk != FOR_GPU_BLOCK) {
		for (int i = 0; i < n; i++)
			if (ir_uses_var(s->loop.min, chain[i]->loop.var) ||
			    ir_uses_var(s->loop.extent, chain[i]->loop.var))
				return 0;
		chain[n++] = s;
		s = s->loop.body;
	}
	return n;
}

/* The rows of a slot of dst, a swizzled tile that wgmma reads, that the
 * copy nest `chain` (its last two loops over rows and columns, from the
 * slot's first element) fills through dst index di; 0 where the nest is
 * not of that form.  The tensor cores read whole 16-wide blocks of the
 * slot, whatever the extents: the copy must cover the slot, not only the
 * extents, which -D may fold to a constant smaller than the slot's. */
static int64_t
slot_rows(Buffer *dst, IrStmt **chain, int n, IrExpr *di)
{
	int64_t row = dst->swizzle_row, slot = dst->slot, step;
	if (n < 2 || row <= 0)
		return 0;
	/* one slot of a pipelined tile, else the whole (flat) tile */
	if (!slot) {
		slot = 1;
		for (int d = 0; d < dst->ndims; d++) {
			int64_t c;
			if (!ir_is_const(dst->extent[d], &c))
				return 0;
			slot *= c;
		}
	}
	if (slot % row)
		return 0;
	Var *r = chain[n - 2]->loop.var;
	IrExpr *d = simplify_expr(ir_sub(ir_substitute(di, r, ir_add(ir_var(r), ir_i64c(1))), di),
	    NULL);
	if (!ir_is_const(d, &step) || step != row)
		return 0;
	IrExpr *at = di;
	for (int i = 0; i < n; i++)
		at = ir_substitute(at, chain[i]->loop.var, chain[i]->loop.min);
	if (!gpu_multiple_of(simplify_expr(at, NULL), slot))
		return 0;
	return slot / row;
}

IrStmt *
gpu_copy_spread(Spmd *S, IrStmt *s, IrExpr *nthreads, IrExpr *tid)
{
	if (getenv("TXC_CUDA_NO_VECTOR_COPY"))
		return NULL;
	IrStmt *chain[16];
	int n = copy_chain(s, chain);
	if (!n)
		return NULL;
	IrStmt *st = chain[n - 1]->loop.body;
	if (st->kind != IS_STORE || st->store.pred || st->store.nidx != 1 ||
	    st->store.buf->scope != SCOPE_SHARED || st->store.value->kind != IR_LOAD)
		return NULL;
	IrExpr *ld = st->store.value;
	Buffer *src = ld->load.buf, *dst = st->store.buf;
	if (ld->load.nidx != 1 || ld->a || ld->type.lanes != 1 || src->scope != SCOPE_GLOBAL ||
	    src->elem != dst->elem)
		return NULL;
	int bits = ir_bits(dst->elem);
	if (bits != 8 && bits != 16 && bits != 32)
		return NULL;
	int W = 128 / bits;
	IrStmt *in = chain[n - 1];
	Var *v = in->loop.var;
	IrExpr *ext = simplify_expr(gpu_spmd_as_type(in->loop.extent, ir_i64), NULL);
	int64_t span;
	bool bounded = !ir_is_const(ext, &span);
	/* a wgmma tile is copied whole: the rows x columns of its slot */
	bool whole = gpu_wgmma_operand(S->k->fn->body, dst);
	int64_t rows = whole ? slot_rows(dst, chain, n, st->store.idx[0]) : 0;
	if (rows) {
		bounded = bounded || span != dst->swizzle_row;
		span = dst->swizzle_row;
	}
	if (bounded && !rows && !bounds_const_max(ext, &span))
		return NULL;
	if (span < W || span % W)
		return NULL;
	IrExpr *di = st->store.idx[0];
	if (!unit_step(di, v))
		return NULL;
	Clamp c;
	memset(&c, 0, sizeof c);
	c.m.expr[IR_MIN] = clamp_min;
	c.m.expr[IR_MAX] = clamp_max;
	c.v = v;
	IrExpr *si = ir_mutate_expr(&c.m, ld->load.idx[0]);
	if (c.other || c.n > 1 || (c.n && !unit_step(c.x, v)) || !unit_step(si, v))
		return NULL;
	for (int i = 0; i < n - 1; i++)
		if (ir_uses_var(chain[i]->loop.extent, v))
			return NULL;
	/* a swizzled tile is copied in whole pieces of its layout: each piece
	 * starts at a multiple of W (or the stores stay scalar, each mapped) */
	if (dst->swizzle_row && !gpu_multiple_of(simplify_expr(ir_substitute(di, v,
	    gpu_spmd_as_type(ir_add(gpu_spmd_as_type(in->loop.min, ir_i64),
	    ir_mul(ir_var(v), ir_i64c(W))), v->type)), NULL), W))
		return NULL;

	/* the nest over the pieces: the inner position j stands for W elements */
	Var *j = ir_new_var("piece", ir_i64);
	IrExpr *pos = ir_mul(ir_var(j), ir_i64c(W));
	IrExpr *vat = gpu_spmd_as_type(ir_add(gpu_spmd_as_type(in->loop.min, ir_i64), pos), v->type);
	IrExpr *valid = bounded ? ir_min(ir_sub(ext, pos), ir_i64c(W)) : ir_i64c(W);
	if (c.n)
		valid = ir_min(valid, ir_add(ir_sub(gpu_spmd_as_type(c.limit, ir_i64),
		    gpu_spmd_as_type(c.x, ir_i64)), ir_i64c(1)));
	valid = ir_max(valid, ir_i64c(0));
	/* a wgmma tile: every piece, valid 0 outside the extents (`whole`) */
	Var *okv = whole ? ir_new_var("whole", ir_bool) : NULL;
	if (okv)
		valid = ir_select(ir_var(okv), valid, ir_i64c(0));
	IrExpr *sidx = si, *didx = di;
	IrExpr *args[GPU_COPY_NARGS] = {
		ir_load(dst, &didx, 1, NULL, 1), ir_load(src, &sidx, 1, NULL, 1), ir_i64c(W),
		valid, ir_i64c(S->async),
	};
	IrStmt *body = ir_evaluate(ir_call_intrinsic(GPU_COPY, ir_i32, args, GPU_COPY_NARGS));
	body = ir_let_stmt(v, vat, body);

	/* spread as gpu_threads.c spreads a nest, the inner span over pieces */
	IrExpr *total = NULL, *spans[16];
	bool bnd[16];
	for (int i = 0; i < n; i++) {
		IrExpr *e = simplify_expr(gpu_spmd_as_type(chain[i]->loop.extent, ir_i64), NULL);
		int64_t k;
		bnd[i] = !ir_is_const(e, &k) && bounds_const_max(e, &k) && k >= 1 && k <= (1 << 16);
		spans[i] = bnd[i] ? ir_i64c(k) : ir_max(e, ir_i64c(0));
		if (i == n - 1) {
			bnd[i] = bounded;
			spans[i] = ir_i64c(span / W);
		} else if (rows && i == n - 2 && !(ir_is_const(e, &k) && k == rows)) {
			bnd[i] = true;
			spans[i] = ir_i64c(rows);
		}
		total = total ? ir_mul(total, spans[i]) : spans[i];
	}
	Var *f = ir_new_var("f", ir_i64), *r = ir_new_var("r", ir_i64);
	IrExpr *rest = ir_var(f), *cond = NULL;
	for (int i = n - 1; i >= 0; i--) {
		IrExpr *e = gpu_spmd_as_type(chain[i]->loop.extent, ir_i64);
		IrExpr *p = i ? ir_mod(rest, spans[i]) : rest;
		if (i == n - 1) {
			body = ir_let_stmt(j, p, body);
			if (bounded)
				cond = ir_binop(IR_LT, ir_mul(p, ir_i64c(W)), e);
		} else {
			Var *u = chain[i]->loop.var;
			IrExpr *step = bnd[i] ? spans[i] : e;
			p = i ? ir_mod(rest, step) : rest;
			body = ir_let_stmt(u, gpu_spmd_as_type(ir_add(gpu_spmd_as_type(chain[i]->loop.min,
			    ir_i64), p), u->type), body);
			if (bnd[i]) {
				IrExpr *t = ir_binop(IR_LT, p, e);
				cond = cond ? ir_binop(IR_AND, cond, t) : t;
			}
			rest = ir_div(rest, step);
			continue;
		}
		rest = ir_div(rest, spans[i]);
	}
	IrExpr *inside = ir_binop(IR_LT, ir_var(f), total);
	if (okv) {
		body = ir_let_stmt(okv, cond ? cond : ir_make_const(ir_bool, 1), body);
		cond = NULL;
	}
	body = ir_if(cond ? ir_binop(IR_AND, inside, cond) : inside, body, NULL);
	body = ir_let_stmt(f, ir_add(ir_mul(ir_var(r), nthreads), tid), body);
	IrExpr *trips = ir_div(ir_sub(ir_add(total, nthreads), ir_i64c(1)), nthreads);
	return simplify_stmt(ir_for(r, ir_i64c(0), trips, FOR_SERIAL, body));
}

/* The call as W scalar copies: dst[d + e] = e < valid ? src[s + e] : 0,
 * a loop (the path of unaligned rows stays small beside the fast one). */
IrStmt *
gpu_copy_scalar(IrExpr *call)
{
	IrExpr *d = call->call.args[0], *s = call->call.args[1];
	Var *e = ir_new_var("elem", ir_i64);
	IrExpr *di = gpu_swizzle_index(d->load.buf, ir_add(d->load.idx[0], ir_var(e)));
	IrExpr *si = ir_add(s->load.idx[0], ir_var(e));
	IrStmt *copy = ir_store(d->load.buf, &di, 1, ir_load(s->load.buf, &si, 1, NULL, 1), NULL);
	IrStmt *zero = ir_store(d->load.buf, &di, 1, ir_make_const(ir_scalar(d->load.buf->elem), 0),
	    NULL);
	return ir_for(e, ir_i64c(0), call->call.args[2], FOR_SERIAL,
	    ir_if(ir_binop(IR_LT, ir_var(e), call->call.args[3]), copy, zero));
}

typedef struct {
	IrVisitor v;
	bool found;
} Find;

/* a piece of a copy, or a pipeline's commit or wait: a pipeline whose
 * copies all go element by element (a transposing one, a stage computed
 * into its slots) still commits and waits */
static void
find_call(IrVisitor *v, IrExpr *e)
{
	((Find *)v)->found |= gpu_copy_is(e) || (e->call.ck == CALL_INTRINSIC &&
	    (!strcmp(e->call.name, ASYNC_COMMIT) || !strcmp(e->call.name, ASYNC_WAIT)));
	ir_visit_expr_children(v, e);
}

bool
gpu_copy_in(IrStmt *s)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.v.expr[IR_CALL] = find_call;
	ir_visit_stmt(&f.v, s);
	return f.found;
}

/* A pipeline's commit or wait as every thread runs it.  For the tests of
 * libtxrt's checker, TXC_CUDA_ASYNC_WAIT=late waits for one group fewer
 * (a wait placed an iteration late) and =none leaves the waits out. */
IrStmt *
gpu_copy_sync(IrStmt *s)
{
	IrExpr *e = s->eval.value;
	const char *how = getenv("TXC_CUDA_ASYNC_WAIT");
	if (!how || strcmp(e->call.name, ASYNC_WAIT) != 0)
		return s;
	if (!strcmp(how, "none"))
		return NULL;
	int64_t n = 0;
	if (!strcmp(how, "late") && ir_is_const(e->call.args[0], &n)) {
		IrExpr *a = ir_i64c(n + 1);
		return ir_evaluate(ir_call_intrinsic(ASYNC_WAIT, e->type, &a, 1));
	}
	return s;
}
