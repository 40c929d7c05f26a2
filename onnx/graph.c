/* graph.c: the values of an ONNX graph as .tx tensors, and the shape
 * computations folded at import.
 *
 * Every value gets a .tx name (its ONNX name made an identifier, unique),
 * a type and a shape whose extents are numbers or, for the dynamic
 * dimensions of the graph inputs, expressions of size parameters.  A
 * value whose bytes are known (initializers, Constant, the results of
 * Shape, Gather, Slice, Concat, Unsqueeze, Squeeze, Cast, Reshape and
 * integer arithmetic on known values) is folded: it becomes a constant
 * tensor (tx.5 CONSTANTS, data held in memory) only where a stage reads
 * it, and Reshape's target shape is read from it.
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

void
graph_error(Graph *g, OnnxNode *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_error(loc_none, "%s: node '%s' (%s, byte %zu): %s", g->kernel, n->name, n->op,
	    n->at, msg);
	g->errors++;
}

const char *
graph_type(int dtype)
{
	switch (dtype) {
	case OT_FLOAT: return "f32";
	case OT_DOUBLE: return "f64";
	case OT_FLOAT16: return "f16";
	case OT_BFLOAT16: return "bf16";
	case OT_INT8: return "i8";
	case OT_INT16: return "i16";
	case OT_INT32: return "i32";
	case OT_INT64: return "i64";
	case OT_UINT8: return "u8";
	case OT_UINT16: return "u16";
	case OT_UINT32: return "u32";
	case OT_UINT64: return "u64";
	case OT_BOOL: return "bool";
	default: return NULL;
	}
}

const char *
graph_float(double v)
{
	if (!isfinite(v))
		return NULL;
	char *s = arena_printf(perm, "%.9g", v);
	if (!strpbrk(s, ".e"))
		s = arena_printf(perm, "%s.0", s);
	return s;
}

static bool
taken(Graph *g, const char *s)
{
	for (int i = 0; i < g->nused; i++)
		if (!strcmp(g->used[i], s))
			return true;
	return false;
}

/* Words a tensor may not be called: keywords, types, builtins. */
static bool
reserved(const char *s)
{
	static const char *const words[] = {
		"import", "kernel", "schedule", "intrinsic", "for", "as", "in", "out", "const",
		"true", "false", "knob", "where", "scan", "bool", "i8", "i16", "i32", "i64", "u8",
		"u16", "u32", "u64", "f16", "bf16", "f32", "f64", "sum", "prod", "maximum",
		"minimum", "argmax", "argmin", "exp", "log", "sqrt", "rsqrt", "tanh", "sin",
		"cos", "erf", "sigmoid", "abs", "floor", "ceil", "round", "pow", "min", "max",
		"clamp", "data", "file", "reduce", "combine", "identity",
	};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(s, words[i]))
			return true;
	return false;
}

const char *
graph_fresh(Graph *g, const char *hint)
{
	size_t n = strlen(hint);
	if (n > 40)
		n = 40;
	char *s = arena_alloc(perm, n + 4);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = hint[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		c = ok ? c : '_';
		if (c == '_' && (k == 0 || s[k - 1] == '_'))
			continue;     /* no leading '_' (axes), no "__" (called stages) */
		s[k++] = c;
	}
	while (k && s[k - 1] == '_')
		k--;
	s[k] = 0;
	const char *base = s;
	if (!k || (s[0] >= '0' && s[0] <= '9'))
		base = arena_printf(perm, "t%s", s);
	const char *name = base;
	for (int i = 2; taken(g, name) || reserved(name); i++)
		name = arena_printf(perm, "%s_%d", base, i);
	*ARENA_PUSH(perm, g->used, g->nused, g->capused) = name;
	return name;
}

Val *
graph_val(Graph *g, const char *onnx)
{
	if (!onnx || !*onnx)
		return NULL;
	for (int i = g->nvals - 1; i >= 0; i--)
		if (!strcmp(g->vals[i]->onnx, onnx))
			return g->vals[i];
	return NULL;
}

Val *
graph_new_val(Graph *g, const char *onnx, int dtype, int ndims)
{
	Val *v = arena_alloc(perm, sizeof *v);
	v->onnx = onnx;
	v->tx = graph_fresh(g, onnx);
	v->dtype = dtype;
	v->ndims = ndims;
	if (ndims > 0) {
		v->dim = arena_alloc(perm, (size_t)ndims * sizeof *v->dim);
		v->dimv = arena_alloc(perm, (size_t)ndims * sizeof *v->dimv);
	}
	*ARENA_PUSH(perm, g->vals, g->nvals, g->capvals) = v;
	return v;
}

void
graph_set_dim(Val *v, int d, int64_t value, const char *text)
{
	v->dimv[d] = value;
	v->dim[d] = value >= 0 ? arena_printf(perm, "%lld", (long long)value) : text;
}

const char *
graph_shape(Val *v)
{
	if (v->ndims <= 0)
		return "";
	const char *s = "[";
	for (int d = 0; d < v->ndims; d++)
		s = arena_printf(perm, "%s%s%s", s, d ? ", " : "", v->dim[d]);
	return arena_printf(perm, "%s]", s);
}

bool
graph_same_shape(Val *a, Val *b)
{
	if (a->ndims != b->ndims)
		return false;
	for (int d = 0; d < a->ndims; d++)
		if (strcmp(a->dim[d], b->dim[d]))
			return false;
	return true;
}

int64_t
graph_mul(int64_t a, int64_t b)
{
	int64_t p;
	return __builtin_mul_overflow(a, b, &p) ? INT64_MAX : p;
}

int64_t
graph_numel(Val *v)
{
	int64_t n = 1;
	for (int d = 0; d < v->ndims; d++) {
		if (v->dimv[d] < 0)
			return -1;
		n = graph_mul(n, v->dimv[d]);
	}
	return n;
}

const char *
graph_use(Graph *g, Val *v)
{
	if (v->declared)
		return v->tx;
	v->declared = true;
	if (v->cdata) {
		blob_add(v->tx, v->cdata, v->clen);
		fprintf(g->decls, "  const %s: %s%s = data(\"%s\");\n", v->tx, graph_type(v->dtype),
		    graph_shape(v), v->tx);
	}
	return v->tx;
}

int64_t *
graph_ints(Val *v, int *n)
{
	if (!v || !v->cdata || (v->dtype != OT_INT64 && v->dtype != OT_INT32))
		return NULL;
	int size = v->dtype == OT_INT64 ? 8 : 4;
	*n = (int)(v->clen / (size_t)size);
	int64_t *out = arena_alloc(perm, (size_t)(*n + 1) * sizeof *out);
	for (int i = 0; i < *n; i++) {
		if (size == 8) {
			memcpy(&out[i], v->cdata + 8 * (size_t)i, 8);
		} else {
			int32_t x;
			memcpy(&x, v->cdata + 4 * (size_t)i, 4);
			out[i] = x;
		}
	}
	return out;
}

/* ---- folding ---------------------------------------------------------------- */

static Val *
known(Graph *g, Val *like, OnnxNode *n, int dtype, int ndims, const int64_t *dims,
    const void *data, size_t len)
{
	(void)like;
	Val *v = graph_new_val(g, n->out[0], dtype, ndims);
	for (int d = 0; d < ndims; d++)
		graph_set_dim(v, d, dims[d], NULL);
	v->cdata = data;
	v->clen = len;
	v->defined = true;
	return v;
}

static Val *
known_ints(Graph *g, OnnxNode *n, int ndims, const int64_t *dims, const int64_t *x, int count)
{
	int64_t *copy = arena_alloc(perm, (size_t)(count + 1) * 8);
	if (count)
		memcpy(copy, x, (size_t)count * 8);
	return known(g, NULL, n, OT_INT64, ndims, dims, copy, (size_t)count * 8);
}

static bool
all_known(Graph *g, OnnxNode *n, int upto)
{
	for (int i = 0; i < n->nin && i < upto; i++) {
		Val *v = graph_val(g, n->in[i]);
		if (*n->in[i] && (!v || !v->cdata))
			return false;
	}
	return n->nin > 0;
}

static int64_t
norm_axis(int64_t a, int r)
{
	return a < 0 ? a + r : a;
}

bool
graph_fold(Graph *g, OnnxNode *n, bool *failed)
{
	const char *op = n->op;
	Val *x = n->nin ? graph_val(g, n->in[0]) : NULL;
	int nx = 0;
	int64_t *xi = graph_ints(x, &nx);
	*failed = false;
	if (n->nout < 1)
		return false;
	if (!strcmp(op, "Constant")) {
		OnnxAttr *a = model_attr(n, "value");
		if (a && a->t) {
			known(g, NULL, n, a->t->dtype, a->t->ndims, a->t->dims, a->t->data, a->t->len);
			return true;
		}
		if ((a = model_attr(n, "value_float"))) {
			float *f = arena_alloc(perm, 4);
			*f = (float)a->f;
			known(g, NULL, n, OT_FLOAT, 0, NULL, f, 4);
			return true;
		}
		if ((a = model_attr(n, "value_int"))) {
			known_ints(g, n, 0, NULL, &a->i, 1);
			return true;
		}
		if ((a = model_attr(n, "value_ints"))) {
			int64_t d = a->nints;
			known_ints(g, n, 1, &d, a->ints, a->nints);
			return true;
		}
		if ((a = model_attr(n, "value_floats"))) {
			int64_t d = a->nfloats;
			known(g, NULL, n, OT_FLOAT, 1, &d, a->floats, (size_t)a->nfloats * 4);
			return true;
		}
		graph_error(g, n, "a Constant of a kind txc does not take");
		*failed = true;
		return true;
	}
	if (!strcmp(op, "Shape") && x && x->ndims >= 0) {
		int64_t s = norm_axis(model_attr_int(n, "start", 0), x->ndims);
		int64_t e = norm_axis(model_attr_int(n, "end", x->ndims), x->ndims);
		s = s < 0 ? 0 : s > x->ndims ? x->ndims : s;
		e = e < s ? s : e > x->ndims ? x->ndims : e;
		for (int64_t d = s; d < e; d++)
			if (x->dimv[d] < 0)
				return false;   /* a dynamic dimension: not folded */
		int64_t cnt = e - s;
		known_ints(g, n, 1, &cnt, cnt ? x->dimv + s : NULL, (int)cnt);
		return true;
	}
	if (!x || !x->cdata)
		return false;
	if (!strcmp(op, "Identity") || !strcmp(op, "Dropout")) {
		known(g, NULL, n, x->dtype, x->ndims, x->dimv, x->cdata, x->clen);
		return true;
	}
	if ((!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) && xi) {
		bool un = op[0] == 'U';
		int na = 0;
		int64_t *ax = NULL;
		OnnxAttr *a = model_attr(n, "axes");
		if (a) {
			ax = a->ints;
			na = a->nints;
		} else if (n->nin > 1) {
			ax = graph_ints(graph_val(g, n->in[1]), &na);
		}
		int r = un ? x->ndims + na : x->ndims;
		int64_t dims[16];
		if (r > 16)
			return false;
		bool mark[16] = { 0 };
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
		known_ints(g, n, k, dims, xi, nx);
		return true;
	}
	if (!strcmp(op, "Cast") && xi) {
		int to = (int)model_attr_int(n, "to", OT_INT64);
		if (to == OT_INT64 || to == OT_INT32) {
			known_ints(g, n, x->ndims, x->dimv, xi, nx);
			return true;
		}
		if (to == OT_FLOAT) {
			float *f = arena_alloc(perm, (size_t)(nx + 1) * 4);
			for (int i = 0; i < nx; i++)
				f[i] = (float)xi[i];
			known(g, NULL, n, OT_FLOAT, x->ndims, x->dimv, f, (size_t)nx * 4);
			return true;
		}
		return false;
	}
	if (!strcmp(op, "Gather") && xi && x->ndims == 1 && all_known(g, n, 2)) {
		Val *iv = graph_val(g, n->in[1]);
		int ni;
		int64_t *ii = graph_ints(iv, &ni);
		if (!ii)
			return false;
		int64_t *out = arena_alloc(perm, (size_t)(ni + 1) * 8);
		for (int i = 0; i < ni; i++) {
			int64_t k = norm_axis(ii[i], nx);
			if (k < 0 || k >= nx) {
				graph_error(g, n, "index %lld is out of range (%d values)", (long long)ii[i], nx);
				*failed = true;
				return true;
			}
			out[i] = xi[k];
		}
		known_ints(g, n, iv->ndims, iv->dimv, out, ni);
		return true;
	}
	if (!strcmp(op, "Concat") && xi && all_known(g, n, n->nin)) {
		int64_t *out = NULL;
		int cnt = 0, cap = 0;
		for (int i = 0; i < n->nin; i++) {
			int k;
			int64_t *v = graph_ints(graph_val(g, n->in[i]), &k);
			if (!v || graph_val(g, n->in[i])->ndims > 1)
				return false;
			for (int j = 0; j < k; j++)
				*ARENA_PUSH(perm, out, cnt, cap) = v[j];
		}
		int64_t d = cnt;
		known_ints(g, n, 1, &d, out, cnt);
		return true;
	}
	if (!strcmp(op, "Slice") && xi && x->ndims == 1) {
		int ns = 0, ne = 0, na = 0, nst = 0;
		int64_t *st, *en, *ax = NULL, *sp = NULL;
		OnnxAttr *a;
		if ((a = model_attr(n, "starts"))) {
			st = a->ints; ns = a->nints;
			en = (a = model_attr(n, "ends")) ? a->ints : NULL; ne = a ? a->nints : 0;
		} else {
			if (!all_known(g, n, n->nin))
				return false;
			st = graph_ints(graph_val(g, n->in[1]), &ns);
			en = n->nin > 2 ? graph_ints(graph_val(g, n->in[2]), &ne) : NULL;
			ax = n->nin > 3 ? graph_ints(graph_val(g, n->in[3]), &na) : NULL;
			sp = n->nin > 4 ? graph_ints(graph_val(g, n->in[4]), &nst) : NULL;
		}
		if (!st || !en || ns != 1 || ne != 1 || (ax && (na != 1 || norm_axis(ax[0], 1) != 0)))
			return false;
		int64_t step = sp && nst == 1 ? sp[0] : 1;
		if (step == 0)
			return false;
		int64_t s = st[0] < 0 ? st[0] + nx : st[0], e = en[0] < 0 ? en[0] + nx : en[0];
		int64_t *out = arena_alloc(perm, (size_t)nx * 8 + 8);
		int cnt = 0;
		if (step > 0) {
			s = s < 0 ? 0 : s > nx ? nx : s;
			e = e < 0 ? 0 : e > nx ? nx : e;
			for (int64_t i = s; i < e; i = e - i > step ? i + step : e)
				out[cnt++] = xi[i];
		} else {
			s = s < 0 ? -1 : s > nx - 1 ? nx - 1 : s;
			e = e < -1 ? -1 : e > nx - 1 ? nx - 1 : e;
			for (int64_t i = s; i > e; i = (uint64_t)(i - e) > 0 - (uint64_t)step ? i + step : e)
				out[cnt++] = xi[i];
		}
		int64_t d = cnt;
		known_ints(g, n, 1, &d, out, cnt);
		return true;
	}
	if ((!strcmp(op, "Reshape") || !strcmp(op, "Flatten")) && xi && x->ndims <= 1 &&
	    (op[0] == 'F' || all_known(g, n, 2))) {
		int64_t d = nx;
		known_ints(g, n, 1, &d, xi, nx);   /* 1-D shape values only */
		return true;
	}
	bool add = !strcmp(op, "Add"), sub = !strcmp(op, "Sub"), mul = !strcmp(op, "Mul"),
	    dv = !strcmp(op, "Div");
	if ((add || sub || mul || dv) && xi && n->nin == 2) {
		int ny;
		Val *y = graph_val(g, n->in[1]);
		int64_t *yi = graph_ints(y, &ny);
		if (!yi || !(ny == nx || ny == 1 || nx == 1))
			return false;
		int cnt = nx > ny ? nx : ny;
		int64_t *out = arena_alloc(perm, (size_t)cnt * 8 + 8);
		for (int i = 0; i < cnt; i++) {
			int64_t a = xi[nx == 1 ? 0 : i], b = yi[ny == 1 ? 0 : i];
			if (dv && (b == 0 || (a == INT64_MIN && b == -1)))
				return false;
			/* wrapping, as int64 shape arithmetic does in ONNX runtimes */
			out[i] = add ? (int64_t)((uint64_t)a + (uint64_t)b) :
			    sub ? (int64_t)((uint64_t)a - (uint64_t)b) :
			    mul ? (int64_t)((uint64_t)a * (uint64_t)b) : a / b;
		}
		Val *big = nx >= ny ? x : y;
		known_ints(g, n, big->ndims, big->dimv, out, cnt);
		return true;
	}
	return false;
}
