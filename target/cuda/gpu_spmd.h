/* gpu_spmd.h: what gpu_spmd.c and gpu_threads.c share (target/cuda/ only):
 * the state of turning one kernel's block body into an SPMD program. */
#ifndef TXC_GPU_SPMD_H
#define TXC_GPU_SPMD_H

#include "target/cuda/cuda.h"

typedef struct {
	GpuKernel *k;
	IrExpr *bdim[3];          /* the block's size, NULL: 1 */
	Loc bdim_loc[3];
	const char *bdim_var[3];  /* a loop that sets it, for messages */
	BoundsScope *scope;       /* block variables and block-level loops */
	bool update;              /* inside an update's produce */
	bool async;               /* inside an async produce (a pipeline's copy) */
	/* inside thread loops around a shared stage (implicit_level) */
	int implicit;
	bool collective;          /* computing a shared stage there */
	Var **tvars; int ntv, captv;     /* variables that depend on the thread */
	Buffer **shared_open; int nshared_open, capshared_open;
	bool ok;
} Spmd;


/* ---- gpu_spmd.c: block-level code ---- */
IrExpr *gpu_spmd_as_type(IrExpr *e, IrType t);
IrStmt *gpu_spmd_block_level(Spmd *S, IrStmt *s);
/* A block's statements with the barriers they need between them. */
IrStmt *gpu_spmd_block_seq(Spmd *S, IrStmt *s);
/* gpu_spmd_block_level, or gpu_threads_implicit inside thread loops around
 * a shared stage. */
IrStmt *gpu_spmd_level(Spmd *S, IrStmt *s);

/* ---- gpu_threads.c: thread-level code ---- */
/* A thread-loop nest at block level: ids for loops, guards, and the
 * threads whose id is 0 in the dimensions it does not use. */
IrStmt *gpu_threads_level(Spmd *S, IrStmt *s);
/* A block-level statement bound to no threads: spread over them, or run by
 * thread 0 (an update; a sum over the threads becomes a tree). */
IrStmt *gpu_threads_uniform(Spmd *S, IrStmt *s);
/* A thread loop around a shared stage, and what is inside it. */
IrStmt *gpu_threads_collective(Spmd *S, IrStmt *s);
IrStmt *gpu_threads_implicit(Spmd *S, IrStmt *s);
bool gpu_threads_has_shared(IrStmt *s);

/* ---- gpu_mma.c ---- */
/* Whether a nest with a tensor-core call may run where it is: not bound to
 * threadIdx.x (dims: the block dimensions it uses), and a block of 32
 * threads in x; false after a diagnostic. */
bool gpu_mma_check(Spmd *S, IrStmt *s, unsigned dims);

/* ---- gpu_copy.c ---- */
/* A block-level copy nest from global to shared memory spread over the
 * threads in 16-byte pieces (gpu.copy calls); NULL when it is not one. */
IrStmt *gpu_copy_spread(Spmd *S, IrStmt *s, IrExpr *nthreads, IrExpr *tid);

/* ---- gpu_tma.c ---- */
/* A copy nest into a tma() tile as `if (tma_on) { thread 0's TMA load }
 * else plain` (plain: the nest spread over the threads); NULL when s is
 * not one (or after a diagnostic). */
IrStmt *gpu_tma_copy(Spmd *S, IrStmt *s, IrStmt *plain, IrExpr *tid);

#endif
