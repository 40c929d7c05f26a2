#!/bin/sh
# tcore_shipped.sh: every tensor-core kernel the project ships, found
# rather than listed: each file of stdlib/, bench/kernels/ and examples/
# (the tutorial, its solutions and exercises included) with a cuda
# schedule is compiled as `txc --target=cuda` writes it, and every PTX
# entry that runs mma.sync must load its fragments with ldmatrix, fill its
# tiles with cp.async, make no scalar loads from shared memory, and
# assemble with ptxas for sm_80 and sm_90 with no spills (issue 34's
# bar).  A file whose schedules load tiles by TMA (tma()) is compiled
# for sm_90 and assembled for sm_90 and sm_90a, and its tiles may be
# filled by cp.async.bulk.tensor instead of cp.async.  cuda_swizzle.sh checks the known GEMMs' layouts in detail; this
# one keeps a new schedule (the tutorial's step 6 was the plain plan) from
# shipping slow.  A file whose schedules tensorize with Hopper's wgmma is
# compiled with --cuda-arch=sm_90a and assembled for sm_90a only; its
# entries read their operands through descriptors (wgmma.mma_async)
# instead of ldmatrix.  Skips (77) without ptxas.
: "${TXC:?TXC must name the txc binary}" "${abs_top_srcdir:?}"
ptxas=$(command -v ptxas 2>/dev/null || true)
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
[ -n "$ptxas" ] || { echo "SKIP: no ptxas"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
top=$abs_top_srcdir
fails=0 nk=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$top"/stdlib/*.tx "$top"/bench/kernels/*.tx "$top"/examples/*.tx \
    "$top"/examples/*/*.tx "$top"/examples/tutorial/*/*.tx; do
	[ -f "$f" ] || continue
	grep -Eq '^[[:space:]]*schedule[[:space:]].*for[[:space:]]+cuda' "$f" || continue
	name=${f#"$top"/}
	b=$(echo "$name" | tr '/.' '__')
	arch=sm_80 archs="sm_80 sm_90"
	! grep -Eq '\.tma\(\)' "$f" || { arch=sm_90 archs="sm_90 sm_90a"; }
	if grep -Eq 'tensorize\([^)]*wgmma_' "$f"; then
		arch=sm_90a archs=sm_90a
	fi
	# each kernel with a cuda schedule of its own (-k: a file may also
	# hold kernels that do not run on the cuda target)
	for k in $(sed -n 's/^[[:space:]]*schedule[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]\{1,\}for[[:space:]]\{1,\}cuda.*/\1/p' "$f" | sort -u); do
		"$TXC" -k "$k" --target=cuda --cuda-arch=$arch --emit=ptx -o "$tmp/$b.$k.ptx" "$f" 2>"$tmp/err" ||
		    { fail "$name: txc -k $k --target=cuda --cuda-arch=$arch --emit=ptx"; head -3 "$tmp/err"; continue; }
		# the entries that run the tensor cores
		awk '/^\.visible \.entry/ { e = $3; sub(/\(.*/, "", e) }
		    /mma\.sync|wgmma\.mma_async/ && e != "" { print e; e = "" }' "$tmp/$b.$k.ptx" >>"$tmp/$b.entries"
	done
	entries=$(cat "$tmp/$b.entries" 2>/dev/null)
	[ -n "$entries" ] || continue
	# one kernel's PTX at a time (a file's kernels are separate modules)
	for e in $entries; do
		for p in "$tmp/$b".*.ptx; do
			grep -q "^\.visible \.entry $e(" "$p" && cp "$p" "$tmp/$b.$e.one"
		done
	done
	for a in $archs; do
		for e in $entries; do
			"$ptxas" -v -arch=$a -o "$tmp/$b.cubin" "$tmp/$b.$e.one" >"$tmp/v" 2>&1 ||
			    { fail "$name $e $a: ptxas rejects the PTX"; head -5 "$tmp/v"; continue; }
			s=$(awk -v e="$e" '/Compiling entry function/ { on = index($0, "'"'"'" e "'"'"'") > 0 }
			    on && /spill stores/ { print; exit }' "$tmp/v")
			echo "$s" | grep -q " 0 bytes spill stores, 0 bytes spill loads" ||
			    fail "$name $e $a: spills: $s"
		done
	done
	for e in $entries; do
		nk=$((nk + 1))
		# the entry's body: from its .entry line to the next
		awk -v e="$e" '/^\.visible \.entry/ { on = index($0, e "(") > 0 } on' \
		    "$tmp/$b.$e.one" >"$tmp/body"
		grep -Eq 'ldmatrix\.sync\.aligned|wgmma\.mma_async' "$tmp/body" ||
		    fail "$name $e: no ldmatrix (nor wgmma)"
		grep -Eq 'cp\.async\.cg\.shared\.global|cp\.async\.bulk\.tensor' "$tmp/body" ||
		    fail "$name $e: no cp.async or TMA (cp.async.bulk.tensor)"
		! grep -Eq 'ld\.shared\.(f32|b16|u16|f16)' "$tmp/body" ||
		    fail "$name $e: scalar loads from shared memory"
		echo "$name $e: ldmatrix $(grep -c ldmatrix "$tmp/body"), wgmma $(grep -c 'wgmma\.mma_async' "$tmp/body"), cp.async $(grep -c 'cp\.async\.cg' "$tmp/body"), TMA $(grep -c 'cp\.async\.bulk\.tensor' "$tmp/body")"
	done
done
echo "tcore_shipped: $nk tensor-core kernels, $fails failures"
[ $nk -ge 6 ] || { echo "FAIL: only $nk tensor-core kernels found (stdlib's matmul_f16 and matmul_bf16, bench/kernels' four GEMMs, the tutorial's step 6 at least)"; exit 1; }
[ $fails -eq 0 ]
