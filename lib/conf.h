/*
 * conf.h - ckptd's configuration: an INI file parsed with libinih, applied
 * over a built-in default for every key.
 *
 * The keys are one table in conf.c (name, type, bounds, default, offset), in
 * the manner of Redis's config.c.  conf_defaults() fills a struct conf;
 * conf_load() parses a whole file into a copy, validates it, and only then
 * replaces *c.  There is no global config: main() owns the struct and passes
 * it down.  Strings and lists are fixed arrays, so a struct conf owns
 * nothing: it is copied with '=' and never freed.
 *
 * Value syntax: sizes take an optional K, M, G or T suffix (powers of 1024,
 * "2G"); booleans are yes/no/true/false/on/off/1/0; durations are seconds.
 * A list is items separated by commas and/or blanks ("a, b c"), "" being
 * the empty list; an item is 1 to CONF_ITEM_MAX - 1 bytes of
 * [A-Za-z0-9._:@+/[]-], no item appears twice, the row bounds the count (at
 * most CONF_LIST_MAX), and the whole list must fit one printed line
 * ("key = a, b, c" within libinih's 199 characters).
 */
#ifndef CKPT_CONF_H
#define CKPT_CONF_H

#include <stdint.h>
#include <stdio.h>

#define CONF_PATH_MAX 512
#define CONF_LIST_MAX 16               /* items of a list key, at most */
#define CONF_ITEM_MAX 64               /* bytes of an item, NUL included */

/* A list value, in the order written.  Unused bytes are zero, so two lists
 * holding the same items compare equal with memcmp(). */
struct conf_list {
	uint32_t n;                    /* items in use, 0..CONF_LIST_MAX */
	char item[CONF_LIST_MAX][CONF_ITEM_MAX]; /* NUL-terminated */
};

struct conf {
	/* [ckptd] */
	char dir[CONF_PATH_MAX];       /* state root; default /var/lib/ckpt */
	char socket[CONF_PATH_MAX];    /* "" = <dir>/ckptd.sock */
	char store[CONF_PATH_MAX];     /* "" = <dir>/store */
	uint64_t staging;              /* total staging memory, bytes */
	uint64_t staging_client;       /* default lease per client */
	uint64_t staging_per_uid;      /* staging one uid (not root) may hold;
					* 0 = half of staging */
	uint32_t staging_wait;         /* seconds a client may wait for
					* staging; 0 = no limit */
	int staging_hugepages;         /* 1: root's leases on huge pages
					* where the kernel's pool has them */
	uint32_t max_conns_per_uid;    /* connections of one uid (not root);
					* 0 = no limit */
	uint64_t capacity;             /* store bytes; 0 = file system size */
	uint64_t reserve;              /* bytes left free on the file system */
	uint32_t keep;                 /* LOCAL versions kept per job */
	uint64_t segment;              /* segment file size */
	uint64_t chunk;                /* largest write piece */
	uint32_t queue_depth;          /* io_uring entries */
	int direct;                    /* 1: O_DIRECT where possible */
	int mlock;                     /* 1: try to mlock staging */
	char log_level[16];            /* err|warning|notice|info|debug */
	char log[16];                  /* stderr|syslog */
	char metrics[64];              /* "HOST:PORT" of the Prometheus
					* endpoint (IPv4); "" = off */
	uint32_t straggler_factor;     /* log a writer stalled over this
					* times the median; 0 = never */
	uint32_t nice;                 /* scheduling priority of ckptd's
					* threads (0..19): below the trainers,
					* whose copies it would steal from */

	/* [drain] */
	char drain_target[CONF_PATH_MAX]; /* PFS directory; "" = no drain */
	char drain_mount[CONF_PATH_MAX];  /* the PFS's mount point, the target
					* or above it: no drain while it is
					* not one; "" = not checked */
	uint64_t drain_bandwidth;      /* bytes/s; 0 = no cap */
	uint32_t drain_every;          /* drain every Nth version (1..) */
	uint32_t drain_keep;           /* versions kept per job on the PFS;
					* 0 = all */
	int drain_compress;            /* 0 = none, else the zstd level
					* ("zstd" = 1, "zstd:N") */
	uint32_t drain_shuffle;        /* 0, 2 or 4 */
	int drain_incremental;         /* skip chunks unchanged since the
					* previous drained version */
	uint32_t drain_threads;        /* copy threads, 1..64 */
	uint32_t drain_chunk;          /* chunk size on the PFS (4M) */
	uint32_t drain_retry_max;      /* seconds between retries, at most */
	uint32_t drain_deadline;       /* seconds from commit to DRAINED a
					* version should take; late ones go
					* first and are logged.  0 = none */
	uint64_t drain_manifest_cache; /* bytes of PFS manifests kept for
					* reads (server/pfs/pfscache.h) */

	/* [cluster] */
	char cluster_node[64];         /* this node's name; "" = the short
					* host name */
	struct conf_list cluster_nodes; /* empty: one node alone; "slurm":
					* SLURM_JOB_NODELIST; one path: a node
					* list file (nodes.h); else the nodes
					* inline, NAME@HOST:PORT each */
	char cluster_ec[16];           /* "K+M" */
	uint32_t cluster_k, cluster_m; /* from ec, by conf_finish() */
	char cluster_key[CONF_PATH_MAX]; /* the shared secret's file */
	uint64_t cluster_bandwidth;    /* protect traffic, bytes/s; 0 = none */
	uint32_t cluster_port;         /* for nodes = slurm */
	uint32_t cluster_heartbeat_timeout; /* ms: a link on which nothing
					* was heard this long goes down */
	uint32_t cluster_reprotect_after; /* ms: a holder down this long has
					* its shards placed on other nodes */
	uint64_t cluster_holder_reserve; /* bytes of the store's file system
					* peers' shards must leave free for
					* this node's own parts (beyond
					* reserve); 0 = a tenth of the store
					* (capacity, else the file system) */
};

struct conf_err {
	char file[CONF_PATH_MAX];
	int line;                      /* 0 when not tied to a line */
	char msg[256];
};

void conf_defaults(struct conf *c);
/* Parse path over *c.  0, or -errno / -EINVAL with *err filled. */
int conf_load(struct conf *c, const char *path, struct conf_err *err);
/* Set one key from "section.key=value" (used by ckptd -o).  0 or -EINVAL. */
int conf_set(struct conf *c, const char *assignment, struct conf_err *err);
/* Fill derived paths (socket, store from dir) and cross-check keys.
 * 0 or -EINVAL with *err filled. */
int conf_finish(struct conf *c, struct conf_err *err);
/* Write the effective config as INI. */
void conf_print(const struct conf *c, FILE *out);
/* Parse "K+M" (erasure coding: 1 <= K, 1 <= M, K+M <= 32).  0 or -EINVAL. */
int conf_parse_ec(const char *s, uint32_t *k, uint32_t *m);
/* Parse "2G" and the like.  0 or -EINVAL/-ERANGE. */
int conf_parse_size(const char *s, uint64_t *out);

#endif
