/* vmath_test.c: the vector math of target/llvm/vmath.c against libm, in ulp.
 *
 * For exp, log, tanh, sigmoid, erf and pow it builds a kernel
 * Y[8i..8i+7] = f(X[8i..8i+7]) (and 4 and 16 lanes) in the IR, JIT-compiles
 * it for this machine (FMA where it has it), without contraction, and on
 * x86-64 for plain SSE2 (--cpu=x86-64), and compares every result with
 * the libm function in double precision, rounded: the error is
 * |result - exact| in units of the last place of the f32 nearest the
 * exact value (2^-149 in the denormals).  The sweep takes every STEP-th
 * f32 bit pattern of both signs (VMATH_STEP, default 251: 17 million
 * points a function, every exponent; VMATH_STEP=1 is every f32), then
 * the edges: NaN, the infinities, zeros, the smallest and largest
 * denormals and normals, and the neighbours of each branch point of
 * vmath.c.  pow takes random pairs over the whole range and its C99
 * special cases.  An edge or a special case must match libm's class
 * exactly (NaN, an infinity and its sign, a zero and its sign); a finite
 * result must be within the function's bound.  It prints the largest
 * error of each function and configuration; man/tx.5 quotes those of
 * VMATH_STEP=3 (1.4 billion points a function; some minutes).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/ir.h"
#include "target/target.h"

static int failures;

typedef struct {
	const char *name;
	Builtin bi;
	int nargs;
	double maxulp;         /* the bound the test holds it to */
} Fn;

static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }

static const Fn fns[] = {
	{ "exp", BI_EXP, 1, 1.5 },
	{ "log", BI_LOG, 1, 1.0 },
	{ "tanh", BI_TANH, 1, 1.5 },
	{ "sigmoid", BI_SIGMOID, 1, 2.5 },
	{ "erf", BI_ERF, 1, 2.0 },
	{ "pow", BI_POW, 2, 1.0 },
};
#define NFN (int)(sizeof fns / sizeof *fns)

static double
ref(const Fn *f, float x, float y)
{
	switch (f->bi) {
	case BI_EXP: return exp(x);
	case BI_LOG: return log(x);
	case BI_TANH: return tanh(x);
	case BI_SIGMOID: return ref_sigmoid(x);
	case BI_ERF: return erf(x);
	default: return pow(x, y);
	}
}

/* The error of got against the exact value e, in ulp of the f32 nearest
 * e; HUGE_VAL when the classes differ (NaN, infinity, a zero's sign). */
static double
ulp_err(float got, double e)
{
	float r = (float)e;
	int ex;

	if (isnan(e) || isnan(got))
		return isnan(e) && isnan(got) ? 0 : HUGE_VAL;
	if (isinf(r) || isinf(got))
		return r == got ? 0 : HUGE_VAL;
	if (r == 0 && got == 0 && e == 0)
		return signbit(r) == signbit(got) ? 0 : HUGE_VAL;
	frexp(r != 0 ? r : e, &ex);     /* |r| in [2^(ex-1), 2^ex) */
	if (ex - 1 < -126)
		ex = -125;
	return fabs((double)got - e) / ldexp(1.0, ex - 1 - 23);
}

/* ---- the kernels ------------------------------------------------------- */

static Buffer *
arg1(IrFunc *f, const char *name, Var *n, bool in)
{
	Buffer *b = ir_new_buffer(name, TY_F32, 1);
	b->extent[0] = ir_var(n);
	b->abi_index = f->nargs;
	b->is_input = in;
	f->args[f->nargs++] = b;
	return b;
}

/* for io < N / lanes: Y[ramp] = f(X[ramp] (, Z[ramp])) */
static IrFunc *
kernel(const Fn *fn, int lanes)
{
	Var *n = ir_new_var("N", ir_i64), *io = ir_new_var("io", ir_i64);
	IrFunc *f = arena_alloc(ir_arena, sizeof *f);
	char *name = arena_alloc(ir_arena, 32);
	IrExpr *args[2];

	snprintf(name, 32, "v%s_%d", fn->name, lanes);
	f->name = name;
	f->params = arena_alloc(ir_arena, sizeof *f->params);
	f->args = arena_alloc(ir_arena, 3 * sizeof *f->args);
	f->params[f->nparams++] = n;
	Buffer *x = arg1(f, "X", n, true);
	Buffer *z = fn->nargs > 1 ? arg1(f, "Z", n, true) : NULL;
	Buffer *y = arg1(f, "Y", n, false);
	IrExpr *r = ir_ramp(ir_mul(ir_var(io), ir_i64c(lanes)), ir_i64c(1), lanes);
	args[0] = ir_load(x, &r, 1, NULL, lanes);
	if (z)
		args[1] = ir_load(z, &r, 1, NULL, lanes);
	IrExpr *v = ir_call_builtin(fn->bi, ir_type(TY_F32, lanes), args, fn->nargs);
	f->body = ir_for(io, ir_i64c(0), ir_binop(IR_DIV, ir_var(n), ir_i64c(lanes)),
	    FOR_SERIAL, ir_store(y, &r, 1, v, NULL));
	return f;
}

typedef int (*Fn1)(int64_t, const float *, float *);
typedef int (*Fn2)(int64_t, const float *, const float *, float *);

/* ---- running them ------------------------------------------------------ */

#define CHUNK (1 << 16)
static float X[CHUNK], Z[CHUNK], Y[CHUNK];

typedef struct {
	const Fn *fn;
	void *code;
	const char *config;
	double worst;
	float worst_x, worst_y;
	long n;
	bool edges;            /* classes must match and the bound hold */
} Run;

static float
bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Runs the kernel on X[0..n) (and Z) and checks each result. */
static void
run(Run *r, int n)
{
	int rc = r->fn->nargs == 1 ? ((Fn1)r->code)(n, X, Y) : ((Fn2)r->code)(n, X, Z, Y);

	if (rc != 0) {
		fprintf(stderr, "vmath_test: %s (%s) returned %d\n", r->fn->name, r->config, rc);
		failures++;
		return;
	}
	for (int i = 0; i < n; i++) {
		double e = ref(r->fn, X[i], Z[i]);
		double u = ulp_err(Y[i], e);
		r->n++;
		if (u > r->worst) {
			r->worst = u;
			r->worst_x = X[i];
			r->worst_y = Z[i];
		}
		if (u > r->fn->maxulp && failures < 20) {
			fprintf(stderr, "vmath_test: %s (%s): f(%a, %a) = %a, libm %a (%.3g ulp)\n",
			    r->fn->name, r->config, X[i], Z[i], Y[i], e, u);
			failures++;
		}
	}
}

static const float edge_values[] = {
	0.0f, 1.0f, 2.0f, 0.5f, 0x1p-149f, 0x1p-140f, 0x1.fffffcp-127f, 0x1p-126f,
	0x1.fffffep127f, 1e-30f, 1e-10f, 1e-5f, 0.9f, 0.92f, 1.0f, 3.91f, 3.92f, 3.93f,
	9.0f, 10.0f, 44.0f, 45.0f, 87.33f, 88.72f, 88.7228394f, 88.7228470f, 89.0f, 90.0f,
	100.0f, 103.9f, 103.97f, 104.0f, 105.0f, 150.0f, 1e10f, 0.70710677f, 1.4142135f,
	0.6931472f, 0.34657359f,
};
#define NEDGE (int)(sizeof edge_values / sizeof *edge_values)

static int
edges(float *out)
{
	int n = 0;

	for (int i = 0; i < NEDGE; i++) {
		float v = edge_values[i];
		float near[3] = { nextafterf(v, -INFINITY), v, nextafterf(v, INFINITY) };
		for (int k = 0; k < 3; k++) {
			out[n++] = near[k];
			out[n++] = -near[k];
		}
	}
	out[n++] = INFINITY;
	out[n++] = -INFINITY;
	out[n++] = NAN;
	out[n++] = -NAN;
	return n;
}

/* Every step-th bit pattern (from off), then the edges. */
static void
sweep(Run *r, uint32_t step)
{
	uint64_t u = step / 2;
	int n = 0;

	while (u <= 0xffffffffu) {
		X[n] = bits((uint32_t)u);
		Z[n++] = 0;
		u += step;
		if (n == CHUNK) {
			run(r, n);
			n = 0;
		}
	}
	n -= n % 16;
	if (n)
		run(r, n);
	n = edges(X);
	memset(Z, 0, sizeof Z);
	n += 16 - n % 16;
	run(r, n);
}

/* pow: random pairs whose result is mostly finite, some beyond; the
 * special cases of C99 F.9.4.4 over the edge values. */
static void
sweep_pow(Run *r, long count)
{
	uint64_t s = 0x9e3779b97f4a7c15u;
	float ev[256];
	int ne = edges(ev), n = 0;

	for (long k = 0; k < count; k++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		float x = bits((uint32_t)s & 0x7fffffffu);
		double l = fabs(log2(x)) + 1e-3;
		double y = ((double)(uint32_t)(s >> 32) / 4294967296.0 * 2 - 1) * 160 / l;
		if (s & (1u << 31)) {   /* a negative x to an integer power */
			x = -x;
			y = nearbyint(y);
		}
		X[n] = isnan(x) ? 1.5f : x;
		Z[n++] = (float)y;
		if (n == CHUNK) {
			run(r, n);
			n = 0;
		}
	}
	for (int i = 0; i < ne; i++)
		for (int j = 0; j < ne; j++) {
			X[n] = ev[i];
			Z[n++] = ev[j];
			if (n == CHUNK) {
				run(r, n);
				n = 0;
			}
		}
	static const float ys[] = { 3.0f, -3.0f, 4.0f, -4.0f, 0.5f, -0.5f, 16777216.0f, 16777217.0f, 33.0f };
	for (int i = 0; i < ne; i++)
		for (int j = 0; j < (int)(sizeof ys / sizeof *ys); j++) {
			X[n] = ev[i];
			Z[n++] = ys[j];
			if (n == CHUNK) {
				run(r, n);
				n = 0;
			}
		}
	n -= n % 16;
	run(r, n);
}

typedef struct {
	const char *name;
	LlvmOptions o;
	int lanes;
} Config;

int
main(void)
{
	const char *env = getenv("VMATH_STEP");
	uint32_t step = env ? (uint32_t)strtoul(env, NULL, 0) : 251;
	Config cfg[] = {
		{ "host, 8 lanes", { .opt_level = 3 }, 8 },
		{ "host, 16 lanes, no FMA contraction", { .opt_level = 3, .no_contract = true }, 16 },
#if defined(__x86_64__)
		{ "x86-64 (SSE2), 4 lanes", { .opt_level = 3, .cpu = "x86-64" }, 4 },
#endif
	};
	int ncfg = sizeof cfg / sizeof *cfg;

	perm = arena_new();
	if (step == 0)
		step = 1;
	for (int c = 0; c < ncfg; c++) {
		IrFunc *fs[NFN];
		for (int i = 0; i < NFN; i++)
			fs[i] = kernel(&fns[i], cfg[c].lanes);
		LlvmJit *j = llvm_jit_compile(fs, NFN, &cfg[c].o);
		if (!j) {
			fprintf(stderr, "vmath_test: cannot compile for %s\n", cfg[c].name);
			return 1;
		}
		for (int i = 0; i < NFN; i++) {
			Run r = { .fn = &fns[i], .config = cfg[c].name };
			r.code = llvm_jit_lookup(j, fs[i]->name);
			if (!r.code) {
				fprintf(stderr, "vmath_test: no %s\n", fs[i]->name);
				failures++;
				continue;
			}
			/* the other configurations sweep more sparsely */
			if (fns[i].nargs == 1)
				sweep(&r, c == 0 ? step : step * 16 + 1);
			else
				sweep_pow(&r, c == 0 ? 4000000 : 250000);
			printf("%-8s %-36s max %.3f ulp at (%a, %a), %ld points\n", fns[i].name,
			    cfg[c].name, r.worst, r.worst_x, r.worst_y, r.n);
		}
		llvm_jit_free(j);
	}
	if (failures)
		fprintf(stderr, "vmath_test: %d failures\n", failures);
	return failures != 0;
}
