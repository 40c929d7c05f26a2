/* viz.h: `txc viz`, pictures of a schedule (Halide's trace pictures).
 *
 * Takes a lowered kernel (the loop nest --print-loops shows: loops with
 * their kinds, before flatten, unroll and vectorize) and sizes, and gives
 * a trace (trace.c; the nest's text and lines: nest.c): every element
 * stored and loaded, in program order, with the
 * loop iteration, the thread (parallel and GPU loops) and the vector lane
 * that did it, on a clock where a parallel loop's threads and a vector's
 * lanes run at the same time (trace.c); the numbers a course discusses
 * (recomputation, peak live bytes, loads per store; stats.c); and, from
 * them, a self-contained web page that plays the trace (page.c, with the
 * script and style of viz.js and viz.css) or SVG frames of it (svg.c).
 * It reads the IR only through lower/'s interface (lower/ir.h).
 */
#ifndef TXC_VIZ_H
#define TXC_VIZ_H

#include <stdint.h>
#include <stdio.h>

#include "lower/ir.h"

/* Limits that keep a picture a picture (txc.1, VIZ): larger sizes are an
 * error that names the limit, before any page is written. */
enum {
	VIZ_MAX_ELEMS = 1 << 16,        /* elements of one tensor */
	VIZ_MAX_EVENTS = 1000000,       /* loads and stores in the trace */
};
#define VIZ_MAX_STEPS 50000000LL    /* loop iterations and statements run */

typedef enum { VIZ_LOAD, VIZ_STORE, VIZ_ALLOC, VIZ_FREE } VizKind;

/* One event, in program order (trace.c), then sorted by tick (stable). */
typedef struct {
	int64_t tick;        /* when: a statement takes one tick; parallel
	                        threads and vector lanes share them */
	int thread;          /* 0 outside parallel and GPU loops */
	int lane;            /* the lane of a vectorized loop, -1 outside */
	int line;            /* 1-based line of the loop nest text */
	VizKind kind;
	bool update;         /* a store in a reduction's update */
	int tensor;          /* index into VizTrace.tensors */
	int by;              /* loads: the tensor the statement stores, or -1 */
	int alloc;           /* ALLOC, FREE: the allocation's number (0, 1, ...) */
	int32_t *coord;      /* absolute coordinates (ALLOC/FREE: min, extent) */
	int64_t elem;        /* viz_finish: row-major index in the tensor's box */
	int64_t *iter;       /* stores: the values of the line's loops */
} VizEvent;

/* A tensor as drawn: an argument of the entry point or a stage's buffer
 * (all allocations of a stage share it); inlined stages have none. */
typedef struct {
	const char *name;
	ScalarType elem;
	int ndims;
	bool arg, input;
	int64_t *lo, *ext;   /* the box drawn: arguments [0, extent); stages:
	                        the union of their allocations */
	/* stats.c */
	int64_t stores, updates, distinct_stored;
	int64_t loads_of, distinct_loaded;   /* loads from this tensor */
	int64_t loads_by;                    /* loads by statements storing it */
	int64_t allocs, alloc_bytes_max, peak_bytes;
	int64_t reads_per_elem_max;
} VizTensor;

typedef struct {
	IrFunc *f;
	const char *schedule;     /* its name, "default" for the unnamed one */
	char *loops;              /* the loop nest text (--print-loops) */
	int nlines;
	/* per line (1-based), the loops around it, outermost first */
	const char ***line_loops; int *line_nloops;
	VizTensor *tensors; int ntensors;
	const char **inlined; int ninlined;   /* stages without a buffer */
	VizEvent *ev; int64_t nev;
	int64_t ticks;            /* the clock when the kernel ends */
	int threads;              /* most threads at once */
	int64_t steps;            /* loop iterations and statements run */
	const double *params;     /* the values it ran with (f->params order) */
	/* calls of tensorize intrinsics: one tick each, their accesses drawn
	 * from the call's meaning; calls without one (none today) are not;
	 * intrinsic: their names, in order of first call, joined by ", " */
	const char *intrinsic; int64_t intrinsic_calls, intrinsic_undrawn;
} VizTrace;

typedef struct {
	int threads;              /* a parallel loop's threads (default 4) */
	unsigned seed;            /* the inputs' random values */
	int64_t max_events;       /* 0: VIZ_MAX_EVENTS */
} VizOptions;

/* nest.c: the loop nest's text (t->loops, nlines, line_loops), and the map
 * from statements to its lines. */
typedef struct VizLines VizLines;
VizLines *viz_nest(VizTrace *t);
int viz_line_of(VizLines *m, IrStmt *s);    /* 1-based; 0: not found */

/* trace.c: runs f with the parameter values `params` (f's order; sizes
 * and scalars as doubles) and fills *t; false after a message on stderr
 * (a limit exceeded, a failing assert, an IR form it cannot run). */
bool viz_trace(IrFunc *f, const double *params, const VizOptions *o, VizTrace *t);

/* stats.c: each event's element in its tensor's box, the events in
 * tick order (stable), the per-tensor numbers; false after a message (a
 * stage whose box is too large to draw). */
bool viz_finish(VizTrace *t);
/* The numbers as text (txc viz --stats): one block per trace. */
void viz_print_stats(FILE *fp, VizTrace *t);
/* The events as text (txc viz --dump-trace), a line each. */
void viz_print_trace(FILE *fp, VizTrace *t);

/* page.c: the page, one panel per trace, side by side.  `title` heads it. */
bool viz_write_page(FILE *fp, const char *title, VizTrace **t, int n);

/* svg.c: the picture of the traces (side by side) at one tick, as SVG,
 * drawn by the rules the page uses (txc viz --frames). */
void viz_write_svg(FILE *fp, VizTrace **t, int n, int64_t tick);

#endif
