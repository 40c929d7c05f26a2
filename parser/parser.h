/* parser.h: text to AST.
 *
 * Takes a source file registered with source_load/source_add and gives a
 * Program (lang/ast.h), or reports syntax errors through diag and returns
 * a partial Program (statement-level recovery).  Nothing more: names and
 * types are sema's business.
 *
 * The lexer (lexer.re) and the push loop (parse.c) are exposed as well, for
 * the grammar and for unit tests.
 */
#ifndef TXC_PARSER_H
#define TXC_PARSER_H

#include <stdio.h>

#include "lang/ast.h"

/* parse.c: lexes and parses a whole file; never NULL. */
Program *parse_program(uint32_t file);

/* ---- lexer.re -----------------------------------------------------------
 * One token at a time from a whole NUL-terminated buffer.  Lexical errors
 * are reported through diag and lexing goes on: a bad literal still gives
 * its token (value 0), stray bytes and comments give none.                */
typedef struct {
	int kind;           /* TK_* from grammar.h; 0 at the end of the file */
	Loc loc;            /* the token's bytes */
	int64_t ival;       /* TK_INT; TK_TYPE: a ScalarType; TK_REDOP: a ReduceOp */
	double fval;        /* TK_FLOAT */
	const char *str;    /* TK_IDENT: the interned name; TK_STRING: the
	                       decoded contents (perm arena) */
} Token;

typedef struct {
	uint32_t file;
	const unsigned char *base;   /* the file's text */
	const unsigned char *cur;    /* where the next token starts */
	const unsigned char *lim;    /* the terminating NUL */
} Lexer;

void lexer_init(Lexer *lx, uint32_t file);
void lexer_next(Lexer *lx, Token *t);

/* ---- parse.c ------------------------------------------------------------ */
/* The state the grammar's actions share (lemon's %extra_argument). */
typedef struct {
	Program *prog;
	uint32_t file;
	Token cur;          /* the token being fed, for overflow messages */
	bool too_deep;      /* the nesting error was reported */
	bool stop;          /* the parser's stack overflowed: stop feeding */
	int cap_items, cap_imports, cap_kernels, cap_schedules;   /* prog arrays */
	int cap_intrinsics, cap_layouts;
} ParseState;

/* How a token kind reads in a message: "';'", "identifier". */
const char *parse_token_name(int kind);
/* Prints one line per token: kind, line:col, text (unit tests, debugging). */
void parse_dump_tokens(FILE *fp, uint32_t file);
/* The grammar's %syntax_error: `expected[k]` is set for every token kind
 * the parser could have shifted instead. */
void parse_syntax_error(ParseState *ps, const Token *t, const unsigned char *expected, int nkinds);
/* The deepest expression the parser builds; deeper ones are an error (every
 * later stage recurses over expressions). */
#define PARSE_MAX_DEPTH 1000

#endif
