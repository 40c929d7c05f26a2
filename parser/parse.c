/* parse.c: the push loop that feeds the lexer's tokens to the lemon parser,
 * and the wording of syntax errors.
 *
 * The parser is lemon's push parser (grammar.y): it takes one token per
 * call and builds the Program through the ParseState it is handed.  Its
 * state, with its fixed-size stack, is the one thing malloc'd here; it is
 * freed when the file is parsed (everything it builds lives in perm).
 */
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "grammar.h"

/* lemon's interface (generated into grammar.c, not into grammar.h). */
void *grammarAlloc(void *(*mallocProc)(size_t));
void grammarFree(void *p, void (*freeProc)(void *));
void grammar(void *p, int kind, Token tok, ParseState *ps);

static const char *const token_names[] = {
	[0] = "end of file",
	[TK_IMPORT] = "'import'", [TK_KERNEL] = "'kernel'",
	[TK_SCHEDULE] = "'schedule'", [TK_FOR] = "'for'", [TK_AS] = "'as'",
	[TK_IN] = "'in'", [TK_OUT] = "'out'", [TK_TRUE] = "'true'",
	[TK_FALSE] = "'false'", [TK_TYPE] = "a type name",
	[TK_REDOP] = "a reduction", [TK_IDENT] = "a name",
	[TK_INT] = "an integer", [TK_FLOAT] = "a floating-point number",
	[TK_STRING] = "a string", [TK_LP] = "'('", [TK_RP] = "')'",
	[TK_LB] = "'['", [TK_RB] = "']'", [TK_LC] = "'{'", [TK_RC] = "'}'",
	[TK_COMMA] = "','", [TK_SEMI] = "';'", [TK_COLON] = "':'",
	[TK_DOT] = "'.'", [TK_ARROW] = "'->'", [TK_ASSIGN] = "'='",
	[TK_QUESTION] = "'?'", [TK_OROR] = "'||'",
	[TK_ANDAND] = "'&&'", [TK_PIPE] = "'|'", [TK_CARET] = "'^'",
	[TK_AMP] = "'&'", [TK_EQ] = "'=='", [TK_NE] = "'!='", [TK_LT] = "'<'",
	[TK_LE] = "'<='", [TK_GT] = "'>'", [TK_GE] = "'>='", [TK_SHL] = "'<<'",
	[TK_SHR] = "'>>'", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'",
	[TK_STAR] = "'*'", [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'",
	[TK_BANG] = "'!'", [TK_TILDE] = "'~'", [TK_RESERVED] = "a reserved word",
	[TK_INTRINSIC] = "'intrinsic'", [TK_KNOB] = "'knob'", [TK_WHERE] = "'where'", [TK_CONST] = "'const'", [TK_LAYOUT] = "'layout'",
};

const char *
parse_token_name(int kind)
{
	if (kind < 0 || kind >= (int)(sizeof token_names / sizeof *token_names)
	    || !token_names[kind])
		return "?";
	return token_names[kind];
}

/* Tokens that are never worth listing as "expected": binary operators fit
 * after almost any expression. */
static bool
is_operator(int k)
{
	switch (k) {
	case TK_QUESTION: case TK_OROR: case TK_ANDAND: case TK_PIPE:
	case TK_CARET: case TK_AMP: case TK_EQ: case TK_NE: case TK_LT:
	case TK_LE: case TK_GT: case TK_GE: case TK_SHL: case TK_SHR:
	case TK_PLUS: case TK_MINUS: case TK_STAR: case TK_SLASH:
	case TK_PERCENT:
		return true;
	}
	return false;
}

/* Tokens that can start an expression. */
static bool
starts_expr(int k)
{
	switch (k) {
	case TK_IDENT: case TK_INT: case TK_FLOAT: case TK_TRUE: case TK_FALSE:
	case TK_LP: case TK_MINUS: case TK_BANG: case TK_TILDE: case TK_TYPE:
	case TK_REDOP:
		return true;
	}
	return false;
}

void
parse_syntax_error(ParseState *ps, const Token *t, const unsigned char *expected, int nkinds)
{
	const SrcFile *f = source_get(t->loc.file);
	const char *text = f ? f->text + t->loc.begin : "";
	int len = (int)(t->loc.end - t->loc.begin);
	char what[96];
	if (t->kind == 0)
		snprintf(what, sizeof what, "unexpected end of file");
	else if (t->kind == TK_RESERVED || t->kind == TK_KNOB)   /* knob: only in a schedule */
		snprintf(what, sizeof what, "'%.*s' is a reserved word", len, text);
	else if (len > 40)
		snprintf(what, sizeof what, "unexpected '%.32s...'", text);
	else
		snprintf(what, sizeof what, "unexpected '%.*s'", len, text);

	/* What could have come instead, when it is short enough to help. */
	const char *list[8];
	int n = 0;
	bool expr = nkinds > TK_BANG && expected[TK_BANG];
	if (expr)
		list[n++] = "an expression";
	for (int k = 1; k < nkinds && n <= 6; k++) {
		/* 'const' (a constant tensor) is rare enough at a statement's
		 * start not to lengthen the list past what helps */
		if (!expected[k] || is_operator(k) || (expr && starts_expr(k)) || k == TK_CONST)
			continue;
		list[n++] = parse_token_name(k);
	}
	if (n == 0 || n > 6) {
		diag_error(t->loc, "%s", what);
		return;
	}
	char buf[256];
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
		used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", sep, list[i]);
		if (used >= sizeof buf)
			break;
	}
	diag_error(t->loc, "%s; expected %s", what, buf);
	(void)ps;
}

Program *
parse_program(uint32_t file)
{
	if (!perm)
		perm = arena_new();
	ParseState ps = { 0 };
	ps.file = file;
	ps.prog = arena_alloc(perm, sizeof *ps.prog);
	ps.prog->file = file;
	if (!source_get(file))
		return ps.prog;
	Lexer lx;
	lexer_init(&lx, file);
	void *parser = grammarAlloc(malloc);
	if (!parser)
		diag_fatal("out of memory");
	Token t;
	do {
		lexer_next(&lx, &t);
		ps.cur = t;
		grammar(parser, t.kind, t, &ps);
	} while (t.kind != 0 && !ps.stop);
	grammarFree(parser, free);
	return ps.prog;
}

void
parse_dump_tokens(FILE *fp, uint32_t file)
{
	const SrcFile *f = source_get(file);
	if (!f)
		return;
	Lexer lx;
	lexer_init(&lx, file);
	Token t;
	do {
		lexer_next(&lx, &t);
		int line, col;
		source_linecol(file, t.loc.begin, &line, &col);
		fprintf(fp, "%d:%d %s", line, col, parse_token_name(t.kind));
		switch (t.kind) {
		case TK_INT: fprintf(fp, " %lld", (long long)t.ival); break;
		case TK_FLOAT: fprintf(fp, " %.17g", t.fval); break;
		case TK_IDENT: fprintf(fp, " %s", t.str); break;
		case TK_STRING: fprintf(fp, " \"%s\"", t.str); break;
		case TK_TYPE: case TK_REDOP: case TK_RESERVED:
			fprintf(fp, " %.*s", (int)(t.loc.end - t.loc.begin), f->text + t.loc.begin);
			break;
		}
		fputc('\n', fp);
	} while (t.kind != 0);
}
