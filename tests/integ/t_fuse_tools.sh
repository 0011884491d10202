#!/bin/bash
# t_fuse_tools: everyday tools through a real ckptfs mount, on a generated
# tree (nested directories, 320 small files from 0 bytes to 64 KiB, a few of
# 1 to 5 MiB, names with every character ckpt allows), compared with
# sha256sum file by file, and by type and size (readdir + stat; the empty
# .commit marker ckptfs shows at the root of a committed version, which
# copies out of it carry, is checked apart):
#  - cp -r into an open version, commit (mv VER.tmp VER), cp -r back out;
#  - tar c | tar x into the mount, commit (no ctime moves), tar c out of it
#    and extract;
#  - rsync -a into the mount, then an rsync -a --delete of a changed tree
#    into the same open version (temp files renamed over old ones, deletes),
#    commit, rsync -a back out (skipped with a message if rsync is missing);
#  - rmdir of an empty directory works, of a non-empty one fails ENOTEMPTY
#    ("Directory not empty"); rmdir of an emptied version directory works.
# TIMEOUT: 200
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

JOB=tools
M=$T/mnt
SRC=$T/src

GEN_PY='
import os, random, sys
root, seed = sys.argv[1], int(sys.argv[2])
r = random.Random(seed)
dirs = ["", "a", "a/b", "a/b/c", "a/b/c/d-deep", "x.y", "x.y/z_1", "odd,name=1@2+3", "n"]
for d in dirs:
    os.makedirs(os.path.join(root, d), exist_ok=True)
sizes = [0, 1, 4095, 4096, 4097, 65536]
for i in range(320):
    d = dirs[i % len(dirs)]
    n = sizes[i] if i < len(sizes) else r.randint(0, 64 << 10)
    name = "f%03d%s" % (i, r.choice([".bin", ".txt", "", ".tar.gz", "-x_y", ",v=1@a+b"]))
    with open(os.path.join(root, d, name), "wb") as f:
        f.write(r.randbytes(n))
for i, n in enumerate([1 << 20, (1 << 20) + 7, 3 << 20, 5 << 20 | 12345]):
    with open(os.path.join(root, dirs[i * 2], "big%d.dat" % i), "wb") as f:
        f.write(r.randbytes(n))
'

# same_tree REF DIR WHAT: DIR holds exactly REF's files, byte for byte, and
# readdir/stat show the same types and sizes.
same_tree() {
	check_marker "$2"
	# Temporary files, not <(...): an unreaped process substitution would be
	# counted by run-integ.sh as a process left behind.
	tree_sums "$1" >"$T/a.sums" && tree_sums -m "$2" >"$T/b.sums" || fail "$3: sha256sum failed"
	diff "$T/a.sums" "$T/b.sums" >"$T/diff.out" 2>&1 ||
		fail "$3: sha256 differ ($2 vs $1): $(head -10 "$T/diff.out")"
	tree_shape "$1" >"$T/a.shape" && tree_shape -m "$2" >"$T/b.shape" || fail "$3: find failed"
	diff "$T/a.shape" "$T/b.shape" >"$T/diff.out" 2>&1 ||
		fail "$3: readdir/stat differ ($2 vs $1): $(head -10 "$T/diff.out")"
}

sealed() {
	[ "$(ctl d ls "$JOB" 2>/dev/null | awk -v v="$1" '$1 == v { print $2 }')" = sealed ]
}

# commit VER: mv VER.tmp VER, and wait until ckptd has sealed it.
commit() {
	mv "$M/$JOB/$1.tmp" "$M/$JOB/$1" || fail "mv $1.tmp $1 (commit) failed"
	poll_until 30 sealed "$1" || fail "$1 is not sealed after the rename"
}

/usr/bin/python3 -c "$GEN_PY" "$SRC" 1 || fail "generating the tree"
info "tree: $(find "$SRC" -type f | wc -l) files, $(find "$SRC" -type d | wc -l) directories, $(du -sh "$SRC" | cut -f1)"

ckptd_conf d keep=100 staging=128M
start_ckptd d
mount_ckptfs d "$M"
mkdir "$M/$JOB" || fail "mkdir $JOB"

# ---- cp -r --------------------------------------------------------------------
mkdir "$M/$JOB/cp.tmp" || fail "mkdir cp.tmp"
cp -r "$SRC/." "$M/$JOB/cp.tmp/" 2>"$T/cp.err" || fail "cp -r into the mount: $(head -5 "$T/cp.err")"
same_tree "$SRC" "$M/$JOB/cp.tmp" "cp -r, open version"
commit cp
same_tree "$SRC" "$M/$JOB/cp" "cp -r, committed"
cp -r "$M/$JOB/cp" "$T/back-cp" 2>"$T/cp.err" || fail "cp -r out of the mount: $(head -5 "$T/cp.err")"
same_tree "$SRC" "$T/back-cp" "cp -r back out"
info "cp -r in and out: every sha256, type and size match"

# ---- tar --------------------------------------------------------------------
mkdir "$M/$JOB/tar.tmp" || fail "mkdir tar.tmp"
tar -C "$SRC" -cf - . 2>"$T/tarc.err" | tar -C "$M/$JOB/tar.tmp" -xf - 2>"$T/tarx.err"
st=("${PIPESTATUS[@]}")
[ "${st[0]}" = 0 ] || fail "tar c of the source: $(head -5 "$T/tarc.err")"
[ "${st[1]}" = 0 ] || fail "tar x into the mount (status ${st[1]}): $(head -5 "$T/tarx.err")"
same_tree "$SRC" "$M/$JOB/tar.tmp" "tar x, open version"
# ctimes do not move at the commit: tar c's lstat may still come from the
# kernel's cache of the mirror and its fstat after the read from ckptd, and
# one ctime between them is "file changed as we read it".
ctimes() { (cd "$1" && find . -printf '%p %C@\n' | LC_ALL=C sort); }
ctimes "$M/$JOB/tar.tmp" >"$T/ctime.before" || fail "ctimes of tar.tmp"
commit tar
same_tree "$SRC" "$M/$JOB/tar" "tar x, committed"
sync && echo 2 >/proc/sys/vm/drop_caches    # every name looked up afresh
ctimes "$M/$JOB/tar" >"$T/ctime.after" || fail "ctimes of tar"
cmp -s "$T/ctime.before" "$T/ctime.after" ||
	fail "ctime moved at the commit: $(diff "$T/ctime.before" "$T/ctime.after" | head -4 | tr '\n' ' ')"
tar -C "$M/$JOB/tar" -cf "$T/out.tar" . 2>"$T/tarc.err" ||
	fail "tar c out of the mount: $(head -5 "$T/tarc.err")"
mkdir "$T/back-tar"
tar -C "$T/back-tar" -xf "$T/out.tar" || fail "extracting the tar made from the mount"
same_tree "$SRC" "$T/back-tar" "tar c out of the mount"
info "tar c | tar x in, tar c out: every sha256, type and size match"

# ---- rsync ------------------------------------------------------------------
if command -v rsync >/dev/null; then
	mkdir "$M/$JOB/rs.tmp" || fail "mkdir rs.tmp"
	rsync -a "$SRC/" "$M/$JOB/rs.tmp/" 2>"$T/rs.err" ||
		fail "rsync -a into the mount: $(head -5 "$T/rs.err")"
	same_tree "$SRC" "$M/$JOB/rs.tmp" "rsync -a, open version"
	# A changed tree: some files rewritten, grown, shrunk, deleted, added.
	cp -a "$SRC" "$T/src2"
	/usr/bin/python3 - "$T/src2" <<'EOF' || fail "changing the tree"
import os, random, sys
r = random.Random(5)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs)
for i, p in enumerate(files[::7]):
    k = i % 4
    if k == 0:
        os.unlink(p)
    elif k == 1:
        with open(p, "r+b") as f:
            f.seek(r.randint(0, max(0, os.path.getsize(p) - 1)))
            f.write(r.randbytes(100))
    elif k == 2:
        with open(p, "ab") as f:
            f.write(r.randbytes(r.randint(1, 200000)))
    else:
        os.truncate(p, os.path.getsize(p) // 2)
    st = os.stat(p) if k else None
    if st:  # make sure rsync sees the change even within the same second
        os.utime(p, (st.st_atime, st.st_mtime + 2))
os.makedirs(os.path.join(sys.argv[1], "new/dir"), exist_ok=True)
with open(os.path.join(sys.argv[1], "new/dir/added.bin"), "wb") as f:
    f.write(r.randbytes(300000))
EOF
	rsync -a --delete "$T/src2/" "$M/$JOB/rs.tmp/" 2>"$T/rs.err" ||
		fail "rsync -a --delete of the changed tree into the open version: $(head -5 "$T/rs.err")"
	same_tree "$T/src2" "$M/$JOB/rs.tmp" "second rsync, open version"
	commit rs
	same_tree "$T/src2" "$M/$JOB/rs" "rsync, committed"
	rsync -a "$M/$JOB/rs/" "$T/back-rs/" 2>"$T/rs.err" ||
		fail "rsync -a out of the mount: $(head -5 "$T/rs.err")"
	same_tree "$T/src2" "$T/back-rs" "rsync back out"
	out=$(rsync -anc --out-format='%n' "$T/src2/" "$M/$JOB/rs/" 2>&1 | grep -v '/$')
	[ -z "$out" ] || fail "rsync --checksum sees differences: $(echo "$out" | head -5)"
	info "rsync -a in, rsync -a --delete of changes, rsync -a out: all match"
else
	info "rsync part skipped: rsync is not installed (Debian package rsync)"
fi

# ---- rmdir ------------------------------------------------------------------
R=$M/$JOB/rd.tmp
mkdir -p "$R/empty" "$R/full/inner" || fail "mkdir -p in rd.tmp"
printf 'x' >"$R/full/inner/f" || fail "writing rd.tmp/full/inner/f"
rmdir "$R/empty" || fail "rmdir of an empty directory failed"
[ ! -e "$R/empty" ] || fail "an rmdir'ed directory is still there"
err=$(rmdir "$R/full" 2>&1) && fail "rmdir of a non-empty directory succeeded"
case $err in *"Directory not empty"*) ;; *) fail "rmdir of a non-empty directory: '$err'" ;; esac
expect_errno ENOTEMPTY rmdir "$R/full/inner"
[ "$(cat "$R/full/inner/f")" = x ] || fail "the file under the failed rmdir changed"
rm "$R/full/inner/f" && rmdir "$R/full/inner" && rmdir "$R/full" ||
	fail "emptying and removing full/ failed"
[ "$(fsop list "$R")" = ok ] || fail "rd.tmp is not empty: $(fsop list "$R")"
rmdir "$R" || fail "rmdir of the empty version directory rd.tmp failed"
[ ! -e "$R" ] || fail "rd.tmp is still there after rmdir"
info "rmdir: empty ok, non-empty ENOTEMPTY, emptied version directory removed"

same_tree "$SRC" "$M/$JOB/cp" "cp at the end"
umount_ckptfs "$M"
stop_ckptd d
