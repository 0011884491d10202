/*
 * progress.h - a one-line progress bar for long ckptctl operations.
 *
 * The bar is drawn on stderr, and only when both stdout and stderr are
 * terminals, so pipes, files and --json consumers never see it.  Updates
 * are throttled to about ten redraws a second; progress_done() erases the
 * line so that the result printed next starts on a clean line.  When it is
 * disabled every call is a cheap no-op.  It owns nothing.
 *
 *   [##########..........]  50%  1.2 GiB / 2.4 GiB  850 MiB/s  note
 *
 * With total 0 the bar and percentage are left out (unknown size).
 */
#ifndef CKPT_PROGRESS_H
#define CKPT_PROGRESS_H

#include <stdint.h>

struct progress {
	int on;             /* drawing enabled */
	int drawn;          /* something is on the line now */
	int no_rate;        /* 1: leave the rate out (set after init) */
	char label[40];
	uint64_t total;     /* bytes expected; 0 = unknown */
	uint64_t start_ns;  /* for the rate */
	uint64_t last_ns;   /* last redraw, for throttling */
};

void progress_init(struct progress *p, const char *label, uint64_t total);
/* Change the label shown at the start of the line. */
void progress_label(struct progress *p, const char *label);
/* Set the expected total when it becomes known later. */
void progress_total(struct progress *p, uint64_t total);
/* Redraw with done bytes and an optional short note (NULL: none). */
void progress_update(struct progress *p, uint64_t done, const char *note);
/* Erase the line. */
void progress_done(struct progress *p);
/* 1 if the bar is being drawn (stdout and stderr are terminals). */
int progress_enabled(const struct progress *p);

#endif
