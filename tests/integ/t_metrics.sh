#!/bin/bash
# t_metrics: the Prometheus endpoint ([ckptd] metrics) and writer stalls.
#
# Two writers share one version; the second waits for staging while the
# first holds all of it, so it stalls and the first does not.  Then:
#  - ckptd logs the second as a straggler, with its pid, rank and cause;
#  - `ckptctl ls JOB VER` (and --json) shows p50/p99/max and the slowest
#    writer's pid, host and rank (from SLURM_PROCID in its environment);
#  - a curl scrape of /metrics shows the counters moved: versions and bytes
#    per level, absorbed bytes, the stall and time-to-level histograms;
#  - hostile HTTP (garbage, POST, a huge URL, unknown paths) gets an error or
#    a closed connection, and ckptd keeps serving;
#  - the first scrape after start has real values (the staging budget);
#  - a bad `metrics` address is refused at start-up.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"

has_ctl || skip "ckptctl is not built"
command -v curl >/dev/null || skip "curl is not installed"
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
JOB=metrics/job

ckptd_conf d staging=16M staging_client=16M metrics=127.0.0.1:0 \
	straggler_factor=4
start_ckptd d
port=$(sed -n 's|.*metrics: serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' \
	"$T/d/ckptd.log" | tail -1)
[ -n "$port" ] || fail "no 'metrics: serving' line in the log"
URL=http://127.0.0.1:$port/metrics

scrape() { curl -sS --max-time 5 "$URL"; }
# metric NAME{LABELS}: its value in a fresh scrape ("" if absent).
metric() {
	scrape | awk -v k="$1" '$1 == k { print $2; exit }'
}
metric_ge() { local v; v=$(metric "$1"); [ -n "$v" ] && awk -v v="$v" -v w="$2" 'BEGIN { exit !(v >= w) }'; }

out=$(scrape) || fail "scrape failed"
# The first scrape after start has real values, not zeros: the staging
# budget is known before ckptd says it is ready (16 MiB here).
first=$(awk '$1 == "ckpt_staging_bytes" { print $2 }' <<<"$out")
[ "$first" = 16777216 ] || fail "the first scrape gives ckpt_staging_bytes '$first', not 16777216"
grep -q '^# TYPE ckpt_writer_stall_seconds histogram' <<<"$out" ||
	fail "no stall histogram in: $(head -5 <<<"$out")"
[ "$(metric 'ckpt_versions_total{level="local"}')" = 0 ] ||
	fail "versions at local before any write: $(metric 'ckpt_versions_total{level="local"}')"

# ---- a straggler ----------------------------------------------------------------
mkfifo "$T/go"
SLURM_PROCID=0 tw d write "$JOB" v1 -r 0 -n 1 -z 1048576 -S 3 -p \
	<"$T/go" >"$T/a.out" 2>"$T/a.err" &
apid=$!
exec 9>"$T/go"
poll_until 20 grep -q paused "$T/a.out" || fail "writer A never paused: $(cat "$T/a.err")"
# B joins, and waits for staging that A holds.
SLURM_PROCID=7 "$TW" write -s "$(sock d)" "$JOB" v1 -r 1 -n 1 -z 1048576 -S 3 \
	-w local 9>&- >"$T/b.out" 2>"$T/b.err" &
bpid=$!
poll_until 20 grep -q "pid $bpid uid [0-9]* waits" "$T/d/ckptd.log" ||
	fail "writer B never waited for staging: $(cat "$T/b.err")"
# The stall under test is this hold: A keeps the staging for 300 ms more
# (well over the 10 ms a straggler needs), while B is seen still waiting.
t0=$(now_ms)
held() { alive "$bpid" || fail "writer B ended while A held the staging: $(cat "$T/b.err")"; (($(now_ms) - t0 >= 300)); }
poll_until 10 held || fail "could not hold the staging for 300 ms"
exec 9>&-                       # A commits and leaves; B gets the staging
wait "$apid" || fail "writer A failed: $(cat "$T/a.err")"
wait "$bpid" || fail "writer B failed: $(cat "$T/b.err")"

grep -q "version $JOB/v1: straggler: pid $bpid rank 7 .*cause: staging full" "$T/d/ckptd.log" ||
	fail "no straggler line for pid $bpid: $(grep -i stragg "$T/d/ckptd.log")"
grep -q "straggler: pid $apid" "$T/d/ckptd.log" && fail "writer A logged as a straggler"

out=$(ctl d ls "$JOB" v1) || fail "ckptctl ls failed"
grep -q "writer stall over 2 writers: p50 .*, p99 .*, max .* (slowest: pid $bpid on $(hostname), rank 7)" <<<"$out" ||
	fail "ckptctl ls shows no stall line: $out"
ctl d --json ls "$JOB" v1 | $PY -c '
import json, sys
s = json.load(sys.stdin)["info"]["stall"]
pid = int(sys.argv[1])
assert s["writers"] == 2, s
assert s["slowest"]["pid"] == pid and s["slowest"]["rank"] == 7, s
assert s["max_ns"] >= s["p99_ns"] >= s["p50_ns"], s
assert s["max_ns"] >= 10**7, s
' "$bpid" || fail "ckptctl --json ls: wrong stall: $(ctl d --json ls "$JOB" v1)"

# ---- the counters moved (published once a second) --------------------------------
poll_until 10 metric_ge 'ckpt_versions_total{level="local"}' 1 ||
	fail "ckpt_versions_total{level=\"local\"} did not reach 1: $(scrape | grep versions_total)"
for want in 'ckpt_versions_total{level="staged"} 1' \
	    'ckpt_version_bytes_total{level="local"} 2097152' \
	    'ckpt_writer_stall_seconds_count 2' \
	    'ckpt_stragglers_total 1' \
	    'ckpt_time_to_level_seconds_count{level="local"} 1' \
	    'ckpt_last_version_writers 2' \
	    'ckpt_cluster_peers 0' 'ckpt_cluster_peers_up 0'; do
	v=$(metric "${want% *}")
	[ "$v" = "${want##* }" ] || fail "${want% *} is '$v', want ${want##* }"
done
k="ckpt_last_version_slowest_writer_stall_seconds{job=\"$JOB\",version=\"v1\",host=\"$(hostname)\",pid=\"$bpid\",rank=\"7\"}"
metric_ge "$k" 0.01 || fail "no slowest writer series $k: $(scrape | grep slowest)"
metric_ge ckpt_absorbed_bytes_total 2097152 ||
	fail "ckpt_absorbed_bytes_total: $(metric ckpt_absorbed_bytes_total)"
metric_ge 'ckpt_last_version_writer_stall_seconds{quantile="1"}' 0.01 ||
	fail "stall max: $(metric 'ckpt_last_version_writer_stall_seconds{quantile="1"}')"
# The histogram is cumulative and ends at its count.
scrape | awk '/^ckpt_writer_stall_seconds_bucket/ { v = $2; if (v < last) bad = 1; last = v }
	END { exit bad || last != 2 }' || fail "stall buckets not cumulative: $(scrape | grep stall_seconds_bucket)"

# The Grafana dashboard (config/grafana-ckpt.json) is JSON and asks only for
# metrics ckptd serves.
scrape >"$T/scrape.txt"
$PY - "$ROOT/config/grafana-ckpt.json" "$T/scrape.txt" <<'PYEOF' || fail "the Grafana dashboard does not match the metrics"
import json, re, sys
dash = json.load(open(sys.argv[1]))
served = {l.split("{")[0].split()[0] for l in open(sys.argv[2]) if l[0] != "#"}
asked = set()
for p in dash["panels"]:
    for t in p["targets"]:
        asked |= set(re.findall(r"\bckpt_[a-z0-9_]+", t["expr"]))
missing = sorted(asked - served)
assert asked and not missing, "not served: %s" % missing
PYEOF

# ---- hostile HTTP ---------------------------------------------------------------
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
[ "$(code -X POST -d x "$URL")" = 405 ] || fail "POST /metrics: $(code -X POST -d x "$URL")"
[ "$(code "http://127.0.0.1:$port/")" = 404 ] || fail "GET /: not 404"
[ "$(code "http://127.0.0.1:$port/metrics/../etc/passwd")" = 404 ] || fail "GET traversal: not 404"
long=$(head -c 100000 /dev/zero | tr '\0' a)
c=$(code "http://127.0.0.1:$port/$long")
case $c in 4*|000) ;; *) fail "a 100 KB URL got $c" ;; esac
for junk in 'GARBAGE\r\n\r\n' '\x00\x01\x02\xff\r\n\r\n' 'GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n' \
	    'GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n' 'GET'; do
	timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$port"'; printf "'"$junk"'" >&3; exec 3>&-' 2>/dev/null
done
assert_up d
[ "$(code "$URL")" = 200 ] || fail "no longer serving after hostile requests"
# 100 connections that never finish their request (slowloris): the HTTP
# thread holds them (its limits refuse the rest), the loop does not notice,
# and once they go the endpoint serves again.
$PY - "$port" "$(sock d)" "$CKPTCTL" <<'PYEOF' || fail "ckptd stalled while HTTP connections hung"
import socket, subprocess, sys, time
port, sock, ctl = int(sys.argv[1]), sys.argv[2], sys.argv[3]
conns = []
for _ in range(100):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    except OSError:
        pass
t0 = time.monotonic()
subprocess.run([ctl, "-s", sock, "status"], check=True, stdout=subprocess.DEVNULL, timeout=10)
assert time.monotonic() - t0 < 2, "ckptctl status took %.1f s" % (time.monotonic() - t0)
for s in conns:
    s.close()
PYEOF
poll_until 15 out_is 200 code "$URL" || fail "not serving after the hung connections closed"
assert_up d

# ---- names are any bytes; the exposition is UTF-8 --------------------------------
# A version whose job name is not UTF-8 becomes the newest sealed version:
# its name is a label value, which Prometheus refuses ("invalid UTF-8 label
# value") and with it the whole scrape.  Invalid bytes are written as U+FFFD.
BADJOB=$'metrics/bad\xff\xc3name'
tw d write "$BADJOB" v2 -r 0 -n 1 -z 4096 -S 5 -w local >/dev/null 2>"$T/bad.err" ||
	fail "writing $BADJOB failed: $(cat "$T/bad.err")"
poll_until 10 bash -c "curl -sS --max-time 5 '$URL' | LC_ALL=C grep -aq 'slowest_writer.*version=\"v2\"'" ||
	fail "the slowest writer of v2 never shows: $(scrape | grep -a slowest)"
scrape >"$T/scrape2.txt"
$PY - "$T/scrape2.txt" <<'PYEOF' || fail "the scrape is not UTF-8: $(grep -a slowest "$T/scrape2.txt")"
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")   # strict, as Prometheus
line = [l for l in text.splitlines() if l.startswith("ckpt_last_version_slowest_writer")]
assert line and 'job="metrics/bad\ufffd\ufffdname"' in line[0], line
PYEOF

# ---- bad addresses ----------------------------------------------------------------
for bad in nonsense 127.0.0.1 :9464 127.0.0.1:99999 '127.0.0.1:x'; do
	"$CKPTD" -c "$T/d/ckptd.conf" -o "metrics=$bad" --print-config >/dev/null 2>"$T/bad.err" &&
		fail "metrics=$bad accepted"
	grep -q 'metrics' "$T/bad.err" || fail "metrics=$bad: no message: $(cat "$T/bad.err")"
done
# A port already taken: ckptd says so and exits.
ckptd_conf e metrics=127.0.0.1:$port
timeout 20 "$CKPTD" -c "$T/e/ckptd.conf" >"$T/e.log" 2>&1 && fail "ckptd started on a taken port"
grep -q "metrics 127.0.0.1:$port: cannot serve" "$T/e.log" || fail "taken port: $(cat "$T/e.log")"

check_sanitizers d
finish
