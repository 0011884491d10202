#!/bin/bash
# t_drain_target: the drain target's mark (server/pfs/pfsmark.h).  A PFS that
# failed to mount leaves its mount point an empty directory on the node's
# own disk; before, drains went into it (filling the local disk, and the
# copies vanished under the PFS once mounted), and a version whose PFS
# copy was not found there was drained again into it.
#  - first: the first drain marks the target (.ckpt-target) and the store
#    records the mark (drain/target).
#  - unmounted: the PFS "unmounted" under a running ckptd (moved away, an
#    empty directory in its place), then across a SIGKILL and a clean
#    restart: nothing at all is written into the empty directory, nothing
#    is drained or evicted, an rm of a drained version is refused with the
#    mark's error and the version stays, a read of an evicted version
#    answers the mark's error, and the log says "is the PFS mounted?".
#    "Mounted" again: the waiting version drains, and every byte of every
#    version reads back, after a SIGKILL and two clean restarts too.
#  - other: a target carrying another mark is refused until `ckptctl drain
#    --adopt-target`, which takes it and records its mark.
#  - upgrade: a store from before the mark (no record) with drained
#    versions: an empty target is refused (a PFS not mounted at the first
#    start after the upgrade) until --adopt-target; a target that has
#    content gets its mark at once.
#  - hostile: a mark that is a symbolic link, or a file owned by a user, is
#    not taken (drains wait), and the mark a user cannot plant in a target
#    root it cannot write.
#  - writable: a target others may write (1777; 0775 with a user's group;
#    owned by a user; an ACL entry for a user) is refused, at first use too
#    (no mark made), until closed; then every version drains and reads
#    back through the restarts.
#  - mount: [drain] mount, the target itself: nothing is marked or written
#    there while it is not a mount point, at first use too (the one case
#    the mark cannot catch); drains go on once it is mounted.
#  - readonly: a target without a mark that this ckptd cannot mark (mounted
#    read-only on a node that only restores) is scanned all the same: its
#    versions are listed and read back.
#  - moved: target/ is the same target; a new empty path is refused to a
#    store that drained before, until --adopt-target.
#  - reused: an old PFS copy of a name reused locally (the old version
#    only on the PFS, unlisted while it was not mounted) is not taken for
#    the new version's copy, by the late scan or the start-up one.
#  - missing: a target below the mount point, not there at all: no copy
#    taken as gone, nothing written under the mount point.
#  - evicted: an upgraded store with every drained version evicted.
# TIMEOUT: 420
set -u
. "$(dirname "$0")/lib.sh"

JOB=mk/job
SZ=(-n 2 -z 300000)

has_ctl || skip "ckptctl not built"

mark_ok() { grep -qE '^ckpt-target 1 [0-9a-f]{32}$' "$1/.ckpt-target"; }
mark_id() { sed -n 's/^ckpt-target 1 //p' "$1/.ckpt-target"; }
record_id() { sed -n 1p "$T/$1/store/drain/target"; }
empty_dir() { [ -z "$(ls -A "$1")" ]; }
drains() { grep -c "drain: $JOB/$2 drained" "$T/$1/ckptd.log"; }
logged() { poll_until 20 grep -q -- "$2" "$T/$1/ckptd.log"; }
# unmounted_refused NAME MESSAGE WHY: with an empty directory in place of
# $PFS (the PFS moved aside, as an unmounted mount point), NAME starts, its
# v2 stays LOCAL, it logs MESSAGE (else fail WHY) and writes nothing there;
# then NAME stops and the PFS is back.
unmounted_refused() {
	mv "$PFS" "$PFS.real"
	mkdir "$PFS"
	start_ckptd "$1"
	tw "$1" write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	logged "$1" "$2" || fail "$3"
	empty_dir "$PFS" || fail "written into the unmounted target: $(ls -A "$PFS")"
	stop_ckptd "$1"
	rmdir "$PFS"
	mv "$PFS.real" "$PFS"
}

# write_drained NAME VERSION SEED
write_drained() {
	tw "$1" write "$JOB" "$2" "${SZ[@]}" -S "$3" -w drained ||
		fail "$2 not drained"
}

first() {
	PFS=$T/pfs1
	drain_conf f retry_max=1
	start_ckptd f
	write_drained f v1 1
	mark_ok "$PFS" || fail "no mark in the target: '$(cat "$PFS/.ckpt-target" 2>&1)'"
	[ "$(record_id f)" = "$(mark_id "$PFS")" ] ||
		fail "the store records '$(record_id f)', the mark is '$(mark_id "$PFS")'"
	[ "$(sed -n 2p "$T/f/store/drain/target")" = "$PFS" ] ||
		fail "the record names '$(sed -n 2p "$T/f/store/drain/target")'"
	grep -q "the target $PFS is marked $(mark_id "$PFS") (first use)" "$T/f/ckptd.log" ||
		fail "the first use is not logged"
	stop_ckptd f
	info "[first] the target is marked, the store records it"
}

# um_check: every version's bytes (v1 and v2 from the PFS, evicted).
um_check() {
	local i
	for i in 1 2 3; do
		tw um verify "$JOB" "v$i" "${SZ[@]}" -S "$i" || return 1
	done
}

unmounted() {
	local out
	PFS=$T/pfs2
	drain_conf um retry_max=1 -- keep=1
	start_ckptd um
	write_drained um v1 1
	write_drained um v2 2
	poll_until 20 level_is um "$JOB" v1 drained || fail "v1 not drained"
	# keep=1: v1 is evicted (only on the PFS).
	poll_until 20 out_is 1 eval 'find "$T/um/store/man" -name "*.man" | wc -l' ||
		fail "v1 not evicted"
	mv "$PFS" "$PFS.real"
	mkdir "$PFS"
	tw um write "$JOB" v3 "${SZ[@]}" -S 3 -w local || fail "v3 not local"
	logged um "the target $PFS has no mark .ckpt-target (is the PFS mounted?)" ||
		fail "no error that the target lacks its mark"
	out=$(ctl um status 2>&1)
	grep -q "lacks this node's mark" <<<"$out" || fail "status does not say it: $out"
	poll_until 20 eval 'ctl um ls "$JOB" | grep -Eq "^v3 .* retry$"' ||
		fail "ckptctl ls does not show v3 retrying: $(ctl um ls "$JOB")"
	out=$(ctl um ls "$JOB" v3 | head -1)
	grep -q "drain retry (attempt [0-9]* failed: the drain target is not there or lacks this node's mark (is the PFS mounted?); next in " <<<"$out" ||
		fail "ckptctl ls $JOB v3 does not say why it waits: $out"
	out=$(ctl um rm "$JOB" v2 2>&1) && fail "rm of v2 succeeded with the PFS unmounted"
	grep -q "lacks this node's mark" <<<"$out" || fail "rm v2: '$out'"
	level_is um "$JOB" v2 drained || fail "v2 is $(vlevel um "$JOB" v2) after the refused rm"
	out=$(tw um verify "$JOB" v1 "${SZ[@]}" -S 1 2>&1) && fail "v1 read back from an empty target"
	grep -q "lacks this node's mark" <<<"$out" || fail "read of v1: '$out'"
	empty_dir "$PFS" || fail "written into the unmounted target: $(ls -A "$PFS")"
	level_is um "$JOB" v3 local || fail "v3 is $(vlevel um "$JOB" v3)"

	kill9 um
	start_ckptd um
	tw um write "$JOB" v4 "${SZ[@]}" -S 4 -w local || fail "v4 not local"
	out=$(ctl um rm "$JOB" v4 2>&1) || fail "rm of the local v4: $out"
	stop_ckptd um
	start_ckptd um
	[ "$(grep -c 'is not there or lacks its mark: not scanned' "$T/um/ckptd.log")" = 2 ] ||
		fail "the starts do not say the target is not scanned"
	poll_until 20 out_gt 2 eval 'grep -c "has no mark .ckpt-target" "$T/um/ckptd.log"' ||
		fail "the restarts do not say the target lacks its mark"
	empty_dir "$PFS" || fail "written into the unmounted target: $(ls -A "$PFS")"
	[ "$(drains um v3)" = 0 ] || fail "v3 drained into the unmounted target"
	tw um verify "$JOB" v3 "${SZ[@]}" -S 3 || fail "v3 does not read back"

	rmdir "$PFS"
	mv "$PFS.real" "$PFS"
	poll_until 30 level_is um "$JOB" v3 drained ||
		fail "v3 is $(vlevel um "$JOB" v3) once the target is back"
	grep -q "the target $PFS carries its mark again" "$T/um/ckptd.log" ||
		fail "the mark's return is not logged"
	out=$(ctl um ls "$JOB")
	grep -Eq "^v3 .* done$" <<<"$out" || fail "ckptctl ls does not show v3 drained: $out"
	grep -q "v3: drain" <<<"$out" && fail "ckptctl ls still says why v3 waits: $out"
	um_check || fail "a version does not read back once the target is back"
	each_restart um um_check
	stop_ckptd um
	info "[unmounted] nothing written to the empty mount point; drained once back"
}

other() {
	local out
	PFS=$T/pfs3
	drain_conf o retry_max=1
	start_ckptd o
	write_drained o v1 1
	echo "ckpt-target 1 0123456789abcdef0123456789abcdef" >"$PFS/.ckpt-target"
	tw o write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	logged o "the target $PFS carries another store's mark 0123456789abcdef0123456789abcdef" ||
		fail "no error that the target carries another mark"
	[ "$(drains o v2)" = 0 ] || fail "v2 drained into a target with another mark"
	[ -d "$(pfs_vdir "$JOB" v2)" ] && fail "v2 written into a target with another mark"
	out=$(ctl o drain --adopt-target 2>&1) || fail "drain --adopt-target: $out"
	# at once, not after the copy's back-off
	poll_until 10 level_is o "$JOB" v2 drained || fail "v2 not drained after --adopt-target"
	[ "$(record_id o)" = 0123456789abcdef0123456789abcdef ] ||
		fail "the store records '$(record_id o)' after --adopt-target"
	grep -q "is marked 0123456789abcdef0123456789abcdef (taken as it is)" "$T/o/ckptd.log" ||
		fail "the adoption is not logged"
	each_restart o eval 'tw o verify "$JOB" v1 "${SZ[@]}" -S 1 && tw o verify "$JOB" v2 "${SZ[@]}" -S 2'
	stop_ckptd o
	info "[other] another mark refused until --adopt-target"
}

upgrade() {
	local out
	PFS=$T/pfs4
	drain_conf u retry_max=1
	start_ckptd u
	write_drained u v1 1
	stop_ckptd u
	# A store from before the mark, the PFS not mounted at its first start.
	rm -f "$T/u/store/drain/target"
	mv "$PFS" "$PFS.real"
	mkdir "$PFS"
	start_ckptd u
	tw u write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	logged u "the target $PFS is empty, but versions were drained from this store (is the PFS mounted?)" ||
		fail "no error that the empty target is not taken"
	empty_dir "$PFS" || fail "written into the empty target: $(ls -A "$PFS")"
	[ -e "$T/u/store/drain/target" ] && fail "an empty target recorded"
	empty_dir "$PFS" || fail "written into the empty target: $(ls -A "$PFS")"
	# Mounted, still without a mark (made before the mark existed).
	rmdir "$PFS"
	mv "$PFS.real" "$PFS"
	rm -f "$PFS/.ckpt-target"
	poll_until 30 level_is u "$JOB" v2 drained || fail "v2 not drained once the PFS is back"
	mark_ok "$PFS" || fail "no mark made in a target with content"
	[ "$(record_id u)" = "$(mark_id "$PFS")" ] || fail "the mark is not recorded"
	stop_ckptd u
	# An empty target on purpose: --adopt-target.
	rm -f "$T/u/store/drain/target"
	PFS=$T/pfs4b
	mkdir -p "$PFS"
	sed -i "s|^target = .*|target = $PFS|" "$T/u/ckptd.conf"
	start_ckptd u
	tw u write "$JOB" v3 "${SZ[@]}" -S 3 -w local || fail "v3 not local"
	logged u "the target $PFS is empty, but versions were drained" ||
		fail "the new empty target is taken without a record"
	out=$(ctl u drain --adopt-target 2>&1) || fail "drain --adopt-target: $out"
	poll_until 10 level_is u "$JOB" v3 drained || fail "v3 not drained after --adopt-target"
	mark_ok "$PFS" || fail "no mark after --adopt-target"
	stop_ckptd u
	info "[upgrade] an empty target refused without a record, one with content marked"
}

moved() {
	local out
	PFS=$T/pfs5
	drain_conf mv retry_max=1
	start_ckptd mv
	write_drained mv v1 1
	stop_ckptd mv
	local old=$PFS
	# The same path with a trailing slash, the PFS not mounted: the same
	# target, refused.
	sed -i "s|^target = .*|target = $PFS/|" "$T/mv/ckptd.conf"
	unmounted_refused mv "has no mark .ckpt-target (is the PFS mounted?)" \
		"target/ is not taken for the target"
	# A new, empty path: this store drained before, so it is refused
	# (it may be a mount point too) until --adopt-target.
	PFS=$T/pfs5b
	mkdir -p "$PFS"
	sed -i "s|^target = .*|target = $PFS|" "$T/mv/ckptd.conf"
	start_ckptd mv
	grep -q "the target was $old, now $PFS: its mark is taken anew" "$T/mv/ckptd.log" ||
		fail "the change of target is not logged"
	logged mv "the target $PFS is empty, but versions were drained from this store" ||
		fail "a new empty target is taken by a store that drained before"
	empty_dir "$PFS" || fail "written into the new empty target: $(ls -A "$PFS")"
	out=$(ctl mv drain --adopt-target 2>&1) || fail "drain --adopt-target: $out"
	poll_until 10 level_is mv "$JOB" v2 drained || fail "v2 not drained after --adopt-target"
	mark_ok "$PFS" || fail "no mark in the new target"
	[ "$(mark_id "$PFS")" != "$(mark_id "$old")" ] || fail "the new target has the old mark"
	[ "$(record_id mv)" = "$(mark_id "$PFS")" ] || fail "the new mark is not recorded"
	stop_ckptd mv
	info "[moved] target/ is the target; a new empty path waits for --adopt-target"
}

# A version only on the PFS, unlisted while the PFS is not mounted, and a
# new local version of the same name: the PFS copy is the old one's, not
# the new one's drained copy (before, the new one was taken as DRAINED
# uncopied, and once evicted read back the old bytes).  late: found by the
# scan after the PFS is back, else by the start-up scan.
reused() {
	local late=$1 name=re$1 out
	PFS=$T/pfs8$1
	drain_conf "$name" retry_max=1
	start_ckptd "$name"
	write_drained "$name" v1 1
	out=$(ctl "$name" rm "$JOB" v1 2>&1) || fail "rm (evict) v1: $out"
	stop_ckptd "$name"
	mv "$PFS" "$PFS.real"
	mkdir "$PFS"
	start_ckptd "$name"
	ctl "$name" drain --pause >/dev/null || fail "drain --pause"
	tw "$name" write "$JOB" v1 "${SZ[@]}" -S 2 -w local || fail "the new v1 not local"
	[ "$late" = 1 ] || stop_ckptd "$name"
	rmdir "$PFS"
	mv "$PFS.real" "$PFS"
	if [ "$late" = 1 ]; then
		logged "$name" "the target $PFS is scanned" || fail "no scan once the target is back"
	else
		start_ckptd "$name"
		ctl "$name" drain --pause >/dev/null || fail "drain --pause"
	fi
	grep -q "$JOB/v1 on the PFS is an older version of that name" "$T/$name/ckptd.log" ||
		fail "the old PFS copy is not told from the new version"
	level_is "$name" "$JOB" v1 local || fail "the new v1 is $(vlevel "$name" "$JOB" v1), uncopied"
	ctl "$name" drain --resume >/dev/null || fail "drain --resume"
	poll_until 20 level_is "$name" "$JOB" v1 drained || fail "the new v1 not drained"
	out=$(ctl "$name" rm "$JOB" v1 2>&1) || fail "rm (evict) the new v1: $out"
	tw "$name" verify "$JOB" v1 "${SZ[@]}" -S 2 || fail "the new v1 does not read back from the PFS"
	each_restart "$name" tw "$name" verify "$JOB" v1 "${SZ[@]}" -S 2
	stop_ckptd "$name"
	info "[reused $late] an old PFS copy of a reused name is not the new version's"
}

# The target a directory below the mount point: not there at all while the
# PFS is not mounted.  No copy is taken as gone: v1 stays DRAINED (before,
# it went back to LOCAL and was copied again), and the versions only on
# the PFS stay listed.
missing() {
	local mnt=$T/mnt9
	PFS=$mnt/ckpt
	mkdir -p "$PFS"
	drain_conf ms retry_max=1 -- keep=1
	start_ckptd ms
	write_drained ms v1 1
	write_drained ms v2 2
	mv "$mnt" "$mnt.real"
	mkdir "$mnt"
	tw ms write "$JOB" v3 "${SZ[@]}" -S 3 -w local || fail "v3 not local"
	logged ms "the target $PFS does not exist (is the PFS mounted?)" ||
		fail "no error that the target is not there"
	poll_until 20 grep -q "$JOB/v2 stays in the local store" "$T/ms/ckptd.log" ||
		fail "no eviction of v2 tried"
	grep -q "has no copy of it" "$T/ms/ckptd.log" && fail "a copy taken as gone from a missing target"
	level_is ms "$JOB" v2 drained || fail "v2 is $(vlevel ms "$JOB" v2)"
	empty_dir "$mnt" || fail "written under the unmounted mount point: $(ls -A "$mnt")"
	rmdir "$mnt"
	mv "$mnt.real" "$mnt"
	poll_until 30 level_is ms "$JOB" v3 drained || fail "v3 not drained once back"
	[ "$(drains ms v2)" = 1 ] || fail "v2 drained $(drains ms v2) times"
	each_restart ms eval 'tw ms verify "$JOB" v1 "${SZ[@]}" -S 1 && tw ms verify "$JOB" v2 "${SZ[@]}" -S 2 && tw ms verify "$JOB" v3 "${SZ[@]}" -S 3'
	stop_ckptd ms
	info "[missing] a target not there: nothing taken as gone"
}

hostile() {
	local id errs
	PFS=$T/pfs6
	test_users ckmk1
	chmod 711 "$T"        # the user reaches the target (to be refused there)
	drain_conf h retry_max=1
	start_ckptd h
	write_drained h v1 1
	id=$(mark_id "$PFS")
	# The right id, as a link to a file elsewhere.
	echo "ckpt-target 1 $id" >"$T/fake-mark"
	rm "$PFS/.ckpt-target"
	ln -s "$T/fake-mark" "$PFS/.ckpt-target"
	tw h write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	logged h "the target $PFS has a .ckpt-target that ckptd did not write" ||
		fail "a linked mark is taken"
	[ "$(drains h v2)" = 0 ] || fail "v2 drained with a linked mark"
	# The right id, in a file a user owns.
	rm "$PFS/.ckpt-target"
	echo "ckpt-target 1 $id" >"$PFS/.ckpt-target"
	chown ckmk1 "$PFS/.ckpt-target"
	errs=$(sjson h drain_errors)
	poll_until 20 out_gt "$errs" sjson h drain_errors ||
		fail "no copy tried with a mark a user owns"
	[ "$(drains h v2)" = 0 ] || fail "v2 drained with a mark a user owns"
	as ckmk1 sh -c "echo x >'$PFS/.ckpt-target.x'" 2>/dev/null &&
		fail "a user wrote into the target's root"
	chown root "$PFS/.ckpt-target"
	poll_until 30 level_is h "$JOB" v2 drained || fail "v2 not drained once the mark is ckptd's"
	stop_ckptd h
	info "[hostile] linked and user-owned marks refused"
}

# A target others may write: refused, at first use and later.  A user could
# otherwise make a level under other users' job names first (mk.dir here:
# their drains fail with EACCES) or plant a mark before ckptd's first use.
# refused_until VERSION SEED WHAT UNDO...: with the target opened to a user
# (WHAT says how), VERSION is written, its copy refused (logged once more),
# and it drains once UNDO has closed the target again.
refused_until() {
	local v=$1 seed=$2 what=$3 errs n
	shift 3
	n=$(grep -c "the target $PFS may be written by others than ckptd" "$T/wr/ckptd.log")
	errs=$(sjson wr drain_errors)
	tw wr write "$JOB" "$v" "${SZ[@]}" -S "$seed" -w local || fail "$v not local"
	poll_until 20 out_gt "$errs" sjson wr drain_errors ||
		fail "no copy refused with a target $what"
	[ "$(grep -c "the target $PFS may be written by others than ckptd" "$T/wr/ckptd.log")" = $((n + 1)) ] ||
		fail "a target $what is not logged as refused"
	[ "$(drains wr "$v")" = 0 ] || fail "$v drained into a target $what"
	"$@" || fail "closing the target ($*)"
	poll_until 30 level_is wr "$JOB" "$v" drained || fail "$v not drained once the target is closed"
}
# acl_write DIR UID|-: a POSIX ACL on DIR that lets UID write (rwx for it and
# the mask), or none (-).
acl_write() {
	/usr/bin/python3 - "$@" <<'PY'
import os, struct, sys
d, uid = sys.argv[1], sys.argv[2]
if uid == "-":
    os.removexattr(d, "system.posix_acl_access")
    sys.exit(0)
e = lambda tag, perm, i: struct.pack("<HHI", tag, perm, i)
acl = struct.pack("<I", 2) + e(1, 7, 0xffffffff) + e(2, 7, int(uid)) + \
      e(4, 5, 0xffffffff) + e(0x10, 7, 0xffffffff) + e(0x20, 5, 0xffffffff)
os.setxattr(d, "system.posix_acl_access", acl)
PY
}

# A target others may write: refused, at first use and later.  A user could
# otherwise make a level under other users' job names first (mk.dir here:
# their drains fail with EACCES) or plant a mark before ckptd's first use.
writable() {
	PFS=$T/pfs11
	test_users ckmk2
	chmod 711 "$T"
	mkdir -p "$PFS" && chmod 1777 "$PFS"
	drain_conf wr retry_max=1
	start_ckptd wr
	tw wr write "$JOB" v1 "${SZ[@]}" -S 1 -w local || fail "v1 not local"
	logged wr "the target $PFS may be written by others than ckptd" ||
		fail "a target every user may write is taken at first use"
	[ ! -e "$PFS/.ckpt-target" ] || fail "a target every user may write was marked"
	as ckmk2 mkdir "$PFS/mk.dir" || fail "a user cannot write into a 1777 target"
	[ "$(drains wr v1)" = 0 ] || fail "v1 drained into a target every user may write"
	rmdir "$PFS/mk.dir"
	chmod 0755 "$PFS"
	poll_until 30 level_is wr "$JOB" v1 drained ||
		fail "v1 not drained once only ckptd may write the target"
	mark_ok "$PFS" || fail "no mark once only ckptd may write the target"
	# Writable by a user's group, owned by a user, or through an ACL entry
	# (its mode then shows the mask, 0775, and the group is root's).
	chgrp ckmk2 "$PFS" && chmod 0775 "$PFS"
	refused_until v2 2 "a user's group may write" eval 'chgrp root "$PFS" && chmod 0755 "$PFS"'
	chown ckmk2 "$PFS"
	refused_until v3 3 "a user owns" chown root "$PFS"
	if acl_write "$PFS" "$(id -u ckmk2)" 2>/dev/null; then
		as ckmk2 mkdir "$PFS/mk2.dir" || fail "the ACL does not let the user write"
		rmdir "$PFS/mk2.dir"
		refused_until v4 4 "an ACL lets a user write" acl_write "$PFS" -
	else
		info "[writable] no POSIX ACLs on this file system: the ACL case not run"
		tw wr write "$JOB" v4 "${SZ[@]}" -S 4 -w drained || fail "v4 not drained"
	fi
	each_restart wr eval 'tw wr verify "$JOB" v1 "${SZ[@]}" -S 1 && tw wr verify "$JOB" v2 "${SZ[@]}" -S 2 &&
		tw wr verify "$JOB" v3 "${SZ[@]}" -S 3 && tw wr verify "$JOB" v4 "${SZ[@]}" -S 4'
	stop_ckptd wr
	info "[writable] a target others may write (mode, owner, ACL) is refused until closed"
}

# [drain] mount = the target itself (a bind mount of $PFS.real): while it
# is not mounted, the first drain neither marks nor writes the empty
# directory; mounted, v1 drains; unmounted again, v2 waits; back, v2
# drains, and every byte reads back through the restarts.
mount_key() {
	local errs
	PFS=$T/pfs12
	mkdir -p "$PFS" "$PFS.real"
	drain_conf mk retry_max=1 "mount=$PFS"
	start_ckptd mk
	tw mk write "$JOB" v1 "${SZ[@]}" -S 1 -w local || fail "v1 not local"
	logged mk "the target $PFS is not mounted: \[drain\] mount is not a mount point" ||
		fail "an unmounted [drain] mount is not refused at first use"
	empty_dir "$PFS" || fail "written into the unmounted mount point: $(ls -A "$PFS")"
	[ "$(drains mk v1)" = 0 ] || fail "v1 drained while the PFS is not mounted"
	mount --bind "$PFS.real" "$PFS" || skip "cannot bind-mount"
	MOUNTS+=("$PFS")
	poll_until 30 level_is mk "$JOB" v1 drained || fail "v1 not drained once mounted"
	mark_ok "$PFS" || fail "no mark once mounted"
	umount "$PFS" || fail "umount $PFS"
	errs=$(sjson mk drain_errors)
	tw mk write "$JOB" v2 "${SZ[@]}" -S 2 -w local || fail "v2 not local"
	poll_until 20 out_gt "$errs" sjson mk drain_errors ||
		fail "no copy refused with the PFS unmounted again"
	empty_dir "$PFS" || fail "written into the mount point unmounted again: $(ls -A "$PFS")"
	[ "$(drains mk v2)" = 0 ] || fail "v2 drained while the PFS is not mounted"
	mount --bind "$PFS.real" "$PFS" || fail "bind-mount again"
	poll_until 30 level_is mk "$JOB" v2 drained || fail "v2 not drained once mounted again"
	each_restart mk eval 'tw mk verify "$JOB" v1 "${SZ[@]}" -S 1 && tw mk verify "$JOB" v2 "${SZ[@]}" -S 2'
	stop_ckptd mk
	info "[mount] nothing drained into [drain] mount while it is not a mount point"
}

readonly_target() {
	local ro
	PFS=$T/pfs7
	drain_conf w retry_max=1
	start_ckptd w
	write_drained w v1 1
	stop_ckptd w
	rm "$PFS/.ckpt-target"        # drained before the mark existed
	ro=$T/pfs7ro
	mkdir -p "$ro"
	mount --bind "$PFS" "$ro" 2>/dev/null || skip "cannot bind-mount"
	MOUNTS+=("$ro")
	mount -o remount,bind,ro "$ro" || skip "cannot remount read-only"
	# A node that only restores, with an empty store: the target cannot
	# be marked, but it is read all the same.
	PFS=$ro
	drain_conf r retry_max=1
	start_ckptd r
	poll_until 20 level_is r "$JOB" v1 drained ||
		fail "v1 not listed from a read-only target: $(vlevel r "$JOB" v1)"
	tw r verify "$JOB" v1 "${SZ[@]}" -S 1 || fail "v1 does not read back from a read-only target"
	[ -e "$ro/.ckpt-target" ] && fail "a mark appeared in a read-only target"
	stop_ckptd r
	info "[readonly] a read-only target without a mark is read"
}

# A store from before the mark whose drained versions are all evicted (so
# none is recorded DRAINED locally), the PFS not mounted at its first start
# after the upgrade: the empty mount point is not marked (before, it was
# taken as a first use and drained into).
evicted() {
	local out
	PFS=$T/pfs10
	drain_conf ev retry_max=1
	start_ckptd ev
	write_drained ev v1 1
	out=$(ctl ev rm "$JOB" v1 2>&1) || fail "rm (evict) v1: $out"
	stop_ckptd ev
	rm -f "$T/ev/store/drain/target" "$PFS/.ckpt-target"
	unmounted_refused ev "the target $PFS is empty, but versions were drained from this store" \
		"the empty mount point is taken"
	start_ckptd ev
	poll_until 20 level_is ev "$JOB" v2 drained || fail "v2 not drained once back"
	each_restart ev eval 'tw ev verify "$JOB" v1 "${SZ[@]}" -S 1 && tw ev verify "$JOB" v2 "${SZ[@]}" -S 2'
	stop_ckptd ev
	info "[evicted] a store with every drained version evicted does not mark an empty target"
}

subtest first first
subtest unmounted unmounted
subtest other other
subtest upgrade upgrade
subtest moved moved
subtest hostile hostile
subtest readonly readonly_target
subtest writable writable
subtest mount mount_key
subtest reused_late reused 1
subtest reused_start reused 0
subtest missing missing
subtest evicted evicted
finish
