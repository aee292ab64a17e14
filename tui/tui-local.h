/*
 * tui-local.h: internals of the debugger (tui/).
 *
 * struct tui is the whole state of one session: the model (graph, rules,
 * diagnosis, view cache; all owned by engine/), the user's position (a
 * thread, a vertex, a cursor time and the visible time window) with its
 * navigation history, the ordered list of timeline lanes and the panes.
 *
 * A pane is a table of function pointers (draw, key, resize, search) over
 * a curses window. Keys live in one table (keys.c) mapping a key to an
 * action and a help line; the help screen and --list-keys are generated
 * from it. Global actions are handled in tui.c; the others go to the
 * focused pane's key function. Every handler returns the set of things to
 * redraw (R_* bits); the main loop draws once per iteration.
 *
 * Positions are kept as (tid, time) so that they survive a graph rebuild,
 * which renumbers vertices; the vertex is looked up again afterwards.
 */
#ifndef ARGUS_TUI_LOCAL_H
#define ARGUS_TUI_LOCAL_H

#include <curses.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "engine/engine.h"
#include "tui.h"

/* What to redraw, returned by handlers. */
#define R_TIMELINE	0x01
#define R_NODE		0x02
#define R_CANDS		0x04
#define R_DIFF		0x08
#define R_STATUS	0x10
#define R_LAYOUT	0x20	/* windows must be recreated */
#define R_PANES		(R_TIMELINE | R_NODE | R_CANDS | R_DIFF)
#define R_ALL		(R_PANES | R_STATUS)

enum action {
	AC_NONE = 0,
	AC_QUIT, AC_HELP, AC_NEXT_PANE, AC_PREV_PANE, AC_ZOOM_PANE, AC_REDRAW,
	AC_COMMAND, AC_SEARCH, AC_SEARCH_NEXT, AC_SEARCH_PREV,
	AC_UP, AC_DOWN, AC_LEFT, AC_RIGHT, AC_PAGE_UP, AC_PAGE_DOWN, AC_FIRST,
	AC_LAST, AC_PAN_LEFT, AC_PAN_RIGHT, AC_PREV_VERTEX, AC_NEXT_VERTEX,
	AC_ZOOM_IN, AC_ZOOM_OUT, AC_ZOOM_ALL,
	AC_ENTER, AC_WAKER, AC_WAKEE, AC_BACK, AC_FORWARD, AC_RECURSE,
	AC_NEXT_HANG, AC_PREV_HANG, AC_TOGGLE_SLICE, AC_SPINNING,
	AC_CPATH, AC_FOLD,
	AC_NACTIONS
};

struct key_binding {
	int key;		/* curses key code or character */
	const char *name;	/* as shown in help and the man page */
	enum action action;
	const char *help;
};

/* The key table and its size. */
extern const struct key_binding tui_keys[];
extern const size_t tui_nkeys;
/* Action bound to key, or AC_NONE. */
enum action tui_key_action(int key);

struct tui_command {
	const char *name;
	const char *args;	/* for help: "TIME|VERTEX", or "" */
	const char *help;
};
extern const struct tui_command tui_commands[];
extern const size_t tui_ncommands;

enum pane_id { P_TIMELINE, P_NODE, P_CANDS, P_DIFF, P_N };

struct tui;
struct pane;

struct pane_ops {
	const char *name;
	/* Draw into p->win (erased first by the caller). */
	void (*draw)(struct tui *t, struct pane *p);
	/* Handle a pane action; returns R_* bits. */
	int (*key)(struct tui *t, struct pane *p, enum action a);
	/* The window was resized (or recreated). */
	void (*resize)(struct tui *t, struct pane *p);
	/* Find text from the selection on, dir +1/-1; returns R_* bits
	   (0 and a status message when not found). */
	int (*search)(struct tui *t, struct pane *p, const char *text,
	    int dir);
};

struct pane {
	const struct pane_ops *ops;
	WINDOW *win;
	int h, w;		/* size (0 when hidden) */
	size_t top;		/* first row shown (lists) */
	size_t sel;		/* selected row (lists) */
	int mode;		/* pane-specific */
};

extern const struct pane_ops tui_timeline_ops, tui_node_ops, tui_cands_ops,
    tui_diff_ops;

/* Position of the user: what history records. */
struct tui_pos {
	uint32_t tid;		/* current thread */
	uint64_t vts;		/* a time inside the current vertex */
	uint64_t cursor;	/* cursor time */
	uint64_t t0, t1;	/* visible window [t0, t1) */
	size_t hang;		/* current hang (SIZE_MAX: none) */
};

#define HIST_MAX 256

/* Colour pairs (when the terminal has colours). */
enum { C_RUN = 1, C_RUNNABLE, C_BLOCKED, C_HANG, C_BOUND, C_TITLE,
       C_ERROR, C_PATH, C_CULPRIT, C_CURSOR, C_CPATH, C_N };

struct tui {
	/* model (engine/) */
	const char *trace;
	const char *const *traces;	/* tui_opts' */
	size_t ntraces;
	struct hosts_report *hosts;
	struct rules *rules;
	struct graph *g;
	struct diag *d;
	struct view *vw;
	struct diag_opts dopts;
	uint64_t first_ts, last_ts;
	uint64_t win_from, win_to;	/* the events loaded (--at: a window
					   of the trace); 0, UINT64_MAX: all */
	unsigned gen;		/* bumped when the model is rebuilt */
	struct trace_reader *reader;
	struct loader *ext;	/* a wider window loading (load.c), or NULL */
	int at_end;		/* opened on the end of a big trace */
	int ext_failed;		/* loading more failed or would be too
				   much: not tried again */
	struct tui_search *whole;	/* the whole trace's hangs, searched
					   when it opened at its end
					   (search.c), or NULL */
	uint32_t want_tid;	/* once the window loading is in place,
				   open the hang of this thread (0: none) */
	uint64_t want_from, want_to;	/* at about this time */

	/* position and history */
	struct tui_pos pos;
	uint32_t vertex;	/* vertex of pos (GRAPH_NONE: none) */
	uint32_t thread;	/* thread index of pos.tid */
	struct tui_pos hist[HIST_MAX];
	size_t nhist, hcur;	/* entries, index of the current one */

	/* timeline lanes: thread indices, pinned ones first */
	uint32_t *lanes;
	size_t nlanes, npinned;
	size_t lane_top;
	char filter[64];

	/* screen */
	struct pane panes[P_N];
	int focus, zoomed;
	WINDOW *status;
	int colour;
	char msg[256];
	int msg_err;
	char search[128];

	/* text overlay (help, rules, report): lines; NULL when closed */
	char **text;
	size_t ntext, text_top;
	char text_title[64];
	WINDOW *textwin;

	int quit;

	/* the critical path list (cpath.c): open, its selected and first
	   shown step, its window over the panes below the timeline */
	int cp_open;
	size_t cp_sel, cp_top, cp_hang;
	WINDOW *cpwin;
	/* folded lanes (fold.c): idle kernel threads and the recorder are
	   left out of t->lanes unless unfold is set; nfolded of them were
	   for the window [fold_t0, fold_t1) */
	int unfold;
	size_t nfolded;
	uint64_t fold_t0, fold_t1;
	unsigned rec_gen;	/* t->gen + 1 the recorder was found for */
	uint32_t rec_pids[8];	/* processes taken for the recorder */
	size_t nrec;
};

/* load.c */
/* Load the graph and the diagnosis behind a progress screen: 0, an
   error (with *cause), or -1 when a signal ended the session. */
int tui_load(struct tui *t, struct tui_opts *o, char **cause);
/* Load a window of the trace holding [a, b] with the history before it,
   then open the hang of thread tid there (or go to a on that thread);
   at once when the loaded window already holds it. Returns what needs
   redrawing. */
int tui_load_around(struct tui *t, uint32_t tid, uint64_t a, uint64_t b);
/* Say on the status line which part of the trace is loaded (the whole,
   or from when to when), then more. */
void tui_say_window(struct tui *t, const char *more);

/* search.c */
/* When the trace opened on its end, start searching the whole trace for
   hangs on a thread of its own. */
void tui_search_start(struct tui *t);
/* After a read timeout: say once that the search is done. */
int tui_search_poll(struct tui *t);
/* ":hangs [N]": the search's progress, its report, or open its hang N. */
int tui_search_command(struct tui *t, const char *arg);
/* Free the search when it is over (else it is left to the thread). */
void tui_search_free(struct tui *t);

/* After a key (key set) or a read timeout: after a key that took the view
   past an edge of a partial window, start loading a wider one; when that
   load is done, put it in place. Returns what needs redrawing. */
int tui_extend_poll(struct tui *t, int key);
/* Wait for a load under way: its model is put in place when keep is set,
   else dropped. */
void tui_extend_wait(struct tui *t, int keep);

/* tui.c */
/* A terminating signal arrived (the session is ending). */
int tui_signalled(void);
/* Put a message on the status line until the next key; err: an error or
   warning, which a later information of the same turn does not replace. */
void tui_message(struct tui *t, int err, const char *fmt, ...)
    PRINTFLIKE(3, 4);
/* Move to vertex v (recorded in history when record is set): its thread
   becomes current, the cursor goes to its start, the window follows. */
int tui_goto_vertex(struct tui *t, uint32_t v, int record);
/* Move the cursor to time ts on the current thread. */
int tui_goto_time(struct tui *t, uint64_t ts, int record);
/* Make thread index th current (vertex at the cursor). */
int tui_set_thread(struct tui *t, uint32_t th);
/* Record the current position in the history. */
void tui_hist_push(struct tui *t);
/* Move back (dir -1) or forward (+1) in the history; returns R_* bits. */
int tui_hist_move(struct tui *t, int dir);
/* The vertex `w` steps to from v (the diagnosis' path or critical chain
   when v is on it, else view_waker()); GRAPH_NONE at a dead end. */
uint32_t tui_waker(struct tui *t, uint32_t v);
/* Switch to hang h and open on its spinning node. */
int tui_open_hang(struct tui *t, size_t h, int record);
/* Recompute the lane order (after a diagnosis change or a filter). */
void tui_lanes(struct tui *t);
/* Rebuild graph, view and diagnosis with t->rules, keeping position. */
int tui_rebuild(struct tui *t);
/* Put graph g and diagnosis d (may be NULL) in place of the model (which
   is freed), keeping the position, the hang and its pick. */
void tui_set_model(struct tui *t, struct graph *g, struct diag *d);
/* Show lines of text in the overlay (takes the array). */
void tui_show_text(struct tui *t, const char *title, char **lines,
    size_t n);
/* Split a buffer into an allocated array of lines. */
char **tui_split_lines(const char *buf, size_t *n);
/* The current hang, or NULL. */
const struct diag_hang *tui_hang(const struct tui *t);
/* Printable time relative to the trace start ("1.234567 s"). */
const char *tui_fmt_time(const struct tui *t, uint64_t ts, char *buf,
    size_t len);
/* Short thread label "comm:tid". */
const char *tui_thread_label(const struct tui *t, uint32_t th, char *buf,
    size_t len);
/* Pane title line (reverse video, bold when focused). */
void tui_pane_title(struct tui *t, struct pane *p, const char *fmt, ...)
    PRINTFLIKE(3, 4);
/* Draw a string clipped to the window width at (y, x). */
void tui_put(WINDOW *w, int y, int x, const char *s);
/* s from row y, column x, broken at spaces to the window's width, up to
   its last row; returns the row after it. */
int tui_put_wrapped(WINDOW *w, int y, int x, const char *s);
/* Case-insensitive substring test. */
int tui_match(const char *hay, const char *needle);
/* Keep sel visible in a list pane of p->h - 1 rows. */
void tui_list_scroll(struct pane *p, size_t n);
/* Generic list movement; returns R_* bits for pane bit. */
int tui_list_key(struct pane *p, size_t n, enum action a, int bit);

/* cpath.c: the critical path list of the current hang, an overlay on
   the panes below the timeline, whose keys move in it; Enter takes the
   timeline to the selected step, q, Esc or p close it. */
int tui_cpath_show(struct tui *t);
/* With the list open: handle key ch into *redraw and return 1, or 0 to
   leave the key to the panes (zoom, history, chain steps...). */
int tui_cpath_key(struct tui *t, int ch, int *redraw);
/* Draw the list over the panes (after them). */
void tui_cpath_draw(struct tui *t);
void tui_cpath_close(struct tui *t);
/* The intervals where thread th is a step k >= 1 of the current hang's
   critical path: while blocked [*b0, *b1) then running [*r0, *r1),
   within the hang; 0 when th is no such step. */
int tui_cpath_span(const struct tui *t, uint32_t th, uint64_t *b0,
    uint64_t *b1, uint64_t *r0, uint64_t *r1);
/* Step of thread th on the current hang's critical path, or NULL. */
const struct diag_cstep *tui_cpath_step(const struct tui *t, uint32_t th);

/* fold.c: is thread th left out of the lanes (when folding): an idle
   kernel thread over the visible window, or a thread of the recorder? */
int tui_fold_lane(struct tui *t, uint32_t th);

/* timeline.c: free the lane summaries kept between draws. */
void tui_timeline_free(void);

/* cands.c: confirm candidate i (0-based) of the current hang. */
int tui_pick(struct tui *t, size_t i);
/* diff.c: recurse into culprit c of the current hang. */
int tui_recurse(struct tui *t, size_t c);

/* cmdline.c */
/* Read a line after prompt on the bottom row with libedit (history,
   completion); NULL when cancelled. Curses is restored on return. */
char *tui_readline(struct tui *t, const char *prompt);
/* Run a command line ("goto 1.5", ...); returns R_* bits. */
int tui_command(struct tui *t, const char *line);
void tui_readline_end(void);
/* Print, once the screen is gone, why the history was not kept (if it
   was not). */
void tui_readline_warn(void);

/* --- the terminal and stderr back on any exit (crash.c) ----------------- */

/* Keep what is written to stderr from now on (it would tear the screen)
   in a temporary file. */
void tui_stderr_capture(void);
/* Copy what was kept to the real stderr, which is fd 2 again (also done
   at exit() and by a signal that ends argus). */
void tui_stderr_release(void);
/* Save the terminal's modes (before curses starts). */
void tui_crash_save_tty(void);
/*
 * With curses up: on any signal whose default action ends the program
 * (bar INT, TERM and HUP, and those the caller ignores), restore the
 * saved modes, leave the alternate screen, show the cursor, print what
 * was kept of stderr, then let the signal do what it did before (a
 * sanitizer's report, a core). Removed before endwin by
 * tui_crash_remove().
 */
void tui_crash_install(void);
void tui_crash_remove(void);

/* Open the trace being debugged again (merge the traces again when
   ntraces > 1), for a reader of its own: 0, or an error with *cause. */
int tui_open_again(const char *trace, const char *const *traces,
    size_t ntraces, struct trace_reader **r, char **cause);

#endif
