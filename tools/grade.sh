#!/bin/sh
# grade.sh: grades a student's schedule for a tutorial exercise.
#
#     tools/grade.sh [--no-speed] EXERCISE.tx SOLUTION.tx [-s SCHEDULE]
#
# EXERCISE.tx (examples/tutorial/exercises/) holds a kernel, an empty
# schedule and the exercise's rules in `// grade:` comment lines:
#
#     // grade: kernel NAME          the kernel graded (default: the first)
#     // grade: sizes H=2048 W=2048  the sizes the speed is measured at
#     // grade: check H=37 W=45      a size set the result is checked at
#                                    (any number of lines; default: every
#                                    size 1, then every size 33)
#     // grade: speedup 3            at least 3x the unscheduled kernel
#     // grade: forbid parallel ...  primitives the schedule may not use
#     // grade: require compute_at   primitives it must use
#     // grade: fused STAGE ...      stages not computed in a loop nest of
#                                    their own (compute_at or inline)
#
# SOLUTION.tx is the student's copy with a schedule (the unnamed cpu
# schedule, or -s SCHEDULE).  The grader
#   1. compiles it with txc (an illegal schedule is txc's diagnostic);
#   2. checks that the kernel's C prototype is the exercise's, then runs
#      the solution and the exercise's unscheduled kernel on the same
#      seeded random inputs at each check size and compares the outputs
#      (tests/tools/txcmp: exact for integers, a relative tolerance for
#      floats), so a changed algorithm fails;
#   3. checks the forbidden, required and fused rules (the primitives
#      written in the schedule block; the stages' places in the loop nest
#      that `txc --print-loops` shows);
#   4. measures the solution and the kernel with an empty schedule in one
#      `txc bench` run at the speed sizes, each the median of its runs
#      (--no-speed skips this, for tests and slow machines).
# Each rule prints a line, `ok` or `FAIL` with the reason, then the grade:
# `grade: pass` (exit 0) or `grade: fail` (exit 1); exit 2 on bad usage or
# a missing tool.  Environment: TXC (default: the build tree's txc), CC,
# TXCMP, TXRT (libtxrt.a), GRADE_SEED (default 1).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
TXC=${TXC:-$srcdir/txc}
CC=${CC:-cc}
TXCMP=${TXCMP:-$srcdir/tests/tools/txcmp}
TXRT=${TXRT:-$srcdir/rt/.libs/libtxrt.a}
seed=${GRADE_SEED:-1}

usage() { echo "usage: grade.sh [--no-speed] EXERCISE.tx SOLUTION.tx [-s SCHEDULE]" >&2; exit 2; }
speed=1
[ "${1:-}" = --no-speed ] && { speed=0; shift; }
[ $# -eq 2 ] || [ $# -eq 4 ] || usage
ex=$1 sol=$2 sched=
if [ $# -eq 4 ]; then
	[ "$3" = -s ] || usage
	sched=$4
fi
for f in "$ex" "$sol"; do
	[ -f "$f" ] || { echo "grade.sh: no file $f" >&2; exit 2; }
done
[ -x "$TXC" ] || { echo "grade.sh: no txc at $TXC (build it, or set TXC)" >&2; exit 2; }
[ -x "$TXCMP" ] || { echo "grade.sh: no txcmp at $TXCMP (make builds it, or set TXCMP)" >&2; exit 2; }
[ -f "$TXRT" ] || { echo "grade.sh: no libtxrt at $TXRT (set TXRT)" >&2; exit 2; }

# ---- the rules ---------------------------------------------------------
rules() { sed -n 's|^[[:space:]]*//[[:space:]]*grade:[[:space:]]*||p' "$ex"; }
rule() { rules | sed -n "s/^$1[[:space:]]\{1,\}//p"; }
kernel=$(rule kernel | head -n 1)
[ -n "$kernel" ] ||
	kernel=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$ex" | head -n 1)
[ -n "$kernel" ] || { echo "grade.sh: $ex has no kernel" >&2; exit 2; }
sizes=$(rule sizes | head -n 1)
need=$(rule speedup | head -n 1)
forbid=$(rule forbid | tr '\n' ' ')
require=$(rule require | tr '\n' ' ')
fused=$(rule fused | tr '\n' ' ')
checks=$(rule check)

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-grade.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "  ok    $*"; }
bad() { echo "  FAIL  $*"; fails=$((fails + 1)); }
echo "grading $sol for $ex (kernel $kernel${sched:+, schedule $sched})"

# ---- 1. it compiles --------------------------------------------------------
sflag=
[ -n "$sched" ] && sflag="-s $sched"
# shellcheck disable=SC2086
if ! "$TXC" -k "$kernel" $sflag -o "$work/sol.o" -H "$work/sol.h" "$sol" 2>"$work/txc.err"; then
	bad "txc does not compile the solution:"
	sed 's/^/        /' "$work/txc.err"
	echo "grade: fail"
	exit 1
fi
ok "compiles"

# ---- 2. the same kernel, the same results ----------------------------------------
"$TXC" -k "$kernel" --no-schedule -o "$work/ref.o" -H "$work/ref.h" "$ex" 2>"$work/txc.err" ||
	{ echo "grade.sh: txc rejects the exercise itself:" >&2; cat "$work/txc.err" >&2; exit 2; }
proto() { grep "^int $kernel(" "$1"; }
if [ "$(proto "$work/sol.h")" != "$(proto "$work/ref.h")" ]; then
	bad "the kernel's parameters changed: $(proto "$work/sol.h") (the exercise: $(proto "$work/ref.h"))"
	echo "grade: fail"
	exit 1
fi
"$TXC" -k "$kernel" --emit=harness -o "$work/h.c" "$ex" &&
	$CC -O1 -DTXC_LLVM -c -o "$work/h.o" "$work/h.c" >"$work/cc.log" 2>&1 &&
	$CC -o "$work/ref" "$work/h.o" "$work/ref.o" "$TXRT" -lpthread -ldl -lm >>"$work/cc.log" 2>&1 &&
	$CC -o "$work/sol" "$work/h.o" "$work/sol.o" "$TXRT" -lpthread -ldl -lm >>"$work/cc.log" 2>&1 ||
	{ echo "grade.sh: the check programs do not build:" >&2; cat "$work/cc.log" >&2; exit 2; }
if [ -z "$checks" ]; then
	names=$("$work/ref" --params | sed -n 's/^sizes://p')
	one= big=
	for n in $names; do one="$one $n=1"; big="$big $n=33"; done
	checks="$one
$big"
fi
same=1
echo "$checks" | {
	while read -r set; do
		[ -n "$set" ] || continue
		# shellcheck disable=SC2086
		"$work/ref" $set seed="$seed" out="$work/ref.out" >/dev/null 2>"$work/run.err" ||
			{ echo "  FAIL  the exercise's kernel fails at $set: $(cat "$work/run.err")"; exit 1; }
		# shellcheck disable=SC2086
		if ! "$work/sol" $set seed="$seed" out="$work/sol.out" >/dev/null 2>"$work/run.err"; then
			echo "  FAIL  the solution fails at $set: $(cat "$work/run.err")"
			exit 1
		fi
		if ! "$TXCMP" "$work/ref.out" "$work/sol.out" >"$work/cmp.log" 2>&1; then
			echo "  FAIL  wrong result at $set (against the exercise's unscheduled kernel):"
			sed -n '1,5s/^/        /p' "$work/cmp.log"
			exit 1
		fi
	done
	exit 0
} || same=0
if [ $same = 1 ]; then
	ok "same results as the exercise's kernel ($(echo "$checks" | grep -c .) size sets)"
else
	fails=$((fails + 1))
fi

# ---- 3. the rules on primitives and fusion -----------------------------------------
# the schedule block's text, comments removed
awk -v k="$kernel" -v s="$sched" '
	{ sub(/\/\/.*/, "") }
	!inside && $1 == "schedule" && $2 == k {
		named = ($3 == "as")
		if ((s == "" && !named && $3 == "for" && $4 == "cpu") || (s != "" && named && $4 == s))
			inside = 1
	}
	inside { print; n += gsub(/{/, "{"); n -= gsub(/}/, "}"); if (n == 0 && /}/) exit }
' "$sol" >"$work/sched.txt"
for p in $forbid; do
	if grep -q "\.$p[[:space:]]*(" "$work/sched.txt"; then
		bad "uses $p, which this exercise forbids"
	else
		ok "does not use $p"
	fi
done
for p in $require; do
	if grep -q "\.$p[[:space:]]*(" "$work/sched.txt"; then
		ok "uses $p"
	else
		bad "does not use $p, which this exercise requires"
	fi
done
if [ -n "$fused" ]; then
	dflags=
	for s in ${sizes:-$(echo "$checks" | head -n 1)}; do dflags="$dflags -D $s"; done
	# shellcheck disable=SC2086
	"$TXC" -k "$kernel" $sflag --print-loops $dflags "$sol" >"$work/loops.txt" 2>&1 ||
		{ bad "txc --print-loops fails"; cat "$work/loops.txt"; }
	for st in $fused; do
		# fused: its produce is inside a loop (the nearest enclosing lines,
		# by indentation, include a for, parallel, ... line); inlined: none
		where=$(awk -v st="$st" '
			{ match($0, /^ */); ind[NR] = RLENGTH; txt[NR] = substr($0, RLENGTH + 1) }
			txt[NR] == "produce " st " {" {
				m = ind[NR]; loop = 0
				for (i = NR - 1; i >= 1; i--)
					if (ind[i] < m && txt[i] ~ /\{$/) {
						m = ind[i]
						if (txt[i] ~ /^(for|parallel|vectorized|unrolled|vthread|gpu_block|gpu_thread)[.xyz]* \(/)
							loop = 1
					}
				print loop ? "fused" : "root"
				exit
			}' "$work/loops.txt")
		if [ "$where" = root ]; then
			bad "$st is computed in a loop nest of its own (compute it at a loop of its consumer, or inline it)"
		else
			how="computed inside its consumer's loops"
			[ -z "$where" ] && how="inlined"
			ok "$st is fused into its consumer ($how)"
		fi
	done
fi

# ---- 4. speed ----------------------------------------------------------------
# The solution beside an empty schedule of the same kernel (the loop nest
# with no schedule), both timed the same way in one run of txc bench.
if [ -n "$need" ] && [ $speed = 1 ]; then
	dflags=
	for s in $sizes; do dflags="$dflags -D $s"; done
	cp "$sol" "$work/timed.tx"
	printf '\nschedule %s as grade_baseline for cpu {\n}\n' "$kernel" >>"$work/timed.tx"
	row=${sched:-default}
	# shellcheck disable=SC2086
	if ! "$TXC" bench -k "$kernel" --schedules=grade_baseline,$row $dflags "$work/timed.tx" \
	    >"$work/bench.txt" 2>&1; then
		bad "txc bench fails:"
		sed 's/^/        /' "$work/bench.txt"
	else
		t0=$(awk '$1 == "grade_baseline" { print $2 }' "$work/bench.txt")
		t1=$(awk -v r="$row" '$1 == r { print $2 }' "$work/bench.txt")
		x=$(awk -v a="$t0" -v b="$t1" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print 0 }')
		if awk -v x="$x" -v n="$need" 'BEGIN { exit !(x >= n) }'; then
			ok "${x}x faster than the unscheduled kernel at $sizes (needs ${need}x; $t1 ms against $t0 ms)"
		else
			bad "${x}x faster than the unscheduled kernel at $sizes: needs ${need}x ($t1 ms against $t0 ms)"
		fi
	fi
elif [ -n "$need" ]; then
	echo "  --    speed not measured (--no-speed; the exercise needs ${need}x)"
fi

if [ $fails -eq 0 ]; then
	echo "grade: pass"
	exit 0
fi
echo "grade: fail ($fails rule(s) broken)"
exit 1
