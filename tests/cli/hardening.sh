#!/bin/sh
# hardening.sh: inputs that once made argus wrong, endless or silent
# (issue 16, items 4, 5, 7, 10 and 12), each checked against what must
# hold now:
#  10 the reader skips, with a warning, a segment copied under another
#     name, a segment of another recording and a segment of a newer
#     format; a seek index that disagrees with its chunks (all entries
#     on chunk 0, or past the end) is replaced by walking the chunks, and
#     a chunk unlike its entry is skipped when read;
#  5  --rules /dev/zero ends at once with an error;
#  12 a NUL byte in a rules file is named by line and column; --at
#     outside the trace is an error; --group lets the group into the
#     directory; the loss is in the trace;
#  4  start -o RELATIVE records where the caller means, and stop finds it;
#  7  a recorder killed with SIGKILL leaves no tracing on and no orphan.
# The last three record for real (skipped, and said so, without root).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-hard-XXXXXX)
cleanup() { rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
SUITE=hardening
. tests/lib.sh
skip() { echo "ok hardening: $1 # skip $2"; }

events() { "$ARGUS" info --events "$1" 2>/dev/null | sed -n 's/^events: *\([0-9]*\) read.*/\1/p'; }

# --- 10: wrong segments ----------------------------------------------------
"$B/tests/tools/mktrace" "$T/a" 400000 65536 >/dev/null 2>&1
"$B/tests/tools/mktrace" "$T/b" 400000 65536 >/dev/null 2>&1
n0=$(events "$T/a")
cp -r "$T/a" "$T/copy"
cp "$T/copy/seg-00000002.argus" "$T/copy/seg-00000099.argus"
n1=$(events "$T/copy")
"$ARGUS" info "$T/copy" 2>"$T/err" >/dev/null
if [ -n "$n0" ] && [ "$n1" = "$n0" ] && grep -q 'seg-00000099.argus.*copy' "$T/err"; then
	ok "10 a copy of a segment under another name is skipped"
else
	nok "10 a copy of a segment under another name is skipped" "events $n1, want $n0" "$(cat "$T/err")"
fi
cp -r "$T/a" "$T/mixed"
last=$(ls "$T/a" | grep seg- | tail -n 1)
cp "$T/b/$last" "$T/mixed/$last"
"$ARGUS" info "$T/mixed" 2>"$T/err" >/dev/null
if grep -q "$last.*another recording" "$T/err"; then
	ok "10 a segment of another recording is skipped"
else
	nok "10 a segment of another recording is skipped" "$(cat "$T/err")"
fi
cp -r "$T/a" "$T/newer"
python3 - "$T/newer/seg-00000003.argus" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
struct.pack_into("<I", b, 8, 99)
open(p, "wb").write(b)
PY
if "$ARGUS" info "$T/newer" >/dev/null 2>"$T/err" &&
    grep -q "seg-00000003.argus.*newer" "$T/err"; then
	ok "10 a segment of a newer format is skipped, not the trace"
else
	nok "10 a segment of a newer format is skipped, not the trace" "$(cat "$T/err")"
fi
# indexes with CRC-valid lies: every entry on chunk 0; one past the end
for how in zero past; do
	cp -r "$T/a" "$T/idx-$how"
	python3 - "$T/idx-$how/seg-00000002.argus" $how <<'PY'
import struct, sys, zlib
p, how = sys.argv[1], sys.argv[2]
b = bytearray(open(p, "rb").read())
ioff, n = struct.unpack_from("<QI", b, len(b) - 24)
first = struct.unpack_from("<Q", b, ioff + 16)[0]
for i in range(n):
	e = ioff + 16 + 32 * i
	if how == "zero":
		b[e:e + 32] = b[ioff + 16:ioff + 48]
	elif i == n - 1:
		struct.pack_into("<Q", b, e, len(b) + 4096)
crc = zlib.crc32(bytes(b[ioff:ioff + 16 + 32 * n]))
struct.pack_into("<I", b, len(b) - 12, crc)
open(p, "wb").write(b)
PY
	n2=$(events "$T/idx-$how")
	if [ "$n2" = "$n0" ]; then
		ok "10 an index with entries $how: the chunks are walked"
	else
		nok "10 an index with entries $how: the chunks are walked" "events $n2, want $n0"
	fi
done
# a CRC-valid index whose second entry says one event more than its chunk:
# that chunk alone is skipped, with a warning, when it is read
cp -r "$T/a" "$T/idx-count"
lost=$(python3 - "$T/idx-count/seg-00000002.argus" <<'PY'
import struct, sys, zlib
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
ioff, n = struct.unpack_from("<QI", b, len(b) - 24)
e = ioff + 16 + 32
count = struct.unpack_from("<I", b, e + 24)[0]
struct.pack_into("<I", b, e + 24, count + 1)
crc = zlib.crc32(bytes(b[ioff:ioff + 16 + 32 * n]))
struct.pack_into("<I", b, len(b) - 12, crc)
open(p, "wb").write(b)
print(count)
PY
)
n3=$("$ARGUS" info --events "$T/idx-count" 2>"$T/err" | sed -n 's/^events: *\([0-9]*\) read.*/\1/p')
if [ -n "$lost" ] && [ "$n3" = "$((n0 - lost))" ] &&
    grep -q "seg-00000002.argus.*unlike its seek index entry" "$T/err"; then
	ok "10 a chunk unlike its index entry is skipped when read"
else
	nok "10 a chunk unlike its index entry is skipped when read" "events $n3, want $n0 - $lost" "$(cat "$T/err")"
fi

# --- 5 and 12: rules files -------------------------------------------------
"$B/tests/tools/mkhang" "$T/mk" >/dev/null 2>&1
timeout 20 "$ARGUS" graph --rules /dev/zero --check "$T/mk" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(wc -l <"$T/out")" = 1 ]; then
	ok "5 --rules /dev/zero is refused at once"
else
	nok "5 --rules /dev/zero is refused at once" "rc=$rc" "$(head -c 300 "$T/out")"
fi
printf 'skip comm x\nskip\0comm y\n' >"$T/nul.rules"
"$ARGUS" graph --rules "$T/nul.rules" --check "$T/mk" >"$T/out" 2>&1
if grep -q 'nul.rules:2:5:' "$T/out"; then
	ok "12 a NUL byte in a rules file is named by line and column"
else
	nok "12 a NUL byte in a rules file is named by line and column" "$(cat "$T/out")"
fi

# --- 12: --at outside the trace ---------------------------------------------
for at in 10m @18446744073709551615 @0; do
	"$ARGUS" diagnose --at "$at" "$T/mk" >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'outside the trace' "$T/out"; then
		ok "12 diagnose --at $at is an error"
	else
		nok "12 diagnose --at $at is an error" "rc=$rc" "$(head -n 3 "$T/out")"
	fi
done

# --- recording for real ------------------------------------------------------
skip_if_wedged "4 7 12 recordings" && exit 0
if [ "$(id -u)" != 0 ] || ! "$ARGUS" record -q --no-instrument -o "$T/probe" \
    --duration 0.2 >/dev/null 2>&1; then
	skip "4 7 12 recordings" "cannot record here"
	exit 0
fi
# 4: a relative directory
mkdir "$T/cwd"
if (cd "$T/cwd" && "$ARGUS" start -q --no-instrument -o rel >/dev/null 2>&1); then
	sleep 0.5
	st=$(cd "$T/cwd" && "$ARGUS" status -o rel 2>&1 | head -n 1)
	(cd "$T/cwd" && "$ARGUS" stop -o rel >/dev/null 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -d "$T/cwd/rel" ] && ls "$T/cwd/rel" | grep -q seg- &&
	    echo "$st" | grep -q running; then
		ok "4 start -o RELATIVE records there; status and stop find it"
	else
		nok "4 start -o RELATIVE records there; status and stop find it" "stop rc=$rc" "$st"
	fi
else
	nok "4 start -o RELATIVE records there; status and stop find it" "start failed"
fi
# 12: --group lets the group read the directory
"$ARGUS" record -q --no-instrument -o "$T/grp" --group nogroup --duration 0.3 \
    >/dev/null 2>&1
m=$(stat -c '%a %G' "$T/grp" 2>/dev/null)
if [ "$m" = "750 nogroup" ]; then
	ok "12 --group makes the directory 0750 in that group"
else
	nok "12 --group makes the directory 0750 in that group" "$m"
fi
# 12: events lost under load, from the very start, are in the trace as in
# the status (a loss noticed before a CPU's first event was dropped)
for be in bpf tracefs; do
	dd if=/dev/zero bs=1 count=4000000 2>/dev/null | cat > /dev/null &
	lp=$!
	sleep 0.1
	if ! "$ARGUS" start -q -o "$T/lost-$be" --backend $be --events full \
	    --buffer-kb 8 > /dev/null 2>&1; then
		skip "12 $be: events lost at startup" "no $be backend here"
		kill $lp 2>/dev/null
		continue
	fi
	wait $lp
	s=$("$ARGUS" status -o "$T/lost-$be" 2>/dev/null | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
	"$ARGUS" stop -o "$T/lost-$be" > /dev/null 2>&1
	i=$("$ARGUS" info --events "$T/lost-$be" 2>/dev/null | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
	if [ "${s:-0}" -gt 0 ] && [ "${i:-0}" -ge "$s" ]; then
		ok "12 $be: events lost at startup are in the trace"
	else
		nok "12 $be: events lost at startup are in the trace" \
		    "status says ${s:-?} lost, info ${i:-?}"
	fi
done
# 7: SIGKILL leaves nothing behind
"$ARGUS" record -q -o "$T/k" -- sleep 30 >/dev/null 2>&1 &
rp=$!
sleep 1
child=$(pgrep -P $rp sleep)
kill -KILL $rp
wait $rp 2>/dev/null
sleep 2
inst=/sys/kernel/tracing/instances/argus-$rp
if [ -n "$child" ] && gone "$child"; then
	ok "7 the command dies with a killed recorder"
else
	nok "7 the command dies with a killed recorder" "child=$child"
	[ -n "$child" ] && kill "$child" 2>/dev/null
fi
if ! [ -d "$inst" ] || [ "$(cat "$inst/tracing_on" 2>/dev/null)" = 0 ]; then
	ok "7 a killed recorder leaves no tracing on"
else
	nok "7 a killed recorder leaves no tracing on" "$inst: tracing_on=$(cat "$inst/tracing_on")"
fi
exit 0
