/* rt_test.c: unit tests of libtxrt (thread pool, allocation, errors).
 *
 * Runs parallel loops with 1, 2 and 7 threads and checks that every
 * iteration runs exactly once, that a count changed at run time takes
 * effect, that nested loops run (serially) and complete, that errors
 * raised in any chunk reach the caller, that allocations are aligned,
 * and that a child of fork() runs parallel loops (its pool has none of the
 * parent's workers) while the parent's pool goes on working; on Linux,
 * that every thread that runs a chunk may run on all of the process's
 * CPUs (the workers start on CPUs of their own, then widen their masks);
 * and that the AMX micro-kernels compute C (+)= A B exactly (int8) or
 * within rounding (bf16), natively where the CPU has AMX, on their
 * emulation where not (never a signal), and their _emulated forms alike.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/txrt.h"

static int failures;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

/* Each iteration adds its index + 1 to its own slot, so a slot holding
 * anything but i + 1 ran twice or never. */
typedef struct {
	int64_t *hits;
	atomic_int calls;
} Count;

static int
count_body(void *closure, int64_t begin, int64_t end)
{
	Count *c = closure;

	atomic_fetch_add(&c->calls, 1);
	for (int64_t i = begin; i < end; i++)
		c->hits[i] += i + 1;
	return 0;
}

static void
check_cover(int64_t begin, int64_t end, int expect_calls)
{
	Count c = { calloc(end > 0 ? end : 1, sizeof(int64_t)), 0 };
	int rc = txrt_parallel_for(count_body, &c, begin, end);
	int bad = 0;

	CHECK(rc == 0);
	for (int64_t i = 0; i < end; i++)
		bad += c.hits[i] != (i >= begin ? i + 1 : 0);
	CHECK(bad == 0);
	if (expect_calls >= 0)
		CHECK(atomic_load(&c.calls) == expect_calls);
	free(c.hits);
}

/* The calls a loop of n iterations makes with t threads: one when it
 * runs serially, else one per chunk, each half of what is left divided
 * by the threads, at least max(1, n / (16 * threads)) (pool.c's guided
 * schedule). */
static int
chunks(int64_t n, int t)
{
	int64_t threads = t < n ? t : n, grain, cur = 0;
	int calls = 0;

	if (threads <= 1)
		return 1;
	grain = n / (16 * threads);
	if (grain < 1)
		grain = 1;
	while (cur < n) {
		int64_t c = (n - cur) / (2 * threads);
		c = c < grain ? grain : c;
		cur += c < n - cur ? c : n - cur;
		calls++;
	}
	return calls;
}

/* An outer loop whose body runs an inner parallel loop over a row. */
typedef struct {
	int64_t *m;
	int64_t cols;
} Nest;

static int
inner_body(void *closure, int64_t begin, int64_t end)
{
	int64_t *row = closure;

	for (int64_t j = begin; j < end; j++)
		row[j] += j;
	return 0;
}

static int
outer_body(void *closure, int64_t begin, int64_t end)
{
	Nest *n = closure;

	for (int64_t i = begin; i < end; i++) {
		int rc = txrt_parallel_for(inner_body, n->m + i * n->cols, 0, n->cols);
		if (rc)
			return rc;
		for (int64_t j = 0; j < n->cols; j++)
			n->m[i * n->cols + j] += 1000 * i;
	}
	return 0;
}

static void
check_nested(void)
{
	Nest n = { calloc(37 * 53, sizeof(int64_t)), 53 };
	int bad = 0;

	CHECK(txrt_parallel_for(outer_body, &n, 0, 37) == 0);
	for (int64_t i = 0; i < 37; i++)
		for (int64_t j = 0; j < 53; j++)
			bad += n.m[i * 53 + j] != 1000 * i + j;
	CHECK(bad == 0);
	free(n.m);
}

/* Fails on the chunk that holds iteration 90. */
static int
fail_body(void *closure, int64_t begin, int64_t end)
{
	(void)closure;
	if (begin <= 90 && 90 < end) {
		txrt_set_error("iteration %d failed", 90);
		return TXRT_ERR_SIZE;
	}
	return 0;
}

static void
check_errors(void)
{
	txrt_clear_error();
	CHECK(strcmp(txrt_last_error(), "") == 0);
	txrt_set_error("size %s is %d", "M", -1);
	CHECK(strcmp(txrt_last_error(), "size M is -1") == 0);
	txrt_clear_error();
	/* with several threads the failing chunk runs on a worker */
	CHECK(txrt_parallel_for(fail_body, NULL, 0, 100) == TXRT_ERR_SIZE);
	CHECK(strcmp(txrt_last_error(), "iteration 90 failed") == 0);
	txrt_clear_error();
	CHECK(txrt_parallel_for(fail_body, NULL, 0, 50) == 0);
	CHECK(strcmp(txrt_last_error(), "") == 0);
}

static void
check_alloc(void)
{
	size_t sizes[] = { 0, 1, 3, 63, 64, 65, 1000, 1 << 20 };

	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		unsigned char *p = txrt_alloc(sizes[i]);
		CHECK(p != NULL);
		CHECK(((uintptr_t)p & 63) == 0);
		if (p && sizes[i])
			memset(p, 0xab, sizes[i]);
		txrt_free(p);
	}
	txrt_free(NULL);
	/* large blocks are kept and given again (not under AddressSanitizer):
	 * aligned, whole, of about their size only */
	unsigned char *big[3];
	for (int i = 0; i < 3; i++) {
		big[i] = txrt_alloc((size_t)3 << 20);
		CHECK(big[i] != NULL && ((uintptr_t)big[i] & 63) == 0);
		if (big[i])
			memset(big[i], i, (size_t)3 << 20);
	}
	for (int i = 0; i < 3; i++)
		txrt_free(big[i]);
	unsigned char *again = txrt_alloc((size_t)3 << 20), *small = txrt_alloc((size_t)1 << 20);
	CHECK(again != NULL && ((uintptr_t)again & 63) == 0 && small != NULL);
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_KEEP 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(NO_KEEP)
	CHECK(again == big[0] || again == big[1] || again == big[2]);
	CHECK(small != big[0] && small != big[1] && small != big[2]);
#endif
	if (again)
		memset(again, 7, (size_t)3 << 20);
	txrt_free(again);
	txrt_free(small);
	txrt_clear_error();
	CHECK(txrt_alloc(SIZE_MAX - 8) == NULL);
	CHECK(strstr(txrt_last_error(), "out of memory") != NULL);
}

/* After loops have started the workers: a forked child runs loops on
 * a pool of its own (an alarm ends it if it waits for workers it does not
 * have), and so does the parent afterwards. */
static void
check_fork(void)
{
	txrt_set_num_threads(3);
	check_cover(0, 1000, -1);
	fflush(stderr);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(20);
		check_cover(0, 1000, -1);
		check_cover(0, 77, -1);
		_exit(failures != 0);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	check_cover(0, 1000, -1);
}

#ifdef __linux__
/* Each chunk: the CPUs its thread may run on. */
static int
mask_body(void *closure, int64_t begin, int64_t end)
{
	atomic_int *narrow = closure;
	cpu_set_t proc, mine;
	(void)begin;
	(void)end;
	if (sched_getaffinity(0, sizeof mine, &mine) == 0 &&
	    sched_getaffinity(getpid(), sizeof proc, &proc) == 0 && !CPU_EQUAL(&mine, &proc))
		atomic_fetch_add(narrow, 1);
	usleep(100);   /* long enough that the workers take chunks too */
	return 0;
}

/* New workers (2 and 7 of them, more than this machine may have CPUs)
 * run their chunks with the process's whole mask, as the caller does. */
static void
check_affinity(void)
{
	for (int t = 2; t <= 7; t += 5) {
		atomic_int narrow = 0;
		txrt_set_num_threads(t);
		CHECK(txrt_parallel_for(mask_body, &narrow, 0, 64) == 0);
		CHECK(atomic_load(&narrow) == 0);
	}
}
#endif

/* The AMX kernels (rt/amx.c) on an 37 x 53 x 129 product at an offset
 * in larger arrays (strides 131, 140, 60): C = A B (first), then C +=
 * A B, against the sums here. */
typedef void AmxFn(void *, int64_t, const void *, int64_t, int64_t, const void *, int64_t,
    int64_t, int64_t, int64_t, int64_t);

static float
bf(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static void
check_amx(AmxFn *fn, int bf16)
{
	enum { M = 37, N = 53, K = 129, LA = 131, LB = 60, LC = 140 };
	static int8_t a8[M * LA], b8[K * LB];
	static uint16_t ah[M * LA], bh[K * LB];
	static int32_t c8[M * LC];
	static float cf[M * LC];
	uint32_t seed = 12345;
	for (int i = 0; i < M * LA; i++) {
		seed = seed * 1103515245u + 12345u;
		a8[i] = (int8_t)(seed >> 24);
		ah[i] = (uint16_t)(0x3c00 + (seed >> 20) % 0x600) ^ (seed & 0x10000 ? 0x8000 : 0);
	}
	for (int i = 0; i < K * LB; i++) {
		seed = seed * 1103515245u + 12345u;
		b8[i] = (int8_t)(seed >> 24);
		bh[i] = (uint16_t)(0x3c00 + (seed >> 20) % 0x600) ^ (seed & 0x10000 ? 0x8000 : 0);
	}
	memset(c8, 0x5a, sizeof c8);
	memset(cf, 0x5a, sizeof cf);
	for (int pass = 0; pass < 2; pass++) {
		if (bf16)
			fn(cf + 3, LC, ah + 1, LA, 1, bh + 2, LB, K, M, N, !pass);
		else
			fn(c8 + 3, LC, a8 + 1, LA, 1, b8 + 2, LB, K, M, N, !pass);
		int bad = 0;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				uint32_t r = 0;
				double d = 0, m = 0;
				for (int k = 0; k < K; k++) {
					r += (uint32_t)(a8[i * LA + 1 + k] * b8[k * LB + 2 + j]);
					double p = (double)bf(ah[i * LA + 1 + k]) * bf(bh[k * LB + 2 + j]);
					d += p;
					m += fabs(p);
				}
				if (bf16)
					bad += fabs((pass + 1) * d - cf[i * LC + 3 + j]) > 1e-4 * m * 2;
				else
					bad += (int32_t)(r * (uint32_t)(pass + 1)) != c8[i * LC + 3 + j];
			}
		CHECK(bad == 0);
	}
	/* nothing outside the block: the columns before and after it */
	for (int i = 0; i < M; i++) {
		uint32_t u;
		memcpy(&u, bf16 ? (void *)&cf[i * LC + 2] : (void *)&c8[i * LC + 2], 4);
		CHECK(u == 0x5a5a5a5au);
		memcpy(&u, bf16 ? (void *)&cf[i * LC + 3 + N] : (void *)&c8[i * LC + 3 + N], 4);
		CHECK(u == 0x5a5a5a5au);
	}
}

int
main(void)
{
	int counts[] = { 1, 2, 7 };

	CHECK(txrt_version() && strchr(txrt_version(), '.'));
	CHECK(txrt_get_num_threads() >= 1);
	for (int t = 0; t < 3; t++) {
		txrt_set_num_threads(counts[t]);
		CHECK(txrt_get_num_threads() == counts[t]);
		/* about four chunks per thread, handed out dynamically */
		check_cover(0, 1000, chunks(1000, counts[t]));
		check_cover(5, 12, chunks(7, counts[t]));
		check_cover(0, 1, 1);
		check_cover(3, 3, 0);
		check_cover(10, 4, 0);
		/* many small loops back to back */
		for (int k = 0; k < 2000; k++)
			check_cover(0, 64, -1);
		check_nested();
		check_errors();
	}
	/* back to the default (TXRT_NUM_THREADS or the CPU count) */
	txrt_set_num_threads(0);
	CHECK(txrt_get_num_threads() >= 1);
	check_cover(0, 12345, -1);
	check_alloc();
#ifdef __linux__
	check_affinity();
#endif
	check_fork();
	check_amx(txrt_amx_i8, 0);
	check_amx(txrt_amx_bf16, 1);
	check_amx(txrt_amx_i8_emulated, 0);
	check_amx(txrt_amx_bf16_emulated, 1);
	if (failures)
		fprintf(stderr, "rt_test: %d checks failed\n", failures);
	return failures != 0;
}
