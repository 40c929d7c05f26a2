#!/bin/sh
# stdlib-e2e.sh: every kernel of stdlib/*.tx with its default cpu schedule
# against the unscheduled kernel, through tests/run/diffcheck.sh (C and
# LLVM paths, random sizes within the caps below).  A kernel without a
# default `schedule NAME for cpu` fails: the stdlib promises one.
# TXC_E2E_LIGHT=1 (.ci/run's sanitized run) takes every third kernel.
set -u
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fails=0
nk=0
skipped=0
# Size caps per file, then per kernel (later words win): small enough to
# run in seconds, large enough for a tail after every split and tile, and
# for convolutions, strides, paddings and dilations above 1.
conv_caps='N=1:2 C=1:4 K=1:9 H=1:9 W=1:35 R=1:3 S=1:3 SH=1:2 SW=1:3 PH=0:2 PW=0:2 DH=1:2 DW=1:3'
for tx in "$srcdir"/stdlib/*.tx; do
	file=$(basename "$tx")
	for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
		case $file in
		conv2d.tx|depthwise.tx|pooling.tx) caps=$conv_caps ;;
		nchwc.tx) caps="$conv_caps C=1:20 K=1:20 CB=1:2 KB=1:2 W=1:15" ;;
		matmul.tx) caps='B=1:3 M=1:40 N=1:40 K=1:40' ;;
		vta.tx) caps='CB=1:2 KB=1:2 H=1:9 W=1:9 R=1:3 P=0:2 S=1:2 M=1:20 NB=1:3' ;;
		elementwise.tx) caps='N=1:9000 C=1:20 H=1:9 W=1:20' ;;
		*) caps= ;;
		esac
		case $k in
		bias_add_nchw) caps="$caps N=1:3" ;;
		bias_add) caps="$caps N=1:40" ;;
		esac
		nk=$((nk + 1))
		# the sanitized run (TXC_E2E_LIGHT=1, .ci/run) checks txc and
		# libtxrt, not what they compute: every third kernel
		if [ "${TXC_E2E_LIGHT:-0}" = 1 ] && [ $((nk % 3)) -ne 1 ]; then
			skipped=$((skipped + 1))
			continue
		fi
		if ! grep -Eq "^[[:space:]]*schedule[[:space:]]+$k[[:space:]]+for[[:space:]]+cpu" "$tx"; then
			echo "FAIL: $file: kernel $k has no default cpu schedule"
			fails=$((fails + 1))
			continue
		fi
		printf '%s %s: ' "$file" "$k"
		$SHELL "$srcdir/tests/run/diffcheck.sh" -k "$k" -r 2 -c "$caps" "$tx" || fails=$((fails + 1))
	done
done
# matmul's k-blocked plan (knob kblock, blocks sized from l1_bytes), with
# an L1 of 4 KiB so that blocks of 32 (16 with AVX-512) and their tails
# run at small K: txc takes the flags through a wrapper, as diffcheck.sh
# passes none of its own.
wrap=$(mktemp) || exit 99
trap 'rm -f "$wrap"' EXIT
for isa in avx2 avx512; do
	printf '#!/bin/sh\nexec "%s" --cache=4K,64K -K kblock=on -K isa=%s "$@"\n' "${TXC:?}" $isa >"$wrap"
	chmod +x "$wrap"
	nk=$((nk + 1))
	printf 'matmul.tx matmul (--cache=4K,64K -K kblock=on -K isa=%s): ' $isa
	TXC=$wrap $SHELL "$srcdir/tests/run/diffcheck.sh" -k matmul -r 3 -c 'M=1:40 N=1:40 K=1:300' \
	    -e 'M=7 N=17 K=33' -e 'M=13 N=33 K=257' "$srcdir/stdlib/matmul.tx" || fails=$((fails + 1))
done
echo "stdlib-e2e: $nk kernels, $fails failed" \
    "$([ $skipped -eq 0 ] || echo "($skipped not run: TXC_E2E_LIGHT)")"
[ $fails -eq 0 ]
