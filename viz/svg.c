/* svg.c: one frame of txc viz as an SVG picture (--frames), for slides
 * and the man page.
 *
 * The traces' tensors are drawn at one tick by the rules of viz.js (the
 * page): the same grid layout (2-D; 2-D slices side by side; 1-D wrapped
 * at 64), the same colours (computed green, recomputed orange, stored in
 * the thread's colour fading over `fade` ticks, loaded blue, a stage's
 * cells outside its live allocations grey) and the live allocations
 * outlined.  Runs of equal cells in a row are one rectangle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"

typedef struct {
	int rows, cols, slices, sc, sr, w, h;
	int64_t n;
} Layout;

static Layout
layout(VizTensor *v)
{
	Layout L = { .slices = 1, .n = 1 };
	for (int d = 0; d < v->ndims; d++)
		L.n *= v->ext[d];
	if (v->ndims == 0)
		L.rows = L.cols = 1;
	else if (v->ndims == 1) {
		L.cols = v->ext[0] < 1 ? 1 : v->ext[0] > 64 ? 64 : (int)v->ext[0];
		L.rows = (int)((v->ext[0] + L.cols - 1) / L.cols);
		if (L.rows < 1)
			L.rows = 1;
	} else {
		L.rows = v->ext[v->ndims - 2] < 1 ? 1 : (int)v->ext[v->ndims - 2];
		L.cols = v->ext[v->ndims - 1] < 1 ? 1 : (int)v->ext[v->ndims - 1];
		for (int d = 0; d < v->ndims - 2; d++)
			L.slices *= (int)v->ext[d];
	}
	L.sc = 65 / (L.cols + 1);
	if (L.sc > L.slices)
		L.sc = L.slices;
	if (L.sc < 1)
		L.sc = 1;
	L.sr = (L.slices + L.sc - 1) / L.sc;
	if (L.sr < 1)
		L.sr = 1;
	L.w = L.sc * (L.cols + 1) - 1;
	L.h = L.sr * (L.rows + 1) - 1;
	return L;
}

static void
cell_xy(const Layout *L, int64_t e, int *x, int *y)
{
	int64_t per = (int64_t)L->rows * L->cols, s = e / per, r = e % per;
	*x = (int)((s % L->sc) * (L->cols + 1) + r % L->cols);
	*y = (int)((s / L->sc) * (L->rows + 1) + r / L->cols);
}

/* viz.js's threadRGB */
static void
thread_rgb(int t, double c[3])
{
	double h = fmod(t * 137.508 + 120, 360) / 60, k = 0.6, x = k * (1 - fabs(fmod(h, 2) - 1));
	double m = 0.75 - k, r = 0, g = 0, b = 0;
	if (h < 1) { r = k; g = x; } else if (h < 2) { r = x; g = k; } else if (h < 3) { g = k; b = x; }
	else if (h < 4) { g = x; b = k; } else if (h < 5) { r = x; b = k; } else { r = k; b = x; }
	c[0] = round((r + m) * 255);
	c[1] = round((g + m) * 255);
	c[2] = round((b + m) * 255);
}

/* The state of a tensor's cells at a tick. */
typedef struct {
	int64_t *last_store, *last_load;
	int *count, *thread;
	unsigned char *inside;
} Cells;

static uint32_t
colour(VizTensor *v, Cells *c, int64_t e, int64_t tick, int64_t fade)
{
	double r, g, b, h;
	bool stage = !v->arg;
	if (c->count[e] == 0)
		r = g = b = v->input ? 232 : 246;
	else if (c->count[e] == 1)
		r = 200, g = 232, b = 200;
	else {
		double m = fmin(1, (c->count[e] - 1) / 3.0);
		r = 246, g = round(205 - 60 * m), b = round(160 - 80 * m);
	}
	if (stage && !c->inside[e])
		r = round(r * 0.8), g = round(g * 0.8), b = round(b * 0.8);
	int64_t dl = tick - c->last_load[e], ds = tick - c->last_store[e];
	if (dl >= 0 && dl < fade) {
		h = 1 - (double)dl / (double)fade;
		r += (80 - r) * h, g += (120 - g) * h, b += (235 - b) * h;
	}
	if (ds >= 0 && ds < fade) {
		double t[3];
		thread_rgb(c->thread[e], t);
		h = ds == 0 ? 1 : 0.75 * (1 - (double)ds / (double)fade);
		r += (t[0] - r) * h, g += (t[1] - g) * h, b += (t[2] - b) * h;
	}
	return (uint32_t)lround(r) << 16 | (uint32_t)lround(g) << 8 | (uint32_t)lround(b);
}

/* Draws trace t at (x0, y0); returns the height used. */
static int
draw_trace(FILE *fp, VizTrace *t, int x0, int y0, int *width, int64_t tick, int64_t fade)
{
	int y = y0, maxw = 1;
	for (int i = 0; i < t->ntensors; i++) {
		Layout L = layout(&t->tensors[i]);
		if (L.w > maxw)
			maxw = L.w;
	}
	int cs = *width / maxw;
	cs = cs < 2 ? 2 : cs > 16 ? 16 : cs;
	if (maxw * cs > *width)
		*width = maxw * cs;
	fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s \xe2\x80\x94 "
	    "schedule %s, tick %lld of %lld</text>\n", x0, y + 14, t->f->name,
	    t->schedule ? t->schedule : "default", (long long)tick, (long long)t->ticks);
	y += 24;
	for (int i = 0; i < t->ntensors; i++) {
		VizTensor *v = &t->tensors[i];
		Layout L = layout(v);
		Cells c;
		c.last_store = malloc((size_t)(L.n + 1) * sizeof *c.last_store);
		c.last_load = malloc((size_t)(L.n + 1) * sizeof *c.last_load);
		c.count = calloc((size_t)L.n + 1, sizeof *c.count);
		c.thread = calloc((size_t)L.n + 1, sizeof *c.thread);
		c.inside = calloc((size_t)L.n + 1, 1);
		if (!c.last_store || !c.last_load || !c.count || !c.thread || !c.inside)
			diag_fatal("out of memory");
		for (int64_t e = 0; e < L.n; e++)
			c.last_store[e] = c.last_load[e] = INT64_MIN / 2;
		/* replay, and note the allocations live at the tick */
		unsigned char *live = calloc((size_t)t->nev + 1, 1);
		int64_t *at = calloc((size_t)t->nev + 1, sizeof *at);
		int nlive = 0;
		if (!live || !at)
			diag_fatal("out of memory");
		for (int64_t k = 0; k < t->nev && t->ev[k].tick <= tick; k++) {
			VizEvent *ev = &t->ev[k];
			if (ev->tensor != i)
				continue;
			switch (ev->kind) {
			case VIZ_STORE:
				c.last_store[ev->elem] = ev->tick;
				c.count[ev->elem]++;
				c.thread[ev->elem] = ev->thread;
				break;
			case VIZ_LOAD: c.last_load[ev->elem] = ev->tick; break;
			case VIZ_ALLOC: at[ev->alloc] = k; live[ev->alloc] = 1; nlive++; break;
			case VIZ_FREE: live[ev->alloc] = 0; break;
			}
		}
		int nd = v->ndims;
		for (int64_t a = 0; a < t->nev && nlive; a++) {
			if (!live[a])
				continue;
			VizEvent *ev = &t->ev[at[a]];
			int64_t cnt = 1;
			for (int d = 0; d < nd; d++)
				cnt *= ev->coord[nd + d];
			for (int64_t s = 0; s < cnt; s++) {
				int64_t rem = s, e = 0, mul = 1;
				for (int d = nd - 1; d >= 0; d--) {
					e += (ev->coord[d] - v->lo[d] + rem % ev->coord[nd + d]) * mul;
					rem /= ev->coord[nd + d];
					mul *= v->ext[d];
				}
				if (e >= 0 && e < L.n)
					c.inside[e] = 1;
			}
		}
		fprintf(fp, "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-family=\"monospace\">%s (%s) "
		    "%s[", x0, y + 12, v->name, v->input ? "input" : v->arg ? "output" : "stage",
		    ir_type_str(ir_scalar(v->elem)));
		for (int d = 0; d < nd; d++)
			fprintf(fp, "%s%lld", d ? ", " : "", (long long)v->ext[d]);
		fputs("]</text>\n", fp);
		y += 16;
		/* the cells: a colour per grid position (white between slices) */
		uint32_t *grid = malloc((size_t)L.w * L.h * sizeof *grid + 4);
		if (!grid)
			diag_fatal("out of memory");
		for (int64_t k = 0; k < (int64_t)L.w * L.h; k++)
			grid[k] = 0xffffff;
		for (int64_t e = 0; e < L.n; e++) {
			int cx, cy;
			cell_xy(&L, e, &cx, &cy);
			grid[(int64_t)cy * L.w + cx] = colour(v, &c, e, tick, fade);
		}
		fprintf(fp, "<g shape-rendering=\"crispEdges\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" "
		    "height=\"%d\" fill=\"none\" stroke=\"#bbb\"/>\n", x0, y, L.w * cs, L.h * cs);
		for (int r = 0; r < L.h; r++)
			for (int k = 0; k < L.w;) {
				int j = k;
				while (j < L.w && grid[(int64_t)r * L.w + j] == grid[(int64_t)r * L.w + k])
					j++;
				if (grid[(int64_t)r * L.w + k] != 0xffffff)
					fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
					    "fill=\"#%06x\"/>\n", x0 + k * cs, y + r * cs, (j - k) * cs, cs,
					    (unsigned)grid[(int64_t)r * L.w + k]);
				k = j;
			}
		/* live allocations of a stage, outlined (2-D and more: the last two) */
		for (int64_t a = 0; a < t->nev && nlive && nd >= 2; a++) {
			if (!live[a])
				continue;
			VizEvent *ev = &t->ev[at[a]];
			int64_t e = 0;
			for (int d = 0; d < nd; d++)
				e = e * v->ext[d] + (ev->coord[d] - v->lo[d]);
			int cx, cy;
			cell_xy(&L, e, &cx, &cy);
			fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
			    "stroke=\"#c82828\" stroke-width=\"2\"/>\n", x0 + cx * cs + 1, y + cy * cs + 1,
			    ev->coord[2 * nd - 1] * cs - 2, ev->coord[2 * nd - 2] * cs - 2);
		}
		fputs("</g>\n", fp);
		y += L.h * cs + 10;
		free(grid);
		free(live);
		free(at);
		free(c.last_store);
		free(c.last_load);
		free(c.count);
		free(c.thread);
		free(c.inside);
	}
	return y - y0;
}

void
viz_write_svg(FILE *fp, VizTrace **t, int n, int64_t tick)
{
	int64_t maxt = 1;
	for (int i = 0; i < n; i++)
		if (t[i]->ticks > maxt)
			maxt = t[i]->ticks;
	/* the page's default fade */
	int64_t fade = 4;
	for (int64_t f = 1; f <= 256; f *= 2)
		if ((double)f <= (double)maxt / 40)
			fade = f;
	int width = n > 1 ? 400 : 560, height = 0, x = 10;
	char *body = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&body, &len);
	if (!mem)
		diag_fatal("out of memory");
	for (int i = 0; i < n; i++) {
		int w = width;
		int h = draw_trace(mem, t[i], x, 10, &w, tick, fade);
		x += w + 30;
		if (h > height)
			height = h;
	}
	fclose(mem);
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	    x - 20, height + 20);
	fputs(body, fp);
	fputs("</svg>\n", fp);
	free(body);
}
