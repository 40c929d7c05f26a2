/* cmdline.c: what the command lines of `txc bench`, `txc viz` and `txc
 * tune` share: their one-line messages for a bad option (exit status 1),
 * number and -D NAME=VALUE parsing, -K knob values, --schedules lists,
 * getopt's own errors, the input file count, loading it (a .onnx model
 * through the ONNX front end, as txc compiles one) and choosing the
 * kernel.
 * Each command keeps its own options, defaults and wording; these are
 * the parts that were the same.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"
#include "onnx/onnx.h"
#include "sema/sema.h"

int
cmdline_bad(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "txc %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see 'txc %s --help')\n", cmd);
	return 1;
}

bool
cmdline_int(const char *s, long long lo, long long hi, long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || end == s || *end || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

bool
cmdline_num(const char *s, double lo, double hi, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (errno || end == s || *end || !(x >= lo && x <= hi))
		return false;
	*v = x;
	return true;
}

bool
cmdline_define(const char *arg, const char **name, CmdValue *v)
{
	const char *eq = strchr(arg, '=');
	char *end;
	long long x;
	if (!eq || eq == arg || !eq[1])
		return false;
	v->text = eq + 1;
	errno = 0;
	x = strtoll(eq + 1, &end, 0);
	if (end != eq + 1 && !*end && !errno) {
		/* an integer: exact, never rounded through a double (one past
		 * 64 bits is a number, which no size takes) */
		v->integer = true;
		v->i = x;
		v->f = (double)x;
	} else {
		errno = 0;
		v->f = strtod(eq + 1, &end);
		if (*end || end == eq + 1 || errno == ERANGE)
			return false;
		v->integer = false;
		v->i = 0;
	}
	*name = intern(arg, (size_t)(eq - arg));
	return true;
}

bool
cmdline_size(const char *cmd, const Param *pa, const CmdValue *v, int64_t *out)
{
	if (!v->integer || v->i < 0) {
		diag_error(pa->loc, "size '%s' must be an integer from 0 to %lld (txc %s -D %s=%s)",
		    pa->name, (long long)INT64_MAX, cmd, pa->name, v->text);
		return false;
	}
	*out = v->i;
	return true;
}

bool
cmdline_scalar(const char *cmd, const Param *pa, const CmdValue *v)
{
	if (!v->integer && !type_is_float(pa->type)) {
		diag_error(pa->loc, "scalar '%s' has an integer type: txc %s -D %s=%s is not an integer in 64 bits", pa->name,
		    cmd, pa->name, v->text);
		return false;
	}
	return true;
}

int
cmdline_knob(const char *cmd, const char *arg)
{
	if (knobs_request_arg(arg))
		return -1;
	return cmdline_bad(cmd, "bad -K '%s': expected NAME=VALUE (a knob and one of its values)",
	    arg);
}

bool
cmdline_schedules(const char *s, const char ***scheds, int *n, int *cap)
{
	char *copy = arena_strdup(perm, s);

	for (char *t = strtok(copy, ","); t; t = strtok(NULL, ","))
		*ARENA_PUSH(perm, *scheds, *n, *cap) = !strcmp(t, "default") ? NULL : intern_cstr(t);
	return *n > 0;
}

int
cmdline_getopt_error(const char *cmd, int c, char **argv)
{
	if (c == ':')
		return cmdline_bad(cmd, "option '%s' needs an argument", argv[optind - 1]);
	if (optopt && optopt < 256) {
		char o[3] = { '-', (char)optopt, 0 };
		return cmdline_bad(cmd, "unknown option '%s'", o);
	}
	return cmdline_bad(cmd, "unknown option '%s'", argv[optind - 1]);
}

int
cmdline_input(const char *cmd, int argc, char **argv, bool only_one)
{
	if (optind == argc)
		return cmdline_bad(cmd, "%s", "no input file");
	if (only_one && optind != argc - 1)
		return cmdline_bad(cmd, "more than one input file ('%s')", argv[optind + 1]);
	return -1;
}

Kernel *
cmdline_kernel(Program *prog, const char *name, const char *input)
{
	for (int i = 0; i < prog->nkernels; i++)
		if (name ? prog->kernels[i]->name == name :
		    prog->kernels[i]->loc.file == prog->file)
			return prog->kernels[i];
	diag_error(loc_none, name ? "no kernel named '%s' in '%s'" : "%s'%s' has no kernel",
	    name ? name : "", input);
	return NULL;
}

bool
cmdline_defs_known(Kernel *k, const char **names, int ndefs)
{
	bool ok = true;
	for (int d = 0; d < ndefs; d++) {
		bool known = false;
		for (int i = 0; i < k->nparams; i++)
			known |= k->params[i].name == names[d];
		if (!known) {
			diag_error(loc_none, "-D %s: kernel '%s' has no parameter '%s'", names[d],
			    k->name, names[d]);
			ok = false;
		}
	}
	return ok;
}

uint32_t
cmdline_load(const char *input, const char **names, const CmdValue *values, int n)
{
	size_t len = strlen(input);
	if (len <= 5 || strcmp(input + len - 5, ".onnx") != 0)
		return source_load(input);
	const char **dn = arena_alloc(perm, ((size_t)n + 1) * sizeof *dn);
	int64_t *dv = arena_alloc(perm, ((size_t)n + 1) * sizeof *dv);
	int *from = arena_alloc(perm, ((size_t)n + 1) * sizeof *from);
	int nd = 0;
	for (int i = 0; i < n; i++)
		if (values[i].integer) {
			from[nd] = i;
			dn[nd] = names[i];
			dv[nd++] = values[i].i;
		}
	OnnxOptions oo = { .defs = dn, .vals = dv, .ndefs = nd };
	uint32_t file = onnx_import(input, &oo);
	/* a dim_param's -D now names the kernel's size parameter */
	for (int i = 0; i < nd; i++)
		names[from[i]] = dn[i];
	return file;
}

