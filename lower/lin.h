/* lin.h: what the three files of lin share, and no one else uses.
 *
 * lin.c is the linear normal form (min/max trees over sums of
 * coefficient * atom + constant), lin_prove.c the prover built on it
 * (a linear form shown non-negative over a scope of variable ranges),
 * lin_interval.c the interval arithmetic and the facts taken from
 * conditions.  The prover folds min and max for the normal form and
 * bounds atoms with intervals, and intervals ask the prover, so the
 * three call one another through this header.  Their public functions,
 * all lin_*, are declared in lower/lower.h.
 */
#ifndef TXC_LOWER_LIN_H
#define TXC_LOWER_LIN_H

#include "lower/lower.h"

typedef struct { IrExpr *atom; int64_t c; } Term;
typedef struct { Term *t; int n, cap; int64_t k; } Lin;

/* min/max of linear forms */
typedef struct Tree {
	int kind;              /* 0: linear, IR_MIN or IR_MAX */
	Lin lin;
	struct Tree *a, *b;
} Tree;

static inline bool
lin_is_i64(IrExpr *e)
{
	return e && e->type.code == TY_I64 && e->type.lanes == 1;
}

/* lin.c */
/* Set when a coefficient or constant passed 64 bits: the entry points
 * clear it, read it and put back the value it had (lin_normalize gives
 * its expression back unchanged, lin_prove_le proves nothing,
 * lin_interval bounds nothing). */
extern bool lin_ovf;
/* While the prover runs, products of non-constant linear forms are
 * multiplied out (lin.c, product). */
extern bool lin_distribute;
/* The work of one outermost question (a normalisation, an interval, a
 * proof) with every question asked inside it (a proof inside a
 * normalisation's min/max folding, a normalisation inside an interval
 * inside a proof ...): lin_enter and lin_leave bracket each entry point,
 * the outermost one starting the count.  Past LIN_WORK tree nodes and
 * proof steps, or LIN_NEST nested questions, lin_tired holds and every
 * question gives up soundly: normalisation keeps its expression (or the
 * rest of a tree as atoms), intervals bound nothing, proofs prove nothing
 * (and say they gave up). */
enum { LIN_WORK = 30000, LIN_NEST = 12 };
void lin_enter(void);
void lin_leave(void);
bool lin_tired(void);
void lin_spend(int n);
bool lin_same(IrExpr *a, IrExpr *b);               /* structurally equal */
void lin_add_term(Lin *l, IrExpr *atom, int64_t c);
Lin lin_copy(const Lin *l);
void lin_addto(Lin *to, const Lin *l, int64_t scale);   /* to += scale * l */
Tree *lin_leaf(void);                              /* the linear form 0 */
Tree *lin_scale(Tree *t, int64_t c);
Tree *lin_combine(Tree *x, Tree *y, int64_t sy);   /* x + sy * y */
Tree *lin_tree(IrExpr *e);                         /* e's normal form */
Tree *lin_tree_diff(IrExpr *a, IrExpr *b);         /* a - b, one budget */
IrExpr *lin_expr(const Lin *l);                    /* back to an expression */

/* lin_prove.c */
VarRange *lin_find_range(VarRange *r, Var *v, int *depth);
bool lin_is_size(VarRange *vr);                    /* a size parameter: >= 0 only */
/* -1 where a <= b is shown without ranges, 1 where b <= a, else 0. */
int lin_prove_order(Tree *a, Tree *b);

#endif
