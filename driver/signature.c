/* signature.c: `txc --signature=FILE`, the compiled kernels' entry points
 * as JSON, for programs that call them without reading C (the Python
 * package, python/txc/).
 *
 *     { "txc": "0.1.0", "target": "cpu", "dlpack": true,
 *       "files": ["k.tx", "/usr/share/txc/stdlib/matmul.tx"],
 *       "kernels": [ { "name": "saxpy", "kernel": "saxpy",
 *           "params": [ { "name": "N", "size": true, "type": "i64" },
 *                       { "name": "alpha", "size": false, "type": "f32" } ],
 *           "tensors": [ { "name": "x", "dir": "in", "type": "f32",
 *                          "shape": ["N"] }, ... ] } ] }
 *
 * "name" is the entry point's symbol (--prefix included), "kernel" the
 * kernel's name in the source.  Params and tensors are in the order of
 * the C entry point.  A shape lists one extent per dimension as an
 * expression tree: a JSON number, a parameter's name, or an array whose
 * first element names the IR operation (lower/ir.def: "add", "sub", "mul",
 * "div" and "mod" rounding toward negative infinity, "min", "max", "neg")
 * and whose others are its operands; a cast is left out (extents are i64).
 * "files" lists every source file the run read (the input and its
 * imports), so a cache can tell when one changed.
 */
#include <string.h>

#include "driver.h"
#include "lower/ir.h"

static void
json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void
json_expr(FILE *fp, IrExpr *e)
{
	if (!e) {
		fputs("null", fp);
		return;
	}
	switch (e->kind) {
	case IR_INT:
		fprintf(fp, "%lld", (long long)e->ival);
		return;
	case IR_VAR:
		json_str(fp, e->var->name);
		return;
	case IR_CAST:
		json_expr(fp, e->a);
		return;
	default:
		break;
	}
	fputc('[', fp);
	json_str(fp, ir_expr_names[e->kind]);
	IrExpr *ops[3] = { e->a, e->b, e->c };
	for (int i = 0; i < 3 && ops[i]; i++) {
		fputs(", ", fp);
		json_expr(fp, ops[i]);
	}
	fputc(']', fp);
}

bool
signature_emit(FILE *fp, IrFunc **funcs, int n, const Options *o)
{
	fputs("{\"txc\": ", fp);
	json_str(fp, PACKAGE_VERSION);
	fputs(", \"target\": ", fp);
	json_str(fp, o->target);
	fprintf(fp, ", \"dlpack\": %s,\n \"files\": [", o->dlpack ? "true" : "false");
	const SrcFile *sf;
	for (uint32_t id = 1; (sf = source_get(id)); id++) {
		if (id > 1)
			fputs(", ", fp);
		json_str(fp, sf->name);
	}
	fputs("],\n \"kernels\": [", fp);
	for (int i = 0; i < n; i++) {
		IrFunc *f = funcs[i];
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", fp);
		json_str(fp, f->name);
		fputs(", \"kernel\": ", fp);
		json_str(fp, f->kernel ? f->kernel->name : f->name);
		fputs(",\n   \"params\": [", fp);
		for (int p = 0; p < f->nparams; p++) {
			Var *v = f->params[p];
			bool size = f->kernel && f->kernel->nparams == f->nparams
			    ? f->kernel->params[p].is_size : v->type.code == TY_I64;
			fputs(p ? ", {\"name\": " : "{\"name\": ", fp);
			json_str(fp, v->name);
			fprintf(fp, ", \"size\": %s, \"type\": ", size ? "true" : "false");
			json_str(fp, ir_type_str(v->type));
			fputc('}', fp);
		}
		fputs("],\n   \"tensors\": [", fp);
		for (int t = 0; t < f->nargs; t++) {
			Buffer *b = f->args[t];
			fputs(t ? ",\n     {\"name\": " : "\n     {\"name\": ", fp);
			json_str(fp, b->name);
			fprintf(fp, ", \"dir\": \"%s\", \"type\": ", b->is_input ? "in" : "out");
			json_str(fp, type_name(b->elem));
			fputs(", \"shape\": [", fp);
			for (int d = 0; d < b->ndims; d++) {
				if (d)
					fputs(", ", fp);
				json_expr(fp, b->extent[d]);
			}
			fputs("]}", fp);
		}
		fputs("]}", fp);
	}
	fputs("]}\n", fp);
	return !ferror(fp);
}
