/* fold.c: the values of an ONNX graph known when txc compiles, folded at
 * import.
 *
 * Exporters write a model's shape arithmetic as nodes: PyTorch's
 * x.view(x.size(0), -1) is Shape, Gather, Unsqueeze, Concat and Reshape.
 * Those nodes never become stages: a value whose elements are numbers
 * (initializers, Constant, and what is computed from them) is kept as
 * bytes, and a small integer value that depends on a dynamic dimension
 * (Shape of an input [N, 3, H, W]) is kept as expressions of the size
 * parameters (sym.c), so that Gather, Slice, Concat, Unsqueeze, Squeeze,
 * Cast, Reshape, Flatten, Identity, the integer arithmetic (Add, Sub,
 * Mul, Div, Mod, Min, Max), Equal, Less, Greater, Where, Size,
 * ConstantOfShape and Range of such values give values of the same kind.
 * Their consumers (Reshape, Expand, Slice, ConstantOfShape, Range) read
 * the shapes they give; a stage that reads one gets a stage computing
 * the expressions (graph_use).
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

enum { MAXSYMS = 4096 };     /* elements of a value folded */

static Val *
known(Graph *g, OnnxNode *n, int dtype, int ndims, const int64_t *dims, const void *data,
    size_t len)
{
	Val *v = graph_new_val(g, n->out[0], dtype, ndims);
	for (int d = 0; d < ndims; d++)
		graph_set_dim(v, d, dims[d], NULL);
	v->cdata = data;
	v->clen = len;
	v->defined = true;
	return v;
}

/* the result of n: bytes when every element is a number, else the
 * expressions; dims are numbers */
static Val *
result(Graph *g, OnnxNode *n, int dtype, int ndims, const int64_t *dims, const Sym *s, int cnt)
{
	bool num = true;
	for (int i = 0; i < cnt; i++)
		num = num && !s[i].t;
	if (!num) {
		Val *v = known(g, n, dtype, ndims, dims, NULL, 0);
		v->sym = arena_alloc(perm, (size_t)(cnt + 1) * sizeof *v->sym);
		memcpy(v->sym, s, (size_t)cnt * sizeof *s);
		v->nsym = cnt;
		return v;
	}
	int size = model_elem_size(dtype);
	unsigned char *p = arena_alloc(perm, (size_t)cnt * (size_t)size + 8);
	for (int i = 0; i < cnt; i++) {
		unsigned char *q = p + (size_t)i * (size_t)size;
		int64_t x = s[i].v;
		if (dtype == OT_FLOAT) {
			float f = (float)x;
			memcpy(q, &f, 4);
		} else if (dtype == OT_DOUBLE) {
			double f = (double)x;
			memcpy(q, &f, 8);
		} else if (size == 8) {
			memcpy(q, &x, 8);
		} else if (size == 4) {
			int32_t y = (int32_t)x;
			memcpy(q, &y, 4);
		} else if (size == 2) {
			int16_t y = (int16_t)x;
			memcpy(q, &y, 2);
		} else {
			*q = (unsigned char)x;
		}
	}
	return known(g, n, dtype, ndims, dims, p, (size_t)cnt * (size_t)size);
}

static int64_t
norm_axis(int64_t a, int r)
{
	return a < 0 ? a + r : a;
}

static Sym *
syms_in(Graph *g, OnnxNode *n, int i, int *cnt)
{
	return i < n->nin && *n->in[i] ? graph_syms(graph_val(g, n->in[i]), cnt) : NULL;
}

/* the ints of attribute name, or of input i (known numbers), or NULL */
static int64_t *
ints_arg(Graph *g, OnnxNode *n, const char *name, int i, int *cnt, bool *given)
{
	OnnxAttr *a = model_attr(n, name);
	*given = true;
	if (a) {
		*cnt = a->nints;
		return a->ints;
	}
	if (i >= n->nin || !*n->in[i]) {
		*given = false;
		*cnt = 0;
		return NULL;
	}
	return graph_ints(graph_val(g, n->in[i]), cnt);
}

static bool
fold_constant(Graph *g, OnnxNode *n, bool *failed)
{
	OnnxAttr *a = model_attr(n, "value");
	if (a && a->t) {
		known(g, n, a->t->dtype, a->t->ndims, a->t->dims, a->t->data, a->t->len);
		return true;
	}
	if ((a = model_attr(n, "value_float"))) {
		float *f = arena_alloc(perm, 4);
		*f = (float)a->f;
		known(g, n, OT_FLOAT, 0, NULL, f, 4);
		return true;
	}
	if ((a = model_attr(n, "value_int"))) {
		Sym s = sym_num(a->i);
		result(g, n, OT_INT64, 0, NULL, &s, 1);
		return true;
	}
	if ((a = model_attr(n, "value_ints"))) {
		int64_t d = a->nints;
		known(g, n, OT_INT64, 1, &d, a->ints, (size_t)a->nints * 8);
		return true;
	}
	if ((a = model_attr(n, "value_floats"))) {
		int64_t d = a->nfloats;
		known(g, n, OT_FLOAT, 1, &d, a->floats, (size_t)a->nfloats * 4);
		return true;
	}
	graph_error(g, n, "a Constant of a kind txc does not take");
	*failed = true;
	return true;
}

/* Shape and Size: the extents of x */
static bool
fold_shape(Graph *g, OnnxNode *n, Val *x)
{
	int64_t s = 0, e = x->ndims;
	if (n->op[1] == 'h') {
		s = norm_axis(model_attr_int(n, "start", 0), x->ndims);
		e = norm_axis(model_attr_int(n, "end", x->ndims), x->ndims);
		s = s < 0 ? 0 : s > x->ndims ? x->ndims : s;
		e = e < s ? s : e > x->ndims ? x->ndims : e;
	}
	Sym out[8], prod = sym_num(1);
	for (int64_t d = s; d < e; d++) {
		out[d - s] = x->dimv[d] >= 0 ? sym_num(x->dimv[d]) : sym_parse(x->dim[d]);
		bool ok;
		prod = sym_bin('*', prod, out[d - s], &ok);
		if (!ok)
			return false;
	}
	int64_t cnt = e - s;
	if (n->op[1] == 'i')
		result(g, n, OT_INT64, 0, NULL, &prod, 1);
	else
		result(g, n, OT_INT64, 1, &cnt, out, (int)cnt);
	return true;
}

/* Squeeze, Unsqueeze, Reshape, Flatten, Identity, Cast of a known value:
 * the same elements, another shape or type */
static bool
fold_reshape(Graph *g, OnnxNode *n, Val *x, Sym *xs, int nx)
{
	const char *op = n->op;
	int64_t dims[8];
	int r = 0, dtype = x->dtype;
	if (!strcmp(op, "Identity") || !strcmp(op, "Dropout") || !strcmp(op, "Cast")) {
		if (op[0] == 'C') {
			dtype = (int)model_attr_int(n, "to", OT_INT64);
			if (dtype != OT_INT64 && dtype != OT_INT32 && dtype != OT_FLOAT &&
			    dtype != OT_DOUBLE && dtype != OT_BOOL)
				return false;
			if (dtype == OT_BOOL)
				for (int i = 0; i < nx; i++) {
					if (xs[i].t)
						return false;
					xs[i] = sym_num(xs[i].v != 0);
				}
		}
		if (x->ndims > 8)
			return false;
		r = x->ndims;
		if (r)
			memcpy(dims, x->dimv, (size_t)r * sizeof *dims);
	} else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
		bool un = op[0] == 'U', given, mark[8] = { 0 };
		int na = 0;
		int64_t *ax = ints_arg(g, n, "axes", 1, &na, &given);
		if (given && !ax)
			return false;
		r = un ? x->ndims + na : x->ndims;
		if (r > 8 || na > 8)
			return false;
		for (int i = 0; i < na; i++) {
			int64_t k = norm_axis(ax[i], r);
			if (k < 0 || k >= r || mark[k])
				return false;
			mark[k] = true;
		}
		int k = 0, j = 0;
		for (int d = 0; d < r; d++) {
			if (un)
				dims[k++] = mark[d] ? 1 : x->dimv[j++];
			else if (!(na ? mark[d] : x->dimv[d] == 1))
				dims[k++] = x->dimv[d];
		}
		r = k;
	} else if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape")) {
		/* of a vector or a scalar, to a vector (shape values) */
		if (x->ndims > 1)
			return false;
		if (op[0] == 'R') {
			int ns;
			Sym *s = syms_in(g, n, 1, &ns);
			if (!s || ns != 1 || s[0].t || (s[0].v != -1 && s[0].v != nx))
				return false;
		}
		r = 1;
		dims[0] = nx;
		if (op[0] == 'F') {
			r = 2;
			dims[0] = model_attr_int(n, "axis", 1) == 0 ? 1 : nx;
			dims[1] = nx / (dims[0] ? dims[0] : 1);
		}
	} else {
		return false;
	}
	result(g, n, dtype, r, dims, xs, nx);
	return true;
}

static bool
fold_gather(Graph *g, OnnxNode *n, Val *x, Sym *xs, int nx, bool *failed)
{
	Val *iv = graph_val(g, n->in[1]);
	int ni;
	int64_t *ii = graph_ints(iv, &ni);
	if (!ii || x->ndims != 1 || norm_axis(model_attr_int(n, "axis", 0), 1) != 0 ||
	    iv->ndims > 7)
		return false;
	Sym *out = arena_alloc(perm, (size_t)(ni + 1) * sizeof *out);
	for (int i = 0; i < ni; i++) {
		int64_t k = norm_axis(ii[i], nx);
		if (k < 0 || k >= nx) {
			graph_error(g, n, "index %lld is out of range (%d values)", (long long)ii[i], nx);
			*failed = true;
			return true;
		}
		out[i] = xs[k];
	}
	result(g, n, x->dtype, iv->ndims, iv->dimv, out, ni);
	return true;
}

static bool
fold_concat(Graph *g, OnnxNode *n, Val *x)
{
	Sym *out = NULL;
	int cnt = 0, cap = 0;
	for (int i = 0; i < n->nin; i++) {
		int k;
		Sym *v = syms_in(g, n, i, &k);
		Val *vi = graph_val(g, n->in[i]);
		if (!v || vi->ndims != 1 || cnt + k > MAXSYMS)
			return false;
		for (int j = 0; j < k; j++)
			*ARENA_PUSH(perm, out, cnt, cap) = v[j];
	}
	int64_t d = cnt;
	result(g, n, x->dtype, 1, &d, out, cnt);
	return true;
}

static bool
fold_slice(Graph *g, OnnxNode *n, Val *x, Sym *xs, int nx)
{
	int ns = 0, ne = 0, na = 0, nst = 0;
	int64_t *st, *en, *ax = NULL, *sp = NULL;
	OnnxAttr *a;
	bool given;
	if (x->ndims != 1)
		return false;
	if ((a = model_attr(n, "starts"))) {
		st = a->ints;
		ns = a->nints;
		en = (a = model_attr(n, "ends")) ? a->ints : NULL;
		ne = a ? a->nints : 0;
		ax = ints_arg(g, n, "axes", 99, &na, &given);
	} else {
		st = n->nin > 1 ? graph_ints(graph_val(g, n->in[1]), &ns) : NULL;
		en = n->nin > 2 ? graph_ints(graph_val(g, n->in[2]), &ne) : NULL;
		ax = ints_arg(g, n, "", 3, &na, &given);
		if (given && !ax)
			return false;
		sp = ints_arg(g, n, "", 4, &nst, &given);
		if (given && !sp)
			return false;
	}
	if (!st || !en || ns != 1 || ne != 1 || (ax && (na != 1 || norm_axis(ax[0], 1) != 0)))
		return false;
	int64_t step = sp && nst == 1 ? sp[0] : 1;
	if (step == 0)
		return false;
	int64_t s = st[0] < 0 ? st[0] + nx : st[0], e = en[0] < 0 ? en[0] + nx : en[0];
	Sym *out = arena_alloc(perm, (size_t)nx * sizeof *out + sizeof *out);
	int cnt = 0;
	if (step > 0) {
		s = s < 0 ? 0 : s > nx ? nx : s;
		e = e < 0 ? 0 : e > nx ? nx : e;
		for (int64_t i = s; i < e; i = e - i > step ? i + step : e)
			out[cnt++] = xs[i];
	} else {
		s = s < 0 ? -1 : s > nx - 1 ? nx - 1 : s;
		e = e < -1 ? -1 : e > nx - 1 ? nx - 1 : e;
		for (int64_t i = s; i > e; i = (uint64_t)(i - e) > 0 - (uint64_t)step ? i + step : e)
			out[cnt++] = xs[i];
	}
	int64_t d = cnt;
	result(g, n, x->dtype, 1, &d, out, cnt);
	return true;
}

/* a comparison of a and b: 1, 0, or -1 when not known (a size is never
 * negative, so it is above any negative number) */
static int
compare(const char *op, Sym a, Sym b)
{
	bool ok;
	Sym d = sym_bin('-', a, b, &ok);
	if (!ok)
		return -1;
	if (d.t) {
		bool eq = !strcmp(op, "Equal");
		if (!a.t || !b.t) {
			Sym num = a.t ? b : a;
			if (num.v < 0 && eq)
				return 0;
		}
		return -1;
	}
	if (!strcmp(op, "Equal"))
		return d.v == 0;
	if (!strcmp(op, "Less"))
		return d.v < 0;
	if (!strcmp(op, "LessOrEqual"))
		return d.v <= 0;
	if (!strcmp(op, "Greater"))
		return d.v > 0;
	return d.v >= 0;
}

/* element-wise operators on known integers (numpy's broadcast of equal
 * lengths and single values) */
static bool
fold_arith(Graph *g, OnnxNode *n)
{
	static const struct { const char *op; int code; } ops[] = {
		{ "Add", '+' }, { "Sub", '-' }, { "Mul", '*' }, { "Div", '/' }, { "Mod", '%' },
		{ "Min", 'm' }, { "Max", 'M' }, { "Equal", 'c' }, { "Less", 'c' },
		{ "LessOrEqual", 'c' }, { "Greater", 'c' }, { "GreaterOrEqual", 'c' }, { "Where", 'w' },
		{ "Not", '!' },
	};
	int code = 0;
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (!strcmp(ops[i].op, n->op))
			code = ops[i].code;
	int arity = code == 'w' ? 3 : code == '!' ? 1 : 2;
	if (!code || n->nin != arity || (code == '%' && model_attr_int(n, "fmod", 0)))
		return false;
	Sym *in[3];
	int cnt[3], len = 1, r = 0;
	for (int i = 0; i < arity; i++) {
		in[i] = syms_in(g, n, i, &cnt[i]);
		if (!in[i])
			return false;
		len = cnt[i] > len ? cnt[i] : len;
	}
	/* the result has the shape of the input with the most elements and
	 * the highest rank; others are single values of rank no higher */
	Val *big = NULL;
	for (int i = 0; i < arity; i++) {
		Val *v = graph_val(g, n->in[i]);
		if ((cnt[i] != 1 && cnt[i] != len) || v->ndims > 8)
			return false;
		r = v->ndims > r ? v->ndims : r;
		if (cnt[i] == len && (!big || v->ndims > big->ndims))
			big = v;
	}
	if (big->ndims != r)
		return false;
	Sym *out = arena_alloc(perm, (size_t)(len + 1) * sizeof *out);
	for (int k = 0; k < len; k++) {
		Sym a = in[0][cnt[0] == 1 ? 0 : k];
		Sym b = arity > 1 ? in[1][cnt[1] == 1 ? 0 : k] : a;
		bool ok = true;
		if (code == 'c' || code == '!') {
			int c = code == '!' ? (a.t ? -1 : !a.v) : compare(n->op, a, b);
			if (c < 0)
				return false;
			out[k] = sym_num(c);
		} else if (code == 'w') {
			if (a.t)
				return false;
			out[k] = a.v ? b : in[2][cnt[2] == 1 ? 0 : k];
		} else {
			out[k] = sym_bin(code, a, b, &ok);
		}
		if (!ok)
			return false;
	}
	int dtype = code == 'c' || code == '!' ? OT_BOOL : code == 'w' ?
	    graph_val(g, n->in[1])->dtype : big->dtype;
	if (code == 'w' && graph_val(g, n->in[1])->dtype != graph_val(g, n->in[2])->dtype)
		return false;
	result(g, n, dtype, big->ndims, big->dimv, out, len);
	return true;
}

/* ConstantOfShape of a known shape with few elements */
static bool
fold_cos(Graph *g, OnnxNode *n, Val *x)
{
	int ns;
	Sym *s = graph_syms(x, &ns);
	int64_t cnt = 1, dims[8];
	if (!s || ns > 8 || x->ndims != 1)
		return false;
	for (int i = 0; i < ns; i++) {
		if (s[i].t || s[i].v < 0)
			return false;
		dims[i] = s[i].v;
		cnt = graph_mul(cnt, s[i].v);
	}
	OnnxAttr *a = model_attr(n, "value");
	int dtype = a && a->t ? a->t->dtype : OT_FLOAT;
	int size = model_elem_size(dtype);
	if (cnt > MAXSYMS || !size || (a && a->t && a->t->len != (size_t)size))
		return false;
	unsigned char *p = arena_alloc(perm, (size_t)(cnt * size) + 8);
	for (int64_t i = 0; a && a->t && i < cnt; i++)
		memcpy(p + i * size, a->t->data, (size_t)size);
	known(g, n, dtype, ns, dims, p, (size_t)(cnt * size));
	return true;
}

/* Range of known integers with few elements */
static bool
fold_range(Graph *g, OnnxNode *n)
{
	int c[3];
	Sym *s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = syms_in(g, n, i, &c[i]);
		if (!s[i] || c[i] != 1 || s[i][0].t)
			return false;
	}
	int64_t a = s[0][0].v, lim = s[1][0].v, d = s[2][0].v, big = INT64_C(1) << 40;
	if (!d || a > big || a < -big || lim > big || lim < -big || d > big || d < -big ||
	    (d > 0 ? lim - a : a - lim) / (d > 0 ? d : -d) > MAXSYMS)
		return false;
	Sym *out = arena_alloc(perm, (MAXSYMS + 2) * sizeof *out);
	int cnt = 0;
	for (int64_t v = a; d > 0 ? v < lim : v > lim; v += d)
		out[cnt++] = sym_num(v);
	int64_t dim = cnt;
	result(g, n, graph_val(g, n->in[0])->dtype, 1, &dim, out, cnt);
	return true;
}

bool
fold_node(Graph *g, OnnxNode *n, bool *failed)
{
	const char *op = n->op;
	Val *x = n->nin ? graph_val(g, n->in[0]) : NULL;
	*failed = false;
	if (n->nout < 1 || !*n->out[0])
		return false;
	if (!strcmp(op, "Constant"))
		return fold_constant(g, n, failed);
	if ((!strcmp(op, "Shape") || !strcmp(op, "Size")) && x && x->ndims >= 0 && x->ndims <= 8)
		return fold_shape(g, n, x);
	if (!x || (!x->cdata && !x->sym))
		return false;
	for (int i = 0; i < n->nin; i++)
		if (*n->in[i] && !graph_val(g, n->in[i]))
			return false;
	if (!strcmp(op, "ConstantOfShape"))
		return fold_cos(g, n, x);
	if (!strcmp(op, "Range"))
		return fold_range(g, n);
	if (x->dtype == OT_FLOAT && x->cdata && (!strcmp(op, "Identity") || !strcmp(op, "Dropout"))) {
		known(g, n, x->dtype, x->ndims, x->dimv, x->cdata, x->clen);
		return true;
	}
	int nx;
	Sym *xs = graph_syms(x, &nx);
	if (!xs || nx > MAXSYMS)
		return false;
	if (!strcmp(op, "Gather") && n->nin == 2)
		return fold_gather(g, n, x, xs, nx, failed);
	if (!strcmp(op, "Concat"))
		return fold_concat(g, n, x);
	if (!strcmp(op, "Slice"))
		return fold_slice(g, n, x, xs, nx);
	if (fold_arith(g, n))
		return true;
	Sym *copy = arena_alloc(perm, (size_t)(nx + 1) * sizeof *copy);
	memcpy(copy, xs, (size_t)nx * sizeof *xs);
	return fold_reshape(g, n, x, copy, nx);
}
