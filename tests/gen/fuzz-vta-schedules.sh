#!/bin/sh
# fuzz-vta-schedules.sh: random VTA schedules of the packed matmul
# (tests/run/vta_matmul.tx, gemm) and convolution (tests/run/vta_conv.tx,
# conv) in libtxrt's VTA simulator, against the CPU.
#
# tests/gen/vtagen writes SCHEDGEN_VTA_COUNT schedules in all (half each),
# each with the sizes to compile it with.  Each goes, with the kernel (its
# file's lines before the first `schedule`), through `txc -s g
# --target=vta -D ...`:
#
#   - exit 1 with a diagnostic (file:line:col: error:) that says a buffer
#     "overflows" (a tile too large for inp, wgt or acc) is counted apart;
#   - any other diagnostic, exit 1 without one, exit >= 2 or a signal is a
#     failure: vtagen only writes legal schedules;
#   - otherwise the object is linked with a harness from `txc --emit=harness`
#     (the same -D) and libtxrt, run with TXRT_VTA_INTERLEAVINGS=3 (every
#     simulator check on, and two more random interleavings of the modules
#     that must give the same result), and its outputs must equal those of
#     the unscheduled kernel on the CPU (txc --no-schedule, same harness)
#     exactly (txcmp).
#
# Every failure prints the schedule with its sizes; the work folder keeps
# a reproducer of each (fail-KERNEL-I.tx, its first line the -D flags).
#
# Environment: TXC, CC, abs_top_srcdir, abs_top_builddir,
# SCHEDGEN_VTA_COUNT (default 40), TXC_SEED (default 1), TXC_KEEP=1 (keep
# the work folder), FUZZ_JOBS (default 2).
# Exit 0 pass, 1 fail, 77 skip (no libtxrt built).
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
count=${SCHEDGEN_VTA_COUNT:-40}
seed=${TXC_SEED:-1}
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${abs_top_builddir:-.}
vtagen=$builddir/tests/gen/vtagen
txcmp=$builddir/tests/tools/txcmp
for p in "$vtagen" "$txcmp"; do
	[ -x "$p" ] || { echo "fuzz-vta-schedules.sh: $p not built (make check builds it)"; exit 99; }
done
txrt=$builddir/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "fuzz-vta-schedules.sh: $txrt not built: skipped"; exit 77; }
# intrinsics/vta.tx resolves from the source stdlib
TXC_STDLIB=${TXC_STDLIB:-$srcdir/stdlib}
export TXC_STDLIB
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout 60"

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-vtafuzz.XXXXXX") || exit 99
if [ "${TXC_KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi

ngemm=$(((count + 1) / 2))
nconv=$((count / 2))
for k in gemm conv; do
	case $k in
	gemm) tx=$srcdir/tests/run/vta_matmul.tx n=$ngemm ;;
	*) tx=$srcdir/tests/run/vta_conv.tx n=$nconv ;;
	esac
	# the kernel without its own schedules
	sed '/^[[:space:]]*schedule[[:space:]]/,$d' "$tx" >"$work/$k.tx"
	"$vtagen" -n "$n" -s "$seed" -k $k -o "$work/$k" || { echo "FAIL: vtagen -k $k failed"; exit 1; }
done

fails=0 shown=0 total=0 ran=0 matched=0 overflow=0
fail() { # KERNEL I MESSAGE [LOG]
	fails=$((fails + 1))
	# its kind, for the table at the end: names, numbers and the
	# instructions a simulator message quotes made anonymous
	echo "$3" | sed -e 's/ at [A-Z][A-Z]*=.*//' -e "s/VTA's/VTA/g" -e "s/'[^']*'/'_'/g" \
	    -e 's/\[[0-9]*,[0-9]*)/[_]/g' -e 's/([^()]*([^()]*)[^()]*)/(_)/g' \
	    -e 's/([^()]*)/(_)/g' -e 's/[0-9][0-9]*/N/g' | cut -c1-200 >>"$work/failkinds"
	{
		echo "// $(sed -n '1s|^// sizes: ||p' "$work/$1/$2.sched" | sed 's/\([^ ]*\)/-D \1/g')"
		cat "$w/g.tx"
	} >"$work/fail-$1-$2.tx"
	[ $shown -lt 8 ] || return 0
	shown=$((shown + 1))
	echo "FAIL: $1 schedule $2 (seed $seed): $3"
	if [ $# -ge 4 ] && [ -s "$4" ]; then head -n 12 "$4" | sed 's/^/    | /'; fi
	sed 's/^/    /' "$work/$1/$2.sched"
}
has_diag() { grep -q ':[0-9]*:[0-9]*: error: ' "$1"; }

fuzz_one() { # KERNEL I
	k=$1
	i=$2
	s=$work/$k/$i.sched
	sizes=$(sed -n '1s|^// sizes: ||p' "$s")
	defs=$(echo "$sizes" | sed 's/\([^ ]*\)/-D \1/g')
	cat "$work/$k.tx" "$s" >"$w/g.tx"
	total=$((total + 1))
	# shellcheck disable=SC2086
	"$TXC" -s g --target=vta $defs -o "$w/s.o" "$w/g.tx" >"$w/txc.out" 2>"$w/txc.err"
	rc=$?
	if [ $rc -eq 1 ] && has_diag "$w/txc.err"; then
		if grep -q ': error: .*overflows' "$w/txc.err"; then
			overflow=$((overflow + 1))
		else
			fail "$k" "$i" "txc rejects it: $(sed -n 's/^[^:]*:[0-9]*:[0-9]*: error: //p' "$w/txc.err" | head -n 1 | cut -c1-160)" "$w/txc.err"
		fi
		return
	fi
	if [ $rc -ne 0 ]; then
		fail "$k" "$i" "txc exits $rc$(has_diag "$w/txc.err" || echo ' without a diagnostic')" "$w/txc.err"
		return
	fi
	# the harness and the CPU reference for these sizes (shared by the
	# job's schedules that drew the same ones, with the same inputs: the
	# harness seed is the first one's index)
	key=$(echo "$k $sizes" | tr ' =' '_-')
	r=$w/ref/$key
	if [ ! -f "$r.rc" ]; then
		mkdir -p "$w/ref"
		echo $((i + 1)) >"$r.seed"
		# shellcheck disable=SC2086
		if "$TXC" $defs --emit=harness -o "$r.c" "$w/g.tx" 2>"$r.log" &&
		    $CC -O1 -DTXC_LLVM -c -o "$r.h.o" "$r.c" >>"$r.log" 2>&1 &&
		    "$TXC" --no-schedule $defs -o "$r.ref.o" "$w/g.tx" >>"$r.log" 2>&1 &&
		    $CC -o "$r.ref" "$r.h.o" "$r.ref.o" "$txrt" -lm -lpthread -ldl >>"$r.log" 2>&1 &&
		    "$r.ref" $sizes seed="$(cat "$r.seed")" out="$r.out" >>"$r.log" 2>&1; then
			echo 0 >"$r.rc"
		else
			echo 1 >"$r.rc"
		fi
	fi
	if [ "$(cat "$r.rc")" != 0 ]; then
		fail "$k" "$i" "the harness or the CPU reference at $sizes does not build or run" "$r.log"
		return
	fi
	if ! $CC -o "$w/s" "$r.h.o" "$w/s.o" "$txrt" -lm -lpthread -ldl >"$w/cc.log" 2>&1; then
		fail "$k" "$i" "the object does not link with libtxrt" "$w/cc.log"
		return
	fi
	ran=$((ran + 1))
	# shellcheck disable=SC2086
	TXRT_VTA_INTERLEAVINGS=3 $tmo "$w/s" $sizes seed="$(cat "$r.seed")" \
	    checkargs=1 out="$w/s.out" >"$w/run.log" 2>&1
	brc=$?
	if [ $brc -eq 124 ] && [ -n "$tmo" ]; then
		fail "$k" "$i" "the simulated run hangs (60 s)" "$w/run.log"
		return
	fi
	if [ $brc -ne 0 ]; then
		fail "$k" "$i" "the simulated run exits $brc: $(head -n 1 "$w/run.log" | sed 's/^harness: //')" "$w/run.log"
		return
	fi
	if ! "$txcmp" "$r.out" "$w/s.out" >"$w/cmp.log" 2>&1; then
		fail "$k" "$i" "differs from the CPU at $sizes" "$w/cmp.log"
		return
	fi
	matched=$((matched + 1))
}

# FUZZ_JOBS (default 2) background jobs share the schedules round-robin;
# each keeps its own counters and log, summed and printed at the end.
jobs=${FUZZ_JOBS:-2}
j=0
while [ $j -lt "$jobs" ]; do
	(
		w=$work/job$j
		mkdir -p "$w"
		x=0
		for k in gemm conv; do
			n=$ngemm
			[ $k = gemm ] || n=$nconv
			i=0
			while [ $i -lt "$n" ]; do
				[ $((x % jobs)) -eq $j ] && fuzz_one "$k" "$i"
				i=$((i + 1))
				x=$((x + 1))
			done
		done
		echo "$fails $total $ran $matched $overflow" >"$work/job$j.cnt"
	) >"$work/job$j.log" 2>&1 &
	j=$((j + 1))
done
wait
j=0
while [ $j -lt "$jobs" ]; do
	cat "$work/job$j.log"
	[ -f "$work/job$j.cnt" ] || { echo "FAIL: fuzz job $j died"; fails=$((fails + 1)); }
	j=$((j + 1))
done
# shellcheck disable=SC2046
set -- $(cat "$work"/job*.cnt | awk '{ for (i = 1; i <= NF; i++) s[i] += $i } END { print s[1] + 0, s[2] + 0, s[3] + 0, s[4] + 0, s[5] + 0 }')
fails=$((fails + $1)) total=$2 ran=$3 matched=$4 overflow=$5
if [ -s "$work/failkinds" ]; then
	echo "failures by kind (the first ones are shown above with their schedules):"
	sort "$work/failkinds" | uniq -c | sort -rn
fi
[ $fails -eq 0 ] || [ "${TXC_KEEP:-0}" = 1 ] || echo "(TXC_KEEP=1 keeps the work folder with a reproducer of each failure)"
echo "fuzz-vta-schedules: $total schedules (seed $seed): $ran ran in the simulator, $matched matched the CPU, $overflow rejected for an SRAM overflow, $fails failures"
[ $fails -eq 0 ]
