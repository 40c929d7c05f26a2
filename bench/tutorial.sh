#!/bin/sh
# tutorial.sh: `make tutorial`: the bench table of every step of the
# scheduling tutorial (examples/tutorial/), in one run.
#
#     bench/tutorial.sh [--repeat=N] [--series=matmul,blur,gpu,vta]
#
# For each series, each step's schedule is timed with `txc bench` at the
# tutorial's sizes (matmul 1024^3, blur 2048 x 2048; a step without a
# schedule is timed as an empty schedule, the same way as the others),
# and printed with its time, GFLOP/s, its share of the machine's fp32
# FMA peak measured in the same run (bench/peak.c, all threads), and its
# speed-up over the step before (the ratio of their times; the references
# are compared with the series' last step).  The matmul series ends with the
# stdlib's tuned matmul (stdlib/tuned/matmul.tx -s fast), the blur series
# with the stdlib's blur3x3 and, where Halide 14 is installed, Halide's
# (each series also times the schedule txc generates for its naive step,
# -s auto: txc-schedule(7) AUTO-SCHEDULING, after the hand steps)
# schedule of the same blur (bench/halide_gen.cpp), as points of
# comparison; GFLOP/s count 8 operations a pixel for every blur.  The GPU series runs
# on the GPU where there is one (`txc bench --target=cuda`; without one
# its steps are checked in libtxrt's emulator and not timed), the VTA
# series in libtxrt's simulator, in modelled cycles and GEMM utilisation
# (`txc bench --target=vta`, 64 x 64 x 64).  The table is
# printed N times (default 2) so that the machine's noise shows.  Nothing
# is asserted: this is a benchmark (README.md of the tutorial shows one
# run and the machine it came from).
# Environment: TXC, CC, abs_top_srcdir; TXC_THREADS (default: libtxrt's).
set -u
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
TXC=${TXC:-$srcdir/txc}
CC=${CC:-cc}
repeat=2
series="matmul blur gpu vta"
for a in "$@"; do
	case $a in
	--repeat=*) repeat=${a#--repeat=} ;;
	--series=*) series=$(echo "${a#--series=}" | tr , ' ') ;;
	*) echo "usage: tutorial.sh [--repeat=N] [--series=matmul,blur,gpu,vta]" >&2; exit 2 ;;
	esac
done
[ -x "$TXC" ] || { echo "tutorial.sh: no txc at $TXC" >&2; exit 2; }
tut=$srcdir/examples/tutorial
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-tutorial.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
threads=
[ -n "${TXC_THREADS:-}" ] && threads=--threads=$TXC_THREADS

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
isa=$(grep -o -w 'avx512f\|avx2\|fma' /proc/cpuinfo 2>/dev/null | sort -u | tr '\n' ' ')
echo "tutorial: ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') cores, ${isa:-no AVX}"
peak=
if $CC -O2 -mavx2 -mfma -pthread "$srcdir/bench/peak.c" -o "$work/peak" 2>/dev/null; then
	"$work/peak" "$(nproc 2>/dev/null || echo 1)" >"$work/peak.txt" 2>/dev/null
	peak=$(awk '/peak_gflops_[0-9]+T/ { if ($2 > m) m = $2 } END { if (m) print m }' "$work/peak.txt")
fi
if [ -n "$peak" ]; then
	echo "fp32 FMA peak, all cores: $peak GFLOP/s (bench/peak.c, this run)"
else
	echo "fp32 FMA peak: not measured (bench/peak.c needs AVX2 and FMA)"
fi

# Halide 14's schedule of the same blur (bench/halide_gen.cpp: Halide's
# own line-buffered schedule), where libhalide14-0-dev is installed, as
# bench/run.sh builds it (AVX2 target)
halide=
if [ -f /usr/include/halide14/Halide.h ] && [ -f /usr/src/halide14/GenGen.cpp ] &&
	(cd "$work" && c++ -O1 -std=c++17 -I/usr/include/halide14 "$srcdir/bench/halide_gen.cpp" \
	    /usr/src/halide14/GenGen.cpp -o halide_gen -lHalide14 -lpthread -ldl &&
	 ./halide_gen -g halide_matmul -o . -e static_library,h target=x86-64-linux-avx-avx2-f16c-fma-sse41 &&
	 ./halide_gen -g halide_blur -o . -e static_library,h target=x86-64-linux-avx-avx2-f16c-fma-sse41 &&
	 $CC -O2 -I/usr/include/halide14 -I. -I"$srcdir/bench" -I"$srcdir/rt" "$srcdir/bench/halide_run.c" halide_matmul.a \
	    halide_blur.a -o halide_run -lpthread -ldl -lm) >"$work/halide.log" 2>&1; then
	halide=$work/halide_run
fi

# halide_step: Halide's blur at 2048 x 2048 (its own timing: bench/bench.h)
halide_step() {
	label="Halide 14 blur (reference)"
	if [ -z "$halide" ]; then
		printf '%-34s %s\n' "$label" "not run (apt-get install -y libhalide14-0-dev)"
		return
	fi
	n=${TXC_THREADS:-$(nproc 2>/dev/null || echo 1)}
	line=$(BENCH_THREADS=$n HL_NUM_THREADS=$n "$halide" blur 2050 2050 2>/dev/null | tail -n 1)
	ms=$(echo "$line" | sed -n 's/.* ms=\([0-9.]*\).*/\1/p')
	[ -n "$ms" ] || { printf '%-34s %s\n' "$label" "failed"; return; }
	# GFLOP/s as txc bench counts the same blur (the row before)
	gf=-
	[ -n "$flops" ] && gf=$(awk -v f="$flops" -v t="$ms" 'BEGIN { printf "%.2f", f / t }')
	pct=-
	[ -n "$peak" ] && [ "$gf" != - ] && pct=$(awk -v g="$gf" -v p="$peak" 'BEGIN { printf "%.1f%%", 100 * g / p }')
	up=-
	[ -n "$prev" ] && up=$(awk -v t="$ms" -v p="$prev" 'BEGIN { printf "%.2fx", p / t }')
	printf '%-34s %10s ms %9s GFLOP/s %7s %8s\n' "$label" "$ms" "$gf" "$pct" "$up"
}

# step LABEL FILE SIZES [SCHEDULE]: one row; the file's kernel is its first
step() {
	label=$1 file=$2 sizes=$3 sched=${4:-default}
	kernel=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$file" | head -n 1)
	timed=$file
	if [ "$sched" = default ] && ! grep -q "^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}for[[:space:]]\{1,\}cpu" "$file"; then
		# no schedule: an empty one, timed like the others (imports of
		# the copy resolve through -I the original's folder)
		timed=$work/step.tx
		cp "$file" "$timed" && printf '\nschedule %s as none for cpu {\n}\n' "$kernel" >>"$timed"
		sched=none
	fi
	dflags=
	for s in $sizes; do dflags="$dflags -D $s"; done
	# shellcheck disable=SC2086
	if ! "$TXC" bench --best -I "$(dirname "$file")" -I "$srcdir/stdlib" -k "$kernel" --schedules="$sched" $threads $dflags \
	    "$timed" >"$work/bench.txt" 2>&1; then
		printf '%-34s %s\n' "$label" "txc bench failed: $(tail -n 1 "$work/bench.txt")"
		prev=
		return
	fi
	line=$(awk -v r="$sched" '$1 == r' "$work/bench.txt")
	ms=$(echo "$line" | awk '{ print $2 }')
	gf=$(echo "$line" | awk '{ print $4 }')
	pct=-
	[ -n "$peak" ] && pct=$(awk -v g="$gf" -v p="$peak" 'BEGIN { printf "%.1f%%", 100 * g / p }')
	up=-
	[ -n "$prev" ] && up=$(awk -v t="$ms" -v p="$prev" 'BEGIN { printf "%.2fx", p / t }')
	printf '%-34s %10s ms %9s GFLOP/s %7s %8s\n' "$label" "$ms" "$gf" "$pct" "$up"
	flops=$(awk -v g="$gf" -v t="$ms" 'BEGIN { print g * t }')
	case $label in
	*"(reference)"*) ;;
	*) prev=$ms ;;
	esac
}

# run_target TARGET LABEL FILE SIZES: txc bench --target=TARGET on a file
# into $work/bench.txt, and its default row into $line; false (with a row
# saying so) when it fails
run_target() {
	target=$1 label=$2 file=$3
	dflags=
	for s in $4; do dflags="$dflags -D $s"; done
	# shellcheck disable=SC2086
	if ! "$TXC" bench --target="$target" -I "$srcdir/stdlib" $dflags "$file" >"$work/bench.txt" 2>&1; then
		printf '%-34s %s\n' "$label" "txc bench failed: $(tail -n 1 "$work/bench.txt")"
		prev=
		return 1
	fi
	line=$(awk '$1 == "default"' "$work/bench.txt")
}

# gpu_step LABEL FILE SIZES: a cuda step (its time on a GPU, or "emulated")
gpu_step() {
	run_target cuda "$@" || return
	case $line in
	*emulated*)
		printf '%-34s %13s\n' "$1" "emulated (no GPU): result checked, not timed"
		prev=
		return
		;;
	esac
	ms=$(echo "$line" | awk '{ print $2 }')
	gf=$(echo "$line" | awk '{ print $4 }')
	up=-
	[ -n "$prev" ] && up=$(awk -v t="$ms" -v p="$prev" 'BEGIN { printf "%.2fx", p / t }')
	printf '%-34s %10s ms %9s GFLOP/s %7s %8s\n' "$1" "$ms" "$gf" "-" "$up"
	prev=$ms
}

# vta_step LABEL FILE SIZES: a VTA step in the simulator's cycle model
vta_step() {
	run_target vta "$@" || return
	cyc=$(echo "$line" | awk '{ print $5 }')
	util=$(echo "$line" | awk '{ print $6 }')
	up=-
	[ -n "$prev" ] && up=$(awk -v c="$cyc" -v p="$prev" 'BEGIN { printf "%.2fx", p / c }')
	printf '%-34s %13s cycles %8s GEMM %8s\n' "$1" "$cyc" "$util" "$up"
	prev=$cyc
}

# header TITLE: a series' column heads
header() {
	echo
	printf '%-34s %13s %17s %7s %8s\n' "$1" "time" "rate" "peak" "vs prev"
	prev=
}

table() {
	for s in $series; do
		case $s in
		matmul)
			sz='M=1024 N=1024 K=1024'
			header "matmul 1024^3"
			for f in "$tut"/matmul-[0-9]*.tx; do
				step "$(basename "$f" .tx)" "$f" "$sz"
			done
			step "auto: txc's generated schedule" "$tut/matmul-1-naive.tx" "$sz" auto
			step "tuned/matmul.tx -s fast (reference)" "$srcdir/stdlib/tuned/matmul.tx" "$sz" fast
			;;
		blur)
			sz='H=2048 W=2048'
			header "blur 2048 x 2048"
			for f in "$tut"/blur-[0-9]*.tx; do
				step "$(basename "$f" .tx)" "$f" "$sz"
			done
			step "auto: txc's generated schedule" "$tut/blur-1-naive.tx" "$sz" auto
			step "stdlib blur.tx (reference)" "$srcdir/stdlib/blur.tx" "$sz"
			halide_step
			;;
		gpu)
			sz='M=1024 N=1024 K=1024'
			header "gpu matmul 1024^3"
			for f in "$tut"/gpu-[0-9]*.tx; do
				gpu_step "$(basename "$f" .tx)" "$f" "$sz"
			done
			;;
		vta)
			echo
			printf '%-34s %20s %13s %8s\n' "vta matmul 64 x 64 x 64 (int8)" "modelled" "utilisation" "vs prev"
			prev=
			for f in "$tut"/vta-[0-9]*.tx; do
				vta_step "$(basename "$f" .tx)" "$f" 'O=64 N=64 M=64'
			done
			;;
		*) echo "tutorial.sh: unknown series '$s'" >&2; exit 2 ;;
		esac
	done
}

r=1
while [ "$r" -le "$repeat" ]; do
	echo
	echo "== run $r of $repeat"
	table
	r=$((r + 1))
done
