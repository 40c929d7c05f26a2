#!/bin/sh
# stdlib_int8.sh: the stdlib's int8 and bf16 GEMMs (gemm_i8, matmul_bf16)
# through each micro-kernel table the isa knob takes, on the whole range
# of the inputs (i8: -128 and 127 included, rows and columns of them,
# where vpmaddubsw would saturate and the VNNI compensation is largest;
# bf16: random values), at sizes that leave partial tiles and a K no
# multiple of 2 or 4, compared with a plain C product in the driver
# (exact for i8; bf16's f32 sums within 1e-4 of the sum of the
# products' magnitudes).  Each table is
# compiled for a CPU that has its instruction set (avx2: the host;
# avxvnni: the host plus +avxvnni; avx512vnni and avx512bf16:
# sapphirerapids); where this CPU lacks it, the object must return
# libtxrt's TXRT_ERR_CPU (8) naming the missing set, never die of
# SIGILL, and that table counts as not run.  Then the VNNI and BF16
# tables once more for this CPU with TXC_DOT_EMULATE=1 (txc builds their
# vpdpbusd and vdpbf16ps from plain vector code): their packing, K
# tails and compensation run and are checked everywhere; the AMX tables
# (amxint8, amxbf16: sapphirerapids) likewise with TXC_AMX_EMULATE=1
# (libtxrt's kernels on emulated tiles).  Skips (77) off
# x86-64 and where the CPU lacks AVX2 (no table runs).
TRY_NAME=stdlib_int8
. "$(dirname "$0")/isa_tables.sh"
cat >main.c <<'C'
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "g.h"
#include "txrt.h"
static uint64_t seed = 88172645463325252ull;
static uint64_t
next(void)
{
	seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
	return seed;
}
static float
bf(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
int
main(void)
{
	static const int64_t sizes[][3] = {
		{ 13, 35, 19 }, { 8, 32, 1 }, { 1, 1, 1 }, { 29, 97, 131 }, { 16, 64, 64 },
		{ 9, 49, 0 }, { 8, 32, 4 }, { 8, 32, 5 }, { 33, 70, 257 }, { 24, 96, 6 },
		{ 12, 32, 7 }, { 4, 16, 3 }, { 2, 3, 2 }, { 3, 33, 63 }, { 25, 48, 128 },
		{ 50, 16, 65 }, { 37, 53, 129 }, { 64, 64, 256 }, { 300, 130, 1100 },
	};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int64_t M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
		int8_t *A = malloc((size_t)(M * K + 1)), *B = malloc((size_t)(K * N + 1));
		int32_t *C = malloc((size_t)(M * N) * 4);
		uint16_t *Ah = malloc((size_t)(M * K + 1) * 2), *Bh = malloc((size_t)(K * N + 1) * 2);
		float *Cf = malloc((size_t)(M * N) * 4);
		for (int64_t i = 0; i < M * K; i++) {
			A[i] = (int8_t)(next() % 256 - 128);
			Ah[i] = (uint16_t)(0x3c00 + next() % 0x600) ^ (next() & 1 ? 0x8000 : 0);
		}
		for (int64_t i = 0; i < K * N; i++) {
			B[i] = (int8_t)(next() % 256 - 128);
			Bh[i] = (uint16_t)(0x3c00 + next() % 0x600) ^ (next() & 1 ? 0x8000 : 0);
		}
		/* extremes: A's first row -128, its last 127; B's first column
		 * -128, its last 127 */
		for (int64_t k = 0; k < K; k++) {
			A[k] = -128, A[(M - 1) * K + k] = 127;
			B[k * N] = -128, B[k * N + N - 1] = 127;
		}
		int rc = gemm_i8(M, N, K, A, B, C), bad = 0;
		if (rc) {
			printf("gemm_i8 %d %s\n", rc, txrt_last_error());
			bad = rc == 8 ? 8 : 1;
			goto done;
		}
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				uint32_t r = 0;
				for (int64_t k = 0; k < K; k++)
					r += (uint32_t)(A[i * K + k] * B[k * N + j]);
				if ((int32_t)r != C[i * N + j]) {
					printf("gemm_i8 M=%lld N=%lld K=%lld: C[%lld, %lld] = %d, not %d\n",
					    (long long)M, (long long)N, (long long)K, (long long)i,
					    (long long)j, C[i * N + j], (int32_t)r);
					bad = 1;
					goto done;
				}
			}
#ifdef BF16
		rc = matmul_bf16(M, N, K, Ah, Bh, Cf);
		if (rc) {
			printf("matmul_bf16 %d %s\n", rc, txrt_last_error());
			bad = rc == 8 ? 8 : 1;
			goto done;
		}
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double r = 0, m = 0;
				for (int64_t k = 0; k < K; k++) {
					double p = (double)bf(Ah[i * K + k]) * bf(Bh[k * N + j]);
					r += p;
					m += fabs(p);
				}
				if (fabs(r - Cf[i * N + j]) > 1e-4 * m + 1e-30) {
					printf("matmul_bf16 M=%lld N=%lld K=%lld: C[%lld, %lld] = %g, not %g\n",
					    (long long)M, (long long)N, (long long)K, (long long)i,
					    (long long)j, Cf[i * N + j], r);
					bad = 1;
					goto done;
				}
			}
#endif
done:
		free(A), free(B), free(C), free(Ah), free(Bh), free(Cf);
		if (bad)
			return bad;
	}
	printf("ok\n");
	return 0;
}
C
TRY_FILE=$srcdir/stdlib/matmul.tx TRY_KERNELS="-k gemm_i8 -k matmul_bf16" TRY_CFLAGS=-DBF16
isa_try avx2
# on a CPU without AVX512BW (its masked byte loads): the edge blocks'
# rows of b by 32-bit words, or whole where they end inside b
isa_try avx2 --features=-avx512f
isa_try avxvnni --features=+avxvnni
# shellcheck disable=SC2046
isa_try avx512vnni $(isa_cpu avx512_vnni)
# the VNNI kernel without its panel path (b's rows loaded one by one)
TXC_DOT_PANEL=0 isa_try avx512vnni $(isa_cpu avx512_vnni)
# shellcheck disable=SC2046
isa_try avx512bf16 $(isa_cpu avx512_bf16)
# shellcheck disable=SC2046
isa_try amxint8 $(isa_cpu amx_int8)
# shellcheck disable=SC2046
isa_try amxbf16 $(isa_cpu amx_bf16)
# AMX's tiles emulated (libtxrt's rt/amx_emu.c): the kernels' packing,
# edges and tile sequence on any x86-64
printf 'emulated: '
TXC_AMX_EMULATE=1 isa_try amxint8
printf 'emulated: '
TXC_AMX_EMULATE=1 isa_try amxbf16
TXC_DOT_EMULATE=1
export TXC_DOT_EMULATE
for isa in avxvnni avx512vnni avx512bf16; do
	printf 'emulated: '
	isa_try $isa
done
# the panel path's byte permutes emulated too (as on a CPU without
# AVX512_VBMI)
printf 'emulated: '
isa_try avx512vnni --features=-avx512vbmi
[ $ran -gt 0 ] || { echo "SKIP: no table ran"; exit 77; }
exit 0
