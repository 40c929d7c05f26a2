/* nest.c: the loop nest as txc viz shows it, and the line of each
 * statement.
 *
 * The text is ir_print_func's (what --print-loops prints).  Statements
 * are mapped to lines in printing order: each statement's first line,
 * printed alone, is searched for after the previous statement's line, so
 * the map needs nothing of the printer but its output.  Each line also
 * gets the loops around it (outermost first, a loop's own line included),
 * which name the loop values a store records.
 */
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"

/* The line of each statement of the nest (a pointer hash). */
typedef struct {
	IrStmt *s;
	int line;
} LineOf;

struct VizLines {
	LineOf *tab;
	int cap;
};

static size_t
hash_ptr(const void *p, int cap)
{
	uintptr_t u = (uintptr_t)p;
	u ^= u >> 17;
	u *= 0x9E3779B97F4A7C15ull;
	return (size_t)(u >> 20) % (size_t)cap;
}

int
viz_line_of(VizLines *m, IrStmt *s)
{
	for (size_t h = hash_ptr(s, m->cap); m->tab[h].s; h = (h + 1) % m->cap)
		if (m->tab[h].s == s)
			return m->tab[h].line;
	return 0;
}

static void
set_line(VizLines *m, IrStmt *s, int line)
{
	size_t h = hash_ptr(s, m->cap);
	while (m->tab[h].s && m->tab[h].s != s)
		h = (h + 1) % m->cap;
	if (!m->tab[h].s)
		m->tab[h] = (LineOf){ s, line };
}

static int
count_stmts(IrStmt *s)
{
	if (!s)
		return 0;
	switch (s->kind) {
	case IS_FOR: return 1 + count_stmts(s->loop.body);
	case IS_LET: return 1 + count_stmts(s->let.body);
	case IS_ALLOCATE: return 1 + count_stmts(s->alloc.body);
	case IS_PRODUCE: return 1 + count_stmts(s->produce.body);
	case IS_IF: return 1 + count_stmts(s->ifs.then_s) + count_stmts(s->ifs.else_s);
	case IS_BLOCK: {
		int n = 0;
		for (int i = 0; i < s->block.n; i++)
			n += count_stmts(s->block.stmts[i]);
		return n;
	}
	default: return 1;
	}
}

/* The text lines, without their indentation. */
typedef struct {
	char **text;
	int n, at;                 /* at: the next line to search from */
	const char **stack; int nstack, capstack;   /* loop names */
} Lines;

/* The first line ir_print_stmt prints for s. */
static char *
first_line(IrStmt *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		diag_fatal("out of memory");
	IrStmt one = *s;
	/* print the statement alone: its body is not needed */
	switch (one.kind) {
	case IS_FOR: one.loop.body = NULL; break;
	case IS_LET: one.let.body = NULL; break;
	case IS_ALLOCATE: one.alloc.body = NULL; break;
	case IS_PRODUCE: one.produce.body = NULL; break;
	case IS_IF: one.ifs.then_s = one.ifs.else_s = NULL; break;
	default: break;
	}
	ir_print_stmt(fp, &one, 0);
	fclose(fp);
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	char *out = arena_strdup(perm, buf);
	free(buf);
	return out;
}

/* Maps the statements to lines in printing order (each statement's first
 * line is searched for after the previous one's) and records the loops
 * around each line. */
static void
map_lines(VizLines *m, VizTrace *t, Lines *L, IrStmt *s)
{
	if (!s)
		return;
	if (s->kind == IS_BLOCK) {
		for (int i = 0; i < s->block.n; i++)
			map_lines(m, t, L, s->block.stmts[i]);
		return;
	}
	char *want = first_line(s);
	for (int i = L->at; i < L->n; i++)
		if (!strcmp(L->text[i], want)) {
			set_line(m, s, i + 1);
			L->at = i + 1;
			t->line_nloops[i + 1] = L->nstack + (s->kind == IS_FOR);
			t->line_loops[i + 1] = arena_alloc(perm, (L->nstack + 2) * sizeof(char *));
			if (L->nstack)
				memcpy(t->line_loops[i + 1], L->stack, L->nstack * sizeof(char *));
			if (s->kind == IS_FOR)
				t->line_loops[i + 1][L->nstack] = s->loop.var->name;
			break;
		}
	switch (s->kind) {
	case IS_FOR:
		*ARENA_PUSH(perm, L->stack, L->nstack, L->capstack) = s->loop.var->name;
		map_lines(m, t, L, s->loop.body);
		L->nstack--;
		break;
	case IS_LET: map_lines(m, t, L, s->let.body); break;
	case IS_ALLOCATE: map_lines(m, t, L, s->alloc.body); break;
	case IS_PRODUCE: map_lines(m, t, L, s->produce.body); break;
	case IS_IF:
		map_lines(m, t, L, s->ifs.then_s);
		map_lines(m, t, L, s->ifs.else_s);
		break;
	default: break;
	}
}

VizLines *
viz_nest(VizTrace *t)
{
	VizLines *m = arena_alloc(perm, sizeof *m);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		diag_fatal("out of memory");
	ir_print_func(fp, t->f);
	fclose(fp);
	t->loops = arena_strdup(perm, buf);
	free(buf);

	Lines L = { 0 };
	int cap = 0;
	for (char *p = arena_strdup(perm, t->loops), *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p) - 1;
		else
			*nl = 0;
		while (*p == ' ')
			p++;
		*ARENA_PUSH(perm, L.text, L.n, cap) = p;
	}
	t->nlines = L.n;
	t->line_loops = arena_alloc(perm, (L.n + 2) * sizeof *t->line_loops);
	t->line_nloops = arena_alloc(perm, (L.n + 2) * sizeof *t->line_nloops);
	m->cap = 2 * count_stmts(t->f->body) + 16;
	m->tab = arena_alloc(perm, m->cap * sizeof *m->tab);
	L.at = 1;   /* the func line */
	map_lines(m, t, &L, t->f->body);
	return m;
}

