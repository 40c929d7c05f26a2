/* sgemm.c: C = A * B in fp32, row-major, timed through one implementation
 * chosen at build time: -DIMPL_TXC (a txc object exporting the stdlib's
 * `matmul`) or -DIMPL_OPENBLAS (cblas_sgemm).
 *
 *     sgemm M N K        prints one bench.h line
 *
 * The error column compares 512 sampled entries with a double-precision
 * dot product.
 */
#include "bench.h"

#if defined(IMPL_OPENBLAS)
#include <cblas.h>
void openblas_set_num_threads(int);
char *openblas_get_corename(void);
#define IMPL "openblas"
#elif defined(IMPL_TXC)
#include "txrt.h"
int matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
#define IMPL "txc"
#else
#error "define IMPL_TXC or IMPL_OPENBLAS"
#endif

typedef struct {
	int M, N, K;
	float *A, *B, *C;
} Ctx;

static void
run(void *p)
{
	Ctx *c = p;
#if defined(IMPL_OPENBLAS)
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->M, c->N, c->K,
	    1.0f, c->A, c->K, c->B, c->N, 0.0f, c->C, c->N);
#else
	if (matmul(c->M, c->N, c->K, c->A, c->B, c->C) != 0) {
		fprintf(stderr, "matmul: %s\n", txrt_last_error());
		exit(1);
	}
#endif
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s M N K\n", argv[0]);
		return 2;
	}
	Ctx c = { atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), 0, 0, 0 };
	int threads = bench_threads();
#if defined(IMPL_OPENBLAS)
	openblas_set_num_threads(threads);
#else
	txrt_set_num_threads(threads);
#endif
	c.A = bench_alloc(sizeof(float) * (size_t)c.M * (size_t)c.K);
	c.B = bench_alloc(sizeof(float) * (size_t)c.K * (size_t)c.N);
	c.C = bench_alloc(sizeof(float) * (size_t)c.M * (size_t)c.N);
	bench_fill(c.A, (size_t)c.M * (size_t)c.K, 1);
	bench_fill(c.B, (size_t)c.K * (size_t)c.N, 2);
	double secs = bench_time(run, &c, 2.0);
	double err = 0;
	uint64_t s = 12345;
	for (int t = 0; t < 512; t++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		int i = (int)((s >> 33) % (uint64_t)c.M);
		int j = (int)((s >> 13) % (uint64_t)c.N);
		double ref = 0, mag = 0;
		for (int k = 0; k < c.K; k++) {
			double p = (double)c.A[(size_t)i * c.K + k] * c.B[(size_t)k * c.N + j];
			ref += p;
			mag += fabs(p);
		}
		double e = fabs(c.C[(size_t)i * c.N + j] - ref) / (mag > 1 ? mag : 1);
		if (e > err)
			err = e;
	}
	char name[64];
	snprintf(name, sizeof name, "sgemm_%dx%dx%d", c.M, c.N, c.K);
#if defined(IMPL_OPENBLAS)
	/* which kernel set OpenBLAS chose, for the table header */
	fprintf(stderr, "openblas core: %s\n", openblas_get_corename());
#endif
	bench_report(name, IMPL, threads, 2.0 * c.M * c.N * c.K, secs, err);
	return 0;
}
