#!/bin/sh
# tune.sh: `txc tune` live, on this machine: the stdlib's expert templates
# (matmul's register block, conv2d_nchw's) and a template whose default
# point is poor (tests/tune/mm_space.tx: a naive 1 x 4 tile), 200 trials
# each; prints each run's table and the winner's speed against the
# template's default at the requested threads.  Nothing is asserted: a
# benchmark (timings on a shared machine vary).
#
#     bench/tune.sh [--threads=T]
#
# Environment: TXC, abs_top_srcdir.
set -u
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
TXC=${TXC:-$srcdir/txc}
threads=
for a in "$@"; do
	case $a in
	--threads=*) threads=$a ;;
	*) echo "usage: bench/tune.sh [--threads=T]"; exit 2 ;;
	esac
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

run() { # name file args...
	name=$1
	shift
	echo "== $name"
	# shellcheck disable=SC2086
	"$TXC" tune "$@" --trials=200 $threads --log="$tmp/log.jsonl" 2>/dev/null |
		grep -v '^$' || echo "   (txc tune failed)"
}

run "stdlib matmul, 512^3" "$srcdir/stdlib/matmul.tx" -k matmul -D M=512 -D N=512 -D K=512
run "stdlib conv2d_nchw, 1x64x56x56 -> 64" "$srcdir/stdlib/conv2d.tx" -k conv2d_nchw \
	-D N=1 -D C=64 -D H=56 -D W=56 -D K=64
run "stdlib tuned matmul (cache blocks), 1024^3" "$srcdir/stdlib/tuned/matmul.tx" -k matmul -s fast \
	-D M=1024 -D N=1024 -D K=1024
run "a poor default: tests/tune/mm_space.tx, 256^3" "$srcdir/tests/tune/mm_space.tx" \
	-D M=256 -D N=256 -D K=256
