/* bench.h: what every benchmark program shares: seeded random data, a
 * timing loop (warm-up, then the fastest of repeated runs) and the output
 * line the table script reads:
 *
 *     case=NAME impl=NAME threads=N gflops=X ms=Y err=Z
 */
#ifndef TXC_BENCH_H
#define TXC_BENCH_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double
bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void
bench_fill(float *p, size_t n, uint64_t seed)
{
	uint64_t s = seed * 6364136223846793005u + 1442695040888963407u;
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		p[i] = (float)((double)(s >> 40) / (double)(1u << 24)) * 2.0f - 1.0f;
	}
}

/* n int8 values, each the top byte of the next step of the LCG whose
 * state *s carries from one call to the next (the int8 drivers draw their
 * two operands from one sequence) */
static inline void
bench_fill_i8(int8_t *p, size_t n, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (int8_t)((*s = *s * 6364136223846793005u + 1442695040888963407u) >> 56);
}

/* n bf16 values: bench_fill's, truncated to their upper 16 bits */
static inline void
bench_fill_bf16(uint16_t *h, size_t n, uint64_t seed)
{
	float *t = malloc(sizeof *t * (n ? n : 1));
	if (!t) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	bench_fill(t, n, seed);
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &t[i], sizeof u);
		h[i] = (uint16_t)(u >> 16);
	}
	free(t);
}

/* the float a bf16 value stands for */
static inline float
bench_bf16_value(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline void *
bench_alloc(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	memset(p, 0, bytes);
	return p;
}

/* Runs fn(ctx) for a warm-up, then enough repetitions to fill about
 * `budget` seconds (at least 5, at most 200), and returns the time of the
 * fastest run in seconds, as Halide's benchmark() does.  On a shared
 * machine (a virtual one whose cores are lent to others) the slow runs
 * measure the neighbours: with the median, one kernel of 0.2 ms on two
 * threads read 0.71 of oneDNN in one sweep and 0.88 in the next, where
 * the fastest runs agreed within 1%.  The same policy for txc and every
 * reference. */
static inline double
bench_time(void (*fn)(void *), void *ctx, double budget)
{
	double t0 = bench_now();
	fn(ctx);
	fn(ctx);
	double once = (bench_now() - t0) / 2;
	int reps = once > 0 ? (int)(budget / once) : 200;
	if (reps < 5)
		reps = 5;
	if (reps > 200)
		reps = 200;
	double *t = malloc(sizeof *t * (size_t)reps);
	for (int r = 0; r < reps; r++) {
		double s = bench_now();
		fn(ctx);
		t[r] = bench_now() - s;
	}
	double best = t[0];
	for (int r = 1; r < reps; r++)
		if (t[r] < best)
			best = t[r];
	free(t);
	return best;
}

static inline void
bench_report(const char *cas, const char *impl, int threads, double flops,
    double secs, double err)
{
	printf("case=%s impl=%s threads=%d gflops=%.2f ms=%.3f err=%.2e\n", cas,
	    impl, threads, flops / secs * 1e-9, secs * 1e3, err);
	fflush(stdout);
}

static inline int
bench_threads(void)
{
	const char *s = getenv("BENCH_THREADS");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}

#endif
