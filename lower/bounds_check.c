/* bounds_check.c: every access proved inside its tensor, once bound
 * inference has found the regions.
 *
 * Every access to a tensor with a declared shape (inputs, outputs,
 * declared stages) must be proved inside it for every valid size, over
 * the loops of the stage that makes it (bounds_infer_scope); an access
 * under a select is checked under the select's condition.  One that
 * cannot be is an error, with notes saying why and what would make it
 * legal; a gather clamped into its table becomes a size check at entry.
 * While tail=round_up rounds the regions up, the accesses that only
 * whole blocks make past the end are clamped (or masked along vector
 * lanes) instead.
 */
#include <string.h>

#include "lower/lower.h"

typedef struct {
	Lower *L;
	VarRange *scope;
	Loc *done; int ndone, capdone;
	Loc stage;             /* the stage's own place, for copies a primitive made */
	LStage *s;             /* the stage checked */
	/* an update definition (update_check): its position is being checked
	 * (messages say it writes there), or was (its value's reads of the
	 * stage, all at that position, need no second check) */
	bool writes, self_done;
} Check;

/* Whether axis a of s becomes vector lanes (it, or an axis split from
 * it, is vectorized). */
static bool
lanes_of(LStage *s, int a)
{
	if (s->axes[a].leaf)
		return s->axes[a].fk == FOR_VECTORIZED;
	for (int i = 0; i < s->nrels; i++) {
		Rel *r = &s->rels[i];
		if (!r->fuse && r->parent == a && (lanes_of(s, r->outer) || lanes_of(s, r->inner)))
			return true;
	}
	return false;
}

/* Whether idx varies along the vector lanes of s. */
static bool
in_lanes(LStage *s, IrExpr *idx)
{
	for (int k = 0; k < s->ndims + s->nred; k++) {
		int a = k < s->ndims ? k : s->rax[k - s->ndims];
		if (ir_uses_var(idx, s->axes[a].var) && lanes_of(s, a))
			return true;
	}
	return false;
}

static bool
reported(Check *c, Loc l)
{
	for (int i = 0; i < c->ndone; i++)
		if (c->done[i].file == l.file && c->done[i].begin == l.begin && c->done[i].end == l.end)
			return true;
	*ARENA_PUSH(ir_arena, c->done, c->ndone, c->capdone) = l;
	return false;
}

static LStage *
stage_of_buf(Lower *L, Buffer *b)
{
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->buf == b)
			return L->stages[i];
	return NULL;
}

static IrExpr *
load_fn(IrExpr *e, void *ctx)
{
	if (e->kind == IR_LOAD)
		*(bool *)ctx = true;
	return *(bool *)ctx ? e : NULL;
}

/* Whether an index depends on the data (a gather: table[idx[i], d]). */
static bool
gathers(IrExpr *idx)
{
	bool found = false;
	stage_map(idx, load_fn, &found);
	return found;
}

/* The sizes' floors under which [lo, hi] lies in [0, top] where the
 * stage's own facts do not place it, or NULL (the access needs more than
 * a size large enough: a[i + 1] with i < N). */
static int64_t *
floors_needed(Check *c, IrExpr *lo, IrExpr *hi, IrExpr *top)
{
	Lower *L = c->L;
	int64_t *f = facts_copy(L, c->s->ffloor);
	facts_ge0(L, lo, f);
	facts_ge0(L, ir_sub(top, hi), f);
	if (!facts_stronger(L, f, c->s->ffloor))
		return NULL;
	VarRange *r = facts_scope(L, c->scope, f);
	return lin_prove_le(ir_i64c(0), lo, r) && lin_prove_le(hi, top, r) ? f : NULL;
}

/* A gather clamped into the tensor (table[clamp(idx[i], 0, V - 1), d]),
 * or a loop over such a region, is in bounds wherever the tensor is not
 * empty: where the stage runs,
 * the entry point checks that it is not (V >= 1), and returns the size
 * error otherwise.  True when such a check makes the access legal. */
static bool
gather_check(Check *c, IrExpr *idx, IrExpr *lo, IrExpr *hi, IrExpr *top, LStage *t)
{
	Lower *L = c->L;
	int64_t *f;
	/* the index itself, or the bounds of its loop, or a copy (cache_read)
	 * of the region its readers gather from: ax0 in [clamp(idx[i], 0,
	 * V - 1)] at one row, [min(0, V - 1), V - 1] over a tile of rows */
	bool copy = !c->s->t && c->s->value && c->s->value->kind == IR_LOAD &&
	    t && c->s->value->load.buf == t->buf;
	if (!lo || !hi || !(gathers(idx) || gathers(lo) || gathers(hi) || copy) ||
	    c->L->rounding || !(f = floors_needed(c, lo, hi, top)))
		return false;
	IrExpr *need = facts_cond(L, f, c->s->ffloor);
	IrExpr *runs = facts_cond(L, c->s->ffloor, L->floor0);
	const char *when = runs ? arena_printf(ir_arena, " where %s", facts_text(L,
	    c->s->ffloor, L->floor0)) : "";
	stage_add_check(L, runs ? ir_binop(IR_OR, ir_unop(IR_NOT, runs), need) : need, 2,
	    arena_printf(ir_arena, c->writes ? "%s: %s is needed%s: the update of '%s' writes "
	    "'%s' at %s" : "%s: %s is needed%s: '%s' reads '%s' at %s", L->k->name,
	    facts_text(L, f, c->s->ffloor), when, c->s->name, t->name,
	    idx->loc.file ? stage_loc_text(idx->loc) : ir_expr_str(idx)));
	return true;
}

/* Notes after an access that may be out of bounds: the sizes that would
 * make it legal, or how to make it so. */
static void
explain(Check *c, Loc at, const char *text, IrExpr *idx, IrExpr *lo, IrExpr *hi,
    IrExpr *top, bool lo_ok, bool hi_ok)
{
	Lower *L = c->L;
	int64_t *f = lo && hi ? floors_needed(c, lo, hi, top) : NULL;
	if (f) {
		diag_note(at, "it is in bounds where %s, which the loops around it do not imply "
		    "(a loop over that size would)", facts_text(L, f, c->s->ffloor));
		return;
	}
	const char *top_s = ir_expr_str(top);
	if (gathers(idx)) {
		if (!lo || !hi)
			diag_note(at, "the index depends on the data (a gather): clamp it into "
			    "range, clamp(%s, 0, %s)", text, top_s);
		else
			diag_note(at, "the index depends on the data (a gather): its type's range "
			    "or its clamp, min, max or remainder must keep it within [0, %s]", top_s);
		return;
	}
	if (!lo || !hi)
		return;
	if (!hi_ok && lo_ok)
		diag_note(at, "read it only where it is in range (%s <= %s ? ... : ...), or "
		    "clamp it: clamp(%s, 0, %s)", text, top_s, text, top_s);
	else if (!lo_ok && hi_ok)
		diag_note(at, "read it only where it is in range (%s >= 0 ? ... : ...), or "
		    "clamp it: clamp(%s, 0, %s)", text, text, top_s);
	else
		diag_note(at, "read it only where it is in range, or clamp it: clamp(%s, 0, %s)",
		    text, top_s);
}

/* Checks every access of e under the facts f; returns e, or, while
 * L->rounding, e with the indices that a whole block would take past the
 * end of a tensor clamped into it (the first pass, without rounding, has
 * proved every access the kernel needs, so such a point only feeds
 * values no consumer reads).  A clamp whose index may still fall outside
 * (no proof either way) is an error, as without rounding. */
static IrExpr *
check_walk(Check *c, IrExpr *e, Fact *f)
{
	if (!e)
		return e;
	if (e->kind == IR_SELECT) {
		IrExpr *a = check_walk(c, e->a, f);
		IrExpr *b = check_walk(c, e->b, lin_facts(e->a, true, f));
		IrExpr *x = check_walk(c, e->c, lin_facts(e->a, false, f));
		if (a == e->a && b == e->b && x == e->c)
			return e;
		IrExpr *n = ir_select(a, b, x);
		n->loc = e->loc;
		return n;
	}
	IrExpr *a = check_walk(c, e->a, f), *b = check_walk(c, e->b, f);
	IrExpr *x = check_walk(c, e->c, f);
	IrExpr *n = e;
	if (a != e->a || b != e->b || x != e->c) {
		n = arena_alloc(ir_arena, sizeof *n);
		*n = *e;
		n->a = a, n->b = b, n->c = x;
	}
	if (e->kind == IR_CALL) {
		IrExpr **args = NULL;
		for (int i = 0; i < e->call.nargs; i++) {
			IrExpr *y = check_walk(c, e->call.args[i], f);
			if (y == e->call.args[i])
				continue;
			if (!args) {
				args = arena_alloc(ir_arena, e->call.nargs * sizeof *args);
				memcpy(args, e->call.args, e->call.nargs * sizeof *args);
				if (n == e) {
					n = arena_alloc(ir_arena, sizeof *n);
					*n = *e;
				}
				n->call.args = args;
			}
			args[i] = y;
		}
	}
	if (e->kind != IR_LOAD)
		return n;
	LStage *t = stage_of_buf(c->L, e->load.buf);
	/* a stage's buffer is the region its consumers read, rounded too: in
	 * the rounding pass only inputs and outputs, stored whole, need the
	 * points past their end kept inside (clamping a read of a region that
	 * starts at a block's origin would leave its buffer) */
	bool region_buf = c->L->rounding && t && !t->input && !t->output;
	IrExpr **idx = NULL, *mask = NULL;
	bool writes = c->writes;      /* this access only, not the reads in its indices */
	for (int d = 0; d < e->load.nidx; d++) {
		c->writes = false;
		IrExpr *in = check_walk(c, e->load.idx[d], f), *out = in;
		c->writes = writes;
		/* a dimension cut back to the shape (bounds_infer.c): its buffer
		 * holds the region, and whole blocks' reads past it are clamped
		 * into it */
		bool cut = region_buf && d < 64 && (t->cut >> d & 1);
		if (t && t->shape && (!region_buf || cut) && !(c->self_done && t == c->s)) {
			IrExpr *lo, *hi;
			IrExpr *top = cut ? lin_normalize(ir_sub(ir_add(t->amin[d], t->aext[d]),
			    ir_i64c(1))) : lin_normalize(ir_sub(t->shape[d], ir_i64c(1)));
			IrExpr *bottom = cut ? t->amin[d] : ir_i64c(0);
			Loc at = in->loc.file ? in->loc : e->loc.file ? e->loc : c->stage;
			bool bounded = lin_interval(in, c->scope, f, &lo, &hi);
			lin_gave_up();
			bool lo_ok = bounded && lin_prove_le(bottom, lo, c->scope);
			bool hi_ok = bounded && lin_prove_le(hi, top, c->scope);
			bool gave_up = lin_gave_up();
			if (c->L->rounding && bounded && (!lo_ok || !hi_ok) && in_lanes(c->s, in)) {
				/* along vector lanes a clamp would be a gather: a masked
				 * load instead (zero where the block runs past the end) */
				IrExpr *m = NULL;
				if (!hi_ok)
					m = ir_binop(IR_LE, in, top);
				if (!lo_ok) {
					IrExpr *g = ir_binop(IR_GE, in, bottom);
					m = m ? ir_binop(IR_AND, m, g) : g;
				}
				mask = mask ? ir_binop(IR_AND, mask, m) : m;
			} else if (cut && !bounded) {
				out = ir_min(ir_max(out, bottom), top);   /* no bounds to prove with */
				out->loc = in->loc;
			} else if (c->L->rounding && bounded) {
				if (!hi_ok)
					out = ir_min(out, top);
				if (!lo_ok)
					out = ir_max(out, bottom);
				out->loc = in->loc;
			} else if ((!lo_ok || !hi_ok) && !gather_check(c, in, lo, hi, top, t) &&
			    !reported(c, at)) {
				/* a copy a primitive made has no source text of its own */
				const char *text = at.file == c->stage.file && at.begin == c->stage.begin &&
				    at.end == c->stage.end ? ir_expr_str(in) : stage_loc_text(at);
				if (c->writes && (!lo || !hi))
					diag_error(at, "position '%s' of the update of '%s' cannot be "
					    "bounded, so it may write out of bounds", text, t->name);
				else if (c->writes)
					diag_error(at, "position '%s' of the update of '%s' may be out of "
					    "bounds: needs [%s, %s] but '%s' has extent %s in dimension %d",
					    text, t->name, ir_expr_str(lo), ir_expr_str(hi), t->name,
					    ir_expr_str(t->shape[d]), d);
				else if (!lo || !hi)
					diag_error(at, "index '%s' of '%s' cannot be bounded, so it may be out "
					    "of bounds", text, t->name);
				else
					diag_error(at, "index '%s' of '%s' may be out of bounds: needs [%s, %s] "
					    "but '%s' has extent %s in dimension %d", text, t->name,
					    ir_expr_str(lo), ir_expr_str(hi), t->name, ir_expr_str(t->shape[d]), d);
				if (gave_up)
					diag_note(at, "txc's prover gave up on this access: its bounds nest "
					    "too deep (a chain of compute_at levels, each bounded by the "
					    "next) or need too many steps; it may well be in bounds");
				explain(c, at, text, in, lo, hi, top, lo_ok, hi_ok);
			}
		}
		if (out != e->load.idx[d] && !idx) {
			idx = arena_alloc(ir_arena, e->load.nidx * sizeof *idx);
			memcpy(idx, e->load.idx, e->load.nidx * sizeof *idx);
		}
		if (idx)
			idx[d] = out;
	}
	if (idx) {
		if (n == e) {
			n = arena_alloc(ir_arena, sizeof *n);
			*n = *e;
		}
		n->load.idx = idx;
	}
	if (!mask)
		return n;
	IrExpr *r = ir_select(mask, n, ir_make_const(n->type, 0));
	r->loc = e->loc;
	return r;
}

/* An update definition's reads, and its position: inside the stage for
 * every step, proved as a read of the stage there would be (a position
 * that depends on the data must be clamped into range). */
static void
update_check(Check *c, LStage *s)
{
	/* its nest runs where its own loops do, whether or not the pure
	 * value's run (h[b] = 0 over B = 0 bins, N >= 1 steps) */
	Lower *L = c->L;
	int64_t *ff = s->ffloor;
	s->ffloor = facts_copy(L, s->gfloor);
	for (int k = 0; k < s->ndims + s->nred; k++)
		if (k >= s->ndims || (k < 64 && (s->ukeep >> k & 1)))
			facts_nonempty(L, s->dmin[k], s->dmax[k], s->ffloor);
	c->scope = facts_scope(L, bounds_infer_scope(L, s, -1), s->ffloor);
	Fact *f = lin_facts(s->upred, true, NULL);
	s->upred = check_walk(c, s->upred, NULL);
	IrExpr *at = ir_load(s->buf, s->uidx, s->ndims, NULL, 1);
	at->loc = s->uloc;
	c->writes = true;
	IrExpr *to = check_walk(c, at, f);
	c->writes = false;
	if (to != at && to->kind == IR_LOAD)
		s->uidx = to->load.idx;
	c->self_done = true;
	s->uval = check_walk(c, s->uval, f);
	c->self_done = false;
	s->ffloor = ff;
}

void
bounds_check_stages(Lower *L)
{
	Check c = { L, NULL, NULL, 0, 0, loc_none, NULL, false, false };
	for (int i = 0; i < L->nstages; i++) {
		LStage *s = L->stages[i];
		if (s->input || !s->bounded)
			continue;
		c.scope = facts_scope(L, bounds_infer_scope(L, s, -1), s->ffloor);
		c.stage = s->loc;
		c.s = s;
		s->value = check_walk(&c, s->value, NULL);
		s->rpred = check_walk(&c, s->rpred, NULL);
		s->rbody = check_walk(&c, s->rbody, lin_facts(s->rpred, true, NULL));
		if (s->upd)
			update_check(&c, s);
	}
}
