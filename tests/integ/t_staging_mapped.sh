#!/bin/bash
# t_staging_mapped: staging stays bounded by [ckptd] staging even against
# a client (uid nobody) that keeps the mapping of each memfd it was lent,
# gives it back (RELEASE) and asks again with another size, 16 rounds: the
# freed leases' pages are punched out, so shared memory grows by at most
# staging.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || skip "needs cc"
cat >"$T/keep.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "proto.h"
static int fd;
static uint8_t rbuf[PROTO_HDR_LEN + PROTO_MAX_PAYLOAD];
static void sendm(struct proto_msg *m)
{
	uint8_t f[PROTO_HDR_LEN + 4096];
	int n = proto_encode(f, sizeof(f), m);
	if (n < 0 || send(fd, f, n, 0) != n) { perror("send"); exit(1); }
}
/* one frame; a passed fd is mapped and closed (the mapping stays) */
static void recvm(struct proto_msg *m, size_t *mapped)
{
	union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr a; } u;
	struct msghdr mh; struct iovec iov; struct cmsghdr *cm;
	struct proto_hdr h; size_t got = 0, want = PROTO_HDR_LEN; ssize_t n; int mfd;
	while (got < want) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = rbuf + got; iov.iov_len = want - got;
		mh.msg_iov = &iov; mh.msg_iovlen = 1;
		mh.msg_control = u.b; mh.msg_controllen = sizeof(u.b);
		n = recvmsg(fd, &mh, 0);
		if (n <= 0) { fprintf(stderr, "recv: closed\n"); exit(1); }
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			memcpy(&mfd, CMSG_DATA(cm), sizeof(int));
			off_t sz = lseek(mfd, 0, SEEK_END);
			if (mmap(NULL, sz, PROT_READ, MAP_SHARED, mfd, 0) != MAP_FAILED)
				*mapped += sz;
			close(mfd);
		}
		got += n;
		if (got == PROTO_HDR_LEN && want == PROTO_HDR_LEN) {
			proto_peek(rbuf, PROTO_HDR_LEN, &h);
			want += h.len;
		}
	}
	if (proto_decode(rbuf, want, m, NULL) < 0) { fprintf(stderr, "decode\n"); exit(1); }
}
int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct proto_msg m, r;
	size_t mapped = 0;
	uint32_t seq = 0;
	int i;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	if (connect(fd, (void *)&sa, sizeof(sa)) < 0) { perror("connect"); return 1; }
	for (i = 0; i < 16; i++) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_HELLO; m.seq = ++seq; m.size = (32u - 2 * i) << 20;
		sendm(&m);
		do recvm(&r, &mapped); while (r.seq != m.seq);
		if (r.status) { fprintf(stderr, "hello %d: %d\n", i, r.status); return 1; }
		memset(&m, 0, sizeof(m));
		m.type = PROTO_RELEASE; m.seq = ++seq;
		sendm(&m);
		do recvm(&r, &mapped); while (r.seq != m.seq);
		if (r.status) { fprintf(stderr, "release %d: %d\n", i, r.status); return 1; }
	}
	printf("mapped %zu MiB\n", mapped >> 20);
	fflush(stdout);
	pause();
	return 0;
}
C
SAN=
nm "$BUILD/libckpt.a" 2>/dev/null | grep -q __asan_init && SAN=-fsanitize=address,undefined
cc $SAN -O1 -D_GNU_SOURCE -I"$ROOT/lib" -I"$ROOT/include" -o "$T/keep" "$T/keep.c" "$BUILD/libckpt.a" -luring -lzstd -lisal -linih -lpthread 2>"$T/cc.err" ||
	fail "cc: $(cat "$T/cc.err")"
chmod 755 "$T" "$T/keep"
ckptd_conf a staging=64M staging_client=16M
start_ckptd a
shmem() { awk '/^Shmem:/ { print int($2 / 1024) }' /proc/meminfo; }
s0=$(shmem)
setpriv --reuid=65534 --regid=65534 --clear-groups "$T/keep" "$(sock a)" >"$T/k.out" 2>&1 &
KP=$!
poll_until 20 grep -q mapped "$T/k.out" || fail "client: $(cat "$T/k.out")"
s1=$(shmem)
info "uid nobody: $(cat "$T/k.out"); Shmem grew by $((s1 - s0)) MiB; staging is 64 MiB"
assert_up a
kill "$KP"
((s1 - s0 <= 64 + 16)) || fail "staging memory is not bounded: Shmem grew by $((s1 - s0)) MiB with staging = 64M"
