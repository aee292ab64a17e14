#!/bin/sh
# debug-fuzz.sh: seeded random keys into argus debug built with
# AddressSanitizer ($B/asan/argus, made by `make build-tests`), in a
# detached tmux that starts at 100x30 and is resized at random every few
# dozen keys (issue 16, item 2). The keys mix text, the `:` and `/`
# prompts, Enter, Esc, Tab, C-g, C-s, C-q, editing and history keys,
# M- keys (M-x among them), arrows, pages and the debugger's own keys;
# only q and C-c (quit) and C-z (suspend) are left out (C-c in the
# prompts is tests/cli/debug-keys.sh's). Passes when argus is
# alive after FUZZ_KEYS keys (default 2000), then quits with status 0 on
# Esc and q, and the sanitizers reported nothing. FUZZ_SEED (default 1, a seed that found the M-x crash)
# makes a run repeatable; the seed is printed. About 30 s.
set -u
B=${B:-build}
ASAN=$B/asan/argus
case $ASAN in /*) ;; *) ASAN=$(pwd)/$ASAN ;; esac
NKEYS=${FUZZ_KEYS:-2000}
SEED=${FUZZ_SEED:-1}
T=$(mktemp -d /tmp/argus-kfuzz-XXXXXX)
SUITE=debug-fuzz
. tests/lib.sh
tmux_sandbox

if ! command -v tmux >/dev/null 2>&1; then
	echo "skip debug-fuzz: all (tmux is not installed)"
	exit 0
fi
if ! [ -x "$ASAN" ]; then
	nok "keys" "no sanitizer build $ASAN (make build-tests makes it)"
	exit 0
fi
if ! "$B/tests/tools/mkhang" "$T/mk" >/dev/null 2>&1; then
	nok "keys" "mkhang failed"
	exit 0
fi

# the key list: one tmux key name per line, from the seed
awk -v seed="$SEED" -v n="$NKEYS" 'BEGIN {
	srand(seed)
	split("a b c d e f g h i j k l m n o p r s t u v w x y z " \
	    "A B C D E F G H I J K L M N O P R S T U V W X Y Z " \
	    "0 1 2 3 4 5 6 7 8 9 . , - _ = + * # @ ! % ^ & ( ) [ ] { } < > ? | ~ ; \\\" \\x27 \\\\", txt, " ")
	split(": / Enter Escape Tab BSpace Space Up Down Left Right " \
	    "PageUp PageDown Home End DC C-g C-s C-q C-r C-a C-e " \
	    "C-k C-u C-w C-y C-t C-l C-d C-b C-f C-p C-n M-x M-X M-b " \
	    "M-f M-d M-p M-n M-. M-_ M-? M-Enter F1 F5 BTab", spec, " ")
	nt = length(txt); ns = length(spec)
	for (i = 0; i < n; i++) {
		if (rand() < 0.55)
			print "T" txt[int(rand() * nt) + 1]
		else
			print "K" spec[int(rand() * ns) + 1]
		if (rand() < 0.015)
			print "R" (40 + int(rand() * 160)) " " (10 + int(rand() * 50))
		# now and then a prompt, a meta key and quoted text at once
		if (rand() < 0.01) {
			print "K" (rand() < 0.5 ? ":" : "/")
			print "K" spec[int(rand() * ns) + 1]
			print "T" txt[nt - 2 + int(rand() * 3)]
			print "T" txt[int(rand() * nt) + 1]
			print "KEnter"
		}
	}
}' >"$T/keys"
echo "# debug-fuzz: seed $SEED, $NKEYS keys, $(grep -c '^R' "$T/keys") resizes"

tm new-session -d -s f -x 100 -y 30 \
    "cd $T && ASAN_OPTIONS=detect_leaks=0:log_path=$T/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$T/ubsan $ASAN debug $T/mk; echo EXIT=\$?; sleep 120"
screen() { tm capture-pane -p -t f; }
n=100
while [ $n -gt 0 ] && ! screen | grep -q 'Spinning node'; do
	sleep 0.1
	n=$((n - 1))
done

# send the keys in batches of up to 16, a resize on its own
batch=""
flush() {
	[ -n "$batch" ] || return 0
	eval "tm send-keys -t f $batch"
	batch=""
	sleep 0.02
}
nb=0
while IFS= read -r k; do
	case $k in
	T*)
		v=${k#T}
		case $v in
		\\x27) v="'" ;;
		\\\") v='"' ;;
		\\\\) v='\' ;;
		esac
		batch="$batch -l $(printf "'%s'" "$(printf '%s' "$v" | sed "s/'/'\\\\''/g")")"
		flush
		;;
	K*) batch="$batch ${k#K}"; nb=$((nb + 1)) ;;
	R*)
		flush
		set -- ${k#R}
		tm resize-window -t f -x "$1" -y "$2" >/dev/null 2>&1
		sleep 0.05
		;;
	esac
	[ $nb -ge 16 ] && { flush; nb=0; }
	screen | grep -q '^EXIT=' && break
done <"$T/keys"
flush
sleep 1

if screen | grep -q '^EXIT='; then
	nok "$NKEYS random keys (seed $SEED)" "argus ended: $(screen | grep '^EXIT=')" \
	    "$(cat "$T"/asan* "$T"/ubsan* 2>/dev/null | head -n 30)"
	exit 0
fi
ok "$NKEYS random keys (seed $SEED): still running"
# out of any prompt or text screen, then q (a text screen takes one q)
tm send-keys -t f C-g Escape
sleep 0.5
for i in 1 2 3; do
	tm send-keys -t f Escape
	sleep 0.3
	tm send-keys -t f q
	n=30
	while [ $n -gt 0 ] && ! screen | grep -q '^EXIT='; do
		sleep 0.1
		n=$((n - 1))
	done
	screen | grep -q '^EXIT=' && break
done
if screen | grep -q '^EXIT=0'; then
	ok "then Esc and q quit with status 0"
else
	nok "then Esc and q quit with status 0" "$(screen | grep -v '^$' | tail -n 3)"
fi
if cat "$T"/asan* "$T"/ubsan* >"$T/report" 2>/dev/null && [ -s "$T/report" ]; then
	nok "no sanitizer report" "$(head -n 30 "$T/report")"
else
	ok "no sanitizer report"
fi
exit 0
