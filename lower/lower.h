/* lower.h: from a checked kernel and its schedule to a loop nest.
 *
 * Takes a kernel that passed sema_check and the schedule chosen for it
 * and gives an IrFunc (ir.h): the stages' loop nests with every schedule
 * primitive applied, bounds inferred, storage flattened and simplified.
 * Illegal schedules and accesses that cannot be proved in bounds are
 * reported through diag and give NULL.  pipeline.c lists the passes.
 */
#ifndef TXC_LOWER_H
#define TXC_LOWER_H

#include <stdio.h>

#include "lang/ast.h"
#include "lower/ir.h"

typedef struct {
	bool no_schedule;          /* --no-schedule: the kernel as written */
	const char *target;        /* "cpu" (default), "cuda", "vta": picks the schedule */
	const char *schedule;      /* -s NAME; NULL: the unnamed schedule */
	FILE *trace;               /* --trace-schedule: nest after each primitive */
	FILE *dump;                /* --dump-after=PASS writes here */
	const char *dump_after;    /* a pass name (file stem), or "all" */
	bool time_passes;          /* TXC_TIME_PASSES=1 */
	/* -D NAME=VALUE: sizes fixed at compile time */
	const char **def_names;
	int64_t *def_values;
	int ndefs;
	/* Stop after this pass (a file stem, e.g. "simplify" for --print-loops:
	 * loops with their kinds, before flatten, unroll and vectorize); NULL: all. */
	const char *stop_after;
	/* A specialization's condition as written ("M == 7"), for messages
	 * that name where a primitive is (pipeline.c sets it); NULL: none. */
	const char *special;
	/* A kernel with no unnamed schedule for the target takes its schedule
	 * named `auto` (the generator's, auto/attach.c), where it has one; a
	 * generated schedule (Schedule.generated) that fails to lower gives
	 * the naive nest instead, unless auto_strict (TXC_AUTO_STRICT=1),
	 * where its errors are reported. */
	bool auto_default;
	bool auto_strict;
} LowerOptions;

/* pipeline.c: the whole lowering; NULL after diagnostics. */
IrFunc *lower_kernel(Program *p, Kernel *k, const LowerOptions *opt);
/* sched_prune.c: generated schedule s less the primitives of the stage
 * whose rule holds `at` (and of what they made), or NULL when no stage's
 * rule holds it or nothing would go. */
Schedule *lower_prune_stage(Kernel *k, Schedule *s, Loc at);
/* Names the entry point f `name` (txc --prefix), and the messages of its
 * checks with it: those lowering wrote start with the kernel's name. */
void lower_rename(IrFunc *f, const char *name);
/* The schedule lower_kernel would use (NULL: none applies). */
Schedule *lower_find_schedule(Program *p, Kernel *k, const LowerOptions *opt);
/* The names --dump-after takes, in pipeline order, NULL-terminated; and
 * whether name is one of them or "all". */
const char *const *lower_pass_names(void);
bool lower_pass_known(const char *name);

/* ==== internal to lower/: the stages being lowered and their schedules ====
 * Like Halide's Function + StageSchedule: the schedule is data.  Each stage
 * keeps its definition as IR expressions over its axis variables and a
 * StageSched (axes, split/fuse relations, leaf loop order, compute and
 * store levels) that the primitives update; lower.c builds loops from it. */

typedef enum { TAIL_GUARD, TAIL_SHIFT, TAIL_EXACT } TailKind;

/* An axis: an original one (pure or reduction, in that order) or one made
 * by split or fuse.  Leaves are the loops, in `leaves` order. */
typedef struct {
	const char *name;
	bool red;              /* made from reduction axes only */
	bool leaf;             /* still a loop (not split or fused away) */
	ForKind fk;
	Loc fk_loc;            /* the primitive that set fk */
	Var *var;              /* loop variable (root axes: the axis variable) */
	int64_t factor;        /* the inner axis of a split: its constant extent */
	int gpu_dim;           /* bind: 0..2 = x, y, z */
	bool partition;        /* partition: its loop is split at the selects too */
	Loc made;              /* the primitive that made it */
	/* filled by axes_extents */
	IrExpr *ext;           /* number of iterations */
	IrExpr *pos;           /* 0-based position in terms of leaf variables */
	bool tainted;          /* root axis under a guard split: needs an If */
} Axis;

/* split: parent -> outer, inner; fuse: outer, inner -> parent. */
typedef struct {
	bool fuse;
	int parent, outer, inner;
	int64_t factor;
	TailKind tail;
	bool round_up;         /* tail=round_up: a guard for this stage, whole
	                          blocks for the stages computed inside them
	                          (bounds_infer.c) */
	Loc loc;
} Rel;

typedef enum { LEVEL_ROOT, LEVEL_INLINE, LEVEL_AT } LevelKind;
typedef struct LStage LStage;
typedef struct {
	LevelKind kind;
	LStage *stage;         /* LEVEL_AT: the consumer */
	const char *axis;      /* its loop, resolved after all primitives */
	int leaf;              /* position of that loop in stage->leaves */
	Loc loc;
} Level;

struct LStage {
	const char *name;
	Tensor *t;             /* NULL for a stage a primitive made */
	Buffer *buf;
	ScalarType elem;
	int ndims;
	bool input, output;
	IrExpr **shape;        /* declared extents, NULL: inferred */
	IrExpr *value;         /* the pure definition; NULL for a reduction */
	bool red;
	ReduceOp rop;
	int nred;              /* reduction axes: axes[rax[0..nred)] */
	int *rax;
	IrExpr **rmin, **rext; /* their domains */
	IrExpr *rbody;         /* S = S op rbody */
	IrExpr *rpred;         /* only where this holds (rfactor), or NULL */
	/* a scan (tx.5 SCANS): value is select(t < scan_init, the initial
	 * values, the update) over root axis scan_dim, and lower.c stores one
	 * or the other under an If; scan_lead is the scan whose scan loop the
	 * steps of its group run in (the last of them in compute order) */
	bool scan;
	int scan_dim, scan_init;
	LStage *scan_lead;
	/* compute_with (compute_with.c): this stage runs in the loops of `with`,
	 * outermost down to loop with_axis of it (with_depth loops, set after
	 * bounds inference); the stages fused into one share its loop nest */
	LStage *with;
	const char *with_axis;
	int with_depth;
	Loc with_loc;
	/* an update definition (tx.5 UPDATES), run after the pure value over
	 * the reduction axes axes[rax[0..nred)] (red stays false): uval is
	 * stored at uidx (ndims), reading buf there for the current value,
	 * where upred holds (NULL: everywhere); ukeep has bit d for each pure
	 * axis d the update keeps in its place (its loops run in the update's
	 * nest too); uassoc: its steps may run in any order (+=, max, ...) */
	bool upd, uassoc;
	ReduceOp uop;           /* uassoc: how it combines (rfactor) */
	IrExpr **uidx, *uval, *upred;
	uint64_t ukeep;
	Loc uloc;
	/* an output of a tuple reduction (tx.5 TUPLE REDUCTIONS): an update
	 * stage whose update runs in tlead's update nest, together with the
	 * other outputs' (tlead: the first output, which holds them all in
	 * tmem, in order, and runs the reduction's loops) */
	LStage *tlead;
	LStage **tmem; int ntmem;
	bool tassoc;            /* its combiner is declared associative */
	Loc reordered;         /* the last primitive that reordered its loops */
	/* sliding.c: the dimension whose region slides along loop variable
	 * slide_var (each iteration computes only what is new), or -1 */
	int slide_dim;
	Var *slide_var;
	IrExpr *slide_window;  /* the rows one iteration reads (the old extent) */
	Loc loc;
	/* the schedule */
	Axis *axes; int naxes, capaxes;
	Rel *rels; int nrels, caprels;
	int *leaves; int nleaves, capleaves;
	Level compute, store;
	bool store_set;
	MemScope scope;
	Loc scope_loc;
	/* bound inference: per root axis (pure: region, reduction: domain) */
	IrExpr **dmin, **dext, **dmax;   /* dmax = dmin + dext - 1, kept as found */
	IrExpr **amin, **aext;     /* the allocation (store level) */
	bool bounded;
	/* bounds_infer.c, while tail=round_up rounds regions: the dimensions
	 * (bits) of a root stage whose region was cut back to its declared
	 * shape (its own loops there not rounded); reads past it by whole
	 * blocks are clamped to the region (bounds_check.c) */
	uint64_t cut;
	/* facts.c: the sizes' floors where the stage is computed (its loops
	 * are entered) and where its body runs; guard: the condition of a
	 * root stage computed only where its consumers run (lower.c) */
	int64_t *gfloor, *ffloor;
	IrExpr *guard;
	/* names a failed primitive would have made (its `->` outputs): later
	 * uses fail quietly instead of repeating the error */
	const char **poison; int npoison, cappoison;
};

/* A range of a variable: loop counters and size parameters. */
typedef struct VarRange {
	Var *var;
	IrExpr *lo, *hi;           /* inclusive; NULL: unbounded */
	bool ranging;              /* varies in the question asked (else a symbol) */
	struct VarRange *next;
} VarRange;

typedef struct {
	Program *p;
	Kernel *k;
	Schedule *sched;
	const LowerOptions *opt;
	LStage **stages; int nstages, capstages;   /* compute order; inputs first */
	Var **params;                              /* per kernel parameter */
	IrExpr **param_value;                      /* the var, or its -D value */
	IrStmt **checks; int nchecks, capchecks;   /* entry-point asserts */
	int nbase_checks;                          /* the first ones: sizes, -D values */
	int first_check;                           /* lower_stages emits checks from here */
	VarRange *ranges;                          /* every loop var and size */
	const char **names; int nnames, capnames;  /* variable names in use */
	struct TzReq *tz; int ntz, captz;          /* tensorize requests (tensorize.c) */
	const char **poison; int npoison, cappoison;  /* stages failed primitives would have made */
	bool quiet_fail;                           /* a primitive failed without a diagnostic */
	bool regions_ok;                           /* bounds_infer found every region */
	bool rounding;                             /* bounds_infer: tail=round_up in effect */
	bool storing;                              /* bounds_infer: a store level's region */
	int64_t *floor0;                           /* bounds_infer: the sizes' floors (facts.c) */
	bool guards;                               /* bounds_infer: root stages may be guarded */
} Lower;

/* stage.c: stages from the kernel's tensors; definitions as IR.  With
 * `like` (a specialization, lowered after the general schedule), the
 * parameters' variables and the tensor arguments' buffers are like's. */
Lower *stage_build(Program *p, Kernel *k, const LowerOptions *opt, const Lower *like);
/* A sema-checked expression over the kernel's parameters (a specialize
 * condition) as IR. */
IrExpr *stage_param_expr(Lower *L, Expr *e);
LStage *stage_find(Lower *L, const char *name);
LStage *stage_new(Lower *L, const char *name, ScalarType elem, int ndims, int at);
int stage_add_axis(Lower *L, LStage *s, const char *name, bool red);
int stage_leaf(LStage *s, const char *name);      /* position in leaves, -1 */
int stage_axis(LStage *s, const char *name);      /* index of a leaf axis, -1 */
const char *stage_leaf_list(LStage *s);           /* "io, jo, ii, ji" */
Var *stage_var(Lower *L, const char *name);       /* a uniquely named i64 var */
Var *stage_typed_var(Lower *L, const char *name, IrType t);   /* a let's */
/* Rebuilds e bottom-up where fn gives a replacement (NULL: keep going). */
IrExpr *stage_map(IrExpr *e, IrExpr *(*fn)(IrExpr *, void *), void *ctx);
IrExpr *stage_subst(IrExpr *e, Var *v, IrExpr *to);
bool stage_reads(IrExpr *e, Buffer *b);
IrExpr *stage_redirect(IrExpr *e, Buffer *from, Buffer *to);
IrExpr *stage_identity(ReduceOp op, ScalarType t);
IrExpr *stage_combine(ReduceOp op, IrExpr *a, IrExpr *b);
/* e over s's axes with from[i] replaced by a copy of the load to[i] */
IrExpr *stage_conv_subst(Lower *L, LStage *s, Expr *e, ScalarType t, Expr **from,
    IrExpr **to, int n);
/* e, over the axes of m, an output of the tuple reduction s leads, over s's */
IrExpr *stage_as_lead(LStage *s, LStage *m, IrExpr *e);
void stage_add_check(Lower *L, IrExpr *cond, int code, const char *msg);
const char *stage_loc_text(Loc loc);              /* the source of a range */

/* sched.c: applies primitives to the stages, with their legality checks. */
bool sched_apply(Lower *L, Schedule *s, int nprims);
bool sched_finish(Lower *L);                      /* levels, inlining */
bool sched_consumes(LStage *c, LStage *p);        /* c's definition reads p */
/* Whether c reads p, directly or through other stages (depth: 0). */
bool sched_depends(Lower *L, LStage *c, LStage *p, int depth);

/* stagedump.c: the stages and their schedules, for --dump-after=stage,
 * sched, inline and bounds_infer. */
void stagedump_print(FILE *fp, Lower *L);

/* axes.c: extents and positions of a stage's axes after split and fuse. */
void axes_extents(LStage *s);                     /* Axis ext, pos, tainted */
IrExpr *axes_root_value(LStage *s, int r);        /* axis r in leaf vars */
IrExpr *axes_guards(LStage *s, bool pure, bool red);  /* tail=guard conditions, or NULL */
IrExpr *axes_guards_of(LStage *s, uint64_t roots);   /* of the axes made from roots */
uint64_t axes_roots(LStage *s, int a);             /* root axes a is made from, as bits */

/* lin.c, lin_prove.c, lin_interval.c: linear forms, a small prover and
 * interval arithmetic (lin.h: what the three share). */
bool lin_prove_le(IrExpr *a, IrExpr *b, VarRange *r);  /* a <= b for all values */
/* Whether a lin_prove_le since the last call gave up (too deep a chain
 * of bounds or too many steps) rather than found a counterexample path;
 * clears the flag. */
bool lin_gave_up(void);
IrExpr *lin_normalize(IrExpr *e);                 /* canonical sum, folded */
IrExpr *lin_min(IrExpr *a, IrExpr *b, VarRange *r);  /* folds when provable */
IrExpr *lin_max(IrExpr *a, IrExpr *b, VarRange *r);
/* Facts from conditions: lo <= e (lo_e) and e <= hi. */
typedef struct Fact { IrExpr *ge0; struct Fact *next; } Fact;  /* ge0 >= 0 */
Fact *lin_facts(IrExpr *cond, bool truth, Fact *f);
bool lin_interval(IrExpr *e, VarRange *r, Fact *f, IrExpr **lo, IrExpr **hi);
VarRange *lin_push(VarRange *r, Var *v, IrExpr *lo, IrExpr *hi, bool ranging);
bool lin_is_static(IrExpr *e, VarRange *r);       /* only size parameters */
bool lin_varies(IrExpr *e, VarRange *r);          /* uses a ranging variable of r */
void lin_assume_ge(VarRange *r, IrExpr *e, int64_t lo);
IrExpr *lin_extent(IrExpr *lo, IrExpr *hi);            /* hi - lo + 1 */
/* Constant bounds [lo, hi] of e, a +, -, min, max, * of two operands or
 * a division or modulo by a positive constant (rounding toward -inf),
 * its operands bounded by sub(ctx, operand, ...); false for any other
 * kind, an unbounded operand, or an end past 64 bits.  sizecheck.c and
 * the cuda target's 32-bit twins (gpu_index32.c) bound their leaves in
 * their own ways and share this. */
typedef bool LinConstRange(void *ctx, IrExpr *e, int64_t *lo, int64_t *hi);
bool lin_const_range(IrExpr *e, LinConstRange *sub, void *ctx, int64_t *lo, int64_t *hi);

/* scan.c: the schedule of every scan checked (its scan loops serial and
 * in order, computed at root, cpu only) and the scans of a group computed
 * in the steps of its last one. */
bool scan_schedule(Lower *L);

/* compute_with.c: the stages fused by compute_with checked (same loops,
 * no read of a point the shared loops compute later) and their depths
 * set; lower.c builds one nest for each group. */
bool compute_with_check(Lower *L);
/* sliding.c: a stage stored outside its compute loop computes only what
 * earlier iterations have not (after bounds inference, CPU only). */
void sliding_window(Lower *L);
/* storage_fold.c: the buffer of a sliding stage keeps only the rows its
 * readers still need, indexed modulo their number (after lower_stages). */
IrStmt *storage_fold(Lower *L, IrStmt *body);
bool compute_with_member(LStage *s);       /* fused into another, or the lead of some */

/* reddom.c: the loops of a reduction whose range depends on pure axes
 * inside theirs, no rfactor of it. */
bool reddom_check(Lower *L);
/* Pure axis d in the loops, clamped where a range depends on it. */
IrExpr *reddom_root_value(LStage *s, int d);

/* update.c: the schedule of every stage with an update definition
 * checked (the steps' order kept where it matters, no two steps at once
 * where they may meet, computed whole at root, cpu only); whether loop
 * `pos` of s runs in its update's nest; the reasons primitives give. */
bool update_schedule(Lower *L);
bool update_in_nest(LStage *s, int pos);
bool update_kind_ok(LStage *s, Axis *a, ForKind fk, Loc at);
bool update_prim_ok(LStage *s, SchedPrim *sp);
int update_order_breach(LStage *s, int *before);   /* a domain loop out of step order, or -1 */

/* bounds_infer.c: regions of every stage, then bounds_check_stages; the
 * variables of stage c that vary inside its loop `leaf` (-1: all), with
 * their ranges where c's loops run. */
bool bounds_infer_stages(Lower *L);
VarRange *bounds_infer_scope(Lower *L, LStage *c, int leaf);
/* bounds_check.c: every access of every bounded stage proved inside its
 * tensor (errors and notes where not), or, while L->rounding, clamped. */
void bounds_check_stages(Lower *L);

/* facts.c: size floors (the least value of each size parameter) that
 * hold where a loop runs; arrays indexed like the kernel's parameters. */
int64_t *facts_copy(Lower *L, const int64_t *from);      /* from NULL: zeros */
int64_t *facts_base(Lower *L);                  /* the floors of L->ranges */
void facts_join(Lower *L, int64_t *to, const int64_t *from);   /* both hold */
void facts_meet(Lower *L, int64_t *to, const int64_t *from);   /* either */
bool facts_stronger(Lower *L, const int64_t *a, const int64_t *b);
void facts_ge0(Lower *L, IrExpr *e, int64_t *floor);     /* where e >= 0 */
void facts_nonempty(Lower *L, IrExpr *lo, IrExpr *hi, int64_t *floor);
VarRange *facts_scope(Lower *L, VarRange *r, const int64_t *floor);
IrExpr *facts_cond(Lower *L, const int64_t *floor, const int64_t *base);
const char *facts_text(Lower *L, const int64_t *floor, const int64_t *base);

/* lower.c: loop nests from the stages. */
IrStmt *lower_stages(Lower *L);

/* flatten.c: multi-dimensional accesses to flat offsets. */
IrStmt *flatten_buffers(IrStmt *s);
/* The same, local allocations first padded to their extents' constant
 * bounds (constant strides: the GPU keeps a thread's tile in registers). */
IrStmt *flatten_buffers_padded(IrStmt *s);

/* sizecheck.c: entry checks (the size error) that no loop bound, extent,
 * byte count or offset of the flattened nest overflows 64 bits, as a block
 * of asserts (NULL: none); marks the body's leading sign and -D checks as
 * the sizes' too.  sizecheck_insert puts them after those, once the later
 * passes have run (their simplifier must not rewrite them). */
IrStmt *sizecheck_checks(Lower *L, IrStmt *body);
IrStmt *sizecheck_insert(IrStmt *body, IrStmt *checks);

/* partition.c: loops whose guards hold for most iterations split into a
 * prologue, a guard-free steady state and an epilogue. */
IrStmt *partition_loops(IrStmt *s);

/* tensorize.c: `tensorize(axis, intrinsic)` -- sched.c records the request,
 * tensorize_stmt matches the nest under the axis against the intrinsic
 * (tx.5 INTRINSICS) after lower_stages and replaces it by a CALL_INTRINSIC
 * (the whole-tile case; partial tiles keep the loops).  NULL after errors. */
typedef struct TzReq {
	LStage *s;
	const char *axis;
	Kernel *intr;
	Loc loc, axis_loc;
} TzReq;
/* sched.c and sched_stages.c share these (the primitives' arguments, the
 * leaves and relations of a stage's axes, a failed primitive's quiet
 * followers); sched_stages.c has the primitives that make a stage. */
extern bool sched_quiet;
bool sched_poisoned(const char **v, int n, const char *name);
SchedArg *sched_arg(SchedPrim *sp, int n);
int sched_find_leaf(LStage *s, SchedArg *a);
void sched_insert_leaf(LStage *s, int pos, int axis);
Rel *sched_add_rel(LStage *s);
bool sched_reads(LStage *c, LStage *p);
MemScope sched_scope_of(Lower *L, SchedArg *a, bool write);
void sched_cache_read(Lower *L, LStage *src, SchedPrim *sp);
void sched_cache_write(Lower *L, LStage *s, SchedPrim *sp);
void sched_rfactor(Lower *L, LStage *s, SchedPrim *sp);
void tensorize_request(Lower *L, LStage *s, SchedPrim *sp);
IrStmt *tensorize_stmt(Lower *L, IrStmt *s);

#endif
