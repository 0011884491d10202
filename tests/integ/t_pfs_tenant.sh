#!/bin/bash
# t_pfs_tenant: the PFS layout is one-to-one and private (issue 8).
#  - collide: uid A drains job proj, version step-0001 (files under ckpt/);
#    uid B drains job proj/step-0001, version ckpt, with the same files
#    (rank000/part-N.bin): in the old <job>/<version>/<path> layout both are
#    proj/step-0001/ckpt/rank000/part-N.bin.  A's PFS bytes do not change, and
#    both versions read back byte for byte, on the node and on a fresh node
#    that has only the PFS (ckpt_read as each uid, `ckptctl restore`)
#  - private: every directory and file of A's job on the PFS is A's (uid and
#    primary group) with no group or other bits, the target and the shared
#    level proj.dir are ckptd's 0711, and B can neither list nor read A's
#    tree on the PFS (nor list the target), while A reads its own
#  - names: a version with files named like the drain's temporaries and
#    manifests, old and new (a.ckpt-tmp beside a, .ckpt-manifest, manifest,
#    manifest.tmp, tmp.0, files/...) drains, nothing temporary is left, the
#    PFS holds every file byte for byte, and a fresh node reads them all back
#  - links: an owner who swaps a level of its own tree for a symbolic link
#    (its version's directory to a directory of root's, its files/ to
#    another user's files) gets a failed drain, never root writing through
#    the link; the other user's bytes are unchanged and a fresh node does
#    not take the link for a version
# Two unprivileged uids are made with useradd for the test and removed with
# userdel -r when it ends, whatever happens.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (useradd, and a daemon that can chown)"
for _c in useradd userdel setpriv; do
	command -v "$_c" >/dev/null || skip "$_c is not installed"
done

UA=ckpt-ta-$$
UB=ckpt-tb-$$
MADE=()                      # users this test made

# Remove the test's users, then the usual cleanup.  Helpers still running as
# them would keep userdel from working: kill those first.
_tenant_cleanup() {
	local st=$? u
	_kill_jobs
	for u in "${MADE[@]}"; do
		userdel -r "$u" >/dev/null 2>&1
		id -u "$u" >/dev/null 2>&1 && userdel -f "$u" >/dev/null 2>&1
	done
	(exit "$st")
	_cleanup
}
trap _tenant_cleanup EXIT

for _u in "$UA" "$UB"; do
	useradd -M -U -s /usr/sbin/nologin "$_u" >/dev/null 2>&1 ||
		skip "useradd $_u failed"
	MADE+=("$_u")
done
UIDA=$(id -u "$UA") GIDA=$(id -g "$UA")
UIDB=$(id -u "$UB")

# as UID CMD...: run CMD as uid UID with its primary group only.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"
}

chmod 755 "$T"               # the test's uids must reach the sockets
as "$UIDA" test -x "$TW" -a -x "$T" ||
	skip "uid $UIDA cannot run $TW (a build directory others cannot reach)"

# The administrator makes the target (ckptd never does): 0711, root's.
PFS=$T/pfs
mkdir -p "$PFS" && chmod 711 "$PFS"

# A private, empty directory of uid UID: $T/home-UID.
home() {
	mkdir -p "$T/home-$1" && chown "$1:$(id -g "$1")" "$T/home-$1" &&
		chmod 700 "$T/home-$1" || fail "cannot make a home for uid $1"
	echo "$T/home-$1"
}

A_ARGS=(-P ckpt -n 2 -z 300000 -S 71)     # A: proj step-0001
B_ARGS=(-n 2 -z 300000 -S 72)             # B: proj/step-0001 ckpt

# both_read NAME: A's and B's versions read back through ckptd NAME, each as
# its own uid, and B cannot read A's.
both_read() {
	local s
	s=$(sock "$1")
	as "$UIDA" "$TW" verify -s "$s" proj step-0001 "${A_ARGS[@]}" ||
		fail "$1: A's proj step-0001 does not read back"
	as "$UIDB" "$TW" verify -s "$s" proj/step-0001 ckpt "${B_ARGS[@]}" ||
		fail "$1: B's proj/step-0001 ckpt does not read back"
	as "$UIDB" "$TW" verify -s "$s" proj step-0001 "${A_ARGS[@]}" 2>/dev/null &&
		fail "$1: B read A's version through ckptd"
	return 0
}

collide() {
	local s adir bdir before
	drain_conf a
	start_ckptd a
	s=$(sock a)
	as "$UIDA" "$TW" write -s "$s" proj step-0001 "${A_ARGS[@]}" -w drained ||
		fail "A's proj step-0001 did not reach DRAINED"
	adir=$(pfs_vdir proj step-0001)
	[ -f "$adir/files/ckpt/rank000/part-1.bin" ] ||
		fail "A's files are not at $adir/files: $(find "$PFS" | head -20)"
	before=$(tree_sums "$adir")
	as "$UIDB" "$TW" write -s "$s" proj/step-0001 ckpt "${B_ARGS[@]}" -w drained ||
		fail "B's proj/step-0001 ckpt did not reach DRAINED"
	bdir=$(pfs_vdir proj/step-0001 ckpt)
	[ -f "$bdir/files/rank000/part-1.bin" ] || fail "B's files are not at $bdir/files"
	[ "$(tree_sums "$adir")" = "$before" ] ||
		fail "B's drain changed A's bytes on the PFS"
	"$TW" expect proj step-0001 -r 0 "${A_ARGS[@]}" -o "$T/expa" || fail "expect A"
	"$TW" expect proj/step-0001 ckpt -r 0 "${B_ARGS[@]}" -o "$T/expb" || fail "expect B"
	diff -r "$T/expa" "$adir/files" || fail "A's PFS files are not A's bytes"
	diff -r "$T/expb" "$bdir/files" || fail "B's PFS files are not B's bytes"
	both_read a
	stop_ckptd a

	# A fresh node, with only the PFS: it finds both, each its owner's.
	drain_conf fresh
	start_ckptd fresh
	[ "$(vlevel fresh proj step-0001)" = drained ] || fail "fresh node: no proj step-0001"
	[ "$(vlevel fresh proj/step-0001 ckpt)" = drained ] ||
		fail "fresh node: no proj/step-0001 ckpt"
	both_read fresh
	if has_ctl; then
		s=$(sock fresh)
		as "$UIDA" "$CKPTCTL" -s "$s" restore proj step-0001 \
			--to "$(home "$UIDA")/r" >/dev/null || fail "A's restore failed"
		diff -r "$T/expa" "$T/home-$UIDA/r" || fail "A's restored tree differs"
		as "$UIDB" "$CKPTCTL" -s "$s" restore proj/step-0001 ckpt \
			--to "$(home "$UIDB")/r" >/dev/null || fail "B's restore failed"
		diff -r "$T/expb" "$T/home-$UIDB/r" || fail "B's restored tree differs"
	fi
	stop_ckptd fresh
	[ "$(tree_sums "$adir")" = "$before" ] || fail "A's bytes on the PFS changed"
	private
}

# The ownership and modes of what collide() left on the PFS.
private() {
	local adir bad f
	adir=$(pfs_vdir proj step-0001)
	# Every file A's, 0600 or 0700, but the manifests: ckptd's (root's)
	# 0644, in A's 0700 tree, so that A reads them and cannot forge them.
	bad=$(find "$PFS/proj.job" ! -name manifest \( ! -user "$UIDA" -o ! -group "$GIDA" \
		-o -perm /077 \) -printf '%M %u:%g %p\n')
	[ -z "$bad" ] || fail "not A's alone in A's job on the PFS: $bad"
	bad=$(find "$PFS/proj.dir/step-0001.job" ! -name manifest \( ! -user "$UIDB" -o -perm /077 \) \
		-printf '%M %u:%g %p\n')
	[ -z "$bad" ] || fail "not B's alone in B's job on the PFS: $bad"
	bad=$(find "$PFS/proj.job" "$PFS/proj.dir/step-0001.job" -name manifest \
		\( ! -user 0 -o ! -perm 644 \) -printf '%M %u:%g %p\n')
	[ -z "$bad" ] || fail "a manifest not root's 0644: $bad"
	[ "$(find "$PFS/proj.job" -type f | wc -l)" = 3 ] ||
		fail "A's job holds other than its 2 files and a manifest: $(find "$PFS/proj.job")"
	for f in "$PFS" "$PFS/proj.dir"; do
		[ "$(stat -c '%a %u' "$f")" = "711 0" ] ||
			fail "$f is $(stat -c '%a %U' "$f"), want 711 root (a shared level)"
	done
	f=$adir/files/ckpt/rank000/part-0.bin
	check_errno ok -u "$UIDA" read "$f"
	check_errno EACCES -u "$UIDB" read "$f"
	check_errno EACCES -u "$UIDB" list "$PFS/proj.job"
	check_errno EACCES -u "$UIDB" list "$adir"
	check_errno EACCES -u "$UIDB" list "$PFS"
	check_errno EACCES -u "$UIDB" list "$PFS/proj.dir"
	check_errno EACCES -u "$UIDB" read "$adir/manifest"
	check_errno EACCES -u "$UIDA" list "$PFS/proj.dir/step-0001.job"
	checks_done "who can reach what on the PFS"
}

names() {
	# a.ckpt-tmp before a (the old temporary of a), and after it in d/.
	local n=(-F a.ckpt-tmp -F a -F .ckpt-manifest -F .ckpt-manifest.tmp
		-F manifest -F manifest.tmp -F tmp.0 -F tmp.1 -F files/x
		-F d/a -F d/a.ckpt-tmp -F d/a.ckpt-tmp.ckpt-tmp)
	local args=("${n[@]}" -z 200000 -S 81) vdir
	drain_conf n
	start_ckptd n
	as "$UIDA" "$TW" write -s "$(sock n)" names v1 "${args[@]}" -w drained ||
		fail "a version with files named like the drain's own did not drain"
	[ -z "$(pfs_temps)" ] || fail "temporary files left: $(pfs_temps)"
	"$TW" expect names v1 -r 0 "${args[@]}" -o "$T/expn" || fail "expect"
	vdir=$(pfs_vdir names v1)
	diff -r "$T/expn" "$vdir/files" ||
		fail "the PFS does not hold every file of the version byte for byte"
	stop_ckptd n
	drain_conf n2
	start_ckptd n2
	as "$UIDA" "$TW" verify -s "$(sock n2)" names v1 "${args[@]}" ||
		fail "fresh node: the files do not read back from the PFS"
	if has_ctl; then
		as "$UIDA" "$CKPTCTL" -s "$(sock n2)" restore names v1 \
			--to "$(home "$UIDA")/rn" >/dev/null || fail "restore failed"
		diff -r "$T/expn" "$T/home-$UIDA/rn" || fail "the restored tree differs"
	fi
	stop_ckptd n2
}

# A level of A's tree swapped for a link: ckptd writes nowhere through it.
links() {
	local victim=$T/victim s bdir before
	mkdir -p "$victim"
	drain_conf l retry_max=1
	start_ckptd l
	s=$(sock l)
	as "$UIDB" "$TW" write -s "$s" other v1 -n 1 -z 100000 -S 91 -w drained ||
		fail "B's other v1 not drained"
	bdir=$(pfs_vdir other v1)
	before=$(tree_sums "$bdir")
	as "$UIDA" "$TW" write -s "$s" lj v0 -n 1 -z 100000 -S 92 -w drained ||
		fail "A's lj v0 not drained"
	# A's own job directory is A's: A may put links in it.
	as "$UIDA" ln -s "$victim" "$PFS/lj.job/v1.ver" || fail "A cannot write in its job"
	as "$UIDA" mkdir -p "$PFS/lj.job/v2.ver" || fail "A cannot mkdir in its job"
	as "$UIDA" ln -s "$bdir/files" "$PFS/lj.job/v2.ver/files" || fail "ln"
	as "$UIDA" "$TW" write -s "$s" lj v1 -n 1 -z 100000 -S 93 -w local ||
		fail "A's lj v1 not local"
	as "$UIDA" "$TW" write -s "$s" lj v2 -P rank000 -n 1 -z 100000 -S 94 -w local ||
		fail "A's lj v2 not local"
	poll_until 20 grep -q "drain: lj/v2: " "$T/l/ckptd.log" ||
		fail "no drain error for a version whose files/ is a link"
	poll_until 20 grep -q "drain: lj/v1: " "$T/l/ckptd.log" ||
		fail "no drain error for a version directory that is a link"
	info "links: $(grep -m1 "drain: lj/v1: " "$T/l/ckptd.log" | sed 's/.*drain: //')"
	info "links: $(grep -m1 "drain: lj/v2: " "$T/l/ckptd.log" | sed 's/.*drain: //')"
	[ "$(vlevel l lj v1)" = local ] || fail "lj v1 drained through a link"
	[ "$(vlevel l lj v2)" = local ] || fail "lj v2 drained through a link"
	[ -z "$(ls -A "$victim")" ] || fail "ckptd wrote through A's link: $(ls -lA "$victim")"
	[ "$(tree_sums "$bdir")" = "$before" ] || fail "B's bytes changed through A's link"
	stop_ckptd l
	drain_conf l2
	start_ckptd l2
	[ "$(vlevel l2 lj v0)" = drained ] || fail "fresh node: no lj v0"
	[ "$(vlevel l2 lj v1)" = absent ] || fail "fresh node lists lj v1 (a link)"
	[ "$(vlevel l2 lj v2)" = absent ] || fail "fresh node lists lj v2 (a link)"
	stop_ckptd l2
}

subtest collide collide
subtest names names
subtest links links
finish
