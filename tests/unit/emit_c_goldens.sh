#!/bin/sh
# emit_c_goldens.sh: every C-backend golden (tests/emit/*.c) must compile
# cleanly as C99 with -Wall -Wextra -Werror -pedantic, also with -fopenmp
# and with -DTXC_DLPACK where the compiler and dlpack/dlpack.h allow; and
# intops.c must compute what the IR's integer and cast semantics say
# (emit_c.c's top comment) on a few values, so the goldens cannot drift
# into compiling but wrong code.  Exit 77 without a C compiler.
set -u
: "${abs_top_srcdir:?}"
CC=${CC:-cc}
$CC --version >/dev/null 2>&1 || { echo "SKIP: no C compiler"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
strict="-std=c99 -Wall -Wextra -Werror -pedantic -O2"
echo 'int main(void) { return 0; }' >"$tmp/t.c"
omp=no
$CC -fopenmp "$tmp/t.c" -o "$tmp/t" >/dev/null 2>&1 && omp=yes
dl=no
printf '#include <dlpack/dlpack.h>\nint main(void) { return 0; }\n' >"$tmp/d.c"
$CC -c "$tmp/d.c" -o "$tmp/d.o" >/dev/null 2>&1 && dl=yes
fail=0
for c in "$abs_top_srcdir"/tests/emit/*.c; do
	for flags in "" "-fopenmp" "-DTXC_DLPACK" "-std=c11 -fopenmp -DTXC_DLPACK"; do
		case $flags in *openmp*) [ $omp = yes ] || continue ;; esac
		case $flags in *DLPACK*) [ $dl = yes ] || continue ;; esac
		# shellcheck disable=SC2086
		if ! $CC $strict $flags -c "$c" -o "$tmp/x.o" 2>"$tmp/err"; then
			echo "FAIL: $c does not compile with $strict $flags:"
			cat "$tmp/err"
			fail=1
		fi
	done
done

cat >"$tmp/main.c" <<'EOC'
#include <math.h>
#include <stdint.h>
#include <stdio.h>
int intops(int64_t N, const int32_t *x, const float *f, int32_t *q, int32_t *r,
    int8_t *b, int32_t *s, uint16_t *h, uint8_t *c);
int
main(void)
{
	int32_t x[6] = {7, -7, 0, -1, 2147483647, -2147483647 - 1};
	float f[6] = {1.5f, -3.0f, 300.0f, NAN, 65504.0f, 1e-6f};
	int32_t q[6], r[6], s[6];
	int8_t b[6];
	uint16_t h[6];
	uint8_t c[6];
	int32_t wq[6] = {-2, 3, 0, 1, -715827882, 715827883};   /* Euclidean: x / -3 */
	int32_t wr[6] = {3, 1, 0, 3, 3, 0};
	int8_t wb[6] = {22, -20, 1, -2, -2, 1};
	int32_t ws[6] = {28 ^ 3, -28 ^ -4, 0, -4 ^ -1, -4 ^ 1073741823, 0 ^ -1073741824};
	uint16_t wh[6] = {0x3a00, 0xbe00, 0x58b0, 0x7e00, 0x77ff, 0x0008};
	uint8_t wc[6] = {1, 0, 255, 0, 255, 0};
	int i, bad = 0;
	if (intops(6, x, f, q, r, b, s, h, c) != 0)
		return 2;
	for (i = 0; i < 6; i++) {
		if (q[i] != wq[i] || r[i] != wr[i] || b[i] != wb[i] || s[i] != ws[i] ||
		    h[i] != wh[i] || c[i] != wc[i]) {
			printf("intops[%d]: q %d r %d b %d s %d h %#x c %d\n", i, (int)q[i],
			    (int)r[i], (int)b[i], (int)s[i], (unsigned)h[i], (int)c[i]);
			bad = 1;
		}
	}
	return bad;
}
EOC
if $CC -std=c99 -O1 "$abs_top_srcdir/tests/emit/intops.c" "$tmp/main.c" -o "$tmp/intops" -lm 2>"$tmp/err"; then
	"$tmp/intops" || { echo "FAIL: intops.c computes wrong values"; fail=1; }
else
	echo "FAIL: intops.c does not link with its driver:"; cat "$tmp/err"; fail=1
fi
exit $fail
