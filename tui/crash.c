/*
 * crash.c: the terminal comes back even when argus debug crashes.
 *
 * Before curses starts, the terminal's modes are saved; once it runs, the
 * terminfo strings that leave the alternate screen, show the cursor and
 * reset the attributes are copied into static buffers. On a fatal signal
 * (SEGV, BUS, FPE, ILL, ABRT) the handler writes them and restores the
 * modes with async-signal-safe calls only, puts back the handler that
 * was there before (the default, or a sanitizer's) and lets the fault
 * happen again: a fault of the program re-executes, a signal sent from
 * outside is raised again.
 */
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tui-local.h"
#include <term.h>	/* after curses */

static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction old_act[ARRAY_SIZE(fatal)];
static struct termios saved;
static int have_saved, installed;
static char reset_seq[256];
static size_t reset_len;

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
on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (reset_len)
		(void)!write(STDOUT_FILENO, reset_seq, reset_len);
	if (have_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		if (fatal[i] == sig)
			sigaction(sig, &old_act[i], NULL);
	if (si == NULL || si->si_code <= 0 || sig == SIGABRT)
		raise(sig);
	/* a fault: returning executes the faulting instruction again */
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
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		sigaction(fatal[i], &sa, &old_act[i]);
	installed = 1;
}

void
tui_crash_remove(void)
{
	if (!installed)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		sigaction(fatal[i], &old_act[i], NULL);
	installed = 0;
}
