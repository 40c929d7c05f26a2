/* cpu.h: what the cpu rules' two files share (internal to auto/): the
 * generator's state while it walks a kernel (cpu.c), the register tile of
 * a contraction (tile.c, rules C2 and C3), and the helpers both use to
 * read accesses and to write primitives.
 */
#ifndef TXC_AUTO_CPU_H
#define TXC_AUTO_CPU_H

#include "auto/auto.h"

/* P_FIXED: scheduled by a called kernel's own schedule (transfer.c) */
enum { P_ROOT, P_INLINE, P_AT, P_FIXED };

typedef struct {
	AutoGraph *g;
	FILE *fp;
	const AutoOptions *o;
	/* per stage, arrays of g->n (arena) */
	int *place;
	int *at_stage;                  /* P_AT: the root stage */
	const char **at_loop;           /* P_AT: its loop */
	int *partner;                   /* a contraction fused into this consumer's tile, or -1 */
	bool *pack;                     /* a transposing copy a contraction reads */
	/* per root stage: its loops, for what is computed at it */
	const char **row;               /* the outermost (parallel) loop */
	int *rowdims;                   /* the pure dims that loop runs over (0: none whole) */
	const char **tile;              /* the innermost loop outside a tile */
	const char **strip;             /* a contraction's column strip */
	int *stencil_of;                /* a stencil computed per tile of this stage */
	int *reader;                    /* only_reader after C1 (-1: none) */
	int *first_of, *next_of;        /* the stages whose reader is R, latest first: first_of[R],
	                                   then next_of[i] (-1 ends): C2's and C6's searches */
	int *group;                     /* the fusion group (AutoFusion.group), or the stage itself */
	int nknobs;                     /* knobs declared (template), at most AUTO_MAX_KNOBS */
} Cpu;

/* TUNE_MAX_KNOBS: a template txc tune can search */
#define AUTO_MAX_KNOBS 32

/* The accesses of one stage to another, collected. */
typedef struct {
	const Tensor *of;      /* NULL: every access */
	Expr *acc[64];
	int n;
	bool more;             /* past 64 */
} Accs;

typedef struct {
	bool ok;
	int jv, ir;               /* the vector axis (last) and the row axis, or -1 */
	int mr, nr, v;
	int ir2, mr2;             /* a second row axis and its rows, where the first is
	                             shorter than the registers allow (a 7-column
	                             image: 2 rows x 7 columns), or -1 and 1 */
	bool reuse;               /* the unit-stride operand misses the row axis */
	int pack_tensor;          /* an input to copy per strip (tensor index), or -1 */
	int pack_stage;           /* a transposing copy computed per strip, or -1 */
} Tile;

/* cpu.c */
const char *cpu_knob(Cpu *c, const char *stage, const char *what, const int *v, int n);
int cpu_choices(int *out, int def, const int *cand, int ncand, int lo, int hi);
void cpu_say(Cpu *c, const char *fmt, ...) TXC_PRINTF(2, 3);
int cpu_lanes(const Cpu *c, const AutoStage *s);
int64_t cpu_ext_or(int64_t e);
void cpu_accesses_of(const AutoStage *reader, const Tensor *of, Accs *a);
bool cpu_unit_last(Expr *e, int last);
bool cpu_uses_pure(Expr *e, int d);
const char *cpu_par_outer(Cpu *c, const char *st, const char **order, const int64_t *ext, int n,
    int *used);

bool cpu_identity_at(Expr *e, int d);

/* inlining.c: C1 */
void inlining_decide(Cpu *c);
bool inlining_transposing(const AutoStage *s);

/* tile.c */
bool tile_unit_through(Cpu *c, Expr *e, int last);
Tile tile_contraction(Cpu *c, int si);
void tile_register(Cpu *c, int R, int P, Tile t);

#endif
