/* gpu_spmd.c: a kernel's block body as one SPMD program (Halide's
 * FuseGPUThreadLoops).
 *
 * Every thread of a block runs the whole body.  Block-level statements
 * (outside thread loops) run the same way in every thread: their loops,
 * lets and conditions depend only on the block, so barriers may sit
 * between them.  A thread loop becomes its thread id (`let v = min +
 * tid.x`) under a guard when it is shorter than the block; a thread-loop
 * nest that does not use a dimension of the block runs in the threads
 * whose id in it is 0.  A block-level loop nest that is bound to no
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

#include "target/cuda/cuda.h"

typedef struct {
	GpuKernel *k;
	IrExpr *bdim[3];          /* the block's size, NULL: 1 */
	Loc bdim_loc[3];
	const char *bdim_var[3];  /* a loop that sets it, for messages */
	BoundsScope *scope;       /* block variables and block-level loops */
	bool update;              /* inside an update's produce */
	/* inside thread loops around a shared stage (implicit_level) */
	int implicit;
	bool collective;          /* computing a shared stage there */
	Var **tvars; int ntv, captv;     /* variables that depend on the thread */
	Buffer **shared_open; int nshared_open, capshared_open;
	bool ok;
} Spmd;

IrExpr *
gpu_id(const char *which, int d)
{
	IrExpr *a = ir_int(ir_i32, d);
	return ir_call_intrinsic(which, ir_i64, &a, 1);
}

static IrExpr *
as_type(IrExpr *e, IrType t)
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

/* Whether e uses only the kernel's parameters. */
static bool
host_expr(GpuKernel *k, IrExpr *e)
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
			if (!host_expr(k, e->call.args[i]))
				return false;
		return true;
	}
	return host_expr(k, e->a) && host_expr(k, e->b) && host_expr(k, e->c);
}

/* An upper bound of extent e of a loop at this point that the host can
 * compute (a constant, or over the kernel's parameters); NULL if none. */
static IrExpr *
host_bound(Spmd *S, IrExpr *e)
{
	int64_t c;
	if (ir_is_const(e, &c) || bounds_const_max(e, &c))
		return ir_i64c(c);
	if (host_expr(S->k, e))
		return e;
	Interval iv = bounds_of_expr(e, S->scope);
	if (iv.max && host_expr(S->k, iv.max))
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
		body = ir_if(simplify_expr(ir_binop(IR_LT, tid, as_type(s->loop.extent, ir_i64)),
		    NULL), body, NULL);
	return ir_let_stmt(v, as_type(simplify_expr(ir_add(as_type(s->loop.min, ir_i64), tid),
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
	return guard ? only_first(S, thread_dims(s), out) : out;
}

static IrStmt *
thread_level(Spmd *S, IrStmt *s)
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
			n = n ? ir_mul(n, as_type(S->bdim[d], ir_i64)) : as_type(S->bdim[d], ir_i64);
	return n ? n : ir_i64c(1);
}

static IrExpr *
linear_tid(Spmd *S)
{
	IrExpr *t = NULL;
	for (int d = 2; d >= 0; d--) {
		if (!S->bdim[d])
			continue;
		t = t ? ir_add(ir_mul(t, as_type(S->bdim[d], ir_i64)), gpu_id(GPU_TID, d)) :
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
 *   v_last = min + f % ext; ...; body } } */
static IrStmt *
spread(Spmd *S, IrStmt *s)
{
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
	IrExpr *total = NULL;
	for (int i = 0; i < n; i++)
		total = total ? ir_mul(total, as_type(chain[i]->loop.extent, ir_i64)) :
		    as_type(chain[i]->loop.extent, ir_i64);
	Var *f = ir_new_var("f", ir_i64), *r = ir_new_var("r", ir_i64);
	IrExpr *rest = ir_var(f);
	for (int i = n - 1; i >= 0; i--) {
		IrExpr *ext = as_type(chain[i]->loop.extent, ir_i64);
		IrExpr *pos = i ? ir_mod(rest, ext) : rest;
		Var *v = chain[i]->loop.var;
		body = ir_let_stmt(v, as_type(ir_add(as_type(chain[i]->loop.min, ir_i64), pos),
		    v->type), body);
		rest = ir_div(rest, ext);
	}
	IrExpr *nt = nthreads(S);
	body = ir_if(ir_binop(IR_LT, ir_var(f), total), body, NULL);
	body = ir_let_stmt(f, ir_add(ir_mul(ir_var(r), nt), linear_tid(S)), body);
	IrExpr *trips = ir_div(ir_sub(ir_add(total, nt), ir_i64c(1)), nt);
	return simplify_stmt(ir_for(r, ir_i64c(0), trips, FOR_SERIAL, body));
}

/* A block-level statement with no thread loops in it. */
static IrStmt *
uniform_work(Spmd *S, IrStmt *s)
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
	IrExpr *c = NULL;
	for (int d = 0; d < 3; d++) {
		if (!S->bdim[d])
			continue;
		IrExpr *t = ir_binop(IR_EQ, gpu_id(GPU_TID, d), ir_i64c(0));
		c = c ? ir_binop(IR_AND, c, t) : t;
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

static IrStmt *block_level(Spmd *S, IrStmt *s);
static IrStmt *block_seq(Spmd *S, IrStmt *s);
static IrStmt *implicit_level(Spmd *S, IrStmt *s);

/* block_level, or implicit_level inside thread loops around a shared stage */
static IrStmt *
level(Spmd *S, IrStmt *s)
{
	return S->implicit ? implicit_level(S, s) : block_level(S, s);
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

static bool
has_shared_alloc(IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_ALLOCATE:
		return s->alloc.buf->scope == SCOPE_SHARED || has_shared_alloc(s->alloc.body);
	case IS_FOR: return has_shared_alloc(s->loop.body);
	case IS_LET: return has_shared_alloc(s->let.body);
	case IS_PRODUCE: return has_shared_alloc(s->produce.body);
	case IS_IF: return has_shared_alloc(s->ifs.then_s) || has_shared_alloc(s->ifs.else_s);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (has_shared_alloc(s->block.stmts[i]))
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
	default:
		return false;
	}
}

static void
not_uniform(Spmd *S, Loc at, const char *what)
{
	diag_error(at.file ? at : S->k->loc, "a shared stage is computed inside %s, which "
	    "not every thread of the block runs: its barriers would not be reached by every "
	    "thread", what);
	diag_note(at.file ? at : S->k->loc, "compute the shared stage outside it, or split the "
	    "thread loops by factors that divide the block");
	S->ok = false;
}

/* A thread loop whose body computes a shared stage: its id, unguarded. */
static IrStmt *
collective_thread(Spmd *S, IrStmt *s)
{
	int d = s->loop.gpu_dim;
	int64_t a, b;
	bool full = ir_expr_equal(s->loop.extent, S->bdim[d]) ||
	    (ir_is_const(s->loop.extent, &a) && ir_is_const(S->bdim[d], &b) && a == b);
	if (!full) {
		not_uniform(S, s->loc, arena_printf(ir_arena, "thread loop '%s' (extent %s; "
		    "the block's threadIdx.%c has %s)", s->loop.var->name, ir_expr_str(s->loop.extent),
		    "xyz"[d], ir_expr_str(S->bdim[d])));
		return s;
	}
	if (!S->implicit) {
		unsigned dims = thread_dims(s);
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
	IrStmt *body = implicit_level(S, s->loop.body);
	S->implicit--;
	if (!body)
		return NULL;
	return ir_let_stmt(v, as_type(simplify_expr(ir_add(as_type(s->loop.min, ir_i64),
	    gpu_id(GPU_TID, d)), NULL), v->type), body);
}

static IrStmt *
implicit_level(Spmd *S, IrStmt *s)
{
	if (!s || !S->ok)
		return s;
	bool collective = S->collective;
	switch (s->kind) {
	case IS_FOR:
		if (s->loop.fk == FOR_GPU_THREAD)
			return needs_block(S, s) ? collective_thread(S, s) : thread_code(S, s, true);
		if (!needs_block(S, s)) {
			/* the threads together compute a shared stage; everything
			 * else is each thread's own */
			if (collective)
				return gpu_has_loop(s, FOR_GPU_THREAD) ? thread_level(S, s) :
				    uniform_work(S, s);
			return thread_code(S, s, false);
		}
		if (uses_tvar(S, s->loop.min) || uses_tvar(S, s->loop.extent)) {
			not_uniform(S, s->loc, arena_printf(ir_arena, "loop '%s', whose bounds depend "
			    "on the thread", s->loop.var->name));
			return s;
		}
		return block_level(S, s);
	case IS_LET:
		if (uses_tvar(S, s->let.value))
			add_tvar(S, s->let.var);
		return ir_let_stmt(s->let.var, s->let.value, implicit_level(S, s->let.body));
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		bool shared = b->scope == SCOPE_SHARED;
		if (shared)
			*ARENA_PUSH(ir_arena, S->shared_open, S->nshared_open, S->capshared_open) = b;
		IrStmt *body = implicit_level(S, s->alloc.body);
		if (shared)
			S->nshared_open--;
		if (!body)
			return NULL;
		IrStmt *r = ir_allocate(b, body);
		r->loc = s->loc;
		return r;
	}
	case IS_PRODUCE: {
		bool saved_u = S->update, saved_c = S->collective;
		S->update = s->produce.update;
		S->collective = shared_stage(S, s->produce.name);
		IrStmt *b = S->collective || needs_block(S, s->produce.body) ?
		    implicit_level(S, s->produce.body) : thread_code(S, s->produce.body, false);
		S->update = saved_u;
		S->collective = saved_c;
		IrStmt *r = b ? ir_produce(s->produce.name, s->produce.update, b) : NULL;
		if (r)
			r->produce.prefetch = s->produce.prefetch;
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
		return ir_if(s->ifs.cond, implicit_level(S, s->ifs.then_s),
		    implicit_level(S, s->ifs.else_s));
	case IS_BLOCK:
		return block_seq(S, s);
	case IS_STORE:
	case IS_EVALUATE:
		return collective ? uniform_work(S, s) : thread_code(S, s, false);
	default:
		return s;
	}
}

/* ---- block-level code --------------------------------------------------- */

/* The buffers a statement reads and writes (every scope but local). */
typedef struct {
	IrVisitor v;
	Buffer **r; int nr, capr;
	Buffer **w; int nw, capw;
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
	if (e->load.buf->scope != SCOPE_LOCAL)
		add_buf(&a->r, &a->nr, &a->capr, e->load.buf);
	ir_visit_expr_children(v, e);
}

static void
acc_store(IrVisitor *v, IrStmt *s)
{
	Acc *a = (Acc *)v;
	if (s->store.buf->scope != SCOPE_LOCAL)
		add_buf(&a->w, &a->nw, &a->capw, s->store.buf);
	ir_visit_stmt_children(v, s);
}

static void
accesses(Acc *a, IrStmt *s)
{
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

static IrStmt *
block_seq(Spmd *S, IrStmt *s)
{
	IrStmt **out = arena_alloc(ir_arena, (2 * s->block.n + 1) * sizeof *out);
	int n = 0;
	Acc since;
	memset(&since, 0, sizeof since);
	for (int i = 0; i < s->block.n; i++) {
		IrStmt *t = level(S, s->block.stmts[i]);
		if (!t)
			continue;
		Acc a;
		memset(&a, 0, sizeof a);
		accesses(&a, t);
		/* a double buffer's prefetch writes the half no one reads in this
		 * iteration (the loop's tail barrier orders it with the next) */
		if (is_prefetch(t))
			a.nw = 0;
		if (n && (meets(since.w, since.nw, a.r, a.nr) || meets(since.w, since.nw, a.w, a.nw) ||
		    meets(since.r, since.nr, a.w, a.nw))) {
			out[n++] = gpu_barrier();
			memset(&since, 0, sizeof since);
		}
		for (int j = 0; j < a.nr; j++)
			add_buf(&since.r, &since.nr, &since.capr, a.r[j]);
		for (int j = 0; j < a.nw; j++)
			add_buf(&since.w, &since.nw, &since.capw, a.w[j]);
		out[n++] = t;
	}
	return ir_block(out, n);
}

static IrStmt *
block_level(Spmd *S, IrStmt *s)
{
	if (!s || !S->ok)
		return s;
	switch (s->kind) {
	case IS_FOR: {
		if (s->loop.fk == FOR_GPU_THREAD)
			return has_shared_alloc(s) ? collective_thread(S, s) : thread_level(S, s);
		if (!gpu_has_loop(s, FOR_GPU_THREAD) && !S->implicit)
			return uniform_work(S, s);
		BoundsScope *saved = S->scope;
		Interval iv = { s->loop.min, simplify_expr(ir_sub(ir_add(s->loop.min,
		    s->loop.extent), ir_i64c(1)), S->scope) };
		S->scope = bounds_push(S->scope, s->loop.var, iv);
		IrStmt *body = level(S, s->loop.body);
		S->scope = saved;
		if (has_barrier(body) || has_prefetch(body))
			body = ir_seq(body, gpu_barrier());
		/* a vthread or unrolled loop around thread loops: serial here */
		return ir_for(s->loop.var, s->loop.min, s->loop.extent,
		    s->loop.fk == FOR_UNROLLED ? FOR_UNROLLED : FOR_SERIAL, body);
	}
	case IS_LET: {
		IrStmt *b = block_level(S, s->let.body);
		return ir_let_stmt(s->let.var, s->let.value, b);
	}
	case IS_ALLOCATE: {
		s->alloc.buf->scope = SCOPE_SHARED;
		IrStmt *b = block_level(S, s->alloc.body);
		IrStmt *r = b ? ir_allocate(s->alloc.buf, b) : NULL;
		if (r)
			r->loc = s->loc;
		return r;
	}
	case IS_PRODUCE: {
		bool saved = S->update;
		S->update = s->produce.update;
		IrStmt *b = block_level(S, s->produce.body);
		S->update = saved;
		IrStmt *r = b ? ir_produce(s->produce.name, s->produce.update, b) : NULL;
		if (r)
			r->produce.prefetch = s->produce.prefetch;
		return r;
	}
	case IS_IF:
		return ir_if(s->ifs.cond, block_level(S, s->ifs.then_s),
		    block_level(S, s->ifs.else_s));
	case IS_BLOCK:
		return block_seq(S, s);
	case IS_STORE:
	case IS_EVALUATE:
		return uniform_work(S, s);
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
	body = block_level(&S, body);
	if (!S.ok)
		return false;
	for (int d = 2; d >= 0; d--)
		if (k->bvar[d]) {
			Var *v = k->bvar[d];
			body = ir_let_stmt(v, as_type(simplify_expr(ir_add(as_type(k->bmin[d], ir_i64),
			    gpu_id(GPU_BID, d)), NULL), v->type), body);
		}
	for (int d = 0; d < 3; d++)
		k->block[d] = S.bdim[d] ? as_type(S.bdim[d], ir_i64) : ir_i64c(1);
	k->fn->body = body ? body : ir_evaluate(ir_int(ir_i32, 0));
	return true;
}
