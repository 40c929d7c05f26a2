/* sym.c: size expressions of an ONNX graph in one canonical form.
 *
 * The extents of a model with dynamic dimensions are expressions of the
 * size parameters ("(H + 2 - 3) / 2 + 1"), built as text by the operators
 * that compute them, and Shape gives them back as values that shape
 * arithmetic (Gather, Mul, Concat ... Reshape) works on at import.  Two
 * routes to one extent must give one text, or the broadcast of their
 * values fails and a read of one at the other's extent cannot be proven
 * in bounds; so every extent is parsed and printed again here as a sum of
 * products: integer coefficients times atoms (size parameters, and
 * floor divisions, remainders, min and max that do not simplify), terms
 * sorted, like terms merged, constants folded.  Division by a constant
 * takes out the multiples ((2*H + 3) / 2 is H + 1), a product divides by
 * its factors (N*H*W / (N*H) is W), and min and max of expressions a
 * constant apart choose.  Sizes are never negative, and '/' and '%' are
 * tx(5)'s floor division and remainder.  Text this does not read (or
 * that overflows) is kept as it is.
 */
#define TXC_ONNX_INTERNAL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

enum { MAXATOMS = 8, MAXTERMS = 32 };

typedef struct {
	int64_t c;
	int na;
	const char *a[MAXATOMS];     /* sorted */
} Term;

typedef struct {
	int n;
	Term t[MAXTERMS];
} Poly;

typedef struct {
	const char *p;
	bool bad;
} Lex;

static Poly *
pnew(void)
{
	return arena_alloc(perm, sizeof(Poly));
}

static Poly *
pconst(int64_t c)
{
	Poly *p = pnew();
	if (c) {
		p->n = 1;
		p->t[0].c = c;
	}
	return p;
}

static Poly *
patom(const char *s)
{
	Poly *p = pnew();
	p->n = 1;
	p->t[0].c = 1;
	p->t[0].na = 1;
	p->t[0].a[0] = s;
	return p;
}

static bool
isconst(const Poly *p, int64_t *v)
{
	if (p->n == 0) {
		*v = 0;
		return true;
	}
	if (p->n == 1 && p->t[0].na == 0) {
		*v = p->t[0].c;
		return true;
	}
	return false;
}

static bool
same_atoms(const Term *x, const Term *y)
{
	if (x->na != y->na)
		return false;
	for (int i = 0; i < x->na; i++)
		if (strcmp(x->a[i], y->a[i]))
			return false;
	return true;
}

/* p += t (times sign) */
static void
addterm(Poly *p, const Term *t, int64_t sign, Lex *lx)
{
	int64_t c;
	if (__builtin_mul_overflow(t->c, sign, &c)) {
		lx->bad = true;
		return;
	}
	for (int i = 0; i < p->n; i++)
		if (same_atoms(&p->t[i], t)) {
			if (__builtin_add_overflow(p->t[i].c, c, &p->t[i].c))
				lx->bad = true;
			if (!p->t[i].c)
				p->t[i] = p->t[--p->n];
			return;
		}
	if (!c)
		return;
	if (p->n == MAXTERMS) {
		lx->bad = true;
		return;
	}
	p->t[p->n] = *t;
	p->t[p->n++].c = c;
}

static Poly *
padd(const Poly *a, const Poly *b, int64_t sign, Lex *lx)
{
	Poly *p = pnew();
	*p = *a;
	for (int i = 0; i < b->n; i++)
		addterm(p, &b->t[i], sign, lx);
	return p;
}

static Poly *
pmul(const Poly *a, const Poly *b, Lex *lx)
{
	Poly *p = pnew();
	for (int i = 0; i < a->n; i++)
		for (int j = 0; j < b->n; j++) {
			Term t = { 0 };
			if (__builtin_mul_overflow(a->t[i].c, b->t[j].c, &t.c) ||
			    a->t[i].na + b->t[j].na > MAXATOMS) {
				lx->bad = true;
				return p;
			}
			/* merge two sorted atom lists */
			int x = 0, y = 0;
			while (x < a->t[i].na || y < b->t[j].na) {
				bool left = y == b->t[j].na || (x < a->t[i].na &&
				    strcmp(a->t[i].a[x], b->t[j].a[y]) <= 0);
				t.a[t.na++] = left ? a->t[i].a[x++] : b->t[j].a[y++];
			}
			addterm(p, &t, 1, lx);
		}
	return p;
}

static int
cmpterm(const void *x, const void *y)
{
	const Term *a = x, *b = y;
	if (!a->na || !b->na)
		return !a->na - !b->na;   /* the constant last */
	for (int i = 0; i < a->na && i < b->na; i++) {
		int c = strcmp(a->a[i], b->a[i]);
		if (c)
			return c;
	}
	if (a->na != b->na)
		return b->na - a->na;     /* higher degree first */
	return a->c < b->c ? -1 : a->c > b->c;
}

/* the canonical text; wrapped in parentheses unless one atom or a
 * number that is not negative */
static const char *
pstr(const Poly *p0, bool wrap)
{
	Poly p = *p0;
	int64_t v;
	if (isconst(&p, &v))
		return v < 0 && wrap ? arena_printf(perm, "(%lld)", (long long)v) :
		    arena_printf(perm, "%lld", (long long)v);
	qsort(p.t, (size_t)p.n, sizeof *p.t, cmpterm);
	const char *s = "";
	for (int i = 0; i < p.n; i++) {
		const Term *t = &p.t[i];
		uint64_t mag = t->c < 0 ? 0 - (uint64_t)t->c : (uint64_t)t->c;
		s = arena_printf(perm, "%s%s", s, !i ? (t->c < 0 ? "-" : "") : (t->c < 0 ? " - " : " + "));
		const char *f = mag != 1 || !t->na ? arena_printf(perm, "%llu", (unsigned long long)mag) : NULL;
		for (int k = 0; k < t->na; k++)
			f = f ? arena_printf(perm, "%s * %s", f, t->a[k]) : t->a[k];
		s = arena_printf(perm, "%s%s", s, f);
	}
	bool one = p.n == 1 && p.t[0].c == 1 && p.t[0].na == 1;
	return wrap && !one ? arena_printf(perm, "(%s)", s) : s;
}

static int64_t
floordiv(int64_t a, int64_t c)
{
	int64_t q = a / c;
	return q * c > a ? q - 1 : q;
}

static Poly *parse_expr(Lex *lx);

/* an atom "(P / b)" that pdivc made: P and b */
static bool
split_div(const char *atom, const Poly **num, int64_t *b)
{
	size_t n = strlen(atom);
	if (n < 7 || atom[0] != '(' || atom[n - 1] != ')')
		return false;
	const char *p = atom + n - 2;
	while (p > atom && *p >= '0' && *p <= '9')
		p--;
	if (p == atom + n - 2 || p - atom < 4 || strncmp(p - 2, " / ", 3))
		return false;
	/* (only pdivc writes "(" P " / " digits ")": a quotient by a size is
	 * "(" P " / " Q ")" with Q not a number) */
	errno = 0;
	*b = strtoll(p + 1, NULL, 10);
	if (errno || *b <= 0)
		return false;
	Lex lx = { .p = arena_strndup(perm, atom + 1, (size_t)(p - 2 - (atom + 1))) };
	*num = parse_expr(&lx);
	while (*lx.p == ' ')
		lx.p++;
	return !lx.bad && !*lx.p;
}

/* a / c or a % c for a constant c > 0: each coefficient's multiples of c
 * come out of the division (they vanish from the remainder) */
static Poly *
pdivc(const Poly *a, int64_t c, bool mod, Lex *lx)
{
	Poly *q = pnew(), *r = pnew();
	for (int i = 0; i < a->n; i++) {
		Term qt = a->t[i], rt = a->t[i];
		qt.c = floordiv(rt.c, c);
		rt.c -= qt.c * c;
		addterm(q, &qt, 1, lx);
		addterm(r, &rt, 1, lx);
	}
	int64_t rv, c2;
	if (isconst(r, &rv))          /* 0 <= rv < c */
		return mod ? pconst(rv) : q;
	/* (P / b) / c is P / (b * c) */
	const Poly *num;
	int64_t b;
	if (!mod && r->n == 1 && r->t[0].c == 1 && r->t[0].na == 1 &&
	    split_div(r->t[0].a[0], &num, &b) && !__builtin_mul_overflow(b, c, &c2))
		return padd(q, pdivc(num, c2, false, lx), 1, lx);
	const char *at = arena_printf(perm, "(%s %s %lld)", pstr(r, true), mod ? "%" : "/", (long long)c);
	return mod ? patom(at) : padd(q, patom(at), 1, lx);
}

/* a / b for b one product of atoms whose factors every term of a has */
static Poly *
pdivterm(const Poly *a, const Poly *b, Lex *lx)
{
	if (b->n != 1 || b->t[0].c <= 0 || !b->t[0].na)
		return NULL;
	const Term *d = &b->t[0];
	Poly *q = pnew();
	for (int i = 0; i < a->n; i++) {
		Term t = a->t[i];
		if (t.c % d->c)
			return NULL;
		t.c /= d->c;
		for (int k = 0; k < d->na; k++) {
			int at = -1;
			for (int j = 0; j < t.na && at < 0; j++)
				if (!strcmp(t.a[j], d->a[k]))
					at = j;
			if (at < 0)
				return NULL;
			memmove(&t.a[at], &t.a[at + 1], (size_t)(t.na - at - 1) * sizeof *t.a);
			t.na--;
		}
		addterm(q, &t, 1, lx);
	}
	return q;
}

/* every coefficient positive: not negative, as sizes are not */
static bool
positive(const Poly *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->t[i].c < 0)
			return false;
	return true;
}


static void
skip(Lex *lx)
{
	while (*lx->p == ' ')
		lx->p++;
}

static bool
eat(Lex *lx, char c)
{
	skip(lx);
	if (*lx->p != c)
		return false;
	lx->p++;
	return true;
}

static Poly *
parse_primary(Lex *lx)
{
	skip(lx);
	const char *s = lx->p;
	if (*s >= '0' && *s <= '9') {
		char *e;
		errno = 0;
		long long v = strtoll(s, &e, 10);
		if (errno)
			lx->bad = true;
		lx->p = e;
		return pconst(v);
	}
	if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_') {
		while ((*lx->p >= 'a' && *lx->p <= 'z') || (*lx->p >= 'A' && *lx->p <= 'Z') ||
		    (*lx->p >= '0' && *lx->p <= '9') || *lx->p == '_')
			lx->p++;
		const char *id = arena_strndup(perm, s, (size_t)(lx->p - s));
		if (!eat(lx, '('))
			return patom(id);
		bool ismax = !strcmp(id, "max");
		if (!ismax && strcmp(id, "min")) {
			lx->bad = true;
			return pconst(0);
		}
		Poly *a = parse_expr(lx);
		if (!eat(lx, ','))
			lx->bad = true;
		Poly *b = parse_expr(lx);
		if (!eat(lx, ')'))
			lx->bad = true;
		int64_t dv;
		Poly *d = padd(a, b, -1, lx);
		if (isconst(d, &dv))
			return (dv > 0) == ismax ? a : b;
		/* a difference of positive terms (sizes are not negative) */
		if (positive(d))
			return ismax ? a : b;
		if (positive(padd(b, a, -1, lx)))
			return ismax ? b : a;
		const char *x = pstr(a, false), *y = pstr(b, false);
		if (strcmp(x, y) > 0) {
			const char *t = x;
			x = y;
			y = t;
		}
		return patom(arena_printf(perm, "%s(%s, %s)", id, x, y));
	}
	if (eat(lx, '(')) {
		Poly *p = parse_expr(lx);
		if (!eat(lx, ')'))
			lx->bad = true;
		return p;
	}
	lx->bad = true;
	return pconst(0);
}

static Poly *
parse_unary(Lex *lx)
{
	if (eat(lx, '-'))
		return padd(pconst(0), parse_unary(lx), -1, lx);
	return parse_primary(lx);
}

static Poly *
parse_term(Lex *lx)
{
	Poly *p = parse_unary(lx);
	for (;;) {
		skip(lx);
		char op = *lx->p;
		if (op != '*' && op != '/' && op != '%')
			return p;
		lx->p++;
		Poly *q = parse_unary(lx);
		int64_t c;
		if (lx->bad)
			return p;
		if (op == '*') {
			p = pmul(p, q, lx);
		} else if (isconst(q, &c) && c > 0) {
			p = pdivc(p, c, op == '%', lx);
		} else if (op == '/' && pdivterm(p, q, lx)) {
			p = pdivterm(p, q, lx);
		} else if (isconst(q, &c)) {
			lx->bad = true;       /* by 0 or a negative number: left as written */
		} else {
			p = patom(arena_printf(perm, "(%s %c %s)", pstr(p, true), op, pstr(q, true)));
		}
	}
}

static Poly *
parse_expr(Lex *lx)
{
	Poly *p = parse_term(lx);
	for (;;) {
		skip(lx);
		char op = *lx->p;
		if (op != '+' && op != '-')
			return p;
		lx->p++;
		p = padd(p, parse_term(lx), op == '+' ? 1 : -1, lx);
	}
}

Sym
sym_num(int64_t v)
{
	return (Sym){ .v = v };
}

Sym
sym_parse(const char *text)
{
	Lex lx = { .p = text };
	Poly *p = parse_expr(&lx);
	skip(&lx);
	if (lx.bad || *lx.p)
		return (Sym){ .v = -1, .t = text };
	int64_t v;
	if (isconst(p, &v))
		return sym_num(v);
	return (Sym){ .v = -1, .t = pstr(p, true) };
}

const char *
sym_text(Sym s)
{
	if (s.t)
		return s.t;
	return s.v < 0 ? arena_printf(perm, "(%lld)", (long long)s.v) :
	    arena_printf(perm, "%lld", (long long)s.v);
}

bool
sym_same(Sym a, Sym b)
{
	return a.t || b.t ? a.t && b.t && !strcmp(a.t, b.t) : a.v == b.v;
}

Sym
sym_bin(int op, Sym a, Sym b, bool *ok)
{
	*ok = true;
	if (!a.t && !b.t) {
		int64_t x = a.v, y = b.v, r;
		switch (op) {
		case '+': if (__builtin_add_overflow(x, y, &r)) break; return sym_num(r);
		case '-': if (__builtin_sub_overflow(x, y, &r)) break; return sym_num(r);
		case '*': if (__builtin_mul_overflow(x, y, &r)) break; return sym_num(r);
		/* integer Div of ONNX truncates */
		case '/': if (!y || (x == INT64_MIN && y == -1)) break; return sym_num(x / y);
		case '%': if (!y || (x == INT64_MIN && y == -1)) break;
			r = x % y;
			return sym_num(r && (r < 0) != (y < 0) ? r + y : r);
		case 'm': return sym_num(x < y ? x : y);
		case 'M': return sym_num(x > y ? x : y);
		}
		*ok = false;
		return a;
	}
	const char *x = sym_text(a), *y = sym_text(b);
	const char *t = op == 'm' || op == 'M' ? arena_printf(perm, "%s(%s, %s)", op == 'm' ? "min" :
	    "max", x, y) : arena_printf(perm, "%s %c %s", x, op, y);
	Sym s = sym_parse(t);
	if (s.t == t)      /* not read: left as written */
		s.t = arena_printf(perm, "(%s)", t);
	return s;
}
