/* names.c: the entry points' names, checked once for every output.
 *
 * A kernel's entry point NAME (and NAME_dlpack) is an external C symbol:
 * `kernel expf` linked and then crashed the program that called it (its
 * expf replaced the C library's), `kernel float` gave a header no compiler
 * accepts, and only --emit=c refused such names, with a list that missed
 * printf and txrt_alloc.  names_check_entries refuses, for the object, the
 * C output, the header and every target alike: C keywords (C89 to C23),
 * the C standard library's functions and macros, main, and the prefixes
 * an implementation or libtxrt reserve (_, txrt_, txc_, DL/kDL of
 * DLPack).  --prefix=NAME_ renames every entry point (driver), and the
 * prefixed name is the one checked.
 */
#include <string.h>

#include "target/target.h"

static const char *const keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "alignas", "alignof", "bool",
	"constexpr", "false", "nullptr", "static_assert", "thread_local", "true",
	"typeof", "typeof_unqual", "asm", "complex", "imaginary", NULL
};

/* The C library (C11 and C23: stdio, stdlib, string, ctype, time, signal,
 * setjmp, locale, assert, errno); POSIX names (pipe, read) are not the C
 * library's, and tests and users name kernels so. */
static const char *const libc[] = {
	"main", "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf",
	"vsprintf", "vsnprintf", "scanf", "fscanf", "sscanf", "puts", "fputs",
	"putchar", "fputc", "putc", "getchar", "fgetc", "getc", "gets", "fgets",
	"ungetc", "fopen", "freopen", "fclose", "fread", "fwrite", "fflush", "fseek",
	"ftell", "rewind", "fgetpos", "fsetpos", "feof", "ferror", "clearerr",
	"perror", "remove", "rename", "tmpfile", "tmpnam", "setbuf", "setvbuf",
	"stdin", "stdout", "stderr", "malloc", "calloc", "realloc", "free",
	"aligned_alloc", "abort", "exit", "atexit", "quick_exit", "at_quick_exit",
	"getenv", "system", "atoi", "atol", "atoll", "atof", "strtol", "strtoll",
	"strtoul", "strtoull", "strtod", "strtof", "strtold", "rand", "srand",
	"qsort", "bsearch", "abs", "labs", "llabs", "div", "ldiv", "lldiv", "mblen",
	"mbtowc", "wctomb", "mbstowcs", "wcstombs", "memcpy", "memmove", "memset",
	"memcmp", "memchr", "strcpy", "strncpy", "strcat", "strncat", "strcmp",
	"strncmp", "strcoll", "strxfrm", "strchr", "strrchr", "strstr", "strspn",
	"strcspn", "strpbrk", "strtok", "strlen", "strerror", "strdup", "strndup",
	"isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph", "islower",
	"isprint", "ispunct", "isspace", "isupper", "isxdigit", "tolower", "toupper",
	"time", "clock", "difftime", "mktime", "strftime", "gmtime", "localtime",
	"asctime", "ctime", "timespec_get", "signal", "raise", "setjmp", "longjmp",
	"setlocale", "localeconv", "errno", "assert", "offsetof", "nan", "isnan",
	"isinf", "isfinite", "signbit", "fpclassify", NULL
};

/* <math.h>: each also with an f and an l suffix (expf, expl). */
static const char *const libm[] = {
	"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh",
	"atanh", "cosh", "sinh", "tanh", "exp", "exp2", "expm1", "frexp", "ldexp",
	"log", "log10", "log1p", "log2", "logb", "ilogb", "modf", "scalbn",
	"scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma",
	"tgamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round",
	"lround", "llround", "trunc", "fmod", "remainder", "remquo", "copysign",
	"nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma", "nan", NULL
};

static bool
in(const char *const *list, const char *s)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static bool
in_libm(const char *s)
{
	size_t n = strlen(s);
	if (in(libm, s))
		return true;
	if (n < 2 || (s[n - 1] != 'f' && s[n - 1] != 'l'))
		return false;
	for (int i = 0; libm[i]; i++)
		if (strlen(libm[i]) == n - 1 && strncmp(libm[i], s, n - 1) == 0)
			return true;
	return false;
}

static const char *
prefix_of(const char *s)
{
	static const char *const p[] = { "txrt_", "TXRT_", "txc_", "TXC_", "kDL", "DL", NULL };
	/* '_' and a digit: what the ONNX front end makes of a file name that
	 * starts with a digit (3rd-model.onnx: _3rd_model, the ABI issue 33
	 * gives); no C library or compiler names anything so */
	if (s[0] == '_' && !(s[1] >= '0' && s[1] <= '9'))
		return "_";
	for (int i = 0; p[i]; i++)
		if (strncmp(s, p[i], strlen(p[i])) == 0)
			return p[i];
	return NULL;
}

/* Why name cannot be an external C name, or NULL when it can. */
static const char *
why_not(const char *name)
{
	const char *p;
	if (in(keywords, name))
		return "a C keyword";
	if (in(libc, name) || in_libm(name))
		return "a name of the C library, which the program links";
	if ((p = prefix_of(name)))
		return strcmp(p, "_") == 0 ? "reserved to the C implementation (a leading '_')" :
		    strncmp(p, "txrt", 4) == 0 || strncmp(p, "TXRT", 4) == 0 ?
		    "in libtxrt's prefix 'txrt_'" : strncmp(p, "txc", 3) == 0 ||
		    strncmp(p, "TXC", 3) == 0 ? "in the prefix 'txc_' of txc's own helpers" :
		    "in DLPack's prefix";
	return NULL;
}

bool
names_check_entries(IrFunc **funcs, int n, bool dlpack)
{
	bool ok = true;
	for (int i = 0; i < n; i++) {
		const char *name = funcs[i]->name, *why = why_not(name);
		const char *dl = dlpack ? arena_printf(ir_arena, "%s_dlpack", name) : NULL;
		if (!why && dl && (why = why_not(dl)))
			name = dl;
		if (!why)
			continue;
		Loc at = funcs[i]->kernel ? funcs[i]->kernel->name_loc : loc_none;
		diag_error(at, "the entry point '%s' cannot be named so: it is %s", name, why);
		diag_note(at, "rename the kernel, or give every entry point a prefix "
		    "(txc --prefix=NAME_)");
		ok = false;
	}
	return ok;
}
