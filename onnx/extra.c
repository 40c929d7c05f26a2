/* extra.c: the less common ONNX operators as .tx stages: DepthToSpace,
 * SpaceToDepth, Trilu, GatherElements, OneHot (index and layout),
 * ArgMax, ArgMin, Hardmax, LRN, LpNormalization,
 * MeanVarianceNormalization and CumSum (reductions and scans).
 *
 * Each is a few rules over the operators of tx(5): an argmax reduction,
 * a sum over a window of channels whose bounds follow the channel axis
 * (LRN), a scan along CumSum's axis.  What decides a shape (OneHot's
 * depth, CumSum's axis) must be known when txc compiles; Trilu's k may be
 * given at run time, since it only selects elements.
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

static const char *
ax(int d)
{
	return arena_printf(perm, "_a%d", d);
}

static bool
is_float(int dt)
{
	return dt == OT_FLOAT || dt == OT_DOUBLE || dt == OT_FLOAT16 || dt == OT_BFLOAT16;
}

/* a literal of value v in type dt (floating literals take any float type;
 * an integer one is cast so that it is not an i32) */
static const char *
lit(int dt, int v)
{
	if (dt == OT_BOOL)
		return v ? "true" : "false";
	if (is_float(dt))
		return arena_printf(perm, "%d.0", v);
	return arena_printf(perm, "%s(%d)", graph_type(dt), v);
}

static Sym
dim_sym(Val *v, int d)
{
	return v->dimv[d] >= 0 ? sym_num(v->dimv[d]) : sym_parse(v->dim[d]);
}

static const char *
mul_text(const char *a, const char *b)
{
	return sym_text(sym_parse(arena_printf(perm, "%s * %s", a, b)));
}

/* axis attribute name (default dflt) normalized over rank r; -1 with an
 * error when out of range */
static int
axis_of(Graph *g, OnnxNode *n, const char *name, int64_t dflt, int r)
{
	int64_t a = model_attr_int(n, name, dflt);
	int64_t k = a < 0 ? a + r : a;
	if (k < 0 || k >= r) {
		graph_error(g, n, "axis %lld is out of range for rank %d", (long long)a, r);
		return -1;
	}
	return (int)k;
}

/* the one element of v, a number known at compile time (an integer or a
 * float of any width: OneHot's depth may be a float) */
static bool
known_number(Val *v, double *out)
{
	if (!v || !v->cdata || graph_numel(v) != 1)
		return false;
	if (v->dtype == OT_FLOAT) {
		float f;
		memcpy(&f, v->cdata, 4);
		*out = f;
		return true;
	}
	if (v->dtype == OT_DOUBLE) {
		memcpy(out, v->cdata, 8);
		return true;
	}
	int cnt;
	Sym *s = graph_syms(v, &cnt);
	if (!s || cnt != 1 || s[0].t)
		return false;
	*out = (double)s[0].v;
	return true;
}

/* a read of v's one element (a scalar or all extents 1) */
static const char *
scalar_read(Graph *g, Val *v)
{
	const char *idx[8];
	for (int d = 0; d < v->ndims; d++)
		idx[d] = "0";
	return emit_at(g, v, idx);
}

static bool
one_element(Val *v)
{
	for (int d = 0; d < v->ndims; d++)
		if (v->dimv[d] != 1)
			return false;
	return true;
}

static const char *
joined(const char **idx, int r)
{
	const char *s = "";
	for (int d = 0; d < r; d++)
		s = arena_printf(perm, "%s%s%s", s, d ? ", " : "", idx[d]);
	return s;
}

/* an intermediate value (\x01: no ONNX name meets it) */
static Val *
stage(Graph *g, Val *like, const char *suffix, int dtype)
{
	Val *v = graph_new_val(g, arena_printf(perm, "\x01%s_%s", like->tx, suffix), dtype,
	    like->ndims);
	emit_copy_dims(v, like);
	return v;
}

/* ---- layout ---------------------------------------------------------------- */

/* DepthToSpace and SpaceToDepth, on [N, C, H, W]: the channels split as
 * (row in the block, column in the block, c) in DCR mode and in
 * SpaceToDepth, as (c, row, column) in CRD mode */
static bool
op_space(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	bool d2s = n->op[0] == 'D';
	int64_t b = model_attr_int(n, "blocksize", 0);
	OnnxAttr *ma = model_attr(n, "mode");
	const char *mode = ma && ma->s ? ma->s : "DCR";
	bool crd = !strcmp(mode, "CRD");
	if (x->ndims != 4 || b < 1 || b > 1 << 16 || (d2s && !crd && strcmp(mode, "DCR"))) {
		graph_error(g, n, "needs an input of rank 4, a positive blocksize and mode DCR or CRD");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, 4);
	const char *bt = arena_printf(perm, "%lld", (long long)b);
	const char *idx[4];
	bool ok = true;
	idx[0] = "_a0";
	graph_set_dim(y, 0, x->dimv[0], x->dim[0]);
	if (d2s) {
		int64_t C = x->dimv[1];
		if (C < 0 || C % (b * b)) {
			graph_error(g, n, "its channels (%s) must be a known multiple of "
			    "blocksize^2 = %lld", x->dim[1], (long long)(b * b));
			return false;
		}
		int64_t c = C / (b * b);
		graph_set_dim(y, 1, c, NULL);
		for (int d = 2; d < 4; d++) {
			Sym s = sym_bin('*', dim_sym(x, d), sym_num(b), &ok);
			graph_set_dim(y, d, s.t ? -1 : s.v, s.t);
			idx[d] = arena_printf(perm, "_a%d / %s", d, bt);
		}
		/* the block's row and column: (h % b, w % b) */
		const char *blk = arena_printf(perm, "(_a2 %% %s) * %s + _a3 %% %s", bt, bt, bt);
		idx[1] = crd ? arena_printf(perm, "_a1 * %lld + %s", (long long)(b * b), blk) :
		    arena_printf(perm, "(%s) * %lld + _a1", blk, (long long)c);
	} else {
		for (int d = 2; d < 4; d++) {
			if (x->dimv[d] >= 0 && x->dimv[d] % b) {
				graph_error(g, n, "extent %lld is not a multiple of blocksize %lld",
				    (long long)x->dimv[d], (long long)b);
				return false;
			}
			Sym s = sym_bin('/', dim_sym(x, d), sym_num(b), &ok);
			graph_set_dim(y, d, s.t ? -1 : s.v, s.t);
		}
		Sym cs = sym_bin('*', dim_sym(x, 1), sym_num(b * b), &ok);
		graph_set_dim(y, 1, cs.t ? -1 : cs.v, cs.t);
		/* channel (bh * b + bw) * C + c; the block q = bh * b + bw is
		 * below b * b, which bounds inference cannot see when C is a
		 * size parameter: min() says it */
		const char *C = x->dim[1];
		const char *q = x->dimv[1] >= 0 ? arena_printf(perm, "(_a1 / %s)", C) :
		    arena_printf(perm, "min(_a1 / %s, %lld)", C, (long long)(b * b - 1));
		idx[1] = arena_printf(perm, "_a1 %% %s", C);
		idx[2] = arena_printf(perm, "_a2 * %s + %s / %s", bt, q, bt);
		idx[3] = arena_printf(perm, "_a3 * %s + %s %% %s", bt, q, bt);
	}
	if (!ok) {
		graph_error(g, n, "its extents overflow");
		return false;
	}
	emit_rule(g, y, emit_at(g, x, idx));
	return true;
}

/* Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the
 * last two axes, zero elsewhere */
static bool
op_trilu(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *kv = emit_in(g, n, 1);
	int r = x->ndims;
	if (r < 2) {
		graph_error(g, n, "needs an input of rank 2 or more");
		return false;
	}
	const char *k = "0";
	if (kv) {
		int cnt;
		Sym *s = graph_syms(kv, &cnt);
		if (s && cnt == 1 && !s[0].t) {
			k = arena_printf(perm, "%lld", (long long)s[0].v);
		} else if (kv->dtype == OT_INT64 && one_element(kv)) {
			k = scalar_read(g, kv);
		} else {
			graph_error(g, n, "its k must be one int64");
			return false;
		}
	}
	bool upper = model_attr_int(n, "upper", 1) != 0;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	const char *idx[8];
	for (int d = 0; d < r; d++)
		idx[d] = ax(d);
	emit_rule(g, y, arena_printf(perm, "_a%d - _a%d %s %s ? %s : %s", r - 1, r - 2,
	    upper ? ">=" : "<=", k, emit_at(g, x, idx), lit(x->dtype, 0)));
	return true;
}

/* GatherElements: y[i, j] = data[idx[i, j], j] (axis 0), an index given
 * at run time counted from the end when negative and clamped into the
 * extent, never read outside it */
static bool
op_gather_elements(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *iv = emit_in(g, n, 1);
	if (!iv || (iv->dtype != OT_INT64 && iv->dtype != OT_INT32) || iv->ndims != x->ndims ||
	    x->ndims < 1) {
		graph_error(g, n, "needs integer indices of the data's rank");
		return false;
	}
	int a = axis_of(g, n, "axis", 0, x->ndims);
	if (a < 0)
		return false;
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, iv);
	const char *idx[8], *ii[8], *guard = NULL;
	for (int d = 0; d < x->ndims; d++) {
		ii[d] = ax(d);
		if (d == a)
			continue;
		if (x->dimv[d] >= 0 && iv->dimv[d] >= 0 && iv->dimv[d] > x->dimv[d]) {
			graph_error(g, n, "indices of extent %lld on axis %d, data of %lld",
			    (long long)iv->dimv[d], d, (long long)x->dimv[d]);
			return false;
		}
		idx[d] = ax(d);
		/* an extent of the indices known only at run time may exceed
		 * the data's: 0 there (a select bounds the read) */
		if (strcmp(x->dim[d], iv->dim[d]) && (x->dimv[d] < 0 || iv->dimv[d] < 0))
			guard = arena_printf(perm, "%s%s_a%d < %s", guard ? guard : "",
			    guard ? " && " : "", d, x->dim[d]);
	}
	const char *i = arena_printf(perm, "i64(%s)", emit_at(g, iv, ii)), *D = x->dim[a];
	idx[a] = arena_printf(perm, "clamp(%s < 0 ? %s + %s : %s, 0, %s - 1)", i, i, D, i, D);
	const char *e = emit_at(g, x, idx);
	emit_rule(g, y, guard ? arena_printf(perm, "%s ? %s : %s", guard, e, lit(x->dtype, 0)) : e);
	return true;
}

/* OneHot: values[1] where the index (negative: from the end) is the
 * position along the new axis, values[0] elsewhere; the depth is an
 * extent, so it must be known */
static bool
op_onehot(Graph *g, OnnxNode *n)
{
	Val *iv = emit_in(g, n, 0), *dv = emit_in(g, n, 1), *vv = emit_in(g, n, 2);
	double depth;
	if (!dv || !vv) {
		graph_error(g, n, "needs indices, depth and values");
		return false;
	}
	if (!known_number(dv, &depth)) {
		graph_error(g, n, "its depth must be known when txc compiles (a constant)");
		return false;
	}
	if (!(depth >= 1 && depth <= 1 << 30)) {
		graph_error(g, n, "its depth %g is not an extent from 1 to 2^30", depth);
		return false;
	}
	if (vv->ndims != 1 || vv->dimv[0] != 2 || iv->ndims + 1 > 8) {
		graph_error(g, n, "its values must be [off, on] and its indices of rank 7 or less");
		return false;
	}
	int r = iv->ndims + 1;
	int a = axis_of(g, n, "axis", -1, r);
	if (a < 0)
		return false;
	int64_t D = (int64_t)depth;
	Val *y = emit_result(g, n, 0, vv->dtype, r);
	const char *ii[8];
	for (int d = 0, k = 0; d < r; d++) {
		if (d == a) {
			graph_set_dim(y, d, D, NULL);
			continue;
		}
		graph_set_dim(y, d, iv->dimv[k], iv->dim[k]);
		ii[k++] = ax(d);
	}
	/* a float index is truncated, as a cast to int64 does */
	const char *i = arena_printf(perm, "i64(%s)", emit_at(g, iv, ii));
	emit_rule(g, y, arena_printf(perm, "(%s < 0 ? %s + %lld : %s) == _a%d ? %s : %s", i, i,
	    (long long)D, i, a, emit_at(g, vv, (const char *[]){ "1" }),
	    emit_at(g, vv, (const char *[]){ "0" })));
	return true;
}

/* ---- reductions -------------------------------------------------------------- */

/* ArgMax, ArgMin: tx's argmax gives the first index of the extreme (the
 * first NaN's); select_last_index reads the axis backwards and turns
 * the index round */
static bool
op_arg(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	int r = x->ndims;
	int a = axis_of(g, n, "axis", 0, r);
	if (a < 0)
		return false;
	bool keep = model_attr_int(n, "keepdims", 1) != 0;
	bool last = model_attr_int(n, "select_last_index", 0) != 0;
	const char *fn = strcmp(n->op, "ArgMax") ? "argmin" : "argmax", *D = x->dim[a];
	Val *y = emit_result(g, n, 0, OT_INT64, keep ? r : r - 1);
	const char *idx[8];
	for (int d = 0, k = 0; d < r; d++) {
		if (d == a) {
			idx[d] = last ? arena_printf(perm, "%s - 1 - _r0", D) : "_r0";
			if (keep)
				graph_set_dim(y, k++, 1, NULL);
			continue;
		}
		graph_set_dim(y, k, x->dimv[d], x->dim[d]);
		idx[d] = ax(k++);
	}
	const char *e = arena_printf(perm, "%s(_r0 < %s) %s", fn, D, emit_at(g, x, idx));
	if (!last) {
		emit_rule(g, y, e);
		return true;
	}
	Val *t = stage(g, y, "rev", OT_INT64);
	emit_rule(g, t, e);
	emit_rule(g, y, arena_printf(perm, "%s - 1 - %s[%s]", D, graph_use(g, t),
	    emit_axes(y->ndims)));
	return true;
}

/* Hardmax: 1 at the first largest element along the axis (before opset
 * 13: along the axes from `axis` on, as one flattened axis), 0 elsewhere */
static bool
op_hardmax(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	int r = x->ndims;
	bool old = g->m->opset < 13;
	int a = axis_of(g, n, "axis", old ? 1 : -1, r);
	if (a < 0)
		return false;
	int last = old ? r - 1 : a;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	Val *m = graph_new_val(g, arena_printf(perm, "\x01%s_at", y->tx), OT_INT64, r);
	/* the reduced axes as one flat index _r0 < P: axis d is (_r0 / stride) % D */
	const char *idx[8], *mi[8], *P = "1", *flat = "0";
	for (int d = last; d >= 0; d--) {
		if (d < a) {
			graph_set_dim(m, d, x->dimv[d], x->dim[d]);
			idx[d] = mi[d] = ax(d);
			continue;
		}
		graph_set_dim(m, d, 1, NULL);
		mi[d] = "0";
		idx[d] = a == last ? "_r0" : arena_printf(perm, "(_r0 / %s) %% %s", P, x->dim[d]);
		flat = arena_printf(perm, "%s + _a%d * %s", flat, d, P);
		P = mul_text(P, x->dim[d]);
	}
	for (int d = last + 1; d < r; d++) {
		graph_set_dim(m, d, x->dimv[d], x->dim[d]);
		idx[d] = mi[d] = ax(d);
	}
	emit_rule(g, m, arena_printf(perm, "argmax(_r0 < %s) %s", P, emit_at(g, x, idx)));
	emit_rule(g, y, arena_printf(perm, "%s == %s ? %s : %s", flat, emit_at(g, m, mi),
	    lit(x->dtype, 1), lit(x->dtype, 0)));
	return true;
}

/* LRN: x / (bias + alpha / size * square_sum)^beta, square_sum over the
 * channels c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped
 * to the extent */
static bool
op_lrn(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	int64_t size = model_attr_int(n, "size", 0);
	double alpha = model_attr_float(n, "alpha", 1e-4), beta = model_attr_float(n, "beta", 0.75),
	    bias = model_attr_float(n, "bias", 1.0);
	if (x->ndims < 2 || !is_float(x->dtype) || size < 1 || size > 1 << 20 ||
	    !graph_float(alpha / (double)size) || !graph_float(beta) || !graph_float(bias)) {
		graph_error(g, n, "needs a float input of rank 2 or more, a positive size and finite "
		    "alpha, beta and bias");
		return false;
	}
	int r = x->ndims;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	Val *s = stage(g, y, "sqsum", x->dtype);
	const char *idx[8], *xi[8];
	for (int d = 0; d < r; d++)
		idx[d] = xi[d] = ax(d);
	idx[1] = "_r0";
	const char *v = emit_at(g, x, idx);
	int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
	emit_rule(g, s, arena_printf(perm, "sum(max(_a1 - %lld, 0) <= _r0 <= min(_a1 + %lld, %s - 1)) "
	    "%s * %s", (long long)lo, (long long)hi, x->dim[1], v, v));
	emit_rule(g, y, arena_printf(perm, "%s / pow(%s + %s * %s[%s], %s)", emit_at(g, x, xi),
	    graph_float(bias), graph_float(alpha / (double)size), graph_use(g, s), emit_axes(r),
	    graph_float(beta)));
	return true;
}

/* a stage of x's shape with extent 1 on the axes marked, the sum of fmt
 * (a format of the element read, used twice) over them */
static Val *
sum_over(Graph *g, Val *x, const bool *red, const char *name, const char *fmt)
{
	Val *v = graph_new_val(g, name, x->dtype, x->ndims);
	const char *idx[8], *ranges = "";
	int nr = 0;
	for (int d = 0; d < x->ndims; d++) {
		if (!red[d]) {
			graph_set_dim(v, d, x->dimv[d], x->dim[d]);
			idx[d] = ax(d);
			continue;
		}
		graph_set_dim(v, d, 1, NULL);
		idx[d] = arena_printf(perm, "_r%d", nr);
		ranges = arena_printf(perm, "%s%s_r%d < %s", ranges, nr ? ", " : "", nr, x->dim[d]);
		nr++;
	}
	const char *e = emit_at(g, x, idx);
	emit_rule(g, v, arena_printf(perm, "sum(%s) %s", ranges, arena_printf(perm, fmt, e, e)));
	return v;
}

/* a read of a stage reduced by sum_over at the point of x's axes */
static const char *
reduced_at(Graph *g, Val *s, const bool *red)
{
	const char *idx[8];
	for (int d = 0; d < s->ndims; d++)
		idx[d] = red[d] ? "0" : ax(d);
	return emit_at(g, s, idx);
}

/* LpNormalization: x divided by the L1 or L2 norm along the axis */
static bool
op_lpnorm(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	int64_t p = model_attr_int(n, "p", 2);
	int a = axis_of(g, n, "axis", -1, x->ndims);
	if (a < 0)
		return false;
	if ((p != 1 && p != 2) || !is_float(x->dtype)) {
		graph_error(g, n, "needs a float input and p 1 or 2 (p is %lld)", (long long)p);
		return false;
	}
	bool red[8] = { 0 };
	red[a] = true;
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	Val *s = sum_over(g, x, red, arena_printf(perm, "\x01%s_norm", y->tx),
	    p == 1 ? "abs(%s)%.0s" : "%s * %s");
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	const char *norm = reduced_at(g, s, red);
	emit_rule(g, y, arena_printf(perm, "%s / %s", emit_at(g, x, xi), p == 2 ?
	    arena_printf(perm, "sqrt(%s)", norm) : norm));
	return true;
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9)
 * over the axes (default 0, 2, 3), as ONNX's function body computes it */
static bool
op_mvn(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	OnnxAttr *aa = model_attr(n, "axes");
	static const int64_t dflt[] = { 0, 2, 3 };
	const int64_t *axs = aa ? aa->ints : dflt;
	int na = aa ? aa->nints : 3;
	bool red[8] = { 0 };
	if (!is_float(x->dtype)) {
		graph_error(g, n, "needs a float input");
		return false;
	}
	for (int i = 0; i < na; i++) {
		int64_t k = axs[i] < 0 ? axs[i] + x->ndims : axs[i];
		if (k < 0 || k >= x->ndims) {
			graph_error(g, n, "axis %lld is out of range for rank %d", (long long)axs[i],
			    x->ndims);
			return false;
		}
		red[k] = true;
	}
	const char *cnt = "1";
	for (int d = 0; d < x->ndims; d++)
		if (red[d])
			cnt = mul_text(cnt, x->dim[d]);
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	Val *s1 = sum_over(g, x, red, arena_printf(perm, "\x01%s_sum", y->tx), "%s%.0s");
	Val *s2 = sum_over(g, x, red, arena_printf(perm, "\x01%s_sumsq", y->tx), "%s * %s");
	const char *T = graph_type(x->dtype);
	const char *mean = arena_printf(perm, "(%s / %s(%s))", reduced_at(g, s1, red), T, cnt);
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	emit_rule(g, y, arena_printf(perm, "(%s - %s) / (sqrt(%s / %s(%s) - %s * %s) + %s)",
	    emit_at(g, x, xi), mean, reduced_at(g, s2, red), T, cnt, mean, mean,
	    graph_float(1e-9)));
	return true;
}

/* CumSum: a scan along the axis (read backwards when reverse); exclusive
 * sums start at 0 and add the element one step behind */
static bool
op_cumsum(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *av = emit_in(g, n, 1);
	int cnt;
	int64_t *ai = av ? graph_ints(av, &cnt) : NULL;
	if (!ai || cnt != 1) {
		graph_error(g, n, "its axis must be known when txc compiles (one integer)");
		return false;
	}
	int r = x->ndims;
	int64_t a = ai[0] < 0 ? ai[0] + r : ai[0];
	if (a < 0 || a >= r) {
		graph_error(g, n, "axis %lld is out of range for rank %d", (long long)ai[0], r);
		return false;
	}
	bool excl = model_attr_int(n, "exclusive", 0) != 0;
	bool rev = model_attr_int(n, "reverse", 0) != 0;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	Val *s = stage(g, y, "scan", x->dtype);
	emit_declare(g, s);
	const char *D = x->dim[a];
	/* the element step t adds: x at p(t) (exclusive: p(t - 1)) */
	const char *xi[8], *si[8], *s0[8], *yi[8];
	for (int d = 0; d < r; d++)
		xi[d] = si[d] = s0[d] = yi[d] = ax(d);
	const char *t = excl ? arena_printf(perm, "_a%d - 1", (int)a) : ax((int)a);
	xi[a] = rev ? arena_printf(perm, "%s - 1 - (%s)", D, t) : t;
	si[a] = arena_printf(perm, "_a%d - 1", (int)a);
	s0[a] = "0";
	yi[a] = rev ? arena_printf(perm, "%s - 1 - _a%d", D, (int)a) : ax((int)a);
	const char *first;
	if (excl) {
		first = lit(x->dtype, 0);
	} else {
		const char *f[8];
		memcpy(f, xi, sizeof f);
		f[a] = rev ? arena_printf(perm, "%s - 1", D) : "0";
		first = emit_at(g, x, f);
	}
	/* step 0, then every later step from the one before */
	const char *sname = graph_use(g, s);
	fprintf(g->body, "  %s[%s] = %s;\n", sname, joined(s0, r), first);
	fprintf(g->body, "  %s[%s] = %s + %s;\n", sname, emit_axes(r), emit_at(g, s, si),
	    emit_at(g, x, xi));
	emit_rule(g, y, emit_at(g, s, yi));
	return true;
}

bool
extra_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled)
{
	static const struct { const char *op; bool (*fn)(Graph *, OnnxNode *); } table[] = {
		{ "DepthToSpace", op_space }, { "SpaceToDepth", op_space }, { "Trilu", op_trilu },
		{ "GatherElements", op_gather_elements }, { "OneHot", op_onehot },
		{ "ArgMax", op_arg }, { "ArgMin", op_arg }, { "Hardmax", op_hardmax },
		{ "LRN", op_lrn }, { "LpNormalization", op_lpnorm },
		{ "MeanVarianceNormalization", op_mvn }, { "CumSum", op_cumsum },
	};
	(void)unsupported;
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (!strcmp(table[i].op, n->op)) {
			*handled = true;
			return table[i].fn(g, n);
		}
	*handled = false;
	return false;
}
