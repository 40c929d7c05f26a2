# asm_loop.sh: shell functions that tests/unit/zmm_asm.sh and
# vnni_asm.sh source (not a test): a schedule tiling C under k into a
# micro-kernel, m.tx compiled to assembly for a CPU, and the count of an
# instruction in the micro-kernel's innermost loops.  The caller defines
# fail MESSAGE and TXC, and works in a directory of its own.

# KERNEL NAME MR NR INTRINSIC: `schedule KERNEL as NAME for cpu`, C's
# (i, j) tiled MR x NR below k and tensorized with INTRINSIC.
tile_schedule() {
	printf 'schedule %s as %s for cpu {\n  C.tile(i, j, %s, %s) -> (io, jo, ii, ji);\n  C.reorder(io, jo, k, ii, ji);\n  C.tensorize(k, %s);\n}\n' "$@"
}

# CPU ARGS...: m.tx compiled by txc --cpu=CPU ARGS into m.s; skips (77)
# where txc has no x86 target.
asm() {
	asm_cpu=$1
	shift
	"$TXC" --cpu="$asm_cpu" "$@" -S -o m.s m.tx 2>err || {
		grep -q "unknown target\|cannot generate" err && { echo "SKIP: no x86 target"; exit 77; }
		cat err; fail "txc --cpu=$asm_cpu $*"; }
}

# FILE PATTERN KERNEL: the innermost loops (a label, a later jump back to
# it, no such loop inside) of the first function in the assembly FILE
# whose label matches KERNEL (an awk pattern): "N STACK-ACCESSES" a line,
# N the lines matching PATTERN.
loops() {
	awk -v PAT="$2" -v FN="^[^ \t#].*$3.*:\$" '$0 ~ FN { on = 1 } on && /^\.Lfunc_end/ { exit }
	on && /^\.L[A-Za-z0-9_]+:/ { l = $1; sub(/:$/, "", l); at[l] = NR }
	on { line[NR] = $0 }
	on && /^[ \t]+j[a-z]+[ \t]+\.L/ { if (($2 in at) && at[$2] > last) { f = 0; r = 0
		for (i = at[$2]; i <= NR; i++) { if (line[i] ~ PAT) f++; if (line[i] ~ /rsp/) r++ }
		print f, r; last = NR } }' "$1"
}
