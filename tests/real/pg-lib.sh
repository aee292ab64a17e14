# tests/real/pg-lib.sh: a PostgreSQL cluster of Debian's postgresql
# package in a case's directory (sourced by the pg-*.case files): initdb
# as user postgres (initdb refuses root), Unix socket in the directory
# only, no TCP; psql connects as postgres with trust authentication.
# PG_OPTS, if set, adds options of postgres (after those, so that a
# "-c listen_addresses=ADDR" of it listens on TCP after all).

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

pg_setup() {
	[ -x "$PGBIN/initdb" ] || { echo "no postgresql" >&2; exit 1; }
	mkdir -p "$D/pg"
	chown postgres "$D/pg"
	runuser -u postgres -- "$PGBIN/initdb" -D "$D/pg/data" -A trust \
	    -U postgres > "$D/initdb.log" 2>&1
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D/pg/data" -w -t 30 \
	    -l "$D/pg/log" -o "-k $D/pg -c listen_addresses= \
	    -c deadlock_timeout=10s ${PG_OPTS:-}" start > /dev/null
	pg_sql 'CREATE TABLE t (id int PRIMARY KEY, v int);
	    INSERT INTO t VALUES (1, 0), (2, 0);' > /dev/null
}

pg_teardown() {
	[ -d "$D/pg/data" ] && runuser -u postgres -- "$PGBIN/pg_ctl" \
	    -D "$D/pg/data" -m immediate -w stop > /dev/null 2>&1
	return 0
}

# pg_sql SQL: run SQL in a new session and print the result (tuples only)
pg_sql() {
	"$PGBIN/psql" -X -q -At -h "$D/pg" -U postgres -d postgres -c "$1"
}

# pg_session NAME: a psql reading commands from the fifo DIR/NAME.in
# (written through fd 4 by the caller) into DIR/NAME.out; sets $psql
pg_session() {
	mkfifo "$D/$1.in"
	"$PGBIN/psql" -X -q -At -h "$D/pg" -U postgres -d postgres \
	    < "$D/$1.in" > "$D/$1.out" 2>&1 &
	psql=$!
	remember $psql
}

# lock_waiter: the pid of a backend waiting for a lock, from pg_locks
# (a scan of every process title took seconds on a busy machine, which
# stretched the hang past the sleep that ends it)
lock_waiter() {
	_w=$(pg_sql "SELECT pid FROM pg_locks WHERE NOT granted LIMIT 1")
	[ -n "$_w" ] && echo "$_w"
}
