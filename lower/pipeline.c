/* pipeline.c: the lowering passes, in order (Halide's Lower.cpp).
 *
 *   stage         kernel tensors to stages with IR definitions   stage.c
 *   sched         schedule primitives, with legality checks      sched.c
 *   inline        compute levels resolved, inline stages folded  sched.c
 *                 and scans' loops checked, groups placed          scan.c
 *                 and update definitions' loops checked            update.c
 *                 and the loops of ranges that depend on pure axes   reddom.c
 *   bounds_infer  regions of every stage, accesses proved        bounds_infer.c
 *                 and compute_with groups' shared loops checked   compute_with.c
 *   lower         loop nests from the stages                     lower.c
 *   simplify      folding, guards proved true removed            simplify.c
 *   (--print-loops stops here: loops with their kinds)
 *   tensorize     intrinsics replace the nests they match        tensorize.c (+ _reset.c)
 *   flatten       multi-dimensional accesses to flat offsets     flatten.c
 *   simplify      again, on the offsets                          simplify.c
 *   sizecheck     entry checks that no size arithmetic overflows  sizecheck.c
 *   partition     guarded loops split: prologue, steady, epilogue  partition.c
 *   simplify      the steady states' bounds folded               simplify.c
 *   vthread       virtual-thread loops moved inside the thread loops  vthread.c
 *   unroll        unrolled loops expanded                        unroll.c
 *   vectorize     vectorized loops to vector code                vectorize.c
 *   simplify      the vector code folded                         simplify.c
 *   double_buffer stages marked double_buffer: two halves, filled one
 *                 iteration ahead                 double_buffer.c
 *   hoist         invariant divisions by run-time values into lets  hoist.c
 *                 (CPU code only)
 *
 * Each IR pass runs through run_pass, which times it (TXC_TIME_PASSES=1)
 * and prints the IR after it when asked (--dump-after=PASS or all); the
 * stage passes print the stages (stagedump.c).  pass_names is the one
 * list of names --dump-after accepts (txc(1) lists them too).
 * --trace-schedule lowers with the first n primitives, n = 0 .. all, and
 * prints each loop nest under a line naming the primitive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lower/lower.h"

/* The passes above, in order: the names --dump-after takes. */
static const char *const pass_names[] = {
	"stage", "sched", "inline", "bounds_infer", "lower", "simplify", "tensorize",
	"flatten", "sizecheck", "partition", "vthread", "unroll", "vectorize", "double_buffer", "hoist", NULL,
};

const char *const *
lower_pass_names(void)
{
	return pass_names;
}

bool
lower_pass_known(const char *name)
{
	if (!strcmp(name, "all"))
		return true;
	for (int i = 0; pass_names[i]; i++)
		if (!strcmp(name, pass_names[i]))
			return true;
	return false;
}

typedef struct {
	const LowerOptions *opt;
	bool stopped;
} Run;

static double
now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

static void
timed(Run *r, const char *name, double t0)
{
	if (r->opt && r->opt->time_passes)
		fprintf(stderr, "txc: pass %-13s %8.3f ms\n", name, now_ms() - t0);
}

/* 1: --dump-after names this pass (print always), 2: 'all' (print when
 * the pass changed something), 0: not asked. */
static int
wants(const LowerOptions *opt, const char *name)
{
	if (!opt || !opt->dump_after)
		return 0;
	return !strcmp(opt->dump_after, name) ? 1 : !strcmp(opt->dump_after, "all") ? 2 : 0;
}

static void
dump_stages(const LowerOptions *opt, const char *name, Lower *L)
{
	if (!wants(opt, name))
		return;
	FILE *fp = opt->dump ? opt->dump : stderr;
	fprintf(fp, "// after %s\n", name);
	stagedump_print(fp, L);
}

static void
dump_ir(const LowerOptions *opt, const char *name, IrStmt *in, IrStmt *out)
{
	int w = wants(opt, name);
	if (!out || !w || (w == 2 && out == in))
		return;
	FILE *fp = opt->dump ? opt->dump : stderr;
	fprintf(fp, "// after %s%s\n", name, out == in ? " (unchanged)" : "");
	ir_print_stmt(fp, out, 0);
}

static IrStmt *
run_pass(Run *r, const char *name, IrStmt *(*fn)(IrStmt *), IrStmt *s)
{
	if (r->stopped || !s || !fn)
		return s;
	double t0 = now_ms();
	IrStmt *out = fn(s);
	timed(r, name, t0);
	dump_ir(r->opt, name, s, out);
	if (r->opt && r->opt->stop_after && !strcmp(r->opt->stop_after, name))
		r->stopped = true;
	return out;
}

static int
abi_cmp(const void *a, const void *b)
{
	return (*(Buffer *const *)a)->abi_index - (*(Buffer *const *)b)->abi_index;
}

/* One nest of a specialized schedule (lower_specialized). */
typedef struct {
	const Lower *like;    /* in: the general nest's (for a specialization) */
	int64_t *floor;       /* in: per parameter, the least value of a size here */
	Lower *L;             /* out */
} Part;

/* The kernel lowered with the first nprims primitives of sch.  With a
 * part, the size checks are left out (the caller puts them first). */
static IrFunc *
lower_prefix(Program *p, Kernel *k, const LowerOptions *opt, Schedule *sch, int nprims,
    Part *part)
{
	Run r = { opt, false };
	double t0 = now_ms();
	Lower *L = stage_build(p, k, opt, part ? part->like : NULL);
	if (part) {
		L->first_check = L->nbase_checks;
		part->L = L;
		for (int i = 0; part->floor && i < k->nparams; i++)
			if (part->floor[i] > 0)
				L->ranges = lin_push(L->ranges, L->params[i], ir_i64c(part->floor[i]),
				    NULL, false);
	}
	timed(&r, "stage", t0);
	dump_stages(opt, "stage", L);
	t0 = now_ms();
	/* after a failed primitive the later passes still run, as far as the
	 * schedule's state allows, so one run reports every error */
	bool ok = sched_apply(L, sch, nprims);
	timed(&r, "sched", t0);
	dump_stages(opt, "sched", L);
	t0 = now_ms();
	if (!sched_finish(L))
		return NULL;
	if (!scan_schedule(L) || !reddom_check(L) || !update_schedule(L))
		return NULL;
	timed(&r, "inline", t0);
	dump_stages(opt, "inline", L);
	t0 = now_ms();
	ok &= bounds_infer_stages(L);
	if (!L->regions_ok)
		return NULL;
	if (!compute_with_check(L))
		return NULL;
	sliding_window(L);
	timed(&r, "bounds_infer", t0);
	dump_stages(opt, "bounds_infer", L);
	t0 = now_ms();
	IrStmt *body = lower_stages(L);
	timed(&r, "lower", t0);
	if (!body || !ok)
		return NULL;
	body = storage_fold(L, body);
	dump_ir(opt, "lower", NULL, body);
	r.stopped = opt && opt->stop_after && !strcmp(opt->stop_after, "lower");
	body = run_pass(&r, "simplify", simplify_stmt, body);
	if (body) {   /* tensorize.c: intrinsics replace nests (after --print-loops too) */
		IrStmt *in = body;
		if (L->ntz)
			body = tensorize_stmt(L, body);
		if (!body)   /* a nest that does not match (diagnosed) */
			return NULL;
		dump_ir(opt, "tensorize", in, body);
	}
	body = run_pass(&r, "flatten", opt && opt->target && !strcmp(opt->target, "cuda") ?
	    flatten_buffers_padded : flatten_buffers, body);
	body = run_pass(&r, "simplify", simplify_stmt, body);
	IrStmt *szc = NULL;
	if (body && !r.stopped) {   /* sizecheck.c: needs the kernel, as tensorize does */
		double ts = now_ms();
		szc = sizecheck_checks(L, body);
		timed(&r, "sizecheck", ts);
		dump_ir(opt, "sizecheck", NULL, sizecheck_insert(body, szc));
		r.stopped = opt && opt->stop_after && !strcmp(opt->stop_after, "sizecheck");
		/* kept aside until the end: the later passes' simplifier must not
		 * rewrite them (its constants wrap: INT64_MAX - (x - 1) folds to
		 * -x - INT64_MIN) */
		if (r.stopped) {
			body = sizecheck_insert(body, szc);
			szc = NULL;
		}
	}
	/* on VTA a pad stage's condition is the DMA's padding: no partition */
	if (!opt || !opt->target || strcmp(opt->target, "vta"))
		body = run_pass(&r, "partition", partition_loops, body);
	body = run_pass(&r, "simplify", simplify_stmt, body);
	/* VTA's virtual threads stay loops: target/vta interleaves them */
	if (!opt || !opt->target || strcmp(opt->target, "vta"))
		body = run_pass(&r, "vthread", vthread_inject, body);
	body = run_pass(&r, "unroll", unroll_loops, body);
	/* a GPU kernel's vectorized loops stay loops in each thread (no vector
	 * loads on the cuda target yet) */
	if (!opt || !opt->target || (strcmp(opt->target, "cuda") && strcmp(opt->target, "vta")))
		body = run_pass(&r, "vectorize", vectorize_loops, body);
	body = run_pass(&r, "simplify", simplify_stmt, body);
	body = run_pass(&r, "double_buffer", double_buffer_stmt, body);
	if (!body && !r.stopped)
		return NULL;
	/* CPU code only: a GPU kernel's loops are its threads, and the VTA
	 * backend reads its nests' index expressions as they are */
	if (!opt || !opt->target || !strcmp(opt->target, "cpu"))
		body = run_pass(&r, "hoist", hoist_invariants, body);

	if (body)
		body = sizecheck_insert(body, szc);
	IrFunc *f = arena_alloc(ir_arena, sizeof *f);
	f->name = k->name;
	f->kernel = k;
	f->prog = p;
	f->params = L->params;
	f->nparams = k->nparams;
	int cap = 0;
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->buf->abi_index >= 0)
			*ARENA_PUSH(ir_arena, f->args, f->nargs, cap) = L->stages[i]->buf;
	cap = 0;
	for (int i = 0; i < L->nstages; i++)
		if (L->stages[i]->input && L->stages[i]->t && L->stages[i]->t->is_const)
			*ARENA_PUSH(ir_arena, f->consts, f->nconsts, cap) = L->stages[i]->buf;
	if (f->nargs > 1)
		qsort(f->args, f->nargs, sizeof *f->args, abi_cmp);
	f->body = body;
	return f;
}

Schedule *
lower_find_schedule(Program *p, Kernel *k, const LowerOptions *opt)
{
	if (!p || (opt && opt->no_schedule))
		return NULL;
	const char *target = opt && opt->target ? opt->target : "cpu";
	const char *name = opt ? opt->schedule : NULL;
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (!s || (s->k ? s->k != k : strcmp(s->kernel, k->name)) || !s->target ||
		    strcmp(s->target, target))
			continue;
		if (name ? s->name && !strcmp(s->name, name) : !s->name)
			return s;
	}
	/* no unnamed schedule: the generated one, when asked for */
	for (int i = 0; !name && opt && opt->auto_default && i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (s && s->generated && (s->k ? s->k == k : !strcmp(s->kernel, k->name)) &&
		    s->target && !strcmp(s->target, target))
			return s;
	}
	if (name) {
		char *list = "";
		for (int i = 0; i < p->nschedules; i++) {
			Schedule *s = p->schedules[i];
			if (s && (s->k ? s->k == k : !strcmp(s->kernel, k->name)) && s->target)
				list = arena_printf(ir_arena ? ir_arena : perm, "%s%s%s (%s)", list,
				    *list ? ", " : "", s->name ? s->name : "the unnamed one", s->target);
		}
		if (*list)
			diag_error(k->name_loc, "kernel '%s' has no schedule '%s' for %s; its schedules: %s",
			    k->name, name, target, list);
		else
			diag_error(k->name_loc, "kernel '%s' has no schedule '%s': it has no schedules",
			    k->name, name);
	}
	return NULL;
}

/* ---- specialize ---------------------------------------------------------
 * A schedule with `specialize (c) { body }` statements is several
 * schedules: each specialization's is the primitives before it plus its
 * body; the general one is every primitive outside the bodies.  Each is
 * lowered on its own (the general one first; the others share its
 * parameters and arguments) and the entry point tests the conditions in
 * source order after the size checks: the first that holds picks its
 * nest, none the general one.  A condition that folds to a constant (sizes
 * fixed with -D) picks at compile time, and the nests it rules out are
 * not built. */

static Schedule *
general_schedule(Schedule *s)
{
	int nspec = 0;
	for (int i = 0; s && i < s->nprims; i++)
		nspec += s->prims[i].cond != NULL;
	if (!nspec)
		return s;
	Schedule *g = arena_alloc(ir_arena, sizeof *g);
	*g = *s;
	g->prims = arena_alloc(ir_arena, (s->nprims + 1) * sizeof *g->prims);
	g->nprims = 0;
	for (int i = 0; i < s->nprims; i++)
		if (!s->prims[i].cond)
			g->prims[g->nprims++] = s->prims[i];
	return g;
}

/* The schedule of the specialization at s->prims[at]. */
static Schedule *
special_schedule(Schedule *s, int at)
{
	SchedPrim *sp = &s->prims[at];
	Schedule *v = arena_alloc(ir_arena, sizeof *v);
	*v = *s;
	v->prims = arena_alloc(ir_arena, (at + sp->nbody + 1) * sizeof *v->prims);
	v->nprims = 0;
	for (int i = 0; i < at; i++)
		if (!s->prims[i].cond)
			v->prims[v->nprims++] = s->prims[i];
	for (int i = 0; i < sp->nbody; i++)
		v->prims[v->nprims++] = sp->body[i];
	return v;
}

static bool
const_bool(IrExpr *c, bool *v)
{
	int64_t x;
	if (!c || c->kind != IR_INT || !ir_is_const(c, &x))
		return false;
	*v = x != 0;
	return true;
}

/* c as `SIZE op constant` (a constant on the left moves to the right):
 * the size parameter, or NULL when c is not such a comparison. */
static Param *
size_comparison(Expr *c, Op *op, int64_t *v)
{
	static const Op flip[OP_COUNT] = { [OP_EQ] = OP_EQ, [OP_NE] = OP_NE,
		[OP_LT] = OP_GT, [OP_LE] = OP_GE, [OP_GT] = OP_LT, [OP_GE] = OP_LE };
	if (!c || c->kind != EXPR_BINARY || c->bin.op < OP_EQ || c->bin.op > OP_GE)
		return NULL;
	Expr *n = c->bin.a, *k = c->bin.b;
	*op = c->bin.op;
	if (n->kind == EXPR_INT) {
		n = c->bin.b;
		k = c->bin.a;
		*op = flip[*op];
	}
	if (n->kind != EXPR_NAME || n->id.ref != REF_SIZE || k->kind != EXPR_INT)
		return NULL;
	*v = k->ival;
	return n->id.param;
}

/* A specialization on `SIZE == constant` (alone or in a conjunction) is
 * lowered with that size fixed, as -D fixes one: its nest folds the
 * constant (the body is only reached when it holds). */
static void
fixed_sizes(Expr *c, LowerOptions *o, int cap)
{
	if (c && c->kind == EXPR_BINARY && c->bin.op == OP_AND) {
		fixed_sizes(c->bin.a, o, cap);
		fixed_sizes(c->bin.b, o, cap);
		return;
	}
	Op op;
	int64_t v;
	Param *pa = size_comparison(c, &op, &v);
	if (!pa || op != OP_EQ || o->ndefs >= cap)
		return;
	for (int i = 0; i < o->ndefs; i++)
		if (intern_cstr(o->def_names[i]) == pa->name)
			return;
	o->def_names[o->ndefs] = pa->name;
	o->def_values[o->ndefs++] = v;
}

static LowerOptions *
special_options(const LowerOptions *opt, Expr *cond)
{
	LowerOptions *o = arena_alloc(ir_arena, sizeof *o);
	if (opt)
		*o = *opt;
	int cap = o->ndefs + 16;
	o->def_names = arena_alloc(ir_arena, cap * sizeof *o->def_names);
	o->def_values = arena_alloc(ir_arena, cap * sizeof *o->def_values);
	for (int i = 0; opt && i < opt->ndefs; i++) {
		o->def_names[i] = opt->def_names[i];
		o->def_values[i] = opt->def_values[i];
	}
	fixed_sizes(cond, o, cap);
	o->special = stage_loc_text(cond->loc);
	return o;
}

/* The least values of the sizes where c holds (negate: where it does not),
 * from its comparisons of a size with a constant: M >= 6 in a
 * specialization's condition, or M < 6 || ... in an earlier one's for the
 * nests after it.  Lowering proves more with them (tensorize's test for
 * an empty reduction goes when K >= 1). */
static void
size_floors(Expr *c, bool negate, int64_t *lo)
{
	if (!c)
		return;
	if (c->kind == EXPR_UNARY && c->bin.op == OP_NOT) {
		size_floors(c->bin.a, !negate, lo);
		return;
	}
	if (c->kind == EXPR_BINARY && c->bin.op == (negate ? OP_OR : OP_AND)) {
		size_floors(c->bin.a, negate, lo);
		size_floors(c->bin.b, negate, lo);
		return;
	}
	static const Op neg[OP_COUNT] = { [OP_EQ] = OP_NE, [OP_NE] = OP_EQ,
		[OP_LT] = OP_GE, [OP_LE] = OP_GT, [OP_GT] = OP_LE, [OP_GE] = OP_LT };
	Op op;
	int64_t v;
	Param *pa = size_comparison(c, &op, &v);
	if (!pa)
		return;
	if (negate)
		op = neg[op];
	int64_t f = op == OP_GE || op == OP_EQ ? v : op == OP_GT && v < INT64_MAX ? v + 1 : 0;
	if (f > lo[pa->index])
		lo[pa->index] = f;
}

/* The general nest (schedule g, s without its specializations) and the
 * specializations of s, as one body. */
static IrFunc *
lower_specialized(Program *p, Kernel *k, const LowerOptions *opt, Schedule *s, Schedule *g)
{
	if (g == s)
		return lower_prefix(p, k, opt, s, s ? s->nprims : 0, NULL);
	/* each nest is lowered knowing that the conditions before it failed */
	int64_t *floor = arena_alloc(ir_arena, (k->nparams + 1) * sizeof *floor);
	for (int i = 0; i < s->nprims; i++)
		size_floors(s->prims[i].cond, true, floor);
	Part gp = { .floor = floor };
	IrFunc *f = lower_prefix(p, k, opt, g, g->nprims, &gp);
	/* after an error in one nest the others are still lowered, so that one
	 * run reports them all */
	IrStmt *rest = f ? f->body : NULL;
	bool ok = f != NULL;
	for (int i = s->nprims - 1; i >= 0; i--) {
		if (!s->prims[i].cond)
			continue;
		Expr *cond = s->prims[i].cond;
		IrExpr *c = simplify_expr(stage_param_expr(gp.L, cond), NULL);
		bool v;
		if (const_bool(c, &v) && !v)
			continue;     /* never: not built */
		Part sp = { .like = gp.L };
		sp.floor = arena_alloc(ir_arena, (k->nparams + 1) * sizeof *sp.floor);
		for (int j = 0; j < i; j++)
			size_floors(s->prims[j].cond, true, sp.floor);
		size_floors(cond, false, sp.floor);
		IrFunc *h = lower_prefix(p, k, special_options(opt, cond), special_schedule(s, i),
		    INT32_MAX, &sp);
		if (!h)
			ok = false;
		else
			rest = const_bool(c, &v) ? h->body : ir_if(c, h->body, rest);
	}
	if (!ok)
		return NULL;
	IrStmt *checks = NULL;
	for (int i = 0; i < gp.L->nbase_checks; i++)
		checks = ir_seq(checks, gp.L->checks[i]);
	checks = checks ? simplify_stmt(checks) : NULL;
	/* the sign and -D checks come first (ir_size_checks); each nest's
	 * overflow checks stay in its branch: they assume its size floors
	 * (M >= 6 where a specialization takes M < 6) */
	IrStmt **cs = checks && checks->kind == IS_BLOCK ? checks->block.stmts : &checks;
	for (int i = 0, n = !checks ? 0 : checks->kind == IS_BLOCK ? checks->block.n : 1; i < n; i++)
		if (cs[i]->kind == IS_ASSERT)
			cs[i]->assrt.sizes = true;
	f->body = ir_seq(checks, rest);
	return f;
}

IrFunc *
lower_kernel(Program *p, Kernel *k, const LowerOptions *opt)
{
	if (!ir_arena)
		ir_arena = arena_new();
	int before = diag_errors();
	Schedule *s = lower_find_schedule(p, k, opt);
	if (diag_errors() != before)
		return NULL;
	if (s && s->generated && !(opt && opt->auto_strict)) {
		/* a generated schedule that does not lower: less the primitives
		 * of the stage its first error is in, a few times
		 * (sched_prune.c), then the naive nest, as if there were none
		 * (the generator's rules keep to what lowers; TXC_AUTO_STRICT=1
		 * reports where one does not) */
		LowerOptions o = *opt;
		o.trace = NULL;
		o.dump_after = NULL;
		IrFunc *f = NULL;
		for (int tries = 0; s && tries < 8; tries++) {
			diag_mute(true);
			f = lower_specialized(p, k, &o, s, s);
			Loc at = diag_first_muted();
			diag_mute(false);
			if (f)
				break;
			s = lower_prune_stage(k, s, at);
		}
		if (!f) {
			o = *opt;
			o.no_schedule = true;
			return lower_kernel(p, k, &o);
		}
		if (!opt->trace && !opt->dump_after)
			return f;
	}
	Schedule *g = general_schedule(s);
	IrFunc *f = lower_specialized(p, k, opt, s, g);
	s = g;     /* --trace-schedule traces the general schedule */
	int n = s ? s->nprims : 0;
	if (!f || !opt || !opt->trace)
		return f;
	/* --trace-schedule: the nest after each primitive */
	LowerOptions o = *opt;
	o.trace = NULL;
	o.dump_after = NULL;
	o.time_passes = false;
	if (!o.stop_after)
		o.stop_after = "simplify";
	for (int i = 0; i <= n; i++) {
		if (i == 0)
			fprintf(opt->trace, "// %s: as written, no primitives\n", k->name);
		else
			fprintf(opt->trace, "// %s: after %d/%d: %s\n", k->name, i, n,
			    stage_loc_text(s->prims[i - 1].loc));
		FILE *null = fopen("/dev/null", "w");
		int errs = diag_errors();
		if (null)
			diag_set_stream(null);
		IrFunc *g = lower_prefix(p, k, &o, s, i, NULL);
		diag_set_stream(NULL);
		if (null)
			fclose(null);
		if (g)
			ir_print_func(opt->trace, g);
		else
			fprintf(opt->trace, "// (these primitives alone do not make a legal schedule)\n");
		if (diag_errors() != errs) {   /* forget what the prefix reported */
			diag_reset();
		}
		fputc('\n', opt->trace);
	}
	return f;
}

/* ---- renaming ----------------------------------------------------------- */

typedef struct {
	IrMutator m;
	const char *from, *to;   /* "kernel: ", "prefixed: " */
} Rename;

static IrStmt *
rename_assert(IrMutator *m, IrStmt *s)
{
	Rename *r = (Rename *)m;
	size_t n = strlen(r->from);
	if (!s->assrt.msg || strncmp(s->assrt.msg, r->from, n))
		return s;
	IrStmt *a = ir_assert(s->assrt.cond, s->assrt.code,
	    arena_printf(ir_arena, "%s%s", r->to, s->assrt.msg + n));
	a->assrt.sizes = s->assrt.sizes;
	a->loc = s->loc;
	return a;
}

void
lower_rename(IrFunc *f, const char *name)
{
	Rename r = { .m.stmt[IS_ASSERT] = rename_assert,
	    .from = arena_printf(ir_arena, "%s: ", f->name),
	    .to = arena_printf(ir_arena, "%s: ", name) };
	f->body = ir_mutate_stmt(&r.m, f->body);
	f->name = name;
}
