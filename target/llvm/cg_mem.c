/* cg_mem.c: loads and stores: addresses, vector accesses, alias scopes.
 *
 * An access's element offset is sum over d of (idx[d] - min[d]) * stride[d]
 * (row-major strides from the extents when flatten has not set them; one
 * index already is the offset on a flat buffer).  For a vector access the
 * indices are analysed as base + lane * step: step 1 becomes one vector
 * load or store, step 0 a scalar load broadcast, a load of step 2 a dense
 * load of twice the lanes and a shuffle (load_stride2), anything else a
 * gather or scatter.  A predicate (and, inside a vector select, the lanes
 * that side covers) turns them into LLVM's masked intrinsics; a scalar
 * predicate becomes a branch.  Bools are bytes in memory.
 *
 * Every buffer gets its own alias scope: an access to one is declared not
 * to alias any other, which survives outlining into parallel closures (a
 * noalias argument would not).
 */
#include <stdio.h>
#include <string.h>

#include "lower/lower.h"
#include "target/llvm/cg.h"

/* e, a vector of integers, as base + lane * step with a constant step. */
static bool
affine(IrExpr *e, IrExpr **base, int64_t *step)
{
	IrExpr *ba, *bb;
	int64_t sa, sb, c;

	if (e->type.lanes == 1) {
		*base = e;
		*step = 0;
		return true;
	}
	switch (e->kind) {
	case IR_RAMP:
		if (!ir_is_const(e->b, &c))
			return false;
		*base = e->a;
		*step = c;
		return true;
	case IR_BROADCAST:
		*base = e->a;
		*step = 0;
		return true;
	case IR_ADD:
	case IR_SUB:
		if (!affine(e->a, &ba, &sa) || !affine(e->b, &bb, &sb))
			return false;
		*base = e->kind == IR_ADD ? ir_add(ba, bb) : ir_sub(ba, bb);
		*step = e->kind == IR_ADD ? sa + sb : sa - sb;
		return true;
	case IR_MUL:
		if (!affine(e->a, &ba, &sa) || !affine(e->b, &bb, &sb))
			return false;
		if (sa == 0 && sb == 0)
			*step = 0;
		else if (sb == 0 && ir_is_const(bb, &c))
			*step = sa * c;
		else if (sa == 0 && ir_is_const(ba, &c))
			*step = sb * c;
		else
			return false;
		*base = ir_mul(ba, bb);
		return true;
	case IR_CAST:
		if (!ir_is_int(e->type) || !ir_is_int(e->a->type) ||
		    ir_bits(e->type.code) < ir_bits(e->a->type.code) ||
		    !affine(e->a, &ba, step))
			return false;
		*base = ir_cast(ir_scalar(e->type.code), ba);
		return true;
	default:
		return false;
	}
}

/* The stride of dimension d as an expression, or NULL for a constant 1. */
static IrExpr *
dim_stride(Buffer *b, int d)
{
	IrExpr *s = NULL;

	if (b->stride && b->stride[d])
		return b->stride[d];
	for (int e = d + 1; e < b->ndims; e++)
		s = s ? ir_mul(s, b->extent[e]) : b->extent[e];
	return s;
}

static bool
const_of(IrExpr *e, int64_t *v)
{
	if (!e) {
		*v = 1;
		return true;
	}
	return ir_is_const(e, v);
}

static LLVMValueRef
i64c(Cg *cg, int64_t v)
{
	return LLVMConstInt(cg_index_type(cg), (unsigned long long)v, 1);
}

/* The address computation of an access with `lanes` lanes: either
 * *off (scalar) and *step (elements between lanes) with true, or a vector
 * of offsets in *off with false. */
static bool
offsets(Cg *cg, Buffer *b, IrExpr **idx, int nidx, int lanes,
    LLVMValueRef *off, int64_t *step)
{
	bool flat = b->flat || nidx <= 1;
	LLVMValueRef acc = i64c(cg, 0);
	int64_t total = 0;
	bool ok = true;

	if (nidx == 0) {
		*off = acc;
		*step = 0;
		return true;
	}
	/* first try base + lane * step over every dimension */
	for (int d = 0; d < nidx && ok; d++) {
		IrExpr *base;
		int64_t s, st;
		if (!affine(idx[d], &base, &s))
			ok = false;
		else if (s != 0 && !(flat ? (st = 1, true) : const_of(dim_stride(b, d), &st)))
			ok = false;
		else
			total += s ? s * st : 0;
	}
	if (ok) {
		for (int d = 0; d < nidx; d++) {
			IrExpr *base;
			int64_t s;
			affine(idx[d], &base, &s);
			LLVMValueRef v = cg_index(cg, base, 1);
			if (!flat && b->min && b->min[d])
				v = LLVMBuildSub(cg->b, v, cg_index(cg, b->min[d], 1), "");
			IrExpr *st = flat ? NULL : dim_stride(b, d);
			if (st)
				v = LLVMBuildMul(cg->b, v, cg_index(cg, st, 1), "");
			acc = d ? LLVMBuildAdd(cg->b, acc, v, "") : v;
		}
		*off = acc;
		*step = total;
		return true;
	}
	acc = cg_broadcast(cg, acc, lanes);
	for (int d = 0; d < nidx; d++) {
		LLVMValueRef v = cg_index(cg, idx[d], lanes);
		if (!flat && b->min && b->min[d])
			v = LLVMBuildSub(cg->b, v, cg_index(cg, b->min[d], lanes), "");
		IrExpr *st = flat ? NULL : dim_stride(b, d);
		if (st)
			v = LLVMBuildMul(cg->b, v, cg_index(cg, st, lanes), "");
		acc = LLVMBuildAdd(cg->b, acc, v, "");
	}
	*off = acc;
	return false;
}

/* Attaches buffer b's alias scope to a memory instruction. */
static void
tag(Cg *cg, LLVMValueRef inst, Buffer *b)
{
	LLVMMetadataRef own = NULL, *others;
	int n = 0;
	static unsigned scope_kind, noalias_kind;

	if (!cg->nscoped || !inst)
		return;
	others = arena_alloc(ir_arena, cg->nscoped * sizeof *others);
	for (int i = 0; i < cg->nscoped; i++) {
		if (cg->scoped[i] == b)
			own = cg->scopes[i];
		else
			others[n++] = cg->scopes[i];
	}
	if (!own)
		return;
	if (!scope_kind) {
		scope_kind = LLVMGetMDKindIDInContext(cg->ctx, "alias.scope", 11);
		noalias_kind = LLVMGetMDKindIDInContext(cg->ctx, "noalias", 7);
	}
	LLVMSetMetadata(inst, scope_kind,
	    LLVMMetadataAsValue(cg->ctx, LLVMMDNodeInContext2(cg->ctx, &own, 1)));
	if (n)
		LLVMSetMetadata(inst, noalias_kind,
		    LLVMMetadataAsValue(cg->ctx, LLVMMDNodeInContext2(cg->ctx, others, n)));
}

static void
collect_allocs(Cg *cg, IrStmt *s, Buffer ***v, int *n, int *cap)
{
	if (!s)
		return;
	switch (s->kind) {
	case IS_ALLOCATE:
		*ARENA_PUSH(ir_arena, *v, *n, *cap) = s->alloc.buf;
		collect_allocs(cg, s->alloc.body, v, n, cap);
		break;
	case IS_FOR: collect_allocs(cg, s->loop.body, v, n, cap); break;
	case IS_LET: collect_allocs(cg, s->let.body, v, n, cap); break;
	case IS_PRODUCE: collect_allocs(cg, s->produce.body, v, n, cap); break;
	case IS_IF:
		collect_allocs(cg, s->ifs.then_s, v, n, cap);
		collect_allocs(cg, s->ifs.else_s, v, n, cap);
		break;
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++)
			collect_allocs(cg, s->block.stmts[i], v, n, cap);
		break;
	default:
		break;
	}
}

void
cg_alias_scopes(Cg *cg, IrFunc *f)
{
	Buffer **v = NULL;
	int n = 0, cap = 0;
	char name[256];

	for (int i = 0; i < f->nargs; i++)
		*ARENA_PUSH(ir_arena, v, n, cap) = f->args[i];
	collect_allocs(cg, f->body, &v, &n, &cap);
	cg->scoped = v;
	cg->nscoped = n;
	cg->scopes = arena_alloc(ir_arena, (n + 1) * sizeof *cg->scopes);
	snprintf(name, sizeof name, "txc.%s", f->name);
	LLVMMetadataRef dname = LLVMMDStringInContext2(cg->ctx, name, strlen(name));
	cg->scope_domain = LLVMMDNodeInContext2(cg->ctx, &dname, 1);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "txc.%s.%s.%d", f->name, v[i]->name, i);
		LLVMMetadataRef ops[2] = {
			LLVMMDStringInContext2(cg->ctx, name, strlen(name)), cg->scope_domain
		};
		cg->scopes[i] = LLVMMDNodeInContext2(cg->ctx, ops, 2);
	}
}

static unsigned
elem_align(ScalarType t)
{
	int bits = ir_bits(t);
	return bits < 8 ? 1 : (unsigned)bits / 8;
}

/* A scalar access's alignment: the target's proof (CgHooks.align), at
 * least its element's. */
static unsigned
access_align(Cg *cg, Buffer *b, IrExpr **idx, int nidx)
{
	unsigned a = elem_align(b->elem), h = 0;
	if (cg->hooks && cg->hooks->align)
		h = cg->hooks->align(cg, b, idx, nidx);
	return h > a ? h : a;
}

static LLVMValueRef
i32c(Cg *cg, unsigned v)
{
	return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), v, 0);
}

/* The mask of a vector access: its predicate and the select mask. */
static LLVMValueRef
access_mask(Cg *cg, IrExpr *pred, int lanes)
{
	LLVMValueRef m = pred ? cg_expr(cg, pred) : NULL;

	if (lanes == 1)
		return m;
	if (cg->mask)
		m = m ? LLVMBuildAnd(cg->b, m, cg->mask, "") : cg->mask;
	return m;
}

static LLVMValueRef
from_mem(Cg *cg, LLVMValueRef v, ScalarType t)
{
	if (t != TY_BOOL)
		return v;
	return LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

static LLVMValueRef
to_mem(Cg *cg, LLVMValueRef v, IrType t)
{
	if (t.code != TY_BOOL)
		return v;
	return LLVMBuildZExt(cg->b, v, cg_mem_type(cg, t), "");
}

/* The element of b at ptr when p (an i1) holds, else 0: a branch around
 * the load. */
static LLVMValueRef
pred_load(Cg *cg, Buffer *b, LLVMValueRef ptr, LLVMValueRef p)
{
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem);
	LLVMBasicBlockRef from = LLVMGetInsertBlock(cg->b);
	LLVMBasicBlockRef lb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "pload");
	LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "pload.j");
	LLVMValueRef v, phi;

	LLVMBuildCondBr(cg->b, p, lb, jb);
	LLVMPositionBuilderAtEnd(cg->b, lb);
	v = LLVMBuildLoad2(cg->b, et, ptr, b->name);
	LLVMSetAlignment(v, elem_align(b->elem));
	tag(cg, v, b);
	LLVMBuildBr(cg->b, jb);
	LLVMPositionBuilderAtEnd(cg->b, jb);
	phi = LLVMBuildPhi(cg->b, et, "");
	LLVMValueRef vals[2] = { v, LLVMConstNull(et) };
	LLVMBasicBlockRef bbs[2] = { lb, from };
	LLVMAddIncoming(phi, vals, bbs, 2);
	return phi;
}

/* Lanes base[off + 2 i] (a stride-2 read: a convolution of stride 2, a
 * downsampling) as one dense masked load of 2 * lanes elements, the even
 * ones on (under mask, when there is one), and a shuffle of the even
 * lanes, as Halide deinterleaves: on x86 a gather is one load per lane
 * (and 64-bit offsets), this two or four vmaskmovps and a few shuffles.
 * The odd lanes are never read, so nothing past the last element is
 * touched. */
static LLVMValueRef
load_stride2(Cg *cg, Buffer *b, LLVMValueRef base, LLVMValueRef off, LLVMValueRef mask,
    int lanes)
{
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem), wt = LLVMVectorType(et, 2 * lanes);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i1 = LLVMInt1TypeInContext(cg->ctx);
	LLVMValueRef *wide = arena_alloc(ir_arena, 2 * lanes * sizeof *wide);
	LLVMValueRef *even = arena_alloc(ir_arena, lanes * sizeof *even), wmask, v;

	for (int j = 0; j < 2 * lanes; j++)
		wide[j] = mask ? LLVMConstInt(i32, j % 2 ? (unsigned)lanes : (unsigned)j / 2, 0) :
		    LLVMConstInt(i1, j % 2 == 0, 0);
	if (mask)      /* lane j of the wide mask: mask[j / 2] for even j, else off */
		wmask = LLVMBuildShuffleVector(cg->b, mask,
		    LLVMConstNull(LLVMTypeOf(mask)), LLVMConstVector(wide, 2 * lanes), "");
	else
		wmask = LLVMConstVector(wide, 2 * lanes);
	LLVMValueRef ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
	LLVMTypeRef over[2] = { wt, LLVMTypeOf(ptr) };
	LLVMValueRef args[4] = { ptr, i32c(cg, elem_align(b->elem)), wmask, LLVMConstNull(wt) };
	v = cg_call_intrinsic(cg, "llvm.masked.load", over, 2, args, 4);
	tag(cg, v, b);
	for (int l = 0; l < lanes; l++)
		even[l] = LLVMConstInt(i32, (unsigned)(2 * l), 0);
	return LLVMBuildShuffleVector(cg->b, v, LLVMGetPoison(wt), LLVMConstVector(even, lanes),
	    "even");
}

LLVMValueRef
cg_load(Cg *cg, IrExpr *e)
{
	Buffer *b = e->load.buf;
	int lanes = e->type.lanes;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem), vt = cg_mem_type(cg, e->type);
	LLVMValueRef base = cg_lookup_buf(cg, b), off, mask, v, ptr;
	unsigned align = elem_align(b->elem);
	int64_t step;

	cg->fn->work++;
	if (lanes == 1) {
		offsets(cg, b, e->load.idx, e->load.nidx, 1, &off, &step);
		ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
		LLVMValueRef p = e->a ? cg_expr(cg, e->a) : NULL;
		if (cg->hooks && cg->hooks->access)
			cg->hooks->access(cg, b, base, off, p, false);
		if (!p) {
			v = LLVMBuildLoad2(cg->b, et, ptr, b->name);
			LLVMSetAlignment(v, access_align(cg, b, e->load.idx, e->load.nidx));
			tag(cg, v, b);
			return from_mem(cg, v, b->elem);
		}
		return from_mem(cg, pred_load(cg, b, ptr, p), b->elem);
	}
	mask = access_mask(cg, e->a, lanes);
	if (offsets(cg, b, e->load.idx, e->load.nidx, lanes, &off, &step)) {
		if (step == 1) {
			ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
			if (!mask) {
				v = LLVMBuildLoad2(cg->b, vt, ptr, b->name);
				LLVMSetAlignment(v, align);
			} else {
				LLVMTypeRef over[2] = { vt, LLVMTypeOf(ptr) };
				LLVMValueRef args[4] = { ptr, i32c(cg, align), mask, LLVMConstNull(vt) };
				v = cg_call_intrinsic(cg, "llvm.masked.load", over, 2, args, 4);
			}
			tag(cg, v, b);
			return from_mem(cg, v, b->elem);
		}
		if (step == 0 && !mask) {
			ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
			v = LLVMBuildLoad2(cg->b, et, ptr, b->name);
			LLVMSetAlignment(v, align);
			tag(cg, v, b);
			return from_mem(cg, cg_broadcast(cg, v, lanes), b->elem);
		}
		if (step == 0) {
			/* one element for every lane, under a mask: one scalar
			 * load when any lane is on (a gather of one address costs
			 * eight loads, and LLVM keeps it), broadcast, 0 in the
			 * lanes that are off, as a masked load leaves them */
			LLVMTypeRef mt = LLVMTypeOf(mask);
			LLVMValueRef any = cg_call_intrinsic(cg, "llvm.vector.reduce.or", &mt, 1,
			    &mask, 1);
			ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
			v = cg_broadcast(cg, pred_load(cg, b, ptr, any), lanes);
			return from_mem(cg, LLVMBuildSelect(cg->b, mask, v, LLVMConstNull(vt), ""),
			    b->elem);
		}
		if (step == 2 && lanes <= 16)
			return from_mem(cg, load_stride2(cg, b, base, off, mask, lanes), b->elem);
		/* a constant stride: offsets base + lane * step */
		LLVMValueRef *elts = arena_alloc(ir_arena, lanes * sizeof *elts);
		for (int l = 0; l < lanes; l++)
			elts[l] = i64c(cg, l * step);
		off = LLVMBuildAdd(cg->b, cg_broadcast(cg, off, lanes),
		    LLVMConstVector(elts, lanes), "");
	}
	ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
	if (!mask)
		mask = cg_const_int(cg, ir_type(TY_BOOL, lanes), 1);
	LLVMTypeRef over[2] = { vt, LLVMTypeOf(ptr) };
	LLVMValueRef args[4] = { ptr, i32c(cg, align), mask, LLVMConstNull(vt) };
	v = cg_call_intrinsic(cg, "llvm.masked.gather", over, 2, args, 4);
	tag(cg, v, b);
	return from_mem(cg, v, b->elem);
}

/* Store s of v, its value already computed (in memory form). */
static void
store_value(Cg *cg, IrStmt *s, LLVMValueRef v)
{
	Buffer *b = s->store.buf;
	IrType t = s->store.value->type;
	int lanes = t.lanes;
	LLVMTypeRef et = cg_elem_mem_type(cg, b->elem), vt = cg_mem_type(cg, t);
	LLVMValueRef base = cg_lookup_buf(cg, b), off, mask, ptr, st;
	unsigned align = elem_align(b->elem);
	int64_t step;

	cg->fn->work++;
	if (lanes == 1) {
		LLVMBasicBlockRef jb = NULL;
		if (s->store.pred) {
			LLVMValueRef p = cg_expr(cg, s->store.pred);
			if (cg->hooks && cg->hooks->access) {
				offsets(cg, b, s->store.idx, s->store.nidx, 1, &off, &step);
				cg->hooks->access(cg, b, base, off, p, true);
			}
			LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "pstore");
			jb = LLVMAppendBasicBlockInContext(cg->ctx, cg->fn->fn, "pstore.j");
			LLVMBuildCondBr(cg->b, p, sb, jb);
			LLVMPositionBuilderAtEnd(cg->b, sb);
		}
		offsets(cg, b, s->store.idx, s->store.nidx, 1, &off, &step);
		ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
		if (cg->hooks && cg->hooks->access && !s->store.pred)
			cg->hooks->access(cg, b, base, off, NULL, true);
		st = LLVMBuildStore(cg->b, v, ptr);
		LLVMSetAlignment(st, access_align(cg, b, s->store.idx, s->store.nidx));
		tag(cg, st, b);
		if (jb) {
			LLVMBuildBr(cg->b, jb);
			LLVMPositionBuilderAtEnd(cg->b, jb);
		}
		return;
	}
	mask = access_mask(cg, s->store.pred, lanes);
	if (offsets(cg, b, s->store.idx, s->store.nidx, lanes, &off, &step)) {
		if (step == 1) {
			ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
			if (!mask) {
				st = LLVMBuildStore(cg->b, v, ptr);
				LLVMSetAlignment(st, align);
			} else {
				LLVMTypeRef over[2] = { vt, LLVMTypeOf(ptr) };
				LLVMValueRef args[4] = { v, ptr, i32c(cg, align), mask };
				st = cg_call_intrinsic(cg, "llvm.masked.store", over, 2, args, 4);
			}
			tag(cg, st, b);
			return;
		}
		LLVMValueRef *elts = arena_alloc(ir_arena, lanes * sizeof *elts);
		for (int l = 0; l < lanes; l++)
			elts[l] = i64c(cg, l * step);
		off = LLVMBuildAdd(cg->b, cg_broadcast(cg, off, lanes),
		    LLVMConstVector(elts, lanes), "");
	}
	/* a scatter stores lanes in order, so the last of equal addresses wins */
	ptr = LLVMBuildGEP2(cg->b, et, base, &off, 1, "");
	if (!mask)
		mask = cg_const_int(cg, ir_type(TY_BOOL, lanes), 1);
	LLVMTypeRef over[2] = { vt, LLVMTypeOf(ptr) };
	LLVMValueRef args[4] = { v, ptr, i32c(cg, align), mask };
	st = cg_call_intrinsic(cg, "llvm.masked.scatter", over, 2, args, 4);
	tag(cg, st, b);
}

void
cg_store(Cg *cg, IrStmt *s)
{
	store_value(cg, s, to_mem(cg, cg_expr(cg, s->store.value), s->store.value->type));
}

/* A square tile transposed: n >= L stores in a row (an unrolled loop
 * around a vectorized one), store k of L lanes writing x[b + k + l T] in
 * lane l (one buffer x, the same base b, a stride T other than 0 and 1 if
 * constant, or the same expression in every store if known only at run
 * time; its own destination any other buffer), as NCHW16c -> NCHW or a
 * 2-D transpose are written.  Each store's read would be a gather, one
 * load per lane; here the tile's L rows x[b + l T .. b + l T + L - 1] are
 * L dense loads, and L log2 L two-input shuffles turn rows into columns:
 * at distances d = 1, 2, 4 ..., rows i and i + d (bit d of i clear) trade
 * the elements whose column has bit d set in row i and clear in row i + d,
 * which swaps bit d of row and column for every element where the two
 * differ: after all bits, element (l, k) is at (k, l).  The rows read only
 * elements the stores read (no predicate on any), and every load comes
 * before every store, which needs x apart from the destinations (buffers
 * never alias: their alias scopes say so).  Returns the number of
 * statements emitted (L), or 0 where the group does not fit: then each
 * statement is emitted as it is. */
int
cg_store_transposed(Cg *cg, IrStmt **s, int n)
{
	IrExpr *v0, *base0 = NULL, *Tx = NULL;
	int64_t T = 0;
	int L;

	if (n < 4 || s[0]->kind != IS_STORE || cg->mask || (cg->hooks && cg->hooks->access))
		return 0;
	v0 = s[0]->store.value;
	L = v0->type.lanes;
	if ((L != 4 && L != 8 && L != 16) || n < L || v0->kind != IR_LOAD ||
	    v0->load.buf->elem == TY_BOOL)
		return 0;
	Buffer *x = v0->load.buf;
	for (int k = 0; k < L; k++) {
		IrStmt *st = s[k];
		IrExpr *v = st->kind == IS_STORE ? st->store.value : NULL, *b, *ix, *tx = NULL;
		int64_t step = 0, d;
		if (!v || st->store.pred || v->kind != IR_LOAD || v->a || v->load.buf != x ||
		    st->store.buf == x || !ir_type_eq(v->type, v0->type) || v->load.nidx != 1)
			return 0;
		ix = v->load.idx[0];
		if (ix->kind == IR_RAMP && !ir_is_const(ix->b, &step) && ix->a->type.lanes == 1) {
			b = ix->a;     /* a stride known at run time (a row length) */
			tx = ix->b;
		} else if (!affine(ix, &b, &step) || step == 0 || step == 1) {
			return 0;
		}
		if (k == 0) {
			base0 = b;
			T = step;
			Tx = tx;
		} else if (!tx != !Tx || (tx ? !ir_expr_equal(tx, Tx) : step != T) ||
		    !ir_is_const(lin_normalize(ir_sub(b, base0)), &d) || d != k) {
			return 0;
		}
	}
	LLVMTypeRef et = cg_elem_mem_type(cg, x->elem), vt = LLVMVectorType(et, (unsigned)L);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
	LLVMValueRef m[16], sa[16], sb[16], xb = cg_lookup_buf(cg, x);
	LLVMValueRef off0 = cg_index(cg, base0, 1), tv = Tx ? cg_index(cg, Tx, 1) : NULL;
	for (int l = 0; l < L; l++) {
		LLVMValueRef off = LLVMBuildAdd(cg->b, off0, tv ? LLVMBuildMul(cg->b, tv,
		    i64c(cg, l), "") : i64c(cg, l * T), "");
		LLVMValueRef ptr = LLVMBuildGEP2(cg->b, et, xb, &off, 1, "");
		m[l] = LLVMBuildLoad2(cg->b, vt, ptr, "row");
		LLVMSetAlignment(m[l], elem_align(x->elem));
		tag(cg, m[l], x);
	}
	for (int d = 1; d < L; d <<= 1) {
		for (int k = 0; k < L; k++) {
			sa[k] = LLVMConstInt(i32, (unsigned)(k & d ? L + k - d : k), 0);
			sb[k] = LLVMConstInt(i32, (unsigned)(k & d ? L + k : k + d), 0);
		}
		LLVMValueRef ma = LLVMConstVector(sa, (unsigned)L), mb = LLVMConstVector(sb, (unsigned)L);
		for (int i = 0; i < L; i++) {
			if (i & d)
				continue;
			LLVMValueRef a = m[i], b = m[i + d];
			m[i] = LLVMBuildShuffleVector(cg->b, a, b, ma, "");
			m[i + d] = LLVMBuildShuffleVector(cg->b, a, b, mb, "");
		}
	}
	for (int k = 0; k < L; k++) {
		if (s[k]->loc.file)
			cg_debug_loc(cg, s[k]->loc);
		store_value(cg, s[k], m[k]);
	}
	return L;
}

LLVMValueRef
cg_buffer_elems(Cg *cg, Buffer *b)
{
	LLVMValueRef n = i64c(cg, 1);

	for (int d = 0; d < b->ndims; d++)
		n = LLVMBuildMul(cg->b, n, cg_index(cg, b->extent[d], 1), "");
	return n;
}
