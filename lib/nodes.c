/*
 * nodes.c - the cluster's node list (see nodes.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes.h"

#define NODES_FILE_MAX (4u << 20)    /* bytes of a node list, at most */

static int fail(struct conf_err *err, const char *file, int line,
		const char *msg, const char *what)
{
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	snprintf(err->msg, sizeof(err->msg), "%s%s%.80s%s", msg,
		 what ? " \"" : "", what ? what : "", what ? "\"" : "");
	return -EINVAL;
}

static int name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > PLACE_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static int host_ok(const char *s, size_t n, int v6)
{
	size_t i;

	if (!n || n > NODES_HOST_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (v6 ? !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			   (c >= 'A' && c <= 'F') || c == ':' || c == '.')
		       : !name_ok(&c, 1))
			return 0;
	}
	return 1;
}

/* "HOST:PORT" or "[V6]:PORT" of n bytes into e.  0 or -EINVAL. */
static int parse_addr(const char *s, size_t n, struct node_entry *e)
{
	const char *colon, *h = s;
	size_t hn;
	unsigned long port;
	char num[8], *end;
	int v6 = 0;

	if (n && s[0] == '[') {
		const char *rb = memchr(s, ']', n);

		if (!rb || rb + 1 >= s + n || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hn = (size_t)(rb - h);
		colon = rb + 1;
		v6 = 1;
	} else {
		colon = memchr(s, ':', n);
		if (!colon)
			return -EINVAL;
		hn = (size_t)(colon - s);
	}
	if (!host_ok(h, hn, v6))
		return -EINVAL;
	n -= (size_t)(colon + 1 - s);
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, colon + 1, n);
	num[n] = 0;
	if (num[0] < '1' || num[0] > '9')
		return -EINVAL;
	port = strtoul(num, &end, 10);
	if (*end || port > 65535)
		return -EINVAL;
	memcpy(e->host, h, hn);
	e->host[hn] = 0;
	e->port = (uint16_t)port;
	return 0;
}

/* Split a line into at most 4 blank-separated fields. */
static int fields(const char *s, size_t n, const char *f[4], size_t fl[4])
{
	int nf = 0;
	size_t i = 0, b;

	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i == n)
			break;
		b = i;
		while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			i++;
		if (nf == 4)
			return 5;
		f[nf] = s + b;
		fl[nf++] = i - b;
	}
	return nf;
}

static int dup_of(const struct node_list *l, const struct node_entry *e)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, e->name) ||
		    (!strcmp(l->v[i].host, e->host) && l->v[i].port == e->port))
			return 1;
	return 0;
}

int nodes_parse(const char *text, size_t len, const char *file,
		struct node_list *out, struct conf_err *err)
{
	struct node_list l = { NULL, 0 };
	uint32_t cap = 0;
	const char *p = text, *end = text + len, *nl, *hash;
	const char *f[4];
	size_t fl[4];
	int line = 0, nf, ret;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		struct node_entry e;
		size_t n;

		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		ret = fail(err, file, line, "NUL byte in the node list", NULL);
		if (memchr(p, '\0', n))
			goto out_free;
		hash = memchr(p, '#', n);
		nf = fields(p, hash ? (size_t)(hash - p) : n, f, fl);
		p += n + (nl != NULL);
		if (!nf)
			continue;
		memset(&e, 0, sizeof(e));
		ret = fail(err, file, line,
			   "want NAME HOST:PORT [DOMAIN] on each line", NULL);
		if (nf < 2 || nf > 3)
			goto out_free;
		ret = fail(err, file, line, "bad node name", NULL);
		if (!name_ok(f[0], fl[0]))
			goto out_free;
		memcpy(e.name, f[0], fl[0]);
		ret = fail(err, file, line, "bad HOST:PORT for node", e.name);
		if (parse_addr(f[1], fl[1], &e) < 0)
			goto out_free;
		ret = fail(err, file, line, "bad domain for node", e.name);
		if (nf == 3) {
			if (!name_ok(f[2], fl[2]))
				goto out_free;
			memcpy(e.domain, f[2], fl[2]);
		}
		ret = fail(err, file, line, "node or address given twice:",
			   e.name);
		if (dup_of(&l, &e))
			goto out_free;
		ret = fail(err, file, line, "too many nodes", NULL);
		if (l.n == NODES_MAX)
			goto out_free;
		if (l.n == cap) {
			struct node_entry *v;

			cap = cap ? cap * 2 : 16;
			v = realloc(l.v, cap * sizeof(*v));
			ret = -ENOMEM;
			if (!v)
				goto out_free;
			l.v = v;
		}
		l.v[l.n++] = e;
	}
	memset(err, 0, sizeof(*err));
	*out = l;
	return 0;

out_free:
	free(l.v);
	return ret;
}

int nodes_load(const char *path, struct node_list *out, struct conf_err *err)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!f) {
		ret = -errno;
		fail(err, path, 0, strerror(-ret), NULL);
		return ret;
	}
	ret = -ENOMEM;
	buf = malloc(NODES_FILE_MAX + 1);
	if (!buf)
		goto out_close;
	len = fread(buf, 1, NODES_FILE_MAX + 1, f);
	ret = -EIO;
	if (ferror(f)) {
		fail(err, path, 0, "cannot read the node list", NULL);
		goto out_free;
	}
	ret = fail(err, path, 0, "node list larger than 4 MiB", NULL);
	if (len > NODES_FILE_MAX)
		goto out_free;
	ret = nodes_parse(buf, len, path, out, err);
out_free:
	free(buf);
out_close:
	fclose(f);
	return ret;
}

void nodes_release(struct node_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

struct place_node *nodes_places(const struct node_list *l)
{
	struct place_node *v = calloc(l->n ? l->n : 1, sizeof(*v));
	uint32_t i;

	for (i = 0; v && i < l->n; i++) {
		memcpy(v[i].name, l->v[i].name, sizeof(v[i].name));
		memcpy(v[i].domain, l->v[i].domain, sizeof(v[i].domain));
	}
	return v;
}
