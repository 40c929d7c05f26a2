/* txrt.h: libtxrt, the run-time library that txc's objects call.
 *
 * An object that txc writes for the CPU needs only this library, libc and
 * libm.  It gives a thread pool for parallel loops (persistent workers,
 * dynamic chunks, the caller takes part, nested loops run serially),
 * 64-byte aligned allocation for intermediate buffers, the last error
 * message of the calling thread (what a failing entry point explains),
 * and the library's version.  Every exported name starts with txrt_.
 */
#ifndef TXRT_H
#define TXRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TXRT_API __attribute__((visibility("default")))
#define TXRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TXRT_API
#define TXRT_PRINTF(f, a)
#endif

/* The codes a txc entry point returns (0: success). */
enum {
	TXRT_OK = 0,
	TXRT_ERR_NULL = 1,      /* a tensor pointer is NULL */
	TXRT_ERR_SIZE = 2,      /* a size is negative or inconsistent */
	TXRT_ERR_DIVIDE = 3,    /* a size an exact split requires to divide does not */
	TXRT_ERR_ALLOC = 4,     /* out of memory */
	TXRT_ERR_DLPACK = 5,    /* a DLTensor has the wrong device, type or shape */
};

/* The library's version, "MAJOR.MINOR.PATCH". */
TXRT_API const char *txrt_version(void);

/* ---- threads ------------------------------------------------------------
 * A parallel loop body: runs iterations [begin, end) with its captured
 * variables in closure; returns 0 or an error code (after txrt_set_error). */
typedef int (*txrt_task)(void *closure, int64_t begin, int64_t end);

/* Runs fn over [begin, end) in contiguous chunks that the threads, the
 * calling one included, take one after another, large ones first.
 * Returns 0, or the code of a chunk that failed (its message becomes the
 * caller's last error).  Called from inside a parallel loop, or while
 * another thread uses the pool, it runs the whole range on the calling
 * thread. */
TXRT_API int txrt_parallel_for(txrt_task fn, void *closure, int64_t begin, int64_t end);

/* The number of threads parallel loops use, the caller included: from
 * TXRT_NUM_THREADS when set, else the number of online CPUs. */
TXRT_API int txrt_get_num_threads(void);
/* Changes it (n <= 0: back to the default); takes effect at the next
 * parallel loop. */
TXRT_API void txrt_set_num_threads(int n);

/* ---- memory ---------------------------------------------------------------
 * 64-byte aligned blocks; txrt_alloc(0) gives a valid, freeable pointer.
 * On failure it returns NULL and sets the last error. */
TXRT_API void *txrt_alloc(size_t bytes);
TXRT_API void txrt_free(void *p);

/* ---- errors ---------------------------------------------------------------
 * One message per thread, kept until the next txrt_set_error. */
TXRT_API void txrt_set_error(const char *fmt, ...) TXRT_PRINTF(1, 2);
/* The calling thread's last message ("" when none). */
TXRT_API const char *txrt_last_error(void);
TXRT_API void txrt_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif
