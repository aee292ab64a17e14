#!/bin/sh
# Tests of argus snapshot and of --snapshot-on-hang, against real
# recordings (needs root): a snapshot taken while the recorder rotates
# small segments links the closed ones and copies the open one up to its
# last complete chunk, every command reads it, and it outlives the ring;
# a hang marked by libargus's watchdog makes the recorder snapshot by
# itself, named by time and process, bounded in count, listed by status.
# A destination of another user's is refused at once (FIFOs planted there
# never block it); a snapshot folder that is a symbolic link, at start or
# swapped in later, is refused; start returns with a segment to snapshot.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-snapcli-XXXXXX)
trap '$ARGUS stop -o "$T/live" > /dev/null 2>&1; rm -rf "$T"' EXIT

SUITE=snapshot
. tests/lib.sh


$ARGUS snapshot --help | grep -q '^usage: argus snapshot' && ok "help" || nok "help"
check_err "no destination" 2 $ARGUS snapshot -o "$T/none"
check_err "bad --last" 2 $ARGUS snapshot --last soon "$T/x"
check_err "no trace" 1 $ARGUS snapshot -o "$T/none" "$T/x"
[ -e "$T/x" ] && nok "a failed snapshot leaves nothing" ||
	ok "a failed snapshot leaves nothing"

skip_if_wedged "recording tests" && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "ok snapshot: recording tests skipped (not root)"
	exit 0
fi

# --- a snapshot while the recorder rotates -----------------------------------
# every syscall, 256 KiB segments, 2 MiB in all: dd makes them turn over
load() { dd if=/dev/zero of=/dev/null bs=1 count="$1" status=none; }
if ! $ARGUS start -q -o "$T/live" --events full --segment 256k --size 2M \
    > /dev/null 2> "$T/err"; then
	nok "recorder starts" "$(cat "$T/err")"
	exit 0
fi
load 800000
sleep 0.5
# the ring keeps turning over while the snapshot is taken, at about two
# segments a second, so its last second spans a few segments but not all
(while :; do load 20000; sleep 0.1; done) &
lp=$!
sleep 1.2
$ARGUS snapshot -o "$T/live" --last 1 "$T/s1" > "$T/out" 2> "$T/err"
rc=$?
kill $lp 2> /dev/null
wait $lp 2> /dev/null
nlive=$(ls "$T/live" | grep -c '^seg-')
nsnap=$(ls "$T/s1" 2>/dev/null | grep -c '^seg-')
if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$nsnap" -ge 2 ] &&
    [ "$nsnap" -lt "$nlive" ]; then
	ok "snapshot of the last second while recording"
else
	nok "snapshot of the last second while recording" "status $rc, $nsnap of $nlive segments" \
	    "$(cat "$T/out" "$T/err")"
fi
# closed segments are hard links of the trace's; the newest, still being
# written, is a copy of its own (a link would keep growing)
newest=$(ls "$T/s1" | grep '^seg-' | tail -n 1)
links=0 bad=""
for f in $(ls "$T/s1" | grep '^seg-'); do
	[ "$f" = "$newest" ] && continue
	if [ -e "$T/live/$f" ] && [ "$(stat -c %i "$T/s1/$f")" = "$(stat -c %i "$T/live/$f")" ]; then
		links=$((links + 1))
	else
		bad="$bad $f"
	fi
done
if [ -n "$newest" ] && [ -z "$bad" ] && [ "$links" -ge 1 ] &&
    [ "$(stat -c %i "$T/s1/$newest")" != "$(stat -c %i "$T/live/$newest" 2>/dev/null)" ] &&
    [ "$(stat -c %h "$T/s1/$newest")" = 1 ]; then
	ok "closed segments linked, the open one copied"
else
	nok "closed segments linked, the open one copied" "links $links, not linked:$bad, newest $newest"
fi
$ARGUS info --segments "$T/s1" > "$T/info" 2> "$T/err"
rc=$?
unindexed=$(grep -c 'open or unindexed' "$T/info")
if [ $rc -eq 0 ] && [ ! -s "$T/err" ] && [ "$unindexed" = 0 ] &&
    grep -q "^segments: *$nsnap readable of $nsnap" "$T/info"; then
	ok "info reads it: every segment complete and indexed, no damage"
else
	nok "info reads it: every segment complete and indexed, no damage" \
	    "status $rc, $unindexed unindexed" "$(cat "$T/err")" "$(sed -n 6,8p "$T/info")"
fi
ev1=$($ARGUS dump "$T/s1" 2> "$T/err" | wc -l)
[ "$ev1" -gt 1000 ] && [ ! -s "$T/err" ] && ok "dump reads it ($ev1 events)" ||
	nok "dump reads it" "$ev1 events" "$(head -n 3 "$T/err")"
threads=$($ARGUS dump "$T/s1" --type switch 2> /dev/null | grep -c ' dd ')
[ "$threads" -gt 0 ] && ok "thread table: dd is named" || nok "thread table: dd is named"
$ARGUS diagnose "$T/s1" > /dev/null 2> "$T/err" && ok "diagnose reads it" ||
	nok "diagnose reads it" "$(cat "$T/err")"
$ARGUS graph --check "$T/s1" > /dev/null 2> "$T/err" && ok "graph reads it" ||
	nok "graph reads it" "$(cat "$T/err")"
# the ring turns over: the originals go, the snapshot stays whole
load 1500000
sleep 1.2
gone=0
for f in $(ls "$T/s1"); do [ -e "$T/live/$f" ] || gone=$((gone + 1)); done
ev2=$($ARGUS dump "$T/s1" 2> /dev/null | wc -l)
if [ "$gone" = "$nsnap" ] && [ "$ev2" = "$ev1" ]; then
	ok "the snapshot outlives the ring"
else
	nok "the snapshot outlives the ring" "$gone of $nsnap gone, events $ev1 -> $ev2"
fi
check_err "destination not empty" 1 $ARGUS snapshot -o "$T/live" "$T/s1"
# (the system keeps writing: a segment there before and after the
# snapshot was there during it)
before=$(ls "$T/live" | grep '^seg-')
$ARGUS snapshot -o "$T/live" --last 0 "$T/all" > /dev/null 2>&1
missing=""
for f in $before; do
	[ -e "$T/live/$f" ] && [ ! -e "$T/all/$f" ] && missing="$missing $f"
done
[ -n "$before" ] && [ -z "$missing" ] &&
	ok "--last 0 takes every segment" ||
	nok "--last 0 takes every segment" "missing:$missing"
# a destination of another user's, empty or with FIFOs named as the
# temporary files of the segments: refused at once, nothing written there
mkdir "$T/dn" "$T/dnf"
for f in $(ls "$T/live" | grep '^seg-'); do mkfifo "$T/dnf/.$f.tmp"; done
chown nobody "$T/dn" "$T/dnf" "$T/dnf"/.seg-* 2> /dev/null
check_err "a destination owned by another user is refused" 1 \
    timeout 10 $ARGUS snapshot -o "$T/live" "$T/dn"
grep -q 'owned by uid' "$T/err" && [ -z "$(ls -A "$T/dn")" ] &&
	ok "... saying whose it is, writing nothing" ||
	nok "... saying whose it is, writing nothing" "$(cat "$T/err")" "$(ls -A "$T/dn")"
check_err "a destination of another user's with planted FIFOs ends at once" 1 \
    timeout 10 $ARGUS snapshot -o "$T/live" "$T/dnf"
$ARGUS stop -o "$T/live" > /dev/null 2>&1

# --- start, then snapshot at once -----------------------------------------------
# start returns once the first segment with events is on disk
bad=""
for i in 1 2 3; do
	if ! $ARGUS start -q -o "$T/st$i" > /dev/null 2> "$T/err"; then
		bad="$bad start: $(cat "$T/err")"
		continue
	fi
	$ARGUS snapshot -o "$T/st$i" "$T/st$i-snap" > /dev/null 2> "$T/err" ||
		bad="$bad $i: $(cat "$T/err")"
	$ARGUS stop -o "$T/st$i" > /dev/null 2>&1
done
[ -z "$bad" ] && ok "snapshot right after start (3 of 3)" ||
	nok "snapshot right after start (3 of 3)" "$bad"

# --- snapshots at hangs --------------------------------------------------------
H=$B/tests/progs/ins-hang
# three hangs of 400 ms, each seen by the watchdog (200 ms) and followed
# by quiet time for the snapshot: at most two snapshots are kept
$ARGUS record -q -o "$T/h" --snapshot-on-hang "$T/snaps" --snapshot-max 2 -- \
    sh -c "for i in 1 2 3; do ARGUS_HANG_MS=200 $H sleep 400 > /dev/null; sleep 2.6; done" \
    2> "$T/err"
rc=$?
taken=$(grep -c 'hang snapshot in' "$T/err")
n=$(ls "$T/snaps" 2>/dev/null | wc -l)
if [ $rc -eq 0 ] && [ "$taken" = 3 ] && [ "$n" = 2 ]; then
	ok "a snapshot at each hang, two kept (--snapshot-max 2)"
else
	nok "a snapshot at each hang, two kept (--snapshot-max 2)" \
	    "status $rc, $taken taken, $n kept" "$(cat "$T/err")"
fi
last=$(grep 'hang snapshot in' "$T/err" | tail -n 1 | sed 's/.* in //')
first=$(grep 'hang snapshot in' "$T/err" | head -n 1 | sed 's/.* in //')
[ -d "$last" ] && [ ! -e "$first" ] && ok "the oldest snapshot went first" ||
	nok "the oldest snapshot went first" "first $first, last $last"
case $(basename "$last") in
20[0-9][0-9][01][0-9][0-3][0-9]-[0-2][0-9][0-5][0-9][0-5][0-9]Z-ins-hang-[0-9]*)
	ok "named by time and process" ;;
*)	nok "named by time and process" "$last" ;;
esac
$ARGUS diagnose "$last" > "$T/diag" 2> "$T/err"
grep -q '^hang 1: ins-hang ([0-9]*) .*\[mark\]' "$T/diag" &&
	ok "the snapshot holds the marked hang" ||
	nok "the snapshot holds the marked hang" "$(head -n 3 "$T/diag" "$T/err")"
$ARGUS status -o "$T/h" > "$T/st" 2>&1
if grep -q "^snapshots: *2 in $T/snaps" "$T/st" &&
    grep -q "^  $(basename "$last")  .* of events, 1 segments" "$T/st"; then
	ok "status lists the snapshots"
else
	nok "status lists the snapshots" "$(cat "$T/st")"
fi
# a size bound of one byte keeps only the newest
$ARGUS record -q -o "$T/h2" --snapshot-on-hang "$T/snaps" --snapshot-size 1 -- \
    sh -c "ARGUS_HANG_MS=200 $H sleep 400 > /dev/null" 2> "$T/err"
n=$(ls "$T/snaps" | wc -l)
[ "$n" = 1 ] && grep -q 'hang snapshot in' "$T/err" &&
	ok "--snapshot-size: the newest stays, older ones go" ||
	nok "--snapshot-size: the newest stays, older ones go" "$n kept" "$(cat "$T/err")"
# the snapshot folder a symbolic link: refused at start, and when one is
# put in its place while recording, the snapshot is refused, never taken
# through it
mkdir "$T/elsewhere"
ln -s "$T/elsewhere" "$T/snaplink"
check_err "--snapshot-on-hang refuses a symbolic link" 1 \
    $ARGUS record -q -o "$T/h3" --snapshot-on-hang "$T/snaplink" -- \
    sh -c "ARGUS_HANG_MS=200 $H sleep 400 > /dev/null"
grep -q 'symbolic link' "$T/err" && [ -z "$(ls -A "$T/elsewhere")" ] &&
	ok "... by name, nothing taken" ||
	nok "... by name, nothing taken" "$(cat "$T/err")" "$(ls -A "$T/elsewhere")"
$ARGUS record -q -o "$T/h4" --snapshot-on-hang "$T/sn4" -- \
    sh -c "ln -s '$T/elsewhere' '$T/sn4'; ARGUS_HANG_MS=200 $H sleep 400 > /dev/null" \
    2> "$T/err"
grep -q 'snapshot at a hang.*symbolic link' "$T/err" &&
    [ -z "$(ls -A "$T/elsewhere")" ] &&
	ok "a snapshot folder swapped for a link while recording is refused" ||
	nok "a snapshot folder swapped for a link while recording is refused" \
	    "$(cat "$T/err")" "$(ls -A "$T/elsewhere")"
