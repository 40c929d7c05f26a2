/* txcmp.c: compares two kernel output files (tests/run/diffcheck.sh).
 *
 *     txcmp [-r RTOL] [-n MAXSHOW] [-q] EXPECTED ACTUAL
 *     txcmp -t TYPE [-r RTOL] ... EXPECTED ACTUAL     (raw arrays of TYPE)
 *
 * Without -t the files are what a harness from `txc --emit=harness` writes
 * with out=FILE: per output tensor a line "TXOUT NAME TYPE COUNT" and COUNT
 * raw elements.  Names, types and counts must agree.
 *
 * Integers and bool compare exactly.  Floats compare with a relative
 * tolerance that falls back to an absolute one below magnitude 1:
 *
 *     |a - b| <= rtol * max(1, |a|, |b|)
 *
 * Schedules may reorder reductions (split, rfactor, reorder of a reduction
 * axis), so a sum of n products of inputs in [-1, 1] may round differently;
 * its error grows like n * eps * sum|terms| in the worst case and like
 * sqrt(n) in practice, so rtol 1e-4 for f32 (eps 6e-8) leaves room for the
 * sizes the tests use while still catching a wrong or missing term (whose
 * error is of the order of one term, >= 1e-2 on random data).  f64 uses
 * 1e-9, f16 1e-2, bf16 (8-bit significand) 3e-2.  NaN equals NaN (both kernels computed log(-x) the same
 * way), an infinity equals only the same infinity.  Exit 0 when the files
 * agree, 1 when they do not (the first MAXSHOW mismatches, default 10,
 * are printed with their flat index), 2 on a usage or I/O error.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_BOOL, T_I8, T_I16, T_I32, T_I64, T_U8, T_U16, T_U32, T_U64,
	T_F16, T_BF16, T_F32, T_F64, T_NONE } Type;
static const char *const tnames[] = { "bool", "i8", "i16", "i32", "i64", "u8",
	"u16", "u32", "u64", "f16", "bf16", "f32", "f64" };
static const int tsizes[] = { 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8 };

static double rtol = -1;
static long maxshow = 10;
static int quiet;

static Type
parse_type(const char *s)
{
	for (int t = 0; t < T_NONE; t++)
		if (strcmp(s, tnames[t]) == 0)
			return (Type)t;
	return T_NONE;
}

/* The two files, read whole; freed at exit, whichever return main takes. */
static unsigned char *held_a, *held_b;

static void
release(void)
{
	free(held_a);
	free(held_b);
}

static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf || ferror(f)) {
		fprintf(stderr, "txcmp: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = n;
	return buf;
}

static double
half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;
	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return (h & 0x8000) ? -v : v;
}

/* The element i of a typed array as an integer (ints) or double (floats). */
static int64_t
get_int(const unsigned char *p, Type t, size_t i, uint64_t *u)
{
	int64_t v = 0;
	*u = 0;
	switch (t) {
	case T_BOOL: case T_U8: *u = p[i]; return (int64_t)*u;
	case T_I8: { int8_t x; memcpy(&x, p + i, 1); v = x; break; }
	case T_I16: { int16_t x; memcpy(&x, p + 2 * i, 2); v = x; break; }
	case T_I32: { int32_t x; memcpy(&x, p + 4 * i, 4); v = x; break; }
	case T_I64: { memcpy(&v, p + 8 * i, 8); break; }
	case T_U16: { uint16_t x; memcpy(&x, p + 2 * i, 2); *u = x; return x; }
	case T_U32: { uint32_t x; memcpy(&x, p + 4 * i, 4); *u = x; return x; }
	case T_U64: { memcpy(u, p + 8 * i, 8); return (int64_t)*u; }
	default: break;
	}
	*u = (uint64_t)v;
	return v;
}

static double
get_float(const unsigned char *p, Type t, size_t i)
{
	if (t == T_F16) {
		uint16_t x;
		memcpy(&x, p + 2 * i, 2);
		return half_to_double(x);
	}
	if (t == T_BF16) {   /* the top half of an f32 */
		uint16_t x;
		memcpy(&x, p + 2 * i, 2);
		uint32_t w = (uint32_t)x << 16;
		float f;
		memcpy(&f, &w, 4);
		return f;
	}
	if (t == T_F32) {
		float x;
		memcpy(&x, p + 4 * i, 4);
		return x;
	}
	double x;
	memcpy(&x, p + 8 * i, 8);
	return x;
}

static bool
float_eq(double a, double b, double tol)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return fabs(a - b) <= tol * (m > 1 ? m : 1);
}

/* Compares n elements of type t; returns the number of mismatches. */
static long
compare(const char *name, Type t, const unsigned char *a, const unsigned char *b, size_t n)
{
	long bad = 0;
	double worst = 0;
	bool fl = t == T_F16 || t == T_BF16 || t == T_F32 || t == T_F64;
	double tol = rtol >= 0 ? rtol : t == T_F16 ? 1e-2 : t == T_BF16 ? 3e-2 :
	    t == T_F32 ? 1e-4 : 1e-9;
	for (size_t i = 0; i < n; i++) {
		if (fl) {
			double x = get_float(a, t, i), y = get_float(b, t, i);
			if (float_eq(x, y, tol))
				continue;
			double m = fmax(1, fmax(fabs(x), fabs(y)));
			double rel = fabs(x - y) / m;
			if (!(rel <= worst))
				worst = rel;
			if (bad++ < maxshow && !quiet)
				printf("%s[%zu]: expected %.9g, got %.9g (relative error %.3g, tolerance %.3g)\n",
				    name, i, x, y, rel, tol);
		} else {
			uint64_t ux, uy;
			int64_t x = get_int(a, t, i, &ux), y = get_int(b, t, i, &uy);
			if (ux == uy)
				continue;
			if (bad++ < maxshow && !quiet) {
				if (t >= T_U8 && t <= T_U64)
					printf("%s[%zu]: expected %llu, got %llu\n", name, i,
					    (unsigned long long)ux, (unsigned long long)uy);
				else
					printf("%s[%zu]: expected %lld, got %lld\n", name, i,
					    (long long)x, (long long)y);
			}
		}
	}
	if (bad && !quiet)
		printf("%s: %ld of %zu elements (%s) differ%s\n", name, bad, n, tnames[t],
		    fl ? "" : " (integers compare exactly)");
	if (bad && fl && !quiet && !isnan(worst))
		printf("%s: largest relative error %.3g\n", name, worst);
	return bad;
}

/* Reads one "TXOUT NAME TYPE COUNT\n" header at *pos. */
static bool
header(const unsigned char *buf, size_t len, size_t *pos, char *name, Type *t, size_t *count)
{
	char line[512], tname[16];
	size_t i = 0;
	while (*pos + i < len && buf[*pos + i] != '\n' && i < sizeof line - 1) {
		line[i] = (char)buf[*pos + i];
		i++;
	}
	if (*pos + i >= len || buf[*pos + i] != '\n')
		return false;
	line[i] = 0;
	unsigned long long c;
	if (sscanf(line, "TXOUT %255s %15s %llu", name, tname, &c) != 3)
		return false;
	*t = parse_type(tname);
	*count = (size_t)c;
	*pos += i + 1;
	return *t != T_NONE;
}

static void
usage(void)
{
	fprintf(stderr, "usage: txcmp [-t TYPE] [-r RTOL] [-n MAXSHOW] [-q] EXPECTED ACTUAL\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	Type raw = T_NONE;
	int i;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *o = argv[i];
		if (strcmp(o, "-q") == 0)
			quiet = 1;
		else if (i + 1 < argc && strcmp(o, "-t") == 0) {
			if ((raw = parse_type(argv[++i])) == T_NONE)
				usage();
		} else if (i + 1 < argc && strcmp(o, "-r") == 0)
			rtol = strtod(argv[++i], NULL);
		else if (i + 1 < argc && strcmp(o, "-n") == 0)
			maxshow = strtol(argv[++i], NULL, 10);
		else
			usage();
	}
	if (argc - i != 2)
		usage();
	size_t la, lb;
	unsigned char *a = slurp(argv[i], &la), *b = slurp(argv[i + 1], &lb);
	held_a = a;
	held_b = b;
	atexit(release);

	if (raw != T_NONE) {
		size_t sz = (size_t)tsizes[raw];
		if (la % sz || lb % sz || la != lb) {
			printf("txcmp: sizes differ or are not a multiple of %s: %zu and %zu bytes\n",
			    tnames[raw], la, lb);
			return 1;
		}
		return compare("[raw]", raw, a, b, la / sz) ? 1 : 0;
	}

	size_t pa = 0, pb = 0;
	long bad = 0;
	int n = 0;
	while (pa < la || pb < lb) {
		char na[256], nb[256];
		Type ta, tb;
		size_t ca, cb;
		if (!header(a, la, &pa, na, &ta, &ca)) {
			printf("txcmp: %s: bad or missing output header at byte %zu\n", argv[i], pa);
			return pa < la ? 2 : 1;
		}
		if (!header(b, lb, &pb, nb, &tb, &cb)) {
			printf("txcmp: %s: bad or missing output header for '%s' at byte %zu\n",
			    argv[i + 1], na, pb);
			return 1;
		}
		if (strcmp(na, nb) != 0 || ta != tb || ca != cb) {
			printf("txcmp: output %d differs in kind: %s %s[%zu] vs %s %s[%zu]\n",
			    n, na, tnames[ta], ca, nb, tnames[tb], cb);
			return 1;
		}
		size_t bytes = ca * (size_t)tsizes[ta];
		if (la - pa < bytes || lb - pb < bytes) {
			printf("txcmp: output '%s' is truncated\n", na);
			return 1;
		}
		bad += compare(na, ta, a + pa, b + pb, ca);
		pa += bytes;
		pb += bytes;
		n++;
	}
	if (n == 0) {
		printf("txcmp: no outputs in %s\n", argv[i]);
		return 1;
	}
	return bad ? 1 : 0;
}
