/* cuda_api.h: libtxrt's own declarations of the CUDA driver API, and the
 * internal interface between cuda.c and cuda_emu.c.
 *
 * libtxrt loads libcuda at run time (dlopen) and never includes cuda.h,
 * which a fresh machine does not have.  The few types, constants and entry
 * points it uses are declared here instead, under names of their own
 * (Cu..., TXCU_...), so that this header and cuda.h can be included
 * together: tests/unit/cuda_decls.sh does that where cuda.h exists and
 * checks that every constant has cuda.h's value and every entry point
 * cuda.h's type.  The handle types point to the structures cuda.h's do
 * (struct CUctx_st ...), which makes them the same types; results and
 * enumerations are unsigned int, the type GCC and Clang give an enum whose
 * values are all non-negative, as cuda.h's are.
 */
#ifndef TXRT_CUDA_API_H
#define TXRT_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "txrt.h"

/* ---- the driver API (the subset libtxrt uses) ------------------------------ */
typedef unsigned int CuResult;            /* CUresult */
typedef int CuDevice;                     /* CUdevice */
typedef unsigned long long CuDevicePtr;   /* CUdeviceptr (64-bit hosts) */
typedef struct CUctx_st *CuContext;       /* CUcontext */
typedef struct CUmod_st *CuModule;        /* CUmodule */
typedef struct CUfunc_st *CuFunction;     /* CUfunction */
typedef struct CUstream_st *CuStream;     /* CUstream */
typedef unsigned int CuDeviceAttr;        /* CUdevice_attribute */
typedef unsigned int CuFuncAttr;          /* CUfunction_attribute */
typedef unsigned int CuJitOption;         /* CUjit_option */
struct CUtensorMap_st;                    /* CUtensorMap: 128 opaque bytes */

/* CUresult values libtxrt names itself (cuGetErrorName may be missing or,
 * in the stub library, fail) */
#define TXCU_CONSTANTS(X) \
	X(TXCU_SUCCESS, CUDA_SUCCESS, 0) \
	X(TXCU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE, 1) \
	X(TXCU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY, 2) \
	X(TXCU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED, 3) \
	X(TXCU_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED, 4) \
	X(TXCU_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY, 34) \
	X(TXCU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE, 100) \
	X(TXCU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE, 101) \
	X(TXCU_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE, 200) \
	X(TXCU_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT, 201) \
	X(TXCU_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU, 209) \
	X(TXCU_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX, 218) \
	X(TXCU_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222) \
	X(TXCU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND, 500) \
	X(TXCU_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS, 700) \
	X(TXCU_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701) \
	X(TXCU_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED, 719) \
	X(TXCU_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803) \
	X(TXCU_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
	X(TXCU_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN, 999) \
	/* CUdevice_attribute */ \
	X(TXCU_DEV_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1) \
	X(TXCU_DEV_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2) \
	X(TXCU_DEV_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3) \
	X(TXCU_DEV_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4) \
	X(TXCU_DEV_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5) \
	X(TXCU_DEV_MAX_GRID_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6) \
	X(TXCU_DEV_MAX_GRID_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7) \
	X(TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8) \
	X(TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, \
	    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97) \
	/* CUfunction_attribute */ \
	X(TXCU_FUNC_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) \
	X(TXCU_FUNC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1) \
	X(TXCU_FUNC_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3) \
	X(TXCU_FUNC_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS, 4) \
	X(TXCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8) \
	/* CUjit_option */ \
	X(TXCU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER, 3) \
	X(TXCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4) \
	X(TXCU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER, 5) \
	X(TXCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)

#define TXCU_ENUMERATOR(name, cuda_name, value) name = value,
enum { TXCU_CONSTANTS(TXCU_ENUMERATOR) };
#undef TXCU_ENUMERATOR

/* The entry points: X(symbol, (parameters)).  The symbol is the one that
 * dlsym must find, which for several calls is a versioned name that cuda.h
 * maps the plain one to (cuMemAlloc -> cuMemAlloc_v2).  All return a
 * CuResult. */
#define TXCU_FUNCTIONS(X) \
	X(cuGetErrorName, (CuResult error, const char **str)) \
	X(cuGetErrorString, (CuResult error, const char **str)) \
	X(cuInit, (unsigned int flags)) \
	X(cuDeviceGet, (CuDevice *device, int ordinal)) \
	X(cuDeviceGetCount, (int *count)) \
	X(cuDeviceGetName, (char *name, int len, CuDevice dev)) \
	X(cuDeviceGetAttribute, (int *value, CuDeviceAttr attr, CuDevice dev)) \
	X(cuDevicePrimaryCtxRetain, (CuContext *ctx, CuDevice dev)) \
	X(cuCtxSetCurrent, (CuContext ctx)) \
	X(cuCtxGetCurrent, (CuContext *ctx)) \
	X(cuCtxGetDevice, (CuDevice *device)) \
	X(cuCtxSynchronize, (void)) \
	X(cuModuleLoadDataEx, (CuModule *module, const void *image, unsigned int noptions, \
	    CuJitOption *options, void **values)) \
	X(cuModuleUnload, (CuModule module)) \
	X(cuModuleGetFunction, (CuFunction *fn, CuModule module, const char *name)) \
	X(cuFuncGetAttribute, (int *value, CuFuncAttr attr, CuFunction fn)) \
	X(cuFuncSetAttribute, (CuFunction fn, CuFuncAttr attr, int value)) \
	X(cuLaunchKernel, (CuFunction fn, unsigned int gx, unsigned int gy, unsigned int gz, \
	    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, \
	    CuStream stream, void **params, void **extra)) \
	X(cuMemAlloc_v2, (CuDevicePtr *ptr, size_t bytes)) \
	X(cuMemFree_v2, (CuDevicePtr ptr)) \
	X(cuMemcpyHtoD_v2, (CuDevicePtr dst, const void *src, size_t bytes)) \
	X(cuMemcpyDtoH_v2, (void *dst, CuDevicePtr src, size_t bytes)) \
	X(cuMemsetD8_v2, (CuDevicePtr dst, unsigned char byte, size_t n)) \
	X(cuTensorMapEncodeTiled, (struct CUtensorMap_st *map, unsigned int dtype, uint32_t rank, \
	    void *base, const uint64_t *dims, const uint64_t *strides, const uint32_t *box, \
	    const uint32_t *elem_strides, unsigned int interleave, unsigned int swizzle, \
	    unsigned int l2promo, unsigned int oob_fill))

/* CuFn_cuInit and so on: the function types */
#define TXCU_FUNCTION_TYPE(name, params) typedef CuResult CuFn_##name params;
TXCU_FUNCTIONS(TXCU_FUNCTION_TYPE)
#undef TXCU_FUNCTION_TYPE

/* A tensor map in the emulator (txrt_cuda_tensor_map writes it into the
 * 128 bytes a kernel takes; txrt_emu_tma_load reads it). */
typedef struct {
	uint32_t magic;          /* CUDA_EMU_MAP_MAGIC */
	int32_t esize;
	int32_t box[2];          /* columns, rows */
	int32_t swizzle;         /* bytes: 0, 32, 64, 128 */
	int32_t pad;
	int64_t dims[2];         /* columns, rows */
	int64_t pitch;           /* bytes from a row to the next */
	const unsigned char *base;
} CudaEmuMap;
#define CUDA_EMU_MAP_MAGIC 0x544d4150u   /* "TMAP" */

/* ---- cuda_emu.c: the emulator, for cuda.c --------------------------------- */
/* The emulator's limits, which cuda.c checks before it calls: a block of
 * at most 1024 threads (1024 x 1024 x 64), a grid of at most 2^31-1 x
 * 65535 x 65535 blocks, 227 KiB of shared memory (what an H100 allows). */
enum {
	CUDA_EMU_MAX_THREADS = 1024,
	CUDA_EMU_MAX_SHARED = 232448,
};
/* Runs kernel k of m on the host over the grid (sizes positive and within
 * the limits); returns 0 or TXRT_ERR_CUDA after txrt_set_error.  Sets the
 * count txrt_cuda_emu_reports returns. */
int cuda_emu_launch(const txrt_cuda_module *m, int k, const int64_t grid[3],
    const int64_t block[3], int64_t shared, void **params);
/* Sets that count to 0 (a launch that does not reach the emulator). */
void cuda_emu_clear_reports(void);

#endif
