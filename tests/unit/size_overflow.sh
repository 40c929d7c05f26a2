#!/bin/sh
# size_overflow.sh: entry points given sizes whose arithmetic is past 64
# bits return the size error (2) naming the tensor or buffer, never run
# (issue 24, item 4; lower/sizecheck.c).  A C program calls, plain and
# through DLPack, a two-stage kernel with an intermediate (big: t is
# N x M), a 4-D one (four), examples/matmul.tx, the stdlib matmul (its
# packed panel BL is K x 16) and the tuned one (-s fast: packed Ap and Bp,
# the fma_outer micro-kernel, specializations) with every size parameter
# at INT64_MAX and 2^62, 2^32 x 2^32 outputs, 65536^4 elements, and
# K = 2^60 + 1 (A and B fit, the panel's K*16*4 bytes do not); the tensors
# it passes are 16 floats, so a call that ran would be caught by the
# sanitizers or crash.  A representable intermediate too large to allocate
# (2^52 bytes at the root, after four others that are freed, a 2^56-byte
# panel in a parallel loop) gives the out-of-memory error (4) naming it.  The same
# program runs against the LLVM objects and the C backend's output (built
# with the sanitizers where the compiler has them: no undefined behaviour
# in the emitted checks, nor in a specialized kernel's NULL tests), so
# both backends agree on codes and messages,
# to the letter (with --prefix, a check names the entry point, as an
# allocation does: issue 36).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
[ -f /usr/include/dlpack/dlpack.h ] || { echo "SKIP: no dlpack/dlpack.h (libdlpack-dev)"; exit 77; }
# a failed 2^52-byte allocation is NULL, not a sanitizer report
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1
export ASAN_OPTIONS
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
mkdir n c || exit 99
cat >k.tx <<'TX'
kernel big(N, M) {
  in  x: f32[N];
  in  w: f32[M];
  out y: f32[N];
  t: f32[N, M];
  t[i, j] = x[i] * w[j];
  y[i] = sum(j < M) t[i, j];
}
kernel four(A, B, C, D) {
  in  x: f32[A, B, C, D];
  out y: f32[A, B, C, D];
  y[a, b, c, d] = x[a, b, c, d] + 1.0;
}
kernel many(N, M) {
  in  x: f32[N];
  in  w: f32[M];
  out y: f32[N];
  a: f32[N];
  b: f32[N];
  c: f32[N];
  d: f32[N];
  t: f32[N, M];
  a[i] = x[i] + 1.0;
  b[i] = a[i] * 2.0;
  c[i] = b[i] - 1.0;
  d[i] = c[i] * 0.5;
  t[i, j] = d[i] * w[j];
  y[i] = sum(j < M) t[i, j];
}
schedule four for cpu {
  y.split(d, 8) -> (do, di);
  y.vectorize(di);
}
TX
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dlpack/dlpack.h>
#include "k.h"
#include "ex.h"
#include "st.h"
#include "tu.h"
#ifdef USE_C
#define LAST(k) k##_last_error()
#else
#include "txrt.h"
#define LAST(k) txrt_last_error()
#endif

#define X INT64_MAX
#define P62 ((int64_t)1 << 62)
#define P60 (((int64_t)1 << 60) + 1)
#define P32 ((int64_t)1 << 32)

/* tiny stand-ins: every call below must fail before touching them */
static float d0[16], d1[16], d2[16];
static int fails, calls;

static void
expect(const char *what, int rc, const char *msg, int want, const char *want_msg)
{
	calls++;
	if (rc != want || strcmp(msg, want_msg) != 0) {
		printf("FAIL: %s: rc %d (want %d), \"%s\" (want \"%s\")\n", what, rc, want, msg,
		    want_msg);
		fails++;
	}
}

static DLTensor
tensor(float *data, int ndim, int64_t *shape)
{
	DLTensor t;
	memset(&t, 0, sizeof t);
	t.data = data;
	t.device.device_type = kDLCPU;
	t.ndim = ndim;
	t.dtype.code = kDLFloat;
	t.dtype.bits = 32;
	t.dtype.lanes = 1;
	t.shape = shape;
	return t;
}

/* a matmul-like entry, plain and DLPack, at sizes M, N, K */
#define MM(k, m, n, kk, want, wmsg) do { \
	int64_t sa[2] = { m, kk }, sb[2] = { kk, n }, sc[2] = { m, n }; \
	DLTensor A = tensor(d0, 2, sa), B = tensor(d1, 2, sb), Cc = tensor(d2, 2, sc); \
	char w[160]; \
	snprintf(w, sizeof w, "%s(%lld, %lld, %lld)", #k, (long long)(m), (long long)(n), \
	    (long long)(kk)); \
	int rc = k(m, n, kk, d0, d1, d2); \
	expect(w, rc, LAST(k), want, wmsg); \
	strcat(w, " dlpack"); \
	rc = k##_dlpack(m, n, kk, &A, &B, &Cc); \
	expect(w, rc, LAST(k), want, wmsg); \
} while (0)

#define BIG(n, m, want, wmsg) do { \
	int64_t sx[1] = { n }, sw[1] = { m }; \
	DLTensor x = tensor(d0, 1, sx), w_ = tensor(d1, 1, sw), y = tensor(d2, 1, sx); \
	char w[160]; \
	snprintf(w, sizeof w, "big(%lld, %lld)", (long long)(n), (long long)(m)); \
	int rc = big(n, m, d0, d1, d2); \
	expect(w, rc, LAST(big), want, wmsg); \
	strcat(w, " dlpack"); \
	rc = big_dlpack(n, m, &x, &w_, &y); \
	expect(w, rc, LAST(big), want, wmsg); \
} while (0)

#define FOUR(a, b, c, d, want, wmsg) do { \
	int64_t s[4] = { a, b, c, d }; \
	DLTensor x = tensor(d0, 4, s), y = tensor(d1, 4, s); \
	char w[160]; \
	snprintf(w, sizeof w, "four(%lld, %lld, %lld, %lld)", (long long)(a), (long long)(b), \
	    (long long)(c), (long long)(d)); \
	int rc = four(a, b, c, d, d0, d1); \
	expect(w, rc, LAST(four), want, wmsg); \
	strcat(w, " dlpack"); \
	rc = four_dlpack(a, b, c, d, &x, &y); \
	expect(w, rc, LAST(four), want, wmsg); \
} while (0)

#define SZ "more bytes than 64 bits count"

int
main(void)
{
	/* every size parameter at INT64_MAX and 2^62 (others 1): some
	 * tensor's byte count is past 64 bits */
	setvbuf(stdout, NULL, _IONBF, 0);
	static const int64_t huge[2] = { X, P62 };
	for (int h = 0; h < 2; h++) {
		int64_t v = huge[h];
		BIG(v, 1, 2, "big: the sizes give 'x' (f32[N]) " SZ);
		BIG(1, v, 2, "big: the sizes give 'w' (f32[M]) " SZ);
		FOUR(v, 1, 1, 1, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
		FOUR(1, v, 1, 1, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
		FOUR(1, 1, v, 1, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
		FOUR(1, 1, 1, v, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
		MM(ex_matmul, v, 1, 1, 2, "ex_matmul: the sizes give 'A' (f32[M, K]) " SZ);
		MM(ex_matmul, 1, v, 1, 2, "ex_matmul: the sizes give 'B' (f32[K, N]) " SZ);
		MM(ex_matmul, 1, 1, v, 2, "ex_matmul: the sizes give 'A' (f32[M, K]) " SZ);
		MM(st_matmul, v, 1, 1, 2, "st_matmul: the sizes give 'A' (f32[M, K]) " SZ);
		MM(st_matmul, 1, v, 1, 2, "st_matmul: the sizes give 'B' (f32[K, N]) " SZ);
		MM(st_matmul, 1, 1, v, 2, "st_matmul: the sizes give 'A' (f32[M, K]) " SZ);
		MM(tu_matmul, v, 1, 1, 2, "tu_matmul: the sizes give 'A' (f32[M, K]) " SZ);
		MM(tu_matmul, 1, v, 1, 2, "tu_matmul: the sizes give 'B' (f32[K, N]) " SZ);
		MM(tu_matmul, 1, 1, v, 2, "tu_matmul: the sizes give 'A' (f32[M, K]) " SZ);
	}
	/* an intermediate's bytes past 64 bits, every argument in range */
	BIG(P32, P32, 2, "big: the sizes give 't' (f32[N, M]) " SZ);
	/* 65536^4 elements */
	FOUR(65536, 65536, 65536, 65536, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
	FOUR(1, P32, P32, 1, 2, "four: the sizes give 'x' (f32[A, B, C, D]) " SZ);
	/* 2^32 x 2^32 outputs */
	MM(ex_matmul, P32, P32, 1, 2, "ex_matmul: the sizes give 'C' (f32[M, N]) " SZ);
	MM(st_matmul, P32, P32, 1, 2, "st_matmul: the sizes give 'C' (f32[M, N]) " SZ);
	MM(tu_matmul, P32, P32, 1, 2, "tu_matmul: the sizes give 'C' (f32[M, N]) " SZ);
	/* K = 2^60 + 1: A and B fit (2^62 + 4 bytes), the packed panel's
	 * K*16*4 (or the packed A's) does not */
	MM(ex_matmul, 1, 1, P60, 2, "ex_matmul: the sizes give 'BL' (f32[K, 16]) " SZ);
	MM(st_matmul, 1, 1, P60, 2, "st_matmul: the sizes give 'BL' (f32[K, 16]) " SZ);
	/* (the tuned one packs K in blocks of 384: no panel of K*16) */
	/* representable, too large to allocate: the intermediate's 2^52 bytes */
	BIG((int64_t)1 << 20, (int64_t)1 << 30, 4, "big: out of memory allocating 't'");
	/* after four buffers that were allocated and filled (freed on the
	 * way out: LeakSanitizer) */
	{
		int64_t sx[1] = { 16 }, sw[1] = { (int64_t)1 << 56 };
		DLTensor x = tensor(d0, 1, sx), w_ = tensor(d1, 1, sw), y = tensor(d2, 1, sx);
		int rc = many(16, (int64_t)1 << 56, d0, d1, d2);
		expect("many(16, 2^56)", rc, LAST(many), 4, "many: out of memory allocating 't'");
		rc = many_dlpack(16, (int64_t)1 << 56, &x, &w_, &y);
		expect("many(16, 2^56) dlpack", rc, LAST(many), 4, "many: out of memory allocating 't'");
	}
	/* the same in a parallel loop: the panel BL of K = 2^50 (2^56 bytes) */
	MM(ex_matmul, 1, 1, (int64_t)1 << 50, 4, "ex_matmul: out of memory allocating 'BL'");
	MM(st_matmul, 1, 1, (int64_t)1 << 50, 4, "st_matmul: out of memory allocating 'BL'");
	printf("%d calls, %d failures\n", calls, fails);
	return fails != 0;
}
C
std=$abs_top_srcdir/stdlib
for emit in obj c; do
	d=n ext=o
	[ $emit = c ] && d=c ext=c
	"$TXC" --no-auto-schedule --emit=$emit --dlpack -H $d/k.h k.tx -o $d/k.$ext &&
	"$TXC" --emit=$emit --dlpack --prefix=ex_ -H $d/ex.h "$abs_top_srcdir/examples/matmul.tx" \
	    -o $d/ex.$ext &&
	# the stdlib's AVX2 plan (isa=avx2: panels of K x 16, as the messages
	# below say) on any host; AVX-512 takes panels of 32 columns
	"$TXC" --emit=$emit --dlpack --prefix=st_ -k matmul -K isa=avx2 -I "$std" -H $d/st.h \
	    "$std/matmul.tx" -o $d/st.$ext &&
	"$TXC" --emit=$emit --dlpack --prefix=tu_ -k matmul -s fast -I "$std" -H $d/tu.h \
	    "$std/tuned/matmul.tx" -o $d/tu.$ext || { echo "FAIL: txc --emit=$emit"; exit 1; }
done
${CC:-cc} -Wall -In -I"$abs_top_srcdir/rt" main.c n/k.o n/ex.o n/st.o n/tu.o "$lib" -lpthread -lm \
    -o main || { echo "FAIL: link with the LLVM objects"; exit 1; }
./main || { echo "FAIL: the LLVM objects"; exit 1; }
# the C backend agrees; with the sanitizers where they build
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
echo 'int main(void) { return 0; }' >probe.c
# shellcheck disable=SC2086
${CC:-cc} $san probe.c -o probe 2>/dev/null && ./probe || san=
# shellcheck disable=SC2086
${CC:-cc} -Wall $san -DTXC_DLPACK -DUSE_C -Ic main.c c/k.c c/ex.c c/st.c c/tu.c -lm -o main_c ||
	{ echo "FAIL: build with the C output"; exit 1; }
./main_c || { echo "FAIL: the C output"; exit 1; }
# a specialized kernel tests its tensors for NULL before its branch's size
# checks: the extent N + 2 of a NULL tensor at N = INT64_MAX - 1 is
# computed without overflow (emit_c.c, as_u64) and the call is refused
cat >sp.tx <<'TX'
kernel sp(N) {
  in  x: f32[N + 2];
  out y: f32[N];
  y[i] = x[i] + x[i + 2];
}
schedule sp for cpu {
  specialize (N >= 64) {
    y.split(i, 8) -> (io, ii);
    y.vectorize(ii);
  }
}
TX
cat >sp_main.c <<'EOC'
#include <stdint.h>
#include <stdio.h>
int sp(int64_t N, const float *x, float *y);
int main(void)
{
	float y[4];
	int rc = sp(INT64_MAX - 1, NULL, y);
	if (rc == 0) {
		printf("FAIL: sp(INT64_MAX - 1, NULL, y) ran\n");
		return 1;
	}
	return 0;
}
EOC
"$TXC" --emit=c sp.tx -o sp.c || { echo "FAIL: txc --emit=c sp.tx"; exit 1; }
# shellcheck disable=SC2086
${CC:-cc} -Wall $san sp_main.c sp.c -lm -o sp || { echo "FAIL: build sp"; exit 1; }
./sp || { echo "FAIL: the specialized kernel's NULL test"; exit 1; }
exit 0
