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
/* Whether e calls the intrinsic name; its dimension argument. */
bool cuda_is(IrExpr *e, const char *name);
int cuda_dim_arg(IrExpr *e);

#endif
