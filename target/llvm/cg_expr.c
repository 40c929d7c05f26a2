/* cg_expr.c: LLVM values for IR expressions, scalar and vector.
 *
 * The numeric rules are those of the C backend (target/c/emit_c.c), so
 * both targets compute the same bits:
 *  - integer arithmetic wraps (no nsw/nuw flags);
 *  - integer / and % are Euclidean: % is never negative (0 <= a % b < |b|)
 *    and a == b*(a/b) + a%b; x / 0 and x % 0 are 0, INT_MIN / -1 wraps to
 *    INT_MIN; unsigned types divide plainly;
 *  - shift amounts are taken modulo the width (also negative ones);
 *  - float to integer conversions saturate and map NaN to 0 (LLVM's
 *    fptosi.sat); float % is fmod plus |b| when negative;
 *  - round is half to even (roundeven); floor, ceil and round of an
 *    integer are the integer;
 *  - min and max of floats are `a < b ? a : b` and `a > b ? a : b`;
 *  - f16 is LLVM's half: every operation rounds to half;
 *  - bf16 values are their 16 bits (i16): every operation on them is done
 *    in f32 and rounded back to the nearest bf16, ties to even (exact
 *    bf16 arithmetic for + - * / sqrt); a conversion to bf16 goes through
 *    f32 (lower/ir.h, ir_bf16_bits).  The rounding is integer code, the
 *    same on every LLVM target, so no libgcc helper is needed.
 * A select whose sides load memory evaluates only the side it picks
 * (branches for scalars, masked loads for vectors), as C's ?: does.
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

LLVMTypeRef
cg_type(Cg *cg, IrType t)
{
	LLVMTypeRef s;

	switch (t.code) {
	case TY_BOOL: s = LLVMInt1TypeInContext(cg->ctx); break;
	case TY_I8: case TY_U8: s = LLVMInt8TypeInContext(cg->ctx); break;
	case TY_I16: case TY_U16: s = LLVMInt16TypeInContext(cg->ctx); break;
	case TY_I32: case TY_U32: s = LLVMInt32TypeInContext(cg->ctx); break;
	case TY_I64: s = cg->index32 ? LLVMInt32TypeInContext(cg->ctx) :
	    LLVMInt64TypeInContext(cg->ctx); break;
	case TY_U64: s = LLVMInt64TypeInContext(cg->ctx); break;
	case TY_F16: s = LLVMHalfTypeInContext(cg->ctx); break;
	case TY_BF16: s = LLVMInt16TypeInContext(cg->ctx); break;
	case TY_F32: s = LLVMFloatTypeInContext(cg->ctx); break;
	case TY_F64: s = LLVMDoubleTypeInContext(cg->ctx); break;
	default: ICE("no LLVM type for %s", ir_type_str(t));
	}
	return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

LLVMTypeRef
cg_mem_type(Cg *cg, IrType t)
{
	if (t.code == TY_BOOL)
		t.code = TY_U8;
	return cg_type(cg, t);
}

LLVMTypeRef
cg_elem_mem_type(Cg *cg, ScalarType t)
{
	return cg_mem_type(cg, ir_scalar(t));
}

LLVMValueRef
cg_broadcast(Cg *cg, LLVMValueRef v, int lanes)
{
	LLVMTypeRef vt;
	LLVMValueRef undef, ins, zero;

	if (lanes == 1)
		return v;
	vt = LLVMVectorType(LLVMTypeOf(v), lanes);
	if (LLVMIsConstant(v)) {
		LLVMValueRef *elts = arena_alloc(ir_arena, lanes * sizeof *elts);
		for (int i = 0; i < lanes; i++)
			elts[i] = v;
		return LLVMConstVector(elts, lanes);
	}
	undef = LLVMGetPoison(vt);
	ins = LLVMBuildInsertElement(cg->b, undef, v,
	    LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0), "");
	zero = LLVMConstNull(LLVMVectorType(LLVMInt32TypeInContext(cg->ctx), lanes));
	return LLVMBuildShuffleVector(cg->b, ins, undef, zero, "bc");
}

LLVMValueRef
cg_const_int(Cg *cg, IrType t, int64_t v)
{
	LLVMValueRef c = LLVMConstInt(cg_type(cg, ir_scalar(t.code)), (unsigned long long)v,
	    type_is_signed(t.code));
	return cg_broadcast(cg, c, t.lanes);
}

static LLVMValueRef
const_float(Cg *cg, IrType t, double v)
{
	if (t.code == TY_BF16)
		return cg_const_int(cg, t, ir_bf16_bits(v));
	return cg_broadcast(cg, LLVMConstReal(cg_type(cg, ir_scalar(t.code)), v), t.lanes);
}

LLVMValueRef
cg_call_intrinsic(Cg *cg, const char *name, LLVMTypeRef *over, int nover,
    LLVMValueRef *args, int nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn;
	LLVMTypeRef fty;

	if (!id)
		ICE("unknown LLVM intrinsic %s", name);
	fn = LLVMGetIntrinsicDeclaration(cg->mod, id, over, nover);
	fty = LLVMIntrinsicGetType(cg->ctx, id, over, nover);
	return LLVMBuildCall2(cg->b, fty, fn, args, nargs, "");
}

/* Calls a libm function of one or two arguments (per lane for vectors). */
static LLVMValueRef
libm_call(Cg *cg, const char *base, IrType t, LLVMValueRef *args, int nargs)
{
	LLVMTypeRef st, ft, pt[2];
	LLVMValueRef fn, out;
	char name[32];
	bool half = t.code == TY_F16;

	st = half || t.code == TY_F32 ? LLVMFloatTypeInContext(cg->ctx) :
	    LLVMDoubleTypeInContext(cg->ctx);
	snprintf(name, sizeof name, "%s%s", base, st == LLVMFloatTypeInContext(cg->ctx) ? "f" : "");
	pt[0] = pt[1] = st;
	ft = LLVMFunctionType(st, pt, nargs, 0);
	fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, ft);
	out = t.lanes > 1 ? LLVMGetPoison(cg_type(cg, t)) : NULL;
	for (int l = 0; l < t.lanes; l++) {
		LLVMValueRef a[2], r;
		LLVMValueRef li = LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), l, 0);
		for (int i = 0; i < nargs; i++) {
			a[i] = t.lanes > 1 ? LLVMBuildExtractElement(cg->b, args[i], li, "") : args[i];
			if (half)
				a[i] = LLVMBuildFPExt(cg->b, a[i], st, "");
		}
		r = LLVMBuildCall2(cg->b, ft, fn, a, nargs, "");
		if (half)
			r = LLVMBuildFPTrunc(cg->b, r, LLVMHalfTypeInContext(cg->ctx), "");
		if (t.lanes == 1)
			return r;
		out = LLVMBuildInsertElement(cg->b, out, r, li, "");
	}
	return out;
}

static LLVMValueRef
fintr(Cg *cg, const char *name, IrType t, LLVMValueRef *args, int nargs)
{
	LLVMTypeRef ty = cg_type(cg, t);
	return cg_call_intrinsic(cg, name, &ty, 1, args, nargs);
}

/* Sets the fast-math flags this backend allows (contraction only). */
static LLVMValueRef
fp(Cg *cg, LLVMValueRef v)
{
	if (cg->contract && LLVMCanValueUseFastMathFlags(v))
		LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
	return v;
}

static LLVMValueRef
gen_min_max(Cg *cg, IrType t, bool is_min, LLVMValueRef a, LLVMValueRef b)
{
	LLVMValueRef c;

	if (ir_is_float(t)) {
		/* tx(5): a NaN operand gives NaN, whichever it is (a if a is
		 * NaN, else b, NaN or not, where a < b fails) */
		c = LLVMBuildFCmp(cg->b, is_min ? LLVMRealOLT : LLVMRealOGT, a, b, "");
		c = LLVMBuildOr(cg->b, c, LLVMBuildFCmp(cg->b, LLVMRealUNO, a, a, ""), "");
	} else if (ir_is_uint(t) || ir_is_bool(t)) {
		c = LLVMBuildICmp(cg->b, is_min ? LLVMIntULT : LLVMIntUGT, a, b, "");
	} else {
		c = LLVMBuildICmp(cg->b, is_min ? LLVMIntSLT : LLVMIntSGT, a, b, "");
	}
	return LLVMBuildSelect(cg->b, c, a, b, is_min ? "min" : "max");
}

/* Floor division and non-negative modulo (header comment). */
static LLVMValueRef
gen_div_mod(Cg *cg, IrType t, bool is_div, LLVMValueRef a, LLVMValueRef b)
{
	LLVMValueRef zero = cg_const_int(cg, t, 0), one = cg_const_int(cg, t, 1);
	LLVMValueRef bz, safe_b, q, r;

	if (ir_is_float(t)) {
		if (is_div)
			return fp(cg, LLVMBuildFDiv(cg->b, a, b, ""));
		r = LLVMBuildFRem(cg->b, a, b, "");
		LLVMValueRef ab = fintr(cg, "llvm.fabs", t, &b, 1);
		LLVMValueRef neg = LLVMBuildFCmp(cg->b, LLVMRealOLT, r, LLVMConstNull(LLVMTypeOf(r)), "");
		return LLVMBuildSelect(cg->b, neg, LLVMBuildFAdd(cg->b, r, ab, ""), r, "fmod");
	}
	/* a positive constant divisor (tiles, loop bounds): a shift or a mask
	 * for a power of two (floor semantics exactly), else one signed
	 * division with the Euclidean step; no tests of b left for SCEV to see */
	if (!ir_is_uint(t) && t.lanes == 1 && LLVMIsAConstantInt(b)) {
		long long c = LLVMConstIntGetSExtValue(b);
		if (c > 0 && (c & (c - 1)) == 0) {
			int k = 0;
			while ((1LL << k) != c)
				k++;
			return is_div ? LLVMBuildAShr(cg->b, a, cg_const_int(cg, t, k), "div")
			    : LLVMBuildAnd(cg->b, a, cg_const_int(cg, t, c - 1), "mod");
		}
		if (c > 1) {
			LLVMValueRef rneg;
			r = LLVMBuildSRem(cg->b, a, b, "");
			rneg = LLVMBuildICmp(cg->b, LLVMIntSLT, r, zero, "");
			if (!is_div)
				return LLVMBuildSelect(cg->b, rneg, LLVMBuildAdd(cg->b, r, b, ""), r, "mod");
			q = LLVMBuildSDiv(cg->b, a, b, "");
			return LLVMBuildSelect(cg->b, rneg, LLVMBuildSub(cg->b, q, one, ""), q, "div");
		}
	}
	/* b == 0 divides by 1 and then yields 0 */
	bz = LLVMBuildICmp(cg->b, LLVMIntEQ, b, zero, "");
	safe_b = LLVMBuildSelect(cg->b, bz, one, b, "");
	if (ir_is_uint(t)) {
		r = is_div ? LLVMBuildUDiv(cg->b, a, safe_b, "") : LLVMBuildURem(cg->b, a, safe_b, "");
		return LLVMBuildSelect(cg->b, bz, zero, r, "");
	}
	/* INT_MIN / -1 overflows in LLVM: divide by 1 and negate (wrapping) */
	LLVMValueRef m1 = LLVMBuildICmp(cg->b, LLVMIntEQ, safe_b, cg_const_int(cg, t, -1), "");
	LLVMValueRef sb = LLVMBuildSelect(cg->b, m1, one, safe_b, "");
	q = LLVMBuildSDiv(cg->b, a, sb, "");
	r = LLVMBuildSRem(cg->b, a, sb, "");
	if (is_div) {
		q = LLVMBuildSelect(cg->b, m1, LLVMBuildSub(cg->b, zero, q, ""), q, "");
		/* Euclidean: when the remainder is negative, step the quotient
		 * away from b's sign (q - 1 for b > 0, q + 1 for b < 0) */
		LLVMValueRef rneg = LLVMBuildICmp(cg->b, LLVMIntSLT, r, zero, "");
		LLVMValueRef bpos = LLVMBuildICmp(cg->b, LLVMIntSGT, sb, zero, "");
		LLVMValueRef step = LLVMBuildSelect(cg->b, bpos, one, cg_const_int(cg, t, -1), "");
		q = LLVMBuildSelect(cg->b, rneg, LLVMBuildSub(cg->b, q, step, ""), q, "div");
	} else {
		/* r in (-|b|, |b|): add |b| (wrapping: b may be INT_MIN) when negative */
		LLVMValueRef bneg = LLVMBuildICmp(cg->b, LLVMIntSLT, sb, zero, "");
		LLVMValueRef absb = LLVMBuildSelect(cg->b, bneg, LLVMBuildSub(cg->b, zero, sb, ""), sb, "");
		LLVMValueRef rneg = LLVMBuildICmp(cg->b, LLVMIntSLT, r, zero, "");
		q = LLVMBuildSelect(cg->b, rneg, LLVMBuildAdd(cg->b, r, absb, ""), r, "mod");
	}
	return LLVMBuildSelect(cg->b, bz, zero, q, "");
}

/* The amount is taken modulo the width. */
static LLVMValueRef
gen_shift(Cg *cg, IrType t, bool left, LLVMValueRef a, LLVMValueRef b)
{
	LLVMValueRef amt = LLVMBuildAnd(cg->b, b, cg_const_int(cg, t, ir_bits(t.code) - 1), "");

	if (left)
		return LLVMBuildShl(cg->b, a, amt, "shl");
	if (ir_is_uint(t))
		return LLVMBuildLShr(cg->b, a, amt, "shr");
	return LLVMBuildAShr(cg->b, a, amt, "shr");
}

static LLVMValueRef
gen_compare(Cg *cg, IrExprKind k, IrType t, LLVMValueRef a, LLVMValueRef b)
{
	static const LLVMRealPredicate fp_pred[] = {
		[IR_EQ] = LLVMRealOEQ, [IR_NE] = LLVMRealUNE, [IR_LT] = LLVMRealOLT,
		[IR_LE] = LLVMRealOLE, [IR_GT] = LLVMRealOGT, [IR_GE] = LLVMRealOGE,
	};
	static const LLVMIntPredicate s_pred[] = {
		[IR_EQ] = LLVMIntEQ, [IR_NE] = LLVMIntNE, [IR_LT] = LLVMIntSLT,
		[IR_LE] = LLVMIntSLE, [IR_GT] = LLVMIntSGT, [IR_GE] = LLVMIntSGE,
	};
	static const LLVMIntPredicate u_pred[] = {
		[IR_EQ] = LLVMIntEQ, [IR_NE] = LLVMIntNE, [IR_LT] = LLVMIntULT,
		[IR_LE] = LLVMIntULE, [IR_GT] = LLVMIntUGT, [IR_GE] = LLVMIntUGE,
	};
	if (ir_is_float(t))
		return LLVMBuildFCmp(cg->b, fp_pred[k], a, b, "");
	if (ir_is_uint(t) || ir_is_bool(t))
		return LLVMBuildICmp(cg->b, u_pred[k], a, b, "");
	return LLVMBuildICmp(cg->b, s_pred[k], a, b, "");
}

/* The f32 values of bf16 bits (exact: the bits are the f32's top half). */
static LLVMValueRef
bf16_to_f32(Cg *cg, LLVMValueRef v, int lanes)
{
	LLVMValueRef u = LLVMBuildZExt(cg->b, v, cg_type(cg, ir_type(TY_U32, lanes)), "");
	u = LLVMBuildShl(cg->b, u, cg_const_int(cg, ir_type(TY_U32, lanes), 16), "");
	return LLVMBuildBitCast(cg->b, u, cg_type(cg, ir_type(TY_F32, lanes)), "bf16.ext");
}

/* The nearest bf16 to f32 values, ties to even; NaN stays a quiet NaN. */
static LLVMValueRef
f32_to_bf16(Cg *cg, LLVMValueRef v, int lanes)
{
	IrType u32 = ir_type(TY_U32, lanes);
	LLVMValueRef u = LLVMBuildBitCast(cg->b, v, cg_type(cg, u32), "");
	LLVMValueRef mag = LLVMBuildAnd(cg->b, u, cg_const_int(cg, u32, 0x7fffffff), "");
	LLVMValueRef nan = LLVMBuildICmp(cg->b, LLVMIntUGT, mag, cg_const_int(cg, u32, 0x7f800000), "");
	LLVMValueRef sixteen = cg_const_int(cg, u32, 16);
	LLVMValueRef odd = LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, u, sixteen, ""),
	    cg_const_int(cg, u32, 1), "");
	LLVMValueRef r = LLVMBuildAdd(cg->b, u, LLVMBuildAdd(cg->b, odd,
	    cg_const_int(cg, u32, 0x7fff), ""), "");
	LLVMValueRef q = LLVMBuildOr(cg->b, u, cg_const_int(cg, u32, 0x400000), "");
	r = LLVMBuildLShr(cg->b, LLVMBuildSelect(cg->b, nan, q, r, ""), sixteen, "");
	return LLVMBuildTrunc(cg->b, r, cg_type(cg, ir_type(TY_BF16, lanes)), "bf16");
}

static LLVMValueRef
gen_cast(Cg *cg, IrType to, IrType from, LLVMValueRef v)
{
	LLVMTypeRef tt = cg_type(cg, to);
	int fb = ir_bits(from.code), tb = ir_bits(to.code);

	if (from.code == to.code)
		return v;
	if (from.code == TY_BF16) {
		v = bf16_to_f32(cg, v, from.lanes);
		return gen_cast(cg, to, ir_type(TY_F32, from.lanes), v);
	}
	if (to.code == TY_BF16)
		return f32_to_bf16(cg, gen_cast(cg, ir_type(TY_F32, to.lanes), from, v), to.lanes);
	if (ir_is_bool(to)) {
		if (ir_is_float(from))
			return LLVMBuildFCmp(cg->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
		return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	}
	if (ir_is_float(to)) {
		if (ir_is_float(from))
			return tb > fb ? LLVMBuildFPExt(cg->b, v, tt, "") :
			    LLVMBuildFPTrunc(cg->b, v, tt, "");
		if (ir_is_bool(from) || ir_is_uint(from))
			return LLVMBuildUIToFP(cg->b, v, tt, "");
		return LLVMBuildSIToFP(cg->b, v, tt, "");
	}
	if (ir_is_float(from)) {
		LLVMTypeRef over[2] = { tt, LLVMTypeOf(v) };
		return cg_call_intrinsic(cg, ir_is_uint(to) ? "llvm.fptoui.sat" : "llvm.fptosi.sat",
		    over, 2, &v, 1);
	}
	if (tb < fb)
		return LLVMBuildTrunc(cg->b, v, tt, "");
	if (tb == fb)
		return v;
	if (ir_is_bool(from) || ir_is_uint(from))
		return LLVMBuildZExt(cg->b, v, tt, "");
	return LLVMBuildSExt(cg->b, v, tt, "");
}

LLVMTypeRef
cg_index_type(Cg *cg)
{
	return cg->index32 ? LLVMInt32TypeInContext(cg->ctx) : LLVMInt64TypeInContext(cg->ctx);
}

LLVMValueRef
cg_index(Cg *cg, IrExpr *e, int lanes)
{
	LLVMValueRef v = cg_expr(cg, e);
	IrType to = ir_type(TY_I64, e->type.lanes);

	v = gen_cast(cg, to, e->type, v);
	if (e->type.lanes == 1 && lanes > 1)
		v = cg_broadcast(cg, v, lanes);
	return v;
}

/* <0, 1, ..., lanes-1> of t's element type. */
static LLVMValueRef
lane_numbers(Cg *cg, IrType t)
{
	LLVMTypeRef st = cg_type(cg, ir_scalar(t.code));
	LLVMValueRef *elts = arena_alloc(ir_arena, t.lanes * sizeof *elts);

	for (int i = 0; i < t.lanes; i++)
		elts[i] = ir_is_float(t) ? LLVMConstReal(st, i) : LLVMConstInt(st, i, 0);
	return LLVMConstVector(elts, t.lanes);
}

static LLVMValueRef
gen_builtin(Cg *cg, IrExpr *e)
{
	IrType t = e->type;
	LLVMValueRef a[3];
	int n = e->call.nargs < 3 ? e->call.nargs : 3;

	for (int i = 0; i < n; i++)
		a[i] = cg_expr(cg, e->call.args[i]);
	if (cg->hooks && cg->hooks->builtin) {
		LLVMValueRef v = cg->hooks->builtin(cg, e, a);
		if (v)
			return v;
	}
	if (cg->vector_math && t.lanes > 1) {
		LLVMValueRef v = vmath_builtin(cg, e->call.builtin, t, a);
		if (v)
			return v;
	}
	switch (e->call.builtin) {
	case BI_EXP: return fintr(cg, "llvm.exp", t, a, 1);
	case BI_LOG: return fintr(cg, "llvm.log", t, a, 1);
	case BI_SQRT: return fintr(cg, "llvm.sqrt", t, a, 1);
	case BI_SIN: return fintr(cg, "llvm.sin", t, a, 1);
	case BI_COS: return fintr(cg, "llvm.cos", t, a, 1);
	case BI_FLOOR:
	case BI_CEIL:
	case BI_ROUND:
		if (!ir_is_float(t))
			return a[0];
		return fintr(cg, e->call.builtin == BI_FLOOR ? "llvm.floor" :
		    e->call.builtin == BI_CEIL ? "llvm.ceil" : "llvm.roundeven", t, a, 1);
	case BI_POW: return fintr(cg, "llvm.pow", t, a, 2);
	case BI_TANH: return libm_call(cg, "tanh", t, a, 1);
	case BI_ERF: return libm_call(cg, "erf", t, a, 1);
	case BI_RSQRT:
		return fp(cg, LLVMBuildFDiv(cg->b, const_float(cg, t, 1.0),
		    fintr(cg, "llvm.sqrt", t, a, 1), "rsqrt"));
	case BI_SIGMOID: {
		LLVMValueRef ne = LLVMBuildFNeg(cg->b, a[0], "");
		LLVMValueRef ex = fintr(cg, "llvm.exp", t, &ne, 1);
		LLVMValueRef one = const_float(cg, t, 1.0);
		return LLVMBuildFDiv(cg->b, one, LLVMBuildFAdd(cg->b, one, ex, ""), "sigmoid");
	}
	case BI_ABS:
		if (ir_is_float(t))
			return fintr(cg, "llvm.fabs", t, a, 1);
		if (ir_is_uint(t))
			return a[0];
		a[1] = LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 0, 0);
		return fintr(cg, "llvm.abs", t, a, 2);
	case BI_MIN: return gen_min_max(cg, t, true, a[0], a[1]);
	case BI_MAX: return gen_min_max(cg, t, false, a[0], a[1]);
	case BI_CLAMP:
		return gen_min_max(cg, t, true, gen_min_max(cg, t, false, a[0], a[1]), a[2]);
	default:
		ICE("builtin %s in the LLVM backend", ir_builtin_name(e->call.builtin));
	}
}

static bool
has_load_walk(IrExpr *e)
{
	if (!e)
		return false;
	if (e->kind == IR_LOAD)
		return true;
	if (e->kind == IR_CALL) {
		for (int i = 0; i < e->call.nargs; i++)
			if (has_load_walk(e->call.args[i]))
				return true;
		return false;
	}
	return has_load_walk(e->a) || has_load_walk(e->b) || has_load_walk(e->c);
}

bool
cg_has_load(IrExpr *e)
{
	return has_load_walk(e);
}

/* cond ? a : b where a side loads: scalars branch, vectors narrow the
 * active mask for each side so that its loads become masked. */
static LLVMValueRef
gen_guarded_select(Cg *cg, IrExpr *e)
{
	LLVMValueRef c = cg_expr(cg, e->a), va, vb;

	if (e->type.lanes > 1) {
		LLVMValueRef saved = cg->mask;
		LLVMValueRef nc = LLVMBuildNot(cg->b, c, "");
		cg->mask = saved ? LLVMBuildAnd(cg->b, saved, c, "") : c;
		va = cg_expr(cg, e->b);
		cg->mask = saved ? LLVMBuildAnd(cg->b, saved, nc, "") : nc;
		vb = cg_expr(cg, e->c);
		cg->mask = saved;
		return LLVMBuildSelect(cg->b, c, va, vb, "sel");
	}
	LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "sel.t");
	LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "sel.f");
	LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "sel.j");
	LLVMBuildCondBr(cg->b, c, tb, fb);
	LLVMPositionBuilderAtEnd(cg->b, tb);
	va = cg_expr(cg, e->b);
	tb = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, jb);
	LLVMPositionBuilderAtEnd(cg->b, fb);
	vb = cg_expr(cg, e->c);
	fb = LLVMGetInsertBlock(cg->b);
	LLVMBuildBr(cg->b, jb);
	LLVMPositionBuilderAtEnd(cg->b, jb);
	LLVMValueRef phi = LLVMBuildPhi(cg->b, cg_type(cg, e->type), "sel");
	LLVMValueRef vals[2] = { va, vb };
	LLVMBasicBlockRef bbs[2] = { tb, fb };
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

/* A lane mask from a ramp against a broadcast: ramp(b, s, n) CMP x_n(e),
 * |s| <= 2, the test of a tile's tail or of a boundary copy's border.
 * Lane i holds b + s*i CMP e, that is s*i CMP e - b: one scalar
 * subtraction, clamped to [min s*i - 1, max s*i + 1] (which keeps every
 * lane's answer, == and != included) and narrowed to 32 bits, against
 * the constant lanes s*i.  The mask then comes from one compare of 32-bit
 * lanes, the width of the masks x86's masked loads and stores take,
 * where n 64-bit lanes are two or four compares, narrowed after (on
 * AVX2), and a costly pattern for LLVM's instruction selection.  Larger
 * strides are left as they were: their masks guard gathers, which take
 * 64-bit lanes.  (Stride 2 reads are dense loads, cg_mem.c's
 * load_stride2: conv2d_nchw_s2 runs 30% faster with their masks
 * narrowed.)  NULL when the compare is not of that form. */
static LLVMValueRef
gen_ramp_compare(Cg *cg, IrExpr *e)
{
	IrExpr *r = e->a, *x = e->b;
	bool swapped = false;
	IrType t = e->a->type;
	int n = t.lanes;
	int64_t s, lo, hi;

	if (n < 2 || !ir_is_int(t) || ir_is_uint(t) || ir_bits(t.code) < 32)
		return NULL;
	if (r->kind != IR_RAMP) {
		IrExpr *tmp = r;
		r = x, x = tmp, swapped = true;
	}
	if (r->kind != IR_RAMP || x->kind != IR_BROADCAST || r->b->kind != IR_INT)
		return NULL;
	s = r->b->ival;
	if (s == 0 || s > 2 || s < -2 || n > 64)
		return NULL;
	lo = s < 0 ? s * (n - 1) - 1 : -1;
	hi = s < 0 ? 1 : s * (n - 1) + 1;

	IrType st = ir_scalar(t.code);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMValueRef d = LLVMBuildSub(cg->b, cg_expr(cg, x->a), cg_expr(cg, r->a), "");
	d = gen_min_max(cg, st, false, d, cg_const_int(cg, st, lo));
	d = gen_min_max(cg, st, true, d, cg_const_int(cg, st, hi));
	if (ir_bits(t.code) > 32)
		d = LLVMBuildTrunc(cg->b, d, i32, "");
	LLVMValueRef *elts = arena_alloc(ir_arena, n * sizeof *elts);
	for (int i = 0; i < n; i++)
		elts[i] = LLVMConstInt(i32, (unsigned long long)(s * i), 1);
	LLVMValueRef lanes = LLVMConstVector(elts, n), dv = cg_broadcast(cg, d, n);
	IrType t32 = { .code = TY_I32, .lanes = n };
	return swapped ? gen_compare(cg, e->kind, t32, dv, lanes) :
	    gen_compare(cg, e->kind, t32, lanes, dv);
}

static LLVMValueRef
gen_binary(Cg *cg, IrExpr *e)
{
	IrType t = e->a->type;
	bool f = ir_is_float(t);

	if (e->kind >= IR_EQ && e->kind <= IR_GE) {
		LLVMValueRef m = gen_ramp_compare(cg, e);
		if (m)
			return m;
	}
	LLVMValueRef a = cg_expr(cg, e->a), b = cg_expr(cg, e->b);

	switch (e->kind) {
	case IR_ADD: return f ? fp(cg, LLVMBuildFAdd(cg->b, a, b, "")) : LLVMBuildAdd(cg->b, a, b, "");
	case IR_SUB: return f ? fp(cg, LLVMBuildFSub(cg->b, a, b, "")) : LLVMBuildSub(cg->b, a, b, "");
	case IR_MUL: return f ? fp(cg, LLVMBuildFMul(cg->b, a, b, "")) : LLVMBuildMul(cg->b, a, b, "");
	case IR_DIV: return gen_div_mod(cg, t, true, a, b);
	case IR_MOD: return gen_div_mod(cg, t, false, a, b);
	case IR_MIN: return gen_min_max(cg, t, true, a, b);
	case IR_MAX: return gen_min_max(cg, t, false, a, b);
	case IR_BITAND: case IR_AND: return LLVMBuildAnd(cg->b, a, b, "");
	case IR_BITOR: case IR_OR: return LLVMBuildOr(cg->b, a, b, "");
	case IR_BITXOR: return LLVMBuildXor(cg->b, a, b, "");
	case IR_SHL: return gen_shift(cg, t, true, a, b);
	case IR_SHR: return gen_shift(cg, t, false, a, b);
	default: return gen_compare(cg, e->kind, t, a, b);
	}
}

/* Whether e computes on bf16 values: an operation (not a load, select,
 * cast or let) of bf16 type, or a comparison of bf16 operands. */
static bool
is_bf16_op(IrExpr *e)
{
	switch (e->kind) {
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD:
	case IR_MIN: case IR_MAX: case IR_NEG: case IR_RAMP:
		return e->type.code == TY_BF16;
	case IR_CALL:
		return e->type.code == TY_BF16 && e->call.ck == CALL_BUILTIN;
	case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
		return e->a->type.code == TY_BF16;
	default:
		return false;
	}
}

static IrExpr *
to_f32(IrExpr *x)
{
	return x && x->type.code == TY_BF16 ? ir_cast(ir_type(TY_F32, x->type.lanes), x) : x;
}

/* e computed in f32 and rounded back to bf16 (a comparison: only its
 * operands widened). */
static LLVMValueRef
gen_bf16_op(Cg *cg, IrExpr *e)
{
	IrExpr *w = arena_alloc(ir_arena, sizeof *w);

	*w = *e;
	if (w->type.code == TY_BF16)
		w->type.code = TY_F32;
	w->a = to_f32(e->a);
	w->b = to_f32(e->b);
	if (e->kind == IR_CALL) {
		w->call.args = arena_alloc(ir_arena, (e->call.nargs + 1) * sizeof *w->call.args);
		for (int i = 0; i < e->call.nargs; i++)
			w->call.args[i] = to_f32(e->call.args[i]);
	}
	LLVMValueRef v = cg_expr(cg, w);
	return e->type.code == TY_BF16 ? f32_to_bf16(cg, v, e->type.lanes) : v;
}

LLVMValueRef
cg_expr(Cg *cg, IrExpr *e)
{
	LLVMValueRef v;

	if (e->loc.file)
		cg_debug_loc(cg, e->loc);
	if (is_bf16_op(e))
		return gen_bf16_op(cg, e);
	switch (e->kind) {
	case IR_INT:
		if (ir_is_float(e->type))
			return const_float(cg, e->type, (double)e->ival);
		return cg_const_int(cg, e->type, e->ival);
	case IR_FLOAT:
		return const_float(cg, e->type, e->fval);
	case IR_VAR:
		return cg_lookup_var(cg, e->var);
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD:
	case IR_MIN: case IR_MAX: case IR_BITAND: case IR_BITOR: case IR_BITXOR:
	case IR_SHL: case IR_SHR: case IR_EQ: case IR_NE: case IR_LT: case IR_LE:
	case IR_GT: case IR_GE: case IR_AND: case IR_OR:
		return gen_binary(cg, e);
	case IR_NOT:
	case IR_BITNOT:
		return LLVMBuildNot(cg->b, cg_expr(cg, e->a), "");
	case IR_NEG:
		v = cg_expr(cg, e->a);
		return ir_is_float(e->type) ? LLVMBuildFNeg(cg->b, v, "") : LLVMBuildNeg(cg->b, v, "");
	case IR_SELECT:
		if (cg_has_load(e->b) || cg_has_load(e->c))
			return gen_guarded_select(cg, e);
		return LLVMBuildSelect(cg->b, cg_expr(cg, e->a), cg_expr(cg, e->b),
		    cg_expr(cg, e->c), "");
	case IR_CAST:
		return gen_cast(cg, e->type, e->a->type, cg_expr(cg, e->a));
	case IR_LOAD:
		return cg_load(cg, e);
	case IR_RAMP: {
		LLVMValueRef base = cg_broadcast(cg, cg_expr(cg, e->a), e->type.lanes);
		LLVMValueRef step = cg_broadcast(cg, cg_expr(cg, e->b), e->type.lanes);
		LLVMValueRef lanes = lane_numbers(cg, e->type);
		if (ir_is_float(e->type))
			return LLVMBuildFAdd(cg->b, base, LLVMBuildFMul(cg->b, step, lanes, ""), "ramp");
		return LLVMBuildAdd(cg->b, base, LLVMBuildMul(cg->b, step, lanes, ""), "ramp");
	}
	case IR_BROADCAST:
		return cg_broadcast(cg, cg_expr(cg, e->a), e->type.lanes);
	case IR_CALL:
		if (e->call.ck != CALL_BUILTIN) {
			if (cg->hooks && cg->hooks->intrinsic && (v = cg->hooks->intrinsic(cg, e)))
				return v;
			if (double_buffer_async_is(e))   /* a pipeline's copies were synchronous */
				return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), 0, 0);
			return intrin_cpu_emit(cg, e);    /* intrin_cpu.c: tensorize */
		}
		return gen_builtin(cg, e);
	case IR_LET: {
		int mark = cg_scope_mark(cg);
		cg_bind_var(cg, e->var, cg_expr(cg, e->a));
		v = cg_expr(cg, e->b);
		cg_scope_pop(cg, mark);
		return v;
	}
	default:
		ICE("expression kind %d in the LLVM backend", (int)e->kind);
	}
}
