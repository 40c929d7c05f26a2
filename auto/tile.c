/* tile.c: rules C2 and C3 of the cpu generator (txc-schedule(7)
 * AUTO-SCHEDULING): whether a reduction is a contraction that a register
 * tile serves (its unit-stride operand, the row axis that operand is
 * reused across, the block's shape for the machine's registers, the input
 * to pack per strip), and the primitives of that tile: in a local copy
 * (C3, cache_write) or in the tile of its element-wise reader (C2).
 */
#include <string.h>

#include "auto/cpu.h"

/* Whether the access e of reader r (to an inlined stage, looked through)
 * keeps unit stride along r's last axis. */
bool
tile_unit_through(Cpu *c, Expr *e, int last)
{
	if (!cpu_unit_last(e, last))
		return false;
	int si = auto_stage_index(c->g, e->call.tensor);
	if (si < 0 || c->place[si] != P_INLINE || !cpu_uses_pure(e, last))
		return true;
	/* the inlined stage's own reads along its last axis */
	AutoStage *q = &c->g->s[si];
	Accs a;
	cpu_accesses_of(q, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (!tile_unit_through(c, a.acc[i], q->npure - 1))
			return false;
	return true;
}

/* Whether no read along the vector axis jv also uses pure axis d: the
 * unit-stride operands are then reused across d (a row axis). */
static bool
missed_by_vector_reads(const Accs *a, int jv, int d)
{
	for (int i = 0; i < a->n; i++)
		if (cpu_uses_pure(a->acc[i], jv) && cpu_uses_pure(a->acc[i], d))
			return false;
	return true;
}

Tile
tile_contraction(Cpu *c, int si)
{
	Tile t = { .ok = false, .ir = -1, .ir2 = -1, .mr2 = 1, .pack_tensor = -1, .pack_stage = -1 };
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (s->kind != AK_REDUCE || s->rwhere || s->npure < 1)
		return t;
	t.v = cpu_lanes(c, s);
	t.jv = s->npure - 1;
	int64_t ej = cpu_ext_or(s->pext[t.jv]);
	if (t.v < 2 || ej < t.v)
		return t;
	Accs a;
	cpu_accesses_of(s, NULL, &a);
	if (a.more)
		return t;
	bool vec_operand = false;
	for (int i = 0; i < a.n; i++) {
		if (!cpu_uses_pure(a.acc[i], t.jv))
			continue;
		if (!tile_unit_through(c, a.acc[i], t.jv))
			return t;
		vec_operand = true;
	}
	if (!vec_operand)
		return t;
	/* the row axis: one the unit-stride operands miss (reused across it),
	 * the longest, the innermost of equals (a convolution's columns, not
	 * its rows: the tile's inputs then share cache lines) */
	int64_t best = 1;
	for (int d = 0; d < s->npure - 1; d++) {
		if (missed_by_vector_reads(&a, t.jv, d) && cpu_ext_or(s->pext[d]) > 1 &&
		    cpu_ext_or(s->pext[d]) >= best) {
			best = cpu_ext_or(s->pext[d]);
			t.ir = d;
			t.reuse = true;
		}
	}
	/* without reuse (a depthwise stencil) rows of the block share nothing:
	 * one row, wider */
	t.nr = ej >= 2 * t.v ? 2 * t.v : t.v;
	int acc_regs = c->o->m->vregs - 4;
	t.mr = t.ir < 0 ? 1 : acc_regs / (t.nr / t.v);
	if (t.mr > (c->o->m->vregs >= 32 ? 14 : 6))
		t.mr = c->o->m->vregs >= 32 ? 14 : 6;
	if (!t.reuse && t.mr > 4)
		t.mr = 4;
	int cap = t.mr;
	if (t.ir >= 0 && cpu_ext_or(s->pext[t.ir]) < t.mr)
		t.mr = (int)cpu_ext_or(s->pext[t.ir]);
	if (t.mr <= 1)
		t.ir = -1, t.mr = 1;
	/* fewer rows when the last row tile would be mostly padding (7 rows
	 * of 6: 12 computed): the least rows computed per useful one, a block
	 * of fewer than 10 accumulators counted slower (the FMA latency it
	 * cannot hide), taken only when it saves 5% */
	if (t.ir >= 0) {
		int64_t e = cpu_ext_or(s->pext[t.ir]);
		int nv = t.nr / t.v;
		double best_cost = 0;
		int best_m = t.mr;
		for (int m = t.mr; m >= 2; m--) {
			double eff = m * nv >= 10 ? 1.0 : m * nv / 10.0;
			double cost = (double)((e + m - 1) / m * m) / (double)e / eff;
			if (m == t.mr)
				best_cost = cost;
			else if (cost < 0.95 * best_cost)
				best_cost = cost, best_m = m;
		}
		t.mr = best_m;
	}
	/* a row axis whose whole (known) extent is one block of fewer rows
	 * than the registers hold: a second axis the unit-stride operand
	 * misses (a convolution's rows beside its columns, the largest)
	 * fills the block, as many of its rows as fit: a 7 x 7 image takes
	 * blocks of 2 rows x 7 columns, 14 accumulators, not 7 */
	if (t.ir >= 0 && t.reuse && s->pext[t.ir] > 0 && s->pext[t.ir] == t.mr && cap / t.mr >= 2) {
		int64_t best2 = 1;
		for (int d = 0; d < s->npure - 1; d++) {
			if (d == t.ir || s->pext[d] <= best2)
				continue;
			if (missed_by_vector_reads(&a, t.jv, d)) {
				best2 = s->pext[d];
				t.ir2 = d;
			}
		}
		if (t.ir2 >= 0)
			t.mr2 = (int)(cap / t.mr < best2 ? cap / t.mr : best2);
		if (t.mr2 < 2)
			t.ir2 = -1, t.mr2 = 1;
	}
	/* the operand reused across row tiles: copied per strip */
	for (int i = 0; i < a.n && t.reuse; i++) {
		Expr *e = a.acc[i];
		if (!cpu_uses_pure(e, t.jv) || cpu_uses_pure(e, t.ir))
			continue;
		int p = auto_stage_index(g, e->call.tensor);
		if (p >= 0 && c->pack[p])
			t.pack_stage = p;
		else if (p < 0 && e->call.tensor->role == ROLE_IN && !e->call.tensor->is_const &&
		    e->call.nargs >= 2 && t.pack_tensor < 0)   /* a constant's layout is chosen
		                                                  when it is made (onnx/layout.c) */
			t.pack_tensor = e->call.tensor->index;
	}
	t.ok = true;
	return t;
}

/* C2/C3 on root stage R whose contraction is P (R itself: a local copy of
 * its sums). */
void
tile_register(Cpu *c, int R, int P, Tile t)
{
	AutoGraph *g = c->g;
	AutoStage *r = &g->s[R], *p = &g->s[P];
	const char *L;
	if (R == P) {
		L = auto_fresh(g, arena_printf(perm, "%s_local", r->name));
		fprintf(c->fp, "  // C3: %s is a contraction: a %s%d x %d register tile in a local copy\n",
		    r->name, t.ir2 >= 0 ? arena_printf(perm, "%d x ", t.mr2) : "", t.mr, t.nr);
		cpu_say(c, "%s.cache_write(local) -> %s;", r->name, L);
	} else {
		L = p->name;
		fprintf(c->fp, "  // C2: %s (a contraction) computed in tiles of %s, its element-wise "
		    "consumer: a %s%d x %d register tile\n", p->name, r->name,
		    t.ir2 >= 0 ? arena_printf(perm, "%d x ", t.mr2) : "", t.mr, t.nr);
	}
	/* the block's shape: knobs in a template (rows, and columns in whole
	 * vectors) */
	int vals[8], nv;
	const int mr_c[] = { 1, 2, 4, 6, 8, 12, 14 };
	const int nr_c[] = { t.v, 2 * t.v, 3 * t.v, 4 * t.v };
	int mr_hi = (c->o->m->vregs - 4) / 1;
	if (mr_hi > 16)
		mr_hi = 16;
	int nr_hi = 4 * t.v;
	/* The last row block: with tail = round_up it is computed whole, so its
	 * inputs are read past the edge, and the stages that make them are
	 * computed past it too; through a network's residual paths and strided
	 * layers each conv's extra columns doubled back (ResNet-18's first
	 * layer computed 84 columns of 56).  Where the tile's extents are
	 * constants at least as large as every block the knobs allow, and the
	 * tile is of an element-wise stage (C2: not a sum, which computing a
	 * point twice would count twice), the last row block is shifted
	 * inward instead: it ends at the edge, some points computed twice. */
	bool shift = R != P && t.ir >= 0 && r->pconst[t.ir] >= t.mr;
	if (shift && r->pconst[t.ir] < mr_hi)
		mr_hi = (int)r->pconst[t.ir];
	const char *tail = shift ? "shift_inward" : "round_up";
	const char *MR = NULL, *NR;
	if (t.ir >= 0) {
		nv = cpu_choices(vals, t.mr, mr_c, 7, 2, mr_hi);
		MR = cpu_knob(c, r->name, "rows", vals, nv);
	}
	nv = cpu_choices(vals, t.nr, nr_c, 4, t.v, nr_hi);
	NR = cpu_knob(c, r->name, "cols", vals, nv);
	const char *jv = r->pure[t.jv];
	const char *jo = auto_fresh(g, arena_printf(perm, "%so", jv));
	const char *ji = auto_fresh(g, arena_printf(perm, "%si", jv));
	const char *io = NULL, *ii = NULL;
	if (t.ir >= 0) {
		io = auto_fresh(g, arena_printf(perm, "%so", r->pure[t.ir]));
		ii = auto_fresh(g, arena_printf(perm, "%si", r->pure[t.ir]));
		if (shift) {
			/* the columns shifted, the vector axis (whole blocks, or
			 * rounded up: nothing reads past it) kept as round_up
			 * tiles have it, so the block's extents stay constants */
			cpu_say(c, "%s.split(%s, %s, tail = %s) -> (%s, %s);", r->name, r->pure[t.ir], MR,
			    tail, io, ii);
			cpu_say(c, "%s.split(%s, %s, tail = round_up) -> (%s, %s);", r->name, jv, NR, jo, ji);
		} else {
			cpu_say(c, "%s.tile(%s, %s, %s, %s, tail = %s) -> (%s, %s, %s, %s);", r->name,
			    r->pure[t.ir], jv, MR, NR, tail, io, jo, ii, ji);
		}
	} else {
		cpu_say(c, "%s.split(%s, %s, tail = round_up) -> (%s, %s);", r->name, jv, NR, jo, ji);
	}
	const char *io2 = NULL, *ii2 = NULL;
	if (t.ir2 >= 0) {
		io2 = auto_fresh(g, arena_printf(perm, "%so", r->pure[t.ir2]));
		ii2 = auto_fresh(g, arena_printf(perm, "%si", r->pure[t.ir2]));
		cpu_say(c, "%s.split(%s, %d, tail = round_up) -> (%s, %s);", r->name, r->pure[t.ir2],
		    t.mr2, io2, ii2);
	}
	/* the loop order: the other pure axes, then the tile loops */
	const char *order[AUTO_MAXA + 4];
	int64_t ext[AUTO_MAXA + 4];
	int n = 0;
	bool packs = t.pack_tensor >= 0 || t.pack_stage >= 0;
	for (int d = 0; d < r->npure; d++)
		if (d != t.ir && d != t.jv && d != t.ir2) {
			order[n] = r->pure[d];
			ext[n++] = cpu_ext_or(r->pext[d]);
		}
	int64_t eio = t.ir >= 0 ? (cpu_ext_or(r->pext[t.ir]) + t.mr - 1) / t.mr : 1;
	int64_t ejo = (cpu_ext_or(r->pext[t.jv]) + t.nr - 1) / t.nr;
	/* the second row axis's blocks go with the first's: inside the strip
	 * whose packed operand they share */
	int64_t eio2 = t.ir2 >= 0 ? (cpu_ext_or(r->pext[t.ir2]) + t.mr2 - 1) / t.mr2 : 1;
	if (io && packs) {
		order[n] = jo; ext[n++] = ejo;
		if (io2) {
			order[n] = io2; ext[n++] = eio2;
		}
		order[n] = io; ext[n++] = eio;
	} else if (io) {
		if (io2) {
			order[n] = io2; ext[n++] = eio2;
		}
		order[n] = io; ext[n++] = eio;
		order[n] = jo; ext[n++] = ejo;
	} else {
		order[n] = jo; ext[n++] = ejo;
	}
	int nouter = n;
	if (ii2)
		order[n++] = ii2;
	if (io)
		order[n++] = ii;
	order[n++] = ji;
	fprintf(c->fp, "  %s.reorder(", r->name);
	for (int i = 0; i < n; i++)
		fprintf(c->fp, "%s%s", i ? ", " : "", order[i]);
	fprintf(c->fp, ");\n");
	cpu_say(c, "%s.vectorize(%s);", r->name, ji);
	/* the tile loop is named before fusion can rename it */
	const char *tile_loop = order[nouter - 1];
	int used = 0;
	const char *par = NULL;
	if (nouter > 1 || ext[0] > 1) {
		/* keep the tile loop out of the fusion, so the tile keeps its name */
		par = cpu_par_outer(c, r->name, order, ext, nouter - 1 > 0 ? nouter - 1 : 1, &used);
		if (nouter == 1)
			tile_loop = par;
	}
	c->row[R] = par;
	c->rowdims[R] = 0;
	/* the parallel loop runs over whole leading dims 0 .. used-1: stages
	 * read at those indices may be computed per row of it */
	if (par && used > 0) {
		bool prefix = true;
		for (int i = 0; i < used; i++)
			prefix &= i < r->npure && order[i] == r->pure[i];
		if (prefix)
			c->rowdims[R] = used;
	}
	c->tile[R] = tile_loop;
	c->strip[R] = NULL;
	if (packs && io) {
		/* the strip loop, or the parallel loop it was fused into */
		c->strip[R] = jo;
		for (int i = 0; i < used; i++)
			if (order[i] == jo)
				c->strip[R] = par;
	}
	/* the local block */
	cpu_say(c, "%s.compute_at(%s, %s);", L, r->name, tile_loop);
	const char *pj = p->pure[t.jv];
	const char *lio = NULL, *lii = NULL;
	const char *ljo = auto_fresh(g, "l_jo"), *lji = auto_fresh(g, "l_ji");
	if (t.ir >= 0) {
		lio = auto_fresh(g, "l_io");
		lii = auto_fresh(g, "l_ii");
		cpu_say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", L, p->pure[t.ir], pj, MR, NR,
		    lio, ljo, lii, lji);
	} else {
		cpu_say(c, "%s.split(%s, %s) -> (%s, %s);", L, pj, NR, ljo, lji);
	}
	const char *lio2 = NULL, *lii2 = NULL;
	if (t.ir2 >= 0) {
		lio2 = auto_fresh(g, "l_ro");
		lii2 = auto_fresh(g, "l_ri");
		cpu_say(c, "%s.split(%s, %d) -> (%s, %s);", L, p->pure[t.ir2], t.mr2, lio2, lii2);
	}
	const char *ljv = NULL, *ljl = lji;
	if (t.nr > t.v || NR[0] < '0' || NR[0] > '9') {
		ljv = auto_fresh(g, "l_jv");
		ljl = auto_fresh(g, "l_jl");
		cpu_say(c, "%s.split(%s, %d) -> (%s, %s);", L, lji, t.v, ljv, ljl);
	}
	fprintf(c->fp, "  %s.reorder(", L);
	if (lio2)
		fprintf(c->fp, "%s, ", lio2);
	if (lio)
		fprintf(c->fp, "%s, ", lio);
	fprintf(c->fp, "%s", ljo);
	for (int k = 0; k < p->nred; k++)
		fprintf(c->fp, ", %s", p->red[k]);
	if (lii2)
		fprintf(c->fp, ", %s", lii2);
	if (lii)
		fprintf(c->fp, ", %s", lii);
	if (ljv)
		fprintf(c->fp, ", %s", ljv);
	fprintf(c->fp, ", %s);\n", ljl);
	cpu_say(c, "%s.vectorize(%s);", L, ljl);
	if (ljv)
		cpu_say(c, "%s.unroll(%s);", L, ljv);
	if (lii)
		cpu_say(c, "%s.unroll(%s);", L, lii);
	if (lii2)
		cpu_say(c, "%s.unroll(%s);", L, lii2);
	/* C4: a small constant window (taps) unrolled too */
	int64_t win = 1;
	for (int k = 0; k < p->nred; k++)
		win = auto_mul(win, p->rext[k] ? p->rext[k] : 1 << 20);
	if (p->rconst && win <= 16 && t.mr * (t.nr / t.v) * win <= 256)
		for (int k = 0; k < p->nred; k++)
			cpu_say(c, "%s.unroll(%s);", L, p->red[k]);
	/* small constant windows inside unrolled too (taps of a convolution
	 * stay loops: the block is already unrolled) */
	if (t.pack_tensor >= 0 && io) {
		Tensor *in = g->k->tensors[t.pack_tensor];
		const char *pk = auto_fresh(g, arena_printf(perm, "%s_pack", in->name));
		fprintf(c->fp, "  // C3: %s, reused by every row tile, copied per column strip\n",
		    in->name);
		const int yn[] = { 1, 0 };
		const char *PK = cpu_knob(c, r->name, "pack", yn, 2);
		bool w = PK[0] < '0' || PK[0] > '9';
		if (w)
			fprintf(c->fp, "  when (%s == 1) {\n", PK);
		cpu_say(c, "%s%s.cache_read(local, [%s]) -> %s;", w ? "  " : "", in->name, L, pk);
		cpu_say(c, "%s%s.compute_at(%s, %s);", w ? "  " : "", pk, r->name, c->strip[R]);
		cpu_say(c, "%s%s.vectorize(ax%d);", w ? "  " : "", pk, in->ndims - 1);
		if (w)
			fprintf(c->fp, "  }\n");
	}
}
