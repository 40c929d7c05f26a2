/* ir.h: the loop-nest IR that lowering produces and every target consumes.
 *
 * A lowered kernel (IrFunc) is a statement tree: For loops with a kind
 * (serial, parallel, vectorized, unrolled, GPU block/thread, vthread), Let,
 * Store, Allocate with a memory scope, If, Block, Evaluate, Assert and
 * Produce markers; over typed expressions that include vectors (Ramp,
 * Broadcast) and calls (math builtins, intrinsics).  Node kinds are listed
 * once in ir.def.  Nodes are immutable once built: passes return new nodes
 * and share unchanged ones (IrMutator below).  All nodes live in ir_arena.
 *
 * Loads and stores index buffers with one index per dimension until the
 * flatten pass rewrites them to a single element offset (nidx == 1, and the
 * buffer's `flat` flag set).  Integer division and modulo round toward
 * negative infinity (% is never negative), as in the language.
 */
#ifndef TXC_IR_H
#define TXC_IR_H

#include <stdio.h>

#include "lang/ast.h"

typedef enum {
#define IR_EXPR(K, s) IR_##K,
#define IR_STMT(K, s)
#include "ir.def"
#undef IR_EXPR
#undef IR_STMT
	IR_EXPR_COUNT
} IrExprKind;

typedef enum {
#define IR_EXPR(K, s)
#define IR_STMT(K, s) IS_##K,
#include "ir.def"
#undef IR_EXPR
#undef IR_STMT
	IR_STMT_COUNT
} IrStmtKind;

extern const char *const ir_expr_names[IR_EXPR_COUNT];
extern const char *const ir_stmt_names[IR_STMT_COUNT];

/* A scalar type (lang/ast.h's ScalarType, never a literal type) with a
 * vector width; lanes == 1 is a scalar. */
typedef struct {
	ScalarType code;
	int lanes;
} IrType;

IrType ir_type(ScalarType code, int lanes);
IrType ir_scalar(ScalarType code);           /* lanes 1 */
IrType ir_with_lanes(IrType t, int lanes);
bool ir_type_eq(IrType a, IrType b);
extern const IrType ir_i64, ir_i32, ir_bool, ir_f32, ir_f64;
int ir_bits(ScalarType t);                   /* 1 for bool, 8..64 */
bool ir_is_int(IrType t);                    /* i8..u64 (not bool) */
bool ir_is_uint(IrType t);                   /* u8..u64 */
bool ir_is_float(IrType t);                  /* f16, bf16, f32, f64 */
/* bfloat16 (tx.5, TYPES): the top half of an f32.  A value of another type
 * converts to bf16 by rounding to f32 first, then to the nearest bf16
 * (ties to even); NaN stays NaN (quiet, sign kept).  ir_bf16_bits gives
 * the 16 bits, ir_bf16_value the bf16 value as a double. */
uint16_t ir_bf16_bits(double v);
double ir_bf16_value(double v);
bool ir_is_bool(IrType t);
const char *ir_type_str(IrType t);           /* "f32", "f32x8" */
/* v truncated to t's width, sign- or zero-extended (u64: bit pattern). */
int64_t ir_wrap(ScalarType t, int64_t v);
const char *ir_builtin_name(Builtin bi);     /* "exp", "min" ... */

/* A variable: loop counters, lets, size and scalar parameters.  Identity
 * is the pointer; names are for printing (made unique per function). */
typedef struct Var {
	const char *name;
	IrType type;
	int id;
} Var;

typedef enum {
	SCOPE_GLOBAL,   /* heap or caller memory */
	SCOPE_LOCAL,    /* per-thread: stack / registers (GPU: local) */
	SCOPE_SHARED,   /* GPU shared memory */
	SCOPE_VTA_INP,  /* VTA on-chip buffers: activations (int8 rows of 16) */
	SCOPE_VTA_WGT,  /*   weights (int8 16 x 16 tiles) */
	SCOPE_VTA_ACC,  /*   accumulators (int32 rows of 16) */
	SCOPE_FRAGMENT, /* GPU: a warp's tile, a slice per lane in registers
	                 * (cache_write only; target/cuda/gpu_fragment.c) */
} MemScope;
const char *ir_scope_name(MemScope s);

/* A buffer: a tensor argument of the entry point (abi_index >= 0) or a
 * stage's storage allocated by an Allocate statement.  Indices are
 * absolute: the buffer holds [min[d], min[d] + extent[d]) in dimension d
 * (min is 0 for arguments), so a compute_at stage's smaller buffer is
 * indexed with the same coordinates as the full tensor. */
typedef struct Buffer {
	const char *name;
	ScalarType elem;
	int ndims;
	struct IrExpr **min;       /* per dimension */
	struct IrExpr **extent;    /* per dimension */
	struct IrExpr **stride;    /* per dimension, set by flatten (NULL before) */
	MemScope scope;
	int abi_index;             /* >= 0: the entry point's tensor argument */
	bool is_input;             /* read-only argument */
	bool flat;                 /* accesses use one flat offset */
	Tensor *tensor;            /* the AST tensor it stores, if any */
	bool double_buffer;        /* double_buffer: two halves (double_buffer.c) */
	Loc double_buffer_loc;     /* the primitive */
	int pipeline;              /* pipeline(S): S slots, async copies (0: none) */
	Loc pipeline_loc;          /* the primitive */
	/* pipeline(S, defer = D): the wgmma calls that read it keep D groups
	 * in flight (target/cuda/gpu_wgmma.c), so its fills run S - 1 - D
	 * iterations ahead (double_buffer.c); 0: none */
	int pipeline_defer;
	/* pipeline(S, producer = warpgroup): its TMA loads issued by a
	 * warpgroup of their own, slots released on "empty" mbarriers
	 * (target/cuda/gpu_wspec.c); at producer_loc */
	bool pipeline_producer;
	Loc producer_loc;
	Loc scope_loc;             /* the primitive that chose its scope, if any */
	/* swizzle(): requested at swizzle_loc; flatten.c checks it and sets
	 * swizzle_row, the row in elements whose 16-byte pieces are permuted
	 * (0: plain layout; gpu_swizzle.c applies it to every access) */
	bool swizzle;
	Loc swizzle_loc;
	int64_t swizzle_row;
	/* reorder_storage(): the dimensions in memory, outermost first
	 * (storage_order[0] the slowest; NULL: row-major, the last dimension
	 * contiguous); flatten.c's strides follow it */
	int *storage_order;
	Loc storage_loc;
	/* storage_align(): the stride of dimension align_dim is made
	 * align_factor * n + align_offset elements by padding the dimension
	 * inside it in memory (flatten.c; align_factor 0: none) */
	int align_dim;
	int64_t align_factor, align_offset;
	Loc align_loc;
	/* tma(): its pipeline's copies are TMA loads where the kernel's
	 * sizes allow them (target/cuda/gpu_tma.c), requested at tma_loc */
	bool tma;
	Loc tma_loc;
	/* the cuda target's wgmma (target/cuda/gpu_wgmma.c): a swizzled tile
	 * of rows wider than 128 bytes stored as panels of 128-byte rows, this
	 * many rows a panel (0: rows as they are) */
	int64_t swizzle_panel_rows;
	/* double_buffer.c: the elements of one slot of a double-buffered or
	 * pipelined buffer, each slot one fill (0: not one) */
	int64_t slot;
	/* storage_fold.c: dimension fold_dim is a ring of `fold` rows (0: not
	 * folded), indexed modulo fold; fold_min and fold_extent are the rows
	 * it stands for, for tools that draw it (txc viz) */
	int fold_dim;
	int64_t fold;
	struct IrExpr *fold_min, *fold_extent;
} Buffer;

/* Builtins, as in lang/ast.h (BI_EXP ...); CALL_INTRINSIC names a
 * target-specific operation (tensorize, barriers, prefetch). */
typedef enum { CALL_BUILTIN, CALL_INTRINSIC } IrCallKind;

/* What a tensorize call computes (lower/tensorize.c builds it), for tools
 * that run the IR rather than emit it (txc viz): over every point of the
 * intrinsic's axes (their extents are the call's first naxes arguments),
 * c = (reset ? 0 : c) + sum of a * b over the axes c does not index, in c's
 * type.  Then come c, a and b, each a load of its tile's first element
 * followed by one stride (in elements of the flat buffer) per index of the
 * intrinsic's access, whose axis is axis[t][d].  reset is the argument
 * that says "start from zero" (fma_outer's first), or -1.  An intrinsic
 * whose rule is a copy (c = a: mma_store, DMA loads) has ntensors 2, one
 * that sets a constant (c = value: mma_fill) has 1; a product, 3. */
enum { IR_TZ_MAXDIMS = 8 };
typedef struct {
	int naxes;
	int ntensors;                        /* 1: c = value, 2: c = a, 3: c += a * b */
	double value;
	int ndims[3];                        /* c, a, b */
	int axis[3][IR_TZ_MAXDIMS];
	int reset;
} IrTensorizeCall;

typedef struct IrExpr IrExpr;
typedef struct IrStmt IrStmt;

struct IrExpr {
	IrExprKind kind;
	IrType type;
	Loc loc;                  /* the .tx source it came from (for -g), or none */
	IrExpr *a, *b, *c;        /* operands: see ir.def for each kind */
	union {
		int64_t ival;         /* IR_INT */
		double fval;          /* IR_FLOAT */
		Var *var;             /* IR_VAR; IR_LET: the bound variable (a value, b body) */
		struct {              /* IR_LOAD: buf[idx]; a is the predicate or NULL */
			Buffer *buf;
			IrExpr **idx;
			int nidx;
		} load;
		struct {              /* IR_CALL */
			IrCallKind ck;
			Builtin builtin;      /* CALL_BUILTIN */
			const char *name;     /* printed name; intrinsic name */
			IrExpr **args;
			int nargs;
			const IrTensorizeCall *tz;   /* a tensorize call's meaning, or NULL */
		} call;
	};
};

typedef enum {
	FOR_SERIAL,
	FOR_PARALLEL,
	FOR_VECTORIZED,
	FOR_UNROLLED,
	FOR_GPU_BLOCK,     /* gpu_dim 0..2 = x, y, z */
	FOR_GPU_THREAD,
	FOR_VTHREAD,
} ForKind;
const char *ir_for_kind_name(ForKind k);

struct IrStmt {
	IrStmtKind kind;
	Loc loc;
	union {
		struct {            /* IS_FOR */
			Var *var;
			IrExpr *min, *extent;
			ForKind fk;
			int gpu_dim;
			bool partition;   /* partition.c solves the selects inside too */
			IrStmt *body;
		} loop;
		struct {            /* IS_LET */
			Var *var;
			IrExpr *value;
			IrStmt *body;
		} let;
		struct {            /* IS_STORE */
			Buffer *buf;
			IrExpr **idx;
			int nidx;
			IrExpr *value;
			IrExpr *pred;       /* NULL: unconditional */
		} store;
		struct {            /* IS_ALLOCATE: extents are buf->extent, evaluated here */
			Buffer *buf;
			IrStmt *body;
		} alloc;
		struct {            /* IS_IF */
			IrExpr *cond;
			IrStmt *then_s, *else_s;
		} ifs;
		struct {            /* IS_BLOCK */
			IrStmt **stmts;
			int n;
		} block;
		struct {            /* IS_EVALUATE */
			IrExpr *value;
		} eval;
		struct {            /* IS_ASSERT: entry-point checks */
			IrExpr *cond;
			const char *msg;    /* the caller reads it through the error API */
			int code;           /* the entry point's return value */
			bool sizes;         /* sizecheck.c: guards the size arithmetic */
		} assrt;
		struct {            /* IS_PRODUCE */
			const char *name;   /* the stage */
			bool update;        /* the update (reduction) part of a stage */
			bool prefetch;      /* double_buffer: the next iteration's copy, into
			                       the half the current one does not read */
			bool async;         /* pipeline: its copies may be asynchronous,
			                       complete at the next ASYNC_WAIT (double_buffer.c) */
			IrStmt *body;
		} produce;
	};
};

/* A lowered kernel: the entry point's parameters and its body. */
typedef struct {
	const char *name;
	Kernel *kernel;            /* the AST it came from */
	Program *prog;             /* its program (intrinsic tables: target/vta) */
	Var **params; int nparams; /* size and scalar parameters, in kernel order */
	Buffer **args; int nargs;  /* tensor arguments, in declaration order */
	/* constant tensors (tx.5 CONSTANTS): read-only data the target puts
	 * in the object, their bytes in tensor->cdata */
	Buffer **consts; int nconsts;
	IrStmt *body;
} IrFunc;

/* ---- ir.c: constructors.  They check their invariants (operand types,
 * lanes) and ICE on a violation; they never fold (simplify.c does).
 * Integer immediates are stored wrapped to their type (ir_wrap).
 * Statement bodies are never NULL; a NULL statement means "nothing" and
 * appears only where a pass returns one (ir_block drops it, the default
 * mutator removes a loop, let, allocate or produce whose body became
 * NULL, and an if whose branches both did).                             */
extern Arena *ir_arena;   /* created on first use */
Var *ir_new_var(const char *name, IrType type);
Buffer *ir_new_buffer(const char *name, ScalarType elem, int ndims);

IrExpr *ir_int(IrType t, int64_t v);
IrExpr *ir_i64c(int64_t v);              /* ir_int(ir_i64, v) */
IrExpr *ir_float(IrType t, double v);
/* The constant v of any int, bool or float type, broadcast if a vector. */
IrExpr *ir_make_const(IrType t, int64_t v);
IrExpr *ir_bool_const(bool v);
IrExpr *ir_var(Var *v);
IrExpr *ir_binop(IrExprKind k, IrExpr *a, IrExpr *b);  /* ADD..OR: same types */
IrExpr *ir_unop(IrExprKind k, IrExpr *a);              /* NOT, NEG, BITNOT */
IrExpr *ir_select(IrExpr *c, IrExpr *a, IrExpr *b);
IrExpr *ir_cast(IrType t, IrExpr *a);
IrExpr *ir_load(Buffer *b, IrExpr **idx, int nidx, IrExpr *pred, int lanes);
IrExpr *ir_ramp(IrExpr *base, IrExpr *stride, int lanes);
IrExpr *ir_broadcast(IrExpr *a, int lanes);   /* lanes 1: a itself */
IrExpr *ir_call_builtin(Builtin bi, IrType t, IrExpr **args, int nargs);
IrExpr *ir_call_intrinsic(const char *name, IrType t, IrExpr **args, int nargs);
/* The intrinsic call e with new arguments (its name, type, location and
 * meaning kept). */
IrExpr *ir_call_intrinsic_like(IrExpr *e, IrExpr **args);
/* The arguments of the "fma_outer" intrinsic call (lower/tensorize.c builds
 * it, target/llvm/intrin_cpu.c and target/c/cexpr.c emit it): mr, nr, K,
 * c, cs_i, cs_j, a, as_i, as_k, b, bs_k, bs_j, first, then the block's
 * constant full shape MR, NR, which only the LLVM emitter reads. */
enum { FMA_OUTER_ARGS = 13, FMA_OUTER_NARGS = FMA_OUTER_ARGS + 2 };
/* An f32 fma_outer intrinsic may sum over up to three reduction axes,
 * c[i, j] = sum(r < R, s < S, k < K) a[i, r, s, k] * b[r, s, k, j] (a
 * convolution's taps): the outer ones (taps) come in tensorize's order,
 * each extent before K, each stride of a before as_k and of b before
 * bs_k, so that a call has FMA_OUTER_NARGS + 3 arguments per tap.
 * ir_fma_args reads either form by meaning (false: not such a call). */
enum { FMA_MAX_TAPS = 2 };
typedef struct {
	IrExpr *mr, *nr, *k, *c, *csi, *csj, *a, *asi, *ask, *b, *bsk, *bsj, *first, *MR, *NR;
	int ntaps;
	IrExpr *tap[FMA_MAX_TAPS], *tap_as[FMA_MAX_TAPS], *tap_bs[FMA_MAX_TAPS];
} IrFmaArgs;
bool ir_fma_args(const IrExpr *e, IrFmaArgs *f);
/* The call e with its arguments from f (its name, type, location and
 * meaning kept). */
IrExpr *ir_fma_call_like(const IrExpr *e, const IrFmaArgs *f);
/* The f32 lanes of one vector of an fma_outer emitter: 8 for
 * "fma_outer" (AVX2), 16 for "fma_outer_zmm" (AVX-512); likewise the
 * 32-bit lanes of the i8 and bf16 ones, which take the same call
 * ("i8_madd", "i8_vnni", "bf16_widen": 8; "i8_vnni_zmm", "bf16_dp_zmm",
 * and the AMX tiles' "i8_amx", "bf16_amx": 16); 0 for any other name.  Every pass that treats them alike asks
 * this. */
int ir_fma_outer_lanes(const char *emit);
IrExpr *ir_let(Var *v, IrExpr *value, IrExpr *body);
/* Shorthands for index arithmetic (no folding). */
IrExpr *ir_add(IrExpr *a, IrExpr *b);
IrExpr *ir_sub(IrExpr *a, IrExpr *b);
IrExpr *ir_mul(IrExpr *a, IrExpr *b);
IrExpr *ir_div(IrExpr *a, IrExpr *b);
IrExpr *ir_mod(IrExpr *a, IrExpr *b);
IrExpr *ir_min(IrExpr *a, IrExpr *b);
IrExpr *ir_max(IrExpr *a, IrExpr *b);

IrStmt *ir_for(Var *v, IrExpr *min, IrExpr *extent, ForKind fk, IrStmt *body);
/* A loop like `like` (its variable, kind, GPU dimension, partition mark
 * and location) over new bounds and body. */
IrStmt *ir_for_like(IrStmt *like, IrExpr *min, IrExpr *extent, IrStmt *body);
IrStmt *ir_let_stmt(Var *v, IrExpr *value, IrStmt *body);
IrStmt *ir_store(Buffer *b, IrExpr **idx, int nidx, IrExpr *value, IrExpr *pred);
IrStmt *ir_allocate(Buffer *b, IrStmt *body);
IrStmt *ir_if(IrExpr *cond, IrStmt *then_s, IrStmt *else_s);
IrStmt *ir_block(IrStmt **stmts, int n);   /* flattens nested blocks, drops NULLs */
IrStmt *ir_seq(IrStmt *a, IrStmt *b);      /* a; b (either may be NULL) */
IrStmt *ir_evaluate(IrExpr *e);
IrStmt *ir_assert(IrExpr *cond, int code, const char *msg);
/* How many leading asserts of an entry point's body check its sizes (signs,
 * -D values, no overflow: lower/sizecheck.c marks them): the checks every
 * entry point, plain or DLPack, makes before any other. */
int ir_size_checks(IrStmt *body);
IrStmt *ir_produce(const char *name, bool update, IrStmt *body);

bool ir_is_const(IrExpr *e, int64_t *v);   /* an integer immediate? */
bool ir_expr_equal(IrExpr *a, IrExpr *b);   /* structural equality */

/* ---- irvisit.c: visitor and mutator tables (NULL entry = default).
 * A pass embeds IrMutator as the first member of its state.  The default
 * mutation rebuilds a node only when a child changed, else returns it.   */
typedef struct IrMutator IrMutator;
struct IrMutator {
	IrExpr *(*expr[IR_EXPR_COUNT])(IrMutator *m, IrExpr *e);
	IrStmt *(*stmt[IR_STMT_COUNT])(IrMutator *m, IrStmt *s);
};
IrExpr *ir_mutate_expr(IrMutator *m, IrExpr *e);
IrStmt *ir_mutate_stmt(IrMutator *m, IrStmt *s);
IrExpr *ir_mutate_expr_children(IrMutator *m, IrExpr *e);
IrStmt *ir_mutate_stmt_children(IrMutator *m, IrStmt *s);

typedef struct IrVisitor IrVisitor;
struct IrVisitor {
	void (*expr[IR_EXPR_COUNT])(IrVisitor *v, IrExpr *e);
	void (*stmt[IR_STMT_COUNT])(IrVisitor *v, IrStmt *s);
};
void ir_visit_expr(IrVisitor *v, IrExpr *e);
void ir_visit_stmt(IrVisitor *v, IrStmt *s);
void ir_visit_expr_children(IrVisitor *v, IrExpr *e);
void ir_visit_stmt_children(IrVisitor *v, IrStmt *s);

/* Replaces every use of a variable by an expression. */
IrExpr *ir_substitute(IrExpr *e, Var *v, IrExpr *value);
IrStmt *ir_substitute_stmt(IrStmt *s, Var *v, IrExpr *value);
bool ir_uses_var(IrExpr *e, Var *v);
bool ir_has_loop(IrStmt *s, ForKind fk);     /* a For of kind fk in s */
bool ir_stmt_uses_var(IrStmt *s, Var *v);

/* ---- irprint.c: reads like TVM's lowered code:
 *     parallel (io, 0, ceil(M / 8)) {
 *       for (ii, 0, 8) {
 *         C[io*8 + ii, j] = 0f
 */
void ir_print_func(FILE *fp, IrFunc *f);
void ir_print_stmt(FILE *fp, IrStmt *s, int indent);
void ir_print_expr(FILE *fp, IrExpr *e);
char *ir_expr_str(IrExpr *e);              /* in ir_arena */

/* ---- fold.c: constant folding of one operation on immediates, with the
 * target's semantics (wrapping integers, floor / and %); NULL when the
 * operands are not immediates or the result is not defined. */
IrExpr *fold_binop(IrExprKind k, IrExpr *a, IrExpr *b);
IrExpr *fold_unop(IrExprKind k, IrExpr *a);
IrExpr *fold_cast(IrType t, IrExpr *a);
int64_t fold_floordiv(int64_t a, int64_t b);   /* b == 0: 0 */
int64_t fold_floormod(int64_t a, int64_t b);   /* never negative; b == 0: 0 */

/* ---- simplify.c: constant folding, canonical linear forms, min/max and
 * div/mod by constants with known bounds, removal of guards proved true. */
typedef struct BoundsScope BoundsScope;   /* see bounds.c */
IrExpr *simplify_expr(IrExpr *e, BoundsScope *scope);
IrStmt *simplify_stmt(IrStmt *s);
/* Whether e is provably true / false for every value in scope. */
bool simplify_prove(IrExpr *e, BoundsScope *scope);

/* ---- bounds.c: interval arithmetic over symbolic expressions (Halide's
 * Bounds.cpp).  A bound is an expression or NULL (unbounded).            */
typedef struct {
	IrExpr *min, *max;         /* inclusive; NULL: -inf / +inf */
} Interval;

struct BoundsScope {
	Var *var;
	Interval iv;
	IrExpr *fact;         /* var NULL: a scalar comparison known to hold here */
	BoundsScope *next;
};
BoundsScope *bounds_push(BoundsScope *s, Var *v, Interval iv);  /* in ir_arena */
/* The interval of a variable (NULL if v is not in scope). */
const Interval *bounds_lookup(BoundsScope *s, Var *v);
/* The values e takes while each variable in scope ranges over its
 * interval (variables not in scope are their own point [v, v]).  The
 * ends are simplified.  Vectors: the bounds over all lanes. */
Interval bounds_of_expr(IrExpr *e, BoundsScope *scope);
/* As bounds_of_expr, but only where cond holds: comparisons of a
 * variable with an expression in cond's conjuncts narrow that variable
 * (`h >= 1 && h <= H` gives h in [max(lo, 1), min(hi, H)]), and a
 * conjunct whose side differs from e by a constant bounds e itself
 * (`h + ry >= 1` gives h + ry - 1 >= 0).                                 */
Interval bounds_of_expr_under(IrExpr *e, IrExpr *cond, BoundsScope *scope);
/* The scope narrowed by cond's conjuncts, as bounds_of_expr_under uses. */
BoundsScope *bounds_refine(BoundsScope *scope, IrExpr *cond);
/* Whether the comparison a k b is a fact of scope (1), its negation is
 * (0), or neither (-1). */
int bounds_known(BoundsScope *scope, IrExprKind k, IrExpr *a, IrExpr *b);
/* Calls fn on every load in e, with the conjunction of the select
 * conditions it is evaluated under (NULL: always) -- for in-bounds checks:
 * bounds_of_expr_under(index, cond, scope) is the index's range.  This
 * makes a contract for backends: a select's branch that contains a load
 * is evaluated only where that branch is taken (branch, or predicate the
 * load), never speculatively.                                           */
typedef void (*BoundsLoadFn)(void *ctx, IrExpr *load, IrExpr *cond);
void bounds_for_each_load(IrExpr *e, IrExpr *cond, BoundsLoadFn fn, void *ctx);
Interval interval_point(IrExpr *e);        /* [e, e] */
Interval interval_union(Interval a, Interval b);
bool interval_is_bounded(Interval a);
/* The range of a type's values (NULL ends for 64-bit and float types). */
Interval bounds_of_type(IrType t);
/* A constant upper bound of e over all values of its variables
 * (min(6, M - io*6) <= 6) where min, max, + and / by constants give one. */
bool bounds_const_max(IrExpr *e, int64_t *out);

/* ---- vectorize.c: FOR_VECTORIZED loops of constant extent become vector
 * code (ramps, broadcasts, predicated loads and stores); a body that
 * cannot be vectorized is unrolled instead, a non-constant extent stays a
 * serial loop.  */
IrStmt *vectorize_loops(IrStmt *s);

/* ---- vthread.c: a loop bound to vthread around a nest of GPU thread loops
 * moves inside the innermost one, unrolled when its extent is a constant
 * (each thread runs its virtual threads' work interleaved); other vthread
 * loops become serial loops. */
IrStmt *vthread_inject(IrStmt *s);

/* ---- unroll.c: FOR_UNROLLED loops of constant extent (up to 64) become
 * copies of their body; others become serial loops.  */
IrStmt *unroll_loops(IrStmt *s);
IrStmt *unroll_loop(IrStmt *loop);          /* one loop, whatever its kind */

/* ---- double_buffer.c: stages marked double_buffer, computed at a serial
 * loop, get two halves filled one iteration ahead, and stages marked
 * pipeline(S) S slots filled S - 1 iterations ahead by `async` produces,
 * each followed by an Evaluate of ASYNC_COMMIT, with an Evaluate of
 * ASYNC_WAIT(S - 2) before the loop and at the end of its body (the copies
 * of the next iteration's slot are complete there; in a loop with a tma()
 * stage, ASYNC_WAIT(S - 2, fill, fills): the fill of the loop it waits for,
 * 0 for the first, and the loop's extent); NULL after a
 * diagnostic (a stage that does not fit the pattern).  Targets without
 * asynchronous copies run async produces as they are and ignore the two
 * intrinsics. */
#define ASYNC_COMMIT "async.commit"
#define ASYNC_WAIT "async.wait"
bool double_buffer_async_is(const IrExpr *e);
IrStmt *double_buffer_stmt(IrStmt *s);

/* ---- hoist.c: loop-invariant index arithmetic moves out of loops into
 * lets (io*8 computed once per io, not once per ii).  */
IrStmt *hoist_invariants(IrStmt *s);

#endif
