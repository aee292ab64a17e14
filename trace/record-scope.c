/*
 * record-scope.c: what a scoped recorder records (--netns, --cgroup).
 *
 * The options name a network namespace (its inode) and a cgroup v2
 * directory (its id, which is the directory's inode, and its depth below
 * the hierarchy's root, which the BPF programs index the cgroup's
 * ancestors with). Both are opened here and stay open for the life of the
 * process: deleted while recorded, their inode numbers could go to others.
 *
 * The thread table at start holds the processes of the scope: for a
 * cgroup, the pids of cgroup.procs in its directory and every directory
 * below, read into a sorted array (rec_scope_load) that rec_proc_scan
 * looks each /proc entry up in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "common/array.h"
#include "common/common.h"
#include "record-local.h"

#define NSFS_MAGIC_ 0x6e736673
#define CGROUP2_MAGIC_ 0x63677270
#define CG_MAX_DEPTH 512	/* levels walked up to the root, or down */

int
record_scope_netns(const char *arg, uint32_t *ino, char **why)
{
	char *path = strchr(arg, '/') != NULL ? xstrdup(arg) :
	    xasprintf("/run/netns/%s", arg);
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	struct statfs fs;
	struct stat st;

	if (fd < 0)
		*why = xasprintf("no network namespace '%s' (%s: %s)", arg,
		    path, strerror(errno));
	else if (fstatfs(fd, &fs) != 0 || fs.f_type != NSFS_MAGIC_ ||
	    fstat(fd, &st) != 0)
		*why = xasprintf("'%s' is not a namespace (%s)", arg, path);
	else if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET)
		*why = xasprintf("'%s' is not a network namespace (%s)", arg,
		    path);
	else if (st.st_ino == 0 || st.st_ino > UINT32_MAX)
		*why = xasprintf("'%s': an inode argus cannot keep", arg);
	else {
		*ino = (uint32_t)st.st_ino;
		rc = 0;
	}
	if (fd >= 0 && rc != 0)
		close(fd);
	free(path);
	return rc;
}

/* Is fd a directory of a cgroup v2 hierarchy? */
static int
is_cgroup2(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP2_MAGIC_;
}

/*
 * The depth of cgroup directory fd below the hierarchy's root (whose id,
 * its inode, is 1), walking "..": -1 when the walk leaves the cgroup file
 * system first (the mount is of a subtree: a cgroup namespace's).
 */
static int
cg_level(int fd)
{
	int cur = dup(fd), level = 0;
	struct stat st, up_st;

	while (cur >= 0 && level < CG_MAX_DEPTH) {
		int up;

		if (fstat(cur, &st) != 0)
			break;
		if (st.st_ino == 1) {
			close(cur);
			return level;
		}
		up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = -1;
		if (up < 0 || !is_cgroup2(up) || fstat(up, &up_st) != 0 ||
		    (up_st.st_ino == st.st_ino && up_st.st_dev == st.st_dev)) {
			if (up >= 0)
				close(up);
			return -1;
		}
		cur = up;
		level++;
	}
	if (cur >= 0)
		close(cur);
	return -1;
}

int
record_scope_cgroup(const char *path, struct record_opts *o, char **why)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int level, e = errno;
	struct stat st;

	if (fd < 0) {
		/* a symbolic link: ELOOP, or ENOTDIR with O_DIRECTORY */
		if ((e == ELOOP || e == ENOTDIR) && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode))
			*why = xasprintf("'%s' is a symbolic link (give the "
			    "cgroup's own directory)", path);
		else if (e == ENOTDIR)
			*why = xasprintf("'%s' is not a cgroup v2 directory "
			    "(not a directory)", path);
		else
			*why = xasprintf("no cgroup '%s' (%s)", path,
			    strerror(e));
		return -1;
	}
	if (!is_cgroup2(fd) || fstat(fd, &st) != 0) {
		*why = xasprintf("'%s' is not a cgroup v2 directory", path);
		close(fd);
		return -1;
	}
	if ((level = cg_level(fd)) < 0) {
		*why = xasprintf("cgroup '%s': its depth below the root of "
		    "the hierarchy is not known here (a mount of a subtree, "
		    "as in a cgroup namespace)", path);
		close(fd);
		return -1;
	}
	o->scope_cgroup = (uint64_t)st.st_ino;
	o->scope_cglevel = (unsigned)level;
	o->scope_cgfd = fd;
	return 0;
}

/* Append the pids of cgroup.procs of directory dfd and of every
   directory below (depth levels more at most) to r->cg_pids. */
static void
cg_read_procs(struct recorder *r, int dfd, int depth)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC), sub;
	DIR *d;
	struct dirent *de;

	if (fd >= 0) {
		FILE *f = fdopen(fd, "r");
		unsigned long pid;

		if (f == NULL)
			close(fd);
		while (f != NULL && fscanf(f, "%lu", &pid) == 1) {
			DGROW(r->cg_pids, r->cg_cap, r->ncg_pids + 1, 64);
			r->cg_pids[r->ncg_pids++] = (uint32_t)pid;
		}
		if (f != NULL)
			fclose(f);
	}
	if (depth <= 0 || (fd = dup(dfd)) < 0)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		cg_read_procs(r, sub, depth - 1);
		close(sub);
	}
	closedir(d);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void
rec_scope_load(struct recorder *r)
{
	r->ncg_pids = 0;
	if (r->scope_cgroup == 0 || r->scope_cgfd < 0)
		return;
	cg_read_procs(r, r->scope_cgfd, CG_MAX_DEPTH);
	if (r->ncg_pids > 1)
		qsort(r->cg_pids, r->ncg_pids, sizeof(*r->cg_pids), cmp_u32);
}

int
rec_scope_has(const struct recorder *r, uint32_t pid)
{
	if (r->scope_cgroup == 0)
		return 1;
	return r->ncg_pids > 0 && bsearch(&pid, r->cg_pids, r->ncg_pids,
	    sizeof(*r->cg_pids), cmp_u32) != NULL;
}
