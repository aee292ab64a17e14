/*
 * outfile.c: opening a file the user named for writing without being
 * turned against another file. No data structure: one open, then checks
 * on the descriptor (fstat), never on the name, so nothing can be
 * swapped between the check and the use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* The checks of out_open() on an open descriptor: 0, or -1 with *why. */
static int
check(int fd, const char **why)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		*why = strerror(errno);
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		*why = "not a regular file";
		return -1;
	}
	if (st.st_nlink > 1) {
		*why = "has other hard links";
		return -1;
	}
	if (S_ISREG(st.st_mode) && st.st_uid != geteuid()) {
		*why = "owned by another user";
		return -1;
	}
	return 0;
}

int
out_open(int dirfd, const char *path, int flags, mode_t mode,
    const char **why)
{
	int acc = flags & O_ACCMODE, fd = -1;
	int base = acc | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	struct stat st;

	/* a name removed between the two opens: try again, a few times */
	for (int tries = 0; fd < 0 && tries < 4; tries++) {
		fd = openat(dirfd, path, base | O_CREAT | O_EXCL, mode);
		if (fd >= 0)
			break;
		if (errno != EEXIST)
			break;
		fd = openat(dirfd, path, base);
		if (fd < 0 && errno != ENOENT)
			break;
	}
	if (fd < 0) {
		int e = errno;

		/* ELOOP for a link, ENXIO for a FIFO no one reads */
		if ((e == ELOOP || e == ENXIO) && fstatat(dirfd, path, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
			*why = S_ISLNK(st.st_mode) ?
			    "a symbolic link (not followed)" :
			    "not a regular file";
		else
			*why = strerror(e);
		return -1;
	}
	if (check(fd, why) != 0) {
		close(fd);
		return -1;
	}
	/* back to blocking writes (a device may need them) */
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if ((flags & O_TRUNC) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    ftruncate(fd, 0) != 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

FILE *
out_fopen(const char *path, const char **why)
{
	int fd = out_open(AT_FDCWD, path, O_WRONLY | O_TRUNC, 0666, why);
	FILE *f;

	if (fd < 0)
		return NULL;
	if ((f = fdopen(fd, "w")) == NULL) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}
