/* sched.c: schedule primitives applied to the stages, as data.
 *
 * Each primitive updates a stage's schedule (lower.h: axes, split/fuse
 * relations, leaf loop order, compute and store levels) or makes a new
 * stage (cache_read, cache_write, rfactor: sched_stages.c), after checking
 * that it is legal; an illegal one is reported at the primitive with the
 * reason.
 * sched_finish (sched_finish.c) then resolves the levels and inlines.
 * Axis arithmetic: axes.c.
 */
#include <string.h>

#include "lower/lower.h"
#include "sema/sema.h"

/* Set when a primitive fails because an earlier one did (it names a loop
 * or stage that the failed primitive would have made): that primitive
 * fails too, without a second diagnostic for the same mistake. */
bool sched_quiet;

bool
sched_poisoned(const char **v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (v[i] == name)
			return true;
	return false;
}

/* ---- arguments -------------------------------------------------------- */

SchedArg *
sched_arg(SchedPrim *sp, int n)
{
	for (int i = 0; i < sp->nargs; i++)
		if (!sp->args[i].key && n-- == 0)
			return &sp->args[i];
	return NULL;
}

static SchedArg *
kwarg(SchedPrim *sp, const char *key)
{
	for (int i = 0; i < sp->nargs; i++)
		if (sp->args[i].key && !strcmp(sp->args[i].key, key))
			return &sp->args[i];
	return NULL;
}

/* The position of the loop named by a, or -1 after an error. */
int
sched_find_leaf(LStage *s, SchedArg *a)
{
	if (!a || (a->kind != ARG_NAME && a->kind != ARG_STRING))
		return -1;
	const char *n = intern_cstr(a->str);
	int p = stage_leaf(s, n);
	if (p >= 0)
		return p;
	if (sched_poisoned(s->poison, s->npoison, n)) {
		sched_quiet = true;
		return -1;
	}
	for (int i = 0; i < s->naxes; i++)
		if (s->axes[i].name == n) {
			diag_error(a->loc, "'%s' has no loop '%s' any more; its loops are %s",
			    s->name, n, stage_leaf_list(s));
			return -1;
		}
	diag_error(a->loc, "'%s' has no axis '%s'; its loops are %s", s->name, n,
	    stage_leaf_list(s));
	return -1;
}

static bool
out_ok(LStage *s, SchedPrim *sp, int i)
{
	if (i >= sp->nouts)
		return false;
	for (int j = 0; j < s->naxes; j++)
		if (s->axes[j].name == sp->outs[i] && s->axes[j].leaf) {
			diag_error(sp->out_locs[i], "'%s' already names a loop of '%s'", sp->outs[i], s->name);
			return false;
		}
	return true;
}

/* ---- axis structure ------------------------------------------------- */

void
sched_insert_leaf(LStage *s, int pos, int axis)
{
	ARENA_PUSH(ir_arena, s->leaves, s->nleaves, s->capleaves);
	memmove(&s->leaves[pos + 1], &s->leaves[pos], (s->nleaves - 1 - pos) * sizeof *s->leaves);
	s->leaves[pos] = axis;
}

static void
remove_leaf(LStage *s, int pos)
{
	memmove(&s->leaves[pos], &s->leaves[pos + 1], (s->nleaves - 1 - pos) * sizeof *s->leaves);
	s->nleaves--;
}

Rel *
sched_add_rel(LStage *s)
{
	return ARENA_PUSH(ir_arena, s->rels, s->nrels, s->caprels);
}

static void
split(Lower *L, LStage *s, int pos, int64_t f, TailKind tail, bool round_up, const char *on,
    const char *in, Loc loc)
{
	int p = s->leaves[pos];
	bool red = s->axes[p].red;
	int o = stage_add_axis(L, s, on, red);
	int i = stage_add_axis(L, s, in, red);
	s->axes[p].leaf = false;
	s->axes[o].made = s->axes[i].made = loc;
	s->axes[i].factor = f;
	Rel *r = sched_add_rel(s);
	r->parent = p, r->outer = o, r->inner = i, r->factor = f, r->tail = tail, r->loc = loc;
	r->round_up = round_up;
	s->leaves[pos] = o;
	sched_insert_leaf(s, pos + 1, i);
}

static TailKind
tail_of(SchedPrim *sp)
{
	SchedArg *t = kwarg(sp, "tail");
	if (!t || !t->str)
		return TAIL_GUARD;
	if (!strcmp(t->str, "shift_inward"))
		return TAIL_SHIFT;
	return !strcmp(t->str, "exact") ? TAIL_EXACT : TAIL_GUARD;
}

/* tail=round_up: guarded like tail=guard (tail_of), and marked so that
 * bounds_infer.c gives the stages computed inside a block the whole block. */
static bool
round_of(SchedPrim *sp)
{
	SchedArg *t = kwarg(sp, "tail");
	return t && t->str && !strcmp(t->str, "round_up");
}

static bool
tail_ok(LStage *s, int pos, TailKind tail, SchedPrim *sp)
{
	if (tail != TAIL_SHIFT)
		return true;
	SchedArg *t = kwarg(sp, "tail");
	Axis *a = &s->axes[s->leaves[pos]];
	if (a->red)
		diag_error(t->loc, "tail=shift_inward recomputes elements, so it cannot split "
		    "reduction axis '%s' (the element would be reduced twice); use guard or exact",
		    a->name);
	else if (s->red)
		diag_error(t->loc, "tail=shift_inward recomputes elements, so it cannot be used on "
		    "reduction stage '%s'; use guard or exact", s->name);
	return !s->red;
}

/* reorder: the given loops take the positions they occupy, in this order */
static void
reorder(LStage *s, int *pos, int n)
{
	int *axes = arena_alloc(ir_arena, n * sizeof *axes);
	int *sorted = arena_alloc(ir_arena, n * sizeof *sorted);
	for (int i = 0; i < n; i++) {
		axes[i] = s->leaves[pos[i]];
		sorted[i] = pos[i];
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (int i = 0; i < n; i++)
		s->leaves[sorted[i]] = axes[i];
}

static void
fuse(Lower *L, LStage *s, SchedPrim *sp)
{
	int pa = sched_find_leaf(s, sched_arg(sp, 0)), pb = sched_find_leaf(s, sched_arg(sp, 1));
	if (pa < 0 || pb < 0 || !out_ok(s, sp, 0))
		return;
	Axis *a = &s->axes[s->leaves[pa]], *b = &s->axes[s->leaves[pb]];
	if (a->red != b->red) {
		diag_error(sp->loc, "cannot fuse %s axis '%s' with %s axis '%s' of '%s'",
		    a->red ? "reduction" : "pure", a->name, b->red ? "reduction" : "pure", b->name,
		    s->name);
		return;
	}
	if (pb != pa + 1) {
		int lo = pa < pb ? pa : pb, hi = pa < pb ? pb : pa;
		char *sug = arena_printf(ir_arena, "%s, %s", a->name, b->name);
		for (int i = lo; i <= hi; i++)
			if (i != pa && i != pb)
				sug = arena_printf(ir_arena, "%s, %s", sug, s->axes[s->leaves[i]].name);
		diag_error(sp->loc, "cannot fuse '%s' and '%s': '%s' is not the loop directly inside '%s'",
		    a->name, b->name, b->name, a->name);
		diag_note(sp->loc, "loops of '%s' are %s; %s.reorder(%s) makes them adjacent",
		    s->name, stage_leaf_list(s), s->name, sug);
		return;
	}
	int ia = s->leaves[pa], ib = s->leaves[pb];
	bool red = a->red;
	int f = stage_add_axis(L, s, sp->outs[0], red);
	s->axes[f].made = sp->loc;
	s->axes[ia].leaf = s->axes[ib].leaf = false;
	Rel *r = sched_add_rel(s);
	r->fuse = true, r->parent = f, r->outer = ia, r->inner = ib, r->loc = sp->loc;
	s->leaves[pa] = f;
	remove_leaf(s, pb);
}

static void
set_kind(LStage *s, SchedPrim *sp, ForKind fk)
{
	int p = sched_find_leaf(s, sched_arg(sp, 0));
	if (p < 0)
		return;
	Axis *a = &s->axes[s->leaves[p]];
	if (!update_kind_ok(s, a, fk, sched_arg(sp, 0)->loc))
		return;
	if (a->red && (fk == FOR_PARALLEL || fk == FOR_VECTORIZED || fk == FOR_GPU_BLOCK ||
	    fk == FOR_GPU_THREAD)) {
		diag_error(sched_arg(sp, 0)->loc, "cannot %s reduction axis '%s' of '%s': its iterations "
		    "update the same element", fk == FOR_VECTORIZED ? "vectorize" :
		    fk == FOR_PARALLEL ? "parallelize" : "bind", a->name, s->name);
		diag_note(sp->loc, "factor it out first: %s.rfactor(%s) -> %s_rf, then %s the "
		    "new pure axis '%s' of %s_rf", s->name, a->name, s->name,
		    fk == FOR_VECTORIZED ? "vectorize" : fk == FOR_PARALLEL ? "parallelize" : "bind",
		    a->name, s->name);
		return;
	}
	if (a->fk != FOR_SERIAL && a->fk != fk)
		diag_warn(sp->loc, "'%s' was already %s; it is now %s", a->name,
		    ir_for_kind_name(a->fk), ir_for_kind_name(fk));
	a->fk = fk;
	a->fk_loc = sp->loc;
	if (fk == FOR_GPU_BLOCK || fk == FOR_GPU_THREAD) {
		SchedArg *t = sched_arg(sp, 1);
		const char *d = t && t->str2 ? t->str2 : "x";
		a->gpu_dim = d[0] == 'z' ? 2 : d[0] == 'y' ? 1 : 0;
	}
}

/* ---- the primitives ----------------------------------------------- */

static bool
level(Lower *L, LStage *s, SchedPrim *sp, Level *lv)
{
	SchedArg *st = sched_arg(sp, 0), *ax = sched_arg(sp, 1);
	LStage *t = st && st->str ? stage_find(L, intern_cstr(st->str)) : NULL;
	if (!t && st && st->str && sched_poisoned(L->poison, L->npoison, intern_cstr(st->str))) {
		sched_quiet = true;
		return false;
	}
	if (!t || t->input) {
		diag_error(st ? st->loc : sp->loc, "'%s' is not a stage", st && st->str ? st->str : "?");
		return false;
	}
	if (t == s) {
		diag_error(st->loc, "'%s' cannot be computed inside its own loops", s->name);
		return false;
	}
	lv->kind = LEVEL_AT;
	lv->stage = t;
	lv->axis = ax && ax->str ? intern_cstr(ax->str) : NULL;
	lv->leaf = -1;
	lv->loc = ax ? ax->loc : sp->loc;
	return true;
}

static void
apply(Lower *L, SchedPrim *sp)
{
	LStage *s = stage_find(L, intern_cstr(sp->stage));
	if (!s && sched_poisoned(L->poison, L->npoison, intern_cstr(sp->stage))) {
		sched_quiet = true;
		return;
	}
	if (!s) {
		diag_error(sp->stage_loc, "'%s' is not a stage of '%s'", sp->stage, L->k->name);
		return;
	}
	if (s->input && sp->prim_id != PRIM_CACHE_READ) {
		diag_error(sp->stage_loc, "'%s' is an input; only cache_read applies to it", s->name);
		return;
	}
	int p, q, *pos;
	SchedArg *a;
	if (!update_prim_ok(s, sp))     /* a stage with an update definition: update.c */
		return;
	switch (sp->prim_id) {
	case PRIM_SPLIT:
		p = sched_find_leaf(s, sched_arg(sp, 0));
		a = sched_arg(sp, 1);
		if (p < 0 || !a || a->ival <= 0 || !out_ok(s, sp, 0) || !out_ok(s, sp, 1))
			return;
		if (tail_ok(s, p, tail_of(sp), sp))
			split(L, s, p, a->ival, tail_of(sp), round_of(sp), sp->outs[0], sp->outs[1], sp->loc);
		break;
	case PRIM_GPU_TILE:
		if (!L->sched || !L->sched->target || !strcmp(L->sched->target, "cpu")) {
			diag_error(sp->prim_loc, "'gpu_tile' binds loops to GPU blocks and threads; "
			    "it needs a cuda schedule, not a cpu one (tile is its cpu form)");
			return;
		}
		/* fall through */
	case PRIM_TILE:
		p = sched_find_leaf(s, sched_arg(sp, 0));
		q = sched_find_leaf(s, sched_arg(sp, 1));
		if (p < 0 || q < 0 || !sched_arg(sp, 2) || !sched_arg(sp, 3) || sp->nouts != 4)
			return;
		for (int i = 0; i < 4; i++)
			if (!out_ok(s, sp, i))
				return;
		if (!tail_ok(s, p, tail_of(sp), sp) || !tail_ok(s, q, tail_of(sp), sp))
			return;
		{
			const char *x = s->axes[s->leaves[p]].name, *y = s->axes[s->leaves[q]].name;
			split(L, s, p, sched_arg(sp, 2)->ival, tail_of(sp), round_of(sp), sp->outs[0], sp->outs[2], sp->loc);
			q = stage_leaf(s, y);
			split(L, s, q, sched_arg(sp, 3)->ival, tail_of(sp), round_of(sp), sp->outs[1], sp->outs[3], sp->loc);
			(void)x;
			int ps[4];
			for (int i = 0; i < 4; i++)
				ps[i] = stage_leaf(s, sp->outs[i]);
			reorder(s, ps, 4);
			s->reordered = sp->loc;
			if (sp->prim_id == PRIM_GPU_TILE) {
				static const ForKind fk[4] = { FOR_GPU_BLOCK, FOR_GPU_BLOCK,
					FOR_GPU_THREAD, FOR_GPU_THREAD };
				for (int i = 0; i < 4; i++) {
					Axis *ax = &s->axes[s->leaves[stage_leaf(s, sp->outs[i])]];
					if (ax->red) {
						diag_error(sp->loc, "cannot bind reduction axis '%s' of "
						    "'%s': its iterations update the same element",
						    ax->name, s->name);
						return;
					}
					ax->fk = fk[i];
					ax->fk_loc = sp->loc;
					ax->gpu_dim = i % 2 ? 0 : 1;   /* x: the inner (yo, yi) */
				}
			}
		}
		break;
	case PRIM_FUSE:
		fuse(L, s, sp);
		break;
	case PRIM_REORDER: {
		int n = 0;
		pos = arena_alloc(ir_arena, (sp->nargs + 1) * sizeof *pos);
		for (int i = 0; (a = sched_arg(sp, i)); i++) {
			if ((pos[n] = sched_find_leaf(s, a)) < 0)
				return;
			for (int j = 0; j < n; j++)
				if (pos[j] == pos[n]) {
					diag_error(a->loc, "'%s' appears twice in reorder", a->str);
					return;
				}
			n++;
		}
		reorder(s, pos, n);
		s->reordered = sp->loc;
		break;
	}
	case PRIM_UNROLL:
		set_kind(s, sp, FOR_UNROLLED);
		break;
	case PRIM_PARTITION: {
		int p = sched_find_leaf(s, sched_arg(sp, 0));
		if (p >= 0)
			s->axes[s->leaves[p]].partition = true;
		break;
	}
	case PRIM_VECTORIZE:
		set_kind(s, sp, FOR_VECTORIZED);
		break;
	case PRIM_PARALLEL:
		if (L->sched && L->sched->target && !strcmp(L->sched->target, "cuda")) {
			diag_error(sp->prim_loc, "'parallel' runs a loop on CPU threads; a cuda "
			    "schedule runs loops in parallel by binding them to blockIdx and threadIdx");
			diag_note(sp->loc, "bind the loop instead: %s.bind(AXIS, blockIdx.x), or "
			    "%s.gpu_tile(...)", s->name, s->name);
			return;
		}
		set_kind(s, sp, FOR_PARALLEL);
		break;
	case PRIM_BIND:
		if (!L->sched || !L->sched->target || !strcmp(L->sched->target, "cpu")) {
			diag_error(sp->prim_loc, "'bind' maps loops to GPU blocks and threads; it needs "
			    "a cuda schedule, not a cpu one");
			return;
		}
		a = sched_arg(sp, 1);
		set_kind(s, sp, a && !strcmp(a->str ? a->str : "", "vthread") ? FOR_VTHREAD :
		    a && a->str && !strcmp(a->str, "blockIdx") ? FOR_GPU_BLOCK : FOR_GPU_THREAD);
		break;
	case PRIM_COMPUTE_ROOT:
		s->compute.kind = LEVEL_ROOT;
		s->compute.loc = sp->loc;
		break;
	case PRIM_COMPUTE_INLINE:
		if (s->output) {
			diag_error(sp->loc, "cannot inline output '%s': the caller reads its buffer", s->name);
			return;
		}
		if (s->red) {
			diag_error(sp->loc, "cannot inline reduction stage '%s'; compute it at root "
			    "or at a loop of its consumer (compute_at)", s->name);
			return;
		}
		s->compute.kind = LEVEL_INLINE;
		s->compute.loc = sp->loc;
		break;
	case PRIM_COMPUTE_AT:
		if (s->output) {
			diag_error(sp->loc, "output '%s' is written to the caller's buffer and computed "
			    "at root; it cannot be computed at a loop of another stage", s->name);
			return;
		}
		level(L, s, sp, &s->compute);
		break;
	case PRIM_STORE_AT:
		if (s->output) {
			diag_error(sp->loc, "output '%s' is stored in the caller's buffer; store_at "
			    "does not apply", s->name);
			return;
		}
		if (level(L, s, sp, &s->store))
			s->store_set = true;
		break;
	case PRIM_COMPUTE_WITH: {
		/* the loops are matched after bounds inference: compute_with.c */
		Level lv;
		if (!level(L, s, sp, &lv))
			return;
		if (!lv.axis)
			return;
		s->with = lv.stage;
		s->with_axis = lv.axis;
		s->with_loc = sp->loc;
		break;
	}
	case PRIM_STORE_ROOT:
		s->store.kind = LEVEL_ROOT;
		s->store.loc = sp->loc;
		s->store_set = true;
		break;
	case PRIM_CACHE_READ:
		sched_cache_read(L, s, sp);
		break;
	case PRIM_CACHE_WRITE:
		sched_cache_write(L, s, sp);
		break;
	case PRIM_RFACTOR:
		sched_rfactor(L, s, sp);
		break;
	case PRIM_TENSORIZE:
		tensorize_request(L, s, sp);     /* matched after lowering: tensorize.c */
		break;
	case PRIM_DOUBLE_BUFFER:
		/* two halves of the buffer, filled one iteration ahead:
		 * double_buffer.c */
		if (s->output) {
			diag_error(sp->loc, "double_buffer applies to a stage computed inside a loop "
			    "of its consumer; output '%s' is the caller's buffer", s->name);
			return;
		}
		s->buf->double_buffer = true;
		s->buf->double_buffer_loc = sp->loc;
		break;
	case PRIM_PIPELINE: {
		/* S slots filled S - 1 iterations ahead, asynchronously:
		 * double_buffer.c */
		SchedArg *a = sched_arg(sp, 0);
		if (s->output) {
			diag_error(sp->loc, "pipeline applies to a stage computed inside a loop of its "
			    "consumer; output '%s' is the caller's buffer", s->name);
			return;
		}
		if (!a || a->ival < 2 || a->ival > 8) {
			diag_error(a ? a->loc : sp->loc, "pipeline of '%s' with %lld stage%s: a pipeline "
			    "has 2 to 8 stages (2: double_buffer with asynchronous copies)", s->name,
			    a ? (long long)a->ival : 0LL, a && a->ival == 1 ? "" : "s");
			return;
		}
		if (s->buf->double_buffer) {
			diag_error(sp->loc, "pipeline of '%s', which is already double-buffered", s->name);
			diag_note(s->buf->double_buffer_loc, "double_buffer is here; pipeline(2) is its "
			    "asynchronous form");
			return;
		}
		SchedArg *d = kwarg(sp, "defer");
		if (d && d->ival > 0 && (!L->opt || !L->opt->target ||
		    strcmp(L->opt->target, "cuda"))) {
			diag_error(d->loc, "pipeline of '%s' with defer = %lld: the wgmma calls of "
			    "sm_90a GPUs keep groups in flight, for schedules of the cuda target (this "
			    "one is for %s)", s->name, (long long)d->ival,
			    L->opt && L->opt->target ? L->opt->target : "cpu");
			return;
		}
		/* each group in flight still reads its slot: it holds one more,
		 * and the fills run 1 + defer fewer steps ahead than the slots */
		if (d && d->ival > 0 && a->ival - 1 - d->ival < 1) {
			diag_error(d->loc, "pipeline of '%s' with %lld stages and defer = %lld: too "
			    "few slots; the fills run stages - 1 - defer steps ahead, at least 1",
			    s->name, (long long)a->ival, (long long)d->ival);
			diag_note(a->loc, "pipeline(%lld, defer = %lld) is the fewest: one step ahead, "
			    "%lld slot%s read by wgmma in flight", (long long)(d->ival + 2),
			    (long long)d->ival, (long long)d->ival, d->ival == 1 ? "" : "s");
			return;
		}
		s->buf->pipeline = (int)a->ival;
		s->buf->pipeline_loc = sp->loc;
		s->buf->pipeline_defer = d ? (int)d->ival : 0;
		SchedArg *pr = kwarg(sp, "producer");
		if (pr && (!L->opt || !L->opt->target || strcmp(L->opt->target, "cuda"))) {
			diag_error(pr->loc, "pipeline of '%s' with producer = warpgroup: a warpgroup "
			    "issuing TMA loads on sm_90 GPUs, for schedules of the cuda target (this one "
			    "is for %s)", s->name, L->opt && L->opt->target ? L->opt->target : "cpu");
			return;
		}
		s->buf->pipeline_producer = pr != NULL;
		if (pr)
			s->buf->producer_loc = pr->loc;
		s->buf->double_buffer = true;     /* the same pass, S slots */
		s->buf->double_buffer_loc = sp->loc;
		break;
	}
	case PRIM_STORAGE_ALIGN: {
		SchedArg *ax = sched_arg(sp, 0), *fa = sched_arg(sp, 1), *of = sched_arg(sp, 2);
		if (s->input || s->output) {
			diag_error(sp->loc, "storage_align of '%s', the caller's %s: its layout is the "
			    "caller's; pad a copy (cache_read, cache_write) or a stage computed inside",
			    s->name, s->input ? "input" : "output");
			return;
		}
		int d = 0;
		while (d < s->ndims && (s->axes[d].red || strcmp(s->axes[d].name, ax->str)))
			d++;
		if (d == s->ndims) {
			diag_error(ax->loc, "'%s' is not a dimension of '%s': storage_align names the "
			    "stage's pure axes as it defines them (not the loops split from them)",
			    ax->str, s->name);
			return;
		}
		if (!fa || !of || of->ival < 0 || of->ival >= fa->ival) {
			diag_error(of ? of->loc : sp->loc, "storage_align of '%s': the offset must be "
			    "at least 0 and below the factor (%lld)", s->name,
			    fa ? (long long)fa->ival : 0LL);
			return;
		}
		s->buf->align_dim = d;
		s->buf->align_factor = fa->ival;
		s->buf->align_offset = of->ival;
		s->buf->align_loc = sp->loc;
		break;
	}
	case PRIM_REORDER_STORAGE: {
		/* a permutation of the root pure axes (the buffer's dimensions),
		 * whatever loops split them since; the rest is flatten.c's */
		if (s->input || s->output) {
			diag_error(sp->loc, "reorder_storage of '%s', the caller's %s: its layout is "
			    "the caller's (row-major); reorder the storage of a copy (cache_read, "
			    "cache_write) or of a stage computed inside", s->name,
			    s->input ? "input" : "output");
			return;
		}
		int *order = arena_alloc(ir_arena, (size_t)(s->ndims + 1) * sizeof *order);
		int n = 0;
		for (int i = 0; (a = sched_arg(sp, i)); i++) {
			int d = 0;
			while (d < s->ndims && (s->axes[d].red || strcmp(s->axes[d].name, a->str)))
				d++;
			if (d == s->ndims) {
				diag_error(a->loc, "'%s' is not a dimension of '%s': reorder_storage "
				    "names the stage's pure axes as it defines them (not the loops "
				    "split from them)", a->str, s->name);
				return;
			}
			for (int j = 0; j < n; j++)
				if (order[j] == d) {
					diag_error(a->loc, "'%s' appears twice in reorder_storage", a->str);
					return;
				}
			if (n < s->ndims)
				order[n++] = d;
		}
		if (n != s->ndims) {
			diag_error(sp->loc, "reorder_storage of '%s' names %d of its %d dimensions: "
			    "give every one, outermost first", s->name, n, s->ndims);
			return;
		}
		s->buf->storage_order = order;
		s->buf->storage_loc = sp->loc;
		break;
	}
	case PRIM_SWIZZLE:
		/* checked where its layout is fixed: flatten.c */
		if (s->input || s->output) {
			diag_error(sp->loc, "swizzle applies to a stage the kernel keeps in shared "
			    "memory; %s '%s' is the caller's buffer", s->input ? "input" : "output",
			    s->name);
			return;
		}
		if (!L->opt || !L->opt->target || strcmp(L->opt->target, "cuda")) {
			diag_error(sp->loc, "swizzle of '%s': a layout of GPU shared memory, for "
			    "schedules of the cuda target (this one is for %s)", s->name,
			    L->opt && L->opt->target ? L->opt->target : "cpu");
			return;
		}
		s->buf->swizzle = true;
		s->buf->swizzle_loc = sp->loc;
		break;
	case PRIM_TMA:
		/* the pipeline and the tile's shape are checked by the cuda
		 * target, which sees the copy (target/cuda/gpu_tma.c) */
		if (s->input || s->output) {
			diag_error(sp->loc, "tma applies to a tile the kernel copies into shared "
			    "memory (cache_read); %s '%s' is the caller's buffer",
			    s->input ? "input" : "output", s->name);
			return;
		}
		if (!L->opt || !L->opt->target || strcmp(L->opt->target, "cuda")) {
			diag_error(sp->loc, "tma of '%s': copies by the Tensor Memory Accelerator of "
			    "sm_90 GPUs, for schedules of the cuda target (this one is for %s)", s->name,
			    L->opt && L->opt->target ? L->opt->target : "cpu");
			return;
		}
		s->buf->tma = true;
		s->buf->tma_loc = sp->loc;
		break;
	case PRIM_SET_SCOPE:
		if (s->input || s->output) {
			diag_error(sp->loc, "set_scope applies to a stage the kernel computes inside; "
			    "%s '%s' is the caller's buffer", s->input ? "input" : "output", s->name);
			return;
		}
		s->scope = s->buf->scope = sched_scope_of(L, sched_arg(sp, 0), false);
		s->buf->scope_loc = sp->loc;
		s->scope_loc = sp->loc;
		break;
	case PRIM_PRAGMA: {
		/* hints; on VTA, TVM's two (the target finds copies and ALU work
		 * by their scopes and shapes, and says when a tagged stage is
		 * neither) */
		SchedArg *t = sched_arg(sp, 1);
		const char *target = L->sched && L->sched->target ? L->sched->target : "cpu";
		if (!strcmp(target, "vta") && t && t->str && strcmp(t->str, "dma_copy") != 0 &&
		    strcmp(t->str, "alu") != 0)
			diag_error(t->loc, "unknown VTA pragma '%s': VTA's are dma_copy (a copy "
			    "between DRAM and an on-chip buffer) and alu (element-wise work on acc)", t->str);
		break;
	}
	case PRIM_PREFETCH:
		break;      /* a hint: no effect on the CPU loop nest */
	default:
		diag_error(sp->prim_loc, "unknown schedule primitive '%s'", sp->prim);
	}
}

/* A failed primitive: the names it would have made are poisoned. */
static void
poison_outs(Lower *L, SchedPrim *sp)
{
	if (sp->prim_id == PRIM_CACHE_READ || sp->prim_id == PRIM_CACHE_WRITE ||
	    sp->prim_id == PRIM_RFACTOR) {
		if (sp->nouts > 0)
			*ARENA_PUSH(ir_arena, L->poison, L->npoison, L->cappoison) = intern_cstr(sp->outs[0]);
		return;
	}
	LStage *s = stage_find(L, intern_cstr(sp->stage));
	for (int i = 0; s && i < sp->nouts; i++)
		if (stage_leaf(s, intern_cstr(sp->outs[i])) < 0)
			*ARENA_PUSH(ir_arena, s->poison, s->npoison, s->cappoison) = intern_cstr(sp->outs[i]);
}

/* Every primitive is tried, also after one failed: the schedule's state
 * stays consistent (a failed primitive changes nothing), so one run
 * reports every independent mistake. */
bool
sched_apply(Lower *L, Schedule *s, int nprims)
{
	int before = diag_errors();
	L->sched = s;
	for (int i = 0; s && i < nprims && i < s->nprims; i++) {
		int e = diag_errors();
		sched_quiet = false;
		apply(L, &s->prims[i]);
		if (diag_errors() != e || sched_quiet)
			poison_outs(L, &s->prims[i]);
	}
	return diag_errors() == before;
}
