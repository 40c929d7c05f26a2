/* lower.c: loop nests from the scheduled stages.
 *
 * Each stage computed at root becomes, in compute order, a Produce of its
 * loop nest: one For per leaf axis (outermost first, with its kind), the
 * original axes rebuilt from the leaves (i = io*8 + ii; shift_inward
 * clamps the outer start; a guard split puts an If around the body) and
 * one Store.  A reduction is an initialisation nest over the pure loops
 * inside the outermost reduction loop, followed by the update nest, as
 * TVM prints it.  Stages computed at a loop of their consumer are built
 * inside that loop, before the consumer's body, over the region bound
 * inference gave them; their buffer is allocated at the store level.
 */
#include <string.h>

#include "lower/lower.h"

static IrStmt *build(Lower *L, LStage *s);

/* Loops of one iteration are not emitted; their variables are replaced,
 * also in the extents of buffers allocated inside them. */
typedef struct { Var *var; IrExpr *value; } Subst1;
static Subst1 *substs;
static int nsubsts, capsubsts;

static int
root_of(LStage *s, int ax)
{
	if (ax < s->ndims)
		return ax;
	for (int j = 0; j < s->nred; j++)
		if (s->rax[j] == ax)
			return s->ndims + j;
	return -1;
}

static const char *
kind_verb(ForKind fk)
{
	return fk == FOR_VECTORIZED ? "vectorize" : "unroll";
}

static IrStmt *
one_loop(Lower *L, LStage *s, int pos, IrStmt *body)
{
	int ax = s->leaves[pos];
	Axis *a = &s->axes[ax];
	int k = root_of(s, ax);
	IrExpr *mn = k >= 0 ? s->dmin[k] : ir_i64c(0);
	IrExpr *ext = lin_normalize(a->ext);
	ForKind fk = a->fk;
	int64_t c, u;
	/* a clamped extent (a tile's region under a guard split, min(6, M - io*6))
	 * keeps its kind: unroll.c and vectorize.c run it to its constant bound
	 * with a guard, and partitioning makes it constant in the steady state */
	if ((fk == FOR_VECTORIZED || fk == FOR_UNROLLED) && !ir_is_const(ext, &c) &&
	    !(bounds_const_max(ext, &u) && u >= 1 && u <= 64)) {
		diag_error(a->fk_loc, "cannot %s '%s' of '%s': its extent (%s) is not a constant",
		    kind_verb(fk), a->name, s->name, ir_expr_str(ext));
		diag_note(a->fk_loc, "split it by a constant and %s the inner loop, e.g. "
		    "%s.split(%s, 8) -> (%so, %si)", kind_verb(fk), s->name, a->name, a->name, a->name);
		fk = FOR_SERIAL;
	}
	if (ir_is_const(ext, &c) && c == 1 && fk != FOR_GPU_BLOCK && fk != FOR_GPU_THREAD) {
		/* one iteration: no loop; buffers sized in terms of it follow;
		 * a buffer double-buffered across it has no next step to fetch
		 * (K fixed below the k tile by -D): one buffer, filled once */
		for (IrStmt *a = body; a && a->kind == IS_ALLOCATE; a = a->alloc.body)
			a->alloc.buf->double_buffer = false;
		Subst1 *sb = ARENA_PUSH(ir_arena, substs, nsubsts, capsubsts);
		sb->var = a->var;
		sb->value = mn;
		return ir_substitute_stmt(body, a->var, mn);
	}
	IrStmt *f = ir_for(a->var, mn, ext, fk, body);
	if (fk == FOR_GPU_BLOCK || fk == FOR_GPU_THREAD)
		f->loop.gpu_dim = a->gpu_dim;
	f->loop.partition = a->partition;
	f->loc = a->fk_loc;
	return f;
}

/* The allocation of a stage's buffer, located at the primitive that
 * placed it (or the stage), for the diagnostics of later passes. */
static IrStmt *
allocate_at(LStage *s, IrStmt *body)
{
	IrStmt *a = ir_allocate(s->buf, body);
	if (a)
		a->loc = s->compute.loc.file ? s->compute.loc : s->loc;
	return a;
}

/* The stages computed and stored at loop `pos` of s. */
static IrStmt *
attached(Lower *L, LStage *s, int pos, IrStmt *body)
{
	IrStmt *pre = NULL;
	for (int i = 0; i < L->nstages; i++) {
		LStage *p = L->stages[i];
		if (p->bounded && p->compute.kind == LEVEL_AT && p->compute.stage == s &&
		    p->compute.leaf == pos) {
			IrStmt *b = build(L, p);
			if (p->guard)   /* only where its readers run (bounds_infer.c) */
				b = ir_if(p->guard, b, NULL);
			pre = ir_seq(pre, b);
		}
	}
	body = ir_seq(pre, body);
	for (int i = L->nstages - 1; i >= 0; i--) {
		LStage *p = L->stages[i];
		if (!p->bounded || p->compute.kind != LEVEL_AT)
			continue;
		Level *st = p->store_set ? &p->store : &p->compute;
		if (st->kind == LEVEL_AT && st->stage == s && st->leaf == pos) {
			if (!p->scope_loc.file)
				p->buf->scope = SCOPE_LOCAL;
			body = allocate_at(p, body);
		}
	}
	return body;
}

static IrStmt *
nest(Lower *L, LStage *s, int from, int to, bool pure_only, bool attach, IrStmt *body)
{
	for (int i = to - 1; i >= from; i--) {
		if (pure_only && s->axes[s->leaves[i]].red)
			continue;
		if (attach)
			body = attached(L, s, i, body);
		body = one_loop(L, s, i, body);
	}
	return body;
}

static IrExpr *
guards(LStage *s, bool red)
{
	return axes_guards(s, true, red);
}

static IrStmt *
guarded(IrExpr *c, IrStmt *s)
{
	return c ? ir_if(c, s, NULL) : s;
}

/* s under a reduction's condition: select(a, b, false), as rfactor makes
 * it (its tails, then the condition), is two Ifs, b inside a. */
static IrStmt *
pred_if(IrExpr *p, IrStmt *s)
{
	if (!p)
		return s;
	int64_t f;
	if (p->kind == IR_SELECT && ir_is_const(p->c, &f) && f == 0)
		return ir_if(p->a, pred_if(p->b, s), NULL);
	return ir_if(p, s, NULL);
}

/* The original axes of s in terms of its loops: reduction axes first (a
 * range may name a pure axis, sum(k <= i), whose value follows). */
static IrStmt *
root_values(LStage *s, IrStmt *body)
{
	for (int k = s->ndims + s->nred - 1; k >= 0; k--) {
		int ax = k < s->ndims ? k : s->rax[k - s->ndims];
		if (!s->axes[ax].leaf)
			body = ir_substitute_stmt(body, s->axes[ax].var,
			    k < s->ndims ? reddom_root_value(s, ax) : axes_root_value(s, ax));
	}
	return body;
}

/* One step of an update: its value stored at its position; of a tuple
 * reduction's first output, every output's value computed from the
 * values all of them hold before the step, then stored. */
static IrStmt *
update_step(Lower *L, LStage *s)
{
	if (!s->tmem)
		return ir_store(s->buf, s->uidx, s->ndims, s->uval, NULL);
	Var **nv = arena_alloc(ir_arena, (s->ntmem + 1) * sizeof *nv);
	IrStmt *st = NULL;
	for (int j = 0; j < s->ntmem; j++) {
		LStage *m = s->tmem[j];
		IrExpr **idx = arena_alloc(ir_arena, (m->ndims + 1) * sizeof *idx);
		for (int d = 0; d < m->ndims; d++)
			idx[d] = stage_as_lead(s, m, m->uidx[d]);
		nv[j] = stage_typed_var(L, arena_printf(ir_arena, "%s_next", m->name),
		    ir_scalar(m->elem));
		st = ir_seq(st, ir_store(m->buf, idx, m->ndims, ir_var(nv[j]), NULL));
	}
	for (int j = s->ntmem - 1; j >= 0; j--)
		st = ir_let_stmt(nv[j], stage_as_lead(s, s->tmem[j], s->tmem[j]->uval), st);
	return st;
}

/* An update definition (tx.5 UPDATES) after the pure value: its loops
 * are the leaves made from its reduction axes and the pure axes it keeps,
 * in leaf order; each step stores its value at its position. */
static IrStmt *
update_nest(Lower *L, LStage *s)
{
	uint64_t roots = s->ukeep;
	for (int j = 0; j < s->nred && s->ndims + j < 64; j++)
		roots |= (uint64_t)1 << (s->ndims + j);
	IrStmt *u = guarded(axes_guards_of(s, roots), pred_if(s->upred, update_step(L, s)));
	for (int i = s->nleaves - 1; i >= 0; i--)
		if (update_in_nest(s, i))
			u = one_loop(L, s, i, u);
	return ir_produce(s->name, true, u);
}

/* The statements of stage s under its first `shared` loops (0: all of
 * them), by the level they go in: pc[l] runs inside loop l - 1, before
 * loop l (pc[shared]: inside the last shared loop).  A reduction's
 * initialisation goes where its first reduction loop starts, so fused
 * into that loop or deeper it is a piece of its own. */
static void
pieces(Lower *L, LStage *s, int shared, IrStmt **pc)
{
	int first = nsubsts;
	IrExpr **idx = arena_alloc(ir_arena, (s->ndims + 1) * sizeof *idx);
	for (int d = 0; d < s->ndims; d++)
		idx[d] = ir_var(s->axes[d].var);
	for (int l = 0; l <= shared; l++)
		pc[l] = NULL;
	if (!s->red) {
		IrExpr *v = s->value;
		IrStmt *body;
		if (s->scan && v->kind == IR_SELECT)   /* a scan: its update reads step t - 1 only where t >= m */
			body = ir_if(v->a, ir_store(s->buf, idx, s->ndims, v->b, NULL),
			    ir_store(s->buf, idx, s->ndims, v->c, NULL));
		else
			body = ir_store(s->buf, idx, s->ndims, v, NULL);
		body = guarded(guards(s, false), body);
		pc[shared] = nest(L, s, shared, s->nleaves, s->upd, true, body);
		if (s->upd && (!s->tlead || s->tmem))   /* a tuple's outputs: in its first one's */
			pc[shared] = ir_seq(pc[shared], update_nest(L, s));
	} else {
		int r = 0;
		while (r < s->nleaves && !s->axes[s->leaves[r]].red)
			r++;
		IrStmt *init = guarded(guards(s, false),
		    ir_store(s->buf, idx, s->ndims, stage_identity(s->rop, s->elem), NULL));
		init = nest(L, s, r, s->nleaves, true, false, init);
		IrExpr *old = ir_load(s->buf, idx, s->ndims, NULL, 1);
		/* the guards around the condition (where, rfactor's tails): a
		 * condition that reads a tensor is evaluated only inside them */
		IrStmt *upd = guarded(guards(s, true), pred_if(s->rpred, ir_store(s->buf, idx,
		    s->ndims, stage_combine(s->rop, old, s->rbody), NULL)));
		if (r >= shared) {
			upd = ir_produce(s->name, true, nest(L, s, r, s->nleaves, false, true, upd));
			pc[shared] = nest(L, s, shared, r, false, true, ir_seq(init, upd));
		} else {
			pc[r] = init;
			pc[shared] = ir_produce(s->name, true, nest(L, s, shared, s->nleaves, false,
			    true, upd));
		}
	}
	for (int l = 0; l <= shared; l++) {
		if (!pc[l])
			continue;
		pc[l] = root_values(s, pc[l]);
		/* the root values name loops of one iteration that are gone (a split's
		 * outer loop over fewer elements than the factor): substitute again */
		for (int j = first; j < nsubsts; j++)
			pc[l] = ir_substitute_stmt(pc[l], substs[j].var, substs[j].value);
	}
}

static IrStmt *
build(Lower *L, LStage *s)
{
	IrStmt *pc[1];
	pieces(L, s, 0, pc);
	return ir_produce(s->name, false, pc[0]);
}

/* A compute_with group being built: its stages in compute order, the
 * loops each shares (the lead's: the most) and each one's pieces. */
typedef struct {
	LStage *m;
	LStage **g;
	IrStmt ***pc;
	int n;
} Group;

/* The statements inside shared loop l - 1 (l = 0: around the nest): the
 * stages that share no deeper loop, whole, before the loop l that the
 * others share where they come first in compute order, else after it
 * (compute_with.c checks that no stage in the loop reads one after it),
 * and the initialisations of those others just before the loop. */
static IrStmt *
assemble(Lower *L, Group *G, int l)
{
	IrStmt *before = NULL, *inits = NULL, *after = NULL;
	bool deep = false;
	for (int k = 0; k < G->n; k++) {
		int d = G->g[k]->with_depth;
		if (d < l)
			continue;
		if (d == l && deep)
			after = ir_seq(after, G->pc[k][l]);
		else if (d == l)
			before = ir_seq(before, G->pc[k][l]);
		else {
			inits = ir_seq(inits, G->pc[k][l]);
			deep = true;
		}
	}
	if (!deep)
		return before;
	IrStmt *body = assemble(L, G, l + 1);
	for (int k = G->n - 1; k >= 0; k--)
		if (G->g[k]->with_depth > l)   /* as build does, its axes in its loops */
			body = root_values(G->g[k], attached(L, G->g[k], l, body));
	/* inside it, the members' loop l is m's */
	for (int k = 0; k < G->n; k++)
		if (G->g[k] != G->m && G->g[k]->with_depth > l)
			body = ir_substitute_stmt(body, G->g[k]->axes[G->g[k]->leaves[l]].var,
			    ir_var(G->m->axes[G->m->leaves[l]].var));
	body = one_loop(L, G->m, l, body);
	return ir_seq(before, ir_seq(inits, ir_seq(body, after)));
}

/* The stages of a compute_with group (lead m and the stages fused into
 * it, in compute order) in one nest: m's loops, each member in as many
 * as it shares with its loop variables renamed to m's, the stages
 * computed at a shared loop of any of them before the loop's body. */
static IrStmt *
build_group(Lower *L, LStage *m)
{
	int first = nsubsts;
	Group G = { m, arena_alloc(ir_arena, (L->nstages + 1) * sizeof *G.g),
	    arena_alloc(ir_arena, (L->nstages + 1) * sizeof *G.pc), 0 };
	const char *names = NULL;
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (s != m && s->with != m)
			continue;
		int depth = s->with_depth;
		IrStmt **pc = arena_alloc(ir_arena, (depth + 1) * sizeof *pc);
		pieces(L, s, depth, pc);
		for (int l = 0; l <= depth; l++) {
			if (!pc[l])
				continue;
			/* an update fused into reduction loops is one already */
			if (pc[l]->kind != IS_PRODUCE || !pc[l]->produce.update)
				pc[l] = ir_produce(s->name, false, pc[l]);
			if (s->guard)    /* only where its consumers run (bounds_infer.c) */
				pc[l] = ir_if(s->guard, pc[l], NULL);
		}
		G.g[G.n] = s;
		G.pc[G.n++] = pc;
		names = names ? arena_printf(ir_arena, "%s, %s", names, s->name) : s->name;
	}
	IrStmt *body = assemble(L, &G, 0);
	for (int j = first; j < nsubsts; j++)
		body = ir_substitute_stmt(body, substs[j].var, substs[j].value);
	/* the extents of buffers allocated inside the shared loops name them
	 * as their stage did: lower_stages renames them (only them: a
	 * reduction's initialisation loops may bind the same variables) */
	for (int k = 0; k < G.n; k++)
		for (int j = 0; j < G.g[k]->with_depth && G.g[k] != m; j++) {
			Subst1 *sb = ARENA_PUSH(ir_arena, substs, nsubsts, capsubsts);
			sb->var = G.g[k]->axes[G.g[k]->leaves[j]].var;
			sb->value = ir_var(m->axes[m->leaves[j]].var);
		}
	return ir_produce(intern_cstr(names), false, body);
}

IrStmt *
lower_stages(Lower *L)
{
	nsubsts = 0;
	int before = diag_errors();
	IrStmt *body = NULL;
	for (int i = L->nstages - 1; i >= 0; i--) {
		LStage *s = L->stages[i];
		if (s->input || !s->bounded || s->compute.kind != LEVEL_ROOT)
			continue;
		IrStmt *b = NULL;
		if (compute_with_member(s)) {
			/* a compute_with group: one nest, where its last stage is */
			LStage *m = s->with ? s->with : s;
			bool last = true;
			for (int j = i + 1; j < L->nstages; j++)
				last &= L->stages[j] != m && L->stages[j]->with != m;
			if (last)
				b = build_group(L, m);
		} else {
			b = build(L, s);
			if (s->guard)     /* only where its consumers run (bounds_infer.c) */
				b = ir_if(s->guard, b, NULL);
		}
		body = ir_seq(b, body);
		if (!s->output)
			body = allocate_at(s, body);
	}
	/* compute_at stages stored at root */
	for (int i = L->nstages - 1; i >= 0; i--) {
		LStage *s = L->stages[i];
		if (s->bounded && s->compute.kind == LEVEL_AT && s->store_set && !s->output &&
		    s->store.kind == LEVEL_ROOT)
			body = allocate_at(s, body);
	}
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < L->nstages; i++) {
			Buffer *b = L->stages[i]->buf;
			if (b->abi_index >= 0)
				continue;
			for (int d = 0; d < b->ndims; d++)
				for (int j = 0; j < nsubsts; j++) {
					b->min[d] = stage_subst(b->min[d], substs[j].var, substs[j].value);
					b->extent[d] = stage_subst(b->extent[d], substs[j].var, substs[j].value);
				}
		}
	nsubsts = 0;
	/* entry-point checks first (null pointers are the backend's: it knows the ABI) */
	IrStmt *checks = NULL;
	for (int i = L->first_check; i < L->nchecks; i++)
		checks = ir_seq(checks, L->checks[i]);
	if (diag_errors() != before)
		return NULL;
	return ir_seq(checks, body);
}
