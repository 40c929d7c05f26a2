#!/bin/sh
# lint.sh: every man page renders without a warning.
#
# Each page under man/ goes through `groff -mandoc -ww -z` (all groff
# warnings on; groff exits 0 even when it warns, so any output on stderr is
# a failure) and, when mandoc is installed, `mandoc -T lint -W warning`:
# mandoc's messages of level warning, error and unsupported fail the test;
# its "style:" messages (suggestions such as a missing .Xr target among the
# installed pages, which depends on the machine) are not shown at this level
# and do not count.  groff also formats each page for a terminal of 78 and
# 80 columns, as man(1) does, where a table too wide for the line gives
# "can't break line".  Exit 0 pass, 1 fail, 77 skip (no groff).
set -u
: "${abs_top_srcdir:?abs_top_srcdir must name the source tree}"
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed"; exit 77; }
have_mandoc=no
command -v mandoc >/dev/null 2>&1 && have_mandoc=yes

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0 n=0
for page in "$abs_top_srcdir"/man/*.[1-9]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	name=${page##*/}
	bad=0
	groff -mandoc -ww -z "$page" 2>"$tmp/err" >/dev/null
	for width in 78n 80n; do
		groff -mandoc -Tutf8 -rLL=$width -ww -z "$page" 2>>"$tmp/err" >/dev/null
	done
	if [ -s "$tmp/err" ]; then
		echo "FAIL: groff warns on man/$name:"
		sort -u "$tmp/err"
		bad=1
	fi
	if [ $have_mandoc = yes ]; then
		mandoc -T lint -W warning "$page" >"$tmp/err" 2>&1
		if [ -s "$tmp/err" ]; then
			echo "FAIL: mandoc warns on man/$name:"
			cat "$tmp/err"
			bad=1
		fi
	fi
	if [ $bad -eq 0 ]; then echo "ok: man/$name"; else status=1; fi
done
[ $have_mandoc = yes ] || echo "note: mandoc is not installed; only groff checked the pages"
[ $n -gt 0 ] || { echo "FAIL: no man pages under $abs_top_srcdir/man"; exit 1; }
exit $status
