/* prim.c: the table of schedule primitives.
 *
 * One row per primitive: its positional arguments (kinds, in order),
 * keyword arguments with their allowed values, and what its `->` names
 * denote.  sema validates schedules against this table and lowering
 * dispatches on SchedPrim.prim_id, so the two cannot disagree about what
 * a primitive takes.
 */
#include <string.h>

#include "sema/sema.h"

const char *const prim_tail_values[] = { "guard", "shift_inward", "exact", "round_up", NULL };
const char *const prim_scope_values[] = { "global", "local", "shared", "fragment", "inp", "wgt", "acc", NULL };
const char *const prim_bind_values[] = {
	"blockIdx.x", "blockIdx.y", "blockIdx.z",
	"threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread", NULL
};

static const PrimKwarg tail_kwargs[] = {
	{ "tail", prim_tail_values },
	{ NULL, NULL },
};

/* pipeline(S, defer = D): D wgmma groups kept in flight over the k loop
 * (values NULL: an integer, checked where the pipeline is lowered);
 * producer = warpgroup: the TMA loads issued by a warpgroup of their own
 * (target/cuda/gpu_wspec.c) */
static const char *const pipeline_producer_values[] = { "warpgroup", NULL };
static const PrimKwarg pipeline_kwargs[] = {
	{ "defer", NULL },
	{ "producer", pipeline_producer_values },
	{ NULL, NULL },
};

#define AXIS { PARG_AXIS, "an axis", NULL, false }
#define FACTOR { PARG_INT, "a positive integer factor", NULL, true }
#define STAGE { PARG_STAGE, "a stage", NULL, false }
#define STAGE_AXIS { PARG_STAGE_AXIS, "an axis of that stage", NULL, false }
#define SCOPE { PARG_WORD, "a memory scope", prim_scope_values, false }

const PrimInfo prim_table[PRIM_COUNT] = {
	[PRIM_SPLIT] = { "split", PRIM_SPLIT, "an axis and a positive integer factor",
	    { AXIS, FACTOR }, 2, 2, tail_kwargs, OUTS_AXES, 2, "(outer, inner)", false },
	[PRIM_TILE] = { "tile", PRIM_TILE, "two axes and two positive integer factors",
	    { AXIS, AXIS, FACTOR, FACTOR }, 4, 4, tail_kwargs, OUTS_AXES, 4,
	    "(xo, yo, xi, yi)", false },
	[PRIM_FUSE] = { "fuse", PRIM_FUSE, "two axes",
	    { AXIS, AXIS }, 2, 2, NULL, OUTS_AXES, 1, "fused", false },
	[PRIM_REORDER] = { "reorder", PRIM_REORDER, "two or more axes",
	    { AXIS }, 2, -1, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_UNROLL] = { "unroll", PRIM_UNROLL, "an axis",
	    { AXIS }, 1, 1, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_VECTORIZE] = { "vectorize", PRIM_VECTORIZE, "an axis",
	    { AXIS }, 1, 1, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_PARALLEL] = { "parallel", PRIM_PARALLEL, "an axis",
	    { AXIS }, 1, 1, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_COMPUTE_ROOT] = { "compute_root", PRIM_COMPUTE_ROOT, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_COMPUTE_INLINE] = { "compute_inline", PRIM_COMPUTE_INLINE, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_COMPUTE_AT] = { "compute_at", PRIM_COMPUTE_AT, "a stage and one of its axes",
	    { STAGE, STAGE_AXIS }, 2, 2, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_STORE_AT] = { "store_at", PRIM_STORE_AT, "a stage and one of its axes",
	    { STAGE, STAGE_AXIS }, 2, 2, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_STORE_ROOT] = { "store_root", PRIM_STORE_ROOT, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_CACHE_READ] = { "cache_read", PRIM_CACHE_READ,
	    "a memory scope and, optionally, a list of the stages that read the copy",
	    { SCOPE, { PARG_STAGES, "a list of stages, like [C, D]", NULL, false } },
	    1, 2, NULL, OUTS_STAGE, 1, "NAME", true },
	[PRIM_CACHE_WRITE] = { "cache_write", PRIM_CACHE_WRITE, "a memory scope",
	    { SCOPE }, 1, 1, NULL, OUTS_STAGE, 1, "NAME", false },
	[PRIM_RFACTOR] = { "rfactor", PRIM_RFACTOR, "a reduction axis",
	    { { PARG_RED_AXIS, "a reduction axis", NULL, false } }, 1, 1, NULL,
	    OUTS_STAGE, 1, "NAME", false },
	[PRIM_BIND] = { "bind", PRIM_BIND, "an axis and a thread tag",
	    { AXIS, { PARG_WORD, "a thread tag", prim_bind_values, false } }, 2, 2, NULL,
	    OUTS_NONE, 0, NULL, false },
	[PRIM_DOUBLE_BUFFER] = { "double_buffer", PRIM_DOUBLE_BUFFER, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	[PRIM_TENSORIZE] = { "tensorize", PRIM_TENSORIZE, "an axis and an intrinsic name",
	    { AXIS, { PARG_IDENT, "an intrinsic name", NULL, false } }, 2, 2, NULL,
	    OUTS_NONE, 0, NULL, false },
	[PRIM_PRAGMA] = { "pragma", PRIM_PRAGMA, "an axis and a string or a name",
	    { AXIS, { PARG_TEXT, "a string or a name", NULL, false } }, 2, 2, NULL,
	    OUTS_NONE, 0, NULL, false },
	[PRIM_PREFETCH] = { "prefetch", PRIM_PREFETCH,
	    "a tensor, an axis and a positive integer distance",
	    { { PARG_TENSOR, "a tensor", NULL, false }, AXIS,
	      { PARG_INT, "a positive integer distance", NULL, true } }, 3, 3, NULL,
	    OUTS_NONE, 0, NULL, false },
	[PRIM_PARTITION] = { "partition", PRIM_PARTITION, "an axis",
	    { AXIS }, 1, 1, NULL, OUTS_NONE, 0, NULL, false },
	/* tile, then bind (xo, yo, xi, yi) to blockIdx.y, blockIdx.x, threadIdx.y,
	 * threadIdx.x (Halide's gpu_tile) */
	[PRIM_GPU_TILE] = { "gpu_tile", PRIM_GPU_TILE, "two axes and two positive integer factors",
	    { AXIS, AXIS, FACTOR, FACTOR }, 4, 4, tail_kwargs, OUTS_AXES, 4,
	    "(xo, yo, xi, yi)", false },
	/* the stage is stored in a memory scope where it is computed (TVM's
	 * set_scope): VTA's acc for an accumulator, shared or local on a GPU */
	[PRIM_SET_SCOPE] = { "set_scope", PRIM_SET_SCOPE, "a memory scope",
	    { SCOPE }, 1, 1, NULL, OUTS_NONE, 0, NULL, false },
	/* the stage shares the loops of another, outermost down to the named
	 * one (Halide's compute_with): lower/compute_with.c */
	[PRIM_COMPUTE_WITH] = { "compute_with", PRIM_COMPUTE_WITH, "a stage and one of its axes",
	    { STAGE, STAGE_AXIS }, 2, 2, NULL, OUTS_NONE, 0, NULL, false },
	/* S slots of the stage's buffer, S - 1 iterations of its loop ahead, the
	 * copies asynchronous where the target has them (cp.async on a GPU):
	 * double_buffer generalised, lower/double_buffer.c; defer = D keeps D
	 * groups of the wgmma calls that read it in flight (S - 1 - D ahead):
	 * target/cuda/gpu_wgmma.c */
	[PRIM_PIPELINE] = { "pipeline", PRIM_PIPELINE, "a number of stages, at least 2",
	    { { PARG_INT, "a number of stages (an integer, at least 2)", NULL, false } }, 1, 1,
	    pipeline_kwargs, OUTS_NONE, 0, NULL, false },
	/* the 16-byte pieces of each row of a shared buffer permuted by an XOR
	 * with the row (CUTLASS's Swizzle<3, 4, 3>, TVM's permuted_layout), so
	 * that ldmatrix's 8 rows and a warp's 16-byte copies fall in distinct
	 * banks without padding: lower/flatten.c, target/cuda/gpu_swizzle.c */
	[PRIM_SWIZZLE] = { "swizzle", PRIM_SWIZZLE, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	/* a pipelined shared tile filled by the Tensor Memory Accelerator (one
	 * cp.async.bulk.tensor a slot, counted on an mbarrier) on sm_90 and
	 * later: target/cuda/gpu_tma.c */
	[PRIM_TMA] = { "tma", PRIM_TMA, "no arguments",
	    { { 0 } }, 0, 0, NULL, OUTS_NONE, 0, NULL, false },
	/* the order of the stage's dimensions in memory, outermost first
	 * (Halide's reorder_storage, its list reversed to read as reorder's):
	 * a tile stored transposed, lower/flatten.c */
	[PRIM_REORDER_STORAGE] = { "reorder_storage", PRIM_REORDER_STORAGE,
	    "every dimension of the stage, outermost first",
	    { { PARG_IDENT, "a dimension of the stage", NULL, false } }, 2, -1, NULL,
	    OUTS_NONE, 0, NULL, false },
	/* the stride of a dimension padded to factor * n + offset elements
	 * (TVM's storage_align): rows of a shared tile apart by a bank or so,
	 * lower/flatten.c */
	[PRIM_STORAGE_ALIGN] = { "storage_align", PRIM_STORAGE_ALIGN,
	    "a dimension of the stage, a factor and an offset",
	    { { PARG_IDENT, "a dimension of the stage", NULL, false }, FACTOR,
	      { PARG_INT, "an offset (an integer, 0 or more)", NULL, false } }, 3, 3, NULL,
	    OUTS_NONE, 0, NULL, false },
};

const PrimInfo *
prim_lookup(const char *name)
{
	for (int i = 0; name && i < PRIM_COUNT; i++)
		if (strcmp(prim_table[i].name, name) == 0)
			return &prim_table[i];
	return NULL;
}
