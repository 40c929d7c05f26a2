/* cuda_c.c: --target=cuda --emit=cuda, readable CUDA C of the kernels.
 *
 * The same kernels the PTX comes from (after gpu_split, gpu_spmd and
 * gpu_shared), written by the C backend (target/c) with hooks: each
 * kernel is an `extern "C" __global__` function whose ids are threadIdx
 * and blockIdx, whose barriers are __syncthreads() and whose shared
 * buffers sit in one `extern __shared__` arena; each entry point is the C
 * entry point (checks, then the host code) whose launches are
 * `K<<<grid, block, shared>>>(...)` followed by a check of the launch and
 * of the kernel's completion, and whose stages computed at root are
 * cudaMalloc'ed.  The file is for reading and teaching, and compiles with
 * nvcc (`nvcc -c -arch=sm_80 FILE.cu`) into an object with the same entry
 * points as txc's own, calling the CUDA runtime instead of libtxrt.
 */
#include <stdlib.h>
#include <string.h>

#include "target/c/cemit.h"
#include "target/cuda/cuda.h"

typedef struct {
	GpuFunc *gf;              /* the function being written */
	GpuKernel *k;             /* the kernel being written, or NULL (host) */
} CudaC;

static bool
is_call(IrExpr *e, const char *name)
{
	return e && e->kind == IR_CALL && e->call.ck == CALL_INTRINSIC &&
	    !strcmp(e->call.name, name);
}

static int
dim_of(IrExpr *e)
{
	int64_t d = 0;
	if (e->call.nargs != 1 || !ir_is_const(e->call.args[0], &d) || d < 0 || d > 2)
		ICE("%s with a bad dimension", e->call.name);
	return (int)d;
}

/* The tensor cores' block (gpu_mma.c) in CUDA C: the lane's fragments of
 * a, b (f16 or bf16 bits) and c, and two mma.sync.m16n8k16 in inline
 * PTX; a printf format, the type's name for each %s. */
static const char mma_helper[] =
"/* c[16][16] += a[16][16] * b[16][16] (%s products, f32 sums) by the 32\n"
" * threads of a warp together: each loads its fragments, two mma.sync */\n"
"static __device__ void txc_mma_16x16x16_%s(float *c, int64_t c0, int64_t cw, int64_t ci,\n"
"    int64_t cj, const uint16_t *a, int64_t a0, int64_t aw, int64_t ai, int64_t ak,\n"
"    const uint16_t *b, int64_t b0, int64_t bw, int64_t bk, int64_t bj)\n"
"{\n"
"\tunsigned l = threadIdx.x & 31u, g = l >> 2, t = l & 3u;\n"
"\tuint32_t A[4], B[2];\n"
"\tfor (int rs = 0; rs < 4; rs++) {\n"
"\t\tint64_t i = g + 8 * (rs & 1), k = 2 * t + 8 * (rs >> 1);\n"
"\t\tA[rs] = (uint32_t)a[txc_swz(a0 + i * ai + k * ak, aw, 8)] |\n"
"\t\t    (uint32_t)a[txc_swz(a0 + i * ai + (k + 1) * ak, aw, 8)] << 16;\n"
"\t}\n"
"\tfor (int h = 0; h < 2; h++) {\n"
"\t\tint64_t j = 8 * h + g;\n"
"\t\tfor (int s = 0; s < 2; s++) {\n"
"\t\t\tint64_t k = 2 * t + 8 * s;\n"
"\t\t\tB[s] = (uint32_t)b[txc_swz(b0 + k * bk + j * bj, bw, 8)] |\n"
"\t\t\t    (uint32_t)b[txc_swz(b0 + (k + 1) * bk + j * bj, bw, 8)] << 16;\n"
"\t\t}\n"
"\t\tfloat *p[4], d[4];\n"
"\t\tfor (int x = 0; x < 4; x++) {\n"
"\t\t\tp[x] = &c[txc_swz(c0 + (g + 8 * (x >> 1)) * ci + (8 * h + 2 * t + (x & 1)) * cj,\n"
"\t\t\t    cw, 4)];\n"
"\t\t\td[x] = *p[x];\n"
"\t\t}\n"
"\t\tasm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 \"\n"
"\t\t    \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};\"\n"
"\t\t    : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
"\t\t    : \"r\"(A[0]), \"r\"(A[1]), \"r\"(A[2]), \"r\"(A[3]), \"r\"(B[0]), \"r\"(B[1]));\n"
"\t\tfor (int x = 0; x < 4; x++)\n"
"\t\t\t*p[x] = d[x];\n"
"\t}\n"
"}\n\n";

/* The same block with its sums in a fragment (gpu_fragment.c): c is the
 * lane's 8 registers of the block, register h*4 + r*2 + q holding row
 * g + 8r, column 8h + 2t + q; m, n, k (at most 16) cut a partial block,
 * whose elements of a and b outside them read as 0. */
/* A piece of a tile's copy (gpu_copy.c): 16 bytes, those from element
 * `valid` on zero; by cp.async with its src-size operand when async, if
 * both addresses are 16-byte aligned. */
static const char copy_helper[] =
"static __device__ void txc_copy16(void *d, const void *s, const void *base, int esize,\n"
"    int64_t valid, int async)\n"
"{\n"
"\tint64_t have = valid < 0 ? 0 : valid > 16 / esize ? 16 : valid * esize;\n"
"\tif (((((uintptr_t)d | (uintptr_t)s) & 15) == 0) && (async || have == 16)) {\n"
"\t\tif (async)\n"
"\t\t\tasm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\"\n"
"\t\t\t    :: \"r\"((unsigned)__cvta_generic_to_shared(d)), \"l\"(have ? s : base),\n"
"\t\t\t    \"r\"((int)have) : \"memory\");\n"
"\t\telse\n"
"\t\t\t*(uint4 *)d = *(const uint4 *)s;\n"
"\t\treturn;\n"
"\t}\n"
"\tfor (int64_t i = 0; i < 16; i++)\n"
"\t\t((unsigned char *)d)[i] = i < have ? ((const unsigned char *)s)[i] : 0;\n"
"}\n\n"
"static __device__ void txc_cp_commit(void)\n"
"{\n"
"\tasm volatile(\"cp.async.commit_group;\" ::: \"memory\");\n"
"}\n\n"
"template <int N> static __device__ void txc_cp_wait(void)\n"
"{\n"
"\tasm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N) : \"memory\");\n"
"}\n\n";

static const char mma_frag_helper[] =
"static __device__ void txc_mma_frag_16x16x16_%s(float *c, int64_t m, int64_t n, int64_t kk,\n"
"    const uint16_t *a, int64_t a0, int64_t aw, int64_t ai, int64_t ak,\n"
"    const uint16_t *b, int64_t b0, int64_t bw, int64_t bk, int64_t bj)\n"
"{\n"
"\tunsigned l = threadIdx.x & 31u, g = l >> 2, t = l & 3u;\n"
"\tuint32_t A[4], B[2];\n"
"\tfor (int rs = 0; rs < 4; rs++) {\n"
"\t\tint64_t i = g + 8 * (rs & 1), k = 2 * t + 8 * (rs >> 1);\n"
"\t\tuint32_t lo = i < m && k < kk ? a[txc_swz(a0 + i * ai + k * ak, aw, 8)] : 0;\n"
"\t\tuint32_t hi = i < m && k + 1 < kk ? a[txc_swz(a0 + i * ai + (k + 1) * ak, aw, 8)] : 0;\n"
"\t\tA[rs] = lo | hi << 16;\n"
"\t}\n"
"\tfor (int h = 0; h < 2; h++) {\n"
"\t\tint64_t j = 8 * h + g;\n"
"\t\tfor (int s = 0; s < 2; s++) {\n"
"\t\t\tint64_t k = 2 * t + 8 * s;\n"
"\t\t\tuint32_t lo = j < n && k < kk ? b[txc_swz(b0 + k * bk + j * bj, bw, 8)] : 0;\n"
"\t\t\tuint32_t hi = j < n && k + 1 < kk ? b[txc_swz(b0 + (k + 1) * bk + j * bj, bw, 8)] : 0;\n"
"\t\t\tB[s] = lo | hi << 16;\n"
"\t\t}\n"
"\t\tfloat *d = c + 4 * h;\n"
"\t\tasm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 \"\n"
"\t\t    \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};\"\n"
"\t\t    : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
"\t\t    : \"r\"(A[0]), \"r\"(A[1]), \"r\"(A[2]), \"r\"(A[3]), \"r\"(B[0]), \"r\"(B[1]));\n"
"\t}\n"
"}\n\n";

/* A fragment's block zeroed, and stored where it lies inside m x n. */
static const char frag_helpers[] =
"static __device__ void txc_mma_fill(float *c)\n"
"{\n"
"\tfor (int s = 0; s < 8; s++)\n"
"\t\tc[s] = 0.0f;\n"
"}\n\n"
"static __device__ void txc_mma_store(int64_t m, int64_t n, float *d, int64_t d0, int64_t dw,\n"
"    int64_t di, int64_t dj, const float *c)\n"
"{\n"
"\tunsigned l = threadIdx.x & 31u, g = l >> 2, t = l & 3u;\n"
"\tfor (int s = 0; s < 8; s++) {\n"
"\t\tint64_t i = g + 8 * (s >> 1 & 1), j = 8 * (s >> 2) + 2 * t + (s & 1);\n"
"\t\tif (i < m && j < n)\n"
"\t\t\td[txc_swz(d0 + i * di + j * dj, dw, 4)] = c[s];\n"
"\t}\n"
"}\n\n";

/* Element x of a tile whose rows of w elements are swizzled in pieces of
 * e (gpu_swizzle.c; w = 0: x itself). */
static const char swz_helper[] =
"static __device__ __forceinline__ int64_t txc_swz(int64_t x, int64_t w, int64_t e)\n"
"{\n"
"\tif (!w)\n"
"\t\treturn x;\n"
"\tint64_t p = w / e < 8 ? w / e : 8, s = p == 2 ? 2 : p == 4 ? 1 : 0;\n"
"\treturn x ^ ((x / w >> s & (p - 1)) * e);\n"
"}\n\n";

/* &buf[offset] of a load. */
static char *
address(CEmit *E, IrExpr *ld, const char *lane, bool hoist)
{
	Buffer *b = ld->load.buf;
	return arena_printf(E->a, "&%s[%s]", cname_get(E->names, b, b->name),
	    cexpr_offset(E, b, ld->load.idx, ld->load.nidx, lane, hoist));
}

/* A helper's tile argument: "&buf[offset], 0, 0", or for a swizzled
 * buffer "buf, offset, w" (the helper maps each element: txc_swz). */
static char *
tile(CEmit *E, IrExpr *ld, const char *lane, bool hoist)
{
	Buffer *b = ld->load.buf;
	int64_t w, e, p;
	int s;
	if (!gpu_swizzle_params(b, &w, &e, &p, &s))
		return arena_printf(E->a, "%s, 0, 0", address(E, ld, lane, hoist));
	return arena_printf(E->a, "%s, %s, %lld", cname_get(E->names, b, b->name),
	    cexpr_offset(E, b, ld->load.idx, ld->load.nidx, lane, hoist), (long long)w);
}

static char *
intrinsic(CEmit *E, IrExpr *e, const char *lane, bool hoist)
{
	(void)lane;
	(void)hoist;
	if (is_call(e, GPU_TID))
		return arena_printf(E->a, "((int64_t)threadIdx.%c)", "xyz"[dim_of(e)]);
	if (is_call(e, GPU_BID))
		return arena_printf(E->a, "((int64_t)blockIdx.%c)", "xyz"[dim_of(e)]);
	if (is_call(e, GPU_BARRIER))
		return "(__syncthreads(), 0)";
	if (gpu_copy_is(e)) {
		IrExpr **x = e->call.args;
		Buffer *sb = x[1]->load.buf;
		int64_t w = 8, async = 0;
		ir_is_const(x[2], &w);
		ir_is_const(x[4], &async);
		/* a swizzled destination's piece where it lives (whole: gpu_copy.c) */
		IrExpr *di = gpu_swizzle_index(x[0]->load.buf, x[0]->load.idx[0]);
		return arena_printf(E->a, "(txc_copy16(%s, %s, %s, %d, %s, %d), 0)",
		    address(E, ir_load(x[0]->load.buf, &di, 1, NULL, 1), lane, hoist),
		    address(E, x[1], lane, hoist),
		    cname_get(E->names, sb, sb->name), (int)(16 / w), cexpr(E, x[3], lane, hoist),
		    (int)async);
	}
	if (is_call(e, ASYNC_COMMIT))
		return "(txc_cp_commit(), 0)";
	if (is_call(e, ASYNC_WAIT)) {
		int64_t n = 0;
		ir_is_const(e->call.args[0], &n);
		return arena_printf(E->a, "(txc_cp_wait<%lld>(), 0)", (long long)n);
	}
	if (gpu_mma_fill_is(e))
		return arena_printf(E->a, "(txc_mma_fill(%s), 0)", address(E, e->call.args[2], lane,
		    hoist));
	if (gpu_mma_store_is(e)) {
		IrExpr **x = e->call.args;
		return arena_printf(E->a, "(txc_mma_store(%s, %s, %s, %s, %s, %s), 0)",
		    cexpr(E, x[0], lane, hoist), cexpr(E, x[1], lane, hoist),
		    tile(E, x[2], lane, hoist), cexpr(E, x[3], lane, hoist),
		    cexpr(E, x[4], lane, hoist), address(E, x[5], lane, hoist));
	}
	if (gpu_mma_is(e) && e->call.args[3]->load.buf->scope == SCOPE_FRAGMENT) {
		IrExpr **x = e->call.args;
		char *s = arena_printf(E->a, "(txc_mma_frag_16x16x16_%s(%s, %s, %s, %s",
		    type_name(gpu_mma_input_type(e)), address(E, x[3], lane, hoist),
		    cexpr(E, x[0], lane, hoist), cexpr(E, x[1], lane, hoist), cexpr(E, x[2], lane, hoist));
		for (int i = 6; i < GPU_MMA_NARGS; i++)
			s = arena_printf(E->a, "%s, %s", s, i == 6 || i == 9 ? tile(E, x[i], lane, hoist) :
			    cexpr(E, x[i], lane, hoist));
		return arena_printf(E->a, "%s), 0)", s);
	}
	if (gpu_mma_is(e)) {
		IrExpr **x = e->call.args;
		char *s = arena_printf(E->a, "(txc_mma_16x16x16_%s(%s",
		    type_name(gpu_mma_input_type(e)), tile(E, x[3], lane, hoist));
		for (int i = 4; i < GPU_MMA_NARGS; i++)
			s = arena_printf(E->a, "%s, %s", s, i == 6 || i == 9 ? tile(E, x[i], lane, hoist) :
			    cexpr(E, x[i], lane, hoist));
		return arena_printf(E->a, "%s), 0)", s);
	}
	return NULL;
}

static const char *
count_text(CEmit *E, Buffer *b)
{
	IrExpr *n = NULL;
	for (int d = 0; d < b->ndims; d++)
		n = n ? ir_mul(n, b->extent[d]) : b->extent[d];
	return n ? cexpr(E, n, NULL, true) : "1";
}

/* A launch: grid, block and shared bytes from the sizes, then the kernel
 * and the checks of its launch and completion. */
static void
launch(CEmit *E, CudaC *C, IrExpr *e)
{
	int64_t idx;
	if (!ir_is_const(e->call.args[0], &idx) || idx < 0 || idx >= C->gf->nk)
		ICE("a launch of an unknown kernel");
	GpuKernel *k = C->gf->k[idx];
	IrFunc *f = k->fn;
	char *g[3], *b[3];
	for (int d = 0; d < 3; d++) {
		g[d] = cexpr(E, k->grid[d], NULL, true);
		b[d] = cexpr(E, k->block[d], NULL, true);
	}
	char *sh = cexpr(E, k->shared_bytes, NULL, true);
	char *args = "";
	for (int i = 0; i < f->nparams; i++)
		args = arena_printf(E->a, "%s%s%s", args, *args ? ", " : "",
		    cexpr(E, ir_var(f->params[i]), NULL, true));
	for (int i = 0; i < f->nargs; i++)
		args = arena_printf(E->a, "%s%s(%s *)%s", args, *args ? ", " : "",
		    target_c_type(f->args[i]->elem),
		    cname_get(E->names, f->args[i], f->args[i]->name));
	cemit_open(E);
	cemit_flush_pre(E, true);
	cemit_line(E, "/* kernel %s */", k->name);
	cemit_line(E, "int64_t txc_grid[3] = { %s, %s, %s };", g[0], g[1], g[2]);
	cemit_line(E, "int64_t txc_shared_bytes = %s;", sh);
	cemit_line(E, "if (txc_grid[0] > 0 && txc_grid[1] > 0 && txc_grid[2] > 0) {");
	E->indent++;
	cemit_line(E, "cudaError_t txc_e = cudaSuccess;");
	cemit_line(E, "if (txc_shared_bytes > 48 * 1024)   /* opt in above 48 KiB */");
	cemit_line(E, "\ttxc_e = cudaFuncSetAttribute(%s, "
	    "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)txc_shared_bytes);", k->name);
	cemit_line(E, "if (txc_e == cudaSuccess) {");
	E->indent++;
	cemit_line(E, "%s<<<dim3((unsigned)txc_grid[0], (unsigned)txc_grid[1], "
	    "(unsigned)txc_grid[2]), dim3(%s, %s, %s), (size_t)txc_shared_bytes>>>(%s);",
	    k->name, b[0], b[1], b[2], args);
	cemit_line(E, "txc_e = cudaGetLastError();");
	E->indent--;
	cemit_line(E, "}");
	cemit_line(E, "if (txc_e == cudaSuccess)");
	cemit_line(E, "\ttxc_e = cudaDeviceSynchronize();");
	cemit_line(E, "if (txc_e != cudaSuccess) {");
	E->indent++;
	cemit_line(E, "txc_error_%s = cudaGetErrorString(txc_e);", E->f->name);
	cemit_free_live(E);
	cemit_line(E, "return 6;   /* TXRT_ERR_CUDA */");
	E->indent--;
	cemit_line(E, "}");
	E->indent--;
	cemit_line(E, "}");
	cemit_close(E);
}

static bool
host_stmt(CEmit *E, IrStmt *s, bool last)
{
	CudaC *C = E->hook_ctx;
	if (s->kind == IS_EVALUATE && is_call(s->eval.value, GPU_LAUNCH)) {
		launch(E, C, s->eval.value);
		return true;
	}
	if (s->kind != IS_ALLOCATE)
		return false;
	/* a stage computed at root: device memory */
	Buffer *b = s->alloc.buf;
	const char *name = cname_get(E->names, b, b->name);
	const char *ct = target_c_type(b->elem);
	const char *n = count_text(E, b);
	if (!last)
		cemit_open(E);
	cemit_flush_pre(E, true);
	cemit_line(E, "%s *%s = NULL;   /* %s, device memory */", ct, name, b->name);
	cemit_line(E, "if (cudaMalloc((void **)&%s, (size_t)(%s) * sizeof(%s)) != cudaSuccess) {",
	    name, n, ct);
	E->indent++;
	cemit_fail(E, arena_printf(E->a, "%s: out of device memory allocating '%s'",
	    E->f->name, b->name), "4");
	cemit_close(E);
	cemit_push_heap(E, name);
	cemit_stmt(E, s->alloc.body, false);
	cemit_pop_heap(E);
	cemit_line(E, "cudaFree(%s);", name);
	if (!last)
		cemit_close(E);
	return true;
}

static bool
kernel_stmt(CEmit *E, IrStmt *s, bool last)
{
	CudaC *C = E->hook_ctx;
	if (s->kind == IS_EVALUATE && is_call(s->eval.value, GPU_BARRIER)) {
		cemit_line(E, "__syncthreads();");
		return true;
	}
	GpuShared *g = s->kind == IS_ALLOCATE ? gpu_shared_find(C->k, s->alloc.buf) : NULL;
	if (!g)
		return false;
	Buffer *b = s->alloc.buf;
	const char *name = cname_get(E->names, b, b->name);
	const char *ct = target_c_type(b->elem);
	char *off = cexpr(E, g->offset, NULL, true);
	if (!last)
		cemit_open(E);
	cemit_flush_pre(E, true);
	cemit_line(E, "%s *%s = (%s *)(txc_shared + %s);   /* %s, shared */", ct, name, ct, off,
	    b->name);
	cemit_stmt(E, s->alloc.body, true);
	if (!last)
		cemit_close(E);
	return true;
}

/* A thread's or block's id is index arithmetic. */
static bool
index_call(IrExpr *e)
{
	return is_call(e, GPU_TID) || is_call(e, GPU_BID);
}

static const CHooks host_hooks = { host_stmt, intrinsic, index_call };
static const CHooks kernel_hooks = { kernel_stmt, intrinsic, index_call };

/* The helpers' text, callable from kernels too. */
static void
write_helpers(FILE *out, const CHelpers *h)
{
	char *t;
	size_t len;
	FILE *m = open_memstream(&t, &len);
	if (!m)
		diag_fatal("out of memory");
	chelp_write(m, h);
	fclose(m);
	const char *from = "static inline", *to = "static __host__ __device__ inline";
	for (char *p = t; *p;) {
		char *q = strstr(p, from);
		if (!q) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(q - p), out);
		fputs(to, out);
		p = q + strlen(from);
	}
	free(t);
}

bool
cuda_c_emit(FILE *out, GpuFunc **gf, int n, const char *source_name)
{
	/* TMA loads (gpu_tma.c) need the host's tensor maps: PTX only */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < gf[i]->nk; j++)
			if (gf[i]->k[j]->ntma) {
				diag_error(gf[i]->k[j]->tma[0].loc, "--emit=cuda does not write TMA loads "
				    "(tma of '%s'); --emit=ptx and objects do", gf[i]->k[j]->tma[0].tile->name);
				return false;
			}
	int nall = 0;
	for (int i = 0; i < n; i++)
		nall += 1 + gf[i]->nk;
	IrFunc **all = arena_alloc(ir_arena, (size_t)(nall + 1) * sizeof *all);
	nall = 0;
	for (int i = 0; i < n; i++) {
		all[nall++] = gf[i]->host;
		for (int j = 0; j < gf[i]->nk; j++)
			all[nall++] = gf[i]->k[j]->fn;
	}
	CHelpers help = { 0 };
	CEmit E = { .a = arena_new(), .help = &help };
	CudaC C = { NULL, NULL };
	int nt = 0;
	char **texts = calloc((size_t)nall + 1, sizeof *texts);
	if (!texts)
		diag_fatal("out of memory");
	for (int i = 0; i < n && !E.error; i++) {
		C.gf = gf[i];
		for (int j = 0; j < gf[i]->nk && !E.error; j++) {
			C.k = gf[i]->k[j];
			E.hooks = &kernel_hooks;
			E.hook_ctx = &C;
			E.free_fn = NULL;
			cemit_begin_func(&E, C.k->fn, all, nall);
			texts[nt++] = cemit_func(&E, C.k->fn, "extern \"C\" __global__ ", true);
		}
		C.k = NULL;
		E.hooks = &host_hooks;
		E.free_fn = "cudaFree";
		cemit_begin_func(&E, gf[i]->host, all, nall);
		texts[nt++] = cemit_func(&E, gf[i]->host, "extern \"C\" ", false);
	}
	bool ok = !E.error;
	if (ok) {
		fprintf(out, "/* Generated by txc --target=cuda --emit=cuda from %s; do not edit.\n"
		    " *\n * CUDA C of the kernels txc compiles for the GPU, for reading; it builds\n"
		    " * with `nvcc -c -arch=sm_80 FILE.cu` into an object with the same entry\n"
		    " * points as txc's (device pointers for the tensors), using the CUDA\n"
		    " * runtime.  Each entry point returns 0, or an error code whose message\n"
		    " * NAME_last_error() returns (6: a CUDA error).\n */\n", source_name);
		fputs("#include <cuda_runtime.h>\n#include <math.h>\n#include <stddef.h>\n"
		    "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n", out);
		write_helpers(out, &help);
		bool warp = false;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < gf[i]->nk; j++)
				warp |= gpu_mma_in_type(gf[i]->k[j]->fn->body, TY_ERROR);
		if (warp)
			fputs(swz_helper, out);
		for (int ty = 0; ty < 2; ty++) {
			ScalarType t = ty ? TY_BF16 : TY_F16;
			bool mma = false;
			for (int i = 0; i < n; i++)
				for (int j = 0; j < gf[i]->nk; j++)
					mma |= gpu_mma_in_type(gf[i]->k[j]->fn->body, t);
			const char *tn = type_name(t);
			if (mma) {
				fprintf(out, mma_helper, tn, tn, tn, tn);
				fprintf(out, mma_frag_helper, tn, tn, tn);
			}
		}
		bool copy = false;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < gf[i]->nk; j++)
				copy |= gpu_copy_in(gf[i]->k[j]->fn->body);
		if (copy)
			fputs(copy_helper, out);
		bool frag = false;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < gf[i]->nk; j++)
				frag |= gpu_mma_in_type(gf[i]->k[j]->fn->body, TY_ERROR);
		if (frag)
			fputs(frag_helpers, out);
		fputs("/* every kernel's shared buffers, placed by txc */\n"
		    "extern __shared__ __align__(16) unsigned char txc_shared[];\n\n", out);
		nt = 0;
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < gf[i]->nk; j++) {
				GpuKernel *k = gf[i]->k[j];
				fprintf(out, "/* ---- kernel %s: launched by %s ---- */\n\n", k->name,
				    gf[i]->host->name);
				fputs(texts[nt++], out);
				fputc('\n', out);
			}
			const char *h = gf[i]->host->name;
			fprintf(out, "/* ---- %s ---- */\n\n", h);
			fprintf(out, "static thread_local const char *txc_error_%s = \"\";\n\n", h);
			fprintf(out, "/* The message of this thread's last failed call of %s(). */\n"
			    "extern \"C\" const char *\n%s_last_error(void)\n{\n\treturn txc_error_%s;\n}\n\n",
			    h, h, h);
			fputs(texts[nt++], out);
			fputc('\n', out);
		}
	}
	for (int i = 0; i < nt; i++)
		free(texts[i]);
	free(texts);
	arena_free(E.a);
	return ok && !ferror(out);
}
