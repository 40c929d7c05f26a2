/* vectorize_test.c: unit tests of vectorize.c, unroll.c and hoist.c,
 * checked on the printed loop nests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/ir.h"

static int failures;

static char *
str(IrStmt *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	ir_print_stmt(fp, s, 0);
	fclose(fp);
	return text;
}

static void
check_nest(int line, IrStmt *s, const char *want)
{
	char *got = str(s);
	if (strcmp(got, want) != 0) {
		failures++;
		fprintf(stderr, "%s:%d: got:\n%s--- want:\n%s", __FILE__, line, got, want);
	}
	free(got);
}
#define CHECK_NEST(s, want) check_nest(__LINE__, s, want)

static IrExpr *c(int64_t v) { return ir_i64c(v); }

static Var *i, *j, *N;
static Buffer *A, *B, *C;

static IrStmt *
loop(Var *v, int64_t n, ForKind fk, IrStmt *body)
{
	return ir_for(v, c(0), c(n), fk, body);
}

static void
test_vectorize(void)
{
	/* C[i*8 + j] = A[i*8 + j] * 2f, j vectorized */
	IrExpr *idx = ir_add(ir_mul(ir_var(i), c(8)), ir_var(j));
	IrExpr *val = ir_mul(ir_load(A, &idx, 1, NULL, 1), ir_float(ir_f32, 2));
	IrStmt *s = loop(i, 4, FOR_SERIAL, loop(j, 8, FOR_VECTORIZED,
	    ir_store(C, &idx, 1, val, NULL)));
	CHECK_NEST(vectorize_loops(s),
	    "for (i, 0, 4) {\n"
	    "  C[ramp(i*8, 1, 8)] = A[ramp(i*8, 1, 8)]*x8(2f)\n"
	    "}\n");

	/* a guarded tail: if (i*8 + j < N) ... becomes predicates */
	IrExpr *g = ir_binop(IR_LT, idx, ir_var(N));
	s = loop(i, 4, FOR_SERIAL, loop(j, 8, FOR_VECTORIZED,
	    ir_if(g, ir_store(C, &idx, 1, val, NULL), NULL)));
	CHECK_NEST(vectorize_loops(s),
	    "for (i, 0, 4) {\n"
	    "  C[ramp(i*8, 1, 8) if ramp(i*8, 1, 8) < x8(N)] = "
	    "A[ramp(i*8, 1, 8) if ramp(i*8, 1, 8) < x8(N)]*x8(2f)\n"
	    "}\n");

	/* a padded read: the load in the select's branch is predicated */
	IrExpr *jm1 = ir_sub(ir_var(j), c(1));
	IrExpr *pad = ir_select(ir_binop(IR_GE, ir_var(j), c(1)),
	    ir_load(A, &jm1, 1, NULL, 1), ir_float(ir_f32, 0));
	IrExpr *jj = ir_var(j);
	s = loop(j, 4, FOR_VECTORIZED, ir_store(C, &jj, 1, pad, NULL));
	CHECK_NEST(vectorize_loops(s),
	    "C[ramp(0, 1, 4)] = select(ramp(0, 1, 4) >= x4(1), "
	    "A[ramp(-1, 1, 4) if ramp(0, 1, 4) >= x4(1)], x4(0f))\n");

	/* scalar operands stay scalar inside: B[i] is loaded once */
	IrExpr *ii = ir_var(i);
	IrExpr *ij[2] = {ir_var(i), ir_var(j)};
	Buffer *C2 = ir_new_buffer("C2", TY_F32, 2);
	s = loop(j, 4, FOR_VECTORIZED, ir_store(C2, ij, 2,
	    ir_add(ir_load(B, &ii, 1, NULL, 1), ir_cast(ir_f32, ir_var(j))), NULL));
	CHECK_NEST(vectorize_loops(s),
	    "C2[i, ramp(0, 1, 4)] = x4(B[i]) + f32x4(ramp(0, 1, 4))\n");

	/* a reduction into one element cannot be vectorized: unrolled */
	IrExpr *zero = c(0);
	IrExpr *sum = ir_add(ir_load(C, &zero, 1, NULL, 1), ir_load(A, &jj, 1, NULL, 1));
	s = loop(j, 2, FOR_VECTORIZED, ir_store(C, &zero, 1, sum, NULL));
	CHECK_NEST(vectorize_loops(s),
	    "C[0] = C[0] + A[0]\n"
	    "C[0] = C[0] + A[1]\n");

	/* a non-constant extent stays a serial loop */
	s = ir_for(j, c(0), ir_var(N), FOR_VECTORIZED, ir_store(C, &jj, 1,
	    ir_float(ir_f32, 0), NULL));
	CHECK_NEST(vectorize_loops(s), "for (j, 0, N) {\n  C[j] = 0f\n}\n");
}

static void
test_unroll(void)
{
	Var *t = ir_new_var("t", ir_i64);
	IrExpr *jj = ir_var(j);
	IrStmt *body = ir_let_stmt(t, ir_mul(ir_var(j), ir_var(N)),
	    ir_store(C, &jj, 1, ir_cast(ir_f32, ir_var(t)), NULL));
	IrStmt *s = ir_for(j, c(2), c(3), FOR_UNROLLED, body);
	IrStmt *u = unroll_loops(s);
	CHECK_NEST(u,
	    "let t = 2*N\n"
	    "C[2] = f32(t)\n"
	    "let t = 3*N\n"
	    "C[3] = f32(t)\n"
	    "let t = 4*N\n"
	    "C[4] = f32(t)\n");
	/* each copy binds its own variable */
	if (u && u->kind == IS_BLOCK && u->block.n == 3)
		failures += u->block.stmts[0]->let.var == u->block.stmts[1]->let.var;
	else
		failures++;
	s = ir_for(j, c(0), c(100), FOR_UNROLLED, ir_store(C, &jj, 1,
	    ir_float(ir_f32, 0), NULL));
	CHECK_NEST(unroll_loops(s), "for (j, 0, 100) {\n  C[j] = 0f\n}\n");
}

static void
test_hoist(void)
{
	/* i/N*8 moves out of the j loop, N*i (which LLVM hoists) stays */
	IrExpr *idx = ir_add(ir_mul(ir_div(ir_var(i), ir_var(N)), c(8)), ir_var(j));
	IrExpr *rd = ir_add(ir_var(j), ir_mul(ir_var(N), ir_var(i)));
	IrStmt *s = loop(i, 4, FOR_SERIAL, loop(j, 8, FOR_SERIAL,
	    ir_store(C, &idx, 1, ir_load(A, &rd, 1, NULL, 1), NULL)));
	CHECK_NEST(hoist_invariants(s),
	    "for (i, 0, 4) {\n"
	    "  let inv0 = i/N*8\n"
	    "  for (j, 0, 8) {\n"
	    "    C[inv0 + j] = A[j + N*i]\n"
	    "  }\n"
	    "}\n");
	/* a division by a variable moves (it is total: it cannot trap); the
	 * load it indexes stays; a constant divisor is LLVM's to hoist */
	IrExpr *d = ir_div(ir_var(N), ir_var(i));
	IrExpr *ld = ir_load(B, &d, 1, NULL, 1);
	IrExpr *jj = ir_var(j);
	s = loop(j, 8, FOR_SERIAL, ir_store(C, &jj, 1, ld, NULL));
	CHECK_NEST(hoist_invariants(s),
	    "let inv0 = N/i\n"
	    "for (j, 0, 8) {\n  C[j] = B[inv0]\n}\n");
	IrExpr *d8 = ir_add(ir_div(ir_var(N), c(8)), ir_var(j));
	s = loop(j, 8, FOR_SERIAL, ir_store(C, &d8, 1, ir_float(ir_f32, 0), NULL));
	CHECK_NEST(hoist_invariants(s), "for (j, 0, 8) {\n  C[N/8 + j] = 0f\n}\n");
	/* nothing leaves a GPU loop's body (it is the kernel), though a
	 * serial loop inside it is hoisted from */
	IrExpr *nj = ir_add(ir_add(ir_div(ir_var(N), ir_var(N)), ir_var(i)), ir_var(j));
	IrStmt *gpu = ir_for(i, c(0), c(4), FOR_GPU_THREAD,
	    ir_store(C, &nj, 1, ir_float(ir_f32, 0), NULL));
	s = loop(j, 8, FOR_SERIAL, gpu);
	CHECK_NEST(hoist_invariants(s),
	    "for (j, 0, 8) {\n"
	    "  gpu_thread.x (i, 0, 4) {\n"
	    "    C[N/N + i + j] = 0f\n"
	    "  }\n"
	    "}\n");
}

int
main(void)
{
	i = ir_new_var("i", ir_i64);
	j = ir_new_var("j", ir_i64);
	N = ir_new_var("N", ir_i64);
	A = ir_new_buffer("A", TY_F32, 1);
	B = ir_new_buffer("B", TY_F32, 1);
	C = ir_new_buffer("C", TY_F32, 1);
	test_vectorize();
	test_unroll();
	test_hoist();
	if (failures)
		fprintf(stderr, "vectorize_test: %d failures\n", failures);
	return failures != 0;
}
