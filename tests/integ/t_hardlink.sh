#!/bin/bash
# t_hardlink: hard links (ckpt_link) in every copy a version has.
#  - ckpt_links builds a version with links, unlinks of the name that holds
#    the file, renames over links and onto the same file, and checks it
#    open and committed (names, nlink, one ino per file, bytes, mode,
#    xattrs);
#  - the local copy after a SIGKILL and two clean restarts;
#  - the PFS copy: the linked names are one inode there (nlink 2), the
#    others are not; read back through ckptd once the local copy is
#    dropped, and again after a restart (found on the PFS at start);
#  - `ckptctl restore` makes the links again (one inode, nlink 2), with
#    the bytes;
#  - a second version drained incrementally over the first keeps its links.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"

LN=$BUILD/tests/ckpt_links
PFS=$T/pfs
JOB=hl

links() { "$LN" "$(sock d)" "$@"; }
# ino FILE: its inode number; nl FILE: its link count.
ino() { stat -c %i "$1"; }
nl() { stat -c %h "$1"; }

# linked DIR WHAT [nobytes]: the names ckpt_links leaves, as links where
# they must be, and their bytes (not in an incremental copy on the PFS,
# whose files hold only the chunks not referred to the base).
linked() {
	local d=$1
	[ "$(ino "$d/c")" = "$(ino "$d/x")" ] || fail "$2: c and x are not one inode"
	[ "$(ino "$d/z")" = "$(ino "$d/w")" ] || fail "$2: z and w are not one inode"
	[ "$(nl "$d/c")" = 2 ] && [ "$(nl "$d/z")" = 2 ] ||
		fail "$2: link counts $(nl "$d/c"), $(nl "$d/z"), want 2"
	[ "$(nl "$d/d/e")" = 1 ] || fail "$2: d/e has $(nl "$d/d/e") links, want 1"
	[ "$(ino "$d/c")" != "$(ino "$d/z")" ] || fail "$2: c and z are one inode"
	[ -e "$d/a" ] && fail "$2: a is there"
	if [ "${3:-}" != nobytes ]; then
		[ "$(cat "$d/c")" = x-file ] && [ "$(cat "$d/w")" = zzzz ] ||
			fail "$2: wrong bytes in c or w"
		[ "$(stat -c %s "$d/d/e")" = 12000 ] ||
			fail "$2: d/e is $(stat -c %s "$d/d/e") bytes"
	fi
	info "$2: links as written"
}

drain_conf d incremental=1 keep=100
start_ckptd d

# ---- written, then the local copy across a crash and two clean restarts ----
links write "$JOB" v1 || fail "ckpt_links write failed"
restart d
links check "$JOB" v1 || fail "v1 after SIGKILL and restart"
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
links check "$JOB" v1 || fail "v1 after two clean restarts"

# ---- the PFS copy -------------------------------------------------------------
ctl d wait "$JOB" v1 drained --timeout "$(scaled 30)" >/dev/null ||
	fail "v1 did not drain"
linked "$(pfs_vdir "$JOB" v1)/files" "PFS copy of v1"
[ -z "$(pfs_temps)" ] || fail "drain temporaries left: $(pfs_temps)"

# v2: the same links over v1 on the PFS (incremental: unchanged chunks
# refer to v1's), then read back after its local copy goes.
links write "$JOB" v2 || fail "ckpt_links write v2 failed"
ctl d wait "$JOB" v2 drained --timeout "$(scaled 30)" >/dev/null ||
	fail "v2 did not drain"
linked "$(pfs_vdir "$JOB" v2)/files" "PFS copy of v2" nobytes

ctl d rm "$JOB" v1 >/dev/null || fail "rm of v1's local copy failed"
ctl d rm "$JOB" v2 >/dev/null || fail "rm of v2's local copy failed"
links check "$JOB" v1 || fail "v1 read from the PFS"
links check "$JOB" v2 || fail "v2 read from the PFS"
restart d
links check "$JOB" v1 || fail "v1 from the PFS after a restart"
links check "$JOB" v2 || fail "v2 from the PFS after a restart"
ctl d verify "$JOB" v2 >/dev/null || fail "verify of v2 (PFS) failed"

# ---- restore ---------------------------------------------------------------------
ctl d restore "$JOB" v2 --to "$T/r2" >/dev/null || fail "restore of v2 failed"
linked "$T/r2" "restore of v2"
[ "$(stat -c %a "$T/r2/d/e")" = 640 ] || fail "restored d/e has mode $(stat -c %a "$T/r2/d/e")"
if command -v getfattr >/dev/null; then
	[ "$(getfattr --only-values -n user.k "$T/r2/d/e" 2>/dev/null)" = via-c ] ||
		fail "restored d/e lost its xattr user.k"
fi
stop_ckptd d
