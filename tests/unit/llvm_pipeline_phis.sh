#!/bin/sh
# llvm_pipeline_phis.sh: the LLVM IR of a pipeline grows linearly with its
# stages (issue 24, item 10).  Each intermediate stage at the root is a
# heap buffer, freed on the failure exit; as separate slots, LLVM made
# each a value with a phi there over every failing check after it: n
# stages gave n * n phi operands, and the code generator's time grew with
# their square (400 stages: 18 s; cg_func.c now keeps the slots in one
# array that the exit frees in a loop).  Counts the phi operands of the
# optimised IR of 32- and 64-stage chains: doubling the stages must not
# quadruple them (a deterministic stand-in for the compile time).
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
chain() {
	n=$1
	{
		echo "kernel chain(N) {"
		echo "  in  x: f32[N];"
		echo "  out y: f32[N];"
		i=1
		while [ $i -lt "$n" ]; do echo "  s$i: f32[N];"; i=$((i + 1)); done
		prev=x i=1
		while [ $i -lt "$n" ]; do echo "  s$i[i] = $prev[i] * 1.5 + 0.25;"; prev=s$i; i=$((i + 1)); done
		echo "  y[i] = $prev[i] + 1.0;"
		echo "}"
	} >chain$n.tx
	"$TXC" --emit=llvm chain$n.tx -o chain$n.ll || { echo "FAIL: txc, $n stages"; exit 1; }
	# the operands of every phi: one '[ value, %block ]' each
	grep ' = phi ' chain$n.ll | grep -o '\[ ' | wc -l
}
a=$(chain 32) || exit 1
b=$(chain 64) || exit 1
echo "phi operands: 32 stages $a, 64 stages $b"
if [ "$b" -ge $((3 * a)) ] || [ "$b" -ge $((20 * 64)) ]; then
	echo "FAIL: the phis grow faster than the stages"
	exit 1
fi
exit 0
