# tests/real/case-lib.sh: helpers for the cases of tests/real (sourced by
# each NAME.case). A case is run three times by tests/real/run, each time
# as "sh NAME.case PHASE DIR": setup (not recorded: install a database,
# start a server), run (under argus record: produce the hang and write
# what the diagnosis must find into DIR) and teardown (always, even after
# a failure: stop what setup started). Files a case writes into DIR:
#   hung     the pid (or "tid N") to diagnose
#   kind     the expected hang kind (blocked, yield, busy), or kinds
#            (a wait in timed slices: "blocked yield", either one)
#   culprits one line per expected culprit: "pid N" or "tid N"
#   innocent one line per process or thread that must not be a culprit
#            (it only waits for the hung one): "pid N" or "tid N"
#   cycle    present when the hang is a circular wait (without it, a
#            reported cycle fails the case)
#   pids     every process the case started (killed by the runner after
#            the case, whatever happened)
# The variant the runner asks for is in $V (from REAL_VARIANT: plain,
# warm, sliced, live or loaded; see tests/real/run): a case changes its
# programs for warm and sliced, those its "# variants:" line lists.
V=${REAL_VARIANT:-plain}

# remember PID...: processes to kill when the case ends
remember() {
	for _p; do echo "$_p" >> "$D/pids"; done
}

# wait_for TEST...: run the shell test until it succeeds (10 s at most;
# then the case fails)
wait_for() {
	_n=0
	until eval "$@"; do
		_n=$((_n + 1))
		if [ $_n -gt 500 ]; then
			echo "case: timed out waiting for: $*" >&2
			exit 1
		fi
		sleep 0.02
	done
}

# in_syscall PID NAME: the thread PID is blocked in system call NAME
# (from /proc/PID/syscall, x86_64 and arm64 numbers)
in_syscall() {
	_nr=$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) || return 1
	case "$(uname -m):$2:$_nr" in
	x86_64:read:0|x86_64:poll:7|x86_64:wait4:61|x86_64:flock:73) ;;
	x86_64:fcntl:72|x86_64:write:1|x86_64:recvfrom:45) ;;
	x86_64:openat:257) ;;
	x86_64:futex:202|x86_64:epoll_wait:232|x86_64:ppoll:271) ;;
	x86_64:epoll_pwait:281|aarch64:epoll_pwait:22) ;;
	x86_64:clock_nanosleep:230|x86_64:nanosleep:35) ;;
	aarch64:read:63|aarch64:ppoll:73|aarch64:wait4:260) ;;
	aarch64:flock:32|aarch64:futex:98|aarch64:epoll_wait:22) ;;
	aarch64:recvfrom:207|aarch64:openat:56) ;;
	aarch64:clock_nanosleep:115|aarch64:nanosleep:101) ;;
	*) return 1 ;;
	esac
	grep -q '^State:.*S (sleeping)' "/proc/$1/status" 2>/dev/null
}

# child_of PPID COMM: the pid of a child of PPID named COMM, or nothing
child_of() {
	for _c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$_c"/comm 2>/dev/null)" = "$2" ] && echo "$_c"
	done
	return 0
}

# A python3 from Debian (with its gi module), not one of a user's
# environments.
PY=/usr/bin/python3
