#!/bin/sh
# zmm_asm.sh: the AVX-512 micro-kernels (stdlib/intrinsics/cpu.tx, emit
# "fma_outer_zmm") in the assembly for CPUs with AVX-512, checked without
# running it: compiled for skylake-avx512, sapphirerapids and znver4,
# each kernel's full block keeps its register tile in zmm registers, as
# many FMAs per k step as the tile has accumulators, with no stack access
# in its k loop (14 x 32: 28 accumulators of zmm0-31, k not unrolled;
# 8 x 48 and 6 x 64: 24, k unrolled by 4); the host's AVX2 kernels stay
# in ymm when the target has no AVX-512 (--cpu=znver3).
# Skips (77) where txc has no x86 target.
set -u
: "${TXC:?TXC must name the txc binary}"
src=${abs_top_srcdir:-${srcdir:-.}}
TXC_STDLIB=$src/stdlib; export TXC_STDLIB
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: zmm_asm: $*"; exit 1; }
. "$src/tests/unit/asm_loop.sh"
{
	cat <<'TX'
import "intrinsics/cpu.tx";
kernel matmul(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
TX
	tile_schedule matmul t14x32 14 32 gemm_14x32_f32
	tile_schedule matmul t8x48 8 48 gemm_8x48_f32
	tile_schedule matmul t6x64 6 64 gemm_6x64_f32
	tile_schedule matmul t6x16 6 16 gemm_6x16_f32
} >m.tx
# the FMAs of the micro-kernel's innermost loops in $1 (asm_loop.sh)
fmas() {
	loops "$1" vfmadd fma_outer
}
for cpu in skylake-avx512 sapphirerapids znver4; do
	for t in "t14x32 28 14x32" "t8x48 96 8x48" "t6x64 96 6x64"; do
		set -- $t
		asm "$cpu" -s "$1"
		grep -q "^txc\.fma_outer_zmm\.$3[.:]" m.s || fail "$cpu $1: no txc.fma_outer_zmm.$3 kernel"
		regs=$(sed -n '/^txc\.fma_outer_zmm/,/^\.Lfunc_end/p' m.s | grep -o '%zmm[0-9]*' | sort -u | wc -l)
		[ "$regs" -ge 28 ] || fail "$cpu $1: the kernel uses $regs zmm registers, not 28 or more"
		fmas m.s >loops.txt
		grep -qx "$2 0" loops.txt ||
		    fail "$cpu $1: no k loop of $2 FMAs without stack accesses ($(tr '\n' ' ' <loops.txt))"
		fmas=$(sed -n '/^txc\.fma_outer_zmm/,/^\.Lfunc_end/p' m.s | grep -c 'vfmadd[0-9]*ps.*%zmm')
		[ "$fmas" -gt 0 ] || fail "$cpu $1: no zmm FMA"
		echo "ok: --cpu=$cpu $3: $regs zmm registers, k loops (FMAs, stack accesses): $(tr '\n' ' ' <loops.txt)"
	done
done
# AVX2's table for a CPU without AVX-512: ymm only, as before
asm znver3 -s t6x16
sed -n '/^txc\.fma_outer\.6x16/,/^\.Lfunc_end/p' m.s >k.s
grep -q '%ymm' k.s || fail "znver3 6x16: no ymm code"
! grep -q '%zmm' k.s || fail "znver3 6x16: zmm code"
fmas m.s | grep -qx "48 0" || fail "znver3 6x16: no k loop of 48 FMAs without stack accesses"
echo "ok: --cpu=znver3 6x16 in ymm"
# --features adding AVX-512 to an AVX2 CPU: +avx512vl comes with it (LLVM
# 19 failed selecting masked 256-bit operations without it, exit 2); the
# AVX2 table's masked edges compile, and the zmm table runs in zmm
for f in +avx512f +avx512bw; do
	"$TXC" --cpu=haswell --features=$f -s t6x16 -S -o m.s m.tx 2>err || { cat err; fail "--cpu=haswell --features=$f"; }
	"$TXC" --cpu=znver3 --features=$f -s t14x32 -S -o m.s m.tx 2>err || { cat err; fail "--cpu=znver3 --features=$f"; }
	fmas m.s | grep -qx "28 0" || fail "--cpu=znver3 --features=$f: 14x32 not in zmm without spills"
done
"$TXC" --cpu=haswell --features=+avx512f,-avx512vl -s t6x16 -S -o m.s m.tx 2>err
rc=$?
[ $rc -eq 1 ] || fail "+avx512f,-avx512vl on haswell: exit $rc, not 1 (a diagnostic)"
grep -q "error: --features=+avx512f,-avx512vl: AVX-512 without AVX512VL on CPU 'haswell'" err ||
    { cat err; fail "+avx512f,-avx512vl on haswell: the message"; }
"$TXC" --cpu=knl --features=+avx512f,-avx512vl -s t6x16 -S -o m.s m.tx 2>err || { cat err; fail "knl without VL"; }
echo "ok: --features=+avx512f on AVX2 CPUs; -avx512vl refused on haswell, taken on knl"
# make bench's AVX-512 sgemm (bench/kernels/sgemm_zmm.tx): its packed
# 14 x 32 kernel (a in 14-row panels, b in 32-wide ones: constant
# strides) runs its k loop in zmm without stack accesses
"$TXC" --cpu=sapphirerapids -S -o s.s "$src/bench/kernels/sgemm_zmm.tx" 2>err || { cat err; fail "sgemm_zmm.tx"; }
grep -q '^txc\.fma_outer_zmm\.14x32\.i1\.k14\.b32:' s.s || fail "sgemm_zmm: no packed 14x32 kernel"
sed -n '/^txc\.fma_outer_zmm\.14x32\.i1\.k14\.b32:/,/^\.Lfunc_end/p' s.s >p.s
fmas p.s | grep -qx "28 0" || fail "sgemm_zmm: the packed kernel's k loop spills"
echo "ok: sgemm_zmm.tx for sapphirerapids: packed 14x32 kernel in zmm"
# make bench's 3x3 convolution: its isa knob takes gemm_28x16_f32 there
# (28 accumulators, 1 vector of b, k unrolled by 4) without spills
"$TXC" --cpu=sapphirerapids -S -o c.s "$src/bench/kernels/conv3x3.tx" 2>err || { cat err; fail "conv3x3.tx"; }
sed -n '/^txc\.fma_outer_zmm\.28x16\..*:$/,/^\.Lfunc_end/p' c.s >q.s
[ -s q.s ] || fail "conv3x3 for sapphirerapids: no 28x16 zmm kernel"
fmas q.s | grep -qx "112 0" || fail "conv3x3: the 28x16 kernel's k loop spills"
echo "ok: conv3x3.tx for sapphirerapids: 28x16 kernel in zmm"
# its AVX-512 plan (bench/kernels/conv3x3_zmm.tx): conv_r_14x32_f32 (taps:
# the .taps kernel) on 14 consecutive pixels of the NCHW copy (a constant
# stride, 28 FMAs per k) and, for 7-pixel rows (specialize),
# conv_r_7x32_f32 (k unrolled by 4), the k loop clean inside the tap
# loop; so is the whole block one row short (13 x 32 unrolled by 4, 6 x
# 32), which runs a row's first and last tiles for the taps whose where
# drops their border pixel
"$TXC" --cpu=sapphirerapids -S -o z.s "$src/bench/kernels/conv3x3_zmm.tx" 2>err ||
    { cat err; fail "conv3x3_zmm.tx"; }
for t in "14x32 28 104" "7x32 56 48"; do
	set -- $t
	sed -n "/^txc\.fma_outer_zmm\.$1\.c32\.i1\.b32\.taps:\$/,/^\.Lfunc_end/p" z.s >q.s
	[ -s q.s ] || fail "conv3x3_zmm for sapphirerapids: no $1 zmm kernel with unit pixel stride"
	fmas q.s >loops.txt
	grep -qx "$2 0" loops.txt || fail "conv3x3_zmm: the $1 kernel's k loop spills"
	grep -qx "$3 0" loops.txt ||
	    fail "conv3x3_zmm: the $1 kernel has no clean k loop of $3 FMAs one row short ($(tr '\n' ' ' <loops.txt))"
done
echo "ok: conv3x3_zmm.tx for sapphirerapids: 14x32 and 7x32 kernels in zmm, and one row short"
# the AVX-512 1x1 plan (bench/kernels/conv1x1_zmm.tx): gemm_14x32_f32 into
# NCHW, c transposed (the .ct kernel): the k loop as the plain kernel's,
# and the block's transposition two-input shuffles, not element moves
"$TXC" --cpu=sapphirerapids -k conv -S -o z1.s "$src/bench/kernels/conv1x1_zmm.tx" 2>err ||
    { cat err; fail "conv1x1_zmm.tx"; }
sed -n '/^txc\.fma_outer_zmm\.14x32\.i1\.b32\.ct:$/,/^\.Lfunc_end/p' z1.s >q.s
[ -s q.s ] || fail "conv1x1_zmm for sapphirerapids: no 14x32 kernel storing c transposed"
fmas q.s | grep -qx "28 0" || fail "conv1x1_zmm: the transposing 14x32 kernel's k loop spills"
[ "$(grep -c 'vperm[it]2ps' q.s)" -ge 32 ] ||
    fail "conv1x1_zmm: the block is not transposed by two-input permutes"
echo "ok: conv1x1_zmm.tx for sapphirerapids: 14x32 kernel into a transposed c"
