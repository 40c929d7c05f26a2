#!/bin/sh
# cli.sh: txc(1) as its page documents it, checked from the outside: every
# bad invocation fails with exit status 1 (2 for a file that cannot be read
# or written, see EXIT STATUS) and one line on standard error, never a
# crash; a failing compile leaves no output file (not even the -H header);
# '-' reads standard input; -o - writes standard output; -H, -D, -k, -s,
# --emit and --target=aarch64-linux-gnu work.  Every check runs and each
# failure is reported; exit 0 pass, 1 fail.
set -u
: "${TXC:?TXC must name the txc binary}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run WANT-RC ARGS...: txc ARGS must exit WANT-RC; for a non-zero status,
# standard error must be exactly one line
run() {
	want=$1
	shift
	"$TXC" "$@" >out 2>err </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "txc $*: exit $rc, want $want: $(head -c 300 err)"
		return
	fi
	if [ "$want" -ne 0 ] && [ "$(wc -l <err)" -ne 1 ]; then
		fail "txc $*: $(wc -l <err) lines on stderr, want 1:"
		sed 's/^/    /' err | head -5
	fi
}

# a file that txc must not have left behind
absent() {
	for f; do
		[ -e "$f" ] && fail "$f left behind after a failed compile"
		rm -f "$f"
	done
	for f in *.tmp*; do
		[ -e "$f" ] && { fail "temporary file $f left behind"; rm -f "$f"; }
	done
}

cat >s.tx <<'EOF'
kernel scale(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * 2.0;
}
schedule scale for cpu {
  y.split(i, 8) -> (io, ii);
  y.vectorize(ii);
}
schedule scale as wide for cpu {
  y.split(i, 64) -> (io, ii);
  y.parallel(io);
}
EOF
cat >bad.tx <<'EOF'
kernel k(N) { in x: f32[N]; out y: f32[N]; y[i] = x[i] * i; }
EOF

# ---- bad command lines: exit 1, one line --------------------------------
run 1 --bogus s.tx
run 1 -Z s.tx
run 1
run 1 s.tx s.tx
run 1 --emit=zzz s.tx
run 1 --emit= s.tx
for opt in -o -k -s -I -H -D; do
	run 1 "$opt"
done
run 1 -D N s.tx
run 1 -D N=-1 s.tx
run 1 -D N=abc s.tx
run 1 -D =4 s.tx
run 1 -D N=99999999999999999999 s.tx
run 1 --color=sometimes s.tx
run 1 --max-errors=abc s.tx
run 1 -O4 s.tx
run 1 --target=sparc s.tx
run 1 -k nosuch s.tx -o k.o
absent k.o
"$TXC" --color=never -s nosuch s.tx -o k.o >/dev/null 2>err
[ $? -eq 1 ] || fail "-s nosuch: want exit 1"
grep -q "no schedule .nosuch." err || fail "-s nosuch: $(head -1 err)"
absent k.o

# ---- files that cannot be read or written: exit 2 (txc(1) EXIT STATUS) ---
run 2 nosuch.tx
run 2 -o "$tmp/no/such/dir/x.o" s.tx
run 2 -H "$tmp/no/such/dir/x.h" s.tx -o h.o
absent h.o
# an unwritable object must not leave the header of -H behind
run 2 -H h.h s.tx -o "$tmp/no/such/dir/x.o"
absent h.h
# a directory is neither an input nor an output
mkdir adir
run 2 adir
run 2 -H h.h s.tx -o adir
absent h.h
# a failure after the header was written (--emit=harness needs one
# kernel) keeps an existing header as it was
cat >two.tx <<'EOF'
kernel k1(N) { in x: f32[N]; out y: f32[N]; y[i] = x[i]; }
kernel k2(N) { in x: f32[N]; out y: f32[N]; y[i] = x[i]; }
EOF
echo old >h.h
run 1 -H h.h --emit=harness two.tx -o h.c
[ "$(cat h.h)" = old ] || fail "a failed compile changed an existing -H header"
absent h.c
rm -f h.h
run 1 -H h.h --emit=harness two.tx -o h.c
absent h.h h.c

# ---- LLVM options: an error, not an abort ---------------------------------
run 1 --cpu=notacpu s.tx -o c.o
absent c.o
run 1 --dump-after=nosuchpass s.tx -o d.o
absent d.o
grep -q 'bounds_infer' err || fail "--dump-after=nosuchpass does not list the passes"
run 1 --features=+bogus s.tx -o f.o
absent f.o
grep -q "unknown CPU feature '+bogus'" err || fail "--features=+bogus: $(head -1 err)"
run 1 --features=avx2 s.tx -o f.o
absent f.o
run 1 --target=aarch64-linux-gnu --cpu=notacpu s.tx -o f.o
absent f.o
# the cuda target: a kernel with no cuda schedule and no generated one
# (--no-auto-schedule) has no loop on the GPU; with its generated one it
# compiles
"$TXC" --no-auto-schedule --target=cuda s.tx -o cu.o >out 2>err </dev/null
[ $? -eq 1 ] || fail "--target=cuda s.tx without a cuda schedule: not exit 1"
absent cu.o
grep -q 'not inside a loop bound to GPU blocks' err || fail "--target=cuda -o cu.o: $(head -1 err)"
"$TXC" --target=cuda s.tx -o cu.o >out 2>err </dev/null ||
	fail "--target=cuda s.tx with its generated schedule: $(head -1 err)"
[ -s cu.o ] || fail "--target=cuda s.tx wrote no cu.o"
rm -f cu.o
run 0 --target=cuda --emit=c -o - s.tx
run 1 --emit=ptx s.tx -o p.ptx
absent p.ptx
run 1 --emit=kernels s.tx
run 1 --cuda-arch=sm80 s.tx
run 1 --cuda-arch=sm_90 s.tx -o a.o
absent a.o
cat >g.tx <<'EOF'
kernel scale(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * 2.0;
}
schedule scale for cuda {
  y.split(i, 128) -> (bo, ti);
  y.bind(bo, blockIdx.x);
  y.bind(ti, threadIdx.x);
}
EOF
run 0 --target=cuda g.tx -o g.o
[ -s g.o ] || fail "--target=cuda g.tx -o g.o wrote no object"
run 0 --target=cuda --cuda-arch=sm_90 --emit=ptx g.tx -o g.ptx
grep -q '^\.target sm_90' g.ptx || fail "--cuda-arch=sm_90: $(grep '^\.target' g.ptx)"
grep -q '^\.visible \.entry scale_k0' g.ptx || fail "--emit=ptx: no entry scale_k0"
run 0 --target=cuda --emit=kernels -o - g.tx
grep -q 'gpu.launch(0)' out || fail "--emit=kernels: no launch in the host code"
run 0 --target=cuda --emit=cuda -o g.cu g.tx
grep -q '__global__ void' g.cu || fail "--emit=cuda: no __global__ kernel"
grep -q 'scale_k0<<<' g.cu || fail "--emit=cuda: no launch"
run 1 --emit=cuda s.tx -o s.cu
absent s.cu

# ---- -D names a size parameter of a compiled kernel ------------------------
run 1 -D Q=4 s.tx -o q.o
absent q.o
grep -q "no kernel has a size parameter 'Q'" err || fail "-D Q=4: $(head -1 err)"

# ---- txc bench: bad options are one line -----------------------------------
run 1 bench s.tx -D N=64 --runs=abc
grep -q "see 'txc bench --help'" err || fail "bench --runs=abc: $(head -1 err)"
run 1 bench s.tx -D N=64 --bogus
run 1 bench s.tx -D N=64 --tolerance=x
run 1 bench

# ---- the stdlib: txc run from its build tree finds the source tree's -------
if [ -n "${abs_top_builddir:-}" ] && [ "$TXC" = "$abs_top_builddir/txc" ]; then
	printf 'import "intrinsics/cpu.tx";\nimport "matmul.tx";\n' >imp.tx
	(unset TXC_STDLIB; "$TXC" --check imp.tx) >/dev/null 2>err ||
		fail "the build tree's txc does not find the stdlib: $(head -1 err)"
fi

# ---- errors in the program: exit 1, no output left behind -----------------
"$TXC" --color=never bad.tx -o b.o >/dev/null 2>err
[ $? -eq 1 ] || fail "bad.tx: want exit 1"
grep -q '^bad.tx:1:51: error: ' err || fail "bad.tx: no file:line:col: error: line"
absent b.o b.h
"$TXC" --color=never -H b.h bad.tx -o b.o >/dev/null 2>&1
absent b.o b.h
# a failing compile keeps the previous output as it was (atomic replace)
"$TXC" s.tx -o keep.o || fail "s.tx does not compile"
cp keep.o keep.ref
"$TXC" bad.tx -o keep.o >/dev/null 2>&1
cmp -s keep.o keep.ref || fail "a failed compile changed an existing output"

# ---- success paths ---------------------------------------------------------
run 0 --check s.tx
[ -s out ] && fail "--check wrote to standard output"
run 0 -s wide s.tx -o w.o
[ -s w.o ] || fail "-s wide wrote no object"
for kind in obj asm llvm bc c harness; do
	rm -f s.o s.s s.ll s.bc s.c s_harness.c
	run 0 --emit=$kind s.tx
	case $kind in
	obj) f=s.o ;; asm) f=s.s ;; llvm) f=s.ll ;; bc) f=s.bc ;;
	c) f=s.c ;; harness) f=s_harness.c ;;
	esac
	[ -s "$f" ] || fail "--emit=$kind wrote no $f"
done
run 0 --emit=loops s.tx
grep -q 'produce y' out || fail "--emit=loops: no loop nest on stdout"
run 0 -S -o - s.tx
grep -q 'scale' out || fail "-S -o -: no assembly on stdout"
# '-' reads standard input; diagnostics then name <stdin>
"$TXC" --check - <s.tx || fail "--check - rejected s.tx"
"$TXC" --color=never --check - <bad.tx 2>err
[ $? -eq 1 ] || fail "--check - accepted bad.tx"
grep -q '^<stdin>:1:51: error: ' err || fail "stdin diagnostic: $(head -1 err)"
"$TXC" --print-loops - <s.tx | grep -q 'produce y' || fail "--print-loops - printed no nest"
# -D fixes a size: the loop nest then has constant extents
"$TXC" --print-loops -D N=64 s.tx | grep -q 'for (io, 0, 8)' ||
	fail "-D N=64: the outer loop is not 'for (io, 0, 8)'"
# --dlpack: the header declares NAME_dlpack, so the object must define it
run 0 --dlpack -H d.h s.tx -o d.o
grep -q 'scale_dlpack' d.h || fail "--dlpack: d.h declares no scale_dlpack"
if command -v nm >/dev/null 2>&1; then
	nm d.o | grep -q ' T scale_dlpack$' ||
		fail "--dlpack: d.h declares scale_dlpack but d.o does not define it"
fi
# a cross object
run 0 --target=aarch64-linux-gnu --cpu=generic s.tx -o arm.o
od -An -tx1 -j18 -N2 arm.o | grep -q 'b7 00' || fail "arm.o is not an aarch64 object"

# -H writes the prototypes; a C program that includes it links with the
# object and libtxrt as the page says and gets the kernel's result
if [ -n "${abs_top_builddir:-}" ] && [ -f "$abs_top_builddir/rt/.libs/libtxrt.a" ]; then
	run 0 -H s.h s.tx -o s.o
	grep -q 'int scale(int64_t N, const float \*x, float \*y);' s.h ||
		fail "-H: no prototype for scale in s.h"
	cat >app.c <<'EOF'
#include <stdio.h>
#include "s.h"
int
main(void)
{
	float x[21], y[21];
	int i, rc;

	for (i = 0; i < 21; i++)
		x[i] = (float)i - 7.5f;
	if ((rc = scale(21, x, y)) != 0)
		return printf("scale returned %d\n", rc), 1;
	for (i = 0; i < 21; i++)
		if (y[i] != x[i] * 2.0f)
			return printf("y[%d] = %g, want %g\n", i, y[i], x[i] * 2.0f), 1;
	if (scale(-1, x, y) != 2)
		return printf("a negative size did not return 2\n"), 1;
	return 0;
}
EOF
	${CC:-cc} -o app app.c s.o "$abs_top_builddir/rt/.libs/libtxrt.a" -lpthread -lm ||
		fail "app.c does not link with s.o and libtxrt"
	[ -x app ] && { ./app || fail "the kernel's result differs from the C loop"; }
fi

[ "$fails" -eq 0 ] || { echo "$fails checks failed"; exit 1; }
exit 0
