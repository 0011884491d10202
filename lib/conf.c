/*
 * conf.c - ckptd's configuration, parsed with libinih into a struct conf.
 *
 * Every key is one row of conf_keys[]: section, name, type, bounds, default
 * and the offset of its field, in the manner of Redis's config.c.  Defaults,
 * file values and "-o key=value" overrides all go through conf_apply(), so a
 * key is validated the same way wherever its value comes from, and adding a
 * key is adding a row (and a field in conf.h).
 *
 * conf_load() parses a whole file into a copy of the caller's struct and
 * replaces the struct only when every line was good; the first error is
 * reported with its line number and the key it concerns.  We feed libinih
 * through our own line reader for three reasons: the reader counts lines, so
 * a handler error knows where it is (the packaged libinih does not pass line
 * numbers to handlers); it strips leading blanks, which turns off libinih's
 * indented continuation lines that would otherwise glue a mistyped indented
 * key onto the value above it; and it rejects a line too long for libinih's
 * fixed line buffer instead of letting libinih silently cut it in two.
 *
 * Most keys are strings, sizes, numbers, booleans or one of a list of words.
 * Two [drain] keys need more: shuffle is a number from a list (0, 2, 4),
 * and compress is "none", "zstd" or "zstd:LEVEL", kept as one int (0 for
 * none, else the level).  Numeric fields are uint64_t or uint32_t; the row
 * says which by the field's size, and the bounds keep a value in it.
 *
 * A list (CONF_LIST) is kept as a struct conf_list of fixed arrays, so a
 * struct conf still owns nothing.  conf_parse_list() splits on commas and
 * blanks and checks each item; conf_print() writes the items back joined by
 * ", ", which is why a list must fit one printed line to be accepted.
 *
 * conf_finish() runs after all values are in: it checks rules that involve
 * more than one key and fills paths derived from dir.  conf_print() writes
 * every key back as INI that conf_load() reads to the same struct.
 *
 * Nothing here keeps state between calls; the functions are thread-safe as
 * long as two threads do not write the same struct conf.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include <ini.h>

#include "conf.h"

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* How a value is spelled in the file and stored in struct conf. */
enum conf_type {
	CONF_STR,       /* char[size], NUL-terminated */
	CONF_SIZE,      /* uint64_t, "2G" */
	CONF_U32,       /* uint32_t, plain decimal */
	CONF_MS,        /* uint32_t milliseconds: "5000", "500ms", "5s" */
	CONF_BOOL,      /* int, 0 or 1 */
	CONF_ENUM,      /* char[size], one of choices[] */
	CONF_COMPRESS,  /* int: "none" 0, "zstd" 1, "zstd:N" N in min..max */
	CONF_LIST,      /* struct conf_list; min..max items */
};

struct conf_key {
	const char *section;
	const char *name;
	enum conf_type type;
	uint64_t min, max;              /* SIZE, U32, MS: inclusive bounds;
					 * COMPRESS: of the level; LIST: of
					 * the count (max <= CONF_LIST_MAX) */
	uint64_t align;                 /* SIZE: must be a multiple; 0 = any */
	const char *const *choices;     /* ENUM: NULL-terminated; U32: if
					 * set, the only values allowed */
	const char *def;                /* default, spelled as in a file */
	size_t off, size;               /* the field in struct conf */
};

#define CONF_FIELD(f) offsetof(struct conf, f), sizeof(((struct conf *)0)->f)

#define C_STR(sec, key, def) \
	{ sec, #key, CONF_STR, 0, 0, 0, NULL, def, CONF_FIELD(key) }
#define C_SIZE(sec, key, lo, hi, align, def) \
	{ sec, #key, CONF_SIZE, lo, hi, align, NULL, def, CONF_FIELD(key) }
#define C_U32(sec, key, lo, hi, def) \
	{ sec, #key, CONF_U32, lo, hi, 0, NULL, def, CONF_FIELD(key) }
#define C_BOOL(sec, key, def) \
	{ sec, #key, CONF_BOOL, 0, 1, 0, NULL, def, CONF_FIELD(key) }
#define C_ENUM(sec, key, choices, def) \
	{ sec, #key, CONF_ENUM, 0, 0, 0, choices, def, CONF_FIELD(key) }
/* A list key "x" of section "sec" is field sec_x. */
#define C_LIST(sec, key, lo, hi, def) \
	{ #sec, #key, CONF_LIST, lo, hi, 0, NULL, def, \
	  CONF_FIELD(sec##_##key) }

/* [drain] keys: key "x" is field drain_x. */
#define D_STR(key, def) \
	{ "drain", #key, CONF_STR, 0, 0, 0, NULL, def, CONF_FIELD(drain_##key) }
#define D_SIZE(key, lo, hi, align, def) \
	{ "drain", #key, CONF_SIZE, lo, hi, align, NULL, def, \
	  CONF_FIELD(drain_##key) }
#define D_U32(key, lo, hi, def) \
	{ "drain", #key, CONF_U32, lo, hi, 0, NULL, def, \
	  CONF_FIELD(drain_##key) }
#define D_U32_OF(key, choices, def) \
	{ "drain", #key, CONF_U32, 0, UINT32_MAX, 0, choices, def, \
	  CONF_FIELD(drain_##key) }
#define D_BOOL(key, def) \
	{ "drain", #key, CONF_BOOL, 0, 1, 0, NULL, def, \
	  CONF_FIELD(drain_##key) }
#define D_COMPRESS(key, lo, hi, def) \
	{ "drain", #key, CONF_COMPRESS, lo, hi, 0, NULL, def, \
	  CONF_FIELD(drain_##key) }

static const char *const conf_log_levels[] = {
	"err", "warning", "notice", "info", "debug", NULL
};
static const char *const conf_log_sinks[] = { "stderr", "syslog", NULL };
static const char *const conf_shuffles[] = { "0", "2", "4", NULL };

/* The level "zstd" alone stands for. */
#define CONF_ZSTD_LEVEL 1

/* Rows of one section stay together: conf_print() relies on it. */
static const struct conf_key conf_keys[] = {
	C_STR("ckptd", dir, "/var/lib/ckpt"),
	C_STR("ckptd", socket, ""),
	C_STR("ckptd", store, ""),
	C_SIZE("ckptd", staging, 16 * MiB, UINT64_MAX, 0, "2G"),
	C_SIZE("ckptd", staging_client, 4 * MiB, UINT64_MAX, 0, "256M"),
	C_SIZE("ckptd", staging_per_uid, 0, UINT64_MAX, 0, "0"),
	C_U32("ckptd", staging_wait, 0, 86400, "30"),
	C_U32("ckptd", max_conns_per_uid, 0, 1000000, "256"),
	C_SIZE("ckptd", capacity, 0, UINT64_MAX, 0, "0"),
	C_SIZE("ckptd", reserve, 0, UINT64_MAX, 0, "256M"),
	C_U32("ckptd", keep, 1, 100000, "3"),
	C_SIZE("ckptd", segment, 1 * MiB, 4 * GiB, 4 * KiB, "64M"),
	C_SIZE("ckptd", chunk, 64 * KiB, 256 * MiB, 4 * KiB, "4M"),
	C_U32("ckptd", queue_depth, 8, 4096, "128"),
	C_BOOL("ckptd", direct, "yes"),
	C_BOOL("ckptd", mlock, "yes"),
	C_ENUM("ckptd", log_level, conf_log_levels, "info"),
	C_ENUM("ckptd", log, conf_log_sinks, "stderr"),
	C_STR("ckptd", metrics, ""),
	C_U32("ckptd", straggler_factor, 0, 1000000, "4"),
	C_U32("ckptd", nice, 0, 19, "10"),

	D_STR(target, ""),
	D_SIZE(bandwidth, 0, UINT64_MAX, 0, "0"),
	D_U32(every, 1, UINT32_MAX, "1"),
	D_U32(keep, 0, UINT32_MAX, "0"),
	D_COMPRESS(compress, 1, 19, "none"),
	D_U32_OF(shuffle, conf_shuffles, "0"),
	D_BOOL(incremental, "no"),
	D_U32(threads, 1, 64, "2"),
	D_SIZE(chunk, 64 * KiB, 64 * MiB, 4 * KiB, "4M"),
	D_U32(retry_max, 1, UINT32_MAX, "60"),
	D_U32(deadline, 0, UINT32_MAX, "0"),

	{ "cluster", "node", CONF_STR, 0, 0, 0, NULL, "",
	  CONF_FIELD(cluster_node) },
	C_LIST(cluster, nodes, 0, CONF_LIST_MAX, ""),
	{ "cluster", "ec", CONF_STR, 0, 0, 0, NULL, "4+2",
	  CONF_FIELD(cluster_ec) },
	{ "cluster", "key", CONF_STR, 0, 0, 0, NULL, "",
	  CONF_FIELD(cluster_key) },
	{ "cluster", "bandwidth", CONF_SIZE, 0, UINT64_MAX, 0, NULL, "0",
	  CONF_FIELD(cluster_bandwidth) },
	{ "cluster", "port", CONF_U32, 1, 65535, 0, NULL, "7470",
	  CONF_FIELD(cluster_port) },
	{ "cluster", "heartbeat_timeout", CONF_MS, 500, 3600000, 0, NULL,
	  "5000", CONF_FIELD(cluster_heartbeat_timeout) },
};

#define CONF_NKEYS ARRAY_SIZE(conf_keys)

/* Longest value quoted back in an error message. */
#define CONF_QUOTE_MAX 64

/* The longest line libinih reads (its INI_MAX_LINE, 200, less the NUL). */
#define CONF_LINE_MAX 199

/* Bytes of an item besides [A-Za-z0-9]: enough for host names, host:port and
 * [v6]:port, and nothing INI or the list syntax gives a meaning to. */
#define CONF_ITEM_PUNCT "._:@+/[]-"

static const struct {
	const char *name;
	int value;
} conf_bools[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 },
	{ "on", 1 },  { "off", 0 }, { "1", 1 },   { "0", 0 },
};

/* State of one conf_load(), shared by the line reader and the handler. */
struct conf_parse {
	struct conf tmp;                /* the copy being filled */
	struct conf_err *err;
	FILE *f;
	char *line;                     /* getline() buffer */
	size_t cap;
	int lineno;                     /* line last handed to libinih */
	int err_line;                   /* line of the error recorded, or 0 */
	int read_err;                   /* errno from a failed read */
	int seen[CONF_NKEYS];           /* line each key was set on */
};

static void conf_err_reset(struct conf_err *err, const char *file)
{
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
}

static void conf_err_vset(struct conf_err *err, int line, const char *fmt,
			  va_list ap)
{
	int n = 0;

	err->line = line;
	if (line > 0)
		n = snprintf(err->msg, sizeof(err->msg), "line %d: ", line);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
}

static __attribute__((format(printf, 3, 4)))
void conf_err_set(struct conf_err *err, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_err_vset(err, line, fmt, ap);
	va_end(ap);
}

/* Record an error on the current line unless an earlier one is recorded. */
static __attribute__((format(printf, 2, 3)))
void conf_fail(struct conf_parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err_line)
		return;
	p->err_line = p->lineno;
	va_start(ap, fmt);
	conf_err_vset(p->err, p->lineno, fmt, ap);
	va_end(ap);
}

/* "0", "4096", "2G": the shortest exact spelling conf_parse_size() reads. */
static void conf_format_size(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "TGMK";
	uint64_t unit = 1ULL << 40;
	int i;

	for (i = 0; v && suffix[i]; i++, unit >>= 10) {
		if (v % unit == 0) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v / unit), suffix[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

int conf_parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "KMGT";
	const char *p = s, *sfx;
	uint64_t v = 0;
	unsigned d, shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p) {
		sfx = strchr(suffixes, toupper((unsigned char)*p));
		if (!sfx || p[1])
			return -EINVAL;
		shift = 10 * (unsigned)(sfx - suffixes + 1);
	}
	if (v > UINT64_MAX >> shift)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* Plain decimal into *out; -EINVAL or -ERANGE as conf_parse_size(). */
static int conf_parse_u64(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || s[n])
		return -EINVAL;
	return conf_parse_size(s, out);
}

/* A duration: digits, then nothing or "ms" (milliseconds), "s" or "m".
 * 0, -EINVAL or -ERANGE. */
static int conf_parse_ms(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789");
	uint64_t v = 0, mul;
	size_t i;

	if (n == 0 || n > 12)
		return n ? -ERANGE : -EINVAL;
	if (!s[n] || !strcmp(s + n, "ms"))
		mul = 1;
	else if (!strcmp(s + n, "s"))
		mul = 1000;
	else if (!strcmp(s + n, "m"))
		mul = 60000;
	else
		return -EINVAL;
	for (i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	*out = v * mul;     /* 12 digits times 60000: no wrap */
	return 0;
}

/* Spell a bound the way the key's values are spelled. */
static void conf_format_bound(const struct conf_key *k, uint64_t v, char *buf,
			      size_t len)
{
	if (k->type == CONF_SIZE)
		conf_format_size(v, buf, len);
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)v,
			 k->type == CONF_MS ? " ms" : "");
}

/* Check a number against k's bounds and alignment. */
static int conf_check_range(const struct conf_key *k, const char *value,
			    uint64_t v, char *msg, size_t len)
{
	char lim[32];

	if (v < k->min) {
		conf_format_bound(k, k->min, lim, sizeof(lim));
		snprintf(msg, len, "%s: '%.*s' is below the minimum %s",
			 k->name, CONF_QUOTE_MAX, value, lim);
		return -EINVAL;
	}
	if (v > k->max) {
		conf_format_bound(k, k->max, lim, sizeof(lim));
		snprintf(msg, len, "%s: '%.*s' is above the maximum %s",
			 k->name, CONF_QUOTE_MAX, value, lim);
		return -EINVAL;
	}
	if (k->align && v % k->align) {
		snprintf(msg, len, "%s: '%.*s' is not a multiple of %llu",
			 k->name, CONF_QUOTE_MAX, value,
			 (unsigned long long)k->align);
		return -EINVAL;
	}
	return 0;
}

/* Parse a SIZE, U32 or MS value into *v and check its range. */
static int conf_parse_number(const struct conf_key *k, const char *value,
			     uint64_t *v, char *msg, size_t len)
{
	const char *what = k->type == CONF_SIZE ? "a size" :
			   k->type == CONF_MS ? "a time (5000, 500ms, 5s)" :
			   "a number";
	int ret;

	if (k->type == CONF_SIZE)
		ret = conf_parse_size(value, v);
	else if (k->type == CONF_MS)
		ret = conf_parse_ms(value, v);
	else
		ret = conf_parse_u64(value, v);
	if (ret == -ERANGE) {
		snprintf(msg, len, "%s: '%.*s' is too large", k->name,
			 CONF_QUOTE_MAX, value);
		return -EINVAL;
	}
	if (ret < 0) {
		snprintf(msg, len, "%s: '%.*s' is not %s", k->name,
			 CONF_QUOTE_MAX, value, what);
		return -EINVAL;
	}
	return conf_check_range(k, value, *v, msg, len);
}

/*
 * A string must fit its field and survive a trip through conf_print() and
 * libinih: no control characters, and no ';' after a blank, which libinih
 * takes as the start of a comment.
 */
static int conf_check_str(const struct conf_key *k, const char *value,
			  char *msg, size_t len)
{
	const char *s;

	if (strlen(value) >= k->size) {
		snprintf(msg, len, "%s: value is longer than %zu bytes",
			 k->name, k->size - 1);
		return -EINVAL;
	}
	for (s = value; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			snprintf(msg, len, "%s: value contains a control character",
				 k->name);
			return -EINVAL;
		}
		if (*s == ';' && s > value && (s[-1] == ' ' || s[-1] == '\t')) {
			snprintf(msg, len, "%s: value contains ' ;', which starts a comment",
				 k->name);
			return -EINVAL;
		}
	}
	return 0;
}

/* The canonical spelling of value among k's choices, or NULL. */
static const char *conf_find_choice(const struct conf_key *k,
				    const char *value)
{
	const char *const *c;

	for (c = k->choices; *c; c++)
		if (!strcasecmp(value, *c))
			return *c;
	return NULL;
}

static void conf_list_choices(const struct conf_key *k, char *buf, size_t len)
{
	const char *const *c;
	size_t off = 0;

	buf[0] = '\0';
	for (c = k->choices; *c && off < len; c++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					c == k->choices ? "" : ", ", *c);
}

static int conf_parse_bool(const struct conf_key *k, const char *value,
			   int *out, char *msg, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(conf_bools); i++) {
		if (!strcasecmp(value, conf_bools[i].name)) {
			*out = conf_bools[i].value;
			return 0;
		}
	}
	snprintf(msg, len, "%s: '%.*s' is not a boolean (yes/no/true/false/on/off/1/0)",
		 k->name, CONF_QUOTE_MAX, value);
	return -EINVAL;
}

/* A number that must be one of k->choices, in plain decimal. */
static int conf_parse_listed(const struct conf_key *k, const char *value,
			     uint64_t *v, char *msg, size_t len)
{
	const char *const *c;
	char list[128];

	if (conf_parse_u64(value, v) == 0) {
		for (c = k->choices; *c; c++)
			if (*v == strtoull(*c, NULL, 10))
				return 0;
	}
	conf_list_choices(k, list, sizeof(list));
	snprintf(msg, len, "%s: '%.*s' is not one of %s", k->name,
		 CONF_QUOTE_MAX, value, list);
	return -EINVAL;
}

/* "none" -> 0, "zstd" -> CONF_ZSTD_LEVEL, "zstd:N" -> N within k's bounds;
 * any case. */
static int conf_parse_compress(const struct conf_key *k, const char *value,
			       int *out, char *msg, size_t len)
{
	uint64_t level;

	if (!strcasecmp(value, "none")) {
		*out = 0;
		return 0;
	}
	if (!strcasecmp(value, "zstd")) {
		*out = CONF_ZSTD_LEVEL;
		return 0;
	}
	if (strncasecmp(value, "zstd:", 5) != 0) {
		snprintf(msg, len, "%s: '%.*s' is not none, zstd or zstd:LEVEL",
			 k->name, CONF_QUOTE_MAX, value);
		return -EINVAL;
	}
	if (conf_parse_u64(value + 5, &level) < 0 || level < k->min ||
	    level > k->max) {
		snprintf(msg, len, "%s: '%.*s': the zstd level must be %llu to %llu",
			 k->name, CONF_QUOTE_MAX, value,
			 (unsigned long long)k->min,
			 (unsigned long long)k->max);
		return -EINVAL;
	}
	*out = (int)level;
	return 0;
}

/* The item at s ends before the next blank, ',' or NUL; 0 or -EINVAL. */
static int conf_list_item(const struct conf_key *k, const char *s, size_t *n,
			  char *msg, size_t len)
{
	size_t i;

	*n = strcspn(s, " \t,");
	for (i = 0; i < *n; i++) {
		if (!isalnum((unsigned char)s[i]) &&
		    !strchr(CONF_ITEM_PUNCT, s[i])) {
			snprintf(msg, len, "%s: item '%.*s' holds '%c'; items are letters, digits and %s",
				 k->name, (int)(*n < CONF_QUOTE_MAX ? *n : CONF_QUOTE_MAX),
				 s, isprint((unsigned char)s[i]) ? s[i] : '?',
				 CONF_ITEM_PUNCT);
			return -EINVAL;
		}
	}
	if (*n >= CONF_ITEM_MAX) {
		snprintf(msg, len, "%s: item '%.*s...' is longer than %d bytes",
			 k->name, 16, s, CONF_ITEM_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/* Append the n-byte item at s to l unless it is there already. */
static int conf_list_add(const struct conf_key *k, struct conf_list *l,
			 const char *s, size_t n, char *msg, size_t len)
{
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		if (strlen(l->item[i]) == n && !memcmp(l->item[i], s, n)) {
			snprintf(msg, len, "%s: item '%.*s' is listed twice",
				 k->name, (int)n, s);
			return -EINVAL;
		}
	}
	if (l->n >= k->max) {
		snprintf(msg, len, "%s: more than %llu items", k->name,
			 (unsigned long long)k->max);
		return -EINVAL;
	}
	memcpy(l->item[l->n++], s, n);
	return 0;
}

/* Bytes of "a, b, c", the spelling conf_print() writes. */
static size_t conf_list_width(const struct conf_list *l)
{
	size_t w = 0;
	uint32_t i;

	for (i = 0; i < l->n; i++)
		w += strlen(l->item[i]) + (i ? 2 : 0);
	return w;
}

/*
 * Parse "a, b c" into *out (zeroed first): items separated by blanks and at
 * most one comma; "" is the empty list.  Then check the count against k's
 * bounds and that conf_print() can write the list on one line.
 */
static int conf_parse_list(const struct conf_key *k, const char *value,
			   struct conf_list *out, char *msg, size_t len)
{
	const char *p = value + strspn(value, " \t");
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	while (*p) {
		if (*p == ',') {
			snprintf(msg, len, "%s: empty item in '%.*s'", k->name,
				 CONF_QUOTE_MAX, value);
			return -EINVAL;
		}
		ret = conf_list_item(k, p, &n, msg, len);
		if (ret == 0)
			ret = conf_list_add(k, out, p, n, msg, len);
		if (ret < 0)
			return ret;
		p += n;
		p += strspn(p, " \t");
		if (*p != ',')
			continue;
		p += 1 + strspn(p + 1, " \t");
		if (!*p) {
			snprintf(msg, len, "%s: '%.*s' ends with ','", k->name,
				 CONF_QUOTE_MAX, value);
			return -EINVAL;
		}
	}
	if (out->n < k->min) {
		snprintf(msg, len, "%s: fewer than %llu items", k->name,
			 (unsigned long long)k->min);
		return -EINVAL;
	}
	if (strlen(k->name) + 3 + conf_list_width(out) > CONF_LINE_MAX) {
		snprintf(msg, len, "%s: the list is longer than %zu characters once printed as 'a, b'",
			 k->name, CONF_LINE_MAX - 3 - strlen(k->name));
		return -EINVAL;
	}
	return 0;
}

/* Numeric fields are uint32_t or uint64_t, as the row's size says. */
static void conf_store_num(char *field, size_t size, uint64_t v)
{
	if (size == sizeof(uint32_t))
		*(uint32_t *)field = (uint32_t)v;
	else
		*(uint64_t *)field = v;
}

static uint64_t conf_load_num(const char *field, size_t size)
{
	if (size == sizeof(uint32_t))
		return *(const uint32_t *)field;
	return *(const uint64_t *)field;
}

/* Store a string in a fixed field, zeroing the rest so structs compare. */
static void conf_store_str(struct conf *c, const struct conf_key *k,
			   const char *s)
{
	char *field = (char *)c + k->off;

	memset(field, 0, k->size);
	memcpy(field, s, strlen(s) + 1);
}

/*
 * Validate value for key k and store it in *c.  On error *c is untouched and
 * msg names the key and says what is wrong.
 */
static int conf_apply(struct conf *c, const struct conf_key *k,
		      const char *value, char *msg, size_t len)
{
	char *field = (char *)c + k->off;
	struct conf_list l;
	const char *choice;
	char list[128];
	uint64_t v;
	int b, ret;

	switch (k->type) {
	case CONF_STR:
		ret = conf_check_str(k, value, msg, len);
		if (ret < 0)
			return ret;
		conf_store_str(c, k, value);
		return 0;
	case CONF_SIZE:
	case CONF_U32:
	case CONF_MS:
		if (k->choices)
			ret = conf_parse_listed(k, value, &v, msg, len);
		else
			ret = conf_parse_number(k, value, &v, msg, len);
		if (ret < 0)
			return ret;
		conf_store_num(field, k->size, v);
		return 0;
	case CONF_BOOL:
		ret = conf_parse_bool(k, value, &b, msg, len);
		if (ret < 0)
			return ret;
		*(int *)field = b;
		return 0;
	case CONF_ENUM:
		choice = conf_find_choice(k, value);
		if (!choice) {
			conf_list_choices(k, list, sizeof(list));
			snprintf(msg, len, "%s: '%.*s' is not one of %s",
				 k->name, CONF_QUOTE_MAX, value, list);
			return -EINVAL;
		}
		conf_store_str(c, k, choice);
		return 0;
	case CONF_COMPRESS:
		ret = conf_parse_compress(k, value, &b, msg, len);
		if (ret < 0)
			return ret;
		*(int *)field = b;
		return 0;
	case CONF_LIST:
		ret = conf_parse_list(k, value, &l, msg, len);
		if (ret < 0)
			return ret;
		memcpy(field, &l, sizeof(l));
		return 0;
	}
	snprintf(msg, len, "%s: bad key type", k->name);
	return -EINVAL;
}

static const struct conf_key *conf_find_key(const char *section,
					    const char *name)
{
	size_t i;

	for (i = 0; i < CONF_NKEYS; i++)
		if (!strcmp(conf_keys[i].section, section) &&
		    !strcmp(conf_keys[i].name, name))
			return &conf_keys[i];
	return NULL;
}

static int conf_section_known(const char *section)
{
	size_t i;

	for (i = 0; i < CONF_NKEYS; i++)
		if (!strcmp(conf_keys[i].section, section))
			return 1;
	return 0;
}

/* Explain why section.name is not a key into msg. */
static void conf_unknown(const char *section, const char *name, char *msg,
			 size_t len)
{
	if (!*section)
		snprintf(msg, len, "%s: key outside any section (put it under [ckptd])",
			 name);
	else if (!conf_section_known(section))
		snprintf(msg, len, "unknown section [%.*s]", CONF_QUOTE_MAX,
			 section);
	else
		snprintf(msg, len, "%.*s: unknown key in [%s]", CONF_QUOTE_MAX,
			 name, section);
}

void conf_defaults(struct conf *c)
{
	char msg[sizeof(((struct conf_err *)0)->msg)];
	size_t i;

	memset(c, 0, sizeof(*c));
	/* The defaults are valid by construction; test_conf checks them. */
	for (i = 0; i < CONF_NKEYS; i++)
		conf_apply(c, &conf_keys[i], conf_keys[i].def, msg,
			   sizeof(msg));
}

/*
 * libinih line reader: one line per call, so p->lineno is the line whose
 * key the handler is looking at.  Leading blanks are dropped so that libinih
 * never treats a line as the continuation of the previous value.
 */
static char *conf_reader(char *str, int num, void *stream)
{
	struct conf_parse *p = stream;
	ssize_t n;
	char *s;

	n = getline(&p->line, &p->cap, p->f);
	if (n < 0) {
		/* Not end of file: a read error or getline()'s ENOMEM. */
		if (!feof(p->f))
			p->read_err = errno ? errno : EIO;
		return NULL;
	}
	p->lineno++;
	while (n > 0 && (p->line[n - 1] == '\n' || p->line[n - 1] == '\r'))
		p->line[--n] = '\0';
	s = p->line + strspn(p->line, " \t");
	if (memchr(p->line, '\0', n)) {
		conf_fail(p, "line holds a NUL byte");
		s = "";
	} else if (strlen(s) >= (size_t)num) {
		conf_fail(p, "line is longer than %d characters", num - 1);
		s = "";
	}
	memcpy(str, s, strlen(s) + 1);
	return str;
}

/* libinih handler: 1 to go on, 0 to mark the line as an error. */
static int conf_handler(void *user, const char *section, const char *name,
			const char *value)
{
	struct conf_parse *p = user;
	const struct conf_key *k = conf_find_key(section, name);
	char msg[sizeof(p->err->msg)];
	size_t idx;

	if (!k) {
		conf_unknown(section, name, msg, sizeof(msg));
		conf_fail(p, "%s", msg);
		return 0;
	}
	idx = (size_t)(k - conf_keys);
	if (p->seen[idx]) {
		conf_fail(p, "%s: set twice (first on line %d)", name,
			  p->seen[idx]);
		return 0;
	}
	p->seen[idx] = p->lineno;
	if (conf_apply(&p->tmp, k, value, msg, sizeof(msg)) < 0) {
		conf_fail(p, "%s", msg);
		return 0;
	}
	return 1;
}

/* Fill err for a failed open or read; strerror() is not thread-safe. */
static void conf_err_errno(struct conf_err *err, const char *what, int e)
{
	char buf[128];

	conf_err_set(err, 0, "%s: %s", what, strerror_r(e, buf, sizeof(buf)));
}

int conf_load(struct conf *c, const char *path, struct conf_err *err)
{
	struct conf_err dummy;
	struct conf_parse *p;
	int ret;

	if (!err)
		err = &dummy;
	conf_err_reset(err, path);

	p = calloc(1, sizeof(*p));
	if (!p) {
		conf_err_set(err, 0, "out of memory");
		return -ENOMEM;
	}
	p->tmp = *c;
	p->err = err;

	p->f = fopen(path, "re");
	if (!p->f) {
		ret = -errno;
		conf_err_errno(err, "cannot open", -ret);
		goto out_free_parse;
	}

	ret = ini_parse_stream(conf_reader, p, conf_handler, p);
	if (p->read_err) {
		ret = -p->read_err;
		conf_err_errno(err, "read error", -ret);
		goto out_close_file;
	}
	if (ret == -2) {
		ret = -ENOMEM;
		conf_err_set(err, 0, "out of memory");
		goto out_close_file;
	}
	/* libinih's own syntax errors have no handler call to report them. */
	if (ret > 0 && (!p->err_line || ret < p->err_line)) {
		p->err_line = ret;
		conf_err_set(err, ret, "syntax error: expected '[section]' or 'key = value'");
	}
	if (p->err_line) {
		ret = -EINVAL;
		goto out_close_file;
	}

	*c = p->tmp;
	ret = 0;
out_close_file:
	fclose(p->f);
out_free_parse:
	free(p->line);
	free(p);
	return ret;
}

/* Copy s[0..len) without surrounding blanks into buf of size bufsz. */
static int conf_trim_copy(char *buf, size_t bufsz, const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len >= bufsz)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

int conf_set(struct conf *c, const char *assignment, struct conf_err *err)
{
	char lhs[128], value[CONF_PATH_MAX];
	const char *eq, *section = "ckptd", *name;
	const struct conf_key *k;
	struct conf_err dummy;
	char *dot;

	if (!err)
		err = &dummy;
	conf_err_reset(err, NULL);

	eq = strchr(assignment, '=');
	if (!eq || conf_trim_copy(lhs, sizeof(lhs), assignment,
				  (size_t)(eq - assignment)) < 0 || !lhs[0]) {
		conf_err_set(err, 0, "'%.*s': expected key=value or section.key=value",
			     CONF_QUOTE_MAX, assignment);
		return -EINVAL;
	}
	if (conf_trim_copy(value, sizeof(value), eq + 1, strlen(eq + 1)) < 0) {
		conf_err_set(err, 0, "%s: value is longer than %d bytes", lhs,
			     CONF_PATH_MAX - 1);
		return -EINVAL;
	}

	name = lhs;
	dot = strchr(lhs, '.');
	if (dot) {
		*dot = '\0';
		section = lhs;
		name = dot + 1;
	}
	k = conf_find_key(section, name);
	if (!k) {
		conf_unknown(section, name, err->msg, sizeof(err->msg));
		return -EINVAL;
	}
	return conf_apply(c, k, value, err->msg, sizeof(err->msg));
}

/* out = dir + "/" + name, without doubling a trailing slash of dir. */
static int conf_join(char *out, size_t len, const char *dir, const char *name)
{
	size_t n = strlen(dir);
	int ret;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	ret = snprintf(out, len, "%.*s%s%s", (int)n, dir,
		       dir[n - 1] == '/' ? "" : "/", name);
	return ret < 0 || (size_t)ret >= len ? -ENAMETOOLONG : 0;
}

int conf_parse_ec(const char *s, uint32_t *k, uint32_t *m)
{
	unsigned long a, b;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	a = strtoul(s, &end, 10);
	if (*end != '+' || !isdigit((unsigned char)end[1]))
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (*end || a < 1 || b < 1 || a + b > 32)
		return -EINVAL;
	*k = (uint32_t)a;
	*m = (uint32_t)b;
	return 0;
}

/* Fill an empty path key with dir/name. */
static int conf_derive(struct conf *c, char *field, const char *key,
		       const char *name, struct conf_err *err)
{
	char path[CONF_PATH_MAX];

	if (field[0])
		return 0;
	if (conf_join(path, sizeof(path), c->dir, name) < 0) {
		conf_err_set(err, 0, "%s: '%s/%s' is longer than %d bytes", key,
			     "<dir>", name, CONF_PATH_MAX - 1);
		return -EINVAL;
	}
	memset(field, 0, CONF_PATH_MAX);
	memcpy(field, path, strlen(path) + 1);
	return 0;
}

/* "HOST:PORT": a non-empty host of address characters, a port 0..65535.
 * (ckptd resolves the host itself, as an IPv4 address.) */
static bool conf_hostport_ok(const char *s)
{
	const char *colon = strrchr(s, ':');
	const char *p;
	unsigned long port = 0;

	if (!colon || colon == s || !colon[1] || strlen(colon + 1) > 5)
		return false;
	for (p = s; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
			return false;
	for (p = colon + 1; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	return port <= 65535;
}

int conf_finish(struct conf *c, struct conf_err *err)
{
	const size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	char a[32], b[32];
	struct conf_err dummy;
	struct conf tmp = *c;

	if (!err)
		err = &dummy;
	conf_err_reset(err, NULL);

	if (!tmp.dir[0]) {
		conf_err_set(err, 0, "dir: must not be empty");
		return -EINVAL;
	}
	if (tmp.staging_client > tmp.staging) {
		conf_format_size(tmp.staging_client, a, sizeof(a));
		conf_format_size(tmp.staging, b, sizeof(b));
		conf_err_set(err, 0, "staging_client: %s is larger than staging (%s)",
			     a, b);
		return -EINVAL;
	}
	if (tmp.staging_per_uid &&
	    (tmp.staging_per_uid < 4 * MiB || tmp.staging_per_uid > tmp.staging)) {
		conf_format_size(tmp.staging_per_uid, a, sizeof(a));
		conf_format_size(tmp.staging, b, sizeof(b));
		conf_err_set(err, 0, "staging_per_uid: %s must be 0 (half of staging) or between 4M and staging (%s)",
			     a, b);
		return -EINVAL;
	}
	if (tmp.segment < tmp.chunk + 4 * KiB) {
		conf_format_size(tmp.segment, a, sizeof(a));
		conf_format_size(tmp.chunk, b, sizeof(b));
		conf_err_set(err, 0, "segment: %s must be at least chunk (%s) + 4K",
			     a, b);
		return -EINVAL;
	}
	if (tmp.drain_shuffle && !tmp.drain_compress) {
		conf_err_set(err, 0, "shuffle: %u needs compress = zstd (the byte shuffle only prepares chunks for zstd)",
			     tmp.drain_shuffle);
		return -EINVAL;
	}
	if (tmp.metrics[0] && !conf_hostport_ok(tmp.metrics)) {
		conf_err_set(err, 0, "metrics: '%.*s' is not HOST:PORT (e.g. 127.0.0.1:9464; \"\" turns it off)",
			     CONF_QUOTE_MAX, tmp.metrics);
		return -EINVAL;
	}
	if (conf_parse_ec(tmp.cluster_ec, &tmp.cluster_k, &tmp.cluster_m) < 0) {
		conf_err_set(err, 0, "ec: '%.*s' is not K+M with K, M >= 1 and K+M <= 32 (e.g. 4+2)",
			     CONF_QUOTE_MAX, tmp.cluster_ec);
		return -EINVAL;
	}
	if (tmp.cluster_nodes.n && !tmp.cluster_key[0]) {
		conf_err_set(err, 0, "key: a cluster (nodes set) needs the shared secret's file");
		return -EINVAL;
	}
	if (conf_derive(&tmp, tmp.socket, "socket", "ckptd.sock", err) < 0 ||
	    conf_derive(&tmp, tmp.store, "store", "store", err) < 0)
		return -EINVAL;
	if (strlen(tmp.socket) > sun_max) {
		conf_err_set(err, 0, "socket: '%.*s...' is longer than %zu bytes, the limit for a unix socket path",
			     CONF_QUOTE_MAX, tmp.socket, sun_max);
		return -EINVAL;
	}

	*c = tmp;
	return 0;
}

/* "key = a, b, c", or "key =" for the empty list. */
static void conf_print_list(const struct conf_key *k,
			    const struct conf_list *l, FILE *out)
{
	uint32_t i;

	fprintf(out, "%s =", k->name);
	for (i = 0; i < l->n; i++)
		fprintf(out, "%s%s", i ? ", " : " ", l->item[i]);
	fputc('\n', out);
}

/* One "key = value" line in the spelling conf_apply() reads back. */
static void conf_print_key(const struct conf *c, const struct conf_key *k,
			   FILE *out)
{
	const char *field = (const char *)c + k->off;
	char buf[32];

	switch (k->type) {
	case CONF_STR:
	case CONF_ENUM:
		/* A value that loaded fits its line; printed with the blanks
		 * around '=' it might not (libinih reads at most 199), and a
		 * leading ';' or '#' after a blank would start a comment. */
		if (strlen(k->name) + 3 + strlen(field) > CONF_LINE_MAX ||
		    field[0] == ';' || field[0] == '#')
			fprintf(out, "%s=%s\n", k->name, field);
		else
			fprintf(out, "%s =%s%s\n", k->name, field[0] ? " " : "",
				field);
		return;
	case CONF_SIZE:
		conf_format_size(conf_load_num(field, k->size), buf,
				 sizeof(buf));
		fprintf(out, "%s = %s\n", k->name, buf);
		return;
	case CONF_U32:
	case CONF_MS:
		fprintf(out, "%s = %llu\n", k->name,
			(unsigned long long)conf_load_num(field, k->size));
		return;
	case CONF_BOOL:
		fprintf(out, "%s = %s\n", k->name,
			*(const int *)field ? "yes" : "no");
		return;
	case CONF_COMPRESS:
		if (*(const int *)field == 0)
			fprintf(out, "%s = none\n", k->name);
		else if (*(const int *)field == CONF_ZSTD_LEVEL)
			fprintf(out, "%s = zstd\n", k->name);
		else
			fprintf(out, "%s = zstd:%d\n", k->name,
				*(const int *)field);
		return;
	case CONF_LIST:
		conf_print_list(k, (const struct conf_list *)field, out);
		return;
	}
}

void conf_print(const struct conf *c, FILE *out)
{
	const char *section = NULL;
	size_t i;

	for (i = 0; i < CONF_NKEYS; i++) {
		const struct conf_key *k = &conf_keys[i];

		if (!section || strcmp(section, k->section) != 0) {
			section = k->section;
			fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
		}
		conf_print_key(c, k, out);
	}
}
