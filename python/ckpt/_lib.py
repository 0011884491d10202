"""ctypes bindings of libckpt (include/ckpt.h): the only module that touches C.

The library is found as $CKPT_LIBRARY, else where `make install` put it
(_INSTALLED: $(LIBDIR), which the dynamic linker may not search, e.g.
/usr/local/lib before ldconfig runs), else by the linker's search
(``ctypes.util.find_library("ckpt")``), else as ``libckpt.so.1``.  Structs
that libckpt fills are read with the ``*2`` calls, which take the size this
module was written against (include/ckpt.h, "Growing structs"), so a newer
or older libckpt works with this module as with any C program.
"""

import ctypes
import ctypes.util
import os

JOB_MAX = 200
VERSION_MAX = 128
PATH_MAX = 1024
REASON_MAX = 127
HOST_MAX = 63
UID_SELF = 0xFFFFFFFF

LEVELS = {"none": 0, "staged": 1, "local": 2, "protected": 3, "drained": 4}
LEVEL_NAMES = {v: k for k, v in LEVELS.items()}
STATES = {1: "open", 2: "sealing", 3: "sealed", 4: "failed", 5: "incomplete",
          6: "damaged"}

# Library error codes (CKPT_E*), returned negated.
ENOVERSION = 30607
ENOJOB = 30609


class VersionInfo(ctypes.Structure):
    """struct ckpt_version_info, as of this module."""
    _fields_ = [
        ("job", ctypes.c_char * (JOB_MAX + 1)),
        ("version", ctypes.c_char * (VERSION_MAX + 1)),
        ("state", ctypes.c_uint32),
        ("level", ctypes.c_uint32),
        ("uid", ctypes.c_uint32),
        ("writers", ctypes.c_uint32),
        ("committed", ctypes.c_uint32),
        ("nfiles", ctypes.c_uint32),
        ("bytes", ctypes.c_uint64),
        ("stored", ctypes.c_uint64),
        ("seq", ctypes.c_uint64),
        ("sealed_ns", ctypes.c_uint64),
        ("error", ctypes.c_int32),
        ("copies", ctypes.c_uint32),
        ("reason", ctypes.c_char * (REASON_MAX + 1)),
        ("stall_writers", ctypes.c_uint32),
        ("slow_rank", ctypes.c_int32),
        ("stall_p50_ns", ctypes.c_uint64),
        ("stall_p99_ns", ctypes.c_uint64),
        ("stall_max_ns", ctypes.c_uint64),
        ("slow_pid", ctypes.c_uint32),
        ("slow_host", ctypes.c_char * (HOST_MAX + 1)),
    ]


class FileInfo(ctypes.Structure):
    """struct ckpt_file_info, as of this module."""
    _fields_ = [
        ("path", ctypes.c_char * (PATH_MAX + 1)),
        ("size", ctypes.c_uint64),
        ("extents", ctypes.c_uint32),
    ]


# Set by `make install` to the installed library; None in the source tree.
_INSTALLED = None


def _load():
    name = os.environ.get("CKPT_LIBRARY")
    if not name and _INSTALLED and os.path.exists(_INSTALLED):
        name = _INSTALLED
    name = name or ctypes.util.find_library("ckpt")
    return ctypes.CDLL(name or "libckpt.so.1", use_errno=False)


lib = _load()
libc = ctypes.CDLL(None)

_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int


def _fn(name, argtypes, restype=_I):
    f = getattr(lib, name)
    f.argtypes = argtypes
    f.restype = restype
    return f


ckpt_connect = _fn("ckpt_connect", [_S, ctypes.POINTER(_P)])
ckpt_disconnect = _fn("ckpt_disconnect", [_P], None)
ckpt_begin = _fn("ckpt_begin", [_P, _S, _S, ctypes.POINTER(_P)])
ckpt_write = _fn("ckpt_write", [_P, _S, _P, ctypes.c_size_t, ctypes.c_uint64])
ckpt_commit = _fn("ckpt_commit", [_P])
ckpt_abort = _fn("ckpt_abort", [_P])
ckpt_version_free = _fn("ckpt_version_free", [_P], None)
ckpt_wait_name = _fn("ckpt_wait_name", [_P, _S, _S, _I, _I])
ckpt_latest = _fn("ckpt_latest", [_P, _S, _I, _S, ctypes.c_size_t])
ckpt_read = _fn("ckpt_read", [_P, _S, _S, _S, _P, ctypes.c_size_t,
                              ctypes.c_uint64, ctypes.POINTER(ctypes.c_size_t)])
ckpt_list_jobs = _fn("ckpt_list_jobs", [_P, ctypes.POINTER(_P)])
ckpt_list_versions2 = _fn("ckpt_list_versions2",
                          [_P, _S, ctypes.POINTER(_P), ctypes.c_size_t])
ckpt_list_files2 = _fn("ckpt_list_files2",
                       [_P, _S, _S, ctypes.POINTER(_P), ctypes.c_size_t])
ckpt_stat_version2 = _fn("ckpt_stat_version2",
                         [_P, _S, _S, ctypes.POINTER(VersionInfo),
                          ctypes.c_size_t])
ckpt_stat_file2 = _fn("ckpt_stat_file2",
                      [_P, _S, _S, _S, ctypes.POINTER(FileInfo),
                       ctypes.c_size_t])
ckpt_strerror = _fn("ckpt_strerror", [_I], _S)
free = libc.free
free.argtypes = [_P]
free.restype = None
