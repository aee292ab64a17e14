#!/bin/sh
# Tests of the systemd unit dist/argus.service.in: `systemd-analyze
# verify` on it (with the man pages it names installed in a scratch
# MANPATH), the hardening it promises, and its ExecStart command line run
# by hand the way systemd would run it: no new privileges and only the
# capabilities of CapabilityBoundingSet=, then stopped with its
# KillSignal. systemd need not be PID 1 for any of this.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-service-XXXXXX)
chmod 755 "$T"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT

SUITE=service
. tests/lib.sh

U=dist/argus.service.in
abs=$(cd "$(dirname "$ARGUS")" && pwd)/$(basename "$ARGUS")
sed "s|@BINDIR@/argus|$abs|" "$U" > "$T/argus.service"

# --- static checks ------------------------------------------------------------
if command -v systemd-analyze > /dev/null; then
	# the Documentation= pages must be found by man
	mkdir -p "$T/man/man1" "$T/man/man8"
	cp man/*.1 "$T/man/man1/"
	cp man/*.8 "$T/man/man8/"
	if out=$(MANPATH="$T/man" systemd-analyze verify "$T/argus.service" 2>&1) &&
	    [ -z "$out" ]; then
		ok "systemd-analyze verify"
	else
		nok "systemd-analyze verify" "$out"
	fi
else
	echo "ok service: systemd-analyze verify skipped (no systemd-analyze; apt-get install systemd)"
fi
missing=""
for k in 'ProtectSystem=strict' 'ReadWritePaths=/var/lib/argus' \
    'ProtectHome=yes' 'PrivateTmp=yes' 'NoNewPrivileges=yes' \
    'Restart=on-failure' 'StateDirectory=argus' 'CapabilityBoundingSet=CAP_'; do
	grep -q "^$k" "$U" || missing="$missing $k"
done
grep -q '^ExecStart=@BINDIR@/argus record .*-o /var/lib/argus/' "$U" ||
	missing="$missing ExecStart"
grep -q '^ExecStart=.*--duration' "$U" && missing="$missing (has --duration)"
[ -z "$missing" ] && ok "unit is hardened and records into /var/lib/argus" ||
	nok "unit is hardened and records into /var/lib/argus" "missing:$missing"

if [ "$(id -u)" != 0 ]; then
	echo "ok service: ExecStart by hand skipped (not root)"
	exit 0
fi

skip_if_wedged "ExecStart by hand" && exit 0
# --- ExecStart by hand ----------------------------------------------------------
# capabilities as setpriv's bounding set: CAP_SYS_NICE -> +sys_nice
caps=-all
for c in $(sed -n 's/^CapabilityBoundingSet=//p' "$U"); do
	caps="$caps,+$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"
done
cmd=$(sed -n 's/^ExecStart=//p' "$T/argus.service" |
    sed "s|/var/lib/argus|$T/state|g")
mkdir -p "$T/state"
# shellcheck disable=SC2086
setpriv --no-new-privs --bounding-set "$caps" $cmd 2> "$T/err" &
pid=$!
# meanwhile a process of another user waits in reads of a FIFO it holds
# open, which a thread of its own writes (every backend records a call
# that blocks): what that descriptor is needs the kept capabilities
sleep 1
mkfifo -m 666 "$T/nobody-file"
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import os, sys, threading, time
fd = os.open(sys.argv[1], os.O_RDWR)
def writer():
    for i in range(8):
        time.sleep(0.1)
        os.write(fd, b"x")
threading.Thread(target=writer).start()
for i in range(8):
    os.read(fd, 1)
' "$T/nobody-file"
sleep 1.2
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
if [ $rc -eq 0 ] && [ ! -s "$T/err" ] &&
    $ARGUS info "$T/state/trace" > "$T/info" 2>&1 &&
    grep -q '^segments: *1 readable' "$T/info"; then
	ok "ExecStart records until SIGTERM, with only its capabilities"
else
	nok "ExecStart records until SIGTERM, with only its capabilities" \
	    "status $rc, caps $caps" "$(cat "$T/err")" "$(head -n 8 "$T/info")"
fi
# the unit's capabilities are enough for the BPF recorder wherever root
# has one (ARGUS_BACKEND may ask the suites for tracefs)
want=tracefs
if [ "${ARGUS_BACKEND:-auto}" != tracefs ] &&
    $ARGUS record -q -o "$T/bpf-probe" --backend bpf --duration 0.1 \
    > /dev/null 2>&1; then
	want=bpf
fi
got=$(sed -n 's/^recorder: *\([a-z]*\).*/\1/p' "$T/info")
[ "$got" = "$want" ] && ok "the service records with the $want backend" ||
	nok "the service records with the $want backend" "recorder: $got"
$ARGUS dump "$T/state/trace" --type fd | grep -q nobody-file &&
	ok "descriptors of another user's process identified" ||
	nok "descriptors of another user's process identified"
grep -q '^running 0' "$T/state/trace/status" && ok "status says stopped" ||
	nok "status says stopped" "$(cat "$T/state/trace/status")"

# --- a group reads the trace (--group) ----------------------------------------
# shellcheck disable=SC2086
setpriv --no-new-privs --bounding-set "$caps" $cmd -o "$T/state/grp" \
    --group daemon --duration 1 2> "$T/err"
m=$(stat -c '%a %G' "$T/state/grp")
if [ "$m" = "750 daemon" ] && setpriv --reuid=65534 --regid=65534 \
    --groups=daemon $ARGUS info "$T/state/grp" > /dev/null 2> "$T/err"; then
	ok "--group: a member of the group reads the trace"
else
	nok "--group: a member of the group reads the trace" "dir $m" "$(cat "$T/err")"
fi
