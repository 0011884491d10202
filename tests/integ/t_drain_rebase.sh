#!/bin/bash
# t_drain_rebase: an incremental drain killed part way resumes from its
# journal, but the base is chosen again at the start (the newest drained
# version before it).  Here v3's drain (based on v1) is killed with files
# journaled; meanwhile v2, identical to v1, drained, so the restarted copy
# is based on v2.  Journaled files whose references do not name exactly
# the chunks of the new base are copied again: v3's PFS copy names one base
# and holds only references into it.  Before, the journaled references into
# v1 stayed under a manifest naming v2, and once v3's local copy was
# evicted it read back as EIO.  Every byte of v3 reads back from the PFS,
# after a SIGKILL and two clean restarts too.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
JOB=rb/job

has_ctl || skip "ckptctl not built"

journaled() { [ -n "$(find "$T/a/store/drain" -name '*.journal' -size +0 2>/dev/null)" ]; }
v3_ok() {
	tw a verify "$JOB" v3 -n 8 -z 3000000 -S 1 || fail "v3 does not read back $1"
	tw a verify "$JOB" v2 -n 8 -z 1000000 -S 1 || fail "v2 does not read back $1"
}

# A slow drain (2 MB/s) so that v3's copy is caught part way.
drain_conf a incremental=1 threads=2 chunk=65536 bandwidth=2000000 -- keep=1
start_ckptd a
tw a write "$JOB" v1 -n 8 -z 1000000 -S 1 -w drained || fail "v1 not drained"
ctl a drain --pause >/dev/null || fail "drain --pause failed"
tw a write "$JOB" v2 -n 8 -z 1000000 -S 1 -w local || fail "v2 not local"
# v3's files begin with v1's bytes: its first chunks refer to v1.
tw a write "$JOB" v3 -n 8 -z 3000000 -S 1 -w local || fail "v3 not local"
ctl a drain --now "$JOB" v3 >/dev/null || fail "drain --now v3 failed"
ctl a drain --resume >/dev/null || fail "drain --resume failed"
poll_until 60 journaled || fail "v3's drain journaled no file"
poll_until 60 level_is a "$JOB" v2 drained || fail "v2 did not drain"
[ "$(vlevel a "$JOB" v3)" = local ] || skip "v3 drained before the kill (machine too fast for this timing)"
kill9 a
start_ckptd a
poll_until 120 drain_idle a || fail "the drain did not finish after the restart"
# The level follows the copy once its manifest is written, on the pool.
poll_until 20 level_is a "$JOB" v3 drained ||
	fail "v3 is '$(vlevel a "$JOB" v3)' after the restart, want drained"
base=$(grep -ao 'v[12]' "$(pfs_vdir "$JOB" v3)/manifest" | head -1)
info "v3's PFS copy is based on '$base'"
# v4 makes v3 leave the local store: reads go to its PFS copy.
tw a write "$JOB" v4 -n 1 -z 4096 -S 4 -w drained || fail "v4 not drained"
mans() { find "$T/a/store/man" -name '*.man' | wc -l; }
poll_until 30 out_is 1 mans ||
	fail "v2 and v3 were not evicted"
v3_ok "from the PFS"
kill9 a
start_ckptd a
v3_ok "after a SIGKILL"
stop_ckptd a
start_ckptd a
stop_ckptd a
start_ckptd a
v3_ok "after two clean restarts"
stop_ckptd a
finish
