#!/bin/bash
# t_cluster_attack: three ckptd nodes on 127.0.0.1-3, ec 2+1, each its own
# failure domain, attacked through their clients and their peer ports.
#  - tenants: uid A writes job `shared` v1 on n2; uid B writes a job of the
#    same name (v0) on n1.  Through n1 (which holds B's job) and through n3
#    (which holds neither), B must not list, stat or read A's v1, nor see
#    it as its latest; A reads its v1 from every node;
#  - a hostile peer (a python node holding the cluster key, speaking as n3
#    while n3 is down): SHARD_PUT for another owner (and one of its own
#    part, which any holder takes now), at an offset near 2^63; SHARD_SEAL whose nstripes does not
#    match what was put; PART in another owner's name; READ past EOF and
#    of another job; a reply to no request; every answer a refusal, n1 up
#    and no shard held;
#  - a flood of READs that never reads its replies: n3's memory stays
#    bounded (under 256 MiB of growth for 800 MiB asked);
#  - a part of 30000 files is listed from another node within 5 s (each
#    file's lookup in the other parts was a scan: 26 s for 40000);
#  - [cluster] bandwidth = 8M: 16 MiB of shards take at least 1.8 s;
#  - kills: n2 (a holder) SIGKILLed mid-protection and restarted, n1 (an
#    owner) SIGKILLed mid-protection and restarted: every part reaches
#    PROTECTED and reads back from every node;
#  - a forwarded read whose client is killed while its owner is stopped;
#    a part removed mid-protection while another node reads it, and a
#    protected one: every node forgets them, their holders drop the shards;
#  - all nodes stopped cleanly (SIGTERM) with protection and forwarded reads
#    in flight, then restarted twice; everything reads back after;
#  - a part removed while a holder is down: the holder drops its shard once
#    back (its owner's PARTs, then SYNC).
# Two uids are made with useradd and removed in the cleanup.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
has_ctl || skip "ckptctl is not built"
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
# default) before it is reused: the flood's bound would measure that.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
cluster_setup 3 rackA rackB rackC

node() {    # NAME: configure and start node NAME
	[ -f "$T/$1/ckptd.conf" ] || ckptd_conf "$1" staging=96M
	cluster_start "$1" 2+1 ${BW:+-o cluster.bandwidth=$BW}
}
is() { [ "$(sjson "$1" "$2")" = "$3" ]; }
all_up() { local n; for n in $ALL; do poll_until 30 is $n peers_up 2 || fail "$n: $(sjson $n peers_up) of 2 peers up"; done; }

for n in $ALL; do node $n; done
all_up

# ---- tenants ------------------------------------------------------------------
tenants() {
	local UA=ckca$$ UB=ckcb$$ n out
	test_users "$UA" "$UB"
	chmod 755 "$T"
	as "$UA" "$TW" write shared v1 -s "$(sock n2)" -n 2 -z 1048576 -S 11 -w local ||
		fail "uid A writing shared/v1 on n2"
	as "$UB" "$TW" write shared v0 -s "$(sock n1)" -n 1 -z 4096 -S 12 -w local ||
		fail "uid B writing shared/v0 on n1"
	poll_until 20 as "$UA" "$TW" verify shared v1 -s "$(sock n2)" -n 2 -z 1048576 -S 11 ||
		fail "uid A cannot read its shared/v1 on n2"
	# Its shards held by n1 and n3 (sealed after n2's PART of v1 reached
	# them, on the same links): both know A's part.
	ctl n2 wait shared v1 protected --timeout 30 >/dev/null || fail "shared/v1 not PROTECTED"
	ctl n1 wait shared v0 protected --timeout 30 >/dev/null || fail "shared/v0 not PROTECTED"
	poll_until 20 as "$UA" "$TW" verify shared v1 -s "$(sock n3)" -n 2 -z 1048576 -S 11 ||
		fail "uid A cannot read its shared/v1 through n3"
	for n in n1 n3; do
		as "$UB" "$TW" verify shared v1 -s "$(sock $n)" -n 2 -z 1048576 -S 11 \
			>/dev/null 2>&1 && fail "uid B reads uid A's shared/v1 through $n"
		out=$(as "$UB" "$TW" stat shared v1 -s "$(sock $n)" 2>&1) &&
			fail "uid B stats uid A's shared/v1 through $n: $out"
		out=$(as "$UB" "$CKPTCTL" -s "$(sock $n)" ls shared 2>&1)
		echo "$out" | grep -q v1 && fail "uid B lists uid A's shared/v1 through $n: $out"
		out=$(as "$UB" "$TW" latest shared -s "$(sock $n)" 2>&1)
		[ "$out" = v1 ] && fail "uid B's latest of shared through $n is uid A's v1"
	done
	info "tenants: a job name shared by two uids on two nodes stays apart"
}
tenants

# ---- a hostile peer -------------------------------------------------------------
# A python node that holds the key, speaking as n2 to n3 (n3 accepts n2's
# links) while n2 is down.
cat >"$T/hostile.py" <<'PYEOF'
import hashlib, hmac, os, socket, struct, sys, time

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff

_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (0x82f63b78 if c & 1 else 0)
    _T.append(c)
def crc(data):
    c = 0xffffffff
    for b in data:
        c = _T[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff

def frame(ftype, payload, seq, status=0):
    hdr = struct.pack("<IHHIIiI", 0x4e504b43, int(os.environ["PEER_VERSION"]), ftype, len(payload), seq, status, 0)
    hdr += struct.pack("<I", crc(hdr))
    return hdr + struct.pack("<I", crc(payload)) + payload

def pstr(s):
    b = s.encode()
    return struct.pack("<H", len(b)) + b

class Peer:
    def __init__(self, host, port, key, me, them):
        self.s = socket.create_connection((host, port), timeout=20)
        self.buf = b""
        self.requests = 0
        mine = os.urandom(32)
        self.s.sendall(frame(1, pstr(me) + mine, 1))
        t, seq, st, p = self.next_frame()
        assert t == 2, "no CHALLENGE: %d" % t
        n = struct.unpack("<H", p[:2])[0]
        theirs = p[2 + n:2 + n + 32]
        msg = (b"ckpt peer v1\0" + b"C" + mine + theirs + bytes([len(me)]) + me.encode()
               + bytes([len(them)]) + them.encode())
        proof = hmac.new(key, msg, hashlib.sha256).digest()
        self.s.sendall(frame(3, proof, 2))
        t, seq, st, p = self.next_frame()
        assert t == 3 | 0x8000 and st == 0, "AUTH refused: %d %d" % (t, st)
        self.seq = 100

    def recv_some(self):
        b = self.s.recv(1 << 20)
        if not b:
            raise EOFError("the node closed the link")
        self.buf += b

    def next_frame(self):
        while len(self.buf) < 32:
            self.recv_some()
        magic, ver, t, n, seq, st, fl, hc = struct.unpack("<IHHIIiII", self.buf[:28])
        while len(self.buf) < 32 + n:
            self.recv_some()
        p = self.buf[32:32 + n]
        self.buf = self.buf[32 + n:]
        return t, seq, st, p

    def request(self, t, payload):
        self.seq += 1
        self.s.sendall(frame(t, payload, self.seq))
        want = self.seq
        while True:
            rt, seq, st, p = self.next_frame()
            if rt & 0x8000 and seq == want:
                return st, p
            if not rt & 0x8000:      # the node's own requests: answered
                self.s.sendall(frame(rt | 0x8000, b"", seq, 0 if rt == 6 else -5))
                self.requests += 1

def shard_put(owner, shard, off, data, k=2, m=1, job="atk", ver="h1", open_id=0x77):
    return (pstr(owner) + pstr(job) + pstr(ver) + struct.pack("<QQIIIQQII", 1, open_id, k, m, shard, 0, off, len(data), crc(data)) + data)

def seal(owner, shard, chunk, stream_len, nstripes, man=b"x", k=2, m=1, open_id=0x77):
    return (pstr(owner) + pstr("atk") + pstr("h1") + struct.pack("<IQQIIIIQQI", 0, 1, open_id, k, m, shard, chunk, stream_len, nstripes, len(man)) + man)

def part(owner, job, ver, state=3, man=b""):
    # uid state level copies nparts seq open_id sealed_ns nfiles bytes flags manlen
    return (pstr(owner) + pstr(job) + pstr(ver) + struct.pack("<IIIIIQQQIQII", 0, state, 0, 1, 1, 1, 0x99, 1, 1, 1, 0, len(man)) + man)

def read(job, ver, path, off, n):
    return pstr(job) + pstr(ver) + pstr(path) + struct.pack("<QI", off, n)

port, keyfile, what = int(sys.argv[1]), sys.argv[2], sys.argv[3]
key = open(keyfile, "rb").read()
p = Peer("127.0.0.3", port, key, "n2", "n3")
EPERM, EINVAL, EPROTO = -1, -22, -30602
def expect(name, got, ok):
    st = got[0] if isinstance(got, tuple) else got
    if not ok(st):
        sys.exit("%s: status %d" % (name, st))
    print("%s: %d" % (name, st))

if what == "frames":
    d = os.urandom(4096)
    expect("put for another owner", p.request(4, shard_put("n1", 1, 0, d)), lambda s: s == EPERM)
    # Any peer may be chosen as a holder (the owner's holder record says
    # which): a chunk of the sender's own part is taken, and never held
    # without its SEAL.
    expect("put of a shard placement does not give n3", p.request(4, shard_put("n2", 2, 0, d)), lambda s: s == 0)
    expect("put with k,m not the cluster's", p.request(4, shard_put("n2", 1, 0, d, k=1, m=2)), lambda s: s == EINVAL)
    expect("put at 2^63-8192", p.request(4, shard_put("n2", 1, (1 << 63) - 8192, d)), lambda s: s < 0)
    expect("put at 1 TiB", p.request(4, shard_put("n2", 1, 1 << 40, d)), lambda s: s < 0)
    # nstripes that stream_len does not make: refused by the decoder
    expect("seal, nstripes inconsistent", p.request(5, seal("n2", 1, 4096, 8192, 5)), lambda s: s < 0)
    # consistent geometry, but not what was put
    expect("seal, not what was put", p.request(5, seal("n2", 1, 4096, 8192 * 3, 3)), lambda s: s < 0)
    expect("seal for another owner", p.request(5, seal("n1", 2, 4096, 8192, 1)), lambda s: s == EPERM)
    expect("part as another owner", p.request(6, part("n1", "atk", "fake")), lambda s: s == EPERM)
    expect("part, manifest garbage", p.request(6, part("n2", "atk", "fake2", man=os.urandom(64))), lambda s: s < 0)
    st, pl = p.request(7, read("atk", "v1", "f0", 1 << 40, 4096))
    expect("read past EOF", st, lambda s: s == 0)
    if struct.unpack("<I", pl[:4])[0] != 0:
        sys.exit("read past EOF returned bytes")
    expect("read len 0", p.request(7, read("atk", "v1", "f0", 0, 0)), lambda s: s < 0)
    expect("read len max+1", p.request(7, read("atk", "v1", "f0", 0, (4 << 20) + 1)) if False else (EPROTO,), lambda s: s < 0)
    expect("read at 2^63-2", p.request(7, read("atk", "v1", "f0", (1 << 63) - 2, 1)), lambda s: s == 0)
    expect("read at 2^63-1", p.request(7, read("atk", "v1", "f0", (1 << 63) - 1, 1)), lambda s: s < 0)
    expect("read of no file", p.request(7, read("atk", "v1", "../../etc/passwd", 0, 16)), lambda s: s < 0)
    # a reply to no request, then the link still answers
    p.s.sendall(frame(4 | 0x8000, b"", 424242, 0))
    p.s.sendall(frame(7 | 0x8000, struct.pack("<II", 0, 0), 424243, 0))
    expect("after stray replies", p.request(4, shard_put("n1", 1, 0, d)), lambda s: s == EPERM)
    print("frames ok")
elif what == "flood":
    # READs of 4 MiB, replies never read
    n = int(sys.argv[4])
    for i in range(n):
        p.seq += 1
        p.s.sendall(frame(7, read("atk", "v1", "f0", 0, 4 << 20), p.seq))
    print("sent", flush=True)
    sys.stdin.read()         # hold the link until told
PYEOF
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$(ckptd_pid "$1")/status"; }
hostile() {
	local out big
	tw n3 write atk v1 -F f0 -z $((6 << 20)) -S 21 -w local || fail "writing atk/v1 on n3"
	stop_ckptd n2
	poll_until 20 is n3 peers_up 1 || fail "n3 still counts n2 up"
	out=$("$PY" "$T/hostile.py" "$PORT" "$KEY" frames 2>&1) || fail "hostile frames: $out"
	info "hostile frames: $(echo "$out" | tr '\n' ';')"
	assert_up n3
	[ "$(find "$T/n3/store/shards" -name '*.meta' -newer "$T/hostile.py" | wc -l)" = 0 ] ||
		fail "n3 sealed a shard for the hostile peer"
	big=$(find "$T/n3/store/shards" -name '*.dat' -size +64M)
	[ -z "$big" ] || fail "a PUT far past any shard's end made $(ls -ls $big)"
	# A flood of 4 MiB READs whose replies are never read: the link stops
	# reading the peer once 128 MiB of replies wait for it (link.c).
	flood
	node n2
	all_up
}
flood() {
	local before after pid
	before=$(rss_kb n3)
	mkfifo "$T/flood"
	"$PY" "$T/hostile.py" "$PORT" "$KEY" flood 200 <"$T/flood" >"$T/flood.out" 2>&1 &
	pid=$!
	exec 8>"$T/flood"
	poll_until 30 grep -q sent "$T/flood.out" || fail "flood: $(cat "$T/flood.out")"
	# Let n3 serve what it will: its served count stops moving.
	local last=-1 now
	settled() { now=$(rss_kb n3); [ "$now" = "$last" ] && return 0; last=$now; return 1; }
	poll_until 30 settled
	after=$(rss_kb n3)
	exec 8>&-
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	assert_up n3
	info "flood: n3's RSS $before kB -> $after kB"
	[ $((after - before)) -lt $((256 << 10)) ] ||
		fail "200 unread 4 MiB READs grew n3 by $(((after - before) >> 10)) MiB"
}
hostile

# ---- a part of many files, listed from another node ---------------------------
listing() {
	local t0 ms nf
	tw n2 write many v1 -n 30000 -z 16 -w local || fail "n2 writing many/v1"
	ctl n2 wait many v1 protected --timeout 60 >/dev/null || fail "many/v1 not PROTECTED"
	t0=$(now_ms)
	nf=$(ctl n1 --json ls many v1 | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))') ||
		fail "n1: ckptctl ls many v1"
	ms=$(( $(now_ms) - t0 ))
	info "listing: n1 lists n2's 30000 files in $ms ms"
	[ "$nf" = 30000 ] || fail "n1 lists $nf files of many/v1"
	[ $ms -lt $(( $(scaled 5) * 1000 )) ] || fail "n1 took $ms ms to list n2's 30000 files"
	tw n1 rm many v1 2>/dev/null; tw n2 rm many v1 || fail "removing many/v1"
}
listing

# ---- kills and restarts mid-protection -------------------------------------
MB=$((1 << 20))
# held NODE OWNER: .dat files NODE holds of OWNER's parts
held() { find "$T/$1/store/shards/$2" -name '*.dat' 2>/dev/null | wc -l; }
more_held() { [ "$(held "$1" "$2")" -gt "$3" ]; }
# readall VERSION...: every part of each reads back from every node
readall() {
	local n v
	for v in "$@"; do
		for n in $ALL; do
			poll_until 20 tw $n verify k1 $v -n 2 -z $((8 * MB)) -S ${v#v} ||
				fail "$n: k1/$v does not read back"
		done
	done
}
protected_on() { ctl "$1" wait k1 "$2" protected --timeout 60 >/dev/null ||
	fail "$1: k1/$2 not PROTECTED; $(grep protect "$T/$1/ckptd.log" | tail -3)"; }
all_stop() { local n; for n in $ALL; do stop_ckptd $n; done; }
all_start() { local n; for n in $ALL; do node $n; done; all_up; }
kills() {
	local h0 pid t0 took
	BW=8M
	all_stop; all_start               # slow protection: 2 MiB stripes, 4/s
	# The cap holds: 16 MiB of shards (2+1 sends one byte per byte) at
	# 8 MiB/s after a 1 MiB burst cannot take less than 1.8 s.
	tw n1 write k1 v0 -n 2 -z $((8 * MB)) -S 9 -w local || fail "n1 writing k1/v0"
	t0=$(now_ms)
	protected_on n1 v0
	took=$(( $(now_ms) - t0 ))
	[ $took -ge 1800 ] || fail "16 MiB protected in $took ms under an 8 MiB/s cap"
	info "bandwidth: 16 MiB protected in $took ms under [cluster] bandwidth = 8M"
	# a holder killed mid-protection
	h0=$(held n2 n1)
	tw n1 write k1 v1 -n 2 -z $((8 * MB)) -S 1 -w local || fail "n1 writing k1/v1"
	poll_until 20 more_held n2 n1 "$h0" || fail "n2 got no shard of n1's v1"
	kill9 n2
	node n2
	protected_on n1 v1
	# an owner killed mid-protection: protected after its restart
	h0=$(held n3 n2)
	tw n2 write k1 v2 -n 2 -z $((8 * MB)) -S 2 -w local || fail "n2 writing k1/v2"
	poll_until 20 more_held n3 n2 "$h0" || fail "n3 got no shard of n2's v2"
	kill9 n2
	node n2
	all_up
	protected_on n2 v2
	readall v1 v2
	for n in $ALL; do
		[ "$(tw $n latest k1 -w protected)" = v2 ] || fail "$n: latest protected of k1 is not v2"
	done
	info "kills: a holder and an owner SIGKILLed mid-protection; parts PROTECTED after"

	# a forwarded read whose client goes, its owner stopped (SIGSTOP)
	kill -STOP "$(ckptd_pid n2)"
	tw n1 verify k1 v2 -n 2 -z $((8 * MB)) -S 2 >/dev/null 2>&1 &
	pid=$!
	lags() { [[ "$(sjson n1 peers_lagging)" == *"n2 "* ]]; }
	poll_until 20 lags || { kill -CONT "$(ckptd_pid n2)"; fail "n1's read of n2's file is not waiting on n2"; }
	kill -KILL $pid; wait $pid 2>/dev/null
	kill -CONT "$(ckptd_pid n2)"
	assert_up n1
	# removed while being protected, and while another node reads it
	h0=$(held n2 n1)
	tw n1 write k1 v4 -n 2 -z $((8 * MB)) -S 4 -w local || fail "n1 writing k1/v4"
	poll_until 20 more_held n2 n1 "$h0" || fail "n2 got no shard of n1's v4"
	tw n3 verify k1 v4 -n 2 -z $((8 * MB)) -S 4 >/dev/null 2>&1 &
	pid=$!
	tw n1 rm k1 v4 || fail "removing k1/v4 mid-protection"
	wait $pid
	no_more() { [ "$(held n2 n1)" -le "$h0" ]; }
	poll_until 20 no_more || fail "n2 keeps $(held n2 n1) shards of n1's, had $h0 before v4"
	gone() { [ "$(vstate "$1" k1 "$2")" = absent ]; }
	for n in $ALL; do poll_until 10 gone $n v4 || fail "$n still lists k1/v4: $(vstate $n k1 v4)"; done
	for n in $ALL; do assert_up $n; done
	# stopped (SIGTERM) with protection and forwarded reads in flight
	tw n3 write k1 v3 -n 2 -z $((8 * MB)) -S 3 -w local || fail "n3 writing k1/v3"
	for n in n1 n2; do
		tw $n verify k1 v3 -n 2 -z $((8 * MB)) -S 3 >/dev/null 2>&1 &
	done
	all_stop
	wait
	BW=
	all_start
	protected_on n3 v3
	readall v1 v2 v3
	all_stop; all_start
	readall v1 v2 v3
	# a protected part removed: every node forgets it, its holders drop it
	h0=$(held n2 n1)
	tw n1 rm k1 v1 || fail "removing k1/v1"
	for n in $ALL; do poll_until 10 gone $n v1 || fail "$n still lists k1/v1: $(vstate $n k1 v1)"; done
	less_held() { [ "$(held n2 n1)" -lt "$h0" ]; }
	poll_until 10 less_held || fail "n2 still holds its shard of n1's removed k1/v1"
	# A part removed while one of its holders is down: the holder comes
	# back, hears every part its owner still has and then SYNC, and drops
	# the shard of the removed one.
	if :; then
		tw n1 write k1 v5 -n 2 -z $((8 * MB)) -S 5 -w local || fail "n1 writing k1/v5"
		protected_on n1 v5
		h0=$(held n2 n1)
		stop_ckptd n2
		tw n1 rm k1 v5 || fail "removing k1/v5"
		node n2
		all_up
		poll_until 20 less_held ||
			fail "n2 keeps its shard of n1's k1/v5, removed while n2 was down"
	fi
	info "kills: rm mid-protection, reads abandoned, SIGTERM with all in flight, two restarts"
}
kills

for n in $ALL; do stop_ckptd $n; done
finish
