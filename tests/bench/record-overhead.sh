#!/bin/sh
# Cost of the flight recorder, measured pairwise in one run against no
# tracing and against `perf sched record` on the same workloads:
#   1. the slowdown of `perf bench sched messaging -g 10 -l 500`
#      (a scheduler and IPC extreme);
#   2. the slowdown of tests/progs/block-often-go, a Go program whose
#      threads block and wake a hundred thousand times a second (Go
#      registers no rseq: the stacks of its waits take another path;
#      skipped when it is not built, as without go);
#   3. the throughput loss of pgbench (TPC-B like, 8 clients) against a
#      local PostgreSQL started here (skipped when PostgreSQL is absent);
#   4. bytes per event on disk for argus and for perf.data, and the
#      events the kernel lost;
#   5. the recorder's own CPU per event: its threads (the status file's
#      cpu_ns), and for BPF configurations its programs in the kernel,
#      from one more run, not timed, where the kernel counts them
#      (ARGUS_BPF_STATS=1).
# Each configuration runs ROUNDS times (default 3), interleaved; the
# median is reported. The sets run with --no-instrument (kernel events
# only, like perf); bpf-SET and tf-SET choose the backend (a bare SET
# takes the default, auto); SET+lib also preloads libargus into the workload;
# floor-SET enables the set's events in a bare tracefs instance that
# nobody reads: the kernel's share of the cost, which no reader can save.
# bpf-SET-nostacks records with --stacks off: what the stacks of the
# long waits cost.
# bpf-SET@netns records scoped to the network namespace the workload
# runs in (argus record --netns: every event still in scope, so the
# scope's own checks are what differs from bpf-SET).
# bpf-SET@cgroup records scoped to a cgroup v2 made for the workload,
# which runs in it (argus record --cgroup; the recorder itself and the
# rest of the system, pgbench's server too, are outside): a container's
# recorder.
# bpf-SET~TP,TP... leaves out the BPF programs of those tracepoints
# (ARGUS_BPF_SKIP): bpf-default~sys_exit is what the system-call hook costs.
# bpf-SET!WHAT has the kernel taken to refuse WHAT (ARGUS_BPF_REFUSE):
# bpf-default!task_work takes the stacks of threads without rseq at each
# blocking call, as on kernels without BPF task work.
# Needs root. Environment: ARGUS, B, ROUNDS, PG_SECONDS (0: no pgbench),
# GO_TURNS (round trips of block-often-go's pairs, default 40000; 0: not
# run), CONFIGS.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
ROUNDS=${ROUNDS:-3}
PG_SECONDS=${PG_SECONDS:-10}
GO_TURNS=${GO_TURNS:-40000}
T=$(mktemp -d /tmp/argus-bench-rec-XXXXXX)
PGPID=
CGB=
TRACEFS=/sys/kernel/tracing
FLOOR=$TRACEFS/instances/argus-bench-floor
cleanup() {
	[ -n "$PGPID" ] && runuser -u postgres -- pg_ctl -D "$T/pg" -m fast stop > /dev/null 2>&1
	if [ -d "$FLOOR" ]; then
		echo 0 > "$FLOOR/tracing_on"
		echo > "$FLOOR/set_event"
		rmdir "$FLOOR"
	fi
	[ -n "$CGB" ] && rmdir "$CGB" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

if [ "$(id -u)" != 0 ]; then
	echo "record-overhead: skipped (needs root)"
	exit 0
fi
command -v perf > /dev/null || { echo "record-overhead: skipped (no perf)"; exit 0; }

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# set_backend CFG: $be and $set of a configuration name [bpf-|tf-]SET.
set_backend() {
	case $1 in
	bpf-*)	be=bpf set=${1#bpf-} ;;
	tf-*)	be=tracefs set=${1#tf-} ;;
	*)	be=auto set=$1 ;;
	esac
}

# run CONFIG CMD...: runs CMD under the configuration, stdout to $T/out.
run() {
	cfg=$1
	shift
	rm -rf "$T/trace" "$T/perf.data"
	case $cfg in
	none)	"$@" > "$T/out" 2>&1 ;;
	perf)	perf sched record -o "$T/perf.data" -- "$@" > "$T/out" 2> "$T/perf.err" ;;
	floor-*)
		# the kernel's own cost: the set's events in a bare instance,
		# nobody reading (the buffers overwrite themselves)
		I=$FLOOR
		rmdir "$I" 2> /dev/null
		mkdir "$I"
		echo boot > "$I/trace_clock"
		echo 8192 > "$I/buffer_size_kb"
		while read -r e; do echo "$e" >> "$I/set_event"; done < "$T/events-${cfg#floor-}"
		"$@" > "$T/out" 2>&1
		echo 0 > "$I/tracing_on"
		echo > "$I/set_event"
		rmdir "$I" ;;
	*+lib)	set_backend "${cfg%+lib}"
		$ARGUS record -q -o "$T/trace" --backend $be --events "$set" -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	*-nostacks)	set_backend "${cfg%-nostacks}"
		# without the stacks of long waits (what they cost)
		$ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument --stacks off -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	*@netns)	set_backend "${cfg%@netns}"
		# scoped to the namespace the workload runs in (all of it):
		# what the scope's checks cost
		$ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument --netns /proc/self/ns/net -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	*@cgroup)	set_backend "${cfg%@cgroup}"
		# the workload moves itself into the cgroup, then runs
		$ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument --cgroup "$CGB" -- sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CGB" "$@" > "$T/out" 2> "$T/argus.err" ;;
	*!*)	set_backend "${cfg%%!*}"
		ARGUS_BPF_REFUSE=${cfg#*!} $ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	*~*)	set_backend "${cfg%%~*}"
		ARGUS_BPF_SKIP=${cfg#*~} $ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	*)	set_backend "$cfg"
		$ARGUS record -q -o "$T/trace" --backend $be --events "$set" --no-instrument -- "$@" > "$T/out" 2> "$T/argus.err" ;;
	esac
}

# Bytes per event and lost events of the last run ($T/trace or perf.data).
size_stats() {
	cfg=$1
	if [ "$cfg" = perf ]; then
		n=$(perf script -i "$T/perf.data" -F time 2> /dev/null | wc -l)
		sz=$(stat -c %s "$T/perf.data")
		echo "$sz $n" | awk '{ printf "%.1f bytes/event (%d events)", $1 / ($2 ? $2 : 1), $2 }'
	elif [ -d "$T/trace" ]; then
		$ARGUS info --events "$T/trace" > "$T/info" 2>&1
		ev=$(sed -n 's/^events: *\([0-9]*\) read (\([0-9.]*\) bytes.*/\2 bytes\/event (\1 events)/p' "$T/info")
		lost=$(sed -n 's/^lost: *\([0-9]*\).*/\1/p' "$T/info")
		# the recorder's own CPU (both threads) per kernel record
		cpu=$(sed -n 's/^cpu_ns //p' "$T/trace/status")
		evs=$(sed -n 's/^events //p' "$T/trace/status")
		cpe=$(echo "${cpu:-0} ${evs:-0}" | awk '{ printf "%.0f", $2 ? $1 / $2 : 0 }')
		echo "$ev, lost $lost, recorder ${cpe} ns/event"
	fi
}

# kernel_cost CONFIG CMD...: for a BPF configuration, one more run (not
# timed) where the kernel counts the programs' run time
# (ARGUS_BPF_STATS=1; two clock reads a run): their time per event.
kernel_cost() {
	case $1 in bpf-*) ;; *) return ;; esac
	export ARGUS_BPF_STATS=1
	run "$@"
	unset ARGUS_BPF_STATS
	bns=$(sed -n 's/^bpf_ns //p' "$T/trace/status")
	runs=$(sed -n 's/^bpf_runs //p' "$T/trace/status")
	evs=$(sed -n 's/^events //p' "$T/trace/status")
	echo "${bns:-0} ${runs:-0} ${evs:-0}" | awk '{ printf ", programs %.0f ns/event (%.0f ns a run)", $3 ? $1 / $3 : 0, $2 ? $1 / $2 : 0 }'
}

echo "record-overhead: $(nproc) CPUs, kernel $(uname -r), $ROUNDS rounds"
CONFIGS=${CONFIGS:-"none tf-sched tf-default bpf-sched bpf-default bpf-default@netns bpf-default@cgroup bpf-default+lib perf"}

# the cgroup of the @cgroup configurations
case " $CONFIGS " in
*@cgroup*)
	cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -n "$cgroot" ] && mkdir "$cgroot/argus-bench-$$" 2> /dev/null; then
		CGB=$cgroot/argus-bench-$$
	else
		echo "record-overhead: cannot make a cgroup v2; no @cgroup"
		CONFIGS=$(echo "$CONFIGS" | sed 's/[^ ]*@cgroup//g')
	fi ;;
esac

# The events each set enables, read from a short-lived daemon's instance,
# for the floor-SET configurations.
for set in sched default; do
	case " $CONFIGS " in *" floor-$set "*) ;; *) continue ;; esac
	$ARGUS start -q -o "$T/ev-$set" --backend tracefs --events "$set" --no-instrument > /dev/null 2>&1
	inst=$TRACEFS/instances/argus-$(cat "$T/ev-$set/argus.pid" 2> /dev/null)
	[ -f "$inst/set_event" ] && grep -v '^ftrace:' "$inst/set_event" > "$T/events-$set"
	$ARGUS stop -o "$T/ev-$set" > /dev/null 2>&1
	rm -rf "$T/ev-$set"
	if [ ! -s "$T/events-$set" ]; then
		echo "record-overhead: cannot read the events of the $set set; no floor-$set"
		CONFIGS=$(echo "${CONFIGS:-}" | sed "s/floor-$set//")
	fi
done

# --- 1. perf bench sched messaging --------------------------------------
for r in $(seq "$ROUNDS"); do
	for c in $CONFIGS; do
		run "$c" perf bench sched messaging -g 10 -l 500
		t=$(sed -n 's/.*Total time: *\([0-9.]*\).*/\1/p' "$T/out")
		echo "$t" >> "$T/msg-$c"
		if [ "$r" = 1 ]; then
			size_stats "$c" > "$T/msg-size-$c"
			kernel_cost "$c" perf bench sched messaging -g 10 -l 500 >> "$T/msg-size-$c"
		fi
	done
done
base=$(median < "$T/msg-none")
echo "messaging (perf bench sched messaging -g 10 -l 500), median seconds:"
for c in $CONFIGS; do
	m=$(median < "$T/msg-$c")
	echo "$m $base" | awk -v c="$c" '{ printf "  %-22s %7.3f s  slowdown %+6.1f%%", c, $1, ($1 / $2 - 1) * 100 }'
	[ "$c" != none ] && printf "  %s" "$(tr -d "\n" < "$T/msg-size-$c")"
	echo "  [runs: $(tr '\n' ' ' < "$T/msg-$c")]"
done

# --- 2. a Go program whose threads block often ---------------------------
GO_PROG=$B/tests/progs/block-often-go
if [ "$GO_TURNS" = 0 ]; then
	echo "block-often-go: skipped (GO_TURNS=0)"
elif [ ! -x "$GO_PROG" ]; then
	echo "block-often-go: skipped (not built: go, make build-tests)"
else
	for r in $(seq "$ROUNDS"); do
		for c in $CONFIGS; do
			run "$c" "$GO_PROG" "$GO_TURNS"
			t=$(sed -n 's/^elapsed: *\([0-9.]*\).*/\1/p' "$T/out")
			echo "${t:-0}" >> "$T/go-$c"
			if [ "$r" = 1 ]; then
				size_stats "$c" > "$T/go-size-$c"
				kernel_cost "$c" "$GO_PROG" "$GO_TURNS" >> "$T/go-size-$c"
			fi
		done
	done
	base=$(median < "$T/go-none")
	echo "block-often-go ($GO_TURNS turns, GOMAXPROCS=2), median seconds:"
	for c in $CONFIGS; do
		m=$(median < "$T/go-$c")
		echo "$m $base" | awk -v c="$c" '{ printf "  %-22s %7.3f s  slowdown %+6.1f%%", c, $1, ($1 / $2 - 1) * 100 }'
		[ "$c" != none ] && printf "  %s" "$(tr -d "\n" < "$T/go-size-$c")"
		echo "  [runs: $(tr '\n' ' ' < "$T/go-$c")]"
	done
fi

# --- 3. pgbench against a local PostgreSQL -------------------------------
if [ "$PG_SECONDS" = 0 ]; then
	echo "pgbench: skipped (PG_SECONDS=0)"
	exit 0
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | tail -n 1)
[ -n "$PGBIN" ] && PATH=$PGBIN:$PATH
if ! command -v initdb > /dev/null || ! command -v pgbench > /dev/null ||
    ! id postgres > /dev/null 2>&1; then
	echo "pgbench: skipped (PostgreSQL not installed)"
	exit 0
fi
mkdir -p "$T/pg" "$T/sock"
chown postgres "$T" "$T/pg" "$T/sock"
chmod 755 "$T"
runuser -u postgres -- initdb -D "$T/pg" -A trust > "$T/initdb.log" 2>&1 ||
	{ echo "pgbench: initdb failed"; tail -n 5 "$T/initdb.log"; exit 1; }
runuser -u postgres -- pg_ctl -D "$T/pg" -l "$T/pg.log" -w -o \
    "-k $T/sock -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c shared_buffers=128MB" \
    start > /dev/null 2>&1 || { echo "pgbench: postgres did not start"; tail -n 5 "$T/pg.log"; exit 1; }
PGPID=started
runuser -u postgres -- pgbench -h "$T/sock" -i -s 5 postgres > "$T/pginit.log" 2>&1 ||
	{ echo "pgbench: init failed"; tail -n 5 "$T/pginit.log"; exit 1; }
# The recorder traces the whole system, so it can wrap any command: the
# pgbench client is the command, the server is recorded as well.
for r in $(seq "$ROUNDS"); do
	for c in $CONFIGS; do
		run "$c" runuser -u postgres -- pgbench -h "$T/sock" -c 8 -j 2 \
		    -T "$PG_SECONDS" postgres
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$T/out" | head -n 1)
		echo "${tps:-0}" >> "$T/pg-$c"
		if [ "$r" = 1 ]; then
			size_stats "$c" > "$T/pg-size-$c"
			kernel_cost "$c" runuser -u postgres -- pgbench \
			    -h "$T/sock" -c 8 -j 2 -T "$PG_SECONDS" postgres \
			    >> "$T/pg-size-$c"
		fi
	done
done
base=$(median < "$T/pg-none")
echo "pgbench (TPC-B like, scale 5, 8 clients, $PG_SECONDS s), median tps:"
for c in $CONFIGS; do
	m=$(median < "$T/pg-$c")
	echo "$m $base" | awk -v c="$c" '{ printf "  %-22s %9.1f tps  loss %+6.1f%%", c, $1, (1 - $1 / $2) * 100 }'
	[ "$c" != none ] && printf "  %s" "$(tr -d "\n" < "$T/pg-size-$c")"
	echo "  [runs: $(tr '\n' ' ' < "$T/pg-$c")]"
done
