#!/bin/bash
# t_drain: committed versions drain to the PFS target and come back from it.
#  - plain: the PFS tree of the version's files is the trainer's files byte
#    for byte (diff -r with what ckpt_tw writes), the manifest is beside it,
#    and the version reaches DRAINED;
#    rm drops the local copy, a second rm the PFS copy, and the name can
#    be written again
#  - zstd with a byte shuffle, and incremental: the PFS files are no longer
#    plain, an unchanged version stores a fraction of a full one, and both
#    read back byte for byte through ckptd
#  - a fresh node (empty store, same target) lists the drained versions;
#    ckpt_read and `ckptctl restore latest` give every byte back
#  - local retention with a drain evicts only drained versions, which stay
#    readable from the PFS; `[drain] keep` bounds what stays on the PFS
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"

expect_tree() { # DIR JOB VERSION SEED NFILES SIZE
	"$TW" expect "$2" "$3" -r 0 -n "$5" -z "$6" -S "$4" -o "$1" ||
		fail "ckpt_tw expect failed"
}

plain() {
	drain_conf a
	start_ckptd a
	tw a write pl/job v1 -n 3 -z 5000000 -S 12 -w drained ||
		fail "v1 did not reach DRAINED"
	expect_tree "$T/exp1" pl/job v1 12 3 5000000
	diff -r "$T/exp1" "$(pfs_vdir pl/job v1)/files" ||
		fail "the PFS tree of a plain drain is not the trainer's files"
	[ -f "$(pfs_vdir pl/job v1)/manifest" ] || fail "no manifest beside the files"
	[ -z "$(pfs_temps)" ] || fail "temporary files left: $(pfs_temps)"
	[ "$(vlevel a pl/job v1)" = drained ] || fail "v1 not listed as drained"
	# rm of a drained version drops the local copy (still listed, on the
	# PFS); a second rm removes it from the PFS; the name can then be
	# written again, and the new bytes are what the PFS holds.
	tw a rm pl/job again >/dev/null 2>&1
	tw a write pl/job again -n 1 -z 1000000 -S 13 -w drained || fail "again/1 not drained"
	out=$(ctl a rm pl/job again) || fail "rm of a drained version failed"
	[ "$out" = "removed pl/job/again: local copy removed; the PFS copy stays (rm again to remove it)" ] ||
		fail "ckptctl rm of a drained version says: $out"
	[ "$(vlevel a pl/job again)" = drained ] ||
		fail "rm of a drained version removed more than the local copy"
	out=$(ctl a --json rm pl/job again) || fail "rm of a PFS-only version failed"
	grep -q '"copy": *"pfs"' <<<"$out" || fail "ckptctl --json rm of a PFS-only version: $out"
	[ "$(vlevel a pl/job again)" = absent ] || fail "second rm left the version listed"
	tw a write pl/job again -n 1 -z 1500000 -S 14 -w drained || fail "again/2 not drained"
	expect_tree "$T/exp-again" pl/job again 14 1 1500000
	diff -r "$T/exp-again" "$(pfs_vdir pl/job again)/files" ||
		fail "a version written again did not replace its PFS copy"
	stop_ckptd a
}

packed() {
	drain_conf b compress=zstd:3 shuffle=4 incremental=yes chunk=1M
	start_ckptd b
	tw b write zi/job v1 -n 4 -z 4000000 -S 21 -w drained || fail "v1 not drained"
	tw b write zi/job v2 -n 4 -z 4000000 -S 22 -w drained || fail "v2 not drained"
	tw b write zi/job v3 -n 4 -z 4000000 -S 22 -w drained || fail "v3 not drained"
	tw b verify zi/job v1 -n 4 -z 4000000 -S 21 || fail "v1 does not read back"
	tw b verify zi/job v3 -n 4 -z 4000000 -S 22 || fail "v3 does not read back"
	s2=$(du -sb "$(pfs_vdir zi/job v2)/files" | cut -f1)
	s3=$(du -sb "$(pfs_vdir zi/job v3)/files" | cut -f1)
	info "incremental: v2 stores $s2 bytes, v3 (same bytes as v2) $s3"
	[ "$s3" -lt $((s2 / 10)) ] ||
		fail "incremental v3 (identical to v2) stores $s3 bytes, v2 $s2"
	# Compressible data is stored compressed; the files are no longer plain.
	tw b write zi/job z1 -n 2 -z 4000000 -S 23 -Z -w drained || fail "z1 not drained"
	tw b verify zi/job z1 -n 2 -z 4000000 -S 23 -Z || fail "z1 does not read back"
	sz=$(du -sb "$(pfs_vdir zi/job z1)/files" | cut -f1)
	info "zstd: 8000000 compressible bytes stored in $sz"
	[ "$sz" -lt 4000000 ] || fail "compressible data stored in $sz bytes (not compressed)"
	stop_ckptd b
}

fresh() {
	drain_conf c
	start_ckptd c
	[ "$(vlevel c pl/job v1)" = drained ] || fail "fresh node does not list pl/job v1"
	[ "$(vlevel c zi/job v3)" = drained ] || fail "fresh node does not list zi/job v3"
	tw c verify pl/job v1 -n 3 -z 5000000 -S 12 || fail "fresh node: pl/job v1 reads wrong"
	tw c verify zi/job v3 -n 4 -z 4000000 -S 22 || fail "fresh node: zi/job v3 reads wrong"
	tw c verify zi/job v1 -n 4 -z 4000000 -S 21 || fail "fresh node: zi/job v1 reads wrong"
	tw c verify zi/job z1 -n 2 -z 4000000 -S 23 -Z || fail "fresh node: zi/job z1 reads wrong"
	[ "$(tw c latest zi/job)" = z1 ] || fail "fresh node: latest of zi/job is not z1"
	# A version committed on the fresh node is newer than those it found.
	tw c write zi/job n1 -n 1 -z 100000 -S 24 -w local || fail "n1 on the fresh node"
	[ "$(tw c latest zi/job)" = n1 ] || fail "fresh node: a new version is not the latest"
	if has_ctl; then
		expect_tree "$T/exp3" zi/job v3 22 4 4000000
		ctl c restore zi/job v3 --to "$T/restored" >/dev/null ||
			fail "restore latest from the PFS failed"
		diff -r "$T/exp3" "$T/restored" || fail "restored tree differs"
		ctl c verify pl/job v1 >/dev/null || fail "ckptctl verify of a PFS-only version failed"
	fi
	stop_ckptd c
}

retention() {
	drain_conf d keep=2 -- keep=1
	start_ckptd d
	for i in 1 2 3 4; do
		tw d write rt/job v$i -n 1 -z 2000000 -S $((30 + i)) -w drained ||
			fail "v$i not drained"
	done
	poll_until 20 level_is d rt/job v2 absent ||
		fail "v2 still listed though [drain] keep=2"
	[ ! -e "$(pfs_vdir rt/job v1)" ] || fail "v1 is still on the PFS"
	for i in 3 4; do
		tw d verify rt/job v$i -n 1 -z 2000000 -S $((30 + i)) ||
			fail "v$i does not read back"
	done
	n=$(find "$T/d/store/man" -name '*.man' | wc -l)
	[ "$n" = 1 ] || fail "$n local manifests with keep=1, want 1 (drained copies evicted)"
	stop_ckptd d
}

subtest plain plain
subtest packed packed
subtest fresh fresh
subtest retention retention
finish
