/* sema.h: the checked program.
 *
 * Takes a parsed Program and fills the "sema:" fields of lang/ast.h (types,
 * what each name refers to, each kernel's tensors and stage order, each
 * schedule primitive's table entry), reporting every error through diag.
 * Lowering may assume a program that passed sema_check is well formed.
 */
#ifndef TXC_SEMA_H
#define TXC_SEMA_H

#include "lang/ast.h"

/* check.c: runs every check; false if any error was reported. */
bool sema_check(Program *p);

#endif
