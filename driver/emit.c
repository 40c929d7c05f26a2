/* emit.c: the cpu target's native outputs through target/llvm.
 *
 * txc FILE.tx [-o x.o] [-S | --emit=obj|asm|llvm|bc] [--target=TRIPLE]
 * [--cpu=NAME] [--features=LIST] [-g] [-O0..3] [--local-intrinsics]
 * [--no-vector-math]: the
 * driver's options become LlvmOptions, and the output goes through
 * output.c so that a failure leaves no file behind.  txc
 * --runtime-kernels [-S] -o FILE writes libtxrt's prebuilt micro-kernels
 * the same way.
 */
#include <string.h>

#include "driver/driver.h"
#include "target/target.h"

static EmitKind
kind(const Options *o)
{
	switch (o->emit) {
	case OUT_ASM: return EMIT_ASM;
	case OUT_LLVM: return EMIT_LLVM;
	case OUT_BC: return EMIT_BC;
	default: return EMIT_OBJ;
	}
}

static LlvmOptions
llvm_options(const Options *o)
{
	LlvmOptions lo = {
		.triple = o->triple,
		.cpu = o->cpu,
		.features = o->features,
		.opt_level = o->opt_level,
		.debug = o->debug,
		.dlpack = o->dlpack,
		.local_intrinsics = o->local_intrinsics,
		.no_vector_math = o->no_vector_math,
		.codegen_threads = o->codegen_threads,
		.time_passes = o->time_passes,
	};
	return lo;
}

bool
emit_llvm(IrFunc **funcs, int n, const Options *o, const char *out)
{
	LlvmOptions lo = llvm_options(o);
	EmitKind k = kind(o);
	FILE *fp = output_open(out, k == EMIT_OBJ || k == EMIT_BC);

	if (!fp)
		return false;
	if (!llvm_emit(funcs, n, &lo, k, fp))
		return false;   /* main removes the temporary */
	return output_commit(fp);
}

bool
emit_runtime_kernels(const Options *o, const char *out)
{
	LlvmOptions lo = llvm_options(o);
	EmitKind k = kind(o);
	FILE *fp;

	if (o->emit != OUT_OBJ && o->emit != OUT_ASM && o->emit != OUT_LLVM &&
	    o->emit != OUT_BC) {
		diag_error(loc_none, "--runtime-kernels writes an object, assembly, LLVM IR or "
		    "bitcode (--emit=obj, asm, llvm or bc)");
		return false;
	}
	if (o->triple || o->cpu || o->features) {
		diag_error(loc_none, "--runtime-kernels builds for x86-64-v3 (AVX2, FMA), the "
		    "level objects check for before they call them: drop --target, --cpu "
		    "and --features");
		return false;
	}
	fp = output_open(out, k == EMIT_OBJ || k == EMIT_BC);
	if (!fp)
		return false;
	if (!llvm_emit_runtime_kernels(&lo, k, fp))
		return false;
	return output_commit(fp);
}

bool
emit_cuda(IrFunc **funcs, int n, const Options *o, const char *out)
{
	LlvmOptions lo = llvm_options(o);
	CudaOut what = o->emit == OUT_PTX ? CUDA_OUT_PTX : o->emit == OUT_KERNELS ? CUDA_OUT_LOOPS : o->emit == OUT_CUDA ? CUDA_OUT_C : o->emit == OUT_ASM ? CUDA_OUT_ASM :
	    o->emit == OUT_LLVM ? CUDA_OUT_LLVM : o->emit == OUT_BC ? CUDA_OUT_BC : CUDA_OUT_OBJ;
	bool text = what == CUDA_OUT_PTX || what == CUDA_OUT_LOOPS || what == CUDA_OUT_C || what == CUDA_OUT_ASM || what == CUDA_OUT_LLVM;
	FILE *fp = output_open(out, !text);

	if (!fp)
		return false;
	if (!cuda_emit(funcs, n, &lo, o->cuda_arch, what, o->input, fp))
		return false;
	return output_commit(fp);
}

/* --target=vta: the host object (or assembly, LLVM IR), the streams as
 * assembly, or the raw streams in the directory out (target/vta). */
bool
emit_vta(IrFunc **funcs, int n, const Options *o, const char *out)
{
	LlvmOptions lo = llvm_options(o);
	if (o->emit == OUT_VTA_BIN)
		return vta_emit(funcs, n, &lo, EMIT_OBJ, VTA_OUT_BIN, NULL, out);
	bool text = o->emit != OUT_OBJ && o->emit != OUT_BC;
	FILE *fp = output_open(out, !text);
	if (!fp)
		return false;
	if (!vta_emit(funcs, n, &lo, kind(o), o->emit == OUT_VTA_ASM ? VTA_OUT_ASM :
	    VTA_OUT_NATIVE, fp, NULL))
		return false;
	return output_commit(fp);
}
