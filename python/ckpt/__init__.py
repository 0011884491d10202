"""ckpt: Python client of the ckpt checkpoint burst buffer.

A thin layer over libckpt (ctypes; nothing to compile)::

    import ckpt, torch

    c = ckpt.Client()                       # $CKPT_SOCKET or the default
    with c.open("llama/run3", "step-100", "model.pt", "wb") as f:
        torch.save(model.state_dict(), f)   # one file: committed on close
    c.wait("llama/run3", "step-100", "local")
    with c.open("llama/run3", c.latest("llama/run3"), "model.pt", "rb") as f:
        sd = torch.load(f)

    # Several files in one version, arrays written straight from memory:
    fut = c.save_async("llama/run3", "step-200",
                       {"w.npy": weights, "meta.json": b"{}"}, wait="drained")
    ...                                     # training goes on
    fut.result()                            # "drained"

Levels are "staged", "local", "protected" and "drained" (ckpt.h).  Errors
are raised as CkptError (an OSError whose errno is the positive error code,
with libckpt's message).

The layout leaves room for a torch.distributed.checkpoint StorageWriter and
StorageReader (a ckpt.dcp module over Client.begin() and Client.open()),
once Debian's torch can import that module.
"""

from .client import Client, Version, CkptError, VersionFile

__all__ = ["Client", "Version", "VersionFile", "CkptError"]
