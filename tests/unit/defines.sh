#!/bin/sh
# defines.sh: -D NAME=VALUE in txc bench, viz and tune (txc(1)): an
# integer VALUE is exact in all 64 bits (never rounded through a double),
# a size takes only an integer from 0 to 2^63-1, and a floating-point
# scalar parameter takes any number, in txc tune as in bench.
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
# 2^53 + 1 is no double: the one element left of N - (2^53 - 2) tells
cat >big.tx <<'TX'
kernel shifted(N) {
  in  x: f32[N - 9007199254740990];
  out y: f32[N - 9007199254740990];
  y[i] = x[i] * 2.0;
}
TX
"$TXC" bench big.tx -D N=9007199254740993 --count-only >out.txt 2>err.txt ||
	fail "bench --count-only exited $?"
grep -qx 'shifted: 3 flop' out.txt || fail "bench: 2^53+1 rounded"
"$TXC" bench big.tx -D N=9007199254740993 --runs=1 >out.txt 2>err.txt || fail "bench exited $?"
grep -q '^shifted: N=9007199254740993,' out.txt || fail "bench: the header's size is not exact"
cat >axpy.tx <<'TX'
kernel axpy(N, a: f32, s: i64) {
  in  x: f32[N];
  in  y: f32[N];
  out z: f32[N];
  z[i] = a * x[i] + y[i] + f32(s % 8);
}
schedule axpy as t for cpu {
  knob f in [4, 8];
  z.split(i, f) -> (io, ii);
  z.vectorize(ii);
}
TX
# sizes: an integer from 0 to 2^63-1, with the value as written
for v in 9223372036854775808 2.5 -1 1e3; do
	! "$TXC" bench axpy.tx -D N=$v -D a=1 -D s=1 >out.txt 2>err.txt || fail "bench took N=$v"
	grep -q "error: size 'N' must be an integer from 0 to 9223372036854775807 (txc bench -D N=$v)" err.txt ||
		fail "bench -D N=$v: no size message"
	! "$TXC" viz axpy.tx -D N=$v -o x.html >out.txt 2>err.txt || fail "viz took N=$v"
	grep -q "error: size 'N' must be an integer from 0 to 9223372036854775807 (txc viz -D N=$v)" err.txt ||
		fail "viz -D N=$v: no size message"
done
# the largest size is itself, not a double's 9.22337e+18 or a negative extent
! "$TXC" viz axpy.tx -D N=9223372036854775807 -o x.html >out.txt 2>err.txt || fail "viz took 2^63-1"
grep -q "size 'N' is 9223372036854775807: txc viz draws sizes up to" err.txt || fail "viz: 2^63-1 not exact"
! "$TXC" bench axpy.tx -D N=9223372036854775807 -D a=1 -D s=1 >out.txt 2>err.txt || fail "bench took 2^63-1"
grep -q "more bytes than 64 bits count" err.txt || fail "bench: 2^63-1 is no byte count error"
! grep -q -- '-9223372036854775808' err.txt || fail "bench: 2^63-1 wrapped"
# an integer scalar takes only an integer
! "$TXC" bench axpy.tx -D N=8 -D a=1 -D s=0.5 >out.txt 2>err.txt || fail "bench took s=0.5"
grep -q "scalar 's' has an integer type" err.txt || fail "bench -D s=0.5: no message"
# a floating-point scalar in txc tune, as in bench
"$TXC" bench axpy.tx -D N=1000 -D a=0.5 -D s=3 --runs=1 >out.txt 2>err.txt || fail "bench a=0.5 exited $?"
! grep -q MISMATCH out.txt || fail "bench a=0.5 disagrees"
"$TXC" tune axpy.tx -s t -D N=1000 -D a=0.5 -D s=9007199254740993 --trials=2 --samples=3 \
	>out.txt 2>err.txt || fail "tune -D a=0.5 exited $?"
# (whether a point is chosen or the default stays depends on timing)
grep -q '^2 trials, 0 illegal points skipped, 0 failed; ' err.txt out.txt ||
	fail "tune -D a=0.5: no summary"
! "$TXC" tune axpy.tx -s t -D N=1000 -D a=x --trials=2 >out.txt 2>err.txt || fail "tune took a=x"
grep -q "bad -D 'a=x'" err.txt || fail "tune -D a=x: no message"
exit 0
