/* matmul_main.c: runs the matmul kernel that txc compiled from matmul.tx.
 *
 *     txc examples/matmul.tx -o matmul.o
 *     cc -O2 -o matmul examples/matmul_main.c matmul.o -ltxrt -lpthread -lm
 *     ./matmul [M N K]
 *
 * Fills A and B with random numbers, calls matmul, compares C with a naive
 * triple loop (in double precision) and prints the largest error and the
 * speed of the best of several runs.  Exits 1 if the result is wrong or
 * the kernel reports an error.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The entry point txc generates (`txc -H matmul.h` writes this prototype):
 * sizes first, as int64_t, then the tensors in declaration order. */
int matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
/* libtxrt: the message of the calling thread's last error. */
const char *txrt_last_error(void);

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *
alloc(int64_t n)
{
	float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
	if (!p) {
		fprintf(stderr, "matmul: out of memory\n");
		exit(1);
	}
	return p;
}

static int64_t
arg(int argc, char **argv, int i, int64_t dflt)
{
	if (i >= argc)
		return dflt;
	char *end;
	long long v = strtoll(argv[i], &end, 10);
	if (*end || v < 1 || v > 16384) {
		fprintf(stderr, "matmul: bad size '%s' (1 to 16384)\n", argv[i]);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	int64_t M = arg(argc, argv, 1, 512);
	int64_t N = arg(argc, argv, 2, M);
	int64_t K = arg(argc, argv, 3, M);
	float *A = alloc(M * K), *B = alloc(K * N), *C = alloc(M * N);

	srand(1);
	for (int64_t i = 0; i < M * K; i++)
		A[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	for (int64_t i = 0; i < K * N; i++)
		B[i] = (float)rand() / (float)RAND_MAX - 0.5f;

	/* Best of several runs, at least 0.2 s in all. */
	double best = 1e30, total = 0;
	for (int run = 0; run < 50 && (run < 3 || total < 0.2); run++) {
		double t = now();
		if (matmul(M, N, K, A, B, C) != 0) {
			fprintf(stderr, "matmul: %s\n", txrt_last_error());
			return 1;
		}
		t = now() - t;
		total += t;
		if (t < best)
			best = t;
	}

	/* The naive loop, in double; the tolerance grows with K because the
	 * kernel may add the products in another order. */
	double maxerr = 0;
	double *row = malloc((size_t)N * sizeof *row);
	if (!row)
		return fprintf(stderr, "matmul: out of memory\n"), 1;
	for (int64_t i = 0; i < M; i++) {
		for (int64_t j = 0; j < N; j++)
			row[j] = 0;
		for (int64_t k = 0; k < K; k++)
			for (int64_t j = 0; j < N; j++)
				row[j] += (double)A[i * K + k] * (double)B[k * N + j];
		for (int64_t j = 0; j < N; j++) {
			double e = fabs(row[j] - (double)C[i * N + j]);
			if (!(e <= maxerr))
				maxerr = e;
		}
	}
	double tol = 1e-6 * (double)K + 1e-6;
	bool ok = maxerr <= tol;
	printf("matmul %lldx%lldx%lld: max error %.3g (%s, tolerance %.3g)\n",
	    (long long)M, (long long)N, (long long)K, maxerr, ok ? "ok" : "WRONG", tol);
	printf("best of runs: %.3f ms, %.2f GFLOP/s\n", best * 1e3,
	    2.0 * (double)M * (double)N * (double)K / best * 1e-9);
	free(row);
	free(A);
	free(B);
	free(C);
	return ok ? 0 : 1;
}
