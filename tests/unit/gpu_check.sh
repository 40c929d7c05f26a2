#!/bin/sh
# gpu_check.sh: tools/gpu-check.sh, which runs the cuda target on a GPU
# machine, keeps building where there is none: its cuBLAS benchmark
# (bench/gpu_gemm.cu) and the device harness build, and the harness runs
# its copies to and from the "device" in libtxrt's emulator.  Skips (77)
# without the CUDA toolkit.
: "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
exec $SHELL "$abs_top_srcdir/tools/gpu-check.sh" --build-only "$abs_top_builddir"
