/* vta_host.c: the host object of a --target=vta kernel.
 *
 * The entry points are the kernels' host functions (vta_region.c) through
 * the LLVM backend: the size checks, the packing stages and the DRAM
 * buffers as for the CPU, and at each VTA_RUN(k) a call
 *     txrt_vta_run(insns_k, ninsn_k, regions, nregions, NULL, NULL)
 * where insns_k is the stream's bytes and regions binds each of its DRAM
 * regions (physical address, size) to the host memory that backs it: the
 * micro-op array (a constant beside the stream), the caller's tensors and
 * the host function's buffers.  libtxrt runs the stream on its simulator,
 * or on a device registered with txrt_vta_set_device; a failure returns
 * its code with libtxrt's message.
 */
#include <string.h>

#include "target/llvm/cg.h"
#include "target/vta/vta.h"

typedef struct {
	VtaFunc **vf;
	int n;
} Host;

static VtaFunc *
func_of(Host *H, IrFunc *f)
{
	for (int i = 0; i < H->n; i++)
		if (H->vf[i]->host == f)
			return H->vf[i];
	ICE("no VTA function for '%s'", f->name);
}

static LLVMValueRef
host_run(Cg *cg, IrExpr *e)
{
	Host *H = cg->hook_ctx;
	if (e->call.ck != CALL_INTRINSIC || strcmp(e->call.name, VTA_RUN) != 0)
		return NULL;
	VtaFunc *vf = func_of(H, cg->ir);
	int64_t k;
	if (!ir_is_const(e->call.args[0], &k) || k < 0 || k >= vf->ns)
		ICE("a run of an unknown VTA stream");
	VtaStream *s = vf->s[k];
	LLVMContextRef ctx = cg->ctx;
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx),
	    i64 = LLVMInt64TypeInContext(ctx), ptr = LLVMPointerTypeInContext(ctx, 0);
	LLVMValueRef *bytes = arena_alloc(ir_arena, ((size_t)s->ninsn * 16 + 1) * sizeof *bytes);
	for (size_t i = 0; i < (size_t)s->ninsn * 16; i++)
		bytes[i] = LLVMConstInt(i8, s->bin[i], 0);
	LLVMValueRef insns = cg_private_const(cg, LLVMConstArray2(i8, bytes,
	    (uint64_t)s->ninsn * 16), ".vta.insns");
	LLVMValueRef *words = arena_alloc(ir_arena, ((size_t)s->nuops + 1) * sizeof *words);
	for (int i = 0; i < s->nuops; i++)
		words[i] = LLVMConstInt(i32, s->uops[i], 0);
	LLVMValueRef uops = cg_private_const(cg, LLVMConstArray2(i32, words, (uint64_t)s->nuops),
	    ".vta.uops");
	/* the regions: { i64 phys, i64 bytes, ptr host, ptr name } */
	LLVMTypeRef rt = LLVMStructTypeInContext(ctx, (LLVMTypeRef[]){ i64, i64, ptr, ptr }, 4, 0);
	LLVMValueRef arr = cg_entry_alloca(cg, LLVMArrayType(rt, (unsigned)s->ndram), 8,
	    "vta.regions");
	for (int i = 0; i < s->ndram; i++) {
		VtaDram *d = &s->dram[i];
		LLVMValueRef host = d->buf ? cg_lookup_buf(cg, d->buf) : uops;
		if (d->zeros)
			host = cg_private_const(cg, LLVMConstNull(LLVMArrayType2(i8, d->bytes)),
			    ".vta.zeros");
		LLVMValueRef f[4] = {
			LLVMConstInt(i64, d->phys, 0), LLVMConstInt(i64, d->bytes, 0), host,
			cg_cstring(cg, d->buf ? d->buf->name : d->zeros ? "zeros" : "micro-ops"),
		};
		for (unsigned j = 0; j < 4; j++) {
			LLVMValueRef at[3] = { LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, (unsigned)i, 0),
			    LLVMConstInt(i32, j, 0) };
			LLVMBuildStore(cg->b, f[j], LLVMBuildGEP2(cg->b, LLVMArrayType(rt,
			    (unsigned)s->ndram), arr, at, 3, ""));
		}
	}
	LLVMValueRef args[6] = {
		insns, LLVMConstInt(i64, (unsigned long long)s->ninsn, 0), arr,
		LLVMConstInt(i32, (unsigned)s->ndram, 0), LLVMConstNull(ptr), LLVMConstNull(ptr),
	};
	LLVMTypeRef fty;
	LLVMValueRef fn = cg_runtime(cg, "txrt_vta_run", &fty);
	LLVMValueRef rc = LLVMBuildCall2(cg->b, fty, fn, args, 6, "rc");
	/* libtxrt has set the message */
	cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstInt(i32, 0, 0), ""), rc, NULL);
	return LLVMConstInt(i32, 0, 0);
}

static const CgHooks host_hooks = {
	.intrinsic = host_run,
};

bool
vta_host_emit(VtaFunc **vf, int n, const LlvmOptions *o, EmitKind kind, bool packed,
    FILE *out)
{
	char *triple = NULL;
	LLVMTargetMachineRef tm = llvm_emit_machine(o, &triple);
	if (!tm)
		return false;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	Host H = { vf, n };
	IrFunc **hosts = arena_alloc(ir_arena, (size_t)(n + 1) * sizeof *hosts);
	for (int i = 0; i < n; i++)
		hosts[i] = vf[i]->host;
	Cg cg;
	int errors = diag_errors();
	bool ok = cg_module(&cg, ctx, "txc", NULL, 0, td, triple, false, !o->no_contract, false,
	    !o->no_vector_math, NULL);
	if (ok) {
		cg.hooks = &host_hooks;
		cg.hook_ctx = &H;
		cg.b = LLVMCreateBuilderInContext(ctx);
		cg_entries(&cg, hosts, n);
		for (int i = 0; packed && i < n; i++)
			cg_packed_wrapper(&cg, hosts[i]);
		for (int i = 0; o->dlpack && i < n; i++)
			cg_dlpack_entry(&cg, hosts[i]);
		LLVMDisposeBuilder(cg.b);
		cg.b = NULL;
	}
	ok = ok && diag_errors() == errors;
	if (ok)
		ok = llvm_write_module(cg.mod, tm, o, kind, out);
	LLVMDisposeModule(cg.mod);
	LLVMDisposeTargetData(td);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return ok;
}
