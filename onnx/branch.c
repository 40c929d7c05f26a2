/* branch.c: If, its two branches spliced into the graph.
 *
 * ONNX's If takes a bool of one element and two subgraphs (then_branch,
 * else_branch) that take no inputs, read values of the graphs around
 * them by name, and give the same number of outputs.  txc makes one
 * graph of it all: each branch's nodes go where the If was, tagged with
 * a gate (the condition, the side that runs them, the gate of the If
 * itself), and the If becomes one node per output, If(cond, then, else).
 * import.c then skips the branch not taken when the condition is known
 * when txc compiles, the If being an Identity of the other branch's
 * value; when it is known only at run time both branches are computed
 * and the If is a Where (exported classifiers run a verifier model only
 * when the first score is high: both are cheap next to the features).
 *
 * ONNX gives every value of a model one name, subgraphs included, but
 * two branches may each define a name: a name a branch defines that is
 * taken already is renamed (name__N) in that branch and those inside it.
 */
#include <stdint.h>
#include <string.h>

#include "onnx/onnx.h"

/* a set of interned names (open addressing) */
typedef struct {
	const char **slot;
	size_t cap, n;
} NameSet;

static size_t
name_hash(const char *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 29;
	x *= 0x9E3779B97F4A7C15u;
	return (size_t)(x >> 32);
}

static bool
set_has(const NameSet *s, const char *p)
{
	if (!s->cap)
		return false;
	for (size_t i = name_hash(p) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == p)
			return true;
	return false;
}

static void
set_add(NameSet *s, const char *p)
{
	if (set_has(s, p))
		return;
	if (2 * (s->n + 1) > s->cap) {
		NameSet t = { .cap = s->cap ? 2 * s->cap : 256 };
		t.slot = arena_alloc(perm, t.cap * sizeof *t.slot);
		memset(t.slot, 0, t.cap * sizeof *t.slot);
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				set_add(&t, s->slot[i]);
		*s = t;
	}
	size_t i = name_hash(p) & (s->cap - 1);
	while (s->slot[i])
		i = (i + 1) & (s->cap - 1);
	s->slot[i] = p;
	s->n++;
}

typedef struct {
	OnnxModel *m;
	OnnxNode *nodes; int nnodes, capnodes;
	OnnxTensor *inits; int ninits, capinits;
	int capgates;
	NameSet names;                   /* every name defined so far */
	struct rename { const char *from, *to; } *map;   /* in force (a stack of scopes) */
	int nmap, capmap;
	int fresh;
	char **err;
} Splice;

static const char *
lookup(const Splice *s, const char *name)
{
	for (int i = s->nmap; i-- > 0;)
		if (s->map[i].from == name)
			return s->map[i].to;
	return name;
}

/* a name a branch defines: itself, or a new one where it is taken */
static const char *
define(Splice *s, const char *name)
{
	if (!*name)
		return name;
	if (!set_has(&s->names, name)) {
		set_add(&s->names, name);
		return name;
	}
	const char *fresh;
	do
		fresh = intern_cstr(arena_printf(perm, "%s__%d", name, ++s->fresh));
	while (set_has(&s->names, fresh));
	set_add(&s->names, fresh);
	*ARENA_PUSH(perm, s->map, s->nmap, s->capmap) = (struct rename){ name, fresh };
	return fresh;
}

static bool splice_nodes(Splice *s, const OnnxNode *nodes, int n, int gate);

/* one branch of If node n: its initializers and nodes under a new gate;
 * its outputs' names in out[] */
static bool
splice_branch(Splice *s, const OnnxNode *n, const OnnxModel *b, const char *cond, bool side,
    int gate, const char **out)
{
	OnnxGate *gt = ARENA_PUSH(perm, s->m->gates, s->m->ngates, s->capgates);
	*gt = (OnnxGate){ .cond = cond, .side = side, .parent = gate };
	int mine = s->m->ngates, mark = s->nmap;
	for (int i = 0; i < b->ninits; i++) {
		OnnxTensor *t = ARENA_PUSH(perm, s->inits, s->ninits, s->capinits);
		*t = b->inits[i];
		t->name = define(s, intern_cstr(t->name));
	}
	if (!splice_nodes(s, b->nodes, b->nnodes, mine))
		return false;
	for (int k = 0; k < n->nout; k++)
		out[k] = lookup(s, intern_cstr(b->outputs[k].name));
	s->nmap = mark;
	return true;
}

static bool
splice_if(Splice *s, const OnnxNode *n, int gate)
{
	const char *who = *n->name ? n->name : "(unnamed)";
	OnnxAttr *ta = model_attr((OnnxNode *)n, "then_branch");
	OnnxAttr *ea = model_attr((OnnxNode *)n, "else_branch");
	if (!ta || !ta->g || !ea || !ea->g || n->nin < 1 || !*n->in[0]) {
		*s->err = arena_printf(perm, "at byte %zu: If node '%s' lacks its condition, "
		    "then_branch or else_branch", n->at, who);
		return false;
	}
	if (ta->g->noutputs != n->nout || ea->g->noutputs != n->nout) {
		*s->err = arena_printf(perm, "at byte %zu: If node '%s' has %d outputs; its "
		    "branches give %d and %d", n->at, who, n->nout, ta->g->noutputs,
		    ea->g->noutputs);
		return false;
	}
	const char *cond = gate ? lookup(s, intern_cstr(n->in[0])) : intern_cstr(n->in[0]);
	const char **then = arena_alloc(perm, (size_t)(n->nout + 1) * sizeof *then);
	const char **other = arena_alloc(perm, (size_t)(n->nout + 1) * sizeof *other);
	if (!splice_branch(s, n, ta->g, cond, true, gate, then) ||
	    !splice_branch(s, n, ea->g, cond, false, gate, other))
		return false;
	for (int k = 0; k < n->nout; k++) {
		OnnxNode *d = ARENA_PUSH(perm, s->nodes, s->nnodes, s->capnodes);
		*d = (OnnxNode){ .name = n->name, .op = "If", .domain = "", .at = n->at,
			.gate = gate, .nin = 3, .nout = 1 };
		d->in = arena_alloc(perm, 3 * sizeof *d->in);
		d->in[0] = cond;
		d->in[1] = then[k];
		d->in[2] = other[k];
		d->out = arena_alloc(perm, sizeof *d->out);
		d->out[0] = gate ? define(s, intern_cstr(n->out[k])) : n->out[k];
	}
	return true;
}

static bool
splice_nodes(Splice *s, const OnnxNode *nodes, int n, int gate)
{
	for (int i = 0; i < n; i++) {
		const OnnxNode *nd = &nodes[i];
		if (!strcmp(nd->op, "If") && (!*nd->domain || !strcmp(nd->domain, "ai.onnx"))) {
			if (!splice_if(s, nd, gate))
				return false;
			continue;
		}
		OnnxNode *d = ARENA_PUSH(perm, s->nodes, s->nnodes, s->capnodes);
		*d = *nd;
		d->gate = gate;
		if (!gate)
			continue;
		d->in = arena_alloc(perm, (size_t)(nd->nin + 1) * sizeof *d->in);
		for (int k = 0; k < nd->nin; k++)
			d->in[k] = lookup(s, intern_cstr(nd->in[k]));
		d->out = arena_alloc(perm, (size_t)(nd->nout + 1) * sizeof *d->out);
		for (int k = 0; k < nd->nout; k++)
			d->out[k] = define(s, intern_cstr(nd->out[k]));
	}
	return true;
}

bool
branch_splice(OnnxModel *m, char **err)
{
	bool any = false;
	for (int i = 0; i < m->nnodes && !any; i++)
		any = !strcmp(m->nodes[i].op, "If");
	if (!any)
		return true;
	Splice s = { .m = m, .err = err };
	for (int i = 0; i < m->ninputs; i++)
		set_add(&s.names, intern_cstr(m->inputs[i].name));
	for (int i = 0; i < m->ninits; i++) {
		set_add(&s.names, intern_cstr(m->inits[i].name));
		*ARENA_PUSH(perm, s.inits, s.ninits, s.capinits) = m->inits[i];
	}
	for (int i = 0; i < m->nnodes; i++)
		for (int k = 0; k < m->nodes[i].nout; k++)
			set_add(&s.names, intern_cstr(m->nodes[i].out[k]));
	if (!splice_nodes(&s, m->nodes, m->nnodes, 0))
		return false;
	m->nodes = s.nodes;
	m->nnodes = s.nnodes;
	m->inits = s.inits;
	m->ninits = s.ninits;
	return true;
}

bool
branch_skipped(const OnnxModel *m, const OnnxNode *n,
    int (*known)(void *ctx, const char *name), void *ctx)
{
	for (int gi = n->gate; gi > 0 && gi <= m->ngates; gi = m->gates[gi - 1].parent) {
		int v = known(ctx, m->gates[gi - 1].cond);
		if (v == -2 || (v >= 0 && v != (int)m->gates[gi - 1].side))
			return true;
	}
	return false;
}
