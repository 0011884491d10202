/*
 * cluster.h - this node's place in a cluster of ckptd nodes, and the
 * authenticated links to its peers.
 *
 * At start cluster_open() reads `[cluster] nodes` (a node list file,
 * nodes.h, or NAME@HOST:PORT items inline), finds this node in it (`[cluster]
 * node`, else the short host name), computes groups and shard placement
 * (place.h) for `[cluster] ec`, says at start what a failure of each domain
 * would cost, loads the cluster key (refused if others may read it), and
 * listens on this node's HOST:PORT.  With no nodes it does nothing: the
 * daemon is one node alone, as before.
 *
 * Links: between two members of a group there is one TCP connection, made
 * by the node whose name sorts first and used both ways.  Both ends prove
 * they hold the key (peer.h) before either sends anything else; a
 * connection that fails the handshake, or does not finish it within
 * CLUSTER_HANDSHAKE_MS, is closed and gets nothing.  A link that goes down
 * is made again with exponential backoff (CLUSTER_BACKOFF_MIN_MS doubling to
 * CLUSTER_BACKOFF_MAX_MS).  Every change of a peer's state is logged.
 *
 * Links are made between every two nodes (a full mesh): shards go to the
 * members of a node's group, and parts are announced to every node so that
 * each sees the whole namespace.
 *
 * Owns: the listening socket, the links and their buffers, the placement,
 * the shards held for peers, this node's protection queue and what it
 * knows of other nodes' parts (cluster_i.h).  Called by ckptd.c (open,
 * start, tick, events, close, status) and by the request modules (views,
 * remote reads).  Threads: the loop only.
 */
#ifndef CKPTD_CLUSTER_H
#define CKPTD_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct ckptd;
struct ckpt_status;

#define CLUSTER_HANDSHAKE_MS   5000
#define CLUSTER_BACKOFF_MIN_MS 200
#define CLUSTER_BACKOFF_MAX_MS 10000
/* A peer lags when its oldest request has waited this long, or this much
 * is queued to it. */
#define CLUSTER_LAG_MS         2000
#define CLUSTER_LAG_BYTES      (64u << 20)
/* The heartbeat: an UP link that sent nothing for CLUSTER_PING_MS (or a
 * third of heartbeat_timeout, if less) sends a PING (peer.h); one on which nothing was received for [cluster]
 * heartbeat_timeout goes down (-ETIMEDOUT), as a hung node or a dead host
 * that sends no RST would otherwise be noticed only by requests timing
 * out.  Time when this node stopped reading the link (its handlers hold
 * too much, link.c) or its loop did not run (a tick later than
 * CLUSTER_PING_MS) does not count: the silence is then this node's own. */
#define CLUSTER_PING_MS        1000
/* Stripe tasks protect.c runs at once for the part it protects (one when
 * [cluster] bandwidth caps it, as a capped task sleeps on its worker);
 * ckptd's pool has that many workers more than a node without a cluster,
 * so that protection never takes the workers its own manifests and its
 * peers' shards need. */
#define CLUSTER_ENCODERS       3
/* A read forwarded to the node holding the file gives up after this. */
#define CLUSTER_READ_MS        30000

struct version;
struct ckpt_version_info;
struct conf;

/* 0 (also with no cluster: d->cluster stays NULL), or -errno, logged.
 * A failure after d->cluster is set leaves it set, with tasks it started
 * on the pool (hold.c's verifications): the caller closes it as at
 * shutdown, cluster_stop(), then the pool, then cluster_close(). */
int cluster_open(struct ckptd *d);
/* The catalog is loaded and the pool is up: queue this node's parts that
 * are not protected yet. */
void cluster_start(struct ckptd *d);
/* The version_changed event: v (this node's part) changed state or level,
 * or was removed: tell the peers, protect it when it is LOCAL. */
void cluster_version_changed(struct ckptd *d, struct version *v);
/* From the daemon's tick: connect what is due, expire handshakes. */
void cluster_tick(struct ckptd *d);
/* Shutting down: close every link and the listener. */
void cluster_stop(struct ckptd *d);
/* After the loop is gone: free everything. */
void cluster_close(struct ckptd *d);
/* Nodes in the cluster (this one included), 0 with none. */
uint32_t cluster_nodes(const struct ckptd *d);
/* This node's name in the cluster (valid until cluster_close()), or NULL
 * with no cluster. */
const char *cluster_self_name(const struct ckptd *d);
/* ckptctl rebuild: rebuild this node's parts from its peers' shards
 * (rebuild.c).  0, or -ENOTSUP with no cluster, -errno. */
int cluster_rebuild(struct ckptd *d);
/* Peers of this node and how many are up, for STATUS. */
void cluster_status(const struct ckptd *d, struct ckpt_status *s);

/*
 * The namespace (parts.c, partsview.c).  A version's parts are this node's (v, in the
 * catalog, or NULL) and those other nodes announced.  With no cluster the
 * views below leave everything as the local part says.
 */

/* Fill the whole-version fields of info (v's, or those of a version only
 * other nodes hold when v is NULL): nparts, parts_sealed, and state and
 * level over every part.  0, or -ENOENT (no part known; info untouched). */
int cluster_version_view(const struct ckptd *d, const char *job,
			 const char *version, const struct version *v,
			 uint32_t caller, struct ckpt_version_info *info);
/* Is the version complete (every part sealed), at level or above?  v as
 * above.  1 or 0. */
int cluster_version_ready(const struct ckptd *d, const char *job,
			  const char *version, const struct version *v,
			  uint32_t caller, uint32_t level);
/* For LIST_JOBS, LIST_VERSIONS and LATEST: call fn for each job (version
 * NULL) or each version of job (job set) that only other nodes hold,
 * visible to uid (0: all; with job set, uid is the caller's, as for
 * cluster_job_uid).  fn gets the version's newest seal time. */
void cluster_each_remote(const struct ckptd *d, const char *job, uint32_t uid,
			 void (*fn)(void *arg, const char *job,
				    const char *version, uint64_t sealed_ns),
			 void *arg);
/* The newest seal time over the version's parts (v's alone without a
 * cluster). */
uint64_t cluster_version_newest(const struct ckptd *d, const char *job,
				const char *version, const struct version *v,
				uint32_t caller);
/* The owner uid of a job only other nodes hold, as a client of uid caller
 * sees it, or -ENOENT.  Job names are not coordinated between nodes: two
 * uids may each hold a job of one name on different nodes.  A job's parts
 * are then those of one uid only: v's job's, else caller's if it holds
 * some, else the first heard's; every view, listing and read above (caller:
 * the client's uid) leaves the other uids' parts out. */
int cluster_job_uid(const struct ckptd *d, const char *job, uint32_t caller);
/*
 * How the cluster answers a listing or a lookup a client asked for: svc/
 * passes one down (ops.c) and the cluster fills it, never touching the
 * connection.  begin(r, total) starts the reply, of total entries for a
 * listing, and gives its encoder (NULL: no memory, the client has been
 * answered: stop); take(r) says whether the next entry goes in this page
 * (counting it either way; a lookup's reply takes its one entry); end(r)
 * sends it.
 */
struct enc;
struct cluster_reply {
	struct enc *(*begin)(struct cluster_reply *r, uint64_t total);
	int (*take)(struct cluster_reply *r);
	void (*end)(struct cluster_reply *r);
};
/* LIST_PARTS, LIST_FILES, STAT_FILE and GETXATTRS of what other nodes hold,
 * for a client of uid caller.  Each answers through out (and returns 0),
 * or returns -ENOENT having answered nothing (the caller answers as for a
 * node alone).  v: this node's part or NULL; the caller checked the client
 * may see the job. */
int cluster_list_parts(struct ckptd *d, uint32_t caller,
		       const struct proto_msg *req, const struct version *v,
		       struct cluster_reply *out);
/* LIST_NODES: every node of the cluster as this one sees it (struct
 * ckpt_node_info), answered through out (0); -ENOENT with no cluster,
 * nothing answered. */
int cluster_list_nodes(const struct ckptd *d, struct cluster_reply *out);
int cluster_list_files(struct ckptd *d, uint32_t caller,
		       const struct proto_msg *req, const struct version *v,
		       struct cluster_reply *out);
int cluster_stat_file(struct ckptd *d, uint32_t caller,
		      const struct proto_msg *req, struct cluster_reply *out);
/* GETXATTRS of a file of another node's part (its manifest has them). */
int cluster_getxattrs(struct ckptd *d, uint32_t caller,
		      const struct proto_msg *req, struct cluster_reply *out);
/*
 * A READ of a file's range that another node's copy or the part's shards
 * serve, on behalf of a client (svc/reader.c).  The caller fills it and
 * owns it until a cluster_read_*() call has started it; the cluster then
 * ends it with exactly one call of done() (err 0: size bytes are at dst)
 * or, at shutdown, drop().  Both run on the loop thread.
 */
struct cluster_read {
	struct ckptd *d;
	const struct proto_msg *req; /* job, version, path, off, len: the
				      * caller's, kept until the end */
	uint32_t uid;                /* the client's */
	int own;                     /* read this node's own part from its
				      * shards (its local copy failed) */
	uint8_t *dst;                /* room for req->len bytes */
	void (*done)(struct cluster_read *r, int32_t err, uint64_t size);
	void (*drop)(struct cluster_read *r);
};
/* r's file from the node whose part holds it (the plan's OWNER), or
 * decoded from the part's shards (SHARDS; also of this node's own part,
 * r->own, when its copy failed).  0: started, r ends through done() or
 * drop(); or -errno: nothing started, r still the caller's (-EHOSTDOWN:
 * the node is down, -ENODATA: no such copy, -ENOENT: no such part). */
int cluster_read_owner(struct cluster_read *r);
int cluster_read_shards(struct cluster_read *r);

/*
 * For the restore planner (plan.h).
 */
/* This node's index in the cluster (0 with none); node's name ("" with
 * none, or no such node); whether node's link is up (this node: 1). */
uint32_t cluster_self(const struct ckptd *d);
const char *cluster_node_name(const struct ckptd *d, uint32_t node);
int cluster_node_up(const struct ckptd *d, uint32_t node);
/* The index of the node named name, or -ENOENT (none such, no cluster). */
int cluster_node_id(const struct ckptd *d, const char *name);
/* How many of the shards of owner's part open_id this node can read now
 * (held here, or by a peer that is up), of how many its holder record
 * names, and k. */
struct cluster_reach {
	uint32_t reachable, shards, k;
};
void cluster_reach(const struct ckptd *d, uint32_t owner, uint64_t open_id,
		   struct cluster_reach *r);
/* The part of another node (or one this node is rebuilding) that shows
 * path, as caller sees the job.  0 or -ENOENT. */
struct cluster_part {
	uint32_t node, copies, uid;
	uint64_t size, sealed_ns;
	uint32_t nparts;          /* 1: node's version alone, whose PFS copy
				   * is the version's manifest (seq); else
				   * node's part (part.<node>, sealed_ns) */
	uint64_t seq;
	uint64_t open_id;
};
int cluster_part_of(const struct ckptd *d, const char *job,
		    const char *version, uint32_t caller, const char *path,
		    struct cluster_part *out);
/* SEEK_DATA (seek.c) in the file path of another node's part, as caller
 * sees the job: the first run of data in [off, end) (end clipped to the
 * file's size here), from the part's manifest, which every source of a
 * READ of it serves (the owner's copy, its shards, its PFS copy).  0,
 * -ENXIO (no data in the range), -ENOMEM, or -ENOENT: no other node's
 * part shows path, or its manifest has no records (an evicted copy's:
 * it cannot tell). */
int cluster_seek_data(const struct ckptd *d, const char *job,
		      const char *version, uint32_t caller, const char *path,
		      uint64_t off, uint64_t end, uint64_t *data,
		      uint64_t *len);
/* Call fn(arg, owner, open_id, copies) for each sealed part of job/version other
 * nodes hold, as a client of uid caller sees them (v: this node's part or
 * NULL), until fn returns nonzero: that value, or 0 when every part was
 * seen (also with no cluster). */
int cluster_each_sealed_part(const struct ckptd *d, const char *job,
			     const char *version, const struct version *v,
			     uint32_t caller,
			     int (*fn)(void *arg, uint32_t owner,
				       uint64_t open_id, uint32_t copies),
			     void *arg);
/* Call fn with the path of every file of job/version shown to caller: v's
 * live files (v: this node's part, or NULL), then those of other nodes'
 * parts.  0, or -CKPT_ENOVERSION when no part is known. */
int cluster_each_file(const struct ckptd *d, const char *job,
		      const char *version, const struct version *v,
		      uint32_t caller,
		      void (*fn)(void *arg, const char *path), void *arg);

#endif
