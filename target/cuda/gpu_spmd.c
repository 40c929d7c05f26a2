/* gpu_spmd.c: a kernel's block body as one SPMD program (Halide's
 * FuseGPUThreadLoops).
 *
 * Every thread of a block runs the whole body.  Block-level statements
 * (outside thread loops) run the same way in every thread: their loops,
 * lets and conditions depend only on the block, so barriers may sit
 * between them.  A thread loop becomes its thread id (`let v = min +
 * tid.x`) under a guard when it is shorter than the block; a thread-loop
 * nest that does not use a dimension of the block runs in the threads
 * whose id in it is 0 (gpu_threads.c).  A block-level loop nest that is bound to no
 * threads (a stage computed at a block loop: the copy of a tile into
 * shared memory) is spread over the block's threads when it stores one
 * pure stage (each thread takes every n-th element of the nest's
 * iteration space), and run by thread 0 otherwise (an update).  The
 * block's size is, per dimension, the largest extent of its thread loops
 * (a constant bound, or an expression of the kernel's parameters).
 *
 * Barriers: between two block-level statements when one writes a buffer
 * the other reads or writes (since the last barrier), and at the end of
 * the body of a block-level loop that contains one, so that the next
 * iteration does not overwrite what a slower thread still reads.  Since
 * they are only placed at block level, every thread reaches every
 * barrier.  Buffers allocated at block level are shared memory; inside
 * thread loops they are the thread's own (local).
 */
#include <stdlib.h>
#include <string.h>

#include "target/cuda/gpu_spmd.h"

IrExpr *
gpu_id(const char *which, int d)
{
	IrExpr *a = ir_int(ir_i32, d);
	return ir_call_intrinsic(which, ir_i64, &a, 1);
}

IrExpr *
gpu_spmd_as_type(IrExpr *e, IrType t)
{
	return ir_type_eq(e->type, t) ? e : ir_cast(t, e);
}

IrStmt *
gpu_barrier(void)
{
	/* TXC_CUDA_NO_BARRIERS=1 leaves them out: the tests of libtxrt's race
	 * checker break real kernels with it (txc(1) ENVIRONMENT) */
	const char *no = getenv("TXC_CUDA_NO_BARRIERS");
	if (no && *no && strcmp(no, "0"))
		return NULL;
	return ir_evaluate(ir_call_intrinsic(GPU_BARRIER, ir_i32, NULL, 0));
}

static bool
is_barrier(IrStmt *s)
{
	return s && s->kind == IS_EVALUATE && s->eval.value->kind == IR_CALL &&
	    s->eval.value->call.ck == CALL_INTRINSIC && !strcmp(s->eval.value->call.name, GPU_BARRIER);
}

typedef struct {
	IrVisitor v;
	bool found;
} HasBarrier;

static void
hb_eval(IrVisitor *v, IrStmt *s)
{
	if (is_barrier(s))
		((HasBarrier *)v)->found = true;
}

static bool
has_barrier(IrStmt *s)
{
	HasBarrier h;
	memset(&h, 0, sizeof h);
	h.v.stmt[IS_EVALUATE] = hb_eval;
	ir_visit_stmt(&h.v, s);
	return h.found;
}

/* Whether e uses only the kernel's parameters (and builtins of them):
 * the host can evaluate it before the launch. */
bool
gpu_host_expr(GpuKernel *k, IrExpr *e)
{
	if (!e)
		return true;
	if (e->kind == IR_VAR) {
		for (int i = 0; i < k->fn->nparams; i++)
			if (k->fn->params[i] == e->var)
				return true;
		return false;
	}
	if (e->kind == IR_LOAD || e->kind == IR_LET)
		return false;
	if (e->kind == IR_CALL) {
		if (e->call.ck != CALL_BUILTIN)
			return false;
		for (int i = 0; i < e->call.nargs; i++)
			if (!gpu_host_expr(k, e->call.args[i]))
				return false;
		return true;
	}
	return gpu_host_expr(k, e->a) && gpu_host_expr(k, e->b) && gpu_host_expr(k, e->c);
}

/* An upper bound of extent e of a loop at this point that the host can
 * compute (a constant, or over the kernel's parameters); NULL if none. */
static IrExpr *
host_bound(Spmd *S, IrExpr *e)
{
	int64_t c;
	if (ir_is_const(e, &c) || bounds_const_max(e, &c))
		return ir_i64c(c);
	if (gpu_host_expr(S->k, e))
		return e;
	Interval iv = bounds_of_expr(e, S->scope);
	if (iv.max && gpu_host_expr(S->k, iv.max))
		return iv.max;
	return NULL;
}

/* ---- block size --------------------------------------------------------- */

static void
block_size(Spmd *S, IrStmt *s, unsigned in_dims)
{
	if (!s || !S->ok)
		return;
	switch (s->kind) {
	case IS_FOR: {
		BoundsScope *saved = S->scope;
		unsigned dims = in_dims;
		if (s->loop.fk == FOR_GPU_THREAD) {
			int d = s->loop.gpu_dim;
			if (in_dims & (1u << d)) {
				diag_error(s->loc, "loop '%s' is bound to threadIdx.%c inside another "
				    "loop bound to threadIdx.%c", s->loop.var->name, "xyz"[d], "xyz"[d]);
				diag_note(s->loc, "bind it to another dimension (threadIdx.y or z), or "
				    "fuse the two loops and bind the fused one");
				S->ok = false;
				return;
			}
			dims |= 1u << d;
			IrExpr *b = host_bound(S, s->loop.extent);
			if (!b) {
				diag_error(s->loc, "the extent of thread loop '%s' (%s) has no bound the "
				    "host can compute before the launch", s->loop.var->name,
				    ir_expr_str(s->loop.extent));
				diag_note(s->loc, "split it by a constant and bind the inner loop to "
				    "the threads");
				S->ok = false;
				return;
			}
			if (!S->bdim[d]) {
				S->bdim[d] = b;
				S->bdim_loc[d] = s->loc;
				S->bdim_var[d] = s->loop.var->name;
			} else if (!ir_expr_equal(S->bdim[d], b)) {
				S->bdim[d] = simplify_expr(ir_max(S->bdim[d], b), NULL);
			}
		} else if (s->loop.fk == FOR_GPU_BLOCK) {
			diag_error(s->loc, "loop '%s' is bound to blockIdx inside the block's body; "
			    "the block loops must be the kernel's outermost loops", s->loop.var->name);
			S->ok = false;
			return;
		} else if (s->loop.fk == FOR_PARALLEL) {
			diag_error(s->loc, "loop '%s' is parallel inside a GPU kernel: bind it to "
			    "threadIdx instead", s->loop.var->name);
			S->ok = false;
			return;
		}
		Interval iv = { s->loop.min, simplify_expr(ir_sub(ir_add(s->loop.min,
		    s->loop.extent), ir_i64c(1)), S->scope) };
		S->scope = bounds_push(S->scope, s->loop.var, iv);
		block_size(S, s->loop.body, dims);
		S->scope = saved;
		return;
	}
	case IS_LET: block_size(S, s->let.body, in_dims); return;
	/* a shared stage's own thread loops are the block's threads again */
	case IS_ALLOCATE:
		block_size(S, s->alloc.body, s->alloc.buf->scope == SCOPE_SHARED ? 0 : in_dims);
		return;
	case IS_PRODUCE: block_size(S, s->produce.body, in_dims); return;
	case IS_IF:
		block_size(S, s->ifs.then_s, in_dims);
		block_size(S, s->ifs.else_s, in_dims);
		return;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			block_size(S, s->block.stmts[i], in_dims);
		return;
	default:
		return;
	}
}


IrStmt *
gpu_spmd_level(Spmd *S, IrStmt *s)
{
	return S->implicit ? gpu_threads_implicit(S, s) : gpu_spmd_block_level(S, s);
}

/* ---- block-level code --------------------------------------------------- */

/* The buffers a statement reads and writes (every scope but local). */
typedef struct {
	IrVisitor v;
	Buffer **r; int nr, capr;
	Buffer **w; int nw, capw;
	bool shared_only;     /* inside thread loops around a shared stage */
} Acc;

static void
add_buf(Buffer ***v, int *n, int *cap, Buffer *b)
{
	for (int i = 0; i < *n; i++)
		if ((*v)[i] == b)
			return;
	*ARENA_PUSH(ir_arena, *v, *n, *cap) = b;
}

static void
acc_load(IrVisitor *v, IrExpr *e)
{
	Acc *a = (Acc *)v;
	if (e->load.buf->scope == SCOPE_SHARED || (!a->shared_only && e->load.buf->scope != SCOPE_LOCAL &&
	    e->load.buf->scope != SCOPE_FRAGMENT))
		add_buf(&a->r, &a->nr, &a->capr, e->load.buf);
	ir_visit_expr_children(v, e);
}

static void
acc_store(IrVisitor *v, IrStmt *s)
{
	Acc *a = (Acc *)v;
	if (s->store.buf->scope == SCOPE_SHARED || (!a->shared_only && s->store.buf->scope != SCOPE_LOCAL &&
	    s->store.buf->scope != SCOPE_FRAGMENT))
		add_buf(&a->w, &a->nw, &a->capw, s->store.buf);
	ir_visit_stmt_children(v, s);
}

/* A warp's tensor-core call writes its output tile, which its arguments
 * name as a load of the tile's first element: mma's and mma_fill's c,
 * mma_store's d (a shared tile the block's threads read next needs the
 * barrier a store would get); a piece of a copy (gpu_copy.c) writes its
 * destination, and reads only its source. */
static void
acc_call(IrVisitor *v, IrExpr *e)
{
	Acc *a = (Acc *)v;
	int out = gpu_mma_is(e) || gpu_wgmma_is(e) ? 3 : gpu_mma_fill_is(e) || gpu_mma_store_is(e) ||
	    gpu_wgmma_fill_is(e) || gpu_wgmma_store_is(e) ? 2 :
	    gpu_copy_is(e) ? 0 : -1;
	if (out >= 0 && e->call.args[out]->kind == IR_LOAD) {
		Buffer *b = e->call.args[out]->load.buf;
		if (b->scope == SCOPE_SHARED || (!a->shared_only && b->scope != SCOPE_LOCAL &&
		    b->scope != SCOPE_FRAGMENT))
			add_buf(&a->w, &a->nw, &a->capw, b);
	}
	if (gpu_copy_is(e)) {   /* its destination is only written */
		ir_visit_expr_children(v, e->call.args[0]->load.idx[0]);
		for (int i = 1; i < e->call.nargs; i++)
			ir_visit_expr(v, e->call.args[i]);
		return;
	}
	ir_visit_expr_children(v, e);
}

static void
accesses(Acc *a, IrStmt *s)
{
	a->v.expr[IR_CALL] = acc_call;
	a->v.expr[IR_LOAD] = acc_load;
	a->v.stmt[IS_STORE] = acc_store;
	ir_visit_stmt(&a->v, s);
}

static bool
meets(Buffer **a, int na, Buffer **b, int nb)
{
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

static bool
is_prefetch(IrStmt *s)
{
	if (!s)
		return false;
	if (s->kind == IS_PRODUCE)
		return s->produce.prefetch;
	if (s->kind == IS_IF && !s->ifs.else_s)
		return is_prefetch(s->ifs.then_s);
	if (s->kind == IS_BLOCK) {
		for (int i = 0; i < s->block.n; i++)
			if (!is_prefetch(s->block.stmts[i]))
				return false;
		return s->block.n > 0;
	}
	return false;
}

/* Whether s holds a prefetch (its loop then needs a tail barrier). */
static bool
has_prefetch(IrStmt *s)
{
	if (!s)
		return false;
	if (is_prefetch(s))
		return true;
	if (s->kind == IS_BLOCK) {
		for (int i = 0; i < s->block.n; i++)
			if (has_prefetch(s->block.stmts[i]))
				return true;
		return false;
	}
	if (s->kind == IS_LET)
		return has_prefetch(s->let.body);
	if (s->kind == IS_ALLOCATE)
		return has_prefetch(s->alloc.body);
	return false;
}

/* Whether s waits for asynchronous copies (async.wait): what they wrote
 * lands there, and other threads read it in the next iteration, so the
 * loop needs its tail barrier even when no prefetch is left in it (sizes
 * fixed by -D can leave a pipeline's loop with its waits only). */
static bool
has_async_wait(IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_EVALUATE:
		return s->eval.value->kind == IR_CALL && s->eval.value->call.ck == CALL_INTRINSIC &&
		    !strcmp(s->eval.value->call.name, ASYNC_WAIT);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (has_async_wait(s->block.stmts[i]))
				return true;
		return false;
	case IS_LET: return has_async_wait(s->let.body);
	case IS_ALLOCATE: return has_async_wait(s->alloc.body);
	case IS_PRODUCE: return has_async_wait(s->produce.body);
	case IS_IF: return has_async_wait(s->ifs.then_s) || has_async_wait(s->ifs.else_s);
	case IS_FOR: return has_async_wait(s->loop.body);
	default: return false;
	}
}

IrStmt *
gpu_spmd_block_seq(Spmd *S, IrStmt *s)
{
	IrStmt **out = arena_alloc(ir_arena, (2 * s->block.n + 1) * sizeof *out);
	int n = 0;
	Acc since;
	memset(&since, 0, sizeof since);
	/* an async.wait landed copies of every thread since the last barrier:
	 * the next statement that touches memory needs one first */
	bool landed = false;
	for (int i = 0; i < s->block.n; i++) {
		IrStmt *t = gpu_spmd_level(S, s->block.stmts[i]);
		if (!t)
			continue;
		Acc a;
		memset(&a, 0, sizeof a);
		/* every thread in step around a shared stage: its other statements
		 * are each thread's own work, ordered by the thread itself */
		a.shared_only = S->implicit > 0;
		accesses(&a, t);
		/* a double buffer's prefetch writes the half no one reads in this
		 * iteration (the loop's tail barrier orders it with the next) */
		if (is_prefetch(t))
			a.nw = 0;
		if (n && ((landed && (a.nr || a.nw)) || meets(since.w, since.nw, a.r, a.nr) ||
		    meets(since.w, since.nw, a.w, a.nw) || meets(since.r, since.nr, a.w, a.nw))) {
			out[n++] = gpu_barrier();
			memset(&since, 0, sizeof since);
			landed = false;
		}
		if (is_barrier(t))
			landed = false;
		else if (has_async_wait(t))
			landed = true;
		for (int j = 0; j < a.nr; j++)
			add_buf(&since.r, &since.nr, &since.capr, a.r[j]);
		for (int j = 0; j < a.nw; j++)
			add_buf(&since.w, &since.nw, &since.capw, a.w[j]);
		out[n++] = t;
	}
	return ir_block(out, n);
}

IrStmt *
gpu_spmd_block_level(Spmd *S, IrStmt *s)
{
	if (!s || !S->ok)
		return s;
	switch (s->kind) {
	case IS_FOR: {
		if (s->loop.fk == FOR_GPU_THREAD)
			return gpu_threads_has_shared(s) ? gpu_threads_collective(S, s) : gpu_threads_level(S, s);
		/* a nest bound to no thread: spread or run on one thread, unless a
		 * shared stage is computed inside it (then its loops stay here) */
		if (!gpu_has_loop(s, FOR_GPU_THREAD) && !S->implicit && !gpu_threads_has_shared(s))
			return gpu_threads_uniform(S, s);
		BoundsScope *saved = S->scope;
		Interval iv = { s->loop.min, simplify_expr(ir_sub(ir_add(s->loop.min,
		    s->loop.extent), ir_i64c(1)), S->scope) };
		S->scope = bounds_push(S->scope, s->loop.var, iv);
		IrStmt *body = gpu_spmd_level(S, s->loop.body);
		S->scope = saved;
		if (has_barrier(body) || has_prefetch(body) || has_async_wait(body))
			body = ir_seq(body, gpu_barrier());
		/* a vthread or unrolled loop around thread loops: serial here */
		return ir_for(s->loop.var, s->loop.min, s->loop.extent,
		    s->loop.fk == FOR_UNROLLED ? FOR_UNROLLED : FOR_SERIAL, body);
	}
	case IS_LET: {
		IrStmt *b = gpu_spmd_block_level(S, s->let.body);
		return ir_let_stmt(s->let.var, s->let.value, b);
	}
	case IS_ALLOCATE: {
		if (s->alloc.buf->scope == SCOPE_FRAGMENT) {
			diag_error(s->loc.file ? s->loc : s->alloc.buf->scope_loc, "fragment '%s' is "
			    "computed at a loop of the block, outside its threads; %s",
			    s->alloc.buf->name, gpu_fragment_where(s->alloc.body));
			S->ok = false;
		}
		s->alloc.buf->scope = SCOPE_SHARED;
		IrStmt *b = gpu_spmd_block_level(S, s->alloc.body);
		IrStmt *r = b ? ir_allocate(s->alloc.buf, b) : NULL;
		if (r)
			r->loc = s->loc;
		return r;
	}
	case IS_PRODUCE: {
		bool saved = S->update, saved_a = S->async;
		S->update = s->produce.update;
		S->async = s->produce.async;
		IrStmt *b = gpu_spmd_block_level(S, s->produce.body);
		S->update = saved;
		S->async = saved_a;
		IrStmt *r = b ? ir_produce(s->produce.name, s->produce.update, b) : NULL;
		if (r) {
			r->produce.prefetch = s->produce.prefetch;
			r->produce.async = s->produce.async;
		}
		return r;
	}
	case IS_IF:
		return ir_if(s->ifs.cond, gpu_spmd_block_level(S, s->ifs.then_s),
		    gpu_spmd_block_level(S, s->ifs.else_s));
	case IS_BLOCK:
		return gpu_spmd_block_seq(S, s);
	case IS_EVALUATE:
		/* a pipeline's commit and wait: every thread's own (its copies) */
		if (double_buffer_async_is(s->eval.value))
			return gpu_copy_sync(s);
		return gpu_threads_uniform(S, s);
	case IS_STORE:
		return gpu_threads_uniform(S, s);
	default:
		return s;
	}
}

bool
gpu_spmd(GpuKernel *k)
{
	Spmd S;
	memset(&S, 0, sizeof S);
	S.k = k;
	S.ok = true;
	for (int d = 0; d < 3; d++)
		if (k->bvar[d]) {
			Interval iv = { k->bmin[d], simplify_expr(ir_sub(ir_add(k->bmin[d], k->grid[d]),
			    ir_i64c(1)), NULL) };
			S.scope = bounds_push(S.scope, k->bvar[d], iv);
		}
	IrStmt *body = k->fn->body;
	block_size(&S, body, 0);
	if (!S.ok)
		return false;
	if (!S.bdim[0] && gpu_fragment_in(body)) {
		/* a fragment's warp: its 32 lanes are threadIdx.x (a warpgroup's
		 * 128, gpu_wgmma.c) */
		S.bdim[0] = ir_i64c(gpu_wgmma_in(body) ? 128 : 32);
		S.bdim_var[0] = "(a fragment's lanes)";
	}
	int64_t total = 1;
	bool known = true;
	for (int d = 0; d < 3; d++) {
		int64_t c;
		if (!S.bdim[d])
			continue;
		if (ir_is_const(S.bdim[d], &c))
			total *= c;
		else
			known = false;
	}
	if (known && total > GPU_MAX_THREADS) {
		Loc at = S.bdim_loc[0].file ? S.bdim_loc[0] : S.bdim_loc[1].file ? S.bdim_loc[1] :
		    S.bdim_loc[2].file ? S.bdim_loc[2] : k->loc;
		char *why = "";
		for (int d = 2; d >= 0; d--)
			if (S.bdim[d])
				why = arena_printf(ir_arena, "%s%s'%s' on threadIdx.%c: %s", why,
				    *why ? ", " : "", S.bdim_var[d], "xyz"[d], ir_expr_str(S.bdim[d]));
		diag_error(at, "blocks of %lld threads (%s); a block has at most %d",
		    (long long)total, why, GPU_MAX_THREADS);
		diag_note(at, "split the thread loops by smaller factors, or bind fewer loops "
		    "to threadIdx");
		return false;
	}
	k->max_threads = known ? total : 0;
	body = gpu_spmd_block_level(&S, body);
	if (!S.ok)
		return false;
	for (int d = 2; d >= 0; d--)
		if (k->bvar[d]) {
			Var *v = k->bvar[d];
			body = ir_let_stmt(v, gpu_spmd_as_type(simplify_expr(ir_add(gpu_spmd_as_type(k->bmin[d], ir_i64),
			    gpu_id(GPU_BID, d)), NULL), v->type), body);
		}
	for (int d = 0; d < 3; d++)
		k->block[d] = S.bdim[d] ? gpu_spmd_as_type(S.bdim[d], ir_i64) : ir_i64c(1);
	k->fn->body = body ? body : ir_evaluate(ir_int(ir_i32, 0));
	return true;
}
