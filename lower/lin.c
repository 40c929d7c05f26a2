/* lin.c: linear forms over index expressions, and what lowering proves
 * with them.
 *
 * Bound inference and the legality checks ask questions like "is
 * min(io*8 + 7, M - 1) <= M - 1 for every M >= 0 and every io in its
 * loop?".  An index expression is normalised into a tree of min/max over
 * linear forms (sum of coefficient * atom + constant; an atom is a
 * variable or any non-linear subexpression); a linear form is shown
 * non-negative by replacing loop variables by their bounds, innermost
 * first, until only size parameters (>= 0) remain.  lin_interval is the
 * interval arithmetic on top, refined by facts taken from select
 * conditions (`h >= 1 && h <= H ? data[h - 1] : 0`).
 */
#include <string.h>

#include "lower/lower.h"

typedef struct { IrExpr *atom; int64_t c; } Term;
typedef struct { Term *t; int n, cap; int64_t k; } Lin;

/* min/max of linear forms */
typedef struct Tree {
	int kind;              /* 0: linear, IR_MIN or IR_MAX */
	Lin lin;
	struct Tree *a, *b;
} Tree;

static bool
is_i64(IrExpr *e)
{
	return e && e->type.code == TY_I64 && e->type.lanes == 1;
}

static bool
same(IrExpr *a, IrExpr *b)
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
			if (!same(a->load.idx[i], b->load.idx[i]))
				return false;
		break;
	case IR_CALL:
		if (a->call.builtin != b->call.builtin || a->call.nargs != b->call.nargs ||
		    a->call.name != b->call.name)
			return false;
		for (int i = 0; i < a->call.nargs; i++)
			if (!same(a->call.args[i], b->call.args[i]))
				return false;
		break;
	default:
		break;
	}
	return same(a->a, b->a) && same(a->b, b->b) && same(a->c, b->c);
}

/* Coefficients and constants past 64 bits (a size fixed with -D
 * N=4000000000 in N*N): the question is given up, not answered wrongly.
 * ovf is set by the checked operations below and read by the entry
 * points (lin_normalize gives its expression back unchanged,
 * lin_prove_le proves nothing, lin_interval bounds nothing). */
static bool ovf;

static int64_t
ck_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r)) {
		ovf = true;
		return 0;
	}
	return r;
}

static int64_t
ck_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r)) {
		ovf = true;
		return 0;
	}
	return r;
}

static void
add_term(Lin *l, IrExpr *atom, int64_t c)
{
	if (c == 0)
		return;
	for (int i = 0; i < l->n; i++)
		if (same(l->t[i].atom, atom)) {
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

static Lin
lin_copy(const Lin *l)
{
	Lin r = { NULL, 0, 0, l->k };
	for (int i = 0; i < l->n; i++)
		add_term(&r, l->t[i].atom, l->t[i].c);
	return r;
}

static void
lin_addto(Lin *to, const Lin *l, int64_t scale)
{
	to->k = ck_add(to->k, ck_mul(l->k, scale));
	for (int i = 0; i < l->n; i++)
		add_term(to, l->t[i].atom, ck_mul(l->t[i].c, scale));
}

/* ---- trees --------------------------------------------------------- */

static int budget;

static Tree *
leaf(void)
{
	return arena_alloc(ir_arena, sizeof(Tree));
}

static Tree *
node2(int kind, Tree *a, Tree *b)
{
	Tree *t = leaf();
	t->kind = kind;
	t->a = a;
	t->b = b;
	budget--;
	return t;
}

static Tree *
scale(Tree *t, int64_t c)
{
	if (!t->kind) {
		Tree *r = leaf();
		lin_addto(&r->lin, &t->lin, c);
		return r;
	}
	int k = c >= 0 ? t->kind : t->kind == IR_MIN ? IR_MAX : IR_MIN;
	return node2(k, scale(t->a, c), scale(t->b, c));
}

static Tree *tree_of(IrExpr *e);
static void fold_divmod(Lin *l);

static Tree *
combine(Tree *x, Tree *y, int64_t sy)
{
	if (x->kind)
		return node2(x->kind, combine(x->a, y, sy), combine(x->b, y, sy));
	if (y->kind) {
		int k = sy >= 0 ? y->kind : y->kind == IR_MIN ? IR_MAX : IR_MIN;
		return node2(k, combine(x, y->a, sy), combine(x, y->b, sy));
	}
	Tree *r = leaf();
	r->lin = lin_copy(&x->lin);
	lin_addto(&r->lin, &y->lin, sy);
	fold_divmod(&r->lin);
	return r;
}

static IrExpr *lin_expr(const Lin *l);
static IrExpr *tree_expr(Tree *t);

/* Floor division of a linear form by d > 0: whole multiples of d leave
 * the division ((16*a + N + 31)/16 = a + (N + 15)/16 + 1), so the same
 * quotient written two ways ((N - 1)/16 and (N + 15)/16 - 1) becomes the
 * same atom and a constant numerator folds. */
static Tree *
div_tree(Tree *t, int64_t d)
{
	Tree *r = leaf();
	if (t->kind) {
		add_term(&r->lin, ir_binop(IR_DIV, tree_expr(t), ir_i64c(d)), 1);
		return r;
	}
	Lin rest = { NULL, 0, 0, 0 };
	for (int i = 0; i < t->lin.n; i++) {
		int64_t c = t->lin.t[i].c;
		if (c % d == 0)
			add_term(&r->lin, t->lin.t[i].atom, c / d);
		else
			add_term(&rest, t->lin.t[i].atom, c);
	}
	int64_t q = fold_floordiv(t->lin.k, d);
	r->lin.k = q;
	rest.k = ck_add(t->lin.k, ck_mul(q, -d));
	if (rest.n == 0) {
		r->lin.k += fold_floordiv(rest.k, d);
		return r;
	}
	add_term(&r->lin, ir_binop(IR_DIV, lin_expr(&rest), ir_i64c(d)), 1);
	return r;
}

/* Floor modulo of a linear form by d > 0, with the numerator reduced as
 * div_tree reduces it, so that d*(X/d) + X%d meets as the same X. */
static Tree *
mod_tree(Tree *t, int64_t d)
{
	Tree *r = leaf();
	if (t->kind) {
		add_term(&r->lin, ir_binop(IR_MOD, tree_expr(t), ir_i64c(d)), 1);
		return r;
	}
	Lin rest = { NULL, 0, 0, fold_floormod(t->lin.k, d) };
	for (int i = 0; i < t->lin.n; i++)
		if (t->lin.t[i].c % d != 0)
			add_term(&rest, t->lin.t[i].atom, t->lin.t[i].c);
	if (rest.n == 0)
		r->lin.k = rest.k;
	else
		add_term(&r->lin, ir_binop(IR_MOD, lin_expr(&rest), ir_i64c(d)), 1);
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
			    l->t[j].c != kd || !same(q->a, m->a))
				continue;
			Tree *x = tree_of(m->a);
			if (x->kind)
				break;
			add_term(l, q, -kd);
			add_term(l, m, -k);
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
static bool distribute;

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
	Tree *r = leaf();
	if (ta->kind || tb->kind || ta->lin.n + tb->lin.n > 6 ||
	    __builtin_mul_overflow(ta->lin.k, tb->lin.k, &r->lin.k)) {
		r->lin.k = 0;
		add_term(&r->lin, e, 1);
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
				r = leaf();
				add_term(&r->lin, e, 1);
				return r;
			}
			IrExpr *x = i < 0 ? NULL : ta->lin.t[i].atom, *y = j < 0 ? NULL : tb->lin.t[j].atom;
			if (x && y && factor_key(x, y) > 0) {
				IrExpr *t = x;
				x = y;
				y = t;
			}
			add_term(&r->lin, !x ? y : !y ? x : ir_mul(x, y), c);
		}
	return r;
}

static Tree *
tree_of(IrExpr *e)
{
	int64_t c;
	if (budget > 0 && is_i64(e)) {
		switch (e->kind) {
		case IR_INT: {
			Tree *t = leaf();
			t->lin.k = e->ival;
			return t;
		}
		case IR_ADD:
			return combine(tree_of(e->a), tree_of(e->b), 1);
		case IR_SUB:
			return combine(tree_of(e->a), tree_of(e->b), -1);
		case IR_NEG:
			return scale(tree_of(e->a), -1);
		case IR_MUL:
			if (ir_is_const(e->b, &c))
				return scale(tree_of(e->a), c);
			if (ir_is_const(e->a, &c))
				return scale(tree_of(e->b), c);
			if (distribute)
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
		default:
			break;
		}
	}
	Tree *t = leaf();
	add_term(&t->lin, e, 1);
	return t;
}

static Tree *
tree(IrExpr *e)
{
	budget = 200;
	return tree_of(e);
}

/* ---- back to expressions ------------------------------------------- */

static IrExpr *
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

/* How far lin_prove_le goes: bounds substituted one inside another (a
 * stage computed at a loop of a stage computed at a loop ... substitutes
 * one variable per level: a chain of 13 compute_ats failed at the old 12)
 * and steps in all; past either it gives up, and says so (lin_gave_up). */
enum { PROVE_DEPTH = 64, PROVE_STEPS = 20000 };
static int steps;
static bool exhausted, gave_up;

static bool prove_nonneg(Tree *t, VarRange *r, int depth);

static IrExpr *
tree_expr(Tree *t)
{
	if (!t->kind)
		return lin_expr(&t->lin);
	IrExpr *a = tree_expr(t->a), *b = tree_expr(t->b);
	/* fold when one side is provably the answer without any ranges */
	/* a shallow question of its own: it does not count as giving up */
	bool was = exhausted;
	int was_steps = steps;
	IrExpr *r = NULL;
	Tree *d = combine(t->b, t->a, -1);    /* b - a */
	if (prove_nonneg(d, NULL, 2))         /* a <= b */
		r = t->kind == IR_MIN ? a : b;
	else if (d = combine(t->a, t->b, -1), prove_nonneg(d, NULL, 2))
		r = t->kind == IR_MIN ? b : a;
	exhausted = was;
	steps = was_steps;
	return r ? r : ir_binop(t->kind, a, b);
}

IrExpr *
lin_normalize(IrExpr *e)
{
	if (!is_i64(e))
		return e;
	bool was = ovf;
	ovf = false;
	IrExpr *r = tree_expr(tree(e));
	if (ovf)
		r = e;     /* past 64 bits: as it was */
	ovf = was;
	if (e->loc.file && r != e && r->loc.file == 0 && r->kind != IR_INT && r->kind != IR_VAR)
		r->loc = e->loc;
	return r;
}

/* ---- the prover ---------------------------------------------------- */

static VarRange *
find_range(VarRange *r, Var *v, int *depth)
{
	int d = 0;
	for (; r; r = r->next, d++)
		if (r->var == v) {
			if (depth)
				*depth = d;
			return r;
		}
	return NULL;
}

/* A size parameter: a variable known only to be >= 0. */
static bool
is_size(VarRange *vr)
{
	int64_t c;
	return vr && !vr->hi && vr->lo && ir_is_const(vr->lo, &c) && c >= 0;
}

static bool prove_nonneg(Tree *t, VarRange *r, int depth);

/* l with its term i replaced by `by` times coefficient `c`, all scaled
 * by `sc`: sc*(l - term) + c*by. */
static Tree *
replace_term(const Lin *l, int i, int64_t sc, IrExpr *by, int64_t c)
{
	Tree *rt = leaf();
	rt->lin = lin_copy(l);
	add_term(&rt->lin, l->t[i].atom, -l->t[i].c);
	budget = 200;
	return combine(scale(rt, sc), scale(tree_of(by), c), 1);
}

/* Floor division is monotone: -min(A, B)/c >= -B/c and max(A, B)/c >=
 * B/c, -x/c >= -hi/c for a variable x <= hi, and the quotient stays a
 * quotient, so (K + 15)/16 - 1 -
 * min(16 ko + 15, K - 1)/16 >= 0 holds through (K - 1)/16 = (K + 15)/16 - 1,
 * which bounding the quotient as a whole loses. */
static bool
prove_minmax_div(Lin *l, VarRange *r, int depth)
{
	for (int i = 0; i < l->n; i++) {
		IrExpr *a = l->t[i].atom, *x = a->a;
		int64_t m = l->t[i].c, c;
		if (a->kind != IR_DIV || !ir_is_const(a->b, &c) || c <= 0 || !is_i64(x))
			continue;
		if ((m < 0 && x->kind == IR_MIN) || (m > 0 && x->kind == IR_MAX)) {
			IrExpr *side[2] = { x->a, x->b };
			for (int s = 0; s < 2; s++)
				if (prove_nonneg(replace_term(l, i, 1, ir_binop(IR_DIV, side[s], a->b), m),
				    r, depth - 1))
					return true;
		}
		/* a variable fixed in the question but with a known range (the
		 * loop k around a stage computed at it, read at k/16): its
		 * quotient is bounded by the quotient of its bound */
		if (x->kind == IR_VAR) {
			VarRange *vr = find_range(r, x->var, NULL);
			IrExpr *b = vr ? (m > 0 ? vr->lo : vr->hi) : NULL;
			if (b && prove_nonneg(replace_term(l, i, 1, ir_binop(IR_DIV, b, a->b), m), r,
			    depth - 1))
				return true;
		}
	}
	return false;
}

/* Quotients and remainders by constants, when nothing else bounds them:
 * X%c lies in [0, c - 1]; floor division gives X - c < c*(X/c) <= X, and
 * X/c >= 0 where X >= 0 (H/2*2 - 1 <= H - 1; (io*16 + ii)/6*6 >= 0), and
 * X/c >= 1 where X >= c. */
static bool
prove_divmod(Lin *l, VarRange *r, int depth)
{
	for (int i = 0; i < l->n; i++) {
		IrExpr *a = l->t[i].atom, *x = a->a;
		int64_t m = l->t[i].c, c;
		if ((a->kind != IR_DIV && a->kind != IR_MOD) || !ir_is_const(a->b, &c) || c <= 0 ||
		    !is_i64(x))
			continue;
		if (a->kind == IR_MOD)
			return prove_nonneg(replace_term(l, i, 1, ir_i64c(m > 0 ? 0 : c - 1), m), r,
			    depth - 1);
		if (m < 0)      /* m*c*(X/c) >= m*X */
			return prove_nonneg(replace_term(l, i, c, x, m), r, depth - 1);
		/* m*c*(X/c) >= m*(X - c + 1) */
		if (prove_nonneg(replace_term(l, i, c, lin_normalize(ir_sub(x, ir_i64c(c - 1))), m), r,
		    depth - 1))
			return true;
		if (!lin_prove_le(ir_i64c(0), x, r))
			return false;
		/* X >= c: X/c >= 1 (a loop over (K + 255)/256 blocks where K >= 1) */
		if (lin_prove_le(ir_i64c(c), x, r) &&
		    prove_nonneg(replace_term(l, i, 1, ir_i64c(1), m), r, depth - 1))
			return true;
		return prove_nonneg(replace_term(l, i, 1, ir_i64c(0), m), r, depth - 1);
	}
	return false;
}

/* Quotients and remainders by a divisor D that is not a constant but is
 * at least 1 where the question is asked (a size inside a loop over it,
 * facts.c): X%D lies in [0, D - 1]; (c*Y*D + X)/D is c*Y + X/D (the
 * element i < M*K of a reshape is in row i/K <= (M*K - 1)/K = M - 1);
 * and X/D lies between min(X, 0) and max(X, -1). */
static bool
prove_symdiv(Lin *l, VarRange *r, int depth)
{
	for (int i = 0; i < l->n; i++) {
		IrExpr *a = l->t[i].atom, *x = a->a, *d = a->b;
		int64_t m = l->t[i].c, c;
		if ((a->kind != IR_DIV && a->kind != IR_MOD) || !is_i64(x) || !is_i64(d) ||
		    ir_is_const(d, &c) || !lin_prove_le(ir_i64c(1), d, r))
			continue;
		if (a->kind == IR_MOD)
			return prove_nonneg(replace_term(l, i, 1, m > 0 ? ir_i64c(0) :
			    ir_sub(d, ir_i64c(1)), m), r, depth - 1);
		budget = 200;
		Tree *tx = tree_of(x);
		IrExpr *by;
		if (tx->kind) {
			by = NULL;
		} else {
			Lin y = { NULL, 0, 0, 0 }, rest = { NULL, 0, 0, tx->lin.k };
			for (int j = 0; j < tx->lin.n; j++) {
				IrExpr *t = tx->lin.t[j].atom;
				if (t->kind == IR_MUL && same(t->b, d))
					add_term(&y, t->a, tx->lin.t[j].c);
				else if (t->kind == IR_MUL && same(t->a, d))
					add_term(&y, t->b, tx->lin.t[j].c);
				else
					add_term(&rest, t, tx->lin.t[j].c);
			}
			by = y.n ? ir_add(lin_expr(&y), ir_binop(IR_DIV, lin_expr(&rest), d)) : NULL;
		}
		if (!by)
			by = m > 0 ? ir_min(x, ir_i64c(0)) : ir_max(x, ir_i64c(-1));
		return prove_nonneg(replace_term(l, i, 1, by, m), r, depth - 1);
	}
	return false;
}

static bool
prove_nonneg(Tree *t, VarRange *r, int depth)
{
	if (t->kind == IR_MIN)
		return prove_nonneg(t->a, r, depth) && prove_nonneg(t->b, r, depth);
	if (t->kind == IR_MAX)
		return prove_nonneg(t->a, r, depth) || prove_nonneg(t->b, r, depth);
	Lin *l = &t->lin;
	if (l->n == 0)
		return l->k >= 0;
	if (depth <= 0 || ++steps > PROVE_STEPS) {
		exhausted = true;
		return false;
	}
	if (prove_minmax_div(l, r, depth))
		return true;
	/* replace the innermost bounded atom by the bound that minimises */
	int best = -1, bestd = 1 << 30;
	IrExpr *bound = NULL;
	bool only_sizes = true;
	int64_t floors = 0;     /* sum of c*floor over the sizes, saturated */
	for (int i = 0; i < l->n; i++) {
		IrExpr *a = l->t[i].atom;
		bool pos = l->t[i].c > 0;
		if (a->kind == IR_VAR) {
			int d;
			VarRange *vr = find_range(r, a->var, &d);
			int64_t z, cz;
			/* a size: its least value, last (a floor that a loop which
			 * runs gives it, facts.c; the size may also sit inside
			 * other atoms, so it is not replaced before them) */
			if (vr && is_size(vr) && pos && ir_is_const(vr->lo, &z)) {
				if (__builtin_mul_overflow(l->t[i].c, z, &cz) ||
				    __builtin_add_overflow(floors, cz, &floors))
					floors = INT64_MAX;
				continue;
			}
			only_sizes = false;
			IrExpr *b = vr ? (pos ? vr->lo : vr->hi) : NULL;
			if (b && d < bestd)
				best = i, bestd = d, bound = b;
		} else {
			only_sizes = false;
			IrExpr *lo, *hi;
			if (best < 0 && lin_interval(a, r, NULL, &lo, &hi)) {
				IrExpr *b = pos ? lo : hi;
				if (b && !same(b, a))
					best = i, bestd = -1, bound = b;
			}
		}
	}
	if (only_sizes)
		return l->k >= 0 || floors + l->k >= 0;   /* floors >= 0 > k: no overflow */
	if (best < 0)
		return prove_divmod(l, r, depth) || prove_symdiv(l, r, depth);
	Lin rest = lin_copy(l);
	int64_t c = l->t[best].c;
	add_term(&rest, l->t[best].atom, -c);
	Tree *rt = leaf();
	rt->lin = rest;
	budget = 200;
	Tree *nt = combine(rt, scale(tree_of(bound), c), 1);
	return prove_nonneg(nt, r, depth - 1);
}

bool
lin_prove_le(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!is_i64(a) || !is_i64(b))
		return false;
	bool was = distribute, ovf_was = ovf;
	ovf = false;
	distribute = true;
	budget = 200;
	Tree *d = combine(tree_of(b), tree_of(a), -1);
	steps = 0;
	exhausted = false;
	bool ok = prove_nonneg(d, r, PROVE_DEPTH) && !ovf;
	distribute = was;
	ovf = ovf_was;
	if (!ok && exhausted)
		gave_up = true;
	return ok;
}

bool
lin_gave_up(void)
{
	bool g = gave_up;
	gave_up = false;
	return g;
}

IrExpr *
lin_min(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!a || !b)
		return NULL;
	if (lin_prove_le(a, b, r))
		return a;
	if (lin_prove_le(b, a, r))
		return b;
	return ir_min(a, b);
}

IrExpr *
lin_max(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!a || !b)
		return NULL;
	if (lin_prove_le(a, b, r))
		return b;
	if (lin_prove_le(b, a, r))
		return a;
	return ir_max(a, b);
}

VarRange *
lin_push(VarRange *r, Var *v, IrExpr *lo, IrExpr *hi, bool ranging)
{
	VarRange *n = arena_alloc(ir_arena, sizeof *n);
	n->var = v;
	n->lo = lo;
	n->hi = hi;
	n->ranging = ranging;
	n->next = r;
	return n;
}

/* ---- facts from conditions ----------------------------------------- */

static Fact *
fact(Fact *f, IrExpr *a, IrExpr *b, int64_t minus)   /* a - b - minus >= 0 */
{
	if (!is_i64(a) || !is_i64(b))
		return f;
	Fact *n = arena_alloc(ir_arena, sizeof *n);
	n->ge0 = ir_sub(ir_sub(a, b), ir_i64c(minus));
	n->next = f;
	return n;
}

Fact *
lin_facts(IrExpr *c, bool truth, Fact *f)
{
	if (!c)
		return f;
	IrExprKind k = c->kind;
	if (k == IR_NOT)
		return lin_facts(c->a, !truth, f);
	if (k == (truth ? IR_AND : IR_OR))
		return lin_facts(c->b, truth, lin_facts(c->a, truth, f));
	int64_t z;
	if (truth && k == IR_SELECT && ir_is_const(c->c, &z) && z == 0)   /* a ? b : false */
		return lin_facts(c->b, true, lin_facts(c->a, true, f));
	if (!truth) {   /* negate the comparison */
		switch (k) {
		case IR_LT: k = IR_GE; break;
		case IR_LE: k = IR_GT; break;
		case IR_GT: k = IR_LE; break;
		case IR_GE: k = IR_LT; break;
		case IR_NE: k = IR_EQ; break;
		default: return f;
		}
	}
	switch (k) {
	case IR_LT: return fact(f, c->b, c->a, 1);
	case IR_LE: return fact(f, c->b, c->a, 0);
	case IR_GT: return fact(f, c->a, c->b, 1);
	case IR_GE: return fact(f, c->a, c->b, 0);
	case IR_EQ: return fact(fact(f, c->a, c->b, 0), c->b, c->a, 0);
	default: return f;
	}
}

/* ---- intervals ----------------------------------------------------- */

typedef struct { VarRange *r; bool found; } UsesCtx;

static IrExpr *
uses_fn(IrExpr *e, void *ctx)
{
	UsesCtx *u = ctx;
	if (e->kind == IR_VAR && find_range(u->r, e->var, NULL) && find_range(u->r, e->var, NULL)->ranging)
		u->found = true;
	return u->found ? e : NULL;
}

/* Whether e depends on a loop variable of r (sizes do not count). */
static bool
uses_ranged(IrExpr *e, VarRange *r)
{
	UsesCtx u = { r, false };
	stage_map(e, uses_fn, &u);
	return u.found;
}

bool
lin_varies(IrExpr *e, VarRange *r)
{
	return uses_ranged(e, r);
}

static bool
shares_atom(const Lin *a, const Lin *b)
{
	for (int i = 0; i < a->n; i++)
		for (int j = 0; j < b->n; j++)
			if (same(a->t[i].atom, b->t[j].atom))
				return true;
	return false;
}

/* e as an i64 bound: narrower integers are widened (an immediate stays a
 * plain immediate); NULL for floats and bools. */
static IrExpr *
as_i64(IrExpr *e)
{
	if (is_i64(e))
		return e;
	if (e->type.lanes != 1 || !ir_is_int(e->type) || e->type.code == TY_U64)
		return NULL;
	if (e->kind == IR_INT)
		return ir_i64c(e->ival);
	return ir_cast(ir_i64, e);
}

static IrExpr *
bin_or_null(IrExprKind k, IrExpr *a, IrExpr *b)
{
	return a && b ? ir_binop(k, a, b) : NULL;
}

/* A divisor that does not vary in the question and is never negative (a
 * size parameter, N*M): floor division by it is monotone. */
static bool
fixed_divisor(IrExpr *d, VarRange *r)
{
	return is_i64(d) && !uses_ranged(d, r) && lin_prove_le(ir_i64c(0), d, r);
}

static bool interval_op(IrExpr *e, VarRange *r, IrExpr **lo, IrExpr **hi);
static bool interval_raw(IrExpr *e, VarRange *r, IrExpr **lo, IrExpr **hi);

static IrExpr *
times(IrExpr *a, IrExpr *b)
{
	int64_t c;
	a = lin_normalize(a);
	b = lin_normalize(b);
	if ((ir_is_const(a, &c) && c == 0) || (ir_is_const(b, &c) && c == 0))
		return ir_i64c(0);
	return ir_mul(a, b);
}

/* a*b with neither a constant (a run-time stride times a loop variable,
 * SH*h): monotone where one factor is fixed in the question and never
 * negative, or where both never are. */
static bool
interval_product(IrExpr *e, VarRange *r, IrExpr **lo, IrExpr **hi)
{
	IrExpr *al, *ah, *bl, *bh;
	IrExpr *zero = ir_i64c(0);
	if (!interval_raw(e->a, r, &al, &ah) || !interval_raw(e->b, r, &bl, &bh))
		return false;
	for (int swap = 0; swap < 2; swap++) {
		IrExpr *f = swap ? e->b : e->a;          /* the fixed factor */
		IrExpr *vl = swap ? al : bl, *vh = swap ? ah : bh;
		if (is_i64(f) && !uses_ranged(f, r) && lin_prove_le(zero, f, r)) {
			*lo = times(vl, f);
			*hi = times(vh, f);
			return true;
		}
	}
	if (lin_prove_le(zero, al, r) && lin_prove_le(zero, bl, r)) {
		*lo = times(al, bl);
		*hi = times(ah, bh);
		return true;
	}
	return false;
}

/* The interval of e over r, each end NULL where e is unbounded on that
 * side (a loaded value: clamp(idx[i], 0, 7) is bounded on both, max(idx[i],
 * 0) below only); true when both ends are bounded.  The ends are i64
 * expressions whatever e's integer type, and hold the values e takes:
 * arithmetic in a narrower type that may wrap (u8: small[i] - 250) gives
 * the type's range, or nothing for 32 bits. */
static bool
interval_raw(IrExpr *e, VarRange *r, IrExpr **lo, IrExpr **hi)
{
	*lo = *hi = NULL;
	if (!uses_ranged(e, r)) {
		*lo = *hi = as_i64(e);
		return *lo != NULL;
	}
	if (e->type.lanes != 1 || !ir_is_int(e->type) || e->type.code == TY_U64)
		return false;
	interval_op(e, r, lo, hi);
	bool wraps = e->kind == IR_ADD || e->kind == IR_SUB || e->kind == IR_MUL ||
	    e->kind == IR_NEG || e->kind == IR_CAST;
	if (is_i64(e) || !wraps)
		return *lo && *hi;
	Interval t = bounds_of_type(e->type);
	IrExpr *tmin = ir_i64c(t.min->ival), *tmax = ir_i64c(t.max->ival);
	if (!*lo || !*hi || !lin_prove_le(tmin, *lo, r) || !lin_prove_le(*hi, tmax, r)) {
		bool small = ir_bits(e->type.code) <= 16;
		*lo = small ? tmin : NULL;
		*hi = small ? tmax : NULL;
	}
	return *lo && *hi;
}

static bool
interval_op(IrExpr *e, VarRange *r, IrExpr **lo, IrExpr **hi)
{
	IrExpr *al, *ah, *bl, *bh;
	int64_t c;
	switch (e->kind) {
	case IR_VAR: {
		VarRange *vr = find_range(r, e->var, NULL);
		*lo = vr->lo;
		*hi = vr->hi;
		break;
	}
	case IR_ADD:
		interval_raw(e->a, r, &al, &ah);
		interval_raw(e->b, r, &bl, &bh);
		*lo = bin_or_null(IR_ADD, al, bl);
		*hi = bin_or_null(IR_ADD, ah, bh);
		break;
	case IR_SUB:
		interval_raw(e->a, r, &al, &ah);
		interval_raw(e->b, r, &bl, &bh);
		*lo = bin_or_null(IR_SUB, al, bh);
		*hi = bin_or_null(IR_SUB, ah, bl);
		break;
	case IR_NEG:
		interval_raw(e->a, r, &al, &ah);
		*lo = ah ? ir_unop(IR_NEG, ah) : NULL;
		*hi = al ? ir_unop(IR_NEG, al) : NULL;
		break;
	case IR_MUL:
		if (ir_is_const(e->a, &c))
			interval_raw(e->b, r, &al, &ah);
		else if (ir_is_const(e->b, &c))
			interval_raw(e->a, r, &al, &ah);
		else
			return interval_product(e, r, lo, hi);
		if (c < 0) {
			IrExpr *t = al;
			al = ah;
			ah = t;
		}
		*lo = al ? ir_mul(al, ir_i64c(c)) : NULL;
		*hi = ah ? ir_mul(ah, ir_i64c(c)) : NULL;
		break;
	case IR_DIV: {
		IrExpr *d = NULL;
		if (ir_is_const(e->b, &c) && c > 0)
			d = ir_i64c(c);
		else if (fixed_divisor(e->b, r))
			d = e->b;
		if (!d)
			return false;
		interval_raw(e->a, r, &al, &ah);
		int64_t z;
		*lo = al && ir_is_const(al, &z) && z == 0 ? al : bin_or_null(IR_DIV, al, d);
		*hi = bin_or_null(IR_DIV, ah, d);
		break;
	}
	case IR_MOD:
		if (ir_is_const(e->b, &c) && c > 0) {
			*lo = ir_i64c(0);
			*hi = ir_i64c(c - 1);
			/* already inside [0, c): the numerator's own range */
			if (interval_raw(e->a, r, &al, &ah) && lin_prove_le(ir_i64c(0), al, r) &&
			    lin_prove_le(ah, *hi, r)) {
				*lo = al;
				*hi = ah;
			}
		} else if (fixed_divisor(e->b, r) && lin_prove_le(ir_i64c(1), e->b, r)) {
			/* x % 0 is 0: only a divisor known to be positive bounds it */
			*lo = ir_i64c(0);
			*hi = lin_normalize(ir_sub(e->b, ir_i64c(1)));
		} else {
			return false;
		}
		break;
	case IR_MIN:
	case IR_MAX:
		interval_raw(e->a, r, &al, &ah);
		interval_raw(e->b, r, &bl, &bh);
		if (e->kind == IR_MIN) {
			/* min(a, b) <= each bounded upper end */
			*lo = bin_or_null(IR_MIN, al, bl);
			*hi = ah && bh ? ir_min(ah, bh) : ah ? ah : bh;
		} else {
			*lo = al && bl ? ir_max(al, bl) : al ? al : bl;
			*hi = bin_or_null(IR_MAX, ah, bh);
		}
		break;
	case IR_SELECT:
		interval_raw(e->b, r, &al, &ah);
		interval_raw(e->c, r, &bl, &bh);
		*lo = al && bl ? lin_min(lin_normalize(al), lin_normalize(bl), r) : NULL;
		*hi = ah && bh ? lin_max(lin_normalize(ah), lin_normalize(bh), r) : NULL;
		break;
	case IR_CAST:    /* the value, where it fits the new type (checked above) */
		if (!ir_is_int(e->a->type))
			return false;
		return interval_raw(e->a, r, lo, hi);
	case IR_LOAD: {
		/* a loaded value: its type's range, when that is small enough to
		 * say something (x[u8_index[i]] with 256 elements of x) */
		if (ir_bits(e->type.code) > 16)
			return false;
		Interval t = bounds_of_type(e->type);
		*lo = ir_i64c(t.min->ival);
		*hi = ir_i64c(t.max->ival);
		break;
	}
	default:
		return false;
	}
	return *lo && *hi;
}

bool
lin_interval(IrExpr *e, VarRange *r, Fact *f, IrExpr **lo, IrExpr **hi)
{
	IrExpr *l, *h;
	if (!is_i64(e)) {
		*lo = *hi = NULL;
		return false;
	}
	bool ovf_was = ovf;
	ovf = false;
	interval_raw(e, r, &l, &h);
	l = l ? lin_normalize(l) : NULL;
	h = h ? lin_normalize(h) : NULL;
	if (f) {
		budget = 200;
		Tree *te = tree_of(e);
		for (; f && !te->kind; f = f->next) {
			budget = 200;
			Tree *tg = tree_of(f->ge0);
			if (tg->kind)
				continue;
			/* e = g + D >= D;  e = S - g <= S */
			Lin D = lin_copy(&te->lin), S = lin_copy(&te->lin);
			lin_addto(&D, &tg->lin, -1);
			lin_addto(&S, &tg->lin, 1);
			IrExpr *cl, *ch;
			/* useful where e's atoms cancel (h - 1 <= H - 1 under h <= H)
			 * or the fact's do (rx < 3 under a guard split of rx:
			 * w + rxo*8 + rxi = (w + 2) - (2 - rxo*8 - rxi)) */
			bool dl = !shares_atom(&D, &te->lin) || !shares_atom(&D, &tg->lin);
			bool sl = !shares_atom(&S, &te->lin) || !shares_atom(&S, &tg->lin);
			if (dl && (interval_raw(lin_expr(&D), r, &cl, &ch), cl))
				l = l ? lin_max(l, lin_normalize(cl), r) : lin_normalize(cl);
			if (sl && (interval_raw(lin_expr(&S), r, &cl, &ch), ch))
				h = h ? lin_min(h, lin_normalize(ch), r) : lin_normalize(ch);
		}
	}
	if (ovf)
		l = h = NULL;     /* past 64 bits: no bounds */
	ovf = ovf_was;
	*lo = l;
	*hi = h;
	return l && h;
}

typedef struct { VarRange *r; bool ok; } StaticCtx;

static IrExpr *
static_fn(IrExpr *e, void *ctx)
{
	StaticCtx *s = ctx;
	if (e->kind == IR_VAR && !is_size(find_range(s->r, e->var, NULL)))
		s->ok = false;
	return s->ok ? NULL : e;
}

bool
lin_is_static(IrExpr *e, VarRange *r)
{
	StaticCtx s = { r, true };
	stage_map(e, static_fn, &s);
	return s.ok;
}

/* Records that e >= lo holds (an entry-point check makes it so) when e is
 * a size parameter plus a constant: the parameter's range narrows. */
void
lin_assume_ge(VarRange *r, IrExpr *e, int64_t lo)
{
	if (!is_i64(e))
		return;
	Tree *t = tree(e);
	if (t->kind || t->lin.n != 1 || t->lin.t[0].c != 1 || t->lin.t[0].atom->kind != IR_VAR)
		return;
	VarRange *vr = find_range(r, t->lin.t[0].atom->var, NULL);
	int64_t cur = 0;
	if (!vr || !vr->lo || !ir_is_const(vr->lo, &cur))
		return;
	if (lo - t->lin.k > cur)
		vr->lo = ir_i64c(lo - t->lin.k);
}

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
	if (!is_i64(a) || !is_i64(b))
		return false;
	budget = 200;
	Tree *t = combine(tree_of(a), tree_of(b), -1);
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
