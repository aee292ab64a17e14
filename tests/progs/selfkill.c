/*
 * selfkill.c: sends itself the signal argv[1] (a number) and, if it is
 * still alive a second later, prints "survived" and exits 0. Tests that
 * a preloaded library leaves fatal signals fatal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int sig = argc > 1 ? atoi(argv[1]) : SIGTERM;

	usleep(200000);		/* libargus's watchdog has started */
	kill(getpid(), sig);
	sleep(1);
	puts("survived");
	return 0;
}
