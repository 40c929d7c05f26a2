/* onnx_time.c: times one entry point txc compiled from a model
 * (bench/onnx.sh and bench/onnx_public.sh build it with the model's object
 * and a one-line wrapper, run_model, that calls the entry point with
 * sizes s[], input in and output out).
 *
 *     onnx_time RUNS SIZES IN_ELEMS OUT_ELEMS [OUT.bin]
 *                                              threads: TXRT_NUM_THREADS
 *
 * SIZES are the dynamic sizes, comma separated ("-" for none).  The input
 * is x[i] = sin(0.001 i) (onnx_ort.js and onnx_public.js make the same);
 * one warm-up run, then RUNS timed ones; prints the fastest and the median
 * in milliseconds, and writes the output to OUT.bin when given.
 */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int run_model(const int64_t *s, const float *in, float *out);
const char *txrt_last_error(void);

static double
now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	if (argc != 5 && argc != 6)
		return 2;
	int runs = atoi(argv[1]);
	int64_t s[8] = { 0 };
	int ns = 0;
	for (char *p = argv[2]; *p && *p != '-' && ns < 8; ns++) {
		s[ns] = strtoll(p, &p, 10);
		if (*p == ',')
			p++;
	}
	long long nin = atoll(argv[3]), nout = atoll(argv[4]);
	if (runs < 1 || runs > 1000 || nin < 1 || nout < 1)
		return 2;
	float *x = malloc((size_t)nin * sizeof *x), *y = malloc((size_t)nout * sizeof *y);
	double *t = malloc((size_t)runs * sizeof *t);
	if (!x || !y || !t)
		return 1;
	for (long long i = 0; i < nin; i++)
		x[i] = (float)sin(0.001 * (double)i);
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms();
		if (run_model(s, x, y)) {
			fprintf(stderr, "onnx_time: %s\n", txrt_last_error());
			return 1;
		}
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp);
	printf("%.3f %.3f\n", t[0], t[runs / 2]);
	if (argc == 6) {
		FILE *fp = fopen(argv[5], "wb");
		if (!fp || fwrite(y, sizeof *y, (size_t)nout, fp) != (size_t)nout || fclose(fp))
			return 1;
	}
	free(x);
	free(y);
	free(t);
	return 0;
}
