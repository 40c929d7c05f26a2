/* viz.c: `txc viz FILE.tx -D H=8 ... -o out.html`: pictures of a schedule.
 *
 * Lowers the kernel with each schedule asked for (-s, --schedules) as
 * --print-loops does, with the sizes left symbolic so that the nest is
 * the one a student reads, runs it at the -D sizes in viz/'s interpreter
 * and writes what viz/ makes of the traces: a self-contained web page
 * (the default), the numbers (--stats), the events (--dump-trace) or SVG
 * frames (--frames=N).  Exit status as txc's: 0, 1 for errors in the
 * input or the invocation (a size too large for a picture is one), 2 for
 * I/O failures.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver.h"
#include "auto/auto.h"
#include "lower/lower.h"
#include "parser/parser.h"
#include "sema/sema.h"
#include "viz/viz.h"

typedef struct {
	const char **inputs; int ninputs;  /* several: side by side */
	const char *input;                 /* the first */
	const char *output;                /* -o */
	const char *kernel;                /* -k */
	const char **scheds; int nscheds;  /* -s / --schedules; NULL entry: unnamed */
	const char **names; CmdValue *values; int ndefs;   /* -D */
	const char *target;                /* --target: whose schedules */
	bool no_schedule;                  /* --no-schedule */
	bool no_layout;                    /* --no-layout */
	bool stats, dump;                  /* --stats, --dump-trace */
	int frames;                        /* --frames=N */
	VizOptions vo;
	Options drv;                       /* for imports (-I) */
} Viz;

static void
usage(FILE *fp)
{
	fputs("usage: txc viz FILE.tx... -D SIZE=N ... [options]\n"
	    "  several files: their schedules side by side (tutorial steps)\n"
	    "  -D NAME=VALUE        a size (required for each) or scalar parameter\n"
	    "  -k KERNEL            the kernel (default: the file's first)\n"
	    "  -s NAME              the schedule to draw (default: the unnamed one)\n"
	    "  --schedules=A,B,...  several schedules side by side ('default': unnamed)\n"
	    "  --no-schedule        the kernel as written\n"
	    "  --target=cpu|cuda|vta  whose schedules (default cpu)\n"
	    "  --no-layout          as for txc: calls keep their kernels' layout\n"
	    "  -o FILE              the page (default: FILE.html here; '-': stdout);\n"
	    "                       with --frames, the frames' prefix\n"
	    "  --frames=N           write N SVG frames PREFIX-001.svg ... instead of a page\n"
	    "  --stats              print the numbers instead of writing a page\n"
	    "  --dump-trace         print every load and store instead of writing a page\n"
	    "  --threads=N          threads of a parallel loop (default 4)\n"
	    "  --seed=N             random inputs' seed (default 1)\n"
	    "  -I DIR               as for txc\n", fp);
}

static int
bad(const char *fmt, const char *arg)
{
	return cmdline_bad("viz", fmt, arg);
}

static int
parse(Viz *z, int argc, char **argv)
{
	enum { O_SCHEDS = 256, O_NOSCHED, O_NOLAYOUT, O_TARGET, O_FRAMES, O_STATS, O_DUMP, O_THREADS, O_SEED };
	static const struct option lo[] = {
		{ "schedules", required_argument, NULL, O_SCHEDS },
		{ "no-schedule", no_argument, NULL, O_NOSCHED },
		{ "no-layout", no_argument, NULL, O_NOLAYOUT },
		{ "target", required_argument, NULL, O_TARGET },
		{ "frames", required_argument, NULL, O_FRAMES },
		{ "stats", no_argument, NULL, O_STATS },
		{ "dump-trace", no_argument, NULL, O_DUMP },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int capd, capv, capi, caps;
	int c, n, rc;
	long long iv;

	z->target = "cpu";
	z->vo.threads = 4;
	z->vo.seed = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:k:s:I:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'D': {
			const char *name;
			CmdValue v;
			if (!cmdline_define(optarg, &name, &v))
				return bad("bad -D '%s': expected NAME=VALUE", optarg);
			n = z->ndefs;
			*ARENA_PUSH(perm, z->names, z->ndefs, capd) = name;
			*ARENA_PUSH(perm, z->values, n, capv) = v;
			break;
		}
		case 'k': z->kernel = intern_cstr(optarg); break;
		case 's': *ARENA_PUSH(perm, z->scheds, z->nscheds, caps) = intern_cstr(optarg); break;
		case 'I': *ARENA_PUSH(perm, z->drv.incdirs, z->drv.nincdirs, capi) = optarg; break;
		case 'o': z->output = optarg; break;
		case O_SCHEDS:
			if (!cmdline_schedules(optarg, &z->scheds, &z->nscheds, &caps))
				return bad("%s", "--schedules needs a list of names");
			break;
		case O_NOSCHED: z->no_schedule = true; break;
		case O_NOLAYOUT: z->no_layout = true; break;
		case O_TARGET:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "vta"))
				return bad("bad --target '%s': txc viz draws cpu, cuda or vta schedules", optarg);
			z->target = optarg;
			break;
		case O_FRAMES:
			if (!cmdline_int(optarg, 1, 1000, &iv))
				return bad("bad --frames '%s': expected a number of frames from 1 to 1000", optarg);
			z->frames = (int)iv;
			break;
		case O_STATS: z->stats = true; break;
		case O_DUMP: z->dump = true; break;
		case O_THREADS:
			if (!cmdline_int(optarg, 1, 256, &iv))
				return bad("bad --threads '%s': expected a number of threads from 1 to 256", optarg);
			z->vo.threads = (int)iv;
			break;
		case O_SEED:
			if (!cmdline_int(optarg, 0, 0xffffffffLL, &iv))
				return bad("bad --seed '%s': expected a non-negative integer", optarg);
			z->vo.seed = (unsigned)iv;
			break;
		case 'h': usage(stdout); return 0;
		default: return cmdline_getopt_error("viz", c, argv);
		}
	}
	if ((rc = cmdline_input("viz", argc, argv, false)) >= 0)
		return rc;
	z->inputs = (const char **)argv + optind;
	z->ninputs = argc - optind;
	z->input = argv[optind];
	if (z->no_schedule && z->nscheds)
		return bad("%s", "--no-schedule and -s or --schedules ask for different things");
	if (z->nscheds == 0)
		*ARENA_PUSH(perm, z->scheds, z->nscheds, caps) = NULL;
	return -1;
}

/* FILE.tx -> FILE.html here (or FILE for --frames' prefix). */
static const char *
default_output(Viz *z)
{
	if (!strcmp(z->input, "-"))
		return z->frames ? "viz" : "-";
	const char *base = strrchr(z->input, '/');
	base = base ? base + 1 : z->input;
	size_t n = strlen(base);
	if (n > 3 && !strcmp(base + n - 3, ".tx"))
		n -= 3;
	return arena_printf(perm, "%.*s%s", (int)n, base, z->frames ? "" : ".html");
}

/* The frames: nframes evenly spaced ticks from 0 to the last. */
static bool
write_frames(Viz *z, VizTrace **tr, int n)
{
	const char *prefix = z->output ? z->output : default_output(z);
	size_t len = strlen(prefix);
	if (len > 5 && !strcmp(prefix + len - 5, ".html"))
		prefix = arena_printf(perm, "%.*s", (int)(len - 5), prefix);
	int64_t last = 0;
	for (int i = 0; i < n; i++)
		if (tr[i]->ticks - 1 > last)
			last = tr[i]->ticks - 1;
	for (int f = 0; f < z->frames; f++) {
		int64_t tick = z->frames == 1 ? last : last * f / (z->frames - 1);
		const char *path = arena_printf(perm, "%s-%03d.svg", prefix, f + 1);
		FILE *fp = output_open(path, false);
		if (!fp)
			return false;
		viz_write_svg(fp, tr, n, tick);
		if (!output_commit(fp) || !output_finish_all())
			return false;
	}
	return true;
}

/* The traces of one file, appended to *tr; false after a message. */
static bool
trace_file(Viz *z, const char *input, VizTrace ***tr, int *n, int *cap)
{
	uint32_t file = cmdline_load(input, z->names, z->values, z->ndefs);
	Kernel *k = NULL;
	bool ok = true;

	if (!file)
		return false;
	/* calls rewritten by the target's layout declarations, as txc
	 * compiles them (tx.5 LAYOUTS) */
	layouts_set_target(z->target, !z->no_layout);
	Program *prog = parse_program(file);
	if (diag_errors() || !import_resolve(prog, &z->drv) ||
	    !import_target_table(prog, z->target) || !sema_check(prog))
		return false;
	if (!(k = cmdline_kernel(prog, z->kernel, input)))
		return false;
	double *params = arena_alloc(perm, (k->nparams + 1) * sizeof *params);
	ok = cmdline_defs_known(k, z->names, z->ndefs);
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		const CmdValue *v = NULL;
		int64_t size;
		params[i] = 1;   /* a scalar parameter not given */
		for (int d = 0; d < z->ndefs; d++)
			if (z->names[d] == pa->name)
				v = &z->values[d];
		if (!v && pa->is_size) {
			diag_error(pa->loc, "size '%s' needs a value: txc viz -D %s=N", pa->name, pa->name);
			ok = false;
		} else if (pa->is_size && !cmdline_size("viz", pa, v, &size)) {
			ok = false;
		} else if (pa->is_size && size > VIZ_MAX_ELEMS) {
			diag_error(pa->loc, "size '%s' is %lld: txc viz draws sizes up to %d elements a "
			    "tensor; use smaller sizes", pa->name, (long long)size, VIZ_MAX_ELEMS);
			ok = false;
		} else if (pa->is_size) {
			params[i] = (double)size;   /* exact: at most VIZ_MAX_ELEMS */
		} else if (v && !cmdline_scalar("viz", pa, v)) {
			ok = false;
		} else if (v) {
			params[i] = v->f;
		}
	}
	if (!ok)
		return false;

	/* several files: each panel is named by its file */
	const char *base = strrchr(input, '/');
	base = base ? base + 1 : input;
	/* the generated schedule (auto/attach.c), at the sizes drawn */
	const char **dn = arena_alloc(perm, (k->nparams + 1) * sizeof *dn);
	int64_t *dv = arena_alloc(perm, (k->nparams + 1) * sizeof *dv);
	int nd = 0;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].is_size) {
			dn[nd] = k->params[i].name;
			dv[nd++] = (int64_t)params[i];
		}
	AutoRequest ar = { .target = z->target, .defs = dn, .vals = dv, .ndefs = nd };
	for (int s = 0; s < z->nscheds && !z->no_schedule; s++)
		if (auto_wanted(prog, k, z->target, z->scheds[s], false) && !auto_attach(prog, k, &ar))
			return false;
	for (int s = 0; s < z->nscheds; s++) {
		LowerOptions lo = { .no_schedule = z->no_schedule, .target = z->target,
		    .schedule = z->scheds[s], .stop_after = "simplify", .auto_default = true,
		    .auto_strict = auto_strict() };
		IrFunc *f = lower_kernel(prog, k, &lo);
		if (!f)
			return false;
		VizTrace *t = arena_alloc(perm, sizeof *t);
		if (!viz_trace(f, params, &z->vo, t))
			return false;
		t->schedule = z->no_schedule ? "unscheduled" : z->scheds[s] ? z->scheds[s] : "default";
		if (z->ninputs > 1)
			t->schedule = z->nscheds > 1 ? arena_printf(perm, "%s of %s", t->schedule, base) :
			    base;
		if (!viz_finish(t))
			return false;
		*ARENA_PUSH(perm, *tr, *n, *cap) = t;
	}
	return true;
}

static int
run(Viz *z)
{
	VizTrace **tr = NULL;
	int n = 0, cap = 0;
	for (int i = 0; i < z->ninputs; i++)
		if (!trace_file(z, z->inputs[i], &tr, &n, &cap))
			return 1;
	if (z->stats || z->dump) {
		for (int s = 0; s < n; s++) {
			if (z->stats)
				viz_print_stats(stdout, tr[s]);
			if (z->dump)
				viz_print_trace(stdout, tr[s]);
		}
		if (!z->output && !z->frames)
			return 0;
	}
	if (z->frames)
		return write_frames(z, tr, n) ? 0 : 2;
	FILE *fp = output_open(z->output ? z->output : default_output(z), false);
	if (!fp)
		return 2;
	char *title = "txc viz";
	for (int i = 0; i < z->ninputs; i++)
		title = arena_printf(perm, "%s %s", title, z->inputs[i]);
	if (!viz_write_page(fp, title, tr, n) || !output_commit(fp) || !output_finish_all())
		return 2;
	return 0;
}

int
viz_main(int argc, char **argv)
{
	Viz z = { 0 };
	int rc = parse(&z, argc, argv);

	if (rc >= 0)
		return rc;
	jmp_buf top;
	diag_catch = &top;
	if (setjmp(top)) {
		output_abort_all();
		return 2;
	}
	rc = run(&z);
	diag_flush();
	if (rc != 0)
		output_abort_all();
	return rc;
}
