#!/bin/sh
# auto.sh: `make bench-auto`: the schedules txc generates (-s auto) beside
# the stdlib's hand-written ones and the unscheduled kernel, in one
# `txc bench` run per kernel, at the sizes of ../shared/AUTOSCHEDULE.md
# (issue 32's table).
#
#     bench/auto.sh [--threads=N] [--best]
#
# Prints the CPU and its instruction sets, then per kernel the median time
# of the unscheduled kernel (bench's single cold run, indicative only), of
# the hand schedule and of the generated one, and two ratios: hand / auto
# (1.00 = as fast as the hand schedule, above 1 faster) and naive / auto.
# Nothing is asserted: this is a benchmark.  Environment: TXC,
# abs_top_srcdir.
set -u
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
TXC=${TXC:-$srcdir/txc}
threads=--threads=1
best=
for a in "$@"; do
	case $a in
	--threads=*) threads=$a ;;
	--best) best=--best ;;
	*) echo "usage: auto.sh [--threads=N] [--best]" >&2; exit 2 ;;
	esac
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
isa=$(grep -o -w 'avx512f\|avx2\|fma' /proc/cpuinfo 2>/dev/null | sort -u | tr '\n' ' ')
echo "bench-auto: ${cpu:-unknown CPU}, ${isa:-no AVX}, $threads"
printf '%-24s %12s %12s %12s %9s %9s\n' kernel "naive ms" "hand ms" "auto ms" "hand/auto" "naive/auto"
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
row() { # file kernel sizes...
	f=$1 k=$2
	shift 2
	# shellcheck disable=SC2086
	if ! "$TXC" bench "$srcdir/stdlib/$f" -k "$k" --schedules=default,auto $threads $best "$@" \
	    >"$out" 2>&1; then
		printf '%-24s %s\n' "$k" "failed: $(tail -n 1 "$out")"
		return
	fi
	awk -v k="$k" '
	    $1 == "(unscheduled)" { n = $2 }
	    $1 == "default" { h = $2 }
	    $1 == "auto" { a = $2 }
	    END { printf "%-24s %12s %12s %12s %9.2f %9.1f\n", k, n, h, a, h / a, n / a }' "$out"
}
row matmul.tx matmul -D M=512 -D N=512 -D K=512
row matmul.tx matmul_nt -D M=512 -D N=512 -D K=512
row matmul.tx dense -D M=512 -D N=512 -D K=512
row matmul.tx batch_matmul -D B=8 -D M=128 -D N=128 -D K=128
row conv2d.tx conv2d_nchw -D N=1 -D C=64 -D H=56 -D W=56 -D K=64
row conv2d.tx conv2d_1x1 -D N=1 -D C=128 -D H=28 -D W=28 -D K=128
row depthwise.tx depthwise_conv2d_nchw -D N=1 -D C=128 -D H=112 -D W=112
row pooling.tx max_pool2d -D N=1 -D C=64 -D H=224 -D W=224
row pooling.tx avg_pool2d -D N=1 -D C=64 -D H=112 -D W=112
row transpose.tx transpose2d -D M=2048 -D N=2048
row transpose.tx nchw_to_nhwc -D N=1 -D C=64 -D H=112 -D W=112
row blur.tx blur3x3 -D H=2048 -D W=2048
row softmax.tx softmax -D N=1024 -D M=1024
row layernorm.tx layernorm -D N=1024 -D D=1024 -D eps=1e-5
row reduce.tx row_sum -D N=2048 -D M=2048
row reduce.tx global_max -D N=1000000

# composed kernels (calls of stdlib kernels, no schedule: fusion keeps the
# callees' schedules, txc-schedule(7) FUSION) beside the stdlib's kernel
# fused by hand; 'composed/hand' above 0.8 is issue 33's bar
printf '\n%-24s %12s %12s %9s\n' "composed vs hand-fused" "hand ms" "composed ms" "hand/comp"
ms() { # file kernel sizes... -> the default schedule's time
	f=$1 k=$2
	shift 2
	# shellcheck disable=SC2086
	"$TXC" bench "$f" -k "$k" $threads $best "$@" 2>/dev/null |
	    awk '$1 == "default" { print $2 }'
}
pair() { # label hand-file hand-kernel composed-kernel sizes...
	l=$1 hf=$2 hk=$3 ck=$4
	shift 4
	h=$(ms "$srcdir/stdlib/$hf" "$hk" "$@")
	c=$(ms "$srcdir/tests/auto/composed.tx" "$ck" "$@")
	if [ -z "$h" ] || [ -z "$c" ]; then
		printf '%-24s %s\n' "$l" "failed"
		return
	fi
	awk -v l="$l" -v h="$h" -v c="$c" 'BEGIN { printf "%-24s %12s %12s %9.2f\n", l, h, c, h / c }'
}
pair "conv + bias + relu" conv2d.tx conv2d_bias_relu conv_relu -D N=1 -D C=64 -D H=56 -D W=56 -D K=64

# users' kernels (tests/auto/users.tx, no schedule): the generated schedule
# beside the unscheduled kernel; contractions should gain 10x or more
printf '\n%-24s %12s %12s %9s\n' "users' kernels" "naive ms" "auto ms" "naive/auto"
user() { # kernel sizes...
	k=$1
	shift
	# shellcheck disable=SC2086
	"$TXC" bench "$srcdir/tests/auto/users.tx" -k "$k" $threads $best "$@" 2>/dev/null |
	    awk -v k="$k" '$1 == "(unscheduled)" { n = $2 } $1 == "default" { d = $2 }
	        END { if (d) printf "%-24s %12s %12s %9.1f\n", k, n, d, n / d;
	              else printf "%-24s failed\n", k }'
}
user norm_matmul -D M=256 -D D=256 -D F=256
user dense_gelu -D M=256 -D D=256 -D F=256
user attention -D S=256 -D D=64
user sep_blur -D H=1024 -D W=1024
user dw_pw -D N=1 -D C=32 -D H=56 -D W=56 -D K=64
user softmax_dense_bwd -D M=256 -D D=256 -D F=256
