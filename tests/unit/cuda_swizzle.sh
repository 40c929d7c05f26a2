#!/bin/sh
# cuda_swizzle.sh: the tensor-core GEMMs the project ships (bench/kernels
# hgemm_cuda, bgemm_cuda; stdlib matmul_f16, matmul_bf16; the 128 x 128
# tiles of 8 warps, hgemm128_cuda and bgemm128_cuda) keep their tiles of A
# and B swizzled (swizzle(): no padding, 24576 bytes of shared memory a
# 64 x 64 block rather than 29184; 49152 a 128 x 128 one with pipeline(3),
# within the 48 KiB a block gets without opting in), and their PTX, built
# for sm_80, sm_90 and sm_90a, assembles with ptxas for that architecture
# with no spills and no scalar shared loads, loads each fragment with one
# ldmatrix a k step, fills the tiles with cp.async and maps addresses with
# xor.  Without ptxas only the first part runs, and the test skips (77).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
ptxas=$(command -v ptxas 2>/dev/null || true)
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
top=$abs_top_srcdir
# FILE KERNEL SHARED-BYTES TILE-ELEMENTS A-ROW B-ROW LDMATRIX
set -- "$top/bench/kernels/hgemm_cuda.tx" hgemm_cuda 24576 6144 32 64 8 \
    "$top/bench/kernels/bgemm_cuda.tx" bgemm_cuda 24576 6144 32 64 8 \
    "$top/stdlib/matmul.tx" matmul_f16 24576 6144 32 64 8 \
    "$top/stdlib/matmul.tx" matmul_bf16 24576 6144 32 64 8 \
    "$top/bench/kernels/hgemm128_cuda.tx" hgemm128_cuda 49152 12288 32 128 12 \
    "$top/bench/kernels/bgemm128_cuda.tx" bgemm128_cuda 49152 12288 32 128 12
while [ $# -gt 0 ]; do
	f=$1 k=$2 bytes=$3 elems=$4 arow=$5 brow=$6 nldm=$7
	shift 7
	"$TXC" -k "$k" --target=cuda --emit=kernels -o "$tmp/$k.txt" "$f" || { fail "$k: txc --emit=kernels"; continue; }
	grep -q "shared bytes $bytes$" "$tmp/$k.txt" || fail "$k: not $bytes bytes of shared memory: $(grep -o 'shared bytes.*' "$tmp/$k.txt")"
	grep -q "allocate As\[[a-z0-9]* \* $elems\] in shared swizzled($arow)" "$tmp/$k.txt" || fail "$k: As is not $elems elements in swizzled rows of $arow"
	grep -q "allocate Bs\[[a-z0-9]* \* $elems\] in shared swizzled($brow)" "$tmp/$k.txt" || fail "$k: Bs is not $elems elements in swizzled rows of $brow"
	[ -n "$ptxas" ] || continue
	for a in sm_80 sm_90 sm_90a; do
		"$TXC" -k "$k" --target=cuda --cuda-arch=$a --emit=ptx -o "$tmp/$k.$a.ptx" "$f" || { fail "$k $a: txc --emit=ptx"; continue; }
		if ! "$ptxas" -v -arch=$a -o "$tmp/$k.$a.cubin" "$tmp/$k.$a.ptx" >"$tmp/v" 2>&1; then
			fail "$k $a: ptxas rejects the PTX"
			head -5 "$tmp/v"
			continue
		fi
		grep -q " 0 bytes spill stores, 0 bytes spill loads" "$tmp/v" || fail "$k $a: spills: $(grep spill "$tmp/v")"
		# in each kernel: the 64-bit one and its 32-bit twin (gpu_index32.c)
		n=$(grep -c "ldmatrix.sync.aligned.m8n8.x4" "$tmp/$k.$a.ptx")
		nk=$(grep -c "^\.visible \.entry" "$tmp/$k.$a.ptx")
		[ "$n" -eq $((nk * nldm)) ] || fail "$k $a: $n ldmatrix in $nk kernels, $nldm a kernel expected (each fragment loaded once a k step)"
		grep -q "cp.async.cg.shared.global" "$tmp/$k.$a.ptx" || fail "$k $a: no cp.async"
		grep -q "xor.b" "$tmp/$k.$a.ptx" || fail "$k $a: no xor (swizzle) in the addresses"
		! grep -q "ld.shared.f32\|ld.shared.b16\|ld.shared.u16" "$tmp/$k.$a.ptx" || fail "$k $a: scalar loads from shared memory"
		echo "$k $a: $(grep -o 'Used [0-9]* registers' "$tmp/v"), $n ldmatrix"
	done
done
[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the layouts were checked)"; exit 77; }
echo "PASS: cuda_swizzle"
