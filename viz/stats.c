/* stats.c: from a raw trace to what txc viz shows and prints.
 *
 * viz_finish gives each stage tensor its box (the union of its
 * allocations: a compute_at stage's small buffers all lie inside it),
 * turns coordinates into row-major elements of that box, sorts the events
 * by tick (a stable sort keeps program order within a tick) and counts,
 * per tensor: elements computed (stores outside a reduction's update)
 * against the minimum (distinct elements stored), updates, loads made by
 * the statements that store it (loads per store), loads from it, and the
 * peak bytes its allocations hold at once on the trace's clock, where
 * parallel threads' buffers are live together.  --stats and --dump-trace
 * print them as text for tests and terminals.
 */
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"

static int64_t
box_elems(VizTensor *v)
{
	int64_t n = 1;
	for (int d = 0; d < v->ndims; d++)
		n *= v->ext[d];
	return n;
}

/* Stable merge sort of the events by tick. */
static void
sort_events(VizEvent *ev, VizEvent *tmp, int64_t n)
{
	if (n < 2)
		return;
	int64_t h = n / 2;
	sort_events(ev, tmp, h);
	sort_events(ev + h, tmp, n - h);
	if (ev[h - 1].tick <= ev[h].tick)
		return;
	int64_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = ev[j].tick < ev[i].tick ? ev[j++] : ev[i++];
	while (i < h)
		tmp[k++] = ev[i++];
	while (j < n)
		tmp[k++] = ev[j++];
	memcpy(ev, tmp, (size_t)n * sizeof *ev);
}

bool
viz_finish(VizTrace *t)
{
	/* the stages' boxes */
	for (int i = 0; i < t->ntensors; i++) {
		VizTensor *v = &t->tensors[i];
		if (v->arg)
			continue;
		bool first = true;
		for (int64_t e = 0; e < t->nev; e++) {
			VizEvent *ev = &t->ev[e];
			if (ev->kind != VIZ_ALLOC || ev->tensor != i)
				continue;
			for (int d = 0; d < v->ndims; d++) {
				int64_t lo = ev->coord[d], hi = lo + ev->coord[v->ndims + d];
				int64_t vhi = v->lo[d] + v->ext[d];
				if (first || lo < v->lo[d])
					v->lo[d] = lo;
				if (first || hi > vhi)
					vhi = hi;
				v->ext[d] = vhi - v->lo[d];
			}
			first = false;
		}
		if (box_elems(v) > 4 * (int64_t)VIZ_MAX_ELEMS) {
			fprintf(stderr, "txc viz: the buffers of '%s' cover more than %d elements at "
			    "these sizes (the limit for a picture); use smaller sizes\n", v->name,
			    4 * VIZ_MAX_ELEMS);
			return false;
		}
	}
	/* elements, and the counts that need them */
	uint32_t **stored = calloc(t->ntensors + 1, sizeof *stored);
	uint32_t **loaded = calloc(t->ntensors + 1, sizeof *loaded);
	if (!stored || !loaded)
		diag_fatal("out of memory");
	for (int i = 0; i < t->ntensors; i++) {
		stored[i] = calloc((size_t)box_elems(&t->tensors[i]) + 1, sizeof **stored);
		loaded[i] = calloc((size_t)box_elems(&t->tensors[i]) + 1, sizeof **loaded);
		if (!stored[i] || !loaded[i])
			diag_fatal("out of memory");
	}
	for (int64_t e = 0; e < t->nev; e++) {
		VizEvent *ev = &t->ev[e];
		VizTensor *v = &t->tensors[ev->tensor];
		if (ev->kind == VIZ_ALLOC) {
			v->allocs++;
			if (ev->elem > v->alloc_bytes_max)
				v->alloc_bytes_max = ev->elem;
		}
		if (ev->kind != VIZ_LOAD && ev->kind != VIZ_STORE)
			continue;
		int64_t el = 0;
		for (int d = 0; d < v->ndims; d++)
			el = el * v->ext[d] + (ev->coord[d] - v->lo[d]);
		ev->elem = el;
		if (ev->kind == VIZ_STORE) {
			if (ev->update)
				v->updates++;
			else
				v->stores++;
			if (!stored[ev->tensor][el]++)
				v->distinct_stored++;
		} else {
			v->loads_of++;
			if (!loaded[ev->tensor][el]++)
				v->distinct_loaded++;
			if ((int64_t)loaded[ev->tensor][el] > v->reads_per_elem_max)
				v->reads_per_elem_max = loaded[ev->tensor][el];
			if (ev->by >= 0)
				t->tensors[ev->by].loads_by++;
		}
	}
	for (int i = 0; i < t->ntensors; i++) {
		free(stored[i]);
		free(loaded[i]);
	}
	free(stored);
	free(loaded);

	VizEvent *tmp = malloc((size_t)(t->nev + 1) * sizeof *tmp);
	if (!tmp)
		diag_fatal("out of memory");
	sort_events(t->ev, tmp, t->nev);
	free(tmp);

	/* peak live bytes on the clock */
	int64_t *live = calloc(t->ntensors + 1, sizeof *live);
	if (!live)
		diag_fatal("out of memory");
	for (int64_t e = 0; e < t->nev; e++) {
		VizEvent *ev = &t->ev[e];
		VizTensor *v = &t->tensors[ev->tensor];
		if (ev->kind == VIZ_ALLOC) {
			live[ev->tensor] += ev->elem;
			if (live[ev->tensor] > v->peak_bytes)
				v->peak_bytes = live[ev->tensor];
		} else if (ev->kind == VIZ_FREE)
			live[ev->tensor] -= ev->elem;
	}
	free(live);
	return true;
}

/* ---- text ------------------------------------------------------------------ */

static void
print_shape(FILE *fp, VizTensor *v)
{
	fprintf(fp, "%s[", ir_type_str(ir_scalar(v->elem)));
	for (int d = 0; d < v->ndims; d++)
		fprintf(fp, "%s%lld", d ? ", " : "", (long long)v->ext[d]);
	fputc(']', fp);
	bool shifted = false;
	for (int d = 0; d < v->ndims; d++)
		shifted |= v->lo[d] != 0;
	if (shifted) {
		fputs(" from [", fp);
		for (int d = 0; d < v->ndims; d++)
			fprintf(fp, "%s%lld", d ? ", " : "", (long long)v->lo[d]);
		fputc(']', fp);
	}
}

static void
print_header(FILE *fp, VizTrace *t)
{
	fprintf(fp, "%s (%s):", t->f->name, t->schedule ? t->schedule : "default");
	for (int i = 0; i < t->f->nparams; i++)
		fprintf(fp, " %s=%g", t->f->params[i]->name, t->params[i]);
	fputc('\n', fp);
}

void
viz_print_stats(FILE *fp, VizTrace *t)
{
	int64_t loads = 0, stores = 0;
	for (int i = 0; i < t->ntensors; i++) {
		loads += t->tensors[i].loads_of;
		stores += t->tensors[i].stores + t->tensors[i].updates;
	}
	print_header(fp, t);
	fprintf(fp, "  %lld ticks, %d thread%s, %lld loads, %lld stores\n", (long long)t->ticks,
	    t->threads, t->threads == 1 ? "" : "s", (long long)loads, (long long)stores);
	for (int i = 0; i < t->ntensors; i++) {
		VizTensor *v = &t->tensors[i];
		fprintf(fp, "  %s: %s ", v->name, v->input ? "input" : v->arg ? "output" : "stage");
		print_shape(fp, v);
		fputc('\n', fp);
		if (v->stores || v->updates) {
			fprintf(fp, "    computed %lld of %lld elements (x%.2f)", (long long)v->stores,
			    (long long)v->distinct_stored,
			    v->distinct_stored ? (double)v->stores / (double)v->distinct_stored : 0.0);
			if (v->updates)
				fprintf(fp, ", %lld updates", (long long)v->updates);
			fprintf(fp, "; %lld loads, %.2f per store\n", (long long)v->loads_by,
			    (double)v->loads_by / (double)(v->stores + v->updates));
		}
		if (v->loads_of)
			fprintf(fp, "    read %lld times, %lld elements (at most %lld time%s each)\n",
			    (long long)v->loads_of, (long long)v->distinct_loaded,
			    (long long)v->reads_per_elem_max, v->reads_per_elem_max == 1 ? "" : "s");
		if (v->allocs)
			fprintf(fp, "    %lld allocation%s of at most %lld bytes; peak %lld bytes live\n",
			    (long long)v->allocs, v->allocs == 1 ? "" : "s",
			    (long long)v->alloc_bytes_max, (long long)v->peak_bytes);
		else if (v->arg) {
			int64_t n = 1;
			for (int d = 0; d < v->ndims; d++)
				n *= v->ext[d];
			fprintf(fp, "    %lld bytes (the caller's)\n",
			    (long long)(n * (type_bits(v->elem) <= 8 ? 1 : type_bits(v->elem) / 8)));
		}
	}
	if (t->intrinsic_calls)
		fprintf(fp, "  %lld call%s of the intrinsic%s '%s' (tensorize): one tick each, "
		    "with all the elements it loads and stores\n", (long long)t->intrinsic_calls,
		    t->intrinsic_calls == 1 ? "" : "s", strchr(t->intrinsic, ',') ? "s" : "",
		    t->intrinsic);
	if (t->intrinsic_undrawn)
		fprintf(fp, "  %lld target call%s not drawn (their loads and stores are not in "
		    "the trace)\n", (long long)t->intrinsic_undrawn,
		    t->intrinsic_undrawn == 1 ? "" : "s");
	for (int i = 0; i < t->ninlined; i++)
		fprintf(fp, "  %s: inlined (no buffer: computed inside each use; see the loads "
		    "per store of its consumers)\n", t->inlined[i]);
}

static void
print_coord(FILE *fp, const int32_t *c, int n)
{
	for (int d = 0; d < n; d++)
		fprintf(fp, "%s%d", d ? ", " : "", c[d]);
}

void
viz_print_trace(FILE *fp, VizTrace *t)
{
	static const char *const kinds[] = { "load", "store", "alloc", "free" };
	print_header(fp, t);
	for (int64_t e = 0; e < t->nev; e++) {
		VizEvent *ev = &t->ev[e];
		VizTensor *v = &t->tensors[ev->tensor];
		fprintf(fp, "%lld t%d", (long long)ev->tick, ev->thread);
		if (ev->lane >= 0)
			fprintf(fp, ".%d", ev->lane);
		fprintf(fp, " L%d %s%s %s[", ev->line, kinds[ev->kind],
		    ev->update ? " update" : "", v->name);
		print_coord(fp, ev->coord, v->ndims);
		if (ev->kind == VIZ_ALLOC || ev->kind == VIZ_FREE) {
			fputs("] extent [", fp);
			print_coord(fp, ev->coord + v->ndims, v->ndims);
		}
		fputc(']', fp);
		if (ev->kind == VIZ_STORE && ev->iter && ev->line > 0 && ev->line <= t->nlines) {
			for (int i = 0; i < t->line_nloops[ev->line]; i++)
				fprintf(fp, " %s=%lld", t->line_loops[ev->line][i], (long long)ev->iter[i]);
		}
		fputc('\n', fp);
	}
}
