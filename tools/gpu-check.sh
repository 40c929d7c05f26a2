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
#      beside cuBLAS SGEMM at 4096^3, and txc's tensor-core hgemm
#      (bench/kernels/hgemm_cuda.tx) beside cuBLAS HGEMM, and its bf16
#      twin (bench/kernels/bgemm_cuda.tx) beside cuBLAS's bf16 GemmEx,
#      and both in 128 x 128 tiles of 8 warps (hgemm128_cuda.tx,
#      bgemm128_cuda.tx), and on a Hopper GPU (compute capability 9.x)
#      the plans of that generation: hgemm128_tma_cuda.tx for sm_90,
#      hgemm_sm90a_cuda.tx, bgemm_sm90a_cuda.tx (wgmma) and
#      hgemm_sm90a_tma_cuda.tx (wgmma and TMA) for sm_90a; with the GPU's
#      name (GPU_GEMM_SIZES='M N K' changes the size);
#      twice: the kernels as `txc -o` writes them for any size, and
#      compiled with the sizes fixed (-D), as a user may when they are known.
#   4. txc tune --target=cuda on examples/template_cuda.tx (the template
#      of part 3's sgemm: its default point is that hand-written
#      schedule) at M=N=K=2048, 40 trials (GPU_TUNE_SIZE, GPU_TUNE_TRIALS
#      change them), then the chosen point beside the default in one txc
#      bench run.
#
# GPU_CHECK_PARTS='4' (a list of part numbers) runs only those parts.
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
		"$TXC" --target=cuda ${a:+--cuda-arch=$a} "$@" "$srcdir/bench/kernels/${g}_cuda.tx" \
		    -o "$work/$prog-$g.o" ||
		    { fail "txc --target=cuda ${a:+--cuda-arch=$a }$* bench/kernels/${g}_cuda.tx"; return 1; }
		objs="$objs $work/$prog-$g.o"
	done
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

hopper=1
if [ $build_only = 1 ]; then
	if [ ! -x "$nvcc" ] || [ ! -f "$cuda/include/cublas_v2.h" ]; then
		echo "SKIP: no CUDA toolkit with cuBLAS here ($cuda)"
		exit 77
	fi
	build_gemm
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
	while [ $i -le $njobs ]; do echo $i; i=$((i + 1)); done |
	    xargs -P "$jobs" -I@ sh -c 'sh "$0/@.sh" >"$0/@.log" 2>&1; echo $? >"$0/@.rc"' "$work/jobs"
	i=$first
	while [ $i -le $njobs ]; do
		if [ "$(cat "$work/jobs/$i.rc")" = 0 ]; then
			echo "   ok   $(cat "$work/jobs/$i.what"): $(tail -n 1 "$work/jobs/$i.log")"
		else
			fail "$(cat "$work/jobs/$i.what")"
			tail -n 25 "$work/jobs/$i.log" | sed 's/^/      /'
		fi
		i=$((i + 1))
	done
	first=$((njobs + 1))
}
first=1

# ---- 1. the suite on the GPU ------------------------------------------------
if want 1; then
echo "== 1. cuda schedules on the GPU against the CPU ($jobs at a time)"
export TXC abs_top_builddir="$top" CC
for tx in "$srcdir"/tests/run/*.tx "$srcdir"/stdlib/*.tx; do
	grep -Eq '^[[:space:]]*schedule[[:space:]].*for[[:space:]]+cuda' "$tx" || continue
	for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
		grep -Eq "^[[:space:]]*schedule[[:space:]]+$k([[:space:]]+as[[:space:]]+[A-Za-z_0-9]+)?[[:space:]]+for[[:space:]]+cuda" "$tx" ||
		    continue
		add_job "$(basename "$tx") $k on the GPU" \
		    "TXC_E2E_CUDA=device sh '$srcdir/tests/run/diffcheck.sh' -k $k -r 2 '$tx'"
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
	for tx in "$srcdir"/stdlib/*.tx "$srcdir"/tests/run/cuda_*.tx; do
		for k in $(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$tx"); do
			for s in $(sed -n -e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$k[[:space:]]\{1,\}as[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/\1/p" \
			    -e "s/^[[:space:]]*schedule[[:space:]]\{1,\}$k[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/-/p" "$tx"); do
				if [ "$s" = - ]; then sflag=; else sflag="-s $s"; fi
				b=$work/san-$(basename "$tx" .tx)-$k-${s#-}
				# shellcheck disable=SC2086
				"$TXC" -k "$k" $sflag --target=cuda -o "$b.o" "$tx" 2>/dev/null || continue
				"$TXC" -k "$k" --emit=harness -o "$b.c" "$tx" &&
				    $CC -O1 -DTXC_LLVM -DTXC_CUDA_DEVICE -o "$b" "$b.c" "$b.o" "$txrt" \
				    -lpthread -ldl -lm >/dev/null 2>&1 || { fail "$tx $k $s: harness"; continue; }
				# odd sizes: every size parameter 37, else 7, else 3, with
				# the scalars of seed 1, 2 or 3: the first the kernel
				# accepts when run without the sanitizer (a conv's filter
				# of 37 outgrows its image of 37)
				sizes=$("$b" --params | sed -n 's/^sizes://p')
				cands=
				for n in 37 7 3; do
					for seed in 1 2 3; do
						a="seed=$seed"
						for p in $sizes; do a="$a $p=$n"; done
						cands="$cands '$a'"
					done
				done
				for tool in memcheck racecheck synccheck; do
					add_job "compute-sanitizer --tool $tool: $(basename "$tx") $k ${s#-}" \
					    "for a in $cands; do TXRT_CUDA=device '$b' \$a >/dev/null 2>&1 && break; done
					    echo \"sizes: \$a\"
					    TXRT_CUDA=device '$sanitizer' --tool $tool --error-exitcode 99 '$b' \$a"
				done
			done
		done
	done
	run_jobs
fi
fi   # part 2

# ---- 3. beside cuBLAS ----------------------------------------------------------
if want 3; then
echo "== 3. sgemm beside cuBLAS"
# shellcheck disable=SC2086
set -- ${GPU_GEMM_SIZES:-4096 4096 4096}
echo "   the kernels as txc -o writes them (any size)"
if build_gemm; then
	"$work/gpu_gemm" "$@" 10 || fail "bench/gpu_gemm.cu"
fi
echo "   the kernels compiled for these sizes (txc -D M=$1 -D N=$2 -D K=$3)"
if build_gemm gpu_gemm_fixed -D "M=$1" -D "N=$2" -D "K=$3"; then
	"$work/gpu_gemm_fixed" "$@" 10 || fail "bench/gpu_gemm.cu, sizes fixed"
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

echo "gpu-check: $fails failure(s)"
[ $fails -eq 0 ]
