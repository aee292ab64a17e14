/*
 * uprobe.c: the user-defined tracing points of argus probe, kept by the
 * kernel.
 *
 * A probe is a line "p:argus_probes/NAME BINARY:0xOFFSET FETCH..." of
 * tracefs's uprobe_events, found through libtracefs (mounted when it is
 * not). There is no state of ours: the lines outlive the command and are
 * listed back from the kernel. Enabling writes "1" to the event's enable
 * file in a recorder's instance directory; deleting first disables the
 * event in every instance (the kernel refuses to delete it otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "trace.h"

/* The tracefs directory, mounted when needed; NULL when unavailable. */
static const char *
tracing_dir(void)
{
	const char *dir = NULL;

	if (tracefs_tracing_dir_is_mounted(true, &dir) < 0)
		return NULL;
	return dir;
}

/* Write s to path (appending when append is set); 0 or errno. */
static int
write_str(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : 0));
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* Append line to uprobe_events; 0 or errno (ENODEV: no tracefs). */
static int
write_events(const char *line)
{
	char *path;
	int err;

	if (uprobe_available() != 0)
		return ENODEV;
	path = tracefs_get_tracing_file("uprobe_events");
	if (path == NULL)
		return ENOMEM;
	err = write_str(path, line, 1);
	tracefs_put_tracing_file(path);
	return err;
}

int
uprobe_available(void)
{
	const char *dir = tracing_dir();
	char path[4096];

	if (dir == NULL)
		return ENODEV;
	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	return access(path, F_OK) == 0 ? 0 : ENODEV;
}

int
uprobe_define(const char *name, const char *binary, uint64_t offset,
    char *const *fetch, size_t nfetch)
{
	char line[8192];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line), "p:" UPROBE_SYSTEM
	    "/%s %s:0x%llx", name, binary, (unsigned long long)offset);
	for (size_t i = 0; i < nfetch && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %s",
		    fetch[i]);
	if (n >= sizeof(line) - 1)
		return E2BIG;
	strcat(line, "\n");
	return write_events(line);
}

int
uprobe_enable(const char *instance_dir, const char *name)
{
	char path[4600];

	snprintf(path, sizeof(path), "%s/events/" UPROBE_SYSTEM "/%s/enable",
	    instance_dir, name);
	return write_str(path, "1", 0);
}

int
uprobe_list(FILE *out)
{
	char *path, line[8192];
	FILE *f;

	if (uprobe_available() != 0)
		return ENODEV;
	path = tracefs_get_tracing_file("uprobe_events");
	f = path != NULL ? fopen(path, "re") : NULL;
	tracefs_put_tracing_file(path);
	if (f == NULL)
		return errno ? errno : ENOMEM;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || strncmp(p + 1, UPROBE_SYSTEM "/",
		    strlen(UPROBE_SYSTEM) + 1) != 0)
			continue;
		fputs(p + 1 + strlen(UPROBE_SYSTEM) + 1, out);
	}
	fclose(f);
	return 0;
}

/* Disable NAME everywhere it is enabled (the kernel refuses otherwise). */
static void
disable_all(const char *dir, const char *name)
{
	char pat[4600];
	glob_t g;

	snprintf(pat, sizeof(pat), "%s/instances/*/events/" UPROBE_SYSTEM
	    "/%s/enable", dir, name);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			write_str(g.gl_pathv[i], "0", 0);
		globfree(&g);
	}
	snprintf(pat, sizeof(pat), "%s/events/" UPROBE_SYSTEM "/%s/enable",
	    dir, name);
	write_str(pat, "0", 0);
}

int
uprobe_delete(const char *name)
{
	const char *dir = tracing_dir();
	char line[256];

	if (dir == NULL || uprobe_available() != 0)
		return ENODEV;
	disable_all(dir, name);
	snprintf(line, sizeof(line), "-:" UPROBE_SYSTEM "/%s\n", name);
	return write_events(line);
}
