/*
 * test_pfsmark.c - the drain target's mark (server/pfs/pfsmark.h): made on
 * first use and recorded, adopted by a second store, refused when missing,
 * another's, malformed, linked or of the wrong kind; an empty target
 * refused to a store that drained before; a record that is malformed or
 * names another path (not one with a trailing slash) starts afresh;
 * adoption, also over a mark ckptd did not write; many stores
 * racing to mark one target all end with one mark; a store killed while
 * it marks leaves nothing behind once it checks again.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "ckpt.h"
#include "log.h"
#include "sys.h"
#include "pfsmark.h"

static char root[64];

static void path_of(char *buf, size_t cap, const char *rel)
{
	snprintf(buf, cap, "%s/%s", root, rel);
}

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	path_of(p, sizeof(p), rel);
	f = fopen(p, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* The id in the target's mark, or "" */
static void mark_of(const char *target, char *id)
{
	char p[256], buf[128] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/" PFSMARK_NAME, root, target);
	id[0] = 0;
	f = fopen(p, "r");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, "ckpt-target 1 ", 14) &&
	    strlen(buf) >= 14 + PFSMARK_ID_LEN) {
		memcpy(id, buf + 14, PFSMARK_ID_LEN);
		id[PFSMARK_ID_LEN] = 0;
	}
	fclose(f);
}

static void mk(const char *rel)
{
	char p[256];

	path_of(p, sizeof(p), rel);
	CU_ASSERT_FATAL(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void setup(void)
{
	char cmd[128];

	snprintf(root, sizeof(root), "/tmp/test_pfsmark.XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir t s1 s2", root);
	CU_ASSERT_FATAL(system(cmd) == 0);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CU_ASSERT(system(cmd) == 0);
}

/* Open a pfsmark for target (under root) with its record in store. */
static void open_at(struct pfsmark *pm, char *tbuf, const char *target,
		    const char *store, int drained)
{
	char sbuf[256];

	path_of(tbuf, 256, target);
	path_of(sbuf, sizeof(sbuf), store);
	CU_ASSERT_FATAL(pfsmark_open(pm, tbuf, sbuf, drained) == 0);
}

static void test_first_use(void)
{
	char t1[256], t2[256], id[64], rec[128] = "";
	struct pfsmark a, b;
	FILE *f;

	setup();
	open_at(&a, t1, "t", "s1", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&a), 0);
	mark_of("t", id);
	CU_ASSERT_EQUAL(strlen(id), PFSMARK_ID_LEN);
	CU_ASSERT_STRING_EQUAL(a.id, id);
	f = fopen(a.record, "r");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fgets(rec, sizeof(rec), f) != NULL);
	fclose(f);
	CU_ASSERT_EQUAL(strncmp(rec, id, PFSMARK_ID_LEN), 0);
	/* A second store adopts it; a reopened first one keeps it. */
	open_at(&b, t2, "t", "s2", 1);
	CU_ASSERT_EQUAL(pfsmark_check(&b), 0);
	CU_ASSERT_STRING_EQUAL(b.id, id);
	pfsmark_close(&b);
	open_at(&b, t2, "t", "s1", 1);
	CU_ASSERT_STRING_EQUAL(b.id, id);
	CU_ASSERT_EQUAL(pfsmark_check(&b), 0);
	pfsmark_close(&b);
	/* Gone, then back. */
	path_of(rec, sizeof(rec), "t/" PFSMARK_NAME);
	path_of(t2, sizeof(t2), "aside");
	CU_ASSERT_EQUAL(rename(rec, t2), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&a), -CKPT_ETARGET);
	CU_ASSERT_EQUAL(rename(t2, rec), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&a), 0);
	/* A target that is not there. */
	CU_ASSERT_EQUAL(rename(t1, t2), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&a), -CKPT_ETARGET);
	CU_ASSERT_EQUAL(rename(t2, t1), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&a), 0);
	pfsmark_close(&a);
	teardown();
}

/* Marks that are not ckptd's: refused with a record and without. */
static void test_malformed(void)
{
	static const char *const bad[] = {
		"ckpt-target 1 0123456789ABCDEF0123456789abcdef\n",
		"ckpt-target 1 0123456789abcdef0123456789abcde\n",
		"ckpt-target 1 0123456789abcdef0123456789abcdef",
		"ckpt-target 1 0123456789abcdef0123456789abcdef\nx",
		"ckpt-target 2 0123456789abcdef0123456789abcdef\n",
		"",
	};
	char t[256], p[256], big[8192];
	struct pfsmark pm, fresh;
	size_t i;

	setup();
	open_at(&pm, t, "t", "s1", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("t/" PFSMARK_NAME, bad[i]);
		CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
		open_at(&fresh, p, "t", "s2", 0);
		CU_ASSERT_EQUAL(pfsmark_check(&fresh), -CKPT_ETARGET);
		pfsmark_close(&fresh);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	put("t/" PFSMARK_NAME, big);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	/* The right text through a link, and a directory of that name. */
	snprintf(big, sizeof(big), "ckpt-target 1 %s\n", pm.id);
	put("elsewhere", big);
	path_of(p, sizeof(p), "t/" PFSMARK_NAME);
	CU_ASSERT_EQUAL(unlink(p), 0);
	CU_ASSERT_EQUAL(symlink("../elsewhere", p), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	CU_ASSERT_EQUAL(unlink(p), 0);
	CU_ASSERT_EQUAL(mkdir(p, 0755), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	CU_ASSERT_EQUAL(rmdir(p), 0);
	/* The right text, owned by another uid than ckptd's and the
	 * target's. */
	put("t/" PFSMARK_NAME, big);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	if (geteuid() == 0) {
		CU_ASSERT_EQUAL(chown(p, 12345, 12345), 0);
		CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
		/* The target's owner may have made it, but a target a user
		 * owns is refused all the same: that user may write it. */
		CU_ASSERT_EQUAL(chown(t, 12345, 12345), 0);
		CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
		CU_ASSERT_EQUAL(chown(t, 0, 0), 0);
		CU_ASSERT_EQUAL(chown(p, 0, 0), 0);
		CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	}
	pfsmark_close(&pm);
	teardown();
}

static const char *root_s1(void)
{
	static char p[256];

	path_of(p, sizeof(p), "s1");
	return p;
}

static void test_records(void)
{
	char t[256], t2[256], id[64];
	struct pfsmark pm;

	setup();
	/* Drained versions, no record, an empty target: refused; with
	 * content: marked. */
	open_at(&pm, t, "t", "s1", 1);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	mark_of("t", id);
	CU_ASSERT_STRING_EQUAL(id, "");
	put("t/x.job", "");
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	pfsmark_close(&pm);
	/* A malformed record is ignored: the mark there is adopted. */
	put("s1/target", "not a record\n");
	open_at(&pm, t, "t", "s1", 1);
	CU_ASSERT_STRING_EQUAL(pm.id, "");
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	mark_of("t", id);
	CU_ASSERT_STRING_EQUAL(pm.id, id);
	pfsmark_close(&pm);
	/* The same path with trailing slashes: the record holds. */
	path_of(t2, sizeof(t2), "t//");
	CU_ASSERT_FATAL(pfsmark_open(&pm, t2, root_s1(), 1) == 0);
	CU_ASSERT_STRING_EQUAL(pm.id, id);
	pfsmark_close(&pm);
	/* A record for another path: a first use, but an empty target is
	 * refused to a store that drained before, not to a new one. */
	mk("u");
	open_at(&pm, t2, "u", "s1", 1);
	CU_ASSERT_STRING_EQUAL(pm.id, "");
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	pfsmark_close(&pm);
	open_at(&pm, t2, "u", "s1", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	mark_of("u", id);
	CU_ASSERT_STRING_EQUAL(pm.id, id);
	mark_of("t", t);
	CU_ASSERT_STRING_NOT_EQUAL(t, id);
	pfsmark_close(&pm);
	teardown();
}

static void test_adopt(void)
{
	char t[256], p[256], id[64];
	struct pfsmark pm;

	setup();
	open_at(&pm, t, "t", "s1", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	put("t/" PFSMARK_NAME, "ckpt-target 1 00000000000000000000000000000001\n");
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	pfsmark_adopt(&pm);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	CU_ASSERT_STRING_EQUAL(pm.id, "00000000000000000000000000000001");
	pfsmark_close(&pm);
	open_at(&pm, t, "t", "s1", 1);
	CU_ASSERT_STRING_EQUAL(pm.id, "00000000000000000000000000000001");
	/* An empty target taken as it is: a new mark. */
	path_of(p, sizeof(p), "t/" PFSMARK_NAME);
	CU_ASSERT_EQUAL(unlink(p), 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	pfsmark_adopt(&pm);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	mark_of("t", id);
	CU_ASSERT_STRING_EQUAL(pm.id, id);
	CU_ASSERT_STRING_NOT_EQUAL(id, "00000000000000000000000000000001");
	/* A mark ckptd did not write is replaced when adopting. */
	put("t/" PFSMARK_NAME, "garbage\n");
	CU_ASSERT_EQUAL(pfsmark_check(&pm), -CKPT_ETARGET);
	pfsmark_adopt(&pm);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	mark_of("t", id);
	CU_ASSERT_EQUAL(strlen(id), PFSMARK_ID_LEN);
	CU_ASSERT_STRING_EQUAL(pm.id, id);
	pfsmark_close(&pm);
	teardown();
}

#define RACERS 8

struct racer {
	struct pfsmark pm;
	char t[256];
	int ret;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	r->ret = pfsmark_check(&r->pm);
	return NULL;
}

static void test_race(void)
{
	struct racer r[RACERS];
	pthread_t th[RACERS];
	char store[32], id[64];
	int i, round;

	for (round = 0; round < 20; round++) {
		setup();
		for (i = 0; i < RACERS; i++) {
			snprintf(store, sizeof(store), "r%d", i);
			mk(store);
			open_at(&r[i].pm, r[i].t, "t", store, 0);
		}
		for (i = 0; i < RACERS; i++)
			CU_ASSERT_FATAL(pthread_create(&th[i], NULL, race, &r[i]) == 0);
		for (i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		mark_of("t", id);
		CU_ASSERT_EQUAL(strlen(id), PFSMARK_ID_LEN);
		for (i = 0; i < RACERS; i++) {
			CU_ASSERT_EQUAL(r[i].ret, 0);
			CU_ASSERT_STRING_EQUAL(r[i].pm.id, id);
			pfsmark_close(&r[i].pm);
		}
		teardown();
	}
}

/* The entries of rel (under root) but . and .., one each per line, sorted
 * by readdir's order; into out. */
static int entries(const char *rel, char *out, size_t cap, char *tmp,
		   size_t tcap)
{
	char p[256];
	struct dirent *e;
	DIR *dp;
	int n = 0;

	path_of(p, sizeof(p), rel);
	out[0] = 0;
	if (tmp)
		tmp[0] = 0;
	dp = opendir(p);
	if (!dp)
		return -1;
	while ((e = readdir(dp))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		snprintf(out + strlen(out), cap - strlen(out), "%s\n", e->d_name);
		if (tmp && strcmp(e->d_name, PFSMARK_NAME))
			snprintf(tmp, tcap, "%s", e->d_name);
	}
	closedir(dp);
	return n;
}

/* A child that marks target for store and is SIGKILLed while its
 * temporary mark waits to be linked; the temporary's name into tmp. */
static void killed_marking(const char *target, const char *store, char *tmp,
			   size_t tcap)
{
	struct timespec t0, t;
	char list[512], p[768];
	struct stat st;
	pid_t pid;
	int status, n = 0;

	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct pfsmark pm;
		char tb[256];

		/* Held in the fsync of its temporary, before the link. */
		sys_fault_set("fsync:1+:delay=30000");
		open_at(&pm, tb, target, store, 0);
		pfsmark_check(&pm);
		_exit(0);
	}
	/* Until it is written and waits for its link (a deadline of 20 s). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = entries(target, list, sizeof(list), tmp, tcap);
		if (n == 1 && tmp[0]) {
			snprintf(p, sizeof(p), "%s/%s/%s", root, target, tmp);
			if (stat(p, &st) == 0 && st.st_size > 0)
				break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20 ||
		    waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(2000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CU_ASSERT_FATAL(n == 1 && tmp[0]);
	CU_ASSERT(strstr(tmp, PFSMARK_NAME ".") == tmp);
}

static void test_killed(void)
{
	char tb[256], tmp[256], tmp2[256], list[512], a[768], b[256];
	struct pfsmark pm;

	setup();
	/* Killed before the link: the next try makes the mark, and no
	 * temporary file is left. */
	killed_marking("t", "s1", tmp, sizeof(tmp));
	open_at(&pm, tb, "t", "s1", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	CU_ASSERT_EQUAL(entries("t", list, sizeof(list), NULL, 0), 1);
	CU_ASSERT_STRING_EQUAL(list, PFSMARK_NAME "\n");
	pfsmark_close(&pm);
	/* Killed again, by another store: its name is its own. */
	mk("t2");
	killed_marking("t2", "s2", tmp2, sizeof(tmp2));
	CU_ASSERT(strcmp(tmp, tmp2) != 0);
	/* Killed after the link (made here by hand), before the record: the
	 * mark is adopted and the temporary removed. */
	snprintf(a, sizeof(a), "%s/t2/%s", root, tmp2);
	snprintf(b, sizeof(b), "%s/t2/" PFSMARK_NAME, root);
	CU_ASSERT_FATAL(link(a, b) == 0);
	open_at(&pm, tb, "t2", "s2", 0);
	CU_ASSERT_EQUAL(pfsmark_check(&pm), 0);
	CU_ASSERT_EQUAL(entries("t2", list, sizeof(list), NULL, 0), 1);
	CU_ASSERT_STRING_EQUAL(list, PFSMARK_NAME "\n");
	pfsmark_close(&pm);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "first_use", test_first_use },
		{ "malformed", test_malformed },
		{ "records", test_records },
		{ "adopt", test_adopt },
		{ "race", test_race },
		{ "killed", test_killed },
		{ NULL, NULL }
	};

	log_set_level(LOG_CRIT);
	return unit_run("pfsmark", tests);
}
