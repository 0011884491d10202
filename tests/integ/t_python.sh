#!/bin/bash
# t_python: the ckpt Python package (python/ckpt, ctypes over libckpt.so)
# with Debian's /usr/bin/python3, numpy and torch, against a real ckptd:
#  - a model's state dict through Client.open(..., "wb") / torch.save and
#    back with torch.load(Client.open(..., "rb")), equal tensor for tensor;
#  - save() and save_async() of {path: bytes | ndarray | tensor}, the future
#    resolving at the level asked; np.load and torch.load read them back;
#  - latest(), list(), files(), stat() (with the writer stall), wait();
#  - errors as CkptError (bad names, a committed version, a timeout);
#  - through the mount: torch.save into ckptfs, read with the API, and the
#    reverse.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x $PY ] || skip "/usr/bin/python3 is not installed"
$PY -c 'import numpy' 2>/dev/null || skip "numpy is not installed for /usr/bin/python3 (python3-numpy)"
$PY -c 'import torch' 2>/dev/null || skip "torch is not installed for /usr/bin/python3 (python3-torch)"
[ -e "$BUILD/libckpt.so" ] || fail "$BUILD/libckpt.so is not built"
export PYTHONPATH=$ROOT/python CKPT_LIBRARY=$BUILD/libckpt.so
# A sanitizer build of libckpt (make SANITIZE=...) loads into Python only
# with its runtime preloaded; Python's own allocations are not ours to check.
asan=$(ldd "$BUILD/libckpt.so" | awk '/libasan/ { print $3 }')
py() {
	if [ -n "$asan" ]; then
		LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} \
			timeout 60 $PY "$@"
	else
		timeout 60 $PY "$@"
	fi
}

ckptd_conf d keep=100
start_ckptd d
export CKPT_SOCKET=$(sock d)

# ---- the API --------------------------------------------------------------------
py - <<'PYEOF' || fail "the Python API checks failed"
import errno, numpy as np, torch, ckpt

torch.manual_seed(1)
model = torch.nn.Sequential(torch.nn.Linear(300, 200), torch.nn.ReLU(),
                            torch.nn.Linear(200, 10), torch.nn.BatchNorm1d(10))
sd = model.state_dict()

def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

with ckpt.Client() as c:
    with c.open("py/model", "s1", "model.pt", "wb") as f:
        torch.save(sd, f)
    assert c.wait("py/model", "s1", "local", timeout=30) == "local"
    with c.open("py/model", "s1", "model.pt", "rb") as f:
        assert same(sd, torch.load(f)), "state dict differs after torch.load"

    # several files in one version, and the async path
    arr = np.random.default_rng(3).standard_normal((257, 129)).astype(np.float32)
    fortran = np.asfortranarray(arr)
    items = {"opt/a.npy": arr, "opt/f.npy": fortran, "meta.bin": b"step=2",
             "bias.pt": sd["2.bias"], "view.bin": memoryview(bytearray(b"xyz"))}
    assert c.save("py/model", "s2", items, wait="local") == "local"
    fut = c.save_async("py/model", "s3", {"w.npy": arr * 2}, wait="local")
    arr[:] = 0                       # the caller may reuse its memory at once
    assert fut.result(timeout=30) == "local"
    with c.open("py/model", "s3", "w.npy", "rb") as f:
        w = np.load(f)
    assert w.dtype == np.float32 and w.shape == (257, 129) and w.any()
    with c.open("py/model", "s2", "opt/f.npy", "rb") as f:
        assert np.array_equal(np.load(f), fortran)
    assert c.read("py/model", "s2", "meta.bin") == b"step=2"
    assert c.read("py/model", "s2", "view.bin") == b"xyz"
    assert torch.equal(torch.load(c.open("py/model", "s2", "bias.pt", "rb")),
                       sd["2.bias"])

    assert c.latest("py/model") == "s3"
    assert c.latest("py/none") is None
    # names are any bytes: latest() gives a non-UTF-8 one as list() does
    odd = b"s\xff9".decode(errors="surrogateescape")
    c.save("py/odd", odd, {"f": b"x"}, wait="local")
    assert c.latest("py/odd") == odd, c.latest("py/odd")
    assert [v["version"] for v in c.list("py/odd")] == [odd]
    assert "py/model" in c.list()
    assert [v["version"] for v in c.list("py/model")] == ["s1", "s2", "s3"]
    st = c.stat("py/model", "s2")
    assert st["state"] == "sealed" and st["level"] == "local", st
    assert st["stall"]["writers"] == 1, st
    assert sorted(f["path"] for f in c.files("py/model", "s2")) == \
        ["bias.pt", "meta.bin", "opt/a.npy", "opt/f.npy", "view.bin"]

    # an exception inside the with block aborts the version
    try:
        with c.open("py/model", "s4", "model.pt", "wb") as f:
            f.write(b"half")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert c.stat("py/model", "s4")["state"] == "failed"

    # errors
    def err(code, fn, *a, **k):
        try:
            fn(*a, **k)
        except ckpt.CkptError as e:
            assert e.errno == code, (e.errno, code, str(e))
            return
        raise AssertionError("no error from %s%r" % (fn.__name__, a))
    err(30606, c.begin, "py/model", "../x")           # CKPT_EBADNAME
    err(30604, c.begin, "py/model", "s1")              # CKPT_ESEALED
    err(errno.ENOENT, c.open, "py/model", "s1", "nope.pt", "rb")
    v = c.begin("py/model", "s5")                      # open, never committed
    err(errno.ETIMEDOUT, c.wait, "py/model", "s5", "local", timeout=0.2)
    v.abort()

# A version begun on a client closed before it ended: ckpt_disconnect freed
# it, so its commit, abort and __del__ must not reach libckpt.
import gc
c2 = ckpt.Client()
v = c2.begin("py/model", "s6")
v.write("f", b"x" * 4096)
c2.close()
try:
    v.commit()
    raise AssertionError("commit after the client closed did not fail")
except ValueError:
    pass
v.abort()
del v
gc.collect()
c3 = ckpt.Client()
with c3.begin("py/model", "s7") as v7:
    v7.write("f", b"y")
c3.close()
v7.commit()                                        # ended already: a no-op
print("api ok")
PYEOF
info "API: state dict, save, save_async, listings and errors"

# ---- through the mount ---------------------------------------------------------------
if ! grep -qw fuse /proc/filesystems || [ ! -c /dev/fuse ] || [ ! -x "$CKPTFS" ]; then
	info "no FUSE here: the mount part is left out"
	finish
	exit 0
fi
M=$T/mnt
mount_ckptfs d "$M"
mkdir -p "$M/pyfs"
py - "$M" <<'PYEOF' || fail "the Python mount checks failed"
import os, sys, torch, ckpt
m = sys.argv[1]
torch.manual_seed(2)
sd = torch.nn.Linear(128, 64).state_dict()
same = lambda a, b: a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

os.mkdir(m + "/pyfs/m1.tmp")
torch.save(sd, m + "/pyfs/m1.tmp/model.pt")
os.rename(m + "/pyfs/m1.tmp", m + "/pyfs/m1")
with ckpt.Client() as c:
    c.wait("pyfs", "m1", "local", timeout=30)
    with c.open("pyfs", "m1", "model.pt", "rb") as f:
        assert same(sd, torch.load(f)), "mount -> API differs"
    with c.open("pyfs", "m2", "model.pt", "wb") as f:
        torch.save(sd, f)
    c.wait("pyfs", "m2", "local", timeout=30)
assert same(sd, torch.load(m + "/pyfs/m2/model.pt")), "API -> mount differs"
print("mount ok")
PYEOF
umount_ckptfs "$M"
info "mount: torch.save through ckptfs read by the API, and the reverse"
finish
