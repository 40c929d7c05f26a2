#!/bin/sh
# tutorial.sh: the loop nest of every step of the scheduling tutorial
# (examples/tutorial/*.tx) is a golden: tests/loops/tutorial/STEP.loops holds
# `txc --print-loops STEP.tx` (for the GPU steps, gpu-*.tx, the kernels as
# every thread runs them: `txc --target=cuda --emit=kernels`; for the VTA
# steps, vta-*.tx, the loop nest at the sizes their comments bench).  A change to
# lowering that changes what a course projects on the wall shows up here.
# TXC_UPDATE=1 rewrites them.
set -u
: "${TXC:?}" "${abs_top_srcdir:?}"
src=$abs_top_srcdir/examples/tutorial
gold=$abs_top_srcdir/tests/loops/tutorial
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for tx in "$src"/*.tx; do
	step=$(basename "$tx" .tx)
	n=$((n + 1))
	case $step in
	gpu-*) how="--target=cuda --emit=kernels -o -" ;;
	vta-*) how="--target=vta -D O=64 -D N=64 -D M=64 --print-loops" ;;
	*) how=--print-loops ;;
	esac
	# shellcheck disable=SC2086
	if ! (cd "$src" && "$TXC" $how --color=never "$step.tx") >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: $step: txc $how failed"
		cat "$tmp/err"
		fail=1
		continue
	fi
	if [ "${TXC_UPDATE:-0}" = 1 ]; then
		cp "$tmp/out" "$gold/$step.loops"
		continue
	fi
	if ! diff -u "$gold/$step.loops" "$tmp/out"; then
		echo "FAIL: $step: loop nest differs from tests/loops/tutorial/$step.loops"
		fail=1
	fi
done
[ "$n" -gt 0 ] || { echo "no tutorial steps found"; exit 99; }
echo "$n tutorial steps checked"
exit $fail
