/* vta.c: the vta rules of the schedule generator (txc-schedule(7)
 * AUTO-SCHEDULING): the plan of stdlib/vta.tx for int8 contractions on
 * packed layouts, with knobs for its tiles.
 *
 *   V1  the contraction, i32(x[.., k]) * i32(w[.., j, k]) summed over
 *       blocks of 16 inputs (k < 16) into 16 outputs (j), runs on VTA's
 *       GEMM: its sums in acc (set_scope), the activation in inp (a
 *       padding stage set_scope(inp): the DMA writes its zero border;
 *       anything else cache_read), the weights in wgt (cache_read);
 *   V2  its element-wise reader (>> n, + bias, clamp to int8) runs on the
 *       ALU in acc and stores the tile: the reader is tiled, OT blocks of
 *       16 outputs (the axis only the weights use) x TH rows (the first
 *       axis the activation uses; the last one is kept whole, so a DMA
 *       row is long), and the sums are computed per tile; its int32 rows
 *       per 16 outputs (a bias) are copied into acc per tile;
 *   V3  the sums step over the input blocks KT at a time, the activation
 *       and weight tiles of a step loaded at the step, the other
 *       reduction axes (a window's taps) and the tile's last axis inside,
 *       j and k innermost: tensorize(j, vta_gemm);
 *   V4  when there are at least two tiles of output blocks, two virtual
 *       threads over them, each with its own half of the buffers, so one
 *       thread's loads overlap the other's GEMMs.
 *
 * The tiles are chosen at the sizes (VTA fixes every size at compile
 * time): the least DRAM traffic whose buffers fit inp (2048 rows of 16
 * int8), wgt (1024 tiles of 16 x 16) and acc (2048 rows of 16 int32),
 * halved per virtual thread.  Any other kernel gets no vta schedule, and
 * the reason.
 */
#include <string.h>

#include "auto/auto.h"

/* the default configuration, 1x16_i8w8a32 (VTA-ISA.md 1) */
#define VTA_INP 2048
#define VTA_WGT 1024
#define VTA_ACC 2048

enum { AX_W, AX_A, AX_BOTH };   /* which operands use a pure axis */

typedef struct {
	AutoGraph *g;
	const AutoOptions *o;
	int si, ei;                /* the contraction and its element-wise reader */
	Expr *x, *w;               /* the activation's and the weights' accesses */
	int j, k;                  /* the pure axis of 16 outputs, the reduction one of 16 inputs */
	int blk;                   /* the reduction axis over input blocks */
	int cls[AUTO_MAXA];
	int wax, aax, whole;       /* tiled by OT, by TH, kept whole (-1: none) */
	Expr *bias[8];
	int nbias;
	bool bad;
	const char *why;
} Plan;

static bool
fail(Plan *p, const char *why)
{
	if (!p->why)
		p->why = why;
	return false;
}

static int64_t
ext(int64_t e)
{
	return e > 0 ? e : AUTO_REP_SIZE;
}

/* auto_coeff, with a stride that is a size (h * S + kh) taken at the
 * sizes: VTA fixes them all */
static int64_t
coeff(AutoGraph *g, Expr *e, bool pure, int d)
{
	if (e->kind == EXPR_BINARY && (e->bin.op == OP_ADD || e->bin.op == OP_SUB ||
	    e->bin.op == OP_MUL)) {
		int64_t a = coeff(g, e->bin.a, pure, d), b = coeff(g, e->bin.b, pure, d);
		if (a < 0 || b < 0)
			return -1;
		if (e->bin.op == OP_ADD)
			return a > INT64_MAX - b ? -1 : a + b;
		if (e->bin.op == OP_SUB)
			return b ? -1 : a;
		if (a && b)
			return -1;
		if (!a && !b)
			return 0;
		/* the other factor: a constant or sizes (no axis: auto_eval) */
		int64_t v = auto_eval(g, a ? e->bin.b : e->bin.a);
		return v > 0 && v <= 1 << 20 ? auto_mul(a ? a : b, v) : -1;
	}
	if (e->kind == EXPR_CAST)
		return coeff(g, e->call.args[0], pure, d);
	return auto_coeff(e, pure, d);
}

/* whether access a uses pure axis d (or reduction axis d when !pure) */
static bool
uses(AutoGraph *g, Expr *a, bool pure, int d)
{
	for (int i = 0; i < a->call.nargs; i++)
		if (coeff(g, a->call.args[i], pure, d) != 0)
			return true;
	return false;
}

static bool
is_axis(Expr *e, bool pure, int d)
{
	return e->kind == EXPR_NAME &&
	    (pure ? e->id.ref == REF_PURE_AXIS && e->id.axis == d :
		    e->id.ref == REF_RED_AXIS && e->id.red && e->id.red->index == d);
}

/* i32(T[..]) with T int8: the access */
static Expr *
widened(Expr *e)
{
	if (e->kind != EXPR_CAST || e->call.cast_to != TY_I32 || e->call.nargs != 1)
		return NULL;
	Expr *a = e->call.args[0];
	return a->kind == EXPR_ACCESS && a->call.tensor ? a : NULL;
}

/* V1: stage si is i32 sums of int8 products over packed 16-blocks */
static bool
contraction(Plan *p, int si)
{
	AutoStage *s = &p->g->s[si];
	const char *n = s->name;
	if (s->t->elem != TY_I32)
		return fail(p, arena_printf(perm, "'%s' is %s: VTA computes int8 products into "
		    "int32", n, type_name(s->t->elem)));
	if (s->rop != RED_SUM)
		return fail(p, arena_printf(perm, "'%s' is a %s reduction: VTA's GEMM only sums "
		    "products", n, reduce_spelling(s->rop)));
	if (s->rwhere)
		return fail(p, arena_printf(perm, "'%s' sums under a `where`: VTA's GEMM sums whole "
		    "blocks", n));
	Expr *v = s->t->rule->value;
	Expr *b = v->reduce.body;
	Expr *x = NULL, *w = NULL;
	if (b->kind == EXPR_BINARY && b->bin.op == OP_MUL) {
		x = widened(b->bin.a);
		w = widened(b->bin.b);
	}
	if (!x || !w)
		return fail(p, arena_printf(perm, "'%s' is not a sum of products of two int8 operands "
		    "widened to int32, i32(x[..]) * i32(w[..]), which is what VTA's GEMM computes", n));
	for (int q = 0; q < 2; q++) {
		Tensor *t = (q ? w : x)->call.tensor;
		if (t->elem != TY_I8)
			return fail(p, arena_printf(perm, "'%s' is %s: VTA's GEMM multiplies int8 "
			    "operands", t->name, type_name(t->elem)));
	}
	const char *packed = arena_printf(perm, "'%s' is not a contraction over packed 16-blocks: "
	    "VTA's GEMM needs the 16 outputs innermost in it (j < 16), the 16 inputs innermost in "
	    "the sum (k < 16), and operands x[.., k] and w[.., j, k] (the layouts NCHW1n16c and "
	    "OIHW16o16i of stdlib/vta.tx)", n);
	p->j = s->npure - 1;
	p->k = s->nred - 1;
	if (s->npure < 2 || s->nred < 2 || s->pconst[p->j] != 16 || s->rconst_ext[p->k] != 16)
		return fail(p, packed);
	/* the weights have j, k last; order the operands so */
	if (w->call.nargs < 2 || !is_axis(w->call.args[w->call.nargs - 2], true, p->j)) {
		Expr *t = x;
		x = w;
		w = t;
	}
	int nx = x->call.nargs, nw = w->call.nargs;
	if (nw < 3 || nx < 2 || !is_axis(w->call.args[nw - 2], true, p->j) ||
	    !is_axis(w->call.args[nw - 1], false, p->k) || !is_axis(x->call.args[nx - 1], false, p->k))
		return fail(p, packed);
	for (int i = 0; i < nx - 1; i++)
		if (coeff(p->g, x->call.args[i], true, p->j) || coeff(p->g, x->call.args[i], false, p->k))
			return fail(p, packed);
	for (int i = 0; i < nw - 2; i++)
		if (coeff(p->g, w->call.args[i], true, p->j) || coeff(p->g, w->call.args[i], false, p->k))
			return fail(p, packed);
	/* every index affine in the axes, for the footprints */
	for (int q = 0; q < 2; q++) {
		Expr *a = q ? w : x;
		for (int i = 0; i < a->call.nargs; i++) {
			for (int d = 0; d < s->npure; d++)
				if (coeff(p->g, a->call.args[i], true, d) < 0)
					return fail(p, arena_printf(perm, "'%s' reads '%s' at an index that is "
					    "not affine in '%s': VTA's loads move boxes", n,
					    a->call.tensor->name, s->pure[d]));
			for (int r = 0; r < s->nred; r++)
				if (coeff(p->g, a->call.args[i], false, r) < 0)
					return fail(p, arena_printf(perm, "'%s' reads '%s' at an index that is "
					    "not affine in '%s': VTA's loads move boxes", n,
					    a->call.tensor->name, s->red[r]));
		}
	}
	/* the block axis: the first reduction axis that an index of x has
	 * to itself (c of pad[c, h * S + kh, ..]); the others are taps */
	p->blk = -1;
	for (int r = 0; r < p->k && p->blk < 0; r++)
		for (int i = 0; i < nx - 1; i++) {
			if (!is_axis(x->call.args[i], false, r))
				continue;
			p->blk = r;
			break;
		}
	if (p->blk < 0)
		return fail(p, arena_printf(perm, "'%s' has no reduction axis over blocks of 16 "
		    "inputs (x[.., c, .., k] with c < C): VTA's GEMM steps over them", n));
	/* the pure axes: the weights' (output blocks), the activation's (rows) */
	p->wax = p->aax = p->whole = -1;
	int na = 0, alist[AUTO_MAXA];
	for (int d = 0; d < p->j; d++) {
		bool ux = uses(p->g, x, true, d), uw = uses(p->g, w, true, d);
		if (!ux && !uw)
			return fail(p, arena_printf(perm, "'%s' does not read its operands along '%s': "
			    "a broadcast, which VTA's GEMM does not make", n, s->pure[d]));
		p->cls[d] = ux && uw ? AX_BOTH : ux ? AX_A : AX_W;
		if (p->cls[d] == AX_W && p->wax < 0)
			p->wax = d;
		if (p->cls[d] == AX_A)
			alist[na++] = d;
	}
	if (na == 1)
		p->aax = alist[0];
	else if (na >= 2) {
		p->whole = alist[na - 1];
		p->aax = alist[na - 2];
	}
	p->x = x;
	p->w = w;
	p->si = si;
	return true;
}

/* V2: the one element-wise reader of the sums, storing int8 */
static bool
epilogue(Plan *p)
{
	AutoGraph *g = p->g;
	AutoStage *s = &g->s[p->si];
	if (s->output)
		return fail(p, arena_printf(perm, "'%s' is an output: VTA stores int8, so the int32 "
		    "sums need an element-wise reader that narrows them (clamp(acc >> 8, 0, 127) as "
		    "i8, stdlib/vta.tx's yp), which runs on VTA's ALU", s->name));
	if (s->ncons != 1)
		return fail(p, arena_printf(perm, "'%s' needs one element-wise reader and no other: "
		    "VTA's ALU finishes the sums in acc (>> n, + bias, clamp) and stores them as "
		    "int8 (stdlib/vta.tx's yp)", s->name));
	int ei = s->cons[0];
	AutoStage *e = &g->s[ei];
	if (e->kind != AK_PURE || e->npure != s->npure || !e->t->rule || e->t->rule->update ||
	    e->t->ninits)
		return fail(p, arena_printf(perm, "'%s' reads '%s' but is no element-wise stage over "
		    "its points: VTA's ALU finishes the sums tile by tile", e->name, s->name));
	if (e->t->elem != TY_I8)
		return fail(p, arena_printf(perm, "'%s' is %s: VTA stores int8 results", e->name,
		    type_name(e->t->elem)));
	p->ei = ei;
	return true;
}

static void
epi_read(Expr *a, bool in_index, void *ctx)
{
	Plan *p = ctx;
	AutoGraph *g = p->g;
	AutoStage *e = &g->s[p->ei];
	Tensor *t = a->call.tensor;
	if (p->bad)
		return;
	if (in_index || !t) {
		p->bad = true;
		fail(p, arena_printf(perm, "'%s' reads a tensor inside an index: VTA's ALU "
		    "has no gathers", e->name));
		return;
	}
	if (t == g->s[p->si].t) {
		bool own = a->call.nargs == e->npure;
		for (int d = 0; own && d < e->npure; d++)
			own = is_axis(a->call.args[d], true, d);
		if (!own) {
			p->bad = true;
			fail(p, arena_printf(perm, "'%s' reads '%s' away from its own point: VTA's "
			    "ALU works on the tile in place", e->name, t->name));
		}
		return;
	}
	/* a row of 16 int32 per output block, copied into acc */
	int n = a->call.nargs;
	bool row = t->elem == TY_I32 && n >= 1 && is_axis(a->call.args[n - 1], true, p->j);
	for (int i = 0; row && i < n - 1; i++)
		for (int d = 0; d < e->npure; d++)
			if (coeff(g, a->call.args[i], true, d) < 0 ||
			    (d == p->j && coeff(g, a->call.args[i], true, d) != 0))
				row = false;
	if (!row) {
		p->bad = true;
		fail(p, arena_printf(perm, "'%s' reads '%s', which is no int32 row per 16 outputs "
		    "(bias[o, j]): VTA's ALU adds only rows of acc", e->name, t->name));
		return;
	}
	for (int i = 0; i < p->nbias; i++)
		if (p->bias[i]->call.tensor == t)
			return;
	if (p->nbias >= 8) {
		p->bad = true;
		fail(p, arena_printf(perm, "'%s' reads too many tensors", e->name));
		return;
	}
	p->bias[p->nbias++] = a;
}

/* ---- the tiles ------------------------------------------------------------- */

typedef struct {
	int64_t ot, th, kt, vt;
} Tiles;

/* rows a tile of the contraction's pure axes reads of access a (its
 * last `skip` indices aside): the product of each index's range */
static int64_t
footprint(Plan *p, Expr *a, int skip, const Tiles *t)
{
	AutoStage *s = &p->g->s[p->si];
	int64_t n = 1;
	for (int i = 0; i < a->call.nargs - skip; i++) {
		int64_t r = 1;
		for (int d = 0; d < s->npure; d++) {
			int64_t c = coeff(p->g, a->call.args[i], true, d), tile = 1;
			if (d == p->wax)
				tile = t->ot;
			else if (d == p->aax)
				tile = t->th;
			else if (d == p->whole)
				tile = ext(s->pext[d]);
			r += auto_mul(c, tile - 1);
		}
		for (int q = 0; q < s->nred; q++) {
			if (q == p->k)
				continue;
			int64_t c = coeff(p->g, a->call.args[i], false, q);
			int64_t tile = q == p->blk ? t->kt : ext(s->rext[q]);
			r += auto_mul(c, tile - 1);
		}
		n = auto_mul(n, r < 1 ? 1 : r);
	}
	return n;
}

static bool
fits(Plan *p, const Tiles *t)
{
	int64_t acc, inp, wgt;
	AutoStage *s = &p->g->s[p->si];
	/* acc: the tile's rows, and the bias rows */
	acc = 1;
	for (int d = 0; d < p->j; d++)
		acc = auto_mul(acc, d == p->wax ? t->ot : d == p->aax ? t->th :
		    d == p->whole ? ext(s->pext[d]) : 1);
	for (int i = 0; i < p->nbias; i++) {
		/* the bias is read by the reader: its axes are the contraction's */
		int64_t b = footprint(p, p->bias[i], 1, t);
		acc = acc > INT64_MAX - b ? INT64_MAX : acc + b;
	}
	inp = footprint(p, p->x, 1, t);
	wgt = footprint(p, p->w, 2, t);
	return auto_mul(acc, t->vt) <= VTA_ACC && auto_mul(inp, t->vt) <= VTA_INP &&
	    auto_mul(wgt, t->vt) <= VTA_WGT;
}

static int64_t
cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* bytes moved from DRAM, with a cost per load for the instructions, and
 * loads that overlap the GEMMs under virtual threads counted at 60% */
static double
cost(Plan *p, const Tiles *t)
{
	AutoStage *s = &p->g->s[p->si];
	double tiles = 1;
	for (int d = 0; d < p->j; d++) {
		int64_t e = ext(s->pext[d]);
		tiles *= (double)(d == p->wax ? cdiv(e, t->ot) : d == p->aax ? cdiv(e, t->th) :
		    d == p->whole ? 1 : e);
	}
	double steps = (double)cdiv(ext(s->rext[p->blk]), t->kt);
	double per = (double)footprint(p, p->x, 1, t) * 16 + (double)footprint(p, p->w, 2, t) * 256 +
	    2 * 512;
	double c = tiles * steps * per;
	return t->vt == 2 ? c * 0.6 : c;
}

/* candidate tile sizes for an axis of extent e: its divisors and the
 * powers of two up to 64 */
static int
cands(int64_t e, int64_t *v)
{
	int n = 0;
	for (int64_t f = 1; f <= 64 && f <= e; f++)
		if (e % f == 0 || (f & (f - 1)) == 0)
			v[n++] = f;
	return n;
}

static bool
choose(Plan *p, Tiles *best)
{
	AutoStage *s = &p->g->s[p->si];
	int64_t ov[64], hv[64], kv[64];
	int no = p->wax >= 0 ? cands(ext(s->pext[p->wax]), ov) : (ov[0] = 1, 1);
	int nh = p->aax >= 0 ? cands(ext(s->pext[p->aax]), hv) : (hv[0] = 1, 1);
	int nk = cands(ext(s->rext[p->blk]), kv);
	double bc = 0;
	bool found = false;
	for (int64_t vt = 1; vt <= 2; vt++)
	for (int a = 0; a < no; a++) {
		/* two threads over the output blocks' tiles: at least two of them */
		if (vt == 2 && (p->wax < 0 || cdiv(ext(s->pext[p->wax]), ov[a]) < 2))
			continue;
		for (int b = 0; b < nh; b++)
		for (int c = 0; c < nk; c++) {
			Tiles t = { ov[a], hv[b], kv[c], vt };
			if (!fits(p, &t))
				continue;
			double x = cost(p, &t);
			if (!found || x < bc) {
				bc = x;
				*best = t;
				found = true;
			}
		}
	}
	return found;
}

/* a knob's values: the default, then others that fit with the rest at
 * the default point, up to four */
static int
alternatives(Plan *p, const Tiles *d, int which, int64_t *out)
{
	AutoStage *s = &p->g->s[p->si];
	int64_t c[64];
	int64_t e = which == 0 ? ext(s->pext[p->wax]) : which == 1 ? ext(s->pext[p->aax]) :
	    ext(s->rext[p->blk]);
	int nc = cands(e, c);
	int n = 0;
	out[n++] = which == 0 ? d->ot : which == 1 ? d->th : d->kt;
	for (int i = nc - 1; i >= 0 && n < 4; i--) {
		Tiles t = *d;
		if (c[i] == out[0])
			continue;
		if (which == 0)
			t.ot = c[i];
		else if (which == 1)
			t.th = c[i];
		else
			t.kt = c[i];
		/* a smaller block of output blocks keeps two threads busy only
		 * while there are two tiles: the template's point with two
		 * threads must stay legal */
		if (fits(p, &t))
			out[n++] = c[i];
	}
	return n;
}

static const char *
knob(FILE *fp, const AutoOptions *o, AutoGraph *g, const char *stage, const char *what,
    const int64_t *v, int n)
{
	if (!o->tmpl || n < 2)
		return arena_printf(perm, "%lld", (long long)v[0]);
	const char *name = auto_fresh(g, arena_printf(perm, "%s_%s", stage, what));
	fprintf(fp, "  knob %s in [", name);
	for (int i = 0; i < n; i++)
		fprintf(fp, "%s%lld", i ? ", " : "", (long long)v[i]);
	fprintf(fp, "];\n");
	return name;
}

/* ---- writing the plan ------------------------------------------------------ */

static void
write_plan(FILE *fp, Plan *p, const Tiles *t)
{
	AutoGraph *g = p->g;
	const AutoOptions *o = p->o;
	AutoStage *s = &g->s[p->si], *e = &g->s[p->ei];
	Tensor *xt = p->x->call.tensor, *wt = p->w->call.tensor;
	int xs = auto_stage_index(g, xt);
	bool padded = xs >= 0 && g->s[xs].boundary;
	const char *in = padded ? xt->name : auto_fresh(g, arena_printf(perm, "%s_inp", xt->name));
	const char *wl = auto_fresh(g, arena_printf(perm, "%s_wgt", wt->name));
	const char *bl[8];
	fprintf(fp, "  // V1: %s, int8 products summed into int32, runs on VTA's GEMM: sums in acc, "
	    "%s in inp%s, %s in wgt\n", s->name, xt->name, padded ? " (the DMA writes its zero "
	    "border)" : "", wt->name);
	fprintf(fp, "  %s.set_scope(acc);\n", s->name);
	if (padded)
		fprintf(fp, "  %s.set_scope(inp);\n", xt->name);
	else
		fprintf(fp, "  %s.cache_read(inp, [%s]) -> %s;\n", xt->name, s->name, in);
	fprintf(fp, "  %s.cache_read(wgt, [%s]) -> %s;\n", wt->name, s->name, wl);

	/* V2: the reader's tiles */
	int64_t ov[4], hv[4], kv[4];
	int no = p->wax >= 0 ? alternatives(p, t, 0, ov) : 0;
	int nh = p->aax >= 0 ? alternatives(p, t, 1, hv) : 0;
	int nk = alternatives(p, t, 2, kv);
	fprintf(fp, "  // V2: %s finishes the sums on the ALU in acc, tile by tile:", e->name);
	if (p->wax >= 0)
		fprintf(fp, " %lld blocks of 16 outputs", (long long)t->ot);
	if (p->aax >= 0)
		fprintf(fp, "%s %lld of '%s'", p->wax >= 0 ? " x" : "", (long long)t->th,
		    e->pure[p->aax]);
	if (p->whole >= 0)
		fprintf(fp, " x all of '%s'", e->pure[p->whole]);
	fprintf(fp, "\n");
	for (int i = 0; i < p->nbias; i++) {
		Tensor *b = p->bias[i]->call.tensor;
		bl[i] = auto_fresh(g, arena_printf(perm, "%s_acc", b->name));
		fprintf(fp, "  %s.cache_read(acc, [%s]) -> %s;\n", b->name, e->name, bl[i]);
	}
	const char *OT = p->wax >= 0 ? knob(fp, o, g, s->name, "blocks", ov, no) : NULL;
	const char *TH = p->aax >= 0 ? knob(fp, o, g, s->name, "rows", hv, nh) : NULL;
	const char *wo = NULL, *wi = NULL, *ao = NULL, *ai = NULL;
	if (OT) {
		wo = auto_fresh(g, arena_printf(perm, "%so", e->pure[p->wax]));
		wi = auto_fresh(g, arena_printf(perm, "%si", e->pure[p->wax]));
		fprintf(fp, "  %s.split(%s, %s) -> (%s, %s);\n", e->name, e->pure[p->wax], OT, wo, wi);
	}
	if (TH) {
		ao = auto_fresh(g, arena_printf(perm, "%so", e->pure[p->aax]));
		ai = auto_fresh(g, arena_printf(perm, "%si", e->pure[p->aax]));
		fprintf(fp, "  %s.split(%s, %s) -> (%s, %s);\n", e->name, e->pure[p->aax], TH, ao, ai);
	}
	/* the loop order: the untiled outer axes, the tiles, then inside them */
	const char *outer[AUTO_MAXA], *inner[AUTO_MAXA];
	int nout = 0, nin = 0;
	for (int d = 0; d < p->j; d++)
		if (d != p->wax && d != p->aax && d != p->whole)
			outer[nout++] = e->pure[d];
	for (int d = 0; d < p->j; d++) {
		if (d == p->wax) {
			outer[nout++] = wo;
			inner[nin++] = wi;
		} else if (d == p->aax) {
			outer[nout++] = ao;
			inner[nin++] = ai;
		} else if (d == p->whole)
			inner[nin++] = e->pure[d];
	}
	inner[nin++] = e->pure[p->j];
	const char *VT = NULL;
	int64_t vv[2] = { 2, 1 };
	const char *vo = NULL, *vti = NULL;
	if (t->vt == 2) {
		fprintf(fp, "  // V4: two virtual threads over the tiles of output blocks, each with "
		    "half of the buffers: one's loads overlap the other's GEMMs\n");
		VT = knob(fp, o, g, s->name, "vthreads", vv, 2);
		vo = auto_fresh(g, arena_printf(perm, "%s2", wo));
		vti = auto_fresh(g, "vt");
	}
	/* at: the reader's loop the sums and the bias rows are computed at */
	for (int pass = 0; pass < 2; pass++) {
		bool threads = pass == 0;
		if (threads && !VT)
			continue;
		const char *ind = "  ";
		if (VT && o->tmpl) {
			fprintf(fp, "  when (%s == %d) {\n", VT, threads ? 2 : 1);
			ind = "    ";
		} else if (VT && !threads)
			break;   /* the point: two threads */
		const char *at;
		if (threads) {
			fprintf(fp, "%s%s.split(%s, 2) -> (%s, %s);\n", ind, e->name, wo, vo, vti);
			fprintf(fp, "%s%s.reorder(", ind, e->name);
			for (int i = 0; i < nout; i++)
				fprintf(fp, "%s%s", i ? ", " : "", outer[i] == wo ? vo : outer[i]);
			fprintf(fp, ", %s", vti);
			at = vti;
		} else {
			fprintf(fp, "%s%s.reorder(", ind, e->name);
			for (int i = 0; i < nout; i++)
				fprintf(fp, "%s%s", i ? ", " : "", outer[i]);
			at = nout ? outer[nout - 1] : NULL;
		}
		for (int i = 0; i < nin; i++)
			fprintf(fp, "%s%s", nout || threads || i ? ", " : "", inner[i]);
		fprintf(fp, ");\n");
		if (threads)
			fprintf(fp, "%s%s.bind(%s, vthread);\n", ind, e->name, vti);
		if (at) {
			fprintf(fp, "%s%s.compute_at(%s, %s);\n", ind, s->name, e->name, at);
			for (int i = 0; i < p->nbias; i++)
				fprintf(fp, "%s%s.compute_at(%s, %s);\n", ind, bl[i], e->name, at);
		}
		if (VT && o->tmpl)
			fprintf(fp, "  }\n");
	}

	/* V3: the update nest */
	fprintf(fp, "  // V3: %s steps over '%s', %lld blocks of 16 inputs a step, loads at the "
	    "step, j and k innermost on the GEMM\n", s->name, s->red[p->blk], (long long)t->kt);
	const char *KT = knob(fp, o, g, s->name, "steps", kv, nk);
	const char *ko = auto_fresh(g, arena_printf(perm, "%so", s->red[p->blk]));
	const char *ki = auto_fresh(g, arena_printf(perm, "%si", s->red[p->blk]));
	fprintf(fp, "  %s.split(%s, %s) -> (%s, %s);\n", s->name, s->red[p->blk], KT, ko, ki);
	bool taps = false;
	for (int r = 0; r < p->k; r++)
		taps |= r != p->blk;
	/* with taps the tile's last axis goes inside them (stdlib's conv:
	 * co, o, h, ci, kh, kw, v, j, k); else ko, m, n, ki, j, k */
	int last = taps ? p->j - 1 : -1;
	fprintf(fp, "  %s.reorder(%s", s->name, ko);
	for (int d = 0; d < p->j; d++)
		if (d != last)
			fprintf(fp, ", %s", s->pure[d]);
	fprintf(fp, ", %s", ki);
	for (int r = 0; r < p->k; r++)
		if (r != p->blk)
			fprintf(fp, ", %s", s->red[r]);
	if (last >= 0)
		fprintf(fp, ", %s", s->pure[last]);
	fprintf(fp, ", %s, %s);\n", s->pure[p->j], s->red[p->k]);
	fprintf(fp, "  %s.compute_at(%s, %s);\n", in, s->name, ko);
	fprintf(fp, "  %s.compute_at(%s, %s);\n", wl, s->name, ko);
	fprintf(fp, "  %s.tensorize(%s, vta_gemm);\n", s->name, s->pure[p->j]);
}

bool
auto_vta(FILE *fp, AutoGraph *g, const AutoOptions *o)
{
	Plan *plans = arena_alloc(perm, sizeof *plans * (size_t)(g->n + 1));
	Tiles *tiles = arena_alloc(perm, sizeof *tiles * (size_t)(g->n + 1));
	int np = 0;
	for (int i = 0; i < g->n; i++) {
		AutoStage *s = &g->s[i];
		if (s->fixed)
			continue;   /* a called kernel's own schedule (transfer.c) */
		if (s->t->ninits > 0 || s->t->update || s->kind == AK_SPECIAL) {
			o->why[0] = arena_printf(perm, "'%s' is a scan, an update or a tuple reduction: "
			    "the vta rules map int8 contractions only", s->name);
			return false;
		}
		if (s->kind != AK_REDUCE)
			continue;
		Plan *p = &plans[np];
		memset(p, 0, sizeof *p);
		p->g = g;
		p->o = o;
		if (!contraction(p, i) || !epilogue(p)) {
			o->why[0] = p->why;
			return false;
		}
		auto_accesses(&g->s[p->ei], epi_read, p);
		if (p->bad) {
			o->why[0] = p->why;
			return false;
		}
		if (!choose(p, &tiles[np])) {
			o->why[0] = arena_printf(perm, "'%s': no tile of it fits VTA's buffers (inp 2048 "
			    "rows of 16 int8, wgt 1024 tiles of 16 x 16, acc 2048 rows of 16 int32), "
			    "not even one block: a window or a row too large", s->name);
			return false;
		}
		np++;
	}
	if (!np && !o->prelude) {
		o->why[0] = arena_printf(perm, "'%s' has no int8 contraction for VTA's GEMM (a sum of "
		    "i32(x[.., k]) * i32(w[.., j, k]) over packed 16-blocks)", g->k->name);
		return false;
	}
	fprintf(fp, "// txc-auto v1: %s for vta (1x16_i8w8a32: inp 2048 x 16 i8, wgt 1024 x 16 x 16 "
	    "i8, acc 2048 x 16 i32)\n", g->k->name);
	fprintf(fp, "schedule %s as auto for vta {\n", g->k->name);
	if (o->prelude)
		fputs(o->prelude, fp);
	for (int i = 0; i < np; i++)
		write_plan(fp, &plans[i], &tiles[i]);
	fprintf(fp, "}\n");
	return true;
}
