/* cpu.c: what the CPU running an object can execute.
 *
 * An object txc writes is compiled for one CPU (the host, or --cpu and
 * --features), and may use every instruction set that CPU has: AVX2 and
 * FMA on most machines, AVX-512 on recent servers.  Run on a CPU without
 * them it would die of SIGILL at the first such instruction.  Instead each
 * entry point first asks txrt_cpu_require with the list of instruction
 * sets it was compiled for (LLVM's names, as txc found them); a missing
 * one is an error message and TXRT_ERR_CPU.  The CPU is read once, with
 * CPUID, and XGETBV for the register state the operating system saves
 * (AVX needs the YMM state, AVX-512 the opmask and ZMM state, AMX the tile
 * state); names this file does not know are taken as present.  A list
 * that names AMX (amx-tile, amx-int8, amx-bf16) also asks the operating
 * system for the tile state, once a process (amx.c); a refusal is
 * TXRT_ERR_CPU too.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "txrt.h"
#include "amx.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

enum { R_EAX, R_EBX, R_ECX, R_EDX };

/* One instruction set: the CPUID leaf, subleaf, register and bit that
 * announce it, and the XCR0 bits the operating system must enable. */
typedef struct {
	const char *name;
	unsigned leaf, sub;
	int reg, bit;
	uint64_t xcr0;
} Isa;

#define YMM 0x6ULL          /* SSE and AVX state */
#define ZMM 0xe6ULL         /* and opmask, ZMM_Hi256, Hi16_ZMM */
#define TILE 0x60006ULL     /* and XTILECFG, XTILEDATA */

static const Isa isas[] = {
	{ "sse3", 1, 0, R_ECX, 0, 0 },
	{ "pclmul", 1, 0, R_ECX, 1, 0 },
	{ "ssse3", 1, 0, R_ECX, 9, 0 },
	{ "fma", 1, 0, R_ECX, 12, YMM },
	{ "cx16", 1, 0, R_ECX, 13, 0 },
	{ "sse4.1", 1, 0, R_ECX, 19, 0 },
	{ "sse4.2", 1, 0, R_ECX, 20, 0 },
	{ "movbe", 1, 0, R_ECX, 22, 0 },
	{ "popcnt", 1, 0, R_ECX, 23, 0 },
	{ "aes", 1, 0, R_ECX, 25, 0 },
	{ "xsave", 1, 0, R_ECX, 26, 0 },
	{ "avx", 1, 0, R_ECX, 28, YMM },
	{ "f16c", 1, 0, R_ECX, 29, YMM },
	{ "rdrnd", 1, 0, R_ECX, 30, 0 },
	{ "bmi", 7, 0, R_EBX, 3, 0 },
	{ "avx2", 7, 0, R_EBX, 5, YMM },
	{ "bmi2", 7, 0, R_EBX, 8, 0 },
	{ "avx512f", 7, 0, R_EBX, 16, ZMM },
	{ "avx512dq", 7, 0, R_EBX, 17, ZMM },
	{ "rdseed", 7, 0, R_EBX, 18, 0 },
	{ "adx", 7, 0, R_EBX, 19, 0 },
	{ "avx512ifma", 7, 0, R_EBX, 21, ZMM },
	{ "avx512cd", 7, 0, R_EBX, 28, ZMM },
	{ "sha", 7, 0, R_EBX, 29, 0 },
	{ "avx512bw", 7, 0, R_EBX, 30, ZMM },
	{ "avx512vl", 7, 0, R_EBX, 31, ZMM },
	{ "avx512vbmi", 7, 0, R_ECX, 1, ZMM },
	{ "avx512vbmi2", 7, 0, R_ECX, 6, ZMM },
	{ "gfni", 7, 0, R_ECX, 8, 0 },
	{ "vaes", 7, 0, R_ECX, 9, YMM },
	{ "vpclmulqdq", 7, 0, R_ECX, 10, YMM },
	{ "avx512vnni", 7, 0, R_ECX, 11, ZMM },
	{ "avx512bitalg", 7, 0, R_ECX, 12, ZMM },
	{ "avx512vpopcntdq", 7, 0, R_ECX, 14, ZMM },
	{ "amx-bf16", 7, 0, R_EDX, 22, TILE },
	{ "avx512fp16", 7, 0, R_EDX, 23, ZMM },
	{ "amx-tile", 7, 0, R_EDX, 24, TILE },
	{ "amx-int8", 7, 0, R_EDX, 25, TILE },
	{ "avxvnni", 7, 1, R_EAX, 4, YMM },
	{ "avx512bf16", 7, 1, R_EAX, 5, ZMM },
	{ "sahf", 0x80000001u, 0, R_ECX, 0, 0 },
	{ "lzcnt", 0x80000001u, 0, R_ECX, 5, 0 },
	{ "prfchw", 0x80000001u, 0, R_ECX, 8, 0 },
};

#define NISA (sizeof isas / sizeof isas[0])

static bool have[NISA];
static int known;            /* 0 not read, 1 read */

static uint64_t
xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static void
read_cpu(void)
{
	unsigned r[4], maxleaf = __get_cpuid_max(0, NULL);
	unsigned maxext = __get_cpuid_max(0x80000000u, NULL);
	uint64_t os = 0;
	if (__get_cpuid(1, &r[0], &r[1], &r[2], &r[3]) && (r[2] & (1u << 27)))
		os = xcr0();   /* OSXSAVE: the OS tells which state it saves */
	for (size_t i = 0; i < NISA; i++) {
		const Isa *s = &isas[i];
		bool ext = s->leaf >= 0x80000000u;
		if ((ext ? maxext : maxleaf) < s->leaf)
			continue;
		__cpuid_count(s->leaf, s->sub, r[0], r[1], r[2], r[3]);
		have[i] = (r[s->reg] >> s->bit & 1) && (os & s->xcr0) == s->xcr0;
	}
	__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
}

/* Whether the CPU has instruction set name (length n); unknown names: yes. */
static bool
has(const char *name, size_t n)
{
	for (size_t i = 0; i < NISA; i++)
		if (strlen(isas[i].name) == n && !memcmp(isas[i].name, name, n))
			return have[i];
	return true;
}
#else
static int known = 1;
static void read_cpu(void) {}
static bool has(const char *name, size_t n) { (void)name; (void)n; return true; }
#endif

int
txrt_cpu_has(const char *features)
{
	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		read_cpu();
	for (const char *p = features; p && *p; ) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && !has(p, n))
			return 0;
		p = e ? e + 1 : NULL;
	}
	return 1;
}

/* Whether features names an AMX set (its tiles need the OS's leave) */
static bool
names_amx(const char *features)
{
	for (const char *p = features; p && (p = strstr(p, "amx-")); p += 4)
		if (p == features || p[-1] == ',')
			return true;
	return false;
}

int
txrt_cpu_require(const char *features, const char *entry)
{
	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		read_cpu();   /* racing threads read the same bits */
	char missing[256];
	size_t m = 0;
	missing[0] = 0;
	for (const char *p = features; p && *p; ) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && !has(p, n) && m + n + 3 < sizeof missing) {
			if (m)
				missing[m++] = ',', missing[m++] = ' ';
			memcpy(missing + m, p, n);
			m += n;
			missing[m] = 0;
		}
		p = e ? e + 1 : NULL;
	}
	if (!m) {
		const char *why = "";
		if (!names_amx(features) || amx_permit(&why))
			return 0;
		txrt_set_error("%s: compiled for a CPU with AMX, but the operating system refused "
		    "this process the tile state (arch_prctl(ARCH_REQ_XCOMP_PERM, "
		    "XFEATURE_XTILEDATA): %s); compile it for a CPU without AMX (txc "
		    "--features=-amx-tile) or run it where Linux 5.16 or later allows AMX",
		    entry ? entry : "txc entry point", why);
		return TXRT_ERR_CPU;
	}
	txrt_set_error("%s: compiled for a CPU with instructions this CPU lacks (%s); "
	    "compile it for the machines it runs on (txc --cpu=NAME, e.g. x86-64-v2 or "
	    "x86-64-v3)", entry ? entry : "txc entry point", missing);
	return TXRT_ERR_CPU;
}
