/* worker.c: the process that compiles and measures tuning candidates.
 *
 * The tuner forks a worker before anything in it starts a thread or
 * LLVM; the worker compiles the unscheduled kernel once, runs it on
 * bench's seeded random inputs (its outputs are the reference), says it
 * is ready (the time limit of a request does not count the reference,
 * which takes long at large sizes), then answers requests over a pipe:
 * "point C against point I at T threads".
 * It compiles C (knob point -> schedule check -> lowering -> LLVM JIT),
 * runs it once and compares its outputs with the reference, then times C
 * and the incumbent I alternately, sample by sample (a sample repeats
 * the kernel until it lasts min_sample_ms), and answers the medians, the
 * median of the per-sample ratios C / I and their spread.  Running the
 * two run by run keeps the machine's drift out of the comparison, which
 * separate blocks of runs do not (TUNING-NOTES.md).
 *
 * A candidate that crashes the worker, or makes it run past the time
 * limit, is a failed trial: the tuner kills what is left, forks a new
 * worker (which computes the reference again) and goes on.
 *
 * --target=cuda: the candidates run on the GPU (or, under the test switch,
 * in libtxrt's emulator), on device copies of the inputs made once per
 * candidate; the reference still runs on the CPU.  What the driver refuses
 * to launch is an illegal point; a kernel that leaves the device in an
 * error state is a failed trial after which the worker exits, so that the
 * next request starts one with a fresh CUDA context.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tune/tune.h"

#include "lower/lower.h"
#include "rt/txrt.h"
#include "rt/vta.h"
#include "sema/sema.h"
#include "target/target.h"

typedef struct {
	int threads;
	int cand[TUNE_MAX_KNOBS];
	int inc[TUNE_MAX_KNOBS];
} Request;

struct Worker {
	const WorkerConfig *c;
	pid_t pid;
	int req_fd, rep_fd;
	bool alive;
	bool ready;          /* it has sent its byte: the reference is computed */
};

/* ---- in the worker ----------------------------------------------------------- */

typedef int (*Packed)(void **args);

typedef struct {
	bool valid;
	int point[TUNE_MAX_KNOBS];
	LlvmJit *jit;
	Packed fn;
	BenchRun *run;
} Variant;

/* On one thread a sample is the thread's CPU time: time the scheduler gives
 * to the other processes of a shared machine does not count (the kernel
 * runs on the calling thread, rt/pool.c); on more, it is wall-clock time.
 * On a GPU (--target=cuda) it is wall-clock time too: each run launches
 * its kernels and waits for them (txrt_cuda_launch is synchronous), so a
 * sample is a synchronised batch of runs timed by the host's clock. */
static clockid_t sample_clock = CLOCK_MONOTONIC;

static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) (linear between neighbours). */
static double
quantile(const double *v, int n, double q)
{
	double at = q * (n - 1);
	int lo = (int)floor(at), hi = lo + 1 < n ? lo + 1 : lo;
	return v[lo] + (v[hi] - v[lo]) * (at - lo);
}

/* The first line of what diag wrote to buf (the error a point gave). */
static void
first_error(char *dst, size_t cap, const char *buf)
{
	const char *e = buf ? strstr(buf, "error: ") : NULL;
	const char *from = e ? e + 7 : buf ? buf : "";
	size_t n = strcspn(from, "\n");
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, from, n);
	dst[n] = 0;
	if (!*dst)
		snprintf(dst, cap, "does not compile");
}

static bool
vta(const WorkerConfig *c)
{
	return c->target && !strcmp(c->target, "vta");
}

static bool
cuda(const WorkerConfig *c)
{
	return c->target && !strcmp(c->target, "cuda");
}

/* Compiles point into v; false with m->status and m->msg set. */
static bool
compile(const WorkerConfig *c, const int *point, Variant *v, BenchData *d, Meas *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	jmp_buf top;
	IrFunc *f = NULL;

	memset(v, 0, sizeof *v);
	if (fp)
		diag_set_stream(fp);
	diag_catch = &top;
	if (setjmp(top)) {
		f = NULL;   /* an internal error: reported as a failed point */
		m->status = MEAS_FAILED;
	} else {
		m->status = MEAS_ILLEGAL;
		knobs_resolve(c->s, point);
		if (schedule_check_one(c->prog, c->s)) {
			LowerOptions lo = { .target = c->target, .schedule = c->s->name,
			    .def_names = c->def_names, .def_values = c->def_values, .ndefs = c->ndefs };
			f = lower_kernel(c->prog, c->k, &lo);
		}
		if (f && vta(c)) {
			/* the VTA backend's refusals (a buffer overflows, a layout
			 * the DMA cannot express) are the schedule's errors too */
			v->jit = vta_jit_compile(&f, 1, &c->llvm);
			if (v->jit)
				m->status = MEAS_FAILED;
		} else if (f && cuda(c)) {
			/* the cuda backend's refusals (PTX it cannot write) are the
			 * schedule's errors too; the driver's come at the first run */
			v->jit = cuda_jit_compile(&f, 1, &c->llvm, c->cuda_arch);
			if (v->jit)
				m->status = MEAS_FAILED;
		} else if (f) {
			v->jit = llvm_jit_compile(&f, 1, &c->llvm);
			m->status = MEAS_FAILED;
		}
	}
	diag_catch = NULL;
	diag_set_stream(stderr);
	if (fp)
		fclose(fp);
	if (f && v->jit) {
		void *addr = llvm_jit_lookup(v->jit, arena_printf(perm, "%s__packed", c->k->name));
		memcpy(&v->fn, &addr, sizeof addr);
	}
	if (!v->fn) {
		first_error(m->msg, sizeof m->msg, buf);
		free(buf);
		diag_reset();
		return false;
	}
	free(buf);
	diag_reset();
	memcpy(v->point, point, sizeof v->point);
	/* cuda: the inputs copied to the device once, here, for all of v's runs */
	v->run = bench_run_new(d, f, cuda(c), m->msg, sizeof m->msg);
	if (!v->run) {
		m->status = MEAS_FAILED;
		m->restart = true;   /* the device may be in an error state */
		llvm_jit_free(v->jit);
		return false;
	}
	v->valid = true;
	return true;
}

static void
release(Variant *v)
{
	if (!v->valid)
		return;
	bench_run_free(v->run);
	llvm_jit_free(v->jit);
	v->valid = false;
}

/* The time of one sample of v: reps runs, per run, in ms. */
static double
sample(Variant *v, int reps)
{
	void **a = bench_run_argv(v->run);
	struct timespec t0, t1;
	clock_gettime(sample_clock, &t0);
	for (int r = 0; r < reps; r++)
		v->fn(a);
	clock_gettime(sample_clock, &t1);
	return ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6) / reps;
}

static int
reps_for(double one_ms, double min_ms)
{
	if (one_ms <= 0)
		return 1000;
	double r = ceil(min_ms / one_ms);
	return r < 1 ? 1 : r > 100000 ? 100000 : (int)r;
}

/* --target=vta: one run of v in libtxrt's simulator; its modelled time in
 * ms at VTA's 100 MHz (the cycle model: load, compute and store modules
 * overlapping), or -1 after an error.  The model is exact and the same on
 * every run, so one run is the measurement. */
static double
vta_ms(Variant *v, int *rc)
{
	txrt_vta_stats st;
	txrt_vta_stats_reset();
	*rc = v->fn(bench_run_argv(v->run));
	txrt_vta_stats_get(&st);
	return *rc ? -1 : (double)st.cycles / 1e5;
}

static void
measure(const WorkerConfig *c, BenchData *d, Variant *cand, Variant *inc, Meas *m)
{
	void **a = bench_run_argv(cand->run);
	double vta_cand = 0;
	int rc = 0;
	if (vta(c))
		vta_cand = vta_ms(cand, &rc);
	else
		rc = cand->fn(a);
	if (rc == TXRT_ERR_CUDA && cuda(c)) {
		/* what the driver (or the emulator) refuses to launch: too many
		 * threads or too much shared memory per block, registers.  When the
		 * device is still sound, an illegal point; when the kernel left it
		 * in an error state (an illegal address), a failed one, and the
		 * worker starts afresh; so is a race the emulator reports */
		snprintf(m->msg, sizeof m->msg, "%s", txrt_last_error());
		if (txrt_cuda_emu_reports() == 0 && txrt_cuda_synchronize() == 0) {
			m->status = MEAS_ILLEGAL;
			return;
		}
		m->status = MEAS_FAILED;
		m->restart = true;
		return;
	}
	if (rc != 0) {
		m->status = MEAS_FAILED;
		snprintf(m->msg, sizeof m->msg, "the entry point returned %d: %s", rc,
		    txrt_last_error());
		return;
	}
	if (!bench_run_fetch(cand->run, m->msg, sizeof m->msg)) {
		m->status = MEAS_FAILED;
		m->restart = true;
		return;
	}
	m->error = bench_run_error(d, cand->run);
	if (!(m->error <= c->tolerance)) {
		m->status = MEAS_MISMATCH;
		snprintf(m->msg, sizeof m->msg, "differs from the unscheduled kernel by %.3g",
		    m->error);
		return;
	}
	if (vta(c)) {
		double vta_inc = cand == inc ? vta_cand : vta_ms(inc, &rc);
		m->status = MEAS_OK;
		m->samples = 1;
		m->time_ms = vta_cand;
		m->inc_ms = vta_inc;
		m->ratio = vta_inc > 0 ? vta_cand / vta_inc : 1;
		m->spread = 0;
		return;
	}
	int n = c->samples < 3 ? 3 : c->samples > 64 ? 64 : c->samples;
	double tc[64], ti[64], ratio[64];
	int rcand = reps_for(sample(cand, 1), c->min_sample_ms);
	int rinc = cand == inc ? rcand : reps_for(sample(inc, 1), c->min_sample_ms);
	for (int s = 0; s < n; s++) {
		tc[s] = sample(cand, rcand);
		ti[s] = cand == inc ? tc[s] : sample(inc, rinc);
		ratio[s] = ti[s] > 0 ? tc[s] / ti[s] : 1;
		/* far slower than the incumbent after 3 samples: no need for more */
		if (s == 2 && ratio[0] > 3 && ratio[1] > 3 && ratio[2] > 3) {
			n = 3;
			break;
		}
	}
	qsort(tc, n, sizeof *tc, cmp_double);
	qsort(ti, n, sizeof *ti, cmp_double);
	qsort(ratio, n, sizeof *ratio, cmp_double);
	m->status = MEAS_OK;
	m->samples = n;
	m->time_ms = quantile(tc, n, 0.5);
	m->inc_ms = quantile(ti, n, 0.5);
	m->ratio = quantile(ratio, n, 0.5);
	m->spread = (quantile(ratio, n, 0.75) - quantile(ratio, n, 0.25)) / 2;
}

static bool
full_read(int fd, void *p, size_t n)
{
	char *b = p;
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

static bool
full_write(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n > 0) {
		ssize_t r = write(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
	}
	return true;
}

/* TXC_TUNE_CRASH_AT='ti=8 tj=16' (a point as txc tune prints it) makes the
 * worker die of SIGSEGV on that candidate, TXC_TUNE_HANG_AT hang on it: the
 * test suite's way to check that the tuner survives both (txc(1) TUNE). */
static void
test_hooks(const WorkerConfig *c, const int *point)
{
	const char *crash = getenv("TXC_TUNE_CRASH_AT"), *hang = getenv("TXC_TUNE_HANG_AT");
	if (!crash && !hang)
		return;
	Space sp = space_of(c->s);
	const char *d = space_describe(&sp, point, false);
	if (crash && !strcmp(crash, d)) {
		signal(SIGSEGV, SIG_DFL);   /* not a sanitizer's handler: die of it */
		raise(SIGSEGV);
	}
	if (hang && !strcmp(hang, d))
		for (;;)
			pause();
}

static TXC_NORETURN void
worker_loop(const WorkerConfig *c, int in, int out)
{
	Meas m;
	Request rq;
	const char *gpu = NULL;
	if (cuda(c)) {
		/* the GPU (tune.c made sure there is one), or under the test switch
		 * the emulator; the driver is loaded here, never in the tuner, which
		 * forks workers (a process may not use CUDA across a fork) */
		txrt_cuda_set_mode(c->emulate ? TXRT_CUDA_EMULATE : TXRT_CUDA_DEVICE);
		gpu = txrt_cuda_device_name();
	}
	LowerOptions lo = { .no_schedule = true, .target = "cpu", .def_names = c->def_names,
	    .def_values = c->def_values, .ndefs = c->ndefs };
	IrFunc *rf = lower_kernel(c->prog, c->k, &lo);
	LlvmJit *rj = rf ? llvm_jit_compile(&rf, 1, &c->llvm) : NULL;
	void *addr = rj ? llvm_jit_lookup(rj, arena_printf(perm, "%s__packed", c->k->name)) : NULL;
	Packed ref;
	memcpy(&ref, &addr, sizeof addr);
	BenchData *d = ref ? bench_data_new(c->k, rf, c->params, c->scalars, c->seed) : NULL;
	if (!d || ref(bench_data_argv(d)) != 0)
		_exit(3);   /* the tuner reports it: the reference does not run */
	/* ready: the time limit of the first request starts now, not before the
	 * reference (the unscheduled kernel on the CPU, long at large sizes) */
	if (!full_write(out, "R", 1))
		_exit(0);
	Variant inc = { 0 }, cand = { 0 };
	while (full_read(in, &rq, sizeof rq)) {
		memset(&m, 0, sizeof m);
		txrt_set_num_threads(rq.threads);
		sample_clock = rq.threads == 1 && !cuda(c) ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
		bool same = !memcmp(rq.cand, rq.inc, sizeof rq.cand);
		if (!inc.valid || memcmp(inc.point, rq.inc, sizeof rq.inc)) {
			release(&inc);
			if (!compile(c, rq.inc, &inc, d, &m)) {
				/* cannot happen for an incumbent the tuner measured */
				snprintf(m.msg, sizeof m.msg, "the incumbent does not compile");
				m.status = MEAS_FAILED;
				full_write(out, &m, sizeof m);
				continue;
			}
		}
		if (same) {
			measure(c, d, &inc, &inc, &m);
		} else if (compile(c, rq.cand, &cand, d, &m)) {
			test_hooks(c, rq.cand);
			measure(c, d, &cand, &inc, &m);
			release(&cand);
		}
		if (gpu)
			snprintf(m.cpu, sizeof m.cpu, "%s", gpu);   /* the machine that measured */
		if (!full_write(out, &m, sizeof m) || m.restart)
			break;   /* restart: the tuner starts a new worker for the next request */
	}
	_exit(0);
}

/* ---- in the tuner --------------------------------------------------------------- */

static bool
spawn(Worker *w)
{
	int req[2], rep[2];
	if (pipe(req) || pipe(rep))
		return false;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		close(req[1]);
		close(rep[0]);
		worker_loop(w->c, req[0], rep[1]);
	}
	close(req[0]);
	close(rep[1]);
	w->pid = pid;
	w->req_fd = req[1];
	w->rep_fd = rep[0];
	w->alive = true;
	w->ready = false;
	return true;
}

static void
reap(Worker *w, bool kill_it, Meas *m)
{
	int st = 0;
	close(w->req_fd);
	close(w->rep_fd);
	if (kill_it)
		kill(w->pid, SIGKILL);
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	w->alive = false;
	if (!m || kill_it)
		return;
	m->status = MEAS_CRASH;
	if (WIFSIGNALED(st))
		snprintf(m->msg, sizeof m->msg, "crashed (signal %d)", WTERMSIG(st));
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		snprintf(m->msg, sizeof m->msg, "the unscheduled kernel does not run at these sizes");
	else
		snprintf(m->msg, sizeof m->msg, "the worker exited (status %d)",
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

Worker *
worker_start(const WorkerConfig *c)
{
	Worker *w = arena_alloc(perm, sizeof *w);
	w->c = c;
	signal(SIGPIPE, SIG_IGN);   /* a dead worker: write fails, reported below */
	return spawn(w) ? w : NULL;
}

void
worker_measure(Worker *w, const int *cand, const int *inc, int threads, double timeout_s,
    Meas *m)
{
	Request rq = { .threads = threads };
	memset(m, 0, sizeof *m);
	memcpy(rq.cand, cand, w->c->s->nknobs * sizeof *cand);
	memcpy(rq.inc, inc, w->c->s->nknobs * sizeof *inc);
	if (!w->alive && !spawn(w)) {
		m->status = MEAS_CRASH;
		snprintf(m->msg, sizeof m->msg, "cannot start a worker process");
		return;
	}
	char ready;
	if (!w->ready && !full_read(w->rep_fd, &ready, 1)) {
		reap(w, false, m);   /* it exited: the reference does not run (status 3) */
		return;
	}
	w->ready = true;
	if (!full_write(w->req_fd, &rq, sizeof rq)) {
		reap(w, false, m);
		return;
	}
	struct pollfd pfd = { .fd = w->rep_fd, .events = POLLIN };
	double deadline = now_ms() + timeout_s * 1e3;
	for (;;) {
		double left = deadline - now_ms();
		int r = left > 0 ? poll(&pfd, 1, (int)fmin(left, 1e9)) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			reap(w, true, NULL);
			m->status = MEAS_TIMEOUT;
			snprintf(m->msg, sizeof m->msg, "ran past the time limit (%g s)", timeout_s);
			return;
		}
		break;
	}
	if (!full_read(w->rep_fd, m, sizeof *m))
		reap(w, false, m);
	else if (m->restart)
		reap(w, false, NULL);   /* it exits after this answer */
}

void
worker_stop(Worker *w)
{
	if (w && w->alive)
		reap(w, false, NULL);
}
