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
 * The rules set of a command: the defaults (when defaults is set), then
 * each file in order. On an error prints it as command NAME's one-line
 * error and returns NULL.
 */
struct rules;
struct rules *cmd_load_rules(const char *name, int defaults,
    const char *const *files, size_t nfiles);

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
