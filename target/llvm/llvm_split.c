/* llvm_split.c: optimisation and code generation of one module on
 * several threads.
 *
 * Once txc has built a kernel's LLVM module, most of its compile time is
 * LLVM's IR passes and code generator (instruction selection, loop
 * strength reduction, register allocation), which run one function after
 * another.  A kernel is several functions (its entry, one closure per
 * parallel loop, its micro-kernels), so the module's functions are dealt
 * into parts of about equal size (instructions, a dispatch-only entry
 * counting a quarter: it is compiled as at -O0) and each part is
 * optimised and compiled to assembly on a thread of its own, from its own
 * copy of the module in its own LLVMContext (read back from bitcode; LLVM
 * contexts are not shared between threads).  In each copy the other
 * parts' functions become declarations, and constants no function uses
 * any more are dropped.
 *
 * One object comes out: the parts' assembly, each part's private labels
 * (.LBB0_1, .LCPI0_0, .L.str: numbered per module, so the same in two
 * parts) given a prefix of their own, is assembled as the module-level
 * assembly of an empty module by LLVM's assembler.  A function defined
 * in one part and called or named from another is the same symbol of the
 * same object: internal functions stay local symbols (the declaring part
 * marks them hidden), the entry points stay global.
 *
 * When: objects without -g (two parts' line tables would be two), for a
 * target whose assembler LLVM has here, with at least two functions.  By
 * default (no --codegen-threads) the parts are as many as the processors
 * this process may run on, at most MAX_PARTS, and a module is split only
 * when its second-largest part is worth a thread (MIN_PART
 * instructions): below that the copy, the threads and the assembler cost
 * more than the part.  --codegen-threads=N (N >= 2) splits any module of
 * two or more functions into up to N parts (the tests use it on small
 * kernels); --codegen-threads=1 never splits. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "target/llvm/cg.h"
#include "target/llvm/targets.h"

enum { MAX_PARTS = 8, MIN_PART = 120 };

/* Constant data past this many bytes keeps a module in one part: the
 * parts are joined as assembly text, where every byte of a constant is
 * printed and parsed again (about 0.2 us a byte: the 46 MB of a
 * ResNet-18's weights took 11 s, against 1 s for the one part's object). */
#define MAX_SPLIT_DATA (1 << 20)

/* One part: the functions it compiles, its copy of the module, its
 * assembly. */
typedef struct {
	const char **names;            /* its functions */
	int nnames;
	int cost;                      /* their instructions (weighted) */
	LLVMMemoryBufferRef bitcode;   /* the whole module (parts >= 1) */
	LLVMModuleRef mod;             /* part 0: the module itself */
	LLVMTargetMachineRef tm;
	LLVMMemoryBufferRef out;       /* its assembly */
	char *err;                     /* LLVM's message on failure */
	char fail[256];                /* or this one */
	const LlvmOptions *opt;
} Part;

/* LLVM reads assembly back for the targets whose assembler it has here
 * (configure: TXC_LLVM_ASM_PARSERS); the parts are tested on x86-64. */
static bool
has_asm_parser(LLVMModuleRef mod)
{
	return TXC_LLVM_X86_ASM_PARSER && !strncmp(LLVMGetTarget(mod), "x86_64", 6);
}

static int
part_count(const LlvmOptions *o)
{
	if (o->codegen_threads > 0)
		return o->codegen_threads < MAX_PARTS ? o->codegen_threads : MAX_PARTS;
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) :
	    (int)sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n < MAX_PARTS ? n : MAX_PARTS;
}

/* A function's weight: its instructions, a quarter for one the code
 * generator compiles as at -O0 (llvm_emit.c's dispatch_only). */
static int
fn_cost(LLVMValueRef f)
{
	int n = 0;

	for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
		for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
			n++;
	return LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, CG_DISPATCH_ONLY,
	    (unsigned)strlen(CG_DISPATCH_ONLY)) ? n / 4 : n;
}

static bool
in_part(const Part *p, const char *name, size_t len)
{
	for (int i = 0; i < p->nnames; i++)
		if (strlen(p->names[i]) == len && !memcmp(p->names[i], name, len))
			return true;
	return false;
}

/* Turns f into a declaration of the same name and type; a function the
 * module had to itself (internal) is hidden: another part defines it in
 * the same object. */
static void
to_declaration(LLVMModuleRef m, LLVMValueRef f)
{
	size_t len;
	const char *nm = LLVMGetValueName2(f, &len);
	char *name = strndup(nm, len);
	bool local = LLVMGetLinkage(f) == LLVMInternalLinkage;

	LLVMSetValueName2(f, "", 0);
	LLVMValueRef d = LLVMAddFunction(m, name, LLVMGlobalGetValueType(f));
	LLVMReplaceAllUsesWith(f, d);
	LLVMDeleteFunction(f);
	if (local)
		LLVMSetVisibility(d, LLVMHiddenVisibility);
	free(name);
}

/* Puts the module's internal functions in llvm.compiler.used, so that
 * globaldce keeps those that only another part calls. */
static void
keep_alive(LLVMModuleRef m)
{
	LLVMTypeRef ptr = LLVMPointerTypeInContext(LLVMGetModuleContext(m), 0);
	LLVMValueRef *fns, f;
	size_t n = 0;

	for (f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		n += !LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMInternalLinkage;
	if (n == 0)
		return;
	fns = malloc(sizeof *fns * n);
	if (!fns)
		ICE("out of memory keeping a code gen part's functions");
	n = 0;
	for (f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMInternalLinkage)
			fns[n++] = f;
	LLVMValueRef g = LLVMAddGlobal(m, LLVMArrayType2(ptr, n), "llvm.compiler.used");
	LLVMSetLinkage(g, LLVMAppendingLinkage);
	LLVMSetSection(g, "llvm.metadata");
	LLVMSetInitializer(g, LLVMConstArray2(ptr, fns, n));
	free(fns);
}

/* Keeps the bodies of p's functions only, and the constants they use. */
static void
keep_part(LLVMModuleRef m, const Part *p)
{
	LLVMValueRef f, next;

	for (f = LLVMGetFirstFunction(m); f; f = next) {
		next = LLVMGetNextFunction(f);
		size_t len;
		const char *name = LLVMGetValueName2(f, &len);
		if (!LLVMIsDeclaration(f) && !in_part(p, name, len))
			to_declaration(m, f);
	}
	keep_alive(m);
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(m, "globaldce", NULL, po);
	if (err)   /* nothing dropped: the object is larger, not wrong */
		LLVMConsumeError(err);
	LLVMDisposePassBuilderOptions(po);
}

/* Optimises and compiles what keep_part left of p's module. */
static void
emit_part(Part *p)
{
	LLVMErrorRef err = llvm_optimise(p->mod, p->opt, p->tm);
	if (err) {
		char *m = LLVMGetErrorMessage(err);
		snprintf(p->fail, sizeof p->fail, "optimisation failed: %s", m);
		LLVMDisposeErrorMessage(m);
		return;
	}
	if (LLVMTargetMachineEmitToMemoryBuffer(p->tm, p->mod, LLVMAssemblyFile, &p->err, &p->out))
		p->out = NULL;
}

/* A part's thread: its own context and copy of the module. */
static void *
part_thread(void *arg)
{
	Part *p = arg;
	LLVMContextRef ctx = LLVMContextCreate();

	if (LLVMParseBitcodeInContext2(ctx, p->bitcode, &p->mod)) {
		snprintf(p->fail, sizeof p->fail, "cannot read the module back from bitcode");
	} else {
		keep_part(p->mod, p);
		emit_part(p);
		LLVMDisposeModule(p->mod);
	}
	p->mod = NULL;
	LLVMContextDispose(ctx);
	return NULL;
}

static bool
ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '.' || c == '$';
}

/* The parts' assembly, joined into one text. */
typedef struct {
	char *s;
	size_t len, cap;
} Text;

static void
put(Text *t, const char *s, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = 2 * t->cap + n + 4096;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			ICE("out of memory joining the assembly of the code gen parts");
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
}

/* Appends part k's assembly to t, ".L" labels as ".Ltxc<k>_...";
 * strings and comments are copied as they are. */
static void
append_renamed(Text *t, const char *s, size_t n, int k)
{
	char prefix[16];
	size_t plen = (size_t)snprintf(prefix, sizeof prefix, ".Ltxc%d_", k);
	size_t i = 0, run = 0;   /* s[run, i) is still to be copied */

	while (i < n) {
		char c = s[i];
		if (c == '"') {          /* a string, escapes included */
			i++;
			while (i < n && s[i] != '"' && s[i] != '\n')
				i += s[i] == '\\' && i + 1 < n ? 2 : 1;
			i = i < n ? i + 1 : n;
		} else if (c == '#') {   /* a comment, to the end of the line */
			while (i < n && s[i] != '\n')
				i++;
		} else if (k > 0 && c == '.' && i + 2 < n && s[i + 1] == 'L' &&
		    ident_char(s[i + 2]) && (i == 0 || !ident_char(s[i - 1]))) {
			put(t, s + run, i - run);
			put(t, prefix, plen);
			i += 2;          /* past ".L" */
			run = i;
		} else {
			i++;
		}
	}
	put(t, s + run, n - run);
	put(t, "\n", 1);
}

/* Deals the defined functions into at most nparts parts, the largest
 * first into the lightest part; the number of parts used. */
static int
deal(LLVMModuleRef mod, Part *parts, int nparts)
{
	int nf = 0, used = 0;
	LLVMValueRef f;

	for (f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		nf += !LLVMIsDeclaration(f);
	if (nf < 2)
		return 1;
	const char **names = arena_alloc(perm, sizeof *names * (size_t)nf * (size_t)nparts);
	int *cost = arena_alloc(perm, sizeof *cost * (size_t)nf);
	const char **fname = arena_alloc(perm, sizeof *fname * (size_t)nf);
	int i = 0;
	for (f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f))
			continue;
		size_t len;
		const char *nm = LLVMGetValueName2(f, &len);
		fname[i] = arena_strndup(perm, nm, len);
		cost[i++] = fn_cost(f);
	}
	if (nparts > nf)
		nparts = nf;
	for (int p = 0; p < nparts; p++)
		parts[p] = (Part){ .names = names + (size_t)p * (size_t)nf };
	for (int done = 0; done < nf; done++) {
		int big = -1, light = 0;
		for (i = 0; i < nf; i++)
			if (cost[i] >= 0 && (big < 0 || cost[i] > cost[big]))
				big = i;
		for (int p = 1; p < nparts; p++)
			if (parts[p].cost < parts[light].cost)
				light = p;
		parts[light].names[parts[light].nnames++] = fname[big];
		parts[light].cost += cost[big];
		cost[big] = -1;
	}
	for (int p = 0; p < nparts; p++)
		used += parts[p].nnames > 0;
	return used;
}

int
llvm_split_emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, const LlvmOptions *o,
    LLVMMemoryBufferRef *obj)
{
	Part parts[MAX_PARTS];
	pthread_t th[MAX_PARTS];
	bool started[MAX_PARTS] = { false };
	int n = part_count(o), ok = 1;

	if (n < 2 || o->debug || o->time_passes >= 2 || !has_asm_parser(mod))
		return 0;
	/* a variable the object exports would be defined by every part;
	 * large constants are cheaper compiled once than written as text */
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
	unsigned long long data = 0;
	for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
		LLVMLinkage l = LLVMGetLinkage(g);
		if (!LLVMIsDeclaration(g) && l != LLVMPrivateLinkage && l != LLVMInternalLinkage)
			return 0;
		if (!LLVMIsDeclaration(g))
			data += LLVMABISizeOfType(td, LLVMGlobalGetValueType(g));
		if (data > MAX_SPLIT_DATA)
			return 0;
	}
	n = deal(mod, parts, n);
	if (n < 2)
		return 0;
	/* the second-largest part must be worth its thread */
	int first = 0, second = 0;
	for (int p = 0; p < n; p++) {
		if (parts[p].cost > first)
			second = first, first = parts[p].cost;
		else if (parts[p].cost > second)
			second = parts[p].cost;
	}
	if (o->codegen_threads == 0 && second < MIN_PART)
		return 0;
	if (o->time_passes)
		fprintf(stderr, "txc: llvm in %d parts      (instructions:", n);
	for (int p = 0; o->time_passes && p < n; p++)
		fprintf(stderr, " %d%s", parts[p].cost, p + 1 < n ? "," : ")\n");

	/* internal functions keep their symbols' names in every part (a
	 * private one's would be a .L label, renamed per part) */
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		if (LLVMGetLinkage(f) == LLVMPrivateLinkage)
			LLVMSetLinkage(f, LLVMInternalLinkage);
	/* the other parts optimise quietly (TXC_TIME_PASSES times part 0) */
	LlvmOptions quiet = *o;
	quiet.time_passes = 0;
	LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
	for (int p = 1; p < n && ok > 0; p++) {
		char *triple = NULL;
		parts[p].bitcode = bc;
		parts[p].opt = &quiet;
		parts[p].tm = llvm_emit_machine(o, &triple);
		LLVMDisposeMessage(triple);
		if (!parts[p].tm)
			ok = -1;   /* after a diagnostic */
		else if (pthread_create(&th[p], NULL, part_thread, &parts[p]))
			ok = 0;    /* no thread: compiled as one part */
		else
			started[p] = true;
	}
	if (ok > 0) {
		parts[0].mod = mod;
		parts[0].tm = tm;
		parts[0].opt = o;
		keep_part(mod, &parts[0]);
		emit_part(&parts[0]);
	}
	for (int p = 1; p < n; p++)
		if (started[p])
			pthread_join(th[p], NULL);
	LLVMDisposeMemoryBuffer(bc);

	/* one text, then one object */
	Text text = { 0 };
	for (int p = 0; p < n && ok > 0; p++) {
		if (!parts[p].out) {
			diag_error(loc_none, "LLVM cannot emit code: %s",
			    parts[p].err ? parts[p].err : parts[p].fail);
			ok = -1;
			break;
		}
		append_renamed(&text, LLVMGetBufferStart(parts[p].out),
		    LLVMGetBufferSize(parts[p].out), p);
	}
	if (ok > 0) {
		LLVMContextRef ctx = LLVMGetModuleContext(mod);
		LLVMModuleRef m = LLVMModuleCreateWithNameInContext("txc", ctx);
		char *err = NULL;
		LLVMSetTarget(m, LLVMGetTarget(mod));
		LLVMSetDataLayout(m, LLVMGetDataLayoutStr(mod));
		LLVMSetModuleInlineAsm2(m, text.s, text.len);
		if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, obj)) {
			diag_error(loc_none, "LLVM cannot assemble the code it wrote: %s",
			    err ? err : "");
			ok = -1;
		}
		LLVMDisposeMessage(err);
		LLVMDisposeModule(m);
	}
	free(text.s);
	for (int p = 0; p < n; p++) {
		if (parts[p].out)
			LLVMDisposeMemoryBuffer(parts[p].out);
		if (parts[p].err)
			LLVMDisposeMessage(parts[p].err);
		if (p > 0 && parts[p].tm)
			LLVMDisposeTargetMachine(parts[p].tm);
	}
	return ok;
}
