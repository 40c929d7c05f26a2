/* ops.c: the ONNX operators that are not element-wise, as .tx stages.
 *
 * Shapes are computed here as extents (numbers, or text over the size
 * parameters).  MatMul of two matrices calls stdlib matmul; Gemm of the
 * usual Linear form (B transposed, a bias vector) calls dense; Softmax of
 * a matrix's rows calls softmax; a 2-D Conv of one group with symmetric
 * padding calls conv2d_nchw_general (nn.c).  Every other case is
 * written out as rules.  BatchNormalization with known statistics is
 * folded into the Conv before it, else into a scale and a shift per
 * channel; with statistics given at run time it is a stage (nn.c).
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

static int64_t
norm(int64_t a, int r)
{
	return a < 0 ? a + r : a;
}

/* the ints of attribute name, or of input i where later opsets moved it */
static int64_t *
ints_of(Graph *g, OnnxNode *n, const char *name, int i, int *cnt, bool *present)
{
	OnnxAttr *a = model_attr(n, name);
	*present = true;
	if (a) {
		*cnt = a->nints;
		return a->ints;
	}
	Val *v = emit_in(g, n, i);
	int64_t *x = v ? graph_ints(v, cnt) : NULL;
	if (!x)
		*present = false;
	return x;
}

/* y[...] = x[...] with the same elements in row-major order: the leading
 * and trailing extents the two shapes share map axis to axis; the axes
 * between are a flat index over y's middle extents, divided and reduced
 * over x's (strides in sym.c's form, so the bounds stay provable) */
static void
reshape_rule(Graph *g, Val *x, Val *y)
{
	int pre = 0, suf = 0;
	while (pre < x->ndims && pre < y->ndims && !strcmp(x->dim[pre], y->dim[pre]))
		pre++;
	while (suf < x->ndims - pre && suf < y->ndims - pre &&
	    !strcmp(x->dim[x->ndims - 1 - suf], y->dim[y->ndims - 1 - suf]))
		suf++;
	const char **idx = arena_alloc(perm, (size_t)(x->ndims + 1) * sizeof *idx);
	for (int d = 0; d < pre; d++)
		idx[d] = arena_printf(perm, "_a%d", d);
	for (int k = 0; k < suf; k++)
		idx[x->ndims - 1 - k] = arena_printf(perm, "_a%d", y->ndims - 1 - k);
	const char *lin = NULL, *stride = "1";
	for (int d = y->ndims - 1 - suf; d >= pre; d--) {
		const char *t = !strcmp(stride, "1") ? arena_printf(perm, "_a%d", d) :
		    arena_printf(perm, "_a%d * %s", d, stride);
		lin = lin ? arena_printf(perm, "%s + %s", t, lin) : t;
		stride = sym_text(sym_parse(arena_printf(perm, "%s * %s", stride, y->dim[d])));
	}
	lin = lin ? arena_printf(perm, "(%s)", lin) : "0";
	stride = "1";
	for (int d = x->ndims - 1 - suf; d >= pre; d--) {
		const char *q = !strcmp(stride, "1") ? lin : arena_printf(perm, "%s / %s", lin, stride);
		idx[d] = x->dimv[d] == 1 ? "0" : arena_printf(perm, "(%s) %% %s", q, x->dim[d]);
		stride = sym_text(sym_parse(arena_printf(perm, "%s * %s", stride, x->dim[d])));
	}
	emit_rule(g, y, emit_at(g, x, idx));
}

static bool
reshape_to(Graph *g, OnnxNode *n, Val *x, int r, const int64_t *dims, const char **texts)
{
	Val *y = emit_result(g, n, 0, x->dtype, r);
	for (int d = 0; d < r; d++)
		graph_set_dim(y, d, dims[d], texts ? texts[d] : NULL);
	if (graph_numel(x) >= 0 && graph_numel(y) >= 0 && graph_numel(x) != graph_numel(y)) {
		graph_error(g, n, "%lld elements cannot take the shape %s", (long long)graph_numel(x),
		    graph_shape(y));
		return false;
	}
	reshape_rule(g, x, y);
	return true;
}

static bool
op_reshape(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	int64_t dims[8];
	const char *texts[8];
	const char *op = n->op;
	(void)unsupported;
	if (!strcmp(op, "Flatten")) {
		int64_t axis = norm(model_attr_int(n, "axis", 1), x->ndims);
		if (axis < 0 || axis > x->ndims) {
			graph_error(g, n, "axis %lld is out of range", (long long)axis);
			return false;
		}
		for (int k = 0; k < 2; k++) {
			int64_t v = 1;
			const char *t = "1";
			for (int d = k ? (int)axis : 0; d < (k ? x->ndims : axis); d++) {
				v = v >= 0 && x->dimv[d] >= 0 ? graph_mul(v, x->dimv[d]) : -1;
				t = arena_printf(perm, "%s * %s", t, x->dim[d]);
			}
			dims[k] = v;
			texts[k] = arena_printf(perm, "(%s)", t);
		}
		return reshape_to(g, n, x, 2, dims, texts);
	}
	if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
		bool un = op[0] == 'U', present;
		int na = 0;
		int64_t *ax = ints_of(g, n, "axes", 1, &na, &present);
		int r = un ? x->ndims + na : x->ndims;
		bool mark[16] = { 0 };
		if (r > 8) {
			graph_error(g, n, "more than 8 dimensions");
			return false;
		}
		for (int i = 0; i < na; i++) {
			int64_t k = norm(ax[i], r);
			if (k < 0 || k >= r || mark[k]) {
				graph_error(g, n, "axis %lld is out of range or repeated", (long long)ax[i]);
				return false;
			}
			mark[k] = true;
		}
		int k = 0, j = 0;
		for (int d = 0; d < r; d++) {
			if (un) {
				dims[k] = mark[d] ? 1 : x->dimv[j];
				texts[k++] = mark[d] ? "1" : x->dim[j++];
			} else if (!(na ? mark[d] : x->dimv[d] == 1)) {
				dims[k] = x->dimv[d];
				texts[k++] = x->dim[d];
			}
		}
		return reshape_to(g, n, x, k, dims, texts);
	}
	/* Reshape: the shape must be known, as numbers or expressions of the
	 * sizes (fold.c); 0 copies an extent, -1 is inferred */
	int ns;
	Sym *s = graph_syms(emit_in(g, n, 1), &ns);
	if (!s) {
		graph_error(g, n, "its shape must be known when txc compiles (a constant or a "
		    "shape computation of the input's extents)");
		return false;
	}
	if (ns > 8) {
		graph_error(g, n, "more than 8 dimensions");
		return false;
	}
	int infer = -1;
	int64_t known = 1;
	for (int d = 0; d < ns; d++) {
		texts[d] = s[d].t;
		dims[d] = s[d].t ? -1 : s[d].v;
		if (s[d].t)
			continue;
		if (s[d].v == 0 && !model_attr_int(n, "allowzero", 0) && d < x->ndims) {
			dims[d] = x->dimv[d];
			texts[d] = x->dim[d];
		}
		if (s[d].v == -1 && infer >= 0) {
			graph_error(g, n, "two extents are -1");
			return false;
		}
		if (s[d].v == -1)
			infer = d;
		else if (dims[d] >= 0)
			known = graph_mul(known, dims[d]);
		else if (!texts[d]) {
			graph_error(g, n, "bad extent %lld", (long long)s[d].v);
			return false;
		}
	}
	bool symbolic = false;
	for (int d = 0; d < ns; d++)
		symbolic = symbolic || (d != infer && dims[d] < 0);
	if (infer >= 0) {
		int64_t total = graph_numel(x);
		if (total < 0 || symbolic) {
			const char *t = "1";
			for (int d = 0; d < x->ndims; d++)
				t = arena_printf(perm, "%s * %s", t, x->dim[d]);
			const char *k = "1";
			for (int d = 0; d < ns; d++)
				if (d != infer)
					k = arena_printf(perm, "%s * %s", k, texts[d] ? texts[d] :
					    arena_printf(perm, "%lld", (long long)dims[d]));
			dims[infer] = -1;
			texts[infer] = arena_printf(perm, "((%s) / (%s))", t, k);
		} else {
			dims[infer] = known ? total / known : 0;
		}
	}
	return reshape_to(g, n, x, ns, dims, texts);
}

static bool
op_transpose(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	OnnxAttr *a = model_attr(n, "perm");
	int r = x->ndims;
	int64_t perm_[8];
	(void)unsupported;
	for (int d = 0; d < r; d++)
		perm_[d] = a && a->nints == r ? a->ints[d] : r - 1 - d;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	const char *idx[8] = { 0 };
	for (int d = 0; d < r; d++) {
		if (perm_[d] < 0 || perm_[d] >= r) {
			graph_error(g, n, "bad perm");
			return false;
		}
		if (idx[perm_[d]]) {
			graph_error(g, n, "perm repeats axis %lld", (long long)perm_[d]);
			return false;
		}
		graph_set_dim(y, d, x->dimv[perm_[d]], x->dim[perm_[d]]);
		idx[perm_[d]] = arena_printf(perm, "_a%d", d);
	}
	emit_rule(g, y, emit_at(g, x, idx));
	return true;
}

static bool
op_concat(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	int r = x->ndims;
	int64_t axis = norm(model_attr_int(n, "axis", 0), r);
	(void)unsupported;
	if (axis < 0 || axis >= r) {
		graph_error(g, n, "axis out of range");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	int64_t tv = 0;
	const char *tt = "0";
	for (int i = 0; i < n->nin; i++) {
		Val *v = emit_in(g, n, i);
		if (!v || v->ndims != r) {
			graph_error(g, n, "inputs of different ranks");
			return false;
		}
		tv = tv >= 0 && v->dimv[axis] >= 0 ? tv + v->dimv[axis] : -1;
		tt = arena_printf(perm, "%s + %s", tt, v->dim[axis]);
	}
	graph_set_dim(y, (int)axis, tv, arena_printf(perm, "(%s)", tt));
	/* _a >= s2 ? x2[...] : (_a >= s1 ? x1[...] : x0[...]) */
	const char *e = NULL, *start = "0";
	for (int i = 0; i < n->nin; i++) {
		Val *v = emit_in(g, n, i);
		const char *idx[8];
		for (int d = 0; d < r; d++)
			idx[d] = d == axis ? arena_printf(perm, "_a%d - (%s)", d, start) :
			    arena_printf(perm, "_a%d", d);
		const char *read = emit_at(g, v, idx);
		e = !e ? read : arena_printf(perm, "_a%d >= %s ? %s : (%s)", (int)axis, start, read, e);
		start = arena_printf(perm, "%s + %s", start, v->dim[axis]);
	}
	emit_rule(g, y, e);
	return true;
}

bool
ops_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled)
{
	static const struct { const char *op; bool (*fn)(Graph *, OnnxNode *, bool *); } table[] = {
		{ "Reshape", op_reshape }, { "Flatten", op_reshape }, { "Squeeze", op_reshape },
		{ "Unsqueeze", op_reshape }, { "Transpose", op_transpose }, { "Concat", op_concat },
		{ "MatMul", nn_matmul }, { "Gemm", nn_gemm }, { "Conv", nn_conv },
		{ "MaxPool", nn_pool }, { "AveragePool", nn_pool }, { "GlobalAveragePool", nn_gpool },
		{ "GlobalMaxPool", nn_gpool }, { "BatchNormalization", nn_bn },
		{ "Softmax", nn_softmax }, { "LogSoftmax", nn_softmax }, { "ReduceMean", nn_reduce },
		{ "ReduceSum", nn_reduce }, { "ReduceMax", nn_reduce }, { "ReduceMin", nn_reduce },
		{ "ReduceProd", nn_reduce }, { "ReduceL1", nn_reduce }, { "ReduceL2", nn_reduce },
		{ "ReduceSumSquare", nn_reduce }, { "ReduceLogSum", nn_reduce },
		{ "ReduceLogSumExp", nn_reduce },
		{ "Resize", up_resize }, { "Upsample", up_resize }, { "ConvTranspose", up_convtranspose },
	};
	bool ok = norm_node(g, n, unsupported, handled);
	if (*handled)
		return ok;
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (!strcmp(table[i].op, n->op)) {
			*handled = true;
			return table[i].fn(g, n, unsupported);
		}
	ok = extra_node(g, n, unsupported, handled);
	if (*handled)
		return ok;
	return index_node(g, n, unsupported, handled);
}
