/*
 * test_nodes.c - unit tests for lib/nodes: the cluster's node list.
 *
 * A well-formed file with comments, blank lines, IPv6 and optional domains
 * parses field by field; every malformed line is refused with its line
 * number; a file is read from disk; and the list feeds place_compute().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nodes.h"
#include "unit.h"

static int parse(const char *text, struct node_list *l, struct conf_err *e)
{
	return nodes_parse(text, strlen(text), "nodes", l, e);
}

static void test_good(void)
{
	static const char text[] =
		"# the cluster\n"
		"\n"
		"n1 127.0.0.1:7070 rackA   # first\n"
		"  n2\t127.0.0.2:7070\trackA\r\n"
		"n3 node3.example.com:9 \n"
		"n4 [::1]:7071 rackB\n"
		"n5 [fe80::1%]:1 rackB\n";
	struct node_list l;
	struct conf_err e;

	CU_ASSERT_EQUAL_FATAL(parse(text, &l, &e), -EINVAL); /* '%' */
	CU_ASSERT_EQUAL(e.line, 7);
	CU_ASSERT_EQUAL_FATAL(nodes_parse(text, (size_t)(strstr(text, "n5") - text), "nodes", &l,
					  &e), 0);
	CU_ASSERT_EQUAL_FATAL(l.n, 4);
	CU_ASSERT_STRING_EQUAL(l.v[0].name, "n1");
	CU_ASSERT_STRING_EQUAL(l.v[0].host, "127.0.0.1");
	CU_ASSERT_EQUAL(l.v[0].port, 7070);
	CU_ASSERT_STRING_EQUAL(l.v[0].domain, "rackA");
	CU_ASSERT_STRING_EQUAL(l.v[1].name, "n2");
	CU_ASSERT_STRING_EQUAL(l.v[1].domain, "rackA");
	CU_ASSERT_STRING_EQUAL(l.v[2].host, "node3.example.com");
	CU_ASSERT_EQUAL(l.v[2].port, 9);
	CU_ASSERT_STRING_EQUAL(l.v[2].domain, "");
	CU_ASSERT_STRING_EQUAL(l.v[3].host, "::1");
	CU_ASSERT_EQUAL(l.v[3].port, 7071);
	nodes_release(&l);

	CU_ASSERT_EQUAL(parse("", &l, &e), 0);
	CU_ASSERT_EQUAL(l.n, 0);
	nodes_release(&l);
	CU_ASSERT_EQUAL(parse("# only\n\n   \n", &l, &e), 0);
	CU_ASSERT_EQUAL(l.n, 0);
	nodes_release(&l);
}

static void test_bad_lines(void)
{
	static const char *const bad[] = {
		"n1\n",                         /* no address */
		"n1 127.0.0.1\n",               /* no port */
		"n1 127.0.0.1:\n",
		"n1 127.0.0.1:0\n",
		"n1 127.0.0.1:65536\n",
		"n1 127.0.0.1:07070\n",
		"n1 127.0.0.1:70x\n",
		"n1 :7070\n",
		"n1 [::1:7070\n",
		"n1 [::1]7070\n",
		"n1 [zz]:7070\n",
		"n1 127.0.0.1:7070 rack A\n",   /* a fourth field */
		"n/1 127.0.0.1:7070\n",
		"n1 127.0.0.1:7070 r/a\n",
		"n1 h$st:7070\n",
		"n1 127.0.0.1:7070\nn1 127.0.0.2:7070\n",       /* name twice */
		"n1 127.0.0.1:7070\nn2 127.0.0.1:7070\n",       /* addr twice */
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		" 127.0.0.1:7070\n",            /* 64-byte name */
	};
	struct node_list l;
	struct conf_err e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(parse(bad[i], &l, &e), -EINVAL);
		CU_ASSERT(e.line >= 1);
		CU_ASSERT(e.msg[0] != 0);
		CU_ASSERT_PTR_NULL(l.v);
	}
	CU_ASSERT_EQUAL(parse("n1 127.0.0.1:7070\nn1 h:1\n", &l, &e), -EINVAL);
	CU_ASSERT_EQUAL(e.line, 2);
	CU_ASSERT_EQUAL(nodes_parse("n1 127.0.0.1:7070\0x", 20, "f", &l, &e),
			-EINVAL);
}

static void test_load_and_place(void)
{
	char path[] = "/tmp/test_nodes.XXXXXX";
	struct place_node *pn;
	struct placement p;
	struct node_list l;
	struct conf_err e;
	FILE *f;
	int fd, i;

	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_FATAL(f != NULL);
	for (i = 1; i <= 6; i++)
		fprintf(f, "n%d 127.0.0.%d:7070 d%d\n", i, i, (i - 1) / 2);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(nodes_load(path, &l, &e), 0);
	CU_ASSERT_EQUAL(l.n, 6);
	pn = nodes_places(&l);
	CU_ASSERT_FATAL(pn != NULL);
	CU_ASSERT_EQUAL_FATAL(place_compute(pn, l.n, 4, 2, &p), 0);
	CU_ASSERT_EQUAL(p.worst, 2);
	place_release(&p);
	free(pn);
	nodes_release(&l);
	unlink(path);
	CU_ASSERT_EQUAL(nodes_load(path, &l, &e), -ENOENT);
	CU_ASSERT_STRING_EQUAL(e.file, path);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "good", test_good },
		{ "bad_lines", test_bad_lines },
		{ "load_and_place", test_load_and_place },
		{ NULL, NULL }
	};

	return unit_run("nodes", tests);
}
