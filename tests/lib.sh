# tests/lib.sh: helpers shared by the command-line tests (sourced, not run).
# Each test prints "ok SUITE: NAME" or "not ok SUITE: NAME" with the
# reasons indented below; tests/run-checks counts those lines.
# Set SUITE (may be empty) before sourcing; golden() needs T (a scratch
# directory) and G (the golden directory, default tests/golden).

ok() { echo "ok ${SUITE:+$SUITE: }$1"; }
nok() {
	echo "not ok ${SUITE:+$SUITE: }$1"
	shift
	[ $# -gt 0 ] && printf '  %s\n' "$@"
	return 0
}

# golden NAME: compare stdin with the golden file NAME (with
# UPDATE_GOLDEN=1, rewrite it instead).
golden() {
	_name=$1
	_g=${G:-tests/golden}
	cat > "$T/$_name.out"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$T/$_name.out" "$_g/$_name"
		ok "golden $_name (updated)"
	elif diff -u "$_g/$_name" "$T/$_name.out" > "$T/$_name.diff"; then
		ok "golden $_name"
	else
		nok "golden $_name" "$(head -n 20 "$T/$_name.diff")"
	fi
}

# skip_if_wedged WHAT: true (after printing a "skip" line, which
# tests/run-checks counts) when tests/run-checks found the kernel's
# tracing wedged, so a script that also checks other things can leave
# out the part that records the kernel.
skip_if_wedged() {
	[ -n "${ARGUS_TRACING_WEDGED:-}" ] || return 1
	echo "skip ${SUITE:+$SUITE: }$1 (the kernel's tracing is wedged)"
	return 0
}
