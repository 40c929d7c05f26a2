/* irprint.c: prints the IR so that it reads like TVM's lowered code.
 *
 *     parallel (io, 0, (M + 7)/8) {
 *       allocate C_local[f32 * 8 * 32] in local {
 *         for (ii, 0, 8) {
 *           vectorized (ji, 0, 8) {
 *             C_local[ii, ji] = 0f
 *
 * Expressions print infix with C's precedences and only the parentheses
 * they need; * / % hug their operands so index arithmetic stands out
 * (io*8 + ii).  Integer immediates print plain, f32 immediates with an
 * `f` suffix (0f, 1.5f), f64 ones with a point (1.0, 1.5).  min, max,
 * select, casts (f32(x)), broadcasts (x4(e)) and ramps (ramp(b, s, n))
 * print as calls.  --print-loops output and the loop-nest goldens use it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/ir.h"

/* Precedence: higher binds tighter; calls and leaves are atoms. */
enum { P_ATOM = 100, P_UNARY = 11 };

static int
prec(IrExpr *e)
{
	switch (e->kind) {
	case IR_MUL: case IR_DIV: case IR_MOD: return 10;
	case IR_ADD: case IR_SUB: return 9;
	case IR_SHL: case IR_SHR: return 8;
	case IR_LT: case IR_LE: case IR_GT: case IR_GE: return 7;
	case IR_EQ: case IR_NE: return 6;
	case IR_BITAND: return 5;
	case IR_BITXOR: return 4;
	case IR_BITOR: return 3;
	case IR_AND: return 2;
	case IR_OR: return 1;
	case IR_NEG: case IR_NOT: case IR_BITNOT: return P_UNARY;
	case IR_INT: return e->ival < 0 && !ir_is_uint(e->type) ? P_UNARY : P_ATOM;
	case IR_FLOAT: return signbit(e->fval) ? P_UNARY : P_ATOM;
	default: return P_ATOM;
	}
}

static const char *
infix(IrExprKind k)
{
	switch (k) {
	case IR_MUL: return "*";
	case IR_DIV: return "/";
	case IR_MOD: return "%";
	case IR_ADD: return " + ";
	case IR_SUB: return " - ";
	case IR_SHL: return " << ";
	case IR_SHR: return " >> ";
	case IR_LT: return " < ";
	case IR_LE: return " <= ";
	case IR_GT: return " > ";
	case IR_GE: return " >= ";
	case IR_EQ: return " == ";
	case IR_NE: return " != ";
	case IR_BITAND: return " & ";
	case IR_BITXOR: return " ^ ";
	case IR_BITOR: return " | ";
	case IR_AND: return " && ";
	case IR_OR: return " || ";
	default: return NULL;
	}
}

static void pexpr(FILE *fp, IrExpr *e, int need);

static void
print_float(FILE *fp, IrExpr *e)
{
	double v = e->fval;
	ScalarType t = e->type.code;
	if (!isfinite(v)) {
		fprintf(fp, "%s(%s)", ir_type_str(e->type),
		    isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	/* The shortest decimal that reads back as the same value. */
	char buf[64];
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		double r = strtod(buf, NULL);
		if (t == TY_F64 ? r == v : (float)r == (float)v)
			break;
	}
	bool plain = !strpbrk(buf, ".en");
	if (t == TY_F32)
		fprintf(fp, "%sf", buf);
	else if (t == TY_F64)
		fprintf(fp, "%s%s", buf, plain ? ".0" : "");
	else
		fprintf(fp, "%s(%s)", ir_type_str(e->type), buf);
}

static void
print_args(FILE *fp, IrExpr **v, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", fp);
		pexpr(fp, v[i], 0);
	}
}

/* buf[i, j] or buf[i if pred] */
static void
print_access(FILE *fp, Buffer *b, IrExpr **idx, int n, IrExpr *pred)
{
	fprintf(fp, "%s[", b->name);
	print_args(fp, idx, n);
	if (pred) {
		fputs(" if ", fp);
		pexpr(fp, pred, 0);
	}
	fputc(']', fp);
}

static void
pexpr(FILE *fp, IrExpr *e, int need)
{
	if (!e) {
		fputs("<null>", fp);
		return;
	}
	int p = prec(e);
	bool paren = p < need;
	if (paren)
		fputc('(', fp);
	const char *op = infix(e->kind);
	if (op) {
		pexpr(fp, e->a, p);
		fputs(op, fp);
		pexpr(fp, e->b, p + 1);
	} else switch (e->kind) {
	case IR_INT:
		if (ir_is_bool(e->type))
			fputs(e->ival ? "true" : "false", fp);
		else if (e->type.code == TY_U64)
			fprintf(fp, "%llu", (unsigned long long)e->ival);
		else
			fprintf(fp, "%lld", (long long)e->ival);
		break;
	case IR_FLOAT:
		print_float(fp, e);
		break;
	case IR_VAR:
		fputs(e->var->name, fp);
		break;
	case IR_NEG: case IR_NOT: case IR_BITNOT:
		fputc(e->kind == IR_NEG ? '-' : e->kind == IR_NOT ? '!' : '~', fp);
		pexpr(fp, e->a, P_UNARY + 1);
		break;
	case IR_MIN: case IR_MAX:
		fprintf(fp, "%s(", e->kind == IR_MIN ? "min" : "max");
		pexpr(fp, e->a, 0);
		fputs(", ", fp);
		pexpr(fp, e->b, 0);
		fputc(')', fp);
		break;
	case IR_SELECT:
		fputs("select(", fp);
		pexpr(fp, e->a, 0);
		fputs(", ", fp);
		pexpr(fp, e->b, 0);
		fputs(", ", fp);
		pexpr(fp, e->c, 0);
		fputc(')', fp);
		break;
	case IR_CAST:
		fprintf(fp, "%s(", ir_type_str(e->type));
		pexpr(fp, e->a, 0);
		fputc(')', fp);
		break;
	case IR_LOAD:
		print_access(fp, e->load.buf, e->load.idx, e->load.nidx, e->a);
		break;
	case IR_RAMP:
		fputs("ramp(", fp);
		pexpr(fp, e->a, 0);
		fputs(", ", fp);
		pexpr(fp, e->b, 0);
		fprintf(fp, ", %d)", e->type.lanes);
		break;
	case IR_BROADCAST:
		fprintf(fp, "x%d(", e->type.lanes);
		pexpr(fp, e->a, 0);
		fputc(')', fp);
		break;
	case IR_CALL:
		fprintf(fp, "%s(", e->call.name);
		print_args(fp, e->call.args, e->call.nargs);
		fputc(')', fp);
		break;
	case IR_LET:
		fprintf(fp, "let %s = ", e->var->name);
		pexpr(fp, e->a, 0);
		fputs(" in ", fp);
		pexpr(fp, e->b, 0);
		break;
	default:
		fprintf(fp, "<%s>", ir_expr_names[e->kind]);
		break;
	}
	if (paren)
		fputc(')', fp);
}

void
ir_print_expr(FILE *fp, IrExpr *e)
{
	pexpr(fp, e, 0);
}

char *
ir_expr_str(IrExpr *e)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (!fp)
		diag_fatal("out of memory");
	pexpr(fp, e, 0);
	fclose(fp);
	if (!ir_arena)
		ir_arena = arena_new();
	char *s = arena_strndup(ir_arena, text, len);
	free(text);
	return s;
}

/* ---- statements --------------------------------------------------------- */

static void
pad(FILE *fp, int indent)
{
	for (int i = 0; i < indent; i++)
		fputs("  ", fp);
}

static void
close_brace(FILE *fp, int indent)
{
	pad(fp, indent);
	fputs("}\n", fp);
}

void
ir_print_stmt(FILE *fp, IrStmt *s, int indent)
{
	if (!s)
		return;
	if (s->kind == IS_BLOCK) {
		for (int i = 0; i < s->block.n; i++)
			ir_print_stmt(fp, s->block.stmts[i], indent);
		return;
	}
	pad(fp, indent);
	switch (s->kind) {
	case IS_FOR:
		fputs(ir_for_kind_name(s->loop.fk), fp);
		if (s->loop.fk == FOR_GPU_BLOCK || s->loop.fk == FOR_GPU_THREAD)
			fprintf(fp, ".%c", "xyz"[s->loop.gpu_dim % 3]);
		fprintf(fp, " (%s, ", s->loop.var->name);
		pexpr(fp, s->loop.min, 0);
		fputs(", ", fp);
		pexpr(fp, s->loop.extent, 0);
		/* partition(axis): the partition pass splits it at its selects */
		fputs(s->loop.partition ? ") {    // partition\n" : ") {\n", fp);
		ir_print_stmt(fp, s->loop.body, indent + 1);
		close_brace(fp, indent);
		break;
	case IS_LET:
		fprintf(fp, "let %s = ", s->let.var->name);
		pexpr(fp, s->let.value, 0);
		fputc('\n', fp);
		ir_print_stmt(fp, s->let.body, indent);
		break;
	case IS_STORE:
		print_access(fp, s->store.buf, s->store.idx, s->store.nidx,
		    s->store.pred);
		fputs(" = ", fp);
		pexpr(fp, s->store.value, 0);
		fputc('\n', fp);
		break;
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		fprintf(fp, "allocate %s[%s", b->name, ir_type_str(ir_scalar(b->elem)));
		for (int d = 0; d < b->ndims; d++) {
			fputs(" * ", fp);
			pexpr(fp, b->extent[d], 10);
		}
		fprintf(fp, "] in %s", ir_scope_name(b->scope));
		if (b->swizzle_row)   /* rows of this many elements, pieces permuted */
			fprintf(fp, " swizzled(%lld)", (long long)b->swizzle_row);
		fputs(" {\n", fp);
		ir_print_stmt(fp, s->alloc.body, indent + 1);
		close_brace(fp, indent);
		break;
	}
	case IS_IF:
		fputs("if (", fp);
		pexpr(fp, s->ifs.cond, 0);
		fputs(") {\n", fp);
		ir_print_stmt(fp, s->ifs.then_s, indent + 1);
		if (s->ifs.else_s) {
			pad(fp, indent);
			fputs("} else {\n", fp);
			ir_print_stmt(fp, s->ifs.else_s, indent + 1);
		}
		close_brace(fp, indent);
		break;
	case IS_EVALUATE:
		pexpr(fp, s->eval.value, 0);
		fputc('\n', fp);
		break;
	case IS_ASSERT:
		fputs("assert(", fp);
		pexpr(fp, s->assrt.cond, 0);
		fprintf(fp, ", %d, \"", s->assrt.code);
		for (const char *c = s->assrt.msg; *c; c++)
			if (*c == '"' || *c == '\\')
				fprintf(fp, "\\%c", *c);
			else if (*c == '\n')
				fputs("\\n", fp);
			else
				fputc(*c, fp);
		fputs("\")\n", fp);
		break;
	case IS_PRODUCE:
		fprintf(fp, "%s%s %s {\n", s->produce.async ? "async " : "",
		    s->produce.prefetch ? "prefetch" : s->produce.update ? "update" : "produce",
		    s->produce.name);
		ir_print_stmt(fp, s->produce.body, indent + 1);
		close_brace(fp, indent);
		break;
	default:
		fprintf(fp, "<%s>\n", ir_stmt_names[s->kind]);
		break;
	}
}

void
ir_print_func(FILE *fp, IrFunc *f)
{
	fprintf(fp, "func %s(", f->name);
	bool first = true;
	for (int i = 0; i < f->nparams; i++, first = false)
		fprintf(fp, "%s%s", first ? "" : ", ", f->params[i]->name);
	for (int i = 0; i < f->nargs; i++, first = false)
		fprintf(fp, "%s%s", first ? "" : ", ", f->args[i]->name);
	fputs(") {\n", fp);
	ir_print_stmt(fp, f->body, 1);
	fputs("}\n", fp);
}
