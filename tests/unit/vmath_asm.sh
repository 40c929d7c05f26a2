#!/bin/sh
# vmath_asm.sh: vectorized exp, log, tanh, sigmoid, erf and pow become
# vector code (target/llvm/vmath.c) on every CPU target: the assembly of
# vectorized kernels calls no libm function for the host, x86-64 with
# plain SSE2, with AVX2 and with AVX-512, and aarch64 (where txc was configured
# with that target); --no-vector-math calls libm per lane again, and the C output
# keeps the scalar calls.
set -u
TXC=${TXC:-./txc}
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "vmath_asm: $*" >&2; exit 1; }

cat >"$tmp/m.tx" <<'TX'
kernel m(N) {
  in  x: f32[N];
  in  p: f32[N];
  out y: f32[N];
  y[i] = exp(x[i]) + log(x[i]) + tanh(x[i]) + erf(x[i]) + sigmoid(x[i]) + pow(x[i], p[i])
         + f32(exp(f16(x[i])));
}
schedule m for cpu {
  y.split(i, 8) -> (io, ii);
  y.vectorize(ii);
}
TX
libm='^[[:space:]]+(callq?|bl|jmp|b)[[:space:]]+[^[:space:]]*(expf|logf|tanhf|erff|powf|exp|log|tanh|erf|pow)(@PLT)?$'
calls() { grep -cE "$libm" "$1"; }

for t in "" "--cpu=x86-64" "--cpu=haswell" "--cpu=skylake-avx512" \
	"--target=aarch64-linux-gnu" "--target=aarch64-linux-gnu --cpu=neoverse-v1"; do
	case $t in
	*aarch64*) ;;
	*--cpu=*) uname -m | grep -q x86_64 || continue ;;
	esac
	# shellcheck disable=SC2086
	if ! "$TXC" $t -S -o "$tmp/a.s" "$tmp/m.tx" 2>"$tmp/err"; then
		grep -q "unknown target" "$tmp/err" && continue   # not configured
		cat "$tmp/err" >&2
		fail "txc $t -S"
	fi
	n=$(calls "$tmp/a.s")
	[ "$n" = 0 ] || fail "txc $t: $n libm calls in a vectorized loop"
	for k in sigmoid gelu gelu_tanh; do
		# shellcheck disable=SC2086
		"$TXC" $t -k $k -S -o "$tmp/k.s" "$srcdir/stdlib/elementwise.tx" || fail "txc $t -k $k"
		n=$(calls "$tmp/k.s")
		[ "$n" = 0 ] || fail "txc $t stdlib $k: $n libm calls"
	done
done
# softmax's exponentials are a scalar stage that LLVM's loop vectorizer
# vectorizes: its llvm.exp.v8f32 (eight expf calls) is replaced too
"$TXC" --emit=llvm -o "$tmp/s.ll" "$srcdir/stdlib/softmax.tx" -k softmax || fail "txc softmax"
grep -q 'call.*@llvm\.exp\.v[0-9]*f32' "$tmp/s.ll" && fail "softmax: a vector llvm.exp call is left"
"$TXC" --no-vector-math --emit=llvm -o "$tmp/s.ll" "$srcdir/stdlib/softmax.tx" -k softmax ||
	fail "txc --no-vector-math softmax"
grep -q 'call.*@llvm\.exp\.v[0-9]*f32' "$tmp/s.ll" || fail "softmax: not loop-vectorized (the check above tests nothing)"
"$TXC" --no-vector-math -S -o "$tmp/n.s" "$tmp/m.tx" || fail "txc --no-vector-math"
[ "$(calls "$tmp/n.s")" -ge 8 ] || fail "--no-vector-math: no libm call per lane"
"$TXC" --emit=c -o "$tmp/m.c" "$tmp/m.tx" || fail "txc --emit=c"
for f in expf logf tanhf erff powf; do
	grep -q "$f(" "$tmp/m.c" || fail "the C output has no $f call"
done
exit 0
