/*
 * test-outfile.c: out_open() and out_fopen() (common/outfile.c), the
 * opening of a file the user named for writing: a new file is created
 * with its mode, the caller's own file is replaced (emptied with
 * O_TRUNC), /dev/null is written to; a symbolic link (to a file or to
 * nothing), a file with another hard link, a FIFO, a directory and a
 * file of another user are refused with a reason, and what they point
 * to is left as it was.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

static char dir[] = "/tmp/argus-outunit-XXXXXX";

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void
teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* DIR/NAME, to free. */
static char *
at(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static off_t
size_of(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	return st.st_size;
}

/* out_fopen(PATH) fails, its reason contains WANT, and the file
   VICTIM (if any) still holds its 8 bytes. */
static void
refused(const char *path, const char *want, const char *victim)
{
	const char *why = NULL;
	FILE *f = out_fopen(path, &why);

	cr_assert_null(f, "%s was opened", path);
	cr_assert_not_null(why);
	cr_assert_not_null(strstr(why, want), "%s: '%s', want '%s'", path,
	    why, want);
	if (victim != NULL)
		cr_assert_eq(size_of(victim), 8, "%s changed", victim);
}

TestSuite(outfile, .init = setup, .fini = teardown);

Test(outfile, new_and_own_files)
{
	char *p = at("new.json");
	const char *why = NULL;
	struct stat st;
	mode_t um = umask(022);
	int fd;
	FILE *f;

	f = out_fopen(p, &why);
	cr_assert_not_null(f, "%s", why);
	fputs("0123456789", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);
	/* replaced: emptied first */
	f = out_fopen(p, &why);
	cr_assert_not_null(f, "%s", why);
	fputs("ab", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(size_of(p), 2);
	/* without O_TRUNC, kept */
	fd = out_open(AT_FDCWD, p, O_RDWR, 0600, &why);
	cr_assert_geq(fd, 0, "%s", why);
	close(fd);
	cr_assert_eq(size_of(p), 2);
	/* a character device with one link */
	f = out_fopen("/dev/null", &why);
	cr_assert_not_null(f, "%s", why);
	fclose(f);
	umask(um);
	free(p);
}

Test(outfile, links_and_others_refused)
{
	char *victim = at("victim"), *sym = at("link.json");
	char *dangling = at("dangling.json"), *gone = at("gone");
	char *hard = at("hard.json"), *fifo = at("fifo"), *other = at("other");

	put(victim, "precious");
	cr_assert_eq(symlink(victim, sym), 0);
	refused(sym, "symbolic link", victim);
	cr_assert_eq(symlink(gone, dangling), 0);
	refused(dangling, "symbolic link", NULL);
	cr_assert_eq(access(gone, F_OK), -1, "the link's target was made");
	cr_assert_eq(link(victim, hard), 0);
	refused(hard, "hard link", victim);
	cr_assert_eq(unlink(hard), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	refused(fifo, "not a regular file", NULL);
	refused(dir, "directory", NULL);
	/* a file of another user: only root can make one */
	put(other, "precious");
	if (geteuid() == 0 && chown(other, 65534, 65534) == 0)
		refused(other, "another user", other);
	free(victim);
	free(sym);
	free(dangling);
	free(gone);
	free(hard);
	free(fifo);
	free(other);
}
