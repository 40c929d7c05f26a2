/* gpu_index32.c: a kernel's index arithmetic in 32 bits where its sizes allow.
 *
 * Every integer of a kernel's IR is an i64 (sizes, loop counters, ids,
 * offsets), and a GPU does 64-bit integer arithmetic in two or more
 * instructions.  This pass finds, for each kernel, a condition on the
 * values the host has at its launch under which every i64 value the
 * kernel computes lies in [-2^31, 2^31): each i64 node of the body is
 * bounded over the loops, lets and thread and block ids with lin_interval
 * (sizecheck.c's interval arithmetic: ends in the parameters alone) and
 * both ends must fit; so must the kernel's i64 parameters (also >= 0,
 * which the intervals assume), the grid, and the element and byte counts
 * of its buffers, which bound what code generation adds (swizzled
 * offsets, an mma's lanes, cp.async byte offsets stay inside a buffer).
 * An end is tested with each of its subterms in range too, innermost
 * first, so that the host computes it without overflow.  A value that
 * cannot be bounded (a loaded index, a bit operation, a 64-bit element,
 * a vector of indices other than a ramp or broadcast) makes the
 * condition false: the kernel stays 64-bit.  Sufficient, not exact.
 *
 * Constantly true (sizes fixed by -D): the kernel itself becomes 32-bit
 * (GpuKernel.index32).  Otherwise, unless constantly false, it gets a
 * twin NAME_i32, the same IR with index32 set, which the launch picks
 * when the condition holds (cuda_host.c); cuda_ptx.c and the emulator
 * compute its i64 values as i32 (Cg.index32).
 */
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "target/cuda/cuda.h"

#define LO32 (-2147483647LL - 1)
#define HI32 2147483647LL

typedef struct {
	GpuKernel *k;
	Var **host; int nhost, caphost;    /* variables the launch has */
	Var *ids[6];                       /* tid x y z, bid x y z */
	IrExpr **terms; int nterms, capterms;   /* each must fit */
	Var **params; int nparams, capparams;  /* i64 ones, checked in [0, 2^31) */
	const char **done; int ndone, capdone;
	bool fail;
	int budget;                        /* lin_interval calls left */
} Ix;

static bool
host_var(Ix *x, Var *v)
{
	for (int i = 0; i < x->nhost; i++)
		if (x->host[i] == v)
			return true;
	return false;
}

static void
collect_vars(Ix *x, IrExpr *e)
{
	if (!e)
		return;
	if (e->kind == IR_VAR && !host_var(x, e->var))
		*ARENA_PUSH(ir_arena, x->host, x->nhost, x->caphost) = e->var;
	collect_vars(x, e->a);
	collect_vars(x, e->b);
	collect_vars(x, e->c);
}

/* e computed by the host from what the launch has, without loads, calls
 * or divisions by a variable */
static bool
hostable(Ix *x, IrExpr *e)
{
	int64_t c;
	if (!e || e->type.code != TY_I64 || e->type.lanes != 1)
		return false;
	switch (e->kind) {
	case IR_INT:
		return true;
	case IR_VAR:
		return host_var(x, e->var);
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX:
		return hostable(x, e->a) && hostable(x, e->b);
	case IR_DIV: case IR_MOD:
		return ir_is_const(e->b, &c) && c > 0 && hostable(x, e->a);
	case IR_NEG:
		return hostable(x, e->a);
	default:
		return false;
	}
}

static IrExpr *
and2(IrExpr *a, IrExpr *b)
{
	return a ? ir_binop(IR_AND, a, b) : b;
}

static bool
once(Ix *x, const char *key)
{
	key = intern_cstr(key);
	for (int i = 0; i < x->ndone; i++)
		if (x->done[i] == key)
			return false;
	*ARENA_PUSH(ir_arena, x->done, x->ndone, x->capdone) = key;
	return true;
}

static bool crange(Ix *x, IrExpr *e, int64_t *lo, int64_t *hi);

/* e must be in [-2^31, 2^31), and so must each subterm whose 64-bit
 * computation could overflow (where the parameters' range does not bound
 * it): then, by induction over the subterms, the host computes e without
 * overflow (the condition's terms are all computed, wrapping, and the one
 * out of range makes it false) */
static void
fits(Ix *x, IrExpr *e)
{
	int64_t lo, hi;
	if (e->kind == IR_INT || !once(x, arena_printf(ir_arena, "t:%s", ir_expr_str(e))))
		return;
	if (e->kind != IR_VAR && !crange(x, e, &lo, &hi)) {
		if (e->a)
			fits(x, e->a);
		if (e->b)
			fits(x, e->b);
	}
	*ARENA_PUSH(ir_arena, x->terms, x->nterms, x->capterms) = e;
}

static LinConstRange crange_sub;

/* constant bounds of a term from the parameters' [0, 2^31); false where
 * unknown or past 64 bits */
static bool
crange(Ix *x, IrExpr *e, int64_t *lo, int64_t *hi)
{
	int64_t al, ah;
	switch (e->kind) {
	case IR_INT:
		*lo = *hi = e->ival;
		return true;
	case IR_VAR:
		for (int i = 0; i < x->nparams; i++)
			if (x->params[i] == e->var) {
				*lo = 0, *hi = HI32;
				return true;
			}
		return false;
	case IR_NEG:
		if (!crange(x, e->a, &al, &ah) || al == INT64_MIN)
			return false;
		*lo = -ah, *hi = -al;
		return true;
	default:
		return lin_const_range(e, crange_sub, x, lo, hi);
	}
}

/* crange as lin_const_range bounds an operand */
static bool
crange_sub(void *ctx, IrExpr *e, int64_t *lo, int64_t *hi)
{
	return crange(ctx, e, lo, hi);
}

/* the host computes e (or fails) and it fits */
static void
need_fits(Ix *x, IrExpr *e)
{
	if (x->fail)
		return;
	e = simplify_expr(e, NULL);
	int64_t v;
	if (ir_is_const(e, &v)) {
		if (v < LO32 || v > HI32)
			x->fail = true;
		return;
	}
	if (!once(x, arena_printf(ir_arena, "f:%s", ir_expr_str(e))))
		return;
	if (!hostable(x, e)) {
		x->fail = true;
		return;
	}
	fits(x, e);
}

/* e with the ids as variables (ranged in the walk's scope) */
static IrExpr *
abstract(Ix *x, IrExpr *e)
{
	if (!e)
		return NULL;
	if (e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC && e->call.nargs == 1 &&
	    (!strcmp(e->call.name, GPU_TID) || !strcmp(e->call.name, GPU_BID))) {
		int64_t d;
		if (!ir_is_const(e->call.args[0], &d) || d < 0 || d > 2)
			return e;
		return ir_var(x->ids[d + (strcmp(e->call.name, GPU_BID) ? 0 : 3)]);
	}
	if (e->kind == IR_LOAD || e->kind == IR_CALL || e->kind == IR_LET)
		return e;
	IrExpr *a = abstract(x, e->a), *b = abstract(x, e->b), *c = abstract(x, e->c);
	if (a == e->a && b == e->b && c == e->c)
		return e;
	IrExpr *n = arena_alloc(ir_arena, sizeof *n);
	*n = *e;
	n->a = a, n->b = b, n->c = c;
	return n;
}

/* An end of an interval in what the launch has: an end that names a
 * variable of the kernel (a loop's bound through a let: ri < ri_e) is
 * bounded again, a few times at most (NULL: no such end). */
static IrExpr *
settle(Ix *x, IrExpr *e, VarRange *r, bool upper)
{
	for (int i = 0; e && !hostable(x, e); i++) {
		IrExpr *lo, *hi;
		if (i == 4 || x->budget-- <= 0 || !lin_interval(e, r, NULL, &lo, &hi))
			return NULL;
		e = upper ? hi : lo;
	}
	return e;
}

/* an i64 scalar of the kernel: both ends of its interval fit */
static void
value(Ix *x, IrExpr *e, VarRange *r)
{
	IrExpr *lo, *hi;
	if (x->fail)
		return;
	if (!once(x, arena_printf(ir_arena, "v%p:%s", (void *)r, ir_expr_str(e))))
		return;
	if (x->budget-- <= 0 || !lin_interval(abstract(x, e), r, NULL, &lo, &hi)) {
		x->fail = true;
		return;
	}
	lo = settle(x, lo, r, false);
	hi = settle(x, hi, r, true);
	if (!lo || !hi) {
		x->fail = true;
		return;
	}
	need_fits(x, lo);
	need_fits(x, hi);
}

static void expr(Ix *x, IrExpr *e, VarRange *r);

static void
exprs(Ix *x, IrExpr **es, int n, VarRange *r)
{
	for (int i = 0; i < n; i++)
		expr(x, es[i], r);
}

/* every i64 node of e (loads' indices, calls' arguments included) */
static void
expr(Ix *x, IrExpr *e, VarRange *r)
{
	if (!e || x->fail)
		return;
	if (e->type.code == TY_U64) {
		x->fail = true;
		return;
	}
	if (e->kind == IR_LET) {
		expr(x, e->a, r);
		IrExpr *lo = NULL, *hi = NULL;
		if (e->a->type.code == TY_I64 && e->a->type.lanes == 1)
			lin_interval(abstract(x, e->a), r, NULL, &lo, &hi);
		expr(x, e->b, lin_push(r, e->var, lo, hi, true));
		return;
	}
	if (e->type.code == TY_I64 && e->type.lanes > 1) {
		if (e->kind == IR_RAMP) {
			/* its first and last lanes and its step */
			IrExpr *last = ir_add(e->a, ir_mul(e->b, ir_i64c(e->type.lanes - 1)));
			expr(x, e->a, r);
			expr(x, e->b, r);
			value(x, last, r);
			return;
		}
		if (e->kind == IR_BROADCAST) {
			expr(x, e->a, r);
			return;
		}
		x->fail = true;
		return;
	}
	if (e->kind == IR_LOAD)
		exprs(x, e->load.idx, e->load.nidx, r);
	else if (e->kind == IR_CALL)
		exprs(x, e->call.args, e->call.nargs, r);
	expr(x, e->a, r);
	expr(x, e->b, r);
	expr(x, e->c, r);
	if (e->type.code == TY_I64 && e->kind != IR_INT)
		value(x, e, r);
}

/* its element count and byte size fit (every in-bounds offset does) */
static void
buffer(Ix *x, Buffer *b)
{
	if (b->elem == TY_I64 || b->elem == TY_U64) {
		x->fail = true;
		return;
	}
	int bits = ir_bits(b->elem);
	IrExpr *n = ir_i64c(bits < 8 ? 1 : bits / 8);
	for (int d = 0; d < b->ndims && !x->fail; d++) {
		if (!b->extent[d]) {
			x->fail = true;
			return;
		}
		IrExpr *ext = ir_max(b->extent[d], ir_i64c(0));
		need_fits(x, ext);
		n = ir_mul(n, ext);
		need_fits(x, n);
	}
}

static void
stmt(Ix *x, IrStmt *s, VarRange *r)
{
	if (!s || x->fail)
		return;
	switch (s->kind) {
	case IS_FOR: {
		IrExpr *end = ir_add(s->loop.min, s->loop.extent);
		expr(x, s->loop.min, r);
		expr(x, s->loop.extent, r);
		value(x, end, r);      /* cg_loop's bound */
		stmt(x, s->loop.body, lin_push(r, s->loop.var, s->loop.min,
		    ir_sub(end, ir_i64c(1)), true));
		break;
	}
	case IS_LET: {
		IrExpr *lo = NULL, *hi = NULL;
		expr(x, s->let.value, r);
		if (s->let.value->type.code == TY_I64 && s->let.value->type.lanes == 1)
			lin_interval(abstract(x, s->let.value), r, NULL, &lo, &hi);
		stmt(x, s->let.body, lin_push(r, s->let.var, lo, hi, true));
		break;
	}
	case IS_STORE:
		exprs(x, s->store.idx, s->store.nidx, r);
		expr(x, s->store.value, r);
		expr(x, s->store.pred, r);
		break;
	case IS_ALLOCATE:
		buffer(x, s->alloc.buf);
		stmt(x, s->alloc.body, r);
		break;
	case IS_IF:
		expr(x, s->ifs.cond, r);
		stmt(x, s->ifs.then_s, r);
		stmt(x, s->ifs.else_s, r);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			stmt(x, s->block.stmts[i], r);
		break;
	case IS_EVALUATE:
		expr(x, s->eval.value, r);
		break;
	case IS_ASSERT:
		expr(x, s->assrt.cond, r);
		break;
	case IS_PRODUCE:
		stmt(x, s->produce.body, r);
		break;
	default:
		x->fail = true;
		break;
	}
}

/* The condition for k, simplified; false where there is none. */
static IrExpr *
condition(GpuKernel *k)
{
	Ix x = { .k = k, .budget = 20000 };
	IrFunc *f = k->fn;
	VarRange *r = NULL;
	for (int i = 0; i < f->nparams; i++) {
		Var *v = f->params[i];
		*ARENA_PUSH(ir_arena, x.host, x.nhost, x.caphost) = v;
		if (v->type.code == TY_U64)
			return ir_bool_const(false);
		if (v->type.code == TY_I64) {
			/* a symbol >= 0 (lin_is_size), which the condition asks */
			r = lin_push(r, v, ir_i64c(0), NULL, false);
			*ARENA_PUSH(ir_arena, x.params, x.nparams, x.capparams) = v;
		}
	}
	if (k->tma_on)   /* gpu_tma.c's switch (i32), a parameter the host sets */
		*ARENA_PUSH(ir_arena, x.host, x.nhost, x.caphost) = k->tma_on;
	for (int d = 0; d < 3; d++) {
		collect_vars(&x, k->grid[d]);
		collect_vars(&x, k->block[d]);
	}
	for (int d = 0; d < 6; d++) {
		static const char *const names[6] = { "tid.x", "tid.y", "tid.z", "bid.x", "bid.y",
			"bid.z" };
		IrExpr *n = d < 3 ? k->block[d] : k->grid[d - 3];
		x.ids[d] = ir_new_var(names[d], ir_scalar(TY_I64));
		if (!n)
			return ir_bool_const(false);
		need_fits(&x, n);
		r = lin_push(r, x.ids[d], ir_i64c(0), ir_sub(n, ir_i64c(1)), true);
	}
	for (int i = 0; i < f->nargs; i++)
		buffer(&x, f->args[i]);
	stmt(&x, f->body, r);
	if (x.fail)
		return ir_bool_const(false);
	/* the parameters first; a term that their range bounds is left out */
	IrExpr *c = NULL;
	for (int i = 0; i < x.nparams; i++) {
		IrExpr *v = ir_var(x.params[i]);
		c = and2(c, and2(ir_binop(IR_GE, v, ir_i64c(0)), ir_binop(IR_LE, v, ir_i64c(HI32))));
	}
	for (int i = 0; i < x.nterms; i++) {
		IrExpr *e = x.terms[i];
		int64_t lo = INT64_MIN, hi = INT64_MAX;
		if (!crange(&x, e, &lo, &hi))
			lo = INT64_MIN, hi = INT64_MAX;
		if (lo < LO32)
			c = and2(c, ir_binop(IR_GE, e, ir_i64c(LO32)));
		if (hi > HI32)
			c = and2(c, ir_binop(IR_LE, e, ir_i64c(HI32)));
	}
	return c ? simplify_expr(c, NULL) : ir_bool_const(true);
}

void
gpu_index32(GpuKernel *k)
{
	if (getenv("TXC_CUDA_NO_INDEX32"))
		return;
	IrExpr *c = condition(k);
	int64_t v;
	if (ir_is_const(c, &v)) {
		k->index32 = v != 0;
		return;
	}
	GpuKernel *t = arena_alloc(ir_arena, sizeof *t);
	*t = *k;
	t->name = arena_printf(ir_arena, "%s_i32", k->name);
	t->index32 = true;
	k->i32 = t;
	k->i32_if = c;
}
