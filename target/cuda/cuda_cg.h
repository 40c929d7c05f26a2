/* cuda_cg.h: what cuda_ptx.c and cuda_host.c share of LLVM code generation
 * (target/cuda/ only; it needs target/llvm/cg.h). */
#ifndef TXC_CUDA_CG_H
#define TXC_CUDA_CG_H

#include "target/llvm/cg.h"
#include "target/cuda/cuda.h"

/* The kernel's function type: its variables (ABI types), then its
 * buffers (pointers), returning void. */
LLVMTypeRef cuda_kernel_type(Cg *cg, GpuKernel *k);
/* Emits k's body into fn: its parameters are the values (packed: fn
 * takes one void **params, kernelParams style, and reads them). */
void cuda_kernel_fn(Cg *cg, GpuKernel *k, LLVMValueRef fn, bool packed);
/* cuda_tma.c: a kernel's tensor maps and tma_on after its buffers (so
 * many: cuda_tma_nparams), their types, the PTX parameters' byval and
 * grid_constant attributes, their binding in the body (packed: the
 * emulator's kernelParams); the PTX (NULL: not one of gpu_tma.c's calls)
 * and emulator forms of the calls (dbuf: a gpu.tma's destination in the
 * emulator's buffer table); the host's encoding of the maps into the
 * launch's kernelParams array arr from position first. */
int cuda_tma_nparams(GpuKernel *k);
void cuda_tma_param_types(Cg *cg, GpuKernel *k, LLVMTypeRef *p);
void cuda_tma_param_attrs(Cg *cg, GpuKernel *k, LLVMValueRef fn, int first);
void cuda_tma_bind(Cg *cg, GpuKernel *k, LLVMValueRef fn, int first, bool packed);
LLVMValueRef cuda_tma_ptx(Cg *cg, GpuKernel *k, IrExpr *e);
LLVMValueRef cuda_tma_emu(Cg *cg, GpuKernel *k, IrExpr *e, int dbuf);
void cuda_tma_host(Cg *cg, GpuKernel *k, LLVMValueRef arr, int first);
/* Whether e calls the intrinsic name; its dimension argument. */
bool cuda_is(IrExpr *e, const char *name);
int cuda_dim_arg(IrExpr *e);

/* ---- cuda_wgmma.c ---- */
/* A warpgroup call as PTX (inline asm); NULL when e is none. */
LLVMValueRef cuda_wgmma_ptx(Cg *cg, IrExpr *e);
/* fence.proxy.async.shared::cta (before a wgmma kernel's barriers). */
void cuda_wgmma_proxy_fence(Cg *cg);
/* A pointer to operand op's (6: a, 9: b) first element, and its
 * descriptor for the byte address addr (i64) in the shared window. */
LLVMValueRef cuda_wgmma_tile(Cg *cg, IrExpr *call, int op);
LLVMValueRef cuda_wgmma_desc(Cg *cg, IrExpr *call, int op, LLVMValueRef addr);

#endif
