/* simplify.c: the expression simplifier.
 *
 * Bottom-up: children first, then the node's rules.  Integer sums are put
 * in a canonical linear form (terms with their coefficients in order of
 * first appearance, then the constant: (x*8 + y)*2 -> x*16 + y*2), which
 * is exact under wrapping arithmetic, so it applies to every integer type.
 * The rules that reason about ranges -- min/max of ordered operands,
 * comparisons, / and % by positive constants -- use bounds.c and assume
 * that index arithmetic does not overflow, so they apply only to i32 and
 * i64 (as Halide assumes for its signed types).  Floats only fold.
 * simplify_stmt applies it to statements, with loop ranges in scope.
 */
#include <string.h>

#include "lower/ir.h"

static IrExpr *simp(IrExpr *e, BoundsScope *scope);

static bool
is_index_type(IrType t)
{
	return t.lanes == 1 && (t.code == TY_I64 || t.code == TY_I32);
}

static IrExpr *
konst(IrType t, int64_t v)
{
	return ir_int(ir_with_lanes(t, 1), v);
}

/* ---- linear forms ---------------------------------------------------------- */

typedef struct {
	IrExpr *t;
	uint64_t c;
} Term;

typedef struct {
	IrType type;
	Term *terms;
	int n, cap;
	uint64_t k;           /* the constant */
} Lin;

static void
lin_add_term(Lin *L, IrExpr *t, uint64_t c)
{
	for (int i = 0; i < L->n; i++)
		if (ir_expr_equal(L->terms[i].t, t)) {
			L->terms[i].c += c;
			return;
		}
	Term *n = ARENA_PUSH(ir_arena, L->terms, L->n, L->cap);
	n->t = t;
	n->c = c;
}

/* Adds coef * e (e already simplified) to L. */
static void
lin_collect(Lin *L, IrExpr *e, uint64_t coef)
{
	int64_t c;
	switch (e->kind) {
	case IR_INT:
		L->k += coef * (uint64_t)e->ival;
		return;
	case IR_ADD:
		lin_collect(L, e->a, coef);
		lin_collect(L, e->b, coef);
		return;
	case IR_SUB:
		lin_collect(L, e->a, coef);
		lin_collect(L, e->b, 0 - coef);
		return;
	case IR_NEG:
		lin_collect(L, e->a, 0 - coef);
		return;
	case IR_MUL:
		if (ir_is_const(e->b, &c)) {
			lin_collect(L, e->a, coef * (uint64_t)c);
			return;
		}
		if (ir_is_const(e->a, &c)) {
			lin_collect(L, e->b, coef * (uint64_t)c);
			return;
		}
		break;
	default:
		break;
	}
	lin_add_term(L, e, coef);
}

static Lin
lin_of(IrExpr *e)
{
	Lin L = {.type = e->type};
	lin_collect(&L, e, 1);
	return L;
}

/* A coefficient as the type holds it (sign-extended for signed types). */
static int64_t
coef(Lin *L, uint64_t c)
{
	return ir_wrap(L->type.code, (int64_t)c);
}

static bool
is_negative(Lin *L, int64_t c)
{
	return c < 0 && !ir_is_uint(L->type);
}

static IrExpr *
scaled(Lin *L, IrExpr *t, int64_t c)
{
	return c == 1 ? t : ir_mul(t, konst(L->type, c));
}

/* The canonical expression: positive terms, negative ones, the constant. */
static IrExpr *
lin_build(Lin *L)
{
	IrExpr *e = NULL;
	for (int i = 0; i < L->n; i++) {
		int64_t c = coef(L, L->terms[i].c);
		if (c != 0 && !is_negative(L, c))
			e = e ? ir_add(e, scaled(L, L->terms[i].t, c)) : scaled(L, L->terms[i].t, c);
	}
	int64_t k = coef(L, L->k);
	if (!e && k != 0 && !is_negative(L, k)) {
		e = konst(L->type, k);
		k = 0;
	}
	for (int i = 0; i < L->n; i++) {
		int64_t c = coef(L, L->terms[i].c);
		if (!is_negative(L, c))
			continue;
		IrExpr *t = scaled(L, L->terms[i].t, (int64_t)(0 - (uint64_t)c));
		e = e ? ir_sub(e, t) : ir_unop(IR_NEG, t);
	}
	if (!e)
		return konst(L->type, k);
	if (k != 0)
		e = is_negative(L, k) ? ir_sub(e, konst(L->type, (int64_t)(0 - (uint64_t)k)))
		    : ir_add(e, konst(L->type, k));
	return e;
}

static bool
lin_applies(IrExpr *e)
{
	return e->type.lanes == 1 && ir_is_int(e->type);
}

/* The canonical form of b - a (both simplified scalars of one type). */
static IrExpr *
difference(IrExpr *b, IrExpr *a)
{
	Lin L = lin_of(b);
	lin_collect(&L, a, (uint64_t)-1);
	return lin_build(&L);
}

/* ---- proving ------------------------------------------------------------- */

/* e with m*x - m*c*(x/c) rewritten as m*(x % c), which bounds.c knows is
 * in [0, c - 1] (Halide's x - x/c*c rule); NULL when e has no such pair.
 * Loop partitioning's bounds (io <= (M - 6)/6) need it to prove that a
 * tile is whole (M - io*6 >= 6).  Index types only. */
static IrExpr *
mod_form(IrExpr *e)
{
	if (!is_index_type(e->type))
		return NULL;
	Lin L = lin_of(e);
	bool changed = false;
	for (int i = 0; i < L.n; i++) {
		IrExpr *t = L.terms[i].t;
		int64_t c, a = coef(&L, L.terms[i].c);
		if (t->kind != IR_DIV || !ir_is_const(t->b, &c) || c <= 0 || a >= 0 ||
		    a % c != 0)
			continue;
		int64_t m = -a / c;
		Lin X = lin_of(t->a);
		bool all = X.n > 0;
		for (int j = 0; j < X.n && all; j++) {
			bool found = false;
			for (int k = 0; k < L.n; k++)
				if (k != i && ir_expr_equal(L.terms[k].t, X.terms[j].t) &&
				    coef(&L, L.terms[k].c) == m * coef(&X, X.terms[j].c))
					found = true;
			all = found;
		}
		if (!all)
			continue;
		/* a constant near the 64-bit limit (an entry check's bound,
		 * sizecheck.c) must not wrap: then no rewrite */
		int64_t mk, k2;
		if (__builtin_mul_overflow(m, (int64_t)X.k, &mk) ||
		    __builtin_sub_overflow((int64_t)L.k, mk, &k2))
			return NULL;
		for (int j = 0; j < X.n; j++)
			lin_add_term(&L, X.terms[j].t, (uint64_t)-m * X.terms[j].c);
		L.k = (uint64_t)k2;
		L.terms[i].c = 0;
		lin_add_term(&L, ir_mod(t->a, t->b), (uint64_t)m);
		changed = true;
	}
	return changed ? lin_build(&L) : NULL;
}

/* The sign of b - a over the scope: sets lo/hi to constant bounds of the
 * difference where known.  Only for index types (no overflow). */
static void
diff_range(IrExpr *b, IrExpr *a, BoundsScope *scope, bool *has_lo, int64_t *lo,
    bool *has_hi, int64_t *hi)
{
	*has_lo = *has_hi = false;
	if (!is_index_type(a->type))
		return;
	IrExpr *d = difference(b, a);
	if (ir_is_const(d, lo)) {
		*hi = *lo;
		*has_lo = *has_hi = true;
		return;
	}
	Interval iv = bounds_of_expr(d, scope);
	*has_lo = ir_is_const(iv.min, lo);
	*has_hi = ir_is_const(iv.max, hi);
	/* a loop bound such as (M - 6)/6 leaves x - c*(x/c) in the ends */
	IrExpr *m;
	if (!*has_lo && iv.min && (m = mod_form(iv.min)))
		*has_lo = ir_is_const(bounds_of_expr(m, scope).min, lo);
	if (!*has_hi && iv.max && (m = mod_form(iv.max)))
		*has_hi = ir_is_const(bounds_of_expr(m, scope).max, hi);
}

/* Whether a <= b for every value in scope. */
static bool
proved_le(IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	int64_t ca, cb;
	/* floor division by a positive constant is monotonic: x/c <= y/c if x <= y */
	if (a->kind == IR_DIV && b->kind == IR_DIV && ir_is_const(a->b, &ca) &&
	    ir_is_const(b->b, &cb) && ca == cb && ca > 0 && proved_le(a->a, b->a, scope))
		return true;
	bool hl, hh;
	int64_t lo, hi;
	diff_range(b, a, scope, &hl, &lo, &hh, &hi);
	return hl && lo >= 0;
}

/* ---- rules ---------------------------------------------------------------- */

static IrExpr *simp_minmax(IrExprKind k, IrExpr *a, IrExpr *b, BoundsScope *scope);

/* min(x + t, y + t) -> min(x, y) + t: the terms both sides share (same
 * atom, same coefficient) leave the min/max, so an inner loop's variable
 * stays a plain addend -- a ramp once vectorized, a constant once unrolled
 * -- and a buffer's clamped origin cancels against itself.  NULL when the
 * sides share nothing. */
static IrExpr *
factor_common(IrExprKind k, IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	Lin la = lin_of(a), lb = lin_of(b), common = {.type = a->type};
	for (int i = 0; i < la.n; i++)
		for (int j = 0; j < lb.n; j++)
			if (la.terms[i].c != 0 && la.terms[i].c == lb.terms[j].c &&
			    ir_expr_equal(la.terms[i].t, lb.terms[j].t)) {
				lin_add_term(&common, la.terms[i].t, la.terms[i].c);
				la.terms[i].c = lb.terms[j].c = 0;
				break;
			}
	if (common.n == 0)
		return NULL;
	Lin r = lin_of(simp_minmax(k, lin_build(&la), lin_build(&lb), scope));
	for (int i = 0; i < common.n; i++)
		lin_add_term(&r, common.terms[i].t, common.terms[i].c);
	return lin_build(&r);
}

static IrExpr *
simp_minmax(IrExprKind k, IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	if (ir_expr_equal(a, b))
		return a;
	if (a->kind == IR_INT && b->kind != IR_INT) {
		IrExpr *t = a;
		a = b;
		b = t;
	}
	if (!is_index_type(a->type))
		return ir_binop(k, a, b);
	IrExpr *f = factor_common(k, a, b, scope);
	if (f)
		return f;
	/* min(min(x, c1), c2) -> min(x, min(c1, c2)) */
	if (a->kind == k && a->b->kind == IR_INT && b->kind == IR_INT)
		return simp_minmax(k, a->a, fold_binop(k, a->b, b), scope);
	if (proved_le(a, b, scope))
		return k == IR_MIN ? a : b;
	if (proved_le(b, a, scope))
		return k == IR_MIN ? b : a;
	return ir_binop(k, a, b);
}

static IrExpr *
simp_cmp(IrExprKind k, IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	if (ir_expr_equal(a, b) && !ir_is_float(a->type))
		return ir_bool_const(k == IR_EQ || k == IR_LE || k == IR_GE);
	int known = bounds_known(scope, k, a, b);
	if (known >= 0)
		return ir_bool_const(known);
	bool hl, hh;
	int64_t lo, hi;
	diff_range(b, a, scope, &hl, &lo, &hh, &hi);   /* d = b - a */
	int r = -1;
	switch (k) {
	case IR_LT: r = hl && lo > 0 ? 1 : hh && hi <= 0 ? 0 : -1; break;
	case IR_LE: r = hl && lo >= 0 ? 1 : hh && hi < 0 ? 0 : -1; break;
	case IR_GT: r = hh && hi < 0 ? 1 : hl && lo >= 0 ? 0 : -1; break;
	case IR_GE: r = hh && hi <= 0 ? 1 : hl && lo > 0 ? 0 : -1; break;
	case IR_EQ:
	case IR_NE:
		if (hl && hh && lo == 0 && hi == 0)
			r = 1;
		else if ((hl && lo > 0) || (hh && hi < 0))
			r = 0;
		if (r >= 0 && k == IR_NE)
			r = !r;
		break;
	default:
		break;
	}
	if (r >= 0)
		return ir_bool_const(r);
	return ir_binop(k, a, b);
}

/* (q*c + r) / c == q + r / c and (q*c + r) % c == r % c for c > 0.
 * Splits the linear form of a into the part divisible by c (as the
 * quotient, already divided) and the rest. */
static void
split_by(IrExpr *a, int64_t c, IrExpr **quot, IrExpr **rest)
{
	Lin L = lin_of(a), Q = {.type = a->type}, R = {.type = a->type};
	for (int i = 0; i < L.n; i++) {
		int64_t k = coef(&L, L.terms[i].c);
		if (k % c == 0)
			lin_add_term(&Q, L.terms[i].t, (uint64_t)(k / c));
		else
			lin_add_term(&R, L.terms[i].t, (uint64_t)k);
	}
	int64_t k = coef(&L, L.k);
	Q.k = (uint64_t)fold_floordiv(k, c);
	R.k = (uint64_t)fold_floormod(k, c);
	*quot = lin_build(&Q);
	*rest = lin_build(&R);
}

static IrExpr *
simp_div(IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	int64_t c, lo, hi;
	if (!is_index_type(a->type) || !ir_is_const(b, &c) || c <= 0)
		return ir_div(a, b);
	if (c == 1)
		return a;
	/* (x / c1) / c2 -> x / (c1*c2) */
	int64_t c1;
	if (a->kind == IR_DIV && ir_is_const(a->b, &c1) && c1 > 0 &&
	    c1 <= INT32_MAX && c <= INT32_MAX)
		return simp_div(a->a, konst(a->type, c1 * c), scope);
	/* (x / c1 + k) / c -> (x + k*c1) / (c1*c) (floor divisions by
	 * positive constants): the extents of a chain of splits, ((N + 1)/2 +
	 * 1)/2 ..., stay one division instead of growing with the chain */
	int64_t k, kc1, cc;
	if (a->kind == IR_ADD && a->a->kind == IR_DIV && ir_is_const(a->a->b, &c1) &&
	    c1 > 0 && ir_is_const(a->b, &k) && !__builtin_mul_overflow(k, c1, &kc1) &&
	    !__builtin_mul_overflow(c1, c, &cc) && cc <= INT64_MAX / 2 &&
	    kc1 >= -(INT64_C(1) << 40) && kc1 <= INT64_C(1) << 40)
		return simp_div(simp(ir_add(a->a->a, konst(a->type, kc1)), scope),
		    konst(a->type, cc), scope);
	IrExpr *q, *r;
	split_by(a, c, &q, &r);
	Interval iv = bounds_of_expr(r, scope);
	IrExpr *rq;
	if (ir_is_const(iv.min, &lo) && ir_is_const(iv.max, &hi) &&
	    fold_floordiv(lo, c) == fold_floordiv(hi, c))
		rq = konst(a->type, fold_floordiv(lo, c));
	else if (ir_is_const(q, &lo) && lo == 0)
		return ir_div(r, b);
	else
		rq = ir_div(r, b);
	return simp(ir_add(q, rq), scope);
}

static IrExpr *
simp_mod(IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	int64_t c, lo, hi, c1;
	if (!is_index_type(a->type) || !ir_is_const(b, &c) || c <= 0)
		return ir_mod(a, b);
	if (c == 1)
		return konst(a->type, 0);
	/* (x % c1) % c2 -> x % c2 when c2 divides c1 */
	if (a->kind == IR_MOD && ir_is_const(a->b, &c1) && c1 > 0 && c1 % c == 0)
		return simp_mod(a->a, b, scope);
	IrExpr *q, *r;
	split_by(a, c, &q, &r);
	Interval iv = bounds_of_expr(r, scope);
	if (ir_is_const(iv.min, &lo) && ir_is_const(iv.max, &hi) &&
	    fold_floordiv(lo, c) == fold_floordiv(hi, c)) {
		/* within one period: r % c == r - period*c */
		int64_t p = fold_floordiv(lo, c);
		return p == 0 ? r : simp(ir_sub(r, konst(a->type, p * c)), scope);
	}
	return ir_mod(r, b);
}

/* ramp and broadcast algebra: keeps vector index arithmetic in ramps */
static IrExpr *
simp_vector(IrExprKind k, IrExpr *a, IrExpr *b, BoundsScope *scope)
{
	int n = a->type.lanes;
	bool ra = a->kind == IR_RAMP, rb = b->kind == IR_RAMP;
	bool ba = a->kind == IR_BROADCAST, bb = b->kind == IR_BROADCAST;
	if (ba && bb)
		return ir_broadcast(simp(ir_binop(k, a->a, b->a), scope), n);
	if (!ir_is_int(a->type))
		return NULL;
	if ((k == IR_ADD || k == IR_SUB) && (ra || ba) && (rb || bb) && (ra || rb)) {
		IrExpr *base = simp(ir_binop(k, a->a, b->a), scope);
		IrExpr *zero = konst(a->type, 0);
		IrExpr *stride = simp(ir_binop(k, ra ? a->b : zero, rb ? b->b : zero), scope);
		return ir_ramp(base, stride, n);
	}
	/* min(ramp(x, s), ramp(y, s)) = ramp(min(x, y), s): lane i is min(x, y) + s*i */
	if ((k == IR_MIN || k == IR_MAX) && ra && rb && ir_expr_equal(a->b, b->b))
		return ir_ramp(simp(ir_binop(k, a->a, b->a), scope), a->b, n);
	if (k == IR_MUL && ((ra && bb) || (ba && rb))) {
		IrExpr *r = ra ? a : b, *c = ra ? b->a : a->a;
		return ir_ramp(simp(ir_mul(r->a, c), scope), simp(ir_mul(r->b, c), scope), n);
	}
	return NULL;
}

static IrExpr *
simp_logic(IrExpr *e, IrExpr *a, IrExpr *b)
{
	int64_t ca, cb;
	bool ka = ir_is_const(a, &ca), kb = ir_is_const(b, &cb);
	if (e->kind == IR_NOT) {
		if (a->kind == IR_NOT)
			return a->a;
		static const IrExprKind inv[] = {
			[IR_EQ] = IR_NE, [IR_NE] = IR_EQ, [IR_LT] = IR_GE,
			[IR_LE] = IR_GT, [IR_GT] = IR_LE, [IR_GE] = IR_LT,
		};
		if (a->kind >= IR_EQ && a->kind <= IR_GE && !ir_is_float(a->a->type))
			return ir_binop(inv[a->kind], a->a, a->b);
		return ir_unop(IR_NOT, a);
	}
	bool and = e->kind == IR_AND;
	if (ka)
		return (ca != 0) == and ? b : a;
	if (kb)
		return (cb != 0) == and ? a : b;
	if (ir_expr_equal(a, b))
		return a;
	return ir_binop(e->kind, a, b);
}

static IrExpr *
simp_let(IrExpr *e, BoundsScope *scope)
{
	IrExpr *v = simp(e->a, scope);
	if (v->kind == IR_INT || v->kind == IR_FLOAT || v->kind == IR_VAR)
		return simp(ir_substitute(e->b, e->var, v), scope);
	IrExpr *body = simp(e->b, bounds_push(scope, e->var, bounds_of_expr(v, scope)));
	if (!ir_uses_var(body, e->var))
		return body;
	if (v == e->a && body == e->b)
		return e;
	return ir_let(e->var, v, body);
}

static IrExpr *
simp_binary(IrExpr *e, BoundsScope *scope)
{
	IrExprKind k = e->kind;
	IrExpr *a = simp(e->a, scope), *b = simp(e->b, scope), *f;
	if ((f = fold_binop(k, a, b)))
		return f;
	if (k == IR_AND || k == IR_OR)
		return simp_logic(e, a, b);
	if (a->type.lanes > 1 && (f = simp_vector(k, a, b, scope)))
		return f;
	if (lin_applies(a) && (k == IR_ADD || k == IR_SUB ||
	    (k == IR_MUL && (a->kind == IR_INT || b->kind == IR_INT)))) {
		Lin L = lin_of(k == IR_MUL ? ir_mul(a, b) : a);
		if (k != IR_MUL)
			lin_collect(&L, b, k == IR_SUB ? (uint64_t)-1 : 1);
		return lin_build(&L);
	}
	if (a->type.lanes == 1) {
		switch (k) {
		case IR_MIN: case IR_MAX: return simp_minmax(k, a, b, scope);
		case IR_DIV: return simp_div(a, b, scope);
		case IR_MOD: return simp_mod(a, b, scope);
		case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
			return simp_cmp(k, a, b, scope);
		default: break;
		}
	}
	if (a == e->a && b == e->b)
		return e;
	return ir_binop(k, a, b);
}

static IrExpr *
simp(IrExpr *e, BoundsScope *scope)
{
	IrExpr *a, *b, *c, *f;
	switch (e->kind) {
	case IR_INT: case IR_FLOAT: case IR_VAR:
		return e;
	case IR_NOT:
		a = simp(e->a, scope);
		if ((f = fold_unop(IR_NOT, a)))
			return f;
		return simp_logic(e, a, NULL);
	case IR_NEG:
		a = simp(e->a, scope);
		if ((f = fold_unop(IR_NEG, a)))
			return f;
		if (lin_applies(a)) {
			Lin L = {.type = a->type};
			lin_collect(&L, a, (uint64_t)-1);
			return lin_build(&L);
		}
		return a == e->a ? e : ir_unop(IR_NEG, a);
	case IR_BITNOT:
		a = simp(e->a, scope);
		if ((f = fold_unop(IR_BITNOT, a)))
			return f;
		return a == e->a ? e : ir_unop(IR_BITNOT, a);
	case IR_SELECT:
		a = simp(e->a, scope);
		if (a->kind == IR_INT)
			return simp(a->ival ? e->b : e->c, scope);
		if (a->kind == IR_BROADCAST && a->a->kind == IR_INT)
			return simp(a->a->ival ? e->b : e->c, scope);
		/* each branch matters only where it is chosen */
		b = simp(e->b, bounds_refine(scope, a));
		c = simp(e->c, bounds_refine(scope, ir_unop(IR_NOT, a)));
		if (ir_expr_equal(b, c))
			return b;
		if (a == e->a && b == e->b && c == e->c)
			return e;
		return ir_select(a, b, c);
	case IR_CAST:
		a = simp(e->a, scope);
		if ((f = fold_cast(e->type, a)))
			return f;
		if (ir_type_eq(a->type, e->type))
			return a;
		if (a->kind == IR_BROADCAST)
			return ir_broadcast(simp(ir_cast(ir_with_lanes(e->type, 1), a->a),
			    scope), e->type.lanes);
		return a == e->a ? e : ir_cast(e->type, a);
	case IR_BROADCAST:
		a = simp(e->a, scope);
		return a == e->a ? e : ir_broadcast(a, e->type.lanes);
	case IR_RAMP:
		a = simp(e->a, scope);
		b = simp(e->b, scope);
		if (ir_is_const(b, NULL) && b->ival == 0)
			return ir_broadcast(a, e->type.lanes);
		return a == e->a && b == e->b ? e : ir_ramp(a, b, e->type.lanes);
	case IR_LET:
		return simp_let(e, scope);
	case IR_LOAD: {
		IrExpr **idx = arena_alloc(ir_arena, (e->load.nidx + 1) * sizeof *idx);
		bool changed = false;
		for (int i = 0; i < e->load.nidx; i++) {
			idx[i] = simp(e->load.idx[i], scope);
			changed |= idx[i] != e->load.idx[i];
		}
		IrExpr *p = e->a ? simp(e->a, scope) : NULL;
		if (p && (p->kind == IR_INT || (p->kind == IR_BROADCAST &&
		    p->a->kind == IR_INT && p->a->ival)) && (p->kind != IR_INT || p->ival))
			p = NULL;
		if (!changed && p == e->a)
			return e;
		IrExpr *r = ir_load(e->load.buf, idx, e->load.nidx, p, e->type.lanes);
		r->loc = e->loc;
		return r;
	}
	case IR_CALL: {
		IrExpr **args = arena_alloc(ir_arena, (e->call.nargs + 1) * sizeof *args);
		bool changed = false;
		for (int i = 0; i < e->call.nargs; i++) {
			args[i] = simp(e->call.args[i], scope);
			changed |= args[i] != e->call.args[i];
		}
		if (!changed)
			return e;
		IrExpr *r = e->call.ck == CALL_BUILTIN
		    ? ir_call_builtin(e->call.builtin, e->type, args, e->call.nargs)
		    : ir_call_intrinsic_like(e, args);
		r->loc = e->loc;
		return r;
	}
	default:
		return simp_binary(e, scope);
	}
}

IrExpr *
simplify_expr(IrExpr *e, BoundsScope *scope)
{
	if (!e)
		return NULL;
	if (!ir_arena)
		ir_arena = arena_new();
	IrExpr *r = simp(e, scope);
	if (r != e && r->loc.file == 0)
		r->loc = e->loc;
	return r;
}

bool
simplify_prove(IrExpr *e, BoundsScope *scope)
{
	IrExpr *r = simplify_expr(e, scope);
	int64_t v;
	if (r->kind == IR_BROADCAST)
		r = r->a;
	return ir_is_const(r, &v) && v != 0;
}

/* ---- statements ------------------------------------------------------------- */

typedef struct {
	IrMutator m;
	BoundsScope *scope;
} StmtSimp;

static IrExpr *
ss_expr(IrMutator *m, IrExpr *e)
{
	return simplify_expr(e, ((StmtSimp *)m)->scope);
}

static bool
keeps_extent_one(ForKind fk)
{
	return fk == FOR_GPU_BLOCK || fk == FOR_GPU_THREAD || fk == FOR_VTHREAD;
}

static IrStmt *
ss_for(IrMutator *m, IrStmt *s)
{
	StmtSimp *ss = (StmtSimp *)m;
	BoundsScope *outer = ss->scope;
	IrExpr *min = simplify_expr(s->loop.min, outer);
	IrExpr *ext = simplify_expr(s->loop.extent, outer);
	int64_t n;
	if (ir_is_const(ext, &n) && n <= 0)
		return NULL;
	IrStmt *body;
	if (ir_is_const(ext, &n) && n == 1 && !keeps_extent_one(s->loop.fk)) {
		body = ir_substitute_stmt(s->loop.body, s->loop.var, min);
		return ir_mutate_stmt(m, body);
	}
	IrExpr *max = simplify_expr(ir_sub(ir_add(min, ext), konst(min->type, 1)), outer);
	ss->scope = bounds_push(outer, s->loop.var, (Interval){min, max});
	body = ir_mutate_stmt(m, s->loop.body);
	ss->scope = outer;
	if (!body)
		return NULL;
	if (min == s->loop.min && ext == s->loop.extent && body == s->loop.body)
		return s;
	return ir_for_like(s, min, ext, body);
}

static IrStmt *
ss_if(IrMutator *m, IrStmt *s)
{
	StmtSimp *ss = (StmtSimp *)m;
	BoundsScope *outer = ss->scope;
	IrExpr *c = simplify_expr(s->ifs.cond, outer);
	int64_t v;
	if (ir_is_const(c, &v))
		return ir_mutate_stmt(m, v ? s->ifs.then_s : s->ifs.else_s);
	ss->scope = bounds_refine(outer, c);
	IrStmt *t = ir_mutate_stmt(m, s->ifs.then_s);
	ss->scope = bounds_refine(outer, ir_unop(IR_NOT, c));
	IrStmt *f = ir_mutate_stmt(m, s->ifs.else_s);
	ss->scope = outer;
	if (c == s->ifs.cond && t == s->ifs.then_s && f == s->ifs.else_s)
		return s;
	IrStmt *r;
	if (!t && !f)
		return NULL;
	if (!t)
		r = ir_if(simplify_expr(ir_unop(IR_NOT, c), outer), f, NULL);
	else
		r = ir_if(c, t, f);
	r->loc = s->loc;
	return r;
}

static IrStmt *
ss_let(IrMutator *m, IrStmt *s)
{
	StmtSimp *ss = (StmtSimp *)m;
	BoundsScope *outer = ss->scope;
	IrExpr *v = simplify_expr(s->let.value, outer);
	if (v->kind == IR_INT || v->kind == IR_FLOAT || v->kind == IR_VAR)
		return ir_mutate_stmt(m, ir_substitute_stmt(s->let.body, s->let.var, v));
	if (ir_is_int(v->type) && v->type.lanes == 1)
		ss->scope = bounds_push(outer, s->let.var, bounds_of_expr(v, outer));
	IrStmt *body = ir_mutate_stmt(m, s->let.body);
	ss->scope = outer;
	if (!body || !ir_stmt_uses_var(body, s->let.var))
		return body;
	if (v == s->let.value && body == s->let.body)
		return s;
	IrStmt *r = ir_let_stmt(s->let.var, v, body);
	r->loc = s->loc;
	return r;
}

static bool
is_const_bool(IrExpr *p, bool want)
{
	if (p && p->kind == IR_BROADCAST)
		p = p->a;
	return p && p->kind == IR_INT && (p->ival != 0) == want;
}

static IrStmt *
ss_store(IrMutator *m, IrStmt *s)
{
	IrStmt *r = ir_mutate_stmt_children(m, s);
	if (is_const_bool(r->store.pred, false))
		return NULL;
	if (is_const_bool(r->store.pred, true)) {
		r = ir_store(r->store.buf, r->store.idx, r->store.nidx,
		    r->store.value, NULL);
		r->loc = s->loc;
	}
	return r;
}

static IrStmt *
ss_assert(IrMutator *m, IrStmt *s)
{
	/* sizecheck.c's conditions are written so that each is computed in
	 * range once the ones before it hold: folding may not move a constant
	 * near INT64_MAX across them (INT64_MAX - (x - 1) is not
	 * INT64_MAX + 1 - x) */
	if (s->assrt.sizes)
		return s;
	IrStmt *r = ir_mutate_stmt_children(m, s);
	return is_const_bool(r->assrt.cond, true) ? NULL : r;
}

static const IrMutator stmt_table = {
	.expr = {
#define IR_EXPR(K, s) [IR_##K] = ss_expr,
#define IR_STMT(K, s)
#include "ir.def"
#undef IR_EXPR
#undef IR_STMT
	},
	.stmt = {
		[IS_FOR] = ss_for, [IS_IF] = ss_if, [IS_LET] = ss_let,
		[IS_STORE] = ss_store, [IS_ASSERT] = ss_assert,
	},
};

IrStmt *
simplify_stmt(IrStmt *s)
{
	if (!ir_arena)
		ir_arena = arena_new();
	StmtSimp ss = {stmt_table, NULL};
	return ir_mutate_stmt(&ss.m, s);
}
