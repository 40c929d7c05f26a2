/* calls.h: what calls.c (a call of a kernel expanded in place, tx.5
 * CALLS) shares with callcopy.c (the callee's names, expressions and
 * rules rewritten in the caller's terms).
 */
#ifndef TXC_SEMA_CALLS_H
#define TXC_SEMA_CALLS_H

#include "sema/sema.h"

/* One call being expanded. */
typedef struct {
	Program *p;
	Kernel *k;            /* the caller */
	Kernel *f;            /* the callee */
	const char *callee;
	Loc at;               /* the call statement */
	const char **outs; Loc *out_locs; int nouts;
	Expr **args; int nargs;
	const char **keys; Loc *key_locs;   /* named arguments (or NULL) */
	/* > 0 while copying a shape or a bound, where sizes stay bare (no
	 * cast: shapes.c allows sizes, constants and arithmetic only) */
	int nocast;
	/* callee tensor names -> caller tensor names */
	const char **tfrom, **tto; int nt, capt;
	/* callee parameter index -> caller expression (NULL: not fixed) */
	Expr **psub;
	/* callee axis names -> caller axis names */
	const char **afrom, **ato; int na, capa;
	/* the new items */
	KernelItem *items; int nitems, capitems;
	bool failed;
	CallSite *site;       /* recorded on every copied rule */
	/* layouts.c: the calls that compute this one in the callee's
	 * declared layout for the target (then nothing is copied) */
	KernelItem *gen; int ngen;
} Ex;

/* The axes in scope in a callee expression (callcopy.c); NULL outside
 * every rule (a shape, a bound). */
typedef struct Scope Scope;

/* ---- callcopy.c -------------------------------------------------------------- */
/* Names the expansion of the current kernel has made so far (stages and
 * results): they must not be made twice.  calls.c adds to the list and
 * saves it around a callee's own expansion. */
extern const char **calls_made;
extern int calls_nmade, calls_capmade;

/* Whether caller k already has name n (a declaration, a call's result, a
 * name made by the expansion). */
bool calls_name_used(Kernel *k, const char *n);
/* The caller's name of callee tensor n (NULL: none yet); a new pair. */
const char *calls_tmap(Ex *x, const char *n);
void calls_tput(Ex *x, const char *from, const char *to);
/* Callee f's parameter called n, or NULL. */
Param *calls_callee_param(Kernel *f, const char *n);
/* Callee expression e (axes in scope s) in the caller's terms. */
Expr *calls_sub(Ex *x, Scope *s, Expr *e);
/* A copy of callee rule r in the caller's terms. */
Rule *calls_copy_rule(Ex *x, Rule *r);
/* Appends a new item of the caller. */
void calls_emit(Ex *x, KernelItem it);

#endif
