/*
 * ctl_fmt.h - human-readable output for ckptctl: sizes, rates, durations and
 * plain aligned tables.
 *
 * The fmt_* functions write into a caller buffer (FMT_LEN bytes is always
 * enough) and return it, so they can be used inline as printf arguments.
 * Sizes use powers of 1024 ("1.5 GiB"); rates in bytes/s use the same units.
 *
 * struct tbl collects rows of strings and prints them with columns padded to
 * the widest cell.  It copies every cell, so callers may pass temporaries.
 * tbl_release() frees the copies; a tbl that failed to grow remembers the
 * error and tbl_print() reports it.
 */
#ifndef CKPT_CTL_FMT_H
#define CKPT_CTL_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FMT_LEN 32

/* "0 B", "512 B", "1.0 KiB", "12.3 MiB", ... */
char *fmt_size(char *buf, uint64_t bytes);
/* fmt_size() followed by "/s". */
char *fmt_rate(char *buf, double bytes_per_s);
/* A duration, compactly: "850 ms", "12.4 s", "3m12s", "2h05m", "3d04h". */
char *fmt_dur(char *buf, uint64_t ns);
/* Decimal GB/s with two decimals, for benchmark reports: "8.93 GB/s". */
char *fmt_gbps(char *buf, uint64_t bytes, uint64_t ns);
/* Seconds from nanoseconds. */
static inline double fmt_secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

#define TBL_MAXCOLS 12

struct tbl {
	int ncols;
	const char *head[TBL_MAXCOLS]; /* borrowed: string literals */
	char align[TBL_MAXCOLS];       /* 'l' or 'r' */
	char **cells;                  /* nrows * ncols owned copies */
	size_t nrows, cap;
	int err;                       /* first allocation failure, -ENOMEM */
};

/* heads: ncols column titles; align: ncols chars of 'l'/'r'. */
void tbl_init(struct tbl *t, int ncols, const char *const *heads,
	      const char *align);
/* Append a row of t->ncols strings (NULL prints as "-").  0 or -ENOMEM. */
int tbl_add(struct tbl *t, const char *const *cells);
/* Print the header and rows; 0, or t->err if a row was lost. */
int tbl_print(const struct tbl *t, FILE *f);
void tbl_release(struct tbl *t);

#endif
