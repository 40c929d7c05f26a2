/* vta_run.c: txrt_vta_run, the VTA half's entry point: the options (and
 * the environment variables that stand in for them), the configuration
 * table's checks, the device hook that hands streams to a real VTA, the
 * interleavings mode around the simulator's runs (vta_sim.c), and the
 * statistics table.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vta_sim.h"

static int
config_ok(const txrt_vta_config *c)
{
	const char *why = NULL;

	if (c->inp_bits != 8 || c->wgt_bits != 8 || c->acc_bits != 32)
		why = "the simulator runs only int8 inputs and weights and int32 accumulators";
	else if (c->batch < 1 || c->block_in < 1 || c->block_out < 1 || c->block_in > 4096 ||
	    c->batch * c->block_out > 4096 || c->block_out * c->block_in > 65536)
		why = "batch, block_in and block_out must be 1..4096 (block_out*block_in at most 65536)";
	else if (c->inp_elem_bytes != c->batch * c->block_in ||
	    c->wgt_elem_bytes != c->block_out * c->block_in ||
	    c->acc_elem_bytes != 4 * c->batch * c->block_out ||
	    c->out_elem_bytes != c->batch * c->block_out || c->uop_elem_bytes != 4)
		why = "element bytes disagree with batch, block_in and block_out";
	else if (c->uop_depth < 1 || c->inp_depth < 1 || c->wgt_depth < 1 || c->acc_depth < 1 ||
	    c->uop_depth > (1 << 24) || c->inp_depth > (1 << 24) || c->wgt_depth > (1 << 24) ||
	    c->acc_depth > (1 << 24))
		why = "a depth is not 1..2^24";
	else if (c->max_tokens < 1 || c->insn_queue < 1 || c->dma_bytes_per_cycle < 1 ||
	    c->dma_latency < 0 || c->gemm_cycles_per_uop < 0 || c->alu_cycles_per_uop < 0 ||
	    c->insn_overhead < 0)
		why = "max_tokens, insn_queue and dma_bytes_per_cycle must be positive, the other "
		    "cycle counts not negative";
	if (why)
		txrt_set_error("vta: bad configuration: %s", why);
	return why ? -1 : 0;
}

static pthread_mutex_t device_mu = PTHREAD_MUTEX_INITIALIZER;
static txrt_vta_device device;
static int have_device;

void
txrt_vta_set_device(const txrt_vta_device *dev)
{
	pthread_mutex_lock(&device_mu);
	have_device = dev != NULL && dev->run != NULL;
	if (have_device)
		device = *dev;
	pthread_mutex_unlock(&device_mu);
}

const char *
txrt_vta_device_name(void)
{
	const char *name = "simulator";

	pthread_mutex_lock(&device_mu);
	if (have_device)
		name = device.name ? device.name : "device";
	pthread_mutex_unlock(&device_mu);
	return name;
}

static int
run_device(const txrt_vta_device *dev, const unsigned char *insns, size_t ninsn,
    const txrt_vta_region *regions, int nregions, txrt_vta_stats *stats)
{
	txrt_vta_insn in;

	for (size_t i = 0; stats && i < ninsn; i++) {
		txrt_vta_decode(insns + TXRT_VTA_INSN_BYTES * i, &in);
		if (in.opcode <= TXRT_VTA_ALU)
			stats->insns[in.opcode]++;
		if ((in.opcode == TXRT_VTA_LOAD || in.opcode == TXRT_VTA_STORE) && in.x_size == 0)
			stats->nops++;
	}
	txrt_clear_error();
	int rc = dev->run(dev->ctx, insns, ninsn, regions, nregions);
	if (rc == 0)
		return 0;
	if (txrt_last_error()[0] == '\0')
		txrt_set_error("vta: device '%s' failed (%d)", dev->name ? dev->name : "device", rc);
	return TXRT_ERR_VTA;
}

static void
options(const txrt_vta_options *opt, txrt_vta_options *o)
{
	const char *e;

	if (opt) {
		*o = *opt;
		return;
	}
	memset(o, 0, sizeof *o);
	o->check = !((e = getenv("TXRT_VTA_CHECK")) && strcmp(e, "0") == 0);
	if ((e = getenv("TXRT_VTA_INTERLEAVINGS")))
		o->interleavings = atoi(e);
	if ((e = getenv("TXRT_VTA_SEED")))
		o->seed = (unsigned)strtoul(e, NULL, 0);
}

/* ---- the entry point ----------------------------------------------------------------- */

/* the extra runs of the interleavings mode, each on fresh copies of the
 * regions a STORE writes (from init), compared with the first run's */
static int
interleave(const VtaProg *p, const txrt_vta_options *o, unsigned char **init)
{
	txrt_vta_region *reg = malloc(((size_t)p->nreg + 1) * sizeof *reg);
	unsigned char **copy = calloc((size_t)p->nreg + 1, sizeof *copy);
	int rc = 0;

	if (!reg || !copy) {
		free(reg);
		free(copy);
		return vta_oom();
	}
	memcpy(reg, p->reg, (size_t)p->nreg * sizeof *reg);
	for (int i = 0; i < p->nreg && rc == 0; i++)
		if (p->out[i]) {
			if (!(copy[i] = malloc(p->reg[i].bytes + 1)))
				rc = vta_oom();
			reg[i].host = copy[i];
		}
	for (int k = 1; k < o->interleavings && rc == 0; k++) {
		for (int i = 0; i < p->nreg; i++)
			if (p->out[i])
				memcpy(copy[i], init[i], p->reg[i].bytes);
		if (vta_sim_run(p, reg, 1, (uint64_t)o->seed * 0x100000001b3u + (uint64_t)k, NULL) != 0) {
			char msg[512];
			const char *e = txrt_last_error();
			snprintf(msg, sizeof msg, "%s", strncmp(e, "vta: ", 5) == 0 ? e + 5 : e);
			txrt_set_error("vta: interleaving %d of %d (seed %u): %s", k + 1, o->interleavings,
			    o->seed, msg);
			rc = -1;
		}
		for (int i = 0; i < p->nreg && rc == 0; i++) {
			const unsigned char *want = p->reg[i].host, *got = copy[i];
			if (!p->out[i] || memcmp(want, got, p->reg[i].bytes) == 0)
				continue;
			uint64_t b = 0;
			while (want[b] == got[b])
				b++;
			txrt_set_error("vta: interleaving %d of %d (seed %u) gives another result: "
			    "region '%s' byte %" PRIu64 " (DRAM 0x%" PRIx64 ") is 0x%02x, the first run "
			    "wrote 0x%02x: a race between modules that no token orders", k + 1,
			    o->interleavings, o->seed,
			    p->reg[i].name ? p->reg[i].name : "?", b, p->reg[i].phys + b, got[b], want[b]);
			rc = -1;
		}
	}
	for (int i = 0; i < p->nreg; i++)
		free(copy[i]);
	free(copy);
	free(reg);
	return rc;
}

static int
run(const unsigned char *insns, size_t ninsn, const txrt_vta_region *regions, int nregions,
    const txrt_vta_options *opt, txrt_vta_stats *stats)
{
	txrt_vta_options o;
	txrt_vta_device dev;
	VtaProg p;
	unsigned char **init = NULL;
	int rc = -1;

	options(opt, &o);
	if (stats)
		memset(stats, 0, sizeof *stats);
	if (!insns && ninsn > 0) {
		txrt_set_error("vta: %zu instructions at NULL", ninsn);
		return TXRT_ERR_VTA;
	}
	pthread_mutex_lock(&device_mu);
	int on_device = have_device;
	dev = device;
	pthread_mutex_unlock(&device_mu);
	if (on_device)
		return run_device(&dev, insns, ninsn, regions, nregions, stats);

	memset(&p, 0, sizeof p);
	p.cfg = o.config ? o.config : txrt_vta_default_config();
	p.check = o.check != 0;
	if (config_ok(p.cfg) != 0 || vta_prog_build(&p, insns, ninsn, regions, nregions) != 0)
		goto out;
	if (stats)
		vta_prog_stats(&p, stats);
	if (o.interleavings > 1) {   /* what the extra runs start from */
		if (!(init = calloc((size_t)p.nreg + 1, sizeof *init)))
			goto nomem;
		for (int i = 0; i < p.nreg; i++)
			if (p.out[i]) {
				if (!(init[i] = malloc(p.reg[i].bytes + 1)))
					goto nomem;
				memcpy(init[i], p.reg[i].host, p.reg[i].bytes);
			}
	}
	rc = vta_sim_run(&p, p.reg, 0, 0, stats);
	if (rc == 0 && o.interleavings > 1)
		rc = interleave(&p, &o, init);
	goto out;
nomem:
	vta_oom();
out:
	if (init)
		for (int i = 0; i < p.nreg; i++)
			free(init[i]);
	free(init);
	vta_prog_free(&p);
	return rc == 0 ? 0 : TXRT_ERR_VTA;
}

/* The calling thread's runs since txrt_vta_stats_reset, summed. */
static _Thread_local txrt_vta_stats total;

static void
add(txrt_vta_stats *t, const txrt_vta_stats *s)
{
	for (int i = 0; i < 5; i++)
		t->insns[i] += s->insns[i];
	for (int i = 0; i < 6; i++)
		t->load_bytes[i] += s->load_bytes[i];
	for (int i = 0; i < 3; i++)
		t->busy[i] += s->busy[i];
	t->nops += s->nops;
	t->gemm_uops += s->gemm_uops;
	t->alu_uops += s->alu_uops;
	t->reset_uops += s->reset_uops;
	t->store_bytes += s->store_bytes;
	t->cycles += s->cycles;
	t->gemm_cycles += s->gemm_cycles;
	t->gemm_utilisation = t->cycles ? (double)t->gemm_cycles / (double)t->cycles : 0;
}

int
txrt_vta_run(const unsigned char *insns, size_t ninsn, const txrt_vta_region *regions, int nregions,
    const txrt_vta_options *opt, txrt_vta_stats *stats)
{
	txrt_vta_stats s;
	int rc = run(insns, ninsn, regions, nregions, opt, &s);
	if (stats)
		*stats = s;
	if (rc == 0) {
		add(&total, &s);
		const char *e = getenv("TXRT_VTA_STATS");
		if (e && *e && strcmp(e, "0") != 0)
			txrt_vta_print_stats(stderr, &s);
	}
	return rc;
}

void
txrt_vta_stats_get(txrt_vta_stats *out)
{
	*out = total;
}

void
txrt_vta_stats_reset(void)
{
	memset(&total, 0, sizeof total);
}

void
txrt_vta_print_stats(FILE *fp, const txrt_vta_stats *s)
{
	static const char *const ops[5] = { "LOAD", "STORE", "GEMM", "FINISH", "ALU" };
	uint64_t total = 0;

	for (int i = 0; i < 5; i++)
		total += s->insns[i];
	fprintf(fp, "vta: %-18s %" PRIu64 " (", "instructions", total);
	for (int i = 0; i < 5; i++)
		fprintf(fp, "%s%s %" PRIu64, i ? ", " : "", ops[i], s->insns[i]);
	fprintf(fp, "; NOPs %" PRIu64 ")\n", s->nops);
	fprintf(fp, "vta: %-18s GEMM %" PRIu64 ", reset %" PRIu64 ", ALU %" PRIu64 "\n", "uops",
	    s->gemm_uops, s->reset_uops, s->alu_uops);
	fprintf(fp, "vta: %-18s", "bytes loaded");
	for (int i = 0; i < 6; i++)
		if (i != TXRT_VTA_MEM_OUT)
			fprintf(fp, "%s%s %" PRIu64, i ? ", " : " ", vta_mem_names[i], s->load_bytes[i]);
	fprintf(fp, "; stored %" PRIu64 "\n", s->store_bytes);
	fprintf(fp, "vta: %-18s %" PRIu64 " (busy: load %" PRIu64 ", compute %" PRIu64 ", store %"
	    PRIu64 ")\n", "cycles (model)", s->cycles, s->busy[0], s->busy[1], s->busy[2]);
	fprintf(fp, "vta: %-18s %.1f%% (%" PRIu64 " GEMM cycles)\n", "GEMM utilisation",
	    100.0 * s->gemm_utilisation, s->gemm_cycles);
}
