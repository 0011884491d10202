#!/bin/bash
# t_names: names are POSIX names.  Every byte but '/' and NUL may be in a
# job, version or file name (spaces, "model (1).pt", "~#%:'()", quotes,
# newlines and other control bytes, UTF-8 and bytes that are not UTF-8,
# components of 255 bytes); "." and ".." stay refused.
#  - mount: a tree of such names copied into MOUNT/<odd job>/<odd ver>.tmp,
#    committed by rename, read back byte for byte; it drains to the PFS under
#    the same names (files/<path>), and `ckptctl restore` after the local
#    copy is dropped (so from the PFS) gives the tree back;
#  - C API: `ckptctl import` (ckpt_write) of the same tree under a job of
#    two odd components, restore, compare; `ckptctl --json ls` still parses;
#  - refusals: a 256-byte component is ENAMETOOLONG through the mount.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

PFS=$T/pfs
M=$T/mnt
SRC=$T/src
JOB=$'run (\xc3\xbc) #1 ~%:\''
VER=$'v 1 \xe6\x97\xa5'

# Names as bytes (os.fsencode round trips them); the same list drives both
# the generator and the check so that a missing file is named.
NAMES_PY='
import os, sys
names = [b"model (1).pt", b"~#%:\x27()", b"a b", b" lead", b"trail ",
         b"quo\"te", b"back\\slash", b"new\nline", b"tab\there", b"\x01\x7f",
         b"caf\xc3\xa9", b"\xe6\x95\xb0\xe6\x8d\xae.bin", b"\xff\xfe not utf-8",
         b"-dash", b"...", b"..x", b".hidden", b"*?[]{}$!&;|<>",
         "\u00e9".encode() * 127 + b"x"]
dirs = [b"", b"dir (2)", b"\xd0\xb4\xd0\xb8\xd1\x80/sub dir", b"x:y/#z"]
'
GEN_PY=$NAMES_PY'
root = os.fsencode(sys.argv[1])
for i, d in enumerate(dirs):
    os.makedirs(os.path.join(root, d), exist_ok=True)
    for j, n in enumerate(names):
        with open(os.path.join(root, d, n), "wb") as f:
            f.write(bytes([(i * 31 + j * 7 + k) % 251 for k in range(100 * j + i)]))
'
# CMP_PY A B: the same files (paths as bytes) with the same contents; B may
# have the .commit marker ckptfs shows in a committed version.
CMP_PY='
import os, sys
def tree(root):
    root = os.fsencode(root); out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    out.pop(b".commit", None)
    return out
a, b = tree(sys.argv[1]), tree(sys.argv[2])
if a != b:
    print("missing:", sorted(set(a) - set(b))[:5], "extra:", sorted(set(b) - set(a))[:5],
          "differ:", [k for k in a if k in b and a[k] != b[k]][:5])
    sys.exit(1)
print(len(a), "files")
'

same() { # A B WHAT
	/usr/bin/python3 -c "$CMP_PY" "$1" "$2" >"$T/cmp.out" 2>&1 ||
		fail "$3: $(cat "$T/cmp.out")"
	info "$3: $(cat "$T/cmp.out") match"
}

/usr/bin/python3 -c "$GEN_PY" "$SRC" || fail "generating the tree failed"
drain_conf d
start_ckptd d
mount_ckptfs d "$M"

# ---- through the mount -------------------------------------------------------
mkdir "$M/$JOB" "$M/$JOB/$VER.tmp" || fail "mkdir of an odd job or version failed"
cp -r "$SRC/." "$M/$JOB/$VER.tmp/" || fail "cp -r of odd names into the mount failed"
same "$SRC" "$M/$JOB/$VER.tmp" "open version"
mv "$M/$JOB/$VER.tmp" "$M/$JOB/$VER" || fail "commit by rename failed"
same "$SRC" "$M/$JOB/$VER" "committed version"
ctl d ls "$JOB" | grep -q "^$VER " || fail "ckptctl ls does not list '$VER': $(ctl d ls "$JOB")"

long=$(printf 'y%.0s' $(seq 256))
mkdir "$M/$JOB/w.tmp" || fail "mkdir w.tmp failed"
out=$(touch "$M/$JOB/w.tmp/$long" 2>&1) && fail "a 256-byte component was created"
[[ $out == *"File name too long"* ]] || fail "a 256-byte component: '$out', want ENAMETOOLONG"
rmdir "$M/$JOB/w.tmp" || fail "rmdir of an empty version failed"

# ---- drained to the PFS under the same names, restored from there -----------
ctl d wait "$JOB" "$VER" drained --timeout "$(scaled 30)" >/dev/null ||
	fail "the version did not drain"
same "$SRC" "$(pfs_vdir "$JOB" "$VER")/files" "PFS copy"
ctl d rm "$JOB" "$VER" >/dev/null || fail "rm of the local copy failed"
ctl d restore "$JOB" "$VER" --to "$T/r1" >/dev/null || fail "restore from the PFS failed"
same "$SRC" "$T/r1" "restore from the PFS"

# ---- the C API (ckptctl import writes with ckpt_write) -----------------------
JOB2=$'proj x/\xe2\x82\xac \'q\' (2)'
ctl d import "$JOB2" "$VER" "$SRC" >/dev/null || fail "ckptctl import of odd names failed"
ctl d restore "$JOB2" "$VER" --to "$T/r2" >/dev/null || fail "restore of the import failed"
same "$SRC" "$T/r2" "import and restore"
ctl d verify "$JOB2" "$VER" >/dev/null || fail "verify of odd names failed"
ctl d --json ls >"$T/ls.json" || fail "ckptctl --json ls failed"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
jobs = [j["job"] if isinstance(j, dict) else j for j in d["jobs"]]
assert len(jobs) == 2, jobs
' "$T/ls.json" || fail "ckptctl --json ls: $(cat "$T/ls.json")"

umount_ckptfs "$M"
stop_ckptd d
