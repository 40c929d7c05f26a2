/* vta_sim.c: the core of libtxrt's VTA simulator: the stream decoded and
 * checked instruction by instruction, the scheduler of the load, compute
 * and store modules, their four token queues, the checks on the stream as
 * a whole and the cycle model.  vta_run.c calls it; vta_exec.c executes
 * each instruction.
 *
 * A run first decodes the stream and checks each instruction alone (an
 * opcode, memory type or ALU operation that does not exist, a token flag
 * its module does not have, a padded STORE).  Then the modules run their
 * instructions in program order, each one atomically: an instruction
 * whose pops all have a token takes them, executes (vta_exec.c) and
 * pushes.  Which ready module goes next is the cycle model's choice in
 * the deterministic run: the instruction that starts first, at the later
 * of its module's free time and the end of the instructions that pushed
 * its tokens (ties in program order); start times never decrease, so this
 * is an exact event simulation.  The extra runs of the interleavings mode
 * pick a ready module at random instead.  With no module ready and
 * instructions left, the stream is deadlocked.
 *
 * The checks that concern the stream as a whole use happens-before as the
 * tokens define it (vector clocks, vta_sim.h), never the order one run
 * happened to take, so they report the same on every interleaving: the
 * races and unwritten reads of vta_exec.c; FINISH last (after it in the
 * compute module nothing, and every load and store instruction ordered
 * before it); no token left on a queue; at most max_tokens outstanding
 * (push j must come after pop j - max_tokens, else some schedule holds
 * max_tokens + 1); and the fetch-order hang of VTA-ISA.md section 4
 * (matched statically: the k-th push of a queue feeds its k-th pop).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vta_sim.h"

const char *const vta_module_names[NMODULES] = { "load", "compute", "store" };
const char *const vta_mem_names[6] = { "UOP", "WGT", "INP", "ACC", "OUT", "ACC8" };

enum { MLOAD = TXRT_VTA_MOD_LOAD, MCOMP = TXRT_VTA_MOD_COMPUTE, MSTORE = TXRT_VTA_MOD_STORE };

/* the token queues, named as in vta.cc */
enum { L2G, G2L, G2S, S2G };
static const struct {
	int from, to;
	const char *name;
} queues[VTA_NQUEUES] = {
	{ MLOAD, MCOMP, "l2g" }, { MCOMP, MLOAD, "g2l" },
	{ MCOMP, MSTORE, "g2s" }, { MSTORE, MCOMP, "s2g" },
};

typedef struct {
	uint64_t t;                        /* when the pushing instruction ended */
	uint32_t vc[NMODULES];             /* its module's clock */
} Token;

/* one run of a stream */
typedef struct {
	const VtaProg *p;
	VtaSim s;
	Token *tok[VTA_NQUEUES];
	uint32_t *pop_ord[VTA_NQUEUES];        /* per pop: the popping instruction's ordinal */
	size_t pushed[VTA_NQUEUES], popped[VTA_NQUEUES];
	size_t pc[NMODULES];
	uint64_t free[NMODULES], busy[NMODULES];
	uint32_t clock[NMODULES][NMODULES];
	int finished;
	size_t finish;                     /* the first FINISH that ran ... */
	uint32_t finish_vc[NMODULES];      /* ... its clock ... */
	uint64_t finish_end;               /* ... and when it ended */
	uint64_t end, gemm_cycles;
	int random;
	uint64_t rng;
} Run;

/* ---- messages ------------------------------------------------------------------- */

const char *
vta_insn_name(const txrt_vta_insn *insn, size_t i, char *buf, size_t n)
{
	char text[160];

	txrt_vta_format(&insn[i], text, sizeof text);
	snprintf(buf, n, "insn %zu (%s)", i, text);
	return buf;
}

static int
verror(const txrt_vta_insn *insn, size_t i, const char *fmt, va_list ap)
{
	char name[200], msg[400];

	vsnprintf(msg, sizeof msg, fmt, ap);
	txrt_set_error("vta: %s: %s", vta_insn_name(insn, i, name, sizeof name), msg);
	return -1;
}

int
vta_error(const VtaSim *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(s->insn, s->cur, fmt, ap);
	va_end(ap);
	return -1;
}

static int insn_error(const VtaProg *p, size_t i, const char *fmt, ...) TXRT_PRINTF(3, 4);

static int
insn_error(const VtaProg *p, size_t i, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(p->insn, i, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the stream ------------------------------------------------------------------- */

static uint64_t
visits(const txrt_vta_insn *in)
{
	return in->uop_end > in->uop_bgn ?
	    (uint64_t)in->iter_out * in->iter_in * (in->uop_end - in->uop_bgn) : 0;
}

/* the cycle model */
static uint64_t
duration(const txrt_vta_config *c, const txrt_vta_insn *in)
{
	uint64_t bytes;

	switch (in->opcode) {
	case TXRT_VTA_LOAD:
	case TXRT_VTA_STORE:
		if (in->x_size == 0)
			return 1;
		bytes = (uint64_t)in->x_size * in->y_size * vta_dram_elem_bytes(c, in->mem_type);
		return (uint64_t)c->dma_latency + (bytes + (uint64_t)c->dma_bytes_per_cycle - 1) /
		    (uint64_t)c->dma_bytes_per_cycle;
	case TXRT_VTA_GEMM:
		return (uint64_t)c->insn_overhead + (uint64_t)c->gemm_cycles_per_uop * visits(in);
	case TXRT_VTA_ALU:
		return (uint64_t)c->insn_overhead + (uint64_t)c->alu_cycles_per_uop * visits(in);
	default:
		return 1;
	}
}

/* the queues instruction i pops and pushes; -1 for a flag its module lacks */
static int
token_masks(const VtaProg *p, size_t i, int m, uint8_t *pop, uint8_t *push)
{
	const txrt_vta_insn *in = &p->insn[i];
	static const char *const why[NMODULES] = {
		"the load module has tokens only with the compute module, its next (pop_next, push_next)",
		"",
		"the store module has tokens only with the compute module, its prev (pop_prev, push_prev)",
	};

	*pop = *push = 0;
	if ((m == MLOAD && (in->pop_prev || in->push_prev)) ||
	    (m == MSTORE && (in->pop_next || in->push_next)))
		return insn_error(p, i, "%s on the %s module: %s",
		    in->pop_prev && m == MLOAD ? "pop_prev" : in->push_prev && m == MLOAD ? "push_prev" :
		    in->pop_next ? "pop_next" : "push_next", vta_module_names[m], why[m]);
	switch (m) {
	case MLOAD:
		*pop = (uint8_t)(in->pop_next << G2L);
		*push = (uint8_t)(in->push_next << L2G);
		break;
	case MCOMP:
		*pop = (uint8_t)(in->pop_prev << L2G | in->pop_next << S2G);
		*push = (uint8_t)(in->push_prev << G2L | in->push_next << G2S);
		break;
	default:
		*pop = (uint8_t)(in->pop_prev << G2S);
		*push = (uint8_t)(in->push_prev << S2G);
		break;
	}
	return 0;
}

/* what an instruction alone must satisfy */
static int
insn_ok(const VtaProg *p, size_t i)
{
	const txrt_vta_insn *in = &p->insn[i];

	switch (in->opcode) {
	case TXRT_VTA_LOAD:
		if (in->x_size && (in->mem_type > TXRT_VTA_MEM_ACC8 || in->mem_type == TXRT_VTA_MEM_OUT))
			return insn_error(p, i, "LOAD of memory type %d: LOAD takes UOP, WGT, INP, ACC "
			    "or ACC8", in->mem_type);
		return 0;
	case TXRT_VTA_STORE:
		if (in->x_size && in->mem_type != TXRT_VTA_MEM_OUT)
			return insn_error(p, i, "STORE of memory type %d: STORE takes OUT (4) only",
			    in->mem_type);
		if (in->x_size && (in->y_pad0 || in->y_pad1 || in->x_pad0 || in->x_pad1))
			return insn_error(p, i, "a STORE cannot pad");
		return 0;
	case TXRT_VTA_ALU:
		if (in->alu_op > TXRT_VTA_ALU_MUL)
			return insn_error(p, i, "ALU operation %d does not exist (MIN, MAX, ADD, SHR, MUL)",
			    in->alu_op);
		return 0;
	case TXRT_VTA_GEMM:
	case TXRT_VTA_FINISH:
		return 0;
	default:
		return insn_error(p, i, "opcode %d does not exist", in->opcode);
	}
}

void
vta_prog_free(VtaProg *p)
{
	free(p->insn);
	free(p->mod);
	free(p->pops);
	free(p->pushes);
	free(p->ord);
	for (int m = 0; m < NMODULES; m++)
		free(p->mlist[m]);
	for (int q = 0; q < VTA_NQUEUES; q++) {
		free(p->qpush[q]);
		free(p->qpop[q]);
	}
	free(p->reg);
	free(p->out);
}

int
vta_oom(void)
{
	txrt_set_error("vta: out of memory");
	return -1;
}

static int
by_phys(const void *a, const void *b)
{
	const txrt_vta_region *x = a, *y = b;

	return x->phys < y->phys ? -1 : x->phys > y->phys;
}

static int
prog_regions(VtaProg *p, const txrt_vta_region *regions, int nregions)
{
	if (nregions < 0 || (nregions > 0 && !regions)) {
		txrt_set_error("vta: %d regions at %p", nregions, (const void *)regions);
		return -1;
	}
	p->nreg = nregions;
	p->reg = malloc(((size_t)nregions + 1) * sizeof *p->reg);
	p->out = calloc((size_t)nregions + 1, 1);
	if (!p->reg || !p->out)
		return vta_oom();
	if (nregions > 0)
		memcpy(p->reg, regions, (size_t)nregions * sizeof *p->reg);
	qsort(p->reg, (size_t)nregions, sizeof *p->reg, by_phys);
	for (int i = 0; i < nregions; i++) {
		const txrt_vta_region *r = &p->reg[i];
		const char *name = r->name ? r->name : "?";
		if (r->phys == 0 || r->phys % 4096 != 0 || r->phys + r->bytes < r->phys)
			txrt_set_error("vta: region '%s' at 0x%" PRIx64 ": not a nonzero multiple of 4096",
			    name, r->phys);
		else if (r->bytes > 0 && !r->host)
			txrt_set_error("vta: region '%s' has no host memory", name);
		else if (i > 0 && p->reg[i - 1].phys + p->reg[i - 1].bytes > r->phys)
			txrt_set_error("vta: regions '%s' and '%s' overlap",
			    p->reg[i - 1].name ? p->reg[i - 1].name : "?", name);
		else
			continue;
		return -1;
	}
	return 0;
}

int
vta_prog_build(VtaProg *p, const unsigned char *insns, size_t n, const txrt_vta_region *regions,
    int nregions)
{
	if (prog_regions(p, regions, nregions) != 0)
		return -1;
	if (n > UINT32_MAX - 1) {
		txrt_set_error("vta: %zu instructions are too many", n);
		return -1;
	}
	p->n = n;
	p->insn = malloc((n + 1) * sizeof *p->insn);
	p->mod = malloc(n + 1);
	p->pops = malloc(n + 1);
	p->pushes = malloc(n + 1);
	p->ord = malloc((n + 1) * sizeof *p->ord);
	if (!p->insn || !p->mod || !p->pops || !p->pushes || !p->ord)
		return vta_oom();
	for (size_t i = 0; i < n; i++) {
		txrt_vta_insn *in = &p->insn[i];
		txrt_vta_decode(insns + TXRT_VTA_INSN_BYTES * i, in);
		int m = txrt_vta_module(in);
		p->mod[i] = (uint8_t)m;
		p->ord[i] = (uint32_t)p->mcount[m]++;
		if (insn_ok(p, i) != 0 || token_masks(p, i, m, &p->pops[i], &p->pushes[i]) != 0)
			return -1;
		for (int q = 0; q < VTA_NQUEUES; q++) {
			p->npop[q] += p->pops[i] >> q & 1;
			p->npush[q] += p->pushes[i] >> q & 1;
		}
	}
	for (int m = 0; m < NMODULES; m++)
		if (!(p->mlist[m] = malloc((p->mcount[m] + 1) * sizeof *p->mlist[m])))
			return vta_oom();
	for (int q = 0; q < VTA_NQUEUES; q++) {
		p->qpush[q] = malloc((p->npush[q] + 1) * sizeof *p->qpush[q]);
		p->qpop[q] = malloc((p->npop[q] + 1) * sizeof *p->qpop[q]);
		if (!p->qpush[q] || !p->qpop[q])
			return vta_oom();
	}
	size_t nq[VTA_NQUEUES * 2] = { 0 };
	for (size_t i = 0; i < n; i++) {
		p->mlist[p->mod[i]][p->ord[i]] = (uint32_t)i;
		for (int q = 0; q < VTA_NQUEUES; q++) {
			if (p->pushes[i] >> q & 1)
				p->qpush[q][nq[q]++] = i;
			if (p->pops[i] >> q & 1)
				p->qpop[q][nq[VTA_NQUEUES + q]++] = i;
		}
	}
	/* the regions a STORE writes (the interleavings compare them) */
	for (size_t i = 0; i < n; i++) {
		const txrt_vta_insn *in = &p->insn[i];
		if (in->opcode != TXRT_VTA_STORE || in->x_size == 0)
			continue;
		uint32_t eb = vta_dram_elem_bytes(p->cfg, TXRT_VTA_MEM_OUT);
		for (uint32_t y = 0; y < in->y_size; y++) {
			uint64_t addr = ((uint64_t)in->dram_base + (uint64_t)y * in->x_stride) * eb;
			int r = vta_find_region(p->reg, p->nreg, addr, (uint64_t)in->x_size * eb);
			if (r >= 0)
				p->out[r] = 1;
		}
	}
	return 0;
}

void
vta_prog_stats(const VtaProg *p, txrt_vta_stats *st)
{
	for (size_t i = 0; i < p->n; i++) {
		const txrt_vta_insn *in = &p->insn[i];
		uint64_t bytes = (uint64_t)in->x_size * in->y_size;
		st->insns[in->opcode]++;
		switch (in->opcode) {
		case TXRT_VTA_LOAD:
		case TXRT_VTA_STORE:
			if (in->x_size == 0)
				st->nops++;
			else if (in->opcode == TXRT_VTA_LOAD)
				st->load_bytes[in->mem_type] +=
				    bytes * vta_dram_elem_bytes(p->cfg, in->mem_type);
			else
				st->store_bytes += bytes * vta_dram_elem_bytes(p->cfg, TXRT_VTA_MEM_OUT);
			break;
		case TXRT_VTA_GEMM:
			if (in->reset)
				st->reset_uops += visits(in);
			else
				st->gemm_uops += visits(in);
			break;
		case TXRT_VTA_ALU:
			st->alu_uops += visits(in);
			break;
		}
	}
}

/* ---- running it -------------------------------------------------------------------- */

static void
run_free(Run *r)
{
	vta_sram_free(&r->s);
	for (int q = 0; q < VTA_NQUEUES; q++) {
		free(r->tok[q]);
		free(r->pop_ord[q]);
	}
}

static int
run_init(Run *r, const VtaProg *p, const txrt_vta_region *reg, int random, uint64_t seed)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	r->random = random;
	r->rng = seed;
	r->s.cfg = p->cfg;
	r->s.check = p->check;
	r->s.insn = p->insn;
	for (int m = 0; m < NMODULES; m++)
		r->s.mlist[m] = p->mlist[m];
	r->s.reg = reg;
	r->s.nreg = p->nreg;
	if (vta_sram_init(&r->s) != 0)
		return vta_oom();
	for (int q = 0; q < VTA_NQUEUES; q++) {
		r->tok[q] = malloc((p->npush[q] + 1) * sizeof *r->tok[q]);
		r->pop_ord[q] = malloc((p->npop[q] + 1) * sizeof *r->pop_ord[q]);
		if (!r->tok[q] || !r->pop_ord[q]) {
			run_free(r);
			return vta_oom();
		}
	}
	return 0;
}

static uint64_t
splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* push j on q comes after pop j - max_tokens, or some schedule has more
 * than max_tokens outstanding */
static int
check_capacity(const Run *r, int q, size_t i, const uint32_t *vc)
{
	const VtaProg *p = r->p;
	size_t j = r->pushed[q], max = (size_t)p->cfg->max_tokens;
	char a[200];

	if (j < max)
		return 0;
	size_t k = j - max;
	if (r->popped[q] > k && r->pop_ord[q][k] <= vc[queues[q].to])
		return 0;
	if (k < p->npop[q])
		vta_insn_name(p->insn, p->qpop[q][k], a, sizeof a);
	else
		snprintf(a, sizeof a, "no instruction");
	return insn_error(p, i, "pushes token %zu on %s, but no token orders it after the pop of token "
	    "%zu (by %s): more than %zu tokens can be outstanding on the queue", j + 1, queues[q].name,
	    k + 1, a, max);
}

/* runs the instruction at the head of module m, which starts at `start` */
static int
step(Run *r, int m, uint64_t start)
{
	const VtaProg *p = r->p;
	size_t i = p->mlist[m][r->pc[m]];
	const txrt_vta_insn *in = &p->insn[i];
	uint32_t *vc = r->clock[m];

	vc[m]++;
	for (int q = 0; q < VTA_NQUEUES; q++)
		if (p->pops[i] >> q & 1) {
			const Token *t = &r->tok[q][r->popped[q]];
			for (int o = 0; o < NMODULES; o++)
				if (t->vc[o] > vc[o])
					vc[o] = t->vc[o];
			r->pop_ord[q][r->popped[q]++] = vc[m];
		}
	r->s.cur = i;
	r->s.mod = m;
	r->s.vc = vc;
	if (vta_exec(&r->s) != 0)
		return -1;
	uint64_t d = duration(p->cfg, in), end = start + d;
	for (int q = 0; q < VTA_NQUEUES; q++)
		if (p->pushes[i] >> q & 1) {
			if (p->check && check_capacity(r, q, i, vc) != 0)
				return -1;
			Token *t = &r->tok[q][r->pushed[q]++];
			t->t = end;
			memcpy(t->vc, vc, sizeof t->vc);
		}
	r->free[m] = end;
	r->busy[m] += d;
	r->pc[m]++;
	if (end > r->end)
		r->end = end;
	if (in->opcode == TXRT_VTA_GEMM && !in->reset)
		r->gemm_cycles += (uint64_t)p->cfg->gemm_cycles_per_uop * visits(in);
	if (in->opcode == TXRT_VTA_FINISH && !r->finished) {
		r->finished = 1;
		r->finish = i;
		memcpy(r->finish_vc, vc, sizeof r->finish_vc);
		r->finish_end = end;
	}
	return 0;
}

static int
deadlock(const Run *r)
{
	const VtaProg *p = r->p;
	char msg[1200], name[200];
	const char *sep = "";
	size_t len = (size_t)snprintf(msg, sizeof msg, "vta: deadlock:");

	for (int m = 0; m < NMODULES; m++) {
		if (r->pc[m] == p->mcount[m])
			continue;
		size_t i = p->mlist[m][r->pc[m]];
		int q = 0;
		while (q < VTA_NQUEUES - 1 && !(p->pops[i] >> q & 1 && r->popped[q] == r->pushed[q]))
			q++;
		if (len < sizeof msg)
			len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %s of the %s module "
			    "waits for token %zu on %s%s", sep,
			    vta_insn_name(p->insn, i, name, sizeof name),
			    vta_module_names[m], r->popped[q] + 1, queues[q].name,
			    p->npush[q] <= r->popped[q] ? ", which no instruction pushes" : "");
		sep = ";";
	}
	txrt_set_error("%s", msg);
	return -1;
}

/* runs every instruction; 0, or -1 after an error */
static int
run_stream(Run *r)
{
	const VtaProg *p = r->p;

	for (;;) {
		int best = -1, ready[NMODULES], nready = 0;
		uint64_t start[NMODULES];
		for (int m = 0; m < NMODULES; m++) {
			if (r->pc[m] == p->mcount[m])
				continue;
			size_t i = p->mlist[m][r->pc[m]];
			uint64_t t = r->free[m];
			int ok = 1;
			for (int q = 0; q < VTA_NQUEUES && ok; q++)
				if (p->pops[i] >> q & 1) {
					if (r->popped[q] == r->pushed[q])
						ok = 0;
					else if (r->tok[q][r->popped[q]].t > t)
						t = r->tok[q][r->popped[q]].t;
				}
			if (!ok)
				continue;
			start[m] = t;
			ready[nready++] = m;
			if (best < 0 || t < start[best] ||
			    (t == start[best] && i < p->mlist[best][r->pc[best]]))
				best = m;
		}
		if (nready == 0) {
			for (int m = 0; m < NMODULES; m++)
				if (r->pc[m] < p->mcount[m])
					return deadlock(r);
			return 0;
		}
		int m = r->random ? ready[splitmix(&r->rng) % (uint64_t)nready] : best;
		if (step(r, m, start[m]) != 0)
			return -1;
	}
}

/* the checks once every instruction has run */
static int
run_end_checks(const Run *r)
{
	const VtaProg *p = r->p;
	char a[200];

	for (int q = 0; q < VTA_NQUEUES; q++)
		if (r->pushed[q] > r->popped[q]) {
			txrt_set_error("vta: %zu token%s left on %s at the end of the stream (the last "
			    "pushed by %s): every push needs a pop", r->pushed[q] - r->popped[q],
			    r->pushed[q] - r->popped[q] == 1 ? "" : "s", queues[q].name,
			    vta_insn_name(p->insn, p->qpush[q][p->npush[q] - 1], a, sizeof a));
			return -1;
		}
	if (!r->finished) {
		txrt_set_error("vta: the stream has no FINISH (it must end with one)");
		return -1;
	}
	if (p->ord[r->finish] + 1 < p->mcount[MCOMP])
		return insn_error(p, p->mlist[MCOMP][p->ord[r->finish] + 1], "comes after FINISH "
		    "(insn %zu) in the compute module: FINISH must be the last instruction executed",
		    r->finish);
	for (int m = 0; m < NMODULES; m++)
		if (m != MCOMP && r->finish_vc[m] < p->mcount[m])
			return insn_error(p, p->mlist[m][r->finish_vc[m]], "is not ordered before FINISH "
			    "(insn %zu) by tokens, so it can run after it (end a stream with a %s-module "
			    "instruction that pushes to compute, and a compute NOP that pops before "
			    "FINISH)",
			    r->finish, vta_module_names[m]);
	/* the fetch-order hang: a pop waiting on a push later in the stream
	 * holds its module's queue; the push must be fetched before the
	 * instructions between them overflow it */
	for (int q = 0; q < VTA_NQUEUES; q++) {
		int c = queues[q].to;
		for (size_t k = 0; k < p->npop[q] && k < p->npush[q]; k++) {
			size_t A = p->qpop[q][k], B = p->qpush[q][k];
			if (B < A)
				continue;
			size_t lo = p->ord[A], hi = p->mcount[c];
			while (lo < hi) {   /* the module's instructions before B */
				size_t mid = lo + (hi - lo) / 2;
				if (p->mlist[c][mid] < B)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo - p->ord[A] > (size_t)p->cfg->insn_queue)
				return insn_error(p, A, "waits for token %zu on %s, which %s pushes "
				    "later in the stream: the %zu instructions of the %s module from this "
				    "one up to the push exceed its %d-entry instruction queue, so fetch "
				    "stalls before the push and the hardware hangs", k + 1, queues[q].name,
				    vta_insn_name(p->insn, B, a, sizeof a), lo - p->ord[A],
				    vta_module_names[c], p->cfg->insn_queue);
		}
	}
	return 0;
}

int
vta_sim_run(const VtaProg *p, const txrt_vta_region *reg, int random, uint64_t seed, txrt_vta_stats *st)
{
	Run r;

	if (run_init(&r, p, reg, random, seed) != 0)
		return -1;
	int rc = run_stream(&r);
	if (rc == 0 && p->check)
		rc = run_end_checks(&r);
	if (st) {
		st->cycles = r.finished ? r.finish_end : r.end;
		memcpy(st->busy, r.busy, sizeof st->busy);
		st->gemm_cycles = r.gemm_cycles;
		st->gemm_utilisation = st->cycles ? (double)r.gemm_cycles / (double)st->cycles : 0;
	}
	run_free(&r);
	return rc;
}
