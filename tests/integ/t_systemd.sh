#!/bin/bash
# t_systemd: what systemd and mount(8) see of ckpt, as far as a machine
# without systemd as init allows:
#  - Type=notify: ckptd sends READY=1 on $NOTIFY_SOCKET once it answers, and
#    STOPPING=1 on SIGTERM (a real AF_UNIX datagram listener, as systemd);
#  - the units in config/ pass `systemd-analyze verify` (with the binaries
#    they name pointed at this build), and a broken unit does not;
#  - the ckptfs@.service ExecStart line, run as systemd would run it, mounts;
#  - ckptfs --help lists its own options only;
#  - mount.ckptfs, run as mount(8) runs it for an fstab line of type
#    fuse.ckptfs, mounts in the background, and the mount works.
# Parts whose tools are missing say so and are left out.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x $PY ] || PY=python3

# ---- sd_notify -------------------------------------------------------------------
$PY - "$T/notify.sock" "$T/notify.out" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        msg = s.recv(4096).decode()
        out.write(msg.replace("\n", ";") + "\n")
        if "STOPPING=1" in msg:
            break
PYEOF
lpid=$!
poll_until 10 test -S "$T/notify.sock" || fail "the notify listener did not start"
NOTIFY_SOCKET=$T/notify.sock start_ckptd d
poll_until 10 grep -q 'READY=1' "$T/notify.out" ||
	fail "no READY=1 from ckptd: $(cat "$T/notify.out" 2>/dev/null)"
grep -q 'STATUS=' "$T/notify.out" || fail "no STATUS= with READY=1: $(cat "$T/notify.out")"
stop_ckptd d
poll_until 10 grep -q 'STOPPING=1' "$T/notify.out" ||
	fail "no STOPPING=1 from ckptd: $(cat "$T/notify.out")"
wait "$lpid" || fail "the notify listener failed"
# An unusable NOTIFY_SOCKET is logged, not fatal.
NOTIFY_SOCKET=$T/nonexistent.sock start_ckptd d
grep -q 'systemd notification: ' "$T/d/ckptd.log" || fail "a failed notification is not logged"
stop_ckptd d
info "READY=1 when serving, STOPPING=1 on SIGTERM"

# ---- the units --------------------------------------------------------------------
U=$T/units
mkdir -p "$U"
for f in ckptd.service ckptfs@.service ckpt.mount; do
	sed "s|/usr/local/bin|$BUILD|g" "$ROOT/config/$f" >"$U/$f" || fail "copying $f"
done
if command -v systemd-analyze >/dev/null; then
	(cd "$U" && timeout 60 systemd-analyze verify ckptd.service ckptfs@ckpt.service ckpt.mount) \
		>"$T/verify.out" 2>&1 || fail "systemd-analyze verify: $(cat "$T/verify.out")"
	sed "s|$BUILD/ckptd|$BUILD/no-such-ckptd|" "$U/ckptd.service" >"$U/broken.service"
	(cd "$U" && timeout 60 systemd-analyze verify broken.service) >/dev/null 2>&1 &&
		fail "systemd-analyze verify passes a broken unit: the check checks nothing"
	info "systemd-analyze verify: ckptd.service ckptfs@.service ckpt.mount"
else
	info "systemd-analyze is not installed: the units were not verified"
fi

# ---- the mounts ---------------------------------------------------------------------
if ! grep -qw fuse /proc/filesystems || [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
	info "no FUSE here: the ckptfs@ and mount.ckptfs parts are left out"
	finish
	exit 0
fi
[ -x "$CKPTFS" ] || fail "$CKPTFS is not built"
# ckptfs --help: its own options, not libfuse's high-level modules.
"$CKPTFS" --help >"$T/help.out" 2>&1 || fail "ckptfs --help failed: $(cat "$T/help.out")"
grep -q 'autocommit=SECONDS' "$T/help.out" || fail "ckptfs --help lacks its options: $(cat "$T/help.out")"
grep -qiE 'subdir|iconv' "$T/help.out" && fail "ckptfs --help lists libfuse's modules: $(cat "$T/help.out")"
ckptd_conf d
start_ckptd d

# ckptfs_of MNT: pid of the ckptfs whose command line names MNT.
ckptfs_of() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$(readlink -f "$CKPTFS")" ] || continue
		tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF "$1" && { echo "${p#/proc/}"; return 0; }
	done
	return 1
}

# ckptfs@.service: its ExecStart, as systemd expands it (%f, $CKPTFS_OPTS),
# with the config file pointed at this daemon's.
M1=$T/mnt-unit
mkdir -p "$M1"
line=$(sed -n 's/^ExecStart=//p' "$U/ckptfs@.service")
opts=$(sed -n 's/^Environment=CKPTFS_OPTS=//p' "$U/ckptfs@.service")
line=${line//%f/$M1}
line=${line//\$\{CKPTFS_OPTS\}/$opts}
line=${line//\/etc\/ckpt\/ckptd.conf/$T/d/ckptd.conf}
info "ckptfs@: $line"
$line >"$T/unit-ckptfs.log" 2>&1 </dev/null 9>&- &
FUSE_PID[$(_fuse_key "$M1")]=$!
FUSE_LOG[$(_fuse_key "$M1")]=$T/unit-ckptfs.log
FUSE_LOGOFF[$(_fuse_key "$M1")]=1
poll_until 10 _fuse_mounted "$M1" || fail "the ckptfs@ command did not mount: $(cat "$T/unit-ckptfs.log")"
mkdir -p "$M1/sysd/v1.tmp" || fail "mkdir through the ckptfs@ mount"
echo unit >"$M1/sysd/v1.tmp/a" || fail "writing through the ckptfs@ mount"
mv "$M1/sysd/v1.tmp" "$M1/sysd/v1" || fail "committing through the ckptfs@ mount"
umount_ckptfs "$M1"
wait_state d sysd v1 sealed

# fstab: "CONF MNT fuse.ckptfs autocommit=30,_netdev,noauto 0 0" makes
# mount(8) run /sbin/mount.fuse.ckptfs CONF MNT -o OPTIONS.
M2=$T/mnt-fstab
mkdir -p "$M2"
CKPTFS=$CKPTFS timeout 30 sh "$ROOT/fuse/mount.ckptfs" "$T/d/ckptd.conf" "$M2" \
	-o rw,autocommit=30,_netdev,noauto,x-systemd.automount >"$T/helper.log" 2>&1 ||
	fail "mount.ckptfs failed: $(cat "$T/helper.log")"
_fuse_mounted "$M2" || fail "mount.ckptfs returned but $M2 is not mounted"
pid=$(ckptfs_of "$M2") || fail "no ckptfs process serves $M2"
FUSE_PID[$(_fuse_key "$M2")]=$pid
mkdir -p "$M2/sysd/v2.tmp" && echo fstab >"$M2/sysd/v2.tmp/a" &&
	mv "$M2/sysd/v2.tmp" "$M2/sysd/v2" || fail "using the mount.ckptfs mount"
timeout 10 fusermount3 -u "$M2" || fail "unmounting $M2"
poll_until 10 dead "$pid" || fail "ckptfs $pid did not exit after the unmount"
unset "FUSE_PID[$(_fuse_key "$M2")]"
# The rename commits; the seal runs on in ckptd (sealing, then sealed).
wait_state d sysd v2 sealed
# What the helper refuses: its usage, and options mount(8) never passes.
sh "$ROOT/fuse/mount.ckptfs" "$T/d/ckptd.conf" 2>/dev/null && fail "mount.ckptfs without a mount point succeeded"
info "ckptfs@ ExecStart and mount.ckptfs (fstab) mount and commit"

stop_ckptd d
finish
