#!/bin/bash
# t_pfs_forged: a drained version's directories on the PFS are its owner's,
# so its owner can put a manifest of its own making there.  ckptd takes
# such a manifest for no more than the owner could have had ckptd write
# (an outside attack found each of these taken as written):
#  - forgeries beside the owner's drained v1, made with ckpt_forge as the
#    owner, each in a version directory of its own with v1's files:
#      same   a copy claiming nothing more: taken (it reads back),
#      ownsetid  set-uid and set-gid bits on a file of the owner's and
#             its group's (a user can do that through ckptfs): taken,
#      setuid a set-uid root file, nouid a set-uid file naming no owner
#      (root's once restored), group0 set-gid to a group the owner is
#      not in, device  a 0666 character device, huge  a sparse 1 TiB
#      file (refused by its size before ckptd reads it),
#      xattr  a "trusted." attribute, seq  a seq of 2^64 - 1:
#    refused at start-up; `ckptctl restore` as root of what is taken makes
#    no set-id or device file; versions committed after
#    the restart, and v1, survive a SIGKILL and two clean restarts (the
#    seq forgery wrapped ckptd's counter, whose manifests then overwrote
#    each other);
#  - a FIFO as a version's manifest does not hold ckptd's start, and a FIFO
#    as an evicted version's file fails its reads without holding the
#    workers: another user's version still commits meanwhile;
#  - another uid's manifest under a job name this node already has (a
#    node sharing the target) neither joins that job nor is readable by
#    the job's owner;
#  - manifests of UA's own that would make ckptd hold its memory: a 180
#    MiB one of 8.5 million zero chunks is taken (kept, it holds its
#    files, not its chunk table), and of three with a million names each
#    (85 MiB, about 300 MiB held) only one: ckptd keeps at most 512 MiB of
#    a uid's own manifests in memory, so the others are ignored and
#    logged, and its RSS grows by less than 640 MiB (counting the files'
#    bytes let all three in, 850 MiB); the small forgeries are still
#    taken; of 4,200 small ones, under 4,096 in all (each is one more
#    version the drain's passes and the listings walk).
# The test's uids are made with useradd and removed when it ends.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"
[ "$(id -u)" = 0 ] || skip "needs root (useradd, and a daemon that can chown)"

FORGE=$BUILD/tests/ckpt_forge
UA=ckpt-fa-$$
UB=ckpt-fb-$$
test_users "$UA" "$UB"
chmod 755 "$T"
as "$UA" test -x "$TW" -a -x "$FORGE" ||
	skip "$UA cannot run $TW (a build directory others cannot reach)"
PFS=$T/pfs
mkdir -p "$PFS" && chmod 711 "$PFS"

ARGS=(-n 2 -z 200000 -S 81)
vlist() { ctl d ls "$1" 2>/dev/null; }
listed() { vlist "$1" | grep -qw "$2"; }

drain_conf d keep=1
start_ckptd d
as "$UA" "$TW" write -s "$(sock d)" fa/j v1 "${ARGS[@]}" -w drained ||
	fail "$UA's v1 did not drain"
VD=$(pfs_vdir fa/j v1)
[ -f "$VD/manifest" ] || fail "no manifest at $VD"
# ckptd's own manifest is root's, readable: the owner cannot write it.
[ "$(stat -c %u:%a "$VD/manifest")" = "0:644" ] ||
	fail "v1's manifest is $(stat -c %U:%a "$VD/manifest"), want root's 0644"
as "$UA" sh -c ": >>'$VD/manifest'" 2>/dev/null && fail "$UA could write ckptd's manifest"

# ---- forgeries beside v1, as the owner ------------------------------------------
for w in same ownsetid setuid nouid group0 device xattr seq; do
	nd=$(dirname "$VD")/$w.ver
	as "$UA" mkdir "$nd" || fail "$UA cannot make $nd"
	as "$UA" cp -r "$VD/files" "$nd/" || fail "$UA cannot copy v1's files"
	as "$UA" "$FORGE" "$VD/manifest" "$nd/manifest" "$w" "$w" ||
		fail "ckpt_forge $w failed"
done
# A FIFO as a manifest.
as "$UA" mkdir "$(dirname "$VD")/fifo.ver" &&
	as "$UA" mkfifo "$(dirname "$VD")/fifo.ver/manifest" ||
	fail "$UA cannot make a FIFO manifest"

# A sparse terabyte as a manifest: refused before it is read.
as "$UA" mkdir "$(dirname "$VD")/huge.ver" &&
	as "$UA" truncate -s 1T "$(dirname "$VD")/huge.ver/manifest" ||
	fail "$UA cannot make a sparse manifest"

restart d      # SIGKILL, then a start that must not block on the FIFO
for w in same ownsetid; do
	listed fa/j $w || fail "the harmless $w was not taken: $(vlist fa/j)"
	as "$UA" "$TW" verify -s "$(sock d)" fa/j $w "${ARGS[@]}" ||
		fail "the harmless $w does not read back"
done
for w in setuid nouid group0 device xattr seq fifo huge; do
	listed fa/j "$w" && fail "the $w forgery was taken: $(vlist fa/j)"
done
grep -q "no valid manifest for fa/j/huge on the PFS (File too large)" "$T/d/ckptd.log" ||
	fail "the sparse terabyte manifest was not refused by its size"
info "forgeries refused (setuid, nouid, group0, device, xattr, seq, fifo); a plain copy and the owner's own set-id bits taken"

# Restore as root of the owner's own set-id file: its owner and group.
ctl d restore fa/j ownsetid --to "$T/ro" >/dev/null || fail "restore of ownsetid failed"
[ "$(find "$T/ro" -perm -6000 -user "$UA" -group "$(id -g "$UA")" | wc -l)" = 1 ] ||
	fail "restore of ownsetid: $(find "$T/ro" -perm /6000 -ls)"

# Restore as root of what was taken: nothing set-id, no device.
ctl d restore fa/j same --to "$T/r" >/dev/null || fail "restore of same failed"
[ -z "$(find "$T/r" -perm /6000 -o -type c -o -type b)" ] ||
	fail "restore made set-id or device files: $(find "$T/r" -perm /6000 -o -type c -o -type b)"

# Versions committed now, then a SIGKILL and two clean restarts: every one
# and v1 intact (with a wrapped seq they overwrote each other's manifests).
for i in 1 2 3; do
	"$TW" write -s "$(sock d)" root/j "r$i" -n 1 -z 100000 -S "$((90 + i))" -w local ||
		fail "root/j r$i did not commit"
done
restart d
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
for i in 1 2 3; do
	"$TW" verify -s "$(sock d)" root/j "r$i" -n 1 -z 100000 -S "$((90 + i))" ||
		fail "root/j r$i lost after the restarts"
done
as "$UA" "$TW" verify -s "$(sock d)" fa/j v1 "${ARGS[@]}" ||
	fail "v1 lost after the restarts"
info "committed versions intact after a SIGKILL and two clean restarts"

# ---- a FIFO in place of an evicted version's file --------------------------------
# v1's local copy goes (rm), so its reads come from the PFS.
ctl d rm fa/j v1 >/dev/null 2>&1
f1=$(find "$VD/files" -type f | head -1)
[ -n "$f1" ] || fail "no file of v1 on the PFS"
as "$UA" rm "$f1" && as "$UA" mkfifo "$f1" || fail "$UA cannot swap a file for a FIFO"
readers=()
for i in 1 2 3 4 5 6; do
	timeout "$(scaled 20)" setpriv --reuid="$UA" --regid="$UA" --clear-groups \
		"$TW" verify -s "$(sock d)" fa/j v1 "${ARGS[@]}" >/dev/null 2>&1 &
	readers+=($!)
done
"$TW" write -s "$(sock d)" root/j r4 -n 1 -z 100000 -S 94 -w local ||
	fail "a version could not commit while reads met a FIFO"
for p in "${readers[@]}"; do
	wait "$p"
	[ $? = 1 ] || fail "a read of v1 through a FIFO did not fail cleanly"
done
alive "$(ckptd_pid d)" || fail "ckptd died"
info "a FIFO on the PFS fails its reads; others commit meanwhile"
stop_ckptd d

# ---- another uid's versions under this node's job name -------------------------
# Two nodes share the target: UA's sh/x drains from d, while on e the job
# sh/x is UB's (e's drain paused).  When e starts again it finds UA's
# manifest of sh/x on the PFS: it must not join UB's job, and UB must
# neither read it nor remove it.
drain_conf e
start_ckptd e
ctl e drain --pause >/dev/null || fail "cannot pause e's drain"
as "$UB" "$TW" write -s "$(sock e)" sh/x b1 -n 1 -z 50000 -S 97 -w local ||
	fail "$UB's sh/x b1 did not commit on e"
start_ckptd d
as "$UA" "$TW" write -s "$(sock d)" sh/x a1 -n 1 -z 50000 -S 96 -w drained ||
	fail "$UA's sh/x a1 did not drain"
stop_ckptd d
restart e
vlist_e() { ctl e ls sh/x 2>/dev/null; }
vlist_e | grep -qw a1 && fail "$UA's a1 joined $UB's job sh/x on e: $(vlist_e)"
as "$UB" "$TW" verify -s "$(sock e)" sh/x a1 -n 1 -z 50000 -S 96 2>/dev/null &&
	fail "$UB read $UA's a1 through e"
as "$UB" "$CKPTCTL" -s "$(sock e)" rm sh/x a1 >/dev/null 2>&1
[ -f "$(pfs_vdir sh/x a1)/manifest" ] || fail "$UB removed $UA's a1 from the PFS"
as "$UB" "$TW" verify -s "$(sock e)" sh/x b1 -n 1 -z 50000 -S 97 ||
	fail "$UB's own b1 does not read back on e"
grep -q "is uid $(id -u "$UA")'s, but job sh/x is uid $(id -u "$UB")'s here" "$T/e/ckptd.log" ||
	fail "e did not say why it ignored a1"
stop_ckptd e
info "another uid's manifest under a job name is ignored"

# ---- a uid's own manifests are bounded in all -------------------------------
# ckptd keeps every manifest its start-up scan takes, stripped of its chunk
# table.  A bloat of zero chunks holds little once kept; a manifest of many
# names holds about three times its bytes (the names twice, the entries).
# ckptd takes 512 MiB of memory of a uid's own manifests in all.
nd=$(dirname "$VD")/b1.ver
as "$UA" mkdir "$nd" || fail "$UA cannot make $nd"
as "$UA" "$FORGE" "$VD/manifest" "$nd/manifest" b1 bloat:8500000 ||
	fail "ckpt_forge bloat failed"
[ "$(stat -c %s "$nd/manifest")" -gt $((170 << 20)) ] ||
	fail "the bloated manifest is only $(stat -c %s "$nd/manifest") bytes"
for c in c1 c2 c3; do
	nd=$(dirname "$VD")/$c.ver
	as "$UA" mkdir "$nd" || fail "$UA cannot make $nd"
	as "$UA" "$FORGE" "$VD/manifest" "$nd/manifest" $c files:1000000 ||
		fail "ckpt_forge files failed"
done
[ "$(stat -c %s "$nd/manifest")" -gt $((80 << 20)) ] ||
	fail "the manifest of many names is only $(stat -c %s "$nd/manifest") bytes"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$(ckptd_pid d)/status"; }
# ckptd's RSS without the three, then with them.
for c in c1 c2 c3; do mv "$(dirname "$VD")/$c.ver" "$T/$c.ver"; done
start_ckptd d
r0=$(rss)
stop_ckptd d
for c in c1 c2 c3; do mv "$T/$c.ver" "$(dirname "$VD")/$c.ver"; done
start_ckptd d
r1=$(rss)
listed fa/j b1 || fail "the bloat of zero chunks was not taken: $(vlist fa/j)"
nc=0
for c in c1 c2 c3; do listed fa/j $c && nc=$((nc + 1)); done
[ $nc = 1 ] || fail "$nc of the three manifests of a million names were taken, want 1: $(vlist fa/j)"
# (not under valgrind, whose allocator adds its own to every block: 751
# MiB where 305 without it)
[ "${CKPT_VALGRIND:-0}" = 1 ] || [ $((r1 - r0)) -lt $((640 << 10)) ] ||
	fail "ckptd's RSS grew by $(((r1 - r0) >> 10)) MiB with the forgeries, want under 640"
grep -q "pfs: fa/j/c[123] on the PFS is ignored: uid $(id -u "$UA")'s own manifests there (not written by ckptd) would hold over 512 MiB of memory in all" \
	"$T/d/ckptd.log" || fail "d did not say why it ignored a forgery"
for w in same ownsetid; do
	listed fa/j "$w" || fail "the harmless $w was not taken beside the bloat: $(vlist fa/j)"
done
as "$UA" "$TW" verify -s "$(sock d)" fa/j same "${ARGS[@]}" ||
	fail "the harmless same does not read back beside the bloat"
restart d
"$TW" verify -s "$(sock d)" root/j r4 -n 1 -z 100000 -S 94 ||
	fail "root/j r4 (the one keep = 1 keeps) lost beside the bloat"
# ... and at most 4096 of them: each is one more version the drain's passes
# and the listings walk, however little it holds.
as "$UA" "$FORGE" "$VD/manifest" "$(dirname "$VD")" t copies:4200 ||
	fail "ckpt_forge copies failed"
restart d
nt=$(vlist fa/j | grep -c '^t[0-9]')
[ "$nt" -gt 4000 ] && [ "$nt" -lt 4096 ] ||
	fail "$nt of 4,200 small manifests of $UA's were taken, want under 4,096 in all"
grep -q "pfs: fa/j/t[0-9]* on the PFS is ignored: uid $(id -u "$UA")'s own manifests there (not written by ckptd) are over 4096 versions in all" \
	"$T/d/ckptd.log" || fail "d did not say why it ignored the small manifests"
"$TW" verify -s "$(sock d)" root/j r4 -n 1 -z 100000 -S 94 ||
	fail "root/j r4 lost beside 4,200 small manifests"
stop_ckptd d
info "ckptd's RSS grew by $(((r1 - r0) >> 10)) MiB for a uid's planted manifests (512 MiB held at most)"

finish
