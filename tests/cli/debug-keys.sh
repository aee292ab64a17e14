#!/bin/sh
# debug-keys.sh: keys that once broke argus debug (issue 16, items 2, 5
# and 11), in a detached tmux at a fixed size on the deterministic mkhang
# trace. M-x then an unmatched quote, from `:` and from `/`, must not
# crash (libedit's own command line is not reachable); a crash (SIGSEGV,
# SIGABRT sent from outside) restores the terminal; C-c in `:` and `/`
# cancels the line and leaves the debugger running; C-s does not freeze
# the screen, not even after 5 KiB of input; a chunk whose end time is
# 2^64-1 is reported as damaged and `g L` still answers. About 15 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-keys-XXXXXX)

SUITE=debug-keys
. tests/lib.sh
tmux_sandbox
need_tmux || exit 0
mkhang_trace "$T/mk" || exit 0

# start ARGS...: a new session running argus debug ARGS (the previous one
# is closed); when argus ends, the pane prints its exit status and the
# terminal modes.
start() { debug_start 100 30 "" "$TTY_MODES" "$@"; }
alive() { ! screen | grep -q '^EXIT='; }

# --- item 2: M-x in the command line --------------------------------------
for p in : /; do
	start "$T/mk"
	wait_for 'Spinning node' 10
	keys "$p" M-x
	keys -l 'a"b'
	keys Enter
	sleep 0.5
	keys Escape
	sleep 0.3
	if alive && wait_for 'Spinning node' 2; then
		ok "M-x and an unmatched quote in '$p' do not crash"
	else
		nok "M-x and an unmatched quote in '$p' do not crash" "$(screen | grep -v '^$' | tail -n 3)"
	fi
done

# --- item 2: the terminal comes back after a crash ------------------------
for sig in SEGV ABRT; do
	start "$T/mk"
	wait_for 'Spinning node' 10
	pid=$(argus_pid)
	kill -$sig "$pid" 2>/dev/null
	if wait_for '^EXIT=1[0-9][0-9]' 5 && restored; then
		ok "SIG$sig restores the terminal"
	else
		nok "SIG$sig restores the terminal" "$(screen | grep -v '^$' | tail -n 3)"
	fi
done

# --- item 11: C-c cancels the line ----------------------------------------
start "$T/mk"
wait_for 'Spinning node' 10
for p in : /; do
	keys "$p"
	keys -l 'thread'
	keys C-c
	sleep 0.5
	if alive && ! screen | tail -n 1 | grep -q 'thread'; then
		ok "C-c in '$p' cancels the line"
	else
		nok "C-c in '$p' cancels the line" "$(screen | grep -v '^$' | tail -n 3)"
	fi
done
# C-s freezes nothing, even after more than 4 KiB of input
keys C-s
keys '?'
if wait_for 'argus debug: keys' 3; then
	ok "C-s does not freeze the screen"
else
	nok "C-s does not freeze the screen" "$(screen | head -n 3)"
fi
keys Escape
sleep 0.3
keys C-s
i=0
while [ $i -lt 50 ]; do
	keys -l "$(printf '%0100d' 0)"
	i=$((i + 1))
done
keys C-q
sleep 0.5
keys Escape
sleep 0.5
keys '?'
if wait_for 'argus debug: keys' 5; then
	ok "C-s then 5 KiB of keys: the screen still answers"
else
	nok "C-s then 5 KiB of keys: the screen still answers" "$(screen | head -n 3)"
fi
keys Escape
sleep 0.3
keys C-c
if wait_for '^EXIT=130' 5 && wait_for '^icanon echo' 2; then
	ok "C-c in the main loop still quits with 130"
else
	nok "C-c in the main loop still quits with 130" "$(screen | grep -v '^$' | tail -n 3)"
fi

# --- item 5: a chunk ending at 2^64-1 ----------------------------------------
cp -r "$T/mk" "$T/bad"
python3 - "$T/bad" <<'PY'
import os, struct, sys, zlib
d = sys.argv[1]
seg = sorted(f for f in os.listdir(d) if f.startswith("seg-"))[-1]
p = os.path.join(d, seg)
b = bytearray(open(p, "rb").read())
i = b.find(b"CHNK")
while i >= 0:
	if zlib.crc32(bytes(b[i:i + 40])) == struct.unpack_from("<I", b, i + 40)[0]:
		break
	i = b.find(b"CHNK", i + 1)
struct.pack_into("<Q", b, i + 28, 2**64 - 1)
struct.pack_into("<I", b, i + 40, zlib.crc32(bytes(b[i:i + 40])))
open(p, "wb").write(b)
PY
"$ARGUS" info "$T/bad" >"$T/info" 2>"$T/info.err"
if grep -q 'damaged' "$T/info.err" && ! grep -q '^span:.*-' "$T/info"; then
	ok "a chunk ending at 2^64-1 is reported as damaged"
else
	nok "a chunk ending at 2^64-1 is reported as damaged" "$(cat "$T/info.err")" "$(grep -i span "$T/info")"
fi
start "$T/bad"
wait_for 'Spinning node|Timeline' 10
pid=$(argus_pid)
keys g L
sleep 1
keys q
if wait_for '^EXIT=0' 5; then
	ok "g L then q on that trace ends"
else
	nok "g L then q on that trace ends" "$(screen | grep -v '^$' | tail -n 3)"
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
fi
exit 0
