/* halide_run.c: times the Halide 14 objects built from halide_gen.cpp.
 *
 *     halide_run matmul M N K      C = A * B, row-major fp32
 *     halide_run blur W H          3x3 box blur of a W x H image
 *
 * Threads: Halide reads HL_NUM_THREADS when its pool starts (one process
 * per case, so the count holds).  Prints one bench.h line.
 */
#include <HalideRuntime.h>

#include "bench.h"
#include "halide_buf.h"
#include "halide_blur.h"
#include "halide_matmul.h"

typedef struct {
	halide_buffer_t a, b, c;
	int blur;
} Ctx;

static void
run(void *p)
{
	Ctx *c = p;
	int rc = c->blur ? halide_blur(&c->a, &c->c) : halide_matmul(&c->a, &c->b, &c->c);
	if (rc != 0) {
		fprintf(stderr, "halide error %d\n", rc);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	Ctx c = { 0 };
	halide_dimension_t da[2], db[2], dc[2];
	int threads = bench_threads();
	char name[64];
	if (argc == 5 && strcmp(argv[1], "matmul") == 0) {
		int M = atoi(argv[2]), N = atoi(argv[3]), K = atoi(argv[4]);
		float *A = bench_alloc(sizeof(float) * (size_t)M * K);
		float *B = bench_alloc(sizeof(float) * (size_t)K * N);
		float *C = bench_alloc(sizeof(float) * (size_t)M * N);
		bench_fill(A, (size_t)M * K, 1);
		bench_fill(B, (size_t)K * N, 2);
		hbuf(&c.a, da, A, 2, (int[]){ K, M });
		hbuf(&c.b, db, B, 2, (int[]){ N, K });
		hbuf(&c.c, dc, C, 2, (int[]){ N, M });
		double secs = bench_time(run, &c, 2.0);
		double err = 0;
		uint64_t s = 12345;
		for (int t = 0; t < 512; t++) {
			s = s * 6364136223846793005u + 1442695040888963407u;
			int i = (int)((s >> 33) % (uint64_t)M), j = (int)((s >> 13) % (uint64_t)N);
			double ref = 0, mag = 0;
			for (int k = 0; k < K; k++) {
				double v = (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
				ref += v;
				mag += fabs(v);
			}
			double e = fabs(C[(size_t)i * N + j] - ref) / (mag > 1 ? mag : 1);
			if (e > err)
				err = e;
		}
		snprintf(name, sizeof name, "sgemm_%dx%dx%d", M, N, K);
		bench_report(name, "halide14", threads, 2.0 * M * N * K, secs, err);
	} else if (argc == 4 && strcmp(argv[1], "blur") == 0) {
		int W = atoi(argv[2]), H = atoi(argv[3]);
		float *in = bench_alloc(sizeof(float) * (size_t)W * H);
		float *out = bench_alloc(sizeof(float) * (size_t)(W - 2) * (H - 2));
		bench_fill(in, (size_t)W * H, 3);
		hbuf(&c.a, da, in, 2, (int[]){ W, H });
		hbuf(&c.c, dc, out, 2, (int[]){ W - 2, H - 2 });
		c.blur = 1;
		double secs = bench_time(run, &c, 2.0);
		double err = 0;
		for (int y = 0; y < H - 2; y += 7)
			for (int x = 0; x < W - 2; x += 5) {
				double ref = 0;
				for (int dy = 0; dy < 3; dy++)
					for (int dx = 0; dx < 3; dx++)
						ref += in[(size_t)(y + dy) * W + x + dx];
				ref /= 9;
				double e = fabs(out[(size_t)y * (W - 2) + x] - ref);
				if (e > err)
					err = e;
			}
		snprintf(name, sizeof name, "blur3x3_%dx%d", W, H);
		/* 4 flops per output per pass: 2 adds, 1 multiply... counted as 8 */
		bench_report(name, "halide14", threads, 8.0 * (W - 2) * (H - 2), secs, err);
	} else {
		fprintf(stderr, "usage: %s matmul M N K | blur W H\n", argv[0]);
		return 2;
	}
	return 0;
}
