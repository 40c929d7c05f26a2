#!/bin/sh
# llvm_cross.sh: --target=aarch64-linux-gnu writes an AArch64 object (as
# llvm-objdump-19 -f reads it), and -S / --emit=llvm / --emit=bc / -g
# write assembly, IR text, bitcode and DWARF line tables for the host.
command -v llvm-objdump-19 >/dev/null 2>&1 || { echo "SKIP: no llvm-objdump-19"; exit 77; }
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
cat >scale.tx <<'TX'
kernel scale(N) {
  in  A: f32[N];
  out B: f32[N];
  B[i] = A[i] * 2.0 + 1.0;
}
schedule scale for cpu {
  B.split(i, 8) -> (io, ii);
  B.vectorize(ii);
  B.parallel(io);
}
TX
fail() { echo "FAIL: $*"; exit 1; }
"$TXC" --target=aarch64-linux-gnu scale.tx -o arm.o || fail "txc --target=aarch64-linux-gnu"
llvm-objdump-19 -f arm.o >arm.txt || fail "llvm-objdump-19 cannot read arm.o"
grep -q 'architecture: aarch64' arm.txt || { cat arm.txt; fail "arm.o is not aarch64"; }
"$TXC" --target=aarch64-linux-gnu --cpu=cortex-a72 -S scale.tx -o arm.s || fail "-S for aarch64"
grep -q 'scale:' arm.s || fail "no 'scale:' label in arm.s"
"$TXC" --emit=llvm -o scale.ll scale.tx || fail "--emit=llvm"
grep -q 'define i32 @scale(i64 %N, ptr noalias readonly %A, ptr noalias %B)' scale.ll ||
	fail "unexpected signature in scale.ll"
grep -q 'txrt_parallel_for' scale.ll || fail "no call to txrt_parallel_for"
"$TXC" --emit=bc -O0 -o scale.bc scale.tx || fail "--emit=bc"
[ "$(od -An -c -N2 scale.bc | tr -d ' ')" = BC ] || fail "scale.bc is not bitcode"
"$TXC" -g --cpu=generic scale.tx -o g.o || fail "-g"
if command -v llvm-dwarfdump-19 >/dev/null 2>&1; then
	llvm-dwarfdump-19 --debug-line g.o | grep -q 'scale.tx' || fail "no line table for scale.tx"
fi
! "$TXC" --target=nonsense-unknown-none scale.tx -o bad.o 2>err.txt || fail "a bad triple was accepted"
[ ! -e bad.o ] || fail "a failed compile left bad.o"
# a target LLVM has but this txc was not configured with (configure
# --with-llvm-targets): the message names the ones it has
if ! "$TXC" --target=xcore-unknown-none scale.tx -o xc.o 2>err.txt; then
	grep -q 'writes code for the LLVM targets .*X86.*--with-llvm-targets' err.txt ||
		fail "unbuilt target: $(cat err.txt)"
	[ ! -e xc.o ] || fail "a failed compile left xc.o"
fi
exit 0
