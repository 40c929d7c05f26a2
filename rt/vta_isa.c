/* vta_isa.c: VTA's instruction set: the default configuration, the
 * encoder and decoder of the 128-bit instructions and 32-bit micro-ops,
 * the one-line assembly that messages and listings print, and which
 * module runs an instruction.
 *
 * The layout is hw_spec.h's bit-field structs as GCC packs them
 * (VTA-ISA.md section 2): fields LSB-first, none straddling the two 64-bit
 * words.  Each field is one row of a table below (word, first bit, width),
 * moved with shifts and masks, so that the layout reads as the fact sheet
 * does and no C bit-field is involved.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "vta.h"

static const txrt_vta_config default_config = {
	.batch = 1, .block_in = 16, .block_out = 16,
	.inp_bits = 8, .wgt_bits = 8, .acc_bits = 32,
	.uop_depth = 8192, .inp_depth = 2048, .wgt_depth = 1024, .acc_depth = 2048,
	.inp_elem_bytes = 16, .wgt_elem_bytes = 256, .acc_elem_bytes = 64,
	.out_elem_bytes = 16, .uop_elem_bytes = 4,
	.max_tokens = 255, .insn_queue = 512,
	.dma_bytes_per_cycle = 8, .dma_latency = 64,
	.gemm_cycles_per_uop = 1, .alu_cycles_per_uop = 2, .insn_overhead = 4,
};

const txrt_vta_config *
txrt_vta_default_config(void)
{
	return &default_config;
}

/* ---- the layout ---------------------------------------------------------------- */

/* one field: bits [pos, pos+width) of 64-bit word `word`; `off` is the
 * offset of its uint32_t member in txrt_vta_insn */
typedef struct {
	unsigned char word, pos, width;
	size_t off;
} Field;

#define F(w, p, n, m) { w, p, n, offsetof(txrt_vta_insn, m) }

/* LOAD and STORE (VTAMemInsn), after the 7-bit header and memory_type */
static const Field mem_fields[] = {
	F(0, 10, 16, sram_base), F(0, 26, 32, dram_base),
	F(1, 0, 16, y_size), F(1, 16, 16, x_size), F(1, 32, 16, x_stride),
	F(1, 48, 4, y_pad0), F(1, 52, 4, y_pad1), F(1, 56, 4, x_pad0), F(1, 60, 4, x_pad1),
};

/* GEMM, ALU and FINISH share the first word (VTAGemInsn, VTAAluInsn) */
static const Field loop_fields[] = {
	F(0, 8, 13, uop_bgn), F(0, 21, 14, uop_end), F(0, 35, 14, iter_out), F(0, 49, 14, iter_in),
	F(1, 0, 11, dst_out), F(1, 11, 11, dst_in), F(1, 22, 11, src_out), F(1, 33, 11, src_in),
};

/* GEMM only: the weight factors */
static const Field wgt_fields[] = {
	F(1, 44, 10, wgt_out), F(1, 54, 10, wgt_in),
};

#undef F

#define NFIELDS(a) (sizeof (a) / sizeof (a)[0])

/* the header: opcode [2:0] and the four flags [6:3] */
#define POP_PREV_BIT 3
#define POP_NEXT_BIT 4
#define PUSH_PREV_BIT 5
#define PUSH_NEXT_BIT 6
/* word 0 */
#define MEM_TYPE_POS 7       /* 3 bits */
#define RESET_POS 7          /* 1 bit */
/* word 1 of ALU */
#define ALU_OP_POS 44        /* 3 bits */
#define USE_IMM_POS 47       /* 1 bit */
#define IMM_POS 48           /* 16 bits, signed */

/* the micro-op (VTAUop) */
#define UOP_DST_BITS 11
#define UOP_SRC_BITS 11
#define UOP_WGT_BITS 10

static uint64_t
mask(int width)
{
	return width >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1;
}

static uint32_t *
member(txrt_vta_insn *in, const Field *f)
{
	return (uint32_t *)((char *)in + f->off);
}

static const uint32_t *
cmember(const txrt_vta_insn *in, const Field *f)
{
	return (const uint32_t *)((const char *)in + f->off);
}

/* puts each field of f[0..n) into w; -1 when one does not fit */
static int
put_fields(uint64_t w[2], const txrt_vta_insn *in, const Field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = *cmember(in, &f[i]);
		if (v & ~mask(f[i].width))
			return -1;
		w[f[i].word] |= v << f[i].pos;
	}
	return 0;
}

static void
get_fields(const uint64_t w[2], txrt_vta_insn *out, const Field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*member(out, &f[i]) = (uint32_t)((w[f[i].word] >> f[i].pos) & mask(f[i].width));
}

static int
is_flag(int v)
{
	return v == 0 || v == 1;
}

int
txrt_vta_encode(const txrt_vta_insn *in, unsigned char out[16])
{
	uint64_t w[2] = { 0, 0 };

	if (in->opcode < TXRT_VTA_LOAD || in->opcode > TXRT_VTA_ALU || !is_flag(in->pop_prev) ||
	    !is_flag(in->pop_next) || !is_flag(in->push_prev) || !is_flag(in->push_next))
		return -1;
	w[0] = (uint64_t)in->opcode | (uint64_t)in->pop_prev << POP_PREV_BIT |
	    (uint64_t)in->pop_next << POP_NEXT_BIT | (uint64_t)in->push_prev << PUSH_PREV_BIT |
	    (uint64_t)in->push_next << PUSH_NEXT_BIT;
	switch (in->opcode) {
	case TXRT_VTA_LOAD:
	case TXRT_VTA_STORE:
		if (in->mem_type < 0 || in->mem_type > 7)
			return -1;
		w[0] |= (uint64_t)in->mem_type << MEM_TYPE_POS;
		if (put_fields(w, in, mem_fields, NFIELDS(mem_fields)) != 0)
			return -1;
		break;
	case TXRT_VTA_ALU:
		if (in->alu_op < 0 || in->alu_op > 7 || !is_flag(in->use_imm) ||
		    in->imm < -32768 || in->imm > 32767)
			return -1;
		w[1] |= (uint64_t)in->alu_op << ALU_OP_POS | (uint64_t)in->use_imm << USE_IMM_POS |
		    (uint64_t)((uint32_t)in->imm & 0xffff) << IMM_POS;
		/* FALLTHROUGH */
	case TXRT_VTA_GEMM:
	case TXRT_VTA_FINISH:
		if (!is_flag(in->reset))
			return -1;
		w[0] |= (uint64_t)in->reset << RESET_POS;
		if (put_fields(w, in, loop_fields, NFIELDS(loop_fields)) != 0)
			return -1;
		if (in->opcode != TXRT_VTA_ALU && put_fields(w, in, wgt_fields, NFIELDS(wgt_fields)) != 0)
			return -1;
		break;
	}
	for (int i = 0; i < 16; i++)
		out[i] = (unsigned char)(w[i / 8] >> (8 * (i % 8)));
	return 0;
}

void
txrt_vta_decode(const unsigned char in[16], txrt_vta_insn *out)
{
	uint64_t w[2] = { 0, 0 };

	for (int i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)in[i] << (8 * (i % 8));
	memset(out, 0, sizeof *out);
	out->opcode = (int)(w[0] & 7);
	out->pop_prev = (int)(w[0] >> POP_PREV_BIT & 1);
	out->pop_next = (int)(w[0] >> POP_NEXT_BIT & 1);
	out->push_prev = (int)(w[0] >> PUSH_PREV_BIT & 1);
	out->push_next = (int)(w[0] >> PUSH_NEXT_BIT & 1);
	switch (out->opcode) {
	case TXRT_VTA_LOAD:
	case TXRT_VTA_STORE:
		out->mem_type = (int)(w[0] >> MEM_TYPE_POS & 7);
		get_fields(w, out, mem_fields, NFIELDS(mem_fields));
		break;
	case TXRT_VTA_ALU:
		out->alu_op = (int)(w[1] >> ALU_OP_POS & 7);
		out->use_imm = (int)(w[1] >> USE_IMM_POS & 1);
		out->imm = (int32_t)(int16_t)(uint16_t)(w[1] >> IMM_POS & 0xffff);
		out->reset = (int)(w[0] >> RESET_POS & 1);
		get_fields(w, out, loop_fields, NFIELDS(loop_fields));
		break;
	default:   /* GEMM, FINISH, and opcodes 5..7, which nothing defines */
		out->reset = (int)(w[0] >> RESET_POS & 1);
		get_fields(w, out, loop_fields, NFIELDS(loop_fields));
		get_fields(w, out, wgt_fields, NFIELDS(wgt_fields));
		break;
	}
}

int
txrt_vta_uop(uint32_t dst, uint32_t src, uint32_t wgt, uint32_t *out)
{
	if (dst >> UOP_DST_BITS || src >> UOP_SRC_BITS || wgt >> UOP_WGT_BITS)
		return -1;
	*out = dst | src << UOP_DST_BITS | wgt << (UOP_DST_BITS + UOP_SRC_BITS);
	return 0;
}

void
txrt_vta_uop_decode(uint32_t uop, uint32_t *dst, uint32_t *src, uint32_t *wgt)
{
	*dst = uop & (uint32_t)mask(UOP_DST_BITS);
	*src = uop >> UOP_DST_BITS & (uint32_t)mask(UOP_SRC_BITS);
	*wgt = uop >> (UOP_DST_BITS + UOP_SRC_BITS) & (uint32_t)mask(UOP_WGT_BITS);
}

int
txrt_vta_module(const txrt_vta_insn *in)
{
	if (in->opcode == TXRT_VTA_STORE)
		return TXRT_VTA_MOD_STORE;
	if (in->opcode == TXRT_VTA_LOAD &&
	    (in->mem_type == TXRT_VTA_MEM_INP || in->mem_type == TXRT_VTA_MEM_WGT))
		return TXRT_VTA_MOD_LOAD;
	return TXRT_VTA_MOD_COMPUTE;
}

/* ---- assembly -------------------------------------------------------------------- */

/* snprintf that appends at *len, counting what did not fit */
typedef struct {
	char *buf;
	size_t n;
	int len;
} Out;

static void put(Out *o, const char *fmt, ...) TXRT_PRINTF(2, 3);

static void
put(Out *o, const char *fmt, ...)
{
	va_list ap;
	size_t at = (size_t)o->len;

	va_start(ap, fmt);
	int k = vsnprintf(at < o->n ? o->buf + at : NULL, at < o->n ? o->n - at : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->len += k;
}

static const char *const mem_names[] = { "UOP", "WGT", "INP", "ACC", "OUT", "ACC8" };
static const char *const alu_names[] = { "MIN", "MAX", "ADD", "SHR", "MUL" };
static const char *const module_names[] = { "load", "compute", "store" };

static void
put_mem(Out *o, int mem)
{
	if (mem >= 0 && mem <= TXRT_VTA_MEM_ACC8)
		put(o, "%-4s", mem_names[mem]);
	else
		put(o, "MEM%d", mem);
}

static void
put_loops(Out *o, const txrt_vta_insn *in)
{
	put(o, "uop=[%" PRIu32 ",%" PRIu32 ") iter=%" PRIu32 "x%" PRIu32 " dst=%" PRIu32 ",%" PRIu32,
	    in->uop_bgn, in->uop_end, in->iter_out, in->iter_in, in->dst_out, in->dst_in);
}

int
txrt_vta_format(const txrt_vta_insn *in, char *buf, size_t n)
{
	Out o = { buf, n, 0 };

	if (n > 0)
		buf[0] = '\0';
	switch (in->opcode) {
	case TXRT_VTA_LOAD:
	case TXRT_VTA_STORE:
		if (in->x_size == 0) {
			put(&o, "NOP %s", module_names[txrt_vta_module(in)]);
			break;
		}
		put(&o, "%-5s ", in->opcode == TXRT_VTA_LOAD ? "LOAD" : "STORE");
		put_mem(&o, in->mem_type);
		put(&o, " sram=%" PRIu32 " dram=0x%" PRIx32 " y=%" PRIu32 " x=%" PRIu32 " stride=%" PRIu32,
		    in->sram_base, in->dram_base, in->y_size, in->x_size, in->x_stride);
		if (in->y_pad0 || in->y_pad1 || in->x_pad0 || in->x_pad1)
			put(&o, " pad=%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32,
			    in->y_pad0, in->y_pad1, in->x_pad0, in->x_pad1);
		break;
	case TXRT_VTA_GEMM:
		put(&o, "GEMM  %s", in->reset ? "reset " : "");
		put_loops(&o, in);
		/* a reset ignores src and wgt: show them only when set */
		if (!in->reset || in->src_out || in->src_in || in->wgt_out || in->wgt_in)
			put(&o, " src=%" PRIu32 ",%" PRIu32 " wgt=%" PRIu32 ",%" PRIu32,
			    in->src_out, in->src_in, in->wgt_out, in->wgt_in);
		break;
	case TXRT_VTA_ALU:
		if (in->alu_op >= 0 && in->alu_op <= TXRT_VTA_ALU_MUL)
			put(&o, "ALU   %s ", alu_names[in->alu_op]);
		else
			put(&o, "ALU   OP%d ", in->alu_op);
		if (in->use_imm)
			put(&o, "imm=%" PRId32 " ", in->imm);
		put_loops(&o, in);
		put(&o, " src=%" PRIu32 ",%" PRIu32, in->src_out, in->src_in);
		break;
	case TXRT_VTA_FINISH:
		put(&o, "FINISH");
		break;
	default:
		put(&o, "OPCODE%d", in->opcode);
		break;
	}
	if (in->pop_prev || in->pop_next || in->push_prev || in->push_next) {
		const char *sep = "  [";
		static const char *const names[] = { "pop_prev", "pop_next", "push_prev", "push_next" };
		const int flags[] = { in->pop_prev, in->pop_next, in->push_prev, in->push_next };
		for (int i = 0; i < 4; i++)
			if (flags[i]) {
				put(&o, "%s%s", sep, names[i]);
				sep = " ";
			}
		put(&o, "]");
	}
	return o.len;
}

void
txrt_vta_print_stream(FILE *fp, const unsigned char *insns, size_t ninsn)
{
	char line[200];
	txrt_vta_insn in;

	for (size_t i = 0; i < ninsn; i++) {
		txrt_vta_decode(insns + 16 * i, &in);
		txrt_vta_format(&in, line, sizeof line);
		fprintf(fp, "%6zu  %s\n", i, line);
	}
}
