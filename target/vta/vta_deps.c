/* vta_deps.c: dependency tokens between VTA's load, compute and store
 * modules, then the drain and FINISH (TVM's CoProcSync and the runtime's
 * DepPush/DepPop, here on the finished stream).
 *
 * The modules run their own instructions in order and concurrently; a
 * token on one of the four queues (load->compute l2g, compute->load g2l,
 * compute->store g2s, store->compute s2g) orders two instructions of
 * different modules.  The stream is known whole, so the hazards are
 * found exactly, element by element of the on-chip buffers, rather than
 * per loop as TVM does:
 *   RAW  a GEMM reads inp/wgt that a LOAD wrote            (l2g)
 *   WAR  a LOAD overwrites inp/wgt that a GEMM still reads (g2l)
 *   RAW  a STORE reads acc that GEMM or ALU wrote          (g2s)
 *   WAR  GEMM, ALU or LOAD ACC overwrite acc a STORE reads (s2g)
 * For each, an instruction waits (pops) for the latest instruction of the
 * other module it depends on, which pushes; a module never waits twice
 * for what it already waited for, so on every queue the k-th push meets
 * the k-th pop, every pop refers to an earlier instruction in program
 * order (no deadlock, whatever the queues' depths), and no token is left
 * over.  Loop-carried hazards, initial credits and virtual threads need
 * nothing special: the stream is the loops unrolled, and two virtual
 * threads' buffers do not overlap, so one thread's loads wait only for
 * its own GEMMs.  At the end a compute no-op waits for the last load and
 * the last store, then FINISH (VTA-ISA.md 4, point 5).
 */
#include <string.h>

#include "target/vta/vta.h"

typedef struct {
	int64_t *load_w[VTA_NSRAM];     /* last load-module writer of each element */
	int64_t *comp_r[VTA_NSRAM];     /* last compute reader */
	int64_t *comp_w[VTA_NSRAM];     /* last compute writer */
	int64_t *store_r[VTA_NSRAM];    /* last store reader */
	int64_t depth[VTA_NSRAM];
} Track;

static int64_t
latest(int64_t *a, int64_t lo, int64_t hi, int64_t depth)
{
	int64_t m = -1;
	if (lo < 0)
		lo = 0;
	if (hi >= depth)
		hi = depth - 1;
	for (int64_t e = lo; e <= hi; e++)
		m = a[e] > m ? a[e] : m;
	return m;
}

static void
mark(int64_t *a, int64_t lo, int64_t hi, int64_t depth, int64_t i)
{
	if (lo < 0)
		lo = 0;
	if (hi >= depth)
		hi = depth - 1;
	for (int64_t e = lo; e <= hi; e++)
		a[e] = i;
}

static VtaInsn *
nop_compute(VtaStream *s)
{
	VtaInsn *in = ARENA_PUSH(ir_arena, s->insn, s->ninsn, s->capinsn);
	memset(in, 0, sizeof *in);
	in->kernel = -1;
	in->what = "drain";
	in->in.opcode = TXRT_VTA_LOAD;
	in->in.mem_type = TXRT_VTA_MEM_UOP;
	return in;
}

/* Back pressure: after every SYNC tokens a module takes from a queue, the
 * other module's next instruction waits for the one that took it, so no
 * module runs more than about SYNC tokens ahead of the one it feeds (VTA's
 * queues hold 255; a stream where the compute module never waits for the
 * store module would otherwise push a token per STORE without bound). */
enum { SYNC = 64 };

void
vta_deps(VtaStream *s)
{
	const txrt_vta_config *c = vta_cfg();
	Track T;
	T.depth[VTA_SRAM_INP] = c->inp_depth;
	T.depth[VTA_SRAM_WGT] = c->wgt_depth;
	T.depth[VTA_SRAM_ACC] = c->acc_depth;
	for (int m = 0; m < VTA_NSRAM; m++) {
		int64_t **arr[4] = { &T.load_w[m], &T.comp_r[m], &T.comp_w[m], &T.store_r[m] };
		for (int k = 0; k < 4; k++) {
			*arr[k] = arena_alloc(ir_arena, (size_t)T.depth[m] * sizeof **arr[k]);
			for (int64_t e = 0; e < T.depth[m]; e++)
				(*arr[k])[e] = -1;
		}
	}
	/* what each module has waited for on each queue */
	int64_t c_l2g = -1, l_g2l = -1, s_g2s = -1, c_s2g = -1;
	/* pops per queue, and what the other module's next instruction must
	 * wait for (back pressure; -1: nothing) */
	int64_t n_l2g = 0, n_g2l = 0, n_g2s = 0, n_s2g = 0;
	int64_t sync_load = -1, sync_comp_l = -1, sync_comp_s = -1, sync_store = -1;
	int64_t last_load = -1, last_store = -1;
	int a = VTA_SRAM_ACC;
	for (int64_t i = 0; i < s->ninsn; i++) {
		VtaInsn *in = &s->insn[i];
		VtaFoot *f = &in->foot;
		int mod = txrt_vta_module(&in->in);
		if (mod == TXRT_VTA_MOD_LOAD) {
			last_load = i;
			int64_t need = sync_load;
			sync_load = -1;
			for (int m = VTA_SRAM_INP; m <= VTA_SRAM_WGT; m++)
				if (f->wlo[m] <= f->whi[m]) {
					int64_t x = latest(T.comp_r[m], f->wlo[m], f->whi[m], T.depth[m]);
					need = x > need ? x : need;
				}
			if (need > l_g2l) {
				s->insn[need].in.push_prev = 1;
				in->in.pop_next = 1;
				l_g2l = need;
				if (++n_g2l % SYNC == 0)
					sync_comp_l = i;
			}
			for (int m = VTA_SRAM_INP; m <= VTA_SRAM_WGT; m++)
				if (f->wlo[m] <= f->whi[m])
					mark(T.load_w[m], f->wlo[m], f->whi[m], T.depth[m], i);
		} else if (mod == TXRT_VTA_MOD_COMPUTE) {
			int64_t need = sync_comp_l;
			sync_comp_l = -1;
			for (int m = VTA_SRAM_INP; m <= VTA_SRAM_WGT; m++)
				if (f->rlo[m] <= f->rhi[m]) {
					int64_t x = latest(T.load_w[m], f->rlo[m], f->rhi[m], T.depth[m]);
					need = x > need ? x : need;
				}
			if (need > c_l2g) {
				s->insn[need].in.push_next = 1;
				in->in.pop_prev = 1;
				c_l2g = need;
				if (++n_l2g % SYNC == 0)
					sync_load = i;
			}
			int64_t x = sync_comp_s;
			sync_comp_s = -1;
			if (f->wlo[a] <= f->whi[a]) {
				int64_t y = latest(T.store_r[a], f->wlo[a], f->whi[a], T.depth[a]);
				x = y > x ? y : x;
			}
			if (x > c_s2g) {
				s->insn[x].in.push_prev = 1;
				in->in.pop_next = 1;
				c_s2g = x;
				if (++n_s2g % SYNC == 0)
					sync_store = i;
			}
			for (int m = VTA_SRAM_INP; m <= VTA_SRAM_WGT; m++)
				if (f->rlo[m] <= f->rhi[m])
					mark(T.comp_r[m], f->rlo[m], f->rhi[m], T.depth[m], i);
			if (f->wlo[a] <= f->whi[a])
				mark(T.comp_w[a], f->wlo[a], f->whi[a], T.depth[a], i);
		} else {
			last_store = i;
			int64_t x = sync_store;
			sync_store = -1;
			if (f->rlo[a] <= f->rhi[a]) {
				int64_t y = latest(T.comp_w[a], f->rlo[a], f->rhi[a], T.depth[a]);
				x = y > x ? y : x;
			}
			if (x > s_g2s) {
				s->insn[x].in.push_next = 1;
				in->in.pop_prev = 1;
				s_g2s = x;
				if (++n_g2s % SYNC == 0)
					sync_comp_s = i;
			}
			if (f->rlo[a] <= f->rhi[a])
				mark(T.store_r[a], f->rlo[a], f->rhi[a], T.depth[a], i);
		}
	}
	/* the drain: the compute module waits for the last load and store */
	bool wl = last_load > c_l2g, ws = last_store > c_s2g;
	if (wl)
		s->insn[last_load].in.push_next = 1;
	if (ws)
		s->insn[last_store].in.push_prev = 1;
	if (wl || ws) {
		VtaInsn *d = nop_compute(s);
		d->in.pop_prev = wl;
		d->in.pop_next = ws;
	}
	VtaInsn *fin = ARENA_PUSH(ir_arena, s->insn, s->ninsn, s->capinsn);
	memset(fin, 0, sizeof *fin);
	fin->kernel = -1;
	fin->what = "end";
	fin->in.opcode = TXRT_VTA_FINISH;
}
