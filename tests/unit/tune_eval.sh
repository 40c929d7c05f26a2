#!/bin/sh
# tune_eval.sh: the cost model's ranking of held-out points and the search
# against random search, on every point of two templates measured on this
# machine class (tests/tune/measured.jsonl; tests/unit/tune_eval.c).
# Skips (77) where XGBoost does not load.  The log was made with
#   txc tune mm_space.tx -D M=128 -D N=128 -D K=128 --trials=1000 --top=1 \
#       --threads=1 --samples=5 --model=none --log=measured.jsonl
#   txc tune conv_space.tx -D N=1 -D C=16 -D H=14 -D W=30 -D K=16 --trials=1000 \
#       --top=1 --threads=1 --samples=5 --model=none --log=measured.jsonl
# (every point: the spaces are smaller than the budget).
src=${abs_top_srcdir:-.}/tests/tune
exec "${abs_top_builddir:-.}/tests/unit/tune_eval" "$src/measured.jsonl" \
	"$src/mm_space.tx" "$src/conv_space.tx"
