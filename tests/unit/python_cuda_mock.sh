#!/bin/sh
# python_cuda_mock.sh: the txc Python package's target="cuda" calls in
# libtxrt's device mode, against the pretend CUDA driver
# (tests/unit/cuda_rt_mock.c, built here as libcuda.so.1 and put first on
# the loader path, as cuda_rt_mock.sh does): tests/python/test_cuda_mock.py.
# Skips (77) without python3 and numpy.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
. "$abs_top_srcdir/tests/python/pick.sh"
py=$(pick_python numpy) || { echo "SKIP: no python3 with numpy (Debian: python3-numpy)"; exit 77; }
python_skip_sanitized || exit 77
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
top=$abs_top_srcdir
if ! ${CC:-cc} -std=c11 -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$top" -I"$top/rt" \
    -o "$tmp/libcuda.so.1" "$top/tests/unit/cuda_rt_mock.c"; then
	echo "ERROR: cannot build the pretend driver"
	exit 99
fi
LD_LIBRARY_PATH=$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TXRT_CUDA=device \
TXC_CACHE_DIR=$tmp/cache PYTHONPATH=$top/python:$top/tests/python PYTHONDONTWRITEBYTECODE=1 \
	"$py" "$top/tests/python/test_cuda_mock.py"
