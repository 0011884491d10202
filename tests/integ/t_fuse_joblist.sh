#!/bin/bash
# t_fuse_joblist: a ckptfs mount lists each uid its own jobs only, as
# ckptd's LIST_JOBS does (ckptfs asks as root): two real uids (useradd)
# and root each make jobs (-o jobdepth=2), some under one shared leading
# part "shared/".
# The root of the mount and "shared" list a uid's own jobs and their
# leading parts, never another's; root lists every one; a uid's listing
# of a leading part holding only others' jobs is empty, not an error.
# Checked while the versions are open (ckptfs holds them) and again once
# committed (ckptd holds them).
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

UA=ckjla$$
UB=ckjlb$$
test_users "$UA" "$UB"
chmod 755 "$T"
M=$T/mnt
start_ckptd d
mount_ckptfs d "$M" jobdepth=2
mkdir -p "$M/shared" "$M/only" && chmod 1777 "$M/shared" 2>/dev/null
for u in "$UA" "$UB"; do
	as "$u" mkdir -p "$M/$u/job/v1.tmp" "$M/shared/$u/v1.tmp" ||
		fail "mkdir as $u failed"
	as "$u" sh -c "echo $u >'$M/$u/job/v1.tmp/f' && echo $u >'$M/shared/$u/v1.tmp/f'" ||
		fail "write as $u failed"
done
mkdir -p "$M/rootp/j/v1.tmp" "$M/only/root/v1.tmp" && echo r >"$M/rootp/j/v1.tmp/f" &&
	echo r >"$M/only/root/v1.tmp/f" || fail "write as root failed"

# listing USER DIR: the names USER sees in DIR, one line, sorted.
listing() { as "$1" ls -1 "$2" | sort | tr '\n' ' '; }
check_lists() {
	local when=$1 got
	got=$(listing "$UA" "$M")
	[ "$got" = "$UA shared " ] || fail "$when: $UA lists the root as '$got'"
	got=$(listing "$UB" "$M/shared")
	[ "$got" = "$UB " ] || fail "$when: $UB lists shared as '$got'"
	got=$(as "$UA" ls -1 "$M/only" 2>&1)
	[ -z "$got" ] || fail "$when: $UA lists root's leading part 'only' as '$got'"
	got=$(ls -1 "$M" | sort | tr '\n' ' ')
	[ "$got" = "$UA $UB only rootp shared " ] || fail "$when: root lists the root as '$got'"
	got=$(ls -1 "$M/shared" | sort | tr '\n' ' ')
	[ "$got" = "$UA $UB " ] || fail "$when: root lists shared as '$got'"
}
check_lists open
for u in "$UA" "$UB"; do
	as "$u" mv "$M/$u/job/v1.tmp" "$M/$u/job/v1" && as "$u" mv "$M/shared/$u/v1.tmp" "$M/shared/$u/v1" ||
		fail "commit as $u failed"
done
mv "$M/rootp/j/v1.tmp" "$M/rootp/j/v1" && mv "$M/only/root/v1.tmp" "$M/only/root/v1" ||
	fail "commit as root failed"
check_lists committed
[ "$(as "$UA" cat "$M/$UA/job/v1/f")" = "$UA" ] || fail "$UA cannot read its own committed file"
umount_ckptfs "$M"
stop_ckptd d
finish
