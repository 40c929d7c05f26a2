#!/bin/sh
# tcore_run.sh: tcore.tx's contractions of f16 and bf16 operands (a matmul,
# a transposed dense layer, a batched matmul with bias and ReLU fused into
# its blocks, operands made in the kernel, a consumer reading the sums
# transposed), with no schedule: the cuda generator must put each on the
# tensor cores (G5), and its schedules (cpu and cuda, in the emulator) must
# match the unscheduled kernel at odd sizes (gen_check.sh).
exec ${SHELL:-/bin/sh} "$(dirname "$0")/gen_check.sh" tcore.tx --mma
