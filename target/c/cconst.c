/* cconst.c: constant tensors (tx.5 CONSTANTS) in the C target.
 *
 * Each constant becomes a static const array at the top of its entry
 * point, holding its values exactly: floats in C99's hexadecimal notation
 * (INFINITY and NAN from math.h where they are not finite), f16 and bf16
 * as their bits (their storage type, as for arguments), integers in
 * decimal.  GNU compilers align it to 64 bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "target/c/cemit.h"

static void
put_value(FILE *out, ScalarType t, const unsigned char *p)
{
	switch (t) {
	case TY_F32: case TY_F64: {
		double v;
		if (t == TY_F32) {
			float f;
			memcpy(&f, p, 4);
			v = f;
		} else {
			memcpy(&v, p, 8);
		}
		if (isnan(v))
			fputs("NAN", out);
		else if (isinf(v))
			fputs(v < 0 ? "-INFINITY" : "INFINITY", out);
		else
			fprintf(out, t == TY_F32 ? "%af" : "%a", v);
		return;
	}
	case TY_I8: fprintf(out, "%d", (int)(int8_t)p[0]); return;
	case TY_BOOL: case TY_U8: fprintf(out, "%u", (unsigned)p[0]); return;
	case TY_I16: { int16_t v; memcpy(&v, p, 2); fprintf(out, "%d", v); return; }
	case TY_U16: case TY_F16: case TY_BF16: {
		uint16_t v; memcpy(&v, p, 2); fprintf(out, "%uu", (unsigned)v); return;
	}
	case TY_I32: { int32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRId32, v); return; }
	case TY_U32: { uint32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRIu32 "u", v); return; }
	case TY_I64: {
		int64_t v; memcpy(&v, p, 8);
		if (v == INT64_MIN)
			fputs("INT64_MIN", out);
		else
			fprintf(out, "INT64_C(%" PRId64 ")", v);
		return;
	}
	case TY_U64: { uint64_t v; memcpy(&v, p, 8); fprintf(out, "UINT64_C(%" PRIu64 ")", v); return; }
	default: fputc('0', out); return;
	}
}

void
cconst_emit(FILE *out, CNames *names, IrFunc *f)
{
	for (int i = 0; i < f->nconsts; i++) {
		Buffer *b = f->consts[i];
		Tensor *t = b->tensor;
		size_t size = (size_t)(type_bits(t->elem) + 7) / 8;
		size_t n = t->cbytes / size;
		fprintf(out, "\tstatic const %s %s[%zu]\n#if defined(__GNUC__)\n"
		    "\t    __attribute__((aligned(64)))\n#endif\n\t    = {", target_c_type(t->elem),
		    cname_get(names, b, b->name), n ? n : 1);
		for (size_t j = 0; j < n; j++) {
			fputs(j % 8 ? " " : "\n\t\t", out);
			put_value(out, t->elem, t->cdata + j * size);
			fputc(',', out);
		}
		fputs(n ? "\n\t};\n" : " 0 };\n", out);
	}
}
