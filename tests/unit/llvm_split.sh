#!/bin/sh
# llvm_split.sh: an object compiled in parts on several threads
# (--codegen-threads, target/llvm/llvm_split.c) is the object compiled on
# one: the same global symbols (the entry points, nothing more), the same
# local functions, no renamed label left undefined; and its kernels
# compute what the unscheduled kernels do, through diffcheck.sh with
# every object split into 2 or 3 parts (closures, micro-kernels built
# into the object and called across parts, string tables, several
# kernels per file).  -g and --emit=asm are not split.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
[ -f "$abs_top_builddir/rt/.libs/libtxrt.a" ] || { echo "SKIP: no static libtxrt"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
src=$abs_top_srcdir

# symbols: nchwc.tx (four kernels and their DLPack entries), conv2d.tx,
# matmul.tx
for f in stdlib/nchwc.tx stdlib/conv2d.tx stdlib/matmul.tx; do
	b=$(basename "$f" .tx)
	for n in 1 2 3; do
		"$TXC" --local-intrinsics --dlpack --codegen-threads=$n "$src/$f" -o "$tmp/$b.$n.o" 2>"$tmp/err" ||
			fail "$f --codegen-threads=$n: $(cat "$tmp/err")"
		nm "$tmp/$b.$n.o" | awk '$2 == "T" || $2 == "t" || $2 == "U" { print $2, $3 }' |
			sort >"$tmp/$b.$n.sym"
		! nm "$tmp/$b.$n.o" | grep -q 'Ltxc' || [ $n -gt 1 ] ||
			fail "$f: a renamed label in the object compiled on one thread"
	done
	for n in 2 3; do
		cmp -s "$tmp/$b.1.sym" "$tmp/$b.$n.sym" ||
			{ diff "$tmp/$b.1.sym" "$tmp/$b.$n.sym"; fail "$f: symbols differ with $n threads"; }
	done
	[ "$(grep -c '^t ' "$tmp/$b.1.sym")" -ge 2 ] || fail "$f: too few functions to split"
done

# -g and assembly: one part (no renamed labels)
"$TXC" -g --codegen-threads=2 "$src/stdlib/nchwc.tx" -o "$tmp/g.o" || fail "-g"
nm -a "$tmp/g.o" | grep -q 'Ltxc' && fail "-g: the object was split"
"$TXC" -S --codegen-threads=2 "$src/stdlib/nchwc.tx" -o "$tmp/n.s" || fail "-S"
grep -q 'Ltxc' "$tmp/n.s" && fail "-S: the assembly was split"

# over 1 MiB of constant data: one part (the parts are joined as assembly
# text, where a constant's every byte is printed and parsed again: a
# ResNet-18's 46 MB of weights took 11 s)
head -c 2097152 /dev/zero >"$tmp/big.bin"
cat >"$tmp/big.tx" <<EOF
kernel big_a(N) {
  const w: f32[524288] = file("big.bin");
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] + w[i % 524288];
}
kernel big_b(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * 2.0;
}
EOF
(cd "$tmp" && "$TXC" --codegen-threads=2 big.tx -o big.o) || fail "big constants"
nm -a "$tmp/big.o" | grep -q 'Ltxc' && fail "2 MiB of constants: the object was split"

# a bad thread count
"$TXC" --codegen-threads=0 "$src/stdlib/nchwc.tx" -o "$tmp/x.o" 2>"$tmp/err" &&
	fail "--codegen-threads=0 accepted"
grep -q "bad --codegen-threads '0'" "$tmp/err" || fail "--codegen-threads=0: $(cat "$tmp/err")"

# results: every object built in parts
for n in 2 3; do
	cat >"$tmp/txc$n" <<EOF
#!/bin/sh
exec "$TXC" --codegen-threads=$n "\$@"
EOF
	chmod +x "$tmp/txc$n"
done
run() { # threads diffcheck-args...
	n=$1; shift
	TXC=$tmp/txc$n $SHELL "$src/tests/run/diffcheck.sh" "$@" || fail "diffcheck with $n threads: $*"
}
run 2 -k conv2d_nchw8c -r 2 -c 'N=1:2 CB=1:2 KB=1:2 H=1:9 W=1:15 R=1:3 S=1:3 SH=1:2 SW=1:3 PH=0:2 PW=0:2 DH=1:2 DW=1:3' \
	"$src/stdlib/nchwc.tx"
run 3 -r 2 -c 'M=1:40 N=1:40 K=1:40' "$src/tests/run/tensorize_pack.tx"
run 2 -c 'H=1:70 W=1:70' "$src/tests/run/blur.tx"
echo "PASS: split objects match"
