#!/bin/bash
# t_longpath: a path inside a version may be PATH_MAX less its NUL (4095
# bytes): a few short components, then components of 255 bytes.
#  - C API (ckpt_longpath): A and B of 4095 bytes, L (4000) a hard link of
#    A, an xattr; every call refuses 4096 bytes and a 256-byte component
#    with ENAMETOOLONG; the listings give whole paths in name, and the first
#    release's calls ENAMETOOLONG, never a truncated path;
#  - mount: a 4095-byte path made by mkdir and chdir one level at a time
#    (the whole path with the mount's prefix is past the kernel's PATH_MAX),
#    committed by rename; a 256-byte component and a 4096-byte path are
#    ENAMETOOLONG;
#  - ckptd SIGKILLed, restarted, and restarted cleanly twice: every byte
#    checked again, through the API and the mount;
#  - drained to the PFS (files/<path> made level by level), the local copy
#    dropped, `ckptctl restore` from the PFS and `ckptctl verify`: the same
#    bytes.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

LP=$BUILD/tests/ckpt_longpath
[ -x "$LP" ] || fail "$LP is not built"
PFS=$T/pfs
M=$T/mnt
JOB=deep
VA=api
VM=mnt

# The mount's side, in Python: every walk is relative (chdir, or fwalk's
# directory fds), since no whole path fits PATH_MAX.
#   make VDIR PATH: mkdir and chdir down PATH's directories, write its file
#     (400 KiB of a pattern), and check the refusals at that depth
#   sums ROOT: print {path: sha256} of every file below ROOT as JSON
FS_PY='
import errno, hashlib, json, os, sys
def data(n): return bytes((i * 7 + (i >> 10)) % 251 for i in range(n))
def refused(fn, what):
    try:
        fn()
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            sys.exit(what + ": " + os.strerror(e.errno) + ", want ENAMETOOLONG")
        return
    sys.exit(what + ": created")
def create(name):
    os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))
if sys.argv[1] == "make":
    os.chdir(sys.argv[2])
    parts = sys.argv[3].split("/")
    for d in parts[:-1]:
        os.mkdir(d)
        os.chdir(d)
    with open(parts[-1], "wb") as f:
        f.write(data(400 * 1024))
    refused(lambda: create("x" * 256), "a 256-byte component")
    refused(lambda: create(parts[-1] + "y"), "a 4096-byte path")
    refused(lambda: os.mkdir(parts[-1] + "y"), "mkdir of a 4096-byte path")
    with open(parts[-1], "rb") as f:
        assert f.read() == data(400 * 1024), "read back differs"
elif sys.argv[1] == "sums":
    out = {}
    for d, _, files, dfd in os.fwalk(sys.argv[2]):
        for n in files:
            fd = os.open(n, os.O_RDONLY, dir_fd=dfd)
            h = hashlib.sha256()
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                h.update(b)
            os.close(fd)
            out[os.path.relpath(os.path.join(d, n), sys.argv[2])] = h.hexdigest()
    out.pop(".commit", None)
    print(json.dumps(out, sort_keys=True))
elif sys.argv[1] == "want":
    print(json.dumps({sys.argv[2]: hashlib.sha256(data(400 * 1024)).hexdigest()}))
'
fs() { /usr/bin/python3 -c "$FS_PY" "$@"; }

# same WHAT FILE_A FILE_B: two sums files agree, and hold N paths whose
# longest is 4095 bytes.
same() {
	cmp -s "$2" "$3" || fail "$1: $(head -c 300 "$2") vs $(head -c 300 "$3")"
	/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert max(len(k.encode()) for k in d) == 4095, [len(k) for k in d]
print(len(d), "files")' "$2" >"$T/same.out" || fail "$1: $(cat "$2")"
	info "$1: $(cat "$T/same.out"), the longest 4095 bytes, match"
}

check_all() { # WHAT
	"$LP" "$(sock d)" check "$JOB" "$VA" 2>"$T/lp.err" ||
		fail "$1: the API check failed: $(cat "$T/lp.err")"
	mount_ckptfs d "$M"
	fs sums "$M/$JOB/$VA" >"$T/$1.a" || fail "$1: sums of $VA through the mount failed"
	fs sums "$M/$JOB/$VM" >"$T/$1.m" || fail "$1: sums of $VM through the mount failed"
	umount_ckptfs "$M"
	same "$1: $VA" "$T/api.sums" "$T/$1.a"
	same "$1: $VM" "$T/mnt.sums" "$T/$1.m"
}

drain_conf d
start_ckptd d

# ---- the C API ----------------------------------------------------------------
"$LP" "$(sock d)" write "$JOB" "$VA" 2>"$T/lp.err" ||
	fail "ckpt_longpath write failed: $(cat "$T/lp.err")"
"$LP" "$(sock d)" check "$JOB" "$VA" 2>"$T/lp.err" ||
	fail "ckpt_longpath check failed: $(cat "$T/lp.err")"
info "API: 4095-byte paths written, listed, read; 4096 and 256 refused"

# ---- the mount ----------------------------------------------------------------
P=$("$LP" path 4095 m)
mount_ckptfs d "$M"
mkdir "$M/$JOB/$VM.tmp" || fail "mkdir $VM.tmp failed"
fs make "$M/$JOB/$VM.tmp" "$P" 2>"$T/fs.err" || fail "through the mount: $(cat "$T/fs.err")"
mv "$M/$JOB/$VM.tmp" "$M/$JOB/$VM" || fail "commit by rename failed"
fs want "$P" >"$T/mnt.sums"
fs sums "$M/$JOB/$VA" >"$T/api.sums" || fail "sums of $VA through the mount failed"
umount_ckptfs "$M"
ctl d wait "$JOB" "$VM" local --timeout "$(scaled 30)" >/dev/null ||
	fail "$VM did not reach LOCAL"
info "mount: a 4095-byte path by relative mkdir/chdir; 4096 and 256 refused"

# ---- crash, then two clean restarts -------------------------------------------
restart d
check_all crash
for i in 1 2; do
	stop_ckptd d
	start_ckptd d
	check_all "clean restart $i"
done

# ---- the PFS and ckptctl ------------------------------------------------------
for v in "$VA" "$VM"; do
	ctl d wait "$JOB" "$v" drained --timeout "$(scaled 60)" >/dev/null ||
		fail "$v did not drain: $(tail -5 "$T/d/ckptd.log")"
done
fs sums "$(pfs_vdir "$JOB" "$VA")/files" >"$T/pfs.a" || fail "sums of the PFS copy failed"
same "PFS copy of $VA" "$T/api.sums" "$T/pfs.a"
ctl d --json ls "$JOB" "$VA" >"$T/ls.json" || fail "ckptctl --json ls $JOB $VA failed"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = json.dumps(d)
assert sys.argv[2] in s, "A is not listed"' "$T/ls.json" "$("$LP" path 4095 a)" ||
	fail "ckptctl ls does not list the 4095-byte path"
for v in "$VA" "$VM"; do
	ctl d rm "$JOB" "$v" >/dev/null || fail "rm of the local $v failed"
	ctl d restore "$JOB" "$v" --to "$T/r.$v" >/dev/null 2>"$T/ctl.err" ||
		fail "restore of $v from the PFS failed: $(cat "$T/ctl.err")"
	ctl d verify "$JOB" "$v" >/dev/null 2>"$T/ctl.err" ||
		fail "verify of $v failed: $(cat "$T/ctl.err")"
done
fs sums "$T/r.$VA" >"$T/r.a" || fail "sums of the restore failed"
fs sums "$T/r.$VM" >"$T/r.m" || fail "sums of the restore failed"
same "restore of $VA" "$T/api.sums" "$T/r.a"
same "restore of $VM" "$T/mnt.sums" "$T/r.m"
# The hard link came back as one.
/usr/bin/python3 -c '
import os, sys
def st(p):
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for c in p.split("/")[:-1]:
        nfd = os.open(c, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    s = os.stat(p.split("/")[-1], dir_fd=fd)
    os.close(fd)
    return s
os.chdir(sys.argv[1])
a, l = st(sys.argv[2]), st(sys.argv[3])
assert (a.st_ino, a.st_nlink) == (l.st_ino, 2), (a, l)' \
	"$T/r.$VA" "$("$LP" path 4095 a)" "$("$LP" path 4000 l)" ||
	fail "the restored hard link is not one"
stop_ckptd d
finish
