/* lang.h: the shared vocabulary of every txc stage.
 *
 * Source buffers and locations, diagnostics, arena allocation and interned
 * names.  Every later stage (parser, sema, lower, target) includes this
 * header; it depends on nothing but libc.  The AST lives in ast.h.
 */
#ifndef TXC_LANG_H
#define TXC_LANG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TXC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TXC_NORETURN __attribute__((noreturn))

/* ---- arena.c ----------------------------------------------------------
 * Bump allocation in chunks; nothing is freed one by one.  `perm` lives for
 * the whole run (source, AST, names); passes may create their own.        */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);            /* zeroed, 16-aligned */
/* A point in an arena to return to, dropping what was allocated since
 * (a question whose answer holds no pointer into it: lower/lin_prove.c) */
typedef struct { void *chunk; size_t used; } ArenaMark;
ArenaMark arena_mark(Arena *a);
void arena_release(Arena *a, ArenaMark m);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) TXC_PRINTF(2, 3);
/* Grows a vector of `elem`-sized items held in `*data` with `*len` used and
 * `*cap` allocated; returns a pointer to the new (zeroed) last element.    */
void *arena_push(Arena *a, void *data_ptr, int *len, int *cap, size_t elem);
#define ARENA_PUSH(a, vec, n, cap) \
	((__typeof__(vec))arena_push((a), &(vec), &(n), &(cap), sizeof *(vec)))

/* The arena every stage allocates its long-lived data from. */
extern Arena *perm;

/* ---- source.c ---------------------------------------------------------
 * A source file is read whole and NUL-terminated.  A Loc is a file id and
 * a byte range; line and column are computed only when printing.          */
typedef struct {
	const char *name;   /* as given on the command line ("-" is "<stdin>") */
	const char *text;   /* NUL-terminated contents */
	size_t len;         /* bytes, without the terminating NUL */
	uint32_t *lines;    /* offsets of line starts, built on first use */
	int nlines;
} SrcFile;

typedef struct {
	uint32_t file;      /* index into the source table; 0 = no location */
	uint32_t begin;     /* byte offset of the first character */
	uint32_t end;       /* byte offset one past the last character */
} Loc;

/* Registers a buffer (copied) under `name` and returns its id (>= 1). */
uint32_t source_add(const char *name, const char *text, size_t len);
/* Reads a file ("-" reads stdin); returns 0 and reports an error if not. */
uint32_t source_load(const char *path);
const SrcFile *source_get(uint32_t id);
/* 1-based line and column (in bytes) of an offset. */
void source_linecol(uint32_t id, uint32_t off, int *line, int *col);
Loc loc_span(Loc a, Loc b);   /* from the start of a to the end of b */
extern const Loc loc_none;

/* ---- diag.c -----------------------------------------------------------
 * Diagnostics look like a C compiler's:
 *     file:line:col: error: message
 *         C[i, j] = A[i] * 2;
 *                   ^~~~
 * Errors accumulate; a stage checks diag_errors() when it ends.  After
 * diag_max_errors errors, one line says how many more were suppressed.     */
typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagKind;

void diag_error(Loc loc, const char *fmt, ...) TXC_PRINTF(2, 3);
void diag_warn(Loc loc, const char *fmt, ...) TXC_PRINTF(2, 3);
void diag_note(Loc loc, const char *fmt, ...) TXC_PRINTF(2, 3);
void diag_report(DiagKind kind, Loc loc, const char *fmt, va_list ap);
int diag_errors(void);
int diag_warnings(void);
void diag_reset(void);           /* forget counts (tests, several files) */
/* A trial that a caller may retry (bounds_infer.c): while muted,
 * diagnostics are counted but not printed; unmuting forgets the errors
 * counted since. */
void diag_mute(bool on);
/* Where the first error went since diag_mute(true) began muting (what a
 * generated schedule that did not lower tripped on), or loc_none. */
Loc diag_first_muted(void);
void diag_set_color(int on);     /* -1: auto (colour only on a terminal) */
void diag_set_max_errors(int n); /* 0: unlimited; default 50 */
void diag_set_stream(void *fp);  /* FILE *, default stderr */
void diag_flush(void);           /* "N more errors not shown", if any */

/* Fatal errors (I/O, out of memory) and internal compiler errors print a
 * message and longjmp to the catch point that main set with diag_catch;
 * the driver then removes any partial output.  Without a catch point they
 * exit(2).                                                                 */
void diag_fatal(const char *fmt, ...) TXC_PRINTF(1, 2) TXC_NORETURN;
void ice(const char *file, int line, const char *fmt, ...) TXC_PRINTF(3, 4) TXC_NORETURN;
#define ICE(...) ice(__FILE__, __LINE__, __VA_ARGS__)
#define ICE_ASSERT(c) ((c) ? (void)0 : ICE("assertion failed: %s", #c))
#include <setjmp.h>
extern jmp_buf *diag_catch;

/* ---- intern.c ---------------------------------------------------------
 * Interned names: equal strings give the same pointer, so names compare
 * with ==.                                                                  */
const char *intern(const char *s, size_t len);
const char *intern_cstr(const char *s);

/* ---- blob.c -----------------------------------------------------------
 * Named byte ranges a front end holds in memory (the ONNX importer's
 * weights), for constant tensors written `data("NAME")` (tx.5 CONSTANTS).
 * The bytes are not copied: they must live for the whole run.              */
void blob_add(const char *name, const void *data, size_t len);
/* false when no blob has that name */
bool blob_find(const char *name, const void **data, size_t *len);

/* ---- clock.c ----------------------------------------------------------
 * Milliseconds on a clock (CLOCK_MONOTONIC: wall time; the process's CPU
 * time counts what ran before main), for TXC_TIME_PASSES.                  */
#include <time.h>
double clock_ms(clockid_t clock);

#endif
