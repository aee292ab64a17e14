/*
 * argus.c: main() and the table of subcommands.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/cmd.h"
#include "common/common.h"
#include "common/progress.h"
#include "engine/engine.h"
#include "trace/trace.h"

static const struct cmd cmds[] = {
	{ "record", cmd_record, "record the system in the foreground (or around a command)" },
	{ "start", cmd_start, "start the flight recorder as a daemon" },
	{ "stop", cmd_stop, "flush and stop the flight recorder daemon" },
	{ "status", cmd_status, "show what the flight recorder records" },
	{ "snapshot", cmd_snapshot, "copy the last minute of a trace out of the ring, while it records" },
	{ "diagnose", cmd_diagnose, "find the hangs in a trace and explain them: culprits, cycles" },
	{ "debug", cmd_debug, "investigate a hang in a full-screen debugger" },
	{ "export", cmd_export, "write a trace as JSON for Perfetto UI and chrome://tracing" },
	{ "info", cmd_info, "summarize a trace: span, segments, events, threads" },
	{ "dump", cmd_dump, "print the events of a trace, one per line" },
	{ "graph", cmd_graph, "build the event graph of a trace: figures, neighbourhoods, suspects" },
	{ "probe", cmd_probe, "add, list or delete user tracing points (uprobes)" },
	{ "watch", cmd_watch, "trace the accesses to a shared variable (watchpoint)" },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: argus [--version] [--help] COMMAND [ARGS]\n"
	    "\n"
	    "argus records what every thread of the system waits for and who\n"
	    "wakes it, and explains why an application hung.\n"
	    "\n"
	    "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "   %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nSee 'argus COMMAND --help' and argus(1).\n");
}

int
cmd_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "argus %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int
cmd_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "argus %s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'argus %s --help')\n", name);
	return 2;
}

/* set while a merged reader replays the damage its hosts' readers
   reported already */
static int damage_told;

static void
warn_damage(const struct trace_damage *d, void *arg)
{
	if (damage_told)
		return;
	fprintf(stderr, "argus %s: warning: %s at offset %llu: %s\n",
	    (const char *)arg, d->path, (unsigned long long)d->offset,
	    d->reason);
}

struct trace_reader *
cmd_open_trace(const char *name, const char *path)
{
	struct trace_reader *r;
	char *cause = NULL;

	if (path == NULL)
		path = ARGUS_DEFAULT_TRACE;
	if (trace_reader_open(&r, path, &cause) != 0) {
		cmd_error(name, "%s", cause);
		free(cause);
		return NULL;
	}
	trace_reader_on_damage(r, warn_damage, (void *)name);
	return r;
}

struct reading {
	const char *name;
	struct progress *p;
	int tried;
};

static void
on_reading(void *arg, uint64_t done, uint64_t total)
{
	struct reading *x = arg;

	if (!x->tried) {
		char *label = xasprintf("argus %s: aligning clocks", x->name);
		x->p = progress_new(label, total);
		free(label);
		x->tried = 1;
	}
	progress_update(x->p, done, total);
}

struct trace_reader *
cmd_open_traces(const char *name, const char *const *paths, size_t n,
    struct hosts_report **hosts)
{
	*hosts = NULL;
	if (n <= 1)
		return cmd_open_trace(name, n ? paths[0] : NULL);
	struct trace_reader **rs = xcalloc(n, sizeof(*rs));
	struct trace_reader *r = NULL;
	struct reading x = { name, NULL, 0 };
	struct hosts_opts o = { on_reading, &x };
	char *cause = NULL;

	for (size_t i = 0; i < n; i++)
		if ((rs[i] = cmd_open_trace(name, paths[i])) == NULL)
			goto out;
	int err = hosts_merge(rs, paths, n, &o, &r, hosts, &cause);
	progress_free(x.p);
	if (err != 0) {
		cmd_error(name, "%s", cause ? cause : "cannot merge the traces");
		r = NULL;
		goto out;
	}
	/* damage met from now on, through the merged reader */
	damage_told = 1;
	trace_reader_on_damage(r, warn_damage, (void *)name);
	damage_told = 0;
	for (size_t i = 0; i < (*hosts)->nwarnings; i++)
		fprintf(stderr, "argus %s: %s\n", name, (*hosts)->warnings[i]);
out:
	for (size_t i = 0; i < n; i++)
		trace_reader_close(rs[i]);
	free(rs);
	free(cause);
	return r;
}

/*
 * Peak bytes an event of the trace costs, measured with GNU time: the
 * whole graph's build and diagnosis take 38 (7.0 GiB for 200 M
 * generated events); the streaming search with its graphs held to N
 * events peaked at 42 N on 200 M events (0.57, 1.1 and 2.6 GiB with
 * graphs of 13, 27 and 67 M events) and at 46 N on 1 B, what a graph's
 * arrays leave unused when they grow and the pass's own state included;
 * its tiles with windows around similar nodes at 50 N on 1 B (arrays
 * grown by halves past a megabyte, and the holes the heap keeps between
 * one graph and the next).
 */
#define WHOLE_BYTES_PER_EVENT 38
#define SEARCH_BYTES_PER_EVENT 52

static uint64_t memory_bound = 2ULL << 30;	/* --memory */

void
cmd_engine_heap(void)
{
	/* blocks up to 32 MiB from the heap, larger ones mapped (they grow
	   by mremap, without a copy); freed memory stays in the heap (-1:
	   never trimmed; the next window takes it). Faulting in fresh pages
	   for every window cost about a sixth of a search (36.0 s against
	   29.5 s on 200 M generated events). */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, -1);
}

void
cmd_engine_heap_windows(void)
{
	/* the large arrays too from the heap, where the next window finds
	   them faulted in: mapped, each window faulted them in afresh (a
	   search of 200 M generated events: 493 k page faults against
	   887 k, 3.6-4.3 s of system time against 5.3-7.2 s). Not for one
	   large graph: growing in the heap copies, where mremap does not
	   (the whole build of 200 M events peaked at 8.7 GiB against 8.1) */
	mallopt(M_MMAP_MAX, 0);
}

int
cmd_memory_option(const char *name, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) != 0 || v < (1ULL << 20))
		return cmd_usage_error(name, "bad memory size '%s' (1M at "
		    "least, K, M, G or T)", arg);
	memory_bound = v;
	return 0;
}

/* MemAvailable of /proc/meminfo in bytes, or 0 when unknown. */
static uint64_t
mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* The memory bound in bytes: --memory, and four fifths of what is
   available at most. */
static uint64_t
mem_bound(void)
{
	const char *e = getenv("ARGUS_MEM_AVAILABLE");
	unsigned long long v;
	uint64_t avail = e != NULL && sscanf(e, "%llu", &v) == 1 ?
	    (uint64_t)v : mem_available();

	if (avail != 0 && avail / 10 * 8 < memory_bound)
		return avail / 10 * 8;
	return memory_bound;
}

int
cmd_whole_fits(struct trace_reader *r, double *need_gib, double *bound_gib)
{
	const struct trace_info *in = trace_reader_info(r);
	uint64_t need = in->nevents * WHOLE_BYTES_PER_EVENT, bound = mem_bound();

	*need_gib = (double)need / (1u << 30);
	*bound_gib = (double)bound / (1u << 30);
	return need <= bound;
}

uint64_t
cmd_search_events(void)
{
	return mem_bound() / SEARCH_BYTES_PER_EVENT;
}

int
cmd_check_whole(const char *name, struct trace_reader *r)
{
	double need, bound;

	if (cmd_whole_fits(r, &need, &bound))
		return 0;
	cmd_error(name, "the whole graph of %llu events needs about %.1f GiB, "
	    "more than the %.1f GiB bound: give it more with --memory, "
	    "diagnose a time with argus diagnose --at, search it with argus "
	    "diagnose --stream, or open argus debug (it loads the end)",
	    (unsigned long long)trace_reader_info(r)->nevents, need, bound);
	return -1;
}

struct cmd_progress {
	struct progress *p;
	struct trace_reader *r;
	uint64_t base;		/* chunks read before */
};

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cmd_progress *cp = arg;

	progress_update(cp->p, done - cp->base, total);
}

struct cmd_progress *
cmd_progress(const char *name, const char *what, struct trace_reader *r)
{
	char *label = xasprintf("argus %s: %s", name, what);
	struct progress *p = progress_new(label,
	    trace_reader_info(r)->nchunks);
	struct cmd_progress *cp;
	struct trace_reader_stats st;

	free(label);
	if (p == NULL)
		return NULL;
	/* chunks are the work; events are what a user counts */
	const struct trace_info *in = trace_reader_info(r);
	if (in->nchunks > 0)
		progress_set_rate(p, "events", (double)in->nevents /
		    (double)in->nchunks);
	cp = xcalloc(1, sizeof(*cp));
	cp->p = p;
	cp->r = r;
	trace_reader_stats(r, &st);
	cp->base = st.chunks_read;
	trace_reader_on_progress(r, on_progress, cp);
	return cp;
}

void
cmd_progress_end(struct cmd_progress *cp)
{
	if (cp == NULL)
		return;
	trace_reader_on_progress(cp->r, NULL, NULL);
	/* done: chunks read before the bar (a seek's) count as read too */
	progress_update(cp->p, UINT64_MAX, 0);
	progress_free(cp->p);
	free(cp);
}

int
cmd_parse_time(const char *s, unsigned long long first_ts,
    unsigned long long *out)
{
	uint64_t v;

	if (parse_time_at(s, first_ts, &v) != 0)
		return -1;
	*out = v;
	return 0;
}

int
cmd_check_time(const char *name, const char *s, unsigned long long ts,
    unsigned long long first_ts, unsigned long long last_ts)
{
	char b[32];

	if (ts >= first_ts && ts <= last_ts && last_ts != 0)
		return 0;
	cmd_error(name, "time '%s' lies outside the trace (0 to %s after "
	    "its start, @%llu to @%llu)", s, fmt_duration(b, sizeof(b),
	    last_ts > first_ts ? last_ts - first_ts : 0), first_ts, last_ts);
	return -1;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "version") == 0) {
		printf("argus %s\n", ARGUS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "argus: '%s' is not a command (see 'argus --help')\n",
	    argv[1]);
	return 2;
}
