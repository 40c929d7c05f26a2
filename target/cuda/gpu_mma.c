/* gpu_mma.c: the tensor-core intrinsic (intrinsics/cuda.tx, emitter
 * "mma") in a kernel: a warp's operation among per-thread code.
 *
 * `tensorize(..., mma_16x16x16_f16)` leaves a call
 *     mma(16, 16, 16, c[c0], cs_i, cs_j, a[a0], as_i, as_k, b[b0], bs_k, bs_j)
 * meaning c[i, j] += sum(k) f32(a[i, k]) * f32(b[k, j]) over a 16 x 16 x 16
 * block, which the 32 threads of a warp make together (mma.sync).  So the
 * nest around it must not use threadIdx.x, whose 32 threads are the
 * warp's lanes: gpu_mma_warp makes every lane run the nest (the call in
 * step) while the rest of it -- the scalar loops of a partial tile at the
 * edges -- stays with lane 0, as a nest that does not use a dimension
 * does; gpu_mma_check says when the block or the nest does not allow it.
 *
 * What one lane does is the hardware's split of the block over the lanes
 * (PTX ISA, mma.m16n8k16, the f32 accumulator fragment): lane l = 4g + t
 * owns c[g + 8r, 8h + 2t + q] for r, h, q in {0, 1}.  gpu_mma_lanes writes
 * that as IR -- each lane's 8 sums, in k order -- which libtxrt's emulator
 * runs with its checks on every access; cuda_ptx.c loads the same
 * fragments for two mma.sync.m16n8k16 instructions, and cuda_c.c writes
 * them as inline PTX.
 *
 * When c is a fragment (gpu_fragment.c), the lane's 8 sums are its
 * registers h*4 + r*2 + q of the tile (gpu_mma_slot); the call then takes
 * partial tiles itself: its extents (m, n, k) may be less than 16, and the
 * elements of a and b beyond them read as zero (predicated loads), which
 * leaves the sums outside the tile unchanged.  mma_fill and mma_store,
 * the fragment's other operations, are the same lane's registers set to
 * zero, or stored where they lie inside the tile's extents.
 *
 * ldmatrix (gpu_mma_ldmatrix): when a and b are 16-bit shared tiles with
 * rows of 16 aligned bytes, cuda_ptx.c loads a lane's a and b registers
 * with one ldmatrix.x4 each (b with .trans: it is stored k-major).  Lane
 * l gives the address of row l % 16, columns 8 * (l / 16) on, of the
 * block (gpu_ldmatrix_row): for a, matrix m = l / 8 is rows 8 (m & 1) on,
 * k 8 (m >> 1) on, so register m of lane 4g + t holds a[g + 8 (m & 1)]
 * [2t + 8 (m >> 1) ..] (a0a1, a2a3, a4a5, a6a7 of the mma); for b, matrix
 * m is k 8 (m & 1) on, columns 8 (m >> 1) on, transposed, so register m
 * holds b[2t + 8 (m & 1) ..][g + 8 (m >> 1)] (b0b1, b2b3 of each n half).
 * A b stored n-major (strides: k 1, j a multiple of 8; a dense layer's
 * transposed weights) is read like a, without .trans: its rows are j, so
 * matrix m is j 8 (m & 1) on, k 8 (m >> 1) on (gpu_mma_b_nt).
 * All 16 x 16 elements are read; those beyond the extents are replaced by
 * zero (the tile's allocation covers the whole block: flatten.c pads it
 * to its constant bound).  The emulator reads each element as the lane
 * that holds it receives it: from the row address of the lane that gave
 * it, as ldmatrix gathers it, under the same extents.
 */
#include <string.h>

#include "target/cuda/gpu_spmd.h"

bool
gpu_mma_is(IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, GPU_MMA) && e->call.nargs == GPU_MMA_NARGS;
}

bool
gpu_mma_fill_is(IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, GPU_MMA_FILL) && e->call.nargs == GPU_MMA_FILL_NARGS;
}

bool
gpu_mma_store_is(IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, GPU_MMA_STORE) && e->call.nargs == GPU_MMA_STORE_NARGS;
}

bool
gpu_warp_op_is(IrExpr *e)
{
	return gpu_mma_is(e) || gpu_mma_fill_is(e) || gpu_mma_store_is(e) || gpu_wg_op_is(e);
}

ScalarType
gpu_mma_input_type(IrExpr *e)
{
	return e->call.args[6]->load.buf->elem;
}

typedef struct {
	IrVisitor v;
	ScalarType type;   /* TY_ERROR: any */
	bool found;
} Find;

static void
find_call(IrVisitor *v, IrExpr *e)
{
	Find *f = (Find *)v;
	if (f->type == TY_ERROR ? gpu_warp_op_is(e) : gpu_mma_is(e) && gpu_mma_input_type(e) == f->type)
		f->found = true;
	ir_visit_expr_children(v, e);
}

bool
gpu_mma_in_type(IrStmt *s, ScalarType t)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.type = t;
	f.v.expr[IR_CALL] = find_call;
	ir_visit_stmt(&f.v, s);
	return f.found;
}

bool
gpu_mma_in(IrStmt *s)
{
	return gpu_mma_in_type(s, TY_ERROR);
}

static IrExpr *
lane0(void)
{
	return ir_binop(IR_EQ, gpu_id(GPU_TID, 0), ir_i64c(0));
}

IrStmt *
gpu_mma_warp(IrStmt *s)
{
	if (!s)
		return NULL;
	if (s->kind == IS_EVALUATE && gpu_warp_op_is(s->eval.value))
		return s;
	if (!gpu_mma_in(s))
		return ir_if(lane0(), s, NULL);
	switch (s->kind) {
	case IS_BLOCK: {
		IrStmt **out = arena_alloc(ir_arena, (size_t)s->block.n * sizeof *out);
		for (int i = 0; i < s->block.n; i++)
			out[i] = gpu_mma_warp(s->block.stmts[i]);
		return ir_block(out, s->block.n);
	}
	case IS_FOR:
		return ir_for_like(s, s->loop.min, s->loop.extent, gpu_mma_warp(s->loop.body));
	case IS_LET:
		return ir_let_stmt(s->let.var, s->let.value, gpu_mma_warp(s->let.body));
	case IS_IF:
		return ir_if(s->ifs.cond, gpu_mma_warp(s->ifs.then_s), gpu_mma_warp(s->ifs.else_s));
	case IS_PRODUCE: {
		IrStmt *r = ir_produce(s->produce.name, s->produce.update, gpu_mma_warp(s->produce.body));
		r->produce.prefetch = s->produce.prefetch;
		r->produce.async = s->produce.async;
		return r;
	}
	case IS_ALLOCATE:
		return ir_allocate(s->alloc.buf, gpu_mma_warp(s->alloc.body));
	default:
		return s;
	}
}

/* The first mma call in s (for its location). */
static IrExpr *
first_call(IrExpr *e)
{
	if (!e)
		return NULL;
	if (gpu_warp_op_is(e))
		return e;
	IrExpr *r = first_call(e->a);
	if (!r)
		r = first_call(e->b);
	return r ? r : first_call(e->c);
}

static IrExpr *
call_of(IrStmt *s)
{
	if (!s)
		return NULL;
	switch (s->kind) {
	case IS_EVALUATE: return first_call(s->eval.value);
	case IS_FOR: return call_of(s->loop.body);
	case IS_LET: return call_of(s->let.body);
	case IS_IF: {
		IrExpr *c = call_of(s->ifs.then_s);
		return c ? c : call_of(s->ifs.else_s);
	}
	case IS_PRODUCE: return call_of(s->produce.body);
	case IS_ALLOCATE: return call_of(s->alloc.body);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++) {
			IrExpr *c = call_of(s->block.stmts[i]);
			if (c)
				return c;
		}
		return NULL;
	default:
		return NULL;
	}
}

bool
gpu_mma_check(Spmd *S, IrStmt *s, unsigned dims)
{
	IrExpr *call = call_of(s);
	Loc at = call ? call->loc : S->k->loc;
	int64_t x = 1;
	/* a warpgroup's (gpu_wgmma.c): 4 warps, 128 threads in x */
	bool wg = gpu_wgmma_in(S->k->fn->body);
	const char *op = wg ? "wgmma" : "mma", *unit = wg ? "warpgroup" : "warp";
	int lanes = wg ? 128 : 32;
	if (dims & 1u) {
		diag_error(at, "the tensor cores' %s is a %s's operation (its %d threads make it "
		    "together), but the nest around it is bound to threadIdx.x (loop '%s'): bind "
		    "the loops around the tensorized block to threadIdx.y and z only", op, unit,
		    lanes, S->bdim_var[0] ? S->bdim_var[0] : "?");
		return false;
	}
	if (wg && gpu_mma_in_type(S->k->fn->body, TY_F16) + gpu_mma_in_type(S->k->fn->body,
	    TY_BF16)) {
		diag_error(at, "a kernel uses both mma (a warp's) and wgmma (a warpgroup's): its "
		    "block's threadIdx.x cannot be both a warp's 32 lanes and a warpgroup's 128");
		return false;
	}
	if (!S->bdim[0] || !ir_is_const(S->bdim[0], &x) || x != lanes) {
		diag_error(at, "the tensor cores' %s needs a block of exactly %d threads in x (one "
		    "%s a row; %ss told apart by threadIdx.y and z), but this block has %s", op,
		    lanes, unit, unit, S->bdim[0] ? ir_expr_str(S->bdim[0]) : "1");
		if (S->bdim[0] && S->bdim_var[0])
			diag_note(S->bdim_loc[0], "threadIdx.x is loop '%s' here", S->bdim_var[0]);
		return false;
	}
	return true;
}

/* ---- one lane's share, as IR (the emulator) ------------------------------ */

/* buf[base + i * si + j * sj], under pred (NULL: always) */
static IrExpr *
at(IrExpr *load, IrExpr *i, IrExpr *si, IrExpr *j, IrExpr *sj, IrExpr *pred)
{
	IrExpr *idx = ir_add(load->load.idx[0], ir_add(ir_mul(i, gpu_spmd_as_type(si, ir_i64)),
	    ir_mul(j, gpu_spmd_as_type(sj, ir_i64))));
	idx = gpu_swizzle_index(load->load.buf, idx);
	return ir_load(load->load.buf, &idx, 1, pred, 1);
}

/* x < extent e, or NULL where e is the whole 16 */
static IrExpr *
inside(IrExpr *x, IrExpr *e)
{
	int64_t c;
	if (ir_is_const(e, &c) && c >= 16)
		return NULL;
	return ir_binop(IR_LT, x, gpu_spmd_as_type(e, ir_i64));
}

static IrExpr *
both(IrExpr *a, IrExpr *b)
{
	return a && b ? ir_binop(IR_AND, a, b) : a ? a : b;
}

IrExpr *
gpu_mma_slot(IrExpr *c, int r, int h, int q)
{
	IrExpr *idx = simplify_expr(ir_add(c->load.idx[0], ir_i64c(h * 4 + r * 2 + q)), NULL);
	return ir_load(c->load.buf, &idx, 1, NULL, 1);
}

void
gpu_mma_element(IrExpr *call, IrExpr *i, IrExpr *j, IrExpr **c, IrExpr **a_ik, IrExpr **b_kj,
    IrExpr *k)
{
	IrExpr **x = call->call.args;
	if (c)
		*c = at(x[3], i, x[4], j, x[5], NULL);
	if (a_ik)
		*a_ik = at(x[6], i, x[7], k, x[8], both(inside(i, x[0]), inside(k, x[2])));
	if (b_kj)
		*b_kj = at(x[9], k, x[10], j, x[11], both(inside(k, x[2]), inside(j, x[1])));
}

/* c[i, j] of lane `lane`'s accumulator (r, h, q) */
static IrExpr *
c_element(IrExpr *call, IrExpr *lane, int r, int h, int q, IrExpr **i, IrExpr **j)
{
	gpu_mma_owned(lane, ir_i64c(r), ir_i64c(h), ir_i64c(q), i, j);
	IrExpr *c = call->call.args[3];
	if (c->load.buf->scope == SCOPE_FRAGMENT)
		return gpu_mma_slot(c, r, h, q);
	IrExpr *e;
	gpu_mma_element(call, *i, *j, &e, NULL, NULL, NULL);
	return e;
}

IrExpr *
gpu_mma_c(IrExpr *call, IrExpr *lane, int r, int h, int q)
{
	IrExpr *i, *j;
	return c_element(call, lane, r, h, q, &i, &j);
}

/* The row and column lane l's (r, h, q) accumulator holds. */
void
gpu_mma_owned(IrExpr *lane, IrExpr *r, IrExpr *h, IrExpr *q, IrExpr **i, IrExpr **j)
{
	IrExpr *g = ir_div(lane, ir_i64c(4)), *t = ir_mod(lane, ir_i64c(4));
	*i = ir_add(g, ir_mul(r, ir_i64c(8)));
	*j = ir_add(ir_add(ir_mul(h, ir_i64c(8)), ir_mul(t, ir_i64c(2))), q);
}

IrStmt *
gpu_mma_fill_lanes(IrExpr *call)
{
	IrStmt *out[8];
	for (int s = 0; s < 8; s++) {
		IrExpr *c = gpu_mma_slot(call->call.args[2], s >> 1 & 1, s >> 2, s & 1);
		out[s] = ir_store(c->load.buf, c->load.idx, 1, ir_float(ir_f32, 0.0), NULL);
	}
	return ir_block(out, 8);
}

IrStmt *
gpu_mma_store_lanes(IrExpr *call)
{
	IrExpr **x = call->call.args;
	IrStmt *out[8];
	int n = 0;
	for (int r = 0; r < 2; r++)
		for (int h = 0; h < 2; h++)
			for (int q = 0; q < 2; q++) {
				IrExpr *i, *j;
				gpu_mma_owned(gpu_id(GPU_TID, 0), ir_i64c(r), ir_i64c(h), ir_i64c(q), &i, &j);
				IrExpr *d = at(x[2], i, x[3], j, x[4], NULL);
				IrExpr *ok = both(inside(i, x[0]), inside(j, x[1]));
				IrStmt *st = ir_store(d->load.buf, d->load.idx, 1,
				    gpu_mma_slot(x[5], r, h, q), NULL);
				out[n++] = ok ? ir_if(ok, st, NULL) : st;
			}
	return ir_block(out, n);
}

static IrExpr *ldmatrix_element(IrExpr *call, int op, IrExpr *row, IrExpr *col);

IrStmt *
gpu_mma_lanes(IrExpr *call)
{
	if (call->call.args[3]->load.buf->scope == SCOPE_FRAGMENT) {
		/* the registers: unrolled, constant slots; the sum over k a
		 * loop that adds into the slot (the same sums in the same
		 * order as one expression, and a sixteenth of the code: the
		 * emulator's copy of a 128 x 128 tile's kernel was 1.6 MB) */
		IrStmt *out[8];
		int n = 0;
		bool ldm = gpu_mma_ldmatrix(call);
		for (int r = 0; r < 2; r++)
			for (int h = 0; h < 2; h++)
				for (int q = 0; q < 2; q++) {
					IrExpr *i, *j, *a, *b;
					IrExpr *c = c_element(call, gpu_id(GPU_TID, 0), r, h, q, &i, &j);
					Var *k = ir_new_var("mma_k", ir_i64);
					if (ldm) {
						a = ldmatrix_element(call, 6, i, ir_var(k));
						b = ldmatrix_element(call, 9, ir_var(k), j);
					} else
						gpu_mma_element(call, i, j, NULL, &a, &b, ir_var(k));
					IrExpr *sum = ir_binop(IR_ADD, c, ir_binop(IR_MUL,
					    ir_cast(ir_f32, a), ir_cast(ir_f32, b)));
					out[n++] = ir_for(k, ir_i64c(0), ir_i64c(16), FOR_SERIAL,
					    ir_store(c->load.buf, c->load.idx, 1, sum, NULL));
				}
		return ir_block(out, n);
	}
	Var *r = ir_new_var("mma_r", ir_i64), *h = ir_new_var("mma_h", ir_i64),
	    *q = ir_new_var("mma_q", ir_i64);
	IrExpr *i, *j;
	gpu_mma_owned(gpu_id(GPU_TID, 0), ir_var(r), ir_var(h), ir_var(q), &i, &j);
	IrExpr *c;
	gpu_mma_element(call, i, j, &c, NULL, NULL, NULL);
	IrExpr *sum = c;
	for (int k = 0; k < 16; k++) {
		IrExpr *a, *b;
		gpu_mma_element(call, i, j, NULL, &a, &b, ir_i64c(k));
		sum = ir_binop(IR_ADD, sum, ir_binop(IR_MUL, ir_cast(ir_f32, a), ir_cast(ir_f32, b)));
	}
	IrStmt *st = ir_store(c->load.buf, c->load.idx, 1, sum, NULL);
	st = ir_for(q, ir_i64c(0), ir_i64c(2), FOR_SERIAL, st);
	st = ir_for(h, ir_i64c(0), ir_i64c(2), FOR_SERIAL, st);
	return ir_for(r, ir_i64c(0), ir_i64c(2), FOR_SERIAL, st);
}

/* ---- ldmatrix ------------------------------------------------------------ */

bool
gpu_multiple_of(IrExpr *e, int64_t m)
{
	int64_t c;
	if (ir_is_const(e, &c))
		return c % m == 0;
	switch (e->kind) {
	case IR_ADD:
	case IR_SUB:
		return gpu_multiple_of(e->a, m) && gpu_multiple_of(e->b, m);
	case IR_MUL:
		return gpu_multiple_of(e->a, m) || gpu_multiple_of(e->b, m);
	case IR_CAST:
		return gpu_multiple_of(e->a, m);
	default:
		return false;
	}
}

/* Operand op's tile has rows of 16 aligned bytes along its stride arguments
 * (rs, cs) = x[op + 1 + swap], x[op + 2 - swap]. */
static bool
ldmatrix_tile(IrExpr **x, int op, int swap)
{
	Buffer *b = x[op]->load.buf;
	int64_t rs, cs;
	return b->scope == SCOPE_SHARED && ir_bits(b->elem) == 16 && x[op]->load.nidx == 1 &&
	    ir_is_const(x[op + 1 + swap], &rs) && rs >= 8 && rs % 8 == 0 &&
	    ir_is_const(x[op + 2 - swap], &cs) && cs == 1 && gpu_multiple_of(x[op]->load.idx[0], 8);
}

bool
gpu_mma_b_nt(IrExpr *call)
{
	IrExpr **x = call->call.args;
	return !ldmatrix_tile(x, 9, 0) && ldmatrix_tile(x, 9, 1);
}

bool
gpu_mma_ldmatrix(IrExpr *call)
{
	IrExpr **x = call->call.args;
	return gpu_mma_is(call) && x[3]->load.buf->scope == SCOPE_FRAGMENT &&
	    ldmatrix_tile(x, 6, 0) && (ldmatrix_tile(x, 9, 0) || ldmatrix_tile(x, 9, 1));
}

IrExpr *
gpu_ldmatrix_row(IrExpr *call, int op, IrExpr *lane)
{
	IrExpr **x = call->call.args;
	IrExpr *row = ir_mod(lane, ir_i64c(16)), *col = ir_mul(ir_div(lane, ir_i64c(16)), ir_i64c(8));
	IrExpr *stride = x[op + 1 + (op == 9 && gpu_mma_b_nt(call))];
	return ir_add(x[op]->load.idx[0], ir_add(ir_mul(row, gpu_spmd_as_type(stride, ir_i64)),
	    col));
}

IrExpr *
gpu_mma_inside(IrExpr *call, int op, IrExpr *row, IrExpr *col)
{
	IrExpr **x = call->call.args;
	return op == 6 ? both(inside(row, x[0]), inside(col, x[2])) :
	    both(inside(row, x[2]), inside(col, x[1]));
}

/* a[i, k] (op 6) or b[k, j] (op 9), row and column constant or of the
 * lane, as ldmatrix delivers it: matrix m = (row / 8) + 2 (col / 8), the
 * lane 8m + row % 8 that gave its row's address, column col % 8 of it. */
static IrExpr *
ldmatrix_element(IrExpr *call, int op, IrExpr *row, IrExpr *col)
{
	IrExpr *inside = gpu_mma_inside(call, op, row, col);
	if (op == 9 && gpu_mma_b_nt(call)) {   /* stored [j][k]: its rows are j */
		IrExpr *t = row;
		row = col;
		col = t;
	}
	IrExpr *m = ir_add(ir_div(row, ir_i64c(8)), ir_mul(ir_div(col, ir_i64c(8)), ir_i64c(2)));
	IrExpr *giver = ir_add(ir_mul(m, ir_i64c(8)), ir_mod(row, ir_i64c(8)));
	IrExpr *idx = simplify_expr(gpu_swizzle_index(call->call.args[op]->load.buf,
	    ir_add(gpu_ldmatrix_row(call, op, giver), ir_mod(col, ir_i64c(8)))), NULL);
	return ir_load(call->call.args[op]->load.buf, &idx, 1, inside, 1);
}
