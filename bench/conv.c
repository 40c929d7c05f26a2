/* conv.c: 2-D convolution, NCHW input, KCRS weights, fp32, timed through
 * one implementation chosen at build time: -DIMPL_DNNL (oneDNN, letting
 * it pick its preferred blocked layouts; reorders are outside the timing,
 * as a framework would keep tensors in that layout), -DIMPL_HALIDE (the
 * Halide 14 conv3x3 of halide_gen.cpp, weights packed outside the timing
 * into the blocked layout txc's conv3x3.tx reads) or -DIMPL_TXC (a txc
 * object exporting `conv(N, C, H, W, K, data, weight, out)`, compiled with
 * the same R, S, stride, pad and groups fixed in its .tx).
 *
 *     conv N C H W K R S stride pad groups
 *
 * Output size: P = (H + 2*pad - R) / stride + 1, likewise Q.  The error
 * column compares 256 sampled outputs with a double-precision sum.
 */
#include "bench.h"

#if defined(IMPL_DNNL)
#include <dnnl.h>
#define IMPL "onednn"
#elif defined(IMPL_HALIDE)
#include <HalideRuntime.h>
#include "halide_conv3x3.h"
#include "halide_buf.h"
#define IMPL "halide14"
#elif defined(IMPL_TXC)
#include "txrt.h"
int conv(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
    const float *data, const float *weight, float *out);
#if defined(TXC_PREPACK)
/* the kernel's blocked weight layout, filled once outside the timing as
 * oneDNN's weight reorder is: 32-channel blocks of K, zero-padded */
int conv_prepack(int64_t K, int64_t C, const float *weight, float *packed);
#endif
/* TXC_BLOCKED (the depthwise kernel): conv reads and writes NCHW8c (8
 * channels of a pixel together, C zero-padded to a multiple of 8) with
 * weights [C/8][R][S][8], the layouts oneDNN picks for it; the driver
 * converts to and from them outside the timing, as oneDNN's reorders are. */
#define IMPL "txc"
#else
#error "define IMPL_TXC, IMPL_HALIDE or IMPL_DNNL"
#endif

typedef struct {
	int N, C, H, W, K, R, S, stride, pad, groups, P, Q;
	float *in, *wt, *out;
	float *kwt;             /* the weights conv reads: wt, or packed */
#if defined(IMPL_DNNL)
	dnnl_primitive_t prim;
	dnnl_stream_t stream;
	dnnl_memory_t msrc, mwt, mdst;
#elif defined(IMPL_HALIDE)
	halide_buffer_t hin, hwt, hout;
	halide_dimension_t din[4], dwt[5], dout[4];
#endif
} Ctx;

#if defined(IMPL_DNNL)
#define CHECK(x) do { dnnl_status_t st_ = (x); if (st_ != dnnl_success) { \
	fprintf(stderr, "oneDNN error %d at %s\n", (int)st_, #x); exit(2); } } while (0)

static dnnl_engine_t engine;

/* A new memory in layout `md` holding a copy of the user buffer (to_md),
 * or the reverse. */
static dnnl_memory_t
reordered(dnnl_stream_t s, const dnnl_memory_desc_t *user_md, void *user,
    const dnnl_memory_desc_t *md, int to_md)
{
	dnnl_memory_t um, m;
	CHECK(dnnl_memory_create(&um, user_md, engine, user));
	CHECK(dnnl_memory_create(&m, md, engine, DNNL_MEMORY_ALLOCATE));
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	if (to_md)
		CHECK(dnnl_reorder_primitive_desc_create(&rpd, user_md, engine, md, engine, NULL));
	else
		CHECK(dnnl_reorder_primitive_desc_create(&rpd, md, engine, user_md, engine, NULL));
	CHECK(dnnl_primitive_create(&r, rpd));
	dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, to_md ? um : m }, { DNNL_ARG_TO, to_md ? m : um } };
	CHECK(dnnl_primitive_execute(r, s, 2, args));
	CHECK(dnnl_stream_wait(s));
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(um);
	return m;
}

static void
setup(Ctx *c)
{
	CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
	CHECK(dnnl_stream_create(&c->stream, engine, dnnl_stream_default_flags));
	dnnl_dims_t sd = { c->N, c->C, c->H, c->W }, dd = { c->N, c->K, c->P, c->Q };
	dnnl_memory_desc_t su, du, wu, sany, dany, wany;
	CHECK(dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nchw));
	CHECK(dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nchw));
	CHECK(dnnl_memory_desc_init_by_tag(&sany, 4, sd, dnnl_f32, dnnl_format_tag_any));
	CHECK(dnnl_memory_desc_init_by_tag(&dany, 4, dd, dnnl_f32, dnnl_format_tag_any));
	if (c->groups > 1) {
		dnnl_dims_t wd = { c->groups, c->K / c->groups, c->C / c->groups, c->R, c->S };
		CHECK(dnnl_memory_desc_init_by_tag(&wu, 5, wd, dnnl_f32, dnnl_goihw));
		CHECK(dnnl_memory_desc_init_by_tag(&wany, 5, wd, dnnl_f32, dnnl_format_tag_any));
	} else {
		dnnl_dims_t wd = { c->K, c->C, c->R, c->S };
		CHECK(dnnl_memory_desc_init_by_tag(&wu, 4, wd, dnnl_f32, dnnl_oihw));
		CHECK(dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_f32, dnnl_format_tag_any));
	}
	dnnl_dims_t strides = { c->stride, c->stride }, pad = { c->pad, c->pad };
	dnnl_convolution_desc_t cd;
	CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
	    dnnl_convolution_direct, &sany, &wany, NULL, &dany, strides, pad, pad));
	dnnl_primitive_desc_t pd;
	CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL));
	CHECK(dnnl_primitive_create(&c->prim, pd));
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	c->msrc = reordered(c->stream, &su, c->in, smd, 1);
	c->mwt = reordered(c->stream, &wu, c->wt, wmd, 1);
	CHECK(dnnl_memory_create(&c->mdst, dmd, engine, DNNL_MEMORY_ALLOCATE));
	(void)du;
}

static void
finish(Ctx *c)
{
	dnnl_dims_t dd = { c->N, c->K, c->P, c->Q };
	dnnl_memory_desc_t du;
	CHECK(dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nchw));
	const dnnl_memory_desc_t *dmd;
	CHECK(dnnl_memory_get_memory_desc(c->mdst, &dmd));
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	dnnl_memory_t um;
	CHECK(dnnl_memory_create(&um, &du, engine, c->out));
	CHECK(dnnl_reorder_primitive_desc_create(&rpd, dmd, engine, &du, engine, NULL));
	CHECK(dnnl_primitive_create(&r, rpd));
	dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, c->mdst }, { DNNL_ARG_TO, um } };
	CHECK(dnnl_primitive_execute(r, c->stream, 2, args));
	CHECK(dnnl_stream_wait(c->stream));
}
#endif

#if defined(IMPL_HALIDE)
/* Packs the weights as conv3x3.tx's conv_prepack does, Wp[kb][r][s][c][kk]
 * = weight[16 kb + kk][c][r][s] (zero past K), and describes the three
 * buffers in Halide's order (innermost first). */
static int
halide_setup(Ctx *c)
{
	if (c->R != 3 || c->S != 3 || c->stride != 1 || c->pad != 1 || c->groups != 1)
		return -1;
	int KB = (c->K + 15) / 16;
	c->kwt = bench_alloc(sizeof(float) * (size_t)KB * 16 * c->C * 9);
	for (int kb = 0; kb < KB; kb++)
		for (int r = 0; r < 3; r++)
			for (int s = 0; s < 3; s++)
				for (int ch = 0; ch < c->C; ch++)
					for (int kk = 0; kk < 16; kk++) {
						int k = kb * 16 + kk;
						c->kwt[((((size_t)kb * 3 + r) * 3 + s) * c->C + ch) * 16 + kk] = k < c->K ?
						    c->wt[(((size_t)k * c->C + ch) * 3 + r) * 3 + s] : 0;
					}
	int ein[4] = { c->W, c->H, c->C, c->N }, ewt[5] = { 16, c->C, 3, 3, KB };
	int eout[4] = { c->Q, c->P, c->K, c->N };
	hbuf(&c->hin, c->din, c->in, 4, ein);
	hbuf(&c->hwt, c->dwt, c->kwt, 5, ewt);
	hbuf(&c->hout, c->dout, c->out, 4, eout);
	return 0;
}
#endif

static void
run(void *p)
{
	Ctx *c = p;
#if defined(IMPL_DNNL)
	dnnl_exec_arg_t args[3] = {
		{ DNNL_ARG_SRC, c->msrc }, { DNNL_ARG_WEIGHTS, c->mwt }, { DNNL_ARG_DST, c->mdst },
	};
	CHECK(dnnl_primitive_execute(c->prim, c->stream, 3, args));
	CHECK(dnnl_stream_wait(c->stream));
#elif defined(IMPL_HALIDE)
	int rc = halide_conv3x3(&c->hin, &c->hwt, &c->hout);
	if (rc != 0) {
		fprintf(stderr, "halide error %d\n", rc);
		exit(1);
	}
#else
	if (conv(c->N, c->C, c->H, c->W, c->K, c->in, c->kwt, c->out) != 0) {
		fprintf(stderr, "conv: %s\n", txrt_last_error());
		exit(1);
	}
#endif
}

int
main(int argc, char **argv)
{
	if (argc != 11) {
		fprintf(stderr, "usage: %s N C H W K R S stride pad groups\n", argv[0]);
		return 2;
	}
	Ctx c = { 0 };
	int *f[] = { &c.N, &c.C, &c.H, &c.W, &c.K, &c.R, &c.S, &c.stride, &c.pad, &c.groups };
	for (int i = 0; i < 10; i++)
		*f[i] = atoi(argv[i + 1]);
	c.P = (c.H + 2 * c.pad - c.R) / c.stride + 1;
	c.Q = (c.W + 2 * c.pad - c.S) / c.stride + 1;
	int cg = c.C / c.groups, kg = c.K / c.groups;
	size_t nin = (size_t)c.N * c.C * c.H * c.W, nwt = (size_t)c.K * cg * c.R * c.S;
	size_t nout = (size_t)c.N * c.K * c.P * c.Q;
	c.in = bench_alloc(nin * sizeof(float));
	c.wt = bench_alloc(nwt * sizeof(float));
	c.out = bench_alloc(nout * sizeof(float));
	bench_fill(c.in, nin, 1);
	bench_fill(c.wt, nwt, 2);
	int threads = bench_threads();
#if defined(IMPL_DNNL)
	setup(&c);
#elif defined(IMPL_HALIDE)
	if (halide_setup(&c) != 0) {
		fprintf(stderr, "%s: the Halide conv is 3x3, stride 1, padding 1, no groups\n", argv[0]);
		return 2;
	}
#else
	txrt_set_num_threads(threads);
	c.kwt = c.wt;
#if defined(TXC_BLOCKED)
	if (c.groups != c.C || c.K != c.C) {
		fprintf(stderr, "%s: TXC_BLOCKED is the depthwise layout (groups = C = K)\n", argv[0]);
		return 2;
	}
	float *user_in = c.in, *user_out = c.out;
	{
		int CB = (c.C + 7) / 8;
		size_t plane = (size_t)c.H * c.W;
		float *bin = bench_alloc(sizeof(float) * (size_t)c.N * CB * plane * 8);
		float *bwt = bench_alloc(sizeof(float) * (size_t)CB * c.R * c.S * 8);
		for (int n = 0; n < c.N; n++)
			for (int ch = 0; ch < CB * 8; ch++)
				for (size_t i = 0; i < plane; i++)
					bin[(((size_t)n * CB + ch / 8) * plane + i) * 8 + ch % 8] = ch < c.C ?
					    c.in[((size_t)n * c.C + ch) * plane + i] : 0;
		for (int ch = 0; ch < CB * 8; ch++)
			for (int i = 0; i < c.R * c.S; i++)
				bwt[((size_t)(ch / 8) * c.R * c.S + i) * 8 + ch % 8] = ch < c.C ?
				    c.wt[(size_t)ch * c.R * c.S + i] : 0;
		c.in = bin;
		c.kwt = bwt;
		c.out = bench_alloc(sizeof(float) * (size_t)c.N * CB * c.P * c.Q * 8);
	}
#endif
#if defined(TXC_PREPACK)
	c.kwt = bench_alloc(sizeof(float) * (size_t)((c.K + 31) / 32 * 32) * c.C * c.R * c.S);
	if (conv_prepack(c.K, c.C, c.wt, c.kwt) != 0) {
		fprintf(stderr, "conv_prepack: %s\n", txrt_last_error());
		return 1;
	}
#endif
#endif
	double secs = bench_time(run, &c, 2.0);
#if defined(IMPL_DNNL)
	finish(&c);
#endif
#if defined(IMPL_TXC) && defined(TXC_BLOCKED)
	{
		int CB = (c.C + 7) / 8;
		size_t plane = (size_t)c.P * c.Q;
		for (int n = 0; n < c.N; n++)
			for (int ch = 0; ch < c.C; ch++)
				for (size_t i = 0; i < plane; i++)
					user_out[((size_t)n * c.C + ch) * plane + i] =
					    c.out[(((size_t)n * CB + ch / 8) * plane + i) * 8 + ch % 8];
		c.out = user_out;
		c.in = user_in;
	}
#endif
	double err = 0;
	uint64_t s = 99;
	for (int t = 0; t < 256; t++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		int n = (int)((s >> 40) % (uint64_t)c.N), k = (int)((s >> 30) % (uint64_t)c.K);
		int p = (int)((s >> 20) % (uint64_t)c.P), q = (int)((s >> 10) % (uint64_t)c.Q);
		int g = k / kg;
		double ref = 0, mag = 0;
		for (int rc = 0; rc < cg; rc++)
			for (int r = 0; r < c.R; r++)
				for (int u = 0; u < c.S; u++) {
					int h = p * c.stride + r - c.pad, w = q * c.stride + u - c.pad;
					if (h < 0 || h >= c.H || w < 0 || w >= c.W)
						continue;
					double v = (double)c.in[(((size_t)n * c.C + g * cg + rc) * c.H + h) * c.W + w]
					    * c.wt[(((size_t)k * cg + rc) * c.R + r) * c.S + u];
					ref += v;
					mag += fabs(v);
				}
		double got = c.out[(((size_t)n * c.K + k) * c.P + p) * c.Q + q];
		double e = fabs(got - ref) / (mag > 1 ? mag : 1);
		if (e > err)
			err = e;
	}
	char name[96];
	snprintf(name, sizeof name, "conv%dx%d_%s%d_%dx%d_s%d", c.R, c.S,
	    c.groups > 1 ? "dw" : "c", c.C, c.H, c.W, c.stride);
	bench_report(name, IMPL, threads,
	    2.0 * c.N * c.K * c.P * c.Q * cg * c.R * c.S, secs, err);
	return 0;
}
