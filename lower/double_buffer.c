/* double_buffer.c: double_buffer(), TVM's InjectDoubleBuffer.
 *
 * A stage marked double_buffer and computed at a serial loop of its
 * consumer is allocated in that loop's body and filled at the start of
 * each iteration:
 *
 *     for (ko, m, n) { allocate As { produce As {...}; ...reads As... } }
 *
 * becomes one allocation of two halves, the first filled before the loop
 * and each iteration filling the other half for the next one (a
 * `prefetch` produce) before it reads its own:
 *
 *     allocate As[2 * size] {
 *       produce As {...ko = m, half 0...}
 *       for (ko, m, n) {
 *         if (ko + 1 < m + n) { prefetch As {...ko + 1, half (ko + 1 - m) % 2...} }
 *         ...reads As, half (ko - m) % 2...
 *       }
 *     }
 *
 * On a GPU the copy of the next tile then overlaps the arithmetic on the
 * current one, and one barrier an iteration is enough (target/cuda puts
 * none between a prefetch and the reads of the other half).  The size of a
 * half is the allocation's constant bound.  The CPU's loops are changed
 * the same way (they gain nothing but compute the same); a double_buffer
 * that does not fit the pattern is an error at the primitive that says
 * why.
 */
#include <stdlib.h>
#include <string.h>

#include "lower/ir.h"

typedef struct {
	IrMutator m;
	Buffer *from, *to;
	IrExpr *offset;           /* elements: the half this part uses */
} Half;

static IrExpr *
half_load(IrMutator *m, IrExpr *e)
{
	Half *h = (Half *)m;
	IrExpr *x = ir_mutate_expr_children(m, e);
	if (x->load.buf != h->from)
		return x;
	IrExpr *idx = ir_add(x->load.idx[0], h->offset);
	return ir_load(h->to, &idx, 1, x->a, x->type.lanes);
}

static IrStmt *
half_store(IrMutator *m, IrStmt *s)
{
	Half *h = (Half *)m;
	IrStmt *x = ir_mutate_stmt_children(m, s);
	if (x->store.buf != h->from)
		return x;
	IrExpr *idx = ir_add(x->store.idx[0], h->offset);
	IrStmt *r = ir_store(h->to, &idx, 1, x->store.value, x->store.pred);
	r->loc = x->loc;
	return r;
}

static IrStmt *
in_half(IrStmt *s, Buffer *from, Buffer *to, IrExpr *offset)
{
	Half h;
	memset(&h, 0, sizeof h);
	h.m.expr[IR_LOAD] = half_load;
	h.m.stmt[IS_STORE] = half_store;
	h.from = from;
	h.to = to;
	h.offset = offset;
	return ir_mutate_stmt(&h.m, s);
}

/* The extents' product at its largest: each extent's constant bound,
 * for any value of its variables or over the loops around it (scope: with
 * the sizes fixed by -D below a tile, min(64, 45 - jo*64) is simplified to
 * 45 - jo*64, which is 45 at most for jo >= 0). */
static bool
one_elem_bound(Buffer *b, BoundsScope *scope, int64_t *n)
{
	*n = 1;
	for (int d = 0; d < b->ndims; d++) {
		int64_t c;
		if (!(ir_is_const(b->extent[d], &c) || bounds_const_max(b->extent[d], &c))) {
			IrExpr *hi = bounds_of_expr(b->extent[d], scope).max;
			if (!hi || !ir_is_const(simplify_expr(hi, NULL), &c))
				return false;
		}
		if (c < 0)
			return false;
		*n *= c;
	}
	return true;
}

typedef struct {
	IrMutator m;
	bool ok;
	BoundsScope *scope;   /* the loops around the statement being mutated */
} Db;

/* The buffer of b's slots: 2 * half + extra elements. */
static Buffer *
doubled(Buffer *b, int64_t half, int64_t extra)
{
	Buffer *two = ir_new_buffer(b->name, b->elem, 1);
	two->min[0] = ir_i64c(0);
	two->extent[0] = ir_i64c(2 * half + extra);
	two->scope = b->scope;
	two->flat = true;
	two->tensor = b->tensor;
	two->swizzle_row = b->swizzle_row;   /* slots of whole rows: the same layout */
	two->tma = b->tma;
	two->tma_loc = b->tma_loc;
	two->pipeline_defer = b->pipeline_defer;
	two->pipeline_producer = b->pipeline_producer;
	two->producer_loc = b->producer_loc;
	two->pipeline_loc = b->pipeline_loc;
	return two;
}

/* The primitive that marked b, for messages. */
static const char *
prim_name(const Buffer *b)
{
	return b->pipeline ? "pipeline" : "double_buffer";
}

/* An Evaluate of ASYNC_COMMIT, or of ASYNC_WAIT(n). */
static IrStmt *
async_call(const char *name, int n)
{
	IrExpr *a = ir_i64c(n);
	return ir_evaluate(ir_call_intrinsic(name, ir_i32, &a, n < 0 ? 0 : 1));
}

/* A TMA pipeline's ASYNC_WAIT(n, fill, fills): also the fill it waits for
 * (0 is the first) and how many the loop makes (target/cuda/gpu_tma.c
 * waits on that fill's mbarrier phase when fill < fills). */
static IrStmt *
tma_wait(int n, IrExpr *fill, IrExpr *fills)
{
	IrExpr *a[3] = { ir_i64c(n), fill, fills };
	return ir_evaluate(ir_call_intrinsic(ASYNC_WAIT, ir_i32, a, 3));
}

bool
double_buffer_async_is(const IrExpr *e)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    (!strcmp(e->call.name, ASYNC_COMMIT) || !strcmp(e->call.name, ASYNC_WAIT));
}

/* loop's body is a chain of allocations around a block whose first
 * statements compute them; those of double-buffered (or pipelined) stages
 * move out of the loop with S slots each (2 for double_buffer), their
 * first A fills before it and the fill A iterations ahead at the top of
 * every iteration, A = S - 1 - D.  A pipeline's fills are async produces,
 * each iteration's one commit group, waited for (all but the A - 1
 * newest) before the first iteration and at the end of each.
 *
 * D (pipeline(S, defer = D)) is the groups of wgmma calls that stay in
 * flight at the end of an iteration (gpu_wgmma.c waits for all but the D
 * newest), each still reading its own slot: the slot iteration i fills
 * (the one iteration i - 1 - D read) must be none of them, hence slots =
 * lookahead + 1 + D, one more than the lookahead + 1 of a pipeline whose
 * calls finish within their iteration.  The barrier that ends iteration
 * i - 1 (target/cuda) comes after its wait, which retired the group of
 * iteration i - 1 - D. */
static IrStmt *
inject(Db *D, IrStmt *loop)
{
	enum { MAXA = 16 };
	IrStmt *chain[MAXA];
	int na = 0, ndb = 0;
	IrStmt *s = loop->loop.body;
	while (s->kind == IS_ALLOCATE && na < MAXA) {
		chain[na++] = s;
		ndb += s->alloc.buf->double_buffer;
		s = s->alloc.body;
	}
	if (!ndb)
		return NULL;
	Var *v = loop->loop.var;
	IrExpr *m = loop->loop.min, *end = ir_add(loop->loop.min, loop->loop.extent);
	IrStmt **stmts = s->kind == IS_BLOCK ? s->block.stmts : &s;
	int nst = s->kind == IS_BLOCK ? s->block.n : 1;
	IrStmt *fills[MAXA] = { 0 }, *prefetch = NULL;
	Buffer *from[MAXA], *to[MAXA];
	int64_t sizes[MAXA];
	int nd = 0, S = 0, A = 0;   /* slots, and fills ahead */
	bool async = false, tma = false;
	Buffer *first = NULL;
	bool *taken = arena_alloc(ir_arena, (size_t)(nst + 1) * sizeof *taken);
	memset(taken, 0, (size_t)(nst + 1) * sizeof *taken);
	for (int i = 0; i < na; i++) {
		Buffer *b = chain[i]->alloc.buf;
		if (!b->double_buffer)
			continue;
		b->double_buffer = false;     /* reported or done once */
		const char *what = prim_name(b);
		int bs = b->pipeline ? b->pipeline : 2;
		if (first && (bs != S || async != (b->pipeline > 0) ||
		    b->pipeline_defer != first->pipeline_defer ||
		    b->pipeline_producer != first->pipeline_producer)) {
			diag_error(b->double_buffer_loc, "%s of '%s' in loop '%s' beside %s of '%s': "
			    "the stages one loop fills ahead must have the same number of slots, "
			    "defer and producer and be all asynchronous (pipeline) or all not "
			    "(double_buffer)", what,
			    b->name, v->name, first->pipeline ? "pipeline" : "double_buffer", first->name);
			diag_note(first->double_buffer_loc, "'%s' is %s here",
			    first->name, first->pipeline ? "pipelined" : "double-buffered");
			D->ok = false;
			return NULL;
		}
		if (!first) {
			first = b;
			S = bs;
			async = b->pipeline > 0;
			A = S - 1 - (async ? b->pipeline_defer : 0);
			/* TXC_PIPELINE_DEFER_SLOTS=short: the fills S - 1 ahead
			 * whatever the defer, one slot too few (tests/unit/
			 * cuda_wgmma_defer.sh: the emulator must report the fill
			 * of a slot that a wgmma in flight reads) */
			const char *sh = getenv("TXC_PIPELINE_DEFER_SLOTS");
			if (sh && !strcmp(sh, "short"))
				A = S - 1;
		}
		int at = -1;
		for (int j = 0; j < nst && stmts[j]->kind == IS_PRODUCE; j++)
			if (!strcmp(stmts[j]->produce.name, b->name) && !stmts[j]->produce.update)
				at = j;
		if (at < 0) {
			diag_error(b->double_buffer_loc, "%s of '%s': it is not computed at "
			    "the top of loop '%s' (an update, or other work comes first)", what, b->name,
			    v->name);
			D->ok = false;
			return NULL;
		}
		if (!one_elem_bound(b, D->scope, &sizes[nd])) {
			diag_error(b->double_buffer_loc, "%s of '%s' needs a buffer of "
			    "constant size; its extents depend on run-time values", what, b->name);
			diag_note(b->double_buffer_loc, "compute it at a loop whose region of it has a "
			    "constant bound (a split by a constant)");
			D->ok = false;
			return NULL;
		}
		if (!b->flat)
			ICE("%s of '%s' before flatten", what, b->name);
		taken[at] = true;
		tma |= b->tma && async;
		from[nd] = b;
		to[nd] = doubled(b, sizes[nd] * (S / 2), S % 2 ? sizes[nd] : 0);
		to[nd]->slot = sizes[nd];
		IrExpr *sz = ir_i64c(sizes[nd]);
		IrStmt *p = stmts[at];
		/* the first A fills, slot k for iteration m + k */
		for (int k = 0; k < A; k++) {
			IrStmt *f = in_half(ir_substitute_stmt(p, v, ir_add(m, ir_i64c(k))), b, to[nd],
			    ir_i64c(k * sizes[nd]));
			f->produce.prefetch = k > 0;
			f->produce.async = async;
			fills[k] = ir_seq(fills[k], f);
		}
		IrStmt *next = in_half(ir_substitute_stmt(p, v, ir_add(ir_var(v), ir_i64c(A))), b,
		    to[nd], ir_mul(ir_mod(ir_add(ir_sub(ir_var(v), m), ir_i64c(A)), ir_i64c(S)), sz));
		next->produce.prefetch = true;
		next->produce.async = async;
		prefetch = ir_seq(prefetch, next);
		nd++;
	}
	/* the rest of the body reads the current slot */
	IrStmt **rest = arena_alloc(ir_arena, (size_t)(nst + 1) * sizeof *rest);
	int nr = 0;
	for (int j = 0; j < nst; j++)
		if (!taken[j])
			rest[nr++] = stmts[j];
	IrStmt *body = ir_block(rest, nr);
	for (int i = 0; i < nd; i++)
		body = in_half(body, from[i], to[i], ir_mul(ir_mod(ir_sub(ir_var(v), m), ir_i64c(S)),
		    ir_i64c(sizes[i])));
	/* the allocations that stay per iteration */
	for (int i = na - 1; i >= 0; i--) {
		bool db = false;
		for (int k = 0; k < nd; k++)
			db |= from[k] == chain[i]->alloc.buf;
		if (!db && body) {
			IrStmt *a = ir_allocate(chain[i]->alloc.buf, body);
			a->loc = chain[i]->loc;
			body = a;
		}
	}
	IrStmt *top = ir_if(ir_binop(IR_LT, ir_add(ir_var(v), ir_i64c(A)), end), prefetch, NULL);
	IrStmt *prologue = NULL;
	if (async) {
		top = ir_seq(top, async_call(ASYNC_COMMIT, -1));
		body = ir_seq(body, tma ? tma_wait(A - 1, ir_add(ir_sub(ir_var(v), m), ir_i64c(1)),
		    loop->loop.extent) : async_call(ASYNC_WAIT, A - 1));
	}
	body = ir_seq(top, body);
	for (int k = 0; k < A; k++) {
		IrStmt *f = k ? ir_if(ir_binop(IR_LT, ir_add(m, ir_i64c(k)), end), fills[k], NULL) :
		    fills[k];
		prologue = ir_seq(prologue, f);
		if (async)
			prologue = ir_seq(prologue, async_call(ASYNC_COMMIT, -1));
	}
	if (async)
		prologue = ir_seq(prologue, tma ? tma_wait(A - 1, ir_i64c(0), loop->loop.extent) :
		    async_call(ASYNC_WAIT, A - 1));
	IrStmt *out = ir_seq(ir_if(ir_binop(IR_GT, loop->loop.extent, ir_i64c(0)), prologue, NULL),
	    ir_for_like(loop, loop->loop.min, loop->loop.extent, body));
	out = simplify_stmt(out);
	for (int i = nd - 1; i >= 0; i--)
		out = ir_allocate(to[i], out);
	return out;
}

static IrStmt *db_for_in(Db *d, IrStmt *s);

static IrStmt *
db_for(IrMutator *m, IrStmt *s)
{
	Db *d = (Db *)m;
	BoundsScope *saved = d->scope;
	Interval iv = { s->loop.min, ir_sub(ir_add(s->loop.min, s->loop.extent), ir_i64c(1)) };
	d->scope = bounds_push(saved, s->loop.var, iv);
	IrStmt *r = db_for_in(d, s);
	d->scope = saved;
	return r;
}

static IrStmt *
db_for_in(Db *d, IrStmt *s)
{
	IrMutator *m = &d->m;
	bool any = false;
	for (IrStmt *a = s->loop.body; a->kind == IS_ALLOCATE; a = a->alloc.body)
		any |= a->alloc.buf->double_buffer;
	if (!any)
		return ir_mutate_stmt_children(m, s);
	if (s->loop.fk != FOR_SERIAL && s->loop.fk != FOR_UNROLLED) {
		for (IrStmt *a = s->loop.body; a->kind == IS_ALLOCATE; a = a->alloc.body)
			if (a->alloc.buf->double_buffer) {
				diag_error(a->alloc.buf->double_buffer_loc, "%s of '%s' needs "
				    "it computed at a serial loop; '%s' is %s", prim_name(a->alloc.buf),
				    a->alloc.buf->name, s->loop.var->name, ir_for_kind_name(s->loop.fk));
				a->alloc.buf->double_buffer = false;
			}
		d->ok = false;
		return s;
	}
	/* what is inside the chain of allocations first (loops that double
	 * buffer too); the chain itself is inject's */
	IrStmt *chain[16];
	int na = 0;
	IrStmt *in = s->loop.body;
	for (; in->kind == IS_ALLOCATE && na < 16; in = in->alloc.body)
		chain[na++] = in;
	IrStmt *body = ir_mutate_stmt(m, in);
	if (!body)
		return NULL;
	for (int i = na - 1; i >= 0; i--) {
		IrStmt *a = ir_allocate(chain[i]->alloc.buf, body);
		a->loc = chain[i]->loc;
		body = a;
	}
	IrStmt *x = ir_for_like(s, s->loop.min, s->loop.extent, body);
	IrStmt *r = inject(d, x);
	return r ? r : x;
}

/* A double-buffered allocation that is not directly a serial loop's body. */
static IrStmt *
db_alloc(IrMutator *m, IrStmt *s)
{
	Db *d = (Db *)m;
	if (s->alloc.buf->double_buffer) {
		diag_error(s->alloc.buf->double_buffer_loc, "%s of '%s' needs it "
		    "computed at a serial loop of its consumer (compute_at C, ko), alone in "
		    "that loop's body", prim_name(s->alloc.buf), s->alloc.buf->name);
		d->ok = false;
		s->alloc.buf->double_buffer = false;
	}
	return ir_mutate_stmt_children(m, s);
}

IrStmt *
double_buffer_stmt(IrStmt *s)
{
	Db d;
	memset(&d, 0, sizeof d);
	d.ok = true;
	d.m.stmt[IS_FOR] = db_for;
	d.m.stmt[IS_ALLOCATE] = db_alloc;
	IrStmt *r = ir_mutate_stmt(&d.m, s);
	return d.ok ? r : NULL;
}
