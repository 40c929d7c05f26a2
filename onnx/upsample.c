/* upsample.c: the ONNX operators that make a tensor larger, as .tx
 * stages: Resize (and the older Upsample), nearest and linear, and
 * ConvTranspose.
 *
 * Resize maps each output coordinate o of an axis to a source coordinate
 * x by the node's coordinate_transformation_mode; txc writes x as a
 * fraction A / B of integer expressions (the scale a known number, taken
 * as a ratio of integers, or output and input extents) so that nearest
 * (floor, ceil and both roundings) picks a source element with integer
 * arithmetic, clamped to the axis, as onnxruntime clamps.  Linear mode
 * reads the two neighbours of x on each resized axis and weighs them by
 * x's fraction (x clamped to [0, extent - 1] first).
 *
 * ConvTranspose (1-D and 2-D, groups, strides, pads, output_padding,
 * dilations) is a sum over the input pixels whose window covers the
 * output pixel: with dilation 1 those are the taps r = (o + pad) % stride
 * + stride * j, so the sum runs over ceil(k / stride) taps, not k.
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

static const char *
dim_text(Val *v, int d)
{
	return v->dimv[d] >= 0 ? arena_printf(perm, "%lld", (long long)v->dimv[d]) :
	    arena_printf(perm, "(%s)", v->dim[d]);
}

/* The floats of a known value, or NULL. */
static float *
known_floats(Val *v, int *n)
{
	if (!v || !v->cdata || v->dtype != OT_FLOAT || v->clen % 4)
		return NULL;
	*n = (int)(v->clen / 4);
	float *f = arena_alloc(perm, (v->clen / 4 + 1) * sizeof *f);
	memcpy(f, v->cdata, v->clen);
	return f;
}

/* A scale as num / den with den at most 64, or false. */
static bool
ratio(double s, int64_t *num, int64_t *den)
{
	if (!(s > 0) || s > 1 << 20)
		return false;
	for (int64_t q = 1; q <= 64; q++) {
		double p = s * (double)q;
		if (fabs(p - nearbyint(p)) < 1e-6 * p && nearbyint(p) >= 1) {
			*num = (int64_t)nearbyint(p);
			*den = q;
			return true;
		}
	}
	return false;
}

typedef struct {
	bool resized;
	const char *a, *b;     /* x = a / b, a an expression of _aD, b > 0 */
	const char *in;        /* the input's extent */
} Coord;

/* x for axis d of an output whose extent is `out`, where the input's is
 * `in` and o * P / Q is the asymmetric coordinate. */
static bool
coord(Graph *g, OnnxNode *n, const char *mode, int d, const char *P, const char *Q,
    const char *in, const char *out, Coord *c)
{
	const char *o = arena_printf(perm, "_a%d", d);
	c->resized = true;
	c->in = in;
	if (!strcmp(mode, "asymmetric")) {
		c->a = arena_printf(perm, "%s * %s", o, P);
		c->b = Q;
	} else if (!strcmp(mode, "half_pixel") || !strcmp(mode, "pytorch_half_pixel")) {
		/* (o + 1/2) P / Q - 1/2; pytorch's is 0 for an extent of 1 */
		c->a = arena_printf(perm, "(2 * %s + 1) * %s - %s", o, P, Q);
		c->b = arena_printf(perm, "2 * %s", Q);
		if (!strcmp(mode, "pytorch_half_pixel") && !strcmp(out, "1"))
			c->a = "0", c->b = "1";
	} else if (!strcmp(mode, "tf_half_pixel_for_nn")) {
		c->a = arena_printf(perm, "(2 * %s + 1) * %s", o, P);
		c->b = arena_printf(perm, "2 * %s", Q);
	} else if (!strcmp(mode, "align_corners")) {
		/* o (in - 1) / (out - 1); 0 where out is 1 */
		c->a = arena_printf(perm, "%s * (%s - 1)", o, in);
		c->b = arena_printf(perm, "max(%s - 1, 1)", out);
	} else {
		graph_error(g, n, "coordinate_transformation_mode '%s' is not supported", mode);
		return false;
	}
	return true;
}

/* The source element nearest x by `how`, clamped to the axis. */
static const char *
nearest(Coord *c, const char *how, bool exact)
{
	const char *a = c->a, *b = c->b, *q;
	if (!strcmp(how, "floor"))
		q = arena_printf(perm, "(%s) / (%s)", a, b);
	else if (!strcmp(how, "ceil"))
		q = arena_printf(perm, "(%s + %s - 1) / (%s)", a, b, b);
	else if (!strcmp(how, "round_prefer_ceil"))
		q = arena_printf(perm, "(2 * (%s) + %s) / (2 * %s)", a, b, b);
	else    /* round_prefer_floor */
		q = arena_printf(perm, "(2 * (%s) + %s - 1) / (2 * %s)", a, b, b);
	/* an integer upscale with floor never leaves the axis: no clamp */
	return exact ? q : arena_printf(perm, "clamp(%s, 0, %s - 1)", q, c->in);
}

bool
up_resize(Graph *g, OnnxNode *n, bool *unsupported)
{
	(void)unsupported;
	Val *x = emit_in(g, n, 0);
	int r = x->ndims;
	bool upsample = !strcmp(n->op, "Upsample");
	int opset = g->m->opset;
	OnnxAttr *ma = model_attr(n, "mode"), *ca = model_attr(n, "coordinate_transformation_mode"),
	    *na = model_attr(n, "nearest_mode");
	const char *mode = ma && ma->s ? ma->s : "nearest";
	/* Upsample and Resize-10 take x = o / scale, the floor for nearest */
	bool old = upsample || opset < 11;
	const char *ctm = old ? "asymmetric" : ca && ca->s ? ca->s : "half_pixel";
	const char *how = old ? "floor" : na && na->s ? na->s : "round_prefer_floor";
	if (!strcmp(mode, "bilinear"))
		mode = "linear";
	if (strcmp(mode, "nearest") && strcmp(mode, "linear")) {
		graph_error(g, n, "mode '%s' is not supported (nearest and linear are)", mode);
		return false;
	}
	if (strcmp(how, "floor") && strcmp(how, "ceil") && strcmp(how, "round_prefer_floor") &&
	    strcmp(how, "round_prefer_ceil")) {
		graph_error(g, n, "nearest_mode '%s' is not supported", how);
		return false;
	}
	OnnxAttr *kp = model_attr(n, "keep_aspect_ratio_policy");
	if (model_attr_int(n, "antialias", 0) || model_attr(n, "axes") ||
	    (kp && kp->s && strcmp(kp->s, "stretch"))) {
		graph_error(g, n, "antialias, axes and keep_aspect_ratio_policy are not supported");
		return false;
	}
	/* the scales: an attribute (Upsample-7), input 1 (Upsample-9,
	 * Resize-10) or input 2 (Resize-11 on); or the sizes, input 3 */
	float *sc = NULL;
	int nsc = 0;
	OnnxAttr *sa = upsample ? model_attr(n, "scales") : NULL;
	if (sa) {
		sc = sa->floats;
		nsc = sa->nfloats;
	} else {
		Val *s = emit_in(g, n, old ? 1 : 2);
		if (s && graph_numel(s) != 0) {
			sc = known_floats(s, &nsc);
			if (!sc) {
				graph_error(g, n, "its scales must be known floats when txc compiles");
				return false;
			}
		}
	}
	Sym *sz = NULL;
	int nsz = 0;
	if (!sc && !old) {
		Val *s = emit_in(g, n, 3);
		if (s)
			sz = graph_syms(s, &nsz);
		if (!sz) {
			graph_error(g, n, "its scales or sizes must be known when txc compiles");
			return false;
		}
	}
	if ((sc && nsc != r) || (!sc && nsz != r)) {
		graph_error(g, n, "%d %s for an input of rank %d", sc ? nsc : nsz, sc ? "scales" :
		    "sizes", r);
		return false;
	}
	Val *y = emit_result(g, n, 0, x->dtype, r);
	Coord c[8] = { { 0 } };
	bool exact[8] = { false };
	int nres = 0;
	for (int d = 0; d < r; d++) {
		const char *in = dim_text(x, d);
		if (sc) {
			int64_t num, den;
			if (!ratio(sc[d], &num, &den)) {
				graph_error(g, n, "scale %g of axis %d is not a ratio of integers txc takes",
				    (double)sc[d], d);
				return false;
			}
			/* floor(in * num / den) */
			if (x->dimv[d] >= 0)
				graph_set_dim(y, d, x->dimv[d] * num / den, NULL);
			else
				graph_set_dim(y, d, -1, arena_printf(perm, "(%s * %lld / %lld)", x->dim[d],
				    (long long)num, (long long)den));
			if (num == den)
				continue;
			if (!coord(g, n, ctm, d, arena_printf(perm, "%lld", (long long)den),
			    arena_printf(perm, "%lld", (long long)num), in, dim_text(y, d), &c[d]))
				return false;
			exact[d] = den == 1 && !strcmp(ctm, "asymmetric") && !strcmp(how, "floor");
		} else {
			graph_set_dim(y, d, sz[d].t ? -1 : sz[d].v, sz[d].t);
			if (sym_same(sz[d], x->dimv[d] >= 0 ? sym_num(x->dimv[d]) : sym_parse(x->dim[d])))
				continue;
			if (!coord(g, n, ctm, d, in, dim_text(y, d), in, dim_text(y, d), &c[d]))
				return false;
		}
		nres++;
	}
	const char *idx[8];
	for (int d = 0; d < r; d++)
		idx[d] = arena_printf(perm, "_a%d", d);
	if (!strcmp(mode, "nearest") || !nres) {
		for (int d = 0; d < r; d++)
			if (c[d].resized)
				idx[d] = nearest(&c[d], how, exact[d]);
		emit_rule(g, y, emit_at(g, x, idx));
		return true;
	}
	if (x->dtype != OT_FLOAT && x->dtype != OT_DOUBLE) {
		graph_error(g, n, "linear mode of a tensor of integers is not supported");
		return false;
	}
	if (nres > 3) {
		graph_error(g, n, "linear mode over %d axes is not supported (at most 3)", nres);
		return false;
	}
	/* per resized axis: x clamped to [0, in - 1], its floor lo, lo + 1
	 * (clamped) and the weight of lo + 1; the sum of the 2^nres taps */
	const char *ft = graph_type(x->dtype);
	const char *lo[8], *hi[8], *w[8];
	for (int d = 0; d < r; d++) {
		if (!c[d].resized)
			continue;
		const char *xf = arena_printf(perm, "min(max(%s(%s) / %s(%s), %s(0)), %s(%s - 1))", ft,
		    c[d].a, ft, c[d].b, ft, ft, c[d].in);
		lo[d] = arena_printf(perm, "clamp((%s) / (%s), 0, %s - 1)", c[d].a, c[d].b, c[d].in);
		hi[d] = arena_printf(perm, "min(%s + 1, %s - 1)", lo[d], c[d].in);
		w[d] = arena_printf(perm, "(%s - %s(%s))", xf, ft, lo[d]);
	}
	const char *sum = NULL;
	for (int t = 0; t < 1 << nres; t++) {
		const char *wt = NULL;
		int k = 0;
		for (int d = 0; d < r; d++) {
			if (!c[d].resized)
				continue;
			bool up = (t >> k++) & 1;
			idx[d] = up ? hi[d] : lo[d];
			const char *f = up ? w[d] : arena_printf(perm, "(%s(1) - %s)", ft, w[d]);
			wt = wt ? arena_printf(perm, "%s * %s", wt, f) : f;
		}
		const char *term = arena_printf(perm, "%s * %s", wt, emit_at(g, x, idx));
		sum = sum ? arena_printf(perm, "%s + %s", sum, term) : term;
	}
	emit_rule(g, y, sum);
	return true;
}

bool
up_convtranspose(Graph *g, OnnxNode *n, bool *unsupported)
{
	(void)unsupported;
	Val *x = emit_in(g, n, 0), *wt = emit_in(g, n, 1), *b = emit_in(g, n, 2);
	int sp = x->ndims - 2;
	if (x->dtype != OT_FLOAT || (wt && wt->dtype != OT_FLOAT)) {
		graph_error(g, n, "only float tensors are supported");
		return false;
	}
	if (sp < 1 || sp > 2) {
		graph_error(g, n, "only 1-D and 2-D transposed convolutions are supported (input of "
		    "rank %d)", x->ndims);
		return false;
	}
	if (!wt || wt->ndims != x->ndims) {
		graph_error(g, n, "the weights must have the input's rank");
		return false;
	}
	for (int i = 0; i < wt->ndims; i++)
		if (wt->dimv[i] < 1) {
			graph_error(g, n, "the weights' extents must be known");
			return false;
		}
	if (model_attr(n, "output_shape")) {
		graph_error(g, n, "output_shape is not supported (give pads)");
		return false;
	}
	OnnxAttr *ap = model_attr(n, "auto_pad");
	if (ap && ap->s && strcmp(ap->s, "NOTSET") && strcmp(ap->s, "VALID")) {
		graph_error(g, n, "auto_pad '%s' is not supported", ap->s);
		return false;
	}
	int64_t G = model_attr_int(n, "group", 1), C = wt->dimv[0], KG = wt->dimv[1];
	if (G < 1 || C % G || (x->dimv[1] >= 0 && x->dimv[1] != C)) {
		graph_error(g, n, "group %lld does not fit %lld input channels and weights of %lld",
		    (long long)G, (long long)x->dimv[1], (long long)C);
		return false;
	}
	int64_t CG = C / G, K = KG * G;
	if (b && (b->ndims != 1 || b->dimv[0] != K)) {
		graph_error(g, n, "the bias must have %lld elements", (long long)K);
		return false;
	}
	OnnxAttr *st = model_attr(n, "strides"), *dl = model_attr(n, "dilations"),
	    *pd = model_attr(n, "pads"), *op = model_attr(n, "output_padding");
	int64_t k[2], s[2], dil[2], pb[2], pe[2], opad[2];
	const int64_t big = INT64_C(1) << 20;
	for (int i = 0; i < sp; i++) {
		k[i] = wt->dimv[2 + i];
		s[i] = st && st->nints == sp ? st->ints[i] : 1;
		dil[i] = dl && dl->nints == sp ? dl->ints[i] : 1;
		pb[i] = pd && pd->nints == 2 * sp ? pd->ints[i] : 0;
		pe[i] = pd && pd->nints == 2 * sp ? pd->ints[i + sp] : 0;
		opad[i] = op && op->nints == sp ? op->ints[i] : 0;
		if (s[i] < 1 || dil[i] < 1 || pb[i] < 0 || pe[i] < 0 || opad[i] < 0 || s[i] > big ||
		    dil[i] > big || pb[i] > big || pe[i] > big || opad[i] >= (s[i] > dil[i] ?
		    s[i] : dil[i])) {
			graph_error(g, n, "bad window: stride %lld, dilation %lld, pads %lld %lld, "
			    "output_padding %lld", (long long)s[i], (long long)dil[i], (long long)pb[i],
			    (long long)pe[i], (long long)opad[i]);
			return false;
		}
	}
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	graph_set_dim(y, 0, x->dimv[0], x->dim[0]);
	graph_set_dim(y, 1, K, NULL);
	for (int i = 0; i < sp; i++) {
		/* s (H - 1) + output_padding + (k - 1) d + 1 - pads */
		int64_t add = opad[i] + (k[i] - 1) * dil[i] + 1 - pb[i] - pe[i];
		if (x->dimv[2 + i] >= 0) {
			int64_t v = s[i] * (x->dimv[2 + i] - 1) + add;
			graph_set_dim(y, 2 + i, v < 0 ? 0 : v, NULL);
		} else {
			graph_set_dim(y, 2 + i, -1, arena_printf(perm, "(%lld * %s + %lld)", (long long)s[i],
			    x->dim[2 + i], (long long)(add - s[i])));
		}
	}
	/* taps: channel _r0 of the group; per spatial axis _r(1+i) */
	const char *xi[4], *wi[4], *ranges, *guard = NULL;
	xi[0] = "_a0";
	xi[1] = G == 1 ? "_r0" : arena_printf(perm, "_a1 / %lld * %lld + _r0", (long long)KG,
	    (long long)CG);
	wi[0] = xi[1];
	wi[1] = G == 1 ? "_a1" : arena_printf(perm, "_a1 %% %lld", (long long)KG);
	ranges = arena_printf(perm, "_r0 < %lld", (long long)CG);
	for (int i = 0; i < sp; i++) {
		int a = 2 + i, rv = 1 + i;
		const char *H = dim_text(x, a), *t = arena_printf(perm, "(_a%d + %lld)", a,
		    (long long)pb[i]), *ih, *kr, *gi;
		int64_t taps;
		if (dil[i] == 1) {
			/* r = t % s + s j, the input pixel t / s - j */
			taps = (k[i] + s[i] - 1) / s[i];
			kr = s[i] == 1 ? arena_printf(perm, "_r%d", rv) :
			    arena_printf(perm, "%s %% %lld + %lld * _r%d", t, (long long)s[i],
			    (long long)s[i], rv);
			ih = s[i] == 1 ? arena_printf(perm, "%s - _r%d", t, rv) :
			    arena_printf(perm, "%s / %lld - _r%d", t, (long long)s[i], rv);
			gi = arena_printf(perm, "%s >= 0 && %s < %s", ih, ih, H);
			if (k[i] % s[i]) {
				gi = arena_printf(perm, "%s && %s < %lld", gi, kr, (long long)k[i]);
				kr = arena_printf(perm, "min(%s, %lld)", kr, (long long)(k[i] - 1));
			}
		} else {
			/* every tap r whose (t - r d) divides by s */
			taps = k[i];
			kr = arena_printf(perm, "_r%d", rv);
			const char *u = arena_printf(perm, "(%s - %lld * _r%d)", t, (long long)dil[i], rv);
			ih = s[i] == 1 ? u : arena_printf(perm, "%s / %lld", u, (long long)s[i]);
			gi = s[i] == 1 ? arena_printf(perm, "%s >= 0 && %s < %s", u, u, H) :
			    arena_printf(perm, "%s >= 0 && %s %% %lld == 0 && %s < %s", u, u,
			    (long long)s[i], ih, H);
		}
		ranges = arena_printf(perm, "%s, _r%d < %lld", ranges, rv, (long long)taps);
		xi[a] = arena_printf(perm, "clamp(%s, 0, %s - 1)", ih, H);
		wi[a] = kr;
		guard = guard ? arena_printf(perm, "%s && %s", guard, gi) : gi;
	}
	const char *term = arena_printf(perm, "%s * %s", emit_at(g, x, xi), emit_at(g, wt, wi));
	const char *sum = arena_printf(perm, "sum(%s) (%s ? %s : 0.0)", ranges, guard, term);
	if (!b) {
		emit_rule(g, y, sum);
		return true;
	}
	/* the sum a stage of its own, the bias added after it (nn.c's Conv) */
	Val tmp = *y;
	tmp.tx = graph_fresh(g, arena_printf(perm, "%s_sum", y->tx));
	tmp.is_output = false;
	tmp.declared = false;
	emit_rule(g, &tmp, sum);
	const char *bi[1] = { "_a1" };
	emit_rule(g, y, arena_printf(perm, "%s[%s] + %s", tmp.tx, emit_axes(y->ndims),
	    emit_at(g, b, bi)));
	return true;
}
