#!/bin/sh
# cuda.sh: genmodels.py's networks compiled with --target=cuda and run in
# libtxrt's GPU emulator (TXRT_CUDA=emulate), against numpy's outputs as
# models.sh runs them on the CPU: the generated cuda schedules, and the
# weights (constant tensors) copied to device memory on the entry point's
# first call (txrt_cuda_constant).  The emulator checks every access, so
# an out-of-bounds read or a shared-memory race fails the run.  ocr_cls is
# left out: its Reshape of a dynamic H * W is not bounded under the
# generated cuda schedule yet (txc(1) ONNX MODELS).  Skips (77) where
# /usr/bin/python3 lacks onnx or numpy.  MODELS="mlp lenet" runs those.
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
PY=${ONNX_PYTHON:-/usr/bin/python3}
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	{ echo "SKIP: $PY has no onnx or numpy (apt-get install python3-onnx)"; exit 77; }
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
txrt=${abs_top_builddir:-../..}/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "SKIP: no libtxrt.a"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-onnx-cuda.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
models=${MODELS:-mlp lenet resnet_tiny gated-mlp bn_runtime outputs dynamic audio_cnn mlp_dyn \
mobilenet_v2 gated_norm shape_ops upsample}
# shellcheck disable=SC2086
"$PY" "$src/tests/onnx/genmodels.py" "$work" $models || { echo "FAIL: genmodels.py"; exit 1; }
$CC -std=c11 -O1 -c -o "$work/models.o" "$src/tests/onnx/models.c" ||
	{ echo "FAIL: models.c does not build"; exit 1; }
TXRT_CUDA=emulate
export TXRT_CUDA
pass=0 fail=0
for name in $models; do
	meta=$work/$name.meta
	call=$(sed -n 's/^call //p' "$meta")
	printf '#include <stdint.h>\n#include "%s.h"\nint run_model(const int64_t *s, void *const *in, void *const *out)\n{\n\t(void)s;\n\treturn %s;\n}\n' \
	    "$name" "$call" >"$work/$name.call.c"
	if "$TXC" --target=cuda -o "$work/$name.o" -H "$work/$name.h" "$work/$name.onnx" \
	    >"$work/log" 2>&1 &&
	    $CC -std=c11 -c -o "$work/$name.call.o" "$work/$name.call.c" >>"$work/log" 2>&1 &&
	    $CC -o "$work/$name.run" "$work/models.o" "$work/$name.call.o" "$work/$name.o" "$txrt" \
	    -lpthread -ldl -lm >>"$work/log" 2>&1 &&
	    "$work/$name.run" "$meta" >>"$work/log" 2>&1; then
		pass=$((pass + 1))
		echo "ok: $name on cuda (emulated): $(tail -1 "$work/log")"
	else
		fail=$((fail + 1))
		echo "FAIL: $name on cuda (emulated)"
		head -20 "$work/log"
	fi
done
echo "cuda.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
