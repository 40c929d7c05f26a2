/* gpu_swizzle.c: swizzle()'s layout applied to every access of a shared
 * buffer (after gpu_fragment, before gpu_shared).
 *
 * A swizzled buffer (flatten.c checked it and set swizzle_row = W, its
 * row in elements) keeps its size, but the 16-byte pieces of each row are
 * permuted: element x of the flat layout lives at
 *
 *     x ^ (((x / W) >> s) & (P - 1)) * E
 *
 * where E is the elements of a piece (8 for f16), P = min(W / E, 8) and s
 * = log2(8 / P): row r's piece c is stored at c ^ (r % 8) in rows of 8 or
 * more pieces (128 bytes: CUTLASS's Swizzle<3, 4, 3>), at c ^ ((r / 2) %
 * 4) in rows of 4 and c ^ ((r / 4) % 2) in rows of 2, TVM's permuted
 * layout.  Any 8 consecutive rows of one piece column then fill the 8
 * distinct 16-byte bank groups of a 128-byte line, which is what an
 * ldmatrix's 8 row addresses and a quarter warp's 16-byte copies need;
 * the order inside a piece is kept, so a piece stays one 16-byte access.
 *
 * Loads and stores of the buffer get the permuted index here.  An
 * intrinsic call takes a buffer as its tile's first element plus strides
 * and computes the addresses itself, so its emitters apply the same map
 * to each address (gpu_swizzle_index): the mma's ldmatrix rows and scalar
 * elements (gpu_mma.c, cuda_ptx.c), gpu.copy's destination piece
 * (gpu_copy.c, cuda_ptx.c, cuda_host.c) and the CUDA C helpers
 * (cuda_c.c); a call of another intrinsic on a swizzled buffer is an
 * error.  The layout is one bijection of the buffer, so whatever reads
 * and writes it agree.
 *
 * A tile that wgmma reads as b with rows wider than 128 bytes (a block of
 * N = 128 columns: gpu_wgmma.c sets swizzle_panel_rows, R) is stored in
 * panels of 128-byte rows, the layout wgmma's descriptors describe: x = r
 * * W + c lives at (c / P) * R * P + r * P + c % P, P the elements of 128
 * bytes, then swizzled as rows of P (gpu_swizzle_panel).
 */
#include <string.h>

#include "target/cuda/gpu_spmd.h"

bool
gpu_swizzle_params(const Buffer *b, int64_t *w, int64_t *e, int64_t *p, int *s)
{
	if (!b || !b->swizzle_row || b->scope != SCOPE_SHARED)
		return false;
	*w = b->swizzle_row;
	*e = 128 / ir_bits(b->elem);
	int64_t pieces = *w / *e;
	*p = pieces < 8 ? pieces : 8;
	*s = *p == 2 ? 2 : *p == 4 ? 1 : 0;
	return true;
}

static int
log2_exact(int64_t v)
{
	int n = 0;
	while (v > 1 && v % 2 == 0) {
		v /= 2;
		n++;
	}
	return v == 1 ? n : -1;
}

IrExpr *
gpu_swizzle_panel(const Buffer *b, IrExpr *x)
{
	if (!b->swizzle_panel_rows || !b->swizzle_row)
		return x;
	IrType t = x->type;
	int64_t w = b->swizzle_row, p = 128 / (ir_bits(b->elem) / 8);
	IrExpr *c = ir_mod(x, ir_make_const(t, w)), *r = ir_div(x, ir_make_const(t, w));
	return ir_add(ir_add(ir_mul(ir_div(c, ir_make_const(t, p)), ir_make_const(t,
	    b->swizzle_panel_rows * p)), ir_mul(r, ir_make_const(t, p))), ir_mod(c, ir_make_const(t, p)));
}

IrExpr *
gpu_swizzle_index(const Buffer *b, IrExpr *x)
{
	int64_t w, e, p;
	int s;
	if (!gpu_swizzle_params(b, &w, &e, &p, &s))
		return x;
	if (b->swizzle_panel_rows) {   /* panels of 128-byte rows */
		x = gpu_swizzle_panel(b, x);
		w = 128 / (ir_bits(b->elem) / 8);
		p = 8;
		s = 0;
	}
	IrType t = x->type;
	if (t.lanes != 1)
		ICE("a vector access of swizzled '%s'", b->name);
	int lw = log2_exact(w), le = log2_exact(e);
	IrExpr *bits;
	if (lw >= 0)   /* (x >> (log2 W + s)) & (P - 1) */
		bits = ir_binop(IR_BITAND, ir_binop(IR_SHR, x, ir_make_const(t, lw + s)),
		    ir_make_const(t, p - 1));
	else
		bits = ir_mod(ir_div(ir_div(x, ir_make_const(t, w)), ir_make_const(t, 1 << s)),
		    ir_make_const(t, p));
	bits = le >= 0 ? ir_binop(IR_SHL, bits, ir_make_const(t, le)) :
	    ir_mul(bits, ir_make_const(t, e));
	return ir_binop(IR_BITXOR, x, bits);
}

typedef struct {
	IrMutator m;
	bool ok;
} Swz;

static bool
swizzled(const Buffer *b)
{
	return b->swizzle_row && b->scope == SCOPE_SHARED;
}

static IrExpr *
swz_load(IrMutator *m, IrExpr *e)
{
	e = ir_mutate_expr_children(m, e);
	if (!swizzled(e->load.buf) || e->load.nidx != 1)
		return e;
	IrExpr *idx = gpu_swizzle_index(e->load.buf, e->load.idx[0]);
	IrExpr *x = ir_load(e->load.buf, &idx, 1, e->a, e->type.lanes);
	x->loc = e->loc;
	return x;
}

static IrStmt *
swz_store(IrMutator *m, IrStmt *s)
{
	s = ir_mutate_stmt_children(m, s);
	if (!swizzled(s->store.buf) || s->store.nidx != 1)
		return s;
	IrExpr *idx = gpu_swizzle_index(s->store.buf, s->store.idx[0]);
	IrStmt *x = ir_store(s->store.buf, &idx, 1, s->store.value, s->store.pred);
	x->loc = s->loc;
	return x;
}

/* An intrinsic's tile arguments stay its first elements (the emitters
 * map each address); their indices and the other arguments are visited. */
static IrExpr *
swz_call(IrMutator *m, IrExpr *e)
{
	Swz *z = (Swz *)m;
	if (e->call.ck != CALL_INTRINSIC)
		return ir_mutate_expr_children(m, e);
	bool known = gpu_warp_op_is(e) || gpu_copy_is(e) || gpu_tma_is(e);
	IrExpr **args = arena_alloc(ir_arena, (size_t)(e->call.nargs + 1) * sizeof *args);
	bool changed = false;
	for (int i = 0; i < e->call.nargs; i++) {
		IrExpr *a = e->call.args[i];
		if (a->kind == IR_LOAD && swizzled(a->load.buf)) {
			if (!known) {
				diag_error(e->loc, "'%s' takes swizzled '%s' as a tile, but only the "
				    "tensor cores' mma, mma_store and the tile copies read a swizzled "
				    "layout", e->call.name, a->load.buf->name);
				diag_note(a->load.buf->swizzle_loc, "swizzle is here");
				z->ok = false;
			}
			IrExpr **idx = arena_alloc(ir_arena, (size_t)(a->load.nidx + 1) * sizeof *idx);
			bool ch = false;
			for (int d = 0; d < a->load.nidx; d++) {
				idx[d] = ir_mutate_expr(m, a->load.idx[d]);
				ch |= idx[d] != a->load.idx[d];
			}
			args[i] = ch ? ir_load(a->load.buf, idx, a->load.nidx, a->a, a->type.lanes) : a;
		} else
			args[i] = ir_mutate_expr(m, a);
		changed |= args[i] != a;
	}
	return changed ? ir_call_intrinsic_like(e, args) : e;
}

bool
gpu_swizzle(GpuKernel *k)
{
	Swz z;
	memset(&z, 0, sizeof z);
	z.m.expr[IR_LOAD] = swz_load;
	z.m.expr[IR_CALL] = swz_call;
	z.m.stmt[IS_STORE] = swz_store;
	z.ok = true;
	k->fn->body = ir_mutate_stmt(&z.m, k->fn->body);
	return z.ok;
}
