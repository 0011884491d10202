#!/bin/bash
# t_install: `make install` honours PREFIX and DESTDIR for everything it
# writes: binaries, library, header, ckpt.pc, the example config, the
# systemd units (with their paths rewritten), the Slurm scripts, the Grafana
# dashboard, the Python package and the mount(8) helper; nothing lands
# outside DESTDIR.  The installed ckpt.pc builds and links a client, and the
# installed Python package imports over the installed libckpt.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

command -v pkg-config >/dev/null || skip "pkg-config is not installed"
D=$T/root
P=/opt/ckpt
# Where /usr/bin/python3 looks outside /usr: lib/python3.X/dist-packages, as
# Debian's /usr/local/lib/python3.X/dist-packages (never lib/python3/).
PYV=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || PYV=3
PYD=lib/python$PYV/dist-packages
touch "$T/stamp"
# -o all: install what this run tested, whatever build (plain or sanitizer).
make -s -C "$ROOT" BUILD="$BUILD" -o all install PREFIX=$P DESTDIR="$D" >"$T/install.out" 2>&1 ||
	fail "make install failed: $(tail -20 "$T/install.out")"

for f in bin/ckptd bin/ckptctl bin/ckptfs lib/libckpt.so.1 lib/libckpt.so lib/libckpt.a \
	 include/ckpt.h lib/pkgconfig/ckpt.pc etc/ckpt/ckptd.conf \
	 share/doc/ckpt/ckptd.conf.example share/doc/ckpt/README.md \
	 lib/systemd/system/ckptd.service lib/systemd/system/ckptfs@.service \
	 lib/systemd/system/ckpt.mount share/ckpt/slurm/prolog.sh \
	 share/ckpt/slurm/epilog.sh share/ckpt/slurm/ckpt-slurm-common.sh \
	 share/ckpt/grafana/grafana-ckpt.json $PYD/ckpt/__init__.py \
	 sbin/mount.fuse.ckptfs sbin/mount.ckptfs; do
	[ -e "$D$P/$f" ] || fail "make install did not write $P/$f"
done
# Nothing outside PREFIX under DESTDIR (in particular not /sbin).
out=$(cd "$D" && find . -mindepth 1 -maxdepth 2 | grep -v "^\.$P\$" | grep -v "^\.${P%/*}\$")
[ -z "$out" ] || fail "make install wrote outside PREFIX: $out"
# ... and nothing outside DESTDIR: no file newer than the stamp in /sbin.
[ -z "$(find /sbin/ -maxdepth 1 -name 'mount*ckptfs' -newer "$T/stamp" 2>/dev/null)" ] ||
	fail "make install wrote into /sbin despite DESTDIR"

grep -q "^installed=$P/bin/ckptfs\$" "$D$P/sbin/mount.fuse.ckptfs" ||
	fail "mount.fuse.ckptfs does not name $P/bin/ckptfs"
grep -q "^ExecStart=$P/bin/ckptd -c $P/etc/ckpt/ckptd.conf\$" "$D$P/lib/systemd/system/ckptd.service" ||
	fail "ckptd.service: $(grep ExecStart "$D$P/lib/systemd/system/ckptd.service")"
grep -rq /usr/local "$D$P/lib/systemd/system" "$D$P/share/ckpt/slurm" &&
	fail "an installed unit or script still names /usr/local: $(grep -rl /usr/local "$D$P/lib/systemd/system" "$D$P/share/ckpt/slurm")"

# ckpt.pc: a client builds against the installed header and library.
sed -i "s|^prefix=.*|prefix=$D$P|; s|^libdir=.*|libdir=$D$P/lib|; s|^includedir=.*|includedir=$D$P/include|" \
	"$D$P/lib/pkgconfig/ckpt.pc"
cat >"$T/client.c" <<'C'
#include <ckpt.h>
#include <stdio.h>
int main(void) { puts(ckpt_level_name(CKPT_LOCAL)); return 0; }
C
flags=$(PKG_CONFIG_PATH=$D$P/lib/pkgconfig pkg-config --cflags --libs ckpt) ||
	fail "pkg-config does not know ckpt"
# A sanitizer build of libckpt needs its runtime in the program.
san=
ldd "$D$P/lib/libckpt.so.1" | grep -q libasan && san=-fsanitize=address,undefined
cc $san -o "$T/client" "$T/client.c" $flags 2>"$T/cc.err" || fail "building with ckpt.pc: $(cat "$T/cc.err")"
[ "$(LD_LIBRARY_PATH=$D$P/lib "$T/client")" = local ] || fail "the client built with ckpt.pc does not run"
[ "$(PKG_CONFIG_PATH=$D$P/lib/pkgconfig pkg-config --modversion ckpt)" != "" ] || fail "ckpt.pc has no version"

# The Python package, over the installed library.
if [ -x /usr/bin/python3 ]; then
	asan=$(ldd "$D$P/lib/libckpt.so.1" | awk '/libasan/ { print $3 }')
	grep -q "^_INSTALLED = \"$P/lib/libckpt.so.1\"\$" "$D$P/$PYD/ckpt/_lib.py" ||
		fail "the installed ckpt/_lib.py does not name $P/lib/libckpt.so.1"
	out=$(cd / && PYTHONPATH=$D$P/$PYD CKPT_LIBRARY=$D$P/lib/libckpt.so.1 \
		LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0 \
		/usr/bin/python3 -c 'import ckpt; print(ckpt.Client.__name__)' 2>&1) ||
		fail "the installed Python package does not import: $out"
fi
finish
