/*
 * nodes.h - the cluster's node list: the file `[cluster] nodes` names.
 *
 * One node per line, fields separated by blanks, '#' to the end of a line a
 * comment:
 *
 *   NAME HOST:PORT [DOMAIN]
 *
 * NAME and DOMAIN: 1..63 bytes of [A-Za-z0-9._-]; a node without a DOMAIN
 * is a failure domain of its own.  HOST: a name or an IPv4 address, or an
 * IPv6 address in brackets ([::1]:7070); PORT 1..65535.  A repeated NAME or
 * HOST:PORT is an error, as is a line with more fields.  The order of the
 * lines does not matter to placement (place.h).
 *
 * Library code: nodes_load() reads the file; nothing prints.  Errors name
 * the file and line in a struct conf_err (conf.h).
 */
#ifndef CKPT_NODES_H
#define CKPT_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "place.h"

#define NODES_HOST_MAX 255
#define NODES_MAX PLACE_MAX_NODES

struct node_entry {
	char name[PLACE_NAME_MAX + 1];
	char host[NODES_HOST_MAX + 1];   /* without the brackets */
	uint16_t port;
	char domain[PLACE_NAME_MAX + 1]; /* "" = its own */
};

struct node_list {
	struct node_entry *v;     /* owned */
	uint32_t n;
};

/* Parse len bytes of text (file names the source in errors).  0, -EINVAL
 * with *err filled, or -ENOMEM. */
int nodes_parse(const char *text, size_t len, const char *file,
		struct node_list *out, struct conf_err *err);
/* Read and parse path.  0, -errno (*err filled), -EINVAL or -ENOMEM. */
int nodes_load(const char *path, struct node_list *out, struct conf_err *err);
void nodes_release(struct node_list *l);
/* The (name, domain) pairs for place_compute(): a malloc'd array of l->n
 * the caller frees, or NULL. */
struct place_node *nodes_places(const struct node_list *l);

#endif
