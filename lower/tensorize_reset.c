/* tensorize_reset.c: tensorize's reset form.  Where an fma_outer call
 * is the whole update of its tile, the call gets an argument `first`
 * (start from zero) and the initialisation nest shrinks to the case of
 * an empty reduction (details below). */
#include <string.h>

#include "lower/tensorize.h"

/* ---- the reset form ---------------------------------------------------
 * The initialisation nest `S[...] = 0` is a second pass over the output
 * whose tile guards also make partition.c copy every loop around it.
 * When the update is exactly one fma_outer call per tile (no fallback
 * loops) and the reduction loops around the call have extents that only
 * depend on parameters, the call gets a last argument `first`: true when
 * every such loop is at its first iteration.  The micro-kernel then
 * starts from zero instead of loading the block, and the initialisation
 * nest runs only when the reduction is empty (some of those loops have
 * no iteration, so no call ever writes the output). */

static bool
only_params_fn(IrExpr *e, Lower *L)
{
	if (e->kind == IR_VAR) {
		for (int i = 0; i < L->k->nparams; i++)
			if (L->params[i] == e->var)
				return true;
		return false;
	}
	if (e->a && !only_params_fn(e->a, L))
		return false;
	if (e->b && !only_params_fn(e->b, L))
		return false;
	if (e->c && !only_params_fn(e->c, L))
		return false;
	if (e->kind == IR_LOAD)
		return false;
	if (e->kind == IR_CALL)
		for (int i = 0; i < e->call.nargs; i++)
			if (!only_params_fn(e->call.args[i], L))
				return false;
	return true;
}

static bool
red_loop(LStage *s, Var *v)
{
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].var == v)
			return s->axes[i].red;
	return false;
}

/* Decides the reset form for the call being built; sets t->reset and
 * t->empty, and gives the `first` argument. */
IrExpr *
tz_reset_arg(Tz *t, IrExpr *cond)
{
	if (cond || !t->init || !ir_fma_outer_lanes(t->k->intr_emit))
		return ir_i64c(0);
	IrExpr *first = NULL, *empty = NULL;
	for (int i = 0; i < t->nouter; i++) {
		IrStmt *l = t->outer[i];
		if (!red_loop(t->rq->s, l->loop.var))
			continue;
		if (l->loop.fk != FOR_SERIAL && l->loop.fk != FOR_UNROLLED)
			return ir_i64c(0);
		if (!only_params_fn(l->loop.min, t->L) || !only_params_fn(l->loop.extent, t->L))
			return ir_i64c(0);
		IrExpr *f = ir_binop(IR_EQ, ir_var(l->loop.var), l->loop.min);
		first = first ? ir_binop(IR_AND, first, f) : f;
		int64_t c;
		if ((ir_is_const(l->loop.extent, &c) && c > 0) ||
		    lin_prove_le(ir_i64c(1), l->loop.extent, t->L->ranges))
			continue;
		IrExpr *e = ir_binop(IR_LE, l->loop.extent, ir_i64c(0));
		empty = empty ? ir_binop(IR_OR, empty, e) : e;
	}
	t->reset = true;
	t->empty = empty;
	return first ? ir_select(first, ir_i64c(1), ir_i64c(0)) : ir_i64c(1);
}

/* Whether s only stores the identity 0 into b (an initialisation nest). */
bool
tz_init_like(IrStmt *s, Buffer *b)
{
	switch (s->kind) {
	case IS_FOR:
		return tz_init_like(s->loop.body, b);
	case IS_LET:
		return tz_init_like(s->let.body, b);
	case IS_IF:
		return !s->ifs.else_s && tz_init_like(s->ifs.then_s, b);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			if (!tz_init_like(s->block.stmts[i], b))
				return false;
		return true;
	case IS_STORE: {
		IrExpr *v = s->store.value;
		int64_t c;     /* 0.0, or the integer 0 of an i32 sum (int8 tables) */
		return s->store.buf == b && !s->store.pred && v->type.lanes == 1 &&
		    ((v->kind == IR_FLOAT && v->fval == 0.0) || (ir_is_const(v, &c) && c == 0));
	}
	default:
		return false;
	}
}

/* The statement just before `produce NAME update` in its block. */
IrStmt *
tz_find_init(IrStmt *s, const char *name)
{
	if (!s)
		return NULL;
	switch (s->kind) {
	case IS_FOR:
		return tz_find_init(s->loop.body, name);
	case IS_LET:
		return tz_find_init(s->let.body, name);
	case IS_ALLOCATE:
		return tz_find_init(s->alloc.body, name);
	case IS_IF: {
		IrStmt *r = tz_find_init(s->ifs.then_s, name);
		return r ? r : tz_find_init(s->ifs.else_s, name);
	}
	case IS_PRODUCE:
		return tz_find_init(s->produce.body, name);
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++) {
			IrStmt *c = s->block.stmts[i];
			if (c->kind == IS_PRODUCE && c->produce.update && c->produce.name == name)
				return i > 0 ? s->block.stmts[i - 1] : NULL;
			IrStmt *r = tz_find_init(c, name);
			if (r)
				return r;
		}
		return NULL;
	default:
		return NULL;
	}
}

/* s without the statement `drop` (kept: everything else). */
typedef struct {
	IrMutator m;
	IrStmt *drop;
	const char *name;       /* slice: keep only the path to drop */
} Cut;

static IrStmt *
cut_block(IrMutator *m, IrStmt *s)
{
	Cut *c = (Cut *)m;
	IrStmt **out = arena_alloc(ir_arena, s->block.n * sizeof *out);
	for (int i = 0; i < s->block.n; i++)
		out[i] = s->block.stmts[i] == c->drop ? NULL : ir_mutate_stmt(m, s->block.stmts[i]);
	return ir_block(out, s->block.n);
}

static const IrMutator cut_table = { .stmt = { [IS_BLOCK] = cut_block } };

/* The loops around `keep` with nothing else in them: the stages computed
 * at those loops, their allocations and the update are left out. */
IrStmt *
tz_slice(IrStmt *s, IrStmt *keep)
{
	if (!s)
		return NULL;
	if (s == keep)
		return s;
	IrStmt *b;
	switch (s->kind) {
	case IS_FOR:
		if (!(b = tz_slice(s->loop.body, keep)))
			return NULL;
		return ir_for_like(s, s->loop.min, s->loop.extent, b);
	case IS_LET:
		if (!(b = tz_slice(s->let.body, keep)))
			return NULL;
		return ir_let_stmt(s->let.var, s->let.value, b);
	case IS_ALLOCATE:
		return tz_slice(s->alloc.body, keep);
	case IS_IF:
		if (s->ifs.else_s || !(b = tz_slice(s->ifs.then_s, keep)))
			return NULL;
		return ir_if(s->ifs.cond, b, NULL);
	case IS_PRODUCE:
		if (!(b = tz_slice(s->produce.body, keep)))
			return NULL;
		return ir_produce(s->produce.name, s->produce.update, b);
	case IS_BLOCK: {
		IrStmt **out = arena_alloc(ir_arena, s->block.n * sizeof *out);
		for (int i = 0; i < s->block.n; i++)
			out[i] = tz_slice(s->block.stmts[i], keep);
		return ir_block(out, s->block.n);
	}
	default:
		return NULL;
	}
}

/* In the initialisation nest, the loops of the intrinsic's pure axes
 * (the same variables as in the matched nest) and their store become the
 * call with no k step and `first` set: it stores a block of zeros. */
typedef struct {
	IrMutator m;
	Tz *t;
	IrExpr *call;
} ZeroCall;

static IrStmt *
zero_for(IrMutator *m, IrStmt *s)
{
	ZeroCall *z = (ZeroCall *)m;
	Tz *t = z->t;
	int npure = t->rule->naxes, l;
	for (l = 0; l < t->n && t->var[l] != s->loop.var; l++)
		;
	if (l == t->n)
		return ir_mutate_stmt_children(m, s);
	IrStmt *b = s;
	for (int i = 0; i < npure; i++) {
		if (b->kind != IS_FOR || b->loop.var != t->var[t->map[i]] ||
		    !ir_expr_equal(b->loop.min, t->min[t->map[i]]))
			return s;
		b = b->loop.body;
	}
	if (b->kind == IS_IF && !b->ifs.else_s)
		b = b->ifs.then_s;
	if (b->kind != IS_STORE)
		return s;
	IrStmt *r = ir_evaluate(z->call);
	r->loc = t->rq->loc;
	return r;
}

static IrStmt *
zero_nest(Tz *t, IrStmt *s, IrExpr **args, int na)
{
	if (!ir_fma_outer_lanes(t->k->intr_emit) || na != FMA_OUTER_NARGS ||
	    t->rule->naxes != 2)
		return s;
	IrExpr *z[FMA_OUTER_NARGS];
	memcpy(z, args, sizeof z);
	z[2] = ir_i64c(0);                 /* no k step */
	z[6] = z[9] = args[3];             /* a and b are never read (their
					     * strides stay: the same kernel) */
	z[12] = ir_i64c(1);
	ZeroCall zc;
	memset(&zc, 0, sizeof zc);
	zc.m.stmt[IS_FOR] = zero_for;
	zc.t = t;
	zc.call = ir_call_intrinsic(t->k->intr_emit, ir_i32, z, FMA_OUTER_NARGS);
	zc.call->call.tz = t->callx ? t->callx->call.tz : NULL;
	return ir_mutate_stmt(&zc.m, s);
}

/* produce S (the initialisation and update) with the initialisation
 * nest run only when the reduction is empty. */
IrStmt *
tz_reset_produce(Tz *t, IrStmt *p)
{
	Cut c = { cut_table, t->init, NULL };
	IrStmt *main = ir_mutate_stmt(&c.m, p->produce.body);
	IrStmt *body = main;
	if (t->empty) {
		IrStmt *only = tz_slice(p->produce.body, t->init);
		only = only ? zero_nest(t, only, t->callx->call.args, t->callx->call.nargs) : NULL;
		if (only)
			body = ir_seq(ir_if(t->empty, only, NULL), main);
	}
	IrStmt *r = ir_produce(p->produce.name, false, body);
	r->loc = p->loc;
	return r;
}

