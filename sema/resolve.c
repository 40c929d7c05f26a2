/* resolve.c: what every name of a kernel refers to.
 *
 * Kernel and parameter names must be unique; every tensor is declared
 * once and every stage defined once (inputs never, outputs always); a rule
 * for an undeclared name makes an intermediate stage whose shape lowering
 * infers.  Then each name in an expression is bound to a parameter, a pure
 * axis of its rule, a reduction axis in scope or (through T[...]) a tensor,
 * and Kernel.tensors is built: inputs and outputs in declaration order,
 * then the intermediates in source order.
 */
#include <string.h>

#include "sema/sema.h"

/* ---- program level ------------------------------------------------- */

void
resolve_program(Program *p)
{
	for (int i = 0; i < p->nkernels; i++) {
		Kernel *k = p->kernels[i];
		if (!k || !k->name)
			continue;
		for (int j = 0; j < i; j++) {
			Kernel *o = p->kernels[j];
			if (o && o->name == k->name) {
				diag_error(k->name_loc, "redefinition of kernel '%s'", k->name);
				diag_note(o->name_loc, "previous definition here");
				break;
			}
		}
	}
}

/* ---- lookups -------------------------------------------------------- */

/* (kernel, name) -> tensor for every kernel resolved, so that lookups stay
 * fast in kernels with thousands of stages.  Names are interned: the key
 * is two pointers. */
typedef struct {
	Kernel *k;
	const char *name;
	Tensor *t;
} Slot;

static Slot *slots;
static size_t nslots, nused;

static Slot *
find_slot(Slot *tab, size_t n, Kernel *k, const char *name)
{
	uintptr_t h = (uintptr_t)k * 0x9E3779B97F4A7C15u ^ (uintptr_t)name * 0xC2B2AE3D27D4EB4Fu;
	size_t i = (size_t)(h ^ (h >> 31)) & (n - 1);
	while (tab[i].k && (tab[i].k != k || tab[i].name != name))
		i = (i + 1) & (n - 1);
	return &tab[i];
}

static void
map_put(Kernel *k, Tensor *t)
{
	if (2 * (nused + 1) > nslots) {
		size_t n = nslots ? 2 * nslots : 256;
		Slot *tab = arena_alloc(perm, n * sizeof *tab);
		for (size_t i = 0; i < nslots; i++)
			if (slots[i].k)
				*find_slot(tab, n, slots[i].k, slots[i].name) = slots[i];
		slots = tab;
		nslots = n;
	}
	Slot *s = find_slot(slots, nslots, k, t->name);
	if (!s->k)
		nused++;
	s->k = k;
	s->name = t->name;
	s->t = t;
}

Tensor *
resolve_tensor(Kernel *k, const char *name)
{
	if (!k || !name || !slots)
		return NULL;
	return find_slot(slots, nslots, k, name)->t;
}

Param *
resolve_param(Kernel *k, const char *name)
{
	for (int i = 0; k && i < k->nparams; i++)
		if (k->params[i].name == name)
			return &k->params[i];
	return NULL;
}

/* ---- parameters, declarations, rules --------------------------------- */

static void
resolve_params(Kernel *k)
{
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		pa->index = i;
		if (pa->is_size)
			pa->type = TY_INDEX;
		for (int j = 0; pa->name && j < i; j++)
			if (k->params[j].name == pa->name) {
				diag_error(pa->loc, "duplicate parameter '%s'", pa->name);
				diag_note(k->params[j].loc, "previous definition here");
				break;
			}
	}
}

/* Declared tensors, in source order, with duplicates left out. */
static Tensor **decls;
static int ndecls, capdecls;

static void
add_decl(Kernel *k, Tensor *t)
{
	*ARENA_PUSH(perm, decls, ndecls, capdecls) = t;
	map_put(k, t);
}

static void
resolve_decls(Kernel *k)
{
	ndecls = 0;
	for (int i = 0; i < k->nitems; i++) {
		Tensor *t = k->items[i].decl;
		if (!t || !t->name)
			continue;
		t->declared = true;
		t->shape_inferred = false;
		Param *pa = resolve_param(k, t->name);
		Tensor *o = resolve_tensor(k, t->name);
		if (pa) {
			diag_error(t->loc, "'%s' is already a parameter of '%s'", t->name, k->name);
			diag_note(pa->loc, "'%s' declared here", t->name);
		} else if (o) {
			diag_error(t->loc, "redefinition of '%s'", t->name);
			diag_note(o->loc, "previous definition here");
		} else {
			add_decl(k, t);
		}
	}
}

/* The initial value of a scan at one step (tx.5 SCANS): the tensor is
 * declared (a scan is computed over its whole shape) and defined here. */
static void
resolve_init(Kernel *k, Tensor *t, Rule *r)
{
	if (!t || t->role == ROLE_IN) {
		if (t) {
			diag_error(r->name_loc, "cannot define input '%s'", r->name);
			diag_note(t->loc, "'%s' declared here as an input", r->name);
		} else if (!resolve_param(k, r->name)) {
			diag_error(r->name_loc, "scan '%s' must be declared with its shape "
			    "('%s: f32[T, N];' before its rules)", r->name, r->name);
		} else {
			diag_error(r->name_loc, "cannot define parameter '%s'", r->name);
		}
		return;
	}
	if (r->naxes != t->ndims) {
		diag_error(r->name_loc, "'%s' has %d dimension%s but its initial value names %d",
		    t->name, t->ndims, t->ndims == 1 ? "" : "s", r->naxes);
		diag_note(t->loc, "'%s' declared here", t->name);
		return;
	}
	if (r->init_step < 0) {
		diag_error(r->init_loc, "a step of scan '%s' cannot be negative", t->name);
		return;
	}
	int n = t->ninits, cap = n;
	*ARENA_PUSH(perm, t->inits, n, cap) = r;
	t->ninits = n;
	r->tensor = t;
}

/* An update definition (tx.5 UPDATES): of a declared stage already
 * defined by a pure rule, once.  Its left side keeps the pure axis of
 * position d where it names it there (axes[d]); update.c checks the rest. */
static void
resolve_update(Kernel *k, Tensor *t, Rule *r)
{
	if (!t || t->role == ROLE_IN) {
		if (t) {
			diag_error(r->name_loc, "cannot update input '%s'", r->name);
			diag_note(t->loc, "'%s' declared here as an input", r->name);
		} else if (resolve_param(k, r->name)) {
			diag_error(r->name_loc, "cannot update parameter '%s'", r->name);
		} else {
			diag_error(r->name_loc, "update of undeclared stage '%s': declare it with its "
			    "shape and define it first ('%s: i32[B];', '%s[b] = 0;')", r->name,
			    r->name, r->name);
		}
		return;
	}
	if (!t->rule || t->rule->update) {
		diag_error(r->name_loc, "update of '%s' before its definition: a rule "
		    "'%s[...] = ...;' must come first (tx.5 UPDATES)", r->name, r->name);
		return;
	}
	if (!t->declared || t->shape_inferred) {
		diag_error(r->name_loc, "stage '%s' has an update, so it must be declared with "
		    "its shape ('%s: f32[...];')", r->name, r->name);
		return;
	}
	if (t->rule->init || t->ninits) {
		diag_error(r->name_loc, "scan '%s' cannot have an update definition", r->name);
		return;
	}
	if (t->rule->value && t->rule->value->kind == EXPR_REDUCE) {
		diag_error(r->name_loc, "'%s' is defined by a reduction, so it cannot have an "
		    "update definition: compute the reduction in a stage of its own and define "
		    "'%s' from it (%s[...] = s[...];)", r->name, r->name, r->name);
		return;
	}
	if (t->update) {
		diag_error(r->name_loc, "a second update of '%s': a stage has at most one "
		    "(tx.5 UPDATES); update a stage of its own that reads this one", r->name);
		diag_note(t->update->loc, "the first one here");
		return;
	}
	Expr *tg = r->target;
	if (tg->call.nargs != t->ndims)
		return;      /* shapes.c says so */
	r->naxes = t->ndims;
	r->axes = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *r->axes);
	r->axis_locs = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *r->axis_locs);
	for (int d = 0; d < t->ndims; d++) {
		Expr *e = tg->call.args[d];
		r->axis_locs[d] = e->loc;
		if (e->kind == EXPR_NAME && t->rule->axes && e->id.name == t->rule->axes[d])
			r->axes[d] = e->id.name;
	}
	t->update = r;
	r->tensor = t;
}

/* Binds each rule to its tensor, making undeclared intermediates. */
static void
resolve_rules(Kernel *k)
{
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (!r || !r->name)
			continue;
		r->tensor = NULL;
		Tensor *t = resolve_tensor(k, r->name);
		Param *pa = resolve_param(k, r->name);
		if (!t && pa) {
			diag_error(r->name_loc, "cannot define parameter '%s'", r->name);
			diag_note(pa->loc, "'%s' declared here", r->name);
			continue;
		}
		if (r->init) {
			resolve_init(k, t, r);
			continue;
		}
		if (r->update) {
			resolve_update(k, t, r);
			continue;
		}
		if (!t) {
			t = arena_alloc(perm, sizeof *t);
			t->loc = r->name_loc;
			t->name = r->name;
			t->role = ROLE_TEMP;
			t->elem = TY_ERROR;
			t->ndims = r->naxes;
			t->shape_inferred = true;
			add_decl(k, t);
		} else if (t->role == ROLE_IN) {
			diag_error(r->name_loc, "cannot define input '%s'", r->name);
			diag_note(t->loc, "'%s' declared here as an input", r->name);
			continue;
		} else if (t->rule) {
			diag_error(r->name_loc, "redefinition of '%s'", r->name);
			diag_note(t->rule->name_loc, "previous definition here");
			continue;
		} else if (r->naxes != t->ndims) {
			Loc at = r->naxes > 0 ? loc_span(r->axis_locs[0], r->axis_locs[r->naxes - 1]) :
			    r->name_loc;
			diag_error(at, "'%s' has %d dimension%s but its rule names %d ax%s",
			    t->name, t->ndims, t->ndims == 1 ? "" : "s", r->naxes,
			    r->naxes == 1 ? "is" : "es");
			diag_note(t->loc, "'%s' declared here", t->name);
		}
		t->rule = r;
		r->tensor = t;
	}
}

/* Pure axes: distinct, and not the name of a parameter or a tensor. */
static void
resolve_axes(Kernel *k, Rule *r)
{
	for (int i = 0; i < r->naxes; i++) {
		const char *a = r->axes[i];
		if (!a)
			continue;
		bool dup = false;
		for (int j = 0; j < i && !dup; j++)
			if (r->axes[j] == a) {
				diag_error(r->axis_locs[i], "axis '%s' appears twice in the rule of '%s'",
				    a, r->name);
				dup = true;
			}
		if (dup)
			continue;
		Param *pa = resolve_param(k, a);
		Tensor *t = resolve_tensor(k, a);
		if (pa) {
			diag_error(r->axis_locs[i], "axis '%s' shadows the parameter '%s'", a, a);
			diag_note(pa->loc, "'%s' declared here", a);
		} else if (t) {
			diag_error(r->axis_locs[i], "axis '%s' has the name of the tensor '%s'", a, a);
			diag_note(t->loc, "'%s' declared here", a);
		}
	}
}

static void
resolve_defined(void)
{
	for (int i = 0; i < ndecls; i++) {
		Tensor *t = decls[i];
		if (t->ninits > 0 && !t->rule)
			continue;      /* a scan without its update: scans.c */
		if (t->rule || !t->declared)
			continue;
		if (t->role == ROLE_OUT)
			diag_error(t->loc, "output '%s' is never defined", t->name);
		else if (t->role == ROLE_TEMP)
			diag_error(t->loc, "stage '%s' is declared but never defined", t->name);
	}
}

/* Kernel.tensors: inputs and outputs in declaration order, then the rest. */
static void
resolve_order(Kernel *k)
{
	int cap = 0, abi = 0;
	k->tensors = NULL;
	k->ntensors = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ndecls; i++) {
			Tensor *t = decls[i];
			if ((t->role == ROLE_TEMP) != (pass == 1))
				continue;
			t->index = k->ntensors;
			t->abi_index = pass == 0 && !t->is_const ? abi++ : -1;
			t->stage_index = -1;
			*ARENA_PUSH(perm, k->tensors, k->ntensors, cap) = t;
		}
}

/* ---- names in expressions ------------------------------------------- */

typedef struct {
	Kernel *k;
	Rule *r;              /* the rule whose value this is; NULL in shapes */
	Reduce *scope[8];     /* reductions whose body we are in, innermost last */
	int nscope;
	Reduce *ranges;       /* the reduction whose ranges we are in */
} Scope;

static const char *
closest_name(Scope *s, const char *name, bool tensors)
{
	if (!check_suggest())
		return NULL;
	const char **c = NULL;
	int n = 0, cap = 0;
	if (tensors) {
		for (int i = 0; i < s->k->ntensors; i++)
			*ARENA_PUSH(perm, c, n, cap) = s->k->tensors[i]->name;
	} else {
		for (int i = 0; i < s->k->nparams; i++)
			*ARENA_PUSH(perm, c, n, cap) = s->k->params[i].name;
		for (int i = 0; s->r && i < s->r->naxes; i++)
			*ARENA_PUSH(perm, c, n, cap) = s->r->axes[i];
		for (int i = 0; i < s->nscope; i++)
			for (int j = 0; j < s->scope[i]->naxes; j++)
				*ARENA_PUSH(perm, c, n, cap) = s->scope[i]->axes[j].name;
	}
	return check_closest(name, c, n);
}

/* Binds a name to a reduction axis, pure axis or parameter. */
static bool
bind_name(Scope *s, Expr *e, const char *name)
{
	for (int i = s->nscope - 1; i >= 0; i--)
		for (int j = 0; j < s->scope[i]->naxes; j++)
			if (s->scope[i]->axes[j].name == name) {
				e->id.ref = REF_RED_AXIS;
				e->id.red = &s->scope[i]->axes[j];
				return true;
			}
	for (int i = 0; s->r && i < s->r->naxes; i++)
		if (s->r->axes[i] == name) {
			e->id.ref = REF_PURE_AXIS;
			e->id.axis = i;
			return true;
		}
	Param *pa = resolve_param(s->k, name);
	if (pa) {
		e->id.ref = pa->is_size ? REF_SIZE : REF_SCALAR;
		e->id.param = pa;
		return true;
	}
	return false;
}

static void resolve_expr(Scope *s, Expr *e);

static void
resolve_bare_name(Scope *s, Expr *e)
{
	const char *name = e->id.name;
	e->id.ref = REF_NONE;
	if (!name || bind_name(s, e, name))
		return;
	Tensor *t = resolve_tensor(s->k, name);
	if (t && t->ndims == 0) {
		/* a 0-d tensor is read by its bare name: make it an access */
		Loc l = e->loc;
		memset(&e->call, 0, sizeof e->call);
		e->kind = EXPR_ACCESS;
		e->call.name = name;
		e->call.name_loc = l;
		e->call.tensor = t;
		return;
	}
	if (t) {
		diag_error(e->loc, "'%s' is a tensor with %d dimension%s; index it as %s[...]",
		    name, t->ndims, t->ndims == 1 ? "" : "s", name);
		diag_note(t->loc, "'%s' declared here", name);
		return;
	}
	if (s->ranges)
		for (int j = 0; j < s->ranges->naxes; j++)
			if (s->ranges->axes[j].name == name) {
				diag_error(e->loc, "a reduction bound cannot use the reduction axis '%s'",
				    name);
				return;
			}
	Rule *pr = s->r && s->r->update && s->r->tensor ? s->r->tensor->rule : NULL;
	for (int d = 0; pr && d < pr->naxes; d++)
		if (pr->axes[d] == name) {
			diag_error(e->loc, "pure axis '%s' of '%s' is not in scope in its update: an "
			    "update keeps a pure axis only as the whole index in its own place (%s[%s%s])",
			    name, s->r->name, s->r->name, d ? "..., " : "", name);
			return;
		}
	const char *near = closest_name(s, name, false);
	if (near)
		diag_error(e->loc, "use of undeclared name '%s'; did you mean '%s'?", name, near);
	else
		diag_error(e->loc, "use of undeclared name '%s'", name);
}

static void
resolve_access(Scope *s, Expr *e)
{
	const char *name = e->call.name;
	e->call.tensor = name ? resolve_tensor(s->k, name) : NULL;
	if (name && !e->call.tensor) {
		Expr probe = { .kind = EXPR_NAME };
		if (bind_name(s, &probe, name)) {
			const char *what = probe.id.ref == REF_SIZE ? "a size parameter" :
			    probe.id.ref == REF_SCALAR ? "a scalar parameter" : "an axis";
			diag_error(e->call.name_loc, "'%s' is %s, not a tensor; it cannot be indexed",
			    name, what);
		} else {
			const char *near = closest_name(s, name, true);
			if (near)
				diag_error(e->call.name_loc,
				    "use of undeclared tensor '%s'; did you mean '%s'?", name, near);
			else
				diag_error(e->call.name_loc, "use of undeclared tensor '%s'", name);
		}
	}
	for (int i = 0; i < e->call.nargs; i++)
		resolve_expr(s, e->call.args[i]);
}

static void
resolve_expr(Scope *s, Expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case EXPR_NAME:
		resolve_bare_name(s, e);
		break;
	case EXPR_ACCESS:
		resolve_access(s, e);
		break;
	case EXPR_CALL:
		if (borders_is_helper(e->call.name)) {
			/* its indices first, so that an error in one is reported
			 * once, not in each of its copies */
			int before = diag_errors();
			for (int i = 1; i < e->call.nargs; i++)
				resolve_expr(s, e->call.args[i]);
			if (diag_errors() != before) {
				e->call.name = NULL;
				e->call.nargs = 0;
			} else if (borders_expand(s->k, s->r, e)) {
				resolve_expr(s, e);
			}
			break;
		}
		/* fall through */
	case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			resolve_expr(s, e->call.args[i]);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		resolve_expr(s, e->bin.a);
		resolve_expr(s, e->bin.b);
		break;
	case EXPR_REDUCE: {
		Reduce *outer = s->ranges;
		s->ranges = &e->reduce;
		for (int i = 0; i < e->reduce.naxes; i++) {
			resolve_expr(s, e->reduce.axes[i].lo);
			resolve_expr(s, e->reduce.axes[i].hi);
		}
		s->ranges = outer;
		if (s->nscope < (int)(sizeof s->scope / sizeof s->scope[0])) {
			s->scope[s->nscope++] = &e->reduce;
			resolve_expr(s, e->reduce.where);
			resolve_expr(s, e->reduce.body);
			s->nscope--;
		}
		break;
	}
	default:
		break;
	}
}

void
resolve_params_expr(Kernel *k, Expr *e)
{
	Scope s = { .k = k };
	resolve_expr(&s, e);
}

void
resolve_kernel(Kernel *k)
{
	resolve_params(k);
	resolve_decls(k);
	resolve_rules(k);
	resolve_defined();
	resolve_order(k);
	for (int i = 0; i < k->ntensors; i++) {
		Tensor *t = k->tensors[i];
		Scope s = { .k = k };
		for (int d = 0; t->declared && t->shape && d < t->ndims; d++)
			resolve_expr(&s, t->shape[d]);
	}
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (!r || !r->name)
			continue;
		if (r->update) {
			/* the ranges first (sizes only: update.c), then the rest
			 * with the domain's axes in scope */
			Scope s = { .k = k, .r = r, .ranges = &r->upd };
			for (int j = 0; j < r->upd.naxes; j++) {
				resolve_expr(&s, r->upd.axes[j].lo);
				resolve_expr(&s, r->upd.axes[j].hi);
			}
			s.ranges = NULL;
			s.scope[s.nscope++] = &r->upd;
			resolve_expr(&s, r->upd.where);
			resolve_expr(&s, r->value);
			if (!r->upd_add)
				resolve_expr(&s, r->target);
			continue;
		}
		resolve_axes(k, r);
		Scope s = { .k = k, .r = r };
		resolve_expr(&s, r->value);
	}
}
