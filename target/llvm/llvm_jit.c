/* llvm_jit.c: in-memory compilation with ORC's LLJIT (txc bench, tests).
 *
 * The module is the one llvm_emit_module builds for objects, plus the
 * NAME__packed wrappers that let a caller pass any signature as an array.
 * libtxrt's functions resolve to the copies linked into this process
 * (defined as absolute symbols, since an executable exports nothing by
 * default); libm and libc functions (expf, memset...) resolve through a
 * search of the process's shared libraries.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "rt/txrt.h"
#include "rt/vta.h"
#include "target/llvm/cg.h"

struct LlvmJit {
	LLVMOrcLLJITRef jit;
};

static bool
jit_error(LLVMErrorRef err, const char *what)
{
	char *m;

	if (!err)
		return false;
	m = LLVMGetErrorMessage(err);
	diag_error(loc_none, "JIT %s: %s", what, m);
	LLVMDisposeErrorMessage(m);
	return true;
}

/* Makes libtxrt's functions visible to JIT-compiled code. */
static bool
define_runtime(LLVMOrcLLJITRef jit, LLVMOrcJITDylibRef jd)
{
	static const struct {
		const char *name;
		void (*addr)(void);
	} syms[] = {
		{ "txrt_parallel_for", (void (*)(void))txrt_parallel_for },
		{ "txrt_alloc", (void (*)(void))txrt_alloc },
		{ "txrt_free", (void (*)(void))txrt_free },
		{ "txrt_set_error", (void (*)(void))txrt_set_error },
		{ "txrt_last_error", (void (*)(void))txrt_last_error },
		/* --target=cuda (target/cuda/cuda_host.c) */
		{ "txrt_cuda_launch", (void (*)(void))txrt_cuda_launch },
		{ "txrt_cuda_malloc", (void (*)(void))txrt_cuda_malloc },
		{ "txrt_cuda_free", (void (*)(void))txrt_cuda_free },
		{ "txrt_cuda_mode", (void (*)(void))txrt_cuda_mode },
		{ "txrt_cuda_constant", (void (*)(void))txrt_cuda_constant },
		{ "txrt_emu_id", (void (*)(void))txrt_emu_id },
		{ "txrt_emu_barrier", (void (*)(void))txrt_emu_barrier },
		{ "txrt_emu_shared", (void (*)(void))txrt_emu_shared },
		{ "txrt_emu_access", (void (*)(void))txrt_emu_access },
		{ "txrt_cuda_tensor_map", (void (*)(void))txrt_cuda_tensor_map },
		{ "txrt_emu_tma_load", (void (*)(void))txrt_emu_tma_load },
		{ "txrt_emu_tma_box", (void (*)(void))txrt_emu_tma_box },
		{ "txrt_emu_mbar_expect_tx", (void (*)(void))txrt_emu_mbar_expect_tx },
		{ "txrt_emu_mbar_init", (void (*)(void))txrt_emu_mbar_init },
		{ "txrt_emu_mbar_wait", (void (*)(void))txrt_emu_mbar_wait },
		{ "txrt_emu_mbar_arrive", (void (*)(void))txrt_emu_mbar_arrive },
		{ "txrt_emu_mbar_arrive_warp", (void (*)(void))txrt_emu_mbar_arrive_warp },
		{ "txrt_emu_barrier_n", (void (*)(void))txrt_emu_barrier_n },
		{ "txrt_emu_copy_async", (void (*)(void))txrt_emu_copy_async },
		{ "txrt_emu_async_commit", (void (*)(void))txrt_emu_async_commit },
		{ "txrt_emu_async_wait", (void (*)(void))txrt_emu_async_wait },
		{ "txrt_emu_wgmma", (void (*)(void))txrt_emu_wgmma },
		{ "txrt_emu_wgmma_sync", (void (*)(void))txrt_emu_wgmma_sync },
		{ "txrt_emu_wgmma_wait", (void (*)(void))txrt_emu_wgmma_wait },
		/* the AMX micro-kernels (target/llvm/intrin_amx.c) */
		{ "txrt_amx_i8", (void (*)(void))txrt_amx_i8 },
		{ "txrt_amx_bf16", (void (*)(void))txrt_amx_bf16 },
		{ "txrt_amx_i8_emulated", (void (*)(void))txrt_amx_i8_emulated },
		{ "txrt_amx_bf16_emulated", (void (*)(void))txrt_amx_bf16_emulated },
		/* --target=vta (target/vta/vta_host.c) */
		{ "txrt_vta_run", (void (*)(void))txrt_vta_run },
	};
	enum { N = sizeof syms / sizeof *syms };
	LLVMOrcCSymbolMapPair pairs[N];

	for (int i = 0; i < N; i++) {
		pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, syms[i].name);
		pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].addr;
		pairs[i].Sym.Flags.GenericFlags =
		    LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
		pairs[i].Sym.Flags.TargetFlags = 0;
	}
	return !jit_error(LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, N)),
	    "cannot define the run-time library");
}

/* An LLJIT for tm (which it takes) whose main library resolves libm and
 * the rest of the process, and libtxrt; NULL after a diagnostic. */
static LLVMOrcLLJITRef
start(LLVMTargetMachineRef tm, LLVMOrcJITDylibRef *jd)
{
	LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITRef jit;
	LLVMOrcDefinitionGeneratorRef gen;

	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder,
	    LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
	if (jit_error(LLVMOrcCreateLLJIT(&jit, builder), "cannot start"))
		return NULL;
	*jd = LLVMOrcLLJITGetMainJITDylib(jit);
	if (jit_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen,
	    LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL), "cannot search the process")) {
		LLVMOrcDisposeLLJIT(jit);
		return NULL;
	}
	LLVMOrcJITDylibAddGenerator(*jd, gen);
	if (!define_runtime(jit, *jd)) {
		LLVMOrcDisposeLLJIT(jit);
		return NULL;
	}
	return jit;
}

/* A handle with its own free. */
static LlvmJit *
handle(LLVMOrcLLJITRef jit)
{
	LlvmJit *j = calloc(1, sizeof *j);
	if (!j)
		diag_fatal("out of memory");
	j->jit = jit;
	return j;
}

LlvmJit *
llvm_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o)
{
	char *triple = NULL;
	LLVMTargetMachineRef tm;
	LLVMOrcThreadSafeContextRef tsc;
	LLVMModuleRef mod;
	LLVMOrcLLJITRef jit;
	LLVMOrcJITDylibRef jd;

	/* this process has no copy of libtxrt's prebuilt micro-kernels */
	LlvmOptions local = *o;
	local.local_intrinsics = true;
	o = &local;
	if (o->triple && *o->triple && strcmp(o->triple, llvm_host_triple())) {
		diag_error(loc_none, "the JIT runs only on the host ('%s', not '%s')",
		    llvm_host_triple(), o->triple);
		return NULL;
	}
	tm = llvm_emit_machine(o, &triple);
	if (!tm)
		return NULL;
	tsc = LLVMOrcCreateNewThreadSafeContext();
	mod = llvm_emit_module(LLVMOrcThreadSafeContextGetContext(tsc), funcs, n, o, tm,
	    triple, true);
	LLVMDisposeMessage(triple);
	if (!mod) {
		LLVMOrcDisposeThreadSafeContext(tsc);
		LLVMDisposeTargetMachine(tm);
		return NULL;
	}
	jit = start(tm, &jd);
	if (!jit) {
		LLVMDisposeModule(mod);
		LLVMOrcDisposeThreadSafeContext(tsc);
		return NULL;
	}
	if (jit_error(LLVMOrcLLJITAddLLVMIRModule(jit, jd,
	    LLVMOrcCreateNewThreadSafeModule(mod, tsc)), "cannot add the module")) {
		LLVMOrcDisposeThreadSafeContext(tsc);
		LLVMOrcDisposeLLJIT(jit);
		return NULL;
	}
	LLVMOrcDisposeThreadSafeContext(tsc);
	return handle(jit);
}

void *
llvm_jit_lookup(LlvmJit *j, const char *name)
{
	LLVMOrcExecutorAddress addr = 0;
	LLVMErrorRef err = LLVMOrcLLJITLookup(j->jit, &addr, name);

	if (err) {
		LLVMConsumeError(err);
		return NULL;
	}
	return (void *)(uintptr_t)addr;
}

void
llvm_jit_free(LlvmJit *j)
{
	if (j && j->jit) {
		LLVMOrcDisposeLLJIT(j->jit);
		j->jit = NULL;
	}
	free(j);
}

LlvmJit *
llvm_jit_load(const void *obj, size_t len, const LlvmOptions *o)
{
	char *triple = NULL;
	LLVMOrcJITDylibRef jd;
	LLVMTargetMachineRef tm = llvm_emit_machine(o, &triple);

	if (!tm)
		return NULL;
	LLVMDisposeMessage(triple);
	LLVMOrcLLJITRef jit = start(tm, &jd);
	if (!jit)
		return NULL;
	LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, len, "txc.o");
	if (jit_error(LLVMOrcLLJITAddObjectFile(jit, jd, mb), "cannot add the object")) {
		LLVMOrcDisposeLLJIT(jit);
		return NULL;
	}
	return handle(jit);
}

LlvmJit *
llvm_jit_emitted(LlvmObjectFn emit, void *ctx, const LlvmOptions *o)
{
	LlvmOptions ho = *o;
	ho.triple = NULL;     /* the host's, for the JIT */
	char *obj = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&obj, &len);
	if (!m)
		diag_fatal("out of memory");
	bool ok = emit(ctx, &ho, m);
	fclose(m);
	LlvmJit *j = ok ? llvm_jit_load(obj, len, &ho) : NULL;
	free(obj);
	return j;
}
