#!/bin/sh
# tune_cuda.sh: `txc tune --target=cuda` without a GPU.  It refuses to
# time anything (exit 3, one line saying why): neither with no device nor
# in libtxrt's emulator, whose times mean nothing.  Under the test switch
# TXC_TUNE_CUDA_EMULATE=1 the whole search runs in the emulator: a small
# space of examples/template_cuda.tx (its knobs cut to 32 points) is swept
# whole, every point that txc accepts is checked against the unscheduled
# kernel on the CPU (a mismatch would be a failed trial), the points of
# more than 1024 threads a block are recorded as illegal, a candidate
# that crashes the worker is a failed trial, the records name target cuda
# and the machine "emulator", -o writes a cuda schedule that computes what
# the kernel does, and the log applies to a later cuda compile only on
# the machine it names.  The timings themselves are not judged: the GPU
# test is tune_cuda_gpu.sh.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }
unset TXC_TUNE_CUDA_EMULATE TXC_TUNE_CRASH_AT TXC_TUNE_HANG_AT

# the template with fewer values per knob: bm 2, bn 1, tm 2, tn 2, kstep 2, db 2
sed -e 's/knob bm in \[64, 32, 128\]/knob bm in [64, 128]/' \
    -e 's/knob bn in \[64, 32, 128\]/knob bn in [64]/' \
    -e 's/knob tm in \[4, 2, 8\]/knob tm in [4, 2]/' \
    -e 's/knob tn in \[4, 2, 8\]/knob tn in [4, 2]/' \
    -e 's/knob kstep in \[16, 8, 4\]/knob kstep in [16, 8]/' \
    "$abs_top_srcdir/examples/template_cuda.tx" >mm.tx || exit 99
sizes="-D M=67 -D N=45 -D K=19"

# no GPU: a one-line refusal, exit 3; the emulator is refused too
TXRT_CUDA=none "$TXC" tune mm.tx --target=cuda $sizes >out.txt 2>err.txt
[ $? = 3 ] || fail "--target=cuda without a GPU: not exit status 3"
[ "$(wc -l <err.txt)" = 1 ] && grep -q 'times candidates on a GPU and finds none here' err.txt ||
	fail "no one-line message saying there is no GPU"
TXRT_CUDA=emulate "$TXC" tune mm.tx --target=cuda $sizes >out.txt 2>err.txt
[ $? = 3 ] || fail "--target=cuda in the emulator without the test switch: not exit status 3"
grep -q "emulator, whose timings mean nothing" err.txt || fail "the emulator refused without the reason"
[ ! -s out.txt ] || fail "a refused run printed a search"
"$TXC" tune mm.tx --target=cuda --cuda-arch=90 $sizes >out.txt 2>err.txt
[ $? = 1 ] && grep -q "bad --cuda-arch '90'" err.txt || fail "--cuda-arch=90 not refused"

# the search in the emulator; the point bm=128 tm=4 tn=2 kstep=16 db=0
# crashes the worker
crash='bm=128 bn=64 tm=4 tn=2 kstep=16 db=0'
TXC_TUNE_CUDA_EMULATE=1 TXC_TUNE_CRASH_AT="$crash" "$TXC" tune mm.tx --target=cuda $sizes \
	--samples=3 --top=2 --log=log.jsonl -o best.tx >out.txt 2>err.txt || fail "txc tune exited $?"
grep -q 'TXC_TUNE_CUDA_EMULATE is set: .*mean nothing' err.txt || fail "no warning that times mean nothing"
grep -q '32 knob points, every point; 32 trials in the emulator' out.txt ||
	fail "not a sweep of the 32 points in the emulator"
grep -q '4 illegal points skipped, 1 failed' out.txt || fail "wrong trial counts"
[ "$(grep -c '"phase":"search"' log.jsonl)" = 32 ] || fail "not one search record per point"
[ "$(grep -c '"target":"cuda","cpu":"emulator","features":"sm_80"' log.jsonl)" = "$(wc -l <log.jsonl)" ] ||
	fail "a record not for cuda on the emulator"
# 2048 threads a block: refused by txc, recorded as illegal
[ "$(grep -c '"error":"illegal: blocks of 2048 threads' log.jsonl)" = 4 ] ||
	fail "the four points of 2048 threads a block are not recorded as illegal"
grep -q '"knobs":{"bm":"128","bn":"64","tm":"4","tn":"2","kstep":"16","db":"0"},"phase":"search","time_ms":null,"vs_default":null,"error":"crash: ' log.jsonl ||
	fail "the crash is not recorded as a failed trial"
# every other point matched the unscheduled kernel (else: a failed trial)
[ "$(grep '"phase":"search"' log.jsonl | grep -c '"error":null')" = 27 ] ||
	fail "not 27 points measured and checked"
grep -q 'MISMATCH\|wrong result' out.txt err.txt && fail "a point differs from the unscheduled kernel"
grep -q '"phase":"best"' log.jsonl || fail "no best record"

# -o: an ordinary cuda schedule; checked in the emulator at other odd sizes
grep -q 'schedule sgemm as tuned for cuda' best.tx || fail "-o did not write a cuda schedule"
grep -q '//     txc --target=cuda best.tx -k sgemm -s tuned' best.tx || fail "-o's comment"
TXRT_CUDA=emulate "$TXC" bench --target=cuda -D M=33 -D N=70 -D K=37 -k sgemm -s tuned best.tx >bench.txt 2>&1 ||
	{ cat bench.txt; fail "txc bench --target=cuda of the tuned schedule failed"; }
grep -q MISMATCH bench.txt && { cat bench.txt; fail "the tuned schedule's result differs"; }

# the log applies where the machine is the one it names (the emulator),
# and where there is no GPU (a compile for another machine); on another
# GPU it is another task: one warning naming the record
chosen=$(sed -n 's/.*; chosen: \(.*\), [0-9.]*x the default.*/\1/p' out.txt)
[ -n "$chosen" ] || chosen='bm=64 bn=64 tm=4 tn=4 kstep=16 db=1'   # the default stays
set -- $chosen
TXRT_CUDA=emulate "$TXC" --target=cuda $sizes --tuning-log=log.jsonl --print-loops mm.tx \
	>loops.txt 2>apply.txt || { cat apply.txt; fail "compiling with the log failed"; }
[ ! -s apply.txt ] || { cat apply.txt; fail "the log did not apply quietly in the emulator"; }
TXRT_CUDA=none "$TXC" --target=cuda $sizes --tuning-log=log.jsonl mm.tx -o mm.o 2>apply.txt ||
	{ cat apply.txt; fail "compiling with the log and no GPU failed"; }
[ ! -s apply.txt ] || { cat apply.txt; fail "the log did not apply quietly without a GPU"; }
sed 's/"cpu":"emulator"/"cpu":"NVIDIA H100 80GB HBM3"/' log.jsonl >other.jsonl
TXRT_CUDA=emulate "$TXC" --target=cuda $sizes --tuning-log=other.jsonl mm.tx -o mm.o 2>apply.txt ||
	{ cat apply.txt; fail "compiling with another GPU's log failed"; }
grep -q 'it was measured on NVIDIA H100 80GB HBM3, this is emulator' apply.txt ||
	{ cat apply.txt; fail "another GPU's records applied, or no warning"; }
[ "$(grep -c 'warning:' apply.txt)" = 1 ] || { cat apply.txt; fail "not one warning"; }
# the applied point is the chosen one: the loop nest tiles by its bm and bn
# (and the default's nest differs unless the default was chosen)
"$TXC" --target=cuda $sizes -K "$1" -K "$2" -K "$3" -K "$4" -K "$5" -K "$6" \
	--print-loops mm.tx >want.txt 2>/dev/null || fail "-K $chosen does not compile"
cmp -s loops.txt want.txt || fail "the log applied another point than $chosen"
exit 0
