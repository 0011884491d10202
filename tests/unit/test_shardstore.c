/*
 * test_shardstore.c - the holder's store of peers' shards, in a private
 * temporary directory: put/seal/scan/read round trips over several owners,
 * parts and shards, damage found by verify and read at the right stripe,
 * recovery (partial shards and stray temporaries removed, bad records set
 * aside), late puts refused, drop, seal refusing a .dat of the wrong size,
 * owner names that try to leave the root, and injected faults; then the
 * room arithmetic (what peers' shards may take, what a chunk reserves).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "crc32c.h"
#include "shardstore.h"
#include "sys.h"

#define CHUNK 4096u
#define K     2u

static char top[512];                   /* the mkdtemp directory */
static char root[600];                  /* top/shards */
static uint8_t man[] = "manifest bytes";

static int suite_init(void)
{
	if (!unit_mkdtemp(top, sizeof(top), "test_shardstore"))
		return 1;
	snprintf(root, sizeof(root), "%s/shards", top);
	return shardstore_init(root) || shardstore_init(root);
}

static int suite_clean(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) != 0;
}

/* The byte at i of shard `shard` of part open_id: distinct everywhere. */
static uint8_t pattern(uint64_t open_id, uint32_t shard, uint64_t i)
{
	return (uint8_t)(open_id * 31 + shard * 7 + i * 13 + i / CHUNK);
}

static void meta_for(struct shard_meta *m, const char *owner,
		     uint64_t open_id, uint32_t shard, uint64_t nstripes)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->owner, sizeof(m->owner), "%s", owner);
	strcpy(m->job, "job/a");
	strcpy(m->version, "v1");
	m->uid = 1000;
	m->seq = 7;
	m->open_id = open_id;
	m->k = K;
	m->m = 2;
	m->shard = shard;
	m->chunk = CHUNK;
	/* A last stripe half full. */
	m->stream_len = nstripes ? nstripes * K * CHUNK - CHUNK : 0;
	m->nstripes = nstripes;
	m->man = man;
	m->manlen = sizeof(man);
}

/* Put the chunks of stripes [from, to), last first. */
static void put_range(const char *owner, uint64_t open_id, uint32_t shard,
		      uint64_t from, uint64_t to)
{
	uint8_t buf[CHUNK];
	uint64_t s, i;

	for (s = to; s-- > from;) {
		for (i = 0; i < CHUNK; i++)
			buf[i] = pattern(open_id, shard, s * CHUNK + i);
		CU_ASSERT_EQUAL(shardstore_put(root, owner, open_id, shard,
					       s * CHUNK, buf, CHUNK), 0);
	}
}

/* Put every chunk and seal; m keeps the crcs (free them). */
static void put_seal(struct shard_meta *m, const char *owner,
		     uint64_t open_id, uint32_t shard, uint64_t nstripes)
{
	meta_for(m, owner, open_id, shard, nstripes);
	put_range(owner, open_id, shard, 0, nstripes);
	CU_ASSERT_EQUAL(shardstore_seal(root, m), 0);
	CU_ASSERT(!nstripes || m->crcs);
}

static void path_of(char *out, const char *owner, uint64_t open_id,
		    uint32_t shard, const char *ext)
{
	snprintf(out, 700, "%s/%s/%016llx.%u.%s", root, owner,
		 (unsigned long long)open_id, shard, ext);
}

static int present(const char *owner, uint64_t open_id, uint32_t shard,
		   const char *ext)
{
	char path[700];

	path_of(path, owner, open_id, shard, ext);
	return access(path, F_OK) == 0;
}

/* Flip one byte of a file at off. */
static void flip(const char *path, off_t off)
{
	uint8_t b;
	int fd = open(path, O_RDWR);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	CU_ASSERT_EQUAL(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* What a scan handed over. */
struct found {
	unsigned n;
	struct shard_meta m[32];
};

static int collect(void *arg, struct shard_meta *m, const void *img,
		   size_t len)
{
	struct found *f = arg;
	struct shard_meta again;

	/* img is the record as on disk. */
	CU_ASSERT_EQUAL(shardmeta_decode(img, len, &again), 0);
	CU_ASSERT_EQUAL(again.nstripes, m->nstripes);
	shardmeta_release(&again);
	if (f->n >= 32)
		return -ENOSPC;
	f->m[f->n++] = *m;                      /* take its allocations */
	m->crcs = NULL;
	m->man = NULL;
	return 0;
}

static int stop(void *arg, struct shard_meta *m, const void *img, size_t len)
{
	return -EINTR;
}

static void found_release(struct found *f)
{
	while (f->n)
		shardmeta_release(&f->m[--f->n]);
}

static const struct shard_meta *find(const struct found *f, const char *owner,
				     uint64_t open_id, uint32_t shard)
{
	unsigned i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->m[i].owner, owner) &&
		    f->m[i].open_id == open_id && f->m[i].shard == shard)
			return &f->m[i];
	return NULL;
}

static void drop_all(void)
{
	static const char *const owners[] = { "n1", "n2", "n3" };
	static const uint64_t ids[] = { 1, 2, 0xabcdef0123456789ull, 9 };
	unsigned i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 4; j++)
			CU_ASSERT_EQUAL(shardstore_drop(root, owners[i], ids[j], 0), 0);
}

static void test_round_trip(void)
{
	static const char *const owners[] = { "n1", "n2" };
	static const uint64_t ids[] = { 1, 0xabcdef0123456789ull };
	struct shard_meta sealed[2][2][3];
	struct shardstore_scan_stats st;
	const struct shard_meta *h;
	struct found f = { 0 };
	uint8_t buf[CHUNK];
	unsigned o, p, s;
	uint64_t i, bad;

	for (o = 0; o < 2; o++)
		for (p = 0; p < 2; p++)
			for (s = 0; s < 3; s++)
				put_seal(&sealed[o][p][s], owners[o], ids[p],
					 s + 1, 3 + p);
	CU_ASSERT_EQUAL_FATAL(shardstore_scan(root, collect, &f, &st), 0);
	CU_ASSERT_EQUAL(f.n, 12);
	CU_ASSERT(st.held == 12 && !st.partial && !st.tmp && !st.bad);
	for (o = 0; o < 2; o++)
		for (p = 0; p < 2; p++)
			for (s = 0; s < 3; s++) {
				h = find(&f, owners[o], ids[p], s + 1);
				CU_ASSERT_PTR_NOT_NULL_FATAL(h);
				CU_ASSERT_EQUAL_FATAL(h->nstripes, 3 + p);
				CU_ASSERT(!memcmp(h->crcs, sealed[o][p][s].crcs,
						  h->nstripes * 4));
				CU_ASSERT_EQUAL(h->manlen, sizeof(man));
				CU_ASSERT_EQUAL(shardstore_verify(root, h, &bad), 0);
				for (i = 0; i < CHUNK; i++)
					buf[i] = 0;
				CU_ASSERT_EQUAL(shardstore_read(root, h, 2, buf), 0);
				for (i = 0; i < CHUNK; i++)
					if (buf[i] != pattern(ids[p], s + 1, 2 * CHUNK + i))
						break;
				CU_ASSERT_EQUAL(i, CHUNK);
				CU_ASSERT_EQUAL(shardstore_read(root, h, h->nstripes, buf),
						-EINVAL);
				free(sealed[o][p][s].crcs);
			}
	found_release(&f);

	/* Sealing again the same way is a no-op that gives the crcs back;
	 * another way is refused. */
	put_seal(&sealed[0][0][0], "n3", 9, 1, 2);
	meta_for(&sealed[0][0][1], "n3", 9, 1, 2);
	CU_ASSERT_EQUAL(shardstore_seal(root, &sealed[0][0][1]), 0);
	CU_ASSERT(!memcmp(sealed[0][0][0].crcs, sealed[0][0][1].crcs, 8));
	free(sealed[0][0][1].crcs);
	meta_for(&sealed[0][0][1], "n3", 9, 1, 2);
	sealed[0][0][1].seq = 8;
	CU_ASSERT_EQUAL(shardstore_seal(root, &sealed[0][0][1]), -EEXIST);
	CU_ASSERT_PTR_NULL(sealed[0][0][1].crcs);
	/* The same shard with another manifest (a new holder record): the
	 * record is rewritten with it, the crcs come back, and the next seal
	 * with the first manifest is a change again. */
	{
		uint8_t man2[sizeof(man)], *img = NULL;
		char path[PATH_MAX + 64];
		struct shard_meta back;
		size_t len = 0;
		FILE *fp;

		memcpy(man2, man, sizeof(man));
		man2[0] ^= 0x5a;
		meta_for(&sealed[0][0][1], "n3", 9, 1, 2);
		sealed[0][0][1].man = man2;
		CU_ASSERT_EQUAL(shardstore_seal(root, &sealed[0][0][1]), 0);
		CU_ASSERT_PTR_NOT_NULL(sealed[0][0][1].crcs);
		CU_ASSERT(sealed[0][0][1].crcs &&
			  !memcmp(sealed[0][0][0].crcs, sealed[0][0][1].crcs, 8));
		free(sealed[0][0][1].crcs);
		snprintf(path, sizeof(path), "%s/n3/%016llx.1.meta", root, 9ull);
		fp = fopen(path, "rb");
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		img = malloc(65536);
		len = fread(img, 1, 65536, fp);
		fclose(fp);
		CU_ASSERT_EQUAL_FATAL(shardmeta_decode(img, len, &back), 0);
		CU_ASSERT_EQUAL(back.manlen, sizeof(man));
		CU_ASSERT(!memcmp(back.man, man2, sizeof(man)));
		shardmeta_release(&back);
		free(img);
		meta_for(&sealed[0][0][1], "n3", 9, 1, 2);
		CU_ASSERT_EQUAL(shardstore_seal(root, &sealed[0][0][1]), 0);
		free(sealed[0][0][1].crcs);
		sealed[0][0][1].crcs = NULL;
	}
	/* crcs already set: refused. */
	CU_ASSERT_EQUAL(shardstore_seal(root, &sealed[0][0][0]), -EINVAL);
	free(sealed[0][0][0].crcs);
	drop_all();
}

/* Sealing with the CRCs the chunks came with: aligned chunks (put past the
 * page cache where the file system allows), the record holds the caller's
 * CRCs, the .dat is not read back (a wrong CRC given is caught when the
 * chunk is read), and a short .dat is still refused. */
static void test_known(void)
{
	uint32_t crcs[3];
	struct shard_meta m;
	uint8_t *buf = NULL, got[CHUNK];
	uint64_t s, i;

	CU_ASSERT_EQUAL_FATAL(posix_memalign((void **)&buf, SHARDSTORE_ALIGN,
					     CHUNK), 0);
	for (s = 0; s < 3; s++) {
		for (i = 0; i < CHUNK; i++)
			buf[i] = pattern(40, 1, s * CHUNK + i);
		crcs[s] = crc32c(buf, CHUNK);
		CU_ASSERT_EQUAL(shardstore_put(root, "n4", 40, 1, s * CHUNK,
					       buf, CHUNK), 0);
		CU_ASSERT_EQUAL(shardstore_put(root, "n4", 41, 1, s * CHUNK,
					       buf, CHUNK), 0);
	}
	meta_for(&m, "n4", 40, 1, 3);
	CU_ASSERT_EQUAL(shardstore_seal_known(root, &m, crcs), 0);
	CU_ASSERT_FATAL(m.crcs != NULL);
	CU_ASSERT(!memcmp(m.crcs, crcs, sizeof(crcs)));
	for (s = 0; s < 3; s++) {
		CU_ASSERT_EQUAL(shardstore_read(root, &m, s, got), 0);
		for (i = 0; i < CHUNK; i++)
			if (got[i] != pattern(40, 1, s * CHUNK + i))
				break;
		CU_ASSERT_EQUAL(i, CHUNK);
	}
	free(m.crcs);
	/* A CRC given wrong is the record's: the read catches the chunk. */
	crcs[1] ^= 1;
	meta_for(&m, "n4", 41, 1, 3);
	CU_ASSERT_EQUAL(shardstore_seal_known(root, &m, crcs), 0);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 1, got), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 2, got), 0);
	free(m.crcs);
	/* Four stripes said, three put: not sealed. */
	CU_ASSERT_EQUAL(shardstore_put(root, "n4", 42, 1, 0, buf, CHUNK), 0);
	meta_for(&m, "n4", 42, 1, 4);
	CU_ASSERT_EQUAL(shardstore_seal_known(root, &m, crcs), -ENODATA);
	CU_ASSERT_PTR_NULL(m.crcs);
	free(buf);
	for (s = 40; s <= 42; s++)
		CU_ASSERT_EQUAL(shardstore_drop(root, "n4", s, 0), 0);
}

/* An empty part: no stripe, an empty .dat made at seal, held. */
static void test_empty(void)
{
	struct shardstore_scan_stats st;
	struct found f = { 0 };
	struct shard_meta m;
	uint64_t bad = 99;

	char other[700];

	/* init: a trailing slash, and made twice. */
	snprintf(other, sizeof(other), "%s/other//", top);
	CU_ASSERT_EQUAL(shardstore_init(other), 0);
	CU_ASSERT_EQUAL(shardstore_init(other), 0);
	CU_ASSERT_EQUAL(access(other, F_OK), 0);
	CU_ASSERT_EQUAL(shardstore_init("/nonexistent/shards"), -ENOENT);

	meta_for(&m, "n1", 2, 3, 0);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), 0);
	CU_ASSERT_PTR_NULL(m.crcs);
	CU_ASSERT(present("n1", 2, 3, "dat") && present("n1", 2, 3, "meta"));
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad), 0);
	CU_ASSERT_EQUAL(shardstore_scan(root, collect, &f, &st), 0);
	CU_ASSERT(f.n == 1 && st.held == 1 && f.m[0].nstripes == 0);
	found_release(&f);
	drop_all();
}

static void test_damage(void)
{
	struct shard_meta m;
	uint8_t buf[CHUNK];
	char path[700];
	uint64_t bad = 99;

	put_seal(&m, "n1", 1, 2, 4);
	path_of(path, "n1", 1, 2, "dat");
	flip(path, 2 * CHUNK + 100);
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(bad, 2);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 2, buf), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 1, buf), 0);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 3, buf), 0);
	/* Two bad: the first is named. */
	flip(path, 1 * CHUNK);
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(bad, 1);
	flip(path, 1 * CHUNK);
	flip(path, 2 * CHUNK + 100);
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, NULL), 0);
	/* Cut short: the first stripe not wholly there. */
	CU_ASSERT_EQUAL(truncate(path, 3 * CHUNK - 1), 0);
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(bad, 2);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 3, buf), -CKPT_ECORRUPT);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 1, buf), 0);
	CU_ASSERT_EQUAL(unlink(path), 0);
	CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad), -ENOENT);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 0, buf), -ENOENT);
	free(m.crcs);
	drop_all();
}

static void test_recovery(void)
{
	struct shardstore_scan_stats st;
	struct shard_meta a, b, c, d;
	struct found f = { 0 };
	char path[700];
	int fd;

	put_seal(&a, "n1", 1, 1, 2);            /* stays held */
	put_seal(&b, "n1", 1, 2, 2);            /* its record damaged */
	put_seal(&c, "n2", 1, 1, 2);            /* its .dat cut short */
	put_seal(&d, "n2", 2, 1, 2);            /* its .dat gone */
	put_range("n2", 5, 3, 0, 1);            /* never sealed */
	path_of(path, "n1", 1, 2, "meta");
	flip(path, 30);
	path_of(path, "n2", 1, 1, "dat");
	CU_ASSERT_EQUAL(truncate(path, CHUNK), 0);
	path_of(path, "n2", 2, 1, "dat");
	CU_ASSERT_EQUAL(unlink(path), 0);
	path_of(path, "n1", 7, 4, "tmp");       /* a seal cut short */
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CU_ASSERT(fd >= 0);
	close(fd);
	/* Names not ours are left alone. */
	snprintf(path, sizeof(path), "%s/n1/notes.txt", root);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);

	CU_ASSERT_EQUAL_FATAL(shardstore_scan(root, collect, &f, &st), 0);
	CU_ASSERT_EQUAL(f.n, 1);
	CU_ASSERT_PTR_NOT_NULL(find(&f, "n1", 1, 1));
	CU_ASSERT_EQUAL(st.held, 1);
	CU_ASSERT_EQUAL(st.partial, 1);
	CU_ASSERT_EQUAL(st.tmp, 1);
	CU_ASSERT_EQUAL(st.bad, 3);
	found_release(&f);
	CU_ASSERT(!present("n2", 5, 3, "dat"));
	CU_ASSERT(!present("n1", 7, 4, "tmp"));
	CU_ASSERT(!present("n1", 1, 2, "meta") && !present("n1", 1, 2, "dat"));
	CU_ASSERT(present("n1", 1, 2, "meta.bad") &&
		  present("n1", 1, 2, "dat.bad"));
	CU_ASSERT(present("n2", 1, 1, "meta.bad") &&
		  present("n2", 1, 1, "dat.bad"));
	CU_ASSERT(present("n2", 2, 1, "meta.bad"));
	CU_ASSERT_EQUAL(access(path, F_OK), 0);

	/* A second scan finds the same, and changes nothing. */
	CU_ASSERT_EQUAL(shardstore_scan(root, NULL, NULL, &st), 0);
	CU_ASSERT(st.held == 1 && !st.partial && !st.tmp && !st.bad);
	/* The callback's error stops the scan, and is returned. */
	CU_ASSERT_EQUAL(shardstore_scan(root, stop, NULL, NULL), -EINTR);

	/* A record under another name (copied) is not held. */
	{
		char from[700], cmd[1600];

		path_of(from, "n1", 1, 1, "meta");
		path_of(path, "n1", 3, 1, "meta");
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, path);
		CU_ASSERT_EQUAL(system(cmd), 0);
		path_of(from, "n1", 1, 1, "dat");
		path_of(path, "n1", 3, 1, "dat");
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, path);
		CU_ASSERT_EQUAL(system(cmd), 0);
		CU_ASSERT_EQUAL(shardstore_scan(root, NULL, NULL, &st), 0);
		CU_ASSERT(st.held == 1 && st.bad == 1);
		CU_ASSERT(present("n1", 3, 1, "meta.bad"));
	}

	/* An unreadable root is an error, a missing one is empty. */
	CU_ASSERT_EQUAL(shardstore_scan("/nonexistent/shards", NULL, NULL, &st), 0);
	CU_ASSERT_EQUAL(st.held, 0);
	free(a.crcs);
	free(b.crcs);
	free(c.crcs);
	free(d.crcs);
	drop_all();
}

static void test_late_put(void)
{
	struct shard_meta m;
	uint8_t buf[CHUNK], back[CHUNK];

	put_seal(&m, "n1", 1, 1, 2);
	memset(buf, 0xee, sizeof(buf));
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 1, 0, buf, CHUNK),
			-EEXIST);
	CU_ASSERT_EQUAL(shardstore_read(root, &m, 0, back), 0);
	CU_ASSERT_EQUAL(back[0], pattern(1, 1, 0));
	/* Another shard of the part is still open. */
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 2, 0, buf, CHUNK), 0);
	/* Bad arguments. */
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 0, 0, buf, CHUNK), -EINVAL);
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 32, 0, buf, CHUNK), -EINVAL);
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 2, 0, buf, 0), -EINVAL);
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 2, UINT64_MAX - 10, buf,
				       CHUNK), -EINVAL);
	CU_ASSERT_EQUAL(shardstore_put("/nonexistent/shards", "n1", 1, 2, 0,
				       buf, CHUNK), -ENOENT);
	free(m.crcs);
	drop_all();
}

static void test_drop(void)
{
	struct shardstore_scan_stats st;
	struct shard_meta a, b, c;

	put_seal(&a, "n1", 1, 1, 2);
	put_seal(&b, "n1", 1, 2, 2);
	put_seal(&c, "n1", 2, 1, 2);
	put_range("n1", 1, 3, 0, 1);            /* an unsealed one too */
	/* One shard alone: the others of its part stay. */
	CU_ASSERT_EQUAL(shardstore_drop(root, "n1", 1, 2), 0);
	CU_ASSERT(!present("n1", 1, 2, "meta") && !present("n1", 1, 2, "dat"));
	CU_ASSERT(present("n1", 1, 1, "meta") && present("n1", 1, 1, "dat"));
	CU_ASSERT(present("n1", 1, 3, "dat"));
	free(b.crcs);
	put_seal(&b, "n1", 1, 2, 2);
	CU_ASSERT_EQUAL(shardstore_drop(root, "n1", 1, 0), 0);
	CU_ASSERT(!present("n1", 1, 1, "meta") && !present("n1", 1, 1, "dat"));
	CU_ASSERT(!present("n1", 1, 2, "meta") && !present("n1", 1, 2, "dat"));
	CU_ASSERT(!present("n1", 1, 3, "dat"));
	CU_ASSERT(present("n1", 2, 1, "meta") && present("n1", 2, 1, "dat"));
	CU_ASSERT_EQUAL(shardstore_drop(root, "n1", 1, 0), 0);   /* again */
	CU_ASSERT_EQUAL(shardstore_drop(root, "nobody", 1, 0), 0);
	CU_ASSERT_EQUAL(shardstore_scan(root, NULL, NULL, &st), 0);
	CU_ASSERT(st.held == 1 && !st.partial && !st.bad);
	/* A dropped shard can be put and sealed anew. */
	free(a.crcs);
	put_seal(&a, "n1", 1, 1, 2);
	free(a.crcs);
	free(b.crcs);
	free(c.crcs);
	drop_all();
}

static void test_wrong_size(void)
{
	struct shard_meta m;
	uint8_t buf[CHUNK] = { 0 };

	/* A stripe missing: refused, nothing sealed; once it comes, sealed. */
	meta_for(&m, "n1", 1, 1, 3);
	put_range("n1", 1, 1, 0, 2);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), -ENODATA);
	CU_ASSERT_PTR_NULL(m.crcs);
	CU_ASSERT(!present("n1", 1, 1, "meta") && !present("n1", 1, 1, "tmp"));
	put_range("n1", 1, 1, 2, 3);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), 0);
	free(m.crcs);
	/* A chunk past the end. */
	meta_for(&m, "n1", 1, 2, 2);
	put_range("n1", 1, 2, 0, 2);
	CU_ASSERT_EQUAL(shardstore_put(root, "n1", 1, 2, 2 * CHUNK, buf, 1), 0);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), -ENODATA);
	/* No .dat at all. */
	meta_for(&m, "n1", 1, 3, 2);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), -ENODATA);
	/* An invalid meta. */
	meta_for(&m, "n1", 1, 3, 2);
	m.nstripes = 3;
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), -EINVAL);
	drop_all();
}

static void test_names(void)
{
	static const char *const evil[] = {
		"..", ".", "../x", "a/b", "/tmp", "", "x\n", NULL
	};
	struct shard_meta m;
	uint8_t buf[CHUNK] = { 0 };
	char path[700];
	uint64_t bad;
	unsigned i;

	for (i = 0; evil[i]; i++) {
		CU_ASSERT_EQUAL(shardstore_put(root, evil[i], 1, 1, 0, buf,
					       CHUNK), -CKPT_EBADNAME);
		CU_ASSERT_EQUAL(shardstore_drop(root, evil[i], 1, 0),
				-CKPT_EBADNAME);
		meta_for(&m, "n1", 1, 1, 1);
		snprintf(m.owner, sizeof(m.owner), "%s", evil[i]);
		CU_ASSERT_EQUAL(shardstore_seal(root, &m), -CKPT_EBADNAME);
		m.crcs = (uint32_t *)buf;
		CU_ASSERT_EQUAL(shardstore_verify(root, &m, &bad),
				-CKPT_EBADNAME);
		CU_ASSERT_EQUAL(shardstore_read(root, &m, 0, buf),
				-CKPT_EBADNAME);
	}
	/* A root too long for the paths below it. */
	{
		char longroot[PATH_MAX];

		memset(longroot, 'r', sizeof(longroot) - 40);
		longroot[0] = '/';
		longroot[sizeof(longroot) - 40] = '\0';
		CU_ASSERT_EQUAL(shardstore_put(longroot, "n1", 1, 1, 0, buf,
					       CHUNK), -ENAMETOOLONG);
		meta_for(&m, "n1", 1, 1, 1);
		CU_ASSERT_EQUAL(shardstore_seal(longroot, &m), -ENAMETOOLONG);
		CU_ASSERT_EQUAL(shardstore_drop(longroot, "n1", 1, 0),
				-ENAMETOOLONG);
	}
	/* Nothing was made beside root. */
	snprintf(path, sizeof(path), "%s/x", top);
	CU_ASSERT(access(path, F_OK) < 0);
	snprintf(path, sizeof(path), "%s/0000000000000001.1.dat", top);
	CU_ASSERT(access(path, F_OK) < 0);
	snprintf(path, sizeof(path), "%s/0000000000000001.1.dat", root);
	CU_ASSERT(access(path, F_OK) < 0);
}

/* Faults of the seam: a failed seal leaves no record and no temporary,
 * and a retry seals. */
static void test_faults(void)
{
	static const char *const plans[] = {
		"fsync:1:EIO",                  /* the .dat */
		"pread:1:EIO",                  /* reading it back */
		"pwrite:1:ENOSPC",              /* the record */
		"fsync:2:EIO",                  /* the record's tmp */
		"rename:1:EIO",
		"fsync:3:EIO",                  /* the owner's directory */
		"fsync:4:EIO",                  /* root */
		NULL
	};
	struct shard_meta m;
	unsigned i;

	put_range("n1", 1, 1, 0, 2);
	for (i = 0; plans[i]; i++) {
		meta_for(&m, "n1", 1, 1, 2);
		CU_ASSERT_EQUAL_FATAL(sys_fault_set(plans[i]), 0);
		CU_ASSERT(shardstore_seal(root, &m) < 0);
		CU_ASSERT_EQUAL(sys_fault_set(NULL), 0);
		CU_ASSERT_PTR_NULL(m.crcs);
		CU_ASSERT(!present("n1", 1, 1, "meta"));
		CU_ASSERT(!present("n1", 1, 1, "tmp"));
	}
	meta_for(&m, "n1", 1, 1, 2);
	CU_ASSERT_EQUAL(shardstore_seal(root, &m), 0);
	free(m.crcs);
	drop_all();
}

/* The room for peers' shards: what holder_reserve keeps, what [ckptd]
 * capacity allows, and no wrap at either end. */
static void test_room(void)
{
	struct shardstore_room r = { .fs_room = 100 << 20, .keep = 30 << 20,
				     .limit_room = UINT64_MAX };

	CU_ASSERT_EQUAL(shardstore_room_left(&r), 70 << 20);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 70 << 20), 0);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, (70 << 20) + 1), -ENOSPC);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 0), 0);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, UINT64_MAX), -ENOSPC);
	/* The reserve is more than the room: nothing for peers, not a wrap. */
	r.keep = 200 << 20;
	CU_ASSERT_EQUAL(shardstore_room_left(&r), 0);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 1), -ENOSPC);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 0), 0);
	/* [ckptd] capacity the tighter of the two. */
	r.keep = 0;
	r.limit_room = 10 << 20;
	CU_ASSERT_EQUAL(shardstore_room_left(&r), 10 << 20);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 11 << 20), -ENOSPC);
	r.limit_room = 0;
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, 1), -ENOSPC);
	/* Everything at its largest. */
	r = (struct shardstore_room){ UINT64_MAX, 0, UINT64_MAX };
	CU_ASSERT_EQUAL(shardstore_room_left(&r), UINT64_MAX);
	CU_ASSERT_EQUAL(shardstore_room_fits(&r, UINT64_MAX), 0);
}

/* A shard's reservation: the first chunk asks the whole shard, the later
 * ones nothing; without a total, each chunk what it grows the shard by; a
 * chunk sent again asks nothing. */
static void test_put_ask(void)
{
	const uint64_t c = 1 << 20, total = 3 * c;
	uint64_t claim = 0, ask;

	ask = shardstore_put_ask(0, total, c, &claim);         /* chunk 0 */
	CU_ASSERT_EQUAL(ask, total);
	CU_ASSERT_EQUAL(claim, total);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, total, 2 * c, &claim), 0);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, total, 3 * c, &claim), 0);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, total, c, &claim), 0);
	CU_ASSERT_EQUAL(claim, total);

	/* Unknown total: as the chunks come, in any order, once each. */
	claim = 0;
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, 0, c, &claim), c);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, 0, 2 * c, &claim), c);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, 0, 2 * c, &claim), 0);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, 0, c, &claim), 0);
	CU_ASSERT_EQUAL(shardstore_put_ask(claim, 0, 5 * c, &claim), 3 * c);
	CU_ASSERT_EQUAL(claim, 5 * c);

	/* A larger total than the claim asks the difference; a huge one asks
	 * it all (and the room refuses it), never wrapping. */
	CU_ASSERT_EQUAL(shardstore_put_ask(total, 4 * c, c, &claim), c);
	CU_ASSERT_EQUAL(claim, 4 * c);
	CU_ASSERT_EQUAL(shardstore_put_ask(0, INT64_MAX, c, NULL),
			(uint64_t)INT64_MAX);
	CU_ASSERT_EQUAL(shardstore_put_ask(0, 0, UINT64_MAX, &claim),
			UINT64_MAX);
	CU_ASSERT_EQUAL(shardstore_put_ask(UINT64_MAX, 0, UINT64_MAX, &claim),
			0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "empty", test_empty },
		{ "known", test_known },
		{ "damage", test_damage },
		{ "recovery", test_recovery },
		{ "late_put", test_late_put },
		{ "drop", test_drop },
		{ "wrong_size", test_wrong_size },
		{ "names", test_names },
		{ "faults", test_faults },
		{ "room", test_room },
		{ "put_ask", test_put_ask },
		{ NULL, NULL }
	};

	return unit_run_suite("shardstore", suite_init, suite_clean, tests);
}
