#!/bin/sh
# fusion_run.sh: composed.tx's kernels (calls of stdlib kernels plus stages
# of their own, no schedule) with their generated schedules, which keep
# the callees' own schedules (txc-schedule(7) FUSION), cpu and cuda,
# against the unscheduled kernel (gen_check.sh).
exec ${SHELL:-/bin/sh} "$(dirname "$0")/gen_check.sh" composed.tx --fused
