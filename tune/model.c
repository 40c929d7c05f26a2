/* model.c: the cost model: gradient-boosted trees (XGBoost) over features.c.
 *
 * XGBoost's C API is loaded at run time with dlopen("libxgboost.so.0")
 * (Debian's libxgboost-dev), only by txc tune: txc is not linked with it,
 * so its start and every other command stay free of it, and a machine
 * without it still tunes (without a model).  The objective is
 * rank:pairwise (only the order of candidates matters, and measurements
 * of different sizes compare only within their group), depth 3, eta 0.3,
 * on one thread (on a shared 2-core machine more threads were several
 * times slower: TUNING-NOTES.md); the model is refitted from scratch each
 * time the tuner has new measurements.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

typedef void *Handle;
typedef uint64_t bst_ulong;

struct Model {
	void *lib;
	int (*create_mat)(const float *, bst_ulong, bst_ulong, float, Handle *);
	int (*set_float)(Handle, const char *, const float *, bst_ulong);
	int (*set_uint)(Handle, const char *, const unsigned *, bst_ulong);
	int (*free_mat)(Handle);
	int (*create)(const Handle *, bst_ulong, Handle *);
	int (*set_param)(Handle, const char *, const char *);
	int (*update)(Handle, int, Handle);
	int (*predict)(Handle, Handle, int, unsigned, int, bst_ulong *, const float **);
	int (*free_booster)(Handle);
	const char *(*last_error)(void);
	Handle booster;
	int rounds;
};

Model *
model_open(char *why, size_t cap)
{
	/* libgomp's threads spin while idle unless told otherwise */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	void *lib = dlopen("libxgboost.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, cap, "%s", dlerror());
		return NULL;
	}
	Model *m = calloc(1, sizeof *m);
	if (!m) {
		dlclose(lib);
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	m->lib = lib;
	m->rounds = 60;
	struct { const char *name; void **slot; } syms[] = {
		{ "XGDMatrixCreateFromMat", (void **)&m->create_mat },
		{ "XGDMatrixSetFloatInfo", (void **)&m->set_float },
		{ "XGDMatrixSetUIntInfo", (void **)&m->set_uint },
		{ "XGDMatrixFree", (void **)&m->free_mat },
		{ "XGBoosterCreate", (void **)&m->create },
		{ "XGBoosterSetParam", (void **)&m->set_param },
		{ "XGBoosterUpdateOneIter", (void **)&m->update },
		{ "XGBoosterPredict", (void **)&m->predict },
		{ "XGBoosterFree", (void **)&m->free_booster },
		{ "XGBGetLastError", (void **)&m->last_error },
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(lib, syms[i].name);
		if (!p) {
			snprintf(why, cap, "libxgboost.so.0 has no %s", syms[i].name);
			dlclose(lib);
			free(m);
			return NULL;
		}
		memcpy(syms[i].slot, &p, sizeof p);
	}
	return m;
}

static bool
failed(Model *m, int rc)
{
	if (rc != 0)
		fprintf(stderr, "txc tune: XGBoost: %s\n", m->last_error());
	return rc != 0;
}

bool
model_fit(Model *m, const float *X, const float *y, const unsigned *group, int n)
{
	Handle d = NULL, b = NULL;
	if (n < 2)
		return false;
	if (failed(m, m->create_mat(X, (bst_ulong)n, (bst_ulong)features_count, NAN, &d)))
		return false;
	/* rows of one group are contiguous in XGBoost's "group" info: sizes of
	 * consecutive runs of equal group ids */
	unsigned *sizes = calloc((size_t)n, sizeof *sizes);
	int ng = 0;
	for (int i = 0; i < n; i++) {
		if (i == 0 || group[i] != group[i - 1])
			ng++;
		sizes[ng - 1]++;
	}
	bool ok = !failed(m, m->set_float(d, "label", y, (bst_ulong)n)) &&
	    !failed(m, m->set_uint(d, "group", sizes, (bst_ulong)ng)) &&
	    !failed(m, m->create(&d, 1, &b));
	free(sizes);
	static const char *const params[][2] = {
		{ "objective", "rank:pairwise" }, { "max_depth", "3" }, { "eta", "0.3" },
		{ "nthread", "1" }, { "verbosity", "0" }, { "seed", "1" },
		{ "min_child_weight", "1" },
	};
	for (size_t i = 0; ok && i < sizeof params / sizeof params[0]; i++)
		ok = !failed(m, m->set_param(b, params[i][0], params[i][1]));
	for (int r = 0; ok && r < m->rounds; r++)
		ok = !failed(m, m->update(b, r, d));
	m->free_mat(d);
	if (!ok) {
		if (b)
			m->free_booster(b);
		return false;
	}
	if (m->booster)
		m->free_booster(m->booster);
	m->booster = b;
	return true;
}

bool
model_predict(Model *m, const float *X, int n, float *out)
{
	Handle d = NULL;
	bst_ulong len = 0;
	const float *res = NULL;
	if (!m->booster || n <= 0)
		return false;
	if (failed(m, m->create_mat(X, (bst_ulong)n, (bst_ulong)features_count, NAN, &d)))
		return false;
	bool ok = !failed(m, m->predict(m->booster, d, 0, 0, 0, &len, &res)) && len == (bst_ulong)n;
	if (ok)
		memcpy(out, res, (size_t)n * sizeof *out);
	m->free_mat(d);
	return ok;
}

void
model_close(Model *m)
{
	if (!m)
		return;
	if (m->booster)
		m->free_booster(m->booster);
	/* libxgboost stays loaded: its OpenMP threads may outlive dlclose */
	free(m);
}
