#!/bin/sh
# gen_check.sh: the kernels of one tests/auto file, which have no schedule,
# with the schedules txc generates for them (cpu and cuda) against the
# unscheduled kernel (diffcheck.sh: C and native objects on the cpu, the
# GPU emulator for cuda), at odd sizes.
#
#   gen_check.sh FILE.tx [--fused | --mma]
#
# --fused: every kernel must keep at least one callee's own schedule on
# each target (a `// F:` line, txc-schedule(7) FUSION), so that a test of
# composed kernels cannot pass by the fallback to the rules alone.
# --mma: every kernel's cuda schedule must use the tensor cores (a `// G5:`
# line), so that a test of that rule cannot pass by the SIMT rules.
# Run by fusion_run.sh (composed.tx), users_run.sh (users.tx) and
# tcore_run.sh (tcore.tx).
#
# Environment: TXC, abs_top_srcdir, abs_top_builddir (as for diffcheck.sh);
# GEN_KERNELS='conv_relu dense_act' to run a few.  Exit 0 pass, 1 fail.
set -u
file=${1:?gen_check.sh: a tests/auto file expected}
fused=${2:-}
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_AUTO_STRICT=1
export TXC_AUTO_STRICT
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-fusion.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
tx=$srcdir/tests/auto/$file
fails=0
for target in cpu cuda; do
	if ! "$TXC" --print-auto-schedule --target=$target "$tx" >"$work/$target" 2>"$work/err"; then
		echo "FAIL: txc --print-auto-schedule --target=$target failed"
		cat "$work/err"
		exit 1
	fi
done
gen=$work/$file
{ sed '1{/^\/\/ flags:/d}' "$tx"; cat "$work/cpu" "$work/cuda"; } >"$gen"
caps='N=1:2 C=1:9 H=1:23 W=1:29 K=1:11 M=1:21 D=1:37 F=1:23 S=1:33'
# a file may give its own ranges: a line `// caps: M=1:70 ...`
fcaps=$(sed -n 's|^// caps: *||p' "$tx" | head -n 1)
[ -z "$fcaps" ] || caps=$fcaps
for k in $(sed -n 's/^kernel \([a-z_0-9]*\).*/\1/p' "$tx"); do
	if [ -n "${GEN_KERNELS:-}" ]; then
		case " $GEN_KERNELS " in *" $k "*) ;; *) continue ;; esac
	fi
	if [ "$fused" = --mma ] &&
	    ! sed -n "/^schedule $k as auto for cuda /,/^}/p" "$work/cuda" | grep -q '// G5:'; then
		echo "FAIL: $k: the cuda schedule does not use the tensor cores (no G5)"
		sed -n "/^schedule $k as auto for cuda /,/^}/p" "$work/cuda"
		fails=$((fails + 1))
	fi
	for target in cpu cuda; do
		[ "$fused" = --fused ] || continue
		if ! sed -n "/^schedule $k as auto for $target /,/^}/p" "$work/$target" | grep -q '// F:'; then
			echo "FAIL: $k: no callee's schedule kept for $target"
			sed -n "/^schedule $k as auto for $target /,/^}/p" "$work/$target"
			fails=$((fails + 1))
		fi
	done
	if ! (cd "$srcdir/tests/run" && $SHELL ./diffcheck.sh -k "$k" -r 2 -c "$caps" "$gen") \
	    >"$work/log" 2>&1; then
		echo "FAIL: $k: a generated schedule differs from the unscheduled kernel"
		sed -n "/^schedule $k as auto/,/^}/p" "$gen"
		tail -30 "$work/log"
		fails=$((fails + 1))
	else
		echo "ok: $k"
	fi
done
echo "gen_check.sh $file: $fails failures"
[ "$fails" -eq 0 ]
