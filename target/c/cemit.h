/* cemit.h: the C backend's internal interface (target/c/ only).
 *
 * emit_c.c drives: per kernel it names everything (cname.c), writes the
 * entry point's statements (emit_c.c) with expressions from cexpr.c into
 * a memory stream, then writes the file: banner, includes, the helpers
 * the code used (chelp.c), error state, entry points, and the DLPack
 * wrappers (cdlpack.c).  See emit_c.c's top comment for the semantics.
 */
#ifndef TXC_CEMIT_H
#define TXC_CEMIT_H

#include <stdio.h>

#include "target/target.h"

/* Helpers the generated file defines only when the code uses them. */
enum {
	H_F16_TO_F32,    /* txc_f16_to_f32(uint16_t) -> float */
	H_F16_BITS,      /* txc_f16_bits(double) -> uint16_t, nearest even */
	H_F16_ROUND,     /* txc_f16_round(double) -> float, an f16 value */
	H_BF16_TO_F32,   /* txc_bf16_to_f32(uint16_t) -> float */
	H_BF16_BITS,     /* txc_bf16_bits(float) -> uint16_t, nearest even */
	H_BF16_ROUND,    /* txc_bf16_round(float) -> float, a bf16 value */
	H_ALLOC,         /* txc_alloc(int64_t n, size_t size) */
	H_DIV_I64, H_MOD_I64, H_DIV_U64, H_MOD_U64,
	H_FMA_OUTER,     /* txc_fma_outer: the tensorize micro-kernel, in scalar C */
	H_FMA_TAPS,      /* txc_fma_taps: the same summing over taps (lower/ir.h) */
	H_DOT_I8,        /* txc_dot_i8: the i8 micro-kernels (i8_madd, i8_vnni...) */
	H_DOT_I16I8,     /* txc_dot_i16i8: i8_madd_a16 (a i16) */
	H_DOT_BF16,      /* txc_dot_bf16: the bf16 ones (bf16_widen, bf16_dp_zmm) */
	H_COUNT
};
/* Helpers made per type: txc_min_i32, txc_sat_u8 ... */
enum {
	HT_MIN, HT_MAX,
	HT_ABS,          /* integers, wrapping */
	HT_SAT,          /* double -> integer type, saturating, NaN -> 0 */
	HT_SIGMOID,      /* f32, f64 */
	HT_MOD,          /* floating %: f32, f64 */
	HT_COUNT
};

typedef struct {
	bool used[H_COUNT];
	bool used_t[HT_COUNT][TY_COUNT];
} CHelpers;

/* What the emitter knows about a variable in the function being written. */
typedef struct {
	const Var *var;
	const char *name;    /* its C identifier */
	const char *text;    /* an inlined let: the value's C text */
	bool data;           /* an integer holding data, not an index */
	bool array;          /* a vector let stored as name[lane] */
	bool param;          /* an entry-point parameter (or the lane counter) */
	int bound;           /* > 0 while a loop or let that binds it is open */
} CVar;

typedef struct {
	Arena *a;
	CHelpers *help;
	CNames *names;
	IrFunc *f;
	FILE *out;           /* the function's body text */
	int indent;
	CVar **vars; int capvars, nvars;  /* open addressing on var; stable records */
	Var *lane;           /* the lane counter of vector statements */
	/* declarations the statement being written needs first (hoisted lets) */
	char **pre; int npre, cappre;
	/* heap buffers live at the current point, innermost last */
	const char **heap; int nheap, capheap;
	int parallel_depth;
	bool uses_failed;    /* the parallel loop being written sets txc_failed */
	bool any_failed;     /* the function declares txc_failed */
	/* per allocation in a parallel loop (txc_failed = its index + 1), the
	 * out-of-memory message naming its buffer */
	const char **oom; int noom, capoom;
	bool error;          /* a diagnostic was reported */
	/* --emit=cuda (target/cuda/cuda_c.c) writes some statements and
	 * intrinsics itself; heap buffers are freed with free_fn (NULL: free) */
	const struct CHooks *hooks;
	void *hook_ctx;
	const char *free_fn;
} CEmit;

/* A flavour of C built on this backend (CUDA C): each hook returns false
 * or NULL to leave the default. */
typedef struct CHooks {
	bool (*stmt)(CEmit *E, IrStmt *s, bool last);
	char *(*intrinsic)(CEmit *E, IrExpr *e, const char *lane, bool hoist);
	/* a call whose value is index arithmetic, not data (a GPU thread's id) */
	bool (*index_call)(IrExpr *e);
} CHooks;

/* ---- emit_c.c, for the flavours ---- */
void cemit_line(CEmit *E, const char *fmt, ...) TXC_PRINTF(2, 3);
void cemit_stmt(CEmit *E, IrStmt *s, bool last);
/* Writes the declarations the last cexpr texts need (hoisted lets); true
 * when it opened a block (close it with cemit_close). */
bool cemit_flush_pre(CEmit *E, bool last);
void cemit_open(CEmit *E);
void cemit_close(CEmit *E);
/* Whether msg starts with "KERNEL:" (the entry's or, under --prefix, the
 * kernel's own name): a check's message the C output keeps as it is. */
bool c_names_kernel(IrFunc *f, const char *msg);
/* Sets the last error to msg, frees the live heap buffers, returns code. */
void cemit_fail(CEmit *E, const char *msg, const char *code);
/* Pushes and pops a heap buffer that the failure paths free. */
void cemit_push_heap(CEmit *E, const char *name);
void cemit_pop_heap(CEmit *E);
/* Frees the live heap buffers (before a return the flavour writes). */
void cemit_free_live(CEmit *E);
/* Names f's parameters (all: the file's functions, for reserved names). */
void cemit_begin_func(CEmit *E, IrFunc *f, IrFunc **all, int nall);
/* The text of f's entry point (checks, body, return 0) with head before
 * its return type ("" for C); or, with kernel set, f's body as a void
 * function (a GPU kernel: no checks) with head before it.  malloc'ed. */
char *cemit_func(CEmit *E, IrFunc *f, const char *head, bool kernel);

/* ---- chelp.c ---- */
void chelp_use(CEmit *E, int h);
/* Marks and names a per-type helper: chelp_typed(E, HT_MIN, TY_I32) is
 * "txc_min_i32". */
const char *chelp_typed(CEmit *E, int kind, ScalarType t);
/* Writes the used helpers' definitions. */
void chelp_write(FILE *out, const CHelpers *h);
const char *chelp_suffix(ScalarType t);   /* "i32", "f32" (f16: "f32") */

/* ---- cexpr.c ---- */
/* The C type a value of t has in expressions: bool "int", f16 "float"
 * (always an exactly representable f16 value), others their ABI type. */
const char *cexpr_vtype(ScalarType t);
/* The C text of e.  lane: the lane counter's C expression when e is a
 * vector (NULL for scalars).  hoist: lets met outside conditional parts
 * become declarations in E->pre instead of inline text. */
char *cexpr(CEmit *E, IrExpr *e, const char *lane, bool hoist);
/* The C text of the element offset of buf[idx...] (lane as above). */
char *cexpr_offset(CEmit *E, Buffer *b, IrExpr **idx, int nidx,
    const char *lane, bool hoist);
CVar *cexpr_var(CEmit *E, const Var *v);
/* Whether e computes with data (loads, calls, scalar parameters): i64
 * arithmetic on data wraps explicitly, index arithmetic is plain. */
bool cexpr_is_data(CEmit *E, IrExpr *e);
/* A C string literal for s. */
char *cexpr_string(Arena *a, const char *s);
/* Whether e reads buffer b at other indices than idx (reads at exactly
 * idx, lane by lane, are what a one-pass vector store tolerates). */
bool cexpr_reads_elsewhere(IrExpr *e, Buffer *b, IrExpr **idx, int nidx);

/* ---- cdlpack.c ---- */
/* The DLPack section's opening: #ifdef TXC_DLPACK, the include, the
 * checking helpers. */
void cdlpack_prelude(FILE *out);
/* The DLPack entry point of E->f, with E's names. */
void cdlpack_emit(FILE *out, CEmit *E);

/* cconst.c: the constant tensors of f as static arrays (a function's
 * first lines). */
void cconst_emit(FILE *out, CNames *names, IrFunc *f);

#endif
