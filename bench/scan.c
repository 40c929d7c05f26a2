/* scan.c: a prefix sum down the rows of a T x N matrix (a scan over t,
 * independent columns), txc's examples/prefix_sum.tx against the same loop
 * written by hand in C, in one process on the same data:
 *     s[0, i] = x[0, i];  s[t, i] = s[t - 1, i] + x[t, i]
 * The C loop is what a careful C programmer writes, the same plan as the
 * .tx schedule: columns cut into blocks of 512 over OpenMP threads, t
 * outside, i inside (contiguous, so the C compiler vectorizes it).  The txc object exports
 *     int prefix_sum(int64_t T, int64_t N, const float *x, float *s)
 *
 *     scan T N        prints two bench.h lines (txc, then C)
 */
#include "bench.h"
#include "txrt.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int prefix_sum(int64_t T, int64_t N, const float *x, float *s);

typedef struct {
	int T, N;
	float *x, *s;
} Ctx;

static void
run_txc(void *p)
{
	Ctx *c = p;
	if (prefix_sum(c->T, c->N, c->x, c->s) != 0) {
		fprintf(stderr, "scan: %s\n", txrt_last_error());
		exit(1);
	}
}

static void
run_c(void *p)
{
	Ctx *c = p;
	int T = c->T, N = c->N;
	const float *x = c->x;
	float *s = c->s;
#pragma omp parallel for schedule(static)
	for (int io = 0; io < (N + 511) / 512; io++) {
		int lo = io * 512, hi = lo + 512 < N ? lo + 512 : N;
		for (int i = lo; i < hi; i++)
			s[i] = x[i];
		for (int t = 1; t < T; t++) {
			const float *xr = x + (size_t)t * N;
			float *sr = s + (size_t)t * N, *prev = sr - N;
			for (int i = lo; i < hi; i++)
				sr[i] = prev[i] + xr[i];
		}
	}
}

/* the largest difference from a serial sum in double */
static double
check(const Ctx *c)
{
	double err = 0;
	for (int i = 0; i < c->N; i += 13) {
		double acc = 0;
		for (int t = 0; t < c->T; t++) {
			acc += c->x[(size_t)t * c->N + i];
			double e = fabs(c->s[(size_t)t * c->N + i] - acc) / (1 + fabs(acc));
			if (e > err)
				err = e;
		}
	}
	return err;
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s T N\n", argv[0]);
		return 2;
	}
	Ctx c = { atoi(argv[1]), atoi(argv[2]), 0, 0 };
	int threads = bench_threads();
	txrt_set_num_threads(threads);
#ifdef _OPENMP
	omp_set_num_threads(threads);   /* the C loop on as many threads as txc */
#endif
	c.x = bench_alloc(sizeof(float) * (size_t)c.T * c.N);
	c.s = bench_alloc(sizeof(float) * (size_t)c.T * c.N);
	bench_fill(c.x, (size_t)c.T * c.N, 5);
	char name[64];
	snprintf(name, sizeof name, "prefix_sum_%dx%d", c.T, c.N);
	/* one add per element; the C loop after txc's, then txc's again, so
	 * that a drift of the machine shows as two different txc lines */
	double ops = (double)c.T * c.N;
	double secs = bench_time(run_txc, &c, 2.0);
	bench_report(name, "txc", threads, ops, secs, check(&c));
	memset(c.s, 0, sizeof(float) * (size_t)c.T * c.N);
	secs = bench_time(run_c, &c, 2.0);
	bench_report(name, "C (by hand, OpenMP)", threads, ops, secs, check(&c));
	secs = bench_time(run_txc, &c, 2.0);
	bench_report(name, "txc", threads, ops, secs, check(&c));
	return 0;
}
