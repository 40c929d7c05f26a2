#!/bin/sh
# llvm_dispatch.sh: an entry function whose work is all in parallel
# closures (only checks, allocations and parallel calls, perhaps in a
# serial loop) is compiled with optnone after the IR passes, and one with
# a tensor access or a micro-kernel call of its own is not; the
# dispatch-only entries still compute the right result with 1 and 2
# threads (empty sizes too) and report a NULL argument and a negative
# size with the right codes.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; exit 1; }
cat >k.tx <<'TX'
// rows in parallel: the entry only checks and calls the closure
kernel rows(M, N) {
  in  a: f32[M, N];
  in  b: f32[N];
  out y: f32[M, N];
  t[i, j] = a[i, j] * 2.0 + b[j];
  y[i, j] = t[i, N - 1 - j];
}
schedule rows for cpu {
  t.parallel(i);
  y.parallel(i);
}
// images one after another, rows in parallel: the serial loop only calls
kernel batched(N, M) {
  in  a: f32[N, M];
  out y: f32[N, M];
  y[n, i] = a[n, i] * 3.0;
}
schedule batched for cpu {
  y.parallel(i);
}
// the same kernel serial: the entry holds the loops
kernel serial(M, N) {
  in  a: f32[M, N];
  out y: f32[M, N];
  y[i, j] = a[i, j] + 1.0;
}
TX
"$TXC" --no-auto-schedule --emit=llvm -o k.ll k.tx || fail "--emit=llvm"
# the attribute group of each definition
attrs() { # function name -> its attribute line
	g=$(sed -n "s/^define [^@]*@$1(.*) #\([0-9]*\) .*/\1/p" k.ll)
	[ -n "$g" ] || fail "no definition of $1"
	sed -n "s/^attributes #$g = //p" k.ll
}
case $(attrs rows) in *optnone*txc-dispatch-only*) ;; *) fail "rows: not dispatch-only: $(attrs rows)" ;; esac
case $(attrs 'rows\.par0') in *optnone*) fail "rows.par0 is optnone" ;; esac
case $(attrs batched) in *optnone*txc-dispatch-only*) ;; *) fail "batched: not dispatch-only: $(attrs batched)" ;; esac
case $(attrs serial) in *optnone*|*dispatch-only*) fail "serial is dispatch-only" ;; esac

cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "txrt.h"
int rows(int64_t M, int64_t N, const float *a, const float *b, float *y);
int batched(int64_t N, int64_t M, const float *a, float *y);
int
main(void)
{
	static float a[37 * 29], b[29], y[37 * 29 + 4];
	int sizes[][2] = { { 37, 29 }, { 1, 1 }, { 5, 0 }, { 0, 7 }, { 2, 29 } };
	for (int i = 0; i < 37 * 29; i++) a[i] = (float)(i % 13) - 6.0f;
	for (int j = 0; j < 29; j++) b[j] = 0.25f * (float)j;
	for (int t = 1; t <= 2; t++)
		for (int s = 0; s < 5; s++) {
			int M = sizes[s][0], N = sizes[s][1];
			txrt_set_num_threads(t);
			for (int i = 0; i < 37 * 29 + 4; i++) y[i] = -9.0f;
			if (rows(M, N, a, b, y) != 0) { printf("rc: %s\n", txrt_last_error()); return 1; }
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++)
					if (y[i * N + j] != a[i * N + N - 1 - j] * 2.0f + b[N - 1 - j]) {
						printf("%dx%d: y[%d, %d] = %g\n", M, N, i, j, y[i * N + j]); return 1;
					}
			for (int i = M * N; i < 37 * 29 + 4; i++)
				if (y[i] != -9.0f) { printf("%dx%d: wrote y[%d]\n", M, N, i); return 1; }
		}
	/* 3 images of 5 rows */
	for (int i = 0; i < 37 * 29 + 4; i++) y[i] = -9.0f;
	if (batched(3, 5, a, y) != 0) { printf("batched: %s\n", txrt_last_error()); return 1; }
	for (int i = 0; i < 15; i++)
		if (y[i] != a[i] * 3.0f) { printf("batched: y[%d] = %g\n", i, y[i]); return 1; }
	if (y[15] != -9.0f) { printf("batched: wrote y[15]\n"); return 1; }
	if (rows(37, 29, a, NULL, y) != 1 || strcmp(txrt_last_error(), "rows: argument 'b' is NULL")) {
		printf("NULL: %s\n", txrt_last_error()); return 1;
	}
	if (rows(37, -3, a, b, y) != 2 || !strstr(txrt_last_error(), "N")) {
		printf("negative N: %s\n", txrt_last_error()); return 1;
	}
	if (rows(-1, -3, NULL, b, y) != 2 || strcmp(txrt_last_error(), "rows: size M must not be negative")) {
		printf("sizes before NULL: %s\n", txrt_last_error()); return 1;
	}
	if (rows(37, 3, NULL, b, y) != 1 || strcmp(txrt_last_error(), "rows: argument 'a' is NULL")) {
		printf("NULL: %s\n", txrt_last_error()); return 1;
	}
	return 0;
}
C
"$TXC" --no-auto-schedule k.tx -o k.o || fail "txc"
${CC:-cc} -I"$abs_top_srcdir/rt" main.c k.o "$lib" -lpthread -lm -o main || fail "link"
./main || fail "run"
