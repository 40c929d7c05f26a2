/* ir_test.c: unit tests of the IR: constructors and their checks, the
 * default mutator's sharing, substitution and the printer's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/ir.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_STR(e, want) do { const char *got_ = ir_expr_str(e); \
	if (strcmp(got_, want) != 0) { failures++; fprintf(stderr, \
	"%s:%d: got '%s', want '%s'\n", __FILE__, __LINE__, got_, want); } } while (0)

/* Runs f and says whether it raised an internal error. */
static bool
raises_ice(void (*f)(void))
{
	jmp_buf jb, *saved = diag_catch;
	FILE *null = fopen("/dev/null", "w");
	diag_set_stream(null);
	diag_catch = &jb;
	bool raised = true;
	if (setjmp(jb) == 0) {
		f();
		raised = false;
	}
	diag_catch = saved;
	diag_set_stream(stderr);
	fclose(null);
	return raised;
}

static Var *x, *y, *z;
static Buffer *A, *C;

static void bad_add(void) { ir_add(ir_var(x), ir_float(ir_f32, 1)); }
static void bad_select(void) { ir_select(ir_var(x), ir_var(x), ir_var(y)); }
static void bad_load(void) { IrExpr *i = ir_var(x); ir_load(A, &i, 1, NULL, 1); }
static void bad_store(void)
{
	IrExpr *i[2] = {ir_var(x), ir_var(y)};
	ir_store(C, i, 2, ir_var(x), NULL);
}
static void bad_for(void) { ir_for(x, ir_int(ir_i32, 0), ir_i64c(4), FOR_SERIAL, NULL); }
static void bad_ramp(void) { ir_ramp(ir_var(x), ir_int(ir_i32, 1), 4); }

static void
test_constructors(void)
{
	IrExpr *e = ir_add(ir_var(x), ir_i64c(1));
	CHECK(e->kind == IR_ADD && ir_type_eq(e->type, ir_i64));
	IrExpr *c = ir_binop(IR_LT, ir_var(x), ir_var(y));
	CHECK(ir_type_eq(c->type, ir_bool));
	CHECK(ir_int(ir_scalar(TY_U8), 257)->ival == 1);
	CHECK(ir_int(ir_scalar(TY_I8), 200)->ival == -56);
	IrExpr *r = ir_ramp(ir_var(x), ir_i64c(1), 8);
	CHECK(ir_type_eq(r->type, ir_type(TY_I64, 8)));
	CHECK(ir_broadcast(ir_var(x), 1)->kind == IR_VAR);
	CHECK(ir_make_const(ir_type(TY_F32, 4), 2)->kind == IR_BROADCAST);
	int64_t v;
	CHECK(ir_is_const(ir_i64c(-7), &v) && v == -7);
	CHECK(!ir_is_const(ir_var(x), &v));
	CHECK(ir_expr_equal(ir_add(ir_var(x), ir_i64c(1)), e));
	CHECK(!ir_expr_equal(ir_add(ir_var(y), ir_i64c(1)), e));
	CHECK(!ir_expr_equal(ir_add(ir_var(x), ir_i64c(2)), e));
	CHECK(raises_ice(bad_add));
	CHECK(raises_ice(bad_select));
	CHECK(raises_ice(bad_load));
	CHECK(raises_ice(bad_store));
	CHECK(raises_ice(bad_for));
	CHECK(raises_ice(bad_ramp));
	/* ir_block flattens and drops NULLs */
	IrStmt *s1 = ir_evaluate(ir_var(x)), *s2 = ir_evaluate(ir_var(y));
	IrStmt *in[3] = {s1, NULL, ir_seq(s2, s1)};
	IrStmt *b = ir_block(in, 3);
	CHECK(b->kind == IS_BLOCK && b->block.n == 3);
	CHECK(ir_seq(NULL, s1) == s1);
	CHECK(ir_seq(NULL, NULL) == NULL);
}

/* A mutator that changes nothing, and one that renames y to z. */
static IrExpr *
y_to_z(IrMutator *m, IrExpr *e)
{
	return e->var == y ? ir_var(z) : e;
}

static void
test_mutator(void)
{
	IrExpr *i[2] = {ir_add(ir_var(x), ir_i64c(1)), ir_var(z)};
	IrExpr *j[2] = {ir_mul(ir_var(y), ir_i64c(2)), ir_var(x)};
	IrStmt *st = ir_store(C, i, 2, ir_load(A, j, 2, NULL, 1), NULL);
	IrStmt *loop = ir_for(y, ir_i64c(0), ir_i64c(8), FOR_SERIAL,
	    ir_seq(st, ir_evaluate(ir_var(x))));
	IrMutator id = {0};
	CHECK(ir_mutate_stmt(&id, loop) == loop);
	IrMutator ren = {.expr = {[IR_VAR] = y_to_z}};
	IrStmt *out = ir_mutate_stmt(&ren, loop);
	CHECK(out != loop);
	IrStmt *st2 = out->loop.body->block.stmts[0];
	CHECK(st2 != st);
	CHECK(st2->store.idx[0] == st->store.idx[0]);      /* shared */
	CHECK(out->loop.body->block.stmts[1] == loop->loop.body->block.stmts[1]);
	CHECK(ir_stmt_uses_var(loop, y) && !ir_stmt_uses_var(out, y));

	IrExpr *e = ir_add(ir_mul(ir_var(x), ir_i64c(8)), ir_var(y));
	IrExpr *s = ir_substitute(e, y, ir_i64c(3));
	CHECK_STR(s, "x*8 + 3");
	CHECK(s->a == e->a);
	CHECK(ir_substitute(e, z, ir_i64c(3)) == e);
	CHECK(ir_uses_var(e, x) && !ir_uses_var(e, z));
}

static void
test_printer(void)
{
	IrExpr *X = ir_var(x), *Y = ir_var(y);
	CHECK_STR(ir_add(ir_mul(X, ir_i64c(8)), Y), "x*8 + y");
	CHECK_STR(ir_mul(ir_add(X, ir_i64c(8)), Y), "(x + 8)*y");
	CHECK_STR(ir_sub(X, ir_sub(Y, ir_i64c(1))), "x - (y - 1)");
	CHECK_STR(ir_sub(ir_sub(X, Y), ir_i64c(1)), "x - y - 1");
	CHECK_STR(ir_div(ir_add(X, ir_i64c(7)), ir_i64c(8)), "(x + 7)/8");
	CHECK_STR(ir_mod(X, ir_i64c(8)), "x%8");
	CHECK_STR(ir_mul(X, ir_i64c(-3)), "x*-3");
	CHECK_STR(ir_min(X, ir_max(Y, ir_i64c(0))), "min(x, max(y, 0))");
	CHECK_STR(ir_unop(IR_NEG, ir_add(X, Y)), "-(x + y)");
	IrExpr *lt = ir_binop(IR_LT, X, Y), *ge = ir_binop(IR_GE, X, ir_i64c(1));
	CHECK_STR(ir_binop(IR_OR, ir_binop(IR_AND, lt, ge), lt),
	    "x < y && x >= 1 || x < y");
	CHECK_STR(ir_binop(IR_AND, lt, ir_binop(IR_OR, ge, lt)),
	    "x < y && (x >= 1 || x < y)");
	CHECK_STR(ir_unop(IR_NOT, lt), "!(x < y)");
	CHECK_STR(ir_float(ir_f32, 0), "0f");
	CHECK_STR(ir_float(ir_f32, 1.5), "1.5f");
	CHECK_STR(ir_float(ir_f32, 0.1), "0.1f");
	CHECK_STR(ir_float(ir_f64, 1.5), "1.5");
	CHECK_STR(ir_float(ir_f64, 2), "2.0");
	CHECK_STR(ir_bool_const(true), "true");
	CHECK_STR(ir_cast(ir_f32, X), "f32(x)");
	IrExpr *ramp = ir_ramp(X, ir_i64c(1), 8);
	CHECK_STR(ramp, "ramp(x, 1, 8)");
	CHECK_STR(ir_broadcast(ir_float(ir_f32, 0), 4), "x4(0f)");
	IrExpr *idx[2] = {X, ir_add(Y, ir_i64c(1))};
	CHECK_STR(ir_load(A, idx, 2, NULL, 1), "A[x, y + 1]");
	IrExpr *sel = ir_select(lt, ir_load(A, idx, 2, NULL, 1),
	    ir_float(ir_f32, 0));
	CHECK_STR(sel, "select(x < y, A[x, y + 1], 0f)");
	IrExpr *arg = ir_cast(ir_f32, X);
	CHECK_STR(ir_call_builtin(BI_EXP, ir_f32, &arg, 1), "exp(f32(x))");

	/* a whole nest */
	Var *i = ir_new_var("i", ir_i64), *j = ir_new_var("ji", ir_i64);
	Buffer *L = ir_new_buffer("C_local", TY_F32, 2);
	L->extent[0] = ir_i64c(8);
	L->extent[1] = ir_i64c(32);
	L->scope = SCOPE_LOCAL;
	IrExpr *ij[2] = {ir_var(i), ir_var(j)};
	IrStmt *st = ir_store(L, ij, 2, ir_float(ir_f32, 0), NULL);
	IrStmt *s = ir_for(j, ir_i64c(0), ir_i64c(8), FOR_VECTORIZED, st);
	s = ir_for(i, ir_i64c(0), ir_var(x), FOR_PARALLEL, s);
	s = ir_produce("C", false, ir_allocate(L, s));
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	ir_print_stmt(fp, s, 0);
	fclose(fp);
	const char *want =
	    "produce C {\n"
	    "  allocate C_local[f32 * 8 * 32] in local {\n"
	    "    parallel (i, 0, x) {\n"
	    "      vectorized (ji, 0, 8) {\n"
	    "        C_local[i, ji] = 0f\n"
	    "      }\n"
	    "    }\n"
	    "  }\n"
	    "}\n";
	if (strcmp(text, want) != 0) {
		failures++;
		fprintf(stderr, "nest printed as:\n%s", text);
	}
	free(text);
}

int
main(void)
{
	x = ir_new_var("x", ir_i64);
	y = ir_new_var("y", ir_i64);
	z = ir_new_var("z", ir_i64);
	A = ir_new_buffer("A", TY_F32, 2);
	C = ir_new_buffer("C", TY_F32, 2);
	test_constructors();
	test_mutator();
	test_printer();
	if (failures)
		fprintf(stderr, "ir_test: %d failures\n", failures);
	return failures != 0;
}
