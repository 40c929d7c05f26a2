/* tensorize_forms.c: the emitters' own rules on a match (lower/tensorize.c
 * binds the loops and strides; these say whether the emitter can take
 * them): VTA's gemm needs its packed layouts, the tensor cores' mma works
 * on a fragment as c and nowhere else, and fma_outer and its kin need unit
 * strides along j in c and b, or c stored transposed where the block's
 * rows fit one vector.
 */
#include <string.h>

#include "lower/tensorize.h"

/* Form checks of VTA's gemm: the operands are whole elements of the
 * on-chip buffers, so within the tile c's j, a's k and b's k are
 * contiguous and b's rows (j) 16 apart.  args: c, cs_j, a, as_k, b,
 * bs_j, bs_k. */
static bool
gemm_ok(Tz *t)
{
	static const struct { int arg; int64_t want; const char *what; } need[] = {
		{ 1, 1, "written" }, { 3, 1, "read" }, { 6, 1, "read" }, { 5, 16, "read" },
	};
	for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
		IrExpr *s = t->args[need[i].arg];
		int64_t c;
		if (ir_is_const(s, &c) && c == need[i].want)
			continue;
		IrExpr *ld = t->args[need[i].arg < 2 ? 0 : need[i].arg < 4 ? 2 : 4];
		tz_fail(t, arena_printf(ir_arena, "'%s' is %s with stride %s where VTA's GEMM needs "
		    "%lld (the packed layouts: 16 channels innermost, weights as 16 x 16 tiles)",
		    ld->load.buf->name, need[i].what, ir_expr_str(s), (long long)need[i].want));
		return false;
	}
	return true;
}

/* Whether the call's tensor at argument a (a load) is a fragment. */
static bool
frag_arg(Tz *t, int a)
{
	return a < t->nargs && t->args[a]->kind == IR_LOAD &&
	    t->args[a]->load.buf->scope == SCOPE_FRAGMENT;
}

/* Whether the call touches a fragment (the tensor cores' registers). */
bool
tz_on_fragment(Tz *t)
{
	for (int a = 0; a < t->nargs; a++)
		if (frag_arg(t, a))
			return true;
	return false;
}

/* The tensor cores' forms: a fragment holds the mma's accumulators (c),
 * which mma_fill zeroes and mma_store writes out.  args: mma c, cs, cs,
 * a, .., b, ..; mma_fill c, cs, cs; mma_store d, ds, ds, c, cs, cs. */
static bool
mma_ok(Tz *t)
{
	const char *e = t->k->intr_emit;
	bool wg = !strncmp(e, "wg", 2);
	if (wg)   /* wgmma, wgmma_fill, wgmma_store: the same forms, c always a fragment */
		e += 2;
	int want = !strcmp(e, "mma") ? 0 : !strcmp(e, "mma_fill") ? 0 : 3;
	for (int a = 0; a < t->nargs; a += 3) {
		Buffer *b = t->args[a]->load.buf;
		if (a == want && !strcmp(e, "mma") && !wg)
			continue;
		if (a == want && !frag_arg(t, a)) {
			tz_fail(t, arena_printf(ir_arena, "'%s' is in %s memory, but '%s' works on a fragment "
			    "(the accumulators %s keeps in a %s's registers): cache_write(fragment) "
			    "the stage the %s updates", b->name, ir_scope_name(b->scope), t->k->name,
			    wg ? "a wgmma" : "an mma", wg ? "warpgroup" : "warp", wg ? "wgmma" : "mma"));
			return false;
		}
		if (a != want && frag_arg(t, a)) {
			tz_fail(t, arena_printf(ir_arena, "'%s' is a fragment, which only an mma's "
			    "accumulator tile can be (its 'c'), read by mma_store", b->name));
			return false;
		}
	}
	return true;
}

/* Form checks of the emitter: fma_outer needs unit strides in j. */
bool
tz_emitter_ok(Tz *t)
{
	if (!strcmp(t->k->intr_emit, "gemm"))
		return gemm_ok(t);
	if (!strncmp(t->k->intr_emit, "mma", 3) || !strncmp(t->k->intr_emit, "wgmma", 5))
		return mma_ok(t);
	if (!ir_fma_outer_lanes(t->k->intr_emit))
		return true;
	/* args: c, cs_i, cs_j, a, as_i, (as_r, as_s,) as_k, b, (bs_r, bs_s,)
	 * bs_k, bs_j (the strides in parentheses for an intrinsic with taps,
	 * lower/ir.h); c may instead be stored transposed (unit stride in i)
	 * where its rows fit one vector (14 x 32 in zmm:
	 * target/llvm/intrin_cpu.c transposes the block in registers), as a
	 * 1x1 convolution with the pixels broadcast writes NCHW */
	int L = t->ni - 3;   /* taps */
	const int unit[] = { 2, 8 + 2 * L }, load[] = { 0, 6 + L };
	static const char *const what[] = { "written", "read" };
	bool isc = false;
	int64_t rows = t->ni > 0 ? tz_ast_const(t->iext[0], &isc) : 0;
	if (!isc)
		rows = 0;
	for (int i = 0; i < 2; i++) {
		IrExpr *s = t->args[unit[i]];
		int64_t c;
		if (i == 0 && ir_is_const(t->args[1], &c) && c == 1 && rows > 0 &&
		    rows <= ir_fma_outer_lanes(t->k->intr_emit))
			continue;
		if (!ir_is_const(s, &c) || c != 1) {
			IrExpr *ld = t->args[load[i]];
			int j = t->map[tz_iaxis(t, t->rule->axes[1])];
			int r = t->map[tz_iaxis(t, t->rule->axes[0])];
			const char *alt = i ? "" : arena_printf(ir_arena, ", or in loop '%s' for an "
			    "intrinsic of at most %d rows, which stores its block transposed",
			    t->var[r]->name, ir_fma_outer_lanes(t->k->intr_emit));
			tz_fail(t, arena_printf(ir_arena, "'%s' is %s with stride %s in loop '%s'; the "
			    "intrinsic needs stride 1 there%s (store it in a layout where that loop is "
			    "innermost)", ld->load.buf->name, what[i], ir_expr_str(s), t->var[j]->name, alt));
			return false;
		}
	}
	return true;
}
