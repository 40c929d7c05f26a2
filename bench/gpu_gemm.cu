/* gpu_gemm.cu: txc's GEMMs on the GPU beside cuBLAS (tools/gpu-check.sh).
 *
 *     gpu_gemm [M N K] [runs]
 *
 * C = A B in fp32, row-major, on device buffers: txc's kernel
 * (bench/kernels/sgemm_cuda.tx, compiled with --target=cuda, launched
 * through libtxrt) and cublasSgemm; then cuBLAS's HGEMM (fp16 inputs, fp32
 * accumulation, tensor cores) beside txc's tensor-core kernel
 * (bench/kernels/hgemm_cuda.tx), and the same with bf16 inputs
 * (cublasGemmEx on CUDA_R_16BF; bench/kernels/bgemm_cuda.tx), each also
 * in its 128 x 128 tile of 8 warps (hgemm128_cuda.tx, bgemm128_cuda.tx).
 * Each prints the best of `runs` timed runs (each followed by
 * a device synchronisation; txc's entry point waits for its kernels
 * itself) in TFLOP/s, the ratio to cuBLAS, and txc's largest
 * relative difference from cuBLAS.  The GPU's name comes first.  Built
 * with nvcc (host code only) against the CUDA runtime and cuBLAS
 * (-lcublas); nothing here asserts a speed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "txrt.h"

extern "C" int sgemm_cuda(int64_t M, int64_t N, int64_t K, const float *A, const float *B,
    float *C);
extern "C" int hgemm_cuda(int64_t M, int64_t N, int64_t K, const uint16_t *A,
    const uint16_t *B, float *C);
extern "C" int bgemm_cuda(int64_t M, int64_t N, int64_t K, const uint16_t *A,
    const uint16_t *B, float *C);
extern "C" int hgemm128_cuda(int64_t M, int64_t N, int64_t K, const uint16_t *A,
    const uint16_t *B, float *C);
extern "C" int bgemm128_cuda(int64_t M, int64_t N, int64_t K, const uint16_t *A,
    const uint16_t *B, float *C);

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "gpu_gemm: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECKB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "gpu_gemm: %s: cuBLAS status %d\n", #x, (int)s_); exit(1); } } while (0)

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef void (*Run)(void *arg);

static double
best_of(int runs, Run fn, void *arg)
{
	double best = 1e30;
	fn(arg);     /* warm-up: module load, cuBLAS heuristics */
	CHECK(cudaDeviceSynchronize());
	for (int r = 0; r < runs; r++) {
		double t0 = now();
		fn(arg);
		CHECK(cudaDeviceSynchronize());
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

typedef struct {
	int64_t M, N, K;
	float *A, *B, *C;
	__half *Ah, *Bh;
	__nv_bfloat16 *Ab, *Bb;
	cublasHandle_t h;
} Gemm;

static void
run_txc(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (sgemm_cuda(g->M, g->N, g->K, g->A, g->B, g->C) != 0) {
		fprintf(stderr, "gpu_gemm: sgemm_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

static void
run_txc_h(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (hgemm_cuda(g->M, g->N, g->K, (const uint16_t *)g->Ah, (const uint16_t *)g->Bh, g->C) != 0) {
		fprintf(stderr, "gpu_gemm: hgemm_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

static void
run_txc_b(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (bgemm_cuda(g->M, g->N, g->K, (const uint16_t *)g->Ab, (const uint16_t *)g->Bb, g->C) != 0) {
		fprintf(stderr, "gpu_gemm: bgemm_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

static void
run_txc_h128(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (hgemm128_cuda(g->M, g->N, g->K, (const uint16_t *)g->Ah, (const uint16_t *)g->Bh,
	    g->C) != 0) {
		fprintf(stderr, "gpu_gemm: hgemm128_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

static void
run_txc_b128(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (bgemm128_cuda(g->M, g->N, g->K, (const uint16_t *)g->Ab, (const uint16_t *)g->Bb,
	    g->C) != 0) {
		fprintf(stderr, "gpu_gemm: bgemm128_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

/* row-major C = A B is column-major C^T = B^T A^T */
static void
run_sgemm(void *arg)
{
	Gemm *g = (Gemm *)arg;
	const float one = 1, zero = 0;
	CHECKB(cublasSgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g->N, (int)g->M, (int)g->K, &one,
	    g->B, (int)g->N, g->A, (int)g->K, &zero, g->C, (int)g->N));
}

static void
run_hgemm(void *arg)
{
	Gemm *g = (Gemm *)arg;
	const float one = 1, zero = 0;
	CHECKB(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g->N, (int)g->M, (int)g->K, &one,
	    g->Bh, CUDA_R_16F, (int)g->N, g->Ah, CUDA_R_16F, (int)g->K, &zero, g->C, CUDA_R_32F,
	    (int)g->N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void
run_bgemm(void *arg)
{
	Gemm *g = (Gemm *)arg;
	const float one = 1, zero = 0;
	CHECKB(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)g->N, (int)g->M, (int)g->K, &one,
	    g->Bb, CUDA_R_16BF, (int)g->N, g->Ab, CUDA_R_16BF, (int)g->K, &zero, g->C, CUDA_R_32F,
	    (int)g->N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* cuBLAS's run, then txc's into a C filled with NaNs, each the best of
 * runs: their times, and txc's largest relative difference from cuBLAS. */
static double
pair(int runs, Run theirs, Run ours, Gemm *g, float *c1, float *c2, size_t nc, double *t_theirs,
    double *t_ours)
{
	*t_theirs = best_of(runs, theirs, g);
	CHECK(cudaMemcpy(c2, g->C, nc * sizeof *c2, cudaMemcpyDeviceToHost));
	CHECK(cudaMemset(g->C, 0xff, nc * sizeof *c1));
	*t_ours = best_of(runs, ours, g);
	CHECK(cudaMemcpy(c1, g->C, nc * sizeof *c1, cudaMemcpyDeviceToHost));
	double err = 0;
	for (size_t i = 0; i < nc; i++) {
		double d = fabs((double)c1[i] - (double)c2[i]) / fmax(1.0, fabs((double)c2[i]));
		if (!(d <= err))
			err = isnan(d) ? INFINITY : d;
	}
	return err;
}

int
main(int argc, char **argv)
{
	int64_t M = argc > 3 ? atoll(argv[1]) : 4096, N = argc > 3 ? atoll(argv[2]) : 4096;
	int64_t K = argc > 3 ? atoll(argv[3]) : 4096;
	int runs = argc > 4 ? atoi(argv[4]) : 10;
	size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
	float *ha = (float *)malloc(na * sizeof *ha), *hb = (float *)malloc(nb * sizeof *hb);
	float *c1 = (float *)malloc(nc * sizeof *c1), *c2 = (float *)malloc(nc * sizeof *c2);
	__half *hah = (__half *)malloc(na * sizeof *hah), *hbh = (__half *)malloc(nb * sizeof *hbh);
	__nv_bfloat16 *hab = (__nv_bfloat16 *)malloc(na * sizeof *hab);
	__nv_bfloat16 *hbb = (__nv_bfloat16 *)malloc(nb * sizeof *hbb);
	if (!ha || !hb || !c1 || !c2 || !hah || !hbh || !hab || !hbb)
		return 1;
	srand(1);
	for (size_t i = 0; i < na; i++) {
		ha[i] = (float)rand() / RAND_MAX - 0.5f;
		hah[i] = __float2half(ha[i]);
		hab[i] = __float2bfloat16(ha[i]);
	}
	for (size_t i = 0; i < nb; i++) {
		hb[i] = (float)rand() / RAND_MAX - 0.5f;
		hbh[i] = __float2half(hb[i]);
		hbb[i] = __float2bfloat16(hb[i]);
	}
	struct cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	Gemm g = { M, N, K, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	CHECK(cudaMalloc((void **)&g.A, na * sizeof *ha));
	CHECK(cudaMalloc((void **)&g.B, nb * sizeof *hb));
	CHECK(cudaMalloc((void **)&g.C, nc * sizeof *c1));
	CHECK(cudaMalloc((void **)&g.Ah, na * sizeof *hah));
	CHECK(cudaMalloc((void **)&g.Bh, nb * sizeof *hbh));
	CHECK(cudaMemcpy(g.A, ha, na * sizeof *ha, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(g.B, hb, nb * sizeof *hb, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(g.Ah, hah, na * sizeof *hah, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(g.Bh, hbh, nb * sizeof *hbh, cudaMemcpyHostToDevice));
	CHECK(cudaMalloc((void **)&g.Ab, na * sizeof *hab));
	CHECK(cudaMalloc((void **)&g.Bb, nb * sizeof *hbb));
	CHECK(cudaMemcpy(g.Ab, hab, na * sizeof *hab, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(g.Bb, hbb, nb * sizeof *hbb, cudaMemcpyHostToDevice));
	CHECKB(cublasCreate(&g.h));

	double flop = 2.0 * (double)M * (double)N * (double)K;
	printf("gpu_gemm: %s (sm_%d%d), M=%lld N=%lld K=%lld, best of %d\n", prop.name,
	    prop.major, prop.minor, (long long)M, (long long)N, (long long)K, runs);
	double ts, tt, err = pair(runs, run_sgemm, run_txc, &g, c1, c2, nc, &ts, &tt);
	double th, tth, errh = pair(runs, run_hgemm, run_txc_h, &g, c1, c2, nc, &th, &tth);
	double tb, ttb, errb = pair(runs, run_bgemm, run_txc_b, &g, c1, c2, nc, &tb, &ttb);
	double th2, tth2, errh2 = pair(runs, run_hgemm, run_txc_h128, &g, c1, c2, nc, &th2, &tth2);
	double tb2, ttb2, errb2 = pair(runs, run_bgemm, run_txc_b128, &g, c1, c2, nc, &tb2, &ttb2);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s\n", "cuBLAS SGEMM (fp32)", ts * 1e3, flop / ts * 1e-12);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc sgemm_cuda (fp32 SIMT)", tt * 1e3, flop / tt * 1e-12, ts / tt, err);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s\n", "cuBLAS HGEMM (fp16, fp32 acc)", th * 1e3,
	    flop / th * 1e-12);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc hgemm_cuda (tensor cores)", tth * 1e3, flop / tth * 1e-12, th / tth, errh);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s\n", "cuBLAS GemmEx (bf16, fp32 acc)", tb * 1e3,
	    flop / tb * 1e-12);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc bgemm_cuda (tensor cores)", ttb * 1e3, flop / ttb * 1e-12, tb / ttb, errb);
	/* the 128 x 128 tiles, each beside cuBLAS's second run */
	printf("  %-28s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc hgemm128_cuda (8 warps)", tth2 * 1e3, flop / tth2 * 1e-12, th2 / tth2, errh2);
	printf("  %-28s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc bgemm128_cuda (8 warps)", ttb2 * 1e3, flop / ttb2 * 1e-12, tb2 / ttb2, errb2);
	cublasDestroy(g.h);
	return err > 1e-3 || errh > 1e-2 || errb > 1e-2 || errh2 > 1e-2 || errb2 > 1e-2;
}
