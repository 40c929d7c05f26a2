/* ast.h: the abstract syntax tree of a .tx program.
 *
 * The parser builds it (every node carries the source range it came from);
 * sema fills the fields marked "sema:" (types, what each name refers to, the
 * tensors of each kernel) and rejects what is wrong; lower reads the result.
 * All nodes live in the perm arena.  Names are interned (compare with ==).
 *
 *   Program
 *     imports[]            import "file.tx";
 *     kernels[]            kernel NAME(params) { tensor decls; rules; }
 *     schedules[]          schedule KERNEL [as NAME] for TARGET { prims; }
 *                          (a prim may be specialize (cond) { prims })
 */
#ifndef TXC_AST_H
#define TXC_AST_H

#include "lang.h"

/* ---- element types ---------------------------------------------------
 * TY_INT_LIT / TY_FLOAT_LIT are the types of untyped literals: they take
 * the type of the other operand (as Go's untyped constants do).            */
typedef enum {
	TY_ERROR,       /* an expression sema already reported */
	TY_BOOL,
	TY_I8, TY_I16, TY_I32, TY_I64,
	TY_U8, TY_U16, TY_U32, TY_U64,
	TY_F16, TY_BF16, TY_F32, TY_F64,
	TY_INT_LIT, TY_FLOAT_LIT,
	TY_COUNT
} ScalarType;

const char *type_name(ScalarType t);        /* "f32"; literals: "integer literal" */
int type_bits(ScalarType t);                 /* 1 for bool, 8..64 */
bool type_is_int(ScalarType t);              /* signed or unsigned, incl. TY_INT_LIT */
bool type_is_signed(ScalarType t);           /* TY_I*, TY_INT_LIT */
bool type_is_float(ScalarType t);            /* TY_F*, TY_FLOAT_LIT */
/* The type every index, size and axis has. */
#define TY_INDEX TY_I64

/* ---- expressions ----------------------------------------------------- */
typedef enum {
	EXPR_INT,       /* 42, 0x2a: ival */
	EXPR_FLOAT,     /* 1.5, 2e-3: fval */
	EXPR_BOOL,      /* true/false: ival 0/1 */
	EXPR_NAME,      /* a size, scalar parameter or axis: name (sema: ref) */
	EXPR_ACCESS,    /* T[e, ...]: name, args (sema: tensor) */
	EXPR_CALL,      /* f(e, ...): name, args; math builtins (sema: builtin) */
	EXPR_CAST,      /* f32(e): cast_to, args[0] */
	EXPR_UNARY,     /* op a */
	EXPR_BINARY,    /* a op b */
	EXPR_SELECT,    /* c ? a : b: args[0..2] */
	EXPR_REDUCE,    /* sum(k < K, lo <= r < hi) body: reduce */
} ExprKind;

typedef enum {
	/* unary */
	OP_NEG, OP_NOT, OP_BITNOT,
	/* binary, arithmetic */
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
	OP_SHL, OP_SHR, OP_BITAND, OP_BITOR, OP_BITXOR,
	/* binary, comparison (result bool) */
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	/* binary, logic on bool */
	OP_AND, OP_OR,
	OP_COUNT
} Op;
const char *op_spelling(Op op);   /* "+", "&&", "!" ... */

typedef enum {
	RED_SUM, RED_PROD, RED_MAX, RED_MIN,
	RED_ARGMAX, RED_ARGMIN,   /* parsed; sema/argmax.c rewrites them into the others */
} ReduceOp;
const char *reduce_spelling(ReduceOp r);   /* "sum", "prod", "maximum", "minimum" */

/* The math builtins (sema resolves EXPR_CALL names to these). */
typedef enum {
	BI_NONE,
	BI_EXP, BI_LOG, BI_SQRT, BI_RSQRT, BI_TANH, BI_SIN, BI_COS, BI_ERF,
	BI_SIGMOID, BI_ABS, BI_FLOOR, BI_CEIL, BI_ROUND, BI_POW, BI_MIN,
	BI_MAX, BI_CLAMP,
	BI_COUNT
} Builtin;

typedef struct Expr Expr;
typedef struct Tensor Tensor;
typedef struct Kernel Kernel;
typedef struct RedAxis RedAxis;
typedef struct Param Param;

/* What an EXPR_NAME refers to (sema). */
typedef enum {
	REF_NONE,
	REF_SIZE,       /* a size parameter: param */
	REF_SCALAR,     /* a scalar parameter: param */
	REF_PURE_AXIS,  /* the index-th pure axis of the rule being defined */
	REF_RED_AXIS,   /* a reduction axis: red */
} RefKind;

/* One axis of a reduction: `k < K` (lo NULL, meaning 0) or `lo <= k < hi`. */
struct RedAxis {
	Loc loc;
	const char *name;
	Expr *lo;         /* NULL: 0 */
	Expr *hi;         /* exclusive upper bound */
	bool incl;        /* written `k <= N` (hi is then N + 1) */
	int index;        /* sema: position among the rule's reduction axes */
};

typedef struct {
	ReduceOp op;
	RedAxis *axes;
	int naxes;
	Expr *body;
	Expr *where;      /* `where COND`: only the points where it holds, or NULL */
} Reduce;

struct Expr {
	ExprKind kind;
	Loc loc;                /* the whole expression's source range */
	ScalarType type;        /* sema: the value's type (TY_ERROR before) */
	union {
		int64_t ival;       /* EXPR_INT, EXPR_BOOL */
		double fval;        /* EXPR_FLOAT */
		struct {            /* EXPR_NAME */
			const char *name;
			RefKind ref;        /* sema */
			Param *param;       /* sema: REF_SIZE, REF_SCALAR */
			int axis;           /* sema: REF_PURE_AXIS: index into the LHS */
			RedAxis *red;       /* sema: REF_RED_AXIS */
		} id;
		struct {            /* EXPR_ACCESS, EXPR_CALL, EXPR_CAST, EXPR_SELECT */
			const char *name;   /* ACCESS/CALL: the tensor or function */
			Loc name_loc;
			Expr **args;
			int nargs;
			ScalarType cast_to; /* EXPR_CAST */
			/* EXPR_CALL: keys[i] names argument i (`SH = 2`, tx.5
			 * CALLS), or is NULL; keys is NULL when none is named */
			const char **keys;
			Loc *key_locs;
			Tensor *tensor;     /* sema: EXPR_ACCESS */
			Builtin builtin;    /* sema: EXPR_CALL */
		} call;
		struct {            /* EXPR_UNARY (b NULL), EXPR_BINARY */
			Op op;
			Loc op_loc;
			Expr *a, *b;
		} bin;
		Reduce reduce;      /* EXPR_REDUCE */
	};
};

/* ---- kernels ----------------------------------------------------------- */
struct Param {
	Loc loc;
	const char *name;
	bool is_size;         /* `M` (int64 size) vs `alpha: f32` (scalar) */
	ScalarType type;      /* TY_I64 for sizes */
	int index;            /* position in the parameter list */
};

typedef enum { ROLE_IN, ROLE_OUT, ROLE_TEMP } TensorRole;

/* Where the stages of one expanded call came from (sema/calls.c), for the
 * fusion pass (auto/fuse.c), which may schedule them with the callee's own
 * schedule: the callee, the first result's name, and the renaming of the
 * callee's tensors and axes into the caller's names. */
typedef struct CallSite {
	struct Kernel *callee;
	const char *result;
	Loc at;                              /* the call statement */
	const char **tfrom, **tto; int nt;   /* tensors */
	const char **afrom, **ato; int na;   /* axes */
	Expr **psub;                         /* per parameter of the callee, the call's
	                                        value (the caller's terms; a size may
	                                        be a cast of one) */
} CallSite;

/* A compute rule: `NAME[i, j] = expr;` (ndims 0: `NAME = expr;`). */
typedef struct {
	Loc loc;              /* the whole statement */
	const char *name;
	Loc name_loc;
	const char **axes;    /* the pure axes, in order */
	Loc *axis_locs;
	int naxes;
	Expr *value;          /* may be an EXPR_REDUCE (only at the top) */
	Tensor *tensor;       /* sema */
	/* An initial value of a scan (tx.5 SCANS): `s[0, i] = x[0, i];` has an
	 * integer step where the scan axis goes; axes[init_dim] is NULL. */
	bool init;
	int init_dim;
	int64_t init_step;
	Loc init_loc;         /* the step */
	/* An update (tx.5 UPDATES): `for (r < N) h[clamp(x[r], 0, B - 1)] += 1;`
	 * runs after the rule that defines h, over its domain in order.  upd
	 * holds the domain (its axes and where; op and body unused), target
	 * the access h[lhs], value what is stored there: for `+=` the sum
	 * target + upd_rhs, built by the parser.  axes[d] (resolve) is the
	 * pure axis of h's rule that the update keeps at position d, or NULL. */
	bool update;
	Reduce upd;
	Expr *target;
	bool upd_add;         /* written `+=` (upd_rhs: the right side) */
	Expr *upd_rhs;
	/* sema (update.c): the value combines the current one with the rest
	 * by an associative op (upd_op: sum for +=, a + b, prod, max, min):
	 * its steps may run in any order; upd_other is that rest */
	bool upd_assoc;
	ReduceOp upd_op;
	Expr *upd_other;
	/* A tuple reduction (tx.5 TUPLE REDUCTIONS), parsed into its first
	 * output's rule; sema/tuple.c rewrites it before resolve. */
	struct TupleRed *tuple;
	/* sema/tuple.c: the update of output tpos of the tuple reduction tgroup
	 * (its outputs are updated together, in one nest: lower.c) */
	struct TupleRed *tgroup;
	int tpos;
	/* sema/calls.c: a rule copied from a called kernel: the call, and the
	 * name the rule has in the callee (NULL for the caller's own rules) */
	CallSite *site;
	const char *site_name;
} Rule;

/* `m[i], s[i] = reduce(k < N) (V0, V1) combine (a, b), (c, d) -> (E0, E1)
 * identity (I0, I1);`: names/lhs the outputs, vals the values at a point,
 * accs and elems the combiner's parameters (names), comb its results,
 * ident the identities (NULL: none was written). */
typedef struct TupleRed {
	Loc loc;              /* the word reduce */
	int n;                /* outputs */
	const char **names; Loc *name_locs;
	Expr ***lhs; int *nlhs;  /* each output's indices */
	Expr **ranges; int nranges;
	RedAxis *raxes; int nraxes;   /* the ranges taken apart (the parser) */
	Expr *where;          /* `where COND` after the ranges, or NULL */
	bool assoc;           /* `combine associative`: declared associative */
	Loc assoc_loc;
	Tensor **outs;        /* sema: the outputs, in order */
	/* sema: the copies of value i that the outputs' updates hold in place
	 * of the combiner's parameter for it (lower/sched_stages.c: rfactor
	 * puts the partial results there) */
	Expr ***ecopies; int *necopies, *capecopies;
	Expr **vals; int nvals;
	Expr **accs; int naccs;
	Expr **elems; int nelems;
	Expr **comb; int ncomb;
	Expr **ident; int nident;
	Loc comb_loc, ident_loc;
} TupleRed;

/* A tensor: an input, an output, or an intermediate stage.  Intermediates
 * may be declared (`tmp: f32[N];`) or not: an undeclared stage has its
 * element type from its rule and its shape inferred by lowering
 * (shape_inferred, shape NULL). */
struct Tensor {
	Loc loc;              /* the declaration, or the rule if undeclared */
	const char *name;
	TensorRole role;
	ScalarType elem;
	Expr **shape;         /* extents, in size parameters and constants */
	int ndims;
	bool declared;        /* has a declaration statement */
	bool shape_inferred;  /* no declaration: lowering infers the extents */
	Rule *rule;           /* sema: the defining rule (NULL for inputs) */
	int index;            /* sema: position among the kernel's tensors */
	int abi_index;        /* sema: position among ABI tensor arguments, or -1 */
	int stage_index;      /* sema: position in compute order (topological,
	                         ties in source order), -1 for inputs */
	/* sema: a scan (tx.5 SCANS): rule is the update, inits[s] the initial
	 * value of step s (ninits steps); scan_dim the scan axis; scans updated
	 * in the same steps share scan_group (the first one's index). */
	Rule **inits; int ninits;
	int scan_dim;
	int scan_group;
	/* sema: its update definition (tx.5 UPDATES), or NULL */
	Rule *update;
	/* A constant (tx.5 CONSTANTS): `const w: f32[4, 3] = file("w.bin");`
	 * is an input (ROLE_IN) that is no argument of the entry point; its
	 * bytes come from the file cpath (relative to the .tx file) from byte
	 * coffset, or, with cmem (`data("NAME")`), from what a front end
	 * registered in memory under that name (lang/blob.c).  sema/consts.c
	 * loads cdata (cbytes bytes, little-endian elements in row-major
	 * order). */
	bool is_const;
	bool cmem;
	const char *cpath;
	Loc cpath_loc;
	int64_t coffset;
	const unsigned char *cdata;
	size_t cbytes;
};

/* A call of a kernel with several results (tx.5 CALLS):
 * `(m, v) = mean_var(x);`.  A call with one result, `y = softmax(x);`, is
 * parsed as a rule whose value is a call; sema/calls.c expands both into
 * the callee's declarations and rules before resolve. */
typedef struct {
	Loc loc;              /* the whole statement */
	const char *callee;
	Loc callee_loc;
	const char **outs; Loc *out_locs; int nouts;
	Expr **args; int nargs;
	const char **keys;    /* as Expr.call.keys */
	Loc *key_locs;
	Loc args_loc;         /* from '(' to ')' */
} Call;

/* A kernel statement, kept in source order for --format. */
typedef struct {
	Tensor *decl;         /* a declaration, or */
	Rule *rule;           /* a rule, or */
	Call *call;           /* a call with several results (gone after sema) */
} KernelItem;

struct Kernel {
	Loc loc;
	const char *name;
	Loc name_loc;
	Param *params; int nparams;
	KernelItem *items; int nitems;
	/* sema: every tensor, inputs and outputs in declaration order first,
	 * then intermediates; and the stages (tensors with a rule) in compute
	 * order. */
	Tensor **tensors; int ntensors;
	Tensor **stages; int nstages;
	/* An intrinsic declaration (`intrinsic NAME(params) for TARGET emit
	 * "KIND" { body }`, man tx.5 INTRINSICS) is a Kernel whose body declares
	 * the computation a hardware operation performs; these are NULL for a
	 * kernel. */
	const char *intr_target;  /* "cpu", "cuda", "vta" */
	Loc intr_target_loc;
	const char *intr_emit;    /* how a backend emits it: "fma_outer" */
	Loc intr_emit_loc;
	/* sema (calls.c): the kernels it calls (expanded into it); the state
	 * of its expansion (0 not started, 1 under way, 2 done); whether a
	 * call failed (the later passes and its schedules then skip it) */
	struct Kernel **callees; int ncallees;
	int calls_state;
	bool calls_failed;
};

/* ---- schedules --------------------------------------------------------- */
typedef enum {
	ARG_INT,      /* 8 (ival; may be negative) */
	ARG_FLOAT,    /* 0.5 */
	ARG_STRING,   /* "text" (str, without quotes, escapes decoded) */
	ARG_NAME,     /* io (str) */
	ARG_DOTTED,   /* blockIdx.x (str = "blockIdx", str2 = "x") */
	ARG_LIST,     /* [C, D] (list) */
} ArgKind;

typedef struct SchedArg SchedArg;
struct SchedArg {
	ArgKind kind;
	Loc loc;
	const char *key;      /* `tail = exact`: "tail"; NULL when positional */
	int64_t ival;
	double fval;
	const char *str, *str2;
	SchedArg *list; int nlist;
};

/* One primitive: `STAGE.prim(args) -> (outs);`, or a specialization
 * `specialize (cond) { prims }` (prim "specialize", stage NULL, cond and
 * body set): the schedule so far plus body, used when cond holds at run
 * time.  A schedule template may also hold knob declarations
 * `knob NAME in [v, ...];` and compile-time choices `when (cond) { prims }`
 * over its knobs; sema (sema/knobs.c) replaces them by the primitives of
 * one knob point before anything else reads the schedule. */
typedef enum {
	SCHED_PRIM,          /* STAGE.prim(args) -> outs; (or specialize: cond set) */
	SCHED_KNOB,          /* knob NAME in [values]; */
	SCHED_WHEN,          /* when (cond) { body } */
} SchedForm;

typedef struct SchedPrim SchedPrim;
struct SchedPrim {
	Loc loc;              /* the whole statement */
	const char *stage;    /* the tensor it applies to */
	Loc stage_loc;
	const char *prim;     /* "split", "tile", ... (checked by sema) */
	Loc prim_loc;
	int prim_id;          /* sema: index into the primitive table */
	SchedArg *args; int nargs;
	const char **outs; Loc *out_locs; int nouts;
	Expr *cond;           /* specialize: a bool over the kernel's parameters;
	                         when: a bool over the schedule's knobs */
	SchedPrim *body; int nbody;   /* specialize, when: its primitives */
	SchedForm form;
	const char *knob;     /* SCHED_KNOB: the knob's name (args: its values) */
	Loc knob_loc;
};

typedef struct {
	Loc loc;
	const char *kernel;   /* the kernel it schedules */
	Loc kernel_loc;
	const char *name;     /* `as NAME`; NULL when unnamed */
	Loc name_loc;
	const char *target;   /* "cpu", "cuda", "vta" (checked by sema) */
	Loc target_loc;
	SchedPrim *prims; int nprims;
	/* `schedule KERNEL for TARGET = FROM;`: FROM's schedule of the same
	 * name and target, whose statements sema/schedshare.c copies into
	 * prims; NULL for a schedule written out */
	const char *from;
	Loc from_loc;
	int share_state;      /* sema/schedshare.c: 0 to do, 1 doing, 2 done */
	Kernel *k;            /* sema */
	/* sema (knobs.c), for a template (a schedule with knobs or whens): the
	 * statements as written; its knob declarations; the point that
	 * `prims` now holds (an index into each knob's values). */
	SchedPrim *tmpl; int ntmpl;
	SchedPrim **knobs; int nknobs;
	int *point;
	bool generated;       /* made by the schedule generator (auto/), not written */
} Schedule;

typedef struct {
	Loc loc;
	const char *path;     /* as written */
	struct Program *prog; /* the imported program, once loaded (driver) */
} Import;

/* A layout declaration (tx.5 LAYOUTS): `layout conv2d_nchw for cpu { ... }`
 * says that on TARGET a call of KERNEL is computed as the calls of its
 * body, which name KERNEL's own parameters and tensors; sema/layout.c
 * checks it and rewrites the calls. */
typedef struct LayoutDecl {
	Loc loc;
	const char *kernel; Loc kernel_loc;
	const char *target; Loc target_loc;
	KernelItem *items; int nitems;   /* the calls, as written */
	Kernel *k;            /* sema: KERNEL */
	Kernel *check;        /* sema: KERNEL with this body (expanded to check it) */
	int state;            /* sema: 0 unchecked, 1 being checked, 2 good, 3 bad */
} LayoutDecl;

/* A top-level item, kept in source order for --format. */
typedef struct {
	Import *import;
	Kernel *kernel;
	Schedule *schedule;
	Kernel *intrinsic;    /* an intrinsic declaration (Kernel.intr_target set) */
	LayoutDecl *layout;
} Item;

typedef struct Program {
	uint32_t file;
	Item *items; int nitems;
	Import **imports; int nimports;
	Kernel **kernels; int nkernels;
	Schedule **schedules; int nschedules;
	Kernel **intrinsics; int nintrinsics;   /* intrinsic declarations */
	LayoutDecl **layouts; int nlayouts;         /* layout declarations */
} Program;

/* ---- ast.c: constructors (used by the grammar) and small helpers ------- */
Expr *ast_expr(ExprKind kind, Loc loc);
Expr *ast_int(Loc loc, int64_t v);
Expr *ast_float(Loc loc, double v);
Expr *ast_name(Loc loc, const char *name);
Expr *ast_unary(Loc loc, Op op, Expr *a);
Expr *ast_binary(Op op, Loc op_loc, Expr *a, Expr *b);
Expr *ast_select(Expr *c, Expr *a, Expr *b);
Kernel *ast_find_kernel(Program *p, const char *name);
Tensor *ast_find_tensor(Kernel *k, const char *name);

/* ---- astprint.c ---------------------------------------------------------
 * --dump-ast prints the tree with locations; --format prints canonical .tx
 * source whose parse gives the same tree.                                   */
#include <stdio.h>
void ast_dump(FILE *fp, Program *p);
void ast_format(FILE *fp, Program *p);
void ast_format_expr(FILE *fp, Expr *e);
/* A schedule with the primitives of its current knob point (no knobs). */
void ast_format_schedule(FILE *fp, Schedule *s, const char *name);
/* Schedule statements as written, indented by depth (auto/transfer.c). */
void ast_format_prims(FILE *fp, SchedPrim *prims, int n, int depth);

#endif
