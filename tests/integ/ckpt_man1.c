/*
 * ckpt_man1.c - rewrite a local manifest (<store>/man/<seq>.man) in format
 * 1, the format before file attributes, as an older ckptd wrote it: so that
 * t_upgrade can check that a store from before the change still loads.
 *
 *   ckpt_man1 FILE...    each FILE is decoded and written back in format 1
 *                        (its attributes dropped), atomically (tmp+rename)
 *
 * Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "manifest.h"

/* The format-1 encoder as it was. */
static long encode_v1(const struct manifest *m, uint8_t *img, size_t cap)
{
	struct enc e;
	uint32_t i;

	enc_init(&e, img, cap);
	enc_u64(&e, MANIFEST_MAGIC);
	enc_u32(&e, MANIFEST_FORMAT_V1);
	enc_u32(&e, 0);
	enc_u64(&e, m->seq);
	enc_u64(&e, m->sealed_ns);
	enc_u64(&e, m->open_id);
	enc_u32(&e, m->uid);
	enc_u32(&e, m->level);
	enc_str(&e, m->job);
	enc_str(&e, m->version);
	enc_u32(&e, m->nfiles);
	enc_u32(&e, m->nrecs);
	for (i = 0; i < m->nfiles; i++) {
		enc_str(&e, m->files[i].path);
		enc_u64(&e, m->files[i].size);
	}
	for (i = 0; i < m->nrecs; i++) {
		enc_u32(&e, m->recs[i].file);
		enc_u32(&e, m->recs[i].seg);
		enc_u64(&e, m->recs[i].seg_off);
		enc_u64(&e, m->recs[i].file_off);
		enc_u32(&e, m->recs[i].len);
		enc_u32(&e, m->recs[i].crc);
	}
	return enc_seal(&e);
}

static int convert(const char *path)
{
	char tmp[4096];
	struct manifest m;
	struct stat st;
	uint8_t *in, *out;
	long n = -1;
	int fd, ret;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	in = malloc(st.st_size + 1);
	out = malloc(st.st_size + 1);
	ret = in && out && read(fd, in, st.st_size) == st.st_size ? 0 : -EIO;
	close(fd);
	if (ret == 0)
		ret = manifest_decode(in, st.st_size, &m);
	if (ret == 0) {
		n = encode_v1(&m, out, st.st_size);
		manifest_release(&m);
	}
	snprintf(tmp, sizeof(tmp), "%s.v1", path);
	if (ret == 0 && n < 0)
		ret = -EMSGSIZE;
	if (ret == 0) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, out, n) != n || fsync(fd) || close(fd) ||
		    rename(tmp, path))
			ret = -errno;
	}
	free(in);
	free(out);
	return ret;
}

int main(int argc, char **argv)
{
	int i, ret;

	for (i = 1; i < argc; i++) {
		ret = convert(argv[i]);
		if (ret < 0) {
			fprintf(stderr, "ckpt_man1: %s: %s\n", argv[i],
				strerror(-ret));
			return 1;
		}
	}
	return 0;
}
