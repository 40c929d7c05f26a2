/* gpu_wspec.c: pipeline(S, producer = warpgroup), a warp-specialised TMA
 * pipeline (run by gpu_tma, before it rewrites the pipeline's waits).
 *
 * The kernel's warpgroups (threadIdx.x = 128, threadIdx.z = Z of them, the
 * wgmma consumers) gain one more, z = Z, that only issues the TMA loads:
 * its thread 0 runs
 *
 *     for (f, 0, fills) {
 *       if (f >= S) gpu.mbar_wait(empty[f % S], (f / S + 1) % 2)
 *       the fill of f: gpu.tma(...) of each tma() tile into slot f % S
 *     }
 *
 * and the consumers run the pipelined loop with neither copies nor
 * barriers:
 *
 *     for (ko, ...) {
 *       gpu.mbar_wait(T.full[ko % S], ko / S % 2) for each tile T
 *       the wgmma calls on slot ko % S, commit, wgmma.wait_group D
 *       gpu.mbar_arrive(empty[(ko - D) % S], ko >= D)
 *     }
 *
 * Each slot's "full" mbarrier completes when its boxes land (gpu_tma.c),
 * its "empty" one when every consumer warp has arrived, after its
 * wgmma.wait_group retired the group that read the slot (D = the
 * pipeline's defer): the producer refills a slot only then.  A warp
 * arrives once, by its lane 0 (count 4 Z): the wait is .sync.aligned, so
 * when lane 0 is past it the warp is (the emulator counts the warp's
 * arrival at its last lane's call: txrt_emu_mbar_arrive_warp).
 *
 * Both forms sit in one kernel, as tma() has them: where the host could
 * not encode the tensor maps (tma_on = 0) the producer warpgroup does
 * nothing and the consumers run the pipeline as without the option, the
 * threads' cp.async copies and the barriers, which then count the
 * consumers only (gpu.barrier(128 Z): bar.sync 1, 128 Z), as does any
 * other barrier of theirs.  Everything of the kernel outside the pipeline
 * (the fragment's fill and store) is the consumers' alone; the barrier
 * after the mbarriers' initialisation is everyone's.
 *
 * The fill of f is the loop's prefetch with the loop's variable at f - A
 * (A = S - 1 - D, how far ahead the prefetch runs): double_buffer.c made
 * the prologue's fills and the prefetch from one copy, so that is fill f
 * for every f, the prologue's included.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/gpu_spmd.h"

typedef struct {
	GpuKernel *k;
	Buffer *tile;             /* a tile with the option: where errors go */
	IrStmt *loop;             /* the pipelined loop */
	int S, D;
	int64_t Z;                /* consumer warpgroups */
	Buffer *empty;
	bool found, ok;
} Ws;

static bool wfail(Ws *w, const char *fmt, ...) TXC_PRINTF(2, 3);
static bool
wfail(Ws *w, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	diag_error(w->tile->producer_loc, "producer = warpgroup for '%s': %s", w->tile->name, why);
	w->ok = false;
	return false;
}

/* TXC_CUDA_WSPEC=how: a wrong plan for the race checker's tests
 * (tests/unit/cuda_wspec.sh) */
static bool
wrong(const char *how)
{
	const char *w = getenv("TXC_CUDA_WSPEC");
	return w && !strcmp(w, how);
}

static bool
call_named(IrExpr *e, const char *name)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC && !strcmp(e->call.name, name);
}

/* ---- what a statement holds ------------------------------------------------ */

typedef struct {
	IrVisitor v;
	bool tma, async;          /* gpu.tma calls; any of the pipeline's copies or waits */
	IrStmt **fills;           /* the gpu.tma evaluations, in order */
	int nfills, capfills;
	Var **vars;               /* the variables its lets and loops bind */
	int nvars, capvars;
} Has;

static void
has_let(IrVisitor *v, IrStmt *s)
{
	Has *h = (Has *)v;
	*ARENA_PUSH(ir_arena, h->vars, h->nvars, h->capvars) = s->kind == IS_LET ? s->let.var :
	    s->loop.var;
	ir_visit_stmt_children(v, s);
}

static void
has_eval(IrVisitor *v, IrStmt *s)
{
	Has *h = (Has *)v;
	IrExpr *e = s->eval.value;
	if (gpu_tma_is(e)) {
		h->tma = true;
		*ARENA_PUSH(ir_arena, h->fills, h->nfills, h->capfills) = s;
	}
	if (gpu_tma_is(e) || gpu_copy_is(e) || call_named(e, ASYNC_COMMIT) ||
	    call_named(e, ASYNC_WAIT))
		h->async = true;
	ir_visit_stmt_children(v, s);
}

static Has
has(IrStmt *s)
{
	Has h;
	memset(&h, 0, sizeof h);
	h.v.stmt[IS_EVALUATE] = has_eval;
	h.v.stmt[IS_LET] = has_let;
	h.v.stmt[IS_FOR] = has_let;
	if (s)
		ir_visit_stmt(&h.v, s);
	return h;
}

static bool
is_barrier(IrStmt *s)
{
	return s && s->kind == IS_EVALUATE && call_named(s->eval.value, GPU_BARRIER);
}

/* ---- the consumers' statements ---------------------------------------------- */

/* Every barrier in s counting the consumers only. */
typedef struct {
	IrMutator m;
	int64_t n;
} Counted;

static IrStmt *
counted_eval(IrMutator *m, IrStmt *s)
{
	if (!is_barrier(s) || s->eval.value->call.nargs)
		return s;
	IrExpr *n = ir_i64c(((Counted *)m)->n);
	return ir_evaluate(ir_call_intrinsic(GPU_BARRIER, ir_i32, &n, 1));
}

static IrStmt *
counted(Ws *w, IrStmt *s)
{
	Counted c;
	memset(&c, 0, sizeof c);
	c.m.stmt[IS_EVALUATE] = counted_eval;
	c.n = 128 * w->Z;
	return s ? ir_mutate_stmt(&c.m, s) : NULL;
}

/* The loop's body without its copies, their commits and waits, and its
 * barriers (the prefetch's `if` goes whole). */
static IrStmt *
strip_eval(IrMutator *m, IrStmt *s)
{
	(void)m;
	IrExpr *e = s->eval.value;
	if (is_barrier(s) || call_named(e, ASYNC_COMMIT) || call_named(e, ASYNC_WAIT))
		return ir_block(NULL, 0);
	return s;
}

static IrStmt *
strip_if(IrMutator *m, IrStmt *s)
{
	if (has(s).async && !s->ifs.else_s)
		return ir_block(NULL, 0);
	return ir_mutate_stmt_children(m, s);
}

static IrStmt *
strip_produce(IrMutator *m, IrStmt *s)
{
	if (s->produce.async)
		return ir_block(NULL, 0);
	return ir_mutate_stmt_children(m, s);
}

static IrExpr *
bar_at(Buffer *b, IrExpr *slot)
{
	IrExpr *i = simplify_expr(slot, NULL);
	return ir_load(b, &i, 1, NULL, 1);
}

static IrStmt *
mbar_call(const char *name, Buffer *b, IrExpr *slot, IrExpr *arg)
{
	IrExpr *a[2] = { bar_at(b, slot), arg ? simplify_expr(arg, NULL) : NULL };
	return ir_evaluate(ir_call_intrinsic(name, ir_i32, a, arg ? 2 : 1));
}

/* The consumers' loop: a wait on each tile's full barrier, the body
 * stripped, the arrival on the empty barrier of the slot whose group
 * the body's wait retired. */
static IrStmt *
consumer_loop(Ws *w)
{
	IrStmt *L = w->loop;
	IrMutator m;
	memset(&m, 0, sizeof m);
	m.stmt[IS_EVALUATE] = strip_eval;
	m.stmt[IS_IF] = strip_if;
	m.stmt[IS_PRODUCE] = strip_produce;
	IrStmt *body = ir_mutate_stmt(&m, L->loop.body);
	if (has(body).async) {
		wfail(w, "its loop '%s' copies other tiles than those TMA loads (every tile "
		    "the loop pipelines needs tma())", L->loop.var->name);
		return NULL;
	}
	IrExpr *it = ir_sub(ir_var(L->loop.var), L->loop.min), *S = ir_i64c(w->S);
	IrStmt *waits = NULL;
	for (int i = 0; i < w->k->ntma; i++)
		waits = ir_seq(waits, mbar_call(GPU_MBAR_WAIT, w->k->tma[i].bar, ir_mod(it, S),
		    ir_mod(ir_div(it, S), ir_i64c(2))));
	/* with defer, the first D iterations retire no group: their arrival
	 * is predicated off (mbarrier.arrive under a predicate, no branch
	 * beside the groups in flight) */
	IrExpr *done = ir_sub(it, ir_i64c(w->D));
	IrExpr *when = w->D ? ir_cast(ir_i32, ir_binop(IR_GE, it, ir_i64c(w->D))) : ir_int(ir_i32, 1);
	IrStmt *arrive = mbar_call(GPU_MBAR_ARRIVE, w->empty, ir_mod(done, S), when);
	/* for the checker's tests: TXC_CUDA_WSPEC=early arrives before the
	 * calls that read the slot (the slot released too soon) */
	if (wrong("noarrive"))   /* and =noarrive never releases it */
		arrive = NULL;
	if (wrong("early"))
		return ir_for_like(L, L->loop.min, L->loop.extent, ir_seq(ir_seq(waits,
		    mbar_call(GPU_MBAR_ARRIVE, w->empty, ir_mod(it, S), ir_int(ir_i32, 1))), body));
	return ir_for_like(L, L->loop.min, L->loop.extent, ir_seq(ir_seq(waits, body), arrive));
}

/* ---- the producer -------------------------------------------------------------- */

static IrStmt *
producer(Ws *w)
{
	IrStmt *L = w->loop;
	Has h = has(L->loop.body);
	Var *f = ir_new_var("fill", ir_i64);
	IrExpr *S = ir_i64c(w->S), *fv = ir_var(f);
	int A = w->S - 1 - w->D;
	/* the prefetch of iteration ko fills ko - min + A */
	IrExpr *ko = ir_add(L->loop.min, ir_sub(fv, ir_i64c(A)));
	IrStmt *fill = NULL;
	for (int i = 0; i < h.nfills; i++) {
		for (int j = 0; j < h.nvars; j++)
			if (ir_stmt_uses_var(h.fills[i], h.vars[j])) {
				wfail(w, "a TMA load of loop '%s' depends on '%s', bound inside the loop: "
				    "the producer issues it outside", L->loop.var->name, h.vars[j]->name);
				return NULL;
			}
		IrStmt *x = ir_substitute_stmt(h.fills[i], L->loop.var, gpu_spmd_as_type(ko,
		    L->loop.var->type));
		fill = ir_seq(fill, simplify_stmt(x));
	}
	IrStmt *wait = ir_if(ir_binop(IR_GE, fv, S), mbar_call(GPU_MBAR_WAIT, w->empty,
	    ir_mod(fv, S), ir_mod(ir_add(ir_div(fv, S), ir_i64c(1)), ir_i64c(2))), NULL);
	if (wrong("noempty"))   /* the checker's tests: refills not waiting for "empty" */
		wait = NULL;
	IrExpr *fills = gpu_spmd_as_type(L->loop.extent, ir_i64);
	IrStmt *loop = ir_for(f, ir_i64c(0), fills, FOR_SERIAL, ir_seq(wait, fill));
	IrExpr *one = ir_binop(IR_AND, ir_binop(IR_NE, ir_var(w->k->tma_on), ir_make_const(ir_i32, 0)),
	    ir_binop(IR_AND, ir_binop(IR_EQ, gpu_id(GPU_TID, 0), ir_i64c(0)),
	    ir_binop(IR_EQ, gpu_id(GPU_TID, 1), ir_i64c(0))));
	return ir_if(one, loop, NULL);
}

/* ---- the split ------------------------------------------------------------------- */

static IrExpr *
is_producer(Ws *w)
{
	return ir_binop(IR_GE, gpu_id(GPU_TID, 2), ir_i64c(w->Z));
}

static IrStmt *
consumers_only(Ws *w, IrStmt *s)
{
	if (!s || is_barrier(s) || (s->kind == IS_BLOCK && !s->block.n))
		return s;
	return ir_if(ir_binop(IR_LT, gpu_id(GPU_TID, 2), ir_i64c(w->Z)), counted(w, s), NULL);
}

/* The block holding the loop: its pipeline (the statements before the
 * loop that copy, commit, wait or are barriers, and the loop) becomes
 * the producer's, the consumers' with TMA and the consumers' without. */
static IrStmt *
split_block(Ws *w, IrStmt *s, int at)
{
	int from = at;
	while (from > 0 && (is_barrier(s->block.stmts[from - 1]) || has(s->block.stmts[from - 1]).async))
		from--;
	IrStmt *plain = NULL, *loop = consumer_loop(w);
	if (!loop)
		return s;
	/* the wgmma wait that drains a deferred loop (gpu_wgmma.c) goes with
	 * it: with the groups in flight crossing the roles' branches, ptxas
	 * serializes the wgmma (C7518) */
	IrStmt *drain = at + 1 < s->block.n ? s->block.stmts[at + 1] : NULL;
	if (drain && drain->kind == IS_EVALUATE && call_named(drain->eval.value, GPU_WGMMA_SYNC)) {
		loop = ir_seq(loop, drain);
		at++;
	}
	for (int i = from; i <= at; i++)
		plain = ir_seq(plain, s->block.stmts[i]);
	IrExpr *on = ir_binop(IR_NE, ir_var(w->k->tma_on), ir_make_const(ir_i32, 0));
	IrStmt *region = ir_if(is_producer(w), producer(w), ir_if(on, loop, counted(w, plain)));
	IrStmt **out = arena_alloc(ir_arena, (size_t)(s->block.n + 1) * sizeof *out);
	int n = 0;
	for (int i = 0; i < from; i++)
		out[n++] = consumers_only(w, s->block.stmts[i]);
	out[n++] = region;
	for (int i = at + 1; i < s->block.n; i++)
		out[n++] = consumers_only(w, s->block.stmts[i]);
	return ir_block(out, n);
}

/* s with the pipeline split, the rest of each block around it the
 * consumers'; *in: whether s holds the loop. */
static IrStmt *
split(Ws *w, IrStmt *s, bool *in)
{
	*in = false;
	if (!s)
		return s;
	if (s == w->loop) {
		*in = true;
		return s;
	}
	switch (s->kind) {
	case IS_BLOCK: {
		for (int i = 0; i < s->block.n; i++) {
			bool sub;
			IrStmt *x = split(w, s->block.stmts[i], &sub);
			if (!sub)
				continue;
			*in = true;
			if (x == w->loop)
				return split_block(w, s, i);
			IrStmt **out = arena_alloc(ir_arena, (size_t)(s->block.n + 1) * sizeof *out);
			for (int j = 0; j < s->block.n; j++)
				out[j] = j == i ? x : consumers_only(w, s->block.stmts[j]);
			return ir_block(out, s->block.n);
		}
		return s;
	}
	case IS_ALLOCATE: case IS_LET: case IS_PRODUCE: case IS_FOR: {
		IrStmt **body = s->kind == IS_ALLOCATE ? &s->alloc.body : s->kind == IS_LET ?
		    &s->let.body : s->kind == IS_PRODUCE ? &s->produce.body : &s->loop.body;
		bool sub;
		IrStmt *x = split(w, *body, &sub);
		if (!sub)
			return s;
		*in = true;
		if (x == w->loop) {   /* the loop alone in its parent: a block of one */
			IrStmt *b = arena_alloc(ir_arena, sizeof *b);
			memset(b, 0, sizeof *b);
			b->kind = IS_BLOCK;
			b->loc = x->loc;
			b->block.stmts = arena_alloc(ir_arena, sizeof *b->block.stmts);
			b->block.stmts[0] = x;
			b->block.n = 1;
			x = split_block(w, b, 0);
		}
		IrStmt *c = arena_alloc(ir_arena, sizeof *c);
		*c = *s;
		*(s->kind == IS_ALLOCATE ? &c->alloc.body : s->kind == IS_LET ? &c->let.body :
		    s->kind == IS_PRODUCE ? &c->produce.body : &c->loop.body) = x;
		return c;
	}
	case IS_IF:
		if (split(w, s->ifs.then_s, in), *in)
			wfail(w, "its loop is inside a condition of the kernel");
		return s;
	default:
		return s;
	}
}

/* The pipelined loop: the innermost one whose body issues the TMA loads. */
typedef struct {
	IrVisitor v;
	IrStmt *loop;
} Find;

static void
find_loop(IrVisitor *v, IrStmt *s)
{
	Find *f = (Find *)v;
	ir_visit_stmt_children(v, s);
	if (!f->loop && has(s->loop.body).tma)
		f->loop = s;
}

bool
gpu_wspec(GpuKernel *k, IrStmt **body)
{
	Ws w;
	memset(&w, 0, sizeof w);
	w.k = k;
	w.ok = true;
	for (int i = 0; i < k->ntma; i++)
		if (k->tma[i].tile->pipeline_producer && !w.tile)
			w.tile = k->tma[i].tile;
	if (!w.tile)
		return true;
	int64_t x, y, z;
	if (!k->wgmma)
		return wfail(&w, "the consumers are warpgroups of wgmma calls (sm_90a), and kernel "
		    "'%s' has none", k->name);
	if (!ir_is_const(k->block[0], &x) || !ir_is_const(k->block[1], &y) ||
	    !ir_is_const(k->block[2], &z) || x != 128 || y != 1 || z < 1 || z > 3)
		return wfail(&w, "the producer is one more warpgroup in threadIdx.z beside 1 to 3 of "
		    "wgmma calls, blocks of (128, 1, Z) threads; kernel '%s' has (%s, %s, %s)", k->name,
		    ir_expr_str(k->block[0]), ir_expr_str(k->block[1]), ir_expr_str(k->block[2]));
	w.Z = z;
	w.S = k->tma[0].slots;
	w.D = w.tile->pipeline_defer;
	for (int i = 0; i < k->ntma; i++)
		if (!k->tma[i].tile->pipeline_producer || k->tma[i].slots != w.S)
			return wfail(&w, "every tma() tile of the kernel needs it, with the same "
			    "stages ('%s' has %s)", k->tma[i].tile->name,
			    k->tma[i].tile->pipeline_producer ? "other stages" : "no producer");
	Find f;
	memset(&f, 0, sizeof f);
	f.v.stmt[IS_FOR] = find_loop;
	ir_visit_stmt(&f.v, *body);
	if (!f.loop)
		return wfail(&w, "no loop of kernel '%s' issues its TMA loads", k->name);
	w.loop = f.loop;
	w.empty = ir_new_buffer(arena_printf(ir_arena, "%s.empty", w.tile->name), TY_F64, 1);
	w.empty->min[0] = ir_i64c(0);
	w.empty->extent[0] = ir_i64c(w.S);
	w.empty->scope = SCOPE_SHARED;
	w.empty->flat = true;
	bool in;
	IrStmt *b = split(&w, *body, &in);
	if (!w.ok)
		return false;
	if (!in)
		ICE("producer = warpgroup: the pipelined loop was not found again");
	k->block[2] = ir_i64c(z + 1);
	if (k->max_threads)
		k->max_threads = 128 * (z + 1);
	k->wspec_empty = w.empty;
	k->wspec_arrivals = 4 * z;   /* a warp's lane 0 */
	*body = b;
	return true;
}
