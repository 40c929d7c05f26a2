/* tune_eval.c: the cost model and the search, judged on measurements.
 *
 *     tune_eval LOG TEMPLATE.tx ...
 *
 * LOG (tests/tune/measured.jsonl) holds every point of each template's
 * knob space measured by `txc tune` on this machine class.  For each
 * template, with its records as ground truth:
 *
 *  1. ranking: the model (model.c over features.c) is fitted on four
 *     fifths of the points, chosen at random with a fixed seed, and ranks
 *     the other fifth; Spearman's rank correlation with the measured
 *     speeds must be at least 0.8, and the model's top k of the held-out
 *     points (k = 32, or a quarter of them if fewer) must contain more
 *     than half of the true top k;
 *  2. search: replaying the log as a noise-free objective, the tuner's
 *     search (search.c: the model, simulated annealing) and random search
 *     each run with 10 seeds and a budget; the mean number of trials to
 *     reach within 5% of the best point (budget + 1 when not reached)
 *     must be smaller for the tuner.
 *
 * Exit 0 pass, 1 fail, 77 skip (libxgboost.so.0 does not load).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

#include "lower/lower.h"
#include "parser/parser.h"
#include "sema/sema.h"

typedef struct {
	uint64_t idx;
	int point[TUNE_MAX_KNOBS];
	double speed;          /* 1 / vs_default: higher is faster */
} Row;

static int failures;

static uint64_t rng = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	return space_rand(&rng);
}

/* Spearman's rho of a and b (average ranks for ties). */
static void
ranks(const double *v, int n, double *r)
{
	for (int i = 0; i < n; i++) {
		int less = 0, eq = 0;
		for (int j = 0; j < n; j++) {
			less += v[j] < v[i];
			eq += v[j] == v[i];
		}
		r[i] = less + (eq - 1) / 2.0;
	}
}

static double
spearman(const double *a, const double *b, int n)
{
	double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
	ranks(a, n, ra);
	ranks(b, n, rb);
	double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
	for (int i = 0; i < n; i++) {
		ma += ra[i] / n;
		mb += rb[i] / n;
	}
	for (int i = 0; i < n; i++) {
		sab += (ra[i] - ma) * (rb[i] - mb);
		saa += (ra[i] - ma) * (ra[i] - ma);
		sbb += (rb[i] - mb) * (rb[i] - mb);
	}
	free(ra);
	free(rb);
	return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

/* How many of the top k by a are in the top k by b. */
static int
top_overlap(const double *a, const double *b, int n, int k)
{
	int hits = 0;
	for (int i = 0; i < n; i++) {
		int above_a = 0, above_b = 0;
		for (int j = 0; j < n; j++) {
			above_a += a[j] > a[i];
			above_b += b[j] > b[i];
		}
		hits += above_a < k && above_b < k;
	}
	return hits;
}

static double
speed_of(Row *rows, int n, uint64_t idx)
{
	for (int i = 0; i < n; i++)
		if (rows[i].idx == idx)
			return rows[i].speed;
	return 0;   /* not measured (illegal or failed): a failed trial */
}

/* Trials a search needs to reach `target` speed (budget + 1 if never). */
static int
replay(Program *p, Kernel *k, Schedule *s, const Space *sp, WorkerConfig *wc, Model *m,
    uint64_t seed, int budget, Row *rows, int n, double target)
{
	Search *x = search_new(p, k, s, sp, wc, m, seed, 8);
	int point[TUNE_MAX_KNOBS];
	for (int t = 1; t <= budget; t++) {
		if (!search_next(x, point))
			break;
		double sp_ = speed_of(rows, n, space_index(sp, point));
		search_result(x, point, sp_);
		if (sp_ >= target)
			return t;
	}
	return budget + 1;
}

static void
evaluate(const char *path, TuneRecord *recs, int nrecs, Model *m)
{
	uint32_t file = source_load(path);
	Program *p = file ? parse_program(file) : NULL;
	if (!p || diag_errors() || !sema_check(p) || p->nkernels < 1) {
		printf("FAIL %s: does not compile\n", path);
		failures++;
		return;
	}
	Kernel *k = p->kernels[0];
	LowerOptions flo = { .target = "cpu" };
	Schedule *s = lower_find_schedule(p, k, &flo);
	if (!s || !s->nknobs) {
		printf("FAIL %s: no template\n", path);
		failures++;
		return;
	}
	Space sp = space_of(s);
	const char *space = arena_printf(perm, "%016llx", (unsigned long long)knobs_space_hash(s));
	Row *rows = calloc((size_t)nrecs + 1, sizeof *rows);
	int n = 0;
	WorkerConfig wc = { .prog = p, .k = k, .s = s, .target = "cpu" };
	for (int i = 0; i < nrecs; i++) {
		TuneRecord *r = &recs[i];
		if (r->error || strcmp(r->phase, "search") || strcmp(r->kernel, k->name) ||
		    strcmp(r->space, space) || !tunelog_point(r, s, rows[n].point))
			continue;
		if (!wc.ndefs) {
			wc.def_names = r->size_names;
			wc.def_values = r->size_values;
			wc.ndefs = r->nsizes;
		}
		rows[n].idx = space_index(&sp, rows[n].point);
		rows[n].speed = 1 / r->vs_default;
		n++;
	}
	if (n < 50) {
		printf("FAIL %s: only %d records of its template in the log\n", path, n);
		failures++;
		free(rows);
		return;
	}

	/* 1. ranking on held-out points */
	Search *fx = search_new(p, k, s, &sp, &wc, NULL, 1, 8);
	float *X = malloc((size_t)n * features_count * sizeof *X);
	for (int i = 0; i < n; i++)
		if (!search_features(fx, rows[i].point, X + (size_t)i * features_count)) {
			printf("FAIL %s: a measured point does not lower\n", path);
			failures++;
			free(X);
			free(rows);
			return;
		}
	int *perm_ = malloc(n * sizeof *perm_);
	for (int i = 0; i < n; i++)
		perm_[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1)), t = perm_[i];
		perm_[i] = perm_[j];
		perm_[j] = t;
	}
	int ntest = n / 5, ntrain = n - ntest;
	float *Xt = malloc((size_t)n * features_count * sizeof *Xt), *y = malloc(n * sizeof *y);
	unsigned *g = calloc((size_t)n, sizeof *g);
	for (int i = 0; i < n; i++) {
		memcpy(Xt + (size_t)i * features_count, X + (size_t)perm_[i] * features_count,
		    (size_t)features_count * sizeof *X);
		y[i] = (float)rows[perm_[i]].speed;
	}
	float *pred = malloc(ntest * sizeof *pred);
	double *truth = malloc(ntest * sizeof *truth), *guess = malloc(ntest * sizeof *guess);
	if (!model_fit(m, Xt, y, g, ntrain) ||
	    !model_predict(m, Xt + (size_t)ntrain * features_count, ntest, pred)) {
		printf("FAIL %s: the model does not fit\n", path);
		failures++;
	} else {
		for (int i = 0; i < ntest; i++) {
			truth[i] = y[ntrain + i];
			guess[i] = pred[i];
		}
		double rho = spearman(truth, guess, ntest);
		int kk = ntest / 4 < 32 ? ntest / 4 : 32;
		int hits = top_overlap(guess, truth, ntest, kk);
		printf("%s: %d points (%.0f in the space); held out %d: rank correlation %.3f, "
		    "top-%d overlap %d\n", path, n, sp.size, ntest, rho, kk, hits);
		if (rho < 0.8) {
			printf("FAIL %s: rank correlation %.3f < 0.8\n", path, rho);
			failures++;
		}
		if (2 * hits <= kk) {
			printf("FAIL %s: the model's top %d hold %d of the true top %d\n", path, kk,
			    hits, kk);
			failures++;
		}
	}

	/* 2. replayed search against random search */
	double best = 0;
	for (int i = 0; i < n; i++)
		if (rows[i].speed > best)
			best = rows[i].speed;
	double target = best / 1.05;
	int budget = (int)(sp.size / 4 < 96 ? sp.size / 4 : 96);
	double tm = 0, tr = 0;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		tm += replay(p, k, s, &sp, &wc, m, seed, budget, rows, n, target) / 10.0;
		tr += replay(p, k, s, &sp, &wc, NULL, seed, budget, rows, n, target) / 10.0;
	}
	printf("%s: trials to within 5%% of the best (budget %d, 10 seeds): tuner %.1f, "
	    "random %.1f\n", path, budget, tm, tr);
	if (!(tm < tr)) {
		printf("FAIL %s: the tuner's search is no better than random search\n", path);
		failures++;
	}
	free(X);
	free(Xt);
	free(y);
	free(g);
	free(pred);
	free(truth);
	free(guess);
	free(perm_);
	free(rows);
}

int
main(int argc, char **argv)
{
	perm = arena_new();
	if (argc < 3) {
		fprintf(stderr, "usage: tune_eval LOG TEMPLATE.tx ...\n");
		return 2;
	}
	char why[256];
	Model *m = model_open(why, sizeof why);
	if (!m) {
		printf("SKIP: XGBoost does not load (%s)\n", why);
		return 77;
	}
	TuneRecord *recs;
	int n;
	if (!tunelog_read(argv[1], &recs, &n)) {
		diag_flush();
		return 1;
	}
	for (int a = 2; a < argc; a++)
		evaluate(argv[a], recs, n, m);
	model_close(m);
	return failures ? 1 : 0;
}
