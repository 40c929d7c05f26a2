#!/bin/sh
# conv_i8.sh: the stdlib's int8 convolution (conv2d.tx conv2d_i8) through
# each table its isa knob takes (avx2: vpmaddwd; avxvnni and avx512vnni:
# vpdpbusd; generic: plain vector code), on the whole range of the inputs
# (-128 and 127 included: an image plane and a filter of each), at sizes
# that leave partial blocks of output channels and columns (the masked
# vector code of target/llvm/intrin_dot.c), 1 x 1 to 3 x 5 filters and
# paddings up to 2, compared exactly with a plain C convolution in the
# driver (i32 sums wrapping as the kernel's do).  As stdlib_int8.sh: a
# table whose instruction set this CPU lacks must return TXRT_ERR_CPU
# (8) naming it, never die of SIGILL; then the VNNI tables once more for
# this CPU with TXC_DOT_EMULATE=1.  Skips (77) off x86-64 and where the
# CPU lacks AVX2.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_STDLIB=$srcdir/stdlib; export TXC_STDLIB
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
case $(uname -m) in x86_64) ;; *) echo "SKIP: not x86-64"; exit 77 ;; esac
grep -qw avx2 /proc/cpuinfo 2>/dev/null || { echo "SKIP: the CPU has no AVX2"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: conv_i8: $*"; cat run.log 2>/dev/null; exit 1; }
cat >main.c <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "g.h"
#include "txrt.h"
static uint64_t seed = 88172645463325252ull;
static uint64_t
next(void)
{
	seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
	return seed;
}
int
main(void)
{
	/* N C H W K R S PH PW */
	static const int64_t sizes[][9] = {
		{ 1, 9, 5, 37, 10, 3, 3, 1, 1 }, { 2, 3, 7, 16, 4, 3, 3, 1, 1 },
		{ 1, 64, 6, 40, 33, 3, 3, 1, 1 }, { 1, 17, 4, 9, 8, 1, 1, 0, 0 },
		{ 1, 1, 1, 1, 1, 1, 1, 0, 0 }, { 1, 5, 9, 70, 13, 3, 5, 2, 0 },
		{ 1, 130, 3, 33, 5, 2, 2, 1, 2 }, { 1, 8, 3, 3, 9, 3, 3, 0, 0 },
	};
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		const int64_t *z = sizes[t];
		int64_t N = z[0], C = z[1], H = z[2], W = z[3], K = z[4], R = z[5], S = z[6];
		int64_t PH = z[7], PW = z[8], P = H + 2 * PH - R + 1, Q = W + 2 * PW - S + 1;
		int8_t *x = malloc((size_t)(N * C * H * W)), *w = malloc((size_t)(K * C * R * S));
		int32_t *y = malloc((size_t)(N * K * P * Q) * 4);
		int bad = 0;
		for (int64_t i = 0; i < N * C * H * W; i++)
			x[i] = (int8_t)(next() % 256 - 128);
		for (int64_t i = 0; i < K * C * R * S; i++)
			w[i] = (int8_t)(next() % 256 - 128);
		/* extremes: the first input plane -128, the last 127; the first
		 * filter -128, the last 127 */
		for (int64_t i = 0; i < H * W; i++)
			x[i] = -128, x[(N * C - 1) * H * W + i] = 127;
		for (int64_t i = 0; i < C * R * S; i++)
			w[i] = -128, w[(K - 1) * C * R * S + i] = 127;
		int rc = conv2d_i8(N, C, H, W, K, R, S, PH, PW, x, w, y);
		if (rc) {
			printf("conv2d_i8 %d %s\n", rc, txrt_last_error());
			bad = rc == 8 ? 8 : 1;
			goto done;
		}
		for (int64_t n = 0; n < N; n++)
			for (int64_t k = 0; k < K; k++)
				for (int64_t p = 0; p < P; p++)
					for (int64_t q = 0; q < Q; q++) {
						uint32_t r = 0;
						for (int64_t c = 0; c < C; c++)
							for (int64_t a = 0; a < R; a++)
								for (int64_t b = 0; b < S; b++) {
									int64_t h = p + a - PH, v = q + b - PW;
									if (h < 0 || h >= H || v < 0 || v >= W)
										continue;
									r += (uint32_t)(x[((n * C + c) * H + h) * W + v] *
									    w[((k * C + c) * R + a) * S + b]);
								}
						int32_t got = y[((n * K + k) * P + p) * Q + q];
						if ((int32_t)r != got) {
							printf("conv2d_i8 case %zu: y[%lld, %lld, %lld, %lld] = %d, "
							    "not %d\n", t, (long long)n, (long long)k, (long long)p,
							    (long long)q, got, (int32_t)r);
							bad = 1;
							goto done;
						}
					}
done:
		free(x), free(w), free(y);
		if (bad)
			return bad;
	}
	printf("ok\n");
	return 0;
}
C
ran=0
# ISA FLAGS...: conv2d_i8 with -K isa=ISA for a CPU that has it
try() {
	isa=$1
	shift
	"$TXC" -K isa="$isa" "$@" -k conv2d_i8 "$srcdir/stdlib/conv2d.tx" -o g.o -H g.h \
	    >run.log 2>&1 || fail "txc -K isa=$isa $*"
	table=$("$TXC" -K isa="$isa" "$@" -k conv2d_i8 --print-loops "$srcdir/stdlib/conv2d.tx" 2>&1 |
	    grep -o -E 'i8_[a-z_]+\(' | sort -u | tr -d '(' | tr '\n' ' ')
	[ "$isa" = generic ] || [ -n "$table" ] || fail "isa=$isa: no micro-kernel call"
	${CC:-cc} -O1 -I"$abs_top_srcdir/rt" -I"$abs_top_builddir/rt" -o g main.c g.o "$lib" \
	    -lpthread -ldl -lm >run.log 2>&1 || fail "cc ($isa)"
	./g >run.log 2>&1
	rc=$?
	[ $rc -lt 128 ] || fail "isa=$isa: died of signal $((rc - 128))"
	if [ $rc -eq 8 ]; then
		grep -q "compiled for a CPU with instructions this CPU lacks (.*$isa" run.log ||
		    fail "isa=$isa: TXRT_ERR_CPU without naming $isa"
		echo "ok: isa=$isa ($table): not run here, $(sed -n 's/^[a-z_0-9]* 8 //p' run.log)"
		return
	fi
	[ $rc -eq 0 ] || fail "isa=$isa ($table): exit $rc"
	echo "ok: isa=$isa (${table:-plain vectors}): every size exact"
	ran=$((ran + 1))
}
try avx2
try generic
try avxvnni --features=+avxvnni
try avx512vnni --cpu=sapphirerapids
TXC_DOT_EMULATE=1
export TXC_DOT_EMULATE
for isa in avxvnni avx512vnni; do
	printf 'emulated: '
	try $isa
done
[ $ran -gt 0 ] || { echo "SKIP: no table ran"; exit 77; }
exit 0
