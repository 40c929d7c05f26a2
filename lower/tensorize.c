/* tensorize.c: replaces a loop nest by a hardware intrinsic (TVM's
 * tensorize).
 *
 * `S.tensorize(ki, gemm_6x16_f32)` asks that the loops from ki inward in
 * S's update compute exactly what the intrinsic declares (tx.5,
 * INTRINSICS).  After lower_stages the nest under ki is compared with the
 * declaration: as many loops as the intrinsic has axes (an axis of
 * extent 1 may have none: the simplifier drops a loop of one iteration),
 * each loop mapped to one axis (by the accesses, so loop order and names
 * do not matter),
 * equal constant extents, parameters bound to loop extents, the same
 * element types, the update `S = S + x * y` against `c = sum(k) a * b`,
 * and every access affine in the loops with the strides the emitter needs
 * (computed in elements from the buffer's layout, so any dimension order
 * works).  A mismatch is an error at the primitive saying which part
 * differs.
 *
 * On success the nest becomes
 *     if (every guard holds at the corners of the tile)
 *         call KIND(extents..., c, strides..., a, strides..., b, strides...)
 *     else
 *         the original loops (partial tiles at the edges)
 * where each tensor is passed as a scalar load at the tile's first element
 * (the backend takes its address) followed by its element strides, one per
 * intrinsic dimension.  Guards are affine, so holding at the 2^n corners
 * of the box means holding everywhere in it.
 *
 * An intrinsic whose rule is no reduction is a copy: `c[i, j] = 0.0`
 * (mma_fill) or `d[i, j] = c[i, j]` (mma_store).  It matches a nest
 * outside the update: a reduction stage's initialisation, or the body of
 * a stage without reduction; the call's tensors are the output's, then
 * the input's.  The tensor cores' intrinsics on a fragment (a warp's
 * registers: target/cuda/gpu_fragment.c) take partial tiles themselves,
 * their extents shortened by the guards as fma_outer's are: a fragment
 * has no element a scalar loop could reach.
 */
#include <string.h>

#include "lower/tensorize.h"

void
tensorize_request(Lower *L, LStage *s, SchedPrim *sp)
{
	SchedArg *ax = NULL, *in = NULL;
	for (int i = 0, n = 0; i < sp->nargs; i++)
		if (!sp->args[i].key) {
			if (n == 0)
				ax = &sp->args[i];
			else if (n == 1)
				in = &sp->args[i];
			n++;
		}
	if (!ax || !in || !ax->str || !in->str) {
		diag_error(sp->loc, "'tensorize' takes an axis and an intrinsic name");
		return;
	}
	const char *axis = intern_cstr(ax->str), *name = intern_cstr(in->str);
	if (stage_leaf(s, axis) < 0) {
		diag_error(ax->loc, "'%s' has no loop '%s'; its loops are %s", s->name, axis,
		    stage_leaf_list(s));
		return;
	}
	Kernel *k = intrinsic_find(L->p, name);
	if (!k) {
		diag_error(in->loc, "no intrinsic '%s' is declared", name);
		diag_note(in->loc, "declare it with `intrinsic %s(...) for ...`, or import the "
		    "target's table, e.g. import \"intrinsics/cpu.tx\";", name);
		return;
	}
	const char *target = L->sched && L->sched->target ? L->sched->target : "cpu";
	if (strcmp(k->intr_target, target) != 0) {
		diag_error(in->loc, "intrinsic '%s' is for %s, but this schedule is for %s", name,
		    k->intr_target, target);
		diag_note(k->name_loc, "'%s' declared here", name);
		return;
	}
	TzReq *r = ARENA_PUSH(ir_arena, L->tz, L->ntz, L->captz);
	r->s = s;
	r->axis = axis;
	r->intr = k;
	r->loc = sp->loc;
	r->axis_loc = ax->loc;
}

/* ---- the match ---------------------------------------------------- */


static const char *
loop_names(Tz *t)
{
	char *s = "";
	for (int i = 0; i < t->n; i++)
		s = arena_printf(ir_arena, "%s%s%s", s, i ? ", " : "", t->var[i]->name);
	return s;
}

static const char *
axis_names(Tz *t)
{
	char *s = "";
	for (int i = 0; i < t->ni; i++)
		s = arena_printf(ir_arena, "%s%s%s", s, i ? ", " : "", t->iax[i]);
	return s;
}

void
tz_fail(Tz *t, const char *msg)
{
	if (t->failed)
		return;
	t->failed = true;
	t->msg = msg;
}

static void
report(Tz *t)
{
	diag_error(t->rq->loc, "cannot tensorize '%s' at '%s' with '%s': %s", t->rq->s->name,
	    t->rq->axis, t->k->name, t->msg);
	diag_note(t->k->name_loc, "intrinsic '%s' declared here", t->k->name);
}

int64_t
tz_ast_const(Expr *e, bool *ok)
{
	*ok = e && e->kind == EXPR_INT;
	return *ok ? e->ival : 0;
}

/* The intrinsic's axes and their extents. */
static bool
intrinsic_axes(Tz *t)
{
	Rule *r = t->rule;
	Tensor *c = r->tensor;
	for (int d = 0; d < r->naxes && t->ni < MAXL; d++) {
		t->iax[t->ni] = r->axes[d];
		t->iext[t->ni++] = c->shape[d];
	}
	if (r->value->kind == EXPR_REDUCE)
		for (int i = 0; i < r->value->reduce.naxes && t->ni < MAXL; i++) {
			RedAxis *ra = &r->value->reduce.axes[i];
			if (ra->lo && !(ra->lo->kind == EXPR_INT && ra->lo->ival == 0)) {
				tz_fail(t, "the intrinsic's reduction ranges must start at 0");
				return false;
			}
			t->iax[t->ni] = ra->name;
			t->iext[t->ni++] = ra->hi;
		}
	for (int i = 0; i < t->ni; i++) {
		Expr *e = t->iext[i];
		if (!(e->kind == EXPR_INT || (e->kind == EXPR_NAME && e->id.ref == REF_SIZE))) {
			tz_fail(t, arena_printf(ir_arena, "the extent of the intrinsic's axis '%s' must be "
			    "a constant or a parameter", t->iax[i]));
			return false;
		}
	}
	for (int i = 0; i < MAXL; i++)
		t->map[i] = -1;
	return true;
}

int
tz_iaxis(Tz *t, const char *name)
{
	for (int i = 0; i < t->ni; i++)
		if (t->iax[i] == name)
			return i;
	return -1;
}

/* Element strides of a buffer (as flatten.c lays it out). */
static IrExpr *
buf_stride(Buffer *b, int d)
{
	IrExpr *s = ir_i64c(1);
	for (int e = b->ndims - 1; e > d; e--)
		s = lin_normalize(ir_mul(s, b->extent[e]));
	return s;
}

/* The change of access idx in elements when loop l steps by one, or NULL
 * when an index is not affine in it. */
static IrExpr *
loop_stride(Tz *t, Buffer *b, IrExpr **idx, int nidx, int l)
{
	IrExpr *total = ir_i64c(0);
	Var *v = t->var[l];
	for (int d = 0; d < nidx; d++) {
		if (!ir_uses_var(idx[d], v))
			continue;
		IrExpr *e0 = ir_substitute(idx[d], v, ir_i64c(0));
		IrExpr *e1 = ir_substitute(idx[d], v, ir_i64c(1));
		IrExpr *e2 = ir_substitute(idx[d], v, ir_i64c(2));
		IrExpr *c1 = lin_normalize(ir_sub(e1, e0)), *c2 = lin_normalize(ir_sub(e2, e0));
		int64_t a, b2;
		if (!ir_is_const(c1, &a) || !ir_is_const(c2, &b2) || b2 != 2 * a)
			return NULL;
		total = lin_normalize(ir_add(total, ir_mul(ir_i64c(a), buf_stride(b, d))));
	}
	return total;
}

static const char *
str(IrExpr *e)
{
	return ir_expr_str(e);
}

/* Binds intrinsic axis ax to loop l, checking extents. */
static bool
bind_axis(Tz *t, int ax, int l)
{
	if (t->map[ax] >= 0)
		return t->map[ax] == l;
	for (int i = 0; i < t->ni; i++)
		if (t->map[i] == l)
			return false;
	Expr *ie = t->iext[ax];
	bool isc;
	int64_t want = tz_ast_const(ie, &isc), have;
	if (isc) {
		if (!ir_is_const(t->ext[l], &have) || have != want) {
			tz_fail(t, arena_printf(ir_arena, "loop '%s' has extent %s but the intrinsic's '%s' "
			    "has %lld", t->var[l]->name, str(t->ext[l]), t->iax[ax], (long long)want));
			return false;
		}
	} else {
		Param *p = ie->id.param;
		if (t->pval[p->index] && !ir_expr_equal(t->pval[p->index], t->ext[l])) {
			tz_fail(t, arena_printf(ir_arena, "loop '%s' has extent %s but the intrinsic's "
			    "'%s' is %s, already bound to %s", t->var[l]->name, str(t->ext[l]),
			    t->iax[ax], p->name, str(t->pval[p->index])));
			return false;
		}
		t->pval[p->index] = t->ext[l];
	}
	t->map[ax] = l;
	return true;
}

/* The first min or max in e (a clamp), or NULL. */
typedef struct {
	IrVisitor v;
	IrExpr *found;
} Clamp;

static void
clamp_minmax(IrVisitor *v, IrExpr *e)
{
	Clamp *c = (Clamp *)v;
	if (!c->found)
		c->found = e;
}

static IrExpr *
clamped(IrExpr *e)
{
	Clamp c = { .v = {.expr = {[IR_MIN] = clamp_minmax, [IR_MAX] = clamp_minmax}} };
	ir_visit_expr(&c.v, e);
	return c.found;
}

/* Matches one access of the intrinsic (ia, an AST access) with an access
 * of the nest; appends the tile's first element and the strides. */
static bool
match_access(Tz *t, Expr *ia, Buffer *b, IrExpr **idx, int nidx)
{
	Tensor *it = ia->call.tensor;
	if (b->elem != it->elem) {
		tz_fail(t, arena_printf(ir_arena, "'%s' holds %s but the intrinsic's '%s' is %s",
		    b->name, type_name(b->elem), it->name, type_name(it->elem)));
		return false;
	}
	IrExpr *st[MAXL];
	int nz = 0, npoint = 0;
	for (int l = 0; l < t->n; l++) {
		st[l] = loop_stride(t, b, idx, nidx, l);
		if (!st[l]) {
			/* a round_up tail clamps the reads past the end (min(ko*4 + ki,
			 * K - 1)): say so, and what works (a packed copy of whole blocks) */
			IrExpr *clamp = NULL;
			for (int d = 0; d < nidx && !clamp; d++)
				clamp = clamped(idx[d]);
			tz_fail(t, clamp ? arena_printf(ir_arena, "an index of '%s' is not affine in "
			    "loop '%s': '%s' clamps it (as a tail=round_up split does where it "
			    "reads past the end); "
			    "pack '%s' with cache_read at the tile's loop, whose copy holds whole "
			    "blocks (txc-schedule(7) tensorize)", b->name, t->var[l]->name,
			    ir_expr_str(clamp), b->name) :
			    arena_printf(ir_arena, "an index of '%s' is not affine in loop '%s'",
			    b->name, t->var[l]->name));
			return false;
		}
		int64_t c;
		if (!(ir_is_const(st[l], &c) && c == 0))
			nz++;
	}
	/* the intrinsic's axes in this access */
	int axs[MAXL], na = 0;
	for (int d = 0; d < ia->call.nargs; d++) {
		Expr *x = ia->call.args[d];
		int a = x->kind == EXPR_NAME ? tz_iaxis(t, x->id.name) : -1;
		if (a < 0) {
			tz_fail(t, "the intrinsic's indices must be plain axes");
			return false;
		}
		axs[na++] = a;
		npoint += t->map[a] >= 0 && t->point[t->map[a]];
	}
	if (nz != na - npoint) {
		tz_fail(t, arena_printf(ir_arena, "'%s' varies in %d of the loops %s but the intrinsic's "
		    "'%s' in %d", b->name, nz, loop_names(t), it->name, na - npoint));
		return false;
	}
	/* axes already bound keep their loop; the rest take the remaining
	 * varying loops, equal constant extents first */
	bool used[MAXL] = { false };
	for (int i = 0; i < na; i++)
		if (t->map[axs[i]] >= 0) {
			int l = t->map[axs[i]];
			int64_t c;
			if (!t->point[l] && ir_is_const(st[l], &c) && c == 0) {
				tz_fail(t, arena_printf(ir_arena, "'%s' does not vary in loop '%s', which the "
				    "intrinsic's '%s' indexes with '%s'", b->name, t->var[l]->name, it->name,
				    t->iax[axs[i]]));
				return false;
			}
			used[l] = true;
		}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < na; i++) {
			int a = axs[i];
			if (t->map[a] >= 0)
				continue;
			bool isc;
			int64_t want = tz_ast_const(t->iext[a], &isc), have;
			for (int l = 0; l < t->n; l++) {
				int64_t c;
				if (used[l] || (ir_is_const(st[l], &c) && c == 0))
					continue;
				bool same = isc && ir_is_const(t->ext[l], &have) && have == want;
				if (pass == 0 && !same)
					continue;
				if (!bind_axis(t, a, l))
					return false;
				used[l] = true;
				break;
			}
		}
	for (int i = 0; i < na; i++)
		if (t->map[axs[i]] < 0) {
			tz_fail(t, arena_printf(ir_arena, "no loop left for the intrinsic's '%s' in '%s'",
			    t->iax[axs[i]], it->name));
			return false;
		}
	/* the tile's first element, then the strides */
	IrExpr **base = arena_alloc(ir_arena, (nidx + 1) * sizeof *base);
	for (int d = 0; d < nidx; d++) {
		base[d] = idx[d];
		for (int l = 0; l < t->n; l++)
			base[d] = ir_substitute(base[d], t->var[l], t->min[l]);
		base[d] = lin_normalize(base[d]);
	}
	if (t->nargs + 1 + na > 64) {
		tz_fail(t, "too many arguments");
		return false;
	}
	if (t->nacc >= 3 || na > IR_TZ_MAXDIMS) {
		tz_fail(t, "too many accesses or indices");
		return false;
	}
	t->meaning.ndims[t->nacc] = na;
	for (int i = 0; i < na; i++)
		t->meaning.axis[t->nacc][i] = axs[i];
	t->nacc++;
	t->args[t->nargs++] = ir_load(b, base, nidx, NULL, 1);
	for (int i = 0; i < na; i++)
		t->args[t->nargs++] = st[t->map[axs[i]]];
	return true;
}

static IrExpr *
strip_cast(IrExpr *e)
{
	while (e && e->kind == IR_CAST && e->a && e->a->type.code == e->type.code)
		e = e->a;
	return e;
}

/* e without widening casts (i32(x) of an i8 x, f32(x) of an f16 x) */
static IrExpr *
strip_widen(IrExpr *e)
{
	while (e && e->kind == IR_CAST && e->a && ((ir_is_int(e->type) && ir_is_int(e->a->type)) ||
	    (ir_is_float(e->type) && ir_is_float(e->a->type))) &&
	    ir_bits(e->a->type.code) < ir_bits(e->type.code))
		e = e->a;
	return e;
}

static Expr *
ast_strip(Expr *e)
{
	return e && e->kind == EXPR_CAST ? e->call.args[0] : e;
}

/* The rule's output as the access c[i, j...] of its axes' names, for
 * match_access (built in o). */
typedef struct {
	Expr e;
	Expr *idx[MAXL];
	Expr names[MAXL];
} OutAccess;

static Expr *
out_access(Tz *t, OutAccess *o)
{
	memset(o, 0, sizeof *o);
	o->e.kind = EXPR_ACCESS;
	o->e.call.tensor = t->rule->tensor;
	for (int d = 0; d < t->rule->naxes && d < MAXL; d++) {
		o->names[d].kind = EXPR_NAME;
		o->names[d].id.name = t->rule->axes[d];
		o->idx[d] = &o->names[d];
	}
	o->e.call.args = o->idx;
	o->e.call.nargs = t->rule->naxes;
	return &o->e;
}

/* The update store against `c[...] = sum(...) a * b`. */
static bool
match_update(Tz *t, IrStmt *st, bool swap)
{
	Expr *rv = t->rule->value;
	Expr *body = rv->kind == EXPR_REDUCE ? rv->reduce.body : rv;
	IrExpr *v = st->store.value;
	if (v->kind != IR_ADD) {
		tz_fail(t, "the nest's store is not a sum update S = S + ...");
		return false;
	}
	IrExpr *old = v->a, *x = v->b;
	if (!(old->kind == IR_LOAD && old->load.buf == st->store.buf)) {
		old = v->b;
		x = v->a;
	}
	if (old->kind != IR_LOAD || old->load.buf != st->store.buf ||
	    old->load.nidx != st->store.nidx) {
		tz_fail(t, "the nest's store is not a sum update S = S + ...");
		return false;
	}
	for (int d = 0; d < old->load.nidx; d++)
		if (!ir_expr_equal(old->load.idx[d], st->store.idx[d])) {
			tz_fail(t, "the update reads another element than it writes");
			return false;
		}
	if (rv->kind != EXPR_REDUCE || rv->reduce.op != RED_SUM) {
		tz_fail(t, "only sum reductions are supported");
		return false;
	}
	x = strip_cast(x);
	if (body->kind != EXPR_BINARY || body->bin.op != OP_MUL || x->kind != IR_MUL) {
		tz_fail(t, arena_printf(ir_arena, "the nest adds %s, not a product as the intrinsic does",
		    str(x)));
		return false;
	}
	IrExpr *xa = strip_cast(swap ? x->b : x->a), *xb = strip_cast(swap ? x->a : x->b);
	/* the intrinsic's own widening (i32(a[k]) * i32(b[j, k])) matches the
	 * nest's; match_access then checks the loads' element types */
	if (body->kind == EXPR_BINARY && body->bin.a->kind == EXPR_CAST)
		xa = strip_widen(xa);
	if (body->kind == EXPR_BINARY && body->bin.b->kind == EXPR_CAST)
		xb = strip_widen(xb);
	Expr *ia = ast_strip(body->bin.a), *ib = ast_strip(body->bin.b);
	if (xa->kind != IR_LOAD || xb->kind != IR_LOAD || ia->kind != EXPR_ACCESS ||
	    ib->kind != EXPR_ACCESS) {
		tz_fail(t, arena_printf(ir_arena, "the nest multiplies %s, not two loads",
		    str(x)));
		return false;
	}
	/* the output first: c[i, j] */
	OutAccess ca;
	return match_access(t, out_access(t, &ca), st->store.buf, st->store.idx, st->store.nidx) &&
	    match_access(t, ia, xa->load.buf, xa->load.idx, xa->load.nidx) &&
	    match_access(t, ib, xb->load.buf, xb->load.idx, xb->load.nidx);
}

/* The store against a copy's rule: `c[i, j] = 0.0` (a constant equal
 * to the rule's) or `d[i, j] = c[i, j]` (a load). */
static bool
match_copy(Tz *t, IrStmt *st)
{
	Expr *rv = t->rule->value;
	IrExpr *v = strip_cast(st->store.value);
	OutAccess ca;
	if (rv->kind == EXPR_ACCESS) {
		if (v->kind != IR_LOAD) {
			tz_fail(t, arena_printf(ir_arena, "the nest stores %s, not a copy of a load as the "
			    "intrinsic does", str(v)));
			return false;
		}
		return match_access(t, out_access(t, &ca), st->store.buf, st->store.idx,
		    st->store.nidx) && match_access(t, rv, v->load.buf, v->load.idx, v->load.nidx);
	}
	double want = rv->kind == EXPR_FLOAT ? rv->fval : (double)rv->ival, have;
	int64_t hi;
	bool isc = ir_is_const(v, &hi) ? (have = (double)hi, true) :
	    v->kind == IR_FLOAT ? (have = v->fval, true) : false;
	if (!isc || have != want) {
		tz_fail(t, arena_printf(ir_arena, "the nest stores %s, not the intrinsic's constant %g",
		    str(v), want));
		return false;
	}
	t->meaning.value = want;
	return match_access(t, out_access(t, &ca), st->store.buf, st->store.idx, st->store.nidx);
}

static IrStmt *
match_nest(Tz *t, IrStmt *loop)
{
	IrStmt *s = loop;
	t->n = 0;
	while (s->kind == IS_FOR && t->n < MAXL) {
		t->var[t->n] = s->loop.var;
		t->min[t->n] = s->loop.min;
		t->ext[t->n++] = s->loop.extent;
		s = s->loop.body;
	}
	/* the call covers a box: no loop's bounds may use a loop of the tile
	 * (sema keeps a range's dependence outside the loops it uses today:
	 * this guards the call against a nest that would break that) */
	for (int l = 1; l < t->n; l++)
		for (int o = 0; o < l; o++)
			if (ir_uses_var(t->min[l], t->var[o]) || ir_uses_var(t->ext[l], t->var[o])) {
				tz_fail(t, arena_printf(ir_arena, "the bounds of loop '%s' depend on loop "
				    "'%s' inside the tile; the intrinsic computes a box", t->var[l]->name,
				    t->var[o]->name));
				return NULL;
			}
	/* the guards around the store, nested ones as one conjunction (a
	 * split's tail inside a reduction's where) */
	IrExpr *cond = NULL;
	while (s->kind == IS_IF && !s->ifs.else_s) {
		cond = cond ? ir_binop(IR_AND, cond, s->ifs.cond) : s->ifs.cond;
		s = s->ifs.then_s;
	}
	if (s->kind != IS_STORE) {
		tz_fail(t, arena_printf(ir_arena, "the loops %s do not end in one store (a %s "
		    "statement is in the way)", loop_names(t), ir_stmt_names[s->kind]));
		return NULL;
	}
	if (!intrinsic_axes(t))
		return NULL;
	/* an axis of extent 1 (gemm_1x64_f32's row) has no loop once the
	 * simplifier drops a loop of one iteration (tile(i, j, 1, 64)): it is
	 * bound to a loop of extent 1 made up here, which no index uses */
	bool unit[MAXL], isc;
	int units = 0;
	for (int a = 0; a < t->ni; a++)
		units += unit[a] = tz_ast_const(t->iext[a], &isc) == 1 && isc;
	for (int a = 0; a < t->ni && t->n + units == t->ni; a++) {
		if (!unit[a])
			continue;
		int l = t->n++;
		units--;          /* t->n + units stays t->ni */
		t->var[l] = ir_new_var(t->iax[a], ir_i64);
		t->min[l] = ir_i64c(0);
		t->ext[l] = ir_i64c(1);
		t->point[l] = true;
		t->map[a] = l;
	}
	if (t->n != t->ni) {
		tz_fail(t, arena_printf(ir_arena, "the nest has %d loop%s (%s) but the intrinsic has "
		    "%d axes (%s)", t->n, t->n == 1 ? "" : "s", loop_names(t), t->ni, axis_names(t)));
		return NULL;
	}
	/* the block's shape for fma_outer (below), before a guard moves a
	 * loop's start */
	IrExpr *full[MAXL], *shorter[MAXL] = { NULL };
	for (int l = 0; l < t->n; l++)
		full[l] = t->ext[l];
	if (cond)
		cond = tz_absorb_heads(t, cond, shorter);
	/* try the product's operands in both orders; report the first's reason */
	Tz save = *t;
	if (t->rule->value->kind != EXPR_REDUCE) {
		if (!match_copy(t, s) || !tz_emitter_ok(t))
			return NULL;
	} else if (!match_update(t, s, false) || !tz_emitter_ok(t)) {
		Tz first = *t;
		*t = save;
		if (!match_update(t, s, true) || !tz_emitter_ok(t)) {
			*t = first;
			return NULL;
		}
	}
	for (int l = 0; l < t->n; l++) {
		bool mapped = false;
		for (int a = 0; a < t->ni; a++)
			mapped |= t->map[a] == l;
		if (!mapped) {
			tz_fail(t, arena_printf(ir_arena, "loop '%s' is not one of the intrinsic's axes (%s)",
			    t->var[l]->name, axis_names(t)));
			return NULL;
		}
	}
	/* fma_outer's block size, before tz_absorb_tails makes the extents
	 * max(min(MR, M - i0), 0): the simplifier may drop the min where it
	 * proves the rest smaller (a size fixed with -D), and the emitter
	 * needs the full block's shape */
	IrExpr *shape[2] = { full[t->map[0]], t->n > 1 ? full[t->map[1]] : NULL };
	for (int l = 0; l < t->n; l++)
		if (shorter[l])
			t->ext[l] = shorter[l];
	if (cond)
		cond = tz_absorb_tails(t, cond);
	/* the call: the axes' extents, then the tensors */
	IrExpr *args[80];
	int na = 0;
	for (int a = 0; a < t->ni; a++)
		args[na++] = t->ext[t->map[a]];
	for (int i = 0; i < t->nargs; i++)
		args[na++] = t->args[i];
	IrTensorizeCall *meaning = arena_alloc(ir_arena, sizeof *meaning);
	*meaning = t->meaning;
	meaning->naxes = t->ni;
	meaning->ntensors = t->nacc;
	meaning->reset = -1;
	if (ir_fma_outer_lanes(t->k->intr_emit)) {
		meaning->reset = na;
		args[na++] = tz_reset_arg(t, cond);
		args[na++] = shape[0];
		args[na++] = shape[1];
	}
	IrStmt *call = ir_evaluate(ir_call_intrinsic(t->k->intr_emit, ir_i32, args, na));
	t->callx = call->eval.value;
	t->callx->call.tz = meaning;
	t->callx->loc = t->rq->loc;
	call->loc = t->rq->loc;
	if (!cond)
		return call;
	IrStmt *s2 = ir_if(tz_corners(t, cond), call, loop);
	IrExpr *any = tz_some_corner(t, cond);
	return any ? ir_if(any, s2, NULL) : s2;
}

typedef struct {
	IrMutator m;
	Tz *t;
	bool in_mine;       /* inside the stage's produce */
	bool in_update;
	bool copy;          /* the intrinsic is a copy: match outside the update */
} TzMut;

static IrStmt *
mut_produce(IrMutator *m, IrStmt *s)
{
	TzMut *tm = (TzMut *)m;
	Tz *t = tm->t;
	bool was = tm->in_update, was_mine = tm->in_mine, mine = s->produce.name == t->rq->s->name;
	if (mine) {
		tm->in_update = s->produce.update;
		tm->in_mine = true;
	}
	IrStmt *r = ir_mutate_stmt_children(m, s);
	tm->in_update = was;
	tm->in_mine = was_mine;
	if (mine && !s->produce.update && t->reset && r && r->kind == IS_PRODUCE) {
		r = tz_reset_produce(t, r);
		t->reset = false;
	}
	return r;
}

static IrStmt *
mut_for(IrMutator *m, IrStmt *s)
{
	TzMut *tm = (TzMut *)m;
	Tz *t = tm->t;
	bool here = tm->copy ? tm->in_mine && !tm->in_update : tm->in_update;
	if (!here || t->done)
		return ir_mutate_stmt_children(m, s);
	int leaf = stage_leaf(t->rq->s, t->rq->axis);
	Var *v = leaf >= 0 ? t->rq->s->axes[t->rq->s->leaves[leaf]].var : NULL;
	if (s->loop.var != v) {
		if (t->nouter >= 32)
			t->init = NULL;     /* too deep to follow: no reset form */
		else
			t->outer[t->nouter] = s;
		t->nouter++;
		IrStmt *r = ir_mutate_stmt_children(m, s);
		t->nouter--;
		return r;
	}
	t->done = true;
	IrStmt *r = match_nest(t, s);
	if (!r && !t->failed)
		tz_fail(t, "the nest does not match");
	if (!r)
		report(t);
	return r ? r : s;
}

static const char *
first_red(LStage *s)
{
	for (int i = 0; i < s->nleaves; i++)
		if (s->axes[s->leaves[i]].red)
			return s->axes[s->leaves[i]].name;
	return "?";
}

/* Whether leaf `axis` comes after s's first reduction leaf. */
static bool
inside_update(LStage *s, const char *axis)
{
	bool red = false;
	for (int i = 0; i < s->nleaves; i++) {
		red |= s->axes[s->leaves[i]].red;
		if (!strcmp(s->axes[s->leaves[i]].name, axis))
			return red;
	}
	return false;
}

IrStmt *
tensorize_stmt(Lower *L, IrStmt *s)
{
	int before = diag_errors();
	for (int i = 0; i < L->ntz && s; i++) {
		TzReq *rq = &L->tz[i];
		Tz t = { 0 };
		t.L = L;
		t.rq = rq;
		t.k = rq->intr;
		for (int j = 0; j < t.k->nitems; j++)
			if (t.k->items[j].rule)
				t.rule = t.k->items[j].rule;
		if (!t.rule)
			continue;
		if (rq->s->red && rq->s->rop == RED_SUM && !rq->s->rpred) {
			t.init = tz_find_init(s, rq->s->name);
			if (t.init && (!tz_init_like(t.init, rq->s->buf) || !tz_slice(s, t.init)))
				t.init = NULL;
		}
		TzMut tm;
		memset(&tm, 0, sizeof tm);
		tm.t = &t;
		tm.copy = t.rule->value->kind != EXPR_REDUCE;
		tm.m.stmt[IS_PRODUCE] = mut_produce;
		tm.m.stmt[IS_FOR] = mut_for;
		s = ir_mutate_stmt(&tm.m, s);
		if (!t.done && tm.copy) {
			diag_error(rq->loc, "cannot tensorize '%s' at '%s' with '%s', a copy: the loop "
			    "is not in %s (loops %s)", rq->s->name, rq->axis, t.k->name, rq->s->red ?
			    "its initialisation, where a copy intrinsic applies" : "its nest",
			    stage_leaf_list(rq->s));
		} else if (!t.done) {
			if (!rq->s->red)
				diag_error(rq->loc, "cannot tensorize '%s': it is not a reduction, and "
				    "intrinsic '%s' performs a reduction's update", rq->s->name, t.k->name);
			else if (inside_update(rq->s, rq->axis))
				/* listed inside, but no loop: one of one iteration is gone */
				diag_error(rq->loc, "cannot tensorize '%s' at '%s': the loop runs once at "
				    "these sizes, so it is no loop of the lowered nest (loops %s, update nest "
				    "from '%s'); the intrinsic's loops must have its extents", rq->s->name,
				    rq->axis, stage_leaf_list(rq->s), first_red(rq->s));
			else
				diag_error(rq->loc, "cannot tensorize '%s' at '%s': the loop is outside "
				    "the update nest, which starts at the first reduction loop '%s' (loops "
				    "%s); reorder so that the intrinsic's loops are all inside it", rq->s->name,
				    rq->axis, first_red(rq->s), stage_leaf_list(rq->s));
		}
	}
	return diag_errors() == before ? s : NULL;
}
