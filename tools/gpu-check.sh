#!/bin/sh
# gpu-check.sh: the cuda target on a machine with an NVIDIA GPU.
#
#   tools/gpu-check.sh [--build-only] [BUILD_DIR]
#
# Run from the source tree after building txc (BUILD_DIR defaults to the
# current directory's build, the source tree itself for an in-tree build).
# Four parts, each printing what it ran:
#
#   1. the CUDA suite on the GPU: every cuda schedule of tests/run/*.tx
#      and stdlib/*.tx through tests/run/diffcheck.sh with
#      TXC_E2E_CUDA=device: the harness copies its buffers to the GPU,
#      the kernels run there, and the results must equal the unscheduled
#      kernel's on the CPU, on random data and odd sizes;
#   2. compute-sanitizer's memcheck, racecheck and synccheck on the
#      stdlib's cuda schedules and the tests' (each kernel once, at odd
#      sizes); any report fails;
#   3. bench/gpu_gemm.cu: txc's SIMT sgemm (bench/kernels/sgemm_cuda.tx)
#      beside cuBLAS SGEMM at 4096^3, and that file's second plan
#      (schedule sgemm_cuda as v4, linked as v4_sgemm_cuda), and txc's tensor-core hgemm
#      (bench/kernels/hgemm_cuda.tx) beside cuBLAS HGEMM, and its bf16
#      twin (bench/kernels/bgemm_cuda.tx) beside cuBLAS's bf16 GemmEx,
#      and both in 128 x 128 tiles of 8 warps (hgemm128_cuda.tx,
#      bgemm128_cuda.tx), and on a Hopper GPU (compute capability 9.x)
#      the plans of that generation: hgemm128_tma_cuda.tx for sm_90,
#      hgemm_sm90a_cuda.tx, bgemm_sm90a_cuda.tx (wgmma) and
#      hgemm_sm90a_tma_cuda.tx (wgmma and TMA) for sm_90a; with the GPU's
#      name (GPU_GEMM_SIZES='M N K' changes the size);
#      twice: the kernels as `txc -o` writes them for any size, and
#      compiled with the sizes fixed (-D), as a user may when they are known
#      (GPU_GEMM_FIXED_ONLY=1: only that).
#   4. txc tune --target=cuda on examples/template_cuda.tx (the template
#      of part 3's sgemm: its default point is that hand-written
#      schedule) at M=N=K=2048, 40 trials (GPU_TUNE_SIZE, GPU_TUNE_TRIALS
#      change them), then the chosen point beside the default in one txc
#      bench run.
#
#   5. (only when asked for) Nsight Compute's sections on part 3's
#      kernels with the sizes fixed: throughput, occupancy, stalls.
#   6. (only when asked for) variants of part 3's plans (the table
#      `variants` below: deeper k steps, a fourth slot, taller blocks,
#      larger SIMT tiles, a wgmma group in flight over each k step,
#      cp.async slots for the sgemm's v4 plan), each beside cuBLAS with
#      the sizes fixed.
#      --build-only checks each in the emulator.
#
# GPU_CHECK_PARTS='4' (a list of part numbers) runs only those parts; each
# job of parts 1 and 2 runs under timeout (GPU_CHECK_JOB_TIMEOUT seconds,
# default 300), as part 3's benchmark does, so a kernel that never ends
# fails instead of holding the machine.
#
# --build-only builds what part 3 and the device harness need and runs
# nothing (make check does this where the CUDA toolkit is installed, so
# that the script keeps building on machines without a GPU).  Exit 0 when
# everything passed, 1 on a failure, 77 when there is no GPU (or, with
# --build-only, no CUDA toolkit).
set -u
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
srcdir=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "${1:-${abs_top_builddir:-$srcdir}}" && pwd)
TXC=${TXC:-$top/txc}
txrt=$top/rt/.libs/libtxrt.a
CC=${CC:-cc}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$(command -v nvcc 2>/dev/null || echo "$cuda/bin/nvcc")
sanitizer=$(command -v compute-sanitizer 2>/dev/null || echo "$cuda/bin/compute-sanitizer")
[ -x "$TXC" ] && [ -f "$txrt" ] || { echo "gpu-check: build txc first (no $TXC or $txrt)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/txc-gpu.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# want N: part N is among $GPU_CHECK_PARTS (default: all four); the
# bodies of parts 1 to 3 are not indented under their `if want N`
want() { case " ${GPU_CHECK_PARTS:-1 2 3 4} " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- part 3's program, and a device harness (built everywhere it can be) --
# build_gemm [NAME TXC-FLAGS...]: $work/NAME (default gpu_gemm) from
# bench/gpu_gemm.cu and its kernels compiled with TXC-FLAGS
build_gemm() {
	prog=${1:-gpu_gemm}
	[ $# -gt 0 ] && shift
	# Hopper's plans (TMA for sm_90, wgmma for sm_90a) where the GPU is one
	# (compute capability 9.x), or where nothing runs (--build-only)
	kernels="sgemm: hgemm: bgemm: hgemm128: bgemm128:"
	[ "$hopper" = 1 ] && kernels="$kernels hgemm128_tma:sm_90 hgemm_sm90a:sm_90a \
	    bgemm_sm90a:sm_90a hgemm_sm90a_tma:sm_90a"
	objs=
	for ga in $kernels; do
		g=${ga%%:*} a=${ga#*:}
		"$TXC" --target=cuda ${a:+--cuda-arch=$a} "$@" "${kdir:-$srcdir/bench/kernels}/${g}_cuda.tx" \
		    -o "$work/$prog-$g.o" ||
		    { fail "txc --target=cuda ${a:+--cuda-arch=$a }$* bench/kernels/${g}_cuda.tx"; return 1; }
		objs="$objs $work/$prog-$g.o"
	done
	# the SIMT sgemm's other plan (schedule sgemm_cuda as v4: 128 x 128
	# blocks, 8 x 8 a thread, ld.shared.v4 operands), as v4_sgemm_cuda,
	# which bench/gpu_gemm.cu times beside the shipped one
	"$TXC" --target=cuda -s v4 --prefix=v4_ "$@" "${kdir:-$srcdir/bench/kernels}/sgemm_cuda.tx" \
	    -o "$work/$prog-sgemm_v4.o" ||
	    { fail "txc --target=cuda -s v4 --prefix=v4_ $* bench/kernels/sgemm_cuda.tx"; return 1; }
	objs="$objs $work/$prog-sgemm_v4.o"
	# nvcc compiles, $CC links (libtxrt may be built with sanitizers)
	# shellcheck disable=SC2086
	"$nvcc" -O2 -I"$srcdir/rt" -c -o "$work/gpu_gemm.o" "$srcdir/bench/gpu_gemm.cu" \
	    >"$work/nvcc.log" 2>&1 &&
	    $CC -o "$work/$prog" "$work/gpu_gemm.o" $objs "$txrt" \
	    -L"$cuda/lib64" -lcublas -lcudart -lstdc++ -lpthread -ldl -lm >>"$work/nvcc.log" 2>&1 ||
	    { fail "bench/gpu_gemm.cu does not build"; cat "$work/nvcc.log"; return 1; }
	"$TXC" -k sgemm_cuda --emit=harness -o "$work/h.c" "$srcdir/bench/kernels/sgemm_cuda.tx" &&
	    $CC -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -o "$work/h" "$work/h.c" "$work/$prog-sgemm.o" \
	    "$txrt" -lpthread -ldl -lm >"$work/cc.log" 2>&1 ||
	    { fail "the device harness does not build"; cat "$work/cc.log"; return 1; }
	return 0
}

# Part 6's variants of part 3's plans, made from the shipped files by sed
# (so that they follow them, and a stale one fails: its sed must change
# the file): NAME|KERNELS|SED, KERNELS among part 3's (hgemm_sm90a for
# bench/kernels/hgemm_sm90a_cuda.tx).  Each is a question the figures of
# the shipped plans raised, to answer on the next GPU: deeper k steps
# (fewer barriers and waits a FLOP, 128-byte rows for A), a fourth slot,
# a taller block of four warpgroups sharing B's tile, larger SIMT tiles,
# and one wgmma group kept in flight over each step of k (defer: the wait
# for the step before, wgmma.wait_group 1; a fourth slot keeps the fills
# two steps ahead, 64 KB of shared memory at k 32, 128 KB at k 64;
# defer3: three slots, one step ahead, the shipped 48 KB and 96 KB); for
# the sgemm's v4 plan (the seds limited to its schedule block), its
# tiles in 2 or 3 slots filled by cp.async (B's; A's transposing copy
# stays element by element), k steps of 16, and A's rows unpadded (128
# floats: what the padding to 132 saves); and for hgemm_sm90a_tma, B's
# tiles by TMA too (tmab: two boxes a slot, one a 128-byte panel, so no
# thread copies in the k loop), with a fourth slot or a deferred wait, and
# warp-specialised (wspec: a third warpgroup issues the loads, slots
# released on "empty" mbarriers, no bar.sync in the k loop; 384 threads
# of up to 139 registers: one block an SM where the shipped plan has two;
# wspec_k64: k steps of 64, 97 KB of shared memory).
variants='k64|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma hgemm128 bgemm128|s/Cf\.split(k, 32)/Cf.split(k, 64)/
p4|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/\.pipeline(3)/.pipeline(4)/
defer|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/\.pipeline(3)/.pipeline(4, defer = 1)/
defer3|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/\.pipeline(3)/.pipeline(3, defer = 1)/
defer_k64|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/Cf\.split(k, 32)/Cf.split(k, 64)/;s/\.pipeline(3)/.pipeline(4, defer = 1)/
defer3_k64|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/Cf\.split(k, 32)/Cf.split(k, 64)/;s/\.pipeline(3)/.pipeline(3, defer = 1)/
tmab|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/
tmab_p4|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(4)/
tmab_defer|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(4, defer = 1)/
wspec|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(3, producer = warpgroup)/
wspec_p4|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(4, producer = warpgroup)/
wspec_defer|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(4, defer = 1, producer = warpgroup)/
wspec_k64|hgemm_sm90a_tma|s/Bs\.swizzle()/Bs.swizzle()\x3b\n  Bs.tma()/;s/\.pipeline(3)/.pipeline(3, producer = warpgroup)/;s/Cf\.split(k, 32)/Cf.split(k, 64)/
m256|hgemm_sm90a bgemm_sm90a hgemm_sm90a_tma|s/C\.tile(i, j, 128, 128/C.tile(i, j, 256, 128/;s/Cf\.split(k, 32)/Cf.split(k, 64)/
sg128|sgemm|s/C\.tile(i, j, 64, 64/C.tile(i, j, 128, 128/;s/C\.split(ii, 4)/C.split(ii, 8)/;s/C\.split(ji, 4)/C.split(ji, 8)/
sg128k8|sgemm|s/C\.tile(i, j, 64, 64/C.tile(i, j, 128, 128/;s/C\.split(ii, 4)/C.split(ii, 8)/;s/C\.split(ji, 4)/C.split(ji, 8)/;s/Cl\.split(k, 16)/Cl.split(k, 8)/
sg128x64|sgemm|s/C\.tile(i, j, 64, 64/C.tile(i, j, 128, 64/;s/C\.split(ii, 4)/C.split(ii, 8)/
v4p2|sgemm|/as v4 for/,/^}/s/As\.double_buffer()/As.pipeline(2)/;/as v4 for/,/^}/s/Bs\.double_buffer()/Bs.pipeline(2)/
v4p3|sgemm|/as v4 for/,/^}/s/As\.double_buffer()/As.pipeline(3)/;/as v4 for/,/^}/s/Bs\.double_buffer()/Bs.pipeline(3)/
v4k16|sgemm|/as v4 for/,/^}/s/Cl\.split(k, 8)/Cl.split(k, 16)/
v4pad0|sgemm|/as v4 for/,/^}/s/As\.storage_align(ax1, 32, 4)/As.storage_align(ax1, 32, 0)/'

# file_arch FILE: the --cuda-arch a file's cuda schedules need, as
# tests/unit/tcore_shipped.sh reads it: sm_90a where they tensorize with
# wgmma, sm_90 where they load tiles by TMA, else nothing (the default);
# `skip` for those two where the GPU is not a Hopper one
file_arch() {
	a=
	! grep -Eq '\.tma\(\)' "$1" || a=sm_90
	! grep -Eq 'tensorize\([^)]*wgmma_' "$1" || a=sm_90a
	[ -z "$a" ] || [ "$hopper" = 1 ] || a=skip
	echo "$a"
}

# make_variant NAME: $work/var-NAME, part 3's kernel files with NAME's
# changed ($vks: those kernels); fails where a sed changes nothing
make_variant() {
	line=$(printf '%s\n' "$variants" | grep "^$1|") || { fail "no variant $1"; return 1; }
	vks=$(echo "$line" | cut -d'|' -f2)
	ed=$(echo "$line" | cut -d'|' -f3-)
	d=$work/var-$1
	rm -rf "$d"
	mkdir -p "$d"
	cp "$srcdir"/bench/kernels/*_cuda.tx "$d"/
	for k in $vks; do
		f=$srcdir/bench/kernels/${k}_cuda.tx
		# each of the seds (;-separated) must change the file
		rest=$ed
		while [ -n "$rest" ]; do
			e=${rest%%;*}
			if [ "$e" = "$rest" ]; then rest=; else rest=${rest#*;}; fi
			! sed "$e" "$f" | cmp -s - "$f" ||
			    { fail "variant $1: '$e' no longer changes bench/kernels/${k}_cuda.tx"; return 1; }
		done
		sed "$ed" "$f" >"$d/${k}_cuda.tx"
	done
}

# check_variant NAME: its changed kernels in libtxrt's emulator against
# the unscheduled kernel (txc bench, sizes fixed), at sizes of partial
# tiles and several k steps; every cuda schedule of the file (the
# unnamed one and those named, as sgemm's v4)
check_variant() {
	make_variant "$1" || return 1
	for k in $vks; do
		f=$work/var-$1/${k}_cuda.tx
		a=$(file_arch "$f")
		names=$(sed -n 's/^[[:space:]]*schedule[[:space:]]\{1,\}[A-Za-z_0-9]\{1,\}[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_0-9]\{1,\}\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/\1/p' "$f")
		out=$(TXC_STDLIB="$srcdir/stdlib" "$TXC" bench "$f" --target=cuda \
		    ${a:+--cuda-arch=$a} --schedules="$(echo default $names | tr ' ' ,)" --runs=1 \
		    --warmup=0 -D M=130 -D N=136 -D K=200 2>&1)
		for n in default $names; do
			echo "$out" | grep -Eq "^  $n +emulated +- +0 " ||
			    { fail "variant $1: ${k}_cuda.tx ($n) in the emulator"; echo "$out" | head -5; }
		done
	done
}

hopper=1
if [ $build_only = 1 ]; then
	if [ ! -x "$nvcc" ] || [ ! -f "$cuda/include/cublas_v2.h" ]; then
		echo "SKIP: no CUDA toolkit with cuBLAS here ($cuda)"
		exit 77
	fi
	build_gemm
	# part 6's variants: their seds still apply, and they compute right
	for v in $(printf '%s\n' "$variants" | cut -d'|' -f1); do
		check_variant "$v"
	done
	# the emulator runs the device harness as a GPU would (copies included)
	if [ $fails -eq 0 ]; then
		TXRT_CUDA=emulate "$work/h" M=67 N=45 K=19 >/dev/null 2>"$work/run.log" ||
		    fail "the device harness in the emulator: $(head -3 "$work/run.log")"
	fi
	[ $fails -eq 0 ] && echo "gpu-check --build-only: bench/gpu_gemm.cu and the device harness build"
	[ $fails -eq 0 ]
	exit
fi

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU here (nvidia-smi -L fails)"
	exit 77
fi
echo "gpu-check: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | head -1)"
case $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1) in
9.*) hopper=1 ;;
*) hopper=0 ;;
esac

# Parts 1 and 2 run as jobs, $GPU_CHECK_JOBS at a time (default: the number
# of processors); each job writes its log and its verdict in $work/jobs.
jobs=${GPU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 4)}
mkdir -p "$work/jobs"
njobs=0
# add_job DESCRIPTION COMMAND...: a job that passes when COMMAND exits 0
add_job() {
	njobs=$((njobs + 1))
	d=$1
	shift
	{
		echo "cd \"$work/jobs\" || exit 1"
		printf '%s\n' "$*"
	} >"$work/jobs/$njobs.sh"
	printf '%s\n' "$d" >"$work/jobs/$njobs.what"
}
# run_jobs: runs the jobs added since the last call; prints one line each
run_jobs() {
	i=$first
	# each job's line as it ends (a run cut short by timeout keeps them)
	while [ $i -le $njobs ]; do echo $i; i=$((i + 1)); done |
	    xargs -P "$jobs" -I@ sh -c '
		timeout "$1" sh "$0/@.sh" >"$0/@.log" 2>&1
		rc=$?
		echo $rc >"$0/@.rc"
		if [ $rc = 0 ]; then
			printf "   ok   %s: %s\n" "$(cat "$0/@.what")" "$(tail -n 1 "$0/@.log")"
		else
			printf "FAIL: %s (exit %s)\n%s\n" "$(cat "$0/@.what")" $rc \
			    "$(tail -n 25 "$0/@.log" | sed "s/^/      /")"
		fi' "$work/jobs" "${GPU_CHECK_JOB_TIMEOUT:-300}"
	i=$first
	while [ $i -le $njobs ]; do
		[ "$(cat "$work/jobs/$i.rc" 2>/dev/null)" = 0 ] || fails=$((fails + 1))
		i=$((i + 1))
	done
	first=$((njobs + 1))
}
first=1

# ---- 1. the suite on the GPU ------------------------------------------------
if want 1; then
echo "== 1. cuda schedules on the GPU against the CPU ($jobs at a time)"
export TXC abs_top_builddir="$top" CC
for tx in "$srcdir"/tests/run/*.tx "$srcdir"/stdlib/*.tx "$srcdir"/bench/kernels/*.tx; do
	grep -Eq '^[[:space:]]*schedule[[:space:]].*for[[:space:]]+cuda' "$tx" || continue
	arch=$(file_arch "$tx")
	[ "$arch" != skip ] || continue
	# part 3's GEMMs also at sizes of several blocks, partial tiles and
	# k steps (diffcheck's own sizes stop at 24)
	sizes=
	case $tx in */bench/kernels/*) sizes="-c 'M=1:300 N=1:300 K=1:200' -e 'M=257 N=263 K=129'" ;; esac
	for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
		grep -Eq "^[[:space:]]*schedule[[:space:]]+$k([[:space:]]+as[[:space:]]+[A-Za-z_0-9]+)?[[:space:]]+for[[:space:]]+cuda" "$tx" ||
		    continue
		add_job "$(basename "$tx") $k on the GPU${arch:+ ($arch)}" \
		    "TXC_E2E_CUDA=device TXC_CUDA_ARCH=$arch sh '$srcdir/tests/run/diffcheck.sh' -k $k -r 2 $sizes '$tx'"
	done
done
run_jobs
fi   # part 1

# ---- 2. compute-sanitizer -------------------------------------------------
if want 2; then
echo "== 2. compute-sanitizer memcheck, racecheck, synccheck ($jobs at a time)"
if [ ! -x "$sanitizer" ]; then
	fail "no compute-sanitizer ($sanitizer)"
else
	for tx in "$srcdir"/stdlib/*.tx "$srcdir"/tests/run/cuda_*.tx "$srcdir"/bench/kernels/*_cuda.tx; do
		arch=$(file_arch "$tx")
		[ "$arch" != skip ] || continue
		for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
			for s in $(sed -n -e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$k[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/\1/p" \
			    -e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$k[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/-/p" "$tx"); do
				if [ "$s" = - ]; then sflag=; else sflag="-s $s"; fi
				b=$work/san-$(basename "$tx" .tx)-$k-${s#-}
				# one job a schedule, built in the job (in parallel): the
				# object (a schedule txc refuses for this GPU is passed
				# over) and the harness; then odd sizes: every size
				# parameter 37, else 7, else 3, with the scalars of seed 1,
				# 2 or 3: the first the kernel accepts when run without the
				# sanitizer (a conv's filter of 37 outgrows its image of
				# 37); then the three tools, each of which must be silent
				add_job "compute-sanitizer: $(basename "$tx") $k${sflag:+ $s}${arch:+ ($arch)}" "
				    '$TXC' -k $k $sflag --target=cuda ${arch:+--cuda-arch=$arch} -o '$b.o' '$tx' 2>/dev/null ||
				        { echo 'txc refuses this schedule here: passed over'; exit 0; }
				    '$TXC' -k $k --emit=harness -o '$b.c' '$tx' &&
				        $CC -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -o '$b' '$b.c' '$b.o' '$txrt' \
				        -lpthread -ldl -lm || { echo 'the harness does not build'; exit 1; }
				    sizes=\$('$b' --params | sed -n 's/^sizes://p')
				    ok=
				    for n in 37 7 3; do
				        for seed in 1 2 3; do
				            a=\"seed=\$seed\"
				            for p in \$sizes; do a=\"\$a \$p=\$n\"; done
				            if TXRT_CUDA=device '$b' \$a >/dev/null 2>&1; then ok=1; break 2; fi
				        done
				    done
				    [ -n \"\$ok\" ] || { echo 'no size set runs on the GPU'; exit 1; }
				    for tool in memcheck racecheck synccheck; do
				        echo \"\$tool at \$a\"
				        TXRT_CUDA=device '$sanitizer' --tool \$tool --error-exitcode 99 '$b' \$a || exit 1
				    done
				    echo \"memcheck, racecheck and synccheck clean at \$a\""
			done
		done
	done
	run_jobs
fi
fi   # part 2

# ---- 3. beside cuBLAS ----------------------------------------------------------
# shellcheck disable=SC2086
set -- ${GPU_GEMM_SIZES:-4096 4096 4096}
if want 3; then
echo "== 3. sgemm beside cuBLAS"
echo "   the kernels as txc -o writes them (any size)"
# (under timeout: a kernel that never finishes fails the part, and the
# lines of the kernels before it stay)
if [ -n "${GPU_GEMM_FIXED_ONLY:-}" ]; then
	echo "   (passed over: GPU_GEMM_FIXED_ONLY)"
elif build_gemm; then
	timeout 120 "$work/gpu_gemm" "$@" 10 || fail "bench/gpu_gemm.cu (exit $?)"
fi
echo "   the kernels compiled for these sizes (txc -D M=$1 -D N=$2 -D K=$3)"
if build_gemm gpu_gemm_fixed -D "M=$1" -D "N=$2" -D "K=$3"; then
	timeout 120 "$work/gpu_gemm_fixed" "$@" 10 || fail "bench/gpu_gemm.cu, sizes fixed (exit $?)"
fi
fi   # part 3

# ---- 4. txc tune on the GPU --------------------------------------------------
# The SIMT sgemm's template (examples/template_cuda.tx: its default point is
# bench/kernels/sgemm_cuda.tx's hand-written schedule) tuned on the GPU,
# then the chosen point and the default timed side by side by txc bench in
# one run.  Each candidate is checked once against the unscheduled kernel,
# which runs on the CPU (about half a minute at 2048^3, in the tuner's
# worker and again in txc bench, and after any worker restart).
if want 4; then
	n=${GPU_TUNE_SIZE:-2048}
	trials=${GPU_TUNE_TRIALS:-40}
	echo "== 4. txc tune --target=cuda: examples/template_cuda.tx at M=N=K=$n, $trials trials"
	tsizes="-D M=$n -D N=$n -D K=$n"
	# shellcheck disable=SC2086
	if "$TXC" tune "$srcdir/examples/template_cuda.tx" --target=cuda $tsizes --trials="$trials" \
	    --log="$work/tune.jsonl" -o "$work/tuned.tx" >"$work/tune.out" \
	    2>"$work/tune.err"; then
		sed 's/^/   /' "$work/tune.out"
		echo "   the chosen point beside the hand-written default (txc bench, one run):"
		# shellcheck disable=SC2086
		"$TXC" bench --target=cuda $tsizes -k sgemm --schedules=default,tuned \
		    "$work/tuned.tx" >"$work/tune-bench.out" 2>&1 || fail "txc bench of the tuned sgemm"
		sed 's/^/   /' "$work/tune-bench.out"
	else
		fail "txc tune --target=cuda (exit $?)"
		tail -n 25 "$work/tune.err" | sed 's/^/      /'
	fi
fi

# ---- 6. variants beside cuBLAS ------------------------------------------------
# Not in the default list (GPU_CHECK_PARTS='3 6'): each of $variants built
# into its own gpu_gemm with the sizes fixed, all part 3's kernels with the
# variant's in place of the shipped ones, and run (GPU_GEMM_VARIANTS='k64
# p4' picks some).
if want 6; then
	echo "== 6. variants of part 3's plans beside cuBLAS (sizes fixed)"
	for v in ${GPU_GEMM_VARIANTS:-$(printf '%s\n' "$variants" | cut -d'|' -f1)}; do
		make_variant "$v" || continue
		echo "   variant $v ($(printf '%s\n' "$variants" | grep "^$v|" | cut -d'|' -f3-)):" \
		    "$(echo $vks)"
		kdir=$work/var-$v
		if build_gemm "gpu_gemm_$v" -D "M=$1" -D "N=$2" -D "K=$3"; then
			timeout 120 "$work/gpu_gemm_$v" "$@" 10 || fail "variant $v (exit $?)"
		fi
		kdir=
	done
fi

# ---- 5. Nsight Compute on part 3's kernels ----------------------------------
# Not in the default list (GPU_CHECK_PARTS='3 5'): ncu's speed of light,
# occupancy, launch and warp-state sections of each txc GEMM kernel at
# part 3's size (one timed run each; the entry points' _k0 kernels), to
# read where a slow one waits.
if want 5; then
	echo "== 5. ncu on the GEMM kernels"
	ncu=$(command -v ncu 2>/dev/null || echo "$cuda/bin/ncu")
	if [ ! -x "$ncu" ]; then
		fail "no ncu ($ncu)"
	elif [ -x "$work/gpu_gemm_fixed" ] || build_gemm gpu_gemm_fixed -D "M=$1" -D "N=$2" -D "K=$3"; then
		timeout 180 "$ncu" --kernel-name regex:'_cuda_k[0-9]' --launch-count 40 \
		    --section SpeedOfLight --section LaunchStats --section Occupancy \
		    --section WarpStateStats --section MemoryWorkloadAnalysis \
		    "$work/gpu_gemm_fixed" "$@" 1 >"$work/ncu.out" 2>&1 || fail "ncu (exit $?)"
		grep -Ev '^==PROF==|^ *-+ *-+|^ *$' "$work/ncu.out" | sed 's/^/   /'
	fi
fi

echo "gpu-check: $fails failure(s)"
[ $fails -eq 0 ]
