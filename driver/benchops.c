/* benchops.c: the operation count behind `txc bench`'s GFLOP/s.
 *
 * The count belongs to the algorithm, not to a schedule: per stage, the
 * operations one point of its rule performs (a reduction's body and
 * combine once per reduction point) times the stage's points, from the
 * declared shape at the -D sizes or, for an inferred shape, from the
 * stage's buffer in the unscheduled lowering.  txc.1's "How GFLOP/s is
 * counted" is the user-facing statement of these rules.
 */
#include "driver/driver.h"
#include "lower/lower.h"

static int64_t
floordiv(int64_t a, int64_t d)
{
	if (d == 0)
		return 0;
	int64_t q = a / d;
	return (a % d != 0 && ((a % d < 0) != (d < 0))) ? q - 1 : q;
}

/* An extent (integer IR over the size parameters); false if it is not
 * one this evaluator knows. */
bool
benchops_eval(IrFunc *f, const int64_t *params, IrExpr *e, int64_t *out)
{
	int64_t a = 0, c = 0;

	if (!e)
		return false;
	if (e->kind == IR_INT) {
		*out = e->ival;
		return true;
	}
	if (e->kind == IR_VAR) {
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i] == e->var) {
				*out = params[i];
				return true;
			}
		return false;
	}
	if (e->kind == IR_CAST)
		return benchops_eval(f, params, e->a, out);
	if (!benchops_eval(f, params, e->a, &a) || !benchops_eval(f, params, e->b, &c))
		return false;
	switch (e->kind) {
	/* past 64 bits (txc bench -D N=4294967296 on f32[N, N]): no value */
	case IR_ADD: return !__builtin_add_overflow(a, c, out);
	case IR_SUB: return !__builtin_sub_overflow(a, c, out);
	case IR_MUL: return !__builtin_mul_overflow(a, c, out);
	case IR_DIV: *out = floordiv(a, c); return true;
	case IR_MOD: *out = c ? a - floordiv(a, c) * c : 0; return true;
	case IR_MIN: *out = a < c ? a : c; return true;
	case IR_MAX: *out = a > c ? a : c; return true;
	default: return false;
	}
}

/* Whether an expression reads tensor data (an element or a reduction). */
static bool
reads_data(Expr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_ACCESS:
	case EXPR_REDUCE:
		return true;
	case EXPR_UNARY:
	case EXPR_BINARY:
		return reads_data(e->bin.a) || reads_data(e->bin.b);
	case EXPR_CALL:
	case EXPR_CAST:
	case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			if (reads_data(e->call.args[i]))
				return true;
		return false;
	default:
		return false;
	}
}

/* Whether an operation of result type t on operands that may read data
 * counts: floating-point arithmetic always, integer arithmetic only on
 * tensor data (index and guard arithmetic is addressing, not work). */
static bool
counts(ScalarType t, bool data, bool *fl)
{
	if (type_is_float(t)) {
		*fl = true;
		return true;
	}
	return data && type_is_int(t);
}

/* Operations one evaluation of an expression performs (txc.1, BENCH:
 * arithmetic and math calls count one each, clamp two; comparisons,
 * logic, negation and casts none; a select the costlier of its branches;
 * indices are never looked into), and whether any is on floating point. */
static double
ops_of(Expr *e, bool *fl)
{
	double n = 0, a, c;

	if (!e)
		return 0;
	switch (e->kind) {
	case EXPR_UNARY:
		return ops_of(e->bin.a, fl);
	case EXPR_BINARY:
		if (e->bin.op >= OP_ADD && e->bin.op <= OP_BITXOR &&
		    counts(e->type, reads_data(e), fl))
			n = 1;
		return n + ops_of(e->bin.a, fl) + ops_of(e->bin.b, fl);
	case EXPR_CALL:
		if (counts(e->type, reads_data(e), fl))
			n = e->call.builtin == BI_CLAMP ? 2 : 1;
		/* fallthrough */
	case EXPR_CAST:
		for (int i = 0; i < e->call.nargs; i++)
			n += ops_of(e->call.args[i], fl);
		return n;
	case EXPR_SELECT:
		a = ops_of(e->call.args[1], fl);
		c = ops_of(e->call.args[2], fl);
		return a > c ? a : c;
	default:
		return 0;
	}
}

/* An AST size expression's value. */
static bool
eval_ast(Expr *e, const int64_t *params, int64_t *out)
{
	int64_t a, c;

	switch (e->kind) {
	case EXPR_INT: *out = e->ival; return true;
	case EXPR_NAME:
		if (e->id.ref != REF_SIZE)
			return false;
		*out = params[e->id.param->index];
		return true;
	case EXPR_BINARY:
		if (!eval_ast(e->bin.a, params, &a) || !eval_ast(e->bin.b, params, &c))
			return false;
		switch (e->bin.op) {
		case OP_ADD: *out = a + c; return true;
		case OP_SUB: *out = a - c; return true;
		case OP_MUL: *out = a * c; return true;
		case OP_DIV: *out = floordiv(a, c); return true;
		case OP_MOD: *out = c ? a - floordiv(a, c) * c : 0; return true;
		default: return false;
		}
	case EXPR_CALL:
		if (e->call.nargs != 2 || !eval_ast(e->call.args[0], params, &a) ||
		    !eval_ast(e->call.args[1], params, &c))
			return false;
		if (e->call.builtin == BI_MIN) { *out = a < c ? a : c; return true; }
		if (e->call.builtin == BI_MAX) { *out = a > c ? a : c; return true; }
		return false;
	default:
		return false;
	}
}

/* Finds the buffer that stores a tensor in a lowered kernel: an argument
 * or an Allocate (whose extents, in the unscheduled lowering, are the
 * stage's whole inferred shape). */
typedef struct {
	IrVisitor v;
	Tensor *t;
	Buffer *found;
} FindBuf;

static void
find_alloc(IrVisitor *v, IrStmt *s)
{
	FindBuf *fb = (FindBuf *)v;

	if (s->alloc.buf->tensor == fb->t && !fb->found)
		fb->found = s->alloc.buf;
	ir_visit_stmt_children(v, s);
}

/* The number of points of stage t: its declared shape, else the extents
 * of the buffer the reference lowering f stores it in; -1 if unknown. */
static double
stage_points(Tensor *t, IrFunc *f, const int64_t *params)
{
	FindBuf fb = { .v.stmt[IS_ALLOCATE] = find_alloc, .t = t };
	double points = 1;
	int64_t x;

	if (t->shape) {
		for (int d = 0; d < t->ndims; d++) {
			if (!eval_ast(t->shape[d], params, &x))
				return -1;
			points *= (double)x;
		}
		return points;
	}
	for (int i = 0; i < f->nargs && !fb.found; i++)
		if (f->args[i]->tensor == t)
			fb.found = f->args[i];
	if (!fb.found)
		ir_visit_stmt(&fb.v, f->body);
	if (!fb.found)
		return t->ndims ? -1 : 1;
	for (int d = 0; d < fb.found->ndims; d++) {
		if (!benchops_eval(f, params, fb.found->extent[d], &x))
			return -1;
		points *= (double)x;
	}
	return points;
}

/* Each stage's operations per point times its points, a reduction's body
 * and combine once per reduction point, summed over the stages; -1 when
 * some stage's extent cannot be worked out. */
double
benchops_count(Kernel *k, IrFunc *f, const int64_t *params, bool *fl)
{
	double total = 0;

	for (int s = 0; s < k->nstages; s++) {
		Tensor *t = k->stages[s];
		Expr *v = t->rule ? t->rule->value : NULL;
		double ops, points = stage_points(t, f, params);
		int64_t x, lo;

		if (!v)
			continue;
		if (points < 0)
			return -1;
		if (v->kind == EXPR_REDUCE) {
			/* body, then the combine (+, *, max, min) */
			ops = ops_of(v->reduce.body, fl) + (counts(v->type, true, fl) ? 1 : 0);
			for (int a = 0; a < v->reduce.naxes; a++) {
				RedAxis *r = &v->reduce.axes[a];
				lo = 0;
				if ((r->lo && !eval_ast(r->lo, params, &lo)) || !eval_ast(r->hi, params, &x))
					return -1;
				points *= x > lo ? (double)(x - lo) : 0;
			}
		} else
			ops = ops_of(v, fl);
		total += ops * points;
	}
	return total;
}
