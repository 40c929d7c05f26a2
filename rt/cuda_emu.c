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
 * complete: that is reported and the launch stopped.
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
 * descriptors, each byte checked as a read, and counts as in flight until
 * the thread's wgmma wait: a barrier, the end of the thread or a touch of
 * the fragment's registers (fill, store) before it is reported (the
 * results themselves are written at the call).  Every report is
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

#include "cuda_api.h"
#include "fiber.h"

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

enum { RUNNING, WAITING, FINISHED };

/* an asynchronous copy not landed yet (txrt_emu_copy_async) */
typedef struct {
	unsigned char *dst;
	const unsigned char *src;
	int dbuf, esize;
	int64_t doff, valid;
	int64_t group;           /* its commit group, -1 before the commit */
} Pending;

typedef struct {
	Fiber fiber;
	int64_t tid[3];
	int index;               /* x + bx * (y + by * z) */
	int state;
	Pending *pend;           /* its copies in flight */
	int npend, cappend;
	int64_t groups;          /* commit groups made */
	int wgmma;               /* its wgmma calls not waited for */
} Thread;

/* one arena byte: see the top comment; async: 1 + the thread whose
 * asynchronous copy into it is in flight, 0 when none is */
typedef struct {
	uint32_t wepoch, repoch;
	uint16_t writer, reader, reader2, async;
} Shadow;

typedef struct {
	const txrt_cuda_kernel *kernel;
	void **params;
	int64_t ids[12];         /* 3..11: blockIdx, blockDim, gridDim (0..2 are per thread) */
	int nthreads;
	Thread *cur;             /* the thread running */
	Fiber sched;             /* the launching OS thread's own stack */
	size_t shared;
	int check;
	int stopped;             /* an access out of bounds or a stuck barrier */
	int64_t reports;
	char first[400];
	/* the reads of uninitialised shared memory of the current epoch,
	 * reported when it ends: a race found later in the epoch (another
	 * thread writing what one read too early) is reported first */
	char held[MAX_PRINTED][300];
	int nheld;
	int64_t held_more;
} Emu;

static pthread_mutex_t emu_mu = PTHREAD_MUTEX_INITIALIZER;
static Emu emu;
static Thread *threads;          /* CUDA_EMU_MAX_THREADS of them ... */
static int nstacks;              /* ... the first nstacks with a stack */
static unsigned char *arena;
static size_t arena_cap;
static Shadow *shadow;
static size_t shadow_cap;
static uint32_t epoch, block_epoch;

static _Thread_local Emu *cur_emu;    /* while this OS thread emulates a launch */
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
static const char *
thread_name(const Emu *e, int i, char *buf, size_t n)
{
	int64_t bx = e->ids[6], by = e->ids[7];
	snprintf(buf, n, "(%lld,%lld,%lld)", (long long)(i % bx), (long long)(i / bx % by),
	    (long long)(i / (bx * by)));
	return buf;
}

static const char *
block_name(const Emu *e, char *buf, size_t n)
{
	snprintf(buf, n, "(%lld,%lld,%lld)", (long long)e->ids[3], (long long)e->ids[4],
	    (long long)e->ids[5]);
	return buf;
}

static void report(Emu *e, const char *fmt, ...) TXRT_PRINTF(2, 3);

static void
report(Emu *e, const char *fmt, ...)
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
		report(e, "%s", e->held[i]);
	e->reports += e->held_more;
	e->nheld = 0;
	e->held_more = 0;
}

/* Stops the launch from the running thread, which is never resumed. */
static void
stop(Emu *e)
{
	e->stopped = 1;
	fiber_switch(&e->cur->fiber, &e->sched);
}

/* ---- the calls of emulated kernels --------------------------------------------- */

int64_t
txrt_emu_id(int which)
{
	Emu *e = cur_emu;

	if (!e || which < 0 || which >= 12)
		return 0;
	return which < 3 ? e->cur->tid[which] : e->ids[which];
}

static void wgmma_check(Emu *e, const char *what);

void
txrt_emu_barrier(void)
{
	Emu *e = cur_emu;

	if (!e)
		return;
	wgmma_check(e, "reaches a barrier");
	e->cur->state = WAITING;
	fiber_switch(&e->cur->fiber, &e->sched);
}

void *
txrt_emu_shared(void)
{
	return cur_emu ? arena : NULL;
}

enum { RACE_NONE, RACE_WW, RACE_RAW, RACE_WAR, UNINIT, IN_FLIGHT, TMA_IN_FLIGHT };
/* Shadow.async of a byte a TMA load (txrt_emu_tma_load) has in flight */
#define TMA_FLIGHT 0x8000

/* The race checks of an access to esize bytes of the arena at p (element
 * off of shared buffer buf). */
static void
shadow_access(Emu *e, int buf, uintptr_t p, int64_t off, int esize, int write)
{
	const txrt_cuda_kernel *k = e->kernel;
	char tb[48], bb[48], nb[24];
	Shadow *s = shadow + (p - (uintptr_t)arena);
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
			if (problem == RACE_NONE) {
				if (s->wepoch == now && s->writer != me) {
					problem = RACE_WW;
					other = s->writer;
				} else if (s->repoch == now && (s->reader != me || s->reader2 != NOBODY)) {
					problem = RACE_WAR;
					other = s->reader != me ? s->reader : s->reader2;
				}
			}
			s->wepoch = now;
			s->writer = me;
		} else {
			if (problem == RACE_NONE) {
				if (s->wepoch < block_epoch) {
					problem = UNINIT;
				} else if (s->wepoch == now && s->writer != me) {
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
	thread_name(e, me, tb, sizeof tb);
	block_name(e, bb, sizeof bb);
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
		report(e, "%s of shared buffer '%s' element %lld by thread %s while thread %s's "
		    "asynchronous copy (cp.async) into it is in flight: no cp.async.wait_group has "
		    "completed it%s (block %s)", write ? "write" : "read", name, (long long)off, tb,
		    thread_name(e, other, ob, sizeof ob), other == me ? "" : ", or no barrier "
		    "followed the wait", bb);
		break;
	case TMA_IN_FLIGHT:
		report(e, "%s of shared buffer '%s' element %lld by thread %s while thread %s's TMA "
		    "load into it is in flight: no mbarrier wait has seen its phase complete (block "
		    "%s)", write ? "write" : "read", name, (long long)off, tb,
		    thread_name(e, other, ob, sizeof ob), bb);
		break;
	case RACE_WW:
		report(e, "write-write race on shared buffer '%s' element %lld: threads %s and %s "
		    "of block %s both write it with no barrier between", name, (long long)off,
		    thread_name(e, other, ob, sizeof ob), tb, bb);
		break;
	case RACE_RAW:
		report(e, "read-after-write race on shared buffer '%s' element %lld: thread %s "
		    "reads it after thread %s wrote it, with no barrier between (block %s)", name,
		    (long long)off, tb, thread_name(e, other, ob, sizeof ob), bb);
		break;
	case RACE_WAR:
		report(e, "write-after-read race on shared buffer '%s' element %lld: thread %s "
		    "writes it after thread %s read it, with no barrier between (block %s)", name,
		    (long long)off, tb, thread_name(e, other, ob, sizeof ob), bb);
		break;
	}
}

/* The bounds checks of an access; its arena address for a shared buffer
 * (0: none, or stopped). */
static uintptr_t
bounds(Emu *e, int buf, const void *base, int64_t off, int64_t n, int esize, int write)
{
	const txrt_cuda_kernel *k = e->kernel;
	char tb[48], bb[48], nb[24];
	int kind = buffer_kind(k, buf);
	static const char *const kinds[] = { "global", "shared", "local" };
	const char *kname = kind >= 0 && kind <= 2 ? kinds[kind] : "";
	if (off < 0 || off >= n) {
		report(e, "out-of-bounds %s of %s buffer '%s': element %lld of %lld, thread %s of block %s",
		    write ? "write" : "read", kname, buffer_name(k, buf, nb, sizeof nb),
		    (long long)off, (long long)n, thread_name(e, e->cur->index, tb, sizeof tb),
		    block_name(e, bb, sizeof bb));
		stop(e);
		return 0;
	}
	if (kind != 1 || esize <= 0)
		return 0;
	uintptr_t p = (uintptr_t)base + (uintptr_t)off * (uintptr_t)esize;
	uintptr_t a = (uintptr_t)arena;
	if (p < a || p - a > e->shared || e->shared - (p - a) < (uintptr_t)esize) {
		report(e, "%s of shared buffer '%s' element %lld outside the block's %zu bytes of shared "
		    "memory, thread %s of block %s", write ? "write" : "read",
		    buffer_name(k, buf, nb, sizeof nb), (long long)off, e->shared,
		    thread_name(e, e->cur->index, tb, sizeof tb), block_name(e, bb, sizeof bb));
		stop(e);
		return 0;
	}
	return p;
}

void
txrt_emu_access(int buf, const void *base, int64_t off, int64_t n, int esize, int write,
    int active)
{
	Emu *e = cur_emu;

	if (!active || !e || !e->check)
		return;
	uintptr_t p = bounds(e, buf, base, off, n, esize, write);
	if (p)
		shadow_access(e, buf, p, off, esize, write);
}

void
txrt_emu_copy_async(int dbuf, void *dbase, int64_t doff, int64_t dn, int sbuf,
    const void *sbase, int64_t soff, int64_t sn, int esize, int64_t valid)
{
	Emu *e = cur_emu;
	if (!e || esize <= 0 || esize > 16)
		return;
	int w = 16 / esize;
	Thread *t = e->cur;
	if (valid > w)
		valid = w;
	if (e->check) {
		for (int64_t i = 0; i < valid; i++)
			if (bounds(e, sbuf, sbase, soff + i, sn, esize, 0), e->stopped)
				return;
		for (int i = 0; i < w; i++) {
			uintptr_t p = bounds(e, dbuf, dbase, doff + i, dn, esize, 1);
			if (e->stopped)
				return;
			if (p) {
				shadow_access(e, dbuf, p, doff + i, esize, 1);
				for (int b = 0; b < esize; b++)
					shadow[p - (uintptr_t)arena + (uintptr_t)b].async = (uint16_t)(t->index + 1);
			}
		}
	}
	if (t->npend == t->cappend) {
		int cap = t->cappend ? 2 * t->cappend : 64;
		Pending *np = realloc(t->pend, (size_t)cap * sizeof *np);
		if (!np) {
			report(e, "out of memory for the asynchronous copies of a thread");
			stop(e);
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
	Emu *e = cur_emu;
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
	if (e->check && p >= (uintptr_t)arena && p - (uintptr_t)arena + bytes <= e->shared) {
		for (size_t b = 0; b < bytes; b++)
			shadow[p - (uintptr_t)arena + b].async = 0;
		for (int i = 0; i < 16 / q->esize; i++)
			shadow_access(e, q->dbuf, p + (uintptr_t)(i * q->esize), q->doff + i, q->esize, 1);
	}
	size_t have = (size_t)q->valid * (size_t)q->esize;
	if (have)
		memcpy(q->dst, q->src, have);
	memset(q->dst + have, 0, bytes - have);
}

void
txrt_emu_async_wait(int n)
{
	Emu *e = cur_emu;
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
		report(e, "thread %s of block %s ends with %d asynchronous cop%s (cp.async) never "
		    "completed by a cp.async.wait_group", thread_name(e, t->index, tb, sizeof tb),
		    block_name(e, bb, sizeof bb), t->npend, t->npend == 1 ? "y" : "ies");
	}
	for (int i = 0; i < t->npend && e->check; i++) {
		uintptr_t p = (uintptr_t)t->pend[i].dst;
		if (p >= (uintptr_t)arena && p - (uintptr_t)arena + 16 <= e->shared)
			for (size_t b = 0; b < 16; b++)
				shadow[p - (uintptr_t)arena + b].async = 0;
	}
	t->npend = 0;
	t->groups = 0;
}

/* ---- TMA and mbarriers (tma() in txc-schedule(7)) ------------------------------ */

/* The emulator's mbarrier, in its 8 bytes of shared memory. */
typedef struct {
	int32_t tx;              /* transaction bytes expected and not yet completed */
	uint16_t pending;        /* arrivals the current phase still needs */
	uint8_t count;           /* arrivals a phase */
	uint8_t done;            /* phases completed (mod 256): its parity is the wait's */
} Mbar;

/* the TMA boxes in flight: their bytes [lo, hi) of the arena, until a
 * wait sees bar's phase complete */
enum { MAX_TMA = 256 };
static struct { uintptr_t bar, lo, hi; } tma_fl[MAX_TMA];
static int ntma;

/* The mbarrier at bar if it lies in the arena (else reported: NULL). */
static Mbar *
mbar_at(Emu *e, void *bar, Mbar *m)
{
	uintptr_t p = (uintptr_t)bar, a = (uintptr_t)arena;
	if (p < a || p - a + sizeof *m > e->shared || (p & 7)) {
		report(e, "mbarrier at %p is not 8 aligned bytes of the block's shared memory", bar);
		stop(e);
		return NULL;
	}
	memcpy(m, bar, sizeof *m);
	return m;
}

static void
mbar_complete(Mbar *m)
{
	if (m->pending == 0 && m->tx == 0) {
		m->done++;
		m->pending = m->count;
	}
}

static void
tma_drop(void)
{
	for (int i = 0; i < ntma && shadow; i++)
		for (uintptr_t p = tma_fl[i].lo; p < tma_fl[i].hi; p++)
			shadow[p - (uintptr_t)arena].async = 0;
	ntma = 0;
}

void
txrt_emu_mbar_init(void *bar, int count)
{
	Emu *e = cur_emu;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	m.tx = 0;
	m.count = m.pending = (uint8_t)(count < 1 ? 1 : count > 255 ? 255 : count);
	m.done = 0;
	memcpy(bar, &m, sizeof m);
}

void
txrt_emu_tma_load(int dbuf, void *dbase, int64_t doff, const void *map, int col, int row,
    void *bar)
{
	Emu *e = cur_emu;
	const CudaEmuMap *t = map;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	if (!t || t->magic != CUDA_EMU_MAP_MAGIC) {
		report(e, "TMA load with a tensor map libtxrt did not encode for the emulator");
		stop(e);
		return;
	}
	int64_t es = t->esize, rowb = t->box[0] * es, bytes = rowb * t->box[1];
	unsigned char *dst = (unsigned char *)dbase + doff * es;
	uintptr_t a = (uintptr_t)arena, lo = (uintptr_t)dst;
	if (lo < a || lo - a + (uintptr_t)bytes > e->shared || ((lo - a) & 127)) {
		report(e, "TMA load into shared buffer %d element %lld: the box's %lld bytes are not "
		    "128-byte aligned inside the block's %zu bytes of shared memory", dbuf,
		    (long long)doff, (long long)bytes, e->shared);
		stop(e);
		return;
	}
	/* arrive.expect_tx, then the box: byte b of row r at its swizzled place
	 * (16-byte chunk c of a 128-byte line XOR bits 7.. of the offset) */
	m.tx += (int32_t)bytes;
	if (m.pending)
		m.pending--;
	for (int64_t r = 0; r < t->box[1]; r++)
		for (int64_t x = 0; x < t->box[0]; x++) {
			int64_t off = r * rowb + x * es, at = off;
			if (t->swizzle) {
				int64_t span = t->swizzle / 16;       /* chunks a swizzle row: 2, 4, 8 */
				int64_t abs = (int64_t)(lo - a) + off;
				at = off ^ (((abs >> 7) & (span - 1)) << 4);
			}
			if (e->check) {
				shadow_access(e, dbuf, lo + (uintptr_t)at, doff + at / es, (int)es, 1);
				for (int b = 0; b < es; b++)
					shadow[lo - a + (uintptr_t)at + (uintptr_t)b].async =
					    (uint16_t)(TMA_FLIGHT | (e->cur->index + 1));
			}
			int64_t gc = col + x, gr = row + r;
			if (gc < 0 || gr < 0 || gc >= t->dims[0] || gr >= t->dims[1])
				memset(dst + at, 0, (size_t)es);
			else
				memcpy(dst + at, t->base + gr * t->pitch + gc * es, (size_t)es);
		}
	if (e->check && ntma < MAX_TMA) {
		tma_fl[ntma].bar = (uintptr_t)bar;
		tma_fl[ntma].lo = lo;
		tma_fl[ntma++].hi = lo + (uintptr_t)bytes;
	}
	m.tx -= (int32_t)bytes;   /* complete_tx */
	mbar_complete(&m);
	memcpy(bar, &m, sizeof m);
}

void
txrt_emu_mbar_wait(void *bar, int parity)
{
	Emu *e = cur_emu;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	if ((m.done & 1) == (parity & 1)) {
		char tb[48], bb[48];
		report(e, "thread %s of block %s waits for phase parity %d of an mbarrier whose phase "
		    "no arrival or TMA load can complete (%d arrivals and %d bytes missing): on a GPU "
		    "it would wait forever", thread_name(e, e->cur->index, tb, sizeof tb),
		    block_name(e, bb, sizeof bb), parity & 1, m.pending, m.tx);
		stop(e);
		return;
	}
	/* the phase has completed: its loads have landed for every reader */
	int kept = 0;
	for (int i = 0; i < ntma; i++) {
		if (tma_fl[i].bar != (uintptr_t)bar) {
			tma_fl[kept++] = tma_fl[i];
			continue;
		}
		for (uintptr_t p = tma_fl[i].lo; p < tma_fl[i].hi; p++)
			shadow[p - (uintptr_t)arena].async = 0;
	}
	ntma = kept;
}

/* ---- wgmma (sm_90a) ------------------------------------------------------------ */

static void
wgmma_check(Emu *e, const char *what)
{
	Thread *t = e->cur;
	if (!t->wgmma)
		return;
	char tb[48], bb[48];
	report(e, "thread %s of block %s %s with %d wgmma call%s in flight (no "
	    "wgmma.wait_group since): its accumulators and the shared tiles it reads are not "
	    "settled", thread_name(e, t->index, tb, sizeof tb), block_name(e, bb, sizeof bb), what,
	    t->wgmma, t->wgmma == 1 ? "" : "s");
	t->wgmma = 0;
}

void
txrt_emu_wgmma_sync(int kind)
{
	Emu *e = cur_emu;
	if (!e)
		return;
	if (kind == 1)
		e->cur->wgmma = 0;
	else if (kind == 2)
		wgmma_check(e, "touches a warpgroup fragment's registers");
}

static float
f16_value(uint16_t h)
{
	int s = h >> 15, x = h >> 10 & 31, m = h & 1023;
	float v = x == 0 ? (float)m / 16777216.0f : x == 31 ? (m ? 0.0f / 0.0f : 1.0f / 0.0f) :
	    (float)(1024 + m) * ((float)(1 << (x > 25 ? x - 25 : 0)) / (float)(1 << (x < 25 ? 25 - x : 0)));
	return s ? -v : v;
}

static float
bf16_value(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* The arena byte address of element (r, c) of a descriptor's operand:
 * rows r of the 8-row core groups (stride byte offset between groups),
 * c along the swizzled row (leading byte offset between rows' spans),
 * then the swizzle's XOR of the 16-byte chunk by address bits 7 on. */
static uint64_t
desc_addr(int64_t desc, int r, int c)
{
	uint64_t start = ((uint64_t)desc & 0x3fff) << 4;
	uint64_t lbo = ((uint64_t)desc >> 16 & 0x3fff) << 4, sbo = ((uint64_t)desc >> 32 & 0x3fff) << 4;
	int mode = (int)((uint64_t)desc >> 62 & 3);
	uint64_t w = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 16;
	uint64_t cb = (uint64_t)c * 2;
	uint64_t a = start + (uint64_t)(r % 8) * w + (uint64_t)(r / 8) * sbo + cb / w * lbo + cb % w;
	uint64_t bits = mode == 1 ? 7 : mode == 2 ? 3 : mode == 3 ? 1 : 0;
	return a ^ ((a >> 7 & bits) << 4);
}

/* One 16-bit element of an operand, its read checked. */
static float
wg_read(Emu *e, int buf, const void *base, int64_t n, uint64_t addr, int bf)
{
	uintptr_t p = (uintptr_t)arena + (uintptr_t)addr;
	int64_t off = ((int64_t)p - (int64_t)(uintptr_t)base) / 2;
	if (e->check) {
		uintptr_t q = bounds(e, buf, base, off, n, 2, 0);
		if (!q)
			return 0.0f;
		shadow_access(e, buf, q, off, 2, 0);
	} else if (addr + 2 > e->shared) {
		return 0.0f;
	}
	uint16_t h;
	memcpy(&h, (const void *)p, 2);
	return bf ? bf16_value(h) : f16_value(h);
}

void
txrt_emu_wgmma(int abuf, const void *abase, int64_t an, int bbuf, const void *bbase, int64_t bn,
    int64_t adesc, int64_t bdesc, float *acc, int n, int flags)
{
	Emu *e = cur_emu;
	if (!e || e->stopped)
		return;
	Thread *t = e->cur;
	int64_t x = t->tid[0];
	if (x < 0 || x >= 128 || n < 8 || n > 256 || n % 8) {
		report(e, "wgmma by thread %lld of x (a warpgroup's 128) with N = %d", (long long)x, n);
		stop(e);
		return;
	}
	int w = (int)(x / 32), g = (int)(x % 32 / 4), tq = (int)(x % 4), bf = flags & 1;
	for (int s = 0; s < n / 2 && !e->stopped; s++) {
		int row = 16 * w + g + 8 * (s / 2 % 2), col = 8 * (s / 4) + 2 * tq + s % 2;
		float sum = 0.0f;
		for (int k = 0; k < 16; k++) {
			/* a: rows i along k (K-major) or transposed; b: k along n or transposed */
			uint64_t aa = flags & 4 ? desc_addr(adesc, k, row) : desc_addr(adesc, row, k);
			uint64_t ba = flags & 8 ? desc_addr(bdesc, k, col) : desc_addr(bdesc, col, k);
			sum += wg_read(e, abuf, abase, an, aa, bf) * wg_read(e, bbuf, bbase, bn, ba, bf);
		}
		acc[s] = (flags & 2 ? acc[s] : 0.0f) + sum;
	}
	t->wgmma++;
}

/* ---- running a launch ---------------------------------------------------------- */

static void
thread_main(void *arg)
{
	Thread *t = arg;
	Emu *e = cur_emu;

	t->wgmma = 0;
	e->kernel->emu(e->params);
	wgmma_check(e, "ends");
	drop_pending(e, t, 1);
	t->state = FINISHED;
}

static void
next_epoch(void)
{
	epoch++;
}

/* Runs the block whose ids are in e->ids; stops the launch when the
 * block's barriers cannot complete. */
static void
run_block(Emu *e)
{
	int n = e->nthreads;

	memset(arena, 0xff, e->shared);
	tma_drop();   /* loads a stopped block left in flight */
	if (epoch >= EPOCH_LIMIT) {
		if (shadow)
			memset(shadow, 0, shadow_cap * sizeof *shadow);
		epoch = 0;
	}
	next_epoch();
	block_epoch = epoch;
	for (int i = 0; i < n; i++) {
		drop_pending(e, &threads[i], 0);   /* a stopped launch's */
		threads[i].state = RUNNING;
		fiber_start(&threads[i].fiber, thread_main, &threads[i], &e->sched);
	}
	for (;;) {
		int waiting = 0, finished = 0, first_finished = -1;
		for (int i = 0; i < n; i++) {
			Thread *t = &threads[i];
			if (t->state == RUNNING) {
				e->cur = t;
				fiber_switch(&e->sched, &t->fiber);
				if (e->stopped) {
					flush_held(e);
					return;
				}
			}
			if (t->state == WAITING) {
				waiting++;
			} else {
				finished++;
				if (first_finished < 0)
					first_finished = i;
			}
		}
		flush_held(e);   /* the epoch ends: at a barrier, or the block's end */
		if (waiting == 0)
			return;
		if (finished > 0) {
			char tb[48], bb[48];
			report(e, "barrier not reached by every thread of block %s: %d thread%s wait at "
			    "it while %d finished the kernel (the first: thread %s); the launch was stopped",
			    block_name(e, bb, sizeof bb), waiting, waiting == 1 ? "" : "s", finished,
			    thread_name(e, first_finished, tb, sizeof tb));
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
	if (!arena || arena_cap < shared) {
		size_t cap = shared > 4096 ? shared : 4096;
		txrt_free(arena);
		arena = txrt_alloc(cap);
		arena_cap = arena ? cap : 0;
		if (!arena)
			goto oom;
	}
	if (check && shadow_cap < shared) {
		free(shadow);
		shadow = calloc(shared, sizeof *shadow);
		shadow_cap = shadow ? shared : 0;
		if (!shadow)
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
	if (cur_emu) {
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
	cur_emu = e;
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
	cur_emu = NULL;

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
