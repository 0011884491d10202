#!/bin/bash
# t_pfs_claims: manifests that users plant in their own PFS trees (claims:
# not written by ckptd) are bounded for every uid together, not only for
# each: four real uids (useradd) each drain a v1 of their own, then
#  - each plants 4,200 small manifests: a uid's claims stop at 4,096, and
#    every uid's together at 8,192, so of the four exactly two take 4,096
#    and the others none, and the log says why;
#  - each plants one manifest of a million names (85 MiB, some 300 MiB
#    held once kept: under one uid's 512 MiB): every uid's together stop
#    at 1 GiB, so exactly three are taken, ckptd's RSS grows by less than
#    1.1 GiB, and the log says why (with a bound per uid only, N users
#    could make ckptd hold N x 512 MiB);
# and every uid's v1 reads back after each restart (a SIGKILL, then two
# clean ones).  The uids are removed when it ends.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"
[ "$(id -u)" = 0 ] || skip "needs root (useradd, and a daemon that can chown)"

FORGE=$BUILD/tests/ckpt_forge
U=(ckpt-ca-$$ ckpt-cb-$$ ckpt-cc-$$ ckpt-cd-$$)
J=(ca/j cb/j cc/j cd/j)
test_users "${U[@]}"
chmod 755 "$T"
as "${U[0]}" test -x "$TW" -a -x "$FORGE" ||
	skip "${U[0]} cannot run $TW (a build directory others cannot reach)"
PFS=$T/pfs
mkdir -p "$PFS" && chmod 711 "$PFS"
ARGS=(-n 2 -z 200000)

vlist() { ctl d ls "$1" 2>/dev/null; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$(ckptd_pid d)/status"; }
jdir() { dirname "$(pfs_vdir "${J[$1]}" v1)"; }
verify_v1() {
	local i
	for i in 0 1 2 3; do
		as "${U[$i]}" "$TW" verify -s "$(sock d)" "${J[$i]}" v1 "${ARGS[@]}" -S $((i + 1)) ||
			fail "${U[$i]}'s v1 does not read back $1"
	done
}
# restarts: a SIGKILL, then two clean restarts, v1s checked after each.
restarts() {
	restart d
	verify_v1 "after a SIGKILL $1"
	stop_ckptd d
	start_ckptd d
	stop_ckptd d
	start_ckptd d
	verify_v1 "after two clean restarts $1"
}

drain_conf d
start_ckptd d
for i in 0 1 2 3; do
	as "${U[$i]}" "$TW" write -s "$(sock d)" "${J[$i]}" v1 "${ARGS[@]}" -S $((i + 1)) -w drained ||
		fail "${U[$i]}'s v1 did not drain"
done
stop_ckptd d

# ---- the count -------------------------------------------------------------------
for i in 0 1 2 3; do
	as "${U[$i]}" "$FORGE" "$(jdir $i)/v1.ver/manifest" "$(jdir $i)" t copies:4200 ||
		fail "ckpt_forge copies failed for ${U[$i]}"
done
start_ckptd d
counts=$(for i in 0 1 2 3; do vlist "${J[$i]}" | grep -c '^ *t[0-9]'; done | sort -n | tr '\n' ' ')
[ "$counts" = "0 0 4096 4096 " ] ||
	fail "the four uids' small manifests taken: $counts, want 0 0 4096 4096"
grep -q "pfs: c[abcd]/j/t[0-9]* on the PFS is ignored: uid [0-9]*'s own manifests there (not written by ckptd) are over 4096 versions in all" \
	"$T/d/ckptd.log" || fail "d did not say why it stopped at 4096 of a uid's"
grep -q "pfs: c[abcd]/j/t[0-9]* on the PFS is ignored: the manifests there not written by ckptd (this one uid [0-9]*'s) are over 8192 versions in all, every uid's together" \
	"$T/d/ckptd.log" || fail "d did not say why it stopped at 8192 of all uids'"
restarts "beside 16,800 small manifests"
stop_ckptd d
for i in 0 1 2 3; do rm -rf "$(jdir $i)"/t*.ver; done

# ---- the memory ------------------------------------------------------------------
# (a sanitized build: frees without ASan's quarantine, which would hold the
# scan's freed tables)
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" start_ckptd d
r0=$(rss)
stop_ckptd d
for i in 0 1 2 3; do
	as "${U[$i]}" mkdir "$(jdir $i)/m.ver" &&
		as "${U[$i]}" "$FORGE" "$(jdir $i)/v1.ver/manifest" "$(jdir $i)/m.ver/manifest" m files:1000000 ||
		fail "ckpt_forge files failed for ${U[$i]}"
done
[ "$(stat -c %s "$(jdir 3)/m.ver/manifest")" -gt $((80 << 20)) ] ||
	fail "the manifest of many names is only $(stat -c %s "$(jdir 3)/m.ver/manifest") bytes"
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" start_ckptd d
r1=$(rss)
n=0
for i in 0 1 2 3; do vlist "${J[$i]}" | grep -q '^ *m\b' && n=$((n + 1)); done
[ $n = 3 ] || fail "$n of the four uids' manifests of a million names were taken, want 3"
# (not under valgrind, whose allocator adds its own to every block: in
# t_pfs_forged 751 MiB where 305 without it)
[ "${CKPT_VALGRIND:-0}" = 1 ] || [ $((r1 - r0)) -lt $((1100 << 10)) ] ||
	fail "ckptd's RSS grew by $(((r1 - r0) >> 10)) MiB with them, want under 1100"
grep -q "pfs: c[abcd]/j/m on the PFS is ignored: the manifests there not written by ckptd (this one uid [0-9]*'s) would hold over 1024 MiB of memory in all, every uid's together" \
	"$T/d/ckptd.log" || fail "d did not say why it stopped at 1 GiB of all uids'"
info "ckptd's RSS grew by $(((r1 - r0) >> 10)) MiB for four uids' planted manifests (1 GiB held at most)"
restarts "beside four manifests of a million names"
stop_ckptd d
finish
