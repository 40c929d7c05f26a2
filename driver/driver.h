/* driver.h: the txc command.
 *
 * main.c parses the command line into Options, loads the source and its
 * imports (import.c), runs the front end, lowers the chosen kernels and
 * hands them to the backend the options name, writing every output file
 * atomically (output.c).  `txc bench` is bench.c (its data and checks
 * benchdata.c), `txc viz` viz.c; cmdline.c holds what their command lines
 * and txc tune's share.
 */
#ifndef TXC_DRIVER_H
#define TXC_DRIVER_H

#include <stdio.h>

#include "lang/ast.h"
#include "lower/lower.h"

typedef enum {
	OUT_OBJ,        /* default: a native object */
	OUT_ASM,        /* -S, --emit=asm */
	OUT_LLVM,       /* --emit=llvm: LLVM IR text */
	OUT_BC,         /* --emit=bc: LLVM bitcode */
	OUT_C,          /* --emit=c: self-contained C99 */
	OUT_LOOPS,      /* --emit=loops, --print-loops: the lowered loop nest */
	OUT_HARNESS,    /* --emit=harness: a C test main() for the kernels */
	OUT_PTX,        /* --emit=ptx: --target=cuda's kernels as PTX */
	OUT_KERNELS,    /* --emit=kernels: --target=cuda's host code and kernels after the GPU passes */
	OUT_CUDA,       /* --emit=cuda: --target=cuda's kernels and entry points as CUDA C */
	OUT_VTA_ASM,    /* --emit=vta-asm: --target=vta's instruction streams, a line each */
	OUT_VTA_BIN,    /* --emit=vta-bin: the raw streams, micro-ops and manifests in a directory */
	OUT_TX,         /* --emit=tx: the .tx program an ONNX model becomes (onnx/) */
} OutKind;

typedef struct {
	const char *input;          /* the .tx file, "-" for stdin */
	const char *output;         /* -o; NULL: derived from the input */
	const char *header;         /* -H */
	OutKind emit;
	bool check_only;            /* --check */
	bool dump_ast, format;      /* --dump-ast, --format */
	bool trace_schedule;        /* --trace-schedule */
	bool no_schedule;           /* --no-schedule */
	bool no_auto;               /* --no-auto-schedule */
	int print_auto;             /* --print-auto-schedule: 1, =template: 2 */
	bool print_fusion;          /* --print-fusion */
	bool no_layout;             /* --no-layout */
	bool print_layout;          /* --print-layout */
	bool debug;                 /* -g */
	int opt_level;              /* -O0..-O3, default 3 */
	const char *target;         /* cpu, cuda, vta (schedule choice) */
	const char *triple;         /* --target=TRIPLE for the cpu backend */
	const char *cpu, *features; /* --cpu, --features */
	const char *cuda_arch;      /* --cuda-arch=sm_NN (default sm_80) */
	const char *schedule;       /* -s */
	const char *tuning_log;     /* --tuning-log=FILE (tune/tunelog.c) */
	const char **kernels; int nkernels;   /* -k (repeatable) */
	const char **defs; int64_t *def_values; int ndefs;  /* -D */
	const char **incdirs; int nincdirs;   /* -I */
	const char *dump_after;     /* --dump-after=PASS */
	bool dlpack;                /* --dlpack: NAME_dlpack in the object and -H */
	bool shared;                /* --shared, or -o NAME.so: a shared library (shared.c) */
	const char *signature;      /* --signature=FILE: the entry points as JSON (signature.c) */
	const char *prefix;         /* --prefix=P: entry points P + kernel name */
	bool local_intrinsics;      /* --local-intrinsics */
	bool no_vector_math;        /* --no-vector-math */
	int codegen_threads;        /* --codegen-threads=N (0: as suits) */
	bool runtime_kernels;       /* --runtime-kernels: libtxrt's micro-kernels */
	int time_passes;            /* TXC_TIME_PASSES: 0 (unset or 0), 1, 2 */
} Options;

/* import.c: loads `import` files (relative to the importing file, then -I
 * directories, then the installed stdlib) and merges their kernels and
 * schedules into the program.  False after diagnostics. */
bool import_resolve(Program *p, const Options *o);
/* For --target=cuda, the intrinsics of intrinsics/cuda.tx (the tensor
 * cores) as if imported, unless the program imports them or declares the
 * names: the schedule generator's tensor-core rule uses them.  False
 * after diagnostics. */
bool import_target_table(Program *p, const char *target);

/* output.c: atomic output.  output_open gives a stream on a temporary
 * file beside `path` ("-": stdout); output_commit closes and checks it;
 * output_finish_all renames every written output into place once the
 * whole run succeeded (all or none); output_abort_all removes every
 * temporary (called on any error).  output_io_failed: a file could not
 * be opened, written or renamed (exit status 2). */
FILE *output_open(const char *path, bool binary);
bool output_commit(FILE *fp);
bool output_finish_all(void);
void output_abort_all(void);
bool output_io_failed(void);
/* A temporary path beside `path` for writers that take a file name (LLVM);
 * registered like output_open's, committed with output_commit_path. */
const char *output_temp_path(const char *path);
bool output_commit_path(const char *tmp);
/* Turns the output written for `path` (committed) into scratch, which
 * output_finish_all removes instead of renaming into place; gives the
 * temporary file that holds it (NULL: no such output). */
const char *output_scratch(const char *path);

/* bench.c: `txc bench FILE.tx ...`; returns the exit status.  argv[0]
 * is "bench". */
int bench_main(int argc, char **argv);

/* benchdata.c, for txc tune: one kernel's arguments at fixed sizes (params in
 * the kernel's order: sizes and integer scalars; scalars: the values of
 * floating-point scalar parameters, the same order), inputs filled as
 * bench fills them; ref is the
 * unscheduled lowering, whose outputs (after running it on
 * bench_data_argv) are the reference.  A BenchRun is a variant's argument
 * array with outputs of its own; bench_run_error compares them with the
 * reference as bench does (relative to max(1, |reference|)). */
typedef struct BenchData BenchData;
typedef struct BenchRun BenchRun;
BenchData *bench_data_new(Kernel *k, IrFunc *ref, const int64_t *params, const double *scalars,
    unsigned seed);
void **bench_data_argv(BenchData *d);
BenchRun *bench_run_new(BenchData *d, IrFunc *f, bool on_device, char *why, size_t cap);
/* on_device: the run holds device copies (txrt_cuda_malloc) and runs on them; NULL
 * (why filled in) when they cannot be made.  bench_run_fetch copies the outputs
 * back before bench_run_error (nothing to do on the host). */
bool bench_run_fetch(BenchRun *r, char *why, size_t cap);
void **bench_run_argv(BenchRun *r);
double bench_run_error(BenchData *d, BenchRun *r);
void bench_run_free(BenchRun *r);

/* benchdata.c: bench's data and its checks (used by bench.c and, through
 * the BenchData API above, by txc tune).  A BenchArg is one tensor
 * argument, allocated once per kernel variant.  benchdata_seed seeds the
 * random inputs; benchdata_put stores v as an element of type t
 * (benchdata_put_int an integer, exactly);
 * benchdata_alloc shapes a at sizes (f's parameters) and fills it (inputs
 * at random, outputs with -77), false after a diagnostic (a shape that
 * cannot be worked out, counts past 64 bits, no memory);
 * benchdata_call_args is the packed argument array (size and scalar
 * slots, then tensor pointers); benchdata_max_error the largest
 * |x - ref| / max(1, |ref|) over f's outputs; benchdata_outputs_like
 * shares ref's inputs and gives fresh outputs filled with -77. */
typedef struct {
	Buffer *buf;
	size_t elems, esize;
	void *data;
} BenchArg;
void benchdata_seed(unsigned seed);
void benchdata_put(void *p, size_t i, ScalarType t, double v);
void benchdata_put_int(void *p, ScalarType t, int64_t v);
bool benchdata_alloc(IrFunc *f, const int64_t *sizes, Buffer *buf, BenchArg *a);
void **benchdata_call_args(IrFunc *f, uint64_t *slots, BenchArg *args);
double benchdata_max_error(IrFunc *f, BenchArg *got, BenchArg *ref);
BenchArg *benchdata_outputs_like(IrFunc *f, BenchArg *ref);
/* --target=cuda: device copies of every argument of f (host's contents copied
 * in), NULL with why filled in after an error (what was allocated is freed);
 * the outputs copied back; the copies freed (NULL accepted).  libtxrt's
 * txrt_cuda_* calls: on the GPU, or host memory in the emulator. */
BenchArg *benchdata_to_device(IrFunc *f, BenchArg *host, char *why, size_t cap);
bool benchdata_from_device(IrFunc *f, BenchArg *host, BenchArg *dev, char *why, size_t cap);
void benchdata_free_device(IrFunc *f, BenchArg *dev);

/* viz.c: `txc viz FILE.tx ...` (pictures of a schedule, viz/viz.h); returns
 * the exit status.  argv[0] is "viz". */
int viz_main(int argc, char **argv);

/* cmdline.c: what the command lines of txc bench, txc viz and txc tune
 * share.  cmd is the subcommand ("bench"): messages read "txc bench: ...
 * (see 'txc bench --help')".  The int-returning ones return 1 after the
 * message (the exit status) and -1 when all is well. */
int cmdline_bad(const char *cmd, const char *fmt, const char *arg);
/* An integer option's value (strtoll base 0), lo <= v <= hi; false if s is
 * not one. */
bool cmdline_int(const char *s, long long lo, long long hi, long long *v);
/* A number lo <= v <= hi (strtod); false if s is not one. */
bool cmdline_num(const char *s, double lo, double hi, double *v);
/* A -D value: an integer (strtoll base 0, all 64 bits exact) when the text
 * is one, else a number (strtod); text is the VALUE as written. */
typedef struct {
	bool integer;
	int64_t i;        /* integer: the value */
	double f;         /* the value as a double (rounded when integer is large) */
	const char *text;
} CmdValue;
/* -D NAME=VALUE: the interned name and the value; false if arg is not one. */
bool cmdline_define(const char *arg, const char **name, CmdValue *v);
/* The value of size parameter pa, given as -D: a diagnostic at pa (txc
 * `cmd` -D NAME=N) and false unless it is a non-negative integer. */
bool cmdline_size(const char *cmd, const Param *pa, const CmdValue *v, int64_t *out);
/* The same for a scalar parameter: an integer type takes only an integer. */
bool cmdline_scalar(const char *cmd, const Param *pa, const CmdValue *v);
/* The input of `txc bench`, `viz` or `tune` as a source file: a .onnx
 * model through the ONNX front end (its dynamic dimensions fixed by the
 * integer -D values among names/values), else the .tx file itself; 0
 * after a diagnostic. */
uint32_t cmdline_load(const char *input, const char **names, const CmdValue *values, int n);
/* -K NAME=VALUE: a knob's value, recorded for sema's knobs_check_requests. */
int cmdline_knob(const char *cmd, const char *arg);
/* --schedules=A,B,...: appended to *scheds ("default": NULL, the unnamed
 * schedule); false if there is none at all. */
bool cmdline_schedules(const char *s, const char ***scheds, int *n, int *cap);
/* getopt_long's ':' (a missing argument) and '?' (an unknown option). */
int cmdline_getopt_error(const char *cmd, int c, char **argv);
/* The input file(s) after the options (argv[optind]); only_one: exactly one. */
int cmdline_input(const char *cmd, int argc, char **argv, bool only_one);
/* The kernel named name, or the input file's first (name NULL); NULL after
 * a diagnostic. */
Kernel *cmdline_kernel(Program *prog, const char *name, const char *input);
/* A diagnostic for each -D name (interned) that is no parameter of k;
 * false if there was one. */
bool cmdline_defs_known(Kernel *k, const char **names, int ndefs);

/* benchops.c: the operation count txc bench divides by the time (txc.1,
 * "How GFLOP/s is counted"): the kernel k at sizes `params` (kernel
 * order), f its unscheduled lowering; -1 when some extent is unknown.
 * *fl is set when any counted operation is on floating point. */
double benchops_count(Kernel *k, IrFunc *f, const int64_t *params, bool *fl);
/* An integer IR extent over f's parameters; false if not evaluable. */
bool benchops_eval(IrFunc *f, const int64_t *params, IrExpr *e, int64_t *out);

/* emit.c: --emit=obj|asm|llvm|bc (and -S) through target/llvm, honouring
 * --target, --cpu, --features, -g and -O; false after diagnostics. */
bool emit_llvm(IrFunc **funcs, int n, const Options *o, const char *out);
/* --target=cuda: the host object (or -S, --emit=llvm|bc) or --emit=ptx
 * through target/cuda. */
bool emit_cuda(IrFunc **funcs, int n, const Options *o, const char *out);
bool emit_vta(IrFunc **funcs, int n, const Options *o, const char *out);
/* txc --runtime-kernels: libtxrt's prebuilt micro-kernels to out. */
bool emit_runtime_kernels(const Options *o, const char *out);

/* shared.c: txc --shared: the kernels' object linked with libtxrt's
 * archive into the shared library out; false after diagnostics. */
bool shared_emit(IrFunc **funcs, int n, const Options *o, const char *out);

/* signature.c: txc --signature=FILE: the entry points of funcs as JSON
 * (the format is in signature.c); false on a write error. */
bool signature_emit(FILE *fp, IrFunc **funcs, int n, const Options *o);

#endif
