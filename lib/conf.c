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
 * struct conf still owns nothing.  conf_parse_list() (confval.c) splits on
 * commas and blanks and checks each item; conf_print() writes the items
 * back joined by ", ", which is why a list must fit one printed line to be
 * accepted.
 *
 * conf_finish() runs after all values are in: it checks rules that involve
 * more than one key and fills paths derived from dir.  conf_print() writes
 * every key back as INI that conf_load() reads to the same struct.
 *
 * The value of one key (parse, check against its row, store) is confval.c's
 * conf_apply(); what the two files share is in conf_i.h.
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

#include "conf_i.h"

#define KiB (1024ULL)
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

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

/* Rows of one section stay together: conf_print() relies on it. */
static const struct conf_key conf_keys[] = {
	C_STR("ckptd", dir, "/var/lib/ckpt"),
	C_STR("ckptd", socket, ""),
	C_STR("ckptd", store, ""),
	C_SIZE("ckptd", staging, 16 * MiB, UINT64_MAX, 0, "2G"),
	C_SIZE("ckptd", staging_client, 4 * MiB, UINT64_MAX, 0, "256M"),
	C_SIZE("ckptd", staging_per_uid, 0, UINT64_MAX, 0, "0"),
	C_U32("ckptd", staging_wait, 0, 86400, "30"),
	C_BOOL("ckptd", staging_hugepages, "yes"),
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
	D_STR(mount, ""),
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
	D_SIZE(manifest_cache, 0, UINT64_MAX, 0, "256M"),

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
	{ "cluster", "reprotect_after", CONF_MS, 1000, 604800000, 0, NULL,
	  "600000", CONF_FIELD(cluster_reprotect_after) },
	/* holder_reserve: free bytes of the store's file system that peers'
	 * shards (held, reserved and being written) never take, kept for
	 * this node's own checkpoints (beyond [ckptd] reserve).  0, the
	 * default: a tenth of the store ([ckptd] capacity when set, else the
	 * file system's size). */
	{ "cluster", "holder_reserve", CONF_SIZE, 0, UINT64_MAX, 0, NULL, "0",
	  CONF_FIELD(cluster_holder_reserve) },
};

#define CONF_NKEYS ARRAY_SIZE(conf_keys)

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

/* Is dir absolute and path itself or below it, component by component
 * (trailing slashes aside: /pfs/ is /pfs, and /pfsx is not below it)? */
static int conf_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (dir[0] != '/' || strncmp(path, dir, n))
		return 0;
	return n == 1 || path[n] == '\0' || path[n] == '/';
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
	if (tmp.drain_mount[0] && !conf_path_under(tmp.drain_target,
						   tmp.drain_mount)) {
		conf_err_set(err, 0, "mount: '%.*s' must be an absolute path, and the target or a directory above it (target = '%.*s')",
			     CONF_QUOTE_MAX, tmp.drain_mount, CONF_QUOTE_MAX,
			     tmp.drain_target);
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
