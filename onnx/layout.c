/* layout.c: the blocked channel layout of convolution chains (txc(1)
 * ONNX MODELS; GRAPH.md 3.4, TVM's AlterOpLayout for x86).
 *
 * A 2-D Conv of one group whose output channels come in whole blocks of
 * LAYOUT_B writes its result in NCHW16c: [N, K / 16, H, W, 16], the 16
 * channels of a block contiguous at every pixel.  Each output pixel's
 * sums are then two AVX2 vectors (one AVX-512 vector) of channels, whatever
 * the stride and the filter, and the schedule generator's register tile
 * (auto/tile.c, C2) runs over output columns x channel vectors with one
 * broadcast input value per column, as onnxruntime's NCHWc kernels do.
 * What this pass writes, per Conv:
 *   - the weights packed at compile time: [KB, CB, R, S, 16 in, 16 out]
 *     for a blocked input, [KB, C, R, S, 16 out] for a plain one (the
 *     network's first convolution reads the NCHW image as it is);
 *   - the padding as a stage of its own (the rows and columns the
 *     convolution reads, zero outside the input), so the tile reads it
 *     with no test; the generator computes it once, not per tap;
 *   - the sums, and the bias as an element-wise stage (fused onto the
 *     sums by auto/fuse.c F3, with the ReLU and residual Add after it).
 * Element-wise operators whose inputs are all blocked with one shape keep
 * the layout (emit.c), as MaxPool does (nn.c); every other reader reads a
 * blocked value through emit_at, which maps channel c to [c / 16, c % 16],
 * so no transform back is needed: a graph output is never blocked, and
 * the few readers that do not know the layout (GlobalAveragePool, Flatten)
 * compute the index themselves.
 */
#define TXC_ONNX_INTERNAL
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

/* Outputs at most this wide, of at least twice as many pixels, are flat. */
#define FLAT_MAX_W 8

/* A read of blocked v at its five indices [n, block, h, w, lane] (a flat
 * one's h and w made one). */
const char *
layout_at(Graph *g, Val *v, const char **phys)
{
	/* clamped: txc's bounds check does not narrow a product by the
	 * select that guards it (a padding's read); the clamp is hoisted out
	 * of a sum's loops */
	if (v->flatw)
		return arena_printf(perm, "%s[%s, %s, clamp((%s) * %lld + (%s), 0, %lld), %s]",
		    graph_use(g, v), phys[0], phys[1], phys[2], (long long)v->flatw, phys[3],
		    (long long)(v->dimv[2] * v->dimv[3] - 1), phys[4]);
	return arena_printf(perm, "%s[%s, %s, %s, %s, %s]", graph_use(g, v), phys[0], phys[1],
	    phys[2], phys[3], phys[4]);
}

/* The shape of blocked v: "[N, C / B, H, W, B]" ("[N, C / B, H W, B]"). */
const char *
layout_shape(Val *v)
{
	if (v->flatw)
		return arena_printf(perm, "[%s, %lld, %lld, %d]", v->dim[0],
		    (long long)(v->dimv[1] / v->cb), (long long)(v->dimv[2] * v->dimv[3]), v->cb);
	return arena_printf(perm, "[%s, %lld, %s, %s, %d]", v->dim[0],
	    (long long)(v->dimv[1] / v->cb), v->dim[2], v->dim[3], v->cb);
}

const char *
layout_axes(Val *v)
{
	return emit_axes(v->flatw ? 4 : 5);
}

/* Whether value v may be stored blocked: 4-D, not a graph output, its
 * channels known and a multiple of the block. */
bool
layout_ok(Val *v)
{
	return v->ndims == 4 && !v->is_output && v->dimv[1] > 0 && v->dimv[1] % LAYOUT_B == 0 &&
	    v->dtype == OT_FLOAT;
}

/* The block an element-wise result y takes: LAYOUT_B when every input is
 * blocked with y's shape or a one-element constant (a literal), and one is
 * blocked; else 0. */
int
layout_elementwise(Graph *g, OnnxNode *n, Val *y)
{
	bool any = false;
	int64_t flatw = -1;
	if (!layout_ok(y))
		return 0;
	for (int i = 0; i < n->nin; i++) {
		Val *v = emit_in(g, n, i);
		if (!v)
			return 0;
		if (v->cdata && graph_numel(v) == 1 && (v->dtype == OT_FLOAT || v->dtype == OT_DOUBLE))
			continue;
		if (v->cb != LAYOUT_B || !graph_same_shape(v, y))
			return 0;
		if (v->flatw > flatw)
			flatw = v->flatw;   /* flat if one is (the others read as such) */
		any = true;
	}
	if (any)
		y->flatw = flatw > 0 ? flatw : 0;
	return any ? LAYOUT_B : 0;
}

/* Weights [K, C, R, S] packed per block of B output channels:
 * [K / B, C / B, R, S, B, B] (in, out) when the input is blocked, else
 * [K / B, C, R, S, B]. */
static Val *
pack_weights(Graph *g, Val *wt, bool blocked_in)
{
	const int B = LAYOUT_B;
	int64_t K = wt->dimv[0], C = wt->dimv[1], R = wt->dimv[2], S = wt->dimv[3];
	Val *p = graph_new_val(g, arena_printf(perm, "\x01%s_%dc", wt->tx, B), OT_FLOAT,
	    blocked_in ? 6 : 5);
	float *d = arena_alloc(perm, wt->clen + 4);
	const unsigned char *src = wt->cdata;
	for (int64_t k = 0; k < K; k++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t r = 0; r < R; r++)
				for (int64_t s = 0; s < S; s++) {
					int64_t at = ((k * C + c) * R + r) * S + s, to;
					if (blocked_in)
						to = ((((k / B * (C / B) + c / B) * R + r) * S + s) * B + c % B) * B +
						    k % B;
					else
						to = (((k / B * C + c) * R + r) * S + s) * B + k % B;
					memcpy(&d[to], src + 4 * at, 4);
				}
	int64_t dims[6] = { K / B, blocked_in ? C / B : C, R, S, B, B };
	for (int i = 0; i < p->ndims; i++)
		graph_set_dim(p, i, dims[i], NULL);
	p->cdata = (unsigned char *)d;
	p->clen = wt->clen;
	p->defined = true;
	return p;
}

/* The bias [K] as [K / B, B]. */
static Val *
pack_bias(Graph *g, Val *b)
{
	Val *p = graph_new_val(g, arena_printf(perm, "\x01%s_%dc", b->tx, LAYOUT_B), OT_FLOAT, 2);
	graph_set_dim(p, 0, b->dimv[0] / LAYOUT_B, NULL);
	graph_set_dim(p, 1, LAYOUT_B, NULL);
	p->cdata = b->cdata;
	p->clen = b->clen;
	p->defined = true;
	return p;
}

bool
layout_conv(Graph *g, Val *x, Val *wt, Val *b, Val *y, const int64_t *st, const int64_t *dl,
    const int64_t *pb, const int64_t *pe, int64_t groups)
{
	const int B = LAYOUT_B;
	if (groups != 1 || x->ndims != 4 || !layout_ok(y) || !wt->cdata || wt->dtype != OT_FLOAT ||
	    wt->ndims != 4 || x->dtype != OT_FLOAT || (b && (!b->cdata || b->dtype != OT_FLOAT)))
		return false;
	for (int d = 0; d < 4; d++)
		if (x->dimv[d] < 0 || y->dimv[d] < 1 || wt->dimv[d] < 1)
			return false;
	bool bin = x->cb == B;
	int64_t C = x->dimv[1], R = wt->dimv[2], S = wt->dimv[3];
	Val *wp = pack_weights(g, wt, bin);
	Val *bp = b ? pack_bias(g, b) : NULL;
	y->cb = B;
	/* a narrow output (ResNet's last 7 x 7 layers) makes its rows and
	 * columns one axis, so the register tile runs along 49 pixels (5 x 10
	 * computed, not 7 rows of 2 x 5) and its weights are read fewer times */
	if (y->dimv[3] <= FLAT_MAX_W && y->dimv[2] * y->dimv[3] >= 2 * FLAT_MAX_W)
		y->flatw = y->dimv[3];
	const char *ko = y->flatw ? "_a3" : "_a4";
	const char *oh = y->flatw ? arena_printf(perm, "(_a2 / %lld)", (long long)y->flatw) : "_a2";
	const char *ow = y->flatw ? arena_printf(perm, "(_a2 %% %lld)", (long long)y->flatw) : "_a3";
	/* the input's part the sums read, zero outside the input */
	const char *in = graph_use(g, x);
	int64_t HP = st[0] * (y->dimv[2] - 1) + dl[0] * (R - 1) + 1;
	int64_t WP = st[1] * (y->dimv[3] - 1) + dl[1] * (S - 1) + 1;
	if (pb[0] || pb[1] || pe[0] || pe[1]) {
		const char *p = graph_fresh(g, arena_printf(perm, "%s_pad", y->tx));
		const char *guard = arena_printf(perm, "_a2 >= %lld && _a2 < %lld && _a3 >= %lld && "
		    "_a3 < %lld", (long long)pb[0], (long long)(x->dimv[2] + pb[0]), (long long)pb[1],
		    (long long)(x->dimv[3] + pb[1]));
		if (bin) {
			fprintf(g->decls, "  %s: f32[%s, %lld, %lld, %lld, %d];\n", p, x->dim[0],
			    (long long)(C / B), (long long)HP, (long long)WP, B);
			const char *at[5] = { "_a0", "_a1", arena_printf(perm, "_a2 - %lld", (long long)pb[0]),
				arena_printf(perm, "_a3 - %lld", (long long)pb[1]), "_a4" };
			fprintf(g->body, "  %s[_a0, _a1, _a2, _a3, _a4] = (%s) ? %s : 0.0;\n", p, guard,
			    layout_at(g, x, at));
		} else {
			fprintf(g->decls, "  %s: f32[%s, %lld, %lld, %lld];\n", p, x->dim[0],
			    (long long)C, (long long)HP, (long long)WP);
			fprintf(g->body, "  %s[_a0, _a1, _a2, _a3] = (%s) ? %s[_a0, _a1, _a2 - %lld, "
			    "_a3 - %lld] : 0.0;\n", p, guard, in, (long long)pb[0], (long long)pb[1]);
		}
		in = p;
	}
	/* the sums: input blocks (or channels), taps, the channels of a block */
	const char *ranges = arena_printf(perm, "_r0 < %lld", (long long)(bin ? C / B : C));
	const char *hy = arena_printf(perm, "%lld * %s", (long long)st[0], oh);
	const char *wx = arena_printf(perm, "%lld * %s", (long long)st[1], ow);
	const char *ry = "0", *rx = "0";
	if (R > 1) {
		ranges = arena_printf(perm, "%s, _r1 < %lld", ranges, (long long)R);
		hy = arena_printf(perm, "%s + %lld * _r1", hy, (long long)dl[0]);
		ry = "_r1";
	}
	if (S > 1) {
		ranges = arena_printf(perm, "%s, _r2 < %lld", ranges, (long long)S);
		wx = arena_printf(perm, "%s + %lld * _r2", wx, (long long)dl[1]);
		rx = "_r2";
	}
	const char *rd, *wr;
	bool padded = in != x->tx;   /* the padding stage, or x itself */
	if (bin) {
		ranges = arena_printf(perm, "%s, _r3 < %d", ranges, B);
		rd = padded ? arena_printf(perm, "%s[_a0, _r0, %s, %s, _r3]", in, hy, wx) :
		    layout_at(g, x, (const char *[5]){ "_a0", "_r0", hy, wx, "_r3" });
		wr = arena_printf(perm, "%s[_a1, _r0, %s, %s, _r3, %s]", graph_use(g, wp), ry, rx, ko);
	} else {
		rd = arena_printf(perm, "%s[_a0, _r0, %s, %s]", in, hy, wx);
		wr = arena_printf(perm, "%s[_a1, _r0, %s, %s, %s]", graph_use(g, wp), ry, rx, ko);
	}
	const char *sum = arena_printf(perm, "sum(%s) %s * %s", ranges, rd, wr);
	if (!bp) {
		emit_rule(g, y, sum);
		return true;
	}
	Val tmp = *y;
	tmp.tx = graph_fresh(g, arena_printf(perm, "%s_conv", y->tx));
	tmp.is_output = false;
	tmp.declared = false;
	emit_rule(g, &tmp, sum);
	const char *bi[2] = { "_a1", ko };
	emit_rule(g, y, arena_printf(perm, "%s[%s] + %s", tmp.tx, layout_axes(y), emit_at(g, bp, bi)));
	return true;
}
