/* ir.c: the loop-nest IR's types, name tables and constructors.
 *
 * Every node is built here, in ir_arena (created on first use).  The
 * constructors check their invariants (operand types and lanes agree,
 * indices are integers, bodies exist) and raise an internal compiler
 * error when a pass breaks one; they never fold: simplify.c does that.
 */
#include <string.h>

#include "lower/ir.h"

Arena *ir_arena;

const char *const ir_expr_names[IR_EXPR_COUNT] = {
#define IR_EXPR(K, s) s,
#define IR_STMT(K, s)
#include "ir.def"
#undef IR_EXPR
#undef IR_STMT
};

const char *const ir_stmt_names[IR_STMT_COUNT] = {
#define IR_EXPR(K, s)
#define IR_STMT(K, s) s,
#include "ir.def"
#undef IR_EXPR
#undef IR_STMT
};

const IrType ir_i64 = {TY_I64, 1};
const IrType ir_i32 = {TY_I32, 1};
const IrType ir_bool = {TY_BOOL, 1};
const IrType ir_f32 = {TY_F32, 1};
const IrType ir_f64 = {TY_F64, 1};

static Arena *
ar(void)
{
	if (!ir_arena)
		ir_arena = arena_new();
	return ir_arena;
}

/* ---- types ------------------------------------------------------------ */

IrType
ir_type(ScalarType code, int lanes)
{
	if (code <= TY_ERROR || code >= TY_INT_LIT)
		ICE("IR type from scalar type %d", (int)code);
	if (lanes < 1)
		ICE("IR type with %d lanes", lanes);
	return (IrType){code, lanes};
}

IrType
ir_scalar(ScalarType code)
{
	return ir_type(code, 1);
}

IrType
ir_with_lanes(IrType t, int lanes)
{
	return ir_type(t.code, lanes);
}

bool
ir_type_eq(IrType a, IrType b)
{
	return a.code == b.code && a.lanes == b.lanes;
}

int
ir_bits(ScalarType t)
{
	switch (t) {
	case TY_BOOL: return 1;
	case TY_I8: case TY_U8: return 8;
	case TY_I16: case TY_U16: case TY_F16: case TY_BF16: return 16;
	case TY_I32: case TY_U32: case TY_F32: return 32;
	default: return 64;
	}
}

bool
ir_is_int(IrType t)
{
	return t.code >= TY_I8 && t.code <= TY_U64;
}

bool
ir_is_uint(IrType t)
{
	return t.code >= TY_U8 && t.code <= TY_U64;
}

bool
ir_is_float(IrType t)
{
	return t.code >= TY_F16 && t.code <= TY_F64;
}

uint16_t
ir_bf16_bits(double v)
{
	float f = (float)v;
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);   /* NaN: quiet, sign kept */
	u += 0x7fffu + ((u >> 16) & 1);            /* to nearest, ties to even */
	return (uint16_t)(u >> 16);
}

double
ir_bf16_value(double v)
{
	uint32_t u = (uint32_t)ir_bf16_bits(v) << 16;
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

bool
ir_is_bool(IrType t)
{
	return t.code == TY_BOOL;
}

static const char *const scalar_names[TY_COUNT] = {
	[TY_ERROR] = "error", [TY_BOOL] = "bool",
	[TY_I8] = "i8", [TY_I16] = "i16", [TY_I32] = "i32", [TY_I64] = "i64",
	[TY_U8] = "u8", [TY_U16] = "u16", [TY_U32] = "u32", [TY_U64] = "u64",
	[TY_F16] = "f16", [TY_BF16] = "bf16", [TY_F32] = "f32", [TY_F64] = "f64",
	[TY_INT_LIT] = "int", [TY_FLOAT_LIT] = "float",
};

const char *
ir_type_str(IrType t)
{
	const char *s = (unsigned)t.code < TY_COUNT ? scalar_names[t.code] : "?";
	if (t.lanes == 1)
		return s;
	return arena_printf(ar(), "%sx%d", s, t.lanes);
}

/* The value v as type t holds it: truncated to the type's width and sign-
 * or zero-extended back (u64 keeps its bit pattern in the int64). */
int64_t
ir_wrap(ScalarType t, int64_t v)
{
	uint64_t u = (uint64_t)v;
	switch (t) {
	case TY_BOOL: return u != 0;
	case TY_I8: return (int8_t)(uint8_t)u;
	case TY_I16: return (int16_t)(uint16_t)u;
	case TY_I32: return (int32_t)(uint32_t)u;
	case TY_U8: return (uint8_t)u;
	case TY_U16: return (uint16_t)u;
	case TY_U32: return (uint32_t)u;
	default: return v;
	}
}

const char *
ir_scope_name(MemScope s)
{
	switch (s) {
	case SCOPE_GLOBAL: return "global";
	case SCOPE_LOCAL: return "local";
	case SCOPE_SHARED: return "shared";
	case SCOPE_VTA_INP: return "inp";
	case SCOPE_VTA_WGT: return "wgt";
	case SCOPE_VTA_ACC: return "acc";
	case SCOPE_FRAGMENT: return "fragment";
	}
	return "?";
}

const char *
ir_for_kind_name(ForKind k)
{
	switch (k) {
	case FOR_SERIAL: return "for";
	case FOR_PARALLEL: return "parallel";
	case FOR_VECTORIZED: return "vectorized";
	case FOR_UNROLLED: return "unrolled";
	case FOR_GPU_BLOCK: return "gpu_block";
	case FOR_GPU_THREAD: return "gpu_thread";
	case FOR_VTHREAD: return "vthread";
	}
	return "?";
}

const char *
ir_builtin_name(Builtin bi)
{
	static const char *const names[BI_COUNT] = {
		[BI_NONE] = "none", [BI_EXP] = "exp", [BI_LOG] = "log",
		[BI_SQRT] = "sqrt", [BI_RSQRT] = "rsqrt", [BI_TANH] = "tanh",
		[BI_SIN] = "sin", [BI_COS] = "cos", [BI_ERF] = "erf",
		[BI_SIGMOID] = "sigmoid", [BI_ABS] = "abs", [BI_FLOOR] = "floor",
		[BI_CEIL] = "ceil", [BI_ROUND] = "round", [BI_POW] = "pow",
		[BI_MIN] = "min", [BI_MAX] = "max", [BI_CLAMP] = "clamp",
	};
	return (unsigned)bi < BI_COUNT ? names[bi] : "?";
}

/* ---- variables and buffers ------------------------------------------ */

Var *
ir_new_var(const char *name, IrType type)
{
	static int next_id;
	Var *v = arena_alloc(ar(), sizeof *v);
	v->name = name ? name : "t";
	v->type = type;
	v->id = ++next_id;
	return v;
}

Buffer *
ir_new_buffer(const char *name, ScalarType elem, int ndims)
{
	if (ndims < 0)
		ICE("buffer '%s' with %d dimensions", name, ndims);
	ir_type(elem, 1);   /* checks the element type */
	Buffer *b = arena_alloc(ar(), sizeof *b);
	b->name = name;
	b->elem = elem;
	b->ndims = ndims;
	size_t n = ndims ? (size_t)ndims : 1;
	b->min = arena_alloc(ar(), n * sizeof *b->min);
	b->extent = arena_alloc(ar(), n * sizeof *b->extent);
	b->scope = SCOPE_GLOBAL;
	b->abi_index = -1;
	return b;
}

/* ---- expressions ---------------------------------------------------- */

static IrExpr *
node(IrExprKind k, IrType t)
{
	IrExpr *e = arena_alloc(ar(), sizeof *e);
	e->kind = k;
	e->type = t;
	return e;
}

static void
need(IrExpr *e, const char *what)
{
	if (!e)
		ICE("%s: missing operand", what);
}

IrExpr *
ir_int(IrType t, int64_t v)
{
	if (t.lanes != 1 || !(ir_is_int(t) || ir_is_bool(t)))
		ICE("integer immediate of type %s", ir_type_str(t));
	IrExpr *e = node(IR_INT, t);
	e->ival = ir_wrap(t.code, v);
	return e;
}

IrExpr *
ir_i64c(int64_t v)
{
	return ir_int(ir_i64, v);
}

IrExpr *
ir_float(IrType t, double v)
{
	if (t.lanes != 1 || !ir_is_float(t))
		ICE("float immediate of type %s", ir_type_str(t));
	IrExpr *e = node(IR_FLOAT, t);
	e->fval = t.code == TY_F64 ? v : t.code == TY_BF16 ? ir_bf16_value(v) : (double)(float)v;
	return e;
}

IrExpr *
ir_make_const(IrType t, int64_t v)
{
	IrType s = ir_with_lanes(t, 1);
	IrExpr *e = ir_is_float(s) ? ir_float(s, (double)v) : ir_int(s, v);
	return ir_broadcast(e, t.lanes);
}

IrExpr *
ir_bool_const(bool v)
{
	return ir_int(ir_bool, v);
}

IrExpr *
ir_var(Var *v)
{
	if (!v)
		ICE("ir_var: no variable");
	IrExpr *e = node(IR_VAR, v->type);
	e->var = v;
	return e;
}

static bool
is_cmp(IrExprKind k)
{
	return k >= IR_EQ && k <= IR_GE;
}

IrExpr *
ir_binop(IrExprKind k, IrExpr *a, IrExpr *b)
{
	const char *op = (unsigned)k < IR_EXPR_COUNT ? ir_expr_names[k] : "?";
	if (k < IR_ADD || k > IR_OR)
		ICE("ir_binop with kind %s", op);
	need(a, op);
	need(b, op);
	if (!ir_type_eq(a->type, b->type))
		ICE("%s of %s and %s", op, ir_type_str(a->type), ir_type_str(b->type));
	IrType t = a->type;
	bool ok;
	switch (k) {
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD:
	case IR_MIN: case IR_MAX:
	case IR_LT: case IR_LE: case IR_GT: case IR_GE:
		ok = ir_is_int(t) || ir_is_float(t);
		break;
	case IR_BITAND: case IR_BITOR: case IR_BITXOR:
		ok = ir_is_int(t) || ir_is_bool(t);
		break;
	case IR_SHL: case IR_SHR:
		ok = ir_is_int(t);
		break;
	case IR_EQ: case IR_NE:
		ok = true;
		break;
	default:   /* AND, OR */
		ok = ir_is_bool(t);
		break;
	}
	if (!ok)
		ICE("%s of %s operands", op, ir_type_str(t));
	IrExpr *e = node(k, is_cmp(k) ? ir_type(TY_BOOL, t.lanes) : t);
	e->a = a;
	e->b = b;
	return e;
}

IrExpr *
ir_unop(IrExprKind k, IrExpr *a)
{
	need(a, "unary operator");
	IrType t = a->type;
	bool ok = k == IR_NOT ? ir_is_bool(t)
		: k == IR_NEG ? ir_is_int(t) || ir_is_float(t)
		: k == IR_BITNOT ? ir_is_int(t) : false;
	if (!ok)
		ICE("ir_unop %s of %s", (unsigned)k < IR_EXPR_COUNT ?
		    ir_expr_names[k] : "?", ir_type_str(t));
	IrExpr *e = node(k, t);
	e->a = a;
	return e;
}

IrExpr *
ir_select(IrExpr *c, IrExpr *a, IrExpr *b)
{
	need(c, "select");
	need(a, "select");
	need(b, "select");
	if (!ir_type_eq(a->type, b->type))
		ICE("select between %s and %s", ir_type_str(a->type),
		    ir_type_str(b->type));
	if (!ir_is_bool(c->type) || c->type.lanes != a->type.lanes)
		ICE("select condition of type %s for %s values",
		    ir_type_str(c->type), ir_type_str(a->type));
	IrExpr *e = node(IR_SELECT, a->type);
	e->a = c;
	e->b = a;
	e->c = b;
	return e;
}

IrExpr *
ir_cast(IrType t, IrExpr *a)
{
	need(a, "cast");
	if (t.lanes != a->type.lanes)
		ICE("cast of %s to %s", ir_type_str(a->type), ir_type_str(t));
	ir_type(t.code, t.lanes);
	IrExpr *e = node(IR_CAST, t);
	e->a = a;
	return e;
}

/* Each index is an integer with 1 or `lanes` lanes. */
static void
check_access(const char *what, Buffer *b, IrExpr **idx, int nidx,
    IrExpr *pred, int lanes)
{
	if (!b)
		ICE("%s without a buffer", what);
	if (nidx != b->ndims && !(b->flat && nidx == 1) && !(b->ndims == 0 && nidx <= 1))
		ICE("%s of '%s' (%d dimensions) with %d indices", what, b->name,
		    b->ndims, nidx);
	for (int i = 0; i < nidx; i++) {
		need(idx[i], what);
		IrType t = idx[i]->type;
		if (!ir_is_int(t) || (t.lanes != 1 && t.lanes != lanes))
			ICE("%s of '%s' with an index of type %s (%d lanes)", what,
			    b->name, ir_type_str(t), lanes);
	}
	if (pred && (!ir_is_bool(pred->type) || pred->type.lanes != lanes))
		ICE("%s of '%s' with a predicate of type %s (%d lanes)", what,
		    b->name, ir_type_str(pred->type), lanes);
}

static IrExpr **
copy_exprs(IrExpr **v, int n)
{
	IrExpr **c = arena_alloc(ar(), (n ? n : 1) * sizeof *c);
	if (n)
		memcpy(c, v, n * sizeof *c);
	return c;
}

IrExpr *
ir_load(Buffer *b, IrExpr **idx, int nidx, IrExpr *pred, int lanes)
{
	check_access("load", b, idx, nidx, pred, lanes);
	IrExpr *e = node(IR_LOAD, ir_type(b->elem, lanes));
	e->a = pred;
	e->load.buf = b;
	e->load.idx = copy_exprs(idx, nidx);
	e->load.nidx = nidx;
	return e;
}

IrExpr *
ir_ramp(IrExpr *base, IrExpr *stride, int lanes)
{
	need(base, "ramp");
	need(stride, "ramp");
	if (lanes < 2 || base->type.lanes != 1 ||
	    !ir_type_eq(base->type, stride->type) ||
	    !(ir_is_int(base->type) || ir_is_float(base->type)))
		ICE("ramp(%s, %s, %d)", ir_type_str(base->type),
		    ir_type_str(stride->type), lanes);
	IrExpr *e = node(IR_RAMP, ir_with_lanes(base->type, lanes));
	e->a = base;
	e->b = stride;
	return e;
}

IrExpr *
ir_broadcast(IrExpr *a, int lanes)
{
	need(a, "broadcast");
	if (lanes < 1 || a->type.lanes != 1)
		ICE("broadcast of %s to %d lanes", ir_type_str(a->type), lanes);
	if (lanes == 1)
		return a;
	IrExpr *e = node(IR_BROADCAST, ir_with_lanes(a->type, lanes));
	e->a = a;
	return e;
}

static IrExpr *
call(IrCallKind ck, Builtin bi, const char *name, IrType t, IrExpr **args,
    int nargs)
{
	ir_type(t.code, t.lanes);
	for (int i = 0; i < nargs; i++)
		need(args[i], name);
	IrExpr *e = node(IR_CALL, t);
	e->call.ck = ck;
	e->call.builtin = bi;
	e->call.name = name;
	e->call.args = copy_exprs(args, nargs);
	e->call.nargs = nargs;
	return e;
}

IrExpr *
ir_call_builtin(Builtin bi, IrType t, IrExpr **args, int nargs)
{
	if (bi <= BI_NONE || bi >= BI_COUNT)
		ICE("call of builtin %d", (int)bi);
	for (int i = 0; i < nargs; i++)
		if (args[i] && args[i]->type.lanes != t.lanes)
			ICE("%s: argument of type %s for a %s result",
			    ir_builtin_name(bi), ir_type_str(args[i]->type),
			    ir_type_str(t));
	return call(CALL_BUILTIN, bi, ir_builtin_name(bi), t, args, nargs);
}

IrExpr *
ir_call_intrinsic(const char *name, IrType t, IrExpr **args, int nargs)
{
	if (!name)
		ICE("intrinsic call without a name");
	return call(CALL_INTRINSIC, BI_NONE, name, t, args, nargs);
}

IrExpr *
ir_call_intrinsic_like(IrExpr *e, IrExpr **args)
{
	if (e->kind != IR_CALL || e->call.ck != CALL_INTRINSIC)
		ICE("ir_call_intrinsic_like of a %s", ir_expr_names[e->kind]);
	IrExpr *r = call(CALL_INTRINSIC, BI_NONE, e->call.name, e->type, args, e->call.nargs);
	r->call.tz = e->call.tz;
	r->loc = e->loc;
	return r;
}

/* slot[i]: the field of f that argument i of an fma_outer call with L
 * taps holds (ir.h's order). */
static void
fma_slots(IrFmaArgs *f, int L, IrExpr ***slot)
{
	IrExpr **s[15] = { &f->mr, &f->nr, &f->k, &f->c, &f->csi, &f->csj, &f->a, &f->asi,
	    &f->ask, &f->b, &f->bsk, &f->bsj, &f->first, &f->MR, &f->NR };
	int at[15] = { 0, 1, 2 + L, 3 + L, 4 + L, 5 + L, 6 + L, 7 + L, 8 + 2 * L, 9 + 2 * L,
	    10 + 3 * L, 11 + 3 * L, 12 + 3 * L, 13 + 3 * L, 14 + 3 * L };
	for (int i = 0; i < 15; i++)
		slot[at[i]] = s[i];
	for (int t = 0; t < L; t++) {
		slot[2 + t] = &f->tap[t];
		slot[8 + L + t] = &f->tap_as[t];
		slot[10 + 2 * L + t] = &f->tap_bs[t];
	}
}

bool
ir_fma_args(const IrExpr *e, IrFmaArgs *f)
{
	memset(f, 0, sizeof *f);
	if (!e || e->kind != IR_CALL || e->call.ck != CALL_INTRINSIC ||
	    !ir_fma_outer_lanes(e->call.name) || e->call.nargs < FMA_OUTER_NARGS ||
	    (e->call.nargs - FMA_OUTER_NARGS) % 3 != 0 ||
	    (e->call.nargs - FMA_OUTER_NARGS) / 3 > FMA_MAX_TAPS)
		return false;
	IrExpr **slot[FMA_OUTER_NARGS + 3 * FMA_MAX_TAPS];
	f->ntaps = (e->call.nargs - FMA_OUTER_NARGS) / 3;
	fma_slots(f, f->ntaps, slot);
	for (int i = 0; i < e->call.nargs; i++)
		*slot[i] = e->call.args[i];
	return true;
}

IrExpr *
ir_fma_call_like(const IrExpr *e, const IrFmaArgs *f)
{
	IrFmaArgs g = *f;
	IrExpr **slot[FMA_OUTER_NARGS + 3 * FMA_MAX_TAPS];
	int n = FMA_OUTER_NARGS + 3 * g.ntaps;
	fma_slots(&g, g.ntaps, slot);
	IrExpr **args = arena_alloc(ir_arena, (size_t)n * sizeof *args);
	for (int i = 0; i < n; i++)
		args[i] = *slot[i];
	IrExpr *r = call(CALL_INTRINSIC, BI_NONE, e->call.name, e->type, args, n);
	r->call.tz = e->call.tz;
	r->loc = e->loc;
	return r;
}

int
ir_fma_outer_lanes(const char *emit)
{
	if (!emit)
		return 0;
	if (!strcmp(emit, "fma_outer"))
		return 8;
	if (!strcmp(emit, "fma_outer_zmm"))
		return 16;
	/* the integer and bf16 micro-kernels (target/llvm/intrin_dot.c) take
	 * the same call: their 32-bit lanes */
	if (!strcmp(emit, "i8_madd") || !strcmp(emit, "i8_madd_a16") || !strcmp(emit, "i8_vnni") ||
	    !strcmp(emit, "bf16_widen"))
		return 8;
	if (!strcmp(emit, "i8_vnni_zmm") || !strcmp(emit, "bf16_dp_zmm"))
		return 16;
	/* AMX (target/llvm/intrin_amx.c): tiles of 16 32-bit columns */
	if (!strcmp(emit, "i8_amx") || !strcmp(emit, "bf16_amx"))
		return 16;
	return 0;
}

IrExpr *
ir_let(Var *v, IrExpr *value, IrExpr *body)
{
	need(value, "let");
	need(body, "let");
	if (!v || !ir_type_eq(v->type, value->type))
		ICE("let of a %s value", ir_type_str(value->type));
	IrExpr *e = node(IR_LET, body->type);
	e->var = v;
	e->a = value;
	e->b = body;
	return e;
}

IrExpr *ir_add(IrExpr *a, IrExpr *b) { return ir_binop(IR_ADD, a, b); }
IrExpr *ir_sub(IrExpr *a, IrExpr *b) { return ir_binop(IR_SUB, a, b); }
IrExpr *ir_mul(IrExpr *a, IrExpr *b) { return ir_binop(IR_MUL, a, b); }
IrExpr *ir_div(IrExpr *a, IrExpr *b) { return ir_binop(IR_DIV, a, b); }
IrExpr *ir_mod(IrExpr *a, IrExpr *b) { return ir_binop(IR_MOD, a, b); }
IrExpr *ir_min(IrExpr *a, IrExpr *b) { return ir_binop(IR_MIN, a, b); }
IrExpr *ir_max(IrExpr *a, IrExpr *b) { return ir_binop(IR_MAX, a, b); }

/* ---- statements ----------------------------------------------------- */

static IrStmt *
snode(IrStmtKind k)
{
	IrStmt *s = arena_alloc(ar(), sizeof *s);
	s->kind = k;
	return s;
}

static void
need_index(IrExpr *e, const char *what)
{
	need(e, what);
	if (!ir_is_int(e->type) || e->type.lanes != 1)
		ICE("%s of type %s", what, ir_type_str(e->type));
}

IrStmt *
ir_for(Var *v, IrExpr *min, IrExpr *extent, ForKind fk, IrStmt *body)
{
	if (!v || !ir_is_int(v->type) || v->type.lanes != 1)
		ICE("loop over a non-integer variable");
	need_index(min, "loop minimum");
	need_index(extent, "loop extent");
	if (!ir_type_eq(min->type, v->type) || !ir_type_eq(extent->type, v->type))
		ICE("loop '%s' of type %s with bounds of types %s, %s", v->name,
		    ir_type_str(v->type), ir_type_str(min->type),
		    ir_type_str(extent->type));
	if (!body)
		ICE("loop '%s' without a body", v->name);
	IrStmt *s = snode(IS_FOR);
	s->loop.var = v;
	s->loop.min = min;
	s->loop.extent = extent;
	s->loop.fk = fk;
	s->loop.body = body;
	return s;
}

IrStmt *
ir_for_like(IrStmt *like, IrExpr *min, IrExpr *extent, IrStmt *body)
{
	IrStmt *r = ir_for(like->loop.var, min, extent, like->loop.fk, body);
	r->loop.gpu_dim = like->loop.gpu_dim;
	r->loop.partition = like->loop.partition;
	r->loc = like->loc;
	return r;
}

IrStmt *
ir_let_stmt(Var *v, IrExpr *value, IrStmt *body)
{
	need(value, "let");
	if (!v || !ir_type_eq(v->type, value->type))
		ICE("let of a %s value", ir_type_str(value->type));
	if (!body)
		ICE("let '%s' without a body", v->name);
	IrStmt *s = snode(IS_LET);
	s->let.var = v;
	s->let.value = value;
	s->let.body = body;
	return s;
}

IrStmt *
ir_store(Buffer *b, IrExpr **idx, int nidx, IrExpr *value, IrExpr *pred)
{
	need(value, "store");
	check_access("store", b, idx, nidx, pred, value->type.lanes);
	if (value->type.code != b->elem)
		ICE("store of %s into %s buffer '%s'", ir_type_str(value->type),
		    ir_type_str(ir_scalar(b->elem)), b->name);
	IrStmt *s = snode(IS_STORE);
	s->store.buf = b;
	s->store.idx = copy_exprs(idx, nidx);
	s->store.nidx = nidx;
	s->store.value = value;
	s->store.pred = pred;
	return s;
}

IrStmt *
ir_allocate(Buffer *b, IrStmt *body)
{
	if (!b || !body)
		ICE("allocate without a buffer or a body");
	for (int d = 0; d < b->ndims; d++)
		need_index(b->extent[d], "buffer extent");
	IrStmt *s = snode(IS_ALLOCATE);
	s->alloc.buf = b;
	s->alloc.body = body;
	return s;
}

IrStmt *
ir_if(IrExpr *cond, IrStmt *then_s, IrStmt *else_s)
{
	need(cond, "if");
	if (!ir_type_eq(cond->type, ir_bool))
		ICE("if condition of type %s", ir_type_str(cond->type));
	if (!then_s)
		ICE("if without a then branch");
	IrStmt *s = snode(IS_IF);
	s->ifs.cond = cond;
	s->ifs.then_s = then_s;
	s->ifs.else_s = else_s;
	return s;
}

IrStmt *
ir_block(IrStmt **stmts, int n)
{
	int count = 0;
	for (int i = 0; i < n; i++)
		if (stmts[i])
			count += stmts[i]->kind == IS_BLOCK ? stmts[i]->block.n : 1;
	if (count == 0)
		return NULL;
	if (count == 1)
		for (int i = 0; i < n; i++)
			if (stmts[i] && stmts[i]->kind != IS_BLOCK)
				return stmts[i];
	IrStmt *s = snode(IS_BLOCK);
	s->block.stmts = arena_alloc(ar(), count * sizeof *s->block.stmts);
	for (int i = 0; i < n; i++) {
		IrStmt *c = stmts[i];
		if (!c)
			continue;
		if (c->kind == IS_BLOCK)
			for (int j = 0; j < c->block.n; j++)
				s->block.stmts[s->block.n++] = c->block.stmts[j];
		else
			s->block.stmts[s->block.n++] = c;
	}
	return s;
}

IrStmt *
ir_seq(IrStmt *a, IrStmt *b)
{
	IrStmt *v[2] = {a, b};
	return ir_block(v, 2);
}

IrStmt *
ir_evaluate(IrExpr *e)
{
	need(e, "evaluate");
	IrStmt *s = snode(IS_EVALUATE);
	s->eval.value = e;
	return s;
}

IrStmt *
ir_assert(IrExpr *cond, int code, const char *msg)
{
	need(cond, "assert");
	if (!ir_type_eq(cond->type, ir_bool))
		ICE("assert condition of type %s", ir_type_str(cond->type));
	IrStmt *s = snode(IS_ASSERT);
	s->assrt.cond = cond;
	s->assrt.code = code;
	s->assrt.msg = msg ? msg : "";
	return s;
}

IrStmt *
ir_produce(const char *name, bool update, IrStmt *body)
{
	if (!body)
		ICE("produce '%s' without a body", name ? name : "?");
	IrStmt *s = snode(IS_PRODUCE);
	s->produce.name = name;
	s->produce.update = update;
	s->produce.body = body;
	return s;
}

/* ---- queries -------------------------------------------------------- */

bool
ir_is_const(IrExpr *e, int64_t *v)
{
	if (!e || e->kind != IR_INT)
		return false;
	if (v)
		*v = e->ival;
	return true;
}

static bool
exprs_equal(IrExpr **a, IrExpr **b, int n)
{
	for (int i = 0; i < n; i++)
		if (!ir_expr_equal(a[i], b[i]))
			return false;
	return true;
}

bool
ir_expr_equal(IrExpr *a, IrExpr *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || !ir_type_eq(a->type, b->type))
		return false;
	switch (a->kind) {
	case IR_INT:
		return a->ival == b->ival;
	case IR_FLOAT:
		return memcmp(&a->fval, &b->fval, sizeof a->fval) == 0;
	case IR_VAR:
		return a->var == b->var;
	case IR_LET:
		if (a->var != b->var)
			return false;
		break;
	case IR_LOAD:
		if (a->load.buf != b->load.buf || a->load.nidx != b->load.nidx ||
		    !exprs_equal(a->load.idx, b->load.idx, a->load.nidx))
			return false;
		break;
	case IR_CALL:
		if (a->call.ck != b->call.ck || a->call.builtin != b->call.builtin ||
		    strcmp(a->call.name, b->call.name) != 0 ||
		    a->call.nargs != b->call.nargs ||
		    !exprs_equal(a->call.args, b->call.args, a->call.nargs))
			return false;
		break;
	default:
		break;
	}
	return ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b) &&
	    ir_expr_equal(a->c, b->c);
}

int
ir_size_checks(IrStmt *body)
{
	int k = 0;
	if (!body || body->kind != IS_BLOCK)
		return 0;
	for (int i = 0; i < body->block.n && body->block.stmts[i]->kind == IS_ASSERT; i++)
		if (body->block.stmts[i]->assrt.sizes)
			k = i + 1;
	return k;
}
