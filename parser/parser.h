/* parser.h: text to AST.
 *
 * Takes a source file registered with source_load/source_add and gives a
 * Program (lang/ast.h), or reports syntax errors through diag and returns
 * a partial Program (statement-level recovery).  Nothing more: names and
 * types are sema's business.
 */
#ifndef TXC_PARSER_H
#define TXC_PARSER_H

#include "lang/ast.h"

/* parse.c: lexes and parses a whole file; never NULL. */
Program *parse_program(uint32_t file);

#endif
