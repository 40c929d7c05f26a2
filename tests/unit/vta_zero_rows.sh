#!/bin/sh
# vta_zero_rows.sh: a convolution whose padding is at least its kernel
# (P >= R) has tiles that are all padding; txc loads their zeros from the
# stream's region of zeros and never writes a LOAD of no rows (y_size 0),
# whose DRAM address lay outside every region (0xfffffffe or 0) and which
# upstream's fsim aborts on (issue 36); every LOAD and STORE with columns
# addresses a region of the manifest.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; head -n 40 "$tmp/asm" 2>/dev/null; exit 1; }
for sz in 'H=1 W=1 R=1 P=1 S=1' 'H=4 W=3 R=3 P=3 S=1' 'H=2 W=5 R=1 P=2 S=2'; do
	# shellcheck disable=SC2086
	set -- $(echo "$sz" | sed 's/\([A-Z]*=\)/-D \1/g')
	"$TXC" --target=vta -k conv2d_vta -D CB=1 -D KB=1 "$@" --emit=vta-asm -o "$tmp/asm" \
	    "$abs_top_srcdir/stdlib/vta.tx" 2>"$tmp/err" || fail "$sz: txc exited $?"
	grep -E '^ +[0-9]+ +load +LOAD +INP .* y=0 ' "$tmp/asm" && fail "$sz: a LOAD of no rows"
	grep -q '(zeros)' "$tmp/asm" || fail "$sz: no region of zeros"
	# every LOAD/STORE with columns addresses a region: regions from the
	# header, addresses in units of the memory type's element
	awk '
	function hex(t,   v, i, c) {
		v = 0; t = tolower(t); sub(/^0x/, "", t)
		for (i = 1; i <= length(t); i++) {
			c = index("0123456789abcdef", substr(t, i, 1)) - 1
			if (c < 0) return -1
			v = v * 16 + c
		}
		return v
	}
	/^;   dram / { base[n] = hex($3); size[n] = $4; n++; next }
	/ (LOAD|STORE) / && !/ UOP / {
		eb = / WGT / ? 256 : / ACC / ? 64 : 16
		x = 0; d = -1
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^dram=/) d = hex(substr($i, 6))
			if ($i ~ /^x=/) x = substr($i, 3) + 0
		}
		if (x == 0 || d < 0) next
		a = d * eb; ok = 0
		for (r = 0; r < n; r++) if (a >= base[r] && a < base[r] + size[r]) ok = 1
		if (!ok) { print "outside every region: " $0; bad = 1 }
	}
	END { exit bad }' "$tmp/asm" || fail "$sz: an address outside every region"
done
exit 0
