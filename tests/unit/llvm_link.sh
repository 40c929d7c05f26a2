#!/bin/sh
# llvm_link.sh: an object from txc links with a C program, libtxrt and
# libm alone, runs correctly with 1 and 3 threads, and reports a NULL
# argument and a negative size through txrt_last_error().
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
cat >axpy.tx <<'TX'
kernel axpy(N, alpha: f32) {
  in  X: f32[N];
  in  Y: f32[N];
  out Z: f32[N];
  Z[i] = alpha * X[i] + Y[i];
}
schedule axpy for cpu {
  Z.split(i, 8) -> (io, ii);
  Z.vectorize(ii);
  Z.parallel(io);
}
TX
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "txrt.h"
int axpy(int64_t N, float alpha, const float *X, const float *Y, float *Z);
int
main(void)
{
	enum { N = 1003 };
	static float x[N], y[N], z[N + 5];
	for (int i = 0; i < N; i++) { x[i] = (float)i; y[i] = (float)(N - i); }
	for (int t = 1; t <= 3; t += 2) {
		txrt_set_num_threads(t);
		for (int i = 0; i < N + 5; i++) z[i] = -7.0f;
		if (axpy(N, 0.5f, x, y, z) != 0) { printf("rc: %s\n", txrt_last_error()); return 1; }
		for (int i = 0; i < N; i++)
			if (z[i] != 0.5f * x[i] + y[i]) { printf("z[%d] = %g\n", i, z[i]); return 1; }
		for (int i = N; i < N + 5; i++)
			if (z[i] != -7.0f) { printf("wrote z[%d]\n", i); return 1; }
	}
	if (axpy(N, 1.0f, x, NULL, z) != 1 || strcmp(txrt_last_error(), "axpy: argument 'Y' is NULL")) {
		printf("NULL: %s\n", txrt_last_error()); return 1;
	}
	if (axpy(-5, 1.0f, x, y, z) == 0 || !strstr(txrt_last_error(), "N")) {
		printf("negative size: %s\n", txrt_last_error()); return 1;
	}
	/* several bad arguments: the first check that fails reports, the
	 * sizes before NULL tensors (in order), so that what the NULL tests
	 * compute from the sizes is in range */
	if (axpy(-5, 1.0f, NULL, NULL, z) != 2 || strcmp(txrt_last_error(), "axpy: size N must not be negative")) {
		printf("NULL X and Y, negative N: %s\n", txrt_last_error()); return 1;
	}
	if (axpy(5, 1.0f, NULL, NULL, z) != 1 || strcmp(txrt_last_error(), "axpy: argument 'X' is NULL")) {
		printf("NULL X and Y: %s\n", txrt_last_error()); return 1;
	}
	if (axpy(5, 1.0f, x, y, NULL) != 1 || strcmp(txrt_last_error(), "axpy: argument 'Z' is NULL")) {
		printf("NULL Z: %s\n", txrt_last_error()); return 1;
	}
	if (axpy(-5, 1.0f, x, y, z) != 2) {
		printf("negative size: code is not TXC_ERR_SIZE\n"); return 1;
	}
	return 0;
}
C
"$TXC" --features=-fma axpy.tx -o axpy.o || { echo "FAIL: txc"; exit 1; }
${CC:-cc} -I"$abs_top_srcdir/rt" main.c axpy.o "$lib" -lpthread -lm -o main || { echo "FAIL: link"; exit 1; }
./main || { echo "FAIL: run"; exit 1; }
