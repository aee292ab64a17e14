/*
 * env.c: what libargus takes from its environment, checked.
 *
 * libargus runs inside any program, started by anyone, so its three
 * variables are parsed strictly and within ranges: ARGUS_HANG_MS (a
 * number of milliseconds), ARGUS_SIGNAL (a real-time signal number the
 * program does not use: never a fatal or job-control one) and
 * ARGUS_MARKER (only a tracefs trace_marker_raw file is ever written).
 * A value out of range is ignored and the default applies. No state.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "instrument-local.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

int
ins_env_u64(const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (e == NULL || *e < '0' || *e > '9')
		return -1;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
ins_env_signal(void)
{
	uint64_t v;

	if (getenv("ARGUS_SIGNAL") == NULL || *getenv("ARGUS_SIGNAL") == '\0')
		return SIGRTMAX - 2;
	if (ins_env_u64("ARGUS_SIGNAL", (uint64_t)SIGRTMIN,
	    (uint64_t)SIGRTMAX, &v) != 0)
		return 0;
	return (int)v;
}

int
ins_marker_ok(int fd)
{
	struct statfs sf;
	char link[64], path[PATH_MAX];
	ssize_t n;
	const char *base;

	if (fstatfs(fd, &sf) != 0 || sf.f_type != TRACEFS_MAGIC)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	base = strrchr(path, '/');
	return base != NULL && strcmp(base + 1, "trace_marker_raw") == 0;
}
