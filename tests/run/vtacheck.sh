#!/bin/sh
# vtacheck.sh: differential end-to-end test of the vta schedules in a .tx file.
#
#   vtacheck.sh [-a] [-k KERNEL] [-c 'M=1:40 N=1:9'] [-r NRANDOM] [-e 'M=3 N=5']... FILE.tx
#
# For VTA every size is fixed at compile time, so each size set is a
# build: per set, the unscheduled kernel (`txc --no-schedule -D ...`, the
# CPU) is the reference, and each vta schedule of the kernel (`schedule K
# for vta`, `schedule K as NAME for vta`) is compiled with `txc
# --target=vta -D ...`, linked with a harness from `txc --emit=harness`
# and libtxrt, and run: its instruction stream runs in libtxrt's VTA
# simulator with every check on (deadlock, FINISH, tokens, SRAM bounds,
# uninitialised reads, races between the modules) and in three more
# interleavings of the modules (TXRT_VTA_INTERLEAVINGS=4), and its outputs
# must equal the reference's exactly (txcmp).  With -a the kernel has no
# vta schedule of its own, and its generated one (that of the kernels it
# calls, txc-schedule(7) FUSION) is compiled: `txc --target=vta` alone.
# --emit=vta-asm and --emit=vta-bin must work for each build too.  Size sets: each -e set,
# then NRANDOM (-r, default 0) random ones drawn from the -c ranges.
#
# Environment: TXC, CC (default cc), abs_top_builddir (txcmp, libtxrt),
# TXC_SEED (default 1), TXC_KEEP=1 keeps the work folder.  Exit 0 pass,
# 1 fail, 77 skip (no libtxrt built).
set -u
caps=
nrandom=0
extra=
kernel=
generated=
while getopts ac:r:e:k: opt; do
	case $opt in
	a) generated=1 ;;
	c) caps=$OPTARG ;;
	r) nrandom=$OPTARG ;;
	e) extra="$extra$OPTARG
" ;;
	k) kernel=$OPTARG ;;
	*) echo "usage: vtacheck.sh [-a] [-k KERNEL] [-c CAPS] [-r N] [-e SET]... FILE.tx"; exit 99 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "vtacheck.sh: one .tx file expected"; exit 99; }
tx=$1
: "${TXC:?TXC must name the txc binary}"
CC=${CC:-cc}
seed=${TXC_SEED:-1}
builddir=${abs_top_builddir:-.}
txcmp=${TXCMP:-$builddir/tests/tools/txcmp}
txrt=$builddir/rt/.libs/libtxrt.a
[ -x "$txcmp" ] || { echo "vtacheck.sh: $txcmp not built (make check builds it)"; exit 99; }
[ -f "$txrt" ] || { echo "SKIP: libtxrt not built"; exit 77; }
case $tx in /*) ;; *) tx=$(pwd)/$tx ;; esac
name=$(basename "$tx" .tx)
work=$(mktemp -d "${TMPDIR:-/tmp}/txc-$name.XXXXXX") || exit 99
if [ "${TXC_KEEP:-0}" = 1 ]; then echo "work folder: $work"; else trap 'rm -rf "$work"' EXIT; fi
cd "$work" || exit 99
fails=0
nruns=0
fail() { # MESSAGE [LOG]
	echo "FAIL: $1"
	if [ $# -ge 2 ]; then head -n 20 "$2" | sed 's/^/    | /'; fi
	fails=$((fails + 1))
}

[ -n "$kernel" ] || kernel=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx" | head -n 1)
vscheds=$(sed -n \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}vta.*/\1/p" \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}for[[:space:]]\{1,\}vta.*/-/p" "$tx")
if [ -n "$generated" ]; then
	[ -z "$vscheds" ] || { echo "vtacheck.sh: -a: $kernel has a vta schedule in $tx"; exit 99; }
	vscheds=-
fi
[ -n "$vscheds" ] || { echo "vtacheck.sh: no vta schedule of $kernel in $tx"; exit 99; }

sizes=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}'"$kernel"'[[:space:]]*(\([^)]*\)).*/\1/p' "$tx" | head -n 1 | tr -d ' ' | tr ',' ' ')

sets=$(awk -v sizes="$sizes" -v caps="$caps" -v nrandom="$nrandom" -v seed="$seed" '
BEGIN {
	n = split(sizes, sz, " ")
	for (i = 1; i <= n; i++) { lo[sz[i]] = 1; hi[sz[i]] = 24 }
	m = split(caps, cs, " ")
	for (i = 1; i <= m; i++) {
		split(cs[i], kv, "="); split(kv[2], rg, ":")
		lo[kv[1]] = rg[1] + 0; hi[kv[1]] = (rg[2] == "" ? rg[1] : rg[2]) + 0
	}
	srand(seed)
	for (k = 0; k < nrandom; k++) {
		s = ""
		for (i = 1; i <= n; i++) s = s sz[i] "=" (lo[sz[i]] + int(rand() * (hi[sz[i]] - lo[sz[i]] + 1))) " "
		print s
	}
}')
sets="$extra$sets"

iset=0
OLDIFS=$IFS
IFS='
'
for set in $sets; do
	IFS=$OLDIFS
	[ -n "$set" ] || continue
	iset=$((iset + 1))
	defs=
	for kv in $set; do defs="$defs -D $kv"; done
	# the harness for this set: with -D, txc --emit=harness writes the
	# buffer extents as constants of these sizes (and without -D it may not
	# prove the kernel's bounds), so one harness fits one set only
	# shellcheck disable=SC2086
	if ! "$TXC" -k "$kernel" $defs --emit=harness -o h.c "$tx" 2>txc.err; then
		fail "$name: txc --emit=harness failed at $set" txc.err
		continue
	fi
	if ! $CC -O1 -DTXC_LLVM -c -o h.o h.c >build.log 2>&1; then
		fail "$name: the harness does not compile at $set" build.log
		continue
	fi
	# shellcheck disable=SC2086
	if ! "$TXC" -k "$kernel" --no-schedule $defs -o ref.o "$tx" 2>txc.err ||
	    ! $CC -o ref h.o ref.o "$txrt" -lm -lpthread -ldl >build.log 2>&1; then
		fail "$name: the reference at $set does not build" txc.err
		continue
	fi
	# shellcheck disable=SC2086
	if ! ./ref $set seed=$iset out=ref.out >run.log 2>&1; then
		fail "$name: the reference fails at $set" run.log
		continue
	fi
	for s in $vscheds; do
		if [ "$s" = - ]; then sflag=; tag=vta; else sflag="-s $s"; tag=$s; fi
		# shellcheck disable=SC2086
		if ! "$TXC" -k "$kernel" $sflag --target=vta $defs -o "$tag.o" "$tx" 2>txc.err; then
			fail "$name: schedule $tag at $set: txc --target=vta failed" txc.err
			continue
		fi
		if ! $CC -o "$tag" h.o "$tag.o" "$txrt" -lm -lpthread -ldl >build.log 2>&1; then
			fail "$name: schedule $tag: the object does not link with libtxrt" build.log
			continue
		fi
		# shellcheck disable=SC2086
		if ! "$TXC" -k "$kernel" $sflag --target=vta $defs --emit=vta-asm -o "$tag.s" "$tx" 2>txc.err ||
		    ! grep -q FINISH "$tag.s"; then
			fail "$name: schedule $tag at $set: --emit=vta-asm failed" txc.err
		fi
		rm -rf "$tag.bin"
		# shellcheck disable=SC2086
		if ! "$TXC" -k "$kernel" $sflag --target=vta $defs --emit=vta-bin -o "$tag.bin" "$tx" 2>txc.err ||
		    ! ls "$tag.bin"/*.manifest >/dev/null 2>&1; then
			fail "$name: schedule $tag at $set: --emit=vta-bin failed" txc.err
		fi
		nruns=$((nruns + 1))
		# shellcheck disable=SC2086
		if ! TXRT_VTA_INTERLEAVINGS=4 ./"$tag" $set seed=$iset checkargs=1 out="$tag.out" >run.log 2>&1; then
			fail "$name: schedule $tag fails at $set" run.log
		elif ! "$txcmp" ref.out "$tag.out" >cmp.log 2>&1; then
			fail "$name: schedule $tag differs from the CPU at $set (harness seed $iset)" cmp.log
		fi
	done
	IFS='
'
done
IFS=$OLDIFS
[ $nruns -gt 0 ] || { echo "FAIL: $name: nothing ran"; exit 1; }
if [ $fails -gt 0 ]; then
	echo "$name: $fails failure(s) in $nruns runs"
	exit 1
fi
echo "$name: $nruns vta runs match the CPU"
exit 0
