/* source.c: the table of source buffers and offset-to-line mapping.
 *
 * Files are read whole and NUL-terminated (the lexer relies on it).  A Loc
 * stores a file id and byte offsets; lines and columns are computed only
 * when a diagnostic is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lang.h"

static SrcFile *files;   /* files[0] is unused: id 0 means "no location" */
static int nfiles, capfiles;

const Loc loc_none;

uint32_t
source_add(const char *name, const char *text, size_t len)
{
	if (!perm)
		perm = arena_new();
	if (nfiles == 0) {
		SrcFile *zero = ARENA_PUSH(perm, files, nfiles, capfiles);
		zero->name = "<none>";
		zero->text = "";
	}
	SrcFile *f = ARENA_PUSH(perm, files, nfiles, capfiles);
	f->name = arena_strdup(perm, name);
	f->text = arena_strndup(perm, text, len);
	f->len = len;
	return (uint32_t)(nfiles - 1);
}

uint32_t
source_load(const char *path)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *fp = is_stdin ? stdin : fopen(path, "rb");
	if (!fp) {
		diag_error(loc_none, "cannot open '%s': %s", path, strerror(errno));
		return 0;
	}
	struct stat st;
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!is_stdin)
			fclose(fp);
		diag_error(loc_none, "cannot read '%s': %s", path, strerror(EISDIR));
		return 0;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		diag_fatal("out of memory");
	for (;;) {
		if (len == cap) {
			cap *= 2;
			char *n = realloc(buf, cap);
			if (!n)
				diag_fatal("out of memory");
			buf = n;
		}
		size_t got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	int err = ferror(fp) ? (errno ? errno : EIO) : 0;
	if (!is_stdin)
		fclose(fp);
	if (err) {
		free(buf);
		diag_error(loc_none, "cannot read '%s': %s", path, strerror(err));
		return 0;
	}
	if (len > 0x7fffffffu) {
		free(buf);
		diag_error(loc_none, "'%s' is too large (over 2 GiB)", path);
		return 0;
	}
	uint32_t id = source_add(is_stdin ? "<stdin>" : path, buf, len);
	free(buf);
	return id;
}

const SrcFile *
source_get(uint32_t id)
{
	if (id == 0 || (int)id >= nfiles)
		return NULL;
	return &files[id];
}

/* The offsets where lines start, made once per file so that a run with
 * thousands of diagnostics stays linear. */
static void
build_lines(SrcFile *f)
{
	int n = 1;
	for (size_t i = 0; i < f->len; i++)
		n += f->text[i] == '\n';
	f->lines = arena_alloc(perm, sizeof *f->lines * (size_t)n);
	f->lines[0] = 0;
	int k = 1;
	for (size_t i = 0; i < f->len; i++)
		if (f->text[i] == '\n')
			f->lines[k++] = (uint32_t)(i + 1);
	f->nlines = n;
}

void
source_linecol(uint32_t id, uint32_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	if (id == 0 || (int)id >= nfiles)
		return;
	SrcFile *f = &files[id];
	if (off > f->len)
		off = (uint32_t)f->len;
	if (!f->lines)
		build_lines(f);
	int lo = 0, hi = f->nlines - 1;   /* the last line start <= off */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (f->lines[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	*line = lo + 1;
	*col = (int)(off - f->lines[lo]) + 1;
}

Loc
loc_span(Loc a, Loc b)
{
	if (a.file == 0)
		return b;
	if (b.file == 0 || b.file != a.file)
		return a;
	Loc r = a;
	if (b.end > r.end)
		r.end = b.end;
	if (b.begin < r.begin)
		r.begin = b.begin;
	return r;
}
