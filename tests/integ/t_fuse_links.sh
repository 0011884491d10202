#!/bin/bash
# t_fuse_links: symbolic links are kept in a version (a file whose bytes are
# the target, marked CKPT_ATTR_IFLNK), drained to the PFS as real symlinks
# and restored as symlinks; hard links made through the mount are drained
# and restored as hard links (t_fuse_hardlink checks them in the mount).
#  - mount: a relative link (last.ckpt -> best.ckpt, as trainers make), an
#    absolute one with spaces and UTF-8, one to a directory, a dangling one;
#    readlink, lstat (S_IFLNK, size = target length), reads through them;
#    rename and unlink of a link; `ln` of a file and of a symlink (hard
#    links: nlink 2);
#  - tar -x of a tree with links (a hard link too) into an open version:
#    `tar --diff` clean (it checks that hard links are one inode);
#  - after the commit, the same links; drained (incremental, with a second version
#    whose links are unchanged) the PFS holds real symlinks owned by the
#    job's owner, and the hard links are hard links; `ckptctl restore` makes
#    symlinks and hard links, from the local copy and from the PFS alone.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

M=$T/mnt
PFS=$T/pfs
SRC=$T/src
drain_conf d incremental=yes
start_ckptd d
ctl d drain --pause >/dev/null || fail "drain --pause failed"
mount_ckptfs d "$M"

mk_src() {
	mkdir -p "$SRC/sub" && echo best >"$SRC/best.ckpt" && echo x >"$SRC/sub/x" &&
		ln -s best.ckpt "$SRC/last.ckpt" && ln -s "/abs path/ü" "$SRC/abs" &&
		ln -s sub "$SRC/dirlink" && ln -s nowhere "$SRC/dangling" &&
		ln -s ../best.ckpt "$SRC/sub/up" && ln "$SRC/sub/x" "$SRC/x.hard"
}
mk_src || fail "making the source tree failed"
# same_links DIR WHAT: DIR has SRC's files and links, links as links.
same_links() {
	/usr/bin/python3 - "$SRC" "$1" <<'PY' || fail "$2: links differ"
import os, sys
src, d = sys.argv[1], sys.argv[2]
for root, dirs, files in os.walk(src):
    for n in dirs + files:
        a = os.path.join(root, n)
        b = os.path.join(d, os.path.relpath(a, src))
        if os.path.islink(a):
            assert os.path.islink(b) and os.readlink(a) == os.readlink(b), (b, os.readlink(a))
        elif os.path.isfile(a):
            assert not os.path.islink(b) and open(a, "rb").read() == open(b, "rb").read(), b
PY
}

tar -C "$SRC" -cf "$T/a.tar" . || fail "tar c failed"

for v in v1 v2; do
	V=$M/ln/$v.tmp
	mkdir -p "$V" || fail "mkdir $V failed"
	tar -C "$V" -xpf "$T/a.tar" || fail "tar x into $v failed"
	tar -C "$V" --diff -f "$T/a.tar" >"$T/diff.out" 2>&1 ||
		fail "tar --diff in open $v: $(head -20 "$T/diff.out")"
done
V=$M/ln/v1.tmp
[ -L "$V/last.ckpt" ] && [ "$(readlink "$V/last.ckpt")" = best.ckpt ] ||
	fail "last.ckpt is not a link to best.ckpt: $(ls -l "$V/last.ckpt")"
[ "$(cat "$V/last.ckpt")" = best ] || fail "reading through a link failed"
[ "$(cat "$V/dirlink/x")" = x ] || fail "a link to a directory does not resolve"
[ "$(stat -c '%F %s' "$V/abs")" = "symbolic link $(printf '/abs path/ü' | wc -c)" ] ||
	fail "lstat of a link: $(stat -c '%F %s' "$V/abs")"
ln -s t "$V/tmp-link" && mv "$V/tmp-link" "$V/moved-link" && rm "$V/moved-link" ||
	fail "rename/unlink of a link failed"
ln "$V/best.ckpt" "$V/hard" && ln -P "$V/last.ckpt" "$V/last.hard" ||
	fail "ln of a file or of a symlink failed"
[ "$(stat -c %h "$V/hard")" = 2 ] && [ "$(stat -c %h "$V/last.hard")" = 2 ] &&
	[ "$(readlink "$V/last.hard")" = best.ckpt ] && [ "$(cat "$V/hard")" = best ] ||
	fail "hard links: $(stat -c '%h %F %N' "$V/hard" "$V/last.hard")"
# hard_links DIR WHAT: hard and best.ckpt are one inode, last.hard and
# last.ckpt another (a hard link of the symlink itself).
hard_links() {
	[ "$(stat -c '%i %h' "$1/hard")" = "$(stat -c '%i %h' "$1/best.ckpt")" ] &&
		[ "$(stat -c %h "$1/hard")" = 2 ] ||
		fail "$2: hard, best.ckpt: $(stat -c '%i %h' "$1/hard" "$1/best.ckpt")"
	[ "$(stat -c '%i %h' "$1/last.hard")" = "$(stat -c '%i %h' "$1/last.ckpt")" ] &&
		[ -L "$1/last.hard" ] && [ "$(stat -c %h "$1/last.hard")" = 2 ] ||
		fail "$2: last.hard, last.ckpt: $(stat -c '%i %h %F' "$1/last.hard" "$1/last.ckpt")"
}
mv "$M/ln/v1.tmp" "$M/ln/v1" && mv "$M/ln/v2.tmp" "$M/ln/v2" || fail "commit failed"
same_links "$M/ln/v1" "committed v1"
umount_ckptfs "$M"

ctl d drain --resume >/dev/null || fail "drain --resume failed"
for v in v1 v2; do
	ctl d wait ln $v drained --timeout "$(scaled 30)" >/dev/null || fail "$v did not drain"
	same_links "$(pfs_vdir ln $v)/files" "PFS copy of $v"
	[ $v = v2 ] || hard_links "$(pfs_vdir ln $v)/files" "PFS copy of $v"
	[ "$(stat -c %U "$(pfs_vdir ln $v)/files/last.ckpt")" = root ] ||
		fail "a PFS link is not the job owner's"
done
ctl d restore ln v1 --to "$T/r1" >/dev/null || fail "restore of v1 failed"
same_links "$T/r1" "restore of v1"
hard_links "$T/r1" "restore of v1"
ctl d rm ln v2 >/dev/null || fail "rm of v2's local copy failed"
ctl d rm ln v1 >/dev/null || fail "rm of v1's local copy failed"
restart d
ctl d restore ln v2 --to "$T/r2" >/dev/null || fail "restore of v2 from the PFS failed"
same_links "$T/r2" "restore of v2 from the PFS"
ctl d verify ln v2 >/dev/null || fail "verify of v2 (on the PFS) failed"
info "links: mount, tar --diff, PFS symlinks and hard links, restores (local and PFS)"
stop_ckptd d
