#!/bin/sh
# scan.sh: txc's prefix sum (examples/prefix_sum.tx: column blocks in
# parallel, the scan over t serial, the rows of a block vectorized) against
# the same loop written by hand in C with OpenMP (bench/scan.c), one
# process, the same data.  Prints the CPU and bench.h lines; nothing is
# asserted (the machine may be busy: run it twice).
#
#   bench/scan.sh [T [N]]          (default 4096 rows of 4096)
#   environment: TXC, CC (default cc), BENCH_THREADS (default: every core)
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top=${abs_top_builddir:-$(pwd)}
TXC=${TXC:-$top/txc}
CC=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-scan.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
echo "scan: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "$(grep -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
"$TXC" "$srcdir/examples/prefix_sum.tx" -o "$work/ps.o" || exit 1
$CC -O3 -march=native -fopenmp -I"$srcdir/bench" -I"$srcdir/rt" "$srcdir/bench/scan.c" \
    "$work/ps.o" "$top/rt/.libs/libtxrt.a" -o "$work/scan" -lpthread -lm || exit 1
BENCH_THREADS=${BENCH_THREADS:-$(nproc)} "$work/scan" "${1:-4096}" "${2:-4096}"
