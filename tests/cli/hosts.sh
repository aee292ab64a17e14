#!/bin/sh
# needs: kernel tracing
# Several hosts in one diagnosis (issue 32): three hosts on this machine,
# client -> api -> db, in network namespaces, each recorded by its own
# scoped recorder, api's clock 2.5 s ahead and db's 1.75 s behind
# (tests/tools/hosts-scenario.sh: PostgreSQL on db, a psql session there
# holding a row lock 3 s while the client's request waits for api, which
# waits for db). Checks: each trace holds its own host's processes only;
# argus info finds the clocks from the messages between the traces (db
# has none with client, only with api), a bound from messages seen one
# way, nothing from a trace with none; argus diagnose of the three
# traces merged: the client's hang, its culprits on db, every thread
# host-qualified (HOST:COMM in the text, "host" in JSON), the hosts and
# their offsets; a trace with no message pairs left out with a warning;
# one host name twice, refused or told apart. Each run has two variants
# (HOSTS_VARIANTS, default "plain sliced"; "loaded" too in `make
# real-variants`): sliced, the client waits for its replies in 1 s
# slices; loaded, a busy loop per core runs throughout. HOSTS_RUNS=N runs them N times (default 1).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
RUNS=${HOSTS_RUNS:-1}
T=$(mktemp -d /tmp/argus-hosts-t-XXXXXX)
scen="" hogs=""
cleanup() {
	# the scenario cleans up after itself (namespaces, PostgreSQL,
	# processes) when it ends, by a signal too
	[ -n "$scen" ] && kill "$scen" 2> /dev/null && wait "$scen"
	for _p in $hogs; do
		kill "$_p" 2> /dev/null
	done
	tmux -S "$T/tmux.sock" kill-server 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

SUITE=hosts
. tests/lib.sh

needs root ip bpf
PY3=/usr/bin/python3
[ -x $PY3 ] || { needs python3; PY3=python3; }
ls /usr/lib/postgresql/*/bin/initdb > /dev/null 2>&1 || {
	echo "ok hosts: skipped (no PostgreSQL)"
	exit 0
}

# within MS GOT WANT: |GOT - WANT| < MS ms, GOT and WANT in seconds
within() { awk -v g="$2" -v w="$3" -v m="$1" 'BEGIN { d = g - w;
    exit !(g != "" && d < m / 1000 && d > -m / 1000) }'; }

# offset_of TRACE FILE: of argus info's line of TRACE in FILE, the offset
# (s) and the messages to it and from it, when it has an estimate
offset_of() {
	sed -n "s|^  $1: \([-+][0-9.]*\) s\( ± [^(]*\)\{0,1\} (.*; \([0-9]*\) messages to it, \([0-9]*\) from it)\$|\1 \3 \4|p" "$2"
}

one_run() {	# RUN VARIANT: the scenario into $T/RUN, then the checks
	R=$T/$1
	variant=$2
	sfx=""
	[ "$RUNS" -gt 1 ] && sfx=" (run $1)"
	[ "$variant" != plain ] && sfx="$sfx ($variant)"
	sliced=
	[ "$variant" = sliced ] && sliced=1
	# loaded: a busy shell loop per core through the scenario
	hogs=
	if [ "$variant" = loaded ]; then
		for _i in $(seq "$(nproc)"); do
			sh -c 'while :; do :; done' &
			hogs="$hogs $!"
		done
	fi
	HOSTS_SLICED=$sliced sh tests/tools/hosts-scenario.sh "$R" \
	    > "$T/scen.out" 2>&1 &
	scen=$!
	wait $scen
	rc=$?
	scen=""
	for _p in $hogs; do
		kill "$_p" 2> /dev/null
		wait "$_p" 2> /dev/null
	done
	hogs=""
	if [ $rc = 2 ]; then
		echo "ok hosts: skipped ($(head -c 200 "$T/scen.out"))"
		exit 0
	elif [ $rc != 0 ] || [ ! -s "$R/facts" ]; then
		nok "the scenario$sfx" "status $rc" "$(tail -5 "$T/scen.out")"
		return
	fi
	. "$R/facts"
	# the client's requests: quick, one waiting about 3 s, quick
	set -- $TIMES
	if [ $# = 7 ] && awk -v t="$TIMES" 'BEGIN { n = split(t, a, " ");
	    for (i = 1; i <= n; i++)
		if ((i == 6) != (a[i] > 2000) || a[i] > 4000) exit 1 }'; then
		ok "the scenario: 5 quick requests, one waiting for the row lock, one quick$sfx"
	else
		nok "the scenario's requests$sfx" "durations (ms): $TIMES"
	fi

	# each trace: its host's name, its processes, not the others'
	for h in client api db; do
		$ARGUS info "$R/$h" > "$R/$h.info" 2>&1
		sed -n 's/^host: *\([^,]*\),.*/\1/p' "$R/$h.info" > "$R/$h.host"
		awk '/^processes:/ { p = 1; next }
		    p && $1 ~ /^[0-9]+$/ { print $1 }' "$R/$h.info" > "$R/$h.pids"
	done
	mine() { grep -qx "$2" "$R/$1.pids"; }
	bad=""
	for p in $CLIENT; do
		mine client $p || bad="$bad client-not-in-client"
		mine api $p && bad="$bad client-in-api"
		mine db $p && bad="$bad client-in-db"
	done
	mine api $API || bad="$bad api-not-in-api"
	mine client $API && bad="$bad api-in-client"
	mine db $API && bad="$bad api-in-db"
	for p in $POSTMASTER $HOLDER $WAITER $HOLDER_PSQL $DRIVER; do
		mine db $p || bad="$bad $p-not-in-db"
		mine client $p && bad="$bad $p-in-client"
		mine api $p && bad="$bad $p-in-api"
	done
	for h in client api db; do
		[ "$(cat "$R/$h.host")" = $h ] || bad="$bad host-of-$h"
	done
	# events too: the API server's in api's trace only, the lock
	# holder's in db's only
	for h in client db; do
		[ -z "$($ARGUS dump --pid "$API" "$R/$h" | head -1)" ] ||
		    bad="$bad api-events-in-$h"
	done
	for h in client api; do
		[ -z "$($ARGUS dump --pid "$HOLDER" "$R/$h" | head -1)" ] ||
		    bad="$bad holder-events-in-$h"
	done
	[ -n "$($ARGUS dump --pid "$HOLDER" "$R/db" | head -1)" ] ||
	    bad="$bad no-holder-events-in-db"
	if [ -z "$bad" ]; then
		ok "each host's trace: its name and its own processes only$sfx"
	else
		nok "each host's trace: its own processes$sfx" "$bad"
	fi

	# argus info: api against client; db has no message with client (it
	# is today "not aligned"; aligned through api, its offset)
	$ARGUS info "$R/client" "$R/api" "$R/db" > "$R/info3" 2>&1
	rc=$?
	sed -n '/^clocks, against/,$p' "$R/info3" > "$R/clocks3"
	set -- $(offset_of "$R/api" "$R/clocks3")
	if [ $rc = 0 ] && [ $# = 3 ] && [ "$2" -ge 7 ] && [ "$3" -ge 7 ] &&
	    within 1 "$1" 2.5; then
		ok "info: api's clock 2.5 s ahead of client's, within 1 ms ($1 s, $2 and $3 messages)$sfx"
	else
		nok "info: api against client$sfx" "status $rc" "$(cat "$R/clocks3")"
	fi
	# db: no message with client, placed through api
	thr=$(sed -n "s|^  $R/db: through $R/api: \([-+][0-9.]*\) s .*|\1|p" \
	    "$R/clocks3")
	if grep -q "^  $R/db: no message pairs with it (.*): not aligned\$" \
	    "$R/clocks3" && [ -n "$thr" ] && within 1 "$thr" -1.75; then
		ok "info: db has no message with client, 1.75 s behind it through api, within 1 ms ($thr s)$sfx"
	else
		nok "info: db against client$sfx" "$(cat "$R/clocks3")"
	fi
	# db against api: the messages between them, each way
	$ARGUS info "$R/api" "$R/db" > "$R/info2" 2>&1
	set -- $(offset_of "$R/db" "$R/info2")
	if [ $# = 3 ] && [ "$2" -ge 7 ] && [ "$3" -ge 7 ] &&
	    within 1 "$1" -4.25; then
		ok "info: db's clock 4.25 s behind api's, within 1 ms ($1 s, $2 and $3 messages)$sfx"
	else
		nok "info: db against api$sfx" "$(sed -n '/^clocks/,$p' "$R/info2")"
	fi
	# messages seen one way: api recorded without --net (its sends left
	# out) pairs with client's sends only, a bound (the clocks are the
	# same: at most a little above 0)
	$ARGUS info "$R/client" "$R/raw-api1" > "$R/info1" 2>&1
	hi=$(sed -n "s|^  $R/raw-api1: at most \([-+][0-9.]*\) s ([0-9]* messages to it, none from it)\$|\1|p" "$R/info1")
	if [ -n "$hi" ] && awk -v h="$hi" 'BEGIN { exit !(h > -0.001 && h < 0.1) }'; then
		ok "info: messages seen one way give a bound, at most $hi s$sfx"
	else
		nok "info: messages one way$sfx" "$(sed -n '/^clocks/,$p' "$R/info1")"
	fi
	$ARGUS info "$R/client" "$R/lonely" > "$R/info0" 2>&1
	if grep -q "^  $R/lonely: no message pairs with it (.*): not aligned\$" "$R/info0"; then
		ok "info: a trace with no message pairs is not aligned$sfx"
	else
		nok "info: a trace with no message pairs$sfx" "$(sed -n '/^clocks/,$p' "$R/info0")"
	fi

	# the merged diagnosis: the client's hang, its culprits on db
	# sliced: the client named, as tests/real names the hung process
	# (a wait in timed slices is one wait for a named thread; unnamed,
	# it may be a main loop idle in slices)
	sel=
	[ "$variant" = sliced ] && sel="--pid $CLIENT"
	$ARGUS diagnose $sel "$R/client" "$R/api" "$R/db" > "$R/diag" 2> "$R/diag.err"
	rc=$?
	# the client's hang and what follows it, up to the next hang
	awk -v c="$CLIENT" '/^hang [0-9]+: / { p = ($3 ~ "^client:python3$" &&
	    ($4 == "(" c ")" || $4 == "(" c ",")) } p' "$R/diag" > "$R/hang"
	if [ $rc = 0 ] && head -1 "$R/hang" |
	    grep -Eq '^hang [0-9]+: client:python3 \([0-9]+[,)].* blocked for [23]\.[0-9]+ s'; then
		ok "diagnose of three hosts: the client's hang, host-qualified$sfx"
	else
		nok "diagnose of three hosts: the client's hang$sfx" "status $rc" \
		    "$(head -c 300 "$R/diag.err")" "$(grep '^hang' "$R/diag" | head -5)"
	fi
	# its culprits: a line of the culprits' list naming the backend that
	# held the lock, the one that waited for it or the psql session on db
	sed -n '/^  culprits:/,/^  [^ ]/p' "$R/hang" |
	    grep -E '^ +[0-9]+\. ' > "$R/culprits"
	if grep -Eq "^ +[0-9]+\. db:(postgres \(($HOLDER|$WAITER)|psql \($HOLDER_PSQL)[,)]" \
	    "$R/culprits"; then
		ok "diagnose of three hosts: the culprits reach db ($(grep -E -o 'db:[a-z]+ \([0-9]+' "$R/culprits" | head -1 | tr -d '('))$sfx"
	else
		nok "diagnose of three hosts: culprits on db$sfx" \
		    "holder backend $HOLDER, waiter $WAITER, psql $HOLDER_PSQL" \
		    "$(head -8 "$R/culprits")"
	fi
	if grep -Eq "api:python3 \($API[,)]" "$R/hang"; then
		ok "diagnose of three hosts: the path goes through api's server$sfx"
	else
		nok "diagnose of three hosts: through api$sfx" "$(sed -n 2,8p "$R/hang")"
	fi

	# JSON: the hosts, their offsets within 1 ms, every thread with its
	# host; the client's hang and a culprit on db
	$ARGUS diagnose $sel --json "$R/client" "$R/api" "$R/db" > "$R/json" 2> "$R/json.err"
	rc=$?
	$PY3 - "$R" "$CLIENT" "$HOLDER $WAITER $HOLDER_PSQL" "$API_SHIFT" \
	    "$DB_SHIFT" > "$R/json.check" 2>&1 << 'EOF'
import json, sys
r, client, db_pids = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
want = {"client": 0, "api": int(sys.argv[4]), "db": int(sys.argv[5])}
try:
    d = json.load(open(r + "/json"))
except ValueError as e:
    sys.exit("not JSON: %s" % e)
hosts = d.get("hosts")
bad = []
if [h.get("host") for h in hosts or []] != ["client", "api", "db"]:
    bad.append("hosts: %s" % hosts)
else:
    for h in hosts:
        if h.get("trace") != r + "/" + h["host"]:
            bad.append("trace of %s: %s" % (h["host"], h.get("trace")))
        off = h.get("offset_ns")
        if not isinstance(off, int) or abs(off - want[h["host"]]) >= 1000000:
            bad.append("offset of %s: %s" % (h["host"], off))
        if not isinstance(h.get("uncertainty_ns"), int) or \
                h["uncertainty_ns"] < 0:
            bad.append("uncertainty of %s: %s" % (h["host"],
                                                  h.get("uncertainty_ns")))
        if h["host"] != "client" and not h.get("pairs", 0) > 0:
            bad.append("pairs of %s: %s" % (h["host"], h.get("pairs")))
# every thread object names its host
def threads(o):
    if isinstance(o, dict):
        if "tid" in o and "comm" in o:
            yield o
        for v in o.values():
            yield from threads(v)
    elif isinstance(o, list):
        for v in o:
            yield from threads(v)
nohost = [t for t in threads(d) if t.get("host") not in want]
if nohost:
    bad.append("%d thread objects without a host, e.g. %s" %
               (len(nohost), nohost[0]))
hang = [h for h in d.get("hangs", []) if h["thread"].get("host") == "client"
        and h["thread"].get("pid") == client]
if not hang:
    bad.append("no hang of the client's pid %d" % client)
else:
    cul = [(c.get("host"), c.get("pid")) for c in hang[0].get("culprits", [])]
    if not any(h == "db" and str(p) in db_pids for h, p in cul):
        bad.append("culprits: %s" % cul)
print("\n".join(bad) if bad else "ok")
EOF
	if [ $rc = 0 ] && [ "$(cat "$R/json.check")" = ok ]; then
		ok "diagnose --json of three hosts: hosts, offsets within 1 ms, threads with their host$sfx"
	else
		nok "diagnose --json of three hosts$sfx" "status $rc" \
		    "$(head -c 300 "$R/json.err")" "$(head -c 600 "$R/json.check")"
	fi

	# export and the debugger take the three traces too (plain only)
	if [ "$variant" = plain ]; then
		$ARGUS export -o "$R/x.json" "$R/client" "$R/api" "$R/db" \
		    2> "$R/x.err"
		rc=$?
		n=$($PY3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
hs = set(n.split(":")[0] for n in names)
print(len(names), ",".join(sorted(hs)),
    int("db:postgres" in names), int("client:python3" in names))' \
		    "$R/x.json" 2> "$R/x.check")
		if [ $rc = 0 ] && [ "${n#* }" = "api,client,db 1 1" ]; then
			ok "export of three hosts: processes named host:comm ($n)"
		else
			nok "export of three hosts" "status $rc, $n" \
			    "$(head -c 300 "$R/x.err" "$R/x.check")"
		fi
		if command -v tmux > /dev/null 2>&1; then
			TM="tmux -S $T/tmux.sock -f /dev/null"
			$TM new-session -d -x 160 -y 45 \
			    "$ARGUS debug $R/client $R/api $R/db; sleep 60"
			w=0
			while [ $w -lt 100 ] && ! $TM capture-pane -p 2> /dev/null |
			    grep -q 'Spinning node'; do
				sleep 0.1
				w=$((w + 1))
			done
			$TM capture-pane -p > "$R/screen" 2> /dev/null
			$TM kill-server 2> /dev/null
			if grep -q "client/python3:$CLIENT" "$R/screen" &&
			    grep -q "api/python3:$API" "$R/screen" &&
			    grep -q "db/postgres:" "$R/screen"; then
				ok "debug of three hosts: lanes of each host, host-qualified"
			else
				nok "debug of three hosts" "$(head -20 "$R/screen")"
			fi
		fi
	fi

	# messages seen one way (raw-api1 kept no sends): merged on a bound,
	# said so (uncertainty -1 in JSON)
	$ARGUS diagnose --json "$R/client" "$R/raw-api1" > "$R/oneway" \
	    2> "$R/oneway.err"
	rc=$?
	n=$($PY3 -c 'import json, sys
hs = json.load(open(sys.argv[1]))["hosts"]
print(len(hs), int(hs[1]["merged"]), hs[1]["uncertainty_ns"],
    int(abs(hs[1]["offset_ns"]) < 1000000))' "$R/oneway" 2> /dev/null)
	if [ $rc = 0 ] && [ "$n" = "2 1 -1 1" ]; then
		ok "diagnose: messages seen one way merge on a bound$sfx"
	else
		nok "diagnose: messages seen one way$sfx" "status $rc, $n" \
		    "$(head -c 300 "$R/oneway.err")"
	fi

	# a fourth trace with no message pairs: left out, one warning
	$ARGUS diagnose --json "$R/client" "$R/api" "$R/db" "$R/lonely" \
	    > "$R/json4" 2> "$R/json4.err"
	rc=$?
	# (listed, as not merged)
	n=$($PY3 -c 'import json, sys
hs = json.load(open(sys.argv[1])).get("hosts", [])
print(",".join(h.get("host", "?") for h in hs if h.get("merged")) + "/" +
    ",".join(h.get("host", "?") for h in hs if h.get("merged") is False))' \
	    "$R/json4" 2> /dev/null)
	if [ $rc = 0 ] && [ "$(wc -l < "$R/json4.err")" = 1 ] &&
	    grep -q '^argus diagnose: .*lonely.*not aligned' "$R/json4.err" &&
	    [ "$n" = client,api,db/lonely ]; then
		ok "diagnose: a trace with no message pairs left out, with a warning$sfx"
	else
		nok "diagnose: a trace with no message pairs$sfx" "status $rc, hosts '$n'" \
		    "$(head -c 300 "$R/json4.err")"
	fi
	# one host name twice (api and raw-api1 are both "api"): an error
	# that says so, or the two told apart (and a warning saying how)
	$ARGUS diagnose "$R/client" "$R/api" "$R/raw-api1" > "$R/dup" 2> "$R/dup.err"
	rc=$?
	if [ $rc != 0 ] && [ "$(wc -l < "$R/dup.err")" = 1 ] &&
	    grep -q '^argus diagnose: .*api' "$R/dup.err"; then
		ok "diagnose: one host name twice, an error ($(cat "$R/dup.err"))$sfx"
	elif [ $rc = 0 ] && grep -q '^argus diagnose: .*api' "$R/dup.err"; then
		ok "diagnose: one host name twice, told apart ($(head -1 "$R/dup.err"))$sfx"
	else
		nok "diagnose: one host name twice$sfx" "status $rc" "$(head -3 "$R/dup.err")"
	fi
}

# each variant: plain, and the client waiting for its replies in 1 s
# slices (a poll timeout)
run=1
while [ $run -le "$RUNS" ]; do
	for v in ${HOSTS_VARIANTS:-plain sliced}; do
		one_run "$run$v" "$v"
	done
	run=$((run + 1))
done
exit 0
