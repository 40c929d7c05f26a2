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
grep -q '(unscheduled)' out.txt || fail "no reference row"
for s in default serial; do
	grep -E "^  $s +[0-9.]+ ms +[0-9.]+ GFLOP/s +[0-9.e+-]+  \(median of 3\)\$" out.txt >/dev/null ||
		fail "no good row for schedule $s"
done
! grep -q MISMATCH out.txt || fail "a schedule disagrees with the reference"
! "$TXC" bench mm.tx -D M=4 -D N=4 >out.txt 2>err.txt || fail "a missing size was accepted"
grep -q "size 'K' needs a value" err.txt || fail "no message for the missing size"
exit 0
