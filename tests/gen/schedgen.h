/* schedgen.h: what schedgen.c shares with the generator parts in files of
 * their own (schedgen_with.c: compute_with groups; schedgen_update.c:
 * update definitions): the stages and loops it tracks, the output buffer
 * and the random streams. */
#ifndef TXC_SCHEDGEN_H
#define TXC_SCHEDGEN_H

#include <stdint.h>

#include "lang/ast.h"

#define MAXS 32        /* stages */
#define MAXL 24        /* loops of a stage */

typedef struct {
	const char *name;
	bool red;          /* a reduction axis, or made from one */
	int ext;           /* constant extent, 0: not known to be constant */
	bool par, vec;
	bool scan;         /* made from a scan axis: serial, in order */
	unsigned roots;    /* the root axes it is made from: pure d as bit d, reduction
	                      axis a as bit 16 + a */
	/* cuda mode */
	int gb;            /* G_SERIAL, G_BLOCK or G_THREAD */
	int gd;            /* its dimension: 0 x, 1 y, 2 z */
	int zone;          /* Z_BLOCK, Z_MID, Z_THREAD or Z_INNER in a kernel stage */
	bool tiled;        /* bound by gpu_tile (no bind to write) */
} Loop;

typedef struct {
	const char *name;
	Tensor *t;         /* NULL for stages a primitive made */
	bool output, reduction;
	Loop loops[MAXL];
	int nloops;
	int cons[MAXS];    /* stages that read it */
	int ncons;
	bool inlined;
	bool frozen;       /* after rfactor or cache_write: leave its loops alone */
	bool cached;       /* cache_write applied */
	int redirect;      /* cache_write or rfactor moved its reads to this stage, or -1 */
	int gk;            /* cuda mode: GK_KERNEL, GK_INLINE, GK_SHARED or GK_LOCAL */
	bool gfused;       /* cuda mode: two of its loops fused (regions of / and %) */
	bool scan;         /* a scan (tx.5 SCANS): computed at root */
	bool rows;         /* its update reads earlier steps at its own index along
	                      every other axis: those loops may go outside the scan loops */
	bool pinned;       /* one of a group of scans: its scan loop stays as it is */
	/* an update definition (tx.5 UPDATES, schedgen_update.c): its domain's
	 * loops are red ones; ukeep has bit d for each pure axis it keeps in
	 * its place; uassoc: its steps may run in any order */
	bool upd, uassoc;
	bool tassoc;       /* the first output of a tuple reduction, combiner associative */
	bool tmember;      /* an output of a tuple reduction other than the first */
	unsigned ukeep;
	unsigned dep[16];  /* per reduction axis: the pure axes its range uses (sum(k <= i)),
	                      whose loops stay outside its loops */
} Stage;

extern Stage st[MAXS];
extern int nst;
extern Kernel *kern;
extern uint64_t rng_with;      /* compute_with's own stream (schedgen_with.c) */
extern char out[16384];
extern size_t outlen;

void emit(const char *fmt, ...) TXC_PRINTF(1, 2);
void shape_loops(Stage *s);
int rnd(int n);
bool chance(int percent);
void illegal(const char *why);            /* the schedule must be rejected: why */
const char *fresh_name(const char *prefix);

/* schedgen_with.c: now and then two stages of the same domain fused by
 * compute_with, the second scheduled as a copy of the first. */
void with_pick(void);                 /* before a schedule: the pair, or none */
bool with_lead(int si);               /* si leads: shaped first, no cache_write/rfactor */
bool with_member(int si);             /* si copies the lead's loops */
void with_shape_lead(Stage *s);       /* shape_loops, the text kept */
void with_shape_member(Stage *s);     /* the lead's primitives again, for s */
void with_fuse(Stage *s);             /* s.compute_with(lead, loop) */

/* schedgen_update.c: stages with an update definition (tx.5 UPDATES) */
void updgen_setup(Stage *s);              /* its domain's loops, ukeep, uassoc */
bool updgen_split_ok(Stage *s, const Loop *l);  /* a shift_inward split of l */
bool updgen_tile_ok(Stage *s, const Loop *x, const Loop *y);
bool updgen_fuse_ok(Stage *s, const Loop *a, const Loop *b);
bool updgen_order_ok(Stage *s, const Loop *after, int n);
void updgen_inject(Stage *s, char *why);  /* one certainly illegal primitive */

#endif
