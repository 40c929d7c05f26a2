/* lowp_conv.c: the int8 and bf16 convolutions (NCHW and OIHW, stride 1,
 * zero padding), timed through one implementation chosen at build time:
 * -DIMPL_TXC (a txc object exporting the stdlib's `conv2d_i8` and
 * `conv2d_bf16`) or -DIMPL_DNNL (oneDNN's convolution primitive, each
 * operand in the layout oneDNN picks; the data and weights reordered into
 * them, and the result back, outside the timing, as bench/conv.c does for
 * f32).
 *
 *     lowp_conv i8 N C H W K R S PAD      i8 data and weights, i32 sums
 *     lowp_conv bf16 N C H W K R S PAD    bf16 data and weights, f32 sums
 *
 * prints one bench.h line (GOP/s counting a multiply-add as 2
 * operations; case iconv or bconv).  The error column: int8, the largest
 * difference of 512 sampled outputs from an exact sum (0 expected);
 * bf16, relative to the sum of the products' magnitudes.  Where oneDNN
 * has no convolution of the type for the CPU (bf16: none without AVX-512
 * in oneDNN 2.6) it says so on stderr and prints no line.
 */
#include "bench.h"

#if defined(IMPL_DNNL)
#include <dnnl.h>
#define IMPL "onednn"
#elif defined(IMPL_TXC)
#include "txrt.h"
int conv2d_i8(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
    int64_t PH, int64_t PW, const int8_t *data, const int8_t *weight, int32_t *y);
/* weak: bench/run.sh links it only where txc compiled it */
__attribute__((weak)) int conv2d_bf16(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
    int64_t R, int64_t S, int64_t PH, int64_t PW, const uint16_t *data, const uint16_t *weight,
    float *y);
#define IMPL "txc"
#else
#error "define IMPL_TXC or IMPL_DNNL"
#endif

typedef struct {
	int N, C, H, W, K, R, S, pad, P, Q;
	int bf;                 /* bf16 (else int8) */
	int8_t *in, *wt;
	int32_t *out;
	uint16_t *inh, *wth;
	float *outf;
#if defined(IMPL_DNNL)
	dnnl_engine_t engine;
	dnnl_primitive_t prim;
	dnnl_stream_t stream;
	dnnl_memory_t msrc, mwt, mdst;
#endif
} Ctx;

#if defined(IMPL_DNNL)
/* oneDNN's status as a reason, or NULL on success */
static const char *
why(dnnl_status_t st)
{
	return st == dnnl_success ? NULL : st == dnnl_unimplemented ?
	    "oneDNN has no convolution of this type for this CPU" : "oneDNN error";
}

/* *m: a new memory of layout md holding user (in layout umd), reordered */
static const char *
reorder_in(Ctx *c, const dnnl_memory_desc_t *umd, void *user, const dnnl_memory_desc_t *md,
    dnnl_memory_t *m)
{
	dnnl_memory_t um;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	const char *w;
	if ((w = why(dnnl_memory_create(&um, umd, c->engine, user))) ||
	    (w = why(dnnl_memory_create(m, md, c->engine, DNNL_MEMORY_ALLOCATE))) ||
	    (w = why(dnnl_reorder_primitive_desc_create(&rpd, umd, c->engine, md, c->engine, NULL))) ||
	    (w = why(dnnl_primitive_create(&r, rpd))))
		return w;
	dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, um }, { DNNL_ARG_TO, *m } };
	if ((w = why(dnnl_primitive_execute(r, c->stream, 2, args))) ||
	    (w = why(dnnl_stream_wait(c->stream))))
		return w;
	dnnl_primitive_destroy(r);
	dnnl_primitive_desc_destroy(rpd);
	dnnl_memory_destroy(um);
	return NULL;
}

static const char *
setup(Ctx *c)
{
	dnnl_dims_t sd = { c->N, c->C, c->H, c->W }, dd = { c->N, c->K, c->P, c->Q };
	dnnl_dims_t wd = { c->K, c->C, c->R, c->S };
	dnnl_dims_t strides = { 1, 1 }, pad = { c->pad, c->pad };
	dnnl_memory_desc_t su, wu, sany, wany, dany;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_desc_t pd;
	dnnl_data_type_t et = c->bf ? dnnl_bf16 : dnnl_s8, ot = c->bf ? dnnl_f32 : dnnl_s32;
	const char *w;
	if ((w = why(dnnl_engine_create(&c->engine, dnnl_cpu, 0))) ||
	    (w = why(dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&su, 4, sd, et, dnnl_nchw))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&wu, 4, wd, et, dnnl_oihw))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&sany, 4, sd, et, dnnl_format_tag_any))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&wany, 4, wd, et, dnnl_format_tag_any))) ||
	    (w = why(dnnl_memory_desc_init_by_tag(&dany, 4, dd, ot, dnnl_format_tag_any))) ||
	    (w = why(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
	    dnnl_convolution_direct, &sany, &wany, NULL, &dany, strides, pad, pad))) ||
	    (w = why(dnnl_primitive_desc_create(&pd, &cd, NULL, c->engine, NULL))) ||
	    (w = why(dnnl_primitive_create(&c->prim, pd))))
		return w;
	const char *impl = NULL;
	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
		fprintf(stderr, "onednn %s conv: %s\n", c->bf ? "bf16" : "int8", impl);
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
	if ((w = reorder_in(c, &su, c->bf ? (void *)c->inh : c->in, smd, &c->msrc)) ||
	    (w = reorder_in(c, &wu, c->bf ? (void *)c->wth : c->wt, wmd, &c->mwt)) ||
	    (w = why(dnnl_memory_create(&c->mdst, dmd, c->engine, DNNL_MEMORY_ALLOCATE))))
		return w;
	return NULL;
}

/* the result back into c->out (NCHW) */
static void
finish(Ctx *c)
{
	dnnl_dims_t dd = { c->N, c->K, c->P, c->Q };
	dnnl_memory_desc_t du;
	const dnnl_memory_desc_t *dmd;
	dnnl_primitive_desc_t rpd;
	dnnl_primitive_t r;
	dnnl_memory_t um;
	if (dnnl_memory_desc_init_by_tag(&du, 4, dd, c->bf ? dnnl_f32 : dnnl_s32, dnnl_nchw) !=
	    dnnl_success || dnnl_memory_get_memory_desc(c->mdst, &dmd) != dnnl_success ||
	    dnnl_memory_create(&um, &du, c->engine, c->bf ? (void *)c->outf : (void *)c->out) !=
	    dnnl_success ||
	    dnnl_reorder_primitive_desc_create(&rpd, dmd, c->engine, &du, c->engine, NULL) !=
	    dnnl_success || dnnl_primitive_create(&r, rpd) != dnnl_success)
		exit(1);
	dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, c->mdst }, { DNNL_ARG_TO, um } };
	if (dnnl_primitive_execute(r, c->stream, 2, args) != dnnl_success ||
	    dnnl_stream_wait(c->stream) != dnnl_success)
		exit(1);
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
	if (dnnl_primitive_execute(c->prim, c->stream, 3, args) != dnnl_success ||
	    dnnl_stream_wait(c->stream) != dnnl_success)
		exit(1);
#else
	int rc = c->bf ? conv2d_bf16(c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->pad, c->pad,
	    c->inh, c->wth, c->outf) : conv2d_i8(c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->pad,
	    c->pad, c->in, c->wt, c->out);
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", c->bf ? "conv2d_bf16" : "conv2d_i8", txrt_last_error());
		exit(1);
	}
#endif
}

int
main(int argc, char **argv)
{
	if (argc != 10 || (strcmp(argv[1], "i8") && strcmp(argv[1], "bf16"))) {
		fprintf(stderr, "usage: %s i8|bf16 N C H W K R S PAD\n", argv[0]);
		return 2;
	}
	Ctx c;
	memset(&c, 0, sizeof c);
	c.bf = !strcmp(argv[1], "bf16");
	const char *prog = argv[0];
	argv++;             /* the sizes from argv[1] on */
	c.N = atoi(argv[1]), c.C = atoi(argv[2]), c.H = atoi(argv[3]), c.W = atoi(argv[4]);
	c.K = atoi(argv[5]), c.R = atoi(argv[6]), c.S = atoi(argv[7]), c.pad = atoi(argv[8]);
	c.P = c.H + 2 * c.pad - c.R + 1, c.Q = c.W + 2 * c.pad - c.S + 1;
	if (c.N < 1 || c.C < 1 || c.K < 1 || c.R < 1 || c.S < 1 || c.pad < 0 || c.P < 1 || c.Q < 1) {
		fprintf(stderr, "%s: bad sizes\n", prog);
		return 2;
	}
	size_t ni = (size_t)c.N * c.C * c.H * c.W, nw = (size_t)c.K * c.C * c.R * c.S;
	size_t no = (size_t)c.N * c.K * c.P * c.Q;
	uint64_t s = 11;
	if (c.bf) {
		c.inh = bench_alloc(2 * ni);
		c.wth = bench_alloc(2 * nw);
		bench_fill_bf16(c.inh, ni, 1);
		bench_fill_bf16(c.wth, nw, 2);
		c.outf = bench_alloc(4 * no);
	} else {
		c.in = bench_alloc(ni);
		c.wt = bench_alloc(nw);
		c.out = bench_alloc(4 * no);
		bench_fill_i8(c.in, ni, &s);
		bench_fill_i8(c.wt, nw, &s);
	}
	int threads = bench_threads();
#if defined(IMPL_TXC)
	if (c.bf && !conv2d_bf16) {
		fprintf(stderr, "%s: no conv2d_bf16 linked\n", prog);
		return 1;
	}
	txrt_set_num_threads(threads);
#else
	const char *w = setup(&c);
	if (w) {
		fprintf(stderr, "onednn: %s conv %dx%d C=%d K=%d skipped: %s\n", c.bf ? "bf16" : "int8",
		    c.R, c.S, c.C, c.K, w);
		return 0;
	}
#endif
	double secs = bench_time(run, &c, 2.0);
#if defined(IMPL_DNNL)
	finish(&c);
#endif
	double err = 0;
	for (int t = 0; t < 512; t++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		size_t o = (size_t)((s >> 20) % no);
		int q = (int)(o % (size_t)c.Q), p = (int)(o / (size_t)c.Q % (size_t)c.P);
		int k = (int)(o / ((size_t)c.Q * c.P) % (size_t)c.K);
		int n = (int)(o / ((size_t)c.Q * c.P * c.K));
		int64_t ref = 0;
		double fref = 0, mag = 0;
		for (int ch = 0; ch < c.C; ch++)
			for (int a = 0; a < c.R; a++)
				for (int b = 0; b < c.S; b++) {
					int h = p + a - c.pad, v = q + b - c.pad;
					if (h < 0 || h >= c.H || v < 0 || v >= c.W)
						continue;
					size_t xi = (((size_t)n * c.C + ch) * c.H + h) * c.W + v;
					size_t wi = (((size_t)k * c.C + ch) * c.R + a) * c.S + b;
					if (c.bf) {
						double pr = (double)bench_bf16_value(c.inh[xi]) * bench_bf16_value(c.wth[wi]);
						fref += pr;
						mag += fabs(pr);
					} else {
						ref += (int64_t)c.in[xi] * c.wt[wi];
					}
				}
		double e = c.bf ? fabs(c.outf[o] - fref) / (mag > 1 ? mag : 1) :
		    fabs((double)c.out[o] - (double)ref);
		if (e > err)
			err = e;
	}
	char name[64];
	snprintf(name, sizeof name, "%s%dx%d_%d_%d", c.bf ? "bconv" : "iconv", c.R, c.S, c.C, c.H);
	bench_report(name, IMPL, threads,
	    2.0 * c.N * c.K * c.P * c.Q * (double)c.C * c.R * c.S, secs, err);
	return 0;
}
