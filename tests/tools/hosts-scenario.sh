#!/bin/sh
# hosts-scenario.sh OUT: the traces of three hosts on this one machine
# (root, the BPF backend, ip, python3, PostgreSQL), for tests/cli/hosts.sh
# and for trying argus on several hosts by hand. Run from the top of the
# source tree (ARGUS and B as for the tests).
#
# Three network namespaces stand for the hosts client, api and db, joined
# by veth pairs client<->api and api<->db, each pair with a /30 of its
# own (TEST-NET-2 and TEST-NET-3), nothing routed beyond: the client only
# talks to api, api only to db. On db, a PostgreSQL cluster listening on
# its veth address (tests/real/pg-lib.sh); on api, an API server
# (tests/cli/hosts.py) holding one connection to it; on client, a client
# making quick requests, each one UPDATE of row 1 on db. Then a psql
# session on db locks that row (SELECT ... FOR UPDATE) and keeps its
# transaction open for 3 s once another backend waits for the lock: the
# client's next request waits for api, which waits for db, whose backend
# waits for the lock. One last request is quick again.
#
# Each host is recorded by its own recorder (argus record --netns NS
# --host NAME --net --no-instrument), all started before the traffic and
# stopped after it. Into OUT:
#   raw-client raw-api raw-db   the three traces, as recorded
#   client api db               the same, api's clock moved 2.5 s ahead
#                               and db's 1.75 s behind (tests/tools/
#                               shift-trace); client's is a copy
#   raw-api1                    api again, recorded without --net (its
#                               sends left out: its messages pair one way)
#   lonely                      a trace of sleep, no message, host lonely
#   facts                       what happened, as shell assignments:
#                               CLIENT API HOLDER_PSQL (pids of the client,
#                               the API server, the psql holding the
#                               lock), HOLDER WAITER (the backends holding
#                               and waiting for the lock), POSTMASTER,
#                               DRIVER (the shell on db that commits after
#                               its sleep), the shifts API_SHIFT and
#                               DB_SHIFT in ns, the client's request times
#                               in ms (TIMES) and the addresses
#   log                         what went wrong, if anything
# Exits 0 when all of that is there, 2 when the machine cannot (no
# network namespaces: the reason on stderr), 1 otherwise.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
HERE=$(pwd)
# Debian's python3, not a shim of a user's environment (pyenv's shim is a
# bash script, whose children would be the client's in its trace)
PY3=/usr/bin/python3
[ -x $PY3 ] || PY3=python3

# the holder, run on db (internal): "hosts-scenario.sh holder DIR"
if [ "${1:-}" = holder ]; then
	D=$2
	. "$HERE/tests/real/pg-lib.sh"
	# wait_for TEST: until the shell test succeeds, 20 s at most
	wait_for() {
		_n=0
		until eval "$1"; do
			_n=$((_n + 1))
			[ $_n -gt 1000 ] && { echo "holder: no $1" >&2; exit 1; }
			sleep 0.02
		done
	}
	mkfifo "$D/h.in"
	"$PGBIN/psql" -X -q -At -h "$D/pg" -U postgres -d postgres \
	    < "$D/h.in" > "$D/h.out" 2>&1 &
	echo "$!" > "$D/holder_psql"
	exec 4> "$D/h.in"
	# the client's quick requests first
	wait_for '[ -e "$D/normal" ]'
	echo "BEGIN; SELECT v FROM t WHERE id = 1 FOR UPDATE;
	    SELECT 'held ' || pg_backend_pid();" >&4
	wait_for 'grep -q "^held" "$D/h.out"'
	sed -n 's/^held //p' "$D/h.out" > "$D/holder"
	touch "$D/held"
	wait_for 'lock_waiter > "$D/waiter"'
	echo "$$" > "$D/driver"
	sleep 3
	echo "COMMIT;" >&4
	echo '\q' >&4
	exec 4>&-
	wait
	exit 0
fi

OUT=${1:?usage: hosts-scenario.sh OUT}
mkdir -p "$OUT" || exit 1
rm -rf "$OUT/raw-client" "$OUT/raw-api" "$OUT/raw-db" "$OUT/raw-api1" \
    "$OUT/client" "$OUT/api" "$OUT/db" "$OUT/lonely" "$OUT/facts"
: > "$OUT/log"
D=$(mktemp -d /tmp/argus-hosts-XXXXXX)
chmod 755 "$D"
NC=argus-hc-$$ NA=argus-ha-$$ ND=argus-hd-$$
VC=ahc$$ VD=ahd$$
recs="" procs=""
cleanup() {
	touch "$D/done" "$D/normal" "$D/held"
	for p in $procs; do kill "$p" 2> /dev/null; done
	for p in $recs; do wait "$p" 2> /dev/null; done
	[ -d "$D/pg/data" ] && (. "$HERE/tests/real/pg-lib.sh"; pg_teardown)
	# what is left in the namespaces (a psql of the holder, say)
	for ns in "$NC" "$NA" "$ND"; do
		for p in $(ip netns pids "$ns" 2> /dev/null); do
			kill "$p" 2> /dev/null
		done
	done
	ip netns del "$NC" 2> /dev/null
	ip netns del "$NA" 2> /dev/null
	ip netns del "$ND" 2> /dev/null
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
	echo "hosts-scenario: $*" | tee -a "$OUT/log" >&2
	exit 1
}

# a /30 of each test network for this run: client .k+1, api .k+2 on
# 198.51.100.0/24; api .k+1, db .k+2 on 203.0.113.0/24
k=$(( ($$ % 63) * 4 ))
CA=198.51.100.$((k + 1)) AC=198.51.100.$((k + 2))
AD=203.0.113.$((k + 1)) DA=203.0.113.$((k + 2))
PORT=$((20000 + $$ % 20000))
export PGPORT=$((PORT + 1))
if ! ip netns add "$NC" 2> "$D/ns.err" || ! ip netns add "$NA" ||
    ! ip netns add "$ND" ||
    ! ip link add "$VC" netns "$NC" type veth peer name "${VC}a" netns "$NA" ||
    ! ip link add "$VD" netns "$ND" type veth peer name "${VD}a" netns "$NA" ||
    ! ip -n "$NC" addr add "$CA/30" dev "$VC" ||
    ! ip -n "$NA" addr add "$AC/30" dev "${VC}a" ||
    ! ip -n "$NA" addr add "$AD/30" dev "${VD}a" ||
    ! ip -n "$ND" addr add "$DA/30" dev "$VD"; then
	echo "no network namespaces: $(head -c 200 "$D/ns.err")" >&2
	exit 2
fi
for l in "$NC $VC" "$NA ${VC}a" "$NA ${VD}a" "$ND $VD" "$NC lo" "$NA lo" \
    "$ND lo"; do
	set -- $l
	ip -n "$1" link set "$2" up || fail "cannot set $2 up in $1"
done

# db: a cluster listening on its veth address, which lets in the hosts
# of its /30 (api) with trust authentication
printf 'local all all trust\nhost all all %s/30 trust\n' "$DA" > "$D/hba"
chmod 644 "$D/hba"
ip netns exec "$ND" env D="$D" PG_OPTS="-c listen_addresses=$DA \
    -c hba_file=$D/hba" sh -c '. tests/real/pg-lib.sh; pg_setup' \
    > "$D/pg.out" 2>&1
ip netns exec "$ND" env D="$D" sh -c '. tests/real/pg-lib.sh;
    pg_sql "SELECT count(*) FROM t"' > "$D/rows" 2>> "$D/pg.out"
[ "$(cat "$D/rows")" = 2 ] ||
    fail "no PostgreSQL on db: $(tail -3 "$D/pg.out" "$D/pg/log" 2> /dev/null)"
POSTMASTER=$(head -1 "$D/pg/data/postmaster.pid")

# the recorders, until the traffic is over (the file done says so; 60 s
# at most)
until_done="i=0; while [ ! -e $D/done ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
record() {	# TRACE NS HOST [--net]
	$ARGUS record -q -o "$OUT/$1" --netns "$2" --host "$3" ${4:-} \
	    --no-instrument --backend bpf -- sh -c "$until_done" \
	    > "$D/$1.rec" 2>&1 &
	recs="$recs $!"
}
record raw-client "$NC" client --net
record raw-api "$NA" api --net
record raw-db "$ND" db --net
record raw-api1 "$NA" api
# all record once their status files say so (30 s at most)
i=0
for t in raw-client raw-api raw-db raw-api1; do
	while [ ! -s "$OUT/$t/status" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$OUT/$t/status" ] ||
	    fail "the recorder of $t never started: $(head -3 "$D/$t.rec")"
done

PY="$HERE/tests/cli/hosts.py"
ip netns exec "$NA" $PY3 "$PY" api "$AC" "$PORT" "$DA" "$PGPORT" \
    > "$D/api.out" 2>&1 &
API=$!
procs="$procs $API"
ip netns exec "$ND" sh "$HERE/tests/tools/hosts-scenario.sh" holder "$D" \
    > "$D/holder.out" 2>&1 &
holder_sh=$!
procs="$procs $holder_sh"
ip netns exec "$NC" $PY3 "$PY" client "$AC" "$PORT" "$D/normal" \
    "$D/held" 5 ${HOSTS_SLICED:+sliced} > "$D/client.out" 2>&1 &
CLIENT=$!
procs="$procs $CLIENT"
wait $CLIENT
rc_client=$?
wait $API
rc_api=$?
wait $holder_sh
rc_holder=$?
touch "$D/done"
rc_rec=""
for p in $recs; do
	wait "$p"
	rc_rec="$rc_rec $?"
done
recs=""
[ $rc_client = 0 ] && [ $rc_api = 0 ] && [ $rc_holder = 0 ] ||
    fail "the traffic: client $rc_client, api $rc_api, holder $rc_holder:" \
    "$(tail -3 "$D/client.out" "$D/api.out" "$D/holder.out")"
[ "$rc_rec" = " 0 0 0 0" ] ||
    fail "the recorders' status:$rc_rec: $(cat "$D"/*.rec | head -5)"

$ARGUS record -q -o "$OUT/lonely" --host lonely --no-instrument \
    --backend bpf -- sleep 0.2 > "$D/lonely.rec" 2>&1 ||
    fail "recording lonely: $(head -3 "$D/lonely.rec")"
API_SHIFT=2500000000 DB_SHIFT=-1750000000
cp -r "$OUT/raw-client" "$OUT/client" &&
    "$B/tests/tools/shift-trace" "$OUT/raw-api" "$OUT/api" $API_SHIFT \
    > "$D/shift.out" 2>&1 &&
    "$B/tests/tools/shift-trace" "$OUT/raw-db" "$OUT/db" $DB_SHIFT \
    >> "$D/shift.out" 2>&1 || fail "shift-trace: $(cat "$D/shift.out")"
cat > "$OUT/facts" << EOF
CLIENT=$CLIENT
API=$API
HOLDER_PSQL=$(cat "$D/holder_psql")
HOLDER=$(cat "$D/holder")
WAITER=$(cat "$D/waiter")
DRIVER=$(cat "$D/driver")
POSTMASTER=$POSTMASTER
API_SHIFT=$API_SHIFT
DB_SHIFT=$DB_SHIFT
TIMES="$(tr '\n' ' ' < "$D/client.out")"
CLIENT_ADDR=$CA
API_ADDR=$AC
API_DB_ADDR=$AD
DB_ADDR=$DA
PORT=$PORT
PGPORT=$PGPORT
EOF
exit 0
