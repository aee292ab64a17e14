/*
 * tui.h: the full-screen debugger (argus debug), the one public interface
 * of tui/. The command parses its options into struct tui_opts and hands
 * over; everything curses stays inside tui/.
 */
#ifndef ARGUS_TUI_H
#define ARGUS_TUI_H

#include <stdint.h>
#include <stdio.h>

struct rules;
struct trace_reader;

struct tui_opts {
	const char *trace;		/* path shown in the title */
	const char *const *traces;	/* several hosts' traces (ntraces > 1),
					   merged into reader: opened again
					   the same way; else trace alone */
	size_t ntraces;
	struct hosts_report *hosts;	/* how they were merged, taken over;
					   NULL for one trace */
	struct trace_reader *reader;	/* open trace, taken over */
	struct rules *rules;		/* rules in force, taken over */
	uint32_t pid;			/* --pid, 0: any */
	uint32_t tid;			/* --tid, 0: any */
	const char *comm;		/* --comm, or NULL */
	uint64_t at;			/* --at (absolute ns), 0: none */
};

/*
 * Run the debugger until the user quits. Loads the graph (showing
 * progress), diagnoses it and opens on the first hang. Returns the exit
 * status (0, or 1 after printing one line "argus debug: ..." on stderr
 * once the terminal is restored). Takes over reader and rules.
 */
int tui_run(struct tui_opts *o);

/* Print the key table ("KEY<TAB>HELP" lines) and the command words
   ("COMMAND<TAB>HELP" lines after a line "commands"), for the man page
   check. */
void tui_list_keys(FILE *f);

#endif
