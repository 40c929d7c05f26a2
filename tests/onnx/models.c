/* models.c: runs a model compiled by txc on the runs genmodels.py wrote
 * and compares its outputs with numpy's (tests/onnx/models.sh).
 *
 *     models DIR/NAME.meta
 *
 * The meta file holds "sizes K S1 .. SK", "in I COUNT FILE" and "out I
 * COUNT FILE" lines (raw float32 files beside it), each run ending with
 * "run".  run_model(), a line models.sh writes from the meta's "call"
 * with the header txc -H made, calls the entry point with the sizes, the
 * inputs and the outputs.  An element passes when it is within 1e-3 of
 * the reference relative to its size, with a floor of 1e-5 times the
 * largest reference element (values that cancel to about 0); the largest
 * such relative error is printed.  Outputs
 * are given 64 guard floats, checked untouched.  Exit 0 when all pass.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_model(const int64_t *s, void *const *in, void *const *out);
const char *txrt_last_error(void);

enum { MAXT = 8, GUARD = 64 };

static char dir[4096];

static float *
load(const char *file, long count, long extra)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	float *p = malloc((size_t)(count + extra) * sizeof *p);
	FILE *fp = fopen(path, "rb");
	if (!p || !fp || fread(p, sizeof *p, (size_t)count, fp) != (size_t)count) {
		fprintf(stderr, "cannot read %ld floats from %s\n", count, path);
		exit(2);
	}
	fclose(fp);
	return p;
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	snprintf(dir, sizeof dir, "%s", argv[1]);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	FILE *meta = fopen(argv[1], "r");
	if (!meta) {
		perror(argv[1]);
		return 2;
	}
	int64_t sizes[MAXT] = { 0 };
	void *in[MAXT] = { 0 }, *out[MAXT] = { 0 };
	float *ref[MAXT] = { 0 };
	long nout[MAXT] = { 0 };
	int runs = 0, bad = 0;
	double worst = 0;            /* largest error relative to the tolerance's scale */
	char line[8192], file[4096];
	while (fgets(line, sizeof line, meta)) {
		int i, k;
		long cnt;
		if (sscanf(line, "sizes %d%n", &k, &i) == 1) {
			char *p = line + i;
			for (int j = 0; j < k && j < MAXT; j++)
				sizes[j] = strtoll(p, &p, 10);
		} else if (sscanf(line, "in %d %ld %4095s", &i, &cnt, file) == 3 && i >= 0 && i < MAXT) {
			free(in[i]);
			in[i] = load(file, cnt, 0);
		} else if (sscanf(line, "out %d %ld %4095s", &i, &cnt, file) == 3 && i >= 0 && i < MAXT) {
			free(ref[i]);
			free(out[i]);
			ref[i] = load(file, cnt, 0);
			out[i] = malloc((size_t)(cnt + GUARD) * sizeof(float));
			for (long j = 0; j < cnt + GUARD; j++)
				((float *)out[i])[j] = NAN;
			nout[i] = cnt;
		} else if (!strncmp(line, "run", 3)) {
			int rc = run_model(sizes, in, out);
			if (rc) {
				fprintf(stderr, "run %d: the entry point returned %d: %s\n", runs, rc,
				    txrt_last_error());
				bad = -1;
				break;
			}
			for (int o = 0; o < MAXT && ref[o]; o++) {
				float *y = out[o], *r = ref[o], big = 0;
				for (long j = 0; j < nout[o]; j++)
					big = fabsf(r[j]) > big ? fabsf(r[j]) : big;
				for (long j = 0; j < nout[o]; j++) {
					float tol = 1e-3f * fmaxf(fabsf(r[j]), 1e-2f * big);
					double rel = fabs((double)y[j] - r[j]) / fmax(fmax(fabsf(r[j]), 1e-2 * big), 1e-30);
					worst = rel > worst || isnan(rel) ? rel : worst;
					if (!(fabsf(y[j] - r[j]) <= tol) && bad++ < 5)
						fprintf(stderr, "run %d output %d [%ld]: %g, numpy %g\n", runs, o, j,
						    y[j], r[j]);
				}
				for (long j = nout[o]; j < nout[o] + GUARD; j++)
					if (!isnan(y[j]) && bad++ < 5)
						fprintf(stderr, "run %d output %d: written past its end\n", runs, o);
			}
			runs++;
		}
	}
	fclose(meta);
	for (int i = 0; i < MAXT; i++) {
		free(in[i]);
		free(out[i]);
		free(ref[i]);
	}
	if (bad < 0)
		return 1;
	printf("%d runs, %d elements off, largest relative error %.2g\n", runs, bad, worst);
	return bad || !runs;
}
