/* cuda_emu_hopper.c: the emulator's Hopper operations (cuda_emu.c runs
 * the kernels): TMA loads of a tensor map's box into shared memory with
 * the map's swizzle and zero fill past the tensor, the mbarriers they
 * complete on (phases, expected bytes, arrivals; a wait blocks its thread
 * until its phase completes, cuda_emu.c's scheduler reporting one that
 * nothing can complete; a box's bytes count as written by the TMA,
 * TMA_WRITER, whose readers the mbarrier wait orders),
 * and wgmma, which reads its operands through their shared-memory matrix
 * descriptors and whose group is in flight until its wait; no write may
 * touch what a group in flight reads until every thread of its warpgroup
 * has waited for it.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_emu.h"

/* ---- TMA and mbarriers (tma() in txc-schedule(7)) ------------------------------ */

/* The emulator's mbarrier, in its 8 bytes of shared memory. */
typedef struct {
	int32_t tx;              /* transaction bytes expected and not yet completed */
	uint16_t pending;        /* arrivals the current phase still needs */
	uint16_t cd;             /* bits 0-14: arrivals a phase (1 .. 32767); bit 15:
	                            the parity of the phases completed, the wait's */
} Mbar;

#define COUNT(m) ((m).cd & 0x7fff)
#define DONE(m) ((m).cd >> 15)

/* the TMA boxes in flight: their bytes [lo, hi) of the arena, until a
 * wait sees bar's phase complete */
enum { MAX_TMA = 256 };
static struct { uintptr_t bar, lo, hi; } tma_fl[MAX_TMA];
static int ntma;

/* The mbarrier at bar if it lies in the arena (else reported: NULL). */
static Mbar *
mbar_at(Emu *e, void *bar, Mbar *m)
{
	uintptr_t p = (uintptr_t)bar, a = (uintptr_t)cuda_emu_arena;
	if (p < a || p - a + sizeof *m > e->shared || (p & 7)) {
		cuda_emu_report(e, "mbarrier at %p is not 8 aligned bytes of the block's shared memory", bar);
		cuda_emu_stop(e);
		return NULL;
	}
	memcpy(m, bar, sizeof *m);
	return m;
}

/* Completes m's phase if nothing more is awaited; whether it did. */
static int
mbar_complete(Mbar *m)
{
	if (m->pending == 0 && m->tx == 0) {
		m->cd ^= 0x8000;
		m->pending = COUNT(*m);
		return 1;
	}
	return 0;
}

void
cuda_emu_tma_drop(void)
{
	for (int i = 0; i < ntma && cuda_emu_shadow; i++)
		for (uintptr_t p = tma_fl[i].lo; p < tma_fl[i].hi; p++)
			cuda_emu_shadow[p - (uintptr_t)cuda_emu_arena].async = 0;
	ntma = 0;
}

/* The launch's mbarrier at bar, read into m (NULL outside a launch). */
static Mbar *
mbar_cur(void *bar, Mbar *m)
{
	return cuda_emu_cur ? mbar_at(cuda_emu_cur, bar, m) : NULL;
}

void
txrt_emu_mbar_init(void *bar, int count)
{
	Mbar m;
	if (!mbar_cur(bar, &m))
		return;
	m.tx = 0;
	m.cd = m.pending = (uint16_t)(count < 1 ? 1 : count > 32767 ? 32767 : count);
	memcpy(bar, &m, sizeof m);
}

void
txrt_emu_mbar_expect_tx(void *bar, int bytes)
{
	Mbar m;
	if (!mbar_cur(bar, &m))
		return;
	m.tx += bytes;
	if (m.pending)
		m.pending--;
	mbar_complete(&m);
	memcpy(bar, &m, sizeof m);
}

void
txrt_emu_tma_load(int dbuf, void *dbase, int64_t doff, const void *map, int col, int row,
    void *bar)
{
	const CudaEmuMap *t = map;
	if (t && t->magic == CUDA_EMU_MAP_MAGIC)
		txrt_emu_mbar_expect_tx(bar, (int)(t->box[0] * t->box[1] * t->esize));
	txrt_emu_tma_box(dbuf, dbase, doff, map, col, row, bar);
}

void
txrt_emu_tma_box(int dbuf, void *dbase, int64_t doff, const void *map, int col, int row,
    void *bar)
{
	Emu *e = cuda_emu_cur;
	const CudaEmuMap *t = map;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	if (!t || t->magic != CUDA_EMU_MAP_MAGIC) {
		cuda_emu_report(e, "TMA load with a tensor map libtxrt did not encode for the emulator");
		cuda_emu_stop(e);
		return;
	}
	int64_t es = t->esize, rowb = t->box[0] * es, bytes = rowb * t->box[1];
	unsigned char *dst = (unsigned char *)dbase + doff * es;
	uintptr_t a = (uintptr_t)cuda_emu_arena, lo = (uintptr_t)dst;
	if (lo < a || lo - a + (uintptr_t)bytes > e->shared || ((lo - a) & 127)) {
		cuda_emu_report(e, "TMA load into shared buffer %d element %lld: the box's %lld bytes are not "
		    "128-byte aligned inside the block's %zu bytes of shared memory", dbuf,
		    (long long)doff, (long long)bytes, e->shared);
		cuda_emu_stop(e);
		return;
	}
	/* the box: byte b of row r at its swizzled place (16-byte chunk c of
	 * a 128-byte line XOR bits 7.. of the offset) */
	for (int64_t r = 0; r < t->box[1]; r++)
		for (int64_t x = 0; x < t->box[0]; x++) {
			int64_t off = r * rowb + x * es, at = off;
			if (t->swizzle) {
				int64_t span = t->swizzle / 16;       /* chunks a swizzle row: 2, 4, 8 */
				int64_t abs = (int64_t)(lo - a) + off;
				at = off ^ (((abs >> 7) & (span - 1)) << 4);
			}
			if (e->check) {
				cuda_emu_shadow_access(e, dbuf, lo + (uintptr_t)at, doff + at / es, (int)es, 2);
				for (int b = 0; b < es; b++)
					cuda_emu_shadow[lo - a + (uintptr_t)at + (uintptr_t)b].async =
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
	/* complete_tx, on the barrier as it is now (the copy above does not
	 * touch it); a phase that no arrival has expected bytes of yet gets
	 * them from a load its predecessor should have counted (txc's thread
	 * arrives with expect_tx before its loads) */
	mbar_at(e, bar, &m);
	if (m.tx < bytes && m.pending == COUNT(m)) {
		char tb[48], bb[48];
		cuda_emu_report(e, "TMA load into shared buffer %d element %lld by thread %s of block %s "
		    "completes %lld bytes on an mbarrier whose phase expects %d: an expect_tx that left "
		    "it out let the previous phase complete before the load landed", dbuf,
		    (long long)doff, cuda_emu_thread_name(e, e->cur->index, tb, sizeof tb),
		    cuda_emu_block_name(e, bb, sizeof bb), (long long)bytes, m.tx);
		cuda_emu_stop(e);
		return;
	}
	m.tx -= (int32_t)bytes;
	mbar_complete(&m);
	memcpy(bar, &m, sizeof m);
}

/* mbarrier.arrive (no transaction bytes): one arrival on bar.  One that
 * completes a phase yields, so that the threads waiting for it run at
 * once (rt/cuda_emu.c, run_all). */
void
txrt_emu_mbar_arrive(void *bar)
{
	Emu *e = cuda_emu_cur;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	if (m.pending == 0) {
		char tb[48], bb[48];
		cuda_emu_report(e, "thread %s of block %s arrives on an mbarrier whose phase has all its "
		    "arrivals (%d): more arrivals than its count", cuda_emu_thread_name(e, e->cur->index,
		    tb, sizeof tb), cuda_emu_block_name(e, bb, sizeof bb), COUNT(m));
		cuda_emu_stop(e);
		return;
	}
	m.pending--;
	int done = mbar_complete(&m);
	memcpy(bar, &m, sizeof m);
	if (done) {
		e->wake = 1;
		fiber_switch(&e->cur->fiber, &e->sched);
	}
}

/* The lanes of each warp that have made their warp's next arrival on an
 * mbarrier (txrt_emu_mbar_arrive_warp), per barrier: the arena offset of
 * the barrier + 1 (0: a free entry) and the count. */
enum { WARP_BARS = 16 };
static struct { uintptr_t bar; int lanes; } warp_arr[CUDA_EMU_MAX_THREADS / 32][WARP_BARS];

void
cuda_emu_warp_arrivals_drop(void)
{
	memset(warp_arr, 0, sizeof warp_arr);
}

/* mbarrier.arrive by lane 0 of a warp once every lane has reached it (the
 * PTX's arrival is lane 0's after a warp-wide .aligned wait, so the whole
 * warp is past the wait then): each thread calls it, and the warp's one
 * arrival happens at its last lane's call. */
void
txrt_emu_mbar_arrive_warp(void *bar)
{
	Emu *e = cuda_emu_cur;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	int w = e->cur->index / 32;
	int lanes = e->nthreads - w * 32 < 32 ? e->nthreads - w * 32 : 32;
	uintptr_t key = (uintptr_t)bar - (uintptr_t)cuda_emu_arena + 1;
	int at = -1, unused = -1;
	for (int i = 0; i < WARP_BARS; i++) {
		if (warp_arr[w][i].bar == key)
			at = i;
		else if (!warp_arr[w][i].bar && unused < 0)
			unused = i;
	}
	if (at < 0 && unused < 0) {
		cuda_emu_report(e, "warp %d arrives on more than %d mbarriers at once (the emulator's "
		    "limit)", w, WARP_BARS);
		cuda_emu_stop(e);
		return;
	}
	if (at < 0) {
		at = unused;
		warp_arr[w][at].bar = key;
		warp_arr[w][at].lanes = 0;
	}
	if (++warp_arr[w][at].lanes < lanes)
		return;
	warp_arr[w][at].bar = 0;
	txrt_emu_mbar_arrive(bar);
}

int
cuda_emu_mbar_ready(const Thread *t)
{
	Mbar m;
	memcpy(&m, t->mbar, sizeof m);
	return (int)DONE(m) != (t->parity & 1);
}

void
cuda_emu_mbar_stuck(Emu *e, const Thread *t)
{
	char tb[48], bb[48];
	Mbar m;
	memcpy(&m, t->mbar, sizeof m);
	cuda_emu_report(e, "thread %s of block %s waits for phase parity %d of an mbarrier whose phase "
	    "no arrival or TMA load can complete (%d arrivals and %d bytes missing; no thread of "
	    "the block can go on): on a GPU it would wait forever", cuda_emu_thread_name(e, t->index,
	    tb, sizeof tb), cuda_emu_block_name(e, bb, sizeof bb), t->parity & 1, m.pending, m.tx);
}

void
txrt_emu_mbar_wait(void *bar, int parity)
{
	Emu *e = cuda_emu_cur;
	Mbar m;
	if (!e || !mbar_at(e, bar, &m))
		return;
	if ((int)DONE(m) == (parity & 1)) {
		/* not yet: the other threads run until the phase completes (or
		 * none can, which run_block reports) */
		e->cur->mbar = bar;
		e->cur->parity = parity;
		e->cur->state = MBAR_WAIT;
		fiber_switch(&e->cur->fiber, &e->sched);
		memcpy(&m, bar, sizeof m);
	}
	if (COUNT(m) > 1)   /* completed by other threads' arrivals */
		e->cur->arrival_sync = 1;
	/* the phase has completed: its loads have landed for every reader */
	int kept = 0;
	for (int i = 0; i < ntma; i++) {
		if (tma_fl[i].bar != (uintptr_t)bar) {
			tma_fl[kept++] = tma_fl[i];
			continue;
		}
		for (uintptr_t p = tma_fl[i].lo; p < tma_fl[i].hi; p++)
			cuda_emu_shadow[p - (uintptr_t)cuda_emu_arena].async = 0;
	}
	ntma = kept;
}

/* ---- wgmma (sm_90a) ------------------------------------------------------------ */

/* A warpgroup's wgmma group in flight: its calls' descriptors (the bytes
 * they read, marked in the shadow until every thread of the warpgroup
 * has waited for the group: the first thread to issue a call marks them,
 * the last to wait clears them). */
typedef struct {
	int64_t adesc, bdesc;
	int n, flags;
} WgCall;

typedef struct {
	int64_t seq;             /* the group's number, as each thread counts them */
	WgCall *calls;
	int ncalls, cap;
	int waited;              /* threads that have waited for it */
} WgGroup;

enum { MAX_WG = CUDA_EMU_MAX_THREADS / 128 };
static struct {
	WgGroup *g;
	int ng, cap;
} wgs[MAX_WG];

static uint64_t desc_addr(int64_t desc, int r, int c);

/* Adds d to the in-flight count of each byte call c reads. */
static void
mark(Emu *e, const WgCall *c, int d)
{
	if (!cuda_emu_shadow)
		return;
	for (int op = 0; op < 2; op++) {
		int rows = op ? 16 : 64, cols = op ? c->n : 16;
		int t = op ? c->flags & 8 : c->flags & 4;
		int64_t desc = op ? c->bdesc : c->adesc;
		for (int r = 0; r < rows; r++)
			for (int k = 0; k < cols; k++) {
				uint64_t a = op ? (t ? desc_addr(desc, r, k) : desc_addr(desc, k, r)) :
				    (t ? desc_addr(desc, k, r) : desc_addr(desc, r, k));
				if (a + 2 > e->shared)
					continue;
				for (int b = 0; b < 2; b++)
					cuda_emu_shadow[a + (uint64_t)b].wgread =
					    (uint16_t)(cuda_emu_shadow[a + (uint64_t)b].wgread + d);
			}
	}
}

static WgGroup *
group_of(int w, int64_t seq)
{
	for (int i = 0; i < wgs[w].ng; i++)
		if (wgs[w].g[i].seq == seq)
			return &wgs[w].g[i];
	return NULL;
}

/* The threads of warpgroup w (128, or fewer in a small block). */
static int
wg_threads(Emu *e, int w)
{
	int n = e->nthreads - 128 * w;
	return n > 128 ? 128 : n;
}

/* Thread t has waited for its group seq: the last of its warpgroup to
 * do so unmarks the group's bytes. */
static void
retire(Emu *e, Thread *t, int64_t seq)
{
	int w = t->index / 128;
	WgGroup *g = w < MAX_WG ? group_of(w, seq) : NULL;
	if (!g || ++g->waited < wg_threads(e, w))
		return;
	for (int i = 0; i < g->ncalls; i++)
		mark(e, &g->calls[i], -1);
	free(g->calls);
	*g = wgs[w].g[--wgs[w].ng];
}

void
cuda_emu_wgmma_drop(void)
{
	for (int w = 0; w < MAX_WG; w++) {
		for (int i = 0; i < wgs[w].ng; i++)
			free(wgs[w].g[i].calls);
		wgs[w].ng = 0;
	}
	if (cuda_emu_shadow && cuda_emu_cur && cuda_emu_cur->check)   /* the shadow covers the arena */
		for (size_t i = 0; i < cuda_emu_cur->shared; i++)
			cuda_emu_shadow[i].wgread = 0;
}

/* The thread waits for all but its n newest groups. */
static void
wait_groups(Emu *e, Thread *t, int64_t n)
{
	int64_t upto = t->wg_committed - n;
	for (; t->wg_done < upto; t->wg_done++)
		retire(e, t, t->wg_done);
}

void
cuda_emu_wgmma_check(Emu *e, const char *what)
{
	Thread *t = e->cur;
	int64_t groups = t->wg_committed - t->wg_done;
	if (!t->wgmma && !groups)
		return;
	char tb[48], bb[48];
	cuda_emu_report(e, "thread %s of block %s %s with wgmma calls in flight (%lld group%s and "
	    "%d call%s not committed, no wgmma.wait_group since): its accumulators and the shared "
	    "tiles it reads are not settled", cuda_emu_thread_name(e, t->index, tb, sizeof tb),
	    cuda_emu_block_name(e, bb, sizeof bb), what, (long long)groups, groups == 1 ? "" : "s",
	    t->wgmma, t->wgmma == 1 ? "" : "s");
	if (t->wgmma)
		t->wg_committed++;
	t->wgmma = 0;
	wait_groups(e, t, 0);
}

void
txrt_emu_wgmma_wait(int commit, int n)
{
	Emu *e = cuda_emu_cur;
	if (!e)
		return;
	Thread *t = e->cur;
	if (commit) {
		t->wg_committed++;
		t->wgmma = 0;
	}
	wait_groups(e, t, n < 0 ? 0 : n);
}

void
txrt_emu_wgmma_sync(int kind)
{
	Emu *e = cuda_emu_cur;
	if (!e)
		return;
	if (kind == 1)
		txrt_emu_wgmma_wait(1, 0);
	else if (kind == 2)
		cuda_emu_wgmma_check(e, "touches a warpgroup fragment's registers");
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
	uintptr_t p = (uintptr_t)cuda_emu_arena + (uintptr_t)addr;
	int64_t off = ((int64_t)p - (int64_t)(uintptr_t)base) / 2;
	if (e->check) {
		uintptr_t q = cuda_emu_bounds(e, buf, base, off, n, 2, 0);
		if (!q)
			return 0.0f;
		cuda_emu_shadow_access(e, buf, q, off, 2, 0);
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
	Emu *e = cuda_emu_cur;
	if (!e || e->stopped)
		return;
	Thread *t = e->cur;
	int64_t x = t->tid[0];
	if (x < 0 || x >= 128 || n < 8 || n > 256 || n % 8) {
		cuda_emu_report(e, "wgmma by thread %lld of x (a warpgroup's 128) with N = %d", (long long)x, n);
		cuda_emu_stop(e);
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
	/* the first thread of the warpgroup to issue the group's call marks
	 * what it reads */
	int wg = t->index / 128;
	if (e->check && wg < MAX_WG) {
		WgGroup *g = group_of(wg, t->wg_committed);
		if (!g) {
			if (wgs[wg].ng == wgs[wg].cap) {
				int cap = wgs[wg].cap ? 2 * wgs[wg].cap : 8;
				WgGroup *ng = realloc(wgs[wg].g, (size_t)cap * sizeof *ng);
				if (!ng)
					goto oom;
				wgs[wg].g = ng;
				wgs[wg].cap = cap;
			}
			g = &wgs[wg].g[wgs[wg].ng++];
			memset(g, 0, sizeof *g);
			g->seq = t->wg_committed;
		}
		if (g->ncalls <= t->wgmma) {
			if (g->ncalls == g->cap) {
				int cap = g->cap ? 2 * g->cap : 8;
				WgCall *nc = realloc(g->calls, (size_t)cap * sizeof *nc);
				if (!nc)
					goto oom;
				g->calls = nc;
				g->cap = cap;
			}
			WgCall *c = &g->calls[g->ncalls++];
			c->adesc = adesc;
			c->bdesc = bdesc;
			c->n = n;
			c->flags = flags;
			mark(e, c, 1);
		}
	}
	t->wgmma++;
	return;
oom:
	cuda_emu_report(e, "out of memory for the wgmma groups in flight");
	cuda_emu_stop(e);
}
