/* cuda_emu.c: libtxrt's CPU emulator of CUDA kernels and its checker.
 *
 * txc compiles each CUDA kernel twice: to PTX, and to host code (the
 * kernel's `emu` function) that reads its thread and block ids with
 * txrt_emu_id, waits at __syncthreads with txrt_emu_barrier, finds its
 * dynamic shared memory with txrt_emu_shared and announces every load and
 * store with txrt_emu_access.  The emulator runs the blocks of a launch
 * one after another (x fastest), and the threads of a block as fibers
 * (fiber.h), one each with a stack of its own, on the calling OS thread:
 * thread 0 runs until it reaches a barrier or the end of the kernel, then
 * thread 1, and so on; when every thread waits at the barrier, a new
 * barrier interval (epoch) starts and they all run on from it.  If some
 * threads wait while the others have finished, the barrier can never
 * complete: that is reported and the launch stopped.  A barrier that
 * counts n threads (bar.sync 1, n: a warp-specialised kernel's consumers,
 * txrt_emu_barrier_n) completes when n wait at it.  A thread in an
 * mbarrier wait whose phase has not completed (cuda_emu_hopper.c) lets
 * the others run, and runs again once it has; an arrival that completes
 * a phase runs the threads waiting for it before any other (run_all); a
 * block where no thread can go on while one is in such a wait is reported
 * (it would wait forever).
 *
 * The checker (TXRT_CUDA_CHECK=0 turns it off) sees each access before it
 * happens.  An index out of its buffer's bounds is reported and stops the
 * launch before the access is made.  For shared buffers, which live in the
 * block's arena, a shadow entry per arena byte holds the epoch and thread
 * of the last write and the epoch and first two threads of the reads of
 * the current epoch.  In one epoch, a byte written by two threads, read by
 * one after another wrote it, or written by one after another read it is
 * a race (nothing orders the two on a GPU); a read of a byte not written
 * since the block started gets the arena's poison (0xff bytes) and is
 * reported too.  A thread never races with itself.  An asynchronous copy
 * (cp.async) is a write when it is issued and again when it lands, at its
 * thread's wait_group; in between, any access to its bytes is reported
 * (a read before the wait: the data may not be there), and a thread that
 * ends with copies not waited for is too.  A wgmma (Hopper's warpgroup
 * tensor cores, txrt_emu_wgmma) reads its operands through their matrix
 * descriptors, each byte checked as a read at the call, and its group is
 * in flight until the thread's wgmma wait for it: the end of the thread
 * or a touch of the fragment's registers (fill, store) before it is
 * reported (the results themselves are written at the call).  The
 * tensor cores may read the operands at any time up to the wait, so the
 * bytes a group reads stay marked (Shadow.wgread) until every thread of
 * the warpgroup has waited for it, and a write to one of them (a store,
 * a cp.async issued or landing, a TMA load) is reported.  Every report is
 * counted; the first ten of a launch are printed on stderr, and the first
 * becomes the launch's error.
 *
 * Launches are emulated one at a time (a mutex); the fibers' stacks, the
 * arena and the shadow are kept for the next.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_emu.h"

#if defined(__SANITIZE_ADDRESS__)
#define EMU_STACK (1024 * 1024)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_STACK (1024 * 1024)
#endif
#endif
#ifndef EMU_STACK
#define EMU_STACK (256 * 1024)   /* virtual: pages are touched as a kernel uses them */
#endif

#define MAX_PRINTED 10
#define NOBODY 0xffff
/* epochs restart (and the shadow is cleared) before they could wrap */
#define EPOCH_LIMIT 0xf0000000u


static pthread_mutex_t emu_mu = PTHREAD_MUTEX_INITIALIZER;
static Emu emu;
static Thread *threads;          /* CUDA_EMU_MAX_THREADS of them ... */
static int nstacks;              /* ... the first nstacks with a stack */
unsigned char *cuda_emu_arena;
static size_t arena_cap;
Shadow *cuda_emu_shadow;
static size_t shadow_cap;
static uint32_t epoch, block_epoch;

_Thread_local Emu *cuda_emu_cur;    /* while this OS thread emulates a launch */
static _Thread_local int64_t last_reports;

int64_t
txrt_cuda_emu_reports(void)
{
	return last_reports;
}

void
cuda_emu_clear_reports(void)
{
	last_reports = 0;
}

/* ---- reports ---------------------------------------------------------------- */

static const char *
buffer_name(const txrt_cuda_kernel *k, int buf, char *tmp, size_t n)
{
	if (k->buffers && buf >= 0 && buf < k->nbuffers && k->buffers[buf])
		return k->buffers[buf];
	snprintf(tmp, n, "#%d", buf);
	return tmp;
}

static int
buffer_kind(const txrt_cuda_kernel *k, int buf)
{
	if (k->buffer_kinds && buf >= 0 && buf < k->nbuffers)
		return k->buffer_kinds[buf];
	return 0;
}

/* "(x,y,z)" of thread index i */
const char *
cuda_emu_thread_name(const Emu *e, int i, char *buf, size_t n)
{
	int64_t bx = e->ids[6], by = e->ids[7];
	snprintf(buf, n, "(%lld,%lld,%lld)", (long long)(i % bx), (long long)(i / bx % by),
	    (long long)(i / (bx * by)));
	return buf;
}

const char *
cuda_emu_block_name(const Emu *e, char *buf, size_t n)
{
	snprintf(buf, n, "(%lld,%lld,%lld)", (long long)e->ids[3], (long long)e->ids[4],
	    (long long)e->ids[5]);
	return buf;
}

void
cuda_emu_report(Emu *e, const char *fmt, ...)
{
	char msg[sizeof e->first];
	va_list ap;

	int n = snprintf(msg, sizeof msg, "kernel '%s': ", e->kernel->name);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	if (e->reports++ == 0)
		memcpy(e->first, msg, sizeof msg);
	if (e->reports <= MAX_PRINTED)
		fprintf(stderr, "txrt: emulator: %s\n", msg);
}

/* The epoch's held reports (see Emu.held), after its races. */
static void
flush_held(Emu *e)
{
	for (int i = 0; i < e->nheld; i++)
		cuda_emu_report(e, "%s", e->held[i]);
	e->reports += e->held_more;
	e->nheld = 0;
	e->held_more = 0;
}

/* Stops the launch from the running thread, which is never resumed. */
void
cuda_emu_stop(Emu *e)
{
	e->stopped = 1;
	fiber_switch(&e->cur->fiber, &e->sched);
}

/* ---- the calls of emulated kernels --------------------------------------------- */

int64_t
txrt_emu_id(int which)
{
	Emu *e = cuda_emu_cur;

	if (!e || which < 0 || which >= 12)
		return 0;
	return which < 3 ? e->cur->tid[which] : e->ids[which];
}

void
txrt_emu_barrier(void)
{
	txrt_emu_barrier_n(0);
}

void
txrt_emu_barrier_n(int count)
{
	Emu *e = cuda_emu_cur;

	if (!e)
		return;
	e->cur->state = WAITING;
	e->cur->bar_count = count;
	fiber_switch(&e->cur->fiber, &e->sched);
}

void *
txrt_emu_shared(void)
{
	return cuda_emu_cur ? cuda_emu_arena : NULL;
}

enum { RACE_NONE, RACE_WW, RACE_RAW, RACE_WAR, UNINIT, IN_FLIGHT, TMA_IN_FLIGHT, WGMMA_READS };

/* The race checks of an access to esize bytes of the arena at p (element
 * off of shared buffer buf). */
void
cuda_emu_shadow_access(Emu *e, int buf, uintptr_t p, int64_t off, int esize, int write)
{
	const txrt_cuda_kernel *k = e->kernel;
	char tb[48], bb[48], nb[24];
	Shadow *s = cuda_emu_shadow + (p - (uintptr_t)cuda_emu_arena);
	uint32_t now = epoch;
	uint16_t me = (uint16_t)e->cur->index;
	int problem = RACE_NONE;
	uint16_t other = 0;
	for (int i = 0; i < esize; i++, s++) {
		if (s->async && problem == RACE_NONE) {
			problem = s->async & TMA_FLIGHT ? TMA_IN_FLIGHT : IN_FLIGHT;
			other = (uint16_t)((s->async & ~TMA_FLIGHT) - 1);
		}
		if (write) {
			if (problem == RACE_NONE && s->wgread)
				problem = WGMMA_READS;
			/* a TMA load after one into the byte, or (its thread having
			 * waited on its readers' arrivals) after reads: ordered by
			 * the mbarriers, which Shadow.async and .wgread check */
			int tma_ww = write == 2 && s->writer == TMA_WRITER;
			int tma_war = write == 2 && e->cur->arrival_sync;
			if (problem == RACE_NONE) {
				if (s->wepoch == now && s->writer != me && !tma_ww) {
					problem = RACE_WW;
					other = s->writer;
				} else if (!tma_war && s->repoch == now && (s->reader != me ||
				    s->reader2 != NOBODY)) {
					problem = RACE_WAR;
					other = s->reader != me ? s->reader : s->reader2;
				}
			}
			s->wepoch = now;
			s->writer = write == 2 ? TMA_WRITER : me;
		} else {
			if (problem == RACE_NONE) {
				if (s->wepoch < block_epoch) {
					problem = UNINIT;
				} else if (s->wepoch == now && s->writer != me && s->writer != TMA_WRITER) {
					problem = RACE_RAW;
					other = s->writer;
				}
			}
			if (s->repoch != now) {
				s->repoch = now;
				s->reader = me;
				s->reader2 = NOBODY;
			} else if (s->reader != me && s->reader2 == NOBODY) {
				s->reader2 = me;
			}
		}
	}
	if (problem == RACE_NONE)
		return;

	char ob[48];
	const char *name = buffer_name(k, buf, nb, sizeof nb);
	cuda_emu_thread_name(e, me, tb, sizeof tb);
	cuda_emu_block_name(e, bb, sizeof bb);
	switch (problem) {
	case UNINIT:
		if (e->nheld == MAX_PRINTED)
			e->held_more++;
		else
			snprintf(e->held[e->nheld++], sizeof e->held[0], "read of uninitialised shared "
			    "memory: buffer '%s' element %lld, thread %s of block %s", name,
			    (long long)off, tb, bb);
		break;
	case IN_FLIGHT:
		cuda_emu_report(e, "%s of shared buffer '%s' element %lld by thread %s while thread %s's "
		    "asynchronous copy (cp.async) into it is in flight: no cp.async.wait_group has "
		    "completed it%s (block %s)", write ? "write" : "read", name, (long long)off, tb,
		    cuda_emu_thread_name(e, other, ob, sizeof ob), other == me ? "" : ", or no barrier "
		    "followed the wait", bb);
		break;
	case TMA_IN_FLIGHT:
		cuda_emu_report(e, "%s of shared buffer '%s' element %lld by thread %s while thread %s's TMA "
		    "load into it is in flight: no mbarrier wait has seen its phase complete (block "
		    "%s)", write ? "write" : "read", name, (long long)off, tb,
		    cuda_emu_thread_name(e, other, ob, sizeof ob), bb);
		break;
	case WGMMA_READS:
		cuda_emu_report(e, "write of shared buffer '%s' element %lld by thread %s while a wgmma "
		    "group in flight reads it: not every thread of its warpgroup has waited for the "
		    "group (wgmma.wait_group) before a barrier or mbarrier arrival that precedes the "
		    "write (block %s)",
		    name, (long long)off, tb, bb);
		break;
	case RACE_WW:
		cuda_emu_report(e, "write-write race on shared buffer '%s' element %lld: threads %s and %s "
		    "of block %s both write it with no barrier between", name, (long long)off,
		    cuda_emu_thread_name(e, other, ob, sizeof ob), tb, bb);
		break;
	case RACE_RAW:
		cuda_emu_report(e, "read-after-write race on shared buffer '%s' element %lld: thread %s "
		    "reads it after thread %s wrote it, with no barrier between (block %s)", name,
		    (long long)off, tb, cuda_emu_thread_name(e, other, ob, sizeof ob), bb);
		break;
	case RACE_WAR:
		cuda_emu_report(e, "write-after-read race on shared buffer '%s' element %lld: thread %s "
		    "writes it after thread %s read it, with no barrier between (block %s)", name,
		    (long long)off, tb, cuda_emu_thread_name(e, other, ob, sizeof ob), bb);
		break;
	}
}

/* The bounds checks of an access; its arena address for a shared buffer
 * (0: none, or stopped). */
uintptr_t
cuda_emu_bounds(Emu *e, int buf, const void *base, int64_t off, int64_t n, int esize, int write)
{
	const txrt_cuda_kernel *k = e->kernel;
	char tb[48], bb[48], nb[24];
	int kind = buffer_kind(k, buf);
	static const char *const kinds[] = { "global", "shared", "local" };
	const char *kname = kind >= 0 && kind <= 2 ? kinds[kind] : "";
	if (off < 0 || off >= n) {
		cuda_emu_report(e, "out-of-bounds %s of %s buffer '%s': element %lld of %lld, thread %s of block %s",
		    write ? "write" : "read", kname, buffer_name(k, buf, nb, sizeof nb),
		    (long long)off, (long long)n, cuda_emu_thread_name(e, e->cur->index, tb, sizeof tb),
		    cuda_emu_block_name(e, bb, sizeof bb));
		cuda_emu_stop(e);
		return 0;
	}
	if (kind != 1 || esize <= 0)
		return 0;
	uintptr_t p = (uintptr_t)base + (uintptr_t)off * (uintptr_t)esize;
	uintptr_t a = (uintptr_t)cuda_emu_arena;
	if (p < a || p - a > e->shared || e->shared - (p - a) < (uintptr_t)esize) {
		cuda_emu_report(e, "%s of shared buffer '%s' element %lld outside the block's %zu bytes of shared "
		    "memory, thread %s of block %s", write ? "write" : "read",
		    buffer_name(k, buf, nb, sizeof nb), (long long)off, e->shared,
		    cuda_emu_thread_name(e, e->cur->index, tb, sizeof tb), cuda_emu_block_name(e, bb, sizeof bb));
		cuda_emu_stop(e);
		return 0;
	}
	return p;
}

void
txrt_emu_access(int buf, const void *base, int64_t off, int64_t n, int esize, int write,
    int active)
{
	Emu *e = cuda_emu_cur;

	if (!active || !e || !e->check)
		return;
	uintptr_t p = cuda_emu_bounds(e, buf, base, off, n, esize, write);
	if (p)
		cuda_emu_shadow_access(e, buf, p, off, esize, write);
}

void
txrt_emu_copy_async(int dbuf, void *dbase, int64_t doff, int64_t dn, int sbuf,
    const void *sbase, int64_t soff, int64_t sn, int esize, int64_t valid)
{
	Emu *e = cuda_emu_cur;
	if (!e || esize <= 0 || esize > 16)
		return;
	int w = 16 / esize;
	Thread *t = e->cur;
	if (valid > w)
		valid = w;
	if (e->check) {
		for (int64_t i = 0; i < valid; i++)
			if (cuda_emu_bounds(e, sbuf, sbase, soff + i, sn, esize, 0), e->stopped)
				return;
		for (int i = 0; i < w; i++) {
			uintptr_t p = cuda_emu_bounds(e, dbuf, dbase, doff + i, dn, esize, 1);
			if (e->stopped)
				return;
			if (p) {
				cuda_emu_shadow_access(e, dbuf, p, doff + i, esize, 1);
				for (int b = 0; b < esize; b++)
					cuda_emu_shadow[p - (uintptr_t)cuda_emu_arena + (uintptr_t)b].async = (uint16_t)(t->index + 1);
			}
		}
	}
	if (t->npend == t->cappend) {
		int cap = t->cappend ? 2 * t->cappend : 64;
		Pending *np = realloc(t->pend, (size_t)cap * sizeof *np);
		if (!np) {
			cuda_emu_report(e, "out of memory for the asynchronous copies of a thread");
			cuda_emu_stop(e);
			return;
		}
		t->pend = np;
		t->cappend = cap;
	}
	Pending *q = &t->pend[t->npend++];
	q->dst = (unsigned char *)dbase + doff * esize;
	q->src = valid > 0 ? (const unsigned char *)sbase + soff * esize : NULL;
	q->dbuf = dbuf;
	q->esize = esize;
	q->doff = doff;
	q->valid = valid < 0 ? 0 : valid;
	q->group = -1;
}

void
txrt_emu_async_commit(void)
{
	Emu *e = cuda_emu_cur;
	if (!e)
		return;
	Thread *t = e->cur;
	for (int i = 0; i < t->npend; i++)
		if (t->pend[i].group < 0)
			t->pend[i].group = t->groups;
	t->groups++;
}

/* Writes copy q into shared memory, its bytes no longer in flight. */
static void
land(Emu *e, Pending *q)
{
	size_t bytes = 16;
	uintptr_t p = (uintptr_t)q->dst;
	if (e->check && p >= (uintptr_t)cuda_emu_arena && p - (uintptr_t)cuda_emu_arena + bytes <= e->shared) {
		for (size_t b = 0; b < bytes; b++)
			cuda_emu_shadow[p - (uintptr_t)cuda_emu_arena + b].async = 0;
		for (int i = 0; i < 16 / q->esize; i++)
			cuda_emu_shadow_access(e, q->dbuf, p + (uintptr_t)(i * q->esize), q->doff + i, q->esize, 1);
	}
	size_t have = (size_t)q->valid * (size_t)q->esize;
	if (have)
		memcpy(q->dst, q->src, have);
	memset(q->dst + have, 0, bytes - have);
}

void
txrt_emu_async_wait(int n)
{
	Emu *e = cuda_emu_cur;
	if (!e)
		return;
	Thread *t = e->cur;
	int kept = 0;
	for (int i = 0; i < t->npend; i++) {
		Pending *q = &t->pend[i];
		if (q->group >= 0 && q->group < t->groups - n)
			land(e, q);
		else
			t->pend[kept++] = *q;
	}
	t->npend = kept;
}

/* A thread's copies still in flight when it ends (or the launch stops):
 * dropped, reported if it ended. */
static void
drop_pending(Emu *e, Thread *t, int ended)
{
	if (t->npend && ended) {
		char tb[48], bb[48];
		cuda_emu_report(e, "thread %s of block %s ends with %d asynchronous cop%s (cp.async) never "
		    "completed by a cp.async.wait_group", cuda_emu_thread_name(e, t->index, tb, sizeof tb),
		    cuda_emu_block_name(e, bb, sizeof bb), t->npend, t->npend == 1 ? "y" : "ies");
	}
	for (int i = 0; i < t->npend && e->check; i++) {
		uintptr_t p = (uintptr_t)t->pend[i].dst;
		if (p >= (uintptr_t)cuda_emu_arena && p - (uintptr_t)cuda_emu_arena + 16 <= e->shared)
			for (size_t b = 0; b < 16; b++)
				cuda_emu_shadow[p - (uintptr_t)cuda_emu_arena + b].async = 0;
	}
	t->npend = 0;
	t->groups = 0;
}

/* ---- running a launch ---------------------------------------------------------- */

static void
thread_main(void *arg)
{
	Thread *t = arg;
	Emu *e = cuda_emu_cur;

	t->wgmma = 0;
	t->wg_committed = t->wg_done = 0;
	e->kernel->emu(e->params);
	cuda_emu_wgmma_check(e, "ends");
	drop_pending(e, t, 1);
	t->state = FINISHED;
}

static void
next_epoch(void)
{
	epoch++;
}

/* Runs thread t until it waits, ends or yields; false if the launch
 * stopped. */
static int
run_one(Emu *e, Thread *t)
{
	t->state = RUNNING;
	e->cur = t;
	fiber_switch(&e->sched, &t->fiber);
	return !e->stopped;
}

/* Runs the block's threads until none can go on (each waits at a barrier,
 * in an mbarrier wait no phase has completed, or has finished).  A
 * thread whose arrival completes an mbarrier phase yields (Emu.wake), and
 * the threads waiting for that phase run before any other: what they do
 * then (a TMA load refilling a slot) happens as early as the hardware
 * may do it.  False if the launch stopped. */
static int
run_all(Emu *e)
{
	int n = e->nthreads, ran;
	do {
		ran = 0;
		for (int i = 0; i < n; i++) {
			Thread *t = &threads[i];
			if (t->state == MBAR_WAIT && !cuda_emu_mbar_ready(t))
				continue;
			if (t->state != RUNNING && t->state != MBAR_WAIT)
				continue;
			if (!run_one(e, t))
				return 0;
			ran = 1;
			while (e->wake) {
				e->wake = 0;
				for (int j = 0; j < n; j++)
					if (threads[j].state == MBAR_WAIT && cuda_emu_mbar_ready(&threads[j]) &&
					    !run_one(e, &threads[j]))
						return 0;
			}
		}
	} while (ran);
	return 1;
}

/* Runs the block whose ids are in e->ids; stops the launch when the
 * block's barriers cannot complete. */
static void
run_block(Emu *e)
{
	int n = e->nthreads;

	memset(cuda_emu_arena, 0xff, e->shared);
	cuda_emu_tma_drop();   /* loads a stopped block left in flight */
	cuda_emu_wgmma_drop();   /* and wgmma groups */
	cuda_emu_warp_arrivals_drop();
	if (epoch >= EPOCH_LIMIT) {
		if (cuda_emu_shadow)
			memset(cuda_emu_shadow, 0, shadow_cap * sizeof *cuda_emu_shadow);
		epoch = 0;
	}
	next_epoch();
	block_epoch = epoch;
	for (int i = 0; i < n; i++) {
		drop_pending(e, &threads[i], 0);   /* a stopped launch's */
		threads[i].state = RUNNING;
		threads[i].arrival_sync = 0;
		fiber_start(&threads[i].fiber, thread_main, &threads[i], &e->sched);
	}
	for (;;) {
		if (!run_all(e)) {
			flush_held(e);
			return;
		}
		int waiting = 0, finished = 0, first_finished = -1, count = 0, stuck = -1;
		for (int i = 0; i < n; i++) {
			Thread *t = &threads[i];
			if (t->state == WAITING) {
				waiting++;
				count = t->bar_count;
			} else if (t->state == MBAR_WAIT) {
				if (stuck < 0)
					stuck = i;
			} else {
				finished++;
				if (first_finished < 0)
					first_finished = i;
			}
		}
		flush_held(e);   /* the epoch ends: at a barrier, or the block's end */
		/* a barrier that counts `count` threads completes when that many
		 * wait at it, whatever the others do */
		if (waiting && count && waiting == count) {
			next_epoch();
			for (int i = 0; i < n; i++)
				if (threads[i].state == WAITING)
					threads[i].state = RUNNING;
			continue;
		}
		if (stuck >= 0) {
			cuda_emu_mbar_stuck(e, &threads[stuck]);
			e->stopped = 1;
			return;
		}
		if (waiting == 0)
			return;
		if (finished > 0 || count) {
			char tb[48], bb[48];
			char what[48] = "";
			if (count)
				snprintf(what, sizeof what, " (a barrier of %d threads)", count);
			cuda_emu_report(e, "barrier%s not reached by every thread of block %s: %d thread%s "
			    "wait at it while %d finished the kernel (the first: thread %s); the launch was "
			    "stopped", what, cuda_emu_block_name(e, bb, sizeof bb), waiting,
			    waiting == 1 ? "" : "s", finished,
			    cuda_emu_thread_name(e, first_finished < 0 ? 0 : first_finished, tb, sizeof tb));
			e->stopped = 1;
			return;
		}
		next_epoch();
		for (int i = 0; i < n; i++)
			threads[i].state = RUNNING;
	}
}

/* The stacks, arena and shadow a launch needs; 0 or -1 after an error. */
static int
reserve(const char *name, int n, size_t shared, int check)
{
	if (!threads) {
		threads = calloc(CUDA_EMU_MAX_THREADS, sizeof *threads);
		if (!threads)
			goto oom;
	}
	for (; nstacks < n; nstacks++)
		if (fiber_init(&threads[nstacks].fiber, EMU_STACK) != 0) {
			txrt_set_error("kernel '%s': cannot map the emulator's stack for thread %d",
			    name, nstacks);
			return -1;
		}
	if (!cuda_emu_arena || arena_cap < shared) {
		size_t cap = shared > 4096 ? shared : 4096;
		txrt_free(cuda_emu_arena);
		cuda_emu_arena = txrt_alloc(cap);
		arena_cap = cuda_emu_arena ? cap : 0;
		if (!cuda_emu_arena)
			goto oom;
	}
	if (check && shadow_cap < shared) {
		free(cuda_emu_shadow);
		cuda_emu_shadow = calloc(shared, sizeof *cuda_emu_shadow);
		shadow_cap = cuda_emu_shadow ? shared : 0;
		if (!cuda_emu_shadow)
			goto oom;
		/* zero epochs: never written, which every later block sees */
	}
	return 0;
oom:
	txrt_set_error("kernel '%s': out of memory for the emulator", name);
	return -1;
}

static int
checks_on(void)
{
	const char *s = getenv("TXRT_CUDA_CHECK");
	return !(s && strcmp(s, "0") == 0);
}

int
cuda_emu_launch(const txrt_cuda_module *m, int k, const int64_t grid[3], const int64_t block[3],
    int64_t shared, void **params)
{
	const txrt_cuda_kernel *kern = &m->kernels[k];

	last_reports = 0;
	if (!kern->emu) {
		txrt_set_error("kernel '%s' has no host copy for the emulator (TXRT_CUDA=emulate)",
		    kern->name);
		return TXRT_ERR_CUDA;
	}
	if (cuda_emu_cur) {
		txrt_set_error("kernel '%s': launched from inside an emulated kernel", kern->name);
		return TXRT_ERR_CUDA;
	}
	int check = checks_on();
	int n = (int)(block[0] * block[1] * block[2]);

	pthread_mutex_lock(&emu_mu);
	if (reserve(kern->name, n, (size_t)shared, check) != 0) {
		pthread_mutex_unlock(&emu_mu);
		return TXRT_ERR_CUDA;
	}
	Emu *e = &emu;
	memset(e, 0, sizeof *e);
	e->kernel = kern;
	e->params = params;
	e->nthreads = n;
	e->shared = (size_t)shared;
	e->check = check;
	for (int d = 0; d < 3; d++) {
		e->ids[6 + d] = block[d];
		e->ids[9 + d] = grid[d];
	}
	for (int i = 0; i < n; i++) {
		threads[i].index = i;
		threads[i].tid[0] = i % block[0];
		threads[i].tid[1] = i / block[0] % block[1];
		threads[i].tid[2] = i / (block[0] * block[1]);
	}
	cuda_emu_cur = e;
	for (int64_t z = 0; z < grid[2] && !e->stopped; z++)
		for (int64_t y = 0; y < grid[1] && !e->stopped; y++)
			for (int64_t x = 0; x < grid[0] && !e->stopped; x++) {
				e->ids[3] = x;
				e->ids[4] = y;
				e->ids[5] = z;
				run_block(e);
			}
	for (int i = 0; i < n; i++)
		drop_pending(e, &threads[i], 0);   /* a stopped launch's */
	cuda_emu_cur = NULL;

	int rc = 0;
	last_reports = e->reports;
	if (e->reports > MAX_PRINTED)
		fprintf(stderr, "txrt: emulator: kernel '%s': %lld reports, the first %d shown\n",
		    kern->name, (long long)e->reports, MAX_PRINTED);
	if (e->reports > 1) {
		txrt_set_error("%s (the first of %lld reports)", e->first, (long long)e->reports);
		rc = TXRT_ERR_CUDA;
	} else if (e->reports == 1) {
		txrt_set_error("%s", e->first);
		rc = TXRT_ERR_CUDA;
	}
	pthread_mutex_unlock(&emu_mu);
	return rc;
}
