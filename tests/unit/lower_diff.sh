#!/bin/sh
# lower_diff.sh: every schedule of the loop-nest tests computes what the
# unscheduled kernel computes (tests/unit/lower_diff.c); every knob point
# of a template (the loop-nest tests' and examples/template.tx) too.
exec "${abs_top_builddir:-.}/tests/unit/lower_diff" \
	"${abs_top_srcdir:-.}"/tests/loops/*.tx \
	"${abs_top_srcdir:-.}"/tests/unit/lower_diff_schedules.tx \
	"${abs_top_srcdir:-.}"/examples/template.tx
