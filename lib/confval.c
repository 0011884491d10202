/*
 * confval.c - the value of one configuration key: parse it as its row in
 * conf.c's conf_keys[] says (a string, a size, a number, a time, a boolean,
 * one of a list of words, a compression, a list), check it against the
 * row's bounds, and store it in its field of struct conf.  conf_apply() is
 * the one entry; conf.c calls it for defaults, file lines and "-o"
 * overrides alike.  Errors name the key and quote the value (at most
 * CONF_QUOTE_MAX bytes of it).  No state; thread-safe.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf_i.h"

static const struct {
	const char *name;
	int value;
} conf_bools[] = {
	{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 },
	{ "on", 1 },  { "off", 0 }, { "1", 1 },   { "0", 0 },
};

/* conf_i.h */
void conf_format_size(uint64_t v, char *buf, size_t len)
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

uint64_t conf_load_num(const char *field, size_t size)
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

/* conf_i.h */
int conf_apply(struct conf *c, const struct conf_key *k, const char *value,
	       char *msg, size_t len)
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
