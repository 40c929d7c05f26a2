/* layouts.c: layout declarations and the rewrite of calls they ask for
 * (tx.5 LAYOUTS; TVM's AlterOpLayout, GRAPH.md).
 *
 *     layout conv2d_nchw for cpu {
 *       xb = nchw_to_nchw16c(data);  ...  y = nchw16c_to_nchw(yb, C = K);
 *     }
 *
 * says that on the cpu a call of conv2d_nchw is better computed as the
 * calls of the body, which name the kernel's own parameters and tensors.
 * This file checks each declaration once (its body expanded as the body
 * of the kernel, by calls.c, so shapes and sizes are checked for all
 * sizes), and, while calls.c expands a call of the kernel in a kernel
 * compiled for that target, gives calls.c the body's calls in the
 * caller's names (locals become RESULT__LOCAL), unless the caller has a
 * hand-written schedule for the target that names a stage the call has
 * in the kernel's own layout (RESULT__S, S not an output: it was written
 * for those), the rewrite is off (txc --no-layout) or the call is inside
 * a rewrite of the same kernel.
 *
 * Transforms cancel: a body statement `local = T(input)` is dropped, and
 * local read as the blocked value v, where the input is the result r of
 * an earlier rewritten call of this kernel that wrote `r = B(v)` and the
 * declaration being applied itself writes its output with that same B
 * (the declaration's promise: T(B(v)) = v for the v its body computes
 * before B).  A rule of the caller element-wise in such an r (reading
 * it at its own axes only, 0 where r is 0) is computed on v instead,
 * and transformed back with B in turn, when B moves elements only.
 * Once the kernel is expanded, an r nothing reads any more (and no
 * output) is removed.  Transforms of the caller's constants are computed
 * at compile time (layoutfold.c).  --print-layout prints what was done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/sema.h"

static const char *target;      /* the compile target, or NULL: no rewrite */
static const char *compiling;   /* the compile target, even with the rewrite off */
static Kernel *checking;        /* the kernel whose declaration is being checked */

void
layouts_set_target(const char *t, bool on)
{
	compiling = t;
	target = on ? t : NULL;
}

/* Kernels holding a call of a kernel that declares a layout: their
 * expansion depends on the target. */
static Kernel **varies;
static int nvaries, capvaries;

bool
layouts_other_target(Kernel *k, const char *t)
{
	if (!compiling || !strcmp(t, compiling))
		return false;
	for (int i = 0; i < nvaries; i++)
		if (varies[i] == k)
			return true;
	return false;
}

/* Whether some declaration (any target) is for f. */
static bool
declared(Program *p, Kernel *f, int depth)
{
	for (int i = 0; p && depth < 64 && i < p->nlayouts; i++)
		if (p->layouts[i]->state == 2 && p->layouts[i]->k == f)
			return true;
	for (int i = 0; p && depth < 64 && i < p->nimports; i++)
		if (p->imports[i] && declared(p->imports[i]->prog, f, depth + 1))
			return true;
	return false;
}

/* ---- the log (--print-layout) -------------------------------------------- */

typedef struct {
	Kernel *k;
	const char *text;
} Note;
static Note *notes;
static int nnotes, capnotes;

static void
note(Kernel *k, const char *text)
{
	*ARENA_PUSH(perm, notes, nnotes, capnotes) = (Note){ k, text };
}

static const char *
call_text(const char **outs, int nouts, const char *callee, Expr **args, const char **keys,
    int nargs)
{
	const char *s = nouts == 1 ? outs[0] : "(";
	for (int i = 0; nouts != 1 && i < nouts; i++)
		s = arena_printf(perm, "%s%s%s", s, i ? ", " : "", outs[i]);
	s = arena_printf(perm, "%s%s = %s(", s, nouts == 1 ? "" : ")", callee);
	for (int i = 0; i < nargs; i++)
		s = arena_printf(perm, "%s%s%s%s%s", s, i ? ", " : "", keys && keys[i] ? keys[i] : "",
		    keys && keys[i] ? " = " : "", callexpr_text(args[i]));
	return arena_printf(perm, "%s)", s);
}

static int
line_of(Loc at)
{
	int line = 0, col = 0;
	source_linecol(at.file, at.begin, &line, &col);
	return line;
}

/* "conv2d.tx:52": the file without its folder, and the line. */
static const char *
where(Loc at)
{
	const SrcFile *f = source_get(at.file);
	const char *name = f && f->name ? f->name : "?";
	const char *slash = strrchr(name, '/');
	return arena_printf(perm, "%s:%d", slash ? slash + 1 : name, line_of(at));
}

void
layouts_print(FILE *fp, Kernel *k)
{
	int n = 0;
	for (int i = 0; i < nnotes; i++)
		n += notes[i].k == k;
	fprintf(fp, "layouts of %s for %s:%s\n", k->name, target ? target : "(none: --no-layout)",
	    n ? "" : " no call rewritten");
	for (int i = 0; i < nnotes; i++)
		if (notes[i].k == k)
			fprintf(fp, "%s\n", notes[i].text);
}

/* ---- the body's statements ------------------------------------------------ */

/* One statement of a body: a call (with several results or one). */
typedef struct {
	Loc loc, callee_loc;
	const char *callee;
	const char **outs; Loc *out_locs; int nouts;
	Expr **args; const char **keys; Loc *key_locs; int nargs;
} Stmt;

static bool
stmt_of(Program *p, KernelItem *it, Stmt *s)
{
	memset(s, 0, sizeof *s);
	if (it->call) {
		Call *c = it->call;
		*s = (Stmt){ c->loc, c->callee_loc, c->callee, c->outs, c->out_locs, c->nouts,
			c->args, c->keys, c->key_locs, c->nargs };
		return true;
	}
	Rule *r = it->rule;
	if (!r || r->update || r->init || r->tuple || r->naxes || !r->value ||
	    r->value->kind != EXPR_CALL || !r->value->call.name ||
	    (types_builtin(r->value->call.name) != BI_NONE && !sema_find_kernel(p,
	    r->value->call.name)) || borders_is_helper(r->value->call.name))
		return false;
	*s = (Stmt){ r->loc, r->value->call.name_loc, r->value->call.name, &r->name,
		&r->name_loc, 1, r->value->call.args, r->value->call.keys, r->value->call.key_locs,
		r->value->call.nargs };
	return true;
}

/* The tensor a positional argument names, or NULL. */
static const char *
arg_tensor(Expr *e)
{
	if (e->kind == EXPR_NAME)
		return e->id.name;
	if (e->kind == EXPR_ACCESS && e->call.nargs == 0)
		return e->call.name;
	return NULL;
}

/* A transform: a call of one result and one positional argument (a
 * tensor; named arguments give sizes). */
static const char *
transform_of(Stmt *s)
{
	int npos = 0;
	const char *t = NULL;
	for (int i = 0; i < s->nargs; i++)
		if (!s->keys || !s->keys[i]) {
			npos++;
			t = arg_tensor(s->args[i]);
		}
	return s->nouts == 1 && npos == 1 ? t : NULL;
}

/* ---- checking a declaration ------------------------------------------------ */

static Tensor *
tensor_of(Kernel *f, const char *n)
{
	for (int i = 0; i < f->nitems; i++)
		if (f->items[i].decl && f->items[i].decl->name == n)
			return f->items[i].decl;
	return NULL;
}

static void
check_one(Program *p, LayoutDecl *l)
{
	if (l->state)
		return;
	l->state = 3;
	static const char *const targets[] = { "cpu", "cuda", "vta" };
	bool known = false;
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
		known |= !strcmp(l->target, targets[i]);
	if (!known) {
		diag_error(l->target_loc, "unknown target '%s' in a layout declaration (cpu, cuda "
		    "or vta)", l->target);
		return;
	}
	Kernel *f = sema_find_kernel(p, l->kernel);
	if (!f) {
		diag_error(l->kernel_loc, "layout of unknown kernel '%s'", l->kernel);
		return;
	}
	l->k = f;
	bool ok = true;
	if (l->nitems == 0) {
		diag_error(l->loc, "the layout of '%s' for %s computes nothing: its body is the "
		    "calls that compute the kernel's outputs", f->name, l->target);
		return;
	}
	for (int i = 0; i < l->nitems; i++) {
		Stmt s;
		if (!stmt_of(p, &l->items[i], &s)) {
			Loc at = l->items[i].decl ? l->items[i].decl->loc : l->items[i].rule->loc;
			diag_error(at, "a layout body holds calls of kernels only ('r = f(...);'); "
			    "a declaration or a rule of its own belongs in a kernel, which the body "
			    "may call");
			ok = false;
		}
	}
	if (!ok)
		return;
	/* the kernel with this body: its parameters, inputs and outputs */
	Kernel *c = arena_alloc(perm, sizeof *c);
	*c = *f;
	c->items = NULL;
	c->nitems = 0;
	c->callees = NULL;
	c->ncallees = 0;
	c->calls_state = 0;
	c->calls_failed = false;
	int cap = 0;
	for (int i = 0; i < f->nitems; i++) {
		Tensor *t = f->items[i].decl;
		if (t && (t->role == ROLE_IN || t->role == ROLE_OUT) && !t->is_const)
			*ARENA_PUSH(perm, c->items, c->nitems, cap) = f->items[i];
	}
	for (int i = 0; i < l->nitems; i++)
		*ARENA_PUSH(perm, c->items, c->nitems, cap) = l->items[i];
	int before = diag_errors();
	Kernel *was = checking;
	checking = c;
	calls_expand_kernel(p, c);
	checking = was;
	if (c->calls_failed || diag_errors() != before)
		return;
	for (int i = 0; i < f->nitems; i++) {
		Tensor *t = f->items[i].decl;
		if (!t || t->role != ROLE_OUT)
			continue;
		bool set = false;
		for (int j = 0; j < c->nitems; j++)
			set |= c->items[j].rule && c->items[j].rule->name == t->name;
		if (!set) {
			diag_error(l->loc, "the layout of '%s' for %s does not compute its output '%s'",
			    f->name, l->target, t->name);
			diag_note(t->loc, "'%s' declared here", t->name);
			return;
		}
	}
	for (int i = 0; i < p->nlayouts; i++) {
		LayoutDecl *o = p->layouts[i];
		if (o != l && o->state == 2 && o->k == f && !strcmp(o->target, l->target)) {
			diag_error(l->loc, "a second layout of '%s' for %s", f->name, l->target);
			diag_note(o->loc, "the first one");
			return;
		}
	}
	l->check = c;
	l->state = 2;
}

void
layouts_check_program(Program *p)
{
	for (int i = 0; p && i < p->nimports; i++)
		if (p->imports[i])
			layouts_check_program(p->imports[i]->prog);
	for (int i = 0; p && i < p->nlayouts; i++)
		check_one(p, p->layouts[i]);
}

/* ---- finding the declaration for a call ------------------------------------ */

static LayoutDecl *
find(Program *p, Kernel *f, int depth)
{
	if (!p || depth > 64)
		return NULL;
	for (int i = 0; i < p->nlayouts; i++)
		if (p->layouts[i]->state == 2 && p->layouts[i]->k == f &&
		    !strcmp(p->layouts[i]->target, target))
			return p->layouts[i];
	for (int i = 0; i < p->nimports; i++) {
		LayoutDecl *l = p->imports[i] ? find(p->imports[i]->prog, f, depth + 1) : NULL;
		if (l)
			return l;
	}
	return NULL;
}

/* Whether n is r__S for S a stage of f other than its outputs: a stage
 * the call has in f's own layout only. */
static bool
of_call(const char *n, Kernel *f, const char *r)
{
	size_t len = strlen(r);
	if (!n || strncmp(n, r, len) || strncmp(n + len, "__", 2))
		return false;
	for (int i = 0; i < f->nitems; i++) {
		Rule *ru = f->items[i].rule;
		Tensor *t = ru ? tensor_of(f, ru->name) : NULL;
		if (ru && (!t || t->role == ROLE_TEMP) && !strcmp(n + len + 2, ru->name))
			return true;
	}
	return false;
}

/* A primitive of prims that names one of the call's stages. */
static SchedPrim *
names_call(SchedPrim *prims, int n, Kernel *f, const char *r)
{
	for (int i = 0; i < n; i++) {
		SchedPrim *sp = &prims[i];
		if (of_call(sp->stage, f, r))
			return sp;
		for (int j = 0; j < sp->nargs; j++)
			if (sp->args[j].kind == ARG_NAME && of_call(sp->args[j].str, f, r))
				return sp;
		SchedPrim *in = names_call(sp->body, sp->nbody, f, r);
		if (in)
			return in;
	}
	return NULL;
}

static SchedPrim *
schedule_naming(Program *p, Kernel *k, Kernel *f, const char *r, int depth)
{
	for (int i = 0; p && depth < 64 && i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (!s || s->generated || !s->target || strcmp(s->target, target) ||
		    s->kernel != k->name)
			continue;
		SchedPrim *sp = names_call(s->prims, s->nprims, f, r);
		if (sp)
			return sp;
	}
	for (int i = 0; p && depth < 64 && i < p->nimports; i++) {
		SchedPrim *sp = p->imports[i] ? schedule_naming(p->imports[i]->prog, k, f, r,
		    depth + 1) : NULL;
		if (sp)
			return sp;
	}
	return NULL;
}

/* The kernels whose declarations are being applied (their calls inside
 * are plain). */
static Kernel **active;
static int nactive, capactive;

void
layouts_push(Kernel *f)
{
	*ARENA_PUSH(perm, active, nactive, capactive) = f;
}

void
layouts_pop(void)
{
	nactive--;
}

/* ---- the rewrite ------------------------------------------------------------- */

/* A result r of a rewritten call written by transform B from v: a later
 * call's forward transform of r may read v instead. */
typedef struct {
	Kernel *k;
	const char *r, *B, *v;
	const char *text;     /* the statement, for the log */
	bool cancelled;       /* some forward transform read v instead */
	Call *call;           /* the call r = B(v, ...) */
} Back;
static Back *backs;
static int nbacks, capbacks;

typedef struct {
	LayoutSite *s;
	const char **from, **to; int n, cap;   /* body names -> caller names */
} Map;

static const char *
map_name(Map *m, const char *n)
{
	for (int i = 0; i < m->n; i++)
		if (m->from[i] == n)
			return m->to[i];
	return NULL;
}

static void
map_put(Map *m, const char *from, const char *to)
{
	int n = m->n, cap = m->cap;
	*ARENA_PUSH(perm, m->from, n, cap) = from;
	*ARENA_PUSH(perm, m->to, m->n, m->cap) = to;
}

/* A body expression in the caller's terms: tensors renamed, the kernel's
 * parameters replaced by the call's values for them. */
static Expr *
subst(Map *m, Expr *e)
{
	if (!e)
		return NULL;
	Kernel *f = m->s->f;
	if (e->kind == EXPR_NAME) {
		for (int i = 0; i < f->nparams; i++)
			if (f->params[i].name == e->id.name && m->s->psub[i]) {
				Expr *v = callexpr_dup(m->s->psub[i]);
				v->loc = e->loc;
				return v;
			}
		const char *t = map_name(m, e->id.name);
		if (t)
			return ast_name(e->loc, t);
		return callexpr_dup(e);
	}
	Expr *n = callexpr_dup(e);
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		if (e->kind == EXPR_ACCESS && map_name(m, e->call.name))
			n->call.name = map_name(m, e->call.name);
		for (int i = 0; i < e->call.nargs; i++)
			n->call.args[i] = subst(m, e->call.args[i]);
		return n;
	case EXPR_UNARY: case EXPR_BINARY:
		n->bin.a = subst(m, e->bin.a);
		n->bin.b = subst(m, e->bin.b);
		return n;
	default:
		return n;
	}
}

static Back *
back_of(Kernel *k, const char *r)
{
	for (int i = nbacks - 1; i >= 0; i--)
		if (backs[i].k == k && backs[i].r == r)
			return &backs[i];
	return NULL;
}

/* The transform l writes output o with (its callee), or NULL. */
static const char *
back_kernel(Program *p, LayoutDecl *l, const char *o, const char **v)
{
	for (int i = 0; i < l->nitems; i++) {
		Stmt s;
		if (stmt_of(p, &l->items[i], &s) && s.nouts == 1 && s.outs[0] == o &&
		    (*v = transform_of(&s)))
			return s.callee;
	}
	return NULL;
}

/* Whether k updates tensor n (tx.5 UPDATES) after its rule. */
static bool
updated(Kernel *k, const char *n)
{
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].rule && k->items[i].rule->update && k->items[i].rule->name == n)
			return true;
	return false;
}

/* The caller's constant named n, or NULL. */
static Tensor *
const_of(Kernel *k, const char *n)
{
	for (int i = 0; n && i < k->nitems; i++)
		if (k->items[i].decl && k->items[i].decl->name == n && k->items[i].decl->is_const)
			return k->items[i].decl;
	return NULL;
}

KernelItem *
layouts_rewrite(LayoutSite *s, int *nout)
{
	*nout = 0;
	if (s->k != checking && declared(s->p, s->f, 0))
		*ARENA_PUSH(perm, varies, nvaries, capvaries) = s->k;
	if (!target || s->k == checking)
		return NULL;
	for (int i = 0; i < nactive; i++)
		if (active[i] == s->f)
			return NULL;
	LayoutDecl *l = find(s->p, s->f, 0);
	if (!l)
		return NULL;
	Kernel *f = s->f, *k = s->k;
	const char *r = s->outs[0];
	const char *orig = call_text(s->outs, s->nouts, f->name, s->args, s->keys, s->nargs);
	SchedPrim *sp = schedule_naming(s->p, k, f, r, 0);
	if (sp) {
		note(k, arena_printf(perm, "  line %d: %s: kept: the schedule of %s for %s names its "
		    "stage %s (line %d)", line_of(s->at), orig, k->name, target, sp->stage,
		    line_of(sp->loc)));
		return NULL;
	}
	const char *log = arena_printf(perm, "  line %d: %s: the layout of %s for %s (%s):",
	    line_of(s->at), orig, f->name, target, where(l->loc));
	Map m = { .s = s };
	Tensor **in = NULL, **out = NULL;
	int nin = 0, capin = 0, no = 0, capo = 0;
	for (int i = 0; i < f->nitems; i++) {
		Tensor *t = f->items[i].decl;
		if (t && t->role == ROLE_IN && !t->is_const)
			*ARENA_PUSH(perm, in, nin, capin) = t;
		else if (t && t->role == ROLE_OUT)
			*ARENA_PUSH(perm, out, no, capo) = t;
	}
	for (int i = 0; i < nin; i++)
		map_put(&m, in[i]->name, s->ins[i]);
	for (int i = 0; i < no && i < s->nouts; i++)
		map_put(&m, out[i]->name, s->outs[i]);
	KernelItem *items = NULL;
	int n = 0, cap = 0;
	for (int i = 0; i < l->nitems; i++) {
		Stmt st;
		stmt_of(s->p, &l->items[i], &st);
		/* a forward transform of an input another rewrite wrote back */
		const char *x = transform_of(&st);
		Tensor *xin = x ? tensor_of(f, x) : NULL;
		Back *b = xin && xin->role == ROLE_IN ? back_of(k, map_name(&m, x)) : NULL;
		if (b && updated(k, b->r))
			b = NULL;   /* r changes after B wrote it: not B(v) any more */
		const char *v = NULL, *mine = NULL;
		for (int j = 0; b && !mine && j < no; j++)
			mine = back_kernel(s->p, l, out[j]->name, &v);
		if (b && mine && !strcmp(mine, b->B)) {
			const char *loc = intern_cstr(arena_printf(perm, "%s__%s", r, st.outs[0]));
			map_put(&m, st.outs[0], b->v);
			b->cancelled = true;
			log = arena_printf(perm, "%s\n    %s = %s(%s): cancelled with %s: reads %s", log,
			    loc, st.callee, b->r, b->B, b->v);
			continue;
		}
		/* a transform of a constant of the caller: computed now */
		Tensor *src = xin && xin->role == ROLE_IN ? const_of(k, map_name(&m, x)) : NULL;
		if (src && consts_load(src)) {
			const char *to = intern_cstr(arena_printf(perm, "%s__%s", r, st.outs[0]));
			Tensor *t = layoutfold_const(sema_find_kernel(s->p, st.callee), src, to, s->at);
			if (t) {
				map_put(&m, st.outs[0], to);
				log = arena_printf(perm, "%s\n    %s = %s(%s): the constant computed at "
				    "compile time", log, to, st.callee, src->name);
				*ARENA_PUSH(perm, items, n, cap) = (KernelItem){ .decl = t };
				continue;
			}
		}
		Call *c = arena_alloc(perm, sizeof *c);
		c->loc = s->at;
		c->callee = st.callee;
		c->callee_loc = st.callee_loc;
		c->nouts = st.nouts;
		c->outs = arena_alloc(perm, (size_t)(st.nouts + 1) * sizeof *c->outs);
		c->out_locs = arena_alloc(perm, (size_t)(st.nouts + 1) * sizeof *c->out_locs);
		for (int j = 0; j < st.nouts; j++) {
			const char *to = map_name(&m, st.outs[j]);
			if (!to) {
				to = intern_cstr(arena_printf(perm, "%s__%s", r, st.outs[j]));
				map_put(&m, st.outs[j], to);
			}
			c->outs[j] = to;
			c->out_locs[j] = s->at;
		}
		c->nargs = st.nargs;
		c->keys = st.keys;
		c->key_locs = st.key_locs;
		c->args_loc = s->at;
		c->args = arena_alloc(perm, (size_t)(st.nargs + 1) * sizeof *c->args);
		for (int j = 0; j < st.nargs; j++)
			c->args[j] = subst(&m, st.args[j]);
		const char *text = call_text(c->outs, c->nouts, c->callee, c->args, c->keys, c->nargs);
		log = arena_printf(perm, "%s\n    %s", log, text);
		*ARENA_PUSH(perm, items, n, cap) = (KernelItem){ .call = c };
		/* a transform back into a result: a later call may cancel it */
		Tensor *o = tensor_of(f, st.outs[0]);
		if (x && o && o->role == ROLE_OUT && !tensor_of(f, x))
			*ARENA_PUSH(perm, backs, nbacks, capbacks) = (Back){ k, c->outs[0], c->callee,
				map_name(&m, x), text, false, c };
	}
	note(k, log);
	*nout = n;
	return items;
}

/* ---- element-wise stages in the layout ------------------------------------ */

/* Whether B's rule gives each element an element of its input or 0:
 * then E(B(v)) = B(E(v)) for an element-wise E with E(0) = 0. */
static bool
moves_only(Kernel *B)
{
	Rule *r = NULL;
	Tensor *in = NULL;
	for (int i = 0; i < B->nitems; i++) {
		if (B->items[i].rule) {
			if (r)
				return false;
			r = B->items[i].rule;
		}
		if (B->items[i].decl && B->items[i].decl->role == ROLE_IN)
			in = B->items[i].decl;
	}
	if (!r || !in || r->update || r->init || r->tuple || !r->value)
		return false;
	Expr *e = r->value;
	Expr *opts[2] = { e, NULL };
	if (e->kind == EXPR_SELECT) {
		opts[0] = e->call.args[1];
		opts[1] = e->call.args[2];
	}
	for (int i = 0; i < 2 && opts[i]; i++) {
		Expr *o = opts[i];
		bool zero = (o->kind == EXPR_FLOAT && o->fval == 0) || (o->kind == EXPR_INT && !o->ival);
		if (!zero && !(o->kind == EXPR_ACCESS && o->call.name == in->name))
			return false;
	}
	return true;
}

typedef struct {
	Rule *r;
	const char *c;        /* the one tensor read */
	bool ok;
} Ew;

static bool
axis_at(Rule *r, Expr *e, int d)
{
	return e->kind == EXPR_NAME && e->id.name == r->axes[d];
}

/* Every read is c[the rule's axes], and the axes appear nowhere else. */
static bool
ew_fn(Expr *e, void *ctx)
{
	Ew *w = ctx;
	if (e->kind == EXPR_ACCESS) {
		if (w->c && e->call.name != w->c)
			w->ok = false;
		w->c = e->call.name;
		if (e->call.nargs != w->r->naxes)
			w->ok = false;
		for (int d = 0; w->ok && d < e->call.nargs; d++)
			w->ok = axis_at(w->r, e->call.args[d], d);
		return false;
	}
	if (e->kind == EXPR_NAME)
		for (int d = 0; d < w->r->naxes; d++)
			if (e->id.name == w->r->axes[d])
				w->ok = false;
	if (e->kind == EXPR_REDUCE)
		w->ok = false;
	return w->ok;
}

/* e with each read of c replaced by v[axes]. */
static Expr *
reread(Expr *e, const char *c, const char *v, const char **axes, int n)
{
	if (!e)
		return NULL;
	if (e->kind == EXPR_ACCESS && e->call.name == c) {
		Expr *a = callexpr_dup(e);
		a->call.name = v;
		a->call.nargs = n;
		a->call.args = arena_alloc(perm, (size_t)(n + 1) * sizeof *a->call.args);
		for (int d = 0; d < n; d++)
			a->call.args[d] = ast_name(e->loc, axes[d]);
		return a;
	}
	Expr *x = callexpr_dup(e);
	switch (e->kind) {
	case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			x->call.args[i] = reread(e->call.args[i], c, v, axes, n);
		break;
	case EXPR_UNARY: case EXPR_BINARY:
		x->bin.a = reread(e->bin.a, c, v, axes, n);
		x->bin.b = reread(e->bin.b, c, v, axes, n);
		break;
	default:
		break;
	}
	return x;
}

KernelItem *
layouts_elementwise(Program *p, Kernel *k, Rule *r, KernelItem *made, int nmade, int *nout)
{
	*nout = 0;
	if (!target || k == checking || r->update || r->init || r->tuple || !r->value ||
	    !r->naxes || updated(k, r->name))
		return NULL;
	Ew w = { .r = r, .ok = true };
	check_walk(r->value, ew_fn, &w);
	Back *b = w.ok && w.c ? back_of(k, w.c) : NULL;
	if (!b || updated(k, b->r))
		return NULL;
	Kernel *B = sema_find_kernel(p, b->B);
	Tensor *vd = NULL, *rd = NULL;
	for (int i = 0; i < nmade; i++)
		if (made[i].decl && made[i].decl->name == b->v)
			vd = made[i].decl;
	for (int i = 0; i < k->nitems; i++)
		if (k->items[i].decl && k->items[i].decl->name == r->name)
			rd = k->items[i].decl;
	/* E(0) = 0, computed in the element type r and v share (B moves
	 * elements) */
	if (!B || !moves_only(B) || !vd || !rd || rd->role == ROLE_IN || rd->elem != vd->elem ||
	    !layoutfold_zero(r->value, w.c, vd->elem))
		return NULL;
	/* rb[l0, ...] = E(v[l0, ...]); r = B(rb, ...) */
	const char *rb = intern_cstr(arena_printf(perm, "%s__b", r->name));
	const char **axes = arena_alloc(perm, (size_t)(vd->ndims + 1) * sizeof *axes);
	for (int d = 0; d < vd->ndims; d++)
		axes[d] = intern_cstr(arena_printf(perm, "_l%d", d));
	Tensor *t = arena_alloc(perm, sizeof *t);
	*t = *vd;
	t->name = rb;
	t->loc = r->loc;
	t->role = ROLE_TEMP;
	t->rule = NULL;
	Rule *nr = arena_alloc(perm, sizeof *nr);
	*nr = *r;
	nr->name = rb;
	nr->naxes = vd->ndims;
	nr->axes = axes;
	nr->axis_locs = arena_alloc(perm, (size_t)(vd->ndims + 1) * sizeof *nr->axis_locs);
	for (int d = 0; d < vd->ndims; d++)
		nr->axis_locs[d] = r->loc;
	nr->value = reread(r->value, w.c, b->v, axes, vd->ndims);
	Call *c = arena_alloc(perm, sizeof *c);
	*c = *b->call;
	c->loc = r->loc;
	c->outs = arena_alloc(perm, 2 * sizeof *c->outs);
	c->out_locs = arena_alloc(perm, 2 * sizeof *c->out_locs);
	c->outs[0] = r->name;
	c->out_locs[0] = r->name_loc;
	c->nouts = 1;
	c->args = arena_alloc(perm, (size_t)(c->nargs + 1) * sizeof *c->args);
	for (int i = 0; i < c->nargs; i++)
		c->args[i] = !c->keys || !c->keys[i] ? ast_name(r->loc, rb) : b->call->args[i];
	const char *text = call_text(c->outs, 1, c->callee, c->args, c->keys, c->nargs);
	const char *ax = "";
	for (int d = 0; d < vd->ndims; d++)
		ax = arena_printf(perm, "%s%s%s", ax, d ? ", " : "", axes[d]);
	note(k, arena_printf(perm, "  line %d: %s: element-wise on %s, computed in its layout:\n"
	    "    %s[%s] = %s\n    %s", line_of(r->loc), r->name, b->r, rb, ax, callexpr_text(nr->value),
	    text));
	b->cancelled = true;   /* this reader reads v */
	*ARENA_PUSH(perm, backs, nbacks, capbacks) = (Back){ k, r->name, b->B, rb, text, false, c };
	KernelItem *items = arena_alloc(perm, 4 * sizeof *items);
	items[0] = (KernelItem){ .decl = t };
	items[1] = (KernelItem){ .rule = nr };
	items[2] = (KernelItem){ .call = c };
	*nout = 3;
	return items;
}

/* ---- removing what no one reads ----------------------------------------- */

typedef struct {
	const char *name;
	bool read;
} Reader;

static bool
reads_fn(Expr *e, void *ctx)
{
	Reader *r = ctx;
	if ((e->kind == EXPR_ACCESS && e->call.name == r->name) ||
	    (e->kind == EXPR_NAME && e->id.name == r->name))
		r->read = true;
	return !r->read;
}

static bool
is_read(KernelItem *items, int n, const char *name)
{
	Reader rd = { .name = name };
	for (int i = 0; i < n && !rd.read; i++) {
		Rule *r = items[i].rule;
		if (!r)
			continue;
		check_walk(r->value, reads_fn, &rd);
		if (r->update)
			check_walk(r->target, reads_fn, &rd);
	}
	return rd.read;
}

void
layouts_finish(Kernel *k, KernelItem *items, int *n)
{
	for (int i = 0; i < nbacks; i++) {
		Back *b = &backs[i];
		if (b->k != k || !b->cancelled)
			continue;
		Tensor *d = NULL;
		for (int j = 0; j < *n; j++)
			if (items[j].decl && items[j].decl->name == b->r)
				d = items[j].decl;
		if (!d || d->role != ROLE_TEMP || is_read(items, *n, b->r))
			continue;
		int m = 0;
		for (int j = 0; j < *n; j++) {
			KernelItem it = items[j];
			bool drop = (it.decl && it.decl == d) ||
			    (it.rule && (it.rule->name == b->r || (it.rule->site &&
			    it.rule->site->result == b->r)));
			if (!drop)
				items[m++] = it;
		}
		*n = m;
		note(k, arena_printf(perm, "  %s: no longer read: removed", b->text));
	}
}
