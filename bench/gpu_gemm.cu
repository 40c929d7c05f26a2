/* gpu_gemm.cu: txc's GEMMs on the GPU beside cuBLAS (tools/gpu-check.sh).
 *
 *     gpu_gemm [M N K] [runs]
 *
 * C = A B in fp32, row-major, on device buffers: txc's kernel
 * (bench/kernels/sgemm_cuda.tx, compiled with --target=cuda, launched
 * through libtxrt) and cublasSgemm, and that file's v4 plan where linked
 * (v4_sgemm_cuda); then cuBLAS's HGEMM (fp16 inputs, fp32
 * accumulation, tensor cores) beside txc's tensor-core kernel
 * (bench/kernels/hgemm_cuda.tx), and the same with bf16 inputs
 * (cublasGemmEx on CUDA_R_16BF; bench/kernels/bgemm_cuda.tx), each also
 * in its 128 x 128 tile of 8 warps (hgemm128_cuda.tx, bgemm128_cuda.tx).
 * On a Hopper GPU (sm_90), where tools/gpu-check.sh links them, the plans
 * of that generation too: hgemm128_tma_cuda.tx (A's tiles by TMA), and
 * for sm_90a the warpgroup plans hgemm_sm90a_cuda.tx, bgemm_sm90a_cuda.tx
 * (wgmma.mma_async) and hgemm_sm90a_tma_cuda.tx (wgmma and TMA); they are
 * weak symbols here, left out where not linked.
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
/* its other plan (schedule sgemm_cuda as v4, linked with --prefix=v4_ by
 * tools/gpu-check.sh), timed beside it where linked */
extern "C" int v4_sgemm_cuda(int64_t M, int64_t N, int64_t K, const float *A, const float *B,
    float *C) __attribute__((weak));
/* the 16-bit GEMMs: fp16 or bf16 inputs, fp32 sums */
typedef int (*Gemm16)(int64_t M, int64_t N, int64_t K, const uint16_t *A, const uint16_t *B,
    float *C);
#define GEMM16(name) extern "C" int name(int64_t M, int64_t N, int64_t K, const uint16_t *A, \
    const uint16_t *B, float *C)
GEMM16(hgemm_cuda);
GEMM16(bgemm_cuda);
GEMM16(hgemm128_cuda);
GEMM16(bgemm128_cuda);
/* Hopper's, linked by gpu-check.sh on an sm_90 GPU only */
GEMM16(hgemm128_tma_cuda) __attribute__((weak));
GEMM16(hgemm_sm90a_cuda) __attribute__((weak));
GEMM16(bgemm_sm90a_cuda) __attribute__((weak));
GEMM16(hgemm_sm90a_tma_cuda) __attribute__((weak));

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
run_txc_v4(void *arg)
{
	Gemm *g = (Gemm *)arg;
	if (v4_sgemm_cuda(g->M, g->N, g->K, g->A, g->B, g->C) != 0) {
		fprintf(stderr, "gpu_gemm: v4_sgemm_cuda: %s\n", txrt_last_error());
		exit(1);
	}
}

/* a 16-bit GEMM of txc's: the kernel and whether its inputs are bf16 */
typedef struct {
	const char *name, *label;
	Gemm16 fn;
	bool bf16;
	Gemm *g;
} Txc16;

static void
run_txc16(void *arg)
{
	Txc16 *t = (Txc16 *)arg;
	Gemm *g = t->g;
	const uint16_t *A = (const uint16_t *)(t->bf16 ? (void *)g->Ab : (void *)g->Ah);
	const uint16_t *B = (const uint16_t *)(t->bf16 ? (void *)g->Bb : (void *)g->Bh);
	if (t->fn(g->M, g->N, g->K, A, B, g->C) != 0) {
		fprintf(stderr, "gpu_gemm: %s: %s\n", t->name, txrt_last_error());
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
pair(int runs, Run theirs, Run ours, void *our_arg, Gemm *g, float *c1, float *c2, size_t nc,
    double *t_theirs, double *t_ours)
{
	*t_theirs = best_of(runs, theirs, g);
	CHECK(cudaMemcpy(c2, g->C, nc * sizeof *c2, cudaMemcpyDeviceToHost));
	CHECK(cudaMemset(g->C, 0xff, nc * sizeof *c1));
	*t_ours = best_of(runs, ours, our_arg);
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
	/* a line at a time: a kernel that hangs (gpu-check.sh runs this under
	 * timeout) leaves the lines of the kernels before it */
	setvbuf(stdout, NULL, _IOLBF, 0);
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
	double ts, tt, err = pair(runs, run_sgemm, run_txc, &g, &g, c1, c2, nc, &ts, &tt);
	printf("  %-30s %10.3f ms %8.2f TFLOP/s\n", "cuBLAS SGEMM (fp32)", ts * 1e3,
	    flop / ts * 1e-12);
	printf("  %-30s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
	    "txc sgemm_cuda (fp32 SIMT)", tt * 1e3, flop / tt * 1e-12, ts / tt, err);
	bool bad = err > 1e-3;
	if (v4_sgemm_cuda) {
		/* the v4 plan beside its own run of cuBLAS */
		double ts4, t4, e4 = pair(runs, run_sgemm, run_txc_v4, &g, &g, c1, c2, nc, &ts4, &t4);
		printf("  %-30s %10.3f ms %8.2f TFLOP/s\n", "cuBLAS SGEMM (fp32)", ts4 * 1e3,
		    flop / ts4 * 1e-12);
		printf("  %-30s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n",
		    "txc sgemm_cuda -s v4 (SIMT)", t4 * 1e3, flop / t4 * 1e-12, ts4 / t4, e4);
		bad |= e4 > 1e-3;
	}
	/* each 16-bit kernel beside its own run of cuBLAS */
	Txc16 k16[] = {
		{ "hgemm_cuda", "(tensor cores)", hgemm_cuda, false, &g },
		{ "bgemm_cuda", "(tensor cores)", bgemm_cuda, true, &g },
		{ "hgemm128_cuda", "(8 warps)", hgemm128_cuda, false, &g },
		{ "bgemm128_cuda", "(8 warps)", bgemm128_cuda, true, &g },
		{ "hgemm128_tma_cuda", "(TMA)", hgemm128_tma_cuda, false, &g },
		{ "hgemm_sm90a_cuda", "(wgmma)", hgemm_sm90a_cuda, false, &g },
		{ "bgemm_sm90a_cuda", "(wgmma)", bgemm_sm90a_cuda, true, &g },
		{ "hgemm_sm90a_tma_cuda", "(wgmma, TMA)", hgemm_sm90a_tma_cuda, false, &g },
	};
	for (size_t i = 0; i < sizeof k16 / sizeof *k16; i++) {
		Txc16 *t = &k16[i];
		if (!t->fn)
			continue;     /* not linked: not this GPU's generation */
		double tc, tk, e = pair(runs, t->bf16 ? run_bgemm : run_hgemm, run_txc16, t, &g, c1, c2,
		    nc, &tc, &tk);
		char what[64];
		snprintf(what, sizeof what, "txc %s %s", t->name, t->label);
		printf("  %-30s %10.3f ms %8.2f TFLOP/s\n", t->bf16 ? "cuBLAS GemmEx (bf16, fp32 acc)" :
		    "cuBLAS HGEMM (fp16, fp32 acc)", tc * 1e3, flop / tc * 1e-12);
		printf("  %-30s %10.3f ms %8.2f TFLOP/s  %.2fx cuBLAS  max error %.3g\n", what,
		    tk * 1e3, flop / tk * 1e-12, tc / tk, e);
		bad |= e > 1e-2;
	}
	cublasDestroy(g.h);
	return bad;
}
