/* cg.h: the LLVM backend's internal interface (target/llvm/ only).
 *
 * cg_func.c turns each IrFunc into an LLVM function with the C ABI of
 * target.h (argument checks, asserts, one failure exit that frees what
 * the function allocated); cg_stmt.c emits statements (loops, stores,
 * allocations), cg_par.c outlines parallel loops into closures that
 * libtxrt's thread pool runs, cg_expr.c emits expressions (scalar and
 * vector; vmath.c the math functions of vectors), cg_mem.c addresses buffers (vector loads and stores, gathers,
 * masked accesses), cg_debug.c attaches DWARF line information.
 * llvm_emit.c (objects, assembly, IR, bitcode) and llvm_jit.c (ORC LLJIT)
 * drive it.
 */
#ifndef TXC_CG_H
#define TXC_CG_H

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "lower/ir.h"
#include "target/target.h"

/* What a name in scope stands for: a variable's value or a buffer's base
 * pointer.  Bindings form a stack; the innermost one wins. */
typedef struct {
	Var *var;            /* or NULL for a buffer */
	Buffer *buf;
	LLVMValueRef value;
} CgBind;

/* A buffer allocated on the heap: the slot (an alloca in the entry
 * block, NULL when not live) that the failure exit frees. */
typedef struct {
	LLVMValueRef slot;
	const char *free_fn;    /* NULL: txrt_free; a device buffer: txrt_cuda_free */
} CgHeap;

/* The LLVM function being built (the entry point or an outlined
 * parallel body). */
typedef struct CgFn {
	LLVMValueRef fn;
	LLVMBasicBlockRef alloca_bb;   /* allocas and slot initialisation */
	LLVMBasicBlockRef fail_bb;     /* frees heap slots, returns rc_slot */
	LLVMValueRef rc_slot;          /* i32 return code on failure */
	CgHeap *heap; int nheap, capheap;
	LLVMMetadataRef di_scope;      /* -g: the subprogram */
	int work;                      /* tensor accesses and micro-kernel
	                                  calls emitted into it (cg_func.c) */
	struct CgFn *outer;
} CgFn;

typedef struct {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMTargetDataRef td;
	IrFunc *ir;                    /* the kernel being emitted */
	CgFn *fn;
	CgBind *binds; int nbinds, capbinds;
	LLVMValueRef mask;             /* lanes a vector select made active, or NULL */
	int npar;                      /* outlined bodies so far (for names) */
	int loop_hint;                 /* for the next cg_loop: see cg_stmt.c */
	bool contract;                 /* allow fused multiply-add */
	bool vector_math;              /* vmath.c for math builtins on vectors */
	bool runtime_kernels;          /* call libtxrt's prebuilt micro-kernels */
	/* the instruction sets the module is compiled for (LLVM's names,
	 * comma-separated), which every entry point asks the CPU for first
	 * (txrt_cpu_require); NULL: no check */
	const char *isa;
	/* the instruction sets the target CPU has (as isa, also where the
	 * module does not check them: the JIT's), NULL off x86-64; set
	 * through cg_set_features before cg_module */
	const char *features;
	unsigned dot_errors;           /* intrin_dot.c: kinds reported missing */
	/* alias scopes: one per buffer of the kernel */
	Buffer **scoped; LLVMMetadataRef *scopes; int nscoped;
	LLVMMetadataRef scope_domain;
	/* -g */
	LLVMDIBuilderRef dib;
	LLVMMetadataRef di_file, di_cu;
	uint32_t di_file_id;
	Loc cur_loc;
	/* a target built on this backend (target/cuda): its hooks, or NULL */
	const struct CgHooks *hooks;
	void *hook_ctx;
	/* cg_dlpack.c: the tensors' device, 0 (kDLCPU) or 2 (kDLCUDA: the cuda
	 * target's host code, which also takes kDLCUDAManaged, and kDLCPU while
	 * libtxrt emulates the GPU on host memory) */
	int dlpack_device;
	/* the i64 values of the IR as i32 (target/cuda's 32-bit kernels, whose
	 * entry condition says they fit): the index type, cg_index_type */
	bool index32;
} Cg;

/* What a target built on this backend changes (target/cuda: GPU kernels
 * for NVPTX and for libtxrt's emulator, and their host code).  Every
 * hook may be NULL; one that returns NULL or false leaves the default. */
typedef struct CgHooks {
	/* an intrinsic call (CALL_INTRINSIC) the CPU backend does not know */
	LLVMValueRef (*intrinsic)(Cg *cg, IrExpr *e);
	/* a math builtin, its arguments already emitted */
	LLVMValueRef (*builtin)(Cg *cg, IrExpr *e, LLVMValueRef *args);
	/* an allocation, its body included */
	bool (*allocate)(Cg *cg, IrStmt *s);
	/* before a scalar access of element off (cg_index_type) of b; active: an i1,
	 * or NULL when it always happens */
	void (*access)(Cg *cg, Buffer *b, LLVMValueRef base, LLVMValueRef off,
	    LLVMValueRef active, bool write);
	/* a constant tensor b of the entry point, whose bytes are the host
	 * global `host`: the pointer its kernels read instead */
	LLVMValueRef (*constant)(Cg *cg, Buffer *b, LLVMValueRef host);
	/* the alignment in bytes a scalar access of b at idx is known to have
	 * (0: its element's), which lets LLVM merge neighbouring accesses
	 * into a vector one */
	unsigned (*align)(Cg *cg, Buffer *b, IrExpr **idx, int nidx);
} CgHooks;

/* ---- cg_func.c ---------------------------------------------------------- */
/* A wrapper that runs before an entry point's check of the CPU (the
 * packed and DLPack ones): compiled for x86-64's baseline when the module
 * checks (cg->isa), so that it cannot use what the check is about. */
void cg_baseline(Cg *cg, LLVMValueRef fn);
/* Creates an empty module for funcs; false after diagnostics. */
bool cg_module(Cg *cg, LLVMContextRef ctx, const char *name, IrFunc **funcs,
    int n, LLVMTargetDataRef td, const char *triple, bool debug, bool contract,
    bool runtime_kernels, bool vector_math, const char *isa);
/* The entry points of funcs in cg's module (cg->b set): as cg_module
 * makes them, with cg's hooks. */
void cg_entries(Cg *cg, IrFunc **funcs, int n);
/* The instruction sets (LLVM's names, comma-separated) the next
 * cg_module of this thread compiles for: Cg.features.  Not copied. */
void cg_set_features(const char *list);
/* As cg_module with a target's hooks (hook_ctx for them), no -g. */
bool cg_module_hooked(Cg *cg, LLVMContextRef ctx, const char *name, IrFunc **funcs,
    int n, LLVMTargetDataRef td, const char *triple, bool contract,
    const CgHooks *hooks, void *hook_ctx);
/* The ABI type of a size or scalar parameter (f16 as i16, bool as i8) and
 * the value of one received with it. */
LLVMTypeRef cg_abi_type(Cg *cg, IrType t);
LLVMValueRef cg_from_abi(Cg *cg, IrType t, LLVMValueRef v);
/* The string attribute of an entry function with no tensor access and no
 * micro-kernel call of its own (its work is in parallel closures; its
 * loops, if any, only call them): llvm_emit.c compiles it without
 * optimising its code. */
#define CG_DISPATCH_ONLY "txc-dispatch-only"
/* Adds `int NAME__packed(void **args)` calling NAME with *args[i] (JIT). */
void cg_packed_wrapper(Cg *cg, IrFunc *f);
void cg_fn_begin(Cg *cg, CgFn *fn, LLVMValueRef llfn);
void cg_fn_end(Cg *cg);
/* When cond holds: sets the error message (unless msg is NULL) and leaves
 * through the failure exit with code rc (an i32); continues in a fresh
 * block. */
void cg_fail_if(Cg *cg, LLVMValueRef cond, LLVMValueRef rc, const char *msg);
/* The same with txrt_set_error(fmt, args...): values in the message. */
void cg_fail_if_fmt(Cg *cg, LLVMValueRef cond, LLVMValueRef rc, const char *fmt,
    LLVMValueRef *args, int nargs);
/* An i1: whether a tensor argument has no elements (an extent is 0), so
 * that a NULL pointer for it is accepted (the entry points, DLPack). */
LLVMValueRef cg_no_elements(Cg *cg, Buffer *b);
/* Calls txrt_set_error("%s", msg). */
void cg_set_error(Cg *cg, const char *msg);
LLVMValueRef cg_runtime(Cg *cg, const char *name, LLVMTypeRef *fty);
LLVMValueRef cg_entry_alloca(Cg *cg, LLVMTypeRef t, unsigned align, const char *name);
/* A private constant (a string, a table) initialised with init; a string's. */
LLVMValueRef cg_private_const(Cg *cg, LLVMValueRef init, const char *name);
LLVMValueRef cg_cstring(Cg *cg, const char *s);
/* An enum attribute (noalias, readonly...) on fn's parameter idx (0: the
 * function). */
void cg_attr(Cg *cg, LLVMValueRef fn, unsigned idx, const char *name);

/* scope of names */
void cg_bind_var(Cg *cg, Var *v, LLVMValueRef value);
void cg_bind_buf(Cg *cg, Buffer *b, LLVMValueRef ptr);
LLVMValueRef cg_lookup_var(Cg *cg, Var *v);
LLVMValueRef cg_lookup_buf(Cg *cg, Buffer *b);
int cg_scope_mark(Cg *cg);
void cg_scope_pop(Cg *cg, int mark);

/* ---- cg_stmt.c ---------------------------------------------------------- */
void cg_stmt(Cg *cg, IrStmt *s);
/* An allocation on the heap through libtxrt (alloc_fn returns NULL on
 * failure, which fails the function; free_fn frees it at the end of its
 * body and on the failure exit). */
void cg_alloc_heap(Cg *cg, IrStmt *s, const char *alloc_fn, const char *free_fn);
/* A counted loop [min, min + extent) whose body is emitted by fn. */
typedef void (*CgLoopBody)(Cg *cg, LLVMValueRef i, void *arg);
void cg_loop(Cg *cg, LLVMValueRef min, LLVMValueRef end, const char *name,
    CgLoopBody body, void *arg);

/* ---- cg_par.c ------------------------------------------------------------ */
void cg_parallel_for(Cg *cg, IrStmt *loop);

/* ---- cg_expr.c ---------------------------------------------------------- */
LLVMValueRef cg_expr(Cg *cg, IrExpr *e);
LLVMTypeRef cg_type(Cg *cg, IrType t);        /* registers: bool is i1 */
LLVMTypeRef cg_mem_type(Cg *cg, IrType t);    /* memory: bool is i8 */
LLVMTypeRef cg_elem_mem_type(Cg *cg, ScalarType t);
LLVMValueRef cg_const_int(Cg *cg, IrType t, int64_t v);
/* An index (any integer type, 1 or `lanes` lanes) as i64 (vector). */
LLVMValueRef cg_index(Cg *cg, IrExpr *e, int lanes);
/* The type of an index: i64, or i32 under Cg.index32. */
LLVMTypeRef cg_index_type(Cg *cg);
LLVMValueRef cg_broadcast(Cg *cg, LLVMValueRef v, int lanes);
LLVMValueRef cg_call_intrinsic(Cg *cg, const char *name, LLVMTypeRef *over,
    int nover, LLVMValueRef *args, int nargs);
/* Whether evaluating e may touch memory (a load), so a select must not
 * evaluate both sides unconditionally. */
bool cg_has_load(IrExpr *e);

/* ---- intrin_cpu.c: tensorize intrinsics (CALL_INTRINSIC) as vector code - */
LLVMValueRef intrin_cpu_emit(Cg *cg, IrExpr *e);
/* Defines libtxrt's prebuilt micro-kernels (external, named
 * CG_RUNTIME_KERNEL_PREFIX "fma_outer_...") in cg's module. */
void intrin_cpu_runtime_kernels(Cg *cg);

/* ---- intrin_dot.c: the i8 and bf16 micro-kernels -------------------------- */
/* Emits the tensorize call e if its emitter is one of intrin_dot.c's
 * (i8_madd, i8_madd_a16, i8_vnni, i8_vnni_zmm, bf16_widen, bf16_dp_zmm); false if
 * not. */
bool intrin_dot_emit(Cg *cg, IrExpr *e);
/* micro-kernel functions are named CG_KERNEL_PREFIX "NAME...";
 * llvm_emit.c gives them their own pass pipeline */
#define CG_KERNEL_PREFIX "txc."
#define CG_RUNTIME_KERNEL_PREFIX "txrt_"

/* ---- intrin_amx.c: the AMX micro-kernels (libtxrt's) ----------------------- */
/* Emits the tensorize call e if its emitter is "i8_amx" or "bf16_amx"
 * (a call of libtxrt's kernel); false if not. */
bool intrin_amx_emit(Cg *cg, IrExpr *e);

/* ---- intrin.c: what intrin_cpu.c's and intrin_dot.c's micro-kernels share */
/* One-line builders: a GEP of one index, a product, i64 and i32
 * constants, a block appended to the function being built. */
LLVMValueRef intrin_gep(Cg *cg, LLVMTypeRef t, LLVMValueRef p, LLVMValueRef off);
LLVMValueRef intrin_mul(Cg *cg, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef intrin_i64(Cg *cg, int64_t v);
LLVMValueRef intrin_i32(Cg *cg, int64_t v);
LLVMBasicBlockRef intrin_block(Cg *cg, const char *name);
/* A call with fma_outer's arguments (lower/ir.h) whose block MR x NR
 * (*mr, *nr) is constant, positive and NR a multiple of lanes (false if
 * not); cst: the strides csi, asi, ask, bsk where constant, else -1. */
bool intrin_decode(IrExpr *e, int lanes, int64_t *mr, int64_t *nr, int64_t *cst);
/* Appends the constant strides of cst to a kernel's name: SEP + tag
 * (c, i, k, b) + value each, e.g. ".i1.k6.b16". */
void intrin_name_strides(char *name, size_t size, char sep, const int64_t *cst);
/* The kernel NAME, declared once: void NAME(c, csi, a, asi, ask, b, bsk,
 * K, mr, nr, first), internal or not, with the function attributes attrs
 * (NULL-terminated); 16 lanes: its 512-bit vectors kept whole. */
LLVMValueRef intrin_decl(Cg *cg, const char *name, bool internal, int lanes,
    const char *const *attrs, LLVMTypeRef *fty);
/* Likewise; with taps (a kernel summing over taps, lower/ir.h) six
 * more: R, asr, bsr, S, ass, bss (the outer level first; a call with
 * one tap passes S = 1). */
enum { INTRIN_PARAMS = 11, INTRIN_TAPS_PARAMS = INTRIN_PARAMS + 3 * FMA_MAX_TAPS };
LLVMValueRef intrin_decl_taps(Cg *cg, const char *name, bool internal, int lanes,
    const char *const *attrs, LLVMTypeRef *fty, bool taps);
/* Where the builder was before intrin_begin. */
typedef struct {
	LLVMBasicBlockRef block;
	LLVMMetadataRef loc;
} IntrinSaved;
/* Moves the builder into the new block "entry" of fn (no debug
 * location: the kernel has no subprogram), saving where it was in s; p
 * gets fn's 11 parameters, the strides constant in cst replaced by their
 * values.  intrin_end moves it back. */
void intrin_begin(Cg *cg, IntrinSaved *s, LLVMValueRef fn, const int64_t *cst, LLVMValueRef *p);
void intrin_end(Cg *cg, const IntrinSaved *s);
/* The address of a scalar load (a tile's first element: a flat index
 * after flatten.c). */
LLVMValueRef intrin_address(Cg *cg, IrExpr *ld);
/* Whether the comma-separated feature list names name ("avx512vbmi",
 * "amx-tile"), whole. */
bool intrin_has_feature(const char *list, const char *name);
/* Calls fn (of type fty) with the arguments of e, each tensor's the
 * address of its tile. */
void intrin_call(Cg *cg, IrExpr *e, LLVMValueRef fn, LLVMTypeRef fty);
/* A vector load (store) of type vt at p with the alignment given; with a
 * lane mask, llvm.masked.load (zero in the lanes off) and
 * llvm.masked.store, which touch no element outside the mask. */
LLVMValueRef intrin_vload(Cg *cg, LLVMTypeRef vt, LLVMValueRef p, unsigned align,
    LLVMValueRef mask);
void intrin_vstore(Cg *cg, LLVMValueRef v, LLVMValueRef p, unsigned align, LLVMValueRef mask);

/* ---- intrin_loop.c: the micro-kernels' loops ------------------------------ */
/* Marks a loop latch so that LLVM neither unrolls nor vectorizes it again
 * (a kernel's loops are unrolled as it wants them already). */
void intrin_no_unroll(Cg *cg, LLVMValueRef br);
/* A counted loop whose n accumulators are phis: intrin_loop_open builds
 * its head with the counter iv (from `from`) and the phis (the values in
 * acc on entry), leaving the builder there for the test, which branches
 * to body or exit; intrin_loop_close ends the body (the counter's next
 * value, the accumulators' in cur, the latch marked intrin_no_unroll)
 * and leaves the builder at the exit with the phis in acc. */
enum { INTRIN_LOOP_ACC = 264 };   /* intrin_dot.c's 32 x 8 sums and 8 of b */
typedef struct {
	LLVMBasicBlockRef pre, head, body, exit;
	LLVMValueRef iv, phis[INTRIN_LOOP_ACC];
	int n;
} IntrinLoop;
void intrin_loop_open(Cg *cg, IntrinLoop *l, const char *name, LLVMValueRef from,
    const LLVMValueRef *acc, int n);
void intrin_loop_close(Cg *cg, IntrinLoop *l, LLVMValueRef next, LLVMValueRef *cur,
    LLVMValueRef *acc);
/* The taps of a kernel with them (lower/ir.h; intrin_decl_taps's
 * parameters), outermost first: the extent and a's and b's strides of
 * each, in elements of elem; ntaps 0 for a kernel without. */
typedef struct {
	int ntaps;
	LLVMTypeRef elem;
	LLVMTypeRef aelem;      /* a's element where it is not elem (NULL: elem) */
	LLVMValueRef tap[FMA_MAX_TAPS], as[FMA_MAX_TAPS], bs[FMA_MAX_TAPS];
} IntrinTaps;
/* t from a kernel's parameters p (intrin_begin's) */
void intrin_taps_params(IntrinTaps *t, LLVMTypeRef elem, bool taps, const LLVMValueRef *p);
/* body(cg, ctx, a, b, acc) inside the tap loops of t (once where t has
 * none), a and b moved by each tap, the n accumulators in acc phis of
 * every loop: acc holds their values on entry and on exit. */
typedef void IntrinTapBody(Cg *cg, void *ctx, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *acc);
void intrin_taps(Cg *cg, const IntrinTaps *t, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *acc,
    int n, IntrinTapBody *body, void *ctx);

/* ---- vmath.c: exp, log, tanh, sigmoid, erf, pow of f32 (f16) vectors -- */
/* The builtin (BI_...) of type t on args (already emitted; a scalar
 * argument is broadcast) as inline vector code, or NULL where libm and
 * LLVM's intrinsics stay: scalars, f64, the other builtins. */
LLVMValueRef vmath_builtin(Cg *cg, int builtin, IrType t, LLVMValueRef *args);
/* The same for the vector llvm.exp, llvm.log and llvm.pow calls in mod
 * (LLVM's loop vectorizer makes them of scalar loops), replaced. */
void vmath_lower_intrinsics(LLVMModuleRef mod, bool contract);

/* ---- cg_mem.c ------------------------------------------------------------ */
LLVMValueRef cg_load(Cg *cg, IrExpr *e);
void cg_store(Cg *cg, IrStmt *s);
int cg_store_transposed(Cg *cg, IrStmt **s, int n);   /* a square tile's transposing stores */
/* The buffer's element count as i64 (product of extents). */
LLVMValueRef cg_buffer_elems(Cg *cg, Buffer *b);
void cg_alias_scopes(Cg *cg, IrFunc *f);

/* ---- cg_dlpack.c: int NAME_dlpack(sizes..., scalars..., DLTensor *...) -- */
void cg_dlpack_entry(Cg *cg, IrFunc *f);

/* ---- llvm_emit.c (also for llvm_jit.c) ------------------------------------ */
/* The target machine o asks for, and its normalised triple (free with
 * LLVMDisposeMessage); NULL after a diagnostic. */
LLVMTargetMachineRef llvm_emit_machine(const LlvmOptions *o, char **triple);
/* The optimised module of funcs (with NAME__packed wrappers if packed);
 * NULL after a diagnostic. */
LLVMModuleRef llvm_emit_module(LLVMContextRef ctx, IrFunc **funcs, int n,
    const LlvmOptions *o, LLVMTargetMachineRef tm, const char *triple, bool packed);

/* The IR pass pipelines of llvm_emit.c on mod (LLVM's error, or NULL). */
LLVMErrorRef llvm_optimise(LLVMModuleRef mod, const LlvmOptions *o, LLVMTargetMachineRef tm);

/* Checks mod, then optimises and writes it as k to out (as llvm_emit does
 * with its own module); false after a diagnostic. */
bool llvm_write_module(LLVMModuleRef mod, LLVMTargetMachineRef tm, const LlvmOptions *o,
    EmitKind k, FILE *out);

/* ---- llvm_features.c ------------------------------------------------------ */
/* Whether a --features list has LLVM's form ("+avx2,-fma"; else a
 * diagnostic naming triple). */
bool llvm_features_check(const char *f, const char *triple);
/* The list LLVM is given for cpu: f, or f with what it needs added
 * (+avx512vl beside an added AVX-512 set); NULL after a diagnostic. */
const char *llvm_features_complete(const char *f, const char *cpu);

/* ---- llvm_split.c --------------------------------------------------------- */
/* The object of mod (not yet optimised), its functions compiled in parts on
 * several threads (file comment): 1 with *obj set, 0 when it is not
 * split (nothing done: compile it whole), -1 after a diagnostic. */
int llvm_split_emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, const LlvmOptions *o,
    LLVMMemoryBufferRef *obj);

/* ---- cg_debug.c ---------------------------------------------------------- */
void cg_debug_module(Cg *cg, IrFunc **funcs, int n);
LLVMMetadataRef cg_debug_subprogram(Cg *cg, const char *name, Loc loc, LLVMValueRef fn);
void cg_debug_loc(Cg *cg, Loc loc);
void cg_debug_finish(Cg *cg);

#endif
