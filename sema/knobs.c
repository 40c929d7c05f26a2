/* knobs.c: schedule templates: knob declarations and `when` blocks.
 *
 * A schedule that declares `knob NAME in [v0, v1, ...];` or holds a
 * `when (cond) { prims }` is a template.  This pass keeps the statements
 * as written (Schedule.tmpl), checks the knob declarations and the when
 * conditions once, and replaces Schedule.prims by the primitives of one
 * knob point: knob declarations dropped, each when block replaced by its
 * body when its condition holds at that point (nothing otherwise), and
 * every argument that names a knob replaced by the knob's value.  The
 * default point takes each knob's first value; txc -K NAME=VALUE picks
 * another (knobs_request), and txc tune walks the points (knobs_resolve).
 * One knob name is the compile target's: `knob isa in [avx512, avx2];`
 * lists instruction sets, widest first, and its default is the first one
 * the target CPU has (--cpu, --features, else the host: knobs_set_isa),
 * so one template picks the widest micro-kernel table there is; -K
 * isa=avx512 forces one (its code then runs on any x86-64 that LLVM
 * compiles it for, split to the target's width).
 * Three more names are the target's: l1_bytes, l2_bytes and l3_bytes,
 * its data cache sizes (knobs_set_caches: --cache, the OS, a table of
 * --cpu names; auto/caches.c), integers a when condition may compute
 * with (+ - * /) and compare, so that a template sizes its blocks for
 * the machine: `when (isa == avx2 && 4 * 16 * 256 <= l1_bytes / 2)`.
 * Everything after sema (schedule validation, lowering) sees an ordinary
 * schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema/sema.h"

/* ---- -K NAME=VALUE ---------------------------------------------------- */

typedef struct {
	const char *name, *value;
	bool used;
} Request;

static Request *reqs;
static int nreqs, capreqs;
static bool bad_request;   /* a -K value a knob does not take */

bool
knobs_request_arg(const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return false;
	for (const char *c = arg; c < eq; c++)
		if (!(*c == '_' || ((*c | 32) >= 'a' && (*c | 32) <= 'z') || (c > arg && *c >= '0' && *c <= '9')))
			return false;
	Request *r = ARENA_PUSH(perm, reqs, nreqs, capreqs);
	r->name = intern(arg, (size_t)(eq - arg));
	r->value = eq + 1;
	r->used = false;
	return true;
}

/* ---- the target's instruction sets (knob isa) ----------------------------- */

/* The knob values the isa knob takes, each with what it needs: an x86
 * level (a machine of that level or above has it), or another family;
 * an extension (VNNI, BF16) also needs the target to have that set. */
static const struct {
	const char *name;
	int level;             /* x86: 1 sse2, 2 avx2, 3 avx512; 0 other */
	const char *ext;       /* LLVM's name of the extension, or NULL */
} isa_values[] = {
	{ "avx512", 3, NULL }, { "avx2", 2, NULL }, { "sse2", 1, NULL }, { "neon", 0, NULL },
	{ "generic", 0, NULL }, { "avx512vnni", 3, "avx512vnni" },
	{ "avx512bf16", 3, "avx512bf16" }, { "avxvnni", 2, "avxvnni" },
	/* AMX's tiles (Sapphire Rapids on): int8 and bf16 dot products */
	{ "amxint8", 3, "amx-int8" }, { "amxbf16", 3, "amx-bf16" },
};
#define NISA_VALUES (sizeof isa_values / sizeof isa_values[0])

static const char *target_isa;   /* NULL: the isa knob defaults to its first value */
static const char *target_exts;  /* the extensions the target has, comma-separated */

void
knobs_set_isa(const char *isa, const char *exts)
{
	target_isa = isa;
	target_exts = exts;
}

const char *
knobs_isa(void)
{
	for (int r = nreqs - 1; r >= 0; r--)
		if (!strcmp(reqs[r].name, "isa"))
			return reqs[r].value;
	return target_isa;
}

static int
isa_index(const char *name)
{
	for (size_t i = 0; name && i < NISA_VALUES; i++)
		if (!strcmp(isa_values[i].name, name))
			return (int)i;
	return -1;
}

static int
isa_level(const char *name)
{
	int i = isa_index(name);
	return i < 0 ? -1 : isa_values[i].level;
}

static bool
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* Whether a machine of instruction sets isa with extensions exts has
 * value v of the isa knob. */
static bool
machine_has(const char *v, const char *isa, const char *exts)
{
	if (!strcmp(v, "generic") || !strcmp(v, isa))
		return true;
	int i = isa_index(v), have = isa_level(isa);
	if (i < 0 || isa_values[i].level <= 0 || have < isa_values[i].level)
		return false;
	return !isa_values[i].ext || in_list(exts, isa_values[i].ext);
}

/* Whether the target has instruction set v (a value of the isa knob). */
static bool
target_has(const char *v)
{
	return machine_has(v, target_isa, target_exts);
}

/* The first value of isa knob kn a machine of isa (a value, with the
 * extension it names) has; the last when it has none. */
static int
isa_pick(SchedPrim *kn, const char *isa)
{
	int i = isa_index(isa);
	const char *exts = i >= 0 && isa_values[i].ext ? isa_values[i].ext : "";
	const char *lvl = isa;
	for (size_t j = 0; i >= 0 && isa_values[i].ext && j < NISA_VALUES; j++)
		if (!isa_values[j].ext && isa_values[j].level == isa_values[i].level)
			lvl = isa_values[j].name;    /* avx512vnni: an avx512 machine */
	for (int a = 0; a < kn->nargs; a++)
		if (kn->args[a].kind == ARG_NAME && machine_has(kn->args[a].str, lvl, exts))
			return a;
	return kn->nargs - 1;
}

/* ---- the target's caches (l1_bytes, l2_bytes, l3_bytes) ------------------ */

static int64_t cache_sizes[3] = { 32 * 1024, 1024 * 1024, 32 * 1024 * 1024 };
static const char *const cache_names[3] = { "l1_bytes", "l2_bytes", "l3_bytes" };

void
knobs_set_caches(long l1, long l2, long l3)
{
	cache_sizes[0] = l1;
	cache_sizes[1] = l2;
	cache_sizes[2] = l3;
}

/* The index of a cache name (l1_bytes...), or -1 */
static int
cache_name(const char *name)
{
	for (int i = 0; name && i < 3; i++)
		if (!strcmp(name, cache_names[i]))
			return i;
	return -1;
}

/* ---- values ------------------------------------------------------------- */

const char *
knobs_value_text(const SchedArg *v)
{
	if (v->kind == ARG_INT)
		return arena_printf(perm, "%lld", (long long)v->ival);
	if (v->kind == ARG_DOTTED)
		return arena_printf(perm, "%s.%s", v->str, v->str2);
	return v->str;
}

/* "4, 8, 16 or 32" */
static const char *
value_list(SchedPrim *kn)
{
	const char *s = "";
	for (int i = 0; i < kn->nargs; i++)
		s = arena_printf(perm, "%s%s%s", s, i == 0 ? "" : i == kn->nargs - 1 ? " or " : ", ",
		    knobs_value_text(&kn->args[i]));
	return s;
}

static int
find_knob(Schedule *s, const char *name)
{
	for (int i = 0; name && i < s->nknobs; i++)
		if (s->knobs[i]->knob == name)
			return i;
	return -1;
}

static bool
int_knob(SchedPrim *kn)
{
	return kn->args[0].kind == ARG_INT;
}

/* ---- checking a template --------------------------------------------------- */

static bool
has_template_forms(SchedPrim *prims, int n)
{
	for (int i = 0; i < n; i++)
		if (prims[i].form != SCHED_PRIM ||
		    (prims[i].cond && has_template_forms(prims[i].body, prims[i].nbody)))
			return true;
	return false;
}

/* Whether name is a stage or an axis of a rule of k (a knob of that name
 * would make `C.split(i, ...)` ambiguous). */
static const char *
kernel_name_kind(Kernel *k, const char *name)
{
	if (!k)
		return NULL;
	for (int i = 0; i < k->ntensors; i++)
		if (k->tensors[i]->name == name)
			return "a tensor";
	for (int i = 0; i < k->nitems; i++) {
		Rule *r = k->items[i].rule;
		if (!r)
			continue;
		for (int a = 0; a < r->naxes; a++)
			if (r->axes[a] == name)
				return "an axis";
		if (r->value && r->value->kind == EXPR_REDUCE)
			for (int a = 0; a < r->value->reduce.naxes; a++)
				if (r->value->reduce.axes[a].name == name)
					return "a reduction axis";
	}
	return NULL;
}

static bool
in_words(const char *const *w, const char *name)
{
	for (; *w; w++)
		if (!strcmp(*w, name))
			return true;
	return false;
}

static void
check_decl(Schedule *s, SchedPrim *kn)
{
	const char *kind = kernel_name_kind(s->k, kn->knob);
	if (kind)
		diag_error(kn->knob_loc, "knob '%s' has the name of %s of kernel '%s'; give the "
		    "knob another name", kn->knob, kind, s->k->name);
	else if (in_words(prim_scope_values, kn->knob) || in_words(prim_tail_values, kn->knob))
		diag_error(kn->knob_loc, "knob '%s' has the name of a memory scope or a tail "
		    "strategy, which primitives take as arguments; give the knob another name",
		    kn->knob);
	else if (cache_name(kn->knob) >= 0)
		diag_error(kn->knob_loc, "knob '%s' has the name of the target's cache size, "
		    "which when conditions read; give the knob another name", kn->knob);
	int prev = find_knob(s, kn->knob);
	if (prev >= 0) {
		diag_error(kn->knob_loc, "knob '%s' is declared twice", kn->knob);
		diag_note(s->knobs[prev]->knob_loc, "the first declaration is here");
	}
	bool ints = kn->args[0].kind == ARG_INT;
	for (int i = 0; i < kn->nargs && !strcmp(kn->knob, "isa"); i++)
		if (kn->args[i].kind != ARG_NAME || isa_level(kn->args[i].str) < 0) {
			diag_error(kn->args[i].loc, "knob 'isa' lists instruction sets, widest "
			    "first: avx512vnni, avx512bf16, avx512, avxvnni, avx2, sse2, neon or generic");
			break;
		}
	for (int i = 0; i < kn->nargs; i++) {
		SchedArg *v = &kn->args[i];
		if (v->key || (v->kind != ARG_INT && v->kind != ARG_NAME && v->kind != ARG_DOTTED)) {
			diag_error(v->loc, "a knob's values are integers or names (of axes, "
			    "stages, keywords or bind tags such as threadIdx.x)");
			continue;
		}
		if ((v->kind == ARG_INT) != ints) {
			diag_error(v->loc, "knob '%s' mixes integers and names; its values are "
			    "all one or the other", kn->knob);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (kn->args[j].kind == v->kind && kn->args[j].ival == v->ival &&
			    kn->args[j].str == v->str && kn->args[j].str2 == v->str2) {
				diag_error(v->loc, "knob '%s' lists the value %s twice", kn->knob,
				    knobs_value_text(v));
				break;
			}
	}
}

/* The type of a when condition's part: an integer, a name or a bool. */
typedef enum { WT_ERR, WT_INT, WT_NAME, WT_BOOL } WType;

static WType
when_type(Schedule *s, Expr *e, bool *used)
{
	switch (e->kind) {
	case EXPR_INT: return WT_INT;
	case EXPR_BOOL: return WT_BOOL;
	case EXPR_NAME: {
		int k = find_knob(s, e->id.name);
		if (k < 0)
			return cache_name(e->id.name) >= 0 ? WT_INT : WT_NAME;
		used[k] = true;
		return int_knob(s->knobs[k]) ? WT_INT : WT_NAME;
	}
	case EXPR_UNARY:
		if (e->bin.op == OP_NOT) {
			WType t = when_type(s, e->bin.a, used);
			if (t == WT_BOOL || t == WT_ERR)
				return t;
			diag_error(e->bin.a->loc, "'!' needs a condition");
			return WT_ERR;
		}
		if (e->bin.op == OP_NEG && e->bin.a->kind == EXPR_INT)
			return WT_INT;
		break;
	case EXPR_BINARY: {
		WType a = when_type(s, e->bin.a, used), b = when_type(s, e->bin.b, used);
		if (a == WT_ERR || b == WT_ERR)
			return WT_ERR;
		switch (e->bin.op) {
		case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
			if (a == WT_INT && b == WT_INT) {
				if (e->bin.op == OP_DIV && e->bin.b->kind == EXPR_INT && e->bin.b->ival == 0) {
					diag_error(e->bin.op_loc, "division by zero in a when condition");
					return WT_ERR;
				}
				return WT_INT;
			}
			diag_error(e->bin.op_loc, "'%s' in a when condition computes with integers "
			    "(integer knobs, l1_bytes, l2_bytes, l3_bytes and numbers), not %s",
			    op_spelling(e->bin.op), a == WT_INT ? (b == WT_BOOL ? "a condition" :
			    "a name") : a == WT_BOOL ? "a condition" : "a name");
			return WT_ERR;
		case OP_AND: case OP_OR:
			if (a == WT_BOOL && b == WT_BOOL)
				return WT_BOOL;
			diag_error(e->bin.op_loc, "'%s' joins conditions", op_spelling(e->bin.op));
			return WT_ERR;
		case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE: {
			bool order = e->bin.op != OP_EQ && e->bin.op != OP_NE;
			if (a != b || a == WT_BOOL || (order && a != WT_INT)) {
				bool cache = (e->bin.a->kind == EXPR_NAME && cache_name(e->bin.a->id.name) >= 0) ||
				    (e->bin.b->kind == EXPR_NAME && cache_name(e->bin.b->id.name) >= 0);
				diag_error(e->bin.op_loc, "a when condition compares a knob with one "
				    "of its values%s%s", order ? " (and orders integers only)" : "",
				    cache ? "; l1_bytes, l2_bytes and l3_bytes are integers" : "");
				return WT_ERR;
			}
			if (a == WT_NAME) {
				/* a name compared with a knob of names must be one of its values */
				Expr *kx = find_knob(s, e->bin.a->id.name) >= 0 ? e->bin.a : e->bin.b;
				Expr *vx = kx == e->bin.a ? e->bin.b : e->bin.a;
				int k = find_knob(s, kx->id.name);
				if (k < 0) {
					diag_error(e->bin.op_loc, "a when condition compares a knob with "
					    "one of its values, not two names");
					return WT_ERR;
				}
				bool found = false;
				for (int i = 0; i < s->knobs[k]->nargs; i++)
					found |= s->knobs[k]->args[i].str == vx->id.name;
				if (!found && find_knob(s, vx->id.name) < 0) {
					diag_error(vx->loc, "'%s' is not a value of knob '%s' (%s)",
					    vx->id.name, kx->id.name, value_list(s->knobs[k]));
					return WT_ERR;
				}
			}
			return WT_BOOL;
		}
		default:
			break;
		}
		break;
	}
	default:
		break;
	}
	diag_error(e->loc, "a when condition is made of knobs, their values, the cache "
	    "sizes l1_bytes, l2_bytes and l3_bytes, '+ - * /', comparisons, '!', '&&' and '||'");
	return WT_ERR;
}

/* Marks knobs used by arguments; rejects a knob as a result name. */
static void
mark_args(Schedule *s, SchedArg *args, int n, bool *used)
{
	for (int i = 0; i < n; i++) {
		if (args[i].kind == ARG_LIST)
			mark_args(s, args[i].list, args[i].nlist, used);
		int k = args[i].kind == ARG_NAME ? find_knob(s, args[i].str) : -1;
		if (k >= 0)
			used[k] = true;
	}
}

static void
check_body(Schedule *s, SchedPrim *prims, int n, bool top, bool *used)
{
	for (int i = 0; i < n; i++) {
		SchedPrim *p = &prims[i];
		if (p->form == SCHED_KNOB) {
			if (!top)
				diag_error(p->prim_loc, "knob '%s' is declared inside a block; declare "
				    "knobs at the top of the schedule", p->knob);
			continue;
		}
		if (p->form == SCHED_WHEN) {
			WType t = when_type(s, p->cond, used);
			if (t != WT_BOOL && t != WT_ERR)
				diag_error(p->cond->loc, "a when condition is a comparison such as "
				    "'knob == value'");
		}
		if (p->cond) {
			check_body(s, p->body, p->nbody, false, used);
			continue;
		}
		mark_args(s, p->args, p->nargs, used);
		for (int j = 0; j < p->nouts; j++)
			if (find_knob(s, p->outs[j]) >= 0)
				diag_error(p->out_locs[j], "'%s' is a knob; a primitive's results need "
				    "other names", p->outs[j]);
	}
}

/* Collects s's knobs and checks the template (once per schedule). */
static void
collect(Schedule *s)
{
	int cap = 0;
	s->tmpl = s->prims;
	s->ntmpl = s->nprims;
	for (int i = 0; i < s->ntmpl; i++)
		if (s->tmpl[i].form == SCHED_KNOB) {
			bool dup = find_knob(s, s->tmpl[i].knob) >= 0;
			check_decl(s, &s->tmpl[i]);
			if (!dup)
				*ARENA_PUSH(perm, s->knobs, s->nknobs, cap) = &s->tmpl[i];
		}
	s->point = arena_alloc(perm, (s->nknobs + 1) * sizeof *s->point);
	bool *used = arena_alloc(perm, (s->nknobs + 1) * sizeof *used);
	int before = diag_errors();
	check_body(s, s->tmpl, s->ntmpl, true, used);
	for (int i = 0; i < s->nknobs && diag_errors() == before; i++)
		if (!used[i])
			diag_warn(s->knobs[i]->knob_loc, "knob '%s' is not used by any primitive "
			    "or when condition", s->knobs[i]->knob);
}

/* ---- resolving a point ------------------------------------------------------- */

typedef struct {
	bool is_name;
	int64_t i;
	const char *name;
} WVal;

static WVal
eval(Schedule *s, Expr *e)
{
	WVal v = { 0 }, a, b;
	switch (e->kind) {
	case EXPR_INT: case EXPR_BOOL: v.i = e->ival; return v;
	case EXPR_NAME: {
		int k = find_knob(s, e->id.name);
		if (k < 0 && cache_name(e->id.name) >= 0) {
			v.i = cache_sizes[cache_name(e->id.name)];
			return v;
		}
		if (k < 0) {
			v.is_name = true;
			v.name = e->id.name;
			return v;
		}
		SchedArg *x = &s->knobs[k]->args[s->point[k]];
		v.is_name = x->kind != ARG_INT;
		v.i = x->ival;
		v.name = x->str;
		return v;
	}
	case EXPR_UNARY:
		a = eval(s, e->bin.a);
		v.i = e->bin.op == OP_NOT ? !a.i : -a.i;
		return v;
	case EXPR_BINARY:
		a = eval(s, e->bin.a);
		b = eval(s, e->bin.b);
		switch (e->bin.op) {
		case OP_AND: v.i = a.i && b.i; break;
		case OP_OR: v.i = a.i || b.i; break;
		case OP_EQ: v.i = a.is_name ? a.name == b.name : a.i == b.i; break;
		case OP_NE: v.i = a.is_name ? a.name != b.name : a.i != b.i; break;
		case OP_LT: v.i = a.i < b.i; break;
		case OP_LE: v.i = a.i <= b.i; break;
		case OP_GT: v.i = a.i > b.i; break;
		case OP_GE: v.i = a.i >= b.i; break;
		case OP_ADD: v.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i); break;
		case OP_SUB: v.i = (int64_t)((uint64_t)a.i - (uint64_t)b.i); break;
		case OP_MUL: v.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i); break;
		/* as everywhere in tx: rounded toward negative infinity; a
		 * divisor of 0 (a knob's value) gives 0 */
		case OP_DIV: v.i = b.i == 0 ? 0 : b.i == -1 ? (int64_t)(0 - (uint64_t)a.i) : a.i / b.i - ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0))); break;
		default: break;
		}
		return v;
	default:
		return v;
	}
}

static SchedArg *
subst_args(Schedule *s, SchedArg *args, int n)
{
	SchedArg *out = arena_alloc(perm, (n + 1) * sizeof *out);
	for (int i = 0; i < n; i++) {
		out[i] = args[i];
		if (args[i].kind == ARG_LIST) {
			out[i].list = subst_args(s, args[i].list, args[i].nlist);
			continue;
		}
		int k = args[i].kind == ARG_NAME ? find_knob(s, args[i].str) : -1;
		if (k < 0)
			continue;
		/* the knob's value, where the knob was written (for messages) */
		SchedArg *v = &s->knobs[k]->args[s->point[k]];
		out[i].kind = v->kind;
		out[i].ival = v->ival;
		out[i].str = v->str;
		out[i].str2 = v->str2;
	}
	return out;
}

typedef struct {
	SchedPrim *v;
	int n, cap;
} Out;

static void
resolve_into(Schedule *s, SchedPrim *prims, int n, Out *o)
{
	for (int i = 0; i < n; i++) {
		SchedPrim *p = &prims[i];
		if (p->form == SCHED_KNOB)
			continue;
		if (p->form == SCHED_WHEN) {
			if (eval(s, p->cond).i)
				resolve_into(s, p->body, p->nbody, o);
			continue;
		}
		SchedPrim *q = ARENA_PUSH(perm, o->v, o->n, o->cap);
		*q = *p;
		q->prim_id = 0;
		if (p->cond) {
			Out b = { 0 };
			resolve_into(s, p->body, p->nbody, &b);
			q->body = b.v;
			q->nbody = b.n;
		} else {
			q->args = subst_args(s, p->args, p->nargs);
		}
	}
}

int
knobs_default(SchedPrim *kn)
{
	if (strcmp(kn->knob, "isa") != 0 || !target_isa)
		return 0;
	for (int i = 0; i < kn->nargs; i++)
		if (kn->args[i].kind == ARG_NAME && target_has(kn->args[i].str))
			return i;
	return kn->nargs - 1;
}

void
knobs_resolve(Schedule *s, const int *point)
{
	if (!s->tmpl)
		return;
	for (int i = 0; i < s->nknobs; i++)
		s->point[i] = point ? point[i] : knobs_default(s->knobs[i]);
	Out o = { 0 };
	resolve_into(s, s->tmpl, s->ntmpl, &o);
	s->prims = o.v;
	s->nprims = o.n;
}

const char *
knobs_describe(Schedule *s)
{
	const char *d = "";
	for (int i = 0; i < s->nknobs; i++)
		d = arena_printf(perm, "%s%s%s=%s", d, i ? ", " : "", s->knobs[i]->knob,
		    knobs_value_text(&s->knobs[i]->args[s->point[i]]));
	return d;
}

bool
knobs_note_point(Schedule *s)
{
	if (!s || s->nknobs == 0 || bad_request)
		return false;
	diag_note(s->knobs[0]->loc, "at the knob point %s of %s '%s'%s", knobs_describe(s),
	    s->name ? "schedule" : "the schedule of", s->name ? s->name : s->kernel,
	    "; txc tune skips such points");
	return true;
}

/* FNV-1a over the template's text: the same space gives the same hash. */
uint64_t
knobs_space_hash(Schedule *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	uint64_t h = 1469598103934665603ULL;
	if (!fp)
		return 0;
	Schedule t = *s;
	t.name = NULL;   /* the same template under another name is the same space */
	Program p = { 0 };
	Item it = { .schedule = &t };
	p.items = &it;
	p.nitems = 1;
	ast_format(fp, &p);
	fclose(fp);
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= 1099511628211ULL;
	}
	free(buf);
	return h;
}

/* ---- the pass ---------------------------------------------------------------- */

static void
apply_requests(Schedule *s)
{
	for (int r = 0; r < nreqs; r++) {
		int k = find_knob(s, reqs[r].name);
		if (k < 0)
			continue;
		reqs[r].used = true;
		SchedPrim *kn = s->knobs[k];
		int at = -1;
		for (int i = 0; i < kn->nargs && at < 0; i++)
			if (!strcmp(knobs_value_text(&kn->args[i]), reqs[r].value))
				at = i;
		if (at < 0 && kn->knob == intern_cstr("isa") && isa_index(reqs[r].value) >= 0) {
			/* an instruction set this knob does not list: the first
			 * value a machine with it has (-K isa=avx512 takes a
			 * gemm_i8 knob's avx2 table, -K isa=avx512vnni matmul's
			 * avx512 one) */
			s->point[k] = isa_pick(kn, reqs[r].value);
		} else if (at < 0) {
			bad_request = true;
			diag_error(kn->knob_loc, "-K %s=%s: knob '%s' takes %s", reqs[r].name,
			    reqs[r].value, kn->knob, value_list(kn));
		}
		else
			s->point[k] = at;
	}
}

void
knobs_program(Program *p)
{
	for (int i = 0; i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (!s || s->tmpl || !has_template_forms(s->prims, s->nprims))
			continue;
		s->k = sema_find_kernel(p, s->kernel);
		int before = diag_errors();
		collect(s);
		if (diag_errors() != before) {
			s->nprims = 0;   /* checked no further */
			s->nknobs = 0;   /* and no point to name */
			continue;
		}
		knobs_resolve(s, NULL);
		apply_requests(s);
		knobs_resolve(s, s->point);
	}
}

bool
knobs_check_requests(void)
{
	bool ok = true;
	for (int r = 0; r < nreqs; r++)
		if (!reqs[r].used) {
			diag_error(loc_none, "-K %s=%s: no schedule declares a knob '%s'", reqs[r].name,
			    reqs[r].value, reqs[r].name);
			ok = false;
		}
	return ok;
}
