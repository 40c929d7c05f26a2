# pick.sh: sourced by the Python tests (tests/unit/python_*.sh).
#
# pick_python MODULE... prints the first interpreter that imports every
# MODULE: $PYTHON when set, then Debian's /usr/bin/python3 (where apt's
# python3-numpy and python3-torch live), then python3 on PATH; it fails
# when none does.  python_skip_sanitized fails (after a SKIP line) in a
# build configured --enable-sanitize: its libtxrt.a is instrumented, and a
# shared library linked with it does not load into an interpreter that is
# not.
pick_python() {
	for cand in ${PYTHON:-} /usr/bin/python3 python3; do
		command -v "$cand" >/dev/null 2>&1 || continue
		mods=
		for m in "$@"; do mods="$mods import $m;"; done
		if "$cand" -c "import sys;$mods sys.exit(0 if sys.version_info >= (3, 7) else 1)" \
		    >/dev/null 2>&1; then
			command -v "$cand"
			return 0
		fi
	done
	return 1
}

python_skip_sanitized() {
	case ${CC:-} in
	*-fsanitize=*)
		echo "SKIP: a sanitized build (its libtxrt.a cannot load into python3)"
		return 1 ;;
	esac
	return 0
}
