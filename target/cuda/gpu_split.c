/* gpu_split.c: a lowered kernel split into host code and GPU kernels.
 *
 * Every outermost nest of block loops (gpu_block) becomes a GpuKernel:
 * the block loops' variables, mins and extents (its grid), its body, and
 * as parameters the variables and buffers the body uses that are defined
 * outside it, in order of first use (variables first, then buffers; the
 * extents of the buffers it uses count as uses, so that the emulator can
 * check every access).  The nest is replaced in the host function by a
 * launch.  What else the host function keeps must be host work: checks,
 * lets, conditions, allocations of the stages computed at root (device
 * memory) and serial loops around launches.  A stage with loops bound
 * to threads but none to blocks, or a scalar stage with a few constant
 * iterations (an rfactor's combination), runs as a grid of one block
 * (one_block).  Any other stage whose loops are not bound to blocks, a
 * thread loop outside a block loop and a parallel loop are errors at
 * their primitive, with the primitive that fixes them.
 */
#include <string.h>

#include "target/cuda/cuda.h"

typedef struct {
	IrFunc *f;
	GpuFunc *gf;
	const char *stage;        /* the innermost produce, for messages */
	bool ok;
	Loc *seen; int nseen, capseen;
} Split;

/* ---- free variables and buffers -------------------------------------- */

typedef struct {
	IrVisitor v;
	Var **bound; int nbound, capbound;
	Var **vars; int nvars, capvars;
	Buffer **bufs; int nbufs, capbufs;
	Buffer **local; int nlocal, caplocal;
} Uses;

static bool
in_list(void **v, int n, void *x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void use_expr(Uses *u, IrExpr *e);

static void
use_var(Uses *u, Var *v)
{
	if (!in_list((void **)u->bound, u->nbound, v) && !in_list((void **)u->vars, u->nvars, v))
		*ARENA_PUSH(ir_arena, u->vars, u->nvars, u->capvars) = v;
}

static void
use_buf(Uses *u, Buffer *b)
{
	if (in_list((void **)u->local, u->nlocal, b) || in_list((void **)u->bufs, u->nbufs, b))
		return;
	*ARENA_PUSH(ir_arena, u->bufs, u->nbufs, u->capbufs) = b;
	/* its extents: the emulator checks accesses against them */
	for (int d = 0; d < b->ndims; d++)
		use_expr(u, b->extent[d]);
}

static void
visit_var(IrVisitor *v, IrExpr *e)
{
	use_var((Uses *)v, e->var);
}

static void
visit_load(IrVisitor *v, IrExpr *e)
{
	use_buf((Uses *)v, e->load.buf);
	ir_visit_expr_children(v, e);
}

static void
visit_let_expr(IrVisitor *v, IrExpr *e)
{
	Uses *u = (Uses *)v;
	ir_visit_expr(v, e->a);
	*ARENA_PUSH(ir_arena, u->bound, u->nbound, u->capbound) = e->var;
	ir_visit_expr(v, e->b);
}

static void
visit_for(IrVisitor *v, IrStmt *s)
{
	Uses *u = (Uses *)v;
	ir_visit_expr(v, s->loop.min);
	ir_visit_expr(v, s->loop.extent);
	*ARENA_PUSH(ir_arena, u->bound, u->nbound, u->capbound) = s->loop.var;
	ir_visit_stmt(v, s->loop.body);
}

static void
visit_let(IrVisitor *v, IrStmt *s)
{
	Uses *u = (Uses *)v;
	ir_visit_expr(v, s->let.value);
	*ARENA_PUSH(ir_arena, u->bound, u->nbound, u->capbound) = s->let.var;
	ir_visit_stmt(v, s->let.body);
}

static void
visit_store(IrVisitor *v, IrStmt *s)
{
	use_buf((Uses *)v, s->store.buf);
	ir_visit_stmt_children(v, s);
}

static void
visit_alloc(IrVisitor *v, IrStmt *s)
{
	Uses *u = (Uses *)v;
	Buffer *b = s->alloc.buf;
	for (int d = 0; d < b->ndims; d++) {
		use_expr(u, b->extent[d]);
		if (b->min && b->min[d])
			use_expr(u, b->min[d]);
		if (b->stride && b->stride[d])
			use_expr(u, b->stride[d]);
	}
	*ARENA_PUSH(ir_arena, u->local, u->nlocal, u->caplocal) = b;
	ir_visit_stmt(v, s->alloc.body);
}

static void
uses_init(Uses *u)
{
	memset(u, 0, sizeof *u);
	u->v.expr[IR_VAR] = visit_var;
	u->v.expr[IR_LOAD] = visit_load;
	u->v.expr[IR_LET] = visit_let_expr;
	u->v.stmt[IS_FOR] = visit_for;
	u->v.stmt[IS_LET] = visit_let;
	u->v.stmt[IS_STORE] = visit_store;
	u->v.stmt[IS_ALLOCATE] = visit_alloc;
}

static void
use_expr(Uses *u, IrExpr *e)
{
	ir_visit_expr(&u->v, e);
}

/* ---- finding loops --------------------------------------------------- */

typedef struct {
	IrVisitor v;
	ForKind fk;
	IrStmt *found;
} Find;

static void
find_for(IrVisitor *v, IrStmt *s)
{
	Find *f = (Find *)v;
	if (f->found)
		return;
	if (s->loop.fk == f->fk) {
		f->found = s;
		return;
	}
	ir_visit_stmt_children(v, s);
}

static IrStmt *
find_loop(IrStmt *s, ForKind fk)
{
	Find f;
	memset(&f, 0, sizeof f);
	f.v.stmt[IS_FOR] = find_for;
	f.fk = fk;
	ir_visit_stmt(&f.v, s);
	return f.found;
}

bool
gpu_has_loop(IrStmt *s, ForKind fk)
{
	return find_loop(s, fk) != NULL;
}

static Loc
loc_or(Loc l, IrFunc *f)
{
	return l.file ? l : f->kernel ? f->kernel->loc : loc_none;
}

/* ---- a kernel from a nest of block loops ------------------------------ */

static IrStmt *
outline(Split *S, IrStmt *s)
{
	GpuKernel *k = arena_alloc(ir_arena, sizeof *k);
	memset(k, 0, sizeof *k);
	k->loc = loc_or(s->loc, S->f);
	IrStmt *outer = s;
	Var *chain[3];
	int n = 0;
	for (; s->kind == IS_FOR && s->loop.fk == FOR_GPU_BLOCK; s = s->loop.body) {
		int d = s->loop.gpu_dim;
		if (n == 3 || k->bvar[d]) {
			diag_error(loc_or(s->loc, S->f), "loop '%s' is bound to blockIdx.%c, which "
			    "loop '%s' already is", s->loop.var->name, "xyz"[d],
			    k->bvar[d] ? k->bvar[d]->name : "?");
			diag_note(loc_or(s->loc, S->f), "bind each block loop to its own dimension "
			    "(blockIdx.x, y or z), or fuse them first");
			S->ok = false;
			return outer;
		}
		for (int i = 0; i < n; i++)
			if (ir_uses_var(s->loop.min, chain[i]) || ir_uses_var(s->loop.extent, chain[i])) {
				diag_error(loc_or(s->loc, S->f), "the extent of block loop '%s' depends "
				    "on block loop '%s': a grid is a rectangle", s->loop.var->name,
				    chain[i]->name);
				S->ok = false;
				return outer;
			}
		k->bvar[d] = chain[n++] = s->loop.var;
		k->bmin[d] = s->loop.min;
		k->grid[d] = s->loop.extent;
	}
	IrStmt *inner = find_loop(s, FOR_GPU_BLOCK);
	if (inner) {
		/* most often a stage computed at an outer block loop sits between */
		IrStmt *a = s;
		while (a && a != inner && a->kind != IS_ALLOCATE)
			a = a->kind == IS_LET ? a->let.body : a->kind == IS_PRODUCE ? a->produce.body :
			    a->kind == IS_BLOCK && a->block.n ? a->block.stmts[a->block.n - 1] : NULL;
		if (a && a->kind == IS_ALLOCATE && a->loc.file) {
			diag_error(a->loc, "'%s' is computed at block loop '%s', outside block loop "
			    "'%s': each block of a kernel runs on its own, so nothing can be shared "
			    "between the blocks of an outer block loop", a->alloc.buf->name,
			    chain[n - 1]->name, inner->loop.var->name);
			diag_note(a->loc, "compute it at '%s' (the innermost block loop) or at a loop "
			    "inside it", inner->loop.var->name);
			S->ok = false;
			return outer;
		}
		diag_error(loc_or(inner->loc, S->f), "block loop '%s' is not directly inside block "
		    "loop '%s': the block loops of a kernel must be its outermost loops, one inside "
		    "the other", inner->loop.var->name, chain[n - 1]->name);
		diag_note(loc_or(inner->loc, S->f), "reorder the block loops outermost, and "
		    "compute stages at the innermost block loop or inside it");
		S->ok = false;
		return outer;
	}
	for (int d = 0; d < 3; d++)
		if (!k->grid[d]) {
			k->grid[d] = ir_i64c(1);
			k->bmin[d] = ir_i64c(0);
		}

	Uses u;
	uses_init(&u);
	for (int i = 0; i < n; i++)
		*ARENA_PUSH(ir_arena, u.bound, u.nbound, u.capbound) = chain[i];
	for (int d = 0; d < 3; d++)
		use_expr(&u, k->bmin[d]);
	ir_visit_stmt(&u.v, s);

	IrFunc *fn = arena_alloc(ir_arena, sizeof *fn);
	memset(fn, 0, sizeof *fn);
	fn->name = k->name = arena_printf(ir_arena, "%s_k%d", S->f->name, S->gf->nk);
	fn->kernel = S->f->kernel;
	fn->params = u.vars;
	fn->nparams = u.nvars;
	fn->args = u.bufs;
	fn->nargs = u.nbufs;
	fn->body = s;
	k->fn = fn;
	*ARENA_PUSH(ir_arena, S->gf->k, S->gf->nk, S->gf->capk) = k;
	IrExpr *idx = ir_int(ir_i32, S->gf->nk - 1);
	return ir_evaluate(ir_call_intrinsic(GPU_LAUNCH, ir_i32, &idx, 1));
}

/* ---- the host function ------------------------------------------------ */

static IrStmt *host(Split *S, IrStmt *s);

/* The rule that defines the stage being split, if it has one. */
static Loc
stage_loc(Split *S)
{
	Kernel *k = S->f->kernel;
	for (int i = 0; k && S->stage && i < k->ntensors; i++)
		if (!strcmp(k->tensors[i]->name, S->stage) && k->tensors[i]->rule)
			return k->tensors[i]->rule->loc;
	return loc_none;
}

/* Whether an error at loc was reported already (partitioning copies a
 * loop: its error once). */
static bool
reported(Split *S, Loc loc)
{
	for (int i = 0; i < S->nseen; i++)
		if (S->seen[i].file == loc.file && S->seen[i].begin == loc.begin)
			return true;
	*ARENA_PUSH(ir_arena, S->seen, S->nseen, S->capseen) = loc;
	return false;
}

/* The first source location in s (a store's rule), for a loop that has none. */
static Loc
first_loc(IrStmt *s)
{
	if (!s)
		return loc_none;
	if (s->loc.file)
		return s->loc;
	switch (s->kind) {
	case IS_FOR: return first_loc(s->loop.body);
	case IS_LET: return first_loc(s->let.body);
	case IS_ALLOCATE: return first_loc(s->alloc.body);
	case IS_PRODUCE: return first_loc(s->produce.body);
	case IS_IF: {
		Loc l = first_loc(s->ifs.then_s);
		return l.file ? l : first_loc(s->ifs.else_s);
	}
	case IS_BLOCK:
		for (int i = 0; i < s->block.n; i++) {
			Loc l = first_loc(s->block.stmts[i]);
			if (l.file)
				return l;
		}
		return loc_none;
	default:
		return loc_none;
	}
}

/* Whether the stage named name is a scalar (a 0-d tensor). */
static bool
scalar_stage(Split *S, const char *name)
{
	Kernel *k = S->f->kernel;
	for (int i = 0; k && name && i < k->ntensors; i++)
		if (!strcmp(k->tensors[i]->name, name))
			return k->tensors[i]->ndims == 0;
	return false;
}

static void
not_bound(Split *S, IrStmt *s, const char *what)
{
	const char *st = S->stage ? S->stage : "a stage";
	Loc at = first_loc(s);
	if (!at.file)
		at = stage_loc(S);
	at = loc_or(at, S->f);
	S->ok = false;
	if (reported(S, at))
		return;
	diag_error(at, "%s of '%s' is not inside a loop bound to GPU blocks: "
	    "on the cuda target every stage runs in a kernel", what, st);
	if (scalar_stage(S, S->stage)) {
		diag_note(at, "'%s' is a scalar: split its reduction and rfactor the inner part "
		    "onto threads (%s.split(AXIS, 256) -> (ko, ki); %s.rfactor(ki) -> %s_rf; "
		    "%s_rf.bind(ki, threadIdx.x)); each part then runs as one block", st, st, st,
		    st, st);
		return;
	}
	diag_note(at, "bind its outer loop to the blocks (%s.bind(AXIS, "
	    "blockIdx.x) and an inner one to threadIdx.x, or %s.gpu_tile(...)), or compute it "
	    "at a loop of a stage that is bound (compute_at)", st, st);
}

/* The iterations of s's loops, if every extent is a constant (-1 if not;
 * saturates at INT32_MAX). */
static int64_t
const_trips(IrStmt *s)
{
	if (!s)
		return 1;
	int64_t c, t;
	switch (s->kind) {
	case IS_FOR:
		if (!ir_is_const(s->loop.extent, &c))
			return -1;
		t = const_trips(s->loop.body);
		return t < 0 ? -1 : c > 0 && t > INT32_MAX / c ? INT32_MAX : c * t;
	case IS_LET: return const_trips(s->let.body);
	case IS_ALLOCATE: return const_trips(s->alloc.body);
	case IS_PRODUCE: return const_trips(s->produce.body);
	case IS_IF: {
		int64_t a = const_trips(s->ifs.then_s), b = const_trips(s->ifs.else_s);
		return a < 0 || b < 0 ? -1 : a > b ? a : b;
	}
	case IS_BLOCK: {
		int64_t sum = 0;
		for (int i = 0; i < s->block.n; i++) {
			t = const_trips(s->block.stmts[i]);
			if (t < 0)
				return -1;
			sum = sum + t > INT32_MAX ? INT32_MAX : sum + t;
		}
		return sum;
	}
	default:
		return 1;
	}
}

/* Whether produce s, which no block loop is in, runs as a grid of one
 * block (txc-schedule.7, GPU schedules):
 *  - when it has loops bound to threads: they are then all the
 *    parallelism its schedule asks for (TVM's rule, threads without
 *    blocks are one block), and its other loops are the block's;
 *  - when the stage is a scalar, which has no axis to bind to blocks, and
 *    its loops have constant extents of at most ONE_BLOCK_TRIPS
 *    iterations in all: one thread combines an rfactor's partial results.
 *    A scalar's reduction over a size stays an error (one thread would
 *    run all of it): split it and rfactor the inner part onto threads. */
#define ONE_BLOCK_TRIPS 4096
static bool
one_block(Split *S, IrStmt *s)
{
	if (find_loop(s->produce.body, FOR_GPU_BLOCK) || find_loop(s->produce.body, FOR_PARALLEL))
		return false;
	if (find_loop(s->produce.body, FOR_GPU_THREAD))
		return true;
	int64_t t = const_trips(s->produce.body);
	return scalar_stage(S, s->produce.name) && t >= 0 && t <= ONE_BLOCK_TRIPS;
}

static IrStmt *
host_for(Split *S, IrStmt *s)
{
	switch (s->loop.fk) {
	case FOR_GPU_BLOCK:
		return outline(S, s);
	case FOR_GPU_THREAD:
	case FOR_VTHREAD:
		S->ok = false;
		if (reported(S, loc_or(s->loc, S->f)))
			return s;
		diag_error(loc_or(s->loc, S->f), "loop '%s' is bound to %s but no loop around it "
		    "is bound to blockIdx", s->loop.var->name,
		    s->loop.fk == FOR_VTHREAD ? "a virtual thread" : "threadIdx");
		diag_note(loc_or(s->loc, S->f), "threads live in blocks: bind an outer loop to "
		    "blockIdx.x (gpu_tile does both)");
		S->ok = false;
		return s;
	case FOR_PARALLEL:
		S->ok = false;
		if (reported(S, loc_or(s->loc, S->f)))
			return s;
		diag_error(loc_or(s->loc, S->f), "loop '%s' is parallel: the cuda target runs "
		    "loops in parallel by binding them to blockIdx and threadIdx",
		    s->loop.var->name);
		S->ok = false;
		return s;
	default:
		break;
	}
	IrStmt *t = find_loop(s->loop.body, FOR_GPU_THREAD);
	if (t && !find_loop(s->loop.body, FOR_GPU_BLOCK)) {
		host_for(S, t);     /* the thread loop's own error says more */
		return s;
	}
	if (!find_loop(s->loop.body, FOR_GPU_BLOCK)) {
		not_bound(S, s, arena_printf(ir_arena, "loop '%s'", s->loop.var->name));
		return s;
	}
	/* a host loop around launches */
	IrStmt *body = host(S, s->loop.body);
	return body == s->loop.body ? s : ir_for_like(s, s->loop.min, s->loop.extent, body);
}

static IrStmt *
host(Split *S, IrStmt *s)
{
	if (!s)
		return NULL;
	switch (s->kind) {
	case IS_FOR:
		return host_for(S, s);
	case IS_STORE:
		not_bound(S, s, arena_printf(ir_arena, "a store to '%s'", s->store.buf->name));
		return s;
	case IS_EVALUATE:
		if (s->eval.value->kind == IR_CALL && s->eval.value->call.ck == CALL_INTRINSIC) {
			not_bound(S, s, arena_printf(ir_arena, "the intrinsic '%s'",
			    s->eval.value->call.name));
			return s;
		}
		return s;
	case IS_PRODUCE: {
		if (one_block(S, s)) {
			/* a grid of one block around the stage (the header's rule) */
			IrStmt *b = ir_for(ir_new_var("block", ir_i64), ir_i64c(0), ir_i64c(1),
			    FOR_GPU_BLOCK, s);
			b->loop.gpu_dim = 0;
			b->loc = s->loc;
			return outline(S, b);
		}
		const char *saved = S->stage;
		S->stage = s->produce.name;
		IrStmt *b = host(S, s->produce.body);
		S->stage = saved;
		return b == s->produce.body ? s : ir_produce(s->produce.name, s->produce.update, b);
	}
	case IS_ALLOCATE: {
		Buffer *b = s->alloc.buf;
		if (b->scope == SCOPE_FRAGMENT) {
			diag_error(s->loc.file ? s->loc : b->scope_loc, "fragment '%s' is computed outside "
			    "the kernel's loops; %s", b->name, gpu_fragment_where(s->alloc.body));
			S->ok = false;
		}
		/* a stage computed at root lives in device memory between kernels */
		b->scope = SCOPE_GLOBAL;
		IrStmt *body = host(S, s->alloc.body);
		return body == s->alloc.body ? s : ir_allocate(b, body);
	}
	case IS_LET: {
		IrStmt *body = host(S, s->let.body);
		return body == s->let.body ? s : ir_let_stmt(s->let.var, s->let.value, body);
	}
	case IS_IF: {
		IrStmt *t = host(S, s->ifs.then_s), *e = host(S, s->ifs.else_s);
		return t == s->ifs.then_s && e == s->ifs.else_s ? s : ir_if(s->ifs.cond, t, e);
	}
	case IS_BLOCK: {
		IrStmt **v = arena_alloc(ir_arena, (s->block.n + 1) * sizeof *v);
		bool changed = false;
		for (int i = 0; i < s->block.n; i++) {
			v[i] = host(S, s->block.stmts[i]);
			changed |= v[i] != s->block.stmts[i];
		}
		return changed ? ir_block(v, s->block.n) : s;
	}
	default:
		return s;
	}
}

GpuFunc *
gpu_split(IrFunc *f)
{
	Split S = { f, NULL, NULL, true, NULL, 0, 0 };
	S.gf = arena_alloc(ir_arena, sizeof *S.gf);
	memset(S.gf, 0, sizeof *S.gf);
	IrStmt *body = host(&S, f->body);
	if (!S.ok)
		return NULL;
	IrFunc *h = arena_alloc(ir_arena, sizeof *h);
	*h = *f;
	h->body = body;
	S.gf->host = h;
	return S.gf;
}

GpuFunc **
gpu_lower(IrFunc **funcs, int n)
{
	GpuFunc **out = arena_alloc(ir_arena, (n + 1) * sizeof *out);
	bool ok = true;
	for (int i = 0; i < n; i++) {
		out[i] = gpu_split(funcs[i]);
		if (!out[i]) {
			ok = false;
			continue;
		}
		for (int j = 0; j < out[i]->nk; j++)
			if (!gpu_spmd(out[i]->k[j]) || !gpu_fragment(out[i]->k[j]) ||
			    !gpu_wgmma(out[i]->k[j]) ||
			    !gpu_swizzle(out[i]->k[j]) || !gpu_tma(out[i]->k[j]) ||
			    !gpu_shared(out[i]->k[j]))
				ok = false;
			else
				gpu_index32(out[i]->k[j]);
	}
	return ok ? out : NULL;
}
