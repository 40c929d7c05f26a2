/* astprint.c: the AST as text, two ways.
 *
 * ast_dump (--dump-ast) prints the tree, one node per line, indented two
 * spaces per level, each line ending with the node's range as
 * " @LINE:COL-LINE:COL" (the end is exclusive), so that
 *     sed 's/ @[0-9]*:[0-9]*-[0-9]*:[0-9]*$//'
 * strips the locations and two dumps can be compared.
 *
 * ast_format (--format) prints canonical .tx source: two-space indents, one
 * statement per line, a blank line between items, single spaces around
 * binary operators and the fewest parentheses the precedences allow.
 * Parsing the output gives the same tree (same dump, locations aside).
 * Comments are not in the AST, so --format does not preserve them.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

/* ---- line numbers --------------------------------------------------------
 * A dump prints thousands of locations: line starts are found once per
 * file and looked up by binary search (source_linecol scans from the
 * start each time). */
typedef struct {
	uint32_t file;
	uint32_t *starts;
	int n;
	Arena *arena;
} Lines;

static void
lines_init(Lines *l, uint32_t file)
{
	memset(l, 0, sizeof *l);
	const SrcFile *f = source_get(file);
	if (!f)
		return;
	l->file = file;
	l->arena = arena_new();
	int cap = 0;
	*ARENA_PUSH(l->arena, l->starts, l->n, cap) = 0;
	for (size_t i = 0; i < f->len; i++)
		if (f->text[i] == '\n')
			*ARENA_PUSH(l->arena, l->starts, l->n, cap) = (uint32_t)i + 1;
}

static void
linecol(const Lines *l, uint32_t file, uint32_t off, int *line, int *col)
{
	if (file != l->file || l->n == 0) {
		source_linecol(file, off, line, col);
		return;
	}
	int lo = 0, hi = l->n - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (l->starts[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	*line = lo + 1;
	*col = (int)(off - l->starts[lo]) + 1;
}

/* ---- dump ------------------------------------------------------------------- */
typedef struct {
	FILE *fp;
	Lines lines;
} Dump;

static void
at(Dump *d, Loc loc)
{
	if (loc.file == 0) {
		fputs(" @?\n", d->fp);
		return;
	}
	int l1, c1, l2, c2;
	linecol(&d->lines, loc.file, loc.begin, &l1, &c1);
	linecol(&d->lines, loc.file, loc.end, &l2, &c2);
	fprintf(d->fp, " @%d:%d-%d:%d\n", l1, c1, l2, c2);
}

static void
indent(Dump *d, int depth, const char *label)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", d->fp);
	if (label)
		fputs(label, d->fp);
}

static void put_string(FILE *fp, const char *s);
static void put_float(FILE *fp, double v);
static const char *str_or(const char *s) { return s ? s : "<null>"; }

static void
dump_expr(Dump *d, Expr *e, int depth, const char *label)
{
	FILE *fp = d->fp;
	indent(d, depth, label);
	if (!e) {
		fputs("<null>\n", fp);
		return;
	}
	switch (e->kind) {
	case EXPR_INT: fprintf(fp, "Int %lld", (long long)e->ival); break;
	case EXPR_FLOAT: fputs("Float ", fp); put_float(fp, e->fval); break;
	case EXPR_BOOL: fprintf(fp, "Bool %s", e->ival ? "true" : "false"); break;
	case EXPR_NAME: fprintf(fp, "Name %s", str_or(e->id.name)); break;
	case EXPR_ACCESS: fprintf(fp, "Access %s", str_or(e->call.name)); break;
	case EXPR_CALL: fprintf(fp, "Call %s", str_or(e->call.name)); break;
	case EXPR_CAST: fprintf(fp, "Cast %s", type_name(e->call.cast_to)); break;
	case EXPR_SELECT: fputs("Select", fp); break;
	case EXPR_UNARY: fprintf(fp, "Unary %s", op_spelling(e->bin.op)); break;
	case EXPR_BINARY: fprintf(fp, "Binary %s", op_spelling(e->bin.op)); break;
	case EXPR_REDUCE: fprintf(fp, "Reduce %s", reduce_spelling(e->reduce.op)); break;
	}
	at(d, e->loc);
	switch (e->kind) {
	case EXPR_ACCESS: case EXPR_CALL: case EXPR_CAST: case EXPR_SELECT:
		for (int i = 0; i < e->call.nargs; i++)
			dump_expr(d, e->call.args[i], depth + 1, e->call.keys && e->call.keys[i] ?
			    arena_printf(perm, "%s = ", e->call.keys[i]) : NULL);
		break;
	case EXPR_UNARY:
		dump_expr(d, e->bin.a, depth + 1, NULL);
		break;
	case EXPR_BINARY:
		dump_expr(d, e->bin.a, depth + 1, NULL);
		dump_expr(d, e->bin.b, depth + 1, NULL);
		break;
	case EXPR_REDUCE:
		for (int i = 0; i < e->reduce.naxes; i++) {
			RedAxis *ax = &e->reduce.axes[i];
			indent(d, depth + 1, NULL);
			fprintf(fp, "Range %s", str_or(ax->name));
			at(d, ax->loc);
			if (ax->lo)
				dump_expr(d, ax->lo, depth + 2, "lo: ");
			dump_expr(d, ax->hi, depth + 2, "hi: ");
		}
		if (e->reduce.where)
			dump_expr(d, e->reduce.where, depth + 1, "where: ");
		dump_expr(d, e->reduce.body, depth + 1, "body: ");
		break;
	default:
		break;
	}
}

static void
dump_arg(Dump *d, SchedArg *a, int depth)
{
	FILE *fp = d->fp;
	indent(d, depth, "Arg ");
	if (a->key)
		fprintf(fp, "%s= ", a->key);
	switch (a->kind) {
	case ARG_INT: fprintf(fp, "Int %lld", (long long)a->ival); break;
	case ARG_FLOAT: fputs("Float ", fp); put_float(fp, a->fval); break;
	case ARG_STRING: fputs("String ", fp); put_string(fp, a->str); break;
	case ARG_NAME: fprintf(fp, "Name %s", str_or(a->str)); break;
	case ARG_DOTTED: fprintf(fp, "Dotted %s.%s", str_or(a->str), str_or(a->str2)); break;
	case ARG_LIST: fputs("List", fp); break;
	}
	at(d, a->loc);
	if (a->kind == ARG_LIST)
		for (int i = 0; i < a->nlist; i++)
			dump_arg(d, &a->list[i], depth + 1);
}

static void dump_items(Dump *d, KernelItem *items, int nitems);

static void
dump_kernel(Dump *d, Kernel *k)
{
	FILE *fp = d->fp;
	if (k->intr_target)
		fprintf(fp, "Intrinsic %s for %s emit \"%s\"", str_or(k->name), k->intr_target,
		    str_or(k->intr_emit));
	else
		fprintf(fp, "Kernel %s", str_or(k->name));
	at(d, k->loc);
	for (int i = 0; i < k->nparams; i++) {
		Param *p = &k->params[i];
		indent(d, 1, NULL);
		fprintf(fp, "Param %s %s", str_or(p->name), p->is_size ? "size" : type_name(p->type));
		at(d, p->loc);
	}
	dump_items(d, k->items, k->nitems);
}

static void
dump_items(Dump *d, KernelItem *items, int nitems)
{
	FILE *fp = d->fp;
	static const char *const roles[] = { "in ", "out ", "" };
	for (int i = 0; i < nitems; i++) {
		Tensor *t = items[i].decl;
		Rule *r = items[i].rule;
		Call *c = items[i].call;
		indent(d, 1, NULL);
		if (c) {
			fprintf(fp, "Call %s ->", str_or(c->callee));
			for (int j = 0; j < c->nouts; j++)
				fprintf(fp, " %s", str_or(c->outs[j]));
			at(d, c->loc);
			for (int j = 0; j < c->nargs; j++)
				dump_expr(d, c->args[j], 2, c->keys && c->keys[j] ?
				    arena_printf(perm, "%s = ", c->keys[j]) : NULL);
		} else if (t) {
			fprintf(fp, "Decl %s%s %s[%d]", t->is_const ? "const " : roles[t->role],
			    str_or(t->name), type_name(t->elem), t->ndims);
			if (t->is_const)
				fprintf(fp, " %s(\"%s\", %lld)", t->cmem ? "data" : "file",
				    str_or(t->cpath), (long long)t->coffset);
			at(d, t->loc);
			for (int j = 0; j < t->ndims; j++)
				dump_expr(d, t->shape[j], 2, NULL);
		} else if (r && r->update) {
			fprintf(fp, "Update %s%s", str_or(r->name), r->upd_add ? " +=" : " =");
			at(d, r->loc);
			for (int j = 0; j < r->upd.naxes; j++) {
				RedAxis *ax = &r->upd.axes[j];
				indent(d, 2, NULL);
				fprintf(fp, "Range %s", str_or(ax->name));
				at(d, ax->loc);
				if (ax->lo)
					dump_expr(d, ax->lo, 3, "lo: ");
				dump_expr(d, ax->hi, 3, "hi: ");
			}
			if (r->upd.where)
				dump_expr(d, r->upd.where, 2, "where: ");
			dump_expr(d, r->target, 2, "at: ");
			dump_expr(d, r->upd_add ? r->upd_rhs : r->value, 2, "value: ");
		} else if (r && r->tuple) {
			TupleRed *t = r->tuple;
			fprintf(fp, "TupleReduce %s%s", str_or(r->name), t->assoc ? " associative" : "");
			at(d, r->loc);
			if (t->where)
				dump_expr(d, t->where, 2, "where: ");
			for (int j = 0; j < t->nvals; j++)
				dump_expr(d, t->vals[j], 2, "value: ");
			for (int j = 0; j < t->ncomb; j++)
				dump_expr(d, t->comb[j], 2, "combine: ");
			for (int j = 0; j < t->nident; j++)
				dump_expr(d, t->ident[j], 2, "identity: ");
		} else if (r) {
			fprintf(fp, "Rule %s[", str_or(r->name));
			for (int j = 0; j < r->naxes; j++)
				if (r->init && j == r->init_dim)
					fprintf(fp, "%s%lld", j ? ", " : "", (long long)r->init_step);
				else
					fprintf(fp, "%s%s", j ? ", " : "", str_or(r->axes[j]));
			fputc(']', fp);
			at(d, r->loc);
			dump_expr(d, r->value, 2, NULL);
		} else {
			fputs("<empty item>\n", fp);
		}
	}
}

static void
dump_prims(Dump *d, SchedPrim *prims, int n, int depth)
{
	FILE *fp = d->fp;
	for (int i = 0; i < n; i++) {
		SchedPrim *p = &prims[i];
		indent(d, depth, NULL);
		if (p->form == SCHED_KNOB) {
			fprintf(fp, "Knob %s", str_or(p->knob));
			at(d, p->loc);
			for (int j = 0; j < p->nargs; j++)
				dump_arg(d, &p->args[j], depth + 1);
			continue;
		}
		if (p->cond) {
			fputs(p->form == SCHED_WHEN ? "When" : "Specialize", fp);
			at(d, p->loc);
			dump_expr(d, p->cond, depth + 1, NULL);
			dump_prims(d, p->body, p->nbody, depth + 1);
			continue;
		}
		fprintf(fp, "Prim %s.%s", str_or(p->stage), str_or(p->prim));
		at(d, p->loc);
		for (int j = 0; j < p->nargs; j++)
			dump_arg(d, &p->args[j], depth + 1);
		for (int j = 0; j < p->nouts; j++) {
			indent(d, depth + 1, NULL);
			fprintf(fp, "Out %s", str_or(p->outs[j]));
			at(d, p->out_locs ? p->out_locs[j] : loc_none);
		}
	}
}

static void
dump_schedule(Dump *d, Schedule *s)
{
	FILE *fp = d->fp;
	fprintf(fp, "Schedule %s", str_or(s->kernel));
	if (s->name)
		fprintf(fp, " as %s", s->name);
	fprintf(fp, " for %s", str_or(s->target));
	if (s->from)
		fprintf(fp, " = %s", s->from);
	at(d, s->loc);
	if (s->tmpl)
		dump_prims(d, s->tmpl, s->ntmpl, 1);
	else
		dump_prims(d, s->prims, s->nprims, 1);
}

void
ast_dump(FILE *fp, Program *p)
{
	Dump d = { .fp = fp };
	lines_init(&d.lines, p->file);
	const SrcFile *f = source_get(p->file);
	fprintf(fp, "Program %s\n", f ? f->name : "<none>");
	for (int i = 0; i < p->nitems; i++) {
		Item *it = &p->items[i];
		if (it->import) {
			fputs("Import ", fp);
			put_string(fp, it->import->path);
			at(&d, it->import->loc);
		} else if (it->kernel) {
			dump_kernel(&d, it->kernel);
		} else if (it->intrinsic) {
			dump_kernel(&d, it->intrinsic);
		} else if (it->schedule) {
			dump_schedule(&d, it->schedule);
		} else if (it->layout) {
			fprintf(fp, "Layout %s for %s", str_or(it->layout->kernel),
			    str_or(it->layout->target));
			at(&d, it->layout->loc);
			dump_items(&d, it->layout->items, it->layout->nitems);
		}
	}
	arena_free(d.lines.arena);
}

/* ---- format -------------------------------------------------------------------
 * Precedence levels, loosest first; a child is parenthesised when its
 * level is below what its position needs.  ?: and reductions share the
 * lowest level: both extend as far right as they can. */
enum {
	P_SELECT = 1, P_OR, P_AND, P_BITOR, P_BITXOR, P_BITAND, P_EQ, P_REL,
	P_SHIFT, P_ADD, P_MUL, P_UNARY, P_PRIMARY
};

static int
binary_level(Op op)
{
	switch (op) {
	case OP_OR: return P_OR;
	case OP_AND: return P_AND;
	case OP_BITOR: return P_BITOR;
	case OP_BITXOR: return P_BITXOR;
	case OP_BITAND: return P_BITAND;
	case OP_EQ: case OP_NE: return P_EQ;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: return P_REL;
	case OP_SHL: case OP_SHR: return P_SHIFT;
	case OP_ADD: case OP_SUB: return P_ADD;
	default: return P_MUL;
	}
}

static int
level(Expr *e)
{
	switch (e->kind) {
	case EXPR_SELECT: case EXPR_REDUCE: return P_SELECT;
	case EXPR_BINARY: return binary_level(e->bin.op);
	case EXPR_UNARY: return P_UNARY;
	case EXPR_INT: return e->ival < 0 ? P_UNARY : P_PRIMARY;
	case EXPR_FLOAT: return e->fval < 0 ? P_UNARY : P_PRIMARY;
	default: return P_PRIMARY;
	}
}

/* The shortest decimal that reads back as the same double, always with a
 * '.' or an exponent so that it lexes as a floating-point literal. */
static void
put_float(FILE *fp, double v)
{
	char buf[48];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof buf - 2, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".eEn"))
		strcat(buf, ".0");
	fputs(buf, fp);
}

static void
put_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\t': fputs("\\t", fp); break;
		default: fputc(*s, fp); break;
		}
	}
	fputc('"', fp);
}

static void format_expr(FILE *fp, Expr *e, int need);

/* A call's arguments, some of them named (keys may be NULL). */
static void
format_args(FILE *fp, Expr **args, const char **keys, int n)
{
	for (int i = 0; i < n; i++) {
		fputs(i ? ", " : "", fp);
		if (keys && keys[i])
			fprintf(fp, "%s = ", keys[i]);
		format_expr(fp, args[i], P_SELECT);
	}
}

static void format_list(FILE *fp, Expr **args, int n);

/* A tuple reduction, as written (tx.5 TUPLE REDUCTIONS). */
static void
format_tuple(FILE *fp, TupleRed *t)
{
	fputs(" ", fp);
	for (int j = 0; j < t->n; j++) {
		fprintf(fp, "%s %s[", j ? "," : "", str_or(t->names[j]));
		format_list(fp, t->lhs[j], t->nlhs[j]);
		fputc(']', fp);
	}
	fputs(" = reduce(", fp);
	format_list(fp, t->ranges, t->nranges);
	if (t->where) {
		fputs(" where ", fp);
		format_expr(fp, t->where, 0);
	}
	fputs(") (", fp);
	format_list(fp, t->vals, t->nvals);
	fputs(t->assoc ? ") combine associative (" : ") combine (", fp);
	format_list(fp, t->accs, t->naccs);
	fputs("), (", fp);
	format_list(fp, t->elems, t->nelems);
	fputs(") -> (", fp);
	format_list(fp, t->comb, t->ncomb);
	fputc(')', fp);
	if (t->ident) {
		fputs(" identity (", fp);
		format_list(fp, t->ident, t->nident);
		fputc(')', fp);
	}
	fputs(";\n", fp);
}


static void
format_list(FILE *fp, Expr **args, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", fp);
		format_expr(fp, args[i], P_SELECT);
	}
}

static void format_expr(FILE *fp, Expr *e, int need);

/* The ranges of a reduction or an update definition, and its where. */
static void
format_ranges(FILE *fp, Reduce *red)
{
	for (int i = 0; i < red->naxes; i++) {
		RedAxis *ax = &red->axes[i];
		if (i)
			fputs(", ", fp);
		/* `lo <= k < hi` reads as (lo <= k) < hi: lo is a left operand
		 * of a comparison, hi a right one. */
		if (ax->lo) {
			format_expr(fp, ax->lo, P_REL);
			fputs(" <= ", fp);
		}
		fprintf(fp, "%s %s ", str_or(ax->name), ax->incl ? "<=" : "<");
		format_expr(fp, ax->incl && ax->hi->kind == EXPR_BINARY ? ax->hi->bin.a : ax->hi,
		    P_REL + 1);
	}
	if (red->where) {
		fputs(" where ", fp);
		format_expr(fp, red->where, P_SELECT);
	}
}

static void
format_expr(FILE *fp, Expr *e, int need)
{
	if (!e) {
		fputs("0", fp);
		return;
	}
	bool paren = level(e) < need;
	if (paren)
		fputc('(', fp);
	switch (e->kind) {
	case EXPR_INT: fprintf(fp, "%lld", (long long)e->ival); break;
	case EXPR_FLOAT: put_float(fp, e->fval); break;
	case EXPR_BOOL: fputs(e->ival ? "true" : "false", fp); break;
	case EXPR_NAME: fputs(str_or(e->id.name), fp); break;
	case EXPR_ACCESS:
		fprintf(fp, "%s[", str_or(e->call.name));
		format_list(fp, e->call.args, e->call.nargs);
		fputc(']', fp);
		break;
	case EXPR_CALL:
	case EXPR_CAST:
		fprintf(fp, "%s(", e->kind == EXPR_CAST ? type_name(e->call.cast_to) : str_or(e->call.name));
		format_args(fp, e->call.args, e->call.keys, e->call.nargs);
		fputc(')', fp);
		break;
	case EXPR_SELECT:
		if (e->call.nargs != 3)
			break;
		format_expr(fp, e->call.args[0], P_OR);
		fputs(" ? ", fp);
		/* A ?: between ? and : needs no parentheses, but reads better with them. */
		format_expr(fp, e->call.args[1], P_OR);
		fputs(" : ", fp);
		format_expr(fp, e->call.args[2], P_SELECT);
		break;
	case EXPR_UNARY:
		fputs(op_spelling(e->bin.op), fp);
		format_expr(fp, e->bin.a, P_UNARY);
		break;
	case EXPR_BINARY: {
		int l = binary_level(e->bin.op);
		format_expr(fp, e->bin.a, l);
		fprintf(fp, " %s ", op_spelling(e->bin.op));
		format_expr(fp, e->bin.b, l + 1);
		break;
	}
	case EXPR_REDUCE:
		fprintf(fp, "%s(", reduce_spelling(e->reduce.op));
		format_ranges(fp, &e->reduce);
		fputs(") ", fp);
		format_expr(fp, e->reduce.body, P_SELECT);
		break;
	}
	if (paren)
		fputc(')', fp);
}

void
ast_format_expr(FILE *fp, Expr *e)
{
	format_expr(fp, e, P_SELECT);
}

static void
format_arg(FILE *fp, SchedArg *a)
{
	if (a->key)
		fprintf(fp, "%s = ", a->key);
	switch (a->kind) {
	case ARG_INT: fprintf(fp, "%lld", (long long)a->ival); break;
	case ARG_FLOAT: put_float(fp, a->fval); break;
	case ARG_STRING: put_string(fp, a->str); break;
	case ARG_NAME: fputs(str_or(a->str), fp); break;
	case ARG_DOTTED: fprintf(fp, "%s.%s", str_or(a->str), str_or(a->str2)); break;
	case ARG_LIST:
		fputc('[', fp);
		for (int i = 0; i < a->nlist; i++) {
			if (i)
				fputs(", ", fp);
			format_arg(fp, &a->list[i]);
		}
		fputc(']', fp);
		break;
	}
}

static void format_items(FILE *fp, KernelItem *items, int nitems);

static void
format_kernel(FILE *fp, Kernel *k)
{
	fprintf(fp, "%s %s(", k->intr_target ? "intrinsic" : "kernel", str_or(k->name));
	for (int i = 0; i < k->nparams; i++) {
		Param *p = &k->params[i];
		fprintf(fp, "%s%s", i ? ", " : "", str_or(p->name));
		if (!p->is_size)
			fprintf(fp, ": %s", type_name(p->type));
	}
	if (k->intr_target) {
		fprintf(fp, ") for %s emit ", k->intr_target);
		put_string(fp, k->intr_emit ? k->intr_emit : "");
		fputs(" {\n", fp);
	} else {
		fputs(") {\n", fp);
	}
	format_items(fp, k->items, k->nitems);
	fputs("}\n", fp);
}

/* A layout declaration: its body is call statements. */
static void
format_layout(FILE *fp, LayoutDecl *l)
{
	fprintf(fp, "layout %s for %s {\n", str_or(l->kernel), str_or(l->target));
	format_items(fp, l->items, l->nitems);
	fputs("}\n", fp);
}

static void
format_items(FILE *fp, KernelItem *items, int nitems)
{
	static const char *const roles[] = { "in ", "out ", "" };
	for (int i = 0; i < nitems; i++) {
		Tensor *t = items[i].decl;
		Rule *r = items[i].rule;
		Call *c = items[i].call;
		if (c) {
			fputs("  (", fp);
			for (int j = 0; j < c->nouts; j++)
				fprintf(fp, "%s%s", j ? ", " : "", str_or(c->outs[j]));
			fprintf(fp, ") = %s(", str_or(c->callee));
			format_args(fp, c->args, c->keys, c->nargs);
			fputs(");\n", fp);
		} else if (t) {
			fprintf(fp, "  %s%s: %s", t->is_const ? "const " : roles[t->role],
			    str_or(t->name), type_name(t->elem));
			if (t->ndims > 0) {
				fputc('[', fp);
				format_list(fp, t->shape, t->ndims);
				fputc(']', fp);
			}
			if (t->is_const) {
				fprintf(fp, " = %s(", t->cmem ? "data" : "file");
				put_string(fp, t->cpath ? t->cpath : "");
				if (t->coffset)
					fprintf(fp, ", %lld", (long long)t->coffset);
				fputc(')', fp);
			}
			fputs(";\n", fp);
		} else if (r && r->update && r->target) {
			fputs("  for (", fp);
			format_ranges(fp, &r->upd);
			fputs(") ", fp);
			format_expr(fp, r->target, P_SELECT);
			fputs(r->upd_add ? " += " : " = ", fp);
			ast_format_expr(fp, r->upd_add ? r->upd_rhs : r->value);
			fputs(";\n", fp);
		} else if (r && r->tuple) {
			format_tuple(fp, r->tuple);
		} else if (r) {
			fprintf(fp, "  %s", str_or(r->name));
			if (r->naxes > 0) {
				fputc('[', fp);
				for (int j = 0; j < r->naxes; j++)
					if (r->init && j == r->init_dim)
						fprintf(fp, "%s%lld", j ? ", " : "", (long long)r->init_step);
					else
						fprintf(fp, "%s%s", j ? ", " : "", str_or(r->axes[j]));
				fputc(']', fp);
			}
			fputs(" = ", fp);
			ast_format_expr(fp, r->value);
			fputs(";\n", fp);
		}
	}
}

static void format_prims(FILE *fp, SchedPrim *prims, int n, int depth);

void
ast_format_prims(FILE *fp, SchedPrim *prims, int n, int depth)
{
	format_prims(fp, prims, n, depth);
}

static void
format_schedule(FILE *fp, Schedule *s)
{
	fprintf(fp, "schedule %s", str_or(s->kernel));
	if (s->name)
		fprintf(fp, " as %s", s->name);
	if (s->from) {
		fprintf(fp, " for %s = %s;\n", str_or(s->target), s->from);
		return;
	}
	fprintf(fp, " for %s {\n", str_or(s->target));
	if (s->tmpl)
		format_prims(fp, s->tmpl, s->ntmpl, 1);
	else
		format_prims(fp, s->prims, s->nprims, 1);
	fputs("}\n", fp);
}

/* The primitives of the knob point s now holds, as an ordinary schedule
 * called name (NULL: s's own name), for txc tune -o. */
void
ast_format_schedule(FILE *fp, Schedule *s, const char *name)
{
	fprintf(fp, "schedule %s", str_or(s->kernel));
	if (name || s->name)
		fprintf(fp, " as %s", name ? name : s->name);
	fprintf(fp, " for %s {\n", str_or(s->target));
	format_prims(fp, s->prims, s->nprims, 1);
	fputs("}\n", fp);
}

static void
format_prims(FILE *fp, SchedPrim *prims, int n, int depth)
{
	for (int i = 0; i < n; i++) {
		SchedPrim *p = &prims[i];
		fprintf(fp, "%*s", 2 * depth, "");
		if (p->form == SCHED_KNOB) {
			fprintf(fp, "knob %s in [", str_or(p->knob));
			for (int j = 0; j < p->nargs; j++) {
				if (j)
					fputs(", ", fp);
				format_arg(fp, &p->args[j]);
			}
			fputs("];\n", fp);
			continue;
		}
		if (p->cond) {
			fputs(p->form == SCHED_WHEN ? "when (" : "specialize (", fp);
			ast_format_expr(fp, p->cond);
			fputs(") {\n", fp);
			format_prims(fp, p->body, p->nbody, depth + 1);
			fprintf(fp, "%*s}\n", 2 * depth, "");
			continue;
		}
		fprintf(fp, "%s.%s(", str_or(p->stage), str_or(p->prim));
		for (int j = 0; j < p->nargs; j++) {
			if (j)
				fputs(", ", fp);
			format_arg(fp, &p->args[j]);
		}
		fputc(')', fp);
		if (p->nouts == 1)
			fprintf(fp, " -> %s", str_or(p->outs[0]));
		else if (p->nouts > 1) {
			fputs(" -> (", fp);
			for (int j = 0; j < p->nouts; j++)
				fprintf(fp, "%s%s", j ? ", " : "", str_or(p->outs[j]));
			fputc(')', fp);
		}
		fputs(";\n", fp);
	}
}

void
ast_format(FILE *fp, Program *p)
{
	for (int i = 0; i < p->nitems; i++) {
		Item *it = &p->items[i];
		if (i > 0)
			fputc('\n', fp);
		if (it->import) {
			fputs("import ", fp);
			put_string(fp, it->import->path);
			fputs(";\n", fp);
		} else if (it->kernel) {
			format_kernel(fp, it->kernel);
		} else if (it->intrinsic) {
			format_kernel(fp, it->intrinsic);
		} else if (it->schedule) {
			format_schedule(fp, it->schedule);
		} else if (it->layout) {
			format_layout(fp, it->layout);
		}
	}
}
