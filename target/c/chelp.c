/* chelp.c: the small static inline helpers a generated C file defines.
 *
 * Each helper exists because plain C would be undefined or would differ
 * from the IR's semantics (emit_c.c's top comment): f16 conversions,
 * Euclidean division and modulo, x/0 == 0, saturating float-to-int
 * conversion, wrapping abs, NaN-consistent min/max, sigmoid, floating %.
 * Only the helpers the code uses are written, in a fixed order, so the
 * output is stable.
 */
#include <string.h>

#include "target/c/cemit.h"

void
chelp_use(CEmit *E, int h)
{
	E->help->used[h] = true;
	if (h == H_F16_ROUND) {
		E->help->used[H_F16_TO_F32] = true;
		E->help->used[H_F16_BITS] = true;
	}
	if (h == H_DOT_BF16)
		E->help->used[H_BF16_TO_F32] = true;
	if (h == H_BF16_ROUND) {
		E->help->used[H_BF16_TO_F32] = true;
		E->help->used[H_BF16_BITS] = true;
	}
}

const char *
chelp_suffix(ScalarType t)
{
	switch (t) {
	case TY_I8: return "i8";
	case TY_I16: return "i16";
	case TY_I32: return "i32";
	case TY_I64: return "i64";
	case TY_U8: return "u8";
	case TY_U16: return "u16";
	case TY_U32: return "u32";
	case TY_U64: return "u64";
	case TY_F16: case TY_BF16: case TY_F32: return "f32";
	case TY_F64: return "f64";
	default: return "i32";   /* bool: as int */
	}
}

static const char *const typed_names[HT_COUNT] = {
	[HT_MIN] = "min", [HT_MAX] = "max", [HT_ABS] = "abs",
	[HT_SAT] = "sat", [HT_SIGMOID] = "sigmoid", [HT_MOD] = "mod",
};

const char *
chelp_typed(CEmit *E, int kind, ScalarType t)
{
	if (t == TY_F16 || t == TY_BF16)
		t = TY_F32;
	if (t == TY_BOOL)
		t = TY_I32;
	E->help->used_t[kind][t] = true;
	return arena_printf(E->a, "txc_%s_%s", typed_names[kind], chelp_suffix(t));
}

static const char f16_to_f32[] =
"/* IEEE binary16 bits to float (exact). */\n"
"static inline float\n"
"txc_f16_to_f32(uint16_t h)\n"
"{\n"
"\tuint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;\n"
"\tfloat f;\n"
"\tif (e == 0x1f)\n"
"\t\tbits = sign | 0x7f800000u | (m << 13);\n"
"\telse if (e != 0)\n"
"\t\tbits = sign | ((e + 112) << 23) | (m << 13);\n"
"\telse {\n"
"\t\tf = (float)m * 5.9604644775390625e-8f;   /* m * 2^-24 */\n"
"\t\treturn sign ? -f : f;\n"
"\t}\n"
"\tmemcpy(&f, &bits, sizeof f);\n"
"\treturn f;\n"
"}\n\n";

static const char f16_bits[] =
"/* x rounded to the nearest binary16 (ties to even), as bits; overflow\n"
" * gives infinity, NaN a quiet NaN. */\n"
"static inline uint16_t\n"
"txc_f16_bits(double x)\n"
"{\n"
"\tuint64_t b, m, q, rem, half;\n"
"\tuint32_t sign, h;\n"
"\tint e;\n"
"\tmemcpy(&b, &x, sizeof b);\n"
"\tsign = (uint32_t)(b >> 48) & 0x8000u;\n"
"\te = (int)((b >> 52) & 0x7ff);\n"
"\tm = b & 0xfffffffffffffu;\n"
"\tif (e == 0x7ff)\n"
"\t\treturn (uint16_t)(sign | (m ? 0x7e00u : 0x7c00u));\n"
"\tif (e - 1008 >= 31)\n"
"\t\treturn (uint16_t)(sign | 0x7c00u);\n"
"\tif (e - 1008 <= 0) {   /* subnormal result: units of 2^-24 */\n"
"\t\tint shift = 1051 - e;\n"
"\t\tif (shift > 53)\n"
"\t\t\treturn (uint16_t)sign;\n"
"\t\tm |= (uint64_t)1 << 52;\n"
"\t\tq = m >> shift;\n"
"\t\trem = m & (((uint64_t)1 << shift) - 1);\n"
"\t\thalf = (uint64_t)1 << (shift - 1);\n"
"\t\tif (rem > half || (rem == half && (q & 1)))\n"
"\t\t\tq++;\n"
"\t\treturn (uint16_t)(sign | (uint32_t)q);\n"
"\t}\n"
"\th = ((uint32_t)(e - 1008) << 10) | (uint32_t)(m >> 42);\n"
"\trem = m & (((uint64_t)1 << 42) - 1);\n"
"\thalf = (uint64_t)1 << 41;\n"
"\tif (rem > half || (rem == half && (h & 1)))\n"
"\t\th++;   /* may carry into the exponent, up to infinity */\n"
"\treturn (uint16_t)(sign | h);\n"
"}\n\n";

static const char f16_round[] =
"/* x rounded to the nearest binary16 value, as a float. */\n"
"static inline float\n"
"txc_f16_round(double x)\n"
"{\n"
"\treturn txc_f16_to_f32(txc_f16_bits(x));\n"
"}\n\n";

static const char bf16_to_f32[] =
"/* bfloat16 bits to float (exact: they are its top half). */\n"
"static inline float\n"
"txc_bf16_to_f32(uint16_t h)\n"
"{\n"
"\tuint32_t bits = (uint32_t)h << 16;\n"
"\tfloat f;\n"
"\tmemcpy(&f, &bits, sizeof f);\n"
"\treturn f;\n"
"}\n\n";

static const char bf16_bits[] =
"/* x rounded to the nearest bfloat16 (ties to even), as bits; NaN stays\n"
" * a quiet NaN. */\n"
"static inline uint16_t\n"
"txc_bf16_bits(float x)\n"
"{\n"
"\tuint32_t u;\n"
"\tmemcpy(&u, &x, sizeof u);\n"
"\tif ((u & 0x7fffffffu) > 0x7f800000u)\n"
"\t\treturn (uint16_t)((u >> 16) | 0x40u);\n"
"\tu += 0x7fffu + ((u >> 16) & 1u);\n"
"\treturn (uint16_t)(u >> 16);\n"
"}\n\n";

static const char bf16_round[] =
"/* x rounded to the nearest bfloat16 value, as a float. */\n"
"static inline float\n"
"txc_bf16_round(float x)\n"
"{\n"
"\treturn txc_bf16_to_f32(txc_bf16_bits(x));\n"
"}\n\n";

static const char alloc[] =
"/* n elements of size bytes, or NULL (also when n is negative or the size\n"
" * overflows); never malloc(0). */\n"
"static inline void *\n"
"txc_alloc(int64_t n, size_t size)\n"
"{\n"
"\tif (n < 0 || (uint64_t)n > SIZE_MAX / size)\n"
"\t\treturn NULL;\n"
"\treturn malloc(n > 0 ? (size_t)n * size : 1);\n"
"}\n\n";

static const char div_i64[] =
"/* Euclidean division (Halide's rule): rounds toward -infinity when\n"
" * b > 0 and toward +infinity when b < 0, so that a % b is never\n"
" * negative and a == b * (a / b) + a % b;\n"
" * a / 0 == 0, and INT64_MIN / -1 wraps. */\n"
"static inline int64_t\n"
"txc_div_i64(int64_t a, int64_t b)\n"
"{\n"
"\tint64_t q, r;\n"
"\tif (b == 0)\n"
"\t\treturn 0;\n"
"\tif (b == -1)\n"
"\t\treturn (int64_t)(0 - (uint64_t)a);\n"
"\tq = a / b;\n"
"\tr = a % b;\n"
"\tif (r < 0)\n"
"\t\tq = b > 0 ? q - 1 : q + 1;\n"
"\treturn q;\n"
"}\n\n";

static const char mod_i64[] =
"/* The remainder that is never negative: 0 <= a % b < |b|; a % 0 == 0. */\n"
"static inline int64_t\n"
"txc_mod_i64(int64_t a, int64_t b)\n"
"{\n"
"\tint64_t r;\n"
"\tif (b == 0 || b == -1)\n"
"\t\treturn 0;\n"
"\tr = a % b;\n"
"\tif (r < 0)\n"
"\t\tr = b > 0 ? r + b : r - b;\n"
"\treturn r;\n"
"}\n\n";

static const char div_u64[] =
"static inline uint64_t\n"
"txc_div_u64(uint64_t a, uint64_t b)\n"
"{\n"
"\treturn b ? a / b : 0;   /* a / 0 == 0 */\n"
"}\n\n";

static const char mod_u64[] =
"static inline uint64_t\n"
"txc_mod_u64(uint64_t a, uint64_t b)\n"
"{\n"
"\treturn b ? a % b : 0;   /* a % 0 == 0 */\n"
"}\n\n";

static bool
is_signed(ScalarType t)
{
	return t >= TY_I8 && t <= TY_I64;
}

static const char *
ctype(ScalarType t)
{
	return target_c_type(t);
}

/* The wide unsigned type wrapping arithmetic on t uses. */
static const char *
utype(ScalarType t)
{
	return ir_bits(t) == 64 ? "uint64_t" : "uint32_t";
}

static void
write_typed(FILE *out, int kind, ScalarType t)
{
	const char *s = chelp_suffix(t), *c = ctype(t);
	const char *lo, *hi, *hicmp;
	switch (kind) {
	case HT_MIN:
	case HT_MAX:
		if (t == TY_F16 || t == TY_BF16 || t == TY_F32 || t == TY_F64) {
			/* tx(5): a NaN operand gives NaN, whichever it is */
			fprintf(out, "/* NaN where a or b is NaN (tx(5) REDUCTIONS) */\n"
			    "static inline %s\ntxc_%s_%s(%s a, %s b)\n{\n"
			    "\treturn a %c b || a != a ? a : b;\n}\n\n", c,
			    kind == HT_MIN ? "min" : "max", s, c, c, kind == HT_MIN ? '<' : '>');
			break;
		}
		fprintf(out, "static inline %s\ntxc_%s_%s(%s a, %s b)\n{\n"
		    "\treturn a %c b ? a : b;\n}\n\n", c,
		    kind == HT_MIN ? "min" : "max", s, c, c, kind == HT_MIN ? '<' : '>');
		break;
	case HT_ABS:
		if (is_signed(t))
			fprintf(out, "static inline %s\ntxc_abs_%s(%s a)\n{\n"
			    "\treturn a < 0 ? (%s)(0 - (%s)a) : a;   /* wraps at the minimum */\n}\n\n",
			    c, s, c, c, utype(t));
		else
			fprintf(out, "static inline %s\ntxc_abs_%s(%s a)\n{\n\treturn a;\n}\n\n",
			    c, s, c);
		break;
	case HT_SAT:
		switch (t) {
		case TY_I8: lo = "INT8_MIN"; hi = "INT8_MAX"; hicmp = "127.0"; break;
		case TY_I16: lo = "INT16_MIN"; hi = "INT16_MAX"; hicmp = "32767.0"; break;
		case TY_I32: lo = "INT32_MIN"; hi = "INT32_MAX"; hicmp = "2147483647.0"; break;
		case TY_I64: lo = "INT64_MIN"; hi = "INT64_MAX"; hicmp = "9223372036854775808.0"; break;
		case TY_U8: lo = "0"; hi = "UINT8_MAX"; hicmp = "255.0"; break;
		case TY_U16: lo = "0"; hi = "UINT16_MAX"; hicmp = "65535.0"; break;
		case TY_U32: lo = "0"; hi = "UINT32_MAX"; hicmp = "4294967295.0"; break;
		default: lo = "0"; hi = "UINT64_MAX"; hicmp = "18446744073709551616.0"; break;
		}
		fprintf(out, "/* x truncated toward zero, saturated to %s; NaN gives 0. */\n"
		    "static inline %s\ntxc_sat_%s(double x)\n{\n"
		    "\tif (x != x)\n\t\treturn 0;\n", s, c, s);
		if (is_signed(t))
			fprintf(out, "\tif (x <= (double)%s)\n\t\treturn %s;\n", lo, lo);
		else
			fprintf(out, "\tif (x <= 0.0)\n\t\treturn 0;\n");
		fprintf(out, "\tif (x >= %s)\n\t\treturn %s;\n\treturn (%s)x;\n}\n\n",
		    hicmp, hi, c);
		break;
	case HT_SIGMOID:
		if (t == TY_F32)
			fputs("static inline float\ntxc_sigmoid_f32(float x)\n{\n"
			    "\treturn 1.0f / (1.0f + expf(-x));\n}\n\n", out);
		else
			fputs("static inline double\ntxc_sigmoid_f64(double x)\n{\n"
			    "\treturn 1.0 / (1.0 + exp(-x));\n}\n\n", out);
		break;
	case HT_MOD: {
		bool f = t == TY_F32;
		fprintf(out, "/* Floating %%: fmod made non-negative (in [0, |b|]). */\n"
		    "static inline %s\ntxc_mod_%s(%s a, %s b)\n{\n"
		    "\t%s r = fmod%s(a, b);\n"
		    "\treturn r < 0 ? r + fabs%s(b) : r;\n}\n\n",
		    c, s, c, c, c, f ? "f" : "", f ? "f" : "");
		break;
	}
	}
}

/* The fma_outer intrinsic (stdlib/intrinsics/cpu.tx) as scalar C: c[mr x nr]
 * += a[mr x kk] * b[kk x nr], with element strides; k outermost, as the
 * loops it replaced; `first` (tensorize.c's reset form) zeroes c first. */
static const char fma_outer[] =
    "/* tensorize fma_outer: c += a * b over an mr x nr block. */\n"
    "static int\ntxc_fma_outer(int64_t mr, int64_t nr, int64_t kk, float *c, int64_t csi,\n"
    "    int64_t csj, const float *a, int64_t asi, int64_t ask, const float *b,\n"
    "    int64_t bsk, int64_t bsj, int64_t first)\n{\n"
    "\tif (first)\n"
    "\t\tfor (int64_t i = 0; i < mr; i++)\n"
    "\t\t\tfor (int64_t j = 0; j < nr; j++)\n"
    "\t\t\t\tc[i * csi + j * csj] = 0;\n"
    "\tfor (int64_t k = 0; k < kk; k++)\n"
    "\t\tfor (int64_t i = 0; i < mr; i++)\n"
    "\t\t\tfor (int64_t j = 0; j < nr; j++)\n"
    "\t\t\t\tc[i * csi + j * csj] += a[i * asi + k * ask] * b[k * bsk + j * bsj];\n"
    "\treturn 0;\n}\n\n";

/* fma_outer with taps (lower/ir.h): the k loop inside two tap loops,
 * each moving a and b by its strides. */
static const char fma_taps[] =
    "/* tensorize fma_outer with taps: c += a * b over an mr x nr block. */\n"
    "static int\ntxc_fma_taps(int64_t mr, int64_t nr, int64_t rr, int64_t ss, int64_t kk,\n"
    "    float *c, int64_t csi, int64_t csj, const float *a, int64_t asi, int64_t asr,\n"
    "    int64_t ass, int64_t ask, const float *b, int64_t bsr, int64_t bss, int64_t bsk,\n"
    "    int64_t bsj, int64_t first)\n{\n"
    "\tif (first)\n"
    "\t\tfor (int64_t i = 0; i < mr; i++)\n"
    "\t\t\tfor (int64_t j = 0; j < nr; j++)\n"
    "\t\t\t\tc[i * csi + j * csj] = 0;\n"
    "\tfor (int64_t r = 0; r < rr; r++)\n"
    "\t\tfor (int64_t s = 0; s < ss; s++)\n"
    "\t\t\tfor (int64_t k = 0; k < kk; k++)\n"
    "\t\t\t\tfor (int64_t i = 0; i < mr; i++)\n"
    "\t\t\t\t\tfor (int64_t j = 0; j < nr; j++)\n"
    "\t\t\t\t\t\tc[i * csi + j * csj] += a[i * asi + r * asr + s * ass + k * ask] *\n"
    "\t\t\t\t\t\t    b[r * bsr + s * bss + k * bsk + j * bsj];\n"
    "\treturn 0;\n}\n\n";

/* The i8 and bf16 micro-kernels likewise (their sums widened: i32 that
 * wraps, f32), with fma_taps' tap levels (a call without taps passes
 * them as one tap of stride 0). */
#define DOT_TAPS_PARAMS(CT, ET) DOT_TAPS_PARAMS2(CT, ET, ET)
#define DOT_TAPS_PARAMS2(CT, AT, ET) \
    "(int64_t mr, int64_t nr, int64_t rr, int64_t ss, int64_t kk,\n" \
    "    " CT " *c, int64_t csi, int64_t csj, const " AT " *a, int64_t asi, int64_t asr,\n" \
    "    int64_t ass, int64_t ask, const " ET " *b, int64_t bsr, int64_t bss, int64_t bsk,\n" \
    "    int64_t bsj, int64_t first)\n{\n" \
    "\tfor (int64_t i = 0; i < mr; i++)\n" \
    "\t\tfor (int64_t j = 0; j < nr; j++) {\n"
#define DOT_TAPS_LOOPS \
    "\t\t\tfor (int64_t r = 0; r < rr; r++)\n" \
    "\t\t\t\tfor (int64_t s = 0; s < ss; s++)\n" \
    "\t\t\t\t\tfor (int64_t k = 0; k < kk; k++) {\n" \
    "\t\t\t\t\t\tint64_t ai = i * asi + r * asr + s * ass + k * ask;\n" \
    "\t\t\t\t\t\tint64_t bi = r * bsr + s * bss + k * bsk + j * bsj;\n"

static const char dot_i8[] =
    "/* tensorize i8_*: c += i32(a) * i32(b) over an mr x nr block (wrapping). */\n"
    "static int\ntxc_dot_i8" DOT_TAPS_PARAMS("int32_t", "int8_t")
    "\t\t\tuint32_t acc = first ? 0 : (uint32_t)c[i * csi + j * csj];\n"
    DOT_TAPS_LOOPS
    "\t\t\t\t\t\tacc += (uint32_t)(a[ai] * b[bi]);\n"
    "\t\t\t\t\t}\n"
    "\t\t\tc[i * csi + j * csj] = (int32_t)acc;\n"
    "\t\t}\n"
    "\treturn 0;\n}\n\n";

static const char dot_i16i8[] =
    "/* tensorize i8_madd_a16: c += i32(a) * i32(b), a i16 (wrapping). */\n"
    "static int\ntxc_dot_i16i8" DOT_TAPS_PARAMS2("int32_t", "int16_t", "int8_t")
    "\t\t\tuint32_t acc = first ? 0 : (uint32_t)c[i * csi + j * csj];\n"
    DOT_TAPS_LOOPS
    "\t\t\t\t\t\tacc += (uint32_t)((int32_t)a[ai] * b[bi]);\n"
    "\t\t\t\t\t}\n"
    "\t\t\tc[i * csi + j * csj] = (int32_t)acc;\n"
    "\t\t}\n"
    "\treturn 0;\n}\n\n";

static const char dot_bf16[] =
    "/* tensorize bf16_*: c += f32(a) * f32(b) over an mr x nr block. */\n"
    "static int\ntxc_dot_bf16" DOT_TAPS_PARAMS("float", "uint16_t")
    "\t\t\tfloat acc = first ? 0 : c[i * csi + j * csj];\n"
    DOT_TAPS_LOOPS
    "\t\t\t\t\t\tacc += txc_bf16_to_f32(a[ai]) * txc_bf16_to_f32(b[bi]);\n"
    "\t\t\t\t\t}\n"
    "\t\t\tc[i * csi + j * csj] = acc;\n"
    "\t\t}\n"
    "\treturn 0;\n}\n\n";

void
chelp_write(FILE *out, const CHelpers *h)
{
	static const char *const text[H_COUNT] = {
		[H_F16_TO_F32] = f16_to_f32, [H_F16_BITS] = f16_bits,
		[H_F16_ROUND] = f16_round, [H_BF16_TO_F32] = bf16_to_f32,
		[H_BF16_BITS] = bf16_bits, [H_BF16_ROUND] = bf16_round, [H_ALLOC] = alloc,
		[H_DIV_I64] = div_i64, [H_MOD_I64] = mod_i64,
		[H_DIV_U64] = div_u64, [H_MOD_U64] = mod_u64,
		[H_FMA_OUTER] = fma_outer, [H_FMA_TAPS] = fma_taps, [H_DOT_I8] = dot_i8, [H_DOT_BF16] = dot_bf16,
		[H_DOT_I16I8] = dot_i16i8,
	};
	for (int i = 0; i < H_COUNT; i++)
		if (h->used[i])
			fputs(text[i], out);
	for (int k = 0; k < HT_COUNT; k++)
		for (int t = 0; t < TY_COUNT; t++)
			if (h->used_t[k][t])
				write_typed(out, k, (ScalarType)t);
}
