/* vta_region.c: a kernel's VTA regions, run at compile time into streams.
 *
 * The lowered entry point mixes host work (the size checks, the packing
 * stages that lay tensors out for VTA, DRAM buffers) with statements that
 * touch VTA's on-chip buffers.  vta_split keeps the host work and replaces
 * each outermost statement that touches the buffers -- a region -- by a
 * call VTA_RUN(k) of its stream.  A region may hold only VTA work: copies
 * between DRAM and the buffers, GEMM updates and resets, ALU work on acc,
 * and the loops, lets and conditions around them; host work inside one is
 * an error that says to compute the stage at root.
 *
 * A region runs here as TVM's runtime runs its host code: every size is
 * a constant (-D), so its loops are iterated and its allocations placed,
 * and each nest whose leaf is one operation (vta_dma.c, vta_alu.c and
 * vta_uop.c recognise them) becomes instructions.  On-chip buffers are
 * placed once per buffer and virtual thread, side by side: a buffer
 * allocated inside a loop keeps its place in every iteration.
 *
 * Virtual threads (a loop bound to vthread, TVM's cthread): the body runs
 * once per thread, each with its own copies of the buffers allocated
 * inside it, and the threads' nests are interleaved -- the first nest of
 * thread 0, the first of thread 1, the second of thread 0 ... -- so that
 * with the tokens of vta_deps.c one thread's loads overlap the other's
 * GEMMs.
 *
 * Once the order is final, the micro-op kernels are placed in the micro-op
 * buffer (a LOAD UOP where one is not resident; all are dropped when the
 * buffer is full), then vta_deps.c adds the tokens and FINISH.
 */
#include <string.h>

#include "target/vta/vta.h"

/* A list of instructions in groups (one nest's each). */
typedef struct {
	VtaInsn *v; int n, cap;
	int *g; int ng, capg;      /* first instruction of each group */
} List;

typedef struct {
	Buffer *buf;
	int vt;
	int64_t base, elems;
} Place;

typedef struct {
	Buffer *buf;
	int64_t base;
} Live;

struct VtaRun {
	IrFunc *f;
	VtaStream *s;
	List *cur;
	Place *place; int nplace, capplace;
	Live *live; int nlive, caplive;
	int64_t next[VTA_NSRAM];
	/* the stages being produced, innermost last: whether the work of each
	 * so far changed anything outside the buffers allocated inside it */
	struct { int mark; bool effective; } frame[64];
	int nframes;
	int vt;                   /* the virtual thread running (0: none) */
	int vtcount;              /* threads of the enclosing vthread loops */
	bool failed;
	const char *what;         /* the stage being produced */
};

const txrt_vta_config *
vta_cfg(void)
{
	return txrt_vta_default_config();
}

VtaStream *
vta_stream(VtaRun *R)
{
	return R->s;
}

Program *
vta_program(VtaRun *R)
{
	return R->f->prog;
}

int
vta_sram_of(MemScope s)
{
	switch (s) {
	case SCOPE_VTA_INP: return VTA_SRAM_INP;
	case SCOPE_VTA_WGT: return VTA_SRAM_WGT;
	case SCOPE_VTA_ACC: return VTA_SRAM_ACC;
	default: return -1;
	}
}

int
vta_lanes(MemScope s)
{
	const txrt_vta_config *c = vta_cfg();
	switch (s) {
	case SCOPE_VTA_INP: return c->batch * c->block_in;
	case SCOPE_VTA_WGT: return c->block_out * c->block_in;
	case SCOPE_VTA_ACC: return c->batch * c->block_out;
	default: return 1;
	}
}

static int64_t
depth_of(int sram)
{
	const txrt_vta_config *c = vta_cfg();
	return sram == VTA_SRAM_INP ? c->inp_depth : sram == VTA_SRAM_WGT ? c->wgt_depth :
	    c->acc_depth;
}

static const char *const sram_names[VTA_NSRAM] = { "inp", "wgt", "acc" };

/* ---- instructions in groups ---------------------------------------------- */

VtaInsn *
vta_push(VtaRun *R, int opcode, const char *what)
{
	List *l = R->cur;
	VtaInsn *in = ARENA_PUSH(ir_arena, l->v, l->n, l->cap);
	memset(in, 0, sizeof *in);
	in->in.opcode = opcode;
	in->kernel = -1;
	in->what = what ? what : R->what;
	for (int m = 0; m < VTA_NSRAM; m++) {
		in->foot.rlo[m] = in->foot.wlo[m] = 1;
		in->foot.rhi[m] = in->foot.whi[m] = 0;
	}
	in->foot.dram_read = in->foot.dram_write = -1;
	return in;
}

static void
group_begin(List *l)
{
	if (l->ng && l->g[l->ng - 1] == l->n)
		return;
	*ARENA_PUSH(ir_arena, l->g, l->ng, l->capg) = l->n;
}

/* The modules a group's instructions run on (a bit each). */
static int
modules(List *l, int g)
{
	int a = l->g[g], b = g + 1 < l->ng ? l->g[g + 1] : l->n, m = 0;
	for (int i = a; i < b; i++)
		m |= 1 << txrt_vta_module(&l->v[i].in);
	return m;
}

/* Consecutive groups that run on one and the same module become one: a
 * thread's loads of its inputs and weights go together, before the other
 * thread's, so that its GEMM does not wait behind them. */
static void
coalesce(List *l)
{
	int w = 0, *m = arena_alloc(ir_arena, (size_t)(l->ng + 1) * sizeof *m);
	for (int g = 0; g < l->ng; g++)
		m[g] = modules(l, g);
	for (int g = 0; g < l->ng; g++) {
		if (g > 0 && m[g] && !(m[g] & (m[g] - 1)) && m[g - 1] == m[g])
			continue;   /* joins the group before */
		l->g[w++] = l->g[g];
	}
	l->ng = w;
}

/* The threads' groups, round robin, appended to `to` as groups. */
static void
interleave(List *to, List *th, int nt)
{
	for (int t = 0; t < nt; t++)
		coalesce(&th[t]);
	int most = 0;
	for (int t = 0; t < nt; t++)
		most = th[t].ng > most ? th[t].ng : most;
	for (int g = 0; g < most; g++)
		for (int t = 0; t < nt; t++) {
			if (g >= th[t].ng)
				continue;
			int a = th[t].g[g], b = g + 1 < th[t].ng ? th[t].g[g + 1] : th[t].n;
			if (a == b)
				continue;
			group_begin(to);
			for (int i = a; i < b; i++)
				*ARENA_PUSH(ir_arena, to->v, to->n, to->cap) = th[t].v[i];
		}
}

/* ---- memory ---------------------------------------------------------------- */

int
vta_dram(VtaRun *R, Buffer *b)
{
	VtaStream *s = R->s;
	for (int i = 1; i < s->ndram; i++)
		if (s->dram[i].buf == b)
			return i;
	int64_t elems = 1;
	for (int d = 0; d < b->ndims; d++) {
		int64_t e;
		if (!ir_is_const(b->extent[d], &e) && !bounds_const_max(b->extent[d], &e)) {
			diag_error(s->loc, "the size of '%s' is not known at compile time; the vta "
			    "target needs every size fixed (-D NAME=VALUE)", b->name);
			R->failed = true;
			e = 0;
		}
		elems *= e > 0 ? e : 0;
	}
	VtaDram *d = ARENA_PUSH(ir_arena, s->dram, s->ndram, s->capdram);
	memset(d, 0, sizeof *d);
	d->buf = b;
	d->elem_bytes = ir_bits(b->elem) / 8;
	d->bytes = (uint64_t)elems * (uint64_t)d->elem_bytes;
	return s->ndram - 1;
}

int
vta_dram_zeros(VtaRun *R, uint64_t bytes)
{
	VtaStream *s = R->s;
	if (!s->zeros) {
		VtaDram *d = ARENA_PUSH(ir_arena, s->dram, s->ndram, s->capdram);
		memset(d, 0, sizeof *d);
		d->zeros = true;
		d->read = true;
		d->elem_bytes = 1;
		s->zeros = s->ndram - 1;
	}
	if (s->dram[s->zeros].bytes < bytes)
		s->dram[s->zeros].bytes = bytes;
	return s->zeros;
}

int64_t
vta_sram_base(VtaRun *R, Buffer *b)
{
	for (int i = R->nlive - 1; i >= 0; i--)
		if (R->live[i].buf == b)
			return R->live[i].base;
	ICE("on-chip buffer %s used outside its allocation", b->name);
}

/* Places b (an on-chip buffer) for the running virtual thread: the same
 * place every time it is allocated. */
static bool
place(VtaRun *R, IrStmt *s, Buffer *b, VtaEnv *env)
{
	int m = vta_sram_of(b->scope);
	for (int i = 0; i < R->nplace; i++)
		if (R->place[i].buf == b && R->place[i].vt == R->vt) {
			*ARENA_PUSH(ir_arena, R->live, R->nlive, R->caplive) =
			    (Live){ b, R->place[i].base };
			return true;
		}
	int64_t scalars = 1;
	for (int d = 0; d < b->ndims; d++) {
		int64_t e;
		if (!vta_eval(b->extent[d], env, &e) && !bounds_const_max(b->extent[d], &e)) {
			diag_error(s->loc, "the size of on-chip buffer '%s' is not known at compile time",
			    b->name);
			return false;
		}
		scalars *= e > 0 ? e : 0;
	}
	int lanes = vta_lanes(b->scope);
	int64_t elems = (scalars + lanes - 1) / lanes, depth = depth_of(m);
	Loc at = b->scope_loc.file ? b->scope_loc : R->s->loc;
	if (scalars % lanes != 0) {
		diag_error(at, "on-chip buffer '%s' holds %lld values, not whole %s elements of %d",
		    b->name, (long long)scalars, sram_names[m], lanes);
		return false;
	}
	if (R->next[m] + elems > depth) {
		diag_error(at, "VTA's %s buffer overflows: '%s' needs %lld elements%s, and %lld of "
		    "its %lld are free", sram_names[m], b->name, (long long)elems,
		    R->vt ? " per virtual thread" : "", (long long)(depth - R->next[m]),
		    (long long)depth);
		char *list = "";
		for (int i = 0; i < R->nplace; i++)
			if (vta_sram_of(R->place[i].buf->scope) == m)
				list = arena_printf(ir_arena, "%s%s%s (%lld)", list, *list ? ", " : "",
				    R->place[i].buf->name, (long long)R->place[i].elems);
		if (*list)
			diag_note(at, "already placed there: %s; a smaller tile, or fewer virtual "
			    "threads, makes room", list);
		else
			diag_note(at, "a smaller tile makes it fit (%lld values of %d lanes)",
			    (long long)scalars, lanes);
		return false;
	}
	Place *p = ARENA_PUSH(ir_arena, R->place, R->nplace, R->capplace);
	*p = (Place){ b, R->vt, R->next[m], elems };
	R->next[m] += elems;
	*ARENA_PUSH(ir_arena, R->live, R->nlive, R->caplive) = (Live){ b, p->base };
	return true;
}

/* ---- micro-op kernels ------------------------------------------------------ */

int
vta_uop_kernel(VtaRun *R, const uint32_t *uops, int n)
{
	VtaStream *s = R->s;
	for (int k = 0; k < s->nkern; k++)
		if (s->kern[k].n == n && !memcmp(s->uops + s->kern[k].off, uops, (size_t)n * 4))
			return k;
	int off = s->nuops;
	for (int i = 0; i < n; i++)
		*ARENA_PUSH(ir_arena, s->uops, s->nuops, s->capuops) = uops[i];
	__typeof__(s->kern) k = ARENA_PUSH(ir_arena, s->kern, s->nkern, s->capkern);
	k->off = off;
	k->n = n;
	return s->nkern - 1;
}

/* The final order's micro-op placement: LOAD UOP before the first use of
 * a kernel not resident, every kernel dropped when the buffer is full. */
static void
place_uops(VtaStream *s, List *l, List *out)
{
	int64_t depth = vta_cfg()->uop_depth, next = 0;
	int64_t *slot = arena_alloc(ir_arena, (size_t)(s->nkern + 1) * sizeof *slot);
	for (int k = 0; k < s->nkern; k++)
		slot[k] = -1;
	for (int i = 0; i < l->n; i++) {
		VtaInsn *in = &l->v[i];
		int k = in->kernel;
		if (k >= 0) {
			int n = s->kern[k].n;
			if (slot[k] < 0) {
				if (next + n > depth) {
					for (int j = 0; j < s->nkern; j++)
						slot[j] = -1;
					next = 0;
				}
				slot[k] = next;
				next += n;
				VtaInsn *ld = ARENA_PUSH(ir_arena, out->v, out->n, out->cap);
				memset(ld, 0, sizeof *ld);
				ld->kernel = -1;
				ld->what = "micro-ops";
				for (int m = 0; m < VTA_NSRAM; m++) {
					ld->foot.rlo[m] = ld->foot.wlo[m] = 1;
					ld->foot.rhi[m] = ld->foot.whi[m] = 0;
				}
				ld->foot.dram_read = 0;
				ld->foot.dram_write = -1;
				ld->in.opcode = TXRT_VTA_LOAD;
				ld->in.mem_type = TXRT_VTA_MEM_UOP;
				ld->in.sram_base = (uint32_t)slot[k];
				ld->in.dram_base = (uint32_t)(s->dram[0].phys / 4 + (uint64_t)s->kern[k].off);
				ld->in.y_size = 1;
				ld->in.x_size = ld->in.x_stride = (uint32_t)n;
			}
			in->in.uop_bgn = (uint32_t)slot[k];
			in->in.uop_end = (uint32_t)(slot[k] + n);
		}
		*ARENA_PUSH(ir_arena, out->v, out->n, out->cap) = *in;
	}
}

/* ---- running a region --------------------------------------------------- */

static void exec(VtaRun *R, IrStmt *s, VtaEnv *env);

static void
unknown(VtaRun *R, IrStmt *s, const char *why)
{
	if (R->failed)
		return;
	Loc at = s->loc.file ? s->loc : R->s->loc;
	diag_error(at, "%s", why);
	R->failed = true;
}

static bool
value(VtaRun *R, IrStmt *s, IrExpr *e, VtaEnv *env, int64_t *out, const char *what)
{
	if (vta_eval(e, env, out))
		return true;
	unknown(R, s, arena_printf(ir_arena, "the %s of a loop on VTA must be known at compile "
	    "time (%s): every size must be fixed with -D, and the loops may not depend on "
	    "data", what, ir_expr_str(e)));
	return false;
}

/* A nest that made instructions writes buf (NULL: GEMM or ALU work): that
 * is an effect of every stage being produced that does not allocate buf
 * inside itself. */
static void
effect(VtaRun *R, Buffer *buf)
{
	for (int f = 0; f < R->nframes; f++) {
		bool inside = false;
		for (int i = R->frame[f].mark; buf && i < R->nlive && !inside; i++)
			inside = R->live[i].buf == buf;
		if (!inside)
			R->frame[f].effective = true;
	}
}

/* A perfect nest from s: its loops, an innermost guard and the leaf. */
static bool
nest(VtaRun *R, IrStmt *s, VtaEnv *env)
{
	IrStmt *loops[VTA_MAXL];
	int n = 0;
	IrStmt *b = s;
	while (b->kind == IS_FOR && b->loop.fk != FOR_VTHREAD && n < VTA_MAXL) {
		loops[n++] = b;
		b = b->loop.body;
	}
	IrExpr *guard = NULL;
	if (b->kind == IS_IF && !b->ifs.else_s) {
		guard = b->ifs.cond;
		b = b->ifs.then_s;
	}
	if (b->kind != IS_STORE && b->kind != IS_EVALUATE)
		return false;
	List *l = R->cur;
	group_begin(l);
	int before = diag_errors();
	int n0 = l->n;
	bool done = vta_dma_nest(R, loops, n, guard, b, env) ||
	    vta_compute_nest(R, loops, n, guard, b, env);
	if (diag_errors() != before)
		R->failed = true;
	if (done && l->n > n0)
		effect(R, b->kind == IS_STORE ? b->store.buf : NULL);
	return done;
}

static void
vthread(VtaRun *R, IrStmt *s, VtaEnv *env, int64_t min, int64_t ext)
{
	if (ext > 16) {
		unknown(R, s, arena_printf(ir_arena, "%lld virtual threads: VTA's are meant for "
		    "two (loads of one overlap the other's GEMMs); each needs its own copy of "
		    "the buffers", (long long)ext));
		return;
	}
	List *th = arena_alloc(ir_arena, (size_t)ext * sizeof *th);
	List *was = R->cur;
	int vt = R->vt;
	for (int64_t t = 0; t < ext && !R->failed; t++) {
		memset(&th[t], 0, sizeof th[t]);
		R->cur = &th[t];
		R->vt = vt * 17 + (int)t + 1;
		exec(R, s->loop.body, vta_bind(env, s->loop.var, min + t));
	}
	R->cur = was;
	R->vt = vt;
	interleave(was, th, (int)ext);
}

static void
exec(VtaRun *R, IrStmt *s, VtaEnv *env)
{
	if (!s || R->failed)
		return;
	int64_t v, min, ext;
	switch (s->kind) {
	case IS_BLOCK:
		for (int i = 0; i < s->block.n && !R->failed; i++)
			exec(R, s->block.stmts[i], env);
		return;
	case IS_PRODUCE: {
		const char *was = R->what;
		R->what = s->produce.name;
		/* a stage whose work changes nothing but buffers it allocates
		 * inside itself -- loads for GEMMs that do not run, as in a
		 * virtual thread past the end of the outputs -- is dropped */
		List *l = R->cur;
		int n0 = l->n, f = R->nframes;
		if (f < (int)(sizeof R->frame / sizeof R->frame[0])) {
			R->frame[f].mark = R->nlive;
			R->frame[f].effective = false;
			R->nframes++;
		}
		exec(R, s->produce.body, env);
		if (R->nframes > f) {
			R->nframes = f;
			if (!R->frame[f].effective && R->cur == l && l->n > n0) {
				l->n = n0;
				while (l->ng && l->g[l->ng - 1] >= n0)
					l->ng--;
			}
		}
		R->what = was;
		return;
	}
	case IS_LET:
		if (value(R, s, s->let.value, env, &v, "value of a let"))
			exec(R, s->let.body, vta_bind(env, s->let.var, v));
		return;
	case IS_IF:
		if (value(R, s, s->ifs.cond, env, &v, "condition"))
			exec(R, v ? s->ifs.then_s : s->ifs.else_s, env);
		return;
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		if (vta_sram_of(b->scope) < 0) {
			unknown(R, s, arena_printf(ir_arena, "'%s' is stored in DRAM but allocated "
			    "inside the accelerator's loops; compute it at root (compute_root) or "
			    "in one of VTA's buffers (set_scope)", b->name));
			return;
		}
		int mark = R->nlive;
		if (!place(R, s, b, env)) {
			R->failed = true;
			return;
		}
		exec(R, s->alloc.body, env);
		R->nlive = mark;
		return;
	}
	case IS_FOR:
		if (s->loop.fk != FOR_VTHREAD && nest(R, s, env))
			return;
		if (!value(R, s, s->loop.min, env, &min, "start") ||
		    !value(R, s, s->loop.extent, env, &ext, "extent"))
			return;
		if (s->loop.fk == FOR_VTHREAD) {
			vthread(R, s, env, min, ext);
			return;
		}
		for (int64_t i = 0; i < ext && !R->failed; i++)
			exec(R, s->loop.body, vta_bind(env, s->loop.var, min + i));
		return;
	case IS_STORE:
	case IS_EVALUATE:
		if (!nest(R, s, env) && !R->failed)
			unknown(R, s, arena_printf(ir_arena, "VTA cannot run this statement of '%s': "
			    "it is neither a copy between DRAM and an on-chip buffer, nor GEMM or ALU "
			    "work on acc", R->what ? R->what : "?"));
		return;
	case IS_ASSERT:
		return;
	default:
		unknown(R, s, "a statement VTA cannot run");
	}
}

/* ---- regions in the host function ------------------------------------------ */

typedef struct {
	IrVisitor v;
	bool vta;
} Touch;

static void
touch_load(IrVisitor *v, IrExpr *e)
{
	Touch *t = (Touch *)v;
	if (vta_sram_of(e->load.buf->scope) >= 0)
		t->vta = true;
	ir_visit_expr_children(v, e);
}

static void
touch_call(IrVisitor *v, IrExpr *e)
{
	Touch *t = (Touch *)v;
	if (e->call.ck == CALL_INTRINSIC && !strcmp(e->call.name, "gemm"))
		t->vta = true;
	ir_visit_expr_children(v, e);
}

static void
touch_store(IrVisitor *v, IrStmt *s)
{
	Touch *t = (Touch *)v;
	if (vta_sram_of(s->store.buf->scope) >= 0)
		t->vta = true;
	ir_visit_stmt_children(v, s);
}

static void
touch_alloc(IrVisitor *v, IrStmt *s)
{
	Touch *t = (Touch *)v;
	if (vta_sram_of(s->alloc.buf->scope) >= 0)
		t->vta = true;
	ir_visit_stmt_children(v, s);
}

static void
touch_for(IrVisitor *v, IrStmt *s)
{
	Touch *t = (Touch *)v;
	if (s->loop.fk == FOR_VTHREAD)
		t->vta = true;
	ir_visit_stmt_children(v, s);
}

static bool
touches(IrStmt *s)
{
	Touch t;
	memset(&t, 0, sizeof t);
	t.v.expr[IR_LOAD] = touch_load;
	t.v.expr[IR_CALL] = touch_call;
	t.v.stmt[IS_STORE] = touch_store;
	t.v.stmt[IS_ALLOCATE] = touch_alloc;
	t.v.stmt[IS_FOR] = touch_for;
	ir_visit_stmt(&t.v, s);
	return t.vta;
}

typedef struct {
	IrFunc *f;
	VtaFunc *vf;
	VtaEnv *env;          /* the host's lets with known values */
	bool failed;
} Split;

static IrStmt *
run_region(Split *S, IrStmt *s)
{
	char *unfixed = "";
	for (int i = 0; i < S->f->nparams; i++)
		if (ir_stmt_uses_var(s, S->f->params[i]))
			unfixed = arena_printf(ir_arena, "%s%s-D %s=...", unfixed, *unfixed ? " " : "",
			    S->f->params[i]->name);
	if (*unfixed) {
		diag_error(S->f->kernel ? S->f->kernel->name_loc : loc_none, "the vta target runs the "
		    "accelerator's loops at compile time, so every size they use must be fixed: "
		    "%s", unfixed);
		S->failed = true;
		return s;
	}
	VtaStream *st = arena_alloc(ir_arena, sizeof *st);
	memset(st, 0, sizeof *st);
	st->name = S->vf->ns ? arena_printf(ir_arena, "%s_%d", S->f->name, S->vf->ns) : S->f->name;
	st->loc = s->loc.file ? s->loc : S->f->kernel ? S->f->kernel->name_loc : loc_none;
	VtaDram *u = ARENA_PUSH(ir_arena, st->dram, st->ndram, st->capdram);
	memset(u, 0, sizeof *u);
	u->elem_bytes = 4;
	u->read = true;
	VtaRun R;
	memset(&R, 0, sizeof R);
	R.f = S->f;
	R.s = st;
	List top;
	memset(&top, 0, sizeof top);
	R.cur = &top;
	exec(&R, s, S->env);
	if (R.failed) {
		S->failed = true;
		return s;
	}
	/* DRAM: the micro-ops first, then the tensors, each on its own pages */
	st->dram[0].bytes = (uint64_t)st->nuops * 4;
	uint64_t at = 0x1000;
	for (int i = 0; i < st->ndram; i++) {
		st->dram[i].phys = at;
		at += (st->dram[i].bytes + 0xfff) & ~(uint64_t)0xfff;
		if (!st->dram[i].bytes)
			at += 0x1000;
	}
	/* the DRAM addresses were relative to each region: make them absolute */
	List fin;
	memset(&fin, 0, sizeof fin);
	place_uops(st, &top, &fin);
	for (int i = 0; i < fin.n; i++) {
		VtaInsn *in = &fin.v[i];
		int r = in->foot.dram_read >= 0 ? in->foot.dram_read : in->foot.dram_write;
		if (r > 0 && (in->in.opcode == TXRT_VTA_LOAD || in->in.opcode == TXRT_VTA_STORE)) {
			int eb = in->in.mem_type == TXRT_VTA_MEM_WGT ? 256 :
			    in->in.mem_type == TXRT_VTA_MEM_ACC ? 64 : 16;
			in->in.dram_base += (uint32_t)(st->dram[r].phys / (uint64_t)eb);
		}
	}
	/* a DRAM tensor stored and then loaded back within one stream would need
	 * the store and the load ordered through the compute module */
	bool *stored = arena_alloc(ir_arena, (size_t)st->ndram * sizeof *stored);
	memset(stored, 0, (size_t)st->ndram * sizeof *stored);
	for (int i = 0; i < fin.n; i++) {
		VtaInsn *in = &fin.v[i];
		if (in->foot.dram_write >= 0)
			stored[in->foot.dram_write] = true;
		if (in->foot.dram_read > 0 && stored[in->foot.dram_read]) {
			diag_error(st->loc, "'%s' is stored to DRAM and loaded back by the same VTA "
			    "loop nest (for '%s'); compute the stage that stores it at root, so that "
			    "its stream finishes first", st->dram[in->foot.dram_read].buf->name,
			    in->what ? in->what : "?");
			S->failed = true;
			return s;
		}
	}
	st->insn = fin.v;
	st->ninsn = fin.n;
	st->capinsn = fin.cap;
	vta_deps(st);
	if (!vta_encode(st)) {
		S->failed = true;
		return s;
	}
	*ARENA_PUSH(ir_arena, S->vf->s, S->vf->ns, S->vf->caps) = st;
	IrExpr *k = ir_int(ir_i32, S->vf->ns - 1);
	IrStmt *call = ir_evaluate(ir_call_intrinsic(VTA_RUN, ir_i32, &k, 1));
	call->loc = st->loc;
	return call;
}

static IrStmt *
split(Split *S, IrStmt *s)
{
	if (!s || S->failed || !touches(s))
		return s;
	switch (s->kind) {
	case IS_BLOCK: {
		IrStmt **out = arena_alloc(ir_arena, (size_t)s->block.n * sizeof *out);
		for (int i = 0; i < s->block.n; i++)
			out[i] = split(S, s->block.stmts[i]);
		return ir_block(out, s->block.n);
	}
	case IS_PRODUCE:
		return ir_produce(s->produce.name, s->produce.update, split(S, s->produce.body));
	case IS_ALLOCATE:
		if (vta_sram_of(s->alloc.buf->scope) >= 0)
			return run_region(S, s);
		return ir_allocate(s->alloc.buf, split(S, s->alloc.body));
	case IS_LET: {
		int64_t v;
		VtaEnv *was = S->env;
		if (vta_eval(s->let.value, S->env, &v))
			S->env = vta_bind(S->env, s->let.var, v);
		IrStmt *b = split(S, s->let.body);
		S->env = was;
		return ir_let_stmt(s->let.var, s->let.value, b);
	}
	default:
		return run_region(S, s);
	}
}

VtaFunc *
vta_split(IrFunc *f)
{
	VtaFunc *vf = arena_alloc(ir_arena, sizeof *vf);
	memset(vf, 0, sizeof *vf);
	Split S = { f, vf, NULL, false };
	IrStmt *body = split(&S, f->body);
	if (S.failed)
		return NULL;
	if (vf->ns == 0)
		diag_warn(f->kernel ? f->kernel->name_loc : loc_none, "kernel '%s' has no work for VTA "
		    "(no stage in its buffers inp, wgt or acc): it runs on the host CPU", f->name);
	IrFunc *h = arena_alloc(ir_arena, sizeof *h);
	*h = *f;
	h->body = body;
	vf->host = h;
	return vf;
}

Loc
vta_stage_loc(Buffer *b, Loc dflt)
{
	Tensor *t = b ? b->tensor : NULL;
	if (t && t->rule)
		return t->rule->loc;
	return t ? t->loc : dflt;
}
