/* gpu_threads.c: the thread-level half of gpu_spmd.c: thread loops to
 * thread ids, block-level work spread over the threads, and the code
 * around shared stages computed inside the thread loops (TVM's model).
 *
 * A thread loop becomes its thread id (`let v = min + tid.x`) under a
 * guard when it is shorter than the block; a thread-loop nest that does
 * not use a dimension of the block runs in the threads whose id in it is
 * 0.  A block-level loop nest that is bound to no threads (a stage
 * computed at a block loop: the copy of a tile into shared memory) is
 * spread over the block's threads when it stores one pure stage (each
 * thread takes every n-th element of the nest's iteration space), and run
 * by thread 0 otherwise (an update).
 */
#include <stdlib.h>
#include <string.h>

#include "target/cuda/gpu_spmd.h"

/* ---- thread-level code -------------------------------------------------- */

static unsigned
thread_dims(IrStmt *s)
{
	if (!s)
		return 0;
	switch (s->kind) {
	case IS_FOR:
		return (s->loop.fk == FOR_GPU_THREAD ? 1u << s->loop.gpu_dim : 0) |
		    thread_dims(s->loop.body);
	case IS_LET: return thread_dims(s->let.body);
	case IS_ALLOCATE: return thread_dims(s->alloc.body);
	case IS_PRODUCE: return thread_dims(s->produce.body);
	case IS_IF: return thread_dims(s->ifs.then_s) | thread_dims(s->ifs.else_s);
	case IS_BLOCK: {
		unsigned m = 0;
		for (int i = 0; i < s->block.n; i++)
			m |= thread_dims(s->block.stmts[i]);
		return m;
	}
	default:
		return 0;
	}
}

typedef struct {
	IrMutator m;
	Spmd *S;
} Thr;

static IrStmt *
thr_for(IrMutator *m, IrStmt *s)
{
	Spmd *S = ((Thr *)m)->S;
	IrStmt *body = ir_mutate_stmt(m, s->loop.body);
	if (s->loop.fk == FOR_VTHREAD || s->loop.fk == FOR_VECTORIZED)
		return ir_for(s->loop.var, s->loop.min, s->loop.extent, FOR_SERIAL, body);
	if (s->loop.fk != FOR_GPU_THREAD)
		return body == s->loop.body ? s :
		    ir_for_like(s, s->loop.min, s->loop.extent, body);
	int d = s->loop.gpu_dim;
	IrExpr *tid = gpu_id(GPU_TID, d);
	Var *v = s->loop.var;
	if (!body)
		return NULL;
	if (!ir_expr_equal(s->loop.extent, S->bdim[d]))
		body = ir_if(simplify_expr(ir_binop(IR_LT, tid, gpu_spmd_as_type(s->loop.extent, ir_i64)),
		    NULL), body, NULL);
	return ir_let_stmt(v, gpu_spmd_as_type(simplify_expr(ir_add(gpu_spmd_as_type(s->loop.min, ir_i64), tid),
	    NULL), v->type), body);
}

static IrStmt *
thr_alloc(IrMutator *m, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	Loc at = s->loc.file ? s->loc : ((Thr *)m)->S->k->loc;
	if (b->scope == SCOPE_SHARED) {
		diag_error(at, "'%s' is in shared memory but is computed "
		    "inside a thread loop: every thread would compute its own copy",
		    b->name);
		diag_note(at, "compute it at a loop outside the thread loops "
		    "(the block's loops or a serial loop between them and the threads), or make "
		    "it local");
		((Thr *)m)->S->ok = false;
	}
	if (b->scope != SCOPE_FRAGMENT)   /* a warp's: gpu_fragment.c */
		b->scope = SCOPE_LOCAL;
	return ir_mutate_stmt_children(m, s);
}

/* The guard that keeps a thread-level statement to the threads whose id
 * is 0 in the block dimensions it does not use. */
static IrStmt *
only_first(Spmd *S, unsigned dims, IrStmt *s)
{
	IrExpr *c = NULL;
	for (int d = 0; d < 3; d++) {
		int64_t n;
		if ((dims & (1u << d)) || !S->bdim[d] || (ir_is_const(S->bdim[d], &n) && n == 1))
			continue;
		IrExpr *t = ir_binop(IR_EQ, gpu_id(GPU_TID, d), ir_i64c(0));
		c = c ? ir_binop(IR_AND, c, t) : t;
	}
	return c ? ir_if(c, s, NULL) : s;
}

static IrStmt *
thread_code(Spmd *S, IrStmt *s, bool guard)
{
	Thr t;
	memset(&t, 0, sizeof t);
	t.S = S;
	t.m.stmt[IS_FOR] = thr_for;
	t.m.stmt[IS_ALLOCATE] = thr_alloc;
	IrStmt *out = ir_mutate_stmt(&t.m, s);
	if (!guard)
		return out;
	unsigned dims = thread_dims(s);
	if (gpu_mma_in(s)) {
		/* a warp's operation: all 32 lanes (x) run the nest */
		if (!gpu_mma_check(S, s, dims))
			S->ok = false;
		return only_first(S, dims | 1u, gpu_mma_warp(out));
	}
	return only_first(S, dims, out);
}

IrStmt *
gpu_threads_level(Spmd *S, IrStmt *s)
{
	return thread_code(S, s, true);
}

/* ---- spreading a block-level nest over the threads ----------------------- */

static IrExpr *
nthreads(Spmd *S)
{
	IrExpr *n = NULL;
	for (int d = 0; d < 3; d++)
		if (S->bdim[d])
			n = n ? ir_mul(n, gpu_spmd_as_type(S->bdim[d], ir_i64)) : gpu_spmd_as_type(S->bdim[d], ir_i64);
	return n ? n : ir_i64c(1);
}

static IrExpr *
linear_tid(Spmd *S)
{
	IrExpr *t = NULL;
	for (int d = 2; d >= 0; d--) {
		if (!S->bdim[d])
			continue;
		t = t ? ir_add(ir_mul(t, gpu_spmd_as_type(S->bdim[d], ir_i64)), gpu_id(GPU_TID, d)) :
		    gpu_id(GPU_TID, d);
	}
	return t ? t : ir_i64c(0);
}

static bool
uses_any(IrExpr *e, IrStmt **chain, int n)
{
	for (int i = 0; i < n; i++)
		if (ir_uses_var(e, chain[i]->loop.var))
			return true;
	return false;
}

/* for (r, 0, ceil(total / n)) { let f = r*n + tid; if (f < total) {
 *   v_last = min + f % ext; ...; body } }
 * A loop whose extent is not a constant but has a constant bound (a
 * tile's edge, min(16, K - ko*16)) is spread over its bound, with the
 * test pos < extent beside f < total: the positions then come from
 * divisions by constants, not by the extent. */
/* The largest constant bound spread over in place of its extent. */
enum { SPREAD_BOUND_MAX = 1 << 16 };

static IrStmt *spread_plain(Spmd *S, IrStmt *s);

/* A tma() tile's copy as thread 0's TMA load, the plain spread beside it
 * (gpu_tma.c); other nests plainly. */
static IrStmt *
spread(Spmd *S, IrStmt *s)
{
	IrStmt *plain = spread_plain(S, s);
	IrStmt *tma = plain ? gpu_tma_copy(S, s, plain, linear_tid(S)) : NULL;
	return tma ? tma : plain;
}

static IrStmt *
spread_plain(Spmd *S, IrStmt *s)
{
	IrStmt *pieces = gpu_copy_spread(S, s, nthreads(S), linear_tid(S));
	if (pieces)
		return pieces;
	IrStmt *chain[16];
	int n = 0;
	IrStmt *body = s;
	while (body->kind == IS_FOR && n < 16 && body->loop.fk != FOR_GPU_THREAD &&
	    body->loop.fk != FOR_GPU_BLOCK && !uses_any(body->loop.min, chain, n) &&
	    !uses_any(body->loop.extent, chain, n)) {
		chain[n++] = body;
		body = body->loop.body;
	}
	body = thread_code(S, body, false);   /* every thread takes its share */
	/* a loop past a tail runs a negative number of times, that is none:
	 * two such extents must not multiply to a positive count */
	IrExpr *total = NULL, *span[16];
	bool bounded[16];
	for (int i = 0; i < n; i++) {
		IrExpr *ext = simplify_expr(gpu_spmd_as_type(chain[i]->loop.extent, ir_i64), NULL);
		int64_t c;
		bounded[i] = !ir_is_const(ext, &c) && bounds_const_max(ext, &c) && c >= 1 &&
		    c <= SPREAD_BOUND_MAX;
		span[i] = bounded[i] ? ir_i64c(c) : ir_max(ext, ir_i64c(0));
		total = total ? ir_mul(total, span[i]) : span[i];
	}
	Var *f = ir_new_var("f", ir_i64), *r = ir_new_var("r", ir_i64);
	IrExpr *rest = ir_var(f), *cond = NULL;
	for (int i = n - 1; i >= 0; i--) {
		IrExpr *ext = gpu_spmd_as_type(chain[i]->loop.extent, ir_i64);
		IrExpr *step = bounded[i] ? span[i] : ext;
		IrExpr *pos = i ? ir_mod(rest, step) : rest;
		Var *v = chain[i]->loop.var;
		body = ir_let_stmt(v, gpu_spmd_as_type(ir_add(gpu_spmd_as_type(chain[i]->loop.min, ir_i64), pos),
		    v->type), body);
		if (bounded[i]) {
			IrExpr *t = ir_binop(IR_LT, pos, ext);
			cond = cond ? ir_binop(IR_AND, cond, t) : t;
		}
		rest = ir_div(rest, step);
	}
	IrExpr *nt = nthreads(S);
	IrExpr *in = ir_binop(IR_LT, ir_var(f), total);
	body = ir_if(cond ? ir_binop(IR_AND, in, cond) : in, body, NULL);
	body = ir_let_stmt(f, ir_add(ir_mul(ir_var(r), nt), linear_tid(S)), body);
	IrExpr *trips = ir_div(ir_sub(ir_add(total, nt), ir_i64c(1)), nt);
	return simplify_stmt(ir_for(r, ir_i64c(0), trips, FOR_SERIAL, body));
}

/* A block-level statement with no thread loops in it. */
IrStmt *
gpu_threads_uniform(Spmd *S, IrStmt *s)
{
	IrStmt *inner = s;
	while (inner->kind == IS_LET)
		inner = inner->let.body;
	if (!S->update && inner->kind == IS_FOR) {
		IrStmt *sp = spread(S, inner);
		/* the lets above the nest stay around it */
		IrStmt *lets[64];
		int n = 0;
		for (IrStmt *l = s; l != inner && n < 64; l = l->let.body)
			lets[n++] = l;
		for (int i = n - 1; i >= 0; i--)
			sp = ir_let_stmt(lets[i]->let.var, lets[i]->let.value, sp);
		return sp;
	}
	bool mma = gpu_mma_in(s);
	if (mma && !gpu_mma_check(S, s, 0))
		S->ok = false;
	IrExpr *c = NULL;
	for (int d = 0; d < 3; d++) {
		if (!S->bdim[d])
			continue;
		IrExpr *t = ir_binop(IR_EQ, gpu_id(GPU_TID, d), ir_i64c(0));
		c = c ? ir_binop(IR_AND, c, t) : t;
	}
	if (mma) {
		/* a warp's operation: the first warp's 32 lanes */
		c = NULL;
		for (int d = 1; d < 3; d++)
			if (S->bdim[d]) {
				IrExpr *t = ir_binop(IR_EQ, gpu_id(GPU_TID, d), ir_i64c(0));
				c = c ? ir_binop(IR_AND, c, t) : t;
			}
		IrStmt *body = gpu_mma_warp(thread_code(S, s, false));
		return c ? ir_if(c, body, NULL) : body;
	}
	/* an update over partial results in shared memory: a tree */
	IrStmt *tree = S->update && c ? gpu_allreduce(thread_code(S, inner, false), nthreads(S),
	    linear_tid(S), c) : NULL;
	if (tree) {
		for (IrStmt *l = s; l != inner; l = l->let.body)
			tree = ir_let_stmt(l->let.var, l->let.value, tree);
		return tree;
	}
	IrStmt *body = thread_code(S, s, false);
	return c ? ir_if(c, body, NULL) : body;
}

/* ---- thread loops around shared stages (TVM's model) ---------------------
 * A stage in shared memory may be computed inside the thread loops (at a
 * loop of a per-thread stage, as TVM schedules a tiled matmul); bound
 * inference made its region the whole block's (relax_threads in
 * lower/bounds_infer.c).  Every thread then runs the code around it in
 * step: the thread loops are their ids with no guard, and what is inside
 * is block-level code whose per-thread parts (stages in local memory,
 * stores to the outputs) every thread runs with its own ids, while the
 * shared stages are computed by the threads together, with barriers.
 * That holds while the control flow around them does not depend on the
 * thread; where it would, a barrier could not be reached by every thread,
 * and that is an error at the schedule. */

bool
gpu_threads_has_shared(IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_ALLOCATE:
		return s->alloc.buf->scope == SCOPE_SHARED || gpu_threads_has_shared(s->alloc.body);
	case IS_FOR: return gpu_threads_has_shared(s->loop.body);
	case IS_LET: return gpu_threads_has_shared(s->let.body);
	case IS_PRODUCE: return gpu_threads_has_shared(s->produce.body);
	case IS_IF: return gpu_threads_has_shared(s->ifs.then_s) || gpu_threads_has_shared(s->ifs.else_s);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (gpu_threads_has_shared(s->block.stmts[i]))
				return true;
		return false;
	default:
		return false;
	}
}

static bool
uses_tvar(Spmd *S, IrExpr *e)
{
	for (int i = 0; i < S->ntv; i++)
		if (ir_uses_var(e, S->tvars[i]))
			return true;
	return false;
}

static void
add_tvar(Spmd *S, Var *v)
{
	*ARENA_PUSH(ir_arena, S->tvars, S->ntv, S->captv) = v;
}

/* The name of a shared stage being computed (a produce of a buffer
 * allocated in shared memory around it). */
static bool
shared_stage(Spmd *S, const char *name)
{
	for (int i = 0; i < S->nshared_open; i++)
		if (!strcmp(S->shared_open[i]->name, name))
			return true;
	return false;
}

/* Whether s computes a shared stage (allocates one, or fills one that is
 * open around it: a double buffer's copies), so that the threads must run
 * it together. */
static bool
needs_block(Spmd *S, IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_ALLOCATE:
		return s->alloc.buf->scope == SCOPE_SHARED || needs_block(S, s->alloc.body);
	case IS_PRODUCE:
		return shared_stage(S, s->produce.name) || needs_block(S, s->produce.body);
	case IS_FOR: return needs_block(S, s->loop.body);
	case IS_LET: return needs_block(S, s->let.body);
	case IS_IF: return needs_block(S, s->ifs.then_s) || needs_block(S, s->ifs.else_s);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (needs_block(S, s->block.stmts[i]))
				return true;
		return false;
	case IS_EVALUATE:
		/* a pipeline's wait lands every thread's copies, which the
		 * others read next: a loop left with its waits only (its
		 * prefetch folded away by sizes fixed with -D) still runs in
		 * step, with its tail barrier (gpu_spmd.c) */
		return s->eval.value->kind == IR_CALL && s->eval.value->call.ck == CALL_INTRINSIC &&
		    !strcmp(s->eval.value->call.name, ASYNC_WAIT);
	default:
		return false;
	}
}

static void
not_uniform_note(Spmd *S, Loc at, const char *note)
{
	diag_error(at.file ? at : S->k->loc, "a shared stage is computed inside %s, which "
	    "not every thread of the block runs: its barriers would not be reached by every "
	    "thread", note);
	S->ok = false;
}

static void
not_uniform(Spmd *S, Loc at, const char *what)
{
	not_uniform_note(S, at, what);
	diag_note(at.file ? at : S->k->loc, "compute the shared stage outside it, or split the "
	    "thread loops by factors that divide the block");
}

/* Whether extent is a guard's clamp to the block, min(REST, n) with n the
 * block's size along the loop: what a split or gpu_tile with the default
 * tail (guard) gives a stage computed at its blocks. */
static bool
clamped_to_block(IrExpr *extent, IrExpr *bdim)
{
	int64_t a, b;
	if (extent->kind != IR_MIN || !ir_is_const(bdim, &b))
		return false;
	return (ir_is_const(extent->a, &a) && a == b) || (ir_is_const(extent->b, &a) && a == b);
}

/* A thread loop whose body computes a shared stage: its id, unguarded. */
IrStmt *
gpu_threads_collective(Spmd *S, IrStmt *s)
{
	int d = s->loop.gpu_dim;
	int64_t a, b;
	bool full = ir_expr_equal(s->loop.extent, S->bdim[d]) ||
	    (ir_is_const(s->loop.extent, &a) && ir_is_const(S->bdim[d], &b) && a == b);
	if (!full) {
		const char *what = arena_printf(ir_arena, "thread loop '%s' (extent %s; "
		    "the block's threadIdx.%c has %s)", s->loop.var->name, ir_expr_str(s->loop.extent),
		    "xyz"[d], ir_expr_str(S->bdim[d]));
		if (!clamped_to_block(s->loop.extent, S->bdim[d])) {
			not_uniform(S, s->loc, what);
			return s;
		}
		/* the last block's part past the end of the data: the block
		 * already divides, the tail is what cuts it */
		not_uniform_note(S, s->loc, what);
		diag_note(s->loc, "the loop is cut at the end of the data by the default tail "
		    "(guard) of the split or gpu_tile that made the block; give that primitive "
		    "'tail = round_up' so that the stages computed at its blocks cover whole "
		    "blocks, or compute the shared stage outside the thread loop");
		return s;
	}
	if (!S->implicit) {
		unsigned dims = thread_dims(s);
		if (gpu_fragment_in(s))   /* a warp's: its lanes are threadIdx.x */
			dims |= 1u;
		for (int e = 0; e < 3; e++) {
			int64_t n;
			if (!(dims & (1u << e)) && S->bdim[e] && !(ir_is_const(S->bdim[e], &n) && n == 1)) {
				not_uniform(S, s->loc, arena_printf(ir_arena, "thread loops that do not "
				    "use the block's threadIdx.%c", "xyz"[e]));
				return s;
			}
		}
	}
	Var *v = s->loop.var;
	add_tvar(S, v);
	S->implicit++;
	IrStmt *body = gpu_threads_implicit(S, s->loop.body);
	S->implicit--;
	if (!body)
		return NULL;
	return ir_let_stmt(v, gpu_spmd_as_type(simplify_expr(ir_add(gpu_spmd_as_type(s->loop.min, ir_i64),
	    gpu_id(GPU_TID, d)), NULL), v->type), body);
}

IrStmt *
gpu_threads_implicit(Spmd *S, IrStmt *s)
{
	if (!s || !S->ok)
		return s;
	bool collective = S->collective;
	switch (s->kind) {
	case IS_FOR:
		if (s->loop.fk == FOR_GPU_THREAD)
			return needs_block(S, s) ? gpu_threads_collective(S, s) : thread_code(S, s, true);
		if (!needs_block(S, s)) {
			/* the threads together compute a shared stage; everything
			 * else is each thread's own */
			if (collective)
				return gpu_has_loop(s, FOR_GPU_THREAD) ? gpu_threads_level(S, s) :
				    gpu_threads_uniform(S, s);
			return thread_code(S, s, false);
		}
		if (uses_tvar(S, s->loop.min) || uses_tvar(S, s->loop.extent)) {
			not_uniform(S, s->loc, arena_printf(ir_arena, "loop '%s', whose bounds depend "
			    "on the thread", s->loop.var->name));
			return s;
		}
		return gpu_spmd_block_level(S, s);
	case IS_LET:
		if (uses_tvar(S, s->let.value))
			add_tvar(S, s->let.var);
		return ir_let_stmt(s->let.var, s->let.value, gpu_threads_implicit(S, s->let.body));
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		bool shared = b->scope == SCOPE_SHARED;
		if (shared)
			*ARENA_PUSH(ir_arena, S->shared_open, S->nshared_open, S->capshared_open) = b;
		IrStmt *body = gpu_threads_implicit(S, s->alloc.body);
		if (shared)
			S->nshared_open--;
		if (!body)
			return NULL;
		IrStmt *r = ir_allocate(b, body);
		r->loc = s->loc;
		return r;
	}
	case IS_PRODUCE: {
		bool saved_u = S->update, saved_c = S->collective, saved_a = S->async;
		S->update = s->produce.update;
		S->async = s->produce.async;
		S->collective = shared_stage(S, s->produce.name);
		IrStmt *b = S->collective || needs_block(S, s->produce.body) ?
		    gpu_threads_implicit(S, s->produce.body) : thread_code(S, s->produce.body, false);
		S->update = saved_u;
		S->collective = saved_c;
		S->async = saved_a;
		IrStmt *r = b ? ir_produce(s->produce.name, s->produce.update, b) : NULL;
		if (r) {
			r->produce.prefetch = s->produce.prefetch;
			r->produce.async = s->produce.async;
		}
		return r;
	}
	case IS_IF:
		if (uses_tvar(S, s->ifs.cond)) {
			if (needs_block(S, s) || (collective && !S->update)) {
				not_uniform(S, s->loc, "a condition on the thread");
				return s;
			}
			return thread_code(S, s, false);
		}
		return ir_if(s->ifs.cond, gpu_threads_implicit(S, s->ifs.then_s),
		    gpu_threads_implicit(S, s->ifs.else_s));
	case IS_BLOCK:
		return gpu_spmd_block_seq(S, s);
	case IS_EVALUATE:
		/* a pipeline's commit and wait: every thread's own (its copies) */
		if (double_buffer_async_is(s->eval.value))
			return gpu_copy_sync(s);
		return collective ? gpu_threads_uniform(S, s) : thread_code(S, s, false);
	case IS_STORE:
		return collective ? gpu_threads_uniform(S, s) : thread_code(S, s, false);
	default:
		return s;
	}
}

