/* main.c: the txc command line.
 *
 *     txc FILE.tx -o FILE.o        compile every kernel to a native object
 *     txc --check FILE.tx          run the front end only
 *     txc bench FILE.tx -D M=1024  JIT, run, time and check (bench.c)
 *     txc viz FILE.tx -D M=8 ...   pictures of a schedule (viz.c, viz/)
 *     txc tune FILE.tx -k K -D ... search a template's knobs (tune/)
 *
 * Parses options, loads the source and its imports, runs the front end,
 * lowers the chosen kernels and hands them to a backend.  Errors go
 * through diag; any error removes the outputs written so far.  Exit
 * status: 0 success, 1 errors in the input or the invocation, 2 internal
 * or I/O failure.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "auto/auto.h"
#include "lower/ir.h"
#include "lower/lower.h"
#include "onnx/onnx.h"
#include "parser/parser.h"
#include "sema/sema.h"
#include "target/target.h"
#include "tune/tune.h"

/* Backends that are built in; see target/target.h. */
static bool emit_backend(IrFunc **funcs, int n, const Options *o, const char *out);

static void
usage(FILE *fp)
{
	fputs(
"usage: txc [options] FILE.tx          compile the kernels of FILE.tx\n"
"       txc bench FILE.tx [options]    run, time and check a kernel\n"
"       txc viz FILE.tx -D SIZE=N ...  draw a schedule as a web page\n"
"       txc tune FILE.tx -k KERNEL -D SIZE=N ...  search a template's knobs\n"
"\n"
"Output:\n"
"  -o FILE              write the output to FILE ('-': standard output)\n"
"  --emit=KIND          obj (default), asm, llvm, bc, c, loops, harness,\n"
"                       ptx, kernels, cuda (--target=cuda: the kernels' PTX;\n"
"                       the host code and kernels after the GPU passes; CUDA C),\n"
"                       tx (a .onnx input: the .tx program it becomes)\n"
"  -S                   same as --emit=asm\n"
"  -H FILE              also write a C header with the kernels' prototypes\n"
"  --dlpack             also NAME_dlpack(), taking DLPack tensors (object, -H)\n"
"  --shared             write a shared library holding libtxrt (also -o NAME.so)\n"
"  --signature=FILE     also write the entry points' signatures as JSON\n"
"  --prefix=P           name every entry point P + the kernel's name\n"
"  -c                   compile to an object (the default; accepted for cc habits)\n"
"\n"
"Front end:\n"
"  --check              check the program and stop (no output)\n"
"  --dump-ast           print the syntax tree\n"
"  --format             print the program as canonical .tx\n"
"  -I DIR               search DIR for imported files\n"
"\n"
"Kernels and schedules:\n"
"  -k NAME              compile only kernel NAME (repeatable)\n"
"  -s NAME              use the schedule named NAME\n"
"  --no-schedule        ignore every schedule: the kernel as written\n"
"  --no-auto-schedule   a kernel with no schedule for the target keeps its naive\n"
"                       nest (default: the generated schedule, -s auto)\n"
"  --print-auto-schedule[=template]\n"
"                       print the generated schedule of each kernel (with\n"
"                       =template: with its knobs) and exit\n"
"  --print-fusion       print each kernel's stages by operator kind, their\n"
"                       fusion groups and what schedules each group, and exit\n"
"  --no-layout          calls keep their kernels' layout (no layout declaration\n"
"                       for the target applies)\n"
"  --print-layout       print the calls each kernel's layout declarations\n"
"                       rewrote and the transforms that cancelled, and exit\n"
"  -D NAME=VALUE        fix size parameter NAME at compile time\n"
"  -K NAME=VALUE        give knob NAME of a schedule template the value VALUE\n"
"  --tuning-log=FILE    give each schedule template the best point FILE (txc tune\n"
"                       --log) holds for it, this machine and the -D sizes\n"
"  --print-loops        print the lowered loop nest (same as --emit=loops -o -)\n"
"  --trace-schedule     print the loop nest after each schedule primitive\n"
"  --dump-after=PASS    print the loop nest after lowering pass PASS (or 'all')\n"
"\n"
"Code generation:\n"
"  --target=T           cpu (default), cuda or vta; or an LLVM target triple\n"
"  --cpu=NAME           the CPU to tune for (default: this machine; 'generic')\n"
"  --cache=L1,L2[,L3]   the data cache sizes schedules size blocks for (l1_bytes...;\n"
"                       default: this machine's, from the OS, or --cpu's)\n"
"  --features=LIST      LLVM target features, e.g. +avx2,+fma\n"
"  --cuda-arch=SM       --target=cuda: the GPU architecture (default sm_80)\n""  -O0 -O1 -O2 -O3      optimisation level (default -O3)\n"
"  -g                   map instructions to .tx lines (DWARF)\n"
"  --local-intrinsics   build every tensorize micro-kernel into the object\n"
"                       (not libtxrt's prebuilt copies)\n"
"  --no-vector-math     exp, log, tanh, erf, pow, sigmoid of vectors call libm\n"
"                       per lane (default: inline vector code)\n"
"  --codegen-threads=N  compile the object on up to N threads (default: one\n"
"                       per processor, for modules large enough; 1: one)\n"
"  --runtime-kernels    write libtxrt's prebuilt micro-kernels (no FILE.tx;\n"
"                       the build of libtxrt runs it)\n"
"\n"
"Diagnostics and information:\n"
"  --color=WHEN         auto (default), always or never\n"
"  --max-errors=N       stop reporting after N errors (0: no limit)\n"
"  -h, --help           print this help and exit\n"
"  -V, --version        print the version and exit\n", fp);
}

enum {
	OPT_EMIT = 256, OPT_CHECK, OPT_DUMP_AST, OPT_FORMAT, OPT_NO_SCHEDULE,
	OPT_PRINT_LOOPS, OPT_TRACE, OPT_DUMP_AFTER, OPT_TARGET, OPT_CPU, OPT_CACHE,
	OPT_FEATURES, OPT_COLOR, OPT_MAX_ERRORS, OPT_DLPACK, OPT_PREFIX, OPT_LOCAL_INTRINSICS,
	OPT_RUNTIME_KERNELS, OPT_CODEGEN_THREADS, OPT_CUDA_ARCH, OPT_TUNING_LOG,
	OPT_NO_AUTO, OPT_PRINT_AUTO, OPT_PRINT_FUSION, OPT_NO_LAYOUT, OPT_PRINT_LAYOUT,
	OPT_SHARED, OPT_SIGNATURE, OPT_NO_VECTOR_MATH,
};

static const struct option longopts[] = {
	{ "emit", required_argument, NULL, OPT_EMIT },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "dump-ast", no_argument, NULL, OPT_DUMP_AST },
	{ "format", no_argument, NULL, OPT_FORMAT },
	{ "no-schedule", no_argument, NULL, OPT_NO_SCHEDULE },
	{ "no-auto-schedule", no_argument, NULL, OPT_NO_AUTO },
	{ "print-auto-schedule", optional_argument, NULL, OPT_PRINT_AUTO },
	{ "print-fusion", no_argument, NULL, OPT_PRINT_FUSION },
	{ "no-layout", no_argument, NULL, OPT_NO_LAYOUT },
	{ "print-layout", no_argument, NULL, OPT_PRINT_LAYOUT },
	{ "print-loops", no_argument, NULL, OPT_PRINT_LOOPS },
	{ "trace-schedule", no_argument, NULL, OPT_TRACE },
	{ "dump-after", required_argument, NULL, OPT_DUMP_AFTER },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "features", required_argument, NULL, OPT_FEATURES },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "max-errors", required_argument, NULL, OPT_MAX_ERRORS },
	{ "dlpack", no_argument, NULL, OPT_DLPACK },
	{ "prefix", required_argument, NULL, OPT_PREFIX },
	{ "local-intrinsics", no_argument, NULL, OPT_LOCAL_INTRINSICS },
	{ "no-vector-math", no_argument, NULL, OPT_NO_VECTOR_MATH },
	{ "runtime-kernels", no_argument, NULL, OPT_RUNTIME_KERNELS },
	{ "codegen-threads", required_argument, NULL, OPT_CODEGEN_THREADS },
	{ "cuda-arch", required_argument, NULL, OPT_CUDA_ARCH },
	{ "tuning-log", required_argument, NULL, OPT_TUNING_LOG },
	{ "shared", no_argument, NULL, OPT_SHARED },
	{ "signature", required_argument, NULL, OPT_SIGNATURE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int
bad_usage(const char *fmt, const char *arg)
{
	fputs("txc: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see 'txc --help')\n", stderr);
	return 1;
}

static bool
parse_int64(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*v = x;
	return true;
}

/* -D NAME=VALUE */
static bool
add_def(Options *o, const char *arg)
{
	static int cap, capv;
	const char *eq = strchr(arg, '=');
	int64_t v;
	if (!eq || eq == arg || !parse_int64(eq + 1, &v) || v < 0)
		return false;
	/* NAME: a size parameter, or for a model a dim_param as the model
	 * spells it (p2o.DynamicDimension.1, unk__314), which the ONNX front
	 * end renames; a name no kernel has is an error later */
	for (const char *c = arg; c < eq; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return false;
	int n = o->ndefs;
	*ARENA_PUSH(perm, o->defs, o->ndefs, cap) = intern(arg, (size_t)(eq - arg));
	*ARENA_PUSH(perm, o->def_values, n, capv) = v;
	return true;
}

static bool
parse_emit(const char *s, OutKind *k)
{
	static const struct { const char *name; OutKind kind; } kinds[] = {
		{ "obj", OUT_OBJ }, { "asm", OUT_ASM }, { "llvm", OUT_LLVM },
		{ "bc", OUT_BC }, { "c", OUT_C }, { "loops", OUT_LOOPS },
		{ "harness", OUT_HARNESS }, { "ptx", OUT_PTX }, { "kernels", OUT_KERNELS }, { "cuda", OUT_CUDA },
		{ "vta-asm", OUT_VTA_ASM }, { "vta-bin", OUT_VTA_BIN }, { "tx", OUT_TX },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(s, kinds[i].name) == 0) {
			*k = kinds[i].kind;
			return true;
		}
	return false;
}

/* --prefix: letters, digits and _, not starting with a digit. */
static bool
valid_prefix(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Returns -1 to go on, or an exit status. */
static int
parse_args(int argc, char **argv, Options *o)
{
	static int capk, capi;
	int c;
	o->opt_level = 3;
	o->target = "cpu";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:SH:cI:k:s:D:K:O:ghV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'S': o->emit = OUT_ASM; break;
		case 'H': o->header = optarg; break;
		case 'c': break;
		case 'I': *ARENA_PUSH(perm, o->incdirs, o->nincdirs, capi) = optarg; break;
		case 'k': *ARENA_PUSH(perm, o->kernels, o->nkernels, capk) = intern_cstr(optarg); break;
		case 's': o->schedule = intern_cstr(optarg); break;
		case 'D':
			if (!add_def(o, optarg))
				return bad_usage("bad -D '%s': expected NAME=VALUE with a non-negative integer VALUE", optarg);
			break;
		case 'K':
			if (!knobs_request_arg(optarg))
				return bad_usage("bad -K '%s': expected NAME=VALUE (a knob and one of its values)", optarg);
			break;
		case 'O':
			if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '3')
				return bad_usage("bad optimisation level '-O%s': use -O0 to -O3", optarg);
			o->opt_level = optarg[0] - '0';
			break;
		case 'g': o->debug = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("txc %s\n", PACKAGE_VERSION); return 0;
		case OPT_EMIT:
			if (!parse_emit(optarg, &o->emit))
				return bad_usage("unknown --emit kind '%s': use obj, asm, llvm, bc, c, loops, harness, ptx, kernels or cuda", optarg);
			break;
		case OPT_CHECK: o->check_only = true; break;
		case OPT_DUMP_AST: o->dump_ast = true; break;
		case OPT_FORMAT: o->format = true; break;
		case OPT_NO_SCHEDULE: o->no_schedule = true; break;
		case OPT_NO_AUTO: o->no_auto = true; break;
		case OPT_PRINT_AUTO:
			if (optarg && strcmp(optarg, "template"))
				return bad_usage("bad --print-auto-schedule=%s: the only form is =template", optarg);
			o->print_auto = optarg ? 2 : 1;
			break;
		case OPT_PRINT_FUSION: o->print_fusion = true; break;
		case OPT_NO_LAYOUT: o->no_layout = true; break;
		case OPT_PRINT_LAYOUT: o->print_layout = true; break;
		case OPT_PRINT_LOOPS:
			o->emit = OUT_LOOPS;
			if (!o->output)
				o->output = "-";
			break;
		case OPT_TRACE: o->trace_schedule = true; break;
		case OPT_DUMP_AFTER:
			if (!lower_pass_known(optarg)) {
				const char *const *p = lower_pass_names();
				char *list = "";
				for (int i = 0; p[i]; i++)
					list = arena_printf(perm, "%s%s, ", list, p[i]);
				return bad_usage("%s", arena_printf(perm, "unknown pass '%s' for "
				    "--dump-after: use %sor all", optarg, list));
			}
			o->dump_after = optarg;
			break;
		case OPT_TARGET:
			if (!strcmp(optarg, "cpu") || !strcmp(optarg, "cuda") || !strcmp(optarg, "vta"))
				o->target = optarg;
			else if (strchr(optarg, '-'))
				o->triple = optarg;
			else
				return bad_usage("unknown target '%s': use cpu, cuda, vta or an LLVM triple such as aarch64-linux-gnu", optarg);
			break;
		case OPT_CPU: o->cpu = optarg; break;
		case OPT_CACHE:
			if (!caches_override(optarg))
				return 1;
			break;
		case OPT_TUNING_LOG: o->tuning_log = optarg; break;
		case OPT_CUDA_ARCH:
			if (strncmp(optarg, "sm_", 3) || !optarg[3] || strspn(optarg + 3, "0123456789a") != strlen(optarg + 3))
				return bad_usage("bad --cuda-arch '%s': expected an SM name such as sm_80 or sm_90", optarg);
			o->cuda_arch = optarg;
			break;
		case OPT_FEATURES: o->features = optarg; break;
		case OPT_DLPACK: o->dlpack = true; break;
		case OPT_SHARED: o->shared = true; break;
		case OPT_SIGNATURE: o->signature = optarg; break;
		case OPT_PREFIX:
			if (!valid_prefix(optarg))
				return bad_usage("bad --prefix '%s': expected the start of a C identifier (letters, digits, _)", optarg);
			o->prefix = optarg;
			break;
		case OPT_LOCAL_INTRINSICS: o->local_intrinsics = true; break;
		case OPT_NO_VECTOR_MATH: o->no_vector_math = true; break;
		case OPT_RUNTIME_KERNELS: o->runtime_kernels = true; break;
		case OPT_COLOR:
			if (!strcmp(optarg, "auto"))
				diag_set_color(-1);
			else if (!strcmp(optarg, "always"))
				diag_set_color(1);
			else if (!strcmp(optarg, "never"))
				diag_set_color(0);
			else
				return bad_usage("bad --color '%s': use auto, always or never", optarg);
			break;
		case OPT_CODEGEN_THREADS: {
			int64_t v;
			if (!parse_int64(optarg, &v) || v < 1 || v > 64)
				return bad_usage("bad --codegen-threads '%s': expected a number of threads from 1 to 64", optarg);
			o->codegen_threads = (int)v;
			break;
		}
		case OPT_MAX_ERRORS: {
			int64_t v;
			if (!parse_int64(optarg, &v) || v < 0 || v > INT_MAX)
				return bad_usage("bad --max-errors '%s': expected a non-negative integer", optarg);
			diag_set_max_errors((int)v);
			break;
		}
		case ':':
			return bad_usage("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt && optopt < 256) {
				char s[3] = { '-', (char)optopt, 0 };
				return bad_usage("unknown option '%s'", s);
			}
			return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o->runtime_kernels) {
		if (optind < argc)
			return bad_usage("--runtime-kernels takes no input file ('%s')", argv[optind]);
		return -1;
	}
	if (optind == argc)
		return bad_usage("%s", "no input file");
	if (argc - optind > 1)
		return bad_usage("more than one input file ('%s')", argv[optind + 1]);
	o->input = argv[optind];
	return -1;
}

/* FILE.tx -> FILE.o (or .s, .ll, .bc, .c), in the current directory. */
static const char *
default_output(const Options *o)
{
	static const char *const ext[] = {
		[OUT_OBJ] = ".o", [OUT_ASM] = ".s", [OUT_LLVM] = ".ll", [OUT_BC] = ".bc",
		[OUT_C] = ".c", [OUT_LOOPS] = NULL, [OUT_HARNESS] = "_harness.c", [OUT_PTX] = ".ptx", [OUT_KERNELS] = NULL, [OUT_CUDA] = ".cu",
		[OUT_VTA_ASM] = NULL, [OUT_VTA_BIN] = ".vta", [OUT_TX] = NULL,
	};
	if (!ext[o->emit] || strcmp(o->input, "-") == 0)
		return "-";
	const char *base = strrchr(o->input, '/');
	base = base ? base + 1 : o->input;
	size_t n = strlen(base);
	if (n > 3 && strcmp(base + n - 3, ".tx") == 0)
		n -= 3;
	else if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
		n -= 5;
	return arena_printf(perm, "%.*s%s", (int)n, base, o->shared ? ".so" : ext[o->emit]);
}

static bool
wanted(const Options *o, Kernel *k)
{
	if (o->nkernels == 0)
		return true;
	for (int i = 0; i < o->nkernels; i++)
		if (o->kernels[i] == k->name)
			return true;
	return false;
}

/* Whether k is compiled: -k names it, or, without -k, it is the file's. */
static bool
compiled(const Options *o, Program *prog, Kernel *k)
{
	return o->nkernels ? wanted(o, k) : k->loc.file == prog->file;
}

/* Every -D names a size parameter of a compiled kernel. */
static bool
check_defs(const Options *o, Program *prog)
{
	for (int d = 0; d < o->ndefs; d++) {
		const char *scalar_of = NULL;
		bool found = false;
		for (int i = 0; i < prog->nkernels && !found; i++) {
			Kernel *k = prog->kernels[i];
			if (!compiled(o, prog, k))
				continue;
			for (int p = 0; p < k->nparams; p++)
				if (k->params[p].name == o->defs[d]) {
					found = k->params[p].is_size;
					if (!found)
						scalar_of = k->name;
				}
		}
		if (found)
			continue;
		if (scalar_of)
			diag_error(loc_none, "-D %s: '%s' is a scalar parameter of kernel '%s'; "
			    "-D fixes size parameters only", o->defs[d], o->defs[d], scalar_of);
		else
			diag_error(loc_none, "-D %s: no kernel has a size parameter '%s'",
			    o->defs[d], o->defs[d]);
		return false;
	}
	return true;
}

/* After errors: the knob point of each template that was compiled (an
 * illegal point is reported as one). */
static void
note_knob_points(const Options *o, Program *prog)
{
	for (int i = 0; i < prog->nschedules; i++) {
		Schedule *s = prog->schedules[i];
		if (s && s->nknobs && s->k && compiled(o, prog, s->k) && s->name == o->schedule &&
		    !strcmp(s->target ? s->target : "", o->target))
			knobs_note_point(s);
	}
}

static int
compile(Options *o)
{
	bool native = o->emit == OUT_OBJ || o->emit == OUT_ASM || o->emit == OUT_LLVM ||
	    o->emit == OUT_BC;
	if (o->runtime_kernels) {
		const char *out = o->output ? o->output :
		    o->emit == OUT_ASM ? "txrt-kernels.s" : "txrt-kernels.o";
		if (!emit_runtime_kernels(o, out))
			return output_io_failed() || !diag_errors() ? 2 : 1;
		return output_finish_all() ? 0 : 2;
	}
	/* -o NAME.so: a shared library, as with --shared (shared.c) */
	size_t olen = o->output ? strlen(o->output) : 0;
	if (o->emit == OUT_OBJ && olen > 3 && !strcmp(o->output + olen - 3, ".so"))
		o->shared = true;
	if (o->shared && o->emit != OUT_OBJ) {
		diag_error(loc_none, "--shared links an object into a shared library: it does not "
		    "go with -S, --emit or --print-loops");
		return 1;
	}
	if ((o->emit == OUT_VTA_ASM || o->emit == OUT_VTA_BIN) && strcmp(o->target, "vta")) {
		diag_error(loc_none, "--emit=%s writes the instruction streams of --target=vta",
		    o->emit == OUT_VTA_ASM ? "vta-asm" : "vta-bin");
		return 1;
	}
	if ((o->emit == OUT_PTX || o->emit == OUT_KERNELS || o->emit == OUT_CUDA) &&
	    strcmp(o->target, "cuda")) {
		diag_error(loc_none, "--emit=%s writes the GPU kernels of --target=cuda",
		    o->emit == OUT_PTX ? "ptx" : o->emit == OUT_CUDA ? "cuda" : "kernels");
		return 1;
	}
	if (o->cuda_arch && strcmp(o->target, "cuda")) {
		diag_error(loc_none, "--cuda-arch applies to --target=cuda");
		return 1;
	}
	if (native && !o->check_only && (o->cpu || o->features || o->triple)) {
		/* an unknown --cpu or --features fails before any work */
		LlvmOptions lo = { .triple = o->triple, .cpu = o->cpu, .features = o->features };
		if (!llvm_check_options(&lo))
			return 1;
	}
	const char *tp = getenv("TXC_TIME_PASSES");
	o->time_passes = !tp || !*tp || !strcmp(tp, "0") ? 0 : !strcmp(tp, "2") ? 2 : 1;
	double t0 = clock_ms(CLOCK_MONOTONIC);
	if (o->time_passes)   /* loading libLLVM and its static constructors */
		fprintf(stderr, "txc: start-up            %8.3f ms\n",
		    clock_ms(CLOCK_PROCESS_CPUTIME_ID));
	size_t ilen = strlen(o->input);
	bool onnx = ilen > 5 && !strcmp(o->input + ilen - 5, ".onnx");
	if (o->emit == OUT_TX && !onnx) {
		diag_error(loc_none, "--emit=tx prints the program an ONNX model becomes: give a .onnx file");
		return 1;
	}
	uint32_t file;
	if (onnx) {
		/* the ONNX front end (onnx/, txc(1) ONNX MODELS) writes .tx text */
		OnnxOptions oo = { .defs = o->defs, .vals = o->def_values, .ndefs = o->ndefs };
		file = onnx_import(o->input, &oo);
		if (!file)
			return diag_errors() ? 1 : 2;
		if (o->emit == OUT_TX) {
			FILE *fp = output_open(o->output ? o->output : "-", false);
			if (!fp)
				return 2;
			fputs(source_get(file)->text, fp);
			return output_commit(fp) && output_finish_all() ? 0 : 2;
		}
	} else {
		file = source_load(o->input);
	}
	if (!file)
		return 2;   /* a file that cannot be read: txc(1) EXIT STATUS */
	Program *prog = parse_program(file);
	if (diag_errors())
		return 1;
	if (o->format) {
		ast_format(stdout, prog);
		return 0;
	}
	if (o->dump_ast) {
		ast_dump(stdout, prog);
		return 0;
	}
	if (!import_resolve(prog, o) || !import_target_table(prog, o->target))
		return 1;
	auto_target_isa(o->triple, o->cpu, o->features);   /* the isa knob's default */
	/* the layout declarations for the target rewrite calls (tx.5 LAYOUTS) */
	layouts_set_target(o->target, !o->no_layout);
	if (!sema_check(prog)) {
		note_knob_points(o, prog);
		return 1;
	}
	/* the generated schedules (auto/attach.c): printed, or given to the
	 * kernels that take them, before --tuning-log looks for templates */
	AutoRequest ar = {
		.target = o->target, .cpu = o->cpu, .features = o->features,
		.cuda_arch = o->cuda_arch, .defs = o->defs, .vals = o->def_values, .ndefs = o->ndefs, .tmpl = o->print_auto == 2,
	};
	double ta = clock_ms(CLOCK_MONOTONIC);
	int nauto = 0;
	for (int i = 0; i < prog->nkernels && !o->no_schedule && !o->print_auto && !o->print_fusion && !o->print_layout && !o->check_only; i++) {
		Kernel *k = prog->kernels[i];
		if (compiled(o, prog, k) && auto_wanted(prog, k, o->target, o->schedule, o->no_auto)) {
			if (!auto_attach(prog, k, &ar))
				return 1;
			nauto++;
		}
	}
	if (o->time_passes && nauto)
		fprintf(stderr, "txc: auto-schedule       %8.3f ms (%d kernel%s)\n",
		    clock_ms(CLOCK_MONOTONIC) - ta, nauto, nauto == 1 ? "" : "s");
	if (!knobs_check_requests())
		return 1;
	if (o->tuning_log && !tunelog_apply(prog, o->tuning_log, o->target, tune_machine(o->target),
	    o->defs, o->def_values, o->ndefs))
		return 1;
	if (o->time_passes)
		fprintf(stderr, "txc: front end           %8.3f ms\n", clock_ms(CLOCK_MONOTONIC) - t0);
	if (o->check_only)
		return 0;

	for (int i = 0; i < o->nkernels; i++)
		if (!ast_find_kernel(prog, o->kernels[i])) {
			diag_error(loc_none, "no kernel named '%s' in '%s'", o->kernels[i], o->input);
			return 1;
		}

	if (!check_defs(o, prog))
		return 1;

	if (o->print_layout) {
		for (int i = 0; i < prog->nkernels; i++)
			if (compiled(o, prog, prog->kernels[i]))
				layouts_print(stdout, prog->kernels[i]);
		return 0;
	}
	if (o->print_fusion) {
		for (int i = 0; i < prog->nkernels; i++) {
			Kernel *k = prog->kernels[i];
			if (compiled(o, prog, k) && !auto_print_kernel_fusion(stdout, prog, k, &ar))
				return 1;
		}
		return 0;
	}
	if (o->print_auto) {
		for (int i = 0; i < prog->nkernels; i++) {
			Kernel *k = prog->kernels[i];
			if (!compiled(o, prog, k))
				continue;
			const char *why;
			char *text = auto_text_checked(prog, k, &ar, &why);
			if (text)
				fputs(text, stdout);
			else
				printf("// %s: no generated schedule for %s: %s\n", k->name, o->target, why);
		}
		return 0;
	}

	LowerOptions lo = {
		.no_schedule = o->no_schedule,
		.auto_default = !o->no_auto,
		.auto_strict = auto_strict(),
		.target = o->target,
		.schedule = o->schedule,
		.trace = o->trace_schedule ? stdout : NULL,
		.dump = stdout,
		.dump_after = o->dump_after,
		.def_names = o->defs,
		.def_values = o->def_values,
		.ndefs = o->ndefs,
		/* --print-loops shows the loops with their kinds, before flatten,
		 * unroll and vectorize rewrite them */
		.stop_after = o->emit == OUT_LOOPS ? "simplify" : NULL,
	};
	lo.time_passes = o->time_passes > 0;

	/* Only the kernels of the file itself are compiled; imported ones
	 * are compiled where they are named with -k. */
	IrFunc **funcs = NULL;
	int nfuncs = 0, cap = 0;
	for (int i = 0; i < prog->nkernels; i++) {
		Kernel *k = prog->kernels[i];
		if (!compiled(o, prog, k))
			continue;
		IrFunc *f = lower_kernel(prog, k, &lo);
		if (f)
			*ARENA_PUSH(perm, funcs, nfuncs, cap) = f;
	}
	if (diag_errors()) {
		note_knob_points(o, prog);
		return 1;
	}
	if (o->trace_schedule && o->emit == OUT_LOOPS)
		return 0;
	/* constant tensors: in the object for cpu and C, copied to the
	 * device on a cuda entry point's first call; for vta in the host
	 * object, the streams' DRAM regions bound to them (target/vta/
	 * vta_host.c); the cuda backend's C, CUDA C and harness outputs have
	 * none yet */
	bool consts_ok = !strcmp(o->target, "cpu") || !strcmp(o->target, "vta") ||
	    (!strcmp(o->target, "cuda") && o->emit != OUT_C && o->emit != OUT_CUDA &&
	    o->emit != OUT_HARNESS);
	for (int i = 0; i < nfuncs && !consts_ok && o->emit != OUT_LOOPS; i++)
		if (funcs[i]->nconsts) {
			Tensor *t = funcs[i]->consts[0]->tensor;
			diag_error(t->loc, "constant tensors are not supported by --target=%s yet "
			    "(kernel '%s' holds %d); compile for cpu, or pass '%s' as an input",
			    o->target, funcs[i]->name, funcs[i]->nconsts, t->name);
		}
	if (diag_errors())
		return 1;
	if (nfuncs == 0) {
		diag_error(loc_none, "'%s' has no kernel to compile", o->input);
		return 1;
	}
	/* --prefix renames every entry point; then one check of the names for
	 * every output (target/names.c) */
	for (int i = 0; o->prefix && i < nfuncs; i++)
		lower_rename(funcs[i], arena_printf(perm, "%s%s", o->prefix, funcs[i]->name));
	if (o->emit != OUT_LOOPS && !names_check_entries(funcs, nfuncs, o->dlpack))
		return 1;
	const char *out = o->output ? o->output : default_output(o);
	if (!emit_backend(funcs, nfuncs, o, out))
		return output_io_failed() || !diag_errors() ? 2 : 1;
	return output_finish_all() ? 0 : 2;
}

/* ---- backends ------------------------------------------------------------
 * emit: each output kind is written through output_open/output_commit (or
 * a temporary path for LLVM's file writer) so a failure leaves no file. */
static bool
emit_backend(IrFunc **funcs, int n, const Options *o, const char *out)
{
	bool ok = true;
	if (o->header) {
		/* emit: header_emit (target/header.c) */
		FILE *fp = output_open(o->header, false);
		if (!fp || !header_emit(fp, funcs, n, o->dlpack, o->emit == OUT_C ? HEADER_C :
		    !strcmp(o->target, "cuda") ? HEADER_CUDA : HEADER_TXRT) ||
		    !output_commit(fp))
			return false;
	}
	if (o->signature) {
		/* emit: signature_emit (driver/signature.c) */
		FILE *fp = output_open(o->signature, false);
		if (!fp || !signature_emit(fp, funcs, n, o) || !output_commit(fp))
			return false;
	}
	if (o->shared)
		return shared_emit(funcs, n, o, out);   /* driver/shared.c */
	switch (o->emit) {
	case OUT_C: {
		FILE *fp = output_open(out, false);
		if (!fp || !c_emit(fp, funcs, n, o->input))
			return false;
		return output_commit(fp);
	}
	case OUT_LOOPS: {
		FILE *fp = output_open(out, false);
		if (!fp)
			return false;
		for (int i = 0; i < n; i++) {
			if (i)
				fputc('\n', fp);
			ir_print_func(fp, funcs[i]);
		}
		return output_commit(fp);
	}
	case OUT_HARNESS: {
		if (n != 1) {
			diag_error(loc_none, "--emit=harness writes a main() for one kernel: name it with -k");
			return false;
		}
		FILE *fp = output_open(out, false);
		if (!fp || !harness_emit(fp, funcs[0]))
			return false;
		return output_commit(fp);
	}
	case OUT_OBJ: case OUT_ASM: case OUT_LLVM: case OUT_BC: case OUT_PTX: case OUT_KERNELS:
	case OUT_CUDA:
	case OUT_VTA_ASM: case OUT_VTA_BIN:
		if (!strcmp(o->target, "vta"))
			return emit_vta(funcs, n, o, out);   /* driver/emit.c */
		if (!strcmp(o->target, "cuda"))
			return emit_cuda(funcs, n, o, out);   /* driver/emit.c */
		return emit_llvm(funcs, n, o, out);   /* driver/emit.c */
	default:
		/* emit: c_emit, harness_emit, llvm_emit_file */
		diag_error(loc_none, "this output kind is not available in this build yet");
		ok = false;
	}
	return ok;
}

int
main(int argc, char **argv)
{
	perm = arena_new();
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench_main(argc - 1, argv + 1);   /* driver/bench.c */
	if (argc > 1 && strcmp(argv[1], "viz") == 0)
		return viz_main(argc - 1, argv + 1);     /* driver/viz.c */
	if (argc > 1 && strcmp(argv[1], "tune") == 0)
		return tune_main(argc - 1, argv + 1);    /* tune/tune.c */

	jmp_buf top;
	diag_catch = &top;
	if (setjmp(top)) {
		output_abort_all();
		return 2;
	}
	Options o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = compile(&o);
	diag_flush();
	if (rc != 0)
		output_abort_all();   /* every output or none */
	return rc;
}
