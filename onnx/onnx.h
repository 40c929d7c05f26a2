/* onnx.h: the ONNX front end (txc(1) ONNX MODELS).
 *
 * Takes the bytes of a .onnx file and gives the text of a .tx program
 * that computes the same graph: one kernel named after the file, whose
 * parameters are the graph's dynamic dimensions, inputs and outputs;
 * weights become constant tensors (tx.5 CONSTANTS) whose bytes stay in
 * memory (lang/blob.c); heavy operators call stdlib kernels (tx.5
 * CALLS).  The driver parses that text like any .tx file, so everything
 * after the front end is shared.
 *
 *   pb.c      the protobuf wire format, the subset onnx.proto uses
 *   model.c   ModelProto into the structures below
 *   graph.c   shapes of every value
 *   sym.c     size expressions in canonical form
 *   fold.c    values known at compile time, shape arithmetic, folded
 *   emit.c    the graph as .tx text, operator by operator (element-wise)
 *   ops.c     the data-movement operators (Reshape, Transpose, Concat...)
 *   nn.c      MatMul, Gemm, Conv, pools, BatchNormalization, reductions
 *   index.c   Slice, Gather, Expand, Pad, Split, Tile, Where, comparisons...
 *   norm.c    LayerNormalization, Gelu, MatMul of a vector
 *   upsample.c  Resize, Upsample, ConvTranspose
 *   layout.c  the blocked channel layout (NCHW16c) of convolution chains
 *   branch.c  If: both branches spliced into the graph, gated
 *   extra.c   DepthToSpace, Trilu, GatherElements, OneHot, ArgMax, LRN,
 *             MeanVarianceNormalization, CumSum and the like
 *   import.c  the entry point: file name to kernel name, errors
 */
#ifndef TXC_ONNX_H
#define TXC_ONNX_H

#include "lang/ast.h"

/* ---- pb.c: a reader over a byte range; errors carry the byte offset --- */
typedef struct {
	const unsigned char *base;   /* the whole file (offsets in errors) */
	const unsigned char *p, *end;
	char *err;                   /* first error, or NULL (shared by nested readers) */
	char **errp;
} PbReader;

typedef struct {
	uint32_t field;
	int wire;                    /* 0 varint, 1 fixed64, 2 bytes, 5 fixed32 */
	uint64_t v;                  /* varint, fixed64, fixed32 */
	const unsigned char *data;   /* wire 2 */
	size_t len;
	size_t at;                   /* the field's offset in the file */
} PbField;

PbReader pb_reader(const unsigned char *base, size_t len, char **errp);
PbReader pb_sub(PbReader *r, const PbField *f);
/* The next field, or false at the end or after an error. */
bool pb_next(PbReader *r, PbField *f);
void pb_error(PbReader *r, size_t at, const char *fmt, ...) TXC_PRINTF(3, 4);
/* Packed or single values of a repeated scalar field (wire 0, 2, 5, 1). */
bool pb_varints(PbReader *r, const PbField *f, int64_t **v, int *n, int *cap);
bool pb_floats(PbReader *r, const PbField *f, float **v, int *n, int *cap);
const char *pb_string(const PbField *f);

/* ---- model.c ------------------------------------------------------------ */
/* ONNX element types (TensorProto.DataType) */
enum {
	OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_UINT16 = 4, OT_INT16 = 5,
	OT_INT32 = 6, OT_INT64 = 7, OT_STRING = 8, OT_BOOL = 9, OT_FLOAT16 = 10,
	OT_DOUBLE = 11, OT_UINT32 = 12, OT_UINT64 = 13, OT_BFLOAT16 = 16,
};

typedef struct {
	const char *name;
	int dtype;
	int64_t *dims; int ndims;
	const unsigned char *data;   /* little-endian elements (raw_data: in the file) */
	size_t len;
} OnnxTensor;

/* A dimension of a graph input or output: a value, a name, or neither. */
typedef struct {
	int64_t value;               /* -1: none */
	const char *param;           /* dim_param, or NULL */
} OnnxDim;

typedef struct {
	const char *name;
	int dtype;                   /* 0: unknown */
	OnnxDim *dims; int ndims;    /* ndims -1: no shape */
} OnnxValueInfo;

typedef enum { OA_FLOAT = 1, OA_INT = 2, OA_STRING = 3, OA_TENSOR = 4, OA_GRAPH = 5,
	OA_FLOATS = 6, OA_INTS = 7 } OnnxAttrType;

struct OnnxModel;

typedef struct {
	const char *name;
	int type;                    /* OnnxAttrType, or another AttributeProto type */
	double f;
	int64_t i;
	const char *s;
	OnnxTensor *t;
	float *floats; int nfloats;
	int64_t *ints; int nints;
	struct OnnxModel *g;         /* a subgraph (If's branches): nodes, inits, outputs */
} OnnxAttr;

typedef struct {
	const char *name, *op, *domain;
	const char **in; int nin;    /* "" for an omitted optional input */
	const char **out; int nout;
	OnnxAttr *attrs; int nattrs;
	size_t at;                   /* offset in the file */
	bool folded;                 /* BatchNormalization folded into the Conv before it */
	int gate;                    /* 0, or 1 + the OnnxGate of the If branch it came from */
} OnnxNode;

/* A branch of an If, spliced into the graph (branch.c): its nodes run
 * when the condition is `side` (or always, with a select after, when the
 * condition is known only at run time); parent is the gate of the If
 * itself (0: none). */
typedef struct {
	const char *cond;
	bool side;
	int parent;
} OnnxGate;

typedef struct OnnxModel {
	int64_t ir_version;
	int64_t opset;               /* of the default domain; 0 when absent */
	const char *bad_domain;      /* an operator set txc does not know, or NULL */
	const char *name;
	OnnxNode *nodes; int nnodes;
	OnnxTensor *inits; int ninits;
	OnnxValueInfo *inputs; int ninputs;
	OnnxValueInfo *outputs; int noutputs;
	OnnxGate *gates; int ngates;
} OnnxModel;

/* NULL with *err set (a message with the byte offset) when malformed. */
OnnxModel *model_read(const unsigned char *data, size_t len, char **err);
/* a TensorProto alone (the .pb files of ONNX's tests) */
bool model_read_tensor(const unsigned char *data, size_t len, OnnxTensor *t, char **err);
OnnxAttr *model_attr(OnnxNode *n, const char *name);
int64_t model_attr_int(OnnxNode *n, const char *name, int64_t dflt);
double model_attr_float(OnnxNode *n, const char *name, double dflt);
int model_elem_size(int dtype);      /* 0: not a numeric type txc takes */

/* ---- branch.c: If ----------------------------------------------------------- */
/* Every If's branches spliced into m's node list (names renamed where
 * they collide), each If left as one node per output, If(cond, then,
 * else); false with *err set when a branch is malformed. */
bool branch_splice(OnnxModel *m, char **err);
/* Whether node n is in a branch not taken (its condition known at
 * compile time, or its If itself not reached), given the value of a
 * bool known at compile time: known(ctx, name) is 1 true, 0 false, -1
 * not known yet, -2 never computed. */
bool branch_skipped(const OnnxModel *m, const OnnxNode *n,
    int (*known)(void *ctx, const char *name), void *ctx);

/* ---- import.c ------------------------------------------------------------- */
/* -D NAME=VALUE: a NAME that is a graph input's dim_param is rewritten
 * in defs[] to its size parameter's name in the .tx program (interned),
 * which may differ (a '__' or a character outside [A-Za-z0-9_]) */
typedef struct {
	const char **defs; const int64_t *vals; int ndefs;
} OnnxOptions;
/* The .tx text for the model in file `path`, registered as a source;
 * 0 after diagnostics. */
uint32_t onnx_import(const char *path, const OnnxOptions *o);
/* The entry point's name for a file: its base name without .onnx, every
 * character outside [A-Za-z0-9_] made '_', a leading digit given a '_'. */
const char *onnx_entry_name(const char *path);
/* The same for a model already in memory (the fuzzer); `path` names the
 * kernel and the diagnostics; the bytes must outlive the program (the
 * weights point into them). */
uint32_t onnx_import_bytes(const char *path, const unsigned char *data, size_t len,
    const OnnxOptions *o);

#endif

/* ---- internal to onnx/: the graph being lowered (graph.c, emit.c) ----- */
#ifdef TXC_ONNX_INTERNAL
#include <stdio.h>

/* sym.c: an integer known at compile time as a number, or as an
 * expression of the size parameters (t, canonical text) */
typedef struct {
	int64_t v;                   /* the number; -1 when t is set */
	const char *t;               /* NULL: a number */
} Sym;

Sym sym_num(int64_t v);
/* text in canonical form (a number when constant); text sym.c does not
 * read is kept as it is */
Sym sym_parse(const char *text);
/* op is + - * / % (ONNX's truncating / on numbers), 'm' min, 'M' max;
 * *ok false when numbers overflow or divide by 0 */
Sym sym_bin(int op, Sym a, Sym b, bool *ok);
const char *sym_text(Sym s);         /* .tx text, parenthesized */
bool sym_same(Sym a, Sym b);

/* A value of the graph: its .tx name, type and shape; the bytes of one
 * known at compile time (an initializer, a Constant, a folded result),
 * or the elements of a small integer one known as expressions of the
 * size parameters (Shape of a dynamic dimension, and arithmetic on it). */
typedef struct {
	const char *onnx;            /* the ONNX name */
	const char *tx;              /* the tensor's .tx name */
	int dtype;
	int ndims;                   /* -1: unknown yet */
	const char **dim;            /* each extent as .tx text */
	int64_t *dimv;               /* each extent's value, -1 when it has a size parameter */
	const unsigned char *cdata; size_t clen;   /* known at compile time */
	Sym *sym; int nsym;          /* known as expressions (row-major); cdata NULL */
	bool declared;               /* its declaration (or const) is written */
	bool defined;                /* computed by a stage or given */
	bool is_output;
	int cb;                      /* 0, or LAYOUT_B: stored as [N, C / cb, H, W, cb] (layout.c) */
	int64_t flatw;               /* with cb, W when H and W are one axis: [N, C / cb, H W, cb] */
} Val;

typedef struct {
	OnnxModel *m;
	const char *kernel;
	Val **vals; int nvals, capvals;
	const char **used; int nused, capused;     /* .tx names taken */
	FILE *decls, *body;          /* memory streams */
	char *decls_text, *body_text; size_t decls_len, body_len;
	bool imports[8];             /* stdlib files called (graph_import_names) */
	const char **sizes; int nsizes, capsizes;  /* size parameters, in order */
	const char **sparams; int nsparams, capsparams;  /* their dim_params ("": none) */
	int errors;
	/* 2-D convolutions of one group with symmetric padding call stdlib
	 * conv2d_nchw_general, so that its schedule applies (with the bias,
	 * ReLU and residual add after it fused: auto/fuse.c) */
	bool conv_calls;
} Graph;

enum { IMP_MATMUL, IMP_CONV2D, IMP_SOFTMAX, IMP_COUNT };

/* graph.c */
Val *graph_val(Graph *g, const char *onnx);          /* NULL for "" */
Val *graph_new_val(Graph *g, const char *onnx, int dtype, int ndims);
const char *graph_fresh(Graph *g, const char *hint); /* a new unique .tx name */
void graph_set_dim(Val *v, int d, int64_t value, const char *text);
const char *graph_type(int dtype);                   /* "f32"; NULL if none */
const char *graph_shape(Val *v);                     /* "[2, N]" or "" */
bool graph_same_shape(Val *a, Val *b);
int64_t graph_numel(Val *v);                         /* -1: symbolic */
int64_t graph_mul(int64_t a, int64_t b);             /* INT64_MAX on overflow */
/* a value used by a stage: declared (a const for a known one) */
const char *graph_use(Graph *g, Val *v);
/* the known integer elements of v (int64 or int32), or NULL */
int64_t *graph_ints(Val *v, int *n);
/* the elements of a known integer or bool value as Syms (numbers, or the
 * expressions of a symbolic one), or NULL */
Sym *graph_syms(Val *v, int *n);
/* element i of a value known as expressions, as a .tx expression of its type */
const char *graph_sym_expr(Val *v, int i);
void graph_error(Graph *g, OnnxNode *n, const char *fmt, ...) TXC_PRINTF(3, 4);
const char *graph_float(double v);                   /* a .tx literal, NULL if not finite */

/* fold.c: values known at compile time folded (shape arithmetic); true
 * when node n was folded (*failed: with an error) */
bool fold_node(Graph *g, OnnxNode *n, bool *failed);

/* emit.c: the stages of one node; false after an error (or unsupported);
 * and the helpers ops.c shares: axes "_a0, _a1", a rule's left side, a
 * read at index texts, a broadcast read, a node's result i, a stage's
 * declaration and rule, extents copied, a node's input i (NULL: none). */
bool emit_node(Graph *g, OnnxNode *n, bool *unsupported);
const char *emit_axes(int r);
const char *emit_lhs(Val *v);
const char *emit_at(Graph *g, Val *v, const char **idx);
const char *emit_bread(Graph *g, Val *in, Val *out);
Val *emit_result(Graph *g, OnnxNode *n, int i, int dtype, int ndims);
void emit_declare(Graph *g, Val *v);
void emit_rule(Graph *g, Val *v, const char *value);
void emit_copy_dims(Val *to, Val *from);
Val *emit_in(Graph *g, OnnxNode *n, int i);
/* ops.c: the operators that are not element-wise; *handled false for
 * the others */
bool ops_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled);
/* nn.c: MatMul, Gemm, Conv, MaxPool/AveragePool, the global pools,
 * BatchNormalization, the reductions, Softmax/LogSoftmax */
bool nn_matmul(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_gemm(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_conv(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_pool(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_gpool(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_bn(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_reduce(Graph *g, OnnxNode *n, bool *unsupported);
bool nn_softmax(Graph *g, OnnxNode *n, bool *unsupported);
/* upsample.c */
bool up_resize(Graph *g, OnnxNode *n, bool *unsupported);
bool up_convtranspose(Graph *g, OnnxNode *n, bool *unsupported);
/* index.c: indexing and selection operators; *handled false for others */
bool index_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled);
/* shape of numpy's broadcast of n's inputs from..upto-1 into y (rank r) */
bool index_broadcast(Graph *g, OnnxNode *n, int from, int upto, Val *y);
/* extra.c: DepthToSpace, SpaceToDepth, Trilu, GatherElements, OneHot,
 * ArgMax, ArgMin, Hardmax, LRN, LpNormalization,
 * MeanVarianceNormalization, CumSum; *handled false for the others */
bool extra_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled);
/* norm.c: LayerNormalization, Gelu, MatMul with a vector operand */
bool norm_node(Graph *g, OnnxNode *n, bool *unsupported, bool *handled);
/* layout.c: NCHW16c.  layout_conv writes Conv's stages with result y
 * blocked (false, and nothing written, when it does not apply: groups,
 * unknown weights, a graph output ...); the others are for the readers
 * and writers of blocked values. */
#define LAYOUT_B 16
bool layout_conv(Graph *g, Val *x, Val *wt, Val *b, Val *y, const int64_t *st, const int64_t *dl,
    const int64_t *pb, const int64_t *pe, int64_t groups);
bool layout_ok(Val *v);
int layout_elementwise(Graph *g, OnnxNode *n, Val *y);
const char *layout_at(Graph *g, Val *v, const char **phys);
const char *layout_shape(Val *v);
const char *layout_axes(Val *v);   /* a blocked value's rule axes, "_a0, ..." */
#endif
