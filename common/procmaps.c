/*
 * procmaps.c: /proc/PID/maps, read and parsed without allocation (see
 * procmaps.h). A line is "START-END PERMS OFFSET DEV INODE   PATH"
 * with hexadecimal START, END and OFFSET.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procmaps.h"

static uint64_t
hex(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9' ? c - '0' :
		    c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v * 16 + (uint64_t)d;
	}
	return v;
}

int
procmap_parse(const char *l, size_t len, struct procmap *m)
{
	const char *p = l, *end = l + len;

	m->start = hex(&p, end);
	if (p >= end || *p++ != '-')
		return -1;
	m->end = hex(&p, end);
	if (p + 6 > end || *p++ != ' ')
		return -1;
	memcpy(m->perms, p, 4);
	m->perms[4] = 0;
	p += 5;
	m->off = hex(&p, end);
	/* skip dev and inode */
	for (int f = 0; f < 2 && p < end; f++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	m->path = p;
	m->pathlen = (size_t)(end - p);
	return 0;
}

int
procmap_each(pid_t pid, procmap_fn fn, void *ctx)
{
	char buf[PROCMAP_LINE], path[64];
	size_t have = 0;
	int fd, ret = 0;

	if (pid == 0) {
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	while (ret == 0) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		size_t start = 0;

		if (r <= 0)
			break;
		have += (size_t)r;
		for (size_t i = 0; ret == 0 && i < have; i++) {
			struct procmap m;

			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			if (procmap_parse(buf + start, i - start, &m) == 0)
				ret = fn(ctx, &m);
			start = i + 1;
		}
		if (start == 0 && have == sizeof(buf))
			start = have;	/* overlong line: skip */
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	close(fd);
	return ret;
}
