/*
 * record-guard.c: the kernel side stops when the recorder dies.
 *
 * A tracefs instance outlives the process that made it: after a SIGKILL
 * its buffers would go on filling, at a cost, until another recorder
 * started. So the recorder forks a small guard process right after it
 * creates the instance. The guard holds the read end of a pipe whose
 * write end only the recorder holds (close on exec); it has no other
 * descriptor, its own session, and ignores the terminal's signals. When
 * the pipe ends, because the recorder closed or died, the guard turns
 * the instance's tracing off, withdraws ARGUS_MARKER_PATH_FILE if it
 * still names this instance, removes the instance (retrying while a
 * libargus still holds its marker) and exits. After a clean close the
 * instance is already gone and the guard exits at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "record-local.h"

static void
guard_cleanup(const char *inst_path, const char *marker_path)
{
	char path[4096], buf[512];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/tracing_on", inst_path);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return;		/* the recorder removed it: nothing to do */
	(void)!write(fd, "0", 1);
	close(fd);
	fd = open(ARGUS_MARKER_PATH_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			if (strcmp(buf, marker_path) == 0)
				unlink(ARGUS_MARKER_PATH_FILE);
		}
	}
	/* libargus lets go of the marker within a second of tracing_on 0 */
	for (int i = 0; i < 60; i++) {
		struct timespec ts = { 0, 50000000L };

		if (rmdir(inst_path) == 0 || errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
}

int
rec_guard_start(struct recorder *r)
{
	int p[2];
	pid_t pid;
	char c;

	r->guard_fd = -1;
	r->guard_pid = -1;
	if (pipe2(p, O_CLOEXEC) != 0)
		return errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		if (p[0] != 3) {
			dup2(p[0], 3);
			close(p[0]);
		}
		close_range(4, ~0U, 0);		/* p[1] and all the rest */
		while (read(3, &c, 1) < 0 && errno == EINTR)
			;
		guard_cleanup(r->inst_path, r->marker_path);
		_exit(0);
	}
	close(p[0]);
	r->guard_fd = p[1];
	r->guard_pid = pid;
	return 0;
}

void
rec_guard_stop(struct recorder *r)
{
	if (r->guard_fd >= 0)
		close(r->guard_fd);
	r->guard_fd = -1;
	if (r->guard_pid > 0) {
		/* The instance is gone: the guard ends at once. */
		for (int i = 0; i < 100; i++) {
			struct timespec ts = { 0, 10000000L };

			if (waitpid(r->guard_pid, NULL, WNOHANG) != 0)
				break;
			nanosleep(&ts, NULL);
		}
	}
	r->guard_pid = -1;
}
