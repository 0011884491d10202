#!/bin/sh
# tests/layers_fuse.sh - check that ckptfs (fuse/) keeps its layers.
#
#   tests/layers_fuse.sh [BUILD]       (BUILD: default $CKPT_BUILD or build)
#
# fuse/ is four layers, bottom to top: conn (connections to ckptd), wb
# (write-behind), ns (the namespace), ops (the FUSE operations), each with
# one private header (conn_i.h, wb_i.h, ns_i.h, ops_i.h).  The table below
# says which layer each file is in.  It fails, naming the file and the
# include or symbol, when:
#   - a file under fuse/ is not in the table;
#   - an #include uses "../";
#   - a .c includes a private header other than its own layer's;
#   - a header includes the header of its own or a higher layer;
#   - (when BUILD/obj/fuse/*.o exist) an object uses a symbol defined in
#     an object of a higher layer (nm).
# A file may call any file of its own layer or of a layer below.
exec /usr/bin/python3 - "${1:-${CKPT_BUILD:-build}}" <<'PYEOF'
import os, re, subprocess, sys

LAYERS = ["conn", "wb", "ns", "ops"]          # bottom to top
TABLE = {
    # conn: connections to ckptd, what ckptd says, log/errors/clock
    "conn_i.h": "conn", "conn.c": "conn", "srv.c": "conn", "log.c": "conn",
    # wb: write-behind of small writes
    "wb_i.h": "wb", "wbuf.c": "wb",
    # ns: versions held, their mirrors, attributes, st_ino kept, paths,
    # pending jobs and aliases
    "ns_i.h": "ns", "vers.c": "ns", "tree.c": "ns", "attr.c": "ns",
    "inomap.c": "ns", "path.c": "ns", "pend.c": "ns",
    # ops: the FUSE operation table and the operations, kernel cache
    # invalidation, the closing task, housekeeping
    "ops_i.h": "ops", "ckptfs.c": "ops", "nsops.c": "ops", "dir.c": "ops",
    "io.c": "ops", "xattr.c": "ops", "inval.c": "ops", "closer.c": "ops",
    "hk.c": "ops",
}
HEADER = {l: l + "_i.h" for l in LAYERS}       # each layer's private header
RANK = {l: i for i, l in enumerate(LAYERS)}

build = sys.argv[1]
bad = []
def fail(msg):
    bad.append(msg)
    print("layers_fuse: FAIL: " + msg)

files = []
for root, dirs, names in os.walk("fuse"):
    for n in names:
        if n.endswith((".c", ".h")):
            files.append(os.path.join(root, n))
if not files:
    print("layers_fuse: no fuse/ sources (run from the repository root)")
    sys.exit(2)
inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
for path in sorted(files):
    name = os.path.basename(path)
    layer = TABLE.get(name)
    if layer is None:
        fail("%s: not in the layer table of tests/layers_fuse.sh" % path)
        continue
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = inc_re.match(line)
            if not m:
                continue
            inc = m.group(2)
            where = '%s:%d: #include %s%s%s' % (path, lineno, m.group(1), inc,
                                               '"' if m.group(1) == '"' else '>')
            if "../" in inc:
                fail(where + ': uses "../"')
                continue
            base = os.path.basename(inc)
            target = os.path.join(os.path.dirname(path), inc)
            if m.group(1) != '"' or not os.path.exists(target):
                continue                      # not a fuse/ header
            tl = TABLE.get(base)
            if tl is None:
                fail(where + ": a fuse/ header not in the layer table")
            elif name.endswith(".c") and tl != layer:
                fail(where + ": %s is in layer %s and may include only %s"
                     % (name, layer, HEADER[layer]))
            elif name.endswith(".h") and RANK[tl] >= RANK[layer]:
                fail(where + ": header of layer %s includes one of layer %s"
                     " (only lower layers)" % (layer, tl))

# Calls: no object uses a symbol defined in an object of a higher layer.
objdir = os.path.join(build, "obj", "fuse")
objs = []
if os.path.isdir(objdir):
    for root, dirs, names in os.walk(objdir):
        objs += [os.path.join(root, n) for n in names if n.endswith(".o")]
if not objs:
    print("layers_fuse: no objects in %s: calls not checked (build first)"
          % objdir)
else:
    defined, used = {}, {}
    for o in sorted(objs):
        src = os.path.basename(o)[:-2] + ".c"
        try:
            out = subprocess.run(["nm", o], check=True, capture_output=True,
                                 text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            fail("%s: nm failed: %s" % (o, e))
            continue
        for l in out.splitlines():
            p = l.split()
            if len(p) == 3 and p[1] in "TDBRVWG":
                defined[p[2]] = src
            elif len(p) == 2 and p[0] == "U":
                used.setdefault(src, set()).add(p[1])
    for src in sorted(used):
        ul = TABLE.get(src)
        if ul is None:
            fail("%s/%s: object of a source not in the layer table"
                 % (objdir, src[:-2] + ".o"))
            continue
        for sym in sorted(used[src]):
            d = defined.get(sym)
            if d is None or d == src:
                continue
            dl = TABLE.get(d)
            if dl is not None and RANK[dl] > RANK[ul]:
                fail("fuse/%s (layer %s) uses %s of fuse/%s (layer %s, above)"
                     % (src, ul, sym, d, dl))
    print("layers_fuse: calls checked in %d objects of %s" % (len(objs), objdir))

if bad:
    print("layers_fuse: %d violation(s)" % len(bad))
    sys.exit(1)
print("layers_fuse: ok (%d files)" % len(files))
PYEOF
