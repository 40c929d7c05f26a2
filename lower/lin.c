/* lin.c: the linear normal form of index expressions.
 *
 * Bound inference and the legality checks ask questions like "is
 * min(io*8 + 7, M - 1) <= M - 1 for every M >= 0 and every io in its
 * loop?".  An index expression is normalised into a tree of min/max over
 * linear forms (sum of coefficient * atom + constant; an atom is a
 * variable or any non-linear subexpression), with quotients and
 * remainders by constants reduced, and back into an expression
 * (lin_normalize).  lin_prove.c shows such forms non-negative,
 * lin_interval.c bounds expressions with them; lin.h is what the three
 * share.
 */
#include <string.h>

#include "lower/lin.h"

bool
lin_same(IrExpr *a, IrExpr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || !ir_type_eq(a->type, b->type))
		return false;
	switch (a->kind) {
	case IR_INT: return a->ival == b->ival;
	case IR_FLOAT: return a->fval == b->fval;
	case IR_VAR: return a->var == b->var;
	case IR_LOAD:
		if (a->load.buf != b->load.buf || a->load.nidx != b->load.nidx)
			return false;
		for (int i = 0; i < a->load.nidx; i++)
			if (!lin_same(a->load.idx[i], b->load.idx[i]))
				return false;
		break;
	case IR_CALL:
		if (a->call.builtin != b->call.builtin || a->call.nargs != b->call.nargs ||
		    a->call.name != b->call.name)
			return false;
		for (int i = 0; i < a->call.nargs; i++)
			if (!lin_same(a->call.args[i], b->call.args[i]))
				return false;
		break;
	default:
		break;
	}
	return lin_same(a->a, b->a) && lin_same(a->b, b->b) && lin_same(a->c, b->c);
}

/* Coefficients and constants past 64 bits (a size fixed with -D
 * N=4000000000 in N*N): the question is given up, not answered wrongly.
 * lin_ovf is set by the checked operations below (lin.h). */
bool lin_ovf;

static int64_t
ck_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r)) {
		lin_ovf = true;
		return 0;
	}
	return r;
}

static int64_t
ck_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r)) {
		lin_ovf = true;
		return 0;
	}
	return r;
}

void
lin_add_term(Lin *l, IrExpr *atom, int64_t c)
{
	if (c == 0)
		return;
	for (int i = 0; i < l->n; i++)
		if (lin_same(l->t[i].atom, atom)) {
			l->t[i].c = ck_add(l->t[i].c, c);
			if (l->t[i].c == 0) {
				memmove(&l->t[i], &l->t[i + 1], (l->n - i - 1) * sizeof *l->t);
				l->n--;
			}
			return;
		}
	Term *t = ARENA_PUSH(ir_arena, l->t, l->n, l->cap);
	t->atom = atom;
	t->c = c;
}

Lin
lin_copy(const Lin *l)
{
	Lin r = { NULL, 0, 0, l->k };
	for (int i = 0; i < l->n; i++)
		lin_add_term(&r, l->t[i].atom, l->t[i].c);
	return r;
}

void
lin_addto(Lin *to, const Lin *l, int64_t scale)
{
	to->k = ck_add(to->k, ck_mul(l->k, scale));
	for (int i = 0; i < l->n; i++)
		lin_add_term(to, l->t[i].atom, ck_mul(l->t[i].c, scale));
}

/* ---- work ---------------------------------------------------------- */

static long work;
static int nest;

void
lin_enter(void)
{
	if (nest++ == 0)
		work = 0;
}

void
lin_leave(void)
{
	nest--;
}

bool
lin_tired(void)
{
	return work > LIN_WORK || nest > LIN_NEST;
}

void
lin_spend(int n)
{
	work += n;
}

/* ---- trees --------------------------------------------------------- */

static int budget;

Tree *
lin_leaf(void)
{
	return arena_alloc(ir_arena, sizeof(Tree));
}

static Tree *
node2(int kind, Tree *a, Tree *b)
{
	Tree *t = lin_leaf();
	t->kind = kind;
	t->a = a;
	t->b = b;
	budget--;
	work++;
	return t;
}

Tree *
lin_scale(Tree *t, int64_t c)
{
	if (!t->kind) {
		Tree *r = lin_leaf();
		lin_addto(&r->lin, &t->lin, c);
		return r;
	}
	int k = c >= 0 ? t->kind : t->kind == IR_MIN ? IR_MAX : IR_MIN;
	return node2(k, lin_scale(t->a, c), lin_scale(t->b, c));
}

static Tree *tree_of(IrExpr *e);
static void fold_divmod(Lin *l);

static IrExpr *raw_expr(Tree *t);

/* A tree as one atom (its expression as it stands, nothing proved). */
static Tree *
atomize(Tree *t)
{
	if (!t->kind)
		return t;
	Tree *r = lin_leaf();
	lin_add_term(&r->lin, raw_expr(t), 1);
	return r;
}

Tree *
lin_combine(Tree *x, Tree *y, int64_t sy)
{
	/* distributing a sum over min/max multiplies the trees' leaves: past
	 * the budget the trees stay whole, as atoms */
	if ((x->kind || y->kind) && (budget <= 0 || lin_tired())) {
		x = atomize(x);
		y = atomize(y);
	}
	if (x->kind)
		return node2(x->kind, lin_combine(x->a, y, sy), lin_combine(x->b, y, sy));
	if (y->kind) {
		int k = sy >= 0 ? y->kind : y->kind == IR_MIN ? IR_MAX : IR_MIN;
		return node2(k, lin_combine(x, y->a, sy), lin_combine(x, y->b, sy));
	}
	Tree *r = lin_leaf();
	r->lin = lin_copy(&x->lin);
	lin_addto(&r->lin, &y->lin, sy);
	fold_divmod(&r->lin);
	return r;
}

static IrExpr *tree_expr(Tree *t);

/* Floor division of a linear form by d > 0: whole multiples of d leave
 * the division ((16*a + N + 31)/16 = a + (N + 15)/16 + 1), so the same
 * quotient written two ways ((N - 1)/16 and (N + 15)/16 - 1) becomes the
 * same atom and a constant numerator folds. */
static Tree *
div_tree(Tree *t, int64_t d)
{
	Tree *r = lin_leaf();
	if (t->kind) {
		lin_add_term(&r->lin, ir_binop(IR_DIV, tree_expr(t), ir_i64c(d)), 1);
		return r;
	}
	Lin rest = { NULL, 0, 0, 0 };
	for (int i = 0; i < t->lin.n; i++) {
		int64_t c = t->lin.t[i].c;
		if (c % d == 0)
			lin_add_term(&r->lin, t->lin.t[i].atom, c / d);
		else
			lin_add_term(&rest, t->lin.t[i].atom, c);
	}
	int64_t q = fold_floordiv(t->lin.k, d);
	r->lin.k = q;
	rest.k = ck_add(t->lin.k, ck_mul(q, -d));
	if (rest.n == 0) {
		r->lin.k += fold_floordiv(rest.k, d);
		return r;
	}
	lin_add_term(&r->lin, ir_binop(IR_DIV, lin_expr(&rest), ir_i64c(d)), 1);
	return r;
}

/* Floor modulo of a linear form by d > 0, with the numerator reduced as
 * div_tree reduces it, so that d*(X/d) + X%d meets as the same X. */
static Tree *
mod_tree(Tree *t, int64_t d)
{
	Tree *r = lin_leaf();
	if (t->kind) {
		lin_add_term(&r->lin, ir_binop(IR_MOD, tree_expr(t), ir_i64c(d)), 1);
		return r;
	}
	Lin rest = { NULL, 0, 0, fold_floormod(t->lin.k, d) };
	for (int i = 0; i < t->lin.n; i++)
		if (t->lin.t[i].c % d != 0)
			lin_add_term(&rest, t->lin.t[i].atom, t->lin.t[i].c);
	if (rest.n == 0)
		r->lin.k = rest.k;
	else
		lin_add_term(&r->lin, ir_binop(IR_MOD, lin_expr(&rest), ir_i64c(d)), 1);
	return r;
}

/* k*d*(X/d) + k*(X%d) is k*X (a split axis rebuilt from its quotient and
 * remainder: i/6*6 + i%6 is i). */
static void
fold_divmod(Lin *l)
{
	for (int i = 0; i < l->n; i++) {
		IrExpr *m = l->t[i].atom;
		int64_t d, d2, kd, k = l->t[i].c;
		if (m->kind != IR_MOD || !ir_is_const(m->b, &d) || d <= 0 ||
		    __builtin_mul_overflow(k, d, &kd) || kd == INT64_MIN || k == INT64_MIN)
			continue;
		for (int j = 0; j < l->n; j++) {
			IrExpr *q = l->t[j].atom;
			if (q->kind != IR_DIV || !ir_is_const(q->b, &d2) || d2 != d ||
			    l->t[j].c != kd || !lin_same(q->a, m->a))
				continue;
			Tree *x = tree_of(m->a);
			if (x->kind)
				break;
			lin_add_term(l, q, -kd);
			lin_add_term(l, m, -k);
			lin_addto(l, &x->lin, k);
			i = -1;     /* the terms moved: start again */
			break;
		}
	}
}

/* While the prover runs, products of non-constant linear forms are
 * multiplied out ((M - 1)*K + K - 1 is M*K - 1, the last element of a
 * tensor of M*K) over atoms whose factors are in one order; normalised
 * expressions keep their products. */
bool lin_distribute;

static int
factor_key(IrExpr *a, IrExpr *b)
{
	if (a->kind != IR_VAR || b->kind != IR_VAR)
		return (a->kind != IR_VAR) - (b->kind != IR_VAR);
	return a->var->id < b->var->id ? -1 : a->var->id > b->var->id;
}

static Tree *
product(IrExpr *e, Tree *ta, Tree *tb)
{
	Tree *r = lin_leaf();
	if (ta->kind || tb->kind || ta->lin.n + tb->lin.n > 6 ||
	    __builtin_mul_overflow(ta->lin.k, tb->lin.k, &r->lin.k)) {
		r->lin.k = 0;
		lin_add_term(&r->lin, e, 1);
		return r;
	}
	int64_t c;
	for (int i = -1; i < ta->lin.n; i++)
		for (int j = -1; j < tb->lin.n; j++) {
			if (i < 0 && j < 0)
				continue;
			int64_t ca = i < 0 ? ta->lin.k : ta->lin.t[i].c;
			int64_t cb = j < 0 ? tb->lin.k : tb->lin.t[j].c;
			if (__builtin_mul_overflow(ca, cb, &c)) {
				r = lin_leaf();
				lin_add_term(&r->lin, e, 1);
				return r;
			}
			IrExpr *x = i < 0 ? NULL : ta->lin.t[i].atom, *y = j < 0 ? NULL : tb->lin.t[j].atom;
			if (x && y && factor_key(x, y) > 0) {
				IrExpr *t = x;
				x = y;
				y = t;
			}
			lin_add_term(&r->lin, !x ? y : !y ? x : ir_mul(x, y), c);
		}
	return r;
}

static Tree *
tree_of(IrExpr *e)
{
	int64_t c;
	if (budget > 0 && lin_is_i64(e)) {
		switch (e->kind) {
		case IR_INT: {
			Tree *t = lin_leaf();
			t->lin.k = e->ival;
			return t;
		}
		case IR_ADD:
			return lin_combine(tree_of(e->a), tree_of(e->b), 1);
		case IR_SUB:
			return lin_combine(tree_of(e->a), tree_of(e->b), -1);
		case IR_NEG:
			return lin_scale(tree_of(e->a), -1);
		case IR_MUL:
			if (ir_is_const(e->b, &c))
				return lin_scale(tree_of(e->a), c);
			if (ir_is_const(e->a, &c))
				return lin_scale(tree_of(e->b), c);
			if (lin_distribute)
				return product(e, tree_of(e->a), tree_of(e->b));
			break;
		case IR_MIN:
		case IR_MAX:
			return node2(e->kind, tree_of(e->a), tree_of(e->b));
		case IR_DIV:
			if (ir_is_const(e->b, &c) && c > 0)
				return div_tree(tree_of(e->a), c);
			break;
		case IR_MOD:
			if (ir_is_const(e->b, &c) && c > 0)
				return mod_tree(tree_of(e->a), c);
			break;
		case IR_CAST:
			/* i64(8), as a called kernel's size argument reads (sema/calls.c),
			 * is 8; a cast from i64 changes nothing */
			if (ir_is_const(e->a, &c)) {
				Tree *t = lin_leaf();
				t->lin.k = c;
				return t;
			}
			if (lin_is_i64(e->a))
				return tree_of(e->a);
			break;
		default:
			break;
		}
	}
	Tree *t = lin_leaf();
	lin_add_term(&t->lin, e, 1);
	return t;
}

/* e as a tree, with a fresh budget: past 200 min/max nodes the rest of
 * e stays whole, as atoms */
Tree *
lin_tree(IrExpr *e)
{
	budget = 200;
	return tree_of(e);
}

/* a - b, with one budget for both, as one question */
Tree *
lin_tree_diff(IrExpr *a, IrExpr *b)
{
	budget = 200;
	return lin_combine(tree_of(a), tree_of(b), -1);
}

/* ---- back to expressions ------------------------------------------- */

IrExpr *
lin_expr(const Lin *l)
{
	IrExpr *e = NULL;
	for (int pass = 0; pass < 2; pass++)     /* positive terms first */
		for (int i = 0; i < l->n; i++) {
			int64_t c = l->t[i].c;
			if ((c > 0) != (pass == 0))
				continue;
			IrExpr *a = l->t[i].atom;
			int64_t m = c < 0 ? -c : c;
			IrExpr *x = m == 1 ? a : ir_mul(a, ir_i64c(m));
			if (!e)
				e = c > 0 ? x : ir_unop(IR_NEG, x);
			else
				e = c > 0 ? ir_add(e, x) : ir_sub(e, x);
		}
	if (!e)
		return ir_i64c(l->k);
	if (l->k > 0)
		e = ir_add(e, ir_i64c(l->k));
	else if (l->k < 0)
		e = ir_sub(e, ir_i64c(-l->k));
	return e;
}

static IrExpr *
raw_expr(Tree *t)
{
	if (!t->kind)
		return lin_expr(&t->lin);
	return ir_binop(t->kind, raw_expr(t->a), raw_expr(t->b));
}

static IrExpr *
tree_expr(Tree *t)
{
	if (!t->kind)
		return lin_expr(&t->lin);
	IrExpr *a = tree_expr(t->a), *b = tree_expr(t->b);
	/* fold when one side is provably the answer without any ranges */
	int o = lin_tired() ? 0 : lin_prove_order(t->a, t->b);
	if (o)
		return (o < 0) == (t->kind == IR_MIN) ? a : b;
	return ir_binop(t->kind, a, b);
}

IrExpr *
lin_normalize(IrExpr *e)
{
	if (!lin_is_i64(e))
		return e;
	lin_enter();
	if (lin_tired()) {
		lin_leave();
		return e;     /* too deep inside other questions: as it was */
	}
	bool was = lin_ovf;
	lin_ovf = false;
	IrExpr *r = tree_expr(lin_tree(e));
	if (lin_ovf)
		r = e;     /* past 64 bits: as it was */
	lin_ovf = was;
	lin_leave();
	if (e->loc.file && r != e && r->loc.file == 0 && r->kind != IR_INT && r->kind != IR_VAR)
		r->loc = e->loc;
	return r;
}

/* ---- extents ------------------------------------------------------- */

/* Whether a - b is a constant, matching min/max structure first (the
 * ends of a region often share it: [min(x, W - 8), min(x, W - 8) + 8]). */
static bool
const_diff(IrExpr *a, IrExpr *b, int64_t *d)
{
	if ((a->kind == IR_MIN || a->kind == IR_MAX) && a->kind == b->kind) {
		int64_t d1, d2;
		if (const_diff(a->a, b->a, &d1) && const_diff(a->b, b->b, &d2) && d1 == d2) {
			*d = d1;
			return true;
		}
	}
	if (!lin_is_i64(a) || !lin_is_i64(b))
		return false;
	Tree *t = lin_tree_diff(a, b);
	if (t->kind || t->lin.n)
		return false;
	*d = t->lin.k;
	return true;
}

IrExpr *
lin_extent(IrExpr *lo, IrExpr *hi)
{
	int64_t d;
	if (const_diff(hi, lo, &d))
		return ir_i64c(d + 1);
	return lin_normalize(ir_add(ir_sub(hi, lo), ir_i64c(1)));
}
