/*
 * ctl_json.h - a tiny streaming JSON writer for ckptctl --json.
 *
 * The writer emits compact JSON to a stdio stream and inserts commas itself,
 * so callers only say what comes next: jw_obj(), jw_key(), a value, and so
 * on.  Strings are escaped per RFC 8259; bytes that are not valid UTF-8 are
 * written as U+FFFD so that the output always parses.  Non-finite doubles
 * are written as null.  Nesting deeper than JW_DEPTH is a caller bug and is
 * flattened silently rather than overflowing.  jw_done() ends the document
 * with a newline.  The writer owns nothing; the stream stays the caller's.
 */
#ifndef CKPT_CTL_JSON_H
#define CKPT_CTL_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JW_DEPTH 16

struct jw {
	FILE *f;
	int depth;                    /* open objects/arrays */
	unsigned char first[JW_DEPTH];/* 1: nothing written yet at this depth */
	int after_key;                /* a key was written; its value is next */
};

void jw_init(struct jw *w, FILE *f);
void jw_obj(struct jw *w);
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w);
void jw_arr_end(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
void jw_dbl(struct jw *w, double v);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);
/* End the document: a newline, and a flush of the stream. */
void jw_done(struct jw *w);

/* key + value in one call. */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_ku64(struct jw *w, const char *key, uint64_t v);
void jw_ki64(struct jw *w, const char *key, int64_t v);
void jw_kdbl(struct jw *w, const char *key, double v);
void jw_kbool(struct jw *w, const char *key, int v);

#endif
