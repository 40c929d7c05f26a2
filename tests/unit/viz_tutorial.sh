#!/bin/sh
# viz_tutorial.sh: txc viz draws every step of the scheduling tutorial
# (examples/tutorial/*.tx) at the sizes its README shows, with --stats and
# as a page, without an error; and the blur steps' numbers say what the
# README says of them: step 5 (compute_at a tile) recomputes blur_x's 2
# halo rows per tile boundary and no more, step 6 (inline) has no blur_x
# buffer and loads 9 inputs per output, every other step computes each
# element once.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
src=$abs_top_srcdir/examples/tutorial
st=0
n=0
for tx in "$src"/*.tx; do
	step=$(basename "$tx" .tx)
	case $step in
	blur-*) how="-D H=40 -D W=300" ;;
	matmul-*) how="-D M=20 -D N=40 -D K=8" ;;
	gpu-*) how="--target=cuda -D M=16 -D N=16 -D K=8" ;;
	vta-*) how="--target=vta -D O=2 -D N=2 -D M=2" ;;
	*) how= ;;
	esac
	n=$((n + 1))
	# shellcheck disable=SC2086
	if ! (cd "$src" && "$TXC" viz $how --stats "$step.tx") >"$tmp/$step.txt" 2>"$tmp/err" ||
	    ! (cd "$src" && "$TXC" viz $how "$step.tx" -o "$tmp/$step.html") 2>>"$tmp/err" ||
	    [ -s "$tmp/err" ]; then
		echo "FAIL: $step: txc viz $how"
		cat "$tmp/err"
		st=1
	fi
done
[ $n -ge 16 ] || { echo "FAIL: only $n tutorial steps"; st=1; }
# H=40 W=300: output tiles of 32 x 256 are 2 x 2; blur_x at each computes
# 34 (then 10) rows of 256 (then 44) columns: 2 rows of 300 more than the
# 42 x 300 it needs
grep -q '    computed 13200 of 12600 elements (x1.05); 39600 loads, 3.00 per store' \
	"$tmp/blur-5-fuse.txt" || { echo "FAIL: blur-5's blur_x"; cat "$tmp/blur-5-fuse.txt"; st=1; }
grep -q "  blur_x: inlined" "$tmp/blur-6-inline.txt" &&
	grep -q '    computed 12000 of 12000 elements (x1.00); 108000 loads, 9.00 per store' \
	"$tmp/blur-6-inline.txt" || { echo "FAIL: blur-6"; cat "$tmp/blur-6-inline.txt"; st=1; }
for s in 1-naive 2-vectorize 3-parallel 4-tile; do
	[ "$(grep -c '    computed \([0-9]*\) of \1 elements (x1.00)' "$tmp/blur-$s.txt")" = 2 ] ||
		{ echo "FAIL: blur-$s computes an element twice"; cat "$tmp/blur-$s.txt"; st=1; }
done
exit $st
