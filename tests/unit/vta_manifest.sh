#!/bin/sh
# vta_manifest.sh: --emit=vta-bin's manifest gives each DRAM region the
# shape it holds (txc(1) VTA): the input region of a 1x1 convolution of
# stride 2 over 56x56 pixels holds the 55x55 rows and columns it reads,
# not the tensor's 56x56, and its byte count is that shape's (issue 36).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err" "$tmp"/out.vta/*.manifest 2>/dev/null; exit 1; }
"$TXC" --target=vta -k conv2d_vta -D CB=1 -D KB=1 -D H=56 -D W=56 -D R=1 -D P=0 -D S=2 \
	--emit=vta-bin -o "$tmp/out.vta" "$abs_top_srcdir/stdlib/vta.tx" 2>"$tmp/err" ||
	fail "txc --emit=vta-bin exited $?"
m=$tmp/out.vta/conv2d_vta.manifest
[ -f "$m" ] || fail "no manifest"
grep -q '^# region: physical address, bytes, direction, tensor, shape held$' "$m" ||
	fail "the manifest's header does not name the shape"
grep -qx 'region 0x2000 48400 in xp i8\[1, 55, 55, 16\]' "$m" || fail "xp's region: no 55x55 shape"
grep -qx 'region 0x10000 12544 out yp i8\[1, 28, 28, 16\]' "$m" || fail "yp's region: no shape"
grep -Eqx 'region 0x1000 [0-9]+ in \(micro-ops\) u32\[[0-9]+\]' "$m" || fail "micro-ops: no shape"
exit 0
