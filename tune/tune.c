/* tune.c: `txc tune FILE.tx -k KERNEL -s SCHEDULE -D SIZE=N ...`.
 *
 * Searches the knob points of a schedule template (sema/knobs.c) for the
 * fastest on this machine at the given sizes:
 *
 *  1. the default point (every knob's first value) is measured first and
 *     is the first incumbent;
 *  2. candidates: every point when the space is no larger than --trials
 *     (in a seeded random order), else --trials distinct random points;
 *     a point that does not compile is recorded as illegal and skipped
 *     (lowering runs here, cheaply, before the worker JIT-compiles it);
 *  3. each candidate runs in the worker process (worker.c) on one thread:
 *     checked once against the unscheduled kernel, then timed sample by
 *     sample alternately with the incumbent; it replaces the incumbent
 *     when the median of their ratios beats 1 by more than the spread;
 *  4. the best few are confirmed at --threads, each interleaved with the
 *     default point; the winner must beat it by more than the spread,
 *     else the default stays;
 *  5. a table of the best points, the tuning log (tunelog.c) and, with
 *     -o, the winner as an ordinary named schedule.
 *
 * While it runs, a progress line on standard error: trials done, the best
 * so far, its speed, the time left.  The command line is options.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tune/tune.h"
#include "auto/auto.h"

#include "lower/lower.h"
#include "parser/parser.h"
#include "rt/txrt.h"
#include "sema/sema.h"
#include "target/target.h"

/* One measured point. */
typedef struct {
	int point[TUNE_MAX_KNOBS];
	MeasStatus status;
	double time_ms, vs_default, spread;
	double confirm;              /* at --threads, against the default; 0: not confirmed */
	double confirm_spread, confirm_ms;
} Trial;

/* ---- helpers -------------------------------------------------------------------- */

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *
utc_date(void)
{
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];
	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return arena_strdup(perm, buf);
}

/* Whether point compiles (in this process: schedule checks and lowering,
 * no code generation); the first error in msg otherwise. */
static bool
legal(Program *prog, Kernel *k, Schedule *s, const WorkerConfig *wc, const int *point,
    char *msg, size_t cap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	jmp_buf top, *saved = diag_catch;
	volatile bool ok = false;

	if (fp)
		diag_set_stream(fp);
	diag_catch = &top;
	if (!setjmp(top)) {
		knobs_resolve(s, point);
		if (schedule_check_one(prog, s)) {
			LowerOptions lo = { .target = wc->target, .schedule = s->name,
			    .def_names = wc->def_names, .def_values = wc->def_values, .ndefs = wc->ndefs };
			ok = lower_kernel(prog, k, &lo) != NULL;
		}
	}
	diag_catch = saved;
	diag_set_stream(stderr);
	if (fp)
		fclose(fp);
	if (!ok) {
		const char *e = buf ? strstr(buf, "error: ") : NULL;
		const char *from = e ? e + 7 : "does not compile";
		snprintf(msg, cap, "%.*s", (int)strcspn(from, "\n"), from);
	}
	free(buf);
	diag_reset();
	return ok;
}

/* The relative path from the folder of `from` to `to` (both made absolute). */
static const char *
relative_path(const char *from, const char *to)
{
	char *a = realpath(to, NULL);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", from);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	char *b = realpath(dir, NULL);
	const char *r = to;
	if (a && b) {
		size_t i = 0, last = 0;
		while (a[i] && a[i] == b[i]) {
			if (a[i] == '/')
				last = i;
			i++;
		}
		if (!b[i] && a[i] == '/')
			last = i;   /* the folder holds the file */
		const char *up = "";
		for (const char *p = b + last; *p; p++)
			if (*p == '/' && p[1])
				up = arena_printf(perm, "%s../", up);
		r = arena_printf(perm, "%s%s", up, a + last + 1);
	}
	free(a);
	free(b);
	return r;
}

/* ---- the run ----------------------------------------------------------------------- */

typedef struct {
	Tune *t;
	Space sp;
	Schedule *s;
	Kernel *k;
	FILE *log;
	TuneRecord base;             /* the fields every record shares */
	Trial *trials; int ntrials, cap;
	int nillegal, nfailed;
	double ops;                  /* operations of one run (-1: unknown) */
	bool fl;
	double t0;
	int best;                    /* index of the best trial so far (vs the default) */
	int planned;
	bool tty;
	bool mpi;                    /* --mpi: candidates measured on the other ranks */
} Run;

/* Stops the worker and, under --mpi, the other ranks. */
static void
stop_measuring(Run *r, Worker *w)
{
	worker_stop(w);
	if (r->mpi)
		spread_finish(true);
}

static void
record(Run *r, const int *point, const char *phase, int threads, const Meas *m,
    double vs_default, const char *illegal)
{
	if (!r->log)
		return;
	TuneRecord rec = r->base;
	rec.phase = phase;
	rec.threads = threads;
	rec.knob_names = arena_alloc(perm, (r->sp.nknobs + 1) * sizeof *rec.knob_names);
	rec.knob_values = arena_alloc(perm, (r->sp.nknobs + 1) * sizeof *rec.knob_values);
	rec.nknobs = r->sp.nknobs;
	for (int i = 0; i < r->sp.nknobs; i++) {
		rec.knob_names[i] = r->s->knobs[i]->knob;
		rec.knob_values[i] = knobs_value_text(&r->s->knobs[i]->args[point[i]]);
	}
	if (m && m->cpu[0])
		rec.cpu = arena_strdup(perm, m->cpu);   /* --mpi: the rank that measured */
	if (illegal)
		rec.error = arena_printf(perm, "illegal: %s", illegal);
	else if (m->status != MEAS_OK)
		rec.error = arena_printf(perm, "%s: %s", m->status == MEAS_MISMATCH ? "mismatch" :
		    m->status == MEAS_CRASH ? "crash" : m->status == MEAS_TIMEOUT ? "timeout" :
		    m->status == MEAS_ILLEGAL ? "illegal" : "failed", m->msg);
	else {
		rec.time_ms = m->time_ms;
		rec.vs_default = vs_default;
	}
	rec.date = utc_date();
	tunelog_write(r->log, &rec);
}

static void
progress(Run *r, bool last)
{
	int done = r->ntrials;
	double el = now_s() - r->t0;
	Trial *b = &r->trials[r->best];
	double left = done > 0 ? el / done * (r->planned - done) : 0;
	char rate[48] = "";
	if (r->ops > 0 && b->time_ms > 0)
		snprintf(rate, sizeof rate, ", %.2f %s", r->ops / (b->time_ms * 1e-3) * 1e-9,
		    r->fl ? "GFLOP/s" : "GOP/s");
	if (r->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "tune: %d/%d trials (%d illegal, %d failed), best %.4g ms%s (%.2fx the "
	    "default) at %s, %.0f s left%s", done, r->planned, r->nillegal, r->nfailed, b->time_ms,
	    rate, 1 / b->vs_default, space_describe(&r->sp, b->point, false), left,
	    r->tty && !last ? "" : "\n");
	fflush(stderr);
}

static int
by_speed(const void *a, const void *b)
{
	const Trial *x = *(Trial *const *)a, *y = *(Trial *const *)b;
	double u = x->status == MEAS_OK ? x->vs_default : INFINITY;
	double v = y->status == MEAS_OK ? y->vs_default : INFINITY;
	return (u > v) - (u < v);
}

static bool
write_best(Run *r, const int *point, double speedup)
{
	Tune *t = r->t;
	FILE *fp = output_open(t->out, false);
	if (!fp)
		return false;
	knobs_resolve(r->s, point);
	fprintf(fp, "// %s: the knob point txc tune chose for %s (schedule %s of %s) at",
	    t->out, r->k->name, r->s->name ? r->s->name : "default", t->input);
	for (int i = 0; i < r->base.nsizes; i++)
		fprintf(fp, " %s=%lld", r->base.size_names[i], (long long)r->base.size_values[i]);
	if (!strcmp(t->target, "cuda"))
		fprintf(fp, ",\n// on %s%s: %s, %.2fx the default point (txc %s, %s).\n", r->base.cpu,
		    strcmp(r->base.cpu, "emulator") ? "" : " (TXC_TUNE_CUDA_EMULATE: not a timing)",
		    space_describe(&r->sp, point, false), speedup, PACKAGE_VERSION, r->base.date);
	else if (!strcmp(t->target, "vta"))
		fprintf(fp, ",\n// in libtxrt's VTA simulator (modelled cycles): %s, %.2fx the default "
		    "point (txc %s, %s).\n", space_describe(&r->sp, point, false), speedup,
		    PACKAGE_VERSION, r->base.date);
	else
		fprintf(fp, ",\n// %d thread%s on %s: %s, %.2fx the default point (txc %s, %s).\n",
		    t->threads, t->threads == 1 ? "" : "s", r->base.cpu,
		    space_describe(&r->sp, point, false), speedup, PACKAGE_VERSION, r->base.date);
	fprintf(fp, "//     txc %s%s%s -k %s -s %s\n", strcmp(t->target, "cpu") ?
	    arena_printf(perm, "--target=%s ", t->target) : "", t->no_layout ? "--no-layout " : "",
	    t->out, r->k->name, t->name);
	fprintf(fp, "import \"%s\";\n\n", relative_path(t->out, t->input));
	ast_format_schedule(fp, r->s, t->name);
	knobs_resolve(r->s, NULL);
	return output_commit(fp) && output_finish_all();
}

/* Training rows from an earlier log (--log) for the same template on this
 * machine: its records of other sizes too, each size set a group.  The
 * number of rows, or -1 after a diagnostic (a malformed log). */
static int
warm_start(Run *r, Search *x)
{
	TuneRecord *recs;
	int n, rows = 0;
	const char **groups = NULL;
	int ngroups = 0, capg = 0;
	FILE *fp = fopen(r->t->log, "r");
	if (!fp)
		return 0;
	int c = fgetc(fp);
	fclose(fp);
	if (c == EOF)
		return 0;
	if (!tunelog_read(r->t->log, &recs, &n))
		return -1;
	int point[TUNE_MAX_KNOBS];
	for (int i = 0; i < n; i++) {
		TuneRecord *rec = &recs[i];
		if (rec->error || strcmp(rec->phase, "search") || strcmp(rec->kernel, r->base.kernel) ||
		    strcmp(rec->schedule, r->base.schedule) || strcmp(rec->space, r->base.space) ||
		    strcmp(rec->target, r->base.target) || strcmp(rec->cpu, r->base.cpu) ||
		    !tunelog_point(rec, r->s, point))
			continue;
		const char *key = "";
		for (int j = 0; j < rec->nsizes; j++)
			key = arena_printf(perm, "%s %s=%lld", key, rec->size_names[j],
			    (long long)rec->size_values[j]);
		unsigned g = 0;
		while ((int)g < ngroups && strcmp(groups[g], key))
			g++;
		if ((int)g == ngroups)
			*ARENA_PUSH(perm, groups, ngroups, capg) = key;
		search_prior(x, point, 1 / rec->vs_default, g + 1);
		rows++;
	}
	return rows;
}

static int
tune(Tune *t, int mpi_rank)
{
	/* cuda: a GPU to time candidates on, and its name (the records' machine) */
	bool cuda = !strcmp(t->target, "cuda");
	bool emulate = cuda && gpu_emulate_switch();
	char gpu[256] = "";
	if (cuda && !gpu_probe(emulate, gpu, sizeof gpu)) {
		fprintf(stderr, "txc tune: --target=cuda times candidates on a GPU and finds none "
		    "here: %s\n", gpu);
		return 3;
	}
	if (emulate)
		fprintf(stderr, "txc tune: TXC_TUNE_CUDA_EMULATE is set: candidates run in libtxrt's "
		    "emulator, and their times mean nothing (a switch for testing)\n");
	uint32_t file = cmdline_load(t->input, t->names, t->values, t->ndefs);
	if (!file)
		return 1;
	/* calls rewritten by the target's layout declarations, as txc
	 * compiles them (tx.5 LAYOUTS): the nest tuned is the one compiled */
	layouts_set_target(t->target, !t->no_layout);
	Program *prog = parse_program(file);
	auto_target_isa(NULL, t->llvm.cpu, t->llvm.features);   /* the isa knob's default */
	if (diag_errors() || !import_resolve(prog, &t->drv) ||
	    !import_target_table(prog, t->target) || !sema_check(prog))
		return 1;
	Kernel *k = cmdline_kernel(prog, t->kernel, t->input);
	if (!k)
		return 1;
	/* no template for the target (or -s auto): the generated one
	 * (auto/attach.c), at the -D sizes; its illegal points are illegal
	 * here, not a quiet fall back to the naive nest */
	if (auto_wanted(prog, k, t->target, t->schedule, false)) {
		/* the integer -D values (sizes; a float scalar is none) */
		const char **an = arena_alloc(perm, (t->ndefs + 1) * sizeof *an);
		int64_t *av = arena_alloc(perm, (t->ndefs + 1) * sizeof *av);
		int na = 0;
		for (int d = 0; d < t->ndefs; d++)
			if (t->values[d].integer) {
				an[na] = t->names[d];
				av[na++] = t->values[d].i;
			}
		AutoRequest ar = { .target = t->target, .cpu = t->llvm.cpu,
		    .features = t->llvm.features, .cuda_arch = t->cuda_arch, .defs = an, .vals = av,
		    .ndefs = na, .tmpl = true };
		if (!auto_attach(prog, k, &ar))
			return 1;
		for (int i = 0; i < prog->nschedules; i++) {
			Schedule *g = prog->schedules[i];
			if (g && g->generated && g->k == k && !strcmp(g->target, t->target)) {
				g->generated = false;
				t->schedule = g->name;
			}
		}
	}
	LowerOptions flo = { .target = t->target, .schedule = t->schedule };
	Schedule *s = lower_find_schedule(prog, k, &flo);
	if (!s || s->nknobs == 0) {
		diag_error(s ? s->loc : k->name_loc, "%s %s of '%s' for %s %s; txc tune searches "
		    "the knobs of a template (txc-schedule(7) TEMPLATES)",
		    t->schedule ? "schedule" : "the", t->schedule ? t->schedule : "unnamed schedule",
		    k->name, t->target, s ? "declares no knobs" : "does not exist");
		return 1;
	}
	if (s->nknobs > TUNE_MAX_KNOBS) {
		diag_error(s->loc, "a template of more than %d knobs", TUNE_MAX_KNOBS);
		return 1;
	}

	Run r = { .t = t, .s = s, .k = k, .sp = space_of(s), .best = 0, .mpi = t->mpi };
	WorkerConfig *wc = arena_alloc(perm, sizeof *wc);
	wc->prog = prog;
	wc->k = k;
	wc->s = s;
	wc->target = t->target;
	wc->cuda_arch = t->cuda_arch;
	wc->emulate = emulate;
	wc->params = arena_alloc(perm, (k->nparams + 1) * sizeof *wc->params);
	wc->scalars = arena_alloc(perm, (k->nparams + 1) * sizeof *wc->scalars);
	bool ok = true;
	int capn = 0, capv = 0;
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		const CmdValue *v = NULL;
		for (int d = 0; d < t->ndefs; d++)
			if (t->names[d] == pa->name)
				v = &t->values[d];
		wc->params[i] = 1;   /* a scalar parameter not given is 1 */
		wc->scalars[i] = 1;
		if (!v && pa->is_size) {
			diag_error(pa->loc, "size '%s' needs a value: txc tune -D %s=N", pa->name, pa->name);
			ok = false;
		} else if (pa->is_size && !cmdline_size("tune", pa, v, &wc->params[i])) {
			ok = false;
		} else if (!pa->is_size && v && !cmdline_scalar("tune", pa, v)) {
			ok = false;
		} else if (!pa->is_size && v) {
			wc->params[i] = v->i;
			wc->scalars[i] = v->f;
		}
		if (pa->is_size && v) {
			int n = wc->ndefs;
			*ARENA_PUSH(perm, wc->def_names, wc->ndefs, capn) = pa->name;
			*ARENA_PUSH(perm, wc->def_values, n, capv) = wc->params[i];
		}
	}
	if (!cmdline_defs_known(k, t->names, t->ndefs))
		ok = false;
	if (!ok)
		return 1;
	wc->seed = t->seed;
	wc->tolerance = t->tolerance;
	wc->samples = t->samples;
	wc->min_sample_ms = t->min_sample_ms;
	wc->llvm = t->llvm;
	if (t->threads == 0)
		t->threads = txrt_get_num_threads();

	/* the operation count, for the rate in the progress line */
	LowerOptions ulo = { .no_schedule = true, .target = "cpu", .def_names = wc->def_names,
	    .def_values = wc->def_values, .ndefs = wc->ndefs };
	IrFunc *uf = lower_kernel(prog, k, &ulo);
	if (!uf)
		return 1;
	r.ops = benchops_count(k, uf, wc->params, &r.fl);

	/* what every record shares */
	r.base.kernel = k->name;
	r.base.schedule = s->name ? s->name : "default";
	r.base.space = arena_printf(perm, "%016llx", (unsigned long long)knobs_space_hash(s));
	r.base.target = t->target;
	r.base.cpu = cuda ? arena_strdup(perm, gpu) : t->llvm.cpu ? t->llvm.cpu : tunelog_cpu();
	r.base.features = cuda ? (t->cuda_arch ? t->cuda_arch : "sm_80") :
	    t->llvm.features ? t->llvm.features : tunelog_features();
	r.base.size_names = wc->def_names;
	r.base.size_values = wc->def_values;
	r.base.nsizes = wc->ndefs;
	r.base.version = PACKAGE_VERSION;
	r.base.date = utc_date();
	if (t->log) {
		r.log = fopen(t->log, "a");
		if (!r.log) {
			diag_error(loc_none, "cannot open the tuning log '%s': %s", t->log, strerror(errno));
			return 1;
		}
	}
	r.tty = isatty(2);
	if (t->mpi && mpi_rank > 0) {
		/* a measuring rank: serve rank 0 until it is done */
		if (r.log)
			fclose(r.log);
		Worker *w = worker_start(wc);
		if (!w)
			return 1;
		spread_serve(w, cuda ? r.base.cpu : tunelog_cpu());
		worker_stop(w);
		spread_finish(false);
		return 0;
	}

	/* the candidates: a sweep of a small space, else distinct random points */
	uint64_t rng = t->seed * 0x9e3779b97f4a7c15ULL + 1;
	uint64_t nidx = r.sp.size <= (double)t->trials + 1 ? (uint64_t)r.sp.size : 0;
	uint64_t *order = NULL;
	if (nidx) {
		order = arena_alloc(perm, nidx * sizeof *order);
		for (uint64_t i = 0; i < nidx; i++)
			order[i] = i;
		for (uint64_t i = nidx - 1; i > 1; i--) {   /* index 0 (the default) stays first */
			uint64_t j = 1 + space_rand(&rng) % i;
			uint64_t x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
	}
	r.planned = nidx ? (int)nidx : t->trials + 1;
	/* vta: the simulator's cycle model is the measure, exact and the same
	 * at any thread count */
	bool vta = !strcmp(t->target, "vta");
	const char *at = vta ? "in modelled cycles (libtxrt's VTA simulator, 100 MHz)" :
	    emulate ? "in libtxrt's emulator (its times mean nothing)" :
	    cuda ? arena_printf(perm, "on %s", gpu) :
	    arena_printf(perm, "at %d thread%s", t->threads, t->threads == 1 ? "" : "s");
	printf("tuning %s (schedule %s of %s): %.0f knob points, %s; %d trial%s %s, "
	    "the best %d confirmed %s\n", k->name, r.base.schedule, t->input,
	    r.sp.size, nidx ? "every point" : "random points", r.planned,
	    r.planned == 1 ? "" : "s", vta ? "in the simulator" : emulate ? "in the emulator" :
	    cuda ? "on the GPU" : "on 1 thread", t->top, at);
	fflush(stdout);

	Worker *w = worker_start(wc);
	if (!w) {
		diag_error(loc_none, "cannot start a worker process: %s", strerror(errno));
		return 1;
	}

	/* the cost model, where the budget does not cover the space (loaded after
	 * the worker is forked: the worker never has XGBoost in it) */
	Model *model = NULL;
	char why[256] = "";
	if (!nidx && t->model != MODEL_NONE) {
		model = model_open(why, sizeof why);
		if (!model && t->model == MODEL_XGBOOST) {
			diag_error(loc_none, "--model=xgboost: cannot load XGBoost (%s); install "
			    "libxgboost-dev, or tune with --model=none", why);
			stop_measuring(&r, w);
			return 1;
		}
	}
	if (!nidx)
		printf("model: %s\n", model ? "XGBoost (libxgboost.so.0, rank:pairwise), refitted on "
		    "every batch; simulated annealing over its scores" : t->model == MODEL_NONE ?
		    "none (--model=none): random points" : arena_printf(perm, "none, XGBoost is not "
		    "available (%s; Debian's libxgboost-dev has it): random points", why));
	int sbatch = t->trials / 8 < 4 ? 4 : t->trials / 8 > 16 ? 16 : t->trials / 8;
	Search *x = search_new(prog, k, s, &r.sp, wc, model, t->seed, sbatch);
	int nprior = model ? warm_start(&r, x) : 0;
	if (nprior < 0) {
		stop_measuring(&r, w);
		return 1;
	}
	if (nprior > 0)
		printf("model: warm-started from %d records of %s\n", nprior, t->log);
	fflush(stdout);
	r.t0 = now_s();
	int inc[TUNE_MAX_KNOBS] = { 0 }, point[TUNE_MAX_KNOBS] = { 0 };
	double inc_vs = 1;
	char msg[200];
	int attempts = 0, max_attempts = 20 * r.planned + 100;
	/* Candidates go in batches, one per measuring rank (--mpi), else one at
	 * a time; each is measured against the incumbent at the batch's start.
	 * Illegal points are recorded as they are found. */
	int width = r.mpi ? spread_width() : 1;
	int (*batch)[TUNE_MAX_KNOBS] = arena_alloc(perm, (size_t)width * sizeof *batch);
	Meas *ms = arena_alloc(perm, (size_t)width * sizeof *ms);
	uint64_t n = 0;
	bool done = false;
	while (!done && r.ntrials < r.planned && attempts < max_attempts) {
		int nb = 0;
		bool first = n == 0;
		while (nb < (first ? 1 : width) && r.ntrials + nb < r.planned &&
		    attempts < max_attempts) {
			attempts++;
			if (nidx) {
				if (n >= nidx) {
					done = true;
					break;
				}
				space_point(&r.sp, order[n], point);
			} else if (n == 0) {
				space_point(&r.sp, 0, point);   /* the default point */
			} else if (!search_next(x, point)) {   /* a point not tried yet (search.c) */
				done = true;   /* the space is exhausted */
				break;
			}
			n++;
			search_seen(x, point);
			if (!legal(prog, k, s, wc, point, msg, sizeof msg)) {
				if (first) {
					diag_error(s->loc, "the default point of the template does not "
					    "compile: %s", msg);
					stop_measuring(&r, w);
					return 1;
				}
				r.nillegal++;
				if (nidx)
					r.planned--;
				record(&r, point, "search", 1, NULL, 0, msg);
				continue;
			}
			memcpy(batch[nb++], point, sizeof point);
		}
		if (nb == 0)
			continue;
		if (r.mpi && !first)
			spread_measure(batch, nb, inc, 1, t->timeout, ms);
		else
			for (int i = 0; i < nb; i++)
				worker_measure(w, batch[i], first ? batch[i] : inc, 1, t->timeout, &ms[i]);
		double batch_inc_vs = inc_vs;
		for (int i = 0; i < nb; i++) {
			Meas *m = &ms[i];
			Trial *tr = ARENA_PUSH(perm, r.trials, r.ntrials, r.cap);
			memset(tr, 0, sizeof *tr);
			memcpy(tr->point, batch[i], sizeof tr->point);
			tr->status = m->status;
			if (first && m->status != MEAS_OK) {
				diag_error(s->loc, "the default point of the template fails: %s", m->msg);
				stop_measuring(&r, w);
				return 1;
			}
			if (m->status == MEAS_OK) {
				tr->time_ms = m->time_ms;
				tr->vs_default = first ? 1 : m->ratio * batch_inc_vs;
				tr->spread = m->spread;
				if (!first && m->ratio + m->spread < 1 && tr->vs_default < inc_vs) {
					memcpy(inc, batch[i], sizeof inc);
					inc_vs = tr->vs_default;
				}
				if (tr->vs_default < r.trials[r.best].vs_default)
					r.best = r.ntrials - 1;
			} else if (m->status == MEAS_ILLEGAL) {
				/* refused past lowering (vta: a buffer overflows) */
				r.nillegal++;
			} else {
				r.nfailed++;
				if (m->status == MEAS_MISMATCH)
					fprintf(stderr, "%stxc tune: %s %s: a wrong result (a compiler bug; "
					    "please report it)\n", r.tty ? "\n" : "", k->name,
					    space_describe(&r.sp, batch[i], true));
			}
			search_result(x, batch[i], m->status == MEAS_OK ? 1 / tr->vs_default : 0);
			record(&r, batch[i], "search", 1, m, tr->vs_default, NULL);
			if (r.tty || r.ntrials % (r.planned / 10 + 1) == 0)
				progress(&r, false);
		}
	}
	if (r.ntrials > 0)
		progress(&r, true);

	/* confirm the best few at --threads, each against the default point */
	Trial **rank = arena_alloc(perm, (r.ntrials + 1) * sizeof *rank);
	for (int i = 0; i < r.ntrials; i++)
		rank[i] = &r.trials[i];
	qsort(rank, r.ntrials, sizeof *rank, by_speed);
	int ntop = 0;
	Trial *winner = &r.trials[0];   /* the default point */
	int zero[TUNE_MAX_KNOBS] = { 0 };
	for (int i = 0; i < r.ntrials && ntop < t->top; i++) {
		Trial *tr = rank[i];
		if (tr->status != MEAS_OK || tr == &r.trials[0])
			continue;
		ntop++;
		Meas m;
		worker_measure(w, tr->point, zero, t->threads, t->timeout, &m);
		if (m.status != MEAS_OK) {
			record(&r, tr->point, "confirm", t->threads, &m, 0, NULL);
			continue;
		}
		tr->confirm = m.ratio;
		tr->confirm_spread = m.spread;
		tr->confirm_ms = m.time_ms;
		record(&r, tr->point, "confirm", t->threads, &m, m.ratio, NULL);
		if (m.ratio + m.spread < 1 && (winner == &r.trials[0] || m.ratio < winner->confirm))
			winner = tr;
	}
	stop_measuring(&r, w);
	if (winner == &r.trials[0]) {
		/* the default point at --threads, for the record and -o */
		winner->confirm = 1;
	}
	Meas wm = { .status = MEAS_OK, .time_ms = winner->confirm_ms ? winner->confirm_ms :
	    winner->time_ms };
	record(&r, winner->point, "best", t->threads, &wm, winner->confirm, NULL);

	/* the table */
	printf("\n  %-4s %-40s %12s %10s %16s\n", "rank", "knobs", vta ? "modelled" :
	    cuda ? "GPU" : "1 thread", "vs default", vta || cuda ? "confirmed" :
	    arena_printf(perm, "%d thread%s", t->threads, t->threads == 1 ? "" : "s"));
	int shown = 0;
	for (int i = 0; i < r.ntrials && shown < 8; i++) {
		Trial *tr = rank[i];
		if (tr->status != MEAS_OK)
			continue;
		shown++;
		char conf[48] = "-";
		if (tr->confirm > 0 && tr != &r.trials[0])
			snprintf(conf, sizeof conf, "%.2fx (+-%.0f%%)", 1 / tr->confirm,
			    100 * tr->confirm_spread / tr->confirm);
		printf("  %-4d %-40s %9.4g ms %9.2fx %16s%s%s\n", shown,
		    space_describe(&r.sp, tr->point, false), tr->time_ms, 1 / tr->vs_default, conf,
		    tr == &r.trials[0] ? "  (default)" : "", tr == winner ? "  <- chosen" : "");
	}
	if (model)
		printf("\nthe model was fitted %d times", search_fits(x));
	model_close(model);
	printf("\n%d trials, %d illegal points skipped, %d failed; ", r.ntrials, r.nillegal,
	    r.nfailed);
	if (winner == &r.trials[0])
		printf("no point beat the default by more than the noise %s: the default stays\n",
		    at);
	else
		printf("chosen: %s, %.2fx the default %s\n",
		    space_describe(&r.sp, winner->point, false), 1 / winner->confirm, at);
	if (r.log)
		fclose(r.log);
	if (t->out && !write_best(&r, winner->point, 1 / winner->confirm))
		return 1;
	return 0;
}

int
tune_main(int argc, char **argv)
{
	Tune t = { 0 };
	int rc = options_parse(&t, argc, argv);
	if (rc >= 0)
		return rc;
	int rank = 0, size = 1;
	if (t.mpi) {
		char why[200];
		if (!spread_init(&rank, &size, why, sizeof why)) {
			fprintf(stderr, "txc tune: --mpi: %s\n", why);
			return 1;
		}
		if (size < 2) {
			fprintf(stderr, "txc tune: --mpi needs 2 ranks or more (mpirun -n 3 txc tune "
			    "--mpi ...): rank 0 searches, the others measure\n");
			spread_finish(false);
			return 1;
		}
	}
	rc = tune(&t, rank);
	diag_flush();
	if (rc)
		output_abort_all();
	return rc;
}
