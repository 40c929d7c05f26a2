#!/bin/sh
# tune_model.sh: txc tune in a space larger than its budget: with the cost
# model (XGBoost, loaded at run time), its refits and a warm start from an
# earlier log at other sizes; with --model=none (random points).  Checks
# structure only (fixed seed, tiny sizes; no timings).  Skips (77) where
# libxgboost.so.0 does not load, after checking the message that says so.
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }

cat >mm.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}

schedule mm for cpu {
  knob ti in [1, 2, 4, 8, 16];
  knob tj in [4, 8, 16, 32];
  knob tk in [1, 2, 4, 8];
  knob order in [a, b, c];
  knob p in [io, ko];
  C.tile(i, j, ti, tj) -> (io, jo, ii, ji);
  C.split(k, tk) -> (ko, ki);
  when (order == a) { C.reorder(io, jo, ko, ii, ki, ji); }
  when (order == b) { C.reorder(io, jo, ko, ki, ii, ji); }
  when (order == c) { C.reorder(io, ko, jo, ki, ii, ji); }
  when (tj >= 8) { C.vectorize(ji); }
  C.parallel(p);
}
TX
opts="--trials=24 --seed=5 --samples=3 --min-sample-ms=0.02 --top=1 --threads=1"
# shellcheck disable=SC2086
"$TXC" tune mm.tx -D M=13 -D N=21 -D K=9 $opts --model=none --log=none.jsonl >out.txt 2>err.txt ||
	fail "txc tune --model=none exited $?"
grep -q '^tuning mm .*: 480 knob points, random points' out.txt || fail "no header"
grep -q '^model: none (--model=none): random points' out.txt || fail "no model line"
[ "$(grep -c '"phase":"search"' none.jsonl)" -ge 25 ] || fail "fewer than 25 search records"

# shellcheck disable=SC2086
"$TXC" tune mm.tx -D M=13 -D N=21 -D K=9 $opts --log=log.jsonl >out.txt 2>err.txt ||
	fail "txc tune exited $?"
if grep -q '^model: none, XGBoost is not available (.*libxgboost-dev' out.txt; then
	# shellcheck disable=SC2086
	"$TXC" tune mm.tx -D M=13 -D N=21 -D K=9 $opts --model=xgboost >out.txt 2>err.txt &&
		fail "--model=xgboost without XGBoost succeeded"
	grep -q "cannot load XGBoost" err.txt || fail "no message for --model=xgboost"
	echo "SKIP: libxgboost.so.0 does not load (libxgboost-dev)"
	exit 77
fi
grep -q '^model: XGBoost (libxgboost.so.0, rank:pairwise)' out.txt || fail "no model line"
grep -q '^the model was fitted [1-9][0-9]* times' out.txt || fail "the model was never fitted"
# illegal points (p=ko: a reduction loop made parallel) are proposed no more
# than they are found; every other record is a measurement
n=$(grep -c '"phase":"search"' log.jsonl)
[ "$n" -ge 25 ] || fail "fewer than 25 search records ($n)"
[ "$(grep '"phase":"search"' log.jsonl | grep -c '"error":null')" -ge 25 ] ||
	fail "fewer than 25 measured points"

# a warm start from the log, at other sizes (another task of the template)
# shellcheck disable=SC2086
"$TXC" tune mm.tx -D M=24 -D N=17 -D K=5 $opts --log=log.jsonl >out.txt 2>err.txt ||
	fail "the warm-started run exited $?"
grep -q "^model: warm-started from [0-9]* records of log.jsonl" out.txt ||
	fail "no warm start"
"$TXC" --check --tuning-log=log.jsonl mm.tx -D M=24 -D N=17 -D K=5 >out.txt 2>err.txt ||
	fail "the log does not read back"
[ ! -s err.txt ] || fail "the second run's records do not match its sizes"
exit 0
