#!/bin/sh
# cuda_tma.sh: tma() (txc-schedule(7)), a pipelined tile filled by the
# Tensor Memory Accelerator, on bench/kernels/hgemm128_tma_cuda.tx (the
# hgemm128 plan with A's tiles loaded by TMA, B's by cp.async):
#   - the diagnostics: an arch below sm_90, a swizzled box wider than the
#     swizzle span, a tile that is not pipelined, a cpu schedule;
#   - the PTX for sm_90: cp.async.bulk.tensor with mbarrier complete_tx,
#     arrive.expect_tx, try_wait.parity, mbarrier.init and its fence, the
#     map a 64-aligned 128-byte .param read through cvta.param; ptxas
#     assembles it for sm_90 and sm_90a with no spills and no stack frame
#     (77 where ptxas is missing, after the rest);
#   - libtxrt's emulator against the unscheduled kernel at sizes that are
#     not multiples of the tiles: K = 72 and 88 (TMA: the host encodes A's
#     map), K = 70 (140-byte rows: the host cannot, and the kernel copies
#     A with cp.async); a map whose swizzle disagrees with the tile's
#     layout gives wrong results (the emulator's box copy swizzles);
#   - the checker: mbarrier waits left out, or placed one fill late
#     (TXC_CUDA_ASYNC_WAIT=none, late), are reported as reads of a TMA
#     load in flight.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
. "$abs_top_srcdir/tests/unit/cuda_env.sh"
f=$top/bench/kernels/hgemm128_tma_cuda.tx
k=hgemm128_tma_cuda
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- diagnostics ---------------------------------------------------------------
line=$(grep -n "As.tma();" "$f" | cut -d: -f1)
"$TXC" --target=cuda --emit=ptx -o x.ptx "$f" 2>err && fail "sm_80: accepted"
grep -q "hgemm128_tma_cuda.tx:$line:3: error: tma of 'As' needs --cuda-arch=sm_90 or later" err ||
    fail "sm_80: $(head -2 err)"
sed 's/As.tma();/As.tma();\n  Bs.tma();/' "$f" >wide.tx
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o x.ptx wide.tx 2>err && fail "Bs.tma(): accepted"
grep -q "wide.tx:$((line + 1)):3: error: tma of 'Bs': a swizzled box's row is at most 128 bytes" err ||
    fail "Bs.tma(): $(head -2 err)"
sed 's/As.pipeline(3);//; s/Bs.pipeline(3);//' "$f" >nopipe.tx
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o x.ptx nopipe.tx 2>err && fail "no pipeline: accepted"
grep -q "error: tma of 'As': it needs pipeline(N)" err || fail "no pipeline: $(head -2 err)"
sed 's/for cuda/for cpu/' "$f" >cpu.tx
"$TXC" -o x.o cpu.tx 2>err && fail "a cpu schedule: accepted"
grep -q "error: tma of 'As': copies by the Tensor Memory Accelerator of sm_90 GPUs, for schedules of the cuda target" err ||
    fail "a cpu schedule: $(head -2 err)"

# ---- PTX ---------------------------------------------------------------------
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o k.ptx "$f" || fail "txc --emit=ptx"
for want in "^\.version 8\.[0-9]" "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes" \
    "mbarrier\.arrive\.expect_tx\.shared::cta\.b64" "mbarrier\.try_wait\.parity\.shared::cta\.b64" \
    "mbarrier\.init\.shared::cta\.b64" "fence\.mbarrier_init\.release\.cluster" \
    "\.param \.align 64 \.b8 ${k}_k0_param_[0-9]*\[128\]" "cvta\.param\.u64" "cp\.async\.cg\.shared\.global" \
    "ldmatrix\.sync\.aligned\.m8n8\.x4" "\.extern \.shared \.align 1024"; do
	grep -q "$want" k.ptx || fail "the PTX has no '$want'"
done
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=kernels -o k.txt "$f" || fail "txc --emit=kernels"
grep -q "gpu\.tma(" k.txt || fail "--emit=kernels shows no gpu.tma"
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=cuda -o k.cu "$f" 2>err && fail "--emit=cuda: accepted"
grep -q "error: --emit=cuda does not write TMA loads" err || fail "--emit=cuda: $(head -2 err)"

# ---- the emulator ---------------------------------------------------------------
${CC:-cc} -O1 -I"$top/rt" -c -o wrap.o "$top/tests/unit/cuda_tma_wrap.c" || exit 99
"$TXC" -k $k --emit=harness -o h.c "$f" && ${CC:-cc} -O1 -DTXC_LLVM -c -o h.o h.c &&
${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o hd.o h.c &&
"$TXC" -k $k --no-schedule "$f" -o ref.o && ${CC:-cc} -o ref h.o ref.o "$lib" -lpthread -ldl -lm || exit 99
build() { # NAME [env...]: the cuda build with the wrap
	name=$1
	shift
	env "$@" "$TXC" -k $k --target=cuda --cuda-arch=sm_90 "$f" -o "$name.o" &&
	${CC:-cc} -Wl,--wrap=txrt_cuda_tensor_map -o "$name" hd.o wrap.o "$name.o" "$lib" -lpthread -ldl -lm
}
same() {
	if [ -x "$txcmp" ]; then "$txcmp" ref.bin out.bin >cmp 2>&1; else cmp -s ref.bin out.bin; fi
}
build gpu || { fail "build"; exit 1; }
for s in "M=200 N=136 K=72 tma" "M=37 N=45 K=88 tma" "M=200 N=136 K=70 cp.async" "M=131 N=129 K=33 cp.async"; do
	set -- $s
	want=$4
	./ref $1 $2 $3 out=ref.bin >/dev/null 2>&1 || { fail "$s: the unscheduled kernel"; continue; }
	rm -f out.bin
	TXRT_CUDA=emulate ./gpu $1 $2 $3 out=out.bin >out 2>&1 || { fail "$s: exit $?: $(grep -v '^map' out | head -3)"; continue; }
	got=$(sed -n 's/^map .*: //p' out | sort -u | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "$1 $2 $3: A copied by $got, by $want expected"
	grep -q "^map 6 2 ${3#K=}x${1#M=} box 32x128 swizzle 64:" out || fail "$1 $2 $3: the map: $(grep '^map' out)"
	same || { fail "$1 $2 $3: differs from the unscheduled kernel"; head -3 cmp; }
	echo "$1 $2 $3: $want, right"
done
./ref M=200 N=136 K=72 out=ref.bin >/dev/null 2>&1
WRAP_SWIZZLE=0 TXRT_CUDA=emulate ./gpu M=200 N=136 K=72 out=out.bin >out 2>&1 || fail "a swizzle-0 map: exit $?"
same && fail "a map with no swizzle for the swizzled tile: still right (the emulator ignores the swizzle?)"
# an f32 tile, unswizzled (box 8 x 8, 32-byte rows), pipeline(2): K = 44
# has 176-byte rows (TMA), K = 45 180 (cp.async)
cat >mm.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mm for cuda {
  C.gpu_tile(i, j, 8, 8) -> (io, jo, ii, ji);
  C.split(k, 8) -> (ko, ki);
  C.reorder(io, jo, ko, ii, ji, ki);
  A.cache_read(shared, [C]) -> As;
  As.compute_at(C, ko);
  As.pipeline(2);
  As.tma();
}
TX
"$TXC" -k mm --emit=harness -o m.c mm.tx && ${CC:-cc} -O1 -DTXC_LLVM -c -o m.o m.c &&
${CC:-cc} -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o md.o m.c &&
"$TXC" -k mm --no-schedule mm.tx -o mref.o && ${CC:-cc} -o mref m.o mref.o "$lib" -lpthread -ldl -lm &&
"$TXC" -k mm --target=cuda --cuda-arch=sm_90 mm.tx -o mgpu.o &&
${CC:-cc} -Wl,--wrap=txrt_cuda_tensor_map -o mgpu md.o wrap.o mgpu.o "$lib" -lpthread -ldl -lm ||
    fail "mm: build"
for s in "K=44 tma" "K=45 cp.async"; do
	set -- $s
	./mref M=19 N=21 $1 out=ref.bin >/dev/null 2>&1 || { fail "mm $1: the unscheduled kernel"; continue; }
	rm -f out.bin
	TXRT_CUDA=emulate ./mgpu M=19 N=21 $1 out=out.bin >out 2>&1 || { fail "mm $1: exit $?: $(head -3 out)"; continue; }
	grep -q "^map 7 4 ${1#K=}x19 box 8x8 swizzle 0: $2$" out || fail "mm $1: $(grep '^map' out), by $2 expected"
	same || { fail "mm M=19 N=21 $1: differs from the unscheduled kernel"; head -3 cmp; }
	echo "mm (f32) M=19 N=21 $1: $2, right"
done
sed 's/As.pipeline(2);//' mm.tx >mm1.tx
"$TXC" --target=cuda --cuda-arch=sm_90 --emit=ptx -o x.ptx mm1.tx 2>err && fail "mm without pipeline: accepted"
grep -q "mm1.tx:[0-9]*:3: error: tma of 'As': it needs pipeline(N)" err || fail "mm without pipeline: $(head -2 err)"

for how in none late; do
	build g_$how TXC_CUDA_ASYNC_WAIT=$how || { fail "build ($how)"; continue; }
	TXRT_CUDA=emulate ./g_$how M=200 N=136 K=72 out=out.bin >out_$how 2>&1 && fail "waits $how: the emulator saw nothing"
	grep -q "read of shared buffer 'As' .*TMA load into it is in flight: no mbarrier wait" out_$how ||
	    fail "waits $how: no report of a read of a TMA load in flight: $(grep -v '^map' out_$how | head -3)"
done

# ---- ptxas -----------------------------------------------------------------------
[ $fails -eq 0 ] || exit 1
[ -n "$ptxas" ] || { echo "SKIP: no ptxas (the rest passed)"; exit 77; }
for a in sm_90 sm_90a; do
	"$TXC" --target=cuda --cuda-arch=$a --emit=ptx -o k.$a.ptx "$f" || { fail "$a: txc --emit=ptx"; continue; }
	if ! "$ptxas" -v -arch=$a -o k.$a.cubin k.$a.ptx >v 2>&1; then
		fail "$a: ptxas rejects the PTX"
		head -5 v
		continue
	fi
	grep -q " 0 bytes spill stores, 0 bytes spill loads" v || fail "$a: spills: $(grep spill v)"
	! grep -q "[1-9][0-9]* bytes stack frame" v || fail "$a: a stack frame (the map copied?): $(grep stack v)"
	echo "$a: $(grep -o 'Used [0-9]* registers' v | sort -u | tr '\n' ' ')"
done
[ $fails -eq 0 ] || exit 1
echo "PASS: cuda_tma"
