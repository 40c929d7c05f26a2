/* llvm_features.c: the --features list before a target machine is made:
 * its form checked, and what LLVM needs added to it.
 *
 * LLVM 19 cannot compile for every feature set it accepts: AVX-512F
 * added to an AVX2 CPU (--cpu=haswell or znver3, or the host's, with
 * --features=+avx512f) without AVX512VL fails in instruction selection
 * ("Cannot select: v8i1 = setcc", some kernels crash it), where the
 * same features on x86-64 or knl compile.  Every CPU with AVX-512 but
 * Xeon Phi (knl, knm) has AVX512VL, so a list that adds an AVX-512 set
 * and does not mention avx512vl gets +avx512vl; one that removes it
 * explicitly is refused with a diagnostic unless the CPU is one LLVM
 * compiles that for.  Such a list also gets +evex512 (LLVM 18 and
 * later), without which an AVX2 CPU's definition keeps AVX-512 code to
 * 256-bit registers.
 */
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "target/llvm/cg.h"

bool
llvm_features_check(const char *f, const char *triple)
{
	const char *p = f;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n < 2 || (p[0] != '+' && p[0] != '-')) {
			diag_error(loc_none, "bad CPU feature '%.*s' for %s: write +NAME to add "
			    "a feature, -NAME to remove one (e.g. +avx2,-fma)", (int)n, p, triple);
			return false;
		}
		p += n + (e != NULL);
		if (e && !*p) {
			diag_error(loc_none, "bad --features list '%s': it ends with ','", f);
			return false;
		}
	}
	return true;
}

/* The sign of the last item of list naming feature `only`, or 0; with
 * only NULL, '+' when an item adds an AVX-512 set other than avx512vl. */
static char
avx512_sign(const char *list, const char *only)
{
	char sign = 0;
	for (const char *p = list; p && *p; ) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (only && len == strlen(only) + 1 && !strncmp(p + 1, only, len - 1))
			sign = p[0];
		else if (!only && p[0] == '+' && len > 7 && !strncmp(p + 1, "avx512", 6) &&
		    (len != 9 || strncmp(p + 1, "avx512vl", 8) != 0))
			sign = '+';
		p = e ? e + 1 : NULL;
	}
	return sign;
}

const char *
llvm_features_complete(const char *f, const char *cpu)
{
	if (!f || avx512_sign(f, NULL) != '+')
		return f;
	const char *given = f;
	char vl = avx512_sign(f, "avx512vl");
#if LLVM_VERSION_MAJOR >= 18
	/* the 512-bit registers are a feature of their own since LLVM 18,
	 * which some CPUs' definitions leave out (znver3 with +avx512f kept
	 * to ymm: the zmm micro-kernels would split) */
	if (!avx512_sign(f, "evex512"))
		f = arena_printf(perm, "%s,+evex512", f);
#endif
	if (!vl)
		return arena_printf(perm, "%s,+avx512vl", f);
	static const char *const ok[] = { "knl", "knm", "x86-64", "generic", NULL };
	for (int i = 0; vl == '-' && ok[i]; i++)
		if (!strcmp(cpu, ok[i]))
			return f;
	if (vl == '-') {
		diag_error(loc_none, "--features=%s: AVX-512 without AVX512VL on CPU '%s' is a "
		    "machine LLVM 19 cannot compile for (it fails selecting 256-bit masked "
		    "operations); drop -avx512vl, or use --cpu=knl or --cpu=x86-64 for an AVX-512 "
		    "CPU without it", given, cpu);
		return NULL;
	}
	return f;
}
