/* cexpr.c: IR expressions as C99 text for the C backend.
 *
 * Every C text this file makes holds, at run time, a value in the range
 * of its IR type (f16: a float that is exactly an f16 value), whatever C
 * type the usual promotions give it; operators that could overflow or
 * leave the range convert back explicitly (emit_c.c's top comment lists
 * the rules).  Texts carry their C precedence so only the parentheses C
 * needs, or GCC's -Wparentheses asks for, are written.  Vector
 * expressions are written for one lane: `lane` names the lane counter of
 * the loop emit_c.c wraps around a vector statement.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target/c/cemit.h"

/* C precedence levels (higher binds tighter). */
enum {
	P_COND = 3, P_LOR, P_LAND, P_OR, P_XOR, P_BAND, P_EQ, P_REL, P_SHIFT,
	P_ADD, P_MUL, P_UNARY = 15, P_PRIMARY = 16
};

typedef struct {
	char *s;
	int p;
	/* wrapping arithmetic on a small or data type: the value before it is
	 * converted back from uint32_t/uint64_t (an enclosing + - * of the
	 * same type can use it, since it converts back itself) */
	char *u;
	int up;
} CX;

#define P(...) arena_printf(E->a, __VA_ARGS__)

static CX ex(CEmit *E, IrExpr *e, const char *lane, bool hoist);

static CX
cx(char *s, int p)
{
	return (CX){s, p, NULL, 0};
}

/* x's text, in parentheses when its precedence is below min. */
static char *
at(CEmit *E, CX x, int min)
{
	return x.p < min ? P("(%s)", x.s) : x.s;
}

/* An operand of a unary operator or cast (no `- -x`). */
static char *
un(CEmit *E, CX x)
{
	return x.p < P_UNARY || x.s[0] == '-' ? P("(%s)", x.s) : x.s;
}

static bool
is_unsigned(ScalarType t)
{
	return t >= TY_U8 && t <= TY_U64;
}

static bool
is_float(ScalarType t)
{
	return t == TY_F16 || t == TY_BF16 || t == TY_F32 || t == TY_F64;
}

/* Narrower than int: C promotes them, so results are converted back. */
static bool
is_small(ScalarType t)
{
	return t == TY_I8 || t == TY_I16 || t == TY_U8 || t == TY_U16;
}

const char *
cexpr_vtype(ScalarType t)
{
	if (t == TY_BOOL)
		return "int";
	if (t == TY_F16 || t == TY_BF16)
		return "float";
	return target_c_type(t);
}

/* ---- variables ---------------------------------------------------------- */

static uint64_t
hash_ptr(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	return h ^ (h >> 33);
}

/* The C-side record of an IR variable.  Records are allocated one by one
 * and the table holds pointers, so a record stays where it is when the
 * table grows: callers keep a CVar * across calls that add variables (a
 * loop's counter while its body is emitted). */
CVar *
cexpr_var(CEmit *E, const Var *v)
{
	if (2 * (E->nvars + 1) > E->capvars) {
		int cap = E->capvars ? 2 * E->capvars : 128;
		CVar **t = arena_alloc(E->a, cap * sizeof *t);
		for (int i = 0; i < E->capvars; i++) {
			if (!E->vars[i])
				continue;
			uint64_t h = hash_ptr(E->vars[i]->var) & (cap - 1);
			while (t[h])
				h = (h + 1) & (cap - 1);
			t[h] = E->vars[i];
		}
		E->vars = t;
		E->capvars = cap;
	}
	uint64_t h = hash_ptr(v) & (E->capvars - 1);
	for (; E->vars[h]; h = (h + 1) & (E->capvars - 1))
		if (E->vars[h]->var == v)
			return E->vars[h];
	CVar *cv = arena_alloc(E->a, sizeof *cv);
	cv->var = v;
	cv->name = cname_get(E->names, v, v->name);
	E->vars[h] = cv;
	E->nvars++;
	return cv;
}

/* Whether e computes with data (loads, calls, scalar parameters) rather
 * than indices: i64 arithmetic on data wraps explicitly, index arithmetic
 * is written plainly (it cannot overflow for buffers that fit in memory). */
static bool is_data(CEmit *E, IrExpr *e);

bool
cexpr_is_data(CEmit *E, IrExpr *e)
{
	return is_data(E, e);
}

static bool
is_data(CEmit *E, IrExpr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case IR_INT: case IR_FLOAT:
		return false;
	case IR_VAR:
		return cexpr_var(E, e->var)->data;
	case IR_LOAD:
		return true;
	case IR_CALL:   /* data, unless the flavour says it is an index (--emit=cuda's ids) */
		return !(E->hooks && E->hooks->index_call && E->hooks->index_call(e));
	case IR_CAST:
		return !ir_is_int(e->a->type) || is_data(E, e->a);
	default:
		return is_data(E, e->a) || is_data(E, e->b) || is_data(E, e->c);
	}
}

/* Whether the C text of an i64 expression may have type int (a small
 * literal, or a choice between such): then an operator on two of them
 * would compute in int. */
static bool
int_typed(IrExpr *e)
{
	switch (e->kind) {
	case IR_INT:
		return e->ival > -2147483647 && e->ival <= 2147483647;
	case IR_SELECT:
		return int_typed(e->b) && int_typed(e->c);
	case IR_NEG: case IR_BITNOT:
		return int_typed(e->a);
	case IR_LET:
		return int_typed(e->b);
	default:
		return false;
	}
}

/* ---- literals ------------------------------------------------------------ */

static CX
neg_lit(CEmit *E, char *s, bool neg)
{
	return neg ? cx(P("-%s", s), P_UNARY) : cx(s, P_PRIMARY);
}

static CX
lit_int(CEmit *E, ScalarType t, int64_t v)
{
	uint64_t u = (uint64_t)v;
	switch (t) {
	case TY_BOOL:
		return cx(v ? "1" : "0", P_PRIMARY);
	case TY_U32:
		return cx(P("%uu", (unsigned)(uint32_t)u), P_PRIMARY);
	case TY_U64:
		return cx(P("UINT64_C(%llu)", (unsigned long long)u), P_PRIMARY);
	case TY_I64:
		if (v == INT64_MIN)
			return cx("INT64_MIN", P_PRIMARY);
		if (v < -2147483647 || v > 2147483647)
			return neg_lit(E, P("INT64_C(%lld)", (long long)(v < 0 ? -v : v)), v < 0);
		break;
	case TY_I32:
		if (v == INT32_MIN)
			return cx("INT32_MIN", P_PRIMARY);
		break;
	default:
		break;
	}
	return neg_lit(E, P("%lld", (long long)(v < 0 ? -v : v)), v < 0);
}

/* The f16 value nearest x (ties to even), as the compiler sees it. */
static double
f16_value(double x)
{
	if (isnan(x) || isinf(x))
		return x;
	double ax = fabs(x), r;
	if (ax >= 65520.0)
		r = INFINITY;
	else if (ax < 0x1p-14)
		r = rint(ax * 0x1p24) * 0x1p-24;
	else {
		int ex;
		frexp(ax, &ex);                    /* ax in [2^(ex-1), 2^ex) */
		double ulp = ldexp(1.0, ex - 11);
		r = rint(ax / ulp) * ulp;
	}
	return x < 0 ? -r : r;
}

static CX
lit_float(CEmit *E, ScalarType t, double v)
{
	bool f64 = t == TY_F64;
	if (t == TY_F16)
		v = f16_value(v);
	if (t == TY_BF16)
		v = ir_bf16_value(v);
	if (isnan(v))
		return cx("NAN", P_PRIMARY);
	if (isinf(v))
		return neg_lit(E, "INFINITY", v < 0);
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, fabs(v));
		if (f64 ? strtod(buf, NULL) == fabs(v)
		    : strtof(buf, NULL) == (float)fabs(v))
			break;
	}
	const char *dot = strpbrk(buf, ".e") ? "" : ".0";
	return neg_lit(E, P("%s%s%s", buf, dot, f64 ? "" : "f"), signbit(v));
}

/* ---- operators ----------------------------------------------------------- */

/* a OP b for arithmetic operators, by C precedence. */
static CX
binop(CEmit *E, const char *op, int p, CX a, CX b)
{
	char *bs = b.p <= p || b.s[0] == '-' ? P("(%s)", b.s) : b.s;
	return cx(P("%s %s %s", at(E, a, p), op, bs), p);
}

/* a OP b where GCC wants the operands parenthesized unless simple. */
static CX
binop_strict(CEmit *E, const char *op, int p, CX a, CX b, int min)
{
	return cx(P("%s %s %s", at(E, a, min), op, at(E, b, min)), p);
}

static CX
call1(CEmit *E, const char *fn, CX a)
{
	return cx(P("%s(%s)", fn, a.s), P_PRIMARY);
}

static CX
call2(CEmit *E, const char *fn, CX a, CX b)
{
	return cx(P("%s(%s, %s)", fn, a.s, b.s), P_PRIMARY);
}

static CX
cast_to(CEmit *E, const char *type, CX a)
{
	return cx(P("(%s)%s", type, un(E, a)), P_UNARY);
}

static CX
f16_round(CEmit *E, CX a)
{
	chelp_use(E, H_F16_ROUND);
	return call1(E, "txc_f16_round", a);
}

static CX
bf16_round(CEmit *E, CX a)
{
	chelp_use(E, H_BF16_ROUND);
	return call1(E, "txc_bf16_round", a);
}

/* r, computed in float, rounded to t when t is a 16-bit float type. */
static CX
round_to(CEmit *E, ScalarType t, CX r)
{
	return t == TY_F16 ? f16_round(E, r) : t == TY_BF16 ? bf16_round(E, r) : r;
}

/* An operand of wrapping arithmetic in the unsigned type u. */
static CX
unsigned_operand(CEmit *E, IrExpr *e, CX a, const char *u)
{
	if (a.u)
		return cx(a.u, a.up);
	if (e->kind == IR_INT && e->ival >= 0 && e->ival <= 2147483647 &&
	    strcmp(u, "uint32_t") == 0)
		return cx(P("%lldu", (long long)e->ival), P_PRIMARY);
	return cast_to(E, u, a);
}

/* + - * on type t. */
static CX
arith(CEmit *E, IrExpr *e, const char *op, int p, CX a, CX b)
{
	ScalarType t = e->type.code;
	if (is_float(t)) {
		CX r = binop(E, op, p, a, b);
		return round_to(E, t, r);
	}
	if (t == TY_U32 || t == TY_U64)
		return binop(E, op, p, a, b);
	if (t == TY_I64 && !is_data(E, e)) {
		if (int_typed(e->a) && int_typed(e->b))
			a = cast_to(E, "int64_t", a);
		return binop(E, op, p, a, b);
	}
	/* wraps: compute in the unsigned type, convert back */
	const char *u = t == TY_I64 ? "uint64_t" : "uint32_t";
	CX w = binop(E, op, p, unsigned_operand(E, e->a, a, u),
	    unsigned_operand(E, e->b, b, u));
	CX r = cast_to(E, target_c_type(t), w);
	r.u = w.s;
	r.up = w.p;
	return r;
}

static CX
divmod(CEmit *E, IrExpr *e, bool mod, CX a, CX b)
{
	ScalarType t = e->type.code;
	int64_t c;
	if (is_float(t)) {
		CX r = mod ? call2(E, chelp_typed(E, HT_MOD, t), a, b)
		    : binop(E, "/", P_MUL, a, b);
		return round_to(E, t, r);
	}
	if (is_unsigned(t) && ir_is_const(e->b, &c) && c != 0)
		return binop(E, mod ? "%" : "/", P_MUL, a, b);
	int h = is_unsigned(t) ? (mod ? H_MOD_U64 : H_DIV_U64)
	    : (mod ? H_MOD_I64 : H_DIV_I64);
	chelp_use(E, h);
	CX r = call2(E, is_unsigned(t) ? (mod ? "txc_mod_u64" : "txc_div_u64")
	    : (mod ? "txc_mod_i64" : "txc_div_i64"), a, b);
	if (t != TY_I64 && t != TY_U64)
		r = cast_to(E, target_c_type(t), r);
	return r;
}

static CX
shift(CEmit *E, IrExpr *e, bool left, CX a, IrExpr *amt, const char *lane,
    bool hoist)
{
	ScalarType t = e->type.code;
	int mask = ir_bits(t) - 1;
	int64_t c;
	CX n;
	if (ir_is_const(amt, &c))
		n = cx(P("%d", (int)(c & mask)), P_PRIMARY);
	else
		n = cx(P("((unsigned)%s & %du)", un(E, ex(E, amt, lane, hoist)), mask),
		    P_PRIMARY);
	const char *ct = target_c_type(t);
	if (left) {
		if (t == TY_U32 || t == TY_U64)
			return binop_strict(E, "<<", P_SHIFT, a, n, P_UNARY);
		const char *u = t == TY_I64 ? "uint64_t" : "uint32_t";
		CX r = binop_strict(E, "<<", P_SHIFT, cast_to(E, u, a), n, P_UNARY);
		return cast_to(E, ct, r);
	}
	if (t == TY_I64 && int_typed(e->a))
		a = cast_to(E, "int64_t", a);   /* not an int shifted by up to 63 */
	CX r = binop_strict(E, ">>", P_SHIFT, a, n, P_UNARY);
	return is_small(t) ? cast_to(E, ct, r) : r;
}

static CX
negate(CEmit *E, IrExpr *e, CX a)
{
	ScalarType t = e->type.code;
	if (is_float(t) || (t == TY_I64 && !is_data(E, e)))
		return cx(P("-%s", un(E, a)), P_UNARY);
	if (t == TY_U32 || t == TY_U64)
		return binop(E, "-", P_ADD, cx(t == TY_U32 ? "0u" : "UINT64_C(0)",
		    P_PRIMARY), a);
	const char *u = t == TY_I64 ? "uint64_t" : "uint32_t";
	CX w = binop(E, "-", P_ADD, cx("0", P_PRIMARY), unsigned_operand(E, e->a, a, u));
	CX r = cast_to(E, target_c_type(t), w);
	r.u = w.s;
	r.up = w.p;
	return r;
}

/* A conversion from e->a's type to e's. */
static CX
convert(CEmit *E, IrExpr *e, CX a)
{
	ScalarType s = e->a->type.code, t = e->type.code;
	if (s == t)
		return a;
	if (t == TY_BOOL)
		return binop_strict(E, "!=", P_EQ, a, cx("0", P_PRIMARY), P_REL + 1);
	if (is_float(t)) {
		if (t == TY_F16) {
			if (s == TY_BOOL)
				return cast_to(E, "float", a);
			return f16_round(E, is_float(s) ? a : cast_to(E, "double", a));
		}
		/* through f32 (lower/ir.h), which txc_bf16_round's parameter is */
		if (t == TY_BF16)
			return bf16_round(E, s == TY_BOOL || s == TY_F16 ? a : cast_to(E, "float", a));
		if ((s == TY_F16 || s == TY_BF16) && t == TY_F32)
			return a;
		return cast_to(E, cexpr_vtype(t), a);
	}
	if (is_float(s))
		return call1(E, chelp_typed(E, HT_SAT, t), a);
	return cast_to(E, target_c_type(t), a);
}

/* ---- calls ---------------------------------------------------------------- */

static CX
builtin(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	ScalarType t = e->type.code;
	int n = e->call.nargs;
	CX a[3];
	for (int i = 0; i < n && i < 3; i++)
		a[i] = ex(E, e->call.args[i], lane, hoist);
	Builtin bi = e->call.builtin;
	int want = bi == BI_POW || bi == BI_MIN || bi == BI_MAX ? 2
	    : bi == BI_CLAMP ? 3 : 1;
	if (n != want)
		ICE("C backend: %s with %d arguments", ir_builtin_name(bi), n);
	switch (bi) {
	case BI_MIN: case BI_MAX:
		return call2(E, chelp_typed(E, bi == BI_MIN ? HT_MIN : HT_MAX, t),
		    a[0], a[1]);
	case BI_CLAMP:
		return call2(E, chelp_typed(E, HT_MIN, t), call2(E,
		    chelp_typed(E, HT_MAX, t), a[0], a[1]), a[2]);
	case BI_ABS:
		if (is_float(t))
			return call1(E, t == TY_F64 ? "fabs" : "fabsf", a[0]);
		return call1(E, chelp_typed(E, HT_ABS, t), a[0]);
	case BI_FLOOR: case BI_CEIL: case BI_ROUND:
		if (!is_float(t))
			return a[0];
		break;
	default:
		break;
	}
	if (!is_float(t))
		ICE("C backend: %s of type %s", ir_builtin_name(bi), ir_type_str(e->type));
	const char *f = t == TY_F64 ? "" : "f";
	CX r;
	switch (bi) {
	case BI_RSQRT:
		r = binop(E, "/", P_MUL, cx(t == TY_F64 ? "1.0" : "1.0f", P_PRIMARY),
		    call1(E, P("sqrt%s", f), a[0]));
		break;
	case BI_SIGMOID:
		r = call1(E, chelp_typed(E, HT_SIGMOID, t), a[0]);
		break;
	case BI_ROUND:   /* half to even: rint in the default rounding mode */
		r = call1(E, P("rint%s", f), a[0]);
		break;
	case BI_POW:
		r = call2(E, P("pow%s", f), a[0], a[1]);
		break;
	default:
		r = call1(E, P("%s%s", ir_builtin_name(bi), f), a[0]);
		break;
	}
	/* floor, ceil, round of an f16 value are f16 values */
	if ((t == TY_F16 || t == TY_BF16) && bi != BI_FLOOR && bi != BI_CEIL && bi != BI_ROUND)
		r = round_to(E, t, r);
	return r;
}

/* ---- loads ---------------------------------------------------------------- */

static IrExpr *
widen(IrExpr *e, int lanes)
{
	if (!ir_type_eq(ir_with_lanes(e->type, 1), ir_i64))
		e = ir_cast(ir_type(TY_I64, e->type.lanes), e);
	if (e->type.lanes == 1 && lanes > 1)
		e = ir_broadcast(e, lanes);
	return e;
}

char *
cexpr_offset(CEmit *E, Buffer *b, IrExpr **idx, int nidx, const char *lane,
    bool hoist)
{
	if (nidx == 0)
		return "0";
	int lanes = 1;
	for (int i = 0; i < nidx; i++)
		if (idx[i]->type.lanes > lanes)
			lanes = idx[i]->type.lanes;
	IrExpr *off = NULL;
	int64_t c;
	if (b->flat || nidx == 1) {
		off = idx[0];
		if (!b->flat && b->min[0] && !(ir_is_const(b->min[0], &c) && c == 0))
			off = ir_sub(widen(off, lanes), widen(b->min[0], lanes));
	} else {
		/* row major over the extents, from absolute indices */
		IrExpr *stride = NULL;
		for (int d = nidx - 1; d >= 0; d--) {
			IrExpr *i = widen(idx[d], lanes);
			if (b->min[d] && !(ir_is_const(b->min[d], &c) && c == 0))
				i = ir_sub(i, widen(b->min[d], lanes));
			IrExpr *s = b->stride ? b->stride[d] : stride;
			if (s)
				i = ir_mul(i, widen(s, lanes));
			off = off ? ir_add(i, off) : i;
			if (!b->stride)
				stride = stride ? ir_mul(b->extent[d], stride) : b->extent[d];
		}
	}
	return ex(E, off, lane, hoist).s;
}

static CX
load(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	Buffer *b = e->load.buf;
	/* a predicated load reads only where the predicate holds */
	bool h = hoist && !e->a;
	const char *name = cname_get(E->names, b, b->name);
	CX r = cx(P("%s[%s]", name, cexpr_offset(E, b, e->load.idx, e->load.nidx,
	    lane, h)), P_PRIMARY);
	if (b->elem == TY_F16) {
		chelp_use(E, H_F16_TO_F32);
		r = call1(E, "txc_f16_to_f32", r);
	} else if (b->elem == TY_BF16) {
		chelp_use(E, H_BF16_TO_F32);
		r = call1(E, "txc_bf16_to_f32", r);
	} else if (b->elem == TY_BOOL)
		r = binop_strict(E, "!=", P_EQ, r, cx("0", P_PRIMARY), P_REL + 1);
	if (e->a) {
		CX c = ex(E, e->a, lane, hoist);
		r = cx(P("(%s ? %s : 0)", at(E, c, P_LOR), r.s), P_PRIMARY);
	}
	return r;
}

/* ---- lets ----------------------------------------------------------------- */

static void
pre(CEmit *E, char *line)
{
	*ARENA_PUSH(E->a, E->pre, E->npre, E->cappre) = line;
}

static CX
let(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	Var *v = e->var;
	CVar *cv = cexpr_var(E, v);
	IrExpr *val = e->a;
	cv->data = is_data(E, val);
	CX r;
	if (!hoist) {
		CX x = ex(E, val, lane, false);
		cv->text = at(E, x, P_PRIMARY);
		cv->bound++;
		r = ex(E, e->b, lane, false);
		cv->bound--;
		return r;
	}
	cv->text = NULL;
	int lanes = val->type.lanes;
	const char *vt = cexpr_vtype(v->type.code);
	if (lanes > 1) {
		const char *ln = cexpr_var(E, E->lane)->name;
		CX x = ex(E, val, ln, true);
		cv->array = true;
		pre(E, P("%s %s[%d];", vt, cv->name, lanes));
		pre(E, P("for (int64_t %s = 0; %s < %d; %s++)\n\t%s[%s] = %s;", ln, ln,
		    lanes, ln, cv->name, ln, x.s));
	} else {
		CX x = ex(E, val, NULL, true);
		cv->array = false;
		pre(E, P("const %s %s = %s;", vt, cv->name, x.s));
	}
	cv->bound++;
	r = ex(E, e->b, lane, hoist);
	cv->bound--;
	return r;
}

/* ---- the dispatcher ------------------------------------------------------- */

static const char *
cmp_op(IrExprKind k)
{
	switch (k) {
	case IR_EQ: return "==";
	case IR_NE: return "!=";
	case IR_LT: return "<";
	case IR_LE: return "<=";
	case IR_GT: return ">";
	default: return ">=";
	}
}

static CX
ex(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	if (e->type.lanes > 1 && !lane)
		ICE("C backend: vector expression %s outside a lane loop",
		    ir_expr_str(e));
	ScalarType t = e->type.code;
	CX a, b;
	switch (e->kind) {
	case IR_INT:
		return lit_int(E, t, e->ival);
	case IR_FLOAT:
		return lit_float(E, t, e->fval);
	case IR_VAR: {
		CVar *cv = cexpr_var(E, e->var);
		if (!cv->param && cv->bound <= 0)
			ICE("C backend: variable '%s' used outside its scope", e->var->name);
		if (cv->text)
			return cx((char *)cv->text, P_PRIMARY);
		if (cv->array)
			return cx(P("%s[%s]", cv->name, lane), P_PRIMARY);
		if (cv->param && t == TY_F16) {
			chelp_use(E, H_F16_TO_F32);
			return cx(P("txc_f16_to_f32(%s)", cv->name), P_PRIMARY);
		}
		if (cv->param && t == TY_BF16) {
			chelp_use(E, H_BF16_TO_F32);
			return cx(P("txc_bf16_to_f32(%s)", cv->name), P_PRIMARY);
		}
		if (cv->param && t == TY_BOOL)
			return cx(P("%s != 0", cv->name), P_EQ);
		return cx((char *)cv->name, P_PRIMARY);
	}
	case IR_ADD: case IR_SUB: case IR_MUL:
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, hoist);
		return arith(E, e, e->kind == IR_ADD ? "+" : e->kind == IR_SUB ? "-" : "*",
		    e->kind == IR_MUL ? P_MUL : P_ADD, a, b);
	case IR_DIV: case IR_MOD:
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, hoist);
		return divmod(E, e, e->kind == IR_MOD, a, b);
	case IR_MIN: case IR_MAX:
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, hoist);
		return call2(E, chelp_typed(E, e->kind == IR_MIN ? HT_MIN : HT_MAX, t),
		    a, b);
	case IR_BITAND: case IR_BITOR: case IR_BITXOR:
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, hoist);
		return binop_strict(E, e->kind == IR_BITAND ? "&" : e->kind == IR_BITOR
		    ? "|" : "^", e->kind == IR_BITAND ? P_BAND : e->kind == IR_BITOR
		    ? P_OR : P_XOR, a, b, P_UNARY);
	case IR_SHL: case IR_SHR:
		a = ex(E, e->a, lane, hoist);
		return shift(E, e, e->kind == IR_SHL, a, e->b, lane, hoist);
	case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: {
		int p = e->kind == IR_EQ || e->kind == IR_NE ? P_EQ : P_REL;
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, hoist);
		return binop_strict(E, cmp_op(e->kind), p, a, b, P_SHIFT);
	}
	case IR_AND: case IR_OR: {
		/* the right operand is evaluated only when the left allows;
		 * chains need no parentheses, && inside || gets them (GCC asks) */
		a = ex(E, e->a, lane, hoist);
		b = ex(E, e->b, lane, false);
		bool and = e->kind == IR_AND;
		int p = and ? P_LAND : P_LOR;
		return cx(P("%s %s %s", at(E, a, e->a->kind == e->kind ? p : P_EQ),
		    and ? "&&" : "||", at(E, b, P_EQ)), p);
	}
	case IR_NOT:
		a = ex(E, e->a, lane, hoist);
		return cx(P("!%s", un(E, a)), P_UNARY);
	case IR_NEG:
		return negate(E, e, ex(E, e->a, lane, hoist));
	case IR_BITNOT: {
		CX r = cx(P("~%s", un(E, ex(E, e->a, lane, hoist))), P_UNARY);
		return t == TY_U8 || t == TY_U16 ? cast_to(E, target_c_type(t), r) : r;
	}
	case IR_SELECT: {
		CX c = ex(E, e->a, lane, hoist);
		a = ex(E, e->b, lane, false);
		b = ex(E, e->c, lane, false);
		return cx(P("(%s ? %s : %s)", at(E, c, P_LOR), a.s, b.s), P_PRIMARY);
	}
	case IR_CAST:
		return convert(E, e, ex(E, e->a, lane, hoist));
	case IR_LOAD:
		return load(E, e, lane, hoist);
	case IR_RAMP: {
		IrExpr *l = ir_var(E->lane);
		if (t != TY_I64)
			l = ir_cast(ir_scalar(t), l);
		/* base + lane * stride, as base - lane * -stride when negative */
		int64_t c;
		bool neg = ir_is_const(e->b, &c) && c < 0 && c != INT64_MIN &&
		    ir_is_int(e->type);
		IrExpr *s = neg ? ir_int(e->b->type, -c) : e->b;
		if (!(ir_is_const(s, &c) && c == 1))
			l = ir_mul(l, s);
		return ex(E, neg ? ir_sub(e->a, l) : ir_add(e->a, l), NULL, hoist);
	}
	case IR_BROADCAST:
		return ex(E, e->a, NULL, hoist);
	case IR_CALL:
		IrFmaArgs fa;
		if (ir_fma_args(e, &fa)) {
			/* tensorize (lower/tensorize.c): tensors pass as
			 * addresses; the block's full shape, the last arguments,
			 * only chooses the LLVM backend's micro-kernel; taps
			 * pass as two levels, a missing one run once (the i8
			 * and bf16 helpers take them always) */
			const char *nm = e->call.name;
			bool i8 = !strncmp(nm, "i8_", 3), bf = !strncmp(nm, "bf16_", 5);
			bool a16 = !strcmp(nm, "i8_madd_a16");
			bool taps = fa.ntaps > 0 || i8 || bf;
			chelp_use(E, a16 ? H_DOT_I16I8 : i8 ? H_DOT_I8 : bf ? H_DOT_BF16 : taps ?
			    H_FMA_TAPS : H_FMA_OUTER);
			char *s = a16 ? "txc_dot_i16i8(" : i8 ? "txc_dot_i8(" : bf ? "txc_dot_bf16(" :
			    taps ? "txc_fma_taps(" : "txc_fma_outer(";
			IrExpr *one = ir_i64c(1), *zero = ir_i64c(0);
			IrExpr *r0 = fa.ntaps > 0 ? fa.tap[0] : one, *s0 = fa.ntaps > 1 ? fa.tap[1] : one;
			IrExpr *plain[] = { fa.mr, fa.nr, fa.k, fa.c, fa.csi, fa.csj, fa.a, fa.asi,
			    fa.ask, fa.b, fa.bsk, fa.bsj, fa.first };
			IrExpr *withtaps[] = { fa.mr, fa.nr, r0, s0, fa.k, fa.c, fa.csi, fa.csj, fa.a,
			    fa.asi, fa.ntaps > 0 ? fa.tap_as[0] : zero,
			    fa.ntaps > 1 ? fa.tap_as[1] : zero, fa.ask, fa.b,
			    fa.ntaps > 0 ? fa.tap_bs[0] : zero, fa.ntaps > 1 ? fa.tap_bs[1] : zero,
			    fa.bsk, fa.bsj, fa.first };
			IrExpr **xs = taps ? withtaps : plain;
			int nx = taps ? (int)(sizeof withtaps / sizeof *withtaps) :
			    (int)(sizeof plain / sizeof *plain);
			for (int i = 0; i < nx; i++) {
				IrExpr *x = xs[i];
				const char *t = x->kind == IR_LOAD ?
				    P("&%s[%s]", cname_get(E->names, x->load.buf, x->load.buf->name),
				    cexpr_offset(E, x->load.buf, x->load.idx, x->load.nidx, lane, hoist)) :
				    ex(E, x, lane, hoist).s;
				s = P("%s%s%s", s, i ? ", " : "", t);
			}
			return cx(P("%s)", s), P_PRIMARY);
		}
		if (e->call.ck == CALL_INTRINSIC && E->hooks && E->hooks->intrinsic) {
			char *t = E->hooks->intrinsic(E, e, lane, hoist);
			if (t)
				return cx(t, P_PRIMARY);
		}
		if (double_buffer_async_is(e))   /* a pipeline's copies are synchronous here */
			return cx("0", P_PRIMARY);
		if (e->call.ck == CALL_INTRINSIC) {
			diag_error(e->loc, "the C backend cannot emit intrinsic '%s'%s",
			    e->call.name, !strcmp(e->call.name, "gemm") ? " (VTA's GEMM: --target=vta "
			    "writes an object, or the stream with --emit=vta-asm)" : "");
			E->error = true;
			return cx("0", P_PRIMARY);
		}
		return builtin(E, e, lane, hoist);
	case IR_LET:
		return let(E, e, lane, hoist);
	default:
		ICE("C backend: expression kind %d", (int)e->kind);
	}
}

char *
cexpr(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	return ex(E, e, lane, hoist).s;
}

/* ---- odds and ends -------------------------------------------------------- */

char *
cexpr_string(Arena *a, const char *s)
{
	size_t n = strlen(s);
	char *out = arena_alloc(a, 4 * n + 3), *p = out;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\' || (c == '?' && s[1] == '?')) {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else if (c < 32 || c == 127) {
			snprintf(p, 5, "\\%03o", c);
			p += 4;
		} else
			*p++ = (char)c;
	}
	*p++ = '"';
	*p = 0;
	return out;
}

bool
cexpr_reads_elsewhere(IrExpr *e, Buffer *b, IrExpr **idx, int nidx)
{
	if (!e)
		return false;
	if (e->kind == IR_LOAD) {
		if (e->load.buf == b) {
			if (e->load.nidx != nidx)
				return true;
			for (int i = 0; i < nidx; i++)
				if (!ir_expr_equal(e->load.idx[i], idx[i]))
					return true;
		}
		for (int i = 0; i < e->load.nidx; i++)
			if (cexpr_reads_elsewhere(e->load.idx[i], b, idx, nidx))
				return true;
	}
	if (e->kind == IR_CALL)
		for (int i = 0; i < e->call.nargs; i++)
			if (cexpr_reads_elsewhere(e->call.args[i], b, idx, nidx))
				return true;
	return cexpr_reads_elsewhere(e->a, b, idx, nidx) ||
	    cexpr_reads_elsewhere(e->b, b, idx, nidx) ||
	    cexpr_reads_elsewhere(e->c, b, idx, nidx);
}
