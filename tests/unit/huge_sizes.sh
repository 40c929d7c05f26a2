#!/bin/sh
# huge_sizes.sh: txc folds sizes fixed near the 64-bit limit (-D N=4000000000
# on f32[N, N], whose N*N is past it, up to INT64_MAX) without overflowing
# itself: no sanitizer report in the sanitized build, no crash in any
# (issue 24, item 4: the linear forms of lower/lin.c give up past 64 bits;
# a split's extent of a constant size rounds up without N + factor - 1).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
cat >cp.tx <<'TX'
kernel cp(N) {
  in  x: f32[N, N];
  out y: f32[N, N];
  y[i, j] = x[i, j];
}
TX
st=0
for d in 4000000000 3037000500 4611686018427387904 9223372036854775806 9223372036854775807; do
	for f in cp.tx "$abs_top_srcdir/stdlib/matmul.tx" "$abs_top_srcdir/examples/borders.tx" \
	    "$abs_top_srcdir/examples/tutorial/blur-8-border.tx" "$abs_top_srcdir/tests/run/nan.tx"; do
		args=$(grep -m1 -o '^kernel [a-z_0-9]*([A-Z, a-z:0-9]*)' "$f" | sed 's/.*(//; s/)//; s/,/ /g' |
		    tr -s ' ' '\n' | grep -v ':' | grep -v '^$' | sed "s/^/-D /; s/\$/=$d/" | tr '\n' ' ')
		for emit in obj c; do
			# shellcheck disable=SC2086
			"$TXC" -I "$abs_top_srcdir/stdlib" $args --emit=$emit -o out "$f" >out.txt 2>err.txt
			rc=$?
			if [ $rc -gt 1 ] || grep -q 'runtime error\|Sanitizer' err.txt; then
				echo "FAIL: txc $args --emit=$emit $(basename "$f"): exit $rc"
				head -5 err.txt
				st=1
			fi
		done
	done
done
exit $st
