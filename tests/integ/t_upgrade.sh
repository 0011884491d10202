#!/bin/bash
# t_upgrade: a store written before file attributes (manifest format 1)
# still loads.  Versions are written (one through the mount, with modes),
# ckptd is stopped, every manifest is rewritten in format 1 (ckpt_man1: the
# old encoder), and ckptd started again:
#  - every version is listed, sealed, and verifies byte for byte;
#  - through the mount its files show the defaults (no attributes: 0400,
#    the owner) and read back;
#  - a level change (the drain) rewrites a manifest: it is then the current format (4),
#    and the store loads again after a restart.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

MAN1=$BUILD/tests/ckpt_man1
[ -x "$MAN1" ] || fail "$MAN1 is not built (make check-integ builds it)"
M=$T/mnt
PFS=$T/pfs
SZ=(-n 3 -z 300000 -S 5)

# format FILE: the manifest's format (u32 at byte 8).
format() { od -An -tu4 -j 8 -N 4 "$1" | tr -d ' '; }

drain_conf d -- keep=100
# The drain is paused until the old-format store has been checked.
start_ckptd d
ctl d drain --pause >/dev/null || fail "ckptctl drain --pause failed"
tw d write up/job v1 "${SZ[@]}" -w local || fail "writing v1 failed"
tw d write up/job v2 "${SZ[@]}" -w local || fail "writing v2 failed"
mount_ckptfs d "$M"
mkdir -p "$M/upm/v1.tmp" && printf 'hello' >"$M/upm/v1.tmp/f" &&
	chmod 0644 "$M/upm/v1.tmp/f" && mv "$M/upm/v1.tmp" "$M/upm/v1" ||
	fail "writing through the mount failed"
umount_ckptfs "$M"
stop_ckptd d

mans=("$T"/d/store/man/*.man)
[ ${#mans[@]} = 3 ] || fail "want 3 manifests, found ${#mans[@]}"
"$MAN1" "${mans[@]}" || fail "rewriting the manifests in format 1 failed"
for f in "${mans[@]}"; do
	[ "$(format "$f")" = 1 ] || fail "$f is format $(format "$f"), want 1"
done

start_ckptd d
ctl d drain --pause >/dev/null || fail "ckptctl drain --pause failed"
for v in v1 v2; do
	[ "$(vstate d up/job $v)" = sealed ] || fail "up/job/$v is $(vstate d up/job $v) after the upgrade"
	tw d verify up/job $v "${SZ[@]}" || fail "up/job/$v does not verify after the upgrade"
done
mount_ckptfs d "$M"
[ "$(cat "$M/upm/v1/f")" = hello ] || fail "the mount reads the wrong bytes"
[ "$(stat -c '%a %u' "$M/upm/v1/f")" = "400 0" ] ||
	fail "a format-1 file shows $(stat -c '%a %u' "$M/upm/v1/f"), want the defaults 400 0"
umount_ckptfs "$M"
info "format-1 store: 3 versions load and verify"

# A level change rewrites a manifest, in the current format, 4.
ctl d drain --resume >/dev/null || fail "ckptctl drain --resume failed"
ctl d wait up/job v1 drained --timeout "$(scaled 30)" >/dev/null || fail "v1 did not drain"
m=$(store_man_of "$T/d/store" v1)
poll_until 10 eval '[ "$(format "$(store_man_of "$T/d/store" v1)")" = 4 ]' ||
	fail "the manifest of drained v1 is still format $(format "$m")"
restart d
tw d verify up/job v1 "${SZ[@]}" || fail "v1 does not verify after its rewrite"
tw d verify up/job v2 "${SZ[@]}" || fail "v2 does not verify"
stop_ckptd d
