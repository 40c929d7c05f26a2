#!/bin/sh
# cpu_guard.sh: an object compiled for instruction sets the running CPU
# lacks (txc --cpu=skylake-avx512 on an AVX2 machine) does not die of
# SIGILL: each entry point, the plain one and NAME_dlpack, first asks
# libtxrt (txrt_cpu_require) and returns TXRT_ERR_CPU (8) with a message
# naming the missing sets, on every call; compiled for the host it runs.
# Objects with the AVX-512 micro-kernels and plans likewise, where the CPU
# lacks AVX-512F.  Skips (77) where the CPU has every set of the CPUs
# tried (then no object can be made that it cannot run).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
case $(uname -m) in x86_64) ;; *) echo "SKIP: not x86-64"; exit 77 ;; esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat run.log 2>/dev/null; exit 1; }
cat >k.tx <<'TX'
kernel axpy(N, a: f32) {
  in  x: f32[N];
  in  y: f32[N];
  out z: f32[N];
  z[i] = a * x[i] + y[i];
}
schedule axpy for cpu {
  z.split(i, 16) -> (io, ii);
  z.vectorize(ii);
}
TX
dl=0
[ -f /usr/include/dlpack/dlpack.h ] && dl=1
cat >main.c <<'C'
#include <stdio.h>
#include <string.h>
#include "k.h"
#include "txrt.h"
#if HAVE_DL
#include <dlpack/dlpack.h>
static DLTensor
vec(float *p, int64_t *n)
{
	DLTensor t;
	memset(&t, 0, sizeof t);
	t.data = p;
	t.device.device_type = kDLCPU;
	t.ndim = 1;
	t.dtype.code = kDLFloat;
	t.dtype.bits = 32;
	t.dtype.lanes = 1;
	t.shape = n;
	return t;
}
#endif
int
main(void)
{
	float x[37], y[37], z[37];
	for (int i = 0; i < 37; i++)
		x[i] = (float)i, y[i] = 1.0f, z[i] = -1.0f;
	int rc = axpy(37, 2.0f, x, y, z);
	printf("plain %d %g %s\n", rc, (double)z[36], rc ? txrt_last_error() : "-");
	int rc2 = axpy(37, 2.0f, x, y, z);
	printf("again %d\n", rc2);
	if (rc2 != rc)
		return 3;
#if HAVE_DL
	int64_t n = 37;
	DLTensor a = vec(x, &n), b = vec(y, &n), c = vec(z, &n);
	int rd = axpy_dlpack(37, 2.0f, &a, &b, &c);
	printf("dlpack %d %s\n", rd, rd ? txrt_last_error() : "-");
	if (rd != rc)
		return 4;
#endif
	return rc;
}
C
build() { # TXC-FLAGS...: k.o and the program m
	# shellcheck disable=SC2086
	"$TXC" "$@" $dlflag k.tx -o k.o -H k.h >run.log 2>&1 || fail "txc $*"
	${CC:-cc} -O1 -DHAVE_DL=$dl -I"$abs_top_srcdir/rt" -I"$abs_top_builddir/rt" -o m main.c k.o "$lib" \
	    -lpthread -ldl -lm >run.log 2>&1 || fail "cc ($*)"
}
dlflag=
[ $dl = 1 ] && dlflag=--dlpack
# for the host: it runs, z[36] = 2 * 36 + 1
build
./m >run.log 2>&1 || fail "the host's object exited $?"
grep -q '^plain 0 73 -' run.log || fail "the host's object computed wrong"
# the AVX-512 micro-kernels and plans (issue 37): an object whose entry
# point calls the zmm micro-kernel (gemm_14x32_f32) and one of the
# stdlib's matmul, whose isa knob took its AVX-512 plan, both compiled
# for skylake-avx512: on a CPU without AVX-512F each call returns
# TXRT_ERR_CPU with the message (the check runs before any zmm
# instruction), on one with it they compute C = A B (checked here)
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
	cat >z.tx <<'TX'
import "intrinsics/cpu.tx";
import "matmul.tx";
kernel mz(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mz for cpu {
  C.tile(i, j, 14, 32) -> (io, jo, ii, ji);
  C.reorder(io, jo, k, ii, ji);
  C.tensorize(k, gemm_14x32_f32);
}
TX
	cat >zmain.c <<'C'
#include <stdio.h>
#include "z.h"
#include "txrt.h"
int
main(void)
{
	static float a[29 * 7], b[7 * 45], c[29 * 45];
	int r1 = mz(29, 45, 7, a, b, c);
	printf("mz %d %s\n", r1, r1 ? txrt_last_error() : "-");
	int r2 = matmul(29, 45, 7, a, b, c);
	printf("matmul %d %s\n", r2, r2 ? txrt_last_error() : "-");
	return r1 == 8 && r2 == 8 ? 0 : 1;
}
C
	TXC_STDLIB=$abs_top_srcdir/stdlib "$TXC" --cpu=skylake-avx512 -k mz -k matmul z.tx -o z.o -H z.h \
	    >run.log 2>&1 || fail "txc --cpu=skylake-avx512 z.tx"
	grep -q 'txc.fma_outer_zmm' z.o || fail "z.o has no zmm micro-kernel"
	${CC:-cc} -O1 -I"$abs_top_srcdir/rt" -I"$abs_top_builddir/rt" -o mz zmain.c z.o "$lib" \
	    -lpthread -ldl -lm >run.log 2>&1 || fail "cc (zmm)"
	./mz >run.log 2>&1
	rc=$?
	[ $rc -lt 128 ] || fail "the zmm object died of signal $((rc - 128))"
	grep -q "^mz 8 mz: compiled for a CPU with instructions this CPU lacks (.*avx512f" run.log ||
	    fail "the zmm micro-kernel's object: no TXRT_ERR_CPU naming avx512f"
	grep -q "^matmul 8 matmul: compiled for a CPU with instructions this CPU lacks (" run.log ||
	    fail "the stdlib matmul's AVX-512 plan: no TXRT_ERR_CPU"
	[ $rc -eq 0 ] || fail "the zmm objects: exit $rc"
	echo "ok: zmm objects on this CPU: $(sed -n 's/^mz 8 //p' run.log)"
fi
for cpu in skylake-avx512 sapphirerapids graniterapids; do
	build --cpu=$cpu
	./m >run.log 2>&1
	rc=$?
	[ $rc -eq 0 ] && continue   # this CPU has them all: try a newer one
	[ $rc -eq 8 ] || fail "--cpu=$cpu: exit $rc, not TXRT_ERR_CPU (8) (a signal is 128+)"
	grep -q "^plain 8 -1 axpy: compiled for a CPU with instructions this CPU lacks (" run.log ||
	    fail "--cpu=$cpu: the message"
	grep -q '^again 8' run.log || fail "--cpu=$cpu: the second call"
	[ $dl = 0 ] || grep -q '^dlpack 8 axpy' run.log || fail "--cpu=$cpu: axpy_dlpack"
	echo "ok: --cpu=$cpu on this CPU: $(sed -n 's/^plain 8 -1 //p' run.log)"
	exit 0
done
echo "SKIP: this CPU has every instruction set of the CPUs tried"
exit 77
