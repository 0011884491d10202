/*
 * cluster_i.h - what the cluster's own modules share: the membership
 * (struct cluster, struct peer) and the links between nodes.
 *
 *   cluster.c  start-up: the node list, placement, key, listener; tick;
 *              status and the node table (LIST_NODES)
 *   link.c     the links: handshake, frame queues, requests and replies
 *   hold.c     shards this node holds for its peers (shardstore.h)
 *   protect.c  this node's parts: encode and send their shards
 *   parts.c    the parts of versions that other nodes hold: the namespace
 *   partsview.c  the versions, listings and lookups those parts make
 *   peerread.c reads of other nodes' files: forwarded, and served
 *   degraded.c reads of files whose node is down: decoded from shards
 *   sfetch.c   one stripe fetched from k holders and decoded
 *   holders.c  where a part's shards are: its holder record
 *   rebuild.c  what holders keep of this node's parts; the rebuild
 *   rbwrite.c  one part of this node's written back from its shards
 *   adopt.c    a survivor taking over the part of a node gone for good
 *
 * Nothing outside those files includes this header; the rest of the daemon
 * sees cluster.h.  Threads: the loop thread only.
 */
#ifndef CKPTD_CLUSTER_I_H
#define CKPTD_CLUSTER_I_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bwlimit.h"
#include "catalog.h"
#include "ctx.h"
#include "cluster.h"
#include "list.h"
#include "log.h"
#include "nodes.h"
#include "peer.h"
#include "place.h"
#include "pool.h"

struct link;
struct manifest;
struct part_loc;
struct version;
struct hold;
struct protect_q;
struct parts;
struct peerreads;
struct rebuild;
struct adopt;

enum peer_state { P_DOWN, P_CONNECTING, P_UP };

struct peer {
	uint32_t id;              /* node index in the placement */
	struct sockaddr_storage addr;
	socklen_t alen;           /* 0: the address did not resolve */
	int outgoing;             /* this node makes the link */
	enum peer_state st;
	struct link *l;           /* the link UP, or being made */
	uint64_t retry_ms;
	uint32_t backoff_ms;
	int32_t last_err;         /* why its link last failed (a handshake
				   * that failed, a link that went down); 0
				   * once UP */
	uint64_t since_ms;        /* when it last went UP, or stopped being
				   * UP (cluster_open() at first) */
	uint64_t heard_ms;        /* last byte received on its UP link; 0:
				   * never */
	uint32_t ups;             /* times its link came UP: a request to it
				   * that spans a change went to another
				   * instance of it, or was lost */
	uint64_t refused_until_ms; /* it refused a shard for space: no new
				   * shard is placed on it before then */
	int32_t refused_err;
};

/* Nodes that are not in the node list but still own parts this node knows
 * of (removed from the list: their shards are held, their parts listed
 * and read decoded) get the ids place.n .. place.n + nretired - 1: never
 * linked, never up, never chosen as holders.  At most this many. */
#define CLUSTER_RETIRED_MAX 64

struct cluster {
	struct ckptd *d;
	struct node_list nodes;
	struct placement place;
	uint32_t self;            /* this node's index */
	struct peer *peers;       /* indexed by node id (self unused), the
				   * retired ones too: place.n +
				   * CLUSTER_RETIRED_MAX entries */
	uint32_t nretired;
	char (*retired)[PLACE_NAME_MAX + 1];  /* their names */
	uint8_t key[PEER_KEY_MAX];
	size_t keylen;
	int listen_fd;
	struct loop_op accept_op;
	struct list links;
	struct log_rl bad_rl;
	uint32_t next_seq;
	int stopping;
	uint32_t hb_timeout_ms;   /* [cluster] heartbeat_timeout */
	uint32_t ping_ms;         /* CLUSTER_PING_MS, or less: a third of
				   * hb_timeout_ms */
	uint64_t tick_ms;         /* link_tick()'s last run */
	struct hold *hold;        /* hold.c */
	struct protect_q *prot;   /* protect.c */
	struct parts *parts;      /* parts.c */
	struct peerreads *reads;  /* peerread.c */
	struct rebuild *rb;       /* rebuild.c */
	struct adopt *adopt;      /* adopt.c */
	struct bwlimit bw;        /* [cluster] bandwidth: shards sent by
				   * protect.c and fetched by rebuild.c */
};

static inline const char *cl_name(const struct cluster *cl, uint32_t id)
{
	return id < cl->place.n ? cl->place.nodes[id].name
				: cl->retired[id - cl->place.n];
}

/* Is id a retired node (not in the list)? */
static inline int cl_retired(const struct cluster *cl, uint32_t id)
{
	return id >= cl->place.n;
}

/* The id of the node called name: in the list, or retired (made one when
 * add, the name valid and room left).  -ENOENT (or -ENOSPC when add and
 * CLUSTER_RETIRED_MAX are taken). */
int cl_node_id(struct cluster *cl, const char *name, int add);

/* ---- link.c --------------------------------------------------------- */

/* Frames a link holds for its handlers (hold.c's disk writes, say) before
 * it stops reading from the socket: TCP then slows the sender. */
#define LINK_MAX_HOLDS 8
/* Bytes of replies queued to a peer (that it has not read) past which its
 * link stops reading its requests. */
#define LINK_MAX_QUEUED (128u << 20)

/* A reply to a request this node sent (status from its header, frame the
 * whole checked reply, valid during the call only), or its failure: status
 * -ENOTCONN (the link went down) or -ETIMEDOUT, frame NULL. */
typedef void (*link_reply_fn)(struct ckptd *d, void *arg, int status,
			      const uint8_t *frame, size_t len);

/* The next request seq of this node. */
uint32_t link_seq(struct cluster *cl);
/*
 * Queue the request frame buf (len bytes, malloc'd, encoded with seq) to
 * node: ownership of buf passes (freed once sent, or when the link goes).
 * fn runs exactly once, on the loop, after this returns: with the reply,
 * or -ENOTCONN / -ETIMEDOUT (timeout_ms > 0).  0, or -ENOTCONN with no
 * link up to node (buf freed, fn never runs).
 */
int link_request(struct cluster *cl, uint32_t node, void *buf, size_t len,
		 uint32_t seq, int timeout_ms, link_reply_fn fn, void *arg);
/* Queue the frame buf (malloc'd, ownership passes) on l: a reply.  Dropped
 * if l is closed. */
void link_answer(struct link *l, void *buf, size_t len);
/* Reply to request (type, seq) with a status and no payload. */
void link_answer_status(struct link *l, uint16_t type, uint32_t seq,
			int32_t status);
/* A handler keeps l past the frame (a reply to send later): take a hold,
 * which also counts against LINK_MAX_HOLDS; give it back with link_drop. */
struct link *link_hold(struct link *l);
void link_drop(struct link *l);
/* The node at the other end of an UP link. */
uint32_t link_node(const struct link *l);
/* Bytes queued to node and the time its oldest unanswered request was
 * sent (0: none), for the lag report. */
void link_lag(const struct cluster *cl, uint32_t node, size_t *queued,
	      uint64_t *oldest_ms);

/* For cluster.c: links made and accepted, expiry, shutdown. */
void link_connect(struct cluster *cl, struct peer *p);
void link_accept_arm(struct cluster *cl);
/* Expire handshakes and requests; the heartbeat: PING an UP link that
 * sent nothing for CLUSTER_PING_MS, close one that heard nothing for
 * hb_timeout_ms (-ETIMEDOUT) while it was reading. */
void link_tick(struct cluster *cl, uint64_t now);
void link_close_all(struct cluster *cl);
void link_free_all(struct cluster *cl);
/* A peer's state changed (logged here); UP also runs the modules' link-up
 * work (parts.c announces this node's parts to it). */
void peer_set(struct cluster *cl, struct peer *p, enum peer_state st,
	      int err);

/* ---- handlers of requests on an UP link (frame checked, valid during
 * the call only) -------------------------------------------------------- */

void hold_on_put(struct cluster *cl, struct link *l, const uint8_t *f,
		 size_t n, const struct peer_hdr *h);
void hold_on_seal(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *h);
void parts_on_part(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h);
/* SYNC: hold_on_sync(), then the waits on versions other nodes hold. */
void parts_on_sync(struct cluster *cl, struct link *l, const uint8_t *f,
		   size_t n, const struct peer_hdr *h);
void peerread_on_read(struct cluster *cl, struct link *l, const uint8_t *f,
		      size_t n, const struct peer_hdr *h);

/* ---- hold.c ------------------------------------------------------------- */

struct shard_meta;

/* Scan <store>/shards (blocking: start-up).  0 or -errno (logged). */
int hold_open(struct cluster *cl);
void hold_close(struct cluster *cl);
/* Tell parts.c of the parts the shards held here belong to (start-up). */
void hold_learn_parts(struct cluster *cl);
/* A chunk of a shard held here read for this node (a degraded read):
 * fn(d, arg, 0 or -errno / -CKPT_ECORRUPT) on the loop once dst (the
 * shard's chunk bytes) is filled and checked.  0 (fn will run), -ENOENT
 * (not held here) or -ENOMEM. */
typedef void (*hold_chunk_fn)(struct ckptd *d, void *arg, int status);
int hold_chunk(struct cluster *cl, uint32_t owner, uint64_t open_id,
	       uint32_t shard, uint64_t stripe, void *dst, hold_chunk_fn fn,
	       void *arg);
/* SHARD_GET: a chunk of a shard held here, for a degraded read. */
void hold_on_sget(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *h);
/* HELD: the next shard held here of the asking node's parts after a
 * cursor, as its shardmeta.h record (rebuild.c, and owners checking what
 * their holders still have). */
void hold_on_held(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *h);
/* A link to owner came up: its parts are about to be announced again. */
void hold_owner_up(struct cluster *cl, uint32_t owner);
/* owner announced its part open_id since: its shards stay; with rec, the
 * part's holder record as the owner has it PROTECTED, the shards held
 * here that rec places on other nodes are dropped (superseded). */
void hold_confirm(struct cluster *cl, uint32_t owner, uint64_t open_id,
		  const struct man_holders *rec);
/* SYNC: owner announced every part it has; the shards held of parts it did
 * not announce since its link came up are dropped. */
void hold_on_sync(struct cluster *cl, struct link *l, const uint8_t *f,
		  size_t n, const struct peer_hdr *h);
/* owner removed its part open_id (or wrote it anew): drop its shards. */
void hold_part_gone(struct cluster *cl, uint32_t owner, uint64_t open_id);
/* A shard that got chunks but no SHARD_SEAL, and no chunk for this long,
 * is dropped (its owner's attempt failed or went elsewhere). */
#define HOLD_OPEN_IDLE_MS 60000
/* An open shard keeps its chunks' CRCs (5 bytes a stripe) for at most
 * this many stripes (1 TiB at 1 MiB chunks); a larger one is read back at
 * its seal. */
#define HOLD_CRCS_MAX     (1u << 20)
#define HOLD_IDLE_TEXT    "60 s"          /* the same, for the log */
/* hold_tick() looks for such shards, and reads the file system's free
 * bytes again, at most this often. */
#define HOLD_SWEEP_MS     1000

/* Where the holder stands, for `ckptctl status` and the metrics. */
struct hold_space {
	uint64_t held;            /* bytes of the shards held (sealed) */
	uint64_t nheld;           /* shards held */
	uint64_t bad;             /* held shards that failed their CRC check
				   * at start, set aside */
	uint64_t reserved;        /* bytes reserved for shards being written
				   * (each its whole size from its first
				   * chunk), not yet sealed */
	uint64_t unwritten;       /* of reserved, bytes not written yet */
	uint64_t nopen;           /* shards being written */
	uint64_t refused;         /* requests refused since start */
	uint64_t refused_space;   /* of those, for room (-ENOSPC) */
	uint64_t dropped;         /* shards never sealed that were dropped
				   * (their attempt abandoned) */
	uint64_t room;            /* bytes a peer's shard may still be given
				   * now */
	uint64_t keep;            /* [cluster] holder_reserve as applied:
				   * bytes kept for this node's own parts */
};
/* Fill *out (zeros without a holder), after a sweep (hold_tick()) so that
 * a shard abandoned while no tick ran is not shown as reserved. */
void hold_space(const struct cluster *cl, struct hold_space *out);
/* From the cluster's tick: drop the shards whose attempt was abandoned
 * (their owner's link went down, HOLD_OPEN_IDLE_MS without a chunk) and
 * read the file system's free bytes again, each at most every
 * HOLD_SWEEP_MS.  now_ms: ckptd_now_ms(). */
void hold_tick(struct cluster *cl, uint64_t now_ms);

/* Bytes of one shard in each stripe (protect.c writes, degraded.c reads). */
#define PROTECT_CHUNK (1u << 20)

/* ---- holders.c ---------------------------------------------------------- */

/* No node: a record's name not in the node list (or the owner's own). */
#define HOLDER_NONE UINT32_MAX
/* ids[s - 1] (s = 1..k+m-1 of rec, or of the cluster's code without one):
 * the node holding shard s of owner's part as rec says, or as place.h
 * computes when rec is NULL (a part coded before records). */
void holders_resolve(const struct cluster *cl, const struct man_holders *rec,
		     uint32_t owner, uint32_t *ids);
/* The holder record of owner's part open_id as this node knows it (its
 * catalog's for its own part, else what parts.c heard), or NULL. */
const struct man_holders *holders_record(const struct cluster *cl,
					 uint32_t owner, uint64_t open_id);
/* Both: the record (or NULL) returned, its nodes in ids. */
const struct man_holders *holders_of(const struct cluster *cl,
				     uint32_t owner, uint64_t open_id,
				     uint32_t *ids);

/* A part's shards, for its listing entry: info's shards (k+m-1 of rec, or
 * of the cluster's code), shards_up (their holders up now) and holders
 * (rec's names); nothing for a part with no record and no CKPT_COPY_PEERS
 * in copies. */
struct ckpt_version_info;
void holders_info(const struct cluster *cl, uint32_t owner,
		  const struct man_holders *rec, uint32_t copies,
		  struct ckpt_version_info *info);

/* ---- protect.c ---------------------------------------------------------- */

struct cluster_prot_status {
	uint32_t queued;          /* parts waiting or being protected */
	uint32_t done;            /* protected since start */
	uint32_t failures;        /* attempts that failed since start */
	uint64_t bytes_sent;      /* shard bytes acknowledged since start */
	uint32_t reprotected;     /* parts protected again since start (a
				   * holder down past reprotect_after) */
	uint32_t replaced;        /* parts whose holders changed */
	uint32_t degraded;        /* sealed parts not on the PFS, LOCAL only
				   * or with a holder down now */
	char waiting_for[200];    /* the first part that waits for holders,
				   * and why ("" if none) */
};

int protect_open(struct cluster *cl);
void protect_close(struct cluster *cl);
/* v (this node's part) changed: queue it if it is sealed, local and not
 * yet protected. */
void protect_version(struct cluster *cl, struct version *v);
/* Start what is due (a retry, a link up). */
void protect_kick(struct cluster *cl);
/* From the tick: re-protect the parts whose holders have been down past
 * [cluster] reprotect_after; then protect_kick(). */
void protect_tick(struct cluster *cl);
/* The holder of shard `shard` of v (a PROTECTED part of this node's) came
 * back without it: v stays PROTECTED and that shard is sent to it again
 * (a re-protection; the other holders' shards are only sealed again). */
void protect_lost(struct cluster *cl, struct version *v, uint32_t shard);
void protect_status(const struct cluster *cl, struct cluster_prot_status *s);

/* ---- sfetch.c ------------------------------------------------------------ */

struct ec;
struct sfetch;
/* A fetch is over (on the loop): 0, the stripe's k data chunks in frag[0..k-1]
 * (and copied to out), or -EIO (fewer than k shards readable), -ECANCELED
 * (shutting down).  The fetch is idle again: it may be asked for another
 * stripe, or released. */
typedef void (*sfetch_fn)(struct sfetch *f, int err);
/*
 * One stripe of owner's part open_id, fetched from the holders of its
 * shards and decoded.  Embed it in what needs it; the caller frees that
 * only while !busy.  A shard that failed once (bad) is not asked for again
 * by this fetch.
 */
struct sfetch {
	struct pool_task pt;      /* the decode (pool.h), first */
	struct cluster *cl;
	uint32_t owner;
	uint64_t open_id;
	uint32_t k, m;            /* the part's code (its holder record's) */
	uint32_t holder[32];      /* node of shard s (HOLDER_NONE: none; 0:
				   * the owner's copy) */
	uint64_t stripe;
	uint8_t *out;             /* k * PROTECT_CHUNK bytes, or NULL */
	uint8_t *frag[32];        /* k + m chunks of PROTECT_CHUNK bytes */
	uint8_t want[32], have[32], bad[32];
	uint32_t pending;         /* chunk requests in flight */
	struct ec *ec;            /* decode tables, kept per erasure pattern */
	sfetch_fn done;
	int busy;
	char what[160];           /* for the log; the caller may rewrite it */
};
/* 0, or -ENOMEM / -EINVAL (the cluster's k and m). */
int sfetch_init(struct sfetch *f, struct cluster *cl, uint32_t owner,
		uint64_t open_id, sfetch_fn done);
/* Free the chunks and tables (f not busy). */
void sfetch_release(struct sfetch *f);
/* Fetch stripe `stripe`; done runs exactly once, on the loop, after this
 * returns or during it. */
void sfetch_stripe(struct sfetch *f, uint64_t stripe, uint8_t *out);

/* ---- degraded.c ----------------------------------------------------------- */

/* t's READ (its lease range checked) of a file of a part (loc) whose
 * shards peers hold: decoded from them, t ended through t->done() (or
 * t->drop() at shutdown).  0 (ended later), or -errno (nothing started, t
 * still the caller's). */
int degraded_read(struct cluster *cl, struct cluster_read *t,
		  const struct part_loc *loc);

/* ---- peerread.c ----------------------------------------------------------- */

int peerread_open(struct cluster *cl);
/* After the links are gone: reads still waiting fail. */
void peerread_close(struct cluster *cl);

/* ---- parts.c -------------------------------------------------------------- */

int parts_open(struct cluster *cl);
void parts_close(struct cluster *cl);
/* Where a path of another node's part is: the node, the file (its size
 * and index in the part's manifest), the part's open_id and copies, and
 * its manifest (valid until the loop runs again: copy what is kept). */
struct part_loc {
	uint32_t node;
	uint32_t fi;
	uint64_t size;
	uint64_t open_id;
	uint32_t copies;
	uint32_t uid;             /* the part's owner uid */
	uint64_t sealed_ns;
	uint32_t nparts;          /* the version's parts, as the owner said */
	uint64_t seq;
	const struct manifest *man;
};
/* The part that shows path (not this node's; as caller, whose uid picks
 * the job's parts).  0 or -ENOENT. */
int parts_locate(struct cluster *cl, const char *job, const char *version,
		 uint32_t caller, const char *path, struct part_loc *out);
/* Tell every peer up about v, this node's part (removed: state 0). */
void parts_announce(struct cluster *cl, const struct version *v);

/* A part of this node's that rebuild.c is rebuilding (its holder's record
 * m: the manifest, open_id, seq): known and listed like another node's part,
 * SEALED and LOCAL with the copies "peers" (read decoded from the shards),
 * and announced to every peer up.  0, -EEXIST, or a manifest_decode()
 * error. */
struct shard_meta;
int parts_adopt(struct cluster *cl, const struct shard_meta *m);
/* The holder record of owner's part open_id as announced (or learned from
 * a shard held here, or adopted by a rebuild), or NULL. */
const struct man_holders *parts_holders(const struct cluster *cl,
					uint32_t owner, uint64_t open_id);
/* A part of another node's known from a shard held here (m): listed and
 * read (through its owner, or decoded) until its owner says otherwise, so
 * that a node restarted while a peer is down still sees that peer's
 * parts.  Nothing if the part is known already. */
void parts_learn_held(struct cluster *cl, const struct shard_meta *m);
/* The part rebuilt is in the catalog now (or given up): forget it here. */
void parts_forget_own(struct cluster *cl, const char *job,
		      const char *version);
/* SYNC to node: every part of this node's has been announced to it. */
void parts_sync(struct cluster *cl, uint32_t node);
/* owner's part open_id was taken over by another node (adopt.c): gone from
 * the namespace here. */
void parts_superseded(struct cluster *cl, uint32_t owner, uint64_t open_id);
/* Has a part of another node's, or of this node's own, taken over owner's
 * part open_id (its record's `from`), SEALED and, with durable_only,
 * PROTECTED or on the PFS?  1 (*by: the node that has it, if by) or 0. */
int parts_taken_over(const struct cluster *cl, uint32_t owner,
		     uint64_t open_id, int durable_only, uint32_t *by);

/* ---- adopt.c -------------------------------------------------------------- */

/*
 * A survivor taking over the part of a node gone for good (down past
 * [cluster] reprotect_after, or no longer in the node list): decoded into
 * this node's store under a new open_id, its holder record saying `from`
 * which part it is, then protected as this node's own; the old part is
 * dropped everywhere once the new one is PROTECTED (parts.c).  From the
 * tick, once a second: starts the next adoption due here, one at a time.
 */
int adopt_open(struct cluster *cl);
void adopt_close(struct cluster *cl);
void adopt_tick(struct cluster *cl);
/* This node's own part open_id is superseded by another node's PROTECTED
 * part: taken over while this node was gone, or taken over by a node first
 * in the list as well as here.  The copy here is removed. */
void adopt_own_superseded(struct cluster *cl, uint64_t open_id);
/* The same for this node's part that took over owner's part from_id. */
void adopt_own_superseded_part(struct cluster *cl, uint32_t owner,
			       uint64_t from_id);
/* Adoptions running (0 or 1) and done since start. */
void adopt_counts(const struct cluster *cl, uint32_t *running,
		  uint32_t *done);

/* ---- rebuild.c ------------------------------------------------------------ */

/*
 * What this node's holders keep of its parts, and rebuilding this node's
 * parts from them.  At each link up this node asks the peer (HELD) for the
 * shards it holds of this node's parts: a PROTECTED part missing one there
 * loses PROTECTED and is protected again (the holder was replaced).  While
 * a rebuild is on (a new store under this node's name, or ckptctl rebuild:
 * <store>/rebuild exists), every part the answers name that this node does
 * not have is adopted into the namespace (parts_adopt), decoded from k
 * shards, written to the store and sealed under its own open_id, so its
 * holders' shards stay valid.
 */
struct ckpt_status;
int rebuild_open(struct cluster *cl);
void rebuild_close(struct cluster *cl);
int rebuild_active(const struct cluster *cl);
/* Start a rebuild now (ckptctl rebuild).  0, or -errno. */
int rebuild_start(struct cluster *cl);
void rebuild_peer_up(struct cluster *cl, uint32_t node);
void rebuild_tick(struct cluster *cl);
void rebuild_status(const struct cluster *cl, struct ckpt_status *s);

/* ---- rbwrite.c ------------------------------------------------------------ */

/* One part of this node's (its holder's record m) written back from the
 * shards, for rebuild.c. */
struct rbwrite;
/* On the loop: the part is in the catalog, announced and queued for
 * protection (0), or not (-errno, its segments freed; -ECANCELED at
 * shutdown).  The write is freed after this returns. */
typedef void (*rbwrite_fn)(void *arg, int err);
/* Start: *out is set before done can run (it may run during the call).
 * The shards are owner's part src_id (this node's own, src_id ==
 * m->open_id, for a rebuild; a lost node's for adopt.c, m then describing
 * the part as it is to be here: its manifest's open_id, a new one of this
 * node's, is m->open_id, and goes into the segment headers).
 * held (bits by shard) and hnode[shard]: the holders that said they have
 * each shard, asked over any other.  *progress grows by the bytes of each
 * stripe written.  0, or -errno (done never runs). */
int rbwrite_start(struct cluster *cl, uint32_t owner, uint64_t src_id,
		  const struct shard_meta *m, uint32_t held,
		  const uint32_t *hnode, uint64_t *progress,
		  rbwrite_fn done, void *arg, struct rbwrite **out);
/* From the tick: a stripe that waits for a free segment goes on. */
void rbwrite_tick(struct rbwrite *w);
/* Free a write that neither the pool nor a link holds (shutdown). */
void rbwrite_free(struct rbwrite *w);

/* A peer came up: tell it about this node's parts; restart protection
 * that waited for it. */
void parts_peer_up(struct cluster *cl, uint32_t node);
void protect_peer_up(struct cluster *cl, uint32_t node);

#endif
