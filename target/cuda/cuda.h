/* cuda.h: the cuda target's internal interface (target/cuda/ only).
 *
 * The generic lowering (lower/) leaves a kernel whose GPU loops are still
 * loops, with kinds gpu_block and gpu_thread, as Halide does.  The passes
 * here then make GPU code of it, each in its own file:
 *
 *   gpu_split.c   each outermost nest of block loops becomes a GpuKernel
 *                 (its parameters: the variables and buffers it uses) and
 *                 a launch in the host function
 *   gpu_spmd.c    a kernel's block and thread loops become one SPMD body:
 *                 ids instead of loops, guards for short thread loops,
 *                 block-level copies spread over the threads, barriers
 *   gpu_threads.c (with gpu_spmd.c) thread-level code: ids, guards, the
 *                 spread of block-level work, shared stages inside threads
 *   gpu_allreduce.c  (from gpu_spmd) a sum over partial results of the
 *                 threads as a tree in shared memory
 *   gpu_fragment.c  a warp's fragments (cache_write(fragment)) as each
 *                 lane's registers, the tensor-core calls on them checked
 *   gpu_wgmma.c   Hopper's warpgroup calls (sm_90a): their shared tiles
 *                 checked, wgmma.fence and wait_group around each row
 *   gpu_swizzle.c the accesses of swizzled shared buffers permuted
 *   gpu_shared.c  the block's shared allocations packed into one dynamic
 *                 arena, local ones checked to fit in registers
 *   gpu_index32.c when a kernel's indices fit 32 bits: the condition on
 *                 its sizes, and its 32-bit twin
 *   cuda_ptx.c    the kernels through LLVM's NVPTX backend to PTX
 *   cuda_wgmma.c  (with cuda_ptx.c, cuda_host.c) wgmma as inline PTX, its
 *                 matrix descriptors
 *   cuda_c.c      --emit=cuda: the same kernels and entry points as CUDA C
 *   cuda_host.c   the host object: entry points that check, allocate and
 *                 launch through libtxrt, the PTX, and the kernels compiled
 *                 a second time for libtxrt's emulator (cuda_emu.c's hooks)
 *
 * IR conventions after gpu_spmd: the ids are calls of the intrinsics
 * GPU_TID ("gpu.tid", argument the dimension 0..2, type i64) and GPU_BID
 * ("gpu.bid"); a barrier is an Evaluate of GPU_BARRIER ("gpu.barrier",
 * type i32).  The host function launches kernel k with an Evaluate of
 * GPU_LAUNCH (i32 k, then grid x y z, block x y z, shared bytes, all i64).
 */
#ifndef TXC_CUDA_H
#define TXC_CUDA_H

#include "lower/ir.h"
#include "target/target.h"

#define GPU_TID "gpu.tid"
#define GPU_BID "gpu.bid"
#define GPU_BARRIER "gpu.barrier"
#define GPU_LAUNCH "gpu.launch"
/* The tensor-core intrinsic (intrinsics/cuda.tx): 16, 16, 16, c[c0], cs_i, cs_j,
 * a[a0], as_i, as_k, b[b0], bs_k, bs_j (gpu_mma.c). */
#define GPU_MMA "mma"
enum { GPU_MMA_NARGS = 12 };
/* Its companions on a fragment (gpu_fragment.c): mma_fill(16, 16, c[c0],
 * cs_i, cs_j) zeroes a tile, mma_store(m, n, d[d0], ds_i, ds_j, c[c0],
 * cs_i, cs_j) stores one; after gpu_fragment, c[c0] is the lane's first
 * register of the tile (8 a tile: gpu_mma_slot). */
/* A piece of a tile copied from global to shared memory (gpu_copy.c):
 * gpu.copy(dst[d], src[s], W, valid, async), W elements of 16 bytes in
 * all, those from valid on zero; async: complete at the thread's next
 * ASYNC_WAIT. */
#define GPU_COPY "gpu.copy"
enum { GPU_COPY_NARGS = 5 };
/* A TMA load of a tma() tile's slot (gpu_tma.c): gpu.tma(dst[d], src[o],
 * map[0], bar[slot], m, cols): the box of map m (GpuTma) whose first
 * element is src's flat element o (row o / cols, column o % cols) into
 * dst from element d, completing on mbarrier bar[slot] after an
 * arrive.expect_tx of its bytes; gpu.mbar_init(bar[s], count) and
 * gpu.mbar_wait(bar[s], parity) (try_wait.parity until that phase has
 * completed). */
#define GPU_TMA "gpu.tma"
enum { GPU_TMA_NARGS = 6 };
#define GPU_MBAR_INIT "gpu.mbar_init"
#define GPU_MBAR_WAIT "gpu.mbar_wait"
/* gpu.mbar_arrive(bar[s], when): one mbarrier.arrive a warp (its lane
 * 0's; every lane calls it after the same warp-wide wait) where when
 * (i32) is not 0, no transaction bytes (a consumer warp releasing slot s:
 * gpu_wspec.c) */
#define GPU_MBAR_ARRIVE "gpu.mbar_arrive"
#define GPU_MMA_FILL "mma_fill"
#define GPU_MMA_STORE "mma_store"
enum { GPU_MMA_FILL_NARGS = 5, GPU_MMA_STORE_NARGS = 8 };
/* Hopper's warpgroup forms (gpu_wgmma.c), the same arguments as the three
 * above over 64 x N blocks of a warpgroup fragment (N/2 registers a
 * thread a block), and the synchronisation gpu_wgmma adds around a row of
 * wgmma calls: wgmma.sync(kind, count, c[c0], n0, c[c1], n1, ...), kind
 * GPU_WGMMA_FENCE before them, GPU_WGMMA_COMMIT_WAIT after them (their
 * group committed, then all but the count newest groups waited for), or
 * GPU_WGMMA_WAIT (the wait alone: a deferred loop's drain), each c the
 * first register of a block the calls write and n its N. */
#define GPU_WGMMA "wgmma"
#define GPU_WGMMA_FILL "wgmma_fill"
#define GPU_WGMMA_STORE "wgmma_store"
#define GPU_WGMMA_SYNC "wgmma.sync"
enum { GPU_WGMMA_FENCE = 0, GPU_WGMMA_COMMIT_WAIT = 1, GPU_WGMMA_WAIT = 3 };

/* The most threads a block may have, and shared memory a block may use
 * (the smallest limit of sm_80 and later: 163 KiB on sm_80; the run time
 * checks the device's own). */
#define GPU_MAX_THREADS 1024
#define GPU_MAX_SHARED (163 * 1024)

/* A shared buffer's place in the block's arena. */
typedef struct {
	Buffer *buf;
	IrExpr *offset;           /* bytes, over the kernel's parameters */
	IrExpr *bytes;
	Loc loc;                  /* the primitive that placed it */
} GpuShared;

/* A tensor map of a kernel (gpu_tma.c): the host encodes it before each
 * launch and passes it by value after the kernel's buffers. */
typedef struct {
	Buffer *src;              /* the 2-D input tensor (a kernel argument) */
	Buffer *tile;             /* the shared tile (its slots) it fills */
	Buffer *map;              /* stands for the parameter in gpu.tma calls */
	Buffer *bar;              /* the slots' mbarriers (shared, 8 bytes each) */
	int64_t box[2];           /* elements: columns (inner), rows */
	int boxes;                /* boxes a fill: 1, or one a 128-byte panel
	                             of a tile stored in panels (gpu_swizzle.c),
	                             box[0] columns apart */
	int slots;
	int swizzle;              /* bytes: 0 (none), 32, 64, 128 */
	Loc loc;                  /* the tma() primitive */
} GpuTma;

typedef struct GpuKernel {
	const char *name;         /* "NAME_k0": the PTX entry */
	Loc loc;                  /* the outer block loop's bind */
	IrFunc *fn;               /* params: its variables, args: its buffers;
	                             body: the block body (SPMD after gpu_spmd) */
	Var *bvar[3];             /* the block loops' variables (NULL: none) */
	IrExpr *bmin[3];
	IrExpr *grid[3];          /* host expressions (i64) */
	IrExpr *block[3];         /* threads per block, host expressions */
	GpuShared *shared; int nshared, capshared;
	IrExpr *shared_bytes;     /* the arena's size, a host expression */
	int64_t max_threads;      /* a constant bound of the block's threads, or 0 */
	/* gpu_index32.c: its index arithmetic in 32 bits (every i64 of fn as
	 * an i32 in the PTX and the emulator), or a twin that does it: a copy
	 * of this kernel (same fn, name NAME_i32, index32 set) that the host
	 * launches instead when i32_if, a host expression, holds */
	bool index32;
	struct GpuKernel *i32; IrExpr *i32_if;
	int i32_slot;             /* the twin's index in the module's table */
	/* gpu_tma.c: its tensor maps, parameters after its buffers, then
	 * tma_on (i32), which the host sets when every map is encoded */
	GpuTma *tma; int ntma, captma;
	Var *tma_on;
	/* gpu_wspec.c: the slots' "empty" mbarriers of a warp-specialised
	 * pipeline (NULL: none) and the arrivals each phase counts */
	Buffer *wspec_empty;
	int64_t wspec_arrivals;
	bool wgmma;               /* it uses wgmma (sm_90a only): gpu_wgmma.c */
} GpuKernel;

/* A kernel of the file split into host code and GPU kernels. */
typedef struct {
	IrFunc *host;             /* the entry point: checks, allocations, launches */
	GpuKernel **k; int nk, capk;
} GpuFunc;

/* ---- gpu_mma.c: the tensor cores' intrinsic ------------------------------ */
bool gpu_mma_is(IrExpr *e);             /* a call of GPU_MMA */
bool gpu_mma_fill_is(IrExpr *e);        /* a call of GPU_MMA_FILL */
bool gpu_mma_store_is(IrExpr *e);       /* a call of GPU_MMA_STORE */
bool gpu_warp_op_is(IrExpr *e);         /* any of the three: a warp's operation */
bool gpu_mma_in(IrStmt *s);             /* s holds one */
bool gpu_mma_in_type(IrStmt *s, ScalarType t);   /* one with t inputs */
ScalarType gpu_mma_input_type(IrExpr *e);        /* f16 or bf16 */
/* s with every lane of the warp running it: the calls in step, the rest
 * of it (a partial tile's scalar loops) on lane 0. */
IrStmt *gpu_mma_warp(IrStmt *s);
/* One lane's 8 results of the call, as IR (libtxrt's emulator). */
IrStmt *gpu_mma_lanes(IrExpr *call);
/* One lane's part of an mma_fill or mma_store, as IR (emulator and PTX). */
IrStmt *gpu_mma_fill_lanes(IrExpr *call);
IrStmt *gpu_mma_store_lanes(IrExpr *call);
/* Register (r, h, q) of the tile whose first register fragment load c
 * names (after gpu_fragment): the slot h*4 + r*2 + q. */
IrExpr *gpu_mma_slot(IrExpr *c, int r, int h, int q);
/* The load of lane `lane`'s accumulator (r, h, q) of an mma: c[i, j], or
 * its register of a fragment. */
IrExpr *gpu_mma_c(IrExpr *call, IrExpr *lane, int r, int h, int q);
/* The loads of c[i, j], a[i, k] and b[k, j] of the call's block (each
 * pointer may be NULL). */
void gpu_mma_element(IrExpr *call, IrExpr *i, IrExpr *j, IrExpr **c, IrExpr **a_ik,
    IrExpr **b_kj, IrExpr *k);
/* Whether the call's a and b tiles are loaded by ldmatrix (x4, .trans
 * for b) in the PTX: both 16-bit shared tiles with a constant row stride
 * of a multiple of 8 elements, unit column stride and a first element at
 * a multiple of 8 (rows of 16 aligned bytes), and c a fragment. */
bool gpu_mma_ldmatrix(IrExpr *call);
/* Whether the call's b is stored n-major (k stride 1, j stride a constant
 * multiple of 8): ldmatrix without .trans, its rows being b's columns j. */
bool gpu_mma_b_nt(IrExpr *call);
/* The element index of the row whose address lane `lane` gives to the
 * ldmatrix of operand op (6: a, 9: b): row lane % 16, columns from
 * 8 * (lane / 16) (gpu_mma.c says which matrix each lane points into). */
IrExpr *gpu_ldmatrix_row(IrExpr *call, int op, IrExpr *lane);
/* Whether element (row, col) of operand op (a: (i, k), b: (k, j)) lies in
 * the call's extents; NULL where it always does. */
IrExpr *gpu_mma_inside(IrExpr *call, int op, IrExpr *row, IrExpr *col);
/* The element (i, j) of accumulator (r, h, q) of lane `lane`. */
void gpu_mma_owned(IrExpr *lane, IrExpr *r, IrExpr *h, IrExpr *q, IrExpr **i, IrExpr **j);

/* ---- gpu_copy.c: 16-byte pieces of a tile's copy ------------------------ */
bool gpu_copy_is(IrExpr *e);            /* a call of GPU_COPY */
bool gpu_copy_in(IrStmt *s);            /* s holds one, or an async commit or wait */
/* A pipeline's ASYNC_COMMIT or ASYNC_WAIT Evaluate as each thread runs it
 * (TXC_CUDA_ASYNC_WAIT=late or none: a wrong wait, for the checker's
 * tests). */
IrStmt *gpu_copy_sync(IrStmt *s);
/* The call as scalar copies, dst[d + e] = e < valid ? src[s + e] : 0 (the
 * path for addresses that are not 16-byte aligned; the emulator's). */
IrStmt *gpu_copy_scalar(IrExpr *call);

/* ---- gpu_tma.c: TMA loads and their mbarriers ----------------------------- */
bool gpu_tma_is(IrExpr *e);             /* a call of GPU_TMA */
bool gpu_tma_mbar_is(IrExpr *e);        /* of GPU_MBAR_INIT or GPU_MBAR_WAIT */
/* The pipeline's waits on k's tma tiles' mbarriers, which it allocates
 * and initialises; false after diagnostics. */
bool gpu_tma(GpuKernel *k);
/* ---- gpu_wspec.c: pipeline(S, producer = warpgroup) ------------------------ */
bool gpu_wspec(GpuKernel *k, IrStmt **body);

/* ---- gpu_fragment.c ----------------------------------------------------- */
/* k's fragments as each lane's registers; false after diagnostics. */
bool gpu_fragment(GpuKernel *k);
/* Whether s allocates a fragment (before gpu_fragment). */
bool gpu_fragment_in(IrStmt *s);
/* Where a fragment must be computed, for messages: a warp's registers, or
 * a warpgroup's where s (the fragment's scope) holds wgmma calls. */
const char *gpu_fragment_where(IrStmt *s);

/* ---- gpu_wgmma.c: Hopper's warpgroup tensor cores ------------------------ */
bool gpu_wgmma_is(IrExpr *e);           /* a call of GPU_WGMMA */
bool gpu_wgmma_fill_is(IrExpr *e);
bool gpu_wgmma_store_is(IrExpr *e);
bool gpu_wgmma_sync_is(IrExpr *e);      /* GPU_WGMMA_SYNC */
bool gpu_wg_op_is(IrExpr *e);           /* any of the first three */
bool gpu_wgmma_in(IrStmt *s);           /* s holds a warpgroup operation */
Loc gpu_wgmma_loc(IrStmt *s);           /* its first wgmma call's (the tensorize) */
/* The block's N of a wgmma, wgmma_fill or wgmma_store call. */
int64_t gpu_wgmma_width(IrExpr *call);
/* Whether b is a tile that a wgmma call in s reads (its copies then fill
 * the whole tile, zeros past the data: gpu_copy.c). */
bool gpu_wgmma_operand(IrStmt *s, Buffer *b);
/* Checks k's wgmma calls' operands, sets k->wgmma and puts the fence and
 * the wait around each row of calls; false after diagnostics. */
bool gpu_wgmma(GpuKernel *k);
/* The constant fields of operand op's (6: a, 9: b) shared-memory matrix
 * descriptor (LBO, SBO, swizzle mode); the emitters add the start
 * address field, (address & 0x3ffff) >> 4. */
uint64_t gpu_wgmma_desc_bits(IrExpr *call, int op);
/* The register slot s of a thread's N/2 of a block and its element: row
 * 16 (tid / 32) + (tid % 32) / 4 + 8 r, column 8 j + 2 (tid % 4) + q for
 * s = 4 j + 2 r + q. */
void gpu_wgmma_owned(IrExpr *tid, int s, IrExpr **i, IrExpr **j);
/* One thread's part of a wgmma_fill or wgmma_store, as IR. */
IrStmt *gpu_wgmma_fill_lanes(IrExpr *call);
IrStmt *gpu_wgmma_store_lanes(IrExpr *call);
/* The load of register s of the block whose first register c names. */
IrExpr *gpu_wgmma_slot(IrExpr *c, int s);

/* ---- gpu_swizzle.c ------------------------------------------------------ */
/* k's accesses of swizzled shared buffers permuted; false after diagnostics
 * (another intrinsic takes one). */
bool gpu_swizzle(GpuKernel *k);
/* The element where flat index x of b lives (x itself when b is not a
 * swizzled shared buffer): the map every emitter of an address applies. */
IrExpr *gpu_swizzle_index(const Buffer *b, IrExpr *x);
/* For a tile stored in panels (Buffer.swizzle_panel_rows): where flat
 * index x lives before the swizzle's XOR; x itself otherwise. */
IrExpr *gpu_swizzle_panel(const Buffer *b, IrExpr *x);
/* b's swizzle: row W elements, pieces of E elements, XOR of (row >> s)
 * & (P - 1); false when b is not swizzled. */
bool gpu_swizzle_params(const Buffer *b, int64_t *w, int64_t *e, int64_t *p, int *s);
/* Whether e is a multiple of m for every value of its variables (sums and
 * products with a constant multiple; gpu_mma.c). */
bool gpu_multiple_of(IrExpr *e, int64_t m);

/* ---- gpu_split.c -------------------------------------------------------- */
/* The host function and kernels of f; NULL after diagnostics. */
GpuFunc *gpu_split(IrFunc *f);

/* ---- gpu_spmd.c --------------------------------------------------------- */
/* The id of this thread (GPU_TID) or block (GPU_BID) in dimension d, i64. */
IrExpr *gpu_id(const char *which, int d);
/* A barrier (NULL with TXC_CUDA_NO_BARRIERS=1, which the checker's tests use). */
IrStmt *gpu_barrier(void);
/* Whether e uses only k's parameters (and math builtins of them): the host
 * can evaluate it before the launch. */
bool gpu_host_expr(GpuKernel *k, IrExpr *e);
/* Makes k's body one SPMD program (its block sizes into k->block); false
 * after diagnostics. */
bool gpu_spmd(GpuKernel *k);
/* Whether s contains a loop of kind fk. */
bool gpu_has_loop(IrStmt *s, ForKind fk);

/* ---- gpu_allreduce.c ------------------------------------------------------ */
/* A block-level loop that combines T partial results in shared memory into
 * one element (y[j] = y[j] op part[e + r]) as a tree over the block's
 * threads (first: the condition that picks one thread); NULL when s is not
 * one. */
IrStmt *gpu_allreduce(IrStmt *s, IrExpr *nthreads, IrExpr *tid, IrExpr *first);

/* ---- gpu_shared.c ------------------------------------------------------- */
/* Places k's shared buffers in the arena and checks its local ones. */
bool gpu_shared(GpuKernel *k);
/* The shared placement of b in k, or NULL. */
GpuShared *gpu_shared_find(GpuKernel *k, Buffer *b);

/* ---- gpu_index32.c ------------------------------------------------------ */
/* Sets k->index32, or gives k a 32-bit twin (k->i32, k->i32_if), where
 * its index arithmetic fits 32 bits for all sizes or some.
 * TXC_CUDA_NO_INDEX32 in the environment turns it off. */
void gpu_index32(GpuKernel *k);

/* The whole pipeline for the file's kernels (gpu_split, gpu_spmd,
 * gpu_shared); NULL after diagnostics. */
GpuFunc **gpu_lower(IrFunc **funcs, int n);

/* ---- cuda_ptx.c --------------------------------------------------------- */
typedef struct {
	const char *arch;         /* "sm_80" (default) */
	const char *ptx_features; /* NULL: LLVM's default PTX ISA for arch */
} CudaOptions;
/* The PTX of every kernel of gf (malloc'd, NUL-terminated); NULL after
 * diagnostics. */
char *cuda_ptx(GpuFunc **gf, int n, const LlvmOptions *o, const CudaOptions *co);

/* ---- cuda_host.c -------------------------------------------------------- */
/* The host object (or assembly, IR, bitcode) of gf with ptx embedded;
 * packed: with NAME__packed wrappers (txc bench). */
bool cuda_host_emit(GpuFunc **gf, int n, const char *ptx, const LlvmOptions *o,
    EmitKind kind, bool packed, FILE *out);

/* ---- cuda_c.c ----------------------------------------------------------- */
bool cuda_c_emit(FILE *out, GpuFunc **gf, int n, const char *source_name);

/* ---- cuda_c.c ------------------------------------------------------------ */
/* --emit=cuda: the kernels and entry points as CUDA C. */
bool cuda_c_emit(FILE *out, GpuFunc **gf, int n, const char *source_name);

#endif
