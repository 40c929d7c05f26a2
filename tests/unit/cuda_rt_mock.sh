#!/bin/sh
# cuda_rt_mock.sh: libtxrt's device mode against a pretend CUDA driver.
#
# Builds tests/unit/cuda_rt_mock.c as libcuda.so.1 in a temporary folder
# put first on the loader path (so it is the driver libtxrt opens, also
# on a machine with a GPU) and runs `cuda_rt_test mock`: device memory,
# a launch and its parameters, the module cache, the limit checks and
# their messages, the opt-in to more than 48 KiB of shared memory, and
# driver errors (a PTX that does not load, with the JIT's log; a kernel
# that is not in the module).
set -u
top=${abs_top_srcdir:-.}
build=${abs_top_builddir:-.}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
if ! ${CC:-cc} -std=c11 -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$top" -I"$top/rt" \
    -o "$tmp/libcuda.so.1" \
    "$top/tests/unit/cuda_rt_mock.c"; then
	echo "ERROR: cannot build the pretend driver"
	exit 99
fi
LD_LIBRARY_PATH=$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$build/tests/unit/cuda_rt_test" mock
