/* intrinsic.c: checks intrinsic declarations (tx.5, INTRINSICS).
 *
 * An intrinsic is a kernel-like declaration of the computation one
 * hardware operation performs, plus the target it belongs to and how a
 * backend emits it.  Its body is checked as a kernel body (names, shapes,
 * reductions, types); then against the emitter's form:
 *
 *   fma_outer (cpu)  c[i, j] = sum(k < K) a[i, k] * b[k, j], all f32, with
 *                    c of constant shape [MR, NR], NR a multiple of 8 and
 *                    the MR*NR/8 accumulators, NR/8 rows of b and one
 *                    broadcast of a fitting the 16 AVX2 registers.
 *   fma_outer_zmm    the same on AVX-512: NR a multiple of 16, the block
 *     (cpu)          fitting the 32 zmm registers (e.g. 14 x 32, 8 x 48).
 *   i8_madd, i8_vnni c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a and
 *     i8_vnni_zmm    b i8, c i32 [MR, NR]: AVX2 (vpmaddwd), AVX-VNNI and
 *     (cpu)          AVX512-VNNI (vpdpbusd); NR a multiple of 8 (16 for
 *                    zmm), the block fitting the registers with the
 *                    vectors of b and (VNNI) their compensation sums.
 *   i8_madd_a16      i8_madd with a i16 (a stage that widened it already:
 *     (cpu)          a's pairs of k one 32-bit broadcast each).
 *   bf16_widen,      c[i, j] = sum(k < K) f32(a[i, k]) * f32(b[k, j]), a and
 *     bf16_dp_zmm    b bf16, c f32: AVX2 (widened, FMA) and AVX512_BF16
 *     (cpu)          (vdpbf16ps).
 *   i8_amx, bf16_amx the int8 and bf16 forms on AMX tiles (tdpbssd,
 *     (cpu)          tdpbf16ps): a block of C in memory, not in registers,
 *                    MR and NR multiples of 32 (2 x 2 tiles of 16 x 16
 *                    sums at a time), MR up to 1024, NR up to 256.
 *
 *   gemm (vta)       c[j] = sum(k < 16) i32(a[k]) * i32(b[j, k]): one VTA
 *                    GEMM micro-op, a row of 16 int8 activations times a
 *                    16 x 16 int8 weight tile into 16 int32 accumulators.
 *
 *   mma (cuda)       c[i, j] = sum(k < 16) f32(a[i, k]) * f32(b[k, j]) with
 *                    a and b f16[16, 16] or bf16[16, 16]: a warp's block on the
 *                    tensor cores.
 *   mma_fill (cuda)  c[i, j] = 0.0 with c f32[16, 16]: a warp's accumulator tile
 *                    in registers (a fragment, txc-schedule.7) set to zero.
 *   mma_store (cuda) d[i, j] = c[i, j] with c and d f32[16, 16]: a warp's
 *                    accumulator tile (fragment c) stored to memory d.
 *   alu (vta)        c[j] = OP(a[j], b[j]) or OP(a[j], imm): one operation of
 *                    VTA's ALU on a row of 16 int32 (min, max, +, *, >>).
 *
 * The table of emitter kinds is intrinsic_kinds below.
 */
#include <string.h>

#include "sema/sema.h"

typedef struct {
	const char *target;
	const char *kind;
	const char *form;      /* for messages */
} IntrinsicKind;

static const IntrinsicKind intrinsic_kinds[] = {
	{ "cpu", "fma_outer", "c[i, j] = sum(k < K) a[i, k] * b[k, j] in f32 (or over taps: sum(r < R, s < S, k < K) a[i, r, s, k] * b[r, s, k, j])" },
	{ "cpu", "fma_outer_zmm", "c[i, j] = sum(k < K) a[i, k] * b[k, j] in f32, 16-wide rows" },
	{ "cpu", "i8_madd", "c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a and b i8, c i32 (AVX2)" },
	{ "cpu", "i8_madd_a16", "c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a i16, b i8, "
	    "c i32 (AVX2)" },
	{ "cpu", "i8_vnni", "c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a and b i8, c i32 "
	    "(AVX-VNNI)" },
	{ "cpu", "i8_vnni_zmm", "c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a and b i8, "
	    "c i32 (AVX512-VNNI, 16-wide rows)" },
	{ "cpu", "bf16_widen", "c[i, j] = sum(k < K) f32(a[i, k]) * f32(b[k, j]), a and b bf16, "
	    "c f32 (AVX2)" },
	{ "cpu", "bf16_dp_zmm", "c[i, j] = sum(k < K) f32(a[i, k]) * f32(b[k, j]), a and b bf16, "
	    "c f32 (AVX512_BF16, 16-wide rows)" },
	{ "cpu", "i8_amx", "c[i, j] = sum(k < K) i32(a[i, k]) * i32(b[k, j]), a and b i8, c i32 "
	    "(AMX tiles)" },
	{ "cpu", "bf16_amx", "c[i, j] = sum(k < K) f32(a[i, k]) * f32(b[k, j]), a and b bf16, "
	    "c f32 (AMX tiles)" },
	{ "vta", "gemm", "c[j] = sum(k < 16) i32(a[k]) * i32(b[j, k]), a and b i8, c i32" },
	{ "cuda", "mma", "c[i, j] = sum(k < 16) f32(a[i, k]) * f32(b[k, j]), a and b f16 or bf16, c f32" },
	{ "cuda", "mma_fill", "c[i, j] = 0.0, c f32[16, 16] (a fragment's tile set to zero)" },
	{ "cuda", "mma_store", "d[i, j] = c[i, j], c and d f32[16, 16] (a fragment's tile stored)" },
	{ "cuda", "wgmma", "c[i, j] = sum(k < 16) f32(a[i, k]) * f32(b[k, j]), a f16[64, 16] or "
	    "bf16, b [16, N], c f32[64, N], N a multiple of 8 up to 256 (sm_90a)" },
	{ "cuda", "wgmma_fill", "c[i, j] = 0.0, c f32[64, N] (a warpgroup fragment's block set to "
	    "zero)" },
	{ "cuda", "wgmma_store", "d[i, j] = c[i, j], c and d f32[64, N] (a warpgroup fragment's "
	    "block stored)" },
	{ "vta", "alu", "c[j] = OP(a[j], b[j]) or OP(a[j], imm), OP min, max, +, * or >>, on i32[16]" },
};
enum { NKINDS = sizeof intrinsic_kinds / sizeof *intrinsic_kinds };

static const char *const targets[] = { "cpu", "cuda", "vta" };

/* The access e, looking through a widening cast; NULL if e is not one. */
static Expr *
access_of(Expr *e)
{
	if (e && e->kind == EXPR_CAST && e->call.nargs == 1)
		e = e->call.args[0];
	return e && e->kind == EXPR_ACCESS ? e : NULL;
}

/* Whether index e is the axis named `name` (pure or reduction). */
static bool
is_axis(Expr *e, const char *name)
{
	return e && e->kind == EXPR_NAME && e->id.name == name;
}

static int64_t
const_dim(Tensor *t, int d)
{
	Expr *e = t->shape ? t->shape[d] : NULL;
	return e && e->kind == EXPR_INT ? e->ival : -1;
}

/* The register-blocked micro-kernels of the cpu table: fma_outer and
 * fma_outer_zmm (f32), i8_* (i8 -> i32) and bf16_* (bf16 -> f32), the
 * forms in the header comment. */
typedef struct {
	const char *kind;
	ScalarType in, out;
	int lanes, regs;
	bool comp;             /* VNNI: one more register per vector of b, and the ones */
	bool amx;              /* AMX: the block is in memory (tiles), not registers */
	ScalarType ain;        /* a's type where it is not in's (TY_ERROR: in) */
} OuterKind;

static const OuterKind outer_kinds[] = {
	{ "fma_outer", TY_F32, TY_F32, 8, 16, false, false, TY_ERROR },
	{ "fma_outer_zmm", TY_F32, TY_F32, 16, 32, false, false, TY_ERROR },
	{ "i8_madd", TY_I8, TY_I32, 8, 16, false, false, TY_ERROR },
	{ "i8_madd_a16", TY_I8, TY_I32, 8, 16, false, false, TY_I16 },
	{ "i8_vnni", TY_I8, TY_I32, 8, 16, true, false, TY_ERROR },
	{ "i8_vnni_zmm", TY_I8, TY_I32, 16, 32, true, false, TY_ERROR },
	{ "bf16_widen", TY_BF16, TY_F32, 8, 16, false, false, TY_ERROR },
	{ "bf16_dp_zmm", TY_BF16, TY_F32, 16, 32, false, false, TY_ERROR },
	{ "i8_amx", TY_I8, TY_I32, 16, 0, false, true, TY_ERROR },
	{ "bf16_amx", TY_BF16, TY_F32, 16, 0, false, true, TY_ERROR },
};

static const OuterKind *
outer_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof outer_kinds / sizeof *outer_kinds; i++)
		if (!strcmp(outer_kinds[i].kind, kind))
			return &outer_kinds[i];
	return NULL;
}

static void
check_fma_outer(Kernel *k, Rule *r, const OuterKind *ok)
{
	Tensor *c = r->tensor;
	Expr *v = r->value;
	const char *kind = ok->in == TY_F32 ? "fma_outer" : ok->kind;
	const char *ot = type_name(ok->out), *it = type_name(ok->in);
	bool wide = ok->in != ok->out;
	const char *cast = wide ? arena_printf(perm, "%s(", ot) : "";
	if (!c || c->ndims != 2 || c->elem != ok->out || r->naxes != 2) {
		diag_error(r->loc, "intrinsic '%s' (%s) must define a 2-d %s output "
		    "c[i, j]", k->name, kind, ot);
		return;
	}
	/* the register-blocked kinds: up to three reduction axes, the outer
	 * ones taps (lower/ir.h): c[i, j] = sum(r < R, s < S, k < K) a[i, r,
	 * s, k] * b[r, s, k, j]; AMX's kernel walks its block through tiles
	 * in memory and has no tap loops */
	enum { MAX_TAPS = 2 };   /* lower/ir.h's FMA_MAX_TAPS */
	int maxred = ok->amx ? 1 : 1 + MAX_TAPS;
	if (v->kind != EXPR_REDUCE || v->reduce.op != RED_SUM || v->reduce.naxes < 1 ||
	    v->reduce.naxes > maxred) {
		const char *ac = wide ? ")" : "";
		diag_error(v->loc, "intrinsic '%s' (%s) must be a sum over %s: c[i, j] = "
		    "sum(k < K) %sa[i, k]%s * %sb[k, j]%s%s", k->name, kind,
		    maxred > 1 ? "one to three reduction axes" : "one reduction axis",
		    cast, ac, cast, ac, maxred > 1 ? arena_printf(perm, ", or with taps "
		    "c[i, j] = sum(r < R, s < S, k < K) %sa[i, r, s, k]%s * %sb[r, s, k, j]%s", cast,
		    ac, cast, ac) : "");
		if (ok->amx && v->kind == EXPR_REDUCE && v->reduce.naxes > 1)
			diag_note(v->loc, "AMX kernels (%s) take no taps: their block lives in tiles, "
			    "not registers; sum the taps outside the call, or take the i8_vnni_zmm or "
			    "bf16_dp_zmm kernels", ok->kind);
		return;
	}
	int nred = v->reduce.naxes;
	Expr *body = v->reduce.body;
	Expr *a = body->kind == EXPR_BINARY && body->bin.op == OP_MUL ? access_of(body->bin.a) : NULL;
	Expr *b = a ? access_of(body->bin.b) : NULL;
	const char *i = r->axes[0], *j = r->axes[1], *kk = v->reduce.axes[nred - 1].name;
	const char *taps = "";
	for (int t = 0; t < nred - 1; t++)
		taps = arena_printf(perm, "%s%s, ", taps, v->reduce.axes[t].name);
	if (!a || !b || a->call.nargs != 1 + nred || b->call.nargs != 1 + nred ||
	    a->call.tensor->role != ROLE_IN || b->call.tensor->role != ROLE_IN) {
		diag_error(body->loc, "the body of intrinsic '%s' (%s) must be the product "
		    "of two input accesses a[%s, %s%s] * b[%s%s, %s]", k->name, kind, i, taps, kk, taps,
		    kk, j);
		return;
	}
	bool axes_ok = is_axis(a->call.args[0], i) && is_axis(b->call.args[nred], j);
	for (int t = 0; t < nred; t++)
		axes_ok = axes_ok && is_axis(a->call.args[1 + t], v->reduce.axes[t].name) &&
		    is_axis(b->call.args[t], v->reduce.axes[t].name);
	if (!axes_ok) {
		diag_error(body->loc, "intrinsic '%s' (%s) must read a[%s, %s%s] and b[%s%s, %s] "
		    "(each index a plain axis)", k->name, kind, i, taps, kk, taps, kk, j);
		return;
	}
	ScalarType ain = ok->ain != TY_ERROR ? ok->ain : ok->in;
	if (ain != ok->in && (a->call.tensor->elem != ain || b->call.tensor->elem != ok->in)) {
		diag_error(body->loc, "intrinsic '%s' (%s) works on %s a and %s b", k->name, kind,
		    type_name(ain), it);
		return;
	}
	if (ain == ok->in && (a->call.tensor->elem != ok->in || b->call.tensor->elem != ok->in)) {
		diag_error(body->loc, "intrinsic '%s' (%s) works on %s inputs", k->name, kind, it);
		return;
	}
	int64_t mr = const_dim(c, 0), nr = const_dim(c, 1);
	if (mr <= 0 || nr <= 0) {
		diag_error(c->loc, "the output of intrinsic '%s' needs a constant shape (the register "
		    "block), e.g. %s[6, 16]", k->name, ot);
		return;
	}
	if (ok->amx) {
		/* tiles of 16 rows, 2 x 2 of them at a time (tmm0-3 the sums,
		 * tmm4-7 a and b): the kernel walks the block in memory */
		if (mr % 32 || nr % 32 || mr > 1024 || nr > 256)
			diag_error(c->loc, "the block %lld x %lld of intrinsic '%s' (%s) must be whole "
			    "32 x 32 blocks of AMX tiles, at most 1024 x 256", (long long)mr,
			    (long long)nr, k->name, ok->kind);
		return;
	}
	/* b's vectors stay in registers to be reused by every row; with one
	 * row each is read once, straight into its FMA */
	bool zmm = ok->lanes == 16;
	int lanes = ok->lanes, regs = ok->regs;
	int64_t nv = (nr + lanes - 1) / lanes, bregs = mr > 1 || ok->comp ? nv : 0;
	if (ok->comp)
		bregs += nv + 1;
	if (nr % lanes != 0)
		diag_error(c->loc, "the %lld columns of intrinsic '%s' are not whole %d-wide %s "
		    "vectors", (long long)nr, k->name, lanes, zmm ? "zmm" : "ymm");
	else if (mr * nv + bregs + 1 > regs)
		diag_error(c->loc, "register block %lld x %lld of intrinsic '%s' does not fit the %d "
		    "%s registers in %d-wide rows (%lld accumulators + %lld for b%s + 1 for a)",
		    (long long)mr, (long long)nr, k->name, regs, zmm ? "AVX-512" : "AVX2", lanes,
		    (long long)(mr * nv), (long long)bregs, ok->comp ? " and its sums" : "");
	else if (mr > 32 || nv > 8)
		diag_error(c->loc, "register block %lld x %lld of intrinsic '%s' is larger than "
		    "the emitter's 32 rows and 8 vectors", (long long)mr, (long long)nr, k->name);
}

/* v as sum(k) a * b over one reduction axis: the two accesses (through a
 * widening cast; NULL when a factor is not one), or false after an error
 * in the words of emitter kind and its form. */
static bool
sum_of_product(Kernel *k, Expr *v, const char *kind, const char *form, Expr **a, Expr **b)
{
	if (v->kind != EXPR_REDUCE || v->reduce.op != RED_SUM || v->reduce.naxes != 1) {
		diag_error(v->loc, "intrinsic '%s' (%s) must be a sum over one reduction axis: %s",
		    k->name, kind, form);
		return false;
	}
	Expr *body = v->reduce.body;
	*a = body->kind == EXPR_BINARY && body->bin.op == OP_MUL ? access_of(body->bin.a) : NULL;
	*b = *a ? access_of(body->bin.b) : NULL;
	return true;
}

/* gemm (vta): the form in the header comment; the 16s are the default
 * configuration's BLOCK_OUT and BLOCK_IN (rt/vta.h). */
static void
check_vta_gemm(Kernel *k, Rule *r)
{
	Tensor *c = r->tensor;
	Expr *v = r->value;
	const char *form = "c[j] = sum(k < 16) i32(a[k]) * i32(b[j, k])";
	if (!c || c->ndims != 1 || c->elem != TY_I32 || const_dim(c, 0) != 16 || r->naxes != 1) {
		diag_error(r->loc, "intrinsic '%s' (gemm) must define a 16-element i32 output c[j] "
		    "(one accumulator row): %s", k->name, form);
		return;
	}
	Expr *a, *b;
	if (!sum_of_product(k, v, "gemm", form, &a, &b))
		return;
	Expr *body = v->reduce.body;
	const char *j = r->axes[0], *kk = v->reduce.axes[0].name;
	if (!a || !b || a->call.nargs != 1 || b->call.nargs != 2 ||
	    a->call.tensor->role != ROLE_IN || b->call.tensor->role != ROLE_IN ||
	    !is_axis(a->call.args[0], kk) || !is_axis(b->call.args[0], j) ||
	    !is_axis(b->call.args[1], kk)) {
		diag_error(body->loc, "the body of intrinsic '%s' (gemm) must be the product "
		    "a[%s] * b[%s, %s] of two inputs: %s", k->name, kk, j, kk, form);
		return;
	}
	if (a->call.tensor->elem != TY_I8 || b->call.tensor->elem != TY_I8 ||
	    const_dim(a->call.tensor, 0) != 16 || const_dim(b->call.tensor, 0) != 16 ||
	    const_dim(b->call.tensor, 1) != 16)
		diag_error(body->loc, "intrinsic '%s' (gemm) multiplies i8[16] by i8[16, 16] "
		    "(VTA's BLOCK_IN and BLOCK_OUT)", k->name);
}

/* mma (cuda): the form in the header comment, a warp's 16 x 16 x 16 block
 * on the tensor cores (mma.sync.m16n8k16, sm_80 and later). */
static bool
wg_width(int64_t n)   /* wgmma's N: a multiple of 8 up to 256 */
{
	return n >= 8 && n <= 256 && n % 8 == 0;
}

/* wg: wgmma (sm_90a), the warpgroup's 64 x N x 16 block, N = c's columns */
static void
check_mma(Kernel *k, Rule *r, bool wg)
{
	Tensor *c = r->tensor;
	Expr *v = r->value;
	const char *form = "c[i, j] = sum(k < 16) f32(a[i, k]) * f32(b[k, j])";
	int64_t m = wg ? 64 : 16, n = c && c->ndims == 2 ? const_dim(c, 1) : -1;
	if (!c || c->ndims != 2 || c->elem != TY_F32 || const_dim(c, 0) != m ||
	    (wg ? !wg_width(n) : n != 16) || r->naxes != 2) {
		diag_error(r->loc, "intrinsic '%s' (%s) must define a %s f32 output c[i, j]: %s",
		    k->name, wg ? "wgmma" : "mma", wg ? "64 x N (N a multiple of 8 up to 256)" :
		    "16 x 16", form);
		return;
	}
	Expr *a, *b;
	if (!sum_of_product(k, v, wg ? "wgmma" : "mma", form, &a, &b))
		return;
	Expr *body = v->reduce.body;
	const char *i = r->axes[0], *j = r->axes[1], *kk = v->reduce.axes[0].name;
	if (!a || !b || a->call.nargs != 2 || b->call.nargs != 2 ||
	    a->call.tensor->role != ROLE_IN || b->call.tensor->role != ROLE_IN ||
	    !is_axis(a->call.args[0], i) || !is_axis(a->call.args[1], kk) ||
	    !is_axis(b->call.args[0], kk) || !is_axis(b->call.args[1], j)) {
		diag_error(body->loc, "the body of intrinsic '%s' (mma) must be the product "
		    "a[%s, %s] * b[%s, %s] of two inputs: %s", k->name, i, kk, kk, j, form);
		return;
	}
	ScalarType ta = a->call.tensor->elem;
	if (wg && ((ta != TY_F16 && ta != TY_BF16) || b->call.tensor->elem != ta ||
	    const_dim(a->call.tensor, 0) != 64 || const_dim(a->call.tensor, 1) != 16 ||
	    const_dim(b->call.tensor, 0) != 16 || const_dim(b->call.tensor, 1) != n))
		diag_error(body->loc, "intrinsic '%s' (wgmma) multiplies an f16[64, 16] tile by an "
		    "f16[16, %lld] one, or two such bf16 tiles (wgmma.mma_async m64n%lldk16)", k->name,
		    (long long)n, (long long)n);
	else if (!wg && ((ta != TY_F16 && ta != TY_BF16) || b->call.tensor->elem != ta ||
	    const_dim(a->call.tensor, 0) != 16 || const_dim(a->call.tensor, 1) != 16 ||
	    const_dim(b->call.tensor, 0) != 16 || const_dim(b->call.tensor, 1) != 16))
		diag_error(body->loc, "intrinsic '%s' (mma) multiplies two f16[16, 16] or two "
		    "bf16[16, 16] tiles (the tensor cores' m16n8k16 shape, twice)", k->name);
}

/* mma_fill and mma_store (cuda): the copies around a fragment, the mma's
 * accumulator tile kept in a warp's registers: c[i, j] = 0.0 and
 * d[i, j] = c[i, j], all f32[16, 16]. */
static void
check_mma_copy(Kernel *k, Rule *r, bool store, bool wg)
{
	const char *form = wg ? (store ? "d[i, j] = c[i, j] with c an input and d the output, both "
	    "f32[64, N]" : "c[i, j] = 0.0 with c f32[64, N]") : store ? "d[i, j] = c[i, j] with c "
	    "an input and d the output, both f32[16, 16]" : "c[i, j] = 0.0 with c f32[16, 16]";
	Tensor *c = r->tensor;
	Expr *v = r->value;
	int64_t m = wg ? 64 : 16, n = c && c->ndims == 2 ? const_dim(c, 1) : -1;
	bool ok = c && c->ndims == 2 && c->elem == TY_F32 && const_dim(c, 0) == m &&
	    (wg ? wg_width(n) : n == 16) && r->naxes == 2;
	if (ok && store)
		ok = v->kind == EXPR_ACCESS && v->call.nargs == 2 && v->call.tensor->role == ROLE_IN &&
		    v->call.tensor->elem == TY_F32 && const_dim(v->call.tensor, 0) == m &&
		    const_dim(v->call.tensor, 1) == n && is_axis(v->call.args[0], r->axes[0]) &&
		    is_axis(v->call.args[1], r->axes[1]);
	else if (ok)
		ok = (v->kind == EXPR_FLOAT && v->fval == 0.0) || (v->kind == EXPR_INT && v->ival == 0);
	if (!ok)
		diag_error(r->loc, "intrinsic '%s' (%s%s) must be %s", k->name, wg ? "wg" : "",
		    store ? "mma_store" : "mma_fill", form);
}

/* alu (vta): one lane-wise operation of VTA's ALU on a row of 16 int32
 * accumulators, c[j] = OP(a[j], b[j]) (the tensor form, b another row)
 * or c[j] = OP(a[j], imm) (the immediate form, imm a scalar parameter),
 * OP one of min, max, +, * and >> (a left shift is >> by a negative
 * amount).  The set declared is what the VTA target may use: its
 * epilogues are checked against it (intrinsic_alu_has). */
static const char alu_form[] = "c[j] = OP(a[j], b[j]) or OP(a[j], imm), OP one of min, max, "
    "+, * and >>, on i32[16]";

/* The operation of an alu intrinsic's rule: an IntrinsicAluOp, or -1. */
static int
alu_op(Expr *v, Expr **x, Expr **y)
{
	if (v->kind == EXPR_BINARY && (v->bin.op == OP_ADD || v->bin.op == OP_MUL ||
	    v->bin.op == OP_SHR)) {
		*x = v->bin.a;
		*y = v->bin.b;
		return v->bin.op == OP_ADD ? ALU_ADD : v->bin.op == OP_MUL ? ALU_MUL : ALU_SHR;
	}
	if (v->kind == EXPR_CALL && v->call.nargs == 2 &&
	    (v->call.builtin == BI_MIN || v->call.builtin == BI_MAX)) {
		*x = v->call.args[0];
		*y = v->call.args[1];
		return v->call.builtin == BI_MIN ? ALU_MIN : ALU_MAX;
	}
	return -1;
}

static bool
row(Expr *e, const char *j)
{
	return e && e->kind == EXPR_ACCESS && e->call.nargs == 1 && is_axis(e->call.args[0], j) &&
	    e->call.tensor->role == ROLE_IN && e->call.tensor->elem == TY_I32 &&
	    e->call.tensor->ndims == 1 && const_dim(e->call.tensor, 0) == 16;
}

/* The form of alu intrinsic k: its operation, and whether it takes an
 * immediate; false when k is not one (after check_alu's errors). */
static bool
alu_form_of(Kernel *k, int *op, bool *imm)
{
	Rule *r = NULL;
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule)
			r = k->items[i].rule;
	if (!r || !r->tensor || r->naxes != 1 || r->tensor->elem != TY_I32 ||
	    r->tensor->ndims != 1 || const_dim(r->tensor, 0) != 16)
		return false;
	Expr *x, *y;
	*op = alu_op(r->value, &x, &y);
	if (*op < 0 || !row(x, r->axes[0]))
		return false;
	*imm = y->kind == EXPR_NAME && y->id.ref == REF_SCALAR && y->id.param->type == TY_I32;
	return *imm || row(y, r->axes[0]);
}

static void
check_alu(Kernel *k, Rule *r)
{
	int op;
	bool imm;
	if (!alu_form_of(k, &op, &imm))
		diag_error(r->loc, "intrinsic '%s' (alu) must be %s", k->name, alu_form);
}

bool
intrinsic_alu_has(Program *p, int op, bool imm)
{
	for (int i = 0; p && i < p->nintrinsics; i++) {
		Kernel *k = p->intrinsics[i];
		int o;
		bool m;
		if (k && k->intr_emit && !strcmp(k->intr_emit, "alu") &&
		    !strcmp(k->intr_target, "vta") && alu_form_of(k, &o, &m) && o == op && m == imm)
			return true;
	}
	for (int i = 0; p && i < p->nimports; i++)
		if (p->imports[i] && intrinsic_alu_has(p->imports[i]->prog, op, imm))
			return true;
	return false;
}

static void
check_one(Kernel *k)
{
	int before = diag_errors();
	resolve_kernel(k);
	shapes_kernel(k);
	reduce_kernel(k);
	stages_kernel(k);
	types_kernel(k);
	if (diag_errors() != before)
		return;
	bool target_ok = false;
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
		target_ok |= !strcmp(k->intr_target, targets[i]);
	if (!target_ok) {
		diag_error(k->intr_target_loc, "unknown target '%s' (cpu, cuda or vta)", k->intr_target);
		return;
	}
	const IntrinsicKind *ik = NULL;
	for (int i = 0; i < NKINDS; i++)
		if (!strcmp(intrinsic_kinds[i].target, k->intr_target) &&
		    !strcmp(intrinsic_kinds[i].kind, k->intr_emit ? k->intr_emit : ""))
			ik = &intrinsic_kinds[i];
	if (!ik) {
		diag_error(k->intr_emit_loc, "target '%s' has no emitter \"%s\"", k->intr_target,
		    k->intr_emit ? k->intr_emit : "");
		for (int i = 0; i < NKINDS; i++)
			if (!strcmp(intrinsic_kinds[i].target, k->intr_target))
				diag_note(k->intr_emit_loc, "\"%s\" emits %s", intrinsic_kinds[i].kind,
				    intrinsic_kinds[i].form);
		return;
	}
	Rule *r = NULL;
	int nrules = 0;
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule) {
			r = k->items[i].rule;
			nrules++;
		}
	if (nrules != 1 || !r->tensor || r->tensor->role != ROLE_OUT) {
		diag_error(k->name_loc, "intrinsic '%s' must have exactly one rule, defining its "
		    "output", k->name);
		return;
	}
	if (outer_kind(ik->kind))
		check_fma_outer(k, r, outer_kind(ik->kind));
	else if (!strcmp(ik->kind, "gemm"))
		check_vta_gemm(k, r);
	else if (!strcmp(ik->kind, "mma") || !strcmp(ik->kind, "wgmma"))
		check_mma(k, r, ik->kind[0] == 'w');
	else if (!strcmp(ik->kind, "mma_fill") || !strcmp(ik->kind, "mma_store") ||
	    !strcmp(ik->kind, "wgmma_fill") || !strcmp(ik->kind, "wgmma_store"))
		check_mma_copy(k, r, strstr(ik->kind, "store") != NULL, ik->kind[0] == 'w');
	else if (!strcmp(ik->kind, "alu"))
		check_alu(k, r);
}

void
intrinsic_program(Program *p)
{
	for (int i = 0; i < p->nintrinsics; i++) {
		Kernel *k = p->intrinsics[i];
		if (!k)
			continue;
		for (int j = 0; j < i; j++)
			if (p->intrinsics[j] && p->intrinsics[j]->name == k->name) {
				diag_error(k->name_loc, "redefinition of intrinsic '%s'", k->name);
				diag_note(p->intrinsics[j]->name_loc, "previous definition here");
			}
		check_one(k);
	}
}

Kernel *
intrinsic_find(Program *p, const char *name)
{
	if (!p || !name)
		return NULL;
	for (int i = 0; i < p->nintrinsics; i++)
		if (p->intrinsics[i] && p->intrinsics[i]->name == name)
			return p->intrinsics[i];
	for (int i = 0; i < p->nimports; i++) {
		Kernel *k = p->imports[i] ? intrinsic_find(p->imports[i]->prog, name) : NULL;
		if (k)
			return k;
	}
	return NULL;
}
