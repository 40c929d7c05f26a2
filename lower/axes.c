/* axes.c: the arithmetic of a stage's axes after split and fuse.
 *
 * Given the extents of a stage's original axes (its region and reduction
 * domains), gives every axis its number of iterations (a split's outer
 * axis: ceil(extent / factor), or extent / factor when exact; a fuse:
 * the product) and its position in terms of the loop variables (a split
 * parent: outer*factor + inner, shift_inward clamping the outer start to
 * extent - factor; fused axes: fused / inner extent and fused % inner
 * extent), and marks the original axes a guard split can push past their
 * extent.  lower.c, bounds_infer.c and rfactor (sched.c) use it.
 */
#include "lower/lower.h"


static Rel *
made_by(LStage *s, int a)
{
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (r->fuse ? r->parent == a : r->outer == a || r->inner == a)
			return r;
	}
	return NULL;
}

static Rel *
used_by(LStage *s, int a)
{
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (r->fuse ? r->outer == a || r->inner == a : r->parent == a)
			return r;
	}
	return NULL;
}

static int
root_index(LStage *s, int a)     /* position among dmin/dext, or -1 */
{
	if (a < s->ndims)
		return a;
	for (int i = 0; i < s->nred; i++)
		if (s->rax[i] == a)
			return s->ndims + i;
	return -1;
}

static IrExpr *
root_min(LStage *s, int a)
{
	int r = root_index(s, a);
	if (r < 0)
		return NULL;
	if (r < s->ndims)
		return s->dmin ? s->dmin[r] : NULL;
	return s->rmin[r - s->ndims];
}

static IrExpr *
ext_of(LStage *s, int a)
{
	Axis *x = &s->axes[a];
	if (x->ext)
		return x->ext;
	Rel *r = made_by(s, a);
	if (!r) {
		int ri = root_index(s, a);
		if (ri < 0)
			return NULL;
		x->ext = ri < s->ndims ? (s->dext ? s->dext[ri] : NULL) : s->rext[ri - s->ndims];
	} else if (r->fuse) {
		IrExpr *o = ext_of(s, r->outer), *i = ext_of(s, r->inner);
		x->ext = o && i ? lin_normalize(ir_mul(o, i)) : NULL;
	} else if (a == r->inner) {
		x->ext = ir_i64c(r->factor);
	} else {
		IrExpr *p = ext_of(s, r->parent);
		if (p && r->tail == TAIL_EXACT)
			x->ext = ir_binop(IR_DIV, p, ir_i64c(r->factor));
		else if (p)
			x->ext = ir_binop(IR_DIV, lin_normalize(ir_add(p, ir_i64c(r->factor - 1))),
			    ir_i64c(r->factor));
		int64_t c;
		if (x->ext && ir_is_const(p, &c))
			/* ceil(c / factor) without c + factor - 1, which passes
			 * INT64_MAX for a size fixed near it (-D N=...) */
			x->ext = ir_i64c(r->tail == TAIL_EXACT ? c / r->factor : c >= 0 ?
			    c / r->factor + (c % r->factor != 0) : (c + r->factor - 1) / r->factor);
	}
	return x->ext;
}

static IrExpr *
pos_of(LStage *s, int a)
{
	Axis *x = &s->axes[a];
	if (x->pos)
		return x->pos;
	Rel *r = used_by(s, a);
	if (!r || x->leaf) {
		IrExpr *m = root_index(s, a) >= 0 ? root_min(s, a) : NULL;
		x->pos = m ? lin_normalize(ir_sub(ir_var(x->var), m)) : ir_var(x->var);
	} else if (r->fuse) {
		IrExpr *f = pos_of(s, r->parent), *ie = ext_of(s, r->inner);
		if (a == r->outer)
			x->pos = ir_binop(IR_DIV, f, ie);
		else
			x->pos = ir_binop(IR_MOD, f, ie);
	} else {
		IrExpr *o = lin_normalize(ir_mul(pos_of(s, r->outer), ir_i64c(r->factor)));
		if (r->tail == TAIL_SHIFT)
			o = ir_min(o, lin_normalize(ir_sub(ext_of(s, a), ir_i64c(r->factor))));
		x->pos = lin_normalize(ir_add(o, pos_of(s, r->inner)));
	}
	return x->pos;
}

static void
taint_up(LStage *s, int a)
{
	Rel *r = made_by(s, a);
	if (!r) {
		s->axes[a].tainted = true;
		return;
	}
	if (r->fuse) {
		taint_up(s, r->outer);
		taint_up(s, r->inner);
	} else {
		taint_up(s, r->parent);
	}
}

void
axes_extents(LStage *s)
{
	for (int i = 0; i < s->naxes; i++) {
		s->axes[i].ext = s->axes[i].pos = NULL;
		s->axes[i].tainted = false;
	}
	for (int i = 0; i < s->naxes; i++)
		ext_of(s, i);
	for (int i = 0; i < s->nrels; i++)
		if (!s->rels[i].fuse && s->rels[i].tail == TAIL_GUARD)
			taint_up(s, s->rels[i].parent);
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].ext || s->axes[i].leaf)
			pos_of(s, i);
}

IrExpr *
axes_root_value(LStage *s, int a)
{
	IrExpr *m = root_min(s, a);
	IrExpr *p = pos_of(s, a);
	if (s->axes[a].leaf)
		return ir_var(s->axes[a].var);
	return m ? lin_normalize(ir_add(m, p)) : p;
}

/* The axis whose range a guard split's overflow leaves, following it up:
 * a split's outer axis or a fused axis passes it on to its parent (or its
 * fuse's outer part), ending at a root (-1: the root guard catches it) or
 * at the inner axis of a split, which then overlaps the next block of its
 * parent (k_2, inner of a split by 16, split again by 3: k_2 runs to 17). */
static int
overflows_into(LStage *s, int a)
{
	for (int guard = 0; guard < 64; guard++) {
		Rel *r = made_by(s, a);
		if (!r)
			return -1;
		if (r->fuse)
			a = r->outer;
		else if (a == r->inner)
			return a;
		else
			a = r->parent;
	}
	return -1;
}

/* The guards of the splits with tail=guard: each root axis they can push
 * past its extent (tainted) stays below it, and so does each inner axis
 * of an earlier split they push past its factor (a reduction would count
 * those elements twice).  `pure` and `red` choose the pure and reduction
 * axes' guards. */
IrExpr *
axes_guards(LStage *s, bool pure, bool red)
{
	uint64_t roots = 0;
	for (int k = 0; k < s->ndims + s->nred && k < 64; k++)
		if (k < s->ndims ? pure : red)
			roots |= (uint64_t)1 << k;
	return axes_guards_of(s, roots);
}

/* The same for the axes made from the root axes in `roots` (bits as
 * axes_roots gives them): an update's nest has only some pure axes. */
IrExpr *
axes_guards_of(LStage *s, uint64_t roots)
{
	IrExpr *c = NULL;
	for (int k = 0; k < s->ndims + s->nred; k++) {
		int ax = k < s->ndims ? k : s->rax[k - s->ndims];
		Axis *a = &s->axes[ax];
		if (!a->tainted || (k < 64 && !(roots >> k & 1)))
			continue;
		IrExpr *g = ir_binop(IR_LT, lin_normalize(a->pos), lin_normalize(a->ext));
		c = c ? ir_binop(IR_AND, c, g) : g;
	}
	bool *done = arena_alloc(ir_arena, (s->naxes + 1) * sizeof *done);
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		int64_t e;
		IrExpr *pe = s->axes[r->parent].ext;
		if (r->fuse || r->tail != TAIL_GUARD || !pe || (ir_is_const(pe, &e) && e % r->factor == 0))
			continue;
		int x = overflows_into(s, r->parent);
		if (x < 0 || done[x] || (axes_roots(s, x) & ~roots) || !s->axes[x].pos)
			continue;
		done[x] = true;
		Axis *a = &s->axes[x];
		IrExpr *g = ir_binop(IR_LT, lin_normalize(a->pos), lin_normalize(a->ext));
		c = c ? ir_binop(IR_AND, c, g) : g;
	}
	return c;
}

/* The root axes axis a of s is made from, as bits by their position among
 * dmin/dext (pure axes, then reduction axes; past 63 left out). */
uint64_t
axes_roots(LStage *s, int a)
{
	int k = root_index(s, a);
	if (k >= 0)
		return k < 64 ? (uint64_t)1 << k : 0;
	for (int i = s->nrels - 1; i >= 0; i--) {
		Rel *r = &s->rels[i];
		if (!r->fuse && (r->outer == a || r->inner == a))
			return axes_roots(s, r->parent);
		if (r->fuse && r->parent == a)
			return axes_roots(s, r->outer) | axes_roots(s, r->inner);
	}
	return 0;
}
