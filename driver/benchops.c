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

/* An AST size expression's value; axes, when not NULL, holds the values
 * of the rule's pure axes (a reduction bound may use them). */
static bool
eval_ast(Expr *e, const int64_t *params, const int64_t *axes, int64_t *out)
{
	int64_t a, c;

	switch (e->kind) {
	case EXPR_INT: *out = e->ival; return true;
	case EXPR_NAME:
		if (e->id.ref == REF_PURE_AXIS && axes) {
			*out = axes[e->id.axis];
			return true;
		}
		if (e->id.ref != REF_SIZE)
			return false;
		*out = params[e->id.param->index];
		return true;
	case EXPR_UNARY:
		if (e->bin.op != OP_NEG || !eval_ast(e->bin.a, params, axes, &a))
			return false;
		return !__builtin_sub_overflow((int64_t)0, a, out);
	case EXPR_BINARY:
		if (!eval_ast(e->bin.a, params, axes, &a) || !eval_ast(e->bin.b, params, axes, &c))
			return false;
		switch (e->bin.op) {
		case OP_ADD: return !__builtin_add_overflow(a, c, out);
		case OP_SUB: return !__builtin_sub_overflow(a, c, out);
		case OP_MUL: return !__builtin_mul_overflow(a, c, out);
		case OP_DIV: *out = floordiv(a, c); return true;
		case OP_MOD: *out = c ? a - floordiv(a, c) * c : 0; return true;
		default: return false;
		}
	case EXPR_CALL:
		if (e->call.nargs != 2 || !eval_ast(e->call.args[0], params, axes, &a) ||
		    !eval_ast(e->call.args[1], params, axes, &c))
			return false;
		if (e->call.builtin == BI_MIN) { *out = a < c ? a : c; return true; }
		if (e->call.builtin == BI_MAX) { *out = a > c ? a : c; return true; }
		return false;
	default:
		return false;
	}
}

/* Whether e uses a pure axis: a mask of them (axes past 63 count as 63). */
static uint64_t
pure_axes_of(Expr *e)
{
	uint64_t m = 0;

	if (!e)
		return 0;
	switch (e->kind) {
	case EXPR_NAME:
		return e->id.ref == REF_PURE_AXIS ? 1ull << (e->id.axis < 63 ? e->id.axis : 63) : 0;
	case EXPR_UNARY:
	case EXPR_BINARY:
		return pure_axes_of(e->bin.a) | pure_axes_of(e->bin.b);
	case EXPR_CALL:
		for (int i = 0; i < e->call.nargs; i++)
			m |= pure_axes_of(e->call.args[i]);
		return m;
	default:
		return 0;
	}
}

/* e as c*x + b in pure axis d (the other axes at their values in axes);
 * false if it is not affine in it, or past 64 bits. */
static bool
affine_in(Expr *e, int d, const int64_t *params, const int64_t *axes, int64_t *c, int64_t *b)
{
	int64_t c1, b1, c2, b2;

	if (!(pure_axes_of(e) & (1ull << d))) {
		*c = 0;
		return eval_ast(e, params, axes, b);
	}
	switch (e->kind) {
	case EXPR_NAME:
		*c = 1;
		*b = 0;
		return true;
	case EXPR_UNARY:
		if (e->bin.op != OP_NEG || !affine_in(e->bin.a, d, params, axes, &c1, &b1))
			return false;
		return !__builtin_sub_overflow((int64_t)0, c1, c) &&
		    !__builtin_sub_overflow((int64_t)0, b1, b);
	case EXPR_BINARY:
		if (!affine_in(e->bin.a, d, params, axes, &c1, &b1) ||
		    !affine_in(e->bin.b, d, params, axes, &c2, &b2))
			return false;
		switch (e->bin.op) {
		case OP_ADD:
			return !__builtin_add_overflow(c1, c2, c) && !__builtin_add_overflow(b1, b2, b);
		case OP_SUB:
			return !__builtin_sub_overflow(c1, c2, c) && !__builtin_sub_overflow(b1, b2, b);
		case OP_MUL:
			if (c1 != 0 && c2 != 0)
				return false;
			if (c1 == 0)
				return !__builtin_mul_overflow(b1, c2, c) && !__builtin_mul_overflow(b1, b2, b);
			return !__builtin_mul_overflow(c1, b2, c) && !__builtin_mul_overflow(b1, b2, b);
		default:
			return false;
		}
	default:
		return false;   /* min, max, / and % of the axis: enumerated */
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

/* The extents of stage t (ext[d], t->ndims of them): its declared shape,
 * else the extents of the buffer the reference lowering f stores it in;
 * false if unknown. */
static bool
stage_extents(Tensor *t, IrFunc *f, const int64_t *params, int64_t *ext)
{
	FindBuf fb = { .v.stmt[IS_ALLOCATE] = find_alloc, .t = t };

	if (t->shape) {
		for (int d = 0; d < t->ndims; d++)
			if (!eval_ast(t->shape[d], params, NULL, &ext[d]))
				return false;
		return true;
	}
	for (int i = 0; i < f->nargs && !fb.found; i++)
		if (f->args[i]->tensor == t)
			fb.found = f->args[i];
	if (!fb.found)
		ir_visit_stmt(&fb.v, f->body);
	if (!fb.found || fb.found->ndims != t->ndims)
		return t->ndims == 0;
	for (int d = 0; d < fb.found->ndims; d++)
		if (!benchops_eval(f, params, fb.found->extent[d], &ext[d]))
			return false;
	return true;
}

/* Reduction ranges that depend on pure axes: the sum over the points of
 * those axes (dep, a mask; extents ext) of the product of the ranges'
 * extents (each max(0, hi - lo)).  Exact: along the last such axis, one
 * range affine in it is an arithmetic series; otherwise every point is
 * visited, up to ENUM_LIMIT points (past it the count is unknown, -1). */
enum { ENUM_LIMIT = 1 << 25 };

typedef struct {
	Reduce *red;
	const int64_t *params, *ext;
	int64_t *axes;            /* the pure axes' current values */
	int *dep; int ndep;       /* the axes enumerated, outermost first */
	int64_t visits;
} TriSum;

static __int128
floordiv128(__int128 a, __int128 d)
{
	__int128 q = a / d;
	return (a % d != 0 && ((a % d < 0) != (d < 0))) ? q - 1 : q;
}

/* sum over i in [0, n) of max(0, c*i + b), exactly */
static double
series(int64_t c, int64_t b, int64_t n)
{
	__int128 lo = 0, hi = n;      /* the i where c*i + b > 0: [lo, hi) */
	if (c > 0) {
		lo = floordiv128(-(__int128)b, c) + 1;       /* i > -b/c */
		if (lo < 0)
			lo = 0;
	} else if (c < 0) {
		hi = floordiv128((__int128)b - 1, -(__int128)c) + 1;   /* i <= (b - 1)/|c| */
		if (hi > n)
			hi = n;
	} else if (b <= 0) {
		return 0;
	}
	if (hi <= lo)
		return 0;
	/* sum of c*i + b over [lo, hi): m*b + c*((lo + hi - 1)*m/2), exact
	 * ((lo + hi - 1)*m is even) in 128 bits while n and |c| are below
	 * 2^40, else in long double */
	__int128 m = hi - lo;
	if (n < ((int64_t)1 << 40) && c < ((int64_t)1 << 40) && c > -((int64_t)1 << 40))
		return (double)(m * (__int128)b + (__int128)c * ((lo + hi - 1) * m / 2));
	return (double)((long double)m * (long double)b +
	    (long double)c * ((long double)(lo + hi - 1) * (long double)m / 2));
}

static double
tri_sum(TriSum *ts, int level)
{
	Reduce *red = ts->red;
	int d = ts->dep[level];
	double total = 0;

	if (level == ts->ndep - 1) {
		/* the last axis: one range affine in it sums in closed form */
		int n = 0, which = -1;
		for (int a = 0; a < red->naxes; a++)
			if ((pure_axes_of(red->axes[a].lo) | pure_axes_of(red->axes[a].hi)) & (1ull << d)) {
				n++;
				which = a;
			}
		if (n == 1) {
			double rest = 1;
			int64_t lo = 0, hi, cl = 0, bl = 0, ch, bh, c, b;
			bool ok = true;
			for (int a = 0; a < red->naxes && ok; a++) {
				RedAxis *r = &red->axes[a];
				if (a == which)
					continue;
				lo = 0;
				ok = (!r->lo || eval_ast(r->lo, ts->params, ts->axes, &lo)) &&
				    eval_ast(r->hi, ts->params, ts->axes, &hi);
				rest *= hi > lo ? (double)hi - (double)lo : 0;
			}
			RedAxis *r = &red->axes[which];
			if (ok && (!r->lo || affine_in(r->lo, d, ts->params, ts->axes, &cl, &bl)) &&
			    affine_in(r->hi, d, ts->params, ts->axes, &ch, &bh) &&
			    !__builtin_sub_overflow(ch, cl, &c) && !__builtin_sub_overflow(bh, bl, &b))
				return rest == 0 ? 0 : rest * series(c, b, ts->ext[d]);
			if (!ok)
				return -1;
		}
	}
	for (int64_t i = 0; i < ts->ext[d]; i++) {
		ts->axes[d] = i;
		double x;
		if (level < ts->ndep - 1) {
			x = tri_sum(ts, level + 1);
		} else {
			if (++ts->visits > ENUM_LIMIT)
				return -1;
			x = 1;
			for (int a = 0; a < red->naxes; a++) {
				RedAxis *r = &red->axes[a];
				int64_t lo = 0, hi;
				if ((r->lo && !eval_ast(r->lo, ts->params, ts->axes, &lo)) ||
				    !eval_ast(r->hi, ts->params, ts->axes, &hi))
					return -1;
				x *= hi > lo ? (double)hi - (double)lo : 0;
			}
		}
		if (x < 0)
			return -1;
		total += x;
	}
	return total;
}

/* The points of a reduction stage: its own points times the points of its
 * ranges, summed over the points of the pure axes that the ranges' bounds
 * use (sum(k <= i) over i < N: N*(N+1)/2); -1 if unknown. */
static double
reduce_points(Tensor *t, Reduce *red, const int64_t *params, const int64_t *ext)
{
	uint64_t dep = 0;
	double points = 1;
	int64_t x, lo;

	for (int a = 0; a < red->naxes; a++)
		dep |= pure_axes_of(red->axes[a].lo) | pure_axes_of(red->axes[a].hi);
	for (int d = 0; d < t->ndims; d++)
		if (!(dep & (1ull << (d < 63 ? d : 63))))
			points *= (double)ext[d];
	if (!dep) {
		for (int a = 0; a < red->naxes; a++) {
			RedAxis *r = &red->axes[a];
			lo = 0;
			if ((r->lo && !eval_ast(r->lo, params, NULL, &lo)) ||
			    !eval_ast(r->hi, params, NULL, &x))
				return -1;
			points *= x > lo ? (double)x - (double)lo : 0;
		}
		return points;
	}
	if (t->ndims > 63 || points == 0)
		return points == 0 ? 0 : -1;
	TriSum ts = { .red = red, .params = params, .ext = ext };
	ts.axes = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *ts.axes);
	ts.dep = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *ts.dep);
	for (int d = 0; d < t->ndims; d++)
		if (dep & (1ull << d))
			ts.dep[ts.ndep++] = d;
	double s = tri_sum(&ts, 0);
	return s < 0 ? -1 : points * s;
}

/* The points of an update definition (tx.5 UPDATES): its ranges times the
 * extents of the pure axes it keeps; -1 if unknown. */
static double
update_points(Tensor *t, Rule *u, const int64_t *params, const int64_t *ext)
{
	double points = 1;
	int64_t x, lo;

	for (int d = 0; d < u->naxes && d < t->ndims; d++)
		if (u->axes[d])
			points *= (double)ext[d];
	for (int a = 0; a < u->upd.naxes; a++) {
		RedAxis *r = &u->upd.axes[a];
		lo = 0;
		if ((r->lo && !eval_ast(r->lo, params, NULL, &lo)) || !eval_ast(r->hi, params, NULL, &x))
			return -1;
		points *= x > lo ? (double)x - (double)lo : 0;
	}
	return points;
}

/* Each stage's operations per point times its points, a reduction's body
 * and combine once per reduction point, an update's value once per point
 * of its domain (a tuple reduction's outputs are updates: each output's
 * combined value once per point of the ranges), summed over the stages;
 * -1 when some stage's extent cannot be worked out. */
double
benchops_count(Kernel *k, IrFunc *f, const int64_t *params, bool *fl)
{
	double total = 0;

	for (int s = 0; s < k->nstages; s++) {
		Tensor *t = k->stages[s];
		Expr *v = t->rule ? t->rule->value : NULL;
		int64_t *ext = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *ext);
		double ops, points = 1;

		if (!v)
			continue;
		if (!stage_extents(t, f, params, ext))
			return -1;
		if (v->kind == EXPR_REDUCE) {
			/* body, then the combine (+, *, max, min) */
			ops = ops_of(v->reduce.body, fl) + (counts(v->type, true, fl) ? 1 : 0);
			points = reduce_points(t, &v->reduce, params, ext);
		} else {
			ops = ops_of(v, fl);
			for (int d = 0; d < t->ndims; d++)
				points *= (double)ext[d];
		}
		if (points < 0)
			return -1;
		total += ops * points;
		if (t->update && t->update->value) {
			ops = ops_of(t->update->value, fl);
			points = update_points(t, t->update, params, ext);
			if (points < 0)
				return -1;
			total += ops * points;
		}
	}
	return total;
}
