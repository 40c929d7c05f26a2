/* cpu.c: the cpu rules of the schedule generator (txc-schedule(7)
 * AUTO-SCHEDULING).
 *
 * Stages are visited from the outputs back.  A cheap injective stage read
 * at one index per consumer is inlined (C1).  A stage that is not inlined
 * is either computed at a consumer's loop, when its consumers all run
 * there and read it at the loop's own indices (C6: a row; a tile for a
 * stencil; the strip of a contraction for a transposed copy), or it is a
 * root stage and gets loops of its own:
 *
 *   C2/C3  a contraction (a reduction whose unit-stride operand misses a
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

#include "auto/auto.h"
#include "sema/sema.h"

enum { P_ROOT, P_INLINE, P_AT };

typedef struct {
	AutoGraph *g;
	FILE *fp;
	const AutoOptions *o;
	int place[AUTO_MAXS];
	int at_stage[AUTO_MAXS];        /* P_AT: the root stage */
	const char *at_loop[AUTO_MAXS]; /* P_AT: its loop */
	int partner[AUTO_MAXS];         /* a contraction fused into this consumer's tile, or -1 */
	bool pack[AUTO_MAXS];           /* a transposing copy a contraction reads */
	/* per root stage: its loops, for what is computed at it */
	const char *row[AUTO_MAXS];     /* the outermost (parallel) loop */
	int rowdims[AUTO_MAXS];         /* the pure dims that loop runs over (0: none whole) */
	const char *tile[AUTO_MAXS];    /* the innermost loop outside a tile */
	const char *strip[AUTO_MAXS];   /* a contraction's column strip */
	int stencil_of[AUTO_MAXS];      /* a stencil computed per tile of this stage */
	int nknobs;                     /* knobs declared (template), at most AUTO_MAX_KNOBS */
} Cpu;

/* TUNE_MAX_KNOBS: a template txc tune can search */
#define AUTO_MAX_KNOBS 32

/* A numeric choice of a rule: in a template a knob NAME in [values] (the
 * first the default, the point the rules chose), else the first value.
 * Returns the text that stands for it. */
static const char *
knob(Cpu *c, const char *stage, const char *what, const int *v, int n)
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
static int
choices(int *out, int def, const int *cand, int ncand, int lo, int hi)
{
	int n = 0;
	out[n++] = def;
	for (int i = 0; i < ncand; i++)
		if (cand[i] != def && cand[i] >= lo && cand[i] <= hi)
			out[n++] = cand[i];
	return n;
}

static void
say(Cpu *c, const char *fmt, ...) TXC_PRINTF(2, 3);

static void
say(Cpu *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("  ", c->fp);
	vfprintf(c->fp, fmt, ap);
	fputc('\n', c->fp);
	va_end(ap);
}

static int
lanes(const Cpu *c, const AutoStage *s)
{
	int v = c->o->m->vbytes / (s->esize ? s->esize : 4);
	return v < 1 ? 1 : v > 32 ? 32 : v;
}

static int64_t
ext_or(int64_t e)
{
	return e > 0 ? e : AUTO_REP_SIZE;
}

/* ---- what an access looks like ------------------------------------------- */

/* The accesses of one stage to another, collected. */
typedef struct {
	const Tensor *of;      /* NULL: every access */
	Expr *acc[64];
	int n;
	bool more;             /* past 64 */
} Accs;

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

static void
accesses_of(const AutoStage *reader, const Tensor *of, Accs *a)
{
	memset(a, 0, sizeof *a);
	a->of = of;
	auto_accesses(reader, collect, a);
}

/* Whether index d of access e is the reader's pure axis d, exactly. */
static bool
identity_at(Expr *e, int d)
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
		if (!identity_at(e, d))
			return false;
	return true;
}

/* Whether reader's access e to a stage of nd dims uses the reader's last
 * pure axis (index last) only in its last index, with stride 1. */
static bool
unit_last(Expr *e, int last)
{
	int n = e->call.nargs;
	for (int d = 0; d < n; d++) {
		int64_t c = auto_coeff(e->call.args[d], true, last);
		if (c < 0 || (d < n - 1 && c != 0) || (d == n - 1 && c != 0 && c != 1))
			return false;
	}
	return true;
}

static bool
uses_pure(Expr *e, int d)
{
	for (int i = 0; i < e->call.nargs; i++)
		if (auto_coeff(e->call.args[i], true, d) != 0)
			return true;
	return false;
}

/* ---- C1: inlining ---------------------------------------------------------- */

/* Whether s, read by its consumers, is read in one place of each: its
 * accesses in each consumer all the same index. */
static bool
read_once_each(Cpu *c, int si)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	for (int i = 0; i < s->ncons; i++) {
		AutoStage *r = &g->s[s->cons[i]];
		if (r->kind == AK_SPECIAL)
			return false;
		Accs a;
		accesses_of(r, s->t, &a);
		if (a.more)
			return false;
		for (int j = 1; j < a.n; j++)
			for (int d = 0; d < a.acc[0]->call.nargs; d++)
				if (!sema_same_expr(a.acc[0]->call.args[d], a.acc[j]->call.args[d]))
					return false;
	}
	return true;
}

/* Whether s copies an input in another order (a transpose): its last
 * axis is not the unit-stride index of what it reads. */
static bool
transposing(const AutoStage *s)
{
	if (s->npure < 2)
		return false;
	Accs a;
	accesses_of(s, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (uses_pure(a.acc[i], s->npure - 1) && !unit_last(a.acc[i], s->npure - 1))
			return true;
	return false;
}

/* A boundary copy that a consumer reads plane by plane (its outer indices
 * the consumer's own outer axes, the last two shifted by constants), as a
 * depthwise convolution reads its padded input: computed per plane. */
static bool
plane_read(Cpu *c, int si)
{
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (!s->boundary || s->ncons != 1 || s->npure < 3)
		return false;
	AutoStage *r = &g->s[s->cons[0]];
	if (r->npure != s->npure)
		return false;
	Accs a;
	accesses_of(r, s->t, &a);
	for (int i = 0; i < a.n; i++)
		for (int d = 0; d < s->npure - 2; d++)
			if (!identity_at(a.acc[i], d))
				return false;
	return a.n > 0;
}

static void
decide_inline(Cpu *c)
{
	AutoGraph *g = c->g;
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (s->output || s->kind != AK_PURE || s->in_index || s->ncons == 0)
			continue;
		if (s->expensive || !read_once_each(c, i) || plane_read(c, i))
			continue;
		if (transposing(s)) {
			/* a transposed copy a reduction reads: packed per strip */
			bool by_red = false;
			for (int j = 0; j < s->ncons; j++)
				by_red |= g->s[s->cons[j]].kind == AK_REDUCE;
			if (by_red) {
				c->pack[i] = true;
				continue;
			}
		}
		c->place[i] = P_INLINE;
		s->inlined = true;
	}
}

/* ---- contractions ------------------------------------------------------------ */

typedef struct {
	bool ok;
	int jv, ir;               /* the vector axis (last) and the row axis, or -1 */
	int mr, nr, v;
	bool reuse;               /* the unit-stride operand misses the row axis */
	int pack_tensor;          /* an input to copy per strip (tensor index), or -1 */
	int pack_stage;           /* a transposing copy computed per strip, or -1 */
} Tile;

/* Whether the access e of reader r (to an inlined stage, looked through)
 * keeps unit stride along r's last axis. */
static bool
unit_through(Cpu *c, Expr *e, int last)
{
	if (!unit_last(e, last))
		return false;
	int si = auto_stage_index(c->g, e->call.tensor);
	if (si < 0 || c->place[si] != P_INLINE || !uses_pure(e, last))
		return true;
	/* the inlined stage's own reads along its last axis */
	AutoStage *q = &c->g->s[si];
	Accs a;
	accesses_of(q, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (!unit_through(c, a.acc[i], q->npure - 1))
			return false;
	return true;
}

static Tile
contraction(Cpu *c, int si)
{
	Tile t = { .ok = false, .ir = -1, .pack_tensor = -1, .pack_stage = -1 };
	AutoGraph *g = c->g;
	AutoStage *s = &g->s[si];
	if (s->kind != AK_REDUCE || s->rwhere || s->npure < 1)
		return t;
	t.v = lanes(c, s);
	t.jv = s->npure - 1;
	int64_t ej = ext_or(s->pext[t.jv]);
	if (t.v < 2 || ej < t.v)
		return t;
	Accs a;
	accesses_of(s, NULL, &a);
	if (a.more)
		return t;
	bool vec_operand = false;
	for (int i = 0; i < a.n; i++) {
		if (!uses_pure(a.acc[i], t.jv))
			continue;
		if (!unit_through(c, a.acc[i], t.jv))
			return t;
		vec_operand = true;
	}
	if (!vec_operand)
		return t;
	/* the row axis: one the unit-stride operands miss (reused across it) */
	int64_t best = 1;
	for (int d = 0; d < s->npure - 1; d++) {
		bool missed = true;
		for (int i = 0; i < a.n && missed; i++)
			if (uses_pure(a.acc[i], t.jv) && uses_pure(a.acc[i], d))
				missed = false;
		if (missed && ext_or(s->pext[d]) > best) {
			best = ext_or(s->pext[d]);
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
	if (t.ir >= 0 && ext_or(s->pext[t.ir]) < t.mr)
		t.mr = (int)ext_or(s->pext[t.ir]);
	if (t.mr <= 1)
		t.ir = -1, t.mr = 1;
	/* the operand reused across row tiles: copied per strip */
	for (int i = 0; i < a.n && t.reuse; i++) {
		Expr *e = a.acc[i];
		if (!uses_pure(e, t.jv) || uses_pure(e, t.ir))
			continue;
		int p = auto_stage_index(g, e->call.tensor);
		if (p >= 0 && c->pack[p])
			t.pack_stage = p;
		else if (p < 0 && e->call.tensor->role == ROLE_IN && e->call.nargs >= 2 &&
		    t.pack_tensor < 0)
			t.pack_tensor = e->call.tensor->index;
	}
	t.ok = true;
	return t;
}

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
		accesses_of(r, s->t, &a);
		if (a.more)
			return false;
		for (int j = 0; j < a.n; j++)
			for (int d = 0; d < m; d++)
				if (!identity_at(a.acc[j], d))
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
	accesses_of(r, s->t, &a);
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
	accesses_of(r, s->t, &a);
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

/* ---- emitting ------------------------------------------------------------- */

/* Fuses the first loops of order[] (names; ext[] their extents) until the
 * fused extent reaches the work the threads want; parallel.  Returns the
 * fused loop's name; *used: how many loops it took. */
static const char *
par_outer(Cpu *c, const char *st, const char **order, const int64_t *ext, int n, int *used)
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
		say(c, "%s.fuse(%s, %s) -> %s;", st, cur, order[k], f);
		cur = f;
		e *= ext[k];
		k++;
	}
	say(c, "%s.parallel(%s);", st, cur);
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
	if (ext_or(s->pext[last]) < lanes(c, s))
		return false;
	Accs a;
	accesses_of(s, NULL, &a);
	for (int i = 0; i < a.n; i++)
		if (uses_pure(a.acc[i], last) && !unit_through(c, a.acc[i], last))
			return false;
	return !a.more;
}

static bool
lanes_ok(Cpu *c, const AutoStage *s)
{
	if (s->kind != AK_REDUCE || s->nred != 1 || s->rwhere)
		return false;
	int v = lanes(c, s);
	if (v < 2 || ext_or(s->rext[0]) < 4 * v)
		return false;
	Accs a;
	accesses_of(s, NULL, &a);
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
	if ((s->tridep >> last) & 1 || ext_or(s->pext[last]) < lanes(c, s))
		return false;
	Accs a;
	accesses_of(s, NULL, &a);
	bool any = false;
	for (int i = 0; i < a.n; i++)
		if (uses_pure(a.acc[i], last)) {
			if (!unit_through(c, a.acc[i], last))
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
		say(c, "%s.split(%s, %d) -> (%s, %s);", s->name, s->pure[s->npure - 1], lanes(c, s), o, i);
		fprintf(c->fp, "  %s.reorder(%s", s->name, o);
		for (int k = 0; k < s->nred; k++)
			fprintf(c->fp, ", %s", s->red[k]);
		fprintf(c->fp, ", %s);\n", i);
		say(c, "%s.vectorize(%s);", s->name, i);
		return;
	}
	if (s->kind == AK_PURE && vector_ok(c, s)) {
		const char *o = auto_fresh(c->g, arena_printf(perm, "%so", s->pure[s->npure - 1]));
		const char *i = auto_fresh(c->g, arena_printf(perm, "%si", s->pure[s->npure - 1]));
		say(c, "%s.split(%s, %d) -> (%s, %s);", s->name, s->pure[s->npure - 1], lanes(c, s), o, i);
		say(c, "%s.vectorize(%s);", s->name, i);
	} else if (lanes_ok(c, s)) {
		rfactor_lanes(c, si, R, loop);
	}
}

/* C5: sum a long unit-stride reduction in V partial sums, one per lane. */
static void
rfactor_lanes(Cpu *c, int si, int R, const char *loop)
{
	AutoStage *s = &c->g->s[si];
	int v = lanes(c, s);
	const char *k = s->red[0];
	const char *ko = auto_fresh(c->g, arena_printf(perm, "%so", k));
	const char *ki = auto_fresh(c->g, arena_printf(perm, "%si", k));
	const char *rf = auto_fresh(c->g, arena_printf(perm, "%s_lanes", s->name));
	fprintf(c->fp, "  // C5: %s by %d vector lanes (rfactor), folded at the end\n", s->name, v);
	int lv[4];
	const int lc[] = { 2 * v, 4 * v };
	const char *LN = knob(c, s->name, "lanes", lv, choices(lv, v, lc, 2, 1, 32));
	say(c, "%s.split(%s, %s) -> (%s, %s);", s->name, k, LN, ko, ki);
	say(c, "%s.rfactor(%s) -> %s;", s->name, ki, rf);
	if (loop)
		say(c, "%s.compute_at(%s, %s);", rf, c->g->s[R].name, loop);
	else if (s->npure > 0)
		say(c, "%s.compute_at(%s, %s);", rf, s->name, s->pure[s->npure - 1]);
	say(c, "%s.reorder(%s, %s);", rf, ko, ki);
	say(c, "%s.vectorize(%s);", rf, ki);
}

/* C2/C3 on root stage R whose contraction is P (R itself: a local copy of
 * its sums). */
static void
register_tile(Cpu *c, int R, int P, Tile t)
{
	AutoGraph *g = c->g;
	AutoStage *r = &g->s[R], *p = &g->s[P];
	const char *L;
	if (R == P) {
		L = auto_fresh(g, arena_printf(perm, "%s_local", r->name));
		fprintf(c->fp, "  // C3: %s is a contraction: a %d x %d register tile in a local copy\n",
		    r->name, t.mr, t.nr);
		say(c, "%s.cache_write(local) -> %s;", r->name, L);
	} else {
		L = p->name;
		fprintf(c->fp, "  // C2: %s (a contraction) computed in tiles of %s, its element-wise "
		    "consumer: a %d x %d register tile\n", p->name, r->name, t.mr, t.nr);
	}
	/* the block's shape: knobs in a template (rows, and columns in whole
	 * vectors) */
	int vals[8], nv;
	const int mr_c[] = { 1, 2, 4, 6, 8, 12, 14 };
	const int nr_c[] = { t.v, 2 * t.v, 3 * t.v, 4 * t.v };
	int mr_hi = (c->o->m->vregs - 4) / 1;
	const char *MR = NULL, *NR;
	if (t.ir >= 0) {
		nv = choices(vals, t.mr, mr_c, 7, 2, mr_hi < 16 ? mr_hi : 16);
		MR = knob(c, r->name, "rows", vals, nv);
	}
	nv = choices(vals, t.nr, nr_c, 4, t.v, 4 * t.v);
	NR = knob(c, r->name, "cols", vals, nv);
	const char *jv = r->pure[t.jv];
	const char *jo = auto_fresh(g, arena_printf(perm, "%so", jv));
	const char *ji = auto_fresh(g, arena_printf(perm, "%si", jv));
	const char *io = NULL, *ii = NULL;
	if (t.ir >= 0) {
		io = auto_fresh(g, arena_printf(perm, "%so", r->pure[t.ir]));
		ii = auto_fresh(g, arena_printf(perm, "%si", r->pure[t.ir]));
		say(c, "%s.tile(%s, %s, %s, %s, tail = round_up) -> (%s, %s, %s, %s);", r->name,
		    r->pure[t.ir], jv, MR, NR, io, jo, ii, ji);
	} else {
		say(c, "%s.split(%s, %s, tail = round_up) -> (%s, %s);", r->name, jv, NR, jo, ji);
	}
	/* the loop order: the other pure axes, then the tile loops */
	const char *order[AUTO_MAXA + 4];
	int64_t ext[AUTO_MAXA + 4];
	int n = 0;
	bool packs = t.pack_tensor >= 0 || t.pack_stage >= 0;
	for (int d = 0; d < r->npure; d++)
		if (d != t.ir && d != t.jv) {
			order[n] = r->pure[d];
			ext[n++] = ext_or(r->pext[d]);
		}
	int64_t eio = t.ir >= 0 ? (ext_or(r->pext[t.ir]) + t.mr - 1) / t.mr : 1;
	int64_t ejo = (ext_or(r->pext[t.jv]) + t.nr - 1) / t.nr;
	if (io && packs) {
		order[n] = jo; ext[n++] = ejo;
		order[n] = io; ext[n++] = eio;
	} else if (io) {
		order[n] = io; ext[n++] = eio;
		order[n] = jo; ext[n++] = ejo;
	} else {
		order[n] = jo; ext[n++] = ejo;
	}
	int nouter = n;
	if (io)
		order[n++] = ii;
	order[n++] = ji;
	fprintf(c->fp, "  %s.reorder(", r->name);
	for (int i = 0; i < n; i++)
		fprintf(c->fp, "%s%s", i ? ", " : "", order[i]);
	fprintf(c->fp, ");\n");
	say(c, "%s.vectorize(%s);", r->name, ji);
	/* the tile loop is named before fusion can rename it */
	const char *tile_loop = order[nouter - 1];
	int used = 0;
	const char *par = NULL;
	if (nouter > 1 || ext[0] > 1) {
		/* keep the tile loop out of the fusion, so the tile keeps its name */
		par = par_outer(c, r->name, order, ext, nouter - 1 > 0 ? nouter - 1 : 1, &used);
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
	say(c, "%s.compute_at(%s, %s);", L, r->name, tile_loop);
	const char *pj = p->pure[t.jv];
	const char *lio = NULL, *lii = NULL;
	const char *ljo = auto_fresh(g, "l_jo"), *lji = auto_fresh(g, "l_ji");
	if (t.ir >= 0) {
		lio = auto_fresh(g, "l_io");
		lii = auto_fresh(g, "l_ii");
		say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", L, p->pure[t.ir], pj, MR, NR,
		    lio, ljo, lii, lji);
	} else {
		say(c, "%s.split(%s, %s) -> (%s, %s);", L, pj, NR, ljo, lji);
	}
	const char *ljv = NULL, *ljl = lji;
	if (t.nr > t.v || NR[0] < '0' || NR[0] > '9') {
		ljv = auto_fresh(g, "l_jv");
		ljl = auto_fresh(g, "l_jl");
		say(c, "%s.split(%s, %d) -> (%s, %s);", L, lji, t.v, ljv, ljl);
	}
	fprintf(c->fp, "  %s.reorder(", L);
	if (lio)
		fprintf(c->fp, "%s, ", lio);
	fprintf(c->fp, "%s", ljo);
	for (int k = 0; k < p->nred; k++)
		fprintf(c->fp, ", %s", p->red[k]);
	if (lii)
		fprintf(c->fp, ", %s", lii);
	if (ljv)
		fprintf(c->fp, ", %s", ljv);
	fprintf(c->fp, ", %s);\n", ljl);
	say(c, "%s.vectorize(%s);", L, ljl);
	if (ljv)
		say(c, "%s.unroll(%s);", L, ljv);
	if (lii)
		say(c, "%s.unroll(%s);", L, lii);
	/* C4: a small constant window (taps) unrolled too */
	int64_t win = 1;
	for (int k = 0; k < p->nred; k++)
		win *= p->rext[k] ? p->rext[k] : 1 << 20;
	if (p->rconst && win <= 16 && t.mr * (t.nr / t.v) * win <= 256)
		for (int k = 0; k < p->nred; k++)
			say(c, "%s.unroll(%s);", L, p->red[k]);
	/* small constant windows inside unrolled too (taps of a convolution
	 * stay loops: the block is already unrolled) */
	if (t.pack_tensor >= 0 && io) {
		Tensor *in = g->k->tensors[t.pack_tensor];
		const char *pk = auto_fresh(g, arena_printf(perm, "%s_pack", in->name));
		fprintf(c->fp, "  // C3: %s, reused by every row tile, copied per column strip\n",
		    in->name);
		const int yn[] = { 1, 0 };
		const char *PK = knob(c, r->name, "pack", yn, 2);
		bool w = PK[0] < '0' || PK[0] > '9';
		if (w)
			fprintf(c->fp, "  when (%s == 1) {\n", PK);
		say(c, "%s%s.cache_read(local, [%s]) -> %s;", w ? "  " : "", in->name, L, pk);
		say(c, "%s%s.compute_at(%s, %s);", w ? "  " : "", pk, r->name, c->strip[R]);
		say(c, "%s%s.vectorize(ax%d);", w ? "  " : "", pk, in->ndims - 1);
		if (w)
			fprintf(c->fp, "  }\n");
	}
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
	int v = lanes(c, r);
	int last = r->npure - 1;
	c->row[R] = NULL;
	c->rowdims[R] = 0;
	c->tile[R] = NULL;
	/* a stencil producer computed per tile */
	int sten = -1;
	for (int i = R - 1; i >= 0 && r->npure >= 2; i--)
		if (c->place[i] == P_ROOT && g->s[i].kind == AK_PURE && !g->s[i].output &&
		    only_reader(c, i, 0) == R && stencil_read(c, i, R) && vector_ok(c, &g->s[i]))
			sten = i;
	bool transp = r->kind == AK_PURE && transposing(r) && r->npure >= 2 &&
	    ext_or(r->pext[last]) >= 8 && ext_or(r->pext[last - 1]) >= 8;
	if (sten >= 0 && ext_or(r->pext[last]) >= 32 && ext_or(r->pext[last - 1]) >= 8 &&
	    vector_ok(c, r)) {
		const char *a = r->pure[last - 1], *b = r->pure[last];
		const char *ao = auto_fresh(g, arena_printf(perm, "%so", a));
		const char *bo = auto_fresh(g, arena_printf(perm, "%so", b));
		const char *ai = auto_fresh(g, arena_printf(perm, "%si", a));
		const char *bi = auto_fresh(g, arena_printf(perm, "%si", b));
		fprintf(c->fp, "  // C7: %s tiled 8 x 32 for the stencil %s computed per tile\n",
		    r->name, g->s[sten].name);
		const int rc[] = { 8, 4, 16, 32 }, cc[] = { 32, 16, 64 };
		const char *TR = knob(c, r->name, "rows", rc, 4), *TC = knob(c, r->name, "cols", cc, 3);
		say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", r->name, a, b, TR, TC, ao, bo, ai,
		    bi);
		say(c, "%s.vectorize(%s);", r->name, bi);
		for (int d = 0; d < last - 1; d++) {
			order[n] = r->pure[d];
			ext[n++] = ext_or(r->pext[d]);
		}
		order[n] = ao;
		ext[n++] = (ext_or(r->pext[last - 1]) + 7) / 8;
		c->row[R] = par_outer(c, r->name, order, ext, n, &npar);
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
		fprintf(c->fp, "  // C7: %s transposes: 8 x 8 tiles\n", r->name);
		const int tc[] = { 8, 16, 4, 32 };
		const char *TT = knob(c, r->name, "tile", tc, 4);
		say(c, "%s.tile(%s, %s, %s, %s) -> (%s, %s, %s, %s);", r->name, a, b, TT, TT, ao, bo, ai,
		    bi);
		for (int d = 0; d < last - 1; d++) {
			order[n] = r->pure[d];
			ext[n++] = ext_or(r->pext[d]);
		}
		order[n] = ao;
		ext[n++] = (ext_or(r->pext[last - 1]) + 7) / 8;
		c->row[R] = par_outer(c, r->name, order, ext, n, &npar);
		return;
	}
	bool vec = r->kind == AK_PURE ? vector_ok(c, r) : false;
	bool window = r->kind == AK_REDUCE && r->rconst && r->nred > 0;
	int64_t win = 1;
	for (int k = 0; k < r->nred; k++)
		win *= r->rext[k] ? r->rext[k] : 1000;
	window &= win <= 16;
	bool lanes_rf = r->kind == AK_REDUCE && lanes_ok(c, r);
	fprintf(c->fp, "  // C7: %s: outer loops in parallel%s%s%s\n", r->name,
	    vec ? ", the innermost vectorized" : "", window ? "; C4: its small window unrolled" : "",
	    lanes_rf ? "" : "");
	/* the outer loops: every pure axis but a vectorized innermost one */
	int nout = vec && r->npure > 0 ? r->npure - 1 : r->npure;
	for (int d = 0; d < nout; d++) {
		order[n] = r->pure[d];
		ext[n++] = ext_or(r->pext[d]);
	}
	if (n > 0) {
		c->row[R] = par_outer(c, r->name, order, ext, n, &npar);
		c->rowdims[R] = npar;
	}
	if (vec) {
		const char *o = auto_fresh(g, arena_printf(perm, "%so", r->pure[last]));
		const char *i = auto_fresh(g, arena_printf(perm, "%si", r->pure[last]));
		int vv[4], nvv;
		const int vc[] = { 2 * v, 4 * v };
		nvv = choices(vv, v, vc, 2, 1, 32);
		const char *VW = knob(c, r->name, "vec", vv, nvv);
		say(c, "%s.split(%s, %s) -> (%s, %s);", r->name, r->pure[last], VW, o, i);
		say(c, "%s.vectorize(%s);", r->name, i);
		if (n == 0) {
			c->row[R] = NULL;
		}
	}
	if (window)
		for (int k = 0; k < r->nred; k++)
			say(c, "%s.unroll(%s);", r->name, r->red[k]);
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
	/* C2: a contraction whose one reader is this element-wise stage */
	if (r->kind == AK_PURE) {
		for (int i = R - 1; i >= 0; i--) {
			if (c->place[i] != P_ROOT || g->s[i].kind != AK_REDUCE || g->s[i].output ||
			    only_reader(c, i, 0) != R || !identity_chain(c, i, 0) ||
			    g->s[i].npure != r->npure)
				continue;
			Tile t = contraction(c, i);
			if (!t.ok)
				continue;
			c->partner[R] = i;
			c->place[i] = P_AT;
			c->at_stage[i] = R;
			register_tile(c, R, i, t);
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
		Tile t = contraction(c, R);
		if (t.ok) {
			register_tile(c, R, R, t);
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
	for (int i = 0; i < AUTO_MAXS; i++) {
		c.partner[i] = -1;
		c.stencil_of[i] = -1;
	}
	fprintf(fp, "// txc-auto v1: %s for cpu (%s, %d-byte vectors, %d registers)\n",
	    g->k->name, o->m->isa, o->m->vbytes, o->m->vregs);
	fprintf(fp, "schedule %s as auto for cpu {\n", g->k->name);
	decide_inline(&c);
	for (int i = 0; i < g->n; i++)
		if (c.place[i] == P_INLINE)
			fprintf(fp, "  // C1: %s is cheap and read once per use: inlined\n"
			    "  %s.compute_inline();\n", g->s[i].name, g->s[i].name);
	for (int i = g->n - 1; i >= 0; i--) {
		AutoStage *s = &g->s[i];
		if (c.place[i] == P_INLINE)
			continue;
		if (c.place[i] == P_AT) {
			/* placed by its consumer's rule (C2's contraction, a strip's copy) */
			if (c.at_loop[i] && c.partner[c.at_stage[i]] != i) {
				fprintf(fp, "  // C6: %s, a transposed copy, computed per strip of %s\n",
				    s->name, g->s[c.at_stage[i]].name);
				say(&c, "%s.compute_at(%s, %s);", s->name, g->s[c.at_stage[i]].name,
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
				say(&c, "%s.compute_at(%s, %s);", s->name, g->s[R].name, c.tile[R]);
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
			/* a triangle's range may use only the row's axes */
			if (same && G >= 0 && c.row[G] && c.rowdims[G] > 0 &&
			    (!s->tri || (s->tridep >> c.rowdims[G]) == 0) &&
			    row_ok(&c, i, G, c.rowdims[G], 0)) {
				fprintf(fp, "  // C6: %s computed per row of %s, where it is read\n", s->name,
				    g->s[G].name);
				say(&c, "%s.compute_at(%s, %s);", s->name, g->s[G].name, c.row[G]);
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
