/*
 * trustdir.c: the trace directory as a trust boundary.
 *
 * A trace directory may live in a world-writable place (/var/tmp), so
 * another local user could create it first and plant files in it: a pid
 * file naming any process, a FIFO that blocks a reader, a symbolic link
 * as a segment. Every command therefore opens the directory through
 * trace_dir_open(), which checks the opened descriptor itself (fstat,
 * not the path, so nothing can be swapped in between), and opens the
 * files inside relative to that descriptor without following links or
 * blocking. No state: only functions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "trace-local.h"

/* dir without its trailing slashes ("/" stays "/"). */
static char *
strip_slashes(const char *dir)
{
	char *d = xstrdup(dir);
	size_t n = strlen(d);

	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	return d;
}

static int
refuse(int *err, char **cause, int e, char *msg)
{
	*err = e;
	if (cause)
		*cause = msg;
	else
		free(msg);
	return -1;
}

int
trace_dir_open(const char *dir, int *err, char **cause)
{
	return trace_dir_openat(AT_FDCWD, dir, err, cause);
}

int
trace_dir_openat(int at, const char *dir, int *err, char **cause)
{
	char *d = strip_slashes(dir);
	struct stat sb;
	int fd, e;

	if (cause)
		*cause = NULL;
	if (fstatat(at, d, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode)) {
		fd = refuse(err, cause, ELOOP, xasprintf("%s: is a symbolic "
		    "link (refused: name the directory itself)", dir));
		free(d);
		return fd;
	}
	fd = openat(at, d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(d);
	if (fd < 0) {
		e = errno == ELOOP ? ENOTDIR : errno;
		return refuse(err, cause, e, xasprintf("%s: %s", dir,
		    strerror(e)));
	}
	if (fstat(fd, &sb) != 0) {
		e = errno;
		close(fd);
		return refuse(err, cause, e, xasprintf("%s: %s", dir,
		    strerror(e)));
	}
	if (sb.st_uid != geteuid() && sb.st_uid != 0) {
		close(fd);
		return refuse(err, cause, TRACE_EUNSAFE, xasprintf("%s: owned "
		    "by uid %u, not by you or root (refused)", dir,
		    (unsigned)sb.st_uid));
	}
	if ((sb.st_mode & S_IWOTH) || ((sb.st_mode & S_IWGRP) &&
	    (sb.st_uid != geteuid() || sb.st_gid != getegid()))) {
		close(fd);
		return refuse(err, cause, TRACE_EUNSAFE, xasprintf("%s: "
		    "writable by %s (mode %04o, refused)", dir,
		    (sb.st_mode & S_IWOTH) ? "others" : "its group",
		    (unsigned)(sb.st_mode & 07777)));
	}
	*err = 0;
	return fd;
}

int
trace_dir_open_file(int dirfd, const char *name)
{
	struct stat sb = { 0 };
	int fd;

	errno = 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		int e = errno;

		if (e == 0 || S_ISREG(sb.st_mode) == 0)
			e = EINVAL;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

ssize_t
trace_dir_read_file(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = trace_dir_open_file(dirfd, name);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}
