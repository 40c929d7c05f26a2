#!/bin/sh
# python_torch.sh: the txc Python package on PyTorch tensors
# (tests/python/test_torch.py), then examples/python/torch_example.py;
# run by an interpreter that has torch (Debian: python3-torch), else
# skipped (77).  CUDA tensors are tested where torch sees a GPU.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
. "$abs_top_srcdir/tests/python/pick.sh"
py=$(pick_python torch) || { echo "SKIP: no python3 with PyTorch (Debian: python3-torch)"; exit 77; }
python_skip_sanitized || exit 77
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
echo "python: $py"
export TXC TXC_CACHE_DIR=$tmp/cache PYTHONPATH=$abs_top_srcdir/python PYTHONDONTWRITEBYTECODE=1
"$py" "$abs_top_srcdir/tests/python/test_torch.py" || exit 1
"$py" "$abs_top_srcdir/examples/python/torch_example.py"
