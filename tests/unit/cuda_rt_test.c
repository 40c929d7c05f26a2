/* cuda_rt_test.c: unit tests of libtxrt's CUDA half (rt/cuda.c,
 * rt/cuda_emu.c, rt/fiber.c).
 *
 * The kernels here are written by hand the way txc writes the host copy
 * of a CUDA kernel: `void k(void **params)` reading its ids with
 * txrt_emu_id, waiting with txrt_emu_barrier, finding shared memory with
 * txrt_emu_shared and announcing each access with txrt_emu_access.  The
 * emulator must run them exactly (a shared-memory reverse over 2 blocks of
 * 64 threads, 3-D ids, a 1024-thread reduction), and its checker must
 * report a missing barrier, a missing write-after-read barrier, a
 * write-write conflict, a read of shared memory never written, a barrier
 * that only half the threads reach (without hanging) and an index out of
 * bounds (before the access is made).  Without a GPU, device mode must
 * fail with "no CUDA device".
 *
 *     cuda_rt_test          the tests (exit 0, or 1 after the failures)
 *     cuda_rt_test stub     device mode only, run by cuda_decls.sh with
 *                           the stub libcuda on the loader path
 *     cuda_rt_test mock     device mode against cuda_rt_mock.c, a pretend
 *                           driver that cuda_rt_mock.sh builds
 *     cuda_rt_test bench    the emulator's speed, in threads per second
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt/txrt.h"

static int failures;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

#define N 128                  /* elements of the reverse's vectors: 2 blocks of 64 */

enum { IN, OUT, TILE };
static const char *const rev_buffers[] = { "in", "out", "tile" };
static const unsigned char rev_kinds[] = { 0, 0, 1 };

/* ---- kernels ------------------------------------------------------------------ */

/* out[b*64 + t] = in[b*64 + 63 - t] through shared memory; params: in, out,
 * and how many barriers: 0 (none: a race), 1 (the right one), or 2
 * (reverses twice in a loop with no barrier between the second write and
 * the first read: a write-after-read race) */
static void
k_reverse(void **p)
{
	const float *in = *(const float **)p[0];
	float *out = *(float **)p[1];
	int mode = *(const int *)p[2];
	int64_t t = txrt_emu_id(0), b = txrt_emu_id(3), bd = txrt_emu_id(6);
	float *tile = txrt_emu_shared();
	int64_t g = b * bd + t;

	for (int it = 0; it < (mode == 2 ? 2 : 1); it++) {
		txrt_emu_access(IN, in, g, N, 4, 0, 1);
		float v = in[g];
		txrt_emu_access(TILE, tile, t, bd, 4, 1, 1);
		tile[t] = v + (float)it;
		if (mode >= 1)
			txrt_emu_barrier();
		txrt_emu_access(TILE, tile, bd - 1 - t, bd, 4, 0, 1);
		float w = tile[bd - 1 - t];
		txrt_emu_access(OUT, out, g, N, 4, 1, 1);
		out[g] = w;
	}
}

/* every thread stores to tile[0] (write-write), then thread 0 reads it */
static void
k_write_write(void **p)
{
	float *out = *(float **)p[1];
	int64_t t = txrt_emu_id(0);
	float *tile = txrt_emu_shared();

	txrt_emu_access(TILE, tile, 0, 64, 4, 1, 1);
	tile[0] = (float)t;
	txrt_emu_barrier();
	txrt_emu_access(TILE, tile, 0, 64, 4, 0, t == 0);
	if (t == 0) {
		txrt_emu_access(OUT, out, 0, N, 4, 1, 1);
		out[0] = tile[0];
	}
}

/* reads tile[t] that nobody wrote */
static void
k_uninit(void **p)
{
	float *out = *(float **)p[1];
	int64_t t = txrt_emu_id(0);
	float *tile = txrt_emu_shared();

	txrt_emu_access(TILE, tile, t, 64, 4, 0, 1);
	float v = tile[t];
	txrt_emu_access(OUT, out, t, N, 4, 1, 1);
	out[t] = v;
}

/* threads 32.. return before the barrier the others wait at */
static void
k_half_barrier(void **p)
{
	int64_t t = txrt_emu_id(0);

	(void)p;
	if (t >= 32)
		return;
	txrt_emu_barrier();
}

static int64_t oob_stores;     /* stores k_oob made after its checks */

/* out[g + 1] = 1: the last thread's store is out of bounds */
static void
k_oob(void **p)
{
	float *out = *(float **)p[1];
	int64_t g = txrt_emu_id(3) * txrt_emu_id(6) + txrt_emu_id(0);

	txrt_emu_access(OUT, out, g + 1, N, 4, 1, 1);
	out[g + 1] = 1;
	oob_stores++;
}

/* each thread writes its 12 ids at its own place in out (int64_t) */
static void
k_ids(void **p)
{
	int64_t *out = *(int64_t **)p[0];
	int64_t n = *(const int64_t *)p[1];
	int64_t id[12];

	for (int i = 0; i < 12; i++)
		id[i] = txrt_emu_id(i);
	int64_t thread = id[0] + id[6] * (id[1] + id[7] * id[2]);
	int64_t block = id[3] + id[9] * (id[4] + id[10] * id[5]);
	int64_t at = (block * id[6] * id[7] * id[8] + thread) * 12;
	for (int i = 0; i < 12; i++) {
		txrt_emu_access(0, out, at + i, n, 8, 1, 1);
		out[at + i] = id[i];
	}
}

/* a tree reduction of in[b*nt ..] in shared memory; out[b] = the sum;
 * a 16 KiB local array checks that fibers' stacks hold kernels' locals */
static void
k_reduce(void **p)
{
	const int *in = *(const int **)p[0];
	int *out = *(int **)p[1];
	int64_t t = txrt_emu_id(0), b = txrt_emu_id(3), nt = txrt_emu_id(6);
	int *s = txrt_emu_shared();
	volatile int local[4096];

	for (int i = 0; i < 4096; i++)
		local[i] = (int)t;
	txrt_emu_access(0, in, b * nt + t, 2 * nt, 4, 0, 1);
	txrt_emu_access(2, s, t, nt, 4, 1, 1);
	s[t] = in[b * nt + t] + local[4095] - (int)t;
	txrt_emu_barrier();
	for (int64_t half = nt / 2; half > 0; half /= 2) {
		if (t < half) {
			txrt_emu_access(2, s, t + half, nt, 4, 0, 1);
			txrt_emu_access(2, s, t, nt, 4, 0, 1);
			txrt_emu_access(2, s, t, nt, 4, 1, 1);
			s[t] += s[t + half];
		}
		txrt_emu_barrier();
	}
	if (t == 0) {
		txrt_emu_access(2, s, 0, nt, 4, 0, 1);
		txrt_emu_access(1, out, b, 2, 4, 1, 1);
		out[b] = s[0];
	}
}

/* the bench: out[g] = in[g] * 2, or when p[2] says, reversed within the
 * block through shared memory with a barrier */
static void
k_scale(void **p)
{
	const float *in = *(const float **)p[0];
	float *out = *(float **)p[1];
	int barrier = *(const int *)p[2];
	int64_t n = *(const int64_t *)p[3];
	int64_t t = txrt_emu_id(0), bd = txrt_emu_id(6);
	int64_t g = txrt_emu_id(3) * bd + t;

	txrt_emu_access(IN, in, g, n, 4, 0, 1);
	float v = in[g] * 2;
	if (barrier) {
		float *tile = txrt_emu_shared();
		txrt_emu_access(TILE, tile, t, bd, 4, 1, 1);
		tile[t] = v;
		txrt_emu_barrier();
		txrt_emu_access(TILE, tile, bd - 1 - t, bd, 4, 0, 1);
		v = tile[bd - 1 - t];
	}
	txrt_emu_access(OUT, out, g, n, 4, 1, 1);
	out[g] = v;
}

static const char *const ids_buffers[] = { "out" };
static const unsigned char ids_kinds[] = { 0 };
static const char *const red_buffers[] = { "in", "out", "partial" };
static const unsigned char red_kinds[] = { 0, 0, 1 };

enum { K_REVERSE, K_WW, K_UNINIT, K_HALF, K_OOB, K_IDS, K_REDUCE, K_SCALE, K_NOEMU };
static const txrt_cuda_kernel kernels[] = {
	{ "k_reverse", k_reverse, rev_buffers, rev_kinds, 3 },
	{ "k_write_write", k_write_write, rev_buffers, rev_kinds, 3 },
	{ "k_uninit", k_uninit, rev_buffers, rev_kinds, 3 },
	{ "k_half_barrier", k_half_barrier, NULL, NULL, 0 },
	{ "k_oob", k_oob, rev_buffers, rev_kinds, 3 },
	{ "k_ids", k_ids, ids_buffers, ids_kinds, 1 },
	{ "k_reduce", k_reduce, red_buffers, red_kinds, 3 },
	{ "k_scale", k_scale, rev_buffers, rev_kinds, 3 },
	{ "k_noemu", NULL, NULL, NULL, 0 },
};
static txrt_cuda_module module = {
	TXRT_CUDA_ABI, "// no PTX: emulated\n", kernels, (int)(sizeof kernels / sizeof kernels[0]), NULL,
};

/* ---- helpers ------------------------------------------------------------------- */

/* stderr of the last launch() with capture set */
static char captured[8192];

static int
launch(int capture, int k, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
    int64_t bz, int64_t shared, void **params)
{
	FILE *tmp = NULL;
	int saved = -1;

	if (capture) {
		fflush(stderr);
		tmp = tmpfile();
		saved = dup(2);
		if (tmp && saved >= 0)
			dup2(fileno(tmp), 2);
	}
	int rc = txrt_cuda_launch(&module, k, gx, gy, gz, bx, by, bz, shared, params);
	if (capture) {
		fflush(stderr);
		captured[0] = '\0';
		if (saved >= 0) {
			dup2(saved, 2);
			close(saved);
		}
		if (tmp) {
			rewind(tmp);
			size_t n = fread(captured, 1, sizeof captured - 1, tmp);
			captured[n] = '\0';
			fclose(tmp);
		}
	}
	return rc;
}

static int
lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static float in[N], out[N];

static int
run_reverse(int mode, int capture)
{
	float *pin = in, *pout = out;
	void *params[] = { &pin, &pout, &mode };

	for (int i = 0; i < N; i++) {
		in[i] = (float)i;
		out[i] = -1;
	}
	return launch(capture, K_REVERSE, 2, 1, 1, 64, 1, 1, 64 * sizeof(float), params);
}

/* ---- the tests ------------------------------------------------------------------- */

static void
test_reverse(void)
{
	int rc = run_reverse(1, 1);
	int bad = 0;

	CHECK(rc == 0);
	CHECK(txrt_cuda_emu_reports() == 0);
	CHECK(captured[0] == '\0');
	for (int i = 0; i < N; i++)
		bad += out[i] != (float)((i / 64) * 64 + 63 - i % 64);
	CHECK(bad == 0);
}

static void
test_missing_barrier(void)
{
	int rc = run_reverse(0, 1);
	const char *msg = txrt_last_error();

	CHECK(rc == TXRT_ERR_CUDA);
	/* per block (the threads run one after another up to a barrier):
	 * threads 0-31 read what nobody wrote yet, 32-63 write what threads
	 * 31-0 read and read what they wrote, in the same barrier interval */
	CHECK(txrt_cuda_emu_reports() == 192);
	CHECK(strstr(msg, "kernel 'k_reverse'") != NULL);
	CHECK(strstr(msg, "'tile'") != NULL);
	CHECK(strstr(msg, "of 192 reports") != NULL);
	CHECK(strstr(captured, "txrt: emulator: kernel 'k_reverse': ") == captured);
	CHECK(lines(captured) == 11);   /* ten reports and the count */
	CHECK(strstr(captured, "192 reports, the first 10 shown") != NULL);

	/* the same without the checks: no reports, no error */
	setenv("TXRT_CUDA_CHECK", "0", 1);
	rc = run_reverse(0, 1);
	CHECK(rc == 0);
	CHECK(txrt_cuda_emu_reports() == 0);
	CHECK(captured[0] == '\0');
	unsetenv("TXRT_CUDA_CHECK");

	/* the races come first, the reads of uninitialised memory they cause
	 * (threads 0-31 read slots that 63-32 write later in the interval)
	 * after them, at the end of the interval: thread 32 writes tile[32],
	 * which thread 31 read, the launch's first report and error */
	rc = run_reverse(0, 1);
	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "kernel 'k_reverse': write-after-read race on shared "
	    "buffer 'tile' element 32: thread (32,0,0) writes it after thread (31,0,0) read it") != NULL);
	CHECK(strstr(captured, "read of uninitialised") == NULL);   /* the first ten are races */
}

static void
test_race_message(void)
{
	/* mode 2: the second write of tile[t] comes after thread 63-t read it
	 * in the same interval for t >= 32 (write-after-read), and the read of
	 * tile[63-t] after thread 63-t wrote it again for t >= 32 (read after
	 * write) */
	int rc = run_reverse(2, 1);

	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_emu_reports() > 0);
	CHECK(strstr(captured, "write-after-read race on shared buffer 'tile' element 32: thread "
	    "(32,0,0) writes it after thread (31,0,0) read it, with no barrier between (block (0,0,0))")
	    != NULL);
	CHECK(strstr(captured, "read-after-write race on shared buffer 'tile' element 31: thread "
	    "(32,0,0) reads it after thread (31,0,0) wrote it") != NULL);
}

static void
test_write_write(void)
{
	float *pout = out;
	void *params[] = { NULL, &pout, NULL };
	int rc = launch(1, K_WW, 1, 1, 1, 64, 1, 1, 256, params);

	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_emu_reports() == 63);
	CHECK(strstr(txrt_last_error(), "kernel 'k_write_write': write-write race on shared buffer "
	    "'tile' element 0: threads (0,0,0) and (1,0,0) of block (0,0,0) both write it") != NULL);
}

static void
test_uninit(void)
{
	float *pout = out;
	void *params[] = { NULL, &pout, NULL };
	int rc = launch(1, K_UNINIT, 1, 1, 1, 64, 1, 1, 256, params);

	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_emu_reports() == 64);
	CHECK(strstr(txrt_last_error(), "kernel 'k_uninit': read of uninitialised shared memory: "
	    "buffer 'tile' element 0, thread (0,0,0) of block (0,0,0)") != NULL);
	/* the arena's poison: all bits set, a NaN */
	CHECK(out[5] != out[5]);
}

static void
test_half_barrier(void)
{
	void *params[] = { NULL };
	int rc = launch(1, K_HALF, 3, 1, 1, 64, 1, 1, 0, params);

	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_emu_reports() == 1);   /* the first block stops the launch */
	CHECK(strstr(txrt_last_error(), "kernel 'k_half_barrier': barrier not reached by every "
	    "thread of block (0,0,0): 32 threads wait at it while 32 finished the kernel (the "
	    "first: thread (32,0,0))") != NULL);
	/* the fibers left waiting do not disturb the next launch */
	test_reverse();
}

static void
test_oob(void)
{
	float *pout = malloc(N * sizeof *pout);   /* exactly N: ASan sees a stray store */
	void *params[] = { NULL, &pout, NULL };

	oob_stores = 0;
	int rc = launch(1, K_OOB, 2, 1, 1, 64, 1, 1, 0, params);
	CHECK(rc == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_emu_reports() == 1);
	CHECK(strstr(txrt_last_error(), "kernel 'k_oob': out-of-bounds write of global buffer "
	    "'out': element 128 of 128, thread (63,1,0)") == NULL);
	CHECK(strstr(txrt_last_error(), "kernel 'k_oob': out-of-bounds write of global buffer "
	    "'out': element 128 of 128, thread (63,0,0) of block (1,0,0)") != NULL);
	CHECK(oob_stores == N - 1);    /* the launch stopped before the bad store */
	free(pout);
	test_reverse();
}

static void
test_ids(void)
{
	const int64_t g[3] = { 2, 3, 2 }, b[3] = { 4, 2, 3 };
	int64_t n = g[0] * g[1] * g[2] * b[0] * b[1] * b[2] * 12;
	int64_t *o = calloc((size_t)n, sizeof *o);
	void *params[] = { &o, &n };
	int bad = 0;

	CHECK(launch(0, K_IDS, g[0], g[1], g[2], b[0], b[1], b[2], 0, params) == 0);
	for (int64_t bz = 0; bz < g[2]; bz++)
	for (int64_t by = 0; by < g[1]; by++)
	for (int64_t bx = 0; bx < g[0]; bx++)
	for (int64_t tz = 0; tz < b[2]; tz++)
	for (int64_t ty = 0; ty < b[1]; ty++)
	for (int64_t tx = 0; tx < b[0]; tx++) {
		int64_t block = bx + g[0] * (by + g[1] * bz);
		int64_t thread = tx + b[0] * (ty + b[1] * tz);
		const int64_t *id = o + (block * b[0] * b[1] * b[2] + thread) * 12;
		int64_t want[12] = { tx, ty, tz, bx, by, bz, b[0], b[1], b[2], g[0], g[1], g[2] };
		bad += memcmp(id, want, sizeof want) != 0;
	}
	CHECK(bad == 0);
	free(o);
}

static void
test_1024(void)
{
	static int rin[2048], rout[2];
	int *pin = rin, *pout = rout;
	void *params[] = { &pin, &pout };

	for (int i = 0; i < 2048; i++)
		rin[i] = i;
	CHECK(launch(1, K_REDUCE, 2, 1, 1, 1024, 1, 1, 1024 * sizeof(int), params) == 0);
	CHECK(txrt_cuda_emu_reports() == 0);
	CHECK(rout[0] == 1023 * 1024 / 2);
	CHECK(rout[1] == 2047 * 2048 / 2 - 1023 * 1024 / 2);

	/* beyond the limits */
	CHECK(launch(0, K_REDUCE, 1, 1, 1, 2048, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'k_reduce': block dimension x is 2048, the "
	    "emulator allows 1024") == 0);
	CHECK(launch(0, K_REDUCE, 1, 1, 1, 64, 32, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'k_reduce': 2048 threads per block, the "
	    "emulator allows 1024") == 0);
	CHECK(launch(0, K_REDUCE, 1, 1, 1, 64, 1, 1, 300000, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "300000 bytes of shared memory per block") != NULL);
	CHECK(launch(0, K_REDUCE, 1, 70000, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "grid dimension y is 70000") != NULL);
}

static void
test_arguments(void)
{
	txrt_cuda_module old = module;
	void *params[] = { NULL };

	/* nothing to run: 0 at once */
	CHECK(launch(0, K_HALF, 0, 1, 1, 64, 1, 1, 0, params) == 0);
	CHECK(launch(0, K_HALF, 4, 1, 1, 64, 0, 1, 0, params) == 0);
	CHECK(launch(0, K_HALF, -1, 1, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "kernel 'k_half_barrier': a negative launch size") != NULL);
	CHECK(launch(0, 99, 1, 1, 1, 1, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(launch(0, K_NOEMU, 1, 1, 1, 1, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "kernel 'k_noemu' has no host copy") != NULL);
	module.abi = 99;
	CHECK(launch(0, K_HALF, 1, 1, 1, 1, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "ABI 99") != NULL);
	module = old;
	/* outside a launch the emulator's calls are harmless */
	CHECK(txrt_emu_id(0) == 0);
	CHECK(txrt_emu_shared() == NULL);
	txrt_emu_barrier();
	txrt_emu_access(0, NULL, 5, 1, 4, 1, 1);
}

static void
test_memory(void)
{
	unsigned char host[1000], back[1000];

	CHECK(txrt_cuda_mode() == TXRT_CUDA_EMULATE);
	CHECK(strcmp(txrt_cuda_device_name(), "emulator") == 0);
	unsigned char *dev = txrt_cuda_malloc(sizeof host);
	CHECK(dev != NULL);
	for (int i = 0; i < 1000; i++)
		host[i] = (unsigned char)(i * 7);
	CHECK(txrt_cuda_memset(dev, 0x5a, 1000) == 0);
	CHECK(txrt_cuda_memcpy_htod(dev + 100, host, 500) == 0);
	CHECK(txrt_cuda_synchronize() == 0);
	CHECK(txrt_cuda_memcpy_dtoh(back, dev, 1000) == 0);
	int bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += back[i] != (i >= 100 && i < 600 ? host[i - 100] : 0x5a);
	CHECK(bad == 0);
	CHECK(txrt_cuda_memcpy_htod(NULL, host, 1) == TXRT_ERR_CUDA);
	CHECK(txrt_cuda_memcpy_dtoh(back, dev, 0) == 0);
	txrt_cuda_free(dev);
	void *zero = txrt_cuda_malloc(0);
	CHECK(zero != NULL);
	txrt_cuda_free(zero);
	txrt_cuda_free(NULL);
}

/* Device mode on a machine without a usable driver or GPU: launches and
 * allocations fail and say so.  Returns 0 when a GPU was found (skip). */
static int
test_no_device(int mode)
{
	void *params[] = { NULL };

	txrt_cuda_set_mode(mode);
	if (strcmp(txrt_cuda_device_name(), "none") != 0) {
		printf("cuda_rt_test: a GPU (%s): the no-device checks skipped\n",
		    txrt_cuda_device_name());
		return 0;
	}
	CHECK(txrt_cuda_mode() == (mode < 0 ? TXRT_CUDA_NONE : mode));
	CHECK(launch(0, K_HALF, 1, 1, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	const char *msg = txrt_last_error();
	CHECK(strstr(msg, "kernel 'k_half_barrier': no CUDA device: ") == msg);
	CHECK(strstr(msg, "; set TXRT_CUDA=emulate to run the kernels in libtxrt's emulator") != NULL);
	CHECK(txrt_cuda_emu_reports() == 0);
	CHECK(txrt_cuda_malloc(16) == NULL);
	CHECK(strstr(txrt_last_error(), "txrt_cuda_malloc: no CUDA device") != NULL);
	CHECK(txrt_cuda_synchronize() == TXRT_ERR_CUDA);
	txrt_cuda_free(NULL);
	return 1;
}

/* Mode none says which choice made it, not the driver's state: the
 * program's (txrt_cuda_set_mode), TXRT_CUDA=none, or a TXRT_CUDA value
 * that is no mode (a misspelling is not ignored). */
static void
test_none_reasons(void)
{
	void *params[] = { NULL };

	txrt_cuda_set_mode(TXRT_CUDA_NONE);
	CHECK(launch(0, K_HALF, 1, 1, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "no CUDA device: CUDA is turned off "
	    "(txrt_cuda_set_mode(TXRT_CUDA_NONE))") != NULL);
	setenv("TXRT_CUDA", "none", 1);
	txrt_cuda_set_mode(-1);
	CHECK(txrt_cuda_mode() == TXRT_CUDA_NONE);
	CHECK(launch(0, K_HALF, 1, 1, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "no CUDA device: CUDA is turned off (TXRT_CUDA=none)") != NULL);
	setenv("TXRT_CUDA", "emulat", 1);
	txrt_cuda_set_mode(-1);
	CHECK(txrt_cuda_mode() == TXRT_CUDA_NONE);
	CHECK(launch(0, K_HALF, 1, 1, 1, 64, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strstr(txrt_last_error(), "no CUDA device: TXRT_CUDA='emulat' is none of 'device', "
	    "'emulate' and 'none'") != NULL);
	CHECK(txrt_cuda_malloc(16) == NULL);
	CHECK(strstr(txrt_last_error(), "TXRT_CUDA='emulat'") != NULL);
	unsetenv("TXRT_CUDA");
	txrt_cuda_set_mode(-1);
}

/* two OS threads launch at once (the emulator takes them in turn) */
static void *
concurrent(void *arg)
{
	static float cin[2][N], cout[2][N];
	int which = (int)(intptr_t)arg, mode = 1, bad = 0;
	float *pin = cin[which], *pout = cout[which];
	void *params[] = { &pin, &pout, &mode };

	for (int i = 0; i < N; i++)
		cin[which][i] = (float)(i + which);
	for (int r = 0; r < 20; r++) {
		bad += txrt_cuda_launch(&module, K_REVERSE, 2, 1, 1, 64, 1, 1, 256, params) != 0;
		bad += txrt_cuda_emu_reports() != 0;
		for (int i = 0; i < N; i++)
			bad += cout[which][i] != (float)((i / 64) * 64 + 63 - i % 64 + which);
	}
	return (void *)(intptr_t)bad;
}

static void
test_threads(void)
{
	pthread_t t[2];
	void *bad[2] = { NULL, NULL };

	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, concurrent, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &bad[i]);
	CHECK(bad[0] == NULL && bad[1] == NULL);
}

/* ---- device mode against cuda_rt_mock.c (cuda_rt_mock.sh) ------------------------ */

static const txrt_cuda_kernel dev_kernels[] = {
	{ "fill", NULL, NULL, NULL, 0 },
	{ "heavy", NULL, NULL, NULL, 0 },
	{ "missing", NULL, NULL, NULL, 0 },
};
static txrt_cuda_module dev_module = {
	TXRT_CUDA_ABI, "// mock PTX\n", dev_kernels, 3, NULL,
};
static txrt_cuda_module bad_module = {
	TXRT_CUDA_ABI, "// BAD PTX\n", dev_kernels, 3, NULL,
};

/* what the mock's fill stores for grid g */
static int
fill_and_check(int g)
{
	int n = 100, host[100], bad = 0;
	int *dev = txrt_cuda_malloc(sizeof host);
	void *params[] = { &dev, &n };

	if (!dev)
		return 1;
	bad += txrt_cuda_memset(dev, 0, sizeof host) != 0;
	bad += txrt_cuda_launch(&dev_module, 0, g, 1, 1, 128, 1, 1, 0, params) != 0;
	bad += txrt_cuda_memcpy_dtoh(host, dev, sizeof host) != 0;
	for (int i = 0; i < n; i++)
		bad += host[i] != i + g;
	txrt_cuda_free(dev);
	return bad;
}

static void *
mock_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)fill_and_check(3);
}

static void
test_mock(void)
{
	int *loads = NULL, *optin = NULL;
	void *params[] = { NULL, NULL };

	txrt_cuda_set_mode(-1);
	CHECK(txrt_cuda_mode() == TXRT_CUDA_DEVICE);
	CHECK(strcmp(txrt_cuda_device_name(), "txrt mock GPU") == 0);
	/* the driver libtxrt opened, for the counters */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
	CHECK(lib != NULL);
	if (lib) {
		loads = dlsym(lib, "mock_loads");
		optin = dlsym(lib, "mock_shared_optin");
	}
	CHECK(loads && optin);
	if (!loads || !optin)
		return;

	/* memory, a launch and its parameters; the module loads once */
	int h[4] = { 1, 2, 3, 4 }, b[4] = { 0 };
	int *d = txrt_cuda_malloc(sizeof h);
	CHECK(d != NULL);
	CHECK(txrt_cuda_memcpy_htod(d, h, sizeof h) == 0);
	CHECK(txrt_cuda_memcpy_dtoh(b, d, sizeof b) == 0);
	CHECK(memcmp(h, b, sizeof h) == 0);
	CHECK(txrt_cuda_synchronize() == 0);
	txrt_cuda_free(d);
	void *zero = txrt_cuda_malloc(0);
	CHECK(zero != NULL);
	txrt_cuda_free(zero);
	CHECK(fill_and_check(2) == 0);
	CHECK(fill_and_check(5) == 0);
	CHECK(*loads == 1);
	CHECK(txrt_cuda_emu_reports() == 0);

	/* another OS thread, which has no context current: the primary */
	pthread_t t;
	void *bad = (void *)1;
	CHECK(pthread_create(&t, NULL, mock_thread, NULL) == 0);
	pthread_join(t, &bad);
	CHECK(bad == NULL);
	CHECK(*loads == 1);

	/* the limits, with their numbers */
	CHECK(txrt_cuda_launch(&dev_module, 0, 1, 1, 1, 64, 32, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'fill': 2048 threads per block, the device allows "
	    "1024") == 0);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 1024, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'heavy': 1024 threads per block, the kernel allows "
	    "512 on this device (it uses 128 registers per thread)") == 0);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 512, 1, 1, 0, params) == 0);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 32, 1, 128, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'heavy': block dimension z is 128, the device allows "
	    "64") == 0);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 70000, 1, 32, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'heavy': grid dimension y is 70000, the device "
	    "allows 65535") == 0);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 32, 1, 1, 300000, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'heavy': 300000 bytes of shared memory per block, "
	    "the device allows 232448") == 0);
	/* over 48 KiB: opted in (the mock refuses the launch otherwise) */
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 32, 1, 1, 100000, params) == 0);
	CHECK(*optin == 100000);
	CHECK(txrt_cuda_launch(&dev_module, 1, 1, 1, 1, 32, 1, 1, 60000, params) == 0);
	CHECK(*optin == 100000);

	/* driver errors name the call, the error and the kernel */
	CHECK(txrt_cuda_launch(&dev_module, 2, 1, 1, 1, 32, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'missing': cuModuleGetFunction failed: "
	    "CUDA_ERROR_NOT_FOUND (named symbol not found)") == 0);
	CHECK(txrt_cuda_launch(&bad_module, 0, 1, 1, 1, 32, 1, 1, 0, params) == TXRT_ERR_CUDA);
	CHECK(strcmp(txrt_last_error(), "kernel 'fill': cuModuleLoadDataEx failed: "
	    "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas fatal   : Unresolved "
	    "extern function 'BAD'") == 0);
	CHECK(*loads == 1);

	/* the emulator still works beside a device */
	txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
	test_reverse();
	txrt_cuda_set_mode(-1);
	CHECK(fill_and_check(1) == 0);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
bench(void)
{
	int64_t n = 1 << 22;
	float *bin = calloc((size_t)n, sizeof *bin), *bout = calloc((size_t)n, sizeof *bout);

	txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
	for (int check = 1; check >= 0; check--) {
		setenv("TXRT_CUDA_CHECK", check ? "1" : "0", 1);
		for (int barrier = 0; barrier <= 1; barrier++)
			for (int64_t bs = 64; bs <= 1024; bs *= 4) {
				void *params[] = { &bin, &bout, &barrier, &n };
				double t0 = now();
				int rc = txrt_cuda_launch(&module, K_SCALE, n / bs, 1, 1, bs, 1, 1,
				    bs * (int64_t)sizeof(float), params);
				double t = now() - t0;
				printf("checks %-3s  %-30s  blocks of %4lld: %6.2f M threads/s%s\n",
				    check ? "on" : "off",
				    barrier ? "shared memory and a barrier" : "global memory only",
				    (long long)bs, (double)n / t * 1e-6, rc ? " (failed)" : "");
			}
	}
	unsetenv("TXRT_CUDA_CHECK");
	free(bin);
	free(bout);
}

int
main(int argc, char **argv)
{
	alarm(300);   /* never hang */
	unsetenv("TXRT_CUDA");
	unsetenv("TXRT_CUDA_CHECK");
	if (argc > 1 && strcmp(argv[1], "bench") == 0) {
		bench();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "mock") == 0) {
		test_mock();
		return failures ? 1 : 0;
	}
	if (argc > 1 && strcmp(argv[1], "stub") == 0) {
		/* the stub library loads, but cuInit says what it is */
		if (test_no_device(TXRT_CUDA_DEVICE)) {
			fprintf(stderr, "stub: %s\n", txrt_last_error());
			CHECK(strstr(txrt_last_error(), "cuInit failed: CUDA_ERROR_STUB_LIBRARY") != NULL);
		}
		return failures ? 1 : 0;
	}

	/* the default on this machine, then device mode by choice */
	test_no_device(-1);
	test_no_device(TXRT_CUDA_DEVICE);
	test_no_device(TXRT_CUDA_NONE);
	test_none_reasons();
	setenv("TXRT_CUDA", "emulate", 1);
	txrt_cuda_set_mode(-1);    /* back to the default: TXRT_CUDA again */
	CHECK(txrt_cuda_mode() == TXRT_CUDA_EMULATE);
	unsetenv("TXRT_CUDA");
	txrt_cuda_set_mode(TXRT_CUDA_EMULATE);

	test_memory();
	test_arguments();
	test_reverse();
	test_missing_barrier();
	test_race_message();
	test_write_write();
	test_uninit();
	test_half_barrier();
	test_oob();
	test_ids();
	test_1024();
	test_threads();
	test_reverse();

	if (failures)
		fprintf(stderr, "cuda_rt_test: %d failures\n", failures);
	return failures ? 1 : 0;
}
