#!/bin/sh
# diffcheck.sh: differential end-to-end test of every schedule in a .tx file.
#
#   diffcheck.sh [-k KERNEL] [-c 'M=1:40 N=1:9'] [-r NRANDOM] [-e 'M=3 N=5'] [-a 'ARGS'] FILE.tx
#
# FILE.tx holds a kernel (-k picks one, default the first) and any number
# of cpu schedules for it (`schedule K for cpu {...}`, `schedule K as NAME
# for cpu {...}`), and of cuda ones, which run in libtxrt's GPU emulator
# (TXRT_CUDA=emulate; its race and bounds checks fail a run) and whose PTX
# must assemble for sm_80 and sm_90 where ptxas is found, and whose CUDA C
# (--emit=cuda) must compile where nvcc is found.  The unscheduled kernel (`txc --no-schedule --emit=c`)
# is the reference; each schedule is built
# with `txc -s NAME --emit=c` and $CC -O1 (once more with -fopenmp when it
# uses parallel), and, when txc's LLVM path and libtxrt are there, as a
# native object linked with -ltxrt (a schedule that tensorizes twice: as
# txc builds it, calling libtxrt's prebuilt micro-kernels where it can,
# and with --local-intrinsics).  A harness from `txc --emit=harness`
# runs every build on the same seeded random inputs for each size set:
#
#   - all sizes 1;
#   - all sizes a prime larger than every split/tile factor in the file
#     (a non-multiple of each; clamped to the -c range);
#   - NRANDOM (-r, default 4) random sets, each size drawn from its -c
#     range (default 1:24), with 1 and the top of the range favoured;
#   - each -e set as given.
#
# Outputs are compared with txcmp (exact for integers, relative tolerance
# for floats).  Every build also runs the harness's argument checks once
# (NULL tensors, negative sizes).  A schedule with tail=exact or
# shift_inward may reject sizes that do not suit it (TXC_ERR_DIVIDE or
# TXC_ERR_SIZE); that is counted, not failed, but each build must match on
# at least one size set.  A build that fails is not run on later size sets.
# -a passes extra harness arguments (scalars).  On a failure the schedule,
# the sizes and the harness seed are printed; rerun one case by hand with
# TXC_KEEP=1 and `./NAME M=.. seed=.. out=F` in the kept folder.
#
# Environment: TXC, CC (default cc), abs_top_builddir (for txcmp and
# libtxrt), TXC_SEED (default 1), TXC_E2E_LLVM=0 to skip the LLVM path,
# TXC_KEEP=1 to keep the work folder.  TXC_E2E_LIGHT=1 (the sanitized run
# of .ci/run, where txc and libtxrt are what is checked): each schedule's
# C is still written by txc but compiled and run only when there is no
# LLVM path, and one random size set replaces -r's.  TXC_CUDA_ARCH
# (sm_90, sm_90a) compiles the cuda schedules for that architecture.
# Exit 0 pass, 1 fail, 77 skip.
set -u
caps=
nrandom=4
extra=
hargs=
kernel=
while getopts c:r:e:a:k: opt; do
	case $opt in
	c) caps=$OPTARG ;;
	r) nrandom=$OPTARG ;;
	e) extra="$extra$OPTARG
" ;;
	a) hargs=$OPTARG ;;
	k) kernel=$OPTARG ;;
	*) echo "usage: diffcheck.sh [-c CAPS] [-r N] [-e SET]... [-a ARGS] FILE.tx"; exit 99 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "diffcheck.sh: one .tx file expected"; exit 99; }
light=${TXC_E2E_LIGHT:-0}
[ "$light" = 1 ] && [ "$nrandom" -gt 1 ] && nrandom=1
tx=$1
: "${TXC:?TXC must name the txc binary}"
# cuda schedules run in libtxrt's emulator (TXC_E2E_CUDA=device: on the GPU,
# as tools/gpu-check.sh runs them); the harness copies the buffers to the
# device and back either way (-DTXC_CUDA_DEVICE)
if [ "${TXC_E2E_CUDA:-emulate}" = device ]; then TXRT_CUDA=device; else TXRT_CUDA=emulate; fi
export TXRT_CUDA
CC=${CC:-cc}
seed=${TXC_SEED:-1}
builddir=${abs_top_builddir:-.}
txcmp=${TXCMP:-$builddir/tests/tools/txcmp}
[ -x "$txcmp" ] || { echo "diffcheck.sh: $txcmp not built (make check builds it)"; exit 99; }
case $tx in /*) ;; *) tx=$(pwd)/$tx ;; esac
name=$(basename "$tx" .tx)

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-$name.XXXXXX") || exit 99
if [ "${TXC_KEEP:-0}" = 1 ]; then
	echo "work folder: $work"
else
	trap 'rm -rf "$work"' EXIT
fi

fails=0
ncmp=0
nrej=0
fail() { # MESSAGE [LOG]
	echo "FAIL: $1"
	if [ $# -ge 2 ]; then head -n 20 "$2" | sed 's/^/    | /'; fi
	fails=$((fails + 1))
}

# ---- what the file holds ------------------------------------------------
[ -n "$kernel" ] || kernel=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx" | head -n 1)
[ -n "$kernel" ] || { echo "diffcheck.sh: no kernel in $tx"; exit 99; }
# schedule names; "-" is the unnamed one
scheds=$(sed -n \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cpu.*/\1/p" \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}for[[:space:]]\{1,\}cpu.*/-/p" "$tx")
# cuda schedules: run by libtxrt's GPU emulator (TXRT_CUDA=emulate)
cscheds=$(sed -n \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/\1/p" \
	-e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$kernel[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/-/p" "$tx")

# The text of one schedule block.
block() { # NAME [TARGET]
	if [ "$1" = - ]; then
		pat="^[[:space:]]*schedule[[:space:]]+$kernel[[:space:]]+for[[:space:]]+${2:-cpu}"
	else
		pat="^[[:space:]]*schedule[[:space:]]+$kernel[[:space:]]+as[[:space:]]+$1[[:space:]]"
	fi
	awk -v pat="$pat" '$0 ~ pat { on = 1 } on { print } on && /}/ { exit }' "$tx"
}

# ---- builds ----------------------------------------------------------------
cd "$work" || exit 99
build_log=$work/build.log
# cc_link OUT SOURCE... : compiles and links, log on failure
cc_link() {
	out=$1
	shift
	# shellcheck disable=SC2086
	$CC -O1 -o "$out" "$@" -lm >"$build_log" 2>&1
}

if ! "$TXC" -k "$kernel" --emit=harness -o h.c "$tx" 2>txc.err; then
	fail "$name: txc --emit=harness failed"
	cat txc.err
	exit 1
fi
$CC -O1 -c -o h.o h.c >"$build_log" 2>&1 || { fail "$name: harness does not compile" "$build_log"; exit 1; }
if ! "$TXC" -k "$kernel" --no-schedule --emit=c -o ref.c "$tx" 2>txc.err; then
	fail "$name: txc --no-schedule --emit=c failed"
	cat txc.err
	exit 1
fi
cc_link ref ref.c h.o || { fail "$name: reference C does not compile" "$build_log"; exit 1; }

omp=no
echo 'int main(void){return 0;}' >omp.c
$CC -fopenmp -o omp omp.c >/dev/null 2>&1 && omp=yes

# The LLVM path: on when txc builds the reference as an object and libtxrt
# is built.
llvm=no
txrt=$builddir/rt/.libs/libtxrt.a
if [ "${TXC_E2E_LLVM:-1}" != 0 ] && [ -f "$txrt" ]; then
	if "$TXC" -k "$kernel" --no-schedule -o ref_l.o "$tx" 2>llvm.err; then
		if $CC -O1 -DTXC_LLVM -c -o hl.o h.c >"$build_log" 2>&1 &&
		    cc_link ref_l hl.o ref_l.o "$txrt" -lpthread -ldl; then
			llvm=yes
		else
			fail "$name: the LLVM reference does not link" "$build_log"
		fi
	else
		echo "note: LLVM path off: txc --no-schedule -o X.o failed:"
		head -n 5 llvm.err
	fi
fi

# llvm_build BIN WHAT [TXC-FLAGS...]: the schedule ($sflag, $tag) as an
# object, linked with libtxrt into BIN, which joins the builds compared.
llvm_build() {
	bin=$1 what=$2
	shift 2
	# shellcheck disable=SC2086
	if ! "$TXC" -k "$kernel" $sflag "$@" -o "$bin.o" "$tx" 2>txc.err; then
		fail "$name: schedule $tag: txc $what failed where --emit=c works"
		cat txc.err
	elif cc_link "$bin" ${harness_o:-hl.o} "$bin.o" "$txrt" -lpthread -ldl; then
		bins="$bins $bin"
	else
		fail "$name: schedule $tag: the object (txc $what) does not link with libtxrt" "$build_log"
	fi
}

bins="ref_l"
[ $llvm = yes ] || bins=
for s in $scheds; do
	if [ "$s" = - ]; then sflag=; tag=default; else sflag="-s $s"; tag=$s; fi
	block "$s" >"$tag.sched"
	# shellcheck disable=SC2086
	if ! "$TXC" -k "$kernel" $sflag --emit=c -o "$tag.c" "$tx" 2>txc.err; then
		fail "$name: schedule $tag: txc --emit=c failed"
		cat txc.err
		continue
	fi
	if [ "$light" = 1 ] && [ $llvm = yes ]; then
		:   # the C is written; the object below is what runs
	elif cc_link "$tag" "$tag.c" h.o; then bins="$bins $tag"; else fail "$name: schedule $tag: C does not compile" "$build_log"; fi
	if [ $omp = yes ] && [ "$light" != 1 ] && grep -q '\.parallel(' "$tag.sched"; then
		if cc_link "$tag.omp" -fopenmp "$tag.c" h.o; then bins="$bins $tag.omp"
		else fail "$name: schedule $tag: C does not compile with -fopenmp" "$build_log"; fi
	fi
	if [ $llvm = yes ]; then
		llvm_build "$tag.llvm" "-o X.o"
		# a tensorized schedule once more with its micro-kernels in the
		# object (the first build calls libtxrt's prebuilt ones where it can)
		if grep -q '\.tensorize(' "$tag.sched"; then
			llvm_build "$tag.local" "--local-intrinsics" --local-intrinsics
		fi
	fi
done
# cuda schedules: the host object with its kernels, run by libtxrt's
# emulator on the host's memory (its race and bounds checks fail a run);
# where ptxas is found, their PTX must assemble for sm_80 and sm_90
# (TXC_CUDA_ARCH=sm_90 or sm_90a compiles them with --cuda-arch for Hopper's
# plans: assembled for sm_90 and sm_90a, or sm_90a alone)
carch=${TXC_CUDA_ARCH:+--cuda-arch=$TXC_CUDA_ARCH}
case ${TXC_CUDA_ARCH:-} in
sm_90a) ptx_archs=sm_90a ;;
sm_9*) ptx_archs="sm_90 sm_90a" ;;
*) ptx_archs="sm_80 sm_90" ;;
esac
ptxas=$(command -v ptxas 2>/dev/null || true)
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
# and where nvcc is found, the CUDA C of --emit=cuda must compile (TXC_E2E_NVCC=0: no)
nvcc=
# (not for Hopper's plans: --emit=cuda writes no wgmma or TMA)
if [ "${TXC_E2E_NVCC:-1}" != 0 ] && [ -z "${TXC_CUDA_ARCH:-}" ]; then
	nvcc=$(command -v nvcc 2>/dev/null || true)
	[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; }
fi
for s in $cscheds; do
	[ $llvm = yes ] || break
	if [ ! -f hd.o ] && ! $CC -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -c -o hd.o h.c >"$build_log" 2>&1; then
		fail "$name: the harness does not compile with -DTXC_CUDA_DEVICE" "$build_log"
		break
	fi
	harness_o=hd.o
	if [ "$s" = - ]; then sflag=; tag=cuda; else sflag="-s $s"; tag=$s; fi
	block "$s" cuda >"$tag.sched"
	# shellcheck disable=SC2086
	llvm_build "$tag.gpu" "--target=cuda $carch -o X.o" --target=cuda $carch
	harness_o=
	if [ -n "$ptxas" ]; then
		# shellcheck disable=SC2086
		if ! "$TXC" -k "$kernel" $sflag --target=cuda $carch --emit=ptx -o "$tag.ptx" "$tx" 2>txc.err; then
			fail "$name: schedule $tag: txc --emit=ptx failed"
			cat txc.err
		else
			for arch in $ptx_archs; do
				"$ptxas" -arch=$arch -o "$tag.$arch.cubin" "$tag.ptx" >"$build_log" 2>&1 ||
				    fail "$name: schedule $tag: ptxas -arch=$arch rejects the PTX" "$build_log"
			done
		fi
	fi
	if [ -n "$nvcc" ]; then
		# shellcheck disable=SC2086
		if ! "$TXC" -k "$kernel" $sflag --target=cuda $carch --emit=cuda -o "$tag.cu" "$tx" 2>txc.err; then
			fail "$name: schedule $tag: txc --emit=cuda failed"
			cat txc.err
		elif ! "$nvcc" -c -arch="${TXC_CUDA_ARCH:-sm_80}" -o "$tag.cu.o" "$tag.cu" >"$build_log" 2>&1; then
			fail "$name: schedule $tag: nvcc rejects the CUDA C of --emit=cuda" "$build_log"
		fi
	fi
done

# ---- size sets -----------------------------------------------------------
sizes=$(./ref --params | sed -n 's/^sizes://p')
factors=$(grep -E '\.(split|tile)\(' "$tx" | sed 's/tail *= *[a-z_]*//g' |
	grep -oE '[(,][[:space:]]*[0-9]+' | tr -dc '0-9\n')
sets=$(awk -v sizes="$sizes" -v caps="$caps" -v factors="$(echo $factors)" \
    -v nrandom="$nrandom" -v seed="$seed" -v name="$name" '
function isprime(n,  d) { if (n < 2) return 0; for (d = 2; d * d <= n; d++) if (n % d == 0) return 0; return 1 }
BEGIN {
	n = split(sizes, sz, " ")
	if (n == 0) { print " "; exit }
	for (i = 1; i <= n; i++) { lo[sz[i]] = 1; hi[sz[i]] = 24 }
	m = split(caps, cs, " ")
	for (i = 1; i <= m; i++) {
		split(cs[i], kv, "="); split(kv[2], rg, ":")
		lo[kv[1]] = rg[1] + 0; hi[kv[1]] = (rg[2] == "" ? rg[1] : rg[2]) + 0
	}
	maxf = 1
	m = split(factors, fs, " ")
	for (i = 1; i <= m; i++) if (fs[i] + 0 > maxf) maxf = fs[i] + 0
	p = maxf + 1
	while (!isprime(p)) p++
	s = ""; for (i = 1; i <= n; i++) { v = lo[sz[i]] > 1 ? lo[sz[i]] : 1; s = s sz[i] "=" v " " }
	print s
	s = ""
	for (i = 1; i <= n; i++) {
		v = p
		if (v > hi[sz[i]]) { v = hi[sz[i]]; while (v > lo[sz[i]] && !isprime(v)) v-- }
		s = s sz[i] "=" v " "
	}
	print s
	h = 0; for (i = 1; i <= length(name); i++) h = (h * 31 + index("abcdefghijklmnopqrstuvwxyz0123456789_", substr(name, i, 1))) % 100000
	srand(seed * 100003 + h)
	for (k = 0; k < nrandom; k++) {
		s = ""
		for (i = 1; i <= n; i++) {
			a = lo[sz[i]]; b = hi[sz[i]]; r = rand()
			if (r < 0.15) v = a
			else if (r < 0.3) v = b
			else v = a + int(rand() * (b - a + 1))
			s = s sz[i] "=" v " "
		}
		print s
	}
}')
sets="$sets
$extra"

# ---- argument checks (NULL tensors, negative sizes), once per build ---------
set1=$(echo "$sets" | head -n 1)
nargf=0
argmsg=
for b in ref $bins; do
	# shellcheck disable=SC2086
	./$b $set1 $hargs checkargs=2 >run.log 2>&1
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then
		nargf=$((nargf + 1))
		[ -n "$argmsg" ] || argmsg=$(head -n 3 run.log)
	fi
done
if [ $nargf -gt 0 ]; then
	fail "$name: the argument checks fail in $nargf of $(($(echo $bins | wc -w) + 1)) builds (the first messages follow)"
	echo "$argmsg"
fi

# ---- runs -------------------------------------------------------------------
# a build that failed once is not run again (its first failure says enough)
dead=" "
okb=" "
nsets=0
iset=0
OLDIFS=$IFS
IFS='
'
for set in $sets; do
	IFS=$OLDIFS
	nsets=$((nsets + 1))
	iset=$((iset + 1))
	hseed=$((seed * 1000 + iset))
	# shellcheck disable=SC2086
	./ref $set $hargs seed=$hseed out=ref.out >run.log 2>&1
	rrc=$?
	if [ $rrc -ne 0 ] && [ $rrc -ne 5 ]; then
		fail "$name: reference fails at $set (exit $rrc)"
		cat run.log
		continue
	fi
	for b in $bins; do
		case $dead in *" $b "*) continue ;; esac
		tag=${b%%.*}
		[ "$b" = ref_l ] && tag=
		# shellcheck disable=SC2086
		./$b $set $hargs seed=$hseed out=out.bin poison=0x5a >run.log 2>&1
		rc=$?
		ncmp=$((ncmp + 1))
		if [ $rrc -eq 5 ]; then
			[ $rc -eq 5 ] || { fail "$name: $b at $set: exit $rc; the reference rejected these sizes (5)"; cat run.log; }
			continue
		fi
		if [ $rc -eq 12 ] || [ $rc -eq 13 ]; then
			if [ -n "$tag" ] && grep -qE 'exact|shift_inward' "$tag.sched"; then
				nrej=$((nrej + 1))
				continue
			fi
		fi
		if [ $rc -ne 0 ]; then
			dead="$dead$b "
			fail "$name: $b at $set seed=$hseed: harness exit $rc"
			cat run.log
			[ -n "$tag" ] && sed 's/^/    /' "$tag.sched"
			continue
		fi
		if ! "$txcmp" ref.out out.bin >cmp.log 2>&1; then
			dead="$dead$b "
			fail "$name: $b differs from the unscheduled kernel at $set seed=$hseed"
			[ -n "$tag" ] && sed 's/^/    /' "$tag.sched"
			head -n 15 cmp.log
		else
			case $okb in *" $b "*) ;; *) okb="$okb$b " ;; esac
		fi
	done
	IFS='
'
done
IFS=$OLDIFS

# Every build must have matched at least once: a schedule whose tail
# strategy rejects every size set tested nothing.
if [ "$sizes" != "" ]; then
	for b in $bins; do
		case "$dead$okb" in *" $b "*) continue ;; esac
		fail "$name: $b rejected every size set; give diffcheck.sh one that suits its tail strategy (-e)"
	done
fi

nb=$(echo $bins | wc -w)
echo "$name: $(echo $scheds $cscheds | wc -w) schedules, $nb builds (llvm: $llvm, openmp: $omp), $nsets size sets, $ncmp runs, $nrej size rejections, $fails failures$( [ "$dead" = " " ] || echo " (stopped after a failure:$dead)")"
[ $fails -eq 0 ]
