/* import.c: an ONNX model file to the text of a .tx program.
 *
 * Reads the file (model.c), makes the graph inputs the kernel's inputs
 * (a dynamic dimension becomes a size parameter named by its dim_param,
 * or INPUT_dI for dimension I of input INPUT; -D fixes one as for any kernel), its initializers known
 * values, then folds or lowers the nodes in order (graph.c, emit.c) and
 * writes the graph outputs' declarations in graph order.  Every
 * unsupported node is reported in one run.  The text is registered as a
 * source named after the model, so diagnostics of later stages point
 * into it (--emit=tx prints it).
 */
#define TXC_ONNX_INTERNAL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

const char *
onnx_entry_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".onnx"))
		n -= 5;
	char *s = arena_alloc(perm, n + 2);
	size_t k = 0;
	if (!n || (base[0] >= '0' && base[0] <= '9'))
		s[k++] = '_';
	for (size_t i = 0; i < n; i++) {
		char c = base[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		s[k++] = ok ? c : '_';
	}
	s[k] = 0;
	return s;
}

static bool
is_init(OnnxModel *m, const char *name)
{
	for (int i = 0; i < m->ninits; i++)
		if (!strcmp(m->inits[i].name, name))
			return true;
	return false;
}

/* the size parameter of a dynamic dimension, added once per dim_param */
static const char *
size_param(Graph *g, const char *param, const char *input, int d)
{
	for (int i = 0; param && i < g->nsizes; i++)
		if (!strcmp(g->sparams[i], param))
			return g->sizes[i];
	const char *name = graph_fresh(g, param ? param : arena_printf(perm, "%s_d%d", input, d));
	*ARENA_PUSH(perm, g->sizes, g->nsizes, g->capsizes) = name;
	*ARENA_PUSH(perm, g->sparams, g->nsparams, g->capsparams) = param ? param : "";
	return name;
}

static bool
graph_inputs(Graph *g, const OnnxOptions *o)
{
	OnnxModel *m = g->m;
	for (int i = 0; i < m->ninits; i++) {
		OnnxTensor *t = &m->inits[i];
		Val *v = graph_new_val(g, t->name, t->dtype, t->ndims);
		for (int d = 0; d < t->ndims; d++)
			graph_set_dim(v, d, t->dims[d], NULL);
		v->cdata = t->data;
		v->clen = t->len;
		v->defined = true;
	}
	int nin = 0;
	for (int i = 0; i < m->ninputs; i++) {
		OnnxValueInfo *vi = &m->inputs[i];
		if (is_init(m, vi->name))
			continue;
		if (!graph_type(vi->dtype) || vi->ndims < 0) {
			diag_error(loc_none, "%s: input '%s' has %s, which txc does not take", g->kernel,
			    vi->name, vi->ndims < 0 ? "no shape" : "an element type");
			return false;
		}
		Val *v = graph_new_val(g, vi->name, vi->dtype, vi->ndims);
		for (int d = 0; d < vi->ndims; d++) {
			if (vi->dims[d].value > INT64_C(1) << 40) {
				diag_error(loc_none, "%s: input '%s' has an extent of %lld", g->kernel,
				    vi->name, (long long)vi->dims[d].value);
				return false;
			}
			if (vi->dims[d].value >= 0 && !vi->dims[d].param) {
				graph_set_dim(v, d, vi->dims[d].value, NULL);
				continue;
			}
			const char *p = size_param(g, vi->dims[d].param, vi->name, d);
			/* -D may name the dim_param as the model spells it
			 * (unk__314), which the .tx name may not be (unk_314):
			 * the option is renamed for the driver's later checks */
			for (int k = 0; o && vi->dims[d].param && k < o->ndefs; k++)
				if (!strcmp(o->defs[k], vi->dims[d].param))
					o->defs[k] = intern_cstr(p);
			/* the parameter stays in the ABI; -D fixes it, as for
			 * any kernel */
			graph_set_dim(v, d, -1, p);
		}
		v->defined = v->declared = true;
		fprintf(g->decls, "  in  %s: %s%s;\n", v->tx, graph_type(v->dtype), graph_shape(v));
		/* a size -D fixes is that number in the graph's shapes too (the
		 * FPN of a detector adds maps whose extents agree only for
		 * some sizes); the declaration keeps the parameter, which the
		 * entry point checks */
		for (int d = 0; o && d < vi->ndims; d++)
			for (int k = 0; v->dimv[d] < 0 && k < o->ndefs; k++)
				if (!strcmp(o->defs[k], v->dim[d]) && o->vals[k] >= 0)
					graph_set_dim(v, d, o->vals[k], NULL);
		nin++;
	}
	return true;
}

/* a bool known at compile time (branch_skipped): 1, 0, -1 when known
 * only at run time, -2 when never computed (in a branch not taken) */
static int
cond_known(void *ctx, const char *name)
{
	Val *v = graph_val(ctx, name);
	if (!v || !v->defined)
		return -2;
	if (!v->cdata || v->ndims < 0 || graph_numel(v) != 1)
		return -1;
	for (size_t i = 0; i < v->clen; i++)
		if (v->cdata[i])
			return 1;
	return 0;
}

/* An If's output (branch.c): the value of the branch taken when the
 * condition is known, else a Where over both */
static bool
resolve_if(Graph *g, OnnxNode *n)
{
	int c = cond_known(g, n->in[0]);
	if (c >= 0) {
		n->op = "Identity";
		n->in[0] = n->in[c ? 1 : 2];
		n->nin = 1;
		return true;
	}
	Val *t = graph_val(g, n->in[1]), *e = graph_val(g, n->in[2]);
	if (!t || !e || t->ndims < 0 || e->ndims < 0)
		return true;    /* emit_node says which is missing */
	if (!graph_same_shape(t, e) || t->dtype != e->dtype) {
		graph_error(g, n, "its branches give %s%s and %s%s: with a condition known only when "
		    "it runs, txc computes both and selects, which needs one type and shape",
		    graph_type(t->dtype), graph_shape(t), graph_type(e->dtype), graph_shape(e));
		return false;
	}
	n->op = "Where";
	return true;
}

static char *
build(Graph *g, const char *path, const OnnxOptions *o)
{
	OnnxModel *m = g->m;
	g->decls = open_memstream(&g->decls_text, &g->decls_len);
	g->body = open_memstream(&g->body_text, &g->body_len);
	if (!g->decls || !g->body)
		diag_fatal("out of memory");
	bool ok = graph_inputs(g, o);
	int nunsup = 0;
	for (int i = 0; ok && i < m->nnodes; i++) {
		OnnxNode *n = &m->nodes[i];
		if (n->folded)
			continue;
		if (*n->domain && strcmp(n->domain, "ai.onnx")) {
			diag_error(loc_none, "%s: node '%s': operator '%s' of domain '%s' is not supported",
			    g->kernel, n->name, n->op, n->domain);
			nunsup++;
			continue;
		}
		if (n->gate && branch_skipped(m, n, cond_known, g))
			continue;
		bool failed, unsupported = false, done = false;
		if (!strcmp(n->op, "If") && !*n->domain && !resolve_if(g, n))
			goto placeholders;
		if (fold_node(g, n, &failed))
			continue;
		if (failed)
			continue;
		done = emit_node(g, n, &unsupported);
		if (!done && unsupported) {
			diag_error(loc_none, "%s: node '%s': operator '%s' (opset %lld) is not supported",
			    g->kernel, *n->name ? n->name : "(unnamed)", n->op, (long long)m->opset);
			nunsup++;
		}
		/* the results of a node that failed (unsupported, or stopped
		 * half-way with an error): placeholders of no shape, so that
		 * later nodes are checked too and read no half-made shape */
placeholders:
		for (int k = 0; k < n->nout; k++)
			if (*n->out[k] && (!done || !graph_val(g, n->out[k]))) {
				Val *v = graph_new_val(g, n->out[k], OT_FLOAT, -1);
				v->defined = true;
			}
	}
	/* outputs, in graph order: written before the streams close, since
	 * the copy of a constant declares it */
	const char *outs = "", *copies = "";
	for (int i = 0; ok && !diag_errors() && i < m->noutputs; i++) {
		Val *v = graph_val(g, m->outputs[i].name);
		if (!v || v->ndims < 0 || v->ndims > 8) {
			diag_error(loc_none, "%s: output '%s' is not computed by the graph%s", g->kernel,
			    m->outputs[i].name, v && v->ndims > 8 ? " (it has more than 8 dimensions)" : "");
			continue;
		}
		const char *name = v->tx;
		if (!v->is_output || v->cdata) {
			/* an input, a constant or an output given twice: copied */
			name = graph_fresh(g, arena_printf(perm, "%s_out", v->tx));
			Val tmp = *v;
			tmp.tx = name;
			const char *idx[8];
			for (int d = 0; d < v->ndims; d++)
				idx[d] = arena_printf(perm, "_a%d", d);
			copies = arena_printf(perm, "%s  %s = %s;\n", copies, emit_lhs(&tmp),
			    emit_at(g, v, idx));
		}
		v->is_output = false;
		outs = arena_printf(perm, "%s  out %s: %s%s;\n", outs, name, graph_type(v->dtype),
		    graph_shape(v));
	}
	fclose(g->decls);
	fclose(g->body);
	g->decls = g->body = NULL;   /* a late write crashes, not corrupts the heap */
	if (!ok || diag_errors()) {
		free(g->decls_text);
		free(g->body_text);
		return NULL;
	}
	char *text;
	size_t len;
	FILE *fp = open_memstream(&text, &len);
	if (!fp)
		diag_fatal("out of memory");
	fprintf(fp, "// %s: made by txc from %s (ONNX opset %lld); do not edit.\n", g->kernel,
	    path, (long long)m->opset);
	static const char *const files[IMP_COUNT] = { "matmul.tx", "conv2d.tx", "softmax.tx" };
	for (int i = 0; i < IMP_COUNT; i++)
		if (g->imports[i])
			fprintf(fp, "import \"%s\";\n", files[i]);
	fprintf(fp, "\nkernel %s(", g->kernel);
	for (int i = 0; i < g->nsizes; i++)
		fprintf(fp, "%s%s", i ? ", " : "", g->sizes[i]);
	fprintf(fp, ") {\n%s%s", g->decls_text, outs);
	fprintf(fp, "%s%s}\n", g->body_text, copies);
	fclose(fp);
	free(g->decls_text);
	free(g->body_text);
	char *keep = arena_strndup(perm, text, len);
	free(text);
	return keep;
}

static OnnxModel *
load(const char *path, const unsigned char *data, size_t len)
{
	char *err;
	OnnxModel *m = model_read(data, len, &err);
	if (!m) {
		diag_error(loc_none, "%s: malformed ONNX model: %s", path, err);
		return NULL;
	}
	if (m->bad_domain) {
		diag_error(loc_none, "%s: the model uses operator set '%s', which txc does not "
		    "support (only the default domain, opsets 7 to 18)", path, m->bad_domain);
		return NULL;
	}
	if (m->opset && (m->opset < 7 || m->opset > 18))
		diag_warn(loc_none, "%s: opset %lld is outside the opsets txc knows (7 to 18)", path,
		    (long long)m->opset);
	return m;
}

uint32_t
onnx_import_bytes(const char *path, const unsigned char *data, size_t len,
    const OnnxOptions *o)
{
	OnnxModel *m = load(path, data, len);
	if (!m)
		return 0;
	Graph g = { .m = m, .kernel = onnx_entry_name(path), .conv_calls = true };
	*ARENA_PUSH(perm, g.used, g.nused, g.capused) = g.kernel;
	char *text = build(&g, path, o);
	if (!text)
		return 0;
	return source_add(arena_printf(perm, "%s.tx", path), text, strlen(text));
}

uint32_t
onnx_import(const char *path, const OnnxOptions *o)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		diag_error(loc_none, "cannot open '%s'", path);
		return 0;
	}
	unsigned char *data = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			unsigned char *p = realloc(data, cap);
			if (!p)
				diag_fatal("out of memory reading '%s'", path);
			data = p;
		}
		size_t k = fread(data + len, 1, cap - len, fp);
		if (!k)
			break;
		len += k;
	}
	bool bad = ferror(fp);
	fclose(fp);
	if (bad) {
		diag_error(loc_none, "cannot read '%s'", path);
		free(data);
		return 0;
	}
	/* the weights point into the bytes: they stay as long as the perm
	 * arena, which holds the pointer */
	*(unsigned char **)arena_alloc(perm, sizeof data) = data;
	return onnx_import_bytes(path, data, len, o);
}
