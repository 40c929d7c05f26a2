/* emit.c: the cpu target's native outputs through target/llvm.
 *
 * txc FILE.tx [-o x.o] [-S | --emit=obj|asm|llvm|bc] [--target=TRIPLE]
 * [--cpu=NAME] [--features=LIST] [-g] [-O0..3]: the driver's options
 * become LlvmOptions, and the output goes through output.c so that a
 * failure leaves no file behind.
 */
#include "driver/driver.h"
#include "target/target.h"

bool
emit_llvm(IrFunc **funcs, int n, const Options *o, const char *out)
{
	LlvmOptions lo = {
		.triple = o->triple,
		.cpu = o->cpu,
		.features = o->features,
		.opt_level = o->opt_level,
		.debug = o->debug,
		.dlpack = o->dlpack,
		.time_passes = o->time_passes,
	};
	EmitKind k;
	FILE *fp;

	switch (o->emit) {
	case OUT_ASM: k = EMIT_ASM; break;
	case OUT_LLVM: k = EMIT_LLVM; break;
	case OUT_BC: k = EMIT_BC; break;
	default: k = EMIT_OBJ; break;
	}
	fp = output_open(out, k == EMIT_OBJ || k == EMIT_BC);
	if (!fp)
		return false;
	if (!llvm_emit(funcs, n, &lo, k, fp))
		return false;   /* main removes the temporary */
	return output_commit(fp);
}
