/* vta_uop.c: nests of GEMM or ALU work as instructions with micro-op
 * kernels (TVM's FoldUopLoop and the runtime's uop kernels).
 *
 * A nest whose leaf is one micro-op (a GEMM update, a reset, an ALU
 * operation on a row of acc) is cut in three, outer to inner: loops run
 * here (one instruction per iteration), up to two loops folded into the
 * instruction's hardware loops (iter_out, iter_in: every index affine in
 * them, with non-negative steps that fit the factor fields), and loops
 * enumerated into the kernel (one micro-op per point).  The cut that runs
 * the fewest instructions with kernels of at most KERNEL_MAX micro-ops is
 * taken; a guard that depends on a loop keeps that loop out of the
 * hardware's.  Indices are flat offsets of scalars in the buffers; a
 * micro-op holds elements (16 scalars of inp or acc, 256 of wgt) counted
 * from the start of the on-chip buffer.
 */
#include <string.h>

#include "target/vta/vta.h"

enum { KERNEL_MAX = 512 };

typedef struct {
	VtaRun *R;
	VtaLeaf *leaf;
	Loc loc;
	const char *what;
	IrStmt **loops;
	int n;
	IrExpr *guard;
	Var *vars[VTA_MAXL];
	int64_t mins[VTA_MAXL], exts[VTA_MAXL];
	IrExpr *idx[3];             /* dst, src, wgt (NULL: unused) */
	Buffer *buf[3];
	int64_t base[3];            /* SRAM element of each buffer */
	int lanes[3];
	bool aff_ok[3];
	VtaAff aff[3];
	bool guard_dep[VTA_MAXL];   /* the guard varies with loop l */
} Nest;

static int
bits_of(int which)
{
	return which == 2 ? 10 : 11;
}

/* Whether loop l can be a hardware loop: its element steps. */
static bool
foldable(Nest *N, int l, int64_t step[3])
{
	if (N->guard_dep[l] || N->exts[l] >= (1 << 14))
		return false;
	for (int w = 0; w < 3; w++) {
		step[w] = 0;
		if (!N->idx[w])
			continue;
		if (!N->aff_ok[w])
			return false;
		int64_t c = N->aff[w].c[l];
		if (c < 0 || c % N->lanes[w])
			return false;
		step[w] = c / N->lanes[w];
		if (step[w] >= (1 << bits_of(w)))
			return false;
	}
	return true;
}

/* The element index w at the point (env holds every loop's value). */
static bool
elem(Nest *N, int w, VtaEnv *env, const int64_t *val, int64_t *out)
{
	int64_t v;
	if (N->aff_ok[w]) {
		v = N->aff[w].c0;
		for (int l = 0; l < N->n; l++)
			v += N->aff[w].c[l] * val[l];
	} else if (!vta_eval(N->idx[w], env, &v)) {
		diag_error(N->loc, "an index of '%s' is not known at compile time", N->buf[w]->name);
		return false;
	}
	if (v % N->lanes[w]) {
		diag_error(N->loc, "'%s' is used at value %lld, not at a whole element of %d (VTA's "
		    "operands are whole rows of 16 and tiles of 16 x 16)", N->buf[w]->name,
		    (long long)v, N->lanes[w]);
		return false;
	}
	*out = N->base[w] + v / N->lanes[w];
	return true;
}

static int64_t
product(Nest *N, int from, int to)
{
	int64_t p = 1;
	for (int l = from; l < to; l++)
		p *= N->exts[l];
	return p;
}

/* The instruction at one point of the host loops [0, h). */
static bool
instruction(Nest *N, int h, int nf, int64_t steps[2][3], VtaEnv *env, int64_t *val)
{
	VtaRun *R = N->R;
	int first = h + nf;
	int64_t cnt = product(N, first, N->n);
	uint32_t *uops = arena_alloc(ir_arena, (size_t)(cnt + 1) * sizeof *uops);
	int nu = 0;
	int64_t lo[3] = { INT64_MAX, INT64_MAX, INT64_MAX }, hi[3] = { -1, -1, -1 };
	/* the folded loops at their first iteration */
	for (int l = h; l < first; l++) {
		val[l] = N->mins[l];
		env = vta_bind(env, N->vars[l], val[l]);
	}
	int64_t t[VTA_MAXL] = { 0 };
	for (int64_t p = 0; p < cnt; p++) {
		VtaEnv *e = env;
		for (int l = first; l < N->n; l++) {
			val[l] = N->mins[l] + t[l];
			e = vta_bind(e, N->vars[l], val[l]);
		}
		int64_t ok = 1;
		if (N->guard && !vta_eval(N->guard, e, &ok)) {
			diag_error(N->loc, "the guard of '%s' is not known at compile time", N->what);
			return false;
		}
		if (ok) {
			int64_t x[3] = { 0, 0, 0 };
			for (int w = 0; w < 3; w++)
				if (N->idx[w] && !elem(N, w, e, val, &x[w]))
					return false;
			uint32_t word;
			if (txrt_vta_uop((uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2], &word) != 0) {
				diag_error(N->loc, "a micro-op of '%s' addresses elements %lld, %lld, %lld, "
				    "beyond its fields", N->what, (long long)x[0], (long long)x[1],
				    (long long)x[2]);
				return false;
			}
			uops[nu++] = word;
			for (int w = 0; w < 3; w++)
				if (N->idx[w]) {
					lo[w] = x[w] < lo[w] ? x[w] : lo[w];
					hi[w] = x[w] > hi[w] ? x[w] : hi[w];
				}
		}
		for (int l = N->n - 1; l >= first && ++t[l] == N->exts[l]; l--)
			t[l] = 0;
	}
	if (!nu)
		return true;
	VtaLeaf *lf = N->leaf;
	VtaInsn *in = vta_push(R, lf->kind == VTA_OP_ALU ? TXRT_VTA_ALU : TXRT_VTA_GEMM, N->what);
	in->kernel = vta_uop_kernel(R, uops, nu);
	in->in.reset = lf->kind == VTA_OP_RESET;
	in->in.iter_out = nf > 0 ? (uint32_t)N->exts[h] : 1;
	in->in.iter_in = nf > 1 ? (uint32_t)N->exts[h + 1] : 1;
	in->in.dst_out = (uint32_t)steps[0][0];
	in->in.src_out = (uint32_t)steps[0][1];
	in->in.wgt_out = (uint32_t)steps[0][2];
	in->in.dst_in = (uint32_t)steps[1][0];
	in->in.src_in = (uint32_t)steps[1][1];
	in->in.wgt_in = (uint32_t)steps[1][2];
	if (lf->kind == VTA_OP_ALU) {
		in->in.alu_op = lf->alu_op;
		in->in.use_imm = lf->use_imm;
		in->in.imm = lf->imm;
	}
	/* the elements touched, for the tokens */
	int64_t span[3];
	for (int w = 0; w < 3; w++)
		span[w] = (int64_t)(in->in.iter_out - 1) * steps[0][w] +
		    (int64_t)(in->in.iter_in - 1) * steps[1][w];
	VtaFoot *f = &in->foot;
	f->rlo[VTA_SRAM_ACC] = f->wlo[VTA_SRAM_ACC] = lo[0];
	f->rhi[VTA_SRAM_ACC] = f->whi[VTA_SRAM_ACC] = hi[0] + span[0];
	if (lf->kind == VTA_OP_GEMM) {
		f->rlo[VTA_SRAM_INP] = lo[1];
		f->rhi[VTA_SRAM_INP] = hi[1] + span[1];
		f->rlo[VTA_SRAM_WGT] = lo[2];
		f->rhi[VTA_SRAM_WGT] = hi[2] + span[2];
	} else if (lf->kind == VTA_OP_ALU && !lf->use_imm) {
		int64_t a = lo[1] < f->rlo[VTA_SRAM_ACC] ? lo[1] : f->rlo[VTA_SRAM_ACC];
		int64_t b = hi[1] + span[1] > f->rhi[VTA_SRAM_ACC] ? hi[1] + span[1] :
		    f->rhi[VTA_SRAM_ACC];
		f->rlo[VTA_SRAM_ACC] = a;
		f->rhi[VTA_SRAM_ACC] = b;
	}
	if (lf->kind == VTA_OP_RESET) {
		f->rlo[VTA_SRAM_ACC] = 1;
		f->rhi[VTA_SRAM_ACC] = 0;
	}
	return true;
}

/* Runs the host loops [l, h) and an instruction at each point. */
static bool
host_loops(Nest *N, int l, int h, int nf, int64_t steps[2][3], VtaEnv *env, int64_t *val)
{
	if (l == h)
		return instruction(N, h, nf, steps, env, val);
	for (int64_t i = 0; i < N->exts[l]; i++) {
		val[l] = N->mins[l] + i;
		if (!host_loops(N, l + 1, h, nf, steps, vta_bind(env, N->vars[l], val[l]), val))
			return false;
	}
	return true;
}

bool
vta_uop_nest(VtaRun *R, IrStmt **loops, int n, IrExpr *guard, VtaLeaf *leaf, VtaEnv *env,
    Loc loc, const char *what)
{
	Nest N;
	memset(&N, 0, sizeof N);
	N.R = R;
	N.leaf = leaf;
	N.loc = loc;
	N.what = what;
	N.loops = loops;
	N.n = n;
	N.guard = guard;
	for (int l = 0; l < n; l++) {
		N.vars[l] = loops[l]->loop.var;
		if (!vta_eval(loops[l]->loop.min, env, &N.mins[l]) ||
		    !vta_eval(loops[l]->loop.extent, env, &N.exts[l])) {
			diag_error(loc, "the loops of '%s' are not known at compile time", what);
			return false;
		}
		if (N.exts[l] <= 0)
			return true;
		N.guard_dep[l] = guard && ir_uses_var(guard, N.vars[l]);
	}
	IrExpr *idx[3] = { leaf->dst, leaf->src, leaf->wgt };
	Buffer *buf[3] = { leaf->dbuf, leaf->sbuf, leaf->wbuf };
	for (int w = 0; w < 3; w++) {
		if (!idx[w])
			continue;
		N.idx[w] = idx[w];
		N.buf[w] = buf[w];
		N.base[w] = vta_sram_base(R, buf[w]);
		N.lanes[w] = vta_lanes(buf[w]->scope);
		N.aff_ok[w] = vta_affine(idx[w], env, N.vars, n, &N.aff[w]);
	}
	/* the cut: fewest instructions, then the most folded loops */
	int best_h = n, best_f = 0;
	int64_t best_cost = -1;
	int64_t steps[2][3] = { { 0 } };
	for (int h = 0; h <= n; h++)
		for (int nf = 2; nf >= 0; nf--) {
			if (h + nf > n)
				continue;
			int64_t st[2][3];
			bool ok = true;
			for (int k = 0; k < nf && ok; k++)
				ok = foldable(&N, h + k, st[k]);
			if (!ok || product(&N, h + nf, n) > KERNEL_MAX)
				continue;
			int64_t cost = product(&N, 0, h);
			if (best_cost < 0 || cost < best_cost) {
				best_cost = cost;
				best_h = h;
				best_f = nf;
			}
		}
	if (best_f > 0)
		foldable(&N, best_h, steps[0]);
	if (best_f > 1)
		foldable(&N, best_h + 1, steps[1]);
	int64_t val[VTA_MAXL];
	return host_loops(&N, 0, best_h, best_f, steps, env, val);
}
