/* caches.c: the data cache sizes of the target CPU, which schedules read
 * as l1_bytes, l2_bytes and l3_bytes (sema/knobs.c) and the schedule
 * generator sizes its tiles by (machine.c).
 *
 * In order, the first that gives a size wins, level by level:
 *   1. txc --cache=L1,L2[,L3] (caches_override);
 *   2. for the host CPU (no --cpu, or --cpu=native/host): the OS, first
 *      Linux's /sys/devices/system/cpu/cpu0/cache/index*\/{level,type,size}
 *      (data and unified caches; instruction caches skipped), then
 *      sysconf(_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE,
 *      _SC_LEVEL3_CACHE_SIZE) where the C library has them;
 *   3. for a CPU named by --cpu, the table below (per core L1d and L2,
 *      L3 of a typical part);
 *   4. the defaults: 32 KiB, 1 MiB, 32 MiB.
 * Nothing here is an error but a malformed --cache.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auto/auto.h"

#define KIB 1024L
#define MIB (1024L * 1024L)

static const long defaults[3] = { 32 * KIB, 1 * MIB, 32 * MIB };

/* -mcpu names: L1d and L2 per core, L3 of a typical part */
static const struct {
	const char *cpu;
	long l1, l2, l3;
} table[] = {
	{ "haswell", 32 * KIB, 256 * KIB, 8 * MIB },
	{ "broadwell", 32 * KIB, 256 * KIB, 8 * MIB },
	{ "skylake", 32 * KIB, 256 * KIB, 8 * MIB },
	{ "skylake-avx512", 32 * KIB, 1 * MIB, 32 * MIB },
	{ "skx", 32 * KIB, 1 * MIB, 32 * MIB },
	{ "cascadelake", 32 * KIB, 1 * MIB, 32 * MIB },
	{ "cooperlake", 32 * KIB, 1 * MIB, 32 * MIB },
	{ "icelake-client", 48 * KIB, 512 * KIB, 8 * MIB },
	{ "icelake-server", 48 * KIB, 1280 * KIB, 48 * MIB },
	{ "tigerlake", 48 * KIB, 1280 * KIB, 12 * MIB },
	{ "sapphirerapids", 48 * KIB, 2 * MIB, 96 * MIB },
	{ "emeraldrapids", 48 * KIB, 2 * MIB, 160 * MIB },
	{ "alderlake", 48 * KIB, 1280 * KIB, 30 * MIB },
	{ "znver1", 32 * KIB, 512 * KIB, 8 * MIB },
	{ "znver2", 32 * KIB, 512 * KIB, 16 * MIB },
	{ "znver3", 32 * KIB, 512 * KIB, 32 * MIB },
	{ "znver4", 32 * KIB, 1 * MIB, 32 * MIB },
	{ "znver5", 48 * KIB, 1 * MIB, 32 * MIB },
	{ "neoverse-n1", 64 * KIB, 1 * MIB, 32 * MIB },
	{ "neoverse-v1", 64 * KIB, 1 * MIB, 32 * MIB },
	{ "apple-m1", 128 * KIB, 4 * MIB, 8 * MIB },
};

static long override[3];    /* --cache; 0: not given */

/* "32K", "1M", "1.25M", "65536": bytes, or -1 */
static long
parse_size(const char *s, size_t n)
{
	char buf[32], *end;
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '.'))
		return -1;
	double v = strtod(buf, &end);
	if (end == buf)
		return -1;
	const char *units = "KMG";
	const char *u = *end ? strchr(units, *end & ~32) : NULL;
	if (u) {
		for (const char *x = units; x <= u; x++)
			v *= KIB;
		end++;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v < 1 || v > 1e12)
		return -1;
	return (long)v;
}

bool
caches_override(const char *arg)
{
	long v[3] = { 0 };
	int n = 0;
	for (const char *p = arg; ; n++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (n == 3) {
			diag_error(loc_none, "--cache=%s: at most three sizes, L1,L2,L3 (e.g. "
			    "--cache=32K,1M,32M)", arg);
			return false;
		}
		v[n] = parse_size(p, len);
		if (v[n] < 0) {
			diag_error(loc_none, "--cache=%s: '%.*s' is not a size: write bytes, or "
			    "a number with K or M (e.g. --cache=32K,1M or --cache=48K,1.25M,32M)",
			    arg, (int)len, p);
			return false;
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (n < 1) {
		diag_error(loc_none, "--cache=%s: give the L1 and L2 data cache sizes, and "
		    "optionally L3 (e.g. --cache=32K,1M)", arg);
		return false;
	}
	for (int i = 1; i <= n; i++)
		if (v[i] < v[i - 1]) {
			diag_error(loc_none, "--cache=%s: the L%d size is smaller than the L%d "
			    "size; list them L1,L2,L3", arg, i + 1, i);
			return false;
		}
	memcpy(override, v, sizeof v);
	return true;
}

long
caches_sysfs(int level)
{
	for (int i = 0; i < 16; i++) {
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
				v *= KIB;
			else if (*end == 'M')
				v *= MIB;
		}
		fclose(f);
		return v > 0 ? v : 0;
	}
	return 0;
}

static long
from_sysconf(int level)
{
	long v = -1;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
	v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE :
	    _SC_LEVEL3_CACHE_SIZE);
#else
	(void)level;
#endif
	return v > 0 ? v : 0;
}

const char *
caches_get(const char *cpu, long out[3])
{
	bool host = !cpu || !strcmp(cpu, "native") || !strcmp(cpu, "host");
	int row = -1;
	for (size_t i = 0; !host && i < sizeof table / sizeof *table; i++)
		if (!strcmp(cpu, table[i].cpu))
			row = (int)i;
	const char *src = NULL;
	for (int l = 0; l < 3; l++) {
		const char *s;
		long v = 0;
		if ((v = override[l]) > 0)
			s = "--cache";
		else if (host && (v = caches_sysfs(l + 1)) > 0)
			s = "sysfs";
		else if (host && (v = from_sysconf(l + 1)) > 0)
			s = "sysconf";
		else if (row >= 0 && (v = l == 0 ? table[row].l1 : l == 1 ? table[row].l2 :
		    table[row].l3) > 0)
			s = arena_printf(perm, "table: %s", cpu);
		else {
			v = defaults[l];
			s = "defaults";
		}
		out[l] = v;
		if (!src)
			src = s;
		else if (strcmp(src, s) != 0 && !strstr(src, s))
			src = arena_printf(perm, "%s, %s", src, s);
	}
	return src;
}
