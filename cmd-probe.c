/*
 * cmd-probe.c: `argus probe add|list|del`, user-defined tracing points
 * through uprobes.
 *
 * The probes live in the kernel, not in a file of ours: each is a line
 * "p:argus_probes/NAME BINARY:0xOFFSET FETCH..." of tracefs's
 * uprobe_events, so they outlive the command and are listed back from
 * there. `add` also enables the new event in the running recorder's
 * tracefs instance (the directory of the marker path the recorder
 * publishes in /run/argus/marker, or of $ARGUS_MARKER, or --instance);
 * the recorder decodes events of the system argus_probes as TT_USER
 * events of kind TU_PROBE named after the probe. Without a recorder the
 * probe stays defined (a note says so) and a recorder that enables the
 * argus_probes system when it starts picks it up.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "elfsym.h"
#include "trace.h"

#define TRACEFS "/sys/kernel/tracing"
#define SYSTEM "argus_probes"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: argus probe add [--instance DIR] BINARY SYMBOL[+OFFSET]|ADDRESS\n"
	    "                       [NAME] [FETCH...]\n"
	    "       argus probe list\n"
	    "       argus probe del NAME...\n"
	    "\n"
	    "Defines uprobe tracing points (event system " SYSTEM ") and\n"
	    "enables them in the running recorder. FETCH arguments use the\n"
	    "uprobe syntax (e.g. x=%%di:s64). See argus-probe(1).\n");
}

static int
tracefs_ready(void)
{
	if (access(TRACEFS "/uprobe_events", F_OK) == 0)
		return 0;
	mount("nodev", TRACEFS, "tracefs", 0, NULL);
	return access(TRACEFS "/uprobe_events", F_OK) == 0 ? 0 : -1;
}

/* Write one line to uprobe_events; returns 0 or errno. */
static int
write_events(const char *line)
{
	int fd = open(TRACEFS "/uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, line, strlen(line)) < 0)
		err = errno;
	close(fd);
	return err;
}

static int
write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* The recorder's instance directory into buf; -1 when none runs. */
static int
recorder_instance(const char *opt, char *buf, size_t len)
{
	char path[4096];

	if (opt) {
		snprintf(buf, len, "%s", opt);
		return 0;
	}
	if (record_marker_find(path, sizeof(path)) != 0)
		return -1;
	snprintf(buf, len, "%s", dirname(path));
	return 0;
}

static void
make_name(const char *spec, char *out, size_t len)
{
	size_t n = 0;

	if (isdigit((unsigned char)spec[0]))
		n = (size_t)snprintf(out, len, "at_");
	for (; *spec && n + 1 < len; spec++)
		out[n++] = isalnum((unsigned char)*spec) ? *spec : '_';
	out[n] = 0;
}

static int
valid_name(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int
probe_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *inst_opt = NULL, *bin, *spec;
	char name[64], sym[512], line[8192], inst[4096], path[4600];
	char binabs[4096];
	uint64_t off = 0, add = 0;
	struct elfsym es;
	int c, err, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+i:h", opts, NULL)) != -1) {
		if (c == 'i')
			inst_opt = optarg;
		else if (c == 'h') {
			usage(stdout);
			return 0;
		} else
			return cmd_usage_error("probe", "unknown option");
	}
	if (argc - optind < 2)
		return cmd_usage_error("probe",
		    "add needs BINARY and SYMBOL[+OFFSET]|ADDRESS");
	bin = argv[optind];
	spec = argv[optind + 1];
	if (!realpath(bin, binabs))
		return cmd_error("probe", "%s: %s", bin, strerror(errno));
	if (isdigit((unsigned char)spec[0])) {
		char *endp;
		uint64_t vaddr = strtoull(spec, &endp, 0);

		if (*endp)
			return cmd_usage_error("probe", "bad address '%s'", spec);
		err = elfsym_vaddr_to_offset(binabs, vaddr, &off);
		if (err == ERANGE)
			return cmd_error("probe",
			    "address 0x%" PRIx64 " is not in a segment of %s",
			    vaddr, bin);
		if (err)
			return cmd_error("probe", "%s: %s", bin,
			    err == ENOEXEC ? "not a 64-bit ELF file" :
			    strerror(err));
	} else {
		const char *plus = strchr(spec, '+');
		size_t sl = plus ? (size_t)(plus - spec) : strlen(spec);

		if (sl >= sizeof(sym))
			return cmd_usage_error("probe", "symbol too long");
		memcpy(sym, spec, sl);
		sym[sl] = 0;
		if (plus) {
			char *endp;

			add = strtoull(plus + 1, &endp, 0);
			if (*endp || endp == plus + 1)
				return cmd_usage_error("probe",
				    "bad offset in '%s'", spec);
		}
		err = elfsym_lookup(binabs, sym, &es);
		if (err == ENOENT)
			return cmd_error("probe", "symbol '%s' not found in %s",
			    sym, bin);
		if (err)
			return cmd_error("probe", "%s: %s", bin,
			    err == ENOEXEC ? "not a 64-bit ELF file" :
			    strerror(err));
		if (es.size && add >= es.size)
			return cmd_error("probe", "offset %" PRIu64
			    " is past the end of %s (%" PRIu64 " bytes)",
			    add, sym, es.size);
		off = es.offset + add;
	}
	if (argc - optind >= 3 && !strchr(argv[optind + 2], '=')) {
		snprintf(name, sizeof(name), "%s", argv[optind + 2]);
		if (!valid_name(name))
			return cmd_usage_error("probe",
			    "bad probe name '%s' (letters, digits, _)", name);
		optind++;
	} else {
		make_name(spec, name, sizeof(name));
	}
	if (tracefs_ready() != 0)
		return cmd_error("probe", "tracefs with uprobe_events not "
		    "available at " TRACEFS);
	n = snprintf(line, sizeof(line), "p:" SYSTEM "/%s %s:0x%" PRIx64,
	    name, binabs, off);
	for (int i = optind + 2; i < argc; i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s",
		    argv[i]);
	if ((size_t)n >= sizeof(line) - 1)
		return cmd_usage_error("probe", "arguments too long");
	strcat(line, "\n");
	err = write_events(line);
	if (err == EEXIST || err == EBUSY)
		return cmd_error("probe", "a probe named %s already exists "
		    "(see 'argus probe list')", name);
	if (err == EINVAL)
		return cmd_error("probe", "the kernel refused the probe (bad "
		    "fetch argument or offset not on an instruction?)");
	if (err)
		return cmd_error("probe", "cannot define the probe: %s",
		    strerror(err));
	printf("%s %s:0x%" PRIx64 "\n", name, binabs, off);
	if (recorder_instance(inst_opt, inst, sizeof(inst)) != 0) {
		fprintf(stderr, "argus probe: no recorder is running; %s is "
		    "defined and the next 'argus record' enables it\n", name);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/events/" SYSTEM "/%s/enable", inst,
	    name);
	err = write_file(path, "1");
	if (err)
		return cmd_error("probe", "%s is defined but cannot be enabled "
		    "in %s: %s", name, inst, strerror(err));
	return 0;
}

static int
probe_list(void)
{
	FILE *f;
	char line[8192];

	if (tracefs_ready() != 0)
		return cmd_error("probe", "tracefs with uprobe_events not "
		    "available at " TRACEFS);
	f = fopen(TRACEFS "/uprobe_events", "re");
	if (!f)
		return cmd_error("probe", "cannot read uprobe_events: %s",
		    strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || strncmp(p + 1, SYSTEM "/", strlen(SYSTEM) + 1) != 0)
			continue;
		fputs(p + 1 + strlen(SYSTEM) + 1, stdout);
	}
	fclose(f);
	return 0;
}

/* Disable NAME everywhere it is enabled (the kernel refuses otherwise). */
static void
disable_all(const char *name)
{
	char pat[512];
	glob_t g;

	snprintf(pat, sizeof(pat), TRACEFS "/instances/*/events/" SYSTEM
	    "/%s/enable", name);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			write_file(g.gl_pathv[i], "0");
		globfree(&g);
	}
	snprintf(pat, sizeof(pat), TRACEFS "/events/" SYSTEM "/%s/enable",
	    name);
	write_file(pat, "0");
}

static int
probe_del(int argc, char **argv)
{
	char line[256];
	int rc = 0;

	if (argc < 2)
		return cmd_usage_error("probe", "del needs a NAME");
	if (tracefs_ready() != 0)
		return cmd_error("probe", "tracefs with uprobe_events not "
		    "available at " TRACEFS);
	for (int i = 1; i < argc; i++) {
		int err;

		if (!valid_name(argv[i])) {
			rc = cmd_usage_error("probe", "bad probe name '%s'",
			    argv[i]);
			continue;
		}
		disable_all(argv[i]);
		snprintf(line, sizeof(line), "-:" SYSTEM "/%s\n", argv[i]);
		err = write_events(line);
		if (err == ENOENT || err == EINVAL)
			rc = cmd_error("probe", "no probe named %s", argv[i]);
		else if (err == EBUSY)
			rc = cmd_error("probe", "%s is in use (enabled by "
			    "another tracer)", argv[i]);
		else if (err)
			rc = cmd_error("probe", "cannot delete %s: %s",
			    argv[i], strerror(err));
	}
	return rc;
}

int
cmd_probe(int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error("probe", "expected add, list or del");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "add") == 0)
		return probe_add(argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return probe_list();
	if (strcmp(argv[1], "del") == 0)
		return probe_del(argc - 1, argv + 1);
	return cmd_usage_error("probe", "unknown subcommand '%s'", argv[1]);
}
