#!/usr/bin/env python3
"""layers.py - check ckptd's layering (docs/design.md, "Server structure").

server/ is a stack of folders, lowest first: core, store, pfs, drain,
cluster, svc, and server/ itself on top (main.c, ckptd.c, metrics.c).  A
file may use its own folder, the folders below it, lib/ and include/; never
a folder above it.  The Makefile enforces most of that by compiling each
folder with only the include paths of itself and the layers below; this
script checks what the compiler cannot:

  - every #include "..." of every .c and .h, headers included, resolves to
    its own layer or a lower one (a header no file of its folder includes
    would otherwise slip through);
  - no #include names a path with "../" in it;
  - a private header (*_i.h) is included only from its own folder;
  - with --objs DIR (the build's obj/server): no object file references a
    symbol that an object of a higher layer defines (a call through a
    hand-written prototype would compile, and link, without the header).

Usage: tools/layers.py [--objs BUILD/obj/server] [ROOT]
Exit 0 when the tree keeps the rule, 1 with one line per breach.
"""
import os
import re
import subprocess
import sys

LAYERS = ["core", "store", "pfs", "drain", "cluster", "svc", ""]  # "" = top
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """server/X/f.c -> X; server/f.c -> "" (the top)."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 else ""


def server_files(root):
    out = []
    for dirpath, _, names in os.walk(os.path.join(root, "server")):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def resolve(root, rel, name):
    """The repository path an #include "name" in rel finds, as gcc would
    with the top's include list (own folder first), or None."""
    here = os.path.dirname(rel)
    cands = [here, "lib", "include"] + ["server/" + l if l else "server"
                                       for l in LAYERS]
    for d in cands:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def check_includes(root):
    errs = []
    for rel in server_files(root):
        lay = layer_of(rel)
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for name in INC.findall(text):
            if "../" in name or name.startswith(".."):
                errs.append('%s: #include "%s" climbs out of its folder' %
                            (rel, name))
                continue
            got = resolve(root, rel, name)
            if got is None or not got.startswith("server/"):
                continue  # lib/, include/ or a system header
            tl = layer_of(got)
            if LAYERS.index(tl) > LAYERS.index(lay):
                errs.append('%s (%s): #include "%s" is %s, a higher layer' %
                            (rel, lay or "top", name, tl or "top"))
            if name.endswith("_i.h") and \
                    os.path.dirname(got) != os.path.dirname(rel):
                errs.append('%s: #include "%s" is private to %s' %
                            (rel, name, os.path.dirname(got)))
    return errs


def nm(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True,
                         check=True).stdout
    defs, undefs = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRC":
            defs.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            undefs.add(p[1])
    return defs, undefs


def check_objects(objdir):
    errs, owner, objs = [], {}, []
    for dirpath, _, names in os.walk(objdir):
        for n in names:
            if n.endswith(".o"):
                p = os.path.join(dirpath, n)
                rel = os.path.relpath(p, objdir)
                lay = rel.split("/")[0] if "/" in rel else ""
                if lay not in LAYERS:
                    continue
                defs, undefs = nm(p)
                objs.append((rel, lay, undefs))
                for s in defs:
                    owner[s] = (rel, lay)
    if not objs:
        return ["%s: no objects to check (build first)" % objdir]
    for rel, lay, undefs in sorted(objs):
        for s in sorted(undefs):
            if s in owner:
                orel, olay = owner[s]
                if LAYERS.index(olay) > LAYERS.index(lay):
                    errs.append("%s (%s) calls %s of %s (%s), a higher layer"
                                % (rel, lay or "top", s, orel, olay or "top"))
    return errs


def main(argv):
    objdir = None
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--objs":
        objdir, args = args[1], args[2:]
    root = args[0] if args else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..")
    errs = check_includes(root)
    if objdir:
        errs += check_objects(objdir)
    for e in errs:
        print("layers: " + e, file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
