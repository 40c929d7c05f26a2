#!/bin/sh
# tune_cuda_gpu.sh: `txc tune --target=cuda` on a GPU (skipped, exit 77,
# where txc tune finds none: exit status 3).  A short random search of
# examples/template_cuda.tx at 512^3: every candidate txc and the driver
# accept is checked against the unscheduled kernel on the CPU and timed
# on the GPU; none may fail; the records name target cuda and the GPU
# (cuDeviceGetName, not the emulator); -o writes a schedule that runs on
# the GPU at other, odd sizes and computes what the kernel does; the log
# applies to a cuda compile on this GPU and warns on another.  Its table
# is printed (the times are not judged: tools/gpu-check.sh part 4 prints
# the tuned point beside the hand-written default at 2048^3).
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
unset TXC_TUNE_CUDA_EMULATE TXC_TUNE_CRASH_AT TXC_TUNE_HANG_AT TXRT_CUDA

t=$abs_top_srcdir/examples/template_cuda.tx
sizes="-D M=512 -D N=512 -D K=512"
"$TXC" tune "$t" --target=cuda $sizes --trials=12 --model=none --top=2 --log=log.jsonl \
	-o best.tx >out.txt 2>err.txt
rc=$?
if [ $rc = 3 ]; then
	echo "SKIP: $(cat err.txt)"
	exit 77
fi
[ $rc = 0 ] || fail "txc tune exited $rc"
cat out.txt
grep -q 'trials on the GPU' out.txt || fail "the header does not say it times on the GPU"
grep -q ' 0 failed; ' out.txt || fail "a candidate failed (a crash, an error or a wrong result)"
gpu=$(sed -n '1s/.*"cpu":"\([^"]*\)".*/\1/p' log.jsonl)
[ -n "$gpu" ] && [ "$gpu" != emulator ] && [ "$gpu" != none ] || fail "the records do not name the GPU"
[ "$(grep -c "\"target\":\"cuda\",\"cpu\":\"$gpu\"" log.jsonl)" = "$(wc -l <log.jsonl)" ] ||
	fail "a record not for cuda on $gpu"
echo "records name the GPU: $gpu"

grep -q 'schedule sgemm as tuned for cuda' best.tx || fail "-o did not write a cuda schedule"
"$TXC" bench --target=cuda -D M=333 -D N=517 -D K=95 -k sgemm -s tuned best.tx >bench.txt 2>&1 ||
	{ cat bench.txt; fail "txc bench --target=cuda of the tuned schedule failed"; }
cat bench.txt
grep -q "cuda schedules on $gpu" bench.txt || fail "the tuned schedule did not run on the GPU"
grep -q MISMATCH bench.txt && fail "the tuned schedule's result differs"

"$TXC" --target=cuda $sizes --tuning-log=log.jsonl "$t" -o mm.o 2>apply.txt ||
	{ cat apply.txt; fail "compiling with the log failed"; }
[ ! -s apply.txt ] || { cat apply.txt; fail "the log did not apply quietly on $gpu"; }
sed "s/\"cpu\":\"$gpu\"/\"cpu\":\"another GPU\"/" log.jsonl >other.jsonl
"$TXC" --target=cuda $sizes --tuning-log=other.jsonl "$t" -o mm.o 2>apply.txt ||
	{ cat apply.txt; fail "compiling with another GPU's log failed"; }
grep -q "it was measured on another GPU, this is $gpu" apply.txt ||
	{ cat apply.txt; fail "another GPU's records applied, or no warning"; }
exit 0
