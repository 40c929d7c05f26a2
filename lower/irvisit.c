/* irvisit.c: the IR's visitor and mutator, and substitution built on them.
 *
 * A pass fills an IrMutator (or IrVisitor) table with the kinds it cares
 * about; every other kind goes to the default, which walks the children.
 * The default mutation rebuilds a node through its constructor (so types
 * and lanes are recomputed and checked) only when a child changed, and
 * returns the same node otherwise, so unchanged subtrees stay shared.
 */
#include <string.h>

#include "lower/ir.h"

/* ---- mutator ---------------------------------------------------------- */

IrExpr *
ir_mutate_expr(IrMutator *m, IrExpr *e)
{
	if (!e)
		return NULL;
	if (m->expr[e->kind])
		return m->expr[e->kind](m, e);
	return ir_mutate_expr_children(m, e);
}

IrStmt *
ir_mutate_stmt(IrMutator *m, IrStmt *s)
{
	if (!s)
		return NULL;
	if (m->stmt[s->kind])
		return m->stmt[s->kind](m, s);
	return ir_mutate_stmt_children(m, s);
}

/* Mutates n expressions; returns a new array if any changed, else NULL. */
static IrExpr **
mutate_list(IrMutator *m, IrExpr **v, int n)
{
	IrExpr **out = NULL;
	for (int i = 0; i < n; i++) {
		IrExpr *x = ir_mutate_expr(m, v[i]);
		if (x != v[i] && !out) {
			out = arena_alloc(ir_arena, n * sizeof *out);
			memcpy(out, v, n * sizeof *out);
		}
		if (out)
			out[i] = x;
	}
	return out;
}

static int
max_lanes(IrExpr **v, int n, int lanes)
{
	for (int i = 0; i < n; i++)
		if (v[i] && v[i]->type.lanes > lanes)
			lanes = v[i]->type.lanes;
	return lanes;
}

IrExpr *
ir_mutate_expr_children(IrMutator *m, IrExpr *e)
{
	IrExpr *a, *b, *c, **list, *r;
	switch (e->kind) {
	case IR_INT: case IR_FLOAT: case IR_VAR:
		return e;
	case IR_LOAD:
		a = ir_mutate_expr(m, e->a);
		list = mutate_list(m, e->load.idx, e->load.nidx);
		if (a == e->a && !list)
			return e;
		if (!list)
			list = e->load.idx;
		r = ir_load(e->load.buf, list, e->load.nidx, a,
		    max_lanes(list, e->load.nidx, a ? a->type.lanes : e->type.lanes));
		break;
	case IR_CALL:
		list = mutate_list(m, e->call.args, e->call.nargs);
		if (!list)
			return e;
		if (e->call.ck == CALL_BUILTIN)
			r = ir_call_builtin(e->call.builtin, ir_with_lanes(e->type,
			    max_lanes(list, e->call.nargs, 1)), list, e->call.nargs);
		else
			r = ir_call_intrinsic_like(e, list);
		break;
	default:
		a = ir_mutate_expr(m, e->a);
		b = ir_mutate_expr(m, e->b);
		c = ir_mutate_expr(m, e->c);
		if (a == e->a && b == e->b && c == e->c)
			return e;
		switch (e->kind) {
		case IR_NOT: case IR_NEG: case IR_BITNOT:
			r = ir_unop(e->kind, a);
			break;
		case IR_SELECT:
			r = ir_select(a, b, c);
			break;
		case IR_CAST:
			r = ir_cast(ir_with_lanes(e->type, a->type.lanes), a);
			break;
		case IR_RAMP:
			r = ir_ramp(a, b, e->type.lanes);
			break;
		case IR_BROADCAST:
			r = ir_broadcast(a, e->type.lanes);
			break;
		case IR_LET:
			r = ir_let(e->var, a, b);
			break;
		default:
			r = ir_binop(e->kind, a, b);
			break;
		}
		break;
	}
	r->loc = e->loc;
	return r;
}

IrStmt *
ir_mutate_stmt_children(IrMutator *m, IrStmt *s)
{
	IrStmt *r = NULL, *body, *t, *f;
	IrExpr *a, *b, *c, **list;
	switch (s->kind) {
	case IS_FOR:
		a = ir_mutate_expr(m, s->loop.min);
		b = ir_mutate_expr(m, s->loop.extent);
		body = ir_mutate_stmt(m, s->loop.body);
		if (a == s->loop.min && b == s->loop.extent && body == s->loop.body)
			return s;
		if (!body)
			return NULL;
		r = ir_for_like(s, a, b, body);
		break;
	case IS_LET:
		a = ir_mutate_expr(m, s->let.value);
		body = ir_mutate_stmt(m, s->let.body);
		if (a == s->let.value && body == s->let.body)
			return s;
		if (!body)
			return NULL;
		r = ir_let_stmt(s->let.var, a, body);
		break;
	case IS_STORE:
		list = mutate_list(m, s->store.idx, s->store.nidx);
		a = ir_mutate_expr(m, s->store.value);
		b = ir_mutate_expr(m, s->store.pred);
		if (a == s->store.value && b == s->store.pred && !list)
			return s;
		r = ir_store(s->store.buf, list ? list : s->store.idx,
		    s->store.nidx, a, b);
		break;
	case IS_ALLOCATE:
		body = ir_mutate_stmt(m, s->alloc.body);
		if (body == s->alloc.body)
			return s;
		if (!body)
			return NULL;
		r = ir_allocate(s->alloc.buf, body);
		break;
	case IS_IF:
		c = ir_mutate_expr(m, s->ifs.cond);
		t = ir_mutate_stmt(m, s->ifs.then_s);
		f = ir_mutate_stmt(m, s->ifs.else_s);
		if (c == s->ifs.cond && t == s->ifs.then_s && f == s->ifs.else_s)
			return s;
		if (!t && !f)
			return NULL;
		if (!t)
			r = ir_if(ir_unop(IR_NOT, c), f, NULL);
		else
			r = ir_if(c, t, f);
		break;
	case IS_BLOCK: {
		IrStmt **v = NULL;
		for (int i = 0; i < s->block.n; i++) {
			IrStmt *x = ir_mutate_stmt(m, s->block.stmts[i]);
			if (x != s->block.stmts[i] && !v) {
				v = arena_alloc(ir_arena, s->block.n * sizeof *v);
				memcpy(v, s->block.stmts, s->block.n * sizeof *v);
			}
			if (v)
				v[i] = x;
		}
		if (!v)
			return s;
		r = ir_block(v, s->block.n);
		if (!r)
			return NULL;
		break;
	}
	case IS_EVALUATE:
		a = ir_mutate_expr(m, s->eval.value);
		if (a == s->eval.value)
			return s;
		r = ir_evaluate(a);
		break;
	case IS_ASSERT:
		a = ir_mutate_expr(m, s->assrt.cond);
		if (a == s->assrt.cond)
			return s;
		r = ir_assert(a, s->assrt.code, s->assrt.msg);
		r->assrt.sizes = s->assrt.sizes;
		break;
	case IS_PRODUCE:
		body = ir_mutate_stmt(m, s->produce.body);
		if (body == s->produce.body)
			return s;
		if (!body)
			return NULL;
		r = ir_produce(s->produce.name, s->produce.update, body);
		r->produce.prefetch = s->produce.prefetch;
		r->produce.async = s->produce.async;
		break;
	default:
		ICE("mutating statement kind %d", (int)s->kind);
	}
	if (r->loc.file == 0)
		r->loc = s->loc;
	return r;
}

/* ---- visitor ---------------------------------------------------------- */

void
ir_visit_expr(IrVisitor *v, IrExpr *e)
{
	if (!e)
		return;
	if (v->expr[e->kind])
		v->expr[e->kind](v, e);
	else
		ir_visit_expr_children(v, e);
}

void
ir_visit_stmt(IrVisitor *v, IrStmt *s)
{
	if (!s)
		return;
	if (v->stmt[s->kind])
		v->stmt[s->kind](v, s);
	else
		ir_visit_stmt_children(v, s);
}

void
ir_visit_expr_children(IrVisitor *v, IrExpr *e)
{
	ir_visit_expr(v, e->a);
	ir_visit_expr(v, e->b);
	ir_visit_expr(v, e->c);
	if (e->kind == IR_LOAD)
		for (int i = 0; i < e->load.nidx; i++)
			ir_visit_expr(v, e->load.idx[i]);
	else if (e->kind == IR_CALL)
		for (int i = 0; i < e->call.nargs; i++)
			ir_visit_expr(v, e->call.args[i]);
}

void
ir_visit_stmt_children(IrVisitor *v, IrStmt *s)
{
	switch (s->kind) {
	case IS_FOR:
		ir_visit_expr(v, s->loop.min);
		ir_visit_expr(v, s->loop.extent);
		ir_visit_stmt(v, s->loop.body);
		break;
	case IS_LET:
		ir_visit_expr(v, s->let.value);
		ir_visit_stmt(v, s->let.body);
		break;
	case IS_STORE:
		for (int i = 0; i < s->store.nidx; i++)
			ir_visit_expr(v, s->store.idx[i]);
		ir_visit_expr(v, s->store.value);
		ir_visit_expr(v, s->store.pred);
		break;
	case IS_ALLOCATE:
		ir_visit_stmt(v, s->alloc.body);
		break;
	case IS_IF:
		ir_visit_expr(v, s->ifs.cond);
		ir_visit_stmt(v, s->ifs.then_s);
		ir_visit_stmt(v, s->ifs.else_s);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			ir_visit_stmt(v, s->block.stmts[i]);
		break;
	case IS_EVALUATE:
		ir_visit_expr(v, s->eval.value);
		break;
	case IS_ASSERT:
		ir_visit_expr(v, s->assrt.cond);
		break;
	case IS_PRODUCE:
		ir_visit_stmt(v, s->produce.body);
		break;
	default:
		ICE("visiting statement kind %d", (int)s->kind);
	}
}

/* ---- substitution and uses -------------------------------------------- */

typedef struct {
	IrMutator m;
	Var *var;
	IrExpr *value;
} Subst;

static IrExpr *
subst_var(IrMutator *m, IrExpr *e)
{
	Subst *s = (Subst *)m;
	return e->var == s->var ? s->value : e;
}

/* ---- buffers allocated under a substitution --------------------------- */

static bool
uses_any(IrExpr **v, int n, Var *var)
{
	for (int i = 0; v && i < n; i++)
		if (v[i] && ir_uses_var(v[i], var))
			return true;
	return false;
}

static bool
buffer_uses_var(Buffer *b, Var *v)
{
	return uses_any(b->min, b->ndims, v) || uses_any(b->extent, b->ndims, v) ||
	    uses_any(b->stride, b->ndims, v);
}

static IrExpr **
subst_list(IrExpr **v, int n, Var *var, IrExpr *value)
{
	if (!v)
		return NULL;
	IrExpr **out = arena_alloc(ir_arena, (n + 1) * sizeof *out);
	for (int i = 0; i < n; i++)
		out[i] = v[i] ? ir_substitute(v[i], var, value) : NULL;
	return out;
}

typedef struct {
	IrMutator m;
	Buffer *from, *to;
} Redirect;

static IrExpr *
redirect_load(IrMutator *m, IrExpr *e)
{
	Redirect *r = (Redirect *)m;
	IrExpr *x = ir_mutate_expr_children(m, e);
	if (x->load.buf != r->from)
		return x;
	IrExpr *n = ir_load(r->to, x->load.idx, x->load.nidx, x->a, x->type.lanes);
	n->loc = e->loc;
	return n;
}

static IrStmt *
redirect_store(IrMutator *m, IrStmt *s)
{
	Redirect *r = (Redirect *)m;
	IrStmt *x = ir_mutate_stmt_children(m, s);
	if (!x || x->store.buf != r->from)
		return x;
	IrStmt *n = ir_store(r->to, x->store.idx, x->store.nidx, x->store.value, x->store.pred);
	n->loc = s->loc;
	return n;
}

/* An allocation whose buffer's size names the variable: the buffer is
 * copied with the variable replaced (its min, extent and stride are not
 * expressions of the tree, and the same buffer may be allocated elsewhere
 * -- in the other copies of an unrolled body), and the accesses in the
 * body move to the copy. */
static IrStmt *
subst_alloc(IrMutator *m, IrStmt *s)
{
	Subst *sb = (Subst *)m;
	Buffer *b = s->alloc.buf;
	IrStmt *body = ir_mutate_stmt(m, s->alloc.body);
	if (!body)
		return NULL;
	if (!buffer_uses_var(b, sb->var)) {
		if (body == s->alloc.body)
			return s;
		IrStmt *r = ir_allocate(b, body);
		r->loc = s->loc;
		return r;
	}
	Buffer *n = arena_alloc(ir_arena, sizeof *n);
	*n = *b;
	n->min = subst_list(b->min, b->ndims, sb->var, sb->value);
	n->extent = subst_list(b->extent, b->ndims, sb->var, sb->value);
	n->stride = subst_list(b->stride, b->ndims, sb->var, sb->value);
	Redirect rd = {{.expr = {[IR_LOAD] = redirect_load}, .stmt = {[IS_STORE] = redirect_store}},
		b, n};
	body = ir_mutate_stmt(&rd.m, body);
	IrStmt *r = ir_allocate(n, body);
	r->loc = s->loc;
	return r;
}

static const IrMutator subst_table = {
	.expr = {[IR_VAR] = subst_var},
	.stmt = {[IS_ALLOCATE] = subst_alloc},
};

IrExpr *
ir_substitute(IrExpr *e, Var *v, IrExpr *value)
{
	Subst s = {subst_table, v, value};
	return ir_mutate_expr(&s.m, e);
}

IrStmt *
ir_substitute_stmt(IrStmt *st, Var *v, IrExpr *value)
{
	Subst s = {subst_table, v, value};
	return ir_mutate_stmt(&s.m, st);
}

typedef struct {
	IrVisitor v;
	ForKind fk;
	bool found;
} HasLoop;

static void
has_loop_for(IrVisitor *v, IrStmt *s)
{
	HasLoop *h = (HasLoop *)v;
	if (s->loop.fk == h->fk)
		h->found = true;
	else
		ir_visit_stmt_children(v, s);
}

bool
ir_has_loop(IrStmt *s, ForKind fk)
{
	HasLoop h = { .v = {.stmt = {[IS_FOR] = has_loop_for}}, .fk = fk };
	ir_visit_stmt(&h.v, s);
	return h.found;
}

typedef struct {
	IrVisitor v;
	Var *var;
	bool found;
} Uses;

static void
uses_var(IrVisitor *v, IrExpr *e)
{
	Uses *u = (Uses *)v;
	if (e->var == u->var)
		u->found = true;
}

static void
uses_alloc(IrVisitor *v, IrStmt *s)
{
	Uses *u = (Uses *)v;
	if (buffer_uses_var(s->alloc.buf, u->var))
		u->found = true;
	ir_visit_stmt_children(v, s);
}

/* Statements: the sizes of the buffers they allocate count as uses. */
static const IrVisitor uses_table = {
	.expr = {[IR_VAR] = uses_var},
	.stmt = {[IS_ALLOCATE] = uses_alloc},
};

bool
ir_uses_var(IrExpr *e, Var *v)
{
	Uses u = {uses_table, v, false};
	ir_visit_expr(&u.v, e);
	return u.found;
}

bool
ir_stmt_uses_var(IrStmt *s, Var *v)
{
	Uses u = {uses_table, v, false};
	ir_visit_stmt(&u.v, s);
	return u.found;
}
