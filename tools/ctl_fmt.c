/*
 * ctl_fmt.c - human-readable numbers and aligned tables for ckptctl.
 *
 * Everything here is presentation only: no I/O except tbl_print(), no
 * knowledge of the API.  Units are binary (KiB, MiB, ...) for sizes, because
 * staging and store budgets are configured that way; benchmark rates are
 * given in decimal GB/s, because that is how disks and fio report them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "ctl.h"
#include "ctl_fmt.h"

char *fmt_size(char *buf, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	if (bytes < 1024) {
		snprintf(buf, FMT_LEN, "%u B", (unsigned)bytes);
		return buf;
	}
	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, FMT_LEN, v < 100.0 ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

char *fmt_rate(char *buf, double bytes_per_s)
{
	size_t n;

	if (!(bytes_per_s >= 0.0) || bytes_per_s > 1.8e19)
		bytes_per_s = 0.0;
	fmt_size(buf, (uint64_t)bytes_per_s);
	n = strlen(buf);
	snprintf(buf + n, FMT_LEN - n, "/s");
	return buf;
}

char *fmt_dur(char *buf, uint64_t ns)
{
	uint64_t s = ns / 1000000000u;

	if (ns < 1000000000u)
		snprintf(buf, FMT_LEN, "%u ms", (unsigned)(ns / 1000000u));
	else if (s < 60)
		snprintf(buf, FMT_LEN, "%.1f s", (double)ns / 1e9);
	else if (s < 3600)
		snprintf(buf, FMT_LEN, "%um%02us", (unsigned)(s / 60),
			 (unsigned)(s % 60));
	else if (s < 86400)
		snprintf(buf, FMT_LEN, "%uh%02um", (unsigned)(s / 3600),
			 (unsigned)(s / 60 % 60));
	else
		snprintf(buf, FMT_LEN, "%ud%02uh", (unsigned)(s / 86400),
			 (unsigned)(s / 3600 % 24));
	return buf;
}

char *fmt_gbps(char *buf, uint64_t bytes, uint64_t ns)
{
	if (ns == 0)
		snprintf(buf, FMT_LEN, "-");
	else
		snprintf(buf, FMT_LEN, "%.2f GB/s", (double)bytes / (double)ns);
	return buf;
}

void tbl_init(struct tbl *t, int ncols, const char *const *heads,
	      const char *align)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->ncols = ncols > TBL_MAXCOLS ? TBL_MAXCOLS : ncols;
	for (i = 0; i < t->ncols; i++) {
		t->head[i] = heads[i];
		t->align[i] = align[i] == 'r' ? 'r' : 'l';
	}
}

int tbl_add(struct tbl *t, const char *const *cells)
{
	size_t base = t->nrows * (size_t)t->ncols;
	char **grown;
	int i;

	if (t->err)
		return t->err;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		grown = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*grown));
		if (!grown)
			goto out_nomem;
		t->cells = grown;
		t->cap = cap;
	}
	for (i = 0; i < t->ncols; i++) {
		t->cells[base + i] = strdup(cells[i] ? cells[i] : "-");
		if (!t->cells[base + i])
			goto out_free_row;
	}
	t->nrows++;
	return 0;

out_free_row:
	while (i-- > 0)
		free(t->cells[base + i]);
out_nomem:
	t->err = -ENOMEM;
	return t->err;
}

/* Print one row padded to width[], without trailing blanks. */
static void tbl_line(const struct tbl *t, FILE *f, const char *const *cells,
		     const int *width)
{
	char line[4096];
	size_t n = 0;
	int i, w;

	for (i = 0; i < t->ncols && n < sizeof(line); i++) {
		w = t->align[i] == 'r' ? width[i] : -width[i];
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%*s",
				      i ? "  " : "", w, cells[i]);
	}
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	while (n > 0 && line[n - 1] == ' ')
		n--;
	line[n] = '\0';
	fprintf(f, "%s\n", line);
}

int tbl_print(const struct tbl *t, FILE *f)
{
	int width[TBL_MAXCOLS];
	size_t r;
	int i;

	for (i = 0; i < t->ncols; i++)
		width[i] = (int)strlen(t->head[i]);
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			int n = (int)strlen(t->cells[r * t->ncols + i]);

			if (n > width[i])
				width[i] = n;
		}
	tbl_line(t, f, t->head, width);
	for (r = 0; r < t->nrows; r++)
		tbl_line(t, f, (const char *const *)&t->cells[r * t->ncols],
			 width);
	return t->err;
}

void tbl_release(struct tbl *t)
{
	size_t n = t->nrows * (size_t)t->ncols, i;

	for (i = 0; i < n; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* Parse "--timeout S" (seconds, fractions allowed) into milliseconds. */
int ctl_parse_timeout(const char *s, int *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0))
		return -EINVAL;
	*ms = v * 1000.0 >= (double)INT_MAX ? INT_MAX : (int)(v * 1000.0);
	return 0;
}
