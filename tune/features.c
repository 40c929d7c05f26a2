/* features.c: what the cost model sees of a candidate: its loop nest.
 *
 * The nest is the one --print-loops shows (lowered up to simplify: loops
 * with their kinds, multi-dimensional accesses), read through lower/'s
 * public IR.  For every store, with the loops around it (AutoTVM's loop
 * features, Ansor's per-store ones):
 *
 *   - the iterations it runs, its depth, how many enclosing loops are
 *     parallel, vectorized, unrolled, serial; the innermost loop's extent
 *     and kind; the vector lanes; the unrolled product; the work outside
 *     the parallel loop and inside it;
 *   - its arithmetic: float and integer operations, loads, calls, selects,
 *     per iteration and in all;
 *   - for the stored buffer and the two most-read buffers: the stride of
 *     the innermost loop's variable in the access (elements, and whether
 *     it is 0, 1 or other), the reuse (the product of the enclosing loops
 *     that do not move the access), and the bytes and cache lines the
 *     innermost 1, 2, 3 and 4 loops touch.
 *
 * Counts are log2(1 + x).  A candidate's vector is the heaviest store's
 * features (most iterations), then the second's, then a few of the whole
 * nest (stores, allocations, their bytes, total work).
 */
#include <math.h>
#include <string.h>

#include "tune/tune.h"

#include "lower/ir.h"
#include "lower/lower.h"

enum { MAXDEPTH = 24, NBUF = 3, LEVELS = 4 };

/* Features of one store. */
enum {
	SF_ITERS, SF_DEPTH, SF_NPAR, SF_NVEC, SF_NUNROLL, SF_NSERIAL, SF_INNER_EXT,
	SF_INNER_VEC, SF_INNER_UNROLL, SF_INNER_PAR, SF_LANES, SF_UNROLLED, SF_OUTSIDE_PAR,
	SF_INSIDE_PAR, SF_FLOPS, SF_IOPS, SF_LOADS, SF_CALLS, SF_SELECTS, SF_FLOPS_ALL,
	SF_LOADS_ALL, SF_GUARDED,
	SF_BUF0,
	SF_PER_BUF = 6 + 2 * LEVELS,   /* stride, s0, s1, sother, reuse, bytes/elem, then levels */
	SF_COUNT = SF_BUF0 + NBUF * SF_PER_BUF,
};

enum { GF_STORES, GF_ALLOCS, GF_ALLOC_BYTES, GF_WORK, GF_COUNT };

const int features_count = 2 * SF_COUNT + GF_COUNT;

typedef struct {
	Var *var;
	double extent;        /* constant extent, or a guess (64) */
	ForKind fk;
} Loop;

typedef struct {
	IrVisitor v;
	Loop loops[MAXDEPTH];
	int depth;
	int guards;           /* enclosing ifs */
	float best[2][SF_COUNT];
	double best_iters[2];
	float global[GF_COUNT];
} Walk;

static double
lg(double x)
{
	return log2(1 + (x > 0 ? x : 0));
}

/* The coefficient of v in e, when e is linear in it; NAN when not known. */
static double
coef(IrExpr *e, Var *v)
{
	double a, b;
	int64_t c;
	switch (e->kind) {
	case IR_INT: case IR_FLOAT: return 0;
	case IR_VAR: return e->var == v;
	case IR_ADD: return coef(e->a, v) + coef(e->b, v);
	case IR_SUB: return coef(e->a, v) - coef(e->b, v);
	case IR_MUL:
		if (ir_is_const(e->a, &c))
			return (double)c * coef(e->b, v);
		if (ir_is_const(e->b, &c))
			return (double)c * coef(e->a, v);
		a = coef(e->a, v);
		b = coef(e->b, v);
		return a == 0 && b == 0 ? 0 : NAN;
	case IR_DIV:
		a = coef(e->a, v);
		if (a == 0)
			return 0;
		return ir_is_const(e->b, &c) && c != 0 ? a / (double)c : NAN;
	case IR_MOD:
		return coef(e->a, v) == 0 ? 0 : NAN;
	case IR_MIN: case IR_MAX: case IR_SELECT:
		a = coef(e->a, v);
		b = coef(e->b, v);
		return a == b ? a : NAN;
	case IR_CAST:
		return coef(e->a, v);
	case IR_RAMP: case IR_BROADCAST:
		return coef(e->a, v);
	default:
		return NAN;
	}
}

static double
const_or(IrExpr *e, double guess)
{
	int64_t c;
	return e && ir_is_const(e, &c) ? (double)c : guess;
}

/* Per buffer touched by one store. */
typedef struct {
	Buffer *buf;
	IrExpr **idx;
	int nidx;
	int reads;
} Access;

typedef struct {
	int flops, iops, loads, calls, selects;
	Access acc[16];
	int nacc;
} Count;

static void
count(IrExpr *e, Count *c)
{
	if (!e)
		return;
	bool fl = type_is_float(e->type.code);
	switch (e->kind) {
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_MIN:
	case IR_MAX:
		if (fl)
			c->flops += e->type.lanes;
		else
			c->iops += e->type.lanes;
		break;
	case IR_SELECT: c->selects++; break;
	case IR_CALL:
		c->calls++;
		for (int i = 0; i < e->call.nargs; i++)
			count(e->call.args[i], c);
		break;
	case IR_LOAD: {
		c->loads++;
		int i;
		for (i = 0; i < c->nacc && c->acc[i].buf != e->load.buf; i++)
			;
		if (i == c->nacc && c->nacc < 16) {
			c->acc[i].buf = e->load.buf;
			c->acc[i].idx = e->load.idx;
			c->acc[i].nidx = e->load.nidx;
			c->acc[i].reads = 0;
			c->nacc++;
		}
		if (i < c->nacc)
			c->acc[i].reads++;
		for (int j = 0; j < e->load.nidx; j++)
			count(e->load.idx[j], c);
		break;
	}
	default:
		break;
	}
	count(e->a, c);
	count(e->b, c);
	count(e->c, c);
}

/* The access's features at f[0..SF_PER_BUF). */
static void
access_features(Walk *w, Access *a, float *f)
{
	Buffer *b = a->buf;
	int esize = type_bits(b->elem) <= 8 ? 1 : type_bits(b->elem) / 8;
	/* row-major element strides of the dimensions */
	double dstride[16];
	double s = 1;
	int nd = a->nidx < 16 ? a->nidx : 16;
	for (int d = nd - 1; d >= 0; d--) {
		dstride[d] = s;
		s *= d < b->ndims ? const_or(b->extent[d], 64) : 1;
	}
	/* the flat stride of each enclosing loop's variable */
	double st[MAXDEPTH];
	for (int l = 0; l < w->depth; l++) {
		double t = 0;
		for (int d = 0; d < nd; d++)
			t += coef(a->idx[d], w->loops[l].var) * dstride[d];
		st[l] = t;
	}
	double inner = w->depth ? st[w->depth - 1] : 0;
	bool unknown = isnan(inner);
	f[0] = unknown ? -1 : lg(fabs(inner));
	f[1] = !unknown && inner == 0;
	f[2] = !unknown && fabs(inner) == 1;
	f[3] = unknown || (inner != 0 && fabs(inner) != 1);
	double reuse = 1;
	for (int l = 0; l < w->depth; l++)
		if (st[l] == 0)
			reuse *= w->loops[l].extent;
	f[4] = lg(reuse);
	f[5] = lg(esize);
	/* bytes and cache lines the innermost k loops touch */
	for (int k = 1; k <= LEVELS; k++) {
		double elems = 1, lines = 1;
		for (int l = w->depth - 1; l >= 0 && l >= w->depth - k; l--) {
			if (st[l] == 0)
				continue;
			elems *= w->loops[l].extent;
			double step = isnan(st[l]) ? 64 : fabs(st[l]) * esize;
			lines *= step >= 64 ? w->loops[l].extent :
			    fmax(1, w->loops[l].extent * step / 64);
		}
		f[6 + 2 * (k - 1)] = lg(elems * esize);
		f[7 + 2 * (k - 1)] = lg(lines);
	}
}

static void
store(Walk *w, IrStmt *s)
{
	float f[SF_COUNT];
	memset(f, 0, sizeof f);
	double iters = 1, unrolled = 1, lanes = 1, outside = 1;
	int npar = 0, nvec = 0, nun = 0, nser = 0;
	bool seen_par = false;
	for (int l = 0; l < w->depth; l++) {
		Loop *lp = &w->loops[l];
		iters *= lp->extent;
		if (!seen_par)
			outside *= lp->extent;
		switch (lp->fk) {
		case FOR_PARALLEL: case FOR_GPU_BLOCK: npar++; seen_par = true; break;
		case FOR_VECTORIZED: nvec++; lanes *= lp->extent; break;
		case FOR_UNROLLED: nun++; unrolled *= lp->extent; break;
		default: nser++; break;
		}
	}
	Count c = { 0 };
	count(s->store.value, &c);
	Loop *in = w->depth ? &w->loops[w->depth - 1] : NULL;
	f[SF_ITERS] = lg(iters);
	f[SF_DEPTH] = (float)w->depth;
	f[SF_NPAR] = (float)npar;
	f[SF_NVEC] = (float)nvec;
	f[SF_NUNROLL] = (float)nun;
	f[SF_NSERIAL] = (float)nser;
	f[SF_INNER_EXT] = in ? lg(in->extent) : 0;
	f[SF_INNER_VEC] = in && in->fk == FOR_VECTORIZED;
	f[SF_INNER_UNROLL] = in && in->fk == FOR_UNROLLED;
	f[SF_INNER_PAR] = in && in->fk == FOR_PARALLEL;
	f[SF_LANES] = lg(lanes);
	f[SF_UNROLLED] = lg(unrolled);
	f[SF_OUTSIDE_PAR] = seen_par ? lg(outside) : 0;
	f[SF_INSIDE_PAR] = lg(seen_par ? iters / fmax(1, outside) : iters);
	f[SF_FLOPS] = lg(c.flops);
	f[SF_IOPS] = lg(c.iops);
	f[SF_LOADS] = lg(c.loads);
	f[SF_CALLS] = lg(c.calls);
	f[SF_SELECTS] = lg(c.selects);
	f[SF_FLOPS_ALL] = lg(c.flops * iters);
	f[SF_LOADS_ALL] = lg(c.loads * iters);
	f[SF_GUARDED] = (float)(w->guards + (s->store.pred != NULL));
	/* the stored buffer, then the two most-read ones */
	Access st = { .buf = s->store.buf, .idx = s->store.idx, .nidx = s->store.nidx };
	access_features(w, &st, f + SF_BUF0);
	for (int k = 1; k < NBUF; k++) {
		int pick = -1;
		for (int i = 0; i < c.nacc; i++)
			if (c.acc[i].reads > 0 && (pick < 0 || c.acc[i].reads > c.acc[pick].reads))
				pick = i;
		if (pick < 0)
			break;
		access_features(w, &c.acc[pick], f + SF_BUF0 + k * SF_PER_BUF);
		c.acc[pick].reads = -1;
	}
	w->global[GF_STORES] += 1;
	w->global[GF_WORK] += (float)(iters * (1 + c.flops + c.iops));
	/* keep the two heaviest */
	if (iters > w->best_iters[0]) {
		memcpy(w->best[1], w->best[0], sizeof w->best[0]);
		w->best_iters[1] = w->best_iters[0];
		memcpy(w->best[0], f, sizeof f);
		w->best_iters[0] = iters;
	} else if (iters > w->best_iters[1]) {
		memcpy(w->best[1], f, sizeof f);
		w->best_iters[1] = iters;
	}
}

/* Expressions are read by store(), not walked. */
static void
skip_expr(IrVisitor *v, IrExpr *e)
{
	(void)v;
	(void)e;
}

static void
visit_stmt(IrVisitor *v, IrStmt *s)
{
	Walk *w = (Walk *)v;
	switch (s->kind) {
	case IS_FOR:
		if (w->depth < MAXDEPTH) {
			w->loops[w->depth].var = s->loop.var;
			w->loops[w->depth].extent = const_or(s->loop.extent, 64);
			w->loops[w->depth].fk = s->loop.fk;
			w->depth++;
			ir_visit_stmt(v, s->loop.body);
			w->depth--;
		} else {
			ir_visit_stmt(v, s->loop.body);
		}
		return;
	case IS_IF:
		w->guards++;
		ir_visit_stmt_children(v, s);
		w->guards--;
		return;
	case IS_STORE:
		store(w, s);
		return;
	case IS_ALLOCATE: {
		double bytes = type_bits(s->alloc.buf->elem) <= 8 ? 1 : type_bits(s->alloc.buf->elem) / 8;
		for (int d = 0; d < s->alloc.buf->ndims; d++)
			bytes *= const_or(s->alloc.buf->extent[d], 64);
		w->global[GF_ALLOCS] += 1;
		w->global[GF_ALLOC_BYTES] += (float)bytes;
		ir_visit_stmt_children(v, s);
		return;
	}
	default:
		ir_visit_stmt_children(v, s);
	}
}

void
features_of(IrFunc *f, float *out)
{
	Walk w;
	memset(&w, 0, sizeof w);
	for (int i = 0; i < IR_STMT_COUNT; i++)
		w.v.stmt[i] = visit_stmt;
	for (int i = 0; i < IR_EXPR_COUNT; i++)
		w.v.expr[i] = skip_expr;
	ir_visit_stmt(&w.v, f->body);
	memcpy(out, w.best[0], sizeof w.best[0]);
	memcpy(out + SF_COUNT, w.best[1], sizeof w.best[1]);
	float *g = out + 2 * SF_COUNT;
	g[GF_STORES] = w.global[GF_STORES];
	g[GF_ALLOCS] = w.global[GF_ALLOCS];
	g[GF_ALLOC_BYTES] = lg(w.global[GF_ALLOC_BYTES]);
	g[GF_WORK] = lg(w.global[GF_WORK]);
}
