/* facts.c: what a loop that runs says about the sizes.
 *
 * Inside a loop over lo <= i <= hi, lo <= hi holds: a loop over
 * 0 <= i < N that runs has N >= 1, one over the blocks (N + 7)/8 of a
 * split has N >= 1 too, one over M*K elements has M >= 1 and K >= 1.
 * Bound inference (bounds_infer.c) keeps such facts as a floor per size
 * parameter, the least value the size has where a stage's body runs, and
 * hands them to the prover as the sizes' ranges (lin_prove.c reads a size
 * whose range starts above 0 as at least that).  So a[0], a[N - 1],
 * a[clamp(i - 1, 0, N - 1)] and a[(i + 1) % N] inside a loop over N are
 * proved in bounds, where they are not for N = 0.
 *
 * A stage computed at root for consumers that all run only where
 * N >= 1 relies on that fact too; lower.c then computes it only there,
 * under facts_cond.
 */
#include "lower/lower.h"

/* The index of size parameter v, or -1. */
static int
size_index(Lower *L, Var *v)
{
	for (int i = 0; i < L->k->nparams; i++)
		if (L->params[i] == v)
			return L->k->params[i].is_size ? i : -1;
	return -1;
}

int64_t *
facts_copy(Lower *L, const int64_t *from)
{
	int n = L->k->nparams;
	int64_t *f = arena_alloc(ir_arena, (n + 1) * sizeof *f);
	for (int i = 0; i < n; i++)
		f[i] = from ? from[i] : 0;
	return f;
}

/* The floors every question starts from: the sizes' ranges in L->ranges
 * (0, or a specialization's least value). */
int64_t *
facts_base(Lower *L)
{
	int64_t *f = facts_copy(L, NULL);
	for (int i = 0; i < L->k->nparams; i++) {
		int64_t c;
		for (VarRange *r = L->ranges; r; r = r->next)
			if (r->var == L->params[i]) {
				if (r->lo && ir_is_const(r->lo, &c) && c > 0)
					f[i] = c;
				break;
			}
	}
	return f;
}

void
facts_join(Lower *L, int64_t *to, const int64_t *from)
{
	for (int i = 0; i < L->k->nparams; i++)
		if (from[i] > to[i])
			to[i] = from[i];
}

void
facts_meet(Lower *L, int64_t *to, const int64_t *from)
{
	for (int i = 0; i < L->k->nparams; i++)
		if (from[i] < to[i])
			to[i] = from[i];
}

bool
facts_stronger(Lower *L, const int64_t *a, const int64_t *b)
{
	for (int i = 0; i < L->k->nparams; i++)
		if (a[i] > b[i])
			return true;
	return false;
}

/* ---- from e >= 0 to floors ------------------------------------------- */

typedef struct { IrExpr *atom; int64_t c; } Term;

/* e (a normalised linear form: terms and a constant, lin_normalize's
 * shape) as c*atom + k, when it has one non-constant term. */
static bool
one_term(IrExpr *e, Term *t, int64_t *k, int64_t sign, int *nterms)
{
	int64_t c;
	switch (e->kind) {
	case IR_INT:
		if (__builtin_mul_overflow(e->ival, sign, &c) || __builtin_add_overflow(*k, c, k))
			return false;
		return true;
	case IR_ADD:
		return one_term(e->a, t, k, sign, nterms) && one_term(e->b, t, k, sign, nterms);
	case IR_SUB:
		return one_term(e->a, t, k, sign, nterms) && one_term(e->b, t, k, -sign, nterms);
	case IR_NEG:
		return one_term(e->a, t, k, -sign, nterms);
	case IR_MUL:
		if (ir_is_const(e->b, &c) && c != INT64_MIN) {
			if (++*nterms > 1)
				return false;
			t->atom = e->a;
			t->c = sign * c;
			return true;
		}
		/* a product of two non-constants is an atom */
		/* fallthrough */
	default:
		if (++*nterms > 1)
			return false;
		t->atom = e;
		t->c = sign;
		return true;
	}
}

/* Whether e is never negative for any sizes (a size, a product or a
 * quotient by a positive constant of such). */
static bool
nonneg(Lower *L, IrExpr *e)
{
	VarRange *r = NULL;
	for (int i = 0; i < L->k->nparams; i++)
		if (L->k->params[i].is_size)
			r = lin_push(r, L->params[i], ir_i64c(0), NULL, false);
	return lin_prove_le(ir_i64c(0), e, r);
}

static void ge(Lower *L, IrExpr *e, int64_t *floor, int depth);

/* atom >= m */
static void
atom_ge(Lower *L, IrExpr *a, int64_t m, int64_t *floor, int depth)
{
	int64_t c;
	if (a->kind == IR_VAR) {
		int i = size_index(L, a->var);
		if (i >= 0 && m > floor[i])
			floor[i] = m;
	} else if (a->kind == IR_MUL && m >= 1 && nonneg(L, a->a) && nonneg(L, a->b)) {
		/* a product of factors that are never negative (sizes, a fused
		 * loop's N*((K + 3)/4)) that is at least 1 has every factor at
		 * least 1 */
		ge(L, lin_normalize(ir_sub(a->a, ir_i64c(1))), floor, depth + 1);
		ge(L, lin_normalize(ir_sub(a->b, ir_i64c(1))), floor, depth + 1);
	} else if (a->kind == IR_DIV && ir_is_const(a->b, &c) && c > 0 &&
	    !__builtin_mul_overflow(m, c, &c)) {
		/* X/c >= m is X >= m*c (floor division by a positive constant) */
		ge(L, lin_normalize(ir_sub(a->a, ir_i64c(c))), floor, depth + 1);
	}
}

static void
ge(Lower *L, IrExpr *e, int64_t *floor, int depth)
{
	if (!e || depth > 8 || e->type.code != TY_I64 || e->type.lanes != 1)
		return;
	if (e->kind == IR_MIN) {     /* both sides; max: either, so nothing */
		ge(L, e->a, floor, depth + 1);
		ge(L, e->b, floor, depth + 1);
		return;
	}
	Term t = { NULL, 0 };
	int64_t k = 0;
	int n = 0;
	if (!one_term(e, &t, &k, 1, &n) || n != 1 || t.c <= 0 || k >= 0 || k == INT64_MIN)
		return;
	/* c*atom + k >= 0 with k < 0: atom >= ceil(-k / c), at least 1 */
	int64_t m = -k / t.c + (-k % t.c != 0);
	atom_ge(L, t.atom, m, floor, depth);
}

void
facts_ge0(Lower *L, IrExpr *e, int64_t *floor)
{
	if (e)
		ge(L, lin_normalize(e), floor, 0);
}

void
facts_nonempty(Lower *L, IrExpr *lo, IrExpr *hi, int64_t *floor)
{
	if (lo && hi)
		facts_ge0(L, ir_sub(hi, lo), floor);
}

/* ---- to the prover and to the code ------------------------------------ */

VarRange *
facts_scope(Lower *L, VarRange *r, const int64_t *floor)
{
	VarRange *top = r;
	for (int i = 0; floor && i < L->k->nparams; i++) {
		if (floor[i] <= 0)
			continue;
		/* never hide a stronger fact (a shift_inward split's N >= 8) */
		int64_t c = 0;
		for (VarRange *v = top; v; v = v->next)
			if (v->var == L->params[i]) {
				if (!v->lo || !ir_is_const(v->lo, &c) || v->hi)
					c = INT64_MAX;     /* not a plain size range */
				break;
			}
		if (floor[i] > c)
			r = lin_push(r, L->params[i], ir_i64c(floor[i]), NULL, false);
	}
	return r;
}

IrExpr *
facts_cond(Lower *L, const int64_t *floor, const int64_t *base)
{
	IrExpr *c = NULL;
	for (int i = 0; i < L->k->nparams; i++)
		if (floor[i] > base[i]) {
			IrExpr *g = ir_binop(IR_GE, ir_var(L->params[i]), ir_i64c(floor[i]));
			c = c ? ir_binop(IR_AND, c, g) : g;
		}
	return c;
}

const char *
facts_text(Lower *L, const int64_t *floor, const int64_t *base)
{
	const char *s = "";
	for (int i = 0; i < L->k->nparams; i++)
		if (floor[i] > base[i])
			s = arena_printf(ir_arena, "%s%s%s >= %lld", s, *s ? " and " : "",
			    L->k->params[i].name, (long long)floor[i]);
	return s;
}
