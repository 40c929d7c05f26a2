#!/bin/sh
# roundtrip.sh: --format must be a fixed point and must keep the tree.
#
# For every .tx program in examples/, stdlib/, tests/run/ and tests/loops/
# and every hand-written input tests/format/*.txin:
#   txc --format F | txc --format -      equals   txc --format F
#   txc --dump-ast F   and   txc --dump-ast (formatted F)   agree once the
#   " @LINE:COL-LINE:COL" locations and the file name are stripped.
# Exit 0 pass, 1 fail, 77 skip (no txc).
set -u
: "${TXC:?TXC must name the txc binary}"
[ -x "$TXC" ] || { echo "SKIP: $TXC not built"; exit 77; }
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

strip() {
	sed -e 's/ @[0-9]*:[0-9]*-[0-9]*:[0-9]*$//' -e '1s/^Program .*/Program/' "$1"
}

n=0
fail=0
for f in "$top"/examples/*.tx "$top"/examples/*/*.tx "$top"/stdlib/*.tx \
    "$top"/tests/run/*.tx "$top"/tests/loops/*.tx "$top"/tests/format/*.txin; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	if ! "$TXC" --format "$f" >"$tmp/a.tx" 2>"$tmp/err"; then
		echo "FAIL: $f: txc --format failed"
		cat "$tmp/err"
		fail=$((fail + 1))
		continue
	fi
	if ! "$TXC" --format - <"$tmp/a.tx" >"$tmp/b.tx" 2>"$tmp/err" ||
	    ! cmp -s "$tmp/a.tx" "$tmp/b.tx"; then
		echo "FAIL: $f: formatting the formatted text changes it"
		cat "$tmp/err"
		diff -u "$tmp/a.tx" "$tmp/b.tx" | head -40
		fail=$((fail + 1))
		continue
	fi
	"$TXC" --dump-ast "$f" >"$tmp/d1" 2>/dev/null
	"$TXC" --dump-ast "$tmp/a.tx" >"$tmp/d2" 2>/dev/null
	strip "$tmp/d1" >"$tmp/s1"
	strip "$tmp/d2" >"$tmp/s2"
	if [ ! -s "$tmp/s1" ] || ! cmp -s "$tmp/s1" "$tmp/s2"; then
		echo "FAIL: $f: the formatted program parses to a different tree"
		diff -u "$tmp/s1" "$tmp/s2" | head -40
		fail=$((fail + 1))
	fi
done
echo "roundtrip: $n files, $fail failed"
[ "$fail" -eq 0 ]
