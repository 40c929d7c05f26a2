/* blob.c: named byte ranges held in memory for constant tensors.
 *
 * A front end that builds a .tx program (onnx/) registers each weight it
 * does not want to write to a file; the program names it with
 * `const w: f32[...] = data("NAME");` and sema/consts.c finds it here.
 */
#include <string.h>

#include "lang.h"

typedef struct {
	const char *name;     /* interned */
	const void *data;
	size_t len;
} Blob;

static Blob *blobs;
static int nblobs, capblobs;

void
blob_add(const char *name, const void *data, size_t len)
{
	const char *n = intern_cstr(name);
	for (int i = 0; i < nblobs; i++)
		if (blobs[i].name == n) {
			blobs[i].data = data;
			blobs[i].len = len;
			return;
		}
	Blob *b = ARENA_PUSH(perm, blobs, nblobs, capblobs);
	b->name = n;
	b->data = data;
	b->len = len;
}

bool
blob_find(const char *name, const void **data, size_t *len)
{
	const char *n = intern_cstr(name);
	for (int i = 0; i < nblobs; i++)
		if (blobs[i].name == n) {
			*data = blobs[i].data;
			*len = blobs[i].len;
			return true;
		}
	return false;
}
