/* caches_test.c: the cache sizes schedules read (auto/caches.c).
 *
 * The host's sizes must be what Linux's sysfs says, read here on its own
 * (a glob over every cache directory, not caches.c's loop); where sysfs
 * has no cache information the test skips (exit 77), after checking the
 * parts that do not need it: the --cpu table, the defaults, and
 * --cache=L1,L2[,L3] (accepted forms, what it overrides, its errors).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auto/auto.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
	__FILE__, __LINE__, #c); failures++; } } while (0)

static bool
read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* sysfs's data (or unified) cache of level lv, bytes; 0: none */
static long
sysfs_size(int lv)
{
	glob_t g;
	long v = 0;
	if (glob("/sys/devices/system/cpu/cpu0/cache/index*", 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char level[32], type[32], size[32];
		if (!read_line(g.gl_pathv[i], "level", level, sizeof level) ||
		    !read_line(g.gl_pathv[i], "type", type, sizeof type) ||
		    !read_line(g.gl_pathv[i], "size", size, sizeof size))
			continue;
		if (atoi(level) != lv || !strcmp(type, "Instruction"))
			continue;
		char *end;
		v = strtol(size, &end, 10);
		v *= *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1;
		break;
	}
	globfree(&g);
	return v;
}

int
main(void)
{
	long c[3];
	perm = arena_new();

	/* a CPU of the table, and one that is not there: no host facts */
	const char *from = caches_get("icelake-server", c);
	CHECK(c[0] == 48 * 1024 && c[1] == 1280 * 1024 && c[2] == 48L * 1024 * 1024);
	CHECK(!strcmp(from, "table: icelake-server"));
	caches_get("znver3", c);
	CHECK(c[0] == 32 * 1024 && c[1] == 512 * 1024);
	from = caches_get("x86-64", c);
	CHECK(c[0] == 32 * 1024 && c[1] == 1024 * 1024 && c[2] == 32L * 1024 * 1024);
	CHECK(!strcmp(from, "defaults"));

	/* the host: what sysfs says, level by level */
	long s1 = sysfs_size(1), s2 = sysfs_size(2), s3 = sysfs_size(3);
	from = caches_get(NULL, c);
	CHECK(c[0] > 0 && c[1] >= c[0] && c[2] > 0);
	if (s1 > 0) {
		CHECK(c[0] == s1);
		CHECK(!strncmp(from, "sysfs", 5));
	}
	if (s2 > 0)
		CHECK(c[1] == s2);
	if (s3 > 0)
		CHECK(c[2] == s3);
	long n[3];
	caches_get("native", n);
	CHECK(n[0] == c[0] && n[1] == c[1] && n[2] == c[2]);
	caches_get("host", n);
	CHECK(n[0] == c[0] && n[1] == c[1] && n[2] == c[2]);

	/* --cache: malformed lists are refused and change nothing */
	static const char *const bad[] = { "", "4K", "4K,", "x,1M", "4K,1Q", "1M,32K",
	    "4K,64K,32K", "4K,64K,1M,2M", "-4K,1M", "0,1M", "4K,,1M", NULL };
	for (int i = 0; bad[i]; i++) {
		int before = diag_errors();
		CHECK(!caches_override(bad[i]));
		if (diag_errors() != before + 1)
			fprintf(stderr, "  (--cache=%s gave no error)\n", bad[i]);
		CHECK(diag_errors() == before + 1);
	}
	caches_get("znver3", c);
	CHECK(c[0] == 32 * 1024 && c[1] == 512 * 1024);

	/* a good one wins over the table and the OS; L3 not given keeps its own */
	CHECK(caches_override("4K,64K"));
	from = caches_get("znver3", c);
	CHECK(c[0] == 4096 && c[1] == 65536 && c[2] == 32L * 1024 * 1024);
	CHECK(!strcmp(from, "--cache, table: znver3"));
	caches_get(NULL, c);
	CHECK(c[0] == 4096 && c[1] == 65536);
	if (s3 > 0)
		CHECK(c[2] == s3);
	CHECK(caches_override("48k,1.25M,1G"));
	caches_get("x86-64", c);
	CHECK(c[0] == 48 * 1024 && c[1] == 1280 * 1024 && c[2] == 1024L * 1024 * 1024);
	CHECK(!strcmp(caches_get("x86-64", c), "--cache"));
	CHECK(caches_override("32768,524288B,32MB"));
	caches_get(NULL, c);
	CHECK(c[0] == 32768 && c[1] == 524288 && c[2] == 32L * 1024 * 1024);

	if (failures) {
		fprintf(stderr, "caches_test: %d failures\n", failures);
		return 1;
	}
	if (s1 <= 0) {
		fprintf(stderr, "caches_test: no cache information in /sys: the host part skipped\n");
		return 77;
	}
	return 0;
}
