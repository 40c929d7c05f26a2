#!/bin/sh
# vnni_asm.sh: the int8 and bf16 micro-kernels of stdlib/intrinsics/cpu.tx
# in the assembly for CPUs that have their instruction sets, checked
# without running it (this machine may lack them: tests/run/stdlib_int8.sh
# runs them where it can, emulated where not): compiled for
# sapphirerapids (and znver4, and alderlake for AVX-VNNI), each kernel's
# full block has a k loop issuing one instruction per accumulator (and
# VNNI's one per vector of b for its column sums) without any stack
# access: vpdpbusd zmm for gemm_8x32_i8_vnni (16; on its panel path, with
# AVX512_VBMI, a's row sums are summed before the loop: 16 + 2 for
# cascadelake, which lacks it) and gemm_16x16_i8_vnni (16), vpdpbusd ymm in
# its VEX form for gemm_4x16_i8_avxvnni (8 + 2), vdpbf16ps zmm for
# gemm_12x32_bf16 (24) and gemm_16x16_bf16 (16, a's pair a {1to16}
# memory operand, not a vbroadcastss a vdpbf16ps); the AVX2 tables'
# loops (vpmaddwd, vfmadd) for znver3, and conv2d_i8's (i8_madd_a16:
# its edge blocks' too, a's pairs broadcast from memory).  The kernels
# with taps (conv_8x32_i8_vnni, conv_8x32_bf16 on a 3x3 convolution
# laid out as conv2d.tx's): the same k loops inside the tap loops
# (16 vpdpbusd, 16 vdpbf16ps), and no innermost loop of theirs
# (the masked blocks' included) builds lane masks (vpcmp, kunpck).  The stdlib's gemm_i8 and matmul_bf16 pick those tables for
# those CPUs (with AMX, sapphirerapids, the AMX tables: calls of
# libtxrt's kernels, whose code must hold ldtilecfg, tileloadd, tdpbssd,
# tdpbf16ps, tilestored, tilezero and tilerelease).  Skips (77) where txc
# has no x86 target.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-${srcdir:-.}}
TXC_STDLIB=$srcdir/stdlib; export TXC_STDLIB
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: vnni_asm: $*"; exit 1; }
. "$srcdir/tests/unit/asm_loop.sh"
{
	cat <<'TX'
import "intrinsics/cpu.tx";
kernel gi8(M, N, K) {
  in  A: i8[M, K];
  in  B: i8[K, N];
  out C: i32[M, N];
  C[i, j] = sum(k < K) i32(A[i, k]) * i32(B[k, j]);
}
TX
	tile_schedule gi8 vnni 8 32 gemm_8x32_i8_vnni
	tile_schedule gi8 vnni16 16 16 gemm_16x16_i8_vnni
	tile_schedule gi8 avxvnni 4 16 gemm_4x16_i8_avxvnni
	tile_schedule gi8 madd 4 16 gemm_4x16_i8
	cat <<'TX'
kernel gbf(M, N, K) {
  in  A: bf16[M, K];
  in  B: bf16[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) f32(A[i, k]) * f32(B[k, j]);
}
TX
	tile_schedule gbf dp 12 32 gemm_12x32_bf16
	tile_schedule gbf dp16 16 16 gemm_16x16_bf16
	tile_schedule gbf widen 6 16 gemm_6x16_bf16
	for t in i8:i32:conv_8x32_i8_vnni bf16:f32:conv_8x32_bf16; do
		set -- $(echo "$t" | tr : ' ')
		cat <<TX
kernel c$1(N, C, H, W, K) {
  in  data:   $1[N, C, H, W];
  in  weight: $1[K, C, 3, 3];
  out y:      $2[N, K, H, W];
  padded: $1[N, H + 2, C, W + 2];
  padded[n, h, c, w] = (h >= 1 && h <= H && w >= 1 && w <= W) ? data[n, c, h - 1, w - 1] : $1(0);
  wt: $1[K, 3, 3, C];
  wt[k, r, s, c] = weight[k, c, r, s];
  y[n, k, p, q] = sum(rc < C, ry < 3, rx < 3)
      $2(padded[n, p + ry, rc, q + rx]) * $2(wt[k, ry, rx, rc]);
}
schedule c$1 as taps for cpu {
  y.tile(k, q, 8, 32) -> (ko, qo, ki, qi);
  y.reorder(n, ko, p, qo, ry, rx, rc, ki, qi);
  y.tensorize(ry, $3);
}
TX
	done
} >m.tx
check() { # CPU KERNEL SCHEDULE PATTERN COUNT WHAT
	asm "$1" -k "$2" -s "$3"
	loops m.s "$4" 'dot[.]' >loops.txt
	grep -qx "$5 0" loops.txt ||
	    fail "--cpu=$1 $6: no k loop of $5 '$4' without stack accesses ($(tr '\n' ' ' <loops.txt))"
	echo "ok: --cpu=$1 $6: k loops ('$4', stack accesses): $(tr '\n' ' ' <loops.txt)"
}
for cpu in sapphirerapids znver4; do
	check $cpu gi8 vnni 'vpdpbusd[ \t]+%zmm' 16 gemm_8x32_i8_vnni
	grep -q 'vperm[it]2b' m.s || fail "--cpu=$cpu gemm_8x32_i8_vnni: no vpermi2b/vpermt2b"
	check $cpu gi8 vnni16 'vpdpbusd[ \t].*%zmm' 16 gemm_16x16_i8_vnni
	grep -q 'vpermb' m.s || fail "--cpu=$cpu gemm_16x16_i8_vnni: no vpermb"
	check $cpu gbf dp 'vdpbf16ps[ \t]+%zmm' 24 gemm_12x32_bf16
	check $cpu gbf dp16 'vdpbf16ps[ \t].*[{]1to16[}]' 16 gemm_16x16_bf16
done
for cpu in sapphirerapids znver4; do
	check $cpu ci8 taps 'vpdpbusd[ \t]+%zmm' 16 conv_8x32_i8_vnni
	grep -q '^txc[.]dot[.].*[.]taps:' m.s || fail "--cpu=$cpu conv_8x32_i8_vnni: no .taps kernel"
	loops m.s 'vpcmp|kunpck' 'dot[.].*taps' | grep -v '^0 ' >masks.txt &&
	    fail "--cpu=$cpu conv_8x32_i8_vnni: lane masks built in a loop ($(tr '\n' ' ' <masks.txt))"
	check $cpu cbf16 taps 'vdpbf16ps[ \t]+%zmm' 16 conv_8x32_bf16
	loops m.s 'vpcmp|kunpck' 'dot[.].*taps' | grep -v '^0 ' >masks.txt &&
	    fail "--cpu=$cpu conv_8x32_bf16: lane masks built in a loop ($(tr '\n' ' ' <masks.txt))"
done
check cascadelake gi8 vnni 'vpdpbusd[ \t]+%zmm' 18 gemm_8x32_i8_vnni
check cascadelake ci8 taps 'vpdpbusd[ \t]+%zmm' 18 conv_8x32_i8_vnni
for cpu in alderlake sapphirerapids; do
	check $cpu gi8 avxvnni '\{vex\}[ \t]+vpdpbusd[ \t]+%ymm' 10 gemm_4x16_i8_avxvnni
done
check znver3 gi8 madd 'vpmaddwd[ \t]+%ymm' 8 gemm_4x16_i8
check znver3 gbf widen 'vfmadd[0-9]+ps[ \t]+%ymm' 12 gemm_6x16_bf16
# conv2d_i8's AVX2 table on a CPU without AVX512BW (znver3): the
# i8_madd_a16 kernel's k loops, the full block's and the edge blocks'
# (their rows of b loaded whole: intrin_edge.c), each 8 vpmaddwd and 4
# vpbroadcastd of a's widened pairs straight from memory, no stack access
"$TXC" --cpu=znver3 -k conv2d_i8 -S -o m.s "$srcdir/stdlib/conv2d.tx" 2>err ||
    { cat err; fail "stdlib conv2d_i8 for znver3"; }
loops m.s 'vpmaddwd[ \t]+%ymm' 'dot[.]i8_madd_a16' >loops.txt
[ "$(grep -cx '8 0' loops.txt)" -ge 2 ] ||
    fail "--cpu=znver3 conv2d_i8: not two k loops of 8 vpmaddwd ($(tr '\n' ' ' <loops.txt))"
loops m.s 'vpbroadcastd[ \t]+-?[0-9]*[(]' 'dot[.]i8_madd_a16' >loops.txt
[ "$(grep -cx '4 0' loops.txt)" -ge 2 ] ||
    fail "--cpu=znver3 conv2d_i8: a's pairs not broadcast from memory ($(tr '\n' ' ' <loops.txt))"
echo "ok: --cpu=znver3 conv2d_i8: i8_madd_a16's k loops, full and edge blocks"
# the stdlib's schedules take them where the CPU has them
pick() { # CPU KERNEL EMITTER [FLAGS]
	"$TXC" --cpu="$1" ${4:+"$4"} -k "$2" --print-loops "$srcdir/stdlib/matmul.tx" 2>err | grep -q "$3(" ||
	    { cat err; fail "--cpu=$1: $2 does not call $3"; }
}
pick sapphirerapids gemm_i8 i8_amx
pick znver4 gemm_i8 i8_vnni_zmm
pick cascadelake gemm_i8 i8_vnni_zmm
pick alderlake gemm_i8 i8_vnni
pick znver3 gemm_i8 i8_madd
pick sapphirerapids matmul_bf16 bf16_amx
pick znver4 matmul_bf16 bf16_dp_zmm
pick znver3 matmul_bf16 bf16_widen
# AMX's tables held to AVX-512 (--features=-amx-tile) take the zmm ones
pick sapphirerapids gemm_i8 i8_vnni_zmm --features=-amx-tile
pick sapphirerapids matmul_bf16 bf16_dp_zmm --features=-amx-tile
"$TXC" --cpu=sapphirerapids -K isa=avx512vnni -k gemm_i8 -S -o s.s "$srcdir/stdlib/matmul.tx" ||
    fail "stdlib gemm_i8 for sapphirerapids, isa=avx512vnni"
grep -q 'vpdpbusd.*%zmm' s.s || fail "stdlib gemm_i8 for sapphirerapids: no vpdpbusd"
"$TXC" --cpu=sapphirerapids -K isa=avx512bf16 -k matmul_bf16 -S -o s.s "$srcdir/stdlib/matmul.tx" ||
    fail "stdlib matmul_bf16 for sapphirerapids, isa=avx512bf16"
grep -q 'vdpbf16ps.*%zmm' s.s || fail "stdlib matmul_bf16 for sapphirerapids: no vdpbf16ps"
echo "ok: the stdlib's gemm_i8 and matmul_bf16 pick them"
# AMX: the object calls libtxrt's kernels (rt/amx.c), whose code has the
# tile instructions
for k in gemm_i8:i8 matmul_bf16:bf16; do
	"$TXC" --cpu=sapphirerapids -k "${k%%:*}" -S -o s.s "$srcdir/stdlib/matmul.tx" ||
	    fail "stdlib ${k%%:*} for sapphirerapids"
	grep -Eq "call.*txrt_amx_${k#*:}(@PLT)?\$" s.s ||
	    fail "stdlib ${k%%:*} for sapphirerapids: no call of txrt_amx_${k#*:}"
done
lib=${abs_top_builddir:-.}/rt/.libs/libtxrt.a
if [ -f "$lib" ] && command -v objdump >/dev/null 2>&1; then
	objdump -d "$lib" >rt.s 2>/dev/null || fail "objdump $lib"
	for insn in ldtilecfg tileloadd tdpbssd tdpbf16ps tilestored tilezero tilerelease; do
		grep -Eq "[[:space:]]$insn([[:space:]]|$)" rt.s || fail "libtxrt has no $insn (rt/amx.c)"
	done
	echo "ok: libtxrt's AMX kernels have the tile instructions"
fi
