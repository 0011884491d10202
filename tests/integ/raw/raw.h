/*
 * raw.h - the parts of ckpt_raw (tests/integ/ckpt_raw.c, the hostile
 * raw-socket client of the integration tests): one connection to ckptd
 * (conn.c), and the attacks of pipe.c and flood.c.  Each attack returns 0
 * when ckptd behaved as the protocol says, or 1 after printing why not
 * (bad()).  A test program: single-threaded, and it may exit.
 */
#ifndef CKPT_RAW_H
#define CKPT_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define TMO_MS 5000             /* how long any single reply may take */

struct rc {
	const char *sock;
	int fd;
	uint32_t seq;
	uint8_t *map;           /* staging lease, after HELLO */
	size_t lease;
	uint8_t rbuf[PROTO_HDR_LEN + PROTO_MAX_PAYLOAD];
};

/* ---- conn.c ---- */

extern const char *attack_name;   /* the command run, for messages */

/* Print "ckpt_raw: ATTACK: " and the message on stderr; 1. */
int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int64_t now_ms(void);
/* Connect to r->sock (r has none open; its lease is forgotten).  0 or
 * -errno. */
int rc_connect(struct rc *r);
/* Close the connection and unmap the lease, if any. */
void rc_close(struct rc *r);
/* Send all of buf.  0, or -errno (-EPIPE once ckptd closed). */
int send_raw(struct rc *r, const void *buf, size_t len);
/* Encode and send m, with the next seq unless m->seq is set (m->seq says
 * which).  0 or -errno. */
int send_msg(struct rc *r, struct proto_msg *m);
/* Wait up to ms for fd to be readable: 0, or -ETIMEDOUT. */
int readable(int fd, int ms);
/* Receive exactly len bytes; a passed memfd is mapped as the lease.
 * 0, -ECONNRESET at EOF, -ETIMEDOUT, or -errno. */
int recv_exact(struct rc *r, uint8_t *buf, size_t len, int64_t end);
/* Receive and decode one frame.  0, -ECONNRESET, -ETIMEDOUT, or the decode
 * error (a reply ckptd should never send). */
int recv_msg(struct rc *r, struct proto_msg *m, int ms);
/* Send req and wait for the reply of its type and seq, skipping WACKs. */
int rpc(struct rc *r, struct proto_msg *req, struct proto_msg *rep);
/* Wait for the WACK of write id.  0 with *status set, or -errno. */
int wait_wack(struct rc *r, uint32_t id, int *status);
/* Read and drop whatever comes until ckptd closes.  0 once closed,
 * -ETIMEDOUT if it kept the connection open for ms. */
int expect_close(struct rc *r, int ms);
/* HELLO for a lease of size; 0, or 1 (bad()) without a usable lease. */
int hello(struct rc *r, uint64_t size);
/* BEGIN job/version as the caller; 0 with *handle set, or 1 (bad()). */
int begin(struct rc *r, const char *job, const char *version,
	  uint32_t *handle);
/* A header with chosen fields and, if crc_ok, a correct CRC. */
void mkframe(uint8_t *buf, uint32_t magic, uint16_t version,
	     uint16_t type, uint32_t len, uint32_t seq,
	     const void *payload, size_t plen, int crc_ok);
/* Send one crafted frame on a fresh connection; ckptd must close it. */
int frame_closes(struct rc *r, const char *what, uint32_t magic,
		 uint16_t version, uint16_t type, uint32_t len,
		 const void *payload, size_t plen, int crc_ok);
/* Check that the daemon answers a STATUS on a new connection. */
int ping(struct rc *r);

/* ---- pipe.c ---- */

/* Pipelined requests on one version; drained: its local copy dropped by
 * rm after a drain, so reads come from the PFS (needs a [drain] target). */
int pipe_run(struct rc *r, int drained);
int a_pipe(struct rc *r);
/* ckpt_raw waitrm JOB VERSION rm|hold SECONDS (see pipe.c). */
int a_waitrm(struct rc *r, const char *job, const char *version, int rm,
	     int secs);

/* ---- flood.c ---- */

extern uint64_t rng_state;        /* garbage's generator (-S sets it) */

/* frames of random garbage, each checked to be refused or answered. */
int a_garbage(struct rc *r, long frames);
int a_helloheld(struct rc *r);
int a_noread(struct rc *r);
int a_readflood(struct rc *r);
/* WRITEs reusing ring space against a slow disk (needs ckptd's pwrites
 * late: see flood.c). */
int a_wflood(struct rc *r);

#endif
