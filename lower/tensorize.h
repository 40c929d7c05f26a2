/* tensorize.h: what tensorize.c, tensorize_forms.c, tensorize_guards.c
 * and tensorize_reset.c share: the state of one match of a loop nest
 * against an intrinsic. */
#ifndef TXC_LOWER_TENSORIZE_H
#define TXC_LOWER_TENSORIZE_H

#include "lower/lower.h"
#include "sema/sema.h"

enum { MAXL = 8 };

typedef struct {
	Lower *L;
	TzReq *rq;
	Kernel *k;
	Rule *rule;
	bool done;              /* the axis was found */
	bool failed;
	const char *msg;        /* why it does not match (reported once) */
	/* the nest: loops from the axis inward */
	Var *var[MAXL];
	IrExpr *min[MAXL], *ext[MAXL];
	bool point[MAXL];       /* made up for an axis of extent 1 (match_nest) */
	int n;
	/* the intrinsic's axes: pure, then reduction */
	const char *iax[MAXL];
	Expr *iext[MAXL];       /* AST extents: constants or parameters */
	int ni;
	int map[MAXL];          /* intrinsic axis -> loop */
	IrExpr *pval[MAXL];     /* intrinsic parameter -> bound value */
	/* call arguments, per tensor in match order */
	IrExpr *args[64];
	int nargs;
	IrTensorizeCall meaning;   /* what the call computes: the accesses' axes */
	int nacc;               /* accesses matched: c, a, b */
	/* the reset form (fma_outer): the initialisation nest beside the
	 * update, the loops around the matched nest inside the update, and
	 * what the match decided */
	IrStmt *init;
	IrStmt *outer[32];
	int nouter;
	bool reset;             /* the call starts from zero at the first k block */
	IrExpr *empty;          /* the reduction has no iteration (NULL: never) */
	IrExpr *callx;          /* the call made */
} Tz;

/* tensorize.c: a failed match's reason (the first one kept), an AST
 * extent's constant value (*ok false if it has none), the index of the
 * intrinsic's axis named name (-1 if none) */
void tz_fail(Tz *t, const char *msg);
int64_t tz_ast_const(Expr *e, bool *ok);
int tz_iaxis(Tz *t, const char *name);

/* tensorize_forms.c: whether the call touches a fragment (the tensor
 * cores' registers); whether the emitter takes the match (else tz_fail
 * says why) */
bool tz_on_fragment(Tz *t);
bool tz_emitter_ok(Tz *t);

/* tensorize_guards.c: the guards of a tile (cond, a conjunction):
 * tz_absorb_heads moves loops' starts for lower bounds (fma_outer,
 * before matching; the shortened extents in shorter[]), tz_absorb_tails
 * shortens extents for upper bounds; each returns the conjuncts left.
 * tz_corners: cond at every corner of the tile; tz_some_corner: a
 * necessary condition for cond somewhere in it (NULL: none found). */
IrExpr *tz_absorb_heads(Tz *t, IrExpr *cond, IrExpr **shorter);
IrExpr *tz_absorb_tails(Tz *t, IrExpr *cond);
IrExpr *tz_corners(Tz *t, IrExpr *cond);
IrExpr *tz_some_corner(Tz *t, IrExpr *cond);

/* tensorize_reset.c: the reset form (fma_outer's `first` argument) */
IrExpr *tz_reset_arg(Tz *t, IrExpr *cond);
bool tz_init_like(IrStmt *s, Buffer *b);
IrStmt *tz_find_init(IrStmt *s, const char *name);
IrStmt *tz_slice(IrStmt *s, IrStmt *keep);
IrStmt *tz_reset_produce(Tz *t, IrStmt *p);

#endif
