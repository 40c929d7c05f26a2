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
	TXC_ERR_CPU = 8,       /* the CPU lacks an instruction set the object was compiled for */
};

/* ---- header.c ------------------------------------------------------------ */
/* The C type of an element at the ABI ("float", "int8_t"; bool is
 * "uint8_t" holding 0 or 1, f16 is "uint16_t" holding IEEE binary16 bits). */
const char *target_c_type(ScalarType t);
/* `txc -H out.h`: include guard, one prototype per kernel with a comment
 * giving each tensor's direction, element type and shape; with dlpack, a
 * `NAME_dlpack(sizes..., scalars..., DLTensor *...)` prototype per kernel.
 * HEADER_C: the kernels come from --emit=c, which defines NAME_last_error();
 * otherwise the comment points at libtxrt's txrt_last_error(); HEADER_CUDA:
 * --target=cuda, whose tensors are device pointers. */
typedef enum { HEADER_TXRT, HEADER_C, HEADER_CUDA } HeaderFor;
bool header_emit(FILE *out, IrFunc **funcs, int n, bool dlpack, HeaderFor hf);

/* names.c: false (after an error at the kernel's name) where an entry
 * point's name, or NAME_dlpack with dlpack, is a C keyword, a C library
 * name or in a reserved prefix (_, txrt_, txc_, DLPack's); every output
 * checks it, so that the object, the C output and the header agree. */
bool names_check_entries(IrFunc **funcs, int n, bool dlpack);

/* ---- c/cname.c: C identifiers for IR names ------------------------------
 * Every variable and buffer gets a valid C identifier, unique in its
 * function, that cannot collide with a C keyword, a name the standard
 * headers define, or the generated file's helpers (all prefixed txc_).
 * The C backend and header.c name parameters the same way.               */
typedef struct CNames CNames;
CNames *cname_new(Arena *a);
/* The name of key (a Var or Buffer pointer), made from hint on first use. */
const char *cname_get(CNames *n, const void *key, const char *hint);
/* A fresh identifier made from hint (temporaries). */
const char *cname_fresh(CNames *n, const char *hint);
/* Whether a kernel name can be a C function name as it is. */
bool cname_ok_global(const char *name);
/* Reserves the kernel names of the file, then registers f's parameter
 * and tensor names in ABI order. */
void cname_func(CNames *n, IrFunc **all, int nall, IrFunc *f);

/* ---- c/emit_c.c: readable, self-contained C99 (--emit=c) -----------------
 * One entry point per kernel with the C ABI above plus
 * `const char *NAME_last_error(void)`, and a DLPack entry point behind
 * `#ifdef TXC_DLPACK`.  False after diagnostics (an intrinsic the C
 * backend cannot express, a kernel name C cannot use).                  */
bool c_emit(FILE *out, IrFunc **funcs, int n, const char *source_name);
/* f's parameter list as C declares it (names from n, which cname_func
 * prepared): "int64_t M, ..., const float *A, float *C", or with dlpack
 * "int64_t M, ..., const DLTensor *A, DLTensor *C". */
char *c_emit_params(Arena *a, CNames *n, IrFunc *f, bool dlpack);

/* ---- harness.c: --emit=harness -----------------------------------------
 * Writes a C program with a main() that calls f through the ABI above on
 * seeded random inputs of the declared shapes (sizes from argv), checks
 * the return code, guard zones and unchanged inputs, and writes the
 * outputs to a file (tests/run/diffcheck.sh compares them with txcmp).
 * Its usage is in harness.c's top comment.  false after a diagnostic. */
bool harness_emit(FILE *out, IrFunc *f);

/* ---- llvm/: native code through the LLVM-C API ---------------------------
 * The entry points of target.h's ABI, calling libtxrt (rt/txrt.h) for
 * parallel loops, large buffers and error messages; objects are
 * position-independent.  False after diagnostics (an unknown triple or
 * CPU, a construct the CPU cannot run, a write that failed).            */
typedef struct {
	const char *triple;    /* NULL: the host's */
	const char *cpu;       /* NULL: the host CPU (for the host triple, else
	                          "generic"); "generic": portable code */
	const char *features;  /* NULL: the host CPU's (with the host CPU) or none;
	                          else LLVM's "+avx2,-fma" form */
	int opt_level;         /* 0..3 */
	bool debug;            /* -g: DWARF lines pointing into the .tx file */
	bool no_contract;      /* forbid fusing a * b + c into an FMA */
	bool no_vector_math;   /* --no-vector-math: exp, log, tanh, erf, pow,
	                          sigmoid of vectors call libm per lane, as
	                          scalars do (llvm/vmath.c) */
	bool dlpack;           /* --dlpack: also NAME_dlpack (llvm/cg_dlpack.c) */
	bool local_intrinsics; /* --local-intrinsics: every tensorize micro-kernel
	                          in the module, none of libtxrt's prebuilt ones */
	int codegen_threads;   /* --codegen-threads: 0 as the machine and the
	                          module suit (llvm_split.c), 1 one thread */
	int time_passes;       /* TXC_TIME_PASSES: 1 times each backend stage,
	                          2 also prints LLVM's report of its passes */
} LlvmOptions;

typedef enum { EMIT_OBJ, EMIT_ASM, EMIT_LLVM, EMIT_BC } EmitKind;

/* llvm_emit.c: writes one module holding every kernel of funcs to out. */
bool llvm_emit(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind k, FILE *out);
/* The same to a file ("-": stdout). */
bool llvm_emit_file(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind k,
    const char *path);
/* txc --runtime-kernels: libtxrt's prebuilt micro-kernels (intrin_cpu.c),
 * for x86-64 with AVX2 and FMA (the host must be x86-64), to out. */
bool llvm_emit_runtime_kernels(const LlvmOptions *o, EmitKind k, FILE *out);
/* Whether the triple, --cpu and --features name a machine LLVM knows (an
 * unknown CPU or feature is a diagnostic, not LLVM's warning and abort). */
bool llvm_check_options(const LlvmOptions *o);
/* The host's triple and CPU name (for messages and `txc --version`). */
const char *llvm_host_triple(void);
const char *llvm_host_cpu(void);
/* Its enabled features, "+avx2,+fma,..." (for tuning logs). */
const char *llvm_host_features(void);

/* ---- cuda/: --target=cuda ---------------------------------------------
 * GPU kernels from the loops bound to blocks and threads, as PTX (LLVM's
 * NVPTX backend, for arch: "sm_80" when NULL) inside a host object whose
 * entry points have the ABI above with device pointers for the tensors
 * and launch the kernels through libtxrt (txrt_cuda_launch: the CUDA
 * driver, or libtxrt's emulator, which runs the kernels' host copy).
 * False after diagnostics (an illegal GPU schedule). */
typedef enum {
	CUDA_OUT_OBJ, CUDA_OUT_ASM, CUDA_OUT_LLVM, CUDA_OUT_BC,   /* the host object */
	CUDA_OUT_PTX,      /* --emit=ptx: the kernels' PTX */
	CUDA_OUT_LOOPS,    /* --emit=kernels: host code and kernels after the GPU passes */
	CUDA_OUT_C,        /* --emit=cuda: CUDA C of the kernels and entry points */
} CudaOut;
bool cuda_emit(IrFunc **funcs, int n, const LlvmOptions *o, const char *arch, CudaOut what,
    const char *source_name, FILE *out);
/* The kernels compiled for txc bench: the host object with NAME__packed
 * wrappers (as llvm_jit_compile defines them) loaded into a JIT. */
typedef struct LlvmJit LlvmJit;
LlvmJit *cuda_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o, const char *arch);

/* vta/: --target=vta (vta_target.c).  Every size must be fixed (-D): the
 * regions that touch VTA's on-chip buffers run at compile time into
 * instruction streams.  VTA_OUT_NATIVE: the host object (or kind's other
 * forms), whose entry points run the streams through libtxrt; ASM: the
 * streams as assembly, to out; BIN: the raw streams, micro-ops and
 * manifests in the directory dir. */
typedef enum { VTA_OUT_NATIVE, VTA_OUT_ASM, VTA_OUT_BIN } VtaOut;
bool vta_emit(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind kind, VtaOut what,
    FILE *out, const char *dir);
/* The kernels compiled for txc bench (NAME__packed wrappers, as
 * llvm_jit_compile defines them) and loaded into a JIT. */
LlvmJit *vta_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o);

/* llvm_jit.c: compiles in memory (ORC LLJIT, host only).  libtxrt and
 * libm resolve in the process.  Besides NAME, the JIT defines
 *     int NAME__packed(void **args)
 * where args[i] points to the i-th size or scalar (f16 as uint16_t, bool
 * as uint8_t) and the tensor arguments are the data pointers themselves. */
typedef struct LlvmJit LlvmJit;
LlvmJit *llvm_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o);
/* An object made for the host (len bytes at obj) loaded into a JIT, with
 * libtxrt and libm resolved as llvm_jit_compile resolves them. */
LlvmJit *llvm_jit_load(const void *obj, size_t len, const LlvmOptions *o);
/* The object emit writes (with the host's triple in its options) loaded
 * into a JIT; NULL when emit fails (after its diagnostics). */
typedef bool (*LlvmObjectFn)(void *ctx, const LlvmOptions *o, FILE *out);
LlvmJit *llvm_jit_emitted(LlvmObjectFn emit, void *ctx, const LlvmOptions *o);
/* The address of a compiled function (NAME or NAME__packed), or NULL. */
void *llvm_jit_lookup(LlvmJit *j, const char *name);
void llvm_jit_free(LlvmJit *j);

#endif
