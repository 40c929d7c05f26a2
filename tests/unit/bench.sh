#!/bin/sh
# bench.sh: `txc bench` JIT-compiles a kernel with and without its
# schedules, runs both on random data and prints a table whose rows agree
# with the unscheduled kernel; a missing size is an error.
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
cat >mm.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mm for cpu {
  C.split(j, 8) -> (jo, ji);
  C.vectorize(ji);
  C.parallel(i);
}
schedule mm as serial for cpu {
  C.reorder(i, k, j);
}
TX
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
"$TXC" bench mm.tx -D M=37 -D N=29 -D K=13 --runs=3 --threads=2 \
	--schedules=default,serial >out.txt 2>err.txt || fail "txc bench exited $?"
grep -q '^mm: M=37 N=29 K=13, 2 threads' out.txt || fail "no header line"
grep -Eq '^mm: .*\), (avx512|avx2|sse2|neon|generic) tables, ' out.txt ||
	fail "the header does not name the micro-kernel tables"
# then the cache sizes the schedules read (l1_bytes ...) and their source
grep -Eq ', caches L1d [0-9]+[KM]? L2 [0-9]+[KM]? L3 [0-9]+[KM]? \((sysfs|sysconf|defaults)' out.txt ||
	fail "the header does not name the cache sizes"
"$TXC" bench mm.tx -D M=37 -D N=29 -D K=13 --runs=1 --cache=4K,64K,1M >out2.txt 2>err2.txt ||
	fail "txc bench --cache exited $?"
grep -q ', caches L1d 4K L2 64K L3 1M (--cache)$' out2.txt || fail "--cache is not in the header"
"$TXC" bench mm.tx -D M=37 -D N=29 -D K=13 --runs=1 --cache=64K,4K >out2.txt 2>err2.txt &&
	fail "txc bench took --cache=64K,4K"
grep -q 'error: --cache=64K,4K: the L2 size is smaller than the L1 size' err2.txt ||
	fail "no message for a bad --cache"
grep -q '(unscheduled)' out.txt || fail "no reference row"
for s in default serial; do
	grep -E "^  $s +[0-9.]+ ms +[0-9.]+ GFLOP/s +[0-9.e+-]+  \(median of 3\)\$" out.txt >/dev/null ||
		fail "no good row for schedule $s"
done
! grep -q MISMATCH out.txt || fail "a schedule disagrees with the reference"
# --target=cuda: without a GPU the cuda schedules run in libtxrt's emulator,
# checked against the reference and marked "emulated"
cat >gpu.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mm for cuda {
  C.gpu_tile(i, j, 4, 8) -> (io, jo, ii, ji);
}
schedule mm as wrong for cuda {
  C.gpu_tile(i, j, 4, 8) -> (io, jo, ii, ji);
  C.parallel(k);
}
TX
if [ -e /dev/nvidiactl ]; then
	echo "note: a GPU driver is here: the emulated rows are not checked"
else
	TXRT_CUDA= "$TXC" bench gpu.tx --target=cuda -D M=19 -D N=23 -D K=7 >out.txt 2>err.txt ||
		fail "txc bench --target=cuda exited $?"
	grep -q "cuda schedules in libtxrt's emulator" out.txt || fail "--target=cuda: no emulator line"
	grep -E "^  default +emulated +- +[0-9.e+-]+  \(emulated\)\$" out.txt >/dev/null ||
		fail "--target=cuda: no emulated row"
	! "$TXC" bench gpu.tx --target=cuda -s wrong -D M=3 -D N=3 -D K=3 >out.txt 2>err.txt ||
		fail "--target=cuda: an illegal schedule was accepted"
	grep -q "compile error" out.txt || fail "--target=cuda: no compile error row"
fi
! "$TXC" bench gpu.tx --target=vta -D M=3 -D N=3 -D K=3 >out.txt 2>err.txt ||
	fail "--target=vta without a vta schedule was accepted"
grep -q "no VTA work" out.txt || fail "--target=vta without a vta schedule: no message"
! "$TXC" bench mm.tx -D M=4 -D N=4 >out.txt 2>err.txt || fail "a missing size was accepted"
grep -q "size 'K' needs a value" err.txt || fail "no message for the missing size"

# the operation count (txc.1, "How GFLOP/s is counted"): a matrix product
# is 2*M*N*K; a pipeline sums its stages, an inferred-shape one included;
# a strided convolution's padding guard and index arithmetic count nothing
"$TXC" bench mm.tx -D M=37 -D N=29 -D K=13 --count-only >out.txt 2>err.txt ||
	fail "--count-only exited $?"
[ "$(cat out.txt)" = "mm: $((2 * 37 * 29 * 13)) flop" ] || fail "matmul count"
cat >pipe.tx <<'TX'
kernel pipe(M, N, K) {
  in  x: f32[M, K];
  in  w: f32[N, K];
  in  b: f32[N];
  out y: f32[M, N];
  acc[i, j] = sum(k < K) x[i, k] * w[j, k];
  y[i, j] = max(acc[i, j] * 0.5 + b[j], 0.0);
}
TX
"$TXC" bench pipe.tx -D M=6 -D N=10 -D K=7 --count-only >out.txt 2>err.txt ||
	fail "--count-only on a pipeline exited $?"
[ "$(cat out.txt)" = "pipe: $((2 * 6 * 10 * 7 + 3 * 6 * 10)) flop" ] || fail "pipeline count"
cat >conv.tx <<'TX'
kernel conv(C, H, W, K) {
  in  data: f32[C, H, W];
  in  wt:   f32[K, C, 3, 3];
  out y:    f32[K, (H + 1) / 2, (W + 1) / 2];
  y[k, h, w] = sum(c < C, ry < 3, rx < 3)
      (2 * h + ry >= 1 && 2 * h + ry <= H && 2 * w + rx >= 1 && 2 * w + rx <= W
        ? data[c, 2 * h + ry - 1, 2 * w + rx - 1] : 0.0) * wt[k, c, ry, rx];
}
TX
"$TXC" bench conv.tx -D C=3 -D H=11 -D W=8 -D K=5 --count-only >out.txt 2>err.txt ||
	fail "--count-only on a conv exited $?"
[ "$(cat out.txt)" = "conv: $((2 * 5 * 6 * 4 * 3 * 9)) flop" ] || fail "strided conv count"
"$TXC" bench conv.tx -D C=3 -D H=11 -D W=8 -D K=5 --runs=3 >out.txt 2>err.txt ||
	fail "txc bench on the conv exited $?"
! grep -q MISMATCH out.txt || fail "the conv disagrees with the reference"

# a tensorized schedule with sizes fixed at compile time (-D): one row
# (the simplifier folds the edge extent's min(6, ...) away: the emitter
# takes the block's shape from the call), a bottom edge of 2..5 rows, and
# masked columns; tensorize_pack.tx's packed nest has no specialization
# for few rows.  Then the tuned matmul, whose first specialization
# (M < 6) -D M=1 and M=4 fix as taken.
if [ -n "${abs_top_srcdir:-}" ]; then
	for m in 1 4 13; do
		"$TXC" bench "$abs_top_srcdir/tests/run/tensorize_pack.tx" -I "$abs_top_srcdir/stdlib" \
			-D M=$m -D N=37 -D K=19 --runs=1 >out.txt 2>err.txt ||
			fail "the packed matmul with M=$m exited $?"
		grep -q '^  default ' out.txt || fail "no row for the tensorized schedule (M=$m)"
		! grep -q MISMATCH out.txt || fail "the packed matmul with M=$m disagrees"
		"$TXC" bench "$abs_top_srcdir/stdlib/tuned/matmul.tx" -s fast -D M=$m -D N=37 \
			-D K=19 --runs=1 >out.txt 2>err.txt || fail "tuned matmul with M=$m exited $?"
		grep -q '^  fast ' out.txt || fail "no row for the tuned schedule (M=$m)"
		! grep -q MISMATCH out.txt || fail "tuned matmul with M=$m disagrees"
	done
	# the micro-kernel tables a schedule runs, under its row: the tuned
	# matmul's (both specializations'), and the stdlib's gemm_i8 and matmul_bf16 through
	# their AVX2 tables (--cpu=znver3: AVX2 without VNNI or BF16, which
	# every x86-64 with AVX2 runs)
	grep -q '^ *micro-kernel: gemm_1x64_f32 (AVX2 FMA, ymm), gemm_6x16_f32 (AVX2 FMA, ymm)$' out.txt ||
		fail "no micro-kernel line for the tensorized schedule"
	if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
		for kt in "gemm_i8 gemm_4x16_i8 (AVX2 vpmaddwd, ymm)" \
		    "matmul_bf16 gemm_6x16_bf16 (AVX2 bf16 widened, FMA, ymm)"; do
			k=${kt%% *}
			"$TXC" bench "$abs_top_srcdir/stdlib/matmul.tx" --cpu=znver3 -k $k -D M=13 -D N=35 \
				-D K=19 --runs=1 >out.txt 2>err.txt || fail "$k exited $?"
			grep -qF "micro-kernel: ${kt#* }" out.txt || fail "$k: no line naming ${kt#* }"
			! grep -q MISMATCH out.txt || fail "$k disagrees"
		done
	fi
fi
# non-finite outputs: equal infinities (a maximum over no k is -inf) and
# NaNs in the same places (log of bench's random inputs, some negative)
# agree with the reference
cat >nonfinite.tx <<'TX'
kernel nf(N, K) {
  in  x: f32[N, K];
  out y: f32[N];
  out z: f32[N, K];
  y[i] = maximum(k < K) x[i, k];
  z[i, k] = log(x[i, k]) * 1e30;
}
schedule nf for cpu {
  y.split(i, 8) -> (io, ii);
  y.vectorize(ii);
  z.split(k, 4) -> (ko, ki);
  z.vectorize(ki);
}
TX
for k in 0 7; do
	"$TXC" bench nonfinite.tx -D N=37 -D K=$k --runs=1 >out.txt 2>err.txt ||
		fail "non-finite outputs with K=$k: txc bench exited $?"
	grep -q '^  default ' out.txt || fail "no row for the non-finite kernel (K=$k)"
	! grep -q MISMATCH out.txt || fail "equal non-finite outputs reported as a mismatch (K=$k)"
done
# sizes whose element count is past 64 bits: an error naming the tensor
# (exit 1), not a count wrapped to 0 and a crash
cat >copy.tx <<'TX'
kernel cp(N) {
  in  x: f32[N, N];
  out y: f32[N, N];
  y[i, j] = x[i, j];
}
TX
"$TXC" bench copy.tx -D N=4294967296 --runs=1 >out.txt 2>err.txt
rc=$?
[ $rc -eq 1 ] || fail "txc bench -D N=4294967296 exited $rc, not 1"
grep -q "the sizes give 'x' more elements than 64 bits count" err.txt ||
	fail "no message for the element count past 64 bits"
exit 0
