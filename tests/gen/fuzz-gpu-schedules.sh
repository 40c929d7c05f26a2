#!/bin/sh
# fuzz-gpu-schedules.sh: random cuda schedules for every tests/run kernel.
#
# For each tests/run/X.tx that has an X.run (an end-to-end test), `schedgen
# -t cuda` writes about SCHEDGEN_GPU_COUNT / (number of kernels) random
# GPU schedules (`schedule K as g for cuda {...}`), and each goes through
# `txc --target=cuda -o X.o`:
#
#   - exit 1 with a diagnostic (file:line:col: error:) is fine for any
#     schedule, and required for those schedgen made illegal on purpose;
#   - exit 0 is a failure for an illegal one; otherwise the host object is
#     linked with the harness and libtxrt and runs in libtxrt's GPU
#     emulator (TXRT_CUDA=emulate; its race and bounds checks make the
#     entry point fail) on two size sets (a prime above every factor,
#     clamped to the ranges X.run gives diffcheck.sh with -c, and a random
#     set), and must match the unscheduled kernel (txcmp); where ptxas is
#     found (PATH or /usr/local/cuda/bin), the schedule's PTX (--emit=ptx)
#     must assemble for sm_80;
#   - anything else (exit >= 2, a signal, a sanitizer report, exit 1
#     without a diagnostic, a run that hangs) is a failure.
#
# A run that libtxrt refuses at the launch because the block needs more
# shared memory than a block has at those sizes (a tile of a stage whose
# region the harness's sizes make large) is counted apart, not failed, as
# a GPU would refuse it too.
#
# Kernels that no cuda schedule can run (a 0-d output: schedgen exits 3)
# are skipped.  Every failure prints the schedule.  At the end a table
# counts the first diagnostics of "probably legal" schedules that txc
# rejected: what the generator gets wrong, or what the cuda lowering
# refuses most.
#
# Environment: TXC, CC, abs_top_srcdir, abs_top_builddir,
# SCHEDGEN_GPU_COUNT (default 200), TXC_SEED (default 1), TXC_KEEP=1 (keep
# the work folder), FUZZ_KERNELS='matmul blur', FUZZ_JOBS (default 2),
# PTXAS (a ptxas to use; PTXAS=none skips the PTX check).
# Exit 0 pass, 1 fail, 77 skip (a txc without the cuda target, or no libtxrt).
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
count=${SCHEDGEN_GPU_COUNT:-200}
seed=${TXC_SEED:-1}
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${abs_top_builddir:-.}
schedgen=$builddir/tests/gen/schedgen
txcmp=$builddir/tests/tools/txcmp
for p in "$schedgen" "$txcmp"; do
	[ -x "$p" ] || { echo "fuzz-gpu-schedules.sh: $p not built (make check builds it)"; exit 99; }
done
txrt=$builddir/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "fuzz-gpu-schedules.sh: $txrt not built: skipped"; exit 77; }
TXRT_CUDA=emulate
export TXRT_CUDA
# imports in the test files (tensorize.tx) resolve from the source stdlib
TXC_STDLIB=${TXC_STDLIB:-$srcdir/stdlib}
export TXC_STDLIB

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-gpufuzz.XXXXXX") || exit 99
if [ "${TXC_KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi

# the cuda target must be there (txc built with LLVM's NVPTX back end)
cat >"$work/probe.tx" <<'EOF'
kernel probe(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * 2.0;
}
schedule probe for cuda {
  y.split(i, 32) -> (io, ii);
  y.bind(io, blockIdx.x);
  y.bind(ii, threadIdx.x);
}
EOF
if ! "$TXC" --target=cuda --emit=ptx -o "$work/probe.ptx" "$work/probe.tx" >"$work/probe.log" 2>&1; then
	head -n 5 "$work/probe.log"
	if grep -qiE 'nvptx|unknown target|not (built|available|supported)' "$work/probe.log"; then
		echo "fuzz-gpu-schedules.sh: this txc has no cuda target: skipped"
		exit 77
	fi
	echo "FAIL: txc --target=cuda cannot compile a one-line kernel"
	exit 1
fi
ptxas=${PTXAS:-}
if [ -z "$ptxas" ]; then
	ptxas=$(command -v ptxas 2>/dev/null || true)
	[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
fi
[ "$ptxas" = none ] && ptxas=
# a run that hangs (a barrier no thread reaches) is a failure, not a stuck test
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout 60"

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
nk=$(echo "$kernels" | wc -w)
# fewer schedules than kernels (.ci/run's sanitized run): that many
# kernels, spread over the list, one schedule each
if [ "$count" -gt 0 ] && [ "$count" -lt "$nk" ]; then
	kernels=$(echo $kernels | tr ' ' '\n' |
	    awk -v c="$count" -v n="$nk" 'int((NR - 1) * c / n) != int(NR * c / n)' | tr '\n' ' ')
	nk=$count
fi
[ "$nk" -gt 0 ] || { echo "fuzz-gpu-schedules.sh: no kernels"; exit 77; }
per=$(( (count + nk - 1) / nk ))

fails=0 shown=0 total=0 accepted=0 rejected=0 rej_ok=0 runs=0 ptx=0 skipped=0 big=0
fail() { # MESSAGE [SCHEDULE-FILE [LOG]]
	fails=$((fails + 1))
	echo "$1" | sed -e 's/ at [A-Za-z_][A-Za-z0-9_]*=.*//' -e "s/'[^']*'/'_'/g" \
	    -e 's/internal compiler error ([^)]*)/ICE/' -e 's/[0-9][0-9]*/N/g' | cut -c1-150 >>"$work/failkinds"
	[ $shown -lt 8 ] || return 0
	shown=$((shown + 1))
	echo "FAIL: $1"
	if [ $# -ge 3 ] && [ -s "$3" ]; then head -n 12 "$3" | sed 's/^/    | /'; fi
	if [ $# -ge 2 ]; then
		echo "    ($2)"
		sed -n '/^schedule .* as g for cuda/,$p' "$2" | sed 's/^/    /'
	fi
}
has_diag() { grep -q ':[0-9]*:[0-9]*: error: ' "$1"; }
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
	"$schedgen" -t cuda -n "$per" -s "$((seed * 1000 + ki))" -o "$w/g" "$tx" 2>"$w/sg.err"
	case $? in
	0) ;;
	3)
		echo "note: $k skipped: $(sed 's/^schedgen: [^:]*: //' "$w/sg.err")"
		skipped=$((skipped + 1))
		return
		;;
	*)
		cat "$w/sg.err"
		fail "$k: schedgen -t cuda failed"
		return
		;;
	esac
	caps=$(sed -n "s/.*-c '\([^']*\)'.*/\1/p" "$srcdir/tests/run/$k.run" | head -n 1)
	hargs=$(sed -n "s/.* -a '\([^']*\)'.*/\1/p" "$srcdir/tests/run/$k.run" | head -n 1)
	if ! "$TXC" --emit=harness -o "$w/h.c" "$tx" 2>"$w/err" ||
	    ! $CC -O1 -c -o "$w/h.o" "$w/h.c" 2>>"$w/err" ||
	    ! $CC -O1 -DTXC_LLVM -c -o "$w/hl.o" "$w/h.c" 2>>"$w/err" ||
	    ! "$TXC" --no-schedule --emit=c -o "$w/ref.c" "$tx" 2>>"$w/err" ||
	    ! cc_link "$w/ref" "$w/ref.c" "$w/h.o"; then
		cat "$w/err" "$w/cc.log" 2>/dev/null | head -n 10
		fail "$k: cannot build the harness or the unscheduled reference"
		return
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
			v = 37; if (v > hi[sz[i]]) v = hi[sz[i]]
			while (v > 2 && v > lo[sz[i]] && (v % 2 == 0 || v % 3 == 0 || v % 5 == 0 || v % 7 == 0)) v--
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

	for g in "$w"/g/g*.tx; do
		total=$((total + 1))
		want=$(sed -n '1s|^// schedgen: expect ||p' "$g")
		"$TXC" --target=cuda -s g -o "$w/s.o" "$g" >"$w/txc.out" 2>"$w/txc.err"
		rc=$?
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
				reason=$(sed -n 's/^[^:]*:[0-9]*:[0-9]*: error: //p' "$w/txc.err" | head -n 1 |
				    sed -e "s/'[^']*'/'_'/g" -e 's/(.*)/(_)/' -e 's/[0-9][0-9]*/N/g')
				printf '%s\t%s\n' "$reason" "$k/${g##*/}" >>"$work/reasons"
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
		if [ -n "$ptxas" ]; then
			if ! "$TXC" --target=cuda -s g --emit=ptx -o "$w/s.ptx" "$g" 2>"$w/txc.err"; then
				fail "$k: txc --emit=ptx fails where -o X.o works" "$g" "$w/txc.err"
				continue
			fi
			ptx=$((ptx + 1))
			if ! "$ptxas" -arch=sm_80 -o "$w/s.cubin" "$w/s.ptx" >"$w/ptxas.log" 2>&1; then
				fail "$k: ptxas -arch=sm_80 rejects the PTX" "$g" "$w/ptxas.log"
				continue
			fi
		fi
		if ! cc_link "$w/s" "$w/hl.o" "$w/s.o" "$txrt" -lpthread -ldl; then
			fail "$k: the object does not link with libtxrt" "$g" "$w/cc.log"
			continue
		fi
		i=0
		while [ $i -lt $nset ]; do
			i=$((i + 1))
			set=$(cat "$w/set$i")
			rrc=$(cat "$w/ref$i.rc")
			runs=$((runs + 1))
			# shellcheck disable=SC2086
			$tmo "$w/s" $set $hargs seed=$i out="$w/o.out" poison=0x5a >"$w/run.log" 2>&1
			brc=$?
			if [ $brc -eq 124 ] && [ -n "$tmo" ]; then
				fail "$k: the emulated run hangs (60 s) at $set" "$g" "$w/run.log"
				break
			fi
			if [ "$rrc" -ne 0 ]; then
				[ "$brc" -eq "$rrc" ] && continue
				fail "$k: exits $brc where the reference exits $rrc at $set" "$g" "$w/run.log"
				break
			fi
			if [ $brc -eq 12 ] || [ $brc -eq 13 ]; then
				grep -qE 'exact|shift_inward' "$g" && continue
			fi
			if [ $brc -ne 0 ] && grep -q 'bytes of shared memory per block, the emulator allows' "$w/run.log"; then
				# a tile whose shared copies do not fit a block at these
				# sizes: refused at the launch, as a GPU would
				big=$((big + 1))
				printf '%s\t%s\n' "(at run time) more shared memory than a block has" "$k/${g##*/}" >>"$work/reasons"
				break
			fi
			if [ $brc -ne 0 ]; then
				fail "$k: harness exit $brc ($(head -n 1 "$w/run.log" | cut -c1-110)) at $set" "$g" "$w/run.log"
				break
			elif ! "$txcmp" "$w/ref$i.out" "$w/o.out" >"$w/cmp.log" 2>&1; then
				fail "$k: differs from the unscheduled kernel at $set" "$g" "$w/cmp.log"
				break
			fi
		done
	done
}

# FUZZ_JOBS (default 2) background jobs share the kernels round-robin;
# each keeps its own counters and log, summed and printed at the end.
jobs=${FUZZ_JOBS:-2}
j=0
while [ $j -lt "$jobs" ]; do
	(
		ki=0
		for k in $kernels; do
			ki=$((ki + 1))
			[ $(((ki - 1) % jobs)) -eq $j ] && fuzz_one "$k" $ki
		done
		echo "$fails $total $accepted $rejected $rej_ok $runs $ptx $skipped $big" >"$work/job$j.cnt"
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
set -- $(cat "$work"/job*.cnt | awk '{ for (i = 1; i <= NF; i++) s[i] += $i } END { print s[1] + 0, s[2] + 0, s[3] + 0, s[4] + 0, s[5] + 0, s[6] + 0, s[7] + 0, s[8] + 0, s[9] + 0 }')
fails=$((fails + $1)) total=$2 accepted=$3 rejected=$4 rej_ok=$5 runs=$6 ptx=$7 skipped=$8 big=$9

if [ -s "$work/failkinds" ]; then
	echo "failures by kind (the first ones are shown above with their schedules):"
	sort "$work/failkinds" | uniq -c | sort -rn
fi
if [ -s "$work/reasons" ]; then
	echo "diagnostics for schedules schedgen thought legal (most frequent first, with an example):"
	awk -F '\t' '{ n[$1]++; if (!($1 in ex)) ex[$1] = $2 }
	    END { for (r in n) printf "%7d %s (%s)\n", n[r], r, ex[r] }' "$work/reasons" | sort -rn | head -n 12
fi
[ -n "$ptxas" ] || ptx="no ptxas:"
echo "fuzz-gpu-schedules: $total schedules over $((nk - skipped)) kernels ($skipped skipped): $accepted accepted and run in the emulator ($runs runs, $ptx assembled for sm_80, $big refused at launch: too much shared memory), $rejected rejected with a diagnostic ($rej_ok of them thought legal), $fails failures"
[ $fails -eq 0 ]
