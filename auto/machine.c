/* machine.c: the machine the schedule generator chooses its default point
 * for: vector width and register count from --cpu/--features (or the
 * host's, through LLVM), caches and threads from the host.
 *
 * With AVX-512 the generator keeps 256-bit vectors but counts 32 registers
 * (ymm0-31): LLVM splits 512-bit vectors on CPUs that prefer 256-bit ones,
 * and a wider tile would then spill (the AVX-512 tables are issue 37's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auto/auto.h"
#include "target/target.h"

/* CPUs LLVM knows by name whose baseline has AVX-512F. */
static const char *const avx512_cpus[] = {
	"skylake-avx512", "skx", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
	"icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
	"graniterapids", "graniterapids-d", "diamondrapids", "znver4", "znver5", "x86-64-v4",
	"knl", "knm", NULL
};

static bool
has_feature(const char *list, const char *f)
{
	size_t n = strlen(f);
	for (const char *p = list; (p = strstr(p, f)); p += n)
		if (p > list && p[-1] == '+' && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

static long
cache_bytes(int level)
{
	for (int i = 0; i < 8; i++) {
		char path[128], buf[64];
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		FILE *f = fopen(path, "r");
		if (!f)
			return 0;
		int lv = fgets(buf, sizeof buf, f) ? atoi(buf) : 0;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		f = fopen(path, "r");
		bool instr = false;
		if (f) {
			instr = fgets(buf, sizeof buf, f) && !strncmp(buf, "Instruction", 11);
			fclose(f);
		}
		if (lv != level || instr)
			continue;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (!f)
			return 0;
		long v = 0;
		if (fgets(buf, sizeof buf, f)) {
			char *end;
			v = strtol(buf, &end, 10);
			if (*end == 'K')
				v *= 1024;
			else if (*end == 'M')
				v *= 1024 * 1024;
		}
		fclose(f);
		return v;
	}
	return 0;
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
		for (int i = 0; avx2_cpus[i]; i++)
			avx2 |= !strcmp(cpu, avx2_cpus[i]);
		neon = !strncmp(cpu, "cortex-a", 8) || !strncmp(cpu, "neoverse", 8) ||
		    !strncmp(cpu, "apple-", 6);
		x86 = !neon;
	}
	if (feat) {
		avx512 |= has_feature(feat, "avx512f");
		avx2 |= has_feature(feat, "avx2") || has_feature(feat, "avx");
	}
	if (avx512) {
		m->vbytes = 32;
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
	m->l1 = cache_bytes(1);
	m->l2 = cache_bytes(2);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	const char *t = getenv("TXRT_NUM_THREADS");
	if (t && atoi(t) > 0)
		n = atoi(t);
	m->threads = n > 0 ? (int)(n > 256 ? 256 : n) : 1;
}
