"""ckpt.Client and friends: the Python face of include/ckpt.h.

Every call goes straight to libckpt through ckpt._lib; ctypes releases the
GIL for the call, so a write (the copy into ckptd's staging memory) or a
wait does not hold up other Python threads.
"""

import ctypes
import io
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor

from . import _lib

_READ_BUFFER = 4 << 20


class CkptError(OSError):
    """A libckpt error: errno is the positive code (an errno value, or one
    of ckpt.h's CKPT_E* codes), strerror libckpt's message."""

    def __init__(self, code, what):
        msg = _lib.ckpt_strerror(-code).decode(errors="replace")
        super().__init__(code, "%s: %s" % (what, msg))


def _check(ret, what):
    if ret < 0:
        raise CkptError(-ret, what)
    return ret


def _b(s):
    return s.encode(errors="surrogateescape") if isinstance(s, str) else s


def _level(level):
    if isinstance(level, int):
        return level
    try:
        return _lib.LEVELS[level.lower()]
    except KeyError:
        raise ValueError("unknown level %r (staged, local, protected, "
                         "drained)" % (level,)) from None


def _ms(timeout):
    return -1 if timeout is None else max(0, int(timeout * 1000))


def _info_dict(vi):
    d = {
        "job": vi.job.decode(errors="surrogateescape"),
        "version": vi.version.decode(errors="surrogateescape"),
        "state": _lib.STATES.get(vi.state, "unknown"),
        "level": _lib.LEVEL_NAMES.get(vi.level, "unknown"),
        "uid": vi.uid, "writers": vi.writers, "committed": vi.committed,
        "files": vi.nfiles, "bytes": vi.bytes, "stored": vi.stored,
        "seq": vi.seq, "sealed_ns": vi.sealed_ns, "error": vi.error,
    }
    if vi.stall_writers:
        d["stall"] = {
            "writers": vi.stall_writers, "p50_ns": vi.stall_p50_ns,
            "p99_ns": vi.stall_p99_ns, "max_ns": vi.stall_max_ns,
            "slowest": {"pid": vi.slow_pid, "host": vi.slow_host.decode(),
                        "rank": vi.slow_rank if vi.slow_rank >= 0 else None},
        }
    return d


def _pointer(data):
    """(address, length, keepalive) of a bytes-like object's memory, without
    copying it where Python lets us."""
    if isinstance(data, bytes):
        buf = ctypes.c_char_p(data)
        return ctypes.cast(buf, ctypes.c_void_p).value, len(data), buf
    mv = memoryview(data)
    if not mv.contiguous:
        raise ValueError("ckpt: write needs a contiguous buffer")
    mv = mv.cast("B")
    if mv.readonly:
        b = mv.tobytes()                    # ctypes cannot point at it
        return _pointer(b)
    arr = (ctypes.c_char * len(mv)).from_buffer(mv)
    return ctypes.addressof(arr), len(mv), (arr, mv)


class Version:
    """One writer's share of an open version (ckpt_begin).  Used as a
    context manager it commits on success and aborts on an exception."""

    def __init__(self, client, job, version):
        self._client = client
        self.job = job
        self.version = version
        self._v = ctypes.c_void_p()
        self._orphaned = False
        _check(_lib.ckpt_begin(client._handle(), _b(job), _b(version),
                               ctypes.byref(self._v)),
               "begin %s/%s" % (job, version))
        client._versions.add(self)

    def _orphan(self):
        """The client is disconnecting: libckpt frees this version with it
        (and ckptd aborts it if uncommitted), so never touch it again."""
        self._v = ctypes.c_void_p()
        self._orphaned = True

    def write(self, path, data, offset=0):
        """Write the bytes of data (any contiguous buffer: bytes, bytearray,
        memoryview, a numpy array) at offset of path: one copy into
        staging."""
        if not self._v:
            raise ValueError("ckpt: version is closed")
        addr, n, keep = _pointer(data)
        if n:
            _check(_lib.ckpt_write(self._v, _b(path), addr, n, offset),
                   "write %s/%s/%s" % (self.job, self.version, path))
        del keep
        return n

    def put(self, path, obj):
        """Write obj as the whole file path: bytes-like objects as they are,
        a numpy array in .npy format (np.load reads it back), a torch tensor
        in torch.save format (torch.load reads it back)."""
        if _is_tensor(obj):
            with self.open(path, "wb") as f:
                import torch
                torch.save(obj, f)
            return
        if _is_ndarray(obj):
            _put_npy(self, path, obj)
            return
        self.write(path, obj)

    def open(self, path, mode="wb"):
        """A file object writing path in this version (not committed on
        close: the version is, by commit())."""
        if mode not in ("wb", "w+b", "bw"):
            raise ValueError("ckpt: a version's files are opened 'wb'")
        return VersionFile(self, path, owns_version=False)

    def commit(self):
        """Seal this writer's share; the version is STAGED once every
        writer has committed."""
        self._end(_lib.ckpt_commit, "commit")

    def abort(self):
        self._end(_lib.ckpt_abort, "abort")

    def _end(self, fn, what):
        if not self._v:
            if self._orphaned and fn is _lib.ckpt_commit:
                raise ValueError("ckpt: %s/%s: its client was closed "
                                 "first, which aborted it"
                                 % (self.job, self.version))
            return
        try:
            _check(fn(self._v), "%s %s/%s" % (what, self.job, self.version))
        finally:
            _lib.ckpt_version_free(self._v)
            self._v = ctypes.c_void_p()
            self._client._versions.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False

    def __del__(self):
        if getattr(self, "_v", None):
            try:
                self.abort()
            except Exception:
                pass


class VersionFile(io.RawIOBase):
    """A writable, seekable file of an open version: what torch.save(),
    np.save() and friends write into.  Opened by Client.open(..., "wb"), it
    is the version's only file and commits the version when closed (aborts
    it if closed while an exception propagates through a with block).

    Small writes are gathered (up to _GATHER bytes) so that a serialiser's
    many little headers do not each take a staging reservation; large ones
    (tensor storages, array data) go straight from the caller's memory into
    staging."""

    _GATHER = 1 << 20

    def __init__(self, version, path, owns_version):
        super().__init__()
        self._ver = version
        self.name = path
        self._pos = 0
        self._buf = bytearray()
        self._bufpos = 0
        self._owns = owns_version

    def writable(self):
        return True

    def seekable(self):
        return True

    def write(self, b):
        if self.closed:
            raise ValueError("write to a closed file")
        mv = memoryview(b).cast("B")
        n = len(mv)
        if self._buf and len(self._buf) + n > self._GATHER:
            self.flush()
        if n >= self._GATHER:
            self._ver.write(self.name, mv, self._pos)
        elif n:
            if not self._buf:
                self._bufpos = self._pos
            self._buf += mv
        self._pos += n
        return n

    def flush(self):
        if self._buf:
            buf, self._buf = self._buf, bytearray()
            self._ver.write(self.name, buf, self._bufpos)

    def seek(self, offset, whence=io.SEEK_SET):
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        else:
            raise io.UnsupportedOperation("ckpt: SEEK_END on a file being written")
        if pos < 0:
            raise ValueError("negative seek position")
        self.flush()
        self._pos = pos
        return pos

    def tell(self):
        return self._pos

    def close(self):
        if self.closed:
            return
        try:
            self.flush()
        except BaseException:
            super().close()
            if self._owns:
                self._ver.abort()
            raise
        super().close()
        if self._owns:
            self._ver.commit()

    def __del__(self):
        # Dropped without close(): never commit what may be half written.
        if not self.closed:
            self._buf = bytearray()
            io.RawIOBase.close(self)
            if self._owns:
                try:
                    self._ver.abort()
                except Exception:
                    pass

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and self._owns:
            self._buf = bytearray()
            super().close()
            self._ver.abort()
            return False
        return super().__exit__(exc_type, exc, tb)


class _Reader(io.RawIOBase):
    """A committed (or open) version's file, read through ckpt_read(): each
    byte checked against its CRC32C by ckptd.  Reads smaller than
    _WINDOW are served from a read-ahead window, so a deserialiser's many
    small reads do not each cost a round trip to ckptd.  (Not an
    io.BufferedReader: numpy takes those for OS files and asks for fileno.)"""

    _WINDOW = _READ_BUFFER

    def __init__(self, client, job, version, path):
        super().__init__()
        self._c = client
        self._job, self._ver, self.name = _b(job), _b(version), path
        fi = _lib.FileInfo()
        _check(_lib.ckpt_stat_file2(client._handle(), self._job, self._ver,
                                    _b(path), ctypes.byref(fi),
                                    ctypes.sizeof(fi)),
               "open %s/%s/%s" % (job, version, path))
        self._size = fi.size
        self._pos = 0
        self._win = bytearray()
        self._winpos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def _pread(self, mv, off):
        """Read len(mv) bytes at off into mv (short only at end of file)."""
        arr = (ctypes.c_char * len(mv)).from_buffer(mv)
        got = ctypes.c_size_t()
        _check(_lib.ckpt_read(self._c._handle(), self._job, self._ver,
                              _b(self.name), ctypes.addressof(arr), len(mv),
                              off, ctypes.byref(got)),
               "read %s" % self.name)
        del arr
        return got.value

    def readinto(self, b):
        mv = memoryview(b).cast("B")
        n = min(len(mv), max(0, self._size - self._pos))
        if n == 0:
            return 0
        if n >= self._WINDOW:
            got = self._pread(mv[:n], self._pos)
        else:
            start = self._pos - self._winpos
            if start < 0 or start + n > len(self._win):
                want = min(self._WINDOW, self._size - self._pos)
                self._win = bytearray(want)
                self._win = self._win[:self._pread(memoryview(self._win),
                                                   self._pos)]
                self._winpos = self._pos
                start = 0
            got = min(n, len(self._win) - start)
            mv[:got] = self._win[start:start + got]
        self._pos += got
        return got

    def read(self, size=-1):
        if size is None or size < 0:
            size = max(0, self._size - self._pos)
        buf = bytearray(min(size, max(0, self._size - self._pos)))
        n = self.readinto(buf) if buf else 0
        while 0 < n < len(buf):
            more = self.readinto(memoryview(buf)[n:])
            if more == 0:
                break
            n += more
        return bytes(buf[:n])

    def readall(self):
        return self.read(-1)

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos,
                io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def tell(self):
        return self._pos


def _is_tensor(obj):
    t = type(obj)
    return t.__module__.startswith("torch") and hasattr(obj, "detach")


def _is_ndarray(obj):
    return type(obj).__module__ == "numpy" and hasattr(obj, "dtype")


def _put_npy(version, path, arr):
    """An array as a .npy file: numpy's header, then the array's own memory
    (no copy beyond the one into staging, for a C-contiguous array)."""
    import numpy as np

    if arr.dtype.hasobject:
        raise TypeError("ckpt: arrays of Python objects cannot be saved")
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    meta = np.lib.format.header_data_from_array_1_0(arr)
    hdr = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(hdr, meta)
    except ValueError:                      # a header over 64 KiB
        hdr = io.BytesIO()
        np.lib.format.write_array_header_2_0(hdr, meta)
    head = hdr.getvalue()
    version.write(path, head, 0)
    version.write(path, arr.reshape(-1).view(np.uint8), len(head))


class Client:
    """A connection to the node's ckptd (ckpt_connect).  socket: ckptd's
    socket path; None means $CKPT_SOCKET, else the default.  Thread-safe:
    libckpt serialises calls on one connection."""

    def __init__(self, socket=None):
        self._c = ctypes.c_void_p()
        _check(_lib.ckpt_connect(_b(socket) if socket else None,
                                 ctypes.byref(self._c)), "connect")
        self._pool = None
        self._lock = threading.Lock()
        self._versions = weakref.WeakSet()  # begun here, not yet ended

    def _handle(self):
        if not self._c:
            raise ValueError("ckpt: client is closed")
        return self._c

    def close(self):
        """Disconnect.  Versions begun on this client and not committed are
        aborted by ckptd."""
        if self._pool:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._c:
            # ckpt_disconnect frees this client's versions: forget them
            # first, or a later commit/abort/__del__ would use freed memory.
            for v in list(self._versions):
                v._orphan()
            _lib.ckpt_disconnect(self._c)
            self._c = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- writing ---------------------------------------------------------

    def begin(self, job, version):
        """Start or join a version: a Version to write files into."""
        return Version(self, job, version)

    def open(self, job, version, path, mode="rb"):
        """A file of a version.  "rb": read it (seekable, buffered; what
        torch.load and np.load take; read-ahead of its own).  "wb": a new version holding this one
        file, committed when the file is closed."""
        if mode in ("rb", "br", "r"):
            return _Reader(self, job, version, path)
        if mode in ("wb", "bw", "w+b"):
            return VersionFile(self.begin(job, version), path,
                               owns_version=True)
        raise ValueError("ckpt: mode must be 'rb' or 'wb'")

    def _save_copy(self, job, version, items):
        with self.begin(job, version) as v:
            for path, obj in items.items():
                v.put(path, obj)

    def save(self, job, version, items, wait="local", timeout=None):
        """Write items ({path: bytes-like | numpy array | tensor}) as one
        version, commit it and wait until it reaches wait (a level name, or
        None not to wait).  Returns the level reached (or None)."""
        self._save_copy(job, version, items)
        if wait is None:
            return None
        return self.wait(job, version, wait, timeout)

    def save_async(self, job, version, items, wait="local", timeout=None):
        """save(), but returns once the items are copied into staging and
        the version committed: that copy is the caller's only stall, and the
        objects may be changed as soon as this returns.  The returned
        concurrent.futures.Future resolves to the level name once it is
        reached (or raises CkptError)."""
        self._save_copy(job, version, items)
        if wait is None:
            f = Future()
            f.set_result(None)
            return f
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=4, thread_name_prefix="ckpt-wait")
        return self._pool.submit(self.wait, job, version, wait, timeout)

    # ---- waiting and listing -----------------------------------------------

    def wait(self, job, version, level="local", timeout=None):
        """Wait until the version reaches level (seconds, None: forever).
        Returns the level name; raises CkptError (ETIMEDOUT, or why the
        version cannot get there)."""
        _check(_lib.ckpt_wait_name(self._handle(), _b(job), _b(version),
                                   _level(level), _ms(timeout)),
               "wait %s/%s" % (job, version))
        return _lib.LEVEL_NAMES[_level(level)]

    def latest(self, job, level="local"):
        """The newest committed version of job at level or above, or None."""
        buf = ctypes.create_string_buffer(_lib.VERSION_MAX + 1)
        ret = _lib.ckpt_latest(self._handle(), _b(job), _level(level), buf,
                               len(buf))
        if ret in (-_lib.ENOVERSION, -_lib.ENOJOB):
            return None
        _check(ret, "latest %s" % job)
        return buf.value.decode(errors="surrogateescape")

    def list(self, job=None):
        """Without job: the job names.  With job: its versions, as dicts
        (the fields of ckptctl --json ls JOB)."""
        out = ctypes.c_void_p()
        if job is None:
            n = _check(_lib.ckpt_list_jobs(self._handle(), ctypes.byref(out)),
                       "list jobs")
            try:
                rec = ctypes.c_char * (_lib.JOB_MAX + 1)
                arr = (rec * n).from_address(out.value) if n else []
                return [bytes(a).split(b"\0", 1)[0].decode(errors="surrogateescape")
                        for a in arr]
            finally:
                _lib.free(out)
        n = _check(_lib.ckpt_list_versions2(self._handle(), _b(job),
                                            ctypes.byref(out),
                                            ctypes.sizeof(_lib.VersionInfo)),
                   "list %s" % job)
        try:
            arr = (_lib.VersionInfo * n).from_address(out.value) if n else []
            return sorted((_info_dict(v) for v in arr),
                          key=lambda d: (d["seq"] == 0, d["seq"]))
        finally:
            _lib.free(out)

    def stat(self, job, version):
        """One version, as a dict (as list(job) gives them)."""
        vi = _lib.VersionInfo()
        _check(_lib.ckpt_stat_version2(self._handle(), _b(job), _b(version),
                                       ctypes.byref(vi), ctypes.sizeof(vi)),
               "stat %s/%s" % (job, version))
        return _info_dict(vi)

    def files(self, job, version):
        """The files of a version: [{"path", "size"}]."""
        out = ctypes.c_void_p()
        n = _check(_lib.ckpt_list_files2(self._handle(), _b(job), _b(version),
                                         ctypes.byref(out),
                                         ctypes.sizeof(_lib.FileInfo)),
                   "files %s/%s" % (job, version))
        try:
            arr = (_lib.FileInfo * n).from_address(out.value) if n else []
            return [{"path": f.path.decode(errors="surrogateescape"), "size": f.size}
                    for f in arr]
        finally:
            _lib.free(out)

    def read(self, job, version, path):
        """A whole file's bytes."""
        with self.open(job, version, path, "rb") as f:
            return f.read()
