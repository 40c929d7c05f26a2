#!/bin/sh
# bench-lowering.sh: how long txc takes to lower each test kernel and emit
# C, for every schedule of every tests/run/*.tx and stdlib/*.tx file (best
# of 3 runs, in milliseconds, process start-up included).  It prints; it
# asserts nothing.
#
#     tools/bench-lowering.sh [TXC]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
TXC=${1:-${TXC:-./txc}}
[ -x "$TXC" ] || { echo "usage: $0 PATH/TO/txc" >&2; exit 2; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
printf '%-40s %-16s %8s\n' file schedule "ms"
for f in "$top"/tests/run/*.tx "$top"/stdlib/*.tx; do
	[ -f "$f" ] || continue
	scheds=$(sed -n 's/^schedule [A-Za-z_0-9]* as \([A-Za-z_0-9]*\) for cpu.*/\1/p' "$f" | sort -u)
	for s in - $scheds; do
		best=
		for r in 1 2 3; do
			t0=$(date +%s%N)
			if [ "$s" = - ]; then
				"$TXC" -I "$top/stdlib" --emit=c -o /dev/null "$f" 2>/dev/null || { best=fail; break; }
			else
				"$TXC" -I "$top/stdlib" -s "$s" --emit=c -o /dev/null "$f" 2>/dev/null || { best=fail; break; }
			fi
			t=$(ms "$t0" "$(date +%s%N)")
			[ -z "$best" ] || [ "$t" -lt "$best" ] && best=$t
		done
		printf '%-40s %-16s %8s\n' "${f#$top/}" "$( [ "$s" = - ] && echo default || echo "$s")" "$best"
	done
done
