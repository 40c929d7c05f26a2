#!/bin/sh
# viz.sh: txc viz from the command line: the page is one self-contained
# file (the style, the script and the trace inline; no src=, href= or
# URL), --schedules puts two traces side by side, --frames writes SVG
# frames that change as the trace advances, and bad input fails at once
# with a message: a missing or unknown size, sizes too large for a picture
# (the limit named, no page written, no hang).  Several files are drawn
# side by side, and every option of txc viz --help is in txc(1).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
tut=$abs_top_srcdir/examples/tutorial

# the page
"$TXC" viz "$tut/blur-5-fuse.tx" -D H=40 -D W=40 -o b5.html >out.txt 2>err.txt ||
	fail "txc viz exited $?"
[ -s b5.html ] && [ ! -s out.txt ] && [ ! -s err.txt ] || fail "no page, or output besides it"
head -1 b5.html | grep -q '^<!DOCTYPE html>$' || fail "not an HTML page"
[ "$(grep -c '<script' b5.html)" = 2 ] || fail "expected the data and the script elements"
grep -q '<script type="application/json" id="txc-data">' b5.html || fail "no trace data"
grep -q '<style>' b5.html || fail "no inline style"
! grep -Eiq '(src|href)[[:space:]]*=|https?://|@import|url\(' b5.html ||
	fail "the page refers to something outside it"
grep -q '"schedule":"default"' b5.html || fail "no schedule name"
grep -q '"loops":\["func blur(H, W, input, output) {"' b5.html || fail "no loop nest"
grep -q 'parallel (yo, 0, (H + 31)/32) {' b5.html || fail "the nest is not --print-loops'"
grep -q '"name":"blur_x","role":"stage"' b5.html || fail "no blur_x stage"
# the default name: FILE.html here
"$TXC" viz "$tut/blur-1-naive.tx" -D H=4 -D W=4 2>err.txt && [ -s blur-1-naive.html ] ||
	fail "no blur-1-naive.html"

# side by side: two traces, and the numbers of both with --stats
"$TXC" viz "$abs_top_srcdir/tests/viz/side.tx" -D N=8 --schedules=default,tiled -o side.html \
	2>err.txt || fail "--schedules failed"
[ "$(grep -o '"kernel":"copy2"' side.html | wc -l)" = 2 ] || fail "not two traces in side.html"
grep -q '"schedule":"tiled"' side.html || fail "no trace of schedule tiled"
"$TXC" viz "$abs_top_srcdir/tests/viz/side.tx" -D N=8 --schedules=default,tiled --stats \
	>out.txt 2>err.txt || fail "--schedules --stats failed"
grep -q '^copy2 (default): N=8$' out.txt && grep -q '^copy2 (tiled): N=8$' out.txt ||
	fail "--stats did not print both schedules"

# several files: one panel each, named by its file (the tutorial's steps)
"$TXC" viz "$tut/blur-4-tile.tx" "$tut/blur-5-fuse.tx" -D H=8 -D W=8 -o two.html 2>err.txt ||
	fail "two files failed"
[ "$(grep -o '"kernel":"blur","schedule":"blur-[45]-[a-z]*.tx"' two.html | wc -l)" = 2 ] ||
	fail "not a panel for each of two files"

# every option of txc viz --help is in txc(1)
sed -n '/^\.Sh VIZ/,/^\.Sh CUDA/p' "$abs_top_srcdir/man/txc.1" >viz.1
for opt in $("$TXC" viz --help | grep -o -E -e '--[a-z][-a-z]*' | sort -u); do
	grep -q "^\.It Fl Fl ${opt#--}" viz.1 || fail "txc.1's VIZ does not document txc viz $opt"
done

# frames
"$TXC" viz "$tut/blur-5-fuse.tx" -D H=40 -D W=40 --frames=3 -o fr >out.txt 2>err.txt ||
	fail "--frames exited $?"
for i in 001 002 003; do
	[ -s fr-$i.svg ] || fail "no fr-$i.svg"
	head -1 fr-$i.svg | grep -q '^<?xml' && tail -1 fr-$i.svg | grep -q '^</svg>$' ||
		fail "fr-$i.svg is not a whole SVG file"
done
! cmp -s fr-001.svg fr-002.svg && ! cmp -s fr-002.svg fr-003.svg || fail "the frames do not change"
[ ! -e fr.html ] || fail "--frames wrote a page too"

# bad input: one line, exit status 1, nothing written, at once
expect_error() { # message-pattern args...
	pat=$1
	shift
	rm -f bad.html
	"$TXC" viz "$@" -o bad.html >out.txt 2>err.txt
	rc=$?
	[ $rc = 1 ] || fail "txc viz $*: exit status $rc, not 1"
	grep -q "$pat" err.txt || fail "txc viz $*: no message like '$pat'"
	[ ! -e bad.html ] || fail "txc viz $*: wrote a page"
}
expect_error "size 'W' needs a value: txc viz -D W=N" "$tut/blur-1-naive.tx" -D H=4
expect_error "kernel 'blur' has no parameter 'Q'" "$tut/blur-1-naive.tx" -D H=4 -D W=4 -D Q=1
expect_error "size 'H' is 1000000: txc viz draws sizes up to 65536 elements a tensor" \
	"$tut/blur-1-naive.tx" -D H=1000000 -D W=4
expect_error "'input' has more than 65536 elements at these sizes (the limit for a picture)" \
	"$tut/blur-1-naive.tx" -D H=1000 -D W=1000
expect_error "more than 1000000 loads and stores at these sizes (the limit for a picture)" \
	"$tut/matmul-1-naive.tx" -D M=200 -D N=200 -D K=200
expect_error "bad --frames" "$tut/blur-1-naive.tx" -D H=4 -D W=4 --frames=0
expect_error "the kernel fails at these sizes" "$abs_top_srcdir/tests/viz/side.tx" -D N=7 -s tiled
exit 0
