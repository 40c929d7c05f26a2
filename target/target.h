/* target.h: the backends.
 *
 * Each backend takes lowered kernels (lower/ir.h IrFunc) and writes an
 * artefact: readable C (target/c), a native object, assembly, LLVM IR or
 * bitcode through the LLVM-C API (target/llvm), a C header for callers
 * (header.c).  Every backend implements the same C ABI:
 *
 *     int NAME(int64_t size..., scalar..., const T *input..., T *output...);
 *
 * sizes and scalars in the order the kernel lists them, then the tensors
 * in declaration order (inputs const), returning 0 on success or an error
 * code whose message the caller reads with txrt_last_error() (libtxrt) or,
 * for the self-contained C output, NAME_last_error().
 */
#ifndef TXC_TARGET_H
#define TXC_TARGET_H

#include <stdio.h>

#include "lower/ir.h"

/* Error codes every entry point returns (also in rt/txrt.h). */
enum {
	TXC_OK = 0,
	TXC_ERR_NULL = 1,      /* a tensor pointer is NULL */
	TXC_ERR_SIZE = 2,      /* a size is negative or inconsistent */
	TXC_ERR_DIVIDE = 3,    /* a size an exact split requires to divide does not */
	TXC_ERR_ALLOC = 4,     /* out of memory */
	TXC_ERR_DLPACK = 5,    /* a DLTensor has the wrong device/dtype/shape/strides */
};

/* The C type of an element ("float", "int8_t", "uint16_t" for f16...). */
const char *target_c_type(ScalarType t);

#endif
