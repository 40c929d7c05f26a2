/* gpu_main.c: runs a step of the GPU tutorial (gpu-*.tx) on device memory.
 *
 *     txc --target=cuda examples/tutorial/gpu-4-thread-tile.tx -o mm.o
 *     cc -O2 -o mm examples/tutorial/gpu_main.c mm.o -ltxrt -lpthread -ldl -lm
 *     ./mm [M N K]                          on the GPU (default 1024 cubed)
 *     TXRT_CUDA=emulate ./mm 100 70 50      in libtxrt's emulator, on the CPU
 *
 * (In the build tree, link rt/.libs/libtxrt.a instead of -ltxrt.)  The
 * entry point that txc writes for --target=cuda has the signature of the
 * CPU one, but its tensors are device pointers: this program allocates A,
 * B and C with txrt_cuda_malloc, copies A and B in, calls matmul, copies C
 * back and compares it with a naive triple loop (in double precision).  On
 * a GPU it prints the best time of several calls and the GFLOP/s; in the
 * emulator, which runs one fiber per GPU thread and checks every access
 * (out of bounds, shared-memory races, reads of unwritten shared memory),
 * it runs once and prints only the error.  Exits 1 if the kernel fails or
 * the result is wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The entry point (`txc --target=cuda -H mm.h` writes this prototype). */
int matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
/* libtxrt (txrt.h): device memory, the mode, the last error's message. */
void *txrt_cuda_malloc(size_t bytes);
void txrt_cuda_free(void *dev);
int txrt_cuda_memcpy_htod(void *dev, const void *host, size_t bytes);
int txrt_cuda_memcpy_dtoh(void *host, const void *dev, size_t bytes);
const char *txrt_cuda_device_name(void);
const char *txrt_last_error(void);

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t
arg(int argc, char **argv, int i, int64_t dflt)
{
	if (i >= argc)
		return dflt;
	char *end;
	long long v = strtoll(argv[i], &end, 10);
	if (*end || v < 1 || v > 16384) {
		fprintf(stderr, "gpu_main: bad size '%s' (1 to 16384)\n", argv[i]);
		exit(2);
	}
	return v;
}

/* libtxrt's messages name the function or kernel that failed. */
static void
fail(void)
{
	fprintf(stderr, "gpu_main: %s\n", txrt_last_error());
	exit(1);
}

int
main(int argc, char **argv)
{
	int64_t M = arg(argc, argv, 1, 1024);
	int64_t N = arg(argc, argv, 2, M);
	int64_t K = arg(argc, argv, 3, M);
	size_t sa = (size_t)(M * K) * sizeof(float), sb = (size_t)(K * N) * sizeof(float);
	size_t sc = (size_t)(M * N) * sizeof(float);
	float *A = malloc(sa), *B = malloc(sb), *C = malloc(sc);
	if (!A || !B || !C) {
		fprintf(stderr, "gpu_main: out of memory\n");
		return 1;
	}
	srand(1);
	for (int64_t i = 0; i < M * K; i++)
		A[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	for (int64_t i = 0; i < K * N; i++)
		B[i] = (float)rand() / (float)RAND_MAX - 0.5f;

	float *dA = txrt_cuda_malloc(sa), *dB = txrt_cuda_malloc(sb), *dC = txrt_cuda_malloc(sc);
	if (!dA || !dB || !dC)
		fail();
	if (txrt_cuda_memcpy_htod(dA, A, sa) || txrt_cuda_memcpy_htod(dB, B, sb))
		fail();

	/* Launches are synchronous: the call returns when the kernels are done. */
	const char *dev = txrt_cuda_device_name();
	int emulated = strcmp(dev, "emulator") == 0;
	double best = 1e30, total = 0;
	for (int run = 0; run < (emulated ? 1 : 50) && (run < 3 || total < 0.2); run++) {
		double t = now();
		if (matmul(M, N, K, dA, dB, dC) != 0)
			fail();
		t = now() - t;
		total += t;
		if (t < best)
			best = t;
	}
	if (txrt_cuda_memcpy_dtoh(C, dC, sc))
		fail();

	/* Check against a naive loop: the largest error relative to the
	 * magnitude of the terms summed. */
	double maxerr = 0;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0, mag = 0;
			for (int64_t k = 0; k < K; k++) {
				s += (double)A[i * K + k] * B[k * N + j];
				mag += fabs((double)A[i * K + k] * B[k * N + j]);
			}
			double e = fabs(s - C[i * N + j]) / (mag > 1e-30 ? mag : 1);
			if (e > maxerr)
				maxerr = e;
		}
	printf("matmul %lld x %lld x %lld on %s: max relative error %.2g", (long long)M,
	    (long long)N, (long long)K, dev, maxerr);
	if (emulated)
		printf(" (emulated, not timed)\n");
	else
		printf(", %.3f ms, %.1f GFLOP/s\n", best * 1e3, 2.0 * M * N * K / best * 1e-9);
	txrt_cuda_free(dA);
	txrt_cuda_free(dB);
	txrt_cuda_free(dC);
	free(A);
	free(B);
	free(C);
	return maxerr < 1e-4 ? 0 : 1;
}
