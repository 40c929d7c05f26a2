# cuda_env.sh: the set-up the CUDA tests that link against libtxrt share,
# sourced after their check of TXC, abs_top_builddir and abs_top_srcdir:
# lib (the static libtxrt; the test skips, 77, without it), ptxas (empty
# where there is none: each test skips its part), txcmp, top (the source
# tree), and a scratch folder tmp, removed at exit, as the current
# directory.
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
ptxas=$(command -v ptxas 2>/dev/null || true)
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
txcmp=$abs_top_builddir/tests/tools/txcmp
top=$abs_top_srcdir
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
