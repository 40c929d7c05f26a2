/* flatten.c: multi-dimensional accesses to flat offsets.
 *
 * Every buffer is stored row-major: the last dimension is contiguous and
 * stride[d] = stride[d + 1] * extent[d + 1]; a stage's buffer given
 * reorder_storage is stored in its order instead (the last dimension it
 * names contiguous, each before it the product of those after).  An access buf[i0, ..., in]
 * becomes buf[(i0 - min0)*stride0 + ... + (in - minn)], and the buffer is
 * marked flat.  Strides are expressions in the extents, which hold where
 * the buffer is allocated (an Allocate) or passed in (an argument).
 */
#include <string.h>

#include "lower/lower.h"

static void
strides(Buffer *b)
{
	if (b->stride)
		return;
	b->stride = arena_alloc(ir_arena, (b->ndims + 1) * sizeof *b->stride);
	IrExpr *s = ir_i64c(1);
	for (int o = b->ndims - 1; o >= 0; o--) {
		int d = b->storage_order ? b->storage_order[o] : o;
		b->stride[d] = s;
		s = lin_normalize(ir_mul(s, b->extent[d]));
	}
	b->flat = true;
}

static IrExpr *
offset(Buffer *b, IrExpr **idx, int n)
{
	strides(b);
	IrExpr *off = NULL;
	for (int d = 0; d < n; d++) {
		IrExpr *i = idx[d];
		int64_t z;
		if (b->min[d] && !(ir_is_const(b->min[d], &z) && z == 0))
			i = ir_sub(i, b->min[d]);
		int64_t one;
		IrExpr *t = ir_is_const(b->stride[d], &one) && one == 1 ? i : ir_mul(i, b->stride[d]);
		off = off ? ir_add(off, t) : t;
	}
	return off ? off : ir_i64c(0);
}

static IrExpr *
flat_load(IrMutator *m, IrExpr *e)
{
	e = ir_mutate_expr_children(m, e);
	Buffer *b = e->load.buf;
	IrExpr *off = offset(b, e->load.idx, e->load.nidx);
	IrExpr *x = ir_load(b, &off, 1, e->a, e->type.lanes);
	x->loc = e->loc;
	return x;
}

static IrStmt *
flat_store(IrMutator *m, IrStmt *s)
{
	s = ir_mutate_stmt_children(m, s);
	Buffer *b = s->store.buf;
	IrExpr *off = offset(b, s->store.idx, s->store.nidx);
	IrStmt *x = ir_store(b, &off, 1, s->store.value, s->store.pred);
	x->loc = s->loc;
	return x;
}

static void
mark(Buffer *b)
{
	strides(b);
	b->flat = true;
}

static IrExpr *
mark_load(IrMutator *m, IrExpr *e)
{
	mark(e->load.buf);
	return ir_mutate_expr_children(m, e);
}

static IrStmt *
mark_store(IrMutator *m, IrStmt *s)
{
	mark(s->store.buf);
	return ir_mutate_stmt_children(m, s);
}

static IrStmt *
mark_alloc(IrMutator *m, IrStmt *s)
{
	mark(s->alloc.buf);
	return ir_mutate_stmt_children(m, s);
}

static IrStmt *flat_alloc(IrMutator *m, IrStmt *s);

IrStmt *
flatten_buffers(IrStmt *s)
{
	/* rewrite first (checks see multi-dimensional buffers), then mark */
	IrMutator fl = { .expr[IR_LOAD] = flat_load, .stmt[IS_STORE] = flat_store,
		.stmt[IS_ALLOCATE] = flat_alloc };
	s = ir_mutate_stmt(&fl, s);
	IrMutator mk = { .expr[IR_LOAD] = mark_load, .stmt[IS_STORE] = mark_store,
		.stmt[IS_ALLOCATE] = mark_alloc };
	return ir_mutate_stmt(&mk, s);
}

/* A buffer allocated with an extent that only has a constant bound
 * (min(4, N - jo*4), a tile's edge) gets the bound as its extent, so that
 * its strides are constants: a GPU thread's local tile then indexes with
 * constants once unrolled, and lives in registers rather than the stack;
 * a block's shared tile (min(16, K - ko*16) columns of A) is read with
 * constant strides, as Halide sizes shared allocations.  A buffer an
 * intrinsic call takes is padded too, and the call's stride arguments
 * (tensorize.c wrote them from the old extents) are rewritten for the new
 * layout; a 16-bit shared tile of the tensor cores' mma also gets 8 more
 * elements a row (16 bytes), so that the 8 rows an ldmatrix reads fall in
 * different banks (cuda_ptx.c), unless it is swizzled: swizzle() is checked
 * here, where the row's width is fixed, and replaces that padding
 * (target/cuda/gpu_swizzle.c permutes the rows' pieces instead).  Where a
 * stride does not decompose over the old extents, the buffer keeps them. */
typedef struct {
	IrVisitor v;
	Buffer *b;
	bool found, mma, wgmma;
} InCall;

static void
in_call(IrVisitor *v, IrExpr *e)
{
	InCall *c = (InCall *)v;
	if (e->call.ck == CALL_INTRINSIC)
		for (int i = 0; i < e->call.nargs; i++)
			if (e->call.args[i]->kind == IR_LOAD && e->call.args[i]->load.buf == c->b) {
				c->found = true;
				if (!strcmp(e->call.name, "mma"))
					c->mma = true;
				if (!strcmp(e->call.name, "wgmma"))
					c->wgmma = true;
			}
	ir_visit_expr_children(v, e);
}

/* storage_align(d, factor, offset): the dimension just inside d in memory
 * padded until d's stride is factor * n + offset elements (the rows of a
 * shared tile read down a column then fall in different banks); the
 * dimensions inside d need constant extents.  False after an error. */
static bool
align_pad(Buffer *b)
{
	int n = b->ndims, pos = 0, *ord = b->storage_order;
	while (pos < n && (ord ? ord[pos] : pos) != b->align_dim)
		pos++;
	if (pos >= n - 1) {
		diag_error(b->align_loc, "storage_align of '%s': dimension %d is its innermost in "
		    "memory, whose stride is 1", b->name, b->align_dim);
		return false;
	}
	int in = ord ? ord[pos + 1] : pos + 1;
	int64_t p = 1, e, c;
	for (int o = pos + 1; o < n; o++) {
		int d = ord ? ord[o] : o;
		if (!ir_is_const(b->extent[d], &c) || c <= 0) {
			diag_error(b->align_loc, "storage_align of '%s': dimension %d has the extent "
			    "%s here, not a constant", b->name, d, ir_expr_str(b->extent[d]));
			diag_note(b->align_loc, "a tile with tail = round_up, or a cuda schedule "
			    "(which allocates shared and local tiles at their constant bounds), has "
			    "constant extents");
			return false;
		}
		if (d != in)
			p *= c;
	}
	ir_is_const(b->extent[in], &e);
	for (int64_t x = e; x < e + b->align_factor; x++)
		if (x * p % b->align_factor == b->align_offset) {
			b->extent[in] = ir_i64c(x);
			return true;
		}
	diag_error(b->align_loc, "storage_align of '%s': no padding of dimension %d makes the "
	    "stride %lld * n + %lld (the dimensions inside it multiply it by %lld)", b->name, in,
	    (long long)b->align_factor, (long long)b->align_offset, (long long)p);
	return false;
}

/* A buffer given reorder_storage or storage_align, before its first
 * access fixes its strides: an intrinsic's stride arguments (tensorize.c)
 * and swizzle's rows assume the row-major layout, unpadded, so either
 * keeps it, after an error. */
static IrStmt *
flat_alloc(IrMutator *m, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if (b->align_factor && !b->stride) {
		InCall ic = { .v = {.expr = {[IR_CALL] = in_call}}, .b = b };
		ir_visit_stmt(&ic.v, s->alloc.body);
		if (ic.found || b->swizzle_row) {
			diag_error(b->align_loc, "storage_align of '%s', which %s: that reads the "
			    "unpadded layout", b->name, ic.found ? "a tensorized call takes" :
			    "is swizzled");
			b->align_factor = 0;
		} else if (!align_pad(b)) {
			b->align_factor = 0;
		}
	}
	if (b->storage_order && !b->stride) {
		InCall ic = { .v = {.expr = {[IR_CALL] = in_call}}, .b = b };
		ir_visit_stmt(&ic.v, s->alloc.body);
		if (ic.found || b->swizzle) {
			diag_error(b->storage_loc, "reorder_storage of '%s', which %s: that reads "
			    "the row-major layout", b->name, ic.found ? "a tensorized call takes" :
			    "is swizzled");
			b->storage_order = NULL;
		}
	}
	return ir_mutate_stmt_children(m, s);
}

/* Element stride of dimension d of a row-major layout over ext[0..n). */
static IrExpr *
layout_stride(IrExpr **ext, int n, int d)
{
	IrExpr *s = ir_i64c(1);
	for (int e = n - 1; e > d; e--)
		s = lin_normalize(ir_mul(s, ext[e]));
	return s;
}

/* A step s in elements over the layout `from` (from dimension d on) as
 * the same step over `to`: s = sum a_e * stride_e with 0 <= a_e, and
 * a_e < extent_e below the first; NULL where no such a_e are found. */
static IrExpr *
restride(IrExpr *s, IrExpr **from, IrExpr **to, int n, int d)
{
	int64_t c, lim;
	if (d == n - 1)
		return ir_is_const(s, &c) && c >= 0 && (d == 0 || (bounds_const_max(from[d], &lim) &&
		    c < lim)) ? s : NULL;
	IrExpr *S = layout_stride(from, n, d), *T = layout_stride(to, n, d);
	int64_t sc, rc;
	if (ir_is_const(S, &sc) && ir_is_const(s, &rc)) {
		if (sc <= 0 || rc < 0)
			return NULL;
		IrExpr *r = restride(ir_i64c(rc % sc), from, to, n, d + 1);
		return r ? lin_normalize(ir_add(ir_mul(ir_i64c(rc / sc), T), r)) : NULL;
	}
	for (int64_t a = 0; a <= 64; a++) {
		IrExpr *r = restride(simplify_expr(ir_sub(s, ir_mul(ir_i64c(a), S)), NULL), from,
		    to, n, d + 1);
		if (r)
			return lin_normalize(ir_add(ir_mul(ir_i64c(a), T), r));
	}
	return NULL;
}

typedef struct {
	IrMutator m;
	Buffer *b;
	IrExpr **from, **to;
	bool ok;
} Restride;

/* the strides after each load of b in an intrinsic call, over the new
 * extents */
static IrExpr *
restride_call(IrMutator *m, IrExpr *e)
{
	Restride *r = (Restride *)m;
	e = ir_mutate_expr_children(m, e);
	if (e->call.ck != CALL_INTRINSIC)
		return e;
	IrExpr **args = arena_alloc(ir_arena, (size_t)(e->call.nargs + 1) * sizeof *args);
	bool mine = false, changed = false;
	for (int i = 0; i < e->call.nargs; i++) {
		IrExpr *x = e->call.args[i];
		args[i] = x;
		if (x->kind == IR_LOAD) {
			mine = x->load.buf == r->b;
			continue;
		}
		if (!mine)
			continue;
		IrExpr *y = restride(x, r->from, r->to, r->b->ndims, 0);
		if (!y) {
			r->ok = false;
			continue;
		}
		args[i] = y;
		changed = true;
	}
	return changed ? ir_call_intrinsic_like(e, args) : e;
}

/* Whether swizzle() can apply to b, whose last extent will be `last`
 * (0: not a constant): a shared buffer of at least two dimensions whose
 * rows are 2, 4 or a multiple of 8 pieces of 16 bytes (the XOR of a row's
 * bits into the piece index then stays inside the row; gpu_swizzle.c).
 * Diagnosed at the primitive, once. */
static bool
swizzle_ok(Buffer *b, int64_t last)
{
	b->swizzle = false;
	if (b->scope != SCOPE_SHARED) {
		diag_error(b->swizzle_loc, "swizzle of '%s', which is in %s memory: only a shared "
		    "buffer's layout is swizzled (bank conflicts are shared memory's)", b->name,
		    ir_scope_name(b->scope));
		if (b->scope_loc.file)
			diag_note(b->scope_loc, "its scope is chosen here");
		return false;
	}
	if (b->ndims < 2) {
		diag_error(b->swizzle_loc, "swizzle of '%s', which has one dimension: swizzle "
		    "permutes the 16-byte pieces of each row by the row's index, so a buffer needs "
		    "rows (two dimensions or more)", b->name);
		return false;
	}
	int64_t bytes = last * ir_bits(b->elem) / 8;
	if (last <= 0) {
		diag_error(b->swizzle_loc, "swizzle of '%s': its rows (last dimension, %s "
		    "elements) have no constant bound, so the layout is not fixed", b->name,
		    ir_expr_str(b->extent[b->ndims - 1]));
		return false;
	}
	if (bytes % 16 || bytes < 32) {
		diag_error(b->swizzle_loc, "swizzle of '%s', whose rows are %lld bytes (%lld x %s): "
		    "swizzle permutes the 16-byte pieces of a row, so a row must be a multiple of 16 "
		    "bytes and at least 32", b->name, (long long)bytes, (long long)last,
		    ir_type_str(ir_scalar(b->elem)));
		diag_note(b->swizzle_loc, "tile the stage so that its last dimension spans 32, 64 "
		    "or 128 bytes (or leave it unswizzled)");
		return false;
	}
	int64_t pieces = bytes / 16;
	if (pieces != 2 && pieces != 4 && pieces % 8) {
		diag_error(b->swizzle_loc, "swizzle of '%s', whose rows are %lld pieces of 16 "
		    "bytes: a swizzled row is 2, 4 or a multiple of 8 pieces (32, 64 or 128n bytes)",
		    b->name, (long long)pieces);
		return false;
	}
	return true;
}

static IrStmt *pad_layout(IrMutator *m, IrStmt *s);

/* The swizzled row of a tensor-core tile (mma, wgmma) of `last` elements
 * of `bits`: `last` where it is a width swizzle() permutes (32, 64 or
 * 128n bytes), else the next such width: a tile whose rows -D folded to
 * 48 bytes, below the split's 64 elements, is stored in rows of 64 bytes
 * (the calls read whole 16-wide blocks, and the copies of a wgmma tile
 * fill the pad with zeros, gpu_copy.c).  A row of 45 f16 becomes 64.
 * Other swizzled buffers keep their rows, and swizzle_ok says what is
 * wrong with a width; so does a row without a constant bound (0). */
static int64_t
swizzle_width(int64_t last, int bits)
{
	if (last <= 0 || bits <= 0 || 128 % bits)
		return last;
	int64_t per = 128 / bits;   /* elements of a 16-byte piece */
	int64_t pieces = (last + per - 1) / per;
	if (pieces <= 2)
		pieces = 2;
	else if (pieces <= 4)
		pieces = 4;
	else
		pieces = (pieces + 7) / 8 * 8;
	return pieces * per;
}

static IrStmt *
pad_alloc(IrMutator *m, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if (!b->swizzle || b->stride)
		return pad_layout(m, s);
	int64_t last = 0, c;
	IrExpr *e = b->ndims ? b->extent[b->ndims - 1] : NULL;
	if (e && !(ir_is_const(e, &last) || (bounds_const_max(e, &c) && (last = c) > 0)))
		last = 0;
	/* a tensor-core tile's rows, which its calls read in whole blocks */
	InCall ic = { .v = {.expr = {[IR_CALL] = in_call}}, .b = b };
	ir_visit_stmt(&ic.v, s->alloc.body);
	if (ic.mma || ic.wgmma)
		last = swizzle_width(last, ir_bits(b->elem));
	if (swizzle_ok(b, last))
		b->swizzle_row = last;
	IrStmt *r = pad_layout(m, s);
	/* the rows keep a run-time width where a call's strides do not
	 * decompose over the constant extents (the layout stayed as it was) */
	if (b->swizzle_row && !(ir_is_const(b->extent[b->ndims - 1], &c) && c == b->swizzle_row)) {
		diag_error(b->swizzle_loc, "swizzle of '%s': its rows keep the run-time width %s "
		    "(an intrinsic's strides over it do not decompose over the constant bounds)",
		    b->name, ir_expr_str(b->extent[b->ndims - 1]));
		b->swizzle_row = 0;
	}
	return r;
}

static IrStmt *
pad_layout(IrMutator *m, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if ((b->scope != SCOPE_LOCAL && b->scope != SCOPE_SHARED) || b->stride)
		return ir_mutate_stmt_children(m, s);
	InCall ic = { .v = {.expr = {[IR_CALL] = in_call}}, .b = b };
	ir_visit_stmt(&ic.v, s->alloc.body);
	IrExpr **to = arena_alloc(ir_arena, (size_t)(b->ndims + 1) * sizeof *to);
	bool changed = false;
	for (int d = 0; d < b->ndims; d++) {
		int64_t c;
		to[d] = b->extent[d];
		if (b->extent[d] && !ir_is_const(b->extent[d], &c) &&
		    bounds_const_max(b->extent[d], &c) && c >= 0) {
			to[d] = ir_i64c(c);
			changed = true;
		}
	}
	int64_t last;
	int n = b->ndims;
	/* a swizzled row padded to a width swizzle() permutes */
	if (b->swizzle_row && n >= 1 && ir_is_const(to[n - 1], &last) && last < b->swizzle_row) {
		to[n - 1] = ir_i64c(b->swizzle_row);
		changed = true;
	}
	/* and a tile wgmma reads in whole rows of 16 (k, for an n-major b
	 * whose k -D folded to 45: 48 rows, the last zeros, gpu_copy.c),
	 * which its descriptors' 8-row groups and panels need */
	if (b->swizzle_row && ic.wgmma && n >= 2 && ir_is_const(to[n - 2], &last) && last % 16) {
		to[n - 2] = ir_i64c((last + 15) / 16 * 16);
		changed = true;
	}
	if (ic.mma && !b->swizzle_row && b->scope == SCOPE_SHARED && n >= 2 &&
	    ir_bits(b->elem) == 16 && ir_is_const(to[n - 1], &last) && last % 8 == 0) {
		to[n - 1] = ir_i64c(last + 8);
		changed = true;
	}
	if (!changed)
		return ir_mutate_stmt_children(m, s);
	IrStmt *body = s->alloc.body;
	if (ic.found) {
		for (int d = 0; d < n; d++)
			if (!b->extent[d])
				return ir_mutate_stmt_children(m, s);
		Restride r = { .m = {.expr = {[IR_CALL] = restride_call}}, .b = b,
			.from = b->extent, .to = to, .ok = true };
		body = ir_mutate_stmt(&r.m, body);
		if (!r.ok)
			return ir_mutate_stmt_children(m, s);
	}
	for (int d = 0; d < n; d++)
		b->extent[d] = to[d];
	IrStmt *a = ir_allocate(b, body);
	a->loc = s->loc;       /* the stage's compute_at: where diagnostics point */
	return ir_mutate_stmt_children(m, a);
}

IrStmt *
flatten_buffers_padded(IrStmt *s)
{
	IrMutator pad = { .stmt[IS_ALLOCATE] = pad_alloc };
	return flatten_buffers(ir_mutate_stmt(&pad, s));
}
