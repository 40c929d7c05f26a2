/* output.c: every output file is written atomically.
 *
 * Writers get a stream on a temporary file beside the destination; the
 * rename happens only once the whole output is written and closed, so a
 * failed compile never leaves a partial or broken file behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

typedef struct {
	FILE *fp;
	char *tmp, *dest;
	bool done;
} Pending;

static Pending pending[16];
static int npending;

static Pending *
add(const char *dest)
{
	if (npending == (int)(sizeof pending / sizeof pending[0]))
		diag_fatal("too many output files");
	Pending *p = &pending[npending++];
	size_t n = strlen(dest) + 32;
	p->dest = arena_strdup(perm, dest);
	p->tmp = arena_alloc(perm, n);
	snprintf(p->tmp, n, "%s.tmp%ld", dest, (long)getpid());
	return p;
}

FILE *
output_open(const char *path, bool binary)
{
	if (strcmp(path, "-") == 0)
		return stdout;
	Pending *p = add(path);
	p->fp = fopen(p->tmp, binary ? "wb" : "w");
	if (!p->fp) {
		diag_error(loc_none, "cannot write '%s': %s", path, strerror(errno));
		npending--;
		return NULL;
	}
	return p->fp;
}

static bool
finish(Pending *p)
{
	if (rename(p->tmp, p->dest) != 0) {
		diag_error(loc_none, "cannot write '%s': %s", p->dest, strerror(errno));
		remove(p->tmp);
		p->done = true;
		return false;
	}
	p->done = true;
	return true;
}

bool
output_commit(FILE *fp)
{
	if (fp == stdout)
		return fflush(stdout) == 0;
	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		if (p->fp != fp || p->done)
			continue;
		int bad = ferror(fp);
		if (fclose(fp) != 0 || bad) {
			diag_error(loc_none, "cannot write '%s': %s", p->dest, strerror(errno));
			p->fp = NULL;
			remove(p->tmp);
			p->done = true;
			return false;
		}
		p->fp = NULL;
		return finish(p);
	}
	return false;
}

const char *
output_temp_path(const char *path)
{
	return add(path)->tmp;
}

bool
output_commit_path(const char *tmp)
{
	for (int i = 0; i < npending; i++)
		if (!pending[i].done && strcmp(pending[i].tmp, tmp) == 0)
			return finish(&pending[i]);
	return false;
}

void
output_abort_all(void)
{
	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		if (p->done)
			continue;
		if (p->fp)
			fclose(p->fp);
		remove(p->tmp);
		p->done = true;
	}
}
