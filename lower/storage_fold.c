/* storage_fold.c: storage folding (Halide's), after the sliding window.
 * A stage whose region slides along its compute loop (sliding.c) needs,
 * in each iteration, only the last few rows it computed: its buffer keeps
 * F rows, F the smallest power of two at least the rows one iteration
 * reads, and row y lives at y % F (a ring).  The three rows of a 3x3
 * blur's first pass then take 4 rows of the image's width, not a strip's
 * height.  Folded only where the stage is read inside that loop's
 * iteration alone (a reader elsewhere could need an overwritten row) and
 * the buffer is larger than F rows.  The rewrite is visible in --print-loops:
 * blur_x[blur_x_y % 4, x]. */
#include "lower/lower.h"

typedef struct {
	IrMutator m;
	Buffer *b;
	int dim;
	int64_t f;
} Fold;

static IrExpr **
folded(Fold *fo, IrExpr **idx, int n)
{
	IrExpr **x = arena_alloc(ir_arena, (n + 1) * sizeof *x);
	for (int d = 0; d < n; d++)
		x[d] = d == fo->dim ? ir_mod(idx[d], ir_i64c(fo->f)) : idx[d];
	return x;
}

static IrExpr *
fold_load(IrMutator *m, IrExpr *e)
{
	Fold *fo = (Fold *)m;
	e = ir_mutate_expr_children(m, e);
	if (e->load.buf != fo->b)
		return e;
	IrExpr *x = ir_load(e->load.buf, folded(fo, e->load.idx, e->load.nidx), e->load.nidx,
	    e->a, e->type.lanes);
	x->loc = e->loc;
	return x;
}

static IrStmt *
fold_store(IrMutator *m, IrStmt *s)
{
	Fold *fo = (Fold *)m;
	s = ir_mutate_stmt_children(m, s);
	if (s->store.buf != fo->b)
		return s;
	IrStmt *x = ir_store(s->store.buf, folded(fo, s->store.idx, s->store.nidx),
	    s->store.nidx, s->store.value, s->store.pred);
	x->loc = s->loc;
	return x;
}

/* Whether s's buffer is read only inside one iteration of its compute
 * loop (loop `leaf` of c): by c, or by stages computed at c's loops from
 * that one inward. */
static bool
read_inside(Lower *L, LStage *s, LStage *c, int leaf)
{
	for (int i = 0; i < L->nstages; i++) {
		LStage *q = L->stages[i];
		if (q == c || q == s || q->input || (q->compute.kind == LEVEL_AT &&
		    q->compute.stage == c && q->compute.leaf >= leaf))
			continue;
		if ((q->value && stage_reads(q->value, s->buf)) ||
		    (q->rbody && stage_reads(q->rbody, s->buf)) ||
		    (q->rpred && stage_reads(q->rpred, s->buf)))
			return false;
	}
	return true;
}

IrStmt *
storage_fold(Lower *L, IrStmt *body)
{
	for (int i = 0; body && i < L->nstages; i++) {
		LStage *s = L->stages[i];
		int64_t rows, have;
		if (s->slide_dim < 0 || !read_inside(L, s, s->compute.stage, s->compute.leaf) ||
		    !bounds_const_max(s->slide_window, &rows) || rows < 1 || rows > (1 << 20))
			continue;
		int64_t f = 1;
		while (f < rows)
			f *= 2;
		Buffer *b = s->buf;
		int d = s->slide_dim;
		if (bounds_const_max(b->extent[d], &have) && have <= f)
			continue;
		Fold fo = { .m = {.expr = {[IR_LOAD] = fold_load}, .stmt = {[IS_STORE] = fold_store}},
		    .b = b, .dim = d, .f = f };
		body = ir_mutate_stmt(&fo.m, body);
		b->fold_dim = d;
		b->fold = f;
		b->fold_min = b->min[d];
		b->fold_extent = b->extent[d];
		b->min[d] = ir_i64c(0);
		b->extent[d] = ir_i64c(f);
	}
	return body;
}
