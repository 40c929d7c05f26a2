/* tunelog.c: tuning logs, JSON lines, and their reuse by later compiles.
 *
 * `txc tune --log F` appends one line per measurement, flushed at once so
 * that an interrupted run keeps every record it wrote:
 *
 *   {"kernel":"matmul","schedule":"default","space":"9c1e...","target":"cpu",
 *    "cpu":"znver5","features":"+avx2,...","sizes":{"M":256,"N":256,"K":256},
 *    "threads":1,"knobs":{"mr":"6","nr":"16"},"phase":"search",
 *    "time_ms":0.412,"vs_default":0.93,"error":null,"txc":"0.1",
 *    "date":"2026-11-25T18:40:00Z"}
 *
 * (one line; phase "search" on one thread, "confirm" at the requested
 * threads, "best" for the winner of a run).  `txc --tuning-log F` and
 * `txc bench --tuning-log F` give each schedule template the knob point of
 * the best record that matches it: same kernel, schedule, space hash (the
 * template's text), target, machine (the CPU's name; for cuda the GPU's,
 * any when the compiling machine has none), and the sizes that -D fixes.  A
 * template with records of its kernel and schedule but none that matches
 * keeps its default point, with one warning naming the nearest record.  A
 * line that is not such a record is an error at its line and column.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/tune.h"

#include "sema/sema.h"
#include "target/target.h"

/* ---- writing ------------------------------------------------------------------ */

static void
put_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(fp, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", fp);
		else if (*c < 0x20)
			fprintf(fp, "\\u%04x", *c);
		else
			fputc(*c, fp);
	}
	fputc('"', fp);
}

/* `"key":"value"`, after a comma unless first */
static void
put_field(FILE *fp, const char *key, const char *value, bool first)
{
	fprintf(fp, "%s\"%s\":", first ? "" : ",", key);
	put_str(fp, value);
}

void
tunelog_write(FILE *fp, const TuneRecord *r)
{
	fputc('{', fp);
	put_field(fp, "kernel", r->kernel, true);
	put_field(fp, "schedule", r->schedule, false);
	put_field(fp, "space", r->space, false);
	put_field(fp, "target", r->target, false);
	put_field(fp, "cpu", r->cpu, false);
	put_field(fp, "features", r->features, false);
	fputs(",\"sizes\":{", fp);
	for (int i = 0; i < r->nsizes; i++) {
		fputs(i ? "," : "", fp);
		put_str(fp, r->size_names[i]);
		fprintf(fp, ":%lld", (long long)r->size_values[i]);
	}
	fprintf(fp, "},\"threads\":%d,\"knobs\":{", r->threads);
	for (int i = 0; i < r->nknobs; i++) {
		fputs(i ? "," : "", fp);
		put_str(fp, r->knob_names[i]);
		fputc(':', fp);
		put_str(fp, r->knob_values[i]);
	}
	fputs("},\"phase\":", fp);
	put_str(fp, r->phase);
	if (r->error)
		fputs(",\"time_ms\":null,\"vs_default\":null", fp);
	else
		fprintf(fp, ",\"time_ms\":%.6g,\"vs_default\":%.6g", r->time_ms, r->vs_default);
	fputs(",\"error\":", fp);
	put_str(fp, r->error);
	fputs(",\"txc\":", fp);
	put_str(fp, r->version);
	fputs(",\"date\":", fp);
	put_str(fp, r->date);
	fputs("}\n", fp);
	fflush(fp);
}

const char *
tunelog_cpu(void)
{
	return llvm_host_cpu();
}

const char *
tunelog_features(void)
{
	const char *f = llvm_host_features();
	return f ? f : "";
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct {
	const char *p, *end, *start;
	const char *why;
} Lex;

static void
ws(Lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\r'))
		l->p++;
}

static bool
expect(Lex *l, char c)
{
	ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	l->why = arena_printf(perm, "expected '%c'", c);
	return false;
}

/* A JSON string (NULL for null); false with l->why set. */
static bool
str(Lex *l, const char **out)
{
	ws(l);
	if (l->end - l->p >= 4 && !memcmp(l->p, "null", 4)) {
		l->p += 4;
		*out = NULL;
		return true;
	}
	if (l->p >= l->end || *l->p != '"') {
		l->why = "expected a string";
		return false;
	}
	l->p++;
	char *buf = arena_alloc(perm, (size_t)(l->end - l->p) + 1);
	size_t n = 0;
	while (l->p < l->end && *l->p != '"') {
		char c = *l->p++;
		if (c == '\\') {
			if (l->p >= l->end)
				break;
			c = *l->p++;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c == 'u') {
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					char h = l->p < l->end ? *l->p++ : 0;
					int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ?
					    (h | 32) - 'a' + 10 : -1;
					if (d < 0) {
						l->why = "a bad \\u escape";
						return false;
					}
					v = v * 16 + (unsigned)d;
				}
				c = v < 0x80 && v > 0 ? (char)v : '?';
			} else if (c != '"' && c != '\\' && c != '/') {
				l->why = "a bad escape in a string";
				return false;
			}
		}
		buf[n++] = c;
	}
	if (l->p >= l->end) {
		l->why = "an unterminated string";
		return false;
	}
	l->p++;
	buf[n] = 0;
	*out = buf;
	return true;
}

/* A number (null: NaN). */
static bool
num(Lex *l, double *out)
{
	ws(l);
	if (l->end - l->p >= 4 && !memcmp(l->p, "null", 4)) {
		l->p += 4;
		*out = 0.0 / 0.0;
		return true;
	}
	char tmp[64];
	size_t n = 0;
	while (l->p + n < l->end && n < sizeof tmp - 1 && strchr("+-.0123456789eE", l->p[n]))
		n++;
	memcpy(tmp, l->p, n);
	tmp[n] = 0;
	char *e;
	*out = strtod(tmp, &e);
	if (n == 0 || *e) {
		l->why = "expected a number";
		return false;
	}
	l->p += n;
	return true;
}

/* {"name": value, ...} with numbers (sizes) or strings (knobs). */
static bool
map(Lex *l, bool numbers, const char ***names, void *values, int *n)
{
	int cap = 0, capv = 0, nv = 0;
	*n = 0;
	if (!expect(l, '{'))
		return false;
	ws(l);
	if (l->p < l->end && *l->p == '}') {
		l->p++;
		return true;
	}
	do {
		const char *k;
		if (!str(l, &k) || !k || !expect(l, ':')) {
			if (!l->why)
				l->why = "expected a name";
			return false;
		}
		if (numbers) {
			double v;
			if (!num(l, &v) || !(v >= 0 && v < 9e15) || v != (double)(int64_t)v) {
				l->why = "a size is a non-negative integer";
				return false;
			}
			*ARENA_PUSH(perm, *(int64_t **)values, nv, capv) = (int64_t)v;
		} else {
			const char *v;
			if (!str(l, &v) || !v) {
				l->why = "a knob's value is a string";
				return false;
			}
			*ARENA_PUSH(perm, *(const char ***)values, nv, capv) = v;
		}
		*ARENA_PUSH(perm, *names, *n, cap) = intern_cstr(k);
		ws(l);
	} while (l->p < l->end && *l->p == ',' && l->p++);
	return expect(l, '}');
}

bool
tunelog_parse_line(const char *text, size_t len, TuneRecord *r, const char **why, size_t *at)
{
	Lex l = { .p = text, .end = text + len, .start = text };
	memset(r, 0, sizeof *r);
	r->threads = -1;
	r->time_ms = r->vs_default = 0.0 / 0.0;
	bool ok = expect(&l, '{');
	while (ok) {
		const char *key;
		ws(&l);
		if (!str(&l, &key) || !key || !expect(&l, ':')) {
			ok = false;
			break;
		}
		const char **sfield = !strcmp(key, "kernel") ? &r->kernel :
		    !strcmp(key, "schedule") ? &r->schedule : !strcmp(key, "space") ? &r->space :
		    !strcmp(key, "target") ? &r->target : !strcmp(key, "cpu") ? &r->cpu :
		    !strcmp(key, "features") ? &r->features : !strcmp(key, "phase") ? &r->phase :
		    !strcmp(key, "error") ? &r->error : !strcmp(key, "txc") ? &r->version :
		    !strcmp(key, "date") ? &r->date : NULL;
		double v;
		if (sfield)
			ok = str(&l, sfield);
		else if (!strcmp(key, "sizes"))
			ok = map(&l, true, &r->size_names, &r->size_values, &r->nsizes);
		else if (!strcmp(key, "knobs"))
			ok = map(&l, false, &r->knob_names, &r->knob_values, &r->nknobs);
		else if (!strcmp(key, "threads")) {
			ok = num(&l, &v) && v >= 1 && v <= 4096 && v == (int)v;
			if (ok)
				r->threads = (int)v;
			else if (!l.why)
				l.why = "threads is a positive integer";
		} else if (!strcmp(key, "time_ms"))
			ok = num(&l, &r->time_ms);
		else if (!strcmp(key, "vs_default"))
			ok = num(&l, &r->vs_default);
		else {
			l.why = arena_printf(perm, "unknown field '%s'", key);
			ok = false;
		}
		if (!ok)
			break;
		ws(&l);
		if (l.p < l.end && *l.p == ',') {
			l.p++;
			continue;
		}
		ok = expect(&l, '}');
		break;
	}
	if (ok) {
		ws(&l);
		if (l.p < l.end) {
			l.why = "text after the record";
			ok = false;
		}
	}
	if (ok && (!r->kernel || !r->schedule || !r->space || !r->target || !r->cpu ||
	    r->threads < 1 || !r->phase)) {
		l.why = "a record needs kernel, schedule, space, target, cpu, threads and phase";
		l.p = text;
		ok = false;
	}
	if (ok && !r->error && !(r->time_ms > 0 && r->vs_default > 0)) {
		l.why = "a record without an error needs positive time_ms and vs_default";
		l.p = text;
		ok = false;
	}
	if (!ok) {
		*why = l.why ? l.why : "not a tuning record";
		*at = (size_t)(l.p - text);
	}
	return ok;
}

bool
tunelog_read(const char *path, TuneRecord **out, int *n)
{
	uint32_t file = source_load(path);
	if (!file)
		return false;
	const SrcFile *sf = source_get(file);
	int cap = 0, line = 0;
	bool ok = true;
	*out = NULL;
	*n = 0;
	for (const char *p = sf->text; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		size_t blank = strspn(p, " \t\r");
		if (blank < len) {
			TuneRecord r;
			const char *why;
			size_t at;
			if (tunelog_parse_line(p, len, &r, &why, &at)) {
				r.line = line;
				*ARENA_PUSH(perm, *out, *n, cap) = r;
			} else {
				Loc loc = { .file = file, .begin = (uint32_t)(p - sf->text + at),
				    .end = (uint32_t)(p - sf->text + at + (at < len ? 1 : 0)) };
				diag_error(loc, "not a tuning record: %s", why);
				ok = false;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return ok;
}

/* ---- reuse -------------------------------------------------------------------- */

static int64_t
rec_size(const TuneRecord *r, const char *name, bool *found)
{
	for (int i = 0; i < r->nsizes; i++)
		if (r->size_names[i] == name) {
			*found = true;
			return r->size_values[i];
		}
	*found = false;
	return 0;
}

/* The point r names in s (false if a knob or value is not s's). */
bool
tunelog_point(const TuneRecord *r, Schedule *s, int *point)
{
	if (r->nknobs != s->nknobs)
		return false;
	for (int i = 0; i < s->nknobs; i++) {
		point[i] = -1;
		for (int j = 0; j < r->nknobs; j++)
			if (r->knob_names[j] == s->knobs[i]->knob)
				for (int v = 0; v < s->knobs[i]->nargs; v++)
					if (!strcmp(knobs_value_text(&s->knobs[i]->args[v]), r->knob_values[j]))
						point[i] = v;
		if (point[i] < 0)
			return false;
	}
	return true;
}

static const char *
rec_sizes(const TuneRecord *r)
{
	const char *d = "";
	for (int i = 0; i < r->nsizes; i++)
		d = arena_printf(perm, "%s%s%s=%lld", d, i ? " " : "", r->size_names[i],
		    (long long)r->size_values[i]);
	return d;
}

/* Gives template s the point of the best record of the log that matches it. */
static void
apply_one(Program *prog, Schedule *s, TuneRecord *recs, int n, const char *path, const char *target,
    const char *cpu, const char **def_names, const int64_t *def_values, int ndefs)
{
	const char *sname = s->name ? s->name : "default";
	const char *space = arena_printf(perm, "%016llx", (unsigned long long)knobs_space_hash(s));
	TuneRecord *best = NULL, *near = NULL;
	int nearness = -1;
	bool any = false;
	int point[TUNE_MAX_KNOBS];
	for (int i = 0; i < n; i++) {
		TuneRecord *r = &recs[i];
		if (strcmp(r->kernel, s->kernel) || strcmp(r->schedule, sname) || r->error)
			continue;
		any = true;
		/* how near a record that does not match is: the more that agrees, the nearer */
		int agree = (!strcmp(r->space, space)) * 8 + (!strcmp(r->target, target)) * 4 +
		    (!cpu || !strcmp(r->cpu, cpu)) * 2;
		bool sizes_ok = true;
		for (int d = 0; d < ndefs; d++) {
			bool found;
			int64_t v = rec_size(r, def_names[d], &found);
			if (found && v != def_values[d])
				sizes_ok = false;
		}
		agree += sizes_ok;
		if (agree == 15 && tunelog_point(r, s, point)) {
			/* the best: a run's winner over its search records, then the fastest
			 * against its run's default */
			bool rb = !strcmp(r->phase, "best");
			bool bb = best && !strcmp(best->phase, "best");
			if (!best || (rb && !bb) || (rb == bb && r->vs_default < best->vs_default))
				best = r;
		} else if (agree > nearness) {
			nearness = agree;
			near = r;
		}
	}
	if (best) {
		tunelog_point(best, s, point);
		knobs_resolve(s, point);
		if (!schedule_check_one(prog, s))
			diag_note(s->loc, "the point of line %d of %s", best->line, path);
		return;
	}
	if (!any)
		return;
	const char *why = strcmp(near->space, space) ? "the template has changed since" :
	    strcmp(near->target, target) ? arena_printf(perm, "it is for target %s", near->target) :
	    cpu && strcmp(near->cpu, cpu) ? arena_printf(perm, "it was measured on %s, this is %s",
	    near->cpu, cpu) : arena_printf(perm, "it is for %s", rec_sizes(near));
	diag_warn(s->loc, "no record of %s matches %s (%s) here; the nearest, line %d, does not: "
	    "%s; the template keeps its default point", path, s->kernel, sname, near->line, why);
}

bool
tunelog_apply(Program *prog, const char *path, const char *target, const char *machine,
    const char **def_names, const int64_t *def_values, int ndefs)
{
	TuneRecord *recs;
	int n;
	if (!tunelog_read(path, &recs, &n))
		return false;
	for (int i = 0; i < prog->nschedules; i++) {
		Schedule *s = prog->schedules[i];
		if (s && s->nknobs && s->target && !strcmp(s->target, target))
			apply_one(prog, s, recs, n, path, target, machine, def_names, def_values,
			    ndefs);
	}
	return true;
}
