/* llvm_test.c: unit tests of the LLVM backend on hand-built loop nests.
 *
 * Each kernel is built directly in the IR (no front end), JIT-compiled
 * with contraction off, run on fixed data and compared exactly with a C
 * reference: a serial reduction, a parallel loop (1 and 3 threads), dense,
 * strided, masked and scattered vector accesses, selects that must not
 * load on the side they do not take, floor division and modulo (scalar
 * and vector), saturating casts and f16, NULL and assert failures (also
 * inside a parallel loop), stack and heap buffers.  It also writes
 * objects for the host and for aarch64 and reads their ELF headers.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lower/ir.h"
#include "rt/txrt.h"
#include "target/target.h"

static int failures;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

/* ---- building IR ------------------------------------------------------- */

static Var *
ivar(const char *name)
{
	return ir_new_var(name, ir_i64);
}

static IrExpr *
c64(int64_t v)
{
	return ir_i64c(v);
}

static IrExpr *
f32c(double v)
{
	return ir_float(ir_f32, v);
}

/* A 1-d tensor argument of extent e. */
static Buffer *
arg1(IrFunc *f, const char *name, ScalarType t, IrExpr *e, bool in)
{
	Buffer *b = ir_new_buffer(name, t, 1);
	b->extent[0] = e;
	b->abi_index = f->nargs;
	b->is_input = in;
	f->args[f->nargs++] = b;
	return b;
}

static IrFunc *
func(const char *name, Var *n)
{
	IrFunc *f = arena_alloc(ir_arena, sizeof *f);
	f->name = name;
	f->params = arena_alloc(ir_arena, 8 * sizeof *f->params);
	f->args = arena_alloc(ir_arena, 8 * sizeof *f->args);
	f->params[f->nparams++] = n;
	return f;
}

static IrExpr *
ld(Buffer *b, IrExpr *i)
{
	return ir_load(b, &i, 1, NULL, i->type.lanes);
}

static IrExpr *
ldp(Buffer *b, IrExpr *i, IrExpr *pred)
{
	return ir_load(b, &i, 1, pred, i->type.lanes);
}

static IrStmt *
st(Buffer *b, IrExpr *i, IrExpr *v)
{
	return ir_store(b, &i, 1, v, NULL);
}

static IrStmt *
stp(Buffer *b, IrExpr *i, IrExpr *v, IrExpr *pred)
{
	return ir_store(b, &i, 1, v, pred);
}

static IrStmt *
loop(Var *i, IrExpr *extent, ForKind fk, IrStmt *body)
{
	return ir_for(i, c64(0), extent, fk, body);
}

static IrExpr *
ramp8(IrExpr *base, int64_t stride)
{
	return ir_ramp(base, c64(stride), 8);
}

/* ---- kernels --------------------------------------------------------------- */

/* S[0] = 0; for i: S[0] = S[0] + A[i] */
static IrFunc *
k_reduce(void)
{
	Var *n = ivar("N"), *i = ivar("i");
	IrFunc *f = func("red", n);
	Buffer *a = arg1(f, "A", TY_F32, ir_var(n), true);
	Buffer *s = arg1(f, "S", TY_F32, c64(1), false);
	f->body = ir_seq(st(s, c64(0), f32c(0)),
	    loop(i, ir_var(n), FOR_SERIAL,
	    st(s, c64(0), ir_binop(IR_ADD, ld(s, c64(0)), ld(a, ir_var(i))))));
	return f;
}

/* parallel for i: B[i] = A[i] * 3 + f32(i) */
static IrFunc *
k_par(void)
{
	Var *n = ivar("N"), *i = ivar("i");
	IrFunc *f = func("par", n);
	Buffer *a = arg1(f, "A", TY_F32, ir_var(n), true);
	Buffer *b = arg1(f, "B", TY_F32, ir_var(n), false);
	f->body = loop(i, ir_var(n), FOR_PARALLEL,
	    st(b, ir_var(i), ir_binop(IR_ADD, ir_binop(IR_MUL, ld(a, ir_var(i)), f32c(3)),
	    ir_cast(ir_f32, ir_var(i)))));
	return f;
}

/* for io < N/8: B[8io..] = A[8io..] + 1 (dense); C[8io..] = A2[16io, step 2]
 * (gather); E[16io, step 2] = A[8io..] (scatter).
 * for io < (N+7)/8: D[8io..] = A[8io..] * 2 where 8io + lane < N (masked). */
static IrFunc *
k_vec(void)
{
	Var *n = ivar("N"), *io = ivar("io"), *jo = ivar("jo");
	IrFunc *f = func("vec", n);
	IrExpr *nv = ir_var(n);
	Buffer *a = arg1(f, "A", TY_F32, nv, true);
	Buffer *a2 = arg1(f, "A2", TY_F32, ir_mul(nv, c64(2)), true);
	Buffer *b = arg1(f, "B", TY_F32, nv, false);
	Buffer *c = arg1(f, "C", TY_F32, nv, false);
	Buffer *d = arg1(f, "D", TY_F32, nv, false);
	Buffer *e = arg1(f, "E", TY_F32, ir_mul(nv, c64(2)), false);
	IrExpr *r = ramp8(ir_mul(ir_var(io), c64(8)), 1);
	IrExpr *r2 = ramp8(ir_mul(ir_var(io), c64(16)), 2);
	IrStmt *body[3] = {
		st(b, r, ir_binop(IR_ADD, ld(a, r), ir_broadcast(f32c(1), 8))),
		st(c, r, ld(a2, r2)),
		st(e, r2, ld(a, r)),
	};
	IrExpr *rj = ramp8(ir_mul(ir_var(jo), c64(8)), 1);
	IrExpr *in = ir_binop(IR_LT, rj, ir_broadcast(nv, 8));
	f->body = ir_seq(
	    loop(io, ir_binop(IR_DIV, nv, c64(8)), FOR_SERIAL, ir_block(body, 3)),
	    loop(jo, ir_binop(IR_DIV, ir_add(nv, c64(7)), c64(8)), FOR_SERIAL,
	    stp(d, rj, ir_binop(IR_MUL, ldp(a, rj, in), ir_broadcast(f32c(2), 8)), in)));
	return f;
}

/* B[i] = A[i] > 0 ? A[i] : 0.5 * A[i]; C[i] = i >= 1 ? A[i - 1] : -1;
 * V[8io..] = lane >= 1 ? A[lane - 1] : -1 (vector, masked) */
static IrFunc *
k_select(void)
{
	Var *n = ivar("N"), *i = ivar("i"), *io = ivar("io");
	IrFunc *f = func("sel", n);
	IrExpr *nv = ir_var(n), *iv = ir_var(i);
	Buffer *a = arg1(f, "A", TY_F32, nv, true);
	Buffer *b = arg1(f, "B", TY_F32, nv, false);
	Buffer *c = arg1(f, "C", TY_F32, nv, false);
	Buffer *v = arg1(f, "V", TY_F32, nv, false);
	IrExpr *r = ramp8(ir_mul(ir_var(io), c64(8)), 1);
	IrStmt *body[2] = {
		st(b, iv, ir_select(ir_binop(IR_GT, ld(a, iv), f32c(0)), ld(a, iv),
		    ir_binop(IR_MUL, f32c(0.5), ld(a, iv)))),
		st(c, iv, ir_select(ir_binop(IR_GE, iv, c64(1)), ld(a, ir_sub(iv, c64(1))),
		    f32c(-1))),
	};
	f->body = ir_seq(loop(i, nv, FOR_SERIAL, ir_block(body, 2)),
	    loop(io, ir_binop(IR_DIV, nv, c64(8)), FOR_SERIAL,
	    st(v, r, ir_select(ir_binop(IR_GE, r, ir_broadcast(c64(1), 8)),
	    ld(a, ir_sub(r, ir_broadcast(c64(1), 8))), ir_broadcast(f32c(-1), 8)))));
	return f;
}

/* Q[i] = X[i] / Y[i], R[i] = X[i] % Y[i] (i32), and the same 8 lanes at a
 * time into QV, RV; SL[i] = X[i] << Y[i], SR[i] = X[i] >> Y[i]. */
static IrFunc *
k_divmod(void)
{
	Var *n = ivar("N"), *i = ivar("i"), *io = ivar("io");
	IrFunc *f = func("divmod", n);
	IrExpr *nv = ir_var(n), *iv = ir_var(i);
	Buffer *x = arg1(f, "X", TY_I32, nv, true);
	Buffer *y = arg1(f, "Y", TY_I32, nv, true);
	Buffer *q = arg1(f, "Q", TY_I32, nv, false);
	Buffer *r = arg1(f, "R", TY_I32, nv, false);
	Buffer *qv = arg1(f, "QV", TY_I32, nv, false);
	Buffer *rv = arg1(f, "RV", TY_I32, nv, false);
	Buffer *sl = arg1(f, "SL", TY_I32, nv, false);
	Buffer *sr = arg1(f, "SR", TY_I32, nv, false);
	IrExpr *rr = ramp8(ir_mul(ir_var(io), c64(8)), 1);
	IrStmt *sc[4] = {
		st(q, iv, ir_binop(IR_DIV, ld(x, iv), ld(y, iv))),
		st(r, iv, ir_binop(IR_MOD, ld(x, iv), ld(y, iv))),
		st(sl, iv, ir_binop(IR_SHL, ld(x, iv), ld(y, iv))),
		st(sr, iv, ir_binop(IR_SHR, ld(x, iv), ld(y, iv))),
	};
	IrStmt *ve[2] = {
		st(qv, rr, ir_binop(IR_DIV, ld(x, rr), ld(y, rr))),
		st(rv, rr, ir_binop(IR_MOD, ld(x, rr), ld(y, rr))),
	};
	f->body = ir_seq(loop(i, nv, FOR_SERIAL, ir_block(sc, 4)),
	    loop(io, ir_binop(IR_DIV, nv, c64(8)), FOR_SERIAL, ir_block(ve, 2)));
	return f;
}

/* I[i] = i32(F[i]); U[i] = u8(F[i]); H[i] = f16(F[i]); G[i] = f32(H[i]) */
static IrFunc *
k_cast(void)
{
	Var *n = ivar("N"), *i = ivar("i");
	IrFunc *f = func("casts", n);
	IrExpr *nv = ir_var(n), *iv = ir_var(i);
	Buffer *fb = arg1(f, "F", TY_F32, nv, true);
	Buffer *ib = arg1(f, "I", TY_I32, nv, false);
	Buffer *ub = arg1(f, "U", TY_U8, nv, false);
	Buffer *hb = arg1(f, "H", TY_F16, nv, false);
	Buffer *gb = arg1(f, "G", TY_F32, nv, false);
	IrStmt *body[4] = {
		st(ib, iv, ir_cast(ir_i32, ld(fb, iv))),
		st(ub, iv, ir_cast(ir_scalar(TY_U8), ld(fb, iv))),
		st(hb, iv, ir_cast(ir_scalar(TY_F16), ld(fb, iv))),
		st(gb, iv, ir_cast(ir_f32, ld(hb, iv))),
	};
	f->body = loop(i, nv, FOR_SERIAL, ir_block(body, 4));
	return f;
}

/* M[i] = F[i] % G[i]; R[i] = round(F[i]); H[i] = f16(D[i]) (from f64) */
static IrFunc *
k_fmisc(void)
{
	Var *n = ivar("N"), *i = ivar("i");
	IrFunc *f = func("fmisc", n);
	IrExpr *nv = ir_var(n), *iv = ir_var(i);
	Buffer *fb = arg1(f, "F", TY_F32, nv, true);
	Buffer *gb = arg1(f, "G", TY_F32, nv, true);
	Buffer *db = arg1(f, "D", TY_F64, nv, true);
	Buffer *mb = arg1(f, "M", TY_F32, nv, false);
	Buffer *rb = arg1(f, "R", TY_F32, nv, false);
	Buffer *hb = arg1(f, "H", TY_F16, nv, false);
	IrExpr *x = ld(fb, iv);
	IrStmt *body[3] = {
		st(mb, iv, ir_binop(IR_MOD, ld(fb, iv), ld(gb, iv))),
		st(rb, iv, ir_call_builtin(BI_ROUND, ir_f32, &x, 1)),
		st(hb, iv, ir_cast(ir_scalar(TY_F16), ld(db, iv))),
	};
	f->body = loop(i, nv, FOR_SERIAL, ir_block(body, 3));
	return f;
}

/* assert N >= 0; T (heap, N floats) = 2 A; S (stack, 16) = j;
 * B[i] = T[i] + S[i % 16]; then a parallel loop asserting i < 1000. */
static IrFunc *
k_check(void)
{
	Var *n = ivar("N"), *i = ivar("i"), *j = ivar("j"), *k = ivar("k"), *p = ivar("p");
	IrFunc *f = func("chk", n);
	IrExpr *nv = ir_var(n), *iv = ir_var(i);
	Buffer *a = arg1(f, "A", TY_F32, nv, true);
	Buffer *b = arg1(f, "B", TY_F32, nv, false);
	Buffer *t = ir_new_buffer("T", TY_F32, 1), *s = ir_new_buffer("S", TY_F32, 1);
	t->extent[0] = nv;
	s->extent[0] = c64(16);
	IrStmt *inner[3] = {
		loop(j, c64(16), FOR_SERIAL, st(s, ir_var(j), ir_cast(ir_f32, ir_var(j)))),
		loop(i, nv, FOR_SERIAL, st(t, iv, ir_binop(IR_MUL, ld(a, iv), f32c(2)))),
		loop(k, nv, FOR_PARALLEL, st(b, ir_var(k), ir_binop(IR_ADD, ld(t, ir_var(k)),
		    ld(s, ir_binop(IR_MOD, ir_var(k), c64(16)))))),
	};
	IrStmt *body[3] = {
		ir_assert(ir_binop(IR_GE, nv, c64(0)), TXC_ERR_SIZE, "chk: N must not be negative"),
		ir_allocate(t, ir_allocate(s, ir_block(inner, 3))),
		ir_allocate(t, loop(p, nv, FOR_PARALLEL,
		    ir_assert(ir_binop(IR_LT, ir_var(p), c64(1000)), 7, "chk: p too large"))),
	};
	f->body = ir_block(body, 3);
	return f;
}

/* ---- references and checks --------------------------------------------------- */

static int32_t
ref_div(int32_t a, int32_t b, bool is_div)
{
	if (b == 0)
		return 0;
	if (b == -1)
		return is_div ? (int32_t)(0u - (uint32_t)a) : 0;
	int32_t q = a / b, r = a % b;
	if (r < 0)   /* Euclidean */
		q = b > 0 ? q - 1 : q + 1;
	if (r < 0)   /* never negative: add |b| */
		r = (int32_t)((uint32_t)r + (b < 0 ? 0u - (uint32_t)b : (uint32_t)b));
	return is_div ? q : r;
}

static int64_t
ref_sat(float x, double lo, double hi)
{
	if (isnan(x))
		return 0;
	if (x <= lo)
		return (int64_t)lo;
	if (x >= hi)
		return (int64_t)hi;
	return (int64_t)x;
}

typedef int (*Fn1)(int64_t, void *, void *);

static void
test_reduce_par(LlvmJit *j)
{
	enum { N = 1000 };
	static float a[N], s[1], b[N];
	int (*red)(int64_t, const float *, float *) = (int (*)(int64_t, const float *, float *))
	    llvm_jit_lookup(j, "red");
	int (*par)(int64_t, const float *, float *) = (int (*)(int64_t, const float *, float *))
	    llvm_jit_lookup(j, "par");
	float ref = 0;

	CHECK(red && par);
	if (!red || !par)
		return;
	for (int i = 0; i < N; i++) {
		a[i] = (float)((i * 37) % 101) / 7.0f - 3.0f;
		ref += a[i];
	}
	CHECK(red(N, a, s) == 0);
	CHECK(s[0] == ref);
	int threads[] = { 1, 3 };
	for (int t = 0; t < 2; t++) {
		txrt_set_num_threads(threads[t]);
		memset(b, 0, sizeof b);
		CHECK(par(N, a, b) == 0);
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += b[i] != a[i] * 3.0f + (float)i;
		CHECK(bad == 0);
	}
	CHECK(par(0, a, b) == 0);
}

static void
test_vec(LlvmJit *j)
{
	enum { N = 21, M = 24 };
	float a[M], a2[2 * M], b[M], c[M], d[M + 8], e[2 * M];
	int (*vec)(int64_t, const float *, const float *, float *, float *, float *, float *) =
	    (int (*)(int64_t, const float *, const float *, float *, float *, float *, float *))
	    llvm_jit_lookup(j, "vec");

	CHECK(vec != NULL);
	if (!vec)
		return;
	for (int i = 0; i < 2 * M; i++)
		a2[i] = (float)i * 0.25f;
	for (int i = 0; i < M; i++)
		a[i] = (float)(i * i % 17) - 4.0f;
	for (int i = 0; i < 2 * M; i++)
		e[i] = -99.0f;
	/* N = 24: every part runs whole vectors */
	CHECK(vec(M, a, a2, b, c, d, e) == 0);
	int bad = 0;
	for (int i = 0; i < M; i++) {
		bad += b[i] != a[i] + 1.0f;
		bad += c[i] != a2[2 * i];
		bad += d[i] != a[i] * 2.0f;
		bad += e[2 * i] != a[i] || e[2 * i + 1] != -99.0f;
	}
	CHECK(bad == 0);
	/* N = 21: the masked loop must not touch d[21..23] */
	for (int i = 0; i < M + 8; i++)
		d[i] = 42.0f;
	CHECK(vec(N, a, a2, b, c, d, e) == 0);
	bad = 0;
	for (int i = 0; i < M + 8; i++)
		bad += d[i] != (i < N ? a[i] * 2.0f : 42.0f);
	CHECK(bad == 0);
}

static void
test_select(LlvmJit *j)
{
	enum { N = 16 };
	/* A sits at the very start of its array; A[-1] would read guard[0] */
	float guard[N + 1], *a = guard + 1, b[N], c[N], v[N];
	int (*sel)(int64_t, const float *, float *, float *, float *) =
	    (int (*)(int64_t, const float *, float *, float *, float *))llvm_jit_lookup(j, "sel");

	CHECK(sel != NULL);
	if (!sel)
		return;
	guard[0] = 1234.0f;
	for (int i = 0; i < N; i++)
		a[i] = (float)(i % 5) - 2.0f;
	CHECK(sel(N, a, b, c, v) == 0);
	int bad = 0;
	for (int i = 0; i < N; i++) {
		bad += b[i] != (a[i] > 0 ? a[i] : 0.5f * a[i]);
		bad += c[i] != (i >= 1 ? a[i - 1] : -1.0f);
		bad += v[i] != (i >= 1 ? a[i - 1] : -1.0f);
	}
	CHECK(bad == 0);
}

static void
test_divmod(LlvmJit *j)
{
	enum { N = 16 };
	int32_t x[N] = { 7, -7, 0, INT32_MIN, 13, -13, 5, INT32_MIN,
		-1, 1, 100, -100, INT32_MAX, 9, -9, 3 };
	int32_t y[N] = { 2, 2, 3, -1, -4, -4, 0, 1,
		3, -3, 7, 7, -1, 0, -2, 33 };
	int32_t q[N], r[N], qv[N], rv[N], sl[N], sr[N];
	int (*dm)(int64_t, const int32_t *, const int32_t *, int32_t *, int32_t *,
	    int32_t *, int32_t *, int32_t *, int32_t *) = (int (*)(int64_t, const int32_t *,
	    const int32_t *, int32_t *, int32_t *, int32_t *, int32_t *, int32_t *, int32_t *))
	    llvm_jit_lookup(j, "divmod");

	CHECK(dm != NULL);
	if (!dm)
		return;
	CHECK(dm(N, x, y, q, r, qv, rv, sl, sr) == 0);
	for (int i = 0; i < N; i++) {
		int32_t eq = ref_div(x[i], y[i], true), er = ref_div(x[i], y[i], false);
		if (q[i] != eq || r[i] != er || qv[i] != eq || rv[i] != er) {
			fprintf(stderr, "%d div %d: got %d %d (vector %d %d), want %d %d\n",
			    x[i], y[i], q[i], r[i], qv[i], rv[i], eq, er);
			failures++;
		}
	}
	/* the rules spelled out (Euclidean): -7 / 2 == -4, 13 / -4 == -3, 13 % -4 == 1, -13 % -4 == 3 */
	CHECK(q[1] == -4 && r[1] == 1 && q[4] == -3 && r[4] == 1 && r[5] == 3);
	/* shifts take the amount modulo 32 */
	for (int i = 0; i < N; i++) {
		uint32_t amt = (uint32_t)y[i] & 31;
		CHECK(sl[i] == (int32_t)((uint32_t)x[i] << amt));
		CHECK(sr[i] == x[i] >> amt);
	}
}

static void
test_casts(LlvmJit *j)
{
	enum { N = 10 };
	float f[N] = { 1.5f, -1.5f, 3e9f, -3e9f, NAN, 255.9f, 256.0f, -0.5f,
		65504.0f, 1.0009765625f };
	int32_t in[N];
	uint8_t u[N];
	uint16_t h[N];
	float g[N];
	int (*cs)(int64_t, const float *, int32_t *, uint8_t *, uint16_t *, float *) =
	    (int (*)(int64_t, const float *, int32_t *, uint8_t *, uint16_t *, float *))
	    llvm_jit_lookup(j, "casts");

	CHECK(cs != NULL);
	if (!cs)
		return;
	CHECK(cs(N, f, in, u, h, g) == 0);
	for (int i = 0; i < N; i++) {
		CHECK(in[i] == ref_sat(f[i], INT32_MIN, INT32_MAX));
		CHECK(u[i] == ref_sat(f[i], 0, 255));
		if (!isnan(f[i]))
			CHECK(g[i] == (float)(_Float16)f[i]);
	}
	CHECK(isnan(g[4]));
	CHECK(h[0] == 0x3e00);        /* 1.5 in binary16 */
}

static void
test_fmisc(LlvmJit *j)
{
	enum { N = 6 };
	float f[N] = { 7.5f, -7.5f, 7.5f, -7.5f, 2.5f, -3.5f };
	float g[N] = { 2.0f, 2.0f, -2.0f, -2.0f, 1.0f, 0.0f };
	/* 1 + 2^-11 ties to even (1.0); 1 + 3*2^-12 rounds up once, not twice */
	double d[N] = { 1.0 + 0x1p-11, 1.0 + 3 * 0x1p-12, 65520.0, -0.1, 1e-8, 0.0 };
	float m[N], r[N];
	uint16_t h[N];
	int (*fm)(int64_t, const float *, const float *, const double *, float *, float *,
	    uint16_t *) = (int (*)(int64_t, const float *, const float *, const double *,
	    float *, float *, uint16_t *))llvm_jit_lookup(j, "fmisc");

	CHECK(fm != NULL);
	if (!fm)
		return;
	CHECK(fm(N, f, g, d, m, r, h) == 0);
	for (int i = 0; i < N - 1; i++) {
		float want = fmodf(f[i], g[i]);
		if (want < 0)
			want += fabsf(g[i]);
		CHECK(m[i] == want);
		CHECK(r[i] == rintf(f[i]));
	}
	CHECK(isnan(m[5]));
	CHECK(r[4] == 2.0f && r[5] == -4.0f);      /* half to even */
	CHECK(h[0] == 0x3c00 && h[1] == 0x3c01);
	CHECK(h[2] == 0x7c00);                      /* overflow: infinity */
	CHECK(h[3] == 0xae66 && h[4] == 0x0000 && h[5] == 0);
}

static void
test_check(LlvmJit *j)
{
	enum { N = 40 };
	float a[N], b[N];
	int (*chk)(int64_t, const float *, float *) =
	    (int (*)(int64_t, const float *, float *))llvm_jit_lookup(j, "chk");

	CHECK(chk != NULL);
	if (!chk)
		return;
	for (int i = 0; i < N; i++)
		a[i] = (float)i - 10.0f;
	CHECK(chk(N, a, b) == 0);
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += b[i] != a[i] * 2.0f + (float)(i % 16);
	CHECK(bad == 0);
	txrt_clear_error();
	CHECK(chk(N, NULL, b) == TXC_ERR_NULL);
	CHECK(strcmp(txrt_last_error(), "chk: argument 'A' is NULL") == 0);
	CHECK(chk(-1, a, b) == TXC_ERR_SIZE);
	CHECK(strcmp(txrt_last_error(), "chk: N must not be negative") == 0);
	/* T cannot be allocated (2^62 bytes): fails before touching A or B */
	CHECK(chk((int64_t)1 << 60, a, b) == TXC_ERR_ALLOC);
	CHECK(strcmp(txrt_last_error(), "chk: out of memory allocating 'T'") == 0);
	/* the failing assert runs on a worker thread (iterations >= 1000) */
	txrt_set_num_threads(2);
	float *big = calloc(2000, sizeof *big), *out = calloc(2000, sizeof *out);
	txrt_clear_error();
	CHECK(chk(2000, big, out) == 7);
	CHECK(strcmp(txrt_last_error(), "chk: p too large") == 0);
	free(big);
	free(out);
}

/* Writes an object for triple (NULL: host) and returns its ELF e_machine. */
static int
object_machine(IrFunc **fs, int n, const char *triple, const char *cpu)
{
	char path[] = "/tmp/llvm_test_XXXXXX";
	int fd = mkstemp(path);
	unsigned char hdr[20];
	LlvmOptions o = { .triple = triple, .cpu = cpu, .opt_level = 2, .debug = true };
	int machine = -1;

	if (fd < 0)
		return -1;
	close(fd);
	if (llvm_emit_file(fs, n, &o, EMIT_OBJ, path)) {
		FILE *fp = fopen(path, "rb");
		if (fp && fread(hdr, 1, 20, fp) == 20 && !memcmp(hdr, "\177ELF", 4))
			machine = hdr[18] | hdr[19] << 8;
		if (fp)
			fclose(fp);
	}
	remove(path);
	return machine;
}

static void
test_emit(IrFunc **fs, int n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	LlvmOptions o = { .opt_level = 0 };

	CHECK(llvm_emit(fs, n, &o, EMIT_LLVM, mem));
	fclose(mem);
	CHECK(text && strstr(text, "define i32 @red(i64"));
	CHECK(text && strstr(text, "ptr noalias"));
	CHECK(text && strstr(text, "txrt_parallel_for"));
	/* par's closure holds what its body uses: A and B, not N (flat accesses) */
	CHECK(text && strstr(text, "%closure = alloca { ptr, ptr }"));
	free(text);
	CHECK(object_machine(fs, n, NULL, NULL) == 62);      /* EM_X86_64 on the build host */
	CHECK(object_machine(fs, n, "aarch64-linux-gnu", NULL) == 183);  /* EM_AARCH64 */
	CHECK(object_machine(fs, n, "x86_64-linux-gnu", "generic") == 62);
}

int
main(void)
{
	IrFunc *fs[] = { k_reduce(), k_par(), k_vec(), k_select(), k_divmod(), k_cast(),
		k_fmisc(), k_check() };
	int n = sizeof fs / sizeof *fs;
	LlvmOptions o = { .opt_level = 3, .no_contract = true };
	int levels[] = { 0, 3 };

	perm = arena_new();
	for (int l = 0; l < 2; l++) {
		o.opt_level = levels[l];
		LlvmJit *j = llvm_jit_compile(fs, n, &o);
		CHECK(j != NULL);
		if (!j)
			break;
		test_reduce_par(j);
		test_vec(j);
		test_select(j);
		test_divmod(j);
		test_casts(j);
		test_fmisc(j);
		test_check(j);
		int (*packed)(void **) = (int (*)(void **))llvm_jit_lookup(j, "red__packed");
		float a[3] = { 1, 2, 4 }, s = 0;
		int64_t three = 3;
		void *args[] = { &three, a, &s };
		CHECK(packed && packed(args) == 0 && s == 7.0f);
		llvm_jit_free(j);
	}
#if defined(__x86_64__)
	test_emit(fs, n);
#endif
	/* LLVM_TEST_DUMP=FILE: the optimised IR, for reading */
	if (getenv("LLVM_TEST_DUMP")) {
		o.opt_level = 3;
		CHECK(llvm_emit_file(fs, n, &o, EMIT_LLVM, getenv("LLVM_TEST_DUMP")));
	}
	if (failures)
		fprintf(stderr, "llvm_test: %d checks failed\n", failures);
	return failures != 0;
}
