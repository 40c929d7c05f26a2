/* flatten.c: multi-dimensional accesses to flat offsets.
 *
 * Every buffer is stored row-major: the last dimension is contiguous and
 * stride[d] = stride[d + 1] * extent[d + 1].  An access buf[i0, ..., in]
 * becomes buf[(i0 - min0)*stride0 + ... + (in - minn)], and the buffer is
 * marked flat.  Strides are expressions in the extents, which hold where
 * the buffer is allocated (an Allocate) or passed in (an argument).
 */
#include "lower/lower.h"

static void
strides(Buffer *b)
{
	if (b->stride)
		return;
	b->stride = arena_alloc(ir_arena, (b->ndims + 1) * sizeof *b->stride);
	IrExpr *s = ir_i64c(1);
	for (int d = b->ndims - 1; d >= 0; d--) {
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

IrStmt *
flatten_buffers(IrStmt *s)
{
	/* rewrite first (checks see multi-dimensional buffers), then mark */
	IrMutator fl = { .expr[IR_LOAD] = flat_load, .stmt[IS_STORE] = flat_store };
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
 * constant strides, as Halide sizes shared allocations.  Not a buffer an
 * intrinsic call (mma) takes: its strides are the call's arguments. */
typedef struct {
	IrVisitor v;
	Buffer *b;
	bool found;
} InCall;

static void
in_call(IrVisitor *v, IrExpr *e)
{
	InCall *c = (InCall *)v;
	if (e->call.ck == CALL_INTRINSIC)
		for (int i = 0; i < e->call.nargs; i++)
			if (e->call.args[i]->kind == IR_LOAD && e->call.args[i]->load.buf == c->b)
				c->found = true;
	ir_visit_expr_children(v, e);
}

/* Whether an intrinsic call in s takes b's address: the call's stride
 * arguments were written from b's extents (tensorize.c), which must stay. */
static bool
intrinsic_operand(IrStmt *s, Buffer *b)
{
	InCall c = { .v = {.expr = {[IR_CALL] = in_call}}, .b = b };
	ir_visit_stmt(&c.v, s);
	return c.found;
}

static IrStmt *
pad_alloc(IrMutator *m, IrStmt *s)
{
	Buffer *b = s->alloc.buf;
	if ((b->scope == SCOPE_LOCAL || b->scope == SCOPE_SHARED) && !b->stride &&
	    !intrinsic_operand(s->alloc.body, b))
		for (int d = 0; d < b->ndims; d++) {
			int64_t c;
			if (b->extent[d] && !ir_is_const(b->extent[d], &c) &&
			    bounds_const_max(b->extent[d], &c) && c >= 0)
				b->extent[d] = ir_i64c(c);
		}
	return ir_mutate_stmt_children(m, s);
}

IrStmt *
flatten_buffers_padded(IrStmt *s)
{
	IrMutator pad = { .stmt[IS_ALLOCATE] = pad_alloc };
	return flatten_buffers(ir_mutate_stmt(&pad, s));
}
