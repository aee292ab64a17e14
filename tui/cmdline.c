/*
 * cmdline.c: the `:` command line (and the `/` prompt) with libedit, and
 * the commands it runs.
 *
 * One EditLine and one History live for the whole session. Curses stays
 * up while libedit edits the bottom row: libedit reads through a getc
 * function of ours (so a signal, or Esc alone, cancels the line) and
 * writes to the terminal within a scroll region of the last row (so the
 * newline after Enter scrolls nothing else); afterwards the whole screen
 * is repainted.
 * The history is kept in $XDG_STATE_HOME/argus/history, else
 * ~/.argus_history, through a descriptor argus opens itself (histfd;
 * libedit would open the name, following a link): only a regular file
 * of the user running argus, with one link, in a directory of that user,
 * is used. Otherwise the session keeps no history and histwarn says why,
 * printed once the screen is gone. Tab completes command words, `thread`
 * names and `rule add`.
 */
#include <errno.h>
#include <fcntl.h>
#include <histedit.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "tui-local.h"
#include <term.h>	/* after curses; defines macros such as lines */

static EditLine *el;
static History *hist;
static FILE *elout;
static int histfd = -1;
static char histwarn[PATH_MAX + 128];
static const char *cur_prompt = ":";
static struct tui *cur_tui;
static int cancelled;

static char *
prompt_fn(EditLine *e)
{
	(void)e;
	return (char *)cur_prompt;
}

static int
read_byte(int timeout_ms, unsigned char *c)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

	for (;;) {
		if (tui_signalled())
			return -1;
		int r = poll(&pfd, 1, timeout_ms < 0 ? 100 : timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (timeout_ms >= 0)
				return 0;
			continue;
		}
		if (r < 0)
			return -1;
		ssize_t n = read(STDIN_FILENO, c, 1);
		if (n == 1)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

/* libedit's reader: 1 and a character, 0 to end the line (EOF). */
static int
getc_fn(EditLine *e, wchar_t *wc)
{
	mbstate_t st;
	unsigned char c;
	char buf[8];
	size_t n = 0;

	(void)e;
	memset(&st, 0, sizeof(st));
	if (read_byte(-1, &c) <= 0) {
		cancelled = 1;
		return 0;
	}
	if (c == 27) {
		/* Esc alone cancels; Esc and more is a key sequence */
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		if (poll(&pfd, 1, 40) <= 0) {
			cancelled = 1;
			return 0;
		}
		*wc = 27;
		return 1;
	}
	if (c == 3 || c == 7) {		/* C-c, C-g */
		cancelled = 1;
		return 0;
	}
	buf[n++] = (char)c;
	for (;;) {
		size_t r = mbrtowc(wc, buf, n, &st);
		if (r == (size_t)-2 && n < sizeof(buf)) {
			if (read_byte(50, &c) <= 0)
				break;
			buf[n++] = (char)c;
			memset(&st, 0, sizeof(st));
			continue;
		}
		if (r == (size_t)-1 || r == (size_t)-2)
			break;
		return 1;
	}
	*wc = (unsigned char)buf[0];
	return 1;
}

/* --- completion -------------------------------------------------------- */

static unsigned char
complete_fn(EditLine *e, int ch)
{
	const LineInfo *li = el_line(e);
	const char *start = li->cursor;
	const char *cands[64];
	size_t nc = 0, nwords = 0, plen;
	char first[32] = "";

	(void)ch;
	while (start > li->buffer && start[-1] != ' ')
		start--;
	plen = (size_t)(li->cursor - start);
	/* the words before the one being completed */
	for (const char *p = li->buffer; p < start;) {
		while (p < start && *p == ' ')
			p++;
		const char *q = p;
		while (q < start && *q != ' ')
			q++;
		if (q > p) {
			if (nwords == 0)
				snprintf(first, sizeof(first), "%.*s",
				    (int)(q - p), p);
			nwords++;
		}
		p = q;
	}
	if (cur_prompt[0] != ':')
		return CC_ERROR;
	if (nwords == 0) {
		for (size_t i = 0; i < tui_ncommands && nc < 64; i++)
			if (strncmp(tui_commands[i].name, start, plen) == 0)
				cands[nc++] = tui_commands[i].name;
	} else if (nwords == 1 && strcmp(first, "rule") == 0) {
		if (strncmp("add", start, plen) == 0)
			cands[nc++] = "add";
	} else if (nwords == 1 && strcmp(first, "thread") == 0 && cur_tui) {
		struct graph *g = cur_tui->g;
		for (uint32_t i = 0; i < graph_nthreads(g) && nc < 64; i++) {
			const char *c = graph_thread(g, i)->comm;
			int dup = 0;
			if (strncmp(c, start, plen) != 0 ||
			    graph_thread(g, i)->nevents == 0)
				continue;
			for (size_t k = 0; k < nc; k++)
				dup |= strcmp(cands[k], c) == 0;
			if (!dup)
				cands[nc++] = c;
		}
	}
	if (nc == 0)
		return CC_REFRESH_BEEP;
	/* the longest common prefix of the candidates */
	size_t common = strlen(cands[0]);
	for (size_t k = 1; k < nc; k++) {
		size_t j = 0;
		while (j < common && cands[k][j] == cands[0][j])
			j++;
		common = j;
	}
	if (common > plen) {
		char add[128];
		snprintf(add, sizeof(add), "%.*s", (int)(common - plen),
		    cands[0] + plen);
		el_insertstr(e, add);
	}
	if (nc == 1)
		el_insertstr(e, " ");
	return nc == 1 || common > plen ? CC_REFRESH : CC_REFRESH_BEEP;
}

/* --- the history file ------------------------------------------------- */

/* Make directory PATH unless it exists, only inside a directory of the
   user running argus (root must not leave its directories in a user's
   home). */
static void
mkdir_own(const char *path)
{
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	if ((slash = strrchr(parent, '/')) == NULL)
		return;
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (stat(parent, &st) == 0 && st.st_uid == geteuid())
		(void)mkdir(path, 0700);
}

/*
 * Open the history file NAME in directory DIR into histfd and load it;
 * on refusal, histwarn says why.
 */
static void
hist_open(const char *dir, const char *name)
{
	const char *why = NULL;
	struct stat st;
	char path[PATH_MAX + 16];
	HistEvent ev;
	int dfd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		why = strerror(errno);
	else if (fstat(dfd, &st) != 0)
		why = strerror(errno);
	else if (st.st_uid != geteuid())
		why = "its directory is another user's";
	else if ((histfd = out_open(dfd, name, O_RDWR, 0600, &why)) >= 0 &&
	    (fstat(histfd, &st) != 0 || !S_ISREG(st.st_mode))) {
		why = "not a regular file";
		close(histfd);
		histfd = -1;
	}
	if (dfd >= 0)
		close(dfd);
	if (histfd < 0) {
		snprintf(histwarn, sizeof(histwarn), "argus debug: warning: "
		    "no command history kept in %s/%s: %s", dir, name, why);
		return;
	}
	/* libedit loads by name only: the name of the open file itself */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", histfd);
	history(hist, &ev, H_LOAD, path);
}

/* Write the history over the open file (libedit saves by name or to a
   stream). */
static void
hist_save(void)
{
	HistEvent ev;
	FILE *f;
	int fd;

	if (histfd < 0 || ftruncate(histfd, 0) != 0 ||
	    lseek(histfd, 0, SEEK_SET) != 0)
		return;
	if ((fd = dup(histfd)) < 0)
		return;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return;
	}
	history(hist, &ev, H_SAVE_FP, f);
	fclose(f);
}

void
tui_readline_warn(void)
{
	if (histwarn[0] != '\0')
		fprintf(stderr, "%s\n", histwarn);
	histwarn[0] = '\0';
}

/* --- the editor -------------------------------------------------------- */

static void
init(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];
	HistEvent ev;

	if (el != NULL)
		return;
	int fd = dup(STDOUT_FILENO);
	elout = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (elout == NULL)
		elout = stdout;
	el = el_init("argus", stdin, elout, elout);
	hist = history_init();
	history(hist, &ev, H_SETSIZE, 500);
	history(hist, &ev, H_SETUNIQUE, 1);
	if (x != NULL && *x == '/') {
		snprintf(dir, sizeof(dir), "%s/argus", x);
		mkdir_own(x);
		mkdir_own(dir);
		hist_open(dir, "history");
	} else if (home != NULL) {
		hist_open(home, ".argus_history");
	}
	el_set(el, EL_SIGNAL, 0);
	el_set(el, EL_EDITOR, "emacs");
	/*
	 * M-x runs libedit's own command line (ed-command: bind, settc,
	 * edit...), meant for a shell's editrc, not for ours: its parser
	 * reads an unset argument count on an unmatched quote. Unbound.
	 */
	static const char *const edcmd[] = { "^[x", "^[X", "\\370", "\\330" };
	for (size_t i = 0; i < ARRAY_SIZE(edcmd); i++)
		el_set(el, EL_BIND, edcmd[i], "ed-unassigned", NULL);
	/* C-c reaches getc_fn as a key (cancel the line), not as SIGINT;
	   C-s and C-q are keys, not flow control */
	el_set(el, EL_SETTY, "-d", "-isig", "-ixon", NULL);
	el_set(el, EL_PROMPT, prompt_fn);
	el_set(el, EL_HIST, history, hist);
	el_set(el, EL_GETCFN, getc_fn);
	el_set(el, EL_ADDFN, "argus-complete", "complete a command or "
	    "thread name", complete_fn);
	el_set(el, EL_BIND, "^I", "argus-complete", NULL);
}

void
tui_readline_end(void)
{
	if (el != NULL)
		el_end(el);
	if (hist != NULL)
		history_end(hist);
	if (elout != NULL && elout != stdout)
		fclose(elout);
	if (histfd >= 0)
		close(histfd);
	histfd = -1;
	el = NULL;
	hist = NULL;
	elout = NULL;
}

char *
tui_readline(struct tui *t, const char *prompt)
{
	const char *line;
	int n = 0;
	char *res = NULL;
	HistEvent ev;

	/* libedit leaves the terminal cooked (even el_init does): keep the
	   curses mode to restore */
	def_prog_mode();
	init();
	cur_tui = t;
	cur_prompt = prompt;
	cancelled = 0;
	/* an empty bottom row with the cursor at its start */
	if (t->status != NULL) {
		werase(t->status);
		wmove(t->status, 0, 0);
		wrefresh(t->status);
	}
	curs_set(1);
	/* a scroll region of the bottom row alone: the newline libedit
	   writes after Enter scrolls nothing else */
	if (change_scroll_region != NULL && cursor_address != NULL) {
		putp(tparm(change_scroll_region, LINES - 1, LINES - 1));
		putp(tparm(cursor_address, LINES - 1, 0));
		fflush(stdout);
	}
	el_resize(el);
	line = el_gets(el, &n);
	if (change_scroll_region != NULL) {
		putp(tparm(change_scroll_region, 0, LINES - 1));
		fflush(stdout);
	}
	reset_prog_mode();
	curs_set(0);
	clearok(curscr, TRUE);
	if (line == NULL || cancelled || tui_signalled())
		return NULL;
	res = xstrdup(line);
	res[strcspn(res, "\r\n")] = '\0';
	if (res[0] != '\0') {
		history(hist, &ev, H_ENTER, res);
		hist_save();
	}
	return res;
}
