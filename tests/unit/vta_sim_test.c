/* vta_sim_test.c: unit tests of libtxrt's VTA simulator (rt/vta_sim.c,
 * rt/vta_exec.c) on streams built here by hand.
 *
 * A small matmul (INP, WGT and micro-ops loaded from DRAM, a reset GEMM,
 * a GEMM over both hardware loops, ALU SHR, ADD, MUL, MIN and MAX with
 * immediates and with tensors, broadcast by a zero factor, then a STORE)
 * must give what plain C gives, ending with TVM's end-of-stream protocol
 * and no report; so must a padded LOAD and an ACC8 LOAD.  Each malformed
 * stream must be caught with a message that names the instruction: a
 * missing token (a read-after-write and a write-after-read race), FINISH
 * not last, no FINISH, SRAM indices out of range (LOAD and GEMM), a read
 * of SRAM never written, tokens left over, a deadlock, a flag the module
 * lacks, too many outstanding tokens, the fetch-order hang, DRAM outside
 * the regions, a micro-op updating the acc element the one before it
 * writes (the pipeline hazard).  The interleavings mode must find a race that changes the
 * output with the checks off; the statistics must count right, and the
 * cycle model must run a double-buffered stream faster than the same work
 * serialized.  A configuration of batch 2 and 8x4 blocks must run too.
 * The device hook must take the stream.
 *
 *     vta_sim_test        the tests (exit 0, or 1 after the failures)
 *     vta_sim_test -v     also prints each expected message
 *     vta_sim_test bench  a stream of a ResNet C2 layer's GEMM uops, and one
 *                         of 100,000 instructions, timed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt/vta.h"

static int failures, verbose;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

/* ---- building streams ------------------------------------------------------------ */

/* the flags: pop_prev, pop_next, push_prev, push_next */
enum { PP = 1, PN = 2, HP = 4, HN = 8 };
enum { MLOAD, MCOMP, MSTORE };

typedef struct {
	unsigned char *b;
	size_t n, cap;
} Stream;

static void
emit(Stream *s, txrt_vta_insn in)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		if (!(s->b = realloc(s->b, s->cap * TXRT_VTA_INSN_BYTES))) {
			perror("realloc");
			exit(2);
		}
	}
	if (txrt_vta_encode(&in, s->b + s->n * TXRT_VTA_INSN_BYTES) != 0) {
		char text[200];
		txrt_vta_format(&in, text, sizeof text);
		fprintf(stderr, "cannot encode %s\n", text);
		exit(2);
	}
	s->n++;
}

static txrt_vta_insn
flags(int opcode, int f)
{
	txrt_vta_insn in;

	memset(&in, 0, sizeof in);
	in.opcode = opcode;
	in.pop_prev = !!(f & PP);
	in.pop_next = !!(f & PN);
	in.push_prev = !!(f & HP);
	in.push_next = !!(f & HN);
	return in;
}

static txrt_vta_insn
ld(int type, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride, int f)
{
	txrt_vta_insn in = flags(TXRT_VTA_LOAD, f);

	in.mem_type = type;
	in.sram_base = sram;
	in.dram_base = dram;
	in.y_size = y;
	in.x_size = x;
	in.x_stride = stride;
	return in;
}

static txrt_vta_insn
sto(uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride, int f)
{
	txrt_vta_insn in = ld(TXRT_VTA_MEM_OUT, sram, dram, y, x, stride, f);

	in.opcode = TXRT_VTA_STORE;
	return in;
}

/* what TVM's runtime emits as a NOP of each module */
static txrt_vta_insn
nop(int module, int f)
{
	if (module == MSTORE)
		return sto(0, 0, 0, 0, 0, f);
	return ld(module == MLOAD ? TXRT_VTA_MEM_INP : TXRT_VTA_MEM_UOP, 0, 0, 0, 0, 0, f);
}

static txrt_vta_insn
loops(int opcode, uint32_t bgn, uint32_t end, uint32_t io, uint32_t ii, uint32_t dout, uint32_t din,
    uint32_t sout, uint32_t sin, int f)
{
	txrt_vta_insn in = flags(opcode, f);

	in.uop_bgn = bgn;
	in.uop_end = end;
	in.iter_out = io;
	in.iter_in = ii;
	in.dst_out = dout;
	in.dst_in = din;
	in.src_out = sout;
	in.src_in = sin;
	return in;
}

static txrt_vta_insn
gemm(uint32_t bgn, uint32_t end, uint32_t io, uint32_t ii, uint32_t dout, uint32_t din, uint32_t sout,
    uint32_t sin, uint32_t wout, uint32_t win, int f)
{
	txrt_vta_insn in = loops(TXRT_VTA_GEMM, bgn, end, io, ii, dout, din, sout, sin, f);

	in.wgt_out = wout;
	in.wgt_in = win;
	return in;
}

static txrt_vta_insn
reset(uint32_t bgn, uint32_t end, uint32_t io, uint32_t ii, uint32_t dout, uint32_t din, int f)
{
	txrt_vta_insn in = loops(TXRT_VTA_GEMM, bgn, end, io, ii, dout, din, 0, 0, f);

	in.reset = 1;
	return in;
}

static txrt_vta_insn
alu(int op, int use_imm, int32_t imm, uint32_t bgn, uint32_t end, uint32_t io, uint32_t ii, uint32_t dout,
    uint32_t din, uint32_t sout, uint32_t sin, int f)
{
	txrt_vta_insn in = loops(TXRT_VTA_ALU, bgn, end, io, ii, dout, din, sout, sin, f);

	in.alu_op = op;
	in.use_imm = use_imm;
	in.imm = imm;
	return in;
}

/* TVM's end of a stream (runtime.cc Synchronize): the last store and
 * load push to compute, a compute NOP pops both, FINISH */
static void
end_stream(Stream *s)
{
	emit(s, nop(MSTORE, HP));
	emit(s, nop(MLOAD, HN));
	emit(s, nop(MCOMP, PP | PN));
	emit(s, flags(TXRT_VTA_FINISH, 0));
}

/* DRAM: regions at 4 KiB-aligned addresses, host memory zeroed */
typedef struct {
	txrt_vta_region r[8];
	int n;
} Dram;

static void *
region(Dram *d, const char *name, uint64_t phys, size_t bytes)
{
	void *p = calloc(1, bytes);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	d->r[d->n++] = (txrt_vta_region){ phys, bytes, p, name };
	return p;
}

static void
dram_free(Dram *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->r[i].host);
	d->n = 0;
}

static void
put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

static void
put_uops(unsigned char *p, const uint32_t (*u)[3], int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t w;
		if (txrt_vta_uop(u[i][0], u[i][1], u[i][2], &w) != 0) {
			fprintf(stderr, "bad uop %d\n", i);
			exit(2);
		}
		put32(p + 4 * i, w);
	}
}

static uint32_t seed = 12345;

static int
rnd(int lo, int hi)
{
	seed = seed * 1103515245u + 12345u;
	return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1));
}

static int
run(const Stream *s, const Dram *d, const txrt_vta_options *o, txrt_vta_stats *st)
{
	return txrt_vta_run(s->b, s->n, d->r, d->n, o, st);
}

static const txrt_vta_options checked = { NULL, 1, 1, 0 };
static const txrt_vta_options unchecked = { NULL, 0, 1, 0 };

/* the run must fail with a message holding each of the needles */
static void
expect_error(int line, const char *what, const Stream *s, const Dram *d, const txrt_vta_options *o,
    const char *n1, const char *n2, const char *n3)
{
	int rc = run(s, d, o, NULL);
	const char *msg = txrt_last_error();

	if (rc != TXRT_ERR_VTA || !strstr(msg, n1) || (n2 && !strstr(msg, n2)) || (n3 && !strstr(msg, n3))) {
		fprintf(stderr, "%s:%d: %s: rc %d, message '%s'; want '%s'%s%s%s%s\n", __FILE__, line,
		    what, rc, msg, n1, n2 ? ", '" : "", n2 ? n2 : "", n3 ? "', '" : "", n3 ? n3 : "");
		failures++;
	} else if (verbose)
		printf("%s: %s\n", what, msg);
}

static void
expect_ok(int line, const char *what, const Stream *s, const Dram *d, const txrt_vta_options *o)
{
	if (run(s, d, o, NULL) != 0) {
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, line, what, txrt_last_error());
		failures++;
	}
}

/* ---- the matmul ---------------------------------------------------------------------
 * C[4][32] = A[4][32] . W[32][32]^T in int32, then >> 3, + bias (broadcast
 * over the rows), + 5, * 3, max with a floor and min with a ceiling (both
 * broadcast), a per-lane shift (one lane shifts left), clipped to
 * [-100, 100], stored as int8.  INP element i*2+kb holds A[i][kb*16..];
 * WGT element ob*2+kb the tile W[ob*16+j][kb*16+k]; ACC element i*2+ob
 * C[i][ob*16..]; ACC 8..12 bias (2 elements), floor, ceiling, shifts. */
enum { PA = 0x1000, PW = 0x2000, PU = 0x3000, PB = 0x4000, PC = 0x5000 };

/* the malformed variants */
enum {
	MM_OK, MM_NO_TOKEN, MM_WAR, MM_AFTER_FINISH, MM_STORE_UNORDERED, MM_NO_FINISH, MM_LEFT_OVER,
	MM_GEMM_RANGE, MM_LOAD_RANGE, MM_UNWRITTEN, MM_ILLEGAL_FLAG, MM_DRAM, MM_DEADLOCK,
};

typedef struct {
	int8_t a[4][32], w[32][32];
	int32_t bias[2][16], floor[16], ceil[16], shift[16];
} MmData;

static int32_t
wrap(int64_t v)
{
	uint32_t u = (uint32_t)v;
	return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

static int32_t
shr(int32_t a, int32_t b)
{
	if (b >= 0)
		return a >= 0 ? a >> b : ~(~a >> b);
	return wrap((int64_t)((uint32_t)a << -b));
}

static void
mm_reference(const MmData *m, int8_t out[4][32])
{
	for (int i = 0; i < 4; i++)
		for (int o = 0; o < 32; o++) {
			int32_t c = 0;
			for (int k = 0; k < 32; k++)
				c += m->a[i][k] * m->w[o][k];
			int j = o % 16;
			c = shr(c, 3);
			c = wrap((int64_t)c + m->bias[o / 16][j]);
			c = wrap((int64_t)c + 5);
			c = wrap((int64_t)c * 3);
			c = c > m->floor[j] ? c : m->floor[j];
			c = c < m->ceil[j] ? c : m->ceil[j];
			c = shr(c, m->shift[j]);
			c = c > -100 ? c : -100;
			c = c < 100 ? c : 100;
			out[i][o] = (int8_t)c;
		}
}

/* the regions of the matmul, filled from m */
static void
mm_dram(Dram *d, const MmData *m)
{
	int8_t *a = region(d, "A", PA, 4 * 2 * 16);
	int8_t *w = region(d, "W", PW, 4 * 256);
	unsigned char *u = region(d, "uops", PU, 4096);
	unsigned char *b = region(d, "bias", PB, 5 * 64);
	region(d, "C", PC, 8 * 16);

	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 32; k++)
			a[(i * 2 + k / 16) * 16 + k % 16] = m->a[i][k];
	for (int o = 0; o < 32; o++)
		for (int k = 0; k < 32; k++)
			w[(o / 16 * 2 + k / 16) * 256 + (o % 16) * 16 + k % 16] = m->w[o][k];
	static const uint32_t uops[9][3] = {
		{ 0, 0, 0 }, { 2, 2, 0 }, { 4, 4, 0 }, { 6, 6, 0 },   /* GEMM, per row i */
		{ 0, 0, 0 },                                          /* reset, element-wise ALU */
		{ 0, 8, 0 },                                          /* + bias */
		{ 0, 10, 0 }, { 0, 11, 0 }, { 0, 12, 0 },             /* floor, ceiling, shifts */
	};
	put_uops(u, uops, 9);
	for (int j = 0; j < 16; j++) {
		put32(b + 0 * 64 + 4 * j, (uint32_t)m->bias[0][j]);
		put32(b + 1 * 64 + 4 * j, (uint32_t)m->bias[1][j]);
		put32(b + 2 * 64 + 4 * j, (uint32_t)m->floor[j]);
		put32(b + 3 * 64 + 4 * j, (uint32_t)m->ceil[j]);
		put32(b + 4 * 64 + 4 * j, (uint32_t)m->shift[j]);
	}
}

static void
mm_stream(Stream *s, int v)
{
	int gemm_pop = v == MM_NO_TOKEN ? 0 : PP;

	s->n = 0;
	/* load: A and W, then tell compute */
	emit(s, ld(TXRT_VTA_MEM_INP, v == MM_LOAD_RANGE ? 2045 : 0, PA / 16 + (v == MM_DRAM ? 1 : 0), 1,
	    v == MM_UNWRITTEN ? 7 : 8, 8, v == MM_ILLEGAL_FLAG ? PP : 0));
	emit(s, ld(TXRT_VTA_MEM_WGT, 0, PW / 256, 1, 4, 4, v == MM_NO_TOKEN ? 0 : HN));
	/* compute: uops and the ACC constants, reset, GEMM, the ALU chain */
	emit(s, ld(TXRT_VTA_MEM_UOP, 0, PU / 4, 1, 9, 9, 0));
	emit(s, ld(TXRT_VTA_MEM_ACC, 8, PB / 64, 1, 5, 5, 0));
	emit(s, reset(4, 5, 1, 8, 0, 1, 0));
	emit(s, gemm(0, 4, 2, 2, 1, 0, 0, v == MM_GEMM_RANGE ? 2047 : 1, 2, 1, gemm_pop));
	if (v == MM_WAR)   /* overwrites A while the GEMM may read it */
		emit(s, ld(TXRT_VTA_MEM_INP, 0, PA / 16, 1, 8, 8, 0));
	emit(s, alu(TXRT_VTA_ALU_SHR, 1, 3, 4, 5, 1, 8, 0, 1, 0, 1, 0));
	emit(s, alu(TXRT_VTA_ALU_ADD, 0, 0, 5, 6, 4, 2, 2, 1, 0, 1, 0));   /* bias, broadcast over i */
	emit(s, alu(TXRT_VTA_ALU_ADD, 1, 5, 4, 5, 1, 8, 0, 1, 0, 1, 0));
	emit(s, alu(TXRT_VTA_ALU_MUL, 1, 3, 4, 5, 1, 8, 0, 1, 0, 1, 0));
	emit(s, alu(TXRT_VTA_ALU_MAX, 0, 0, 6, 7, 8, 1, 1, 0, 0, 0, 0));   /* floor, broadcast */
	emit(s, alu(TXRT_VTA_ALU_MIN, 0, 0, 7, 8, 8, 1, 1, 0, 0, 0, 0));   /* ceiling */
	emit(s, alu(TXRT_VTA_ALU_SHR, 0, 0, 8, 9, 8, 1, 1, 0, 0, 0, 0));   /* per-lane shifts */
	emit(s, alu(TXRT_VTA_ALU_MAX, 1, -100, 4, 5, 1, 8, 0, 1, 0, 1, 0));
	emit(s, alu(TXRT_VTA_ALU_MIN, 1, 100, 4, 5, 1, 8, 0, 1, 0, 1, v == MM_LEFT_OVER ? HN | HP : HN));
	/* store: C, then the end of the stream */
	emit(s, sto(0, PC / 16, 4, 2, 2, v == MM_STORE_UNORDERED || v == MM_DEADLOCK ? PP : PP | HP));
	if (v == MM_NO_FINISH) {
		emit(s, nop(MLOAD, HN));
		emit(s, nop(MCOMP, PP | PN));
		return;
	}
	emit(s, nop(MLOAD, HN));
	emit(s, nop(MCOMP, v == MM_STORE_UNORDERED ? PP : PP | PN));
	emit(s, flags(TXRT_VTA_FINISH, 0));
	if (v == MM_AFTER_FINISH)
		emit(s, alu(TXRT_VTA_ALU_ADD, 1, 1, 4, 5, 1, 8, 0, 1, 0, 1, 0));
}

static void
mm_data(MmData *m)
{
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 32; k++)
			m->a[i][k] = (int8_t)rnd(-128, 127);
	for (int o = 0; o < 32; o++)
		for (int k = 0; k < 32; k++)
			m->w[o][k] = (int8_t)rnd(-128, 127);
	for (int j = 0; j < 16; j++) {
		m->bias[0][j] = rnd(-3000, 3000);
		m->bias[1][j] = rnd(-3000, 3000);
		m->floor[j] = -30000 + 100 * j;
		m->ceil[j] = 30000 - 100 * j;
		m->shift[j] = j % 5 - 1;   /* -1 (a left shift) .. 3 */
	}
}

static void
test_matmul(void)
{
	MmData m;
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t want[4][32];
	txrt_vta_stats st;

	mm_data(&m);
	mm_reference(&m, want);
	mm_dram(&d, &m);
	mm_stream(&s, MM_OK);
	if (verbose)
		txrt_vta_print_stream(stdout, s.b, s.n);
	int rc = run(&s, &d, &checked, &st);
	if (rc != 0) {
		fprintf(stderr, "matmul: %s\n", txrt_last_error());
		failures++;
	}
	const int8_t *c = d.r[4].host;
	int bad = 0;
	for (int i = 0; i < 4; i++)
		for (int o = 0; o < 32; o++)
			if (c[(i * 2 + o / 16) * 16 + o % 16] != want[i][o] && bad++ < 5)
				fprintf(stderr, "matmul: C[%d][%d] = %d, want %d\n", i, o,
				    c[(i * 2 + o / 16) * 16 + o % 16], want[i][o]);
	CHECK(bad == 0);

	/* the statistics */
	CHECK(st.insns[TXRT_VTA_LOAD] == 6 && st.insns[TXRT_VTA_STORE] == 1 && st.insns[TXRT_VTA_GEMM] == 2);
	CHECK(st.insns[TXRT_VTA_ALU] == 9 && st.insns[TXRT_VTA_FINISH] == 1 && st.nops == 2);
	CHECK(st.gemm_uops == 16 && st.reset_uops == 8 && st.alu_uops == 9 * 8);
	CHECK(st.load_bytes[TXRT_VTA_MEM_INP] == 128 && st.load_bytes[TXRT_VTA_MEM_WGT] == 1024);
	CHECK(st.load_bytes[TXRT_VTA_MEM_UOP] == 36 && st.load_bytes[TXRT_VTA_MEM_ACC] == 320);
	CHECK(st.store_bytes == 128 && st.gemm_cycles == 16);
	CHECK(st.cycles > 0 && st.busy[0] > 0 && st.busy[1] > 0 && st.busy[2] > 0);
	CHECK(st.busy[1] <= st.cycles && st.gemm_utilisation > 0 && st.gemm_utilisation < 1);
	/* load: INP 64+16, WGT 64+128; compute, after the WGT token at 272:
	 * GEMM 4+16, nine ALUs 4+16 each; store 64+16; the compute NOP and
	 * FINISH 1 each */
	CHECK(st.cycles == 272 + 20 + 9 * 20 + 80 + 1 + 1);
	if (verbose)
		txrt_vta_print_stats(stdout, &st);

	/* the same with random interleavings: the tokens order every access */
	const txrt_vta_options many = { NULL, 1, 8, 7 };
	memset(d.r[4].host, 0, 128);
	expect_ok(__LINE__, "matmul, 8 interleavings", &s, &d, &many);
	CHECK(memcmp(d.r[4].host, c, 128) == 0);

	/* malformed variants */
	mm_stream(&s, MM_NO_TOKEN);
	expect_error(__LINE__, "read-after-write race", &s, &d, &checked,
	    "vta: race: insn 5 (GEMM  uop=[0,4) iter=2x2", "reads INP element 0 that insn 0 (LOAD  INP",
	    "of the load module writes without a token ordering them");
	mm_stream(&s, MM_WAR);
	expect_error(__LINE__, "write-after-read race", &s, &d, &checked,
	    "vta: race: insn 6 (LOAD  INP  sram=0", "writes INP element 0 that insn 5 (GEMM",
	    "of the compute module reads without a token");
	mm_stream(&s, MM_AFTER_FINISH);
	expect_error(__LINE__, "after FINISH", &s, &d, &checked, "insn 19 (ALU   ADD imm=1",
	    "comes after FINISH (insn 18)", NULL);
	mm_stream(&s, MM_STORE_UNORDERED);
	expect_error(__LINE__, "store after FINISH", &s, &d, &checked, "insn 15 (STORE OUT",
	    "is not ordered before FINISH (insn 18)", NULL);
	mm_stream(&s, MM_NO_FINISH);
	expect_error(__LINE__, "no FINISH", &s, &d, &checked, "no FINISH", NULL, NULL);
	mm_stream(&s, MM_LEFT_OVER);
	expect_error(__LINE__, "token left", &s, &d, &checked, "1 token left on g2l",
	    "insn 14 (ALU   MIN imm=100", NULL);
	mm_stream(&s, MM_GEMM_RANGE);
	expect_error(__LINE__, "GEMM range", &s, &d, &checked, "insn 5 (GEMM  uop=[0,4) iter=2x2",
	    "INP index 2049 out of range (depth 2048)", NULL);
	mm_stream(&s, MM_LOAD_RANGE);
	expect_error(__LINE__, "LOAD range", &s, &d, &checked, "insn 0 (LOAD  INP  sram=2045",
	    "writes INP elements [2045, 2053), past the end of the buffer (depth 2048)", NULL);
	mm_stream(&s, MM_UNWRITTEN);
	expect_error(__LINE__, "unwritten", &s, &d, &checked, "insn 5 (GEMM",
	    "reads INP element 7, which no LOAD has written", NULL);
	mm_stream(&s, MM_ILLEGAL_FLAG);
	expect_error(__LINE__, "illegal flag", &s, &d, &checked, "insn 0 (LOAD  INP",
	    "pop_prev on the load module", NULL);
	expect_error(__LINE__, "illegal flag, unchecked", &s, &d, &unchecked, "pop_prev on the load module",
	    NULL, NULL);
	mm_stream(&s, MM_DRAM);
	expect_error(__LINE__, "DRAM", &s, &d, &checked, "insn 0 (LOAD  INP  sram=0 dram=0x101",
	    "DRAM bytes [0x1010, 0x1090) of row 0 run past the end of region 'A' [0x1000, 0x1080)", NULL);
	mm_stream(&s, MM_DEADLOCK);
	expect_error(__LINE__, "deadlock", &s, &d, &checked, "vta: deadlock: insn 17 (NOP compute",
	    "of the compute module waits for token 1 on s2g, which no instruction pushes", NULL);

	/* the checks that are off with check 0, and those that stay */
	mm_stream(&s, MM_NO_TOKEN);
	expect_ok(__LINE__, "race, unchecked", &s, &d, &unchecked);
	mm_stream(&s, MM_NO_FINISH);
	expect_ok(__LINE__, "no FINISH, unchecked", &s, &d, &unchecked);
	mm_stream(&s, MM_GEMM_RANGE);
	expect_error(__LINE__, "GEMM range, unchecked", &s, &d, &unchecked, "out of range", NULL, NULL);

	/* the environment, when there are no options */
	mm_stream(&s, MM_NO_TOKEN);
	setenv("TXRT_VTA_CHECK", "0", 1);
	CHECK(run(&s, &d, NULL, NULL) == 0);
	unsetenv("TXRT_VTA_CHECK");
	CHECK(run(&s, &d, NULL, NULL) == TXRT_ERR_VTA);

	free(s.b);
	dram_free(&d);
}

/* ---- padded LOAD, ACC8 --------------------------------------------------------------- */

/* a 3x3 image of INP elements (row pitch 4) loaded with pads 1,1 (y) and
 * 1,2 (x) into 5x6 elements, copied to ACC by a GEMM with an identity
 * weight, stored */
static void
test_padding(void)
{
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *img = region(&d, "img", 0x1000, 12 * 16);
	int8_t *w = region(&d, "I", 0x2000, 256);
	unsigned char *u = region(&d, "uops", 0x3000, 4);
	int8_t *out = region(&d, "out", 0x4000, 30 * 16);
	static const uint32_t uops[1][3] = { { 0, 0, 0 } };

	for (int i = 0; i < 12 * 16; i++)
		img[i] = (int8_t)rnd(-128, 127);
	for (int j = 0; j < 16; j++)
		w[j * 16 + j] = 1;
	put_uops(u, uops, 1);
	txrt_vta_insn in = ld(TXRT_VTA_MEM_INP, 0, 0x1000 / 16, 3, 3, 4, 0);
	in.y_pad0 = in.y_pad1 = in.x_pad0 = 1;
	in.x_pad1 = 2;
	emit(&s, in);
	emit(&s, ld(TXRT_VTA_MEM_WGT, 0, 0x2000 / 256, 1, 1, 1, HN));
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x3000 / 4, 1, 1, 1, 0));
	emit(&s, reset(0, 1, 1, 30, 0, 1, 0));
	emit(&s, gemm(0, 1, 1, 30, 0, 1, 0, 1, 0, 0, PP | HN));
	emit(&s, sto(0, 0x4000 / 16, 5, 6, 6, PP));
	end_stream(&s);
	expect_ok(__LINE__, "padded load", &s, &d, &checked);
	int bad = 0;
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 6; x++)
			for (int k = 0; k < 16; k++) {
				int pad = y == 0 || y == 4 || x == 0 || x >= 4;
				int v = pad ? 0 : img[((y - 1) * 4 + x - 1) * 16 + k];
				if (out[(y * 6 + x) * 16 + k] != (int8_t)v && bad++ < 5)
					fprintf(stderr, "padding: (%d,%d) lane %d is %d, want %d\n", y, x, k,
					    out[(y * 6 + x) * 16 + k], v);
			}
	CHECK(bad == 0);
	free(s.b);
	dram_free(&d);

	/* a LOAD of no rows, only padding, at an address outside every
	 * region (what txc once wrote for an all-padding tile): refused, as
	 * upstream's fsim refuses it; a NOP (x_size 0) at address 0 is not */
	memset(&s, 0, sizeof s);
	img = region(&d, "img", 0x1000, 12 * 16);
	in = ld(TXRT_VTA_MEM_INP, 0, 0xfffffffeu, 0, 3, 3, 0);
	in.y_pad0 = 1;
	emit(&s, in);
	end_stream(&s);
	expect_error(__LINE__, "a load of no rows outside the regions", &s, &d, &checked,
	    "its DRAM address 0xfffffffe0 (element 4294967294) lies outside every region",
	    "though it moves no rows", NULL);
	free(s.b);
	memset(&s, 0, sizeof s);
	in = ld(TXRT_VTA_MEM_INP, 0, 0, 0, 3, 3, 0);
	in.y_pad0 = 1;
	emit(&s, in);
	end_stream(&s);
	expect_error(__LINE__, "a load of no rows at address 0", &s, &d, &checked,
	    "its DRAM address 0x0 (element 0) lies outside every region", NULL, NULL);
	free(s.b);
	memset(&s, 0, sizeof s);
	end_stream(&s);
	expect_ok(__LINE__, "NOPs at address 0", &s, &d, &checked);
	free(s.b);
	dram_free(&d);
}

/* int8 data into ACC through ACC8, left pad 1: sign-extended, then an
 * arithmetic shift right by 1 tells sign extension from zero extension */
static void
test_acc8(void)
{
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *in = region(&d, "x8", 0x1000, 6 * 16);
	int8_t *out = region(&d, "out", 0x2000, 6 * 16);
	unsigned char *u = region(&d, "uops", 0x3000, 4);
	static const uint32_t uops[1][3] = { { 0, 0, 0 } };

	for (int i = 0; i < 6 * 16; i++)
		in[i] = (int8_t)rnd(-128, 127);
	in[0] = -128;
	in[1] = -1;
	put_uops(u, uops, 1);
	txrt_vta_insn l = ld(TXRT_VTA_MEM_ACC8, 0, 0x1000 / 16, 2, 2, 3, 0);
	l.x_pad0 = 1;
	emit(&s, l);
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x3000 / 4, 1, 1, 1, 0));
	emit(&s, alu(TXRT_VTA_ALU_SHR, 1, 1, 0, 1, 1, 6, 0, 1, 0, 1, HN));
	emit(&s, sto(0, 0x2000 / 16, 1, 6, 6, PP));
	end_stream(&s);
	expect_ok(__LINE__, "ACC8", &s, &d, &checked);
	int bad = 0;
	for (int e = 0; e < 6; e++)
		for (int k = 0; k < 16; k++) {
			int y = e / 3, x = e % 3;
			int v = x == 0 ? 0 : in[(y * 3 + x - 1) * 16 + k] >> 1;
			if (out[e * 16 + k] != v && bad++ < 5)
				fprintf(stderr, "ACC8: element %d lane %d is %d, want %d\n", e, k,
				    out[e * 16 + k], v);
		}
	CHECK(bad == 0 && out[16] == -64 && out[17] == -1);
	free(s.b);
	dram_free(&d);
}

/* ---- another configuration ------------------------------------------------------------
 * batch 2, block_in 8, block_out 4 (the general GEMM, not the 1x16x16
 * one): C[2][4] = A[2][16] . W[4][16]^T + 1 */
static void
test_config(void)
{
	txrt_vta_config cfg = *txrt_vta_default_config();
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *a = region(&d, "A", 0x1000, 2 * 16);
	int8_t *w = region(&d, "W", 0x2000, 2 * 32);
	unsigned char *u = region(&d, "uops", 0x3000, 8);
	int8_t *out = region(&d, "C", 0x4000, 8);
	/* the two halves of k, one instruction each: one output updated twice
	 * in a row within an instruction is a pipeline hazard */
	static const uint32_t uops[2][3] = { { 0, 0, 0 }, { 0, 1, 1 } };
	int8_t A[2][16], W[4][16];

	cfg.batch = 2;
	cfg.block_in = 8;
	cfg.block_out = 4;
	cfg.inp_elem_bytes = 16;
	cfg.wgt_elem_bytes = 32;
	cfg.acc_elem_bytes = 32;
	cfg.out_elem_bytes = 8;
	for (int k = 0; k < 16; k++) {
		for (int b = 0; b < 2; b++)
			a[(k / 8) * 16 + b * 8 + k % 8] = A[b][k] = (int8_t)rnd(-2, 2);
		for (int j = 0; j < 4; j++)
			w[(k / 8) * 32 + j * 8 + k % 8] = W[j][k] = (int8_t)rnd(-2, 2);
	}
	put_uops(u, uops, 2);
	for (int hazard = 1; hazard >= 0; hazard--) {
		s.n = 0;
		emit(&s, ld(TXRT_VTA_MEM_INP, 0, 0x1000 / 16, 1, 2, 2, 0));
		emit(&s, ld(TXRT_VTA_MEM_WGT, 0, 0x2000 / 32, 1, 2, 2, HN));
		emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x3000 / 4, 1, 2, 2, 0));
		emit(&s, reset(0, 1, 1, 1, 0, 0, 0));
		if (hazard)   /* k's halves as the hardware's inner loop: a hazard */
			emit(&s, gemm(0, 1, 1, 2, 0, 0, 0, 1, 0, 1, PP));
		else {
			emit(&s, gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0, PP));
			emit(&s, gemm(1, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0));
		}
		emit(&s, alu(TXRT_VTA_ALU_ADD, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, HN));
		emit(&s, sto(0, 0x4000 / 8, 1, 1, 1, PP));
		end_stream(&s);
		if (hazard)
			expect_error(__LINE__, "pipeline hazard", &s, &d, &(txrt_vta_options){ &cfg, 1, 1, 0 },
			    "vta: insn 4 (GEMM  uop=[0,1) iter=1x2", "pipeline hazard: the micro-op 0 in "
			    "iteration 0,1 updates ACC element 0, which micro-op 0, 1 before it, writes", NULL);
	}
	const txrt_vta_options o = { &cfg, 1, 1, 0 };
	expect_ok(__LINE__, "batch 2, 8x4 blocks", &s, &d, &o);
	for (int b = 0; b < 2; b++)
		for (int j = 0; j < 4; j++) {
			int c = 1;
			for (int k = 0; k < 16; k++)
				c += A[b][k] * W[j][k];
			if (out[b * 4 + j] != c) {
				fprintf(stderr, "config: C[%d][%d] = %d, want %d\n", b, j, out[b * 4 + j], c);
				failures++;
			}
		}
	/* a table that contradicts itself is refused */
	cfg.acc_elem_bytes = 64;
	expect_error(__LINE__, "bad config", &s, &d, &o, "vta: bad configuration: element bytes", NULL, NULL);
	free(s.b);
	dram_free(&d);
}

/* ---- token checks on streams of NOPs --------------------------------------------------- */

static void
test_tokens(void)
{
	Dram d = { 0 };
	Stream s = { 0 };

	/* n tokens outstanding at once: 255 is the limit */
	for (int n = 255; n <= 256; n++) {
		s.n = 0;
		for (int i = 0; i < n; i++)
			emit(&s, nop(MLOAD, HN));
		for (int i = 0; i < n; i++)
			emit(&s, nop(MCOMP, PP));
		emit(&s, flags(TXRT_VTA_FINISH, 0));
		if (n == 255)
			expect_ok(__LINE__, "255 tokens", &s, &d, &checked);
		else
			expect_error(__LINE__, "256 tokens", &s, &d, &checked,
			    "insn 255 (NOP load  [push_next])", "pushes token 256 on l2g, but no token "
			    "orders it after the pop of token 1 (by insn 256 (NOP compute  [pop_prev]))",
			    "more than 255 tokens");
	}
	expect_ok(__LINE__, "256 tokens, unchecked", &s, &d, &unchecked);

	/* a pop waiting on a push that comes n compute instructions later */
	for (int n = 512; n <= 513; n++) {
		s.n = 0;
		emit(&s, nop(MCOMP, PP));
		for (int i = 1; i < n; i++)
			emit(&s, nop(MCOMP, 0));
		emit(&s, nop(MLOAD, HN));
		emit(&s, flags(TXRT_VTA_FINISH, 0));
		if (n == 512)
			expect_ok(__LINE__, "512 queued", &s, &d, &checked);
		else
			expect_error(__LINE__, "513 queued", &s, &d, &checked,
			    "insn 0 (NOP compute  [pop_prev])",
			    "waits for token 1 on l2g, which insn 513 (NOP load  [push_next]) pushes later",
			    "the 513 instructions of the compute module from this one up to the push "
			    "exceed its 512-entry instruction queue");
	}
	expect_ok(__LINE__, "513 queued, unchecked", &s, &d, &unchecked);

	/* deadlock with two modules waiting on each other */
	s.n = 0;
	emit(&s, nop(MLOAD, PN | HN));
	emit(&s, nop(MCOMP, PP | HP));
	emit(&s, flags(TXRT_VTA_FINISH, 0));
	expect_error(__LINE__, "cycle", &s, &d, &unchecked,
	    "vta: deadlock: insn 0 (NOP load  [pop_next push_next]) of the load module waits for "
	    "token 1 on g2l;", "insn 1 (NOP compute  [pop_prev push_prev]) of "
	    "the compute module waits for token 1 on l2g", NULL);

	/* a store NOP that pushes to the load module cannot be encoded as such:
	 * push_next on the store module is the flag it lacks */
	s.n = 0;
	emit(&s, nop(MSTORE, HN));
	emit(&s, flags(TXRT_VTA_FINISH, 0));
	expect_error(__LINE__, "store push_next", &s, &d, &checked, "insn 0 (NOP store  [push_next])",
	    "push_next on the store module", NULL);

	/* an opcode that does not exist */
	s.n = 1;
	memset(s.b, 0, 16);
	s.b[0] = 5;
	expect_error(__LINE__, "opcode 5", &s, &d, &unchecked, "insn 0 (OPCODE5)", "opcode 5 does not exist",
	    NULL);

	/* a region that is not aligned */
	region(&d, "odd", 0x1800, 16);
	s.n = 0;
	emit(&s, flags(TXRT_VTA_FINISH, 0));
	expect_error(__LINE__, "region", &s, &d, &checked, "region 'odd' at 0x1800", NULL, NULL);
	free(s.b);
	dram_free(&d);
}

/* ---- interleavings ---------------------------------------------------------------------- */

/* the compute module reads INP with no token from the load module, whose
 * LOAD comes after ten NOPs: the cycle model runs the LOAD first (the
 * compute module loads 1000 uops before its GEMM), most random orders
 * run the GEMM first (3 steps against 12), on an INP never written (zeros
 * when unchecked) */
static void
test_interleavings(void)
{
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *x = region(&d, "x", 0x1000, 16);
	int8_t *w = region(&d, "I", 0x2000, 256);
	unsigned char *u = region(&d, "uops", 0x3000, 4000);
	int8_t *out = region(&d, "out", 0x4000, 16);
	static const uint32_t uops[1][3] = { { 0, 0, 0 } };

	for (int k = 0; k < 16; k++) {
		x[k] = (int8_t)(k + 1);
		w[k * 16 + k] = 1;
	}
	put_uops(u, uops, 1);
	emit(&s, ld(TXRT_VTA_MEM_WGT, 0, 0x2000 / 256, 1, 1, 1, HN));
	for (int i = 0; i < 10; i++)
		emit(&s, nop(MLOAD, 0));
	emit(&s, ld(TXRT_VTA_MEM_INP, 0, 0x1000 / 16, 1, 1, 1, 0));
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x3000 / 4, 1, 1000, 1000, 0));
	emit(&s, reset(0, 1, 1, 1, 0, 0, 0));
	emit(&s, gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0, PP | HN));
	emit(&s, sto(0, 0x4000 / 16, 1, 1, 1, PP));
	end_stream(&s);

	expect_error(__LINE__, "race, checked", &s, &d, &checked, "vta: race: insn 14 (GEMM",
	    "reads INP element 0 that insn 11 (LOAD  INP", NULL);
	expect_ok(__LINE__, "race, unchecked, one run", &s, &d, &unchecked);
	CHECK(out[0] == 1 && out[15] == 16);
	const txrt_vta_options many = { NULL, 0, 8, 1 };
	expect_error(__LINE__, "race, unchecked, 8 runs", &s, &d, &many, "vta: interleaving",
	    "of 8 (seed 1) gives another result: region 'out' byte 0 (DRAM 0x4000) is 0x00, the first run "
	    "wrote 0x01", NULL);
	CHECK(out[0] == 1 && out[15] == 16);   /* the first run's results */

	setenv("TXRT_VTA_CHECK", "0", 1);
	setenv("TXRT_VTA_INTERLEAVINGS", "8", 1);
	expect_error(__LINE__, "race, environment", &s, &d, NULL, "gives another result", NULL, NULL);
	unsetenv("TXRT_VTA_CHECK");
	unsetenv("TXRT_VTA_INTERLEAVINGS");
	free(s.b);
	dram_free(&d);
}

/* ---- the cycle model ---------------------------------------------------------------------- */

/* K iterations of: load 16 INP and 16 WGT elements into buffer b, then a
 * 512-uop GEMM on buffer b.  With nbuf 2 buffers (and 2 credits on g2l)
 * the load of one buffer overlaps the GEMM on the other; with one it
 * waits for it. */
static uint64_t
pipeline(int nbuf, const txrt_vta_options *o, int8_t *result)
{
	enum { K = 8 };
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *x = region(&d, "x", 0x10000, K * 16 * 16);
	int8_t *w = region(&d, "w", 0x20000, K * 16 * 256);
	unsigned char *u = region(&d, "uops", 0x1000, 32 * 4);
	int8_t *out = region(&d, "out", 0x2000, 16 * 16);
	uint32_t uops[32][3];
	txrt_vta_stats st;

	seed = 99;
	for (int i = 0; i < K * 16 * 16; i++)
		x[i] = (int8_t)rnd(-8, 8);
	for (int i = 0; i < K * 16 * 256; i++)
		w[i] = (int8_t)rnd(-8, 8);
	for (uint32_t j = 0; j < 32; j++) {
		uops[j][0] = j % 16;
		uops[j][1] = uops[j][2] = j;
	}
	put_uops(u, (const uint32_t (*)[3])uops, 32);
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x1000 / 4, 1, 32, 32, 0));
	emit(&s, reset(0, 16, 1, 1, 0, 0, 0));
	for (int b = 0; b < nbuf; b++)
		emit(&s, nop(MCOMP, HP));
	for (int k = 0; k < K; k++) {
		uint32_t b = (uint32_t)(k % nbuf);
		emit(&s, ld(TXRT_VTA_MEM_INP, 16 * b, 0x10000 / 16 + 16 * (uint32_t)k, 1, 16, 16, PN));
		emit(&s, ld(TXRT_VTA_MEM_WGT, 16 * b, 0x20000 / 256 + 16 * (uint32_t)k, 1, 16, 16, HN));
		emit(&s, gemm(16 * b, 16 * b + 16, 32, 1, 0, 0, 0, 0, 0, 0, PP | HP));
	}
	for (int b = 0; b < nbuf; b++)
		emit(&s, nop(MLOAD, b == nbuf - 1 ? PN | HN : PN));
	emit(&s, nop(MCOMP, HN));
	emit(&s, sto(0, 0x2000 / 16, 1, 16, 16, PP | HP));
	emit(&s, nop(MCOMP, PP | PN));
	emit(&s, flags(TXRT_VTA_FINISH, 0));
	if (run(&s, &d, o, &st) != 0) {
		fprintf(stderr, "pipeline (%d buffers): %s\n", nbuf, txrt_last_error());
		failures++;
	}
	if (verbose) {
		printf("pipeline, %d buffers:\n", nbuf);
		txrt_vta_print_stats(stdout, &st);
	}
	CHECK(st.gemm_uops == K * 512 && st.gemm_cycles == K * 512);
	memcpy(result, out, 256);
	free(s.b);
	dram_free(&d);
	return st.cycles;
}

static void
test_cycles(void)
{
	int8_t r1[256], r2[256];
	const txrt_vta_options many = { NULL, 1, 4, 3 };

	uint64_t serial = pipeline(1, &checked, r1);
	uint64_t overlap = pipeline(2, &checked, r2);
	if (!(overlap < serial)) {
		fprintf(stderr, "cycles: double-buffered %llu, serialized %llu\n",
		    (unsigned long long)overlap, (unsigned long long)serial);
		failures++;
	}
	/* same result; the GEMMs (516 cycles) hide behind the loads (96 + 576
	 * cycles) but for the last: 8 * 672 + 516 + a few against 8 * 1188 */
	CHECK(memcmp(r1, r2, sizeof r1) == 0);
	CHECK(overlap < serial * 2 / 3);
	pipeline(2, &many, r2);
	CHECK(memcmp(r1, r2, sizeof r1) == 0);
}

/* ---- the device hook ------------------------------------------------------------------------ */

typedef struct {
	int calls, fail;
	size_t ninsn;
	int nregions;
} Fake;

static int
fake_run(void *ctx, const unsigned char *insns, size_t ninsn, const txrt_vta_region *regions, int nregions)
{
	Fake *f = ctx;

	(void)insns;
	(void)regions;
	f->calls++;
	f->ninsn = ninsn;
	f->nregions = nregions;
	if (f->fail) {
		txrt_set_error("fake: the board is on fire");
		return 5;
	}
	return 0;
}

static void
test_device(void)
{
	Fake f = { 0 };
	txrt_vta_device dev = { &f, fake_run, "fake VTA" };
	Dram d = { 0 };
	Stream s = { 0 };
	MmData m;
	txrt_vta_stats st;

	mm_data(&m);
	mm_dram(&d, &m);
	mm_stream(&s, MM_NO_TOKEN);   /* the device runs it unchecked */
	CHECK(strcmp(txrt_vta_device_name(), "simulator") == 0);
	txrt_vta_set_device(&dev);
	CHECK(strcmp(txrt_vta_device_name(), "fake VTA") == 0);
	CHECK(run(&s, &d, &checked, &st) == 0);
	CHECK(f.calls == 1 && f.ninsn == s.n && f.nregions == d.n);
	CHECK(st.insns[TXRT_VTA_ALU] == 9 && st.insns[TXRT_VTA_GEMM] == 2 && st.nops == 2 && st.cycles == 0);
	f.fail = 1;
	CHECK(run(&s, &d, NULL, NULL) == TXRT_ERR_VTA &&
	    strcmp(txrt_last_error(), "fake: the board is on fire") == 0);
	txrt_vta_set_device(NULL);
	CHECK(strcmp(txrt_vta_device_name(), "simulator") == 0);
	CHECK(run(&s, &d, &checked, NULL) == TXRT_ERR_VTA && f.calls == 2);
	free(s.b);
	dram_free(&d);
}

/* ---- a ResNet C2 layer's worth of GEMM uops ---------------------------------------------------- */

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 441 GEMMs of 8 uops x 8 x 16 = 451,584 uops (C2: 56x56x64 -> 64, 3x3) */
static void
bench(int print)
{
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *x = region(&d, "x", 0x100000, 2048 * 16);
	int8_t *w = region(&d, "w", 0x200000, 1024 * 256);
	unsigned char *u = region(&d, "uops", 0x1000, 9 * 4);
	region(&d, "out", 0x400000, 1024 * 16);
	uint32_t uops[9][3] = { { 0, 0, 0 } };
	txrt_vta_stats st;

	for (int i = 0; i < 2048 * 16; i++)
		x[i] = (int8_t)rnd(-128, 127);
	for (int i = 0; i < 1024 * 256; i++)
		w[i] = (int8_t)rnd(-128, 127);
	for (uint32_t j = 0; j < 8; j++) {
		uops[j][0] = 16 * j;
		uops[j][1] = uops[j][2] = j;
	}
	put_uops(u, (const uint32_t (*)[3])uops, 9);
	emit(&s, ld(TXRT_VTA_MEM_INP, 0, 0x100000 / 16, 1, 2048, 2048, 0));
	emit(&s, ld(TXRT_VTA_MEM_WGT, 0, 0x200000 / 256, 1, 1024, 1024, HN));
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x1000 / 4, 1, 9, 9, 0));
	emit(&s, reset(8, 9, 1, 1024, 0, 1, 0));
	for (int i = 0; i < 441; i++)
		emit(&s, gemm(0, 8, 8, 16, 128, 1, 8, 64, 8, 64, i == 0 ? PP : 0));
	emit(&s, alu(TXRT_VTA_ALU_SHR, 1, 8, 8, 9, 1, 1024, 0, 1, 0, 1, HN));
	emit(&s, sto(0, 0x400000 / 16, 1, 1024, 1024, PP));
	end_stream(&s);
	for (int check = 1; check >= 0; check--) {
		const txrt_vta_options o = { NULL, check, 1, 0 };
		double t = now();
		if (run(&s, &d, &o, &st) != 0) {
			fprintf(stderr, "bench: %s\n", txrt_last_error());
			failures++;
		}
		t = now() - t;
		CHECK(st.gemm_uops == 451584);
		if (print) {
			printf("C2-sized stream (%zu instructions, %llu GEMM uops), check %d: %.3f s\n", s.n,
			    (unsigned long long)st.gemm_uops, check, t);
			txrt_vta_print_stats(stdout, &st);
		}
	}
	free(s.b);
	dram_free(&d);
}

/* 100,000 instructions: 33,333 double-buffered iterations of two small
 * LOADs and a 16-uop GEMM (the scheduler's and the checks' cost per
 * instruction) */
static void
bench_many(void)
{
	enum { K = 33333 };
	Dram d = { 0 };
	Stream s = { 0 };
	int8_t *x = region(&d, "x", 0x10000, 8 * 16 * 16);
	int8_t *w = region(&d, "w", 0x20000, 8 * 16 * 256);
	unsigned char *u = region(&d, "uops", 0x1000, 32 * 4);
	region(&d, "out", 0x2000, 16 * 16);
	uint32_t uops[32][3];
	txrt_vta_stats st;

	for (int i = 0; i < 8 * 16 * 16; i++)
		x[i] = (int8_t)rnd(-8, 8);
	for (int i = 0; i < 8 * 16 * 256; i++)
		w[i] = (int8_t)rnd(-8, 8);
	for (uint32_t j = 0; j < 32; j++) {
		uops[j][0] = j % 16;
		uops[j][1] = uops[j][2] = j;
	}
	put_uops(u, (const uint32_t (*)[3])uops, 32);
	emit(&s, ld(TXRT_VTA_MEM_UOP, 0, 0x1000 / 4, 1, 32, 32, 0));
	emit(&s, reset(0, 16, 1, 1, 0, 0, 0));
	emit(&s, nop(MCOMP, HP));
	emit(&s, nop(MCOMP, HP));
	for (uint32_t k = 0; k < K; k++) {
		uint32_t b = k % 2;
		emit(&s, ld(TXRT_VTA_MEM_INP, 16 * b, 0x10000 / 16 + 16 * (k % 8), 1, 16, 16, PN));
		emit(&s, ld(TXRT_VTA_MEM_WGT, 16 * b, 0x20000 / 256 + 16 * (k % 8), 1, 16, 16, HN));
		emit(&s, gemm(16 * b, 16 * b + 16, 1, 1, 0, 0, 0, 0, 0, 0, PP | HP));
	}
	emit(&s, nop(MLOAD, PN));
	emit(&s, nop(MLOAD, PN | HN));
	emit(&s, nop(MCOMP, HN));
	emit(&s, sto(0, 0x2000 / 16, 1, 16, 16, PP | HP));
	emit(&s, nop(MCOMP, PP | PN));
	emit(&s, flags(TXRT_VTA_FINISH, 0));
	for (int check = 1; check >= 0; check--) {
		const txrt_vta_options o = { NULL, check, 1, 0 };
		double t = now();
		if (run(&s, &d, &o, &st) != 0) {
			fprintf(stderr, "bench: %s\n", txrt_last_error());
			failures++;
		}
		printf("%zu instructions, check %d: %.3f s\n", s.n, check, now() - t);
	}
	txrt_vta_print_stats(stdout, &st);
	free(s.b);
	dram_free(&d);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0) {
		bench(1);
		bench_many();
		return failures != 0;
	}
	verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
	test_matmul();
	test_padding();
	test_acc8();
	test_config();
	test_tokens();
	test_interleavings();
	test_cycles();
	test_device();
	bench(verbose);
	if (failures) {
		fprintf(stderr, "vta_sim_test: %d failures\n", failures);
		return 1;
	}
	printf("vta_sim_test: ok\n");
	return 0;
}
