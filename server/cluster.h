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
 * Not built yet: shards (encode, hold, acknowledge), PROTECTED, the
 * cluster-wide namespace.  The links carry only the handshake today.
 *
 * Owns: the listening socket, the links and their buffers, the placement.
 * Called by ckptd.c (open, tick, close, status).  Threads: the loop only.
 */
#ifndef CKPTD_CLUSTER_H
#define CKPTD_CLUSTER_H

#include <stdint.h>

struct ckptd;
struct ckpt_status;

#define CLUSTER_HANDSHAKE_MS   5000
#define CLUSTER_BACKOFF_MIN_MS 200
#define CLUSTER_BACKOFF_MAX_MS 10000

/* 0 (also with no cluster: d->cluster stays NULL), or -errno, logged. */
int cluster_open(struct ckptd *d);
/* From the daemon's tick: connect what is due, expire handshakes. */
void cluster_tick(struct ckptd *d);
/* Shutting down: close every link and the listener. */
void cluster_stop(struct ckptd *d);
/* After the loop is gone: free everything. */
void cluster_close(struct ckptd *d);
/* Nodes in the cluster (this one included), 0 with none. */
uint32_t cluster_nodes(const struct ckptd *d);
/* Peers of this node and how many are up, for STATUS. */
void cluster_status(const struct ckptd *d, struct ckpt_status *s);

#endif
