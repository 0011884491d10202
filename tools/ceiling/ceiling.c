/*
 * ceiling.c - the protect ceiling: the least work protection can do on this
 * machine, with no service around it, for tools/bench_protect.sh (make bench).
 *
 *   protect_ceiling [-k K] [-m M] [-p PORT] SIZE_MIB DIR
 *
 * It writes SIZE_MIB MiB to DIR/part (O_DIRECT, not timed), then measures:
 *
 *   disk   K+M-1 threads each write one shard's bytes (SIZE / K) to a file
 *          of DIR with O_DIRECT writes of one chunk, then fdatasync: the
 *          holders' unavoidable disk work;
 *   pipe   the part read back with O_DIRECT a stripe (K chunks of 1 MiB) at
 *          a time by NREADERS threads, each encoding with lib/ec, chunks 1..K+M-1 of every stripe sent
 *          over TCP to K+M-1 holder processes on 127.0.0.2..K+M, each of
 *          which writes its chunks with O_DIRECT and fdatasyncs at the end
 *          before it answers: protection's data path, from the first read to
 *          the last holder's answer;
 *   cpu    user + system CPU of the owner and every holder over pipe.
 *
 * Prints one line:
 *   ceiling K+M: BYTES bytes disk_ns D pipe_ns P cpu_ns C
 *
 * Not a part of ckpt, and not a test.  The pipeline is what a careful
 * hand-written program does: NSLOT stripes in flight between the reader
 * and one sender thread per holder, and in each holder a receiving thread
 * and a writing thread around HSLOT buffers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ec.h"

#define CHUNK (1u << 20)
#define NSLOT 8
#define HSLOT 8
#define NREADERS 3                /* as ckptd's CLUSTER_ENCODERS */

struct hdr {
	uint64_t off;
	uint32_t len;             /* 0: the end */
	uint32_t pad;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static void *dio_alloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

enum xop { X_READ, X_WRITE, X_PWRITE };

/* All of len bytes read or written (X_PWRITE at off), through EINTR and
 * short transfers: 0, or -1 at an error or end of file. */
static int xfer_all(enum xop op, int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = op == X_READ ? read(fd, p, len)
			    : op == X_WRITE ? write(fd, p, len)
			    : pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return xfer_all(X_WRITE, fd, (void *)buf, len, 0);
}

static int read_all(int fd, void *buf, size_t len)
{
	return xfer_all(X_READ, fd, buf, len, 0);
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	return xfer_all(X_PWRITE, fd, (void *)buf, len, off);
}

/* ---- the disk phase ----------------------------------------------------- */

struct dwriter {
	pthread_t t;
	char path[600];
	uint64_t len;
	int err;
};

static void *dwriter_run(void *arg)
{
	struct dwriter *w = arg;
	uint8_t *buf = dio_alloc(CHUNK);
	uint64_t off;
	int fd;

	w->err = -1;
	fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0 || !buf)
		goto out;
	memset(buf, 0x5a, CHUNK);
	for (off = 0; off < w->len; off += CHUNK)
		if (pwrite_all(fd, buf, CHUNK, (off_t)off) < 0)
			goto out;
	if (fdatasync(fd) < 0)
		goto out;
	w->err = 0;
out:
	if (fd >= 0)
		close(fd);
	unlink(w->path);
	free(buf);
	return NULL;
}

static int disk_phase(const char *dir, int n, uint64_t shard_len,
		      uint64_t *ns)
{
	struct dwriter w[EC_MAX_FRAGS];
	uint64_t t0 = now_ns();
	int i, err = 0;

	for (i = 0; i < n; i++) {
		snprintf(w[i].path, sizeof(w[i].path), "%s/disk.%d", dir, i);
		w[i].len = shard_len;
		pthread_create(&w[i].t, NULL, dwriter_run, &w[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		err |= w[i].err;
	}
	*ns = now_ns() - t0;
	return err;
}

/* ---- a holder (its own process) ----------------------------------------- */

struct hring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *buf[HSLOT];
	struct hdr h[HSLOT];
	uint64_t in, out;         /* slots filled, slots written */
	int fd, err;
};

static void *hwriter_run(void *arg)
{
	struct hring *r = arg;

	for (;;) {
		struct hdr h;
		uint8_t *b;

		pthread_mutex_lock(&r->mu);
		while (r->out == r->in)
			pthread_cond_wait(&r->cv, &r->mu);
		h = r->h[r->out % HSLOT];
		b = r->buf[r->out % HSLOT];
		pthread_mutex_unlock(&r->mu);
		if (h.len == 0)
			break;
		if (pwrite_all(r->fd, b, h.len, (off_t)h.off) < 0)
			r->err = -1;
		pthread_mutex_lock(&r->mu);
		r->out++;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	if (fdatasync(r->fd) < 0)
		r->err = -1;
	return NULL;
}

static int holder(int lfd, const char *path)
{
	struct hring r;
	pthread_t t;
	uint8_t ack;
	int s, i;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	for (i = 0; i < HSLOT; i++)
		if (!(r.buf[i] = dio_alloc(CHUNK)))
			return 1;
	r.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	s = accept(lfd, NULL, NULL);
	if (r.fd < 0 || s < 0)
		return 1;
	pthread_create(&t, NULL, hwriter_run, &r);
	for (;;) {
		struct hdr h;
		uint8_t *b;

		pthread_mutex_lock(&r.mu);
		while (r.in - r.out == HSLOT)
			pthread_cond_wait(&r.cv, &r.mu);
		b = r.buf[r.in % HSLOT];
		pthread_mutex_unlock(&r.mu);
		if (read_all(s, &h, sizeof(h)) < 0 || h.len > CHUNK)
			h.len = 0, r.err = -1;
		if (h.len && read_all(s, b, h.len) < 0)
			h.len = 0, r.err = -1;
		pthread_mutex_lock(&r.mu);
		r.h[r.in % HSLOT] = h;
		r.in++;
		pthread_cond_broadcast(&r.cv);
		pthread_mutex_unlock(&r.mu);
		if (h.len == 0)
			break;
	}
	pthread_join(t, NULL);
	ack = r.err ? 1 : 0;
	write_all(s, &ack, 1);
	close(s);
	close(r.fd);
	unlink(path);
	return ack;
}

/* ---- the owner ---------------------------------------------------------- */

struct slot {
	uint8_t *frag[EC_MAX_FRAGS];
	uint64_t stripe;
	uint32_t sends;           /* senders yet to send it */
	uint64_t turn;            /* the stripe it is for next */
	int ready;
};

struct owner {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot slot[NSLOT];
	uint64_t nstripes;
	uint64_t next;            /* the next stripe a reader takes */
	int k, m, fd;
	int err;
};

/* A reader: takes the next stripe, waits for its slot, reads and encodes
 * it into the slot. */
static void *reader_run(void *arg)
{
	struct owner *o = arg;
	size_t len = (size_t)o->k * CHUNK;
	struct ec *ec;

	if (ec_new(o->k, o->m, &ec) < 0)
		return NULL;
	for (;;) {
		struct slot *sl;
		uint64_t s;
		ssize_t got;

		pthread_mutex_lock(&o->mu);
		s = o->next++;
		sl = &o->slot[s % NSLOT];
		while (s < o->nstripes && (sl->ready || sl->turn != s) &&
		       !o->err)
			pthread_cond_wait(&o->cv, &o->mu);
		pthread_mutex_unlock(&o->mu);
		if (s >= o->nstripes || o->err)
			break;
		got = pread(o->fd, sl->frag[0], len, (off_t)(s * len));
		if (got == (ssize_t)len)
			ec_encode(ec, sl->frag, sl->frag + o->k, CHUNK);
		pthread_mutex_lock(&o->mu);
		if (got != (ssize_t)len)
			o->err = -1;
		sl->stripe = s;
		sl->sends = (uint32_t)(o->k + o->m - 1);
		sl->ready = 1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
	}
	ec_free(ec);
	return NULL;
}

struct sender {
	pthread_t t;
	struct owner *o;
	int shard;                /* 1..k+m-1 */
	int fd;
};

static void *sender_run(void *arg)
{
	struct sender *sd = arg;
	struct owner *o = sd->o;
	uint64_t s;

	for (s = 0; s < o->nstripes; s++) {
		struct slot *sl = &o->slot[s % NSLOT];
		struct hdr h = { s * CHUNK, CHUNK, 0 };

		pthread_mutex_lock(&o->mu);
		while (!(sl->ready && sl->stripe == s) && !o->err)
			pthread_cond_wait(&o->cv, &o->mu);
		pthread_mutex_unlock(&o->mu);
		if (o->err)
			break;
		if (write_all(sd->fd, &h, sizeof(h)) < 0 ||
		    write_all(sd->fd, sl->frag[sd->shard], CHUNK) < 0) {
			pthread_mutex_lock(&o->mu);
			o->err = -1;
			pthread_cond_broadcast(&o->cv);
			pthread_mutex_unlock(&o->mu);
			break;
		}
		pthread_mutex_lock(&o->mu);
		if (--sl->sends == 0) {
			sl->ready = 0;
			sl->turn += NSLOT;
			pthread_cond_broadcast(&o->cv);
		}
		pthread_mutex_unlock(&o->mu);
	}
	return NULL;
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int listen_on(const char *ip, int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int make_part(const char *path, uint64_t bytes)
{
	uint8_t *buf = dio_alloc(CHUNK);
	uint64_t off, x = 0x9e3779b97f4a7c15ull;
	size_t i;
	int fd, ret = -1;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0 || !buf)
		goto out;
	for (off = 0; off < bytes; off += CHUNK) {
		for (i = 0; i < CHUNK; i += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memcpy(buf + i, &x, 8);
		}
		if (pwrite_all(fd, buf, CHUNK, (off_t)off) < 0)
			goto out;
	}
	ret = fdatasync(fd);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static int pipe_phase(const char *dir, int k, int m, int port,
		      uint64_t nstripes, uint64_t *ns, uint64_t *cpu)
{
	struct owner o;
	struct sender sd[EC_MAX_FRAGS];
	pthread_t rd[NREADERS];
	pid_t pid[EC_MAX_FRAGS];
	int n = k + m - 1, i, j, fd, status, err = 0;
	uint64_t t0, c0;
	char path[600], ip[32];

	snprintf(path, sizeof(path), "%s/part", dir);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return -1;
	memset(&o, 0, sizeof(o));
	o.fd = fd;
	pthread_mutex_init(&o.mu, NULL);
	pthread_cond_init(&o.cv, NULL);
	o.k = k;
	o.m = m;
	o.nstripes = nstripes;
	for (i = 0; i < NSLOT; i++) {
		uint8_t *data = dio_alloc((size_t)k * CHUNK);

		o.slot[i].turn = (uint64_t)i;
		if (!data)
			return -1;
		for (j = 0; j < k; j++)
			o.slot[i].frag[j] = data + (size_t)j * CHUNK;
		for (j = k; j < k + m; j++)
			if (!(o.slot[i].frag[j] = dio_alloc(CHUNK)))
				return -1;
	}
	for (i = 0; i < n; i++) {
		int lfd;

		snprintf(ip, sizeof(ip), "127.0.0.%d", i + 2);
		lfd = listen_on(ip, port);
		if (lfd < 0) {
			fprintf(stderr, "protect_ceiling: listen %s:%d: %s\n",
				ip, port, strerror(errno));
			return -1;
		}
		pid[i] = fork();
		if (pid[i] == 0) {
			snprintf(path, sizeof(path), "%s/shard.%d", dir, i + 1);
			_exit(holder(lfd, path));
		}
		close(lfd);
	}
	for (i = 0; i < n; i++) {
		snprintf(ip, sizeof(ip), "127.0.0.%d", i + 2);
		sd[i].fd = connect_to(ip, port);
		if (sd[i].fd < 0)
			return -1;
		sd[i].o = &o;
		sd[i].shard = i + 1;
	}
	c0 = cpu_ns(RUSAGE_SELF);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		pthread_create(&sd[i].t, NULL, sender_run, &sd[i]);
	for (i = 0; i < NREADERS; i++)
		pthread_create(&rd[i], NULL, reader_run, &o);
	for (i = 0; i < NREADERS; i++)
		pthread_join(rd[i], NULL);
	for (i = 0; i < n; i++) {
		struct hdr h = { 0, 0, 0 };
		uint8_t ack = 1;

		pthread_join(sd[i].t, NULL);
		if (write_all(sd[i].fd, &h, sizeof(h)) < 0 ||
		    read_all(sd[i].fd, &ack, 1) < 0 || ack)
			err = -1;
	}
	*ns = now_ns() - t0;
	for (i = 0; i < n; i++) {
		close(sd[i].fd);
		if (waitpid(pid[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			err = -1;
	}
	/* The holders' CPU is all of their lives: they did nothing else. */
	*cpu = cpu_ns(RUSAGE_SELF) - c0 + cpu_ns(RUSAGE_CHILDREN);
	close(fd);
	return err | o.err;
}

static void usage(void)
{
	fprintf(stderr, "usage: protect_ceiling [-k K] [-m M] [-p PORT] SIZE_MIB DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int k = 4, m = 2, port = 27000, c;
	uint64_t mib, nstripes, disk_ns, pipe_ns, cpu;
	char path[600];

	while ((c = getopt(argc, argv, "k:m:p:")) != -1) {
		switch (c) {
		case 'k': k = atoi(optarg); break;
		case 'm': m = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || k < 1 || m < 1 || k + m > EC_MAX_FRAGS ||
	    k + m > 250)
		usage();
	mib = strtoull(argv[optind], NULL, 0);
	nstripes = (mib + (uint64_t)k - 1) / (uint64_t)k;
	if (!nstripes)
		usage();
	snprintf(path, sizeof(path), "%s/part", argv[optind + 1]);
	if (make_part(path, nstripes * (uint64_t)k * CHUNK) < 0) {
		fprintf(stderr, "protect_ceiling: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (disk_phase(argv[optind + 1], k + m - 1, nstripes * CHUNK,
		       &disk_ns) < 0 ||
	    pipe_phase(argv[optind + 1], k, m, port, nstripes, &pipe_ns,
		       &cpu) < 0) {
		fprintf(stderr, "protect_ceiling: failed\n");
		unlink(path);
		return 1;
	}
	unlink(path);
	printf("ceiling %d+%d: %llu bytes disk_ns %llu pipe_ns %llu cpu_ns %llu\n",
	       k, m, (unsigned long long)(nstripes * (uint64_t)k * CHUNK),
	       (unsigned long long)disk_ns, (unsigned long long)pipe_ns,
	       (unsigned long long)cpu);
	return 0;
}
