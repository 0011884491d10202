/*
 * hostlist.c - expansion of Slurm hostlist expressions ("gpu[001-004,017]").
 *
 * Two passes over each host of the list.  The first (host_scan) checks the
 * syntax and computes how many names the host expands to and how long the
 * longest is, with no allocation; only when the whole list is valid and
 * within bounds does the second (host_emit) write the names, recursing once
 * per bracket group.  Because the first pass bounds a name at
 * HOSTLIST_NAME_MAX bytes and every group adds at least one byte, the
 * recursion is at most that deep whatever the input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define NUM_DIGITS_MAX 9	/* so that HI - LO + 1 fits any size_t */

/* A byte that separates hosts outside brackets. */
static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A byte that may appear in a host's literal text. */
static bool is_lit(char c)
{
	unsigned char u = (unsigned char)c;

	return u > ' ' && u != 0x7f && c != ',' && c != '[' && c != ']';
}

static size_t num_digits(unsigned long v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * Parse an unsigned decimal of 1..NUM_DIGITS_MAX digits at *p; advance *p
 * past it and give its value and written width.  -EINVAL otherwise.
 */
static int parse_num(const char **p, unsigned long *val, size_t *width)
{
	const char *s = *p;
	unsigned long v = 0;
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9') {
		if (++n > NUM_DIGITS_MAX)
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[n - 1] - '0');
	}
	if (n == 0)
		return -EINVAL;
	*p = s + n;
	*val = v;
	*width = n;
	return 0;
}

/* One range "LO" or "LO-HI" of a bracket group. */
struct range {
	unsigned long lo, hi;
	size_t width;		/* digits LO was written with: the padding */
};

/* Parse the range at *p (inside a group), advancing *p past it. */
static int parse_range(const char **p, struct range *r)
{
	size_t hw;
	int ret;

	ret = parse_num(p, &r->lo, &r->width);
	if (ret)
		return ret;
	r->hi = r->lo;
	if (**p == '-') {
		(*p)++;
		ret = parse_num(p, &r->hi, &hw);
		if (ret)
			return ret;
	}
	return r->lo <= r->hi ? 0 : -EINVAL;
}

/* Longest printing of any value of r. */
static size_t range_len(const struct range *r)
{
	size_t d = num_digits(r->hi);

	return d > r->width ? d : r->width;
}

/*
 * Check the group whose '[' is at p[-1]; give the number of values it has
 * (at most max, else -E2BIG), its longest printing, and where it ends (just
 * past ']').
 */
static int group_scan(const char *p, size_t max, size_t *count, size_t *len,
		      const char **end)
{
	struct range r;
	size_t n = 0, l = 0;
	int ret;

	for (;;) {
		ret = parse_range(&p, &r);
		if (ret)
			return ret;
		if (r.hi - r.lo >= max || n + (r.hi - r.lo + 1) > max)
			return -E2BIG;
		n += r.hi - r.lo + 1;
		if (range_len(&r) > l)
			l = range_len(&r);
		if (*p == ']')
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	*count = n;
	*len = l;
	*end = p + 1;
	return 0;
}

/*
 * Check one host starting at p: literal text and groups up to a separator
 * or the end.  Give the number of names (at most max), and where it ends.
 */
static int host_scan(const char *p, size_t max, size_t *count,
		     const char **end)
{
	size_t n = 1, len = 0, gn, gl;
	int ret;

	while (*p && !is_sep(*p)) {
		if (*p == '[') {
			ret = group_scan(p + 1, max, &gn, &gl, &p);
			if (ret)
				return ret;
			if (n > max / gn)
				return -E2BIG;
			n *= gn;
			len += gl;
		} else if (is_lit(*p)) {
			len++;
			p++;
		} else {
			return -EINVAL;	/* ']' alone or a control byte */
		}
		if (len > HOSTLIST_NAME_MAX)
			return -ENAMETOOLONG;
	}
	*count = n;
	*end = p;
	return 0;
}

/* Skip separators. */
static const char *skip_sep(const char *p)
{
	while (*p && is_sep(*p))
		p++;
	return p;
}

int hostlist_count(const char *expr, size_t max, size_t *count)
{
	const char *p;
	size_t total = 0, n;
	int ret;

	if (!expr)
		return -EINVAL;
	for (p = skip_sep(expr); *p; p = skip_sep(p)) {
		ret = host_scan(p, max, &n, &p);
		if (ret)
			return ret;
		if (n > max - total)
			return -E2BIG;
		total += n;
	}
	*count = total;
	return 0;
}

/* Where host_emit() writes: the name so far and the output list. */
struct emit {
	char name[HOSTLIST_NAME_MAX + 1];
	struct hostlist *out;
};

static int emit_name(struct emit *e, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return -ENOMEM;
	memcpy(s, e->name, len);
	s[len] = '\0';
	e->out->hosts[e->out->n++] = s;
	return 0;
}

/*
 * Write every name of the (already checked) host at p, whose first len
 * bytes are already in e->name.  Recurses once per bracket group.
 */
static int host_emit(struct emit *e, const char *p, size_t len)
{
	const char *q, *after;
	struct range r;
	unsigned long v;
	int ret;

	for (; *p && !is_sep(*p) && *p != '['; p++)
		e->name[len++] = *p;
	if (*p != '[')
		return emit_name(e, len);
	after = strchr(p, ']') + 1;
	for (q = p + 1; q < after; q++) {	/* q at a range */
		ret = parse_range(&q, &r);
		if (ret)	/* cannot happen: host_scan checked it */
			return ret;
		for (v = r.lo; v <= r.hi; v++) {
			/* fits: host_scan bounded the whole name */
			int w = snprintf(e->name + len, sizeof(e->name) - len,
					 "%0*lu", (int)r.width, v);

			ret = host_emit(e, after, len + (size_t)w);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int hostlist_expand(const char *expr, size_t max, struct hostlist *out)
{
	struct emit *e = NULL;
	const char *p;
	size_t total;
	int ret;

	out->hosts = NULL;
	out->n = 0;
	ret = hostlist_count(expr, max, &total);
	if (ret || total == 0)
		return ret;
	out->hosts = calloc(total, sizeof(*out->hosts));
	e = malloc(sizeof(*e));
	if (!out->hosts || !e) {
		ret = -ENOMEM;
		goto out_release;
	}
	e->out = out;
	for (p = skip_sep(expr); *p; p = skip_sep(p)) {
		ret = host_emit(e, p, 0);
		if (ret)
			goto out_release;
		while (*p && !is_sep(*p))	/* to the host's end */
			p = *p == '[' ? strchr(p, ']') + 1 : p + 1;
	}
	free(e);
	return 0;

out_release:
	free(e);
	hostlist_release(out);
	return ret;
}

void hostlist_release(struct hostlist *hl)
{
	size_t i;

	for (i = 0; i < hl->n; i++)
		free(hl->hosts[i]);
	free(hl->hosts);
	hl->hosts = NULL;
	hl->n = 0;
}
