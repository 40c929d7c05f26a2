/* vta_target.c: the vta target's entry from the driver.
 *
 * Each kernel is split into host code and VTA streams (vta_region.c),
 * then written as what the driver asks: the host object (or its assembly
 * or LLVM IR), the streams as assembly (--emit=vta-asm), or the raw
 * streams with their manifests (--emit=vta-bin DIR).
 */
#include <stdio.h>

#include "target/vta/vta.h"

bool
vta_emit(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind kind, VtaOut what, FILE *out,
    const char *dir)
{
	VtaFunc **vf = arena_alloc(ir_arena, (size_t)(n + 1) * sizeof *vf);
	for (int i = 0; i < n; i++)
		if (!(vf[i] = vta_split(funcs[i])))
			return false;
	switch (what) {
	case VTA_OUT_ASM:
		return vta_emit_asm(out, vf, n);
	case VTA_OUT_BIN:
		return vta_emit_bin(dir, vf, n);
	default:
		return vta_host_emit(vf, n, o, kind, false, out);
	}
}

typedef struct {
	VtaFunc **vf;
	int n;
} HostJob;

static bool
host_object(void *ctx, const LlvmOptions *o, FILE *out)
{
	HostJob *h = ctx;
	return vta_host_emit(h->vf, h->n, o, EMIT_OBJ, true, out);
}

LlvmJit *
vta_jit_compile(IrFunc **funcs, int n, const LlvmOptions *o)
{
	VtaFunc **vf = arena_alloc(ir_arena, (size_t)(n + 1) * sizeof *vf);
	for (int i = 0; i < n; i++)
		if (!(vf[i] = vta_split(funcs[i])))
			return NULL;
	HostJob job = { vf, n };
	return llvm_jit_emitted(host_object, &job, o);
}
