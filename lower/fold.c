/* fold.c: constant folding of single IR operations, for every type.
 *
 * The simplifier and interval arithmetic fold through here, so that there
 * is one place that knows the semantics: integers wrap to their width
 * (computed in unsigned arithmetic, so the folder itself has no undefined
 * behaviour), / rounds toward negative infinity and % is never negative,
 * unsigned types divide and compare unsigned, floats fold in their own
 * precision.  What the target would not compute the same way (a shift by
 * the width or more, division by zero, float %, f16 rounding, a float-to-int
 * cast out of range) is not folded: the functions return NULL.
 */
#include <math.h>

#include "lower/ir.h"

int64_t
fold_floordiv(int64_t a, int64_t b)
{
	if (b == 0)
		return 0;
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);   /* INT64_MIN / -1 wraps */
	int64_t q = a / b, r = a % b;
	if (r < 0)   /* Euclidean: the remainder is never negative */
		q = b > 0 ? q - 1 : q + 1;
	return q;
}

int64_t
fold_floormod(int64_t a, int64_t b)
{
	if (b == 0 || b == -1)
		return 0;
	int64_t r = a % b;
	if (r < 0)
		r += b < 0 ? -b : b;
	return r;
}

static IrExpr *
fold_int(IrExprKind k, IrType t, int64_t x, int64_t y)
{
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y, r;
	bool uns = ir_is_uint(t) || ir_is_bool(t);
	int bits = ir_bits(t.code);
	switch (k) {
	case IR_ADD: r = ux + uy; break;
	case IR_SUB: r = ux - uy; break;
	case IR_MUL: r = ux * uy; break;
	case IR_DIV:
		if (y == 0)
			return NULL;
		r = uns ? ux / uy : (uint64_t)fold_floordiv(x, y);
		break;
	case IR_MOD:
		if (y == 0)
			return NULL;
		r = uns ? ux % uy : (uint64_t)fold_floormod(x, y);
		break;
	case IR_MIN: r = (uns ? ux < uy : x < y) ? ux : uy; break;
	case IR_MAX: r = (uns ? ux > uy : x > y) ? ux : uy; break;
	case IR_BITAND: case IR_AND: r = ux & uy; break;
	case IR_BITOR: case IR_OR: r = ux | uy; break;
	case IR_BITXOR: r = ux ^ uy; break;
	case IR_SHL:
		if (uy >= (uint64_t)bits)
			return NULL;
		r = ux << uy;
		break;
	case IR_SHR:
		if (uy >= (uint64_t)bits)
			return NULL;
		/* values are stored sign-extended, so a 64-bit shift is right */
		r = uns || x >= 0 ? ux >> uy : ~(~ux >> uy);
		break;
	case IR_EQ: return ir_bool_const(x == y);
	case IR_NE: return ir_bool_const(x != y);
	case IR_LT: return ir_bool_const(uns ? ux < uy : x < y);
	case IR_LE: return ir_bool_const(uns ? ux <= uy : x <= y);
	case IR_GT: return ir_bool_const(uns ? ux > uy : x > y);
	case IR_GE: return ir_bool_const(uns ? ux >= uy : x >= y);
	default: return NULL;
	}
	return ir_int(t, (int64_t)r);
}

/* Rounds v to the precision of t (NaN and infinities pass). */
static double
round_to(ScalarType t, double v)
{
	return t == TY_F32 ? (double)(float)v : v;
}

static IrExpr *
fold_float(IrExprKind k, IrType t, double x, double y)
{
	double r;
	if (t.code == TY_F16 || t.code == TY_BF16)
		return NULL;
	switch (k) {
	case IR_ADD: r = x + y; break;
	case IR_SUB: r = x - y; break;
	case IR_MUL: r = x * y; break;
	case IR_DIV: r = x / y; break;
	case IR_MIN:
	case IR_MAX:
		if (isnan(x) || isnan(y))
			return NULL;
		r = (k == IR_MIN) == (x < y) ? x : y;
		break;
	case IR_EQ: return ir_bool_const(x == y);
	case IR_NE: return ir_bool_const(x != y);
	case IR_LT: return ir_bool_const(x < y);
	case IR_LE: return ir_bool_const(x <= y);
	case IR_GT: return ir_bool_const(x > y);
	case IR_GE: return ir_bool_const(x >= y);
	default: return NULL;
	}
	return ir_float(t, round_to(t.code, r));
}

IrExpr *
fold_binop(IrExprKind k, IrExpr *a, IrExpr *b)
{
	if (!a || !b || !ir_type_eq(a->type, b->type))
		return NULL;
	if (a->kind == IR_INT && b->kind == IR_INT)
		return fold_int(k, a->type, a->ival, b->ival);
	if (a->kind == IR_FLOAT && b->kind == IR_FLOAT)
		return fold_float(k, a->type, a->fval, b->fval);
	return NULL;
}

IrExpr *
fold_unop(IrExprKind k, IrExpr *a)
{
	if (!a)
		return NULL;
	if (a->kind == IR_INT) {
		uint64_t u = (uint64_t)a->ival;
		switch (k) {
		case IR_NOT: return ir_bool_const(!a->ival);
		case IR_NEG: return ir_int(a->type, (int64_t)(0 - u));
		case IR_BITNOT: return ir_int(a->type, (int64_t)~u);
		default: return NULL;
		}
	}
	if (a->kind == IR_FLOAT && k == IR_NEG && a->type.code != TY_F16 &&
	    a->type.code != TY_BF16)
		return ir_float(a->type, -a->fval);
	return NULL;
}

IrExpr *
fold_cast(IrType t, IrExpr *a)
{
	if (!a || t.lanes != 1 || t.code == TY_F16 || a->type.code == TY_F16 ||
	    t.code == TY_BF16 || a->type.code == TY_BF16)
		return NULL;
	if (a->kind == IR_INT) {
		int64_t v = a->ival;
		if (ir_is_float(t)) {
			double d = a->type.code == TY_U64 ? (double)(uint64_t)v : (double)v;
			return ir_float(t, d);
		}
		return ir_int(t, ir_is_bool(t) ? v != 0 : v);
	}
	if (a->kind == IR_FLOAT) {
		double d = a->fval;
		if (ir_is_float(t))
			return ir_float(t, d);
		if (ir_is_bool(t))
			return isnan(d) ? NULL : ir_bool_const(d != 0);
		/* the target truncates toward zero; out of range is undefined */
		if (isnan(d))
			return NULL;
		d = trunc(d);
		int bits = ir_bits(t.code);
		double lo = ir_is_uint(t) ? 0 : -ldexp(1, bits - 1);
		double hi = ir_is_uint(t) ? ldexp(1, bits) : ldexp(1, bits - 1);
		if (d < lo || d >= hi)
			return NULL;
		if (t.code == TY_U64 && d >= ldexp(1, 63))
			return ir_int(t, (int64_t)(uint64_t)d);
		return ir_int(t, (int64_t)d);
	}
	return NULL;
}
