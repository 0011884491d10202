/*
 * ckpt.h - the public client API of the ckpt checkpoint burst buffer.
 *
 * libckpt talks to the node's ckptd over a Unix socket.  Bulk bytes never
 * travel on the socket: at connect time ckptd hands the client a shared
 * staging buffer (a memfd passed with SCM_RIGHTS), and ckpt_write() copies the
 * caller's bytes into it once.  That copy is the trainer's whole stall; the
 * disk is written by ckptd in the background.
 *
 * Errors.  Every function that returns int returns 0 (or a documented
 * non-negative count) on success and a negative value on failure: either a
 * negated errno (-ENOENT, -EACCES, -ENOSPC, ...) or one of the CKPT_E* codes
 * below.  ckpt_strerror() describes both.  errno is never used as a side
 * channel.
 *
 * Ownership.  A struct ckpt_client is owned by the caller of ckpt_connect()
 * and released by ckpt_disconnect().  A struct ckpt_version belongs to the
 * client it was begun on; free it with ckpt_version_free() before the client
 * is disconnected.  Arrays returned by the list functions are owned by the
 * caller and released with free().
 *
 * Growing structs.  The structs this header lets the library fill
 * (struct ckpt_status, struct ckpt_version_info, struct ckpt_file_info,
 * struct ckpt_node_info, struct ckpt_plan_entry) only
 * ever grow at the end: a field is never removed, moved or retyped, and a new
 * one is appended.  Each has a call that takes the size the caller was
 * compiled with, in the manner of openat2(2) and sched_getattr(2):
 *
 *	struct ckpt_status s;
 *	int known = ckpt_status2(c, &s, sizeof(s));
 *
 * The library writes exactly size bytes at out and nothing past them: the
 * first min(size, its own sizeof) bytes of its struct, then zeros for any
 * bytes it does not know (fields a newer header added).  It returns its own
 * sizeof (> 0), so a field is known to this library when it ends at or below
 * both size and the return value.  size 0 writes nothing (out may be NULL).
 * A program built against an older header therefore keeps working with a
 * newer library, and the reverse.  The original calls (ckpt_status(),
 * ckpt_stat_version(), ckpt_stat_file()) fill exactly the fields of the
 * structs' first release, CKPT_*_SIZE_VER0 bytes, forever; new fields are
 * read through the *2 calls.  The list calls return arrays: the *2 ones
 * (ckpt_list_versions2(), ckpt_list_files2(), and those born with a size:
 * ckpt_list_parts(), ckpt_list_nodes()) make each element size bytes
 * filled by the same rule, so a caller passing sizeof indexes the array as
 * usual; the original ones keep the first release's element size.
 *
 * Threads.  One client may be used from several threads; calls on it are
 * serialised internally, except the copies of ckpt_write() into staging,
 * which run at once for writers on several threads.  A commit or abort of
 * a version waits for the writes of it in progress on other threads, each
 * of which goes into the version whole; a write, namespace call or
 * ckpt_buf_submit() that starts after the commit began is refused with
 * -CKPT_ESEALED and sends nothing.  ckpt_version_free() must not run while
 * another thread still calls on that version.  Callbacks of
 * ckpt_write_async() run on a library thread and must not call back into
 * the same client.
 *
 * Names.  A job is one or more '/'-separated components ("llama70b/run3"), a
 * version is one component ("step-001200"), and a file path is a relative
 * path of one or more components ("model/rank03.pt").  A component is 1 to
 * 255 bytes of anything but '/' and NUL (spaces, punctuation, UTF-8: the
 * POSIX rule) and is neither "." nor "..".  A job may be
 * at most CKPT_JOB_MAX bytes, a version CKPT_VERSION_MAX and a path
 * CKPT_PATH_MAX2 (PATH_MAX less its NUL).  Every call taking a path takes
 * up to CKPT_PATH_MAX2 bytes; a longer path, or a component longer than 255
 * bytes, is -ENAMETOOLONG (any other bad name -CKPT_EBADNAME).
 *
 * Long paths and the first release's structs.  struct ckpt_file_info and
 * struct ckpt_plan_entry embed path[CKPT_PATH_MAX + 1], the first release's
 * limit, which they keep.  Their name field (appended) points at the whole
 * path, whatever its length.  A path longer than CKPT_PATH_MAX leaves
 * path[] empty ("", never a truncated path), and a call whose caller's size
 * ends before name (ckpt_list_files(), ckpt_stat_file(), or a *2 call from
 * a program built before name) fails with -ENAMETOOLONG rather than hand
 * out an entry without its path.
 */
#ifndef CKPT_H
#define CKPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKPT_JOB_MAX     200
#define CKPT_VERSION_MAX 128
/* The first release's path limit: the size of path[] in struct
 * ckpt_file_info and struct ckpt_plan_entry (see "Long paths" above). */
#define CKPT_PATH_MAX    1024
/* The longest path inside a version: PATH_MAX (4096) less its NUL. */
#define CKPT_PATH_MAX2   4095
/* Largest file size, and largest offset + length of a write: 16 TiB.  A
 * truncate or write past it gets -EFBIG. */
#define CKPT_FILE_MAX    (1ull << 44)

/* Default socket when neither an argument nor $CKPT_SOCKET names one. */
#define CKPT_DEFAULT_SOCKET "/var/lib/ckpt/ckptd.sock"

/*
 * Library error codes.  They sit in a reserved range, far from errno values,
 * as LMDB's MDB_* codes do.  Returned negated, like errno values.
 */
enum {
	CKPT_EFIRST    = 30600,
	CKPT_EBADMAGIC = 30600, /* a frame or file does not start with our magic */
	CKPT_EVERSION  = 30601, /* protocol or format version not supported */
	CKPT_EPROTO    = 30602, /* malformed message */
	CKPT_ECORRUPT  = 30603, /* checksum mismatch: stored data is damaged */
	CKPT_ESEALED   = 30604, /* the version is already committed */
	CKPT_EABORTED  = 30605, /* the version failed or a writer left it */
	CKPT_EBADNAME  = 30606, /* job, version or path is not a valid name */
	CKPT_ENOVERSION= 30607, /* no such version (or none at that level) */
	CKPT_EFAILED   = 30608, /* the version failed to reach the level */
	CKPT_ENOJOB    = 30609, /* no such job on this node */
	CKPT_ELOST     = 30610, /* no source can serve it: its node, more
				 * than m of its shards and any PFS copy are
				 * gone (ckpt_plan()) */
	CKPT_EUNPUBLISHED = 30611, /* rm of a part whose version is not
				 * published on the PFS yet: its local copy
				 * stays (rm again removes the part there too) */
	CKPT_ESKIPPED  = 30612, /* a wait for a level only the drain gives, on
				 * a version that will never be drained: a
				 * newer one superseded it ([drain] every),
				 * or [drain] keep retired its PFS copy */
	CKPT_ETARGET   = 30613, /* the [drain] target is not the one this
				 * node drains to: it lacks its mark (a PFS
				 * not mounted?); see ckptctl drain
				 * --adopt-target */
	CKPT_EBASE     = 30614, /* rm from the PFS of a version that a newer
				 * drained version takes chunks from (its
				 * incremental base): it stays until that
				 * one is removed */
	CKPT_ECHANGED  = 30615, /* ckpt_remove_if(): the version is no longer
				 * the one the caller saw (written again, it
				 * lost the copy the removal would take, or
				 * another rm was refused meanwhile, which
				 * changed what the next one does); nothing
				 * was removed */
	CKPT_ECUTSHORT = 30616, /* a commit refused: a file of the version
				 * may be cut short (its writer died with it
				 * open: CKPT_XATTR_FAILED); the version
				 * stays open, and its writer may commit once
				 * the file is removed or rewritten from 0.
				 * The mount says EIO */
	CKPT_ELAST     = 30616,
};

/* Durability levels a version climbs.  See README.md. */
enum ckpt_level {
	CKPT_NONE = 0,      /* still open: being written */
	CKPT_STAGED = 1,    /* all bytes are in ckptd's staging memory */
	CKPT_LOCAL,         /* sealed and fsync'd on this node's local store */
	CKPT_PROTECTED,     /* erasure-coded across peer nodes */
	CKPT_DRAINED,       /* published on the parallel file system */
};

/* Lifecycle state of a version, orthogonal to its level. */
enum ckpt_state {
	CKPT_ST_OPEN = 1,   /* writers are still writing */
	CKPT_ST_SEALING,    /* every writer committed; becoming LOCAL */
	CKPT_ST_SEALED,     /* committed and immutable */
	CKPT_ST_FAILED,     /* a write or fsync failed, or a writer left */
	CKPT_ST_INCOMPLETE, /* found uncommitted after a crash; cleaned up */
	CKPT_ST_DAMAGED,    /* its local copy failed a check at start-up and
			     * was moved to quarantine (see reason) */
};

/* Where this node's part of a version stands with its drain to the PFS
 * (ckpt_version_info.drain), on a node with a [drain] target: why a sealed
 * version is not DRAINED yet, or will not be. */
enum ckpt_drain_state {
	CKPT_DS_NONE = 0,   /* not to be drained: no [drain] target, not
			     * sealed, or another node's part */
	CKPT_DS_QUEUED,     /* waits for a copy thread (or for the
			     * drain to be resumed: ckptctl status) */
	CKPT_DS_RETRY,      /* an attempt failed (drain_error): tried
			     * again in drain_retry_ms */
	CKPT_DS_RUNNING,    /* being copied */
	CKPT_DS_PUBLISH,    /* this part is on the PFS; the version is
			     * published once all its parts are (a
			     * drain_error is the last publish's) */
	CKPT_DS_DONE,       /* on the PFS */
	CKPT_DS_SKIPPED,    /* superseded by a newer version before its
			     * turn ([drain] every): never drained */
	CKPT_DS_RETIRED,    /* was on the PFS; [drain] keep removed it */
};

/* Bytes of ckpt_version_info's holders (node names and spaces; a list
 * longer than this ends at the last name that fits). */
#define CKPT_HOLDERS_MAX 1023

/* Where a version's copies are (ckpt_version_info.copies). */
#define CKPT_COPY_LOCAL       0x1u /* readable from this node's store */
#define CKPT_COPY_PFS         0x2u /* drained: readable from the PFS */
#define CKPT_COPY_QUARANTINE  0x4u /* a damaged local copy is kept aside
				    * in <store>/quarantine for inspection */
#define CKPT_COPY_PEERS       0x8u /* erasure-coded: peers hold its shards */

#define CKPT_REASON_MAX 127
#define CKPT_HOST_MAX 63     /* host names in ckpt_version_info */

struct ckpt_client;
struct ckpt_version;

struct ckpt_version_info {
	char job[CKPT_JOB_MAX + 1];
	char version[CKPT_VERSION_MAX + 1];
	uint32_t state;    /* enum ckpt_state */
	uint32_t level;    /* enum ckpt_level reached */
	uint32_t uid;      /* owner */
	uint32_t writers;  /* writers that joined this node's part */
	uint32_t committed;/* writers that committed */
	uint32_t nfiles;
	uint64_t bytes;    /* logical bytes (sum of file sizes) */
	uint64_t stored;   /* bytes written to the local store so far */
	uint64_t seq;      /* commit order on this node; 0 while open */
	uint64_t sealed_ns;/* CLOCK_REALTIME of the seal, 0 while open */
	int32_t error;     /* why it failed, when state is FAILED */
	uint32_t copies;   /* CKPT_COPY_* */
	char reason[CKPT_REASON_MAX + 1]; /* DAMAGED: what failed, else "" */
	/* end of the first release (CKPT_VERSION_INFO_SIZE_VER0); append below */
	/* Writer stalls: the time each writer's writes were blocked (waiting
	 * for staging or for ring space), as its libckpt measured it and sent
	 * with its commit.  Kept in ckptd's memory only: 0 after a restart. */
	uint32_t stall_writers;  /* writers that reported one */
	int32_t slow_rank;       /* the slowest writer's rank, -1 if unknown */
	uint64_t stall_p50_ns;   /* median over the writers */
	uint64_t stall_p99_ns;
	uint64_t stall_max_ns;   /* the slowest writer's */
	uint32_t slow_pid;       /* the slowest writer's pid (0: none) */
	char slow_host[CKPT_HOST_MAX + 1]; /* and its host */
	/* In a cluster (see ckpt_begin2()): the parts the version has, and
	 * how many are sealed; state and level above are then the whole
	 * version's (OPEN until every part is sealed; the lowest level of its
	 * parts).  Alone: nparts 1.  node: the node of a part listed by
	 * ckpt_list_parts(), else "". */
	uint32_t nparts;
	uint32_t parts_sealed;
	char node[CKPT_HOST_MAX + 1];
	/* The drain of this node's part (enum ckpt_drain_state; none in
	 * the entries of other nodes' parts): while it waits to be tried
	 * again, the last attempt's error, the attempts that failed in a
	 * row, and the milliseconds until the next. */
	uint32_t drain;
	int32_t drain_error;     /* 0, or a negative errno / CKPT_E* code */
	uint32_t drain_tries;
	uint32_t drain_retry_ms;
	/* 1: an rm of this node's part was refused (CKPT_EUNPUBLISHED), so
	 * the next rm removes the part from the PFS too; 0 otherwise. */
	uint32_t rm_part_pfs;
	/* A part's shards on its peers (ckpt_list_parts() in a cluster; 0
	 * and "" elsewhere): of the shards its holders keep (k+m-1), how
	 * many have their holder up now, and the holders as its holder record
	 * names them, in shard order, separated by spaces ("" for a part never
	 * erasure-coded). */
	uint32_t shards;
	uint32_t shards_up;
	char holders[CKPT_HOLDERS_MAX + 1];
};

/*
 * POSIX attributes of a file in a version, kept in its manifest: set with
 * ckpt_setattr() while the version is open, reported in ckpt_file_info.
 * Only the fields whose bit is in set mean anything; a file whose writer set
 * none (or stored by a ckptd before attributes) has set = 0, and readers
 * apply their defaults (ckptfs: the owner, 0600, the seal time).  ckptd
 * keeps them as data: it never uses uid, gid or mode for access control.
 */
#define CKPT_ATTR_MODE  0x01u  /* mode: permission bits (07777), with
				* a file type (CKPT_ATTR_IFMT) or none */
#define CKPT_ATTR_UID   0x02u
#define CKPT_ATTR_GID   0x04u
#define CKPT_ATTR_ATIME 0x08u
#define CKPT_ATTR_MTIME 0x10u
#define CKPT_ATTR_ALL   0x1fu
/*
 * File types in mode (the S_IF* values of Linux).  None: a regular file.
 * IFLNK: a symbolic link, its bytes are the target (at most 4095, no NUL),
 * set once the target is written.  IFIFO, IFSOCK, IFCHR, IFBLK: a special
 * file kept as metadata only (no bytes; rdev says which device): ckptd
 * never makes one on the PFS (an empty 0600 file stands there), and
 * `ckptctl restore` makes it again with mknod.  A setattr whose mode has
 * no type keeps the file's (a chmod).
 */
#define CKPT_ATTR_IFMT  0170000u
#define CKPT_ATTR_IFLNK 0120000u
#define CKPT_ATTR_IFIFO 0010000u
#define CKPT_ATTR_IFCHR 0020000u
#define CKPT_ATTR_IFBLK 0060000u
#define CKPT_ATTR_IFSOCK 0140000u
/* IFDIR: a directory's own attributes, an entry with no bytes under the
 * directory's path (the files below it keep their own paths; ckptd has no
 * directories otherwise).  ckptfs keeps one per directory when it commits
 * a version; the PFS copy and `ckptctl restore` give the directory its
 * mode and times (and make it when it is empty). */
#define CKPT_ATTR_IFDIR 0040000u

struct ckpt_attr {
	uint32_t set;      /* CKPT_ATTR_* bits: given (setattr), or ever set */
	uint32_t mode;     /* permission bits (07777) | a CKPT_ATTR_IF* type */
	uint32_t uid;
	uint32_t gid;
	uint64_t atime_ns; /* CLOCK_REALTIME nanoseconds */
	uint64_t mtime_ns;
	uint64_t ctime_ns; /* ckptd's clock at the last ckpt_setattr();
			    * ignored in a setattr */
	uint64_t rdev;     /* IFCHR, IFBLK: the device (set with MODE) */
};

/* Bytes of a file's extended attributes in all (see ckpt_getxattrs()). */
#define CKPT_XATTR_MAX 4096

/*
 * A file whose writer died with it open (ckptfs: a file open for writing
 * was closed by a process killed by a signal or exiting non-zero, and no
 * normal close of that open file followed, as a parent's after its forked
 * child died) may be cut short.  ckptfs marks it during the dying close,
 * so the mark is there before the writer's death can be seen (waitpid()).  ckptfs gives it this extended attribute, whose value
 * says which pid and why ("pid 4242 killed by signal 9"), and lists it
 * with CKPT_FILE_FAILED.  The rest of its version goes on, but no commit
 * of the version (ckpt_commit(), ckpt_commit_name(), the mount's) is taken
 * while a live file has it: each is refused with -CKPT_ECUTSHORT (EIO
 * through the mount), and the logs name
 * the file.  It goes with the file (unlink), or when the file is rewritten
 * from offset 0 (truncated to 0: ckpt_truncate(), O_TRUNC or truncate()
 * through the mount).  The mount refuses to set or remove it by hand
 * (EPERM).
 */
#define CKPT_XATTR_FAILED "user.ckpt.failed"
/* struct ckpt_file_info's flags. */
#define CKPT_FILE_FAILED 0x1u     /* has CKPT_XATTR_FAILED */

struct ckpt_file_info {
	char path[CKPT_PATH_MAX + 1]; /* "" if longer than CKPT_PATH_MAX:
				       * see name */
	uint64_t size;
	uint32_t extents;  /* stored records (a record is checksummed whole) */
	/* end of the first release (CKPT_FILE_INFO_SIZE_VER0); append below */
	struct ckpt_attr attr; /* ckptd before attributes: all 0 */
	uint64_t ino;      /* the file behind the name: the names of one
			    * version listed with the same ino are hard
			    * links of one file (ckpt_link()); 1.., 0 from
			    * a ckptd before links */
	uint32_t nlink;    /* the names that file has in the version
			    * (0 from a ckptd before links: 1) */
	const char *name;  /* the whole path (up to CKPT_PATH_MAX2 bytes),
			    * NUL-terminated: ckpt_list_files2() sets it
			    * for every entry, pointing into the array's
			    * own allocation (the one free() frees it);
			    * ckpt_stat_file2() sets it to NULL (the path
			    * is the one asked for) */
	uint64_t data;     /* bytes of it that hold data, at most size: on
			    * the node holding it, the bytes written
			    * (rewrites counted again: an upper bound), or
			    * of a PFS copy the chunks stored with bytes;
			    * from another node, the bytes its part's
			    * manifest maps to data (exact); the rest reads
			    * as zeros (holes: ckpt_seek_data()) */
	uint32_t flags;    /* CKPT_FILE_*; 0 from a ckptd before them */
};

/* Grows at the end only: see "Growing structs" at the top. */
struct ckpt_status {
	uint32_t proto_version;
	uint32_t clients;        /* connected clients */
	uint32_t jobs;
	uint32_t versions;       /* versions known, in any state */
	uint32_t open_versions;
	uint32_t queue_depth;    /* disk operations in flight */
	uint64_t staging_total;  /* staging budget, bytes */
	uint64_t staging_used;   /* staging leased to clients */
	uint64_t capacity;       /* local store capacity, bytes */
	uint64_t store_used;     /* bytes of segments in use */
	uint64_t ingest_bytes;   /* total bytes absorbed since start */
	uint64_t ingest_rate;    /* bytes/s over the last few seconds */
	uint64_t uptime_ms;
	uint64_t pid;
	char store[256];         /* store directory */
	/* the drain to the parallel file system */
	uint32_t drain_queued;   /* versions waiting to drain */
	uint32_t drain_running;  /* versions being copied now */
	uint32_t drain_paused;   /* 1 while paused (ckptctl drain --pause) */
	uint32_t drain_errors;   /* failed attempts since start */
	uint64_t drain_bytes;    /* bytes written to the PFS since start */
	uint64_t drain_rate;     /* bytes/s now */
	uint64_t drain_bandwidth;/* the cap in bytes/s, 0 = none */
	int32_t drain_last_error;/* of the last failed attempt, or 0 */
	char drain_target[256];  /* "" when there is no drain */
	char drain_last_path[256];/* the file the last failure named */
	/* end of the first release (CKPT_STATUS_SIZE_VER0); append below */
	/* the cluster: this node's name ("" alone), the peers of its group,
	 * and how many of them have an authenticated link up */
	char node[64];
	uint32_t peers;
	uint32_t peers_up;
	/* the cluster's erasure coding (0+0 alone), this node's parts being
	 * protected (queued: waiting or running; done and failures since
	 * start; shard bytes the holders acknowledged since start), the
	 * shards it holds for its peers, and the peers that lag: the oldest
	 * request unanswered for seconds, or MiB queued ("n3 12.0s 24MiB") */
	uint32_t ec_k, ec_m;
	uint32_t protect_queued;
	uint32_t protect_done;
	uint32_t protect_failures;
	uint64_t protect_bytes;
	uint64_t shards_held;
	uint64_t shard_bytes;
	uint64_t shards_bad;     /* held shards that failed their CRC check
				  * (at start), set aside */
	char peers_lagging[256];
	/* the rebuild of this node's parts from its peers' shards (a new
	 * store under this node's name, or ckptctl rebuild): state
	 * (CKPT_REBUILD_*), parts found, rebuilt and unrecoverable, their
	 * bytes and those fetched so far, and the holders not asked yet */
	uint32_t rebuild_state;
	uint32_t rebuild_parts;
	uint32_t rebuild_parts_done;
	uint32_t rebuild_parts_lost;
	uint64_t rebuild_bytes;
	uint64_t rebuild_bytes_done;
	char rebuild_waiting[256];
	/* membership: this node's sealed parts below full redundancy now
	 * (neither on the PFS nor with every shard's holder up: LOCAL only,
	 * or PROTECTED with a holder down), parts protected again since start
	 * (a holder down past [cluster] reprotect_after, or no longer
	 * listed), parts placed on other holders than the computed ones
	 * since start, and why the first part that waits for holders waits
	 * ("" when none does) */
	uint32_t parts_degraded;
	uint32_t reprotect_done;
	uint32_t holders_replaced;
	char protect_waiting[256];
	/* the room this node gives its peers' shards: bytes reserved for
	 * shards being written (each its whole size from its first chunk),
	 * shards being written, requests refused for room and unsealed
	 * shards dropped (their attempt abandoned) since start, bytes a
	 * peer's shard may still be given now, and the bytes kept for this
	 * node's own parts ([cluster] holder_reserve as applied) */
	uint64_t shard_reserved;
	uint32_t shards_open;
	uint32_t shards_refused_space;
	uint32_t shards_dropped;
	uint64_t shard_room;
	uint64_t holder_reserve;
	/* parts of nodes gone for good this node is taking over now (0 or
	 * 1) and has taken over since start (cluster/adopt.c) */
	uint32_t parts_adopting;
	uint32_t parts_adopted;
};

/* struct ckpt_status's rebuild_state. */
enum ckpt_rebuild_state {
	CKPT_REBUILD_NONE = 0,    /* none since start */
	CKPT_REBUILD_RUNNING,     /* asking holders, or rebuilding parts */
	CKPT_REBUILD_DONE,        /* the last one is over */
};

/*
 * The nodes of a cluster as this node sees them (ckpt_list_nodes()): each
 * peer's link state, since when, why it last failed, when it was last
 * heard and how far behind it is.  A peer is DOWN from the moment its link
 * fails (a reset, or nothing heard for [cluster] heartbeat_timeout) until
 * a new link is authenticated; CONNECTING while one is being made.
 */
enum ckpt_node_state {
	CKPT_NODE_DOWN = 1,       /* no link */
	CKPT_NODE_CONNECTING,     /* a link being made (the handshake) */
	CKPT_NODE_UP,             /* an authenticated link */
	CKPT_NODE_SELF,           /* the node that answered */
};
/* heard_ms_ago of a node never heard since this ckptd started. */
#define CKPT_NODE_NEVER UINT64_MAX

/* Grows at the end only: see "Growing structs" at the top. */
struct ckpt_node_info {
	char name[CKPT_HOST_MAX + 1];   /* as in the node list */
	char domain[CKPT_HOST_MAX + 1]; /* its failure domain ("": its own) */
	uint32_t state;          /* enum ckpt_node_state */
	int32_t last_error;      /* why its link last failed (a negative
				  * errno, ckpt_strerror()); 0: none since
				  * it was last UP, and always 0 while UP */
	uint64_t since_ms_ago;   /* ms since it last went UP or stopped
				  * being UP (since this ckptd started if
				  * never); SELF: this ckptd's uptime */
	uint64_t heard_ms_ago;   /* ms since a byte last came from it, or
				  * CKPT_NODE_NEVER; SELF: 0 */
	uint64_t lag_ms;         /* age of its oldest unanswered request
				  * (0: none), while UP */
	uint64_t queued_bytes;   /* bytes queued to it, not yet sent */
};

/* Bytes of each struct's first release (LIBCKPT_1): the end of its last
 * field then.  The growth rule above; never changes. */
#define CKPT_STATUS_SIZE_VER0 \
	(offsetof(struct ckpt_status, drain_last_path) + 256)
#define CKPT_VERSION_INFO_SIZE_VER0 \
	(offsetof(struct ckpt_version_info, reason) + CKPT_REASON_MAX + 1)
#define CKPT_FILE_INFO_SIZE_VER0 \
	(offsetof(struct ckpt_file_info, extents) + sizeof(uint32_t))

/* Connect to ckptd.  socket_path NULL: $CKPT_SOCKET, else CKPT_DEFAULT_SOCKET.
 * The staging lease is taken on the first write or read: $CKPT_STAGING bytes
 * if set (suffixes K, M, G), else ckptd's staging_client, and at most the
 * uid's share of ckptd's staging ([ckptd] staging_per_uid; a larger request
 * gets a lease of the share).  That first call waits while ckptd has no
 * staging to spare for the uid, at most ckptd's staging_wait (30 s by
 * default), then fails with -ENOBUFS (and ckptd logs who holds the staging).
 *
 * ckptd refuses a connection when the uid already has [ckptd]
 * max_conns_per_uid connections (root has no limit), or when ckptd is out of
 * file descriptors: ckpt_connect() succeeds, and the first call fails with
 * -EUSERS or -EMFILE respectively. */
int ckpt_connect(const char *socket_path, struct ckpt_client **out);
/* Take the staging lease now rather than on the first write or read, and
 * report its size: a trainer calls this at start-up so that its first
 * checkpoint does not pay for it.  Waits as the first write does (see
 * ckpt_connect: -ENOBUFS after ckptd's staging_wait).  size may be NULL. */
int ckpt_staging(struct ckpt_client *c, size_t *size);
/* ckpt_staging() waiting at most timeout_ms (< 0: as ckpt_staging()).
 * -ETIMEDOUT if no lease came in time: the request stays queued in ckptd,
 * and the next call (or write) waits on for it rather than asking again, so
 * a caller that must stay responsive (to signals, say) waits in slices. */
int ckpt_staging_timed(struct ckpt_client *c, int timeout_ms, size_t *size);
/* The size of lease c asks for when it takes one (ckpt_staging*(), or its
 * first write or read): bytes, in place of $CKPT_STAGING and ckptd's
 * staging_client (0: those again).  A reader needs twice the pieces it
 * reads (ckpt_read() moves at most half the lease at a time), so one that
 * reads a few MiB at a time leaves the rest of ckptd's staging to writers.
 * ckptd gives at least 4 MiB and at most the uid's share.  -EALREADY once c
 * holds a lease or has asked for one. */
int ckpt_staging_request(struct ckpt_client *c, size_t bytes);
/* Where c's staging lease is mapped in this process: *addr, *len bytes
 * (taking the lease first, as ckpt_staging()).  For registering it with a
 * GPU runtime (cudaHostRegister), so that device-to-host copies into
 * ckpt_buf_get() buffers run at the pinned-memory rate (on an H200, 0.97
 * of a copy into pinned memory with four pieces in flight, against 0.2
 * unregistered: docs/benchmarks.md).  The mapping is libckpt's: it stays
 * until ckpt_staging_release() or ckpt_disconnect(), which unmap it;
 * unregister it before either.  A later lease may be mapped elsewhere.
 * 0 or -errno (as ckpt_staging()). */
int ckpt_staging_map(struct ckpt_client *c, void **addr, size_t *len);
/* Give the staging lease back to ckptd and keep the connection and the
 * versions open on it: for a client that will be idle a while.  Waits until
 * ckptd has acknowledged every write sent; cancels a request for a lease
 * still queued.  The next write or read takes a lease again.  0 (also when
 * there is no lease), or -EBUSY while a ckpt_buf_get() buffer is held or a
 * ckpt_write_async() copy is pending. */
int ckpt_staging_release(struct ckpt_client *c);
/* Close the connection.  Versions still open on it that were not committed
 * are aborted by ckptd.  NULL is a no-op. */
void ckpt_disconnect(struct ckpt_client *c);

/* Start or join a version.  Several processes may begin the same job and
 * version; the node's part is sealed when each of them has committed.
 * -CKPT_ESEALED if it is already committed, -EACCES if the job belongs to
 * another uid, -CKPT_EBADNAME for an invalid name. */
int ckpt_begin(struct ckpt_client *c, const char *job, const char *version,
	       struct ckpt_version **out);

/* ckpt_begin() on behalf of uid: the job is created owned by uid, and
 * joining it checks uid.  Only root may name another uid (-EPERM); this is
 * how ckptfs, running as root, writes for the users of its mount.
 * uid CKPT_UID_SELF is the caller, as ckpt_begin(). */
#define CKPT_UID_SELF 0xffffffffu
int ckpt_begin_as(struct ckpt_client *c, const char *job, const char *version,
		  uint32_t uid, struct ckpt_version **out);

/*
 * In a cluster of ckptd nodes a version has one part per node that writes
 * it; it is complete (listed COMMITTED, a candidate for ckpt_latest) only
 * when every part is committed, and its level is the lowest of its parts'.
 * ckpt_begin2() is ckpt_begin_as() that says how many parts (nodes) the
 * version has: nparts 0 takes $CKPT_NODES, else $SLURM_JOB_NUM_NODES, else
 * what the version's first writer on this node said, else 1.  ckpt_begin()
 * and ckpt_begin_as() are ckpt_begin2() with nparts 0.  Every writer of
 * the version on a node must say the same count (-EINVAL otherwise), and it
 * may not exceed the cluster's nodes (-EINVAL).  A ckptd that is not in a
 * cluster takes every count as 1.
 */
#define CKPT_NODES_MAX 4096
int ckpt_begin2(struct ckpt_client *c, const char *job, const char *version,
		uint32_t uid, uint32_t nparts, struct ckpt_version **out);

/* Write len bytes of buf at offset of file path in the version.  Returns once
 * buf may be reused: after one copy into staging, never waiting for the disk.
 * Blocks only while staging is full.  Errors of the background disk write
 * (-ENOSPC, -EIO) surface on a later call on the version or on commit.
 * The version's state is checked before the bytes: once a commit or abort
 * has begun, every write (even of no bytes) gets -CKPT_ESEALED, and then a
 * NULL buf with a len, or a range past 2^64, gets -EINVAL.  The same order
 * holds for ckpt_write_async(), which refuses at once (its done never
 * runs) what ckpt_write() would refuse. */
int ckpt_write(struct ckpt_version *v, const char *path, const void *buf,
	       size_t len, uint64_t offset);

/* Asynchronous write: queues the copy to a library thread and returns at
 * once.  buf must stay valid until done(arg, status) has run (status as for
 * ckpt_write).  done may be NULL.  ckpt_flush() waits for all of them. */
typedef void (*ckpt_done_fn)(void *arg, int status);
int ckpt_write_async(struct ckpt_version *v, const char *path, const void *buf,
		     size_t len, uint64_t offset, ckpt_done_fn done, void *arg);
/* Wait until every ckpt_write_async() on v has finished copying; returns the
 * first error any of them had. */
int ckpt_flush(struct ckpt_version *v);

/* Zero-copy: reserve len bytes of staging (len <= ckpt_buf_max()) and return
 * a pointer the caller fills, e.g. as a cudaMemcpy destination.  Then hand it
 * over with ckpt_buf_submit() or give it back with ckpt_buf_cancel().
 * Reservations are released in the order they were taken.  Either call on a
 * pointer that is not a buffer ckpt_buf_get() lent and nobody has handed
 * back yet answers -EINVAL and changes nothing (staging the library is
 * filling for a ckpt_write() is never lent); a pointer already handed back
 * may name a buffer lent again since, as with free().  A submit refused
 * with -CKPT_ESEALED leaves the buffer lent: cancel it (or free the
 * version: ckpt_version_free() gives back the buffers still lent for it).
 * A buffer is the version's: cancelling it through another version is
 * -EINVAL.  While staging is full, a write, ckpt_buf_get() or a read waits
 * for ckptd to write out what was submitted and for other threads' copies,
 * but never for lent buffers, which only their holder can give back: when
 * those (and nothing in flight) fill staging, it answers -ENOBUFS. */
size_t ckpt_buf_max(struct ckpt_client *c);
int ckpt_buf_get(struct ckpt_version *v, size_t len, void **buf);
int ckpt_buf_submit(struct ckpt_version *v, const char *path, void *buf,
		    size_t len, uint64_t offset);
int ckpt_buf_cancel(struct ckpt_version *v, void *buf);

/* Namespace changes inside an open version, in order with this writer's
 * writes.  ckpt_truncate() sets path's size (creating it empty if needed):
 * bytes past the new size read as zeros if the file grows again.
 * ckpt_unlink() removes a file.  ckpt_rename() renames a file, replacing
 * an existing to; if from names no file but a directory (a prefix of file
 * paths), every file under it moves.  -ENOENT if there is nothing to act on,
 * -CKPT_ESEALED on a committed version. */
int ckpt_truncate(struct ckpt_version *v, const char *path, uint64_t size);
int ckpt_unlink(struct ckpt_version *v, const char *path);
int ckpt_rename(struct ckpt_version *v, const char *from, const char *to);
/* Give the file from of an open version a second name, to (a hard link):
 * from then on both names are one file (its bytes, size, attributes and
 * extended attributes), listed with one ino and nlink 2.  Unlinking or
 * renaming one name leaves the others; renaming a name onto another name
 * of the same file does nothing.  Drained as hard links on the PFS and
 * restored as such by `ckptctl restore`.  -ENOENT (no file from), -EEXIST
 * (to names a file), -CKPT_EBADNAME, -CKPT_ESEALED (committed). */
int ckpt_link(struct ckpt_version *v, const char *from, const char *to);
/* Set the attributes of a file of an open version: the fields whose bit is
 * in a->set (CKPT_ATTR_*); the others keep their value, and ckptd stamps
 * ctime_ns.  -ENOENT if there is no such file, -EINVAL for a bad mode (bits
 * beyond 07777 other than one CKPT_ATTR_IF* type) or set, -EPERM if a
 * caller other than root names a uid but the version's owner or sets a
 * set-uid or set-gid bit, -CKPT_ESEALED on a committed version. */
int ckpt_setattr(struct ckpt_version *v, const char *path,
		 const struct ckpt_attr *a);
/* Set (value not NULL, size bytes, at most 65535) or remove (value NULL)
 * the extended attribute name ("user." names only, 6..255 bytes) of a file
 * of an open version.  A file's attributes take at most CKPT_XATTR_MAX
 * bytes in all, each 3 + name + value.  -ENOENT (no file), -ENODATA
 * (removing a name it does not have), -ENOSPC (over CKPT_XATTR_MAX),
 * -ENOTSUP (not "user."), -ERANGE, -CKPT_ESEALED. */
int ckpt_setxattr(struct ckpt_version *v, const char *path, const char *name,
		  const void *value, size_t size);
/* The extended attributes of a file of any version, packed: records of
 * {u8 name length; name; u16 value length (little-endian); value}, into
 * buf (cap bytes, CKPT_XATTR_MAX is always enough).  Returns the length
 * (0: none), -ENOENT, or -ERANGE if cap is too small. */
int ckpt_getxattrs(struct ckpt_client *c, const char *job, const char *version,
		   const char *path, void *buf, size_t cap);
/* Wait until every byte this client has written to v so far is in ckptd's
 * store (written, not yet sealed: an uncommitted version never survives a
 * ckptd crash).  Returns the first write error, if any. */
int ckpt_sync(struct ckpt_version *v);

/* Seal this writer's share of the version.  Waits for its own async copies,
 * not for the disk.  The version becomes STAGED when every writer that joined
 * has committed, then LOCAL once it is durable.  The last writer's commit
 * (or ckpt_commit_name()) first checks that every name of the version can
 * be made by its drain and restore; if not, the version fails with that
 * error: -ENOTDIR (a file "a" while "a/b" is also a file: give "a" the
 * type CKPT_ATTR_IFDIR, or drop it), -EINVAL (a symbolic link with no
 * target, or a hole at its end), -ENAMETOOLONG (a target past
 * CKPT_PATH_MAX2 bytes), -EISDIR (a directory's entry holding bytes),
 * -EPERM (a hard link to a directory's entry).  A symbolic link whose
 * target holds a NUL, or a hole inside it, fails the version at its seal:
 * ckpt_wait() for CKPT_LOCAL returns -EINVAL.  While a live file of the
 * version has CKPT_XATTR_FAILED the commit is refused, -CKPT_ECUTSHORT,
 * and nothing ends: v stays open for writes and a later commit. */
int ckpt_commit(struct ckpt_version *v);
/* Commit an open version by name, for every writer that joined it (the
 * owner or root only): `ckptctl commit`, for writers that cannot call
 * ckpt_commit() themselves, such as programs writing through ckptfs.
 * Their later writes get -CKPT_ESEALED.  -CKPT_ECUTSHORT (nothing done)
 * as ckpt_commit(). */
int ckpt_commit_name(struct ckpt_client *c, const char *job,
		     const char *version);
/* Give up this writer's share: the version becomes FAILED. */
int ckpt_abort(struct ckpt_version *v);

/* Wait until the version reaches level.  timeout_ms < 0 waits forever.
 * -ETIMEDOUT on timeout, -CKPT_EFAILED (or the cause) if it cannot,
 * -ENOTSUP at once for a level this node cannot give it (PROTECTED or
 * DRAINED on a node without a [drain] target), -CKPT_ESKIPPED once only
 * its drain could give it the level and it will never be drained (a newer
 * version superseded it, `[drain] every`; or `[drain] keep` removed its
 * PFS copy). */
int ckpt_wait(struct ckpt_version *v, enum ckpt_level level, int timeout_ms);
/* The same, by name, for a version begun elsewhere. */
int ckpt_wait_name(struct ckpt_client *c, const char *job, const char *version,
		   enum ckpt_level level, int timeout_ms);
/* NULL is a no-op.  Freeing an uncommitted version does not abort it; the
 * disconnect does. */
void ckpt_version_free(struct ckpt_version *v);

/* Name of the newest committed version of job at min_level or above that
 * can be read whole now (every file has a source, ckpt_plan()), copied
 * into version (cap bytes).  -CKPT_ENOVERSION if there is none. */
int ckpt_latest(struct ckpt_client *c, const char *job,
		enum ckpt_level min_level, char *version, size_t cap);

/* Read up to len bytes at offset of a version's file.  Every byte is
 * verified against its CRC32C; damage gives -CKPT_ECORRUPT, never bad bytes.
 * *nread is short only at end of file.  A version still open may be read
 * too: the read waits for the writes already sent, so a writer reads back
 * what it wrote. */
int ckpt_read(struct ckpt_client *c, const char *job, const char *version,
	      const char *path, void *buf, size_t len, uint64_t offset,
	      size_t *nread);
/* Where ckpt_read_sink() hands the bytes: len bytes at data, which are
 * those of the file at offset.  0 to go on, or a negative error that stops
 * the read and is returned by it. */
typedef int (*ckpt_sink_fn)(void *arg, const void *data, size_t len,
			    uint64_t offset);
/* ckpt_read() without the copy into a buffer: each piece, verified as
 * ckpt_read() verifies, is handed to sink(arg, ...) in file order straight
 * from the client's staging lease (to pwrite it to a file, or cudaMemcpy it
 * to a GPU), while ckptd reads the next piece into another part of it.
 * data is valid only during the call, and sink must not call libckpt on c
 * (c's lock is held).  *nread is the bytes handed to sink; short only at
 * end of file or on error. */
int ckpt_read_sink(struct ckpt_client *c, const char *job,
		   const char *version, const char *path, size_t len,
		   uint64_t offset, ckpt_sink_fn sink, void *arg,
		   size_t *nread);

/* The first run of data of a version's file in [offset, offset + len)
 * (len UINT64_MAX: to its end): *data where it starts, *data_len its bytes
 * up to the first hole or the range's end (a run of more than 65536
 * records or chunks comes in parts: ask again from its end).  The bytes of
 * the range outside such runs read as zeros (holes, truncated ranges), so
 * a restore reads only the runs and leaves the rest as holes, as lseek(2)'s
 * SEEK_DATA and SEEK_HOLE allow; a run may also be zeros (past 65536 zero
 * records before any data, one is answered as a run).  -ENXIO if the
 * range holds no data, or offset is at or past the end of the file;
 * otherwise ckpt_read()'s errors.  Where ckptd cannot tell from what it
 * holds in memory (a version with writes in flight), the whole range is
 * one run: correct, only not sparse.  Takes no
 * staging. */
int ckpt_seek_data(struct ckpt_client *c, const char *job,
		   const char *version, const char *path, uint64_t offset,
		   uint64_t len, uint64_t *data, uint64_t *data_len);

/* Listing.  Each returns the number of entries (>= 0) and a malloc'd array
 * in *out that the caller frees, or a negative error. */
int ckpt_list_jobs(struct ckpt_client *c, char (**out)[CKPT_JOB_MAX + 1]);
int ckpt_list_versions(struct ckpt_client *c, const char *job,
		       struct ckpt_version_info **out);
int ckpt_list_files(struct ckpt_client *c, const char *job,
		    const char *version, struct ckpt_file_info **out);
/* The same with elements of size bytes (> 0, else -EINVAL), each filled as
 * ckpt_stat_version2() fills its struct: pass sizeof(**out). */
int ckpt_list_versions2(struct ckpt_client *c, const char *job,
			struct ckpt_version_info **out, size_t size);
/* The parts of job/version across the cluster, one entry per part with its
 * node, state and level (this node's own part included); as
 * ckpt_list_versions2() for size and the return.  Alone, the one part. */
int ckpt_list_parts(struct ckpt_client *c, const char *job,
		    const char *version, struct ckpt_version_info **out,
		    size_t size);
int ckpt_list_files2(struct ckpt_client *c, const char *job,
		     const char *version, struct ckpt_file_info **out,
		     size_t size);
/* The nodes of the cluster as the node that answers sees them, by name,
 * itself included (CKPT_NODE_SELF).  As
 * ckpt_list_versions2() for size and the return (the count); the array
 * is freed with free().  A ckptd that is not in a cluster answers no
 * entries (returns 0, *out an array of none). */
int ckpt_list_nodes(struct ckpt_client *c, struct ckpt_node_info **out,
		    size_t size);

/*
 * The restore plan: where each file of a version would be read from now,
 * and why (ckpt_plan()).  Every read takes the fastest source that can
 * serve the file, in this order, and falls back to the next one when a
 * source fails (a CRC mismatch, a node that went down, a copy gone):
 *
 *   LOCAL   this node's own copy;
 *   OWNER   the node whose part holds the file, over the cluster link;
 *   SHARDS  decoded from k of the k+m shards the part's peers hold;
 *   PFS     the drained copy on the parallel file system.
 *
 * A file none of them can serve (more than m nodes of its group lost
 * before it was drained) has source CKPT_SRC_NONE: the version is
 * unrecoverable, and ckpt_latest() does not answer it.
 */
enum ckpt_source {
	CKPT_SRC_NONE = 0,
	CKPT_SRC_LOCAL,
	CKPT_SRC_OWNER,
	CKPT_SRC_SHARDS,
	CKPT_SRC_PFS,
};

/* Grows at the end only: see "Growing structs" at the top. */
struct ckpt_plan_entry {
	char path[CKPT_PATH_MAX + 1];
	uint64_t size;
	uint32_t source;          /* enum ckpt_source a read takes first */
	uint32_t sources;         /* every source usable now, as bits
				   * (1u << CKPT_SRC_*): the fallbacks */
	char node[CKPT_HOST_MAX + 1]; /* the node whose part holds the file
				   * ("" for a ckptd not in a cluster) */
	char why[CKPT_REASON_MAX + 1]; /* why that source, and why not the
				   * faster ones */
	const char *name;         /* the whole path (up to CKPT_PATH_MAX2
				   * bytes; path[] is "" when it is longer
				   * than CKPT_PATH_MAX), in the array's own
				   * allocation, freed with it */
};

/* The plan of every file of job/version, as the node that answers would
 * read them now; nothing is read.  As ckpt_list_versions2() for size and
 * the return (the count); the array is freed with free(). */
int ckpt_plan(struct ckpt_client *c, const char *job, const char *version,
	      struct ckpt_plan_entry **out, size_t size);
/* The name of a source ("local", "owner", "shards", "pfs", "none"). */
const char *ckpt_source_name(enum ckpt_source src);
/* One version (any state).  Fills the first CKPT_VERSION_INFO_SIZE_VER0
 * bytes of *out; ckpt_stat_version2() fills size bytes and returns the
 * library's sizeof (see "Growing structs" above). */
int ckpt_stat_version(struct ckpt_client *c, const char *job,
		      const char *version, struct ckpt_version_info *out);
int ckpt_stat_version2(struct ckpt_client *c, const char *job,
		       const char *version, struct ckpt_version_info *out,
		       size_t size);
/* One file of a version (any state).  -ENOENT if there is none.  Sizes as
 * for ckpt_stat_version() and ckpt_stat_version2(). */
int ckpt_stat_file(struct ckpt_client *c, const char *job, const char *version,
		   const char *path, struct ckpt_file_info *out);
int ckpt_stat_file2(struct ckpt_client *c, const char *job,
		    const char *version, const char *path,
		    struct ckpt_file_info *out, size_t size);
/* ckptd's state.  ckpt_status2(c, &s, sizeof(s)) fills size bytes of *out
 * and returns the library's sizeof(struct ckpt_status) (size 0: returns it
 * without asking ckptd); -EINVAL if size > INT32_MAX.  ckpt_status() fills
 * the first CKPT_STATUS_SIZE_VER0 bytes and returns 0.  New code calls
 * ckpt_status2(): only it fills fields appended after the first release. */
int ckpt_status(struct ckpt_client *c, struct ckpt_status *out);
int ckpt_status2(struct ckpt_client *c, struct ckpt_status *out, size_t size);

/* Drain control (root, or the daemon's uid): pause or resume every copy to
 * the PFS, or drain job/version next, before anything older and even if
 * [drain] every would skip it.  CKPT_DRAIN_ADOPT takes the target as it is
 * now (its mark, or a new one) after CKPT_ETARGET: a target moved on
 * purpose, not a PFS that failed to mount. */
enum ckpt_drain_cmd { CKPT_DRAIN_PAUSE = 1, CKPT_DRAIN_RESUME, CKPT_DRAIN_NOW,
		       CKPT_DRAIN_ADOPT };
int ckpt_drain(struct ckpt_client *c, enum ckpt_drain_cmd cmd,
	       const char *job, const char *version);

/* Rebuild this node's parts from the shards its peers hold (root, or the
 * daemon's uid): every part of this node's a holder names that this node
 * does not have.  Returns at once (0, or -ENOTSUP with no cluster); the
 * progress is in ckpt_status2()'s rebuild_* fields.  A node whose store is
 * new starts one by itself. */
int ckpt_rebuild(struct ckpt_client *c);

/* Delete a version from this node.  A drained version loses its local copy
 * first and stays listed from the PFS; a second call removes it there (see
 * docs/ckptctl.md, "rm").  -EBUSY while the version is busy for a moment
 * (sealing, being protected or drained, writes in flight, a writer still
 * holding it open, another rm): call again later (ckptctl rm does, for up
 * to its --timeout).  -CKPT_EBASE: a newer drained version refers to it. */
int ckpt_remove(struct ckpt_client *c, const char *job, const char *version);
/* ckpt_remove() of expect->job/expect->version, only if it is still the
 * version expect describes (as ckpt_stat_version() gave it): the same seal
 * (seq, and sealed_ns unless expect's is 0: seen while being sealed) and
 * still holding the local and quarantined copies that expect->copies
 * lists, and with rm_part_pfs as expect's (a refused rm makes the next one
 * take the part from the PFS too).  Otherwise -CKPT_ECHANGED, and nothing
 * is removed.
 * ckptd checks and removes in one step, so two callers that saw the same
 * drained version remove its local copy once; neither takes the PFS copy
 * that the other's removal left as its next one. */
int ckpt_remove_if(struct ckpt_client *c,
		   const struct ckpt_version_info *expect);

const char *ckpt_level_name(enum ckpt_level level);
const char *ckpt_state_name(enum ckpt_state state);
/* "none", "queued", "retry", "running", "publish", "done", "skipped",
 * "retired"; "unknown" for any other value.  Never NULL. */
const char *ckpt_drain_state_name(enum ckpt_drain_state ds);
/* Parse "staged", "local", ... (case-insensitive); -EINVAL if unknown. */
int ckpt_level_parse(const char *s, enum ckpt_level *out);
/* Message for a negative (or positive) errno or CKPT_E* code.  Never NULL. */
const char *ckpt_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* CKPT_H */
