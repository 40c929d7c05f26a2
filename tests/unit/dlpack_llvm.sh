#!/bin/sh
# dlpack_llvm.sh: txc --dlpack puts NAME_dlpack in the LLVM object, as the
# -H header declares it (txc(1) --dlpack).  A C program built against
# libdlpack-dev's dlpack.h calls it with good tensors (plain, with NULL
# strides, explicit compact strides, a byte_offset, a bool, an f16 and a
# bf16 (kDLBfloat) tensor) and bad ones (NULL, NULL data, wrong device, dtype, lanes, ndim,
# shape, strides, misaligned byte_offset), empty tensors with NULL data
# (accepted, in DLPack and the plain entry point, where a tensor has no
# elements; not where it has some), and checks return codes
# (TXC_ERR_NULL 1, TXC_ERR_DLPACK 5; a negative size is the size error 2,
# checked first as the plain entry point does) and txrt_last_error() messages (a
# wrong shape gives both shapes).  The
# same program runs against the C backend's output built with -DTXC_DLPACK,
# so both backends agree.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
[ -f /usr/include/dlpack/dlpack.h ] || { echo "SKIP: no dlpack/dlpack.h (libdlpack-dev)"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
cat >k.tx <<'TX'
kernel addrow(M, N, s: f32) {
  in  A: f32[M, N + 1];
  in  m: bool[N];
  out B: f32[M, N];
  B[i, j] = m[j] ? A[i, j] + A[i, j + 1] + s : 0.0;
}
schedule addrow for cpu {
  B.split(j, 4) -> (jo, ji);
  B.vectorize(ji);
}
kernel half(N) {
  in  x: f16[N];
  out y: f32[N];
  y[i] = f32(x[i]) * 2.0;
}
kernel brain(N) {
  in  x: bf16[N];
  out y: bf16[N];
  y[i] = x[i] * 3.0;
}
TX
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dlpack/dlpack.h>
#include "k.h"
#ifdef USE_C
#define LAST_ERROR() addrow_last_error()
#define LAST_ERROR_HALF() half_last_error()
#define LAST_ERROR_BRAIN() brain_last_error()
#else
#include "txrt.h"
#define LAST_ERROR() txrt_last_error()
#define LAST_ERROR_HALF() txrt_last_error()
#define LAST_ERROR_BRAIN() txrt_last_error()
#endif

enum { M = 3, N = 5 };
static float a[1 + M * (N + 1)], b[M * N];
static uint8_t mk[N];
static int64_t sa[2] = { M, N + 1 }, sm[1] = { N }, sb[2] = { M, N };
static int fails;

static DLTensor
tensor(void *data, int code, int bits, int ndim, int64_t *shape)
{
	DLTensor t;
	memset(&t, 0, sizeof t);
	t.data = data;
	t.device.device_type = kDLCPU;
	t.ndim = ndim;
	t.dtype.code = (uint8_t)code;
	t.dtype.bits = (uint8_t)bits;
	t.dtype.lanes = 1;
	t.shape = shape;
	return t;
}

static void
expect(const char *what, int rc, int want, const char *msg)
{
	if (rc != want || (msg && !strstr(LAST_ERROR(), msg))) {
		printf("FAIL: %s: rc %d (want %d), message '%s' (want '%s')\n", what, rc, want,
		    rc ? LAST_ERROR() : "", msg ? msg : "");
		fails++;
	}
}

static int
check_result(void)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float want = mk[j] ? a[1 + i * (N + 1) + j] + a[1 + i * (N + 1) + j + 1] + 0.5f : 0.0f;
			if (b[i * N + j] != want) {
				printf("FAIL: B[%d, %d] = %g, want %g\n", i, j, b[i * N + j], want);
				return 0;
			}
		}
	return 1;
}

int
main(void)
{
	for (int i = 0; i < 1 + M * (N + 1); i++)
		a[i] = (float)i * 0.25f;
	for (int j = 0; j < N; j++)
		mk[j] = (uint8_t)(j % 2);
	/* A starts one element into a[]: byte_offset 4 */
	DLTensor A = tensor(a, kDLFloat, 32, 2, sa), mt = tensor(mk, kDLUInt, 8, 1, sm);
	DLTensor B = tensor(b, kDLFloat, 32, 2, sb);
	A.byte_offset = sizeof(float);
	expect("good", addrow_dlpack(M, N, 0.5f, &A, &mt, &B), 0, NULL);
	if (!check_result())
		fails++;
	int64_t stA[2] = { N + 1, 1 }, stB[2] = { N, 1 };
	A.strides = stA;
	B.strides = stB;
	memset(b, 0, sizeof b);
	expect("compact strides", addrow_dlpack(M, N, 0.5f, &A, &mt, &B), 0, NULL);
	if (!check_result())
		fails++;
	A.strides = B.strides = NULL;

	expect("NULL tensor", addrow_dlpack(M, N, 0.5f, &A, NULL, &B), 1, "addrow: DLTensor 'm' is NULL");
	DLTensor t = B;
	t.data = NULL;
	expect("NULL data", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 1, "DLTensor 'B'");
	t = B;
	t.device.device_type = kDLCUDA;
	expect("device", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "addrow: DLTensor 'B' is not in CPU memory");
	t = B;
	t.dtype.code = kDLInt;
	expect("dtype code", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "DLTensor 'B' has the wrong data type");
	t = B;
	t.dtype.bits = 64;
	expect("dtype bits", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "has the wrong data type");
	t = B;
	t.dtype.lanes = 4;
	expect("dtype lanes", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "has the wrong data type");
	t = mt;
	t.dtype.code = kDLInt;
	expect("bool as int8", addrow_dlpack(M, N, 0.5f, &A, &t, &B), 5, "DLTensor 'm' has the wrong data type");
	t.dtype.code = 6;   /* kDLBool in DLPack 0.8 and later */
	expect("bool as kDLBool", addrow_dlpack(M, N, 0.5f, &A, &t, &B), 0, NULL);
	t = B;
	t.ndim = 1;
	expect("ndim", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "has the wrong number of dimensions");
	expect("shape", addrow_dlpack(M, N + 1, 0.5f, &A, &mt, &B), 5,
	    "addrow: DLTensor 'A' has the wrong shape [3, 6], want [3, 7]");
	int64_t bad[2] = { M, N - 1 };
	t = B;
	t.shape = bad;
	expect("shape 2", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5,
	    "addrow: DLTensor 'B' has the wrong shape [3, 4], want [3, 5]");
	int64_t cm[2] = { 1, M };   /* column-major */
	t = B;
	t.strides = cm;
	expect("strides", addrow_dlpack(M, N, 0.5f, &A, &mt, &t), 5, "DLTensor 'B' is not compact row-major");
	t = A;
	t.byte_offset = 2;
	expect("byte_offset", addrow_dlpack(M, N, 0.5f, &t, &mt, &B), 5, "byte_offset");
	/* the sizes are checked first, as the plain entry point does */
	expect("negative size", addrow_dlpack(-1, N, 0.5f, &A, &mt, &B), 2, "addrow: size M must not be negative");

	/* empty tensors (PyTorch exports them with NULL data): NULL is fine
	 * where a tensor has no elements, here A and B with M = 0; a tensor
	 * with elements still needs its data, checked after the shape */
	int64_t ea[2] = { 0, N + 1 }, eb[2] = { 0, N };
	DLTensor EA = tensor(NULL, kDLFloat, 32, 2, ea), EB = tensor(NULL, kDLFloat, 32, 2, eb);
	expect("empty A and B", addrow_dlpack(0, N, 0.5f, &EA, &mt, &EB), 0, NULL);
	EA.byte_offset = 8;
	expect("empty A with an offset", addrow_dlpack(0, N, 0.5f, &EA, &mt, &EB), 0, NULL);
	t = mt;
	t.data = NULL;
	expect("NULL data with elements", addrow_dlpack(0, N, 0.5f, &EA, &t, &EB), 1,
	    "addrow: DLTensor 'm' has NULL data");
	expect("empty, wrong shape first", addrow_dlpack(0, N - 1, 0.5f, &EA, &t, &EB), 5,
	    "addrow: DLTensor 'A' has the wrong shape");
	t = EB;
	t.shape = NULL;
	expect("NULL shape", addrow_dlpack(0, N, 0.5f, &EA, &mt, &t), 5,
	    "addrow: DLTensor 'B' has a NULL shape");
	/* the plain entry point: NULL for A and B of no elements, not for m */
	expect("plain, empty A and B", addrow(0, N, 0.5f, NULL, mk, NULL), 0, NULL);
	expect("plain, NULL m", addrow(0, N, 0.5f, NULL, NULL, NULL), 1, "addrow: argument 'm' is NULL");
	expect("plain, NULL A with elements", addrow(M, N, 0.5f, NULL, mk, b), 1,
	    "addrow: argument 'A' is NULL");
	/* N = 0: m and B have no elements, A has M (N + 1 = 1 column) */
	expect("plain, N = 0", addrow(M, 0, 0.5f, a, NULL, NULL), 0, NULL);
	expect("plain, N = 0, NULL A", addrow(M, 0, 0.5f, NULL, NULL, NULL), 1,
	    "addrow: argument 'A' is NULL");

	/* an extent-1 dimension may have any stride */
	int64_t s1[1] = { 1 }, st1[1] = { 99 };
	uint16_t hx[1] = { 0x3c00 };   /* 1.0 */
	float hy[1] = { 0 };
	DLTensor X = tensor(hx, kDLFloat, 16, 1, s1), Y = tensor(hy, kDLFloat, 32, 1, s1);
	X.strides = st1;
	if (half_dlpack(1, &X, &Y) != 0 || hy[0] != 2.0f) {
		printf("FAIL: f16: rc %s, y = %g\n", LAST_ERROR_HALF(), hy[0]);
		fails++;
	}
	X.dtype.bits = 32;
	if (half_dlpack(1, &X, &Y) != 5) {
		printf("FAIL: f16 tensor with 32 bits accepted\n");
		fails++;
	}

	/* bf16 is kDLBfloat with 16 bits; 1.5 * 3 = 4.5 (0x4090) */
	uint16_t bx[1] = { 0x3fc0 }, by[1] = { 0 };
	DLTensor BX = tensor(bx, kDLBfloat, 16, 1, s1), BY = tensor(by, kDLBfloat, 16, 1, s1);
	if (brain_dlpack(1, &BX, &BY) != 0 || by[0] != 0x4090) {
		printf("FAIL: bf16: rc %s, y = %04x\n", LAST_ERROR_BRAIN(), by[0]);
		fails++;
	}
	BX.dtype.code = kDLFloat;
	if (brain_dlpack(1, &BX, &BY) != 5 ||
	    !strstr(LAST_ERROR_BRAIN(), "DLTensor 'x' has the wrong data type")) {
		printf("FAIL: bf16 as kDLFloat: %s\n", LAST_ERROR_BRAIN());
		fails++;
	}
	return fails != 0;
}
C
"$TXC" --dlpack -H k.h k.tx -o k.o || { echo "FAIL: txc --dlpack"; exit 1; }
nm k.o | grep -q ' T addrow_dlpack$' || { echo "FAIL: k.o defines no addrow_dlpack"; exit 1; }
${CC:-cc} -Wall -I"$abs_top_srcdir/rt" main.c k.o "$lib" -lpthread -lm -o main ||
	{ echo "FAIL: link with the LLVM object"; exit 1; }
./main || { echo "FAIL: the LLVM object's NAME_dlpack"; exit 1; }
# the C backend agrees
"$TXC" --emit=c --dlpack -H k.h k.tx -o k.c || { echo "FAIL: txc --emit=c"; exit 1; }
${CC:-cc} -DTXC_DLPACK -DUSE_C main.c k.c -lm -o main_c || { echo "FAIL: build with the C output"; exit 1; }
./main_c || { echo "FAIL: the C backend's NAME_dlpack"; exit 1; }
exit 0
