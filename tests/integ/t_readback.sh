#!/bin/bash
# t_readback: reads of a version while it is written (ckpt_read of an open
# version goes through the version's read index, brought up to date at each
# read with the records written since), checked byte for byte against a
# model of every change (ckpt_readback):
#  - overlapping writes, rewrites of one range, truncates down and up, hard
#    links, unlinks (of the name holding a linked file too), renames to new
#    names and over other files, read back after every step and in bursts;
#    then many small appends to one file (many records), read back as it
#    grows; the same index then serves the committed version;
#  - the committed version after a SIGKILL and two clean restarts (the
#    records reloaded from the manifest, the index made anew);
#  - a second version written and read back on the restarted daemon;
#  - an aborted version: read back while open, unreadable once aborted,
#    and the daemon keeps serving the others.
# TIMEOUT: 240
set -u
. "$(dirname "$0")/lib.sh"

RB=$BUILD/tests/ckpt_readback
JOB=rb
rb() { "$RB" "$(sock r)" "$@"; }

ckptd_conf r keep=10
start_ckptd r

rb write "$JOB" v1 11 || fail "v1: written and read back while open"
info "v1: every read of the open and the committed version matches the model"

restart r
rb check "$JOB" v1 11 || fail "v1 after a SIGKILL and a restart"
stop_ckptd r
start_ckptd r
stop_ckptd r
start_ckptd r
rb check "$JOB" v1 11 || fail "v1 after two clean restarts"
info "v1: the same after a SIGKILL and two clean restarts"

rb write "$JOB" v2 12 || fail "v2: written and read back on the restarted daemon"
rb abort "$JOB" v3 13 || fail "v3: read back, aborted, then unreadable"
rb check "$JOB" v1 11 || fail "v1 after v3's abort"
rb check "$JOB" v2 12 || fail "v2 after v3's abort"
assert_up r
check_sanitizers r
stop_ckptd r
exit 0
