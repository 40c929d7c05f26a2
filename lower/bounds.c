/* bounds.c: interval arithmetic over symbolic expressions.
 *
 * bounds_of_expr gives, for an expression and a scope of variables with
 * intervals, an inclusive [min, max] of the values it takes, as
 * expressions over the variables that are not in scope (NULL ends are
 * unbounded).  Bound inference, the in-bounds checker and the simplifier's
 * prover rest on it, so every rule here must be sound: when in doubt an
 * end is NULL.  Integer / rounds toward negative infinity, so dividing by
 * a positive constant is monotonic; % by a constant c is within [0, |c|-1].
 * Like Halide's Bounds.cpp, in C, without the caching.
 */
#include <stdlib.h>

#include "lower/ir.h"

/* ---- building ends: fold constants, never build on NULL ---------------- */

/* Whether a op b on integer constants leaves the type's range: an interval
 * end that wrapped around would be unsound, so such an end is dropped
 * (made infinite) rather than folded. */
static bool
overflows(IrExprKind k, IrExpr *a, IrExpr *b)
{
	int64_t x, y, r;
	if (k != IR_ADD && k != IR_SUB && k != IR_MUL)
		return false;
	if (!ir_is_const(a, &x) || !ir_is_const(b, &y) || !ir_is_int(a->type))
		return false;
	bool ovf = k == IR_ADD ? __builtin_add_overflow(x, y, &r)
	    : k == IR_SUB ? __builtin_sub_overflow(x, y, &r)
	    : __builtin_mul_overflow(x, y, &r);
	if (ovf)
		return true;
	if (ir_is_uint(a->type))
		return r < 0 || (ir_bits(a->type.code) < 64 && (r >> ir_bits(a->type.code)) != 0);
	return ir_wrap(a->type.code, r) != r;
}

static IrExpr *
mk(IrExprKind k, IrExpr *a, IrExpr *b)
{
	if (!a || !b || overflows(k, a, b))
		return NULL;
	IrExpr *f = fold_binop(k, a, b);
	if (f)
		return f;
	int64_t c;
	if ((k == IR_ADD || k == IR_SUB) && ir_is_const(b, &c) && c == 0)
		return a;
	if (k == IR_ADD && ir_is_const(a, &c) && c == 0)
		return b;
	if ((k == IR_MUL || k == IR_DIV) && ir_is_const(b, &c) && c == 1)
		return a;
	if ((k == IR_MIN || k == IR_MAX) && ir_expr_equal(a, b))
		return a;
	return ir_binop(k, a, b);
}

static IrExpr *
konst(IrType t, int64_t v)
{
	return ir_make_const(ir_with_lanes(t, 1), v);
}

Interval
interval_point(IrExpr *e)
{
	return (Interval){e, e};
}

static const Interval everything = {NULL, NULL};

/* min of two lower ends / max of two upper ends (NULL is infinite) */
Interval
interval_union(Interval a, Interval b)
{
	return (Interval){mk(IR_MIN, a.min, b.min), mk(IR_MAX, a.max, b.max)};
}

bool
interval_is_bounded(Interval a)
{
	return a.min && a.max;
}

/* A constant that e never exceeds, for whatever values its variables take:
 * min(6, M - io*6) <= 6, min(23, N - jo*16 + 7)/8 <= 2.  Index types. */
bool
bounds_const_max(IrExpr *e, int64_t *out)
{
	int64_t a, b, c;
	if (!e || e->type.lanes != 1 || !ir_is_int(e->type) || ir_is_uint(e->type))
		return false;
	switch (e->kind) {
	case IR_INT:
		*out = e->ival;
		return true;
	case IR_MIN: {
		bool ka = bounds_const_max(e->a, &a), kb = bounds_const_max(e->b, &b);
		if (ka && kb)
			*out = a < b ? a : b;
		else if (ka || kb)
			*out = ka ? a : b;
		return ka || kb;
	}
	case IR_MAX:
		if (!bounds_const_max(e->a, &a) || !bounds_const_max(e->b, &b))
			return false;
		*out = a > b ? a : b;
		return true;
	case IR_ADD:
		if (!ir_is_const(e->b, &c) || !bounds_const_max(e->a, &a) ||
		    (c > 0 && a > INT64_MAX - c) || (c < 0 && a < INT64_MIN - c))
			return false;
		*out = a + c;
		return true;
	case IR_DIV:   /* floor division by a positive constant is monotonic */
		if (!ir_is_const(e->b, &c) || c <= 0 || !bounds_const_max(e->a, &a))
			return false;
		*out = fold_floordiv(a, c);
		return true;
	case IR_MUL:   /* so is a product by one (a tile rounded up: X/32*32) */
		if (!ir_is_const(e->b, &c) || c <= 0 || !bounds_const_max(e->a, &a) ||
		    __builtin_mul_overflow(a, c, out))
			return false;
		return true;
	default:
		return false;
	}
}

static bool
is_point(Interval a)
{
	return a.min && a.max && ir_expr_equal(a.min, a.max);
}

Interval
bounds_of_type(IrType t)
{
	IrType s = ir_with_lanes(t, 1);
	if (ir_is_bool(t))
		return (Interval){ir_int(s, 0), ir_int(s, 1)};
	if (!ir_is_int(t))
		return everything;
	int bits = ir_bits(t.code);
	if (ir_is_uint(t))
		return (Interval){ir_int(s, 0), bits == 64 ? NULL :
		    ir_int(s, (int64_t)((UINT64_C(1) << bits) - 1))};
	if (bits == 64)
		return everything;
	int64_t m = INT64_C(1) << (bits - 1);
	return (Interval){ir_int(s, -m), ir_int(s, m - 1)};
}

/* ---- scope ---------------------------------------------------------------- */

BoundsScope *
bounds_push(BoundsScope *s, Var *v, Interval iv)
{
	if (!ir_arena)
		ir_arena = arena_new();
	BoundsScope *n = arena_alloc(ir_arena, sizeof *n);
	n->var = v;
	n->iv = iv;
	n->next = s;
	return n;
}

const Interval *
bounds_lookup(BoundsScope *s, Var *v)
{
	for (; s; s = s->next)
		if (s->var == v)
			return &s->iv;
	return NULL;
}

/* ---- the rules ---------------------------------------------------------- */

static Interval bounds(IrExpr *e, BoundsScope *scope);

static Interval
mul_const(Interval a, IrExpr *c)
{
	int64_t v = 0;
	bool neg = c->kind == IR_INT ? c->ival < 0 && !ir_is_uint(c->type)
	    : c->fval < 0;
	if (ir_is_const(c, &v) && v == 0)
		return interval_point(c);
	if (neg)
		return (Interval){mk(IR_MUL, a.max, c), mk(IR_MUL, a.min, c)};
	return (Interval){mk(IR_MUL, a.min, c), mk(IR_MUL, a.max, c)};
}

static bool
const_ge(IrExpr *e, int64_t v)
{
	int64_t c;
	return ir_is_const(e, &c) && c >= v;
}

static bool
is_imm(IrExpr *e)
{
	return e && (e->kind == IR_INT || e->kind == IR_FLOAT);
}

static Interval
bounds_mul(Interval a, Interval b)
{
	if (is_point(b) && is_imm(b.min))
		return mul_const(a, b.min);
	if (is_point(a) && is_imm(a.min))
		return mul_const(b, a.min);
	if (const_ge(a.min, 0) && const_ge(b.min, 0))
		return (Interval){mk(IR_MUL, a.min, b.min), mk(IR_MUL, a.max, b.max)};
	if (!interval_is_bounded(a) || !interval_is_bounded(b))
		return everything;
	IrExpr *p[4] = {mk(IR_MUL, a.min, b.min), mk(IR_MUL, a.min, b.max),
	    mk(IR_MUL, a.max, b.min), mk(IR_MUL, a.max, b.max)};
	IrExpr *lo = p[0], *hi = p[0];
	for (int i = 1; i < 4; i++) {
		lo = mk(IR_MIN, lo, p[i]);
		hi = mk(IR_MAX, hi, p[i]);
	}
	return (Interval){lo, hi};
}

static Interval
bounds_div(IrExpr *e, Interval a, Interval b)
{
	int64_t c;
	if (ir_is_float(e->type)) {
		if (is_point(b) && b.min->kind == IR_FLOAT && b.min->fval > 0)
			return (Interval){mk(IR_DIV, a.min, b.min), mk(IR_DIV, a.max, b.min)};
		return everything;
	}
	if (is_point(b) && ir_is_const(b.min, &c) && c != 0) {
		if (c > 0 || ir_is_uint(e->type))
			return (Interval){mk(IR_DIV, a.min, b.min), mk(IR_DIV, a.max, b.min)};
		return (Interval){mk(IR_DIV, a.max, b.min), mk(IR_DIV, a.min, b.min)};
	}
	/* a divisor of known sign: the quotient lies between the four
	 * quotients of the ends */
	int64_t lo, hi;
	if (interval_is_bounded(a) && ir_is_const(b.min, &lo) &&
	    ir_is_const(b.max, &hi) && (lo > 0 || hi < 0)) {
		IrExpr *p[4] = {mk(IR_DIV, a.min, b.min), mk(IR_DIV, a.min, b.max),
		    mk(IR_DIV, a.max, b.min), mk(IR_DIV, a.max, b.max)};
		IrExpr *l = p[0], *h = p[0];
		for (int i = 1; i < 4; i++) {
			l = mk(IR_MIN, l, p[i]);
			h = mk(IR_MAX, h, p[i]);
		}
		return (Interval){l, h};
	}
	if (const_ge(a.min, 0) && const_ge(b.min, 1))
		return (Interval){konst(e->type, 0), a.max};
	return everything;
}

static Interval
bounds_mod(IrExpr *e, Interval a, Interval b)
{
	int64_t c, lo, hi;
	if (!ir_is_int(e->type))
		return everything;
	if (is_point(b) && ir_is_const(b.min, &c) && c != 0) {
		uint64_t m = ir_is_uint(e->type) ? (uint64_t)c
		    : c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
		/* when a stays within one period, a % m is a shifted a */
		if (!ir_is_uint(e->type) && ir_is_const(a.min, &lo) &&
		    ir_is_const(a.max, &hi) && lo <= hi &&
		    fold_floordiv(lo, (int64_t)m) == fold_floordiv(hi, (int64_t)m))
			return (Interval){konst(e->type, fold_floormod(lo, (int64_t)m)),
			    konst(e->type, fold_floormod(hi, (int64_t)m))};
		if (const_ge(a.min, 0) && a.max && ir_is_const(a.max, &hi) &&
		    (uint64_t)hi < m)
			return a;
		return (Interval){konst(e->type, 0), konst(e->type, (int64_t)(m - 1))};
	}
	if (ir_is_const(b.min, &lo) && ir_is_const(b.max, &hi) && !ir_is_uint(e->type)) {
		uint64_t ml = lo < 0 ? 0 - (uint64_t)lo : (uint64_t)lo;
		uint64_t mh = hi < 0 ? 0 - (uint64_t)hi : (uint64_t)hi;
		uint64_t m = ml > mh ? ml : mh;
		if (m == 0)
			return interval_point(konst(e->type, 0));
		return (Interval){konst(e->type, 0), konst(e->type, (int64_t)(m - 1))};
	}
	if (const_ge(b.min, 1) && b.max)
		return (Interval){konst(e->type, 0), mk(IR_SUB, b.max, konst(e->type, 1))};
	return (Interval){konst(e->type, 0), NULL};
}

static Interval
bounds_minmax(IrExprKind k, Interval a, Interval b)
{
	if (k == IR_MIN)
		return (Interval){mk(IR_MIN, a.min, b.min),
		    !a.max ? b.max : !b.max ? a.max : mk(IR_MIN, a.max, b.max)};
	return (Interval){!a.min ? b.min : !b.min ? a.min : mk(IR_MAX, a.min, b.min),
	    mk(IR_MAX, a.max, b.max)};
}

static Interval
bounds_bool(IrExpr *e, BoundsScope *scope)
{
	Interval a = bounds(e->a, scope);
	Interval b = e->b ? bounds(e->b, scope) : interval_point(NULL);
	if (is_point(a) && (!e->b || is_point(b))) {
		IrExpr *f = e->b ? fold_binop(e->kind, a.min, b.min)
		    : fold_unop(e->kind, a.min);
		if (f)
			return interval_point(f);
	}
	return bounds_of_type(ir_bool);
}

/* Whether every value of type `from` is a value of type `to`. */
static bool
widens(IrType from, IrType to)
{
	int fb = ir_bits(from.code), tb = ir_bits(to.code);
	if (ir_is_float(to))
		return true;   /* monotonic, if rounded */
	if (ir_is_bool(from))
		return ir_is_int(to);
	if (!ir_is_int(from) || !ir_is_int(to))
		return false;
	if (ir_is_uint(from) == ir_is_uint(to))
		return tb >= fb;
	return ir_is_uint(from) && tb > fb;
}

static IrExpr *
cast_end(IrType t, IrExpr *e)
{
	if (!e)
		return NULL;
	IrExpr *f = fold_cast(t, e);
	return f ? f : ir_cast(t, e);
}

static Interval
bounds_cast(IrExpr *e, BoundsScope *scope)
{
	IrType to = ir_with_lanes(e->type, 1), from = ir_with_lanes(e->a->type, 1);
	Interval a = bounds(e->a, scope);
	if (ir_is_bool(to))
		return is_point(a) ? interval_point(cast_end(to, a.min))
		    : bounds_of_type(to);
	if (widens(from, to) || (ir_is_float(from) && ir_is_float(to)) ||
	    (ir_is_float(from) && ir_is_int(to) && ir_bits(to.code) == 64))
		return (Interval){cast_end(to, a.min), cast_end(to, a.max)};
	/* narrowing: the ends survive only when both are known to fit */
	Interval t = bounds_of_type(to);
	IrExpr *lo = fold_cast(from, t.min), *hi = fold_cast(from, t.max);
	IrExpr *ok1 = lo ? fold_binop(IR_LE, lo, a.min) : NULL;
	IrExpr *ok2 = hi ? fold_binop(IR_LE, a.max, hi) : NULL;
	if (ok1 && ok2 && ok1->ival && ok2->ival)
		return (Interval){cast_end(to, a.min), cast_end(to, a.max)};
	return t;
}

static Interval
bounds_call(IrExpr *e, BoundsScope *scope)
{
	IrExpr **args = e->call.args;
	if (e->call.ck != CALL_BUILTIN)
		return bounds_of_type(e->type);
	switch (e->call.builtin) {
	case BI_MIN:
	case BI_MAX:
		return bounds_minmax(e->call.builtin == BI_MIN ? IR_MIN : IR_MAX,
		    bounds(args[0], scope), bounds(args[1], scope));
	case BI_CLAMP:
		return bounds_minmax(IR_MAX, bounds_minmax(IR_MIN,
		    bounds(args[0], scope), bounds(args[2], scope)),
		    bounds(args[1], scope));
	case BI_ABS: {
		Interval a = bounds(args[0], scope);
		if (ir_is_uint(e->type) || const_ge(a.min, 0))
			return a;
		IrExpr *zero = konst(e->type, 0);
		if (!interval_is_bounded(a) || !ir_is_int(e->type))
			return (Interval){ir_is_int(e->type) ? NULL : zero, NULL};
		/* |INT_MIN| wraps, so the lower end stays open for ints */
		return (Interval){NULL, mk(IR_MAX, mk(IR_SUB, zero, a.min), a.max)};
	}
	default:
		return bounds_of_type(e->type);
	}
}

static int budget;   /* nodes left to visit in this query */

static Interval
bounds(IrExpr *e, BoundsScope *scope)
{
	Interval a, b;
	int64_t c;
	if (--budget < 0)
		return everything;   /* sound, and keeps huge queries cheap */
	switch (e->kind) {
	case IR_INT: case IR_FLOAT:
		return interval_point(e);
	case IR_VAR:
		for (BoundsScope *s = scope; s; s = s->next)
			if (s->var == e->var) {
				/* ends in terms of variables outside this one */
				a = s->iv.min ? bounds(s->iv.min, s->next) : everything;
				b = s->iv.max ? bounds(s->iv.max, s->next) : everything;
				return (Interval){a.min, b.max};
			}
		return interval_point(e);
	case IR_ADD:
		a = bounds(e->a, scope);
		b = bounds(e->b, scope);
		return (Interval){mk(IR_ADD, a.min, b.min), mk(IR_ADD, a.max, b.max)};
	case IR_SUB:
		a = bounds(e->a, scope);
		b = bounds(e->b, scope);
		return (Interval){mk(IR_SUB, a.min, b.max), mk(IR_SUB, a.max, b.min)};
	case IR_MUL:
		return bounds_mul(bounds(e->a, scope), bounds(e->b, scope));
	case IR_DIV:
		return bounds_div(e, bounds(e->a, scope), bounds(e->b, scope));
	case IR_MOD:
		return bounds_mod(e, bounds(e->a, scope), bounds(e->b, scope));
	case IR_MIN: case IR_MAX:
		return bounds_minmax(e->kind, bounds(e->a, scope), bounds(e->b, scope));
	case IR_NEG:
		if (ir_is_uint(e->type))
			return bounds_of_type(e->type);
		a = bounds(e->a, scope);
		return (Interval){a.max ? mk(IR_SUB, konst(e->type, 0), a.max) : NULL,
		    a.min ? mk(IR_SUB, konst(e->type, 0), a.min) : NULL};
	case IR_BITAND:
		if (ir_is_bool(e->type))
			return bounds_bool(e, scope);
		a = bounds(e->a, scope);
		b = bounds(e->b, scope);
		if (is_point(b) && const_ge(b.min, 0)) {
			if (const_ge(a.min, 0) && a.max)
				return (Interval){konst(e->type, 0), mk(IR_MIN, a.max, b.min)};
			return (Interval){konst(e->type, 0), b.min};
		}
		if (is_point(a) && const_ge(a.min, 0))
			return (Interval){konst(e->type, 0), a.min};
		return bounds_of_type(e->type);
	case IR_SHL: case IR_SHR:
		b = bounds(e->b, scope);
		if (is_point(b) && ir_is_const(b.min, &c) && c >= 0 &&
		    c < ir_bits(e->type.code) - 1 && !ir_is_uint(e->type)) {
			Interval p = interval_point(konst(e->type, INT64_C(1) << c));
			a = bounds(e->a, scope);
			return e->kind == IR_SHL ? bounds_mul(a, p) : bounds_div(e, a, p);
		}
		return bounds_of_type(e->type);
	case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
	case IR_AND: case IR_OR: case IR_NOT: case IR_BITOR: case IR_BITXOR:
		if (ir_is_bool(e->type))
			return bounds_bool(e, scope);
		return bounds_of_type(e->type);
	case IR_BITNOT:
		return bounds_of_type(e->type);
	case IR_SELECT:
		a = bounds(e->a, scope);
		if (is_point(a) && ir_is_const(a.min, &c))
			return bounds(c ? e->b : e->c, scope);
		return interval_union(bounds(e->b, bounds_refine(scope, e->a)),
		    bounds(e->c, bounds_refine(scope, ir_unop(IR_NOT, e->a))));
	case IR_CAST:
		return bounds_cast(e, scope);
	case IR_LOAD:
		return bounds_of_type(e->type);
	case IR_RAMP: {
		a = bounds(e->a, scope);
		b = bounds(e->b, scope);
		IrExpr *n = konst(e->type, e->type.lanes - 1);
		Interval last = bounds_mul(b, interval_point(n));
		last = (Interval){mk(IR_ADD, a.min, last.min), mk(IR_ADD, a.max, last.max)};
		if (const_ge(b.min, 0))
			return (Interval){a.min, last.max};
		return interval_union(a, last);
	}
	case IR_BROADCAST:
		return bounds(e->a, scope);
	case IR_CALL:
		return bounds_call(e, scope);
	case IR_LET:
		return bounds(e->b, bounds_push(scope, e->var, bounds(e->a, scope)));
	default:
		return everything;
	}
}

/* simplify.c's entry points call back into this file; a depth limit
 * keeps simplify -> bounds -> simplify from recursing without end. */
static int depth;

static IrExpr *
tidy(IrExpr *e)
{
	return e && depth < 2 ? simplify_expr(e, NULL) : e;
}

Interval
bounds_of_expr(IrExpr *e, BoundsScope *scope)
{
	if (!e)
		return everything;
	if (depth++ == 0)
		budget = 20000;
	Interval r = bounds(e, scope);
	r.min = tidy(r.min);
	r.max = tidy(r.max);
	depth--;
	return r;
}

/* ---- conditions ------------------------------------------------------------ */

static const IrExprKind negated_cmp[] = {
	[IR_EQ] = IR_NE, [IR_NE] = IR_EQ, [IR_LT] = IR_GE,
	[IR_LE] = IR_GT, [IR_GT] = IR_LE, [IR_GE] = IR_LT,
};

/* Calls fn for each scalar comparison that holds where cond does (negate:
 * where it does not): the conjuncts of cond, through ! and De Morgan. */
typedef void (*ComparisonFn)(void *ctx, IrExpr *cmp, IrExprKind k);

static void
each_comparison(IrExpr *cond, bool negate, ComparisonFn fn, void *ctx)
{
	if (!cond || cond->type.lanes != 1)
		return;
	IrExprKind k = cond->kind;
	if (k == IR_NOT) {
		each_comparison(cond->a, !negate, fn, ctx);
		return;
	}
	if ((k == IR_AND && !negate) || (k == IR_OR && negate)) {
		each_comparison(cond->a, negate, fn, ctx);
		each_comparison(cond->b, negate, fn, ctx);
		return;
	}
	if (k < IR_EQ || k > IR_GE)
		return;
	fn(ctx, cond, negate ? negated_cmp[k] : k);
}

/* Calls fn for each comparison among cond's conjuncts, normalised to
 * `l >= r` (ge) or `l <= r` (!ge) on scalar integers (l < r is l <= r - 1). */
typedef void (*ConstraintFn)(void *ctx, IrExpr *l, IrExpr *r, bool ge);
typedef struct { ConstraintFn fn; void *ctx; } Constraints;

static void
constraint_of(void *ctx, IrExpr *cmp, IrExprKind k)
{
	Constraints *c = ctx;
	IrExpr *l = cmp->a, *r = cmp->b;
	if (!ir_is_int(l->type))
		return;
	IrExpr *one = konst(l->type, 1);
	switch (k) {
	case IR_EQ:
		c->fn(c->ctx, l, r, true);
		c->fn(c->ctx, l, r, false);
		break;
	case IR_LT: c->fn(c->ctx, l, mk(IR_SUB, r, one), false); break;
	case IR_LE: c->fn(c->ctx, l, r, false); break;
	case IR_GT: c->fn(c->ctx, l, mk(IR_ADD, r, one), true); break;
	case IR_GE: c->fn(c->ctx, l, r, true); break;
	default: break;
	}
}

static void
each_constraint(IrExpr *cond, bool negate, ConstraintFn fn, void *ctx)
{
	Constraints c = { fn, ctx };
	each_comparison(cond, negate, constraint_of, &c);
}

typedef struct {
	BoundsScope *scope;
} Refine;

/* Whether e is small index arithmetic: what a narrowed interval may hold
 * without making every later lookup expensive. */
static bool
simple_bound(IrExpr *e, int *size)
{
	if (!e)
		return true;
	if (++*size > 16)
		return false;
	switch (e->kind) {
	case IR_INT: case IR_VAR:
		return true;
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD:
	case IR_MIN: case IR_MAX: case IR_NEG: case IR_CAST:
		return simple_bound(e->a, size) && simple_bound(e->b, size);
	default:
		return false;
	}
}

static void
refine_var(Refine *rf, Var *v, IrExpr *r, bool ge)
{
	int size = 0;
	const Interval *old = bounds_lookup(rf->scope, v);
	if (!old || !simple_bound(r, &size) || ir_uses_var(r, v))
		return;
	Interval iv = *old;
	if (ge)
		iv.min = iv.min ? mk(IR_MAX, iv.min, r) : r;
	else
		iv.max = iv.max ? mk(IR_MIN, iv.max, r) : r;
	rf->scope = bounds_push(rf->scope, v, iv);
}

/* l >= r narrows l if l is a variable, and r if r is one (r <= l). */
static void
refine_one(void *ctx, IrExpr *l, IrExpr *r, bool ge)
{
	if (l->kind == IR_VAR)
		refine_var(ctx, l->var, r, ge);
	if (r->kind == IR_VAR)
		refine_var(ctx, r->var, l, !ge);
}

/* The comparisons that hold where a condition does, as facts: what a
 * guard says about an expression that is not a variable (jo*64 + ji < N
 * around a select on the same test). */
static void
push_fact(void *ctx, IrExpr *cmp, IrExprKind k)
{
	Refine *rf = ctx;
	if (cmp->a->kind == IR_INT)
		return;
	BoundsScope *n = arena_alloc(ir_arena, sizeof *n);
	n->fact = k == cmp->kind ? cmp : ir_binop(k, cmp->a, cmp->b);
	n->next = rf->scope;
	rf->scope = n;
}

int
bounds_known(BoundsScope *s, IrExprKind k, IrExpr *a, IrExpr *b)
{
	for (; s; s = s->next) {
		IrExpr *f = s->fact;
		if (!f || (f->kind != k && f->kind != negated_cmp[k]) ||
		    !ir_expr_equal(f->a, a) || !ir_expr_equal(f->b, b))
			continue;
		return f->kind == k;
	}
	return -1;
}

BoundsScope *
bounds_refine(BoundsScope *scope, IrExpr *cond)
{
	Refine rf = {scope};
	each_constraint(cond, false, refine_one, &rf);
	each_comparison(cond, false, push_fact, &rf);
	return rf.scope;
}

/* For bounds_of_expr_under: when e is a constraint's side plus a constant
 * d, the constraint bounds e directly: l >= r gives e >= r + d. */
typedef struct {
	IrExpr *e;
	BoundsScope *scope;
	Interval iv;
} Under;

static void
narrow_by(Under *u, IrExpr *x, IrExpr *y, bool ge)
{
	if (!ir_type_eq(x->type, u->e->type))
		return;
	IrExpr *d = simplify_expr(ir_sub(u->e, x), NULL);
	if (d->kind != IR_INT)
		return;
	Interval c = bounds(mk(IR_ADD, y, d), u->scope);
	if (ge && c.min)
		u->iv.min = u->iv.min ? mk(IR_MAX, u->iv.min, c.min) : c.min;
	if (!ge && c.max)
		u->iv.max = u->iv.max ? mk(IR_MIN, u->iv.max, c.max) : c.max;
}

static void
narrow_one(void *ctx, IrExpr *l, IrExpr *r, bool ge)
{
	narrow_by(ctx, l, r, ge);
	narrow_by(ctx, r, l, !ge);
}

Interval
bounds_of_expr_under(IrExpr *e, IrExpr *cond, BoundsScope *scope)
{
	if (!cond)
		return bounds_of_expr(e, scope);
	if (depth++ == 0)
		budget = 20000;
	Under u = {e, bounds_refine(scope, cond), {NULL, NULL}};
	u.iv = bounds(e, u.scope);
	if (ir_is_int(e->type) && e->type.lanes == 1)
		each_constraint(cond, false, narrow_one, &u);
	u.iv.min = tidy(u.iv.min);
	u.iv.max = tidy(u.iv.max);
	depth--;
	return u.iv;
}

/* ---- loads and the conditions they are evaluated under ------------------- */

static IrExpr *
and_cond(IrExpr *cond, IrExpr *c)
{
	if (!cond)
		return c;
	if (cond->type.lanes != c->type.lanes) {
		if (cond->type.lanes == 1)
			cond = ir_broadcast(cond, c->type.lanes);
		else
			return cond;   /* a scalar condition under a vector one */
	}
	return ir_binop(IR_AND, cond, c);
}

void
bounds_for_each_load(IrExpr *e, IrExpr *cond, BoundsLoadFn fn, void *ctx)
{
	if (!e)
		return;
	switch (e->kind) {
	case IR_SELECT:
		bounds_for_each_load(e->a, cond, fn, ctx);
		bounds_for_each_load(e->b, and_cond(cond, e->a), fn, ctx);
		bounds_for_each_load(e->c, and_cond(cond, ir_unop(IR_NOT, e->a)), fn, ctx);
		return;
	case IR_LOAD:
		fn(ctx, e, cond);
		for (int i = 0; i < e->load.nidx; i++)
			bounds_for_each_load(e->load.idx[i], cond, fn, ctx);
		break;
	case IR_CALL:
		for (int i = 0; i < e->call.nargs; i++)
			bounds_for_each_load(e->call.args[i], cond, fn, ctx);
		break;
	default:
		break;
	}
	bounds_for_each_load(e->a, cond, fn, ctx);
	bounds_for_each_load(e->b, cond, fn, ctx);
	bounds_for_each_load(e->c, cond, fn, ctx);
}
