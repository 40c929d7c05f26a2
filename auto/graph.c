/* graph.c: the stage graph the schedule generator's rules read.
 *
 * From a checked kernel: its stages in compute order, each stage's pure
 * and reduction axes with their extents at the sizes (-D values, else
 * AUTO_REP_SIZE for every size parameter), which stages read it, and the
 * facts the rules test: a reduction or not, a scan, update or tuple
 * reduction (kept as written), a range that depends on a pure axis,
 * expensive operations, a boundary select, a table read inside an index.
 */
#include <string.h>

#include "auto/auto.h"
#include "sema/sema.h"

int
auto_stage_index(const AutoGraph *g, const Tensor *t)
{
	if (!t || !g->of_tensor || t->index < 0 || t->index >= g->k->ntensors ||
	    g->k->tensors[t->index] != t)
		return -1;
	return g->of_tensor[t->index];
}

static int64_t
size_of(const AutoGraph *g, const Param *p)
{
	for (int i = 0; i < g->ndefs; i++)
		if (g->defs[i] && !strcmp(g->defs[i], p->name))
			return g->vals[i];
	return AUTO_REP_SIZE;
}

static int64_t
eval(const AutoGraph *g, Expr *e, bool *ok)
{
	if (!e || !*ok) {
		*ok = false;
		return 0;
	}
	switch (e->kind) {
	case EXPR_INT:
		return e->ival;
	case EXPR_NAME:
		if (e->id.ref == REF_SIZE && e->id.param)
			return size_of(g, e->id.param);
		*ok = false;
		return 0;
	case EXPR_CAST:
		return eval(g, e->call.args[0], ok);
	case EXPR_CALL:
		if (e->call.nargs == 2 && (e->call.builtin == BI_MIN || e->call.builtin == BI_MAX)) {
			int64_t a = eval(g, e->call.args[0], ok), b = eval(g, e->call.args[1], ok);
			return e->call.builtin == BI_MIN ? (a < b ? a : b) : (a > b ? a : b);
		}
		*ok = false;
		return 0;
	case EXPR_UNARY:
		if (e->bin.op == OP_NEG) {
			int64_t a = eval(g, e->bin.a, ok);
			if (a == INT64_MIN)
				*ok = false;
			return *ok ? -a : 0;
		}
		*ok = false;
		return 0;
	case EXPR_BINARY: {
		int64_t a = eval(g, e->bin.a, ok), b = eval(g, e->bin.b, ok), r;
		if (!*ok)
			return 0;
		switch (e->bin.op) {
		case OP_ADD:
			if (__builtin_add_overflow(a, b, &r)) break;
			return r;
		case OP_SUB:
			if (__builtin_sub_overflow(a, b, &r)) break;
			return r;
		case OP_MUL:
			if (__builtin_mul_overflow(a, b, &r)) break;
			return r;
		case OP_DIV:
			if (b == 0 || (b == -1 && a == INT64_MIN)) break;
			return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
		case OP_MOD:
			if (b == 0 || b == INT64_MIN || (b == -1 && a == INT64_MIN)) break;
			return ((a % b) + (b < 0 ? -b : b)) % (b < 0 ? -b : b);
		default: break;
		}
		*ok = false;
		return 0;
	}
	default:
		*ok = false;
		return 0;
	}
}

int64_t
auto_eval(const AutoGraph *g, Expr *e)
{
	bool ok = true;
	int64_t v = eval(g, e, &ok);
	return !ok || v <= 0 ? 0 : v > AUTO_EXT_MAX ? AUTO_EXT_MAX : v;
}

/* ---- walking a stage's definitions ------------------------------------- */

static void
walk(Expr *e, bool in_index, AutoAccessFn fn, void *ctx)
{
	if (!e)
		return;
	switch (e->kind) {
	case EXPR_ACCESS:
		fn(e, in_index, ctx);
		for (int i = 0; i < e->call.nargs; i++)
			walk(e->call.args[i], true, fn, ctx);
		break;
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			walk(e->call.args[i], in_index, fn, ctx);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		walk(e->bin.a, in_index, fn, ctx);
		walk(e->bin.b, in_index, fn, ctx);
		break;
	case EXPR_REDUCE:
		walk(e->reduce.body, in_index, fn, ctx);
		walk(e->reduce.where, in_index, fn, ctx);
		break;
	default:
		break;
	}
}

void
auto_accesses(const AutoStage *s, AutoAccessFn fn, void *ctx)
{
	Tensor *t = s->t;
	if (t->rule)
		walk(t->rule->value, false, fn, ctx);
	for (int j = 0; j < t->ninits; j++)
		walk(t->inits[j]->value, false, fn, ctx);
	if (t->update) {
		walk(t->update->value, false, fn, ctx);
		walk(t->update->target, false, fn, ctx);
		walk(t->update->upd.where, false, fn, ctx);
	}
}

/* ---- affine index forms ------------------------------------------------ */

int64_t
auto_coeff(Expr *e, bool pure, int d)
{
	if (!e)
		return 0;
	switch (e->kind) {
	case EXPR_INT: case EXPR_FLOAT: case EXPR_BOOL:
		return 0;
	case EXPR_NAME:
		if (pure && e->id.ref == REF_PURE_AXIS)
			return e->id.axis == d;
		if (!pure && e->id.ref == REF_RED_AXIS && e->id.red)
			return e->id.red->index == d;
		return e->id.ref == REF_PURE_AXIS || e->id.ref == REF_RED_AXIS ? 0 : 0;
	case EXPR_CAST:
		return auto_coeff(e->call.args[0], pure, d);
	case EXPR_UNARY: {
		int64_t a = auto_coeff(e->bin.a, pure, d);
		return e->bin.op == OP_NEG && a >= 0 ? -a : a == 0 ? 0 : -1;
	}
	case EXPR_BINARY: {
		int64_t a = auto_coeff(e->bin.a, pure, d), b = auto_coeff(e->bin.b, pure, d);
		if (a < 0 || b < 0)
			return -1;
		switch (e->bin.op) {
		case OP_ADD: return a + b;
		case OP_SUB: return b ? -1 : a;   /* x - axis: a negative stride */
		case OP_MUL:
			if (a && b)
				return -1;
			if (!a && !b)
				return 0;
			{
				Expr *c = a ? e->bin.b : e->bin.a;
				if (c->kind != EXPR_INT || c->ival <= 0 || c->ival > 1024)
					return -1;
				return (a ? a : b) * c->ival;
			}
		default:
			return a || b ? -1 : 0;
		}
	}
	case EXPR_ACCESS:   /* a gather: depends on whatever its index does */
	case EXPR_CALL: case EXPR_SELECT: {
		for (int i = 0; i < e->call.nargs; i++)
			if (auto_coeff(e->call.args[i], pure, d) != 0)
				return -1;
		return 0;
	}
	default:
		return -1;
	}
}

bool
auto_axis_plus(Expr *e, int d, int64_t *off)
{
	if (e->kind == EXPR_NAME && e->id.ref == REF_PURE_AXIS && e->id.axis == d) {
		*off = 0;
		return true;
	}
	if (e->kind == EXPR_BINARY && (e->bin.op == OP_ADD || e->bin.op == OP_SUB)) {
		Expr *a = e->bin.a, *b = e->bin.b;
		if (b->kind == EXPR_INT && auto_axis_plus(a, d, off)) {
			*off += e->bin.op == OP_ADD ? b->ival : -b->ival;
			return true;
		}
		if (e->bin.op == OP_ADD && a->kind == EXPR_INT && auto_axis_plus(b, d, off)) {
			*off += a->ival;
			return true;
		}
	}
	return false;
}

/* Names made so far for this kernel (auto_fresh): loops and stages share
 * one space, which keeps the text easy to read.  Every name taken (the
 * kernel's tensors, parameters and axes, and those made) is in a hash
 * set, so a fresh name costs the same however many stages there are. */
static const char **made;
static int nmade, capmade;
static const char **set;      /* open addressing; NULL: empty */
static size_t setcap, setn;
static const AutoGraph *set_of;   /* the graph whose names are in it */

static size_t
name_hash(const char *s)
{
	size_t h = 5381;
	while (*s)
		h = h * 33 ^ (unsigned char)*s++;
	return h;
}

static bool
set_has(const char *n)
{
	if (!setcap)
		return false;
	for (size_t i = name_hash(n) & (setcap - 1);; i = (i + 1) & (setcap - 1)) {
		if (!set[i])
			return false;
		if (!strcmp(set[i], n))
			return true;
	}
}

static void
set_add(const char *n)
{
	if (!n || set_has(n))
		return;
	if (2 * (setn + 1) > setcap) {
		size_t oc = setcap;
		const char **old = set;
		setcap = oc ? 2 * oc : 256;
		set = arena_alloc(perm, sizeof *set * setcap);
		setn = 0;
		for (size_t i = 0; i < oc; i++)
			if (old[i])
				set_add(old[i]);
	}
	size_t i = name_hash(n) & (setcap - 1);
	while (set[i])
		i = (i + 1) & (setcap - 1);
	set[i] = n;
	setn++;
}

static void
names_reset(void)
{
	set = NULL;
	setcap = setn = 0;
	set_of = NULL;
}

/* ---- per-stage facts ----------------------------------------------------- */

typedef struct {
	AutoGraph *g;
	int si;
} Reads;

static void
note_read(Expr *acc, bool in_index, void *ctx)
{
	Reads *r = ctx;
	int p = auto_stage_index(r->g, acc->call.tensor);
	if (p < 0 && acc->call.tensor) {
		AutoStage *rs = &r->g->s[r->si];
		int idx = acc->call.tensor->index;
		for (int i = 0; i < rs->ninputs; i++)
			if (rs->inputs[i] == idx)
				return;
		*ARENA_PUSH(perm, rs->inputs, rs->ninputs, rs->capinputs) = idx;
		return;
	}
	if (p < 0 || p == r->si)
		return;
	AutoStage *ps = &r->g->s[p];
	if (in_index)
		ps->in_index = true;
	/* a reader's accesses are walked together: a repeat is the last one */
	if (ps->ncons > 0 && ps->cons[ps->ncons - 1] == r->si)
		return;
	*ARENA_PUSH(perm, ps->cons, ps->ncons, ps->capcons) = r->si;
}

static void
cost(AutoStage *s, Expr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case EXPR_CALL:
		s->flops += 1;
		switch (e->call.builtin) {
		case BI_EXP: case BI_LOG: case BI_TANH: case BI_SIN: case BI_COS: case BI_ERF:
		case BI_SIGMOID: case BI_POW:
			s->expensive = true;
			s->flops += 10;
			break;
		default:
			break;
		}
		for (int i = 0; i < e->call.nargs; i++)
			cost(s, e->call.args[i]);
		break;
	case EXPR_ACCESS:
		break;   /* its index is no arithmetic of the value */
	case EXPR_CAST:
		cost(s, e->call.args[0]);
		break;
	case EXPR_SELECT:
		s->flops += 1;
		for (int i = 0; i < e->call.nargs; i++)
			cost(s, e->call.args[i]);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		s->flops += 1;
		if (e->kind == EXPR_BINARY && (e->bin.op == OP_DIV || e->bin.op == OP_MOD) &&
		    !(e->bin.b && (e->bin.b->kind == EXPR_INT || e->bin.b->kind == EXPR_FLOAT)))
			s->expensive = true;   /* a division by a variable */
		cost(s, e->bin.a);
		cost(s, e->bin.b);
		break;
	case EXPR_REDUCE:
		cost(s, e->reduce.body);
		break;
	default:
		break;
	}
}

/* Whether a select's condition tests only its own pure axes (padding). */
static bool
axes_only(Expr *e)
{
	if (!e)
		return true;
	switch (e->kind) {
	case EXPR_INT: case EXPR_BOOL: case EXPR_FLOAT:
		return true;
	case EXPR_NAME:
		return e->id.ref == REF_PURE_AXIS || e->id.ref == REF_SIZE;
	case EXPR_UNARY: case EXPR_BINARY:
		return axes_only(e->bin.a) && axes_only(e->bin.b);
	case EXPR_CAST:
		return axes_only(e->call.args[0]);
	default:
		return false;
	}
}

static bool
pure_dep(Expr *e, void *ctx)
{
	if (e->kind == EXPR_NAME && e->id.ref == REF_PURE_AXIS && e->id.axis < 16)
		*(unsigned *)ctx |= 1u << e->id.axis;
	return true;
}

/* A positive integer constant below a million (an extent the source fixes). */
static int64_t
const_of(Expr *e)
{
	return e && e->kind == EXPR_INT && e->ival > 0 && e->ival < 1000000 ? e->ival : 0;
}

static void
setup_stage(AutoGraph *g, AutoStage *s, Tensor *t)
{
	memset(s, 0, sizeof *s);
	s->name = t->name;
	s->t = t;
	s->output = t->role == ROLE_OUT;
	s->esize = type_bits(t->elem) / 8;
	if (s->esize < 1)
		s->esize = 1;
	Rule *r = t->rule;
	s->kind = AK_PURE;
	if (!r || t->ninits > 0 || t->update || r->tgroup || r->tuple)
		s->kind = AK_SPECIAL;
	for (int d = 0; r && d < r->naxes && d < AUTO_MAXA; d++) {
		s->pure[s->npure] = r->axes[d];
		s->pconst[s->npure] = t->shape && d < t->ndims ? const_of(t->shape[d]) : 0;
		s->pext[s->npure++] = t->shape && d < t->ndims ? auto_eval(g, t->shape[d]) : 0;
		if (!r->axes[d])
			s->kind = AK_SPECIAL;
	}
	if (r && r->naxes > AUTO_MAXA)
		s->kind = AK_SPECIAL;
	if (r && r->value && r->value->kind == EXPR_REDUCE) {
		Reduce *rd = &r->value->reduce;
		if (s->kind == AK_PURE)
			s->kind = AK_REDUCE;
		s->rop = rd->op;
		s->rwhere = rd->where != NULL;
		s->rconst = true;
		for (int a = 0; a < rd->naxes && a < AUTO_MAXA; a++) {
			unsigned dep = 0;
			check_walk(rd->axes[a].lo, pure_dep, &dep);
			check_walk(rd->axes[a].hi, pure_dep, &dep);
			s->rdep[a] = dep;
			if (dep && s->kind != AK_SPECIAL) {
				s->kind = AK_SPECIAL;   /* sum(k <= i): a triangle */
				s->tri = true;
			}
			s->tridep |= dep;
			if (!dep && !rd->axes[a].lo)
				s->rconst_ext[a] = const_of(rd->axes[a].hi);
			s->rplain[a] = !dep && !rd->axes[a].lo && rd->axes[a].hi &&
			    (rd->axes[a].hi->kind == EXPR_INT || rd->axes[a].hi->kind == EXPR_NAME);
			int64_t lo = rd->axes[a].lo ? auto_eval(g, rd->axes[a].lo) : 0;
			int64_t hi = auto_eval(g, rd->axes[a].hi);
			bool clo = !rd->axes[a].lo || rd->axes[a].lo->kind == EXPR_INT;
			s->rconst &= clo && rd->axes[a].hi && rd->axes[a].hi->kind == EXPR_INT;
			s->red[s->nred] = rd->axes[a].name;
			s->rext[s->nred++] = hi > lo ? hi - lo : 0;   /* both clamped: no overflow */
		}
		if (rd->naxes > AUTO_MAXA)
			s->kind = AK_SPECIAL, s->tri = false;
		if (rd->op != RED_SUM && rd->op != RED_MAX && rd->op != RED_MIN && rd->op != RED_PROD)
			s->kind = AK_SPECIAL, s->tri = false;
	}
	if (r) {
		cost(s, r->value);
		Expr *v = r->value;
		if (v && v->kind == EXPR_SELECT && axes_only(v->call.args[0]))
			s->boundary = true;
	}
}

void
auto_graph(AutoGraph *g, Kernel *k, const char **defs, const int64_t *vals, int ndefs)
{
	memset(g, 0, sizeof *g);
	g->k = k;
	g->defs = defs;
	g->vals = vals;
	g->ndefs = ndefs;
	nmade = 0;
	names_reset();
	g->too_big = k->nstages > AUTO_MAXS;
	if (g->too_big)
		return;
	g->s = arena_alloc(perm, sizeof *g->s * (size_t)(k->nstages + 1));
	g->of_tensor = arena_alloc(perm, sizeof *g->of_tensor * (size_t)(k->ntensors + 1));
	for (int i = 0; i < k->ntensors; i++)
		g->of_tensor[i] = -1;
	for (int i = 0; i < k->nstages; i++) {
		setup_stage(g, &g->s[g->n], k->stages[i]);
		if (k->stages[i]->index >= 0 && k->stages[i]->index < k->ntensors &&
		    k->tensors[k->stages[i]->index] == k->stages[i])
			g->of_tensor[k->stages[i]->index] = g->n;
		g->n++;
	}
	for (int i = 0; i < g->n; i++) {
		Reads r = { g, i };
		auto_accesses(&g->s[i], note_read, &r);
	}
	/* a stage a special one reads, or one read in an index, stays as it is
	 * read: the rules place it at root */
}

/* ---- names ------------------------------------------------------------------- */

/* Fills the set with the names g's kernel takes (once per graph). */
static void
names_fill(AutoGraph *g)
{
	Kernel *k = g->k;
	names_reset();
	set_of = g;
	for (int i = 0; i < k->ntensors; i++)
		set_add(k->tensors[i]->name);
	for (int i = 0; i < k->nparams; i++)
		set_add(k->params[i].name);
	for (int i = 0; i < g->n; i++) {
		for (int d = 0; d < g->s[i].npure; d++)
			set_add(g->s[i].pure[d]);
		for (int d = 0; d < g->s[i].nred; d++)
			set_add(g->s[i].red[d]);
	}
	for (int j = 0; j < nmade; j++)
		set_add(made[j]);
}

const char *
auto_fresh(AutoGraph *g, const char *want)
{
	if (set_of != g)
		names_fill(g);
	const char *n = want;
	for (int i = 1; set_has(n); i++)
		n = arena_printf(perm, "%s%d", want, i);
	*ARENA_PUSH(perm, made, nmade, capmade) = n;
	set_add(n);
	return n;
}
