/* graph.c: the values of an ONNX graph as .tx tensors, and the shape
 * computations folded at import.
 *
 * Every value gets a .tx name (its ONNX name made an identifier, unique),
 * a type and a shape whose extents are numbers or, for the dynamic
 * dimensions of the graph inputs, expressions of size parameters in
 * sym.c's canonical form.  A value whose bytes are known (fold.c) becomes
 * a constant tensor (tx.5 CONSTANTS, data held in memory) only where a
 * stage reads it; one known as expressions of the sizes becomes a stage
 * that computes them.
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
		"import", "kernel", "schedule", "intrinsic", "for", "as", "in", "out", "const", "layout",
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
	if (value < 0 && text) {
		Sym s = sym_parse(text);
		if (!s.t && s.v >= 0)
			value = s.v;
		else
			text = sym_text(s);
	}
	v->dimv[d] = value;
	v->dim[d] = value >= 0 || !text ? arena_printf(perm, "%lld", (long long)value) : text;
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
	} else if (v->sym) {
		/* its elements, chosen by their flat index */
		fprintf(g->decls, "  %s: %s%s;\n", v->tx, graph_type(v->dtype), graph_shape(v));
		const char *flat = "0", *stride = "1", *e = NULL;
		for (int d = v->ndims - 1; d >= 0; d--) {
			flat = arena_printf(perm, "%s + _a%d * %s", flat, d, stride);
			stride = arena_printf(perm, "%s * %s", stride, v->dim[d]);
		}
		for (int i = v->nsym - 1; i >= 0; i--)
			e = !e ? graph_sym_expr(v, i) : arena_printf(perm, "%s == %d ? %s : (%s)", flat, i,
			    graph_sym_expr(v, i), e);
		fprintf(g->body, "  %s%s%s%s = %s;\n", v->tx, v->ndims > 0 ? "[" : "",
		    v->ndims > 0 ? emit_axes(v->ndims) : "", v->ndims > 0 ? "]" : "", e);
	}
	return v->tx;
}

const char *
graph_sym_expr(Val *v, int i)
{
	return arena_printf(perm, "%s(%s)", graph_type(v->dtype), sym_text(v->sym[i]));
}

Sym *
graph_syms(Val *v, int *n)
{
	if (!v)
		return NULL;
	if (v->sym) {
		*n = v->nsym;
		return v->sym;
	}
	if (!v->cdata)
		return NULL;
	int size = model_elem_size(v->dtype);
	if (size <= 0 || (v->dtype != OT_INT64 && v->dtype != OT_INT32 && v->dtype != OT_BOOL &&
	    v->dtype != OT_UINT8 && v->dtype != OT_INT8 && v->dtype != OT_INT16))
		return NULL;
	*n = (int)(v->clen / (size_t)size);
	Sym *out = arena_alloc(perm, (size_t)(*n + 1) * sizeof *out);
	for (int i = 0; i < *n; i++) {
		const unsigned char *p = v->cdata + (size_t)size * (size_t)i;
		int64_t x = 0;
		if (size == 8) {
			memcpy(&x, p, 8);
		} else if (size == 4) {
			int32_t y;
			memcpy(&y, p, 4);
			x = y;
		} else if (size == 2) {
			int16_t y;
			memcpy(&y, p, 2);
			x = y;
		} else {
			x = v->dtype == OT_INT8 ? (int8_t)*p : *p;
		}
		out[i] = sym_num(x);
	}
	return out;
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

