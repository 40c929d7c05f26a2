/* lin_interval.c: intervals of index expressions over a scope, and the
 * facts that conditions give.
 *
 * lin_interval bounds an expression over the ranges of a scope (interval
 * arithmetic, each end an expression in what does not vary: sizes and
 * fixed variables), its ends normalised (lin.c) and folded with the
 * prover (lin_prove.c); the facts taken from a select's condition
 * (`h >= 1 && h <= H ? data[h - 1] : 0`) refine them.  lin_varies and
 * lin_is_static say what an expression depends on.
 */
#include "lower/lin.h"

/* ---- facts from conditions ----------------------------------------- */

static Fact *
fact(Fact *f, IrExpr *a, IrExpr *b, int64_t minus)   /* a - b - minus >= 0 */
{
	if (!lin_is_i64(a) || !lin_is_i64(b))
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

/* ---- what an expression depends on --------------------------------- */

typedef struct { VarRange *r; bool found; } UsesCtx;

static IrExpr *
uses_fn(IrExpr *e, void *ctx)
{
	UsesCtx *u = ctx;
	VarRange *vr = e->kind == IR_VAR ? lin_find_range(u->r, e->var, NULL) : NULL;
	if (vr && vr->ranging)
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

typedef struct { VarRange *r; bool ok; } StaticCtx;

static IrExpr *
static_fn(IrExpr *e, void *ctx)
{
	StaticCtx *s = ctx;
	if (e->kind == IR_VAR && !lin_is_size(lin_find_range(s->r, e->var, NULL)))
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

/* ---- intervals ----------------------------------------------------- */

static bool
shares_atom(const Lin *a, const Lin *b)
{
	for (int i = 0; i < a->n; i++)
		for (int j = 0; j < b->n; j++)
			if (lin_same(a->t[i].atom, b->t[j].atom))
				return true;
	return false;
}

/* e as an i64 bound: narrower integers are widened (an immediate stays a
 * plain immediate); NULL for floats and bools. */
static IrExpr *
as_i64(IrExpr *e)
{
	if (lin_is_i64(e))
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
	return lin_is_i64(d) && !uses_ranged(d, r) && lin_prove_le(ir_i64c(0), d, r);
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
		if (lin_is_i64(f) && !uses_ranged(f, r) && lin_prove_le(zero, f, r)) {
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
	if (lin_is_i64(e) || !wraps)
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
		VarRange *vr = lin_find_range(r, e->var, NULL);
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
	if (!lin_is_i64(e)) {
		*lo = *hi = NULL;
		return false;
	}
	lin_enter();
	if (lin_tired()) {
		lin_leave();
		*lo = *hi = NULL;   /* too deep inside other questions: no bounds */
		return false;
	}
	bool ovf_was = lin_ovf;
	lin_ovf = false;
	interval_raw(e, r, &l, &h);
	l = l ? lin_normalize(l) : NULL;
	h = h ? lin_normalize(h) : NULL;
	if (f) {
		Tree *te = lin_tree(e);
		for (; f && !te->kind; f = f->next) {
			Tree *tg = lin_tree(f->ge0);
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
	if (lin_ovf)
		l = h = NULL;     /* past 64 bits: no bounds */
	lin_ovf = ovf_was;
	lin_leave();
	*lo = l;
	*hi = h;
	return l && h;
}

/* ---- constant ranges --------------------------------------------------- */

bool
lin_const_range(IrExpr *e, LinConstRange *sub, void *ctx, int64_t *lo, int64_t *hi)
{
	int64_t al, ah, bl, bh, k;
	switch (e->kind) {
	case IR_ADD: case IR_SUB: case IR_MIN: case IR_MAX:
		if (!sub(ctx, e->a, &al, &ah) || !sub(ctx, e->b, &bl, &bh))
			return false;
		if (e->kind == IR_MIN || e->kind == IR_MAX) {
			bool mn = e->kind == IR_MIN;
			*lo = mn ? (al < bl ? al : bl) : (al > bl ? al : bl);
			*hi = mn ? (ah < bh ? ah : bh) : (ah > bh ? ah : bh);
			return true;
		}
		if (e->kind == IR_ADD)
			return !__builtin_add_overflow(al, bl, lo) && !__builtin_add_overflow(ah, bh, hi);
		return !__builtin_sub_overflow(al, bh, lo) && !__builtin_sub_overflow(ah, bl, hi);
	case IR_MUL: {
		if (!sub(ctx, e->a, &al, &ah) || !sub(ctx, e->b, &bl, &bh))
			return false;
		int64_t p[4];
		if (__builtin_mul_overflow(al, bl, &p[0]) || __builtin_mul_overflow(al, bh, &p[1]) ||
		    __builtin_mul_overflow(ah, bl, &p[2]) || __builtin_mul_overflow(ah, bh, &p[3]))
			return false;
		*lo = *hi = p[0];
		for (int i = 1; i < 4; i++) {
			*lo = p[i] < *lo ? p[i] : *lo;
			*hi = p[i] > *hi ? p[i] : *hi;
		}
		return true;
	}
	case IR_DIV:     /* rounds toward -infinity */
		if (!ir_is_const(e->b, &k) || k <= 0 || !sub(ctx, e->a, &al, &ah))
			return false;
		*lo = al / k - (al % k < 0);
		*hi = ah / k - (ah % k < 0);
		return true;
	case IR_MOD:
		if (!ir_is_const(e->b, &k) || k <= 0)
			return false;
		*lo = 0, *hi = k - 1;
		return true;
	default:
		return false;
	}
}
