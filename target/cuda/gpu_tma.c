/* gpu_tma.c: tma(), a pipelined shared tile filled by the Tensor Memory
 * Accelerator of sm_90 GPUs and counted on mbarriers.
 *
 * A tile marked tma() and pipeline(S) is copied, as without tma(), by a
 * block-level nest of two loops (rows, then columns) from a 2-D input
 * tensor.  Each fill of a slot becomes, instead of the threads' 16-byte
 * cp.async pieces (gpu_copy.c),
 *
 *     if (tma.on) { if (tid == 0) gpu.tma(As[slot], A[origin], map, bar[slot], bytes) }
 *     else { ...the cp.async pieces... }
 *
 * one cp.async.bulk.tensor.2d of the whole box, issued by thread 0 after an
 * mbarrier.arrive.expect_tx of the box's bytes on the slot's "full"
 * mbarrier; the box's global origin comes from the first element the copy
 * reads (row = origin / columns, column = origin % columns).  The tensor
 * map (one per input tensor and box: a GpuTma of the kernel) is encoded on
 * the host before each launch (cuda_host.c, libtxrt's
 * txrt_cuda_tensor_map) and passed by value as a 128-byte grid_constant
 * parameter; the host sets tma.on, a further parameter, when every map of
 * the launch could be encoded (base 16-byte aligned, row pitch a multiple
 * of 16 bytes, ...) and leaves it 0 otherwise, and the kernel then runs
 * the cp.async path: both are in one kernel, a uniform branch.
 *
 * The pipeline's waits (ASYNC_WAIT(S - 2, fill, fills) of
 * lower/double_buffer.c) keep their cp.async.wait_group and gain, when
 * tma.on and fill < fills, a wait on fill's slot's mbarrier with parity
 * (fill / S) % 2: each slot's barrier completes one phase per fill.  The
 * mbarriers (S a tile, shared) are initialised by thread 0 (count 1: the
 * expect_tx arrival) and fenced before a barrier at the kernel's start.
 * A slot is refilled only after the bar.sync that already follows each
 * iteration's wait (gpu_spmd.c): every thread has read the slot by then,
 * so no "empty" mbarrier is needed.
 *
 * The box is the tile: its rows R and its row W of columns (W elements a
 * row of the slot, no padding), with the slot's swizzle() as the map's
 * swizzle mode, which lays the box out exactly as gpu_swizzle.c does when
 * the slot starts at a multiple of 1024 bytes (gpu_shared.c places tma
 * tiles so) and a row is 32, 64 or 128 bytes.  Rows past the tensor's edge
 * and columns past K are zero-filled by the hardware, as the pieces'
 * src-size form does.
 *
 * A swizzled 16-bit row wider than the swizzle's 128 bytes (wgmma's b of
 * N = 128: 256-byte rows) is one box only where the tile is stored in
 * panels of 128-byte rows (Buffer.swizzle_panel_rows, which gpu_wgmma
 * sets after this pass: gpu_tma checks it then).  Panel p holds columns
 * 64p .. 64p + 63 of every row of the buffer, so slot s's part of it is R
 * rows of 128 bytes at p * rows * 128 + s * R * 128 bytes, which a box of
 * R rows x 64 columns with the 128-byte swizzle writes exactly (R a
 * multiple of 8: each part starts at a multiple of 1024 bytes).  A fill
 * is then W * 2 / 128 boxes (GpuTma.boxes) of one map whose box is 64
 * columns, box p at column origin + 64p landing in panel p, after one
 * arrive.expect_tx of all their bytes (cuda_tma.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/gpu_spmd.h"

bool
gpu_tma_is(IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, GPU_TMA) && e->call.nargs == GPU_TMA_NARGS;
}

static bool
call_is(IrExpr *e, const char *name)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, name);
}

bool
gpu_tma_mbar_is(IrExpr *e)
{
	return call_is(e, GPU_MBAR_INIT) || call_is(e, GPU_MBAR_WAIT) || call_is(e, GPU_MBAR_ARRIVE);
}

static int64_t
elem_bytes(ScalarType t)
{
	int bits = ir_bits(t);
	return bits < 8 ? 1 : bits / 8;
}

/* The step of e when v steps by 1, if it simplifies to a constant. */
static bool
step_of(IrExpr *e, Var *v, int64_t *c)
{
	IrExpr *d = simplify_expr(ir_sub(ir_substitute(e, v, ir_add(ir_var(v), ir_i64c(1))), e),
	    NULL);
	return ir_is_const(d, c);
}

/* e with every min(x, E) whose x uses v or u replaced by x (a tile's
 * clamp to the tensor's edge: the hardware zero-fills there instead). */
typedef struct {
	IrMutator m;
	Var *v, *u;
} Unclamp;

static IrExpr *
unclamp_min(IrMutator *m, IrExpr *e)
{
	Unclamp *c = (Unclamp *)m;
	e = ir_mutate_expr_children(m, e);
	bool ua = ir_uses_var(e->a, c->v) || ir_uses_var(e->a, c->u);
	bool ub = ir_uses_var(e->b, c->v) || ir_uses_var(e->b, c->u);
	if (ua && !ub)
		return e->a;
	if (ub && !ua)
		return e->b;
	return e;
}

static IrExpr *
unclamp(IrExpr *e, Var *v, Var *u)
{
	Unclamp c;
	memset(&c, 0, sizeof c);
	c.m.expr[IR_MIN] = unclamp_min;
	c.v = v;
	c.u = u;
	return ir_mutate_expr(&c.m, e);
}

/* Why a swizzled row of `bytes` is not boxes of 128-byte panels. */
static const char *
wide_why(int64_t bytes, int64_t eb)
{
	return arena_printf(ir_arena, "a swizzled box's row is at most 128 bytes (the swizzle "
	    "span); this tile's rows are %lld bytes, and only a 16-bit tile that wgmma reads as "
	    "its b, stored in panels of 128-byte rows, is filled by one box a panel (leave it "
	    "unswizzled, or make its rows at most %lld elements)", (long long)bytes,
	    (long long)(128 / eb));
}

/* A tma() that cannot be: said once, at the primitive (the tile then
 * keeps its cp.async copies). */
static IrStmt *fail(Spmd *S, Buffer *b, const char *fmt, ...) TXC_PRINTF(3, 4);
static IrStmt *
fail(Spmd *S, Buffer *b, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	diag_error(b->tma_loc, "tma of '%s': %s", b->name, why);
	b->tma = false;
	S->ok = false;
	return NULL;
}

/* Whether e is x * cols + y, x stepping by 1 with v and y free of v: the
 * flat index of row x of a row-major tensor of cols columns. */
static bool
row_major(IrExpr *e, Var *v, IrExpr *cols)
{
	int64_t c;
	if (!ir_uses_var(e, v))
		return false;
	if (e->kind == IR_ADD) {
		bool ua = ir_uses_var(e->a, v), ub = ir_uses_var(e->b, v);
		if (ua && ub)
			return false;
		return row_major(ua ? e->a : e->b, v, cols);
	}
	if (e->kind == IR_SUB && !ir_uses_var(e->b, v))
		return row_major(e->a, v, cols);
	if (e->kind != IR_MUL)
		return false;
	IrExpr *x = ir_expr_equal(e->b, cols) ? e->a : ir_expr_equal(e->a, cols) ? e->b : NULL;
	return x && step_of(x, v, &c) && c == 1;
}

/* The map of (src, tile), made on first use. */
static int
map_of(GpuKernel *k, Buffer *src, Buffer *tile, int64_t w, int64_t r, int slots, int boxes)
{
	for (int i = 0; i < k->ntma; i++)
		if (k->tma[i].src == src && k->tma[i].tile == tile)
			return i;
	GpuTma *t = ARENA_PUSH(ir_arena, k->tma, k->ntma, k->captma);
	memset(t, 0, sizeof *t);
	t->src = src;
	t->tile = tile;
	t->box[0] = w;
	t->box[1] = r;
	t->slots = slots;
	t->boxes = boxes;
	t->swizzle = tile->swizzle_row ? (int)(w * elem_bytes(tile->elem)) : 0;
	t->map = ir_new_buffer(arena_printf(ir_arena, "%s.map", src->name), TY_U8, 1);
	t->map->min[0] = ir_i64c(0);
	t->map->extent[0] = ir_i64c(128);
	t->map->flat = true;
	/* 8 bytes an mbarrier; f64, not an integer type, because only their
	 * addresses are used and gpu_index32.c bounds every integer load */
	t->bar = ir_new_buffer(arena_printf(ir_arena, "%s.full", tile->name), TY_F64, 1);
	t->bar->min[0] = ir_i64c(0);
	t->bar->extent[0] = ir_i64c(slots);
	t->bar->scope = SCOPE_SHARED;
	t->bar->flat = true;
	t->loc = tile->tma_loc;
	if (!k->tma_on)
		k->tma_on = ir_new_var("tma_on", ir_i32);   /* i32: no index (gpu_index32.c) */
	return k->ntma - 1;
}

IrStmt *
gpu_tma_copy(Spmd *S, IrStmt *s, IrStmt *plain, IrExpr *tid)
{
	if (s->kind != IS_FOR || s->loop.body->kind != IS_FOR)
		return NULL;
	IrStmt *outer = s, *inner = s->loop.body, *st = inner->loop.body;
	if (st->kind != IS_STORE || !st->store.buf->tma || st->store.buf->scope != SCOPE_SHARED)
		return NULL;
	Buffer *tile = st->store.buf;
	if (!S->async && tile->pipeline) {
		/* the pipeline's loop is gone (one step of it: sizes fixed by -D),
		 * and its copy with it: the plain copy, no TMA */
		tile->tma = false;
		return NULL;
	}
	if (!S->async) {
		return fail(S, tile, "it needs pipeline(N) (TMA loads complete on the "
		    "pipeline's mbarriers)");
	}
	IrExpr *ld = st->store.value;
	if (st->store.pred || st->store.nidx != 1 || ld->kind != IR_LOAD || ld->load.nidx != 1 ||
	    ld->a || ld->type.lanes != 1) {
		return fail(S, tile, "its copy is not one element of an input a step");
	}
	Buffer *src = ld->load.buf;
	if (src->scope != SCOPE_GLOBAL || src->abi_index < 0 || src->ndims != 2 ||
	    src->elem != tile->elem) {
		return fail(S, tile, "TMA copies a box of a 2-D input tensor of the tile's element "
		    "type ('%s' has %d dimensions)", src->name, src->ndims);
	}
	Var *v0 = outer->loop.var, *v1 = inner->loop.var;
	int64_t R, W, eb = elem_bytes(tile->elem);
	IrExpr *e0 = simplify_expr(gpu_spmd_as_type(outer->loop.extent, ir_i64), NULL);
	IrExpr *e1 = simplify_expr(gpu_spmd_as_type(inner->loop.extent, ir_i64), NULL);
	/* the box's row is the slot's row: a copy of fewer columns (the tail
	 * of k, whose extent sizes fixed by -D leave as 16 or K - ko*32) is
	 * the same box, the hardware zero-filling the columns past the
	 * tensor (the slot has room for them) */
	int64_t rowstep, wmax;
	bool known = ir_is_const(e1, &wmax) || bounds_const_max(e1, &wmax);
	if (step_of(st->store.idx[0], v0, &rowstep) && rowstep > 0 && (!known || wmax <= rowstep))
		W = rowstep;
	else
		W = known ? wmax : -1;
	if (!(ir_is_const(e0, &R) || bounds_const_max(e0, &R)) || W < 0) {
		return fail(S, tile, "its box needs a constant number of rows and columns");
	}
	if (R < 1 || R > 256 || W < 1 || W > 256)
		return fail(S, tile, "a box is 1 to 256 rows of 1 to 256 elements; this tile is "
		    "%lld x %lld", (long long)R, (long long)W);
	if (W * eb % 16)
		return fail(S, tile, "a box's row must be a multiple of 16 bytes; it is %lld "
		    "bytes", (long long)(W * eb));
	if (tile->swizzle_row && tile->swizzle_row != W)
		return fail(S, tile, "its swizzled row (%lld elements) is not the box's row "
		    "(%lld)", (long long)tile->swizzle_row, (long long)W);
	/* a swizzled row wider than the swizzle span: one box a 128-byte
	 * panel, if the tile is stored in panels (gpu_tma checks that once
	 * gpu_wgmma has decided it) */
	int64_t boxes = 1, BW = W;
	if (tile->swizzle_row && W * eb > 128) {
		if (eb != 2 || W * eb % 128)
			return fail(S, tile, "%s", wide_why(W * eb, eb));
		boxes = W * eb / 128;
		BW = 128 / eb;
	}
	/* the slot: rows of W elements, in the order of the box's */
	IrExpr *di = st->store.idx[0];
	int64_t c;
	if (!step_of(di, v1, &c) || c != 1 || !step_of(di, v0, &c) || c != W)
		return fail(S, tile, "its slot is not the box's rows one after another (rows of "
		    "%lld elements)", (long long)W);
	int64_t slot = R * W, total;
	if (!ir_is_const(tile->extent[0], &total) || total % slot)
		return fail(S, tile, "its buffer is not whole slots of %lld elements",
		    (long long)slot);
	int align = tile->swizzle_row ? 1024 : 128;
	if (slot * eb % align)
		return fail(S, tile, "a slot (%lld bytes) must be a multiple of %lld bytes",
		    (long long)(slot * eb), (long long)align);
	if (boxes > 1 && R * BW * eb % 1024)
		return fail(S, tile, "a slot's part of a panel of 128-byte rows (%lld rows) must be "
		    "a multiple of 8 rows, where each of its boxes starts", (long long)R);
	/* the source: row-major rows of the 2-D tensor */
	IrExpr *si = unclamp(ld->load.idx[0], v0, v1);
	IrExpr *cols = gpu_spmd_as_type(src->extent[1], ir_i64);
	if (!step_of(si, v1, &c) || c != 1 || !row_major(si, v0, cols))
		return fail(S, tile, "its rows are not rows of the input (a transposed or "
		    "strided copy)");
	int m = map_of(S->k, src, tile, BW, R, (int)(total / slot), (int)boxes);
	GpuTma *t = &S->k->tma[m];
	/* the box's origin and slot */
	IrExpr *lo0 = gpu_spmd_as_type(outer->loop.min, v0->type);
	IrExpr *lo1 = gpu_spmd_as_type(inner->loop.min, v1->type);
	IrExpr *org = gpu_spmd_as_type(ir_substitute(ir_substitute(ld->load.idx[0], v0, lo0), v1,
	    lo1), ir_i64);
	IrExpr *dst = gpu_spmd_as_type(ir_substitute(ir_substitute(di, v0, lo0), v1, lo1), ir_i64);
	dst = simplify_expr(dst, NULL);
	IrExpr *slotno = simplify_expr(ir_div(dst, ir_i64c(slot)), NULL);
	IrExpr *sidx = simplify_expr(org, NULL), *zero = ir_i64c(0);
	IrExpr *args[GPU_TMA_NARGS] = {
		ir_load(tile, &dst, 1, NULL, 1), ir_load(src, &sidx, 1, NULL, 1),
		ir_load(t->map, &zero, 1, NULL, 1), ir_load(t->bar, &slotno, 1, NULL, 1),
		ir_i64c(m), cols,
	};
	IrStmt *issue = ir_evaluate(ir_call_intrinsic(GPU_TMA, ir_i32, args, GPU_TMA_NARGS));
	issue = ir_if(ir_binop(IR_EQ, tid, ir_make_const(tid->type, 0)), issue, NULL);
	return ir_if(ir_binop(IR_NE, ir_var(S->k->tma_on), ir_make_const(ir_i32, 0)), issue, plain);
}

/* ---- the waits and the barriers' set-up ---------------------------------- */

typedef struct {
	IrMutator m;
	GpuKernel *k;
	Var *loop;                /* the loop whose waits were seen first */
	Var *cur;                 /* the innermost loop around */
	bool ok;
} Waits;

static IrStmt *
w_for(IrMutator *m, IrStmt *s)
{
	Waits *w = (Waits *)m;
	Var *saved = w->cur;
	w->cur = s->loop.var;
	IrStmt *r = ir_mutate_stmt_children(m, s);
	w->cur = saved;
	return r;
}

static IrStmt *
w_eval(IrMutator *m, IrStmt *s)
{
	Waits *w = (Waits *)m;
	IrExpr *e = s->eval.value;
	if (!call_is(e, ASYNC_WAIT) || e->call.nargs != 3)
		return s;
	if (w->cur) {
		if (w->loop && w->loop != w->cur && w->ok) {
			diag_error(w->k->tma[0].loc, "tma: kernel '%s' pipelines tma() tiles in two "
			    "loops ('%s' and '%s'); one pipelined loop a kernel may use TMA",
			    w->k->name, w->loop->name, w->cur->name);
			w->ok = false;
		}
		w->loop = w->cur;
	}
	IrExpr *n = e->call.args[0], *fill = e->call.args[1], *fills = e->call.args[2];
	IrStmt *waits = NULL;
	/* for the checker's tests (gpu_copy_sync): no mbarrier waits, or each
	 * one fill late (the previous fill's phase) */
	const char *how = getenv("TXC_CUDA_ASYNC_WAIT");
	bool none = how && !strcmp(how, "none"), late = how && !strcmp(how, "late");
	if (late)
		fill = ir_sub(fill, ir_i64c(1));
	for (int i = 0; i < w->k->ntma; i++) {
		GpuTma *t = &w->k->tma[i];
		IrExpr *S = ir_i64c(t->slots);
		IrExpr *slot = simplify_expr(ir_mod(fill, S), NULL);
		IrExpr *a[2] = { ir_load(t->bar, &slot, 1, NULL, 1),
			simplify_expr(ir_mod(ir_div(fill, S), ir_i64c(2)), NULL) };
		waits = ir_seq(waits, ir_evaluate(ir_call_intrinsic(GPU_MBAR_WAIT, ir_i32, a, 2)));
	}
	IrExpr *on = ir_binop(IR_AND, ir_binop(IR_NE, ir_var(w->k->tma_on), ir_make_const(ir_i32, 0)),
	    ir_binop(IR_LT, fill, fills));
	if (late)
		on = ir_binop(IR_AND, on, ir_binop(IR_GE, fill, ir_i64c(0)));
	if (none)
		waits = NULL;
	IrStmt *cp = ir_evaluate(ir_call_intrinsic(ASYNC_WAIT, e->type, &n, 1));
	cp = gpu_copy_sync(cp);   /* the checker's tests' wrong waits */
	return ir_seq(cp, ir_if(on, waits, NULL));
}

/* A tile marked tma() that no TMA load fills: an error at the primitive. */
typedef struct {
	IrVisitor v;
	GpuKernel *k;
	bool ok;
} Unused;

static void
unused_alloc(IrVisitor *v, IrStmt *s)
{
	Unused *u = (Unused *)v;
	Buffer *b = s->alloc.buf;
	if (b->pipeline_producer && !b->tma_loc.file) {
		diag_error(b->producer_loc, "producer = warpgroup for '%s': the producer warpgroup "
		    "issues TMA loads, and '%s' has no tma()", b->name, b->name);
		u->ok = false;
	}
	bool found = false;
	for (int i = 0; i < u->k->ntma; i++)
		found |= u->k->tma[i].tile == b;
	if (b->tma && !found) {
		diag_error(b->tma_loc, "tma of '%s': no copy of it is a TMA load; tma() applies to a "
		    "tile that a cache_read copies into shared memory with pipeline(N), at a serial "
		    "loop of its consumer inside the kernel", b->name);
		b->tma = false;
		u->ok = false;
	}
	ir_visit_stmt_children(v, s);
}

bool
gpu_tma(GpuKernel *k)
{
	Unused u;
	memset(&u, 0, sizeof u);
	u.v.stmt[IS_ALLOCATE] = unused_alloc;
	u.k = k;
	u.ok = true;
	ir_visit_stmt(&u.v, k->fn->body);
	if (!u.ok)
		return false;
	if (!k->ntma)
		return true;
	for (int i = 0; i < k->ntma; i++) {
		GpuTma *t = &k->tma[i];
		if (t->boxes > 1 && !t->tile->swizzle_panel_rows) {
			int64_t eb = elem_bytes(t->tile->elem);
			diag_error(t->loc, "tma of '%s': %s", t->tile->name,
			    wide_why(t->box[0] * t->boxes * eb, eb));
			return false;
		}
	}
	IrStmt *body = k->fn->body;
	if (!gpu_wspec(k, &body))
		return false;
	Waits w;
	memset(&w, 0, sizeof w);
	w.m.stmt[IS_FOR] = w_for;
	w.m.stmt[IS_EVALUATE] = w_eval;
	w.k = k;
	w.ok = true;
	body = ir_mutate_stmt(&w.m, body);
	if (!w.ok)
		return false;
	/* thread 0 initialises every slot's barrier (one arrival a phase) */
	IrStmt *init = NULL;
	for (int i = 0; i < k->ntma; i++)
		for (int s = 0; s < k->tma[i].slots; s++) {
			IrExpr *at = ir_i64c(s);
			IrExpr *a[2] = { ir_load(k->tma[i].bar, &at, 1, NULL, 1), ir_i64c(1) };
			init = ir_seq(init, ir_evaluate(ir_call_intrinsic(GPU_MBAR_INIT, ir_i32, a, 2)));
		}
	for (int s = 0; k->wspec_empty && s < k->tma[0].slots; s++) {
		IrExpr *at = ir_i64c(s);
		IrExpr *a[2] = { ir_load(k->wspec_empty, &at, 1, NULL, 1), ir_i64c(k->wspec_arrivals) };
		init = ir_seq(init, ir_evaluate(ir_call_intrinsic(GPU_MBAR_INIT, ir_i32, a, 2)));
	}
	IrExpr *first = NULL;
	for (int d = 0; d < 3; d++) {
		IrExpr *z = ir_binop(IR_EQ, gpu_id(GPU_TID, d), ir_i64c(0));
		first = first ? ir_binop(IR_AND, first, z) : z;
	}
	body = ir_seq(ir_seq(ir_if(first, init, NULL), gpu_barrier()), body);
	if (k->wspec_empty)
		body = ir_allocate(k->wspec_empty, body);
	for (int i = k->ntma - 1; i >= 0; i--)
		body = ir_allocate(k->tma[i].bar, body);
	k->fn->body = body;
	return true;
}
