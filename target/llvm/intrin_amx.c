/* intrin_amx.c: the AMX micro-kernels of stdlib/intrinsics/cpu.tx
 * (emit "i8_amx": tdpbssd, "bf16_amx": tdpbf16ps), as calls of libtxrt.
 *
 * The call is fma_outer's (lower/ir.h: mr, nr, K, c, strides, a,
 * strides, b, strides, first, MR, NR), on a block of C that lives in
 * memory: AMX's accumulators are tiles (16 rows of 64 bytes), loaded and
 * stored with tileloadd and tilestored, so the block needs no registers
 * and is as large as the intrinsic declares (e.g. 256 x 64).  The kernel
 * is libtxrt's (rt/amx.c, rt/amx_gemm.h), written in C once: it packs
 * b into the tiles' layout (four k of a column in 32 bits, two for
 * bf16), configures the tiles, runs 2 x 2 tiles of C at a time over k
 * and handles the edges (rows past mr, columns past nr, a K no multiple
 * of the tiles' 64 bytes) through zero-padded copies.  Its signature:
 *     void txrt_amx_KIND(c, csi, a, asi, ask, b, bsk, K, mr, nr, first)
 * with every argument 64-bit (first 0 or 1).
 *
 * The target CPU must have AMX (amx-tile and amx-int8 or amx-bf16):
 * otherwise an error, as intrin_dot.c says for VNNI.  TXC_AMX_EMULATE=1
 * (a test switch) calls txrt_amx_KIND_emulated instead, the same kernel
 * on a tile file in memory with the instructions' arithmetic
 * (rt/amx_emu.c), which runs on any x86-64: so the packing, the edges and
 * the tile sequence are checked on CPUs without AMX.
 */
#include <stdlib.h>
#include <string.h>

#include "target/llvm/cg.h"

static const struct {
	const char *emit, *need, *fn;
} kinds[] = {
	{ "i8_amx", "amx-int8", "txrt_amx_i8" },
	{ "bf16_amx", "amx-bf16", "txrt_amx_bf16" },
};

bool
intrin_amx_emit(Cg *cg, IrExpr *e)
{
	int k = -1;
	for (int i = 0; i < (int)(sizeof kinds / sizeof *kinds); i++)
		if (!strcmp(kinds[i].emit, e->call.name))
			k = i;
	if (k < 0)
		return false;
	const char *em = getenv("TXC_AMX_EMULATE");
	bool emulate = em && *em == '1';
	if (!emulate && (!cg->features || !intrin_has_feature(cg->features, "amx-tile") ||
	    !intrin_has_feature(cg->features, kinds[k].need))) {
		unsigned bit = 1u << (16 + k);
		if (cg->dot_errors & bit)
			return true;   /* said once a module */
		cg->dot_errors |= bit;
		diag_error(e->loc, "the micro-kernel (emit \"%s\") needs the instruction sets "
		    "amx-tile and %s, which the target CPU %s", kinds[k].emit, kinds[k].need,
		    cg->features ? "lacks" : "does not have (an x86-64 target is needed)");
		diag_note(e->loc, "choose a CPU that has them (--cpu=sapphirerapids, "
		    "--features=+amx-tile,+%s), or leave the isa knob at its default, the widest "
		    "table the target has", kinds[k].need);
		return true;
	}
	IrExpr **x = e->call.args;
	if (e->call.nargs != FMA_OUTER_NARGS)
		ICE("%s: malformed call", kinds[k].emit);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef pt[11] = { ptr, i64, ptr, i64, i64, ptr, i64, i64, i64, i64, i64 };
	LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), pt, 11, 0);
	const char *name = emulate ? arena_printf(ir_arena, "%s_emulated", kinds[k].fn) :
	    kinds[k].fn;
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(cg->mod, name, fty);
		cg_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
	}
	LLVMValueRef args[11] = {
		intrin_address(cg, x[3]), cg_index(cg, x[4], 1),
		intrin_address(cg, x[6]), cg_index(cg, x[7], 1), cg_index(cg, x[8], 1),
		intrin_address(cg, x[9]), cg_index(cg, x[10], 1),
		cg_index(cg, x[2], 1), cg_index(cg, x[0], 1), cg_index(cg, x[1], 1),
		cg_index(cg, x[12], 1),
	};
	LLVMBuildCall2(cg->b, fty, fn, args, 11, "");
	return true;
}
