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
 * committed with it.
 *
 * Layer: the operations (ops_i.h); io.c asks it at a FLUSH.  It reads
 * /proc only and calls no other file of ckptfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_i.h"

#define PF_EXITING 0x00000004u   /* include/linux/sched.h */

int closer_died(pid_t pid, char *why, size_t cap)
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
