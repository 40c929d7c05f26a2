#!/bin/sh
# fusion_run.sh: the composed kernels of composed.tx (calls of stdlib
# kernels plus stages of their own, no schedule) with their generated
# schedules (fusion groups that keep the callees' own schedules, the rules
# for the rest: txc-schedule(7) FUSION), cpu and cuda, against the
# unscheduled kernel (diffcheck.sh: C and native objects on the cpu, the
# GPU emulator for cuda), at odd sizes.  Every kernel must take at least
# one callee's schedule on each target (a `// F:` line), so that the test
# cannot pass by the fallback to the rules alone.
#
# Environment: TXC, abs_top_srcdir, abs_top_builddir (as for diffcheck.sh);
# FUSION_KERNELS='conv_relu dense_act' to run a few.  Exit 0 pass, 1 fail.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_AUTO_STRICT=1
export TXC_AUTO_STRICT
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-fusion.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
tx=$srcdir/tests/auto/composed.tx
fails=0
for target in cpu cuda; do
	if ! "$TXC" --print-auto-schedule --target=$target "$tx" >"$work/$target" 2>"$work/err"; then
		echo "FAIL: txc --print-auto-schedule --target=$target failed"
		cat "$work/err"
		exit 1
	fi
done
gen=$work/composed.tx
{ sed 1d "$tx"; cat "$work/cpu" "$work/cuda"; } >"$gen"
caps='N=1:2 C=1:9 H=1:13 W=1:19 K=1:11 M=1:21 D=1:37 F=1:23'
for k in $(sed -n 's/^kernel \([a-z_0-9]*\).*/\1/p' "$tx"); do
	if [ -n "${FUSION_KERNELS:-}" ]; then
		case " $FUSION_KERNELS " in *" $k "*) ;; *) continue ;; esac
	fi
	for target in cpu cuda; do
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
echo "fusion_run.sh: $fails failures"
[ "$fails" -eq 0 ]
