/* norm.c: LayerNormalization, InstanceNormalization, Gelu and MatMul
 * with a vector operand as .tx stages.
 *
 * LayerNormalization normalizes over the axes from `axis` on: a stage of
 * means, one of variances about them, then the result, scaled and shifted
 * by its Scale and B read with numpy's broadcast over those axes (and
 * its Mean and InvStdDev outputs where they are asked for).  Gelu
 * is opset 20's (erf, or the tanh approximation).  MatMul of a vector is
 * numpy's: a 1-D first operand is a row, a 1-D second one a column, and
 * the dimension they add is dropped.
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

/* a stage of x's shape with extent 1 from axis on, reducing over them */
static Val *
reduced(Graph *g, Val *x, int axis, const char *name, const char *body_fmt, Val *mean)
{
	Val *v = graph_new_val(g, name, x->dtype, x->ndims);
	const char *idx[8], *ranges = "", *mi[8];
	for (int d = 0; d < x->ndims; d++) {
		if (d < axis) {
			graph_set_dim(v, d, x->dimv[d], x->dim[d]);
			idx[d] = mi[d] = ax(d);
		} else {
			graph_set_dim(v, d, 1, NULL);
			idx[d] = arena_printf(perm, "_r%d", d - axis);
			mi[d] = "0";
			ranges = arena_printf(perm, "%s%s_r%d < %s", ranges, d > axis ? ", " : "", d - axis,
			    x->dim[d]);
		}
	}
	const char *xr = emit_at(g, x, idx);
	const char *body = mean ? arena_printf(perm, body_fmt, xr, emit_at(g, mean, mi), xr,
	    emit_at(g, mean, mi)) : arena_printf(perm, body_fmt, xr);
	emit_rule(g, v, arena_printf(perm, "sum(%s) %s", ranges, body));
	return v;
}

static bool
op_layernorm(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *sc = emit_in(g, n, 1), *b = emit_in(g, n, 2);
	int64_t axis = model_attr_int(n, "axis", -1);
	axis = axis < 0 ? axis + x->ndims : axis;
	double eps = model_attr_float(n, "epsilon", 1e-5);
	if (axis < 0 || axis >= x->ndims || !sc || !graph_float(eps) ||
	    (x->dtype != OT_FLOAT && x->dtype != OT_DOUBLE)) {
		graph_error(g, n, "needs a float input, a Scale and an axis within its rank");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	for (int i = 1; i < 3; i++) {
		Val *p = emit_in(g, n, i);
		if (p && p->ndims > x->ndims - axis) {
			graph_error(g, n, "its Scale or B has rank %d, above the %lld normalized axes",
			    p->ndims, (long long)(x->ndims - axis));
			return false;
		}
	}
	const char *cnt = "1";
	for (int d = (int)axis; d < x->ndims; d++)
		cnt = arena_printf(perm, "%s * %s", cnt, x->dim[d]);
	const char *T = graph_type(x->dtype);
	Val *s = reduced(g, x, (int)axis, arena_printf(perm, "%s_sum", y->tx), "%s", NULL);
	Val *m = graph_new_val(g, arena_printf(perm, "%s_mean", y->tx), x->dtype, x->ndims);
	emit_copy_dims(m, s);
	emit_rule(g, m, arena_printf(perm, "%s[%s] / %s(%s)", graph_use(g, s), emit_axes(x->ndims),
	    T, cnt));
	Val *v = reduced(g, x, (int)axis, arena_printf(perm, "%s_var", y->tx), "(%s - %s) * (%s - %s)",
	    m);
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	const char *e = arena_printf(perm, "(%s - %s) / sqrt(%s / %s(%s) + %s)", emit_at(g, x, xi),
	    emit_bread(g, m, y), emit_bread(g, v, y), T, cnt, graph_float(eps));
	e = arena_printf(perm, "%s * %s", e, emit_bread(g, sc, y));
	if (b)
		e = arena_printf(perm, "%s + %s", e, emit_bread(g, b, y));
	emit_rule(g, y, e);
	/* the Mean and InvStdDev outputs: of the reduced shape */
	for (int k = 1; k < 3 && k < n->nout; k++) {
		if (!*n->out[k])
			continue;
		Val *o = emit_result(g, n, k, x->dtype, x->ndims);
		emit_copy_dims(o, s);
		const char *at = emit_axes(x->ndims);
		emit_rule(g, o, k == 1 ? arena_printf(perm, "%s[%s]", graph_use(g, m), at) :
		    arena_printf(perm, "1.0 / sqrt(%s[%s] / %s(%s) + %s)", graph_use(g, v), at, T, cnt,
		    graph_float(eps)));
	}
	return true;
}

/* InstanceNormalization: x [N, C, D...] normalized over D... for each
 * sample and channel, then scaled and shifted by channel */
static bool
op_instancenorm(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0), *sc = emit_in(g, n, 1), *b = emit_in(g, n, 2);
	double eps = model_attr_float(n, "epsilon", 1e-5);
	if (!x || x->ndims < 3 || !sc || !b || sc->ndims != 1 || b->ndims != 1 ||
	    !graph_float(eps) || (x->dtype != OT_FLOAT && x->dtype != OT_DOUBLE)) {
		graph_error(g, n, "needs a float input [N, C, D...] and a scale and B of [C]");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	const char *cnt = "1";
	for (int d = 2; d < x->ndims; d++)
		cnt = arena_printf(perm, "%s * %s", cnt, x->dim[d]);
	const char *T = graph_type(x->dtype);
	Val *s = reduced(g, x, 2, arena_printf(perm, "%s_sum", y->tx), "%s", NULL);
	Val *m = graph_new_val(g, arena_printf(perm, "%s_mean", y->tx), x->dtype, x->ndims);
	emit_copy_dims(m, s);
	emit_rule(g, m, arena_printf(perm, "%s[%s] / %s(%s)", graph_use(g, s), emit_axes(x->ndims),
	    T, cnt));
	Val *v = reduced(g, x, 2, arena_printf(perm, "%s_var", y->tx), "(%s - %s) * (%s - %s)", m);
	const char *xi[8], *ci[1] = { "_a1" };
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	emit_rule(g, y, arena_printf(perm, "(%s - %s) / sqrt(%s / %s(%s) + %s) * %s + %s",
	    emit_at(g, x, xi), emit_bread(g, m, y), emit_bread(g, v, y), T, cnt, graph_float(eps),
	    emit_at(g, sc, ci), emit_at(g, b, ci)));
	return true;
}

static bool
op_gelu(Graph *g, OnnxNode *n)
{
	Val *x = emit_in(g, n, 0);
	OnnxAttr *a = model_attr(n, "approximate");
	bool tanh_ = a && a->s && !strcmp(a->s, "tanh");
	if (a && a->s && !tanh_ && strcmp(a->s, "none")) {
		graph_error(g, n, "approximate '%s' is not supported", a->s);
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	const char *v = emit_at(g, x, xi);
	emit_rule(g, y, tanh_ ? arena_printf(perm, "0.5 * %s * (1.0 + tanh(0.7978845608 * (%s + "
	    "0.044715 * %s * %s * %s)))", v, v, v, v, v) :
	    arena_printf(perm, "0.5 * %s * (1.0 + erf(%s * 0.70710678118654752))", v, v));
	return true;
}

/* MatMul with a 1-D operand */
static bool
op_matvec(Graph *g, OnnxNode *n)
{
	Val *a = emit_in(g, n, 0), *b = emit_in(g, n, 1);
	bool va = a->ndims == 1, vb = b->ndims == 1;
	/* as matrices: a [..., M, K] (M absent when va), b [..., K, N] */
	int ka = a->ndims - 1, kb = vb ? 0 : b->ndims - 2;
	int ba = va ? 0 : a->ndims - 2, bb = vb ? 0 : b->ndims - 2;   /* batch ranks */
	int br = ba > bb ? ba : bb;
	int r = br + !va + !vb;
	if (strcmp(a->dim[ka], b->dim[kb])) {
		graph_error(g, n, "inner extents %s and %s differ", a->dim[ka], b->dim[kb]);
		return false;
	}
	Val *y = emit_result(g, n, 0, a->dtype, r);
	const char *ia[8], *ib[8];
	for (int d = 0; d < br; d++) {
		int da = d - (br - ba), db = d - (br - bb);
		Val *src = da >= 0 && a->dimv[da] != 1 ? a : b;
		int ds = src == a ? da : db;
		if (ds < 0)
			graph_set_dim(y, d, 1, NULL);
		else
			graph_set_dim(y, d, src->dimv[ds], src->dim[ds]);
		if (da >= 0)
			ia[da] = a->dimv[da] == 1 && y->dimv[d] != 1 ? "0" : ax(d);
		if (db >= 0)
			ib[db] = b->dimv[db] == 1 && y->dimv[d] != 1 ? "0" : ax(d);
	}
	int k = br;
	if (!va) {
		graph_set_dim(y, k, a->dimv[ka - 1], a->dim[ka - 1]);
		ia[ka - 1] = ax(k++);
	}
	if (!vb) {
		graph_set_dim(y, k, b->dimv[b->ndims - 1], b->dim[b->ndims - 1]);
		ib[b->ndims - 1] = ax(k++);
	}
	ia[ka] = "_r0";
	ib[kb] = "_r0";
	emit_rule(g, y, arena_printf(perm, "sum(_r0 < %s) %s * %s", a->dim[ka], emit_at(g, a, ia),
	    emit_at(g, b, ib)));
	return true;
}

bool
norm_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled)
{
	(void)unsupported;
	*handled = true;
	if (!strcmp(n->op, "LayerNormalization"))
		return op_layernorm(g, n);
	if (!strcmp(n->op, "Gelu"))
		return op_gelu(g, n);
	if (!strcmp(n->op, "InstanceNormalization"))
		return op_instancenorm(g, n);
	Val *b = emit_in(g, n, 1);
	if (!strcmp(n->op, "MatMul") && b && (emit_in(g, n, 0)->ndims == 1 || b->ndims == 1) &&
	    emit_in(g, n, 0)->ndims >= 1 && b->ndims >= 1)
		return op_matvec(g, n);
	*handled = false;
	return false;
}
