/* parser_test.c: the lemon grammar, the AST it builds and the printers.
 *
 * Expressions are compared as fully parenthesised s-expressions, so that a
 * precedence mistake shows up directly; then ranges, declarations, every
 * kind of schedule argument, source ranges, error recovery, the nesting
 * limit, and --format's round trip (format(parse(format(x))) == format(x)
 * and the same dump once locations are stripped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
	__FILE__, __LINE__, #c); failures++; } } while (0)

static char *diag_buf;
static size_t diag_len;
static FILE *diag_fp;

static const char *
diag_text(void)
{
	fflush(diag_fp);
	return diag_buf ? diag_buf : "";
}

static Program *
parse(const char *src)
{
	if (diag_fp)
		fclose(diag_fp);
	free(diag_buf);
	diag_buf = NULL;
	diag_fp = open_memstream(&diag_buf, &diag_len);
	diag_set_stream(diag_fp);
	diag_set_color(0);
	diag_set_max_errors(0);
	diag_reset();
	return parse_program(source_add("t.tx", src, strlen(src)));
}

static bool has(const char *msg) { return strstr(diag_text(), msg) != NULL; }

/* ---- s-expressions ---------------------------------------------------- */
static void
sx(FILE *fp, Expr *e)
{
	switch (e->kind) {
	case EXPR_INT: fprintf(fp, "%lld", (long long)e->ival); break;
	case EXPR_FLOAT: fprintf(fp, "%g", e->fval); break;
	case EXPR_BOOL: fputs(e->ival ? "true" : "false", fp); break;
	case EXPR_NAME: fputs(e->id.name, fp); break;
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST:
		fprintf(fp, "(%s%s", e->kind == EXPR_ACCESS ? "[]" : e->kind == EXPR_CAST ? "cast " : "",
		    e->call.name);
		for (int i = 0; i < e->call.nargs; i++) {
			fputc(' ', fp);
			sx(fp, e->call.args[i]);
		}
		fputc(')', fp);
		break;
	case EXPR_SELECT:
		fputs("(?", fp);
		for (int i = 0; i < 3; i++) {
			fputc(' ', fp);
			sx(fp, e->call.args[i]);
		}
		fputc(')', fp);
		break;
	case EXPR_UNARY:
		fprintf(fp, "(%s ", op_spelling(e->bin.op));
		sx(fp, e->bin.a);
		fputc(')', fp);
		break;
	case EXPR_BINARY:
		fprintf(fp, "(%s ", op_spelling(e->bin.op));
		sx(fp, e->bin.a);
		fputc(' ', fp);
		sx(fp, e->bin.b);
		fputc(')', fp);
		break;
	case EXPR_REDUCE:
		fprintf(fp, "(%s", reduce_spelling(e->reduce.op));
		for (int i = 0; i < e->reduce.naxes; i++) {
			RedAxis *ax = &e->reduce.axes[i];
			fprintf(fp, " (%s ", ax->name);
			if (ax->lo) {
				sx(fp, ax->lo);
				fputc(' ', fp);
			}
			sx(fp, ax->hi);
			fputc(')', fp);
		}
		if (e->reduce.where) {
			fputs(" (where ", fp);
			sx(fp, e->reduce.where);
			fputc(')', fp);
		}
		fputc(' ', fp);
		sx(fp, e->reduce.body);
		fputc(')', fp);
		break;
	}
}

/* Parses `s = EXPR;` in a kernel and gives the value as an s-expression. */
static const char *
expr_sx(const char *expr)
{
	static char out[1024];
	char src[1024];
	snprintf(src, sizeof src, "kernel k() { s = %s; }", expr);
	Program *p = parse(src);
	if (p->nkernels != 1 || p->kernels[0]->nitems != 1 || !p->kernels[0]->items[0].rule)
		return "<no rule>";
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	sx(fp, p->kernels[0]->items[0].rule->value);
	fclose(fp);
	snprintf(out, sizeof out, "%s", buf);
	free(buf);
	return out;
}

#define SX(src, want) do { const char *got_ = expr_sx(src); \
	if (strcmp(got_, want) != 0 || diag_errors()) { fprintf(stderr, \
	"%s:%d: %s\n  gives %s\n  want  %s\n%s", __FILE__, __LINE__, src, got_, want, \
	diag_text()); failures++; } } while (0)

static void
test_precedence(void)
{
	SX("a + b * c", "(+ a (* b c))");
	SX("a * b + c", "(+ (* a b) c)");
	SX("a - b - c", "(- (- a b) c)");
	SX("a / b % c", "(% (/ a b) c)");
	SX("a < b == c", "(== (< a b) c)");
	SX("a == b < c", "(== a (< b c))");
	SX("a || b && c", "(|| a (&& b c))");
	SX("a | b ^ c & d", "(| a (^ b (& c d)))");
	SX("a << 1 + 2", "(<< a (+ 1 2))");
	SX("a & b == c", "(& a (== b c))");
	SX("-a * b", "(* (- a) b)");
	SX("!a && ~b", "(&& (! a) (~ b))");
	SX("- -a", "(- (- a))");
	SX("a ? b : c ? d : e", "(? a b (? c d e))");
	SX("a ? b ? c : d : e", "(? a (? b c d) e)");
	SX("a || b ? c + 1 : d", "(? (|| a b) (+ c 1) d)");
	SX("(a + b) * c", "(* (+ a b) c)");
	SX("f32(x) + max(a, b) * A[i, j + 1]", "(+ (cast f32 x) (* (max a b) ([]A i (+ j 1))))");
	SX("true != false", "(!= true false)");
	SX("1.5 + 2", "(+ 1.5 2)");
	SX("s[] + f()", "(+ ([]s) (f))");
}

static void
test_reductions(void)
{
	/* The body extends as far right as it can. */
	SX("sum(k < K) a * b + c", "(sum (k K) (+ (* a b) c))");
	SX("sum(k < K) c ? a : b", "(sum (k K) (? c a b))");
	SX("x + sum(k < K) a + b", "(+ x (sum (k K) (+ a b)))");
	SX("c ? sum(k < K) a : b", "(? c (sum (k K) a) b)");
	SX("(sum(k < K) a) + b", "(+ (sum (k K) a) b)");
	SX("maximum(1 <= r < R - 1, k < 3) A[r, k]", "(maximum (r 1 (- R 1)) (k 3) ([]A r k))");
	SX("minimum(k < N) prod(j < 2) x", "(minimum (k N) (prod (j 2) x))");
	SX("sum(0 <= k < K + 1) a", "(sum (k 0 (+ K 1)) a)");
	/* inclusive bounds become exclusive ones; pure axes in bounds; where */
	SX("sum(k <= i) a", "(sum (k (+ i 1)) a)");
	SX("sum(i - R <= k <= i + R) a", "(sum (k (- i R) (+ (+ i R) 1)) a)");
	SX("sum(k < N where k % 2 == 0) a * b", "(sum (k N) (where (== (% k 2) 0)) (* a b))");
	SX("maximum(j < N, k <= j where j != k) x", "(maximum (j N) (k (+ j 1)) (where (!= j k)) x)");

	Program *p = parse("kernel k() { s = sum(k > 3) a; t = sum(2 < k) b; u = sum(k < 1, (x + 1) < 2) c; }");
	CHECK(diag_errors() == 3);
	CHECK(has("t.tx:1:22: error: a reduction range must be 'k < N', 'k <= N', 'lo <= k < hi' or 'lo <= k <= hi'"));
	CHECK(p->nkernels == 1 && p->kernels[0]->nitems == 3);
	/* A reduction whose ranges were all wrong leaves its body. */
	CHECK(p->kernels[0]->items[0].rule->value->kind == EXPR_NAME);
	Expr *u = p->kernels[0]->items[2].rule->value;
	CHECK(u->kind == EXPR_REDUCE && u->reduce.naxes == 1);
}

static void
test_kernel(void)
{
	Program *p = parse(
	    "import \"lib/x.tx\";\n"
	    "kernel k(M, N, alpha: f32, flag: bool) {\n"
	    "  in A: f32[M, N];\n"
	    "  out C: f64[M];\n"
	    "  out s: i32;\n"
	    "  t: u8[];\n"
	    "  tmp[i] = A[i, 0];\n"
	    "  C[i] = f64(tmp[i]) * f64(alpha);\n"
	    "  s = 1;\n"
	    "}\n");
	CHECK(diag_errors() == 0);
	CHECK(p->nimports == 1 && strcmp(p->imports[0]->path, "lib/x.tx") == 0);
	CHECK(p->nitems == 2 && p->items[0].import && p->items[1].kernel);
	Kernel *k = p->kernels[0];
	CHECK(k->name == intern_cstr("k") && k->nparams == 4 && k->nitems == 7);
	CHECK(k->params[0].is_size && k->params[0].type == TY_I64 && k->params[1].index == 1);
	CHECK(!k->params[2].is_size && k->params[2].type == TY_F32 && k->params[3].type == TY_BOOL);
	Tensor *a = k->items[0].decl;
	CHECK(a && a->role == ROLE_IN && a->elem == TY_F32 && a->ndims == 2 && a->declared);
	CHECK(a->shape[1]->kind == EXPR_NAME && a->shape[1]->id.name == intern_cstr("N"));
	CHECK(k->items[1].decl->role == ROLE_OUT && k->items[1].decl->elem == TY_F64);
	CHECK(k->items[2].decl->ndims == 0 && k->items[3].decl->ndims == 0);
	CHECK(k->items[3].decl->role == ROLE_TEMP);
	Rule *r = k->items[4].rule;
	CHECK(r && r->name == intern_cstr("tmp") && r->naxes == 1 && r->axes[0] == intern_cstr("i"));
	CHECK(k->items[6].rule->naxes == 0);
	CHECK(ast_find_kernel(p, intern_cstr("k")) == k);
	CHECK(ast_find_tensor(k, intern_cstr("C")) == k->items[1].decl);

	/* Source ranges: the whole construct, parentheses included. */
	p = parse("kernel k() {\n  C[i] = (a + b) * c;\n}");
	k = p->kernels[0];
	r = k->items[0].rule;
	CHECK(k->loc.begin == 0 && k->loc.end == 36);
	CHECK(r->loc.begin == 15 && r->loc.end == 34);      /* C to ; */
	CHECK(r->name_loc.begin == 15 && r->name_loc.end == 16);
	CHECK(r->axis_locs[0].begin == 17);
	Expr *e = r->value;
	CHECK(e->loc.begin == 22 && e->loc.end == 33);      /* (a + b) * c */
	CHECK(e->bin.op_loc.begin == 30);
	CHECK(e->bin.a->loc.begin == 22 && e->bin.a->loc.end == 29);

	/* Left-hand side indices must be names. */
	p = parse("kernel k() { C[i + 1, j] = 0; }");
	CHECK(diag_errors() == 1 && has("t.tx:1:16: error: an index on the left of '=' must be an axis name"));
	CHECK(p->kernels[0]->items[0].rule->naxes == 1);
}

static void
test_schedule(void)
{
	Program *p = parse(
	    "schedule k as fast for cuda {\n"
	    "  C.split(i, 8, tail = exact) -> (io, ii);\n"
	    "  C.bind(io, blockIdx.x);\n"
	    "  C.cache_read(shared, [A, B]) -> As;\n"
	    "  C.pragma(i, \"unroll\");\n"
	    "  C.prefetch(A, i, -2, 0.5, -1.5, []);\n"
	    "  C.compute_root();\n"
	    "}\n"
	    "schedule k for cpu { }\n");
	CHECK(diag_errors() == 0);
	CHECK(p->nschedules == 2);
	Schedule *s = p->schedules[0];
	CHECK(s->kernel == intern_cstr("k") && s->name == intern_cstr("fast") && s->target == intern_cstr("cuda"));
	CHECK(p->schedules[1]->name == NULL && p->schedules[1]->nprims == 0);
	CHECK(s->nprims == 6);
	SchedPrim *sp = &s->prims[0];
	CHECK(sp->stage == intern_cstr("C") && sp->prim == intern_cstr("split") && sp->nargs == 3);
	CHECK(sp->args[0].kind == ARG_NAME && sp->args[1].kind == ARG_INT && sp->args[1].ival == 8);
	CHECK(sp->args[2].key == intern_cstr("tail") && sp->args[2].kind == ARG_NAME);
	CHECK(sp->args[2].str == intern_cstr("exact"));
	CHECK(sp->nouts == 2 && sp->outs[1] == intern_cstr("ii") && sp->out_locs[1].begin == 68);
	sp = &s->prims[1];
	CHECK(sp->args[1].kind == ARG_DOTTED && sp->args[1].str == intern_cstr("blockIdx"));
	CHECK(sp->args[1].str2 == intern_cstr("x"));
	sp = &s->prims[2];
	CHECK(sp->args[1].kind == ARG_LIST && sp->args[1].nlist == 2 && sp->args[1].list[1].str == intern_cstr("B"));
	CHECK(sp->nouts == 1 && sp->outs[0] == intern_cstr("As"));
	sp = &s->prims[3];
	CHECK(sp->args[1].kind == ARG_STRING && strcmp(sp->args[1].str, "unroll") == 0);
	sp = &s->prims[4];
	CHECK(sp->args[2].kind == ARG_INT && sp->args[2].ival == -2);
	CHECK(sp->args[3].kind == ARG_FLOAT && sp->args[3].fval == 0.5);
	CHECK(sp->args[4].kind == ARG_FLOAT && sp->args[4].fval == -1.5);
	CHECK(sp->args[5].kind == ARG_LIST && sp->args[5].nlist == 0);
	CHECK(s->prims[5].nargs == 0 && s->prims[5].nouts == 0);

	/* specialize (cond) { prims }: one statement holding its body */
	p = parse("schedule k for cpu {\n"
	    "  C.split(i, 8) -> (io, ii);\n"
	    "  specialize (M == 1 && N > 2) { C.vectorize(ii); C.parallel(io); }\n"
	    "  specialize (true) { }\n"
	    "  C.unroll(ii);\n"
	    "}\n");
	CHECK(diag_errors() == 0);
	s = p->schedules[0];
	CHECK(s->nprims == 4);
	sp = &s->prims[1];
	CHECK(sp->prim == intern_cstr("specialize") && sp->stage == NULL && sp->nbody == 2);
	CHECK(sp->cond && sp->cond->kind == EXPR_BINARY && sp->cond->bin.op == OP_AND);
	CHECK(sp->body[1].prim == intern_cstr("parallel") && sp->body[1].stage == intern_cstr("C"));
	CHECK(s->prims[2].cond && s->prims[2].cond->kind == EXPR_BOOL && s->prims[2].nbody == 0);
	CHECK(s->prims[3].cond == NULL && s->prims[3].prim == intern_cstr("unroll"));
	/* an error inside a body resynchronises at its '}' */
	p = parse("schedule k for cpu {\n"
	    "  specialize (M < 4) { C.split(i 4); }\n"
	    "  C.unroll(i);\n"
	    "}\n");
	CHECK(diag_errors() == 1);
	CHECK(p->nschedules == 1 && p->schedules[0]->nprims == 2);
}

static void
test_errors(void)
{
	/* Three syntax errors, three statements apart: three reports. */
	Program *p = parse(
	    "kernel k(M) {\n"
	    "  in A: f32[M];\n"
	    "  out C: f32[M];\n"
	    "  C[i] = A[i] + ;\n"
	    "  D[i] = A[i] A[i];\n"
	    "}\n"
	    "schedule k for cpu {\n"
	    "  C.split(i 4) -> (a, b);\n"
	    "  C.vectorize(b);\n"
	    "}\n");
	CHECK(diag_errors() == 3);
	CHECK(has("t.tx:4:17: error: unexpected ';'; expected an expression"));
	CHECK(has("t.tx:5:15: error: unexpected 'A'; expected ';'"));
	CHECK(has("t.tx:8:13: error: unexpected '4'"));
	/* What parsed is kept. */
	CHECK(p->nkernels == 1 && p->kernels[0]->nitems == 2);
	CHECK(p->nschedules == 1 && p->schedules[0]->nprims == 1);

	/* A missing ';' before '}', garbage between items, a bad header. */
	p = parse("kernel a() { x = 1 }\nthis is junk;\nkernel b(M N) { y = 2; }\nkernel c() { z = 3; }\n");
	CHECK(diag_errors() == 3);
	CHECK(has("t.tx:1:20: error: unexpected '}'; expected ';'"));
	CHECK(has("t.tx:2:1: error: unexpected 'this'; expected 'import', 'kernel', 'schedule', 'intrinsic' or 'layout'"));
	CHECK(has("t.tx:3:12: error: unexpected 'N'"));
	CHECK(p->nkernels == 2 && p->kernels[1]->name == intern_cstr("c"));

	p = parse("kernel k() { s = 1;");
	CHECK(diag_errors() == 1 && has("t.tx:1:20: error: unexpected end of file; expected"));

	p = parse("kernel k() { s = scan; }");
	CHECK(diag_errors() == 1 && has("t.tx:1:18: error: 'scan' is a reserved word"));

	p = parse("kernel k() { s = f32(1, 2) + i8(); }");
	CHECK(diag_errors() == 2 && has("a cast f32(...) takes exactly one value"));

	p = parse("");
	CHECK(diag_errors() == 0 && p->nitems == 0);

	p = parse("}}}; ;; kernel k() { s = 1; }");
	CHECK(diag_errors() == 1 && p->nkernels == 1);
}

static void
test_depth(void)
{
	enum { N = 30000 };
	char *src = malloc(N * 4 + 64);
	/* Parentheses: the parser's stack. */
	strcpy(src, "kernel k() { s = ");
	size_t n = strlen(src);
	for (int i = 0; i < N; i++)
		src[n++] = '(';
	src[n++] = 'x';
	for (int i = 0; i < N; i++)
		src[n++] = ')';
	strcpy(src + n, "; }");
	parse(src);
	CHECK(diag_errors() == 1 && has("nested too deeply"));

	/* A long left-leaning chain: the tree's height. */
	strcpy(src, "kernel k() { s = x");
	n = strlen(src);
	for (int i = 0; i < N; i++) {
		memcpy(src + n, "+1", 2);
		n += 2;
	}
	strcpy(src + n, "; t = 1; }");
	Program *p = parse(src);
	CHECK(diag_errors() == 1 && has("expression is nested too deeply (more than 1000 levels)"));
	CHECK(p->nkernels == 1 && p->kernels[0]->nitems == 2);

	/* Just under the limit is fine. */
	strcpy(src, "kernel k() { s = x");
	n = strlen(src);
	for (int i = 0; i < PARSE_MAX_DEPTH - 1; i++) {
		memcpy(src + n, "+1", 2);
		n += 2;
	}
	strcpy(src + n, "; }");
	parse(src);
	CHECK(diag_errors() == 0);
	free(src);
}

/* ---- printers ------------------------------------------------------------ */
static char *
print(Program *p, bool dump)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (dump)
		ast_dump(fp, p);
	else
		ast_format(fp, p);
	fclose(fp);
	if (!dump)
		return buf;
	/* Strip " @L:C-L:C" and the file name on the first line. */
	char *out = malloc(len + 1), *o = out;
	for (char *s = buf; *s; ) {
		char *at = strstr(s, " @");
		char *nl = strchr(s, '\n');
		if (at && nl && at < nl) {
			memcpy(o, s, (size_t)(at - s));
			o += at - s;
			s = nl;
		} else {
			*o++ = *s++;
		}
	}
	*o = 0;
	free(buf);
	return out;
}

static const char roundtrip_src[] =
    "import \"std/nn.tx\"; // a comment\n"
    "kernel conv_bias_relu(N, C, H, W, K, alpha: f32) {\n"
    "  in  data:   f32[N, C, H, W];\n"
    "  in  weight: f32[K, C, 3, 3];\n"
    "  in  bias:   f32[K];\n"
    "  out y:      f32[N, K, H, W];\n"
    "  padded: f32[N, C, H + 2, W + 2];\n"
    "  padded[n, c, h, w] = (h >= 1 && h <= H && w >= 1 && w <= W) ? data[n, c, h - 1, w - 1] : 0.0;\n"
    "  conv: f32[N, K, H, W];\n"
    "  conv[n, k, h, w] = sum(rc < C, ry < 3, rx < 3) padded[n, rc, h + ry, w + rx] * weight[k, rc, ry, rx];\n"
    "  y[n, k, h, w] = max(conv[n, k, h, w] + bias[k], 0.0) * alpha;\n"
    "  z = (a ? b : c) ? (sum(k < 2) k) + 1 : -(x - (y - z)) / (p * q) % 1e-7 << (1 << 2);\n"
    "  w = maximum(1 <= r < R, (a < b) <= k < (c < d)) (r < 2) < (k == 3) ? 1.5e300 : 0.1;\n"
    "}\n"
    "schedule conv_bias_relu as x for cuda {\n"
    "  y.split(w, 16, tail = shift_inward) -> (wo, wi);\n"
    "  y.bind(wo, blockIdx.x);\n"
    "  y.cache_read(shared, [conv, [a]]) -> (S);\n"
    "  y.pragma(wi, \"a\\\"b\\\\c\\n\\t\");\n"
    "  y.prefetch(data, wi, -3, 0.25, -2.5);\n"
    "}\n";

static void
test_format(void)
{
	Program *p = parse(roundtrip_src);
	CHECK(diag_errors() == 0);
	char *f1 = print(p, false), *d1 = print(p, true);
	Program *q = parse(f1);
	CHECK(diag_errors() == 0);
	char *f2 = print(q, false), *d2 = print(q, true);
	CHECK(strcmp(f1, f2) == 0);
	CHECK(strcmp(d1, d2) == 0);
	if (strcmp(f1, f2) || strcmp(d1, d2))
		fprintf(stderr, "--- first:\n%s\n--- second:\n%s\n", f1, f2);
	free(f1); free(f2); free(d1); free(d2);

	/* Minimal parentheses, and the ones that are needed. */
	struct { const char *in, *out; } cases[] = {
		{ "((a) + (b * c))", "a + b * c" },
		{ "(a + b) * c", "(a + b) * c" },
		{ "a - (b - c)", "a - (b - c)" },
		{ "(a - b) - c", "a - b - c" },
		{ "(sum(k < K) a) + b", "(sum(k < K) a) + b" },
		{ "b + (sum(k < K) a)", "b + (sum(k < K) a)" },
		{ "sum(k < K) (a + b)", "sum(k < K) a + b" },
		{ "(a ? b : c) ? d : e", "(a ? b : c) ? d : e" },
		{ "a ? b : (c ? d : e)", "a ? b : c ? d : e" },
		{ "a ? b ? c : d : e", "a ? (b ? c : d) : e" },
		{ "-(a + b)", "-(a + b)" },
		{ "-(-a)", "--a" },
		{ "1.0 + 0.1 + 1e300 + 2.5e-8", "1.0 + 0.1 + 1e+300 + 2.5e-08" },
		{ "sum((a + 1) <= k < n + 1) x", "sum(a + 1 <= k < n + 1) x" },
		{ "sum(k < (a < b)) x", "sum(k < (a < b)) x" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char src[256];
		snprintf(src, sizeof src, "kernel k() { s = %s; }", cases[i].in);
		p = parse(src);
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		ast_format_expr(fp, p->kernels[0]->items[0].rule->value);
		fclose(fp);
		if (strcmp(buf, cases[i].out) != 0 || diag_errors()) {
			fprintf(stderr, "format %s\n  gives %s\n  want  %s\n", cases[i].in, buf, cases[i].out);
			failures++;
		}
		free(buf);
	}
}

int
main(void)
{
	test_precedence();
	test_reductions();
	test_kernel();
	test_schedule();
	test_errors();
	test_depth();
	test_format();
	if (failures) {
		fprintf(stderr, "parser_test: %d failure%s\nlast diagnostics:\n%s", failures,
		    failures == 1 ? "" : "s", diag_text());
		return 1;
	}
	puts("parser_test: ok");
	return 0;
}
