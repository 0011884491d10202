#!/bin/bash
# t_namespace: the calls a POSIX-style writer (ckptfs) makes inside an open
# version.  ckpt_ns truncates, unlinks, renames a file over another and a
# whole directory, syncs, reads back the open version, commits; the result
# is checked while open, after LOCAL, and again after a SIGKILL and restart
# (the manifest holds the zero record and only the live files).  A non-root
# uid may not begin on behalf of another (EPERM); root may, and the job is
# then owned by that uid (root's own begin still works, another uid's not).
# `ckptctl commit` commits a version a writer still holds open.
# ckpt_setattr keeps a mode, gid and times through the commit; a non-root
# uid may not name another uid nor set set-id bits (EPERM).
# At the commit, names a drain or restore could not make are refused (a
# file "a" with "a/b" below it, a symbolic link with no target, ...); the
# version whose names can be drains and restores after a SIGKILL and two
# clean restarts.
# The file table's hash is keyed: 16000 names 3.9 KiB long with one CRC32C,
# half of them unlinked (no rebuild of the table per unlink), commit and
# seal within 30 s (scaled; about a second here); the unkeyed
# table took over 30 s, its loop thread comparing each name with the rest.
# TIMEOUT: 150
set -u
. "$(dirname "$0")/lib.sh"

NS=$BUILD/tests/ckpt_ns

ckptd_conf d
start_ckptd d
"$NS" "$(sock d)" write ns/job v1 || fail "namespace checks failed on the open and sealed version"
kill9 d
restart d
"$NS" "$(sock d)" check ns/job v1 || fail "namespace checks failed after restart"
"$NS" "$(sock d)" attr ns/attr v1 || fail "ckpt_setattr checks as root failed"
timeout $((30 * SCALE)) "$NS" "$(sock d)" flood ns/flood v1 ||
	fail "16000 names of one CRC32C: not LOCAL within $((30 * SCALE)) s (rc $?)"
alive "$(ckptd_pid d)" || fail "ckptd died after the names of one CRC32C"

got=$("$NS" "$(sock d)" as 4242 other/job v1) || fail "begin_as as root failed to run"
[ "$got" = ok ] || fail "root begin_as(4242): $got, want ok"
if command -v setpriv >/dev/null; then
	chmod 755 "$T" "$T/d"
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" "$(sock d)" as 0 x/job v1)
	[ "$got" = EPERM ] || fail "nobody begin_as(0): '$got', want EPERM"
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" "$(sock d)" as 65534 mine/job v1)
	[ "$got" = ok ] || fail "nobody begin_as(itself): '$got', want ok"
	# other/job was created for uid 4242: nobody is refused.
	got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" "$(sock d)" as 65534 other/job v2)
	[ "$got" = EACCES ] || fail "nobody joining uid 4242's job: '$got', want EACCES"
	# ckpt_setattr: kept through the commit; a foreign uid and set-id
	# bits only from root.
	setpriv --reuid=65534 --regid=65534 --clear-groups "$NS" "$(sock d)" attr nb/job v1 ||
		fail "ckpt_setattr checks as nobody failed"
else
	info "setpriv missing: uid checks skipped"
fi
# ckptctl commit: a writer holding a version open (as a program writing
# through ckptfs would) has it committed by name; its own commit then
# succeeds, and the version verifies.
if has_ctl; then
	mkfifo "$T/go"
	exec 3<>"$T/go"
	tw d write by/name v1 -n 2 -z 300000 -S 9 -p <"$T/go" 3>&- >"$T/w.out" &
	WRITER=$!
	poll_until 20 grep -q paused "$T/w.out" || fail "writer did not reach its commit"
	ctl d commit by/name v1 || fail "ckptctl commit failed"
	ctl d wait by/name v1 local --timeout 20 || fail "committed-by-name version did not reach LOCAL"
	ctl d commit by/name v1 2>/dev/null && fail "a second ckptctl commit succeeded"
	exec 3>&-
	wait $WRITER || fail "the writer's own commit after ckptctl commit failed"
	tw d verify by/name v1 -n 2 -z 300000 -S 9 || fail "committed-by-name version does not verify"
fi
# Names the drain or a restore could not make ("a" a file with "a/b" below,
# a symbolic link with no target) are refused at the commit, and a NUL or a
# hole inside a link's target at the seal; the version
# with names that can all be made drains, survives a SIGKILL and two clean
# restarts, and restores.
PFS=$T/pfs
drain_conf p
start_ckptd p
"$NS" "$(sock p)" conflict ns/names c || fail "names checked at the commit: checks failed"
if has_ctl; then
	ctl p wait ns/names c-12 drained --timeout 30 || fail "the version whose names can be made did not drain"
fi
kill9 p
for i in 1 2 3; do
	if [ "$i" = 1 ]; then restart p; else stop_ckptd p; start_ckptd p; fi
	for n in 0 1 2 3 4 5 6 7 8 9 10 11; do
		st=$(vstate p ns/names c-$n)
		[ "$st" = absent ] || [ "$st" = failed ] ||
			fail "restart $i: refused version c-$n is $st"
	done
	if has_ctl; then
		rm -rf "$T/r"
		ctl p restore ns/names c-12 --to "$T/r" >/dev/null || fail "restart $i: restore failed"
		[ -d "$T/r/a" ] && [ "$(cat "$T/r/a/b")" = bytes ] && [ "$(cat "$T/r/f/g")" = bytes ] &&
			[ "$(cat "$T/r/q")" = bytes ] && [ "$(cat "$T/r/r/s")" = bytes ] &&
			[ "$(readlink "$T/r/t")" = target ] && [ "$(readlink "$T/r/u")" = target ] &&
			[ "$(readlink "$T/r/w")" = wwwwwww ] && [ "$(cat "$T/r/y")" = bytes ] &&
			[ ! -e "$T/r/z" ] && [ ! -L "$T/r/z" ] || fail "restart $i: restored tree: $(cd "$T/r" && find . | sort | tr '\n' ' ')"
	fi
done
stop_ckptd p

# Set-id bits given by root (ckptfs) with no owner or group: a set-uid bit
# is the job owner's, and a restore as root never makes a set-uid or
# set-gid file root's (an outside attack made a set-uid root program).
"$NS" "$(sock d)" setid ns/setid v1 || fail "setid checks failed"
if has_ctl; then
	ctl d restore ns/setid v1 --to "$T/rs" >/dev/null || fail "restore of ns/setid failed"
	[ "$(stat -c %a:%u "$T/rs/su")" = 4755:4242 ] ||
		fail "restored su: $(stat -c %a:%u "$T/rs/su"), want 4755:4242"
	[ "$(stat -c %a "$T/rs/sg")" = 755 ] ||
		fail "restored sg: $(stat -c %a:%u:%g "$T/rs/sg"), want 755 (no group given: no set-gid bit)"
fi
stop_ckptd d
finish
