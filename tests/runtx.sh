#!/bin/sh
# runtx.sh: runs one .tx test; the sibling file chooses the mode.
#
#   X.err    txc FLAGS X.tx (FLAGS default: --check); its stderr must
#            equal X.err, and txc must fail exactly when X.err holds an
#            error (an empty X.err: succeed quietly; warnings only: succeed)
#   X.out    txc FLAGS X.tx must succeed; its stdout must equal X.out
#   X.loops  txc --print-loops FLAGS X.tx; stdout must equal X.loops
#   X.c      txc --emit=c -o - FLAGS X.tx; stdout must equal X.c
#   X.run    the mode is the script: it runs with TX=X.tx (end-to-end tests)
#
# FLAGS come from a first-line comment `// flags: ...`.  The test runs in
# the .tx file's folder so that diagnostics name it as `X.tx`.  With
# TXC_UPDATE=1 the expected file is rewritten instead of compared.
# Exit 0 pass, 1 fail, 77 skip (automake's convention).
set -u
tx=$1
: "${TXC:?TXC must name the txc binary}"
dir=$(dirname "$tx")
base=$(basename "$tx" .tx)
cd "$dir" || exit 99
flags=$(sed -n '1s|^// *flags: *||p' "$base.tx")
# goldens show the nest a test's own schedule (or none) gives: a kernel
# without a schedule keeps its naive nest here unless the test asks for
# the generated one (-s auto); tests/auto/ holds the generator's goldens
noauto=--no-auto-schedule
case " $flags " in
*" -s auto "*|*" --print-auto-schedule"*) noauto= ;;
esac
case $flags in
viz*|bench*|tune*) noauto= ;;   # subcommands: their own options
esac
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

compare() { # expected actual
	if [ "${TXC_UPDATE:-0}" = 1 ]; then
		cp "$2" "$1"
		echo "updated $dir/$1"
		return 0
	fi
	if diff -u "$1" "$2"; then return 0; fi
	echo "FAIL: $dir/$base.tx: output differs from $1"
	return 1
}

if [ -f "$base.run" ]; then
	TX=$base.tx; export TX
	exec $SHELL "./$base.run"
elif [ -f "$base.err" ]; then
	"$TXC" --color=never $noauto ${flags:---check} "$base.tx" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	updating=${TXC_UPDATE:-0}
	if [ "$updating" != 1 ] && [ $rc -eq 0 ] && grep -q ': error: ' "$base.err"; then
		echo "FAIL: $dir/$base.tx: txc accepted a program that should be rejected"
		cat "$tmp/err"
		exit 1
	fi
	if [ "$updating" != 1 ] && [ $rc -ne 0 ] && ! grep -q ': error: ' "$base.err"; then
		echo "FAIL: $dir/$base.tx: txc rejected a program that should be accepted"
		cat "$tmp/err"
		exit 1
	fi
	if [ $rc -gt 1 ]; then
		echo "FAIL: $dir/$base.tx: txc exited $rc (crash or internal error)"
		cat "$tmp/err"
		exit 1
	fi
	compare "$base.err" "$tmp/err"
elif [ -f "$base.out" ]; then
	# shellcheck disable=SC2086
	"$TXC" $noauto $flags "$base.tx" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	compare "$base.out" "$tmp/out"
elif [ -f "$base.loops" ]; then
	# shellcheck disable=SC2086
	"$TXC" --print-loops --color=never $noauto $flags "$base.tx" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	compare "$base.loops" "$tmp/out"
elif [ -f "$base.c" ]; then
	# shellcheck disable=SC2086
	"$TXC" --emit=c -o - $noauto $flags "$base.tx" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
	compare "$base.c" "$tmp/out"
else
	echo "SKIP: $dir/$base.tx has no expected-output file"
	exit 77
fi
