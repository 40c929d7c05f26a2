/* cdlpack.c: the DLPack entry points of the C backend's output.
 *
 *     int NAME_dlpack(int64_t size..., scalar..., const DLTensor *in...,
 *                     DLTensor *out...);
 *
 * checks the sizes as NAME does first (ir_size_checks: signs, -D values,
 * no overflow), then each DLTensor (not NULL, device kDLCPU, dtype
 * code/bits with one lane, ndim, shape equal to what the sizes give,
 * compact row-major strides or NULL strides, a byte_offset that keeps
 * elements aligned, then data not NULL unless the tensor has no elements)
 * as the native object does (target/llvm/cg_dlpack.c), and calls NAME
 * with the data pointers (NULL for NULL data).  Everything is
 * behind `#ifdef TXC_DLPACK`, so the file needs dlpack/dlpack.h only when
 * the user asks for these entry points.
 */
#include <string.h>

#include "target/c/cemit.h"

static const char prelude[] =
"#ifdef TXC_DLPACK\n"
"#include <stdio.h>\n"
"#include <dlpack/dlpack.h>\n"
"\n"
"/* 0 when t can be passed as a compact row-major CPU tensor with the\n"
" * dtype (code -1: bool, as kDLUInt or kDLBool with 8 bits) and shape;\n"
" * else an error code, *why saying what is wrong. */\n"
"static int\n"
"txc_dl_check(const DLTensor *t, int code, int bits, int ndim,\n"
"    const int64_t *shape, const char **why)\n"
"{\n"
"\tint64_t stride = 1;\n"
"\tint d;\n"
"\tif (t == NULL) {\n"
"\t\t*why = \"is NULL\";\n"
"\t\treturn 1;   /* TXC_ERR_NULL */\n"
"\t}\n"
"\t*why = NULL;\n"
"\tif (t->device.device_type != kDLCPU)\n"
"\t\t*why = \"is not in CPU memory (kDLCPU)\";\n"
"\telse if ((code >= 0 ? t->dtype.code != code\n"
"\t    : t->dtype.code != kDLUInt && t->dtype.code != 6) ||\n"
"\t    t->dtype.bits != bits || t->dtype.lanes != 1)\n"
"\t\t*why = \"has the wrong data type\";\n"
"\telse if (t->ndim != ndim)\n"
"\t\t*why = \"has the wrong number of dimensions\";\n"
"\telse if (t->byte_offset % (uint64_t)(bits / 8) != 0)\n"
"\t\t*why = \"has a byte_offset that misaligns its elements\";\n"
"\tif (*why == NULL && ndim > 0 && t->shape == NULL)\n"
"\t\t*why = \"has a NULL shape\";\n"
"\tfor (d = 0; *why == NULL && d < ndim; d++)\n"
"\t\tif (t->shape[d] != shape[d]) {\n"
"\t\t\t/* \"has the wrong shape [3, 4], want [3, 5]\", as the object says */\n"
"\t\t\tstatic TXC_THREAD_LOCAL char buf[120];\n"
"\t\t\tsize_t n = 0;\n"
"\t\t\tint e, k;\n"
"\t\t\tfor (e = 0; e < 2; e++)\n"
"\t\t\t\tfor (k = 0; k < ndim && n < sizeof buf; k++) {\n"
"\t\t\t\t\tint m = snprintf(buf + n, sizeof buf - n, \"%s%s%lld%s\",\n"
"\t\t\t\t\t    k ? \"\" : e ? \", want [\" : \"has the wrong shape [\", k ? \", \" : \"\",\n"
"\t\t\t\t\t    (long long)(e ? shape[k] : t->shape[k]), k < ndim - 1 ? \"\" : \"]\");\n"
"\t\t\t\t\tn += m > 0 ? (size_t)m : 0;\n"
"\t\t\t\t}\n"
"\t\t\t*why = buf;\n"
"\t\t}\n"
"\tfor (d = ndim - 1; *why == NULL && d >= 0; d--) {\n"
"\t\tif (t->strides != NULL && t->shape[d] != 1 && t->strides[d] != stride)\n"
"\t\t\t*why = \"is not compact row-major\";\n"
"\t\tif (t->shape[d] > 0 && stride > INT64_MAX / t->shape[d])\n"
"\t\t\tbreak;   /* past 64 bits: the kernel's size check says so */\n"
"\t\tstride *= t->shape[d];\n"
"\t}\n"
"\tif (*why)\n"
"\t\treturn 5;   /* TXC_ERR_DLPACK */\n"
"\t/* NULL data only for a tensor of no elements (PyTorch's empty ones) */\n"
"\tfor (d = 0; t->data == NULL && d < ndim && shape[d] != 0; d++)\n"
"\t\t;\n"
"\tif (t->data == NULL && d == ndim) {\n"
"\t\t*why = \"has NULL data\";\n"
"\t\treturn 1;   /* TXC_ERR_NULL */\n"
"\t}\n"
"\treturn 0;\n"
"}\n"
"\n"
"/* The element pointer: data + byte_offset, NULL for NULL data. */\n"
"static void *\n"
"txc_dl_data(const DLTensor *t)\n"
"{\n"
"\treturn t->data ? (void *)((char *)t->data + t->byte_offset) : NULL;\n"
"}\n"
"\n"
"/* what followed by why in buf (size bytes). */\n"
"static const char *\n"
"txc_dl_message(char *buf, size_t size, const char *what, const char *why)\n"
"{\n"
"\tsize_t n = strlen(what), m = strlen(why);\n"
"\tif (n > size - 1)\n"
"\t\tn = size - 1;\n"
"\tif (m > size - 1 - n)\n"
"\t\tm = size - 1 - n;\n"
"\tmemcpy(buf, what, n);\n"
"\tmemcpy(buf + n, why, m);\n"
"\tbuf[n + m] = 0;\n"
"\treturn buf;\n"
"}\n\n";

void
cdlpack_prelude(FILE *out)
{
	fputs(prelude, out);
}

/* DLPack's type code for t (-1: bool, which txc_dl_check handles). */
static int
dl_code(ScalarType t)
{
	switch (t) {
	case TY_BOOL: return -1;
	case TY_I8: case TY_I16: case TY_I32: case TY_I64: return 0;
	case TY_U8: case TY_U16: case TY_U32: case TY_U64: return 1;
	case TY_BF16: return 4;   /* kDLBfloat */
	default: return 2;
	}
}

void
cdlpack_emit(FILE *out, CEmit *E)
{
	IrFunc *f = E->f;
	const char *k = f->name;
	fprintf(out, "static TXC_THREAD_LOCAL char txc_dlerr_%s[160];\n\n", k);
	fprintf(out, "int %s_dlpack(%s);\n\n", k, c_emit_params(E->a, E->names, f, true));
	fprintf(out, "int\n%s_dlpack(%s)\n{\n", k, c_emit_params(E->a, E->names, f, true));
	if (f->nargs > 0)
		fputs("\tconst char *why;\n\tint rc;\n", out);
	/* the sizes first, as NAME checks them (signs, -D values, no
	 * overflow): the shapes below are then computed in range */
	for (int i = 0; i < ir_size_checks(f->body); i++) {
		IrStmt *a = f->body->block.stmts[i];
		const char *msg = a->assrt.msg;
		if (!c_names_kernel(f, msg))
			msg = arena_printf(E->a, "%s: %s", k, msg);
		fprintf(out, "\tif (!(%s)) {\n\t\ttxc_error_%s = %s;\n\t\treturn %d;\n\t}\n",
		    cexpr(E, a->assrt.cond, NULL, false), k, cexpr_string(E->a, msg), a->assrt.code);
	}
	for (int i = 0; i < f->nargs; i++) {
		Buffer *b = f->args[i];
		const char *cn = cname_get(E->names, b, b->name);
		fputs("\t{\n", out);
		if (b->ndims > 0) {
			fprintf(out, "\t\tconst int64_t shape[%d] = { ", b->ndims);
			for (int d = 0; d < b->ndims; d++)
				fprintf(out, "%s%s", d ? ", " : "",
				    b->extent[d] ? cexpr(E, b->extent[d], NULL, false) : "0");
			fputs(" };\n", out);
		} else
			fputs("\t\tconst int64_t *shape = NULL;\n", out);
		int bits = ir_bits(b->elem);
		fprintf(out, "\t\trc = txc_dl_check(%s, %d, %d, %d, shape, &why);\n",
		    cn, dl_code(b->elem), bits < 8 ? 8 : bits, b->ndims);
		fputs("\t\tif (rc != 0) {\n", out);
		fprintf(out, "\t\t\ttxc_error_%s = txc_dl_message(txc_dlerr_%s, sizeof txc_dlerr_%s,\n"
		    "\t\t\t    %s, why);\n", k, k, k,
		    cexpr_string(E->a, arena_printf(E->a, "%s: DLTensor '%s' ", k, b->name)));
		fputs("\t\t\treturn rc;\n\t\t}\n\t}\n", out);
	}
	fprintf(out, "\treturn %s(", k);
	const char *sep = "";
	for (int i = 0; i < f->nparams; i++, sep = ", ")
		fprintf(out, "%s%s", sep, cexpr_var(E, f->params[i])->name);
	for (int i = 0; i < f->nargs; i++, sep = ", ") {
		Buffer *b = f->args[i];
		const char *cn = cname_get(E->names, b, b->name);
		const char *ct = target_c_type(b->elem);
		if (b->is_input)
			fprintf(out, "%s\n\t    (const %s *)txc_dl_data(%s)", *sep ? "," : "", ct, cn);
		else
			fprintf(out, "%s\n\t    (%s *)txc_dl_data(%s)", *sep ? "," : "", ct, cn);
	}
	fputs(");\n}\n\n", out);
}
