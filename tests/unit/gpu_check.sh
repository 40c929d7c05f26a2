#!/bin/sh
# gpu_check.sh: tools/gpu-check.sh, which runs the cuda target on a GPU
# machine, keeps building where there is none: its cuBLAS benchmark
# (bench/gpu_gemm.cu) and the device harness build, and the harness runs
# its copies to and from the "device" in libtxrt's emulator; part 6's
# variants (k64, p4, m256, the defer ones, ...) still change their
# shipped files and match the unscheduled kernel in the emulator.  Skips
# (77) without the CUDA toolkit.
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
exec $SHELL "$abs_top_srcdir/tools/gpu-check.sh" --build-only "$abs_top_builddir"
