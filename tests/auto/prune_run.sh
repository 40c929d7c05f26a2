#!/bin/sh
# prune_run.sh: a generated schedule that does not lower as a whole loses
# only the primitives of the stages in the way (lower/sched_prune.c), not
# every stage's.  tests/auto/prune.tx's generated schedule fails bounds
# inference (TXC_AUTO_STRICT=1 says so); compiled as usual, its matmul z
# keeps its generated tiles (parallel, vectorized) while y and p are
# naive; and that object computes what the unscheduled kernel computes
# (a harness from --emit=harness, txcmp) at odd sizes.
# Environment: TXC, abs_top_srcdir, abs_top_builddir.  Exit 0 pass, 1
# fail, 77 skip.
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${abs_top_builddir:-$srcdir}
tx=$srcdir/tests/auto/prune.tx
txrt=$builddir/rt/.libs/libtxrt.a
txcmp=$builddir/tests/tools/txcmp
[ -f "$txrt" ] && [ -x "$txcmp" ] || { echo "SKIP: no libtxrt.a or txcmp"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-prune.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
if TXC_AUTO_STRICT=1 "$TXC" -o "$work/strict.o" "$tx" 2>/dev/null; then
	echo "SKIP: prune.tx's generated schedule lowers whole now: the test needs a kernel whose does not"
	exit 77
fi
fails=0
"$TXC" --print-loops -s auto "$tx" >"$work/loops" 2>"$work/err" || { cat "$work/err"; exit 1; }
# z: its generated nest (a parallel strip, a packed b, vector lanes);
# y: the naive one
if sed -n '/produce z {/,$p' "$work/loops" | grep -q 'parallel (jo' &&
    grep -q 'produce b_pack' "$work/loops" &&
    sed -n '/produce y {/,/produce z {/p' "$work/loops" | grep -q 'for (y_i, 0, H\*W)'; then
	echo "ok: z keeps its generated schedule, y and p are naive"
else
	echo "FAIL: the loops are not z scheduled and y naive"
	cat "$work/loops"
	fails=$((fails + 1))
fi
cd "$work" || exit 99
if "$TXC" --emit=harness -o h.c "$tx" && $CC -O1 -DTXC_LLVM -c -o h.o h.c &&
    "$TXC" -o auto.o "$tx" && "$TXC" --no-schedule -o ref.o "$tx" &&
    $CC -O1 -o auto h.o auto.o "$txrt" -lpthread -ldl -lm &&
    $CC -O1 -o ref h.o ref.o "$txrt" -lpthread -ldl -lm; then
	for s in 'N=1 H=1 W=1 M=1' 'N=2 H=7 W=5 M=15' 'N=1 H=3 W=13 M=29'; do
		# shellcheck disable=SC2086
		if ./ref $s seed=3 out=ref.bin >log 2>&1 && ./auto $s seed=3 out=auto.bin >>log 2>&1 &&
		    "$txcmp" ref.bin auto.bin >>log 2>&1; then
			echo "ok: $s: the pruned schedule computes what the unscheduled kernel does"
		else
			echo "FAIL: $s"
			cat log
			fails=$((fails + 1))
		fi
	done
else
	echo "FAIL: the harness or the objects do not build"
	fails=$((fails + 1))
fi
[ $fails -eq 0 ]
