#!/bin/sh
# vta_resnet.sh: the ResNet-18 convolutions C2-C11 on VTA (make bench-vta).
#
# For each layer of TVM's VTA benchmark (VTA-ISA.md 7: H, W, Cin, Cout,
# kernel, padding, stride; batch 1; the epilogue >> 8, + bias, clip to
# [0, 127], int8), `txc bench --target=vta` compiles stdlib/vta.tx's
# conv2d_vta with and without virtual threads (schedules default and
# serial), runs each stream in libtxrt's simulator, checks the result
# against the CPU exactly, and reads the simulator's statistics: GEMM
# micro-ops (the minimum is OH*OW*Cout/16*Cin/16*K*K, every MAC once) and
# the cycle model's time and GEMM utilisation (GEMM 1 micro-op a cycle,
# ALU 1 per 2, DMA 8 bytes a cycle plus a fixed latency; libtxrt(3)).
# The table is the result; nothing is asserted here (tests/run/vta_resnet
# checks the results and the micro-op counts).
#
# Environment: TXC (default ./txc), abs_top_srcdir (default .).
set -u
TXC=${TXC:-./txc}
src=${abs_top_srcdir:-.}
printf 'VTA (libtxrt simulator, default configuration 1x16_i8w8a32, cycle model at 100 MHz)\n'
printf '%-4s %-22s %10s %10s | %11s %6s | %11s %6s | %s\n' layer "H,W,Cin,Cout,K,P,S" "GEMM uops" minimum \
    "cycles" "util" "cycles" "util" "vthreads/serial"
printf '%-4s %-22s %10s %10s | %18s | %18s |\n' "" "" "" "" "2 virtual threads" "serial"
status=0
while read -r name h w cin cout k p s; do
	[ -n "$name" ] || continue
	oh=$(( (h + 2 * p - k) / s + 1 ))
	ow=$(( (w + 2 * p - k) / s + 1 ))
	min=$(( oh * ow * (cout / 16) * (cin / 16) * k * k ))
	out=$("$TXC" bench --target=vta --tolerance=0 --schedules=default,serial -k conv2d_vta \
	    -D CB=$((cin / 16)) -D KB=$((cout / 16)) -D H=$h -D W=$w -D R=$k -D P=$p -D S=$s \
	    "$src/stdlib/vta.tx" 2>&1) || { echo "$name: txc bench failed:"; echo "$out"; status=1; continue; }
	row() { echo "$out" | awk -v s="$1" '$1 == s && $2 ~ /^[0-9]+$/ { print $3, $5, $6; exit }'; }
	set -- $(row default)
	uops=$1 cyc=$2 util=$3
	set -- $(row serial)
	printf '%-4s %-22s %10s %10s | %11s %6s | %11s %6s | %.2fx\n' "$name" "$h,$w,$cin,$cout,$k,$p,$s" \
	    "$uops" "$min" "$cyc" "$util" "$2" "$3" "$(echo "$2 $cyc" | awk '{ printf "%.2f", $1 / $2 }')"
done <<'LAYERS'
C2 56 56 64 64 3 1 1
C3 56 56 64 128 3 1 2
C4 56 56 64 128 1 0 2
C5 28 28 128 128 3 1 1
C6 28 28 128 256 3 1 2
C7 28 28 128 256 1 0 2
C8 14 14 256 256 3 1 1
C9 14 14 256 512 3 1 2
C10 14 14 256 512 1 0 2
C11 7 7 512 512 3 1 1
LAYERS
exit $status
