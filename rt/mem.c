/* mem.c: libtxrt's aligned allocation, its error messages and version.
 *
 * Buffers that txc's objects allocate are 64-byte aligned (a cache line,
 * and the widest vector a CPU target loads).  Messages are per thread: an
 * entry point that fails sets one and returns a code; its caller reads it
 * with txrt_last_error on the same thread.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txrt.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

#define ALIGN 64

static _Thread_local char last_error[512];

/* Large blocks are kept when freed and given again to the next
 * allocation of their size: an entry point allocates its intermediate
 * tensors on every call (a ResNet-18's, 30 MB), and the C library returns
 * blocks that large to the system on free, so each call faulted in and
 * zeroed every page again (15 of its 88 ms), where onnxruntime keeps an
 * arena.  At most KEEP_SLOTS blocks of KEEP_MIN bytes or more, KEEP_MAX
 * bytes in all; a block is reused for a request of at most its size and
 * at least 3/4 of it.  Under AddressSanitizer nothing is kept, so a use
 * after free is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define KEEP_SLOTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEEP_SLOTS 0
#endif
#endif
#ifndef KEEP_SLOTS
#define KEEP_SLOTS 64
#endif
#define KEEP_MIN ((size_t)256 << 10)
#define KEEP_MAX ((size_t)512 << 20)

/* Each block starts ALIGN bytes before the pointer given out, its size
 * (the usable bytes) in the first word. */
typedef struct {
	size_t size;
} Head;

static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static void *kept[KEEP_SLOTS + 1];   /* the blocks' starts */
static size_t kept_size[KEEP_SLOTS + 1], kept_bytes;
static int nkept;

static void *
take_kept(size_t n)
{
	void *b = NULL;
	if (KEEP_SLOTS == 0 || n < KEEP_MIN)
		return NULL;
	pthread_mutex_lock(&keep_mu);
	int best = -1;
	for (int i = 0; i < nkept; i++)
		if (kept_size[i] >= n && kept_size[i] - kept_size[i] / 4 <= n &&
		    (best < 0 || kept_size[i] < kept_size[best]))
			best = i;
	if (best >= 0) {
		b = kept[best];
		kept_bytes -= kept_size[best];
		nkept--;
		kept[best] = kept[nkept];
		kept_size[best] = kept_size[nkept];
	}
	pthread_mutex_unlock(&keep_mu);
	return b;
}

static bool
keep(void *b, size_t n)
{
	bool done = false;
	if (KEEP_SLOTS == 0 || n < KEEP_MIN)
		return false;
	pthread_mutex_lock(&keep_mu);
	if (nkept < KEEP_SLOTS && kept_bytes + n <= KEEP_MAX) {
		kept[nkept] = b;
		kept_size[nkept++] = n;
		kept_bytes += n;
		done = true;
	}
	pthread_mutex_unlock(&keep_mu);
	return done;
}

void *
txrt_alloc(size_t bytes)
{
	void *b = NULL;

	/* round up so that the size is a multiple of the alignment (C11) */
	size_t n = bytes ? (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
	if (n < bytes || n > SIZE_MAX - ALIGN) {
		txrt_set_error("out of memory (allocating %zu bytes)", bytes);
		return NULL;
	}
	b = take_kept(n);
	if (!b) {
		if (posix_memalign(&b, ALIGN, n + ALIGN) != 0) {
			txrt_set_error("out of memory (allocating %zu bytes)", bytes);
			return NULL;
		}
		((Head *)b)->size = n;
	}
	return (char *)b + ALIGN;
}

void
txrt_free(void *p)
{
	if (!p)
		return;
	void *b = (char *)p - ALIGN;
	if (!keep(b, ((Head *)b)->size))
		free(b);
}

void
txrt_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
}

const char *
txrt_last_error(void)
{
	return last_error;
}

void
txrt_clear_error(void)
{
	last_error[0] = '\0';
}

const char *
txrt_version(void)
{
	return PACKAGE_VERSION;
}
