#!/bin/bash
# t_pfs_manifests: ckptd keeps a drained version's PFS manifest without its
# chunk table, and reads take the table from a cache of manifests with a
# budget ([drain] manifest_cache, server/pfs/pfscache.h):
#  - an evicted version reads back byte for byte from the PFS, its manifest
#    loaded once for all its reads (ckpt_pfs_manifest_loads_total, and
#    _hits_total for the others);
#  - a manifest touched on the PFS is loaded again at the next read; one
#    replaced by another version's fails the reads (not served from
#    memory), and reads work again once it is put back;
#  - a version whose manifest has 8.5 million chunks (a 180 MiB manifest
#    of zero chunks, ckptd's own): ckptd's memory after a start that lists
#    it grows by far less than its table (about 200 MB before this); its
#    files read back, and the cache lets it go for a smaller one once it
#    is over the budget and another manifest is used;
#  - everything still reads back after a SIGKILL and two clean restarts.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"
has_ctl || skip "ckptctl is not built"

FORGE=$BUILD/tests/ckpt_forge
PFS=$T/pfs
JOB=mc/job
ARGS=(-n 2 -z 12000000)

drain_conf d manifest_cache=16M -- keep=1 staging=32M metrics=127.0.0.1:0

URL=
scrape() { curl -sS --max-time 5 "$URL"; }
metric() { scrape | awk -v k="$1" '$1 == k { v = $2 } END { print v }'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }
metric_ge() {
	local v
	v=$(metric "$1")
	[ -n "$v" ] && awk -v v="$v" -v w="$2" 'BEGIN { exit !(v >= w) }'
}
metric_lt() {
	local v
	v=$(metric "$1")
	[ -n "$v" ] && awk -v v="$v" -v w="$2" 'BEGIN { exit !(v < w) }'
}
# up: start d and find its metrics port.
up() {
	local port
	start_ckptd d
	port=$(sed -n 's|.*metrics: serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' \
		"$T/d/ckptd.log" | tail -1)
	[ -n "$port" ] || fail "no 'metrics: serving' line in the log"
	URL=http://127.0.0.1:$port/metrics
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$(ckptd_pid d)/status"; }
evicted() { grep -q "retention: $JOB/$1 evicted" "$T/d/ckptd.log"; }
verify() { tw d verify $JOB "$1" "${ARGS[@]}" -S "$2"; }

up
tw d write $JOB v1 "${ARGS[@]}" -S 1 -w drained || fail "v1 did not drain"
tw d write $JOB v2 "${ARGS[@]}" -S 2 -w drained || fail "v2 did not drain"
poll_until 30 evicted v1 || fail "v1 was not evicted (keep = 1)"
VD1=$(pfs_vdir $JOB v1)
VD2=$(pfs_vdir $JOB v2)
[ -f "$VD1/manifest" ] && [ -f "$VD2/manifest" ] || fail "no manifests under $PFS"

# ---- one load for every read of a version ---------------------------------------
verify v1 1 || fail "v1 does not read back from the PFS"
poll_until 10 metric_is ckpt_pfs_manifest_loads_total 1 ||
	fail "loads after reading v1: $(metric ckpt_pfs_manifest_loads_total), want 1"
poll_until 10 metric_ge ckpt_pfs_manifest_hits_total 3 ||
	fail "hits after reading v1: $(metric ckpt_pfs_manifest_hits_total)"
verify v1 1 || fail "v1 does not read back a second time"
poll_until 10 metric_ge ckpt_pfs_manifest_hits_total 6 ||
	fail "hits after reading v1 twice: $(metric ckpt_pfs_manifest_hits_total)"
metric_is ckpt_pfs_manifest_loads_total 1 ||
	fail "a second read of v1 loaded its manifest again: $(metric ckpt_pfs_manifest_loads_total)"

# ---- what is read follows the PFS -----------------------------------------------
touch -d '2 minutes ago' "$VD1/manifest"
verify v1 1 || fail "v1 does not read back after its manifest was touched"
poll_until 10 metric_is ckpt_pfs_manifest_loads_total 2 ||
	fail "a touched manifest was not loaded again: loads $(metric ckpt_pfs_manifest_loads_total)"
cp -p "$VD1/manifest" "$T/v1.manifest"
cp "$VD2/manifest" "$VD1/manifest.new" && mv "$VD1/manifest.new" "$VD1/manifest"
verify v1 1 2>"$T/replaced.err" &&
	fail "v1 read back from memory with v2's manifest in its place"
alive "$(ckptd_pid d)" || fail "ckptd died on a replaced manifest"
cp -p "$T/v1.manifest" "$VD1/manifest.new" && mv "$VD1/manifest.new" "$VD1/manifest"
verify v1 1 || fail "v1 does not read back once its manifest is back"

# ---- a manifest of 8.5 million chunks -------------------------------------------
VDB=$(dirname "$VD2")/big.ver
mkdir "$VDB" && cp -r "$VD2/files" "$VDB/" || fail "cannot copy v2's files"
"$FORGE" "$VD2/manifest" "$VDB/manifest" big bloat:8500000 ||
	fail "ckpt_forge bloat failed"
size=$(stat -c %s "$VDB/manifest")
((size > 150000000)) || fail "the bloated manifest is only $size bytes"
stop_ckptd d
# (a sanitized build: frees without ASan's quarantine, which would hold the
# scan's freed table)
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0" up
ctl d ls $JOB 2>/dev/null | grep -qw big || fail "big is not listed: $(ctl d ls $JOB 2>&1)"
rss=$(rss_kb)
info "ckptd's VmRSS with big listed: $rss kB"
# Its chunk table alone is 8.5 million x 24 bytes.
((rss < 120000)) || fail "ckptd holds $rss kB with big listed: its chunk table is kept"
verify big 2 || fail "big's files do not read back"
poll_until 10 metric_ge ckpt_pfs_manifest_cache_bytes 150000000 ||
	fail "big's manifest is not kept after its read: $(metric ckpt_pfs_manifest_cache_bytes) bytes"
verify v1 1 || fail "v1 does not read back after big"
poll_until 10 metric_lt ckpt_pfs_manifest_cache_bytes 16777216 ||
	fail "the cache kept $(metric ckpt_pfs_manifest_cache_bytes) bytes over its 16M budget"

# ---- restarts -----------------------------------------------------------------------
restart d
stop_ckptd d
up
stop_ckptd d
up
verify v1 1 || fail "v1 lost after a SIGKILL and two clean restarts"
verify v2 2 || fail "v2 lost after a SIGKILL and two clean restarts"
verify big 2 || fail "big lost after a SIGKILL and two clean restarts"
check_sanitizers d
stop_ckptd d
finish
