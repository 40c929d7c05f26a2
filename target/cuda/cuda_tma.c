/* cuda_tma.c: the code of tma() tiles (gpu_tma.c) in the three places a
 * kernel is emitted.
 *
 *   PTX (cuda_ptx.c): each tensor map is a `.param .align 64 .b8 [128]`
 *   byval parameter marked grid_constant (nvvm.annotations), so LLVM takes
 *   its address with cvta.param instead of copying it to local memory; the
 *   operations are inline PTX, as LLVM 19 has no intrinsics for them:
 *   mbarrier.init + fence.mbarrier_init, mbarrier.arrive.expect_tx then
 *   cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes, and a loop
 *   of mbarrier.try_wait.parity.
 *
 *   the emulator (cuda_host.c): params[i] points to the 128-byte map
 *   itself, and the calls go to libtxrt (txrt_emu_mbar_expect_tx, one
 *   txrt_emu_tma_box a box, txrt_emu_mbar_init, txrt_emu_mbar_wait in
 *   rt/cuda_emu_hopper.c).
 *
 *   A fill of a tile stored in panels of 128-byte rows (GpuTma.boxes > 1)
 *   is one arrive.expect_tx of all its bytes and one box a panel, each
 *   box[0] columns to the right of the last and landing at its panel.
 *
 *   the host's launch (cuda_host.c): each map encoded by
 *   txrt_cuda_tensor_map (rt/cuda.c: cuTensorMapEncodeTiled on a device,
 *   libtxrt's own layout in the emulator) into a 64-aligned slot of the
 *   entry point's frame, and tma_on = 1 when all of them were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda_cg.h"

enum { MAX_BOXES = 4 };   /* a 256-element f16 row: 4 panels of 128 bytes */

/* CUtensorMapDataType of an element type (cuda.h's values). */
static int
map_dtype(ScalarType t)
{
	switch (t) {
	case TY_U8: case TY_I8: case TY_BOOL: return 0;
	case TY_U16: case TY_I16: return 1;
	case TY_U32: return 2;
	case TY_I32: return 3;
	case TY_U64: return 4;
	case TY_I64: return 5;
	case TY_F16: return 6;
	case TY_F32: return 7;
	case TY_F64: return 8;
	case TY_BF16: return 9;
	default: return 0;
	}
}

static int64_t
esize_of(ScalarType t)
{
	int bits = ir_bits(t);
	return bits < 8 ? 1 : bits / 8;
}

/* ---- the kernel's parameters ---------------------------------------------- */

int
cuda_tma_nparams(GpuKernel *k)
{
	return k->ntma ? k->ntma + 1 : 0;
}

void
cuda_tma_param_types(Cg *cg, GpuKernel *k, LLVMTypeRef *p)
{
	for (int i = 0; i < k->ntma; i++)
		p[i] = LLVMPointerTypeInContext(cg->ctx, 0);
	if (k->ntma)
		p[k->ntma] = cg_abi_type(cg, k->tma_on->type);
}

void
cuda_tma_param_attrs(Cg *cg, GpuKernel *k, LLVMValueRef fn, int first)
{
	LLVMTypeRef map = LLVMArrayType(LLVMInt8TypeInContext(cg->ctx), 128);
	for (int i = 0; i < k->ntma; i++) {
		unsigned idx = (unsigned)(first + i + 1);
		LLVMAddAttributeAtIndex(fn, idx, LLVMCreateTypeAttribute(cg->ctx,
		    LLVMGetEnumAttributeKindForName("byval", 5), map));
		LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(cg->ctx,
		    LLVMGetEnumAttributeKindForName("align", 5), 64));
		cg_attr(cg, fn, idx, "noalias");
		cg_attr(cg, fn, idx, "readonly");
		/* !{ptr @fn, !"grid_constant", !{i32 position}}: positions from 1 */
		LLVMValueRef pos = LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), idx, 0);
		LLVMValueRef ops[3] = { fn, LLVMMDStringInContext(cg->ctx, "grid_constant", 13),
			LLVMMDNodeInContext(cg->ctx, &pos, 1) };
		LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations",
		    LLVMMDNodeInContext(cg->ctx, ops, 3));
	}
}

void
cuda_tma_bind(Cg *cg, GpuKernel *k, LLVMValueRef fn, int first, bool packed)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
	for (int i = 0; i <= k->ntma && k->ntma; i++) {
		LLVMValueRef v;
		if (packed) {
			/* params[i] points to the value: the map itself, or tma_on */
			LLVMValueRef at = LLVMConstInt(i64, (unsigned)(first + i), 0);
			v = LLVMBuildLoad2(cg->b, ptr, LLVMBuildGEP2(cg->b, ptr, LLVMGetParam(fn, 0),
			    &at, 1, ""), "");
			if (i == k->ntma)
				v = LLVMBuildLoad2(cg->b, cg_abi_type(cg, k->tma_on->type), v, "");
		} else {
			v = LLVMGetParam(fn, (unsigned)(first + i));
		}
		if (i < k->ntma)
			cg_bind_buf(cg, k->tma[i].map, v);
		else
			cg_bind_var(cg, k->tma_on, cg_from_abi(cg, k->tma_on->type, v));
	}
}

/* ---- PTX ------------------------------------------------------------------ */

static LLVMValueRef
asm_call(Cg *cg, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args,
    int n)
{
	LLVMTypeRef pt[8];
	for (int i = 0; i < n; i++)
		pt[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, 0);
	LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons,
	    strlen(cons), 1, 0, LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(cg->b, fty, a, args, (unsigned)n, "");
}

/* The 32-bit shared-window address of element idx of shared buffer b. */
static LLVMValueRef
shared_addr(Cg *cg, Buffer *b, IrExpr *idx)
{
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMValueRef off = cg_index(cg, simplify_expr(ir_mul(idx, ir_i64c(esize_of(b->elem))),
	    NULL), 1);
	LLVMValueRef p = LLVMBuildGEP2(cg->b, i8, cg_lookup_buf(cg, b), &off, 1, "");
	p = LLVMBuildAddrSpaceCast(cg->b, p, LLVMPointerTypeInContext(cg->ctx, 3), "");
	return LLVMBuildPtrToInt(cg->b, p, i32, "");
}

static LLVMValueRef
i32_of(Cg *cg, IrExpr *e)
{
	LLVMValueRef v = cg_index(cg, e, 1);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	return LLVMTypeOf(v) == i32 ? v : LLVMBuildTrunc(cg->b, v, i32, "");
}

/* The box's coordinates: column, row of src's flat element origin. */
static void
coords(Cg *cg, IrExpr *e, LLVMValueRef *col, LLVMValueRef *row)
{
	IrExpr *o = e->call.args[1]->load.idx[0], *cols = e->call.args[5];
	*col = i32_of(cg, simplify_expr(ir_mod(o, cols), NULL));
	*row = i32_of(cg, simplify_expr(ir_div(o, cols), NULL));
}

/* The element of the tile where box p of the fill at element d lands:
 * box p holds columns p * box[0] .. of the slot's rows, which a tile in
 * panels of 128-byte rows keeps in panel p (gpu_swizzle_panel).  The
 * swizzle's XOR is nothing there (a box starts at a multiple of 1024
 * bytes). */
static IrExpr *
box_dst(GpuTma *t, IrExpr *d, int p)
{
	IrExpr *x = d->load.idx[0];
	if (!d->load.buf->swizzle_panel_rows)
		return x;
	return simplify_expr(gpu_swizzle_panel(d->load.buf, ir_add(x, ir_make_const(x->type,
	    p * t->box[0]))), NULL);
}

static LLVMValueRef
col_of(Cg *cg, GpuTma *t, LLVMValueRef col, int p)
{
	return p ? LLVMBuildAdd(cg->b, col, LLVMConstInt(LLVMTypeOf(col),
	    (unsigned long long)(p * t->box[0]), 0), "") : col;
}

/* The bytes a fill's arrival expects: its boxes'; for the checker's
 * tests (TXC_CUDA_TMA_EXPECT=box), wrongly, one box's. */
static int64_t
fill_bytes(GpuTma *t)
{
	const char *how = getenv("TXC_CUDA_TMA_EXPECT");
	int64_t box = t->box[0] * t->box[1] * esize_of(t->tile->elem);
	return how && !strcmp(how, "box") ? box : box * t->boxes;
}

static GpuTma *
map_of(GpuKernel *k, IrExpr *e)
{
	int64_t m = -1;
	if (!ir_is_const(e->call.args[4], &m) || m < 0 || m >= k->ntma)
		ICE("a TMA load of an unknown map");
	return &k->tma[m];
}

LLVMValueRef
cuda_tma_ptx(Cg *cg, GpuKernel *k, IrExpr *e)
{
	LLVMContextRef ctx = cg->ctx;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef v = LLVMVoidTypeInContext(ctx);
	if (gpu_tma_is(e)) {
		GpuTma *t = map_of(k, e);
		IrExpr *d = e->call.args[0], *b = e->call.args[3];
		LLVMValueRef col, row;
		coords(cg, e, &col, &row);
		/* one arrival expecting every box's bytes, then the boxes */
		int64_t bytes = fill_bytes(t);
		LLVMValueRef args[4 + 2 * MAX_BOXES] = {
			shared_addr(cg, b->load.buf, b->load.idx[0]),
			LLVMConstInt(i32, (unsigned long long)bytes, 0),
			LLVMBuildPtrToInt(cg->b, cg_lookup_buf(cg, t->map), i64, ""), row,
		};
		char text[256 + 160 * MAX_BOXES], cons[32 + 4 * MAX_BOXES];
		int n = snprintf(text, sizeof text,
		    "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;");
		strcpy(cons, "r,r,l,r");
		if (t->boxes > MAX_BOXES)
			ICE("a TMA fill of %d boxes", t->boxes);
		for (int p = 0; p < t->boxes; p++) {
			args[4 + 2 * p] = shared_addr(cg, d->load.buf, box_dst(t, d, p));
			args[5 + 2 * p] = col_of(cg, t, col, p);
			n += snprintf(text + n, sizeof text - (size_t)n, "\n\tcp.async.bulk.tensor.2d."
			    "shared::cluster.global.tile.mbarrier::complete_tx::bytes [$%d], [$2, {$%d, "
			    "$3}], [$0];", 4 + 2 * p, 5 + 2 * p);
			strcat(cons, ",r,r");
		}
		strcat(cons, ",~{memory}");
		asm_call(cg, v, text, cons, args, 4 + 2 * t->boxes);
		return LLVMConstInt(i32, 0, 0);
	}
	LLVMValueRef args[2];
	if (!cuda_is(e, GPU_MBAR_INIT) && !cuda_is(e, GPU_MBAR_ARRIVE) && !cuda_is(e, GPU_MBAR_WAIT))
		return NULL;
	/* gpu.mbar_*(bar[s], n): the barrier's address, n */
	args[0] = shared_addr(cg, e->call.args[0]->load.buf, e->call.args[0]->load.idx[0]);
	args[1] = i32_of(cg, e->call.args[1]);
	if (cuda_is(e, GPU_MBAR_INIT)) {
		asm_call(cg, v, "mbarrier.init.shared::cta.b64 [$0], $1;\n\t"
		    "fence.mbarrier_init.release.cluster;", "r,r,~{memory}", args, 2);
		return LLVMConstInt(i32, 0, 0);
	}
	if (cuda_is(e, GPU_MBAR_ARRIVE)) {
		/* lane 0 for its warp, predicated rather than branched around
		 * (gpu_wspec.c) */
		asm_call(cg, v, "{\n\t.reg .pred p, q;\n\t.reg .u32 l;\n\tmov.u32 l, %laneid;\n\t"
		    "setp.ne.u32 p, $1, 0;\n\tsetp.eq.and.u32 q, l, 0, p;\n\t"
		    "@q mbarrier.arrive.shared::cta.b64 _, [$0];\n\t}", "r,r,~{memory}", args, 2);
		return LLVMConstInt(i32, 0, 0);
	}
	/* the wait: try_wait until the phase of that parity has completed */
	LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(ctx, cg->fn->fn, "mbar_wait");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, cg->fn->fn, "mbar_done");
	LLVMBuildBr(cg->b, loop);
	LLVMPositionBuilderAtEnd(cg->b, loop);
	LLVMValueRef ok = asm_call(cg, i32, "{\n\t.reg .pred p;\n\t"
	    "mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\t"
	    "selp.u32 $0, 1, 0, p;\n\t}", "=r,r,r,~{memory}", args, 2);
	LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntNE, ok, LLVMConstInt(i32, 0, 0), ""),
	    done, loop);
	LLVMPositionBuilderAtEnd(cg->b, done);
	return LLVMConstInt(i32, 0, 0);
}

/* ---- the emulator ----------------------------------------------------------- */

static LLVMValueRef
rt_call(Cg *cg, const char *name, LLVMTypeRef *pt, int n, LLVMValueRef *args)
{
	LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), pt, (unsigned)n, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
	if (!fn)
		fn = LLVMAddFunction(cg->mod, name, fty);
	return LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)n, "");
}

static LLVMValueRef
elem_ptr(Cg *cg, Buffer *b, IrExpr *idx)
{
	LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
	LLVMValueRef off = cg_index(cg, simplify_expr(ir_mul(idx, ir_i64c(esize_of(b->elem))),
	    NULL), 1);
	return LLVMBuildGEP2(cg->b, i8, cg_lookup_buf(cg, b), &off, 1, "");
}

LLVMValueRef
cuda_tma_emu(Cg *cg, GpuKernel *k, IrExpr *e, int dbuf)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	if (gpu_tma_is(e)) {
		GpuTma *t = map_of(k, e);
		IrExpr *d = e->call.args[0], *b = e->call.args[3];
		LLVMValueRef col, row;
		coords(cg, e, &col, &row);
		LLVMValueRef bar = elem_ptr(cg, b->load.buf, b->load.idx[0]);
		int64_t bytes = fill_bytes(t);
		LLVMTypeRef et[2] = { ptr, i32 };
		LLVMValueRef ex[2] = { bar, LLVMConstInt(i32, (unsigned long long)bytes, 0) };
		rt_call(cg, "txrt_emu_mbar_expect_tx", et, 2, ex);
		for (int p = 0; p < t->boxes; p++) {
			LLVMTypeRef pt[7] = { i32, ptr, i64, ptr, i32, i32, ptr };
			LLVMValueRef args[7] = {
				LLVMConstInt(i32, (unsigned)dbuf, 0), cg_lookup_buf(cg, d->load.buf),
				LLVMBuildSExt(cg->b, cg_index(cg, box_dst(t, d, p), 1), i64, ""),
				cg_lookup_buf(cg, t->map), col_of(cg, t, col, p), row, bar,
			};
			rt_call(cg, "txrt_emu_tma_box", pt, 7, args);
		}
		return LLVMConstInt(i32, 0, 0);
	}
	if (cuda_is(e, GPU_MBAR_ARRIVE)) {
		IrExpr *b = e->call.args[0];
		LLVMValueRef a = elem_ptr(cg, b->load.buf, b->load.idx[0]);
		LLVMValueRef when = LLVMBuildICmp(cg->b, LLVMIntNE, i32_of(cg, e->call.args[1]),
		    LLVMConstInt(i32, 0, 0), "");
		LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "arrive");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "arrived");
		LLVMBuildCondBr(cg->b, when, yes, done);
		LLVMPositionBuilderAtEnd(cg->b, yes);
		rt_call(cg, "txrt_emu_mbar_arrive_warp", &ptr, 1, &a);
		LLVMBuildBr(cg->b, done);
		LLVMPositionBuilderAtEnd(cg->b, done);
		return LLVMConstInt(i32, 0, 0);
	}
	if (cuda_is(e, GPU_MBAR_INIT) || cuda_is(e, GPU_MBAR_WAIT)) {
		IrExpr *b = e->call.args[0];
		LLVMTypeRef pt[2] = { ptr, i32 };
		LLVMValueRef args[2] = { elem_ptr(cg, b->load.buf, b->load.idx[0]),
			i32_of(cg, e->call.args[1]) };
		rt_call(cg, cuda_is(e, GPU_MBAR_INIT) ? "txrt_emu_mbar_init" : "txrt_emu_mbar_wait",
		    pt, 2, args);
		return LLVMConstInt(i32, 0, 0);
	}
	return NULL;
}

/* ---- the host's launch ------------------------------------------------------- */

static IrExpr *
as_i64(IrExpr *e)
{
	return e->type.code == TY_I64 && e->type.lanes == 1 ? e : ir_cast(ir_i64, e);
}

void
cuda_tma_host(Cg *cg, GpuKernel *k, LLVMValueRef arr, int first)
{
	if (!k->ntma)
		return;
	LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMTypeRef map = LLVMArrayType(LLVMInt8TypeInContext(cg->ctx), 128);
	LLVMValueRef on = LLVMConstInt(i32, 1, 0);
	for (int i = 0; i < k->ntma; i++) {
		GpuTma *t = &k->tma[i];
		LLVMValueRef slot = cg_entry_alloca(cg, map, 64, t->map->name);
		LLVMValueRef args[9] = {
			slot, cg_lookup_buf(cg, t->src),
			LLVMConstInt(i32, (unsigned)map_dtype(t->src->elem), 0),
			LLVMConstInt(i32, (unsigned)esize_of(t->src->elem), 0),
			cg_index(cg, as_i64(t->src->extent[1]), 1),
			cg_index(cg, as_i64(t->src->extent[0]), 1),
			LLVMConstInt(i32, (unsigned long long)t->box[0], 0),
			LLVMConstInt(i32, (unsigned long long)t->box[1], 0),
			LLVMConstInt(i32, (unsigned)t->swizzle, 0),
		};
		LLVMTypeRef fty;
		LLVMValueRef fn = cg_runtime(cg, "txrt_cuda_tensor_map", &fty);
		LLVMValueRef ok = LLVMBuildCall2(cg->b, fty, fn, args, 9, "");
		on = LLVMBuildAnd(cg->b, on, ok, "");
		LLVMValueRef at = LLVMConstInt(i64, (unsigned)(first + i), 0);
		LLVMBuildStore(cg->b, slot, LLVMBuildGEP2(cg->b, ptr, arr, &at, 1, ""));
	}
	LLVMValueRef flag = cg_entry_alloca(cg, cg_abi_type(cg, k->tma_on->type), 8, "tma_on");
	LLVMBuildStore(cg->b, LLVMBuildZExt(cg->b, on, cg_abi_type(cg, k->tma_on->type), ""), flag);
	LLVMValueRef at = LLVMConstInt(i64, (unsigned)(first + k->ntma), 0);
	LLVMBuildStore(cg->b, flag, LLVMBuildGEP2(cg->b, ptr, arr, &at, 1, ""));
}
