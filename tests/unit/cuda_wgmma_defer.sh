#!/bin/sh
# cuda_wgmma_defer.sh: pipeline(S, defer = 1) on the sm_90a GEMMs
# (lower/double_buffer.c, target/cuda/gpu_wgmma.c): the shipped plans
# with pipeline(3) made pipeline(4, defer = 1), as tools/gpu-check.sh's
# `defer' variants edit them (hgemm_sm90a_cuda, bgemm_sm90a_cuda,
# hgemm_sm90a_tma_cuda).  Their PTX commits each step of k as one wgmma
# group and waits with wait_group 1 in the loop (the step before, whose
# slot the next iteration refills) and wait_group 0 after it, before the
# store; ptxas assembles it with no spills and does not serialize the
# wgmma.  In libtxrt's emulator they match the unscheduled kernel at odd
# sizes (run time, and fixed by -D as cuda_fixed_sizes.sh fixes them),
# with no report; with one slot too few (TXC_PIPELINE_DEFER_SLOTS=short:
# the fills S - 1 steps ahead with the deferred wait) the emulator reports
# the fill of a slot that a wgmma group in flight still reads.  Without
# ptxas its part is left out and the test skips (77) after the rest.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
. "$abs_top_srcdir/tests/unit/cuda_env.sh"
TXC_STDLIB=$top/stdlib; export TXC_STDLIB
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
set -- hgemm_sm90a_cuda bgemm_sm90a_cuda hgemm_sm90a_tma_cuda
for k in "$@"; do
	sed 's/\.pipeline(3);/.pipeline(4, defer = 1);/' "$top/bench/kernels/$k.tx" >"$k.tx"
	grep -q 'pipeline(4, defer = 1)' "$k.tx" || fail "$k: no pipeline(3) to edit"
done

# ---- the loop and the PTX ----------------------------------------------------
for k in "$@"; do
	"$TXC" --target=cuda --cuda-arch=sm_90a --emit=kernels -o "$k.k" "$k.tx" || { fail "$k: txc --emit=kernels"; continue; }
	# in the loop (slots of 4: ko%4), the commit and wait for all but one
	# group; after it, the wait for all, before the store
	awk '/^func .*_k0\(/ { on = 1 } on && /for \(ko,/ { loop = 1 }
	    on && loop && /wgmma.sync\(1, 1,/ { w1++ } on && loop && /wgmma.sync\(1, 0,/ { w0++ }
	    on && /wgmma.sync\(3, 0,/ && w1 { drain++ } on && /wgmma_store/ { if (drain) ok = 1; on = 0 }
	    END { exit !(ok && w1 && !w0) }' "$k.k" ||
	    fail "$k: no wait for all but one group in the loop and for all after it: $(grep -c 'wgmma.sync' "$k.k") syncs"
	grep -q 'ko%4\*' "$k.k" || fail "$k: the slots are not 4"
	"$TXC" --target=cuda --cuda-arch=sm_90a --emit=ptx -o "$k.ptx" "$k.tx" || { fail "$k: txc --emit=ptx"; continue; }
	# each kernel (64- and 32-bit indices): a commit then wait_group 1,
	# and a wait_group 0 with no commit before it (the drain)
	awk '/wgmma.commit_group/ { c = 1; next }
	    /wgmma.wait_group.sync.aligned 1;/ { if (c) one++; c = 0; next }
	    /wgmma.wait_group.sync.aligned 0;/ { if (!c) zero++; else bad++; c = 0; next }
	    /\.entry/ { n++ }
	    END { exit !(one >= n && zero >= n && !bad) }' "$k.ptx" ||
	    fail "$k: the PTX's waits: $(grep -c 'wait_group.sync.aligned 1' "$k.ptx") of 1, $(grep -c 'wait_group.sync.aligned 0' "$k.ptx") of 0"
	[ -n "$ptxas" ] || continue
	if ! "$ptxas" -v -arch=sm_90a -o "$k.cubin" "$k.ptx" >v 2>&1; then
		fail "$k: ptxas rejects the PTX"
		head -5 v
		continue
	fi
	nk=$(grep -c "^\.visible \.entry" "$k.ptx")
	[ "$(grep -c ' 0 bytes spill stores, 0 bytes spill loads' v)" -eq "$nk" ] || fail "$k: spills: $(grep spill v)"
	! grep -q "C7510\|serializ" v || fail "$k: ptxas serializes the wgmma: $(grep -i serializ v | head -2)"
	echo "$k defer sm_90a:" $(grep -o "Used [0-9]* registers" v)
done

# ---- the emulator, sizes at run time -----------------------------------------
# build NAME: the harness NAME.ref (unscheduled, CPU) and NAME.gpu
build() {
	k=$1
	"$TXC" -k "$k" --emit=harness -o "$k.h.c" "$k.tx" && ${CC:-cc} -O1 -DTXC_LLVM -c -o "$k.h.o" "$k.h.c" &&
	${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o "$k.hd.o" "$k.h.c" || return 1
	"$TXC" -k "$k" --no-schedule "$k.tx" -o "$k.ref.o" &&
	${CC:-cc} -o "$k.ref" "$k.h.o" "$k.ref.o" "$lib" -lpthread -ldl -lm || return 1
	"$TXC" -k "$k" --target=cuda --cuda-arch=sm_90a "$k.tx" -o "$k.gpu.o" &&
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
		run "$k" M=257 N=263 K=129
		run "$k" M=67 N=29 K=45
		run "$k" M=130 N=72 K=264   # rows of 16-byte multiples: TMA; 9 steps, the ring wraps twice
	else
		fail "$k: build"
	fi
done

# ---- the emulator, sizes fixed by -D (cuda_fixed_sizes.sh's) -------------------
check() { # FILE SIZES...
	f=$1
	shift
	out=$("$TXC" bench "$f" --target=cuda --cuda-arch=sm_90a --runs=1 --warmup=0 "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! echo "$out" | grep -E '^  default ' | grep -Eq 'emulated +- +0 '; then
		fail "$f $*: exit $rc: $(echo "$out" | head -3)"
		return
	fi
	echo "ok: $f $*"
}
for kk in "-D K=48" "-D K=16" "-D K=72"; do
	# shellcheck disable=SC2086
	check hgemm_sm90a_cuda.tx -D M=64 -D N=64 $kk
done
check hgemm_sm90a_cuda.tx -D M=128 -D N=64 -D K=80
check bgemm_sm90a_cuda.tx -D M=67 -D N=29 -D K=45
check hgemm_sm90a_tma_cuda.tx -D M=70 -D N=40 -D K=16
check hgemm_sm90a_tma_cuda.tx -D M=70 -D N=72 -D K=136

# ---- one slot too few: the fill of a slot a group in flight reads ----------------
for k in hgemm_sm90a_cuda hgemm_sm90a_tma_cuda; do
	if TXC_PIPELINE_DEFER_SLOTS=short "$TXC" -k $k --target=cuda --cuda-arch=sm_90a "$k.tx" -o short.o &&
	    ${CC:-cc} -o short "$k.hd.o" short.o "$lib" -lpthread -ldl -lm; then
		if TXRT_CUDA=emulate ./short M=70 N=40 K=136 out=s.bin >out 2>&1; then
			fail "$k, one slot too few: the emulator saw nothing"
		fi
		grep -q "write of shared buffer '[AB]s' element [0-9]* by thread .* while a wgmma group in flight reads it" out ||
		    fail "$k, one slot too few: no report of the write: $(head -3 out)"
	else
		fail "$k, one slot too few: build"
	fi
done

[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the PTX's text and the emulator were checked)"; exit 77; }
echo "PASS: cuda_wgmma_defer"
