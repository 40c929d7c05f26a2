/* vta.h: libtxrt's VTA half: the instruction encoder and decoder, and a
 * simulator of the Versatile Tensor Accelerator that runs instruction
 * streams on the host and checks them.
 *
 * txc's VTA target writes a stream of 16-byte instructions (LOAD, STORE,
 * GEMM, ALU, FINISH) and the micro-op words that GEMM and ALU run; this
 * header encodes and decodes them bit-exactly as the hardware does
 * (shared/VTA-ISA.md, ISA of VTA 0.0.2, default 1x16x16 configuration),
 * prints them as one line of assembly each, and runs a stream against
 * DRAM regions backed by host memory: the simulator follows TVM's fsim
 * and reports what fsim would not (races between the load, compute and
 * store modules that no token orders, reads of SRAM never written,
 * indices out of range, deadlocks, a FINISH that is not last, tokens
 * left over, and what hangs real hardware).  A driver of a real VTA can
 * register itself (txrt_vta_set_device) to run the streams instead.
 * Every exported name starts with txrt_vta_ or TXRT_VTA_.
 */
#ifndef TXRT_VTA_H
#define TXRT_VTA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "txrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Continues txrt.h's list of codes: the VTA simulator (or the registered
 * device) reported a problem with a stream. */
#define TXRT_ERR_VTA 7

/* The hardware version whose ISA this is (VTA's HW_VER), and the size of
 * one instruction. */
#define TXRT_VTA_HW_VER "0.0.2"
#define TXRT_VTA_INSN_BYTES 16

/* ---- configuration --------------------------------------------------------
 * The default configuration (VTA-ISA.md section 1), one table so that
 * another configuration is a table change.  The simulator takes its SRAM
 * depths, element shapes and cycle model from it; the encoding's field
 * widths are those of the default configuration whatever the table says. */
typedef struct txrt_vta_config {
	int batch, block_in, block_out;        /* 1, 16, 16 */
	int inp_bits, wgt_bits, acc_bits;      /* 8, 8, 32 (the only widths the simulator runs) */
	int uop_depth, inp_depth, wgt_depth, acc_depth;  /* 8192, 2048, 1024, 2048 (elements) */
	/* 16, 256, 64, 16, 4 */
	int inp_elem_bytes, wgt_elem_bytes, acc_elem_bytes, out_elem_bytes, uop_elem_bytes;
	int max_tokens;                        /* 255: portable bound of outstanding tokens per queue */
	int insn_queue;                        /* 512: per-module instruction queue depth */
	/* the cycle model (see txrt_vta_run) */
	int dma_bytes_per_cycle;               /* 8 (64-bit AXI) */
	int dma_latency;                       /* 64: fixed cycles per LOAD/STORE instruction */
	int gemm_cycles_per_uop, alu_cycles_per_uop;  /* 1, 2 */
	int insn_overhead;                     /* 4: fixed cycles per GEMM/ALU instruction */
} txrt_vta_config;
TXRT_API const txrt_vta_config *txrt_vta_default_config(void);

/* ---- instructions ------------------------------------------------------------ */
enum { TXRT_VTA_LOAD = 0, TXRT_VTA_STORE = 1, TXRT_VTA_GEMM = 2, TXRT_VTA_FINISH = 3, TXRT_VTA_ALU = 4 };
enum { TXRT_VTA_MEM_UOP = 0, TXRT_VTA_MEM_WGT = 1, TXRT_VTA_MEM_INP = 2, TXRT_VTA_MEM_ACC = 3,
	TXRT_VTA_MEM_OUT = 4, TXRT_VTA_MEM_ACC8 = 5 };
enum { TXRT_VTA_ALU_MIN = 0, TXRT_VTA_ALU_MAX = 1, TXRT_VTA_ALU_ADD = 2, TXRT_VTA_ALU_SHR = 3,
	TXRT_VTA_ALU_MUL = 4 };
/* The modules (txrt_vta_module) */
enum { TXRT_VTA_MOD_LOAD = 0, TXRT_VTA_MOD_COMPUTE = 1, TXRT_VTA_MOD_STORE = 2 };

/* One instruction, decoded (all fields, whatever the opcode uses).  Fields
 * the opcode does not use are ignored by txrt_vta_encode and set to 0 by
 * txrt_vta_decode; zero the structure before filling it in. */
typedef struct txrt_vta_insn {
	int opcode;
	int pop_prev, pop_next, push_prev, push_next;  /* 0/1 */
	/* LOAD / STORE: element indices and counts (in elements of mem_type) */
	int mem_type;
	uint32_t sram_base, dram_base;
	uint32_t y_size, x_size, x_stride;
	uint32_t y_pad0, y_pad1, x_pad0, x_pad1;
	/* GEMM / ALU (FINISH is encoded as a GEMM) */
	int reset;
	uint32_t uop_bgn, uop_end, iter_out, iter_in;
	uint32_t dst_out, dst_in, src_out, src_in, wgt_out, wgt_in;
	int alu_op, use_imm;
	int32_t imm;
} txrt_vta_insn;

/* Encodes into 16 bytes (two little-endian 64-bit words, bit n of the
 * instruction is bit n%64 of word n/64).  Returns 0, or -1 when the opcode
 * is not one of the five or a field does not fit its width (a flag other
 * than 0 or 1, an imm outside -32768..32767); then *out is unchanged. */
TXRT_API int txrt_vta_encode(const txrt_vta_insn *in, unsigned char out[16]);
TXRT_API void txrt_vta_decode(const unsigned char in[16], txrt_vta_insn *out);
/* A micro-op word: dst (ACC index, 11 bits), src (INP index for GEMM, ACC
 * for ALU, 11 bits), wgt (WGT index, 10 bits; 0 for ALU).  Returns 0 and
 * sets *out, or -1 when an index does not fit. */
TXRT_API int txrt_vta_uop(uint32_t dst, uint32_t src, uint32_t wgt, uint32_t *out);
/* The three indices of a micro-op word. */
TXRT_API void txrt_vta_uop_decode(uint32_t uop, uint32_t *dst, uint32_t *src, uint32_t *wgt);
/* One line of assembly, e.g.
 *   LOAD  INP  sram=16 dram=0x1000 y=4 x=4 stride=16 pad=1,1,1,1  [pop_next push_next]
 *   GEMM  uop=[0,1) iter=16x16 dst=0,1 src=1,0 wgt=1,16  [pop_prev push_prev]
 *   ALU   SHR imm=8 uop=[2,3) iter=1x16 dst=0,1 src=0,1
 *   NOP load      (a LOAD or STORE with x_size 0, named after its module)
 * Factors print as out,in; pads as y0,y1,x0,x1 (only when one is not 0).
 * Writes at most n bytes, NUL included (snprintf semantics); returns the
 * length of the whole line. */
TXRT_API int txrt_vta_format(const txrt_vta_insn *in, char *buf, size_t n);
/* The module an instruction runs on: TXRT_VTA_MOD_LOAD for LOAD INP/WGT
 * (and their NOPs), TXRT_VTA_MOD_STORE for STORE, TXRT_VTA_MOD_COMPUTE
 * for everything else. */
TXRT_API int txrt_vta_module(const txrt_vta_insn *in);
/* Prints a stream of ninsn instructions, one numbered line each. */
TXRT_API void txrt_vta_print_stream(FILE *fp, const unsigned char *insns, size_t ninsn);

/* ---- the simulator ------------------------------------------------------------
 * DRAM as the stream sees it: regions of "physical" addresses (bytes), each
 * backed by host memory.  The stream's dram_base fields are element
 * indices: byte address = dram_base * element bytes of the memory type
 * (UOP 4, WGT 256, INP 16, ACC 64, OUT 16, ACC8 16). */
typedef struct txrt_vta_region {
	uint64_t phys;        /* byte address, 4096-aligned, never 0 */
	uint64_t bytes;
	void *host;           /* backing memory (read for loads, written for stores) */
	const char *name;     /* for messages: the tensor */
} txrt_vta_region;

typedef struct txrt_vta_stats {
	uint64_t insns[5];            /* by opcode, NOPs included */
	uint64_t nops;                /* LOAD/STORE with x_size 0 */
	/* fsim's counters: iter_out*iter_in*(uop_end-uop_bgn) per non-reset GEMM, per ALU */
	uint64_t gemm_uops, alu_uops;
	uint64_t reset_uops;          /* the same for reset GEMMs */
	uint64_t load_bytes[6];       /* by memory type (x_size*y_size*DRAM element bytes) */
	uint64_t store_bytes;
	uint64_t cycles;              /* the cycle model: the three modules overlapping */
	uint64_t busy[3];             /* cycles each module (load, compute, store) was busy */
	uint64_t gemm_cycles;         /* cycles the GEMM core did non-reset work */
	double gemm_utilisation;      /* gemm_cycles / cycles (0 when cycles is 0) */
} txrt_vta_stats;

/* Options of one run. */
typedef struct txrt_vta_options {
	const txrt_vta_config *config;   /* NULL: the default */
	int check;         /* 1: every check; 0: only what execution itself needs */
	int interleavings; /* 0 or 1: deterministic; N > 1: also N-1 runs in random module orders */
	unsigned seed;     /* of those random orders */
} txrt_vta_options;

/* Runs ninsn instructions (16 bytes each) against the regions, on the
 * registered device or in the simulator.  Returns 0, or TXRT_ERR_VTA after
 * txrt_set_error with a message that names the instruction, e.g.
 *   vta: insn 12 (GEMM uop=[0,4) ...): INP index 2050 out of range (depth 2048)
 * stats may be NULL.  opt NULL means check 1, one deterministic run, unless
 * the environment says otherwise: TXRT_VTA_CHECK=0, TXRT_VTA_INTERLEAVINGS=N,
 * TXRT_VTA_SEED=S.  libtxrt.3 describes the checks and the cycle model. */
TXRT_API int txrt_vta_run(const unsigned char *insns, size_t ninsn, const txrt_vta_region *regions,
    int nregions, const txrt_vta_options *opt, txrt_vta_stats *stats);

/* A short table of the statistics: instructions by kind, uops, bytes,
 * modelled cycles, each module's busy cycles, GEMM utilisation in %. */
TXRT_API void txrt_vta_print_stats(FILE *fp, const txrt_vta_stats *s);
/* The statistics of the calling thread's successful runs since the last
 * txrt_vta_stats_reset (or the thread's start), summed (utilisation over
 * the summed cycles): what a txc entry point that runs several streams
 * did, for txc bench.  TXRT_VTA_STATS=1 also prints each run's table on
 * standard error. */
TXRT_API void txrt_vta_stats_get(txrt_vta_stats *out);
TXRT_API void txrt_vta_stats_reset(void);

/* ---- the device hook ----------------------------------------------------------
 * A driver of a real VTA fills this table and registers it; txrt_vta_run
 * then hands the stream to it instead of simulating (stats then hold only
 * the instruction counts, and no check runs). */
typedef struct txrt_vta_device {
	void *ctx;            /* passed back to run */
	/* Copies the regions to device DRAM at their phys addresses, runs the
	 * ninsn instructions, waits for FINISH, copies back the regions that a
	 * STORE writes; returns 0, or nonzero after txrt_set_error. */
	int (*run)(void *ctx, const unsigned char *insns, size_t ninsn, const txrt_vta_region *regions,
	    int nregions);
	const char *name;     /* what txrt_vta_device_name returns */
} txrt_vta_device;
/* Registers dev (the table is copied; ctx and name must stay valid);
 * NULL goes back to the simulator. */
TXRT_API void txrt_vta_set_device(const txrt_vta_device *dev);
/* "simulator", or the registered device's name. */
TXRT_API const char *txrt_vta_device_name(void);

#ifdef __cplusplus
}
#endif

#endif
