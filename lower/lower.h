/* lower.h: from a checked kernel and its schedule to a loop nest.
 *
 * Takes a kernel that passed sema_check and the schedule chosen for it
 * and gives an IrFunc (ir.h): the stages' loop nests with every schedule
 * primitive applied, bounds inferred, storage flattened and simplified.
 * Illegal schedules and accesses that cannot be proved in bounds are
 * reported through diag and give NULL.  pipeline.c lists the passes.
 */
#ifndef TXC_LOWER_H
#define TXC_LOWER_H

#include <stdio.h>

#include "lang/ast.h"
#include "lower/ir.h"

typedef struct {
	bool no_schedule;          /* --no-schedule: the kernel as written */
	const char *target;        /* "cpu" (default), "cuda", "vta": picks the schedule */
	const char *schedule;      /* -s NAME; NULL: the unnamed schedule */
	FILE *trace;               /* --trace-schedule: nest after each primitive */
	FILE *dump;                /* --dump-after=PASS writes here */
	const char *dump_after;    /* a pass name (file stem), or "all" */
	bool time_passes;          /* TXC_TIME_PASSES=1 */
	/* -D NAME=VALUE: sizes fixed at compile time */
	const char **def_names;
	int64_t *def_values;
	int ndefs;
} LowerOptions;

/* pipeline.c: the whole lowering; NULL after diagnostics. */
IrFunc *lower_kernel(Program *p, Kernel *k, const LowerOptions *opt);
/* The schedule lower_kernel would use (NULL: none applies). */
Schedule *lower_find_schedule(Program *p, Kernel *k, const LowerOptions *opt);

#endif
