/* trace_gpu.c: GPU blocks in the trace (txc viz).
 *
 * Inside a block, code outside the thread loops is the block's: the cuda
 * target (target/cuda/gpu_threads.c) spreads a nest that computes a pure
 * stage (the copy of a tile into shared memory) over the block's threads,
 * thread t taking the points t, t + T, t + 2T ... of the nest in order,
 * and runs anything else (an update) on the block's thread 0.  The trace
 * does the same, so a page shows the cooperative copy as the GPU runs it.
 * A shared stage computed inside the thread loops is one copy per block.
 */
#include <stdlib.h>
#include <string.h>

#include "viz/trace.h"

/* A shared stage computed inside a block's thread loops: the cuda target
 * (gpu_threads.c) makes it one copy per block, which the block's threads
 * make together before a barrier, and which they all then read.  Here the
 * threads run one after another, so the first to reach the k-th
 * allocation of a buffer makes its k-th copy, spread over the threads as
 * a block-level nest; the others find it made and wait for its end (the
 * barrier).  The copies live until the block ends; each one's FREE event
 * is when the next one is made (the GPU reuses the memory). */
void
tr_shared_alloc(Run *r, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	Coop *c = NULL;
	for (int i = 0; i < r->ncoop && !c; i++)
		if (r->coop[i].buf == b)
			c = &r->coop[i];
	if (!c) {
		c = ARENA_PUSH(perm, r->coop, r->ncoop, r->capcoop);
		memset(c, 0, sizeof *c);
		c->buf = b;
		c->thread = -1;
	}
	if (c->thread != r->thread) {
		c->thread = r->thread;
		c->count = 0;
	}
	int k = c->count++;
	if (k >= c->n) {
		if (c->n)
			tr_free_event(r, c->phase[c->n - 1].st, c->phase[c->n - 1].at);
		Phase *p = ARENA_PUSH(perm, c->phase, c->n, c->cap);
		p->st = tr_new_store(r, b, &p->at);
		p->ready = -1;
	}
	Phase *p = &c->phase[k];
	if (p->ready >= 0 && r->tick < p->ready)
		r->tick = p->ready;
	c->cur = k;
	*ARENA_PUSH(perm, r->live, r->nlive, r->caplive) = p->st;
	tr_exec(r, s->alloc.body);
	r->nlive--;
	c->cur = -1;
}

/* The end of a block: its shared copies are freed. */
void
tr_end_block(Run *r)
{
	for (int i = 0; i < r->ncoop; i++) {
		Coop *c = &r->coop[i];
		if (c->n)
			tr_free_event(r, c->phase[c->n - 1].st, c->phase[c->n - 1].at);
		for (int k = 0; k < c->n; k++) {
			free(c->phase[k].st->data);
			c->phase[k].st->data = NULL;
		}
	}
	r->ncoop = 0;
}

/* The produce of a shared copy (exec_shared_alloc): made once, by the
 * block's threads together, as a block-level nest (exec_for spreads it);
 * true when s is one. */
bool
tr_coop_produce(Run *r, IrStmt *s)
{
	Coop *c = NULL;
	for (int i = 0; i < r->ncoop && !c; i++)
		if (r->coop[i].cur >= 0 && !strcmp(r->coop[i].buf->name, s->produce.name))
			c = &r->coop[i];
	if (!c)
		return false;
	Phase *p = &c->phase[c->cur];
	if (p->ready >= 0)
		return true;      /* made by an earlier thread */
	int depth = r->thread_depth, thread = r->thread;
	r->thread_depth = 0;
	r->thread = (int)(r->gpu_block * r->gpu_threads);
	*ARENA_PUSH(perm, r->prod, r->nprod, r->capprod) =
	    (struct Prod){ s->produce.name, s->produce.update };
	tr_exec(r, s->produce.body);
	r->nprod--;
	r->thread_depth = depth;
	r->thread = thread;
	p->ready = r->tick;
	return true;
}

/* Whether every variable of e has a value here. */
typedef struct {
	IrVisitor v;
	Run *r;
	bool ok;
} Bound;

static void
bound_var(IrVisitor *v, IrExpr *e)
{
	Bound *b = (Bound *)v;
	bool found = false;
	for (int i = b->r->nenv - 1; i >= 0 && !found; i--)
		found = b->r->env[i].v == e->var;
	b->ok &= found;
}

static bool
computable(Run *r, IrExpr *e)
{
	Bound b = { .v = {.expr = {[IR_VAR] = bound_var}}, .r = r, .ok = true };
	ir_visit_expr(&b.v, e);
	return b.ok;
}

/* The block's threads: per dimension, the largest extent of a thread
 * loop in s that can be computed at the block's level. */
void
tr_block_dims(Run *r, IrStmt *s, int64_t dim[3])
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_FOR:
		if (s->loop.fk == FOR_GPU_THREAD && s->loop.gpu_dim >= 0 && s->loop.gpu_dim < 3 &&
		    computable(r, s->loop.extent)) {
			int64_t n = tr_eval_int(r, s->loop.extent);
			if (n > dim[s->loop.gpu_dim])
				dim[s->loop.gpu_dim] = n;
		}
		tr_block_dims(r, s->loop.body, dim);
		break;
	case IS_LET: tr_block_dims(r, s->let.body, dim); break;
	case IS_ALLOCATE: tr_block_dims(r, s->alloc.body, dim); break;
	case IS_PRODUCE: tr_block_dims(r, s->produce.body, dim); break;
	case IS_IF:
		tr_block_dims(r, s->ifs.then_s, dim);
		tr_block_dims(r, s->ifs.else_s, dim);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			tr_block_dims(r, s->block.stmts[i], dim);
		break;
	default: break;
	}
}

static bool
uses_chain(IrExpr *e, IrStmt **chain, int n)
{
	for (int i = 0; i < n; i++)
		if (ir_uses_var(e, chain[i]->loop.var))
			return true;
	return false;
}

/* A block-level nest spread over the block's threads, in rounds of T
 * points; a round starts when the one before it ends. */
void
tr_spread(Run *r, IrStmt *s)
{
	IrStmt *chain[16], *body = s;
	int64_t min[16], ext[16], total = 1;
	int n = 0;
	while (body->kind == IS_FOR && n < 16 && body->loop.fk != FOR_GPU_THREAD &&
	    body->loop.fk != FOR_GPU_BLOCK && !uses_chain(body->loop.min, chain, n) &&
	    !uses_chain(body->loop.extent, chain, n)) {
		min[n] = tr_eval_int(r, body->loop.min);
		ext[n] = tr_eval_int(r, body->loop.extent);
		if (ext[n] < 0)
			ext[n] = 0;
		if (ext[n] && total > VIZ_MAX_STEPS / ext[n])
			tr_fail(r, "a block-level loop nest of more than %lld points (the limit for a "
			    "picture); use smaller sizes", VIZ_MAX_STEPS);
		total *= ext[n];
		chain[n++] = body;
		body = body->loop.body;
	}
	int64_t T = r->gpu_threads, rstart = r->tick, rend = r->tick;
	int thread0 = r->thread;
	for (int i = 0; i < n; i++)
		*ARENA_PUSH(perm, r->loops, r->nloops, r->caploops) = 0;
	for (int64_t q = 0; q < total; q++) {
		tr_step(r);
		if (q % T == 0)
			rstart = rend;
		r->tick = rstart;
		int64_t th = r->gpu_block * T + q % T;
		if (th > INT32_MAX / 2)
			tr_fail(r, "too many threads to draw");
		r->thread = (int)th;
		if (r->thread + 1 > r->t->threads)
			r->t->threads = r->thread + 1;
		int64_t rest = q;
		for (int i = n - 1; i >= 0; i--) {
			Val v = { .i = min[i] + rest % ext[i] };
			rest /= ext[i];
			r->loops[r->nloops - n + i] = v.i;
			tr_bind(r, chain[i]->loop.var, v);
		}
		tr_exec(r, body);
		r->nenv -= n;
		if (r->tick > rend)
			rend = r->tick;
	}
	r->nloops -= n;
	r->tick = rend;
	r->thread = thread0;
}
