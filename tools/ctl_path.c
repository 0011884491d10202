/*
 * ctl_path.c - walking a relative path below a directory fd one component
 * at a time, never following a link (ctl.h): restore makes its files so,
 * and import opens them so where the kernel has no openat2.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

int ctl_open_parent(int rootfd, const char *path, int create, int *dfd,
		    const char **base)
{
	char comp[256];
	const char *p = path, *slash;
	int fd, next, err = 0;

	fd = dup(rootfd);
	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		if ((size_t)(slash - p) >= sizeof(comp)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) && errno != EEXIST)
				goto out_errno;
			if (fsync(fd)) /* make the new entry durable */
				goto out_errno;
			next = openat(fd, comp,
				      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0)
			goto out_errno;
		close(fd);
		fd = next;
		p = slash + 1;
	}
	*dfd = fd;
	*base = p;
	return 0;

out_errno:
	err = -errno;
	close(fd);
	return err;
}
