#!/bin/sh
# cuda_async.sh: libtxrt's emulator runs a pipeline's asynchronous copies
# (cp.async) with their real semantics: a copy lands only at its thread's
# wait, so a matmul whose tiles are pipelined (pipeline(3)) is right as
# txc places the waits, and is reported when the wait is placed an
# iteration late (TXC_CUDA_ASYNC_WAIT=late: a read of a slot whose copy is
# in flight) or left out (=none: copies never waited for), while the
# barriers stay where they were.
: "${TXC:?TXC must name the txc binary}" "${abs_top_builddir:?}" "${abs_top_srcdir:?}"
lib=$abs_top_builddir/rt/.libs/libtxrt.a
[ -f "$lib" ] || { echo "SKIP: no static libtxrt"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >mm.tx <<'TX'
kernel mm(M, N, K) {
  in  A: f32[M, K];
  in  B: f32[K, N];
  out C: f32[M, N];
  C[i, j] = sum(k < K) A[i, k] * B[k, j];
}
schedule mm for cuda {
  C.gpu_tile(i, j, 8, 8) -> (io, jo, ii, ji);
  C.split(k, 8) -> (ko, ki);
  C.reorder(io, jo, ko, ii, ji, ki);
  A.cache_read(shared, [C]) -> As;
  B.cache_read(shared, [C]) -> Bs;
  As.compute_at(C, ko);
  Bs.compute_at(C, ko);
  As.pipeline(3);
  Bs.pipeline(3);
}
TX
"$TXC" -k mm --no-schedule --emit=harness -o h.c mm.tx && ${CC:-cc} -O1 -DTXC_LLVM -c -o h.o h.c || exit 99
"$TXC" -k mm --no-schedule mm.tx -o ref.o && ${CC:-cc} -o ref h.o ref.o "$lib" -lpthread -ldl -lm || exit 99
./ref M=19 N=21 K=45 out=ref.bin >/dev/null 2>&1 || { echo "FAIL: the unscheduled kernel"; exit 1; }
"$TXC" --target=cuda --emit=ptx -o mm.ptx mm.tx || fail "txc --emit=ptx"
grep -q "cp.async.cg.shared.global" mm.ptx || fail "no cp.async in the PTX"
grep -q "cp.async.wait_group 1" mm.ptx || fail "no cp.async.wait_group 1 in the PTX"
for how in ok late none; do
	TXC_CUDA_ASYNC_WAIT=$how "$TXC" --target=cuda mm.tx -o t_$how.o || { fail "txc ($how)"; continue; }
	${CC:-cc} -o t_$how h.o t_$how.o "$lib" -lpthread -ldl -lm || { fail "link ($how)"; continue; }
	TXRT_CUDA=emulate ./t_$how M=19 N=21 K=45 out=t_$how.bin >out_$how 2>&1
	rc=$?
	case $how in
	ok)
		[ $rc -eq 0 ] || fail "waits as placed: exit $rc: $(head -3 out_$how)"
		cmp -s ref.bin t_ok.bin || fail "waits as placed: the result differs from the unscheduled kernel's"
		;;
	late)
		[ $rc -ne 0 ] || fail "a late wait: the emulator saw nothing"
		grep -q "read of shared buffer '[AB]s' .*asynchronous copy (cp.async) into it is in flight" out_$how ||
		    fail "a late wait: no report of a read of a copy in flight: $(head -3 out_$how)"
		;;
	none)
		[ $rc -ne 0 ] || fail "no wait: the emulator saw nothing"
		grep -q "in flight\|never completed by a cp.async.wait_group" out_$how ||
		    fail "no wait: no report of copies never waited for: $(head -3 out_$how)"
		;;
	esac
done
[ $fails -eq 0 ] || exit 1
echo "PASS: cuda_async"
