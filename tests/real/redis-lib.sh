# tests/real/redis-lib.sh: a redis server of Debian's redis-server
# package for a case (sourced by the cases that need one, after
# case-lib.sh): on the loopback, at a port of its own, no persistence,
# its files in the case's directory.

# redis_setup: start the server; its port in $D/port, its pid in
# $D/server.pid
redis_setup() {
	command -v redis-server > /dev/null
	echo $((20000 + $$ % 20000)) > "$D/port"
	redis-server --port "$(cat "$D/port")" --bind 127.0.0.1 --save '' \
	    --appendonly no --dir "$D" --daemonize yes \
	    --pidfile "$D/server.pid" --logfile "$D/server.log"
	wait_for '[ "$(redis-cli -p "$(cat "$D/port")" ping 2>/dev/null)" = PONG ]'
}

# redis_busy: a redis-cli that makes the server run a Lua loop of 3 s by
# the server's clock (read every 100000 turns: a loop of a count would
# last longer or shorter with the load), in the background (its pid in
# $busy), once the server runs it
redis_busy() {
	redis-cli -p "$(cat "$D/port")" eval "local function now() \
local t = redis.call('TIME') return tonumber(t[1]) * 1e6 + \
tonumber(t[2]) end local t0, i = now(), 0 while true do i = i + 1 \
if i % 100000 == 0 and now() - t0 >= 3e6 then break end end \
return 1" 0 > /dev/null &
	busy=$!
	remember $busy
	wait_for 'grep -q "^State:.*R (running)" /proc/$(cat "$D/server.pid")/status'
}

# redis_teardown: stop the server
redis_teardown() {
	[ -f "$D/server.pid" ] && kill "$(cat "$D/server.pid")" 2>/dev/null
	return 0
}
