#!/bin/bash
# t_drain_links: the drain's hard links on the PFS (server/pfs/pfscopy.c,
# copy_hardlink) across a SIGKILL while they are being made, and a link
# that fails.  The version is ckpt_links's: c and x one file, z and w one
# file, d/e alone.  The drain copies the files with bytes first, then makes
# each second name a link (made under a temporary name, renamed into place,
# journaled).  A delay rule on "link" (CKPT_FAULT) holds the drain just
# before its first link; the test sees the files with bytes in place and
# the second names missing, then:
#  - kill:     SIGKILL there;
#  - renamed:  puts the missing names in place itself as links, as a copy
#              that renamed them but died before its journal did, then
#              SIGKILL: the restart's links must leave nlink 2, not 3;
#  - stale:    leaves a stale file under the temporary name of each missing
#              name (tmp.N, N its index in the version's file list), as a
#              copy that linked it but died before the rename, then SIGKILL;
#  - failed:   no kill: the first link fails (EIO), the attempt fails, and
#              the retry completes it.
# After each: a restart without faults, the drain completes at its first
# attempt, the names are links (one inode, nlink 2), no temporaries or
# journal are left, and the version reads back through ckptd from the PFS;
# then two clean restarts and the same checks.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"

LN=$BUILD/tests/ckpt_links
PFS=$T/pfs
HOLD=$(scaled 60)000     # the delay rule: longer than any poll below

links() { "$LN" "$(sock d)" "$@"; }
ino() { stat -c %i "$1"; }
nl() { stat -c %h "$1"; }

# The PFS names of JOB's v1 once drained: links where they must be.
pfs_linked() {
	local f
	f=$(pfs_vdir "$1" v1)/files
	[ "$(ino "$f/c")" = "$(ino "$f/x")" ] && [ "$(ino "$f/z")" = "$(ino "$f/w")" ] ||
		fail "$1 ($2): the PFS copy's names are not links"
	[ "$(nl "$f/c")" = 2 ] && [ "$(nl "$f/z")" = 2 ] && [ "$(nl "$f/d/e")" = 1 ] ||
		fail "$1 ($2): link counts c $(nl "$f/c"), z $(nl "$f/z"), d/e $(nl "$f/d/e"); want 2, 2, 1"
	[ "$(cat "$f/c")" = x-file ] && [ "$(cat "$f/w")" = zzzz ] ||
		fail "$1 ($2): wrong bytes on the PFS"
	[ -z "$(pfs_temps)" ] || fail "$1 ($2): temporaries left: $(pfs_temps)"
	[ -z "$(find "$T/d/store/drain" -name '*.journal' 2>/dev/null)" ] ||
		fail "$1 ($2): a drain journal is left"
}

# held JOB: the files with bytes are on the PFS and one name of each pair
# is missing: the drain is at (or just before) its first link.
held() {
	local f
	f=$(pfs_vdir "$1" v1)/files
	[ -f "$f/d/e" ] || return 1
	{ [ -e "$f/c" ] && [ ! -e "$f/x" ]; } || { [ ! -e "$f/c" ] && [ -e "$f/x" ]; } ||
		return 1
	{ [ -e "$f/z" ] && [ ! -e "$f/w" ]; } || { [ ! -e "$f/z" ] && [ -e "$f/w" ]; }
}

# file_index JOB NAME: NAME's index in v1's file list (the drain's
# temporary of that file is tmp.INDEX).
file_index() {
	ctl d --json ls "$1" v1 | /usr/bin/python3 -c '
import json, sys
names = [f["path"] for f in json.load(sys.stdin)["files"]]
print(names.index(sys.argv[1]))' "$2"
}

# drain_errors: the failed drain attempts ckptd counts since it started.
drain_errors() {
	ctl d --json status | /usr/bin/python3 -c \
		'import json,sys; print(json.load(sys.stdin)["daemon"]["drain_errors"])'
}

# afterwards JOB WHAT: restart without faults, the drain completes at its
# first attempt (what a killed copy left must not fail one: a retry would
# hide it), and every check holds, then again after two clean restarts.
afterwards() {
	local job=$1 what=$2 i
	CKPT_FAULT='' start_ckptd d
	ctl d wait "$job" v1 drained --timeout "$(scaled 60)" >/dev/null ||
		fail "$what: v1 did not drain after the restart"
	[ "$(drain_errors)" = 0 ] ||
		fail "$what: the resumed drain failed $(drain_errors) time(s) first (see the log)"
	pfs_linked "$job" "$what"
	ctl d rm "$job" v1 >/dev/null || fail "$what: rm of the local copy failed"
	links check "$job" v1 || fail "$what: v1 read from the PFS"
	for i in 1 2; do
		stop_ckptd d
		CKPT_FAULT='' start_ckptd d
		links check "$job" v1 || fail "$what: v1 from the PFS after clean restart $i"
		pfs_linked "$job" "$what, clean restart $i"
	done
	stop_ckptd d
	info "$what: links, bytes and no temporaries after the restarts"
}

# killed JOB WHAT [renamed|stale]
killed() {
	local job=$1 what=$2 how=${3:-} f n
	CKPT_FAULT="link:1+:delay=$HOLD" start_ckptd d
	links write "$job" v1 || fail "$what: ckpt_links write failed"
	poll_until 60 held "$job" || fail "$what: the drain never reached its links"
	f=$(pfs_vdir "$job" v1)/files
	case $how in
	renamed)
		[ -e "$f/c" ] && ln "$f/c" "$f/x" || ln "$f/x" "$f/c"
		[ -e "$f/z" ] && ln "$f/z" "$f/w" || ln "$f/w" "$f/z"
		[ "$(nl "$f/c")" = 2 ] || fail "$what: could not make the links by hand"
		;;
	stale)
		for n in c x z w; do
			[ -e "$f/$n" ] && continue
			n=$(file_index "$job" "$n")
			[ -n "$n" ] || fail "$what: no index for a missing name"
			echo stale >"$f/../tmp.$n"
		done
		[ "$(pfs_temps | wc -l)" = 2 ] || fail "$what: could not leave the temporaries"
		;;
	esac
	alive "$(ckptd_pid d)" || fail "$what: ckptd died in the delay"
	kill9 d
	afterwards "$job" "$what"
}

drain_conf d keep=100 retry_max=1
killed lk/kill "killed before the first link"
killed lk/renamed "killed with the second names already linked" renamed
killed lk/stale "killed with stale temporaries" stale

# A link that fails: the attempt fails, and the retry makes every link.
CKPT_FAULT="link:1:EIO" start_ckptd d
links write lk/failed v1 || fail "failed: ckpt_links write failed"
poll_until 60 grep -q "Input/output error" "$T/d/ckptd.log" ||
	fail "failed: no EIO from the failed link in the log"
ctl d wait lk/failed v1 drained --timeout "$(scaled 60)" >/dev/null ||
	fail "failed: v1 did not drain after the failed link"
pfs_linked lk/failed "a failed link, retried"
stop_ckptd d
afterwards lk/failed "a failed link, retried"

finish
