#!/bin/sh
# python_numpy.sh: the txc Python package (python/txc, txc-python(7)) on
# numpy arrays: tests/python/test_numpy.py, run by an interpreter that has
# numpy (tests/python/pick.sh), with the package from the source tree,
# this build's txc (through a wrapper that logs each run, so the test sees
# when a load compiled), a fresh cache directory, and TXRT_CUDA=emulate
# for target='cuda'.  Skips (77) without python3 or numpy.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}" "${abs_top_builddir:?}"
. "$abs_top_srcdir/tests/python/pick.sh"
py=$(pick_python numpy) || { echo "SKIP: no python3 with numpy (Debian: python3-numpy)"; exit 77; }
python_skip_sanitized || exit 77
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/txc" <<SH
#!/bin/sh
echo "\$*" >>"$tmp/runs.log"
exec "$TXC" "\$@"
SH
chmod +x "$tmp/txc"
: >"$tmp/runs.log"
echo "python: $py"
TXC=$tmp/txc TXC_COUNT_LOG=$tmp/runs.log TXC_CACHE_DIR=$tmp/cache TXRT_CUDA=emulate \
PYTHONPATH=$abs_top_srcdir/python PYTHONDONTWRITEBYTECODE=1 \
	"$py" "$abs_top_srcdir/tests/python/test_numpy.py"
[ $? -eq 0 ] || exit 1
# the example of examples/python, against numpy
TXC=$TXC TXC_CACHE_DIR=$tmp/cache PYTHONPATH=$abs_top_srcdir/python PYTHONDONTWRITEBYTECODE=1 \
	"$py" "$abs_top_srcdir/examples/python/numpy_example.py"
