/* harness.c: runs a model compiled by txc on one test set of ONNX's node
 * tests and compares its outputs (tests/onnx/nodes.sh builds it with the
 * object).
 *
 *     harness DIR NIN NOUT     DIR/input_I.pb, DIR/output_I.pb
 *
 * The entry point `model` takes the inputs then the outputs (static
 * shapes: no size parameters).  Exit 0 when every output is within
 * 1e-4 of the reference (relative to max(1, |reference|)), 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

typedef int (*Fn)(void *, ...);
int model();

static unsigned char *copies[16];   /* the files' bytes: the tensors point into them */
static int ncopies;

static OnnxTensor
load(const char *dir, const char *kind, int i)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s_%d.pb", dir, kind, i);
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	static unsigned char buf[1 << 26];
	size_t n = fread(buf, 1, sizeof buf, fp);
	fclose(fp);
	unsigned char *copy = malloc(n + 1);
	if (ncopies < 16)
		copies[ncopies++] = copy;
	memcpy(copy, buf, n);
	OnnxTensor t;
	char *err;
	if (!model_read_tensor(copy, n, &t, &err)) {
		fprintf(stderr, "%s: %s\n", path, err ? err : "bad tensor");
		exit(2);
	}
	return t;
}

static double
elem(const OnnxTensor *t, size_t i)
{
	switch (t->dtype) {
	case OT_FLOAT: { float f; memcpy(&f, t->data + 4 * i, 4); return f; }
	case OT_DOUBLE: { double d; memcpy(&d, t->data + 8 * i, 8); return d; }
	case OT_INT64: { int64_t v; memcpy(&v, t->data + 8 * i, 8); return (double)v; }
	case OT_INT32: { int32_t v; memcpy(&v, t->data + 4 * i, 4); return v; }
	case OT_BOOL: case OT_UINT8: return t->data[i];
	default: return 0;
	}
}

int
main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	perm = arena_new();
	int nin = atoi(argv[2]), nout = atoi(argv[3]);
	if (nin + nout > 8 || nin < 0 || nout < 1)
		return 2;
	void *a[8] = { 0 };
	OnnxTensor ref[8];
	for (int i = 0; i < nin; i++) {
		OnnxTensor t = load(argv[1], "input", i);
		a[i] = malloc(t.len + 64);
		memcpy(a[i], t.data, t.len);
	}
	for (int i = 0; i < nout; i++) {
		ref[i] = load(argv[1], "output", i);
		a[nin + i] = calloc(1, ref[i].len + 64);
	}
	int rc = ((int (*)(void *, void *, void *, void *, void *, void *, void *, void *))model)(
	    a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
	if (rc) {
		printf("model returned %d\n", rc);
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < nout; i++) {
		OnnxTensor got = ref[i];
		got.data = a[nin + i];
		size_t n = ref[i].len / (size_t)model_elem_size(ref[i].dtype);
		for (size_t k = 0; k < n; k++) {
			double x = elem(&got, k), y = elem(&ref[i], k);
			if (isnan(y) ? !isnan(x) : !(fabs(x - y) <= 1e-4 * fmax(1.0, fabs(y)))) {
				if (bad++ < 5)
					printf("output %d element %zu: %g, expected %g\n", i, k, x, y);
			}
		}
	}
	for (int i = 0; i < nin + nout; i++)
		free(a[i]);
	return bad != 0;
}
