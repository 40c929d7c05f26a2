/* lexer.re: the .tx lexer (re2c), bytes to tokens.
 *
 * The source is read whole and NUL-terminated, so the scanner needs no
 * refill and no bounds checks: the only rule that matches a NUL is the
 * sentinel rule, which ends the file if the NUL is the terminator and
 * reports "NUL byte in source" otherwise.  Comment and string bodies are
 * scanned by small loops beside the automaton (they validate UTF-8 and
 * decode escapes).  Every lexical error is reported through diag with the
 * offending bytes' range, and lexing continues: a malformed literal still
 * gives its token (with value 0) so the parser sees a sane stream.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser.h"
#include "grammar.h"

void
lexer_init(Lexer *lx, uint32_t file)
{
	const SrcFile *f = source_get(file);
	static const unsigned char empty[1];
	lx->file = file;
	lx->base = f ? (const unsigned char *)f->text : empty;
	lx->cur = lx->base;
	lx->lim = lx->base + (f ? f->len : 0);
}

static Loc
loc_of(const Lexer *lx, const unsigned char *b, const unsigned char *e)
{
	return (Loc){ lx->file, (uint32_t)(b - lx->base), (uint32_t)(e - lx->base) };
}

/* The length of the valid UTF-8 sequence (2 to 4 bytes) at p, or 0.  It
 * never reads past a NUL, which is not a continuation byte. */
static int
utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	int n;
	unsigned lo = 0x80, hi = 0xbf;   /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;           /* overlong */
		if (c == 0xed)
			hi = 0x9f;           /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;           /* overlong */
		if (c == 0xf4)
			hi = 0x8f;           /* past U+10FFFF */
	} else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Skips a run of bytes that are not valid UTF-8 (one error covers it). */
static const unsigned char *
skip_bad_utf8(const unsigned char *p)
{
	p++;
	while (*p >= 0x80 && utf8_len(p) == 0)
		p++;
	return p;
}

/* Checks the body of a comment from p to e: NUL bytes and invalid UTF-8
 * (reported once per comment). */
static void
check_comment(Lexer *lx, const unsigned char *p, const unsigned char *e)
{
	bool bad_utf8 = false;
	while (p < e) {
		if (*p == 0) {
			diag_error(loc_of(lx, p, p + 1), "NUL byte in source");
			p++;
		} else if (*p < 0x80) {
			p++;
		} else {
			int n = utf8_len(p);
			if (n) {
				p += n;
				continue;
			}
			const unsigned char *q = skip_bad_utf8(p);
			if (q > e)
				q = e;
			if (!bad_utf8)
				diag_error(loc_of(lx, p, q), "invalid UTF-8 sequence in comment");
			bad_utf8 = true;
			p = q;
		}
	}
}

static void
line_comment(Lexer *lx)
{
	const unsigned char *p = lx->cur;
	while (*p != '\n' && p < lx->lim)
		p++;
	check_comment(lx, lx->cur, p);
	lx->cur = p;
}

static void
block_comment(Lexer *lx, const unsigned char *start)
{
	const unsigned char *p = lx->cur;
	for (;;) {
		if (p >= lx->lim) {
			diag_error(loc_of(lx, start, start + 2), "unterminated comment");
			check_comment(lx, lx->cur, p);
			lx->cur = p;
			return;
		}
		if (p[0] == '*' && p[1] == '/')
			break;
		p++;
	}
	check_comment(lx, lx->cur, p);
	lx->cur = p + 2;
}

/* Scans a string literal whose opening quote is at start (lx->cur is just
 * after it).  The first pass (out NULL) measures; the second decodes into
 * out and reports errors.  Returns the decoded length and sets *endp after
 * the closing quote (or at the end of the line if there is none). */
static size_t
scan_string(Lexer *lx, const unsigned char *start, char *out, const unsigned char **endp)
{
	const unsigned char *p = lx->cur;
	size_t n = 0;
	bool bad_utf8 = false;
	for (;;) {
		unsigned c = *p;
		if (c == '"') {
			p++;
			break;
		}
		if (c == '\n' || (c == 0 && p >= lx->lim)) {
			if (out)
				diag_error(loc_of(lx, start, p), "unterminated string literal");
			break;
		}
		if (c == 0) {
			if (out)
				diag_error(loc_of(lx, p, p + 1), "NUL byte in source");
			p++;
			continue;
		}
		if (c == '\\') {
			unsigned d = p[1];
			char ch;
			switch (d) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case '\n':
			case 0:
				p++;   /* a backslash before the end: unterminated */
				continue;
			default: {
				int len = d >= 0x80 ? utf8_len(p + 1) : 1;
				if (len == 0)
					len = 1;
				if (out)
					diag_error(loc_of(lx, p, p + 1 + len),
					    "unknown escape sequence '\\%.*s' in string literal"
					    " (the escapes are \\\" \\\\ \\n \\t)",
					    len, (const char *)p + 1);
				p += 1 + len;
				continue;
			}
			}
			if (out)
				out[n] = ch;
			n++;
			p += 2;
			continue;
		}
		int len = 1;
		if (c >= 0x80) {
			len = utf8_len(p);
			if (len == 0) {
				const unsigned char *q = skip_bad_utf8(p);
				if (out && !bad_utf8)
					diag_error(loc_of(lx, p, q), "invalid UTF-8 sequence in string literal");
				bad_utf8 = true;
				p = q;
				continue;
			}
		}
		if (out)
			memcpy(out + n, p, (size_t)len);
		n += (size_t)len;
		p += len;
	}
	*endp = p;
	return n;
}

static void
string_token(Lexer *lx, const unsigned char *start, Token *t)
{
	const unsigned char *end;
	size_t n = scan_string(lx, start, NULL, &end);
	char *buf = arena_alloc(perm, n + 1);
	scan_string(lx, start, buf, &end);
	lx->cur = end;
	t->kind = TK_STRING;
	t->str = buf;
	t->loc = loc_of(lx, start, end);
}

static void
int_token(Lexer *lx, const unsigned char *b, const unsigned char *e, int base, Token *t)
{
	int64_t v = 0;
	bool overflow = false;
	for (const unsigned char *p = b + (base == 16 ? 2 : 0); p < e; p++) {
		int d = *p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10;
		if (v > (INT64_MAX - d) / base)
			overflow = true;
		else
			v = v * base + d;
	}
	t->kind = TK_INT;
	t->ival = 0;
	if (overflow)
		diag_error(t->loc, "integer literal too large (the largest is 9223372036854775807)");
	else
		t->ival = v;
}

static void
float_token(Lexer *lx, const unsigned char *b, const unsigned char *e, Token *t)
{
	size_t len = (size_t)(e - b);
	char small[64];
	char *s = len < sizeof small ? small : malloc(len + 1);
	if (!s)
		diag_fatal("out of memory");
	memcpy(s, b, len);
	s[len] = 0;
	errno = 0;
	double v = strtod(s, NULL);
	bool range = errno == ERANGE && (isinf(v) || v == 0);
	bool nonzero = false;
	for (size_t i = 0; i < len && s[i] != 'e' && s[i] != 'E'; i++)
		if (s[i] >= '1' && s[i] <= '9')
			nonzero = true;
	if (s != small)
		free(s);
	t->kind = TK_FLOAT;
	t->fval = 0;
	if (isinf(v) || (range && nonzero))
		diag_error(t->loc, "floating-point literal out of range");
	else
		t->fval = v;
}

/* A printable description of the byte(s) at p for "stray" messages. */
static void
stray(Lexer *lx, const unsigned char *p)
{
	if (*p >= 0x80) {
		int n = utf8_len(p);
		if (n) {
			lx->cur = p + n;
			diag_error(loc_of(lx, p, p + n), "stray '%.*s' in program", n, (const char *)p);
		} else {
			lx->cur = skip_bad_utf8(p);
			diag_error(loc_of(lx, p, lx->cur), "invalid UTF-8 sequence");
		}
	} else if (*p > ' ' && *p < 127) {
		diag_error(loc_of(lx, p, p + 1), "stray '%c' in program", *p);
	} else {
		diag_error(loc_of(lx, p, p + 1), "stray byte 0x%02x in program", *p);
	}
}

#define KW(k)   do { t->kind = TK_##k; goto done; } while (0)
#define TYPE(ty) do { t->kind = TK_TYPE; t->ival = ty; goto done; } while (0)
#define RED(r)  do { t->kind = TK_REDOP; t->ival = r; goto done; } while (0)

void
lexer_next(Lexer *lx, Token *t)
{
	for (;;) {
		const unsigned char *tok = lx->cur;
		memset(t, 0, sizeof *t);
		t->loc = loc_of(lx, tok, tok);
#define CUR lx->cur
		/*!re2c
		re2c:yyfill:enable = 0;
		re2c:define:YYCTYPE = "unsigned char";
		re2c:define:YYCURSOR = CUR;

		digits = [0-9]+;
		exp    = [eE] [+-]? digits;
		mant   = digits "." [0-9]* | "." digits;
		ident  = [a-zA-Z_] [a-zA-Z0-9_]*;

		"\x00"                  { if (tok >= lx->lim) { lx->cur = tok; t->kind = 0; return; }
		                          diag_error(loc_of(lx, tok, lx->cur), "NUL byte in source"); continue; }
		[ \t\r\n]+              { continue; }
		"//"                    { line_comment(lx); continue; }
		"/*"                    { block_comment(lx, tok); continue; }
		"\""                    { string_token(lx, tok, t); return; }

		"0" | [1-9] [0-9]*      { t->loc = loc_of(lx, tok, lx->cur); int_token(lx, tok, lx->cur, 10, t); return; }
		"0" [xX] [0-9a-fA-F]+   { t->loc = loc_of(lx, tok, lx->cur); int_token(lx, tok, lx->cur, 16, t); return; }
		"0" [0-9]+              { t->loc = loc_of(lx, tok, lx->cur); t->kind = TK_INT;
		                          diag_error(t->loc, "leading zeros are not allowed in decimal literals"); return; }
		"0" [xX]                { t->loc = loc_of(lx, tok, lx->cur); t->kind = TK_INT;
		                          diag_error(t->loc, "hexadecimal literal has no digits"); return; }
		mant exp? | digits exp  { t->loc = loc_of(lx, tok, lx->cur); float_token(lx, tok, lx->cur, t); return; }
		(mant | digits) [eE] [+-]? { t->loc = loc_of(lx, tok, lx->cur); t->kind = TK_FLOAT;
		                          diag_error(t->loc, "exponent has no digits"); return; }
		[0-9] [0-9a-zA-Z_]*     { t->loc = loc_of(lx, tok, lx->cur); t->kind = TK_INT;
		                          diag_error(t->loc, "invalid numeric literal '%.*s'",
		                              (int)(lx->cur - tok > 40 ? 40 : lx->cur - tok), (const char *)tok); return; }

		"import"                { KW(IMPORT); }
		"kernel"                { KW(KERNEL); }
		"schedule"              { KW(SCHEDULE); }
		"for"                   { KW(FOR); }
		"as"                    { KW(AS); }
		"in"                    { KW(IN); }
		"out"                   { KW(OUT); }
		"true"                  { KW(TRUE); }
		"false"                 { KW(FALSE); }
		"intrinsic"             { KW(INTRINSIC); }
		"knob"                  { KW(KNOB); }
		"where"                 { KW(WHERE); }
		"const"                 { KW(CONST); }
		"layout"                { KW(LAYOUT); }
		"knob" | "scan"         { KW(RESERVED); }
		"bool"                  { TYPE(TY_BOOL); }
		"i8"                    { TYPE(TY_I8); }
		"i16"                   { TYPE(TY_I16); }
		"i32"                   { TYPE(TY_I32); }
		"i64"                   { TYPE(TY_I64); }
		"u8"                    { TYPE(TY_U8); }
		"u16"                   { TYPE(TY_U16); }
		"u32"                   { TYPE(TY_U32); }
		"u64"                   { TYPE(TY_U64); }
		"f16"                   { TYPE(TY_F16); }
		"bf16"                  { TYPE(TY_BF16); }
		"f32"                   { TYPE(TY_F32); }
		"f64"                   { TYPE(TY_F64); }
		"sum"                   { RED(RED_SUM); }
		"prod"                  { RED(RED_PROD); }
		"maximum"               { RED(RED_MAX); }
		"minimum"               { RED(RED_MIN); }
		"argmax"                { RED(RED_ARGMAX); }
		"argmin"                { RED(RED_ARGMIN); }
		ident                   { t->kind = TK_IDENT; t->str = intern((const char *)tok, (size_t)(lx->cur - tok)); goto done; }

		"("                     { KW(LP); }
		")"                     { KW(RP); }
		"["                     { KW(LB); }
		"]"                     { KW(RB); }
		"{"                     { KW(LC); }
		"}"                     { KW(RC); }
		","                     { KW(COMMA); }
		";"                     { KW(SEMI); }
		":"                     { KW(COLON); }
		"."                     { KW(DOT); }
		"->"                    { KW(ARROW); }
		"="                     { KW(ASSIGN); }
		"+="                    { KW(PLUSEQ); }
		"+"                     { KW(PLUS); }
		"-"                     { KW(MINUS); }
		"*"                     { KW(STAR); }
		"/"                     { KW(SLASH); }
		"%"                     { KW(PERCENT); }
		"<"                     { KW(LT); }
		"<="                    { KW(LE); }
		">"                     { KW(GT); }
		">="                    { KW(GE); }
		"=="                    { KW(EQ); }
		"!="                    { KW(NE); }
		"&&"                    { KW(ANDAND); }
		"||"                    { KW(OROR); }
		"!"                     { KW(BANG); }
		"?"                     { KW(QUESTION); }
		"~"                     { KW(TILDE); }
		"&"                     { KW(AMP); }
		"|"                     { KW(PIPE); }
		"^"                     { KW(CARET); }
		"<<"                    { KW(SHL); }
		">>"                    { KW(SHR); }

		[^]                     { lx->cur = tok + 1; stray(lx, tok); continue; }
		*/
#undef CUR
done:
		t->loc = loc_of(lx, tok, lx->cur);
		return;
	}
}
