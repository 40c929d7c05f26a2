/* cuda.c: libtxrt's CUDA half: the driver loaded at run time, device
 * memory, kernel launches, and the choice between device and emulator.
 *
 * The driver is opened with dlopen (libcuda.so.1, then libcuda.so) the
 * first time it is needed, never linked: a program that links libtxrt
 * starts where no driver exists, and its launches say why they cannot run
 * ("no CUDA device: ...") and how to emulate them.  Entry points are
 * looked up by their exact, sometimes versioned, symbols (cuda_api.h).
 *
 * Work goes to the context current on the calling thread, or, when none
 * is, to device 0's primary context, which is then made current (what the
 * CUDA runtime API uses too, so memory from cudaMalloc can be passed).
 * Each module keeps in m->cache one entry per context it was loaded in:
 * the CUmodule, and per kernel its CUfunction and attributes, looked up
 * the first time that kernel is launched.  One mutex guards the driver's
 * state, the per-context limits and the caches; launches and copies run
 * outside it.
 *
 * Before a launch the sizes are checked against the device's limits and
 * the kernel's own (its registers may allow fewer threads per block), so
 * that the message says which number is too large instead of the driver's
 * CUDA_ERROR_INVALID_VALUE.  Dynamic shared memory beyond the default 48
 * KiB is opted in per function.  A launch waits for the kernel to finish,
 * so that its errors surface at the call that caused them.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

/* What a launch may ask for, on a device or in the emulator. */
typedef struct {
	int64_t threads;           /* per block */
	int64_t block[3], grid[3];
	int64_t shared;            /* bytes per block without opting in */
	int64_t shared_optin;      /* the most a function may opt in to */
} Limits;

static const Limits emu_limits = {
	CUDA_EMU_MAX_THREADS, { 1024, 1024, 64 }, { 2147483647, 65535, 65535 },
	CUDA_EMU_MAX_SHARED, CUDA_EMU_MAX_SHARED,
};

/* a context used so far, with its device's limits */
typedef struct Ctx {
	CuContext ctx;
	Limits lim;
	struct Ctx *next;
} Ctx;

/* a kernel of a loaded module */
typedef struct {
	CuFunction fn;
	int max_threads;           /* for this function on this device */
	int regs;
	int static_shared;
	int64_t dyn_optin;         /* dynamic shared memory it was opted in to */
} Func;

/* m->cache: a module loaded in one context */
typedef struct ModCache {
	CuContext ctx;
	CuModule mod;
	Func *fns;                 /* m->nkernels */
	struct ModCache *next;
} ModCache;

static struct {
#define TXCU_POINTER(name, params) CuFn_##name *name;
	TXCU_FUNCTIONS(TXCU_POINTER)
#undef TXCU_POINTER
} cu;

static pthread_mutex_t cuda_mu = PTHREAD_MUTEX_INITIALIZER;
static int driver_state;           /* 0 not tried, 1 ready, -1 none: driver_reason says why */
static char driver_reason[300];
static CuContext primary;
static char gpu_name[256];
static Ctx *contexts;

static atomic_int mode_chosen = -1;    /* txrt_cuda_set_mode's; -1: none */
static atomic_int mode_default = -1;   /* TXRT_CUDA's, or what was found; -1: not yet */

static int driver_load(void);

/* ---- errors ------------------------------------------------------------------- */

/* CUresult names, from the constants of cuda_api.h that start "CUDA_" */
static const struct {
	unsigned value;
	const char *name;
} known[] = {
#define TXCU_KNOWN(name, cuda_name, value) { value, #cuda_name },
	TXCU_CONSTANTS(TXCU_KNOWN)
#undef TXCU_KNOWN
};

static const char *
error_name(CuResult r, char *buf, size_t n)
{
	const char *s = NULL;

	if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == TXCU_SUCCESS && s)
		return s;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].value == r && strncmp(known[i].name, "CUDA_", 5) == 0)
			return known[i].name;
	snprintf(buf, n, "CUDA error %u", r);
	return buf;
}

static const char *
error_string(CuResult r)
{
	const char *s = NULL;

	if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == TXCU_SUCCESS && s)
		return s;
	switch (r) {   /* what the stub library cannot say */
	case TXCU_ERROR_STUB_LIBRARY: return "CUDA driver is a stub library";
	case TXCU_ERROR_NO_DEVICE: return "no CUDA-capable device is detected";
	default: return "";
	}
}

/* "WHO: CALL failed: NAME (string)" as the last error; returns TXRT_ERR_CUDA */
static int
driver_error(const char *who, const char *call, CuResult r)
{
	char buf[32];
	const char *str = error_string(r);

	txrt_set_error("%s: %s failed: %s%s%s%s", who, call, error_name(r, buf, sizeof buf),
	    *str ? " (" : "", str, *str ? ")" : "");
	return TXRT_ERR_CUDA;
}

/* Why there is no device: the mode chosen (txrt_cuda_set_mode, TXRT_CUDA=none
 * or a value of TXRT_CUDA that is none of the three), or the driver's failure. */
static const char *
none_reason(void)
{
	static _Thread_local char why[160];
	const char *s = getenv("TXRT_CUDA");

	if (atomic_load(&mode_chosen) == TXRT_CUDA_NONE)
		return "CUDA is turned off (txrt_cuda_set_mode(TXRT_CUDA_NONE))";
	if (s && strcmp(s, "none") == 0)
		return "CUDA is turned off (TXRT_CUDA=none)";
	if (s && *s && strcmp(s, "emulate") && strcmp(s, "device")) {
		snprintf(why, sizeof why, "TXRT_CUDA='%.60s' is none of 'device', 'emulate' and "
		    "'none'", s);
		return why;
	}
	pthread_mutex_lock(&cuda_mu);
	int none = driver_load() != 0;
	pthread_mutex_unlock(&cuda_mu);
	return none ? driver_reason : "CUDA is turned off";
}

static int
no_device(const char *who, const char *reason)
{
	txrt_set_error("%s: no CUDA device: %s; set TXRT_CUDA=emulate to run the kernels in "
	    "libtxrt's emulator", who, reason);
	return TXRT_ERR_CUDA;
}

/* ---- the driver ------------------------------------------------------------------- */

/* Opens the driver, initialises it and retains device 0's primary
 * context, once; 0, or -1 with driver_reason.  Caller holds cuda_mu. */
static int
driver_load(void)
{
	static const char *const libs[] = { "libcuda.so.1", "libcuda.so" };
	char first[200] = "";
	void *lib = NULL;
	CuResult r;
	char buf[32];

	if (driver_state)
		return driver_state > 0 ? 0 : -1;
	driver_state = -1;
	for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !lib; i++) {
		lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib && i == 0) {
			const char *e = dlerror();
			snprintf(first, sizeof first, "%s", e ? e : libs[i]);
		}
	}
	if (!lib) {
		snprintf(driver_reason, sizeof driver_reason, "no CUDA driver (%s)", first);
		return -1;
	}
#define TXCU_LOOKUP(name, params) \
	if (!(cu.name = (CuFn_##name *)dlsym(lib, #name))) { \
		snprintf(driver_reason, sizeof driver_reason, "the CUDA driver has no %s", #name); \
		goto fail; \
	}
	TXCU_FUNCTIONS(TXCU_LOOKUP)
#undef TXCU_LOOKUP

	const char *call = "cuInit";
	r = cu.cuInit(0);
	int count = 0;
	if (r == TXCU_SUCCESS) {
		call = "cuDeviceGetCount";
		r = cu.cuDeviceGetCount(&count);
	}
	if (r == TXCU_SUCCESS && count == 0) {
		snprintf(driver_reason, sizeof driver_reason, "the CUDA driver finds no GPU");
		goto fail;
	}
	CuDevice dev = 0;
	if (r == TXCU_SUCCESS) {
		call = "cuDeviceGet";
		r = cu.cuDeviceGet(&dev, 0);
	}
	if (r == TXCU_SUCCESS) {
		call = "cuDevicePrimaryCtxRetain";
		r = cu.cuDevicePrimaryCtxRetain(&primary, dev);
	}
	if (r == TXCU_SUCCESS) {
		call = "cuDeviceGetName";
		r = cu.cuDeviceGetName(gpu_name, (int)sizeof gpu_name, dev);
	}
	if (r != TXCU_SUCCESS) {
		const char *str = error_string(r);
		snprintf(driver_reason, sizeof driver_reason, "%s failed: %s%s%s%s", call,
		    error_name(r, buf, sizeof buf), *str ? " (" : "", str, *str ? ")" : "");
		goto fail;
	}
	driver_state = 1;
	return 0;
fail:
	memset(&cu, 0, sizeof cu);
	dlclose(lib);
	return -1;
}

static int
driver_ready(const char *who)
{
	pthread_mutex_lock(&cuda_mu);
	int ok = driver_load();
	pthread_mutex_unlock(&cuda_mu);
	return ok == 0 ? 0 : no_device(who, driver_reason);
}

/* The context to use on the calling thread: the current one, else device
 * 0's primary, made current.  0 or TXRT_ERR_CUDA. */
static int
use_context(const char *who, CuContext *out)
{
	CuContext c = NULL;
	CuResult r = cu.cuCtxGetCurrent(&c);

	if (r != TXCU_SUCCESS)
		return driver_error(who, "cuCtxGetCurrent", r);
	if (!c) {
		c = primary;
		if ((r = cu.cuCtxSetCurrent(c)) != TXCU_SUCCESS)
			return driver_error(who, "cuCtxSetCurrent", r);
	}
	*out = c;
	return 0;
}

/* The record of context c, made on first use.  Caller holds cuda_mu. */
static Ctx *
context_record(const char *who, CuContext c)
{
	static const CuDeviceAttr attrs[9] = {
		TXCU_DEV_MAX_THREADS_PER_BLOCK, TXCU_DEV_MAX_BLOCK_DIM_X, TXCU_DEV_MAX_BLOCK_DIM_Y,
		TXCU_DEV_MAX_BLOCK_DIM_Z, TXCU_DEV_MAX_GRID_DIM_X, TXCU_DEV_MAX_GRID_DIM_Y,
		TXCU_DEV_MAX_GRID_DIM_Z, TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK,
		TXCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
	};
	int v[9];
	CuDevice dev;
	CuResult r;

	for (Ctx *x = contexts; x; x = x->next)
		if (x->ctx == c)
			return x;
	if ((r = cu.cuCtxGetDevice(&dev)) != TXCU_SUCCESS) {
		driver_error(who, "cuCtxGetDevice", r);
		return NULL;
	}
	for (int i = 0; i < 9; i++)
		if ((r = cu.cuDeviceGetAttribute(&v[i], attrs[i], dev)) != TXCU_SUCCESS) {
			driver_error(who, "cuDeviceGetAttribute", r);
			return NULL;
		}
	Ctx *x = calloc(1, sizeof *x);
	if (!x) {
		txrt_set_error("%s: out of memory", who);
		return NULL;
	}
	x->ctx = c;
	x->lim.threads = v[0];
	for (int d = 0; d < 3; d++) {
		x->lim.block[d] = v[1 + d];
		x->lim.grid[d] = v[4 + d];
	}
	x->lim.shared = v[7];
	x->lim.shared_optin = v[8] > v[7] ? v[8] : v[7];
	x->next = contexts;
	contexts = x;
	return x;
}

/* The function of kernel k in context c, loading m there first.  Caller
 * holds cuda_mu. */
static Func *
function(const char *who, txrt_cuda_module *m, int k, CuContext c)
{
	ModCache *mc;
	CuResult r;

	for (mc = m->cache; mc; mc = mc->next)
		if (mc->ctx == c)
			break;
	if (!mc) {
		char log[4096] = "";
		CuJitOption opts[2] = { TXCU_JIT_ERROR_LOG_BUFFER, TXCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
		void *vals[2] = { log, (void *)(uintptr_t)sizeof log };
		CuModule mod = NULL;

		if (!m->ptx) {
			txrt_set_error("%s: the module has no PTX", who);
			return NULL;
		}
		r = cu.cuModuleLoadDataEx(&mod, m->ptx, 2, opts, vals);
		if (r != TXCU_SUCCESS) {
			log[sizeof log - 1] = '\0';
			size_t n = strlen(log);
			while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
				log[--n] = '\0';
			char buf[32];
			const char *str = error_string(r);
			txrt_set_error("%s: cuModuleLoadDataEx failed: %s%s%s%s%s%s", who,
			    error_name(r, buf, sizeof buf), *str ? " (" : "", str, *str ? ")" : "",
			    n ? ": " : "", log);
			return NULL;
		}
		mc = calloc(1, sizeof *mc);
		Func *fns = calloc((size_t)m->nkernels, sizeof *fns);
		if (!mc || !fns) {
			free(mc);
			free(fns);
			cu.cuModuleUnload(mod);
			txrt_set_error("%s: out of memory", who);
			return NULL;
		}
		mc->ctx = c;
		mc->mod = mod;
		mc->fns = fns;
		mc->next = m->cache;
		m->cache = mc;
	}

	Func *f = &mc->fns[k];
	if (!f->fn) {
		CuFunction fn;
		int v[3];
		static const CuFuncAttr attrs[3] = {
			TXCU_FUNC_MAX_THREADS_PER_BLOCK, TXCU_FUNC_NUM_REGS, TXCU_FUNC_SHARED_SIZE_BYTES,
		};
		if ((r = cu.cuModuleGetFunction(&fn, mc->mod, m->kernels[k].name)) != TXCU_SUCCESS) {
			driver_error(who, "cuModuleGetFunction", r);
			return NULL;
		}
		for (int i = 0; i < 3; i++)
			if ((r = cu.cuFuncGetAttribute(&v[i], attrs[i], fn)) != TXCU_SUCCESS) {
				driver_error(who, "cuFuncGetAttribute", r);
				return NULL;
			}
		f->max_threads = v[0];
		f->regs = v[1];
		f->static_shared = v[2];
		f->fn = fn;
	}
	return f;
}

/* ---- launches ------------------------------------------------------------------ */

/* Checks a launch's sizes against lim (and f's limits on a device). */
static int
check_limits(const char *who, const char *what, const Limits *lim, const Func *f,
    const int64_t grid[3], const int64_t block[3], int64_t shared)
{
	static const char xyz[] = "xyz";

	for (int d = 0; d < 3; d++)
		if (block[d] > lim->block[d]) {
			txrt_set_error("%s: block dimension %c is %lld, the %s allows %lld", who, xyz[d],
			    (long long)block[d], what, (long long)lim->block[d]);
			return TXRT_ERR_CUDA;
		}
	int64_t threads = block[0] * block[1] * block[2];
	if (threads > lim->threads) {
		txrt_set_error("%s: %lld threads per block, the %s allows %lld", who,
		    (long long)threads, what, (long long)lim->threads);
		return TXRT_ERR_CUDA;
	}
	if (f && threads > f->max_threads) {
		txrt_set_error("%s: %lld threads per block, the kernel allows %d on this device "
		    "(it uses %d registers per thread)", who, (long long)threads, f->max_threads,
		    f->regs);
		return TXRT_ERR_CUDA;
	}
	for (int d = 0; d < 3; d++)
		if (grid[d] > lim->grid[d]) {
			txrt_set_error("%s: grid dimension %c is %lld, the %s allows %lld", who, xyz[d],
			    (long long)grid[d], what, (long long)lim->grid[d]);
			return TXRT_ERR_CUDA;
		}
	int64_t total = shared + (f ? f->static_shared : 0);
	if (total > lim->shared_optin) {
		if (f && f->static_shared)
			txrt_set_error("%s: %lld bytes of shared memory per block (%d static, %lld "
			    "dynamic), the %s allows %lld", who, (long long)total, f->static_shared,
			    (long long)shared, what, (long long)lim->shared_optin);
		else
			txrt_set_error("%s: %lld bytes of shared memory per block, the %s allows %lld",
			    who, (long long)total, what, (long long)lim->shared_optin);
		return TXRT_ERR_CUDA;
	}
	return 0;
}

static int
device_launch(const char *who, txrt_cuda_module *m, int k, const int64_t grid[3],
    const int64_t block[3], int64_t shared, void **params)
{
	CuContext c;
	CuResult r;
	int rc;

	if ((rc = driver_ready(who)) != 0 || (rc = use_context(who, &c)) != 0)
		return rc;
	pthread_mutex_lock(&cuda_mu);
	Ctx *x = context_record(who, c);
	Func *f = x ? function(who, m, k, c) : NULL;
	if (!f) {
		pthread_mutex_unlock(&cuda_mu);
		return TXRT_ERR_CUDA;
	}
	rc = check_limits(who, "device", &x->lim, f, grid, block, shared);
	if (rc == 0 && shared + f->static_shared > x->lim.shared && shared > f->dyn_optin) {
		r = cu.cuFuncSetAttribute(f->fn, TXCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
		if (r != TXCU_SUCCESS)
			rc = driver_error(who, "cuFuncSetAttribute", r);
		else
			f->dyn_optin = shared;
	}
	CuFunction fn = f->fn;
	pthread_mutex_unlock(&cuda_mu);
	if (rc != 0)
		return rc;

	r = cu.cuLaunchKernel(fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
	    (unsigned)block[0], (unsigned)block[1], (unsigned)block[2], (unsigned)shared, NULL,
	    params, NULL);
	if (r != TXCU_SUCCESS)
		return driver_error(who, "cuLaunchKernel", r);
	if ((r = cu.cuCtxSynchronize()) != TXCU_SUCCESS)
		return driver_error(who, "cuCtxSynchronize (running the kernel)", r);
	return 0;
}

int
txrt_cuda_launch(txrt_cuda_module *m, int k, int64_t gx, int64_t gy, int64_t gz,
    int64_t bx, int64_t by, int64_t bz, int64_t shared, void **params)
{
	char who[160];
	const int64_t grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };

	cuda_emu_clear_reports();
	if (!m || m->abi != TXRT_CUDA_ABI) {
		txrt_set_error("txrt_cuda_launch: %s (ABI %d; this libtxrt has %d)",
		    m ? "the module was written for another libtxrt" : "no module",
		    m ? m->abi : 0, TXRT_CUDA_ABI);
		return TXRT_ERR_CUDA;
	}
	if (k < 0 || k >= m->nkernels || !m->kernels || !m->kernels[k].name) {
		txrt_set_error("txrt_cuda_launch: no kernel %d in a module of %d", k, m->nkernels);
		return TXRT_ERR_CUDA;
	}
	snprintf(who, sizeof who, "kernel '%s'", m->kernels[k].name);
	if (gx < 0 || gy < 0 || gz < 0 || bx < 0 || by < 0 || bz < 0 || shared < 0) {
		txrt_set_error("%s: a negative launch size (grid %lldx%lldx%lld, block %lldx%lldx%lld, "
		    "%lld bytes of shared memory)", who, (long long)gx, (long long)gy, (long long)gz,
		    (long long)bx, (long long)by, (long long)bz, (long long)shared);
		return TXRT_ERR_CUDA;
	}
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
		return 0;

	switch (txrt_cuda_mode()) {
	case TXRT_CUDA_EMULATE: {
		int rc = check_limits(who, "emulator", &emu_limits, NULL, grid, block, shared);
		return rc ? rc : cuda_emu_launch(m, k, grid, block, shared, params);
	}
	case TXRT_CUDA_DEVICE:
		return device_launch(who, m, k, grid, block, shared, params);
	default:
		return no_device(who, none_reason());
	}
}

/* ---- memory -------------------------------------------------------------------- */

/* 0 when the device is ready for `who` (the driver loaded, a context
 * current), else TXRT_ERR_CUDA after setting the error. */
static int
device_ready(const char *who)
{
	CuContext c;
	int rc = driver_ready(who);

	return rc ? rc : use_context(who, &c);
}

static int
mode_for(const char *who)
{
	int mode = txrt_cuda_mode();

	if (mode == TXRT_CUDA_NONE)
		no_device(who, none_reason());
	return mode;
}

void *
txrt_cuda_malloc(size_t bytes)
{
	static const char who[] = "txrt_cuda_malloc";
	CuDevicePtr p = 0;
	CuResult r;

	switch (mode_for(who)) {
	case TXRT_CUDA_EMULATE:
		return txrt_alloc(bytes);
	case TXRT_CUDA_DEVICE:
		if (device_ready(who) != 0)
			return NULL;
		if ((r = cu.cuMemAlloc_v2(&p, bytes ? bytes : 1)) != TXCU_SUCCESS) {
			char call[64];
			snprintf(call, sizeof call, "cuMemAlloc_v2 (%zu bytes)", bytes);
			driver_error(who, call, r);
			return NULL;
		}
		return (void *)(uintptr_t)p;
	default:
		return NULL;
	}
}

void
txrt_cuda_free(void *dev)
{
	if (!dev)
		return;
	switch (txrt_cuda_mode()) {
	case TXRT_CUDA_EMULATE:
		txrt_free(dev);
		break;
	case TXRT_CUDA_DEVICE:
		if (device_ready("txrt_cuda_free") == 0) {
			CuResult r = cu.cuMemFree_v2((CuDevicePtr)(uintptr_t)dev);
			if (r != TXCU_SUCCESS)
				driver_error("txrt_cuda_free", "cuMemFree_v2", r);
		}
		break;
	}
}

/* One copy between host and device memory, to the device when to_device
 * (memcpy when emulated). */
static int
copy(const char *who, void *dst, const void *src, size_t bytes, int to_device)
{
	CuResult r;

	if (bytes == 0)
		return 0;
	if (!dst || !src) {
		txrt_set_error("%s: a NULL pointer", who);
		return TXRT_ERR_CUDA;
	}
	switch (mode_for(who)) {
	case TXRT_CUDA_EMULATE:
		memcpy(dst, src, bytes);
		return 0;
	case TXRT_CUDA_DEVICE:
		if (device_ready(who) != 0)
			return TXRT_ERR_CUDA;
		if (to_device) {
			r = cu.cuMemcpyHtoD_v2((CuDevicePtr)(uintptr_t)dst, src, bytes);
			return r == TXCU_SUCCESS ? 0 : driver_error(who, "cuMemcpyHtoD_v2", r);
		}
		r = cu.cuMemcpyDtoH_v2(dst, (CuDevicePtr)(uintptr_t)src, bytes);
		return r == TXCU_SUCCESS ? 0 : driver_error(who, "cuMemcpyDtoH_v2", r);
	default:
		return TXRT_ERR_CUDA;
	}
}

int
txrt_cuda_memcpy_htod(void *dev, const void *host, size_t bytes)
{
	return copy("txrt_cuda_memcpy_htod", dev, host, bytes, 1);
}

int
txrt_cuda_memcpy_dtoh(void *host, const void *dev, size_t bytes)
{
	return copy("txrt_cuda_memcpy_dtoh", host, dev, bytes, 0);
}

/* One lock for every constant's first copy: a first call is rare, and
 * two threads must not both copy (nor one read a half-made slot). */
static pthread_mutex_t const_mu = PTHREAD_MUTEX_INITIALIZER;

int
txrt_cuda_constant(void **slot, const void *host, size_t bytes)
{
	if (__atomic_load_n(slot, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&const_mu);
	int rc = 0;
	if (!*slot) {
		void *dev = txrt_cuda_malloc(bytes);
		if (!dev) {
			rc = TXRT_ERR_CUDA;     /* txrt_cuda_malloc said why */
		} else if ((rc = txrt_cuda_memcpy_htod(dev, host, bytes)) != 0) {
			txrt_cuda_free(dev);
		} else {
			__atomic_store_n(slot, dev, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&const_mu);
	return rc;
}

int
txrt_cuda_memset(void *dev, int byte, size_t bytes)
{
	static const char who[] = "txrt_cuda_memset";
	CuResult r;

	if (bytes == 0)
		return 0;
	if (!dev) {
		txrt_set_error("%s: a NULL pointer", who);
		return TXRT_ERR_CUDA;
	}
	switch (mode_for(who)) {
	case TXRT_CUDA_EMULATE:
		memset(dev, byte, bytes);
		return 0;
	case TXRT_CUDA_DEVICE:
		if (device_ready(who) != 0)
			return TXRT_ERR_CUDA;
		r = cu.cuMemsetD8_v2((CuDevicePtr)(uintptr_t)dev, (unsigned char)byte, bytes);
		return r == TXCU_SUCCESS ? 0 : driver_error(who, "cuMemsetD8_v2", r);
	default:
		return TXRT_ERR_CUDA;
	}
}

/* ---- tensor maps (TMA) ---------------------------------------------------------- */

int
txrt_cuda_tensor_map(void *map, const void *base, int dtype, int esize, int64_t cols,
    int64_t rows, int box_cols, int box_rows, int swizzle)
{
	/* the hardware's rules (cuTensorMapEncodeTiled's): a 16-byte aligned
	 * base and row pitch, boxes of 1..256 with rows of 16n bytes, a
	 * swizzled box row at most the swizzle's span */
	int64_t pitch = cols * esize;
	if (map && !((uintptr_t)map & 63))
		memset(map, 0, 128);   /* not encoded: zeros, which the kernel never reads */
	if (!map || ((uintptr_t)map & 63) || !base || ((uintptr_t)base & 15) || esize <= 0 ||
	    cols < 1 || rows < 1 || cols > ((int64_t)1 << 32) || rows > ((int64_t)1 << 32) ||
	    (rows > 1 && pitch % 16) || box_cols < 1 || box_cols > 256 || box_rows < 1 ||
	    box_rows > 256 || (box_cols * esize) % 16 ||
	    (swizzle && (box_cols * esize > swizzle || (swizzle != 32 && swizzle != 64 &&
	    swizzle != 128))))
		return 0;
	if (txrt_cuda_mode() == TXRT_CUDA_EMULATE) {
		CudaEmuMap m = { CUDA_EMU_MAP_MAGIC, esize, { box_cols, box_rows }, swizzle, 0,
			{ cols, rows }, pitch, base };
		memset(map, 0, 128);
		memcpy(map, &m, sizeof m);
		return 1;
	}
	if (txrt_cuda_mode() != TXRT_CUDA_DEVICE || driver_ready("txrt_cuda_tensor_map"))
		return 0;   /* the launch says why */
	const uint64_t dims[2] = { (uint64_t)cols, (uint64_t)rows };
	const uint64_t strides[1] = { (uint64_t)pitch };
	const uint32_t box[2] = { (uint32_t)box_cols, (uint32_t)box_rows }, one[2] = { 1, 1 };
	/* CU_TENSOR_MAP_SWIZZLE_NONE, 32B, 64B, 128B = 0..3; interleave none,
	 * L2 promotion 128B (2), out-of-bounds fill with zeros (0) */
	unsigned sw = swizzle == 128 ? 3 : swizzle == 64 ? 2 : swizzle == 32 ? 1 : 0;
	CuResult r = cu.cuTensorMapEncodeTiled(map, (unsigned)dtype, 2, (void *)base, dims,
	    strides, box, one, 0, sw, 2, 0);
	return r == TXCU_SUCCESS;
}

int
txrt_cuda_synchronize(void)
{
	static const char who[] = "txrt_cuda_synchronize";
	CuResult r;

	switch (mode_for(who)) {
	case TXRT_CUDA_EMULATE:
		return 0;
	case TXRT_CUDA_DEVICE:
		if (device_ready(who) != 0)
			return TXRT_ERR_CUDA;
		r = cu.cuCtxSynchronize();
		return r == TXCU_SUCCESS ? 0 : driver_error(who, "cuCtxSynchronize", r);
	default:
		return TXRT_ERR_CUDA;
	}
}

/* ---- the mode ------------------------------------------------------------------- */

int
txrt_cuda_mode(void)
{
	int mode = atomic_load(&mode_chosen);

	if (mode >= 0)
		return mode;
	if ((mode = atomic_load(&mode_default)) >= 0)
		return mode;
	const char *s = getenv("TXRT_CUDA");
	if (s && strcmp(s, "emulate") == 0) {
		mode = TXRT_CUDA_EMULATE;
	} else if (s && strcmp(s, "device") == 0) {
		mode = TXRT_CUDA_DEVICE;
	} else if (s && *s) {
		/* "none", or a value that is no mode (a misspelling): no device,
		 * and every launch says why (none_reason) */
		mode = TXRT_CUDA_NONE;
	} else {
		pthread_mutex_lock(&cuda_mu);
		mode = driver_load() == 0 ? TXRT_CUDA_DEVICE : TXRT_CUDA_NONE;
		pthread_mutex_unlock(&cuda_mu);
	}
	atomic_store(&mode_default, mode);
	return mode;
}

void
txrt_cuda_set_mode(int mode)
{
	if (mode == TXRT_CUDA_NONE || mode == TXRT_CUDA_DEVICE || mode == TXRT_CUDA_EMULATE) {
		atomic_store(&mode_chosen, mode);
	} else {
		atomic_store(&mode_chosen, -1);
		atomic_store(&mode_default, -1);   /* read TXRT_CUDA again */
	}
}

const char *
txrt_cuda_device_name(void)
{
	switch (txrt_cuda_mode()) {
	case TXRT_CUDA_EMULATE:
		return "emulator";
	case TXRT_CUDA_DEVICE:
		pthread_mutex_lock(&cuda_mu);
		int ok = driver_load() == 0;
		pthread_mutex_unlock(&cuda_mu);
		return ok ? gpu_name : "none";
	default:
		return "none";
	}
}
