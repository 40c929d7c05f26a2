/* cuda_rt_mock.c: a pretend CUDA driver, built by cuda_rt_mock.sh as
 * libcuda.so.1, so that libtxrt's device mode runs where there is no GPU.
 *
 * It has one device, "txrt mock GPU", with an H100's limits (1024 threads
 * per block, 48 KiB of shared memory, 227 KiB opted in).  Device memory
 * is host memory.  A module whose PTX contains "BAD" fails to load with a
 * JIT log; a kernel named "missing" is not found; "heavy" allows 512
 * threads per block (128 registers).  Launching "fill" runs it: params
 * are (int *p, int n), and it stores p[i] = i + the block count.  Like
 * the real driver, a launch with more dynamic shared memory than the
 * function was opted in to (above 48 KiB) fails.  mock_loads and
 * mock_shared_optin let the test see what libtxrt did; cuTensorMapEncodeTiled
 * checks a 2-D map as the driver does and mock_tma_* say what it encoded
 * and whether a launch then had that map by value.
 */
#define _GNU_SOURCE   /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/cuda_api.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int mock_loads;
EXPORT int mock_shared_optin;
/* tensor maps (TMA): what the last cuTensorMapEncodeTiled was asked, the
 * launches that had that map by value (the 128 bytes at a 64-aligned
 * kernelParams entry, declared .b8 [128] in the PTX) and the final
 * parameter (txc's tma_on) of the last launch with such an entry */
EXPORT char mock_tma_desc[256];
EXPORT int mock_tma_launches = 0;
EXPORT long long mock_tma_on = -1;

struct CUctx_st { int dummy; };
struct CUmod_st { const char *ptx; };
/* nparams and map: from the PTX entry's parameter list (map: the first
 * 128-byte one, or -1) */
struct CUfunc_st { char name[64]; int optin, nparams, map; };

static unsigned char last_map[128];

static struct CUctx_st the_ctx;
static _Thread_local CuContext current;

EXPORT CuResult
cuGetErrorName(CuResult e, const char **s)
{
	switch (e) {
	case 0: *s = "CUDA_SUCCESS"; return 0;
	case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return 0;
	case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
	case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0;
	default: *s = NULL; return 1;
	}
}

EXPORT CuResult
cuGetErrorString(CuResult e, const char **s)
{
	switch (e) {
	case 0: *s = "no error"; return 0;
	case 1: *s = "invalid argument"; return 0;
	case 218: *s = "a PTX JIT compilation failed"; return 0;
	case 500: *s = "named symbol not found"; return 0;
	default: *s = NULL; return 1;
	}
}

EXPORT CuResult cuInit(unsigned int flags) { return flags ? 1 : 0; }
EXPORT CuResult cuDeviceGet(CuDevice *d, int i) { *d = i; return i == 0 ? 0 : 101; }
EXPORT CuResult cuDeviceGetCount(int *n) { *n = 1; return 0; }

EXPORT CuResult
cuDeviceGetName(char *name, int len, CuDevice d)
{
	(void)d;
	strncpy(name, "txrt mock GPU", (size_t)len);
	name[len - 1] = '\0';
	return 0;
}

EXPORT CuResult
cuDeviceGetAttribute(int *v, CuDeviceAttr a, CuDevice d)
{
	(void)d;
	switch (a) {
	case TXCU_DEV_MAX_THREADS_PER_BLOCK: *v = 1024; return 0;
	case TXCU_DEV_MAX_BLOCK_DIM_X: *v = 1024; return 0;
	case TXCU_DEV_MAX_BLOCK_DIM_Y: *v = 1024; return 0;
	case TXCU_DEV_MAX_BLOCK_DIM_Z: *v = 64; return 0;
	case TXCU_DEV_MAX_GRID_DIM_X: *v = 2147483647; return 0;
	case TXCU_DEV_MAX_GRID_DIM_Y: *v = 65535; return 0;
	case TXCU_DEV_MAX_GRID_DIM_Z: *v = 65535; return 0;
	case TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; return 0;
	case TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; return 0;
	default: return 1;
	}
}

EXPORT CuResult cuDevicePrimaryCtxRetain(CuContext *c, CuDevice d) { (void)d; *c = &the_ctx; return 0; }
EXPORT CuResult cuCtxSetCurrent(CuContext c) { current = c; return 0; }
EXPORT CuResult cuCtxGetCurrent(CuContext *c) { *c = current; return 0; }
EXPORT CuResult cuCtxGetDevice(CuDevice *d) { *d = 0; return current ? 0 : 201; }
EXPORT CuResult cuCtxSynchronize(void) { return current ? 0 : 201; }

EXPORT CuResult
cuModuleLoadDataEx(CuModule *m, const void *image, unsigned int n, CuJitOption *opts, void **vals)
{
	if (strstr(image, "BAD")) {
		for (unsigned i = 0; i < n; i++)
			if (opts[i] == TXCU_JIT_ERROR_LOG_BUFFER)
				strcpy(vals[i], "ptxas fatal   : Unresolved extern function 'BAD'\n");
		return 218;
	}
	mock_loads++;
	*m = calloc(1, sizeof **m);
	if (*m)
		(*m)->ptx = image;   /* the object's: lives as long as the module */
	return 0;
}

EXPORT CuResult cuModuleUnload(CuModule m) { free(m); return 0; }

EXPORT CuResult
cuModuleGetFunction(CuFunction *f, CuModule m, const char *name)
{
	static struct CUfunc_st fns[16];
	static int nfns;

	(void)m;
	if (strcmp(name, "missing") == 0 || nfns == 16)
		return 500;
	struct CUfunc_st *fn = &fns[nfns];
	strncpy(fn->name, name, sizeof fn->name - 1);
	fn->nparams = 0;
	fn->map = -1;
	char entry[96];
	snprintf(entry, sizeof entry, ".entry %s(", name);
	const char *p = m && m->ptx ? strstr(m->ptx, entry) : NULL;
	const char *end = p ? strchr(p, ')') : NULL;
	while (p && end && (p = strstr(p + 1, ".param")) && p < end) {
		const char *nl = strchr(p, '\n');
		if (fn->map < 0 && nl && memmem(p, (size_t)(nl - p), "[128]", 5))
			fn->map = fn->nparams;
		fn->nparams++;
	}
	*f = &fns[nfns++];
	return 0;
}

EXPORT CuResult
cuFuncGetAttribute(int *v, CuFuncAttr a, CuFunction f)
{
	int heavy = strcmp(f->name, "heavy") == 0;

	switch (a) {
	case TXCU_FUNC_MAX_THREADS_PER_BLOCK: *v = heavy ? 512 : 1024; return 0;
	case TXCU_FUNC_NUM_REGS: *v = heavy ? 128 : 32; return 0;
	case TXCU_FUNC_SHARED_SIZE_BYTES: *v = 0; return 0;
	default: return 1;
	}
}

EXPORT CuResult
cuFuncSetAttribute(CuFunction f, CuFuncAttr a, int v)
{
	if (a != TXCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES || v > 232448)
		return 1;
	f->optin = v;
	mock_shared_optin = v;
	return 0;
}

EXPORT CuResult
cuLaunchKernel(CuFunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
    unsigned bz, unsigned shared, CuStream s, void **params, void **extra)
{
	(void)bx, (void)by, (void)bz, (void)s, (void)extra;
	if (!current || (shared > 49152 && (int)shared > f->optin))
		return 1;
	if (f->map >= 0 && f->map < f->nparams) {
		int on;   /* tma_on is an i32 */
		memcpy(&on, params[f->nparams - 1], sizeof on);
		mock_tma_on = on;
		if (mock_tma_desc[0] && !((uintptr_t)params[f->map] & 63) &&
		    memcmp(params[f->map], last_map, sizeof last_map) == 0)
			mock_tma_launches++;
	}
	if (strcmp(f->name, "fill") == 0) {
		int *p = *(int **)params[0];
		int n = *(int *)params[1];
		for (int i = 0; i < n; i++)
			p[i] = i + (int)(gx * gy * gz);
	}
	return 0;
}

EXPORT CuResult
cuMemAlloc_v2(CuDevicePtr *p, size_t n)
{
	if (n == 0)
		return 1;
	void *q = malloc(n);
	*p = (CuDevicePtr)(uintptr_t)q;
	return q ? 0 : 2;
}

EXPORT CuResult cuMemFree_v2(CuDevicePtr p) { free((void *)(uintptr_t)p); return 0; }

EXPORT CuResult
cuMemcpyHtoD_v2(CuDevicePtr d, const void *s, size_t n)
{
	memcpy((void *)(uintptr_t)d, s, n);
	return 0;
}

EXPORT CuResult
cuMemcpyDtoH_v2(void *d, CuDevicePtr s, size_t n)
{
	memcpy(d, (const void *)(uintptr_t)s, n);
	return 0;
}

EXPORT CuResult
cuMemsetD8_v2(CuDevicePtr d, unsigned char c, size_t n)
{
	memset((void *)(uintptr_t)d, c, n);
	return 0;
}

/* Checks what the real driver checks of a 2-D tiled map and writes the
 * arguments into the map (so a launch can compare the bytes it is given). */
EXPORT CuResult
cuTensorMapEncodeTiled(struct CUtensorMap_st *map, unsigned int dtype, uint32_t rank, void *base,
    const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
    const uint32_t *estrides, unsigned int interleave, unsigned int swizzle,
    unsigned int l2promo, unsigned int oob)
{
	static const int esize[] = { 1, 2, 4, 4, 8, 8, 2, 4, 8, 2 };
	if (!map || ((uintptr_t)map & 63) || rank != 2 || dtype > 9 || ((uintptr_t)base & 15) ||
	    strides[0] % 16 || box[0] > 256 || box[1] > 256 || box[0] * esize[dtype] % 16 ||
	    estrides[0] != 1 || estrides[1] != 1 || interleave || swizzle > 3 ||
	    (swizzle && box[0] * esize[dtype] > (16u << swizzle)))
		return 1;
	snprintf(mock_tma_desc, sizeof mock_tma_desc, "dtype %u dims %llu x %llu stride %llu box "
	    "%u x %u swizzle %u l2 %u oob %u", dtype, (unsigned long long)dims[0],
	    (unsigned long long)dims[1], (unsigned long long)strides[0], box[0], box[1], swizzle,
	    l2promo, oob);
	memset(map, 0, 128);
	memcpy(map, mock_tma_desc, 100);
	memcpy((char *)map + 104, &base, sizeof base);
	memcpy(last_map, map, sizeof last_map);
	return 0;
}
