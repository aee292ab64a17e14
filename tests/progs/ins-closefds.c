/*
 * ins-closefds.c: a daemon that closes every descriptor it did not open
 * itself, then writes a file of its own. A second thread and the main
 * thread share a mutex and poll (1 ms) all along, so an instrumentation
 * library writes records throughout.
 *
 * Usage: ins-closefds HOW FILE. After 200 ms the main thread lets go of
 * the descriptors above 2, HOW being one of
 *   close_range  close_range(3, ~0U, 0)
 *   closefrom    closefrom(3)
 *   closeloop    close(n) for every n from 3 to 1023
 *   syscall      the close_range system call itself (no libc wrapper)
 *   dup2         opens FILE first, then dup2()s it over every other
 *                open descriptor above 2 (as listed in /proc/self/fd)
 * then opens FILE (truncated), writes the 6 bytes "hello\n" to it, keeps
 * polling for a second and exits 0. Prints "fd=N" (FILE's descriptor).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Lock, poll 1 ms holding the lock, unlock: contention for the other. */
static void
work_once(void)
{
	pthread_mutex_lock(&mu);
	poll(NULL, 0, 1);
	pthread_mutex_unlock(&mu);
	poll(NULL, 0, 1);
}

static void *
worker(void *arg)
{
	(void)arg;
	while (!stop)
		work_once();
	return NULL;
}

static void
work_for(long ms)
{
	long end = mono_ms() + ms;

	while (mono_ms() < end)
		work_once();
}

/* dup2 fd over every other open descriptor above 2. */
static void
dup_over_all(int fd)
{
	int nums[1024], n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (d == NULL) {
		perror("/proc/self/fd");
		exit(1);
	}
	while ((e = readdir(d)) != NULL && n < 1024) {
		int k = atoi(e->d_name);

		if (k > 2 && k != fd && k != dirfd(d))
			nums[n++] = k;
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		if (dup2(fd, nums[i]) < 0) {
			perror("dup2");
			exit(1);
		}
}

int
main(int argc, char **argv)
{
	pthread_t t;
	int fd = -1;

	if (argc != 3) {
		fprintf(stderr, "usage: ins-closefds HOW FILE\n");
		return 2;
	}
	pthread_create(&t, NULL, worker, NULL);
	work_for(200);
	if (strcmp(argv[1], "close_range") == 0) {
		close_range(3, ~0U, 0);
	} else if (strcmp(argv[1], "closefrom") == 0) {
		closefrom(3);
	} else if (strcmp(argv[1], "closeloop") == 0) {
		for (int n = 3; n < 1024; n++)
			close(n);
	} else if (strcmp(argv[1], "syscall") == 0) {
		syscall(SYS_close_range, 3u, ~0u, 0u);
	} else if (strcmp(argv[1], "dup2") == 0) {
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
		dup_over_all(fd);
	} else {
		fprintf(stderr, "ins-closefds: unknown HOW %s\n", argv[1]);
		return 2;
	}
	if (fd < 0)
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
	if (fd < 0 || write(fd, "hello\n", 6) != 6) {
		perror(argv[2]);
		return 1;
	}
	work_for(1000);
	stop = 1;
	pthread_join(t, NULL);
	printf("fd=%d\n", fd);
	return close(fd) == 0 ? 0 : 1;
}
