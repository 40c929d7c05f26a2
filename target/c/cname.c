/* cname.c: C identifiers for the IR's variables and buffers.
 *
 * The C backend keeps IR names where it can (`io`, `C`, `M`) so the output
 * reads like the loop nest.  A name is kept when it is a valid identifier
 * that no standard header or C dialect can claim: not a keyword (C89 to
 * C23, GNU's asm/typeof), not reserved (`_X`, `..._t`), not a macro or
 * typedef the included headers may define (NULL, NAN, uint, linux...), not
 * a libm/libc function the generated code calls, not a txc_ helper or a
 * DLPack name; all-capital names count as possible macros when they have
 * an underscore (INT8_MAX, M_PI) or are in a short list (NULL, NAN, HUGE).  Anything else gets a trailing underscore (`int_`,
 * `NULL_`) or a `v_` prefix (`v_txc_x`), and a numeric suffix keeps names
 * unique within a function.
 */
#include <ctype.h>
#include <string.h>

#include "target/target.h"

typedef struct {
	const void *key;      /* NULL: a name without key (fresh) */
	const char *name;
} Entry;

struct CNames {
	Arena *arena;
	Entry *keys; int nkeys, capkeys;   /* open addressing on key */
	const char **used; int nused, capused;  /* open addressing on name */
};

static const char *const reserved[] = {
	/* keywords, C89 to C23, and GNU's */
	"auto", "break", "case", "char", "const", "continue", "default", "do",
	"double", "else", "enum", "extern", "float", "for", "goto", "if",
	"inline", "int", "long", "register", "restrict", "return", "short",
	"signed", "sizeof", "static", "struct", "switch", "typedef", "union",
	"unsigned", "void", "volatile", "while", "alignas", "alignof", "bool",
	"constexpr", "false", "nullptr", "static_assert", "thread_local", "true",
	"typeof", "typeof_unqual", "asm", "complex", "imaginary",
	/* macros and typedefs of the included headers (glibc, GNU mode) */
	"errno", "math_errhandling", "signgam", "uint", "ushort", "ulong",
	"u_char", "u_short", "u_int", "u_long", "fd_set", "fd_mask", "unix",
	"linux", "i386", "assert", "offsetof", "alloca", "main",
	/* functions the generated code calls */
	"malloc", "free", "memcpy", "memset", "abs", "exp", "expf", "log",
	"logf", "sqrt", "sqrtf", "tanh", "tanhf", "sin", "sinf", "cos", "cosf",
	"erf", "erff", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf",
	"rint", "rintf", "pow", "powf", "fmod", "fmodf",
	NULL
};

/* Object-like macros in capitals without an underscore that the included
 * headers (or a build) may define. */
static const char *const caps_macros[] = {
	"NULL", "NAN", "INFINITY", "HUGE", "MAXFLOAT", "DOMAIN", "SING",
	"OVERFLOW", "UNDERFLOW", "TLOSS", "PLOSS", "EOF", "BUFSIZ", "NFDBITS",
	"WNOHANG", "WUNTRACED", "WEXITED", "WSTOPPED", "WCONTINUED", "WNOWAIT",
	"NDEBUG", NULL
};

static bool
is_reserved(const char *s)
{
	for (int i = 0; reserved[i]; i++)
		if (strcmp(s, reserved[i]) == 0)
			return true;
	return false;
}

static bool
has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* A prefix that a suffix cannot repair: such names get "v_" in front. */
static bool
bad_prefix(const char *s)
{
	return s[0] == '_' || has_prefix(s, "txc_") || has_prefix(s, "TXC_") ||
	    has_prefix(s, "DL") || has_prefix(s, "kDL") || isdigit((unsigned char)s[0]);
}

/* Whether s can be used as it is. */
static bool
safe(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || bad_prefix(s) || is_reserved(s))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	if (n >= 2 && s[n - 2] == '_' && s[n - 1] == 't')
		return false;
	if (s[n - 1] == '_')
		return true;
	/* all capitals: the headers' macros are NULL, NAN, HUGE... or have an
	 * underscore (INT8_MAX, M_PI, RAND_MAX) */
	bool lower = false, under = false;
	for (size_t i = 0; i < n; i++) {
		lower |= islower((unsigned char)s[i]) != 0;
		under |= s[i] == '_';
	}
	if (lower)
		return true;
	if (under)
		return false;
	for (int i = 0; caps_macros[i]; i++)
		if (strcmp(s, caps_macros[i]) == 0)
			return false;
	return true;
}

bool
cname_ok_global(const char *name)
{
	return name && safe(name) && name[strlen(name) - 1] != '_';
}

/* A safe identifier made from any string. */
static char *
sanitize(Arena *a, const char *hint)
{
	if (!hint || !*hint)
		hint = "t";
	size_t n = strlen(hint);
	char *s = arena_alloc(a, n + 4);
	for (size_t i = 0; i < n; i++)
		s[i] = isalnum((unsigned char)hint[i]) ? hint[i] : '_';
	if (bad_prefix(s))
		s = arena_printf(a, "v_%s", s);
	if (!safe(s))
		s = arena_printf(a, "%s_", s);
	return s;
}

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static uint64_t
hash_ptr(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	return h ^ (h >> 33);
}

static void
grow_used(CNames *n)
{
	int cap = n->capused ? 2 * n->capused : 256;
	const char **t = arena_alloc(n->arena, cap * sizeof *t);
	for (int i = 0; i < n->capused; i++) {
		const char *s = n->used[i];
		if (!s)
			continue;
		uint64_t h = hash_str(s) & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = s;
	}
	n->used = t;
	n->capused = cap;
}

static bool
name_taken(CNames *n, const char *s)
{
	if (!n->capused)
		return false;
	uint64_t h = hash_str(s) & (n->capused - 1);
	for (; n->used[h]; h = (h + 1) & (n->capused - 1))
		if (strcmp(n->used[h], s) == 0)
			return true;
	return false;
}

static void
take(CNames *n, const char *s)
{
	if (2 * (n->nused + 1) > n->capused)
		grow_used(n);
	uint64_t h = hash_str(s) & (n->capused - 1);
	while (n->used[h])
		h = (h + 1) & (n->capused - 1);
	n->used[h] = s;
	n->nused++;
}

CNames *
cname_new(Arena *a)
{
	CNames *n = arena_alloc(a, sizeof *n);
	n->arena = a;
	return n;
}

const char *
cname_fresh(CNames *n, const char *hint)
{
	const char *base = sanitize(n->arena, hint);
	const char *s = base;
	for (int i = 2; name_taken(n, s); i++) {
		s = arena_printf(n->arena, "%s_%d", base, i);
		if (!safe(s))
			s = arena_printf(n->arena, "%s_", s);
	}
	take(n, s);
	return s;
}

const char *
cname_get(CNames *n, const void *key, const char *hint)
{
	if (2 * (n->nkeys + 1) > n->capkeys) {
		int cap = n->capkeys ? 2 * n->capkeys : 256;
		Entry *t = arena_alloc(n->arena, cap * sizeof *t);
		for (int i = 0; i < n->capkeys; i++) {
			if (!n->keys[i].key)
				continue;
			uint64_t h = hash_ptr(n->keys[i].key) & (cap - 1);
			while (t[h].key)
				h = (h + 1) & (cap - 1);
			t[h] = n->keys[i];
		}
		n->keys = t;
		n->capkeys = cap;
	}
	uint64_t h = hash_ptr(key) & (n->capkeys - 1);
	for (; n->keys[h].key; h = (h + 1) & (n->capkeys - 1))
		if (n->keys[h].key == key)
			return n->keys[h].name;
	n->keys[h].key = key;
	n->keys[h].name = cname_fresh(n, hint);
	n->nkeys++;
	return n->keys[h].name;
}

void
cname_func(CNames *n, IrFunc **all, int nall, IrFunc *f)
{
	for (int i = 0; i < nall; i++)
		cname_fresh(n, all[i]->name);
	for (int i = 0; i < f->nparams; i++)
		cname_get(n, f->params[i], f->params[i]->name);
	for (int i = 0; i < f->nargs; i++)
		cname_get(n, f->args[i], f->args[i]->name);
	for (int i = 0; i < f->nconsts; i++)
		cname_get(n, f->consts[i], f->consts[i]->name);
}
