/*
 * ins-uprobe.c: a target for uprobes. Calls argus_test_target(i) for
 * i = 1..N (argv[1], default 5), 20 ms apart. Prints "sum=S".
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long argus_test_target(long x);

__attribute__((noinline)) long
argus_test_target(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5, sum = 0;

	for (long i = 1; i <= n; i++) {
		sum += argus_test_target(i);
		usleep(20000);
	}
	printf("sum=%ld\n", sum);
	return 0;
}
