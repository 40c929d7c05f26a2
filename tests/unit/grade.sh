#!/bin/sh
# grade.sh: tools/grade.sh on the tutorial's exercises: every reference
# solution passes (results and rules; --no-speed, so no timing here), and
# known bad solutions fail with their reason: a changed algorithm (wrong
# result), changed parameters, an illegal schedule, a forbidden
# primitive, a required one missing, an epilogue left unfused, and an
# empty schedule against a speed-up it cannot reach (1x against 2x: the
# one measured case, whose margin no machine's noise closes).
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
[ -f "$abs_top_builddir/rt/.libs/libtxrt.a" ] || { echo "SKIP: no static libtxrt"; exit 77; }
TXCMP=$abs_top_builddir/tests/tools/txcmp TXRT=$abs_top_builddir/rt/.libs/libtxrt.a
export TXCMP TXRT
grade="$SHELL $abs_top_srcdir/tools/grade.sh"
ex=$abs_top_srcdir/examples/tutorial/exercises
sol=$abs_top_srcdir/examples/tutorial/solutions
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect RC PATTERN grade-args...: the grader's exit status and a line of its output
expect() {
	want=$1 pat=$2
	shift 2
	$grade "$@" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$pat" "$tmp/out"; then
		fail "grade.sh $* exited $rc (want $want) without '$pat':"
		cat "$tmp/out"
	fi
}
n=0
for f in "$ex"/*.tx; do
	name=$(basename "$f")
	[ -f "$sol/$name" ] || { fail "exercise $name has no reference solution"; continue; }
	expect 0 'grade: pass' --no-speed "$f" "$sol/$name"
	n=$((n + 1))
done
[ $n -ge 4 ] || fail "only $n exercises"

# a changed algorithm: the same schedule, / 2 instead of / 3
sed 's|blur_x\[y + 2, x\]) / 3.0|blur_x[y + 2, x]) / 2.0|' "$sol/blur-2x.tx" >"$tmp/wrong.tx"
expect 1 'wrong result at H=37 W=45' --no-speed "$ex/blur-2x.tx" "$tmp/wrong.tx"
# changed parameters
sed 's|kernel blur(H, W)|kernel blur(H, W, s: f32)|' "$sol/blur-2x.tx" >"$tmp/params.tx"
expect 1 "the kernel's parameters changed" --no-speed "$ex/blur-2x.tx" "$tmp/params.tx"
# an illegal schedule: txc's diagnostic
sed 's|output.parallel(yo);|output.parallel(nosuch);|' "$sol/blur-2x.tx" >"$tmp/illegal.tx"
expect 1 'txc does not compile the solution' --no-speed "$ex/blur-2x.tx" "$tmp/illegal.tx"
# a forbidden primitive: blur_x inlined where the exercise wants it stored
sed '/^schedule/,$d' "$sol/blur-fuse.tx" >"$tmp/inlined.tx"
cat >>"$tmp/inlined.tx" <<'TX'
schedule blur for cpu {
  blur_x.compute_inline();
  output.parallel(y);
}
TX
expect 1 'uses compute_inline, which this exercise forbids' --no-speed "$ex/blur-fuse.tx" "$tmp/inlined.tx"
# an epilogue computed on its own: acc at root, no compute_at
sed '/^schedule/,$d' "$sol/matmul-epilogue.tx" >"$tmp/unfused.tx"
cat >>"$tmp/unfused.tx" <<'TX'
schedule matmul_bias_relu for cpu {
  acc.split(j, 8) -> (jo, ji);
  acc.vectorize(ji);
  C.parallel(i);
}
TX
expect 1 'acc is computed in a loop nest of its own' --no-speed "$ex/matmul-epilogue.tx" "$tmp/unfused.tx"
expect 1 'does not use compute_at, which this exercise requires' --no-speed "$ex/matmul-epilogue.tx" "$tmp/unfused.tx"
# too slow by construction: the exercise's own empty schedule, timed
expect 1 'needs 2x' "$ex/blur-2x.tx" "$ex/blur-2x.tx"
# usage
expect 2 'usage' "$ex/blur-2x.tx"
[ $fails -eq 0 ] && echo "PASS: grade.sh, $n exercises"
[ $fails -eq 0 ]
