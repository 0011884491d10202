#!/bin/bash
# t_quarantine: recovery keeps what fails its checks as evidence.
#  - a flipped byte in a drained version's segment header: the version's
#    local copy goes to quarantine (manifest and segment, bytes kept), it
#    is listed with copies "pfs,quarantine" and every byte reads back from
#    the PFS
#  - a truncated manifest of a version that never drained: listed DAMAGED
#    with the reason, reads give "checksum mismatch", `latest` skips it
#  - both stay so over two more clean restarts and a SIGKILL; nothing is
#    logged as "never committed"; `ckptctl rm` discards the quarantine
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"
STORE=$T/a/store

seg_of() { store_seg_of "$STORE" "$1"; }
man_of() { store_man_of "$STORE" "$1"; }

check_state() {
	local out
	out=$(tw a stat q/job v1) || fail "v1 is not listed"
	[ "${out%% *}" = sealed ] || fail "v1 is '$out', want sealed (from the PFS)"
	tw a verify q/job v1 -n 2 -z 3000000 -S 1 || fail "v1 does not read back from the PFS"
	ctl a ls q/job | grep -q 'v1.*pfs,quarantine' ||
		fail "ls does not say v1 is on the PFS with a damaged local copy: $(ctl a ls q/job)"
	[ "$(vstate a q/job v2)" = damaged ] || fail "v2 is '$(vstate a q/job v2)', want damaged"
	ctl a ls q/job | grep -q 'v2.*damaged' || fail "ls does not list v2 damaged"
	ctl a --json ls q/job | grep -q '"reason"' || fail "ls --json has no reason"
	local err
	err=$(tw a verify q/job v2 -n 2 -z 3000000 -S 2 2>&1) && fail "v2 read back"
	case $err in *"checksum mismatch"*) ;; *) fail "reading damaged v2: $err" ;; esac
	[ "$(tw a latest q/job)" = v1 ] || fail "latest is '$(tw a latest q/job)', want v1"
	ctl a restore q/job v1 --plan | grep -q "pfs .*local copy damaged (in quarantine); the drained PFS copy" ||
		fail "restore --plan of v1 does not say the PFS: $(ctl a restore q/job v1 --plan)"
}

main() {
	drain_conf a
	start_ckptd a
	tw a write q/job v1 -n 2 -z 3000000 -S 1 -w drained || fail "v1 not drained"
	ctl a drain --pause >/dev/null || fail "drain --pause failed"
	tw a write q/job v2 -n 2 -z 3000000 -S 2 -w local || fail "v2 not local"
	stop_ckptd a

	local s1 m2 sum1 sz2
	s1=$(seg_of v1) || fail "no segment names v1"
	m2=$(man_of v2) || fail "no manifest names v2"
	flip_byte "$s1" 20
	sum1=$(sha256sum <"$s1")
	sz2=$(stat -c %s "$m2")
	truncate -s $((sz2 / 2)) "$m2"
	head -c $((sz2 / 2)) "$m2" | sha256sum >"$T/m2.sum"

	start_ckptd a
	ctl a drain --pause >/dev/null   # v2 must not drain: it is damaged
	check_state
	# The evidence is kept, byte for byte.
	local f found=0
	for f in "$STORE"/quarantine/*/seg-*; do
		[ "$(sha256sum <"$f")" = "$sum1" ] && found=1
	done
	[ $found = 1 ] || fail "the damaged segment is not in quarantine unchanged"
	found=0
	for f in "$STORE"/quarantine/*/*.man; do
		[ "$(sha256sum <"$f")" = "$(cat "$T/m2.sum")" ] && found=1
	done
	[ $found = 1 ] || fail "the truncated manifest is not in quarantine unchanged"
	[ -e "$s1" ] && [ "$(sha256sum <"$s1")" = "$sum1" ] &&
		fail "the damaged segment is still in the store"
	grep -q "CORRUPTION" "$T/a/ckptd.log" || fail "the damage was not logged as corruption"

	stop_ckptd a; start_ckptd a; ctl a drain --pause >/dev/null; check_state
	stop_ckptd a; start_ckptd a; ctl a drain --pause >/dev/null; check_state
	restart a; ctl a drain --pause >/dev/null; check_state
	if grep -q "never committed\|failed before it was durable" "$T/a/ckptd.log"; then
		fail "recovery called a committed version uncommitted"
	fi

	# rm discards the quarantine: the damaged version is gone, the PFS
	# copy of v1 stays.
	ctl a rm q/job v2 >/dev/null || fail "rm of damaged v2 failed"
	[ "$(vstate a q/job v2)" = absent ] || fail "v2 still listed after rm"
	ctl a rm q/job v1 >/dev/null || fail "rm of v1's quarantine failed"
	tw a verify q/job v1 -n 2 -z 3000000 -S 1 || fail "v1 lost its PFS copy at rm"
	ctl a ls q/job | grep -q 'v1.*quarantine' && fail "v1 still shows a quarantine"
	[ -z "$(ls "$STORE/quarantine")" ] || fail "quarantine not emptied: $(ls "$STORE/quarantine")"
	restart a
	tw a verify q/job v1 -n 2 -z 3000000 -S 1 || fail "v1 gone after rm and restart"
	check_sanitizers a
}

main
exit 0
