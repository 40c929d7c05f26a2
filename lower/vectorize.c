/* vectorize.c: turns vectorized loops of constant extent into vector code.
 *
 * The loop variable becomes ramp(min, 1, lanes) and every expression that
 * depends on it is widened: scalars are broadcast where they meet vectors,
 * loads and stores with a vector index touch `lanes` elements, and the
 * conditions of ifs and selects become predicates: a store under an if is
 * predicated by its condition, and every load under an if or inside a
 * select's branch is predicated by the condition that guards it (the
 * scalar code never evaluated it elsewhere, so the vector code must not
 * touch that memory either).  Ramp and broadcast arithmetic is folded by
 * simplify_expr afterwards (ramp(x, 1, 8) + x8(y*8) -> ramp(x + y*8, 1, 8)).
 *
 * Keep it simple: a body with a nested loop, an allocation, an assert, an
 * evaluated call, an intrinsic call, a store to an address that does not
 * depend on the loop variable (a reduction into one element), or vectors
 * already in it, is not vectorized: the loop is unrolled instead (a serial
 * loop if its extent is above unroll.c's limit).  A loop whose extent is
 * not a constant but has a constant bound n (a tile clamped at the edge)
 * runs n lanes under `if (x < min + extent)`, so the lanes past the extent
 * are masked; any other non-constant extent stays a serial loop.
 */
#include "lower/ir.h"

typedef struct {
	Var *var;            /* the loop variable */
	IrExpr *ramp;        /* its vector value */
	int lanes;
	IrExpr *pred;        /* lanes-wide condition of what is being widened */
	/* lets whose values became vectors: old variable -> vector variable */
	struct { Var *from, *to; } *lets;
	int nlets, caplets;
	bool failed;
} Vec;

static IrExpr *widen(Vec *v, IrExpr *e);

static IrExpr *
spread(Vec *v, IrExpr *e)
{
	return e->type.lanes == 1 ? ir_broadcast(e, v->lanes) : e;
}

static IrExpr *
and_pred(Vec *v, IrExpr *c)
{
	c = spread(v, c);
	return v->pred ? ir_binop(IR_AND, v->pred, c) : c;
}

/* Widens e under the extra condition c (NULL: none). */
static IrExpr *
widen_under(Vec *v, IrExpr *e, IrExpr *c)
{
	IrExpr *saved = v->pred;
	if (c)
		v->pred = and_pred(v, c);
	IrExpr *r = widen(v, e);
	v->pred = saved;
	return r;
}

static IrExpr **
widen_list(Vec *v, IrExpr **in, int n, bool *vec)
{
	IrExpr **out = arena_alloc(ir_arena, (n + 1) * sizeof *out);
	*vec = false;
	for (int i = 0; i < n; i++) {
		out[i] = widen(v, in[i]);
		*vec |= out[i]->type.lanes > 1;
	}
	return out;
}

static IrExpr *
widen_load(Vec *v, IrExpr *e)
{
	bool vec;
	int n = e->load.nidx;
	IrExpr **idx = widen_list(v, e->load.idx, n, &vec);
	if (e->a)
		v->failed = true;   /* already predicated: not from the lowering */
	if (!vec && !v->pred)
		return e;   /* the same element in every lane: a scalar load */
	if (!vec) {
		/* a guarded scalar load: every lane reads the same element, but
		 * only where the guard holds */
		if (n == 0) {
			v->failed = true;
			return e;
		}
		idx[n - 1] = spread(v, idx[n - 1]);
	}
	IrExpr *r = ir_load(e->load.buf, idx, n, v->pred, v->lanes);
	r->loc = e->loc;
	return r;
}

static IrExpr *
widen(Vec *v, IrExpr *e)
{
	IrExpr *a, *b, *c, **args;
	bool vec;
	if (v->failed)
		return e;
	switch (e->kind) {
	case IR_INT: case IR_FLOAT:
		return e;
	case IR_VAR:
		if (e->var == v->var)
			return v->ramp;
		for (int i = 0; i < v->nlets; i++)
			if (v->lets[i].from == e->var)
				return ir_var(v->lets[i].to);
		return e;
	case IR_RAMP: case IR_BROADCAST:
		v->failed = true;
		return e;
	case IR_LOAD:
		return widen_load(v, e);
	case IR_SELECT:
		a = widen(v, e->a);
		if (a->type.lanes == 1) {
			/* a scalar select stays one if its branches do */
			b = widen(v, e->b);
			c = widen(v, e->c);
			if (b->type.lanes == 1 && c->type.lanes == 1)
				return a == e->a && b == e->b && c == e->c ? e
				    : ir_select(a, b, c);
		}
		b = widen_under(v, e->b, a);
		c = widen_under(v, e->c, ir_unop(IR_NOT, spread(v, a)));
		return ir_select(spread(v, a), spread(v, b), spread(v, c));
	case IR_CAST:
		a = widen(v, e->a);
		return a == e->a ? e : ir_cast(ir_with_lanes(e->type, a->type.lanes), a);
	case IR_NOT: case IR_NEG: case IR_BITNOT:
		a = widen(v, e->a);
		return a == e->a ? e : ir_unop(e->kind, a);
	case IR_CALL:
		if (e->call.ck != CALL_BUILTIN) {
			v->failed = true;
			return e;
		}
		args = widen_list(v, e->call.args, e->call.nargs, &vec);
		if (!vec)
			return e;
		for (int i = 0; i < e->call.nargs; i++)
			args[i] = spread(v, args[i]);
		return ir_call_builtin(e->call.builtin,
		    ir_with_lanes(e->type, v->lanes), args, e->call.nargs);
	case IR_LET:
		a = widen(v, e->a);
		if (a->type.lanes == 1) {
			b = widen(v, e->b);
			return a == e->a && b == e->b ? e : ir_let(e->var, a, b);
		} else {
			Var *nv = ir_new_var(e->var->name, a->type);
			b = widen(v, ir_substitute(e->b, e->var, ir_var(nv)));
			return ir_let(nv, a, b);
		}
	default:   /* binary operators */
		a = widen(v, e->a);
		b = widen(v, e->b);
		if (a->type.lanes == 1 && b->type.lanes == 1)
			return a == e->a && b == e->b ? e : ir_binop(e->kind, a, b);
		return ir_binop(e->kind, spread(v, a), spread(v, b));
	}
}

static IrStmt *widen_stmt(Vec *v, IrStmt *s);

static IrStmt *
widen_store(Vec *v, IrStmt *s)
{
	bool vec;
	int n = s->store.nidx;
	if (s->store.pred) {
		v->failed = true;
		return s;
	}
	IrExpr **idx = widen_list(v, s->store.idx, n, &vec);
	IrExpr *val = widen(v, s->store.value);
	if (!vec) {
		/* every lane writes one element: a reduction, not vectorizable */
		v->failed = true;
		return s;
	}
	IrStmt *r = ir_store(s->store.buf, idx, n, spread(v, val), v->pred);
	r->loc = s->loc;
	return r;
}

static IrStmt *
widen_stmt(Vec *v, IrStmt *s)
{
	IrStmt *r = NULL;
	if (!s || v->failed)
		return s;
	switch (s->kind) {
	case IS_STORE:
		return widen_store(v, s);
	case IS_BLOCK: {
		IrStmt **out = arena_alloc(ir_arena, s->block.n * sizeof *out);
		for (int i = 0; i < s->block.n; i++)
			out[i] = widen_stmt(v, s->block.stmts[i]);
		r = ir_block(out, s->block.n);
		break;
	}
	case IS_IF: {
		IrExpr *c = widen(v, s->ifs.cond);
		if (c->type.lanes == 1 && c == s->ifs.cond) {
			/* the same in every lane: stays a branch */
			IrStmt *t = widen_stmt(v, s->ifs.then_s);
			IrStmt *f = widen_stmt(v, s->ifs.else_s);
			r = ir_if(c, t, f);
			break;
		}
		IrExpr *saved = v->pred;
		v->pred = and_pred(v, c);
		IrStmt *t = widen_stmt(v, s->ifs.then_s);
		v->pred = saved;
		v->pred = and_pred(v, ir_unop(IR_NOT, spread(v, c)));
		IrStmt *f = widen_stmt(v, s->ifs.else_s);
		v->pred = saved;
		r = ir_seq(t, f);
		break;
	}
	case IS_LET: {
		IrExpr *a = widen(v, s->let.value);
		Var *var = s->let.var;
		if (a->type.lanes > 1) {
			var = ir_new_var(var->name, a->type);
			__typeof__(v->lets) l = ARENA_PUSH(ir_arena, v->lets, v->nlets, v->caplets);
			l->from = s->let.var;
			l->to = var;
		}
		IrStmt *body = widen_stmt(v, s->let.body);
		if (!body)
			return NULL;
		r = ir_let_stmt(var, a, body);
		break;
	}
	case IS_PRODUCE: {
		IrStmt *body = widen_stmt(v, s->produce.body);
		if (!body)
			return NULL;
		r = ir_produce(s->produce.name, s->produce.update, body);
		break;
	}
	default:   /* loops, allocations, asserts, evaluates */
		v->failed = true;
		return s;
	}
	if (r)
		r->loc = s->loc;
	return r;
}

static IrStmt *
vectorize_for(IrMutator *m, IrStmt *s)
{
	IrStmt *loop = ir_mutate_stmt_children(m, s);
	if (!loop || loop->kind != IS_FOR || loop->loop.fk != FOR_VECTORIZED)
		return loop;
	int64_t n;
	IrExpr *ext = simplify_expr(loop->loop.extent, NULL);
	if (!ir_is_const(ext, &n) && bounds_const_max(ext, &n) && n >= 2 && n <= 64) {
		/* a bounded extent: all n lanes, those past the extent masked off */
		Var *x = loop->loop.var;
		IrStmt *body = ir_if(ir_binop(IR_LT, ir_var(x), ir_add(loop->loop.min, ext)),
		    loop->loop.body, NULL);
		loop = ir_for(x, loop->loop.min, ir_int(ext->type, n), FOR_VECTORIZED, body);
		ext = loop->loop.extent;
	}
	if (!ir_is_const(ext, &n) || n < 2 || n > 4096) {
		if (ir_is_const(ext, &n) && n <= 1)
			return simplify_stmt(loop);
		IrStmt *r = ir_for(loop->loop.var, loop->loop.min, loop->loop.extent,
		    FOR_SERIAL, loop->loop.body);
		r->loc = loop->loc;
		return r;
	}
	Vec v = {
		.var = loop->loop.var,
		.ramp = ir_ramp(loop->loop.min, ir_int(loop->loop.var->type, 1), (int)n),
		.lanes = (int)n,
	};
	IrStmt *body = widen_stmt(&v, loop->loop.body);
	if (v.failed) {
		IrStmt *u = ir_for(loop->loop.var, loop->loop.min, ext, FOR_UNROLLED,
		    loop->loop.body);
		u->loc = loop->loc;
		return unroll_loop(u);
	}
	return body ? simplify_stmt(body) : NULL;
}

IrStmt *
vectorize_loops(IrStmt *s)
{
	IrMutator m = {.stmt = {[IS_FOR] = vectorize_for}};
	return ir_mutate_stmt(&m, s);
}
