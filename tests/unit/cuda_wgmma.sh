#!/bin/sh
# cuda_wgmma.sh: Hopper's warpgroup tensor cores (gpu_wgmma.c,
# cuda_wgmma.c).  The sm_90a GEMMs (bench/kernels/hgemm_sm90a_cuda.tx,
# bgemm_sm90a_cuda.tx, and hgemm_sm90a_tma_cuda.tx, whose A tiles come by
# TMA: cp.async.bulk.tensor on mbarriers, at K = 72; at K = 45 its rows
# are no multiple of 16 bytes and cp.async copies them), compiled with
# --cuda-arch=sm_90a, hold
# wgmma.mma_async, wgmma.fence, commit_group, wait_group and
# fence.proxy.async in PTX 8.0 for sm_90a, and ptxas assembles them with
# no spills; in libtxrt's emulator (wgmma through its descriptors) they
# match the unscheduled kernel at sizes that are no multiples of the tile,
# f16 and bf16 (m64n128k16, B's tile in two panels of 128-byte rows), and
# so does a plan of m64n64k16 calls on one-row B tiles of 128 bytes and A
# tiles of 32 bytes (wg64, below: the 32-byte swizzle), and the plan the
# schedule generator writes for a bf16 matmul with no schedule (wgauto:
# G5 for sm_90a, auto/cuda.c); with the wait left
# out (TXC_CUDA_WGMMA_WAIT=none) the
# emulator reports the calls in flight (pipeline(S, defer = D), which
# waits for all but D groups: cuda_wgmma_defer.sh); for sm_80 and sm_90 txc refuses
# them at the tensorize.  Without ptxas its part is left out and the test
# skips (77) after the rest.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
. "$abs_top_srcdir/tests/unit/cuda_env.sh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat >wg64.tx <<'TX'
import "intrinsics/cuda.tx";
kernel wg64(M, N, K) {
  in  A: f16[M, K];
  in  B: f16[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) f32(A[i, k]) * f32(B[k, j]);
}
schedule wg64 for cuda {
  C.cache_write(fragment) -> Cf;
  C.tile(i, j, 128, 64, tail = round_up) -> (bi, bj, ii, jj);
  C.split(ii, 64) -> (wg, si);
  C.reorder(bi, bj, wg, si, jj);
  C.bind(bi, blockIdx.y);
  C.bind(bj, blockIdx.x);
  C.bind(wg, threadIdx.z);
  C.tensorize(si, wgmma_store_64x64_f32);
  Cf.compute_at(C, wg);
  Cf.split(k, 16) -> (ko, ki);
  Cf.reorder(ko, i, j, ki);
  Cf.tensorize(i, wgmma_fill_64x64_f32);
  Cf.tensorize(i, wgmma_64x64x16_f16);
  A.cache_read(shared, [Cf]) -> As;
  B.cache_read(shared, [Cf]) -> Bs;
  As.compute_at(Cf, ko);
  Bs.compute_at(Cf, ko);
  As.pipeline(3);
  Bs.pipeline(3);
  As.swizzle();
  Bs.swizzle();
}
TX
# no schedule: the generator's G5 for sm_90a (auto/cuda.c) writes the plan
cat >wgauto.tx <<'TX'
kernel wgauto(M, N, K) {
  in  A: bf16[M, K];
  in  B: bf16[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) f32(A[i, k]) * f32(B[k, j]);
}
TX
"$TXC" --print-auto-schedule --target=cuda --cuda-arch=sm_90a wgauto.tx >auto.txt 2>&1 &&
    grep -q 'tensorize(.*wgmma_64x128x16_bf16)' auto.txt ||
    fail "wgauto: the generated schedule for sm_90a is not the wgmma plan: $(head -3 auto.txt)"
kfile() { # KERNEL: its file
	case $1 in wg64 | wgauto) echo "$tmp/$1.tx" ;; *) echo "$top/bench/kernels/$1.tx" ;; esac
}
set -- hgemm_sm90a_cuda bgemm_sm90a_cuda hgemm_sm90a_tma_cuda wg64 wgauto

# ---- the PTX ----------------------------------------------------------------
for k in "$@"; do
	f=$(kfile "$k")
	"$TXC" -I "$top/stdlib" --target=cuda --cuda-arch=sm_90a --emit=ptx -o "$k.ptx" "$f" || { fail "$k: txc --emit=ptx"; continue; }
	grep -q "^\.version 8\.[0-9]" "$k.ptx" || fail "$k: not PTX 8.x: $(grep '^\.version' "$k.ptx")"
	grep -q "^\.target sm_90a" "$k.ptx" || fail "$k: not for sm_90a"
	ty=f16 n=128
	case $k in bgemm_sm90a_cuda | wgauto) ty=bf16 ;; esac
	[ "$k" = wg64 ] && n=64
	for w in "wgmma.mma_async.sync.aligned.m64n${n}k16.f32.$ty.$ty" wgmma.fence.sync.aligned \
	    wgmma.commit_group.sync.aligned "wgmma.wait_group.sync.aligned 0" \
	    fence.proxy.async.shared::cta cp.async.cg.shared.global "\.shared \.align 1024"; do
		grep -q "$w" "$k.ptx" || fail "$k: no $w in the PTX"
	done
	if [ "$k" = hgemm_sm90a_tma_cuda ]; then   # A's tiles by TMA, on mbarriers
		for w in "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
		    mbarrier.try_wait.parity mbarrier.arrive.expect_tx; do
			grep -q "$w" "$k.ptx" || fail "$k: no $w in the PTX"
		done
	fi
	! grep -q "ld.shared.f32\|st.shared.f32" "$k.ptx" || fail "$k: f32 accumulators in shared memory"
	[ -n "$ptxas" ] || continue
	if ! "$ptxas" -v -arch=sm_90a -o "$k.cubin" "$k.ptx" >v 2>&1; then
		fail "$k: ptxas rejects the PTX"
		head -5 v
		continue
	fi
	nk=$(grep -c "^\.visible \.entry" "$k.ptx")
	[ "$(grep -c ' 0 bytes spill stores, 0 bytes spill loads' v)" -eq "$nk" ] || fail "$k: spills: $(grep spill v)"
	! grep -q "C7510\|serializ" v || fail "$k: ptxas serializes the wgmma: $(grep -i serializ v | head -2)"
	echo "$k sm_90a:" $(grep -o "Used [0-9]* registers" v)
done

# ---- sm_80 and sm_90 refuse it, at the tensorize ------------------------------
for a in sm_80 sm_90; do
	if "$TXC" --target=cuda --cuda-arch=$a --emit=ptx -o x.ptx "$top/bench/kernels/hgemm_sm90a_cuda.tx" 2>err; then
		fail "$a: wgmma compiled"
	fi
	grep -q "hgemm_sm90a_cuda.tx:[0-9]*:[0-9]*: error: kernel 'hgemm_sm90a_cuda_k0' uses wgmma .*compiled for $a" err ||
	    fail "$a: no diagnostic at the tensorize: $(head -2 err)"
done

# ---- the emulator -------------------------------------------------------------
# build NAME: the harness NAME.ref (unscheduled, CPU) and NAME.gpu
build() {
	k=$1 f=$(kfile "$1")
	set -- -I "$top/stdlib"
	"$TXC" "$@" -k "$k" --emit=harness -o "$k.h.c" "$f" && ${CC:-cc} -O1 -DTXC_LLVM -c -o "$k.h.o" "$k.h.c" &&
	${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o "$k.hd.o" "$k.h.c" || return 1
	"$TXC" "$@" -k "$k" --no-schedule "$f" -o "$k.ref.o" &&
	${CC:-cc} -o "$k.ref" "$k.h.o" "$k.ref.o" "$lib" -lpthread -ldl -lm || return 1
	"$TXC" "$@" -k "$k" --target=cuda --cuda-arch=sm_90a "$f" -o "$k.gpu.o" &&
	${CC:-cc} -o "$k.gpu" "$k.hd.o" "$k.gpu.o" "$lib" -lpthread -ldl -lm
}
run() {
	name=$1
	shift
	./"$name.ref" "$@" out=ref.bin >/dev/null 2>&1 || { fail "$name $*: the unscheduled kernel"; return; }
	rm -f out.bin
	TXRT_CUDA=emulate ./"$name.gpu" "$@" out=out.bin >out 2>&1 || { fail "$name $*: exit $?: $(head -3 out)"; return; }
	if [ -x "$txcmp" ]; then
		"$txcmp" ref.bin out.bin >cmp 2>&1 || { fail "$name $*: differs from the unscheduled kernel"; head -5 cmp; }
	else
		cmp -s ref.bin out.bin || fail "$name $*: differs from the unscheduled kernel"
	fi
	echo "$name $*: emulated, equal to the unscheduled kernel"
}
for k in "$@"; do
	if build "$k"; then
		run "$k" M=200 N=136 K=72
		run "$k" M=67 N=29 K=45
	else
		fail "$k: build"
	fi
done

# the wait left out: the calls are in flight when the store reads the
# fragment (K = 40: two steps, no slot refilled)
k=hgemm_sm90a_cuda
if TXC_CUDA_WGMMA_WAIT=none "$TXC" -k $k --target=cuda --cuda-arch=sm_90a "$top/bench/kernels/$k.tx" -o nowait.o &&
    ${CC:-cc} -o nowait "$k.hd.o" nowait.o "$lib" -lpthread -ldl -lm; then
	if TXRT_CUDA=emulate ./nowait M=70 N=40 K=40 out=nw.bin >out 2>&1; then
		fail "no wait: the emulator saw nothing"
	fi
	grep -q "touches a warpgroup fragment's registers with wgmma calls in flight" out ||
	    fail "no wait: no report of a wgmma in flight: $(head -3 out)"
else
	fail "no wait: build"
fi

[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the PTX's text and the emulator were checked)"; exit 77; }
echo "PASS: cuda_wgmma"
