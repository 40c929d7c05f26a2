/* gpu_wgmma.c: Hopper's warpgroup tensor cores (intrinsics/cuda.tx,
 * emitters "wgmma", "wgmma_fill", "wgmma_store"; sm_90a) in a kernel: the
 * checks of their operands, the fence and wait around them, and one
 * thread's part of the fragment's fill and store.
 *
 * A warpgroup is 4 warps whose 128 threads are threadIdx.x (the block
 * has exactly 128 in x: gpu_mma_check), so everything gpu_mma.c says of
 * a warp's calls holds with 128 lanes: the nest around a call runs on
 * every lane, its scalar rest on lane 0.  A warpgroup fragment
 * (gpu_fragment.c) holds, for each 64 x N block, N/2 f32 a thread: slot
 * s = 4j + 2r + q of thread x is row 16 (x / 32) + (x % 32) / 4 + 8r,
 * column 8j + 2 (x % 4) + q (gpu_wgmma_owned), warp w's rows 16w ..
 * 16w + 15 in the m16n8 accumulator layout of mma.
 *
 * wgmma.mma_async reads a and b from shared memory through 64-bit matrix
 * descriptors: the start address >> 4 (bits 0-13), the leading and stride
 * byte offsets >> 4 (16-29, 32-45) and the swizzle mode (62-63: 1 for
 * 128-byte rows, 2 for 64, 3 for 32).  txc's tiles are swizzled shared
 * buffers (swizzle(): gpu_swizzle.c, whose bijection is the hardware's
 * XOR of the address's 16-byte chunk bits by its bits 7 and up, with the
 * arena 1024-byte aligned) with rows of exactly 32, 64 or 128 bytes, the
 * swizzle atom: a is K-major (rows along k: element (i, k) at start + i
 * * row + 2k), b N-major (element (k, n) at start + k * row + 2n), read
 * transposed (imm-trans-b = 1) with N at most a row.  Then 8 rows are the
 * stride byte offset, and the leading one spans what a call never
 * crosses (a's k16 within a row; b's N within one atom): it is set to the
 * same 8 rows for b, whose two offsets the PTX ISA and CUTLASS name the
 * other way round for N-major operands, so either reading gives the
 * tile, and 16 bytes for a.  A b with wider rows (N = 128: rows of 256
 * bytes) is stored in panels of 128-byte rows (Buffer.swizzle_panel_rows,
 * gpu_swizzle.c), the leading byte offset from one panel to the next (as
 * CUTLASS's N-major layouts have it), and each call starts at a panel.
 *
 * Asynchrony: gpu_wgmma puts wgmma.fence before each row of consecutive
 * calls (a statement list of them, the unrolled k steps of one stage) and
 * after it wgmma.commit_group (the row is one group) and
 * wgmma.wait_group 0, each GPU_WGMMA_SYNC naming the blocks the row
 * writes, so the emitters thread those registers through the fence and
 * the wait (inline asm with tied operands: LLVM cannot read them before
 * the wait).  Nothing but the row runs between, so the accumulators are
 * never read and the shared tiles never written while a call is in
 * flight.  A row whose tiles are pipelined with defer = D
 * (pipeline(S, defer = D), lower/double_buffer.c) waits instead for all
 * but the D newest groups, so that the tensor cores run step t's calls
 * while the threads issue step t + 1's; the innermost loop around it is
 * followed by a wait_group 0 of its blocks (wg_for), and its tiles have
 * one slot more than the lookahead needs, the one the groups in flight
 * read.  The emulator (rt/cuda_emu_hopper.c) reports a write to shared
 * memory that a group in flight reads, and a fragment's fill or store or
 * a thread's end reached with one in flight.  Edges: the calls read
 * whole blocks; the copies of their tiles zero-fill past the data
 * (gpu_copy.c), and wgmma_store writes only inside the extents.
 */
#include <stdlib.h>
#include <string.h>

#include "target/cuda/gpu_spmd.h"

static bool
named(IrExpr *e, const char *name, int nargs)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, name) && (nargs < 0 || e->call.nargs == nargs);
}

bool
gpu_wgmma_is(IrExpr *e)
{
	return named(e, GPU_WGMMA, GPU_MMA_NARGS);
}

bool
gpu_wgmma_fill_is(IrExpr *e)
{
	return named(e, GPU_WGMMA_FILL, GPU_MMA_FILL_NARGS);
}

bool
gpu_wgmma_store_is(IrExpr *e)
{
	return named(e, GPU_WGMMA_STORE, GPU_MMA_STORE_NARGS);
}

bool
gpu_wgmma_sync_is(IrExpr *e)
{
	return named(e, GPU_WGMMA_SYNC, -1);
}

bool
gpu_wg_op_is(IrExpr *e)
{
	return gpu_wgmma_is(e) || gpu_wgmma_fill_is(e) || gpu_wgmma_store_is(e);
}

/* N of the call's block: the width argument of wgmma and wgmma_fill; for
 * wgmma_store, whose second argument is the columns of C it writes (an
 * extent, which -D may fold below N), the fragment's row */
int64_t
gpu_wgmma_width(IrExpr *call)
{
	IrExpr *w = call->call.args[gpu_wgmma_store_is(call) ? 6 : 1];
	int64_t n = 0;
	if (!ir_is_const(w, &n))
		bounds_const_max(w, &n);
	return n;
}

typedef struct {
	IrVisitor v;
	Buffer *operand;          /* NULL: any warpgroup call */
	bool found;
	Loc first;                /* the first wgmma call's */
} Find;

static void
find_call(IrVisitor *v, IrExpr *e)
{
	Find *f = (Find *)v;
	if (f->operand ? gpu_wgmma_is(e) && (e->call.args[6]->load.buf == f->operand ||
	    e->call.args[9]->load.buf == f->operand) : gpu_wg_op_is(e))
		f->found = true;
	if (gpu_wgmma_is(e) && !f->first.file)
		f->first = e->loc;
	ir_visit_expr_children(v, e);
}

Loc
gpu_wgmma_loc(IrStmt *s)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.v.expr[IR_CALL] = find_call;
	ir_visit_stmt(&f.v, s);
	return f.first;
}

static bool
find(IrStmt *s, Buffer *operand)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.operand = operand;
	f.v.expr[IR_CALL] = find_call;
	ir_visit_stmt(&f.v, s);
	return f.found;
}

bool
gpu_wgmma_in(IrStmt *s)
{
	return find(s, NULL);
}

bool
gpu_wgmma_operand(IrStmt *s, Buffer *b)
{
	return find(s, b);
}

/* ---- operands and descriptors --------------------------------------------- */

/* The swizzle mode of rows of `bytes` (0: none that wgmma reads). */
static int
mode_of(int64_t bytes)
{
	return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : 0;
}

/* a row of b's swizzle atom (128 for a tile in panels) */
static int64_t
row_bytes(Buffer *b)
{
	return b->swizzle_panel_rows ? 128 : b->swizzle_row * (ir_bits(b->elem) / 8);
}

uint64_t
gpu_wgmma_desc_bits(IrExpr *call, int op)
{
	Buffer *b = call->call.args[op]->load.buf;
	int64_t row = row_bytes(b);
	uint64_t sbo = (uint64_t)(8 * row) >> 4, lbo = op == 6 ? 1 : sbo;
	if (b->swizzle_panel_rows)   /* b's N from one panel to the next */
		lbo = (uint64_t)(b->swizzle_panel_rows * 128) >> 4;
	return lbo << 16 | sbo << 32 | (uint64_t)mode_of(row) << 62;
}

/* b, a 16-bit tile with rows of a multiple of 128 bytes wider than 128:
 * stored in panels of 128-byte rows (gpu_swizzle.c), R rows a panel, R
 * its rows (a multiple of 8, so that each panel starts at a multiple of
 * 1024 bytes); false where it cannot be. */
static bool
panels(Buffer *b)
{
	if (b->swizzle_panel_rows)
		return true;
	int64_t bytes = b->swizzle_row * (ir_bits(b->elem) / 8), total = 1;
	if (ir_bits(b->elem) != 16 || bytes <= 128 || bytes % 128)
		return false;
	for (int d = 0; d < b->ndims; d++) {
		int64_t c;
		if (!ir_is_const(b->extent[d], &c) && !bounds_const_max(b->extent[d], &c))
			return false;
		total *= c;
	}
	if (total % b->swizzle_row || total / b->swizzle_row % 8)
		return false;
	b->swizzle_panel_rows = total / b->swizzle_row;
	return true;
}

/* Whether operand op of call is a tile wgmma reads; a diagnostic if not. */
static bool
operand_ok(IrExpr *call, int op)
{
	IrExpr **x = call->call.args;
	Buffer *b = x[op]->load.buf;
	const char *what = op == 6 ? "a" : "b";
	int64_t rs = 0, cs = 0, n = gpu_wgmma_width(call);
	bool wide = op == 9 && b->scope == SCOPE_SHARED && b->swizzle_row && panels(b);
	if (b->scope != SCOPE_SHARED || !b->swizzle_row || (!wide && !mode_of(row_bytes(b)))) {
		diag_error(call->loc, "wgmma reads its %s ('%s') from shared memory through a "
		    "matrix descriptor, which needs a swizzled shared tile with rows of 32, 64 or "
		    "128 bytes%s; '%s' is %s%s", what, b->name, op == 9 ? " (or, for b, a multiple "
		    "of 128 bytes, stored in panels)" : "", b->name, b->scope == SCOPE_SHARED ?
		    "in shared memory, " : ir_scope_name(b->scope), b->scope != SCOPE_SHARED ? "" :
		    !b->swizzle_row ? "not swizzled" : "swizzled, with rows of another width");
		diag_note(call->loc, "cache_read the tensor to shared memory, swizzle() it, and "
		    "tile it so that its rows span 16, 32 or 64 elements of 16 bits");
		return false;
	}
	if (!ir_is_const(x[op + 1], &rs) || rs != b->swizzle_row || !ir_is_const(x[op + 2], &cs) ||
	    cs != 1) {
		diag_error(call->loc, "wgmma's %s ('%s') must be read along its rows: strides %s, %s "
		    "here, where the rows of %lld elements need %lld, 1", what, b->name,
		    ir_expr_str(x[op + 1]), ir_expr_str(x[op + 2]), (long long)b->swizzle_row,
		    (long long)b->swizzle_row);
		return false;
	}
	if (op == 9 && n > b->swizzle_row) {
		diag_error(call->loc, "wgmma's b ('%s') has rows of %lld elements, fewer than the "
		    "call's N = %lld: a descriptor's b spans one swizzled row", b->name,
		    (long long)b->swizzle_row, (long long)n);
		return false;
	}
	int64_t unit = wide ? 64 : 8;   /* a call's b within its panels */
	if (!gpu_multiple_of(simplify_expr(x[op]->load.idx[0], NULL), unit)) {
		diag_error(call->loc, "wgmma's %s ('%s') starts at element %s, which is not a "
		    "multiple of %lld (%s)", what, b->name, ir_expr_str(x[op]->load.idx[0]),
		    (long long)unit, wide ? "the start of a panel of 128-byte rows" :
		    "16 bytes, the descriptor's unit");
		return false;
	}
	return true;
}

/* ---- fence and wait --------------------------------------------------------- */

/* Whether s is nothing but wgmma calls (and lets around them). */
static bool
wg_only(IrStmt *s)
{
	if (!s)
		return false;
	switch (s->kind) {
	case IS_EVALUATE:
		return gpu_wgmma_is(s->eval.value);
	case IS_LET:
		return wg_only(s->let.body);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (!wg_only(s->block.stmts[i]))
				return false;
		return s->block.n > 0;
	default:
		return false;
	}
}

enum { MAXACC = 32 };

typedef struct {
	IrMutator m;
	GpuKernel *k;
	IrExpr *acc[MAXACC];      /* the row's blocks (their first registers) */
	int64_t n[MAXACC];
	int nacc;
	int defer;                /* the row's operands': pipeline(S, defer = D) */
	int loops;                /* the loops around the statement mutated */
	/* the blocks of the rows that the innermost loop around them leaves
	 * in flight (deferred waits), drained after that loop */
	IrExpr *dacc[MAXACC];
	int64_t dn[MAXACC];
	int ndacc;
	bool ok;
} Wg;

static void
collect(Wg *W, IrStmt *s)
{
	if (s->kind == IS_LET) {
		collect(W, s->let.body);
		return;
	}
	if (s->kind == IS_BLOCK) {
		for (int i = 0; i < s->block.n; i++)
			collect(W, s->block.stmts[i]);
		return;
	}
	IrExpr *call = s->eval.value, *c = call->call.args[3];
	if (!operand_ok(call, 6) || !operand_ok(call, 9))
		W->ok = false;
	for (int op = 6; op <= 9; op += 3)
		if (call->call.args[op]->load.buf->pipeline_defer > W->defer)
			W->defer = call->call.args[op]->load.buf->pipeline_defer;
	for (int i = 0; i < W->nacc; i++)
		if (W->acc[i]->load.buf == c->load.buf && ir_expr_equal(W->acc[i]->load.idx[0],
		    c->load.idx[0]))
			return;
	if (W->nacc == MAXACC) {
		diag_error(call->loc, "more than %d blocks of fragments in one row of wgmma calls",
		    MAXACC);
		W->ok = false;
		return;
	}
	W->acc[W->nacc] = c;
	W->n[W->nacc++] = gpu_wgmma_width(call);
}

/* GPU_WGMMA_SYNC(kind, count, block, N, ...) of the nacc blocks acc */
static IrStmt *
sync_of(int kind, int count, IrExpr **acc, int64_t *n, int nacc)
{
	IrExpr **args = arena_alloc(ir_arena, (size_t)(2 + 2 * nacc) * sizeof *args);
	args[0] = ir_i64c(kind);
	args[1] = ir_i64c(count);
	for (int i = 0; i < nacc; i++) {
		args[2 + 2 * i] = acc[i];
		args[3 + 2 * i] = ir_i64c(n[i]);
	}
	return ir_evaluate(ir_call_intrinsic(GPU_WGMMA_SYNC, ir_i32, args, 2 + 2 * nacc));
}

static IrStmt *
sync_stmt(Wg *W, int kind, int count)
{
	return sync_of(kind, count, W->acc, W->n, W->nacc);
}

/* the row's blocks, to be drained after the loop around it */
static void
defer_blocks(Wg *W)
{
	for (int i = 0; i < W->nacc; i++) {
		bool have = false;
		for (int j = 0; j < W->ndacc && !have; j++)
			have = W->dacc[j]->load.buf == W->acc[i]->load.buf &&
			    ir_expr_equal(W->dacc[j]->load.idx[0], W->acc[i]->load.idx[0]);
		if (have)
			continue;
		if (W->ndacc == MAXACC) {
			diag_error(W->acc[i]->loc, "more than %d blocks of fragments in the wgmma "
			    "calls of one deferred loop", MAXACC);
			W->ok = false;
			return;
		}
		W->dacc[W->ndacc] = W->acc[i];
		W->dn[W->ndacc++] = W->n[i];
	}
}

/* stmts[from, to) between a fence and a commit and wait: for all of the
 * row's group (0), or, where its tiles are pipelined with defer = D and
 * a loop runs it, for all but the D newest groups, the rest drained after
 * the innermost loop (wg_for) */
static IrStmt *
fenced(Wg *W, IrStmt **stmts, int from, int to)
{
	W->nacc = 0;
	W->defer = 0;
	for (int i = from; i < to; i++)
		collect(W, stmts[i]);
	int n = to - from, wait = W->loops ? W->defer : 0;
	if (wait)
		defer_blocks(W);
	IrStmt **out = arena_alloc(ir_arena, (size_t)(n + 2) * sizeof *out);
	out[0] = sync_stmt(W, GPU_WGMMA_FENCE, 0);
	memcpy(out + 1, stmts + from, (size_t)n * sizeof *out);
	out[n + 1] = sync_stmt(W, GPU_WGMMA_COMMIT_WAIT, wait);
	/* TXC_CUDA_WGMMA_WAIT=none leaves the wait out (tests/unit/cuda_wgmma.sh:
	 * the emulator must report the calls in flight) */
	const char *w = getenv("TXC_CUDA_WGMMA_WAIT");
	return ir_block(out, w && !strcmp(w, "none") ? n + 1 : n + 2);
}

/* a wgmma call over no k at all: -D folded its extent to 0 (K = 16 and a
 * split of 32: the tile holds 16 k, the second call would read past it) */
static bool
no_k(IrStmt *s)
{
	int64_t k;
	return s->kind == IS_EVALUATE && gpu_wgmma_is(s->eval.value) &&
	    ir_is_const(s->eval.value->call.args[2], &k) && k <= 0;
}

static IrStmt *
wg_block(IrMutator *m, IrStmt *s)
{
	Wg *W = (Wg *)m;
	IrStmt **in = arena_alloc(ir_arena, (size_t)s->block.n * sizeof *in);
	IrStmt **out = arena_alloc(ir_arena, (size_t)s->block.n * sizeof *out);
	int nin = 0, n = 0;
	for (int i = 0; i < s->block.n; i++)
		if (!no_k(s->block.stmts[i]))
			in[nin++] = s->block.stmts[i];
	for (int i = 0; i < nin;) {
		if (!wg_only(in[i])) {
			out[n++] = ir_mutate_stmt(m, in[i]);
			i++;
			continue;
		}
		int j = i;
		while (j < nin && wg_only(in[j]))
			j++;
		out[n++] = fenced(W, in, i, j);
		i = j;
	}
	return ir_block(out, n);
}

/* a call outside a statement list: a row of one */
static IrStmt *
wg_eval(IrMutator *m, IrStmt *s)
{
	if (!gpu_wgmma_is(s->eval.value))
		return s;
	if (no_k(s))
		return ir_block(NULL, 0);
	return fenced((Wg *)m, &s, 0, 1);
}

/* A loop: the rows inside it that keep groups in flight are drained
 * after it (a wait for all of them), before anything reads their blocks;
 * the slots they read are refilled only after an iteration's barrier
 * that their wait precedes (lower/double_buffer.c). */
static IrStmt *
wg_for(IrMutator *m, IrStmt *s)
{
	Wg *W = (Wg *)m;
	IrExpr *dacc[MAXACC];
	int64_t dn[MAXACC];
	int nd = W->ndacc;
	memcpy(dacc, W->dacc, sizeof dacc);
	memcpy(dn, W->dn, sizeof dn);
	W->ndacc = 0;
	W->loops++;
	IrStmt *r = ir_mutate_stmt_children(m, s);
	W->loops--;
	if (W->ndacc)
		r = ir_seq(r, sync_of(GPU_WGMMA_WAIT, 0, W->dacc, W->dn, W->ndacc));
	memcpy(W->dacc, dacc, sizeof dacc);
	memcpy(W->dn, dn, sizeof dn);
	W->ndacc = nd;
	return r;
}

typedef struct {
	IrVisitor v;
	IrStmt *body;
	bool ok;
} Deferred;

/* An allocation pipelined with defer: a tile some wgmma call reads. */
static void
deferred_alloc(IrVisitor *v, IrStmt *s)
{
	Deferred *d = (Deferred *)v;
	Buffer *b = s->alloc.buf;
	if (b->pipeline_defer > 0 && !gpu_wgmma_operand(d->body, b)) {
		diag_error(b->pipeline_loc, "pipeline of '%s' with defer = %d: no wgmma call reads "
		    "it; defer keeps groups of wgmma (sm_90a) in flight over the loop that fills "
		    "the tiles they read", b->name, b->pipeline_defer);
		d->ok = false;
	}
	ir_visit_stmt_children(v, s);
}

bool
gpu_wgmma(GpuKernel *k)
{
	Deferred d;
	memset(&d, 0, sizeof d);
	d.v.stmt[IS_ALLOCATE] = deferred_alloc;
	d.body = k->fn->body;
	d.ok = true;
	ir_visit_stmt(&d.v, k->fn->body);
	if (!d.ok)
		return false;
	if (!gpu_wgmma_in(k->fn->body))
		return true;
	k->wgmma = true;
	Wg W;
	memset(&W, 0, sizeof W);
	W.k = k;
	W.ok = true;
	W.m.stmt[IS_BLOCK] = wg_block;
	W.m.stmt[IS_EVALUATE] = wg_eval;
	W.m.stmt[IS_FOR] = wg_for;
	IrStmt *body = ir_mutate_stmt(&W.m, k->fn->body);
	if (W.ok)
		k->fn->body = body;
	return W.ok;
}

/* ---- one thread's share, as IR ------------------------------------------- */

void
gpu_wgmma_owned(IrExpr *tid, int s, IrExpr **i, IrExpr **j)
{
	IrExpr *lane = ir_mod(tid, ir_i64c(32));
	int jb = s / 4, r = s / 2 % 2, q = s % 2;
	*i = ir_add(ir_add(ir_mul(ir_div(tid, ir_i64c(32)), ir_i64c(16)), ir_div(lane, ir_i64c(4))),
	    ir_i64c(8 * r));
	*j = ir_add(ir_mul(ir_mod(lane, ir_i64c(4)), ir_i64c(2)), ir_i64c(8 * jb + q));
}

IrExpr *
gpu_wgmma_slot(IrExpr *c, int s)
{
	IrExpr *idx = simplify_expr(ir_add(c->load.idx[0], ir_i64c(s)), NULL);
	return ir_load(c->load.buf, &idx, 1, NULL, 1);
}

IrStmt *
gpu_wgmma_fill_lanes(IrExpr *call)
{
	int n = (int)(gpu_wgmma_width(call) / 2);
	IrStmt **out = arena_alloc(ir_arena, (size_t)n * sizeof *out);
	for (int s = 0; s < n; s++) {
		IrExpr *c = gpu_wgmma_slot(call->call.args[2], s);
		out[s] = ir_store(c->load.buf, c->load.idx, 1, ir_float(ir_f32, 0.0), NULL);
	}
	return ir_block(out, n);
}

/* x < extent e, or NULL where e is the whole block's w */
static IrExpr *
inside(IrExpr *x, IrExpr *e, int64_t w)
{
	int64_t c;
	if (ir_is_const(e, &c) && c >= w)
		return NULL;
	return ir_binop(IR_LT, x, gpu_spmd_as_type(e, ir_i64));
}

IrStmt *
gpu_wgmma_store_lanes(IrExpr *call)
{
	IrExpr **x = call->call.args;
	int64_t w = gpu_wgmma_width(call);
	int n = (int)(w / 2);
	IrStmt **out = arena_alloc(ir_arena, (size_t)n * sizeof *out);
	for (int s = 0; s < n; s++) {
		IrExpr *i, *j;
		gpu_wgmma_owned(gpu_id(GPU_TID, 0), s, &i, &j);
		IrExpr *idx = ir_add(x[2]->load.idx[0], ir_add(ir_mul(i, gpu_spmd_as_type(x[3], ir_i64)),
		    ir_mul(j, gpu_spmd_as_type(x[4], ir_i64))));
		idx = gpu_swizzle_index(x[2]->load.buf, idx);
		IrExpr *ok = inside(i, x[0], 64), *okj = inside(j, x[1], w);
		ok = ok && okj ? ir_binop(IR_AND, ok, okj) : ok ? ok : okj;
		IrStmt *st = ir_store(x[2]->load.buf, &idx, 1, gpu_wgmma_slot(x[5], s), NULL);
		out[s] = ok ? ir_if(ok, st, NULL) : st;
	}
	return ir_block(out, n);
}
