/* vta.h: the vta target's internal interface (target/vta/ only).
 *
 * The generic lowering (lower/) leaves a kernel whose stages live in VTA's
 * memory scopes (inp, wgt, acc), whose tensorized updates are calls of the
 * "gemm" intrinsic, and whose virtual-thread loops are still loops.  With
 * every size fixed (-D), the passes here run the nests that touch those
 * scopes at compile time, as TVM's runtime does when its host code runs,
 * and write the instruction stream they amount to:
 *
 *   vta_eval.c    integers at compile time: a variable environment, the
 *                 value of an index, its affine form in a nest's loops
 *   vta_region.c  the entry point split into host code and VTA regions
 *                 (the statements that touch the on-chip buffers); a
 *                 region runs here, statement by statement: allocations
 *                 placed in SRAM, loops iterated, nests handed to the
 *                 passes below; virtual threads interleaved
 *   vta_dma.c     a copy nest between DRAM and an on-chip buffer: LOAD or
 *                 STORE instructions (2-d strided, padding from the pad
 *                 stage's condition)
 *   vta_uop.c     a nest of GEMM updates, resets or ALU work: micro-op
 *                 kernels with up to two loops folded into the hardware's,
 *                 cached in the micro-op buffer
 *   vta_alu.c     an element-wise expression over acc: ALU operations
 *                 (MIN MAX ADD SHR MUL, immediate or tensor)
 *   vta_deps.c    dependency tokens between the load, compute and store
 *                 modules, then the drain and FINISH
 *   vta_stream.c  encoding, --emit=vta-asm and --emit=vta-bin
 *   vta_host.c    the host object: entry points that run the host code
 *                 and hand each region's stream to libtxrt (txrt_vta_run)
 *
 * The hardware's parameters come from rt/vta.h's configuration table.
 */
#ifndef TXC_VTA_H
#define TXC_VTA_H

#include "lower/ir.h"
#include "rt/vta.h"
#include "target/target.h"

/* The host function calls region k with an Evaluate of VTA_RUN (i32 k). */
#define VTA_RUN "vta.run"

/* ---- vta_eval.c --------------------------------------------------------- */
typedef struct VtaEnv VtaEnv;
struct VtaEnv {
	Var *var;
	int64_t val;
	VtaEnv *next;
};
VtaEnv *vta_bind(VtaEnv *env, Var *v, int64_t val);    /* in ir_arena */
/* The value of integer or bool e; false when it depends on memory or on a
 * variable without a value. */
bool vta_eval(IrExpr *e, VtaEnv *env, int64_t *out);

/* An affine form c0 + sum c[i] * vars[i] over a nest's loop variables
 * (other variables take their values from env). */
enum { VTA_MAXL = 12 };
typedef struct {
	int64_t c0;
	int64_t c[VTA_MAXL];
} VtaAff;
bool vta_affine(IrExpr *e, VtaEnv *env, Var **vars, int n, VtaAff *out);
/* The conjuncts of cond (a && b && ...), at most max. */
int vta_conjuncts(IrExpr *cond, IrExpr **out, int max);

/* ---- the stream being built (vta_region.c) ------------------------------ */
enum { VTA_SRAM_INP, VTA_SRAM_WGT, VTA_SRAM_ACC, VTA_NSRAM };

/* Elements an instruction reads and writes in the on-chip buffers, for
 * the dependency tokens: one interval per buffer (lo > hi: none). */
typedef struct {
	int64_t rlo[VTA_NSRAM], rhi[VTA_NSRAM];
	int64_t wlo[VTA_NSRAM], whi[VTA_NSRAM];
	int dram_read, dram_write;       /* a DRAM region's index, or -1 */
} VtaFoot;

typedef struct {
	txrt_vta_insn in;
	VtaFoot foot;
	int kernel;                      /* GEMM, ALU: its micro-op kernel (VtaStream.kern) */
	const char *what;                /* the stage or buffer, for vta-asm */
} VtaInsn;

/* A DRAM region of a stream: a tensor the host passes, the micro-ops, or
 * zeros (rows of padding are loaded from it: a LOAD of no rows, y_size 0,
 * is what upstream's fsim and hardware do not take). */
typedef struct {
	Buffer *buf;                     /* NULL: the micro-op array or the zeros */
	uint64_t phys, bytes;
	int elem_bytes;                  /* the tensor's element size */
	bool read, written;
	bool zeros;                      /* bytes of zeros the object holds */
} VtaDram;

typedef struct {
	const char *name;                /* "KERNEL" or "KERNEL_1" */
	Loc loc;
	VtaInsn *insn; int ninsn, capinsn;
	uint32_t *uops; int nuops, capuops;      /* the micro-op array in DRAM */
	VtaDram *dram; int ndram, capdram;       /* dram[0]: the micro-ops */
	int zeros;                       /* the zeros' region in dram, 0: none yet */
	struct { int off, n; } *kern; int nkern, capkern;   /* micro-op kernels in uops */
	unsigned char *bin;              /* encoded, 16 bytes an instruction (vta_stream.c) */
} VtaStream;

/* A kernel: its host function and the streams its VTA_RUN calls name. */
typedef struct {
	IrFunc *host;
	VtaStream **s; int ns, caps;
} VtaFunc;

/* The state of a region while it runs (vta_region.c, used by the passes). */
typedef struct VtaRun VtaRun;
const txrt_vta_config *vta_cfg(void);
/* Appends an instruction to the current group (virtual threads interleave
 * groups); returns it. */
VtaInsn *vta_push(VtaRun *R, int opcode, const char *what);
/* The SRAM element where buffer b (an on-chip buffer) starts, and the
 * scalars one element holds. */
int64_t vta_sram_base(VtaRun *R, Buffer *b);
int vta_lanes(MemScope s);
/* The DRAM region of global buffer b (added on first use). */
int vta_dram(VtaRun *R, Buffer *b);
/* The region of zeros, made at least `bytes` long (added on first use). */
int vta_dram_zeros(VtaRun *R, uint64_t bytes);
VtaStream *vta_stream(VtaRun *R);
/* The program the kernel came from (its intrinsic tables). */
Program *vta_program(VtaRun *R);
/* Where a diagnostic about buffer b's stage points: its rule, else its
 * declaration, else dflt. */
Loc vta_stage_loc(Buffer *b, Loc dflt);
/* Which buffer of the three a scope is (-1: not on chip). */
int vta_sram_of(MemScope s);
/* The micro-op kernel uops[0..n), kept once in the stream's micro-op array;
 * its id for VtaInsn.kernel (vta_region.c places kernels in the micro-op
 * buffer, with LOAD UOP where one is not resident, once the order of the
 * instructions is final). */
int vta_uop_kernel(VtaRun *R, const uint32_t *uops, int n);

/* ---- vta_dma.c ---------------------------------------------------------- */
/* A nest whose leaf copies between DRAM and an on-chip buffer: true when
 * it is one (instructions emitted, or a diagnostic). */
bool vta_dma_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf,
    VtaEnv *env);
/* STORE instructions for dst[di] = src[si] (src in acc), the nest's
 * loops, guard and environment; false after a diagnostic. */
bool vta_dma_store(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf,
    IrExpr *src, VtaEnv *env);

/* ---- vta_uop.c ---------------------------------------------------------- */
/* One micro-op as the nest's leaf makes it at a point. */
typedef struct {
	int kind;               /* VTA_OP_GEMM, VTA_OP_RESET, VTA_OP_ALU */
	int alu_op, use_imm;
	int32_t imm;
	IrExpr *dst, *src, *wgt;        /* flat scalar offsets (NULL: unused) */
	Buffer *dbuf, *sbuf, *wbuf;
} VtaLeaf;
enum { VTA_OP_GEMM, VTA_OP_RESET, VTA_OP_ALU };
/* GEMM or ALU instructions for a nest of leaf (the same operation at
 * every point where guard holds); false after a diagnostic. */
bool vta_uop_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, VtaLeaf *leaf,
    VtaEnv *env, Loc loc, const char *what);

/* ---- vta_alu.c ---------------------------------------------------------- */
/* A nest whose leaf is GEMM work or ALU work on acc, or stores into DRAM
 * an expression over acc (the epilogue: ALU operations in place, then
 * STORE): true when it is one (instructions emitted, or a diagnostic). */
bool vta_compute_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf,
    VtaEnv *env);

/* ---- vta_deps.c --------------------------------------------------------- */
/* Sets the token flags of s's instructions, adds the drain and FINISH. */
void vta_deps(VtaStream *s);

/* ---- vta_region.c ------------------------------------------------------- */
/* f's host function and streams; NULL after diagnostics. */
VtaFunc *vta_split(IrFunc *f);

/* ---- vta_stream.c ------------------------------------------------------- */
/* Encodes every instruction (s->bin); false after a diagnostic. */
bool vta_encode(VtaStream *s);
/* --emit=vta-asm: each stream, an instruction a line. */
bool vta_emit_asm(FILE *out, VtaFunc **vf, int n);
/* --emit=vta-bin DIR: the raw streams, micro-ops and a manifest. */
bool vta_emit_bin(const char *dir, VtaFunc **vf, int n);

/* ---- vta_host.c --------------------------------------------------------- */
/* packed: also NAME__packed wrappers, for the JIT (txc bench). */
bool vta_host_emit(VtaFunc **vf, int n, const LlvmOptions *o, EmitKind kind, bool packed,
    FILE *out);

#endif
