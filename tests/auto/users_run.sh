#!/bin/sh
# users_run.sh: users.tx's kernels, written as users write them with no
# schedule (norm + matmul, dense + GELU, attention, a separable blur with
# borders, depthwise + pointwise, a backward pass of chained reductions),
# with their generated schedules, cpu and cuda, against the unscheduled
# kernel (gen_check.sh).
exec ${SHELL:-/bin/sh} "$(dirname "$0")/gen_check.sh" users.tx
