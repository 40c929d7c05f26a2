#!/bin/sh
# knob_points.sh: every knob point of the stdlib's schedule templates
# (matmul's and conv2d's register blocks, the tuned matmul's cache blocks,
# the GPU schedules' shared tiles, the VTA matmul's tiles) computes what
# the unscheduled kernel computes: `txc bench -K ...` checks each point
# once on random data at sizes no tile divides (cuda points run in
# libtxrt's emulator, vta points in its simulator).  The templates' own
# lists are read from the stdlib, so a knob added there is covered.
: "${TXC:?TXC must name the txc binary}"
top=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
TXRT_CUDA=emulate; export TXRT_CUDA
fail=0
n=0

# The knobs of the schedule that starts at the line matching $2 in $1, as
# "name=v1,v2,..." words.
knobs() {
	awk -v start="$2" '
		index($0, start) == 1 { on = 1; next }
		on && /^}/ { exit }
		on && $1 == "knob" { v = $0; sub(/.*\[/, "", v); sub(/\].*/, "", v); gsub(/ /, "", v); print $2 "=" v }
	' "$1"
}

# points FILE START ARGS...: bench every point of the template.
points() {
	file=$1 start=$2
	shift 2
	ks=$(knobs "$file" "$start")
	[ -n "$ks" ] || { echo "FAIL: no knobs in '$start' of $file"; fail=$((fail + 1)); return; }
	# the cartesian product, one line of -K arguments per point
	echo "" >"$tmp/pts"
	for k in $ks; do
		name=${k%%=*}
		vals=$(echo "${k#*=}" | tr ',' ' ')
		: >"$tmp/next"
		while read -r p; do
			for v in $vals; do echo "$p -K $name=$v" >>"$tmp/next"; done
		done <"$tmp/pts"
		mv "$tmp/next" "$tmp/pts"
	done
	while read -r p; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		if ! "$TXC" bench "$file" "$@" $p --runs=1 --warmup=0 --threads=2 >"$tmp/out" 2>&1; then
			echo "FAIL: txc bench $file $* $p"
			cat "$tmp/out"
			fail=$((fail + 1))
		fi
	done <"$tmp/pts"
}

s=$top/stdlib
points "$s/matmul.tx" "schedule matmul for cpu" -k matmul -D M=13 -D N=37 -D K=19
points "$s/conv2d.tx" "schedule conv2d_nchw for cpu" -k conv2d_nchw -D N=1 -D C=3 -D H=5 -D W=29 -D K=7
points "$s/tuned/matmul.tx" "schedule matmul as fast for cpu" -k matmul -s fast -D M=61 -D N=700 -D K=530
points "$s/matmul.tx" "schedule matmul for cuda" -k matmul --target=cuda -D M=13 -D N=37 -D K=19
points "$s/conv2d.tx" "schedule conv2d_nchw for cuda" -k conv2d_nchw --target=cuda -D N=1 -D C=5 -D H=3 -D W=9 -D K=3
points "$s/vta.tx" "schedule matmul_vta for vta" -k matmul_vta --target=vta -D M=21 -D NB=3 -D KB=5
echo "$n knob points, $fail failed"
[ $fail -eq 0 ]
