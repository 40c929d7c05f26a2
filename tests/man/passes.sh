#!/bin/sh
# passes.sh: txc(1) lists exactly the lowering passes that --dump-after
# accepts (the one table in lower/pipeline.c, which an unknown name's
# error prints), and --dump-after=PASS prints something for every one.
set -u
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
page=$abs_top_srcdir/man/txc.1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0

"$TXC" --dump-after=no-such-pass x.tx 2>err >/dev/null
[ $? -eq 1 ] || { echo "FAIL: an unknown pass is not an error"; fails=1; }
# "... use stage, sched, ..., vectorize, or all (see 'txc --help')"
passes=$(sed -n "s/.*: use \(.*\), or all .*/\1/p" err | tr -d ',')
[ -n "$passes" ] || { echo "FAIL: the error lists no passes: $(cat err)"; exit 1; }
# the tagged list under --dump-after in the page
listed=$(sed -n '/^\.It Fl Fl dump-after/,/^\.El/s/^\.It Cm \([a-z_]*\)$/\1/p' "$page" | tr '\n' ' ')
for p in $passes; do
	case " $listed " in
	*" $p "*) ;;
	*) echo "FAIL: txc.1 does not list pass '$p' under --dump-after"; fails=1 ;;
	esac
done
for p in $listed; do
	case " $passes " in
	*" $p "*) ;;
	*) echo "FAIL: txc.1 lists '$p', which --dump-after does not accept"; fails=1 ;;
	esac
done

cat >k.tx <<'EOF'
kernel k(N) {
  in  x: f32[N];
  out y: f32[N];
  y[i] = x[i] * 2.0;
}
schedule k for cpu {
  y.split(i, 8) -> (io, ii);
  y.vectorize(ii);
}
EOF
for p in $passes; do
	"$TXC" --dump-after="$p" k.tx -o k.o >out 2>err || {
		echo "FAIL: --dump-after=$p: $(head -3 err)"; fails=1; continue; }
	grep -q "^// after $p" out || { echo "FAIL: --dump-after=$p printed nothing"; fails=1; }
done

# the stage passes: compute levels, inlining and the region bounds_infer
# found for a stage computed inside its consumer's loop
cat >blur.tx <<'EOF'
kernel blur(N) {
  in  x: f32[N + 2];
  out y: f32[N];
  u[i] = x[i] * 0.5;
  t[i] = u[i] + u[i + 1];
  y[i] = t[i] + t[i + 1];
}
schedule blur for cpu {
  u.compute_inline();
  y.split(i, 8) -> (io, ii);
  t.compute_at(y, io);
}
EOF
"$TXC" --dump-after=inline blur.tx -o blur.o >out 2>&1
grep -q '^stage u: .*compute inline' out || { echo "FAIL: --dump-after=inline: u is not inline"; fails=1; }
grep -q '^  t\[t_i\] = x\[t_i\]\*0.5' out || { echo "FAIL: --dump-after=inline: u not folded into t"; cat out; fails=1; }
"$TXC" --dump-after=bounds_infer blur.tx -o blur.o >out 2>&1
grep -q '^stage t: .*compute at y.io' out || { echo "FAIL: --dump-after=bounds_infer: no compute level"; fails=1; }
grep -q '^  region: t_i: min io\*8 extent ' out || { echo "FAIL: --dump-after=bounds_infer: no region for t"; cat out; fails=1; }
grep -q '^  region: i: min 0 extent N$' out || { echo "FAIL: --dump-after=bounds_infer: no region for y"; fails=1; }
exit $fails
