#!/bin/sh
# gen-big-tx.sh: writes a large, valid .tx file to stdout, for timing the
# front end (tools/bench-frontend.sh).  Many kernels, each a small pipeline
# (declared and inferred stages, a reduction, a select, math calls) with a
# default and a named schedule.
#
#   tools/gen-big-tx.sh [LINES] > big.tx      (default 10000 lines)
set -eu
lines=${1:-10000}
per=29            # lines per kernel and its schedules, below
n=$(( (lines + per - 1) / per ))
i=0
while [ "$i" -lt "$n" ]; do
	cat <<TX
// kernel $i: a matmul, a bias, an activation and a row sum.
kernel k$i(M, N, K, alpha: f32) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  in  bias: f32[N];
  out C: f32[M, N];
  out rows: f32[M];

  prod$i: f32[M, N];
  prod$i[i, j] = sum(k < K) A[i, k] * B[k, j];
  biased[i, j] = prod$i[i, j] + bias[j] * alpha;
  C[i, j] = biased[i, j] > 0.0 ? biased[i, j] : 0.01 * exp(biased[i, j] - 1.0);
  rows[i] = sum(j < N) (C[i, j] + f32(i * $i % 7)) / max(alpha, 1.0);
}

schedule k$i for cpu {
  prod$i.tile(i, j, 8, 32) -> (io, jo, ii, ji);
  prod$i.split(k, 4) -> (ko, ki);
  prod$i.reorder(io, jo, ko, ki, ii, ji);
  prod$i.vectorize(ji);
  biased.compute_inline();
  C.parallel(i);
}

schedule k$i as fast for cpu {
  prod$i.split(i, 16, tail = guard) -> (o, v);
  prod$i.parallel(o);
}

TX
	i=$((i + 1))
done
