#!/bin/sh
# cuda_decls.sh: libtxrt's own declarations of the CUDA driver API
# (rt/cuda_api.h) agree with the toolkit's cuda.h, and with the stub
# libcuda on the loader path a launch in device mode says what it found.
#
# A C file that includes both headers static-asserts that every constant
# has cuda.h's value and that every entry point's type is cuda.h's (the
# builtin, and an assignment of &cuX to libtxrt's pointer type under
# -Werror).  cuda.h is looked for in $CUDA_HOME/include and
# /usr/local/cuda/include; without one the test skips (77).
set -u
top=${abs_top_srcdir:-.}
build=${abs_top_builddir:-.}
inc=
for d in ${CUDA_HOME:+"$CUDA_HOME/include"} /usr/local/cuda/include; do
	if [ -f "$d/cuda.h" ]; then inc=$d; break; fi
done
if [ -z "$inc" ]; then
	echo "SKIP: no cuda.h"
	exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/decls.c" <<'EOC'
#include <cuda.h>
#include "rt/cuda_api.h"

#define SAME_VALUE(name, cuda_name, value) \
	_Static_assert((long long)name == (long long)cuda_name && (long long)cuda_name == value, \
	    #name " is not cuda.h's " #cuda_name);
TXCU_CONSTANTS(SAME_VALUE)

#define SAME_TYPE(name, params) \
	_Static_assert(__builtin_types_compatible_p(CuFn_##name, __typeof__(name)), \
	    #name ": cuda.h declares another type");
TXCU_FUNCTIONS(SAME_TYPE)

#define ASSIGN(name, params) CuFn_##name *p_##name = &name;
TXCU_FUNCTIONS(ASSIGN)

#define SAME(a, b) _Static_assert(__builtin_types_compatible_p(a, b), #a " is not " #b);
SAME(CuResult, CUresult)
SAME(CuDevice, CUdevice)
SAME(CuDevicePtr, CUdeviceptr)
SAME(CuContext, CUcontext)
SAME(CuModule, CUmodule)
SAME(CuFunction, CUfunction)
SAME(CuStream, CUstream)
SAME(CuDeviceAttr, CUdevice_attribute)
SAME(CuFuncAttr, CUfunction_attribute)
SAME(CuJitOption, CUjit_option)
EOC
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$inc" -I"$top" -I"$top/rt" -c "$tmp/decls.c" \
    -o "$tmp/decls.o"; then
	echo "FAIL: rt/cuda_api.h disagrees with $inc/cuda.h"
	exit 1
fi
echo "rt/cuda_api.h agrees with $inc/cuda.h"

# the stub library (what the toolkit links against): cuInit fails with
# CUDA_ERROR_STUB_LIBRARY, which the launch's message must name
stubs=$inc/../lib64/stubs
if [ -f "$stubs/libcuda.so" ] && [ -x "$build/tests/unit/cuda_rt_test" ]; then
	LD_LIBRARY_PATH=$stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	    "$build/tests/unit/cuda_rt_test" stub || exit 1
fi
exit 0
