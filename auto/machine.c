/* machine.c: the machine the schedule generator chooses its default point
 * for: vector width and register count from --cpu/--features (or the
 * host's, through LLVM), caches and threads from the host.  The same
 * instruction-set name chooses the default of the isa knob of every
 * template (sema/knobs.c), the stdlib's and the generator's alike.
 *
 * With AVX-512 the generator takes 512-bit vectors and 32 registers
 * (zmm0-31): the LLVM backend keeps a schedule's 512-bit vectors whole
 * on every AVX-512 CPU (target/llvm/cg_func.c, min-legal-vector-width),
 * also on those whose tuning prefers 256-bit ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auto/auto.h"
#include "sema/sema.h"
#include "target/target.h"

/* CPUs LLVM knows by name whose baseline has AVX-512F. */
static const char *const avx512_cpus[] = {
	"skylake-avx512", "skx", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
	"icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
	"graniterapids", "graniterapids-d", "diamondrapids", "znver4", "znver5", "x86-64-v4",
	"knl", "knm", NULL
};

/* The extensions the isa knob names (sema/knobs.c) and the CPUs LLVM 19
 * knows by name that have each. */
static const struct {
	const char *ext;
	const char *const cpus[20];
} ext_cpus[] = {
	{ "avx512vnni", { "cascadelake", "cooperlake", "icelake-client", "icelake-server",
	    "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids",
	    "graniterapids-d", "diamondrapids", "znver4", "znver5", NULL } },
	{ "avxvnni", { "alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s",
	    "lunarlake", "gracemont", "sierraforest", "grandridge", "clearwaterforest",
	    "pantherlake", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
	    "diamondrapids", "znver5", NULL } },
	{ "avx512bf16", { "cooperlake", "sapphirerapids", "emeraldrapids", "graniterapids",
	    "graniterapids-d", "diamondrapids", "znver4", "znver5", NULL } },
	/* AMX: each also needs amx-tile, which every CPU with one has */
	{ "amx-int8", { "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
	    "diamondrapids", NULL } },
	{ "amx-bf16", { "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
	    "diamondrapids", NULL } },
};

/* The sign of the last item of list naming f: 1 "+f", -1 "-f", 0 none
 * ("+avx512f,...,-avx512f": the host's features, then
 * --features=-avx512f, has no AVX-512). */
static int
feature_sign(const char *list, const char *f)
{
	size_t n = strlen(f);
	int sign = 0;
	for (const char *p = list; (p = strstr(p, f)); p += n)
		if (p > list && (p[-1] == '+' || p[-1] == '-') && (p[n] == ',' || p[n] == 0))
			sign = p[-1] == '+' ? 1 : -1;
	return sign;
}

void
auto_machine(AutoMachine *m, const char *cpu, const char *features)
{
	memset(m, 0, sizeof *m);
	const char *feat = features;
	bool avx512 = false, avx2 = false, neon = false, x86 = true;
	if (!cpu || !strcmp(cpu, "native") || !strcmp(cpu, "host")) {
		const char *hf = llvm_host_features();
		feat = features ? arena_printf(perm, "%s,%s", hf, features) : hf;
		const char *triple = llvm_host_triple();
		x86 = triple && (strstr(triple, "x86_64") || strstr(triple, "i686"));
		neon = triple && strstr(triple, "aarch64");
	} else {
		for (int i = 0; avx512_cpus[i]; i++)
			avx512 |= !strcmp(cpu, avx512_cpus[i]);
		/* the others that have AVX2: every x86-64 CPU LLVM names after
		 * Haswell, and x86-64-v3; the rest count as SSE */
		static const char *const avx2_cpus[] = {
			"haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
			"arrowlake", "lunarlake", "gracemont", "znver1", "znver2", "znver3",
			"x86-64-v3", "bdver4", NULL
		};
		avx2 = avx512;   /* an AVX-512 CPU without it (-avx512f) has AVX2 */
		for (int i = 0; avx2_cpus[i]; i++)
			avx2 |= !strcmp(cpu, avx2_cpus[i]);
		neon = !strncmp(cpu, "cortex-a", 8) || !strncmp(cpu, "neoverse", 8) ||
		    !strncmp(cpu, "apple-", 6);
		x86 = !neon;
	}
	if (feat) {
		int s512 = feature_sign(feat, "avx512f");
		if (s512)
			avx512 = s512 > 0;
		avx2 |= feature_sign(feat, "avx2") > 0 || feature_sign(feat, "avx") > 0;
	}
	/* the extensions: the CPU's, then what the features add or remove
	 * (the host's features name them all) */
	const char *exts = "";
	for (size_t e = 0; x86 && e < sizeof ext_cpus / sizeof *ext_cpus; e++) {
		bool on = false;
		for (int i = 0; cpu && ext_cpus[e].cpus[i]; i++)
			on |= !strcmp(cpu, ext_cpus[e].cpus[i]);
		int sg = feat ? feature_sign(feat, ext_cpus[e].ext) : 0;
		if (sg)
			on = sg > 0;
		/* the zmm extensions (and AMX: its tables are AVX-512's) need
		 * AVX-512 itself; AMX's dot products need the tiles too */
		bool zmm = !strncmp(ext_cpus[e].ext, "avx512", 6) || !strncmp(ext_cpus[e].ext, "amx", 3);
		if (on && !strncmp(ext_cpus[e].ext, "amx", 3) && feat &&
		    feature_sign(feat, "amx-tile") < 0)
			on = false;
		if (on && (avx2 || avx512) && (avx512 || !zmm))
			exts = arena_printf(perm, "%s%s%s", exts, *exts ? "," : "", ext_cpus[e].ext);
	}
	m->exts = exts;
	if (avx512) {
		m->vbytes = 64;
		m->vregs = 32;
		m->isa = "avx512";
	} else if (avx2) {
		m->vbytes = 32;
		m->vregs = 16;
		m->isa = "avx2";
	} else if (neon) {
		m->vbytes = 16;
		m->vregs = 32;
		m->isa = "neon";
	} else if (x86) {
		m->vbytes = 16;
		m->vregs = 16;
		m->isa = "sse2";
	} else {
		m->vbytes = 16;
		m->vregs = 16;
		m->isa = "generic";
	}
	m->l1 = caches_sysfs(1);
	m->l2 = caches_sysfs(2);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	const char *t = getenv("TXRT_NUM_THREADS");
	if (t && atoi(t) > 0)
		n = atoi(t);
	m->threads = n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}

void
auto_target_isa(const char *triple, const char *cpu, const char *features)
{
	/* another architecture than the host's: no x86 level */
	const char *host = llvm_host_triple(), *dash = strchr(host, '-');
	size_t arch = dash ? (size_t)(dash - host) : strlen(host);
	if (triple && *triple && strncmp(triple, host, arch) != 0) {
		knobs_set_isa("generic", NULL);
		long c[3];   /* not this machine's: the named CPU's, else the defaults */
		caches_get(cpu ? cpu : "generic", c);
		knobs_set_caches(c[0], c[1], c[2]);
		return;
	}
	AutoMachine m;
	auto_machine(&m, cpu, features);
	knobs_set_isa(m.isa, m.exts);
	long c[3];
	caches_get(cpu, c);
	knobs_set_caches(c[0], c[1], c[2]);
}
