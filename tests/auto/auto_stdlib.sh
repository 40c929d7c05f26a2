#!/bin/sh
# auto_stdlib.sh: the generated schedule of every kernel of stdlib/ and
# examples/ against the unscheduled kernel, on the cpu and (in libtxrt's
# GPU emulator) on cuda, at odd sizes.
#
# Each kernel runs under `txc bench -s auto` with every size parameter at
# 13 and 5 (and every scalar at 0.5), generated for those sizes (-D);
# bench compares it with the unscheduled kernel.  Then AUTO_POINTS (default
# 3) random points of each generated template (-K, drawn with TXC_SEED)
# run at 13.  (tests/auto/auto_run.sh
# checks objects that serve every size, generated at the representative
# sizes.)  TXC_AUTO_STRICT=1: a generated schedule that does
# not lower fails.  A kernel whose unscheduled reference cannot run at
# those sizes (a layout that needs multiples of 8, a VTA kernel) is
# skipped; so is a cuda kernel the generator says cannot map.
#
# Environment: TXC, abs_top_srcdir.  Exit 0 pass, 1 fail.
set -u
: "${TXC:?TXC must name the txc binary}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_AUTO_STRICT=1
export TXC_AUTO_STRICT
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-autolib.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

fails=0 runs=0 skips=0
check() { # file kernel target defs...
	f=$1 k=$2 target=$3
	shift 3
	# shellcheck disable=SC2068
	"$TXC" bench "$f" -I "$srcdir/stdlib" -k "$k" --schedules=auto --target="$target" --runs=1 \
	    --warmup=0 $@ >"$work/out" 2>&1
	rc=$?
	if grep -q 'MISMATCH\|^  auto .*compile error' "$work/out"; then
		echo "FAIL: $f -k $k --target=$target $*"
		cat "$work/out"
		"$TXC" --print-auto-schedule --target="$target" -I "$srcdir/stdlib" -k "$k" "$f" $@ 2>&1
		fails=$((fails + 1))
	elif [ $rc -ne 0 ]; then
		skips=$((skips + 1))   # the reference cannot run there
	else
		runs=$((runs + 1))
	fi
}

for f in "$srcdir"/stdlib/*.tx "$srcdir"/examples/*.tx; do
	case $f in */vta.tx) continue ;; esac
	sed -n 's/^kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)(\(.*\)).*/\1 \2/p' "$f" >"$work/kernels"
	while read -r k params; do
		d13= d5=
		for p in $(echo "$params" | tr ',' ' '); do
			case $p in
			*:*) ;;
			f32|f64|i32|i64|f16) ;;
			*) d13="$d13 -D $p=13"; d5="$d5 -D $p=5" ;;
			esac
		done
		for p in $(echo "$params" | tr ',' '\n' | sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*:.*/\1/p'); do
			d13="$d13 -D $p=0.5"; d5="$d5 -D $p=0.5"
		done
		check "$f" "$k" cpu $d13
		check "$f" "$k" cpu $d5
		# random points of the template: each knob a value drawn from
		# its list (seeded: TXC_SEED), AUTO_POINTS of them (default 3)
		# shellcheck disable=SC2086
		"$TXC" --print-auto-schedule=template -I "$srcdir/stdlib" -k "$k" "$f" $d13 2>/dev/null |
		    sed -n 's/^ *knob \([A-Za-z0-9_]*\) in \[\(.*\)\];/\1 \2/p' >"$work/knobs"
		if [ -s "$work/knobs" ]; then
			p=0
			while [ $p -lt "${AUTO_POINTS:-3}" ]; do
				p=$((p + 1))
				ks=$(awk -v seed=$((${TXC_SEED:-1} * 7919 + p * 104729 + $(printf '%s' "$k" | cksum | cut -d' ' -f1) % 9973)) '
				    BEGIN { srand(seed) }
				    { n = split(substr($0, length($1) + 2), v, /, */); printf " -K %s=%s", $1, v[1 + int(rand() * n)] }' "$work/knobs")
				check "$f" "$k" cpu $d13 $ks
			done
		fi
		if "$TXC" --print-auto-schedule --target=cuda -I "$srcdir/stdlib" -k "$k" "$f" 2>/dev/null |
		    grep -q '^schedule'; then
			check "$f" "$k" cuda $d13
		fi
	done <"$work/kernels"
done
echo "auto_stdlib.sh: $runs runs, $skips skipped, $fails failures"
[ "$fails" -eq 0 ]
