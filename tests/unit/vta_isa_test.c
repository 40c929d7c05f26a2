/* vta_isa_test.c: unit tests of libtxrt's VTA encoder and decoder
 * (rt/vta_isa.c): every golden encoding of VTA-ISA.md section 2.6 bit for
 * bit, both ways; the micro-op example; fields that do not fit are
 * rejected and leave the output alone; the assembly lines; the routing
 * of instructions to modules.  Exit 0, or 1 after printing the failures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/vta.h"

static int failures;

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	failures++; } } while (0)

/* the flags as one argument: pop_prev, pop_next, push_prev, push_next */
enum { PP = 1, PN = 2, HP = 4, HN = 8 };

static txrt_vta_insn
base(int opcode, int flags)
{
	txrt_vta_insn in;

	memset(&in, 0, sizeof in);
	in.opcode = opcode;
	in.pop_prev = !!(flags & PP);
	in.pop_next = !!(flags & PN);
	in.push_prev = !!(flags & HP);
	in.push_next = !!(flags & HN);
	return in;
}

static txrt_vta_insn
mem(int opcode, int type, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride,
    uint32_t pad, int flags)
{
	txrt_vta_insn in = base(opcode, flags);

	in.mem_type = type;
	in.sram_base = sram;
	in.dram_base = dram;
	in.y_size = y;
	in.x_size = x;
	in.x_stride = stride;
	in.y_pad0 = in.y_pad1 = in.x_pad0 = in.x_pad1 = pad;
	return in;
}

static txrt_vta_insn
loops(int opcode, uint32_t bgn, uint32_t end, uint32_t io, uint32_t ii, uint32_t dout, uint32_t din,
    uint32_t sout, uint32_t sin, int flags)
{
	txrt_vta_insn in = base(opcode, flags);

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

/* VTA-ISA.md section 2.6 */
typedef struct {
	const char *what;
	txrt_vta_insn in;
	uint64_t lo, hi;
	const char *text;
} Golden;

static uint64_t
word(const unsigned char *b)
{
	uint64_t w = 0;

	for (int i = 7; i >= 0; i--)
		w = w << 8 | b[i];
	return w;
}

static void
goldens(void)
{
	Golden g[8];
	int n = 0;

	g[n++] = (Golden){ "LOAD INP", mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 16, 0x1000, 4, 4, 16, 1, PN | HN),
	    0x0000004000004150u, 0x1111001000040004u,
	    "LOAD  INP  sram=16 dram=0x1000 y=4 x=4 stride=16 pad=1,1,1,1  [pop_next push_next]" };
	g[n++] = (Golden){ "LOAD UOP", mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_UOP, 0, 0x40, 1, 3, 3, 0, 0),
	    0x0000000100000000u, 0x0000000300030001u, "LOAD  UOP  sram=0 dram=0x40 y=1 x=3 stride=3" };
	g[n] = (Golden){ "GEMM", loops(TXRT_VTA_GEMM, 0, 1, 16, 16, 0, 1, 1, 0, PP | HP),
	    0x002000800020002au, 0x0400100000400800u,
	    "GEMM  uop=[0,1) iter=16x16 dst=0,1 src=1,0 wgt=1,16  [pop_prev push_prev]" };
	g[n].in.wgt_out = 1;
	g[n++].in.wgt_in = 16;
	g[n] = (Golden){ "GEMM reset", loops(TXRT_VTA_GEMM, 1, 2, 1, 16, 0, 1, 0, 0, 0),
	    0x0020000800400182u, 0x0000000000000800u, "GEMM  reset uop=[1,2) iter=1x16 dst=0,1" };
	g[n++].in.reset = 1;
	g[n] = (Golden){ "ALU SHR", loops(TXRT_VTA_ALU, 2, 3, 1, 16, 0, 1, 0, 1, HN),
	    0x0020000800600244u, 0x0008b00200000800u,
	    "ALU   SHR imm=8 uop=[2,3) iter=1x16 dst=0,1 src=0,1  [push_next]" };
	g[n].in.alu_op = TXRT_VTA_ALU_SHR;
	g[n].in.use_imm = 1;
	g[n++].in.imm = 8;
	g[n] = (Golden){ "ALU MAX", loops(TXRT_VTA_ALU, 2, 3, 1, 1, 0, 0, 0, 0, 0),
	    0x0002000800600204u, 0xffff900000000000u, "ALU   MAX imm=-1 uop=[2,3) iter=1x1 dst=0,0 src=0,0" };
	g[n].in.alu_op = TXRT_VTA_ALU_MAX;
	g[n].in.use_imm = 1;
	g[n++].in.imm = -1;
	g[n++] = (Golden){ "STORE OUT",
	    mem(TXRT_VTA_STORE, TXRT_VTA_MEM_OUT, 0, 0x2000, 1, 16, 16, 0, PP | HP),
	    0x0000008000000229u, 0x0000001000100001u,
	    "STORE OUT  sram=0 dram=0x2000 y=1 x=16 stride=16  [pop_prev push_prev]" };
	g[n++] = (Golden){ "FINISH", base(TXRT_VTA_FINISH, 0), 3, 0, "FINISH" };

	for (int i = 0; i < n; i++) {
		unsigned char b[16], b2[16];
		txrt_vta_insn d;
		char text[200];

		memset(b, 0xee, sizeof b);
		if (txrt_vta_encode(&g[i].in, b) != 0 || word(b) != g[i].lo || word(b + 8) != g[i].hi) {
			fprintf(stderr, "%s: encodes as %016llx %016llx, want %016llx %016llx\n", g[i].what,
			    (unsigned long long)word(b), (unsigned long long)word(b + 8),
			    (unsigned long long)g[i].lo, (unsigned long long)g[i].hi);
			failures++;
		}
		/* decode the golden words: every field as the struct above */
		for (int k = 0; k < 8; k++) {
			b[k] = (unsigned char)(g[i].lo >> 8 * k);
			b[8 + k] = (unsigned char)(g[i].hi >> 8 * k);
		}
		txrt_vta_decode(b, &d);
		if (memcmp(&d, &g[i].in, sizeof d) != 0) {
			fprintf(stderr, "%s: decodes to other fields\n", g[i].what);
			failures++;
		}
		CHECK(txrt_vta_encode(&d, b2) == 0 && memcmp(b, b2, 16) == 0);
		int len = txrt_vta_format(&d, text, sizeof text);
		if (strcmp(text, g[i].text) != 0 || len != (int)strlen(g[i].text)) {
			fprintf(stderr, "%s: formats as '%s', want '%s'\n", g[i].what, text, g[i].text);
			failures++;
		}
	}
}

static void
uops(void)
{
	uint32_t u = 0xdeadbeef, d, s, w;

	CHECK(txrt_vta_uop(5, 3, 7, &u) == 0 && u == 0x01c01805u);
	txrt_vta_uop_decode(0x01c01805u, &d, &s, &w);
	CHECK(d == 5 && s == 3 && w == 7);
	CHECK(txrt_vta_uop(2047, 2047, 1023, &u) == 0 && u == 0xffffffffu);
	u = 42;
	CHECK(txrt_vta_uop(2048, 0, 0, &u) == -1 && u == 42);
	CHECK(txrt_vta_uop(0, 2048, 0, &u) == -1 && u == 42);
	CHECK(txrt_vta_uop(0, 0, 1024, &u) == -1 && u == 42);
}

/* a field one past its width (or a value it cannot hold) is rejected, out
 * untouched */
static void
rejects(void)
{
	unsigned char b[16], keep[16];
	txrt_vta_insn ok_mem = mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 0, 0, 1, 1, 1, 0, 0);
	txrt_vta_insn ok_alu = loops(TXRT_VTA_ALU, 0, 1, 1, 1, 0, 0, 0, 0, 0);
	txrt_vta_insn ok_gemm = loops(TXRT_VTA_GEMM, 0, 1, 1, 1, 0, 0, 0, 0, 0);
	txrt_vta_insn t;

	memset(keep, 0x5a, sizeof keep);
#define REJECT(start, field, value) do { t = (start); t.field = (value); memcpy(b, keep, 16); \
	if (txrt_vta_encode(&t, b) != -1 || memcmp(b, keep, 16) != 0) { \
		fprintf(stderr, "%s:%d: %s = %lld not rejected\n", __FILE__, __LINE__, #field, \
		    (long long)(value)); failures++; } } while (0)
#define ACCEPT(start, field, value) do { t = (start); t.field = (value); \
	if (txrt_vta_encode(&t, b) != 0) { \
		fprintf(stderr, "%s:%d: %s = %lld rejected\n", __FILE__, __LINE__, #field, \
		    (long long)(value)); failures++; } } while (0)
	REJECT(ok_mem, opcode, 5);
	REJECT(ok_mem, opcode, -1);
	REJECT(ok_mem, pop_prev, 2);
	REJECT(ok_mem, push_next, -1);
	REJECT(ok_mem, mem_type, 8);
	REJECT(ok_mem, sram_base, 65536);
	ACCEPT(ok_mem, sram_base, 65535);
	ACCEPT(ok_mem, dram_base, 0xffffffffu);
	REJECT(ok_mem, y_size, 65536);
	REJECT(ok_mem, x_size, 65536);
	REJECT(ok_mem, x_stride, 65536);
	REJECT(ok_mem, y_pad0, 16);
	REJECT(ok_mem, y_pad1, 16);
	REJECT(ok_mem, x_pad0, 16);
	REJECT(ok_mem, x_pad1, 16);
	ACCEPT(ok_mem, x_pad1, 15);
	REJECT(ok_gemm, reset, 2);
	REJECT(ok_gemm, uop_bgn, 8192);
	ACCEPT(ok_gemm, uop_end, 8192);
	REJECT(ok_gemm, uop_end, 16384);
	REJECT(ok_gemm, iter_out, 16384);
	ACCEPT(ok_gemm, iter_out, 16383);
	REJECT(ok_gemm, iter_in, 16384);
	REJECT(ok_gemm, dst_out, 2048);
	REJECT(ok_gemm, dst_in, 2048);
	REJECT(ok_gemm, src_out, 2048);
	REJECT(ok_gemm, src_in, 2048);
	REJECT(ok_gemm, wgt_out, 1024);
	REJECT(ok_gemm, wgt_in, 1024);
	ACCEPT(ok_gemm, wgt_in, 1023);
	ACCEPT(ok_alu, wgt_in, 1024);   /* ALU has no weight factors */
	REJECT(ok_alu, alu_op, 8);
	REJECT(ok_alu, use_imm, 2);
	REJECT(ok_alu, imm, 32768);
	REJECT(ok_alu, imm, -32769);
	ACCEPT(ok_alu, imm, -32768);
	ACCEPT(ok_alu, imm, 32767);
	REJECT(ok_alu, src_in, 2048);
#undef REJECT
#undef ACCEPT

	/* the widest values survive the round trip */
	t = ok_alu;
	t.uop_bgn = 8191;
	t.uop_end = 8192;
	t.iter_out = t.iter_in = 16383;
	t.dst_out = t.dst_in = t.src_out = t.src_in = 2047;
	t.alu_op = TXRT_VTA_ALU_MUL;
	t.use_imm = 1;
	t.imm = -32768;
	t.reset = 1;
	t.pop_prev = t.pop_next = t.push_prev = t.push_next = 1;
	txrt_vta_insn d;
	CHECK(txrt_vta_encode(&t, b) == 0);
	txrt_vta_decode(b, &d);
	CHECK(memcmp(&d, &t, sizeof d) == 0);
}

static void
formats(void)
{
	char buf[200];
	txrt_vta_insn in;

	in = mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 0, 0, 0, 0, 0, 0, HN);
	txrt_vta_format(&in, buf, sizeof buf);
	CHECK(strcmp(buf, "NOP load  [push_next]") == 0);
	in = mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_UOP, 0, 0, 0, 0, 0, 0, PP | PN);
	txrt_vta_format(&in, buf, sizeof buf);
	CHECK(strcmp(buf, "NOP compute  [pop_prev pop_next]") == 0);
	in = mem(TXRT_VTA_STORE, 0, 0, 0, 0, 0, 0, 0, 0);
	txrt_vta_format(&in, buf, sizeof buf);
	CHECK(strcmp(buf, "NOP store") == 0);
	in = mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_ACC8, 4, 0x20, 2, 3, 5, 0, 0);
	in.x_pad0 = 1;
	txrt_vta_format(&in, buf, sizeof buf);
	CHECK(strcmp(buf, "LOAD  ACC8 sram=4 dram=0x20 y=2 x=3 stride=5 pad=0,0,1,0") == 0);
	in = loops(TXRT_VTA_ALU, 0, 1, 4, 2, 2, 1, 0, 1, 0);
	in.alu_op = TXRT_VTA_ALU_ADD;
	txrt_vta_format(&in, buf, sizeof buf);
	CHECK(strcmp(buf, "ALU   ADD uop=[0,1) iter=4x2 dst=2,1 src=0,1") == 0);

	/* snprintf semantics: truncated, NUL-terminated, the whole length returned */
	in = base(TXRT_VTA_FINISH, PP);
	int len = txrt_vta_format(&in, buf, 5);
	CHECK(len == (int)strlen("FINISH  [pop_prev]") && strcmp(buf, "FINI") == 0);
	CHECK(txrt_vta_format(&in, NULL, 0) == len);
	memset(buf, 'x', sizeof buf);
	in = mem(TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 16, 0x1000, 4, 4, 16, 1, PN | HN);
	len = txrt_vta_format(&in, buf, 20);
	CHECK(len > 20 && strlen(buf) == 19 && buf[20] == 'x');
}

static void
modules(void)
{
	static const struct { int opcode, mem, x, module; } cases[] = {
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 1, TXRT_VTA_MOD_LOAD },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_WGT, 1, TXRT_VTA_MOD_LOAD },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_INP, 0, TXRT_VTA_MOD_LOAD },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_UOP, 1, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_ACC, 1, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_ACC8, 1, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_LOAD, TXRT_VTA_MEM_UOP, 0, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_STORE, TXRT_VTA_MEM_OUT, 1, TXRT_VTA_MOD_STORE },
		{ TXRT_VTA_STORE, 0, 0, TXRT_VTA_MOD_STORE },
		{ TXRT_VTA_GEMM, 0, 0, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_ALU, 0, 0, TXRT_VTA_MOD_COMPUTE },
		{ TXRT_VTA_FINISH, 0, 0, TXRT_VTA_MOD_COMPUTE },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		txrt_vta_insn in = mem(cases[i].opcode, cases[i].mem, 0, 0, 1, (uint32_t)cases[i].x, 1, 0, 0);
		if (txrt_vta_module(&in) != cases[i].module) {
			fprintf(stderr, "case %zu: module %d, want %d\n", i, txrt_vta_module(&in),
			    cases[i].module);
			failures++;
		}
	}
}

static void
config(void)
{
	const txrt_vta_config *c = txrt_vta_default_config();

	CHECK(c->batch == 1 && c->block_in == 16 && c->block_out == 16);
	CHECK(c->uop_depth == 8192 && c->inp_depth == 2048 && c->wgt_depth == 1024 && c->acc_depth == 2048);
	CHECK(c->inp_elem_bytes == 16 && c->wgt_elem_bytes == 256 && c->acc_elem_bytes == 64);
	CHECK(c->out_elem_bytes == 16 && c->uop_elem_bytes == 4);
	CHECK(c->max_tokens == 255 && c->insn_queue == 512);
}

int
main(void)
{
	goldens();
	uops();
	rejects();
	formats();
	modules();
	config();
	if (failures) {
		fprintf(stderr, "vta_isa_test: %d failures\n", failures);
		return 1;
	}
	printf("vta_isa_test: ok\n");
	return 0;
}
