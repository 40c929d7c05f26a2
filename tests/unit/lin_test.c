/* lin_test.c: unit tests of the lowering prover (lower/lin_prove.c, with
 * the intervals of lower/lin_interval.c) and of the size facts a loop
 * that runs gives it (lower/facts.c): which floors a non-empty range
 * implies, and the proofs those floors make possible
 * (the first element, a remainder and a quotient by a size, the last
 * element of an M*K tensor).  No sizes, no proof: each is also checked
 * to fail without its fact. */
#include <stdio.h>
#include <string.h>

#include "lower/lower.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); } } while (0)

static IrExpr *c(int64_t v) { return ir_i64c(v); }
static IrExpr *add(IrExpr *a, IrExpr *b) { return ir_add(a, b); }
static IrExpr *sub(IrExpr *a, IrExpr *b) { return ir_sub(a, b); }
static IrExpr *mul(IrExpr *a, IrExpr *b) { return ir_mul(a, b); }

/* A kernel f(N, M, K) with the three sizes, and a Lower around it. */
static Lower L;
static Kernel k;
static Param params[3] = { { .name = "N", .is_size = true }, { .name = "M", .is_size = true },
	{ .name = "K", .is_size = true } };
static IrExpr *N, *M, *K;
static VarRange *sizes;

static void
setup(void)
{
	k.name = "f";
	k.params = params;
	k.nparams = 3;
	L.k = &k;
	L.params = arena_alloc(ir_arena, 4 * sizeof *L.params);
	IrExpr **e[3] = { &N, &M, &K };
	for (int i = 0; i < 3; i++) {
		L.params[i] = ir_new_var(params[i].name, ir_i64);
		*e[i] = ir_var(L.params[i]);
		sizes = lin_push(sizes, L.params[i], c(0), NULL, false);
	}
	L.ranges = sizes;
	L.floor0 = facts_base(&L);
}

/* The floors [lo, hi] non-empty gives, as "N M K" values. */
static void
floors_of(IrExpr *lo, IrExpr *hi, int64_t n, int64_t m, int64_t kk)
{
	int64_t *f = facts_copy(&L, L.floor0);
	facts_nonempty(&L, lo, hi, f);
	if (f[0] != n || f[1] != m || f[2] != kk) {
		failures++;
		fprintf(stderr, "floors of [%s, %s]: %lld %lld %lld, want %lld %lld %lld\n",
		    ir_expr_str(lo), ir_expr_str(hi), (long long)f[0], (long long)f[1],
		    (long long)f[2], (long long)n, (long long)m, (long long)kk);
	}
}

static void
test_floors(void)
{
	floors_of(c(0), sub(N, c(1)), 1, 0, 0);                 /* 0 <= i < N */
	floors_of(c(0), sub(ir_div(add(N, c(7)), c(8)), c(1)), 1, 0, 0);   /* the blocks of a split */
	floors_of(c(0), sub(mul(M, K), c(1)), 0, 1, 1);         /* M*K elements */
	floors_of(c(0), sub(N, c(5)), 5, 0, 0);
	floors_of(c(3), add(N, c(2)), 1, 0, 0);
	floors_of(c(-1), N, 0, 0, 0);                           /* says nothing */
	floors_of(c(0), sub(add(N, M), c(1)), 0, 0, 0);         /* N or M: nothing */
	floors_of(c(0), ir_min(sub(N, c(1)), sub(K, c(2))), 1, 0, 2);   /* both */
	floors_of(c(0), ir_max(sub(N, c(1)), sub(K, c(2))), 0, 0, 0);   /* either */
	/* a fused loop: N*((K + 3)/4) iterations */
	floors_of(c(0), sub(mul(N, ir_div(add(K, c(3)), c(4))), c(1)), 1, 0, 1);
}

/* a <= b under the sizes with floors n, m, kk */
static bool
le(IrExpr *a, IrExpr *b, int64_t n, int64_t m, int64_t kk)
{
	int64_t f[3] = { n, m, kk };
	return lin_prove_le(a, b, facts_scope(&L, sizes, f));
}

static void
test_proofs(void)
{
	/* a[0] and a[N - 1] of a: f32[N] */
	CHECK(le(c(0), sub(N, c(1)), 1, 0, 0));
	CHECK(!le(c(0), sub(N, c(1)), 0, 0, 0));
	/* clamp(i - 1, 0, N - 1) >= 0: min(0, N - 1) >= 0 */
	CHECK(le(c(0), ir_min(c(0), sub(N, c(1))), 1, 0, 0));
	CHECK(!le(c(0), ir_min(c(0), sub(N, c(1))), 0, 0, 0));
	/* a % N is at most N - 1 only where N >= 1 (x % 0 is 0) */
	Var *iv = ir_new_var("i", ir_i64);
	IrExpr *i = ir_var(iv);
	VarRange *r = lin_push(facts_scope(&L, sizes, (int64_t[]){ 1, 0, 0 }), iv, c(0),
	    sub(N, c(1)), true);
	IrExpr *lo, *hi;
	CHECK(lin_interval(ir_mod(add(i, c(1)), N), r, NULL, &lo, &hi));
	CHECK(lin_interval(ir_mod(add(i, c(1)), N), lin_push(sizes, iv, c(0), sub(N, c(1)), true),
	    NULL, &lo, &hi) == false);
	/* b[i] = a[i / K, i % K] with i < M*K: (M*K - 1)/K <= M - 1 */
	IrExpr *q = ir_div(sub(mul(M, K), c(1)), K);
	CHECK(le(q, sub(M, c(1)), 0, 1, 1));
	CHECK(!le(q, sub(M, c(1)), 0, 1, 0));
	CHECK(le(c(0), q, 0, 1, 1));
	/* c[i, j] = b[i*K + j]: (M - 1)*K + K - 1 <= M*K - 1, and K*M is M*K */
	CHECK(le(add(mul(sub(M, c(1)), K), sub(K, c(1))), sub(mul(M, K), c(1)), 0, 0, 0));
	CHECK(le(mul(K, M), mul(M, K), 0, 0, 0));
	CHECK(!le(add(mul(M, K), c(1)), mul(M, K), 0, 0, 0));
	/* a floor never hides a stronger range (a shift_inward split's N >= 8) */
	VarRange *s8 = lin_push(sizes, L.params[0], c(8), NULL, false);
	CHECK(lin_prove_le(c(8), N, facts_scope(&L, s8, (int64_t[]){ 1, 0, 0 })));
}

int
main(void)
{
	ir_arena = arena_new();
	setup();
	test_floors();
	test_proofs();
	if (failures)
		fprintf(stderr, "lin_test: %d failures\n", failures);
	return failures != 0;
}
