#!/bin/sh
# vta_run.sh: the generated vta schedules (auto/vta.c) of stdlib/vta.tx's
# kernels and of tests/run's packed gemm, conv and dense, in libtxrt's VTA
# simulator against the unscheduled kernel on the CPU, at odd sizes.
#
# Each size set is one `txc bench --target=vta -s auto -D ...` (VTA fixes
# every size at compile time, so the schedule is generated for those
# sizes): bench runs the instruction stream in the simulator with every
# check on, in TXRT_VTA_INTERLEAVINGS=2 orders of the modules, and
# compares the outputs with the CPU's (exact: max error 0).  Then
# VTA_POINTS (default 4) random points of the generated template (-K,
# drawn with TXC_SEED) per size set.  TXC_AUTO_STRICT=1: a generated
# schedule that fails its checks or does not lower is an error, never the
# naive nest.  The generator must map every kernel here: one that gets no
# schedule fails.
#
# Environment: TXC, abs_top_srcdir, abs_top_builddir.  Exit 0 pass, 1
# fail, 77 skip (no libtxrt).
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${abs_top_builddir:-.}
[ -f "$builddir/rt/.libs/libtxrt.a" ] || { echo "SKIP: libtxrt not built"; exit 77; }
TXC_AUTO_STRICT=1
TXRT_VTA_INTERLEAVINGS=${TXRT_VTA_INTERLEAVINGS:-2}
export TXC_AUTO_STRICT TXRT_VTA_INTERLEAVINGS
seed=${TXC_SEED:-1}
points=${VTA_POINTS:-4}
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-autovta.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

fails=0 runs=0
bench() { # file kernel label args...
	f=$1 k=$2 label=$3
	shift 3
	# shellcheck disable=SC2068
	"$TXC" bench "$f" -I "$srcdir/stdlib" -k "$k" --target=vta --schedules=auto --runs=1 \
	    --warmup=0 $@ >"$work/out" 2>&1
	rc=$?
	line=$(grep '^  auto ' "$work/out")
	err=$(printf '%s\n' "$line" | awk '{ print $NF }')
	runs=$((runs + 1))
	if [ $rc -ne 0 ] || [ -z "$line" ] || [ "$err" != 0 ] || grep -q 'MISMATCH\|compile error\|run error\|error:' "$work/out"; then
		echo "FAIL: $f -k $k $label"
		sed 's/^/    | /' "$work/out" | head -n 20
		# shellcheck disable=SC2068
		"$TXC" --print-auto-schedule --target=vta -I "$srcdir/stdlib" -k "$k" "$f" $@ 2>&1 |
		    sed 's/^/    | /'
		fails=$((fails + 1))
		return 1
	fi
	return 0
}

n=0
check() { # file kernel 'A=1 B=2 ...'
	f=$1 k=$2
	defs=$(for a in $3; do printf -- '-D %s ' "$a"; done)
	# shellcheck disable=SC2086
	bench "$f" "$k" "$3" $defs || return
	# random points of the template: each knob's value drawn from its list
	# shellcheck disable=SC2086
	"$TXC" --print-auto-schedule=template --target=vta -I "$srcdir/stdlib" -k "$k" "$f" \
	    $defs >"$work/tmpl" 2>&1
	p=0
	while [ "$p" -lt "$points" ]; do
		n=$((n + 1))
		ks=$(awk -v seed="$((seed * 7919 + n))" '
			BEGIN { srand(seed) }
			/^[[:space:]]*knob / {
				name = $2; sub(/.*\[/, ""); sub(/\].*/, "")
				m = split($0, v, /, */)
				printf "-K %s=%s ", name, v[1 + int(rand() * m)]
			}' "$work/tmpl")
		# shellcheck disable=SC2086
		[ -n "${VTA_VERBOSE:-}" ] && echo "$k $3 $ks"
		bench "$f" "$k" "$3 $ks" $defs $ks || return
		p=$((p + 1))
	done
}

lib=$srcdir/stdlib/vta.tx
run=$srcdir/tests/run
check "$lib" conv2d_vta 'CB=1 KB=2 H=5 W=6 R=3 P=1 S=1'
check "$lib" conv2d_vta 'CB=2 KB=3 H=9 W=4 R=3 P=2 S=2'
check "$lib" conv2d_vta 'CB=1 KB=1 H=1 W=1 R=1 P=1 S=1'
check "$lib" conv2d_vta 'CB=2 KB=1 H=2 W=5 R=1 P=2 S=2'
check "$lib" conv2d_vta 'CB=3 KB=5 H=14 W=14 R=3 P=1 S=1'
check "$lib" matmul_vta 'M=1 NB=1 KB=1'
check "$lib" matmul_vta 'M=17 NB=5 KB=3'
check "$lib" matmul_vta 'M=40 NB=6 KB=9'
check "$run/vta_matmul.tx" gemm 'O=7 N=3 M=5'
check "$run/vta_conv.tx" conv 'CB=2 OB=3 H=7 W=9 KH=3 KW=1 P=1 S=1'
check "$run/vta_dense.tx" dense 'M=9 N=37 KB=3'
echo "vta_run.sh: $runs runs, $fails failed"
[ "$fails" -eq 0 ]
