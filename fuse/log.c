/*
 * log.c - what every layer of ckptfs shares, kept in the bottom one (the
 * connection layer, conn_i.h): the log, the mapping of ckpt's errors to
 * what a FUSE operation returns, and the monotonic clock.  It calls only
 * libfuse's log and libc.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "conn_i.h"

time_t fs_now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

int fs_errno(int err)
{
	if (err >= 0)
		return err;
	switch (-err) {
	case CKPT_ESEALED:
		return -EROFS;
	case CKPT_ENOVERSION:
	case CKPT_ENOJOB:
		return -ENOENT;
	case CKPT_EBADNAME:
		return -EINVAL;
	case CKPT_ECORRUPT:
	case CKPT_EABORTED:
	case CKPT_EFAILED:
	case CKPT_EBADMAGIC:
	case CKPT_EVERSION:
	case CKPT_EPROTO:
		return -EIO;
	/* ckptd unreachable: not ENOTCONN, which reads as a dead mount. */
	case EPIPE:
	case ECONNRESET:
	case ECONNREFUSED:
	case ENOTCONN:
	case ECONNABORTED:
		return -EIO;
	}
	if (-err >= CKPT_EFIRST || -err > 4095)
		return -EIO;
	return err;
}

void fs_log(enum fuse_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fuse_log(level, "ckptfs: %s\n", msg);
}
