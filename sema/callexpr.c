/* callexpr.c: expressions for calls.c (tx.5 CALLS): as text for its
 * messages, copies of the caller's expressions, and the comparison of two
 * extents for every size (as sums of sizes times constants, floor
 * divisions by constants taken apart, the other terms compared as
 * written).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/sema.h"

/* ---- expressions as text, and a linear form to compare extents ------- */

const char *
callexpr_text(Expr *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		return "?";
	ast_format_expr(fp, e);
	fclose(fp);
	const char *s = arena_strdup(perm, buf ? buf : "?");
	free(buf);
	return s;
}

const char *
callexpr_shape_text(Expr **shape, int n)
{
	const char *s = "";
	for (int d = 0; d < n; d++)
		s = arena_printf(perm, "%s%s%s", s, d ? ", " : "", callexpr_text(shape[d]));
	return arena_printf(perm, "[%s]", s);
}

/* c + sum of coef[i] * atom[i]: an atom is a size's name or the text of a
 * subexpression that is not linear. */
enum { LIN_MAX = 24 };
typedef struct {
	const char *atom[LIN_MAX];
	int64_t coef[LIN_MAX];
	int n;
	int64_t c;
	bool ok;
} Lin;

static void
lin_term(Lin *l, const char *atom, int64_t m)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->atom[i], atom) == 0) {
			if (__builtin_add_overflow(l->coef[i], m, &l->coef[i]))
				l->ok = false;
			return;
		}
	if (l->n == LIN_MAX) {
		l->ok = false;
		return;
	}
	l->atom[l->n] = atom;
	l->coef[l->n++] = m;
}

static void lin_add(Lin *l, Expr *e, int64_t m);

static int
by_atom(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* m * floor(num / d), d > 0 (tx.5: / rounds toward negative infinity):
 * the constant of num taken out as a multiple of d (floor((L + d q + r)
 * / d) = q + floor((L + r) / d)), the rest an atom written canonically,
 * so (H - 1) / 2 + 1 and (H + 1) / 2 compare equal. */
static void
lin_div(Lin *l, Expr *num, int64_t d, int64_t m)
{
	Lin n = { .ok = true };
	lin_add(&n, num, 1);
	if (!n.ok) {
		l->ok = false;
		return;
	}
	int64_t q = n.c / d, r = n.c % d, v;
	if (r < 0) {
		r += d;
		q -= 1;
	}
	if (__builtin_mul_overflow(q, m, &v) || __builtin_add_overflow(l->c, v, &l->c)) {
		l->ok = false;
		return;
	}
	/* every coefficient a multiple of d (a division by 1 among them):
	 * floor((d a + r) / d) = a, 0 <= r < d */
	bool exact = true;
	for (int i = 0; i < n.n; i++)
		exact &= n.coef[i] % d == 0;
	if (exact) {
		for (int i = 0; i < n.n && l->ok; i++)
			if (n.coef[i]) {
				if (__builtin_mul_overflow(n.coef[i] / d, m, &v))
					l->ok = false;
				else
					lin_term(l, n.atom[i], v);
			}
		return;
	}
	const char *terms[LIN_MAX];
	int nt = 0;
	for (int i = 0; i < n.n; i++)
		if (n.coef[i])
			terms[nt++] = arena_printf(perm, "%s*%lld", n.atom[i], (long long)n.coef[i]);
	if (nt == 0) {
		return;       /* floor(r / d) = 0 */
	}
	qsort(terms, (size_t)nt, sizeof *terms, by_atom);
	const char *t = "";
	for (int i = 0; i < nt; i++)
		t = arena_printf(perm, "%s%s+", t, terms[i]);
	lin_term(l, arena_printf(perm, "(%s%lld)/%lld", t, (long long)r, (long long)d), m);
}

static void
lin_add(Lin *l, Expr *e, int64_t m)
{
	int64_t v;
	if (!e || !l->ok) {
		l->ok = false;
		return;
	}
	switch (e->kind) {
	case EXPR_INT:
		if (__builtin_mul_overflow(e->ival, m, &v) || __builtin_add_overflow(l->c, v, &l->c))
			l->ok = false;
		return;
	case EXPR_NAME:
		lin_term(l, e->id.name, m);
		return;
	case EXPR_UNARY:
		if (e->bin.op == OP_NEG) {
			lin_add(l, e->bin.a, -m);
			return;
		}
		break;
	case EXPR_BINARY:
		if (e->bin.op == OP_ADD || e->bin.op == OP_SUB) {
			lin_add(l, e->bin.a, m);
			lin_add(l, e->bin.b, e->bin.op == OP_ADD ? m : -m);
			return;
		}
		if (e->bin.op == OP_DIV && e->bin.b->kind == EXPR_INT && e->bin.b->ival > 0) {
			lin_div(l, e->bin.a, e->bin.b->ival, m);
			return;
		}
		if (e->bin.op == OP_MUL && (e->bin.a->kind == EXPR_INT || e->bin.b->kind == EXPR_INT)) {
			Expr *k = e->bin.a->kind == EXPR_INT ? e->bin.a : e->bin.b;
			Expr *o = k == e->bin.a ? e->bin.b : e->bin.a;
			if (__builtin_mul_overflow(m, k->ival, &v))
				l->ok = false;
			else
				lin_add(l, o, v);
			return;
		}
		break;
	default:
		break;
	}
	lin_term(l, callexpr_text(e), m);
}


/* Whether two extents (of the caller's sizes) are equal for every size. */
CallCmp
callexpr_compare(Expr *a, Expr *b)
{
	Lin l = { .ok = true };
	lin_add(&l, a, 1);
	lin_add(&l, b, -1);
	if (!l.ok)
		return CALL_UNKNOWN;
	for (int i = 0; i < l.n; i++)
		if (l.coef[i] != 0)
			return CALL_UNKNOWN;
	return l.c == 0 ? CALL_SAME : CALL_DIFFERENT;
}

/* ---- copies ------------------------------------------------------------ */

/* A copy of a caller expression (an argument, a binding). */
Expr *
callexpr_dup(Expr *e)
{
	if (!e)
		return NULL;
	Expr *n = arena_alloc(perm, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		n->call.args = arena_alloc(perm, (size_t)(e->call.nargs + 1) * sizeof *n->call.args);
		for (int i = 0; i < e->call.nargs; i++)
			n->call.args[i] = callexpr_dup(e->call.args[i]);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		n->bin.a = callexpr_dup(e->bin.a);
		n->bin.b = callexpr_dup(e->bin.b);
		break;
	case EXPR_REDUCE:
		n->reduce.axes = arena_alloc(perm, (size_t)(e->reduce.naxes + 1) * sizeof *n->reduce.axes);
		for (int i = 0; i < e->reduce.naxes; i++) {
			n->reduce.axes[i] = e->reduce.axes[i];
			n->reduce.axes[i].lo = callexpr_dup(e->reduce.axes[i].lo);
			n->reduce.axes[i].hi = callexpr_dup(e->reduce.axes[i].hi);
		}
		n->reduce.body = callexpr_dup(e->reduce.body);
		n->reduce.where = callexpr_dup(e->reduce.where);
		break;
	default:
		break;
	}
	return n;
}

