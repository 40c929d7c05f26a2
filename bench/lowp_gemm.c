/* lowp_gemm.c: int8 and bf16 matrix products, row-major, timed through
 * one implementation chosen at build time: -DIMPL_TXC (a txc object
 * exporting the stdlib's `gemm_i8` and `matmul_bf16`) or -DIMPL_DNNL
 * (oneDNN: dnnl_gemm_s8s8s32 for int8, a matmul primitive with bf16
 * source and weights and an f32 destination for bf16).
 *
 *     lowp_gemm i8 M N K       C(i32) = A(i8) B(i8)
 *     lowp_gemm bf16 M N K     C(f32) = A(bf16) B(bf16)
 *
 * prints one bench.h line (GFLOP/s counting a multiply-add as 2
 * operations, as for sgemm).  Where oneDNN cannot run a case (no bf16
 * matmul without AVX512_BF16 or AVX512-core in oneDNN 2.6) it says why
 * on stderr and prints no line: the table shows "-".  The error column:
 * int8, the largest difference of 512 sampled entries from an exact i32
 * sum (0 expected: oneDNN's AVX2 int8 GEMM may saturate intermediate
 * sums); bf16, relative to the sum of the products' magnitudes.
 */
#include "bench.h"

#if defined(IMPL_DNNL)
#include <dnnl.h>
#define IMPL "onednn"
#elif defined(IMPL_TXC)
#include "txrt.h"
int gemm_i8(int64_t M, int64_t N, int64_t K, const int8_t *A, const int8_t *B, int32_t *C);
int matmul_bf16(int64_t M, int64_t N, int64_t K, const uint16_t *A, const uint16_t *B,
    float *C);
#define IMPL "txc"
#else
#error "define IMPL_TXC or IMPL_DNNL"
#endif

typedef struct {
	int M, N, K;
	int bf;                 /* bf16 (else int8) */
	int8_t *A, *B;
	uint16_t *Ah, *Bh;
	int32_t *C;
	float *Cf;
#if defined(IMPL_DNNL)
	dnnl_primitive_t prim;
	dnnl_stream_t stream;
	dnnl_memory_t ma, mb, mc;
#endif
} Ctx;

#if defined(IMPL_DNNL)
/* oneDNN's status as a reason, or NULL on success */
static const char *
why(dnnl_status_t st)
{
	return st == dnnl_success ? NULL : st == dnnl_unimplemented ?
	    "oneDNN has no implementation for this CPU" : "oneDNN error";
}

static const char *
dnnl_setup(Ctx *c)
{
	dnnl_engine_t engine;
	dnnl_memory_desc_t a, b, d;
	dnnl_matmul_desc_t md;
	dnnl_primitive_desc_t pd;
	const char *w;
	dnnl_dims_t da = { c->M, c->K }, db = { c->K, c->N }, dc = { c->M, c->N };
	if ((w = why(dnnl_engine_create(&engine, dnnl_cpu, 0))) ||
	    (w = why(dnnl_stream_create(&c->stream, engine, dnnl_stream_default_flags))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&a, 2, da, dnnl_bf16, dnnl_ab))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&b, 2, db, dnnl_bf16, dnnl_ab))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&d, 2, dc, dnnl_f32, dnnl_ab))) ||
	    (w = why(dnnl_matmul_desc_init(&md, &a, &b, NULL, &d))) ||
	    (w = why(dnnl_primitive_desc_create(&pd, &md, NULL, engine, NULL))) ||
	    (w = why(dnnl_primitive_create(&c->prim, pd))) ||
	    (w = why(dnnl_memory_create(&c->ma, &a, engine, c->Ah))) ||
	    (w = why(dnnl_memory_create(&c->mb, &b, engine, c->Bh))) ||
	    (w = why(dnnl_memory_create(&c->mc, &d, engine, c->Cf))))
		return w;
	const char *impl = NULL;
	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
		fprintf(stderr, "onednn bf16 matmul: %s\n", impl);
	return NULL;
}
#endif

static void
run(void *p)
{
	Ctx *c = p;
#if defined(IMPL_DNNL)
	if (c->bf) {
		dnnl_exec_arg_t args[3] = {
			{ DNNL_ARG_SRC, c->ma }, { DNNL_ARG_WEIGHTS, c->mb }, { DNNL_ARG_DST, c->mc },
		};
		if (dnnl_primitive_execute(c->prim, c->stream, 3, args) != dnnl_success ||
		    dnnl_stream_wait(c->stream) != dnnl_success)
			exit(1);
	} else {
		int32_t co = 0;
		if (dnnl_gemm_s8s8s32('N', 'N', 'F', c->M, c->N, c->K, 1.0f, c->A, c->K, 0,
		    c->B, c->N, 0, 0.0f, c->C, c->N, &co) != dnnl_success)
			exit(1);
	}
#else
	int rc = c->bf ? matmul_bf16(c->M, c->N, c->K, c->Ah, c->Bh, c->Cf) :
	    gemm_i8(c->M, c->N, c->K, c->A, c->B, c->C);
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", c->bf ? "matmul_bf16" : "gemm_i8", txrt_last_error());
		exit(1);
	}
#endif
}

int
main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[1], "i8") && strcmp(argv[1], "bf16"))) {
		fprintf(stderr, "usage: %s i8|bf16 M N K\n", argv[0]);
		return 2;
	}
	Ctx c;
	memset(&c, 0, sizeof c);
	c.bf = !strcmp(argv[1], "bf16");
	c.M = atoi(argv[2]), c.N = atoi(argv[3]), c.K = atoi(argv[4]);
	size_t mk = (size_t)c.M * (size_t)c.K, kn = (size_t)c.K * (size_t)c.N;
	size_t mn = (size_t)c.M * (size_t)c.N;
	int threads = bench_threads();
#if defined(IMPL_TXC)
	txrt_set_num_threads(threads);
#endif
	uint64_t s = 7;
	if (c.bf) {
		c.Ah = bench_alloc(2 * mk);
		c.Bh = bench_alloc(2 * kn);
		c.Cf = bench_alloc(4 * mn);
		bench_fill_bf16(c.Ah, mk, 1);
		bench_fill_bf16(c.Bh, kn, 2);
	} else {
		c.A = bench_alloc(mk);
		c.B = bench_alloc(kn);
		c.C = bench_alloc(4 * mn);
		bench_fill_i8(c.A, mk, &s);
		bench_fill_i8(c.B, kn, &s);
	}
#if defined(IMPL_DNNL)
	if (c.bf) {
		const char *w = dnnl_setup(&c);
		if (w) {
			fprintf(stderr, "onednn: bf16 %dx%dx%d skipped: %s (it needs AVX512_BF16 "
			    "or AVX-512 core)\n", c.M, c.N, c.K, w);
			return 0;
		}
	}
#endif
	double secs = bench_time(run, &c, 2.0);
	double err = 0;
	for (int t = 0; t < 512; t++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		int i = (int)((s >> 33) % (uint64_t)c.M);
		int j = (int)((s >> 13) % (uint64_t)c.N);
		double ref = 0, mag = 0;
		int64_t iref = 0;
		for (int k = 0; k < c.K; k++) {
			size_t a = (size_t)i * (size_t)c.K + (size_t)k, b = (size_t)k * (size_t)c.N + (size_t)j;
			if (c.bf) {
				double p = (double)bench_bf16_value(c.Ah[a]) * bench_bf16_value(c.Bh[b]);
				ref += p;
				mag += fabs(p);
			} else {
				iref += (int64_t)c.A[a] * c.B[b];
			}
		}
		size_t o = (size_t)i * (size_t)c.N + (size_t)j;
		double e = c.bf ? fabs(c.Cf[o] - ref) / (mag > 1 ? mag : 1) :
		    fabs((double)c.C[o] - (double)iref);
		if (e > err)
			err = e;
	}
	char name[64];
	snprintf(name, sizeof name, "%s_%dx%dx%d", c.bf ? "bgemm" : "igemm", c.M, c.N, c.K);
	bench_report(name, IMPL, threads, 2.0 * c.M * c.N * c.K, secs, err);
	return 0;
}
