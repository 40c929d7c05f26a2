/* bench.c: `txc bench FILE.tx -D M=1024 ...`: time a kernel, check it.
 *
 * Lowers the kernel twice, with its schedule and without any (the
 * reference), JIT-compiles both (target/llvm/llvm_jit.c), fills the
 * inputs with seeded random data, runs the reference once, then warms the
 * scheduled kernel up and times repeated runs.  It prints the median time
 * (--best: the fastest run, as a peak measurement on a busy machine is),
 * the arithmetic rate (each stage's operations per point times its
 * points, from the kernel's rules as txc.1 "How GFLOP/s is counted"
 * says; GFLOP/s when the kernel computes in floating point, else GOP/s)
 * and the largest difference from the reference, relative to
 * max(1, |reference|).  --schedules a,b,c times
 * several named schedules ("default" is the unnamed one) in one table.
 * Exit status: 0; 1 on a compile error, a failing kernel or a difference
 * above --tolerance.  The data and the error measure, which txc tune
 * shares, are benchdata.c; the command line's common parts cmdline.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/driver.h"
#include "auto/auto.h"
#include "lower/lower.h"
#include "parser/parser.h"
#include "rt/txrt.h"
#include "rt/vta.h"
#include "sema/sema.h"
#include "target/target.h"
#include "tune/tune.h"

typedef struct {
	const char *input;
	const char *kernel;               /* -k */
	const char **scheds; int nscheds; /* -s / --schedules; NULL entry: unnamed */
	const char **names; CmdValue *values; int ndefs;   /* -D */
	int runs, warmup, threads;
	bool best;                         /* --best: the fastest run, not the median */
	bool count_only;                   /* --count-only: print the operation count */
	unsigned seed;
	double tolerance;
	LlvmOptions llvm;
	Options drv;                       /* for imports (-I) */
	bool cuda;                         /* --target=cuda */
	bool vta;                          /* --target=vta: the simulator, its statistics */
	bool no_layout;                    /* --no-layout */
	const char *cuda_arch;             /* --cuda-arch */
	bool emulated;                     /* the kernels run in libtxrt's emulator */
	const char *tuning_log;            /* --tuning-log=FILE */
} Bench;

static void
usage(FILE *fp)
{
	fputs("usage: txc bench FILE.tx -D SIZE=N ... [options]\n"
	    "  -D NAME=VALUE        a size (required for each) or scalar parameter\n"
	    "  -k KERNEL            the kernel (default: the file's first)\n"
	    "  -K NAME=VALUE        a knob's value (schedule templates; as for txc)\n"
	    "  --tuning-log=FILE    templates take the best point FILE holds (as for txc)\n"
	    "  -s NAME              the schedule to time (default: the unnamed one)\n"
	    "  --schedules=A,B,...  compare several schedules ('default': unnamed)\n"
	    "  --runs=N             timed runs (default: as many as fit in ~1 s, 3..1000)\n"
	    "  --warmup=N           untimed runs first (default 2)\n"
	    "  --best               report the fastest run instead of the median\n"
    "  --count-only         print the operation count (as GFLOP/s uses it) and stop\n"
	    "  --threads=N          threads of parallel loops (default: libtxrt's)\n"
	    "  --seed=N             random inputs' seed (default 1)\n"
	    "  --tolerance=X        largest relative difference accepted (default 1e-3)\n"
	    "  --target=cpu|cuda|vta  the schedules to time (default cpu); cuda runs on the\n"
	    "                       GPU, or in libtxrt's emulator where there is none\n"
	    "                       (checked, not timed); vta in libtxrt's simulator, with\n"
	    "                       its statistics and modelled cycles (sizes fixed by -D)\n"
	    "  --cuda-arch=SM       as for txc\n"
	    "  --cpu=NAME --features=LIST -O0..3 -I DIR   as for txc\n"
	    "  --cache=L1,L2[,L3]   as for txc: the cache sizes schedules read (l1_bytes...)\n"
	    "  --no-vector-math     as for txc: libm per lane for vector exp, log, ...\n"
	    "  --no-layout          as for txc: calls keep their kernels' layout\n", fp);
}

/* One line on standard error and exit status 1, like txc's own. */
static int
bad(const char *fmt, const char *arg)
{
	return cmdline_bad("bench", fmt, arg);
}

static int
parse(Bench *b, int argc, char **argv)
{
	enum { O_SCHEDS = 256, O_CACHE, O_RUNS, O_WARMUP, O_THREADS, O_SEED, O_TOL, O_CPU, O_FEAT,
		O_BEST, O_COUNT, O_TARGET, O_ARCH, O_TLOG, O_NOVM, O_NOLAYOUT };
	static const struct option lo[] = {
		{ "schedules", required_argument, NULL, O_SCHEDS },
		{ "runs", required_argument, NULL, O_RUNS },
		{ "warmup", required_argument, NULL, O_WARMUP },
		{ "best", no_argument, NULL, O_BEST },
		{ "count-only", no_argument, NULL, O_COUNT },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "tolerance", required_argument, NULL, O_TOL },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "cache", required_argument, NULL, O_CACHE },
		{ "features", required_argument, NULL, O_FEAT },
		{ "target", required_argument, NULL, O_TARGET },
		{ "cuda-arch", required_argument, NULL, O_ARCH },
		{ "tuning-log", required_argument, NULL, O_TLOG },
		{ "no-vector-math", no_argument, NULL, O_NOVM },
		{ "no-layout", no_argument, NULL, O_NOLAYOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int capd, capv, capi, caps;
	int c, n, rc;

	b->warmup = 2;
	b->seed = 1;
	b->tolerance = 1e-3;
	b->llvm.opt_level = 3;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:K:k:s:I:O:h", lo, NULL)) != -1) {
		char *end;
		long long iv;
		switch (c) {
		case 'D': {
			const char *name;
			CmdValue v;
			if (!cmdline_define(optarg, &name, &v))
				return bad("bad -D '%s': expected NAME=VALUE", optarg);
			n = b->ndefs;
			*ARENA_PUSH(perm, b->names, b->ndefs, capd) = name;
			*ARENA_PUSH(perm, b->values, n, capv) = v;
			break;
		}
		case 'k': b->kernel = intern_cstr(optarg); break;
		case 'K':
			if ((rc = cmdline_knob("bench", optarg)) >= 0)
				return rc;
			break;
		case 's': *ARENA_PUSH(perm, b->scheds, b->nscheds, caps) = intern_cstr(optarg); break;
		case 'I': *ARENA_PUSH(perm, b->drv.incdirs, b->drv.nincdirs, capi) = optarg; break;
		case 'O':
			if (optarg[0] < '0' || optarg[0] > '3' || optarg[1])
				return bad("bad -O%s: use -O0 to -O3", optarg);
			b->llvm.opt_level = optarg[0] - '0';
			break;
		case O_SCHEDS:
			if (!cmdline_schedules(optarg, &b->scheds, &b->nscheds, &caps))
				return bad("%s", "--schedules needs a list of names");
			break;
		case O_RUNS:
			if (!cmdline_int(optarg, 1, 1000000, &iv))
				return bad("bad --runs '%s': expected a positive integer", optarg);
			b->runs = (int)iv;
			break;
		case O_WARMUP:
			if (!cmdline_int(optarg, 0, 1000000, &iv))
				return bad("bad --warmup '%s': expected a non-negative integer", optarg);
			b->warmup = (int)iv;
			break;
		case O_BEST: b->best = true; break;
		case O_COUNT: b->count_only = true; break;
		case O_THREADS:
			if (!cmdline_int(optarg, 1, 4096, &iv))
				return bad("bad --threads '%s': expected a positive integer", optarg);
			b->threads = (int)iv;
			break;
		case O_SEED:
			if (!cmdline_int(optarg, 0, UINT_MAX, &iv))
				return bad("bad --seed '%s': expected a non-negative integer", optarg);
			b->seed = (unsigned)iv;
			break;
		case O_TOL:
			b->tolerance = strtod(optarg, &end);
			if (end == optarg || *end || !(b->tolerance >= 0) || isinf(b->tolerance))
				return bad("bad --tolerance '%s': expected a non-negative number", optarg);
			break;
		case O_CPU: b->llvm.cpu = optarg; break;
		case O_CACHE:
			if (!caches_override(optarg))
				return 1;
			break;
		case O_FEAT: b->llvm.features = optarg; break;
		case O_TLOG: b->tuning_log = optarg; break;
		case O_NOVM: b->llvm.no_vector_math = true; break;
		case O_NOLAYOUT: b->no_layout = true; break;
		case O_TARGET:
			if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "vta"))
				return bad("bad --target '%s': txc bench runs cpu, cuda or vta schedules", optarg);
			b->cuda = !strcmp(optarg, "cuda");
			b->vta = !strcmp(optarg, "vta");
			break;
		case O_ARCH:
			if (strncmp(optarg, "sm_", 3) || !optarg[3])
				return bad("bad --cuda-arch '%s': expected an SM name such as sm_80", optarg);
			b->cuda_arch = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: return cmdline_getopt_error("bench", c, argv);
		}
	}
	if ((rc = cmdline_input("bench", argc, argv, true)) >= 0)
		return rc;
	b->input = argv[optind];
	if (b->nscheds == 0)
		*ARENA_PUSH(perm, b->scheds, b->nscheds, caps) = NULL;
	return -1;
}

/* ---- sizes ------------------------------------------------------------------ */

static const CmdValue *
def_value(Bench *b, const char *name)
{
	for (int i = 0; i < b->ndefs; i++)
		if (b->names[i] == name)
			return &b->values[i];
	return NULL;
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- running ------------------------------------------------------------- */

typedef int (*Packed)(void **args);

/* A lowered, JIT-compiled variant of the kernel. */
typedef struct {
	IrFunc *f;
	LlvmJit *jit;
	Packed fn;
} Variant;

/* ---- which micro-kernel table a schedule runs --------------------------------
 * The tensorize primitives of the schedule as resolved at this knob point
 * (the isa knob's table), specialize bodies included, named with their
 * emitter and what it runs on: printed under the schedule's row. */
static const struct {
	const char *emit, *what;
} emit_words[] = {
	{ "fma_outer", "AVX2 FMA, ymm" }, { "fma_outer_zmm", "AVX-512 FMA, zmm" },
	{ "i8_madd", "AVX2 vpmaddwd, ymm" }, { "i8_madd_a16", "AVX2 vpmaddwd, a widened, ymm" },
	{ "i8_vnni", "AVX-VNNI vpdpbusd, ymm" },
	{ "i8_vnni_zmm", "AVX512-VNNI vpdpbusd, zmm" }, { "bf16_widen", "AVX2 bf16 widened, FMA, ymm" },
	{ "bf16_dp_zmm", "AVX512_BF16 vdpbf16ps, zmm" }, { "i8_amx", "AMX tdpbssd, tiles" },
	{ "bf16_amx", "AMX tdpbf16ps, tiles" },
};

static const char *
tables_in(Program *p, SchedPrim *prims, int n, const char *list)
{
	for (int i = 0; i < n; i++) {
		SchedPrim *q = &prims[i];
		if (q->body)
			list = tables_in(p, q->body, q->nbody, list);
		if (!q->prim || strcmp(q->prim, "tensorize") != 0 || q->nargs < 2 || !q->args[1].str)
			continue;
		Kernel *in = intrinsic_find(p, intern_cstr(q->args[1].str));
		if (!in || !in->intr_emit || strcmp(in->intr_target, "cpu") != 0)
			continue;
		const char *what = in->intr_emit;
		for (size_t w = 0; w < sizeof emit_words / sizeof *emit_words; w++)
			if (!strcmp(emit_words[w].emit, in->intr_emit))
				what = emit_words[w].what;
		const char *one = arena_printf(perm, "%s (%s)", in->name, what);
		if (!strstr(list, one))
			list = arena_printf(perm, "%s%s%s", list, *list ? ", " : "", one);
	}
	return list;
}

/* The tables schedule sched (NULL: the unnamed one) of kernel k runs,
 * "" for none. */
static const char *
tables_of(Program *p, Kernel *k, const char *sched)
{
	for (int i = 0; p && i < p->nschedules; i++) {
		Schedule *s = p->schedules[i];
		if (!s || s->kernel != k->name || (s->target && strcmp(s->target, "cpu") != 0))
			continue;
		if (sched ? !s->name || strcmp(s->name, sched) != 0 : s->name != NULL)
			continue;
		return tables_in(p, s->prims, s->nprims, "");
	}
	for (int i = 0; p && i < p->nimports; i++) {
		const char *t = p->imports[i] ? tables_of(p->imports[i]->prog, k, sched) : "";
		if (*t)
			return t;
	}
	return "";
}

static bool
build(Bench *b, Program *p, Kernel *k, bool none, const char *sched, Variant *v,
    bool jit)
{
	static const char **names;
	static int64_t *values;
	static int n, capn, capv;
	/* the reference always runs on the CPU */
	bool gpu = b->cuda && !none, vta = b->vta && !none;
	LowerOptions lo = { .no_schedule = none, .target = gpu ? "cuda" : vta ? "vta" : "cpu",
	    .schedule = sched, .auto_default = true, .auto_strict = auto_strict() };
	void *addr;

	if (!names)
		for (int i = 0; i < k->nparams; i++) {
			const CmdValue *x = def_value(b, k->params[i].name);
			if (!k->params[i].is_size || !x)
				continue;
			int m = n;
			*ARENA_PUSH(perm, names, n, capn) = k->params[i].name;
			*ARENA_PUSH(perm, values, m, capv) = x->i;   /* bench checked it */
		}
	lo.def_names = names;
	lo.def_values = values;
	lo.ndefs = n;
	memset(v, 0, sizeof *v);
	v->f = lower_kernel(p, k, &lo);
	if (!v->f)
		return false;
	if (!jit)
		return true;
	v->jit = gpu ? cuda_jit_compile(&v->f, 1, &b->llvm, b->cuda_arch) :
	    vta ? vta_jit_compile(&v->f, 1, &b->llvm) : llvm_jit_compile(&v->f, 1, &b->llvm);
	if (!v->jit)
		return false;
	addr = llvm_jit_lookup(v->jit, arena_printf(perm, "%s__packed", k->name));
	memcpy(&v->fn, &addr, sizeof addr);
	return v->fn != NULL;
}

/* 512K, 32M, 1280K */
static const char *
size_text(long v)
{
	if (v % (1024 * 1024) == 0)
		return arena_printf(perm, "%ldM", v / (1024 * 1024));
	if (v % 1024 == 0)
		return arena_printf(perm, "%ldK", v / 1024);
	return arena_printf(perm, "%ld", v);
}

static bool
run_checked(Packed fn, void **args, const char *what)
{
	int rc = fn(args);

	if (rc != 0)
		fprintf(stderr, "txc bench: %s returned %d: %s\n", what, rc, txrt_last_error());
	return rc == 0;
}

static void
print_rate(double ops, double secs, bool fl)
{
	if (ops > 0 && secs > 0)
		printf("  %9.2f %s", ops / secs * 1e-9, fl ? "GFLOP/s" : "GOP/s  ");
	else
		printf("  %9s %s", "-", "       ");
}

/* --target=vta: each schedule runs once in libtxrt's VTA simulator and is
 * checked against the reference; its row gives the simulator's statistics
 * and its cycle model (the three modules overlapping), which is what a
 * VTA schedule is judged by: the GEMM unit's utilisation. */
static bool
vta_rows(Bench *b, Program *prog, Kernel *k, BenchArg *args, uint64_t *slots, double tref)
{
	bool ok = true;
	printf("  (unscheduled, on the CPU: %.3f ms)\n", tref * 1e3);
	printf("  %-12s %8s %10s %9s %11s %7s %9s  %s\n", "schedule", "insns", "GEMM uops",
	    "ALU uops", "cycles", "GEMM %", "ms@100MHz", "max error");
	for (int s = 0; s < b->nscheds; s++) {
		const char *name = b->scheds[s] ? b->scheds[s] : "default";
		Variant v;
		if (!build(b, prog, k, false, b->scheds[s], &v, true)) {
			printf("  %-12s   compile error\n", name);
			ok = false;
			continue;
		}
		BenchArg *out = benchdata_outputs_like(v.f, args);
		txrt_vta_stats_reset();
		if (!run_checked(v.fn, benchdata_call_args(v.f, slots, out), name)) {
			printf("  %-12s   failed\n", name);
			ok = false;
			llvm_jit_free(v.jit);
			continue;
		}
		txrt_vta_stats st;
		txrt_vta_stats_get(&st);
		double err = benchdata_max_error(v.f, out, args);
		uint64_t insns = 0;
		for (int i = 0; i < 5; i++)
			insns += st.insns[i];
		if (insns == 0) {
			printf("  %-12s   no VTA work: no stage of the schedule is in VTA's buffers "
			    "(has the kernel a schedule for vta?)\n", name);
			ok = false;
			llvm_jit_free(v.jit);
			continue;
		}
		printf("  %-12s %8llu %10llu %9llu %11llu %6.1f%% %9.3f  %9.3g%s\n", name,
		    (unsigned long long)insns, (unsigned long long)st.gemm_uops,
		    (unsigned long long)st.alu_uops, (unsigned long long)st.cycles,
		    st.gemm_utilisation * 100, (double)st.cycles / 1e5, err,
		    err > b->tolerance ? "  MISMATCH" : "");
		uint64_t loaded = 0;
		for (int i = 0; i < 6; i++)
			loaded += st.load_bytes[i];
		printf("  %-12s busy: load %llu, compute %llu, store %llu cycles; %llu bytes in, %llu out\n",
		    "", (unsigned long long)st.busy[0], (unsigned long long)st.busy[1],
		    (unsigned long long)st.busy[2], (unsigned long long)loaded,
		    (unsigned long long)st.store_bytes);
		if (err > b->tolerance)
			ok = false;
		llvm_jit_free(v.jit);
	}
	return ok;
}

static int
bench(Bench *b)
{
	uint32_t file = cmdline_load(b->input, b->names, b->values, b->ndefs);
	Program *prog;
	Kernel *k = NULL;
	Variant ref;
	int64_t *sizes;
	uint64_t *slots;
	BenchArg *args;
	bool fl = false, ok = true;
	double ops;

	if (!file)
		return 1;
	prog = parse_program(file);
	auto_target_isa(NULL, b->llvm.cpu, b->llvm.features);   /* the isa knob's default */
	/* layout declarations (tx.5 LAYOUTS) rewrite calls for the target;
	 * the unscheduled reference reads the same stages */
	layouts_set_target(b->cuda ? "cuda" : b->vta ? "vta" : "cpu", !b->no_layout);
	if (diag_errors() || !import_resolve(prog, &b->drv) ||
	    !import_target_table(prog, b->cuda ? "cuda" : NULL) || !sema_check(prog))
		return 1;
	if (!(k = cmdline_kernel(prog, b->kernel, b->input)))
		return 1;
	sizes = arena_alloc(perm, (k->nparams + 1) * sizeof *sizes);
	slots = arena_alloc(perm, (k->nparams + 1) * sizeof *slots);
	for (int i = 0; i < k->nparams; i++) {
		Param *pa = &k->params[i];
		const CmdValue *v = def_value(b, pa->name);
		if (!v && pa->is_size) {
			diag_error(pa->loc, "size '%s' needs a value: txc bench -D %s=N", pa->name, pa->name);
			ok = false;
		}
		sizes[i] = 1;   /* a scalar parameter not given is 1 */
		if (pa->is_size && v && !cmdline_size("bench", pa, v, &sizes[i]))
			ok = false;
		if (!pa->is_size && v && !cmdline_scalar("bench", pa, v))
			ok = false;
		if (pa->is_size)
			benchdata_put_int(&slots[i], TY_I64, sizes[i]);
		else if (v && v->integer)
			benchdata_put_int(&slots[i], pa->type, v->i);
		else
			benchdata_put(&slots[i], 0, pa->type, v ? v->f : 1);
	}
	if (!ok)
		return 1;
	/* the generated schedule, for `auto` and for a default that the kernel
	 * lacks (auto/attach.c), at the -D sizes */
	{
		const char *target = b->cuda ? "cuda" : b->vta ? "vta" : "cpu";
		const char **dn = arena_alloc(perm, (k->nparams + 1) * sizeof *dn);
		int64_t *dv = arena_alloc(perm, (k->nparams + 1) * sizeof *dv);
		int nd = 0;
		for (int i = 0; i < k->nparams; i++)
			if (k->params[i].is_size) {
				dn[nd] = k->params[i].name;
				dv[nd++] = sizes[i];
			}
		AutoRequest ar = { .target = target, .cpu = b->llvm.cpu, .features = b->llvm.features,
		    .cuda_arch = b->cuda_arch, .defs = dn, .vals = dv, .ndefs = nd };
		for (int s = 0; s < b->nscheds; s++)
			if (auto_wanted(prog, k, target, b->scheds[s], false) && !auto_attach(prog, k, &ar))
				return 1;
	}
	if (!knobs_check_requests())   /* after the generated templates took theirs */
		return 1;
	if (b->tuning_log) {
		int64_t *v = arena_alloc(perm, (b->ndefs + 1) * sizeof *v);
		for (int i = 0; i < b->ndefs; i++)
			v[i] = b->values[i].integer ? b->values[i].i : 0;   /* the log keeps sizes */
		const char *target = b->cuda ? "cuda" : b->vta ? "vta" : "cpu";
		if (!tunelog_apply(prog, b->tuning_log, target, tune_machine(target), b->names, v,
		    b->ndefs))
			return 1;
	}
	/* the reference: the kernel without a schedule */
	if (!build(b, prog, k, true, NULL, &ref, !b->count_only))
		return 1;
	ops = benchops_count(k, ref.f, sizes, &fl);
	if (b->count_only) {
		if (ops < 0)
			printf("%s: unknown\n", k->name);
		else
			printf("%s: %.0f %s\n", k->name, ops, fl ? "flop" : "op");
		return ops < 0;
	}
	args = arena_alloc(perm, (ref.f->nargs + 1) * sizeof *args);
	benchdata_seed(b->seed);
	for (int i = 0; i < ref.f->nargs; i++) {
		if (!benchdata_alloc(ref.f, sizes, ref.f->args[i], &args[i])) {
			llvm_jit_free(ref.jit);
			return 1;
		}
	}
	if (b->threads > 0)
		txrt_set_num_threads(b->threads);
	if (b->cuda && txrt_cuda_mode() != TXRT_CUDA_DEVICE) {
		/* no GPU (or TXRT_CUDA=emulate): check the schedules in the emulator */
		txrt_cuda_set_mode(TXRT_CUDA_EMULATE);
		b->emulated = true;
	}
	double t0 = now();
	if (!run_checked(ref.fn, benchdata_call_args(ref.f, slots, args), "the unscheduled kernel"))
		return 1;
	double tref = now() - t0;

	printf("%s:", k->name);
	bool any = false;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].is_size) {
			printf(" %s=%lld", k->params[i].name, (long long)sizes[i]);
			any = true;
		}
	printf("%s %d thread%s, %s (%s)", any ? "," : "", txrt_get_num_threads(),
	    txrt_get_num_threads() == 1 ? "" : "s",
	    b->llvm.cpu ? b->llvm.cpu : llvm_host_cpu(), llvm_host_triple());
	/* the micro-kernel tables a template's isa knob takes (tx.5, txc-schedule.7) */
	if (knobs_isa() && !b->cuda && !b->vta)
		printf(", %s tables", knobs_isa());
	if (!b->cuda && !b->vta) {
		/* what l1_bytes, l2_bytes and l3_bytes were (auto/caches.c) */
		long c[3];
		const char *from = caches_get(b->llvm.cpu, c);
		printf(", caches L1d %s L2 %s L3 %s (%s)", size_text(c[0]), size_text(c[1]),
		    size_text(c[2]), from);
	}
	putchar('\n');
	if (b->cuda)
		printf(b->emulated ? "  cuda schedules in libtxrt's emulator (results checked, not timed)\n" :
		    "  cuda schedules on %s\n", txrt_cuda_device_name());
	if (b->vta) {
		printf("  vta schedules on libtxrt's %s (results checked; time: the simulator's cycle model)\n",
		    txrt_vta_device_name());
		ok &= vta_rows(b, prog, k, args, slots, tref);
		llvm_jit_free(ref.jit);
		return ok ? 0 : 1;
	}
	printf("  %-16s %12s  %17s  %10s\n", "schedule", "time", "rate", "max error");
	printf("  %-16s %9.3f ms", "(unscheduled)", tref * 1e3);
	print_rate(ops, tref, fl);
	printf("  %10s  (1 run)\n", "-");

	for (int s = 0; s < b->nscheds; s++) {
		const char *name = b->scheds[s] ? b->scheds[s] : "default";
		Variant v;
		if (!build(b, prog, k, false, b->scheds[s], &v, true)) {
			printf("  %-16s   compile error\n", name);
			ok = false;
			continue;
		}
		BenchArg *out = benchdata_outputs_like(v.f, args);
		/* on a GPU the kernel gets device copies (its outputs come back
		 * after the runs that check them) */
		char why[300] = "";
		BenchArg *dev = b->cuda && !b->emulated ? benchdata_to_device(v.f, out, why, sizeof why) :
		    out;
		if (!dev)
			fprintf(stderr, "txc bench: %s\n", why);
		void **a = benchdata_call_args(v.f, slots, dev);
		bool good = dev != NULL && run_checked(v.fn, a, name);
		for (int w = 1; good && w < b->warmup && !b->emulated; w++)
			good = run_checked(v.fn, a, name);
		if (good && dev != out && !(good = benchdata_from_device(v.f, out, dev, why, sizeof why)))
			fprintf(stderr, "txc bench: %s\n", why);
		if (!good) {
			printf("  %-16s   failed\n", name);
			ok = false;
			continue;
		}
		double err = benchdata_max_error(v.f, out, args);
		if (b->emulated) {
			/* the emulator checks, it does not measure */
			printf("  %-16s %12s  %17s  %10.3g  (emulated)%s\n", name, "emulated", "-", err,
			    err > b->tolerance ? "  MISMATCH" : "");
			if (err > b->tolerance)
				ok = false;
			llvm_jit_free(v.jit);
			continue;
		}
		/* time: one run tells how many fit in about a second */
		t0 = now();
		v.fn(a);
		double t1 = now() - t0;
		int runs = b->runs > 0 ? b->runs : t1 > 0 ? (int)fmin(1000, fmax(3, 1.0 / t1)) : 1000;
		double *times = arena_alloc(perm, runs * sizeof *times);
		for (int r = 0; r < runs; r++) {
			t0 = now();
			v.fn(a);
			times[r] = now() - t0;
		}
		qsort(times, runs, sizeof *times, cmp_double);
		double med = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
		if (b->best)
			med = times[0];
		printf("  %-16s %9.3f ms", name, med * 1e3);
		print_rate(ops, med, fl);
		printf("  %10.3g  (%s of %d)%s\n", err, b->best ? "best" : "median", runs,
		    err > b->tolerance ? "  MISMATCH" : "");
		const char *tables = b->cuda || b->vta ? "" : tables_of(prog, k, b->scheds[s]);
		if (*tables)
			printf("  %-16s micro-kernel: %s\n", "", tables);
		if (dev != out)
			benchdata_free_device(v.f, dev);
		if (err > b->tolerance)
			ok = false;
		llvm_jit_free(v.jit);
	}
	llvm_jit_free(ref.jit);
	return ok ? 0 : 1;
}

int
bench_main(int argc, char **argv)
{
	Bench b = { 0 };
	int rc = parse(&b, argc, argv);

	if (rc >= 0)
		return rc;
	rc = bench(&b);
	diag_flush();
	return rc;
}
