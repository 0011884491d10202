#!/bin/bash
# t_config: ckptd's configuration.  --print-config with no file prints every
# key (and its output reads back as the same config); a file's values and
# -o overrides (which win) show in it; dir moves socket and store; broken
# configs (unknown key or section, bad size or number, syntax error, missing
# file, bad -o) exit 2 with exactly one line naming the problem, without
# starting a daemon; a second daemon on a store in use refuses to start.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"

KEYS=(dir socket store staging staging_client staging_per_uid staging_wait staging_hugepages
      max_conns_per_uid capacity reserve keep segment
      chunk queue_depth direct mlock log_level log straggler_factor nice)
# Keys whose default is empty ("key =").
EMPTY_KEYS=(metrics)

# ckptd_section OUTPUT: the [ckptd] section of --print-config output (the
# [drain] section has keys of the same names).
ckptd_section() { sed -n '/^\[ckptd\]/,/^\[/{/^\[drain\]/q;p}' <<<"$1"; }
# value OUTPUT KEY: the value of KEY in the [ckptd] section.
value() { ckptd_section "$1" | sed -n "s/^$2 = //p"; }

# ---- defaults ------------------------------------------------------------------
out=$("$CKPTD" --print-config 2>"$T/err") || fail "--print-config failed: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "--print-config wrote to stderr: $(cat "$T/err")"
head -1 <<<"$out" | grep -qx '\[ckptd\]' || fail "--print-config does not start with [ckptd]: $out"
for k in "${KEYS[@]}"; do
	[ "$(ckptd_section "$out" | grep -c "^$k = .")" = 1 ] || fail "--print-config: key '$k' missing or repeated: $out"
done
for k in "${EMPTY_KEYS[@]}"; do
	[ "$(ckptd_section "$out" | grep -c "^$k =\$")" = 1 ] || fail "--print-config: key '$k' missing, repeated or not empty: $out"
done
n=$(ckptd_section "$out" | grep -c ' = ')
[ "$n" = ${#KEYS[@]} ] || fail "--print-config prints $n keys, want ${#KEYS[@]}: $out"
[ "$(value "$out" socket)" = "$(value "$out" dir)/ckptd.sock" ] || fail "default socket is not <dir>/ckptd.sock"
[ "$(value "$out" store)" = "$(value "$out" dir)/store" ] || fail "default store is not <dir>/store"
# Printing the config touches nothing.
[ ! -e "$T/d" ] || fail "--print-config created files"

# It reads back as the same config.
echo "$out" >"$T/printed.conf"
again=$("$CKPTD" -c "$T/printed.conf" --print-config) || fail "the printed config does not load"
[ "$again" = "$out" ] || fail "the printed config does not read back the same: $(diff <(echo "$out") <(echo "$again"))"

# ---- a file and overrides ----------------------------------------------------------
mkdir -p "$T/c"
cat >"$T/c/good.conf" <<EOF
# a comment
[ckptd]
dir = $T/c/state
staging = 512M
staging_client = 64M
keep = 5
EOF
out=$("$CKPTD" -c "$T/c/good.conf" --print-config) || fail "a good config does not load"
[ "$(value "$out" dir)" = "$T/c/state" ] || fail "dir from the file not shown: $out"
[ "$(value "$out" socket)" = "$T/c/state/ckptd.sock" ] || fail "socket does not follow dir: $out"
[ "$(value "$out" store)" = "$T/c/state/store" ] || fail "store does not follow dir: $out"
[ "$(value "$out" staging)" = 512M ] || fail "staging from the file not shown: $out"
[ "$(value "$out" keep)" = 5 ] || fail "keep from the file not shown: $out"
out=$("$CKPTD" -c "$T/c/good.conf" -o keep=9 -o staging=1G -o "store=$T/c/elsewhere" --print-config) ||
	fail "-o overrides do not load"
[ "$(value "$out" keep)" = 9 ] || fail "-o keep=9 not shown: $out"
[ "$(value "$out" staging)" = 1G ] || fail "-o staging=1G not shown: $out"
[ "$(value "$out" store)" = "$T/c/elsewhere" ] || fail "-o store not shown: $out"
[ "$(value "$out" staging_client)" = 64M ] || fail "the file's other keys were lost: $out"
out=$("$CKPTD" -o segment=8M -o log_level=debug --print-config) || fail "-o without a file failed"
[ "$(value "$out" segment)" = 8M ] && [ "$(value "$out" log_level)" = debug ] ||
	fail "-o without a file not shown: $out"

# ---- broken configs --------------------------------------------------------------
# bad NAME WANT_REGEX [ARGS...]: ckptd ARGS must exit 2 with one stderr line
# matching WANT_REGEX; run without --print-config it must not start either.
bad() {
	local name=$1 want=$2 rc
	shift 2
	# -o dir first: should a broken config ever load, nothing touches the
	# default /var/lib/ckpt.
	set -- -o "dir=$T/c/bad" "$@"
	"$CKPTD" "$@" --print-config >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] || fail "$name: exit $rc, want 2 (stderr: $(cat "$T/err"))"
	[ ! -s "$T/out" ] || fail "$name: printed a config anyway: $(cat "$T/out")"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "$name: want one line, got: $(cat "$T/err")"
	grep -Eq "$want" "$T/err" || fail "$name: '$(cat "$T/err")' does not match /$want/"
	timeout "$(scaled 10)" "$CKPTD" "$@" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "$name: starting the daemon: exit $rc, want 2"
	info "$name: $(cat "$T/err")"
}
conf() { printf '[ckptd]\ndir = %s\n%s\n' "$T/c/bad" "$2" >"$T/c/$1.conf"; echo "$T/c/$1.conf"; }

bad "unknown key" "bogus" -c "$(conf k 'bogus = 1')"
bad "bad size 2X" "staging.*2X|2X.*staging" -c "$(conf s 'staging = 2X')"
bad "bad number" "keep.*abc|abc.*keep" -c "$(conf n 'keep = abc')"
bad "bad boolean" "direct.*maybe|maybe.*direct" -c "$(conf b 'direct = maybe')"
bad "lease above staging" "staging_client" -c "$(conf l "$(printf 'staging = 64M\nstaging_client = 1G')")"
printf '[other]\nkeep = 1\n' >"$T/c/sec.conf"
bad "unknown section" "other" -c "$T/c/sec.conf"
printf '[ckptd\nkeep = 1\n' >"$T/c/syn.conf"
bad "syntax error" "syn.conf.*line 1|line 1.*syn.conf" -c "$T/c/syn.conf"
bad "missing file" "$T/c/nonexistent.conf" -c "$T/c/nonexistent.conf"
bad "-o unknown key" "bogus" -o bogus=1
bad "-o bad size" "staging.*2X|2X.*staging" -o staging=2X
bad "-o without =" "novalue" -o novalue
[ ! -e "$T/c/bad" ] || fail "a broken config created its state directory"

# ---- a daemon started from a file uses it ---------------------------------------------
ckptd_conf d keep=4 staging=32M staging_client=8M
start_ckptd d -o staging=48M
if has_ctl; then
	out=$(ctl d --json status) || fail "ckptctl status failed"
	/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["daemon"]
assert d["staging_total"] == 48 << 20, d["staging_total"]
assert d["store"] == sys.argv[1], d["store"]
' "$T/d/store" <<<"$out" || fail "the daemon does not run with its config and -o: $out"
fi
tw d write cfg/job v1 -n 1 -z 100000 -w local || fail "writing through the configured daemon failed"
[ -d "$T/d/store/seg" ] && [ -d "$T/d/store/man" ] || fail "store not created under dir"
# A second daemon on the same store (or socket) refuses to start, clearly,
# and the first one keeps its data.
for extra in "" "-o socket=$T/d/second.sock"; do
	# shellcheck disable=SC2086
	timeout "$(scaled 10)" "$CKPTD" -c "$T/d/ckptd.conf" $extra >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a second ckptd on the same store${extra:+ ($extra)}: exit $rc"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "second ckptd: want one line, got: $(cat "$T/err")"
	grep -qi "another ckptd\|already" "$T/err" || fail "second ckptd: unclear error: $(cat "$T/err")"
	info "second ckptd${extra:+ ($extra)}: $(cat "$T/err")"
done
assert_up d
tw d verify cfg/job v1 -n 1 -z 100000 || fail "the first daemon's version does not verify"
stop_ckptd d
info "print-config, overrides and broken configs behave"

# config/ckptd.conf.example shows every section and key, at its default
# (derived ones, socket and store, as comments).
ex=$ROOT/config/ckptd.conf.example
"$CKPTD" -c "$ex" --print-config >"$T/ex.out" 2>"$T/ex.err" || fail "the example config does not load: $(cat "$T/ex.err")"
"$CKPTD" --print-config >"$T/def.out" || fail "--print-config failed"
diff "$T/def.out" "$T/ex.out" >"$T/ex.diff" || fail "the example is not the defaults: $(cat "$T/ex.diff")"
awk '/^\[/ { sec = $1 } / = / || / =$/ { print sec, $1 }' "$T/def.out" | while read -r sec key; do
	awk -v s="$sec" -v k="$key" '/^\[/ { cur = $1 } cur == s && ($1 == k || ($1 == ";" && $2 == k)) { f = 1 } END { exit !f }' "$ex" ||
		fail "config/ckptd.conf.example does not show $sec $key"
done || exit 1
info "the example config shows every key at its default"
