/* features_test.c: the cost model's features of a loop nest (tune/features.c).
 *
 * On a small matmul template: a point's features are the same each time
 * they are computed; points that differ in a knob the nest shows differ in
 * the features that describe it (a vectorized inner loop sets the vector
 * lanes and the innermost-vectorized flag; a larger tile a larger
 * innermost extent); every feature is finite.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune/tune.h"

#include "lower/lower.h"
#include "parser/parser.h"
#include "sema/sema.h"

static const char *src =
    "kernel mm(M, N, K) {\n"
    "  in  A: f32[M, K];\n"
    "  in  B: f32[K, N];\n"
    "  out C: f32[M, N];\n"
    "  C[i, j] = sum(k < K) A[i, k] * B[k, j];\n"
    "}\n"
    "schedule mm for cpu {\n"
    "  knob tj in [4, 16];\n"
    "  knob vec in [0, 1];\n"
    "  C.split(j, tj) -> (jo, ji);\n"
    "  C.reorder(i, jo, k, ji);\n"
    "  when (vec == 1) { C.vectorize(ji); }\n"
    "}\n";

static int failures;
#define CHECK(c) do { if (!(c)) { printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

int
main(void)
{
	perm = arena_new();
	uint32_t file = source_add("f.tx", src, strlen(src));
	Program *p = parse_program(file);
	CHECK(p && !diag_errors() && sema_check(p));
	if (failures)
		return 1;
	Kernel *k = p->kernels[0];
	Schedule *s = p->schedules[0];
	Space sp = space_of(s);
	const char *names[] = { intern_cstr("M"), intern_cstr("N"), intern_cstr("K") };
	int64_t values[] = { 32, 64, 16 };
	WorkerConfig wc = { .prog = p, .k = k, .s = s, .target = "cpu", .def_names = names,
	    .def_values = values, .ndefs = 3 };
	Search *x = search_new(p, k, s, &sp, &wc, NULL, 1, 4);
	float a[512], b[512], c[512], d[512];
	CHECK(features_count > 0 && features_count <= 512);
	int p00[TUNE_MAX_KNOBS] = { 0, 0 }, p01[TUNE_MAX_KNOBS] = { 0, 1 },
	    p10[TUNE_MAX_KNOBS] = { 1, 0 };
	CHECK(search_features(x, p00, a));
	Search *y = search_new(p, k, s, &sp, &wc, NULL, 1, 4);   /* no cache shared */
	CHECK(search_features(y, p00, b));
	CHECK(!memcmp(a, b, (size_t)features_count * sizeof *a));
	CHECK(search_features(x, p01, c));
	CHECK(search_features(x, p10, d));
	int diff_vec = 0, diff_tile = 0;
	for (int i = 0; i < features_count; i++) {
		CHECK(isfinite(a[i]) && isfinite(c[i]) && isfinite(d[i]));
		diff_vec += a[i] != c[i];
		diff_tile += a[i] != d[i];
	}
	CHECK(diff_vec > 0);
	CHECK(diff_tile > 0);
	/* the heaviest store's vector lanes: log2(1 + 4) vectorized, log2(1 + 1) not */
	bool lanes = false;
	for (int i = 0; i < features_count; i++)
		lanes |= fabsf(c[i] - (float)log2(5.0)) < 1e-6f && a[i] == 1;   /* log2(1 + 1) */
	CHECK(lanes);
	printf("%s: %d features, %d differ with vectorize, %d with the tile\n",
	    failures ? "FAIL" : "ok", features_count, diff_vec, diff_tile);
	return failures ? 1 : 0;
}
