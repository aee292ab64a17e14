/*
 * crash.c: the terminal and the standard error come back however argus
 * debug ends.
 *
 * While the screen is up, stderr (fd 2) is a temporary file (errlog,
 * with the real stderr kept in saved_err): anything the libraries write
 * there would tear the screen. On the normal way out it is copied to the
 * real stderr after endwin, by tui_stderr_release().
 *
 * Before curses starts, the terminal's modes are saved; once it runs, the
 * terminfo strings that leave the alternate screen, show the cursor and
 * reset the attributes are copied into static buffers. Every signal whose
 * default action ends the program (bar INT, TERM and HUP, which tui.c
 * turns into a quit, and any the caller ignores) gets a handler. With
 * async-signal-safe calls only, the first to come writes those strings,
 * restores the modes, puts stderr back and copies what was kept of it,
 * then puts back the handler that was there before (the default, or a
 * sanitizer's) and lets the signal act: a fault of the program (SEGV,
 * BUS, FPE, ILL from the CPU) executes again, any other signal is raised
 * again.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tui-local.h"
#include <term.h>	/* after curses */

static const int ending[] = {
	SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV,
	SIGUSR2, SIGPIPE, SIGALRM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM,
	SIGPROF, SIGIO, SIGPWR, SIGSYS,
};
static struct sigaction old_act[NSIG];
static unsigned char caught[NSIG];
static struct termios saved;
static int have_saved, installed;
static char reset_seq[256];
static size_t reset_len;
static volatile sig_atomic_t restoring;

static int saved_err = -1;	/* the real stderr while captured */
static FILE *errlog;		/* what was written to stderr meanwhile */
static int errlog_fd = -1;
static char copy_buf[4096];

/* --- stderr while curses is up ----------------------------------------- */

/* Copy what was kept of stderr to the real one and make it fd 2 again;
   async-signal-safe. */
static void
put_back_stderr(void)
{
	off_t off = 0;
	ssize_t n;

	if (saved_err < 0)
		return;
	dup2(saved_err, STDERR_FILENO);
	while (errlog_fd >= 0 &&
	    (n = pread(errlog_fd, copy_buf, sizeof(copy_buf), off)) > 0) {
		for (ssize_t w = 0, k; w < n; w += k)
			if ((k = write(STDERR_FILENO, copy_buf + w,
			    (size_t)(n - w))) <= 0)
				return;
		off += n;
	}
}

static void
release_at_exit(void)
{
	tui_stderr_release();
}

void
tui_stderr_capture(void)
{
	static int registered;

	fflush(stderr);
	if ((errlog = tmpfile()) == NULL)
		return;
	errlog_fd = fileno(errlog);
	if ((saved_err = dup(STDERR_FILENO)) < 0 ||
	    dup2(errlog_fd, STDERR_FILENO) < 0) {
		if (saved_err >= 0)
			close(saved_err);
		saved_err = -1;
		fclose(errlog);
		errlog = NULL;
		errlog_fd = -1;
		return;
	}
	/* exit() while the screen is up (a library's) prints it too */
	if (!registered)
		registered = atexit(release_at_exit) == 0;
}

void
tui_stderr_release(void)
{
	if (errlog == NULL)
		return;
	fflush(stderr);
	put_back_stderr();
	close(saved_err);
	saved_err = -1;
	errlog_fd = -1;
	fclose(errlog);
	errlog = NULL;
}

/* --- signals ------------------------------------------------------------ */

static void
add_seq(const char *s)
{
	size_t n;

	if (s == NULL || s == (const char *)-1)
		return;
	n = strlen(s);
	if (reset_len + n < sizeof(reset_seq)) {
		memcpy(reset_seq + reset_len, s, n);
		reset_len += n;
	}
}

static void
on_ending(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!restoring) {
		restoring = 1;
		if (reset_len)
			(void)!write(STDOUT_FILENO, reset_seq, reset_len);
		if (have_saved)
			tcsetattr(STDIN_FILENO, TCSANOW, &saved);
		put_back_stderr();
	}
	if (sig > 0 && sig < NSIG && caught[sig])
		sigaction(sig, &old_act[sig], NULL);
	/* a fault: returning executes the faulting instruction again */
	if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	    sig == SIGILL) && si != NULL && si->si_code > 0)
		return;
	raise(sig);
}

static void
catch(int sig, const struct sigaction *sa)
{
	if (sigaction(sig, NULL, &old_act[sig]) != 0 ||
	    (!(old_act[sig].sa_flags & SA_SIGINFO) &&
	    old_act[sig].sa_handler == SIG_IGN))
		return;		/* ignored by the caller: stays so */
	if (sigaction(sig, sa, NULL) == 0)
		caught[sig] = 1;
}

void
tui_crash_save_tty(void)
{
	have_saved = tcgetattr(STDIN_FILENO, &saved) == 0;
}

void
tui_crash_install(void)
{
	struct sigaction sa;

	reset_len = 0;
	add_seq(exit_attribute_mode);
	add_seq(cursor_normal);
	add_seq(exit_ca_mode);
	restoring = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_ending;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	/* no other signal in the middle of the restoring (a SIGPIPE
	   from writing to a closed stderr waits) */
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(ending); i++)
		catch(ending[i], &sa);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		catch(s, &sa);
	installed = 1;
}

void
tui_crash_remove(void)
{
	if (!installed)
		return;
	for (int s = 1; s < NSIG; s++)
		if (caught[s]) {
			sigaction(s, &old_act[s], NULL);
			caught[s] = 0;
		}
	installed = 0;
}
