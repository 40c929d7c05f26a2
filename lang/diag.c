/* diag.c: compiler diagnostics with file, line, column and a caret.
 *
 *     file:line:col: error: message
 *         the source line
 *         ^~~~~~ under the range
 *
 * col counts bytes (as GCC's does); the caret counts characters.
 * Errors accumulate (up to a cap) so one run reports them all; colour is
 * used only when the stream is a terminal, unless forced.  Fatal errors
 * and internal compiler errors longjmp to diag_catch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lang.h"

static int nerrors, nwarnings, max_errors = 50, color = -1;
static int suppressed;
static int muted, muted_errors;   /* diag_mute */
static Loc first_muted;           /* the first error while muted */
static bool any_muted;
static FILE *out;
jmp_buf *diag_catch;

int diag_errors(void) { return nerrors; }
int diag_warnings(void) { return nwarnings; }
void diag_set_max_errors(int n) { max_errors = n; }
void diag_set_color(int on) { color = on; }
void diag_set_stream(void *fp) { out = fp; }

void
diag_reset(void)
{
	nerrors = nwarnings = suppressed = 0;
}

Loc
diag_first_muted(void)
{
	return any_muted ? first_muted : loc_none;
}

void
diag_mute(bool on)
{
	if (on && muted++ == 0) {
		muted_errors = nerrors;
		any_muted = false;
		first_muted = loc_none;
	}
	else if (!on && muted > 0 && --muted == 0)
		nerrors = muted_errors;
}

static FILE *
stream(void)
{
	return out ? out : stderr;
}

static int
use_color(void)
{
	if (color >= 0)
		return color;
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return 0;
	return isatty(fileno(stream()));
}

/* Whether byte c starts a character (is not a UTF-8 continuation byte):
 * the caret line has one column per character, so that it stays under the
 * range when the line holds non-ASCII text.  The `line:col` prefix keeps
 * byte columns, as GCC and Clang print them. */
static bool
starts_char(unsigned char c)
{
	return (c & 0xc0) != 0x80;
}

/* Prints the line holding loc.begin and marks the range under it. */
static void
show_source(FILE *fp, Loc loc, int col_on, const char *mark_color)
{
	const SrcFile *f = source_get(loc.file);
	if (!f || loc.begin > f->len)
		return;
	size_t bol = loc.begin, eol = loc.begin;
	while (bol > 0 && f->text[bol - 1] != '\n')
		bol--;
	while (eol < f->len && f->text[eol] != '\n')
		eol++;
	if (eol - bol > 400)   /* an absurd line: do not flood the terminal */
		return;
	fputs("    ", fp);
	for (size_t i = bol; i < eol; i++) {
		unsigned char c = (unsigned char)f->text[i];
		fputc(c == '\t' ? ' ' : (c < 32 || c == 127) ? ' ' : c, fp);
	}
	fputs("\n    ", fp);
	for (size_t i = bol; i < loc.begin; i++)
		if (starts_char((unsigned char)f->text[i]))
			fputc(' ', fp);
	size_t end = loc.end > eol ? eol : loc.end;
	if (col_on)
		fputs(mark_color, fp);
	fputc('^', fp);
	for (size_t i = loc.begin + 1; i < end; i++)
		if (starts_char((unsigned char)f->text[i]))
			fputc('~', fp);
	if (col_on)
		fputs("\033[0m", fp);
	fputc('\n', fp);
}

void
diag_report(DiagKind kind, Loc loc, const char *fmt, va_list ap)
{
	FILE *fp = stream();
	if (muted) {
		/* at the outer level only: a trial muted inside (bounds_infer.c)
		 * may fail and be retried */
		if (kind == DIAG_ERROR && !any_muted && muted == 1) {
			any_muted = true;
			first_muted = loc;
		}
		nerrors += kind == DIAG_ERROR;
		return;
	}
	if (kind == DIAG_ERROR) {
		nerrors++;
		if (max_errors > 0 && nerrors > max_errors) {
			suppressed++;
			return;
		}
	} else if (kind == DIAG_WARNING) {
		nwarnings++;
	} else if (max_errors > 0 && nerrors > max_errors) {
		return;   /* a note on a suppressed error */
	}
	int c = use_color();
	static const char *const word[] = { "error", "warning", "note" };
	static const char *const hue[] = { "\033[1;31m", "\033[1;35m", "\033[1;36m" };
	const SrcFile *f = source_get(loc.file);
	if (c)
		fputs("\033[1m", fp);
	if (f) {
		int line, col;
		source_linecol(loc.file, loc.begin, &line, &col);
		fprintf(fp, "%s:%d:%d: ", f->name, line, col);
	} else {
		fputs("txc: ", fp);
	}
	if (c)
		fprintf(fp, "%s%s:\033[0m\033[1m ", hue[kind], word[kind]);
	else
		fprintf(fp, "%s: ", word[kind]);
	vfprintf(fp, fmt, ap);
	if (c)
		fputs("\033[0m", fp);
	fputc('\n', fp);
	if (f)
		show_source(fp, loc, c, "\033[1;32m");
}

void
diag_error(Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_report(DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
}

void
diag_warn(Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_report(DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
}

void
diag_note(Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_report(DIAG_NOTE, loc, fmt, ap);
	va_end(ap);
}

void
diag_flush(void)
{
	if (suppressed) {
		fprintf(stream(), "txc: %d more error%s not shown\n", suppressed,
		    suppressed == 1 ? "" : "s");
		suppressed = 0;
	}
}

static TXC_NORETURN void
bail(void)
{
	fflush(stream());
	if (diag_catch)
		longjmp(*diag_catch, 1);
	exit(2);
}

void
diag_fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txc: fatal: ", stream());
	vfprintf(stream(), fmt, ap);
	fputc('\n', stream());
	va_end(ap);
	nerrors++;
	bail();
}

void
ice(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stream(), "txc: internal compiler error (%s:%d): ", file, line);
	vfprintf(stream(), fmt, ap);
	fputc('\n', stream());
	va_end(ap);
	nerrors++;
	bail();
}
