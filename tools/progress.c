/*
 * progress.c - the terminal progress bar of ckptctl wait, verify, restore.
 *
 * The line is composed in a buffer and written with one fputs so that it
 * never tears, then terminated with "\r" and an erase-to-end-of-line escape.
 * Its width follows the terminal (TIOCGWINSZ) so that it never wraps, which
 * would break the carriage-return redraw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "progress.h"

#define PROGRESS_PERIOD_NS 100000000u /* 10 redraws a second at most */

void progress_init(struct progress *p, const char *label, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->on = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
	snprintf(p->label, sizeof(p->label), "%s", label ? label : "");
	p->total = total;
	p->start_ns = ctl_now_ns();
}

void progress_label(struct progress *p, const char *label)
{
	snprintf(p->label, sizeof(p->label), "%s", label ? label : "");
}

void progress_total(struct progress *p, uint64_t total)
{
	p->total = total;
}

int progress_enabled(const struct progress *p)
{
	return p->on;
}

static int term_cols(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* Append a bar of width cells, filled in proportion to done/total. */
static size_t draw_bar(char *s, size_t cap, uint64_t done, uint64_t total,
		       int width)
{
	int fill = (int)((double)done / (double)total * width);
	size_t n = 0;
	int i;

	if (fill > width)
		fill = width;
	if (cap < (size_t)width + 4)
		return 0;
	s[n++] = '[';
	for (i = 0; i < width; i++)
		s[n++] = i < fill ? '#' : '.';
	s[n++] = ']';
	s[n++] = ' ';
	s[n] = '\0';
	return n;
}

/* snprintf at line + *n, keeping *n within the buffer. */
static void append(char *line, size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *line, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= cap - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(line + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = *n + (size_t)r < cap ? *n + (size_t)r : cap - 1;
}

void progress_update(struct progress *p, uint64_t done, const char *note)
{
	char line[512], a[FMT_LEN], b[FMT_LEN], r[FMT_LEN];
	uint64_t now = ctl_now_ns();
	double secs = fmt_secs(now - p->start_ns);
	int cols = term_cols();
	size_t n;

	if (!p->on || (p->drawn && now - p->last_ns < PROGRESS_PERIOD_NS))
		return;
	p->last_ns = now;

	n = 0;
	append(line, sizeof(line), &n, "%s ", p->label);
	if (p->total) {
		int pct = (int)((double)done * 100.0 / (double)p->total);

		n += draw_bar(line + n, sizeof(line) - n, done, p->total,
			      cols >= 100 ? 30 : 16);
		append(line, sizeof(line), &n, "%3d%%  %s / %s",
		       pct > 100 ? 100 : pct, fmt_size(a, done),
		       fmt_size(b, p->total));
	} else {
		append(line, sizeof(line), &n, "%s", fmt_size(a, done));
	}
	if (secs > 0.2 && !p->no_rate)
		append(line, sizeof(line), &n, "  %s",
		       fmt_rate(r, (double)done / secs));
	if (note && *note)
		append(line, sizeof(line), &n, "  %s", note);
	/* Never wrap: a wrapped line cannot be redrawn with "\r". */
	if (strlen(line) >= (size_t)cols)
		line[cols - 1] = '\0';
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	p->drawn = 1;
}

void progress_done(struct progress *p)
{
	if (!p->on || !p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = 0;
}
