#!/bin/sh
# fuzz-schedules.sh: random schedules for every tests/run kernel.
#
# For each tests/run/X.tx that has an X.run (an end-to-end test), schedgen
# writes about SCHEDGEN_COUNT / (number of kernels) random schedules, and
# each goes through txc:
#
#   - exit 1 with a diagnostic (file:line:col: error:) is fine for any
#     schedule, and required for those schedgen made illegal on purpose;
#   - exit 0 is a failure for an illegal one; otherwise the C output (and
#     the native object with libtxrt, when that path works) runs on two
#     size sets (a prime above every factor, clamped to the ranges X.run
#     gives diffcheck.sh with -c, and a random set) and must match the
#     unscheduled kernel, as in tests/run/diffcheck.sh;
#   - anything else (exit >= 2, a signal, a sanitizer report, exit 1
#     without a diagnostic) is a failure, and so is a compile over
#     FUZZ_TIME seconds (default 60) or, except under AddressSanitizer,
#     over FUZZ_MEM_KB of memory (default 1 GB): every schedule must
#     compile in bounded time and memory or be refused with a message.
#
# Every failure prints the schedule.  At the end a table counts the first
# diagnostics of "probably legal" schedules that txc rejected, to show
# which primitives lowering refuses most.
#
# Environment: TXC, CC, abs_top_srcdir, abs_top_builddir, SCHEDGEN_COUNT
# (default 1000), TXC_SEED (default 1), TXC_E2E_LLVM=0 (skip the LLVM
# path), TXC_KEEP=1 (keep the work folder), FUZZ_KERNELS='matmul blur'.
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
count=${SCHEDGEN_COUNT:-1000}
seed=${TXC_SEED:-1}
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${abs_top_builddir:-.}
schedgen=$builddir/tests/gen/schedgen
txcmp=$builddir/tests/tools/txcmp
for p in "$schedgen" "$txcmp"; do
	[ -x "$p" ] || { echo "fuzz-schedules.sh: $p not built (make check builds it)"; exit 99; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-fuzz.XXXXXX") || exit 99
if [ "${TXC_KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi

kernels=
for tx in "$srcdir"/tests/run/*.tx; do
	b=$(basename "$tx" .tx)
	[ -f "$srcdir/tests/run/$b.run" ] || continue
	# files that only schedule imported kernels (nchw8c.tx) need -k: skip
	grep -q '^kernel ' "$tx" || continue
	# files of several kernels (tensorize_vnni.tx) need -k for the
	# harness, which names one: their .run files check them
	[ "$(grep -c '^kernel ' "$tx")" -eq 1 ] || continue
	# schedgen reads one file without its imports: a file whose kernels
	# call imported kernels (calls.tx, tx(5) CALLS) does not pass its
	# front end; only imports of intrinsic tables are fine
	if grep '^import ' "$tx" | grep -vq '"intrinsics/' &&
	    ! "$schedgen" -n 0 -o "$work" "$tx" >/dev/null 2>&1; then
		continue
	fi
	# VTA tests fix their sizes per build (vtacheck.sh); tests/gen/
	# fuzz-vta-schedules.sh draws their schedules
	grep -q vtacheck.sh "$srcdir/tests/run/$b.run" && continue
	# constants (tx(5) CONSTANTS) name a file beside the test that its .run
	# writes; schedgen's copies live elsewhere
	grep -q '^ *const ' "$tx" && continue
	if [ -n "${FUZZ_KERNELS:-}" ]; then
		case " $FUZZ_KERNELS " in *" $b "*) ;; *) continue ;; esac
	fi
	kernels="$kernels $b"
done
nk=$(echo $kernels | wc -w)
# fewer schedules than kernels (.ci/run's sanitized run): that many
# kernels, spread over the list, one schedule each
if [ "$count" -gt 0 ] && [ "$count" -lt "$nk" ]; then
	kernels=$(echo $kernels | tr ' ' '\n' |
	    awk -v c="$count" -v n="$nk" 'int((NR - 1) * c / n) != int(NR * c / n)' | tr '\n' ' ')
	nk=$count
fi
[ "$nk" -gt 0 ] || { echo "fuzz-schedules.sh: no kernels"; exit 77; }
per=$(( (count + nk - 1) / nk ))

omp=no
echo 'int main(void){return 0;}' >"$work/omp.c"
$CC -fopenmp -o "$work/omp" "$work/omp.c" >/dev/null 2>&1 && omp=yes
txrt=$builddir/rt/.libs/libtxrt.a
# imports in the test files (tensorize.tx) resolve from the source stdlib
TXC_STDLIB=${TXC_STDLIB:-$srcdir/stdlib}
export TXC_STDLIB

fails=0 shown=0 total=0 accepted=0 rejected=0 rej_ok=0 runs=0 llvm_on=0
fail() { # MESSAGE [SCHEDULE-FILE [LOG]]
	fails=$((fails + 1))
	echo "$1" | sed -e 's/ at [A-Za-z_][A-Za-z0-9_]*=.*//' -e "s/'[^']*'/'_'/g" -e 's/internal compiler error ([^)]*)/ICE/' | cut -c1-150 >>"$work/failkinds"
	[ $shown -lt 8 ] || return 0
	shown=$((shown + 1))
	echo "FAIL: $1"
	if [ $# -ge 3 ] && [ -s "$3" ]; then head -n 12 "$3" | sed 's/^/    | /'; fi
	if [ $# -ge 2 ]; then sed -n '/^schedule .* as g for cpu/,$p' "$2" | sed 's/^/    /'; fi
}
has_diag() { grep -q ':[0-9]*:[0-9]*: error: ' "$1"; }
# txc under the time and memory limits: exit 124 past the time
fuzz_time=${FUZZ_TIME:-60}
fuzz_mem=${FUZZ_MEM_KB:-1048576}
grep -q __asan_init "$TXC" 2>/dev/null && fuzz_mem=unlimited
limited_txc() {
	(ulimit -v "$fuzz_mem" 2>/dev/null; exec timeout "$fuzz_time" "$TXC" "$@")
}
sanitizer() { grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' "$1"; }
cc_link() { # OUT ARGS...
	o=$1
	shift
	# shellcheck disable=SC2086
	$CC -O1 -o "$o" "$@" -lm >"$w/cc.log" 2>&1
}

# One kernel: build its reference, generate and check its schedules.
fuzz_one() { # KERNEL INDEX
	k=$1
	ki=$2
	tx=$srcdir/tests/run/$k.tx
	w=$work/$k
	mkdir -p "$w/g"
	caps=$(sed -n "s/.*-c '\([^']*\)'.*/\1/p" "$srcdir/tests/run/$k.run" | head -n 1)
	hargs=$(sed -n "s/.* -a '\([^']*\)'.*/\1/p" "$srcdir/tests/run/$k.run" | head -n 1)
	if ! "$TXC" --emit=harness -o "$w/h.c" "$tx" 2>"$w/err" ||
	    ! $CC -O1 -c -o "$w/h.o" "$w/h.c" 2>>"$w/err" ||
	    ! "$TXC" --no-schedule --emit=c -o "$w/ref.c" "$tx" 2>>"$w/err" ||
	    ! cc_link "$w/ref" "$w/ref.c" "$w/h.o"; then
		cat "$w/err" "$w/cc.log" 2>/dev/null | head -n 10
		fail "$k: cannot build the harness or the unscheduled reference"
		return
	fi
	llvm=no
	if [ "${TXC_E2E_LLVM:-1}" != 0 ] && [ -f "$txrt" ] &&
	    "$TXC" --no-schedule -o "$w/ref_l.o" "$tx" 2>/dev/null &&
	    $CC -O1 -DTXC_LLVM -c -o "$w/hl.o" "$w/h.c" 2>/dev/null; then
		llvm=yes
		llvm_on=$((llvm_on + 1))
	fi
	sizes=$("$w/ref" --params | sed -n 's/^sizes://p')
	sets=$(awk -v sizes="$sizes" -v caps="$caps" -v seed="$((seed * 7919 + ki))" '
	BEGIN {
		n = split(sizes, sz, " ")
		if (n == 0) { print " "; exit }
		for (i = 1; i <= n; i++) { lo[sz[i]] = 1; hi[sz[i]] = 24 }
		m = split(caps, cs, " ")
		for (i = 1; i <= m; i++) {
			split(cs[i], kv, "="); split(kv[2], rg, ":")
			lo[kv[1]] = rg[1] + 0; hi[kv[1]] = (rg[2] == "" ? rg[1] : rg[2]) + 0
		}
		s = ""
		for (i = 1; i <= n; i++) {
			v = 17; if (v > hi[sz[i]]) v = hi[sz[i]]
			while (v > 2 && v > lo[sz[i]] && (v % 2 == 0 || v % 3 == 0)) v--
			s = s sz[i] "=" v " "
		}
		print s
		srand(seed); s = ""
		for (i = 1; i <= n; i++) {
			r = rand(); v = lo[sz[i]] + int(rand() * (hi[sz[i]] - lo[sz[i]] + 1))
			if (r < 0.2) v = lo[sz[i]]
			s = s sz[i] "=" v " "
		}
		print s
	}')
	# and the first set again with NaN, +inf and -inf among the float
	# inputs (harness special=1): every schedule must agree with the
	# unscheduled kernel on them too (tx(5): a NaN propagates through max
	# and min, reductions included).  Not where a float becomes an integer
	# (a cast of NaN has no value).
	if [ -n "$sizes" ] && ! grep -qE '(^|[^A-Za-z0-9_])[iu](8|16|32|64)\(' "$tx"; then
		sets="$sets
$(echo "$sets" | head -n 1) special=1"
	fi
	# reference outputs, one per size set
	nset=0
	OLDIFS=$IFS
	IFS='
'
	for set in $sets; do
		IFS=$OLDIFS
		nset=$((nset + 1))
		# shellcheck disable=SC2086
		"$w/ref" $set $hargs seed=$nset out="$w/ref$nset.out" >"$w/run.log" 2>&1
		echo $? >"$w/ref$nset.rc"
		echo "$set" >"$w/set$nset"
	done
	IFS=$OLDIFS

	"$schedgen" -n "$per" -s "$((seed * 1000 + ki))" -o "$w/g" "$tx" || { fail "$k: schedgen failed"; return; }
	for g in "$w"/g/g*.tx; do
		total=$((total + 1))
		want=$(sed -n '1s|^// schedgen: expect ||p' "$g")
		limited_txc -s g --emit=c -o "$w/s.c" "$g" >"$w/txc.out" 2>"$w/txc.err"
		rc=$?
		if [ $rc -eq 124 ]; then
			fail "$k: txc ran over $fuzz_time seconds" "$g" "$w/txc.err"
			continue
		fi
		if grep -q 'fatal: out of memory' "$w/txc.err"; then
			fail "$k: txc ran out of memory under a limit of $fuzz_mem KB" "$g" "$w/txc.err"
			continue
		fi
		if sanitizer "$w/txc.err"; then
			fail "$k: txc reports a sanitizer error (exit $rc)" "$g" "$w/txc.err"
			continue
		fi
		if [ $rc -eq 1 ]; then
			if ! has_diag "$w/txc.err"; then
				fail "$k: txc exit 1 without a diagnostic" "$g" "$w/txc.err"
				continue
			fi
			rejected=$((rejected + 1))
			case $want in
			ok)
				rej_ok=$((rej_ok + 1))
				sed -n 's/^[^:]*:[0-9]*:[0-9]*: error: //p' "$w/txc.err" | head -n 1 |
				    sed "s/'[^']*'/'_'/g" >>"$work/reasons"
				;;
			esac
			continue
		fi
		if [ $rc -ne 0 ]; then
			fail "$k: txc crashed or failed internally (exit $rc): $(grep -m 1 -E 'error|internal|Sanitizer' "$w/txc.err" | head -c 200)" "$g" "$w/txc.err"
			continue
		fi
		case $want in
		error*)
			fail "$k: txc accepted a schedule that must be rejected (${want#error: })" "$g"
			continue
			;;
		esac
		accepted=$((accepted + 1))
		bins=
		if cc_link "$w/s" "$w/s.c" "$w/h.o"; then bins="s"
		else fail "$k: the C output does not compile" "$g" "$w/cc.log"; continue; fi
		if [ $omp = yes ] && grep -q '\.parallel(' "$g" && cc_link "$w/s_omp" -fopenmp "$w/s.c" "$w/h.o"; then
			bins="$bins s_omp"
		fi
		if [ $llvm = yes ]; then
			if ! limited_txc -s g -o "$w/s.o" "$g" 2>"$w/txc.err"; then
				fail "$k: txc -o X.o fails where --emit=c works" "$g" "$w/txc.err"
			elif cc_link "$w/s_l" "$w/hl.o" "$w/s.o" "$txrt" -lpthread -ldl; then
				bins="$bins s_l"
			else
				fail "$k: the object does not link with libtxrt" "$g" "$w/cc.log"
			fi
		fi
		i=0
		while [ $i -lt $nset ]; do
			i=$((i + 1))
			set=$(cat "$w/set$i")
			rrc=$(cat "$w/ref$i.rc")
			for b in $bins; do
				runs=$((runs + 1))
				# shellcheck disable=SC2086
				"$w/$b" $set $hargs seed=$i out="$w/o.out" poison=0x5a >"$w/run.log" 2>&1
				brc=$?
				if [ "$rrc" -ne 0 ]; then
					[ "$brc" -eq "$rrc" ] && continue
					fail "$k: $b exits $brc where the reference exits $rrc at $set" "$g" "$w/run.log"
					break 2
				fi
				if [ $brc -eq 12 ] || [ $brc -eq 13 ]; then
					grep -qE 'exact|shift_inward' "$g" && continue
				fi
				if [ $brc -ne 0 ]; then
					fail "$k: $b: harness exit $brc ($(head -n 1 "$w/run.log" | cut -c1-90)) at $set" "$g" "$w/run.log"
					break 2
				elif ! "$txcmp" "$w/ref$i.out" "$w/o.out" >"$w/cmp.log" 2>&1; then
					fail "$k: $b differs from the unscheduled kernel at $set" "$g" "$w/cmp.log"
					break 2
				fi
			done
		done
	done
}

# FUZZ_JOBS (default 2) background jobs share the kernels round-robin;
# each keeps its own counters and log, summed and printed at the end.
jobs=${FUZZ_JOBS:-2}
j=0
while [ $j -lt $jobs ]; do
	(
		ki=0
		for k in $kernels; do
			ki=$((ki + 1))
			[ $(((ki - 1) % jobs)) -eq $j ] && fuzz_one "$k" $ki
		done
		echo "$fails $total $accepted $rejected $rej_ok $runs $llvm_on" >"$work/job$j.cnt"
	) >"$work/job$j.log" 2>&1 &
	j=$((j + 1))
done
wait
j=0
while [ $j -lt $jobs ]; do
	cat "$work/job$j.log"
	[ -f "$work/job$j.cnt" ] || { echo "FAIL: fuzz job $j died"; fails=$((fails + 1)); }
	j=$((j + 1))
done
set -- $(cat "$work"/job*.cnt | awk '{ for (i = 1; i <= NF; i++) s[i] += $i } END { print s[1] + 0, s[2] + 0, s[3] + 0, s[4] + 0, s[5] + 0, s[6] + 0, s[7] + 0 }')
fails=$((fails + $1)) total=$2 accepted=$3 rejected=$4 rej_ok=$5 runs=$6 llvm_on=$7

if [ -s "$work/failkinds" ]; then
	echo "failures by kind (the first ones are shown above with their schedules):"
	sort "$work/failkinds" | uniq -c | sort -rn
fi
if [ -s "$work/reasons" ]; then
	echo "diagnostics for schedules schedgen thought legal (most frequent first):"
	sort "$work/reasons" | uniq -c | sort -rn | head -n 12
fi
echo "fuzz-schedules: $total schedules over $nk kernels (llvm on $llvm_on): $accepted accepted and run ($runs runs), $rejected rejected with a diagnostic ($rej_ok of them thought legal), $fails failures"
[ $fails -eq 0 ]
