/* lower_diff.c: every schedule computes what the kernel as written does.
 *
 * For each kernel of the .tx files named on the command line, lowers it
 * unscheduled and with each of its cpu schedules (up to the loop nests
 * that --print-loops shows), runs both with a small interpreter of the IR
 * on random data for several sizes (1, sizes that no split factor
 * divides, and round ones), and compares the outputs.  The interpreter
 * checks every access against its buffer, so an out-of-bounds read or
 * write fails the test too, and fresh allocations are NaN so a read of
 * an element nobody computed shows.  A size an entry-point check rejects
 * (tail=exact, shift_inward) is skipped for that schedule.  A schedule
 * that calls a micro-kernel (tensorize) is not run: the interpreter has
 * no intrinsics (tests/run checks those end to end).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "lower/lower.h"
#include "parser/parser.h"
#include "sema/sema.h"

typedef struct {
	Buffer *buf;
	double *data;
	int64_t *min, *ext;
	int64_t size;
} Mem;

static Mem mems[256];
static int nmems;
static double *vars;
static int nvars;
static const char *failure;

static void
fail(const char *what)
{
	if (!failure)
		failure = what;
}

static Mem *
mem_of(Buffer *b)
{
	for (int i = nmems - 1; i >= 0; i--)
		if (mems[i].buf == b)
			return &mems[i];
	return NULL;
}

static double *
var_slot(Var *v)
{
	if (v->id >= nvars) {
		int n = v->id * 2 + 16;
		vars = realloc(vars, n * sizeof *vars);
		for (int i = nvars; i < n; i++)
			vars[i] = NAN;
		nvars = n;
	}
	return &vars[v->id];
}

static double eval(IrExpr *e);

static int64_t
ieval(IrExpr *e)
{
	return (int64_t)eval(e);
}

static int64_t
fdiv(int64_t a, int64_t b)
{
	if (b == 0)
		return fail("division by zero"), 0;
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static double *
addr(Buffer *b, IrExpr **idx, int n)
{
	Mem *m = mem_of(b);
	if (!m)
		return fail("access to an unallocated buffer"), NULL;
	int64_t off = 0;
	for (int d = 0; d < n; d++) {
		int64_t i = ieval(idx[d]);
		if (i < m->min[d] || i >= m->min[d] + m->ext[d]) {
			static char msg[256];
			snprintf(msg, sizeof msg, "index %lld of '%s' dimension %d outside [%lld, %lld)",
			    (long long)i, b->name, d, (long long)m->min[d],
			    (long long)(m->min[d] + m->ext[d]));
			fail(msg);
			return NULL;
		}
		off = off * m->ext[d] + (i - m->min[d]);
	}
	return &m->data[off];
}

static double
call(IrExpr *e)
{
	double a = e->call.nargs > 0 ? eval(e->call.args[0]) : 0;
	double b = e->call.nargs > 1 ? eval(e->call.args[1]) : 0;
	switch (e->call.builtin) {
	case BI_EXP: return exp(a);
	case BI_LOG: return log(a);
	case BI_SQRT: return sqrt(a);
	case BI_RSQRT: return 1 / sqrt(a);
	case BI_TANH: return tanh(a);
	case BI_SIN: return sin(a);
	case BI_COS: return cos(a);
	case BI_ERF: return erf(a);
	case BI_SIGMOID: return 1 / (1 + exp(-a));
	case BI_ABS: return fabs(a);
	case BI_FLOOR: return floor(a);
	case BI_CEIL: return ceil(a);
	case BI_ROUND: return round(a);
	case BI_POW: return pow(a, b);
	case BI_MIN: return a < b ? a : b;
	case BI_MAX: return a > b ? a : b;
	default: fail("unknown call"); return 0;
	}
}

static double
eval(IrExpr *e)
{
	bool fl = e->a && ir_is_float(e->a->type);
	double a, b;
	switch (e->kind) {
	case IR_INT: return (double)e->ival;
	case IR_FLOAT: return e->fval;
	case IR_VAR: return *var_slot(e->var);
	case IR_LOAD: {
		double *p = addr(e->load.buf, e->load.idx, e->load.nidx);
		return p ? *p : 0;
	}
	case IR_CALL: return call(e);
	case IR_SELECT: return eval(e->a) != 0 ? eval(e->b) : eval(e->c);
	case IR_CAST:
		a = eval(e->a);
		if (e->type.code == TY_F32)
			return (float)a;
		if (e->type.code == TY_F64 || e->type.code == TY_F16)
			return a;
		if (e->type.code == TY_BF16)
			return ir_bf16_value(a);
		if (e->type.code == TY_BOOL)
			return a != 0;
		return (double)(int64_t)a;
	case IR_NOT: return !eval(e->a);
	case IR_NEG: return -eval(e->a);
	case IR_BITNOT: return (double)~ieval(e->a);
	case IR_AND: return eval(e->a) != 0 && eval(e->b) != 0;
	case IR_OR: return eval(e->a) != 0 || eval(e->b) != 0;
	default: break;
	}
	a = eval(e->a);
	b = eval(e->b);
	double r;
	switch (e->kind) {
	case IR_ADD: r = a + b; break;
	case IR_SUB: r = a - b; break;
	case IR_MUL: r = a * b; break;
	case IR_DIV: r = fl ? a / b : (double)fdiv((int64_t)a, (int64_t)b); break;
	case IR_MOD:
		if (fl)
			r = a - b * floor(a / b);
		else
			r = (double)((int64_t)a - fdiv((int64_t)a, (int64_t)b) * (int64_t)b);
		break;
	case IR_MIN: r = a < b ? a : b; break;
	case IR_MAX: r = a > b ? a : b; break;
	case IR_BITAND: r = (double)((int64_t)a & (int64_t)b); break;
	case IR_BITOR: r = (double)((int64_t)a | (int64_t)b); break;
	case IR_BITXOR: r = (double)((int64_t)a ^ (int64_t)b); break;
	case IR_SHL: r = (double)((int64_t)a << (int64_t)b); break;
	case IR_SHR: r = (double)((int64_t)a >> (int64_t)b); break;
	case IR_EQ: return a == b;
	case IR_NE: return a != b;
	case IR_LT: return a < b;
	case IR_LE: return a <= b;
	case IR_GT: return a > b;
	case IR_GE: return a >= b;
	default: fail("unknown expression"); return 0;
	}
	if (e->type.code == TY_F32)
		r = (float)r;
	return r;
}

static int
run(IrStmt *s)
{
	if (!s || failure)
		return 0;
	switch (s->kind) {
	case IS_FOR: {
		int64_t mn = ieval(s->loop.min), ext = ieval(s->loop.extent);
		for (int64_t i = mn; i < mn + ext && !failure; i++) {
			*var_slot(s->loop.var) = (double)i;
			int rc = run(s->loop.body);
			if (rc)
				return rc;
		}
		return 0;
	}
	case IS_LET:
		*var_slot(s->let.var) = eval(s->let.value);
		return run(s->let.body);
	case IS_STORE: {
		double v = eval(s->store.value);
		double *p = addr(s->store.buf, s->store.idx, s->store.nidx);
		if (p)
			*p = s->store.buf->elem == TY_F32 ? (float)v : v;
		return 0;
	}
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		Mem *m = &mems[nmems++];
		m->buf = b;
		m->min = calloc(b->ndims + 1, sizeof *m->min);
		m->ext = calloc(b->ndims + 1, sizeof *m->ext);
		m->size = 1;
		for (int d = 0; d < b->ndims; d++) {
			m->min[d] = ieval(b->min[d]);
			m->ext[d] = ieval(b->extent[d]);
			if (m->ext[d] < 0)
				m->ext[d] = 0;
			m->size *= m->ext[d];
		}
		m->data = malloc((m->size + 1) * sizeof *m->data);
		for (int64_t i = 0; i < m->size; i++)
			m->data[i] = NAN;
		int rc = run(s->alloc.body);
		nmems--;
		free(m->data);
		free(m->min);
		free(m->ext);
		return rc;
	}
	case IS_IF:
		return eval(s->ifs.cond) != 0 ? run(s->ifs.then_s) : run(s->ifs.else_s);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++) {
			int rc = run(s->block.stmts[i]);
			if (rc)
				return rc;
		}
		return 0;
	case IS_EVALUATE:
		eval(s->eval.value);
		return 0;
	case IS_ASSERT:
		return eval(s->assrt.cond) != 0 ? 0 : s->assrt.code;
	case IS_PRODUCE:
		return run(s->produce.body);
	default:
		break;
	}
	return 0;
}

/* Runs f with the given parameter values and argument data; returns the
 * entry point's code (0), or -1 after an interpreter failure. */
static int
call_func(IrFunc *f, double *params, double **data)
{
	failure = NULL;
	nmems = 0;
	for (int i = 0; i < f->nparams; i++)
		*var_slot(f->params[i]) = params[i];
	for (int i = 0; i < f->nargs; i++) {
		Buffer *b = f->args[i];
		Mem *m = &mems[nmems++];
		m->buf = b;
		m->min = calloc(b->ndims + 1, sizeof *m->min);
		m->ext = calloc(b->ndims + 1, sizeof *m->ext);
		for (int d = 0; d < b->ndims; d++)
			m->ext[d] = ieval(b->extent[d]);
		m->data = data[i];
	}
	int rc = run(f->body);
	for (int i = 0; i < f->nargs; i++) {
		free(mems[i].min);
		free(mems[i].ext);
	}
	return failure ? -1 : rc;
}

static int64_t
buf_size(IrFunc *f, Buffer *b, double *params)
{
	for (int i = 0; i < f->nparams; i++)
		*var_slot(f->params[i]) = params[i];
	int64_t n = 1;
	for (int d = 0; d < b->ndims; d++)
		n *= ieval(b->extent[d]);
	return n < 0 ? 0 : n;
}

static int checks, failures, skipped, micro;

/* A micro-kernel call (tensorize): the interpreter has none of them; such
 * a schedule is counted and left to the end-to-end tests (tests/run). */
typedef struct {
	IrVisitor v;
	bool found;
} Intr;

static void
find_intrinsic(IrVisitor *v, IrExpr *e)
{
	((Intr *)v)->found |= e->call.ck == CALL_INTRINSIC;
	ir_visit_expr_children(v, e);
}

static bool
calls_intrinsic(IrFunc *f)
{
	Intr in;
	memset(&in, 0, sizeof in);
	in.v.expr[IR_CALL] = find_intrinsic;
	ir_visit_stmt(&in.v, f->body);
	return in.found;
}

static void
compare_as(Program *p, Kernel *k, Schedule *s, const char *file, const char *label)
{
	LowerOptions ref = { .no_schedule = true, .stop_after = "simplify" };
	LowerOptions opt = { .target = "cpu", .schedule = s->name, .stop_after = "simplify" };
	IrFunc *f0 = lower_kernel(p, k, &ref), *f1 = lower_kernel(p, k, &opt);
	if (!f0 || !f1) {
		printf("FAIL %s: %s (%s): does not lower\n", file, k->name, label);
		failures++;
		return;
	}
	if (calls_intrinsic(f1)) {
		micro++;
		return;
	}
	static const int sizes[] = { 1, 2, 3, 5, 7, 9, 13, 16, 17, 24 };
	int nsz = sizeof sizes / sizeof *sizes;
	for (int trial = 0; trial < 12; trial++) {
		double params[32];
		for (int i = 0; i < k->nparams && i < 32; i++)
			params[i] = k->params[i].is_size ? sizes[(trial * 7 + i * 3 + trial / nsz) % nsz]
			    : (double)(rand() % 100) / 50.0 - 1.0;
		if (trial == 0)
			for (int i = 0; i < k->nparams; i++)
				if (k->params[i].is_size)
					params[i] = 1;
		double *d0[32], *d1[32];
		int64_t n[32];
		for (int i = 0; i < f0->nargs; i++) {
			n[i] = buf_size(f0, f0->args[i], params);
			d0[i] = malloc((n[i] + 1) * sizeof(double));
			d1[i] = malloc((n[i] + 1) * sizeof(double));
			for (int64_t j = 0; j < n[i]; j++) {
				bool isint = type_is_int(f0->args[i]->elem);
				double v = isint ? (double)(rand() % 7 - 3) : (double)(float)((rand() % 2000) / 1000.0 - 1.0);
				d0[i][j] = d1[i][j] = f0->args[i]->is_input ? v : -777;
			}
		}
		int r0 = call_func(f0, params, d0);
		const char *why0 = failure;
		int r1 = r0 ? 0 : call_func(f1, params, d1);
		checks++;
		if (r0 != 0) {
			printf("FAIL %s: %s unscheduled: %s\n", file, k->name, why0 ? why0 : "assert");
			failures++;
		} else if (r1 > 0) {
			skipped++;
		} else if (r1 < 0) {
			printf("FAIL %s: %s (%s): %s\n", file, k->name, label, failure);
			failures++;
		} else {
			for (int i = 0; i < f0->nargs; i++)
				for (int64_t j = 0; j < n[i]; j++) {
					double a = d0[i][j], b = d1[i][j];
					if (fabs(a - b) > 1e-3 * (1 + fabs(a)) || isnan(a) != isnan(b)) {
						printf("FAIL %s: %s (%s): %s[%lld] is %g, unscheduled %g (sizes", file,
						    k->name, label, f0->args[i]->name,
						    (long long)j, b, a);
						for (int q = 0; q < k->nparams; q++)
							printf(" %s=%g", k->params[q].name, params[q]);
						printf(")\n");
						failures++;
						i = f0->nargs;
						break;
					}
				}
		}
		for (int i = 0; i < f0->nargs; i++) {
			free(d0[i]);
			free(d1[i]);
		}
	}
}

static void
compare(Program *p, Kernel *k, Schedule *s, const char *file)
{
	compare_as(p, k, s, file, s->name ? s->name : "default");
}

/* A template: every knob point (knobs.c), each checked and compared as a
 * schedule of its own; a point the schedule checks reject is counted as
 * illegal, not failed (txc tune skips it too). */
static int points, illegal;

static void
knob_points(Program *p, Kernel *k, Schedule *s, const char *file)
{
	int *pt = calloc((size_t)s->nknobs + 1, sizeof *pt);
	for (;;) {
		knobs_resolve(s, pt);
		points++;
		diag_mute(true);
		bool ok = schedule_check_one(p, s);
		diag_mute(false);
		if (!ok) {
			illegal++;
		} else {
			const char *label = arena_printf(perm, "%s %s", s->name ? s->name : "default",
			    knobs_describe(s));
			const char *name = s->name;
			int before = diag_errors();
			diag_mute(true);
			LowerOptions opt = { .target = "cpu", .schedule = name, .stop_after = "simplify" };
			IrFunc *f = lower_kernel(p, k, &opt);
			diag_mute(false);
			if (!f)
				illegal++;
			else
				compare_as(p, k, s, file, label);
			if (diag_errors() != before)
				diag_reset();
		}
		int i = 0;
		while (i < s->nknobs && ++pt[i] == s->knobs[i]->nargs)
			pt[i++] = 0;
		if (i == s->nknobs)
			break;
	}
	free(pt);
	knobs_resolve(s, NULL);
}

int
main(int argc, char **argv)
{
	perm = arena_new();
	srand(1);
	for (int a = 1; a < argc; a++) {
		uint32_t id = source_load(argv[a]);
		if (!id)
			return 2;
		const SrcFile *sf = source_get(id);
		const char *nl = strchr(sf->text, '\n');
		const char *dd = strstr(sf->text, "-D ");
		if (!strncmp(sf->text, "// flags:", 9) && dd && (!nl || dd < nl))
			continue;     /* sizes fixed with -D: nothing to vary */
		Program *p = parse_program(id);
		if (diag_errors() || !sema_check(p)) {
			diag_reset();
			continue;     /* a file meant to be rejected */
		}
		for (int i = 0; i < p->nschedules; i++) {
			Schedule *s = p->schedules[i];
			Kernel *k = s ? s->k : NULL;
			if (!k || !s->target || strcmp(s->target, "cpu"))
				continue;
			if (s->nknobs) {
				knob_points(p, k, s, argv[a]);
				continue;
			}
			int before = diag_errors();
			compare(p, k, s, argv[a]);
			if (diag_errors() != before)
				diag_reset();
		}
	}
	printf("%d knob points, %d illegal (skipped)\n", points, illegal);
	printf("%d runs, %d failed, %d skipped (entry checks)\n", checks, failures, skipped);
	printf("%d schedules with micro-kernel calls not run (tests/run runs them)\n", micro);
	return failures ? 1 : 0;
}
