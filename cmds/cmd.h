/*
 * cmd.h: the subcommands of the argus binary.
 *
 * Each command is a function taking its own argv (argv[0] is the command
 * name) and returning the process exit status: 0 success, 1 failure,
 * 2 usage error. Commands print their errors as one line
 * "argus COMMAND: ..." on stderr; only main() exits.
 */
#ifndef ARGUS_CMD_H
#define ARGUS_CMD_H

#include <stddef.h>
#include <stdint.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_debug(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* Print "argus NAME: message" on stderr; returns 1 (or 2 for usage). */
int cmd_error(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cmd_usage_error(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Parse a time given on the command line: seconds since the trace start
 * ("1.5", "250ms") or absolute nanoseconds on the trace clock ("@123456").
 * first_ts is the trace start. Returns 0 or -1.
 */
/*
 * Open a trace for command NAME, printing a one-line error on failure
 * (returns NULL) and reporting damaged spots on stderr as warnings while
 * reading. A NULL path means the default trace directory.
 */
struct trace_reader;
struct trace_reader *cmd_open_trace(const char *name, const char *path);
/*
 * Open n traces for command NAME as cmd_open_trace() does; more than one
 * are several hosts' traces, merged on one clock (hosts_merge()): *hosts
 * then says how (NULL for one trace), and its warnings are printed.
 */
struct hosts_report;
struct trace_reader *cmd_open_traces(const char *name,
    const char *const *paths, size_t n, struct hosts_report **hosts);

/* Set the heap of a command that builds graphs, one after another when
   it searches a big trace: memory freed by one graph is kept for the
   next instead of going back to the kernel. */
void cmd_engine_heap(void);
/* Then, for a command that builds many windows one after another (the
   streaming search): the large blocks from the heap too. */
void cmd_engine_heap_windows(void);

/*
 * The memory bound of the graphs a command builds: --memory SIZE
 * (CMD_MEMORY_OPTION in a getopt_long table, taken by
 * cmd_memory_option()), 2 GiB by default, and never more than four
 * fifths of the memory available (MemAvailable of /proc/meminfo;
 * ARGUS_MEM_AVAILABLE, in bytes, sets another figure).
 */
#define CMD_OPT_MEMORY 'M'
#define CMD_MEMORY_OPTION \
	{ "memory", required_argument, NULL, CMD_OPT_MEMORY }
/* Takes the argument of --memory for command name: 0, or a usage error's
   exit status after printing it. */
int cmd_memory_option(const char *name, const char *arg);

/*
 * Before building the whole graph of r: -1, with a one-line error naming
 * --at and --memory, when it would take more than the memory bound;
 * else 0.
 */
int cmd_check_whole(const char *name, struct trace_reader *r);

/* Whether the whole graph of r fits in the memory bound (1) or not (0);
   *need_gib and *bound_gib get the figures it compared. */
int cmd_whole_fits(struct trace_reader *r, double *need_gib,
    double *bound_gib);

/* The most events a graph of the streaming search may hold for the
   search to stay within the memory bound. */
uint64_t cmd_search_events(void);

/*
 * The rules options (cmd-rules.c): CMD_RULES_OPTION (--rules FILE) and
 * CMD_NO_DEFAULT_RULES_OPTION go into a command's getopt_long table;
 * cmd_rules_option() takes each option it returns, cmd_rules_load()
 * makes the set. An all-zero struct cmd_rules_opts is empty.
 */
#define CMD_OPT_RULES 'r'
#define CMD_OPT_NO_DEFAULT_RULES 'N'
#define CMD_RULES_OPTION \
	{ "rules", required_argument, NULL, CMD_OPT_RULES }
#define CMD_NO_DEFAULT_RULES_OPTION \
	{ "no-default-rules", no_argument, NULL, CMD_OPT_NO_DEFAULT_RULES }

struct cmd_rules_opts {
	const char **files;	/* --rules, in order (pointers into argv) */
	size_t nfiles, cap;
	int no_defaults;	/* --no-default-rules */
};

/* Take option c (with its argument): 1 when it is a rules option. */
int cmd_rules_option(struct cmd_rules_opts *o, int c, const char *arg);
/* Free what the options hold (on a path that does not load them). */
void cmd_rules_opts_free(struct cmd_rules_opts *o);
/*
 * The rules set of a command: the defaults (unless --no-default-rules),
 * then each file in order; frees the options. On an error prints it as
 * command NAME's one-line error and returns NULL.
 */
struct rules;
struct rules *cmd_rules_load(const char *name, struct cmd_rules_opts *o);

/*
 * A progress bar (common/progress.h) fed by the chunks r reads from now
 * on, labelled "argus NAME: WHAT"; NULL when standard error is not a
 * terminal. cmd_progress_end() detaches and erases it (NULL is fine).
 */
struct cmd_progress;
struct cmd_progress *cmd_progress(const char *name, const char *what,
    struct trace_reader *r);
void cmd_progress_end(struct cmd_progress *cp);

/* Where argus record writes when no -o is given. */
#define ARGUS_DEFAULT_TRACE "/var/tmp/argus"

int cmd_parse_time(const char *s, unsigned long long first_ts,
    unsigned long long *out);

/*
 * A time given as text s (parsed as ts) must lie within the trace,
 * [first_ts, last_ts]: otherwise print command name's one-line error
 * naming the trace's span and return -1.
 */
int cmd_check_time(const char *name, const char *s, unsigned long long ts,
    unsigned long long first_ts, unsigned long long last_ts);

#endif
