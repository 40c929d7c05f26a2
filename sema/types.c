/* types.c: the type of every expression, and of each rule's value.
 *
 * Literals are untyped until an operand, a tensor or a builtin gives them
 * a type (an integer literal becomes any number, a float literal any float
 * type); left alone they default to i32 and f32.  Operands of different
 * types meet in the wider one when the widening is lossless (sema_unify);
 * anything else needs a cast, and the message says so.  Stages are typed
 * in compute order, so an undeclared stage takes its rule's type before a
 * later stage reads it.
 */
#include <string.h>

#include "sema/sema.h"

/* ---- builtins -------------------------------------------------------- */

typedef enum { BK_FLOAT, BK_NUMBER } BuiltinKind;

static const struct {
	const char *name;
	int nargs;
	BuiltinKind kind;
} builtins[BI_COUNT] = {
	[BI_EXP] = { "exp", 1, BK_FLOAT },
	[BI_LOG] = { "log", 1, BK_FLOAT },
	[BI_SQRT] = { "sqrt", 1, BK_FLOAT },
	[BI_RSQRT] = { "rsqrt", 1, BK_FLOAT },
	[BI_TANH] = { "tanh", 1, BK_FLOAT },
	[BI_SIN] = { "sin", 1, BK_FLOAT },
	[BI_COS] = { "cos", 1, BK_FLOAT },
	[BI_ERF] = { "erf", 1, BK_FLOAT },
	[BI_SIGMOID] = { "sigmoid", 1, BK_FLOAT },
	[BI_ABS] = { "abs", 1, BK_NUMBER },
	[BI_FLOOR] = { "floor", 1, BK_FLOAT },
	[BI_CEIL] = { "ceil", 1, BK_FLOAT },
	[BI_ROUND] = { "round", 1, BK_FLOAT },
	[BI_POW] = { "pow", 2, BK_FLOAT },
	[BI_MIN] = { "min", 2, BK_NUMBER },
	[BI_MAX] = { "max", 2, BK_NUMBER },
	[BI_CLAMP] = { "clamp", 3, BK_NUMBER },
};

Builtin
types_builtin(const char *name)
{
	for (int b = BI_NONE + 1; name && b < BI_COUNT; b++)
		if (strcmp(builtins[b].name, name) == 0)
			return (Builtin)b;
	return BI_NONE;
}

const char *
types_builtin_name(Builtin b)
{
	return b > BI_NONE && b < BI_COUNT ? builtins[b].name : "?";
}

/* ---- helpers ------------------------------------------------------------ */

static bool
is_lit(ScalarType t)
{
	return t == TY_INT_LIT || t == TY_FLOAT_LIT;
}

static bool
is_number(ScalarType t)
{
	return t != TY_BOOL && t != TY_ERROR;
}

static const char *
tyname(ScalarType t)
{
	return t == TY_INT_LIT ? "an integer literal" :
	    t == TY_FLOAT_LIT ? "a floating-point literal" : type_name(t);
}

static ScalarType
default_type(ScalarType t)
{
	return t == TY_INT_LIT ? TY_I32 : t == TY_FLOAT_LIT ? TY_F32 : t;
}

static bool
fits(int64_t v, ScalarType t)
{
	switch (t) {
	case TY_I8: return v >= INT8_MIN && v <= INT8_MAX;
	case TY_I16: return v >= INT16_MIN && v <= INT16_MAX;
	case TY_I32: return v >= INT32_MIN && v <= INT32_MAX;
	case TY_U8: return v >= 0 && v <= UINT8_MAX;
	case TY_U16: return v >= 0 && v <= UINT16_MAX;
	case TY_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
	case TY_U64: return v >= 0;
	default: return true;
	}
}

/* Gives an untyped expression (one whose type is a literal type) the
 * concrete type t, down to its literals. */
static void
coerce(Expr *e, ScalarType t)
{
	if (!e || !is_lit(e->type) || t == TY_ERROR || is_lit(t))
		return;
	e->type = t;
	switch (e->kind) {
	case EXPR_INT:
		if (type_is_int(t) && !fits(e->ival, t))
			diag_error(e->loc, "integer literal %lld does not fit in %s",
			    (long long)e->ival, type_name(t));
		break;
	case EXPR_UNARY:
		if (e->bin.op == OP_NEG && e->bin.a && e->bin.a->kind == EXPR_INT &&
		    type_is_int(t) && e->bin.a->ival != INT64_MIN) {
			if (!fits(-e->bin.a->ival, t))
				diag_error(e->loc, "integer literal -%lld does not fit in %s",
				    (long long)e->bin.a->ival, type_name(t));
			e->bin.a->type = t;
			break;
		}
		coerce(e->bin.a, t);
		break;
	case EXPR_BINARY:
		coerce(e->bin.a, t);
		coerce(e->bin.b, t);
		break;
	case EXPR_SELECT:
		if (e->call.nargs == 3) {
			coerce(e->call.args[1], t);
			coerce(e->call.args[2], t);
		}
		break;
	case EXPR_CALL:
		for (int i = 0; i < e->call.nargs; i++)
			coerce(e->call.args[i], t);
		break;
	case EXPR_REDUCE:
		coerce(e->reduce.body, t);
		break;
	default:
		break;
	}
}

static void
mix_error(Loc at, ScalarType a, ScalarType b)
{
	diag_error(at, "mixing %s and %s needs an explicit cast", tyname(a), tyname(b));
}

/* ---- expressions ---------------------------------------------------------- */

typedef struct {
	Kernel *k;
} Ctx;

static ScalarType check(Ctx *c, Expr *e);

/* An index or bound: any integer type; literals become i64. */
static void
check_index(Ctx *c, Expr *e, const char *what)
{
	ScalarType t = check(c, e);
	if (t == TY_ERROR)
		return;
	if (!type_is_int(t))
		diag_error(e->loc, "%s must be an integer, not %s", what, tyname(t));
	else
		coerce(e, TY_INDEX);
}

static ScalarType
check_call(Ctx *c, Expr *e)
{
	bool bad = false;
	for (int i = 0; i < e->call.nargs; i++)
		if (check(c, e->call.args[i]) == TY_ERROR)
			bad = true;
	const char *name = e->call.name;
	Builtin b = types_builtin(name);
	e->call.builtin = b;
	if (!name)
		return TY_ERROR;
	for (int i = 0; e->call.keys && i < e->call.nargs; i++)
		if (e->call.keys[i]) {
			diag_error(e->call.key_locs[i], "'%s' takes no named arguments (they are for "
			    "calls of kernels)", name);
			return TY_ERROR;
		}
	if (b == BI_NONE) {
		Tensor *t = resolve_tensor(c->k, name);
		if (t) {
			diag_error(e->call.name_loc, "'%s' is a tensor, not a function; index it "
			    "with brackets: %s[...]", name, name);
			return TY_ERROR;
		}
		const char *names[BI_COUNT + 8];
		int n = 0;
		for (int i = BI_NONE + 1; i < BI_COUNT; i++)
			names[n++] = builtins[i].name;
		for (int i = 0; borders_helper_name(i) && n < BI_COUNT + 8; i++)
			names[n++] = borders_helper_name(i);
		const char *near = check_closest(name, names, n);
		if (near)
			diag_error(e->call.name_loc, "unknown function '%s'; did you mean '%s'?",
			    name, near);
		else
			diag_error(e->call.name_loc, "unknown function '%s'", name);
		return TY_ERROR;
	}
	int want = builtins[b].nargs;
	if (e->call.nargs != want) {
		diag_error(e->loc, "'%s' takes %d argument%s but %d %s given", name, want,
		    want == 1 ? "" : "s", e->call.nargs, e->call.nargs == 1 ? "was" : "were");
		return TY_ERROR;
	}
	if (bad)
		return TY_ERROR;
	ScalarType u = e->call.args[0]->type;
	for (int i = 1; i < want; i++) {
		ScalarType v = sema_unify(u, e->call.args[i]->type);
		if (v == TY_ERROR) {
			diag_error(e->loc, "'%s' mixes %s and %s; make them one type with an "
			    "explicit cast", name, tyname(u), tyname(e->call.args[i]->type));
			return TY_ERROR;
		}
		u = v;
	}
	if (builtins[b].kind == BK_FLOAT) {
		if (u == TY_INT_LIT)
			u = TY_F32;
		if (!type_is_float(u)) {
			diag_error(e->loc, "'%s' needs %s, not %s; convert with f32(...) or "
			    "f64(...)", name, want == 1 ? "a floating-point argument" :
			    "floating-point arguments", tyname(u));
			return TY_ERROR;
		}
	} else if (u == TY_BOOL) {
		diag_error(e->loc, "'%s' needs numbers, not bool", name);
		return TY_ERROR;
	}
	for (int i = 0; i < want; i++)
		coerce(e->call.args[i], u);
	return u;
}

static ScalarType
check_cast(Ctx *c, Expr *e)
{
	if (e->call.nargs != 1)
		return TY_ERROR;
	Expr *a = e->call.args[0];
	ScalarType t = check(c, a);
	if (is_lit(t))
		coerce(a, sema_widens(t, e->call.cast_to) ? e->call.cast_to :
		    t == TY_INT_LIT ? TY_I64 : TY_F64);
	return e->call.cast_to;
}

static ScalarType
check_unary(Ctx *c, Expr *e)
{
	ScalarType t = check(c, e->bin.a);
	if (t == TY_ERROR)
		return TY_ERROR;
	const char *op = op_spelling(e->bin.op);
	switch (e->bin.op) {
	case OP_NEG:
		if (!is_number(t)) {
			diag_error(e->loc, "operator '%s' needs a number, not %s", op, tyname(t));
			return TY_ERROR;
		}
		return t;
	case OP_NOT:
		if (t != TY_BOOL) {
			diag_error(e->loc, "operator '%s' needs a bool operand, not %s", op, tyname(t));
			return TY_ERROR;
		}
		return t;
	case OP_BITNOT:
		if (!type_is_int(t)) {
			diag_error(e->loc, "operator '%s' needs an integer operand, not %s", op,
			    tyname(t));
			return TY_ERROR;
		}
		return t;
	default:
		return TY_ERROR;
	}
}

static ScalarType
check_binary(Ctx *c, Expr *e)
{
	ScalarType ta = check(c, e->bin.a), tb = check(c, e->bin.b);
	Op op = e->bin.op;
	const char *sp = op_spelling(op);
	if (ta == TY_ERROR || tb == TY_ERROR)
		return TY_ERROR;
	if (op == OP_AND || op == OP_OR) {
		if (ta != TY_BOOL || tb != TY_BOOL) {
			Expr *bad = ta != TY_BOOL ? e->bin.a : e->bin.b;
			diag_error(bad->loc, "operator '%s' needs bool operands, not %s", sp,
			    tyname(bad->type));
			return TY_ERROR;
		}
		return TY_BOOL;
	}
	ScalarType u = sema_unify(ta, tb);
	if (u == TY_ERROR) {
		mix_error(e->loc, ta, tb);
		return TY_ERROR;
	}
	switch (op) {
	case OP_EQ: case OP_NE:
		break;
	case OP_SHL: case OP_SHR: case OP_BITAND: case OP_BITOR: case OP_BITXOR:
		if (!type_is_int(u)) {
			diag_error(e->loc, "operator '%s' needs integers, not %s", sp, tyname(u));
			return TY_ERROR;
		}
		break;
	default:
		if (u == TY_BOOL) {
			diag_error(e->loc, "operator '%s' needs numbers, not bool", sp);
			return TY_ERROR;
		}
		break;
	}
	if ((op == OP_DIV || op == OP_MOD) && type_is_int(u) && e->bin.b->kind == EXPR_INT &&
	    e->bin.b->ival == 0)
		diag_error(e->bin.b->loc, "%s by zero", op == OP_DIV ? "division" : "remainder");
	if (op >= OP_EQ && op <= OP_GE) {
		ScalarType w = is_lit(u) ? default_type(u) : u;
		coerce(e->bin.a, w);
		coerce(e->bin.b, w);
		return TY_BOOL;
	}
	coerce(e->bin.a, u);
	coerce(e->bin.b, u);
	return u;
}

static ScalarType
check_select(Ctx *c, Expr *e)
{
	if (e->call.nargs != 3)
		return TY_ERROR;
	ScalarType tc = check(c, e->call.args[0]);
	ScalarType ta = check(c, e->call.args[1]);
	ScalarType tb = check(c, e->call.args[2]);
	bool ok = true;
	if (tc != TY_ERROR && tc != TY_BOOL) {
		diag_error(e->call.args[0]->loc, "the condition of '?:' must be bool, not %s",
		    tyname(tc));
		ok = false;
	}
	if (ta == TY_ERROR || tb == TY_ERROR || !ok)
		return TY_ERROR;
	ScalarType u = sema_unify(ta, tb);
	if (u == TY_ERROR) {
		diag_error(e->loc, "the branches of '?:' are %s and %s; make them one type "
		    "with an explicit cast", tyname(ta), tyname(tb));
		return TY_ERROR;
	}
	coerce(e->call.args[1], u);
	coerce(e->call.args[2], u);
	return u;
}

static ScalarType
check_reduce(Ctx *c, Expr *e)
{
	/* the bounds were checked and typed by shapes_size_expr */
	if (e->reduce.where) {
		ScalarType w = check(c, e->reduce.where);
		if (w != TY_ERROR && w != TY_BOOL)
			diag_error(e->reduce.where->loc, "the condition of 'where' must be bool, not %s",
			    tyname(w));
	}
	ScalarType t = check(c, e->reduce.body);
	if (t == TY_BOOL && (e->reduce.op == RED_SUM || e->reduce.op == RED_PROD)) {
		diag_error(e->loc, "'%s' of bool values; convert them to a number, e.g. i32(...)",
		    reduce_spelling(e->reduce.op));
		return TY_ERROR;
	}
	return t;
}

static ScalarType
check(Ctx *c, Expr *e)
{
	if (!e)
		return TY_ERROR;
	ScalarType t = TY_ERROR;
	switch (e->kind) {
	case EXPR_INT:
		t = TY_INT_LIT;
		break;
	case EXPR_FLOAT:
		t = TY_FLOAT_LIT;
		break;
	case EXPR_BOOL:
		t = TY_BOOL;
		break;
	case EXPR_NAME:
		switch (e->id.ref) {
		case REF_SIZE: case REF_PURE_AXIS: case REF_RED_AXIS:
			t = TY_INDEX;
			break;
		case REF_SCALAR:
			t = e->id.param ? e->id.param->type : TY_ERROR;
			break;
		default:
			break;
		}
		break;
	case EXPR_ACCESS:
		for (int i = 0; i < e->call.nargs; i++)
			check_index(c, e->call.args[i], "an index");
		if (e->call.tensor)
			t = e->call.tensor->elem;
		break;
	case EXPR_CALL:
		t = check_call(c, e);
		break;
	case EXPR_CAST:
		t = check_cast(c, e);
		break;
	case EXPR_UNARY:
		t = check_unary(c, e);
		break;
	case EXPR_BINARY:
		t = check_binary(c, e);
		break;
	case EXPR_SELECT:
		t = check_select(c, e);
		break;
	case EXPR_REDUCE:
		t = check_reduce(c, e);
		break;
	}
	e->type = t;
	return t;
}

ScalarType
types_expr(Kernel *k, Expr *e)
{
	Ctx c = { .k = k };
	ScalarType t = check(&c, e);
	if (is_lit(t))
		coerce(e, default_type(t));
	return e ? e->type : TY_ERROR;
}

/* ---- rules -------------------------------------------------------------- */

static void
check_rule(Ctx *c, Rule *r)
{
	Expr *v = r->value;
	if (r->update) {
		/* the position (inside the value for +=) and the where */
		if (!r->upd_add)
			check(c, r->target);
		if (r->upd.where) {
			ScalarType w = check(c, r->upd.where);
			if (w != TY_ERROR && w != TY_BOOL)
				diag_error(r->upd.where->loc, "the condition of 'where' must be bool, "
				    "not %s", tyname(w));
		}
	}
	ScalarType t = check(c, v);
	Tensor *d = r->tensor && (r->tensor->rule == r || r->init || r->update) ? r->tensor : NULL;
	if (!d || t == TY_ERROR || !v)
		return;
	if (!d->declared) {
		d->elem = default_type(t);
		coerce(v, d->elem);
		return;
	}
	if (d->elem == TY_ERROR)
		return;
	if (sema_widens(t, d->elem)) {
		coerce(v, d->elem);
		return;
	}
	diag_error(v->loc, "assigning %s to %s tensor '%s' needs an explicit cast %s(...)",
	    tyname(t), type_name(d->elem), d->name, type_name(d->elem));
	diag_note(d->loc, "'%s' declared here", d->name);
}

void
types_kernel(Kernel *k)
{
	Ctx c = { .k = k };
	for (int i = 0; i < k->nstages; i++)
		check_rule(&c, k->stages[i]->rule);
	/* rules that define nothing (already reported): check their values too */
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (r && (!r->tensor || r->tensor->rule != r))
			check_rule(&c, r);   /* and update definitions */
	}
}
