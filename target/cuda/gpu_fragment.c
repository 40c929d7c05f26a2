/* gpu_fragment.c: a kernel's fragments as each lane's registers.
 *
 * `C.cache_write(fragment) -> Cf` computed at the loop bound to a warp
 * gives, after gpu_spmd, a per-thread allocation of the warp's whole tile
 * (say f32[32 * 32]).  The tile is the warp's, spread over its 32 lanes
 * as the tensor cores' m16n8k16 accumulator layout spreads it: every
 * 16 x 16 block of it holds 8 f32 in each lane (gpu_mma.c).  So the
 * allocation shrinks to tile/32 registers a lane, and each tensor-core
 * call on it (mma's c, mma_fill's c, mma_store's c) names its block by the
 * lane's first register of it: block (bi, bj) of a tile with rows of RS
 * elements is registers 8 * (bi * RS/16 + bj) on.
 *
 * The rules that keep a fragment in registers (LLVM's SROA promotes an
 * array only where every index is a constant): the fragment's extents are
 * constants (a multiple of 16 each for the last two, 1 for any before
 * them: one batch of a batched product), every call names a 16-aligned block
 * at an index that is a constant once the loops around it are unrolled,
 * and nothing but these calls touches it (no scalar loop can: the element
 * a scalar access wants lies in another lane).  Each rule broken is an
 * error at the call or the access.
 *
 * In a kernel of Hopper's warpgroup calls (gpu_wgmma.c) a fragment is a
 * warpgroup's: 128 lanes, tile/128 registers a lane, its rows a multiple
 * of 64 and its columns of 8; block (bi, bj) of 64 x 8 is registers
 * 4 * (bi * RS/8 + bj) on, so a 64 x N call's N/2 registers follow on.
 */
#include <string.h>

#include "target/cuda/cuda.h"

enum { MAXFRAG = 16 };

typedef struct {
	IrMutator m;
	GpuKernel *k;
	Buffer *from[MAXFRAG], *to[MAXFRAG];
	int n;
	bool ok;
	bool wg;                  /* a warpgroup's fragments (wgmma) */
	bool strayed;             /* a scalar access reported */
	Loc last;                 /* the call last reported (once a call) */
} Fr;

static Buffer *
mapped(Fr *F, Buffer *b)
{
	for (int i = F->n - 1; i >= 0; i--)
		if (F->from[i] == b)
			return F->to[i];
	return NULL;
}

static Loc
where(Fr *F, Loc l)
{
	return l.file ? l : F->k->loc;
}

static IrStmt *
fr_alloc(IrMutator *m, IrStmt *s)
{
	Fr *F = (Fr *)m;
	Buffer *b = s->alloc.buf;
	if (b->scope != SCOPE_FRAGMENT)
		return ir_mutate_stmt_children(m, s);
	Loc at = where(F, s->loc.file ? s->loc : b->scope_loc);
	int64_t total = 1;
	for (int d = 0; d < b->ndims; d++) {
		int64_t c;
		/* the last two dimensions a multiple of 16; those before them
		 * (a batch) one element, as a block of a batched product is */
		bool lead = d + 2 < b->ndims;
		int64_t unit = !F->wg ? 16 : d + 2 == b->ndims ? 64 : 8;
		if (!(ir_is_const(b->extent[d], &c) || bounds_const_max(b->extent[d], &c)) || c <= 0 ||
		    (lead ? c != 1 : c % unit != 0)) {
			if (F->wg) {
				diag_error(at, "warpgroup fragment '%s' has extent %s in dimension %d; its "
				    "rows must be a constant multiple of 64 and its columns of 8 (wgmma's "
				    "m64nN blocks)", b->name, ir_expr_str(b->extent[d]), d);
				F->ok = false;
				return s;
			}
			diag_error(at, "fragment '%s' has extent %s in dimension %d; a fragment's "
			    "last two extents must be constant multiples of 16 (the tensor cores' "
			    "blocks), any before them 1", b->name, ir_expr_str(b->extent[d]), d);
			diag_note(at, "compute it at the warp's loop of a tile whose sizes are multiples "
			    "of 16, split with tail = round_up where the sizes need not divide");
			F->ok = false;
			return s;
		}
		total *= c;
	}
	if (F->n >= MAXFRAG) {
		diag_error(at, "more than %d fragments in kernel '%s'", MAXFRAG, F->k->name);
		F->ok = false;
		return s;
	}
	Buffer *nb = arena_alloc(ir_arena, sizeof *nb);
	*nb = *b;
	nb->ndims = 1;
	nb->min = arena_alloc(ir_arena, 2 * sizeof *nb->min);
	nb->extent = arena_alloc(ir_arena, 2 * sizeof *nb->extent);
	nb->stride = arena_alloc(ir_arena, 2 * sizeof *nb->stride);
	nb->min[0] = ir_i64c(0);
	nb->extent[0] = ir_i64c(total / (F->wg ? 128 : 32));
	nb->stride[0] = ir_i64c(1);
	nb->flat = true;
	F->from[F->n] = b;
	F->to[F->n++] = nb;
	IrStmt *body = ir_mutate_stmt(m, s->alloc.body);
	F->n--;
	IrStmt *r = ir_allocate(nb, body);
	r->loc = s->loc;
	return r;
}

/* The call's fragment operand at argument p (a load, its row and column
 * strides after it) as the lane's first register of the block. */
static IrExpr *
block_reg(Fr *F, IrExpr *call, int p, Buffer *nb)
{
	IrExpr **x = call->call.args;
	IrExpr *c0 = simplify_expr(x[p]->load.idx[0], NULL);
	int64_t off, rs, cs;
	Loc at = where(F, call->loc);
	const char *name = x[p]->load.buf->name;
	int64_t bw = F->wg ? 8 : 16, bh = F->wg ? 64 : 16;
	if (!ir_is_const(x[p + 1], &rs) || !ir_is_const(x[p + 2], &cs) || cs != 1 || rs <= 0 ||
	    rs % bw) {
		diag_error(at, "'%s' is a fragment read with strides %s, %s here; the tensor cores' "
		    "calls take a fragment's blocks along its rows (stride 1) and down its columns",
		    name, ir_expr_str(x[p + 1]), ir_expr_str(x[p + 2]));
		F->ok = false;
		return x[p];
	}
	if (!ir_is_const(c0, &off)) {
		if (F->last.file == at.file && F->last.begin == at.begin)
			return x[p];
		F->last = at;
		F->ok = false;
		diag_error(at, "the block of fragment '%s' this call takes is at %s, which is no "
		    "constant; unroll the loops around the call (a fragment's registers need constant "
		    "indices)", name, ir_expr_str(c0));
		F->ok = false;
		return x[p];
	}
	int64_t bi = off / rs, bj = off % rs;
	if (bi % bh || bj % bw) {
		diag_error(at, "the block of fragment '%s' this call takes starts at row %lld, "
		    "column %lld, which is not a multiple of %lld and %lld", name, (long long)bi,
		    (long long)bj, (long long)bh, (long long)bw);
		F->ok = false;
		return x[p];
	}
	IrExpr *reg = ir_i64c(F->wg ? 4 * ((bi / 64) * (rs / 8) + bj / 8) :
	    8 * ((bi / 16) * (rs / 16) + bj / 16));
	return ir_load(nb, &reg, 1, NULL, 1);
}

static IrExpr *
fr_call(IrMutator *m, IrExpr *e)
{
	Fr *F = (Fr *)m;
	if (!gpu_warp_op_is(e))
		return ir_mutate_expr_children(m, e);
	int p = gpu_mma_is(e) || gpu_wgmma_is(e) ? 3 : gpu_mma_fill_is(e) ||
	    gpu_wgmma_fill_is(e) ? 2 : 5;
	IrExpr **args = arena_alloc(ir_arena, (size_t)e->call.nargs * sizeof *args);
	for (int i = 0; i < e->call.nargs; i++) {
		IrExpr *x = e->call.args[i];
		Buffer *nb = i == p && x->kind == IR_LOAD ? mapped(F, x->load.buf) : NULL;
		args[i] = nb ? block_reg(F, e, p, nb) : ir_mutate_expr(m, x);
	}
	IrExpr *r = ir_call_intrinsic_like(e, args);
	r->loc = e->loc;
	return r;
}

static void
stray(Fr *F, Buffer *b, Loc l, const char *how)
{
	F->ok = false;
	if (F->strayed)
		return;
	F->strayed = true;
	diag_error(where(F, b->scope_loc), "fragment '%s' is %s by scalar code; its elements lie "
	    "spread over a warp's lanes, where only the tensor cores' intrinsics reach them "
	    "(mma, mma_fill, mma_store): tensorize every nest that touches it", b->name, how);
	if (l.file)
		diag_note(l, "%s here", how);
}

static IrExpr *
fr_load(IrMutator *m, IrExpr *e)
{
	if (mapped((Fr *)m, e->load.buf))
		stray((Fr *)m, e->load.buf, e->loc, "read");
	return ir_mutate_expr_children(m, e);
}

static IrStmt *
fr_store(IrMutator *m, IrStmt *s)
{
	if (mapped((Fr *)m, s->store.buf))
		stray((Fr *)m, s->store.buf, s->loc, "written");
	return ir_mutate_stmt_children(m, s);
}

typedef struct {
	IrVisitor v;
	bool found;
} Find;

static void
find_alloc(IrVisitor *v, IrStmt *s)
{
	if (s->alloc.buf->scope == SCOPE_FRAGMENT)
		((Find *)v)->found = true;
	ir_visit_stmt_children(v, s);
}

bool
gpu_fragment_in(IrStmt *s)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.v.stmt[IS_ALLOCATE] = find_alloc;
	ir_visit_stmt(&f.v, s);
	return f.found;
}

const char *
gpu_fragment_where(IrStmt *s)
{
	if (gpu_wgmma_in(s))
		return "a warpgroup fragment is the registers of a warpgroup's 128 threads (threadIdx.x): "
		    "compute it at the loop bound to the warpgroup (threadIdx.y or z)";
	return "a fragment is a warp's registers: compute it at the loop bound to the warp "
	    "(threadIdx.y or z)";
}

bool
gpu_fragment(GpuKernel *k)
{
	Fr F;
	memset(&F, 0, sizeof F);
	F.k = k;
	F.ok = true;
	F.wg = gpu_wgmma_in(k->fn->body);
	F.m.stmt[IS_ALLOCATE] = fr_alloc;
	F.m.stmt[IS_STORE] = fr_store;
	F.m.expr[IR_CALL] = fr_call;
	F.m.expr[IR_LOAD] = fr_load;
	IrStmt *body = ir_mutate_stmt(&F.m, k->fn->body);
	if (F.ok)
		k->fn->body = body;
	return F.ok;
}
