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
# CPU lacks AVX2 (tests/run/isa_tables.sh, which stdlib_int8.sh shares).
TRY_NAME=conv_i8
. "$(dirname "$0")/isa_tables.sh"
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
		/* 1 x 1 filters (their weights read as they are with
		 * AVX512-VNNI): wide, narrow, padded, K no multiple of 4 */
		{ 2, 67, 3, 37, 19, 1, 1, 0, 0 }, { 1, 6, 5, 7, 17, 1, 1, 1, 1 },
		{ 1, 3, 2, 2, 3, 1, 1, 0, 0 },
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
TRY_FILE=$srcdir/stdlib/conv2d.tx TRY_KERNELS="-k conv2d_i8" TRY_CFLAGS=
isa_try avx2
# on a CPU without AVX512BW (its masked byte loads): the edge blocks'
# rows of b by 32-bit words, or whole where they end inside b
isa_try avx2 --features=-avx512f
isa_try generic
isa_try avxvnni --features=+avxvnni
# shellcheck disable=SC2046
isa_try avx512vnni $(isa_cpu avx512_vnni)
# the VNNI kernel without its panel path (b's rows loaded one by one)
TXC_DOT_PANEL=0 isa_try avx512vnni $(isa_cpu avx512_vnni)
TXC_DOT_EMULATE=1
export TXC_DOT_EMULATE
for isa in avxvnni avx512vnni; do
	printf 'emulated: '
	isa_try $isa
done
# the panel path's byte permutes emulated too (as on a CPU without
# AVX512_VBMI)
printf 'emulated: '
isa_try avx512vnni --features=-avx512vbmi
[ $ran -gt 0 ] || { echo "SKIP: no table ran"; exit 77; }
exit 0
