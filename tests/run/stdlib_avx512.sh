#!/bin/sh
# stdlib_avx512.sh: the stdlib schedules whose isa knob picks an AVX-512
# plan (matmul, dense, batch_matmul, the NCHW and NCHW8c convolutions,
# and make bench's 3x3 and 1x1 convolutions, and its AVX-512 3x3 plan):
#   - the AVX-512 plan forced on this machine (txc -K isa=avx512: the
#     512-bit vectors are legalised where AVX-512 is missing) against the
#     unscheduled kernel through tests/run/diffcheck.sh, odd sizes;
#   - the knob's default follows the target: --cpu=sapphirerapids (and
#     --features=+avx512f) picks avx512, whose assembly computes in zmm,
#     --cpu=znver3 and --features=-avx512f pick avx2, and a cross triple
#     (aarch64) avx2.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_STDLIB=$srcdir/stdlib; export TXC_STDLIB
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
real=$TXC
cat >"$tmp/txc512" <<EOF2
#!/bin/sh
exec "$real" -K isa=avx512 "\$@"
EOF2
chmod +x "$tmp/txc512"
fails=0
conv_caps='N=1:2 C=1:4 K=1:17 H=1:9 W=1:70 R=1:3 S=1:3 SH=1:2 SW=1:3 PH=0:2 PW=0:2 DH=1:2 DW=1:3'
run() { # FILE KERNEL CAPS
	printf '%s %s (-K isa=avx512): ' "$1" "$2"
	TXC=$tmp/txc512 $SHELL "$srcdir/tests/run/diffcheck.sh" -k "$2" -r 2 -c "$3" \
	    "$srcdir/stdlib/$1" || fails=$((fails + 1))
}
mm='B=1:3 M=1:40 N=1:80 K=1:40'
run matmul.tx matmul "$mm"
run matmul.tx dense "$mm"
run matmul.tx batch_matmul "$mm"
for k in conv2d_nchw conv2d_nchw_s2 conv2d_bias_relu conv2d_1x1; do
	run conv2d.tx $k "$conv_caps"
done
run nchwc.tx conv2d_nchw8c "$conv_caps C=1:20 K=1:20 CB=1:2 KB=1:2 W=1:30"
run nchwc.tx conv2d_nchw16c "$conv_caps C=1:35 K=1:35 W=1:30"
# make bench's convolutions (bench/kernels/conv3x3.tx and conv1x1.tx:
# gemm_28x16_f32 on their 16-wide weight and pixel panels)
for k in conv3x3 conv1x1; do
	printf 'bench/kernels/%s.tx (-K isa=avx512): ' $k
	TXC=$tmp/txc512 $SHELL "$srcdir/tests/run/diffcheck.sh" -k conv -r 2 \
	    -c 'N=1:2 C=1:9 H=1:9 W=1:40 K=1:40' -e 'N=1 C=5 H=3 W=57 K=33' -e 'N=1 C=3 H=2 W=29 K=17' \
	    "$srcdir/bench/kernels/$k.tx" || fails=$((fails + 1))
done
# bench/kernels/conv3x3_zmm.tx, the AVX-512 3x3 plan (no knob: its zmm
# kernels run on AVX2 CPUs too, libtxrt's copies legalised): 14-pixel
# tiles, the 7-pixel rows of its W == 7 specialization, 256 input
# channels per call (C = 300: two blocks), rows shorter than the border,
# blocks of 8 rows with a tail (H = 17)
printf 'bench/kernels/conv3x3_zmm.tx: '
$SHELL "$srcdir/tests/run/diffcheck.sh" -k conv -r 2 \
    -c 'N=1:2 C=1:9 H=1:9 W=1:40 K=1:40' -e 'N=1 C=5 H=3 W=57 K=33' -e 'N=2 C=3 H=7 W=7 K=40' \
    -e 'N=1 C=300 H=4 W=7 K=17' -e 'N=1 C=260 H=1 W=15 K=33' -e 'N=1 C=4 H=17 W=14 K=65' \
    "$srcdir/bench/kernels/conv3x3_zmm.tx" ||
    fails=$((fails + 1))
# bench/kernels/conv1x1_zmm.tx, the AVX-512 1x1 plan: 14 pixels x 32
# channels stored into NCHW by the transposed c; partial blocks of both
printf 'bench/kernels/conv1x1_zmm.tx: '
$SHELL "$srcdir/tests/run/diffcheck.sh" -k conv -r 2 \
    -c 'N=1:2 C=1:9 H=1:9 W=1:20 K=1:40' -e 'N=1 C=5 H=3 W=57 K=33' -e 'N=1 C=17 H=14 W=14 K=64' \
    "$srcdir/bench/kernels/conv1x1_zmm.tx" ||
    fails=$((fails + 1))
# the default point follows the target
cd "$tmp" || exit 99
tile() { # FLAGS...: the first tile line of matmul's loop nest
	"$real" "$@" -k matmul --print-loops "$srcdir/stdlib/matmul.tx" 2>err | grep -m1 '(jo, 0,' ||
	    { cat err; echo "FAIL: txc $*"; fails=$((fails + 1)); }
}
case $(tile --cpu=sapphirerapids) in *'+ 31)/32'*) ;; *) echo "FAIL: --cpu=sapphirerapids: not the 32-column plan"; fails=$((fails + 1)) ;; esac
case $(tile --cpu=znver3 --features=+avx512f) in *'+ 31)/32'*) ;; *) echo "FAIL: --features=+avx512f: not the 32-column plan"; fails=$((fails + 1)) ;; esac
case $(tile --cpu=znver3) in *'+ 15)/16'*) ;; *) echo "FAIL: --cpu=znver3: not the 16-column plan"; fails=$((fails + 1)) ;; esac
# make bench's BENCH_ISA=avx2 (--features=-avx512f) on an AVX-512 CPU
case $(tile --cpu=sapphirerapids --features=-avx512f) in *'+ 15)/16'*) ;; *) echo "FAIL: -avx512f: not the 16-column plan"; fails=$((fails + 1)) ;; esac
case $(tile --cpu=skylake-avx512 -K isa=avx2) in *'+ 15)/16'*) ;; *) echo "FAIL: -K isa=avx2: not the 16-column plan"; fails=$((fails + 1)) ;; esac
if "$real" --target=aarch64-linux-gnu --check "$srcdir/stdlib/matmul.tx" 2>/dev/null; then
	case $(tile --target=aarch64-linux-gnu) in *'+ 15)/16'*) ;; *) echo "FAIL: aarch64: not the 16-column plan"; fails=$((fails + 1)) ;; esac
fi
for k in matmul dense batch_matmul; do
	"$real" --cpu=sapphirerapids -k $k -S -o k.s "$srcdir/stdlib/matmul.tx" || fails=$((fails + 1))
	grep -q 'vfmadd[0-9]*ps.*%zmm' k.s || { echo "FAIL: $k for sapphirerapids: no zmm FMA"; fails=$((fails + 1)); }
done
echo "stdlib_avx512: $fails failed"
[ $fails -eq 0 ]
