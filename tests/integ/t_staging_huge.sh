#!/bin/bash
# t_staging_huge: root's staging leases on 2 MiB huge pages ([ckptd]
# staging_hugepages, server/core/staging.h), from a pool the test reserves for
# itself (vm.nr_hugepages, set back in the cleanup):
#  [mount]  ckptd makes its root reserve of huge pages and the mount (ckptfs
#           runs as root) writes through it, and reads through a second
#           lease made of huge pages in place of a prefaulted ordinary one:
#           ckptfs maps only leases with KernelPageSize 2048 kB.  The
#           version written through it reads back byte for byte after
#           ckptd's SIGKILL and two clean restarts; each time ckptfs writes
#           and reads through leases of huge pages again.
#           A real user's writer (useradd) gets 4 KiB pages while the pool
#           still has room for its lease (staging.h: why).
#  [held]   a file of the mount held open while ckptd stops cleanly, the
#           pool then emptied by another process: the mount's next write
#           copies into its old lease before it finds ckptd gone, and
#           ckptfs lives (ckptd does not punch a lease of huge pages it
#           frees: the copy would take a new page from the empty pool,
#           SIGBUS).
#  [empty]  with no free page in the pool, root's leases are of 4 KiB
#           pages, ckptd says so, and a version writes and verifies.
#  [off]    staging_hugepages = no takes nothing from the pool.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (the pool, useradd)"
[ -w "$HUGE_POOL" ] || skip "no huge page pool ($HUGE_POOL)"
[ "$(hugepages_free)" = 0 ] || skip "the machine's huge page pool has free pages of its own"
MB=$((1 << 20))

# all_kps PID KPS: PID maps one staging lease at least, each of KPS kB pages.
all_kps() { [ "$(lease_kps "$1" | sort -u | tr '\n' ' ')" = "$2 " ]; }
kps_of() { lease_kps "$1" | sort | uniq -c | tr '\n' ' '; }
# huge_count PID: the leases of huge pages PID maps.
huge_count() { lease_kps "$1" | grep -c '^2048$'; }

mount_case() {
	local M=$T/mnt UH=ckth$$ how pid
	need_fuse
	# 160 MiB: the mount's two 32 MiB leases, their two successors while
	# the old ones are still mapped across a restart, and room for more.
	hugepages_add 80
	test_users "$UH"
	chmod 755 "$T"
	ckptd_conf h staging=128M staging_client=32M keep=10
	start_ckptd h
	grep -q "staging: 32 MiB of root's leases on 2 MiB huge pages" "$T/h/ckptd.log" ||
		fail "ckptd does not say its reserve is on huge pages: $(grep 'staging:' "$T/h/ckptd.log")"
	[ "$(hugepages_free)" = 64 ] || fail "the pool has $(hugepages_free) pages free, want 80 - 16"
	[ "$(huge_count "$(ckptd_pid h)")" = 1 ] || fail "ckptd's leases: $(kps_of "$(ckptd_pid h)")"
	mount_ckptfs h "$M"
	mkdir -p "$T/ref/sub"
	head -c $((40 * MB + 4321)) /dev/urandom >"$T/ref/big.bin"
	head -c 12345 /dev/urandom >"$T/ref/sub/small.bin"
	tree_sums "$T/ref" >"$T/ref.sums"
	mkdir "$M/hj" && mkdir "$M/hj/v1.tmp" || fail "mkdir v1.tmp"
	cp -r "$T/ref/." "$M/hj/v1.tmp/" || fail "cp into the mount"
	pid=$(ckptfs_pid "$M")
	all_kps "$pid" 2048 || fail "the mount's lease is not of huge pages: $(kps_of "$pid")"
	mv "$M/hj/v1.tmp" "$M/hj/v1" || fail "commit of v1"
	ctl h wait hj v1 local --timeout 30 >/dev/null || fail "v1 did not reach LOCAL"
	tree_sums "$M/hj/v1" | cmp -s "$T/ref.sums" - || fail "v1 reads back wrong"
	all_kps "$pid" 2048 || fail "the mount's leases (write, read) are not all of huge pages: $(kps_of "$pid")"
	[ "$(huge_count "$(ckptd_pid h)")" = 2 ] || fail "ckptd's leases after the mount wrote and read: $(kps_of "$(ckptd_pid h)")"
	for how in kill clean clean; do
		if [ $how = kill ]; then kill9 h; else stop_ckptd h; fi
		start_ckptd h
		# The mount reconnects at its first call after the restart.
		poll_until 10 ls "$M/hj/v1/sub" >/dev/null 2>&1 ||
			fail "after a restart ($how): the mount does not answer"
		tree_sums "$M/hj/v1" | cmp -s "$T/ref.sums" - ||
			fail "after a restart ($how): v1 reads back wrong"
		mkdir "$M/hj/w$how$$.tmp" && cp "$T/ref/sub/small.bin" "$M/hj/w$how$$.tmp/" ||
			fail "after a restart ($how): writing through the mount"
		rm -r "$M/hj/w$how$$.tmp" 2>/dev/null
		[ "$(huge_count "$(ckptd_pid h)")" -ge 1 ] ||
			fail "after a restart ($how): ckptd's leases: $(kps_of "$(ckptd_pid h)")"
		all_kps "$pid" 2048 || fail "after a restart ($how): the mount's leases: $(kps_of "$pid")"
	done
	info "[mount] the mount's lease of huge pages; v1 intact after SIGKILL and two restarts"

	# A user's writer, holding its lease: 4 KiB pages, the pool untouched.
	local free0
	free0=$(hugepages_free)
	[ "$free0" -ge 10 ] || fail "the pool has $free0 pages free: no room left to show a user does not get them"
	mkfifo "$T/hold"
	chmod 666 "$T/hold"
	# A size no free lease has, so that ckptd makes a new one for it.
	CKPT_STAGING=20M as "$UH" "$TW" write uj v1 -s "$(sock h)" -n 2 -z $((3 * MB)) -S 3 -p \
		<"$T/hold" >"$T/u.out" 2>"$T/u.err" &
	pid=$!
	exec 9>"$T/hold"
	poll_until 20 grep -q paused "$T/u.out" || fail "the user's writer did not write: $(cat "$T/u.err")"
	# $! is the shell running as(); the writer is its child.
	local wpid
	wpid=$(pgrep -u "$UH" -f ckpt_tw | head -1)
	[ -n "$wpid" ] || fail "the user's writer is not running"
	all_kps "$wpid" 4 || fail "a user's lease is not of 4 KiB pages: $(kps_of "$wpid")"
	[ "$(hugepages_free)" = "$free0" ] || fail "a user's lease took pages of the pool"
	exec 9>&-
	wait "$pid" || fail "the user's writer failed: $(cat "$T/u.err")"
	as "$UH" "$TW" verify uj v1 -s "$(sock h)" -n 2 -z $((3 * MB)) -S 3 ||
		fail "the user's version does not verify"
	umount_ckptfs "$M"
	assert_up h
	info "[mount] a user's lease of 4 KiB pages with $free0 huge pages free"
}

held_case() {
	local M=$T/mnt pid hog
	need_fuse
	command -v /usr/bin/python3 >/dev/null || skip "needs /usr/bin/python3"
	hugepages_add 40
	ckptd_conf k staging=128M staging_client=32M
	start_ckptd k
	mount_ckptfs k "$M"
	pid=$(ckptfs_pid "$M")
	mkdir "$M/kj" && mkdir "$M/kj/v1.tmp" || fail "mkdir v1.tmp"
	exec 8>"$M/kj/v1.tmp/held.bin" || fail "open held.bin"
	head -c $((3 * MB)) /dev/urandom >&8 || fail "the first write"
	all_kps "$pid" 2048 || fail "the mount's lease is not of huge pages: $(kps_of "$pid")"
	stop_ckptd k
	# Another process takes every free page of the pool.
	/usr/bin/python3 - "$HUGE_DIR/free_hugepages" >"$T/hog.out" 2>&1 <<'PY' &
import mmap, os, signal, sys
n = int(open(sys.argv[1]).read())
fd = os.memfd_create("hog", os.MFD_HUGETLB | os.MFD_HUGE_2MB)
os.ftruncate(fd, n << 21)
m = mmap.mmap(fd, n << 21)
for i in range(n):
    m[i << 21] = 1
print("holding", n, flush=True)
signal.pause()
PY
	hog=$!
	poll_until 20 grep -q holding "$T/hog.out" || fail "the pool hog: $(cat "$T/hog.out")"
	[ "$(hugepages_free)" = 0 ] || fail "the pool still has $(hugepages_free) pages free"
	# ckptd is gone: the write fails, or is kept buffered, but ckptfs lives.
	{ head -c $((1 * MB)) /dev/urandom >&8; } 2>/dev/null
	kill -0 "$pid" 2>/dev/null || fail "ckptfs died writing into its lease after ckptd stopped (SIGBUS?)"
	exec 8>&-
	kill -0 "$pid" 2>/dev/null || fail "ckptfs died closing the file after ckptd stopped (SIGBUS?)"
	# The write went as far as the copy into the lease: ckptfs found the
	# connection gone only when it sent the piece.
	grep -q "lost the connection to ckptd" "$T/k/ckptfs.log" ||
		fail "ckptfs did not find the connection gone: $(tail -3 "$T/k/ckptfs.log")"
	kill "$hog"
	wait "$hog" 2>/dev/null
	start_ckptd k
	poll_until 10 ls "$M/kj" >/dev/null 2>&1 || fail "the mount does not answer after ckptd is back"
	umount_ckptfs "$M"
	info "[held] a write into the mount's lease after ckptd stopped, the pool empty: ckptfs lives"
}

empty_case() {
	ckptd_conf e staging=64M staging_client=16M
	start_ckptd e
	grep -q "staging: no lease of 16 MiB on huge pages" "$T/e/ckptd.log" ||
		fail "ckptd does not say its reserve could not be of huge pages: $(grep 'staging:' "$T/e/ckptd.log")"
	# The leases are made in the background (staging_fill): wait for one.
	poll_until 10 all_kps "$(ckptd_pid e)" 4 || fail "ckptd's leases: $(kps_of "$(ckptd_pid e)")"
	tw e write ej v1 -n 2 -z $((5 * MB + 7)) -S 4 -w local || fail "writer failed"
	tw e verify ej v1 -n 2 -z $((5 * MB + 7)) -S 4 || fail "v1 does not verify"
	assert_up e
	info "[empty] no pool: ordinary pages, said once, a version written"
}

off_case() {
	local M=$T/mnt
	need_fuse
	hugepages_add 20
	ckptd_conf o staging=64M staging_client=16M staging_hugepages=no
	start_ckptd o
	mount_ckptfs o "$M"
	mkdir "$M/oj" && mkdir "$M/oj/v1.tmp" && head -c $((3 * MB)) /dev/urandom >"$M/oj/v1.tmp/f" &&
		mv "$M/oj/v1.tmp" "$M/oj/v1" || fail "writing through the mount"
	[ "$(hugepages_free)" = 20 ] || fail "staging_hugepages = no took $((20 - $(hugepages_free))) huge pages"
	all_kps "$(ckptd_pid o)" 4 || fail "ckptd's leases: $(kps_of "$(ckptd_pid o)")"
	all_kps "$(ckptfs_pid "$M")" 4 || fail "the mount's lease: $(kps_of "$(ckptfs_pid "$M")")"
	umount_ckptfs "$M"
	info "[off] staging_hugepages = no: the pool untouched"
}

subtest mount mount_case
subtest held held_case
subtest empty empty_case
subtest off off_case
finish
