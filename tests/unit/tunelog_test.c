/* tunelog_test.c: the tuning log's line parser (tune/tunelog.c).
 *
 * A record written by tunelog_write parses back to the same fields; then
 * the parser is fuzzed: every truncation of a valid line, and many random
 * mutations of it (bytes replaced, inserted, deleted, JSON punctuation
 * and escapes injected), must either parse into a record that has every
 * required field or be rejected with a reason and an offset inside the
 * line -- never crash or read past the line (run under ASan in CI).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

static int failures;

#define CHECK(c, ...) do { if (!(c)) { printf("FAIL: " __VA_ARGS__); printf("\n"); failures++; } } while (0)

static uint64_t rng = 12345;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Parses len bytes copied into a buffer of exactly that size (ASan sees a
 * read past the line). */
static void
parse_exact(const char *text, size_t len)
{
	char *buf = malloc(len ? len : 1);
	memcpy(buf, text, len);
	TuneRecord r;
	const char *why = NULL;
	size_t at = (size_t)-1;
	if (tunelog_parse_line(buf, len, &r, &why, &at)) {
		CHECK(r.kernel && r.schedule && r.space && r.target && r.cpu && r.phase &&
		    r.threads >= 1, "a record without a required field: %.*s", (int)len, text);
		CHECK(r.error || (r.time_ms > 0 && r.vs_default > 0), "a good record without times");
	} else {
		CHECK(why != NULL, "rejected without a reason: %.*s", (int)len, text);
		CHECK(at <= len, "an offset past the line (%zu > %zu)", at, len);
	}
	free(buf);
}

int
main(void)
{
	perm = arena_new();
	const char *names[] = { intern_cstr("M"), intern_cstr("N") };
	int64_t values[] = { 64, 7 };
	const char *knames[] = { intern_cstr("ti"), intern_cstr("order") };
	const char *kvalues[] = { "8", "ji" };
	TuneRecord w = {
		.kernel = "mm", .schedule = "default", .space = "00ff", .target = "cpu",
		.cpu = "znver5", .features = "+avx2,\"odd\\name\n", .phase = "search",
		.size_names = names, .size_values = values, .nsizes = 2,
		.knob_names = knames, .knob_values = kvalues, .nknobs = 2,
		.threads = 2, .time_ms = 0.25, .vs_default = 0.5, .version = "0.1",
		.date = "2026-11-25T00:00:00Z",
	};
	char *line = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&line, &len);
	tunelog_write(fp, &w);
	fclose(fp);
	len--;   /* without the newline */

	TuneRecord r;
	const char *why;
	size_t at;
	CHECK(tunelog_parse_line(line, len, &r, &why, &at), "a written record does not parse");
	CHECK(!strcmp(r.kernel, "mm") && !strcmp(r.features, w.features) && r.nsizes == 2 &&
	    r.size_values[1] == 7 && r.nknobs == 2 && !strcmp(r.knob_values[1], "ji") &&
	    r.threads == 2 && r.time_ms == 0.25 && r.vs_default == 0.5 && !r.error,
	    "a record does not read back as written");

	/* every truncation */
	for (size_t n = 0; n < len; n++)
		parse_exact(line, n);
	/* random mutations */
	static const char inject[] = "{}[]:,\"\\u0000nullnul-+.eE9 \t";
	char *m = malloc(len + 64);
	for (int it = 0; it < 20000; it++) {
		size_t n = len;
		memcpy(m, line, len);
		int edits = 1 + (int)rnd(4);
		for (int e = 0; e < edits; e++) {
			size_t p = n ? rnd((unsigned)n) : 0;
			switch (rnd(4)) {
			case 0: m[p] = (char)rnd(256); break;
			case 1: m[p] = inject[rnd(sizeof inject - 1)]; break;
			case 2:
				if (n < len + 60) {
					memmove(m + p + 1, m + p, n - p);
					m[p] = inject[rnd(sizeof inject - 1)];
					n++;
				}
				break;
			default:
				if (n > 0) {
					memmove(m + p, m + p + 1, n - p - 1);
					n--;
				}
			}
		}
		parse_exact(m, n);
	}
	free(m);
	free(line);
	printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
