/* tune.h: autotuning of schedule templates (`txc tune`, txc(1) TUNE).
 *
 * Takes a checked program, one kernel and one of its schedule templates
 * (sema/knobs.c), and sizes; searches the template's knob points,
 * measuring each candidate in a worker process (worker.c) against the
 * best point so far, and writes a tuning log (tunelog.c) that later
 * compiles reuse.  It drives lowering and the JIT as txc bench does and
 * reads the IR only through lower/'s interface.  The layering: tune sits
 * beside driver/ and uses its helpers (driver.h).
 */
#ifndef TXC_TUNE_H
#define TXC_TUNE_H

#include <stdint.h>
#include <stdio.h>

#include "driver/driver.h"
#include "lang/ast.h"
#include "target/target.h"

#define TUNE_MAX_KNOBS 32

/* ---- space.c: a template's knob points -------------------------------- */
typedef struct {
	Schedule *s;
	int nknobs;
	int *nvalues;          /* per knob */
	int *base;             /* per knob: the index of its first value in the space
	                          (the isa knob: the target's set, its only value) */
	double size;           /* the number of points (may exceed 2^53: a double) */
} Space;

Space space_of(Schedule *s);
/* The point with index idx (0 <= idx < size), mixed-radix, knob 0 fastest. */
void space_point(const Space *sp, uint64_t idx, int *point);
uint64_t space_index(const Space *sp, const int *point);
/* A random point; a neighbour (one knob moved to another value). */
void space_random(const Space *sp, uint64_t *rng, int *point);
void space_neighbour(const Space *sp, uint64_t *rng, const int *from, int *to);
uint64_t space_rand(uint64_t *rng);   /* xorshift64* */
/* "mr=6 nr=16" as -K arguments would name them: "-K mr=6 -K nr=16". */
const char *space_describe(const Space *sp, const int *point, bool as_flags);

/* ---- worker.c: the measuring process --------------------------------------
 * A child process that compiles candidates (lowering, LLVM JIT), checks
 * each against the unscheduled kernel once and times it interleaved with
 * the incumbent.  It is forked before anything starts threads or LLVM, so
 * a candidate that crashes or hangs only takes the worker down: the
 * tuner records a failed trial and forks another.  --target=cuda: the
 * worker alone loads the CUDA driver; candidates run on device copies of
 * bench's data (copied once per candidate) and are timed by the host's
 * clock around synchronised batches of runs; what the driver refuses to
 * launch is an illegal point. */
typedef struct {
	Program *prog;
	Kernel *k;
	Schedule *s;
	const char *target;          /* "cpu", "vta" or "cuda" */
	const char *cuda_arch;       /* cuda: --cuda-arch (NULL: the backend's default) */
	bool emulate;                /* cuda: TXC_TUNE_CUDA_EMULATE, libtxrt's emulator (tests) */
	const char **def_names; int64_t *def_values; int ndefs;   /* -D sizes */
	int64_t *params;             /* every parameter, in kernel order (sizes, integer scalars) */
	double *scalars;             /* floating-point scalars' values, the same order */
	unsigned seed;
	double tolerance;
	int samples;                 /* interleaved samples per comparison */
	double min_sample_ms;        /* a sample runs the kernel this long at least */
	LlvmOptions llvm;
} WorkerConfig;

typedef enum {
	MEAS_OK,
	MEAS_ILLEGAL,       /* the point does not compile (msg: the first error) */
	MEAS_MISMATCH,      /* its result differs from the unscheduled kernel's */
	MEAS_FAILED,        /* its entry point returned an error */
	MEAS_CRASH,         /* the worker died (a signal) */
	MEAS_TIMEOUT,       /* the worker ran past the time limit */
} MeasStatus;

typedef struct {
	MeasStatus status;
	double time_ms;      /* the candidate's median sample, per run */
	double inc_ms;       /* the incumbent's, interleaved with it */
	double ratio;        /* median of candidate / incumbent over the samples */
	double spread;       /* half the interquartile range of those ratios */
	double error;        /* largest relative difference from the reference */
	int samples;
	char msg[200];
	char cpu[64];        /* the machine that measured: --mpi, the rank's CPU; cuda, the
	                        GPU's name (else empty) */
	bool restart;        /* cuda: the worker exits after answering (the device is in an
	                        error state); the next request starts a new one */
} Meas;

typedef struct Worker Worker;
Worker *worker_start(const WorkerConfig *c);
/* Measures point cand against point inc at `threads` threads; a crash or
 * a run past timeout_s restarts the worker and is reported in m. */
void worker_measure(Worker *w, const int *cand, const int *inc, int threads,
    double timeout_s, Meas *m);
void worker_stop(Worker *w);

/* ---- tunelog.c: tuning logs (JSON lines) ----------------------------------
 * One line per measurement: kernel, schedule, the space's hash, target,
 * CPU name and features, sizes, threads, knob values, times, error, txc
 * version, date.  Appended and flushed line by line, so an interrupted
 * run keeps what it measured. */
typedef struct {
	int line;
	const char *kernel, *schedule, *space, *target, *cpu, *features;
	const char *phase;            /* "search", "confirm", "best" */
	const char **size_names; int64_t *size_values; int nsizes;
	const char **knob_names; const char **knob_values; int nknobs;
	int threads;
	double time_ms, vs_default;   /* vs_default: time / the default point's */
	const char *error;            /* NULL: a good measurement */
	const char *version, *date;
} TuneRecord;

/* Reads a log; false after a diagnostic (file:line:col, never a crash). */
bool tunelog_read(const char *path, TuneRecord **out, int *n);
/* Parses one line (exposed for the fuzz test); false with *why set. */
bool tunelog_parse_line(const char *text, size_t len, TuneRecord *r, const char **why,
    size_t *at);
void tunelog_write(FILE *fp, const TuneRecord *r);
/* The host's CPU name and features, as records hold them. */
const char *tunelog_cpu(void);
const char *tunelog_features(void);
/* txc --tuning-log F (and bench): gives every template of prog that a record
 * of F matches (kernel, schedule, space, target, CPU, the sizes that -D fixes)
 * the best matching point; a template with records but none that matches
 * gets one warning naming the nearest.  False after errors. */
/* The point a record names in template s; false if it is not one of s's. */
bool tunelog_point(const TuneRecord *r, Schedule *s, int *point);
bool tunelog_apply(Program *prog, const char *path, const char *target, const char *machine,
    const char **def_names, const int64_t *def_values, int ndefs);

/* ---- gpu.c: the GPU, for --target=cuda ----------------------------------
 * gpu_probe: in a child process (the tuner never loads the CUDA driver: it
 * forks workers), whether there is a GPU to time candidates on: true and its
 * name in text, else false and why not.  emulate (gpu_emulate_switch():
 * TXC_TUNE_CUDA_EMULATE, for tests) accepts libtxrt's emulator, named
 * "emulator".  tune_machine: the machine records must name to apply to a
 * compile for target here (txc --tuning-log): the CPU; for cuda the GPU's
 * name, "emulator" under TXRT_CUDA=emulate, NULL (any) without a GPU. */
bool gpu_emulate_switch(void);
bool gpu_probe(bool emulate, char *text, size_t cap);
const char *tune_machine(const char *target);

/* ---- features.c: the cost model's view of a loop nest -------------------
 * f lowered up to simplify (the nest --print-loops shows); out has
 * features_count floats. */
extern const int features_count;
void features_of(IrFunc *f, float *out);

/* ---- model.c: XGBoost through its C API, loaded with dlopen -------------
 * model_open: NULL (and why) when libxgboost.so.0 cannot be loaded.  fit:
 * rank:pairwise on rows X (n x features_count) with labels y (higher is
 * faster), group[i] the task of row i (rows of one task are compared);
 * predict: scores, higher is faster. */
typedef struct Model Model;
Model *model_open(char *why, size_t cap);
bool model_fit(Model *m, const float *X, const float *y, const unsigned *group, int n);
bool model_predict(Model *m, const float *X, int n, float *out);
void model_close(Model *m);

/* ---- search.c: the next point to measure in a space larger than the budget:
 * random without a model; with one, simulated annealing over the model's
 * scores, refitted on every measurement (and on an earlier log's records of
 * other sizes, each size set a group of its own). */
typedef struct Search Search;
Search *search_new(Program *prog, Kernel *k, Schedule *s, const Space *sp,
    const WorkerConfig *wc, Model *m, uint64_t seed, int batch);
bool search_next(Search *x, int *point);          /* false: nothing left */
void search_seen(Search *x, const int *point);    /* never propose it again */
void search_result(Search *x, const int *point, double speed);   /* 0: failed */
void search_prior(Search *x, const int *point, double speed, unsigned group);
int search_fits(Search *x);
/* A point's features (features.c), lowered once and cached; false if it does
 * not lower. */
bool search_features(Search *x, const int *point, float *out);

/* ---- spread.c: --mpi, measurements spread over MPI ranks ----------------
 * spread_init: false (and why) when txc was built without MPI.  Ranks > 0
 * serve (spread_serve: measure with their worker what rank 0 sends, until
 * it stops them, the records naming machine: the rank's CPU, or its GPU); rank 0 measures n points at once on up to
 * spread_width() ranks. */
bool spread_init(int *rank, int *size, char *why, size_t cap);
void spread_serve(Worker *w, const char *machine);
void spread_measure(int (*pts)[TUNE_MAX_KNOBS], int n, const int *inc, int threads,
    double timeout, Meas *out);
int spread_width(void);
void spread_finish(bool root);

/* ---- options.c: txc tune's command line -------------------------------- */
enum { MODEL_AUTO, MODEL_XGBOOST, MODEL_NONE };

typedef struct {
	const char *input, *kernel, *schedule, *log, *out, *name;
	const char *target;          /* "cpu" (timed), "vta" (the simulator's cycles) or "cuda"
	                                (timed on the GPU) */
	const char *cuda_arch;       /* --cuda-arch */
	const char **names; CmdValue *values; int ndefs;   /* -D */
	int trials, threads, samples, top;
	unsigned seed;
	double timeout, tolerance, min_sample_ms;
	int model;                   /* MODEL_AUTO, MODEL_XGBOOST, MODEL_NONE */
	bool mpi;                    /* --mpi (spread.c) */
	bool no_layout;              /* --no-layout */
	Options drv;                 /* for imports (-I) */
	LlvmOptions llvm;
} Tune;

/* -1 to go on, or the exit status (--help: 0; a bad option: 1). */
int options_parse(Tune *t, int argc, char **argv);

/* ---- tune.c: `txc tune FILE.tx ...`; returns the exit status. ---------- */
int tune_main(int argc, char **argv);

#endif
