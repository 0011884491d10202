#!/bin/bash
# t_pfs_scale: a job with 40,000 of ckptd's own drained versions on the PFS
# (copies of a drained v0's manifest, sealed after it, made with
# ckpt_forge; 4,000 under valgrind).
#  - ckptd starts within the usual start deadline and lists every one
#    (start-up was quadratic in a job's versions: each one found walked
#    the job's list and looked up its name there; 40,000 took over 10 s),
#    and again after a SIGKILL;
#  - v1, v2, v3 then drain with [drain] keep = 3: PFS retention removes the
#    40,001 older ones on the pool (each pass asked, of every candidate,
#    whether it is a base by walking the job); ckptd is killed with
#    SIGKILL in the middle of that, restarted, the rest goes once v2 and
#    v3 drain, and exactly v1, v2, v3 are left on the PFS, and only they
#    are listed (v0, older than the newest three locally and on the PFS,
#    goes too): retention goes down the job's list oldest first, so this
#    needs the list in seq order after a scan that found the versions in
#    readdir()'s order (without the sort at its end, c6356 was kept);
#  - every committed byte of v1, v2, v3 reads back after that, and after a
#    SIGKILL and two clean restarts, once the drain is idle (nothing is
#    drained again).
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

FORGE=$BUILD/tests/ckpt_forge
PFS=$T/pfs
N=40000
[ "${CKPT_VALGRIND:-0}" = 1 ] && N=4000
JOB=root/j
ARGS=(-n 2 -z 300000)

nlisted() { ctl d ls "$JOB" 2>/dev/null | grep -c '^ *[cv][0-9]'; }
# manifests: the version manifests under the job's PFS directory.
manifests() { find "$(dirname "$VD")" -name manifest 2>/dev/null | wc -l; }
fewer() { [ "$(manifests)" -lt "$1" ] || ! alive "$(ckptd_pid d)"; }
exactly() { [ "$(manifests)" = "$1" ] || ! alive "$(ckptd_pid d)"; }
verify_all() {
	local i
	for i in 1 2 3; do
		"$TW" verify -s "$(sock d)" "$JOB" "v$i" "${ARGS[@]}" -S "$i" ||
			fail "v$i does not read back $1"
	done
}

drain_conf d keep=3
start_ckptd d
"$TW" write -s "$(sock d)" "$JOB" v0 -n 1 -z 4096 -S 9 -w drained ||
	fail "v0 did not drain"
stop_ckptd d
VD=$(pfs_vdir "$JOB" v0)
"$FORGE" "$VD/manifest" "$(dirname "$VD")" c copies:$N ||
	fail "ckpt_forge copies failed"

start_ckptd d
[ "$(nlisted)" = $((N + 1)) ] ||
	fail "$(nlisted) versions listed at start, want $((N + 1))"
# Each with the seq it was sealed as (ckptctl lists by seq).
ctl d ls "$JOB" | grep -o '^ *[cv][0-9]*' | tr -d ' ' >"$T/listed"
{ echo v0; seq -f 'c%.0f' 0 $((N - 1)); } | cmp -s - "$T/listed" ||
	fail "the versions are not listed with their seqs: $(head -c 80 "$T/listed" | tr '\n' ' ')"
restart d
[ "$(nlisted)" = $((N + 1)) ] ||
	fail "$(nlisted) versions listed after a SIGKILL, want $((N + 1))"

# v1 drains: retention takes the versions older than the newest three.
"$TW" write -s "$(sock d)" "$JOB" v1 "${ARGS[@]}" -S 1 -w drained ||
	fail "v1 did not drain"
poll_until 120 fewer $((N * 3 / 4)) ||
	fail "retention removed $((N + 2 - $(manifests))) of $((N - 1)) versions in $(scaled 120) s"
alive "$(ckptd_pid d)" || fail "ckptd died during retention"
left=$(manifests)
kill9 d
info "killed with $left of $((N + 2)) manifests left"
start_ckptd d
"$TW" write -s "$(sock d)" "$JOB" v2 "${ARGS[@]}" -S 2 -w drained ||
	fail "v2 did not drain after the SIGKILL"
"$TW" write -s "$(sock d)" "$JOB" v3 "${ARGS[@]}" -S 3 -w drained ||
	fail "v3 did not drain after the SIGKILL"
poll_until 120 exactly 3 ||
	fail "$(manifests) manifests left on the PFS, want 3 (v1 v2 v3)"
alive "$(ckptd_pid d)" || fail "ckptd died during retention"
listed() { ctl d ls "$JOB" | grep -o '^ *[cv][0-9]*' | tr -d ' ' | sort | tr '\n' ' '; }
poll_until 30 out_is "v1 v2 v3 " listed ||
	fail "listed after retention: '$(listed)', want 'v1 v2 v3'"
verify_all "after retention"
restart d
verify_all "after a SIGKILL"
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
verify_all "after two clean restarts"
poll_until 20 drain_idle d || fail "the drain is not idle after the restarts"
[ "$(manifests)" = 3 ] || fail "$(manifests) manifests on the PFS after the restarts, want 3"
[ "$(listed)" = "v1 v2 v3 " ] || fail "listed after the restarts: '$(listed)', want 'v1 v2 v3'"
stop_ckptd d
finish
