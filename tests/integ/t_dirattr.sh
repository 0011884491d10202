#!/bin/bash
# t_dirattr: a directory's own attributes (entries of type CKPT_ATTR_IFDIR,
# no bytes) in every copy of a version.
#  - ckpt_ns writes d (0750), d/sub (0705) and an empty directory e (0711),
#    each with its own mtime, around the file d/sub/f, and commits;
#  - after a SIGKILL and two clean restarts they are still listed;
#  - the PFS copy has the directories with those modes and mtimes (e made
#    although empty), the file in place;
#  - `ckptctl restore` (from the local copy, then from the PFS once the
#    local copy is dropped) gives them back the same way.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"

NS=$BUILD/tests/ckpt_ns
PFS=$T/pfs
JOB=dirs

# dirs_ok ROOT WHAT: the directories with their modes and mtimes (y is m,
# renamed over the empty y; q is the empty p, renamed), and nothing else.
dirs_ok() {
	local got
	got=$(cd "$1" && stat -c '%n %F %a %Y' d d/sub e y q | tr '\n' ';')
	[ "$got" = "d directory 750 1600000000;d/sub directory 705 1600000100;e directory 711 1600000200;y directory 701 1600000300;q directory 702 1600000400;" ] ||
		fail "$2: $got"
	[ "$(cat "$1/d/sub/f")" = data ] || fail "$2: d/sub/f does not hold its bytes"
	[ "$(cat "$1/y/g")" = moved ] || fail "$2: y/g (renamed from m/g) does not hold its bytes"
	got=$(cd "$1" && find . | LC_ALL=C sort | tr '\n' ' ')
	[ "$got" = ". ./d ./d/sub ./d/sub/f ./e ./q ./y ./y/g " ] || fail "$2: the tree is $got"
	info "$2: directories as written"
}

drain_conf d

start_ckptd d
ctl d drain --pause >/dev/null || fail "drain --pause failed"
"$NS" "$(sock d)" dirs "$JOB" v1 || fail "ckpt_ns dirs failed"
restart d
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
ctl d restore "$JOB" v1 --to "$T/r1" >/dev/null || fail "restore of the local copy failed"
dirs_ok "$T/r1" "restore of the local copy after restarts"

ctl d drain --resume >/dev/null || fail "drain --resume failed"
ctl d wait "$JOB" v1 drained --timeout "$(scaled 30)" >/dev/null || fail "v1 did not drain"
dirs_ok "$(pfs_vdir "$JOB" v1)/files" "PFS copy"
ctl d rm "$JOB" v1 >/dev/null || fail "rm of the local copy failed"
restart d
ctl d restore "$JOB" v1 --to "$T/r2" >/dev/null || fail "restore from the PFS failed"
dirs_ok "$T/r2" "restore from the PFS"
stop_ckptd d
