#!/bin/sh
# bench_ops.sh: `txc bench --count-only` counts the kernels whose count
# once was unknown or 0 (txc(1), "How GFLOP/s is counted"): a reduction
# over a range that depends on a pure axis (the sum of its extents, exact,
# in closed form or point by point), an update definition (its value once
# per point of its domain) and a tuple reduction (each output's combined
# value once per point of the ranges).
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
count() { # expected file args...
	want=$1; shift
	"$TXC" bench "$@" --count-only >out.txt 2>err.txt || fail "$* exited $?"
	grep -qx "$want" out.txt || fail "$*: expected '$want'"
}
cat >tri.tx <<'TX'
kernel tri(N) {
  in  a: f32[N, N];
  out y: f32[N];
  y[i] = sum(k <= i) a[i, k];
}
TX
# N*(N+1)/2 additions, exact at 10^8 (the closed form: no 10^8 visits)
count 'tri: 500500 flop' tri.tx -D N=1000
count 'tri: 5000000050000000 flop' tri.tx -D N=100000000
count 'tri: 0 flop' tri.tx -D N=0
# windows clipped by min and max (visited point by point), two ranges, a
# range over two pure axes, a lower bound in a pure axis:
#   y 44 points (3 4 5 5 5 5 5 5 4 3), 1 flop each
#   t sum over i, j of (j + 1) * i = 55 * 45 points, 2 flop each
#   u sum over i of N - i - 1 = 45, v sum over j of (j + 1)(j + 2)/2 = 220
cat >win.tx <<'TX'
kernel win(N, R) {
  in  a: f32[N];
  out y: f32[N];
  out t: f32[N, N];
  out u: f32[N];
  out v: f32[N, N];
  y[i] = sum(max(i - R, 0) <= k <= min(i + R, N - 1)) a[k];
  t[i, j] = sum(k <= j, l < i) a[k] * a[l];
  u[i] = sum(i + 1 <= k < N) a[k];
  v[i, j] = sum(i <= k < j + 1) a[k];
}
TX
count 'win: 5259 flop' win.tx -D N=10 -D R=2
# an update: one addition per step (the index's clamp is addressing)
count 'histogram: 1000000 op' "$abs_top_srcdir/examples/histogram.tx" -D N=1000000 -D B=256
# a tuple reduction: big's max (1), s1's + (1), s2's * and + (2) over
# N*M points, g's max and + (2) over N*3*M, the indices' selects 0
count 'tup: 700 op' "$abs_top_srcdir/tests/run/tuple.tx" -D N=10 -D M=7
exit 0
