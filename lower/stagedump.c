/* stagedump.c: prints the stages being lowered, for --dump-after.
 *
 * The first passes of pipeline.c (stage, sched, inline, bounds_infer)
 * work on stages, not on a loop nest: each stage has a definition over
 * its axes, a schedule (splits and fuses, the loop order with each loop's
 * kind, compute and store levels) and, after bounds_infer, the region it
 * must compute.  This prints that state, one block per stage:
 *
 *     stage C: f32[M, N]  compute root
 *       C[i, j] = sum(k: min 0 extent K) A[i, k]*B[k, j]
 *       split i by 8 (guard) -> io, ii
 *       loops: io, j, ii vectorized, k
 *       region: i: min 0 extent M, j: min 0 extent N, k: min 0 extent K
 */
#include <stdio.h>

#include "lower/lower.h"

/* The name the loop nest gives an axis (t_i for axis i of stage t). */
static const char *
axis_name(LStage *s, int ax)
{
	Axis *a = &s->axes[ax];
	return a->var ? a->var->name : a->name;
}

static void
level(FILE *fp, const char *what, Level *lv)
{
	switch (lv->kind) {
	case LEVEL_ROOT:
		fprintf(fp, "  %s root", what);
		break;
	case LEVEL_INLINE:
		fprintf(fp, "  %s inline", what);
		break;
	case LEVEL_AT:
		fprintf(fp, "  %s at %s.%s", what, lv->stage ? lv->stage->name : "?",
		    lv->axis ? lv->axis : "?");
		break;
	}
}

static void
stage(FILE *fp, LStage *s)
{
	fprintf(fp, "stage %s: %s[", s->name, type_name(s->elem));
	for (int d = 0; d < s->ndims; d++) {
		if (d)
			fputs(", ", fp);
		if (s->shape && s->shape[d])
			ir_print_expr(fp, s->shape[d]);
		else
			fputc('?', fp);
	}
	fputc(']', fp);
	if (s->input) {
		fputs("  input\n", fp);
		return;
	}
	level(fp, "compute", &s->compute);
	if (s->store_set)
		level(fp, "store", &s->store);
	if (s->with)     /* compute_with: the loops it shares */
		fprintf(fp, "  with %s down to %s", s->with->name, s->with_axis);
	if (s->scope != SCOPE_GLOBAL)
		fprintf(fp, "  scope %s", ir_scope_name(s->scope));
	fprintf(fp, "\n  %s", s->name);
	if (s->ndims) {
		fputc('[', fp);
		for (int d = 0; d < s->ndims && d < s->naxes; d++)
			fprintf(fp, "%s%s", d ? ", " : "", axis_name(s, d));
		fputc(']', fp);
	}
	fputs(" = ", fp);
	if (s->red) {
		fprintf(fp, "%s(", reduce_spelling(s->rop));
		for (int k = 0; k < s->nred; k++) {
			fprintf(fp, "%s%s: min ", k ? ", " : "", axis_name(s, s->rax[k]));
			ir_print_expr(fp, s->rmin[k]);
			fputs(" extent ", fp);
			ir_print_expr(fp, s->rext[k]);
		}
		fputs(") ", fp);
		if (s->rpred) {
			fputs("where ", fp);
			ir_print_expr(fp, s->rpred);
			fputc(' ', fp);
		}
		if (s->rbody)
			ir_print_expr(fp, s->rbody);
	} else if (s->value) {
		ir_print_expr(fp, s->value);
	} else {
		fputc('?', fp);
	}
	fputc('\n', fp);
	if (s->upd && s->uidx) {     /* an update definition (tx.5 UPDATES) */
		fputs("  update for (", fp);
		for (int k = 0; k < s->nred; k++) {
			fprintf(fp, "%s%s: min ", k ? ", " : "", axis_name(s, s->rax[k]));
			ir_print_expr(fp, s->rmin[k]);
			fputs(" extent ", fp);
			ir_print_expr(fp, s->rext[k]);
		}
		fprintf(fp, ")%s %s[", s->uassoc ? " associative" : "", s->name);
		for (int d = 0; d < s->ndims; d++) {
			if (d)
				fputs(", ", fp);
			ir_print_expr(fp, s->uidx[d]);
		}
		fputs("] = ", fp);
		if (s->upred) {
			fputs("where ", fp);
			ir_print_expr(fp, s->upred);
			fputc(' ', fp);
		}
		ir_print_expr(fp, s->uval);
		fputc('\n', fp);
	}
	for (int r = 0; r < s->nrels; r++) {
		Rel *rl = &s->rels[r];
		static const char *const tails[] = { "guard", "shift_inward", "exact" };
		if (rl->fuse)
			fprintf(fp, "  fuse %s, %s -> %s\n", axis_name(s, rl->outer),
			    axis_name(s, rl->inner), axis_name(s, rl->parent));
		else
			fprintf(fp, "  split %s by %lld (%s) -> %s, %s\n", axis_name(s, rl->parent),
			    (long long)rl->factor, tails[rl->tail], axis_name(s, rl->outer),
			    axis_name(s, rl->inner));
	}
	fputs("  loops:", fp);
	for (int l = 0; l < s->nleaves; l++) {
		Axis *a = &s->axes[s->leaves[l]];
		fprintf(fp, "%s %s", l ? "," : "", axis_name(s, s->leaves[l]));
		if (a->fk != FOR_SERIAL)
			fprintf(fp, " %s", ir_for_kind_name(a->fk));
	}
	fputc('\n', fp);
	if (s->bounded && s->dmin && s->dext) {
		fputs("  region:", fp);
		for (int d = 0; d < s->ndims + s->nred; d++) {
			int ax = d < s->ndims ? d : s->rax[d - s->ndims];
			fprintf(fp, "%s %s: min ", d ? "," : "", axis_name(s, ax));
			ir_print_expr(fp, s->dmin[d]);
			fputs(" extent ", fp);
			ir_print_expr(fp, s->dext[d]);
		}
		fputc('\n', fp);
	}
}

void
stagedump_print(FILE *fp, Lower *L)
{
	for (int i = 0; i < L->nstages; i++)
		stage(fp, L->stages[i]);
}
