/* cg_dlpack.c: the DLPack entry point of a kernel in the LLVM object.
 *
 *     int NAME_dlpack(int64_t size..., scalar..., const DLTensor *in...,
 *                     DLTensor *out...);
 *
 * (txc --dlpack; header.c declares it.)  First the size checks NAME
 * makes before any other (ir_size_checks: signs, -D values, no overflow),
 * with NAME's codes and messages.  Then for each tensor, in order: not
 * NULL (TXC_ERR_NULL), then device kDLCPU (kDLCUDA for
 * the cuda target: Cg.dlpack_device), dtype (code,
 * bits, one lane; bool is kDLUInt or kDLBool with 8 bits), ndim, a
 * byte_offset that keeps elements aligned, the shape the sizes give, and
 * NULL or compact row-major strides (a dimension of extent 1 may have
 * any stride); a failure returns TXC_ERR_DLPACK with "NAME: DLTensor 'x'
 * has the wrong shape" (and the like) through txrt_set_error; last, data
 * not NULL unless the tensor has no elements (TXC_ERR_NULL).  Then it
 * calls NAME with data + byte_offset (NULL for NULL data) and returns
 * what NAME returns.  The
 * checks are the C backend's (target/c/cdlpack.c), so both agree.
 *
 * DLTensor is laid out as dlpack.h (0.6 and later) declares it:
 *     { void *data; { i32 device_type, device_id }; i32 ndim;
 *       { u8 code, bits; u16 lanes } dtype; i64 *shape, *strides;
 *       u64 byte_offset }
 * and the target's data layout gives the offsets, as a C compiler would.
 */
#include <string.h>

#include "target/llvm/cg.h"

enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_MANAGED = 13, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_BOOL = 6 };
enum { F_DATA, F_DEVICE, F_NDIM, F_DTYPE, F_SHAPE, F_STRIDES, F_OFFSET };

typedef struct {
	Cg *cg;
	IrFunc *f;
	LLVMTypeRef t_tensor, t_device, t_dtype;
	LLVMTypeRef i8, i16, i32, i64, ptr;
} Dl;

static LLVMValueRef
field(Dl *d, LLVMValueRef t, unsigned idx, LLVMTypeRef ty, const char *name)
{
	LLVMValueRef p = LLVMBuildStructGEP2(d->cg->b, d->t_tensor, t, idx, "");
	return LLVMBuildLoad2(d->cg->b, ty, p, name);
}

/* Leaves with TXC_ERR_DLPACK and "NAME: DLTensor 'x' why" when bad holds. */
static void
fail(Dl *d, LLVMValueRef bad, int code, Buffer *b, const char *why)
{
	cg_fail_if(d->cg, bad, LLVMConstInt(d->i32, code, 0),
	    arena_printf(ir_arena, "%s: DLTensor '%s' %s", d->f->name, b->name, why));
}

static LLVMValueRef
ne(Dl *d, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildICmp(d->cg->b, LLVMIntNE, a, b, "");
}

/* Checks tensor t against buffer b; gives its element pointer. */
/* DLPack's type code for a tensor of t (bool is checked apart). */
static int
dl_code(ScalarType t)
{
	if (t == TY_BF16)
		return DL_BFLOAT;
	return ir_is_float(ir_scalar(t)) ? DL_FLOAT : ir_is_uint(ir_scalar(t)) ? DL_UINT : DL_INT;
}

static LLVMValueRef
check(Dl *d, LLVMValueRef t, Buffer *b)
{
	LLVMBuilderRef B = d->cg->b;
	int bits = ir_bits(b->elem) < 8 ? 8 : ir_bits(b->elem);
	int n = b->ndims;

	fail(d, LLVMBuildIsNull(B, t, ""), TXC_ERR_NULL, b, "is NULL");
	LLVMValueRef data = field(d, t, F_DATA, d->ptr, "data");

	LLVMValueRef dev = LLVMBuildStructGEP2(B, d->t_tensor, t, F_DEVICE, "");
	LLVMValueRef devtype = LLVMBuildLoad2(B, d->i32,
	    LLVMBuildStructGEP2(B, d->t_device, dev, 0, ""), "device_type");
	if (d->cg->dlpack_device == DL_CUDA) {
		/* device memory; host memory too while libtxrt emulates the GPU */
		LLVMTypeRef fty;
		LLVMValueRef mfn = cg_runtime(d->cg, "txrt_cuda_mode", &fty);
		LLVMValueRef mode = LLVMBuildCall2(B, fty, mfn, NULL, 0, "mode");
		LLVMValueRef ok = LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntEQ, devtype,
		    LLVMConstInt(d->i32, DL_CUDA, 0), ""), LLVMBuildICmp(B, LLVMIntEQ, devtype,
		    LLVMConstInt(d->i32, DL_CUDA_MANAGED, 0), ""), "");
		ok = LLVMBuildOr(B, ok, LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, devtype,
		    LLVMConstInt(d->i32, DL_CPU, 0), ""), LLVMBuildICmp(B, LLVMIntEQ, mode,
		    LLVMConstInt(d->i32, 2, 0), ""), ""), "");
		fail(d, LLVMBuildNot(B, ok, ""), TXC_ERR_DLPACK, b,
		    "is not in CUDA memory (kDLCUDA or kDLCUDAManaged; kDLCPU only while "
		    "libtxrt emulates the GPU)");
	} else {
		fail(d, ne(d, devtype, LLVMConstInt(d->i32, DL_CPU, 0)), TXC_ERR_DLPACK, b,
		    "is not in CPU memory (kDLCPU)");
	}

	LLVMValueRef dt = LLVMBuildStructGEP2(B, d->t_tensor, t, F_DTYPE, "");
	LLVMValueRef code = LLVMBuildLoad2(B, d->i8, LLVMBuildStructGEP2(B, d->t_dtype, dt, 0, ""), "code");
	LLVMValueRef nbits = LLVMBuildLoad2(B, d->i8, LLVMBuildStructGEP2(B, d->t_dtype, dt, 1, ""), "bits");
	LLVMValueRef lanes = LLVMBuildLoad2(B, d->i16, LLVMBuildStructGEP2(B, d->t_dtype, dt, 2, ""), "lanes");
	LLVMValueRef badcode;
	if (b->elem == TY_BOOL)
		badcode = LLVMBuildAnd(B, ne(d, code, LLVMConstInt(d->i8, DL_UINT, 0)),
		    ne(d, code, LLVMConstInt(d->i8, DL_BOOL, 0)), "");
	else
		badcode = ne(d, code, LLVMConstInt(d->i8, dl_code(b->elem), 0));
	LLVMValueRef baddt = LLVMBuildOr(B, badcode, LLVMBuildOr(B,
	    ne(d, nbits, LLVMConstInt(d->i8, bits, 0)),
	    ne(d, lanes, LLVMConstInt(d->i16, 1, 0)), ""), "");
	fail(d, baddt, TXC_ERR_DLPACK, b, arena_printf(ir_arena,
	    "has the wrong data type (want %s: code %d, %d bits, 1 lane)", type_name(b->elem),
	    b->elem == TY_BOOL ? DL_UINT : dl_code(b->elem), bits));

	LLVMValueRef ndim = field(d, t, F_NDIM, d->i32, "ndim");
	fail(d, ne(d, ndim, LLVMConstInt(d->i32, n, 0)), TXC_ERR_DLPACK, b,
	    arena_printf(ir_arena, "has the wrong number of dimensions (want %d)", n));

	LLVMValueRef off = field(d, t, F_OFFSET, d->i64, "byte_offset");
	if (bits > 8)
		fail(d, ne(d, LLVMBuildURem(B, off, LLVMConstInt(d->i64, bits / 8, 0), ""),
		    LLVMConstInt(d->i64, 0, 0)), TXC_ERR_DLPACK, b,
		    "has a byte_offset that misaligns its elements");

	if (n > 0) {
		LLVMValueRef shape = field(d, t, F_SHAPE, d->ptr, "shape");
		LLVMValueRef *want = arena_alloc(ir_arena, n * sizeof *want);
		LLVMValueRef *vals = arena_alloc(ir_arena, 2 * n * sizeof *vals);
		LLVMValueRef bad = LLVMConstInt(LLVMInt1TypeInContext(d->cg->ctx), 0, 0);
		fail(d, LLVMBuildIsNull(B, shape, ""), TXC_ERR_DLPACK, b, "has a NULL shape");
		for (int k = 0; k < n; k++) {
			want[k] = b->extent[k] ? cg_expr(d->cg, b->extent[k]) : LLVMConstInt(d->i64, 0, 0);
			if (LLVMTypeOf(want[k]) != d->i64)
				want[k] = LLVMBuildSExtOrBitCast(B, want[k], d->i64, "");
			LLVMValueRef idx = LLVMConstInt(d->i64, k, 0);
			LLVMValueRef got = LLVMBuildLoad2(B, d->i64,
			    LLVMBuildGEP2(B, d->i64, shape, &idx, 1, ""), "");
			bad = LLVMBuildOr(B, bad, ne(d, got, want[k]), "");
			vals[k] = got;
			vals[n + k] = want[k];
		}
		/* "has the wrong shape [3, 4], want [3, 5]", as the C output says */
		const char *fmt = arena_printf(ir_arena, "%s: DLTensor '%s' has the wrong shape [",
		    d->f->name, b->name);
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < n; k++)
				fmt = arena_printf(ir_arena, "%s%s%%lld%s", fmt, k ? ", " : "",
				    k < n - 1 ? "" : pass ? "]" : "], want [");
		cg_fail_if_fmt(d->cg, bad, LLVMConstInt(d->i32, TXC_ERR_DLPACK, 0), fmt, vals, 2 * n);

		/* strides: NULL, or compact row-major where the extent is not 1 */
		LLVMValueRef strides = field(d, t, F_STRIDES, d->ptr, "strides");
		LLVMBasicBlockRef has = LLVMAppendBasicBlockInContext(d->cg->ctx, d->cg->fn->fn, "strides");
		LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(d->cg->ctx, d->cg->fn->fn, "strides_ok");
		LLVMBuildCondBr(B, LLVMBuildIsNull(B, strides, ""), done, has);
		LLVMPositionBuilderAtEnd(B, has);
		LLVMValueRef stride = LLVMConstInt(d->i64, 1, 0);
		bad = LLVMConstInt(LLVMInt1TypeInContext(d->cg->ctx), 0, 0);
		for (int k = n - 1; k >= 0; k--) {
			LLVMValueRef idx = LLVMConstInt(d->i64, k, 0);
			LLVMValueRef got = LLVMBuildLoad2(B, d->i64,
			    LLVMBuildGEP2(B, d->i64, strides, &idx, 1, ""), "");
			bad = LLVMBuildOr(B, bad, LLVMBuildAnd(B, ne(d, want[k], LLVMConstInt(d->i64, 1, 0)),
			    ne(d, got, stride), ""), "");
			stride = LLVMBuildMul(B, stride, want[k], "");
		}
		fail(d, bad, TXC_ERR_DLPACK, b, "is not compact row-major");
		LLVMBuildBr(B, done);
		LLVMPositionBuilderAtEnd(B, done);
	}
	/* NULL data only for a tensor of no elements (PyTorch exports empty
	 * tensors so), which the kernel receives as NULL */
	LLVMValueRef none = cg_no_elements(d->cg, b);
	fail(d, LLVMBuildAnd(B, LLVMBuildIsNull(B, data, ""), LLVMBuildNot(B, none, ""), ""),
	    TXC_ERR_NULL, b, "has NULL data");
	return LLVMBuildSelect(B, LLVMBuildIsNull(B, data, ""), data,
	    LLVMBuildGEP2(B, d->i8, data, &off, 1, ""), b->name);
}

void
cg_dlpack_entry(Cg *cg, IrFunc *f)
{
	LLVMValueRef kernel = LLVMGetNamedFunction(cg->mod, f->name);
	if (!kernel)
		return;
	LLVMTypeRef kty = LLVMGlobalGetValueType(kernel);
	int n = f->nparams + f->nargs;
	LLVMTypeRef *pt = arena_alloc(ir_arena, (n + 1) * sizeof *pt);
	LLVMValueRef *args = arena_alloc(ir_arena, (n + 1) * sizeof *args);
	LLVMGetParamTypes(kty, pt);   /* the same, tensors stay pointers */
	LLVMValueRef fn = LLVMAddFunction(cg->mod, arena_printf(ir_arena, "%s_dlpack", f->name),
	    LLVMFunctionType(LLVMInt32TypeInContext(cg->ctx), pt, n, 0));
	cg_baseline(cg, fn);
	Dl d = { .cg = cg, .f = f };
	CgFn cf;

	d.i8 = LLVMInt8TypeInContext(cg->ctx);
	d.i16 = LLVMInt16TypeInContext(cg->ctx);
	d.i32 = LLVMInt32TypeInContext(cg->ctx);
	d.i64 = LLVMInt64TypeInContext(cg->ctx);
	d.ptr = LLVMPointerTypeInContext(cg->ctx, 0);
	LLVMTypeRef dev[2] = { d.i32, d.i32 };
	LLVMTypeRef dtype[3] = { d.i8, d.i8, d.i16 };
	d.t_device = LLVMStructTypeInContext(cg->ctx, dev, 2, 0);
	d.t_dtype = LLVMStructTypeInContext(cg->ctx, dtype, 3, 0);
	LLVMTypeRef fields[7] = { d.ptr, d.t_device, d.i32, d.t_dtype, d.ptr, d.ptr, d.i64 };
	d.t_tensor = LLVMStructTypeInContext(cg->ctx, fields, 7, 0);

	bool own_builder = cg->b == NULL;
	if (own_builder)
		cg->b = LLVMCreateBuilderInContext(cg->ctx);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->ctx,
	    LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
	cg->ir = f;
	cg_fn_begin(cg, &cf, fn);
	for (int i = 0; i < f->nparams; i++) {
		LLVMValueRef p = LLVMGetParam(fn, i);
		IrType t = f->params[i]->type;
		LLVMSetValueName2(p, f->params[i]->name, strlen(f->params[i]->name));
		args[i] = p;
		/* sizes are what the shapes use; scalars only pass through */
		if (t.code == TY_F16 || t.code == TY_BOOL)
			continue;
		cg_bind_var(cg, f->params[i], p);
	}
	/* the sizes first, as NAME checks them (signs, -D values, no overflow):
	 * the shapes below are then computed in range */
	for (int i = 0; i < ir_size_checks(f->body); i++) {
		IrStmt *a = f->body->block.stmts[i];
		cg_fail_if(cg, LLVMBuildNot(cg->b, cg_expr(cg, a->assrt.cond), ""),
		    LLVMConstInt(d.i32, (unsigned)a->assrt.code, 0), a->assrt.msg);
	}
	for (int i = 0; i < f->nargs; i++) {
		LLVMValueRef p = LLVMGetParam(fn, f->nparams + i);
		LLVMSetValueName2(p, f->args[i]->name, strlen(f->args[i]->name));
		args[f->nparams + i] = check(&d, p, f->args[i]);
	}
	LLVMValueRef rc = LLVMBuildCall2(cg->b, kty, kernel, args, n, "rc");
	cg_fail_if(cg, ne(&d, rc, LLVMConstInt(d.i32, 0, 0)), rc, NULL);
	cg_fn_end(cg);
	cg->nbinds = 0;
	if (own_builder) {
		LLVMDisposeBuilder(cg->b);
		cg->b = NULL;
	}
}
