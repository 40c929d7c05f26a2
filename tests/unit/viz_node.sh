#!/bin/sh
# viz_node.sh: the script of txc viz pages runs and draws, under Node with
# the fake DOM and software canvas of viz_dom.js: no exception, the
# controls step, step back, seek and play, and the pictures change as the
# trace advances (one page of one trace, one of two side by side, one
# with a 3-D tensor drawn as slices, one from the GPU tutorial).  Skips
# (77) where node is not installed; viz_browser.sh does the same in
# Chromium.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
node=$(command -v node || command -v nodejs) || { echo "SKIP: no node"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
tut=$abs_top_srcdir/examples/tutorial
st=0
page() { # name, then txc viz arguments
	name=$1
	shift
	if ! "$TXC" viz "$@" -o "$name.html" 2>err.txt; then
		echo "FAIL: txc viz $*"
		cat err.txt
		st=1
		return
	fi
	echo "== $name"
	"$node" "$abs_top_srcdir/tests/unit/viz_dom.js" "$name.html" "$name.png" || st=1
}
page blur5 "$tut/blur-5-fuse.tx" -D H=64 -D W=64
# TXC_UPDATE=1: its middle tick is the picture beside step 5 of the tutorial
# (examples/tutorial/blur-5-fuse.png; viz_browser.sh makes it in Chromium)
if [ "${TXC_UPDATE:-0}" = 1 ] && [ -s blur5.png ]; then
	cp blur5.png "$abs_top_srcdir/examples/tutorial/blur-5-fuse.png"
	echo "updated examples/tutorial/blur-5-fuse.png"
fi
page side "$abs_top_srcdir/tests/viz/side.tx" -D N=8 --schedules=default,tiled
page vta "$tut/vta-2-tile.tx" --target=vta -D O=2 -D N=2 -D M=2
page gpu "$tut/gpu-2-tile.tx" --target=cuda -D M=20 -D N=20 -D K=4
# the hash: a tick, and presses of "step" (what viz_browser.sh does in Chromium)
VIZ_DOM_HASH='#tick=3&steps=2' VIZ_DOM_EXPECT='ok tick=5' "$node" \
	"$abs_top_srcdir/tests/unit/viz_dom.js" blur5.html || st=1
VIZ_DOM_HASH='#tick=end' VIZ_DOM_EXPECT="ok tick=$(sed -n 's/.*"ticks":\([0-9]*\).*/\1/p' blur5.html)" \
	"$node" "$abs_top_srcdir/tests/unit/viz_dom.js" blur5.html || st=1
exit $st
