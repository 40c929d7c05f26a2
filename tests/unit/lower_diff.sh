#!/bin/sh
# lower_diff.sh: every schedule of the loop-nest tests computes what the
# unscheduled kernel computes (tests/unit/lower_diff.c).
exec "${abs_top_builddir:-.}/tests/unit/lower_diff" \
	"${abs_top_srcdir:-.}"/tests/loops/*.tx \
	"${abs_top_srcdir:-.}"/tests/unit/lower_diff_schedules.tx
