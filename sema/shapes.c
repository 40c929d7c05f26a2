/* shapes.c: tensor shapes and the number of indices of each access.
 *
 * A declared extent is an expression over size parameters and integer
 * constants (+ - * / %, min, max): no scalar parameters, axes or tensor
 * reads, so every extent is known when the entry point is called.  A
 * constant extent must not be negative.  Every access T[...] gives T
 * exactly as many indices as T has dimensions.
 */
#include "sema/sema.h"

/* A reduction bound may also use the rule's pure axes (shapes_bound_expr). */
static bool pure_ok;

static const char *
allowed(void)
{
	return pure_ok ? "size parameters, the rule's pure axes and constants" :
	    "size parameters and constants";
}

static bool
size_expr(Expr *e, const char *what)
{
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_INT:
		return true;
	case EXPR_NAME:
		switch (e->id.ref) {
		case REF_SIZE:
			return true;
		case REF_SCALAR:
			diag_error(e->loc, "%s cannot use the scalar parameter '%s'; only %s", what,
			    e->id.name, allowed());
			return false;
		case REF_PURE_AXIS:
			if (pure_ok)
				return true;
			/* fall through */
		case REF_RED_AXIS:
			diag_error(e->loc, "%s cannot use the axis '%s'; only %s", what, e->id.name,
			    allowed());
			return false;
		default:
			return false;   /* already reported */
		}
	case EXPR_ACCESS:
		if (e->call.tensor)
			diag_error(e->loc, "%s cannot read the tensor '%s'; only %s", what,
			    e->call.name, allowed());
		return false;
	case EXPR_UNARY:
		if (e->bin.op == OP_NEG)
			return size_expr(e->bin.a, what);
		break;
	case EXPR_BINARY:
		switch (e->bin.op) {
		case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD: {
			bool a = size_expr(e->bin.a, what);
			bool b = size_expr(e->bin.b, what);
			return a && b;
		}
		default:
			break;
		}
		break;
	case EXPR_CALL:
		if (e->call.name && e->call.nargs == 2 &&
		    (types_builtin(e->call.name) == BI_MIN || types_builtin(e->call.name) == BI_MAX)) {
			bool a = size_expr(e->call.args[0], what);
			bool b = size_expr(e->call.args[1], what);
			return a && b;
		}
		break;
	default:
		break;
	}
	if (pure_ok)
		diag_error(e->loc, "%s may only use size parameters, the rule's pure axes, "
		    "integer constants, + - * / %%, min and max", what);
	else
			diag_error(e->loc, "%s may only use size parameters, integer constants, "
	    "+ - * / %%, min and max", what);
	return false;
}

/* Types a valid size expression: everything in it is an i64. */
static bool
set_index_type(Expr *e, void *ctx)
{
	(void)ctx;
	e->type = TY_INDEX;
	if (e->kind == EXPR_CALL)
		e->call.builtin = types_builtin(e->call.name);
	if (e->kind == EXPR_BINARY && (e->bin.op == OP_DIV || e->bin.op == OP_MOD) &&
	    e->bin.b && e->bin.b->kind == EXPR_INT && e->bin.b->ival == 0)
		diag_error(e->bin.b->loc, "%s by zero", e->bin.op == OP_DIV ? "division" :
		    "remainder");
	return true;
}

bool
shapes_size_expr(Expr *e, const char *what)
{
	if (!size_expr(e, what))
		return false;
	check_walk(e, set_index_type, NULL);
	return true;
}

/* The value of a constant extent, if it is one (and does not overflow). */
static bool
const_value(Expr *e, int64_t *v)
{
	int64_t a, b;
	if (!e)
		return false;
	switch (e->kind) {
	case EXPR_INT:
		*v = e->ival;
		return true;
	case EXPR_UNARY:
		if (e->bin.op != OP_NEG || !const_value(e->bin.a, &a))
			return false;
		return !__builtin_sub_overflow((int64_t)0, a, v);
	case EXPR_BINARY:
		if (!const_value(e->bin.a, &a) || !const_value(e->bin.b, &b))
			return false;
		switch (e->bin.op) {
		case OP_ADD: return !__builtin_add_overflow(a, b, v);
		case OP_SUB: return !__builtin_sub_overflow(a, b, v);
		case OP_MUL: return !__builtin_mul_overflow(a, b, v);
		case OP_DIV: case OP_MOD:
			if (b == 0 || (a == INT64_MIN && b == -1))
				return false;
			{
				int64_t q = a / b, r = a % b;
				if (r < 0) {   /* Euclidean: 0 <= r < |b| */
					q += b > 0 ? -1 : 1;
					r += b > 0 ? b : -b;
				}
				*v = e->bin.op == OP_DIV ? q : r;
			}
			return true;
		default:
			return false;
		}
	case EXPR_CALL:
		if (e->call.nargs != 2 || !const_value(e->call.args[0], &a) ||
		    !const_value(e->call.args[1], &b))
			return false;
		if (types_builtin(e->call.name) == BI_MIN)
			*v = a < b ? a : b;
		else if (types_builtin(e->call.name) == BI_MAX)
			*v = a > b ? a : b;
		else
			return false;
		return true;
	default:
		return false;
	}
}

/* Whether e names no parameter: a constant expression. */
static bool
names_nothing(Expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case EXPR_INT: return true;
	case EXPR_UNARY: return names_nothing(e->bin.a);
	case EXPR_BINARY: return names_nothing(e->bin.a) && names_nothing(e->bin.b);
	case EXPR_CALL:
		for (int i = 0; i < e->call.nargs; i++)
			if (!names_nothing(e->call.args[i]))
				return false;
		return true;
	default: return false;
	}
}

static void
shapes_decl(Tensor *t)
{
	if (!t->declared || !t->shape)
		return;
	/* the bytes of the constant extents: past 64 bits, no call with
	 * nonzero sizes could run (its entry point's size check fails every
	 * time), so it is an error here */
	int64_t bytes = type_bits(t->elem) <= 8 ? 1 : type_bits(t->elem) / 8;
	bool over = false, all_const = true, ok = true;
	for (int d = 0; d < t->ndims; d++) {
		Expr *e = t->shape[d];
		int64_t v;
		if (!shapes_size_expr(e, "a shape")) {
			ok = false;
			continue;
		}
		if (const_value(e, &v)) {
			if (v < 0) {
				diag_error(e->loc, "extent %d of '%s' is negative (%lld)", d + 1, t->name,
				    (long long)v);
				ok = false;
			} else if (!over && v > 0) {
				over = __builtin_mul_overflow(bytes, v, &bytes);
			}
		} else if (names_nothing(e)) {
			diag_error(e->loc, "extent %d of '%s' is past 64 bits", d + 1, t->name);
			ok = false;
		} else {
			all_const = false;
		}
	}
	if (ok && over)
		diag_error(t->loc, "'%s' has more bytes than 64 bits count%s: its constant "
		    "extents alone make more than %lld bytes", t->name, all_const ? "" :
		    " at every nonzero size", (long long)INT64_MAX);
}

static bool
count_indices(Expr *e, void *ctx)
{
	(void)ctx;
	Tensor *t = e->kind == EXPR_ACCESS ? e->call.tensor : NULL;
	if (t && e->call.nargs != t->ndims) {
		if (e->call.nargs == 0)
			diag_error(e->loc, "'%s' has %d dimension%s but is used without indices",
			    t->name, t->ndims, t->ndims == 1 ? "" : "s");
		else
			diag_error(e->loc, "'%s' has %d dimension%s but is indexed with %d ind%s",
			    t->name, t->ndims, t->ndims == 1 ? "" : "s", e->call.nargs,
			    e->call.nargs == 1 ? "ex" : "ices");
		diag_note(t->loc, "'%s' %s here", t->name, t->declared ? "declared" : "defined");
	}
	return true;
}

void
shapes_kernel(Kernel *k)
{
	for (int i = 0; i < k->ntensors; i++)
		shapes_decl(k->tensors[i]);
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule) {
			check_walk(k->items[i].rule->value, count_indices, NULL);
			if (k->items[i].rule->update && !k->items[i].rule->upd_add)
				check_walk(k->items[i].rule->target, count_indices, NULL);
		}
}

bool
shapes_bound_expr(Expr *e)
{
	pure_ok = true;
	bool ok = shapes_size_expr(e, "a reduction bound");
	pure_ok = false;
	return ok;
}
