/* consts.c: the bytes of constant tensors (tx.5 CONSTANTS).
 *
 * `const w: f32[64, 3, 7, 7] = file("w.bin");` holds a tensor whose
 * values are known at compile time: its extents must be integer literals,
 * and its bytes (little-endian elements, row-major) are read here from
 * the file, relative to the directory of the .tx file that names it, from
 * byte `file("w.bin", OFFSET)` on; or, written `data("NAME")`, found among
 * the byte ranges a front end registered in memory (lang/blob.c: the ONNX
 * importer's weights).  A file that is missing or shorter than the tensor
 * is an error naming the path and both sizes; a longer one is fine (a
 * constant may be one slice of a larger file).  The targets put cdata in
 * the object as read-only data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sema.h"

/* The path as the program wrote it, taken relative to its file's folder. */
static const char *
full_path(Tensor *t)
{
	if (t->cpath[0] == '/' || !t->loc.file)
		return t->cpath;
	const SrcFile *f = source_get(t->loc.file);
	const char *slash = f && f->name ? strrchr(f->name, '/') : NULL;
	if (!slash)
		return t->cpath;
	return arena_printf(perm, "%.*s/%s", (int)(slash - f->name), f->name, t->cpath);
}

/* The tensor's size in bytes, or -1 after an error. */
static int64_t
const_bytes(Tensor *t)
{
	int64_t n = (type_bits(t->elem) + 7) / 8;
	for (int d = 0; d < t->ndims; d++) {
		Expr *e = t->shape[d];
		if (e->kind != EXPR_INT) {
			diag_error(e->loc, "extent %d of constant '%s' must be an integer literal", d,
			    t->name);
			return -1;
		}
		if (e->ival < 0 || (e->ival > 0 && n > ((int64_t)1 << 31) / e->ival)) {
			diag_error(e->loc, "constant '%s' is too large (more than 2 GiB)",
			    t->name);
			return -1;
		}
		n *= e->ival;
	}
	return n;
}

static void
load_file(Tensor *t, int64_t need)
{
	const char *path = full_path(t);
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		diag_error(t->cpath_loc, "constant '%s': cannot open '%s': %s", t->name, path,
		    strerror(errno));
		return;
	}
	long have = -1;
	if (fseek(fp, 0, SEEK_END) == 0)
		have = ftell(fp);
	if (have < 0) {
		diag_error(t->cpath_loc, "constant '%s': cannot read '%s': %s", t->name, path,
		    strerror(errno));
		fclose(fp);
		return;
	}
	if (t->coffset < 0 || have < t->coffset || have - t->coffset < need) {
		diag_error(t->cpath_loc, "constant '%s': '%s' is too short: %s%s needs %lld "
		    "bytes from offset %lld, the file has %lld bytes (%lld from that offset)", t->name,
		    path, type_name(t->elem), callexpr_shape_text(t->shape, t->ndims), (long long)need,
		    (long long)t->coffset, (long long)have,
		    (long long)(have > t->coffset ? have - t->coffset : 0));
		fclose(fp);
		return;
	}
	unsigned char *buf = arena_alloc(perm, (size_t)need + 1);
	if (fseek(fp, (long)t->coffset, SEEK_SET) != 0 ||
	    fread(buf, 1, (size_t)need, fp) != (size_t)need) {
		diag_error(t->cpath_loc, "constant '%s': cannot read '%s': %s", t->name, path,
		    ferror(fp) ? strerror(errno) : "unexpected end of file");
		fclose(fp);
		return;
	}
	fclose(fp);
	t->cdata = buf;
	t->cbytes = (size_t)need;
}

static void
load_memory(Tensor *t, int64_t need)
{
	const void *data;
	size_t len;
	if (!blob_find(t->cpath, &data, &len)) {
		diag_error(t->cpath_loc, "constant '%s': no data named '%s' is held in memory "
		    "(data(\"NAME\") is for programs a front end builds; use file(\"PATH\"))",
		    t->name, t->cpath);
		return;
	}
	if ((uint64_t)len < (uint64_t)need) {
		diag_error(t->cpath_loc, "constant '%s': data '%s' is too short: it needs %lld "
		    "bytes, it has %llu", t->name, t->cpath, (long long)need,
		    (unsigned long long)len);
		return;
	}
	t->cdata = data;
	t->cbytes = (size_t)need;
}

/* Constants whose load failed (reported once). */
static Tensor **failed;
static int nfailed, capfailed;

bool
consts_load(Tensor *t)
{
	if (!t->is_const || t->cdata)
		return t->cdata != NULL;
	for (int i = 0; i < nfailed; i++)
		if (failed[i] == t)
			return false;
	int64_t need = const_bytes(t);
	if (need >= 0 && t->cmem)
		load_memory(t, need);
	else if (need >= 0)
		load_file(t, need);
	if (!t->cdata)
		*ARENA_PUSH(perm, failed, nfailed, capfailed) = t;
	return t->cdata != NULL;
}

void
consts_kernel(Kernel *k)
{
	for (int i = 0; i < k->ntensors; i++)
		consts_load(k->tensors[i]);
}
