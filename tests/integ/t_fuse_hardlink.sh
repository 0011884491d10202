#!/bin/bash
# t_fuse_hardlink: hard links (link(2)) through ckptfs.
#  - in an open version: a regular file, a FIFO, a symlink, a socket and
#    device nodes linked: st_nlink 2 and one st_ino on both names; writes (direct I/O,
#    small gathered writes interleaved through both names, a truncate)
#    through one name read back through the other; chmod, chown, utimensat
#    and user.* xattrs through one seen through the other; link updates the
#    file's ctime and the directory's mtime; unlink of the first name
#    leaves the second with the bytes, nlink 1 and the same mode and owner;
#    rename onto another name of the same file does nothing; rename over a
#    name of another linked file takes only that name; EEXIST, EPERM (a
#    directory), EXDEV (across versions and jobs), ENOENT; a failed link
#    changes nothing;
#  - a mount joining a version another mount wrote links in shares one
#    inode between the names it lists;
#  - committed (rename VER.tmp VER): st_ino of each name as before the
#    commit, at once (rsync -aH right after keeps the links); both names,
#    nlink 2, the same bytes;
#    link there is EROFS; the same after a SIGKILL of ckptd and a restart
#    and two clean restarts;
#  - `ckptctl restore` makes the link again (one inode, nlink 2);
#  - a version with directory entries (CKPT_ATTR_IFDIR, ckpt_ns) shows
#    them as directories with their modes and times, the empty one too.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

M=$T/mnt
M2=$T/mnt2
start_ckptd d
mount_ckptfs d "$M"

# lnop FROM TO: link(2) FROM TO through Python: "ok" or the errno's name
# (ln(1) refuses directories itself, without asking).
lnop() {
	/usr/bin/python3 -c '
import errno, os, sys
try:
    os.link(sys.argv[1], sys.argv[2], follow_symlinks=False)
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
' "$1" "$2"
}
expect_ln() {
	local got
	got=$(lnop "$2" "$3")
	[ "$got" = "$1" ] || fail "link ${2#"$M"/} ${3#"$M"/}: got $got, want $1"
}
nl() { stat -c %h "$1"; }
# same_file A B WHAT N: nlink N on both names, and one inode number, type,
# mode, owner, size, mtime as stat shows them.  In a committed version ($RO
# set) the kernel may show, for its attribute timeout (1 s), what it cached
# of a name earlier (the mode with write bits, the open version's st_ino,
# ckptd's ino from before a restart, which may change then): there they
# must agree within a few seconds.
FMT='%h %i %F %a %u:%g %s %Y %t:%T'
same_stat() { [ "$(stat -c "$FMT" "$1")" = "$(stat -c "$FMT" "$2")" ]; }
same_ino() { [ "$(stat -c %i "$1")" = "$(stat -c %i "$2")" ]; }
same_file() {
	local a b
	if [ -n "${RO:-}" ]; then
		poll_until 5 same_stat "$1" "$2" ||
			fail "$3: '${1#"$M"/}' is '$(stat -c "$FMT" "$1")' but '${2#"$M"/}' is '$(stat -c "$FMT" "$2")'"
	else
		a=$(stat -c "$FMT" "$1") || fail "$3: stat $1"
		b=$(stat -c "$FMT" "$2") || fail "$3: stat $2"
		[ "$a" = "$b" ] || fail "$3: '${1#"$M"/}' is '$a' but '${2#"$M"/}' is '$b'"
	fi
	a=$(stat -c %h "$1")
	[ "$a" = "$4" ] || fail "$3: nlink $a, want $4"
}

J=$M/hl
V=$J/v1.tmp
mkdir -p "$V/sub" || fail "mkdir $V failed"

# ---- a regular file -----------------------------------------------------------
printf 'first' >"$V/a" || fail "writing a failed"
ctime0=$(stat -c %z "$V/a")
dmtime0=$(stat -c %y "$V/sub")
ln "$V/a" "$V/sub/b" || fail "ln a sub/b failed"
same_file "$V/a" "$V/sub/b" "after ln" 2
[ "$(stat -c %z "$V/a")" != "$ctime0" ] || fail "link did not change a's ctime"
[ "$(stat -c %y "$V/sub")" != "$dmtime0" ] || fail "link did not change the directory's mtime"

# a failed link changes nothing
ctime1=$(stat -c %z "$V/a")
dmtime1=$(stat -c %y "$V/sub")
expect_ln EEXIST "$V/a" "$V/sub/b"
expect_ln ENOENT "$V/nothing" "$V/sub/c"
expect_ln ENOENT "$V/a" "$V/nodir/c"
[ "$(stat -c %z "$V/a")" = "$ctime1" ] && [ "$(stat -c %y "$V/sub")" = "$dmtime1" ] ||
	fail "a failed link changed a's ctime or the directory's mtime"
same_file "$V/a" "$V/sub/b" "after failed links" 2

# writes through one name, read through the other
printf 'second-bytes' >"$V/sub/b" || fail "write through sub/b failed"
[ "$(cat "$V/a")" = second-bytes ] || fail "a reads '$(cat "$V/a")' after a write through sub/b"
dd if=/dev/zero of="$V/a" bs=1M count=3 oflag=append conv=notrunc status=none ||
	fail "dd through a failed"
[ "$(stat -c %s "$V/sub/b")" = $((12 + 3 * 1048576)) ] ||
	fail "sub/b is $(stat -c %s "$V/sub/b") bytes after 3 MiB appended through a"
truncate -s 6 "$V/sub/b" || fail "truncate through sub/b failed"
[ "$(cat "$V/a")" = second ] || fail "a reads '$(cat "$V/a")' after a truncate through sub/b"
# small writes interleaved through both names, gathered (wbuf) in order
/usr/bin/python3 - "$V/a" "$V/sub/b" <<'PY' || fail "interleaved writes through two names"
import os, sys
fa = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
fb = os.open(sys.argv[2], os.O_WRONLY)
want = bytearray()
for i in range(400):
    chunk = bytes([65 + i % 26]) * (1000 + i)
    os.pwrite(fa if i % 2 else fb, chunk, len(want))
    want += chunk
# overwrite through the other name: the later write wins
os.pwrite(fa, b"#" * 5000, 100)
want[100:5100] = b"#" * 5000
os.close(fa)
os.close(fb)
for p in sys.argv[1:]:
    got = open(p, "rb").read()
    assert got == bytes(want), (p, len(got), len(want))
PY
[ "$(stat -c %s "$V/a")" = "$(stat -c %s "$V/sub/b")" ] || fail "sizes differ after interleaved writes"
head -c 200000 /dev/urandom >"$T/blob" && cp "$T/blob" "$V/sub/b" || fail "cp over sub/b failed"
cmp -s "$T/blob" "$V/a" || fail "a differs from what was copied over sub/b"

# attributes through one name seen through the other
chmod 0640 "$V/sub/b" && chown 1234:5678 "$V/a" && touch -m -d @1000000000 "$V/sub/b" ||
	fail "chmod/chown/touch failed"
same_file "$V/a" "$V/sub/b" "after chmod/chown/touch" 2
[ "$(stat -c '%a %u:%g %Y' "$V/a")" = "640 1234:5678 1000000000" ] ||
	fail "a shows $(stat -c '%a %u:%g %Y' "$V/a")"
/usr/bin/python3 - "$V/a" "$V/sub/b" <<'PY' || fail "xattrs through two names"
import os, sys
a, b = sys.argv[1:]
os.setxattr(a, "user.step", b"100")
assert os.getxattr(b, "user.step") == b"100"
os.setxattr(b, "user.step", b"200")
assert os.getxattr(a, "user.step") == b"200"
os.removexattr(a, "user.step")
assert "user.step" not in os.listxattr(b)
os.setxattr(b, "user.kept", b"yes")
PY

# ---- other kinds: FIFO, symlink, socket, devices -------------------------------
mkfifo "$V/fifo" && ln "$V/fifo" "$V/fifo2" || fail "ln of a FIFO failed"
same_file "$V/fifo" "$V/fifo2" "FIFO" 2
[ -p "$V/fifo2" ] || fail "fifo2 is not a FIFO"
ln -s ../a "$V/sub/sym" && ln -P "$V/sub/sym" "$V/sym2" || fail "ln of a symlink failed"
[ -L "$V/sym2" ] && [ "$(readlink "$V/sym2")" = ../a ] || fail "sym2 is not the link to ../a"
[ "$(nl "$V/sub/sym")" = 2 ] && [ "$(nl "$V/sym2")" = 2 ] || fail "symlink nlink $(nl "$V/sub/sym")"
/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$V/sock" &&
	ln "$V/sock" "$V/sock2" || fail "ln of a socket failed"
same_file "$V/sock" "$V/sock2" "socket" 2
if [ "$(id -u)" = 0 ]; then
	mknod "$V/cdev" c 1 3 && mknod "$V/bdev" b 7 0 &&
		ln "$V/cdev" "$V/cdev2" && ln "$V/bdev" "$V/bdev2" ||
		fail "ln of device nodes failed"
	same_file "$V/cdev" "$V/cdev2" "char device" 2
	same_file "$V/bdev" "$V/bdev2" "block device" 2
	chmod 0604 "$V/cdev2" && chown 42:43 "$V/bdev2" || fail "chmod/chown of a device failed"
	same_file "$V/cdev" "$V/cdev2" "char device after chmod" 2
	same_file "$V/bdev" "$V/bdev2" "block device after chown" 2
	rm "$V/cdev" || fail "rm cdev failed"
	[ "$(stat -c '%h %a %t:%T' "$V/cdev2")" = "1 604 1:3" ] ||
		fail "cdev2 after rm cdev: $(stat -c '%h %a %t:%T' "$V/cdev2")"
fi
chmod 0604 "$V/fifo" && chown 7:8 "$V/fifo2" || fail "chmod/chown of a FIFO failed"
rm "$V/fifo" || fail "rm fifo failed"
[ "$(stat -c '%h %F %a %u:%g' "$V/fifo2")" = "1 fifo 604 7:8" ] ||
	fail "fifo2 after rm fifo: $(stat -c '%h %F %a %u:%g' "$V/fifo2")"

# ---- errors --------------------------------------------------------------------
expect_ln EPERM "$V/sub" "$V/sub2"
mkdir "$J/v2.tmp" && mkdir -p "$M/other/v1.tmp" || fail "mkdir of v2.tmp, other/v1.tmp failed"
expect_ln EXDEV "$V/a" "$J/v2.tmp/a"
expect_ln EXDEV "$V/a" "$M/other/v1.tmp/a"
expect_ln EPERM "$V/a" "$V/.commit"
rmdir "$J/v2.tmp" "$M/other/v1.tmp" || fail "rmdir of the empty versions failed"

# ---- rename -------------------------------------------------------------------
ino_a=$(stat -c %i "$V/a")
/usr/bin/python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$V/a" "$V/sub/b" ||
	fail "rename a onto sub/b (one file) failed"
[ -e "$V/a" ] && [ -e "$V/sub/b" ] || fail "rename onto the same file removed a name"
same_file "$V/a" "$V/sub/b" "after rename onto the same file" 2
printf 'other' >"$V/o1" && ln "$V/o1" "$V/o2" && printf 'new' >"$V/n" ||
	fail "making o1, o2, n failed"
mv "$V/n" "$V/o2" || fail "mv n o2 failed"
[ "$(cat "$V/o2")" = new ] && [ "$(nl "$V/o2")" = 1 ] ||
	fail "o2 after mv n o2: '$(cat "$V/o2")', nlink $(nl "$V/o2")"
[ "$(cat "$V/o1")" = other ] && [ "$(nl "$V/o1")" = 1 ] ||
	fail "o1 after mv n o2: '$(cat "$V/o1")', nlink $(nl "$V/o1")"
ln "$V/o1" "$V/o3" && mv "$V/o3" "$V/sub/o3" || fail "ln o1 o3, mv o3 sub/o3 failed"
same_file "$V/o1" "$V/sub/o3" "after a rename of a link" 2

# ---- unlink -------------------------------------------------------------------
ln "$V/a" "$V/gone" && rm "$V/gone" || fail "ln a gone; rm gone failed"
same_file "$V/a" "$V/sub/b" "after rm of a third name" 2
ln "$V/a" "$V/c" || fail "ln a c failed"
rm "$V/a" || fail "rm a failed"
same_file "$V/c" "$V/sub/b" "after rm a" 2
cmp -s "$T/blob" "$V/sub/b" || fail "sub/b lost its bytes with a"
[ "$(stat -c '%a %u:%g' "$V/sub/b")" = "640 1234:5678" ] ||
	fail "sub/b after rm a: $(stat -c '%a %u:%g' "$V/sub/b")"
rm "$V/c" || fail "rm c failed"
[ "$(nl "$V/sub/b")" = 1 ] || fail "sub/b has nlink $(nl "$V/sub/b") after rm a, c"
# an open name unlinked: the file stays readable and writable through the
# handle, and its other name sees the writes
ln "$V/o1" "$V/held" || fail "ln o1 held failed"
/usr/bin/python3 - "$V/held" "$V/o1" <<'PY' || fail "writes through an unlinked open name"
import os, sys
held, o1 = sys.argv[1:]
fd = os.open(held, os.O_RDWR)
os.unlink(held)         # o1, sub/o3 are left
assert os.fstat(fd).st_nlink == 2, os.fstat(fd).st_nlink
assert os.stat(o1).st_nlink == 2, os.stat(o1).st_nlink
os.pwrite(fd, b"OTHER", 0)
os.close(fd)
assert open(o1, "rb").read() == b"OTHER", open(o1, "rb").read()
PY
ln "$V/o1" "$V/o4" || fail "ln o1 o4 failed"
info "open version: links of files, FIFOs, symlinks, sockets, devices; errors; rename; unlink"

# ---- a mount that joins the version sees the links as one file ---------------
mkdir -p "$J/v3.tmp" && printf 'joined' >"$J/v3.tmp/p" && ln "$J/v3.tmp/p" "$J/v3.tmp/q" ||
	fail "making v3 failed"
mount_ckptfs d "$M2"
W=$M2/hl/v3.tmp
mkdir "$W" || fail "joining v3 through a second mount failed"
[ "$(nl "$W/p")" = 2 ] && [ "$(nl "$W/q")" = 2 ] && same_ino "$W/p" "$W/q" ||
	fail "joined: nlink $(nl "$W/p") $(nl "$W/q"), inodes $(stat -c %i "$W/p" "$W/q")"
printf 'through-the-second-mount' >"$W/q" || fail "write through the joined q failed"
[ "$(cat "$W/p")" = through-the-second-mount ] || fail "joined: p reads '$(cat "$W/p")'"
chmod 0604 "$W/p" || fail "chmod through the joined p failed"
[ "$(stat -c %a "$W/q")" = 604 ] || fail "joined: q's mode is $(stat -c %a "$W/q")"
mv "$W" "$M2/hl/v3" && mv "$J/v3.tmp" "$J/v3" || fail "committing v3 from both mounts failed"
umount_ckptfs "$M2"
[ "$(cat "$J/v3/p")" = through-the-second-mount ] && [ "$(nl "$J/v3/q")" = 2 ] ||
	fail "committed v3: '$(cat "$J/v3/p")', nlink $(nl "$J/v3/q")"
info "a joined version's links are one file in the joining mount"

# ---- committed ---------------------------------------------------------------
# st_ino does not change at the commit (no waiting for the kernel's
# attribute timeout): rsync -H right after a commit sees the links.
inos() { (cd "$1" && stat -c '%n %i' . o1 sub/o3 o4 sub sub/b sub/sym sym2); }
inos "$V" >"$T/ino.before" || fail "stat before the commit failed"
[ "$(awk '$1 == "o1" || $1 == "sub/o3" || $1 == "o4" { print $2 }' "$T/ino.before" | sort -u | wc -l)" = 1 ] ||
	fail "the names of o1 show several st_ino: $(tr '\n' ' ' <"$T/ino.before")"
mv "$V" "$J/v1" || fail "commit of v1 failed"
# Past the kernel's attribute timeout (1 s) too: watched for 2 s.
ino_changed() { inos "$J/v1" >"$T/ino.after" && ! cmp -s "$T/ino.before" "$T/ino.after"; }
! poll_until 2 ino_changed ||
	fail "st_ino changed at the commit: $(tr '\n' ' ' <"$T/ino.before") -> $(tr '\n' ' ' <"$T/ino.after")"
mkdir "$T/rs" && rsync -aH "$J/v1/" "$T/rs/" || fail "rsync -aH of v1 failed"
[ "$(stat -c %i "$T/rs/o1")" = "$(stat -c %i "$T/rs/sub/o3")" ] ||
	fail "rsync -H right after the commit did not keep o1 and sub/o3 one file"
info "st_ino the same before and after the commit; rsync -H keeps the links"
for v in v1 v3; do
	ctl d wait hl $v local --timeout "$(scaled 30)" >/dev/null || fail "$v did not become LOCAL"
done
C=$J/v1
RO=1
# committed_ok WHAT: the links of v1 as written, through the mount.
committed_ok() {
	[ -e "$C/c" ] && fail "$1: c is still there"
	[ "$(nl "$C/sub/b")" = 1 ] || fail "$1: sub/b has nlink $(nl "$C/sub/b")"
	cmp -s "$T/blob" "$C/sub/b" || fail "$1: sub/b's bytes differ"
	same_file "$C/o1" "$C/sub/o3" "$1: o1" 3
	same_file "$C/o1" "$C/o4" "$1: o1" 3
	[ "$(cat "$C/sub/o3")" = OTHER ] && [ "$(cat "$C/o4")" = OTHER ] ||
		fail "$1: o3, o4 read '$(cat "$C/sub/o3")' '$(cat "$C/o4")'"
	same_file "$C/sub/sym" "$C/sym2" "$1: symlink" 2
	[ "$(readlink "$C/sym2")" = ../a ] || fail "$1: sym2 -> $(readlink "$C/sym2")"
	same_file "$C/sock" "$C/sock2" "$1: socket" 2
	[ "$(stat -c '%h %F' "$C/fifo2")" = "1 fifo" ] || fail "$1: fifo2 $(stat -c '%h %F' "$C/fifo2")"
	if [ "$(id -u)" = 0 ]; then
		same_file "$C/bdev" "$C/bdev2" "$1: block device" 2
		[ "$(nl "$C/cdev2")" = 1 ] || fail "$1: cdev2 has nlink $(nl "$C/cdev2")"
	fi
	[ "$(getfattr_py "$C/sub/b")" = yes ] || fail "$1: sub/b's xattr: $(getfattr_py "$C/sub/b")"
	expect_ln EROFS "$C/o1" "$C/o5"
	[ "$(cat "$J/v3/p")" = through-the-second-mount ] && [ "$(nl "$J/v3/q")" = 2 ] ||
		fail "$1: v3"
	info "$1: the links as written"
}
getfattr_py() {
	/usr/bin/python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.kept").decode())' "$1"
}
committed_ok "committed"
restart d
committed_ok "after SIGKILL and restart"
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
committed_ok "after two clean restarts"

# ---- restore -----------------------------------------------------------------
ctl d restore hl v1 --to "$T/r" >/dev/null || fail "restore of v1 failed"
[ "$(stat -c %i "$T/r/o1")" = "$(stat -c %i "$T/r/sub/o3")" ] &&
	[ "$(stat -c %i "$T/r/o1")" = "$(stat -c %i "$T/r/o4")" ] ||
	fail "restored o1, sub/o3, o4 are not one inode"
[ "$(stat -c %h "$T/r/o1")" = 3 ] && [ "$(stat -c %h "$T/r/sub/b")" = 1 ] ||
	fail "restored link counts: o1 $(stat -c %h "$T/r/o1"), sub/b $(stat -c %h "$T/r/sub/b")"
cmp -s "$T/blob" "$T/r/sub/b" && [ "$(cat "$T/r/o4")" = OTHER ] || fail "restored bytes differ"
info "restore: the links are links again"

# ---- directory entries of a version written with the C API -------------------
"$BUILD/tests/ckpt_ns" "$(sock d)" dirs dirs v1 || fail "ckpt_ns dirs failed"
got=$(cd "$M/dirs/v1" && stat -c '%n %F %a %Y %h' d d/sub e | tr '\n' ';')
[ "$got" = "d directory 550 1600000000 2;d/sub directory 505 1600000100 2;e directory 511 1600000200 2;" ] ||
	fail "directory entries through the mount: $got"
[ -z "$(ls -A "$M/dirs/v1/e")" ] && [ "$(cat "$M/dirs/v1/d/sub/f")" = data ] ||
	fail "directory entries: e is not an empty directory, or d/sub/f lost its bytes"
info "directory entries: directories with their attributes"
umount_ckptfs "$M"
stop_ckptd d
