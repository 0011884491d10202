#!/bin/bash
# t_fuse_falloc: fallocate, special files and statfs through ckptfs.
#  - fallocate mode 0 grows a file (zeros, kept after the commit), never
#    shrinks it, and keeps bytes already written; KEEP_SIZE changes nothing;
#    punching a hole is EOPNOTSUPP; in a committed version EBADF/EROFS
#    (the file cannot be opened for writing);
#  - FIFOs, sockets and device nodes are kept as metadata (docs/design.md):
#    mkfifo, mknod c/b, bind make them, chmod keeps their type, the commit
#    keeps them (without write bits), `ckptctl restore` makes them again;
#    mknod of a regular file makes one;
#  - copy_file_range(2) between files of an open version copies the bytes
#    (the kernel's fallback through read and write: ckptfs has no op of its
#    own), at offsets, and the copy survives the commit;
#  - statfs (df) reports the store's capacity and use as ckptd does.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

M=$T/mnt
ckptd_conf d capacity=64M segment=8M chunk=1M
start_ckptd d
mount_ckptfs d "$M"
mkdir -p "$M/fa/v1.tmp" || fail "mkdir failed"
V=$M/fa/v1.tmp

/usr/bin/python3 - "$V" <<'PY' || fail "fallocate checks"
import errno, os, sys, ctypes
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def falloc(fd, mode, off, n):
    r = libc.fallocate(fd, mode, ctypes.c_long(off), ctypes.c_long(n))
    return 0 if r == 0 else ctypes.get_errno()
fd = os.open(d + "/a", os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"head")
assert falloc(fd, 0, 0, 1 << 20) == 0
assert os.fstat(fd).st_size == 1 << 20, os.fstat(fd).st_size
assert os.pread(fd, 8, 0) == b"head\0\0\0\0"
assert falloc(fd, 0, 0, 100) == 0                       # never shrinks
assert os.fstat(fd).st_size == 1 << 20
assert falloc(fd, 1, 0, 4 << 20) == 0                   # FALLOC_FL_KEEP_SIZE
assert os.fstat(fd).st_size == 1 << 20
assert falloc(fd, 3, 0, 4096) == errno.EOPNOTSUPP       # PUNCH_HOLE|KEEP_SIZE
os.posix_fallocate(fd, (1 << 20) + 5, 10)
assert os.fstat(fd).st_size == (1 << 20) + 15
os.close(fd)
assert os.stat(d + "/a").st_size == (1 << 20) + 15
src = bytes((i * 7 + 3) % 251 for i in range(3 << 20))
with open(d + "/src", "wb") as f:
    f.write(src)
s = os.open(d + "/src", os.O_RDONLY)
t = os.open(d + "/dst", os.O_WRONLY | os.O_CREAT, 0o644)
n = 0
while n < len(src):
    k = os.copy_file_range(s, t, len(src) - n)
    assert k > 0, k
    n += k
assert os.copy_file_range(s, t, 100, 5, 10) == 100     # at offsets
os.close(s)
os.close(t)
with open(d + "/dst", "rb") as f:
    got = f.read()
assert got == src[:10] + src[5:105] + src[110:], "copy_file_range bytes differ"
PY
mv "$M/fa/v1.tmp" "$M/fa/v1" || fail "commit failed"
[ "$(stat -c %s "$M/fa/v1/a")" = $(((1 << 20) + 15)) ] ||
	fail "the fallocated size did not survive the commit: $(stat -c %s "$M/fa/v1/a")"
cmp -n 8 <(printf 'head\0\0\0\0') "$M/fa/v1/a" || fail "committed bytes differ"
cmp <(head -c 10 "$M/fa/v1/src"; tail -c +6 "$M/fa/v1/src" | head -c 100; tail -c +111 "$M/fa/v1/src") \
	"$M/fa/v1/dst" || fail "the copy_file_range copy differs after the commit"
out=$(fallocate -l 8M "$M/fa/v1/a" 2>&1) && fail "fallocate in a committed version worked"
info "fallocate in a committed version: $out"

mkdir "$M/fa/v2.tmp" || fail "mkdir v2.tmp failed"
V2=$M/fa/v2.tmp
mkfifo -m 0640 "$V2/fifo" || fail "mkfifo in a version failed"
mknod -m 0600 "$V2/null" c 1 3 || fail "mknod c in a version failed"
mknod -m 0644 "$V2/blk" b 8 1 || fail "mknod b in a version failed"
chmod 0604 "$V2/fifo" || fail "chmod of a FIFO failed"
/usr/bin/python3 -c 'import os, stat, sys; os.mknod(sys.argv[1], 0o644 | stat.S_IFREG)' \
	"$V2/plain" || fail "mknod of a regular file failed"
/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$V2/sock" || fail "bind of a socket in a version failed"
special_ok() { # DIR RO WHAT
	local w=${2:-}
	[ "$(stat -c '%F %a' "$1/fifo")" = "fifo 60${w:-4}" ] ||
		fail "$3: fifo is $(stat -c '%F %a' "$1/fifo")"
	[ "$(stat -c '%F %t %T %s' "$1/null")" = "character special file 1 3 0" ] ||
		fail "$3: null is $(stat -c '%F %t %T %s' "$1/null")"
	[ "$(stat -c '%F %t %T' "$1/blk")" = "block special file 8 1" ] ||
		fail "$3: blk is $(stat -c '%F %t %T' "$1/blk")"
	[ "$(stat -c '%F' "$1/sock")" = socket ] || fail "$3: sock is $(stat -c '%F' "$1/sock")"
	[ -f "$1/plain" ] || fail "$3: mknod did not make a regular file"
}
special_ok "$V2" "" "open version"
mv "$M/fa/v2.tmp" "$M/fa/v2" || fail "commit of v2 failed"
poll_until 5 eval '[ "$(stat -c %a "$M/fa/v2/fifo")" = 404 ]' ||
	fail "a committed FIFO shows $(stat -c %a "$M/fa/v2/fifo")"
ctl d restore fa v2 --to "$T/r2" >/dev/null || fail "restore of special files failed"
special_ok "$T/r2" "" "restored"

# statfs: the store's capacity (64 MiB) and what it uses.
read -r blocks bsize <<<"$(stat -f -c '%b %S' "$M")"
[ "$((blocks * bsize))" = $((64 << 20)) ] ||
	fail "statfs: $blocks blocks of $bsize, want 64 MiB"
umount_ckptfs "$M"
stop_ckptd d
