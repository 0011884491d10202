/*
 * test_pfslayout.c - the PFS layout (server/pfs/pfslayout.h) is one-to-one: for
 * every (node, job, version, path or index) over an alphabet of names chosen
 * to look like the layout's own (a.job, x.dir, files, manifest, tmp.0, ...),
 * parsing pfs_path()'s answer back level by level with pfs_level() gives
 * the same tuple, so no two tuples share a path.  Also: the levels' modes
 * and owners from pfs_mkdirs(), links refused at every level by pfs_open(),
 * and a directory of the wrong owner refused.
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

#include "ckpt.h"
#include "pfslayout.h"

/* Names that end like the layout's suffixes or are its fixed names. */
static const char *const names[] = {
	"a", "b.c", "a.job", "a.dir", "a.ver", ".job", "x.dir.job", "files",
	"manifest", "manifest.tmp", "tmp.0", "tmp.1", "a.ckpt-tmp",
	".ckpt-manifest",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

struct key {
	enum pfs_node node;
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	char path[CKPT_PATH_MAX + 1];
	uint32_t idx;
};

/* Copy level p (up to '/' or the end) into out; returns the next level or
 * NULL at the end. */
static const char *level(const char *p, char *out, size_t cap)
{
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);

	CU_ASSERT_FATAL(n < cap);
	memcpy(out, p, n);
	out[n] = 0;
	return slash ? slash + 1 : NULL;
}

/* The inverse of pfs_path(), written from the layout's description only. */
static int parse(const char *rel, struct key *k)
{
	char lv[NAME_MAX + 1];
	enum pfs_level l;
	size_t stem, jl = 0;
	const char *p = rel;
	char *end;

	memset(k, 0, sizeof(*k));
	for (;;) {
		if (!p)
			return -1;
		p = level(p, lv, sizeof(lv));
		l = pfs_level(lv, &stem);
		if (l != PFS_L_DIR && l != PFS_L_JOB)
			return -1;
		memcpy(k->job + jl, lv, stem);
		jl += stem;
		if (l == PFS_L_JOB)
			break;
		k->job[jl++] = '/';
	}
	k->node = PFS_N_JOB;
	if (!p)
		return 0;
	p = level(p, lv, sizeof(lv));
	if (pfs_level(lv, &stem) != PFS_L_VER)
		return -1;
	memcpy(k->version, lv, stem);
	k->node = PFS_N_VERSION;
	if (!p)
		return 0;
	if (!strcmp(p, PFS_MANIFEST)) {
		k->node = PFS_N_MANIFEST;
	} else if (!strcmp(p, PFS_MANIFEST ".tmp")) {
		k->node = PFS_N_MANIFEST_TMP;
	} else if (!strncmp(p, "tmp.", 4) && !strchr(p, '/')) {
		k->node = PFS_N_FILE_TMP;
		k->idx = strtoul(p + 4, &end, 10);
		if (*end)
			return -1;
	} else if (!strncmp(p, PFS_FILES "/", 6) && p[6]) {
		k->node = PFS_N_FILE;
		snprintf(k->path, sizeof(k->path), "%s", p + 6);
	} else {
		return -1;
	}
	return 0;
}

static unsigned checked;

static void round_trip(const struct key *k)
{
	char rel[PATH_MAX];
	struct key back;

	CU_ASSERT_EQUAL_FATAL(pfs_path(rel, sizeof(rel), k->node, k->job,
				       k->version, k->path, k->idx), 0);
	CU_ASSERT_FATAL(rel[0] != '/');
	CU_ASSERT_EQUAL_FATAL(parse(rel, &back), 0);
	CU_ASSERT_EQUAL_FATAL(back.node, k->node);
	CU_ASSERT_STRING_EQUAL_FATAL(back.job, k->job);
	if (k->node != PFS_N_JOB)
		CU_ASSERT_STRING_EQUAL_FATAL(back.version, k->version);
	if (k->node == PFS_N_FILE)
		CU_ASSERT_STRING_EQUAL_FATAL(back.path, k->path);
	if (k->node == PFS_N_FILE_TMP)
		CU_ASSERT_EQUAL_FATAL(back.idx, k->idx);
	checked++;
}

/* Every node of job k->job over every version and path of the alphabet. */
static void every_node(struct key *k)
{
	size_t v, p1, p2;

	k->node = PFS_N_JOB;
	round_trip(k);
	for (v = 0; v < NNAMES; v++) {
		snprintf(k->version, sizeof(k->version), "%s", names[v]);
		for (k->node = PFS_N_VERSION; k->node <= PFS_N_MANIFEST_TMP;
		     k->node++)
			round_trip(k);
		k->node = PFS_N_FILE_TMP;
		for (k->idx = 0; k->idx < 3; k->idx++)
			round_trip(k);
		k->node = PFS_N_FILE;
		for (p1 = 0; p1 < NNAMES; p1++) {
			snprintf(k->path, sizeof(k->path), "%s", names[p1]);
			round_trip(k);
			for (p2 = 0; p2 < NNAMES; p2++) {
				snprintf(k->path, sizeof(k->path), "%s/%s",
					 names[p1], names[p2]);
				round_trip(k);
			}
		}
	}
}

static void test_injective(void)
{
	struct key k;
	size_t a, b, c;

	memset(&k, 0, sizeof(k));
	for (a = 0; a < NNAMES; a++) {
		snprintf(k.job, sizeof(k.job), "%s", names[a]);
		every_node(&k);
		for (b = 0; b < NNAMES; b++) {
			snprintf(k.job, sizeof(k.job), "%s/%s", names[a], names[b]);
			every_node(&k);
			for (c = 0; c < NNAMES; c += 5) {
				snprintf(k.job, sizeof(k.job), "%s/%s/%s",
					 names[a], names[b], names[c]);
				every_node(&k);
			}
		}
	}
	CU_ASSERT(checked > 100000);
}

static void test_levels(void)
{
	char big[CKPT_JOB_MAX + 1], rel[PATH_MAX];
	size_t stem;

	CU_ASSERT_EQUAL(pfs_level("a.dir", &stem), PFS_L_DIR);
	CU_ASSERT_EQUAL(stem, 1);
	CU_ASSERT_EQUAL(pfs_level("x.dir.job", &stem), PFS_L_JOB);
	CU_ASSERT_EQUAL(stem, 5);
	CU_ASSERT_EQUAL(pfs_level(".ver", &stem), PFS_L_OTHER);  /* no name */
	CU_ASSERT_EQUAL(pfs_level("files", &stem), PFS_L_OTHER);
	CU_ASSERT_EQUAL(pfs_level("manifest", &stem), PFS_L_OTHER);
	CU_ASSERT_EQUAL(pfs_level("tmp.0", &stem), PFS_L_OTHER);
	CU_ASSERT_EQUAL(pfs_shared_levels("a"), 0);
	CU_ASSERT_EQUAL(pfs_shared_levels("a/b/c"), 2);
	/* The longest job of one level and the longest version fit NAME_MAX. */
	memset(big, 'j', CKPT_JOB_MAX);
	big[CKPT_JOB_MAX] = 0;
	CU_ASSERT_EQUAL(pfs_path(rel, sizeof(rel), PFS_N_VERSION, big, "v",
				 NULL, 0), 0);
	CU_ASSERT(strlen(strtok(rel, "/")) <= NAME_MAX);
	/* Too small a buffer is an error, never a cut path. */
	CU_ASSERT_EQUAL(pfs_path(rel, 8, PFS_N_FILE, "job", "v", "p", 0),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(pfs_path(rel, 0, PFS_N_JOB, "job", NULL, NULL, 0),
			-ENAMETOOLONG);
}

/*
 * The names of a version in parts: per node, part.<node>, ptmp.<node> and
 * tmp.<node>.<n>; no name of one node is another node's (tricky node
 * names included), none is a name of a one-part version, and pfs_ventry()
 * tells each kind and gives the node of a part back.
 */
static void test_parts(void)
{
	static const char *nodes[] = { "n1", "part", "tmp", "x.tmp", "1", "1.2",
				       "manifest", "a-b_c.d", "ptmp" };
	enum { NN = sizeof(nodes) / sizeof(nodes[0]), PER = 5 };
	char rel[PATH_MAX], all[NN * PER + 3][PATH_MAX];
	const char *base, *node;
	size_t i, j, n = 0;

	for (i = 0; i < NN; i++) {
		CU_ASSERT_EQUAL_FATAL(pfs_path(all[n], PATH_MAX, PFS_N_PART,
					       "a/j", "v", nodes[i], 0), 0);
		base = strrchr(all[n++], '/') + 1;
		CU_ASSERT_EQUAL(pfs_ventry(base, &node), PFS_V_PART);
		CU_ASSERT_STRING_EQUAL(node, nodes[i]);
		CU_ASSERT_EQUAL_FATAL(pfs_path(all[n], PATH_MAX, PFS_N_PART_TMP,
					       "a/j", "v", nodes[i], 0), 0);
		CU_ASSERT_EQUAL(pfs_ventry(strrchr(all[n++], '/') + 1, &node),
				PFS_V_TEMP);
		for (j = 0; j < 3; j++) {
			CU_ASSERT_EQUAL_FATAL(pfs_path(all[n], PATH_MAX,
						       PFS_N_PART_FILE_TMP, "a/j",
						       "v", nodes[i], j * 11), 0);
			CU_ASSERT_EQUAL(pfs_ventry(strrchr(all[n++], '/') + 1,
						   &node), PFS_V_TEMP);
		}
	}
	CU_ASSERT_EQUAL(pfs_path(all[n++], PATH_MAX, PFS_N_MANIFEST, "a/j", "v",
				 NULL, 0), 0);
	CU_ASSERT_EQUAL(pfs_path(all[n++], PATH_MAX, PFS_N_MANIFEST_TMP, "a/j",
				 "v", NULL, 0), 0);
	CU_ASSERT_EQUAL(pfs_path(all[n++], PATH_MAX, PFS_N_FILE_TMP, "a/j", "v",
				 NULL, 12), 0);
	CU_ASSERT_STRING_EQUAL(all[n - 1], "a.dir/j.job/v.ver/tmp.12");
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			CU_ASSERT(strcmp(all[i], all[j]) != 0);
	CU_ASSERT_STRING_EQUAL(all[0], "a.dir/j.job/v.ver/part.n1");
	CU_ASSERT_STRING_EQUAL(all[1], "a.dir/j.job/v.ver/ptmp.n1");
	CU_ASSERT_STRING_EQUAL(all[2], "a.dir/j.job/v.ver/tmp.n1.0");
	CU_ASSERT_EQUAL(pfs_ventry("manifest", &node), PFS_V_OTHER);
	CU_ASSERT_EQUAL(pfs_ventry("files", &node), PFS_V_OTHER);
	CU_ASSERT_EQUAL(pfs_ventry("manifest.tmp", &node), PFS_V_TEMP);
	CU_ASSERT_EQUAL(pfs_ventry("part.", &node), PFS_V_OTHER);
	CU_ASSERT_EQUAL(pfs_ventry("tmp.", &node), PFS_V_OTHER);
	/* A node name must be one level. */
	CU_ASSERT_EQUAL(pfs_path(rel, sizeof(rel), PFS_N_PART, "j", "v", "a/b",
				 0), -EINVAL);
	CU_ASSERT_EQUAL(pfs_path(rel, sizeof(rel), PFS_N_PART, "j", "v", "", 0),
			-EINVAL);
	CU_ASSERT_EQUAL(pfs_path(rel, sizeof(rel), PFS_N_PART, "j", "v", NULL,
				 0), -EINVAL);
}

/* Mode and uid of dir/rel. */
static int mode_of(const char dir[256], const char *rel, uid_t *uid)
{
	char path[PATH_MAX + 256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (lstat(path, &st) < 0)
		return -1;
	*uid = st.st_uid;
	return st.st_mode & 07777;
}

static void test_tree(void)
{
	struct pfs_owner me = { geteuid(), getegid() };
	char dir[256], path[PATH_MAX + 256];
	uid_t uid;
	int tfd, fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(unit_mkdtemp(dir, sizeof(dir), "pfslayout"));
	tfd = pfs_target_open(dir);
	CU_ASSERT_FATAL(tfd >= 0);
	CU_ASSERT_EQUAL(pfs_mkdirs(tfd, "p.dir/q.job/v.ver/files/d", 1, &me), 0);
	CU_ASSERT_EQUAL(mode_of(dir, "p.dir", &uid), 0711);
	CU_ASSERT_EQUAL(mode_of(dir, "p.dir/q.job", &uid), 0700);
	CU_ASSERT_EQUAL(mode_of(dir, "p.dir/q.job/v.ver/files/d", &uid), 0700);
	CU_ASSERT_EQUAL(uid, me.uid);
	/* Again: everything exists and is whose it should be. */
	CU_ASSERT_EQUAL(pfs_mkdirs(tfd, "p.dir/q.job/v.ver/files/d", 1, &me), 0);
	fd = pfs_open(tfd, "p.dir/q.job/v.ver/files/d/f",
		      O_WRONLY | O_CREAT | O_EXCL, 0600);
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(pfs_own(fd, &me, 0600), 0);
	close(fd);
	CU_ASSERT_EQUAL(mode_of(dir, "p.dir/q.job/v.ver/files/d/f", &uid), 0600);

	/* A link at any level is refused, for opens and for mkdirs. */
	snprintf(path, sizeof(path), "%s/l.job", dir);
	CU_ASSERT_EQUAL(symlink("p.dir/q.job", path), 0);
	CU_ASSERT(pfs_open(tfd, "l.job/v.ver/files/d/f", O_RDONLY, 0) < 0);
	CU_ASSERT(pfs_open(tfd, "l.job", O_RDONLY, 0) < 0);
	CU_ASSERT(pfs_mkdirs(tfd, "l.job/w.ver", 0, &me) < 0);
	snprintf(path, sizeof(path), "%s/p.dir/q.job/v.ver/files/d/g", dir);
	CU_ASSERT_EQUAL(symlink("f", path), 0);
	CU_ASSERT_EQUAL(pfs_open(tfd, "p.dir/q.job/v.ver/files/d/g", O_RDONLY, 0),
			-ELOOP);

	/* A level of another uid is not taken for the owner's. */
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/p.dir/q.job", dir);
		CU_ASSERT_EQUAL(chown(path, 12345, 12345), 0);
		CU_ASSERT_EQUAL(pfs_mkdirs(tfd, "p.dir/q.job/x.ver", 1, &me),
				-EACCES);
		CU_ASSERT_EQUAL(pfs_mkdirs(tfd, "r.dir/s.job", 2, &me), 0);
		CU_ASSERT_EQUAL(mode_of(dir, "r.dir/s.job", &uid), 0711);
	}
	close(tfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(path), 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "injective", test_injective },
		{ "levels", test_levels },
		{ "parts", test_parts },
		{ "tree", test_tree },
		{ NULL, NULL }
	};

	return unit_run("pfslayout", tests);
}
