/* emit_c_test.c: the C backend on hand-built IR.
 *
 * Builds kernels with the ir.h constructors (a parallel loop nest with a
 * reduction, floor division and modulo by negative divisors, a select and
 * let, vector ramps and a self-overlapping vector store, heap and stack
 * allocations with an assert between them, an allocation inside a
 * parallel loop, f16 and saturating casts, i8 wrapping, shifts), emits C
 * and a header, compiles them with $CC under -std=c99 -Wall -Wextra
 * -Werror -pedantic (and -fopenmp, -std=c11, -DTXC_DLPACK and UBSan where
 * the compiler has them), links the driver below and checks every result
 * exactly.  Exit 77 when no C compiler runs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/target.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); } } while (0)

static char dir[64];
static const char *cc;

/* ---- IR building shorthands --------------------------------------------- */

static IrExpr *I(int64_t v) { return ir_i64c(v); }
static IrExpr *V(Var *v) { return ir_var(v); }

static Buffer *
arg(const char *name, ScalarType t, int ndims, IrExpr **ext, int abi, bool in)
{
	Buffer *b = ir_new_buffer(name, t, ndims);
	for (int d = 0; d < ndims; d++) {
		b->min[d] = I(0);
		b->extent[d] = ext[d];
	}
	b->abi_index = abi;
	b->is_input = in;
	return b;
}

static Buffer *
arg1(const char *name, ScalarType t, Var *n, int abi, bool in)
{
	IrExpr *e = V(n);
	return arg(name, t, 1, &e, abi, in);
}

static IrExpr *
ld(Buffer *b, IrExpr *i)
{
	return ir_load(b, &i, 1, NULL, i->type.lanes);
}

static IrStmt *
st(Buffer *b, IrExpr *i, IrExpr *v)
{
	return ir_store(b, &i, 1, v, NULL);
}

static IrStmt *
seq3(IrStmt *a, IrStmt *b, IrStmt *c)
{
	return ir_seq(ir_seq(a, b), c);
}

static IrFunc *
func(const char *name, Var **params, int np, Buffer **args, int na, IrStmt *body)
{
	IrFunc *f = arena_alloc(perm, sizeof *f);
	f->name = name;
	f->params = arena_alloc(perm, (np + 1) * sizeof *params);
	memcpy(f->params, params, np * sizeof *params);
	f->nparams = np;
	f->args = arena_alloc(perm, (na + 1) * sizeof *args);
	memcpy(f->args, args, na * sizeof *args);
	f->nargs = na;
	f->body = body;
	return f;
}

static IrStmt *
nonneg(Var *v, const char *msg)
{
	return ir_assert(ir_binop(IR_GE, V(v), I(0)), TXC_ERR_SIZE, msg);
}

/* red(M, N): out[i] = sum(j < N) A[i, j], parallel over i; A indexed with
 * two indices (the backend flattens), out flat. */
static IrFunc *
make_red(void)
{
	Var *M = ir_new_var("M", ir_i64), *N = ir_new_var("N", ir_i64);
	Var *i = ir_new_var("i", ir_i64), *j = ir_new_var("j", ir_i64);
	IrExpr *ext[2] = {V(M), V(N)};
	Buffer *A = arg("A", TY_F32, 2, ext, 0, true);
	Buffer *out = arg1("out", TY_F32, M, 1, false);
	IrExpr *ij[2] = {V(i), V(j)};
	IrStmt *upd = st(out, V(i), ir_binop(IR_ADD, ld(out, V(i)),
	    ir_load(A, ij, 2, NULL, 1)));
	IrStmt *body = ir_for(i, I(0), V(M), FOR_PARALLEL, ir_seq(
	    ir_produce("out", false, st(out, V(i), ir_float(ir_f32, 0))),
	    ir_produce("out", true, ir_for(j, I(0), V(N), FOR_SERIAL, upd))));
	Var *ps[2] = {M, N};
	Buffer *as[2] = {A, out};
	return func("red", ps, 2, as, 2, seq3(nonneg(M, "red: M is negative"),
	    nonneg(N, "N is negative"), body));
}

/* misc(N, d: i32): Q = X / d, R = X % d, S = let t = X in t > 0 ? f32(t)
 * : -1, W = i8(X) * 100 (i8 wraps), Sh = X << 33 (amount & 31). */
static IrFunc *
make_misc(void)
{
	Var *N = ir_new_var("N", ir_i64), *d = ir_new_var("d", ir_i32);
	Var *i = ir_new_var("i", ir_i64), *t = ir_new_var("t", ir_i32);
	Buffer *X = arg1("X", TY_I32, N, 0, true);
	Buffer *Q = arg1("Q", TY_I32, N, 1, false);
	Buffer *R = arg1("R", TY_I32, N, 2, false);
	Buffer *S = arg1("S", TY_F32, N, 3, false);
	Buffer *W = arg1("W", TY_I8, N, 4, false);
	Buffer *Sh = arg1("Sh", TY_I32, N, 5, false);
	IrExpr *x = ld(X, V(i));
	IrExpr *sel = ir_let(t, x, ir_select(ir_binop(IR_GT, V(t), ir_int(ir_i32, 0)),
	    ir_cast(ir_f32, V(t)), ir_float(ir_f32, -1)));
	IrStmt *stmts[5] = {
		st(Q, V(i), ir_binop(IR_DIV, x, V(d))),
		st(R, V(i), ir_binop(IR_MOD, x, V(d))),
		st(S, V(i), sel),
		st(W, V(i), ir_binop(IR_MUL, ir_cast(ir_scalar(TY_I8), x),
		    ir_int(ir_scalar(TY_I8), 100))),
		st(Sh, V(i), ir_binop(IR_SHL, x, ir_int(ir_i32, 33))),
	};
	IrStmt *body = ir_for(i, I(0), V(N), FOR_SERIAL, ir_block(stmts, 5));
	Var *ps[2] = {N, d};
	Buffer *as[6] = {X, Q, R, S, W, Sh};
	return func("misc", ps, 2, as, 6, ir_seq(nonneg(N, "N is negative"), body));
}

/* vec(N), N % 8 == 0 (exact split): Y[ramp] = v * 3 with a vector let v,
 * F[ramp] = v > 4 ? f32(v) : -1, G = 0..N-1 then each block of 8 reversed
 * in place by one vector store that reads G elsewhere. */
static IrFunc *
make_vec(void)
{
	Var *N = ir_new_var("N", ir_i64), *io = ir_new_var("io", ir_i64);
	Var *v = ir_new_var("v", ir_type(TY_I64, 8)), *i = ir_new_var("i", ir_i64);
	Buffer *Y = arg1("Y", TY_I64, N, 0, false);
	Buffer *F = arg1("F", TY_F32, N, 1, false);
	Buffer *G = arg1("G", TY_I64, N, 2, false);
	IrExpr *base = ir_mul(V(io), I(8));
	IrExpr *ramp = ir_ramp(base, I(1), 8);
	IrStmt *body = ir_let_stmt(v, ramp, ir_seq(
	    st(Y, ramp, ir_binop(IR_MUL, V(v), ir_broadcast(I(3), 8))),
	    st(F, ramp, ir_select(ir_binop(IR_GT, V(v), ir_broadcast(I(4), 8)),
	    ir_cast(ir_type(TY_F32, 8), V(v)), ir_broadcast(ir_float(ir_f32, -1), 8)))));
	IrExpr *rev = ir_ramp(ir_add(base, I(7)), I(-1), 8);
	IrStmt *fill = ir_for(i, I(0), V(N), FOR_SERIAL, st(G, V(i), V(i)));
	IrStmt *loops = ir_seq(ir_for(io, I(0), ir_div(V(N), I(8)), FOR_SERIAL, body),
	    ir_seq(fill, ir_for(io, I(0), ir_div(V(N), I(8)), FOR_SERIAL,
	    st(G, ramp, ld(G, rev)))));
	IrStmt *chk = ir_assert(ir_binop(IR_EQ, ir_mod(V(N), I(8)), I(0)),
	    TXC_ERR_DIVIDE, "vec: N must be a multiple of 8");
	Var *ps[1] = {N};
	Buffer *as[3] = {Y, F, G};
	return func("vec", ps, 1, as, 3, seq3(nonneg(N, "vec: N is negative"), chk, loops));
}

/* alloc(N): tmp (heap, N floats) = 2 X; an assert inside its lifetime;
 * small (stack, 4 floats) = k; Z[i] = tmp[N-1-i] + small[i % 4]; then a
 * parallel loop that allocates w (heap, N - p floats) per iteration:
 * Z2[p] = w[0] + 1 with w[0] = X[p]. */
static IrFunc *
make_alloc(void)
{
	Var *N = ir_new_var("N", ir_i64), *i = ir_new_var("i", ir_i64);
	Var *k = ir_new_var("k", ir_i64), *p = ir_new_var("p", ir_i64);
	Buffer *X = arg1("X", TY_F32, N, 0, true);
	Buffer *Z = arg1("Z", TY_F32, N, 1, false);
	Buffer *Z2 = arg1("Z2", TY_F32, N, 2, false);
	Buffer *tmp = ir_new_buffer("tmp", TY_F32, 1);
	tmp->min[0] = I(0);
	tmp->extent[0] = V(N);
	Buffer *small = ir_new_buffer("small", TY_F32, 1);
	small->min[0] = I(0);
	small->extent[0] = I(4);
	small->scope = SCOPE_LOCAL;
	Buffer *w = ir_new_buffer("w", TY_F32, 1);
	w->min[0] = I(0);
	w->extent[0] = ir_sub(V(N), V(p));
	IrStmt *fill = ir_for(i, I(0), V(N), FOR_SERIAL, st(tmp, V(i),
	    ir_binop(IR_MUL, ld(X, V(i)), ir_float(ir_f32, 2))));
	IrStmt *fs = ir_for(k, I(0), I(4), FOR_UNROLLED, st(small, V(k),
	    ir_cast(ir_f32, V(k))));
	IrStmt *use = ir_for(i, I(0), V(N), FOR_SERIAL, st(Z, V(i), ir_binop(IR_ADD,
	    ld(tmp, ir_sub(ir_sub(V(N), I(1)), V(i))), ld(small, ir_mod(V(i), I(4))))));
	IrStmt *big = ir_assert(ir_binop(IR_LT, V(N), I(1000000)), TXC_ERR_SIZE,
	    "N is too large");
	IrStmt *inner = ir_allocate(tmp, seq3(big, fill, ir_allocate(small, ir_seq(fs, use))));
	IrStmt *par = ir_for(p, I(0), V(N), FOR_PARALLEL, ir_allocate(w, ir_seq(
	    st(w, I(0), ld(X, V(p))),
	    st(Z2, V(p), ir_binop(IR_ADD, ld(w, I(0)), ir_float(ir_f32, 1))))));
	Var *ps[1] = {N};
	Buffer *as[3] = {X, Z, Z2};
	return func("alloc", ps, 1, as, 3, seq3(nonneg(N, "N is negative"), inner, par));
}

/* conv(N): H = f16(X), I8 = i8(X), U8 = u8(X) (saturating), H2 = h * h + 1
 * in f16, B = X > 0 as bool, Bi = i32(B) + i32(f32(h) == X). */
static IrFunc *
make_conv(void)
{
	Var *N = ir_new_var("N", ir_i64), *i = ir_new_var("i", ir_i64);
	IrType f16 = ir_scalar(TY_F16);
	Buffer *X = arg1("X", TY_F32, N, 0, true);
	Buffer *H = arg1("H", TY_F16, N, 1, false);
	Buffer *I8 = arg1("I8", TY_I8, N, 2, false);
	Buffer *U8 = arg1("U8", TY_U8, N, 3, false);
	Buffer *H2 = arg1("H2", TY_F16, N, 4, false);
	Buffer *B = arg1("B", TY_BOOL, N, 5, false);
	Buffer *Bi = arg1("Bi", TY_I32, N, 6, false);
	IrExpr *x = ld(X, V(i));
	IrExpr *h = ir_cast(f16, x);
	IrStmt *stmts[6] = {
		st(H, V(i), h),
		st(I8, V(i), ir_cast(ir_scalar(TY_I8), x)),
		st(U8, V(i), ir_cast(ir_scalar(TY_U8), x)),
		st(H2, V(i), ir_binop(IR_ADD, ir_binop(IR_MUL, ld(H, V(i)), ld(H, V(i))),
		    ir_float(f16, 1))),
		st(B, V(i), ir_binop(IR_GT, x, ir_float(ir_f32, 0))),
		st(Bi, V(i), ir_binop(IR_ADD, ir_cast(ir_i32, ld(B, V(i))),
		    ir_cast(ir_i32, ir_binop(IR_EQ, ir_cast(ir_f32, ld(H, V(i))), x)))),
	};
	IrStmt *body = ir_for(i, I(0), V(N), FOR_SERIAL, ir_block(stmts, 6));
	Var *ps[1] = {N};
	Buffer *as[7] = {X, H, I8, U8, H2, B, Bi};
	return func("conv", ps, 1, as, 7, body);
}

/* ---- the driver compiled with the emitted code -------------------------- */

static const char driver[] =
"#include <math.h>\n#include <stdio.h>\n#include <string.h>\n"
"#include \"gen.h\"\n"
"static int bad;\n"
"#define EXPECT(c) do { if (!(c)) { bad++; printf(\"line %d: %s\\n\", __LINE__, #c); } } while (0)\n"
"int main(void)\n{\n"
"\tfloat A[12], out[3];\n"
"\tint i;\n"
"\tfor (i = 0; i < 12; i++) A[i] = (float)((i / 4) * 10 + i % 4);\n"
"\tEXPECT(red(3, 4, A, out) == 0);\n"
"\tfor (i = 0; i < 3; i++) EXPECT(out[i] == (float)(40 * i + 6));\n"
"\tEXPECT(red(3, 4, NULL, out) == 1);\n"
"\tEXPECT(strcmp(red_last_error(), \"red: argument 'A' is NULL\") == 0);\n"
"\tEXPECT(red(-1, 4, A, out) == 2);\n"
"\tEXPECT(strcmp(red_last_error(), \"red: M is negative\") == 0);\n"
"\tEXPECT(red(1, -4, A, out) == 2);\n"
"\tEXPECT(strcmp(red_last_error(), \"red: N is negative\") == 0);\n"
"\t{\n"
"\t\tint32_t X[6] = {7, -7, 5, -5, 0, 6}, Q[6], R[6], Sh[6];\n"
"\t\tfloat S[6];\n"
"\t\tint8_t W[6];\n"
"\t\tint32_t qn[6] = {-3, 4, -2, 3, 0, -3}, rn[6] = {1, 1, 1, 1, 0, 0};\n"
"\t\tint32_t qp[6] = {2, -3, 1, -2, 0, 2}, rp[6] = {1, 2, 2, 1, 0, 0};\n"
"\t\tint8_t w[6] = {-68, 68, -12, 12, 0, 88};\n"
"\t\tEXPECT(misc(6, -2, X, Q, R, S, W, Sh) == 0);\n"
"\t\tfor (i = 0; i < 6; i++) {\n"
"\t\t\tEXPECT(Q[i] == qn[i]); EXPECT(R[i] == rn[i]);\n"
"\t\t\tEXPECT(S[i] == (X[i] > 0 ? (float)X[i] : -1.0f));\n"
"\t\t\tEXPECT(W[i] == w[i]); EXPECT(Sh[i] == 2 * X[i]);\n"
"\t\t}\n"
"\t\tEXPECT(misc(6, 3, X, Q, R, S, W, Sh) == 0);\n"
"\t\tfor (i = 0; i < 6; i++) { EXPECT(Q[i] == qp[i]); EXPECT(R[i] == rp[i]); }\n"
"\t\tEXPECT(misc(6, 0, X, Q, R, S, W, Sh) == 0);\n"
"\t\tfor (i = 0; i < 6; i++) { EXPECT(Q[i] == 0); EXPECT(R[i] == 0); }\n"
"\t}\n"
"\t{\n"
"\t\tint64_t Y[16], G[16];\n"
"\t\tfloat F[16];\n"
"\t\tEXPECT(vec(16, Y, F, G) == 0);\n"
"\t\tfor (i = 0; i < 16; i++) {\n"
"\t\t\tEXPECT(Y[i] == 3 * i); EXPECT(F[i] == (i > 4 ? (float)i : -1.0f));\n"
"\t\t\tEXPECT(G[i] == (i / 8) * 8 + 7 - i % 8);\n"
"\t\t}\n"
"\t\tEXPECT(vec(12, Y, F, G) == 3);\n"
"\t\tEXPECT(strcmp(vec_last_error(), \"vec: N must be a multiple of 8\") == 0);\n"
"\t}\n"
"\t{\n"
"\t\tfloat X[5] = {1, 2, 3, 4, 5}, Z[5], Z2[5];\n"
"\t\tEXPECT(alloc(5, X, Z, Z2) == 0);\n"
"\t\tfor (i = 0; i < 5; i++) {\n"
"\t\t\tEXPECT(Z[i] == 2 * X[4 - i] + (float)(i % 4));\n"
"\t\t\tEXPECT(Z2[i] == X[i] + 1);\n"
"\t\t}\n"
"\t\tEXPECT(alloc(2000000, X, Z, Z2) == 2);\n"
"\t\tEXPECT(strcmp(alloc_last_error(), \"alloc: N is too large\") == 0);\n"
"\t}\n"
"\t{\n"
"\t\tfloat X[12] = {1.0f, 2.5f, -2.5f, 1e10f, -1e10f, NAN, 65519.0f, 65520.0f,\n"
"\t\t    1e-8f, 3e-8f, 0.1f, 300.7f};\n"
"\t\tuint16_t H[12], H2[12];\n"
"\t\tint8_t I8[12];\n"
"\t\tuint8_t U8[12], B[12];\n"
"\t\tint32_t Bi[12];\n"
"\t\tuint16_t h[12] = {0x3c00, 0x4100, 0xc100, 0x7c00, 0xfc00, 0x7e00, 0x7bff,\n"
"\t\t    0x7c00, 0, 1, 0x2e66, 0x5cb3};\n"
"\t\tint8_t i8[12] = {1, 2, -2, 127, -128, 0, 127, 127, 0, 0, 0, 127};\n"
"\t\tuint8_t u8[12] = {1, 2, 0, 255, 0, 0, 255, 255, 0, 0, 0, 255};\n"
"\t\tEXPECT(conv(12, X, H, I8, U8, H2, B, Bi) == 0);\n"
"\t\tfor (i = 0; i < 12; i++) {\n"
"\t\t\tif (H[i] != h[i]) printf(\"H[%d] = %#x\\n\", i, H[i]);\n"
"\t\t\tEXPECT(H[i] == h[i]); EXPECT(I8[i] == i8[i]); EXPECT(U8[i] == u8[i]);\n"
"\t\t\tEXPECT(B[i] == (X[i] > 0));\n"
"\t\t}\n"
"\t\tEXPECT(H2[0] == 0x4000); EXPECT(H2[1] == 0x4740); EXPECT(H2[10] == 0x3c0a);\n"
"\t\tEXPECT(H2[3] == 0x7c00);\n"
"\t\tEXPECT(Bi[0] == 2); EXPECT(Bi[1] == 2); EXPECT(Bi[2] == 1); EXPECT(Bi[5] == 0);\n"
"\t\tEXPECT(Bi[10] == 1);\n"
"\t}\n"
"#ifdef TXC_DLPACK\n"
"\t{\n"
"\t\tint64_t shA[2] = {3, 4}, shO[1] = {3}, st[2] = {4, 1}, bad_st[2] = {1, 3};\n"
"\t\tDLTensor tA, tO;\n"
"\t\tmemset(&tA, 0, sizeof tA); memset(&tO, 0, sizeof tO);\n"
"\t\ttA.data = A; tA.device.device_type = kDLCPU; tA.ndim = 2;\n"
"\t\ttA.dtype.code = kDLFloat; tA.dtype.bits = 32; tA.dtype.lanes = 1;\n"
"\t\ttA.shape = shA; tA.strides = st;\n"
"\t\ttO = tA; tO.data = out; tO.ndim = 1; tO.shape = shO; tO.strides = NULL;\n"
"\t\tmemset(out, 0, sizeof out);\n"
"\t\tEXPECT(red_dlpack(3, 4, &tA, &tO) == 0);\n"
"\t\tEXPECT(out[2] == 86.0f);\n"
"\t\tEXPECT(red_dlpack(3, 5, &tA, &tO) == 5);\n"
"\t\tEXPECT(strcmp(red_last_error(), \"red: DLTensor 'A' has the wrong shape [3, 4], want [3, 5]\") == 0);\n"
"\t\ttA.strides = bad_st;\n"
"\t\tEXPECT(red_dlpack(3, 4, &tA, &tO) == 5);\n"
"\t\tEXPECT(strcmp(red_last_error(), \"red: DLTensor 'A' is not compact row-major\") == 0);\n"
"\t\ttA.strides = NULL; tA.dtype.bits = 64;\n"
"\t\tEXPECT(red_dlpack(3, 4, &tA, &tO) == 5);\n"
"\t\ttA.dtype.bits = 32;\n"
"\t\tEXPECT(red_dlpack(3, 4, &tA, NULL) == 1);\n"
"\t\tprintf(\"dlpack checked\\n\");\n"
"\t}\n"
"#endif\n"
"\tprintf(\"%d failures\\n\", bad);\n"
"\treturn bad != 0;\n"
"}\n";

/* ---- running the compiler ------------------------------------------------ */

static int
sh(const char *fmt, ...) TXC_PRINTF(1, 2);

static int
sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static void
write_file(const char *name, void (*fn)(FILE *, void *), void *arg_)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		exit(99);
	}
	fn(fp, arg_);
	fclose(fp);
}

static IrFunc *funcs[5];
static int nfuncs;
static bool emit_ok, header_ok;

static void
w_c(FILE *fp, void *a) { (void)a; emit_ok = c_emit(fp, funcs, nfuncs, "emit_c_test"); }
static void
w_h(FILE *fp, void *a) { header_ok = header_emit(fp, funcs, nfuncs, *(bool *)a, HEADER_C); }
static void
w_main(FILE *fp, void *a) { (void)a; fputs(driver, fp); }

static bool
file_has(const char *name, const char *s)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return false;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = 0;
	fclose(fp);
	return strstr(buf, s) != NULL;
}

/* Builds gen.c + main.c with flags and runs it; false on any failure. */
static bool
build_run(const char *flags, const char *what)
{
	if (sh("cd %s && %s %s gen.c main.c -o prog -lm > build.log 2>&1", dir, cc, flags) != 0) {
		fprintf(stderr, "emit_c_test: %s: the build failed:\n", what);
		sh("cat %s/build.log >&2", dir);
		return false;
	}
	if (sh("cd %s && OMP_NUM_THREADS=2 ./prog > run.log 2>&1", dir) != 0) {
		fprintf(stderr, "emit_c_test: %s: the program failed:\n", what);
		sh("cat %s/run.log >&2", dir);
		return false;
	}
	return true;
}

int
main(void)
{
	perm = arena_new();
	cc = getenv("CC");
	if (!cc || !*cc)
		cc = "cc";
	if (sh("%s --version > /dev/null 2>&1", cc) != 0) {
		printf("SKIP: no C compiler (%s)\n", cc);
		return 77;
	}
	snprintf(dir, sizeof dir, "/tmp/txc-emit-c-XXXXXX");
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 99;

	funcs[nfuncs++] = make_red();
	funcs[nfuncs++] = make_misc();
	funcs[nfuncs++] = make_vec();
	funcs[nfuncs++] = make_alloc();
	funcs[nfuncs++] = make_conv();
	bool dl = access("/usr/include/dlpack/dlpack.h", R_OK) == 0;
	bool no = false;
	write_file("gen.c", w_c, NULL);
	write_file("gen.h", w_h, &no);
	write_file("main.c", w_main, NULL);
	CHECK(emit_ok);
	CHECK(header_ok);
	CHECK(file_has("gen.c", "#pragma omp parallel for"));
	CHECK(file_has("gen.c", "txc_div_i64("));
	CHECK(file_has("gen.c", "txc_alloc("));
	CHECK(file_has("gen.c", "#pragma omp atomic write"));
	CHECK(file_has("gen.c", "float small[4];"));
	CHECK(file_has("gen.c", "free(tmp);\n\t\t\treturn 2;"));
	CHECK(file_has("gen.h", "int red(int64_t M, int64_t N, const float *A, float *out);"));
	CHECK(file_has("gen.h", "const char *red_last_error(void);"));

	const char *strict = "-std=c99 -Wall -Wextra -Werror -pedantic -O2";
	CHECK(build_run(strict, "C99, strict warnings"));
	if (sh("cd %s && %s -fopenmp -c main.c -o /dev/null > /dev/null 2>&1", dir, cc) == 0) {
		CHECK(build_run("-std=c99 -Wall -Wextra -Werror -pedantic -O2 -fopenmp",
		    "C99 with OpenMP"));
		CHECK(build_run("-std=c11 -Wall -Wextra -Werror -pedantic -O2 -fopenmp",
		    "C11 with OpenMP"));
	} else
		printf("note: %s has no -fopenmp; skipped\n", cc);
	if (sh("cd %s && %s -fsanitize=undefined -fno-sanitize-recover=all main.c gen.c "
	    "-fsanitize=address -o prog -lm > /dev/null 2>&1", dir, cc) == 0)
		CHECK(build_run("-std=c99 -O1 -fsanitize=undefined,address "
		    "-fno-sanitize-recover=all", "UBSan and ASan"));
	if (dl) {
		write_file("gen.h", w_h, &dl);
		CHECK(file_has("gen.h", "int red_dlpack(int64_t M, int64_t N, const DLTensor *A, DLTensor *out);"));
		CHECK(build_run("-std=c99 -Wall -Wextra -Werror -pedantic -O2 -DTXC_DLPACK",
		    "DLPack"));
		CHECK(file_has("run.log", "dlpack checked"));
	}
	if (failures == 0 && !getenv("TXC_KEEP"))
		sh("rm -rf %s", dir);
	else if (failures == 0)
		printf("files kept in %s\n", dir);
	else
		fprintf(stderr, "emit_c_test: files kept in %s\n", dir);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures != 0;
}
