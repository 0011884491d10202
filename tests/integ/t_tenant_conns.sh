#!/bin/bash
# t_tenant_conns: one unprivileged uid opening connections by the hundred
# must not hurt ckptd, root or another uid.  ckptd runs with a low open
# files limit (prlimit) so that a few hundred connections reach EMFILE.
#  limit: max_conns_per_uid = 32, nofile 128.  uid A holds 200 idle
#      connections: 32 are served, the other 168 are refused with EUSERS
#      (the client reads the reason; ckptctl as A says "Too many users");
#      root's and uid B's `ckptctl status` answer within 5 s; ckptd's CPU
#      stays low and its log small.
#  emfile: no per-uid limit, nofile 64.  uid A opens 300 connections: ckptd
#      runs out of descriptors, refuses what waits with EMFILE and pauses
#      accepting instead of spinning: over 2 s its CPU time grows by well
#      under one core, its log stays small, and once A lets go root's status
#      answers again.
# Two uids are made with useradd and removed (userdel -r) in the cleanup.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null && command -v setpriv >/dev/null &&
	command -v prlimit >/dev/null || skip "needs useradd, setpriv and prlimit"
[ "$(id -u)" = 0 ] || skip "needs root (useradd)"
has_ctl || skip "ckptctl is not built"

UA=ckta$$ UB=cktb$$
test_users "$UA" "$UB"
chmod 755 "$T"

# python3 -c "$HOLD" N SOCKET: open N connections (8 s at most), then print "served S refused R emfile E other O" once every refused
# connection has said why (or 3 s passed), and hold them until stdin closes.
HOLD='
import os, select, socket, struct, sys, time
n, path = int(sys.argv[1]), sys.argv[2]
socks, t0 = [], time.time()
for i in range(n):
    if time.time() - t0 > 8: break
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # A full backlog blocks connect until ckptd accepts, up to the deadline:
    # SO_SNDTIMEO, since a Python socket timeout makes the connect non-blocking,
    # and an AF_UNIX connect then fails at once with EAGAIN.
    left = max(0.001, 8 - (time.time() - t0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                 struct.pack("ll", int(left), int(left % 1 * 1e6)))
    try: s.connect(path)
    except OSError: break                     # the deadline (EAGAIN), or worse
    s.setblocking(False)
    socks.append(s)
why = {}
t1 = time.time()
while time.time() - t1 < 3 and len(why) < len(socks):
    r, _, _ = select.select([s for s in socks if s not in why], [], [], 0.2)
    for s in r:
        try: b = s.recv(64)
        except OSError: b = b""
        # seq 0, status < 0: a refusal (header: magic, ver, type, len, seq, status)
        why[s] = -struct.unpack("<i", b[16:20])[0] if len(b) >= 24 else 0
refused = {}
for e in why.values(): refused[e] = refused.get(e, 0) + 1
import errno
sys.stdout.write("served %d refused %d emfile %d other %d\n" % (len(socks) - len(why),
    refused.get(errno.EUSERS, 0), refused.get(errno.EMFILE, 0),
    sum(v for k, v in refused.items() if k not in (errno.EUSERS, errno.EMFILE))))
sys.stdout.flush()
sys.stdin.read()
'

cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
root_status() { timeout 5 "$CKPTCTL" -s "$(sock d)" status >"$T/st.out" 2>&1; }

# cpu_ok PID: over a 2 s window ckptd used less than half a core.
cpu_ok() {
	local pid=$1 a b t0 t1 hz
	hz=$(getconf CLK_TCK)
	a=$(cpu_ticks "$pid"); t0=$(now_ms)
	poll_until 5 _elapsed "$t0" 2000
	b=$(cpu_ticks "$pid"); t1=$(now_ms)
	info "ckptd CPU: $(((b - a) * 1000 / hz)) ms in $((t1 - t0)) ms"
	(((b - a) * 1000 / hz * 2 < t1 - t0)) || fail "ckptd used $(((b - a) * 1000 / hz)) ms of CPU in $((t1 - t0)) ms"
}
_elapsed() { (($(now_ms) - $1 >= $2)); }
log_ok() {
	local sz
	sz=$(stat -c %s "$T/d/ckptd.log")
	info "ckptd log: $sz bytes"
	((sz < 200000)) || fail "ckptd log grew to $sz bytes"
}

# ---- limit -----------------------------------------------------------------
ckptd_conf d max_conns_per_uid=32
start_ckptd d
PID=$(ckptd_pid d)
prlimit --pid "$PID" --nofile=128:128 || fail "prlimit failed"
mkfifo "$T/hold"; chmod 666 "$T/hold"
as "$UA" /usr/bin/python3 -c "$HOLD" 200 "$(sock d)" <"$T/hold" >"$T/held" &
HPID=$!
exec 9>"$T/hold"
poll_until 20 grep -q served "$T/held" || fail "uid A's connections did not settle"
info "uid A: $(cat "$T/held")"
read -r _ served _ refused _ emfile _ other <"$T/held"
[ "$served" = 32 ] || fail "uid A has $served connections served, want 32 (max_conns_per_uid)"
[ "$refused" = 168 ] || fail "uid A had $refused connections refused with EUSERS, want 168"
root_status || fail "root's ckptctl status got no answer: $(cat "$T/st.out")"
as "$UB" timeout 5 "$CKPTCTL" -s "$(sock d)" status >"$T/b.out" 2>&1 ||
	fail "uid B's ckptctl status failed: $(cat "$T/b.out")"
as "$UA" timeout 5 "$CKPTCTL" -s "$(sock d)" status >"$T/a.out" 2>&1 &&
	fail "uid A's 33rd connection was served"
grep -q "Too many users" "$T/a.out" || fail "uid A's refused ckptctl says: $(cat "$T/a.out")"
grep -q "refused: Too many users (max_conns_per_uid 32)" "$T/d/ckptd.log" ||
	fail "ckptd did not log the refusals"
cpu_ok "$PID"
log_ok
exec 9>&-
wait "$HPID"
stop_ckptd d
info "limit: 32 served, 168 refused (EUSERS); root and uid B answered"

# ---- emfile ----------------------------------------------------------------
ckptd_conf e max_conns_per_uid=0
start_ckptd e
PID=$(ckptd_pid e)
prlimit --pid "$PID" --nofile=64:64 || fail "prlimit failed"
sock() { echo "$T/e/ckptd.sock"; }
rm -f "$T/hold" "$T/held"; mkfifo "$T/hold"; chmod 666 "$T/hold"
as "$UA" /usr/bin/python3 -c "$HOLD" 300 "$T/e/ckptd.sock" <"$T/hold" >"$T/held" &
HPID=$!
exec 9>"$T/hold"
poll_until 30 grep -q served "$T/held" || fail "uid A's connections did not settle"
info "uid A: $(cat "$T/held")"
read -r _ served _ refused _ emfile _ other <"$T/held"
((emfile > 0)) || fail "no connection was refused with EMFILE"
poll_until 10 grep -q "accept: Too many open files with" "$T/e/ckptd.log" ||
	fail "ckptd did not log running out of descriptors"
alive "$PID" || fail "ckptd died"
cpu_ok "$PID"
sz=$(stat -c %s "$T/e/ckptd.log")
((sz < 200000)) || fail "ckptd log grew to $sz bytes"
exec 9>&-
wait "$HPID"
_root_e() { timeout 5 "$CKPTCTL" -s "$T/e/ckptd.sock" status >"$T/st.out" 2>&1; }
poll_until 10 _root_e || fail "root's status does not answer after uid A let go: $(cat "$T/st.out")"
stop_ckptd e
info "emfile: accept backed off (refused $emfile with EMFILE), CPU and log bounded, recovered"
