/* halide_buf.h: a float buffer for the Halide 14 objects of halide_gen.cpp,
 * shared by halide_run.c and conv.c's IMPL_HALIDE.  Include after
 * HalideRuntime.h and string.h. */
#ifndef BENCH_HALIDE_BUF_H
#define BENCH_HALIDE_BUF_H

/* A dense buffer of n dimensions over host, dimension 0 innermost, with
 * extents ext[0..n-1]; d holds n dimensions. */
static inline void
hbuf(halide_buffer_t *b, halide_dimension_t *d, float *host, int n, const int *ext)
{
	int stride = 1;
	memset(b, 0, sizeof *b);
	for (int i = 0; i < n; i++) {
		d[i] = (halide_dimension_t){ 0, ext[i], stride, 0 };
		stride *= ext[i];
	}
	b->host = (uint8_t *)host;
	b->type = (struct halide_type_t){ halide_type_float, 32, 1 };
	b->dimensions = n;
	b->dim = d;
}

#endif
