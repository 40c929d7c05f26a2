/* intrin.c: what the CPU's micro-kernel emitters (intrin_cpu.c's f32
 * fma_outer, intrin_dot.c's i8 and bf16 kernels) share: the decoding of
 * the call (lower/ir.h's fma_outer arguments), the kernel's signature
 *     void NAME(c, csi, a, asi, ask, b, bsk, K, mr, nr, first)
 * (an f32 kernel with taps, ir.h, adds R, asr, bsr, S, ass, bss) and its
 * call, the builder moved into a kernel and back, and a few
 * one-line LLVM builders.
 */
#include <stdio.h>
#include <string.h>

#include "target/llvm/cg.h"

LLVMValueRef
intrin_gep(Cg *cg, LLVMTypeRef t, LLVMValueRef p, LLVMValueRef off)
{
	return LLVMBuildGEP2(cg->b, t, p, &off, 1, "");
}

LLVMValueRef
intrin_mul(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildMul(cg->b, a, b, "");
}

LLVMValueRef
intrin_i64(Cg *cg, int64_t v)
{
	return LLVMConstInt(LLVMInt64TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

LLVMValueRef
intrin_i32(Cg *cg, int64_t v)
{
	return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

LLVMBasicBlockRef
intrin_block(Cg *cg, const char *name)
{
	LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(cg->b));
	return LLVMAppendBasicBlockInContext(cg->ctx, fn, name);
}

bool
intrin_decode(IrExpr *e, int lanes, int64_t *mr, int64_t *nr, int64_t *cst)
{
	IrFmaArgs f;
	*mr = *nr = -1;
	if (!ir_fma_args(e, &f) || !ir_is_const(f.MR, mr) || !ir_is_const(f.NR, nr) || *mr <= 0 ||
	    *nr <= 0 || *nr % lanes != 0)
		return false;
	/* strides known here are built into the kernel (one per set of them):
	 * constant offsets address a and b without integer arithmetic */
	IrExpr *sx[4] = { f.csi, f.asi, f.ask, f.bsk };
	for (int i = 0; i < 4; i++)
		if (!ir_is_const(sx[i], &cst[i]) || cst[i] < 0 || cst[i] > (1 << 20))
			cst[i] = -1;
	return true;
}

void
intrin_name_strides(char *name, size_t size, char sep, const int64_t *cst)
{
	static const char tag[4] = { 'c', 'i', 'k', 'b' };
	size_t len = strlen(name);
	for (int i = 0; i < 4 && len < size; i++)
		if (cst[i] >= 0) {
			int n = snprintf(name + len, size - len, "%c%c%lld", sep, tag[i],
			    (long long)cst[i]);
			if (n < 0)
				return;
			len += (size_t)n;
		}
}

LLVMValueRef
intrin_decl(Cg *cg, const char *name, bool internal, int lanes, const char *const *attrs,
    LLVMTypeRef *fty)
{
	return intrin_decl_taps(cg, name, internal, lanes, attrs, fty, false);
}

LLVMValueRef
intrin_decl_taps(Cg *cg, const char *name, bool internal, int lanes, const char *const *attrs,
    LLVMTypeRef *fty, bool taps)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef pt[INTRIN_TAPS_PARAMS] = { ptr, i64, ptr, i64, i64, ptr, i64, i64, i64, i64,
	    LLVMInt1TypeInContext(cg->ctx), i64, i64, i64, i64, i64, i64 };
	*fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), pt,
	    taps ? INTRIN_TAPS_PARAMS : INTRIN_PARAMS, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (fn)
		return fn;
	fn = LLVMAddFunction(cg->mod, name, *fty);
	if (internal)
		LLVMSetLinkage(fn, LLVMInternalLinkage);
	for (; *attrs; attrs++)
		cg_attr(cg, fn, LLVMAttributeFunctionIndex, *attrs);
	if (lanes == 16) {
		/* 512-bit vectors stay whole on CPUs whose tuning prefers 256-bit
		 * ones (Skylake-X, Ice Lake, Sapphire Rapids): without this X86
		 * splits every <16 x float> into two ymm halves */
		static const char k[] = "min-legal-vector-width", v[] = "512";
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		    LLVMCreateStringAttribute(cg->ctx, k, sizeof k - 1, v, sizeof v - 1));
	}
	return fn;
}

void
intrin_begin(Cg *cg, IntrinSaved *s, LLVMValueRef fn, const int64_t *cst, LLVMValueRef *p)
{
	s->block = LLVMGetInsertBlock(cg->b);
	s->loc = LLVMGetCurrentDebugLocation2(cg->b);
	LLVMSetCurrentDebugLocation2(cg->b, NULL);
	LLVMGetParams(fn, p);
	static const int at[4] = { 1, 3, 4, 6 };   /* csi, asi, ask, bsk */
	for (int i = 0; i < 4; i++)
		if (cst[i] >= 0)
			p[at[i]] = intrin_i64(cg, cst[i]);
	LLVMPositionBuilderAtEnd(cg->b, LLVMAppendBasicBlockInContext(cg->ctx, fn, "entry"));
}

void
intrin_end(Cg *cg, const IntrinSaved *s)
{
	if (s->block)
		LLVMPositionBuilderAtEnd(cg->b, s->block);
	else
		LLVMClearInsertionPosition(cg->b);
	LLVMSetCurrentDebugLocation2(cg->b, s->loc);
}

LLVMValueRef
intrin_address(Cg *cg, IrExpr *ld)
{
	if (ld->kind != IR_LOAD || ld->load.nidx != 1)
		ICE("intrinsic argument is not a flat load");
	Buffer *b = ld->load.buf;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem);
	LLVMValueRef off = cg_index(cg, ld->load.idx[0], 1);
	return LLVMBuildGEP2(cg->b, et, cg_lookup_buf(cg, b), &off, 1, "tile");
}

bool
intrin_has_feature(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

void
intrin_call(Cg *cg, IrExpr *e, LLVMValueRef fn, LLVMTypeRef fty)
{
	IrFmaArgs f;
	if (!ir_fma_args(e, &f))
		ICE("intrin_call: not an fma_outer call");
	bool taps = LLVMCountParamTypes(fty) == INTRIN_TAPS_PARAMS;
	if (f.ntaps && !taps)
		ICE("intrin_call: a call with taps to a kernel without them");
	LLVMValueRef first = cg_index(cg, f.first, 1);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMValueRef args[INTRIN_TAPS_PARAMS] = {
		intrin_address(cg, f.c), cg_index(cg, f.csi, 1),
		intrin_address(cg, f.a), cg_index(cg, f.asi, 1), cg_index(cg, f.ask, 1),
		intrin_address(cg, f.b), cg_index(cg, f.bsk, 1),
		cg_index(cg, f.k, 1), cg_index(cg, f.mr, 1), cg_index(cg, f.nr, 1),
		LLVMBuildICmp(cg->b, LLVMIntNE, first, LLVMConstInt(i64, 0, 0), "first"),
	};
	/* the taps, outermost first; a level the call lacks runs once */
	for (int t = 0; t < FMA_MAX_TAPS; t++) {
		args[INTRIN_PARAMS + 3 * t] = t < f.ntaps ? cg_index(cg, f.tap[t], 1) : intrin_i64(cg, 1);
		args[INTRIN_PARAMS + 3 * t + 1] = t < f.ntaps ? cg_index(cg, f.tap_as[t], 1) :
		    intrin_i64(cg, 0);
		args[INTRIN_PARAMS + 3 * t + 2] = t < f.ntaps ? cg_index(cg, f.tap_bs[t], 1) :
		    intrin_i64(cg, 0);
	}
	LLVMBuildCall2(cg->b, fty, fn, args, taps ? INTRIN_TAPS_PARAMS : INTRIN_PARAMS, "");
}

LLVMValueRef
intrin_vload(Cg *cg, LLVMTypeRef vt, LLVMValueRef p, unsigned align, LLVMValueRef mask)
{
	if (mask) {
		LLVMTypeRef over[2] = { vt, LLVMTypeOf(p) };
		LLVMValueRef args[4] = { p, intrin_i32(cg, align), mask, LLVMConstNull(vt) };
		return cg_call_intrinsic(cg, "llvm.masked.load", over, 2, args, 4);
	}
	LLVMValueRef v = LLVMBuildLoad2(cg->b, vt, p, "");
	LLVMSetAlignment(v, align);
	return v;
}

void
intrin_vstore(Cg *cg, LLVMValueRef v, LLVMValueRef p, unsigned align, LLVMValueRef mask)
{
	if (mask) {
		LLVMTypeRef over[2] = { LLVMTypeOf(v), LLVMTypeOf(p) };
		LLVMValueRef args[4] = { v, p, intrin_i32(cg, align), mask };
		cg_call_intrinsic(cg, "llvm.masked.store", over, 2, args, 4);
		return;
	}
	LLVMValueRef st = LLVMBuildStore(cg->b, v, p);
	LLVMSetAlignment(st, align);
}
