/* import.c: `import "file.tx";` brings another file's kernels and
 * schedules into the program.
 *
 * A path is looked up relative to the importing file, then in each -I
 * directory, then in $TXC_STDLIB, then in the installed stdlib.  A txc
 * run from its build tree (not installed) looks in the source tree's
 * stdlib/ before the installed one, so it uses the stdlib it was built
 * with (txc(1) FILES).  Each file
 * is loaded once (by its real path), so repeated and circular imports are
 * harmless.  Imported kernels and schedules are appended to the program's
 * lists but not to its items: --format prints only the file itself.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "parser/parser.h"

#ifndef TXC_STDLIB_DIR
#define TXC_STDLIB_DIR "/usr/local/share/txc/stdlib"
#endif
/* The build tree txc is built in and the source tree's stdlib (Makefile.am). */
#ifndef TXC_BUILD_DIR
#define TXC_BUILD_DIR ""
#endif
#ifndef TXC_SRC_STDLIB_DIR
#define TXC_SRC_STDLIB_DIR ""
#endif

static const char **loaded;
static int nloaded, caploaded;

static bool
seen(const char *real)
{
	for (int i = 0; i < nloaded; i++)
		if (strcmp(loaded[i], real) == 0)
			return true;
	*ARENA_PUSH(perm, loaded, nloaded, caploaded) = arena_strdup(perm, real);
	return false;
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return arena_strdup(perm, ".");
	return arena_strndup(perm, path, (size_t)(slash - path));
}

/* The source tree's stdlib when this txc runs from its build tree, else
 * NULL. */
static const char *
source_stdlib(void)
{
	static int known;
	static const char *dir;
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n;

	if (known)
		return dir;
	known = 1;
	if (!*TXC_BUILD_DIR || !*TXC_SRC_STDLIB_DIR ||
	    (n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
		return NULL;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash || !realpath(TXC_BUILD_DIR, build))
		return NULL;
	*slash = 0;
	/* libtool may run txc from .libs/ */
	size_t b = strlen(build);
	if (strcmp(exe, build) == 0 ||
	    (strncmp(exe, build, b) == 0 && strcmp(exe + b, "/.libs") == 0))
		dir = TXC_SRC_STDLIB_DIR;
	return dir;
}

/* The directories searched after the importing file's and -I's, for the
 * note of a missing import. */
static const char *
stdlib_dirs(void)
{
	const char *src = source_stdlib();
	return src ? arena_printf(perm, "%s and %s", src, TXC_STDLIB_DIR) : TXC_STDLIB_DIR;
}

/* The first existing candidate for `rel`, or NULL. */
static char *
find(const char *rel, const char *fromdir, const Options *o)
{
	if (rel[0] == '/')
		return access(rel, R_OK) == 0 ? arena_strdup(perm, rel) : NULL;
	const char *env = getenv("TXC_STDLIB");
	const char *dirs[64];
	int n = 0;
	dirs[n++] = fromdir;
	for (int i = 0; i < o->nincdirs && n < 60; i++)
		dirs[n++] = o->incdirs[i];
	if (env && *env)
		dirs[n++] = env;
	if (source_stdlib())
		dirs[n++] = source_stdlib();
	dirs[n++] = TXC_STDLIB_DIR;
	for (int i = 0; i < n; i++) {
		char *cand = arena_printf(perm, "%s/%s", dirs[i], rel);
		if (access(cand, R_OK) == 0)
			return cand;
	}
	return NULL;
}

static void
merge(Program *into, Program *from)
{
	int capk = into->nkernels, caps = into->nschedules;
	for (int i = 0; i < from->nkernels; i++)
		*ARENA_PUSH(perm, into->kernels, into->nkernels, capk) = from->kernels[i];
	for (int i = 0; i < from->nschedules; i++)
		*ARENA_PUSH(perm, into->schedules, into->nschedules, caps) = from->schedules[i];
	int capi = into->nintrinsics;     /* intrinsic declarations (tensorize) */
	for (int i = 0; i < from->nintrinsics; i++)
		*ARENA_PUSH(perm, into->intrinsics, into->nintrinsics, capi) = from->intrinsics[i];
}

static bool
resolve(Program *p, const char *path, const Options *o, int depth)
{
	bool ok = true;
	const char *fromdir = dir_of(path);
	for (int i = 0; i < p->nimports; i++) {
		Import *im = p->imports[i];
		if (!im || !im->path)
			continue;
		if (depth > 64) {
			diag_error(im->loc, "imports nested too deeply");
			return false;
		}
		char *file = find(im->path, fromdir, o);
		if (!file) {
			diag_error(im->loc, "cannot find imported file '%s'", im->path);
			diag_note(loc_none, "searched beside '%s', in -I directories, $TXC_STDLIB and %s",
			    path, stdlib_dirs());
			ok = false;
			continue;
		}
		char real[PATH_MAX];
		if (!realpath(file, real))
			snprintf(real, sizeof real, "%s", file);
		if (seen(real))
			continue;
		uint32_t id = source_load(file);
		if (!id) {
			ok = false;
			continue;
		}
		int before = diag_errors();
		Program *sub = parse_program(id);
		im->prog = sub;
		if (diag_errors() > before) {
			ok = false;
			continue;
		}
		ok &= resolve(sub, file, o, depth + 1);
		merge(p, sub);
	}
	return ok;
}

bool
import_resolve(Program *p, const Options *o)
{
	const SrcFile *f = source_get(p->file);
	const char *path = f ? f->name : ".";
	char real[PATH_MAX];
	if (f && realpath(path, real))
		seen(real);
	return resolve(p, strcmp(path, "<stdin>") == 0 ? "./-" : path, o, 0);
}

/* The cuda target's intrinsic table (intrinsics/cuda.tx) for the schedule
 * generator's tensor-core rule, loaded as if imported when the program
 * does not import it; an intrinsic of the same name in the program wins. */
bool
import_target_table(Program *p, const char *target)
{
	if (!target || strcmp(target, "cuda") != 0)
		return true;
	Options none;
	memset(&none, 0, sizeof none);
	char *file = find("intrinsics/cuda.tx", ".", &none);
	if (!file)
		return true;   /* an uninstalled stdlib: the generator does without */
	char real[PATH_MAX];
	if (!realpath(file, real))
		snprintf(real, sizeof real, "%s", file);
	if (seen(real))
		return true;
	uint32_t id = source_load(file);
	if (!id)
		return false;
	int before = diag_errors();
	Program *sub = parse_program(id);
	if (!sub || diag_errors() > before)
		return false;
	int capi = p->nintrinsics;
	for (int i = 0; i < sub->nintrinsics; i++) {
		Kernel *k = sub->intrinsics[i];
		bool have = false;
		for (int j = 0; j < p->nintrinsics && !have; j++)
			have = p->intrinsics[j] && k && p->intrinsics[j]->name == k->name;
		for (int j = 0; j < p->nkernels && !have; j++)
			have = p->kernels[j] && k && p->kernels[j]->name == k->name;
		if (k && !have)
			*ARENA_PUSH(perm, p->intrinsics, p->nintrinsics, capi) = k;
	}
	return true;
}
