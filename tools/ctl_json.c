/*
 * ctl_json.c - the streaming JSON writer behind ckptctl --json.
 *
 * State is one "first element" flag per nesting level plus whether a key
 * was just written; that is all it takes to place commas correctly.  String
 * escaping validates UTF-8 by hand (no locale involved) because job names
 * are ASCII but store paths and error texts need not be.
 */
#include <inttypes.h>
#include <math.h>

#include "ctl_json.h"
#include "names.h"

void jw_init(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = 1;
	w->after_key = 0;
}

/* Write the separator that must precede a new value or key. */
static void jw_sep(struct jw *w)
{
	int d = w->depth < JW_DEPTH ? w->depth : JW_DEPTH - 1;

	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (!w->first[d])
		fputc(',', w->f);
	w->first[d] = 0;
}

static void jw_open(struct jw *w, int c)
{
	jw_sep(w);
	fputc(c, w->f);
	w->depth++;
	if (w->depth < JW_DEPTH)
		w->first[w->depth] = 1;
}

static void jw_close(struct jw *w, int c)
{
	if (w->depth > 0)
		w->depth--;
	fputc(c, w->f);
}

void jw_obj(struct jw *w)
{
	jw_open(w, '{');
}

void jw_obj_end(struct jw *w)
{
	jw_close(w, '}');
}

void jw_arr(struct jw *w)
{
	jw_open(w, '[');
}

void jw_arr_end(struct jw *w)
{
	jw_close(w, ']');
}

static void jw_quote(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	while (*s) {
		switch (*s) {
		case '"':  fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\b': fputs("\\b", f); s++; continue;
		case '\f': fputs("\\f", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s);
			s++;
			continue;
		}
		n = name_utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	fputc('"', f);
}

void jw_key(struct jw *w, const char *key)
{
	jw_sep(w);
	jw_quote(w->f, key);
	fputc(':', w->f);
	w->after_key = 1;
}

void jw_str(struct jw *w, const char *s)
{
	jw_sep(w);
	jw_quote(w->f, s ? s : "");
}

void jw_u64(struct jw *w, uint64_t v)
{
	jw_sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	jw_sep(w);
	fprintf(w->f, "%" PRId64, v);
}

void jw_dbl(struct jw *w, double v)
{
	jw_sep(w);
	if (!isfinite(v))
		fputs("null", w->f);
	else
		fprintf(w->f, "%.9g", v);
}

void jw_bool(struct jw *w, int v)
{
	jw_sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	jw_sep(w);
	fputs("null", w->f);
}

void jw_done(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
	jw_init(w, w->f);
}

void jw_kstr(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_str(w, s);
}

void jw_ku64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_u64(w, v);
}

void jw_ki64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_i64(w, v);
}

void jw_kdbl(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	jw_dbl(w, v);
}

void jw_kbool(struct jw *w, const char *key, int v)
{
	jw_key(w, key);
	jw_bool(w, v);
}
