/* shared.c: `txc --shared` (or `-o NAME.so`): the kernels as a shared
 * library that dlopen loads, holding what they need of libtxrt.
 *
 * The object is written as for `-o NAME.o` (emit.c, any --target), to a
 * scratch file beside the output (output_scratch: never renamed into
 * place), then linked by the C compiler:
 *
 *     $CC -shared -o NAME.so OBJ libtxrt.a -Wl,-Bsymbolic -lpthread -lm -ldl
 *
 * libtxrt.a is libtool's static archive, whose objects are position
 * independent; the library carries its own copy of the run time (thread
 * pool, error message, CUDA driver loader), and -Bsymbolic keeps its calls
 * to that copy even when the process has another libtxrt loaded.  The
 * archive is $TXC_LIBTXRT when set, else the build tree's
 * (rt/.libs/libtxrt.a) when this txc runs from its build tree, else the
 * installed one ($(libdir)/libtxrt.a).  $CC, split at blanks, names the
 * compiler (default cc).
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

#ifndef TXC_LIB_DIR
#define TXC_LIB_DIR "/usr/local/lib"
#endif
#ifndef TXC_BUILD_DIR
#define TXC_BUILD_DIR ""
#endif

extern char **environ;

/* Whether this txc is the one in its build tree (or libtool's .libs/
 * there), as import.c decides where the stdlib is. */
static bool
in_build_tree(void)
{
	char exe[PATH_MAX], build[PATH_MAX];
	ssize_t n;

	if (!*TXC_BUILD_DIR || (n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
		return false;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash || !realpath(TXC_BUILD_DIR, build))
		return false;
	*slash = 0;
	size_t b = strlen(build);
	return strcmp(exe, build) == 0 ||
	    (strncmp(exe, build, b) == 0 && strcmp(exe + b, "/.libs") == 0);
}

/* The libtxrt archive to link, or NULL after a diagnostic. */
static const char *
libtxrt_archive(void)
{
	const char *env = getenv("TXC_LIBTXRT");
	const char *path = env && *env ? env : in_build_tree() ?
	    TXC_BUILD_DIR "/rt/.libs/libtxrt.a" : TXC_LIB_DIR "/libtxrt.a";

	if (access(path, R_OK) == 0)
		return path;
	diag_error(loc_none, "cannot link a shared library: no libtxrt archive at '%s'%s",
	    path, env && *env ? " ($TXC_LIBTXRT)" : "");
	diag_note(loc_none, "build or install libtxrt (make, make install), or name its "
	    "libtxrt.a with TXC_LIBTXRT");
	return NULL;
}

/* Runs argv, waits; true when it exits 0. */
static bool
run(char **argv)
{
	pid_t pid;
	int st, err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);

	if (err) {
		diag_error(loc_none, "cannot run the C compiler '%s' to link the shared library: %s "
		    "(set CC to another)", argv[0], strerror(err));
		return false;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			diag_error(loc_none, "waiting for '%s': %s", argv[0], strerror(errno));
			return false;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	if (WIFEXITED(st))
		diag_error(loc_none, "linking the shared library failed: '%s' exited with status %d",
		    argv[0], WEXITSTATUS(st));
	else
		diag_error(loc_none, "linking the shared library failed: '%s' was killed by "
		    "signal %d", argv[0], WTERMSIG(st));
	return false;
}

bool
shared_emit(IrFunc **funcs, int n, const Options *o, const char *out)
{
	if (!strcmp(out, "-")) {
		diag_error(loc_none, "--shared writes a file: name it with -o NAME.so");
		return false;
	}
	const char *lib = libtxrt_archive();
	if (!lib)
		return false;

	/* the object, as -o would write it, to a scratch file */
	Options obj = *o;
	obj.emit = OUT_OBJ;
	const char *objdest = arena_printf(perm, "%s.o", out);
	bool ok = !strcmp(o->target, "vta") ? emit_vta(funcs, n, &obj, objdest) :
	    !strcmp(o->target, "cuda") ? emit_cuda(funcs, n, &obj, objdest) :
	    emit_llvm(funcs, n, &obj, objdest);
	const char *objtmp = ok ? output_scratch(objdest) : NULL;
	const char *sotmp = objtmp ? output_temp_path(out) : NULL;
	if (!sotmp)
		return false;

	const char *cc = getenv("CC");
	char *words = arena_strdup(perm, cc && *cc ? cc : "cc");
	char *argv[64];
	int argc = 0;
	for (char *w = strtok(words, " \t"); w && argc < 48; w = strtok(NULL, " \t"))
		argv[argc++] = w;
	if (argc == 0)
		argv[argc++] = "cc";
	const char *rest[] = { "-shared", "-o", sotmp, objtmp, lib, "-Wl,-Bsymbolic",
	    "-Wl,-u,txrt_last_error", "-Wl,-u,txrt_cuda_mode",
	    "-lpthread", "-lm", "-ldl" };
	for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
		argv[argc++] = (char *)rest[i];
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	if (!run(argv))
		return false;
	return output_commit_path(sotmp);
}
