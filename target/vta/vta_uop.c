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
 *
 * The hardware pipelines acc's read-modify-write without a dependence
 * check: a micro-op may not touch an acc element one of the two before it
 * (in execution order, across the hardware loops too) writes (VTA-ISA.md;
 * libtxrt's simulator checks it).  So the two folded loops may be any two
 * of the loops inside the host ones (not only the outermost two), and a
 * GEMM kernel's micro-ops are dealt out round-robin over their outputs
 * (sums of integers may be taken in any order); a cut whose instruction
 * still has a hazard is passed over for the next best.  The last resort,
 * every loop on the host and one micro-op an instruction, has none.
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
	/* the cut: loops [0, h) on the host, fold[0..nf) the hardware's
	 * (outer, inner), kern[0..nk) enumerated into the kernel */
	int h, nf, nk;
	int fold[2], kern[VTA_MAXL];
	int64_t steps[2][3];
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
kernel_size(Nest *N)
{
	int64_t p = 1;
	for (int i = 0; i < N->nk; i++)
		p *= N->exts[N->kern[i]];
	return p;
}

/* Whether the micro-ops u[0..nu) (their acc dst, and an ALU's acc src or
 * -1) run hazard-free under the instruction's loops: no micro-op touches
 * an element one of the two before it writes.  The distances repeat with
 * the loops, so the first three iterations of each loop and the last
 * three of the inner one (where it meets the next outer iteration) are
 * enough; a gap in the positions restarts the history. */
static bool
hazard_free(const int64_t (*u)[2], int nu, int64_t io, int64_t ii, const int64_t f[2][3])
{
	int64_t xs[6];
	int nx = 0;
	for (int64_t x = 0; x < ii; x++) {
		if (x == 3 && ii > 6)
			x = ii - 3;
		xs[nx++] = x;
	}
	int64_t recent[2];
	int nr = 0;
	int64_t prev_y = -1, prev_x = -1;
	for (int64_t y = 0; y < io && y < 3; y++)
		for (int k = 0; k < nx; k++) {
			int64_t x = xs[k];
			bool next = (y == prev_y && x == prev_x + 1) ||
			    (y == prev_y + 1 && x == 0 && prev_x == ii - 1);
			if (!next)
				nr = 0;
			prev_y = y;
			prev_x = x;
			for (int i = 0; i < nu; i++) {
				int64_t d = u[i][0] + y * f[0][0] + x * f[1][0];
				int64_t sr = u[i][1] < 0 ? -1 : u[i][1] + y * f[0][1] + x * f[1][1];
				for (int r = 0; r < nr; r++)
					if (recent[r] == d || recent[r] == sr)
						return false;
				recent[1] = recent[0];
				recent[0] = d;
				nr = nr < 2 ? nr + 1 : 2;
			}
		}
	return true;
}

/* Deals the micro-ops out round-robin over their acc outputs (a GEMM's:
 * its sums may be taken in any order), so that one output's updates are
 * as far apart as the number of outputs allows. */
static void
deal(uint32_t *uops, int64_t (*u)[2], int nu)
{
	int *next = arena_alloc(ir_arena, (size_t)(nu + 1) * sizeof *next);
	int *head = arena_alloc(ir_arena, (size_t)(nu + 1) * sizeof *head);
	int *tail = arena_alloc(ir_arena, (size_t)(nu + 1) * sizeof *tail);
	int ng = 0;
	for (int i = 0; i < nu; i++) {
		int g = 0;
		while (g < ng && u[head[g]][0] != u[i][0])
			g++;
		if (g == ng) {
			head[ng] = tail[ng] = i;
			ng++;
		} else {
			next[tail[g]] = i;
			tail[g] = i;
		}
		next[i] = -1;
	}
	uint32_t *w = arena_alloc(ir_arena, (size_t)(nu + 1) * sizeof *w);
	int64_t (*v)[2] = arena_alloc(ir_arena, (size_t)(nu + 1) * sizeof *v);
	int n = 0;
	while (n < nu)
		for (int g = 0; g < ng; g++)
			if (head[g] >= 0) {
				w[n] = uops[head[g]];
				v[n][0] = u[head[g]][0];
				v[n][1] = u[head[g]][1];
				n++;
				head[g] = next[head[g]];
			}
	memcpy(uops, w, (size_t)nu * sizeof *uops);
	memcpy(u, v, (size_t)nu * sizeof *u);
}

static bool host_loops(Nest *N, int l, VtaEnv *env, int64_t *val);

/* The instruction at one point of the host loops [0, h).  dry: only say,
 * in *clean, whether it runs without a pipeline hazard (emits nothing).
 * An instruction with a hazard is run as one micro-op an instruction. */
static bool
instruction(Nest *N, VtaEnv *env, int64_t *val, bool dry, bool *clean)
{
	VtaRun *R = N->R;
	VtaLeaf *lf = N->leaf;
	int64_t cnt = kernel_size(N);
	uint32_t *uops = arena_alloc(ir_arena, (size_t)(cnt + 1) * sizeof *uops);
	int64_t (*u)[2] = arena_alloc(ir_arena, (size_t)(cnt + 1) * sizeof *u);
	int nu = 0;
	int64_t lo[3] = { INT64_MAX, INT64_MAX, INT64_MAX }, hi[3] = { -1, -1, -1 };
	VtaEnv *at = env;
	/* the folded loops at their first iteration */
	for (int k = 0; k < N->nf; k++) {
		int l = N->fold[k];
		val[l] = N->mins[l];
		at = vta_bind(at, N->vars[l], val[l]);
	}
	int64_t t[VTA_MAXL] = { 0 };
	for (int64_t p = 0; p < cnt; p++) {
		VtaEnv *e = at;
		for (int k = 0; k < N->nk; k++) {
			int l = N->kern[k];
			val[l] = N->mins[l] + t[k];
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
			u[nu][0] = x[0];
			u[nu][1] = lf->kind == VTA_OP_ALU && !lf->use_imm ? x[1] : -1;
			uops[nu++] = word;
			for (int w = 0; w < 3; w++)
				if (N->idx[w]) {
					lo[w] = x[w] < lo[w] ? x[w] : lo[w];
					hi[w] = x[w] > hi[w] ? x[w] : hi[w];
				}
		}
		for (int k = N->nk - 1; k >= 0 && ++t[k] == N->exts[N->kern[k]]; k--)
			t[k] = 0;
	}
	if (!nu) {
		*clean = true;
		return true;
	}
	if (lf->kind == VTA_OP_GEMM)
		deal(uops, u, nu);
	int64_t io = N->nf > 0 ? N->exts[N->fold[0]] : 1, ii = N->nf > 1 ? N->exts[N->fold[1]] : 1;
	*clean = lf->kind == VTA_OP_RESET || hazard_free((const int64_t (*)[2])u, nu, io, ii,
	    (const int64_t (*)[3])N->steps);
	if (dry)
		return true;
	if (!*clean) {
		/* every loop of this point on the host, one micro-op each */
		Nest one = *N;
		one.h = N->n;
		one.nf = one.nk = 0;
		memset(one.steps, 0, sizeof one.steps);
		return host_loops(&one, N->h, env, val);
	}
	VtaInsn *in = vta_push(R, lf->kind == VTA_OP_ALU ? TXRT_VTA_ALU : TXRT_VTA_GEMM, N->what);
	in->kernel = vta_uop_kernel(R, uops, nu);
	in->in.reset = lf->kind == VTA_OP_RESET;
	in->in.iter_out = (uint32_t)io;
	in->in.iter_in = (uint32_t)ii;
	in->in.dst_out = (uint32_t)N->steps[0][0];
	in->in.src_out = (uint32_t)N->steps[0][1];
	in->in.wgt_out = (uint32_t)N->steps[0][2];
	in->in.dst_in = (uint32_t)N->steps[1][0];
	in->in.src_in = (uint32_t)N->steps[1][1];
	in->in.wgt_in = (uint32_t)N->steps[1][2];
	if (lf->kind == VTA_OP_ALU) {
		in->in.alu_op = lf->alu_op;
		in->in.use_imm = lf->use_imm;
		in->in.imm = lf->imm;
	}
	/* the elements touched, for the tokens */
	int64_t span[3];
	for (int w = 0; w < 3; w++)
		span[w] = (int64_t)(in->in.iter_out - 1) * N->steps[0][w] +
		    (int64_t)(in->in.iter_in - 1) * N->steps[1][w];
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
host_loops(Nest *N, int l, VtaEnv *env, int64_t *val)
{
	bool clean;
	if (l == N->h)
		return instruction(N, env, val, false, &clean);
	for (int64_t i = 0; i < N->exts[l]; i++) {
		val[l] = N->mins[l] + i;
		if (!host_loops(N, l + 1, vta_bind(env, N->vars[l], val[l]), val))
			return false;
	}
	return true;
}

/* Sets the cut: loops [0, h) on the host, the loops of [h, n) whose bits
 * are in mask folded (at most two, outer first), the rest enumerated;
 * false when a folded loop cannot be the hardware's or the kernel is too
 * large. */
static bool
cut(Nest *N, int h, unsigned mask)
{
	N->h = h;
	N->nf = N->nk = 0;
	memset(N->steps, 0, sizeof N->steps);
	for (int l = h; l < N->n; l++) {
		if (mask & (1u << l)) {
			if (N->nf == 2 || !foldable(N, l, N->steps[N->nf]))
				return false;
			N->fold[N->nf++] = l;
		} else
			N->kern[N->nk++] = l;
	}
	return kernel_size(N) <= KERNEL_MAX;
}

/* Whether the cut's instruction at the first point of the host loops runs
 * without a pipeline hazard (the other points are checked as they are
 * emitted). */
static bool
first_clean(Nest *N, VtaEnv *env)
{
	int64_t val[VTA_MAXL];
	bool clean = false;
	for (int l = 0; l < N->h; l++) {
		val[l] = N->mins[l];
		env = vta_bind(env, N->vars[l], val[l]);
	}
	int errors = diag_errors();
	if (!instruction(N, env, val, true, &clean) || diag_errors() != errors)
		return true;   /* the error shows again when it is emitted */
	return clean;
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
	/* the cut: the fewest instructions (the fewest host loops), then the
	 * most folded loops, the outermost first, and no pipeline hazard */
	for (int h = 0; h <= n; h++)
		for (int nf = 2; nf >= 0; nf--) {
			unsigned masks[VTA_MAXL * VTA_MAXL + 1];
			int nm = 0;
			if (nf == 0)
				masks[nm++] = 0;
			for (int a = h; nf > 0 && a < n; a++) {
				if (nf == 1)
					masks[nm++] = 1u << a;
				for (int b = a + 1; nf == 2 && b < n; b++)
					masks[nm++] = (1u << a) | (1u << b);
			}
			for (int m = 0; m < nm; m++)
				if (cut(&N, h, masks[m]) && first_clean(&N, env)) {
					int64_t val[VTA_MAXL];
					return host_loops(&N, 0, env, val);
				}
		}
	/* unreachable: every loop on the host is a clean cut */
	cut(&N, n, 0);
	int64_t val[VTA_MAXL];
	return host_loops(&N, 0, env, val);
}
