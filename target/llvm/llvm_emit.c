/* llvm_emit.c: target machines, the optimisation pipeline and output.
 *
 * Builds one module for the kernels (cg_func.c), checks it with LLVM's
 * verifier (a failure is an internal error), runs txc's own pass
 * pipelines (one for the loop nests, one for the micro-kernels; see
 * optimise) for the target machine, and writes an object, assembly, LLVM
 * IR text or bitcode.  The host triple and CPU (with its
 * features) are the default; a cross triple defaults to the "generic" CPU.
 * Code is position-independent, as Debian's PIE executables need.
 * LLVM only warns about an unknown CPU or feature (and later aborts in
 * code generation), so the machine is made with standard error captured
 * and those warnings become one diagnostic; LLVM's fatal errors become
 * txc's (diag_fatal), which remove the partial outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Support.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "target/llvm/cg.h"
#include "target/llvm/targets.h"

/* TXC_TIME_PASSES: each backend stage's time, in the form of the
 * lowering passes' lines (lower/pipeline.c). */
static double
now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

static void
timed(const LlvmOptions *o, const char *stage, double *t0)
{
	double t = now_ms();

	if (o->time_passes)
		fprintf(stderr, "txc: llvm %-13s %8.3f ms\n", stage, t - *t0);
	*t0 = t;
}

static void
fatal_handler(const char *reason)
{
	diag_fatal("LLVM: %s", reason);
}

static void
init_targets(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	LLVMInstallFatalErrorHandler(fatal_handler);
	/* only the configured targets (targets.h): with a static libLLVM
	 * that is all txc links; the assembly parsers assemble the parts
	 * of llvm_split.c */
#define T(name) LLVMInitialize##name##TargetInfo(); LLVMInitialize##name##Target(); \
	LLVMInitialize##name##TargetMC(); LLVMInitialize##name##AsmPrinter();
	TXC_LLVM_TARGETS(T)
#undef T
#define A(name) LLVMInitialize##name##AsmParser();
	TXC_LLVM_ASM_PARSERS(A)
#undef A
}

const char *
llvm_host_triple(void)
{
	static char buf[256];

	if (!buf[0]) {
		char *t = LLVMGetDefaultTargetTriple();
		snprintf(buf, sizeof buf, "%s", t);
		LLVMDisposeMessage(t);
	}
	return buf;
}

const char *
llvm_host_cpu(void)
{
	static char buf[128];

	if (!buf[0]) {
		char *c = LLVMGetHostCPUName();
		snprintf(buf, sizeof buf, "%s", c);
		LLVMDisposeMessage(c);
	}
	return buf;
}

/* The host's enabled features, "+avx2,+fma,...", in LLVM's order (tuning
 * logs record them beside the CPU name). */
const char *
llvm_host_features(void)
{
	static char *buf;

	if (!buf) {
		char *all = LLVMGetHostCPUFeatures();
		size_t n = strlen(all), k = 0;
		buf = arena_alloc(perm, n + 1);
		for (char *t = strtok(all, ","); t; t = strtok(NULL, ","))
			if (t[0] == '+')
				k += (size_t)sprintf(buf + k, "%s%s", k ? "," : "", t);
		LLVMDisposeMessage(all);
	}
	return buf;
}

/* The quoted name in the first line of text that holds what, or NULL. */
static char *
quoted_before(const char *text, const char *what)
{
	const char *w = strstr(text, what), *bol, *q1, *q2;

	if (!w)
		return NULL;
	for (bol = w; bol > text && bol[-1] != '\n'; bol--)
		;
	q1 = strchr(bol, '\'');
	q2 = q1 && q1 < w ? strchr(q1 + 1, '\'') : NULL;
	if (!q2 || q2 > w)
		return NULL;
	return arena_strndup(perm, q1 + 1, (size_t)(q2 - q1 - 1));
}

/* LLVMCreateTargetMachine with standard error captured: LLVM prints
 * "'x' is not a recognized processor/feature for this target" there and
 * goes on with a machine that aborts later (x86-64 without 64-bit mode).
 * Those warnings become an error; anything else LLVM said is passed on. */
static LLVMTargetMachineRef
create_quietly(LLVMTargetRef target, const char *triple, const char *cpu,
    const char *features, LLVMCodeGenOptLevel lvl)
{
	FILE *cap = tmpfile();
	int saved = -1;
	LLVMTargetMachineRef tm;
	char *text = NULL, *bad;
	size_t len = 0;

	fflush(stderr);
	if (cap && (saved = dup(2)) >= 0 && dup2(fileno(cap), 2) < 0) {
		close(saved);
		saved = -1;
	}
	tm = LLVMCreateTargetMachine(target, triple, cpu, features, lvl,
	    LLVMRelocPIC, LLVMCodeModelDefault);
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		long n = ftell(cap);
		if (n > 0 && n < (1 << 20)) {
			text = arena_alloc(perm, (size_t)n + 1);
			rewind(cap);
			len = fread(text, 1, (size_t)n, cap);
			text[len] = 0;
		}
	}
	if (cap)
		fclose(cap);
	if (!tm) {
		diag_error(loc_none, "cannot create a target machine for '%s' (cpu '%s')", triple, cpu);
		return NULL;
	}
	if (!text || !len)
		return tm;
	if ((bad = quoted_before(text, "is not a recognized processor"))) {
		diag_error(loc_none, "unknown CPU '%s' for %s (llc-19 -mtriple=%s -mcpu=help "
		    "lists the names)", bad, triple, triple);
	} else if ((bad = quoted_before(text, "is not a recognized feature"))) {
		diag_error(loc_none, "unknown CPU feature '%s' for %s (llc-19 -mtriple=%s "
		    "-mattr=help lists the names)", bad, triple, triple);
	} else {
		fputs(text, stderr);
		return tm;
	}
	LLVMDisposeTargetMachine(tm);
	return NULL;
}

bool
llvm_check_options(const LlvmOptions *o)
{
	char *triple = NULL;
	LLVMTargetMachineRef tm = llvm_emit_machine(o, &triple);

	if (!tm)
		return false;
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return true;
}

LLVMTargetMachineRef
llvm_emit_machine(const LlvmOptions *o, char **triple_out)
{
	char *triple, *err = NULL, *features;
	const char *cpu;
	LLVMTargetRef target;
	LLVMTargetMachineRef tm;
	bool host;
	static const LLVMCodeGenOptLevel levels[] = {
		LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
		LLVMCodeGenLevelAggressive,
	};

	init_targets();
	static bool llvm_timers;   /* LLVM parses its options once a process */
	if (o->time_passes >= 2 && !llvm_timers) {
		static const char *const argv[] = { "txc", "-time-passes" };
		LLVMParseCommandLineOptions(2, argv, NULL);
		llvm_timers = true;
	}
	if (o->triple && *o->triple) {
		triple = LLVMNormalizeTargetTriple(o->triple);
		host = !strcmp(triple, llvm_host_triple());
	} else {
		triple = LLVMGetDefaultTargetTriple();
		host = true;
	}
	if (LLVMGetTargetFromTriple(triple, &target, &err)) {
		diag_error(loc_none, "unknown target '%s': %s (this txc writes code for the "
		    "LLVM targets " TXC_LLVM_TARGET_NAMES "; configure --with-llvm-targets "
		    "chooses them)", triple, err ? err : "");
		LLVMDisposeMessage(err);
		LLVMDisposeMessage(triple);
		return NULL;
	}
	cpu = o->cpu && *o->cpu && strcmp(o->cpu, "host") ? o->cpu :
	    host ? llvm_host_cpu() : "generic";
	if (o->features)
		features = LLVMCreateMessage(o->features);
	else if (host && (!o->cpu || !*o->cpu || !strcmp(o->cpu, "host")))
		features = LLVMGetHostCPUFeatures();
	else
		features = LLVMCreateMessage("");
	if (!LLVMTargetHasTargetMachine(target)) {
		diag_error(loc_none, "target '%s' cannot generate code", triple);
		LLVMDisposeMessage(features);
		LLVMDisposeMessage(triple);
		return NULL;
	}
	const char *full = llvm_features_check(features, triple) ?
	    llvm_features_complete(features, cpu) : NULL;
	if (!full) {
		LLVMDisposeMessage(features);
		LLVMDisposeMessage(triple);
		return NULL;
	}
	int lvl = o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
	tm = create_quietly(target, triple, cpu, full, levels[lvl]);
	LLVMDisposeMessage(features);
	if (!tm) {
		LLVMDisposeMessage(triple);
		return NULL;
	}
	*triple_out = triple;
	return tm;
}

/* The passes at -O1 and up (man/txc.1, -O).  The loop nests come from
 * lowering tiled, vectorized and unrolled as the schedule says, so what
 * LLVM adds is cleanup: scalar replacement, redundancy and dead-store
 * elimination, hoisting out of rotated loops; at -O2 and -O3 also
 * trivial loop unswitching (an invariant test that leaves the loop is
 * made once, before it) and the loop vectorizer, for the stages the
 * schedule leaves scalar (packing and padding copies), followed by
 * hoisting so that the vectorized loops test invariant conditions once.
 * Non-trivial unswitching, which copies a loop per outcome of a test,
 * is not run: partition.c already splits the padding copies it was for,
 * and it cost 4-15% of the compile time of the convolutions
 * (conv2d_nchw8c 265 -> 224 M instructions without it) for speeds
 * within 3% either way on the stdlib and bench kernels.  LLVM does not
 * unroll: what is unrolled is the schedule's choice (unroll), and
 * LLVM's full unrolling of every short constant loop made GVN and DSE
 * (which ran after it) and the code generator work on 64 copies of an
 * 8x8 block the schedule had left a loop (transpose2d: 95 -> 31 ms to
 * compile).  LLVM's default<O3> costs two to three times the compile
 * time for no faster code: its inliner, runtime unrolling,
 * IndVarSimplify and SLP find nothing the schedule left.  No instcombine runs
 * after the vectorizer: the code generator's combiner folds what it leaves,
 * and the second run cost 2-4% of every stdlib kernel's compile time
 * (conv2d_nchw8c 214 -> 206 M instructions) for objects within 4% of the same size
 * (most smaller) and no speed difference beyond the machine's noise. */
static const char nest_o1[] =
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,"
    "loop-mssa(licm,loop-rotate,licm),simplifycfg,gvn,dse,"
    "instcombine<no-verify-fixpoint>,simplifycfg)";
static const char nest_o2[] =
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,"
    "loop-mssa(licm,loop-rotate,licm,simple-loop-unswitch<trivial>),"
    "simplifycfg,gvn,dse,loop-vectorize,"
    "loop-mssa(licm),simplifycfg)";
/* The micro-kernels of intrin_cpu.c come in SSA form, in registers and
 * unrolled: they need only folding and rotated loops (the code
 * generator's loop strength reduction then gives each operand one
 * pointer), and the nest passes above would cost a third of their time
 * on them. */
static const char kernel_passes[] =
    "function(instcombine<no-verify-fixpoint>,loop-mssa(loop-rotate))";

/* A micro-kernel of intrin_cpu.c (named CG_KERNEL_PREFIX..., or libtxrt's
 * CG_RUNTIME_KERNEL_PREFIX "fma_outer_..." in txc --runtime-kernels). */
#define RT_KERNEL CG_RUNTIME_KERNEL_PREFIX "fma_outer_"
static bool
is_kernel(LLVMValueRef f)
{
	size_t len, plen = strlen(CG_KERNEL_PREFIX);
	const char *name = LLVMGetValueName2(f, &len);
	return (len > plen && !strncmp(name, CG_KERNEL_PREFIX, plen)) ||
	    (len > strlen(RT_KERNEL) && !strncmp(name, RT_KERNEL, strlen(RT_KERNEL)));
}

/* Runs passes on the micro-kernels or on the other functions, as
 * `kernels` says: the rest are marked optnone (with noinline, which
 * optnone needs) for the run, which makes the pass manager skip them,
 * and the marks come off afterwards. */
static LLVMErrorRef
run_on(LLVMModuleRef mod, bool kernels, const char *passes, LLVMTargetMachineRef tm,
    LLVMPassBuilderOptionsRef po)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	unsigned on = LLVMGetEnumAttributeKindForName("optnone", 7);
	unsigned ni = LLVMGetEnumAttributeKindForName("noinline", 8);
	LLVMAttributeIndex fi = LLVMAttributeFunctionIndex;
	LLVMValueRef f, *skip;
	bool *added;
	int n = 0, i = 0;
	LLVMErrorRef err;

	for (f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		n++;
	skip = malloc(sizeof *skip * (size_t)(n + 1));   /* not the arena: llvm_split.c's
	                                                  threads run this too */
	added = malloc(sizeof *added * (size_t)(n + 1));
	n = 0;
	for (f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f) || is_kernel(f) == kernels ||
		    LLVMGetEnumAttributeAtIndex(f, fi, on))
			continue;
		added[n] = !LLVMGetEnumAttributeAtIndex(f, fi, ni);
		if (added[n])
			LLVMAddAttributeAtIndex(f, fi, LLVMCreateEnumAttribute(ctx, ni, 0));
		LLVMAddAttributeAtIndex(f, fi, LLVMCreateEnumAttribute(ctx, on, 0));
		skip[n++] = f;
	}
	err = LLVMRunPasses(mod, passes, tm, po);
	for (i = 0; i < n; i++) {
		LLVMRemoveEnumAttributeAtIndex(skip[i], fi, on);
		if (added[i])
			LLVMRemoveEnumAttributeAtIndex(skip[i], fi, ni);
	}
	free(skip);
	free(added);
	return err;
}

/* An entry function that only checks its arguments, allocates and calls
 * its parallel closures (CG_DISPATCH_ONLY; perhaps in a serial loop, over
 * the images of a batch) does no work of its own, but its code generation
 * was the most costly of a kernel's functions: the checks of a dozen
 * run-time sizes are one long block that instruction selection's
 * combiner and known-bits analysis work through (conv2d_nchw8c's entry:
 * 43 M instructions in llc, of its 170).  After the IR passes have folded
 * it, optnone makes the code generator treat it as at -O0: fast
 * instruction selection, none of the machine-level optimisations. */
static void
dispatch_only(LLVMModuleRef mod)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LLVMAttributeIndex fi = LLVMAttributeFunctionIndex;
	unsigned on = LLVMGetEnumAttributeKindForName("optnone", 7);
	unsigned ni = LLVMGetEnumAttributeKindForName("noinline", 8);
	unsigned len = (unsigned)strlen(CG_DISPATCH_ONLY);

	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
		if (!LLVMGetStringAttributeAtIndex(f, fi, CG_DISPATCH_ONLY, len))
			continue;
		LLVMAddAttributeAtIndex(f, fi, LLVMCreateEnumAttribute(ctx, ni, 0));
		LLVMAddAttributeAtIndex(f, fi, LLVMCreateEnumAttribute(ctx, on, 0));
	}
}

LLVMErrorRef
llvm_optimise(LLVMModuleRef mod, const LlvmOptions *o, LLVMTargetMachineRef tm)
{
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err;
	int level = o->opt_level;
	double t0 = now_ms();

	if (level <= 0) {
		err = LLVMRunPasses(mod, "default<O0>", tm, po);
	} else {
		LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
		err = run_on(mod, false, level >= 2 ? nest_o2 : nest_o1, tm, po);
		timed(o, "nest passes", &t0);
		/* the loop vectorizer's llvm.exp.v8f32 would be 8 expf calls */
		if (!err && level >= 2 && !o->no_vector_math)
			vmath_lower_intrinsics(mod, !o->no_contract);
		if (!err)
			err = run_on(mod, true, kernel_passes, tm, po);
		timed(o, "kernel passes", &t0);
		if (!err)
			dispatch_only(mod);
	}
	LLVMDisposePassBuilderOptions(po);
	return err;
}

/* ---- libtxrt's prebuilt micro-kernels (intrin_cpu.c) --------------------
 * txc --runtime-kernels builds them for x86-64-v3 (AVX2, FMA, BMI2 and
 * the rest of that level) with prefetchw, the AVX-512 tables' twice
 * (x86-64-v4 and v3, chosen by the CPU: intrin_cpu.c's zmm_dispatch), so
 * they too run on any such machine; an object calls them only when
 * it is compiled for a machine that has every one of those features: the
 * host (no cross triple, no --cpu), when it has them all and --features
 * takes none away.  Otherwise, and with --local-intrinsics, the module
 * builds its own. */
#define RT_CPU "x86-64-v3"
#define RT_FEATURES "+prfchw"
#ifdef TXC_RUNTIME_KERNELS
static const char *const rt_needs[] = {
	"sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf",
	"avx", "avx2", "fma", "f16c", "bmi", "bmi2", "lzcnt", "movbe", "xsave", "prfchw",
};

/* Whether the feature list holds sign followed by name as one item. */
static bool
has_item(const char *list, char sign, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p; ) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n + 1 && p[0] == sign && !strncmp(p + 1, name, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static bool
runtime_kernels_fit(const LlvmOptions *o)
{
	static int host_has = -1;

	if (o->local_intrinsics || strncmp(llvm_host_triple(), "x86_64-", 7) != 0)
		return false;
	if (o->cpu && *o->cpu && strcmp(o->cpu, "host") != 0)
		return false;
	if (o->triple && *o->triple) {
		char *t = LLVMNormalizeTargetTriple(o->triple);
		bool host = !strcmp(t, llvm_host_triple());
		LLVMDisposeMessage(t);
		if (!host)
			return false;
	}
	if (host_has < 0) {
		char *hf = LLVMGetHostCPUFeatures();
		host_has = 1;
		for (size_t i = 0; i < sizeof rt_needs / sizeof *rt_needs; i++)
			if (!has_item(hf, '+', rt_needs[i]))
				host_has = 0;
		LLVMDisposeMessage(hf);
	}
	if (!host_has)
		return false;
	for (size_t i = 0; o->features && i < sizeof rt_needs / sizeof *rt_needs; i++)
		if (has_item(o->features, '-', rt_needs[i]))
			return false;
	return true;
}
#else
static bool
runtime_kernels_fit(const LlvmOptions *o)
{
	(void)o;
	return false;
}
#endif

/* Checks the module txc built (a failure is an internal error). */
static void
verify(LLVMModuleRef mod, const LlvmOptions *o)
{
	char *msg = NULL;
	double t0 = now_ms();

	if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
		if (getenv("TXC_DUMP_BAD_LLVM"))
			LLVMDumpModule(mod);
		ICE("the LLVM backend built an invalid module: %s", msg);
	}
	LLVMDisposeMessage(msg);
	timed(o, "verify", &t0);
}

/* Runs the pass pipelines on mod; false after a diagnostic. */
static bool
optimise(LLVMModuleRef mod, const LlvmOptions *o, LLVMTargetMachineRef tm)
{
	LLVMErrorRef perr = llvm_optimise(mod, o, tm);
	if (perr) {
		char *m = LLVMGetErrorMessage(perr);
		diag_error(loc_none, "LLVM optimisation failed: %s", m);
		LLVMDisposeErrorMessage(m);
		return false;
	}
	return true;
}

/* ---- the instruction sets an object needs ------------------------------------
 * Which x86 instruction sets the target machine's code may use, found by
 * asking LLVM's inliner: a function with the machine's features plus one
 * more is inlined into one with the machine's features only when that one
 * adds nothing (X86's areInlineCompatible compares the feature sets).  So
 * a named --cpu, --features and the host all answer alike.  The names are
 * those rt/cpu.c knows; x86-64's baseline (SSE2) is not among them. */
static const char *const isa_names[] = {
	"sse3", "pclmul", "ssse3", "fma", "cx16", "sse4.1", "sse4.2", "movbe", "popcnt", "aes",
	"xsave", "avx", "f16c", "rdrnd", "bmi", "avx2", "bmi2", "avx512f", "avx512dq", "rdseed",
	"adx", "avx512ifma", "avx512cd", "sha", "avx512bw", "avx512vl", "avx512vbmi",
	"avx512vbmi2", "gfni", "vaes", "vpclmulqdq", "avx512vnni", "avx512bitalg",
	"avx512vpopcntdq", "amx-bf16", "avx512fp16", "amx-tile", "amx-int8", "avxvnni",
	"avx512bf16", "sahf", "lzcnt", "prfchw",
};
#define NISA (sizeof isa_names / sizeof isa_names[0])

/* The comma-separated names (malloc'd), or NULL off x86-64 or when none. */
static char *
isa_of(LLVMTargetMachineRef tm, const char *triple)
{
	if (!triple || strncmp(triple, "x86_64", 6) != 0)
		return NULL;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("isa", ctx);
	LLVMSetTarget(m, triple);
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	char *dl = LLVMCopyStringRepOfTargetData(td);
	LLVMSetDataLayout(m, dl);
	LLVMDisposeMessage(dl);
	LLVMDisposeTargetData(td);
	char *base = LLVMGetTargetMachineFeatureString(tm);
	LLVMTypeRef vt = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMValueRef callers[NISA];
	for (size_t i = 0; i < NISA; i++) {
		char name[64], feat[1024];
		snprintf(name, sizeof name, "with.%zu", i);
		snprintf(feat, sizeof feat, "%s%s+%s", base ? base : "", base && *base ? "," : "",
		    isa_names[i]);
		LLVMValueRef callee = LLVMAddFunction(m, name, vt);
		LLVMSetLinkage(callee, LLVMInternalLinkage);
		LLVMAddAttributeAtIndex(callee, LLVMAttributeFunctionIndex,
		    LLVMCreateStringAttribute(ctx, "target-features", 15, feat,
		    (unsigned)strlen(feat)));
		LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, callee, ""));
		LLVMBuildRetVoid(b);
		snprintf(name, sizeof name, "without.%zu", i);
		callers[i] = LLVMAddFunction(m, name, vt);
		LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, callers[i], ""));
		LLVMBuildCall2(b, vt, callee, NULL, 0, "");
		LLVMBuildRetVoid(b);
	}
	LLVMDisposeBuilder(b);
	LLVMDisposeMessage(base);
	char *list = NULL;
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(m, "cgscc(inline)", tm, po);
	LLVMDisposePassBuilderOptions(po);
	if (err) {
		LLVMConsumeError(err);   /* no answer: no check */
	} else {
		size_t len = 0;
		list = calloc(1, 1024);
		for (size_t i = 0; list && i < NISA; i++) {
			LLVMValueRef first = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(callers[i]));
			if (first && LLVMGetInstructionOpcode(first) == LLVMCall)
				continue;   /* not inlined: the machine lacks it */
			len += (size_t)snprintf(list + len, 1024 - len, "%s%s", len ? "," : "",
			    isa_names[i]);
		}
		if (list && !*list) {
			free(list);
			list = NULL;
		}
	}
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	return list;
}

/* The module of funcs, checked; optimised too unless raw. */
static LLVMModuleRef
build_module(LLVMContextRef ctx, IrFunc **funcs, int n, const LlvmOptions *o,
    LLVMTargetMachineRef tm, const char *triple, bool packed, bool raw)
{
	Cg cg;
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	double t0 = now_ms();
	/* an object (not the JIT's module, which runs where it is made) asks
	 * the CPU for what it is compiled for */
	char *isa = isa_of(tm, triple);

	cg_set_features(isa);   /* the micro-kernels' instruction sets (intrin_dot.c) */
	bool built = cg_module(&cg, ctx, "txc", funcs, n, td, triple, o->debug, !o->no_contract,
	    runtime_kernels_fit(o), !o->no_vector_math, packed ? NULL : isa);
	free(isa);
	if (!built) {
		LLVMDisposeModule(cg.mod);
		LLVMDisposeTargetData(td);
		return NULL;
	}
	if (packed) {
		cg.b = LLVMCreateBuilderInContext(ctx);
		for (int i = 0; i < n; i++)
			cg_packed_wrapper(&cg, funcs[i]);
		LLVMDisposeBuilder(cg.b);
		cg.b = NULL;
	}
	for (int i = 0; o->dlpack && i < n; i++)
		cg_dlpack_entry(&cg, funcs[i]);
	LLVMDisposeTargetData(td);
	timed(o, "build IR", &t0);
	verify(cg.mod, o);
	if (!raw && !optimise(cg.mod, o, tm)) {
		LLVMDisposeModule(cg.mod);
		return NULL;
	}
	return cg.mod;
}

LLVMModuleRef
llvm_emit_module(LLVMContextRef ctx, IrFunc **funcs, int n, const LlvmOptions *o,
    LLVMTargetMachineRef tm, const char *triple, bool packed)
{
	return build_module(ctx, funcs, n, o, tm, triple, packed, false);
}

/* Optimises mod (checked, not yet optimised) and writes it as k to out;
 * false after a diagnostic.  An object may be optimised and compiled in
 * parts, each on a thread of its own (llvm_split.c). */
static bool
write_module(LLVMModuleRef mod, LLVMTargetMachineRef tm, const LlvmOptions *o, EmitKind k,
    FILE *out)
{
	LLVMMemoryBufferRef mb = NULL;
	char *err = NULL;
	bool ok = true;
	double t0 = now_ms();   /* code gen: the parts' passes included */
	int split = k == EMIT_OBJ ? llvm_split_emit(mod, tm, o, &mb) : 0;

	if (split == 0) {       /* the passes time themselves */
		if (!optimise(mod, o, tm))
			split = -1;
		t0 = now_ms();
	}
	if (split < 0) {
		ok = false;
	} else if (k == EMIT_LLVM) {
		char *s = LLVMPrintModuleToString(mod);
		ok = fputs(s, out) >= 0;
		LLVMDisposeMessage(s);
	} else {
		/* after a split, mb holds the object already */
		if (split == 0 && k == EMIT_BC)
			mb = LLVMWriteBitcodeToMemoryBuffer(mod);
		else if (split == 0 && LLVMTargetMachineEmitToMemoryBuffer(tm, mod,
		    k == EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile, &err, &mb)) {
			diag_error(loc_none, "LLVM cannot emit code: %s", err ? err : "");
			LLVMDisposeMessage(err);
			mb = NULL;
			ok = false;
		}
		timed(o, "code gen", &t0);
		if (mb) {
			size_t len = LLVMGetBufferSize(mb);
			ok = fwrite(LLVMGetBufferStart(mb), 1, len, out) == len;
			LLVMDisposeMemoryBuffer(mb);
		}
	}
	if (!ok && !diag_errors())
		diag_error(loc_none, "cannot write the output");
	return ok;
}

bool
llvm_emit(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind k, FILE *out)
{
	char *triple = NULL;
	LLVMTargetMachineRef tm;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	bool ok;
	double t0 = now_ms();

	tm = llvm_emit_machine(o, &triple);
	if (!tm)
		return false;
	timed(o, "target machine", &t0);
	ctx = LLVMContextCreate();
	mod = build_module(ctx, funcs, n, o, tm, triple, false, true);
	ok = mod && write_module(mod, tm, o, k, out);
	if (mod)
		LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return ok;
}

bool
llvm_emit_runtime_kernels(const LlvmOptions *o, EmitKind k, FILE *out)
{
	LlvmOptions ro = *o;
	char *triple = NULL;
	LLVMTargetMachineRef tm;
	LLVMContextRef ctx;
	LLVMTargetDataRef td;
	Cg cg;
	bool ok;

	if (strncmp(llvm_host_triple(), "x86_64-", 7) != 0) {
		diag_error(loc_none, "--runtime-kernels: libtxrt's micro-kernels are x86-64 code "
		    "(AVX2 and FMA); this host is %s", llvm_host_triple());
		return false;
	}
	ro.triple = NULL;
	ro.cpu = RT_CPU;
	ro.features = RT_FEATURES;
	ro.debug = false;
	tm = llvm_emit_machine(&ro, &triple);
	if (!tm)
		return false;
	ctx = LLVMContextCreate();
	td = LLVMCreateTargetDataLayout(tm);
	ok = cg_module(&cg, ctx, "txrt", NULL, 0, td, triple, false, true, false, false, NULL);
	LLVMDisposeTargetData(td);
	if (ok) {
		cg.b = LLVMCreateBuilderInContext(ctx);
		intrin_cpu_runtime_kernels(&cg);
		LLVMDisposeBuilder(cg.b);
		cg.b = NULL;
		verify(cg.mod, &ro);   /* write_module optimises */
	}
	ok = ok && write_module(cg.mod, tm, &ro, k, out);
	LLVMDisposeModule(cg.mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	LLVMDisposeMessage(triple);
	return ok;
}

bool
llvm_emit_file(IrFunc **funcs, int n, const LlvmOptions *o, EmitKind k, const char *path)
{
	bool to_stdout = !strcmp(path, "-");
	FILE *fp = to_stdout ? stdout : fopen(path, k == EMIT_LLVM || k == EMIT_ASM ? "w" : "wb");
	bool ok;

	if (!fp) {
		diag_error(loc_none, "cannot open '%s' for writing", path);
		return false;
	}
	ok = llvm_emit(funcs, n, o, k, fp);
	if (to_stdout)
		ok = fflush(fp) == 0 && ok;
	else if (fclose(fp) != 0)
		ok = false;
	if (!ok && !to_stdout)
		remove(path);
	return ok;
}

bool
llvm_write_module(LLVMModuleRef mod, LLVMTargetMachineRef tm, const LlvmOptions *o,
    EmitKind k, FILE *out)
{
	verify(mod, o);
	return write_module(mod, tm, o, k, out);
}
