/* blur.c: the txc side of the separable 3x3 blur benchmark (the Halide
 * side is halide_run.c): a txc object exporting
 *     int blur(int64_t H, int64_t W, const float *in, float *out)
 * with in H x W and out (H-2) x (W-2), row-major.
 *
 *     blur W H        prints one bench.h line
 */
#include "bench.h"
#include "txrt.h"

int blur(int64_t H, int64_t W, const float *in, float *out);

typedef struct {
	int W, H;
	float *in, *out;
} Ctx;

static void
run(void *p)
{
	Ctx *c = p;
	if (blur(c->H, c->W, c->in, c->out) != 0) {
		fprintf(stderr, "blur: %s\n", txrt_last_error());
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s W H\n", argv[0]);
		return 2;
	}
	Ctx c = { atoi(argv[1]), atoi(argv[2]), 0, 0 };
	int threads = bench_threads();
	txrt_set_num_threads(threads);
	c.in = bench_alloc(sizeof(float) * (size_t)c.W * c.H);
	c.out = bench_alloc(sizeof(float) * (size_t)(c.W - 2) * (c.H - 2));
	bench_fill(c.in, (size_t)c.W * c.H, 3);
	double secs = bench_time(run, &c, 2.0);
	double err = 0;
	for (int y = 0; y < c.H - 2; y += 7)
		for (int x = 0; x < c.W - 2; x += 5) {
			double ref = 0;
			for (int dy = 0; dy < 3; dy++)
				for (int dx = 0; dx < 3; dx++)
					ref += c.in[(size_t)(y + dy) * c.W + x + dx];
			ref /= 9;
			double e = fabs(c.out[(size_t)y * (c.W - 2) + x] - ref);
			if (e > err)
				err = e;
		}
	char name[64];
	snprintf(name, sizeof name, "blur3x3_%dx%d", c.W, c.H);
	bench_report(name, "txc", threads, 8.0 * (c.W - 2) * (c.H - 2), secs, err);
	return 0;
}
