/*
 * ckpt_forge.c - a PFS manifest as a user could forge it in its own tree
 * (the uid a drained version names owns its directories there), for
 * t_pfs_forged.
 *
 *   ckpt_forge IN OUT VERSION WHAT
 *
 * Decodes the manifest IN (lib/pfsman), renames its version to VERSION,
 * changes what WHAT says of its first file, and writes it to OUT:
 *   same     nothing (a copy the uid could have had ckptd make)
 *   setuid   mode 04755, owner and group root
 *   ownsetid mode 06755, owner and group the caller's (which it could
 *            set on its own file: taken)
 *   nouid    mode 04755 with no owner named (restored by root, the file
 *            would be root's)
 *   group0   mode 02755, the caller as owner, group root (of which it is
 *            not a member)
 *   device   a character device 0666 (rdev 1,1: /dev/mem)
 *   xattr    an extended attribute outside "user." (trusted.x)
 *   seq      seq 2^64 - 1 (would wrap ckptd's counter)
 *   bloat:N  one more file, bloat.bin, of N zero chunks (N x 22 bytes of
 *            manifest to read, and N chunk entries to hold, for nothing
 *            stored on the PFS)
 *   files:N  N more files, of no bytes and 15-character names (each about
 *            90 bytes of manifest and one more entry for ckptd to hold)
 *   copies:N N copies as they are, OUT then being a job's directory on the
 *            PFS: versions VERSION0 .. VERSION<N-1>, each written to
 *            OUT/VERSION<i>.ver/manifest (the directory made), copy i
 *            sealed as IN's seq + 1 + i (after IN, in their order)
 * Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pfsman.h"

#define CAP (16u << 20)

/* Add bloat.bin, n zero chunks, after m's files (whose chunks it takes
 * over: the caller frees the new tables).  0 or -1. */
static int bloat(struct pfsman *m, uint32_t n)
{
	struct pfs_file *f;
	struct pfs_chunk *c;
	uint32_t i;

	if (!n || n > PFSMAN_MAX_CHUNKS - m->nchunks)
		return -1;
	f = realloc(m->files, (m->nfiles + 1) * sizeof(*f));
	if (!f)
		return -1;
	m->files = f;
	c = realloc(m->chunks, ((size_t)m->nchunks + n) * sizeof(*c));
	if (!c)
		return -1;
	m->chunks = c;
	f = &m->files[m->nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = strdup("bloat.bin");
	if (!f->path)
		return -1;
	f->size = (uint64_t)n * m->chunk;
	f->first = m->nchunks;
	f->count = n;
	f->nlink = 1;
	for (i = 0; i < n; i++)
		m->chunks[m->nchunks++] = (struct pfs_chunk){
			.len = m->chunk, .kind = PFS_ZERO };
	return 0;
}

/* Add n empty files f00000000000000 ... after m's files.  0 or -1. */
static int files(struct pfsman *m, uint32_t n)
{
	struct pfs_file *f;
	uint32_t i;

	if (!n || n > PFSMAN_MAX_FILES - m->nfiles)
		return -1;
	f = realloc(m->files, (m->nfiles + n) * sizeof(*f));
	if (!f)
		return -1;
	m->files = f;
	for (i = 0; i < n; i++) {
		f = &m->files[m->nfiles];
		memset(f, 0, sizeof(*f));
		if (asprintf(&f->path, "f%014u", i) < 0)
			return -1;
		f->first = m->nchunks;
		f->nlink = 1;
		m->nfiles++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static uint8_t in[CAP], x[64];
	static char dir[4096], file[4200];
	uint32_t i, copies = 1;
	uint8_t *out = NULL;
	const char *path;
	struct pfsman m;
	struct pfs_file *f;
	uint8_t *xattr;
	uint32_t xlen;
	const char *what;
	size_t n, xl = 0;
	long len = -1;
	FILE *fp;
	int ret;

	if (argc != 5)
		return 1;
	what = argv[4];
	fp = fopen(argv[1], "rb");
	if (!fp)
		return perror(argv[1]), 1;
	n = fread(in, 1, sizeof(in), fp);
	fclose(fp);
	ret = pfsman_decode(in, n, &m);
	if (ret < 0 || m.nfiles == 0) {
		fprintf(stderr, "ckpt_forge: %s: cannot decode (%d)\n", argv[1], ret);
		return 1;
	}
	snprintf(m.version, sizeof(m.version), "%s", argv[3]);
	f = &m.files[0];
	xattr = f->xattr;               /* the decoded blob, put back to free */
	xlen = f->xlen;
	if (!strcmp(what, "setuid")) {
		f->attr.set |= CKPT_ATTR_MODE | CKPT_ATTR_UID | CKPT_ATTR_GID;
		f->attr.mode = 04755;
		f->attr.uid = 0;
		f->attr.gid = 0;
	} else if (!strcmp(what, "ownsetid") || !strcmp(what, "group0")) {
		f->attr.set |= CKPT_ATTR_MODE | CKPT_ATTR_UID | CKPT_ATTR_GID;
		f->attr.mode = what[0] == 'o' ? 06755 : 02755;
		f->attr.uid = (uint32_t)getuid();
		f->attr.gid = what[0] == 'o' ? (uint32_t)getgid() : 0;
	} else if (!strcmp(what, "nouid")) {
		f->attr.set = (f->attr.set | CKPT_ATTR_MODE) & ~CKPT_ATTR_UID;
		f->attr.mode = 04755;
	} else if (!strcmp(what, "device")) {
		f->attr.set |= CKPT_ATTR_MODE;
		f->attr.mode = CKPT_ATTR_IFCHR | 0666;
		f->attr.rdev = 0x101;
	} else if (!strcmp(what, "xattr")) {
		x[xl++] = 9;                    /* name length, name, value */
		memcpy(x + xl, "trusted.x", 9);
		xl += 9;
		x[xl++] = 1;
		x[xl++] = 0;
		x[xl++] = '1';
		f->xattr = x;
		f->xlen = (uint32_t)xl;
	} else if (!strcmp(what, "seq")) {
		m.seq = UINT64_MAX;
	} else if (!strncmp(what, "bloat:", 6) || !strncmp(what, "files:", 6)) {
		n = strtoul(what + 6, NULL, 10);
		if ((what[0] == 'b' ? bloat(&m, (uint32_t)n) :
				      files(&m, (uint32_t)n)) < 0) {
			fprintf(stderr, "ckpt_forge: %s: out of memory or range\n",
				what);
			pfsman_release(&m);
			return 1;
		}
	} else if (!strncmp(what, "copies:", 7)) {
		copies = (uint32_t)strtoul(what + 7, NULL, 10);
	} else if (strcmp(what, "same")) {
		fprintf(stderr, "ckpt_forge: no such forgery: %s\n", what);
		pfsman_release(&m);
		return 1;
	}
	for (i = 0; i < copies; i++) {
		path = argv[2];
		if (copies > 1) {
			snprintf(m.version, sizeof(m.version), "%s%u", argv[3], i);
			m.seq++;
			snprintf(dir, sizeof(dir), "%s/%s.ver", argv[2], m.version);
			snprintf(file, sizeof(file), "%s/manifest", dir);
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				return perror(dir), 1;
			path = file;
		}
		free(out);
		n = pfsman_size(&m);
		out = malloc(n);
		len = out ? pfsman_encode(&m, out, n) : -1;
		if (len < 0)
			break;
		fp = fopen(path, "wb");
		if (!fp || fwrite(out, 1, (size_t)len, fp) != (size_t)len ||
		    fclose(fp) != 0)
			return perror(path), 1;
	}
	m.files[0].xattr = xattr;
	m.files[0].xlen = xlen;
	pfsman_release(&m);
	if (len < 0) {
		fprintf(stderr, "ckpt_forge: encode: %ld\n", len);
		free(out);
		return 1;
	}
	free(out);
	return 0;
}
