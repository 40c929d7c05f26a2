/* output.c: every output file is written atomically, and all together.
 *
 * Writers get a stream on a temporary file beside the destination and
 * close it with output_commit, which only checks that the whole file was
 * written.  The renames happen in output_finish_all, once every output of
 * the run has been written, so a failure anywhere (a later output that
 * cannot be written, a compile error after the header) leaves no file
 * behind and keeps the previous files as they were: output_abort_all
 * removes the temporaries instead.  If a rename fails half-way, the files
 * already renamed are put back (their old contents were kept as hard
 * links) or removed.  A file that cannot be opened, written or renamed is
 * an I/O failure (exit status 2, txc(1)); output_io_failed says so.  An
 * output a later step of the run reads (the object --shared links) is
 * made scratch with output_scratch: removed at the end, never renamed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

/* P_SCRATCH: written for a later step of the run (the object txc
 * --shared links), removed at the end instead of renamed into place. */
typedef enum { P_OPEN, P_READY, P_DONE, P_SCRATCH } PState;

typedef struct {
	FILE *fp;
	char *tmp, *dest;
	char *bak;          /* output_finish_all: the old dest, or NULL */
	bool renamed;       /* output_finish_all moved it into place */
	PState state;
} Pending;

static Pending pending[16];
static int npending;
static bool io_failed;

bool
output_io_failed(void)
{
	return io_failed;
}

static void
io_error(const char *path, int err)
{
	io_failed = true;
	diag_error(loc_none, "cannot write '%s': %s", path, strerror(err));
}

/* A new pending output, or NULL after an error: a destination that is a
 * directory would only fail at the rename, after other work. */
static Pending *
add(const char *dest)
{
	struct stat st;

	if (stat(dest, &st) == 0 && S_ISDIR(st.st_mode)) {
		io_error(dest, EISDIR);
		return NULL;
	}
	if (npending == (int)(sizeof pending / sizeof pending[0]))
		diag_fatal("too many output files");
	Pending *p = &pending[npending++];
	size_t n = strlen(dest) + 32;
	p->dest = arena_strdup(perm, dest);
	p->tmp = arena_alloc(perm, n);
	snprintf(p->tmp, n, "%s.tmp%ld", dest, (long)getpid());
	p->state = P_OPEN;
	return p;
}

FILE *
output_open(const char *path, bool binary)
{
	if (strcmp(path, "-") == 0)
		return stdout;
	Pending *p = add(path);
	if (!p)
		return NULL;
	p->fp = fopen(p->tmp, binary ? "wb" : "w");
	if (!p->fp) {
		io_error(path, errno);
		npending--;
		return NULL;
	}
	return p->fp;
}

bool
output_commit(FILE *fp)
{
	if (fp == stdout) {
		if (fflush(stdout) != 0) {
			io_error("<stdout>", errno);
			return false;
		}
		return true;
	}
	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		if (p->fp != fp || p->state != P_OPEN)
			continue;
		int bad = ferror(fp);
		int err = errno;
		if (fclose(fp) != 0 || bad) {
			io_error(p->dest, bad ? (err ? err : EIO) : errno);
			p->fp = NULL;
			remove(p->tmp);
			p->state = P_DONE;
			return false;
		}
		p->fp = NULL;
		p->state = P_READY;
		return true;
	}
	return false;
}

const char *
output_temp_path(const char *path)
{
	Pending *p = add(path);
	return p ? p->tmp : NULL;
}

bool
output_commit_path(const char *tmp)
{
	for (int i = 0; i < npending; i++)
		if (pending[i].state == P_OPEN && strcmp(pending[i].tmp, tmp) == 0) {
			pending[i].state = P_READY;
			return true;
		}
	return false;
}

const char *
output_scratch(const char *path)
{
	for (int i = 0; i < npending; i++)
		if (pending[i].state == P_READY && strcmp(pending[i].dest, path) == 0) {
			pending[i].state = P_SCRATCH;
			return pending[i].tmp;
		}
	return NULL;
}

/* Puts back the destinations of pending[0..n) that were already renamed
 * into place: the old file where there was one, else nothing. */
static void
roll_back(int n)
{
	for (int i = 0; i < n; i++) {
		Pending *p = &pending[i];
		if (!p->renamed)
			continue;
		if (p->bak)
			rename(p->bak, p->dest);
		else
			remove(p->dest);
	}
}

bool
output_finish_all(void)
{
	struct stat st;

	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		p->bak = NULL;
		if (p->state != P_READY || lstat(p->dest, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		size_t n = strlen(p->dest) + 32;
		p->bak = arena_alloc(perm, n);
		snprintf(p->bak, n, "%s.tmp%ld.old", p->dest, (long)getpid());
		if (link(p->dest, p->bak) != 0)
			p->bak = NULL;   /* no hard links here: no way back */
	}
	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		if (p->state != P_READY)
			continue;
		if (rename(p->tmp, p->dest) != 0) {
			io_error(p->dest, errno);
			roll_back(i);
			output_abort_all();
			for (int j = 0; j < npending; j++)
				if (pending[j].bak)
					remove(pending[j].bak);
			return false;
		}
		p->state = P_DONE;
		p->renamed = true;
	}
	for (int i = 0; i < npending; i++) {
		if (pending[i].bak)
			remove(pending[i].bak);
		if (pending[i].state == P_SCRATCH) {
			remove(pending[i].tmp);
			pending[i].state = P_DONE;
		}
	}
	return true;
}

void
output_abort_all(void)
{
	for (int i = 0; i < npending; i++) {
		Pending *p = &pending[i];
		if (p->state == P_DONE)
			continue;
		if (p->fp)
			fclose(p->fp);
		p->fp = NULL;
		remove(p->tmp);
		p->state = P_DONE;
	}
}
