/* check.c: the order of sema's passes, and helpers they share.
 *
 * sema_check copies the schedules shared between kernels (schedshare.c),
 * expands the calls of kernels in kernels (calls.c), then
 * runs, for each kernel (the kernels it calls first), resolve (names) ->
 * shapes -> reduce -> stages (compute order) -> types, then validates the
 * schedules.  Each
 * pass reports every error it finds and leaves TY_ERROR/NULL behind, so
 * the later passes stay quiet about what was already reported.
 */
#include <string.h>

#include "sema/sema.h"

/* ---- the pass order ------------------------------------------------- */

/* Programs and kernels already checked: the driver appends imported
 * kernels to the importing program, and a kernel must be resolved once. */
static void **done;
static int ndone, capdone;

static bool
check_once(void *p)
{
	for (int i = 0; i < ndone; i++)
		if (done[i] == p)
			return false;
	*ARENA_PUSH(perm, done, ndone, capdone) = p;
	return true;
}

/* Kernels whose own passes reported errors: their callers are not
 * checked (a caller holds copies of their rules, which would repeat the
 * errors). */
static Kernel **bad;
static int nbad, capbad;

static bool
is_bad(Kernel *k)
{
	for (int i = 0; i < nbad; i++)
		if (bad[i] == k)
			return true;
	return false;
}

/* A kernel's passes, after those of the kernels it calls. */
static void
check_kernel(Kernel *k)
{
	if (!k || !check_once(k))
		return;
	for (int i = 0; i < k->ncallees; i++) {
		check_kernel(k->callees[i]);
		if (is_bad(k->callees[i]))
			k->calls_failed = true;
	}
	if (k->calls_failed) {
		*ARENA_PUSH(perm, bad, nbad, capbad) = k;
		return;
	}
	int before = diag_errors();
	argmax_kernel(k);
	tuple_kernel(k);
	resolve_kernel(k);
	consts_kernel(k);
	shapes_kernel(k);
	reduce_kernel(k);
	update_kernel(k);
	scans_kernel(k);
	stages_kernel(k);
	types_kernel(k);
	if (diag_errors() != before)
		*ARENA_PUSH(perm, bad, nbad, capbad) = k;
}

static void
check_program(Program *p)
{
	if (!p || !check_once(p))
		return;
	schedshare_program(p);
	calls_program(p);
	resolve_program(p);
	for (int i = 0; i < p->nkernels; i++)
		check_kernel(p->kernels[i]);
	intrinsic_program(p);
	knobs_program(p);
	schedule_check(p);
}

bool
sema_check(Program *p)
{
	int before = diag_errors();
	if (!perm)
		perm = arena_new();
	check_program(p);
	return diag_errors() == before;
}

Kernel *
sema_find_kernel(Program *p, const char *name)
{
	if (!p || !name)
		return NULL;
	for (int i = 0; i < p->nkernels; i++)
		if (p->kernels[i] && p->kernels[i]->name == name)
			return p->kernels[i];
	for (int i = 0; i < p->nimports; i++) {
		Kernel *k = p->imports[i] ? sema_find_kernel(p->imports[i]->prog, name) : NULL;
		if (k)
			return k;
	}
	return NULL;
}

/* ---- types: unification and widening -------------------------------- */

bool
sema_widens(ScalarType from, ScalarType to)
{
	if (from == to)
		return true;
	if (from == TY_BOOL || to == TY_BOOL || from == TY_ERROR || to == TY_ERROR)
		return false;
	if (from == TY_INT_LIT)
		return true;   /* any number */
	if (from == TY_FLOAT_LIT)
		return type_is_float(to);
	if (to == TY_INT_LIT || to == TY_FLOAT_LIT)
		return false;
	int fb = type_bits(from), tb = type_bits(to);
	if (type_is_float(to)) {
		if (type_is_float(from))
			return fb < tb;
		/* integers convert exactly while they fit the mantissa */
		return (tb == 32 && fb <= 16) || (tb == 64 && fb <= 32);
	}
	if (type_is_float(from))
		return false;
	if (type_is_signed(from) == type_is_signed(to))
		return fb < tb;
	return !type_is_signed(from) && fb < tb;   /* uN -> i(2N) and wider */
}

ScalarType
sema_unify(ScalarType a, ScalarType b)
{
	if (a == TY_ERROR || b == TY_ERROR)
		return TY_ERROR;
	if (a == b)
		return a;
	bool alit = a == TY_INT_LIT || a == TY_FLOAT_LIT;
	bool blit = b == TY_INT_LIT || b == TY_FLOAT_LIT;
	if (alit && blit)
		return TY_FLOAT_LIT;   /* one of each */
	if (blit) {
		ScalarType t = a;
		a = b;
		b = t;
	}
	if (alit || blit)
		return sema_widens(a, b) ? b : TY_ERROR;
	if (sema_widens(a, b))
		return b;
	if (sema_widens(b, a))
		return a;
	return TY_ERROR;
}

/* ---- did you mean --------------------------------------------------- */

/* Whether suggestions are still worth their cost: past the error cap
 * nobody reads them, and each one compares against every candidate. */
bool
check_suggest(void)
{
	return diag_errors() <= 100;
}

/* Levenshtein distance with transpositions of neighbours counting one
 * (optimal string alignment): "alpah" is one edit from "alpha". */
static int
edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	int d[65][65];
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *
check_closest(const char *name, const char *const *cands, int n)
{
	if (!name || !check_suggest())
		return NULL;
	int len = (int)strlen(name);
	int limit = len <= 2 ? 0 : len <= 5 ? 1 : 2;
	const char *best = NULL;
	int bestd = limit + 1;
	for (int i = 0; i < n; i++) {
		if (!cands[i] || strcmp(cands[i], name) == 0)
			continue;
		int d = edit_distance(name, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return best;
}

/* ---- expression walk ------------------------------------------------ */

void
check_walk(Expr *e, CheckExprFn fn, void *ctx)
{
	if (!e || !fn(e, ctx))
		return;
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			check_walk(e->call.args[i], fn, ctx);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		check_walk(e->bin.a, fn, ctx);
		check_walk(e->bin.b, fn, ctx);
		break;
	case EXPR_REDUCE:
		for (int i = 0; i < e->reduce.naxes; i++) {
			check_walk(e->reduce.axes[i].lo, fn, ctx);
			check_walk(e->reduce.axes[i].hi, fn, ctx);
		}
		check_walk(e->reduce.where, fn, ctx);
		check_walk(e->reduce.body, fn, ctx);
		break;
	default:
		break;
	}
}
