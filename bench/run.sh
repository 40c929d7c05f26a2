#!/bin/sh
# run.sh: txc side by side with the libraries a user would call instead.
#
#   bench/run.sh [BUILD_DIR]     (make bench runs it from the build tree)
#
# Builds the references (OpenBLAS sgemm, oneDNN conv, int8 and bf16 conv
# and GEMM, Halide 14 matmul, 3x3 conv and blur) and the txc kernels of
# bench/kernels/ (and the stdlib's gemm_i8, matmul_bf16, conv2d_i8 and
# conv2d_bf16), runs every case
# in its own process with 1 and 2 threads, and prints one table: GFLOP/s of
# txc and of the reference, their ratio, txc's share of the FMA peak
# measured in the same run, and the error of each against a plain
# double-precision reference.  Two more tables give compile times: the
# bench kernels beside Halide's generators, and every stdlib kernel.  Each
# process times the fastest of its repeated runs (bench.h says why).  Every
# case runs BENCH_ROUNDS times (default 3, in separate sweeps) and each
# side keeps its best; BENCH_QUICK=1 runs a small subset; BENCH_ISA and
# BENCH_NO_APT are described below.  Nothing here asserts a speed.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top=${abs_top_builddir:-$(pwd)}
TXC=${TXC:-$top/txc}
out=${1:-$top/bench-build}
mkdir -p "$out"
cd "$out" || exit 1
CC=${CC:-cc}
CFLAGS="-O2 -I$srcdir/bench -I$srcdir/rt"
RTLIB="$top/rt/.libs/libtxrt.a"
results=$out/results.txt
ctimes=$out/compile-times.txt
: >"$results"
: >"$ctimes"
: >"$out/errors.txt"
log() { echo "bench: $*" >&2; }
ms_since() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }

# ---- the reference libraries, installed if missing --------------------------
# make bench installs them with apt-get (as root, or through sudo) unless
# BENCH_NO_APT=1; a reference that still is not there is skipped below.
refpkgs="libopenblas-dev libdnnl-dev libhalide14-0-dev"
if [ "${BENCH_NO_APT:-0}" != 1 ]; then
	need=
	for p in $refpkgs; do
		case $(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true) in
		*" installed") ;;
		*) need="$need $p" ;;
		esac
	done
	if [ -n "$need" ]; then
		if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
		log "installing the references:$need"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive $sudo apt-get update -q >/dev/null &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
			--no-install-recommends $need >/dev/null ||
			log "apt-get could not install$need"
	fi
fi

# ---- one instruction set for everyone ---------------------------------------
# The machine class of the comparison is x86-64 with AVX2 + FMA, and txc's
# CPU micro-kernels are 8-wide AVX2.  On a CPU that also has AVX-512 the
# libraries would switch to 16-wide kernels (and OpenBLAS 0.3.21, which does
# not know recent CPU models, to a slow generic one), so by default every
# side is held to AVX2 + FMA: OpenBLAS's Haswell kernels (what it runs on
# Haswell and Zen), oneDNN's AVX2 code, Halide's avx2 target and txc's
# --features=-avx512f (the host's tuning without AVX-512); the peak is the
# AVX2 FMA peak.  BENCH_ISA=native lets each library use everything the
# CPU has (the peak column stays AVX2's).
isa=${BENCH_ISA:-avx2}
has_avx512=0
grep -qw avx512f /proc/cpuinfo 2>/dev/null && has_avx512=1
case $isa in
avx2)
	export OPENBLAS_CORETYPE=Haswell DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
	halide_target=x86-64-linux-avx-avx2-f16c-fma-sse41
	txcflags=--features=-avx512f
	# oneDNN held to AVX2 has no AVX-VNNI either
	lowpflags=--features=-avx512f,-avxvnni
	;;
native)
	# OpenBLAS's own detection misses recent AVX-512 models: name the
	# nearest kernel set it has.
	[ $has_avx512 = 1 ] && export OPENBLAS_CORETYPE=SkylakeX
	halide_target=host
	txcflags=
	lowpflags=
	;;
*) log "BENCH_ISA must be avx2 or native, not '$isa'"; exit 2 ;;
esac
log "instruction set: $isa (this CPU has AVX-512: $([ $has_avx512 = 1 ] && echo yes || echo no))"
# the width txc's schedules take here (the stdlib's isa knob and the
# schedule generator's machine, txc-schedule(7) TEMPLATES)
# shellcheck disable=SC2086
tables=$(TXC_STDLIB=$srcdir/stdlib "$TXC" $txcflags -k matmul --print-auto-schedule \
    "$srcdir/stdlib/matmul.tx" 2>/dev/null | sed -n '1s/.* for cpu (\([a-z0-9]*\),.*/\1/p')
log "txc's micro-kernel tables and vectors: ${tables:-unknown}"
# the CPU and the instruction sets the int8 and bf16 cases may use, and
# the tables txc's gemm_i8 and matmul_bf16 take here (the isa knob)
cpuname=$(sed -n 's/^model name[ \t]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
cpusets=
for f in avx2 fma avx512f avx512bw avx512_vnni avx_vnni avx512_bf16 amx_int8 amx_bf16; do
	grep -qw "$f" /proc/cpuinfo 2>/dev/null && cpusets="$cpusets $f"
done
log "CPU: ${cpuname:-unknown}; instruction sets:${cpusets:- unknown}"
lowp_table() { # KERNEL [FILE]: the emitter its schedule calls here
	# shellcheck disable=SC2086
	TXC_STDLIB=$srcdir/stdlib "$TXC" $lowpflags -k "$1" --print-loops "$srcdir/stdlib/${2:-matmul.tx}" \
	    2>/dev/null | grep -o -m1 -E '(i8|bf16)_[a-z_]+\(' | tr -d '('
}
itable=$(lowp_table gemm_i8)
btable=$(lowp_table matmul_bf16)
bctable=$(lowp_table conv2d_bf16 conv2d.tx)
log "txc's int8 GEMM table: ${itable:-none (generic)}; bf16 GEMM table: ${btable:-none (generic)}"
log "txc's bf16 convolution table: ${bctable:-none (generic)}"

# ---- the machine's peak -----------------------------------------------------
$CC -O2 -mavx2 -mfma -pthread "$srcdir/bench/peak.c" -o peak || exit 1
./peak 2 >peak.txt
# the peak is measured again before every sweep; the best counts
peaks() {
	peak1=$(awk '/peak_gflops_1T/ { if ($2 > m) m = $2 } END { print m }' peak.txt)
	peak2=$(awk '/peak_gflops_2T/ { if ($2 > m) m = $2 } END { print m }' peak.txt)
}
peaks
log "FMA peak: $peak1 GFLOP/s (1 thread), $peak2 GFLOP/s (2 threads)"

# ---- references -----------------------------------------------------------------
# A missing reference is skipped with a message saying what to install
# (the table then shows "-" for it); txc's columns still run.
missing() { log "$1 is not installed: its cases are skipped (apt-get install -y $2)"; }
# placeholders that print nothing, so the case loop below stays simple
noref() { printf '#!/bin/sh\nexit 0\n' >"$1"; chmod +x "$1"; }
blasinc=$(ls -d /usr/include/x86_64-linux-gnu/openblas-pthread 2>/dev/null || echo /usr/include)
if [ -f "$blasinc/cblas.h" ] &&
	$CC $CFLAGS -I"$blasinc" -DIMPL_OPENBLAS "$srcdir/bench/sgemm.c" -o sgemm_openblas -lopenblas -lm; then :
else missing OpenBLAS libopenblas-dev; noref sgemm_openblas; fi
if [ -f /usr/include/dnnl.h ] &&
	$CC $CFLAGS -DIMPL_DNNL "$srcdir/bench/conv.c" -o conv_onednn -ldnnl -lm; then :
else missing oneDNN libdnnl-dev; noref conv_onednn; fi
# oneDNN's int8 GEMM (dnnl_gemm_s8s8s32) and bf16 matmul; a case its
# build or this CPU cannot run says why (errors.txt, printed below)
if [ -f /usr/include/dnnl.h ] &&
	$CC $CFLAGS -DIMPL_DNNL "$srcdir/bench/lowp_gemm.c" -o lowp_onednn -ldnnl -lm; then :
else missing "oneDNN (int8 and bf16 GEMM)" libdnnl-dev; noref lowp_onednn; fi
if [ -f /usr/include/dnnl.h ] &&
	$CC $CFLAGS -DIMPL_DNNL "$srcdir/bench/lowp_conv.c" -o lconv_onednn -ldnnl -lm; then :
else missing "oneDNN (int8 and bf16 convolution)" libdnnl-dev; noref lconv_onednn; fi
if [ -f /usr/include/halide14/Halide.h ] && [ -f /usr/src/halide14/GenGen.cpp ] &&
	c++ -O1 -std=c++17 -I/usr/include/halide14 "$srcdir/bench/halide_gen.cpp" \
	/usr/src/halide14/GenGen.cpp -o halide_gen -lHalide14 -lpthread -ldl; then
	for g in matmul blur conv3x3; do
		t0=$(date +%s%N)
		./halide_gen -g halide_$g -o . -e static_library,h target=$halide_target || exit 1
		echo "$g halide14 $(ms_since "$t0")" >>"$ctimes"
	done
	$CC $CFLAGS -I/usr/include/halide14 -I. "$srcdir/bench/halide_run.c" halide_matmul.a \
		halide_blur.a -o halide_run -lpthread -ldl -lm || exit 1
	# the conv through conv.c, the driver oneDNN and txc share
	$CC $CFLAGS -I/usr/include/halide14 -I. -DIMPL_HALIDE "$srcdir/bench/conv.c" \
		halide_conv3x3.a -o conv_halide -lpthread -ldl -lm || exit 1
else missing "Halide 14" libhalide14-0-dev; noref halide_run; noref conv_halide; fi

# ---- txc kernels ------------------------------------------------------------------
# best_ms ERRFILE COMMAND...: runs COMMAND 5 times (the machine may be
# busy), its stderr to ERRFILE, and prints the fastest run in ms; fails
# when a run fails.
best_ms() {
	err=$1; shift
	best=
	for try in 1 2 3 4 5; do
		t0=$(date +%s%N)
		"$@" 2>"$err" || return 1
		ms=$(ms_since "$t0")
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
	done
	echo "$best"
}
# txc_build NAME KERNEL_TX DRIVER_C IMPL_MACRO [txc flags]: compile and link.
txc_build() {
	name=$1; tx=$2; drv=$3; shift 3
	# shellcheck disable=SC2086
	if ! best=$(best_ms "$name.err" "$TXC" "$srcdir/bench/kernels/$tx" -o "$name.o" $txcflags "$@"); then
		log "txc could not compile $tx: $(head -1 "$name.err")"
		return 1
	fi
	echo "$name txc $best" >>"$ctimes"
	# shellcheck disable=SC2086
	$CC $CFLAGS -DIMPL_TXC $drvflags "$srcdir/bench/$drv" "$name.o" "$RTLIB" -o "$name" -lpthread -lm
}
drvflags=
have_sgemm=0 have_conv3=0 have_conv1=0 have_dw=0 have_blur=0
if [ "$tables" = avx512 ]; then
	# the AVX-512 nest (14 x 32 zmm micro-kernel); its k block from the
	# L2 cache the OS reports: the packed block of B, kc x 512 floats
	# (2048 kc bytes), fills at most the L2 (1 MiB on Zen 4: 512).  The
	# micro-panels then stream from L2, which keeps up with the kernel,
	# and the block of C is loaded and stored, and A packed, once per kc.
	# Zen 4, 1 thread, medians of 4-6 alternating runs on a shared
	# machine, GFLOP/s at kc = 128 (the L1 rule before) -> 512: 1024:
	# 91 -> 97, 2048: 64 -> 79; 256 and 512 run the unpacked nest.
	cache_bytes() { # LEVEL TYPE-TO-SKIP: a cache's size in bytes, or nothing
		for d in /sys/devices/system/cpu/cpu0/cache/index*; do
			[ "$(cat "$d/level")" = "$1" ] && [ "$(cat "$d/type")" != "$2" ] && cat "$d/size"
		done 2>/dev/null | head -1 | sed 's/K$/ * 1024/; s/M$/ * 1048576/'
	}
	l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null)
	case $l2 in ''|0|*[!0-9]*)
		l2=$(cache_bytes 2 Instruction)
		l2=$(( ${l2:-524288} )) ;;
	esac
	kc=128
	for v in 192 256 320 384 512; do [ $((2048 * v)) -le "$l2" ] && kc=$v; done
	log "sgemm: bench/kernels/sgemm_zmm.tx, k blocks of $kc (L2 $l2 bytes)"
	txc_build sgemm_txc sgemm_zmm.tx sgemm.c -K kc=$kc && have_sgemm=1
else
	txc_build sgemm_txc sgemm.tx sgemm.c && have_sgemm=1
fi
# conv3x3.tx (AVX2) and conv3x3_zmm.tx (AVX-512: 14 x 32 tiles on an NCHW
# copy) read their weights in a blocked layout that the driver fills
# once, outside the timing (conv_prepack), as oneDNN's are reordered
drvflags=-DTXC_PREPACK
conv3=conv3x3.tx
[ "$tables" = avx512 ] && conv3=conv3x3_zmm.tx
txc_build conv3x3_txc $conv3 conv.c && have_conv3=1
drvflags=
conv1=conv1x1.tx
# conv1x1_zmm.tx (AVX-512): 14 pixels x 32 channels into NCHW through the
# transposed c, on weights the driver blocks once (conv_prepack)
[ "$tables" = avx512 ] && { conv1=conv1x1_zmm.tx; drvflags=-DTXC_PREPACK; }
txc_build conv1x1_txc $conv1 conv.c && have_conv1=1
drvflags=
# dwconv3x3.tx runs in NCHW8c, the layout oneDNN picks for it; the driver
# converts to and from it outside the timing, as oneDNN's reorders are
drvflags=-DTXC_BLOCKED
txc_build dwconv_txc dwconv3x3.tx conv.c && have_dw=1
drvflags=
txc_build blur_txc blur.tx blur.c && have_blur=1
# the stdlib's int8 and bf16 GEMMs, their tables chosen by the isa knob
have_lowp=0
# shellcheck disable=SC2086
if best=$(best_ms lowp.err "$TXC" "$srcdir/stdlib/matmul.tx" -k gemm_i8 -k matmul_bf16 \
	-o lowp_txc.o $lowpflags); then
	echo "gemm_i8+matmul_bf16 txc $best" >>"$ctimes"
	$CC $CFLAGS -DIMPL_TXC "$srcdir/bench/lowp_gemm.c" lowp_txc.o "$RTLIB" -o lowp_txc \
		-lpthread -lm && have_lowp=1
else
	log "txc could not compile gemm_i8 and matmul_bf16: $(head -1 lowp.err)"
fi
# the stdlib's int8 and bf16 convolutions, their tables chosen by the isa
# knob (lowp_conv.c declares conv2d_bf16 weak: without it the bconv
# cases say so and the iconv ones run)
have_lconv=0 have_bconv=0 bconv_o=
# shellcheck disable=SC2086
if best=$(best_ms bconv.err "$TXC" "$srcdir/stdlib/conv2d.tx" -k conv2d_bf16 -o bconv_txc.o \
	$lowpflags); then
	echo "conv2d_bf16 txc $best" >>"$ctimes"
	bconv_o=bconv_txc.o have_bconv=1
else
	log "txc could not compile conv2d_bf16: $(head -1 bconv.err)"
fi
# shellcheck disable=SC2086
if best=$(best_ms lconv.err "$TXC" "$srcdir/stdlib/conv2d.tx" -k conv2d_i8 -o lconv_txc.o \
	$lowpflags); then
	echo "conv2d_i8 txc $best" >>"$ctimes"
	# shellcheck disable=SC2086
	$CC $CFLAGS -DIMPL_TXC "$srcdir/bench/lowp_conv.c" lconv_txc.o $bconv_o "$RTLIB" -o lconv_txc \
		-lpthread -lm && have_lconv=1
else
	log "txc could not compile conv2d_i8: $(head -1 lconv.err)"
	have_bconv=0
fi

# ---- compile time of every stdlib kernel ------------------------------------------
# Each kernel of stdlib/ (and the tuned matmul with -s fast) compiled
# alone to an object (-k), with the flags above, in 5 sweeps through the
# whole list, each kernel keeping its fastest: this machine's slow spells
# last seconds, and 5 runs in a row of one kernel could all fall in one
# (conv2d_nchw read 41 ms that way, 31 alone a minute later).  The table
# prints them after the bench kernels'.
stdlib_ctimes=$out/stdlib-compile-times.txt
: >"$stdlib_ctimes.all"
for sweep in 1 2 3 4 5; do
	for f in "$srcdir"/stdlib/*.tx "$srcdir"/stdlib/tuned/*.tx; do
		case $f in */tuned/*) sflags="-s fast" ;; *) sflags= ;; esac
		for k in $(sed -n 's/^kernel  *\([A-Za-z0-9_]*\).*/\1/p' "$f"); do
			t0=$(date +%s%N)
			# shellcheck disable=SC2086
			if "$TXC" "$f" -k "$k" $sflags -o stdlib-kernel.o $txcflags 2>/dev/null; then
				ms=$(ms_since "$t0")
			else
				ms=failed
			fi
			echo "${f#"$srcdir"/}:$k txc $ms" >>"$stdlib_ctimes.all"
		done
	done
done
# a kernel's best sweep; "failed" when any sweep failed
awk '{ k = $1; if ($3 == "failed") bad[k] = 1; else if (!(k in best) || $3 + 0 < best[k]) best[k] = $3 + 0
	if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
	END { for (i = 1; i <= n; i++) { k = order[i]; print k, "txc", (k in bad) ? "failed" : best[k] } }' \
	"$stdlib_ctimes.all" >"$stdlib_ctimes"

# ---- cases --------------------------------------------------------------------------
run() { # threads impl-binary args...
	th=$1; shift
	BENCH_THREADS=$th TXRT_NUM_THREADS=$th OPENBLAS_NUM_THREADS=$th \
		OMP_NUM_THREADS=$th HL_NUM_THREADS=$th "$@" >>"$results" 2>>"$out/errors.txt" ||
		log "failed: $*"
}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	lowp_sizes="256"
	sizes="256 1024"
	convs="64 56"
else
	lowp_sizes="256 512 1024"
	sizes="256 512 1024 2048"
	convs="64 56
128 28
256 14
512 7"
fi
# BENCH_ROUNDS sweeps (default 3) through every case, each implementation
# in its own process; the table keeps each one's best sweep, so a moment
# when the machine was busy does not decide a ratio.
rounds=${BENCH_ROUNDS:-3}
round=0
while [ "$round" -lt "$rounds" ]; do
	round=$((round + 1))
	log "sweep $round of $rounds"
	[ "$round" -gt 1 ] && ./peak 2 >>peak.txt
	for th in 1 2; do
		for s in $sizes "1000" "M1"; do
			case $s in
			M1) args="1 1024 1024" ;;
			*) args="$s $s $s" ;;
			esac
			# shellcheck disable=SC2086
			run $th ./sgemm_openblas $args
			[ $have_sgemm = 1 ] && run $th ./sgemm_txc $args
			case $s in 1024|M1) run $th ./halide_run matmul $args ;; esac
		done
		echo "$convs" | while read -r c hw; do
			run $th ./conv_onednn 1 "$c" "$hw" "$hw" "$c" 3 3 1 1 1
			run $th ./conv_halide 1 "$c" "$hw" "$hw" "$c" 3 3 1 1 1
			[ $have_conv3 = 1 ] && run $th ./conv3x3_txc 1 "$c" "$hw" "$hw" "$c" 3 3 1 1 1
		done
		run $th ./conv_onednn 1 256 14 14 256 1 1 1 0 1
		[ $have_conv1 = 1 ] && run $th ./conv1x1_txc 1 256 14 14 256 1 1 1 0 1
		run $th ./conv_onednn 1 128 56 56 128 3 3 1 1 128
		[ $have_dw = 1 ] && run $th ./dwconv_txc 1 128 56 56 128 3 3 1 1 128
		run $th ./halide_run blur 2048 2048
		[ $have_blur = 1 ] && run $th ./blur_txc 2048 2048
		for s in $lowp_sizes; do
			for t in i8 bf16; do
				run $th ./lowp_onednn $t "$s" "$s" "$s"
				[ $have_lowp = 1 ] && run $th ./lowp_txc $t "$s" "$s" "$s"
			done
		done
		# int8 and bf16 convolutions: ResNet's 3x3 at 56 x 56 and a 1x1
		# at 14 x 14
		for t in i8 bf16; do
			for a in "1 64 56 56 64 3 3 1" "1 256 14 14 256 1 1 0"; do
				# shellcheck disable=SC2086
				run $th ./lconv_onednn $t $a
				case $t in i8) h=$have_lconv ;; *) h=$have_bconv ;; esac
				# shellcheck disable=SC2086
				[ "$h" = 1 ] && run $th ./lconv_txc $t $a
			done
		done
	done
done

peaks
sed -n 's/^onednn: //p' "$out/errors.txt" | sort -u | while read -r l; do log "oneDNN: $l"; done
core=$(sed -n "s/^openblas core: //p" "$out/errors.txt" | head -1)
[ -n "$core" ] && log "OpenBLAS ran its $core kernels"

# ---- the table ------------------------------------------------------------------------
awk -v p1="$peak1" -v p2="$peak2" '
function val(s, k,   i, a) { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } return "" }
{
	c = val($0, "case"); im = val($0, "impl"); th = val($0, "threads")
	key = c SUBSEP th
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	g = val($0, "gflops")
	if (!((key, im) in gf) || g + 0 > gf[key, im] + 0) { gf[key, im] = g; er[key, im] = val($0, "err") }
}
END {
	printf "%-28s %3s %9s %9s %-9s %7s %7s %9s %9s\n", "case", "thr", "txc", "ref", "(ref)", "txc/ref", "%peak", "txc err", "ref err"
	for (i = 1; i <= n; i++) {
		split(order[i], kv, SUBSEP); c = kv[1]; th = kv[2]
		ref = ""; rname = ""
		if ((order[i], "openblas") in gf) { ref = gf[order[i], "openblas"]; rname = "openblas" }
		else if ((order[i], "onednn") in gf) { ref = gf[order[i], "onednn"]; rname = "onednn" }
		else if ((order[i], "halide14") in gf) { ref = gf[order[i], "halide14"]; rname = "halide14" }
		t = ((order[i], "txc") in gf) ? gf[order[i], "txc"] : "-"
		pk = (th == 1) ? p1 : p2
		ratio = (t != "-" && ref > 0) ? sprintf("%.2f", t / ref) : "-"
		pct = (t != "-" && pk > 0) ? sprintf("%.0f%%", 100 * t / pk) : "-"
		te = ((order[i], "txc") in er) ? er[order[i], "txc"] : "-"
		printf "%-28s %3s %9s %9s %-9s %7s %7s %9s %9s\n", c, th, t, ref, rname, ratio, pct, te, er[order[i], rname]
		if (rname != "halide14" && (order[i], "halide14") in gf)
			printf "%-28s %3s %9s %9s %-9s %7s %7s %9s %9s\n", "", th, t, gf[order[i], "halide14"], "halide14", (t != "-" ? sprintf("%.2f", t / gf[order[i], "halide14"]) : "-"), "", "", er[order[i], "halide14"]
	}
	printf "\nFMA peak measured in this run: %s GFLOP/s (1 thread), %s GFLOP/s (2 threads)\n", p1, p2
}' "$results"
echo "instruction set: $isa (OpenBLAS kernels: ${core:-none}; txc flags: ${txcflags:-none}; txc tables: ${tables:-unknown})"
echo "CPU: ${cpuname:-unknown}; instruction sets:${cpusets:- unknown}"
echo "iconv (int8 x int8 -> int32 convolution, stride 1): the stdlib's conv2d_i8 (the int8 table of igemm) and oneDNN's int8 convolution primitive (its error column is not 0 where its AVX2 kernel saturates)"
echo "bconv (bf16 x bf16 -> f32 convolution, stride 1): the stdlib's conv2d_bf16, txc table ${bctable:-generic}, and oneDNN's bf16 convolution primitive (a '-' where it has none for this CPU; error relative to the sum of the products' magnitudes)"
echo "igemm (int8 x int8 -> int32) and bgemm (bf16 x bf16 -> f32): the stdlib's gemm_i8 and matmul_bf16, txc tables ${itable:-generic} and ${btable:-generic} (txc flags: ${lowpflags:-none}); oneDNN's dnnl_gemm_s8s8s32 and bf16 matmul (a '-' where it has none for this CPU; its int8 error column is not 0 where its AVX2 kernel saturates)"
echo "GFLOP/s from the fastest of each process's repeated runs, best of $rounds sweeps"
echo
echo "compile time (ms): kernel, implementation, milliseconds"
cat "$ctimes"
echo
echo "compile time of each stdlib kernel (ms, best of 5 sweeps):"
sort -k3 -n "$stdlib_ctimes" | awk '{ printf "  %-44s %s\n", $1, $3 }'
