#!/bin/sh
# mean_var.sh: the mean and variance of each row in one pass over the input
# (compute_with, examples/mean_var.tx) against two passes (each stage its
# own nest), timed side by side by txc bench in one process.  Prints the
# benchmark lines; nothing here asserts a speed (the machine may be busy).
#
#   bench/mean_var.sh [N [M]]      (default 2048 rows of 4096)
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
TXC=${TXC:-${abs_top_builddir:-$(pwd)}/txc}
"$TXC" bench "$srcdir/examples/mean_var.tx" -D N="${1:-2048}" -D M="${2:-4096}" \
    --schedules=two_pass,default
