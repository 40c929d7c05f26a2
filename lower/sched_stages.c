/* sched_stages.c: the schedule primitives that make a stage (TVM's
 * cache_read, cache_write and rfactor) and the memory scopes they and
 * set_scope name.  A new stage copies a tensor into a scope for some of
 * its readers (cache_read), takes over a stage's computation so that the
 * stage only copies it out (cache_write), or computes partial results of
 * a reduction over one of its axes (rfactor); the rest of the schedule
 * (sched.c) then places it like any other stage.
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
 * reported and gives global. */
MemScope
sched_scope_of(Lower *L, SchedArg *a)
{
	static const struct { const char *name; MemScope s; } scopes[] = {
		{ "local", SCOPE_LOCAL }, { "shared", SCOPE_SHARED }, { "inp", SCOPE_VTA_INP },
		{ "wgt", SCOPE_VTA_WGT }, { "acc", SCOPE_VTA_ACC },
	};
	const char *target = L->sched && L->sched->target ? L->sched->target : "cpu";
	bool vta = !strcmp(target, "vta");
	for (size_t i = 0; a && a->str && i < sizeof scopes / sizeof *scopes; i++) {
		if (strcmp(a->str, scopes[i].name) != 0)
			continue;
		MemScope s = scopes[i].s;
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
	LStage *n = stage_new(L, sp->outs[0], src->elem, src->ndims, at);
	n->loc = sp->loc;
	n->scope = n->buf->scope = sched_scope_of(L, sched_arg(sp, 0));
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
	n->scope = n->buf->scope = sched_scope_of(L, sched_arg(sp, 0));
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
	for (int i = 0; i < s->nrels; i++)
		if (s->axes[s->rels[i].parent].red && !s->rels[i].fuse && s->rels[i].tail == TAIL_EXACT) {
			diag_error(sp->loc, "rfactor of '%s' after a tail=exact split of '%s' is not "
			    "supported; use guard", s->name, s->axes[s->rels[i].parent].name);
			return;
		}
	axes_extents(s);
	int nd = s->ndims;
	LStage *n = stage_new(L, sp->outs[0], s->elem, nd + 1, index_of(L, s));
	n->loc = sp->loc;
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
	/* n's position, value and where: the domain's axes in terms of the
	 * loops, then every loop in n's names */
	IrExpr **idx = arena_alloc(ir_arena, (nd + 2) * sizeof *idx);
	memcpy(idx, s->uidx, nd * sizeof *idx);
	IrExpr *pred = s->upred;
	for (int i = 0; i < s->nred; i++) {
		int r = s->rax[i];
		IrExpr *v = axes_root_value(s, r);
		if (s->axes[r].leaf)    /* a loop of n from 0: from the range's start */
			v = lin_normalize(ir_add(s->rmin[i], v));
		for (int d = 0; d < nd; d++)
			idx[d] = stage_subst(idx[d], s->axes[r].var, v);
		other = stage_subst(other, s->axes[r].var, v);
		pred = stage_subst(pred, s->axes[r].var, v);
	}
	IrExpr *tails = axes_guards(s, false, true);   /* the steps' guard splits */
	if (tails)   /* the where only inside them (lower.c: two Ifs) */
		pred = pred ? ir_select(tails, pred, ir_make_const(tails->type, 0)) : tails;
	for (int i = 0; i < s->naxes; i++)
		if (map[i] >= 0 && (i < nd || s->axes[i].red)) {
			IrExpr *to = ir_var(n->axes[map[i]].var);
			for (int d = 0; d < nd; d++)
				idx[d] = stage_subst(idx[d], s->axes[i].var, to);
			other = stage_subst(other, s->axes[i].var, to);
			pred = stage_subst(pred, s->axes[i].var, to);
		}
	idx[nd] = ir_var(n->axes[map[fa]].var);
	n->upd = n->uassoc = true;
	n->uop = s->uop;
	n->uloc = s->uloc;
	n->uidx = idx;
	n->uval = stage_combine(s->uop, ir_load(n->buf, idx, nd + 1, NULL, 1), other);
	n->upred = pred;
	n->ukeep = s->ukeep | (nd < 64 ? (uint64_t)1 << nd : 0);
	n->value = stage_identity(s->uop, s->elem);
	n->shape = arena_alloc(ir_arena, (nd + 2) * sizeof *n->shape);
	memcpy(n->shape, s->shape, nd * sizeof *n->shape);
	n->shape[nd] = lin_normalize(s->axes[fa].ext);
	/* s's update adds the chunks up, at every element */
	IrExpr *fext = s->axes[fa].ext;
	int k = stage_add_axis(L, s, s->axes[fa].name, true);
	drop_reduction(s);
	s->axes[k].leaf = true;
	sched_insert_leaf(s, pos < s->nleaves ? pos : s->nleaves, k);
	s->nred = 1;
	s->rax = arena_alloc(ir_arena, 2 * sizeof *s->rax);
	s->rax[0] = k;
	s->rmin = arena_alloc(ir_arena, 2 * sizeof *s->rmin);
	s->rext = arena_alloc(ir_arena, 2 * sizeof *s->rext);
	s->rmin[0] = ir_i64c(0);
	s->rext[0] = fext;
	IrExpr **at = pure_index(s);
	at[nd] = ir_var(s->axes[k].var);
	s->uidx = pure_index(s);
	s->uval = stage_combine(s->uop, ir_load(s->buf, s->uidx, nd, NULL, 1),
	    ir_load(n->buf, at, nd + 1, NULL, 1));
	s->upred = NULL;
	s->ukeep = 0;
	for (int d = 0; d < nd && d < 64; d++)
		s->ukeep |= (uint64_t)1 << d;
}

void
sched_rfactor(Lower *L, LStage *s, SchedPrim *sp)
{
	int pos = sched_find_leaf(s, sched_arg(sp, 0));
	if (pos < 0 || !new_stage_name_ok(L, sp))
		return;
	int fa = s->leaves[pos];
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
