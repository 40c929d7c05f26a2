/* borders.c: the boundary conditions (Halide's BoundaryConditions) as
 * calls that read a tensor past its ends.
 *
 *     repeat_edge(T, x1, ..., xn)           T[clamp(x1, 0, N1 - 1), ...]
 *     constant_exterior(T, v, x1, ..., xn)  (0 <= x1 && x1 < N1 && ...) ?
 *                                           T[clamp(x1, 0, N1 - 1), ...] : v
 *     wrap(T, x1, ..., xn)                  T[x1 % N1, ...]
 *     mirror(T, x1, ..., xn)                T[clamp(m1 < N1 ? m1 : 2 * N1 - 1 - m1,
 *                                             0, N1 - 1), ...], m1 = x1 % (2 * N1)
 *
 * where N1 ... Nn are T's declared extents (a gather's wrap is clamped
 * too: bound inference bounds a remainder of data by a clamp only).  An
 * index that is a pure axis of the rule running over exactly [0, Nd) (the
 * rule defines a declared tensor of that extent there: j in
 * repeat_edge(bx, i - 1, j) in a rule over bx's columns) is inside, and
 * is read as it is.  Resolve calls borders_expand on every call, after its
 * indices' names: a helper call is rewritten, in place, into the index
 * expression on the right, which bound inference proves in bounds for
 * every size (a clamp into [0, N - 1], or a remainder by N, is in bounds
 * wherever the loops that read it run).  The index
 * expressions and extents are copied, so no node has two parents; the new
 * nodes carry the call's location.  --format prints the call as written
 * (it runs before sema).
 */
#include <string.h>

#include "sema/sema.h"

typedef enum { BC_NONE, BC_REPEAT_EDGE, BC_CONSTANT_EXTERIOR, BC_WRAP, BC_MIRROR } Border;

static const char *const names[] = {
	[BC_REPEAT_EDGE] = "repeat_edge", [BC_CONSTANT_EXTERIOR] = "constant_exterior",
	[BC_WRAP] = "wrap", [BC_MIRROR] = "mirror",
};

static Border
border_of(const char *name)
{
	for (int b = BC_REPEAT_EDGE; name && b <= BC_MIRROR; b++)
		if (strcmp(names[b], name) == 0)
			return (Border)b;
	return BC_NONE;
}

bool
borders_is_helper(const char *name)
{
	return border_of(name) != BC_NONE;
}

/* A copy of e; at.file != 0: every node of the copy gets location at. */
static Expr *
copy(const Expr *e, Loc at)
{
	if (!e)
		return NULL;
	Expr *c = arena_alloc(perm, sizeof *c);
	*c = *e;
	c->type = TY_ERROR;
	if (at.file)
		c->loc = at;
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		c->call.args = e->call.nargs ?
		    arena_alloc(perm, (size_t)e->call.nargs * sizeof *c->call.args) : NULL;
		for (int i = 0; i < e->call.nargs; i++)
			c->call.args[i] = copy(e->call.args[i], at);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		c->bin.a = copy(e->bin.a, at);
		c->bin.b = copy(e->bin.b, at);
		break;
	case EXPR_REDUCE:
		c->reduce.axes = arena_alloc(perm, (size_t)e->reduce.naxes * sizeof *c->reduce.axes);
		for (int i = 0; i < e->reduce.naxes; i++) {
			c->reduce.axes[i] = e->reduce.axes[i];
			c->reduce.axes[i].lo = copy(e->reduce.axes[i].lo, at);
			c->reduce.axes[i].hi = copy(e->reduce.axes[i].hi, at);
		}
		c->reduce.body = copy(e->reduce.body, at);
		break;
	default:
		break;
	}
	return c;
}

/* Binary and select nodes located at `at` (ast_binary spans its operands,
 * which may lie elsewhere, as a copied extent does). */
static Expr *
bin(Op op, Loc at, Expr *a, Expr *b)
{
	Expr *e = ast_binary(op, at, a, b);
	e->loc = at;
	return e;
}

static Expr *
num(Loc at, int64_t v)
{
	return ast_int(at, v);
}

static Expr *
call(Loc at, const char *fn, Expr **args, int n)
{
	Expr *e = ast_expr(EXPR_CALL, at);
	e->call.name = intern_cstr(fn);
	e->call.name_loc = at;
	e->call.args = arena_alloc(perm, (size_t)n * sizeof *e->call.args);
	memcpy(e->call.args, args, (size_t)n * sizeof *args);
	e->call.nargs = n;
	return e;
}

/* clamp(x, 0, n - 1) */
static Expr *
clamp_into(Loc at, Expr *x, const Expr *n)
{
	Expr *a[3] = { x, num(at, 0), bin(OP_SUB, at, copy(n, at), num(at, 1)) };
	return call(at, "clamp", a, 3);
}

/* Whether two extents are the same expression of sizes and constants. */
static bool
same_extent(const Expr *a, const Expr *b)
{
	if (!a || !b || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case EXPR_INT:
		return a->ival == b->ival;
	case EXPR_NAME:
		return a->id.name == b->id.name;
	case EXPR_BINARY:
		return a->bin.op == b->bin.op && same_extent(a->bin.a, b->bin.a) &&
		    same_extent(a->bin.b, b->bin.b);
	default:
		return false;
	}
}

/* Whether x is a pure axis of r that runs over exactly [0, n): r defines
 * a declared tensor whose extent there is n.  Such an index is inside,
 * and every helper reads it as it is. */
static bool
in_range(const Rule *r, const Expr *x, const Expr *n)
{
	if (!r || !r->tensor || !r->tensor->declared || !r->tensor->shape ||
	    r->tensor->ndims != r->naxes || x->kind != EXPR_NAME)
		return false;
	for (int i = 0; i < r->naxes; i++)
		if (r->axes[i] == x->id.name)
			return x->id.ref == REF_PURE_AXIS && same_extent(r->tensor->shape[i], n);
	return false;
}

/* Whether x reads a tensor (an index that depends on the data). */
static bool
reads_data(const Expr *x)
{
	if (!x)
		return false;
	switch (x->kind) {
	case EXPR_ACCESS:
		return true;
	case EXPR_NAME:     /* a 0-d tensor read by its bare name */
		return x->id.ref == REF_NONE;
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < x->call.nargs; i++)
			if (reads_data(x->call.args[i]))
				return true;
		return false;
	case EXPR_UNARY: case EXPR_BINARY:
		return reads_data(x->bin.a) || reads_data(x->bin.b);
	default:
		return false;
	}
}

/* The index of one dimension of extent n read at x. */
static Expr *
index_for(Border b, Loc at, const Expr *x, const Expr *n)
{
	switch (b) {
	case BC_WRAP: {
		/* a gather's remainder is bounded by a clamp only (bound
		 * inference knows nothing of the data) */
		Expr *r = bin(OP_MOD, at, copy(x, (Loc){ 0 }), copy(n, at));
		return reads_data(x) ? clamp_into(at, r, n) : r;
	}
	case BC_MIRROR: {
		/* m = x % 2n lies in [0, 2n): the first n read forward, the
		 * next n backward from the last element */
#define M() bin(OP_MOD, at, copy(x, (Loc){ 0 }), bin(OP_MUL, at, num(at, 2), copy(n, at)))
		Expr *back = bin(OP_SUB, at,
		    bin(OP_SUB, at, bin(OP_MUL, at, num(at, 2), copy(n, at)), num(at, 1)), M());
		Expr *sel = ast_select(bin(OP_LT, at, M(), copy(n, at)), M(), back);
#undef M
		sel->loc = at;
		return clamp_into(at, sel, n);
	}
	default:
		return clamp_into(at, copy(x, (Loc){ 0 }), n);
	}
}

bool
borders_expand(Kernel *k, const Rule *r, Expr *e)
{
	Border b = e->kind == EXPR_CALL ? border_of(e->call.name) : BC_NONE;
	if (b == BC_NONE)
		return false;
	const char *fn = names[b];
	int first = b == BC_CONSTANT_EXTERIOR ? 2 : 1;   /* the first index */
	Expr *src = e->call.nargs > 0 ? e->call.args[0] : NULL;
	Tensor *t = src && src->kind == EXPR_NAME ? resolve_tensor(k, src->id.name) : NULL;
	const char *err = NULL;
	if (!t) {
		diag_error(src ? src->loc : e->loc, "the first argument of '%s' must be a tensor "
		    "of '%s'", fn, k->name);
		err = "";
	} else if (t->shape_inferred || !t->shape) {
		diag_error(src->loc, "'%s' reads '%s' past its ends, so '%s' needs a declared "
		    "shape", fn, t->name, t->name);
		diag_note(t->loc, "declare it: %s: %s[...];", t->name,
		    t->elem == TY_ERROR ? "f32" : type_name(t->elem));
		err = "";
	} else if (e->call.nargs - first != t->ndims) {
		if (b == BC_CONSTANT_EXTERIOR)
			diag_error(e->loc, "'%s' takes the tensor, the value outside it and %d "
			    "ind%s for '%s' (%d argument%s), but %d %s given", fn, t->ndims,
			    t->ndims == 1 ? "ex" : "ices", t->name, t->ndims + first,
			    t->ndims + first == 1 ? "" : "s", e->call.nargs,
			    e->call.nargs == 1 ? "was" : "were");
		else
			diag_error(e->loc, "'%s' takes the tensor and %d ind%s for '%s' "
			    "(%d argument%s), but %d %s given", fn, t->ndims,
			    t->ndims == 1 ? "ex" : "ices", t->name, t->ndims + first,
			    t->ndims + first == 1 ? "" : "s", e->call.nargs,
			    e->call.nargs == 1 ? "was" : "were");
		diag_note(t->loc, "'%s' declared here with %d dimension%s", t->name, t->ndims,
		    t->ndims == 1 ? "" : "s");
		err = "";
	}
	if (err) {
		/* reported: a call of no function, which types leaves alone */
		e->call.name = NULL;
		e->call.nargs = 0;
		return true;
	}
	Loc at = e->loc;
	Expr *acc = ast_expr(EXPR_ACCESS, at);
	acc->call.name = t->name;
	acc->call.name_loc = src->loc;
	acc->call.nargs = t->ndims;
	acc->call.args = t->ndims ? arena_alloc(perm, (size_t)t->ndims * sizeof *acc->call.args) :
	    NULL;
	/* an input read at indices that do not depend on the data: the plain
	 * read under a select, which loop partitioning (partition(axis))
	 * drops from the steady state, as Halide's likely() does */
	bool data = false;
	for (int d = 0; d < t->ndims; d++)
		data |= reads_data(e->call.args[first + d]);
	bool guarded = t->role == ROLE_IN && !data &&
	    (b == BC_REPEAT_EDGE || b == BC_CONSTANT_EXTERIOR);
	Expr *plain = ast_expr(EXPR_ACCESS, at);
	*plain = *acc;
	plain->call.args = t->ndims ? arena_alloc(perm, (size_t)t->ndims * sizeof *acc->call.args) :
	    NULL;
	Expr *inside = NULL;
	for (int d = 0; d < t->ndims; d++) {
		const Expr *x = e->call.args[first + d], *n = t->shape[d];
		plain->call.args[d] = copy(x, (Loc){ 0 });
		if (in_range(r, x, n)) {
			acc->call.args[d] = copy(x, (Loc){ 0 });
			continue;
		}
		acc->call.args[d] = index_for(b, at, x, n);
		if (b != BC_CONSTANT_EXTERIOR && !guarded)
			continue;
		Expr *in = bin(OP_AND, at, bin(OP_LE, at, num(at, 0), copy(x, (Loc){ 0 })),
		    bin(OP_LT, at, copy(x, (Loc){ 0 }), copy(n, at)));
		inside = inside ? bin(OP_AND, at, inside, in) : in;
	}
	Expr *res = acc;
	if (b == BC_CONSTANT_EXTERIOR) {
		Expr *v = e->call.args[1];
		res = inside ? ast_select(inside, guarded ? plain : acc, v) : acc;
	} else if (guarded && inside) {
		res = ast_select(inside, plain, acc);
	}
	res->loc = at;
	*e = *res;
	return true;
}

const char *
borders_helper_name(int i)
{
	return i >= 0 && i < BC_MIRROR ? names[BC_REPEAT_EDGE + i] : NULL;
}
