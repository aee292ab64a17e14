/*
 * ins-glib.c: a GLib main loop whose idle callout blocks. An idle source
 * blocks in blocking_callout() for argv[1] ms (default 400) once; a
 * 50 ms timeout pushes 5 tasks (data 1..5) to a pool of 2 threads; a
 * 700 ms timeout quits. Prints "idle=ID tick=ID pool=ADDR
 * blocking_callout=ADDR" at the end.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static GMainLoop *loop;
static GThreadPool *pool;
static unsigned block_ms = 400;

static void
work(gpointer data, gpointer user)
{
	(void)data;
	(void)user;
	g_usleep(10000);
}

__attribute__((noinline)) static gboolean
blocking_callout(gpointer d)
{
	(void)d;
	g_usleep(block_ms * 1000);
	return G_SOURCE_REMOVE;
}

static gboolean
tick(gpointer d)
{
	(void)d;
	for (long i = 1; i <= 5; i++)
		g_thread_pool_push(pool, (gpointer)i, NULL);
	return G_SOURCE_REMOVE;
}

static gboolean
quit(gpointer d)
{
	(void)d;
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

int
main(int argc, char **argv)
{
	guint idle, t;

	if (argc > 1)
		block_ms = (unsigned)atoi(argv[1]);
	loop = g_main_loop_new(NULL, FALSE);
	pool = g_thread_pool_new(work, NULL, 2, FALSE, NULL);
	t = g_timeout_add(50, tick, NULL);
	idle = g_idle_add(blocking_callout, NULL);
	g_timeout_add(block_ms + 300, quit, NULL);
	g_main_loop_run(loop);
	g_thread_pool_free(pool, FALSE, TRUE);
	printf("idle=%u tick=%u pool=%p blocking_callout=%p\n", idle, t,
	    (void *)pool, (void *)blocking_callout);
	return 0;
}
