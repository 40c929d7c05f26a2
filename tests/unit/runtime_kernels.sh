#!/bin/sh
# runtime_kernels.sh: libtxrt's prebuilt micro-kernels.
#
#   - `txc --runtime-kernels` writes the fifteen AVX2 txrt_fma_outer_*
#     functions and the fifteen AVX-512 txrt_fma_outer_zmm_* ones (each
#     choosing its zmm or its ymm copy by txrt_cpu_has) that libtxrt
#     holds, static and shared, and refuses an input file, --cpu and a
#     non-native --emit;
#   - on a machine with every feature they need, a tensorized object calls
#     libtxrt's copy instead of defining its own; --local-intrinsics,
#     --cpu and a --features list that takes AVX2 away make it build its
#     own (elsewhere, the default builds its own too);
#   - a packed matmul that calls them links with the shared libtxrt
#     (-ltxrt) and computes what a plain triple loop computes, with and
#     without --local-intrinsics, on sizes with edges in every direction.
# Skips (77) where libtxrt has no micro-kernels (configure: not x86-64).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
libs=$abs_top_builddir/rt/.libs
[ -f "$libs/libtxrt.a" ] || { echo "SKIP: no static libtxrt"; exit 77; }
nm "$libs/libtxrt.a" 2>/dev/null | grep -q ' T txrt_fma_outer_' ||
	{ echo "SKIP: libtxrt has no prebuilt micro-kernels (not an x86-64 build)"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- what --runtime-kernels writes, and what libtxrt exports --------------
"$TXC" --runtime-kernels -o k.o || { echo "FAIL: txc --runtime-kernels"; exit 1; }
nm k.o | sed -n 's/.* T \(txrt_fma_outer_.*\)/\1/p' | sort >k.syms
[ "$(wc -l <k.syms)" -eq 30 ] || fail "--runtime-kernels defines $(wc -l <k.syms) kernels, not 30"
[ "$(grep -c '^txrt_fma_outer_zmm_' k.syms)" -eq 15 ] || fail "--runtime-kernels: not 15 zmm kernels"
for s in txrt_fma_outer_6x16_i1_k6_b16 txrt_fma_outer_6x16_k1_b16 txrt_fma_outer_6x16_k1 \
    txrt_fma_outer_4x24_i1_k4_b24 txrt_fma_outer_12x8_k1 txrt_fma_outer_1x64_k1 \
    txrt_fma_outer_zmm_14x32_i1_k14_b32 txrt_fma_outer_zmm_1x128_k1 txrt_fma_outer_zmm_8x48_k1; do
	grep -qx "$s" k.syms || fail "--runtime-kernels: no $s"
done
nm "$libs/libtxrt.a" | sed -n 's/.* T \(txrt_fma_outer_.*\)/\1/p' | sort >a.syms
cmp -s k.syms a.syms || fail "libtxrt.a's micro-kernels differ from --runtime-kernels'"
if [ -f "$libs/libtxrt.so" ]; then
	nm -D "$libs/libtxrt.so" | sed -n 's/.* T \(txrt_fma_outer_.*\)/\1/p' | sort >so.syms
	cmp -s k.syms so.syms || fail "libtxrt.so does not export every micro-kernel"
fi
"$TXC" --runtime-kernels -S -o k.s && grep -q vfmadd231ps k.s ||
	fail "--runtime-kernels -S: no FMA in the assembly"
# the zmm kernels' two copies: zmm registers in one, none in the other
zmm() { sed -n "/^$1:/,/^\.Lfunc_end/p" k.s | grep -c '%zmm'; }
[ "$(zmm txrt_fma_outer_zmm_14x32_i1_k14_b32_avx512)" -gt 28 ] ||
	fail "txrt_fma_outer_zmm_14x32_i1_k14_b32_avx512: no zmm code"
[ "$(zmm txrt_fma_outer_zmm_14x32_i1_k14_b32_avx2)" -eq 0 ] ||
	fail "txrt_fma_outer_zmm_14x32_i1_k14_b32_avx2: zmm code"

refuse() {  # expected-message-part args...
	want=$1
	shift
	if "$TXC" "$@" -o bad.o >out 2>&1; then
		fail "txc $* succeeded"
	elif ! grep -q -- "$want" out; then
		fail "txc $*: message lacks '$want':"
		cat out
	elif [ -e bad.o ]; then
		fail "txc $* left an output file"
	fi
}
echo 'kernel k(N) { in a: f32[N]; out b: f32[N]; b[i] = a[i]; }' >k.tx
refuse "takes no input file" --runtime-kernels k.tx
refuse "drop --target, --cpu" --runtime-kernels --cpu=generic
refuse "writes an object, assembly" --runtime-kernels --emit=c

# ---- which objects call them ------------------------------------------------
tuned=$abs_top_srcdir/stdlib/tuned/matmul.tx
calls() {  # object: prebuilt, local or mixed
	u=$(nm "$1" | grep -c ' U txrt_fma_outer_')
	t=$(nm "$1" | grep -c ' t txc\.fma_outer\.')
	if [ "$u" -gt 0 ] && [ "$t" -eq 0 ]; then echo prebuilt
	elif [ "$u" -eq 0 ] && [ "$t" -gt 0 ]; then echo local
	else echo "mixed (U $u, t $t)"; fi
}
# what the prebuilt code needs, as /proc/cpuinfo names it
fits=yes
for f in sse4_1 sse4_2 ssse3 pni popcnt cx16 lahf_lm avx avx2 fma f16c bmi1 bmi2 abm \
    movbe xsave 3dnowprefetch; do
	grep -qw "$f" /proc/cpuinfo 2>/dev/null || fits=no
done
"$TXC" -s fast "$tuned" -o def.o || fail "txc tuned/matmul.tx"
want=local
[ $fits = yes ] && want=prebuilt
[ "$(calls def.o)" = $want ] || fail "default object on this machine: $(calls def.o), not $want"
"$TXC" -s fast --local-intrinsics "$tuned" -o loc.o || fail "txc --local-intrinsics"
[ "$(calls loc.o)" = local ] || fail "--local-intrinsics: $(calls loc.o)"
"$TXC" -s fast --cpu=generic --features=+avx2,+fma "$tuned" -o gen.o || fail "txc --cpu=generic"
[ "$(calls gen.o)" = local ] || fail "--cpu=generic: $(calls gen.o)"
if [ $fits = yes ]; then
	"$TXC" -s fast --features=-avx2 "$tuned" -o noavx2.o || fail "txc --features=-avx2"
	[ "$(calls noavx2.o)" = local ] || fail "--features=-avx2: $(calls noavx2.o)"
	"$TXC" -s fast --features=-avx512f "$tuned" -o no512.o || fail "txc --features=-avx512f"
	[ "$(calls no512.o)" = prebuilt ] || fail "--features=-avx512f: $(calls no512.o)"
fi

# ---- a packed matmul through the shared libtxrt -------------------------------
cat >main.c <<'C'
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "txrt.h"
int matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
int
main(void)
{
	/* the first three take the matmul's 1 x 64 specialization (M < 6), the
	 * next three its unpacked 6 x 16 one (K = 0 or N*K <= 262144), the last
	 * three its packed blocks (512 columns x 384 deep, 48-row blocks in
	 * parallel): short last blocks in every direction, and exact ones */
	static const int64_t sz[][3] = { { 1, 1, 1 }, { 5, 7, 0 }, { 3, 200, 77 },
	    { 6, 16, 256 }, { 13, 37, 300 }, { 97, 271, 531 }, { 97, 700, 531 },
	    { 7, 513, 600 }, { 192, 1024, 768 } };
	for (int s = 0; s < 9; s++) {
		int64_t M = sz[s][0], N = sz[s][1], K = sz[s][2];
		float *a = malloc(sizeof *a * (size_t)(M * K)), *b = malloc(sizeof *b * (size_t)(K * N));
		float *c = malloc(sizeof *c * (size_t)(M * N));
		for (int64_t i = 0; i < M * K; i++) a[i] = (float)((i * 7919) % 13) - 6.0f;
		for (int64_t i = 0; i < K * N; i++) b[i] = (float)((i * 104729) % 11) - 5.0f;
		if (matmul(M, N, K, a, b, c)) { printf("rc: %s\n", txrt_last_error()); return 1; }
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double r = 0;
				for (int64_t k = 0; k < K; k++) r += (double)a[i * K + k] * b[k * N + j];
				if (fabs(c[i * N + j] - r) > 1e-3 * (1 + fabs(r))) {
					printf("%lldx%lldx%lld: C[%lld,%lld] = %g, not %g\n", (long long)M,
					    (long long)N, (long long)K, (long long)i, (long long)j, c[i * N + j], r);
					return 1;
				}
			}
		free(a); free(b); free(c);
	}
	return 0;
}
C
for o in def loc; do
	if ! ${CC:-cc} -I"$abs_top_srcdir/rt" main.c $o.o -L"$libs" -ltxrt -lm -o run_$o >link.log 2>&1; then
		fail "$o.o does not link with -ltxrt"
		cat link.log
	elif ! LD_LIBRARY_PATH=$libs ./run_$o; then
		fail "$o.o computes the wrong product"
	fi
done
# an object with the AVX-512 tables calls libtxrt's dispatching copies
# where the AVX2 ones fit (they run here in their ymm copy) and computes
# the product: bench/kernels/sgemm_zmm.tx in all its forms
if [ $fits = yes ]; then
	TXC_STDLIB=$abs_top_srcdir/stdlib "$TXC" "$abs_top_srcdir/bench/kernels/sgemm_zmm.tx" -o zmm.o ||
	    fail "txc sgemm_zmm.tx"
	u=$(nm zmm.o | grep -c ' U txrt_fma_outer_zmm_')
	t=$(nm zmm.o | grep -c ' t txc\.fma_outer_zmm\.')
	[ "$u" -ge 2 ] && [ "$t" -eq 0 ] || fail "sgemm_zmm.tx: U $u, t $t (not libtxrt's zmm kernels)"
	if ! ${CC:-cc} -I"$abs_top_srcdir/rt" main.c zmm.o -L"$libs" -ltxrt -lm -o run_zmm >link.log 2>&1; then
		fail "zmm.o does not link with -ltxrt"
		cat link.log
	elif ! LD_LIBRARY_PATH=$libs ./run_zmm; then
		fail "zmm.o computes the wrong product"
	fi
fi
[ $fails -eq 0 ] || exit 1
echo "runtime kernels: $(wc -l <k.syms) in libtxrt; tuned matmul calls them: $(calls def.o)"
