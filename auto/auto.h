/* auto.h: the schedule generator (txc-schedule(7) AUTO-SCHEDULING).
 *
 * From a checked kernel, a target, the machine and the sizes (-D where
 * given, else the representative size AUTO_REP_SIZE), auto/ writes a
 * schedule as text, `schedule K as auto for TARGET { ... }`, each stage's
 * primitives under a comment naming the rule that fired.  The text goes
 * through the ordinary parser, knob resolution and schedule checks
 * (attach.c), so what a user prints with --print-auto-schedule is what
 * compiles.  The pieces, in the order they run:
 *
 *   graph.c    the stage graph: stages, axes and their extents at the
 *              sizes, consumers, accesses, and what kind each stage is
 *   fuse.c     operator kinds and fusion groups (TVM's rules on stages),
 *              and which calls keep their callee's own schedule
 *   transfer.c those schedules renamed into the caller, written first
 *   cpu.c      the cpu rules (inline, reductions by vector lanes,
 *              placement at a consumer's row or tile, parallel outer loops,
 *              vectorized inner ones), with cpu.h, what it shares with
 *   inlining.c which stages are inlined (C1)
 *   tile.c     the register tiles of contractions (C2, C3)
 *   cuda.c     the cuda rules (inline, a block and thread binding of every
 *              stage, cross-thread reductions, register and shared tiles)
 *   vta.c      the vta rules (stdlib/vta.tx's plan for int8 contractions on
 *              packed layouts, its tiles chosen to fit VTA's buffers)
 *   machine.c  the machine the default point is chosen for (vector width,
 *              registers, caches, threads) from --cpu/--features or the host
 *   attach.c   text -> Schedule on the program; the driver's entry point
 *
 * auto/ reads sema's checked AST; it sits beside driver/ and tune/.
 */
#ifndef TXC_AUTO_H
#define TXC_AUTO_H

#include <stdio.h>

#include "lang/ast.h"

/* The size a size parameter is taken to have when -D does not fix it. */
#define AUTO_REP_SIZE 512

/* Extents the rules see are clamped to this: every size past it is simply
 * "large" to a heuristic, and products of a few clamped extents, taken with
 * auto_mul, cannot overflow however big -D makes a size. */
#define AUTO_EXT_MAX (1LL << 31)

/* a * b for non-negative extents, saturating at INT64_MAX */
static inline int64_t
auto_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* ---- machine.c: what the default point is chosen for ---------------- */
typedef struct {
	int vbytes;          /* bytes of a vector register: 16 SSE, 32 AVX2, 64 AVX-512 */
	int vregs;           /* vector registers: 16, or 32 with AVX-512 */
	long l1, l2;         /* data cache bytes (0: unknown; 32 KiB and 1 MiB assumed) */
	int threads;         /* the thread pool's size */
	const char *isa;     /* "avx2", "avx512", "sse2", "neon", "generic" */
	const char *exts;    /* its extensions the isa knob names, LLVM's names
	                        comma-separated: "avx512vnni,avxvnni,avx512bf16" */
} AutoMachine;

/* The machine for --cpu/--features (NULL: the host).  Deterministic for a
 * given --cpu: only the thread count and caches are read off the host. */
void auto_machine(AutoMachine *m, const char *cpu, const char *features);
/* The isa knob's default (sema's knobs_set_isa) for that machine: the
 * widest table the target CPU has; a cross triple (triple not NULL and
 * not the host's) counts as "generic". */
void auto_target_isa(const char *triple, const char *cpu, const char *features);

/* ---- caches.c: the target CPU's data cache sizes ----------------------
 * caches_get fills out[] with the L1d, L2 and L3 sizes in bytes for
 * --cpu cpu (NULL, "native" or "host": this machine, read from the OS)
 * and returns where they came from ("sysfs", "table: znver3",
 * "defaults", "--cache", or several joined by ", ").  caches_override
 * takes txc's --cache=L1,L2[,L3] (sizes in bytes, or with K, M or G),
 * which then wins; false, with a diagnostic, when arg is malformed.
 * caches_sysfs: one level's data cache from Linux's sysfs, 0 if absent. */
const char *caches_get(const char *cpu, long out[3]);
bool caches_override(const char *arg);
long caches_sysfs(int level);

/* ---- graph.c: the stage graph ----------------------------------------
 * Also the stage graph of tests/gen/schedgen.c, the random schedule
 * generator, which reads the structural fields (names, constant extents,
 * ranges' dependences, consumers, inputs).  Every per-stage table of
 * auto/ is sized by the stage count (arena arrays): a whole ONNX model is
 * one kernel of hundreds of stages, and each rule's work grows linearly
 * with them.  AUTO_MAXS only bounds what a kernel may have before the
 * generator stops with a warning (the schedule text, parsed and checked
 * like a user's, grows with it too). */
#define AUTO_MAXS 4096
#define AUTO_MAXA 16

typedef enum {
	AK_PURE,         /* no reduction: element-wise, broadcast, injective, stencil */
	AK_REDUCE,       /* a reduction over one or several axes */
	AK_SPECIAL,      /* a scan, an update, a tuple reduction, a range that
	                    depends on a pure axis: kept at root, as written */
} AutoKind;

typedef struct AutoStage AutoStage;
struct AutoStage {
	const char *name;
	Tensor *t;
	AutoKind kind;
	bool output;
	int npure, nred;
	const char *pure[AUTO_MAXA];   /* axis names, in rule order */
	int64_t pext[AUTO_MAXA];       /* extents at the sizes (0: unknown) */
	const char *red[AUTO_MAXA];
	int64_t rext[AUTO_MAXA];
	bool rconst;                   /* every reduction extent a constant */
	ReduceOp rop;
	bool rwhere;                   /* the reduction has a `where` */
	bool tri;                      /* AK_SPECIAL only for a range that depends on pure axes
	                                  (rdep): sum(j <= i), an ordinary reduction otherwise */
	unsigned tridep;               /* those pure axes (bits) */
	int64_t pconst[AUTO_MAXA];     /* extents that are constants in the source (0: not) */
	int64_t rconst_ext[AUTO_MAXA]; /* likewise, for `r < CONST` ranges */
	bool rplain[AUTO_MAXA];        /* per reduction axis: `r < CONST` or `r < SIZE` (fusing
	                                  such axes keeps bounds inference exact) */
	unsigned rdep[AUTO_MAXA];      /* per reduction axis: the pure axes (bits) its range uses */
	int *cons, ncons, capcons;     /* stages that read it, in the order of first reads */
	int *inputs, ninputs, capinputs;  /* the inputs it reads (tensor indices), likewise */
	bool in_index;                 /* read inside an index (a gather table) */
	bool expensive;                /* exp, log, pow, tanh, erf, sin, cos, division of floats */
	bool boundary;                 /* a select on its own pure axes (padding) */
	int64_t flops;                 /* operations per point, roughly */
	int esize;                     /* bytes of its element */
	/* filled by the rules */
	bool inlined;
	/* fuse.c: scheduled by a called kernel's own schedule (the rules leave
	 * it alone); keep: named by such a schedule, so never inlined */
	bool fixed, keep;
};

typedef struct {
	Kernel *k;
	AutoStage *s;                  /* n stages, in compute order */
	int n;
	int *of_tensor;                /* per kernel tensor (Tensor.index): its stage, or -1 */
	bool too_big;                  /* more stages than AUTO_MAXS: no stages here,
	                                  nothing generated */
	const char **defs; const int64_t *vals; int ndefs;
} AutoGraph;

void auto_graph(AutoGraph *g, Kernel *k, const char **defs, const int64_t *vals, int ndefs);
int auto_stage_index(const AutoGraph *g, const Tensor *t);
/* The value of a shape or bound expression at the sizes (0 when unknown
 * or not positive). */
int64_t auto_eval(const AutoGraph *g, Expr *e);
/* Calls fn for every access (to any tensor) in stage si's definitions;
 * in_index tells whether it sits inside another access's index. */
typedef void (*AutoAccessFn)(Expr *acc, bool in_index, void *ctx);
void auto_accesses(const AutoStage *s, AutoAccessFn fn, void *ctx);
/* Whether index expression e is pure axis d (of the rule it is in) plus a
 * constant (*off); coeff: its multiplier (1 for `w + rx`, 2 for `2 * w`). */
bool auto_axis_plus(Expr *e, int d, int64_t *off);
/* The coefficient of pure axis d (pure) or reduction axis d (!pure) in e,
 * when e is affine in it with a constant coefficient (0: absent); -1 when
 * e is not affine in it. */
int64_t auto_coeff(Expr *e, bool pure, int d);

/* ---- fuse.c: operator kinds and fusion groups (txc-schedule(7) FUSION) ---- */
typedef enum {
	FK_ELEMWISE, FK_BROADCAST, FK_INJECTIVE, FK_REDUCE, FK_OUTFUSE, FK_OPAQUE,
} FuseKind;

/* Per stage (arrays of AutoGraph.n, arena-allocated by auto_fuse). */
typedef struct {
	FuseKind *kind;
	int *parent;                   /* union-find */
	int *anchor;                   /* per root of the union-find */
	int *group;                    /* each stage's group, named by its anchor */
	const char **why;              /* why it joined its group (F1-F3) or did not (F0) */
	const char **note;             /* per anchor: why no callee's schedule applies */
	/* the calls scheduled by their callee's schedule, per result stage R */
	Schedule **from;               /* the callee's schedule, or NULL */
	int *tail;                     /* the stage that takes the callee output's loops */
	bool *fixed;                   /* scheduled so (the call's stages and the chain) */
	int *by;                       /* for those: the result R, else -1 */
	bool any_fixed;
} AutoFusion;

/* Kinds and groups of g's stages; target NULL: no callee's schedule applies.
 * The groups are what the cpu rules schedule as units: a stage is inlined
 * only into readers of its own group. */
void auto_fuse(AutoGraph *g, Program *p, const char *target, int threads, AutoFusion *f);
const char *auto_fuse_kind_name(FuseKind k);
/* `txc --print-fusion`: the groups, their members' kinds and why. */
void auto_print_fusion(FILE *fp, AutoGraph *g, const AutoFusion *f, const char *target);

/* ---- transfer.c: the callees' schedules in the caller's names -------------- */
/* Writes the primitives of every call f schedules with its callee's
 * schedule (the template's statements when tmpl), marks the stages they
 * name (AutoStage.fixed, keep) and returns the knobs declared; -1 when a
 * schedule cannot be renamed (a specialize whose condition the sizes
 * known at compile time do not decide, or one inside a when). */
int auto_transfer(FILE *fp, AutoGraph *g, const AutoFusion *f, bool tmpl);

/* ---- cpu.c, cuda.c, vta.c: the rules; text into fp ---------------------------- */
typedef struct {
	const AutoMachine *m;
	const char *target;           /* "cpu", "cuda", "vta" */
	bool tmpl;                    /* write the template (knobs), not only the point */
	const char **why;             /* set when a rule set returns false */
	const char *prelude;          /* primitives written first (transfer.c), or NULL */
	const AutoFusion *fusion;     /* the fusion groups (fuse.c), or NULL: one group */
	int knobs_used;               /* knobs the prelude declares */
	Program *p;                   /* the program (its intrinsics), or NULL */
	const char *cuda_arch;        /* --cuda-arch (NULL: sm_80) */
} AutoOptions;

/* Appends `schedule K as auto for TARGET { ... }` to fp; false when the
 * kernel gets no schedule (why says why: a VTA kernel that does not map). */
bool auto_cpu(FILE *fp, AutoGraph *g, const AutoOptions *o);
bool auto_cuda(FILE *fp, AutoGraph *g, const AutoOptions *o);
bool auto_vta(FILE *fp, AutoGraph *g, const AutoOptions *o);

/* Fresh names for loops and stages the generated schedule makes. */
const char *auto_fresh(AutoGraph *g, const char *want);

/* ---- attach.c: the driver's entry point --------------------------------- */
typedef struct {
	const char *target;           /* "cpu" (default), "cuda", "vta" */
	const char *cpu, *features;   /* --cpu, --features */
	const char *cuda_arch;        /* --cuda-arch (NULL: sm_80) */
	const char **defs; const int64_t *vals; int ndefs;   /* -D */
	bool tmpl;
	bool no_fusion;               /* no callee's schedule applies (the fallback) */
} AutoRequest;

/* The schedule text for kernel k (NULL when none can be made: *why says
 * why when why is not NULL). */
char *auto_text(Program *p, Kernel *k, const AutoRequest *r, const char **why);
/* The same, once checked: the text auto_attach would give k (with the
 * callees' schedules only when they pass the checks). */
char *auto_text_checked(Program *p, Kernel *k, const AutoRequest *r, const char **why);
/* Gives kernel k a schedule named `auto` for r->target, unless it has one
 * (a user's schedule named auto wins): generated, parsed and checked.
 * With strict (TXC_AUTO_STRICT=1 in the environment) a generated schedule
 * that fails its checks is reported as an error; otherwise it is dropped
 * quietly and the kernel keeps its naive nest.  False after errors. */
bool auto_attach(Program *p, Kernel *k, const AutoRequest *r);
/* Whether kernel k takes the generated schedule: -s auto, or no -s and
 * no unnamed schedule for the target (unless no_auto). */
bool auto_wanted(Program *p, Kernel *k, const char *target, const char *schedule, bool no_auto);
/* --print-fusion for kernel k: its graph at r's sizes, fused; false
 * (with a message) when the kernel has more stages than AUTO_MAXS. */
bool auto_print_kernel_fusion(FILE *fp, Program *p, Kernel *k, const AutoRequest *r);

/* Whether TXC_AUTO_STRICT is set. */
bool auto_strict(void);

#endif
