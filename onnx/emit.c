/* emit.c: each ONNX operator as .tx stages.
 *
 * A node's results become stages of the model's kernel: element-wise and
 * broadcast operators one rule each (an input of extent 1 read at index
 * 0, numpy's broadcast), layout operators (Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Concat) index remappings, reductions a stage with
 * a reduction; MatMul, Gemm, Conv and Softmax call the stdlib's matmul,
 * dense, conv2d_nchw_general and softmax where their shapes fit (they
 * bring their schedules), else are written out.  Axes are _a0, _a1 ...,
 * reduction axes _r0 ..., names no value gets (graph.c).
 */
#define TXC_ONNX_INTERNAL
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"

const char *
emit_axes(int r)
{
	const char *s = "";
	for (int d = 0; d < r; d++)
		s = arena_printf(perm, "%s%s_a%d", s, d ? ", " : "", d);
	return s;
}

/* The left side of a rule for v: "y[_a0, _a1]" or "y" (a blocked one's
 * five axes: channel _a1 * cb + _a4). */
const char *
emit_lhs(Val *v)
{
	if (v->cb)
		return arena_printf(perm, "%s[%s]", v->tx, layout_axes(v));
	return v->ndims > 0 ? arena_printf(perm, "%s[%s]", v->tx, emit_axes(v->ndims)) : v->tx;
}

/* A read of v with the given index texts (of its ONNX shape: a blocked
 * value's channel index is mapped to its block and lane). */
const char *
emit_at(Graph *g, Val *v, const char **idx)
{
	const char *name = graph_use(g, v);
	if (v->cb) {
		/* min(): the block of an index the bounds check cannot fold (a
		 * Flatten's) is still proved in range */
		const char *p[5] = { idx[0], arena_printf(perm, "min((%s) / %d, %lld)", idx[1], v->cb,
			(long long)(v->dimv[1] / v->cb - 1)), idx[2], idx[3],
			arena_printf(perm, "(%s) %% %d", idx[1], v->cb) };
		return layout_at(g, v, p);
	}
	if (v->ndims <= 0)
		return name;
	const char *s = "";
	for (int d = 0; d < v->ndims; d++)
		s = arena_printf(perm, "%s%s%s", s, d ? ", " : "", idx[d]);
	return arena_printf(perm, "%s[%s]", name, s);
}

/* A read of in at the point of out's axes, broadcast numpy's way; a known
 * one-element float becomes a literal. */
const char *
emit_bread(Graph *g, Val *in, Val *out)
{
	if (in->cdata && graph_numel(in) == 1 && (in->dtype == OT_FLOAT || in->dtype == OT_DOUBLE)) {
		double v;
		if (in->dtype == OT_FLOAT) {
			float f;
			memcpy(&f, in->cdata, 4);
			v = f;
		} else {
			memcpy(&v, in->cdata, 8);
		}
		const char *lit = graph_float(v);
		if (lit)
			return arena_printf(perm, "(%s)", lit);
	}
	if (out->cb && in->cb == out->cb && in->flatw == out->flatw && graph_same_shape(in, out))
		return arena_printf(perm, "%s[%s]", graph_use(g, in), layout_axes(out));
	if (out->cb && in->cb == out->cb && graph_same_shape(in, out))   /* one of them flat */
		return layout_at(g, in, out->flatw ? (const char *[5]){ "_a0", "_a1",
		    arena_printf(perm, "_a2 / %lld", (long long)out->flatw),
		    arena_printf(perm, "_a2 %% %lld", (long long)out->flatw), "_a3" } :
		    (const char *[5]){ "_a0", "_a1", "_a2", "_a3", "_a4" });
	const char **idx = arena_alloc(perm, (size_t)(in->ndims + 1) * sizeof *idx);
	int off = out->ndims - in->ndims;
	for (int d = 0; d < in->ndims; d++)
		idx[d] = in->dimv[d] == 1 && out->dimv[d + off] != 1 ? "0" :
		    out->cb && out->flatw ? (d + off == 1 ? arena_printf(perm, "_a1 * %d + _a3", out->cb) :
		    d + off == 2 ? arena_printf(perm, "_a2 / %lld", (long long)out->flatw) :
		    d + off == 3 ? arena_printf(perm, "_a2 %% %lld", (long long)out->flatw) : "_a0") :
		    out->cb && d + off == 1 ? arena_printf(perm, "_a1 * %d + _a4", out->cb) :
		    arena_printf(perm, "_a%d", d + off);
	return emit_at(g, in, idx);
}

/* Result i of n: a new value (an output's declaration waits for the end). */
Val *
emit_result(Graph *g, OnnxNode *n, int i, int dtype, int ndims)
{
	Val *v = graph_new_val(g, n->out[i], dtype, ndims);
	v->defined = true;
	for (int k = 0; k < g->m->noutputs; k++)
		if (!strcmp(g->m->outputs[k].name, n->out[i]))
			v->is_output = true;
	return v;
}

void
emit_declare(Graph *g, Val *v)
{
	if (v->is_output || v->declared)
		return;
	v->declared = true;
	fprintf(g->decls, "  %s: %s%s;\n", v->tx, graph_type(v->dtype),
	    v->cb ? layout_shape(v) : graph_shape(v));
}

void
emit_rule(Graph *g, Val *v, const char *value)
{
	emit_declare(g, v);
	fprintf(g->body, "  %s = %s;\n", emit_lhs(v), value);
}

void
emit_copy_dims(Val *to, Val *from)
{
	for (int d = 0; d < from->ndims; d++)
		graph_set_dim(to, d, from->dimv[d], from->dim[d]);
}

Val *
emit_in(Graph *g, OnnxNode *n, int i)
{
	return i < n->nin ? graph_val(g, n->in[i]) : NULL;
}

/* ---- element-wise ------------------------------------------------------------ */

static const char *
unary(OnnxNode *n, const char *x, bool *ok)
{
	const char *op = n->op;
	*ok = true;
	if (!strcmp(op, "Relu")) return arena_printf(perm, "max(%s, 0.0)", x);
	if (!strcmp(op, "Sigmoid")) return arena_printf(perm, "sigmoid(%s)", x);
	if (!strcmp(op, "Tanh")) return arena_printf(perm, "tanh(%s)", x);
	if (!strcmp(op, "Exp")) return arena_printf(perm, "exp(%s)", x);
	if (!strcmp(op, "Log")) return arena_printf(perm, "log(%s)", x);
	if (!strcmp(op, "Sqrt")) return arena_printf(perm, "sqrt(%s)", x);
	if (!strcmp(op, "Erf")) return arena_printf(perm, "erf(%s)", x);
	if (!strcmp(op, "Abs")) return arena_printf(perm, "abs(%s)", x);
	if (!strcmp(op, "Neg")) return arena_printf(perm, "-(%s)", x);
	if (!strcmp(op, "Floor")) return arena_printf(perm, "floor(%s)", x);
	if (!strcmp(op, "Ceil")) return arena_printf(perm, "ceil(%s)", x);
	if (!strcmp(op, "Reciprocal")) return arena_printf(perm, "1.0 / %s", x);
	if (!strcmp(op, "Identity") || !strcmp(op, "Dropout")) return x;
	if (!strcmp(op, "LeakyRelu"))
		return arena_printf(perm, "%s >= 0.0 ? %s : %s * %s", x, x,
		    graph_float(model_attr_float(n, "alpha", 0.01)), x);
	if (!strcmp(op, "Elu"))
		return arena_printf(perm, "%s >= 0.0 ? %s : %s * (exp(%s) - 1.0)", x, x,
		    graph_float(model_attr_float(n, "alpha", 1.0)), x);
	if (!strcmp(op, "HardSigmoid"))
		return arena_printf(perm, "max(min(%s * %s + %s, 1.0), 0.0)",
		    graph_float(model_attr_float(n, "alpha", 0.2)), x,
		    graph_float(model_attr_float(n, "beta", 0.5)));
	if (!strcmp(op, "HardSwish"))
		return arena_printf(perm, "%s * max(min(%s / 6.0 + 0.5, 1.0), 0.0)", x, x);
	if (!strcmp(op, "Softplus")) return arena_printf(perm, "log(exp(%s) + 1.0)", x);
	if (!strcmp(op, "Softsign")) return arena_printf(perm, "%s / (1.0 + abs(%s))", x, x);
	if (!strcmp(op, "Sin")) return arena_printf(perm, "sin(%s)", x);
	if (!strcmp(op, "Cos")) return arena_printf(perm, "cos(%s)", x);
	if (!strcmp(op, "Sign"))
		return arena_printf(perm, "%s > 0.0 ? 1.0 : (%s < 0.0 ? -1.0 : 0.0)", x, x);
	if (!strcmp(op, "Mish"))
		return arena_printf(perm, "%s * tanh(log(exp(%s) + 1.0))", x, x);
	if (!strcmp(op, "ThresholdedRelu"))
		return arena_printf(perm, "%s > %s ? %s : 0.0", x,
		    graph_float(model_attr_float(n, "alpha", 1.0)), x);
	if (!strcmp(op, "Selu"))
		return arena_printf(perm, "%s * (%s > 0.0 ? %s : %s * (exp(%s) - 1.0))",
		    graph_float(model_attr_float(n, "gamma", 1.05070102214813232421875)), x, x,
		    graph_float(model_attr_float(n, "alpha", 1.67326319217681884765625)), x);
	if (!strcmp(op, "Celu")) {
		const char *a = graph_float(model_attr_float(n, "alpha", 1.0));
		return arena_printf(perm, "max(%s, 0.0) + min(%s * (exp(%s / %s) - 1.0), 0.0)", x, a,
		    x, a);
	}
	*ok = false;
	return NULL;
}

static bool
is_float(int dt)
{
	return dt == OT_FLOAT || dt == OT_DOUBLE || dt == OT_FLOAT16 || dt == OT_BFLOAT16;
}

/* Mod: tx's integer % is never negative (Euclidean); ONNX's takes the
 * divisor's sign, and with fmod C's fmod, the dividend's.  Floats (fmod
 * only) are a - b * trunc(a / b), computed in f64. */
static const char *
mod(int dt, bool fmod_, const char *a, const char *b)
{
	const char *T = graph_type(dt);
	if (is_float(dt)) {
		const char *q = arena_printf(perm, "f64(%s) / f64(%s)", a, b);
		return arena_printf(perm, "%s(f64(%s) - f64(%s) * (%s >= 0.0 ? floor(%s) : ceil(%s)))", T,
		    a, b, q, q, q);
	}
	const char *r = arena_printf(perm, "((%s) %% (%s))", a, b);
	if (dt == OT_UINT8 || dt == OT_UINT16 || dt == OT_UINT32 || dt == OT_UINT64)
		return r;
	if (fmod_)
		return arena_printf(perm, "(%s) < %s(0) && %s != %s(0) ? "
		    "(%s < %s(0) ? %s + (%s) : %s - (%s)) : %s", a, T, r, T, b, T, r, b, r, b, r);
	return arena_printf(perm, "(%s) < %s(0) && %s != %s(0) ? %s + (%s) : %s", b, T, r, T, r, b, r);
}

/* The element-wise operators whose result depends on the type: Round
 * (half to even: floor, then up above a half, or at a half from an odd
 * floor), IsNaN, IsInf (beyond the largest finite value), Shrink; NULL
 * for the others */
static const char *
typed_unary(Graph *g, OnnxNode *n, const char *x, Val *y, bool *failed)
{
	const char *op = n->op;
	*failed = false;
	if (strcmp(op, "Round") && strcmp(op, "IsNaN") && strcmp(op, "IsInf") && strcmp(op, "Shrink"))
		return NULL;
	if (!is_float(y->dtype)) {
		graph_error(g, n, "needs a floating-point input");
		*failed = true;
		return NULL;
	}
	if (!strcmp(op, "Round")) {
		const char *f = arena_printf(perm, "floor(%s)", x);
		const char *d = arena_printf(perm, "%s - %s", x, f);
		return arena_printf(perm, "%s + (%s > 0.5 || "
		    "(%s == 0.5 && %s - 2.0 * floor(%s * 0.5) != 0.0) ? 1.0 : 0.0)", f, d, d, f, f);
	}
	if (!strcmp(op, "Shrink")) {
		const char *l = graph_float(model_attr_float(n, "lambd", 0.5));
		const char *b = graph_float(model_attr_float(n, "bias", 0.0));
		if (!l || !b) {
			graph_error(g, n, "its lambd and bias must be finite");
			*failed = true;
			return NULL;
		}
		return arena_printf(perm, "%s < -%s ? %s + %s : (%s > %s ? %s - %s : 0.0)",
		    x, l, x, b, x, l, x, b);
	}
	const char *max = y->dtype == OT_DOUBLE ? "1.7976931348623157e308" :
	    y->dtype == OT_FLOAT16 ? "65504.0" : y->dtype == OT_BFLOAT16 ? "3.3895313892515355e38" :
	    "3.4028234663852886e38";
	y->dtype = OT_BOOL;
	if (!strcmp(op, "IsNaN"))
		return arena_printf(perm, "%s != %s", x, x);
	bool pos = model_attr_int(n, "detect_positive", 1) != 0;
	bool neg = model_attr_int(n, "detect_negative", 1) != 0;
	if (pos && neg)
		return arena_printf(perm, "abs(%s) > %s", x, max);
	if (pos || neg)
		return arena_printf(perm, "%s %s %s%s", x, pos ? ">" : "<", pos ? "" : "-", max);
	return "false";
}

/* A scalar bound of Clip as an expression read for each element of y
 * (a literal when known at compile time, else the one element of a
 * tensor computed at run time, e.g. a ReduceMax minus a margin), or
 * NULL when absent; *bad when it is not one element of x's type. */
static const char *
scalar_of(Graph *g, OnnxNode *n, int i, Val *x, Val *y, bool *bad)
{
	Val *v = emit_in(g, n, i);
	if (!v)
		return NULL;
	bool one = v->dtype == x->dtype;
	for (int d = 0; d < v->ndims; d++)
		one = one && v->dimv[d] == 1;
	if (!one || v->ndims > y->ndims) {
		*bad = true;
		return NULL;
	}
	return emit_bread(g, v, y);
}

static bool
elementwise(Graph *g, OnnxNode *n, bool *unsupported)
{
	const char *op = n->op;
	bool isbin = !strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
	    !strcmp(op, "Div") || !strcmp(op, "Pow") || !strcmp(op, "Max") || !strcmp(op, "Min") ||
	    !strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "PRelu") || !strcmp(op, "Mod");
	Val *x = emit_in(g, n, 0);
	if (!strcmp(op, "Mod") && (n->nin != 2 || !emit_in(g, n, 1) ||
	    emit_in(g, n, 1)->dtype != x->dtype)) {
		graph_error(g, n, "needs two inputs of one type");
		return false;
	}
	bool fmod_ = model_attr_int(n, "fmod", 0) != 0;
	if (!strcmp(op, "Mod") && !fmod_ && is_float(x->dtype)) {
		graph_error(g, n, "fmod must be 1 for floating-point inputs");
		return false;
	}
	if (isbin) {
		int r = 0;
		for (int i = 0; i < n->nin; i++) {
			Val *v = emit_in(g, n, i);
			if (!v)
				return false;
			r = v->ndims > r ? v->ndims : r;
		}
		Val *y = emit_result(g, n, 0, x->dtype, r);
		for (int d = 0; d < r; d++) {
			graph_set_dim(y, d, 1, NULL);
			for (int i = 0; i < n->nin; i++) {
				Val *v = emit_in(g, n, i);
				int k = d - (r - v->ndims);
				if (k < 0 || v->dimv[k] == 1)
					continue;
				if (y->dimv[d] != 1 && strcmp(y->dim[d], v->dim[k])) {
					graph_error(g, n, "inputs of extents %s and %s do not broadcast",
					    y->dim[d], v->dim[k]);
					return false;
				}
				graph_set_dim(y, d, v->dimv[k], v->dim[k]);
			}
		}
		y->cb = layout_elementwise(g, n, y);
		const char *e = emit_bread(g, x, y);
		for (int i = 1; i < n->nin; i++) {
			const char *b = emit_bread(g, emit_in(g, n, i), y);
			if (!strcmp(op, "Sub"))
				e = arena_printf(perm, "%s - (%s)", e, b);
			else if (!strcmp(op, "Mul"))
				e = arena_printf(perm, "(%s) * (%s)", e, b);
			else if (!strcmp(op, "Div"))
				e = arena_printf(perm, "(%s) / (%s)", e, b);
			else if (!strcmp(op, "Pow"))
				e = arena_printf(perm, "pow(%s, %s)", e, b);
			else if (!strcmp(op, "Max"))
				e = arena_printf(perm, "max(%s, %s)", e, b);
			else if (!strcmp(op, "Min"))
				e = arena_printf(perm, "min(%s, %s)", e, b);
			else if (!strcmp(op, "Mod"))
				e = mod(x->dtype, fmod_, e, b);
			else if (!strcmp(op, "PRelu"))   /* b the slope */
				e = arena_printf(perm, "(%s) >= 0.0 ? (%s) : (%s) * (%s)", e, e, b, e);
			else    /* Add, Sum, Mean */
				e = arena_printf(perm, "%s + %s", e, b);
		}
		if (!strcmp(op, "Mean"))
			e = arena_printf(perm, "(%s) / %d.0", e, n->nin);
		emit_rule(g, y, e);
		return true;
	}
	if (!x)
		return false;
	Val *y = emit_result(g, n, 0, x->dtype, x->ndims);
	emit_copy_dims(y, x);
	y->cb = layout_elementwise(g, n, y);
	const char *xe = emit_bread(g, x, y);
	if (!strcmp(op, "Clip")) {
		bool bad = false;
		const char *lo, *hi;
		if (g->m->opset < 11) {
			lo = graph_float(model_attr_float(n, "min", -3.4028234663852886e38));
			hi = graph_float(model_attr_float(n, "max", 3.4028234663852886e38));
		} else {
			lo = scalar_of(g, n, 1, x, y, &bad);
			hi = scalar_of(g, n, 2, x, y, &bad);
		}
		if (bad) {
			graph_error(g, n, "its bounds must be single elements of its input's type");
			return false;
		}
		const char *e = xe;
		if (lo)
			e = arena_printf(perm, "max(%s, %s)", e, lo);
		if (hi)
			e = arena_printf(perm, "min(%s, %s)", e, hi);
		emit_rule(g, y, e);
		return true;
	}
	if (!strcmp(op, "Cast")) {
		int to = (int)model_attr_int(n, "to", OT_FLOAT);
		if (!graph_type(to)) {
			*unsupported = true;
			return false;
		}
		y->dtype = to;
		emit_rule(g, y, arena_printf(perm, "%s(%s)", graph_type(to), xe));
		return true;
	}
	bool failed;
	const char *te = typed_unary(g, n, xe, y, &failed);
	if (failed)
		return false;
	if (te) {
		emit_rule(g, y, te);
		return true;
	}
	bool ok;
	const char *e = unary(n, xe, &ok);
	if (!ok) {
		*unsupported = true;
		return false;
	}
	emit_rule(g, y, e);
	return true;
}

bool
emit_node(Graph *g, OnnxNode *n, bool *unsupported)
{
	*unsupported = false;
	for (int i = 0; i < n->nin; i++)
		if (*n->in[i] && !graph_val(g, n->in[i])) {
			graph_error(g, n, "input '%s' is not defined before it", n->in[i]);
			return false;
		}
	if (n->nout < 1 || !*n->out[0]) {
		graph_error(g, n, "it has no output");
		return false;
	}
	if (n->nin < 1 || !*n->in[0]) {
		graph_error(g, n, "its first input is missing");
		return false;
	}
	for (int i = 0; i < n->nin; i++) {
		Val *v = graph_val(g, n->in[i]);
		if (v && v->ndims < 0) {
			graph_error(g, n, "input '%s' has no known shape", n->in[i]);
			return false;
		}
		if (v && v->ndims > 8) {
			graph_error(g, n, "input '%s' has %d dimensions (at most 8)", n->in[i], v->ndims);
			return false;
		}
	}
	bool handled = false;
	bool ok = ops_node(g, n, unsupported, &handled);
	return handled ? ok : elementwise(g, n, unsupported);
}
