/* sema_test.c: sema on hand-built ASTs (no parser involved).
 *
 * Checks what the golden diagnostics cannot see: the fields sema fills
 * (tensor order, ABI and stage indices, name refs, concrete types, the
 * primitive table ids), and that partial trees with NULL children, as a
 * recovered parse leaves them, do not crash it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/sema.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
	__FILE__, __LINE__, #c); failures++; } } while (0)

/* ---- tiny AST builders ------------------------------------------------ */

static const char *N(const char *s) { return intern_cstr(s); }

static Expr *
ex(ExprKind k)
{
	Expr *e = arena_alloc(perm, sizeof *e);
	e->kind = k;
	return e;
}

static Expr *
lit(int64_t v)
{
	Expr *e = ex(EXPR_INT);
	e->ival = v;
	return e;
}

static Expr *
flt(double v)
{
	Expr *e = ex(EXPR_FLOAT);
	e->fval = v;
	return e;
}

static Expr *
name(const char *s)
{
	Expr *e = ex(EXPR_NAME);
	e->id.name = N(s);
	return e;
}

static Expr *
bin(Op op, Expr *a, Expr *b)
{
	Expr *e = ex(EXPR_BINARY);
	e->bin.op = op;
	e->bin.a = a;
	e->bin.b = b;
	return e;
}

static Expr *
access(const char *t, int n, ...)
{
	Expr *e = ex(EXPR_ACCESS);
	e->call.name = N(t);
	e->call.args = arena_alloc(perm, (size_t)(n + 1) * sizeof(Expr *));
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		e->call.args[i] = va_arg(ap, Expr *);
	va_end(ap);
	e->call.nargs = n;
	return e;
}

static Expr *
sum1(const char *k, Expr *hi, Expr *body)
{
	Expr *e = ex(EXPR_REDUCE);
	e->reduce.op = RED_SUM;
	e->reduce.axes = arena_alloc(perm, sizeof(RedAxis));
	e->reduce.axes[0].name = N(k);
	e->reduce.axes[0].hi = hi;
	e->reduce.naxes = 1;
	e->reduce.body = body;
	return e;
}

static Kernel *
kernel(Program *p, const char *kname, const char *sizes)
{
	Kernel *k = arena_alloc(perm, sizeof *k);
	k->name = N(kname);
	k->params = arena_alloc(perm, 8 * sizeof(Param));
	for (const char *s = sizes; *s; s++) {
		Param *pa = &k->params[k->nparams++];
		pa->name = intern(s, 1);
		pa->is_size = true;
		pa->type = TY_I64;
	}
	k->items = arena_alloc(perm, 16 * sizeof(KernelItem));
	p->kernels[p->nkernels++] = k;
	return k;
}

static Tensor *
decl(Kernel *k, TensorRole role, const char *tname, ScalarType ty, int n, ...)
{
	Tensor *t = arena_alloc(perm, sizeof *t);
	t->name = N(tname);
	t->role = role;
	t->elem = ty;
	t->declared = true;
	t->shape = arena_alloc(perm, (size_t)(n + 1) * sizeof(Expr *));
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		t->shape[i] = name(va_arg(ap, const char *));
	va_end(ap);
	t->ndims = n;
	k->items[k->nitems++].decl = t;
	return t;
}

static Rule *
rule(Kernel *k, const char *tname, const char *axes, Expr *v)
{
	Rule *r = arena_alloc(perm, sizeof *r);
	r->name = N(tname);
	r->axes = arena_alloc(perm, 8 * sizeof(char *));
	r->axis_locs = arena_alloc(perm, 8 * sizeof(Loc));
	for (const char *s = axes; *s; s++)
		r->axes[r->naxes++] = intern(s, 1);
	r->value = v;
	k->items[k->nitems++].rule = r;
	return r;
}

static Program *
program(void)
{
	Program *p = arena_alloc(perm, sizeof *p);
	p->kernels = arena_alloc(perm, 8 * sizeof(Kernel *));
	p->schedules = arena_alloc(perm, 8 * sizeof(Schedule *));
	return p;
}

static Schedule *
schedule(Program *p, const char *kname, const char *target)
{
	Schedule *s = arena_alloc(perm, sizeof *s);
	s->kernel = N(kname);
	s->target = N(target);
	s->prims = arena_alloc(perm, 16 * sizeof(SchedPrim));
	p->schedules[p->nschedules++] = s;
	return s;
}

/* stage.prim(args...) -> outs; args: "name", "#8" (integer) */
static SchedPrim *
prim(Schedule *s, const char *stage, const char *pname, const char *args, const char *outs)
{
	SchedPrim *sp = &s->prims[s->nprims++];
	sp->stage = N(stage);
	sp->prim = N(pname);
	sp->args = arena_alloc(perm, 8 * sizeof(SchedArg));
	sp->outs = arena_alloc(perm, 8 * sizeof(char *));
	sp->out_locs = arena_alloc(perm, 8 * sizeof(Loc));
	char buf[128];
	snprintf(buf, sizeof buf, "%s", args);
	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
		SchedArg *a = &sp->args[sp->nargs++];
		if (t[0] == '#') {
			a->kind = ARG_INT;
			a->ival = atoll(t + 1);
		} else {
			a->kind = ARG_NAME;
			a->str = N(t);
		}
	}
	snprintf(buf, sizeof buf, "%s", outs);
	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
		sp->outs[sp->nouts++] = N(t);
	return sp;
}

/* ---- running sema with captured diagnostics ---------------------------- */

static char *captured;

static bool
run(Program *p)
{
	size_t len;
	free(captured);
	FILE *fp = open_memstream(&captured, &len);
	diag_reset();
	diag_set_stream(fp);
	bool ok = sema_check(p);
	fclose(fp);
	diag_set_stream(NULL);
	return ok;
}

static bool
said(const char *s)
{
	bool yes = captured && strstr(captured, s);
	if (!yes)
		fprintf(stderr, "expected diagnostic \"%s\" in:\n%s\n", s, captured ? captured : "");
	return yes;
}

/* ---- tests -------------------------------------------------------------- */

static Program *
matmul(void)
{
	Program *p = program();
	Kernel *k = kernel(p, "matmul", "MNK");
	decl(k, ROLE_IN, "A", TY_F32, 2, "M", "K");
	decl(k, ROLE_IN, "B", TY_F32, 2, "K", "N");
	decl(k, ROLE_OUT, "C", TY_F32, 2, "M", "N");
	rule(k, "C", "ij", sum1("k", name("K"),
	    bin(OP_MUL, access("A", 2, name("i"), name("k")), access("B", 2, name("k"), name("j")))));
	return p;
}

static void
test_matmul(void)
{
	Program *p = matmul();
	Schedule *s = schedule(p, "matmul", "cpu");
	prim(s, "C", "tile", "i j #8 #32", "io jo ii ji");
	prim(s, "C", "split", "k #4", "ko ki");
	prim(s, "C", "reorder", "io jo ko ki ii ji", "");
	prim(s, "C", "vectorize", "ji", "");
	prim(s, "C", "unroll", "ki", "");
	SchedPrim *par = prim(s, "C", "parallel", "io", "");
	CHECK(run(p));
	CHECK(captured && !*captured);
	Kernel *k = p->kernels[0];
	CHECK(k->ntensors == 3 && k->nstages == 1);
	Tensor *c = k->tensors[2];
	CHECK(c->name == N("C") && c->abi_index == 2 && c->stage_index == 0 && c->rule);
	CHECK(k->tensors[0]->stage_index == -1);
	Expr *v = c->rule->value;
	CHECK(v->type == TY_F32 && v->reduce.body->type == TY_F32);
	Expr *a = v->reduce.body->bin.a;
	CHECK(a->call.tensor == k->tensors[0]);
	CHECK(a->call.args[0]->id.ref == REF_PURE_AXIS && a->call.args[0]->id.axis == 0);
	CHECK(a->call.args[1]->id.ref == REF_RED_AXIS && a->call.args[1]->id.red == &v->reduce.axes[0]);
	CHECK(v->reduce.axes[0].hi->id.ref == REF_SIZE && v->reduce.axes[0].hi->type == TY_I64);
	CHECK(par->prim_id == PRIM_PARALLEL && s->k == k);
}

static void
test_pipeline_order_and_literals(void)
{
	Program *p = program();
	Kernel *k = kernel(p, "pipe", "N");
	decl(k, ROLE_IN, "A", TY_I32, 1, "N");
	decl(k, ROLE_OUT, "y", TY_I64, 1, "N");
	/* y reads tmp, defined later; tmp is undeclared: its type is i32 */
	rule(k, "y", "i", bin(OP_ADD, access("tmp", 1, name("i")), lit(1)));
	rule(k, "tmp", "i", bin(OP_MUL, access("A", 1, name("i")), lit(2)));
	CHECK(run(p));
	Tensor *tmp = resolve_tensor(k, N("tmp"));
	CHECK(tmp && !tmp->declared && tmp->shape_inferred && tmp->elem == TY_I32);
	CHECK(tmp->abi_index == -1 && tmp->index == 2);
	CHECK(k->nstages == 2 && k->stages[0] == tmp && tmp->stage_index == 0);
	Expr *yv = k->stages[1]->rule->value;
	CHECK(yv->type == TY_I32 && yv->bin.b->type == TY_I32);   /* widened to i64 on store */
}

/* A 0-d tensor read by its bare name becomes an access with no indices. */
static void
test_scalar_tensor(void)
{
	Program *p = program();
	Kernel *k = kernel(p, "norm", "N");
	decl(k, ROLE_IN, "A", TY_F32, 1, "N");
	Tensor *s = decl(k, ROLE_OUT, "s", TY_F32, 0);
	decl(k, ROLE_OUT, "y", TY_F64, 1, "N");
	Rule *ry = rule(k, "y", "i", bin(OP_DIV, access("A", 1, name("i")), name("s")));
	rule(k, "s", "", sum1("j", name("N"), access("A", 1, name("j"))));
	CHECK(run(p));
	Expr *rd = ry->value->bin.b;
	CHECK(rd->kind == EXPR_ACCESS && rd->call.tensor == s && rd->call.nargs == 0);
	CHECK(ry->value->type == TY_F32);
	CHECK(k->stages[0] == s && s->stage_index == 0);
}

static void
test_errors(void)
{
	Program *p = program();
	Kernel *k = kernel(p, "bad", "N");
	decl(k, ROLE_IN, "A", TY_I32, 1, "N");
	decl(k, ROLE_IN, "F", TY_F32, 1, "N");
	decl(k, ROLE_OUT, "y", TY_F32, 1, "N");
	decl(k, ROLE_OUT, "z", TY_F32, 1, "N");
	rule(k, "y", "i", bin(OP_ADD, access("A", 1, name("i")), access("F", 1, name("i"))));
	rule(k, "a", "i", access("b", 1, name("i")));
	rule(k, "b", "i", access("a", 1, name("i")));
	rule(k, "A", "i", flt(1.0));
	Schedule *s = schedule(p, "bad", "cpu");
	prim(s, "y", "splt", "i #4", "io ii");
	prim(s, "y", "split", "i #4", "io ii");
	prim(s, "y", "vectorize", "i", "");
	prim(s, "y", "split", "io #0", "a b");
	CHECK(!run(p));
	CHECK(said("mixing i32 and f32 needs an explicit cast"));
	CHECK(said("cycle: a -> b -> a"));
	CHECK(said("cannot define input 'A'"));
	CHECK(said("output 'z' is never defined"));
	CHECK(said("unknown schedule primitive 'splt'; did you mean 'split'?"));
	CHECK(said("'y' has no axis 'i' any more; its axes are io, ii"));
	CHECK(said("argument 2 of 'split' must be a positive integer factor"));
}

/* A recovered parse may leave NULL names, values and arguments. */
static void
test_partial_tree(void)
{
	Program *p = program();
	Kernel *k = kernel(p, "part", "N");
	Tensor *t = decl(k, ROLE_OUT, "y", TY_F32, 1, "N");
	t->shape[0] = NULL;
	rule(k, "y", "i", NULL);
	Rule *r = rule(k, "y", "i", bin(OP_ADD, NULL, lit(1)));
	r->name = NULL;
	k->items[k->nitems++].decl = NULL;
	Expr *call = ex(EXPR_CALL);
	call->call.name = N("exp");
	call->call.args = arena_alloc(perm, sizeof(Expr *));
	call->call.nargs = 1;
	rule(k, "w", "i", call);
	k->name = NULL;
	p->kernels[p->nkernels++] = NULL;
	Schedule *s = schedule(p, "part", "cpu");
	SchedPrim *sp = prim(s, "y", "split", "", "");
	sp->prim = NULL;
	s->kernel = NULL;
	run(p);   /* must not crash */
	CHECK(1);
}

static void
test_unify(void)
{
	CHECK(sema_unify(TY_I8, TY_I32) == TY_I32);
	CHECK(sema_unify(TY_U8, TY_I16) == TY_I16);
	CHECK(sema_unify(TY_U16, TY_I16) == TY_ERROR);
	CHECK(sema_unify(TY_I16, TY_F32) == TY_F32);
	CHECK(sema_unify(TY_I32, TY_F32) == TY_ERROR);
	CHECK(sema_unify(TY_I32, TY_F64) == TY_F64);
	CHECK(sema_unify(TY_INT_LIT, TY_F16) == TY_F16);
	CHECK(sema_unify(TY_BF16, TY_F32) == TY_F32);
	CHECK(sema_unify(TY_BF16, TY_F64) == TY_F64);
	CHECK(sema_unify(TY_F16, TY_BF16) == TY_ERROR);      /* neither holds the other */
	CHECK(sema_unify(TY_I8, TY_BF16) == TY_ERROR);
	CHECK(sema_unify(TY_FLOAT_LIT, TY_BF16) == TY_BF16);
	CHECK(sema_unify(TY_FLOAT_LIT, TY_I32) == TY_ERROR);
	CHECK(sema_unify(TY_INT_LIT, TY_FLOAT_LIT) == TY_FLOAT_LIT);
	CHECK(sema_unify(TY_BOOL, TY_INT_LIT) == TY_ERROR);
	CHECK(prim_lookup("cache_read")->on_inputs && prim_lookup("split")->nouts == 2);
	for (int i = 0; i < PRIM_COUNT; i++)
		CHECK(prim_table[i].id == i && prim_table[i].name);
}

int
main(void)
{
	perm = arena_new();
	test_matmul();
	test_pipeline_order_and_literals();
	test_scalar_tensor();
	test_errors();
	test_partial_tree();
	test_unify();
	free(captured);
	if (failures)
		fprintf(stderr, "sema_test: %d failure%s\n", failures, failures == 1 ? "" : "s");
	return failures != 0;
}
