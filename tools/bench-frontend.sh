#!/bin/sh
# bench-frontend.sh: times `txc --check` (lexer, parser, sema) on a
# generated 10,000-line file.  Prints the time; asserts nothing.
#
#   tools/bench-frontend.sh [TXC] [LINES]     (default ./txc, 10000 lines)
set -eu
txc=${1:-./txc}
lines=${2:-10000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$here/gen-big-tx.sh" "$lines" >"$tmp/big.tx"
actual=$(wc -l <"$tmp/big.tx")
best=
for run in 1 2 3; do
	t0=$(date +%s%N)
	"$txc" --check "$tmp/big.tx" || { echo "bench-frontend: txc --check failed" >&2; exit 1; }
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "txc --check on $actual lines ($(wc -c <"$tmp/big.tx") bytes): best of 3: $best ms"
