#!/bin/sh
# rows_run.sh: rule C2's block on narrow images (auto/tile.c): a
# contraction whose row axis is shorter than the registers allow takes a
# second row axis, which rules_conv_blocked.tx's golden shows at 7 x 7 (2
# rows x 7 columns x 16 channels).  Here the generated schedule runs
# (txc bench -s auto, against the unscheduled kernel) at sizes whose rows
# are odd, a row axis of 1 and 2, a second axis shorter than its block,
# and one wide enough for a single row axis.
# Environment: TXC, abs_top_srcdir.  Exit 0 pass, 1 fail.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
tx=$srcdir/tests/auto/rules_conv_blocked.tx
out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT
fails=0
for s in 'N=1 CB=3 H=9 W=5 KB=2' 'N=2 CB=1 H=3 W=7 KB=1' 'N=1 CB=2 H=1 W=2 KB=3' \
    'N=1 CB=2 H=5 W=3 KB=2' 'N=1 CB=1 H=2 W=30 KB=1'; do
	d=
	for x in $s; do d="$d -D $x"; done
	# shellcheck disable=SC2086
	if ! "$TXC" bench "$tx" -k conv7 --schedules=auto --runs=1 --warmup=0 $d >"$out" 2>&1 ||
	    ! grep -q '^  auto ' "$out" || grep -q MISMATCH "$out"; then
		echo "FAIL: $s"
		cat "$out"
		fails=$((fails + 1))
	else
		echo "ok: $s: $("$TXC" --print-auto-schedule "$tx" $d 2>&1 | sed -n 's|.*consumer: a \(.*\) register tile|\1|p')"
	fi
done
[ $fails -eq 0 ]
