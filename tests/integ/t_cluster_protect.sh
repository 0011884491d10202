#!/bin/bash
# t_cluster_protect: six ckptd nodes on 127.0.0.1-6, ec 4+2, three failure
# domains of two nodes: the cluster's versions, shards and namespace.
#  - every node writes its part of job/v1 (3 files, random offsets and
#    overwrites), all with CKPT_NODES=6; every part reaches PROTECTED (each
#    node's own WAIT); every node holds one shard of each other node's part
#    (5 shards of the right size, listed by status);
#  - `ckptctl ls JOB VER` on every node shows the version SEALED, 6 of 6
#    parts, its 18 files, and each part's node; every file reads back byte
#    for byte from every node (reads of other nodes' files go to them);
#  - through ckptfs (-o nodes=2): a part written on n1's mount and one on
#    n4's; the version is open until both commit; both files read back
#    through a third node's mount;
#  - a version whose sixth part is never committed (its writer killed, then
#    its node killed) is not complete on any node, and ckpt_latest is v1,
#    also after n6 restarts (which finds nothing of its part committed);
#  - a peer stopped with SIGSTOP: the others still commit and reach LOCAL
#    at once; their PROTECTED waits (its shards have nowhere else to go);
#    `ckptctl status` names the stopped peer as lagging; after SIGCONT
#    every part reaches PROTECTED;
#  - garbage on a peer port writes no shard; a held shard with a flipped
#    byte is found by its CRC when its holder restarts (set aside, logged).
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
cluster_setup 6 rackA rackB rackC
JOB=train/llm
FILES=(-n 3 -z 3145728 -R)

node() {    # NAME: configure and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M
	cluster_start "$1" 4+2
}
is() { status_is "$@"; }


for n in $ALL; do node $n; done
cluster_up 5

# ---- v1: every node writes its part --------------------------------------
cluster_protect_parts $JOB v1 "${FILES[@]}"
for n in $ALL; do
	poll_until 20 is $n shards_held 5 || fail "$n holds $(sjson $n shards_held) shards, not 5"
	# 9 MiB per part in stripes of 4 x 1 MiB: 3 stripes, 3 MiB a shard.
	is $n shard_bytes $((5 * 3 * 1048576)) || fail "$n: $(sjson $n shard_bytes) shard bytes"
	n_dat=$(find "$T/$n/store/shards" -name '*.dat' | wc -l)
	[ "$n_dat" = 5 ] || fail "$n has $n_dat shard files"
done
for n in $ALL; do
	out=$(ctl $n ls $JOB v1) || fail "$n: ckptctl ls $JOB v1"
	echo "$out" | head -1 | grep -qi "sealed, level protected, 18 files.*6 of 6 parts sealed" ||
		fail "$n lists v1 as: $(echo "$out" | head -1)"
	for m in $ALL; do
		echo "$out" | grep -qiE "^$m +sealed +protected" ||
			fail "$n does not list $m's part: $out"
	done
	[ "$(tw $n latest $JOB -w protected)" = v1 ] || fail "$n: latest protected is not v1"
done
for n in $ALL; do
	i=0
	for m in $ALL; do
		i=$((i + 1))
		tw $n verify $JOB v1 -r $i -P part$i "${FILES[@]}" ||
			fail "$n: part$i (held by $m) does not read back"
	done
done
info "v1: 6 parts protected, 30 shards held, every file reads from every node"

# ---- the mount: a part written through ckptfs, the whole version read ----
if grep -qw fuse /proc/filesystems && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	mount_ckptfs n1 "$T/m1" nodes=2
	mount_ckptfs n4 "$T/m4" nodes=2
	mkdir -p "$T/m1/fj" "$T/m4/fj" || fail "mkdir of a job through the mounts"
	mkdir "$T/m1/fj/vm.tmp" "$T/m4/fj/vm.tmp" || fail "mkdir of a version through the mounts"
	head -c 3000000 /dev/urandom >"$T/a.bin"
	head -c 1234567 /dev/urandom >"$T/b.bin"
	cp "$T/a.bin" "$T/m1/fj/vm.tmp/a.bin" && cp "$T/b.bin" "$T/m4/fj/vm.tmp/b.bin" ||
		fail "writing through the mounts"
	# mv VER.tmp VER commits the mount's part.
	mv "$T/m1/fj/vm.tmp" "$T/m1/fj/vm" || fail "commit of n1's part through the mount"
	one_of_two() { ctl n1 ls fj vm | head -1 | grep -qi "open.*1 of 2 parts"; }
	poll_until 20 one_of_two ||
		fail "with one of two parts committed n1 shows: $(ctl n1 ls fj vm | head -1)"
	mv "$T/m4/fj/vm.tmp" "$T/m4/fj/vm" || fail "commit of n4's part through the mount"
	poll_until 20 _state_is n1 fj vm sealed || fail "fj/vm is $(vstate n1 fj vm) on n1"
	umount_ckptfs "$T/m1"
	umount_ckptfs "$T/m4"
	# A mount on a third node sees the whole version, and reads each
	# part from the node that holds it.
	mount_ckptfs n2 "$T/m2"
	cmp "$T/a.bin" "$T/m2/fj/vm/a.bin" || fail "n1's file does not read back through n2's mount"
	cmp "$T/b.bin" "$T/m2/fj/vm/b.bin" || fail "n4's file does not read back through n2's mount"
	umount_ckptfs "$T/m2"
	info "mount: two parts written through two mounts, read through a third"
fi

# ---- v2: the sixth part is never committed --------------------------------
i=0
for n in n1 n2 n3 n4 n5; do
	i=$((i + 1))
	CKPT_NODES=6 tw $n write $JOB v2 -r $i -P part$i -n 1 -z 1048576 -w local ||
		fail "$n: writing its part of v2"
done
mkfifo "$T/hold"
CKPT_NODES=6 "$TW" write -s "$(sock n6)" $JOB v2 -r 6 -P part6 -n 1 -z 1048576 -p <"$T/hold" &
WPID=$!
exec 9>"$T/hold"
poll_until 20 _state_is n6 $JOB v2 open || fail "n6's writer did not open v2"
kill9 n6            # the node dies with its part open
exec 9>&-
kill -KILL $WPID 2>/dev/null
wait $WPID 2>/dev/null
for n in n1 n2 n3 n4 n5; do
	[ "$(tw $n latest $JOB)" = v1 ] || fail "$n: latest is $(tw $n latest $JOB), not v1"
	ctl $n ls $JOB v2 | head -1 | grep -qi "open.*5 of 6 parts sealed" ||
		fail "$n shows v2 as: $(ctl $n ls $JOB v2 | head -1)"
done
node n6
poll_until 30 is n1 peers_up 5 || fail "n6 did not come back"
latest_is() { [ "$(tw "$1" latest $JOB)" = "$2" ]; }
# n6's recovery finds nothing committed of its part: never sealed, the
# version stays incomplete on every node (open, or failed if n6 lists its
# part), and latest stays v1.
for n in $ALL; do
	st=$(vstate $n $JOB v2)
	case $st in open|failed|incomplete) ;;
	*) fail "$n lists v2 as $st after n6's restart" ;;
	esac
	# A node just started learns the others' parts as its links come up.
	poll_until 20 latest_is $n v1 || fail "$n: latest after n6's return is $(tw $n latest $JOB)"
done
info "v2: an uncommitted part keeps the version incomplete everywhere"

# ---- v3: a stopped peer ----------------------------------------------------
N6PID=$(ckptd_pid n6)
kill -STOP "$N6PID"
i=0
for n in n1 n2 n3 n4 n5; do
	i=$((i + 1))
	t0=$(now_ms)
	CKPT_NODES=5 tw $n write $JOB v3 -r $i -P part$i -n 1 -z 2097152 -w local ||
		{ kill -CONT "$N6PID"; fail "$n: writing v3 with n6 stopped"; }
	took=$(( $(now_ms) - t0 ))
	[ $took -lt $(( $(scaled 10) * 1000 )) ] ||
		{ kill -CONT "$N6PID"; fail "$n: LOCAL took $took ms with n6 stopped"; }
done
lags() { [[ "$(sjson "$1" peers_lagging)" == *"$2 "* ]]; }
poll_until 20 lags n1 n6 ||
	{ kill -CONT "$N6PID"; fail "n1 does not name n6 as lagging: '$(sjson n1 peers_lagging)'"; }
ctl n1 status | grep -q "^lagging   n6 " ||
	{ kill -CONT "$N6PID"; fail "ckptctl status does not show the lag: $(ctl n1 status)"; }
part_is n1 v3 local || { kill -CONT "$N6PID"; fail "n1's v3 part is $(part_level n1 v3) with n6 stopped"; }
kill -CONT "$N6PID"
for n in n1 n2 n3 n4 n5; do
	ctl $n wait $JOB v3 protected --timeout 60 >/dev/null ||
		fail "$n: v3 not PROTECTED after n6 came back"
done
[ "$(tw n3 latest $JOB -w protected)" = v3 ] || fail "n3: latest protected is not v3"
info "v3: a stopped peer delays only PROTECTED, and is named"

# ---- garbage, and a flipped byte in a held shard ---------------------------
# First let protection settle: shards of parts sealed before n6 stopped and
# came back (v2's) may still be on their way to it.  Settled: nothing
# queued for protection on any node, and the same count of held shards at
# two polls in a row.
nshards() { find "$T"/n*/store/shards -name '*.dat' | wc -l; }
last=
settled() {
	local n c
	for n in $ALL; do [ "$(sjson $n protect_queued)" = 0 ] || return 1; done
	c=$(nshards)
	[ "$c" = "$last" ] && return 0
	last=$c
	return 1
}
poll_until 60 settled || fail "protection did not settle: $(for n in $ALL; do echo -n "$n $(sjson $n protect_queued) "; done)"
before=$(nshards)
"$PY" - "$PORT" <<'PYEOF' || fail "garbage: the python client failed"
import os, socket, struct, sys
port = int(sys.argv[1])
for host in ("127.0.0.1", "127.0.0.2"):
    for data in (os.urandom(5000), struct.pack("<IHHII", 0x4e504b43, int(os.environ["PEER_VERSION"]), 4, 1 << 30, 1) + os.urandom(20)):
        s = socket.create_connection((host, port), timeout=10)
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while s.recv(4096):
                pass
        except OSError:
            pass
        s.close()
PYEOF
for n in $ALL; do assert_up $n; done
after=$(nshards)
[ "$before" = "$after" ] || fail "garbage changed the shards held: $before -> $after"

DAT=$(find "$T/n2/store/shards" -name '*.dat' | head -1)
flip_byte "$DAT" 4096
stop_ckptd n2
node n2
poll_until 20 grep -q "fails its CRC" "$T/n2/ckptd.log" ||
	fail "n2 did not find the flipped byte in $DAT"
poll_until 20 is n2 shards_bad 1 || fail "n2 counts $(sjson n2 shards_bad) bad shards"

for n in $ALL; do stop_ckptd $n; done
finish
