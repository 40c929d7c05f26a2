/* vmath.c: math builtins on vectors as inline polynomial code.
 *
 * LLVM has no vector exp or log of its own: without a vector library it
 * splits llvm.exp.v8f32 into eight expf calls, and tanh and erf are libm
 * calls per lane.  Here exp, log, tanh, sigmoid, erf and pow of f32
 * vectors (f16 ones computed in f32) become straight-line vector code:
 * a range reduction, a polynomial, a reconstruction through the
 * exponent bits, and selects for the edges, so NaN, the infinities,
 * overflow, underflow into the denormals, zeros and denormal inputs
 * give what libm gives.  No library is linked and no branch is taken:
 * the code is the same in an object, in the JIT and on every CPU target
 * (SSE2, AVX2, AVX-512, aarch64), with FMA where the machine has it
 * (llvm.fmuladd, when contraction is allowed).  Scalars and f64 keep
 * libm (cg_expr.c); sqrt and rsqrt are vector instructions already.
 * The vector calls of llvm.exp, llvm.log and llvm.pow that LLVM's loop
 * vectorizer makes of the loops a schedule left scalar (softmax's
 * exponentials) are replaced the same way after it has run
 * (vmath_lower_intrinsics, from llvm_emit.c's pipeline).
 *
 * The polynomials are minimax fits (Remez exchange, long double, then
 * rounded) of these functions, made for txc:
 *   exp:  e^r = 1 + r + r^2 P(r), |r| <= ln2/2 after x = n ln2 + r
 *         (n ln2 in two parts, Cody and Waite), 2^n applied as two
 *         powers of two so that results near overflow and in the
 *         denormals are rounded once;
 *   log:  x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1,
 *         log(1 + f) = f - f^2/2 + f^3 Q(f); denormals scaled by 2^23;
 *   tanh: x + x^3 T(x^2) below 0.9, else 1 - 2 / (e^2|x| + 1);
 *   erf:  x + x S(x^2) below 1, else 1 - e^(-x^2) R(|x| - 2.46) up to
 *         3.92 (where erf rounds to 1);
 *   sigmoid: e / (1 + e) or 1 / (1 + e) with e = e^-|x| (no overflow);
 *   pow:  e^(y log|x|) in f64 (log by the atanh series, exp as above
 *         with a degree 9 polynomial), the C99 special cases by selects.
 * man/tx.5 (Functions) lists the errors measured by
 * tests/unit/vmath_test.c against libm over the whole f32 range.
 */
#include <stdlib.h>
#include <string.h>

#include "target/llvm/cg.h"

/* The vector types of one call: f32, i32, f64, i64 with n lanes. */
typedef struct {
	Cg *cg;
	LLVMBuilderRef b;
	int n;
	LLVMTypeRef f, i, d, l;
} V;

/* The most lanes handled: constants are built on the stack (no arena:
 * llvm_split.c's threads run vmath_lower_intrinsics). */
#define MAX_LANES 256

static LLVMValueRef
splat(V *v, LLVMValueRef c)
{
	LLVMValueRef elts[MAX_LANES];

	for (int k = 0; k < v->n; k++)
		elts[k] = c;
	return LLVMConstVector(elts, (unsigned)v->n);
}

static LLVMValueRef
kf(V *v, double x)
{
	return splat(v, LLVMConstReal(LLVMFloatTypeInContext(v->cg->ctx), x));
}

static LLVMValueRef
kd(V *v, double x)
{
	return splat(v, LLVMConstReal(LLVMDoubleTypeInContext(v->cg->ctx), x));
}

static LLVMValueRef
ki(V *v, int64_t x)
{
	return splat(v, LLVMConstInt(LLVMInt32TypeInContext(v->cg->ctx), (unsigned long long)x, 1));
}

static LLVMValueRef
kl(V *v, int64_t x)
{
	return splat(v, LLVMConstInt(LLVMInt64TypeInContext(v->cg->ctx), (unsigned long long)x, 1));
}

static LLVMValueRef add(V *v, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(v->b, a, b, ""); }
static LLVMValueRef sub(V *v, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(v->b, a, b, ""); }
static LLVMValueRef mul(V *v, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(v->b, a, b, ""); }
static LLVMValueRef fdiv(V *v, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(v->b, a, b, ""); }

static LLVMValueRef
sel(V *v, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildSelect(v->b, c, a, b, "");
}

static LLVMValueRef
cmp(V *v, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildFCmp(v->b, p, a, b, "");
}

/* a * b + c: fused where the machine has FMA and contraction is on
 * (every polynomial below keeps its accuracy either way). */
static LLVMValueRef
madd(V *v, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	if (v->cg->contract) {
		LLVMValueRef args[3] = { a, b, c };
		LLVMTypeRef ty = LLVMTypeOf(a);
		return cg_call_intrinsic(v->cg, "llvm.fmuladd", &ty, 1, args, 3);
	}
	return add(v, mul(v, a, b), c);
}

static LLVMValueRef
unary(V *v, const char *name, LLVMValueRef a)
{
	LLVMTypeRef ty = LLVMTypeOf(a);
	return cg_call_intrinsic(v->cg, name, &ty, 1, &a, 1);
}

/* |a| with the sign of s. */
static LLVMValueRef
vcopysign(V *v, LLVMValueRef a, LLVMValueRef s)
{
	LLVMValueRef args[2] = { a, s };
	LLVMTypeRef ty = LLVMTypeOf(a);
	return cg_call_intrinsic(v->cg, "llvm.copysign", &ty, 1, args, 2);
}

/* c[0] + c[1] x + ... + c[n-1] x^(n-1), Horner's rule; f64 when dbl. */
static LLVMValueRef
poly(V *v, LLVMValueRef x, const double *c, int n, bool dbl)
{
	LLVMValueRef r = dbl ? kd(v, c[n - 1]) : kf(v, c[n - 1]);

	for (int k = n - 2; k >= 0; k--)
		r = madd(v, r, x, dbl ? kd(v, c[k]) : kf(v, c[k]));
	return r;
}

/* 2^k for i32 lanes k in [-126, 127]. */
static LLVMValueRef
pow2f(V *v, LLVMValueRef k)
{
	LLVMValueRef e = LLVMBuildShl(v->b, LLVMBuildAdd(v->b, k, ki(v, 127), ""), ki(v, 23), "");
	return LLVMBuildBitCast(v->b, e, v->f, "");
}

/* ---- exp ------------------------------------------------------------------ */

/* (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], relative error 1.3e-7. */
static const double exp_p[] = {
	0.5, 0.166665778, 0.0416668542, 0.00836314447, 0.00139012875,
};

static LLVMValueRef
vexp(V *v, LLVMValueRef x)
{
	/* beyond these e^x is inf or 0 in f32; a NaN passes the selects */
	x = sel(v, cmp(v, LLVMRealOGT, x, kf(v, 89.0)), kf(v, 89.0), x);
	x = sel(v, cmp(v, LLVMRealOLT, x, kf(v, -104.0)), kf(v, -104.0), x);
	/* n = nearest integer to x / ln2: adding 1.5 * 2^23 rounds it into
	 * the low bits */
	LLVMValueRef magic = kf(v, 12582912.0);
	LLVMValueRef t = madd(v, x, kf(v, 1.44269504088896341), magic);
	LLVMValueRef nf = sub(v, t, magic);
	LLVMValueRef n = LLVMBuildSub(v->b, LLVMBuildBitCast(v->b, t, v->i, ""),
	    ki(v, 0x4b400000), "");
	/* r = x - n ln2, ln2 = 0.693145751953125 (n times it is exact) +
	 * 1.42860677e-6 */
	LLVMValueRef r = madd(v, nf, kf(v, -0.693145751953125), x);
	r = madd(v, nf, kf(v, -1.42860676533018923e-6), r);
	LLVMValueRef p = poly(v, r, exp_p, 5, false);
	p = add(v, madd(v, mul(v, r, r), p, r), kf(v, 1.0));
	/* times 2^n in two steps (n in [-150, 128]): the first is exact, the
	 * second rounds once, also into the denormals or to inf */
	LLVMValueRef n1 = LLVMBuildAShr(v->b, n, ki(v, 1), "");
	LLVMValueRef n2 = LLVMBuildSub(v->b, n, n1, "");
	return mul(v, mul(v, p, pow2f(v, n1)), pow2f(v, n2));
}

/* ---- log ------------------------------------------------------------------ */

/* (log(1 + f) - f + f^2/2) / f^3 on [sqrt(1/2) - 1, sqrt(2) - 1],
 * relative error 7e-8. */
static const double log_q[] = {
	0.333333313, -0.24999994, 0.200007141, -0.166680574, 0.142493233,
	-0.12420141, 0.116769984, -0.115146086, 0.0703768283,
};

static LLVMValueRef
vlog(V *v, LLVMValueRef x)
{
	/* denormals (and what is replaced below) scaled into the normals */
	LLVMValueRef tiny = cmp(v, LLVMRealOLT, x, kf(v, 0x1p-126));
	LLVMValueRef xs = sel(v, tiny, mul(v, x, kf(v, 0x1p23)), x);
	LLVMValueRef u = LLVMBuildBitCast(v->b, xs, v->i, "");
	/* k = exponent of x / sqrt(1/2), m = x / 2^k in [sqrt(1/2), sqrt(2)) */
	LLVMValueRef k = LLVMBuildAShr(v->b, LLVMBuildSub(v->b, u, ki(v, 0x3f3504f3), ""),
	    ki(v, 23), "");
	LLVMValueRef m = LLVMBuildBitCast(v->b, LLVMBuildSub(v->b, u,
	    LLVMBuildShl(v->b, k, ki(v, 23), ""), ""), v->f, "");
	k = LLVMBuildAdd(v->b, k, sel(v, tiny, ki(v, -23), ki(v, 0)), "");
	LLVMValueRef kf_ = LLVMBuildSIToFP(v->b, k, v->f, "");
	LLVMValueRef f = sub(v, m, kf(v, 1.0));
	LLVMValueRef q = poly(v, f, log_q, 9, false);
	/* f^2 (f Q - 1/2) + k ln2_lo, then + f, then + k ln2_hi (exact) */
	LLVMValueRef p = madd(v, mul(v, f, f), madd(v, f, q, kf(v, -0.5)),
	    mul(v, kf_, kf(v, -2.12194440054690583e-4)));
	LLVMValueRef r = madd(v, kf_, kf(v, 0.693359375), add(v, f, p));
	/* 0: -inf; +inf: inf; negative or NaN: NaN */
	LLVMValueRef inf = kf(v, __builtin_inf());
	LLVMValueRef ok = LLVMBuildAnd(v->b, cmp(v, LLVMRealOGT, x, kf(v, 0.0)),
	    cmp(v, LLVMRealOLT, x, inf), "");
	LLVMValueRef special = sel(v, cmp(v, LLVMRealOEQ, x, kf(v, 0.0)), kf(v, -__builtin_inf()),
	    sel(v, cmp(v, LLVMRealOEQ, x, inf), inf, kf(v, __builtin_nan(""))));
	return sel(v, ok, r, special);
}

/* ---- tanh, sigmoid, erf ------------------------------------------------- */

/* (tanh(s) - s) / s^3 as a polynomial in s^2 on [0, 0.81], relative
 * error 9e-8. */
static const double tanh_t[] = {
	-0.333333313, 0.133332625, -0.0539539047, 0.0217594821, -0.00845104363,
	0.00275930599, -0.00052042905,
};

static LLVMValueRef
vtanh(V *v, LLVMValueRef x)
{
	LLVMValueRef a = unary(v, "llvm.fabs", x);
	LLVMValueRef u = mul(v, x, x);
	LLVMValueRef small = madd(v, mul(v, x, u), poly(v, u, tanh_t, 7, false), x);
	/* 1 - 2 / (e^2a + 1): 1 from a = 9 on, also when e^2a is inf; NaN
	 * stays NaN */
	LLVMValueRef e = vexp(v, add(v, a, a));
	LLVMValueRef large = sub(v, kf(v, 1.0), fdiv(v, kf(v, 2.0), add(v, e, kf(v, 1.0))));
	/* odd, -0 included (x + x^3 T(x^2) is +0 there) */
	return vcopysign(v, sel(v, cmp(v, LLVMRealOLT, a, kf(v, 0.9)), small, large), x);
}

/* 1 / (1 + e^-x) as 1 / (1 + e) for x >= 0 and e / (1 + e) below, e =
 * e^-|x|: no overflow, and the denormal results of x < -87 are kept. */
static LLVMValueRef
vsigmoid(V *v, LLVMValueRef x)
{
	LLVMValueRef e = vexp(v, LLVMBuildFNeg(v->b, unary(v, "llvm.fabs", x), ""));
	LLVMValueRef num = sel(v, cmp(v, LLVMRealOLT, x, kf(v, 0.0)), e, kf(v, 1.0));
	return fdiv(v, num, add(v, kf(v, 1.0), e));
}

/* erf(s) / s - 1 as a polynomial in s^2 on [0, 1] (the constant is 2 /
 * sqrt(pi) - 1, so x + x S keeps erf's leading term exact), absolute
 * error 1.2e-9. */
static const double erf_s[] = {
	0.1283791659137685, -0.376126271, 0.112836002, -0.0268544447, 0.00518953546,
	-0.000802084236, 7.88912314e-05,
};
/* erfc(x) e^(x^2) as a polynomial in x - 2.46 on [1, 3.92], relative
 * error 5.3e-8. */
static const double erf_r[] = {
	0.213820666, -0.0763814375, 0.0259225089, -0.00840828288, 0.00261806138,
	-0.000786228455, 0.000230021964, -6.44701649e-05, 1.59855863e-05,
	-4.38324332e-06, 1.82858287e-06, -4.40254382e-07,
};

static LLVMValueRef
verf(V *v, LLVMValueRef x)
{
	LLVMValueRef a = unary(v, "llvm.fabs", x);
	LLVMValueRef u = mul(v, x, x);
	LLVMValueRef small = madd(v, x, poly(v, u, erf_s, 7, false), x);
	LLVMValueRef r = poly(v, sub(v, a, kf(v, 2.46)), erf_r, 12, false);
	LLVMValueRef large = sub(v, kf(v, 1.0), mul(v, vexp(v, LLVMBuildFNeg(v->b, u, "")), r));
	/* erf rounds to 1 from 3.92 on (inf too); NaN takes the formula */
	large = sel(v, cmp(v, LLVMRealOGE, a, kf(v, 3.92)), kf(v, 1.0), large);
	return vcopysign(v, sel(v, cmp(v, LLVMRealOLT, a, kf(v, 1.0)), small, large), x);
}

/* ---- pow ------------------------------------------------------------------ */

/* (atanh(s)/s - 1) / s^2 as a polynomial in s^2 on [0, 0.0295], relative
 * error 1.1e-11: log(1 + f) = 2 atanh(f / (2 + f)). */
static const double pow_log[] = {
	0.33333333333688142, 0.19999999397338314, 0.14285877523744223,
	0.11095685567547325, 0.096815912274089089,
};
/* (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2], relative error 9e-13. */
static const double pow_exp[] = {
	0.49999999999955363, 0.16666666666738622, 0.041666666785894618,
	0.0083333332935002693, 0.0013888839189912393, 0.00019841309077528371,
	2.4867827831274133e-05, 2.7577361257525294e-06,
};

/* log of f64 lanes that hold positive f32 values (normal as doubles),
 * 0 or inf; absolute error about 1e-15 for what f32 pow needs. */
static LLVMValueRef
log_f64(V *v, LLVMValueRef x)
{
	LLVMValueRef u = LLVMBuildBitCast(v->b, x, v->l, "");
	LLVMValueRef k = LLVMBuildAShr(v->b, LLVMBuildSub(v->b, u, kl(v, 0x3fe6a09e667f3bcdLL), ""),
	    kl(v, 52), "");
	LLVMValueRef m = LLVMBuildBitCast(v->b, LLVMBuildSub(v->b, u,
	    LLVMBuildShl(v->b, k, kl(v, 52), ""), ""), v->d, "");
	LLVMValueRef f = sub(v, m, kd(v, 1.0));
	LLVMValueRef s = fdiv(v, f, add(v, f, kd(v, 2.0)));
	LLVMValueRef s2 = add(v, s, s), z = mul(v, s, s);
	LLVMValueRef l = madd(v, mul(v, s2, z), poly(v, z, pow_log, 5, true), s2);
	l = madd(v, LLVMBuildSIToFP(v->b, k, v->d, ""), kd(v, 0.693147180559945309), l);
	LLVMValueRef inf = kd(v, __builtin_inf());
	l = sel(v, cmp(v, LLVMRealOEQ, x, kd(v, 0.0)), kd(v, -__builtin_inf()), l);
	return sel(v, cmp(v, LLVMRealOEQ, x, inf), inf, l);
}

/* e^t for f64 lanes, t clamped to [-110, 90] (beyond, f32 gives 0 or
 * inf), relative error about 1e-15. */
static LLVMValueRef
exp_f64(V *v, LLVMValueRef t)
{
	t = sel(v, cmp(v, LLVMRealOGT, t, kd(v, 90.0)), kd(v, 90.0), t);
	t = sel(v, cmp(v, LLVMRealOLT, t, kd(v, -110.0)), kd(v, -110.0), t);
	LLVMValueRef magic = kd(v, 6755399441055744.0);    /* 1.5 * 2^52 */
	LLVMValueRef tt = madd(v, t, kd(v, 1.44269504088896341), magic);
	LLVMValueRef nf = sub(v, tt, magic);
	LLVMValueRef n = LLVMBuildSub(v->b, LLVMBuildBitCast(v->b, tt, v->l, ""),
	    LLVMBuildBitCast(v->b, magic, v->l, ""), "");
	LLVMValueRef r = madd(v, nf, kd(v, -6.93147180369123816490e-01), t);
	r = madd(v, nf, kd(v, -1.90821492927058770002e-10), r);
	LLVMValueRef p = poly(v, r, pow_exp, 8, true);
	p = add(v, madd(v, mul(v, r, r), p, r), kd(v, 1.0));
	LLVMValueRef s = LLVMBuildShl(v->b, LLVMBuildAdd(v->b, n, kl(v, 1023), ""), kl(v, 52), "");
	return mul(v, p, LLVMBuildBitCast(v->b, s, v->d, ""));
}

static LLVMValueRef
vpow(V *v, LLVMValueRef x, LLVMValueRef y)
{
	LLVMValueRef xd = LLVMBuildFPExt(v->b, x, v->d, "");
	LLVMValueRef yd = LLVMBuildFPExt(v->b, y, v->d, "");
	LLVMValueRef l = log_f64(v, unary(v, "llvm.fabs", xd));
	LLVMValueRef r = LLVMBuildFPTrunc(v->b, exp_f64(v, mul(v, yd, l)), v->f, "");
	/* y an integer, odd: |y| < 2^24 converted exactly; from 2^24 on
	 * (and inf, NaN) every f32 counts as even */
	LLVMValueRef ay = unary(v, "llvm.fabs", y);
	LLVMValueRef big = cmp(v, LLVMRealUGE, ay, kf(v, 16777216.0));
	LLVMValueRef yi = LLVMBuildFPToSI(v->b, sel(v, big, kf(v, 0.0), y), v->i, "");
	LLVMValueRef isint = LLVMBuildOr(v->b, big,
	    cmp(v, LLVMRealOEQ, LLVMBuildSIToFP(v->b, yi, v->f, ""), y), "");
	LLVMValueRef odd = LLVMBuildAnd(v->b, LLVMBuildAnd(v->b, LLVMBuildNot(v->b, big, ""), isint, ""),
	    LLVMBuildICmp(v->b, LLVMIntNE, LLVMBuildAnd(v->b, yi, ki(v, 1), ""), ki(v, 0), ""), "");
	/* a negative x (-0 and -inf included) to an odd power: negative */
	LLVMValueRef neg = LLVMBuildICmp(v->b, LLVMIntSLT, LLVMBuildBitCast(v->b, x, v->i, ""),
	    ki(v, 0), "");
	r = sel(v, LLVMBuildAnd(v->b, neg, odd, ""), LLVMBuildFNeg(v->b, r, ""), r);
	/* finite x < 0 to a non-integer power, and NaN operands: NaN */
	LLVMValueRef nan = LLVMBuildAnd(v->b, LLVMBuildAnd(v->b, cmp(v, LLVMRealOLT, x, kf(v, 0.0)),
	    cmp(v, LLVMRealONE, x, kf(v, -__builtin_inf())), ""), LLVMBuildNot(v->b, isint, ""), "");
	nan = LLVMBuildOr(v->b, nan, cmp(v, LLVMRealUNO, x, y), "");
	r = sel(v, nan, kf(v, __builtin_nan("")), r);
	/* 1 for y = +-0, x = 1 and (-1)^+-inf, NaN or not */
	LLVMValueRef ax = unary(v, "llvm.fabs", x);
	LLVMValueRef one = LLVMBuildOr(v->b, cmp(v, LLVMRealOEQ, y, kf(v, 0.0)),
	    cmp(v, LLVMRealOEQ, x, kf(v, 1.0)), "");
	one = LLVMBuildOr(v->b, one, LLVMBuildAnd(v->b, cmp(v, LLVMRealOEQ, ax, kf(v, 1.0)),
	    cmp(v, LLVMRealOEQ, ay, kf(v, __builtin_inf())), ""), "");
	return sel(v, one, kf(v, 1.0), r);
}

/* ---- entry ------------------------------------------------------------------ */

LLVMValueRef
vmath_builtin(Cg *cg, int builtin, IrType t, LLVMValueRef *args)
{
	V v;
	LLVMValueRef a[2], r;
	int nargs = builtin == BI_POW ? 2 : 1;

	if (t.lanes < 2 || t.lanes > MAX_LANES || (t.code != TY_F32 && t.code != TY_F16))
		return NULL;
	switch (builtin) {
	case BI_EXP: case BI_LOG: case BI_TANH: case BI_SIGMOID: case BI_ERF: case BI_POW:
		break;
	default:
		return NULL;
	}
	v.cg = cg;
	v.b = cg->b;
	v.n = t.lanes;
	v.f = LLVMVectorType(LLVMFloatTypeInContext(cg->ctx), (unsigned)t.lanes);
	v.i = LLVMVectorType(LLVMInt32TypeInContext(cg->ctx), (unsigned)t.lanes);
	v.d = LLVMVectorType(LLVMDoubleTypeInContext(cg->ctx), (unsigned)t.lanes);
	v.l = LLVMVectorType(LLVMInt64TypeInContext(cg->ctx), (unsigned)t.lanes);
	for (int i = 0; i < nargs; i++) {
		a[i] = args[i];
		if (LLVMGetTypeKind(LLVMTypeOf(a[i])) != LLVMVectorTypeKind)
			a[i] = cg_broadcast(cg, a[i], t.lanes);
		if (t.code == TY_F16)
			a[i] = LLVMBuildFPExt(cg->b, a[i], v.f, "");
	}
	switch (builtin) {
	case BI_EXP: r = vexp(&v, a[0]); break;
	case BI_LOG: r = vlog(&v, a[0]); break;
	case BI_TANH: r = vtanh(&v, a[0]); break;
	case BI_SIGMOID: r = vsigmoid(&v, a[0]); break;
	case BI_ERF: r = verf(&v, a[0]); break;
	default: r = vpow(&v, a[0], a[1]); break;
	}
	if (t.code == TY_F16)
		r = LLVMBuildFPTrunc(cg->b, r, cg_type(cg, t), "");
	return r;
}

/* ---- vectors LLVM's loop vectorizer made ----------------------------------- */

/* The builtin a call of llvm.exp, llvm.log or llvm.pow on f32 or f16
 * vectors computes (its type in *t), or -1. */
static int
vector_intrinsic(LLVMValueRef call, IrType *t)
{
	static const struct { const char *prefix; int bi; } known[] = {
		{ "llvm.exp.v", BI_EXP }, { "llvm.log.v", BI_LOG }, { "llvm.pow.v", BI_POW },
	};
	LLVMValueRef callee = LLVMGetCalledValue(call);
	LLVMTypeRef ty = LLVMTypeOf(call);
	size_t len;

	if (!callee || !LLVMIsAFunction(callee) || LLVMGetTypeKind(ty) != LLVMVectorTypeKind)
		return -1;
	LLVMTypeKind ek = LLVMGetTypeKind(LLVMGetElementType(ty));
	if (ek != LLVMFloatTypeKind && ek != LLVMHalfTypeKind)
		return -1;
	const char *name = LLVMGetValueName2(callee, &len);
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (!strncmp(name, known[i].prefix, strlen(known[i].prefix))) {
			*t = ir_type(ek == LLVMFloatTypeKind ? TY_F32 : TY_F16,
			    (int)LLVMGetVectorSize(ty));
			return known[i].bi;
		}
	return -1;
}

void
vmath_lower_intrinsics(LLVMModuleRef mod, bool contract)
{
	Cg cg;
	LLVMValueRef *calls = NULL;
	int n = 0, cap = 0;
	IrType t;

	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
			for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
			    in = LLVMGetNextInstruction(in)) {
				if (!LLVMIsACallInst(in) || vector_intrinsic(in, &t) < 0)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 16;
					calls = realloc(calls, (size_t)cap * sizeof *calls);
					if (!calls)
						diag_fatal("out of memory");
				}
				calls[n++] = in;
			}
	if (!n)
		return;
	memset(&cg, 0, sizeof cg);
	cg.ctx = LLVMGetModuleContext(mod);
	cg.mod = mod;
	cg.b = LLVMCreateBuilderInContext(cg.ctx);
	cg.contract = contract;
	cg.vector_math = true;
	for (int i = 0; i < n; i++) {
		int bi = vector_intrinsic(calls[i], &t);
		LLVMValueRef args[2] = { LLVMGetOperand(calls[i], 0), NULL };
		if (bi == BI_POW)
			args[1] = LLVMGetOperand(calls[i], 1);
		LLVMPositionBuilderBefore(cg.b, calls[i]);
		LLVMValueRef r = vmath_builtin(&cg, bi, t, args);
		if (!r)
			continue;
		LLVMReplaceAllUsesWith(calls[i], r);
		LLVMInstructionEraseFromParent(calls[i]);
	}
	LLVMDisposeBuilder(cg.b);
	free(calls);
}
