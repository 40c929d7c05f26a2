/* page.c: the self-contained web page of txc viz.
 *
 * One HTML file: the style (viz.css) and the script (viz.js), compiled in
 * by viz/embed.sh, and the traces as JSON in a <script
 * type="application/json"> element; nothing is fetched.  The JSON holds,
 * per trace: the kernel, schedule and sizes; the loop nest's lines and
 * the loops around each; the tensors with their boxes and numbers
 * (stats.c); and the events in tick order, six integers each (tick
 * delta, thread, lane, line, tensor * 4 + kind, element or allocation
 * number), with allocations' regions and stores' loop values beside
 * them.  Every '<' in a string is written \u003c, so no text can close
 * the script element.
 */
#include <string.h>

#include "viz/viz.h"

extern const char viz_css[], viz_js[];   /* viz_assets.c */

static void
json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(fp, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", fp);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
			fprintf(fp, "\\u%04x", *c);
		else
			fputc(*c, fp);
	}
	fputc('"', fp);
}

static void
json_ints(FILE *fp, const int64_t *v, int n)
{
	fputc('[', fp);
	for (int i = 0; i < n; i++)
		fprintf(fp, "%s%lld", i ? "," : "", (long long)v[i]);
	fputc(']', fp);
}

static void
write_tensor(FILE *fp, VizTensor *v)
{
	fputs("{\"name\":", fp);
	json_str(fp, v->name);
	fprintf(fp, ",\"role\":\"%s\",\"elem\":\"%s\",\"bytes\":%d,\"lo\":",
	    v->input ? "input" : v->arg ? "output" : "stage", ir_type_str(ir_scalar(v->elem)),
	    type_bits(v->elem) <= 8 ? 1 : type_bits(v->elem) / 8);
	json_ints(fp, v->lo, v->ndims);
	fputs(",\"ext\":", fp);
	json_ints(fp, v->ext, v->ndims);
	fprintf(fp, ",\"stores\":%lld,\"updates\":%lld,\"distinct\":%lld,\"loadsBy\":%lld,"
	    "\"loadsOf\":%lld,\"distinctLoaded\":%lld,\"maxReads\":%lld,\"allocs\":%lld,"
	    "\"allocMax\":%lld,\"peak\":%lld}",
	    (long long)v->stores, (long long)v->updates, (long long)v->distinct_stored,
	    (long long)v->loads_by, (long long)v->loads_of, (long long)v->distinct_loaded,
	    (long long)v->reads_per_elem_max, (long long)v->allocs, (long long)v->alloc_bytes_max,
	    (long long)v->peak_bytes);
}

static void
write_trace(FILE *fp, VizTrace *t)
{
	fputs("{\"kernel\":", fp);
	json_str(fp, t->f->name);
	fputs(",\"schedule\":", fp);
	json_str(fp, t->schedule ? t->schedule : "default");
	fputs(",\"sizes\":[", fp);
	for (int i = 0; i < t->f->nparams; i++) {
		fprintf(fp, "%s[", i ? "," : "");
		json_str(fp, t->f->params[i]->name);
		fprintf(fp, ",%.17g]", t->params[i]);
	}
	fprintf(fp, "],\"intrinsicCalls\":%lld,\"intrinsicUndrawn\":%lld,\"intrinsic\":",
	    (long long)t->intrinsic_calls, (long long)t->intrinsic_undrawn);
	json_str(fp, t->intrinsic ? t->intrinsic : "");
	fprintf(fp, ",\"ticks\":%lld,\"threads\":%d,\n\"loops\":[", (long long)t->ticks,
	    t->threads);
	/* the nest's lines, as printed (with their indentation) */
	const char *p = t->loops;
	for (int i = 0; *p; i++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = arena_strndup(perm, p, n);
		if (i)
			fputc(',', fp);
		json_str(fp, line);
		p += n + (nl != NULL);
	}
	fputs("],\n\"lineLoops\":[[]", fp);
	for (int l = 1; l <= t->nlines; l++) {
		fputs(",[", fp);
		for (int i = 0; i < t->line_nloops[l]; i++) {
			if (i)
				fputc(',', fp);
			json_str(fp, t->line_loops[l][i]);
		}
		fputc(']', fp);
	}
	fputs("],\n\"tensors\":[", fp);
	for (int i = 0; i < t->ntensors; i++) {
		if (i)
			fputs(",\n", fp);
		write_tensor(fp, &t->tensors[i]);
	}
	fputs("],\n\"inlined\":[", fp);
	for (int i = 0; i < t->ninlined; i++) {
		if (i)
			fputc(',', fp);
		json_str(fp, t->inlined[i]);
	}
	/* the events */
	fputs("],\n\"ev\":[", fp);
	int64_t tick = 0;
	for (int64_t e = 0; e < t->nev; e++) {
		VizEvent *ev = &t->ev[e];
		fprintf(fp, "%s%lld,%d,%d,%d,%d,%lld", e ? "," : "", (long long)(ev->tick - tick),
		    ev->thread, ev->lane, ev->line, ev->tensor * 4 + (int)ev->kind,
		    (long long)(ev->kind == VIZ_ALLOC || ev->kind == VIZ_FREE ? ev->alloc : ev->elem));
		tick = ev->tick;
		if (e % 16 == 15)
			fputc('\n', fp);
	}
	/* the allocations' regions, by number: min then extent per dimension */
	fputs("],\n\"allocs\":[", fp);
	bool first = true;
	int64_t *order = NULL;
	int nalloc = 0;
	for (int64_t e = 0; e < t->nev; e++)
		if (t->ev[e].kind == VIZ_ALLOC && t->ev[e].alloc + 1 > nalloc)
			nalloc = t->ev[e].alloc + 1;
	order = arena_alloc(perm, (size_t)(nalloc + 1) * sizeof *order);
	for (int64_t e = 0; e < t->nev; e++)
		if (t->ev[e].kind == VIZ_ALLOC)
			order[t->ev[e].alloc] = e;
	for (int a = 0; a < nalloc; a++) {
		VizEvent *ev = &t->ev[order[a]];
		int nd = t->tensors[ev->tensor].ndims;
		fputs(first ? "[" : ",[", fp);
		for (int d = 0; d < 2 * nd; d++)
			fprintf(fp, "%s%d", d ? "," : "", ev->coord[d]);
		fputc(']', fp);
		first = false;
	}
	/* the loop values of each store, in event order: a count, then values */
	fputs("],\n\"iters\":[", fp);
	first = true;
	for (int64_t e = 0; e < t->nev; e++) {
		VizEvent *ev = &t->ev[e];
		if (ev->kind != VIZ_STORE)
			continue;
		int n = ev->line > 0 && ev->line <= t->nlines && ev->iter ? t->line_nloops[ev->line] : 0;
		fprintf(fp, "%s%d", first ? "" : ",", n);
		for (int i = 0; i < n; i++)
			fprintf(fp, ",%lld", (long long)ev->iter[i]);
		first = false;
	}
	fputs("]}", fp);
}

bool
viz_write_page(FILE *fp, const char *title, VizTrace **t, int n)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta name=\"generator\" content=\"txc viz\">\n<title>", fp);
	for (const char *c = title; *c; c++)
		if (*c == '<')
			fputs("&lt;", fp);
		else if (*c == '&')
			fputs("&amp;", fp);
		else
			fputc(*c, fp);
	fputs("</title>\n<style>\n", fp);
	fputs(viz_css, fp);
	fputs("</style>\n</head>\n<body>\n"
	    "<noscript>This page draws with JavaScript; txc viz --stats prints its numbers.</noscript>\n"
	    "<script type=\"application/json\" id=\"txc-data\">\n{\"traces\":[", fp);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(",\n", fp);
		write_trace(fp, t[i]);
	}
	fputs("]}\n</script>\n<script>\n", fp);
	fputs(viz_js, fp);
	fputs("</script>\n</body>\n</html>\n", fp);
	return !ferror(fp);
}
