#!/bin/sh
# man_libtxrt.sh: man/libtxrt.3 renders without a warning from groff and
# mandoc (both exit 0 on warnings, so any output on stderr fails).
page=${abs_top_srcdir:-.}/man/libtxrt.3
tmp=$(mktemp) || exit 99
trap 'rm -f "$tmp"' EXIT
ran=0
if command -v groff >/dev/null 2>&1; then
	groff -mandoc -ww -z "$page" 2>"$tmp"
	if [ -s "$tmp" ]; then cat "$tmp"; exit 1; fi
	ran=1
fi
if command -v mandoc >/dev/null 2>&1; then
	# -Wwarning: STYLE notes about manuals not installed yet are not errors
	mandoc -Tlint -Wwarning "$page" 2>&1 | grep -v 'outdated mandoc.db' >"$tmp"
	if [ -s "$tmp" ]; then cat "$tmp"; exit 1; fi
	ran=1
fi
[ $ran = 1 ] || exit 77
