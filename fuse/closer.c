/*
 * closer.c - did the process closing a file die?
 *
 * A FUSE flush runs in the context of the task that closes the file, and
 * the kernel sends it even while that task exits.  A task that closes its
 * files because it is exiting has PF_EXITING set, and its exit code is set
 * before its files are closed (do_exit), so /proc/PID/stat tells a writer
 * that finished (exit status 0) from one that was killed by a signal or
 * exited with an error while it still had a checkpoint file open for
 * writing: that file may be cut short, and the version must not be
 * committed with it.  That read runs on a thread of its own with a
 * deadline (closer_died(), below): during an execve it would wait for the
 * exec, which waits for the FLUSH.
 *
 * Layer: the operations (ops_i.h); io.c asks it at a FLUSH.  It reads
 * /proc only and calls no other file of ckptfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_i.h"

#define PF_EXITING 0x00000004u   /* include/linux/sched.h */

static int stat_died(pid_t pid, char *why, size_t cap)
{
	unsigned long long flags = 0;
	char buf[2048], path[64], *p;
	long long code = 0;
	ssize_t n;
	int fd, field;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* Fields after the command name, which may hold spaces: state is 3. */
	p = strrchr(buf, ')');
	for (field = 2; p && *p; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			break;
		if (field + 1 == 9)
			flags = strtoull(p + 1, NULL, 10);
		else if (field + 1 == 52)
			code = strtoll(p + 1, NULL, 10);
	}
	if (!(flags & PF_EXITING) || code == 0)
		return 0;
	if (code & 0x7f)
		snprintf(why, cap, "killed by signal %lld", code & 0x7f);
	else
		snprintf(why, cap, "exited with status %lld", (code >> 8) & 0xff);
	return 1;
}

/*
 * The read of /proc/PID/stat can block: a task in execve closes its
 * close-on-exec files (a FLUSH each) while holding what that read waits
 * for, and the exec waits for the FLUSH.  So the read runs on a thread of
 * its own, waited for CLOSER_WAIT_MS at most: a task still unread then is
 * not exiting (an exiting task holds no exec lock), and the thread ends
 * once the exec goes on.
 */
#define CLOSER_WAIT_MS 250

struct probe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pid_t pid;
	int done, died, refs;
	char why[48];
};

static void probe_put(struct probe *p)
{
	int last;

	pthread_mutex_lock(&p->mu);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->mu);
	if (last) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
	}
}

static void *probe_run(void *arg)
{
	struct probe *p = arg;
	char why[48] = "";
	int died = stat_died(p->pid, why, sizeof(why));

	pthread_mutex_lock(&p->mu);
	p->died = died;
	memcpy(p->why, why, sizeof(why));
	p->done = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	probe_put(p);
	return NULL;
}

int closer_died(pid_t pid, char *why, size_t cap)
{
	struct probe *p;
	struct timespec dl;
	pthread_condattr_t ca;
	pthread_attr_t at;
	pthread_t t;
	int died = 0, ret;

	if (pid <= 0)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return stat_died(pid, why, cap);
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	p->pid = pid;
	p->refs = 2;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &at, probe_run, p);
	pthread_attr_destroy(&at);
	if (ret != 0) {
		p->refs = 1;
		probe_put(p);
		return stat_died(pid, why, cap);
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += CLOSER_WAIT_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&p->mu);
	while (!p->done &&
	       pthread_cond_timedwait(&p->cv, &p->mu, &dl) != ETIMEDOUT)
		;
	if (p->done && p->died) {
		died = 1;
		snprintf(why, cap, "%s", p->why);
	}
	pthread_mutex_unlock(&p->mu);
	probe_put(p);
	return died;
}
