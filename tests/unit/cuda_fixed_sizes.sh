#!/bin/sh
# cuda_fixed_sizes.sh: the shipped pipelined tensor-core GEMMs with every
# size fixed by -D (txc bench --target=cuda: compiled through the JIT,
# run in libtxrt's emulator against the unscheduled kernel), at sizes
# where constant folding changes the pipeline: K = 48 (two steps of k
# for three slots: the loop keeps its waits but no prefetch, which must
# still end in a barrier), K = 16 (one step: no pipeline left, tma()
# falls back to the plain copy) and K = 72 (a tail of k: a TMA box of the
# slot's row, zero-filled past K); the sm_90a (wgmma) kernels at those
# sizes and others below.  Each must compute what the
# unscheduled kernel does, with no report from the emulator's checks.
set -u
: "${TXC:?TXC must name the txc binary}"
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_STDLIB=$top/stdlib; export TXC_STDLIB
fails=0
# check FILE ARCH SIZES...
check() {
	f=$1 arch=$2
	shift 2
	out=$("$TXC" bench "$top/bench/kernels/$f" --target=cuda --cuda-arch="$arch" --runs=1 \
	    --warmup=0 "$@" 2>&1)
	rc=$?
	line=$(echo "$out" | grep -E '^  default ')
	if [ $rc -ne 0 ] || ! echo "$line" | grep -Eq 'emulated +- +0 '; then
		echo "FAIL: $f $arch $*: exit $rc"
		echo "$out" | head -5
		fails=$((fails + 1))
		return
	fi
	echo "ok: $f $arch $*"
}
for k in "-D K=48" "-D K=16" "-D K=72"; do
	# shellcheck disable=SC2086
	check hgemm128_cuda.tx sm_80 -D M=64 -D N=64 $k
	# shellcheck disable=SC2086
	check hgemm128_tma_cuda.tx sm_90 -D M=64 -D N=64 $k
	# shellcheck disable=SC2086
	check hgemm_sm90a_cuda.tx sm_90a -D M=64 -D N=64 $k
done
# wgmma reads whole blocks of 16 k from whole slots, whatever the extents:
# a tail of k folded to a constant (K = 80: the last fill is 16 of a 32
# slot, copied whole with zeros past K; K = 16: the second call of a
# step has no k and is left out) and N or M below the block's 128 (the
# store writes the fragment's columns, not the extent's)
check hgemm_sm90a_cuda.tx sm_90a -D M=200 -D N=136 -D K=72
check hgemm_sm90a_cuda.tx sm_90a -D M=128 -D N=64 -D K=80
check bgemm_sm90a_cuda.tx sm_90a -D M=67 -D N=29 -D K=45
check hgemm_sm90a_tma_cuda.tx sm_90a -D M=70 -D N=40 -D K=16
# a k below the split (64 for the sm_90a plans, 32 for sm_80's) folds the
# tile's rows to 48 or 80 bytes, widths swizzle() does not permute: they
# are padded to 64 and 128 (lower/flatten.c), the pad zero-filled by the
# copies of wgmma's tiles, and b's k rows to a multiple of 16
for k in 24 40; do
	check hgemm128_cuda.tx sm_80 -D M=70 -D N=72 -D K=$k
	check hgemm_sm90a_cuda.tx sm_90a -D M=70 -D N=72 -D K=$k
	check hgemm_sm90a_tma_cuda.tx sm_90a -D M=70 -D N=72 -D K=$k
done
[ $fails -eq 0 ]
