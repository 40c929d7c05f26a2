#!/bin/sh
# auto_run.sh: the generated schedules of every tests/run kernel against
# the unscheduled kernel (issue 32's correctness bar).
#
# For each tests/run/X.tx whose X.run is one diffcheck.sh line, the cpu and
# cuda schedules txc generates for X's kernels (txc --print-auto-schedule,
# at no -D sizes: the representative ones) replace X's own schedules in a
# copy of X.tx, and diffcheck.sh runs on it with X.run's arguments: it builds each
# generated schedule as C and as a native object (cuda ones in libtxrt's
# GPU emulator) and compares it with the unscheduled kernel on size sets of
# 1, a prime above every factor, and random ones.  TXC_AUTO_STRICT=1 makes
# a generated schedule that does not lower an error, not a silent fallback
# to the naive nest.
#
# Each generated schedule's C is written by txc (an emitter error fails),
# but compiled and run only where there is no LLVM path, on one random size
# set besides 1 and the prime (diffcheck.sh's TXC_E2E_LIGHT): the C
# emitter is checked end to end by tests/run and fuzz-schedules.sh, and
# this file costs as much as tests/run does (AUTO_RUN_LIGHT=0: all of it).
#
# Environment: TXC, abs_top_srcdir, abs_top_builddir (as for diffcheck.sh);
# AUTO_KERNELS='matmul blur' to run a few; AUTO_RUN_EVERY=N every N-th file.
# Exit 0 pass, 1 fail.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_AUTO_STRICT=1
TXC_E2E_LIGHT=${AUTO_RUN_LIGHT:-1}
export TXC_AUTO_STRICT TXC_E2E_LIGHT
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-auto.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

# the copies import what the originals import, from the originals' folder
real=$TXC
{
	echo '#!/bin/sh'
	echo 'case "$1" in bench|tune|viz) exec "'"$real"'" "$@" ;; esac'
	echo 'exec "'"$real"'" -I "'"$srcdir/tests/run"'" "$@"'
} >"$work/txc"
chmod +x "$work/txc"
TXC=$work/txc
export TXC

fails=0 runs=0 nth=0
for run in "$srcdir"/tests/run/*.run; do
	b=$(basename "$run" .run)
	tx=$srcdir/tests/run/$b.tx
	[ -f "$tx" ] || continue
	# the diffcheck.sh line of a .run that is one (its size ranges and
	# sets); .run files that do more are left to their own tests
	args=$(sed -n 's/^exec \$SHELL \.\/diffcheck\.sh \(.*\) "\$TX"$/\1/p' "$run")
	[ -n "$args" ] || continue
	# AUTO_RUN_EVERY=N: every N-th file only (the sanitized CI run)
	nth=$((nth + 1))
	[ $(( (nth - 1) % ${AUTO_RUN_EVERY:-1} )) -eq 0 ] || continue
	grep -q '^kernel ' "$tx" || continue
	if [ -n "${AUTO_KERNELS:-}" ]; then
		case " $AUTO_KERNELS " in *" $b "*) ;; *) continue ;; esac
	fi
	# the kernels (imports resolved from the test's folder: -I), without
	# their hand-written schedules
	gen=$work/$b.tx
	awk '/^schedule /{skip=1} !skip{print} skip && /^}/{skip=0}' "$tx" >"$gen"
	if ! "$TXC" --print-auto-schedule "$tx" >>"$gen" 2>"$work/err" ||
	    ! "$TXC" --print-auto-schedule --target=cuda "$tx" >>"$gen" 2>>"$work/err"; then
		echo "FAIL: $b: txc --print-auto-schedule failed"
		cat "$work/err"
		fails=$((fails + 1))
		continue
	fi
	runs=$((runs + 1))
	if ! (cd "$srcdir/tests/run" && eval "\$SHELL ./diffcheck.sh $args \"\$gen\"") >"$work/log" 2>&1; then
		echo "FAIL: $b: a generated schedule differs from the unscheduled kernel"
		cat "$gen"
		tail -40 "$work/log"
		fails=$((fails + 1))
	else
		echo "ok: $b"
	fi
done
echo "auto_run.sh: $runs files, $fails failures"
[ "$fails" -eq 0 ]
