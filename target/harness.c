/* harness.c: --emit=harness, a C test driver for one lowered kernel.
 *
 * The program it writes calls the kernel through the shared C ABI (see
 * target.h) on seeded random inputs of the declared shapes and writes the
 * outputs to a file, so that tests can compare a scheduled build with the
 * unscheduled one (tests/run/diffcheck.sh, tests/tools/txcmp.c):
 *
 *     ./h M=37 N=1 K=5 [alpha=0.5] [seed=3] [out=FILE] [poison=0x5a]
 *         [checkargs=1] [expect=CODE] [special=1]
 *     ./h --params      prints the size and scalar parameters
 *
 * Sizes must be given; scalars default to a value drawn from the seed.
 * A harness made with -D (whose shapes are then those sizes') refuses other
 * values of them (exit 2) instead of allocating the wrong buffers.
 * Every buffer sits between guard zones that are checked after the call,
 * inputs are hashed before and after (a kernel must not write them), and
 * outputs start filled with the `poison` byte (0xff: NaN for floats), so an
 * element the kernel forgets to write shows as a difference.  checkargs=1
 * first calls the kernel with each tensor NULL (expecting TXC_ERR_NULL, or
 * no such error for a tensor of no elements) and
 * each size -1 (expecting TXC_ERR_SIZE); checkargs=2 does only that.
 * special=1 makes about one float input in 8 NaN, +inf or -inf (the
 * schedule fuzzer checks schedules against them).  Exit status: 0 ok, 1 a check
 * failed, 2 usage, 5 the sizes give a negative extent and the kernel
 * rejected them with TXC_ERR_SIZE as it must, 10 + code when the kernel
 * returned an error code (expect=CODE turns exactly that code into 0).
 * The error message comes from NAME_last_error() (the C backend) or, with
 * -DTXC_LLVM, from libtxrt's txrt_last_error().
 */
#include <stdio.h>
#include <string.h>

#include "target/target.h"

/* -DTXC_CUDA_DEVICE: a --target=cuda object on a GPU takes device
 * pointers; txh_call copies the buffers to the device (outputs too, so
 * that what the kernel does not write keeps its poison), calls, and
 * copies every buffer back (an input the kernel wrote shows). */
static const char device_copies[] =
"#ifdef TXC_CUDA_DEVICE\n"
"void *txrt_cuda_malloc(size_t bytes);\n"
"void txrt_cuda_free(void *dev);\n"
"int txrt_cuda_memcpy_htod(void *dev, const void *host, size_t bytes);\n"
"int txrt_cuda_memcpy_dtoh(void *host, const void *dev, size_t bytes);\n"
"static TxhBuf *txh_b;\n"
"static int txh_call(const int64_t *s, void *const *hp)\n"
"{\n"
"\tvoid *p[64];\n"
"\tsize_t bytes[64];\n"
"\tint n = 0;\n"
"\twhile (n < 64 && txh_b[n].name) n++;\n"
"\tfor (int i = 0; i < n; i++) {\n"
"\t\tp[i] = NULL;\n"
"\t\tif (!hp[i]) continue;\n"
"\t\tbytes[i] = (size_t)(txh_b[i].count * txh_tsize[txh_b[i].type]);\n"
"\t\tp[i] = txrt_cuda_malloc(bytes[i]);\n"
"\t\tif (!p[i] || txrt_cuda_memcpy_htod(p[i], hp[i], bytes[i])) {\n"
"\t\t\tfprintf(stderr, \"harness: device memory for '%s': %s\\n\", txh_b[i].name, txrt_last_error());\n"
"\t\t\texit(2);\n"
"\t\t}\n"
"\t}\n"
"\tint rc = txh_kernel(s, p);\n"
"\tfor (int i = 0; i < n; i++) {\n"
"\t\tif (!p[i]) continue;\n"
"\t\tif (txrt_cuda_memcpy_dtoh(hp[i], p[i], bytes[i])) {\n"
"\t\t\tfprintf(stderr, \"harness: copying '%s' back: %s\\n\", txh_b[i].name, txrt_last_error());\n"
"\t\t\texit(2);\n"
"\t\t}\n"
"\t\ttxrt_cuda_free(p[i]);\n"
"\t}\n"
"\treturn rc;\n"
"}\n"
"#else\n"
"#define txh_call txh_kernel\n"
"#endif\n\n";

/* The part of every harness that does not depend on the kernel. */
static const char runtime[] =
"#include <stdbool.h>\n"
"#include <stdint.h>\n"
"#include <stdio.h>\n"
"#include <stdlib.h>\n"
"#include <string.h>\n"
"\n"
"enum { TXH_SIZE = -1, TXH_BOOL, TXH_I8, TXH_I16, TXH_I32, TXH_I64, TXH_U8, TXH_U16,\n"
"\tTXH_U32, TXH_U64, TXH_F16, TXH_BF16, TXH_F32, TXH_F64 };\n"
"static const char *const txh_tname[] = { \"bool\", \"i8\", \"i16\", \"i32\", \"i64\",\n"
"\t\"u8\", \"u16\", \"u32\", \"u64\", \"f16\", \"bf16\", \"f32\", \"f64\" };\n"
"static const int txh_tsize[] = { 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8 };\n"
"#define TXH_RED 64        /* guard bytes on each side of a buffer */\n"
"#define TXH_GUARD 0xcd\n"
"\n"
"typedef struct { const char *name; int type; } TxhParam;\n"
"typedef struct {\n"
"\tconst char *name;\n"
"\tint type, input, ndims;\n"
"\tint64_t *ext;\n"
"\tint64_t count;\n"
"\tunsigned char *base;\n"
"\tvoid *p;\n"
"\tuint64_t hash;\n"
"} TxhBuf;\n"
"typedef union { int64_t i; double d; } TxhVal;\n"
"typedef struct {\n"
"\tconst char *val[64];  /* NAME=VALUE given for each parameter */\n"
"\tuint64_t seed;\n"
"\tconst char *out;\n"
"\tint poison, checkargs, expect, has_expect, special;\n"
"} TxhOpts;\n"
"\n"
"static uint64_t txh_state;\n"
"static uint64_t txh_next(void)\n"
"{\n"
"\tuint64_t z = (txh_state += 0x9e3779b97f4a7c15ull);\n"
"\tz = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;\n"
"\tz = (z ^ (z >> 27)) * 0x94d049bb133111ebull;\n"
"\treturn z ^ (z >> 31);\n"
"}\n"
"static double txh_unit(void) { return (double)(txh_next() >> 11) * 0x1.0p-53; }\n"
"/* Euclidean division, as txc computes it (0 <= a % b < |b|) */\n"
"static inline int64_t txh_mod(int64_t a, int64_t b)\n"
"{\n"
"\tif (b == 0) return 0;\n"
"\tint64_t r = a % b;\n"
"\treturn r < 0 ? r + (b < 0 ? -b : b) : r;\n"
"}\n"
"static inline int64_t txh_div(int64_t a, int64_t b)\n"
"{\n"
"\tif (b == 0) return 0;\n"
"\treturn (a - txh_mod(a, b)) / b;\n"
"}\n"
"static inline int64_t txh_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
"static inline int64_t txh_max(int64_t a, int64_t b) { return a > b ? a : b; }\n"
"\n"
"/* float to IEEE half, rounding to nearest even */\n"
"static inline uint16_t txh_half(float f)\n"
"{\n"
"\tuint32_t x, m, e, h, rem, halfway;\n"
"\tint ex, sh;\n"
"\tuint16_t s;\n"
"\tmemcpy(&x, &f, 4);\n"
"\ts = (uint16_t)((x >> 16) & 0x8000);\n"
"\te = (x >> 23) & 0xff;\n"
"\tm = x & 0x7fffff;\n"
"\tif (e == 0xff) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));\n"
"\tex = (int)e - 112;\n"
"\tif (ex >= 31) return (uint16_t)(s | 0x7c00);\n"
"\tif (ex <= 0) {\n"
"\t\tif (ex < -10) return s;\n"
"\t\tm |= 0x800000;\n"
"\t\tsh = 14 - ex;\n"
"\t\th = m >> sh;\n"
"\t\trem = m & ((1u << sh) - 1);\n"
"\t\thalfway = 1u << (sh - 1);\n"
"\t} else {\n"
"\t\th = ((uint32_t)ex << 10) | (m >> 13);\n"
"\t\trem = m & 0x1fff;\n"
"\t\thalfway = 0x1000;\n"
"\t}\n"
"\tif (rem > halfway || (rem == halfway && (h & 1))) h++;\n"
"\treturn (uint16_t)(s | h);\n"
"}\n"
"\n"
"/* float to bfloat16 (its top half), rounding to nearest even */\n"
"static inline uint16_t txh_bf16(float f)\n"
"{\n"
"\tuint32_t x;\n"
"\tmemcpy(&x, &f, 4);\n"
"\tif ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);\n"
"\tx += 0x7fffu + ((x >> 16) & 1);\n"
"\treturn (uint16_t)(x >> 16);\n"
"}\n"
"\n"
"static void txh_usage(const char *prog, const TxhParam *pr, int np)\n"
"{\n"
"\tfprintf(stderr, \"usage: %s\", prog);\n"
"\tfor (int i = 0; i < np; i++)\n"
"\t\tfprintf(stderr, pr[i].type == TXH_SIZE ? \" %s=N\" : \" [%s=V]\", pr[i].name);\n"
"\tfprintf(stderr, \" [seed=N] [out=FILE] [poison=BYTE] [checkargs=1] [expect=CODE] [special=1]\\n\");\n"
"\texit(2);\n"
"}\n"
"\n"
"static void txh_args(int argc, char **argv, const TxhParam *pr, int np, TxhOpts *o)\n"
"{\n"
"\tmemset(o, 0, sizeof *o);\n"
"\to->poison = 0xff;\n"
"\tif (argc == 2 && strcmp(argv[1], \"--params\") == 0) {\n"
"\t\tprintf(\"sizes:\");\n"
"\t\tfor (int i = 0; i < np; i++) if (pr[i].type == TXH_SIZE) printf(\" %s\", pr[i].name);\n"
"\t\tprintf(\"\\nscalars:\");\n"
"\t\tfor (int i = 0; i < np; i++) if (pr[i].type != TXH_SIZE) printf(\" %s:%s\", pr[i].name, txh_tname[pr[i].type]);\n"
"\t\tprintf(\"\\n\");\n"
"\t\texit(0);\n"
"\t}\n"
"\tfor (int a = 1; a < argc; a++) {\n"
"\t\tchar *arg = argv[a], *eq = strchr(arg, '=');\n"
"\t\tint i;\n"
"\t\tif (!eq) txh_usage(argv[0], pr, np);\n"
"\t\tsize_t n = (size_t)(eq - arg);\n"
"\t\tfor (i = 0; i < np; i++)\n"
"\t\t\tif (strlen(pr[i].name) == n && strncmp(pr[i].name, arg, n) == 0) break;\n"
"\t\tif (i < np) { o->val[i] = eq + 1; continue; }\n"
"\t\tif (arg[0] == '-' && arg[1] == '-') arg += 2, n -= 2;\n"
"\t\tif (n == 4 && strncmp(arg, \"seed\", 4) == 0) o->seed = strtoull(eq + 1, NULL, 0);\n"
"\t\telse if (n == 3 && strncmp(arg, \"out\", 3) == 0) o->out = eq + 1;\n"
"\t\telse if (n == 6 && strncmp(arg, \"poison\", 6) == 0) o->poison = (int)strtol(eq + 1, NULL, 0) & 0xff;\n"
"\t\telse if (n == 9 && strncmp(arg, \"checkargs\", 9) == 0) o->checkargs = atoi(eq + 1);\n"
"\t\telse if (n == 7 && strncmp(arg, \"special\", 7) == 0) o->special = atoi(eq + 1);\n"
"\t\telse if (n == 6 && strncmp(arg, \"expect\", 6) == 0) o->expect = atoi(eq + 1), o->has_expect = 1;\n"
"\t\telse { fprintf(stderr, \"%s: unknown argument '%s'\\n\", argv[0], argv[a]); txh_usage(argv[0], pr, np); }\n"
"\t}\n"
"}\n"
"\n"
"static int64_t txh_size(TxhOpts *o, const TxhParam *pr, int i)\n"
"{\n"
"\tchar *end;\n"
"\tif (!o->val[i]) { fprintf(stderr, \"harness: size %s is required\\n\", pr[i].name); exit(2); }\n"
"\tlong long v = strtoll(o->val[i], &end, 0);\n"
"\tif (*end || end == o->val[i]) { fprintf(stderr, \"harness: bad size %s=%s\\n\", pr[i].name, o->val[i]); exit(2); }\n"
"\treturn v;\n"
"}\n"
"\n"
"/* A scalar parameter: given, or drawn from the seed (floats in [0.5, 1.5],\n"
" * integers in [1, 4], bool true). */\n"
"static TxhVal txh_scalar(TxhOpts *o, const TxhParam *pr, int i)\n"
"{\n"
"\tTxhVal v;\n"
"\tint t = pr[i].type;\n"
"\tint fl = t == TXH_F16 || t == TXH_BF16 || t == TXH_F32 || t == TXH_F64;\n"
"\tif (o->val[i]) {\n"
"\t\tif (fl) v.d = strtod(o->val[i], NULL);\n"
"\t\telse if (strcmp(o->val[i], \"true\") == 0) v.i = 1;\n"
"\t\telse if (strcmp(o->val[i], \"false\") == 0) v.i = 0;\n"
"\t\telse v.i = strtoll(o->val[i], NULL, 0);\n"
"\t\treturn v;\n"
"\t}\n"
"\ttxh_state = o->seed * 0x100000001b3ull + 7919u * (uint64_t)(i + 1);\n"
"\tif (fl) v.d = 0.5 + txh_unit();\n"
"\telse if (t == TXH_BOOL) v.i = 1;\n"
"\telse v.i = 1 + (int64_t)(txh_next() % 4);\n"
"\treturn v;\n"
"}\n"
"\n"
"/* Inputs: floats in [-1, 1]; integers in a small range, so that an\n"
" * int8 x int8 -> int32 gemm or a chain of products cannot overflow.\n"
" * special=1: about one float in 8 is NaN, +inf or -inf instead. */\n"
"static int txh_special;\n"
"static double txh_bits(uint64_t u)\n"
"{\n"
"\tdouble d;\n"
"\tmemcpy(&d, &u, sizeof d);\n"
"\treturn d;\n"
"}\n"
"static void txh_fill(TxhBuf *b)\n"
"{\n"
"\tfor (int64_t i = 0; i < b->count; i++) {\n"
"\t\tuint64_t r = txh_next();\n"
"\t\tdouble u = 2.0 * txh_unit() - 1.0;\n"
"\t\tif (txh_special && (r >> 40) % 8 == 0)\n"
"\t\t\tu = txh_bits((r >> 50) % 3 == 0 ? 0x7ff8000000000000ull :\n"
"\t\t\t    (r >> 50) % 3 == 1 ? 0x7ff0000000000000ull : 0xfff0000000000000ull);\n"
"\t\tswitch (b->type) {\n"
"\t\tcase TXH_BOOL: ((uint8_t *)b->p)[i] = (uint8_t)(r & 1); break;\n"
"\t\tcase TXH_I8: ((int8_t *)b->p)[i] = (int8_t)((int)(r % 17) - 8); break;\n"
"\t\tcase TXH_I16: ((int16_t *)b->p)[i] = (int16_t)((int)(r % 129) - 64); break;\n"
"\t\tcase TXH_I32: ((int32_t *)b->p)[i] = (int32_t)(r % 101) - 50; break;\n"
"\t\tcase TXH_I64: ((int64_t *)b->p)[i] = (int64_t)(r % 101) - 50; break;\n"
"\t\tcase TXH_U8: ((uint8_t *)b->p)[i] = (uint8_t)(r % 16); break;\n"
"\t\tcase TXH_U16: ((uint16_t *)b->p)[i] = (uint16_t)(r % 256); break;\n"
"\t\tcase TXH_U32: ((uint32_t *)b->p)[i] = (uint32_t)(r % 101); break;\n"
"\t\tcase TXH_U64: ((uint64_t *)b->p)[i] = r % 101; break;\n"
"\t\tcase TXH_F16: ((uint16_t *)b->p)[i] = txh_half((float)u); break;\n"
"\t\tcase TXH_BF16: ((uint16_t *)b->p)[i] = txh_bf16((float)u); break;\n"
"\t\tcase TXH_F32: ((float *)b->p)[i] = (float)u; break;\n"
"\t\tcase TXH_F64: ((double *)b->p)[i] = u; break;\n"
"\t\t}\n"
"\t}\n"
"}\n"
"\n"
"static uint64_t txh_hash(const TxhBuf *b)\n"
"{\n"
"\tuint64_t h = 0xcbf29ce484222325ull;\n"
"\tconst unsigned char *p = b->p;\n"
"\tfor (int64_t i = 0; i < b->count * txh_tsize[b->type]; i++)\n"
"\t\th = (h ^ p[i]) * 0x100000001b3ull;\n"
"\treturn h;\n"
"}\n"
"\n"
"static int txh_guards_ok(const TxhBuf *b)\n"
"{\n"
"\tint64_t bytes = b->count * txh_tsize[b->type];\n"
"\tfor (int i = 0; i < TXH_RED; i++)\n"
"\t\tif (b->base[i] != TXH_GUARD || b->base[TXH_RED + bytes + i] != TXH_GUARD) {\n"
"\t\t\tfprintf(stderr, \"harness: kernel wrote %s the tensor '%s'\\n\",\n"
"\t\t\t    b->base[i] != TXH_GUARD ? \"before\" : \"past the end of\", b->name);\n"
"\t\t\treturn 0;\n"
"\t\t}\n"
"\treturn 1;\n"
"}\n"
"\n"
"static void txh_poison(TxhBuf *b, int byte)\n"
"{\n"
"\tif (!b->input) memset(b->p, byte, (size_t)(b->count * txh_tsize[b->type]));\n"
"}\n"
"\n"
"static const char *txh_msg(const char *m) { return m ? m : \"(null message)\"; }\n"
"\n"
"typedef int (*TxhCall)(const int64_t *s, void *const *p);\n"
"\n"
"/* Allocates, fills, checks arguments, calls, checks and writes. */\n"
"static int txh_run_body(TxhOpts *o, const TxhParam *pr, int np, int64_t *s,\n"
"    TxhBuf *b, int nb, TxhCall call, const char *(*lasterr)(void), const char *kname)\n"
"{\n"
"\tvoid *p[64];\n"
"\tint bad = -1, rc, fail = 0;\n"
"\tfor (int i = 0; i < nb; i++) {\n"
"\t\tb[i].count = 1;\n"
"\t\tfor (int d = 0; d < b[i].ndims; d++) {\n"
"\t\t\tif (b[i].ext[d] < 0 && bad < 0) bad = i;\n"
"\t\t\tb[i].count *= b[i].ext[d] < 0 ? 0 : b[i].ext[d];\n"
"\t\t}\n"
"\t\tint64_t bytes = b[i].count * txh_tsize[b[i].type];\n"
"\t\tb[i].base = malloc((size_t)(bytes + 2 * TXH_RED));\n"
"\t\tif (!b[i].base) { fprintf(stderr, \"harness: out of memory for '%s'\\n\", b[i].name); return 2; }\n"
"\t\tmemset(b[i].base, TXH_GUARD, (size_t)(bytes + 2 * TXH_RED));\n"
"\t\tb[i].p = b[i].base + TXH_RED;\n"
"\t\tp[i] = b[i].p;\n"
"\t\tif (b[i].input) {\n"
"\t\t\ttxh_state = o->seed * 0x9e3779b97f4a7c15ull + 1000003u * (uint64_t)(i + 1);\n"
"\t\t\ttxh_special = o->special;\n"
"\t\t\ttxh_fill(&b[i]);\n"
"\t\t\tb[i].hash = txh_hash(&b[i]);\n"
"\t\t} else {\n"
"\t\t\ttxh_poison(&b[i], o->poison);\n"
"\t\t}\n"
"\t}\n"
"\tif (bad >= 0) {\n"
"\t\trc = call(s, p);\n"
"\t\tif (rc == 2 && !o->has_expect) {\n"
"\t\t\tfprintf(stderr, \"harness: sizes give '%s' a negative extent; %s rejected them: %s\\n\",\n"
"\t\t\t    b[bad].name, kname, txh_msg(lasterr()));\n"
"\t\t\treturn 5;\n"
"\t\t}\n"
"\t\tif (!o->has_expect) {\n"
"\t\t\tfprintf(stderr, \"harness: sizes give '%s' a negative extent but %s returned %d, not 2 (TXC_ERR_SIZE)\\n\",\n"
"\t\t\t    b[bad].name, kname, rc);\n"
"\t\t\treturn 1;\n"
"\t\t}\n"
"\t} else {\n"
"\t\tif (o->checkargs) {\n"
"\t\t\tfor (int i = 0; i < nb; i++) {\n"
"\t\t\t\tp[i] = NULL;\n"
"\t\t\t\trc = call(s, p);\n"
"\t\t\t\tp[i] = b[i].p;\n"
"\t\t\t\tif (b[i].count == 0) {   /* no elements: NULL is fine */\n"
"\t\t\t\t\tif (rc == 1) { fprintf(stderr, \"harness: %s with '%s' NULL returned 1 (TXC_ERR_NULL), but '%s' has no elements\\n\", kname, b[i].name, b[i].name); fail = 1; }\n"
"\t\t\t\t}\n"
"\t\t\t\telse if (rc != 1) { fprintf(stderr, \"harness: %s with '%s' NULL returned %d, not 1 (TXC_ERR_NULL)\\n\", kname, b[i].name, rc); fail = 1; }\n"
"\t\t\t\telse if (!lasterr() || !*lasterr()) { fprintf(stderr, \"harness: %s returned 1 without a message\\n\", kname); fail = 1; }\n"
"\t\t\t\telse {\n"
"\t\t\t\t\tchar want[128];\n"
"\t\t\t\t\tsnprintf(want, sizeof want, \"argument '%s' is NULL\", b[i].name);\n"
"\t\t\t\t\tif (!strstr(lasterr(), want)) { fprintf(stderr, \"harness: %s with '%s' NULL: the message is not the first failed check's (%s): %s\\n\", kname, b[i].name, want, lasterr()); fail = 1; }\n"
"\t\t\t\t}\n"
"\t\t\t}\n"
"\t\t\tfor (int i = 0; i < np; i++) {\n"
"\t\t\t\tif (pr[i].type != TXH_SIZE) continue;\n"
"\t\t\t\tint64_t keep = s[i];\n"
"\t\t\t\ts[i] = -1;\n"
"\t\t\t\trc = call(s, p);\n"
"\t\t\t\ts[i] = keep;\n"
"\t\t\t\tif (rc != 2) { fprintf(stderr, \"harness: %s with %s=-1 returned %d, not 2 (TXC_ERR_SIZE)\\n\", kname, pr[i].name, rc); fail = 1; }\n"
"\t\t\t\telse if (!lasterr() || !*lasterr()) { fprintf(stderr, \"harness: %s returned 2 without a message\\n\", kname); fail = 1; }\n"
"\t\t\t\telse {\n"
"\t\t\t\t\tchar want[128];\n"
"\t\t\t\t\tsnprintf(want, sizeof want, \"size %s must\", pr[i].name);\n"
"\t\t\t\t\tif (!strstr(lasterr(), want)) { fprintf(stderr, \"harness: %s with %s=-1: the message is not the first failed check's (%s): %s\\n\", kname, pr[i].name, want, lasterr()); fail = 1; }\n"
"\t\t\t\t}\n"
"\t\t\t}\n"
"\t\t\tfor (int i = 0; i < nb; i++)\n"
"\t\t\t\ttxh_poison(&b[i], o->poison);\n"
"\t\t\tif (o->checkargs == 2) return fail;   /* the argument checks only */\n"
"\t\t}\n"
"\t\trc = call(s, p);\n"
"\t}\n"
"\tfor (int i = 0; i < nb; i++) {\n"
"\t\tif (!txh_guards_ok(&b[i])) fail = 1;\n"
"\t\tif (b[i].input && txh_hash(&b[i]) != b[i].hash) {\n"
"\t\t\tfprintf(stderr, \"harness: kernel wrote its input '%s'\\n\", b[i].name);\n"
"\t\t\tfail = 1;\n"
"\t\t}\n"
"\t}\n"
"\tif (fail) return 1;\n"
"\tif (o->has_expect) {\n"
"\t\tif (rc != o->expect) {\n"
"\t\t\tfprintf(stderr, \"harness: %s returned %d (%s), expected %d\\n\", kname, rc,\n"
"\t\t\t    rc ? txh_msg(lasterr()) : \"ok\", o->expect);\n"
"\t\t\treturn 1;\n"
"\t\t}\n"
"\t\tif (rc != 0 && (!lasterr() || !*lasterr())) {\n"
"\t\t\tfprintf(stderr, \"harness: %s returned %d without a message\\n\", kname, rc);\n"
"\t\t\treturn 1;\n"
"\t\t}\n"
"\t\treturn 0;\n"
"\t}\n"
"\tif (rc != 0) {\n"
"\t\tfprintf(stderr, \"harness: %s returned %d: %s\\n\", kname, rc, txh_msg(lasterr()));\n"
"\t\treturn 10 + (rc > 0 && rc < 100 ? rc : 99);\n"
"\t}\n"
"\tif (o->out) {\n"
"\t\tFILE *f = fopen(o->out, \"wb\");\n"
"\t\tif (!f) { perror(o->out); return 2; }\n"
"\t\tfor (int i = 0; i < nb; i++) {\n"
"\t\t\tif (b[i].input) continue;\n"
"\t\t\tfprintf(f, \"TXOUT %s %s %lld\\n\", b[i].name, txh_tname[b[i].type], (long long)b[i].count);\n"
"\t\t\tfwrite(b[i].p, (size_t)txh_tsize[b[i].type], (size_t)b[i].count, f);\n"
"\t\t}\n"
"\t\tif (fclose(f) != 0) { perror(o->out); return 2; }\n"
"\t} else {\n"
"\t\tfor (int i = 0; i < nb; i++)\n"
"\t\t\tif (!b[i].input)\n"
"\t\t\t\tprintf(\"%s: %s[%lld] hash %016llx\\n\", b[i].name, txh_tname[b[i].type],\n"
"\t\t\t\t    (long long)b[i].count, (unsigned long long)txh_hash(&b[i]));\n"
"\t}\n"
"\treturn 0;\n"
"}\n"
"\n"
"/* txh_run_body, then the buffers are freed however it ended. */\n"
"static int txh_run(TxhOpts *o, const TxhParam *pr, int np, int64_t *s,\n"
"    TxhBuf *b, int nb, TxhCall call, const char *(*lasterr)(void), const char *kname)\n"
"{\n"
"\tint r = txh_run_body(o, pr, np, s, b, nb, call, lasterr, kname);\n"
"\tfor (int i = 0; i < nb; i++)\n"
"\t\tfree(b[i].base);\n"
"\treturn r;\n"
"}\n";

/* The harness's name for an element type (its TXH_ enum constant). */
static const char *
htype(ScalarType t)
{
	switch (t) {
	case TY_BOOL: return "TXH_BOOL";
	case TY_I8: return "TXH_I8";
	case TY_I16: return "TXH_I16";
	case TY_I32: return "TXH_I32";
	case TY_I64: return "TXH_I64";
	case TY_U8: return "TXH_U8";
	case TY_U16: return "TXH_U16";
	case TY_U32: return "TXH_U32";
	case TY_U64: return "TXH_U64";
	case TY_F16: return "TXH_F16";
	case TY_BF16: return "TXH_BF16";
	case TY_F32: return "TXH_F32";
	case TY_F64: return "TXH_F64";
	default: return NULL;
	}
}

/* The C type of an element at the ABI (target_c_type), or NULL for a
 * type no tensor can have. */
static const char *
ctype(ScalarType t)
{
	return t > TY_ERROR && t < TY_INT_LIT ? target_c_type(t) : NULL;
}

static bool
is_size(IrFunc *f, int i)
{
	Kernel *k = f->kernel;
	if (k && i < k->nparams)
		return k->params[i].is_size;
	return f->params[i]->type.code == TY_I64;
}

/* The parameter a variable stands for, or -1. */
static int
param_of(IrFunc *f, Var *v)
{
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i] == v)
			return i;
	for (int i = 0; i < f->nparams; i++)
		if (v->name && f->params[i]->name && strcmp(v->name, f->params[i]->name) == 0)
			return i;
	return -1;
}

/* Writes an extent (IR over the size parameters) as C over s[]. */
static bool
emit_ir(FILE *out, IrFunc *f, IrExpr *e)
{
	const char *op = NULL, *fn = NULL;
	switch (e->kind) {
	case IR_INT:
		fprintf(out, "INT64_C(%lld)", (long long)e->ival);
		return true;
	case IR_VAR: {
		int i = param_of(f, e->var);
		if (i < 0 || !is_size(f, i))
			return false;
		fprintf(out, "s[%d]", i);
		return true;
	}
	case IR_CAST:
		if (!type_is_int(e->type.code))
			return false;
		return emit_ir(out, f, e->a);
	case IR_ADD: op = "+"; break;
	case IR_SUB: op = "-"; break;
	case IR_MUL: op = "*"; break;
	case IR_LT: op = "<"; break;
	case IR_LE: op = "<="; break;
	case IR_GT: op = ">"; break;
	case IR_GE: op = ">="; break;
	case IR_EQ: op = "=="; break;
	case IR_NE: op = "!="; break;
	case IR_AND: op = "&&"; break;
	case IR_OR: op = "||"; break;
	case IR_DIV: fn = "txh_div"; break;
	case IR_MOD: fn = "txh_mod"; break;
	case IR_MIN: fn = "txh_min"; break;
	case IR_MAX: fn = "txh_max"; break;
	case IR_NEG:
		fputs("(-", out);
		if (!emit_ir(out, f, e->a))
			return false;
		fputc(')', out);
		return true;
	case IR_SELECT:
		fputc('(', out);
		if (!emit_ir(out, f, e->a))
			return false;
		fputs(" ? ", out);
		if (!emit_ir(out, f, e->b))
			return false;
		fputs(" : ", out);
		if (!emit_ir(out, f, e->c))
			return false;
		fputc(')', out);
		return true;
	default:
		return false;
	}
	fputs(fn ? fn : "", out);
	fputc('(', out);
	if (!emit_ir(out, f, e->a))
		return false;
	if (fn)
		fputs(", ", out);
	else
		fprintf(out, " %s ", op);
	if (!emit_ir(out, f, e->b))
		return false;
	fputc(')', out);
	return true;
}

/* Whether size v was fixed with -D (the entry point's check `v == c` that
 * lowering puts first), and its value. */
static bool
fixed_size(IrFunc *f, Var *v, int64_t *out)
{
	IrStmt *s = f->body;
	for (int i = 0; s && s->kind == IS_BLOCK && i < s->block.n; i++) {
		IrStmt *a = s->block.stmts[i];
		if (a->kind != IS_ASSERT)
			break;
		IrExpr *c = a->assrt.cond;
		if (c->kind == IR_EQ && c->a->kind == IR_VAR && c->a->var == v && ir_is_const(c->b, out))
			return true;
	}
	return false;
}

/* Writes a declared shape expression (AST, sizes and constants only). */
static bool
emit_ast(FILE *out, Expr *e)
{
	const char *fn = NULL;
	switch (e->kind) {
	case EXPR_INT:
		fprintf(out, "INT64_C(%lld)", (long long)e->ival);
		return true;
	case EXPR_NAME:
		if (e->id.ref != REF_SIZE || !e->id.param)
			return false;
		fprintf(out, "s[%d]", e->id.param->index);
		return true;
	case EXPR_UNARY:
		if (e->bin.op != OP_NEG)
			return false;
		fputs("(-", out);
		if (!emit_ast(out, e->bin.a))
			return false;
		fputc(')', out);
		return true;
	case EXPR_BINARY:
		switch (e->bin.op) {
		case OP_ADD: case OP_SUB: case OP_MUL:
			fputc('(', out);
			if (!emit_ast(out, e->bin.a))
				return false;
			fprintf(out, " %s ", op_spelling(e->bin.op));
			if (!emit_ast(out, e->bin.b))
				return false;
			fputc(')', out);
			return true;
		case OP_DIV: fn = "txh_div"; break;
		case OP_MOD: fn = "txh_mod"; break;
		default: return false;
		}
		break;
	case EXPR_CALL:
		if (e->call.nargs != 2)
			return false;
		if (e->call.builtin == BI_MIN || strcmp(e->call.name, "min") == 0)
			fn = "txh_min";
		else if (e->call.builtin == BI_MAX || strcmp(e->call.name, "max") == 0)
			fn = "txh_max";
		else
			return false;
		fprintf(out, "%s(", fn);
		if (!emit_ast(out, e->call.args[0]))
			return false;
		fputs(", ", out);
		if (!emit_ast(out, e->call.args[1]))
			return false;
		fputc(')', out);
		return true;
	default:
		return false;
	}
	fprintf(out, "%s(", fn);
	if (!emit_ast(out, e->bin.a))
		return false;
	fputs(", ", out);
	if (!emit_ast(out, e->bin.b))
		return false;
	fputc(')', out);
	return true;
}

/* One extent of an argument: the lowered IR if there is one, else the
 * declared shape. */
static bool
emit_extent(FILE *out, IrFunc *f, Buffer *b, int d)
{
	if (b->extent && b->extent[d])
		return emit_ir(out, f, b->extent[d]);
	if (b->tensor && b->tensor->shape && d < b->tensor->ndims)
		return emit_ast(out, b->tensor->shape[d]);
	return false;
}

static void
emit_prototype(FILE *out, IrFunc *f)
{
	fprintf(out, "int %s(", f->name);
	int n = 0;
	for (int i = 0; i < f->nparams; i++, n++)
		fprintf(out, "%s%s", n ? ", " : "",
		    is_size(f, i) ? "int64_t" : ctype(f->params[i]->type.code));
	for (int i = 0; i < f->nargs; i++, n++)
		fprintf(out, "%s%s%s *", n ? ", " : "",
		    f->args[i]->is_input ? "const " : "", ctype(f->args[i]->elem));
	fprintf(out, "%s);\n", n ? "" : "void");
}

/* The argument list of the call in txh_call. */
static void
emit_call(FILE *out, IrFunc *f)
{
	fprintf(out, "\treturn %s(", f->name);
	int n = 0;
	for (int i = 0; i < f->nparams; i++, n++) {
		fputs(n ? ", " : "", out);
		ScalarType t = f->params[i]->type.code;
		if (is_size(f, i))
			fprintf(out, "s[%d]", i);
		else if (t == TY_F16)
			fprintf(out, "txh_half((float)txh_v[%d].d)", i);
		else if (t == TY_BF16)
			fprintf(out, "txh_bf16((float)txh_v[%d].d)", i);
		else if (type_is_float(t))
			fprintf(out, "(%s)txh_v[%d].d", ctype(t), i);
		else
			fprintf(out, "(%s)txh_v[%d].i", ctype(t), i);
	}
	for (int i = 0; i < f->nargs; i++, n++)
		fprintf(out, "%s(%s%s *)p[%d]", n ? ", " : "",
		    f->args[i]->is_input ? "const " : "", ctype(f->args[i]->elem), i);
	fputs(");\n", out);
}

bool
harness_emit(FILE *out, IrFunc *f)
{
	if (f->nparams > 64 || f->nargs > 64) {
		diag_error(f->kernel ? f->kernel->loc : loc_none,
		    "--emit=harness: too many parameters in kernel '%s'", f->name);
		return false;
	}
	for (int i = 0; i < f->nparams; i++)
		if (!is_size(f, i) && !ctype(f->params[i]->type.code))
			goto bad_type;
	for (int i = 0; i < f->nargs; i++)
		if (!ctype(f->args[i]->elem))
			goto bad_type;

	fprintf(out, "/* Test harness for kernel %s, written by txc --emit=harness.\n"
	    " * Link it with the kernel (C: txc --emit=c; native: txc -o X.o, -ltxrt and\n"
	    " * -DTXC_LLVM) and run `./h --params` for its arguments. */\n", f->name);
	fputs(runtime, out);
	fputc('\n', out);
	emit_prototype(out, f);
	fprintf(out, "#ifdef TXC_LLVM\nconst char *txrt_last_error(void);\n"
	    "#define TXH_LAST_ERROR txrt_last_error\n#else\n"
	    "const char *%s_last_error(void);\n#define TXH_LAST_ERROR %s_last_error\n#endif\n\n",
	    f->name, f->name);
	fprintf(out, "static TxhVal txh_v[%d];\n\n", f->nparams ? f->nparams : 1);
	fputs("static int txh_kernel(const int64_t *s, void *const *p)\n{\n", out);
	fputs("\t(void)s; (void)p;\n", out);
	emit_call(out, f);
	fputs("}\n\n", out);
	fputs(device_copies, out);

	fputs("int main(int argc, char **argv)\n{\n", out);
	fprintf(out, "\tstatic const TxhParam pr[] = {");
	for (int i = 0; i < f->nparams; i++)
		fprintf(out, "%s{ \"%s\", %s }", i ? ", " : " ",
		    f->params[i]->name, is_size(f, i) ? "TXH_SIZE" : htype(f->params[i]->type.code));
	fprintf(out, "%s};\n", f->nparams ? " " : "{ 0, 0 } ");
	fprintf(out, "\tenum { NP = %d, NB = %d };\n", f->nparams, f->nargs);
	fputs("\tTxhOpts o;\n\tint64_t s[NP + 1] = { 0 };\n", out);
	fputs("\ttxh_args(argc, argv, pr, NP, &o);\n", out);
	for (int i = 0; i < f->nparams; i++) {
		if (is_size(f, i))
			fprintf(out, "\ts[%d] = txh_size(&o, pr, %d);\n", i, i);
		else
			fprintf(out, "\ttxh_v[%d] = txh_scalar(&o, pr, %d);\n", i, i);
	}
	/* a size fixed with -D: the shapes below are built for it alone */
	for (int i = 0; i < f->nparams; i++) {
		int64_t v;
		if (is_size(f, i) && fixed_size(f, f->params[i], &v))
			fprintf(out, "\tif (s[%d] != INT64_C(%lld)) {\n\t\tfprintf(stderr, \"%%s: built with "
			    "-D %s=%lld; run it with %s=%lld\\n\", argv[0]);\n\t\treturn 2;\n\t}\n", i,
			    (long long)v, f->params[i]->name, (long long)v, f->params[i]->name, (long long)v);
	}
	for (int i = 0; i < f->nargs; i++) {
		Buffer *b = f->args[i];
		fprintf(out, "\tint64_t e%d[] = {", i);
		for (int d = 0; d < b->ndims; d++) {
			fputs(d ? ", " : " ", out);
			if (!emit_extent(out, f, b, d)) {
				diag_error(b->tensor ? b->tensor->loc : loc_none,
				    "--emit=harness: cannot evaluate extent %d of '%s' from the sizes",
				    d, b->name);
				return false;
			}
		}
		fprintf(out, "%s};\n", b->ndims ? " " : " 1 ");
	}
	fputs("\tTxhBuf b[NB + 1] = {\n", out);
	for (int i = 0; i < f->nargs; i++) {
		Buffer *b = f->args[i];
		fprintf(out, "\t\t{ \"%s\", %s, %d, %d, e%d, 0, 0, 0, 0 },\n",
		    b->name, htype(b->elem), b->is_input, b->ndims, i);
	}
	fputs("\t};\n", out);
	fputs("#ifdef TXC_CUDA_DEVICE\n\ttxh_b = b;\n#endif\n", out);
	fprintf(out, "\treturn txh_run(&o, pr, NP, s, b, NB, txh_call, TXH_LAST_ERROR, \"%s\");\n}\n",
	    f->name);
	return true;

bad_type:
	diag_error(f->kernel ? f->kernel->loc : loc_none,
	    "--emit=harness: kernel '%s' has a parameter of a type the harness cannot fill", f->name);
	return false;
}
