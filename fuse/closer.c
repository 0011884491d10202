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
 * committed with it.  That read is done by a prober thread, waited for
 * with a deadline (closer_died(), below): during an execve it would wait
 * for the exec, which waits for the FLUSH.
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
 * for, and the exec waits for the FLUSH.  So the read is done by a prober
 * thread and waited for CLOSER_WAIT_MS at most: a task still unread then
 * is not exiting (an exiting task holds no exec lock), and the prober goes
 * on once the exec does.
 *
 * The probers live as long as the process: a close hands its probe over
 * a queue (a wakeup, a few microseconds) instead of starting a thread
 * (45 us here, at every close of a file written).  A prober is started
 * when a probe finds none idle (the others are stuck behind execs), up to
 * PROBER_MAX; past that a probe waits its deadline and counts as a task
 * not exiting.  Up to PROBER_IDLE of them wait for work; the others end
 * once the queue is empty.
 */
#define CLOSER_WAIT_MS 250
#define PROBER_MAX     32
#define PROBER_IDLE    2

struct probe {
	struct probe *next;   /* in the queue */
	pid_t pid;
	int taken, done, died, refs; /* under probers.mu */
	char why[48];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;  /* a probe queued */
	pthread_cond_t done;  /* a probe answered */
	struct probe *head, **tail;
	int nthreads, nidle;
} probers = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.tail = &probers.head,
};
static pthread_once_t probers_once = PTHREAD_ONCE_INIT;

static void probers_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&probers.done, &ca);
	pthread_condattr_destroy(&ca);
}

/* probers.mu held. */
static void probe_put_locked(struct probe *p)
{
	if (--p->refs == 0)
		free(p);
}

/* Take p out of the queue.  probers.mu held. */
static void probe_unqueue_locked(struct probe *p)
{
	struct probe **pp;

	for (pp = &probers.head; *pp && *pp != p; pp = &(*pp)->next)
		;
	if (!*pp)
		return;
	*pp = p->next;
	if (!*pp)
		probers.tail = pp;
}

static void *prober_main(void *arg)
{
	struct probe *p;
	char why[48];
	int died;

	(void)arg;
	pthread_mutex_lock(&probers.mu);
	for (;;) {
		while (!probers.head) {
			if (probers.nidle >= PROBER_IDLE)
				goto out;
			probers.nidle++;
			pthread_cond_wait(&probers.work, &probers.mu);
			probers.nidle--;
		}
		p = probers.head;
		probe_unqueue_locked(p);
		p->taken = 1;
		pthread_mutex_unlock(&probers.mu);
		why[0] = 0;
		died = stat_died(p->pid, why, sizeof(why));
		pthread_mutex_lock(&probers.mu);
		p->died = died;
		memcpy(p->why, why, sizeof(why));
		p->done = 1;
		pthread_cond_broadcast(&probers.done);
		probe_put_locked(p);
	}
out:
	probers.nthreads--;
	pthread_mutex_unlock(&probers.mu);
	return NULL;
}

/* A prober for a probe just queued, unless one is idle.  probers.mu held. */
static void prober_wake_locked(void)
{
	pthread_attr_t at;
	pthread_t t;

	if (probers.nidle > 0 || probers.nthreads >= PROBER_MAX) {
		pthread_cond_signal(&probers.work);
		return;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, prober_main, NULL) == 0)
		probers.nthreads++;
	pthread_attr_destroy(&at);
}

int closer_died(pid_t pid, char *why, size_t cap)
{
	struct probe *p;
	struct timespec dl;
	int died = 0;

	if (pid <= 0)
		return 0;
	pthread_once(&probers_once, probers_init);
	p = calloc(1, sizeof(*p));
	if (!p)
		return 0;
	p->pid = pid;
	p->refs = 2;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += CLOSER_WAIT_MS * 1000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&probers.mu);
	*probers.tail = p;
	probers.tail = &p->next;
	prober_wake_locked();
	while (!p->done &&
	       pthread_cond_timedwait(&probers.done, &probers.mu, &dl) !=
	       ETIMEDOUT)
		;
	if (p->done && p->died) {
		died = 1;
		snprintf(why, cap, "%s", p->why);
	}
	if (!p->taken) {  /* no prober came: out of the queue */
		probe_unqueue_locked(p);
		p->refs--;
	}
	probe_put_locked(p);
	pthread_mutex_unlock(&probers.mu);
	return died;
}
