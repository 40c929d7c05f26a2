#!/bin/sh
# ort.sh: the models of genmodels.py (as models.sh runs them) against
# onnxruntime instead of numpy: onnxruntime-node runs each model on the
# same inputs (ort_ref.js) and models.c compares txc's outputs with its
# (within 1e-3 of each element relative to the output's scale, the
# tolerance issue 33 judges by).  onnxruntime-node is found through
# ORT_NODE_PATH, else in the build tree's ort/node_modules (.ci/run
# installs it there with npm); without it, or node, or python3-onnx, the
# test skips (77).
set -u
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
PY=${ONNX_PYTHON:-/usr/bin/python3}
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${abs_top_builddir:-../..}
ort=${ORT_NODE_PATH:-$build/ort/node_modules}
command -v node >/dev/null 2>&1 || { echo "SKIP: no node"; exit 77; }
NODE_PATH=$ort node -e 'require("onnxruntime-node")' >/dev/null 2>&1 ||
	{ echo "SKIP: no onnxruntime-node in $ort (npm install onnxruntime-node there)"; exit 77; }
"$PY" -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: $PY has no onnx or numpy"; exit 77; }
txrt=$build/rt/.libs/libtxrt.a
[ -f "$txrt" ] || { echo "SKIP: no libtxrt.a"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-ort.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
"$PY" "$src/tests/onnx/genmodels.py" "$work" ${MODELS:-} || { echo "FAIL: genmodels.py"; exit 1; }
names=$(cd "$work" && ls *.meta | sed 's/\.meta$//')
# shellcheck disable=SC2086
NODE_PATH=$ort node "$src/tests/onnx/ort_ref.js" "$work" $names >"$work/ort.log" 2>&1 ||
	{ echo "FAIL: onnxruntime could not run the models"; cat "$work/ort.log"; exit 1; }
$CC -std=c11 -O1 -c -o "$work/models.o" "$src/tests/onnx/models.c" ||
	{ echo "FAIL: models.c does not build"; exit 1; }
pass=0 fail=0
for name in $names; do
	meta=$work/$name.meta
	call=$(sed -n 's/^call //p' "$meta")
	# the same runs, onnxruntime's outputs as the reference
	sed 's/^\(out [0-9]* [0-9]* [^ ]*\)\.\([0-9]*\)\.out\([0-9]*\)\.bin$/\1.\2.ort\3.bin/' "$meta" >"$work/$name.ortmeta"
	printf '#include <stdint.h>\n#include "%s.h"\nint run_model(const int64_t *s, void *const *in, void *const *out)\n{\n\t(void)s;\n\treturn %s;\n}\n' \
	    "$name" "$call" >"$work/$name.call.c"
	if "$TXC" -o "$work/$name.o" -H "$work/$name.h" "$work/$name.onnx" >"$work/log" 2>&1 &&
	    $CC -std=c11 -c -o "$work/$name.call.o" "$work/$name.call.c" >>"$work/log" 2>&1 &&
	    $CC -o "$work/$name.run" "$work/models.o" "$work/$name.call.o" "$work/$name.o" "$txrt" \
	    -lpthread -ldl -lm >>"$work/log" 2>&1 &&
	    "$work/$name.run" "$work/$name.ortmeta" >>"$work/log" 2>&1; then
		pass=$((pass + 1))
		echo "ok: $name against onnxruntime: $(tail -1 "$work/log")"
	else
		fail=$((fail + 1))
		echo "FAIL: $name against onnxruntime"
		head -20 "$work/log"
	fi
done
echo "ort.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
