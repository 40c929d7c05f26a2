/* cuda_target.c: --target=cuda, the passes in order.
 *
 *   gpu_split    kernels out of the block-loop nests     gpu_split.c
 *   gpu_spmd     one SPMD body per kernel, barriers      gpu_spmd.c
 *   gpu_fragment fragments as each lane's registers     gpu_fragment.c
 *   gpu_wgmma    wgmma operands checked, fence and wait  gpu_wgmma.c
 *   gpu_swizzle  swizzled shared buffers' accesses       gpu_swizzle.c
 *   gpu_shared   the shared arena, local buffers         gpu_shared.c
 *   gpu_index32  32-bit indices where the sizes allow    gpu_index32.c
 *   ptx          the kernels through NVPTX               cuda_ptx.c
 *   host         entry points, emulator kernels, module  cuda_host.c
 *
 * --print-loops stops before these (the loops with their GPU kinds);
 * --emit=kernels prints the host code and each kernel after them.
 */
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda.h"

static void
dump(FILE *fp, GpuFunc **gf, int n)
{
	for (int i = 0; i < n; i++) {
		ir_print_func(fp, gf[i]->host);
		for (int j = 0; j < gf[i]->nk; j++) {
			GpuKernel *k = gf[i]->k[j];
			fprintf(fp, "// kernel %s: grid (", k->name);
			for (int d = 0; d < 3; d++) {
				fprintf(fp, "%s", d ? ", " : "");
				ir_print_expr(fp, k->grid[d]);
			}
			fprintf(fp, "), block (");
			for (int d = 0; d < 3; d++) {
				fprintf(fp, "%s", d ? ", " : "");
				ir_print_expr(fp, k->block[d]);
			}
			fprintf(fp, "), shared bytes ");
			ir_print_expr(fp, k->shared_bytes);
			fprintf(fp, "%s\n", k->index32 ? ", 32-bit indices" : "");
			if (k->i32) {
				fprintf(fp, "// kernel %s (32-bit indices) instead where ", k->i32->name);
				ir_print_expr(fp, k->i32_if);
				fprintf(fp, "\n");
			}
			ir_print_func(fp, k->fn);
		}
	}
}

bool
cuda_emit(IrFunc **funcs, int n, const LlvmOptions *o, const char *arch, CudaOut what,
    const char *source_name, FILE *out)
{
	GpuFunc **gf = gpu_lower(funcs, n);
	if (!gf)
		return false;
	if (what == CUDA_OUT_LOOPS) {
		dump(out, gf, n);
		return true;
	}
	if (what == CUDA_OUT_C)
		return cuda_c_emit(out, gf, n, source_name);
	CudaOptions co = { arch, NULL };
	char *ptx = cuda_ptx(gf, n, o, &co);
	if (!ptx)
		return false;
	bool ok;
	if (what == CUDA_OUT_PTX) {
		ok = fputs(ptx, out) >= 0;
	} else {
		EmitKind k = what == CUDA_OUT_ASM ? EMIT_ASM : what == CUDA_OUT_LLVM ? EMIT_LLVM :
		    what == CUDA_OUT_BC ? EMIT_BC : EMIT_OBJ;
		ok = cuda_host_emit(gf, n, ptx, o, k, false, out);
	}
	free(ptx);
	return ok;
}

typedef struct {
	GpuFunc **gf;
	int n;
	const char *ptx;
} HostJob;

static bool
host_object(void *ctx, const LlvmOptions *o, FILE *out)
{
	HostJob *h = ctx;
	return cuda_host_emit(h->gf, h->n, h->ptx, o, EMIT_OBJ, true, out);
}

LlvmJit *
cuda_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o, const char *arch)
{
	GpuFunc **gf = gpu_lower(funcs, n);
	if (!gf)
		return NULL;
	CudaOptions co = { arch, NULL };
	char *ptx = cuda_ptx(gf, n, o, &co);
	if (!ptx)
		return NULL;
	HostJob job = { gf, n, ptx };
	LlvmJit *j = llvm_jit_emitted(host_object, &job, o);
	free(ptx);
	return j;
}
