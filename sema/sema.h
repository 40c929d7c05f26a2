/* sema.h: the checked program.
 *
 * Takes a parsed Program and fills the "sema:" fields of lang/ast.h (types,
 * what each name refers to, each kernel's tensors and stage order, each
 * schedule primitive's table entry), reporting every error through diag.
 * Lowering may assume a program that passed sema_check is well formed:
 *
 *  - every Expr has a concrete type (never TY_INT_LIT/TY_FLOAT_LIT/TY_ERROR);
 *    an integer literal may have a float type (EXPR_INT typed f32 means
 *    the value (float)ival);
 *  - operands may be narrower than the type their operator computes in, and
 *    lowering widens them (always losslessly): arithmetic, bitwise, shifts,
 *    ?: branches and builtin arguments compute in the node's own type;
 *    comparisons in sema_unify(a->type, b->type); indices have any integer
 *    type and become i64; a rule's value may be narrower than its tensor;
 *  - a 0-d tensor read by its bare name (`y[i] = A[i] / s;`) has become an
 *    EXPR_ACCESS with no indices;
 *  - Kernel.tensors, Kernel.stages, Tensor.rule/index/abi_index/stage_index,
 *    Rule.tensor, RedAxis.index, Expr name refs, EXPR_ACCESS tensors,
 *    EXPR_CALL builtins and SchedPrim.prim_id are filled.
 *
 * First the calls of kernels are expanded (calls.c).  Then the passes run
 * in this order for each kernel (callees first): argmax (rewritten into two
 * reductions), resolve (names), shapes,
 * reduce, update, scans, stages (order), types; then each schedule template gets
 * the primitives of its knob point (knobs.c) and every schedule is
 * validated.
 */
#ifndef TXC_SEMA_H
#define TXC_SEMA_H

#include "lang/ast.h"

/* ---- check.c: runs every check; false if any error was reported. ----- */
bool sema_check(Program *p);
/* The common type two operand types compute in (untyped literals adapt,
 * lossless widening), or TY_ERROR when they need an explicit cast. */
ScalarType sema_unify(ScalarType a, ScalarType b);
/* Whether a value of type `from` converts to `to` without loss. */
bool sema_widens(ScalarType from, ScalarType to);
/* The kernel named `name` in p or in the programs it imports, or NULL. */
Kernel *sema_find_kernel(Program *p, const char *name);

/* Internal to sema/: */
/* The candidate closest to `name` by edit distance, if close enough to be
 * a likely typo, else NULL. */
const char *check_closest(const char *name, const char *const *cands, int n);
bool check_suggest(void);
/* Calls fn on e and, while fn returns true, on its children (pre-order). */
typedef bool (*CheckExprFn)(Expr *e, void *ctx);
void check_walk(Expr *e, CheckExprFn fn, void *ctx);

/* ---- consts.c: each constant tensor's extents (integer literals) and
 * its bytes (tx.5 CONSTANTS): read from its file or found in memory
 * (lang/blob.c) into Tensor.cdata; a missing or short source is an
 * error with the path and both sizes. */
void consts_kernel(Kernel *k);
/* One constant's bytes (layouts.c, before its kernel's turn): false after
 * an error, reported once. */
bool consts_load(Tensor *t);

/* ---- calls.c: calls of kernels (tx.5 CALLS) replaced by copies of the
 * callees' declarations and rules, in every kernel of p; first of all. - */
void calls_program(Program *p);
/* One kernel's calls expanded (layouts.c checks a declaration so). */
void calls_expand_kernel(Program *p, Kernel *k);

/* ---- layouts.c: layout declarations (tx.5 LAYOUTS) checked, and the
 * calls they ask to rewrite given to calls.c as the body's calls.
 * layouts_set_target: the compile target, and whether its declarations
 * apply (off: txc --no-layout; unset, the default: none apply). */
void layouts_set_target(const char *target, bool on);
/* Whether k's expansion for target t differs from this compile's (its
 * schedules for t are then not checked here: schedule.c). */
bool layouts_other_target(Kernel *k, const char *t);
void layouts_check_program(Program *p);
/* A call of f being expanded in k: its results, arguments and the
 * callee's parameters (psub) and inputs (ins, in order) in k's terms. */
typedef struct {
	Program *p;
	Kernel *k, *f;
	Loc at;
	const char **outs; int nouts;
	Expr **args; const char **keys; int nargs;
	Expr **psub;
	const char **ins;
} LayoutSite;
/* The calls computing the call in f's declared layout for the target,
 * or NULL (no declaration applies); layouts_push(f) while calls.c expands
 * them, layouts_pop() after. */
KernelItem *layouts_rewrite(LayoutSite *s, int *n);
/* A rule of k element-wise in the result of a rewritten call (its value
 * 0 where the read is 0): the rule in the call's layout and the transform
 * back, or NULL; made: k's items so far. */
KernelItem *layouts_elementwise(Program *p, Kernel *k, Rule *r, KernelItem *made, int nmade,
    int *n);
void layouts_push(Kernel *f);
void layouts_pop(void);
/* After k's calls are expanded: results of transforms back that every
 * reader cancelled are removed from items. */
void layouts_finish(Kernel *k, KernelItem *items, int *n);
/* layoutfold.c: transform kernel f applied at compile time to constant
 * src: a new constant NAME of the caller, or NULL where f is no plain
 * transform of one f32 input (it is then computed at run time). */
Tensor *layoutfold_const(Kernel *f, Tensor *src, const char *name, Loc at);
/* schedshare.c: `schedule K for T = FROM;` gets FROM's statements. */
void schedshare_program(Program *p);
/* Whether e is 0 where each read of tensor t is 0 (e reads nothing else),
 * computed in t's element type elem. */
bool layoutfold_zero(Expr *e, const char *t, ScalarType elem);
/* txc --print-layout: what was rewritten in k and what cancelled. */
void layouts_print(FILE *fp, Kernel *k);
/* callexpr.c, for calls.c: an expression as text ("N + 2"), a shape
 * ("[N, M]"), a deep copy (argmax.c's too), and whether two extents are
 * equal for all sizes. */
const char *callexpr_text(Expr *e);
const char *callexpr_shape_text(Expr **shape, int n);
Expr *callexpr_dup(Expr *e);
typedef enum { CALL_SAME, CALL_DIFFERENT, CALL_UNKNOWN } CallCmp;
CallCmp callexpr_compare(Expr *a, Expr *b);

/* ---- argmax.c: argmax and argmin rewritten as a maximum (minimum) stage
 * and a minimum over the indices that reach it; before resolve. ---- */
void argmax_kernel(Kernel *k);
bool sema_name_taken(Kernel *k, const char *n);   /* a parameter, tensor or stage */
void tuple_kernel(Kernel *k);

/* ---- resolve.c ------------------------------------------------------
 * Kernel and parameter names, tensor declarations and rules (each stage
 * defined once, outputs defined, inputs not), undeclared intermediates,
 * rule axes, and what every name in an expression refers to. */
void resolve_program(Program *p);
void resolve_kernel(Kernel *k);
/* The tensor of k called name (after resolve_kernel), or NULL. */
Tensor *resolve_tensor(Kernel *k, const char *name);
Param *resolve_param(Kernel *k, const char *name);
/* Resolves the names of an expression outside any rule (a specialize
 * condition): parameters and tensors only. */
void resolve_params_expr(Kernel *k, Expr *e);

/* ---- borders.c: repeat_edge, constant_exterior, wrap, mirror -------
 * Rewrites a boundary helper call, in place, into the index expression it
 * stands for (resolve calls it before it resolves a call's names); true
 * when e was one (an error in it is reported and leaves a call of no
 * function). */
bool borders_expand(Kernel *k, const Rule *r, Expr *e);
bool borders_is_helper(const char *name);
/* The i-th helper's name (0 ...), NULL past the last (for suggestions). */
const char *borders_helper_name(int i);

/* ---- shapes.c: shapes over sizes and constants; index counts. ------- */
void shapes_kernel(Kernel *k);
/* Reports (and returns false) where e uses more than size parameters,
 * integer constants, + - * / % and min/max; `what` names the context in
 * messages ("a shape", "a reduction bound").  A valid one is typed i64. */
bool shapes_size_expr(Expr *e, const char *what);
/* The same for a reduction bound, which may also use the pure axes of its
 * rule (`sum(k <= i)`, tx.5 REDUCTIONS). */
bool shapes_bound_expr(Expr *e);

/* ---- reduce.c: where reductions may appear, their ranges and axes. -- */
void reduce_kernel(Kernel *k);

/* ---- scans.c: scans (recurrences): initial steps, the steps an update
 * reads, groups of scans updated together (Tensor.scan_dim, scan_group). */
void scans_kernel(Kernel *k);
/* How many steps back access (to a scan) reads from the current step of
 * scan reader (1: t - 1, 0: t, -1: t + 1); false when its index along the
 * scan axis is not the reader's scan axis plus or minus a constant. */
bool scans_step_back(Tensor *reader, Expr *access, int64_t *back);

/* ---- update.c: update definitions (tx.5 UPDATES): their domains, what
 * they read of their own stage, whether they are associative. -------- */
void update_kernel(Kernel *k);
/* Whether two checked expressions are the same, node for node. */
bool sema_same_expr(Expr *a, Expr *b);

/* ---- stages.c: dependencies, cycles, compute order, unused stages. --- */
void stages_kernel(Kernel *k);

/* ---- types.c: the type of every expression, rule values. ------------ */
void types_kernel(Kernel *k);
/* The builtin called name, or BI_NONE. */
Builtin types_builtin(const char *name);
const char *types_builtin_name(Builtin b);
/* Types an expression outside any rule (after resolve_params_expr);
 * literals left untyped get their default type.  TY_ERROR: reported. */
ScalarType types_expr(Kernel *k, Expr *e);

/* ---- prim.c: the schedule primitives --------------------------------
 * The one table of schedule primitives, shared with lowering: each entry's
 * positional arguments, keyword arguments and `->` results.               */
enum {
	PRIM_SPLIT, PRIM_TILE, PRIM_FUSE, PRIM_REORDER, PRIM_UNROLL,
	PRIM_VECTORIZE, PRIM_PARALLEL, PRIM_COMPUTE_ROOT, PRIM_COMPUTE_INLINE,
	PRIM_COMPUTE_AT, PRIM_STORE_AT, PRIM_STORE_ROOT, PRIM_CACHE_READ,
	PRIM_CACHE_WRITE, PRIM_RFACTOR, PRIM_BIND, PRIM_DOUBLE_BUFFER,
	PRIM_TENSORIZE, PRIM_PRAGMA, PRIM_PREFETCH, PRIM_PARTITION, PRIM_GPU_TILE,
	PRIM_SET_SCOPE, PRIM_COMPUTE_WITH, PRIM_PIPELINE, PRIM_SWIZZLE, PRIM_TMA,
	PRIM_REORDER_STORAGE, PRIM_STORAGE_ALIGN, PRIM_COUNT
};

/* What a positional argument must be. */
typedef enum {
	PARG_AXIS,        /* an axis of the scheduled stage: ARG_NAME */
	PARG_RED_AXIS,    /* a reduction axis of the scheduled stage */
	PARG_INT,         /* ARG_INT (PrimArg.positive: > 0) */
	PARG_STAGE,       /* another stage of the kernel: ARG_NAME */
	PARG_STAGE_AXIS,  /* an axis of the stage named by the previous argument */
	PARG_TENSOR,      /* any tensor of the kernel (inputs too): ARG_NAME */
	PARG_STAGES,      /* a list of stages: ARG_LIST of ARG_NAME */
	PARG_WORD,        /* one of PrimArg.values: ARG_NAME or ARG_DOTTED */
	PARG_IDENT,       /* any name or string (an intrinsic) */
	PARG_TEXT,        /* a string or a name (pragma) */
} PrimArgKind;

typedef struct {
	PrimArgKind kind;
	const char *what;            /* "an axis", "a positive integer factor" */
	const char *const *values;   /* PARG_WORD: NULL-terminated */
	bool positive;               /* PARG_INT: must be > 0 */
} PrimArg;

typedef struct {
	const char *key;             /* "tail" */
	const char *const *values;   /* allowed values, NULL-terminated; NULL: an integer */
} PrimKwarg;

/* What the `->` names denote. */
typedef enum { OUTS_NONE, OUTS_AXES, OUTS_STAGE } PrimOuts;

typedef struct {
	const char *name;            /* "split" */
	int id;                      /* PRIM_SPLIT: its index in prim_table */
	const char *usage;           /* "an axis and a positive integer factor" */
	PrimArg args[4];
	int min_args, max_args;      /* max_args -1: the last one repeats */
	const PrimKwarg *kwargs;     /* terminated by a NULL key; may be NULL */
	PrimOuts outs_kind;
	int nouts;
	const char *outs_usage;      /* "(outer, inner)" */
	bool on_inputs;              /* applies to input tensors (cache_read) */
} PrimInfo;

extern const PrimInfo prim_table[PRIM_COUNT];
const PrimInfo *prim_lookup(const char *name);
/* Names accepted as keyword values and tags. */
extern const char *const prim_tail_values[];   /* guard shift_inward exact round_up */
extern const char *const prim_scope_values[];  /* global local shared */
extern const char *const prim_bind_values[];   /* blockIdx.x ... vthread */

/* ---- intrinsic.c: intrinsic declarations (bodies as kernels, then the
 * form their emitter needs); the one called name in p or its imports. */
void intrinsic_program(Program *p);
Kernel *intrinsic_find(Program *p, const char *name);
/* VTA's ALU operations (intrinsic emitter "alu"): whether p or its imports
 * declare operation op in the immediate or the tensor form. */
enum { ALU_MIN, ALU_MAX, ALU_ADD, ALU_SHR, ALU_MUL };
bool intrinsic_alu_has(Program *p, int op, bool imm);

/* ---- schedule.c: schedule validation (names, kinds, counts). -------- */
void schedule_check(Program *p);
/* One schedule again (txc tune, after knobs_resolve): false after errors. */
bool schedule_check_one(Program *p, Schedule *s);

/* ---- knobs.c: schedule templates (knob declarations, when blocks) -----
 * knobs_program checks each template once and gives it the primitives of
 * its default point (each knob's first value, or what -K asked for). */
void knobs_program(Program *p);
/* txc -K NAME=VALUE: the value every template declaring NAME takes;
 * false if arg is not NAME=VALUE. */
bool knobs_request_arg(const char *arg);
/* The compile target's instruction sets, for the default of the knob
 * isa: "avx512", "avx2", "sse2", "neon" or "generic" (auto_machine's
 * name); NULL (the default): the knob's first value.  exts: the
 * extensions it has among those the knob names (LLVM's names
 * "avx512vnni", "avxvnni", "avx512bf16", comma-separated), or NULL. */
void knobs_set_isa(const char *isa, const char *exts);
/* The target CPU's data cache sizes in bytes, which schedules name
 * l1_bytes, l2_bytes and l3_bytes (integers in when conditions); until
 * set, 32 KiB, 1 MiB and 32 MiB. */
void knobs_set_caches(long l1, long l2, long l3);
/* The instruction sets the isa knobs take: -K isa=VALUE's, else the
 * target's (NULL when not set). */
const char *knobs_isa(void);
/* A knob's default value (an index): the first, but for the isa knob the
 * first instruction set the target has (the last value when it has none). */
int knobs_default(SchedPrim *kn);
/* After sema_check: an error for each -K no schedule declared. */
bool knobs_check_requests(void);
/* s->prims := the primitives of a point (an index into each knob's
 * values; NULL: the default point). */
void knobs_resolve(Schedule *s, const int *point);
/* "ti=8, tj=16": s's current point. */
const char *knobs_describe(Schedule *s);
/* A note after errors naming s's point; false (nothing) if s has no knobs. */
bool knobs_note_point(Schedule *s);
const char *knobs_value_text(const SchedArg *v);
/* A hash of the template's text: one knob space, one hash. */
uint64_t knobs_space_hash(Schedule *s);

#endif
