# tests/real/redis-lib.sh: a redis server of Debian's redis-server
# package for a case (sourced by the cases that need one, after
# case-lib.sh): on the loopback, at a port of its own, no persistence,
# its files in the case's directory.

# redis_setup: start the server and measure how many turns of a Lua
# loop it runs a second (from a run of 2e7, about 0.2 s), into
# $D/port, $D/server.pid and $D/rate
redis_setup() {
	command -v redis-server > /dev/null
	echo $((20000 + $$ % 20000)) > "$D/port"
	redis-server --port "$(cat "$D/port")" --bind 127.0.0.1 --save '' \
	    --appendonly no --dir "$D" --daemonize yes \
	    --pidfile "$D/server.pid" --logfile "$D/server.log"
	wait_for '[ "$(redis-cli -p "$(cat "$D/port")" ping 2>/dev/null)" = PONG ]'
	_t0=$(date +%s%N)
	redis-cli -p "$(cat "$D/port")" eval \
	    'local i = 0 while i < 2e7 do i = i + 1 end return 1' 0 > /dev/null
	_t1=$(date +%s%N)
	echo $((20000000 * 1000000000 / (_t1 - _t0))) > "$D/rate"
}

# redis_busy: a redis-cli that makes the server run a Lua loop of about
# 3 s, in the background (its pid in $busy), once the server runs it
redis_busy() {
	redis-cli -p "$(cat "$D/port")" eval "local i = 0 while i < \
$(($(cat "$D/rate") * 3)) do i = i + 1 end return 1" 0 > /dev/null &
	busy=$!
	remember $busy
	wait_for 'grep -q "^State:.*R (running)" /proc/$(cat "$D/server.pid")/status'
}

# redis_teardown: stop the server
redis_teardown() {
	[ -f "$D/server.pid" ] && kill "$(cat "$D/server.pid")" 2>/dev/null
	return 0
}
