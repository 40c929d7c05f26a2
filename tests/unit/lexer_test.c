/* lexer_test.c: the re2c lexer on small buffers.
 *
 * Token kinds, values and byte ranges; literal edge cases (INT64_MAX,
 * overflow, 1e308, 1e309, .5, 1.); comments; and every lexical error,
 * checked by its message and by lexing going on after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "grammar.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
	__FILE__, __LINE__, #c); failures++; } } while (0)

/* Diagnostics go to a memory buffer so tests can look at them. */
static char *diag_buf;
static size_t diag_len;
static FILE *diag_fp;

static void
diag_begin(void)
{
	if (diag_fp)
		fclose(diag_fp);
	free(diag_buf);
	diag_buf = NULL;
	diag_fp = open_memstream(&diag_buf, &diag_len);
	diag_set_stream(diag_fp);
	diag_set_color(0);
	diag_reset();
}

static const char *
diag_text(void)
{
	fflush(diag_fp);
	return diag_buf ? diag_buf : "";
}

enum { MAXTOK = 64 };
static Token toks[MAXTOK];
static int ntoks;

/* Lexes `src` (n bytes) into toks[], the end-of-file token included. */
static void
lex_n(const char *src, size_t n)
{
	diag_begin();
	uint32_t f = source_add("t.tx", src, n);
	Lexer lx;
	lexer_init(&lx, f);
	ntoks = 0;
	do
		lexer_next(&lx, &toks[ntoks++]);
	while (toks[ntoks - 1].kind != 0 && ntoks < MAXTOK);
}

static void lex(const char *src) { lex_n(src, strlen(src)); }

static bool
has(const char *msg)
{
	return strstr(diag_text(), msg) != NULL;
}

static void
test_tokens(void)
{
	lex("kernel f(M) { in A: f32[M]; }");
	int want[] = { TK_KERNEL, TK_IDENT, TK_LP, TK_IDENT, TK_RP, TK_LC, TK_IN,
	    TK_IDENT, TK_COLON, TK_TYPE, TK_LB, TK_IDENT, TK_RB, TK_SEMI, TK_RC, 0 };
	CHECK(ntoks == (int)(sizeof want / sizeof *want));
	for (int i = 0; i < ntoks && i < (int)(sizeof want / sizeof *want); i++)
		CHECK(toks[i].kind == want[i]);
	CHECK(toks[1].str == intern_cstr("f"));
	CHECK(toks[1].loc.begin == 7 && toks[1].loc.end == 8);
	CHECK(toks[9].ival == TY_F32);
	CHECK(toks[15].loc.begin == 29 && toks[15].loc.end == 29);
	CHECK(diag_errors() == 0);

	lex("-> <= >= == != && || << >> < > = ! ~ & | ^ ? : . , + - * / %");
	int ops[] = { TK_ARROW, TK_LE, TK_GE, TK_EQ, TK_NE, TK_ANDAND, TK_OROR,
	    TK_SHL, TK_SHR, TK_LT, TK_GT, TK_ASSIGN, TK_BANG, TK_TILDE, TK_AMP,
	    TK_PIPE, TK_CARET, TK_QUESTION, TK_COLON, TK_DOT, TK_COMMA, TK_PLUS,
	    TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, 0 };
	CHECK(ntoks == (int)(sizeof ops / sizeof *ops));
	for (int i = 0; i < ntoks && i < (int)(sizeof ops / sizeof *ops); i++)
		CHECK(toks[i].kind == ops[i]);

	lex("sum prod maximum minimum max min bool u64 f16 schedule as for out import true false");
	CHECK(toks[0].kind == TK_REDOP && toks[0].ival == RED_SUM);
	CHECK(toks[1].kind == TK_REDOP && toks[1].ival == RED_PROD);
	CHECK(toks[2].kind == TK_REDOP && toks[2].ival == RED_MAX);
	CHECK(toks[3].kind == TK_REDOP && toks[3].ival == RED_MIN);
	CHECK(toks[4].kind == TK_IDENT && toks[5].kind == TK_IDENT);   /* max/min are calls */
	CHECK(toks[6].kind == TK_TYPE && toks[6].ival == TY_BOOL);
	CHECK(toks[7].ival == TY_U64 && toks[8].ival == TY_F16);
	CHECK(toks[9].kind == TK_SCHEDULE && toks[10].kind == TK_AS && toks[11].kind == TK_FOR);
	CHECK(toks[12].kind == TK_OUT && toks[13].kind == TK_IMPORT);
	CHECK(toks[14].kind == TK_TRUE && toks[15].kind == TK_FALSE);
	lex("bf16 bf16x bf");
	CHECK(toks[0].kind == TK_TYPE && toks[0].ival == TY_BF16);
	CHECK(toks[1].kind == TK_IDENT && toks[2].kind == TK_IDENT);

	lex("intrinsic knob scan kernels _x1 x_");
	CHECK(toks[0].kind == TK_INTRINSIC && toks[1].kind == TK_KNOB && toks[2].kind == TK_RESERVED);
	CHECK(toks[3].kind == TK_IDENT && toks[4].kind == TK_IDENT && toks[5].kind == TK_IDENT);
}

static void
test_integers(void)
{
	lex("0 42 9223372036854775807 0x2a 0XFF 0x7fffffffffffffff");
	CHECK(diag_errors() == 0);
	CHECK(toks[0].kind == TK_INT && toks[0].ival == 0);
	CHECK(toks[1].ival == 42);
	CHECK(toks[2].ival == INT64_MAX);
	CHECK(toks[3].ival == 42 && toks[4].ival == 255);
	CHECK(toks[5].ival == INT64_MAX);

	lex("9223372036854775808 x");
	CHECK(diag_errors() == 1 && has("t.tx:1:1: error: integer literal too large"));
	CHECK(toks[0].kind == TK_INT && toks[0].ival == 0 && toks[1].kind == TK_IDENT);

	lex("0x8000000000000000");
	CHECK(diag_errors() == 1 && has("integer literal too large"));

	lex("99999999999999999999999999999999999999999");
	CHECK(diag_errors() == 1 && has("integer literal too large"));

	lex("012 00");
	CHECK(diag_errors() == 2 && has("t.tx:1:1: error: leading zeros are not allowed in decimal literals"));
	CHECK(toks[0].kind == TK_INT && toks[1].kind == TK_INT);

	lex("0x;");
	CHECK(diag_errors() == 1 && has("hexadecimal literal has no digits"));
	CHECK(toks[1].kind == TK_SEMI);

	lex("12abc 3");
	CHECK(diag_errors() == 1 && has("invalid numeric literal '12abc'"));
	CHECK(toks[0].kind == TK_INT && toks[1].kind == TK_INT && toks[1].ival == 3);
}

static void
test_floats(void)
{
	lex("1.0 1. .5 1e5 1.5e-3 2E+8 1e308 0.0 4.9e-324");
	CHECK(diag_errors() == 0);
	for (int i = 0; i < 9; i++)
		CHECK(toks[i].kind == TK_FLOAT);
	CHECK(toks[0].fval == 1.0 && toks[1].fval == 1.0 && toks[2].fval == 0.5);
	CHECK(toks[3].fval == 1e5 && toks[4].fval == 1.5e-3 && toks[5].fval == 2e8);
	CHECK(toks[6].fval == 1e308 && toks[7].fval == 0.0 && toks[8].fval > 0);
	CHECK(toks[1].loc.end - toks[1].loc.begin == 2);

	lex("1e309");
	CHECK(diag_errors() == 1 && has("t.tx:1:1: error: floating-point literal out of range"));
	CHECK(toks[0].kind == TK_FLOAT && toks[0].fval == 0);

	lex("1e-400");
	CHECK(diag_errors() == 1 && has("floating-point literal out of range"));

	lex("1e x 2.5E+ y");
	CHECK(diag_errors() == 2 && has("t.tx:1:1: error: exponent has no digits")
	    && has("t.tx:1:6: error: exponent has no digits"));
	CHECK(toks[1].kind == TK_IDENT && toks[3].kind == TK_IDENT);

	/* `C.split` and `blockIdx.x` stay names around a dot. */
	lex("a.b 1.x");
	CHECK(toks[0].kind == TK_IDENT && toks[1].kind == TK_DOT && toks[2].kind == TK_IDENT);
	CHECK(toks[3].kind == TK_FLOAT && toks[4].kind == TK_IDENT);
}

static void
test_strings(void)
{
	lex("\"a\\tb\\\"c\\\\d\\n\" \"\" \"\xc3\xa9\"");
	CHECK(diag_errors() == 0);
	CHECK(toks[0].kind == TK_STRING && strcmp(toks[0].str, "a\tb\"c\\d\n") == 0);
	CHECK(toks[0].loc.begin == 0 && toks[0].loc.end == 14);
	CHECK(toks[1].kind == TK_STRING && toks[1].str[0] == 0);
	CHECK(strcmp(toks[2].str, "\xc3\xa9") == 0);

	lex("\"bad\\q\" x");
	CHECK(diag_errors() == 1 && has("t.tx:1:5: error: unknown escape sequence '\\q'"));
	CHECK(toks[0].kind == TK_STRING && toks[1].kind == TK_IDENT);

	lex("\"open\nx");
	CHECK(diag_errors() == 1 && has("t.tx:1:1: error: unterminated string literal"));
	CHECK(toks[0].kind == TK_STRING && toks[1].kind == TK_IDENT);

	lex("\"open");
	CHECK(diag_errors() == 1 && has("unterminated string literal") && toks[1].kind == 0);

	lex("\"open\\");
	CHECK(diag_errors() == 1 && has("unterminated string literal") && toks[1].kind == 0);

	lex("\"\xff\xfe\" y");
	CHECK(diag_errors() == 1 && has("t.tx:1:2: error: invalid UTF-8 sequence in string literal"));
	CHECK(toks[1].kind == TK_IDENT);
}

static void
test_comments(void)
{
	lex("a // comment ; \xc3\xa9\nb /* block\n * more */ c /**/ d");
	CHECK(diag_errors() == 0);
	CHECK(ntoks == 5 && toks[1].kind == TK_IDENT && toks[2].str == intern_cstr("c"));
	CHECK(toks[1].loc.begin == 18);

	lex("a /* never closed\n b");
	CHECK(diag_errors() == 1 && has("t.tx:1:3: error: unterminated comment"));
	CHECK(ntoks == 2);

	lex("a // bad \xc0\xaf here\nb");
	CHECK(diag_errors() == 1 && has("t.tx:1:10: error: invalid UTF-8 sequence in comment"));
	CHECK(ntoks == 3);

	lex("/* \xed\xa0\x80 */ x");   /* a UTF-16 surrogate */
	CHECK(diag_errors() == 1 && has("invalid UTF-8 sequence in comment"));
	CHECK(toks[0].kind == TK_IDENT);

	lex("// end of file without a newline");
	CHECK(diag_errors() == 0 && ntoks == 1);
}

static void
test_stray(void)
{
	lex("a @ b # $ ` \\ ' c");
	CHECK(diag_errors() == 6 && has("t.tx:1:3: error: stray '@' in program"));
	CHECK(has("stray '#' in program") && has("stray '\\' in program"));
	CHECK(ntoks == 4 && toks[2].str == intern_cstr("c"));

	lex("a \x01 \x7f b");
	CHECK(diag_errors() == 2 && has("stray byte 0x01 in program") && has("stray byte 0x7f in program"));

	lex("x \xce\xb1 y");
	CHECK(diag_errors() == 1 && has("t.tx:1:3: error: stray '\xce\xb1' in program"));
	CHECK(ntoks == 3);

	lex("x \xff\xfe\x80 y \xe2\x82 z");
	CHECK(diag_errors() == 2 && has("t.tx:1:3: error: invalid UTF-8 sequence"));
	CHECK(ntoks == 4);

	lex_n("a\0b\0", 4);
	CHECK(diag_errors() == 2 && has("t.tx:1:2: error: NUL byte in source"));
	CHECK(ntoks == 3 && toks[1].str == intern_cstr("b"));

	lex_n("\"a\0b\" /* \0 */", 13);
	CHECK(diag_errors() == 2 && has("NUL byte in source"));
	CHECK(toks[0].kind == TK_STRING && strcmp(toks[0].str, "ab") == 0);
}

int
main(void)
{
	test_tokens();
	test_integers();
	test_floats();
	test_strings();
	test_comments();
	test_stray();
	if (failures) {
		fprintf(stderr, "lexer_test: %d failure%s\n", failures, failures == 1 ? "" : "s");
		fprintf(stderr, "last diagnostics:\n%s", diag_text());
		return 1;
	}
	puts("lexer_test: ok");
	return 0;
}
