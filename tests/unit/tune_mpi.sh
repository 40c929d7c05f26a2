#!/bin/sh
# tune_mpi.sh: `mpirun -n 3 txc tune --mpi` on one machine: rank 0
# searches, ranks 1 and 2 measure; the run gives the same kind of log as a
# run alone (one record per point, illegal points recorded as such, a
# candidate that crashes a rank's worker recorded as failed and the run
# going on) and -o writes a schedule that compiles and matches.  Skips
# (77) where txc was built without MPI (./configure --with-mpi) or mpirun
# is missing.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }

cp "$abs_top_srcdir/tests/tune/mm_small.tx" mm.tx || exit 99
"$TXC" tune --mpi mm.tx -D M=4 -D N=4 -D K=4 >out.txt 2>err.txt
if grep -q "built without MPI" err.txt; then
	echo "SKIP: txc was built without MPI (./configure --with-mpi)"
	exit 77
fi
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (Debian: mpich)"; exit 77; }
grep -q "needs 2 ranks or more" err.txt || fail "--mpi on one rank is not refused"

sizes="-D M=19 -D N=23 -D K=7"
opts="--seed=3 --samples=3 --min-sample-ms=0.02 --top=2 --threads=1 --timeout=20"
# shellcheck disable=SC2086
TXC_TUNE_CRASH_AT="ti=8 tj=8 p=io" mpirun -n 3 "$TXC" tune --mpi mm.tx $sizes $opts \
	--trials=20 --log=log.jsonl -o best.tx >out.txt 2>err.txt || fail "mpirun exited $?"
grep -q '^tuning mm (schedule default of mm.tx): 12 knob points, every point' out.txt ||
	fail "no header line (or more than one)"
[ "$(grep -c '^tuning mm' out.txt)" = 1 ] || fail "a measuring rank printed a header"
grep -q '6 trials, 6 illegal points skipped, 1 failed' out.txt || fail "wrong trial counts"
[ "$(grep -c '"phase":"search"' log.jsonl)" = 12 ] || fail "not one search record per point"
[ "$(grep -c '"error":"illegal: ' log.jsonl)" = 6 ] || fail "illegal points not recorded"
grep -q '"knobs":{"ti":"8","tj":"8","p":"io"}.*"error":"crash: ' log.jsonl ||
	fail "the crash is not recorded"
[ "$(grep -c '"phase":"best"' log.jsonl)" = 1 ] || fail "not one winner record"
"$TXC" --check --tuning-log=log.jsonl mm.tx $sizes >out.txt 2>err.txt ||
	fail "the log does not read back"
# shellcheck disable=SC2086
"$TXC" bench best.tx -k mm -s tuned $sizes --runs=1 --warmup=0 >out.txt 2>err.txt ||
	fail "best.tx does not compile or match"
exit 0
