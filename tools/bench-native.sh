#!/bin/sh
# bench-native.sh: how fast txc's native code is, against the machine's
# FMA peak measured in the same run, and how fast txc compiles.
#
#   tools/bench-native.sh [BUILD_DIR]      (make bench-native runs it)
#
#   1. the fp32 FMA peak with 1 and 2 threads (bench/peak.c, best of 3);
#   2. `txc bench` on examples/matmul.tx at M = N = K = 1024 with its
#      schedules (the default one of the README and `fast`), with 1 and 2
#      threads: GFLOP/s of the fastest run (as the peak is a best-of) and
#      its share of the peak for that thread count;
#   3. `txc examples/conv.tx -o conv.o`: best of 5, in milliseconds.
#
# On a machine that other jobs load, both sides of the ratio drop.  Nothing
# here asserts a speed.  Environment: TXC (default BUILD_DIR/txc), CC,
# BENCH_SIZE (default 1024), BENCH_SCHEDULES (default "default,fast").
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top=${1:-${abs_top_builddir:-$(pwd)}}
TXC=${TXC:-$top/txc}
CC=${CC:-cc}
size=${BENCH_SIZE:-1024}
scheds=${BENCH_SCHEDULES:-default,fast}
[ -x "$TXC" ] || { echo "bench-native: no txc at $TXC (build it, or set TXC)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# ---- the FMA peak -------------------------------------------------------------
$CC -O2 -mavx2 -mfma -pthread "$srcdir/bench/peak.c" -o "$tmp/peak" ||
	{ echo "bench-native: cannot build bench/peak.c" >&2; exit 1; }
"$tmp/peak" 2 >"$tmp/peak.txt" || exit 1
peak1=$(awk '/peak_gflops_1T/ {print $2}' "$tmp/peak.txt")
peak2=$(awk '/peak_gflops_2T/ {print $2}' "$tmp/peak.txt")
echo "FMA peak (bench/peak.c, best of 3): $peak1 GFLOP/s with 1 thread, $peak2 GFLOP/s with 2"

# ---- matmul -------------------------------------------------------------------
echo "txc bench examples/matmul.tx, M=N=K=$size (fastest of the timed runs):"
printf '  %-10s %8s %12s %11s\n' schedule threads GFLOP/s "% of peak"
for t in 1 2; do
	peak=$peak1
	[ "$t" = 2 ] && peak=$peak2
	TXRT_NUM_THREADS=$t "$TXC" bench "$srcdir/examples/matmul.tx" -D M="$size" \
		-D N="$size" -D K="$size" --threads="$t" --schedules="$scheds" --best \
		>"$tmp/bench.txt" 2>&1 ||
		{ echo "bench-native: txc bench failed:" >&2; cat "$tmp/bench.txt" >&2; exit 1; }
	echo "$scheds" | tr ',' '\n' | while read -r s; do
		rate=$(awk -v s="$s" '$1 == s { for (i = 2; i <= NF; i++)
			if ($i == "GFLOP/s") print $(i - 1) }' "$tmp/bench.txt")
		pct=$(awk -v r="${rate:-0}" -v p="$peak" 'BEGIN { printf "%.0f%%", (p > 0 ? 100 * r / p : 0) }')
		printf '  %-10s %8s %12s %11s\n' "$s" "$t" "${rate:--}" "$pct"
	done
done

# ---- compile time -------------------------------------------------------------
best=
for run in 1 2 3 4 5; do
	t0=$(date +%s%N)
	"$TXC" "$srcdir/examples/conv.tx" -o "$tmp/conv.o" ||
		{ echo "bench-native: txc failed on examples/conv.tx" >&2; exit 1; }
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "txc examples/conv.tx -o conv.o: best of 5: $best ms"
