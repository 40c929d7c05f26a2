#!/bin/sh
# shared_lib.sh: txc --shared and -o NAME.so write a shared library that
# dlopen loads (txc(1) --shared), and --signature writes the entry points
# as JSON.  A C program loads the library with RTLD_LOCAL, calls a
# parallel kernel and its DLPack entry point, reads a refused call's
# message through the library's txrt_last_error, and a --target=cuda
# library runs in libtxrt's emulator.  A failed link (a compiler that
# does not exist, a missing libtxrt archive) leaves no file behind, and
# --shared refuses --emit.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
[ -f "$abs_top_builddir/rt/.libs/libtxrt.a" ] || { echo "SKIP: no static libtxrt"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; exit 1; }

cat >k.tx <<'TX'
kernel scale(N, a: f32) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = a * x[i] + 1.0;
}
schedule scale for cpu {
  y.split(i, 64) -> (io, ii);
  y.parallel(io);
  y.vectorize(ii);
}
schedule scale for cuda {
  y.split(i, 32) -> (b, t);
  y.bind(b, blockIdx.x);
  y.bind(t, threadIdx.x);
}
TX
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef struct { void *data; struct { int32_t type, id; } dev; int32_t ndim;
    struct { uint8_t code, bits; uint16_t lanes; } dtype; int64_t *shape, *strides;
    uint64_t byte_offset; } Tensor;   /* DLTensor's layout */
int
main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
	int (*f)(int64_t, float, const float *, float *) = (int (*)(int64_t, float, const float *, float *))dlsym(h, "scale");
	int (*fd)(int64_t, float, Tensor *, Tensor *) = (int (*)(int64_t, float, Tensor *, Tensor *))dlsym(h, "scale_dlpack");
	const char *(*err)(void) = (const char *(*)(void))dlsym(h, "txrt_last_error");
	if (!f || !fd || !err) { printf("missing symbols\n"); return 1; }
	enum { N = 1001 };
	static float x[N], y[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)i;
	if (f(N, 2.0f, x, y) != 0) { printf("scale: %s\n", err()); return 1; }
	for (int i = 0; i < N; i++)
		if (y[i] != 2.0f * i + 1.0f) { printf("y[%d] = %g\n", i, y[i]); return 1; }
	int64_t sx = N, sy = N - 1;
	Tensor tx = { x, { 1, 0 }, 1, { 2, 32, 1 }, &sx, NULL, 0 };
	Tensor ty = { y, { 1, 0 }, 1, { 2, 32, 1 }, &sy, NULL, 0 };
	int rc = fd(N, 1.0f, &tx, &ty);
	printf("rc %d: %s\n", rc, err());
	sy = N;
	if (fd(N, 3.0f, &tx, &ty) != 0 || y[10] != 31.0f) { printf("dlpack: %s\n", err()); return 1; }
	printf("ok\n");
	return 0;
}
C
${CC:-cc} -o main main.c -ldl || fail "main.c does not compile"

"$TXC" --dlpack --signature=k.json k.tx -o k.so || fail "txc -o k.so"
[ -f k.so ] && [ ! -f k.so.o ] || fail "k.so missing or its scratch object left"
ls | grep -q tmp && fail "a temporary file was left: $(ls)"
./main ./k.so >out || { cat out; fail "the library does not run"; }
grep -q "^rc 5: scale: DLTensor 'y' has the wrong shape \[1000\], want \[1001\]" out ||
	{ cat out; fail "the refused call's message"; }
grep -q '"name": "a", "size": false, "type": "f32"' k.json || { cat k.json; fail "signature"; }
grep -q '"name": "y", "dir": "out", "type": "f32", "shape": \["N"\]' k.json ||
	{ cat k.json; fail "signature shape"; }

# --shared with the default name; cuda in the emulator
"$TXC" --shared --dlpack --target=cuda k.tx || fail "txc --shared --target=cuda"
[ -f k.so ] || fail "--shared did not write k.so"
TXRT_CUDA=emulate ./main ./k.so >out || { cat out; fail "the cuda library in the emulator"; }

# failures leave nothing behind, and keep an old file
echo old >old.so
CC=/nonexistent/cc "$TXC" k.tx -o old.so 2>err && fail "a missing compiler links"
grep -q "cannot run the C compiler '/nonexistent/cc'" err || { cat err; fail "missing cc message"; }
[ "$(cat old.so)" = old ] || fail "a failed link changed old.so"
TXC_LIBTXRT=/nonexistent/libtxrt.a "$TXC" k.tx -o new.so 2>err && fail "a missing archive links"
grep -q "no libtxrt archive at '/nonexistent/libtxrt.a'" err || { cat err; fail "archive message"; }
[ -f new.so ] && fail "a failed link left new.so"
ls | grep -q tmp && fail "a temporary file was left: $(ls)"
"$TXC" --shared --emit=llvm k.tx -o x.so 2>err && fail "--shared --emit=llvm"
grep -q "does not go with -S, --emit" err || { cat err; fail "--shared --emit message"; }
echo "ok"
