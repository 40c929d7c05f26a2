/* cuda_emu.h: what cuda_emu.c (the emulator of CUDA kernels and its
 * checker) shares with cuda_emu_hopper.c (TMA loads, mbarriers and
 * wgmma, Hopper's asynchronous operations): a launch's state, the
 * block's arena and its shadow, and the reports.  Internal to libtxrt.
 */
#ifndef TXRT_CUDA_EMU_H
#define TXRT_CUDA_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"
#include "fiber.h"

#define MAX_PRINTED 10

/* WAITING: at a barrier; MBAR_WAIT: in an mbarrier wait whose phase has
 * not completed (Thread.mbar, .parity), run again once it has */
enum { RUNNING, WAITING, FINISHED, MBAR_WAIT };

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
	int wgmma;               /* its wgmma calls not committed yet */
	int64_t wg_committed;    /* its wgmma groups committed ... */
	int64_t wg_done;         /* ... and the first of them not waited for */
	int bar_count;           /* at a barrier: the threads it counts (0: all) */
	void *mbar;              /* in MBAR_WAIT: the mbarrier and phase parity */
	int parity;
	/* it has waited for an mbarrier phase that other threads' arrivals
	 * completed: its TMA loads are ordered after their reads by that */
	int arrival_sync;
} Thread;

/* one arena byte: see the top comment; async: 1 + the thread whose
 * asynchronous copy into it is in flight, 0 when none is; wgread: the
 * wgmma calls in flight that read it (cuda_emu_hopper.c) */
typedef struct {
	uint32_t wepoch, repoch;
	uint16_t writer, reader, reader2, async, wgread;
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
	int wake;                /* an arrival completed a phase: run its waiters first */
} Emu;

/* Shadow.async of a byte a TMA load (txrt_emu_tma_load) has in flight */
#define TMA_FLIGHT 0x8000
/* Shadow.writer of a byte a TMA load wrote (cuda_emu_shadow_access's
 * write 2): its readers are ordered by the mbarrier wait (Shadow.async),
 * not by the epochs */
#define TMA_WRITER 0xfffe

/* ---- cuda_emu.c ---------------------------------------------------------- */
extern unsigned char *cuda_emu_arena;        /* the block's shared memory */
extern Shadow *cuda_emu_shadow;              /* one entry per arena byte */
extern _Thread_local Emu *cuda_emu_cur;      /* while this OS thread emulates a launch */

/* "(x,y,z)" of thread index i, and of the block */
const char *cuda_emu_thread_name(const Emu *e, int i, char *buf, size_t n);
const char *cuda_emu_block_name(const Emu *e, char *buf, size_t n);
/* A report of the launch (counted; the first ten printed) */
void cuda_emu_report(Emu *e, const char *fmt, ...) TXRT_PRINTF(2, 3);
/* Stops the launch from the running thread, which is never resumed. */
void cuda_emu_stop(Emu *e);
/* The race checks of an access to esize bytes of the arena at p
 * (element off of shared buffer buf); write: 0 a read, 1 a write, 2 a TMA
 * load's write (see TMA_WRITER). */
void cuda_emu_shadow_access(Emu *e, int buf, uintptr_t p, int64_t off, int esize, int write);
/* The bounds checks of an access; its arena address for a shared buffer
 * (0: none, or stopped). */
uintptr_t cuda_emu_bounds(Emu *e, int buf, const void *base, int64_t off, int64_t n, int esize,
    int write);

/* ---- cuda_emu_hopper.c --------------------------------------------------- */
/* Reports the running thread's wgmma calls not waited for, as it does
 * `what` (ends, touches a fragment), and then counts them done. */
void cuda_emu_wgmma_check(Emu *e, const char *what);
/* Forgets the wgmma groups in flight (at a block's start). */
void cuda_emu_wgmma_drop(void);
/* Forgets the TMA loads in flight (a stopped block's). */
void cuda_emu_tma_drop(void);
/* Forgets the warps' arrivals in progress (at a block's start). */
void cuda_emu_warp_arrivals_drop(void);
/* Whether thread t's mbarrier wait (MBAR_WAIT) can return now. */
int cuda_emu_mbar_ready(const Thread *t);
/* Reports thread t's mbarrier wait that nothing can complete. */
void cuda_emu_mbar_stuck(Emu *e, const Thread *t);

#endif
