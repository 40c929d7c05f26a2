#!/bin/sh
# conv_bf16.sh: the stdlib's bf16 convolution (conv2d.tx conv2d_bf16)
# through each table its isa knob takes (avx512bf16: vdpbf16ps on pairs
# of input channels; avx2: each bf16 widened, FMAs; generic: plain vector
# code) against the unscheduled kernel, through diffcheck.sh (C and LLVM
# paths, the harness's random inputs in [-1, 1]), at odd sizes: a 3 x 3
# filter with padding 1 at 17 x 17 (C 13: an odd number of input
# channels leaves a pair with one missing; K 35: a partial block of output
# channels), 5 x 5 with padding 2, 1 x 1 filters on rows of 16 or fewer
# columns and of more (the specializations that read the weights and the
# input as they are), and random sizes.  The products of two bf16 are
# exact in f32; the tables and the reference differ only in the order of
# the f32 sums, which txcmp's f32 tolerance (1e-4 relative, absolute
# below 1: far above the rounding of sums of a few hundred products of
# magnitude at most 1, far below one missing product) allows.  The
# avx512bf16 table runs where /proc/cpuinfo has avx512_bf16, elsewhere
# emulated (TXC_DOT_EMULATE=1: the same packing and tails, vdpbf16ps as
# plain vector code).  Skips (77) off x86-64 and where the CPU lacks AVX2.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_STDLIB=$srcdir/stdlib; export TXC_STDLIB
case $(uname -m) in x86_64) ;; *) echo "SKIP: not x86-64"; exit 77 ;; esac
grep -qw avx2 /proc/cpuinfo 2>/dev/null || { echo "SKIP: the CPU has no AVX2"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
caps='N=1:2 C=1:20 H=1:9 W=1:40 K=1:20 R=1:3 S=1:3 PH=0:2 PW=0:2'
fails=0
# try ISA [NOTE [FLAGS]]: diffcheck.sh with -K isa=ISA and the txc FLAGS
try() {
	isa=$1
	printf '#!/bin/sh\nexec "%s" -K isa=%s %s "$@"\n' "$TXC" "$isa" "$3" >"$tmp/txc"
	chmod +x "$tmp/txc"
	table=$("$tmp/txc" -k conv2d_bf16 --print-loops "$srcdir/stdlib/conv2d.tx" 2>&1 |
	    grep -o -E '(gemm_[0-9x]+_bf16|bf16_[a-z_]+)\(' | sort -u | tr -d '(' | tr '\n' ' ')
	if [ "$isa" != generic ] && [ -z "$table" ]; then
		echo "FAIL: isa=$isa: no micro-kernel call"
		fails=$((fails + 1))
		return
	fi
	printf 'isa=%s%s (%s): ' "$isa" "${2:+, $2}" "${table:-plain vectors}"
	TXC=$tmp/txc $SHELL "$srcdir/tests/run/diffcheck.sh" -k conv2d_bf16 -r 2 -c "$caps" \
	    -e 'N=1 C=13 H=17 W=17 K=35 R=3 S=3 PH=1 PW=1' \
	    -e 'N=1 C=7 H=11 W=40 K=9 R=5 S=5 PH=2 PW=2' \
	    -e 'N=2 C=19 H=7 W=9 K=21 R=1 S=1 PH=0 PW=0' \
	    -e 'N=1 C=17 H=3 W=37 K=11 R=1 S=1 PH=0 PW=0' \
	    -e 'N=1 C=4 H=5 W=6 K=3 R=3 S=2 PH=2 PW=0' \
	    "$srcdir/stdlib/conv2d.tx" || fails=$((fails + 1))
}
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then
	try avx512bf16
else
	TXC_DOT_EMULATE=1 try avx512bf16 emulated
fi
try avx2
# without AVX512BW's masked word loads (the edge blocks' rows of b by
# 32-bit words, or whole where they end inside b: intrin_dot.c)
try avx2 "no AVX512BW" --features=-avx512f
try generic
[ $fails -eq 0 ]
