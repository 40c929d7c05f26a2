/* sched_stages.c: the schedule primitives that make a stage (TVM's
 * cache_read, cache_write and rfactor) and the memory scopes they and
 * set_scope name.  A new stage copies a tensor into a scope for some of
 * its readers (cache_read), takes over a stage's computation so that the
 * stage only copies it out (cache_write), or computes partial results of
 * a reduction over one of its axes (rfactor: of a reduction, of an
 * associative update definition, and of a tuple reduction whose combiner
 * is declared associative, one partial stage per output); the rest of the
 * schedule (sched.c) then places it like any other stage.
 */
#include <string.h>

#include "lower/lower.h"
#include "sema/sema.h"

static int
index_of(Lower *L, LStage *s)
{
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i] == s)
			return i;
	return L->nstages;
}

bool
sched_reads(LStage *c, LStage *p)
{
	if (c->upd && c != p) {      /* an update definition's reads */
		if (stage_reads(c->uval, p->buf) || stage_reads(c->upred, p->buf))
			return true;
		for (int d = 0; d < c->ndims; d++)
			if (stage_reads(c->uidx[d], p->buf))
				return true;
	}
	return stage_reads(c->value, p->buf) || stage_reads(c->rbody, p->buf) ||
	    stage_reads(c->rpred, p->buf);
}

static bool
new_stage_name_ok(Lower *L, SchedPrim *sp)
{
	if (sp->nouts < 1)
		return false;
	if (stage_find(L, sp->outs[0])) {
		diag_error(sp->out_locs[0], "'%s' is already a stage", sp->outs[0]);
		return false;
	}
	return true;
}

/* The scope a cache_read, cache_write or set_scope names, checked against
 * the schedule's target: inp, wgt and acc are VTA's on-chip buffers and
 * exist only there; VTA has no local or shared memory.  A mismatch is
 * reported and gives global.  fragment (a warp's accumulator tiles in
 * registers) is the tensor cores', for cache_write on cuda only. */
MemScope
sched_scope_of(Lower *L, SchedArg *a, bool write)
{
	static const struct { const char *name; MemScope s; } scopes[] = {
		{ "local", SCOPE_LOCAL }, { "shared", SCOPE_SHARED },
		{ "fragment", SCOPE_FRAGMENT }, { "inp", SCOPE_VTA_INP },
		{ "wgt", SCOPE_VTA_WGT }, { "acc", SCOPE_VTA_ACC },
	};
	const char *target = L->sched && L->sched->target ? L->sched->target : "cpu";
	bool vta = !strcmp(target, "vta");
	for (size_t i = 0; a && a->str && i < sizeof scopes / sizeof *scopes; i++) {
		if (strcmp(a->str, scopes[i].name) != 0)
			continue;
		MemScope s = scopes[i].s;
		if (s == SCOPE_FRAGMENT && (strcmp(target, "cuda") != 0 || !write)) {
			if (strcmp(target, "cuda") != 0)
				diag_error(a->loc, "scope 'fragment' is a warp's registers on the GPU's "
				    "tensor cores; this schedule is for %s", target);
			else
				diag_error(a->loc, "scope 'fragment' holds an mma's accumulators: it is "
				    "for cache_write only (the stage the mma intrinsic updates)");
			return SCOPE_GLOBAL;
		}
		bool vscope = s == SCOPE_VTA_INP || s == SCOPE_VTA_WGT || s == SCOPE_VTA_ACC;
		if (vscope && !vta)
			diag_error(a->loc, "scope '%s' is one of VTA's on-chip buffers; this schedule "
			    "is for %s", a->str, target);
		else if (!vscope && vta)
			diag_error(a->loc, "VTA has no %s memory: its scopes are inp (activations), "
			    "wgt (weights) and acc (accumulators)", a->str);
		else
			return s;
		return SCOPE_GLOBAL;
	}
	return SCOPE_GLOBAL;
}

/* The buffers loaded at an index that loads src. */
typedef struct {
	IrVisitor v;
	Buffer *src;
	Buffer *bufs[16];
	int n;
} IndexReads;

static void
index_reads(IrVisitor *v, IrExpr *e)
{
	IndexReads *r = (IndexReads *)v;
	if (e->load.buf != r->src && r->n < 16)
		for (int d = 0; d < e->load.nidx; d++)
			if (stage_reads(e->load.idx[d], r->src)) {
				r->bufs[r->n++] = e->load.buf;
				break;
			}
	ir_visit_expr_children(v, e);
}

void
sched_cache_read(Lower *L, LStage *src, SchedPrim *sp)
{
	if (!new_stage_name_ok(L, sp))
		return;
	LStage **rd = NULL;
	int nrd = 0, caprd = 0;
	SchedArg *list = sched_arg(sp, 1);
	if (list && list->kind == ARG_LIST) {
		for (int i = 0; i < list->nlist; i++) {
			LStage *r = stage_find(L, intern_cstr(list->list[i].str));
			if (!r && sched_poisoned(L->poison, L->npoison, intern_cstr(list->list[i].str))) {
				sched_quiet = true;
				return;
			}
			if (!r || r->input) {
				diag_error(list->list[i].loc, "'%s' is not a stage", list->list[i].str);
				return;
			}
			if (!sched_reads(r, src)) {
				diag_error(list->list[i].loc, "'%s' does not read '%s'", r->name, src->name);
				return;
			}
			*ARENA_PUSH(ir_arena, rd, nrd, caprd) = r;
		}
	} else {
		for (int i = 0; i < L->nstages; i++)
			if (!L->stages[i]->input && L->stages[i] != src && sched_reads(L->stages[i], src))
				*ARENA_PUSH(ir_arena, rd, nrd, caprd) = L->stages[i];
	}
	if (nrd == 0) {
		diag_error(sp->loc, "nothing reads '%s', so there is nothing to cache", src->name);
		return;
	}
	int at = index_of(L, rd[0]);
	for (int i = 1; i < nrd; i++)
		if (index_of(L, rd[i]) < at)
			at = index_of(L, rd[i]);
	/* a reader's load of another stage at an index that reads src (a
	 * gather, table[idx[i]], whose table is a cache too) makes that
	 * stage's region depend on src's data: the copy comes before it */
	for (int i = 0; i < nrd; i++) {
		IndexReads ir = { .v = {.expr = {[IR_LOAD] = index_reads}}, .src = src->buf };
		ir_visit_expr(&ir.v, rd[i]->value);
		ir_visit_expr(&ir.v, rd[i]->rbody);
		ir_visit_expr(&ir.v, rd[i]->rpred);
		for (int j = 0; j < ir.n; j++) {
			LStage *b = stage_find(L, ir.bufs[j]->name);
			if (b && !b->input && b->buf == ir.bufs[j] && index_of(L, b) < at)
				at = index_of(L, b);
		}
	}
	LStage *n = stage_new(L, sp->outs[0], src->elem, src->ndims, at);
	n->loc = sp->loc;
	n->scope = n->buf->scope = sched_scope_of(L, sched_arg(sp, 0), false);
	n->buf->scope_loc = sp->loc;
	n->scope_loc = sp->loc;
	IrExpr **idx = arena_alloc(ir_arena, (src->ndims + 1) * sizeof *idx);
	for (int d = 0; d < src->ndims; d++) {
		const char *an = src->input || !src->t ? arena_printf(ir_arena, "ax%d", d)
		    : src->axes[d].name;
		stage_add_axis(L, n, an, false);
		idx[d] = ir_var(n->axes[d].var);
	}
	n->leaves = arena_alloc(ir_arena, (n->naxes + 1) * sizeof *n->leaves);
	n->nleaves = n->capleaves = n->naxes;
	for (int i = 0; i < n->naxes; i++)
		n->leaves[i] = i;
	n->value = ir_load(src->buf, idx, src->ndims, NULL, 1);
	for (int i = 0; i < nrd; i++) {
		rd[i]->value = stage_redirect(rd[i]->value, src->buf, n->buf);
		rd[i]->rbody = stage_redirect(rd[i]->rbody, src->buf, n->buf);
		rd[i]->rpred = stage_redirect(rd[i]->rpred, src->buf, n->buf);
		if (rd[i]->upd) {
			rd[i]->uval = stage_redirect(rd[i]->uval, src->buf, n->buf);
			rd[i]->upred = stage_redirect(rd[i]->upred, src->buf, n->buf);
			for (int d = 0; d < rd[i]->ndims; d++)
				rd[i]->uidx[d] = stage_redirect(rd[i]->uidx[d], src->buf, n->buf);
		}
	}
}

/* Copies s's axes (with fresh variables), relations and leaves into n;
 * map[i] is the new index of s's axis i. */
static int *
copy_axes(Lower *L, LStage *s, LStage *n)
{
	int *map = arena_alloc(ir_arena, (s->naxes + 1) * sizeof *map);
	for (int i = 0; i < s->naxes; i++) {
		map[i] = stage_add_axis(L, n, s->axes[i].name, s->axes[i].red);
		Axis *a = &n->axes[map[i]];
		a->leaf = s->axes[i].leaf;
		a->factor = s->axes[i].factor;
		a->made = s->axes[i].made;
	}
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = sched_add_rel(n);
		*r = s->rels[i];
		r->parent = map[r->parent], r->outer = map[r->outer], r->inner = map[r->inner];
	}
	n->leaves = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->leaves);
	n->nleaves = n->capleaves = s->nleaves;
	for (int i = 0; i < s->nleaves; i++)
		n->leaves[i] = map[s->leaves[i]];
	return map;
}

/* Drops s's reduction axes from its loops and relations. */
static void
drop_reduction(LStage *s)
{
	int j = 0;
	for (int i = 0; i < s->nleaves; i++)
		if (!s->axes[s->leaves[i]].red)
			s->leaves[j++] = s->leaves[i];
	s->nleaves = j;
	j = 0;
	for (int i = 0; i < s->nrels; i++)
		if (!s->axes[s->rels[i].parent].red)
			s->rels[j++] = s->rels[i];
	s->nrels = j;
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].red)
			s->axes[i].leaf = false;
}

static IrExpr **
pure_index(LStage *s)
{
	IrExpr **idx = arena_alloc(ir_arena, (s->ndims + 2) * sizeof *idx);
	for (int d = 0; d < s->ndims; d++)
		idx[d] = ir_var(s->axes[d].var);
	return idx;
}

static IrExpr *
rename_roots(LStage *s, IrExpr *e, LStage *n, int *map)
{
	for (int d = 0; d < s->ndims; d++)
		e = stage_subst(e, s->axes[d].var, ir_var(n->axes[map[d]].var));
	for (int i = 0; i < s->nred; i++)
		e = stage_subst(e, s->axes[s->rax[i]].var, ir_var(n->axes[map[s->rax[i]]].var));
	return e;
}

void
sched_cache_write(Lower *L, LStage *s, SchedPrim *sp)
{
	if (!new_stage_name_ok(L, sp))
		return;
	if (s->input) {
		diag_error(sp->stage_loc, "cannot cache_write input '%s'", s->name);
		return;
	}
	LStage *n = stage_new(L, sp->outs[0], s->elem, s->ndims, index_of(L, s));
	n->loc = sp->loc;
	n->scope = n->buf->scope = sched_scope_of(L, sched_arg(sp, 0), true);
	n->buf->scope_loc = sp->loc;
	n->scope_loc = sp->loc;
	int *map = copy_axes(L, s, n);
	n->red = s->red, n->rop = s->rop, n->nred = s->nred;
	/* a range may use the pure axes (sum(k <= i)): in the copy's names */
	n->rmin = arena_alloc(ir_arena, (s->nred + 1) * sizeof *n->rmin);
	n->rext = arena_alloc(ir_arena, (s->nred + 1) * sizeof *n->rext);
	for (int i = 0; i < s->nred; i++) {
		n->rmin[i] = rename_roots(s, s->rmin[i], n, map);
		n->rext[i] = rename_roots(s, s->rext[i], n, map);
	}
	n->rax = arena_alloc(ir_arena, (s->nred + 1) * sizeof *n->rax);
	for (int i = 0; i < s->nred; i++)
		n->rax[i] = map[s->rax[i]];
	n->value = rename_roots(s, s->value, n, map);
	n->rbody = rename_roots(s, s->rbody, n, map);
	n->rpred = rename_roots(s, s->rpred, n, map);
	s->value = ir_load(n->buf, pure_index(s), s->ndims, NULL, 1);
	s->red = false;
	s->rbody = s->rpred = NULL;
	s->nred = 0;
	drop_reduction(s);
}


/* The part of an associative update definition's value that is not its
 * current value: b of h[p] + b, b + h[p], max(h[p], b) ...; NULL when the
 * value is not such a combination (a conversion around it). */
static IrExpr *
update_other(LStage *s)
{
	static const IrExprKind kinds[] = { [RED_SUM] = IR_ADD, [RED_PROD] = IR_MUL,
		[RED_MAX] = IR_MAX, [RED_MIN] = IR_MIN };
	IrExpr *v = s->uval;
	if (!v || s->uop > RED_MIN || v->kind != kinds[s->uop] || !v->a || !v->b)
		return NULL;
	if (v->a->kind == IR_LOAD && v->a->load.buf == s->buf && !stage_reads(v->b, s->buf))
		return v->b;
	if (v->b->kind == IR_LOAD && v->b->load.buf == s->buf && !stage_reads(v->a, s->buf))
		return v->a;
	return NULL;
}

/* The partial stage of rfactor of an update over loop `pos` of s (its
 * chunk axis fa, made from the range): n[b.., fa] with s's pure axes and
 * their splits, fa as a pure axis after them, and s's other loops of the
 * range as its reduction axes, in s's loop order; *mapp maps s's axes to
 * n's (-1: none).  Its update keeps every pure axis, fa included. */
static LStage *
partial_stage(Lower *L, LStage *s, const char *name, ScalarType elem, int pos, Loc loc,
    int **mapp)
{
	int fa = s->leaves[pos], nd = s->ndims;
	LStage *n = stage_new(L, name, elem, nd + 1, index_of(L, s));
	n->loc = loc;
	int *map = arena_alloc(ir_arena, (s->naxes + 1) * sizeof *map);
	for (int i = 0; i < s->naxes; i++)
		map[i] = -1;
	for (int d = 0; d < nd; d++)
		map[d] = stage_add_axis(L, n, s->axes[d].name, false);
	map[fa] = stage_add_axis(L, n, s->axes[fa].name, false);
	n->rmin = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rmin);
	n->rext = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rext);
	n->rax = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rax);
	for (int i = 0; i < s->nleaves; i++) {
		int a = s->leaves[i];
		if (!s->axes[a].red || a == fa)
			continue;
		map[a] = n->rax[n->nred] = stage_add_axis(L, n, s->axes[a].name, true);
		n->rmin[n->nred] = ir_i64c(0);
		n->rext[n->nred++] = s->axes[a].ext;
	}
	/* pure derived axes keep their structure */
	for (int i = 0; i < s->naxes; i++)
		if (map[i] < 0 && !s->axes[i].red) {
			map[i] = stage_add_axis(L, n, s->axes[i].name, false);
			n->axes[map[i]].factor = s->axes[i].factor;
		}
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0)
			n->axes[map[i]].leaf = s->axes[i].leaf;
	n->axes[map[fa]].leaf = true;
	for (int i = 0; i < s->nrels; i++)
		if (!s->axes[s->rels[i].parent].red) {
			Rel *r = sched_add_rel(n);
			*r = s->rels[i];
			r->parent = map[r->parent], r->outer = map[r->outer], r->inner = map[r->inner];
		}
	n->leaves = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->leaves);
	n->nleaves = n->capleaves = s->nleaves;
	for (int i = 0; i < s->nleaves; i++)
		n->leaves[i] = map[s->leaves[i]];
	n->upd = true;
	n->uloc = s->uloc;
	n->ukeep = s->ukeep | (nd < 64 ? (uint64_t)1 << nd : 0);
	n->shape = arena_alloc(ir_arena, (nd + 2) * sizeof *n->shape);
	memcpy(n->shape, s->shape, nd * sizeof *n->shape);
	n->shape[nd] = lin_normalize(s->axes[fa].ext);
	*mapp = map;
	return n;
}

/* e, over s's root axes, over n's (partial_stage): the range's axes in
 * terms of s's loops, then every loop in n's names. */
static IrExpr *
to_partial(LStage *s, LStage *n, int *map, IrExpr *e)
{
	for (int i = 0; i < s->nred; i++) {
		int r = s->rax[i];
		IrExpr *v = axes_root_value(s, r);
		if (s->axes[r].leaf)    /* a loop of n from 0: from the range's start */
			v = lin_normalize(ir_add(s->rmin[i], v));
		e = stage_subst(e, s->axes[r].var, v);
	}
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0 && (i < s->ndims || s->axes[i].red))
			e = stage_subst(e, s->axes[i].var, ir_var(n->axes[map[i]].var));
	return e;
}

/* s's where and the guards of its split range loops, over n's axes (the
 * where only inside the guards: lower.c makes two Ifs of it). */
static IrExpr *
partial_pred(LStage *s, LStage *n, int *map)
{
	IrExpr *pred = s->upred;
	for (int i = 0; i < s->nred; i++) {
		int r = s->rax[i];
		IrExpr *v = axes_root_value(s, r);
		if (s->axes[r].leaf)
			v = lin_normalize(ir_add(s->rmin[i], v));
		pred = stage_subst(pred, s->axes[r].var, v);
	}
	IrExpr *tails = axes_guards(s, false, true);
	if (tails)
		pred = pred ? ir_select(tails, pred, ir_make_const(tails->type, 0)) : tails;
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0 && (i < s->ndims || s->axes[i].red))
			pred = stage_subst(pred, s->axes[i].var, ir_var(n->axes[map[i]].var));
	return pred;
}

/* s's update made to run over the chunks of rfactor, one step a chunk:
 * its range is one new reduction axis of extent fext (a loop at `pos`,
 * or after the others when pos < 0), its update at its pure position;
 * the axis index. */
static int
over_chunks(Lower *L, LStage *s, const char *name, IrExpr *fext, int pos)
{
	int k = stage_add_axis(L, s, name, true);
	drop_reduction(s);
	s->axes[k].leaf = true;
	sched_insert_leaf(s, pos >= 0 && pos < s->nleaves ? pos : s->nleaves, k);
	s->nred = 1;
	s->rax = arena_alloc(ir_arena, 2 * sizeof *s->rax);
	s->rax[0] = k;
	s->rmin = arena_alloc(ir_arena, 2 * sizeof *s->rmin);
	s->rext = arena_alloc(ir_arena, 2 * sizeof *s->rext);
	s->rmin[0] = ir_i64c(0);
	s->rext[0] = fext;
	s->uidx = pure_index(s);
	s->upred = NULL;
	s->ukeep = 0;
	for (int d = 0; d < s->ndims && d < 64; d++)
		s->ukeep |= (uint64_t)1 << d;
	return k;
}

static bool
exact_tail(LStage *s, SchedPrim *sp)
{
	for (int i = 0; i < s->nrels; i++)
		if (s->axes[s->rels[i].parent].red && !s->rels[i].fuse && s->rels[i].tail == TAIL_EXACT) {
			diag_error(sp->loc, "rfactor of '%s' after a tail=exact split of '%s' is not "
			    "supported; use guard", s->name, s->axes[s->rels[i].parent].name);
			return true;
		}
	return false;
}

/* rfactor of an associative update definition (tx.5 UPDATES), Halide's
 * parallel histogram: with r split into (ro, ri), rfactor(ro) makes a
 * stage n[b.., ro] of partial results, the identity updated by the steps
 * of chunk ro only (for (ri) n[p, ro] op= v: ro is a pure axis of n that
 * its update keeps, so chunks may run in parallel), and s's update adds
 * the chunks up: for (ro) s[b..] op= n[b.., ro]. */
static void
rfactor_update(Lower *L, LStage *s, SchedPrim *sp, int pos)
{
	int fa = s->leaves[pos];
	IrExpr *other = update_other(s);
	if (!other) {
		diag_error(sp->loc, "cannot rfactor the update definition of '%s': its value is "
		    "not its current value combined with another by +, *, max or min", s->name);
		return;
	}
	if (exact_tail(s, sp))
		return;
	axes_extents(s);
	int nd = s->ndims;
	int *map;
	LStage *n = partial_stage(L, s, sp->outs[0], s->elem, pos, sp->loc, &map);
	IrExpr **idx = arena_alloc(ir_arena, (nd + 2) * sizeof *idx);
	for (int d = 0; d < nd; d++)
		idx[d] = to_partial(s, n, map, s->uidx[d]);
	idx[nd] = ir_var(n->axes[map[fa]].var);
	n->uassoc = true;
	n->uop = s->uop;
	n->uidx = idx;
	n->uval = stage_combine(s->uop, ir_load(n->buf, idx, nd + 1, NULL, 1),
	    to_partial(s, n, map, other));
	n->upred = partial_pred(s, n, map);
	n->value = stage_identity(s->uop, s->elem);
	/* s's update adds the chunks up, at every element */
	int k = over_chunks(L, s, s->axes[fa].name, n->shape[nd], pos);
	IrExpr **at = pure_index(s);
	at[nd] = ir_var(s->axes[k].var);
	s->uval = stage_combine(s->uop, ir_load(s->buf, s->uidx, nd, NULL, 1),
	    ir_load(n->buf, at, nd + 1, NULL, 1));
}

/* Loads of buffer from[i] at idx in e made loads of to[i] at idx, chunk. */
typedef struct { Buffer **from, **to; int n; IrExpr *chunk; } Chunk;

static IrExpr *
chunk_fn(IrExpr *e, void *ctx)
{
	Chunk *c = ctx;
	if (e->kind != IR_LOAD)
		return NULL;
	for (int i = 0; i < c->n; i++)
		if (e->load.buf == c->from[i]) {
			IrExpr **idx = arena_alloc(ir_arena, (e->load.nidx + 2) * sizeof *idx);
			memcpy(idx, e->load.idx, e->load.nidx * sizeof *idx);
			idx[e->load.nidx] = c->chunk;
			return ir_load(c->to[i], idx, e->load.nidx + 1, NULL, 1);
		}
	return NULL;
}

/* e over the root axes of a, over b's (stages with the same roots). */
static IrExpr *
same_roots(LStage *a, LStage *b, IrExpr *e)
{
	for (int k = 0; k < a->ndims + a->nred; k++) {
		int x = k < a->ndims ? k : a->rax[k - a->ndims];
		int y = k < b->ndims ? k : b->rax[k - b->ndims];
		e = stage_subst(e, a->axes[x].var, ir_var(b->axes[y].var));
	}
	return e;
}

/* rfactor of a tuple reduction whose combiner is declared associative
 * (tx.5 TUPLE REDUCTIONS): with the range split into (ro, ri),
 * rfactor(ro) -> mp makes a partial tuple per chunk, one stage per output
 * (mp for the first, mp_z for output z), each starting at the identity
 * and folding the steps of its chunk in order (ro a pure axis of theirs:
 * chunks may run in parallel); the outputs then fold the chunks' partial
 * tuples in the order of ro with the combiner, each partial tuple where
 * the combiner takes the values.  An associative combiner whose identity
 * is one gives the fold of the whole range: the same result as without
 * rfactor, ties and NaNs included, up to the rounding of floating
 * combiners. */
static void
rfactor_tuple(Lower *L, LStage *s, SchedPrim *sp, int pos)
{
	if (!s->tmem || !s->t || !s->t->update || !s->t->update->tgroup) {
		diag_error(sp->loc, "cannot rfactor '%s': rfactor applies to the first output of a "
		    "tuple reduction, once", s->name);
		return;
	}
	const char *target = L->opt && L->opt->target ? L->opt->target : "cpu";
	if (strcmp(target, "cpu")) {
		diag_error(sp->loc, "rfactor of a tuple reduction compiles for the cpu target "
		    "only, not %s; on %s each thread folds its own point's range", target, target);
		return;
	}
	if (exact_tail(s, sp))
		return;
	TupleRed *tg = s->t->update->tgroup;
	int nt = s->ntmem, fa = s->leaves[pos], nd = s->ndims;
	/* chunks of consecutive steps: the outermost loop of the range, the
	 * others inside it in the order of the steps */
	int before, first = 0;
	while (first < s->nleaves && !s->axes[s->leaves[first]].red)
		first++;
	if (update_order_breach(s, &before) != -1 || first != pos) {
		diag_error(sp->loc, "cannot rfactor '%s' at '%s': the partial tuples of rfactor "
		    "are of runs of consecutive steps, combined in order, so rfactor takes the "
		    "outermost loop of the range, the others inside it in the order of the steps "
		    "(the combiner is associative, not commutative)", s->name, s->axes[fa].name);
		if (first < s->nleaves)
			diag_note(sp->loc, "the outermost loop of the range of '%s' is '%s'", s->name,
			    s->axes[s->leaves[first]].name);
		return;
	}
	const char **names = arena_alloc(ir_arena, (nt + 1) * sizeof *names);
	names[0] = sp->outs[0];
	for (int j = 1; j < nt; j++) {
		names[j] = intern_cstr(arena_printf(ir_arena, "%s_%s", sp->outs[0], s->tmem[j]->name));
		if (stage_find(L, names[j])) {
			diag_error(sp->out_locs[0], "rfactor of '%s' names the partial results of '%s' "
			    "'%s', which is already a stage", s->name, s->tmem[j]->name, names[j]);
			return;
		}
	}
	axes_extents(s);
	int *map;
	LStage **P = arena_alloc(ir_arena, (nt + 1) * sizeof *P);
	P[0] = partial_stage(L, s, names[0], s->elem, pos, sp->loc, &map);
	IrExpr *ro = ir_var(P[0]->axes[map[fa]].var);
	for (int j = 1; j < nt; j++) {
		LStage *m = s->tmem[j], *p;
		p = P[j] = stage_new(L, names[j], m->elem, nd + 1, index_of(L, P[0]));
		p->loc = sp->loc;
		for (int d = 0; d <= nd; d++)
			stage_add_axis(L, p, P[0]->axes[d].name, false);
		p->nred = P[0]->nred;
		p->rax = arena_alloc(ir_arena, (p->nred + 1) * sizeof *p->rax);
		p->rmin = P[0]->rmin;
		p->rext = P[0]->rext;
		for (int i = 0; i < p->nred; i++)
			p->rax[i] = stage_add_axis(L, p, P[0]->axes[P[0]->rax[i]].name, true);
		p->leaves = arena_alloc(ir_arena, (p->naxes + 1) * sizeof *p->leaves);
		p->nleaves = p->capleaves = p->naxes;
		for (int i = 0; i < p->naxes; i++)
			p->leaves[i] = i;
		p->upd = true;
		p->uloc = m->uloc;
		p->ukeep = P[0]->ukeep;
		p->shape = arena_alloc(ir_arena, (nd + 2) * sizeof *p->shape);
		memcpy(p->shape, P[0]->shape, (nd + 1) * sizeof *p->shape);
	}
	/* the partial tuples: each output's step over P[0]'s roots, reading
	 * the partials of its chunk where it read the outputs */
	Buffer **from = arena_alloc(ir_arena, (nt + 1) * sizeof *from);
	Buffer **to = arena_alloc(ir_arena, (nt + 1) * sizeof *to);
	for (int j = 0; j < nt; j++) {
		from[j] = s->tmem[j]->buf;
		to[j] = P[j]->buf;
	}
	IrExpr *pred = partial_pred(s, P[0], map);
	for (int j = 0; j < nt; j++) {
		LStage *m = s->tmem[j];
		Chunk c = { from, to, nt, ro };
		IrExpr *v = stage_map(to_partial(s, P[0], map, stage_as_lead(s, m, m->uval)),
		    chunk_fn, &c);
		P[j]->uval = j ? same_roots(P[0], P[j], v) : v;
		P[j]->upred = j ? same_roots(P[0], P[j], pred) : pred;
		P[j]->uidx = pure_index(P[j]);
		P[j]->uidx[nd] = ir_var(P[j]->axes[nd].var);
		P[j]->value = m->value;     /* the identity: no axis */
		P[j]->tlead = P[0];
		P[j]->tassoc = true;     /* rfactor_tuple refuses it: no rule of its own */
	}
	P[0]->tmem = P;
	P[0]->ntmem = nt;
	/* the outputs fold the chunks in order: the combiner of the outputs'
	 * values and a chunk's partial tuple */
	Expr **cf = NULL;
	IrExpr **ct = NULL;
	int ncf = 0, capcf = 0, capct = 0, nct = 0;
	IrExpr *fext = P[0]->shape[nd];
	for (int j = 0; j < nt; j++) {
		LStage *m = s->tmem[j];
		int k = over_chunks(L, m, s->axes[fa].name, fext, m == s ? pos : -1);
		ncf = nct = 0;
		for (int i = 0; i < tg->n; i++)
			for (int q = 0; q < tg->necopies[i]; q++) {
				IrExpr **at = pure_index(m);
				at[nd] = ir_var(m->axes[k].var);
				*ARENA_PUSH(ir_arena, cf, ncf, capcf) = tg->ecopies[i][q];
				*ARENA_PUSH(ir_arena, ct, nct, capct) = ir_load(P[i]->buf, at, nd + 1, NULL, 1);
			}
		m->uval = stage_conv_subst(L, m, m->t->update->value, m->elem, cf, ct, ncf);
	}
}

void
sched_rfactor(Lower *L, LStage *s, SchedPrim *sp)
{
	int pos = sched_find_leaf(s, sched_arg(sp, 0));
	if (pos < 0 || !new_stage_name_ok(L, sp))
		return;
	int fa = s->leaves[pos];
	if (s->upd && s->axes[fa].red && s->tlead) {
		rfactor_tuple(L, s, sp, pos);
		return;
	}
	if (s->upd && s->axes[fa].red) {
		rfactor_update(L, s, sp, pos);
		return;
	}
	if (!s->red || !s->axes[fa].red) {
		diag_error(sched_arg(sp, 0)->loc, "'%s' is not a reduction axis of '%s'; rfactor factors "
		    "a reduction axis out into a new stage", s->axes[fa].name, s->name);
		return;
	}
	for (int i = 0; i < s->nrels; i++)
		if (s->axes[s->rels[i].parent].red && !s->rels[i].fuse && s->rels[i].tail == TAIL_EXACT) {
			diag_error(sp->loc, "rfactor of '%s' after a tail=exact split of reduction axis "
			    "'%s' is not supported; use guard", s->name, s->axes[s->rels[i].parent].name);
			return;
		}
	/* the reduction axes as functions of the reduction loops */
	axes_extents(s);
	LStage *n = stage_new(L, sp->outs[0], s->elem, s->ndims + 1, index_of(L, s));
	n->loc = sp->loc;
	int *map = arena_alloc(ir_arena, (s->naxes + 1) * sizeof *map);
	for (int i = 0; i < s->naxes; i++)
		map[i] = -1;
	for (int d = 0; d < s->ndims; d++)
		map[d] = stage_add_axis(L, n, s->axes[d].name, false);
	map[fa] = stage_add_axis(L, n, s->axes[fa].name, false);
	n->red = true, n->rop = s->rop;
	n->rmin = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rmin);
	n->rext = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rext);
	n->rax = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->rax);
	for (int i = 0; i < s->nleaves; i++) {
		int a = s->leaves[i];
		if (!s->axes[a].red || a == fa)
			continue;
		map[a] = n->rax[n->nred] = stage_add_axis(L, n, s->axes[a].name, true);
		n->rmin[n->nred] = ir_i64c(0);
		n->rext[n->nred++] = s->axes[a].ext;
	}
	/* pure derived axes keep their structure */
	for (int i = 0; i < s->naxes; i++)
		if (map[i] < 0 && !s->axes[i].red) {
			map[i] = stage_add_axis(L, n, s->axes[i].name, false);
			n->axes[map[i]].leaf = s->axes[i].leaf;
			n->axes[map[i]].factor = s->axes[i].factor;
		}
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0)
			n->axes[map[i]].leaf = s->axes[i].leaf;
	for (int i = 0; i < s->nrels; i++)
		if (!s->axes[s->rels[i].parent].red) {
			Rel *r = sched_add_rel(n);
			*r = s->rels[i];
			r->parent = map[r->parent], r->outer = map[r->outer], r->inner = map[r->inner];
		}
	n->leaves = arena_alloc(ir_arena, (s->nleaves + 1) * sizeof *n->leaves);
	n->nleaves = n->capleaves = s->nleaves;
	for (int i = 0; i < s->nleaves; i++)
		n->leaves[i] = map[s->leaves[i]];
	n->axes[map[fa]].factor = s->axes[fa].factor;
	/* the definition: reduction roots in terms of the loops */
	IrExpr *body = s->rbody, *pred = s->rpred;
	for (int i = 0; i < s->nred; i++) {
		int r = s->rax[i];
		IrExpr *v = axes_root_value(s, r);
		/* an unsplit axis is a loop of n from 0: its value starts at the
		 * range's lower bound (sum(2 <= k < N), sum(k <= i + 2 ...)) */
		if (s->axes[r].leaf)
			v = lin_normalize(ir_add(s->rmin[i], v));
		body = stage_subst(body, s->axes[r].var, v);
		pred = stage_subst(pred, s->axes[r].var, v);
	}
	IrExpr *tails = axes_guards(s, false, true);   /* the reduction's guard splits */
	if (tails)   /* the condition only inside the tails (lower.c: two Ifs) */
		pred = pred ? ir_select(tails, pred, ir_make_const(tails->type, 0)) : tails;
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0 && (i < s->ndims || s->axes[i].red)) {
			body = stage_subst(body, s->axes[i].var, ir_var(n->axes[map[i]].var));
			pred = stage_subst(pred, s->axes[i].var, ir_var(n->axes[map[i]].var));
		}
	n->rbody = body;
	n->rpred = pred;
	/* a range that depends on a pure axis (sum(k <= i)): in n's names */
	for (int j = 0; j < n->nred; j++)
		for (int d = 0; d < s->ndims; d++)
			n->rext[j] = stage_subst(n->rext[j], s->axes[d].var, ir_var(n->axes[map[d]].var));
	/* s now reduces n over the factored axis */
	IrExpr *fext = s->axes[fa].ext;
	int k = stage_add_axis(L, s, s->axes[fa].name, true);
	s->axes[k].factor = s->axes[fa].factor;
	drop_reduction(s);
	s->axes[k].leaf = true;
	int at = pos < s->nleaves ? pos : s->nleaves;
	sched_insert_leaf(s, at, k);
	s->nred = 1;
	s->rax = arena_alloc(ir_arena, 2 * sizeof *s->rax);
	s->rax[0] = k;
	s->rmin = arena_alloc(ir_arena, 2 * sizeof *s->rmin);
	s->rext = arena_alloc(ir_arena, 2 * sizeof *s->rext);
	s->rmin[0] = ir_i64c(0);
	s->rext[0] = fext;
	IrExpr **idx = pure_index(s);
	idx[s->ndims] = ir_var(s->axes[k].var);
	s->rbody = ir_load(n->buf, idx, s->ndims + 1, NULL, 1);
	s->rpred = NULL;
}
