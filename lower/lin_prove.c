/* lin_prove.c: the prover on linear forms, and the scopes it works in.
 *
 * A scope (VarRange) lists variables with their bounds, innermost first:
 * loop variables ranging over [lo, hi], size parameters known only to be
 * >= 0 (or some floor, facts.c).  lin_prove_le shows a <= b for every
 * value of them: b - a in normal form (lin.c) is non-negative where,
 * replacing loop variables by the bound that minimises, innermost first,
 * only size parameters remain and the constant is >= 0; quotients and
 * remainders are bounded on the way, other atoms by their intervals
 * (lin_interval.c).
 */
#include "lower/lin.h"

/* How far lin_prove_le goes: bounds substituted one inside another (a
 * stage computed at a loop of a stage computed at a loop ... substitutes
 * one variable per level: a chain of 13 compute_ats failed at the old 12)
 * and steps in all; past either it gives up, and says so (lin_gave_up). */
enum { PROVE_DEPTH = 64, PROVE_STEPS = 20000 };
static int steps;
static bool exhausted, gave_up;

/* ---- scopes -------------------------------------------------------- */

VarRange *
lin_find_range(VarRange *r, Var *v, int *depth)
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
bool
lin_is_size(VarRange *vr)
{
	int64_t c;
	return vr && !vr->hi && vr->lo && ir_is_const(vr->lo, &c) && c >= 0;
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

/* Records that e >= lo holds (an entry-point check makes it so) when e is
 * a size parameter plus a constant: the parameter's range narrows. */
void
lin_assume_ge(VarRange *r, IrExpr *e, int64_t lo)
{
	if (!lin_is_i64(e))
		return;
	Tree *t = lin_tree(e);
	if (t->kind || t->lin.n != 1 || t->lin.t[0].c != 1 || t->lin.t[0].atom->kind != IR_VAR)
		return;
	VarRange *vr = lin_find_range(r, t->lin.t[0].atom->var, NULL);
	int64_t cur = 0;
	if (!vr || !vr->lo || !ir_is_const(vr->lo, &cur))
		return;
	if (lo - t->lin.k > cur)
		vr->lo = ir_i64c(lo - t->lin.k);
}

/* ---- the prover ---------------------------------------------------- */

static bool prove_nonneg(Tree *t, VarRange *r, int depth);

/* l with its term i replaced by `by` times coefficient `c`, all scaled
 * by `sc`: sc*(l - term) + c*by. */
static Tree *
replace_term(const Lin *l, int i, int64_t sc, IrExpr *by, int64_t c)
{
	Tree *rt = lin_leaf();
	rt->lin = lin_copy(l);
	lin_add_term(&rt->lin, l->t[i].atom, -l->t[i].c);
	return lin_combine(lin_scale(rt, sc), lin_scale(lin_tree(by), c), 1);
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
		if (a->kind != IR_DIV || !ir_is_const(a->b, &c) || c <= 0 || !lin_is_i64(x))
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
			VarRange *vr = lin_find_range(r, x->var, NULL);
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
		    !lin_is_i64(x))
			continue;
		if (a->kind == IR_MOD)
			return prove_nonneg(replace_term(l, i, 1, ir_i64c(m > 0 ? 0 : c - 1), m), r,
			    depth - 1);
		/* m < 0: R + m*(X/c) >= 0 for the rest R (an integer) holds
		 * where c*R + m*X + max(0, c + m) >= 0, since X/c <= R/|m|
		 * follows from X <= c*floor(R/|m|) + c - 1 and floor(R/|m|) >=
		 * (R - |m| + 1)/|m|: exact for m = -1 (10 - (14*ao + 1)/4 >= 0
		 * for ao <= 3 needs 43 - 14*ao >= 0, where c*R + m*X alone
		 * asked 40 - 14*ao >= 0) */
		if (m < 0)
			return prove_nonneg(lin_combine(replace_term(l, i, c, x, m),
			    lin_tree(ir_i64c(c + m > 0 ? c + m : 0)), 1), r, depth - 1);
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
		if ((a->kind != IR_DIV && a->kind != IR_MOD) || !lin_is_i64(x) || !lin_is_i64(d) ||
		    ir_is_const(d, &c) || !lin_prove_le(ir_i64c(1), d, r))
			continue;
		if (a->kind == IR_MOD)
			return prove_nonneg(replace_term(l, i, 1, m > 0 ? ir_i64c(0) :
			    ir_sub(d, ir_i64c(1)), m), r, depth - 1);
		Tree *tx = lin_tree(x);
		IrExpr *by;
		if (tx->kind) {
			by = NULL;
		} else {
			Lin y = { NULL, 0, 0, 0 }, rest = { NULL, 0, 0, tx->lin.k };
			for (int j = 0; j < tx->lin.n; j++) {
				IrExpr *t = tx->lin.t[j].atom;
				if (t->kind == IR_MUL && lin_same(t->b, d))
					lin_add_term(&y, t->a, tx->lin.t[j].c);
				else if (t->kind == IR_MUL && lin_same(t->a, d))
					lin_add_term(&y, t->b, tx->lin.t[j].c);
				else
					lin_add_term(&rest, t, tx->lin.t[j].c);
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
	lin_spend(1);
	if (depth <= 0 || ++steps > PROVE_STEPS || lin_tired()) {
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
			VarRange *vr = lin_find_range(r, a->var, &d);
			int64_t z, cz;
			/* a size: its least value, last (a floor that a loop which
			 * runs gives it, facts.c; the size may also sit inside
			 * other atoms, so it is not replaced before them) */
			if (vr && lin_is_size(vr) && pos && ir_is_const(vr->lo, &z)) {
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
				if (b && !lin_same(b, a))
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
	lin_add_term(&rest, l->t[best].atom, -c);
	Tree *rt = lin_leaf();
	rt->lin = rest;
	Tree *nt = lin_combine(rt, lin_scale(lin_tree(bound), c), 1);
	return prove_nonneg(nt, r, depth - 1);
}

bool
lin_prove_le(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!lin_is_i64(a) || !lin_is_i64(b))
		return false;
	bool was = lin_distribute, ovf_was = lin_ovf, exh_was = exhausted;
	int steps_was = steps;
	/* the answer is a bool: what the proof builds is dropped after it
	 * (a MobileNet's fused GPU indices made gigabytes of proof trees) */
	Arena *ar = ir_arena;
	ArenaMark mark = ar ? arena_mark(ar) : (ArenaMark){ 0 };
	lin_enter();
	lin_ovf = false;
	lin_distribute = true;
	Tree *d = lin_tree_diff(b, a);
	steps = 0;
	exhausted = false;
	bool ok = prove_nonneg(d, r, PROVE_DEPTH) && !lin_ovf;
	lin_distribute = was;
	lin_ovf = ovf_was;
	if (!ok && exhausted)
		gave_up = true;
	/* a proof asked inside another's step: the outer keeps its count */
	steps = steps_was;
	exhausted = exh_was;
	lin_leave();
	if (ar)
		arena_release(ar, mark);
	return ok;
}

bool
lin_gave_up(void)
{
	bool g = gave_up;
	gave_up = false;
	return g;
}

/* The operands of a nest of `kind` (min or max) nodes, into t[*n] (at
 * most `cap`); false past it. */
static bool
minmax_operands(IrExprKind kind, IrExpr *e, IrExpr **t, int *n, int cap)
{
	if (e->kind == kind)
		return minmax_operands(kind, e->a, t, n, cap) &&
		    minmax_operands(kind, e->b, t, n, cap);
	for (int i = 0; i < *n; i++)
		if (lin_same(t[i], e))
			return true;
	if (*n == cap)
		return false;
	t[(*n)++] = e;
	return true;
}

/* min (kind IR_MIN) or max of a and b, flattened: the operands of both
 * sides' nests, each once, less those another operand is proved to bound
 * (where r decides it).  Comparing two nests whole would not see that
 * max(A, B) and max(A, B) are the same: the region of a stage read by two
 * consumers through a chain of such stages doubled at each step (a
 * transformer block's rounded tiles, (X + 15)/16*16 - 1 beside
 * (X + 5)/6*6 - 1, made 2^k copies of the pair). */
static IrExpr *
minmax_merge(IrExprKind kind, IrExpr *a, IrExpr *b, VarRange *r)
{
	enum { CAP = 16 };
	IrExpr *t[CAP];
	int n = 0;
	bool flat = minmax_operands(kind, a, t, &n, CAP) && minmax_operands(kind, b, t, &n, CAP);
	if (!flat || (n == 2 && t[0] == a && t[1] == b)) {
		/* two plain operands (or too many to list): as before */
		if (lin_prove_le(a, b, r))
			return kind == IR_MIN ? a : b;
		if (lin_prove_le(b, a, r))
			return kind == IR_MIN ? b : a;
		return ir_binop(kind, a, b);
	}
	/* of two equal operands the first stays in a min, the last in a max;
	 * a constant goes only for a constant: it is what later passes read
	 * a constant bound from (min(X/32*32, M, 64), X = min(95, ..), sizes
	 * a shared tile at 64 rows where X/32*32 <= 64 is not seen) */
	bool gone[CAP] = { false };
	for (int k = 0; k < n; k++) {
		int i = kind == IR_MIN ? n - 1 - k : k;
		bool ci = t[i]->kind == IR_INT;
		for (int j = 0; j < n && !gone[i]; j++)
			if (j != i && !gone[j] && (!ci || t[j]->kind == IR_INT) &&
			    (kind == IR_MIN ? lin_prove_le(t[j], t[i], r) : lin_prove_le(t[i], t[j], r)))
				gone[i] = true;      /* t[j] decides over t[i] */
	}
	IrExpr *e = NULL;
	for (int i = 0; i < n; i++)
		if (!gone[i])
			e = e ? ir_binop(kind, e, t[i]) : t[i];
	return e;
}

IrExpr *
lin_min(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!a || !b)
		return NULL;
	return minmax_merge(IR_MIN, a, b, r);
}

IrExpr *
lin_max(IrExpr *a, IrExpr *b, VarRange *r)
{
	if (!a || !b)
		return NULL;
	return minmax_merge(IR_MAX, a, b, r);
}

int
lin_prove_order(Tree *a, Tree *b)
{
	/* a shallow question of its own: it does not count as giving up, nor
	 * spend the steps of a proof it is asked inside */
	bool was = exhausted;
	int was_steps = steps;
	int o = 0;
	Arena *ar = ir_arena;     /* an int: the trees are dropped after */
	ArenaMark mark = ar ? arena_mark(ar) : (ArenaMark){ 0 };
	Tree *d = lin_combine(b, a, -1);    /* b - a */
	if (prove_nonneg(d, NULL, 2))       /* a <= b */
		o = -1;
	else if (d = lin_combine(a, b, -1), prove_nonneg(d, NULL, 2))
		o = 1;
	exhausted = was;
	steps = was_steps;
	if (ar)
		arena_release(ar, mark);
	return o;
}
