/* sizecheck.c: entry checks that no size computation overflows 64 bits.
 *
 * A caller's sizes are untrusted: `(N + 15)/16` wraps for N near
 * INT64_MAX, a packed panel's `K*16*4` bytes wrap to a small block that
 * the kernel then writes past, an offset `i*N + j` of a 2^32 x 2^32
 * tensor wraps.  This pass, run on the flattened nest, finds every size
 * computation: loop bounds and ends, the extents and byte counts of the
 * buffers (arguments and intermediates), the offsets of every access and
 * the index arithmetic of guards, intrinsic arguments and the other entry
 * checks.  For each integer +, -, * among them it bounds the value over
 * the loops (lin_interval: [lo, hi] in the sizes alone) and asks that lo
 * and hi be computed without overflow; an operation of the sizes alone
 * needs its operands in range (N <= INT64_MAX - 15, K <= INT64_MAX / 64).
 * By induction over the operations no value of the nest leaves 64 bits
 * when the checks pass (values are kept in [-INT64_MAX, INT64_MAX]).
 *
 * The conditions are entry asserts with the size error (code 2), one per
 * buffer or stage, placed after the sign and -D checks and before every
 * other check; all of these are marked `sizes` (ir_size_checks), and
 * every entry point, plain or DLPack, in either backend, makes them
 * before it looks at a tensor, so that the extents its NULL and shape
 * tests compute are in range.  Each condition is safe to evaluate once
 * the ones before it hold (the C backend tests them in order; LLVM code
 * wraps and divides only by constants or max(b, 1)).  They are computed
 * once per call, never in a loop.  The pass gives the conditions back
 * apart (sizecheck_checks); pipeline.c puts them in (sizecheck_insert)
 * after the last pass, and the simplifier leaves asserts marked `sizes`
 * alone: its folding would move constants near INT64_MAX across them.
 * In a specialized kernel each nest's conditions stay in its branch (they
 * assume its size floors); its sign checks come first.  A condition is left out where one
 * before it implies it: the same text, N <= c2 after N <= c1 with
 * c1 <= c2, or what the sizes' ranges, narrowed by the bounds checked so
 * far, prove (range, lin_prove_le); so a nest gets a few lines.  The
 * conditions are sufficient, not exact: the intervals may be wider than
 * the values (a guard is not used), so sizes within a small factor of
 * 2^63 may be refused.  An operation whose interval cannot be found (a
 * data-dependent index) is not checked.
 */
#include <string.h>

#include "lower/lower.h"

#define BIG INT64_MAX
#define SQRT_BIG 3037000499LL     /* floor(sqrt(INT64_MAX)) */

typedef struct {
	const char *msg;
	IrExpr **conds; int n, cap;
} Group;

/* a bound X <= k (le) or X >= k: a later, weaker one on X is left out */
typedef struct {
	const char *x;
	bool le;
	int64_t k;
} Bound;

typedef struct {
	Lower *L;
	VarRange *base;                       /* the sizes, >= 0 (or their floors) */
	Group *groups; int ngroups, capgroups;
	const char *msg;                      /* the group new conditions go to */
	const char **done; int ndone, capdone;  /* texts already handled */
	Bound *bounds; int nbounds, capbounds;
	int budget;                           /* lin_interval calls left */
} Sc;

/* ---- conditions ---------------------------------------------------------- */

static bool range(Sc *c, IrExpr *e, int64_t *lo, int64_t *hi);

static bool
once(Sc *c, const char *tag, IrExpr *e)
{
	const char *key = intern_cstr(arena_printf(ir_arena, "%s%s", tag, ir_expr_str(e)));
	for (int i = 0; i < c->ndone; i++)
		if (c->done[i] == key)
			return false;
	*ARENA_PUSH(ir_arena, c->done, c->ndone, c->capdone) = key;
	return true;
}

static Group *
group(Sc *c)
{
	for (int i = 0; i < c->ngroups; i++)
		if (c->groups[i].msg == c->msg)
			return &c->groups[i];
	Group *g = ARENA_PUSH(ir_arena, c->groups, c->ngroups, c->capgroups);
	memset(g, 0, sizeof *g);
	g->msg = c->msg;
	return g;
}

static void
add_cond(Sc *c, IrExpr *cond)
{
	int64_t k, v;
	bool le = cond->kind == IR_LE, ge = cond->kind == IR_GE;
	if (ir_is_const(cond, &v) && v)
		return;
	if (!once(c, "c:", cond))
		return;
	/* implied by the sizes' ranges and the bounds checked before it */
	int64_t lo, hi;
	if ((le || ge) && ir_is_const(cond->b, &k) && range(c, cond->a, &lo, &hi) &&
	    (le ? hi <= k : lo >= k))
		return;
	if ((le && lin_prove_le(cond->a, cond->b, c->base)) ||
	    (ge && lin_prove_le(cond->b, cond->a, c->base)))
		return;
	const char *x = NULL;
	if ((le || ge) && ir_is_const(cond->b, &k)) {
		x = intern_cstr(ir_expr_str(cond->a));
		for (int i = 0; i < c->nbounds; i++) {
			Bound *b = &c->bounds[i];
			if (b->x != x || b->le != le)
				continue;
			if (le ? k >= b->k : k <= b->k)
				return;     /* an earlier one implies it */
		}
	}
	Group *g = group(c);
	if (x) {
		Bound *b = ARENA_PUSH(ir_arena, c->bounds, c->nbounds, c->capbounds);
		b->x = x, b->le = le, b->k = k;
	}
	*ARENA_PUSH(ir_arena, g->conds, g->n, g->cap) = cond;
	/* a size's bound (N <= k, N + 2 <= k) narrows its range for the
	 * conditions after it */
	IrExpr *a = x ? cond->a : NULL;
	int64_t off = 0;
	if (a && a->kind == IR_ADD && ir_is_const(a->b, &off))
		a = a->a;
	if (le && a && a->kind == IR_VAR && !__builtin_sub_overflow(k, off, &k))
		for (VarRange *v = c->base; v; v = v->next)
			if (v->var == a->var) {
				c->base = lin_push(c->base, v->var, v->lo, ir_i64c(k), false);
				break;
			}
}

static LinConstRange range_sub;

/* Constant bounds of e from the sizes' ranges (the bounds checked so
 * far narrow them); false where one is not known or past 64 bits. */
static bool
range(Sc *c, IrExpr *e, int64_t *lo, int64_t *hi)
{
	if (!e || e->type.code != TY_I64 || e->type.lanes != 1)
		return false;
	switch (e->kind) {
	case IR_INT:
		*lo = *hi = e->ival;
		return true;
	case IR_VAR:
		for (VarRange *v = c->base; v; v = v->next)
			if (v->var == e->var)
				return v->lo && v->hi && ir_is_const(v->lo, lo) && ir_is_const(v->hi, hi);
		return false;
	default:
		return lin_const_range(e, range_sub, c, lo, hi);
	}
}

/* range as lin_const_range bounds an operand */
static bool
range_sub(void *ctx, IrExpr *e, int64_t *lo, int64_t *hi)
{
	return range(ctx, e, lo, hi);
}

static IrExpr *
le(IrExpr *x, IrExpr *y)
{
	return ir_binop(IR_LE, x, y);
}

static IrExpr *
ge(IrExpr *x, IrExpr *y)
{
	return ir_binop(IR_GE, x, y);
}

static IrExpr *
both(IrExpr *x, IrExpr *y)
{
	return ir_binop(IR_AND, x, y);
}

static bool
nonneg(Sc *c, IrExpr *e)
{
	int64_t v;
	if (ir_is_const(e, &v))
		return v >= 0;
	switch (e->kind) {
	case IR_ADD: case IR_MUL: case IR_MIN:
		if (nonneg(c, e->a) && nonneg(c, e->b))
			return true;
		break;
	case IR_MAX:
		if (nonneg(c, e->a) || nonneg(c, e->b))
			return true;
		break;
	case IR_DIV:
		if (nonneg(c, e->a) && ir_is_const(e->b, &v) && v > 0)
			return true;
		break;
	case IR_MOD:
		return true;      /* never negative (Halide's rule) */
	default:
		break;
	}
	return lin_prove_le(ir_i64c(0), e, c->base);
}

/* |x| <= k, k >= 0 */
static IrExpr *
within(Sc *c, IrExpr *x, int64_t k)
{
	IrExpr *up = le(x, ir_i64c(k));
	return nonneg(c, x) ? up : both(ge(x, ir_i64c(-k)), up);
}

/* The condition for a op b (operands in range) to stay in range. */
static void
op_ok(Sc *c, IrExprKind op, IrExpr *a, IrExpr *b)
{
	int64_t ka, kb, r;
	bool ca = ir_is_const(a, &ka), cb = ir_is_const(b, &kb);
	if (ca && cb) {
		bool o = op == IR_ADD ? __builtin_add_overflow(ka, kb, &r) :
		    op == IR_SUB ? __builtin_sub_overflow(ka, kb, &r) :
		    __builtin_mul_overflow(ka, kb, &r);
		if (o || r == INT64_MIN)
			add_cond(c, ir_bool_const(false));
		return;
	}
	if (ca && op != IR_SUB) {   /* the constant second */
		IrExpr *t = a;
		a = b, b = t;
		kb = ka, cb = true;
	}
	switch (op) {
	case IR_ADD:
		if (cb && kb >= 0)
			add_cond(c, le(a, ir_i64c(BIG - kb)));
		else if (cb)
			add_cond(c, nonneg(c, a) ? ir_bool_const(true) : ge(a, ir_i64c(-BIG - kb)));
		else if (nonneg(c, b))     /* a + b >= a */
			add_cond(c, le(a, ir_sub(ir_i64c(BIG), b)));
		else if (nonneg(c, a))
			add_cond(c, le(b, ir_sub(ir_i64c(BIG), a)));
		else
			add_cond(c, ir_select(ge(b, ir_i64c(0)), le(a, ir_sub(ir_i64c(BIG), b)),
			    ge(a, ir_sub(ir_i64c(-BIG), b))));
		break;
	case IR_SUB:
		if (cb && kb >= 0)
			add_cond(c, nonneg(c, a) ? ir_bool_const(true) : ge(a, ir_i64c(kb - BIG)));
		else if (cb)
			add_cond(c, le(a, ir_i64c(BIG + kb)));
		else if (ca && nonneg(c, b))
			add_cond(c, ka >= 0 ? ir_bool_const(true) : le(b, ir_i64c(ka + BIG)));
		else if (!(nonneg(c, a) && nonneg(c, b)))
			add_cond(c, ir_select(ge(b, ir_i64c(0)), ge(a, ir_add(ir_i64c(-BIG), b)),
			    le(a, ir_add(ir_i64c(BIG), b))));
		break;
	case IR_MUL:
		if (cb && kb == INT64_MIN) {
			add_cond(c, ir_bool_const(false));
		} else if (cb) {
			if (kb != 0 && kb != 1 && kb != -1)
				add_cond(c, within(c, a, BIG / (kb < 0 ? -kb : kb)));
		} else if (nonneg(c, a) || nonneg(c, b)) {
			/* |x| <= BIG / max(y, 1), y the one known >= 0 */
			bool bn = nonneg(c, b);
			IrExpr *x = bn ? a : b, *y = bn ? b : a;
			IrExpr *q = ir_div(ir_i64c(BIG), ir_max(y, ir_i64c(1)));
			add_cond(c, le(x, q));
			if (!nonneg(c, x) && !lin_prove_le(ir_i64c(-1), x, c->base))
				add_cond(c, ge(x, ir_unop(IR_NEG, q)));
		} else {
			add_cond(c, both(within(c, a, SQRT_BIG), within(c, b, SQRT_BIG)));
		}
		break;
	default:
		break;
	}
}

/* ---- expressions ------------------------------------------------------------ */

static bool
is_i64(IrExpr *e)
{
	return e && e->type.code == TY_I64 && e->type.lanes == 1;
}

/* Only parameters of the entry point, no loads or calls. */
static bool
of_params(Sc *c, IrExpr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case IR_INT:
		return true;
	case IR_VAR:
		for (int i = 0; i < c->L->k->nparams; i++)
			if (c->L->params[i] == e->var)
				return true;
		return false;
	case IR_LOAD: case IR_CALL: case IR_LET: case IR_RAMP: case IR_BROADCAST: case IR_FLOAT:
		return false;
	default:
		return of_params(c, e->a) && of_params(c, e->b) && of_params(c, e->c);
	}
}

static bool
arith(IrExpr *e)
{
	return is_i64(e) && (e->kind == IR_ADD || e->kind == IR_SUB || e->kind == IR_MUL);
}

/* e of the parameters alone: every operation in range, innermost first. */
static void
need_static(Sc *c, IrExpr *e)
{
	if (!e || e->kind == IR_INT || e->kind == IR_VAR || !once(c, "s:", e))
		return;
	need_static(c, e->a);
	need_static(c, e->b);
	need_static(c, e->c);
	if (arith(e))
		op_ok(c, e->kind, e->a, e->b);
}

static void scan(Sc *c, IrExpr *e, VarRange *r);

/* e, an integer expression of the nest (loop variables in r): each
 * operation's interval computed in range. */
static void
need(Sc *c, IrExpr *e, VarRange *r)
{
	if (!e || e->kind == IR_INT || e->kind == IR_VAR)
		return;
	if (!is_i64(e) || e->kind == IR_LOAD || e->kind == IR_CALL) {
		scan(c, e, r);
		return;
	}
	if (of_params(c, e)) {
		need_static(c, e);
		return;
	}
	if (!once(c, arena_printf(ir_arena, "n%p:", (void *)r), e))
		return;
	need(c, e->a, r);
	need(c, e->b, r);
	need(c, e->c, r);
	IrExpr *lo, *hi;
	if (arith(e) && c->budget > 0 && (c->budget--, lin_interval(e, r, NULL, &lo, &hi)) &&
	    of_params(c, lo) && of_params(c, hi)) {
		need_static(c, lo);
		need_static(c, hi);
	}
}

/* The integer arithmetic inside e: indices of its loads (under the
 * buffer's name), arguments of calls. */
static void
scan(Sc *c, IrExpr *e, VarRange *r)
{
	if (!e)
		return;
	if (is_i64(e) && e->kind != IR_LOAD && e->kind != IR_CALL) {
		need(c, e, r);
		return;
	}
	if (e->kind == IR_LOAD) {
		const char *was = c->msg;
		c->msg = arena_printf(ir_arena, "%s: the sizes overflow 64 bits in the offsets of '%s'",
		    c->L->k->name, e->load.buf->name);
		for (int i = 0; i < e->load.nidx; i++)
			need(c, e->load.idx[i], r);
		c->msg = was;
	} else if (e->kind == IR_CALL) {
		for (int i = 0; i < e->call.nargs; i++)
			scan(c, e->call.args[i], r);
	}
	scan(c, e->a, r);
	scan(c, e->b, r);
	scan(c, e->c, r);
}

/* The element and byte counts of b, each extent at its largest. */
static void
buffer_size(Sc *c, Buffer *b, VarRange *r)
{
	const char *was = c->msg;
	char *dims = "";
	for (int d = 0; d < b->ndims; d++)
		dims = arena_printf(ir_arena, "%s%s%s", dims, d ? ", " : "",
		    b->extent[d] ? ir_expr_str(b->extent[d]) : "?");
	c->msg = arena_printf(ir_arena, "%s: the sizes give '%s' (%s[%s]) more bytes than 64 bits count",
	    c->L->k->name, b->name, type_name(b->elem), dims);
	int bits = ir_bits(b->elem);
	IrExpr *bytes = ir_i64c(bits < 8 ? 1 : bits / 8);
	for (int d = b->ndims - 1; d >= 0; d--) {
		IrExpr *e = b->extent[d], *lo, *hi = e;
		if (!e)
			goto out;
		need(c, e, r);
		if (!of_params(c, e)) {
			if (c->budget <= 0 || (c->budget--, !lin_interval(e, r, NULL, &lo, &hi)) ||
			    !of_params(c, hi))
				goto out;
		}
		/* a negative extent is an empty buffer: count it as 0 */
		if (!nonneg(c, hi))
			hi = ir_max(hi, ir_i64c(0));
		int64_t kh, kn, p;
		if (ir_is_const(hi, &kh) && ir_is_const(bytes, &kn) && !__builtin_mul_overflow(kh, kn, &p))
			bytes = ir_i64c(p);
		else if (ir_is_const(bytes, &kn) && kn == 1)
			bytes = hi;
		else
			bytes = ir_mul(hi, bytes);
		need_static(c, bytes);
	}
out:
	c->msg = was;
}

/* ---- statements -------------------------------------------------------------- */

static void
walk(Sc *c, IrStmt *s, VarRange *r)
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_FOR: {
		IrExpr *mn = s->loop.min, *ext = s->loop.extent;
		int64_t z;
		need(c, mn, r);
		need(c, ext, r);
		IrExpr *end = ir_is_const(mn, &z) && z == 0 ? ext : ir_add(mn, ext);
		need(c, end, r);
		walk(c, s->loop.body, lin_push(r, s->loop.var, mn, ir_sub(end, ir_i64c(1)), true));
		break;
	}
	case IS_LET: {
		IrExpr *lo, *hi;
		need(c, s->let.value, r);
		if (is_i64(s->let.value) && lin_interval(s->let.value, r, NULL, &lo, &hi))
			r = lin_push(r, s->let.var, lo, hi, true);
		walk(c, s->let.body, r);
		break;
	}
	case IS_ALLOCATE:
		buffer_size(c, s->alloc.buf, r);
		walk(c, s->alloc.body, r);
		break;
	case IS_STORE: {
		const char *was = c->msg;
		c->msg = arena_printf(ir_arena, "%s: the sizes overflow 64 bits in the offsets of '%s'",
		    c->L->k->name, s->store.buf->name);
		for (int i = 0; i < s->store.nidx; i++)
			need(c, s->store.idx[i], r);
		c->msg = was;
		scan(c, s->store.value, r);
		scan(c, s->store.pred, r);
		break;
	}
	case IS_IF:
		scan(c, s->ifs.cond, r);
		walk(c, s->ifs.then_s, r);
		walk(c, s->ifs.else_s, r);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			walk(c, s->block.stmts[i], r);
		break;
	case IS_EVALUATE:
		scan(c, s->eval.value, r);
		break;
	case IS_ASSERT:
		scan(c, s->assrt.cond, r);
		break;
	case IS_PRODUCE: {
		const char *was = c->msg;
		if (s->produce.name)
			c->msg = arena_printf(ir_arena, "%s: the sizes overflow 64 bits in the loops of '%s'",
			    c->L->k->name, s->produce.name);
		walk(c, s->produce.body, r);
		c->msg = was;
		break;
	}
	default:
		break;
	}
}

/* ---- the pass ------------------------------------------------------------------- */

static bool
base_check(Lower *L, IrStmt *s)
{
	for (int i = 0; i < L->nbase_checks; i++)
		if (L->checks[i]->assrt.msg == s->assrt.msg)
			return true;
	return false;
}

IrStmt *
sizecheck_checks(Lower *L, IrStmt *body)
{
	if (!body)
		return NULL;
	Sc c = { .L = L, .budget = 20000 };
	c.msg = arena_printf(ir_arena, "%s: the sizes overflow 64 bits in its checks", L->k->name);
	/* the sizes' ranges (>= 0, or a specialization's floor) */
	for (VarRange *v = L->ranges; v; v = v->next)
		for (int i = 0; i < L->k->nparams; i++)
			if (L->k->params[i].is_size && v->var == L->params[i] && !v->ranging) {
				bool seen = false;
				for (VarRange *w = c.base; w; w = w->next)
					seen |= w->var == v->var;
				if (!seen)
					c.base = lin_push(c.base, v->var, v->lo, v->hi, false);
			}
	/* the leading sign and -D checks are the sizes' too */
	IrStmt **in = body->kind == IS_BLOCK ? body->block.stmts : &body;
	int n = body->kind == IS_BLOCK ? body->block.n : 1;
	for (int i = 0; i < n && in[i]->kind == IS_ASSERT; i++)
		if (base_check(L, in[i]))
			in[i]->assrt.sizes = true;
	/* the arguments first: a caller's tensor is counted even where the
	 * nest touches none of it */
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->buf->abi_index >= 0)
			buffer_size(&c, L->stages[i]->buf, c.base);
	walk(&c, body, c.base);
	IrStmt *out = NULL;
	for (int g = 0; g < c.ngroups; g++) {
		IrExpr *cond = NULL;
		for (int i = 0; i < c.groups[g].n; i++)
			cond = cond ? both(cond, c.groups[g].conds[i]) : c.groups[g].conds[i];
		IrStmt *a = ir_assert(cond, 2, c.groups[g].msg);
		a->assrt.sizes = true;
		out = ir_seq(out, a);
	}
	return out;
}

IrStmt *
sizecheck_insert(IrStmt *body, IrStmt *checks)
{
	if (!checks || !body)
		return body ? body : checks;
	/* after the leading sign and -D checks */
	IrStmt **in = body->kind == IS_BLOCK ? body->block.stmts : &body;
	int n = body->kind == IS_BLOCK ? body->block.n : 1, at = 0;
	for (int i = 0; i < n && in[i]->kind == IS_ASSERT; i++)
		if (in[i]->assrt.sizes)
			at = i + 1;
	IrStmt **out = arena_alloc(ir_arena, (size_t)(n + 2) * sizeof *out);
	int m = 0;
	for (int i = 0; i < at; i++)
		out[m++] = in[i];
	out[m++] = checks;
	for (int i = at; i < n; i++)
		out[m++] = in[i];
	return ir_block(out, m);
}
