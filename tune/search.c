/* search.c: which knob point txc tune measures next, in a space larger
 * than its budget.
 *
 * Without a model: distinct random points.  With one (model.c): the
 * model is refitted on every measurement so far (and on the records of
 * an earlier log for other sizes of the same template: each size set is
 * a group, ranked within itself), then simulated annealing over the knob
 * space, scored by the model: 16 walkers, started from the best measured
 * points and random ones, take 40 steps each (a step moves one knob; a
 * worse point is accepted with probability exp(delta / T), T falling to
 * 0); the best unmeasured points they visit make the next batch, one in
 * ten of it replaced by a random point (exploration).  A point's features
 * come from its loop nest (features.c), lowered here once and cached; a
 * point that does not lower is never proposed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

#include "sema/sema.h"

enum { WALKERS = 16, STEPS = 40 };

typedef struct {
	uint64_t idx;
	int state;            /* 0 empty, 1 features known, 2 does not lower */
	bool seen;            /* measured or found illegal: never proposed */
	float *feat;
} Slot;

struct Search {
	Program *prog;
	Kernel *k;
	Schedule *s;
	const Space *sp;
	const WorkerConfig *wc;
	Model *model;
	uint64_t rng;
	int batch;
	Slot *tab; uint64_t cap, used;
	/* the training set: features, labels (speed: higher is faster), groups */
	float *X, *y; unsigned *g; int n, capn;
	int fitted_at;        /* rows when the model was last fitted (-1: never) */
	int fits;
	int *queue; int nqueue, headq;
};

static Slot *
slot(Search *x, uint64_t idx)
{
	if (2 * (x->used + 1) > x->cap) {
		Slot *old = x->tab;
		uint64_t oc = x->cap;
		x->cap = oc ? 2 * oc : 1024;
		x->tab = calloc(x->cap, sizeof *x->tab);
		x->used = 0;
		for (uint64_t i = 0; i < oc; i++)
			if (old[i].state || old[i].seen) {
				Slot *n = slot(x, old[i].idx);
				*n = old[i];
			}
		free(old);
	}
	uint64_t h = (idx * 0x9e3779b97f4a7c15ULL) & (x->cap - 1);
	while ((x->tab[h].state || x->tab[h].seen) && x->tab[h].idx != idx)
		h = (h + 1) & (x->cap - 1);
	if (!x->tab[h].state && !x->tab[h].seen) {
		x->tab[h].idx = idx;
		x->used++;
	}
	return &x->tab[h];
}

Search *
search_new(Program *prog, Kernel *k, Schedule *s, const Space *sp, const WorkerConfig *wc,
    Model *m, uint64_t seed, int batch)
{
	Search *x = arena_alloc(perm, sizeof *x);
	x->prog = prog;
	x->k = k;
	x->s = s;
	x->sp = sp;
	x->wc = wc;
	x->model = m;
	x->rng = seed * 0x2545f4914f6cdd1dULL + 7;
	x->batch = batch < 1 ? 1 : batch;
	x->fitted_at = -1;
	x->queue = arena_alloc(perm, (size_t)(x->batch + 1) * sizeof *x->queue * TUNE_MAX_KNOBS);
	return x;
}

/* The features of a point, or NULL when it does not lower. */
static float *
features(Search *x, const int *point)
{
	Slot *sl = slot(x, space_index(x->sp, point));
	if (sl->state == 1)
		return sl->feat;
	if (sl->state == 2)
		return NULL;
	jmp_buf top, *saved = diag_catch;
	IrFunc *volatile f = NULL;
	diag_mute(true);
	diag_catch = &top;
	if (!setjmp(top)) {
		knobs_resolve(x->s, point);
		if (schedule_check_one(x->prog, x->s)) {
			LowerOptions lo = { .target = x->wc->target, .schedule = x->s->name,
			    .def_names = x->wc->def_names, .def_values = x->wc->def_values,
			    .ndefs = x->wc->ndefs, .stop_after = "simplify" };
			f = lower_kernel(x->prog, x->k, &lo);
		}
	}
	diag_catch = saved;
	diag_mute(false);
	diag_reset();
	sl = slot(x, space_index(x->sp, point));   /* the table may have grown */
	if (!f) {
		sl->state = 2;
		return NULL;
	}
	sl->feat = arena_alloc(perm, (size_t)features_count * sizeof *sl->feat);
	features_of(f, sl->feat);
	sl->state = 1;
	return sl->feat;
}

void
search_seen(Search *x, const int *point)
{
	slot(x, space_index(x->sp, point))->seen = true;
}

static void
add_row(Search *x, const float *f, float y, unsigned g)
{
	if (x->n == x->capn) {
		x->capn = x->capn ? 2 * x->capn : 64;
		x->X = realloc(x->X, (size_t)x->capn * features_count * sizeof *x->X);
		x->y = realloc(x->y, (size_t)x->capn * sizeof *x->y);
		x->g = realloc(x->g, (size_t)x->capn * sizeof *x->g);
	}
	memcpy(x->X + (size_t)x->n * features_count, f, (size_t)features_count * sizeof *f);
	x->y[x->n] = y;
	x->g[x->n] = g;
	x->n++;
}

void
search_result(Search *x, const int *point, double speed)
{
	search_seen(x, point);
	float *f = x->model && speed > 0 ? features(x, point) : NULL;
	if (f)
		add_row(x, f, (float)speed, 0);
}

void
search_prior(Search *x, const int *point, double speed, unsigned group)
{
	float *f = x->model && speed > 0 ? features(x, point) : NULL;
	if (f)
		add_row(x, f, (float)speed, group);
}

int
search_fits(Search *x)
{
	return x->fits;
}

/* Fits the model on the rows so far, grouped (rows of a group contiguous). */
static bool
fit(Search *x)
{
	if (!x->model || x->n < 8)
		return false;
	if (x->fitted_at == x->n)
		return true;
	int n = x->n;
	float *X = malloc((size_t)n * features_count * sizeof *X), *y = malloc((size_t)n * sizeof *y);
	unsigned *g = malloc((size_t)n * sizeof *g);
	int k = 0;
	/* groups in order of first appearance */
	for (int i = 0; i < n; i++) {
		bool first = true;
		for (int j = 0; j < i && first; j++)
			first = x->g[j] != x->g[i];
		if (!first)
			continue;
		for (int j = i; j < n; j++)
			if (x->g[j] == x->g[i]) {
				memcpy(X + (size_t)k * features_count, x->X + (size_t)j * features_count,
				    (size_t)features_count * sizeof *X);
				y[k] = x->y[j];
				g[k] = x->g[j];
				k++;
			}
	}
	bool ok = model_fit(x->model, X, y, g, n);
	free(X);
	free(y);
	free(g);
	if (ok) {
		x->fitted_at = n;
		x->fits++;
	}
	return ok;
}

static bool
random_unseen(Search *x, int *point)
{
	for (int tries = 0; tries < 1000; tries++) {
		space_random(x->sp, &x->rng, point);
		Slot *sl = slot(x, space_index(x->sp, point));
		if (!sl->seen && sl->state != 2 && (!x->model || features(x, point)))
			return true;
	}
	return false;
}

typedef struct {
	uint64_t idx;
	float score;
} Cand;

static double
unif(Search *x)
{
	return (double)(space_rand(&x->rng) >> 11) / 9007199254740992.0;
}

/* Refills the queue: model-guided when a model is fitted, else random. */
static void
refill(Search *x)
{
	int nk = x->sp->nknobs;
	x->nqueue = x->headq = 0;
	int want = x->batch;
	Cand *pool = NULL;
	int npool = 0, cappool = 0;
	if (fit(x)) {
		int walk[WALKERS][TUNE_MAX_KNOBS], next[WALKERS][TUNE_MAX_KNOBS];
		float cur[WALKERS], sc[WALKERS];
		float *X = malloc((size_t)WALKERS * features_count * sizeof *X);
		/* start: the best rows measured in this run, then random points */
		int nw = 0;
		for (int w = 0; w < WALKERS; w++) {
			if (!random_unseen(x, walk[w]))
				break;
			nw++;
		}
		int starts = 0;
		for (uint64_t i = 0; i < x->cap && starts < WALKERS / 4; i++) {
			Slot *sl = &x->tab[i];
			if (sl->seen && sl->state == 1) {
				space_point(x->sp, sl->idx, walk[starts]);
				starts++;
			}
		}
		int m = 0;
		for (int w = 0; w < nw; w++) {
			float *f = features(x, walk[w]);
			if (!f) {
				random_unseen(x, walk[w]);
				f = features(x, walk[w]);
			}
			if (f)
				memcpy(X + (size_t)m * features_count, f, (size_t)features_count * sizeof *f);
			else
				memset(X + (size_t)m * features_count, 0, (size_t)features_count * sizeof *f);
			m++;
		}
		if (nw > 0 && model_predict(x->model, X, nw, cur)) {
			double mean = 0, var = 0;
			for (int w = 0; w < nw; w++)
				mean += cur[w] / nw;
			for (int w = 0; w < nw; w++)
				var += (cur[w] - mean) * (cur[w] - mean) / nw;
			double t0 = sqrt(var) + 1e-3;
			for (int step = 0; step < STEPS; step++) {
				double T = t0 * (1 - (double)step / STEPS);
				int legal[WALKERS], nl = 0;
				for (int w = 0; w < nw; w++) {
					space_neighbour(x->sp, &x->rng, walk[w], next[w]);
					float *f = features(x, next[w]);
					if (!f)
						continue;
					memcpy(X + (size_t)nl * features_count, f,
					    (size_t)features_count * sizeof *f);
					legal[nl++] = w;
				}
				if (nl == 0 || !model_predict(x->model, X, nl, sc))
					continue;
				for (int j = 0; j < nl; j++) {
					int w = legal[j];
					double d = sc[j] - cur[w];
					if (d >= 0 || (T > 0 && unif(x) < exp(d / T))) {
						memcpy(walk[w], next[w], sizeof walk[w]);
						cur[w] = sc[j];
					}
					uint64_t idx = space_index(x->sp, next[w]);
					Slot *sl = slot(x, idx);
					bool dup = sl->seen;
					for (int p = 0; p < npool && !dup; p++)
						dup = pool[p].idx == idx;
					if (!dup) {
						Cand *c = ARENA_PUSH(perm, pool, npool, cappool);
						c->idx = idx;
						c->score = sc[j];
					}
				}
			}
		}
		free(X);
		/* the best of the pool, leaving room for exploration */
		int explore = want >= 4 ? want / 10 + 1 : 0;
		for (int taken = 0; taken < want - explore; taken++) {
			int best = -1;
			for (int p = 0; p < npool; p++)
				if (pool[p].score > -INFINITY && (best < 0 || pool[p].score > pool[best].score))
					best = p;
			if (best < 0)
				break;
			space_point(x->sp, pool[best].idx, x->queue + (size_t)x->nqueue * nk);
			x->nqueue++;
			pool[best].score = -INFINITY;
		}
	}
	while (x->nqueue < want) {
		int *p = x->queue + (size_t)x->nqueue * nk;
		if (!random_unseen(x, p))
			break;
		bool dup = false;
		for (int q = 0; q < x->nqueue && !dup; q++)
			dup = !memcmp(p, x->queue + (size_t)q * nk, (size_t)nk * sizeof *p);
		if (!dup)
			x->nqueue++;
		else if (want > x->nqueue + 1)
			want--;   /* a small space: fewer distinct points than the batch */
	}
}

bool
search_next(Search *x, int *point)
{
	int nk = x->sp->nknobs;
	for (int round = 0; round < 2; round++) {
		while (x->headq < x->nqueue) {
			int *p = x->queue + (size_t)x->headq * nk;
			x->headq++;
			if (!slot(x, space_index(x->sp, p))->seen) {
				memcpy(point, p, (size_t)nk * sizeof *p);
				return true;
			}
		}
		refill(x);
	}
	return false;
}

bool
search_features(Search *x, const int *point, float *out)
{
	float *f = features(x, point);
	if (f)
		memcpy(out, f, (size_t)features_count * sizeof *out);
	return f != NULL;
}
