#!/bin/sh
# cuda_tma_panels.sh: tma() on a tile stored in panels of 128-byte rows
# (gpu_tma.c, cuda_tma.c): bench/kernels/hgemm_sm90a_tma_cuda.tx with
# Bs.tma() added (gpu-check's variant tmab), so that B's 32 x 128 f16
# tiles (256-byte rows, two panels wgmma reads through its descriptors)
# come by TMA as A's do, two boxes of 32 rows x 64 columns (128-byte
# swizzle) a slot, counted on the slot's mbarrier by one expect_tx of
# both:
#   - the PTX for sm_90a: an arrive.expect_tx of 8192 bytes followed by
#     two cp.async.bulk.tensor (B) and by one (A); ptxas assembles it with
#     no spills and no serialized wgmma;
#   - libtxrt's emulator against the unscheduled kernel, with both maps
#     encoded (B's box 64 x 32, swizzle 128) at sizes that are no
#     multiples of the tiles but whose rows are multiples of 16 bytes
#     (257 x 264 x 136, 200 x 136 x 72, 130 x 136 x 200), also compiled
#     with -D, and where B's or A's rows are not (257 x 263 x 129, 64 x 72
#     x 45: the host encodes no map, the kernel copies with cp.async);
#   - wrong plans reported or caught: B's map encoded unswizzled (the
#     results differ: the boxes land where the descriptors do not read),
#     an expect_tx of one box's bytes (TXC_CUDA_TMA_EXPECT=box: the second
#     box completes on a phase nobody expects), the mbarrier waits left
#     out (TXC_CUDA_ASYNC_WAIT=none: reads of B's load in flight);
#   - the diagnostic for a wide swizzled tile that no wgmma reads (an
#     mma.sync plan: no panels, so no boxes).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
ptxas=$(command -v ptxas 2>/dev/null || true)
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
txcmp=$abs_top_builddir/tests/tools/txcmp
top=$abs_top_srcdir
k=hgemm_sm90a_tma_cuda
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
sed 's/^  Bs\.swizzle();$/  Bs.swizzle();\n  Bs.tma();/' "$top/bench/kernels/$k.tx" >$k.tx
grep -q "Bs.tma();" $k.tx || { echo "FAIL: the sed no longer adds Bs.tma()"; exit 1; }
f=$tmp/$k.tx
set -- -I "$top/stdlib"

# ---- the PTX ------------------------------------------------------------------
"$TXC" "$@" --target=cuda --cuda-arch=sm_90a --emit=ptx -o k.ptx "$f" || { fail "txc --emit=ptx"; exit 1; }
# the boxes after each expect_tx: "1" for A's fills, "2" for B's
awk '/mbarrier\.arrive\.expect_tx/ { n = 0; on = 1; next }
    on && /cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes/ { n++; next }
    on { print n; on = 0 }' k.ptx | sort | uniq -c >boxes
grep -q " 2$" boxes && grep -q " 1$" boxes && ! grep -vq " [12]$" boxes ||
    fail "the fills are not 1 box (A) and 2 boxes (B) an expect_tx: $(cat boxes)"
grep -q "mov\.b32.*8192;" k.ptx || fail "no expect_tx of 8192 bytes"
"$TXC" "$@" --target=cuda --cuda-arch=sm_90a --emit=kernels -o k.txt "$f" || fail "--emit=kernels"
grep -q "gpu\.tma(Bs\[" k.txt || fail "--emit=kernels shows no TMA load of Bs"
grep -q "gpu\.mbar_init(Bs\.full\[2\], 1)" k.txt || fail "--emit=kernels: no mbarriers of Bs"
if [ -n "$ptxas" ]; then
	if "$ptxas" -v -arch=sm_90a -o k.cubin k.ptx >v 2>&1; then
		nk=$(grep -c "^\.visible \.entry" k.ptx)
		[ "$(grep -c ' 0 bytes spill stores, 0 bytes spill loads' v)" -eq "$nk" ] || fail "spills: $(grep spill v)"
		! grep -q "C7510\|serializ" v || fail "ptxas serializes the wgmma: $(grep -i serializ v | head -2)"
		echo "sm_90a:" $(grep -o "Used [0-9]* registers" v)
	else
		fail "ptxas rejects the PTX"
		head -5 v
	fi
fi

# ---- the emulator ---------------------------------------------------------------
${CC:-cc} -O1 -I"$top/rt" -c -o wrap.o "$top/tests/unit/cuda_tma_wrap.c" || exit 99
"$TXC" "$@" -k $k --emit=harness -o h.c "$f" && ${CC:-cc} -O1 -DTXC_LLVM -c -o h.o h.c &&
${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o hd.o h.c &&
"$TXC" "$@" -k $k --no-schedule "$f" -o ref.o && ${CC:-cc} -o ref h.o ref.o "$lib" -lpthread -ldl -lm || exit 99
build() { # NAME VAR=VALUE [txc options]: the sm_90a build with the wrap
	name=$1 var=$2
	shift 2
	env "$var" "$TXC" -I "$top/stdlib" -k $k --target=cuda --cuda-arch=sm_90a "$@" "$f" -o "$name.o" &&
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
build gpu X=0 || { fail "build"; exit 1; }
check gpu 257 264 136 tma
check gpu 200 136 72 tma
check gpu 130 136 200 tma
check gpu 257 263 129 cp.async
check gpu 64 72 45 tma          # A's rows (90 bytes) are no multiple of 16: neither map is used
grep -q "^map 6 2 45x64 box 32x128 swizzle 64: cp.async$" out || fail "64 x 72 x 45: A's map: $(grep '^map' out)"
build fixed X=0 -D M=257 -D N=264 -D K=136 || fail "build with -D"
check fixed 257 264 136 tma

# wrong plans
./ref M=200 N=136 K=72 out=ref.bin >/dev/null 2>&1
WRAP_SWIZZLE=0 WRAP_SWIZZLE_COLS=64 TXRT_CUDA=emulate ./gpu M=200 N=136 K=72 out=out.bin >out 2>&1 || fail "B's map unswizzled: exit $?"
same && fail "B's map unswizzled: still right (the boxes' layout is not the descriptors'?)"
build expect1 TXC_CUDA_TMA_EXPECT=box || fail "build (expect_tx of one box)"
TXRT_CUDA=emulate ./expect1 M=200 N=136 K=72 out=out.bin >out 2>&1 && fail "expect_tx of one box: the emulator saw nothing"
grep -q "TMA load into shared buffer .* completes 4096 bytes on an mbarrier whose phase expects 0" out ||
    fail "expect_tx of one box: no report: $(grep -v '^map' out | head -3)"
build nowait TXC_CUDA_ASYNC_WAIT=none || fail "build (no waits)"
TXRT_CUDA=emulate ./nowait M=200 N=136 K=72 out=out.bin >out 2>&1 && fail "no waits: the emulator saw nothing"
grep -q "read of shared buffer 'Bs' .*TMA load into it is in flight" out ||
    fail "no waits: no report of a read of B's load in flight: $(grep -v '^map' out | head -3)"

# ---- no panels, no boxes: B's 256-byte swizzled rows in an mma.sync plan --------
m=$top/bench/kernels/hgemm128_tma_cuda.tx
sed 's/As.tma();/As.tma();\n  Bs.tma();/' "$m" >wide.tx
line=$(grep -n "Bs.tma();" wide.tx | cut -d: -f1)
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o x.ptx wide.tx 2>err && fail "mma.sync Bs.tma(): accepted"
grep -q "wide.tx:$line:3: error: tma of 'Bs': a swizzled box's row is at most 128 bytes .*only a 16-bit tile that wgmma reads as its b" err ||
    fail "mma.sync Bs.tma(): $(head -2 err)"

[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the rest passed)"; exit 77; }
echo "PASS: cuda_tma_panels"
