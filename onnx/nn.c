/* nn.c: the network operators of ONNX as .tx stages: MatMul, Gemm, Conv
 * (with a BatchNormalization that follows it folded in), pooling,
 * BatchNormalization, Softmax and the reductions (ops.c dispatches to
 * them; see its top comment for which call the stdlib).
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

/* output extent of a window: (X + pb + pe - dil * (k - 1) - 1) / s + 1,
 * rounded up with ceil */
static void
window_dim(Val *y, int d, Val *x, int xd, int64_t pb, int64_t pe, int64_t k, int64_t dil,
    int64_t s, bool ceil_)
{
	int64_t span = dil * (k - 1) + 1;
	if (x->dimv[xd] >= 0) {
		int64_t t = x->dimv[xd] + pb + pe - span;
		int64_t v = t < 0 ? 0 : (ceil_ ? (t + s - 1) / s : t / s) + 1;
		if (ceil_ && v > 0 && (v - 1) * s >= x->dimv[xd] + pb)
			v--;
		graph_set_dim(y, d, v, NULL);
	} else {
		graph_set_dim(y, d, -1, arena_printf(perm, "((%s + %lld - %lld%s) / %lld + 1)",
		    x->dim[xd], (long long)(pb + pe), (long long)span,
		    ceil_ ? arena_printf(perm, " + %lld", (long long)(s - 1)) : "", (long long)s));
	}
}

typedef struct {
	int sp;                  /* spatial dimensions: 1 or 2 */
	int64_t k[2], s[2], dl[2], pb[2], pe[2];
} Window;

static bool
window(Graph *g, OnnxNode *n, Val *x, const int64_t *kshape, Window *w)
{
	w->sp = x->ndims - 2;
	if (w->sp < 1 || w->sp > 2) {
		graph_error(g, n, "only 1-D and 2-D windows are supported (input of rank %d)", x->ndims);
		return false;
	}
	OnnxAttr *st = model_attr(n, "strides"), *dl = model_attr(n, "dilations"),
	    *pd = model_attr(n, "pads");
	const char *autopad = model_attr(n, "auto_pad") ? model_attr(n, "auto_pad")->s : "NOTSET";
	for (int i = 0; i < w->sp; i++) {
		w->k[i] = kshape[i];
		w->s[i] = st && st->nints == w->sp ? st->ints[i] : 1;
		w->dl[i] = dl && dl->nints == w->sp ? dl->ints[i] : 1;
		w->pb[i] = pd && pd->nints == 2 * w->sp ? pd->ints[i] : 0;
		w->pe[i] = pd && pd->nints == 2 * w->sp ? pd->ints[i + w->sp] : 0;
		const int64_t big = INT64_C(1) << 20;
		if (w->k[i] < 1 || w->s[i] < 1 || w->dl[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0 ||
		    w->k[i] > big || w->s[i] > big || w->dl[i] > big || w->pb[i] > big ||
		    w->pe[i] > big) {
			graph_error(g, n, "bad window: kernel %lld, stride %lld, dilation %lld, pads %lld %lld",
			    (long long)w->k[i], (long long)w->s[i], (long long)w->dl[i],
			    (long long)w->pb[i], (long long)w->pe[i]);
			return false;
		}
		if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
			int64_t X = x->dimv[2 + i];
			if (X < 0) {
				graph_error(g, n, "auto_pad %s needs static extents", autopad);
				return false;
			}
			int64_t out = (X + w->s[i] - 1) / w->s[i];
			int64_t tot = (out - 1) * w->s[i] + (w->k[i] - 1) * w->dl[i] + 1 - X;
			tot = tot < 0 ? 0 : tot;
			w->pb[i] = autopad[5] == 'L' ? (tot + 1) / 2 : tot / 2;
			w->pe[i] = tot - w->pb[i];
		} else if (!strcmp(autopad, "VALID")) {
			w->pb[i] = w->pe[i] = 0;
		}
	}
	return true;
}

/* The input position of output axis d + window axis r, and its guard. */
static const char *
wpos(Window *w, int i, int d, int r)
{
	return arena_printf(perm, "%lld * _a%d + %lld * _r%d - %lld", (long long)w->s[i], d,
	    (long long)w->dl[i], r, (long long)w->pb[i]);
}

static const char *
wguard(Window *w, Val *x, int i, int d, int r)
{
	if (!w->pb[i] && !w->pe[i])
		return NULL;
	const char *p = arena_printf(perm, "%lld * _a%d + %lld * _r%d", (long long)w->s[i], d,
	    (long long)w->dl[i], r);
	return arena_printf(perm, "%s >= %lld && %s < %s + %lld", p, (long long)w->pb[i], p,
	    x->dim[2 + i], (long long)w->pb[i]);
}

/* A strided window over a dynamic extent X without a guard reads at
 * most X - 1, which txc's prover cannot see through the floor division
 * of the output's extent (2 * ((H + 1) / 4) <= (H + 1) / 2): said with a
 * min that never changes the index. */
static const char *
wlast(Window *w, Val *x, int i, const char *pos, const char *guard)
{
	if (guard || w->s[i] == 1 || x->dimv[2 + i] >= 0)
		return pos;
	return arena_printf(perm, "min(%s, %s - 1)", pos, x->dim[2 + i]);
}

/* The BatchNormalization that alone reads the result of Conv n, when
 * its statistics are known vectors of K floats; else NULL. */
static OnnxNode *
bn_after(Graph *g, OnnxNode *n, int64_t K)
{
	OnnxModel *m = g->m;
	const char *o = n->out[0];
	OnnxNode *use = NULL;
	for (int k = 0; k < m->noutputs; k++)
		if (!strcmp(m->outputs[k].name, o))
			return NULL;
	for (int i = (int)(n - m->nodes) + 1; i < m->nnodes; i++)
		for (int j = 0; j < m->nodes[i].nin; j++)
			if (!strcmp(m->nodes[i].in[j], o)) {
				if (use || j)
					return NULL;
				use = &m->nodes[i];
			}
	if (!use || strcmp(use->op, "BatchNormalization") || (*use->domain &&
	    strcmp(use->domain, "ai.onnx")) || use->nin < 5 || use->nout < 1 || !*use->out[0] ||
	    model_attr_int(use, "training_mode", 0))
		return NULL;
	for (int k = 1; k < use->nout; k++)
		if (*use->out[k])
			return NULL;
	for (int i = 1; i < 5; i++) {
		Val *v = emit_in(g, use, i);
		if (!v || !v->cdata || v->dtype != OT_FLOAT || v->ndims != 1 || v->dimv[0] != K)
			return NULL;
	}
	return use;
}

/* Conv then BatchNormalization with known statistics: the scale of each
 * output channel, s / sqrt(var + eps), multiplies its weights, and its
 * bias becomes (b - mean) * scale + beta; the BatchNormalization's result
 * is the Conv's.  The weights (and the bias, when there is one) must be
 * known floats. */
static void
bn_fold(Graph *g, OnnxNode *bn, Val **wt, Val **b, int64_t K)
{
	double eps = model_attr_float(bn, "epsilon", 1e-5);
	Val *v[4];
	for (int i = 0; i < 4; i++)
		v[i] = emit_in(g, bn, 1 + i);
	size_t per = (*wt)->clen / 4 / (size_t)K;
	float *w = arena_alloc(perm, (*wt)->clen + 4), *nb = arena_alloc(perm, (size_t)K * 4 + 4);
	for (int64_t k = 0; k < K; k++) {
		float s, beta, mean, var, bias = 0;
		memcpy(&s, v[0]->cdata + 4 * k, 4);
		memcpy(&beta, v[1]->cdata + 4 * k, 4);
		memcpy(&mean, v[2]->cdata + 4 * k, 4);
		memcpy(&var, v[3]->cdata + 4 * k, 4);
		if (*b)
			memcpy(&bias, (*b)->cdata + 4 * k, 4);
		double sc = s / sqrt((double)var + eps);
		for (size_t i = 0; i < per; i++) {
			float x;
			memcpy(&x, (*wt)->cdata + 4 * (k * per + i), 4);
			w[k * per + i] = (float)(x * sc);
		}
		nb[k] = (float)((bias - (double)mean) * sc + beta);
	}
	Val *fw = graph_new_val(g, arena_printf(perm, "\x01%s_bn", (*wt)->tx), OT_FLOAT,
	    (*wt)->ndims);
	emit_copy_dims(fw, *wt);
	fw->cdata = (unsigned char *)w;
	fw->clen = (*wt)->clen;
	fw->defined = true;
	Val *fb = graph_new_val(g, arena_printf(perm, "\x01%s_bias", fw->tx), OT_FLOAT, 1);
	graph_set_dim(fb, 0, K, NULL);
	fb->cdata = (unsigned char *)nb;
	fb->clen = (size_t)K * 4;
	fb->defined = true;
	*wt = fw;
	*b = fb;
	bn->folded = true;
}

bool
nn_conv(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0), *wt = emit_in(g, n, 1), *b = emit_in(g, n, 2);
	(void)unsupported;
	if (!wt || wt->ndims != x->ndims || wt->dimv[0] < 0) {
		graph_error(g, n, "the weights must have the input's rank and a known extent");
		return false;
	}
	OnnxNode *bn = NULL;
	if (wt->cdata && wt->dtype == OT_FLOAT && x->dtype == OT_FLOAT && wt->dimv[0] > 0 &&
	    (!b || (b->cdata && b->dtype == OT_FLOAT && b->ndims == 1 && b->dimv[0] == wt->dimv[0])))
		bn = bn_after(g, n, wt->dimv[0]);
	if (bn)
		bn_fold(g, bn, &wt, &b, wt->dimv[0]);
	int64_t kshape[2] = { wt->ndims > 2 ? wt->dimv[2] : 1, wt->ndims > 3 ? wt->dimv[3] : 1 };
	Window w;
	if (!window(g, n, x, kshape, &w))
		return false;
	int64_t G = model_attr_int(n, "group", 1), K = wt->dimv[0], CG = wt->dimv[1];
	if (G < 1 || K % G || (x->dimv[1] >= 0 && x->dimv[1] != CG * G)) {
		graph_error(g, n, "group %lld does not fit %lld input and %lld output channels",
		    (long long)G, (long long)x->dimv[1], (long long)K);
		return false;
	}
	Val *y = emit_result(g, bn ? bn : n, 0, x->dtype, x->ndims);
	graph_set_dim(y, 0, x->dimv[0], x->dim[0]);
	graph_set_dim(y, 1, K, NULL);
	for (int i = 0; i < w.sp; i++)
		window_dim(y, 2 + i, x, 2 + i, w.pb[i], w.pe[i], w.k[i], w.dl[i], w.s[i], false);
	if (w.sp == 2 && layout_conv(g, x, wt, b, y, w.s, w.dl, w.pb, w.pe, G))
		return true;
	const char *conv_name = b ? graph_fresh(g, arena_printf(perm, "%s_conv", y->tx)) : y->tx;
	if (g->conv_calls && G == 1 && w.sp == 1 && w.pb[0] == w.pe[0] && !x->cb &&
	    (wt->cdata || !wt->cb)) {
		/* 1-D: the stdlib's 2-D call on [N, C, 1, L] and [K, C, 1, R]
		 * (an STFT's strided Conv1d of 512 taps, a wav2vec front end),
		 * whose schedule and blocked layout apply; written out, its
		 * stride-160 reads and [K, C, R] weights leave no unit-stride
		 * axis to vectorize (3.9 GFLOP/s) */
		/* the view of x, once for all the convolutions that read it
		 * (an STFT's real and imaginary parts) */
		const char *vname = arena_printf(perm, "\x01%s_2d", x->tx);
		Val *xv = graph_val(g, vname);
		if (!xv) {
			xv = graph_new_val(g, vname, x->dtype, 4);
			graph_set_dim(xv, 0, x->dimv[0], x->dim[0]);
			graph_set_dim(xv, 1, x->dimv[1], x->dim[1]);
			graph_set_dim(xv, 2, 1, NULL);
			graph_set_dim(xv, 3, x->dimv[2], x->dim[2]);
			xv->defined = true;
			const char *at3[3] = { "_a0", "_a1", "_a3" };
			emit_rule(g, xv, emit_at(g, x, at3));
		}
		const char *x4 = graph_use(g, xv);
		Val *w4 = graph_new_val(g, arena_printf(perm, "\x01%s_2d", wt->tx), wt->dtype, 4);
		graph_set_dim(w4, 0, wt->dimv[0], wt->dim[0]);
		graph_set_dim(w4, 1, wt->dimv[1], wt->dim[1]);
		graph_set_dim(w4, 2, 1, NULL);
		graph_set_dim(w4, 3, wt->dimv[2], wt->dim[2]);
		w4->defined = true;
		if (wt->cdata) {
			w4->cdata = wt->cdata;
			w4->clen = wt->clen;
		} else {
			const char *wat[3] = { "_a0", "_a1", "_a3" };
			emit_rule(g, w4, emit_at(g, wt, wat));
		}
		const char *c4 = graph_fresh(g, arena_printf(perm, "%s_2d", conv_name));
		g->imports[IMP_CONV2D] = true;
		fprintf(g->body, "  %s = conv2d_nchw_general(%s, %s, SH = 1, SW = %lld, PH = 0, "
		    "PW = %lld, DH = 1, DW = %lld);\n", c4, x4, graph_use(g, w4), (long long)w.s[0],
		    (long long)w.pb[0], (long long)w.dl[0]);
		Val tmp = *y;
		tmp.tx = conv_name;
		tmp.is_output = b ? false : y->is_output;
		tmp.declared = false;
		emit_rule(g, &tmp, arena_printf(perm, "%s[_a0, _a1, 0, _a2]", c4));
		if (!b)
			y->declared = tmp.declared;
	} else if (g->conv_calls && G == 1 && w.sp == 2 && w.pb[0] == w.pe[0] &&
	    w.pb[1] == w.pe[1]) {
		/* the stdlib's call reads NCHW: a blocked input (a convolution's
		 * result whose own output cannot be blocked, layout.c) is copied
		 * back first, a pass the call's layout turns into a transposing
		 * one; read in place, its block and lane indices would keep the
		 * sums from being a contraction (a naive nest, 40 x slower) */
		const char *xin = graph_use(g, x);
		if (x->cb) {
			const char *at[4] = { "_a0", "_a1", "_a2", "_a3" };
			xin = graph_fresh(g, arena_printf(perm, "%s_nchw", x->tx));
			fprintf(g->decls, "  %s: %s%s;\n", xin, graph_type(x->dtype), graph_shape(x));
			fprintf(g->body, "  %s[_a0, _a1, _a2, _a3] = %s;\n", xin, emit_at(g, x, at));
		}
		g->imports[IMP_CONV2D] = true;
		fprintf(g->body, "  %s = conv2d_nchw_general(%s, %s, SH = %lld, SW = %lld, PH = %lld, "
		    "PW = %lld, DH = %lld, DW = %lld);\n", conv_name, xin, graph_use(g, wt),
		    (long long)w.s[0], (long long)w.s[1], (long long)w.pb[0], (long long)w.pb[1],
		    (long long)w.dl[0], (long long)w.dl[1]);
		if (!b)
			y->declared = !y->is_output;
	} else {
		/* written out: groups, asymmetric padding, 1-D */
		const char *idx[4], *widx[4], *guard = NULL;
		int64_t KG = K / G;
		idx[0] = ax(0);
		idx[1] = G == 1 ? "_r0" : arena_printf(perm, "_a1 / %lld * %lld + _r0", (long long)KG,
		    (long long)CG);
		widx[0] = ax(1);
		widx[1] = "_r0";
		const char *ranges = arena_printf(perm, "_r0 < %lld", (long long)CG);
		for (int i = 0; i < w.sp; i++) {
			idx[2 + i] = wpos(&w, i, 2 + i, 1 + i);
			widx[2 + i] = arena_printf(perm, "_r%d", 1 + i);
			ranges = arena_printf(perm, "%s, _r%d < %lld", ranges, 1 + i, (long long)w.k[i]);
			const char *gi = wguard(&w, x, i, 2 + i, 1 + i);
			idx[2 + i] = wlast(&w, x, i, idx[2 + i], gi);
			if (gi)
				guard = guard ? arena_printf(perm, "%s && %s", guard, gi) : gi;
		}
		const char *rd = emit_at(g, x, idx);
		if (guard)
			rd = arena_printf(perm, "(%s ? %s : 0.0)", guard, rd);
		Val tmp = *y;
		tmp.tx = conv_name;
		tmp.is_output = b ? false : y->is_output;
		tmp.declared = false;
		emit_rule(g, &tmp, arena_printf(perm, "sum(%s) %s * %s", ranges, rd,
		    emit_at(g, wt, widx)));
		if (!b)
			y->declared = tmp.declared;
	}
	if (b) {
		const char *bi[1] = { "_a1" };
		emit_rule(g, y, arena_printf(perm, "%s[%s] + %s", conv_name, emit_axes(y->ndims),
		    emit_at(g, b, bi)));
	}
	return true;
}

bool
nn_pool(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	OnnxAttr *ks = model_attr(n, "kernel_shape");
	bool maxp = n->op[0] == 'M';
	(void)unsupported;
	if (!ks || ks->nints != x->ndims - 2) {
		graph_error(g, n, "kernel_shape must give one extent per spatial dimension");
		return false;
	}
	if (maxp && n->nout > 1 && *n->out[1]) {
		graph_error(g, n, "the Indices output is not supported");
		return false;
	}
	Window w;
	if (!window(g, n, x, ks->ints, &w))
		return false;
	bool ceil_ = model_attr_int(n, "ceil_mode", 0) != 0;
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	graph_set_dim(y, 0, x->dimv[0], x->dim[0]);
	graph_set_dim(y, 1, x->dimv[1], x->dim[1]);
	const char *idx[4] = { "_a0", "_a1" }, *ranges = "", *guard = NULL;
	for (int i = 0; i < w.sp; i++) {
		window_dim(y, 2 + i, x, 2 + i, w.pb[i], w.pe[i], w.k[i], w.dl[i], w.s[i], ceil_);
		idx[2 + i] = wpos(&w, i, 2 + i, i);
		ranges = arena_printf(perm, "%s%s_r%d < %lld", ranges, i ? ", " : "", i, (long long)w.k[i]);
		/* ceil_mode windows may pass the end: always guard then */
		const char *gi = ceil_ ? arena_printf(perm, "%s >= 0 && %s < %s", idx[2 + i], idx[2 + i],
		    x->dim[2 + i]) : wguard(&w, x, i, 2 + i, i);
		idx[2 + i] = wlast(&w, x, i, idx[2 + i], gi);
		if (gi)
			guard = guard ? arena_printf(perm, "%s && %s", guard, gi) : gi;
	}
	/* a blocked input keeps its layout through MaxPool: 16 channels a pixel */
	if (maxp && x->cb && layout_ok(y))
		y->cb = x->cb;
	const char *rd = y->cb ? layout_at(g, x, (const char *[5]){ "_a0", "_a1", idx[2], idx[3],
	    "_a4" }) : emit_at(g, x, idx);
	if (maxp) {
		if (guard)
			rd = arena_printf(perm, "(%s ? %s : -3.40282347e+38)", guard, rd);
		emit_rule(g, y, arena_printf(perm, "maximum(%s) %s", ranges, rd));
		return true;
	}
	if (guard)
		rd = arena_printf(perm, "(%s ? %s : 0.0)", guard, rd);
	const char *s = graph_fresh(g, arena_printf(perm, "%s_sum", y->tx));
	fprintf(g->decls, "  %s: %s%s;\n", s, graph_type(y->dtype), graph_shape(y));
	fprintf(g->body, "  %s = sum(%s) %s;\n", emit_lhs(&(Val){ .tx = s, .ndims = y->ndims }),
	    ranges, rd);
	/* the divisor: the window's size, or (count_include_pad 0) its part
	 * inside the input */
	const char *cnt = "1";
	bool incl = model_attr_int(n, "count_include_pad", 0) != 0;
	for (int i = 0; i < w.sp; i++) {
		if ((incl && !ceil_) || (!w.pb[i] && !w.pe[i] && !ceil_) || w.dl[i] != 1) {
			cnt = arena_printf(perm, "%s * %lld", cnt, (long long)w.k[i]);
			continue;
		}
		const char *lo = arena_printf(perm, "%lld * _a%d - %lld", (long long)w.s[i], 2 + i,
		    (long long)(incl ? 0 : w.pb[i]));
		const char *lim = incl ? arena_printf(perm, "%s + %lld", x->dim[2 + i],
		    (long long)(w.pb[i] + w.pe[i])) : x->dim[2 + i];
		cnt = arena_printf(perm, "%s * (min(%s + %lld, %s) - max(%s, 0))", cnt, lo,
		    (long long)w.k[i], lim, lo);
	}
	emit_rule(g, y, arena_printf(perm, "%s[%s] / %s(%s)", s, emit_axes(y->ndims),
	    graph_type(y->dtype), cnt));
	return true;
}

bool
nn_gpool(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	(void)unsupported;
	if (x->ndims < 3) {
		graph_error(g, n, "input of rank %d", x->ndims);
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	graph_set_dim(y, 0, x->dimv[0], x->dim[0]);
	graph_set_dim(y, 1, x->dimv[1], x->dim[1]);
	const char *idx[8] = { "_a0", "_a1" }, *ranges = "", *cnt = "1";
	for (int d = 2; d < x->ndims; d++) {
		graph_set_dim(y, d, 1, NULL);
		idx[d] = arena_printf(perm, "_r%d", d - 2);
		ranges = arena_printf(perm, "%s%s_r%d < %s", ranges, d > 2 ? ", " : "", d - 2, x->dim[d]);
		cnt = arena_printf(perm, "%s * %s", cnt, x->dim[d]);
	}
	if (n->op[6] == 'M') {
		emit_rule(g, y, arena_printf(perm, "maximum(%s) %s", ranges, emit_at(g, x, idx)));
		return true;
	}
	const char *s = graph_fresh(g, arena_printf(perm, "%s_sum", y->tx));
	fprintf(g->decls, "  %s: %s%s;\n", s, graph_type(y->dtype), graph_shape(y));
	fprintf(g->body, "  %s = sum(%s) %s;\n", emit_lhs(&(Val){ .tx = s, .ndims = y->ndims }),
	    ranges, emit_at(g, x, idx));
	emit_rule(g, y, arena_printf(perm, "%s[%s] / %s(%s)", s, emit_axes(y->ndims),
	    graph_type(y->dtype), cnt));
	return true;
}

bool
nn_matmul(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *a = emit_in(g, n, 0), *b = emit_in(g, n, 1);
	if (!b || a->ndims < 2 || b->ndims < 2) {
		graph_error(g, n, "MatMul of a vector is not supported");
		*unsupported = false;
		return false;
	}
	int r = a->ndims > b->ndims ? a->ndims : b->ndims;
	Val *y = emit_result(g, n, 0, a->dtype, r);
	for (int d = 0; d < r - 2; d++) {
		int da = d - (r - a->ndims), db = d - (r - b->ndims);
		Val *src = da >= 0 && a->dimv[da] != 1 ? a : b;
		int ds = src == a ? da : db;
		if (ds < 0)
			graph_set_dim(y, d, 1, NULL);
		else
			graph_set_dim(y, d, src->dimv[ds], src->dim[ds]);
	}
	graph_set_dim(y, r - 2, a->dimv[a->ndims - 2], a->dim[a->ndims - 2]);
	graph_set_dim(y, r - 1, b->dimv[b->ndims - 1], b->dim[b->ndims - 1]);
	if (r == 2) {
		g->imports[IMP_MATMUL] = true;
		fprintf(g->body, "  %s = matmul(%s, %s);\n", y->tx, graph_use(g, a), graph_use(g, b));
		y->declared = !y->is_output;
		return true;
	}
	const char *ia[8], *ib[8];
	for (int d = 0; d < a->ndims - 2; d++) {
		int od = d + (r - a->ndims);
		ia[d] = a->dimv[d] == 1 && y->dimv[od] != 1 ? "0" : ax(od);
	}
	for (int d = 0; d < b->ndims - 2; d++) {
		int od = d + (r - b->ndims);
		ib[d] = b->dimv[d] == 1 && y->dimv[od] != 1 ? "0" : ax(od);
	}
	ia[a->ndims - 2] = ax(r - 2);
	ia[a->ndims - 1] = "_r0";
	ib[b->ndims - 2] = "_r0";
	ib[b->ndims - 1] = ax(r - 1);
	emit_rule(g, y, arena_printf(perm, "sum(_r0 < %s) %s * %s", a->dim[a->ndims - 1],
	    emit_at(g, a, ia), emit_at(g, b, ib)));
	return true;
}

bool
nn_gemm(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *a = emit_in(g, n, 0), *b = emit_in(g, n, 1), *c = emit_in(g, n, 2);
	bool ta = model_attr_int(n, "transA", 0), tb = model_attr_int(n, "transB", 0);
	double alpha = model_attr_float(n, "alpha", 1.0), beta = model_attr_float(n, "beta", 1.0);
	(void)unsupported;
	if (!b || a->ndims != 2 || b->ndims != 2 || (c && c->ndims > 2)) {
		graph_error(g, n, "Gemm takes two matrices and a bias of rank 2 at most");
		return false;
	}
	Val *y = emit_result(g, n, 0, a->dtype, 2);
	graph_set_dim(y, 0, a->dimv[ta ? 1 : 0], a->dim[ta ? 1 : 0]);
	graph_set_dim(y, 1, b->dimv[tb ? 0 : 1], b->dim[tb ? 0 : 1]);
	/* a few rows (a classifier's batch of 1) times known weights: the
	 * weights transposed now, so the product is a rule whose vectors run
	 * along the output (the schedule generator's tile of 1 row), not
	 * dense's 6-row tile with a transposing copy of all weights per call */
	bool few = !ta && y->dimv[0] >= 1 && y->dimv[0] < 6;
	if (few && tb && b->cdata && b->dtype == OT_FLOAT && b->dimv[0] > 0 && b->dimv[1] > 0) {
		int64_t R = b->dimv[0], C = b->dimv[1];
		float *d = arena_alloc(perm, b->clen + 4);
		for (int64_t i = 0; i < R; i++)
			for (int64_t j = 0; j < C; j++)
				memcpy(&d[j * R + i], b->cdata + 4 * (i * C + j), 4);
		Val *bt = graph_new_val(g, arena_printf(perm, "\x01%s_t", b->tx), OT_FLOAT, 2);
		graph_set_dim(bt, 0, C, NULL);
		graph_set_dim(bt, 1, R, NULL);
		bt->cdata = (unsigned char *)d;
		bt->clen = b->clen;
		bt->defined = true;
		b = bt;
		tb = false;
	}
	if (!ta && tb && alpha == 1.0 && beta == 1.0 && c && c->ndims == 1 &&
	    !strcmp(c->dim[0], y->dim[1])) {
		g->imports[IMP_MATMUL] = true;
		fprintf(g->body, "  %s = dense(%s, %s, %s);\n", y->tx, graph_use(g, a),
		    graph_use(g, b), graph_use(g, c));
		y->declared = !y->is_output;
		return true;
	}
	const char *mm = c || alpha != 1.0 ? graph_fresh(g, arena_printf(perm, "%s_mm", y->tx)) : y->tx;
	if (!few && !ta && !tb) {        /* a few rows: the rule below */
		g->imports[IMP_MATMUL] = true;
		fprintf(g->body, "  %s = matmul(%s, %s);\n", mm, graph_use(g, a), graph_use(g, b));
		if (mm == y->tx)
			y->declared = !y->is_output;
	} else {
		const char *ia[2] = { ta ? "_r0" : "_a0", ta ? "_a0" : "_r0" };
		const char *ib[2] = { tb ? "_a1" : "_r0", tb ? "_r0" : "_a1" };
		Val tmp = *y;
		tmp.tx = mm;
		tmp.declared = false;
		tmp.is_output = mm == y->tx && y->is_output;
		emit_rule(g, &tmp, arena_printf(perm, "sum(_r0 < %s) %s * %s", a->dim[ta ? 0 : 1],
		    emit_at(g, a, ia), emit_at(g, b, ib)));
		if (mm == y->tx)
			y->declared = tmp.declared;
	}
	if (mm != y->tx) {
		const char *e = arena_printf(perm, "%s[_a0, _a1]", mm);
		if (alpha != 1.0)
			e = arena_printf(perm, "%s * %s", graph_float(alpha), e);
		if (c)
			e = arena_printf(perm, "%s + %s * %s", e, graph_float(beta), emit_bread(g, c, y));
		emit_rule(g, y, e);
	}
	return true;
}

bool
nn_bn(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0), *v[4];
	(void)unsupported;
	if (x->ndims < 2) {
		graph_error(g, n, "input of rank %d (it needs channels)", x->ndims);
		return false;
	}
	for (int k = 1; k < n->nout; k++)
		if (*n->out[k]) {
			graph_error(g, n, "its training outputs (running mean and variance) are not "
			    "supported");
			return false;
		}
	bool known = true;
	for (int i = 0; i < 4; i++) {
		v[i] = emit_in(g, n, 1 + i);
		if (!v[i] || v[i]->dtype != x->dtype || v[i]->ndims != 1 ||
		    strcmp(v[i]->dim[0], x->dim[1])) {
			graph_error(g, n, "its scale, bias, mean and variance must be vectors of the "
			    "%s channels", x->dim[1]);
			return false;
		}
		known = known && v[i]->cdata && x->dtype == OT_FLOAT;
	}
	double eps = model_attr_float(n, "epsilon", 1e-5);
	const char *ci[1] = { "_a1" };
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	if (!known) {
		/* statistics given at run time: an ordinary stage */
		const char *e = graph_float(eps);
		if (!e) {
			graph_error(g, n, "epsilon is not finite");
			return false;
		}
		Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
		emit_copy_dims(y, x);
		emit_rule(g, y, arena_printf(perm, "(%s - %s) / sqrt(%s + %s) * %s + %s",
		    emit_at(g, x, xi), emit_at(g, v[2], ci), emit_at(g, v[3], ci), e,
		    emit_at(g, v[0], ci), emit_at(g, v[1], ci)));
		return true;
	}
	int64_t C = x->dimv[1];
	float *sc = arena_alloc(perm, (size_t)C * 4 + 4), *sh = arena_alloc(perm, (size_t)C * 4 + 4);
	for (int64_t c = 0; c < C; c++) {
		float s, b, m, var;
		memcpy(&s, v[0]->cdata + 4 * c, 4);
		memcpy(&b, v[1]->cdata + 4 * c, 4);
		memcpy(&m, v[2]->cdata + 4 * c, 4);
		memcpy(&var, v[3]->cdata + 4 * c, 4);
		sc[c] = (float)(s / sqrt((double)var + eps));
		sh[c] = (float)(b - m * (double)sc[c]);
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	Val *vs = graph_new_val(g, arena_printf(perm, "%s_scale", y->tx), OT_FLOAT, 1);
	Val *vb = graph_new_val(g, arena_printf(perm, "%s_shift", y->tx), OT_FLOAT, 1);
	graph_set_dim(vs, 0, C, NULL);
	graph_set_dim(vb, 0, C, NULL);
	vs->cdata = (unsigned char *)sc;
	vb->cdata = (unsigned char *)sh;
	vs->clen = vb->clen = (size_t)C * 4;
	emit_rule(g, y, arena_printf(perm, "%s * %s + %s", emit_at(g, x, xi), emit_at(g, vs, ci),
	    emit_at(g, vb, ci)));
	return true;
}

/* Stages reducing x over the axes marked in red (kept as extent 1 when
 * keep): the value of reduction op ("sum", "maximum"...) of body. */
static Val *
reduce_stage(Graph *g, Val *x, const bool *red, bool keep, const char *op, const char *name,
    const char *(*body)(Graph *, Val *, const char **, void *), void *ctx, Val *as)
{
	int r = 0;
	for (int d = 0; d < x->ndims; d++)
		r += keep || !red[d];
	Val *y = as ? as : graph_new_val(g, name, x->dtype, r);
	const char *idx[8], *ranges = "";
	int k = 0, nr = 0;
	for (int d = 0; d < x->ndims; d++) {
		if (red[d]) {
			idx[d] = arena_printf(perm, "_r%d", nr);
			ranges = arena_printf(perm, "%s%s_r%d < %s", ranges, nr ? ", " : "", nr, x->dim[d]);
			nr++;
			if (keep)
				graph_set_dim(y, k++, 1, NULL);
		} else {
			idx[d] = ax(k);
			graph_set_dim(y, k++, x->dimv[d], x->dim[d]);
		}
	}
	emit_rule(g, y, arena_printf(perm, "%s(%s) %s", op, ranges, body(g, x, idx, ctx)));
	return y;
}

static const char *
plain(Graph *g, Val *x, const char **idx, void *ctx)
{
	(void)ctx;
	return emit_at(g, x, idx);
}

/* the element a reduction adds up: ReduceL1's |x|, ReduceL2's and
 * ReduceSumSquare's x * x, ReduceLogSumExp's exp(x) */
static const char *
elem_of(Graph *g, Val *x, const char **idx, void *ctx)
{
	const char *op = ctx, *v = emit_at(g, x, idx);
	if (!strcmp(op, "ReduceL1"))
		return arena_printf(perm, "abs(%s)", v);
	if (!strcmp(op, "ReduceL2") || !strcmp(op, "ReduceSumSquare"))
		return arena_printf(perm, "(%s * %s)", v, v);
	if (!strcmp(op, "ReduceLogSumExp"))
		return arena_printf(perm, "exp(%s)", v);
	return v;
}

bool
nn_reduce(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	bool present, red[8] = { 0 };
	int na = 0;
	int64_t *axs = model_attr(n, "axes") || n->nin > 1 ?
	    (int64_t *)NULL : NULL;
	OnnxAttr *a = model_attr(n, "axes");
	(void)unsupported;
	(void)present;
	if (a) {
		axs = a->ints;
		na = a->nints;
	} else if (n->nin > 1 && *n->in[1]) {
		axs = graph_ints(emit_in(g, n, 1), &na);
		if (!axs) {
			graph_error(g, n, "its axes must be known when txc compiles");
			return false;
		}
	}
	if (!na && model_attr_int(n, "noop_with_empty_axes", 0)) {
		Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
		emit_copy_dims(y, x);
		emit_rule(g, y, emit_bread(g, x, y));
		return true;
	}
	for (int d = 0; d < x->ndims; d++)
		red[d] = !na;
	for (int i = 0; i < na; i++) {
		int64_t k = axs[i] < 0 ? axs[i] + x->ndims : axs[i];
		if (k < 0 || k >= x->ndims) {
			graph_error(g, n, "axis %lld is out of range", (long long)axs[i]);
			return false;
		}
		red[k] = true;
	}
	bool keep = model_attr_int(n, "keepdims", 1) != 0;
	int r = 0;
	const char *cnt = "1";
	for (int d = 0; d < x->ndims; d++) {
		r += keep || !red[d];
		if (red[d])
			cnt = arena_printf(perm, "%s * %s", cnt, x->dim[d]);
	}
	const char *op = !strcmp(n->op, "ReduceMax") ? "maximum" : !strcmp(n->op, "ReduceMin") ?
	    "minimum" : !strcmp(n->op, "ReduceProd") ? "prod" : "sum";
	/* the sum's last step: ReduceL2's root, the logs */
	const char *after = !strcmp(n->op, "ReduceL2") ? "sqrt" :
	    !strcmp(n->op, "ReduceLogSum") || !strcmp(n->op, "ReduceLogSumExp") ? "log" : NULL;
	Val *y = emit_result(g, n, 0, x->dtype, r);
	if (strcmp(n->op, "ReduceMean") && !after) {
		reduce_stage(g, x, red, keep, op, NULL, elem_of, (void *)n->op, y);
		return true;
	}
	if (after) {
		Val *s = reduce_stage(g, x, red, keep, "sum", arena_printf(perm, "%s_sum", y->tx),
		    elem_of, (void *)n->op, NULL);
		emit_copy_dims(y, s);
		emit_rule(g, y, arena_printf(perm, "%s(%s)", after, emit_bread(g, s, y)));
		return true;
	}
	Val *s = reduce_stage(g, x, red, keep, "sum", arena_printf(perm, "%s_sum", y->tx), plain,
	    NULL, NULL);
	emit_copy_dims(y, s);
	emit_rule(g, y, arena_printf(perm, "%s / %s(%s)", emit_bread(g, s, y), graph_type(y->dtype),
	    cnt));
	return true;
}

static const char *
minus_max(Graph *g, Val *x, const char **idx, void *ctx)
{
	Val *m = ctx;
	const char *mi[8];
	for (int d = 0; d < x->ndims; d++)
		mi[d] = strncmp(idx[d], "_r", 2) ? idx[d] : "0";
	(void)g;
	return arena_printf(perm, "exp(%s - %s)", emit_at(g, x, idx), emit_at(g, m, mi));
}

bool
nn_softmax(Graph *g, OnnxNode *n, bool *unsupported)
{
	Val *x = emit_in(g, n, 0);
	bool old = g->m->opset < 13, logsm = n->op[0] == 'L';
	int64_t axis = model_attr_int(n, "axis", old ? 1 : -1);
	axis = axis < 0 ? axis + x->ndims : axis;
	(void)unsupported;
	if (axis < 0 || axis >= x->ndims) {
		graph_error(g, n, "axis out of range");
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	if (!logsm && x->ndims == 2 && axis == 1) {
		g->imports[IMP_SOFTMAX] = true;
		fprintf(g->body, "  %s = softmax(%s);\n", y->tx, graph_use(g, x));
		y->declared = !y->is_output;
		return true;
	}
	bool red[8] = { 0 };
	for (int d = 0; d < x->ndims; d++)
		red[d] = old ? d >= axis : d == axis;
	Val *m = reduce_stage(g, x, red, true, "maximum", arena_printf(perm, "%s_max", y->tx),
	    plain, NULL, NULL);
	Val *s = reduce_stage(g, x, red, true, "sum", arena_printf(perm, "%s_sum", y->tx),
	    minus_max, m, NULL);
	const char *xi[8];
	for (int d = 0; d < x->ndims; d++)
		xi[d] = ax(d);
	const char *xm = arena_printf(perm, "%s - %s", emit_at(g, x, xi), emit_bread(g, m, y));
	emit_rule(g, y, logsm ? arena_printf(perm, "%s - log(%s)", xm, emit_bread(g, s, y)) :
	    arena_printf(perm, "exp(%s) / %s", xm, emit_bread(g, s, y)));
	return true;
}
