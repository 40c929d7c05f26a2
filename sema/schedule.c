/* schedule.c: schedule validation: names, argument kinds and counts.
 *
 * A schedule names a kernel and a target; each primitive names a stage, a
 * primitive of prim.c's table, arguments of the kinds the table gives and
 * the right number of `->` names.  Axis names are tracked through the
 * schedule: a stage starts with its pure axes then its reduction axes;
 * split, tile and fuse replace axes by their results; cache_read,
 * cache_write and rfactor make a new stage that later primitives may name
 * (cache_read: the copied tensor's pure axes, or ax0, ax1... for an
 * input; cache_write and rfactor: the stage's axes at that point).  What
 * needs the loop structure (fuse adjacency, compute_at legality, parallel
 * over a reduction) is checked by lowering.
 */
#include <string.h>

#include "sema/sema.h"

static const char *const targets[] = { "cpu", "cuda", "vta" };

typedef struct {
	const char *name;
	bool red;           /* a reduction axis (or made from one) */
	bool phantom;       /* named by a primitive that had errors: usable, not reserved */
} Ax;

typedef struct {
	const char *name;
	Loc at;             /* the primitive that replaced it */
	const char *by;
} Gone;

/* A stage as the schedule has transformed it so far. */
typedef struct {
	const char *name;
	Tensor *t;          /* NULL for a stage a primitive created */
	Loc made;           /* where a created stage was named */
	Ax *axes; int naxes, capaxes;
	Gone *gone; int ngone, capgone;
} SStage;

typedef struct {
	Program *p;
	Schedule *s;
	Kernel *k;
	SStage **st; int nst, capst;
	bool bad;           /* the current primitive had an error */
	bool in_spec;       /* checking a specialize body */
} State;

/* ---- stages and axes ---------------------------------------------------- */

static void
add_axis(SStage *ss, const char *name, bool red)
{
	Ax *a = ARENA_PUSH(perm, ss->axes, ss->naxes, ss->capaxes);
	a->name = name;
	a->red = red;
}

static SStage *
new_stage(State *S, const char *name, Tensor *t)
{
	SStage *ss = arena_alloc(perm, sizeof *ss);
	ss->name = name;
	ss->t = t;
	*ARENA_PUSH(perm, S->st, S->nst, S->capst) = ss;
	return ss;
}

/* The stage or tensor called name: created stages first, then the kernel's
 * tensors (with their starting axes). */
static SStage *
find_stage(State *S, const char *name)
{
	for (int i = 0; i < S->nst; i++)
		if (S->st[i]->name == name)
			return S->st[i];
	Tensor *t = name ? resolve_tensor(S->k, name) : NULL;
	if (!t)
		return NULL;
	SStage *ss = new_stage(S, name, t);
	if (t->rule) {
		for (int i = 0; i < t->rule->naxes; i++)
			add_axis(ss, t->rule->axes[i], false);
		Expr *v = t->rule->value;
		if (v && v->kind == EXPR_REDUCE)
			for (int i = 0; i < v->reduce.naxes; i++)
				add_axis(ss, v->reduce.axes[i].name, true);
		/* an update's domain (tx.5 UPDATES): its reduction axes */
		for (int i = 0; t->update && i < t->update->upd.naxes; i++)
			add_axis(ss, t->update->upd.axes[i].name, true);
	} else {
		for (int i = 0; i < t->ndims; i++)
			add_axis(ss, intern_cstr(arena_printf(perm, "ax%d", i)), false);
	}
	return ss;
}

static bool
is_input(SStage *ss)
{
	return ss->t && !ss->t->rule;
}

static int
axis_index(SStage *ss, const char *name)
{
	for (int i = 0; i < ss->naxes; i++)
		if (ss->axes[i].name == name)
			return i;
	return -1;
}

static char *
axis_list(SStage *ss)
{
	if (ss->naxes == 0)
		return "it has no axes";
	char *s = arena_printf(perm, "its axes are %s", ss->axes[0].name);
	for (int i = 1; i < ss->naxes; i++)
		s = arena_printf(perm, "%s, %s", s, ss->axes[i].name);
	return s;
}

static char *
value_list(const char *const *v)
{
	char *s = arena_strdup(perm, v[0]);
	for (int i = 1; v[i]; i++)
		s = arena_printf(perm, "%s%s%s", s, v[i + 1] ? ", " : " or ", v[i]);
	return s;
}

/* The axis called by arg in ss, or -1 after reporting why not. */
static int
need_axis(State *S, SStage *ss, SchedArg *a)
{
	int i = axis_index(ss, a->str);
	if (i >= 0)
		return i;
	for (int g = 0; g < ss->ngone; g++)
		if (ss->gone[g].name == a->str) {
			diag_error(a->loc, "'%s' has no axis '%s' any more; %s", ss->name, a->str,
			    axis_list(ss));
			diag_note(ss->gone[g].at, "'%s' replaced it here", ss->gone[g].by);
			S->bad = true;
			return -1;
		}
	diag_error(a->loc, "'%s' has no axis '%s'; %s", ss->name, a->str, axis_list(ss));
	S->bad = true;
	return -1;
}

static void
remove_axis(SStage *ss, int i, SchedPrim *sp)
{
	Gone *g = ARENA_PUSH(perm, ss->gone, ss->ngone, ss->capgone);
	g->name = ss->axes[i].name;
	g->at = sp->loc;
	g->by = sp->prim;
	memmove(&ss->axes[i], &ss->axes[i + 1], (size_t)(ss->naxes - i - 1) * sizeof *ss->axes);
	ss->naxes--;
}

/* Inserts an axis at position pos. */
static void
insert_axis(SStage *ss, int pos, const char *name, bool red)
{
	add_axis(ss, name, red);
	memmove(&ss->axes[pos + 1], &ss->axes[pos],
	    (size_t)(ss->naxes - pos - 1) * sizeof *ss->axes);
	ss->axes[pos].name = name;
	ss->axes[pos].red = red;
}

/* ---- arguments ------------------------------------------------------------ */

static void
wrong_kind(State *S, SchedPrim *sp, SchedArg *a, int n, const PrimArg *pa)
{
	diag_error(a->loc, "argument %d of '%s' must be %s", n, sp->prim, pa->what);
	S->bad = true;
}

/* The stage a stage argument names (not the scheduled one, not an input). */
static SStage *
stage_arg(State *S, SchedPrim *sp, SStage *self, SchedArg *a)
{
	SStage *o = find_stage(S, a->str);
	if (!o) {
		diag_error(a->loc, "'%s' is not a stage of '%s'", a->str, S->k->name);
	} else if (is_input(o)) {
		diag_error(a->loc, "'%s' is an input of '%s', not a stage", a->str, S->k->name);
		o = NULL;
	} else if (o == self) {
		diag_error(a->loc, "'%s' cannot name its own stage '%s' here", sp->prim, a->str);
		o = NULL;
	}
	if (!o)
		S->bad = true;
	return o;
}

/* Checks positional argument number n (1-based); fills *other for
 * PARG_STAGE; returns the axis index for axis arguments, else -1. */
static int
check_arg(State *S, SchedPrim *sp, SStage *ss, SchedArg *a, int n, const PrimArg *pa,
    SStage **other)
{
	bool name = a->kind == ARG_NAME;
	switch (pa->kind) {
	case PARG_AXIS: case PARG_RED_AXIS: {
		if (!name)
			break;
		int i = need_axis(S, ss, a);
		if (i >= 0 && pa->kind == PARG_RED_AXIS && !ss->axes[i].red) {
			diag_error(a->loc, "'%s' needs a reduction axis; '%s' is a pure axis of '%s'",
			    sp->prim, a->str, ss->name);
			if (ss->t && ss->t->ninits)
				diag_note(a->loc, "'%s' is a scan: each step reads the one before, an "
				    "update that is not an associative reduction, so it has no axis to "
				    "rfactor (tx.5 SCANS)", ss->name);
			S->bad = true;
			return -1;
		}
		return i;
	}
	case PARG_INT:
		if (a->kind != ARG_INT || (pa->positive && a->ival <= 0))
			break;
		return -1;
	case PARG_STAGE:
		if (!name)
			break;
		*other = stage_arg(S, sp, ss, a);
		return -1;
	case PARG_STAGE_AXIS:
		if (!name)
			break;
		if (*other)
			need_axis(S, *other, a);
		return -1;
	case PARG_TENSOR:
		if (!name)
			break;
		if (!find_stage(S, a->str)) {
			diag_error(a->loc, "'%s' is not a tensor of '%s'", a->str, S->k->name);
			S->bad = true;
		}
		return -1;
	case PARG_STAGES:
		if (a->kind != ARG_LIST)
			break;
		for (int i = 0; i < a->nlist; i++) {
			if (a->list[i].kind != ARG_NAME)
				wrong_kind(S, sp, &a->list[i], n, pa);
			else
				stage_arg(S, sp, ss, &a->list[i]);
		}
		return -1;
	case PARG_WORD: {
		const char *w = a->kind == ARG_NAME ? a->str : a->kind == ARG_DOTTED ?
		    arena_printf(perm, "%s.%s", a->str, a->str2) : NULL;
		if (!w)
			break;
		for (int i = 0; pa->values[i]; i++)
			if (strcmp(pa->values[i], w) == 0)
				return -1;
		diag_error(a->loc, "'%s' is not %s; use %s", w, pa->what, value_list(pa->values));
		S->bad = true;
		return -1;
	}
	case PARG_IDENT:
		if (!name && a->kind != ARG_STRING && a->kind != ARG_DOTTED)
			break;
		return -1;
	case PARG_TEXT:
		if (!name && a->kind != ARG_STRING)
			break;
		return -1;
	}
	wrong_kind(S, sp, a, n, pa);
	return -1;
}

static void
check_kwarg(SchedPrim *sp, const PrimInfo *pi, SchedArg *a, int idx)
{
	for (int j = 0; j < idx; j++)
		if (sp->args[j].key == a->key) {
			diag_error(a->loc, "keyword argument '%s' is given twice", a->key);
			return;
		}
	const PrimKwarg *kw = NULL;
	const char *keys[8];
	int nkeys = 0;
	for (int j = 0; pi->kwargs && pi->kwargs[j].key; j++) {
		if (nkeys < 8)
			keys[nkeys++] = pi->kwargs[j].key;
		if (strcmp(pi->kwargs[j].key, a->key) == 0)
			kw = &pi->kwargs[j];
	}
	if (!pi->kwargs) {
		diag_error(a->loc, "'%s' takes no keyword arguments", sp->prim);
		return;
	}
	if (!kw) {
		const char *near = check_closest(a->key, keys, nkeys);
		if (near)
			diag_error(a->loc, "'%s' has no keyword argument '%s'; did you mean '%s'?",
			    sp->prim, a->key, near);
		else
			diag_error(a->loc, "'%s' has no keyword argument '%s'", sp->prim, a->key);
		return;
	}
	if (!kw->values) {   /* an integer */
		if (a->kind != ARG_INT || a->ival < 0)
			diag_error(a->loc, "'%s' must be an integer, 0 or more", a->key);
		return;
	}
	if (a->kind == ARG_NAME)
		for (int j = 0; kw->values[j]; j++)
			if (strcmp(kw->values[j], a->str) == 0)
				return;
	diag_error(a->loc, "'%s' must be %s", a->key, value_list(kw->values));
}

/* ---- results ---------------------------------------------------------------- */

static Loc
outs_loc(SchedPrim *sp)
{
	return loc_span(sp->out_locs[0], sp->out_locs[sp->nouts - 1]);
}

/* Checks the number of `->` names; false if wrong. */
static bool
check_nouts(State *S, SchedPrim *sp, const PrimInfo *pi)
{
	if (sp->nouts == pi->nouts)
		return true;
	S->bad = true;
	if (pi->nouts == 0)
		diag_error(outs_loc(sp), "'%s' gives no results; remove the '->' names", sp->prim);
	else if (pi->outs_kind == OUTS_STAGE)
		diag_error(sp->nouts ? outs_loc(sp) : sp->loc,
		    "'%s' makes a new stage; name it with '-> NAME'", sp->prim);
	else if (sp->nouts == 0)
		diag_error(sp->loc, "'%s' gives %d ax%s; name %s with '-> %s'", sp->prim,
		    pi->nouts, pi->nouts == 1 ? "is" : "es", pi->nouts == 1 ? "it" : "them",
		    pi->outs_usage);
	else
		diag_error(outs_loc(sp), "'%s' gives %d ax%s, '-> %s', but %d name%s given",
		    sp->prim, pi->nouts, pi->nouts == 1 ? "is" : "es", pi->outs_usage, sp->nouts,
		    sp->nouts == 1 ? " is" : "s are");
	return false;
}

/* New names must be fresh: distinct, and not an axis the stage has or had
 * (axes), or not a name of the kernel (stages). */
static void
check_fresh(State *S, SchedPrim *sp, SStage *ss, const PrimInfo *pi)
{
	for (int i = 0; i < sp->nouts; i++) {
		const char *n = sp->outs[i];
		bool dup = false;
		for (int j = 0; j < i; j++)
			dup |= sp->outs[j] == n;
		if (dup) {
			diag_error(sp->out_locs[i], "'%s' is named twice", n);
			S->bad = true;
			continue;
		}
		if (pi->outs_kind == OUTS_AXES) {
			int at = axis_index(ss, n);
			bool used = at >= 0 && !ss->axes[at].phantom;
			for (int g = 0; g < ss->ngone && !used; g++)
				used = ss->gone[g].name == n;
			if (used) {
				diag_error(sp->out_locs[i], "'%s' already names an axis of '%s'; "
				    "choose a new name", n, ss->name);
				S->bad = true;
				continue;
			}
		}
		SStage *o = NULL;
		for (int j = 0; j < S->nst && !o; j++)
			if (S->st[j]->name == n && !S->st[j]->t)
				o = S->st[j];
		Tensor *t = resolve_tensor(S->k, n);
		Param *pa = resolve_param(S->k, n);
		/* tx(5): an axis a primitive makes, as a stage, takes a name no
		 * tensor, stage or parameter has (g.split(y, 8) -> (f, yi) printed
		 * g[f*8 + yi, ...]) */
		if (o || t || pa) {
			diag_error(sp->out_locs[i], "'%s' is already the name of %s in '%s'", n,
			    pa ? "a parameter" : t ? "a tensor" : "a stage", S->k->name);
			diag_note(pa ? pa->loc : t ? t->loc : o->made, "'%s' defined here", n);
			S->bad = true;
		}
	}
}

/* Updates the axes (and stages) after a primitive. */
static void
apply(State *S, SchedPrim *sp, SStage *ss, const PrimInfo *pi, int *ax)
{
	if (pi->outs_kind == OUTS_STAGE && sp->nouts >= 1) {
		SStage *n = new_stage(S, sp->outs[0], NULL);
		n->made = sp->out_locs[0];
		if (pi->id == PRIM_CACHE_READ && ss->t) {
			SStage fresh = { 0 };
			SStage *orig = ss;
			if (ss->t->rule) {
				for (int i = 0; i < ss->t->rule->naxes; i++)
					add_axis(&fresh, ss->t->rule->axes[i], false);
				orig = &fresh;
			}
			for (int i = 0; i < orig->naxes; i++)
				if (!orig->axes[i].red)
					add_axis(n, orig->axes[i].name, false);
		} else {
			for (int i = 0; i < ss->naxes; i++)
				add_axis(n, ss->axes[i].name, ss->axes[i].red);
		}
		return;
	}
	if (pi->outs_kind != OUTS_AXES || sp->nouts == 0)
		return;
	if (S->bad || sp->nouts != pi->nouts) {
		/* keep the names usable so later primitives do not cascade */
		for (int i = 0; i < sp->nouts; i++)
			if (axis_index(ss, sp->outs[i]) < 0) {
				add_axis(ss, sp->outs[i], false);
				ss->axes[ss->naxes - 1].phantom = true;
			}
		return;
	}
	for (int i = 0; i < sp->nouts; i++) {   /* real now: drop phantoms */
		int at = axis_index(ss, sp->outs[i]);
		if (at >= 0 && ss->axes[at].phantom && at != ax[0] && at != ax[1]) {
			memmove(&ss->axes[at], &ss->axes[at + 1],
			    (size_t)(ss->naxes - at - 1) * sizeof *ss->axes);
			ss->naxes--;
			if (ax[0] > at)
				ax[0]--;
			if (ax[1] > at)
				ax[1]--;
		}
	}
	int x = ax[0];
	if (x < 0 || (pi->id != PRIM_SPLIT && ax[1] < 0))
		return;
	bool rx = ss->axes[x].red;
	bool ry = pi->id == PRIM_SPLIT ? rx : ss->axes[ax[1]].red;
	const char *y = pi->id == PRIM_SPLIT ? NULL : ss->axes[ax[1]].name;
	remove_axis(ss, x, sp);
	switch (pi->id) {
	case PRIM_SPLIT:
		insert_axis(ss, x, sp->outs[1], rx);
		insert_axis(ss, x, sp->outs[0], rx);
		break;
	case PRIM_TILE:   /* x becomes xo, yo, xi, yi; y goes */
	case PRIM_GPU_TILE:
		for (int j = 3; j >= 0; j--)
			insert_axis(ss, x, sp->outs[j], j % 2 ? ry : rx);
		remove_axis(ss, axis_index(ss, y), sp);
		break;
	case PRIM_FUSE:
		insert_axis(ss, x, sp->outs[0], rx || ry);
		remove_axis(ss, axis_index(ss, y), sp);
		break;
	default:
		break;
	}
}

/* ---- one primitive ------------------------------------------------------------ */

static void
check_prim(State *S, SchedPrim *sp)
{
	sp->prim_id = -1;
	if (!sp->prim || !sp->stage)
		return;
	const PrimInfo *pi = prim_lookup(sp->prim);
	if (!pi) {
		const char *names[PRIM_COUNT];
		for (int i = 0; i < PRIM_COUNT; i++)
			names[i] = prim_table[i].name;
		const char *near = check_closest(sp->prim, names, PRIM_COUNT);
		if (near)
			diag_error(sp->prim_loc, "unknown schedule primitive '%s'; did you mean '%s'?",
			    sp->prim, near);
		else
			diag_error(sp->prim_loc, "unknown schedule primitive '%s'", sp->prim);
		return;
	}
	sp->prim_id = pi->id;
	SStage *ss = find_stage(S, sp->stage);
	if (!ss) {
		const char **names = NULL;   /* candidates for a suggestion */
		int n = 0, cap = 0;
		for (int i = 0; check_suggest() && i < S->k->ntensors; i++)
			*ARENA_PUSH(perm, names, n, cap) = S->k->tensors[i]->name;
		for (int i = 0; check_suggest() && i < S->nst; i++)
			*ARENA_PUSH(perm, names, n, cap) = S->st[i]->name;
		const char *near = check_closest(sp->stage, names, n);
		if (near)
			diag_error(sp->stage_loc, "'%s' is not a stage of '%s'; did you mean '%s'?",
			    sp->stage, S->k->name, near);
		else
			diag_error(sp->stage_loc, "'%s' is not a stage of '%s'", sp->stage,
			    S->k->name);
		return;
	}
	if (ss->t && !ss->t->rule && ss->t->role != ROLE_IN)
		return;   /* a stage that is never defined: reported already */
	if (is_input(ss) && !pi->on_inputs) {
		diag_error(sp->stage_loc, "'%s' is an input of '%s'; only cache_read applies "
		    "to inputs", sp->stage, S->k->name);
		return;
	}
	S->bad = false;
	int npos = 0;
	for (int i = 0; i < sp->nargs; i++)
		if (!sp->args[i].key)
			npos++;
	bool count_ok = npos >= pi->min_args && (pi->max_args < 0 || npos <= pi->max_args);
	if (!count_ok) {
		diag_error(loc_span(sp->prim_loc, sp->loc), "'%s' takes %s, not %d argument%s",
		    sp->prim, pi->usage, npos, npos == 1 ? "" : "s");
		S->bad = true;
	}
	int *ax = arena_alloc(perm, (size_t)(npos + 4) * sizeof *ax);
	for (int i = 0; i < npos + 4; i++)
		ax[i] = -1;
	SStage *other = NULL;
	for (int i = 0, n = 0; i < sp->nargs && count_ok; i++) {
		SchedArg *a = &sp->args[i];
		if (a->key) {
			check_kwarg(sp, pi, a, i);
			continue;
		}
		const PrimArg *pa = &pi->args[pi->max_args < 0 ? 0 : n];
		int r = check_arg(S, sp, ss, a, n + 1, pa, &other);
		for (int j = 0; j < n && r >= 0; j++)
			if (ax[j] == r) {
				diag_error(a->loc, "axis '%s' appears twice in '%s'", a->str, sp->prim);
				S->bad = true;
				r = -1;
			}
		ax[n++] = r;
	}
	if (check_nouts(S, sp, pi))
		check_fresh(S, sp, ss, pi);
	apply(S, sp, ss, pi, ax);
}

/* ---- specialize ---------------------------------------------------------------- */

/* A specialization is checked on a copy of the stages as the schedule has
 * made them so far; the primitives after it continue from the original. */
static State
copy_state(const State *S)
{
	State C = *S;
	C.st = NULL;
	C.nst = C.capst = 0;
	for (int i = 0; i < S->nst; i++) {
		SStage *o = S->st[i];
		SStage *n = arena_alloc(perm, sizeof *n);
		*n = *o;
		n->axes = arena_alloc(perm, (o->naxes + 1) * sizeof *n->axes);
		memcpy(n->axes, o->axes, o->naxes * sizeof *n->axes);
		n->capaxes = o->naxes;
		n->gone = arena_alloc(perm, (o->ngone + 1) * sizeof *n->gone);
		if (o->ngone)
			memcpy(n->gone, o->gone, o->ngone * sizeof *n->gone);
		n->capgone = o->ngone;
		*ARENA_PUSH(perm, C.st, C.nst, C.capst) = n;
	}
	return C;
}

/* The condition is decided when the entry point is called: it may use the
 * kernel's size and scalar parameters, not tensors. */
static bool
cond_part(Expr *e, void *ctx)
{
	(void)ctx;
	if (e->kind == EXPR_ACCESS) {
		diag_error(e->loc, "a specialize condition cannot read the tensor '%s'; it may use "
		    "the kernel's size and scalar parameters", e->call.name);
		return false;
	}
	if (e->kind == EXPR_REDUCE) {
		diag_error(e->loc, "a specialize condition cannot be a reduction; it may use "
		    "the kernel's size and scalar parameters");
		return false;
	}
	return true;
}

static void
check_specialize(State *S, SchedPrim *sp)
{
	if (S->in_spec) {
		diag_error(sp->prim_loc, "specialize cannot be nested; join the conditions with "
		    "&& in one specialize");
		return;
	}
	int before = diag_errors();
	resolve_params_expr(S->k, sp->cond);
	check_walk(sp->cond, cond_part, NULL);
	if (diag_errors() == before) {
		ScalarType t = types_expr(S->k, sp->cond);
		if (t != TY_ERROR && t != TY_BOOL)
			diag_error(sp->cond->loc, "a specialize condition must be a bool, not %s",
			    type_name(t));
	}
	State C = copy_state(S);
	C.in_spec = true;
	for (int i = 0; i < sp->nbody; i++) {
		if (sp->body[i].cond)
			check_specialize(&C, &sp->body[i]);
		else
			check_prim(&C, &sp->body[i]);
	}
}

/* ---- schedules ------------------------------------------------------------------ */

static void
check_unique(Program *p, int idx)
{
	Schedule *s = p->schedules[idx];
	for (int j = 0; j < idx; j++) {
		Schedule *o = p->schedules[j];
		if (!o || o->kernel != s->kernel || o->target != s->target || o->name != s->name)
			continue;
		if (s->name) {
			diag_error(s->name_loc, "redefinition of schedule '%s' of '%s' for %s",
			    s->name, s->kernel, s->target);
			diag_note(o->name_loc, "previous definition here");
		} else {
			diag_error(s->kernel_loc, "a second unnamed schedule of '%s' for %s; name "
			    "one with 'as NAME'", s->kernel, s->target);
			diag_note(o->kernel_loc, "the first one is here");
		}
		return;
	}
}

static void
check_schedule(Program *p, Schedule *s)
{
	s->k = sema_find_kernel(p, s->kernel);
	if (s->target) {
		bool ok = false;
		for (int i = 0; i < 3; i++)
			ok |= strcmp(s->target, targets[i]) == 0;
		if (!ok)
			diag_error(s->target_loc, "unknown target '%s'; the targets are cpu, cuda "
			    "and vta", s->target);
	}
	/* a schedule for another target of a kernel whose calls a layout
	 * declaration rewrites for one target only: it names the stages of
	 * that target's expansion, not of this one (tx.5 LAYOUTS) */
	if (s->k && s->target && layouts_other_target(s->k, s->target))
		return;
	if (!s->k) {
		if (!s->kernel)
			return;
		const char **names = NULL;   /* candidates for a suggestion */
		int n = 0, cap = 0;
		for (int i = 0; check_suggest() && i < p->nkernels; i++)
			if (p->kernels[i])
				*ARENA_PUSH(perm, names, n, cap) = p->kernels[i]->name;
		const char *near = check_closest(s->kernel, names, n);
		if (near)
			diag_error(s->kernel_loc, "schedule for unknown kernel '%s'; did you mean "
			    "'%s'?", s->kernel, near);
		else
			diag_error(s->kernel_loc, "schedule for unknown kernel '%s'", s->kernel);
		return;
	}
	if (s->k->calls_failed)
		return;      /* a call in it failed: its stages are not known */
	State S = { .p = p, .s = s, .k = s->k };
	for (int i = 0; i < s->nprims; i++) {
		if (s->prims[i].cond)
			check_specialize(&S, &s->prims[i]);
		else
			check_prim(&S, &s->prims[i]);
	}
}

void
schedule_check(Program *p)
{
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (!s)
			continue;
		int before = diag_errors();
		check_schedule(p, s);
		if (s->from && diag_errors() != before)
			diag_note(s->from_loc, "in the statements of '%s' that the schedule of '%s' "
			    "shares (tx.5 SCHEDULES)", s->from, s->kernel);
		check_unique(p, i);
	}
}

bool
schedule_check_one(Program *p, Schedule *s)
{
	int before = diag_errors();
	check_schedule(p, s);
	return diag_errors() == before;
}
