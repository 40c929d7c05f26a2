/* cuda_tma_wrap.c: linked with -Wl,--wrap=txrt_cuda_tensor_map into the
 * TMA tests' programs (cuda_tma.sh, cuda_tma_sm90a.sh): says on stderr
 * how each tensor map went ("map DTYPE ESIZE COLSxROWS box BCxBR swizzle
 * S: tma" or ": cp.async"); WRAP_SWIZZLE encodes the maps with another
 * swizzle mode, only those whose box has WRAP_SWIZZLE_COLS columns where
 * that is set. */
#include <stdio.h>
#include <stdlib.h>
#include "txrt.h"

int __real_txrt_cuda_tensor_map(void *map, const void *base, int dtype, int esize,
    int64_t cols, int64_t rows, int box_cols, int box_rows, int swizzle);
int __wrap_txrt_cuda_tensor_map(void *map, const void *base, int dtype, int esize,
    int64_t cols, int64_t rows, int box_cols, int box_rows, int swizzle);

int
__wrap_txrt_cuda_tensor_map(void *map, const void *base, int dtype, int esize,
    int64_t cols, int64_t rows, int box_cols, int box_rows, int swizzle)
{
	const char *s = getenv("WRAP_SWIZZLE"), *c = getenv("WRAP_SWIZZLE_COLS");
	int other = s && (!c || atoi(c) == box_cols);
	int ok = __real_txrt_cuda_tensor_map(map, base, dtype, esize, cols, rows, box_cols,
	    box_rows, other ? atoi(s) : swizzle);
	fprintf(stderr, "map %d %d %lldx%lld box %dx%d swizzle %d: %s\n", dtype, esize,
	    (long long)cols, (long long)rows, box_cols, box_rows, swizzle, ok ? "tma" : "cp.async");
	return ok;
}
