/* pool.c: libtxrt's thread pool and parallel_for.
 *
 * Workers are created on the first parallel loop and persist.  Each has its
 * own slot (the loop to help with) and ticket; the caller fills the slots,
 * bumps the tickets and works on the loop itself, then waits for a shared
 * pending count to reach zero.  Iterations are handed out dynamically:
 * every thread takes the next chunk from a shared counter until none is
 * left, so a thread the OS preempts (another process on the core) or a
 * chunk that costs more (a loop's partitioned tail) delays the loop by one
 * chunk, not by a whole static share.  Chunks shrink as the loop runs out
 * (guided self-scheduling, next_chunk): large ones first, single
 * iterations of a coarse loop last.  Both sides spin a little before they
 * sleep on a condition variable, so back-to-back loops cost no system
 * call.  A sleeping flag set before re-checking (and read after
 * publishing) keeps wake-ups from being lost: with sequentially
 * consistent atomics one side always sees the other.
 *
 * A parallel loop inside a parallel loop, or one started while another
 * thread owns the pool, runs serially on the calling thread.  A child of
 * fork() has none of the workers, so it starts with an empty pool, as a
 * new process does (fork_child).
 *
 * On Linux each new worker starts on a CPU of its own, the allowed ones
 * after the caller's, and then widens its mask back to all of them
 * (start_workers, worker_main): a thread is created on its creator's CPU,
 * and a spinning pair can share it for the whole of a short program.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE   /* cpu_set_t, pthread_attr_setaffinity_np, sched_getcpu */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "txrt.h"

#define TXRT_MSG_MAX 512

#define SPIN_LIMIT 4000
#define MAX_THREADS 1024

typedef struct {
	pthread_t tid;
	pthread_cond_t wake;
	atomic_uint_fast64_t ticket;   /* bumped once per chunk given */
	atomic_int sleeping;
	/* the loop to help with: written by the caller before the ticket */
	txrt_task fn;
	void *closure;
} Worker;

static pthread_mutex_t job_mu = PTHREAD_MUTEX_INITIALIZER;   /* one loop at a time */
#ifdef __linux__
static cpu_set_t allowed;         /* the process's CPUs when the workers started */
static bool placed;               /* workers were started on CPUs of their own */
#endif
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;       /* sleeping and waking */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static Worker *workers;
static int nworkers;
static int want;                 /* threads wanted, caller included; 0: default */
static atomic_int stopping;
static atomic_int pending;       /* chunks still running on workers */
static atomic_int caller_sleeping;
static atomic_int first_err;     /* the first error code of this loop */
static atomic_int_fast64_t next_iter;   /* the first iteration not handed out */
static int64_t loop_end, loop_grain;    /* of the loop running (set before tickets) */
static int64_t loop_threads;
static char err_msg[TXRT_MSG_MAX];
static _Thread_local bool in_parallel;

/* Busy-waits briefly, then yields the CPU (when threads outnumber cores,
 * the thread being waited for may need it). */
static void
cpu_relax(int spins)
{
	if (spins > 64) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int
default_threads(void)
{
	const char *s = getenv("TXRT_NUM_THREADS");
	long n = 0;

	if (s && *s) {
		char *end;
		n = strtol(s, &end, 10);
		if (*end || n <= 0)
			n = 0;
	}
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* The next chunk of the current loop, [*b, *e): a share of what is left,
 * left / (2 * threads), never fewer than loop_grain iterations (guided
 * self-scheduling).  The first chunks are large, the last ones small, so
 * the threads finish together: with fixed chunks of a quarter of a
 * thread's share, a loop of 22 blocks of a matrix product on 2 threads
 * ended with one thread running a last chunk of 2 blocks alone. */
static bool
next_chunk(int64_t *b, int64_t *e)
{
	int64_t cur = atomic_load(&next_iter);

	for (;;) {
		if (cur >= loop_end)
			return false;
		int64_t left = loop_end - cur, c = left / (2 * loop_threads);
		if (c < loop_grain)
			c = loop_grain;
		if (c > left)
			c = left;
		if (atomic_compare_exchange_weak(&next_iter, &cur, cur + c)) {
			*b = cur;
			*e = cur + c;
			return true;
		}
	}
}

/* Runs chunks of the current loop until none is left, and records the
 * first failure (after which no more chunks are handed out). */
static void
run_chunks(txrt_task fn, void *closure, bool is_caller)
{
	int64_t b, e;

	while (next_chunk(&b, &e)) {
		int rc = fn(closure, b, e);
		int zero = 0;

		if (rc == 0)
			continue;
		atomic_store(&next_iter, loop_end);
		if (atomic_compare_exchange_strong(&first_err, &zero, rc) && !is_caller) {
			pthread_mutex_lock(&mu);
			strncpy(err_msg, txrt_last_error(), sizeof err_msg - 1);
			err_msg[sizeof err_msg - 1] = '\0';
			pthread_mutex_unlock(&mu);
		}
		return;
	}
}

static void *
worker_main(void *arg)
{
	Worker *w = arg;
	uint_fast64_t seen = 0;

	in_parallel = true;
#ifdef __linux__
	if (placed)   /* started on a CPU of its own: the OS may move it from now on */
		sched_setaffinity(0, sizeof allowed, &allowed);
#endif
	for (;;) {
		int spins = 0;
		while (atomic_load(&w->ticket) == seen && !atomic_load(&stopping)) {
			if (++spins < SPIN_LIMIT) {
				cpu_relax(spins);
				continue;
			}
			pthread_mutex_lock(&mu);
			atomic_store(&w->sleeping, 1);
			while (atomic_load(&w->ticket) == seen && !atomic_load(&stopping))
				pthread_cond_wait(&w->wake, &mu);
			atomic_store(&w->sleeping, 0);
			pthread_mutex_unlock(&mu);
		}
		if (atomic_load(&w->ticket) == seen)
			return NULL;   /* stopping */
		seen = atomic_load(&w->ticket);
		run_chunks(w->fn, w->closure, false);
		if (atomic_fetch_sub(&pending, 1) == 1 && atomic_load(&caller_sleeping)) {
			pthread_mutex_lock(&mu);
			pthread_cond_signal(&done_cv);
			pthread_mutex_unlock(&mu);
		}
	}
}

/* Stops and joins every worker (job_mu held). */
static void
stop_workers(void)
{
	atomic_store(&stopping, 1);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nworkers; i++)
		pthread_cond_signal(&workers[i].wake);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < nworkers; i++) {
		pthread_join(workers[i].tid, NULL);
		pthread_cond_destroy(&workers[i].wake);
	}
	free(workers);
	workers = NULL;
	nworkers = 0;
	atomic_store(&stopping, 0);
}

/* fork(): the locks are taken so that no loop is being handed out at the
 * fork; the child, where only the forking thread exists, drops the
 * workers it does not have (Python's multiprocessing and PyTorch's data
 * loaders fork after kernels ran; a kept pool would wait forever). */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&job_mu);
	pthread_mutex_lock(&mu);
}

static void
fork_parent(void)
{
	pthread_mutex_unlock(&mu);
	pthread_mutex_unlock(&job_mu);
}

static void
fork_child(void)
{
	free(workers);
	workers = NULL;
	nworkers = 0;
	atomic_store(&pending, 0);
	atomic_store(&caller_sleeping, 0);
	pthread_cond_init(&done_cv, NULL);
	pthread_mutex_unlock(&mu);
	pthread_mutex_unlock(&job_mu);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void
fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Makes the pool hold want - 1 workers (job_mu held); fewer if threads
 * cannot be created. */
static void
start_workers(void)
{
	int n;

	if (want == 0)
		want = default_threads();
	n = want - 1;
	if (nworkers == n)
		return;
	if (nworkers)
		stop_workers();
	if (n <= 0)
		return;
	pthread_once(&fork_once, fork_register);
	workers = calloc(n, sizeof *workers);
	if (!workers)
		return;
	/* Where a thread starts: a new one runs on its creator's CPU until
	 * the OS balances the load, and a pair that spins (sched_yield) can
	 * share that CPU for the whole of a short program.  On a 2-vCPU Zen 4
	 * a depthwise convolution of 80 us ran at 69 GFLOP/s on 2 threads (1
	 * thread: 88) in 3 runs of 8, with 400 context switches and no
	 * migration, and at 147 in the others.  So worker i starts on the
	 * (i + 1)-th allowed CPU after the caller's, then widens its mask
	 * back to all of them (worker_main). */
#ifdef __linux__
	int ncpu = 0, me = sched_getcpu();
	if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
		ncpu = CPU_COUNT(&allowed);
	placed = ncpu > 1 && me >= 0 && me < CPU_SETSIZE && CPU_ISSET(me, &allowed);
#endif
	for (int i = 0; i < n; i++) {
		Worker *w = &workers[i];
		pthread_attr_t *ap = NULL;
		pthread_cond_init(&w->wake, NULL);
		atomic_init(&w->ticket, 0);
		atomic_init(&w->sleeping, 0);
#ifdef __linux__
		pthread_attr_t attr;
		if (placed && pthread_attr_init(&attr) == 0) {
			/* the (i % (ncpu - 1) + 1)-th allowed CPU after mine */
			int skip = i % (ncpu - 1) + 1, c = me;
			while (skip > 0) {
				c = (c + 1) % CPU_SETSIZE;
				if (CPU_ISSET(c, &allowed))
					skip--;
			}
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			ap = &attr;
			if (pthread_attr_setaffinity_np(&attr, sizeof one, &one) != 0) {
				pthread_attr_destroy(&attr);
				ap = NULL;
			}
		}
#endif
		int rc = pthread_create(&w->tid, ap, worker_main, w);
		if (rc != 0 && ap)   /* placement refused: where the OS puts it */
			rc = pthread_create(&w->tid, NULL, worker_main, w);
		if (ap)
			pthread_attr_destroy(ap);
		if (rc != 0) {
			pthread_cond_destroy(&w->wake);
			break;
		}
		nworkers++;
	}
}

int
txrt_parallel_for(txrt_task fn, void *closure, int64_t begin, int64_t end)
{
	int64_t n = end - begin;
	int nthreads, rc;

	if (n <= 0)
		return 0;
	if (in_parallel || pthread_mutex_trylock(&job_mu) != 0)
		return fn(closure, begin, end);
	start_workers();
	nthreads = nworkers + 1;
	if (n < nthreads)
		nthreads = (int)n;
	if (nthreads <= 1) {
		pthread_mutex_unlock(&job_mu);
		in_parallel = true;
		rc = fn(closure, begin, end);
		in_parallel = false;
		return rc;
	}
	/* chunks shrink as the loop runs out (next_chunk), down to a
	 * sixteenth of a thread's share: few enough to keep per-chunk costs
	 * (a closure's reloads) small in loops of many short iterations */
	loop_threads = nthreads;
	loop_grain = n / (16 * (int64_t)nthreads);
	if (loop_grain < 1)
		loop_grain = 1;
	loop_end = end;
	atomic_store(&next_iter, begin);
	atomic_store(&first_err, 0);
	atomic_store(&pending, nthreads - 1);
	for (int i = 1; i < nthreads; i++) {
		Worker *w = &workers[i - 1];
		w->fn = fn;
		w->closure = closure;
		atomic_fetch_add(&w->ticket, 1);
		if (atomic_load(&w->sleeping)) {
			pthread_mutex_lock(&mu);
			pthread_cond_signal(&w->wake);
			pthread_mutex_unlock(&mu);
		}
	}
	in_parallel = true;
	run_chunks(fn, closure, true);
	in_parallel = false;
	for (int spins = 0; atomic_load(&pending) > 0; spins++) {
		if (spins < SPIN_LIMIT) {
			cpu_relax(spins);
			continue;
		}
		pthread_mutex_lock(&mu);
		atomic_store(&caller_sleeping, 1);
		while (atomic_load(&pending) > 0)
			pthread_cond_wait(&done_cv, &mu);
		atomic_store(&caller_sleeping, 0);
		pthread_mutex_unlock(&mu);
	}
	rc = atomic_load(&first_err);
	if (rc != 0 && err_msg[0]) {
		txrt_set_error("%s", err_msg);
		err_msg[0] = '\0';
	}
	pthread_mutex_unlock(&job_mu);
	return rc;
}

int
txrt_get_num_threads(void)
{
	int n;

	pthread_mutex_lock(&job_mu);
	if (want == 0)
		want = default_threads();
	n = want;
	pthread_mutex_unlock(&job_mu);
	return n;
}

void
txrt_set_num_threads(int n)
{
	pthread_mutex_lock(&job_mu);
	want = n <= 0 ? default_threads() : n > MAX_THREADS ? MAX_THREADS : n;
	pthread_mutex_unlock(&job_mu);
}
