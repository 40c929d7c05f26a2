#!/bin/sh
# cuda_link.sh: a --target=cuda object links into a C program with libtxrt
# alone and, as a user would call it (device buffers from txrt_cuda_malloc,
# copies in and out), computes the right result in libtxrt's emulator; a
# scalar parameter and a stage computed at root (a device buffer between
# two kernels) reach the kernels; a NULL tensor and a negative size are
# errors; without a GPU the entry point returns TXRT_ERR_CUDA and says
# "no CUDA device"; a kernel whose barriers txc left out
# (TXC_CUDA_NO_BARRIERS=1) is caught by the emulator's race checker; the
# header of -H says the tensors are device pointers; --dlpack's NAME_dlpack
# takes kDLCUDA tensors (kDLCPU ones while emulated) and rejects others.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >saxpy.tx <<'TX'
kernel saxpy(N, M, alpha: f32) {
  in  X: f32[N, M];
  in  Y: f32[M];
  out Z: f32[N, M];
  t: f32[N, M];
  t[i, j] = alpha * X[i, j];
  Z[i, j] = t[i, j] + Y[j];
}
schedule saxpy for cuda {
  t.gpu_tile(i, j, 4, 32) -> (ti, tj, tii, tji);
  Z.gpu_tile(i, j, 8, 16) -> (io, jo, ii, ji);
}
TX
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "txrt.h"
#include "saxpy.h"
int
main(int argc, char **argv)
{
	enum { N = 37, M = 53 };
	static float x[N * M], y[M], z[N * M];
	int emulate = argc > 1 && !strcmp(argv[1], "emulate");
	if (emulate)
		txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
	for (int i = 0; i < N * M; i++)
		x[i] = (float)(i % 17) - 8.0f;
	for (int j = 0; j < M; j++)
		y[j] = (float)j * 0.25f;
	float *dx = txrt_cuda_malloc(sizeof x), *dy = txrt_cuda_malloc(sizeof y);
	float *dz = txrt_cuda_malloc(sizeof z);
	if (!dx || !dy || !dz) {
		printf("malloc: %s\n", txrt_last_error());
		return 2;
	}
	if (txrt_cuda_memcpy_htod(dx, x, sizeof x) || txrt_cuda_memcpy_htod(dy, y, sizeof y) ||
	    txrt_cuda_memset(dz, 0, sizeof z))
		return 2;
	int rc = saxpy(N, M, 1.5f, dx, dy, dz);
	if (rc) {
		printf("rc %d: %s\n", rc, txrt_last_error());
		return 3;
	}
	if (txrt_cuda_memcpy_dtoh(z, dz, sizeof z))
		return 2;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < M; j++)
			if (z[i * M + j] != 1.5f * x[i * M + j] + y[j]) {
				printf("z[%d, %d] = %g, want %g\n", i, j, z[i * M + j],
				    1.5f * x[i * M + j] + y[j]);
				return 1;
			}
	if (saxpy(N, M, 1.0f, NULL, dy, dz) != TXRT_ERR_NULL ||
	    !strstr(txrt_last_error(), "'X' is NULL")) {
		printf("NULL: %s\n", txrt_last_error());
		return 1;
	}
	if (saxpy(-1, M, 1.0f, dx, dy, dz) != TXRT_ERR_SIZE) {
		printf("negative size: %s\n", txrt_last_error());
		return 1;
	}
	txrt_cuda_free(dx);
	txrt_cuda_free(dy);
	txrt_cuda_free(dz);
	printf("ok on %s\n", txrt_cuda_device_name());
	return 0;
}
C
"$TXC" --target=cuda saxpy.tx -o saxpy.o -H saxpy.h || { echo "FAIL: txc --target=cuda"; exit 1; }
grep -q 'CUDA device pointers' saxpy.h || fail "-H does not say the tensors are device pointers"
${CC:-cc} -O1 -I"$abs_top_srcdir/rt" -o main main.c saxpy.o "$lib" -lpthread -ldl -lm ||
    { echo "FAIL: the object does not link with libtxrt"; exit 1; }
./main emulate >out 2>&1 || fail "emulated: $(cat out)"
grep -q 'ok on emulator' out || fail "emulated: $(cat out)"
# TXRT_CUDA=emulate does the same without the program asking
TXRT_CUDA=emulate ./main >out 2>&1 || fail "TXRT_CUDA=emulate: $(cat out)"

# without a GPU (no driver here, or one but no device): TXRT_ERR_CUDA (6)
if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then
	echo "note: a GPU driver is here: the no-device case is not checked"
else
	TXRT_CUDA= ./main >out 2>&1
	rc=$?
	[ $rc -eq 3 ] || [ $rc -eq 2 ] || fail "no GPU: exit $rc: $(cat out)"
	grep -q 'no CUDA device' out || fail "no GPU: $(cat out)"
fi

# a kernel without its barriers: the race checker must catch it
cat >tiles.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mm for cuda {
  C.gpu_tile(i, j, 8, 8) -> (io, jo, ii, ji);
  C.split(k, 4) -> (ko, ki);
  C.reorder(io, jo, ko, ii, ji, ki);
  A.cache_read(shared, [C]) -> As;
  B.cache_read(shared, [C]) -> Bs;
  As.compute_at(C, ko);
  Bs.compute_at(C, ko);
}
TX
"$TXC" -k mm --emit=harness -o h.c tiles.tx && ${CC:-cc} -O1 -DTXC_LLVM -c -o h.o h.c || exit 99
for nb in 0 1; do
	TXC_CUDA_NO_BARRIERS=$nb "$TXC" --target=cuda tiles.tx -o t$nb.o || { fail "txc tiles.tx"; continue; }
	${CC:-cc} -o t$nb h.o t$nb.o "$lib" -lpthread -ldl -lm || { fail "link tiles"; continue; }
	TXRT_CUDA=emulate ./t$nb M=19 N=21 K=13 out=t$nb.bin >out 2>&1
	rc=$?
	if [ $nb = 0 ]; then
		[ $rc -eq 0 ] || fail "tiles with barriers: exit $rc: $(head -3 out)"
	else
		[ $rc -ne 0 ] || fail "tiles without barriers: the emulator saw nothing"
		grep -q "txrt: emulator: kernel 'mm_k0\\(_i32\\)\\{0,1\\}'.*buffer '[AB]s'" out ||
		    fail "tiles without barriers: no report naming the kernel and buffer: $(head -3 out)"
	fi
done

# --dlpack: NAME_dlpack takes kDLCUDA tensors (and kDLCPU ones while the
# GPU is emulated on host memory), and rejects other devices with a message
if [ -f /usr/include/dlpack/dlpack.h ]; then
	"$TXC" --target=cuda --dlpack saxpy.tx -o saxpy_dl.o -H saxpy_dl.h ||
	    { echo "FAIL: txc --target=cuda --dlpack"; exit 1; }
	cat >dl.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dlpack/dlpack.h>
#include "txrt.h"
#include "saxpy_dl.h"
static DLTensor
tensor(void *data, int ndim, int64_t *shape, int device)
{
	DLTensor t;
	memset(&t, 0, sizeof t);
	t.data = data;
	t.device.device_type = (DLDeviceType)device;
	t.ndim = ndim;
	t.dtype.code = kDLFloat;
	t.dtype.bits = 32;
	t.dtype.lanes = 1;
	t.shape = shape;
	return t;
}
int
main(void)
{
	enum { N = 5, M = 7 };
	static float x[N * M], y[M], z[N * M];
	int64_t sx[2] = { N, M }, sy[1] = { M };
	for (int i = 0; i < N * M; i++) x[i] = (float)i;
	for (int j = 0; j < M; j++) y[j] = 1.0f;
	txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
	for (int dev = kDLCPU; dev <= kDLCUDA; dev++) {
		DLTensor tx = tensor(x, 2, sx, dev), ty = tensor(y, 1, sy, dev), tz = tensor(z, 2, sx, dev);
		memset(z, 0, sizeof z);
		if (saxpy_dlpack(N, M, 2.0f, &tx, &ty, &tz) != 0) {
			printf("device %d: %s\n", dev, txrt_last_error());
			return 1;
		}
		for (int i = 0; i < N * M; i++)
			if (z[i] != 2.0f * x[i] + 1.0f) { printf("device %d: z[%d] = %g\n", dev, i, z[i]); return 1; }
	}
	DLTensor tx = tensor(x, 2, sx, kDLOpenCL), ty = tensor(y, 1, sy, kDLCUDA), tz = tensor(z, 2, sx, kDLCUDA);
	if (saxpy_dlpack(N, M, 2.0f, &tx, &ty, &tz) != TXRT_ERR_DLPACK ||
	    !strstr(txrt_last_error(), "'X' is not in CUDA memory")) {
		printf("kDLOpenCL: %s\n", txrt_last_error());
		return 1;
	}
	/* no emulator, no GPU: host memory is not the device's */
	txrt_cuda_set_mode(TXRT_CUDA_NONE);
	tx = tensor(x, 2, sx, kDLCPU);
	if (saxpy_dlpack(N, M, 2.0f, &tx, &ty, &tz) != TXRT_ERR_DLPACK) {
		printf("kDLCPU without the emulator: %s\n", txrt_last_error());
		return 1;
	}
	printf("dlpack ok\n");
	return 0;
}
C
	${CC:-cc} -O1 -I"$abs_top_srcdir/rt" -o dl dl.c saxpy_dl.o "$lib" -lpthread -ldl -lm ||
	    { echo "FAIL: the --dlpack object does not link"; exit 1; }
	./dl >out 2>&1 || fail "--dlpack: $(cat out)"
fi
[ $fails -eq 0 ]
