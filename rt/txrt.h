/* txrt.h: libtxrt, the run-time library that txc's objects call.
 *
 * An object that txc writes for the CPU needs only this library, libc and
 * libm.  It gives a thread pool for parallel loops (persistent workers,
 * dynamic chunks, the caller takes part, nested loops run serially),
 * 64-byte aligned allocation for intermediate buffers, the last error
 * message of the calling thread (what a failing entry point explains),
 * the library's version, and for CUDA objects the driver loaded at run
 * time, device memory, kernel launches and a CPU emulator of kernels that
 * checks shared memory for races.  Every exported name starts with txrt_.
 */
#ifndef TXRT_H
#define TXRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TXRT_API __attribute__((visibility("default")))
#define TXRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TXRT_API
#define TXRT_PRINTF(f, a)
#endif

/* The codes a txc entry point returns (0: success). */
enum {
	TXRT_OK = 0,
	TXRT_ERR_NULL = 1,      /* a tensor pointer is NULL */
	TXRT_ERR_SIZE = 2,      /* a size is negative or inconsistent, or overflows 64 bits */
	TXRT_ERR_DIVIDE = 3,    /* a size an exact split requires to divide does not */
	TXRT_ERR_ALLOC = 4,     /* out of memory */
	TXRT_ERR_DLPACK = 5,    /* a DLTensor has the wrong device, type or shape */
	TXRT_ERR_CUDA = 6,      /* CUDA: no device, a driver error, a launch limit, an emulator report */
	/* 7 is TXRT_ERR_VTA (vta.h) */
	TXRT_ERR_CPU = 8,       /* the CPU lacks an instruction set the object was compiled for */
};

/* The library's version, "MAJOR.MINOR.PATCH". */
TXRT_API const char *txrt_version(void);

/* ---- threads ------------------------------------------------------------
 * A parallel loop body: runs iterations [begin, end) with its captured
 * variables in closure; returns 0 or an error code (after txrt_set_error). */
typedef int (*txrt_task)(void *closure, int64_t begin, int64_t end);

/* Runs fn over [begin, end) in contiguous chunks that the threads, the
 * calling one included, take one after another, large ones first.
 * Returns 0, or the code of a chunk that failed (its message becomes the
 * caller's last error).  Called from inside a parallel loop, or while
 * another thread uses the pool, it runs the whole range on the calling
 * thread. */
TXRT_API int txrt_parallel_for(txrt_task fn, void *closure, int64_t begin, int64_t end);

/* The number of threads parallel loops use, the caller included: from
 * TXRT_NUM_THREADS when set, else the number of online CPUs. */
TXRT_API int txrt_get_num_threads(void);
/* Changes it (n <= 0: back to the default); takes effect at the next
 * parallel loop. */
TXRT_API void txrt_set_num_threads(int n);

/* ---- memory ---------------------------------------------------------------
 * 64-byte aligned blocks; txrt_alloc(0) gives a valid, freeable pointer.
 * On failure it returns NULL and sets the last error. */
TXRT_API void *txrt_alloc(size_t bytes);
TXRT_API void txrt_free(void *p);

/* ---- errors ---------------------------------------------------------------
 * One message per thread, kept until the next txrt_set_error. */
TXRT_API void txrt_set_error(const char *fmt, ...) TXRT_PRINTF(1, 2);
/* The calling thread's last message ("" when none). */
TXRT_API const char *txrt_last_error(void);
TXRT_API void txrt_clear_error(void);

/* ---- the CPU ----------------------------------------------------------------
 * 0 when this CPU (and its operating system) has every instruction set of
 * features, a comma-separated list of LLVM's names ("avx2,fma,avx512f");
 * otherwise TXRT_ERR_CPU after txrt_set_error naming entry and what is
 * missing.  Every entry point of an x86-64 object calls it first with the
 * sets it was compiled for.  The CPU is read once. */
TXRT_API int txrt_cpu_require(const char *features, const char *entry);
/* 1 when this CPU has every instruction set of features, else 0; no
 * message.  libtxrt's AVX-512 micro-kernels choose their code by it. */
TXRT_API int txrt_cpu_has(const char *features);

/* ---- AMX ---------------------------------------------------------------------
 * The micro-kernels of txc's "i8_amx" and "bf16_amx" intrinsics (tdpbssd,
 * tdpbf16ps on AMX tiles), which objects call: C[mr, nr] (+)= A[mr, K]
 * B[K, nr], C's and B's columns contiguous, strides in elements, C
 * overwritten where first is 1.  A CPU with AMX needs the operating
 * system's leave to use its tiles, which libtxrt asks once a process
 * (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)), from
 * txrt_cpu_require when the list names amx-tile, amx-int8 or amx-bf16.
 * The _emulated ones run the same kernel on a tile file in memory (any
 * x86-64; txc's TXC_AMX_EMULATE=1, a test switch). */
TXRT_API void txrt_amx_i8(void *c, int64_t csi, const void *a, int64_t asi, int64_t ask,
    const void *b, int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first);
TXRT_API void txrt_amx_bf16(void *c, int64_t csi, const void *a, int64_t asi, int64_t ask,
    const void *b, int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first);
TXRT_API void txrt_amx_i8_emulated(void *c, int64_t csi, const void *a, int64_t asi,
    int64_t ask, const void *b, int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first);
TXRT_API void txrt_amx_bf16_emulated(void *c, int64_t csi, const void *a, int64_t asi,
    int64_t ask, const void *b, int64_t bsk, int64_t K, int64_t mr, int64_t nr, int64_t first);

/* ---- CUDA -------------------------------------------------------------------
 * The objects txc writes for a CUDA target hold their kernels' PTX and, for
 * the emulator, the same kernels compiled for the host; their entry points
 * call txrt_cuda_launch.  libtxrt loads the CUDA driver (libcuda.so.1) when
 * first needed, so a program linked with it runs on machines without one.
 *
 * Which executes kernels: the GPU through the driver (device 0's primary
 * context, or the context current on the calling thread), libtxrt's
 * emulator, or nothing (launches fail with "no CUDA device"). */
enum { TXRT_CUDA_NONE = 0, TXRT_CUDA_DEVICE = 1, TXRT_CUDA_EMULATE = 2 };

/* The version of the two structures below; a module carries the one it was
 * written for. */
#define TXRT_CUDA_ABI 1

/* One kernel of a CUDA object. */
typedef struct txrt_cuda_kernel {
	const char *name;              /* the PTX .entry name */
	void (*emu)(void **params);    /* the kernel compiled for the host, for the emulator, or NULL */
	const char *const *buffers;    /* names of the buffers the emulator's checks refer to by index */
	const unsigned char *buffer_kinds; /* per buffer: 0 global, 1 shared, 2 local */
	int nbuffers;
} txrt_cuda_kernel;

/* A CUDA object's module: its PTX and kernels.  `cache` belongs to libtxrt
 * (it starts NULL): the module loaded in each context, and its functions. */
typedef struct txrt_cuda_module {
	int abi;                       /* TXRT_CUDA_ABI */
	const char *ptx;               /* NUL-terminated PTX text */
	const txrt_cuda_kernel *kernels;
	int nkernels;
	void *cache;
} txrt_cuda_module;

/* Launches kernel k of m over gx*gy*gz blocks of bx*by*bz threads with
 * `shared` bytes of dynamic shared memory.  params[i] points to the i-th
 * kernel parameter's value (cuLaunchKernel's kernelParams: for a pointer
 * parameter, to a slot holding the pointer).  Synchronous: returns when
 * the kernel has finished, 0 or TXRT_ERR_CUDA after txrt_set_error with a
 * message that names the kernel (no device, a driver error, a size over
 * the device's limits, the emulator's first report).  A grid or block
 * with no threads returns 0 at once.  Thread safe; emulated launches run
 * one at a time. */
TXRT_API int txrt_cuda_launch(txrt_cuda_module *m, int k, int64_t gx, int64_t gy, int64_t gz,
    int64_t bx, int64_t by, int64_t bz, int64_t shared, void **params);

/* Device memory (host memory in emulate mode).  txrt_cuda_malloc returns
 * NULL and sets the last error on failure; 0 bytes give a valid pointer.
 * txrt_cuda_free accepts NULL.  The others return 0 or TXRT_ERR_CUDA. */
TXRT_API void *txrt_cuda_malloc(size_t bytes);
TXRT_API void txrt_cuda_free(void *dev);
TXRT_API int txrt_cuda_memcpy_htod(void *dev, const void *host, size_t bytes);
TXRT_API int txrt_cuda_memcpy_dtoh(void *host, const void *dev, size_t bytes);
TXRT_API int txrt_cuda_memset(void *dev, int byte, size_t bytes);
/* A kernel's constant tensor (tx(5) CONSTANTS, a model's weights) on the
 * device: on the first call, a copy of its `bytes` host bytes in device
 * memory, kept in *slot (the object's) for the life of the process;
 * later calls find it there.  Thread-safe; 0 or TXRT_ERR_CUDA. */
TXRT_API int txrt_cuda_constant(void **slot, const void *host, size_t bytes);
/* A kernel's tensor map for TMA loads (tma() in txc-schedule(7)): the
 * 2-D tensor of rows x cols elements of esize bytes (CUtensorMapDataType
 * dtype) at base, rows cols elements apart, read in boxes of box_rows x
 * box_cols with swizzle 0, 32, 64 or 128 (bytes) and zeros past the edges,
 * written into the 128 bytes at map (64-byte aligned): with
 * cuTensorMapEncodeTiled in device mode, in libtxrt's own layout for the
 * emulator.  Returns 1, or 0 when TMA cannot copy this tensor (base not
 * 16-byte aligned, a row pitch that is not a multiple of 16 bytes, a box
 * the hardware does not take, the driver's refusal), and the kernel then
 * copies with cp.async instead; never an error. */
TXRT_API int txrt_cuda_tensor_map(void *map, const void *base, int dtype, int esize,
    int64_t cols, int64_t rows, int box_cols, int box_rows, int swizzle);
/* Waits for the device (0, or TXRT_ERR_CUDA). */
TXRT_API int txrt_cuda_synchronize(void);

/* The mode: set by txrt_cuda_set_mode, else from TXRT_CUDA (emulate,
 * device or none), else TXRT_CUDA_DEVICE when a driver and a GPU exist
 * and TXRT_CUDA_NONE otherwise.  Memory must be freed in the mode that
 * allocated it. */
TXRT_API int txrt_cuda_mode(void);
/* Chooses the mode (a program, or txc bench, picks TXRT_CUDA_EMULATE);
 * any other value restores the default. */
TXRT_API void txrt_cuda_set_mode(int mode);
/* "emulator" in emulate mode, the GPU's name in device mode, else "none". */
TXRT_API const char *txrt_cuda_device_name(void);
/* The number of problems the emulator's checker reported in the calling
 * thread's last launch (0: none, or not emulated).  TXRT_CUDA_CHECK=0
 * turns the checks off. */
TXRT_API int64_t txrt_cuda_emu_reports(void);

/* ---- CUDA: the emulator's interface to emulated kernels ----------------------
 * The host copy of a kernel calls these; they are valid only while the
 * emulator runs it.  Each thread of a block runs as a fiber of its own. */
/* 0..2: threadIdx.x/y/z, 3..5: blockIdx.x/y/z, 6..8: blockDim.x/y/z,
 * 9..11: gridDim.x/y/z. */
TXRT_API int64_t txrt_emu_id(int which);
/* __syncthreads(): waits until every thread of the block has arrived. */
TXRT_API void txrt_emu_barrier(void);
/* bar.sync 1, count: a barrier of count threads of the block (those of a
 * warp-specialised kernel's consumer warpgroups), the others free to
 * have finished; 0 counts them all, as txrt_emu_barrier. */
TXRT_API void txrt_emu_barrier_n(int count);
/* The block's dynamic shared memory (the launch's `shared` bytes, 16-byte
 * aligned), filled with 0xff bytes when the block starts. */
TXRT_API void *txrt_emu_shared(void);
/* Called before every load (write 0) or store (write 1) of element `off`
 * of buffer `buf` (an index into the kernel's buffers), which has n
 * elements of esize bytes from `base`; active 0: a predicate turned the
 * access off (it is ignored).  Checks the bounds and, for shared buffers,
 * races and reads of memory never written; an access out of bounds stops
 * the launch before it happens. */
TXRT_API void txrt_emu_access(int buf, const void *base, int64_t off, int64_t n, int esize,
    int write, int active);
/* cp.async.cg ... 16 with its src-size (txc's gpu.copy): 16 / esize elements
 * of shared buffer dbuf from element doff, the first `valid` of them from
 * element soff of buffer sbuf and the rest zero, written when the calling
 * thread's txrt_emu_async_wait leaves the copy's commit group done; until
 * then any access to those bytes is reported, and so is a thread that
 * ends with copies not waited for. */
TXRT_API void txrt_emu_copy_async(int dbuf, void *dbase, int64_t doff, int64_t dn, int sbuf,
    const void *sbase, int64_t soff, int64_t sn, int esize, int64_t valid);
/* cp.async.commit_group: the thread's copies since its last commit become
 * a group. */
TXRT_API void txrt_emu_async_commit(void);
/* cp.async.wait_group n: the thread's groups but the n newest land. */
TXRT_API void txrt_emu_async_wait(int n);
/* mbarrier.init of the 8-byte shared mbarrier at bar with an arrival
 * count; phase 0, no transaction bytes expected. */
TXRT_API void txrt_emu_mbar_init(void *bar, int count);
/* One thread's TMA load (gpu.tma): mbarrier.arrive.expect_tx of the box's
 * bytes on bar, then cp.async.bulk.tensor.2d of the box at column col, row
 * row of the tensor map (txrt_cuda_tensor_map's emulator layout) into
 * shared buffer dbuf from element doff, with the map's swizzle (by the
 * bytes' offsets in the block's arena, as the hardware does by address)
 * and zeros past the tensor's edges, completing the bytes on bar.  The
 * box's bytes count as the thread's writes, in flight until a thread's
 * txrt_emu_mbar_wait sees the phase complete. */
TXRT_API void txrt_emu_tma_load(int dbuf, void *dbase, int64_t doff, const void *map, int col,
    int row, void *bar);
/* The two halves of txrt_emu_tma_load, for a fill of several boxes on one
 * mbarrier: mbarrier.arrive.expect_tx of bytes on bar (one arrival), and
 * one box's copy completing its bytes on bar with no arrival. */
TXRT_API void txrt_emu_mbar_expect_tx(void *bar, int bytes);
TXRT_API void txrt_emu_tma_box(int dbuf, void *dbase, int64_t doff, const void *map, int col,
    int row, void *bar);
/* mbarrier.try_wait.parity in a loop: returns once the phase of that
 * parity has completed, the block's other threads running meanwhile; one
 * that never can (no thread of the block can go on) is reported and
 * stops the launch. */
TXRT_API void txrt_emu_mbar_wait(void *bar, int parity);
/* mbarrier.arrive: one arrival on bar, no transaction bytes (a consumer
 * releasing a slot: pipeline(S, producer = warpgroup)). */
TXRT_API void txrt_emu_mbar_arrive(void *bar);
/* A warp's one mbarrier.arrive (its lane 0's, after a warp-wide wait):
 * called by each of its threads, the arrival made at the last one's. */
TXRT_API void txrt_emu_mbar_arrive_warp(void *bar);
/* Hopper's wgmma (sm_90a) for the calling thread of its warpgroup
 * (threadIdx.x 0..127): its n/2 accumulators acc of the 64 x n block
 * updated from the operands that the shared-memory matrix descriptors
 * adesc and bdesc (start addresses relative to the arena) describe, in
 * buffers abuf and bbuf (base, elements); flags: 1 bf16 (else f16), 2
 * scale-d (else the sums replace acc), 4 a transposed, 8 b transposed.
 * The shared bytes a call reads stay in flight (no writes) until every
 * thread of the warpgroup has waited for its group.
 * txrt_emu_wgmma_sync: 0 the fence, 1 the commit and wait_group 0, 2 the
 * fragment's registers touched (an error while a call is in flight).
 * txrt_emu_wgmma_wait: wgmma.commit_group (commit != 0), then
 * wgmma.wait_group n: all but the n newest of the thread's groups done. */
TXRT_API void txrt_emu_wgmma(int abuf, const void *abase, int64_t an, int bbuf,
    const void *bbase, int64_t bn, int64_t adesc, int64_t bdesc, float *acc, int n, int flags);
TXRT_API void txrt_emu_wgmma_sync(int kind);
TXRT_API void txrt_emu_wgmma_wait(int commit, int n);

#ifdef __cplusplus
}
#endif

#endif
