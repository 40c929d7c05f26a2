/* vta_dma.c: copies between DRAM and VTA's on-chip buffers as LOAD and
 * STORE instructions (TVM's InjectDMAIntrin).
 *
 * A copy nest's leaf is `buf[d] = src[s]` (a LOAD: buf on chip, src in
 * DRAM, perhaps widened from int8 into acc, perhaps `cond ? src[s] : 0`
 * for a pad stage) or `dram[d] = acc[s]` (a STORE, after the epilogue's
 * ALU work).  With the enclosing loops' values known, d and s are affine
 * in the nest's loops; the innermost loops must move whole elements (16
 * contiguous int8 or int32, a 16 x 16 weight tile), and the loops outside
 * them become the DMA's two dimensions: x, a row of consecutive elements
 * on both sides, and y, rows at a DRAM pitch that follow each other in
 * SRAM.  Loops the two cannot hold become one instruction per iteration.
 * The pad condition's comparisons, each in one loop, give the zero
 * padding before and after x and y (4 bits each); a guard (a partial tile)
 * shrinks the ranges instead.  What the DMA cannot express -- an element
 * split across DRAM, an address that is not a whole element, padding inside
 * an element or in two loops at once -- is an error naming the stage.
 */
#include <string.h>

#include "target/vta/vta.h"

typedef struct {
	int64_t ext;
	int64_t dstep, sstep;       /* in elements */
	int64_t plo, phi;           /* valid (not padding): [plo, phi] */
	int64_t glo, ghi;           /* inside the guard: [glo, ghi] */
	int loop;                   /* its loop in the nest, -1: made by a split */
	bool cond;                  /* named by a condition */
} Dim;

typedef struct {
	VtaRun *R;
	const char *what;
	Loc loc;
	bool store;
	int mem;                    /* TXRT_VTA_MEM_* */
	int sram;                   /* VTA_SRAM_* */
	int lanes;
	int64_t sram_base;          /* the on-chip buffer's first element */
	int region;                 /* the DRAM region */
	Dim dim[VTA_MAXL + 1];
	int nd;
	int64_t d0, s0;             /* elements at the nest's origin */
	bool empty;                 /* the pad condition is false everywhere */
	bool skip;                  /* the guard is: nothing to copy */
	bool quiet;                 /* a failure that fewer loops may avoid is not reported */
	bool retry;                 /* ... and happened: run the outer loop here */
} Plan;

/* A failure that running the nest's outer loop here (one instruction per
 * iteration) may avoid. */
static bool
again(Plan *P, const char *msg)
{
	if (P->quiet) {
		P->retry = true;
		return false;
	}
	diag_error(P->loc, "cannot copy '%s' with VTA's DMA: %s", P->what, msg);
	return false;
}

static bool
fail(Plan *P, const char *msg)
{
	diag_error(P->loc, "cannot copy '%s' with VTA's DMA: %s", P->what, msg);
	return false;
}

/* {v : c v + k op 0} as [lo, hi] (integers). */
static void
solve(int64_t c, int64_t k, IrExprKind op, int64_t *lo, int64_t *hi)
{
	/* c v + k >= 0 (or <= 0) */
	if (op == IR_LT) {
		k += 1;
		op = IR_LE;
	} else if (op == IR_GT) {
		k -= 1;
		op = IR_GE;
	}
	if (c < 0) {
		c = -c;
		k = -k;
		op = op == IR_GE ? IR_LE : op == IR_LE ? IR_GE : op;
	}
	/* c > 0: v >= ceil(-k / c) or v <= floor(-k / c) */
	if (op == IR_GE || op == IR_EQ) {
		int64_t b = -fold_floordiv(k, c);
		*lo = b > *lo ? b : *lo;
	}
	if (op == IR_LE || op == IR_EQ) {
		int64_t b = fold_floordiv(-k, c);
		*hi = b < *hi ? b : *hi;
	}
}

/* Narrows the loops' ranges by cond's conjuncts: pad (a select's
 * condition) or guard. */
static bool
ranges(Plan *P, IrExpr *cond, Var **vars, int n, int64_t *mins, VtaEnv *env, int64_t *lo,
    int64_t *hi, bool *never)
{
	IrExpr *cj[32];
	int k = vta_conjuncts(cond, cj, 32);
	if (k < 0)
		return fail(P, "its condition has too many parts");
	for (int i = 0; i < k; i++) {
		IrExpr *c = cj[i];
		VtaAff a, b;
		if (c->kind < IR_EQ || c->kind > IR_GE || c->kind == IR_NE ||
		    !vta_affine(c->a, env, vars, n, &a) || !vta_affine(c->b, env, vars, n, &b))
			return fail(P, arena_printf(ir_arena, "its condition %s is not a comparison "
			    "of one loop with a bound", ir_expr_str(c)));
		int which = -1;
		int64_t kk = a.c0 - b.c0;
		for (int l = 0; l < n; l++) {
			int64_t cl = a.c[l] - b.c[l];
			if (!cl)
				continue;
			if (which >= 0)
				return again(P, arena_printf(ir_arena, "its condition %s involves two loops "
				    "('%s' and '%s'); the DMA pads each dimension on its own",
				    ir_expr_str(c), vars[which]->name, vars[l]->name));
			which = l;
		}
		if (which < 0) {
			if (!((c->kind == IR_EQ && kk == 0) || (c->kind == IR_LT && kk < 0) ||
			    (c->kind == IR_LE && kk <= 0) || (c->kind == IR_GT && kk > 0) ||
			    (c->kind == IR_GE && kk >= 0)))
				*never = true;
			continue;
		}
		int64_t cl = a.c[which] - b.c[which];
		/* in terms of t = v - min */
		solve(cl, kk + cl * mins[which], c->kind, &lo[which], &hi[which]);
	}
	return true;
}

/* The element dimensions of the nest; false after a diagnostic. */
static bool
plan(Plan *P, IrStmt **loops, int n, IrExpr *pad, IrExpr *guard, IrExpr *didx,
    IrExpr *sidx, VtaEnv *env)
{
	Var *vars[VTA_MAXL];
	int64_t mins[VTA_MAXL], exts[VTA_MAXL];
	int64_t plo[VTA_MAXL], phi[VTA_MAXL], glo[VTA_MAXL], ghi[VTA_MAXL];
	for (int l = 0; l < n; l++) {
		vars[l] = loops[l]->loop.var;
		if (!vta_eval(loops[l]->loop.min, env, &mins[l]) ||
		    !vta_eval(loops[l]->loop.extent, env, &exts[l]))
			return fail(P, "its loops' bounds are not known at compile time");
		plo[l] = glo[l] = 0;
		phi[l] = ghi[l] = exts[l] - 1;
	}
	VtaAff d, s;
	if (!vta_affine(didx, env, vars, n, &d) || !vta_affine(sidx, env, vars, n, &s))
		return fail(P, "an index is not affine in the copy's loops");
	if (!ranges(P, pad, vars, n, mins, env, plo, phi, &P->empty) ||
	    !ranges(P, guard, vars, n, mins, env, glo, ghi, &P->skip))
		return false;
	int64_t d0 = d.c0, s0 = s.c0;
	for (int l = 0; l < n; l++) {
		d0 += d.c[l] * mins[l];
		s0 += s.c[l] * mins[l];
	}
	/* the innermost loops: one element's lanes */
	int64_t acc = 1;
	int l = n - 1, L = P->lanes;
	int64_t outer_ext = 0;      /* a loop split between lanes and elements */
	while (acc < L) {
		if (l < 0)
			return fail(P, arena_printf(ir_arena, "its loops move %lld values at a time, "
			    "not whole elements of %d", (long long)acc, L));
		if (exts[l] == 1) {
			l--;
			continue;
		}
		if (d.c[l] != acc || s.c[l] != acc)
			return fail(P, arena_printf(ir_arena, "loop '%s' has strides %lld and %lld "
			    "where an element's %d values must be contiguous on both sides (the "
			    "packed layout keeps the 16 channels innermost)", vars[l]->name,
			    (long long)d.c[l], (long long)s.c[l], L));
		if (plo[l] != 0 || phi[l] != exts[l] - 1 || glo[l] != 0 || ghi[l] != exts[l] - 1)
			return fail(P, arena_printf(ir_arena, "loop '%s' inside an element is padded "
			    "or guarded; the DMA pads whole elements", vars[l]->name));
		if (acc * exts[l] <= L) {
			acc *= exts[l];
			l--;
			continue;
		}
		if (L % acc || exts[l] % (L / acc))
			return fail(P, arena_printf(ir_arena, "loop '%s' of %lld does not hold whole "
			    "elements of %d", vars[l]->name, (long long)exts[l], L));
		outer_ext = exts[l] / (L / acc);
		acc = L;
	}
	if (acc != L)
		return fail(P, "its innermost loops do not make whole elements");
	if (fold_floormod(d0, L) || fold_floormod(s0, L))
		return fail(P, arena_printf(ir_arena, "it starts at value %lld of the on-chip buffer "
		    "and %lld of DRAM, not at whole elements of %d", (long long)d0, (long long)s0, L));
	P->d0 = d0 / L;
	P->s0 = s0 / L;
	P->nd = 0;
	if (outer_ext) {
		/* the part of loop l+1's split that counts elements */
		int k = l + 1;
		P->dim[P->nd++] = (Dim){ outer_ext, 1, 1, 0, outer_ext - 1, 0, outer_ext - 1, -1, false };
		(void)k;
	}
	for (; l >= 0; l--) {
		if (exts[l] == 1 && !(plo[l] > 0 || phi[l] < 0 || glo[l] > 0 || ghi[l] < 0))
			continue;
		if (fold_floormod(d.c[l], L) || fold_floormod(s.c[l], L))
			return fail(P, arena_printf(ir_arena, "loop '%s' steps by %lld and %lld values, "
			    "not whole elements of %d", vars[l]->name, (long long)d.c[l],
			    (long long)s.c[l], L));
		if (d.c[l] < 0 || s.c[l] < 0)
			return again(P, arena_printf(ir_arena, "loop '%s' runs backwards; VTA's strides "
			    "are unsigned", vars[l]->name));
		if (P->nd >= VTA_MAXL)
			return fail(P, "too many loops");
		P->dim[P->nd++] = (Dim){ exts[l], d.c[l] / L, s.c[l] / L, plo[l], phi[l], glo[l],
		    ghi[l], l, plo[l] != 0 || phi[l] != exts[l] - 1 || glo[l] != 0 ||
		    ghi[l] != exts[l] - 1 };
	}
	/* dim[0] is the innermost now; merge a loop into the one inside it when
	 * the two are contiguous on both sides and neither is narrowed */
	int w = 0;
	for (int i = 0; i < P->nd; i++) {
		Dim *o = &P->dim[i];
		if (w > 0) {
			Dim *in = &P->dim[w - 1];
			if (!o->cond && !in->cond && o->dstep == in->ext * in->dstep &&
			    o->sstep == in->ext * in->sstep) {
				in->ext *= o->ext;
				in->phi = in->ghi = in->ext - 1;
				continue;
			}
		}
		P->dim[w++] = *o;
	}
	P->nd = w;
	return true;
}

static bool
fits(Plan *P, int64_t v, int bits, const char *field)
{
	if (v >= 0 && v < ((int64_t)1 << bits))
		return true;
	return fail(P, arena_printf(ir_arena, "its %s %lld does not fit the instruction's %d bits",
	    field, (long long)v, bits));
}

static VtaInsn *
insn(Plan *P)
{
	VtaInsn *in = vta_push(P->R, P->store ? TXRT_VTA_STORE : TXRT_VTA_LOAD, P->what);
	in->in.mem_type = P->mem;
	return in;
}

/* A LOAD of rows*cols zero elements at SRAM element at, in pieces of 15
 * rows: rows of the stream's region of zeros.  Never a LOAD of no rows
 * (y_size 0, the rows all padding), whose DRAM address lies in no region:
 * upstream's fsim resolves the address before it looks at the size, and
 * the hardware's row loops would run 65535 times. */
static bool
zeros(Plan *P, int64_t at, int64_t rows, int64_t cols)
{
	int64_t eb = P->mem == TXRT_VTA_MEM_WGT ? 256 : P->mem == TXRT_VTA_MEM_ACC ? 64 : 16;
	while (rows > 0) {
		int64_t r = rows > 15 ? 15 : rows;
		if (!fits(P, cols, 16, "row length"))
			return false;
		int z = vta_dram_zeros(P->R, (uint64_t)(r * cols * eb));
		VtaInsn *in = insn(P);
		in->in.sram_base = (uint32_t)at;
		in->in.dram_base = 0;        /* the zeros' first element (relocated) */
		in->in.x_size = in->in.x_stride = (uint32_t)cols;
		in->in.y_size = (uint32_t)r;
		in->foot.wlo[P->sram] = at;
		in->foot.whi[P->sram] = at + r * cols - 1;
		in->foot.dram_read = z;
		at += r * cols;
		rows -= r;
	}
	return true;
}

/* One instruction for the box (x, y) at the outer dims' point. */
static bool
box(Plan *P, Dim *x, Dim *y, int64_t dbase, int64_t sbase)
{
	int64_t xlo = x->plo > x->glo ? x->plo : x->glo, xhi = x->phi < x->ghi ? x->phi : x->ghi;
	int64_t ylo = y->plo > y->glo ? y->plo : y->glo, yhi = y->phi < y->ghi ? y->phi : y->ghi;
	if (P->store) {
		/* a guard shrinks the box; rows must follow each other in acc */
		int64_t xs = x->ghi - x->glo + 1, ys = y->ghi - y->glo + 1;
		if (xs <= 0 || ys <= 0)
			return true;
		int64_t src = P->sram_base + sbase + x->glo * x->sstep + y->glo * y->sstep;
		int64_t dst = dbase + x->glo * x->dstep + y->glo * y->dstep;
		if (!fits(P, src, 16, "acc index") || !fits(P, dst, 32, "DRAM element") ||
		    !fits(P, xs, 16, "row length") || !fits(P, ys, 16, "row count") ||
		    !fits(P, ys > 1 ? y->dstep : xs, 16, "DRAM pitch"))
			return false;
		VtaInsn *in = insn(P);
		in->in.sram_base = (uint32_t)src;
		in->in.dram_base = (uint32_t)dst;
		in->in.x_size = (uint32_t)xs;
		in->in.y_size = (uint32_t)ys;
		in->in.x_stride = (uint32_t)(ys > 1 ? y->dstep : xs);
		in->foot.rlo[VTA_SRAM_ACC] = src;
		in->foot.rhi[VTA_SRAM_ACC] = src + xs * ys - 1;
		in->foot.dram_write = P->region;
		return true;
	}
	/* a LOAD writes the whole box in SRAM, padding included */
	int64_t xt = x->ghi - x->glo + 1, yt = y->ghi - y->glo + 1;
	if (xt <= 0 || yt <= 0)
		return true;
	int64_t at = P->sram_base + dbase + x->glo * x->dstep + y->glo * y->dstep;
	if (P->empty || xlo > xhi || ylo > yhi)
		return zeros(P, at, yt, xt);
	int64_t xp0 = xlo - x->glo, xp1 = x->ghi - xhi, yp0 = ylo - y->glo, yp1 = y->ghi - yhi;
	if (xp0 > 15 || xp1 > 15)
		return fail(P, arena_printf(ir_arena, "it pads %lld elements %s a row; the DMA pads "
		    "at most 15 (a narrower tile pads less)", (long long)(xp0 > 15 ? xp0 : xp1),
		    xp0 > 15 ? "before" : "after"));
	/* rows of padding beyond 15 go first and last, on their own */
	if (yp0 > 15) {
		if (!zeros(P, at, yp0 - 15, xt))
			return false;
		at += (yp0 - 15) * xt;
		yp0 = 15;
	}
	int64_t tail = yp1 > 15 ? yp1 - 15 : 0;
	yp1 -= tail;
	int64_t rows = yhi - ylo + 1, cols = xhi - xlo + 1;
	int64_t src = sbase + xlo * x->sstep + ylo * y->sstep;
	if (!fits(P, at, 16, "SRAM index") || !fits(P, src, 32, "DRAM element") ||
	    !fits(P, cols, 16, "row length") || !fits(P, rows, 16, "row count") ||
	    !fits(P, rows > 1 ? y->sstep : cols, 16, "DRAM pitch"))
		return false;
	VtaInsn *in = insn(P);
	in->in.sram_base = (uint32_t)at;
	in->in.dram_base = (uint32_t)src;
	in->in.x_size = (uint32_t)cols;
	in->in.y_size = (uint32_t)rows;
	in->in.x_stride = (uint32_t)(rows > 1 ? y->sstep : cols);
	in->in.x_pad0 = (uint32_t)xp0;
	in->in.x_pad1 = (uint32_t)xp1;
	in->in.y_pad0 = (uint32_t)yp0;
	in->in.y_pad1 = (uint32_t)yp1;
	int64_t n = (xp0 + cols + xp1) * (yp0 + rows + yp1);
	in->foot.wlo[P->sram] = at;
	in->foot.whi[P->sram] = at + n - 1;
	in->foot.dram_read = P->region;
	if (tail)
		return zeros(P, at + n, tail, xt);
	return true;
}

/* The instructions: x and y from the innermost dims, the rest iterated. */
static bool
emit(Plan *P)
{
	if (P->skip)
		return true;
	Dim unit = { 1, 1, 1, 0, 0, 0, 0, -1, false };
	int i = 0;
	Dim *x = &unit, *y = &unit;
	/* x: consecutive elements on both sides and no guard (a guarded row
	 * would leave holes between the rows in SRAM) */
	if (P->nd > 0 && P->dim[0].dstep == 1 && P->dim[0].sstep == 1)
		x = &P->dim[i++];
	int64_t xw = x->ghi - x->glo + 1;
	if (xw <= 0 || (y != &unit && y->glo > y->ghi))
		return true;     /* the guard leaves nothing */
	/* y: rows that follow each other on the on-chip side */
	if (i < P->nd) {
		Dim *c = &P->dim[i];
		int64_t pitch = P->store ? c->sstep : c->dstep;
		bool whole = x->glo == 0 && x->ghi == x->ext - 1;
		if (pitch == xw && (whole || x == &unit))
			y = &P->dim[i++];
	}
	int nouter = P->nd - i;
	Dim *outer = &P->dim[i];
	int64_t idx[VTA_MAXL] = { 0 };
	for (int o = 0; o < nouter; o++)
		if (outer[o].glo > outer[o].ghi)
			return true;
	for (int o = 0; o < nouter; o++)
		idx[o] = outer[o].glo;
	for (;;) {
		int64_t db = P->d0, sb = P->s0;
		bool padded = false;
		for (int o = 0; o < nouter; o++) {
			db += idx[o] * outer[o].dstep;
			sb += idx[o] * outer[o].sstep;
			padded |= idx[o] < outer[o].plo || idx[o] > outer[o].phi;
		}
		if (padded && !P->store) {
			int64_t at = P->sram_base + db + x->glo * x->dstep + y->glo * y->dstep;
			if (!zeros(P, at, y->ghi - y->glo + 1, xw))
				return false;
		} else if (!padded && !box(P, x, y, db, sb)) {
			return false;
		}
		int o = 0;
		while (o < nouter && ++idx[o] > outer[o].ghi) {
			idx[o] = outer[o].glo;
			o++;
		}
		if (o == nouter)
			return true;
	}
}

/* The copy of the nest: planned whole, or, when a condition or a
 * backwards step keeps the DMA from expressing its outer loop, with that
 * loop run here (an instruction or more per iteration) and the rest
 * planned again. */
static bool
copy(Plan *proto, IrStmt **loops, int n, IrExpr *pad, IrExpr *guard, IrExpr *didx,
    IrExpr *sidx, VtaEnv *env)
{
	Plan P = *proto;
	P.quiet = n > 1;
	if (plan(&P, loops, n, pad, guard, didx, sidx, env))
		return emit(&P);
	if (!P.retry)
		return false;
	int64_t min, ext;
	if (!vta_eval(loops[0]->loop.min, env, &min) || !vta_eval(loops[0]->loop.extent, env, &ext))
		return fail(&P, "its loops' bounds are not known at compile time");
	for (int64_t i = 0; i < ext; i++)
		if (!copy(proto, loops + 1, n - 1, pad, guard, didx, sidx,
		    vta_bind(env, loops[0]->loop.var, min + i)))
			return false;
	return true;
}

/* The value of a LOAD's leaf: the DRAM load, perhaps widened, perhaps
 * under a pad condition. */
static IrExpr *
dram_load(IrExpr *v, IrExpr **pad, bool *widen)
{
	*pad = NULL;
	*widen = false;
	int64_t z;
	if (v->kind == IR_SELECT && ir_is_const(v->c, &z) && z == 0) {
		*pad = v->a;
		v = v->b;
	}
	if (v->kind == IR_CAST && ir_is_int(v->type) && ir_is_int(v->a->type)) {
		*widen = ir_bits(v->a->type.code) < ir_bits(v->type.code);
		v = v->a;
	}
	if (v->kind != IR_LOAD || v->load.nidx != 1 || vta_sram_of(v->load.buf->scope) >= 0)
		return NULL;
	return v;
}

bool
vta_dma_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf, VtaEnv *env)
{
	if (leaf->kind != IS_STORE || leaf->store.pred)
		return false;
	Buffer *b = leaf->store.buf;
	int sram = vta_sram_of(b->scope);
	if (sram < 0)
		return false;
	IrExpr *pad;
	bool widen;
	IrExpr *ld = dram_load(leaf->store.value, &pad, &widen);
	if (!ld)
		return false;
	Plan P;
	memset(&P, 0, sizeof P);
	P.R = R;
	P.what = b->name;
	P.loc = b->scope_loc.file ? b->scope_loc : leaf->loc;
	P.sram = sram;
	P.lanes = vta_lanes(b->scope);
	Buffer *src = ld->load.buf;
	if (sram == VTA_SRAM_ACC) {
		if (b->elem != TY_I32 || (src->elem != TY_I32 && src->elem != TY_I8) ||
		    (src->elem == TY_I8) != widen)
			return fail(&P, arena_printf(ir_arena, "acc holds int32, loaded from int32 or "
			    "int8 tensors; this copies %s into %s", type_name(src->elem),
			    type_name(b->elem))), true;
		P.mem = src->elem == TY_I8 ? TXRT_VTA_MEM_ACC8 : TXRT_VTA_MEM_ACC;
	} else {
		if (b->elem != TY_I8 || src->elem != TY_I8 || widen)
			return fail(&P, arena_printf(ir_arena, "%s holds int8, copied from int8 tensors; "
			    "this copies %s into %s", sram == VTA_SRAM_INP ? "inp" : "wgt",
			    type_name(src->elem), type_name(b->elem))), true;
		P.mem = sram == VTA_SRAM_INP ? TXRT_VTA_MEM_INP : TXRT_VTA_MEM_WGT;
	}
	P.sram_base = vta_sram_base(R, b);
	P.region = vta_dram(R, src);
	vta_stream(R)->dram[P.region].read = true;
	copy(&P, loops, n, pad, guard, leaf->store.idx[0], ld->load.idx[0], env);
	return true;
}

bool
vta_dma_store(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, IrStmt *leaf, IrExpr *src,
    VtaEnv *env)
{
	Buffer *dst = leaf->store.buf, *acc = src->load.buf;
	Plan P;
	memset(&P, 0, sizeof P);
	P.R = R;
	P.what = dst->name;
	P.loc = leaf->loc.file ? leaf->loc : vta_stream(R)->loc;
	P.store = true;
	P.mem = TXRT_VTA_MEM_OUT;
	P.sram = VTA_SRAM_ACC;
	P.lanes = vta_lanes(SCOPE_VTA_ACC);
	if (dst->elem != TY_I8 && dst->elem != TY_U8)
		return fail(&P, arena_printf(ir_arena, "VTA stores int8 (the low 8 bits of each "
		    "accumulator); '%s' is %s: make the stored value i8(...)", dst->name,
		    type_name(dst->elem)));
	P.sram_base = vta_sram_base(R, acc);
	P.region = vta_dram(R, dst);
	vta_stream(R)->dram[P.region].written = true;
	/* d: DRAM, s: acc */
	return copy(&P, loops, n, NULL, guard, leaf->store.idx[0], src->load.idx[0], env);
}
