#!/bin/sh
# tune_vta.sh: `txc tune --target=vta` measures a VTA template's points by
# libtxrt's simulator (its modelled cycles, exact: the same on every run),
# after checking each against the unscheduled kernel on the CPU.  The
# template's default is a poor point (tiles of 1 block: every weight tile
# loaded again for each row block); the tuner must find a point that the
# model says is faster, write it with -o as a schedule that compiles for
# vta and computes what the unscheduled kernel does, and log records that
# say target vta and that a later compile applies.  A point whose tiles do
# not fit VTA's buffers is illegal, recorded and skipped.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
fail() { echo "FAIL: $*"; cat out.txt err.txt 2>/dev/null; exit 1; }

cat >mv.tx <<'TX'
import "intrinsics/vta.tx";

kernel mv(M, NB, KB) {
  in  ap: i8[M, KB, 16];
  in  wp: i8[NB, KB, 16, 16];
  out c: i8[M, NB, 16];
  acc: i32[M, NB, 16];
  acc[m, n, j] = sum(kb < KB, k < 16) i32(ap[m, kb, k]) * i32(wp[n, kb, j, k]);
  c[m, n, j] = i8(acc[m, n, j] >> 4);
}

schedule mv for vta {
  knob mt in [1, 4, 16, 2048];    // rows of a tile (2048: too large for acc)
  knob nt in [1, 2, 4];           // 16-output blocks of a tile
  acc.set_scope(acc);
  ap.cache_read(inp, [acc]) -> al;
  wp.cache_read(wgt, [acc]) -> wl;
  c.split(m, mt) -> (mo, mi);
  c.split(n, nt) -> (no, ni);
  c.reorder(mo, no, mi, ni, j);
  acc.compute_at(c, no);
  acc.reorder(kb, m, n, j, k);
  al.compute_at(acc, kb);
  wl.compute_at(acc, kb);
  acc.tensorize(j, vta_gemm);
}
TX
sizes="-D M=2048 -D NB=4 -D KB=2"
"$TXC" tune mv.tx -I "$abs_top_srcdir/stdlib" --target=vta $sizes --model=none --top=2 \
	--log=log.jsonl -o best.tx >out.txt 2>err.txt || fail "txc tune exited $?"
grep -q 'in modelled cycles' out.txt || fail "the header does not say how it measures"
grep -q '; chosen: ' out.txt || fail "no point chosen over the default (mt=1 nt=1)"
# every record is a vta record; the illegal point is recorded as such
[ "$(grep -c '"phase":"search"' log.jsonl)" = 12 ] || fail "not one search record per point"
[ "$(grep -c '"target":"vta"' log.jsonl)" = "$(wc -l <log.jsonl)" ] || fail "a record not for vta"
grep -q '"error":"illegal: VTA.s acc buffer overflows' log.jsonl ||
	fail "mt=2048 nt=2 (too large for acc) not recorded as illegal"
grep -q '2 illegal points skipped, 0 failed' out.txt || fail "wrong trial counts"
# the chosen point: fewer modelled cycles than the default (the log's
# first record, mt=1 nt=1)
d=$(head -n 1 log.jsonl | sed -n 's/.*"time_ms":\([0-9.e+-]*\).*/\1/p')
b=$(sed -n 's/^  [0-9]  *mt=[0-9]* nt=[0-9]*  *\([0-9.e+-]*\) ms.*<- chosen.*/\1/p' out.txt)
[ -n "$d" ] && [ -n "$b" ] || fail "no default record or chosen row"
head -n 1 log.jsonl | grep -q '"knobs":{"mt":"1","nt":"1"}' || fail "the first record is not the default"
awk -v d="$d" -v b="$b" 'BEGIN { exit !(b < d) }' || fail "chosen $b ms is not below the default's $d ms"
# -o: an ordinary schedule for vta that computes what the kernel does
grep -q 'schedule mv as tuned for vta' best.tx || fail "-o did not write a vta schedule"
"$TXC" bench -I "$abs_top_srcdir/stdlib" --target=vta $sizes -k mv -s tuned best.tx >bench.txt 2>&1 ||
	{ cat bench.txt; fail "txc bench --target=vta of the tuned schedule failed"; }
grep -q MISMATCH bench.txt && { cat bench.txt; fail "the tuned schedule's result differs"; }
# the log applies to a later vta compile (no warning: the record matches)
"$TXC" -I "$abs_top_srcdir/stdlib" --target=vta $sizes --tuning-log=log.jsonl mv.tx -o mv.o \
	2>apply.txt || { cat apply.txt; fail "compiling with the log failed"; }
[ ! -s apply.txt ] || { cat apply.txt; fail "the log did not apply quietly"; }
exit 0
