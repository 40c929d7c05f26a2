/* onnx_run.c: times a model txc compiled from bench/onnx_resnet.py's
 * file (bench/onnx.sh builds it with -DSIZE and the object).
 *
 *     onnx_run RUNS OUT.bin     threads from TXRT_NUM_THREADS
 *
 * The input is x[i] = sin(0.001 i) (onnx_ort.js makes the same); one
 * warm-up run, then RUNS timed ones; prints the fastest and the median in
 * milliseconds and writes the 1000 outputs to OUT.bin.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int resnet18(const float *x, float *y);
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
	int runs = argc > 1 ? atoi(argv[1]) : 10;
	if (runs < 1 || runs > 1000 || argc != 3)
		return 2;
	size_t n = (size_t)3 * SIZE * SIZE;
	float *x = malloc(n * sizeof *x), *y = malloc(1000 * sizeof *y);
	double *t = malloc((size_t)runs * sizeof *t);
	if (!x || !y || !t)
		return 1;
	for (size_t i = 0; i < n; i++)
		x[i] = (float)sin(0.001 * (double)i);
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms();
		if (resnet18(x, y)) {
			fprintf(stderr, "resnet18: %s\n", txrt_last_error());
			return 1;
		}
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp);
	printf("%.2f %.2f\n", t[0], t[runs / 2]);
	FILE *fp = fopen(argv[2], "wb");
	if (!fp || fwrite(y, sizeof *y, 1000, fp) != 1000 || fclose(fp))
		return 1;
	free(x);
	free(y);
	free(t);
	return 0;
}
