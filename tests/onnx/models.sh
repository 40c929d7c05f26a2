#!/bin/sh
# models.sh: small networks made by tests/onnx/genmodels.py (an MLP, a
# LeNet, a residual network with BatchNormalization, a gated MLP with a
# layer norm of primitive operators, a Conv + BatchNormalization network
# with statistics given at run time, a model whose outputs are a stage, a
# Constant and its input, a model with dynamic N and H, ResNet-18's shapes
# at small size in NCHW16c, and models shaped like exporters' output with
# dynamic dimensions and shape arithmetic: an OCR classifier, an audio
# CNN, an MLP, a MobileNetV2, a gated MLP with norms, a model of shape
# operators, an audio embedding CNN with a log-mel front end on the
# waveform),
# compiled by txc with -H, run by models.c on the inputs numpy ran, and
# compared with numpy's outputs.  The dynamic model runs at two sizes
# given at run time, then compiled with -D; the residual network's
# BatchNormalizations must be folded into its Convs; examples/onnx's
# Makefile runs in a copy.  Skips (77) where
# /usr/bin/python3 lacks onnx or numpy.  MODELS="mlp lenet" runs those
# only.  MODELS_TARGET=cuda compiles them with --target=cuda and runs them
# in libtxrt's GPU emulator (tests/onnx/cuda.sh), without the checks of
# the CPU's code that follow the runs.
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
PY=${ONNX_PYTHON:-/usr/bin/python3}
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	{ echo "SKIP: $PY has no onnx or numpy (apt-get install python3-onnx)"; exit 77; }
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
txrt=${abs_top_builddir:-../..}/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "SKIP: no libtxrt.a"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-models.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
"$PY" "$src/tests/onnx/genmodels.py" "$work" ${MODELS:-} || { echo "FAIL: genmodels.py"; exit 1; }
$CC -std=c11 -O1 -c -o "$work/models.o" "$src/tests/onnx/models.c" ||
	{ echo "FAIL: models.c does not build"; exit 1; }
target=${MODELS_TARGET:-cpu}
[ "$target" = cuda ] && { TXRT_CUDA=emulate; export TXRT_CUDA; }
pass=0 fail=0
for meta in "$work"/*.meta; do
	name=$(basename "$meta" .meta)
	call=$(sed -n 's/^call //p' "$meta")
	printf '#include <stdint.h>\n#include "%s.h"\nint run_model(const int64_t *s, void *const *in, void *const *out)\n{\n\t(void)s;\n\treturn %s;\n}\n' \
	    "$name" "$call" >"$work/$name.call.c"
	if "$TXC" --target="$target" -o "$work/$name.o" -H "$work/$name.h" "$work/$name.onnx" \
	    >"$work/log" 2>&1 &&
	    $CC -std=c11 -Wall -Werror -c -o "$work/$name.call.o" "$work/$name.call.c" >>"$work/log" 2>&1 &&
	    $CC -o "$work/$name.run" "$work/models.o" "$work/$name.call.o" "$work/$name.o" "$txrt" \
	    -lpthread -ldl -lm >>"$work/log" 2>&1 &&
	    "$work/$name.run" "$meta" >>"$work/log" 2>&1; then
		pass=$((pass + 1))
		echo "ok: $name ($target): $(tail -1 "$work/log")"
	else
		fail=$((fail + 1))
		echo "FAIL: $name ($target)"
		head -20 "$work/log"
	fi
done
if [ "$target" != cpu ]; then
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
fi
# resnet_nchwc's convolutions and what they feed run in NCHW16c
# (onnx/layout.c): weights packed at compile time, no transform back; its
# 8 x 8 layers with rows and columns as one axis of 64
if [ -f "$work/resnet_nchwc.onnx" ]; then
	if "$TXC" --emit=tx "$work/resnet_nchwc.onnx" >"$work/r.tx" 2>&1 &&
	    [ "$(grep -c '^  const .*_16c: f32\[[0-9]*, [0-9]*, [0-9]*, [0-9]*, 16, 16\]' "$work/r.tx")" -eq 5 ] &&
	    [ "$(grep -c '^  const .*_16c: f32\[[0-9]*, 3, 7, 7, 16\]' "$work/r.tx")" -eq 1 ] &&
	    grep -q '^  maxpool.*: f32\[1, 1, 8, 8, 16\];' "$work/r.tx" &&
	    grep -q '^  batchnormalization.*_conv: f32\[1, 1, 64, 16\];' "$work/r.tx" &&
	    grep -q '^  out z: f32\[1, 32, 4, 4\];' "$work/r.tx"; then
		pass=$((pass + 1))
		echo "ok: resnet_nchwc: its convolutions, pool and residual adds in NCHW16c"
	else
		fail=$((fail + 1))
		echo "FAIL: resnet_nchwc: not in NCHW16c"
		grep -E '_16c|maxpool|out ' "$work/r.tx" | head
	fi
fi
# conv_out's last convolutions read a blocked value and are graph
# outputs: the 3 x 3 one calls conv2d_nchw_general on a copy in NCHW (not
# on the blocked tensor, nor as a rule reading it in place); `txc bench`
# takes the model as txc does (the stages against the unscheduled kernel)
if [ -f "$work/conv_out.onnx" ]; then
	if "$TXC" --emit=tx "$work/conv_out.onnx" >"$work/c.tx" 2>&1 &&
	    grep -q '^  relu_[0-9]*_nchw\[_a0, _a1, _a2, _a3\] = ' "$work/c.tx" &&
	    grep -q 'conv2d_nchw_general(relu_[0-9]*_nchw, ' "$work/c.tx" &&
	    "$TXC" bench "$work/conv_out.onnx" --runs=1 --warmup=0 >"$work/log" 2>&1 &&
	    grep -q '^  default ' "$work/log" && ! grep -q MISMATCH "$work/log"; then
		pass=$((pass + 1))
		echo "ok: conv_out: the call reads an NCHW copy of the blocked input; txc bench runs the model"
	else
		fail=$((fail + 1))
		echo "FAIL: conv_out: no NCHW copy before the call, or txc bench failed"
		grep -E 'nchw|conv2d' "$work/c.tx" | head
		cat "$work/log"
	fi
fi
# a 1-D Conv of one group and symmetric pads (logmel_cnn's STFT, stride
# 160 over 512 taps) calls conv2d_nchw_general on [N, C, 1, L], so the
# stdlib's schedule and blocked layout apply, not a written-out sum with
# no unit-stride axis
if [ -f "$work/logmel_cnn.onnx" ]; then
	if "$TXC" --emit=tx "$work/logmel_cnn.onnx" >"$work/l.tx" 2>&1 &&
	    grep -q '= conv2d_nchw_general([A-Za-z0-9_]*_2d, [A-Za-z0-9_]*_2d, SH = 1, SW = ' "$work/l.tx"; then
		pass=$((pass + 1))
		echo "ok: logmel_cnn: its 1-D Conv calls conv2d_nchw_general on a [N, C, 1, L] view"
	else
		fail=$((fail + 1))
		echo "FAIL: logmel_cnn: the 1-D Conv is not a call"
		grep -i 'conv' "$work/l.tx" | head
	fi
fi
# -D fixes a dynamic dimension; the entry point keeps its parameter and
# refuses another value
if [ -f "$work/dynamic.meta" ]; then
	sed '/^run$/q' "$work/dynamic.meta" >"$work/fixed.meta"
	if "$TXC" -D N=2 -D H=6 -o "$work/fixed.o" "$work/dynamic.onnx" >"$work/log" 2>&1 &&
	    $CC -o "$work/fixed.run" "$work/models.o" "$work/dynamic.call.o" "$work/fixed.o" \
	    "$txrt" -lpthread -ldl -lm >>"$work/log" 2>&1 &&
	    "$work/fixed.run" "$work/fixed.meta" >>"$work/log" 2>&1 &&
	    ! "$work/fixed.run" "$work/dynamic.meta" >>"$work/log" 2>&1 &&
	    grep -q 'run 1: the entry point returned' "$work/log"; then
		pass=$((pass + 1))
		echo "ok: dynamic -D N=2 -D H=6: $(grep returned "$work/log")"
	else
		fail=$((fail + 1))
		echo "FAIL: dynamic -D N=2 -D H=6"
		head -20 "$work/log"
	fi
fi
# BatchNormalization after a Conv with known statistics is folded into it
if [ -f "$work/resnet_tiny.onnx" ]; then
	if "$TXC" --emit=tx "$work/resnet_tiny.onnx" >"$work/r.tx" 2>&1 &&
	    ! grep -q 'batchnormalization.*_scale' "$work/r.tx" &&
	    [ "$(grep -cE '^  const .*_bn_bias(_16c)?: ' "$work/r.tx")" -eq 6 ]; then
		pass=$((pass + 1))
		echo "ok: resnet_tiny: 6 BatchNormalizations folded into their Convs"
	else
		fail=$((fail + 1))
		echo "FAIL: resnet_tiny: BatchNormalization not folded"
		grep -i 'const\|batch' "$work/r.tx" | head -20
	fi
fi
# If (onnx/branch.c): where the condition is known when txc compiles, the
# branch not taken is not compiled (branches' TopK, which txc does not
# take, and its flattening Reshape); where it is known only at run time,
# both branches run and a select (Where) picks; then branches of two
# shapes are refused, naming them
if [ -f "$work/branches.onnx" ]; then
	"$PY" - "$work/ifshapes.onnx" <<'EOP'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

def branch(node, out):
    return helper.make_graph([node], "b", [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])

flat = numpy_helper.from_array(np.array([-1], np.int64), "flat")
zero = numpy_helper.from_array(np.float32(0), "zero")
nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["c"]),
         helper.make_node("If", ["c"], ["y"], name="pick",
                          then_branch=branch(helper.make_node("Identity", ["x"], ["t"]), "t"),
                          else_branch=branch(helper.make_node("Reshape", ["x", "flat"], ["e"]), "e"))]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [flat, zero])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
EOP
	if "$TXC" --emit=tx "$work/branches.onnx" >"$work/b.tx" 2>&1 &&
	    grep -q '^  y1\[_a0, _a1\] = (greater_[0-9]*) ? (a_then\[_a0, _a1\]) : (a_else\[_a0, _a1\]);' \
	    "$work/b.tx" && ! grep -qi 'topk\|g_idx\|y3_else' "$work/b.tx" &&
	    ! "$TXC" -o "$work/ifshapes.o" "$work/ifshapes.onnx" >"$work/log" 2>&1 &&
	    grep -q "node 'pick' (If, byte [0-9]*): its branches give f32\[2, 3\] and f32\[6\]: with a condition known only when it runs" \
	    "$work/log" && [ ! -e "$work/ifshapes.o" ]; then
		pass=$((pass + 1))
		echo "ok: branches: a select where the condition is known at run time, the branch not taken skipped; two shapes refused"
	else
		fail=$((fail + 1))
		echo "FAIL: branches: If"
		grep -E 'y1|y3|topk|g_idx' "$work/b.tx" | head
		cat "$work/log"
	fi
fi
# the entry point's name: the file's, made an identifier (a leading digit
# gets a '_': issue 33's ABI); one a library uses is refused, and --prefix
# mends it
if [ -f "$work/outputs.onnx" ]; then
	cp "$work/outputs.onnx" "$work/3rd-model.v1.onnx"
	cp "$work/outputs.onnx" "$work/exp.onnx"
	if "$TXC" -o "$work/3rd.o" -H "$work/3rd.h" "$work/3rd-model.v1.onnx" >"$work/log" 2>&1 &&
	    grep -q '^int _3rd_model_v1(const float \*x, float \*y, float \*c_out, float \*x_out);' \
	    "$work/3rd.h" && nm "$work/3rd.o" | grep -q ' T _3rd_model_v1$' &&
	    ! "$TXC" -o "$work/exp.o" "$work/exp.onnx" >>"$work/log" 2>&1 &&
	    grep -q "entry point 'exp' cannot be named so" "$work/log" &&
	    "$TXC" --prefix=m_ -o "$work/exp.o" -H "$work/exp.h" "$work/exp.onnx" \
	    >>"$work/log" 2>&1 &&
	    grep -q '^int m_exp(const float \*x, float \*y, float \*c_out, float \*x_out);' \
	    "$work/exp.h"; then
		pass=$((pass + 1))
		echo "ok: 3rd-model.v1.onnx gives _3rd_model_v1; exp.onnx is refused, --prefix=m_ gives m_exp"
	else
		fail=$((fail + 1))
		echo "FAIL: 3rd-model.v1.onnx"
		cat "$work/log" "$work/3rd.h" 2>/dev/null | head -20
	fi
fi
# examples/onnx: its Makefile in a copy, against numpy's answer
mkdir "$work/ex" && cp "$src/examples/onnx/Makefile" "$src/examples/onnx/make_model.py" \
    "$src/examples/onnx/classify.c" "$work/ex/" &&
if make -s --no-print-directory -C "$work/ex" TXC="$TXC" TXRT="$txrt" CC="$CC" PYTHON="$PY" >"$work/log" 2>&1; then
	pass=$((pass + 1))
	echo "ok: examples/onnx: $(grep agree "$work/log")"
else
	fail=$((fail + 1))
	echo "FAIL: examples/onnx"
	head -20 "$work/log"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
