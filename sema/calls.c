/* calls.c: calls of kernels in kernels (tx.5 CALLS), expanded in place.
 *
 *     c = conv2d_nchw(x, w, b);          (m, v) = mean_var(x);
 *
 * A call is a statement of its own: the results on the left, the callee's
 * input tensors (in its declaration order) then its scalar parameters on
 * the right.  This pass, run on the parsed program before anything else,
 * replaces each call by copies of the callee's declarations and rules:
 *
 *  - the callee's inputs become the argument tensors (inputs, declared
 *    stages or results of earlier calls of the caller: their shapes must
 *    be known here);
 *  - its size parameters become expressions of the caller's sizes, found
 *    by unifying the callee's input shapes with the arguments' (an extent
 *    that is a bare size, or a size plus or minus a constant, fixes it;
 *    every other extent must then be provably equal to the argument's);
 *  - its scalar parameters become the argument expressions, converted to
 *    the parameter's type (which must hold them without loss);
 *  - its outputs become the results: a declared tensor of the caller of
 *    the same type and shape (an output assigned whole), or a new stage
 *    declared with the callee output's shape;
 *  - its other stages become stages named RESULT__STAGE (the first
 *    result's name, two underscores, the callee's stage name), which the
 *    caller's schedules name like any other;
 *  - its axes keep their names, but one that the caller uses for a
 *    parameter or a tensor becomes NAME_1 (NAME_2, ...).
 *
 * Callees are expanded first (calls of calls nest: c__r__s), so recursion,
 * direct or not, is found here and is an error.  A kernel whose call
 * failed is marked (Kernel.calls_failed): check.c runs no later pass on
 * it and schedule.c skips its schedules, so that nothing cascades.
 * callexpr.c compares the extents and writes them in messages;
 * callcopy.c rewrites the callee's names, expressions and rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/calls.h"

/* The calls being expanded, outermost first (for recursion's notes). */
typedef struct {
	Kernel *k, *f;
	Loc at;
} Link;
static Link *chain;
static int nchain, capchain;

/* ---- the call ------------------------------------------------------------ */

static Tensor *
caller_decl(Kernel *k, KernelItem *items, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (items[i].decl && items[i].decl->name == name)
			return items[i].decl;
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].decl && k->items[i].decl->name == name)
			return k->items[i].decl;
	return NULL;
}

static bool
caller_defines(Kernel *k, const char *name)
{
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule && k->items[i].rule->name == name)
			return true;
	return false;
}

static void
fail(Ex *x)
{
	x->failed = true;
}

/* The callee's tensors of one role, in declaration order. */
static int
tensors_of(Kernel *f, TensorRole role, Tensor ***out)
{
	int n = 0, cap = 0;
	*out = NULL;
	for (int i = 0; i < f->nitems; i++)
		if (f->items[i].decl && f->items[i].decl->role == role &&
		    !f->items[i].decl->is_const)
			*ARENA_PUSH(perm, *out, n, cap) = f->items[i].decl;
	return n;
}

static const char *
signature(Kernel *f, Tensor **in, int nin)
{
	const char *s = "";
	int n = 0;
	for (int i = 0; i < nin; i++)
		s = arena_printf(perm, "%s%s%s", s, n++ ? ", " : "", in[i]->name);
	for (int i = 0; i < f->nparams; i++)
		if (!f->params[i].is_size)
			s = arena_printf(perm, "%s%s%s: %s", s, n++ ? ", " : "", f->params[i].name,
			    type_name(f->params[i].type));
	return arena_printf(perm, "%s(%s)", f->name, s);
}

/* Binds the callee's sizes from the argument shapes. */
static void
unify(Ex *x, Tensor **in, Tensor **arg, int nin)
{
	for (bool again = true; again;) {
		again = false;
		for (int i = 0; i < nin; i++)
			for (int d = 0; arg[i] && d < in[i]->ndims; d++) {
				Expr *e = in[i]->shape[d], *a = arg[i]->shape[d];
				Expr *name = NULL;
				int64_t off = 0;
				if (e->kind == EXPR_NAME) {
					name = e;
				} else if (e->kind == EXPR_BINARY && (e->bin.op == OP_ADD ||
				    e->bin.op == OP_SUB) && e->bin.a->kind == EXPR_NAME &&
				    e->bin.b->kind == EXPR_INT) {
					name = e->bin.a;
					off = e->bin.op == OP_ADD ? e->bin.b->ival : -e->bin.b->ival;
				}
				Param *pa = name ? calls_callee_param(x->f, name->id.name) : NULL;
				if (!pa || !pa->is_size || x->psub[pa->index])
					continue;
				Expr *v = callexpr_dup(a);
				if (off > 0)
					v = ast_binary(OP_SUB, a->loc, v, ast_int(a->loc, off));
				else if (off < 0 && off != INT64_MIN)
					v = ast_binary(OP_ADD, a->loc, v, ast_int(a->loc, -off));
				else if (off)
					continue;
				v->loc = a->loc;
				x->psub[pa->index] = v;
				again = true;
			}
	}
}

/* Whether every size e uses is fixed. */
static bool
fixed(Ex *x, Expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case EXPR_NAME: {
		Param *pa = calls_callee_param(x->f, e->id.name);
		return !pa || x->psub[pa->index];
	}
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			if (!fixed(x, e->call.args[i]))
				return false;
		return true;
	case EXPR_UNARY: case EXPR_BINARY:
		return fixed(x, e->bin.a) && fixed(x, e->bin.b);
	default:
		return true;
	}
}

/* The shape a callee tensor has in the caller. */
static Expr **
shape_in_caller(Ex *x, Tensor *t)
{
	Expr **s = arena_alloc(perm, (size_t)(t->ndims + 1) * sizeof *s);
	for (int d = 0; d < t->ndims; d++)
		if (fixed(x, t->shape[d])) {
			x->nocast++;
			s[d] = calls_sub(x, NULL, t->shape[d]);
			x->nocast--;
		} else {
			s[d] = t->shape[d];
		}
	return s;
}

/* Checks that a caller tensor has the shape a callee tensor takes there;
 * `loc`: where to report, `what` names the caller's tensor. */
static void
check_shape(Ex *x, Loc loc, Tensor *mine, Tensor *theirs, const char *what)
{
	Expr **want = shape_in_caller(x, theirs);
	for (int d = 0; d < theirs->ndims; d++) {
		if (!fixed(x, theirs->shape[d]))
			continue;
		CallCmp c = callexpr_compare(mine->shape[d], want[d]);
		if (c == CALL_SAME)
			continue;
		diag_error(loc, "shape mismatch in the call of '%s': %s is %s%s but %s '%s' of "
		    "'%s' is %s%s here (extent %d: %s %s %s)", x->callee, what,
		    type_name(mine->elem), callexpr_shape_text(mine->shape, mine->ndims),
		    theirs->role == ROLE_IN ? "input" : "output", theirs->name, x->callee,
		    type_name(theirs->elem),
		    callexpr_shape_text(want, theirs->ndims), d, callexpr_text(mine->shape[d]),
		    c == CALL_DIFFERENT ? "differs from" : "is not provably equal to",
		    callexpr_text(want[d]));
		diag_note(theirs->loc, "'%s' of '%s' declared here", theirs->name, x->callee);
		fail(x);
		return;
	}
}

/* Whether a scalar argument uses only the caller's parameters and
 * constants; reports the first thing that is not. */
static bool
scalar_ok(Ex *x, Expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case EXPR_NAME:
		if (resolve_param(x->k, e->id.name))
			return true;
		diag_error(e->loc, "'%s' is not a parameter of '%s': a scalar argument of a call "
		    "is an expression of the caller's parameters and constants", e->id.name,
		    x->k->name);
		return false;
	case EXPR_ACCESS: case EXPR_REDUCE:
		diag_error(e->loc, "a scalar argument of a call is an expression of the caller's "
		    "parameters and constants; it cannot read a tensor");
		return false;
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			if (!scalar_ok(x, e->call.args[i]))
				return false;
		return true;
	case EXPR_UNARY: case EXPR_BINARY:
		return scalar_ok(x, e->bin.a) && scalar_ok(x, e->bin.b);
	default:
		return true;
	}
}

static bool
uses_names(Expr *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_NAME:
		return true;
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			if (uses_names(e->call.args[i]))
				return true;
		return false;
	case EXPR_UNARY: case EXPR_BINARY:
		return uses_names(e->bin.a) || uses_names(e->bin.b);
	default:
		return false;
	}
}

/* Whether a size argument uses only the caller's sizes and constants. */
static bool
size_ok(Ex *x, Expr *e)
{
	switch (e->kind) {
	case EXPR_INT:
		return true;
	case EXPR_NAME: {
		Param *pa = resolve_param(x->k, e->id.name);
		if (pa && pa->is_size)
			return true;
		break;
	}
	case EXPR_UNARY:
		return e->bin.op == OP_NEG && size_ok(x, e->bin.a);
	case EXPR_BINARY:
		if (e->bin.op <= OP_MOD && e->bin.op >= OP_ADD)
			return size_ok(x, e->bin.a) && size_ok(x, e->bin.b);
		break;
	case EXPR_CALL:
		if (e->call.name && (types_builtin(e->call.name) == BI_MIN ||
		    types_builtin(e->call.name) == BI_MAX) && e->call.nargs == 2 && !e->call.keys)
			return size_ok(x, e->call.args[0]) && size_ok(x, e->call.args[1]);
		break;
	default:
		break;
	}
	diag_error(e->loc, "a size argument is an expression of the caller's sizes and "
	    "integer constants (+ - * / %% min max)");
	return false;
}

/* The named arguments (`SH = 2`): named[i] for the callee's parameter i.
 * The number of positional ones (which come first), or -1 after errors. */
static int
named_args(Ex *x, Tensor **in, int nin, Expr **named)
{
	Kernel *f = x->f;
	int npos = 0;
	for (int i = 0; i < x->nargs; i++) {
		const char *key = x->keys ? x->keys[i] : NULL;
		if (!key) {
			if (npos < i) {
				diag_error(x->args[i]->loc, "a positional argument after a named one");
				fail(x);
			}
			npos++;
			continue;
		}
		Loc at = loc_span(x->key_locs[i], x->args[i]->loc);
		Param *pa = calls_callee_param(f, key);
		if (!pa) {
			bool tensor = false;
			for (int j = 0; j < nin; j++)
				tensor |= in[j]->name == key;
			const char **c = NULL;
			int n = 0, cap = 0;
			for (int j = 0; j < f->nparams; j++)
				*ARENA_PUSH(perm, c, n, cap) = f->params[j].name;
			const char *near = tensor ? NULL : check_closest(key, c, n);
			if (tensor)
				diag_error(at, "'%s' is an input of '%s': its tensor is passed by "
				    "position", key, f->name);
			else if (near)
				diag_error(at, "'%s' has no parameter '%s'; did you mean '%s'?", f->name,
				    key, near);
			else
				diag_error(at, "'%s' has no parameter '%s'", f->name, key);
			fail(x);
			continue;
		}
		if (named[pa->index]) {
			diag_error(at, "'%s' named twice", key);
			fail(x);
			continue;
		}
		named[pa->index] = x->args[i];
		if (pa->is_size) {
			if (size_ok(x, x->args[i]))
				x->psub[pa->index] = callexpr_dup(x->args[i]);
			else
				fail(x);
		}
	}
	return x->failed ? -1 : npos;
}

static void expand_kernel(Program *p, Kernel *k);
/* A kernel's statements being built. */
typedef struct {
	KernelItem *v;
	int n, cap;
} Items;

static void expand_item(Program *p, Kernel *k, KernelItem it, Items *out);

static void
expand_call(Ex *x)
{
	Kernel *k = x->k, *f = x->f;
	if (f == k || f->calls_state == 1) {
		diag_error(x->at, "recursive call of '%s': a kernel cannot call itself, directly "
		    "or through the kernels it calls", f->name);
		/* the calls under way from f to here */
		int from = nchain;
		while (from > 0 && chain[from - 1].k != f)
			from--;
		for (int i = from > 0 ? from - 1 : nchain; i < nchain; i++)
			diag_note(chain[i].at, "'%s' calls '%s' here", chain[i].k->name,
			    chain[i].f->name);
		fail(x);
		return;
	}
	expand_kernel(x->p, f);
	int nc = k->ncallees, capc = k->ncallees;
	*ARENA_PUSH(perm, k->callees, nc, capc) = f;
	k->ncallees = nc;
	if (f->calls_failed) {
		fail(x);
		return;
	}
	for (int i = 0; i < f->nitems; i++)
		if (f->items[i].rule && f->items[i].rule->tuple) {
			diag_error(x->at, "'%s' holds a tuple reduction, which a call cannot expand "
			    "yet", f->name);
			diag_note(f->items[i].rule->loc, "the tuple reduction");
			fail(x);
			return;
		}
	Tensor **in, **out;
	int nin = tensors_of(f, ROLE_IN, &in), nout = tensors_of(f, ROLE_OUT, &out);
	int nscalar = 0;
	for (int i = 0; i < f->nparams; i++)
		nscalar += !f->params[i].is_size;
	if (nout == 0) {
		diag_error(x->at, "'%s' has no outputs, so a call of it gives nothing", f->name);
		diag_note(f->name_loc, "'%s' defined here", f->name);
		fail(x);
		return;
	}
	if (x->nouts != nout) {
		const char *names = "";
		for (int i = 0; i < nout; i++)
			names = arena_printf(perm, "%s%s%s", names, i ? ", " : "", out[i]->name);
		diag_error(x->at, "'%s' has %d output%s (%s) but the call names %d result%s",
		    f->name, nout, nout == 1 ? "" : "s", names, x->nouts, x->nouts == 1 ? "" : "s");
		diag_note(f->name_loc, "'%s' defined here", f->name);
		fail(x);
		return;
	}
	x->psub = arena_alloc(perm, (size_t)(f->nparams + 1) * sizeof *x->psub);
	Expr **named = arena_alloc(perm, (size_t)(f->nparams + 1) * sizeof *named);
	int npos = named_args(x, in, nin, named), nnamed = 0;
	if (npos < 0)
		return;
	for (int i = 0; i < f->nparams; i++)
		nnamed += !f->params[i].is_size && named[i];
	if (npos != nin + nscalar - nnamed) {
		int want = nin + nscalar - nnamed;
		diag_error(x->at, "'%s' takes %d argument%s, %s, but %d %s given", f->name,
		    want, want == 1 ? "" : "s", signature(f, in, nin), npos,
		    npos == 1 ? "was" : "were");
		diag_note(f->name_loc, "'%s' defined here", f->name);
		fail(x);
		return;
	}
	/* the tensor arguments */
	Tensor **arg = arena_alloc(perm, (size_t)(nin + 1) * sizeof *arg);
	for (int i = 0; i < nin; i++) {
		Expr *a = x->args[i];
		const char *n = a->kind == EXPR_NAME ? a->id.name :
		    a->kind == EXPR_ACCESS && a->call.nargs == 0 ? a->call.name : NULL;
		if (!n) {
			diag_error(a->loc, "argument %d of '%s' is its input '%s': a tensor of the "
			    "caller, by its name", i + 1, f->name, in[i]->name);
			fail(x);
			continue;
		}
		arg[i] = caller_decl(k, x->items, x->nitems, n);
		if (!arg[i]) {
			if (resolve_param(k, n))
				diag_error(a->loc, "'%s' is a parameter, but argument %d of '%s' is its "
				    "input tensor '%s'", n, i + 1, f->name, in[i]->name);
			else if (caller_defines(k, n))
				diag_error(a->loc, "stage '%s' has no declared shape, so it cannot be "
				    "passed to '%s'; declare it ('%s: %s[...];')", n, f->name, n,
				    type_name(in[i]->elem));
			else
				diag_error(a->loc, "use of undeclared tensor '%s'", n);
			fail(x);
			continue;
		}
		if (arg[i]->ndims != in[i]->ndims || arg[i]->elem != in[i]->elem) {
			diag_error(a->loc, "argument %d of '%s' is %s%s but its input '%s' is %s%s",
			    i + 1, f->name, type_name(arg[i]->elem), callexpr_shape_text(arg[i]->shape,
			    arg[i]->ndims), in[i]->name, type_name(in[i]->elem),
			    callexpr_shape_text(in[i]->shape, in[i]->ndims));
			diag_note(in[i]->loc, "'%s' of '%s' declared here", in[i]->name, f->name);
			fail(x);
			arg[i] = NULL;
			continue;
		}
		calls_tput(x, in[i]->name, arg[i]->name);
	}
	if (x->failed)
		return;
	unify(x, in, arg, nin);
	for (int i = 0; i < nin && !x->failed; i++)
		check_shape(x, x->args[i]->loc, arg[i], in[i],
		    arena_printf(perm, "argument '%s'", arg[i]->name));
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].is_size && !x->psub[i]) {
			diag_error(x->at, "the shapes of the arguments do not fix size '%s' of '%s'; "
			    "give it as a named argument ('%s = ...')", f->params[i].name, f->name,
			    f->params[i].name);
			diag_note(f->params[i].loc, "'%s' declared here", f->params[i].name);
			fail(x);
		}
	/* the scalar arguments */
	for (int i = 0, j = nin; i < f->nparams; i++) {
		Param *pa = &f->params[i];
		if (pa->is_size)
			continue;
		Expr *a = named[i] ? named[i] : x->args[j++];
		if (!scalar_ok(x, a)) {
			fail(x);
			continue;
		}
		if (uses_names(a)) {
			Expr *probe = callexpr_dup(a);
			resolve_params_expr(k, probe);
			ScalarType t = types_expr(k, probe);
			if (t == TY_ERROR) {
				fail(x);
				continue;
			}
			if (!sema_widens(t, pa->type)) {
				diag_error(a->loc, "argument of type %s for '%s: %s' of '%s' would lose "
				    "precision; cast it (%s(...))", type_name(t), pa->name,
				    type_name(pa->type), f->name, type_name(pa->type));
				fail(x);
				continue;
			}
		}
		Expr *c = ast_expr(EXPR_CAST, a->loc);
		c->call.cast_to = pa->type;
		c->call.name = type_name(pa->type);
		c->call.name_loc = a->loc;
		c->call.nargs = 1;
		c->call.args = arena_alloc(perm, 2 * sizeof *c->call.args);
		c->call.args[0] = a;
		x->psub[i] = c;
	}
	if (x->failed)
		return;
	/* a layout declared for the target: its calls instead (layouts.c) */
	LayoutSite ls = { .p = x->p, .k = k, .f = f, .at = x->at, .outs = x->outs,
		.nouts = x->nouts, .args = x->args, .keys = x->keys, .nargs = x->nargs,
		.psub = x->psub };
	ls.ins = arena_alloc(perm, (size_t)(nin + 1) * sizeof *ls.ins);
	for (int i = 0; i < nin; i++)
		ls.ins[i] = arg[i]->name;
	x->gen = layouts_rewrite(&ls, &x->ngen);
	if (x->gen)
		return;
	/* the results, then the other stages */
	for (int i = 0; i < nout; i++) {
		const char *n = x->outs[i];
		for (int j = 0; j < i; j++)
			if (x->outs[j] == n) {
				diag_error(x->out_locs[i], "result '%s' named twice", n);
				fail(x);
			}
		if (resolve_param(k, n)) {
			diag_error(x->out_locs[i], "cannot define parameter '%s'", n);
			fail(x);
			continue;
		}
		Tensor *d = caller_decl(k, x->items, x->nitems, n);
		if (d && d->role == ROLE_IN) {
			diag_error(x->out_locs[i], "cannot define input '%s'", n);
			diag_note(d->loc, "'%s' declared here as an input", n);
			fail(x);
			continue;
		}
		if (d && (d->ndims != out[i]->ndims || d->elem != out[i]->elem)) {
			Expr **want = shape_in_caller(x, out[i]);
			diag_error(x->out_locs[i], "result '%s' of '%s' is %s%s but '%s' is declared "
			    "%s%s", out[i]->name, f->name, type_name(out[i]->elem),
			    callexpr_shape_text(want, out[i]->ndims), n, type_name(d->elem),
			    callexpr_shape_text(d->shape, d->ndims));
			diag_note(d->loc, "'%s' declared here", n);
			fail(x);
			continue;
		}
		if (d) {
			check_shape(x, x->out_locs[i], d, out[i], arena_printf(perm, "'%s'", n));
		} else {
			Tensor *t = arena_alloc(perm, sizeof *t);
			*t = *out[i];
			t->loc = x->out_locs[i];
			t->name = n;
			t->role = ROLE_TEMP;
			t->declared = true;
			t->shape = shape_in_caller(x, out[i]);
			t->abi_index = -1;
			t->stage_index = -1;
			calls_emit(x, (KernelItem){ .decl = t });
			*ARENA_PUSH(perm, calls_made, calls_nmade, calls_capmade) = n;
		}
		calls_tput(x, out[i]->name, n);
	}
	for (int i = 0; i < f->nitems && !x->failed; i++) {
		const char *n = f->items[i].decl ? f->items[i].decl->name :
		    f->items[i].rule ? f->items[i].rule->name : NULL;
		if (!n || calls_tmap(x, n))
			continue;
		const char *to = intern_cstr(arena_printf(perm, "%s__%s", x->outs[0], n));
		if (calls_name_used(k, to)) {
			diag_error(x->at, "the call makes a stage '%s' (its result's name, '__', the "
			    "stage '%s' of '%s'), but '%s' already has that name; rename its stage or "
			    "the result", to, n, f->name, k->name);
			fail(x);
			break;
		}
		*ARENA_PUSH(perm, calls_made, calls_nmade, calls_capmade) = to;
		calls_tput(x, n, to);
	}
	if (x->failed)
		return;
	x->site = arena_alloc(perm, sizeof *x->site);
	x->site->callee = f;
	x->site->result = x->outs[0];
	x->site->at = x->at;
	x->site->psub = x->psub;
	for (int i = 0; i < f->nitems; i++) {
		Tensor *d = f->items[i].decl;
		Rule *r = f->items[i].rule;
		if (d && (d->role == ROLE_TEMP || d->is_const)) {
			/* a constant of the callee is one of the caller's */
			Tensor *t = arena_alloc(perm, sizeof *t);
			*t = *d;
			t->name = calls_tmap(x, d->name);
			t->shape = shape_in_caller(x, d);
			t->abi_index = -1;
			t->stage_index = -1;
			calls_emit(x, (KernelItem){ .decl = t });
		} else if (r) {
			calls_emit(x, (KernelItem){ .rule = calls_copy_rule(x, r) });
		}
	}
	/* every axis has its caller's name now: the maps are complete */
	x->site->tfrom = x->tfrom; x->site->tto = x->tto; x->site->nt = x->nt;
	x->site->afrom = x->afrom; x->site->ato = x->ato; x->site->na = x->na;
}

/* ---- kernels ------------------------------------------------------------- */

/* Whether a rule is a call with one result, `y = softmax(x);`. */
static bool
is_call_rule(Rule *r)
{
	return r && !r->update && !r->init && !r->tuple && r->naxes == 0 && r->value &&
	    r->value->kind == EXPR_CALL && r->value->call.name &&
	    types_builtin(r->value->call.name) == BI_NONE && !borders_is_helper(r->value->call.name);
}

typedef struct {
	Program *p;
	bool bad;
} Nested;

/* A kernel called inside an expression (reported). */
static bool
nested_fn(Expr *e, void *ctx)
{
	Nested *n = ctx;
	if (e->kind == EXPR_CALL && e->call.keys && e->call.name &&
	    borders_is_helper(e->call.name)) {
		diag_error(e->loc, "'%s' takes no named arguments (they are for calls of kernels)",
		    e->call.name);
		n->bad = true;
		return false;
	}
	if (e->kind == EXPR_CALL && e->call.name && types_builtin(e->call.name) == BI_NONE &&
	    sema_find_kernel(n->p, e->call.name)) {
		diag_error(e->loc, "'%s' is a kernel: a call of it is a statement of its own "
		    "('r = %s(...);'), whose result the expression may then read", e->call.name,
		    e->call.name);
		n->bad = true;
		return false;
	}
	return true;
}

static void
unknown_callee(Program *p, const char *name, Loc loc)
{
	const char **c = NULL;
	int n = 0, cap = 0;
	for (int i = 0; check_suggest() && i < p->nkernels; i++)
		if (p->kernels[i])
			*ARENA_PUSH(perm, c, n, cap) = p->kernels[i]->name;
	for (int b = BI_NONE + 1; check_suggest() && b < BI_COUNT; b++)
		*ARENA_PUSH(perm, c, n, cap) = types_builtin_name((Builtin)b);
	const char *near = check_closest(name, c, n);
	if (near)
		diag_error(loc, "unknown kernel or function '%s'; did you mean '%s'?", name, near);
	else
		diag_error(loc, "unknown kernel or function '%s'", name);
}

static void
expand_kernel(Program *p, Kernel *k)
{
	if (!k || k->calls_state)
		return;
	k->calls_state = 1;
	bool any = false;
	for (int i = 0; i < k->nitems && !any; i++)
		any = k->items[i].call || is_call_rule(k->items[i].rule);
	Nested nest = { .p = p };
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule && !is_call_rule(k->items[i].rule))
			check_walk(k->items[i].rule->value, nested_fn, &nest);
	if (nest.bad)
		k->calls_failed = true;
	if (!any) {
		k->calls_state = 2;
		return;
	}
	Items out = { NULL, 0, 0 };
	calls_nmade = 0;
	for (int i = 0; i < k->nitems; i++)
		expand_item(p, k, k->items[i], &out);
	layouts_finish(k, out.v, &out.n);
	k->items = out.v;
	k->nitems = out.n;
	k->calls_state = 2;
}

/* One statement of k: a call expanded into items, anything else kept. */
static void
expand_item(Program *p, Kernel *k, KernelItem it, Items *out)
{
	Ex x = { .p = p, .k = k };
	if (it.call) {
		Call *c = it.call;
		x.callee = c->callee;
		x.at = c->loc;
		x.outs = c->outs; x.out_locs = c->out_locs; x.nouts = c->nouts;
		x.args = c->args; x.nargs = c->nargs;
		x.keys = c->keys; x.key_locs = c->key_locs;
	} else if (is_call_rule(it.rule)) {
		Rule *r = it.rule;
		x.callee = r->value->call.name;
		x.at = r->loc;
		x.outs = arena_alloc(perm, sizeof *x.outs);
		x.out_locs = arena_alloc(perm, sizeof *x.out_locs);
		x.outs[0] = r->name;
		x.out_locs[0] = r->name_loc;
		x.nouts = 1;
		x.args = r->value->call.args; x.nargs = r->value->call.nargs;
		x.keys = r->value->call.keys; x.key_locs = r->value->call.key_locs;
	} else {
		/* element-wise on a rewritten call's result: in its layout */
		int ng = 0;
		KernelItem *g = it.rule ?
		    layouts_elementwise(p, k, it.rule, out->v, out->n, &ng) : NULL;
		for (int j = 0; j < ng; j++)
			expand_item(p, k, g[j], out);
		if (!g)
			*ARENA_PUSH(perm, out->v, out->n, out->cap) = it;
		return;
	}
	x.f = sema_find_kernel(p, x.callee);
	if (!x.f) {
		unknown_callee(p, x.callee, it.call ? it.call->callee_loc :
		    it.rule->value->call.name_loc);
		k->calls_failed = true;
		return;
	}
	/* expanding the callee reuses the list of names calls_made */
	int savedn = calls_nmade;
	const char **saved = arena_alloc(perm, (size_t)(calls_nmade + 1) * sizeof *saved);
	if (calls_nmade)
		memcpy(saved, calls_made, (size_t)calls_nmade * sizeof *saved);
	x.items = NULL;
	x.nitems = 0;
	/* the caller's declarations calls_made so far: for arguments */
	for (int j = 0; j < out->n; j++)
		*ARENA_PUSH(perm, x.items, x.nitems, x.capitems) = out->v[j];
	int before = x.nitems;
	*ARENA_PUSH(perm, chain, nchain, capchain) = (Link){ k, x.f, x.at };
	if (x.f->calls_state == 0) {
		expand_kernel(p, x.f);
		calls_nmade = 0;
		for (int j = 0; j < savedn; j++)
			*ARENA_PUSH(perm, calls_made, calls_nmade, calls_capmade) = saved[j];
	}
	nchain--;
	expand_call(&x);
	if (x.failed) {
		k->calls_failed = true;
		return;
	}
	if (x.gen) {
		layouts_push(x.f);
		for (int j = 0; j < x.ngen; j++)
			expand_item(p, k, x.gen[j], out);
		layouts_pop();
		return;
	}
	for (int j = before; j < x.nitems; j++)
		*ARENA_PUSH(perm, out->v, out->n, out->cap) = x.items[j];
}

void
calls_expand_kernel(Program *p, Kernel *k)
{
	expand_kernel(p, k);
}

void
calls_program(Program *p)
{
	layouts_check_program(p);
	for (int i = 0; i < p->nkernels; i++)
		expand_kernel(p, p->kernels[i]);
}
