/*
 * crash.c: dies of a real segmentation fault (a store through a null
 * pointer), for the tests that a signal handler cannot turn the fault
 * into an endless loop.
 */
#include <stdio.h>

int
main(void)
{
	volatile int *volatile p = NULL;

	fflush(stdout);
	*p = 1;
	return 0;
}
