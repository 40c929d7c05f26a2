/* model.c: an ONNX ModelProto read into OnnxModel (onnx.h).
 *
 * Field numbers are onnx.proto's (ModelProto, GraphProto, NodeProto,
 * AttributeProto, TensorProto, ValueInfoProto and the type and shape
 * messages under it); unknown fields are skipped, as protobuf requires.
 * A tensor's elements end up as little-endian bytes: raw_data and a
 * single packed float_data stay in the file, the other typed fields
 * (int32_data for the small types, int64_data, double_data, uint64_data)
 * are converted.  External data and strings are refused by name.
 */
#include <string.h>

#include "onnx/onnx.h"

int
model_elem_size(int dtype)
{
	switch (dtype) {
	case OT_FLOAT: case OT_INT32: case OT_UINT32: return 4;
	case OT_UINT8: case OT_INT8: case OT_BOOL: return 1;
	case OT_UINT16: case OT_INT16: case OT_FLOAT16: case OT_BFLOAT16: return 2;
	case OT_INT64: case OT_DOUBLE: case OT_UINT64: return 8;
	default: return 0;
	}
}

static bool
read_tensor(PbReader *r, const PbField *msg, OnnxTensor *t)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	int capd = 0, n32 = 0, cap32 = 0, n64 = 0, cap64 = 0, nf = 0, capf = 0;
	int64_t *i32 = NULL, *i64 = NULL;
	float *fl = NULL;
	const unsigned char *fdata = NULL;
	size_t flen = 0;
	int nfchunks = 0;
	bool external = false, raw = false;
	memset(t, 0, sizeof *t);
	t->name = "";
	while (pb_next(&s, &f)) {
		switch (f.field) {
		case 1: if (!pb_varints(&s, &f, &t->dims, &t->ndims, &capd)) return false; break;
		case 2: t->dtype = (int)f.v; break;
		case 4:
			if (f.wire == 2 && f.len % 4 == 0) {
				fdata = f.data;
				flen = f.len;
				nfchunks++;
			}
			if (!pb_floats(&s, &f, &fl, &nf, &capf))
				return false;
			break;
		case 5: if (!pb_varints(&s, &f, &i32, &n32, &cap32)) return false; break;
		case 7: case 11: if (!pb_varints(&s, &f, &i64, &n64, &cap64)) return false; break;
		case 8: t->name = pb_string(&f); break;
		case 9: t->data = f.data; t->len = f.len; raw = f.wire == 2; break;
		case 10: {   /* double_data: fixed64, packed or not */
			if (f.wire == 1) {
				*ARENA_PUSH(perm, i64, n64, cap64) = (int64_t)f.v;
			} else if (f.wire == 2 && f.len % 8 == 0) {
				for (size_t i = 0; i < f.len; i += 8) {
					int64_t v;
					memcpy(&v, f.data + i, 8);
					*ARENA_PUSH(perm, i64, n64, cap64) = v;
				}
			} else {
				pb_error(&s, f.at, "double_data is malformed");
				return false;
			}
			break;
		}
		case 14: external = f.v == 1; break;
		}
	}
	if (*s.errp)
		return false;
	if (external) {
		pb_error(r, msg->at, "tensor '%s' keeps its data in an external file, which txc "
		    "does not read; save the model with its data inside", t->name);
		return false;
	}
	int size = model_elem_size(t->dtype);
	if (!size) {
		pb_error(r, msg->at, "tensor '%s' has element type %d, which txc does not take",
		    t->name, t->dtype);
		return false;
	}
	uint64_t count = 1;
	for (int d = 0; d < t->ndims; d++) {
		if (t->dims[d] < 0 || t->dims[d] > INT64_C(1) << 40 ||
		    (t->dims[d] && count > (UINT64_C(1) << 40) / (uint64_t)t->dims[d])) {
			pb_error(r, msg->at, "tensor '%s' has a bad dimension %lld", t->name,
			    (long long)t->dims[d]);
			return false;
		}
		count *= (uint64_t)t->dims[d];
	}
	if (raw) {
		/* kept in the file */
	} else if (nf) {
		if (nfchunks == 1 && flen == (size_t)nf * 4) {
			t->data = fdata;
		} else {
			t->data = (const unsigned char *)fl;
		}
		t->len = (size_t)nf * 4;
		if (t->dtype != OT_FLOAT) {
			pb_error(r, msg->at, "tensor '%s' holds float_data but is of type %d", t->name,
			    t->dtype);
			return false;
		}
	} else if (n32 || n64) {
		int n = n32 ? n32 : n64;
		int64_t *v = n32 ? i32 : i64;
		unsigned char *b = arena_alloc(perm, (size_t)n * (size_t)size + 1);
		for (int i = 0; i < n; i++)
			memcpy(b + (size_t)i * size, &v[i], (size_t)size);   /* little-endian host */
		t->data = b;
		t->len = (size_t)n * (size_t)size;
	}
	if (t->len != count * (uint64_t)size) {
		pb_error(r, msg->at, "tensor '%s' has %zu bytes of data; its shape needs %llu",
		    t->name, t->len, (unsigned long long)(count * (uint64_t)size));
		return false;
	}
	return true;
}

static bool
read_shape(PbReader *r, const PbField *msg, OnnxValueInfo *v)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	int cap = 0;
	v->ndims = 0;
	while (pb_next(&s, &f)) {
		if (f.field != 1 || f.wire != 2)
			continue;
		OnnxDim *d = ARENA_PUSH(perm, v->dims, v->ndims, cap);
		d->value = -1;
		PbReader ds = pb_sub(&s, &f);
		PbField g;
		while (pb_next(&ds, &g)) {
			if (g.field == 1 && g.wire == 0)
				d->value = (int64_t)g.v;
			else if (g.field == 2 && g.wire == 2 && g.len)
				d->param = pb_string(&g);
		}
	}
	return !*s.errp;
}

static bool
read_value_info(PbReader *r, const PbField *msg, OnnxValueInfo *v)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	memset(v, 0, sizeof *v);
	v->name = "";
	v->ndims = -1;
	while (pb_next(&s, &f)) {
		if (f.field == 1) {
			v->name = pb_string(&f);
		} else if (f.field == 2 && f.wire == 2) {        /* TypeProto */
			PbReader ts = pb_sub(&s, &f);
			PbField g;
			while (pb_next(&ts, &g)) {
				if (g.field != 1 || g.wire != 2)          /* tensor_type */
					continue;
				PbReader tt = pb_sub(&ts, &g);
				PbField h;
				while (pb_next(&tt, &h)) {
					if (h.field == 1 && h.wire == 0)
						v->dtype = (int)h.v;
					else if (h.field == 2 && h.wire == 2 && !read_shape(&tt, &h, v))
						return false;
				}
			}
		}
	}
	return !*s.errp;
}

static bool read_graph(PbReader *r, const PbField *msg, OnnxModel *m);

/* how deep subgraphs may nest (If within If...): a file of nested graphs
 * must not exhaust the stack */
enum { MAX_GRAPH_DEPTH = 16 };
static int graph_depth;

static bool
read_attr(PbReader *r, const PbField *msg, OnnxAttr *a)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	int capf = 0, capi = 0;
	memset(a, 0, sizeof *a);
	a->name = a->s = "";
	while (pb_next(&s, &f)) {
		switch (f.field) {
		case 1: a->name = pb_string(&f); break;
		case 2: if (f.wire == 5) { float x; uint32_t b = (uint32_t)f.v; memcpy(&x, &b, 4); a->f = x; } break;
		case 3: if (f.wire == 0) a->i = (int64_t)f.v; break;
		case 4: a->s = pb_string(&f); break;
		case 5:
			if (f.wire == 2) {
				a->t = arena_alloc(perm, sizeof *a->t);
				if (!read_tensor(&s, &f, a->t))
					return false;
			}
			break;
		case 6:
			if (f.wire == 2) {
				if (graph_depth >= MAX_GRAPH_DEPTH) {
					pb_error(&s, f.at, "subgraphs nested more than %d deep",
					    MAX_GRAPH_DEPTH);
					return false;
				}
				a->g = arena_alloc(perm, sizeof *a->g);
				memset(a->g, 0, sizeof *a->g);
				a->g->name = "";
				graph_depth++;
				bool ok = read_graph(&s, &f, a->g);
				graph_depth--;
				if (!ok)
					return false;
			}
			break;
		case 7: if (!pb_floats(&s, &f, &a->floats, &a->nfloats, &capf)) return false; break;
		case 8: if (!pb_varints(&s, &f, &a->ints, &a->nints, &capi)) return false; break;
		case 20: a->type = (int)f.v; break;
		}
	}
	return !*s.errp;
}

static bool
read_node(PbReader *r, const PbField *msg, OnnxNode *n)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	int capi = 0, capo = 0, capa = 0;
	memset(n, 0, sizeof *n);
	n->name = n->op = n->domain = "";
	n->at = msg->at;
	while (pb_next(&s, &f)) {
		if (f.wire != 2)
			continue;
		switch (f.field) {
		case 1: *ARENA_PUSH(perm, n->in, n->nin, capi) = pb_string(&f); break;
		case 2: *ARENA_PUSH(perm, n->out, n->nout, capo) = pb_string(&f); break;
		case 3: n->name = pb_string(&f); break;
		case 4: n->op = pb_string(&f); break;
		case 5: if (!read_attr(&s, &f, ARENA_PUSH(perm, n->attrs, n->nattrs, capa))) return false; break;
		case 7: n->domain = pb_string(&f); break;
		}
	}
	return !*s.errp;
}

static bool
read_graph(PbReader *r, const PbField *msg, OnnxModel *m)
{
	PbReader s = pb_sub(r, msg);
	PbField f;
	int capn = 0, capt = 0, capi = 0, capo = 0;
	while (pb_next(&s, &f)) {
		if (f.wire != 2)
			continue;
		switch (f.field) {
		case 1: if (!read_node(&s, &f, ARENA_PUSH(perm, m->nodes, m->nnodes, capn))) return false; break;
		case 2: m->name = pb_string(&f); break;
		case 5: if (!read_tensor(&s, &f, ARENA_PUSH(perm, m->inits, m->ninits, capt))) return false; break;
		case 11: if (!read_value_info(&s, &f, ARENA_PUSH(perm, m->inputs, m->ninputs, capi))) return false; break;
		case 12: if (!read_value_info(&s, &f, ARENA_PUSH(perm, m->outputs, m->noutputs, capo))) return false; break;
		case 15:
			pb_error(&s, f.at, "sparse initializers are not supported");
			return false;
		}
	}
	return !*s.errp;
}

OnnxModel *
model_read(const unsigned char *data, size_t len, char **err)
{
	*err = NULL;
	PbReader r = pb_reader(data, len, err);
	OnnxModel *m = arena_alloc(perm, sizeof *m);
	m->name = "";
	PbField f;
	bool graph = false;
	while (pb_next(&r, &f)) {
		if (f.field == 1 && f.wire == 0) {
			m->ir_version = (int64_t)f.v;
		} else if (f.field == 8 && f.wire == 2) {
			PbReader s = pb_sub(&r, &f);
			PbField g;
			const char *domain = "";
			int64_t version = 0;
			while (pb_next(&s, &g)) {
				if (g.field == 1)
					domain = pb_string(&g);
				else if (g.field == 2 && g.wire == 0)
					version = (int64_t)g.v;
			}
			if (!*domain || !strcmp(domain, "ai.onnx"))
				m->opset = version;
			else if (strcmp(domain, "ai.onnx.ml"))
				m->bad_domain = domain;
		} else if (f.field == 7 && f.wire == 2) {
			if (graph) {
				pb_error(&r, f.at, "two graphs in one model");
				break;
			}
			graph = true;
			if (!read_graph(&r, &f, m))
				break;
		}
	}
	if (*err)
		return NULL;
	if (!graph) {
		*err = arena_printf(perm, "no graph: this is not an ONNX model (%zu bytes)", len);
		return NULL;
	}
	if (m->opset == 0)
		m->opset = m->ir_version >= 3 ? 0 : 1;
	if (!branch_splice(m, err))
		return NULL;
	return m;
}

bool
model_read_tensor(const unsigned char *data, size_t len, OnnxTensor *t, char **err)
{
	*err = NULL;
	PbReader r = pb_reader(data, len, err);
	PbField whole = { .wire = 2, .data = data, .len = len };
	return read_tensor(&r, &whole, t);
}

OnnxAttr *
model_attr(OnnxNode *n, const char *name)
{
	for (int i = 0; i < n->nattrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t
model_attr_int(OnnxNode *n, const char *name, int64_t dflt)
{
	OnnxAttr *a = model_attr(n, name);
	return a ? a->i : dflt;
}

double
model_attr_float(OnnxNode *n, const char *name, double dflt)
{
	OnnxAttr *a = model_attr(n, name);
	return a ? a->f : dflt;
}
