/* tensorize_guards.c: the guards around a tiled nest, for tensorize.c.
 *
 * A tile that guards cut (the edges of the output, a split's tail, a
 * reduction's where) either runs the intrinsic on a shorter or later
 * block, the guard absorbed into the call's extents and first elements,
 * or runs the original loops: the call goes under a test that the rest
 * of the guards hold at every corner of the tile's box (affine, so the
 * corners decide), and tiles outside the guards altogether skip both.
 */
#include "lower/tensorize.h"

static void
conjuncts(IrExpr *c, IrExpr **out, int *n)
{
	if (c && c->kind == IR_AND) {
		conjuncts(c->a, out, n);
		conjuncts(c->b, out, n);
	} else if (c && *n < 32) {
		out[(*n)++] = c;
	}
}

/* cond at every corner of the tile's box */
IrExpr *
tz_corners(Tz *t, IrExpr *cond)
{
	IrExpr *cs[32];
	int n = 0;
	conjuncts(cond, cs, &n);
	IrExpr *all = NULL;
	for (int i = 0; i < n; i++) {
		int used[MAXL], nu = 0;
		for (int l = 0; l < t->n; l++)
			if (ir_uses_var(cs[i], t->var[l]))
				used[nu++] = l;
		for (int m = 0; m < (1 << nu); m++) {
			IrExpr *e = cs[i];
			for (int u = 0; u < nu; u++) {
				int l = used[u];
				IrExpr *at = m & (1 << u) ? lin_normalize(ir_sub(ir_add(t->min[l], t->ext[l]),
				    ir_i64c(1))) : t->min[l];
				e = ir_substitute(e, t->var[l], at);
			}
			all = all ? ir_binop(IR_AND, all, e) : e;
		}
	}
	return all;
}

/* A comparison as `a < b` over the integers: a <= b is a < b + 1, a > b
 * is b < a, a >= b is b < a + 1; NULL for any other conjunct. */
static IrExpr *
as_less(IrExpr *c)
{
	if (!c || !ir_type_eq(c->a->type, ir_i64))
		return NULL;
	switch (c->kind) {
	case IR_LT:
		return c;
	case IR_LE:
		return ir_binop(IR_LT, c->a, ir_add(c->b, ir_i64c(1)));
	case IR_GT:
		return ir_binop(IR_LT, c->b, c->a);
	case IR_GE:
		return ir_binop(IR_LT, c->b, ir_add(c->a, ir_i64c(1)));
	default:
		return NULL;
	}
}

/* The loop of the tile the conjunct c uses, if it uses exactly one, with
 * d = a - b of c as `a < b` and its coefficient in that loop (d at 1
 * minus d at 0, a constant); -1 otherwise. */
static int
one_loop_less(Tz *t, IrExpr *c, IrExpr **lt, IrExpr **d0, int64_t *coef)
{
	int l = -1, nu = 0;
	for (int j = 0; j < t->n; j++)
		if (ir_uses_var(c, t->var[j]))
			l = j, nu++;
	*lt = as_less(c);
	if (nu != 1 || !*lt)
		return -1;
	IrExpr *d = ir_sub((*lt)->a, (*lt)->b);
	*d0 = lin_normalize(ir_substitute(d, t->var[l], ir_i64c(0)));
	IrExpr *d1 = lin_normalize(ir_substitute(d, t->var[l], ir_i64c(1)));
	return ir_is_const(lin_normalize(ir_sub(d1, *d0)), coef) ? l : -1;
}

/* A guard that bounds one loop of an fma_outer tile from below, v >= lo
 * (a reduction's `where 0 <= q + s - 1` with s outside the tile: the
 * columns of a convolution's first tile that a tap s reads from the
 * border), starts that loop at max(min, lo) instead of sending the tile
 * to the loops: the tensors' first elements move with it (the caller
 * matches the accesses afterwards), the extent shrinks by as much, and
 * the emitter runs the rows or columns left (its edge kernels).  The
 * start moves before matching, which takes the first elements there and
 * checks the extents the tile had (the shortened ones go to shorter[l]),
 * so only for fma_outer, whose every axis takes a run-time extent.
 * Returns cond without the absorbed conjuncts. */
IrExpr *
tz_absorb_heads(Tz *t, IrExpr *cond, IrExpr **shorter)
{
	if (!ir_fma_outer_lanes(t->k->intr_emit))
		return cond;
	IrExpr *cs[32], *rest = NULL;
	int n = 0;
	conjuncts(cond, cs, &n);
	for (int i = 0; i < n; i++) {
		IrExpr *lt, *d0;
		int64_t k;
		int l = one_loop_less(t, cs[i], &lt, &d0, &k);
		if (l >= 0 && k == -1) {
			/* d0 - v < 0: v >= d0 + 1 */
			IrExpr *lo = lin_normalize(ir_add(d0, ir_i64c(1)));
			IrExpr *from = ir_max(t->min[l], lo);
			IrExpr *ext = shorter[l] ? shorter[l] : t->ext[l];
			shorter[l] = ir_max(lin_normalize(ir_sub(ir_add(t->min[l], ext), from)),
			    ir_i64c(0));
			t->min[l] = from;
			continue;
		}
		rest = rest ? ir_binop(IR_AND, rest, cs[i]) : cs[i];
	}
	return rest;
}

/* A guard `e < b` on one loop shortens that loop's extent instead of
 * sending the tile to the loops: at the tail of a split k the intrinsic
 * runs min(256, K - ko*256) steps, and at the right or bottom edge of C
 * an fma_outer block runs max(min(16, N - j0), 0) columns (the emitter
 * masks them; the constant inside the min is the block's full size).
 * Only extents that are parameters are shortened for other emitters.
 * Returns cond without the absorbed conjuncts. */
IrExpr *
tz_absorb_tails(Tz *t, IrExpr *cond)
{
	IrExpr *cs[32], *rest = NULL;
	int n = 0;
	conjuncts(cond, cs, &n);
	for (int i = 0; i < n; i++) {
		int l = -1, nu = 0;
		for (int j = 0; j < t->n; j++)
			if (ir_uses_var(cs[i], t->var[j]))
				l = j, nu++;
		int ax = -1;
		for (int a = 0; a < t->ni && l >= 0; a++)
			if (t->map[a] == l)
				ax = a;
		bool param = ax >= 0 && (t->iext[ax]->kind == EXPR_NAME ||
		    ir_fma_outer_lanes(t->k->intr_emit) || tz_on_fragment(t));
		/* e <= b too, as e < b + 1 */
		IrExpr *lt = cs[i]->kind == IR_LE ? as_less(cs[i]) : cs[i];
		if (nu == 1 && param && lt && lt->kind == IR_LT) {
			/* d = e - b, affine in v with coefficient 1: v < -(d at v = 0);
			 * where b does not use v, d is e alone and b joins the limit
			 * whole (b may be a min over a modulus, which lin_normalize
			 * keeps as two terms that need not cancel) */
			Var *v = t->var[l];
			bool whole = !ir_uses_var(lt->b, v);
			IrExpr *d = whole ? lt->a : ir_sub(lt->a, lt->b);
			IrExpr *d0 = lin_normalize(ir_substitute(d, v, ir_i64c(0)));
			IrExpr *d1 = lin_normalize(ir_substitute(d, v, ir_i64c(1)));
			int64_t c;
			if (ir_is_const(lin_normalize(ir_sub(d1, d0)), &c) && c == 1) {
				IrExpr *lim = lin_normalize(ir_sub(ir_unop(IR_NEG, d0), t->min[l]));
				if (whole)
					lim = ir_sub(lt->b, lin_normalize(ir_add(d0, t->min[l])));
				t->ext[l] = ir_max(ir_min(t->ext[l], lim), ir_i64c(0));
				continue;
			}
		}
		rest = rest ? ir_binop(IR_AND, rest, cs[i]) : cs[i];
	}
	return rest;
}

/* A necessary condition for cond to hold somewhere in the tile: each
 * comparison at the corner that favours it most (affine, so that corner
 * decides); tiles entirely outside the guards skip their loops. */
IrExpr *
tz_some_corner(Tz *t, IrExpr *cond)
{
	IrExpr *cs[32], *any = NULL;
	int n = 0;
	conjuncts(cond, cs, &n);
	for (int i = 0; i < n; i++) {
		IrExpr *c = cs[i];
		int sgn = c->kind == IR_LT || c->kind == IR_LE ? 1 :
		    c->kind == IR_GT || c->kind == IR_GE ? -1 : 0;
		if (!sgn || !ir_type_eq(c->a->type, ir_i64))
			continue;
		IrExpr *d = ir_sub(c->a, c->b), *e = c;
		bool ok = true;
		for (int l = 0; l < t->n && ok; l++) {
			if (!ir_uses_var(c, t->var[l]))
				continue;
			int64_t k;
			IrExpr *d0 = ir_substitute(d, t->var[l], ir_i64c(0));
			IrExpr *d1 = ir_substitute(d, t->var[l], ir_i64c(1));
			ok = ir_is_const(lin_normalize(ir_sub(d1, d0)), &k);
			IrExpr *hi = lin_normalize(ir_sub(ir_add(t->min[l], t->ext[l]), ir_i64c(1)));
			/* a < b wants a - b small: the low end when it grows */
			e = ir_substitute(e, t->var[l], (k * sgn > 0) ? t->min[l] : hi);
		}
		if (ok)
			any = any ? ir_binop(IR_AND, any, e) : e;
	}
	return any;
}
