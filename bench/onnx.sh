#!/bin/sh
# onnx.sh: a ResNet-18-shaped model (bench/onnx_resnet.py, 1x3x224x224,
# random weights) compiled by txc and run on 1 and 2 threads, beside
# onnxruntime (npm's onnxruntime-node, installed into a temporary folder
# with --ignore-scripts, or found through ORT_NODE_PATH) on the same
# input; the outputs are compared.  Where onnxruntime cannot be had it
# says so and times txc alone.  Prints a table; asserts nothing (the
# machine may be busy).  `make bench-onnx`.
#
#   RUNS=5 SIZE=224 THREADS="1 2" bench/onnx.sh
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
TXC=${TXC:-${abs_top_builddir:-$(pwd)}/txc}
txrt=${abs_top_builddir:-$(pwd)}/rt/.libs/libtxrt.a
PY=${ONNX_PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
RUNS=${RUNS:-5} SIZE=${SIZE:-224} THREADS=${THREADS:-1 2}
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	{ echo "onnx.sh: $PY has no onnx or numpy (apt-get install python3-onnx)"; exit 0; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-bench-onnx.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
model=$work/resnet18.onnx
"$PY" "$srcdir/bench/onnx_resnet.py" "$model" "$SIZE" || exit 1
t0=$(date +%s.%N)
"$TXC" "$model" -o "$work/resnet18.o" || exit 1
t1=$(date +%s.%N)
printf '#include <stdint.h>\nint resnet18(const float *x, float *y);\nint run_model(const int64_t *s, const float *in, float *out)\n{\n\t(void)s;\n\treturn resnet18(in, out);\n}\n' \
    >"$work/call.c"
$CC -O2 -o "$work/run" "$srcdir/bench/onnx_time.c" "$work/call.c" "$work/resnet18.o" "$txrt" \
    -lpthread -ldl -lm || exit 1
echo "ResNet-18 shape, 1x3x${SIZE}x${SIZE}, $(($(wc -c <"$model") / 1048576)) MiB of weights;" \
    "txc compiles it in $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s"

# onnxruntime-node: given, or installed for this run
ort=${ORT_NODE_PATH:-}
if [ -z "$ort" ] && command -v npm >/dev/null && command -v node >/dev/null; then
	(cd "$work" && timeout 300 npm install --silent --ignore-scripts --no-audit --no-fund \
	    onnxruntime-node >/dev/null 2>&1) && ort=$work/node_modules
fi
if [ -n "$ort" ] && ! NODE_PATH=$ort node -e 'require("onnxruntime-node")' 2>/dev/null; then
	ort=
fi
[ -n "$ort" ] || echo "onnxruntime-node is missing (npm install onnxruntime-node failed): txc alone"

printf '%-8s %14s %14s %14s %8s %10s\n' threads "txc best ms" "txc median" "ort median" \
    "txc/ort" "max diff"
for t in $THREADS; do
	txc_ms=$(TXRT_NUM_THREADS=$t "$work/run" "$RUNS" - $((3 * SIZE * SIZE)) 1000 \
	    "$work/txc.bin") || exit 1
	set -- $txc_ms
	best=$1 med=$2 omed=- ratio=- diff=-
	if [ -n "$ort" ]; then
		if ort_ms=$(NODE_PATH=$ort node "$srcdir/bench/onnx_ort.js" "$model" "$SIZE" "$t" \
		    "$RUNS" "$work/ort.bin"); then
			set -- $ort_ms
			omed=$2
			ratio=$(awk "BEGIN { printf \"%.1f\", $med / $omed }")
			diff=$("$PY" -c "import numpy as n; a = n.fromfile('$work/txc.bin', n.float32); \
b = n.fromfile('$work/ort.bin', n.float32); print('%.1e' % (abs(a - b).max() / abs(b).max()))")
		fi
	fi
	printf '%-8s %14s %14s %14s %8s %10s\n' "$t" "$best" "$med" "$omed" "$ratio" "$diff"
done
echo "(max diff: the largest difference of the 1000 outputs over the largest output)"
