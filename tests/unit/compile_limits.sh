#!/bin/sh
# compile_limits.sh: schedules that once made lowering blow up compile in
# seconds and well under a gigabyte (lower/lin.h: the normal form and the
# prover share one budget of work per question, nested questions
# included, and give up soundly past it).  tests/run/borders.tx's
# fuzz_seed5 (issue 36: minutes and gigabytes, "fatal: out of memory"
# under 4 GB) compiles to C and to an object under a 60-second and (not
# under AddressSanitizer, which reserves terabytes of address space) a
# 1 GB limit, and in under 10 seconds of wall time; then the schedule
# fuzzer at seed 5 on the borders kernel, whose compiles fail past 60 s or
# 1 GB (tests/gen/fuzz-schedules.sh, FUZZ_TIME and FUZZ_MEM_KB).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; head -n 20 "$tmp/err" 2>/dev/null; exit 1; }
tx=$abs_top_srcdir/tests/run/borders.tx
limit_mem=
grep -q __asan_init "$TXC" 2>/dev/null || limit_mem="ulimit -v 1048576;"
for emit in c obj; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	sh -c "$limit_mem exec timeout 60 \"\$0\" -k edgeblur -s fuzz_seed5 --emit=$emit -o \"\$1/out\" \"\$2\"" \
	    "$TXC" "$tmp" "$tx" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 124 ] && fail "--emit=$emit: over 60 seconds"
	grep -q "out of memory" "$tmp/err" && fail "--emit=$emit: over 1 GB"
	[ $rc -eq 0 ] || fail "--emit=$emit: exit $rc"
	secs=$(( $(date +%s) - start ))
	[ "$limit_mem" = "" ] || [ $secs -le 10 ] || fail "--emit=$emit: $secs seconds"
done
if [ -x "${abs_top_builddir:-.}/tests/gen/schedgen" ]; then
	FUZZ_KERNELS=borders TXC_SEED=5 SCHEDGEN_COUNT=17 \
	    sh "$abs_top_srcdir/tests/gen/fuzz-schedules.sh" >"$tmp/err" 2>&1 ||
		fail "the schedule fuzzer at seed 5 on borders"
fi
exit 0
