/* peak.c: the machine's fp32 FMA peak, measured, for the benchmark table.
 *
 * Each thread runs chains of independent 8-wide FMAs (enough accumulators
 * to cover the FMA latency on two pipes) for a fixed count and reports
 * GFLOP/s.  Prints "peak_gflops_1T X" and "peak_gflops_NT Y".
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 200000000L / 16

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile float sink;

static void *
spin(void *arg)
{
	long iters = *(long *)arg;
	__m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
	__m256 c0 = _mm256_set1_ps(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
	__m256 c6 = c0, c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;
	for (long i = 0; i < iters; i++) {
		c0 = _mm256_fmadd_ps(c0, a, b); c1 = _mm256_fmadd_ps(c1, a, b);
		c2 = _mm256_fmadd_ps(c2, a, b); c3 = _mm256_fmadd_ps(c3, a, b);
		c4 = _mm256_fmadd_ps(c4, a, b); c5 = _mm256_fmadd_ps(c5, a, b);
		c6 = _mm256_fmadd_ps(c6, a, b); c7 = _mm256_fmadd_ps(c7, a, b);
		c8 = _mm256_fmadd_ps(c8, a, b); c9 = _mm256_fmadd_ps(c9, a, b);
		c10 = _mm256_fmadd_ps(c10, a, b); c11 = _mm256_fmadd_ps(c11, a, b);
	}
	__m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
	    _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
	s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
	float out[8];
	_mm256_storeu_ps(out, s);
	sink = out[0];
	return NULL;
}

/* GFLOP/s of `nthreads` threads each spinning `iters` rounds. */
static double
measure(int nthreads, long iters)
{
	pthread_t t[64];
	double t0 = now();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, spin, &iters);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	double dt = now() - t0;
	return (double)nthreads * iters * 12 * 8 * 2 / dt * 1e-9;
}

int
main(int argc, char **argv)
{
	int nt = argc > 1 ? atoi(argv[1]) : 2;
	if (nt < 1 || nt > 64)
		nt = 2;
	long iters = ITERS;
	measure(1, iters / 10);   /* warm up the clocks */
	double best1 = 0, bestn = 0;
	for (int r = 0; r < 3; r++) {
		double g = measure(1, iters);
		if (g > best1)
			best1 = g;
		g = measure(nt, iters);
		if (g > bestn)
			bestn = g;
	}
	printf("peak_gflops_1T %.1f\n", best1);
	printf("peak_gflops_%dT %.1f\n", nt, bestn);
	return 0;
}
