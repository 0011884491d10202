#!/bin/bash
# t_recover_edges: hostile on-disk states and restarts that once lost data.
# Each sub-test checks every committed byte and that nothing committed is
# logged "never committed".
#  - qfail: the quarantine cannot be made (a file in its place): the damaged
#    version is listed, its segments are kept, and the next start moves it
#  - unnamed: a manifest cut to 50 bytes (no name left): the version is
#    listed damaged under the name its segment headers give; rm discards it
#  - dupman: copies of a manifest under other seq names are removed, rm
#    works, and nothing comes back after a restart
#  - junk: a 0-byte segment file and one named 99999999 neither stop ckptd
#    nor block new versions
#  - dataflip: a data byte flipped in a drained version's segment: reads are
#    served from the PFS copy
#  - incbase: an incremental base stays on the PFS while a drained version
#    refers to it (rm fails at once with CKPT_EBASE, not waiting as for a
#    busy version; [drain] keep after a restart spares it)
#  - seq: with every local copy evicted and the PFS away at a start, a new
#    version still ranks newest (`latest`), and ckptd never creates the
#    missing target
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
STORE=$T/a/store
W=(-n 2 -z 3000000)

seg_of() { store_seg_of "$STORE" "$1"; }
man_of() { store_man_of "$STORE" "$1"; }
never_committed() {
	! grep -q "never committed\|failed before it was durable" "$T/a/ckptd.log" ||
		fail "recovery logged a committed version as never committed"
}
ok() { tw a verify j "$1" "${W[@]}" -S "$2" || fail "j/$1 does not read back"; }
state_is() { [ "$(vstate a j "$1")" = "$2" ] || fail "j/$1 is '$(vstate a j "$1")', want $2"; }

qfail() {
	ckptd_conf a
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w local || fail "v1"
	tw a write j v2 "${W[@]}" -S 2 -w local || fail "v2"
	stop_ckptd a
	flip_byte "$(man_of v2)" 40
	rm -rf "$STORE/quarantine"
	echo junk >"$STORE/quarantine"
	start_ckptd a
	state_is v2 damaged
	ok v1 1
	tw a write j v3 "${W[@]}" -S 3 -w local || fail "v3 after a failed quarantine"
	stop_ckptd a
	rm -f "$STORE/quarantine"
	start_ckptd a
	state_is v2 damaged
	[ -n "$(ls "$STORE/quarantine")" ] || fail "v2 was not quarantined at the next start"
	local q
	q=$(ls "$STORE"/quarantine/*/seg-* 2>/dev/null | wc -l)
	[ "$q" -ge 1 ] || fail "v2's segments were not kept"
	ok v1 1
	ok v3 3
	never_committed
	stop_ckptd a
}

unnamed() {
	ckptd_conf a
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w local || fail "v1"
	tw a write j v2 "${W[@]}" -S 2 -w local || fail "v2"
	stop_ckptd a
	truncate -s 50 "$(man_of v2)"
	start_ckptd a
	state_is v2 damaged
	ok v1 1
	stop_ckptd a
	start_ckptd a
	state_is v2 damaged
	ctl a rm j v2 >/dev/null || fail "rm of damaged v2"
	[ -z "$(ls -A "$STORE/quarantine")" ] || fail "quarantine left: $(ls -A "$STORE/quarantine")"
	stop_ckptd a
	start_ckptd a
	state_is v2 absent
	ok v1 1
	stop_ckptd a
}

dupman() {
	ckptd_conf a
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w local || fail "v1"
	tw a write j v2 "${W[@]}" -S 2 -w local || fail "v2"
	stop_ckptd a
	cp "$(man_of v2)" "$STORE/man/00000000000000ff.man"
	cp "$(man_of v2)" "$STORE/man/0000000000000000.man"
	start_ckptd a
	state_is v2 sealed
	ok v2 2
	[ "$(ls "$STORE/man" | wc -l)" = 2 ] || fail "stray manifests kept: $(ls "$STORE/man")"
	tw a rm j v2 || fail "rm v2"
	stop_ckptd a
	start_ckptd a
	state_is v2 absent
	ok v1 1
	stop_ckptd a
}

junk() {
	ckptd_conf a segment=8M
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w local || fail "v1"
	stop_ckptd a
	: >"$STORE/seg/00000007"
	: >"$STORE/seg/99999999"
	start_ckptd a
	local i
	for i in 2 3; do
		tw a write j v$i "${W[@]}" -S $i -w local || fail "v$i after junk segment files"
	done
	ok v1 1
	local peak
	peak=$(awk '/VmHWM/ { print $2 }' "/proc/$(ckptd_pid a)/status")
	[ "$peak" -lt 1000000 ] || fail "ckptd resident peak $peak KiB"
	stop_ckptd a
}

dataflip() {
	drain_conf a
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w drained || fail "v1"
	stop_ckptd a
	flip_byte "$(seg_of v1)" 100000
	start_ckptd a
	ok v1 1
	grep -q "source local failed (checksum mismatch.*trying pfs" "$T/a/ckptd.log" ||
		fail "the damaged local read did not fall back to the PFS"
	stop_ckptd a
}

incbase() {
	drain_conf a incremental=yes keep=2 -- keep=1
	start_ckptd a
	tw a write j v1 "${W[@]}" -S 1 -w drained || fail "v1"
	tw a write j v2 "${W[@]}" -S 1 -w drained || fail "v2 (same bytes: all references)"
	# v2's local copy goes (keep = 1 locally after v3); v1 must stay on
	# the PFS: v2's chunks are v1's.
	stop_ckptd a
	start_ckptd a
	tw a write j v3 "${W[@]}" -S 3 -w drained || fail "v3"
	tw a verify j v2 "${W[@]}" -S 1 || fail "v2 lost its base after a restart"
	local err
	err=$(ctl a rm j v1 2>&1; ctl a rm j v1 2>&1)
	case $err in *"incremental base"*) ;; *) fail "rm of the base v1 was not refused: $err" ;; esac
	tw a verify j v2 "${W[@]}" -S 1 || fail "v2 lost its base at rm"
	stop_ckptd a
}

seq() {
	drain_conf a -- keep=1
	start_ckptd a
	local i
	for i in 1 2 3; do
		tw a write j v$i "${W[@]}" -S $i -w drained || fail "v$i"
	done
	tw a rm j v3 >/dev/null || fail "rm of v3's local copy"
	stop_ckptd a
	mv "$PFS" "$PFS.away"
	start_ckptd a
	tw a write j v4 "${W[@]}" -S 4 -w local || fail "v4"
	[ -e "$PFS" ] && fail "ckptd created the missing drain target"
	stop_ckptd a
	mv "$PFS.away" "$PFS"
	start_ckptd a
	[ "$(tw a latest j)" = v4 ] || fail "latest is '$(tw a latest j)', want v4"
	poll_until 30 level_is a j v4 drained || fail "v4 did not drain once the PFS was back"
	stop_ckptd a
	start_ckptd a
	[ "$(tw a latest j)" = v4 ] || fail "latest is '$(tw a latest j)' after a restart, want v4"
	for i in 1 2 3 4; do ok v$i $i; done
	stop_ckptd a
}

for s in qfail unnamed dupman junk dataflip incbase seq; do
	rm -rf "$T/a" "$PFS" "$PFS.away"
	subtest "$s" "$s"
done
finish
