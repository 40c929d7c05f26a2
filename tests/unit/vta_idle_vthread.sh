#!/bin/sh
# vta_idle_vthread.sh: a virtual thread with no outputs left (stdlib/vta.tx's
# C2 plan splits the output blocks by two virtual threads; with KB = 1 or
# 3 the last pair has one thread past the end) loads no input or weight
# tiles (issue 36 item 8: it loaded its input tile for GEMMs that never
# ran).  The loads of INP then grow with the output blocks: KB = 1 makes
# half of KB = 2's, KB = 3 three halves.  vta_stdlib.run runs KB = 3 in
# the simulator against the CPU.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
count() { # KB WHAT: LOADs of WHAT (INP, WGT) in the C2 stream
	"$TXC" --target=vta -k conv2d_vta -D CB=1 -D KB="$1" -D H=56 -D W=56 -D R=3 -D P=1 -D S=1 \
	    --emit=vta-asm -o "$tmp/asm" "$abs_top_srcdir/stdlib/vta.tx" || { echo "FAIL: txc exited $?"; exit 1; }
	grep -cE "^ +[0-9]+ +load +LOAD +$2 " "$tmp/asm"
}
fails=0
for what in INP WGT; do
	n1=$(count 1 $what) n2=$(count 2 $what) n3=$(count 3 $what)
	echo "LOAD $what: KB=1 $n1, KB=2 $n2, KB=3 $n3"
	if [ $((2 * n1)) -ne "$n2" ] || [ $((2 * n3)) -ne $((3 * n2)) ]; then
		echo "FAIL: LOAD $what does not grow with the output blocks (an idle virtual thread loads)"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ]
