/* vta_exec.c: what one VTA instruction does, as TVM's fsim does it
 * (VTA-ISA.md sections 3 and 5): the SRAMs, LOAD with padding into them
 * from DRAM regions, STORE narrowing ACC to int8, GEMM and ALU over their
 * two hardware loops and the micro-op list.
 *
 * Before an instruction touches anything, every index it will use is
 * checked against the depth of its SRAM (from the largest loop counters,
 * since factors are unsigned) and every DRAM row against the regions, so
 * that an error stops the run with memory untouched.  With checks on, a
 * first pass over the accesses in execution order updates the shadows
 * (vta_sim.h) and reports a race or a read of an element never written;
 * then a second pass does the arithmetic, which keeps the GEMM loop free
 * of bookkeeping.  int32 arithmetic wraps (done in uint32_t).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vta_sim.h"

enum { UOP = TXRT_VTA_MEM_UOP, WGT = TXRT_VTA_MEM_WGT, INP = TXRT_VTA_MEM_INP, ACC = TXRT_VTA_MEM_ACC };

uint32_t
vta_dram_elem_bytes(const txrt_vta_config *cfg, int mem)
{
	switch (mem) {
	case TXRT_VTA_MEM_UOP: return (uint32_t)cfg->uop_elem_bytes;
	case TXRT_VTA_MEM_WGT: return (uint32_t)cfg->wgt_elem_bytes;
	case TXRT_VTA_MEM_INP: return (uint32_t)cfg->inp_elem_bytes;
	case TXRT_VTA_MEM_ACC: return (uint32_t)cfg->acc_elem_bytes;
	default: return (uint32_t)cfg->out_elem_bytes;   /* OUT, ACC8 */
	}
}

int
vta_sram_init(VtaSim *s)
{
	const txrt_vta_config *c = s->cfg;

	s->depth[UOP] = (uint32_t)c->uop_depth;
	s->depth[WGT] = (uint32_t)c->wgt_depth;
	s->depth[INP] = (uint32_t)c->inp_depth;
	s->depth[ACC] = (uint32_t)c->acc_depth;
	s->uop = calloc(s->depth[UOP], sizeof *s->uop);
	s->inp = calloc(s->depth[INP], (size_t)c->inp_elem_bytes);
	s->wgt = calloc(s->depth[WGT], (size_t)c->wgt_elem_bytes);
	s->acc = calloc(s->depth[ACC], (size_t)c->acc_elem_bytes);
	int ok = s->uop && s->inp && s->wgt && s->acc;
	for (int m = 0; m < 4; m++) {
		s->shadow[m] = s->check ? calloc(s->depth[m], sizeof (VtaShadow)) : NULL;
		ok = ok && (s->shadow[m] || !s->check);
	}
	if (!ok) {
		vta_sram_free(s);
		return -1;
	}
	return 0;
}

void
vta_sram_free(VtaSim *s)
{
	free(s->uop);
	free(s->inp);
	free(s->wgt);
	free(s->acc);
	for (int m = 0; m < 4; m++)
		free(s->shadow[m]);
	s->uop = NULL;
	s->inp = s->wgt = NULL;
	s->acc = NULL;
	memset(s->shadow, 0, sizeof s->shadow);
}

/* ---- DRAM ---------------------------------------------------------------------- */

int
vta_find_region(const txrt_vta_region *reg, int nreg, uint64_t addr, uint64_t len)
{
	int lo = 0, hi = nreg;

	while (lo < hi) {   /* the first region above addr */
		int mid = lo + (hi - lo) / 2;
		if (reg[mid].phys <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const txrt_vta_region *r = &reg[lo - 1];
	if (addr - r->phys > r->bytes || len > r->bytes - (addr - r->phys))
		return -1;
	return lo - 1;
}

/* the host bytes of DRAM [addr, addr+len), row `row` of the instruction,
 * or NULL after an error */
static unsigned char *
dram(const VtaSim *s, uint64_t addr, uint64_t len, uint32_t row)
{
	int i = vta_find_region(s->reg, s->nreg, addr, len);

	if (i >= 0)
		return (unsigned char *)s->reg[i].host + (addr - s->reg[i].phys);
	/* the region it starts in, if any, for the message */
	i = vta_find_region(s->reg, s->nreg, addr, 1);
	if (i >= 0) {
		const txrt_vta_region *r = &s->reg[i];
		vta_error(s, "DRAM bytes [0x%" PRIx64 ", 0x%" PRIx64 ") of row %" PRIu32
		    " run past the end of region '%s' [0x%" PRIx64 ", 0x%" PRIx64 ")",
		    addr, addr + len, row, r->name ? r->name : "?", r->phys, r->phys + r->bytes);
	} else {
		vta_error(s, "DRAM bytes [0x%" PRIx64 ", 0x%" PRIx64 ") of row %" PRIu32
		    " lie outside every region", addr, addr + len, row);
	}
	return NULL;
}

/* The DRAM address of a LOAD or STORE with columns (x_size > 0) lies in a
 * region even when it moves no bytes (no rows): upstream's fsim returns
 * early only for x_size 0 (a NOP, as TVM's runtime writes them: LOADs
 * and STOREs of nothing at address 0), and otherwise resolves the
 * address first and aborts outside every region. */
static int
dram_base_ok(const VtaSim *s, const txrt_vta_insn *in, uint32_t eb)
{
	uint64_t addr = (uint64_t)in->dram_base * eb;
	if (in->x_size == 0 || vta_find_region(s->reg, s->nreg, addr, 0) >= 0)
		return 0;
	return vta_error(s, "its DRAM address 0x%" PRIx64 " (element %" PRIu32 ") lies outside "
	    "every region%s", addr, in->dram_base, in->y_size == 0 ? ", though it moves no rows" : "");
}

/* ---- the shadows ----------------------------------------------------------------- */

static int
race(const VtaSim *s, int mem, uint32_t e, int writes, int om, uint32_t oord, int owrites)
{
	char a[200], b[200];

	txrt_set_error("vta: race: %s %s %s element %" PRIu32 " that %s of the %s module %s without "
	    "a token ordering them",
	    vta_insn_name(s->insn, s->cur, a, sizeof a), writes ? "writes" : "reads", vta_mem_names[mem], e,
	    vta_insn_name(s->insn, s->mlist[om][oord - 1], b, sizeof b), vta_module_names[om],
	    owrites ? "writes" : "reads");
	return -1;
}

static int
unwritten(const VtaSim *s, int mem, uint32_t e)
{
	return vta_error(s, "reads %s element %" PRIu32 ", which no %s has written", vta_mem_names[mem], e,
	    mem == ACC ? "LOAD or reset GEMM" : "LOAD");
}

static int
sh_read(const VtaSim *s, int mem, uint32_t e)
{
	VtaShadow *x = &s->shadow[mem][e];

	if (x->w == 0)
		return unwritten(s, mem, e);
	if (x->wm != s->mod && x->w > s->vc[x->wm])
		return race(s, mem, e, 0, x->wm, x->w, 1);
	x->r[s->mod] = s->vc[s->mod];
	return 0;
}

static int
sh_write(const VtaSim *s, int mem, uint32_t e)
{
	VtaShadow *x = &s->shadow[mem][e];

	if (x->w && x->wm != s->mod && x->w > s->vc[x->wm])
		return race(s, mem, e, 1, x->wm, x->w, 1);
	for (int m = 0; m < NMODULES; m++)
		if (m != s->mod && x->r[m] > s->vc[m])
			return race(s, mem, e, 1, m, x->r[m], 0);
	x->w = s->vc[s->mod];
	x->wm = (uint8_t)s->mod;
	return 0;
}

/* ---- LOAD and STORE ---------------------------------------------------------------- */

static int32_t
s32(uint32_t v)
{
	return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - 0x80000000u) - INT32_MAX - 1;
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* element e of SRAM mem (ACC8 fills ACC) from DRAM bytes p, or zeros */
static void
put_elem(VtaSim *s, int mem, uint32_t e, const unsigned char *p)
{
	const txrt_vta_config *c = s->cfg;
	size_t lanes;

	switch (mem) {
	case TXRT_VTA_MEM_UOP:
		s->uop[e] = p ? le32(p) : 0;
		break;
	case TXRT_VTA_MEM_INP:
	case TXRT_VTA_MEM_WGT:
		lanes = (size_t)(mem == INP ? c->inp_elem_bytes : c->wgt_elem_bytes);
		if (p)
			memcpy((mem == INP ? s->inp : s->wgt) + e * lanes, p, lanes);
		else
			memset((mem == INP ? s->inp : s->wgt) + e * lanes, 0, lanes);
		break;
	case TXRT_VTA_MEM_ACC:
	case TXRT_VTA_MEM_ACC8:
		lanes = (size_t)c->batch * (size_t)c->block_out;
		for (size_t k = 0; k < lanes; k++)
			s->acc[e * lanes + k] = !p ? 0 :
			    mem == ACC ? s32(le32(p + 4 * k)) : (int32_t)p[k] - (p[k] & 0x80 ? 256 : 0);
		break;
	}
}

static int
load(VtaSim *s, const txrt_vta_insn *in)
{
	int mem = in->mem_type, sm = mem == TXRT_VTA_MEM_ACC8 ? ACC : mem;
	uint64_t xt = (uint64_t)in->x_pad0 + in->x_size + in->x_pad1;
	uint64_t yt = (uint64_t)in->y_pad0 + in->y_size + in->y_pad1;
	uint64_t end = in->sram_base + xt * yt;
	uint32_t eb = vta_dram_elem_bytes(s->cfg, mem);

	if (end > s->depth[sm])
		return vta_error(s, "writes %s elements [%" PRIu32 ", %" PRIu64 "), past the end of "
		    "the buffer (depth %" PRIu32 ")", vta_mem_names[sm], in->sram_base, end, s->depth[sm]);
	if (dram_base_ok(s, in, eb) != 0)
		return -1;
	unsigned char **rows = malloc(((size_t)in->y_size + 1) * sizeof *rows);
	if (!rows)
		return vta_error(s, "out of memory");
	for (uint32_t y = 0; y < in->y_size; y++) {
		uint64_t addr = ((uint64_t)in->dram_base + (uint64_t)y * in->x_stride) * eb;
		if (!(rows[y] = dram(s, addr, (uint64_t)in->x_size * eb, y))) {
			free(rows);
			return -1;
		}
	}
	if (s->check)
		for (uint32_t e = in->sram_base; e < end; e++)
			if (sh_write(s, sm, e) != 0) {
				free(rows);
				return -1;
			}
	uint32_t e = in->sram_base;
	for (uint64_t y = 0; y < yt; y++) {
		int pad = y < in->y_pad0 || y >= in->y_pad0 + in->y_size;
		const unsigned char *row = pad ? NULL : rows[y - in->y_pad0];
		for (uint64_t x = 0; x < xt; x++, e++) {
			int xpad = pad || x < in->x_pad0 || x >= in->x_pad0 + in->x_size;
			put_elem(s, mem, e, xpad ? NULL : row + (x - in->x_pad0) * eb);
		}
	}
	free(rows);
	return 0;
}

static int
store(VtaSim *s, const txrt_vta_insn *in)
{
	uint64_t end = in->sram_base + (uint64_t)in->x_size * in->y_size;
	uint32_t eb = vta_dram_elem_bytes(s->cfg, TXRT_VTA_MEM_OUT);
	size_t lanes = (size_t)s->cfg->batch * (size_t)s->cfg->block_out;

	if (end > s->depth[ACC])
		return vta_error(s, "reads ACC elements [%" PRIu32 ", %" PRIu64 "), past the end of "
		    "the buffer (depth %" PRIu32 ")", in->sram_base, end, s->depth[ACC]);
	if (dram_base_ok(s, in, eb) != 0)
		return -1;
	for (uint32_t y = 0; y < in->y_size; y++) {
		uint64_t addr = ((uint64_t)in->dram_base + (uint64_t)y * in->x_stride) * eb;
		if (!dram(s, addr, (uint64_t)in->x_size * eb, y))
			return -1;
	}
	if (s->check)
		for (uint32_t e = in->sram_base; e < end; e++)
			if (sh_read(s, ACC, e) != 0)
				return -1;
	for (uint32_t y = 0; y < in->y_size; y++) {
		uint64_t addr = ((uint64_t)in->dram_base + (uint64_t)y * in->x_stride) * eb;
		unsigned char *p = dram(s, addr, (uint64_t)in->x_size * eb, y);
		const int32_t *a = s->acc + (in->sram_base + (size_t)y * in->x_size) * lanes;
		/* keep the low 8 bits of each lane (no saturation) */
		for (size_t k = 0; k < in->x_size * lanes; k++)
			p[k] = (unsigned char)((uint32_t)a[k] & 0xff);
	}
	return 0;
}

/* ---- GEMM and ALU ---------------------------------------------------------------------- */

/* the index of one operand over the loop nest: base + y*fo + x*fi */
typedef struct {
	uint32_t fo, fi;
	int mem;
	const char *what;
} Operand;

/* checks that every index of op stays below the depth of its SRAM: the
 * largest is at the last iteration of both loops */
static int
check_range(const VtaSim *s, const txrt_vta_insn *in, const Operand *op, int which)
{
	for (uint32_t u = in->uop_bgn; u < in->uop_end; u++) {
		uint32_t idx[3];
		txrt_vta_uop_decode(s->uop[u], &idx[0], &idx[1], &idx[2]);
		uint64_t max = idx[which] + (uint64_t)(in->iter_out - 1) * op->fo +
		    (uint64_t)(in->iter_in - 1) * op->fi;
		if (max >= s->depth[op->mem])
			return vta_error(s, "%s index %" PRIu64 " out of range (depth %" PRIu32 "), at uop "
			    "%" PRIu32 " (%s %" PRIu32 ") in iteration %" PRIu32 ",%" PRIu32,
			    vta_mem_names[op->mem], max, s->depth[op->mem], u, op->what, idx[which],
			    in->iter_out - 1, in->iter_in - 1);
	}
	return 0;
}

/* acc[j] += sum_k inp[k] * wgt[j][k], for the default 1x16x16 shape */
static inline void
gemm_1x16x16(int32_t *restrict acc, const int8_t *restrict inp, const int8_t *restrict wgt)
{
	int32_t a[16];

	for (int k = 0; k < 16; k++)
		a[k] = inp[k];
	for (int j = 0; j < 16; j++) {
		int32_t sum = 0;   /* 16 products of int8: no overflow */
		for (int k = 0; k < 16; k++)
			sum += a[k] * wgt[16 * j + k];
		acc[j] = s32((uint32_t)acc[j] + (uint32_t)sum);
	}
}

/* any shape: acc[b][j] += sum_k inp[b][k] * wgt[j][k] */
static void
gemm_any(const txrt_vta_config *c, int32_t *acc, const int8_t *inp, const int8_t *wgt)
{
	for (int b = 0; b < c->batch; b++)
		for (int j = 0; j < c->block_out; j++) {
			int32_t sum = 0;   /* block_in <= 4096: no overflow */
			for (int k = 0; k < c->block_in; k++)
				sum += inp[b * c->block_in + k] * wgt[j * c->block_in + k];
			int32_t *a = &acc[b * c->block_out + j];
			*a = s32((uint32_t)*a + (uint32_t)sum);
		}
}

/* one ALU lane; shifts take the amount mod 32 (what fsim does on x86) */
static int32_t
alu(int op, int32_t a, int32_t b)
{
	unsigned sh;

	switch (op) {
	case TXRT_VTA_ALU_MIN: return a < b ? a : b;
	case TXRT_VTA_ALU_MAX: return a > b ? a : b;
	case TXRT_VTA_ALU_ADD: return s32((uint32_t)a + (uint32_t)b);
	case TXRT_VTA_ALU_MUL: return s32((uint32_t)a * (uint32_t)b);
	default:   /* SHR: arithmetic right shift, left for a negative amount */
		if (b >= 0) {
			sh = (unsigned)b & 31;
			return a >= 0 ? a >> sh : ~(~a >> sh);
		}
		sh = (0u - (uint32_t)b) & 31;
		return s32((uint32_t)a << sh);
	}
}

/* The hardware's pipelined GEMM and ALU read acc, compute and write it
 * back without checking that a micro-op reads what one of the two before
 * it is still writing (VTA-ISA.md, the runtime's hazard rule): the micro-op
 * at (u, y, x) may not read or write an acc element (d, or sr for an ALU
 * tensor operand) that one of the two micro-ops before it in execution
 * order writes.  The reset form only writes, and is not checked. */
static int
pipeline_hazard(const VtaSim *s, const txrt_vta_insn *in, const uint64_t recent[2],
    const uint32_t rec_u[2], uint32_t d, uint32_t sr, uint32_t u, uint32_t y, uint32_t x)
{
	for (int k = 0; k < 2; k++) {
		if (recent[k] == UINT64_MAX || (recent[k] != d && recent[k] != sr))
			continue;
		return vta_error(s, "pipeline hazard: the micro-op %" PRIu32 " in iteration %" PRIu32
		    ",%" PRIu32 " %s ACC element %" PRIu64 ", which micro-op %" PRIu32 ", %d before it, "
		    "writes (the hardware does not wait for a write to acc before a read of it "
		    "two micro-ops later: order the micro-ops so that they alternate among at "
		    "least three outputs)", u, y, x, recent[k] == d ? "updates" : "reads", recent[k],
		    rec_u[k], k + 1);
	}
	(void)in;
	return 0;
}

static int
loops(VtaSim *s, const txrt_vta_insn *in)
{
	const txrt_vta_config *c = s->cfg;
	int gemm = in->opcode == TXRT_VTA_GEMM, reset = gemm && in->reset;
	int use_src = gemm ? !reset : !in->use_imm;
	const Operand dst = { in->dst_out, in->dst_in, ACC, "dst" };
	const Operand src = { in->src_out, in->src_in, gemm ? INP : ACC, "src" };
	const Operand wgt = { in->wgt_out, in->wgt_in, WGT, "wgt" };

	if (in->uop_end > s->depth[UOP])
		return vta_error(s, "uop_end %" PRIu32 " out of range (depth %" PRIu32 ")", in->uop_end,
		    s->depth[UOP]);
	if (in->iter_out == 0 || in->iter_in == 0 || in->uop_bgn >= in->uop_end)
		return 0;
	if (s->check)
		for (uint32_t u = in->uop_bgn; u < in->uop_end; u++)
			if (sh_read(s, UOP, u) != 0)
				return -1;
	if (check_range(s, in, &dst, 0) != 0 || (use_src && check_range(s, in, &src, 1) != 0) ||
	    (gemm && !reset && check_range(s, in, &wgt, 2) != 0))
		return -1;

	/* pass 0: the shadows and the pipeline hazards, pass 1: the
	 * arithmetic, both in execution order */
	size_t lanes = (size_t)c->batch * (size_t)c->block_out;
	int fast = c->batch == 1 && c->block_in == 16 && c->block_out == 16;
	const int32_t *acc = s->acc;
	for (int pass = s->check ? 0 : 1; pass < 2; pass++) {
		/* the acc elements the last two micro-ops wrote, and where */
		uint64_t recent[2] = { UINT64_MAX, UINT64_MAX };
		uint32_t rec_u[2] = { 0, 0 };
		for (uint32_t y = 0; y < in->iter_out; y++)
			for (uint32_t x = 0; x < in->iter_in; x++)
				for (uint32_t u = in->uop_bgn; u < in->uop_end; u++) {
					uint32_t d, sr, w;
					txrt_vta_uop_decode(s->uop[u], &d, &sr, &w);
					d += y * dst.fo + x * dst.fi;
					sr += y * src.fo + x * src.fi;
					w += y * wgt.fo + x * wgt.fi;
					if (pass == 0) {
						if (!reset && pipeline_hazard(s, in, recent, rec_u, d,
						    !gemm && use_src ? sr : UINT32_MAX, u, y, x) != 0)
							return -1;
						recent[1] = recent[0];
						rec_u[1] = rec_u[0];
						recent[0] = d;
						rec_u[0] = u;
						if ((!reset && sh_read(s, ACC, d) != 0) ||
						    (use_src && sh_read(s, src.mem, sr) != 0) ||
						    (gemm && !reset && sh_read(s, WGT, w) != 0) ||
						    sh_write(s, ACC, d) != 0)
							return -1;
						continue;
					}
					int32_t *a = s->acc + d * lanes;
					if (reset)
						memset(a, 0, lanes * sizeof *a);
					else if (gemm && fast)
						gemm_1x16x16(a, s->inp + sr * 16, s->wgt + w * 256);
					else if (gemm)
						gemm_any(c, a, s->inp + sr * (size_t)c->inp_elem_bytes,
						    s->wgt + w * (size_t)c->wgt_elem_bytes);
					else if (in->use_imm)
						for (size_t k = 0; k < lanes; k++)
							a[k] = alu(in->alu_op, a[k], in->imm);
					else
						for (size_t k = 0; k < lanes; k++)
							a[k] = alu(in->alu_op, a[k], acc[sr * lanes + k]);
				}
	}
	return 0;
}

int
vta_exec(VtaSim *s)
{
	const txrt_vta_insn *in = &s->insn[s->cur];

	switch (in->opcode) {
	case TXRT_VTA_LOAD:
		return in->x_size ? load(s, in) : 0;
	case TXRT_VTA_STORE:
		return in->x_size ? store(s, in) : 0;
	case TXRT_VTA_GEMM:
	case TXRT_VTA_ALU:
		return loops(s, in);
	default:
		return 0;
	}
}
