/*
 * ins-fork.c: hostile places for libargus. A thread is started, a signal
 * handler posts a semaphore (async-signal-safe) while the main thread
 * waits on it, the process forks (the child contends a mutex with a
 * thread of its own, then execs argv[1] if given), and the parent waits.
 * Prints "parent ok" and "child ok"; exits 0 only if everything worked.
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t sem;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void
on_alarm(int sig)
{
	(void)sig;
	sem_post(&sem);
}

static void *
holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	usleep(50000);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static int
contend(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, holder, NULL) != 0)
		return -1;
	usleep(10000);
	pthread_mutex_lock(&mu);	/* waits for holder */
	pthread_mutex_unlock(&mu);
	return pthread_join(t, NULL);
}

int
main(int argc, char **argv)
{
	pid_t pid;
	int st;

	sem_init(&sem, 0, 0);
	signal(SIGALRM, on_alarm);
	alarm(1);
	while (sem_wait(&sem) != 0)
		;
	if (contend() != 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (contend() != 0)
			_exit(1);
		printf("child ok\n");
		fflush(stdout);
		if (argc > 1) {
			execv(argv[1], argv + 1);
			_exit(127);
		}
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	printf("parent ok\n");
	return 0;
}
