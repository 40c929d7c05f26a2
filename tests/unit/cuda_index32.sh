#!/bin/sh
# cuda_index32.sh: a cuda kernel whose index arithmetic fits 32 bits for
# the sizes of a call runs as its 32-bit twin (gpu_index32.c): the PTX of
# the tensor-core GEMM (bench/kernels/hgemm_cuda.tx) and of stdlib's f32
# matmul holds NAME_k0 and NAME_k0_i32, the twin's integer arithmetic
# mostly 32-bit (the 64-bit kernel's mostly 64-bit), both assembling with
# ptxas for sm_80 and sm_90 without spills; in the emulator (which
# computes the twin's indices in i32 too, wrapping) hgemm at odd sizes
# matches the unscheduled kernel and launches the twin (with -D sizes,
# the one 32-bit kernel, checked in the PTX above); a kernel whose
# size S >= 2^31 only offsets a value (i + S, cheap to allocate) launches
# the 64-bit kernel and is right, where the twin would compute i + S
# wrapped.  Which kernel runs is seen by wrapping txrt_cuda_launch at the
# link (ld --wrap).  Without ptxas its part is left out and the test
# skips (77) after the rest.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
. "$abs_top_srcdir/tests/unit/cuda_env.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The integer arithmetic of one .entry: "L W S", its 64-bit operations
# (not .wide), the widening ones (mul.wide, mad.wide) and the 32-bit ones.
ops() { # PTX ENTRY
	awk -v e="$2" '$0 ~ "^[.]visible [.]entry " e "[(]" { p = 1; next } /^[.]visible [.]entry/ { p = 0 } p' "$1" |
	awk '/^[ \t]*(mul|mad|add|sub|shl|shr|and|or|xor|min|max|neg|div|rem|selp|setp)[.]/ {
		if ($1 ~ /wide/) w++; else if ($1 ~ /[.](s64|u64|b64)$/) l++; else if ($1 ~ /[.](s32|u32|b32)$/) s++ }
		END { printf "%d %d %d\n", l, w, s }'
}

# ---- the PTX --------------------------------------------------------------
set -- "$top/bench/kernels/hgemm_cuda.tx" hgemm_cuda "$top/stdlib/matmul.tx" matmul
while [ $# -gt 0 ]; do
	f=$1 k=$2
	shift 2
	"$TXC" -k "$k" --target=cuda --emit=ptx -o "$k.ptx" "$f" || { fail "$k: txc --emit=ptx"; continue; }
	grep -q "^\.visible \.entry ${k}_k0(" "$k.ptx" || fail "$k: no 64-bit kernel ${k}_k0"
	grep -q "^\.visible \.entry ${k}_k0_i32(" "$k.ptx" || { fail "$k: no 32-bit twin ${k}_k0_i32"; continue; }
	set -- $(ops "$k.ptx" "${k}_k0") "$@"
	l64=$1 w64=$2 s64=$3
	shift 3
	set -- $(ops "$k.ptx" "${k}_k0_i32") "$@"
	l32=$1 w32=$2 s32=$3
	shift 3
	echo "$k: ${k}_k0: $l64 64-bit, $w64 wide, $s64 32-bit integer operations; ${k}_k0_i32: $l32, $w32, $s32"
	# the twin: most operations 32-bit; the 64-bit ones (address
	# additions) under a third of the 64-bit kernel's
	[ "$s32" -gt $((l32 + w32)) ] || fail "$k: the twin is not mostly 32-bit ($l32 64-bit, $w32 wide, $s32 32-bit)"
	[ $((3 * l32)) -lt "$l64" ] || fail "$k: the twin keeps $l32 64-bit operations of the kernel's $l64"
	[ "$l64" -gt "$s64" ] || fail "$k: the 64-bit kernel is not 64-bit ($l64 64-bit, $s64 32-bit)"
	"$TXC" -k "$k" --target=cuda --emit=kernels -o "$k.txt" "$f" || fail "$k: txc --emit=kernels"
	grep -q "^// kernel ${k}_k0_i32 (32-bit indices) instead where .*M <= 2147483647" "$k.txt" ||
	    fail "$k: --emit=kernels does not show the twin's condition"
	[ -n "$ptxas" ] || continue
	for a in sm_80 sm_90; do
		"$TXC" -k "$k" --target=cuda --cuda-arch=$a --emit=ptx -o "$k.$a.ptx" "$f" || { fail "$k $a: txc --emit=ptx"; continue; }
		if ! "$ptxas" -v -arch=$a -o "$k.$a.cubin" "$k.$a.ptx" >v 2>&1; then
			fail "$k $a: ptxas rejects the PTX"
			head -5 v
			continue
		fi
		[ "$(grep -c ' 0 bytes spill stores, 0 bytes spill loads' v)" -eq 2 ] || fail "$k $a: spills: $(grep spill v)"
		echo "$k $a:" $(grep -o "Compiling entry function '[a-z0-9_]*'\|Used [0-9]* registers" v | sed "s/Compiling entry function //")
	done
done

# With every size fixed small by -D the condition folds: one kernel, 32-bit.
"$TXC" -k hgemm_cuda --target=cuda --emit=ptx -D M=256 -D N=256 -D K=256 -o fixed.ptx "$top/bench/kernels/hgemm_cuda.tx" ||
    fail "-D: txc --emit=ptx"
[ "$(grep -c '^\.visible \.entry' fixed.ptx)" -eq 1 ] || fail "-D M=N=K=256: not one kernel"
set -- $(ops fixed.ptx hgemm_cuda_k0)
[ "$3" -gt $(($1 + $2)) ] || fail "-D M=N=K=256: the kernel is not 32-bit ($1 64-bit, $2 wide, $3 32-bit)"

# ---- the emulator ------------------------------------------------------------
cat >wrap.c <<'C'
#include <stdio.h>
#include "txrt.h"
int __real_txrt_cuda_launch(txrt_cuda_module *m, int k, int64_t gx, int64_t gy, int64_t gz,
    int64_t bx, int64_t by, int64_t bz, int64_t shared, void **params);
int
__wrap_txrt_cuda_launch(txrt_cuda_module *m, int k, int64_t gx, int64_t gy, int64_t gz,
    int64_t bx, int64_t by, int64_t bz, int64_t shared, void **params)
{
	fprintf(stderr, "launch %s\n", m->kernels[k].name);
	return __real_txrt_cuda_launch(m, k, gx, gy, gz, bx, by, bz, shared, params);
}
C
${CC:-cc} -O1 -I"$top/rt" -c -o wrap.o wrap.c || exit 99
cat >shift.tx <<'TX'
kernel shift(N, S) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * f32((i + S) % 7);
}
schedule shift for cuda {
  y.split(i, 64) -> (bo, ti);
  y.bind(bo, blockIdx.x);
  y.bind(ti, threadIdx.x);
}
TX
# build NAME FILE [TXC-FLAGS...]: the harness NAME.ref (unscheduled,
# CPU) and NAME.gpu, each kernel NAME's, made with the flags
build() {
	k=$1 f=$2
	shift 2
	"$TXC" -k "$k" "$@" --emit=harness -o "$k.h.c" "$f" && ${CC:-cc} -O1 -DTXC_LLVM -c -o "$k.h.o" "$k.h.c" &&
	${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o "$k.hd.o" "$k.h.c" || return 1
	"$TXC" -k "$k" "$@" --no-schedule "$f" -o "$k.ref.o" &&
	${CC:-cc} -o "$k.ref" "$k.h.o" "$k.ref.o" "$lib" -lpthread -ldl -lm || return 1
	"$TXC" -k "$k" "$@" --target=cuda "$f" -o "$k.gpu.o" &&
	${CC:-cc} -Wl,--wrap=txrt_cuda_launch -o "$k.gpu" "$k.hd.o" wrap.o "$k.gpu.o" "$lib" -lpthread -ldl -lm
}
# run NAME WANT SIZES...: the GPU build in the emulator launches WANT and
# gives the unscheduled kernel's result
run() {
	name=$1 want=$2
	shift 2
	./"$name.ref" "$@" out=ref.bin >/dev/null 2>&1 || { fail "$name $*: the unscheduled kernel"; return; }
	rm -f out.bin
	TXRT_CUDA=emulate ./"$name.gpu" "$@" out=out.bin >out 2>&1 || { fail "$name $*: exit $?: $(grep -v '^launch' out | head -3)"; return; }
	got=$(sed -n 's/^launch //p' out | sort -u | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "$name $*: launched $got, $want expected"
	if [ -x "$txcmp" ]; then
		"$txcmp" ref.bin out.bin >cmp 2>&1 || { fail "$name $*: differs from the unscheduled kernel"; head -5 cmp; }
	else
		cmp -s ref.bin out.bin || fail "$name $*: differs from the unscheduled kernel"
	fi
}
if build hgemm_cuda "$top/bench/kernels/hgemm_cuda.tx"; then
	run hgemm_cuda hgemm_cuda_k0_i32 M=37 N=45 K=71
	run hgemm_cuda hgemm_cuda_k0_i32 M=70 N=66 K=101
else
	fail "hgemm_cuda: build"
fi
# -D M=N=K=256: the only kernel, hgemm_cuda_k0, is the 32-bit one
if build hgemm_cuda "$top/bench/kernels/hgemm_cuda.tx" -D M=256 -D N=256 -D K=256; then
	run hgemm_cuda hgemm_cuda_k0 M=256 N=256 K=256
else
	fail "hgemm_cuda -D: build"
fi
if build shift shift.tx; then
	# i < 1024 (16 blocks of 64: the bound does not use the guard i < N)
	run shift shift_k0_i32 N=1000 S=5
	run shift shift_k0_i32 N=1000 S=2147482624
	# i + S past 2^31 - 1 for some i < 1024, or S itself: the 64-bit kernel
	run shift shift_k0 N=1000 S=2147482625
	run shift shift_k0 N=1000 S=2147483648
	# where the twin would be wrong: (i + 2^32 + 3) % 7 is not (i + 3) % 7
	run shift shift_k0 N=1000 S=4294967299
else
	fail "shift: build"
fi
[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the PTX's operations and the emulator were checked)"; exit 77; }
echo "PASS: cuda_index32"
