#!/bin/bash
# t_cluster_links: three ckptd nodes on 127.0.0.1-3 (ec 2+1, one group)
# make authenticated links to each other, and nothing else gets in.
#  - every node reports its 2 peers up (ckptctl status --json);
#  - an impostor that knows the protocol but not the key (a Python client:
#    HELLO as n1 to n3, then an AUTH with a wrong proof) is refused, gets no
#    AUTH reply, and the real n1-n3 link stays up;
#  - garbage, a frame with a bad header CRC, a truncated frame, an oversized
#    length with a good header CRC, and a HELLO naming a stranger, each on
#    its own connection to every node: refused, nodes stay up, links stay;
#  - a node started with another key never gets a link (0 peers up), and
#    the others log that it does not hold the cluster key;
#  - n2 killed with SIGKILL: n1 and n3 see it down; restarted, its links
#    come back (reconnect with backoff);
#  - a key file readable by others is refused at start, clearly;
#  - nodes = slurm: three nodes from SLURM_JOB_NODELIST=127.0.0.[1-3] link
#    up; a malformed list is refused at start, clearly.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is missing"
PORT=$(random_port)
KEY=$T/cluster.key
BADKEY=$T/other.key
head -c 48 /dev/urandom >"$KEY"
head -c 48 /dev/urandom >"$BADKEY"
chmod 600 "$KEY" "$BADKEY"
S=$(short_dir)
SHORT_DIRS+=("$S")   # short_dir ran in a subshell
NODES=$S/nodes
cat >"$NODES" <<NODES
# the test cluster
n1 127.0.0.1:$PORT rackA
n2 127.0.0.2:$PORT rackB
n3 127.0.0.3:$PORT rackC
NODES

node() {    # NAME [KEYFILE]: configure and start node NAME
	ckptd_conf "$1"
	start_ckptd "$1" -o "cluster.node=$1" -o "cluster.nodes=$NODES" \
		-o cluster.ec=2+1 -o "cluster.key=${2:-$KEY}"
}

peers_up() {    # NAME: peers up, from ckptctl status --json
	ctl "$1" --json status 2>/dev/null |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["peers_up"])'
}
up_is() { [ "$(peers_up "$1")" = "$2" ]; }

node n1
node n2
node n3
for n in n1 n2 n3; do
	poll_until 30 up_is $n 2 || fail "$n: $(peers_up $n) of 2 peers up; log: $(tail -5 "$T/$n/ckptd.log")"
done
ctl n1 status | grep -q "cluster   node n1: 2 of 2 peers up" ||
	fail "ckptctl status does not show the cluster: $(ctl n1 status)"

# The attacks, from Python: frames built by hand (CRC32C written out).
cat >"$T/attack.py" <<'PYEOF'
import os, socket, struct, sys

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff

def frame(ftype, payload, seq=1, status=0, length=None):
    n = len(payload) if length is None else length
    hdr = struct.pack("<IHHIIiI", 0x4e504b43, int(os.environ["PEER_VERSION"]), ftype, n, seq, status, 0)
    hdr += struct.pack("<I", crc32c(hdr))
    return hdr + struct.pack("<I", crc32c(payload)) + payload

def pstr(s):
    b = s.encode()
    return struct.pack("<H", len(b)) + b

def read_to_close(s, what):
    """Everything the node sends until it closes; exits if it does not."""
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return got
            got += b
    except socket.timeout:
        sys.exit(what)

def talk(addr, data):
    s = socket.create_connection(addr, timeout=10)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = read_to_close(s, "the node neither answered nor closed in 10 s")
    s.close()
    return got

port = int(sys.argv[1])
what = sys.argv[2]
host = sys.argv[3]
addr = (host, port)
if what == "impostor":
    # HELLO as n1 (who may connect to n3); the CHALLENGE comes; then an
    # AUTH whose proof was made without the key.
    s = socket.create_connection(addr, timeout=10)
    s.sendall(frame(1, pstr("n1") + os.urandom(32)))
    hdr = s.recv(32, socket.MSG_WAITALL)
    if len(hdr) != 32 or struct.unpack("<H", hdr[6:8])[0] != 2:
        sys.exit("no CHALLENGE after a good HELLO")
    n = struct.unpack("<I", hdr[8:12])[0]
    s.recv(n, socket.MSG_WAITALL)
    s.sendall(frame(3, os.urandom(32)))
    rest = read_to_close(s, "the node kept the impostor's link open")
    if rest:
        sys.exit("the impostor got an answer to its AUTH: %r" % rest[:40])
    print("impostor refused")
else:
    cases = {
        "garbage": os.urandom(3000),
        "badhcrc": bytearray(frame(1, pstr("n1") + os.urandom(32))),
        "truncated": frame(1, pstr("n1") + os.urandom(32))[:40],
        "oversized": frame(1, b"", length=64 << 20),
        "stranger": frame(1, pstr("n9") + os.urandom(32)),
        "early-auth": frame(3, os.urandom(32)),
    }
    cases["badhcrc"][20] ^= 1
    for name, data in cases.items():
        got = talk(addr, bytes(data))
        if got:
            sys.exit("%s: the node answered %r" % (name, got[:40]))
    print("all refused")
PYEOF
out=$("$PY" "$T/attack.py" "$PORT" impostor 127.0.0.3 2>&1) || fail "impostor: $out"
for ip in 127.0.0.1 127.0.0.2 127.0.0.3; do
	out=$("$PY" "$T/attack.py" "$PORT" garbage $ip 2>&1) || fail "garbage to $ip: $out"
done
for n in n1 n2 n3; do
	assert_up $n
	up_is $n 2 || fail "$n lost a link to the attacks: $(peers_up $n) up"
done
grep -q "does not hold the cluster key" "$T/n3/ckptd.log" ||
	fail "n3 did not log the impostor"

# n2 dies: the others see it; it comes back and so do its links.
kill9 n2
poll_until 30 up_is n1 1 || fail "n1 still counts n2 up"
poll_until 30 up_is n3 1 || fail "n3 still counts n2 up"
grep -q "peer n2 down" "$T/n1/ckptd.log" "$T/n3/ckptd.log" || fail "n2's loss was not logged"
node n2
for n in n1 n2 n3; do
	poll_until 30 up_is $n 2 || fail "after n2's restart, $n: $(peers_up $n) of 2 up"
done

# A node with another key never gets in.
stop_ckptd n3
node n3 "$BADKEY"
poll_until 30 grep -q "does not hold the cluster key" "$T/n1/ckptd.log" "$T/n2/ckptd.log" ||
	fail "a node with another key was not refused"
up_is n3 0 || fail "n3 with another key has $(peers_up n3) peers up"
poll_until 30 up_is n1 1 || fail "n1 counts the node with another key up"
stop_ckptd n3

# A key file others may read: refused at start.
chmod 644 "$KEY"
ckptd_conf n4
if "$CKPTD" -c "$T/n4/ckptd.conf" -o cluster.node=n3 -o "cluster.nodes=$NODES" \
	-o cluster.ec=2+1 -o "cluster.key=$KEY" >"$T/n4.log" 2>&1; then
	fail "ckptd started with a key file others can read"
fi
grep -q "refused: readable or writable by group or others" "$T/n4.log" ||
	fail "no clear message for a bad key file: $(cat "$T/n4.log")"
chmod 600 "$KEY"

stop_ckptd n1
stop_ckptd n2

# nodes = slurm: the node list from SLURM_JOB_NODELIST (Slurm's hostlist
# syntax), every host a node at [cluster] port.  Numeric host names, so that
# nothing needs resolving.
SPORT=$(( PORT + 1 ))
for i in 1 2 3; do
	ckptd_conf s$i
	SLURM_JOB_NODELIST="127.0.0.[1-3]" start_ckptd s$i \
		-o "cluster.node=127.0.0.$i" -o cluster.nodes=slurm \
		-o cluster.ec=2+1 -o "cluster.key=$KEY" -o "cluster.port=$SPORT"
done
for i in 1 2 3; do
	poll_until 30 up_is s$i 2 || fail "nodes = slurm: s$i has $(peers_up s$i) of 2 peers up"
done
ctl s2 status | grep -q "cluster   node 127.0.0.2: 2 of 2 peers up" ||
	fail "nodes = slurm: $(ctl s2 status)"
for i in 1 2 3; do stop_ckptd s$i; done
# A node list that does not expand: a clear error at start.
ckptd_conf s4
if SLURM_JOB_NODELIST="gpu[1-" "$CKPTD" -c "$T/s4/ckptd.conf" -o cluster.node=gpu1 \
	-o cluster.nodes=slurm -o "cluster.key=$KEY" >"$T/s4.log" 2>&1; then
	fail "ckptd started with a malformed SLURM_JOB_NODELIST"
fi
grep -q "SLURM_JOB_NODELIST 'gpu\[1-'" "$T/s4.log" || fail "no clear message: $(cat "$T/s4.log")"
exit 0
