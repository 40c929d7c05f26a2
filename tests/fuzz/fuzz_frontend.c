/* fuzz_frontend.c: a libFuzzer target for the front end.
 *
 * Each input is a .tx file: it is lexed and parsed, checked by sema (even
 * after syntax errors: a recovered Program must be safe to look at), and
 * formatted to /dev/null.  Diagnostics are silenced.  Built and run by
 * `make fuzz` (clang, -fsanitize=fuzzer,address,undefined).
 *
 * The perm arena is never freed (txc handles one file per run), so memory
 * grows by a few kilobytes per input; -rss_limit_mb in `make fuzz` leaves
 * room for millions of runs.
 */
#include <stdio.h>

#include "parser/parser.h"
#include "sema/sema.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		diag_set_stream(devnull);
		diag_set_color(0);
	}
	diag_reset();
	uint32_t file = source_add("fuzz.tx", (const char *)data, size);
	Program *p = parse_program(file);
	sema_check(p);
	ast_format(devnull, p);
	ast_dump(devnull, p);
	return 0;
}
