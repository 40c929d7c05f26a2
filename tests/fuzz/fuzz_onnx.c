/* fuzz_onnx.c: a libFuzzer target for the ONNX front end (onnx/).
 *
 * Each input is the bytes of a .onnx file: it is read (pb.c, model.c),
 * its graph folded and written as .tx text (graph.c, emit.c, ops.c,
 * nn.c), and that text, when there is one, parsed and checked by sema as
 * the driver would (the stdlib imports are not resolved, so calls are
 * diagnosed, not followed).  Diagnostics are silenced.  Built and run by
 * `make fuzz-onnx` (clang, -fsanitize=fuzzer,address,undefined); the seeds
 * are written by tests/fuzz/onnx-seeds.py.
 *
 * Every input's bytes are copied into the perm arena, which is never
 * freed (the weights point into them, as they do into the file in txc),
 * so memory grows with the inputs; -rss_limit_mb leaves room for about a
 * million runs.
 */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"
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
		if (!perm)
			perm = arena_new();
	}
	diag_reset();
	unsigned char *copy = arena_alloc(perm, size + 1);
	memcpy(copy, data, size);
	OnnxOptions o = { 0 };
	uint32_t file = onnx_import_bytes("fuzz.onnx", copy, size, &o);
	if (!file)
		return 0;
	Program *p = parse_program(file);
	if (!diag_errors())
		sema_check(p);
	return 0;
}
