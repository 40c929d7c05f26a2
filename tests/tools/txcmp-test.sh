#!/bin/sh
# txcmp-test.sh: txcmp itself must tell equal outputs from different ones
# (the end-to-end tests are only as good as their comparison).
set -u
txcmp=${abs_top_builddir:-.}/tests/tools/txcmp
[ -x "$txcmp" ] || { echo "txcmp-test.sh: $txcmp not built"; exit 99; }
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
fails=0
out() { # FILE NAME TYPE COUNT OCTAL-BYTES
	{ printf 'TXOUT %s %s %s\n' "$2" "$3" "$4"; printf "$5"; } >"$t/$1"
}
expect() { # STATUS DESCRIPTION ARGS...
	want=$1 what=$2
	shift 2
	"$txcmp" "$@" >"$t/log" 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: $what: txcmp exited $got, not $want"
		cat "$t/log"
		fails=$((fails + 1))
	fi
}
# f32 1.0 = 00 00 80 3f; 1.00002 = 0x3f8000a8; 1.001 = 0x3f8020c5; NaN = ff ff ff ff
out a C f32 2 '\000\000\200\077\000\000\200\077'
out b C f32 2 '\000\000\200\077\250\000\200\077'
out c C f32 2 '\000\000\200\077\305\040\200\077'
out n1 C f32 1 '\377\377\377\377'
out n2 C f32 1 '\377\377\377\377'
out one C f32 1 '\000\000\200\077'
out i1 D i32 2 '\001\000\000\000\002\000\000\000'
out i2 D i32 2 '\001\000\000\000\003\000\000\000'
out cnt C f32 1 '\000\000\200\077'
out typ C i32 2 '\000\000\200\077\000\000\200\077'
expect 0 "identical files" "$t/a" "$t/a"
expect 0 "f32 within 1e-4" "$t/a" "$t/b"
expect 1 "f32 off by 1e-3" "$t/a" "$t/c"
expect 0 "f32 off by 1e-3 with -r 1e-2" -r 1e-2 "$t/a" "$t/c"
expect 0 "NaN against NaN" "$t/n1" "$t/n2"
expect 1 "NaN against 1.0" "$t/n1" "$t/one"
expect 1 "i32 off by one" "$t/i1" "$t/i2"
expect 1 "a different element count" "$t/a" "$t/cnt"
expect 1 "a different element type" "$t/a" "$t/typ"
expect 1 "fewer elements" "$t/a" "$t/one"
expect 2 "a missing file" "$t/a" "$t/nonexistent"
"$txcmp" "$t/a" "$t/c" | grep -q '^C\[1\]: expected 1, got 1.00100' ||
	{ echo "FAIL: txcmp does not name the element that differs"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "txcmp-test: all cases pass"
[ $fails -eq 0 ]
