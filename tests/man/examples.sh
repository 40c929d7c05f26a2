#!/bin/sh
# examples.sh: every example program in tx(5) and txc-schedule(7) is
# accepted or rejected by `txc --check` exactly as the page says, and
# every program under examples/ is accepted.
#
# An example is the text between two comment lines of the page source,
#
#     .\" example-begin NAME            (txc --check must accept it), or
#     .\" example-begin NAME reject     (it must fail with exit status 1)
#     ...program text...
#     .\" error: TEXT                   (optional, repeatable: the
#     .\" example-end                    diagnostics must contain TEXT)
#
# usually inside a .Bd -literal display.  Other comment lines are dropped
# and the roff escapes \e, \& and \- become \, nothing and -.  Every example
# is written to NAME.tx in one folder per page, so an example can import
# another.  Skips (77) while txc has no --check option.
set -u
: "${TXC:?TXC must name the txc binary}"
: "${abs_top_srcdir:?abs_top_srcdir must name the source tree}"
if ! "$TXC" --help 2>/dev/null | grep -q -e '--check'; then
	echo "SKIP: txc --check is not available yet"
	exit 77
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
status=0 total=0
for name in tx.5 txc-schedule.7; do
	page=$abs_top_srcdir/man/$name
	[ -f "$page" ] || { echo "FAIL: man/$name is missing"; status=1; continue; }
	dir=$tmp/$name
	mkdir "$dir" || exit 99
	# Split the page into DIR/NAME.raw (program), DIR/NAME.mode (accept or
	# reject) and DIR/NAME.want (expected diagnostic fragments).
	awk -v dir="$dir" -v page="man/$name" '
	function fail(msg) { printf "FAIL: %s:%d: %s\n", page, NR, msg; bad = 1 }
	/^\.\\" example-begin / {
		if (cur != "") fail("example-begin inside example " cur)
		cur = $3
		if (cur !~ /^[A-Za-z0-9_-]+$/) { fail("bad example name"); cur = "" ; next }
		if (cur in seen) fail("duplicate example name " cur)
		seen[cur] = 1
		mode = ($4 == "reject") ? "reject" : "accept"
		print mode > (dir "/" cur ".mode")
		printf "" > (dir "/" cur ".want")
		printf "" > (dir "/" cur ".raw")
		next
	}
	/^\.\\" example-end/ {
		if (cur == "") fail("example-end without example-begin")
		cur = ""
		next
	}
	cur != "" && /^\.\\" error: / {
		sub(/^\.\\" error: /, "")
		print > (dir "/" cur ".want")
		next
	}
	cur != "" && /^\.\\"/ { next }
	cur != "" && /^\./ { fail("a roff request inside example " cur); next }
	cur != "" { print > (dir "/" cur ".raw") }
	END {
		if (cur != "") fail("example " cur " has no example-end")
		exit bad
	}' "$page" || status=1

	# every example first, so that one can import another
	for raw in "$dir"/*.raw; do
		[ -f "$raw" ] || continue
		sed -e 's/\\&//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$raw" >"${raw%.raw}.tx"
	done
	for mode in "$dir"/*.mode; do
		[ -f "$mode" ] || continue
		ex=${mode%.mode}
		base=${ex##*/}
		total=$((total + 1))
		(cd "$dir" && "$TXC" --check --color=never "$base.tx" >"$ex.out" 2>"$ex.err")
		rc=$?
		what="man/$name example '$base'"
		case $(cat "$mode"):$rc in
		accept:0)
			;;
		accept:1)
			echo "FAIL: $what should be accepted, but txc --check rejects it:"
			cat "$ex.err"
			status=1
			;;
		reject:0)
			echo "FAIL: $what should be rejected, but txc --check accepts it"
			status=1
			;;
		reject:1)
			if ! grep -q 'error:' "$ex.err"; then
				echo "FAIL: $what: txc exited 1 without an error message"
				status=1
			fi
			while IFS= read -r want; do
				if ! grep -q -F -e "$want" "$ex.err"; then
					echo "FAIL: $what: the diagnostics do not contain '$want':"
					cat "$ex.err"
					status=1
				fi
			done <"$ex.want"
			;;
		*)
			echo "FAIL: $what: txc --check exited $rc (crash or internal error):"
			cat "$ex.err"
			status=1
			;;
		esac
	done
done
# The example programs of the source tree (examples/, the tutorial) must be
# accepted as well.
for f in "$abs_top_srcdir"/examples/*.tx "$abs_top_srcdir"/examples/tutorial/*.tx; do
	[ -f "$f" ] || continue
	total=$((total + 1))
	"$TXC" --check --color=never "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: ${f#"$abs_top_srcdir"/}: txc --check exited $rc:"
		cat "$tmp/err"
		status=1
	fi
done
echo "$total examples checked"
[ $total -gt 0 ] || { echo "FAIL: no examples found"; status=1; }
exit $status
