/* index.c: the ONNX operators that select or repeat elements, as .tx
 * stages: Slice, Gather, Expand, Tile, Pad, Split, ConstantOfShape and
 * Range (of run-time values; known ones are folded by fold.c), Where,
 * the comparisons and the logical operators.
 *
 * Their extents may be expressions of the size parameters: a Slice whose
 * end an exporter computed from Shape (x[:, :, :x.size(2) - 1]) reads it
 * as an expression (fold.c), and its extent is end - start in sym.c's
 * canonical form.  Starts, steps, axes, pads, repeats and split sizes
 * must be known numbers; an index outside its extent at run time is
 * clamped (Gather), never read.
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

static Sym
dim_sym(Val *v, int d)
{
	return v->dimv[d] >= 0 ? sym_num(v->dimv[d]) : sym_parse(v->dim[d]);
}

static void
set_dim(Val *y, int d, Sym s)
{
	graph_set_dim(y, d, s.t ? -1 : (s.v < 0 ? 0 : s.v), s.t);
}

static Sym
bin(int op, Sym a, Sym b)
{
	bool ok;
	Sym s = sym_bin(op, a, b, &ok);
	return ok ? s : sym_num(0);
}

/* known integers from attribute name or input i; *given false when
 * neither is there; NULL with an error when the input is not known */
static Sym *
int_arg(Graph *g, OnnxNode *n, const char *name, int i, int *cnt, bool *given, bool syms)
{
	OnnxAttr *a = name ? model_attr(n, name) : NULL;
	*given = true;
	if (a) {
		*cnt = a->nints;
		Sym *s = arena_alloc(perm, (size_t)(a->nints + 1) * sizeof *s);
		for (int k = 0; k < a->nints; k++)
			s[k] = sym_num(a->ints[k]);
		return s;
	}
	if (i >= n->nin || !*n->in[i]) {
		*given = false;
		*cnt = 0;
		return NULL;
	}
	Sym *s = graph_syms(emit_in(g, n, i), cnt);
	for (int k = 0; s && !syms && k < *cnt; k++)
		if (s[k].t)
			s = NULL;
	if (!s)
		graph_error(g, n, "input %d ('%s') must be known when txc compiles%s", i, n->in[i],
		    syms ? " (numbers, or a shape computation of the input's extents)" : " (numbers)");
	return s;
}

/* axes of n (attribute or input 3) over rank r, all when none */
static bool
axes_of(Graph *g, OnnxNode *n, const char *attr, int input, int r, int cnt, int *axes)
{
	bool given;
	int na;
	Sym *a = int_arg(g, n, attr, input, &na, &given, false);
	if (given && !a)
		return false;
	if (!given) {
		for (int k = 0; k < cnt; k++)
			axes[k] = k;
		return true;
	}
	if (na != cnt) {
		graph_error(g, n, "%d axes for %d values", na, cnt);
		return false;
	}
	for (int k = 0; k < na; k++) {
		int64_t v = a[k].v < 0 ? a[k].v + r : a[k].v;
		if (v < 0 || v >= r) {
			graph_error(g, n, "axis %lld is out of range", (long long)a[k].v);
			return false;
		}
		axes[k] = (int)v;
	}
	return true;
}

static bool
op_slice(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	bool given, old = model_attr(n, "starts") != NULL;
	int ns, ne, nst = 0, axes[8];
	Sym *st = int_arg(g, n, old ? "starts" : NULL, 1, &ns, &given, true);
	Sym *en = st ? int_arg(g, n, old ? "ends" : NULL, 2, &ne, &given, true) : NULL;
	if (!st || !en)
		return false;
	Sym *sp = old ? NULL : int_arg(g, n, NULL, 4, &nst, &given, false);
	if (!old && given && !sp)
		return false;
	if (ns != ne || ns > x->ndims || (sp && nst != ns) ||
	    !axes_of(g, n, old ? "axes" : NULL, old ? 99 : 3, x->ndims, ns, axes)) {
		if (!g->errors)
			graph_error(g, n, "starts, ends, axes and steps of different lengths");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	const char *idx[8];
	for (int d = 0; d < x->ndims; d++)
		idx[d] = ax(d);
	const int64_t big = INT64_C(1) << 30;
	for (int k = 0; k < ns; k++) {
		int d = axes[k];
		Sym D = dim_sym(x, d), s = st[k], e = en[k];
		int64_t step = sp ? sp[k].v : 1;
		if (step == 0 || step > big || step < -big) {
			graph_error(g, n, "step %lld", (long long)step);
			return false;
		}
		Sym lo = sym_num(step > 0 ? 0 : -1), hi = step > 0 ? D : bin('-', D, sym_num(1));
		/* negative numbers count from the end; clamped to the extent */
		if (!s.t && s.v < 0)
			s = s.v < -big ? lo : bin('+', D, s);
		if (!e.t && e.v < 0)
			e = e.v < -big ? lo : bin('+', D, e);
		/* (a symbolic one is taken to be above lo: sizes are not
		 * negative) */
		if (!s.t && s.v < lo.v)
			s = lo;
		if (!e.t && e.v < lo.v)
			e = lo;
		s = !s.t && s.v > big ? hi : bin('m', s, hi);
		e = !e.t && e.v > big ? hi : bin('m', e, hi);
		Sym ext = step > 0 ? bin('/', bin('+', bin('-', e, s), sym_num(step - 1)), sym_num(step)) :
		    bin('/', bin('+', bin('-', s, e), sym_num(-step - 1)), sym_num(-step));
		if (!ext.t && ext.v < 0)
			ext = sym_num(0);
		set_dim(y, d, ext);
		idx[d] = arena_printf(perm, "%s %c %lld * _a%d", sym_text(s), step > 0 ? '+' : '-',
		    (long long)(step > 0 ? step : -step), d);
	}
	emit_rule(g, y, emit_at(g, x, idx));
	return true;
}

static bool
op_gather(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *iv = emit_in(g, n, 1);
	int64_t a = model_attr_int(n, "axis", 0);
	a = a < 0 ? a + x->ndims : a;
	if (!iv || a < 0 || a >= x->ndims || x->ndims + iv->ndims - 1 > 8 ||
	    (iv->dtype != OT_INT64 && iv->dtype != OT_INT32)) {
		graph_error(g, n, "needs integer indices and an axis within the data's rank");
		return false;
	}
	int r = x->ndims + iv->ndims - 1, k = 0;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	const char *idx[8], *ii[8];
	for (int d = 0; d < x->ndims; d++) {
		if (d != a) {
			graph_set_dim(y, k, x->dimv[d], x->dim[d]);
			idx[d] = ax(k++);
			continue;
		}
		for (int j = 0; j < iv->ndims; j++) {
			graph_set_dim(y, k, iv->dimv[j], iv->dim[j]);
			ii[j] = ax(k++);
		}
	}
	int cnt;
	Sym *s = graph_syms(iv, &cnt);
	const char *D = x->dim[a];
	if (s && cnt == 1) {
		/* one known index: negative counts from the end */
		Sym at = s[0];
		if (!at.t && at.v < 0)
			at = bin('+', dim_sym(x, (int)a), at);
		if (!at.t && x->dimv[a] >= 0 && (at.v < 0 || at.v >= x->dimv[a])) {
			graph_error(g, n, "index %lld is out of range (extent %lld)", (long long)s[0].v,
			    (long long)x->dimv[a]);
			return false;
		}
		idx[a] = sym_text(at);
		if (at.t) {
			/* (T - 1 is in bounds where T >= 1) */
			const char *zero = x->dtype == OT_FLOAT || x->dtype == OT_DOUBLE ? "0.0" :
			    arena_printf(perm, "%s(0)", graph_type(x->dtype));
			emit_rule(g, y, arena_printf(perm, "%s >= 0 && %s < %s ? %s : %s", idx[a], idx[a], D,
			    emit_at(g, x, idx), zero));
			return true;
		}
	} else {
		const char *i = emit_at(g, iv, ii);
		idx[a] = arena_printf(perm, "clamp(%s < 0 ? %s + %s : %s, 0, %s - 1)", i, i, D, i, D);
	}
	emit_rule(g, y, emit_at(g, x, idx));
	return true;
}

/* Expand: numpy's broadcast of x and a shape; Tile: x repeated */
static bool
op_expand(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	bool tile = n->op[0] == 'T', given;
	int ns;
	Sym *s = int_arg(g, n, NULL, 1, &ns, &given, !tile);
	if (!s)
		return false;
	int r = tile ? x->ndims : (ns > x->ndims ? ns : x->ndims);
	if (r > 8 || (tile && ns != x->ndims)) {
		graph_error(g, n, tile ? "%d repeats for rank %d" : "%d extents for rank %d", ns, x->ndims);
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, r);
	const char *idx[8];
	for (int d = 0; d < r; d++) {
		int xd = d - (r - x->ndims), sd = d - (r - ns);
		Sym xs = xd >= 0 ? dim_sym(x, xd) : sym_num(1), ss = sd >= 0 ? s[sd] : sym_num(1);
		if (tile) {
			if (ss.v < 0 || ss.v > INT64_C(1) << 30) {
				graph_error(g, n, "repeat %lld", (long long)ss.v);
				return false;
			}
			set_dim(y, d, bin('*', xs, ss));
			idx[xd] = ss.v == 1 ? ax(d) : arena_printf(perm, "_a%d %% %s", d, x->dim[xd]);
			continue;
		}
		/* an extent of 1 takes the other's */
		bool one = !xs.t && xs.v == 1;
		set_dim(y, d, one ? ss : xs);
		if (xd >= 0)
			idx[xd] = one && !(!ss.t && ss.v == 1) ? "0" : ax(d);
		if (!one && !(!ss.t && ss.v == 1) && !sym_same(xs, ss)) {
			graph_error(g, n, "extent %s does not broadcast to %s", sym_text(xs), sym_text(ss));
			return false;
		}
	}
	emit_rule(g, y, emit_at(g, x, idx));
	return true;
}

static const char *
literal(Graph *g, OnnxNode *n, const OnnxTensor *t, int *dtype)
{
	*dtype = t ? t->dtype : OT_FLOAT;
	if (!t)
		return "0.0";
	int size = model_elem_size(t->dtype);
	if (!size || t->len != (size_t)size || !graph_type(t->dtype)) {
		graph_error(g, n, "its value must be one number");
		return NULL;
	}
	if (t->dtype == OT_FLOAT || t->dtype == OT_DOUBLE) {
		double v;
		float f;
		if (t->dtype == OT_FLOAT) {
			memcpy(&f, t->data, 4);
			v = f;
		} else {
			memcpy(&v, t->data, 8);
		}
		const char *s = graph_float(v);
		if (!s)
			graph_error(g, n, "its value is not finite");
		return s;
	}
	Val tmp = { .dtype = t->dtype, .cdata = t->data, .clen = t->len };
	int cnt;
	Sym *s = graph_syms(&tmp, &cnt);
	if (!s) {
		graph_error(g, n, "a value of a type txc does not take");
		return NULL;
	}
	if (t->dtype == OT_BOOL)
		return s[0].v ? "true" : "false";
	return arena_printf(perm, "%s(%lld)", graph_type(t->dtype), (long long)s[0].v);
}

static bool
op_cos(Graph *g, OnnxNode *n)
{
	int ns;
	bool given;
	Sym *s = int_arg(g, n, NULL, 0, &ns, &given, true);
	if (!s)
		return false;
	OnnxAttr *a = model_attr(n, "value");
	int dtype;
	const char *lit = literal(g, n, a ? a->t : NULL, &dtype);
	if (!lit)
		return false;
	if (ns > 8) {
		graph_error(g, n, "more than 8 dimensions");
		return false;
	}
	Val *y = emit_result(g, n, 0, dtype, ns);
	for (int d = 0; d < ns; d++)
		set_dim(y, d, s[d]);
	emit_rule(g, y, lit);
	return true;
}

static bool
op_range(Graph *g, OnnxNode *n)
{
	Val *v0 = emit_in(g, n, 0);
	Sym *s[3];
	const char *t[3];
	double f[3];
	bool flt = v0->dtype == OT_FLOAT || v0->dtype == OT_DOUBLE;
	for (int i = 0; i < 3; i++) {
		Val *v = emit_in(g, n, i);
		int cnt = 0;
		s[i] = v ? graph_syms(v, &cnt) : NULL;
		if (flt && v && v->cdata && v->dtype == v0->dtype && graph_numel(v) == 1) {
			float x;
			if (v->dtype == OT_FLOAT)
				memcpy(&x, v->cdata, 4), f[i] = x;
			else
				memcpy(&f[i], v->cdata, 8);
			t[i] = graph_float(f[i]);
		} else if (!flt && s[i] && cnt == 1 && (i < 2 || !s[i][0].t)) {
			t[i] = sym_text(s[i][0]);
		} else {
			graph_error(g, n, "its start, limit and delta must be known scalars (the delta a "
			    "number)");
			return false;
		}
	}
	Val *y = emit_result(g, n, 0, v0->dtype, 1);
	if (flt) {
		double c = ceil((f[1] - f[0]) / f[2]);
		if (!(c >= 0 && c < 1e9) || !t[0] || !t[2]) {
			graph_error(g, n, "a range of %g elements", c);
			return false;
		}
		graph_set_dim(y, 0, (int64_t)c, NULL);
	} else {
		int64_t d = s[2][0].v;
		if (!d || d > INT64_C(1) << 30 || d < -(INT64_C(1) << 30)) {
			graph_error(g, n, "delta %lld", (long long)d);
			return false;
		}
		Sym span = d > 0 ? bin('-', s[1][0], s[0][0]) : bin('-', s[0][0], s[1][0]);
		Sym c = bin('M', bin('/', bin('+', span, sym_num((d > 0 ? d : -d) - 1)),
		    sym_num(d > 0 ? d : -d)), sym_num(0));
		set_dim(y, 0, c);
	}
	emit_rule(g, y, flt ? arena_printf(perm, "%s + %s(_a0) * %s", t[0], graph_type(v0->dtype), t[2]) :
	    arena_printf(perm, "%s(%s + _a0 * %s)", graph_type(v0->dtype), t[0], t[2]));
	return true;
}

bool
index_broadcast(Graph *g, OnnxNode *n, int from, int upto, Val *y)
{
	for (int d = 0; d < y->ndims; d++) {
		graph_set_dim(y, d, 1, NULL);
		for (int i = from; i < upto; i++) {
			Val *v = emit_in(g, n, i);
			int k = d - (y->ndims - v->ndims);
			if (k < 0 || v->dimv[k] == 1)
				continue;
			if (y->dimv[d] != 1 && strcmp(y->dim[d], v->dim[k])) {
				graph_error(g, n, "inputs of extents %s and %s do not broadcast", y->dim[d],
				    v->dim[k]);
				return false;
			}
			graph_set_dim(y, d, v->dimv[k], v->dim[k]);
		}
	}
	return true;
}

/* Where, the comparisons, And, Or, Xor, Not */
static bool
op_select(Graph *g, OnnxNode *n)
{
	static const struct { const char *op, *fmt; int arity; } ops[] = {
		{ "Where", "%s ? %s : %s", 3 }, { "Equal", "%s == %s", 2 }, { "Less", "%s < %s", 2 },
		{ "LessOrEqual", "%s <= %s", 2 }, { "Greater", "%s > %s", 2 },
		{ "GreaterOrEqual", "%s >= %s", 2 }, { "And", "%s && %s", 2 }, { "Or", "%s || %s", 2 },
		{ "Xor", "%s != %s", 2 }, { "Not", "!%s", 1 },
	};
	size_t k = 0;
	while (strcmp(ops[k].op, n->op))
		k++;
	int r = 0;
	for (int i = 0; i < ops[k].arity; i++) {
		Val *v = emit_in(g, n, i);
		if (!v) {
			graph_error(g, n, "it needs %d inputs", ops[k].arity);
			return false;
		}
		r = v->ndims > r ? v->ndims : r;
	}
	bool logic = k >= 6;
	if ((k == 0 && emit_in(g, n, 0)->dtype != OT_BOOL) || (logic && (emit_in(g, n, 0)->dtype !=
	    OT_BOOL || emit_in(g, n, ops[k].arity - 1)->dtype != OT_BOOL))) {
		graph_error(g, n, "its condition or operands must be bool");
		return false;
	}
	Val *y = emit_result(g, n, 0, k ? OT_BOOL : emit_in(g, n, 1)->dtype, r);
	if (!index_broadcast(g, n, 0, ops[k].arity, y))
		return false;
	const char *e[3];
	for (int i = 0; i < ops[k].arity; i++)
		e[i] = arena_printf(perm, "(%s)", emit_bread(g, emit_in(g, n, i), y));
	emit_rule(g, y, ops[k].arity == 1 ? arena_printf(perm, ops[k].fmt, e[0]) :
	    ops[k].arity == 2 ? arena_printf(perm, ops[k].fmt, e[0], e[1]) :
	    arena_printf(perm, ops[k].fmt, e[0], e[1], e[2]));
	return true;
}

static bool
op_pad(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	bool given, old = model_attr(n, "pads") != NULL;
	int np, r = x->ndims, axes[8];
	Sym *p = int_arg(g, n, old ? "pads" : NULL, 1, &np, &given, false);
	if (!p)
		return false;
	if (np % 2 || np / 2 > r || !axes_of(g, n, NULL, old ? 99 : 3, r, np / 2, axes)) {
		if (!g->errors)
			graph_error(g, n, "%d pads for rank %d", np, r);
		return false;
	}
	OnnxAttr *ma = model_attr(n, "mode");
	const char *mode = ma && ma->s ? ma->s : "constant";
	const char *value = x->dtype == OT_FLOAT || x->dtype == OT_DOUBLE ? "0.0" :
	    arena_printf(perm, "%s(0)", graph_type(x->dtype));
	if (old) {
		value = graph_float(model_attr_float(n, "value", 0.0));
	} else if (emit_in(g, n, 2)) {
		Val *c = emit_in(g, n, 2);
		value = NULL;
		if (c->cdata && graph_numel(c) == 1 && c->dtype == x->dtype) {
			int dt;
			OnnxTensor t = { .dtype = c->dtype, .data = c->cdata, .len = c->clen };
			value = literal(g, n, &t, &dt);
		}
		if (!value) {
			if (!g->errors)
				graph_error(g, n, "its constant value must be known");
			return false;
		}
	}
	bool constant = !strcmp(mode, "constant"), reflect = !strcmp(mode, "reflect");
	if (!constant && !reflect && strcmp(mode, "edge")) {
		graph_error(g, n, "mode '%s' is not supported", mode);
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, r);
	emit_copy_dims(y, x);
	const char *idx[8], *guard = NULL;
	for (int d = 0; d < r; d++)
		idx[d] = ax(d);
	for (int k = 0; k < np / 2; k++) {
		int d = axes[k];
		int64_t b = p[k].v, e = p[k + np / 2].v;
		if (b > INT64_C(1) << 30 || b < -(INT64_C(1) << 30) || e > INT64_C(1) << 30 ||
		    e < -(INT64_C(1) << 30)) {
			graph_error(g, n, "pads %lld %lld", (long long)b, (long long)e);
			return false;
		}
		set_dim(y, d, bin('+', dim_sym(x, d), sym_num(b + e)));
		const char *at = arena_printf(perm, "_a%d - %lld", d, (long long)b), *D = x->dim[d];
		if (constant) {
			idx[d] = at;
			const char *gd = arena_printf(perm, "%s >= 0 && %s < %s", at, at, D);
			if (b > 0 || e > 0)
				guard = guard ? arena_printf(perm, "%s && %s", guard, gd) : gd;
		} else if (reflect) {
			idx[d] = arena_printf(perm, "clamp(%s < 0 ? 0 - (%s) : (%s >= %s ? 2 * %s - 2 - (%s) : "
			    "%s), 0, %s - 1)", at, at, at, D, D, at, at, D);
		} else {
			idx[d] = arena_printf(perm, "clamp(%s, 0, %s - 1)", at, D);
		}
	}
	const char *rd = emit_at(g, x, idx);
	if (guard && x->dtype != OT_FLOAT && x->dtype != OT_DOUBLE && strchr(value, '.'))
		value = arena_printf(perm, "%s(%s)", graph_type(x->dtype), value);
	emit_rule(g, y, guard ? arena_printf(perm, "%s ? %s : %s", guard, rd, value) : rd);
	return true;
}

static bool
op_split(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	int64_t a = model_attr_int(n, "axis", 0);
	a = a < 0 ? a + x->ndims : a;
	bool given;
	int ns;
	Sym *s = int_arg(g, n, "split", 1, &ns, &given, false);
	if (given && !s)
		return false;
	if (a < 0 || a >= x->ndims || (given && ns != n->nout) || n->nout < 1) {
		graph_error(g, n, "axis %lld and %d sizes for %d outputs", (long long)a, ns, n->nout);
		return false;
	}
	Sym D = dim_sym(x, (int)a), off = sym_num(0);
	if (!given) {
		/* equal parts, the last smaller (opset 18's num_outputs) */
		Sym part = bin('/', bin('+', D, sym_num(n->nout - 1)), sym_num(n->nout));
		s = arena_alloc(perm, (size_t)n->nout * sizeof *s);
		for (int k = 0; k < n->nout; k++)
			s[k] = k < n->nout - 1 ? part : bin('-', D, bin('*', part, sym_num(n->nout - 1)));
	}
	for (int k = 0; k < n->nout; k++) {
		if (!*n->out[k]) {
			off = bin('+', off, s[k]);
			continue;
		}
		Val *y = emit_result(g, n, k, x->dtype, x->ndims);
		emit_copy_dims(y, x);
		set_dim(y, (int)a, s[k]);
		const char *idx[8];
		for (int d = 0; d < x->ndims; d++)
			idx[d] = d == a ? arena_printf(perm, "_a%d + %s", d, sym_text(off)) : ax(d);
		emit_rule(g, y, emit_at(g, x, idx));
		off = bin('+', off, s[k]);
	}
	return true;
}

bool
index_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled)
{
	static const struct { const char *op; bool (*fn)(Graph *, OnnxNode *); } table[] = {
		{ "Slice", op_slice }, { "Gather", op_gather }, { "Expand", op_expand },
		{ "Tile", op_expand }, { "ConstantOfShape", op_cos }, { "Range", op_range },
		{ "Where", op_select }, { "Equal", op_select }, { "Less", op_select },
		{ "LessOrEqual", op_select }, { "Greater", op_select },
		{ "GreaterOrEqual", op_select }, { "And", op_select }, { "Or", op_select },
		{ "Xor", op_select }, { "Not", op_select }, { "Pad", op_pad }, { "Split", op_split },
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
