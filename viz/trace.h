/* trace.h: what the trace's interpreter (trace.c) shares with its two
 * halves for target forms: tensorize calls (trace_tensorize.c) and GPU
 * blocks (trace_gpu.c).  Internal to viz/. */
#ifndef TXC_VIZ_TRACE_H
#define TXC_VIZ_TRACE_H

#include <setjmp.h>

#include "viz/viz.h"

typedef union {
	int64_t i;
	double f;
} Val;

/* A variable's value while in scope. */
typedef struct {
	Var *v;
	Val val;
} Bind;

/* A live allocation of a buffer (or an argument's memory). */
typedef struct {
	Buffer *buf;
	int tensor;
	int64_t *min, *ext, n;
	Val *data;
	int64_t *ring;           /* a folded buffer (Buffer.fold): the row each
	                            slot of the folded dimension holds now */
} Store;

/* The copies of a shared stage computed inside a GPU block's thread
 * loops (exec_shared_alloc): the k-th allocation of each thread is the
 * k-th copy. */
typedef struct {
	Store *st;
	int64_t at;              /* its ALLOC event */
	int64_t ready;           /* the tick its copy ends, or -1 */
} Phase;

typedef struct {
	Buffer *buf;
	Phase *phase; int n, cap;
	int thread, count;       /* the thread running, and its allocations so far */
	int cur;                 /* the copy in use, or -1 */
} Coop;

typedef struct {
	VizTrace *t;
	const VizOptions *o;
	Bind *env; int nenv, capenv;
	Store **live; int nlive, caplive;
	int64_t *loops; int nloops, caploops;   /* enclosing loops' values */
	struct Prod { const char *name; bool update; } *prod;   /* produce markers */
	int nprod, capprod;
	VizLines *lines;         /* nest.c */
	int64_t tick;
	int thread, lane, line;
	int store_tensor;       /* the statement being run stores this tensor */
	int64_t capev;
	int nallocs;             /* allocations so far */
	int64_t gpu_block;       /* the GPU block being run (its number), or -1 */
	int64_t gpu_threads;     /* its threads */
	int thread_depth;        /* GPU thread loops around the statement */
	Coop *coop; int ncoop, capcoop;   /* the block's shared copies */
	int64_t max_events;
	jmp_buf fail;
} Run;

/* trace.c: the interpreter */
void tr_fail(Run *r, const char *fmt, ...) TXC_PRINTF(2, 3) TXC_NORETURN;
void tr_step(Run *r);                 /* one more iteration or statement */
VizEvent *tr_event(Run *r, VizKind kind, int tensor, int ndims);
void tr_bind(Run *r, Var *v, Val x);
Val tr_convert(ScalarType from, ScalarType t, Val x);
Val tr_eval(Run *r, IrExpr *e);
int64_t tr_eval_int(Run *r, IrExpr *e);
bool tr_in_update(Run *r, const char *name);   /* in an update of the stage */
Store *tr_storage(Run *r, Buffer *b);          /* b's live allocation */
void tr_exec(Run *r, IrStmt *s);
Store *tr_new_store(Run *r, Buffer *b, int64_t *at);
void tr_free_event(Run *r, Store *st, int64_t at);

/* trace_tensorize.c: a call with its meaning (IrTensorizeCall) */
void tr_intrinsic(Run *r, IrExpr *e);

/* trace_gpu.c: GPU blocks */
void tr_block_dims(Run *r, IrStmt *s, int64_t dim[3]);
void tr_spread(Run *r, IrStmt *s);
void tr_shared_alloc(Run *r, IrStmt *s);
void tr_end_block(Run *r);
bool tr_coop_produce(Run *r, IrStmt *s);

#endif
