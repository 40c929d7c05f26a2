# isa_tables.sh: sourced by stdlib_int8.sh and conv_i8.sh, which run a
# stdlib kernel through each micro-kernel table its isa knob takes.
#
# Sourcing it checks what every such test needs (txc, the static libtxrt,
# x86-64 with AVX2: else a skip, 77), moves into a fresh folder that is
# removed at exit, and defines
#
#   fail MESSAGE          print FAIL, run.log, and exit 1
#   isa_try ISA [FLAGS]   compile $TRY_KERNELS (txc options, e.g. '-k
#                         gemm_i8') of $TRY_FILE with -K isa=ISA and
#                         FLAGS into g.o and g.h, build main.c (the
#                         caller's driver, with $TRY_CFLAGS) against it
#                         and run it: 0 passes ("ok: ... every size
#                         exact"); 8 (TXRT_ERR_CPU) must name the
#                         instruction set ISA (the CPU lacks it: not run
#                         here); a signal or anything else fails.  Counts
#                         the tables that ran in $ran.
#   isa_cpu FLAG          the FLAGS for a table whose instruction set
#                         /proc/cpuinfo calls FLAG: none (the host) where
#                         this CPU has it, so that the table runs here,
#                         else --cpu=sapphirerapids (whose object then
#                         must fail with TXRT_ERR_CPU naming it)
#
# $TRY_NAME names the test in messages.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}"
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
TXC_STDLIB=$srcdir/stdlib; export TXC_STDLIB
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
case $(uname -m) in x86_64) ;; *) echo "SKIP: not x86-64"; exit 77 ;; esac
grep -qw avx2 /proc/cpuinfo 2>/dev/null || { echo "SKIP: the CPU has no AVX2"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $TRY_NAME: $*"; cat run.log 2>/dev/null; exit 1; }
ran=0
isa_cpu() { grep -qw "$1" /proc/cpuinfo 2>/dev/null || echo --cpu=sapphirerapids; }
isa_try() {
	isa=$1
	shift
	# shellcheck disable=SC2086
	"$TXC" -K isa="$isa" "$@" $TRY_KERNELS "$TRY_FILE" -o g.o -H g.h \
	    >run.log 2>&1 || fail "txc -K isa=$isa $*"
	# shellcheck disable=SC2086
	table=$("$TXC" -K isa="$isa" "$@" $TRY_KERNELS --print-loops "$TRY_FILE" 2>&1 |
	    grep -o -E '(i8|bf16)_[a-z0-9_]+\(' | sort -u | tr -d '(' | tr '\n' ' ')
	[ "$isa" = generic ] || [ -n "$table" ] || fail "isa=$isa: no micro-kernel call"
	# shellcheck disable=SC2086
	${CC:-cc} -O1 $TRY_CFLAGS -I"$abs_top_srcdir/rt" -I"$abs_top_builddir/rt" -o g main.c g.o \
	    "$lib" -lpthread -ldl -lm >run.log 2>&1 || fail "cc ($isa)"
	./g >run.log 2>&1
	rc=$?
	[ $rc -lt 128 ] || fail "isa=$isa: died of signal $((rc - 128))"
	if [ $rc -eq 8 ]; then
		# LLVM's names: amxint8 is amx-int8
		grep -q "compiled for a CPU with instructions this CPU lacks (.*$(echo "$isa" |
		    sed 's/^amx/amx-/')" run.log ||
		    fail "isa=$isa: TXRT_ERR_CPU without naming $isa"
		echo "ok: isa=$isa ($table): not run here, $(sed -n 's/^[a-z_0-9]* 8 //p' run.log)"
		return
	fi
	[ $rc -eq 0 ] || fail "isa=$isa ($table): exit $rc"
	echo "ok: isa=$isa (${table:-plain vectors}): every size exact"
	ran=$((ran + 1))
}
