#!/bin/sh
# entry_prefix.sh: txc --prefix=P names every entry point P + the kernel's
# name, in the object, the C output and the header (and NAME_dlpack):
# a kernel named like the C library's expf, which txc refuses as it is,
# builds with --prefix=lib_ and runs beside the real expf (txc(1) --prefix);
# its errors name lib_expf, the function the caller called, not the kernel.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat err.txt 2>/dev/null; exit 1; }
cat >k.tx <<'TX'
kernel expf(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = exp(x[i]) + 1.0;
}
TX
cat >main.c <<'C'
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "k.h"
#ifdef C_OUTPUT
#define last_error lib_expf_last_error   /* the C output's own */
#else
const char *txrt_last_error(void);
#define last_error txrt_last_error
#endif
const char *last_error(void);
int main(void) {
	float x[5] = { 0, 1, -1, 2, 0.5f }, y[5];
	if (lib_expf(-1, x, y) != 2) { printf("FAIL: lib_expf(-1) did not fail\n"); return 1; }
	if (strcmp(last_error(), "lib_expf: size N must not be negative")) {
		printf("FAIL: lib_expf(-1): '%s'\n", last_error());
		return 1;
	}
	if (lib_expf(5, x, y) != 0) { printf("FAIL: lib_expf failed\n"); return 1; }
	for (int i = 0; i < 5; i++)
		if (fabsf(y[i] - (expf(x[i]) + 1.0f)) > 1e-4f * (1.0f + y[i])) {
			printf("FAIL: y[%d] = %g, want %g\n", i, y[i], expf(x[i]) + 1.0f);
			return 1;
		}
	return 0;
}
C
! "$TXC" k.tx -o k.o 2>err.txt || fail "kernel expf accepted without a prefix"
grep -q "entry point 'expf' cannot be named so" err.txt || fail "no message naming expf"
grep -q -- "--prefix=NAME_" err.txt || fail "the message does not suggest --prefix"
"$TXC" --prefix=lib_ --dlpack -H k.h k.tx -o k.o 2>err.txt || fail "txc --prefix=lib_ (object)"
grep -q 'int lib_expf(int64_t N' k.h || fail "the header does not declare lib_expf"
grep -q 'lib_expf_dlpack' k.h || fail "the header does not declare lib_expf_dlpack"
nm k.o | grep -q ' T lib_expf$' || fail "the object does not define lib_expf"
! nm k.o | grep -q ' T expf$' || fail "the object defines expf"
if [ -f "$lib" ]; then
	${CC:-cc} main.c k.o "$lib" -lpthread -ldl -lm -o main 2>err.txt || fail "link with the object"
	./main || fail "the object's lib_expf"
fi
"$TXC" --prefix=lib_ --emit=c -H k.h k.tx -o k.c 2>err.txt || fail "txc --prefix=lib_ --emit=c"
${CC:-cc} -DC_OUTPUT main.c k.c -lm -o main_c 2>err.txt || fail "build with the C output"
./main_c || fail "the C output's lib_expf"
! "$TXC" --prefix=9x k.tx -o k.o 2>err.txt || fail "--prefix=9x accepted"
grep -q "bad --prefix" err.txt || fail "no message for a bad prefix"
! "$TXC" --prefix=txrt_ k.tx -o k.o 2>err.txt || fail "--prefix=txrt_ accepted"
grep -q "libtxrt's prefix" err.txt || fail "txrt_expf not refused"
exit 0
