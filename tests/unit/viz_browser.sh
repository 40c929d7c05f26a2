#!/bin/sh
# viz_browser.sh: a txc viz page in a real browser.  Opens the tutorial's
# blur step 5 in headless Chromium at tick 0, after pressing "step" 40
# times through the page's controls (#steps=40), in the middle and at the
# end; checks that each drew without a console error (the page's
# #txc-status says "ok tick=N", and Chromium logs no uncaught error) and
# that the screenshots differ as the trace advances.  With TXC_UPDATE=1 the
# middle one becomes examples/tutorial/blur-5-fuse.png, the picture beside
# step 5 in the tutorial's README.  Skips (77) where no Chromium or Chrome
# is installed (.ci/run installs Debian's chromium).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
chrome=
for c in chromium chromium-browser google-chrome google-chrome-stable; do
	chrome=$(command -v "$c") && break
done
[ -n "$chrome" ] || { echo "SKIP: no chromium"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; exit 1; }
"$TXC" viz "$abs_top_srcdir/examples/tutorial/blur-5-fuse.tx" -D H=64 -D W=64 -o b5.html ||
	fail "txc viz exited $?"
ticks=$(sed -n 's/.*"ticks":\([0-9]*\).*/\1/p' b5.html)
mid=$((ticks / 2))
run() { # name hash expected-status
	# shellcheck disable=SC2086
	"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$tmp/profile" --window-size=1400,1000 --virtual-time-budget=5000 \
		--enable-logging=stderr --v=0 --dump-dom "file://$tmp/b5.html#$2" \
		>"$1.dom" 2>"$1.log" || fail "$1: chromium exited $?"
	grep -q "data-status=\"$3\"" "$1.dom" ||
		fail "$1: the page's status is not '$3': $(grep -o 'data-status="[^"]*"' "$1.dom")"
	! grep -iq 'uncaught' "$1.log" || { cat "$1.log"; fail "$1: a console error"; }
	"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
		--user-data-dir="$tmp/profile" --window-size=1400,1000 --virtual-time-budget=5000 \
		--screenshot="$tmp/$1.png" "file://$tmp/b5.html#$2" >/dev/null 2>&1 ||
		fail "$1: no screenshot"
	[ -s "$1.png" ] || fail "$1: an empty screenshot"
}
run start "tick=0" "ok tick=0"
run steps "tick=0&steps=40" "ok tick=40"
run middle "tick=$mid" "ok tick=$mid"
run end "tick=end" "ok tick=$ticks"
! cmp -s start.png steps.png && ! cmp -s steps.png middle.png && ! cmp -s middle.png end.png ||
	fail "the screenshots do not change as the trace advances"
if [ "${TXC_UPDATE:-0}" = 1 ]; then
	cp middle.png "$abs_top_srcdir/examples/tutorial/blur-5-fuse.png"
	echo "updated examples/tutorial/blur-5-fuse.png"
fi
exit 0
