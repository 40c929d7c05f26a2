/* ast.c: AST constructors (used by the grammar) and small helpers on types,
 * operators and lookups that every stage shares.
 *
 * Nodes are allocated zeroed from perm; a new expression has type TY_ERROR
 * until sema types it.
 */
#include "ast.h"

static const char *const type_names[TY_COUNT] = {
	[TY_ERROR] = "<error>", [TY_BOOL] = "bool",
	[TY_I8] = "i8", [TY_I16] = "i16", [TY_I32] = "i32", [TY_I64] = "i64",
	[TY_U8] = "u8", [TY_U16] = "u16", [TY_U32] = "u32", [TY_U64] = "u64",
	[TY_F16] = "f16", [TY_BF16] = "bf16", [TY_F32] = "f32", [TY_F64] = "f64",
	[TY_INT_LIT] = "integer literal", [TY_FLOAT_LIT] = "floating-point literal",
};

const char *
type_name(ScalarType t)
{
	if ((unsigned)t >= TY_COUNT)
		return "<bad type>";
	return type_names[t];
}

int
type_bits(ScalarType t)
{
	switch (t) {
	case TY_BOOL: return 1;
	case TY_I8: case TY_U8: return 8;
	case TY_I16: case TY_U16: case TY_F16: case TY_BF16: return 16;
	case TY_I32: case TY_U32: case TY_F32: return 32;
	case TY_I64: case TY_U64: case TY_F64: case TY_INT_LIT: case TY_FLOAT_LIT:
		return 64;
	default: return 0;
	}
}

bool
type_is_int(ScalarType t)
{
	return (t >= TY_I8 && t <= TY_U64) || t == TY_INT_LIT;
}

bool
type_is_signed(ScalarType t)
{
	return (t >= TY_I8 && t <= TY_I64) || t == TY_INT_LIT;
}

bool
type_is_float(ScalarType t)
{
	return (t >= TY_F16 && t <= TY_F64) || t == TY_FLOAT_LIT;
}

const char *
op_spelling(Op op)
{
	static const char *const s[OP_COUNT] = {
		[OP_NEG] = "-", [OP_NOT] = "!", [OP_BITNOT] = "~",
		[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/",
		[OP_MOD] = "%", [OP_SHL] = "<<", [OP_SHR] = ">>",
		[OP_BITAND] = "&", [OP_BITOR] = "|", [OP_BITXOR] = "^",
		[OP_EQ] = "==", [OP_NE] = "!=", [OP_LT] = "<", [OP_LE] = "<=",
		[OP_GT] = ">", [OP_GE] = ">=", [OP_AND] = "&&", [OP_OR] = "||",
	};
	if ((unsigned)op >= OP_COUNT)
		return "?";
	return s[op];
}

const char *
reduce_spelling(ReduceOp r)
{
	switch (r) {
	case RED_SUM: return "sum";
	case RED_PROD: return "prod";
	case RED_MAX: return "maximum";
	case RED_MIN: return "minimum";
	case RED_ARGMAX: return "argmax";
	case RED_ARGMIN: return "argmin";
	}
	return "?";
}

Expr *
ast_expr(ExprKind kind, Loc loc)
{
	if (!perm)
		perm = arena_new();
	Expr *e = arena_alloc(perm, sizeof *e);
	e->kind = kind;
	e->loc = loc;
	e->type = TY_ERROR;
	return e;
}

Expr *
ast_int(Loc loc, int64_t v)
{
	Expr *e = ast_expr(EXPR_INT, loc);
	e->ival = v;
	return e;
}

Expr *
ast_float(Loc loc, double v)
{
	Expr *e = ast_expr(EXPR_FLOAT, loc);
	e->fval = v;
	return e;
}

Expr *
ast_name(Loc loc, const char *name)
{
	Expr *e = ast_expr(EXPR_NAME, loc);
	e->id.name = name;
	return e;
}

/* loc covers the operator and its operand. */
Expr *
ast_unary(Loc loc, Op op, Expr *a)
{
	Expr *e = ast_expr(EXPR_UNARY, loc);
	e->bin.op = op;
	e->bin.op_loc = (Loc){ loc.file, loc.begin, loc.begin + 1 };
	e->bin.a = a;
	return e;
}

Expr *
ast_binary(Op op, Loc op_loc, Expr *a, Expr *b)
{
	Expr *e = ast_expr(EXPR_BINARY, loc_span(a->loc, b->loc));
	e->bin.op = op;
	e->bin.op_loc = op_loc;
	e->bin.a = a;
	e->bin.b = b;
	return e;
}

Expr *
ast_select(Expr *c, Expr *a, Expr *b)
{
	Expr *e = ast_expr(EXPR_SELECT, loc_span(c->loc, b->loc));
	e->call.args = arena_alloc(perm, 3 * sizeof *e->call.args);
	e->call.args[0] = c;
	e->call.args[1] = a;
	e->call.args[2] = b;
	e->call.nargs = 3;
	return e;
}

Kernel *
ast_find_kernel(Program *p, const char *name)
{
	for (int i = 0; i < p->nkernels; i++)
		if (p->kernels[i]->name == name)
			return p->kernels[i];
	return NULL;
}

/* Looks in the tensors sema collected or, before sema, in the declarations. */
Tensor *
ast_find_tensor(Kernel *k, const char *name)
{
	for (int i = 0; i < k->ntensors; i++)
		if (k->tensors[i]->name == name)
			return k->tensors[i];
	if (k->ntensors == 0)
		for (int i = 0; i < k->nitems; i++)
			if (k->items[i].decl && k->items[i].decl->name == name)
				return k->items[i].decl;
	return NULL;
}
