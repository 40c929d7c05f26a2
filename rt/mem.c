/* mem.c: libtxrt's aligned allocation, its error messages and version.
 *
 * Buffers that txc's objects allocate are 64-byte aligned (a cache line,
 * and the widest vector a CPU target loads).  Messages are per thread: an
 * entry point that fails sets one and returns a code; its caller reads it
 * with txrt_last_error on the same thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "txrt.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

#define ALIGN 64

static _Thread_local char last_error[512];

void *
txrt_alloc(size_t bytes)
{
	void *p = NULL;

	/* round up so that the size is a multiple of the alignment (C11) */
	size_t n = bytes ? (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
	if (n < bytes || posix_memalign(&p, ALIGN, n) != 0) {
		txrt_set_error("out of memory (allocating %zu bytes)", bytes);
		return NULL;
	}
	return p;
}

void
txrt_free(void *p)
{
	free(p);
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
