#!/bin/bash
# t_hostile: bad input must never crash ckptd or lose stored data.
#  - ckpt_raw attacks (bad magic, version, CRC; truncated and oversized
#    frames; reply-type and unknown frames; hostile job, version and path
#    names; WRITE without a lease, with wrong handles and ring offsets out of
#    range; a WRITE sent before the HELLO reply that carries the lease; a
#    client that sends requests and never reads the replies, which ckptd
#    must stop reading rather than buffer without bound) and 10k random
#    garbage frames: each is rejected as the protocol
#    says, and after each the daemon is alive, answers, and a version
#    committed before still verifies byte for byte; nothing lands outside
#    the store and no bad name is ever listed;
#  - against a ckptd whose disk writes are late (CKPT_FAULT delay), WRITEs
#    that reuse one piece of the ring with their WACKs unread: ckptd stops
#    reading at about one WRITE per 4 KiB of the lease (its queue depth
#    says so), then acknowledges them all and the version commits;
#  - a second uid (nobody) cannot read, write, list or remove root's job
#    (EACCES, "Permission denied"), and its own job works.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

VJOB=victim/job
VSZ=(-n 2 -z 2500000 -S 99)

chmod 755 "$T"            # the second uid must reach the socket
ckptd_conf d keep=100
start_ckptd d
tw d write "$VJOB" v1 "${VSZ[@]}" -w local || fail "writing the victim version failed"

victim_ok() {
	assert_up d
	tw d verify "$VJOB" v1 "${VSZ[@]}" || fail "after $1: the victim version does not verify"
}

# ---- raw protocol attacks ------------------------------------------------------
attacks=$("$RAW" -s "$(sock d)" list) || fail "ckpt_raw list failed"
[ -n "$attacks" ] || fail "ckpt_raw knows no attacks"
for a in $attacks; do
	"$RAW" -s "$(sock d)" "$a" >"$T/raw.out" 2>&1 ||
		fail "attack $a: $(cat "$T/raw.out")"
	victim_ok "attack $a"
	info "attack $a: rejected; daemon up; victim intact"
done
# noread hung up while ckptd was not reading it and owed it only parked
# WAITs: ckptd must still see the hang-up and abort the version it had open.
wait_state d hostile/noread v1 failed
"$RAW" -s "$(sock d)" -S 12345 garbage 10000 >"$T/raw.out" 2>&1 ||
	fail "garbage: $(cat "$T/raw.out")"
info "$(cat "$T/raw.out")"
victim_ok "10k garbage frames"

# ---- WRITEs against a slow disk ------------------------------------------------
# Every disk write of ckptd w is 3 s late (its io_uring writes wait on a
# timer): a client that reuses ring space and never reads its WACKs must be
# stopped at about one WRITE in flight per 4 KiB of its lease.
CKPT_FAULT="pwrite:1+:delay=3000" start_ckptd w
"$RAW" -s "$(sock w)" wflood >"$T/raw.out" 2>&1 ||
	fail "wflood: $(cat "$T/raw.out")"
info "$(cat "$T/raw.out")"
wait_state w hostile/wflood v1 sealed
stop_ckptd w

# Nothing outside the store: only segments, manifests, the lock, the
# removal log and an empty quarantine.
stray=$(cd "$T/d" && find . -mindepth 1 \
	! -path ./store ! -path ./store/seg ! -path ./store/man \
	! -path ./store/quarantine ! -path ./store/removed \
	! -path './store/seg/[0-9]*' ! -path './store/man/*.man' \
	! -path ./store/lock ! -name ckptd.sock ! -name ckptd.log ! -name ckptd.conf)
[ -z "$stray" ] || fail "files outside the store layout: $stray"
for f in x abs escape b; do
	[ ! -e "$T/$f" ] && [ ! -e "$T/d/$f" ] && [ ! -e "$T/d/store/$f" ] ||
		fail "a hostile name created '$f'"
done
if has_ctl; then
	jobs_json=$(ctl d --json ls) || fail "ckptctl --json ls failed"
	/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
jobs = [j["job"] if isinstance(j, dict) else j for j in d["jobs"]]
bad = [j for j in jobs if j.startswith("/") or "//" in j or j.endswith("/")
       or ".." in j.split("/") or "." in j.split("/")]
assert not bad, bad
assert "victim/job" in jobs, jobs
' <<<"$jobs_json" || fail "a bad job name is listed: $jobs_json"
fi

# A crash after all that: the store recovers and the victim is intact.
restart d
victim_ok "a restart after the attacks"

# ---- a second uid --------------------------------------------------------------
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if ! command -v setpriv >/dev/null; then
	info "second-uid part skipped: setpriv is not installed"
elif ! as_nobody true 2>/dev/null; then
	info "second-uid part skipped: setpriv cannot switch to uid 65534 here"
elif ! as_nobody test -x "$TW" -a -r "$(sock d)"; then
	info "second-uid part skipped: uid 65534 cannot reach $TW or the socket"
else
	S=$(sock d)
	as_nobody "$TW" verify -s "$S" "$VJOB" v1 "${VSZ[@]}" 2>"$T/n.err" &&
		fail "nobody read root's version"
	grep -q "Permission denied" "$T/n.err" || fail "nobody's read: not EACCES: $(cat "$T/n.err")"
	as_nobody "$TW" write -s "$S" "$VJOB" v2 -n 1 -z 4096 -w local 2>"$T/n.err" &&
		fail "nobody wrote into root's job"
	grep -q "Permission denied" "$T/n.err" || fail "nobody's write: not EACCES: $(cat "$T/n.err")"
	as_nobody "$TW" write -s "$S" "$VJOB" v1 -n 1 -z 4096 2>"$T/n.err" &&
		fail "nobody joined root's sealed version"
	as_nobody "$TW" stat -s "$S" "$VJOB" v1 2>"$T/n.err" &&
		fail "nobody could stat root's version"
	grep -q "Permission denied" "$T/n.err" || fail "nobody's stat: not EACCES: $(cat "$T/n.err")"
	as_nobody "$TW" latest -s "$S" "$VJOB" 2>"$T/n.err" &&
		fail "nobody could ask for root's latest version"
	as_nobody "$TW" rm -s "$S" "$VJOB" v1 2>"$T/n.err" &&
		fail "nobody removed root's version"
	grep -q "Permission denied" "$T/n.err" || fail "nobody's rm: not EACCES: $(cat "$T/n.err")"
	if has_ctl; then
		as_nobody "$CKPTCTL" -s "$S" ls "$VJOB" >/dev/null 2>"$T/n.err" &&
			fail "ckptctl ls of root's job worked as nobody"
		out=$(as_nobody "$CKPTCTL" -s "$S" ls) || fail "ckptctl ls as nobody failed"
		grep -q victim <<<"$out" && fail "nobody's job list shows root's job: $out"
	fi
	victim_ok "the second uid's attempts"

	# nobody's own job works, and root (the administrator) may read it.
	as_nobody "$TW" write -s "$S" nobody/job v1 -n 2 -z 1000000 -S 5 -w local ||
		fail "nobody cannot write its own job"
	as_nobody "$TW" verify -s "$S" nobody/job v1 -n 2 -z 1000000 -S 5 ||
		fail "nobody's own version does not verify"
	tw d verify nobody/job v1 -n 2 -z 1000000 -S 5 || fail "root cannot read nobody's version"
	# and root's uid-checks do not leak: nobody's job is nobody's
	st=$(tw d stat nobody/job v1) || fail "root cannot stat nobody's version"
	info "second uid: EACCES on root's job; its own job works"
fi

victim_ok "everything"
stop_ckptd d
