#!/bin/sh
# options.sh: every option that `txc --help` prints is documented in
# txc(1).
#
# Options are the words of the help text that start with "--" (up to "="
# or a space) and the one-letter "-X" words (with digits, as in -O2) that
# follow a space or a comma.  Each must appear as a whole word in the text
# of man/txc.1 as mandoc (or groff) renders it.  Skips (77) while txc has
# no --help.
set -u
: "${TXC:?TXC must name the txc binary}"
: "${abs_top_srcdir:?abs_top_srcdir must name the source tree}"
help=$("$TXC" --help 2>/dev/null) || { echo "SKIP: txc --help fails"; exit 77; }
case $help in
*--help*) ;;
*) echo "SKIP: txc --help does not list options yet"; exit 77 ;;
esac

page=$abs_top_srcdir/man/txc.1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
bs=$(printf '\b')
if command -v mandoc >/dev/null 2>&1; then
	mandoc -T ascii -O width=200 "$page" >"$tmp/raw" || exit 1
elif command -v groff >/dev/null 2>&1; then
	groff -mandoc -T ascii -rLL=200n "$page" >"$tmp/raw" 2>/dev/null || exit 1
else
	echo "SKIP: neither mandoc nor groff is installed"
	exit 77
fi
sed "s/.$bs//g" "$tmp/raw" >"$tmp/text"

printf '%s\n' "$help" |
	sed -e 's/^/ /' |
	grep -o -E -e '--[A-Za-z0-9][-A-Za-z0-9]*' -e '[ ,]-[A-Za-z][0-9]*' |
	sed -e 's/^[ ,]//' | sort -u >"$tmp/opts"

status=0 n=0
while IFS= read -r opt; do
	n=$((n + 1))
	if ! grep -q -E -e "(^|[^-A-Za-z0-9])$opt([^-A-Za-z0-9]|\$)" "$tmp/text"; then
		echo "FAIL: txc --help lists $opt, but man/txc.1 does not document it"
		status=1
	fi
done <"$tmp/opts"
echo "$n options checked"
[ $n -gt 0 ] || { echo "FAIL: no options found in txc --help"; status=1; }
exit $status
