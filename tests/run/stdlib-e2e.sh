#!/bin/sh
# stdlib-e2e.sh: every kernel of stdlib/*.tx with its default cpu schedule
# against the unscheduled kernel, through tests/run/diffcheck.sh.
set -u
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fails=0
for tx in "$srcdir"/stdlib/*.tx; do
	case $(basename "$tx") in
	conv2d.tx|depthwise.tx|pooling.tx) caps='N=1:2 C=1:4 K=1:4 H=1:13 W=1:13' ;;
	matmul.tx) caps='B=1:3 M=1:33 N=1:33 K=1:33' ;;
	*) caps= ;;
	esac
	for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
		$SHELL "$srcdir/tests/run/diffcheck.sh" -k "$k" -r 2 -c "$caps" "$tx" || fails=$((fails + 1))
	done
done
[ $fails -eq 0 ]
