/*
 * rmlog.c - the removal log (see rmlog.h): its records, the append a
 * removal makes before unlinking a manifest, and the reset recovery makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "codec.h"
#include "crc32c.h"
#include "rmlog.h"
#include "sys.h"

void rmlog_encode(uint8_t rec[RMLOG_REC], uint64_t open_id, uint64_t seq)
{
	put_le64(rec, open_id);
	put_le64(rec + 8, seq);
	put_le32(rec + 16, crc32c(rec, 16));
	put_le32(rec + 20, 0);
}

int rmlog_decode(const uint8_t rec[RMLOG_REC], uint64_t *open_id,
		 uint64_t *seq)
{
	if (get_le32(rec + 16) != crc32c(rec, 16) || get_le32(rec + 20))
		return -CKPT_ECORRUPT;
	*open_id = get_le64(rec);
	*seq = get_le64(rec + 8);
	return 0;
}

int rmlog_append(const char *path, uint64_t open_id, uint64_t seq)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint8_t rec[RMLOG_REC];
	struct stat st;
	int fd, ret;

	rmlog_encode(rec, open_id, seq);
	pthread_mutex_lock(&lock);
	fd = sys_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = fd;
		goto out_unlock;
	}
	ret = fstat(fd, &st) < 0 ? -errno : 0;
	if (ret == 0)   /* whole records only, after a torn one */
		ret = sys_pwrite_all(fd, rec, RMLOG_REC,
				     st.st_size - st.st_size % RMLOG_REC);
	if (ret == 0)
		ret = sys_fsync(fd);
	close(fd);
out_unlock:
	pthread_mutex_unlock(&lock);
	return ret;
}

int rmlog_reset(const char *path, uint64_t max_seq)
{
	char tmp[700], dir[700], *slash;
	uint8_t rec[RMLOG_REC];
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	rmlog_encode(rec, 0, max_seq);
	ret = sys_write_file(tmp, rec, sizeof(rec), 0600);
	if (ret == 0)
		ret = sys_rename(tmp, path);
	if (ret < 0) {
		unlink(tmp);
		return ret;
	}
	return sys_fsync_dir(slash ? dir : ".");
}
