/*
 * conf_i.h - what conf.c (the keys, the file, the rules between keys) and
 * confval.c (the value of one key: parse, check, store) share.  Internal to
 * lib/; ckptd and the tools see conf.h only.
 */
#ifndef CKPT_CONF_I_H
#define CKPT_CONF_I_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

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

/* The level "zstd" alone stands for. */
#define CONF_ZSTD_LEVEL 1

/* Longest value quoted back in an error message. */
#define CONF_QUOTE_MAX 64

/* The longest line libinih reads (its INI_MAX_LINE, 200, less the NUL). */
#define CONF_LINE_MAX 199

/* Bytes of an item besides [A-Za-z0-9]: enough for host names, host:port and
 * [v6]:port, and nothing INI or the list syntax gives a meaning to. */
#define CONF_ITEM_PUNCT "._:@+/[]-"

/* Validate value for key k and store it in *c.  On error *c is untouched
 * and msg (len bytes) names the key and says what is wrong.  0 or
 * -EINVAL. */
int conf_apply(struct conf *c, const struct conf_key *k, const char *value,
	       char *msg, size_t len);
/* "0", "4096", "2G": the shortest exact spelling conf_parse_size() reads. */
void conf_format_size(uint64_t v, char *buf, size_t len);
/* A numeric field: uint32_t or uint64_t, as its size says. */
uint64_t conf_load_num(const char *field, size_t size);

#endif
