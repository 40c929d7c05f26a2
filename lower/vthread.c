/* vthread.c: loops bound to virtual threads (bind(axis, vthread)), as TVM
 * injects them.
 *
 * A virtual thread is work a real thread does several times over, for
 * latency hiding (several independent chains of arithmetic in flight) and
 * for strided access patterns: a vthread loop sits outside the thread
 * loops in the schedule, so its iterations take every n-th tile.  Run as
 * it is written, the loop would repeat the whole thread nest; instead it
 * moves inside the innermost thread loop, where each thread runs its
 * virtual threads' copies of the body one after the other, unrolled when
 * the extent is a constant (so their instructions interleave):
 *
 *     vthread (v, 0, 2) { gpu_thread.y (ty) { gpu_thread.x (tx) { S } } }
 *  -> gpu_thread.y (ty) { gpu_thread.x (tx) { unrolled (v, 0, 2) { S } } }
 *
 * This is legal because the iterations of loops bound to threads, real or
 * virtual, are independent.  A vthread loop with anything but a nest of
 * thread loops inside (a stage computed at it, a serial loop between) is
 * left a serial loop, which computes the same.
 */
#include "lower/ir.h"

/* s's perfect nest of thread loops (lets allowed between), and the body
 * inside the innermost; NULL if s is not one. */
static IrStmt *
thread_nest_body(IrStmt *s)
{
	bool any = false;
	while (s) {
		if (s->kind == IS_FOR && s->loop.fk == FOR_GPU_THREAD) {
			any = true;
			s = s->loop.body;
		} else if (s->kind == IS_LET) {
			s = s->let.body;
		} else {
			break;
		}
	}
	return any ? s : NULL;
}

/* The nest s with `inner` in place of its innermost body. */
static IrStmt *
rebuild(IrStmt *s, IrStmt *inner)
{
	if (s->kind == IS_FOR && s->loop.fk == FOR_GPU_THREAD) {
		IrStmt *b = s->loop.body;
		bool last = !(b->kind == IS_LET || (b->kind == IS_FOR && b->loop.fk == FOR_GPU_THREAD));
		return ir_for_like(s, s->loop.min, s->loop.extent, last ? inner : rebuild(b, inner));
	}
	if (s->kind == IS_LET)
		return ir_let_stmt(s->let.var, s->let.value, rebuild(s->let.body, inner));
	return inner;
}

static IrStmt *
vt_for(IrMutator *m, IrStmt *s)
{
	IrStmt *x = ir_mutate_stmt_children(m, s);
	if (!x || x->kind != IS_FOR || x->loop.fk != FOR_VTHREAD)
		return x;
	IrStmt *inner = thread_nest_body(x->loop.body);
	int64_t c;
	bool constant = ir_is_const(x->loop.extent, &c) && c <= 64;
	if (!inner) {
		IrStmt *r = ir_for(x->loop.var, x->loop.min, x->loop.extent, FOR_SERIAL, x->loop.body);
		r->loc = x->loc;
		return r;
	}
	/* the thread loops' bounds must not depend on the virtual thread */
	for (IrStmt *t = x->loop.body; t != inner; t = t->kind == IS_LET ? t->let.body : t->loop.body)
		if ((t->kind == IS_FOR && (ir_uses_var(t->loop.min, x->loop.var) ||
		    ir_uses_var(t->loop.extent, x->loop.var))) ||
		    (t->kind == IS_LET && ir_uses_var(t->let.value, x->loop.var))) {
			IrStmt *r = ir_for(x->loop.var, x->loop.min, x->loop.extent, FOR_SERIAL,
			    x->loop.body);
			r->loc = x->loc;
			return r;
		}
	IrStmt *v = ir_for(x->loop.var, x->loop.min, x->loop.extent,
	    constant ? FOR_UNROLLED : FOR_SERIAL, inner);
	v->loc = x->loc;
	return rebuild(x->loop.body, v);
}

IrStmt *
vthread_inject(IrStmt *s)
{
	IrMutator m = { .stmt[IS_FOR] = vt_for };
	return ir_mutate_stmt(&m, s);
}
