#!/bin/sh
# Command-line tests of argus info and argus dump on traces written by the
# store's API (tests/tools/mktrace): golden output with sizes normalized,
# filters, damage, and the error cases (one line, non-zero exit, no signal).
# UPDATE_GOLDEN=1 rewrites the golden files.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
MK=$B/tests/tools/mktrace
G=tests/golden
T=$(mktemp -d /tmp/argus-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=
. tests/lib.sh


normalize() {
	sed -e "s#$T#TRACE#g" \
	    -e 's/[0-9.]* \(B\|KiB\|MiB\) on disk/N on disk/' \
	    -e 's/([0-9.]* bytes each on disk)/(N bytes each on disk)/'
}

# A signal (exit > 128) is always a failure; else the status must match.
expect_status() {
	name=$1 want=$2 got=$3
	if [ "$got" -gt 128 ]; then
		nok "$name" "killed by signal $((got - 128))"
	elif [ "$got" -ne "$want" ]; then
		nok "$name" "exit $got, wanted $want"
	else
		ok "$name"
	fi
}

# One line on stderr that starts with the command's prefix.
expect_one_line() {
	name=$1 prefix=$2 file=$3
	if [ "$(wc -l < "$file")" -eq 1 ] && grep -q "^$prefix" "$file"; then
		ok "$name one-line error"
	else
		nok "$name one-line error" "$(cat "$file")"
	fi
}

"$MK" "$T/t" 300 || { nok "mktrace"; exit 1; }

"$ARGUS" dump "$T/t" | golden dump.txt
"$ARGUS" info "$T/t" | normalize | golden info.txt
"$ARGUS" info --events "$T/t" | normalize | golden info-events.txt
"$ARGUS" dump "$T/t" --type switch,waking --tid 100 | golden dump-filter-tid.txt
"$ARGUS" dump "$T/t" --pid 120 --from 0.0010016 --to 0.0010019 | golden dump-filter-time.txt
"$ARGUS" dump "$T/t" --abs --type user | golden dump-abs.txt

# A multi-segment trace: info counts every event and segment, from the
# chunk headers by default and by decoding with --events; both agree.
"$MK" "$T/big" 200000 131072 || nok "mktrace big"
n=$("$ARGUS" dump "$T/big" | wc -l)
# every type but thread and stackdef once (36), 4 thread records, and
# the writer's stack definitions: each segment defines the fixture's two
# stacks once (the first also the stack of every type)
ndef=$("$ARGUS" dump --type stackdef "$T/big" | wc -l)
nbig=$((200000 + 36 + 4 + ndef))
[ "$n" -eq "$nbig" ] && ok "dump of a rotated trace has every event" ||
	nok "dump of a rotated trace has every event" "$n != $nbig"
segs=$("$ARGUS" info "$T/big" | sed -n 's/^segments: *\([0-9]*\) readable.*/\1/p')
[ "${segs:-0}" -gt 1 ] && ok "info counts segments ($segs)" || nok "info counts segments"
[ "$ndef" -eq $((2 * ${segs:-0} + 1)) ] &&
	ok "each stack defined once a segment" ||
	nok "each stack defined once a segment" "$ndef definitions, $segs segments"
nh=$("$ARGUS" info "$T/big" | sed -n 's/^events: *\([0-9]*\) in indexes and headers, exact .*/\1/p')
nd=$("$ARGUS" info --events "$T/big" | sed -n 's/^events: *\([0-9]*\) read .*/\1/p')
[ "${nh:-0}" -eq "$nbig" ] && [ "${nd:-0}" -eq "$nbig" ] &&
	ok "info counts every event from headers and by decoding" ||
	nok "info counts every event from headers and by decoding" "$nh and $nd, want $nbig"
"$ARGUS" info "$T/big" > "$T/hdr.out"
grep -q '^lost: *unavailable without decoding' "$T/hdr.out" &&
    ! grep -q '^events by type' "$T/hdr.out" &&
	ok "info by default says what needs decoding" ||
	nok "info by default says what needs decoding" "$(cat "$T/hdr.out")"

# A torn trace (the open segment cut inside a chunk, no index): the
# default info walks the chunk headers and reports what is intact.
cp -r "$T/big" "$T/torn"
seg=$(ls "$T"/torn/seg-*.argus | tail -n 1)
sz=$(stat -c %s "$seg")
truncate -s $((sz - 3000)) "$seg"
"$ARGUS" info "$T/torn" > "$T/torn.out" 2> "$T/torn.err"
expect_status "info on a torn trace" 0 $?
nt=$(sed -n 's/^events: *\([0-9]*\) in indexes and headers.*/\1/p' "$T/torn.out")
grep -q 'torn chunk' "$T/torn.err" && grep -q '(.* indexed, 1 walked)' "$T/torn.out" &&
    grep -q '^chunks: .*, 1 damaged spots skipped' "$T/torn.out" &&
    [ "${nt:-0}" -gt 100000 ] && [ "$nt" -lt "$nbig" ] &&
	ok "info on a torn trace counts the intact chunks ($nt)" ||
	nok "info on a torn trace counts the intact chunks" "$(cat "$T/torn.out" "$T/torn.err")"
nd=$("$ARGUS" info --events "$T/torn" 2>/dev/null | sed -n 's/^events: *\([0-9]*\) read .*/\1/p')
[ "${nd:-0}" -eq "${nt:-x}" ] && ok "torn trace: headers and decoding agree" ||
	nok "torn trace: headers and decoding agree" "$nt vs $nd"

# Damage: a corrupt chunk is reported once as a warning; the rest reads.
# The spot lies inside compressed data, which only --events checks.
cp -r "$T/big" "$T/dmg"
seg=$(ls "$T"/dmg/seg-*.argus | head -n 1)
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' | dd of="$seg" bs=1 seek=20000 conv=notrunc 2>/dev/null
"$ARGUS" info --events "$T/dmg" > "$T/dmg.out" 2> "$T/dmg.err"
expect_status "info on a damaged trace" 0 $?
grep -q 'damaged spots skipped' "$T/dmg.out" && ! grep -q '^chunks: .*, 0 damaged' "$T/dmg.out" &&
	ok "info reports damage" || nok "info reports damage" "$(cat "$T/dmg.out")"
[ "$(grep -c warning "$T/dmg.err")" -eq 1 ] && ok "damage warned once" ||
	nok "damage warned once" "$(cat "$T/dmg.err")"
n=$("$ARGUS" dump "$T/dmg" 2>/dev/null | wc -l)
[ "$n" -gt 150000 ] && [ "$n" -lt "$nbig" ] && ok "damaged trace keeps the rest ($n)" ||
	nok "damaged trace keeps the rest" "$n"

# Errors: clear one-line messages and non-zero exits.
"$ARGUS" info "$T/none" 2> "$T/e1"; expect_status "info on a missing trace" 1 $?
expect_one_line "missing trace" "argus info: " "$T/e1"
mkdir "$T/bad"; echo "garbage garbage garbage garbage" > "$T/bad/seg-00000001.argus"
"$ARGUS" dump "$T/bad" 2> "$T/e2"; expect_status "dump with bad magic" 1 $?
expect_one_line "bad magic" "argus dump: .*bad magic" "$T/e2"
cp -r "$T/t" "$T/v"; printf '\143' | dd of="$T/v/seg-00000001.argus" bs=1 seek=8 conv=notrunc 2>/dev/null
"$ARGUS" info "$T/v" 2> "$T/e3"; expect_status "info on a newer version" 1 $?
expect_one_line "newer version" "argus info: .*version" "$T/e3"
: > "$T/empty.argus"
"$ARGUS" dump "$T/empty.argus" 2> "$T/e4"; expect_status "dump of an empty file" 1 $?
expect_one_line "empty file" "argus dump: " "$T/e4"
"$ARGUS" dump --type nosuch "$T/t" 2> "$T/e5"; expect_status "unknown type" 2 $?
expect_one_line "unknown type" "argus dump: unknown event type" "$T/e5"
"$ARGUS" info --bogus 2> "$T/e6"; expect_status "unknown option" 2 $?
"$ARGUS" nosuchcommand 2> "$T/e7"; expect_status "unknown command" 2 $?
"$ARGUS" dump --from xyz "$T/t" 2> "$T/e8"; expect_status "bad time" 2 $?

for c in info dump; do
	"$ARGUS" $c --help > "$T/h" 2>&1; expect_status "$c --help" 0 $?
	grep -q "^usage: argus $c" "$T/h" && ok "$c --help text" || nok "$c --help text"
done
"$ARGUS" --help > "$T/h"; expect_status "argus --help" 0 $?
"$ARGUS" --version | grep -q '^argus [0-9]' && ok "argus --version" || nok "argus --version"
exit 0
