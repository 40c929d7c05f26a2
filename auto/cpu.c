/* cpu.c: the cpu rules of the schedule generator (txc-schedule(7)
 * AUTO-SCHEDULING).
 *
 * Stages are visited from the outputs back.  A cheap injective stage read
 * at one index per consumer is inlined (C1, inlining.c).  A stage that is
 * not inlined is either computed at a consumer's loop, when its consumers
 * all run there and read it at the loop's own indices (C6: a row; a tile
 * for a stencil; the strip of a contraction for a transposed copy; never
 * the output of another contraction's fusion group), or it is a root
 * stage and gets loops of its own:
 *
 *   C2/C3  (tile.c) a contraction (a reduction whose unit-stride operand misses a
 *          pure axis, or any reduction vectorizable along its innermost
 *          pure axis): a register tile of mr x nr outputs, reductions
 *          outside an unrolled, vectorized block, in a local buffer
 *          (cache_write) or in the element-wise consumer's tile, with the
 *          reused operand packed per strip (cache_read);
 *   C4     a small constant window: its loops unrolled;
 *   C5     a long reduction along a unit-stride axis: rfactor by vector
 *          lanes;
 *   C7     the outer pure loops fused until there is work for every
 *          thread, then parallel; the innermost unit-stride loop
 *          vectorized; a transpose tiled 8 x 8; a stencil's consumer tiled
 *          rows x 32 with the stencil computed per tile.
 *
 * Scans, updates and tuple reductions (C0) stay as written.
 */
#include <string.h>

#include "auto/cpu.h"
#include "sema/sema.h"

/* A numeric choice of a rule: in a template a knob NAME in [values] (the
 * first the default, the point the rules chose), else the first value.
 * Returns the text that stands for it. */
const char *
cpu_knob(Cpu *c, const char *stage, const char *what, const int *v, int n)
{
	if (!c->o->tmpl || c->nknobs >= AUTO_MAX_KNOBS || n < 2)
		return arena_printf(perm, "%d", v[0]);
	const char *name = auto_fresh(c->g, arena_printf(perm, "%s_%s", stage, what));
	fprintf(c->fp, "  knob %s in [", name);
	for (int i = 0; i < n; i++)
		fprintf(c->fp, "%s%d", i ? ", " : "", v[i]);
	fprintf(c->fp, "];\n");
	c->nknobs++;
	return name;
}

/* values: the default first, then the others of cand[] that are not it,
 * within [lo, hi] */
int
cpu_choices(int *out, int def, const int *cand, int ncand, int lo, int hi)
{
	int n = 0;
	out[n++] = def;
	for (int i = 0; i < ncand; i++)
		if (cand[i] != def && cand[i] >= lo && cand[i] <= hi)
			out[n++] = cand[i];
	return n;
}

void
cpu_say(Cpu *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("  ", c->fp);
	vfprintf(c->fp, fmt, ap);
	fputc('\n', c->fp);
	va_end(ap);
}

int
cpu_lanes(const Cpu *c, const AutoStage *s)
{
	int v = c->o->m->vbytes / (s->esize ? s->esize : 4);
	return v < 1 ? 1 : v > 32 ? 32 : v;
}

int64_t
cpu_ext_or(int64_t e)
{
	return e > 0 ? e : AUTO_REP_SIZE;
}

/* ---- what an access looks like ------------------------------------------- */

static void
collect(Expr *acc, bool in_index, void *ctx)
{
	Accs *a = ctx;
	(void)in_index;
	if (a->of && acc->call.tensor != a->of)
		return;
	if (a->n < 64)
		a->acc[a->n++] = acc;
	else
		a->more = true;
}

void
cpu_accesses_of(const AutoStage *reader, const Tensor *of, Accs *a)
{
	memset(a, 0, sizeof *a);
	a->of = of;
	auto_accesses(reader, collect, a);
}

/* Whether index d of access e is the reader's pure axis d, exactly. */
bool
cpu_identity_at(Expr *e, int d)
{
	Expr *x = d < e->call.nargs ? e->call.args[d] : NULL;
	return x && x->kind == EXPR_NAME && x->id.ref == REF_PURE_AXIS && x->id.axis == d;
}

/* Whether access e reads index for index the reader's own pure axes. */
static bool
identity(Expr *e, int npure)
{
	if (e->call.nargs != npure)
		return false;
	for (int d = 0; d < npure; d++)
		if (!cpu_identity_at(e, d))
			return false;
	return true;
}

/* Whether reader's access e to a stage of nd dims uses the reader's last
 * pure axis (index last) only in its last index, with stride 1. */
bool
cpu_unit_last(Expr *e, int last)
{
	int n = e->call.nargs;
	for (int d = 0; d < n; d++) {
		int64_t c = auto_coeff(e->call.args[d], true, last);
		if (c < 0 || (d < n - 1 && c != 0) || (d == n - 1 && c != 0 && c != 1))
			return false;
	}
	return true;
}

bool
cpu_uses_pure(Expr *e, int d)
{
	for (int i = 0; i < e->call.nargs; i++)
		if (auto_coeff(e->call.args[i], true, d) != 0)
			return true;
	return false;
}

/* ---- contractions ------------------------------------------------------------ */

/* ---- placement: a stage computed at a root stage's loop -------------------- */

/* The root stage consumer ci runs in (itself, or the one it is computed
 * at), and whether that is at the root's row loop; -1 when neither. */
static int
group_of(Cpu *c, int ci, bool *at_row)
{
	*at_row = false;
	if (c->place[ci] == P_ROOT)
		return ci;
	if (c->place[ci] == P_AT && c->at_loop[ci] == c->row[c->at_stage[ci]]) {
		*at_row = true;
		return c->at_stage[ci];
	}
	return -1;
}

/* Whether every read of si (through inlined stages) is by stages that run
 * in root R's row loop (R itself or stages computed there), at the loop's
 * own indices along the row's m dims. */
static bool
row_ok(Cpu *c, int si, int R, int m, int depth)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (depth > 16 || s->ncons == 0 || s->npure < m)
		return false;
	for (int i = 0; i < s->ncons; i++) {
		int ci = s->cons[i];
		AutoStage *r = &g->s[ci];
		if ((r->kind == AK_SPECIAL && !r->tri) || r->npure < m)
			return false;
		Accs a;
		cpu_accesses_of(r, s->t, &a);
		if (a.more)
			return false;
		for (int j = 0; j < a.n; j++)
			for (int d = 0; d < m; d++)
				if (!cpu_identity_at(a.acc[j], d))
					return false;
		if (c->place[ci] == P_INLINE) {
			if (!row_ok(c, ci, R, m, depth + 1))
				return false;
			continue;
		}
		bool at_row;
		if (group_of(c, ci, &at_row) != R)
			return false;
		if (ci != R && !at_row)
			return false;
	}
	return true;
}

/* The one root stage every read of si goes to (through inlined stages),
 * and whether all of them are directly by it; -1 if none. */
static int
only_reader(Cpu *c, int si, int depth)
{
	AutoStage *s = &c->g->s[si];
	if (s->ncons != 1 || depth > 16)
		return -1;
	int ci = s->cons[0];
	if (c->place[ci] == P_INLINE)
		return only_reader(c, ci, depth + 1);
	return ci;
}

/* Whether the reads of si by its one reader chain are identity accesses
 * (element-wise, through inlined stages). */
static bool
identity_chain(Cpu *c, int si, int depth)
{
	AutoStage *s = &c->g->s[si];
	if (s->ncons != 1 || depth > 16)
		return false;
	AutoStage *r = &c->g->s[s->cons[0]];
	if (r->npure != s->npure || r->kind != AK_PURE)
		return false;
	Accs a;
	cpu_accesses_of(r, s->t, &a);
	if (a.n < 1 || a.more)
		return false;
	for (int j = 0; j < a.n; j++)
		if (!identity(a.acc[j], s->npure))
			return false;
	if (c->place[s->cons[0]] == P_INLINE)
		return identity_chain(c, s->cons[0], depth + 1);
	return true;
}

/* Whether every read of si by R is a stencil: index d is R's pure axis d
 * plus a constant, for every d. */
static bool
stencil_read(Cpu *c, int si, int R)
{
	AutoStage *s = &c->g->s[si], *r = &c->g->s[R];
	if (s->npure != r->npure || s->npure < 2)
		return false;
	Accs a;
	cpu_accesses_of(r, s->t, &a);
	if (a.n < 1 || a.more)
		return false;
	for (int j = 0; j < a.n; j++)
		for (int d = 0; d < s->npure; d++) {
			int64_t off;
			if (!auto_axis_plus(a.acc[j]->call.args[d], d, &off))
				return false;
		}
	return true;
}

/* Whether si belongs to a fusion group anchored by a contraction
 * (complex-out-fusable) other than root G's. */
static bool
foreign_contraction(Cpu *c, int si, int G)
{
	const AutoFusion *f = c->o->fusion;
	return f && f->group[si] != f->group[G] && f->kind[f->group[si]] == FK_OUTFUSE;
}

/* ---- emitting ------------------------------------------------------------- */

/* Fuses the first loops of order[] (names; ext[] their extents) until the
 * fused extent reaches the work the threads want; parallel.  Returns the
 * fused loop's name; *used: how many loops it took. */
const char *
cpu_par_outer(Cpu *c, const char *st, const char **order, const int64_t *ext, int n, int *used)
{
	*used = 0;
	if (n == 0)
		return NULL;
	int64_t want = 4 * (int64_t)(c->o->m->threads > 0 ? c->o->m->threads : 1);
	if (want < 16)
		want = 16;
	const char *cur = order[0];
	int64_t e = ext[0];
	int k = 1;
	while (e < want && k < n) {
		const char *f = auto_fresh(c->g, arena_printf(perm, "%s_%s", cur, order[k]));
		if (strlen(f) > 24)
			f = auto_fresh(c->g, "fused");
		cpu_say(c, "%s.fuse(%s, %s) -> %s;", st, cur, order[k], f);
		cur = f;
		e = auto_mul(e, ext[k]);
		k++;
	}
	cpu_say(c, "%s.parallel(%s);", st, cur);
	*used = k;
	return cur;
}

/* The inner schedule of a stage computed at a loop: its innermost pure
 * axis vectorized when reads allow, or its reduction by lanes. */
static void rfactor_lanes(Cpu *c, int si, int R, const char *loop);

static bool
vector_ok(Cpu *c, const AutoStage *s)
{
	if (s->npure < 1 || s->kind == AK_SPECIAL)
		return false;
	int last = s->npure - 1;
	if (cpu_ext_or(s->pext[last]) < cpu_lanes(c, s))
		return false;
	Accs a;
	cpu_accesses_of(s, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (cpu_uses_pure(a.acc[i], last) && !tile_unit_through(c, a.acc[i], last))
			return false;
	return !a.more;
}

static bool
lanes_ok(Cpu *c, const AutoStage *s)
{
	if (s->kind != AK_REDUCE || s->nred != 1 || s->rwhere)
		return false;
	int v = cpu_lanes(c, s);
	if (v < 2 || cpu_ext_or(s->rext[0]) < 4 * v)
		return false;
	Accs a;
	cpu_accesses_of(s, NULL, &a);
	bool unit = false;
	for (int i = 0; i < a.n; i++) {
		Expr *e = a.acc[i];
		int n = e->call.nargs;
		for (int d = 0; d < n; d++) {
			int64_t k = auto_coeff(e->call.args[d], false, 0);
			if (k < 0 || (d < n - 1 && k != 0))
				return false;
			if (d == n - 1 && k > 1)
				return false;
			unit |= d == n - 1 && k == 1;
		}
	}
	return unit && !a.more;
}

/* Whether reduction s (a triangle too) can be vectorized along its last
 * pure axis with its reduction loops outside: every read along the axis
 * unit-stride, the axis not in a range. */
static bool
red_vector_ok(Cpu *c, const AutoStage *s)
{
	if (s->npure < 1 || s->rwhere || (s->kind != AK_REDUCE && !s->tri))
		return false;
	int last = s->npure - 1;
	if ((s->tridep >> last) & 1 || cpu_ext_or(s->pext[last]) < cpu_lanes(c, s))
		return false;
	Accs a;
	cpu_accesses_of(s, NULL, &a);
	bool any = false;
	for (int i = 0; i < a.n; i++)
		if (cpu_uses_pure(a.acc[i], last)) {
			if (!tile_unit_through(c, a.acc[i], last))
				return false;
			any = true;
		}
	return any && !a.more;
}

static void
inner_schedule(Cpu *c, int si, int R, const char *loop)
{
	AutoStage *s = &c->g->s[si];
	if (red_vector_ok(c, s) && !lanes_ok(c, s)) {
		const char *o = auto_fresh(c->g, arena_printf(perm, "%so", s->pure[s->npure - 1]));
		const char *i = auto_fresh(c->g, arena_printf(perm, "%si", s->pure[s->npure - 1]));
		fprintf(c->fp, "  // C4: %s vectorized along %s, its reduction outside the vectors\n",
		    s->name, s->pure[s->npure - 1]);
		cpu_say(c, "%s.split(%s, %d) -> (%s, %s);", s->name, s->pure[s->npure - 1], cpu_lanes(c, s), o, i);
		fprintf(c->fp, "  %s.reorder(%s", s->name, o);
		for (int k = 0; k < s->nred; k++)
			fprintf(c->fp, ", %s", s->red[k]);
		fprintf(c->fp, ", %s);\n", i);
		cpu_say(c, "%s.vectorize(%s);", s->name, i);
		return;
	}
	if (s->kind == AK_PURE && vector_ok(c, s)) {
		const char *o = auto_fresh(c->g, arena_printf(perm, "%so", s->pure[s->npure - 1]));
		const char *i = auto_fresh(c->g, arena_printf(perm, "%si", s->pure[s->npure - 1]));
		cpu_say(c, "%s.split(%s, %d) -> (%s, %s);", s->name, s->pure[s->npure - 1], cpu_lanes(c, s), o, i);
		cpu_say(c, "%s.vectorize(%s);", s->name, i);
	} else if (lanes_ok(c, s)) {
		rfactor_lanes(c, si, R, loop);
	}
}

/* C5: sum a long unit-stride reduction in V partial sums, one per lane. */
static void
rfactor_lanes(Cpu *c, int si, int R, const char *loop)
{
	AutoStage *s = &c->g->s[si];
	int v = cpu_lanes(c, s);
	const char *k = s->red[0];
	const char *ko = auto_fresh(c->g, arena_printf(perm, "%so", k));
	const char *ki = auto_fresh(c->g, arena_printf(perm, "%si", k));
	const char *rf = auto_fresh(c->g, arena_printf(perm, "%s_lanes", s->name));
	fprintf(c->fp, "  // C5: %s by %d vector lanes (rfactor), folded at the end\n", s->name, v);
	int lv[4];
	const int lc[] = { 2 * v, 4 * v };
	const char *LN = cpu_knob(c, s->name, "lanes", lv, cpu_choices(lv, v, lc, 2, 1, 32));
	cpu_say(c, "%s.split(%s, %s) -> (%s, %s);", s->name, k, LN, ko, ki);
	cpu_say(c, "%s.rfactor(%s) -> %s;", s->name, ki, rf);
	if (loop)
		cpu_say(c, "%s.compute_at(%s, %s);", rf, c->g->s[R].name, loop);
	else if (s->npure > 0)
		cpu_say(c, "%s.compute_at(%s, %s);", rf, s->name, s->pure[s->npure - 1]);
	cpu_say(c, "%s.reorder(%s, %s);", rf, ko, ki);
	cpu_say(c, "%s.vectorize(%s);", rf, ki);
}

/* Whether r's transposing reads swap its last two axes: every read that
 * uses the last axis b has the second-to-last a alone, with coefficient 1,
 * in its last index, and b elsewhere (y[.., a, b] = x[.., b, a]).  Then in
 * a square tile of V x V, a unrolled and b vectorized, the reads of the
 * unrolled rows are one tile that the LLVM backend transposes in
 * registers (txc-schedule(7), vectorize). */
static bool
swaps_last_two(const AutoStage *r)
{
	int a = r->npure - 2, b = r->npure - 1, n = 0;
	Accs acc;
	cpu_accesses_of(r, NULL, &acc);
	for (int i = 0; i < acc.n; i++) {
		Expr *e = acc.acc[i];
		if (!cpu_uses_pure(e, b))
			continue;
		if (!cpu_unit_last(e, a) || auto_coeff(e->call.args[e->call.nargs - 1], true, b) != 0)
			return false;
		n++;
	}
	return n > 0 && !acc.more;
}

/* C7 for a stage with no reduction at root (and C4 for a reduction that is
 * no contraction).  Stencils read by it are computed per tile. */
static void
plain_root(Cpu *c, int R)
{
	AutoGraph *g = c->g;
	AutoStage *r = &g->s[R];
	const char *order[AUTO_MAXA + 4];
	int64_t ext[AUTO_MAXA + 4];
	int n = 0, npar = 0;
	int v = cpu_lanes(c, r);
	int last = r->npure - 1;
	c->row[R] = NULL;
	c->rowdims[R] = 0;
	c->tile[R] = NULL;
	/* a stencil producer computed per tile */
	int sten = -1;
	for (int i = c->first_of[R]; i >= 0 && r->npure >= 2; i = c->next_of[i])
		if (c->place[i] == P_ROOT && g->s[i].kind == AK_PURE && !g->s[i].output &&
		    stencil_read(c, i, R) && vector_ok(c, &g->s[i]))
			sten = i;   /* the earliest */
	bool transp = r->kind == AK_PURE && inlining_transposing(r) && r->npure >= 2 &&
	    cpu_ext_or(r->pext[last]) >= 8 && cpu_ext_or(r->pext[last - 1]) >= 8;
	if (sten >= 0 && cpu_ext_or(r->pext[last]) >= 32 && cpu_ext_or(r->pext[last - 1]) >= 8 &&
	    vector_ok(c, r)) {
		const char *a = r->pure[last - 1], *b = r->pure[last];
		const char *ao = auto_fresh(g, arena_printf(perm, "%so", a));
		const char *bo = auto_fresh(g, arena_printf(perm, "%so", b));
		const char *ai = auto_fresh(g, arena_printf(perm, "%si", a));
		const char *bi = auto_fresh(g, arena_printf(perm, "%si", b));
		fprintf(c->fp, "  // C7: %s tiled 8 x 32 for the stencil %s computed per tile\n",
		    r->name, g->s[sten].name);
		const int rc[] = { 8, 4, 16, 32 }, cc[] = { 32, 16, 64 };
		const char *TR = cpu_knob(c, r->name, "rows", rc, 4), *TC = cpu_knob(c, r->name, "cols", cc, 3);
		cpu_say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", r->name, a, b, TR, TC, ao, bo, ai,
		    bi);
		cpu_say(c, "%s.vectorize(%s);", r->name, bi);
		for (int d = 0; d < last - 1; d++) {
			order[n] = r->pure[d];
			ext[n++] = cpu_ext_or(r->pext[d]);
		}
		order[n] = ao;
		ext[n++] = (cpu_ext_or(r->pext[last - 1]) + 7) / 8;
		c->row[R] = cpu_par_outer(c, r->name, order, ext, n, &npar);
		c->tile[R] = bo;
		c->stencil_of[R] = sten;
		return;
	}
	if (transp) {
		const char *a = r->pure[last - 1], *b = r->pure[last];
		const char *ao = auto_fresh(g, arena_printf(perm, "%so", a));
		const char *bo = auto_fresh(g, arena_printf(perm, "%so", b));
		const char *ai = auto_fresh(g, arena_printf(perm, "%si", a));
		const char *bi = auto_fresh(g, arena_printf(perm, "%si", b));
		/* a swap of the last two axes in whole vectors: V x V tiles
		 * transposed in registers; else 8 x 8 scalar tiles */
		bool inreg = (v == 4 || v == 8 || v == 16) && swaps_last_two(r) &&
		    cpu_ext_or(r->pext[last]) >= v && cpu_ext_or(r->pext[last - 1]) >= v;
		if (inreg)
			fprintf(c->fp, "  // C7: %s transposes its last two axes: %d x %d tiles, "
			    "transposed in registers\n", r->name, v, v);
		else
			fprintf(c->fp, "  // C7: %s transposes: 8 x 8 tiles\n", r->name);
		const int tc[] = { 8, 16, 4, 32 };
		const char *TT = inreg ? arena_printf(perm, "%d", v) : cpu_knob(c, r->name, "tile", tc, 4);
		cpu_say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", r->name, a, b, TT, TT, ao, bo, ai,
		    bi);
		if (inreg) {
			cpu_say(c, "%s.unroll(%s);", r->name, ai);
			cpu_say(c, "%s.vectorize(%s);", r->name, bi);
		}
		for (int d = 0; d < last - 1; d++) {
			order[n] = r->pure[d];
			ext[n++] = cpu_ext_or(r->pext[d]);
		}
		order[n] = ao;
		ext[n++] = (cpu_ext_or(r->pext[last - 1]) + 7) / 8;
		c->row[R] = cpu_par_outer(c, r->name, order, ext, n, &npar);
		return;
	}
	bool vec = r->kind == AK_PURE ? vector_ok(c, r) : false;
	bool window = r->kind == AK_REDUCE && r->rconst && r->nred > 0;
	int64_t win = 1;
	for (int k = 0; k < r->nred; k++)
		win = auto_mul(win, r->rext[k] ? r->rext[k] : 1000);
	window &= win <= 16;
	bool lanes_rf = r->kind == AK_REDUCE && lanes_ok(c, r);
	fprintf(c->fp, "  // C7: %s: outer loops in parallel%s%s%s\n", r->name,
	    vec ? ", the innermost vectorized" : "", window ? "; C4: its small window unrolled" : "",
	    lanes_rf ? "" : "");
	/* the outer loops: every pure axis but a vectorized innermost one */
	int nout = vec && r->npure > 0 ? r->npure - 1 : r->npure;
	for (int d = 0; d < nout; d++) {
		order[n] = r->pure[d];
		ext[n++] = cpu_ext_or(r->pext[d]);
	}
	if (n > 0) {
		c->row[R] = cpu_par_outer(c, r->name, order, ext, n, &npar);
		c->rowdims[R] = npar;
	}
	if (vec) {
		const char *o = auto_fresh(g, arena_printf(perm, "%so", r->pure[last]));
		const char *i = auto_fresh(g, arena_printf(perm, "%si", r->pure[last]));
		int vv[4], nvv;
		const int vc[] = { 2 * v, 4 * v };
		nvv = cpu_choices(vv, v, vc, 2, 1, 32);
		const char *VW = cpu_knob(c, r->name, "vec", vv, nvv);
		cpu_say(c, "%s.split(%s, %s) -> (%s, %s);", r->name, r->pure[last], VW, o, i);
		cpu_say(c, "%s.vectorize(%s);", r->name, i);
		if (n == 0) {
			c->row[R] = NULL;
		}
	}
	if (window)
		for (int k = 0; k < r->nred; k++)
			cpu_say(c, "%s.unroll(%s);", r->name, r->red[k]);
	if (lanes_rf)
		rfactor_lanes(c, R, R, NULL);
}

/* ---- the walk ----------------------------------------------------------------- */

static void
root(Cpu *c, int R)
{
	AutoGraph *g = c->g;
	AutoStage *r = &g->s[R];
	if (r->kind == AK_SPECIAL && r->tri && r->npure > 0 && !(r->tridep >> (r->npure - 1))) {
		/* a triangle at root: its pure loops (those its range uses
		 * outermost, as written) in parallel */
		plain_root(c, R);
		return;
	}
	if (r->kind == AK_SPECIAL) {
		fprintf(c->fp, "  // C0: %s (a scan, update, tuple reduction or triangular range) "
		    "stays as written\n", r->name);
		c->row[R] = c->tile[R] = NULL;
		return;
	}
	/* C2: a contraction whose one reader is this element-wise stage (the
	 * candidates, latest first, are chained from c->reader[]) */
	if (r->kind == AK_PURE) {
		for (int i = c->first_of[R]; i >= 0; i = c->next_of[i]) {
			if (c->place[i] != P_ROOT || g->s[i].kind != AK_REDUCE || g->s[i].output ||
			    !identity_chain(c, i, 0) || g->s[i].npure != r->npure)
				continue;
			/* read element for element, the sums span the reader's
			 * extents: an undeclared stage (its shape inferred) takes
			 * them, so its tile fits them (a 7-column image, 16
			 * channels: 7 x 16, not 14 x 32) */
			for (int d = 0; d < r->npure; d++)
				if (g->s[i].pext[d] <= 0)
					g->s[i].pext[d] = r->pext[d];
			Tile t = tile_contraction(c, i);
			if (!t.ok)
				continue;
			c->partner[R] = i;
			c->place[i] = P_AT;
			c->at_stage[i] = R;
			tile_register(c, R, i, t);
			c->at_loop[i] = c->tile[R];
			if (t.pack_stage >= 0 && c->strip[R]) {
				c->place[t.pack_stage] = P_AT;
				c->at_stage[t.pack_stage] = R;
				c->at_loop[t.pack_stage] = c->strip[R];
			}
			return;
		}
	}
	if (r->kind == AK_REDUCE) {
		Tile t = tile_contraction(c, R);
		if (t.ok) {
			tile_register(c, R, R, t);
			if (t.pack_stage >= 0 && c->strip[R]) {
				c->place[t.pack_stage] = P_AT;
				c->at_stage[t.pack_stage] = R;
				c->at_loop[t.pack_stage] = c->strip[R];
			}
			return;
		}
	}
	plain_root(c, R);
}

bool
auto_cpu(FILE *fp, AutoGraph *g, const AutoOptions *o)
{
	Cpu c;
	memset(&c, 0, sizeof c);
	c.g = g;
	c.fp = fp;
	c.o = o;
	size_t n1 = (size_t)g->n + 1;
	c.place = arena_alloc(perm, sizeof *c.place * n1);
	c.at_stage = arena_alloc(perm, sizeof *c.at_stage * n1);
	c.at_loop = arena_alloc(perm, sizeof *c.at_loop * n1);
	c.partner = arena_alloc(perm, sizeof *c.partner * n1);
	c.pack = arena_alloc(perm, sizeof *c.pack * n1);
	c.row = arena_alloc(perm, sizeof *c.row * n1);
	c.rowdims = arena_alloc(perm, sizeof *c.rowdims * n1);
	c.tile = arena_alloc(perm, sizeof *c.tile * n1);
	c.strip = arena_alloc(perm, sizeof *c.strip * n1);
	c.stencil_of = arena_alloc(perm, sizeof *c.stencil_of * n1);
	c.reader = arena_alloc(perm, sizeof *c.reader * n1);
	c.first_of = arena_alloc(perm, sizeof *c.first_of * n1);
	c.next_of = arena_alloc(perm, sizeof *c.next_of * n1);
	for (int i = 0; i < g->n; i++) {
		c.partner[i] = -1;
		c.stencil_of[i] = -1;
	}
	for (int i = 0; i < g->n; i++)
		if (g->s[i].fixed)
			c.place[i] = P_FIXED;
	c.nknobs = o->knobs_used;
	fprintf(fp, "// txc-auto v1: %s for cpu (%s, %d-byte vectors, %d registers)\n",
	    g->k->name, o->m->isa, o->m->vbytes, o->m->vregs);
	fprintf(fp, "schedule %s as auto for cpu {\n", g->k->name);
	if (o->prelude)
		fputs(o->prelude, fp);
	inlining_decide(&c);
	/* the one root stage each stage's reads reach (through inlined ones):
	 * C2 looks for its contraction among the stages that reach it */
	for (int i = 0; i < g->n; i++)
		c.first_of[i] = -1;
	for (int i = 0; i < g->n; i++) {
		c.reader[i] = only_reader(&c, i, 0);
		c.next_of[i] = -1;
		if (c.reader[i] >= 0) {
			c.next_of[i] = c.first_of[c.reader[i]];
			c.first_of[c.reader[i]] = i;
		}
	}
	for (int i = 0; i < g->n; i++)
		if (c.place[i] == P_INLINE)
			fprintf(fp, "  // C1: %s is cheap and read once per use: inlined\n"
			    "  %s.compute_inline();\n", g->s[i].name, g->s[i].name);
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (c.place[i] == P_INLINE || c.place[i] == P_FIXED)
			continue;
		if (c.place[i] == P_AT) {
			/* placed by its consumer's rule (C2's contraction, a strip's copy) */
			if (c.at_loop[i] && c.partner[c.at_stage[i]] != i) {
				fprintf(fp, "  // C6: %s, a transposed copy, computed per strip of %s\n",
				    s->name, g->s[c.at_stage[i]].name);
				cpu_say(&c, "%s.compute_at(%s, %s);", s->name, g->s[c.at_stage[i]].name,
				    c.at_loop[i]);
			}
			continue;
		}
		if (!s->output && (s->kind != AK_SPECIAL || s->tri) && !s->in_index) {
			/* C6: computed at its readers' root: per tile for a stencil,
			 * per row when every reader runs in the row at its indices */
			int R = only_reader(&c, i, 0);
			if (R >= 0 && c.place[R] == P_ROOT && c.stencil_of[R] == i && c.tile[R]) {
				fprintf(fp, "  // C6: %s, a stencil, computed per tile of %s\n", s->name,
				    g->s[R].name);
				cpu_say(&c, "%s.compute_at(%s, %s);", s->name, g->s[R].name, c.tile[R]);
				c.place[i] = P_AT;
				c.at_stage[i] = R;
				c.at_loop[i] = c.tile[R];
				inner_schedule(&c, i, R, c.tile[R]);
				continue;
			}
			/* the root all readers share */
			int G = -1;
			bool same = s->ncons > 0;
			for (int j = 0; j < s->ncons && same; j++) {
				int ci = s->cons[j];
				while (c.place[ci] == P_INLINE && g->s[ci].ncons == 1)
					ci = g->s[ci].cons[0];
				bool at_row;
				int gi = c.place[ci] == P_INLINE ? -1 : group_of(&c, ci, &at_row);
				if (gi < 0 || (G >= 0 && gi != G))
					same = false;
				G = gi;
			}
			/* a triangle's range may use only the row's axes; the output
			 * of a contraction's group (a convolution's ReLU) is no row
			 * of another group's: at root it gets its register tile (C2) */
			if (same && G >= 0 && c.row[G] && c.rowdims[G] > 0 && !foreign_contraction(&c, i, G) &&
			    (!s->tri || (s->tridep >> c.rowdims[G]) == 0) &&
			    row_ok(&c, i, G, c.rowdims[G], 0)) {
				fprintf(fp, "  // C6: %s computed per row of %s, where it is read\n", s->name,
				    g->s[G].name);
				cpu_say(&c, "%s.compute_at(%s, %s);", s->name, g->s[G].name, c.row[G]);
				c.place[i] = P_AT;
				c.at_stage[i] = G;
				c.at_loop[i] = c.row[G];
				inner_schedule(&c, i, G, c.row[G]);
				continue;
			}
		}
		root(&c, i);
	}
	fprintf(fp, "}\n");
	return true;
}
