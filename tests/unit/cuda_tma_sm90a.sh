#!/bin/sh
# cuda_tma_sm90a.sh: bench/kernels/hgemm_sm90a_tma_cuda.tx with B's tiles
# by TMA too, and warp-specialised (gpu-check's variants tmab, wspec,
# wspec_defer):
#   tmab: Bs.tma() added, so that B's 32 x 128 f16 tiles (256-byte rows,
#     two panels of 128-byte rows that wgmma reads through its
#     descriptors) come by TMA as A's do, two boxes of 32 rows x 64
#     columns (128-byte swizzle) a slot, counted on the slot's mbarrier by
#     one expect_tx of both (gpu_tma.c, cuda_tma.c);
#   wspec: tmab with pipeline(3, producer = warpgroup) (gpu_wspec.c): a
#     third warpgroup issues the loads, waiting on each slot's "empty"
#     mbarrier, on which the consumers' 8 warps arrive (lane 0) after their
#     wgmma.wait_group; the consumers' k loop has no bar.sync;
#   wspec_defer: the same with pipeline(4, defer = 1, producer = warpgroup).
# For each: the PTX for sm_90a (an arrive.expect_tx of 8192 bytes followed
# by two cp.async.bulk.tensor for B, one for A; for the producer plans
# mbarrier.arrive, blocks of 384 threads, no bar.sync in the consumers'
# loop), ptxas with no spills and no serialized wgmma; libtxrt's emulator
# against the unscheduled kernel with both maps encoded (B's box 64 x 32,
# swizzle 128) at sizes that are no multiples of the tiles but whose rows
# are multiples of 16 bytes (257 x 264 x 136, 200 x 136 x 72, 130 x 136 x
# 200), also compiled with -D, and where B's or A's rows are not (257 x
# 263 x 129, 64 x 72 x 45: no map, the kernel copies with cp.async, the
# producer warpgroup idle and the consumers' barriers bar.sync 1, 256).
# Wrong plans reported or caught: B's map encoded unswizzled (the results
# differ), an expect_tx of one box's bytes (TXC_CUDA_TMA_EXPECT=box), the
# mbarrier waits left out (TXC_CUDA_ASYNC_WAIT=none); for the producer:
# refills that do not wait for "empty" (TXC_CUDA_WSPEC=noempty: a load
# into a slot whose last load no one has seen land), consumers that
# arrive before their wgmma calls read the slot (=early: the refill
# overwrites what a group in flight reads), consumers that never arrive
# (=noarrive: the producer would wait forever).  Also the diagnostic for a
# wide swizzled tile that no wgmma reads (an mma.sync plan: no panels).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
. "$abs_top_srcdir/tests/unit/cuda_env.sh"
k=hgemm_sm90a_tma_cuda
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
sed 's/^  Bs\.swizzle();$/  Bs.swizzle();\n  Bs.tma();/' "$top/bench/kernels/$k.tx" >tmab.tx
sed 's/\.pipeline(3)/.pipeline(3, producer = warpgroup)/' tmab.tx >wspec.tx
sed 's/\.pipeline(3)/.pipeline(4, defer = 1, producer = warpgroup)/' tmab.tx >wspec_defer.tx
grep -q "Bs.tma();" tmab.tx && grep -q "producer = warpgroup" wspec.tx && grep -q "defer = 1, producer" wspec_defer.tx ||
    { echo "FAIL: the seds no longer make the plans"; exit 1; }
plans="tmab wspec wspec_defer"

# ---- the PTX ------------------------------------------------------------------
for p in $plans; do
	"$TXC" -I "$top/stdlib" --target=cuda --cuda-arch=sm_90a --emit=ptx -o $p.ptx $p.tx || { fail "$p: txc --emit=ptx"; continue; }
	# the boxes after each expect_tx: "1" for A's fills, "2" for B's
	awk '/mbarrier\.arrive\.expect_tx/ { n = 0; on = 1; next }
	    on && /cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes/ { n++; next }
	    on { print n; on = 0 }' $p.ptx | sort | uniq -c >boxes
	grep -q " 2$" boxes && grep -q " 1$" boxes && ! grep -vq " [12]$" boxes ||
	    fail "$p: the fills are not 1 box (A) and 2 boxes (B) an expect_tx: $(cat boxes)"
	grep -q "mov\.b32.*8192;" $p.ptx || fail "$p: no expect_tx of 8192 bytes"
	"$TXC" -I "$top/stdlib" --target=cuda --cuda-arch=sm_90a --emit=kernels -o $p.txt $p.tx || fail "$p: --emit=kernels"
	grep -q "gpu\.tma(Bs\[" $p.txt || fail "$p: --emit=kernels shows no TMA load of Bs"
	if [ $p != tmab ]; then
		grep -q "block (128, 1, 3)" $p.txt || fail "$p: not 3 warpgroups: $(grep '^// kernel' $p.txt | head -1 | cut -c1-120)"
		grep -q "gpu\.mbar_init(As\.empty\[2\], 8)" $p.txt || fail "$p: no empty mbarriers of 8 arrivals (warps)"
		grep -q "mbarrier\.arrive\.shared::cta\.b64" $p.ptx || fail "$p: no mbarrier.arrive"
		grep -q "bar\.sync 1, 256;" $p.ptx || fail "$p: no consumers' barrier (cp.async path)"
		# the consumers' TMA loop: from its first wait on a full barrier to
		# its arrival, no barrier of the kernel's
		awk '/if \(tma_on != 0\) \{$/ { on = 1 } on { print } on && /gpu\.mbar_arrive/ { exit }' $p.txt >loop
		grep -q "gpu\.mbar_wait(Bs\.full" loop || fail "$p: no consumers' TMA loop in --emit=kernels"
		grep -q "gpu\.barrier" loop &&
		    fail "$p: a barrier in the consumers' TMA loop"
	fi
	[ -n "$ptxas" ] || continue
	if "$ptxas" -v -arch=sm_90a -o $p.cubin $p.ptx >v 2>&1; then
		nk=$(grep -c "^\.visible \.entry" $p.ptx)
		[ "$(grep -c ' 0 bytes spill stores, 0 bytes spill loads' v)" -eq "$nk" ] || fail "$p: spills: $(grep spill v)"
		! grep -q "C7510\|serializ" v || fail "$p: ptxas serializes the wgmma: $(grep -i serializ v | head -2)"
		echo "$p sm_90a:" $(grep -o "Used [0-9]* registers" v)
	else
		fail "$p: ptxas rejects the PTX"
		head -5 v
	fi
done

# ---- the emulator ---------------------------------------------------------------
${CC:-cc} -O1 -I"$top/rt" -c -o wrap.o "$top/tests/unit/cuda_tma_wrap.c" || exit 99
"$TXC" -I "$top/stdlib" -k $k --emit=harness -o h.c tmab.tx && ${CC:-cc} -O1 -DTXC_LLVM -c -o h.o h.c &&
${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o hd.o h.c &&
"$TXC" -I "$top/stdlib" -k $k --no-schedule tmab.tx -o ref.o && ${CC:-cc} -o ref h.o ref.o "$lib" -lpthread -ldl -lm || exit 99
build() { # NAME PLAN VAR=VALUE [txc options]: the sm_90a build with the wrap
	name=$1 plan=$2 var=$3
	shift 3
	env "$var" "$TXC" -I "$top/stdlib" -k $k --target=cuda --cuda-arch=sm_90a "$@" $plan.tx -o "$name.o" &&
	${CC:-cc} -Wl,--wrap=txrt_cuda_tensor_map -o "$name" hd.o wrap.o "$name.o" "$lib" -lpthread -ldl -lm
}
same() {
	if [ -x "$txcmp" ]; then "$txcmp" ref.bin out.bin >cmp 2>&1; else cmp -s ref.bin out.bin; fi
}
# check PROGRAM M N K WANT: emulated, as the unscheduled kernel, B copied by WANT
check() {
	./ref M=$2 N=$3 K=$4 out=ref.bin >/dev/null 2>&1 || { fail "$2 x $3 x $4: the unscheduled kernel"; return; }
	rm -f out.bin
	TXRT_CUDA=emulate ./$1 M=$2 N=$3 K=$4 out=out.bin >out 2>&1 ||
	    { fail "$1 $2 x $3 x $4: exit $?: $(grep -v '^map' out | head -3)"; return; }
	grep -q "^map 6 2 ${3}x$4 box 64x32 swizzle 128: $5$" out ||
	    fail "$1 $2 x $3 x $4: B's map: $(grep '^map' out | tr '\n' ' '), $5 expected"
	same || { fail "$1 $2 x $3 x $4: differs from the unscheduled kernel"; head -3 cmp; return; }
	echo "$1 $2 x $3 x $4: B by $5, right"
}
# expect PROGRAM WHAT REPORT: the emulator reports REPORT
expect() {
	TXRT_CUDA=emulate ./$1 M=200 N=136 K=200 out=out.bin >out 2>&1 && { fail "$2: the emulator saw nothing"; return; }
	grep -q "$3" out || fail "$2: not reported: $(grep -v '^map' out | head -3)"
}
for p in $plans; do
	build $p $p X=0 || { fail "$p: build"; continue; }
	check $p 257 264 136 tma
	check $p 200 136 72 tma
	check $p 130 136 200 tma
	check $p 257 263 129 cp.async
	check $p 64 72 45 tma          # A's rows (90 bytes) are no multiple of 16: neither map is used
	grep -q "^map 6 2 45x64 box 32x128 swizzle 64: cp.async$" out || fail "$p 64 x 72 x 45: A's map: $(grep '^map' out)"
	build ${p}_fixed $p X=0 -D M=257 -D N=264 -D K=136 || fail "$p: build with -D"
	check ${p}_fixed 257 264 136 tma
done

# wrong plans
./ref M=200 N=136 K=72 out=ref.bin >/dev/null 2>&1
WRAP_SWIZZLE=0 WRAP_SWIZZLE_COLS=64 TXRT_CUDA=emulate ./tmab M=200 N=136 K=72 out=out.bin >out 2>&1 || fail "B's map unswizzled: exit $?"
same && fail "B's map unswizzled: still right (the boxes' layout is not the descriptors'?)"
build expect1 tmab TXC_CUDA_TMA_EXPECT=box && expect expect1 "expect_tx of one box" \
    "TMA load into shared buffer .* completes 4096 bytes on an mbarrier whose phase expects 0" || fail "build (one box)"
build nowait tmab TXC_CUDA_ASYNC_WAIT=none && expect nowait "no waits" \
    "read of shared buffer 'Bs' .*TMA load into it is in flight" || fail "build (no waits)"
build noempty wspec TXC_CUDA_WSPEC=noempty && expect noempty "refills not waiting for empty" \
    "write of shared buffer 'As' element 0 by thread (0,0,2) while thread (0,0,2)'s TMA load into it is in flight" ||
    fail "build (noempty)"
build early wspec TXC_CUDA_WSPEC=early && expect early "arrivals before the reads" \
    "write of shared buffer '[AB]s' .* by thread (0,0,2) while a wgmma group in flight reads it" || fail "build (early)"
build noarrive wspec TXC_CUDA_WSPEC=noarrive && expect noarrive "no arrivals" \
    "waits for phase parity 1 of an mbarrier whose phase no arrival or TMA load can complete" || fail "build (noarrive)"

# ---- no panels, no boxes: B's 256-byte swizzled rows in an mma.sync plan --------
m=$top/bench/kernels/hgemm128_tma_cuda.tx
sed 's/As.tma();/As.tma();\n  Bs.tma();/' "$m" >wide.tx
line=$(grep -n "Bs.tma();" wide.tx | cut -d: -f1)
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o x.ptx wide.tx 2>err && fail "mma.sync Bs.tma(): accepted"
grep -q "wide.tx:$line:3: error: tma of 'Bs': a swizzled box's row is at most 128 bytes .*only a 16-bit tile that wgmma reads as its b" err ||
    fail "mma.sync Bs.tma(): $(head -2 err)"

[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the rest passed)"; exit 77; }
echo "PASS: cuda_tma_sm90a"
