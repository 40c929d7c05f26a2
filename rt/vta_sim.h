/* vta_sim.h: the internals of libtxrt's VTA simulator (not installed),
 * shared by vta_run.c (the entry point, the device hook, the
 * interleavings), vta_sim.c (the decoded stream, the scheduler of the
 * three modules, the token queues and the checks on them) and vta_exec.c
 * (the SRAMs, the DMA of LOAD and STORE, GEMM and ALU, and the
 * per-element bookkeeping that finds races and reads of SRAM never
 * written).
 *
 * Happens-before between modules is kept with vector clocks.  Each module
 * numbers its instructions 1, 2, ... in the order it runs them (its
 * "ordinal"); clock[m][m'] is how many of module m''s instructions are
 * known to come before module m's current one (own program order, plus
 * what the tokens it popped carried).  Each SRAM element remembers the
 * ordinal and module of its last write and, per module, the ordinal of
 * the last read: an access conflicts with another module's earlier access
 * whose ordinal exceeds the accessing module's view of that module.
 */
#ifndef TXRT_VTA_SIM_H
#define TXRT_VTA_SIM_H

#include "vta.h"

/* the three modules and their names in messages */
enum { NMODULES = 3 };
extern const char *const vta_module_names[NMODULES];
extern const char *const vta_mem_names[6];

/* one SRAM element's accesses (see the top comment) */
typedef struct {
	uint32_t w;                /* ordinal of the last write; 0: never written */
	uint32_t r[NMODULES];      /* per module: ordinal of its last read; 0: none */
	uint8_t wm;                /* the module of the last write */
} VtaShadow;

typedef struct {
	const txrt_vta_config *cfg;
	int check;                 /* races and reads of SRAM never written */
	const txrt_vta_insn *insn; /* the stream, decoded */
	const uint32_t *mlist[NMODULES];   /* each module's instructions, in program order */

	/* the SRAMs (no OUT: STORE narrows ACC) and their shadows, by memory type
	 * UOP, WGT, INP, ACC */
	uint32_t *uop;
	int8_t *inp, *wgt;
	int32_t *acc;
	VtaShadow *shadow[4];
	uint32_t depth[4];

	/* DRAM: the regions sorted by phys */
	const txrt_vta_region *reg;
	int nreg;

	/* the instruction executing, its module and that module's clock */
	size_t cur;
	int mod;
	const uint32_t *vc;
} VtaSim;

/* the stream, decoded and checked instruction by instruction (vta_sim.c);
 * set cfg and check, zero the rest, then vta_prog_build */
enum { VTA_NQUEUES = 4 };
typedef struct {
	const txrt_vta_config *cfg;
	int check;
	size_t n;
	txrt_vta_insn *insn;
	uint8_t *mod, *pops, *pushes;      /* per instruction: module, bit masks of queues */
	uint32_t *ord;                     /* per instruction: its place in its module's list */
	uint32_t *mlist[NMODULES];
	size_t mcount[NMODULES];
	size_t *qpush[VTA_NQUEUES], *qpop[VTA_NQUEUES];   /* who pushes / pops each queue, in order */
	size_t npush[VTA_NQUEUES], npop[VTA_NQUEUES];
	txrt_vta_region *reg;              /* the regions, sorted by phys */
	int nreg;
	unsigned char *out;                /* per region: a STORE writes it */
} VtaProg;

/* vta_exec.c */
/* Bytes of one element of memory type mem in DRAM (ACC8: int8 lanes). */
uint32_t vta_dram_elem_bytes(const txrt_vta_config *cfg, int mem);
/* Allocates the SRAMs and shadows (zeroed); -1 when out of memory. */
int vta_sram_init(VtaSim *s);
void vta_sram_free(VtaSim *s);
/* Executes instruction s->cur (a LOAD, STORE, GEMM or ALU that passed
 * vta_insn_check; NOPs and FINISH do nothing); returns 0 or -1 after
 * txrt_set_error. */
int vta_exec(VtaSim *s);
/* The region that holds DRAM bytes [addr, addr+len), or -1. */
int vta_find_region(const txrt_vta_region *reg, int nreg, uint64_t addr, uint64_t len);

/* vta_sim.c */
/* Checks the regions, decodes the stream and checks each instruction
 * alone; 0, or -1 after txrt_set_error (vta_prog_free it either way). */
int vta_prog_build(VtaProg *p, const unsigned char *insns, size_t n, const txrt_vta_region *regions,
    int nregions);
void vta_prog_free(VtaProg *p);
/* The statistics a stream has before it runs: all but the cycles. */
void vta_prog_stats(const VtaProg *p, txrt_vta_stats *st);
/* Runs the stream once against reg (p->reg, or copies of it with other
 * host memory): deterministically, or choosing modules at random from
 * seed; with p->check, the checks at the end too.  Sets st's cycles,
 * busy and GEMM figures when st is not NULL.  0, or -1 after an error. */
int vta_sim_run(const VtaProg *p, const txrt_vta_region *reg, int random, uint64_t seed,
    txrt_vta_stats *st);
/* "vta: out of memory" as the last error; returns -1. */
int vta_oom(void);
/* "vta: insn N (TEXT): MESSAGE" as the last error, about instruction
 * s->cur; returns -1. */
int vta_error(const VtaSim *s, const char *fmt, ...) TXRT_PRINTF(2, 3);
/* Instruction i as "insn N (TEXT)" in buf. */
const char *vta_insn_name(const txrt_vta_insn *insn, size_t i, char *buf, size_t n);

#endif
