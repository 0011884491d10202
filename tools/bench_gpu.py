#!/usr/bin/env python3
"""bench_gpu.py - a trainer's device-to-host copy into ckpt staging (a
benchmark, not a test: it prints figures).

Needs a CUDA GPU, torch, and a running ckptd (its socket as the first
argument); libckpt is found as the ckpt Python package finds it
($CKPT_LIBRARY).  For SIZE MiB of a CUDA tensor (default 1024), each way
REPS times (default 5), the median time and rate of:

  pinned      tensor.copy_() into a pinned host tensor: cudaMemcpy D2H at
              the PCIe rate (the baseline)
  pageable    the same into a pageable host tensor (what a trainer gets
              without pinning)
  pinned+write
              the pinned copy, then ckpt_write() of it (one more copy, into
              staging), to LOCAL
  buf         zero-copy: each piece copied by the GPU straight into a
              ckpt_buf_get() buffer of the staging lease, then
              ckpt_buf_submit(), to LOCAL
  buf+reg     the same with the lease registered with CUDA first
              (cudaHostRegister of what ckpt_staging_map() gives)
  buf+reg x4  the same with four pieces in flight: each copy is queued
              on the GPU (non_blocking, an event after it) and a piece is
              submitted once its event has passed, so the GPU copies the
              next pieces while libckpt sends one

Each ckpt row has two times: the stall, until the last byte is handed to
ckpt (the trainer goes on; ckpt_write() or the last ckpt_buf_submit()
returned), and until the commit reached LOCAL (on this machine's disk).
The ratio printed is the stall against `pinned`.
"""
import ctypes
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from ckpt import _lib  # noqa: E402  (the library, as the package loads it)

lib = _lib.lib
_P, _S, _I, _Z = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
for name, args, res in (
        ("ckpt_staging", [_P, ctypes.POINTER(_Z)], _I),
        ("ckpt_staging_request", [_P, _Z], _I),
        ("ckpt_staging_map", [_P, ctypes.POINTER(_P), ctypes.POINTER(_Z)], _I),
        ("ckpt_buf_max", [_P], _Z),
        ("ckpt_buf_get", [_P, _Z, ctypes.POINTER(_P)], _I),
        ("ckpt_buf_submit", [_P, _S, _P, _Z, ctypes.c_uint64], _I),
        ("ckpt_flush", [_P], _I),
        ("ckpt_wait", [_P, _I, _I], _I),
        ("ckpt_remove", [_P, _S, _S], _I)):
    f = getattr(lib, name)
    f.argtypes, f.restype = args, res

LEVEL_LOCAL = 2   # enum ckpt_level in include/ckpt.h


def check(ret, what):
    if ret < 0:
        sys.exit("bench_gpu: %s: %s" % (what, _lib.ckpt_strerror(ret).decode()))
    return ret


class Ckpt:
    def __init__(self, sock, lease):
        self.c = ctypes.c_void_p()
        check(_lib.ckpt_connect(sock.encode(), ctypes.byref(self.c)), "connect")
        check(lib.ckpt_staging_request(self.c, lease), "staging_request")
        size = ctypes.c_size_t()
        check(lib.ckpt_staging(self.c, ctypes.byref(size)), "staging")
        self.lease = size.value
        self.piece = lib.ckpt_buf_max(self.c)
        self.n = 0
        self.registered = None

    def begin(self):
        self.n += 1
        self.name = b"v%d" % self.n
        v = ctypes.c_void_p()
        check(_lib.ckpt_begin(self.c, b"gpubench", self.name, ctypes.byref(v)),
              "begin")
        return v

    def commit(self, v):
        check(_lib.ckpt_commit(v), "commit")
        check(lib.ckpt_wait(v, LEVEL_LOCAL, 120000), "wait local")
        _lib.ckpt_version_free(v)
        if self.n > 2:      # keep the store small: drop the one before last
            lib.ckpt_remove(self.c, b"gpubench", b"v%d" % (self.n - 2))

    def register(self):
        """cudaHostRegister the lease's mapping (once)."""
        if self.registered:
            return
        addr, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(lib.ckpt_staging_map(self.c, ctypes.byref(addr),
                                   ctypes.byref(size)), "staging_map")
        err = torch.cuda.cudart().cudaHostRegister(addr.value, size.value, 0)
        if int(err) != 0:
            sys.exit("bench_gpu: cudaHostRegister of %d MiB: %s" %
                     (size.value >> 20, err))
        self.registered = (addr.value, size.value)

    def unregister(self):
        if self.registered:
            torch.cuda.cudart().cudaHostUnregister(self.registered[0])
            self.registered = None


def timed(fn):
    """(stall, to LOCAL) of fn; fn returns a commit to run, or None."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    rest = fn()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    if rest:
        rest()
    return t1 - t0, time.perf_counter() - t0


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: bench_gpu.py SOCKET [SIZE_MIB [REPS]]")
    sock = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    n = mib << 20
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    dev.random_(0, 256)
    pinned = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    pageable = torch.empty(n, dtype=torch.uint8)
    pageable.fill_(1)               # fault it in before timing
    ck = Ckpt(sock, min(n, 1 << 30))

    def pinned_copy():
        pinned.copy_(dev)

    def pageable_copy():
        pageable.copy_(dev)

    def pinned_write():
        pinned.copy_(dev)
        torch.cuda.synchronize()
        v = ck.begin()
        check(_lib.ckpt_write(v, b"w.bin", pinned.data_ptr(), n, 0), "write")
        return lambda: ck.commit(v)

    def buf(register):
        def run():
            v = ck.begin()
            off = 0
            while off < n:
                k = min(ck.piece, n - off)
                p = ctypes.c_void_p()
                check(lib.ckpt_buf_get(v, k, ctypes.byref(p)), "buf_get")
                if register:
                    ck.register()
                view = torch.frombuffer((ctypes.c_uint8 * k).from_address(p.value),
                                        dtype=torch.uint8)
                view.copy_(dev[off:off + k])
                torch.cuda.synchronize()
                check(lib.ckpt_buf_submit(v, b"b.bin", p, k, off), "buf_submit")
                off += k
            return lambda: ck.commit(v)
        return run

    def buf_deep(depth):
        def run():
            v = ck.begin()
            off = 0
            fly = []
            while off < n or fly:
                if off < n and len(fly) < depth:
                    k = min(ck.piece, n - off)
                    p = ctypes.c_void_p()
                    check(lib.ckpt_buf_get(v, k, ctypes.byref(p)), "buf_get")
                    ck.register()
                    view = torch.frombuffer(
                        (ctypes.c_uint8 * k).from_address(p.value),
                        dtype=torch.uint8)
                    view.copy_(dev[off:off + k], non_blocking=True)
                    ev = torch.cuda.Event()
                    ev.record()
                    fly.append((p, k, off, ev))
                    off += k
                    continue
                p, k, o, ev = fly.pop(0)
                ev.synchronize()
                check(lib.ckpt_buf_submit(v, b"d.bin", p, k, o), "buf_submit")
            return lambda: ck.commit(v)
        return run

    ways = [("pinned", pinned_copy), ("pageable", pageable_copy),
            ("pinned+write", pinned_write), ("buf", buf(False)),
            ("buf+reg", buf(True)), ("buf+reg x4", buf_deep(4))]
    res = {w: [] for w, _ in ways}
    # The lease stays registered once a "+reg" way ran: those run last.
    for group in ([w for w in ways if "+reg" not in w[0]],
                  [w for w in ways if "+reg" in w[0]]):
        for _, fn in group:         # warm up each way once
            timed(fn)
        for _ in range(reps):       # interleaved, so drift hits all alike
            for w, fn in group:
                res[w].append(timed(fn))
    ck.unregister()
    base = statistics.median(r[0] for r in res["pinned"])
    print("# %s, %d MiB, lease %d MiB, piece %d MiB, %d reps (median)" %
          (torch.cuda.get_device_name(), mib, ck.lease >> 20, ck.piece >> 20, reps))
    print("%-14s %10s %10s %10s %10s" % ("way", "stall ms", "GB/s", "pinned/x",
                                         "LOCAL ms"))
    for w, _ in ways:
        t = statistics.median(r[0] for r in res[w])
        loc = statistics.median(r[1] for r in res[w])
        print("%-14s %10.1f %10.2f %10.2f %10s" % (
            w, t * 1e3, n / t / 1e9, base / t,
            "%.1f" % (loc * 1e3) if loc > t * 1.0001 else "-"))


if __name__ == "__main__":
    main()
