"""mkccl for Python programs: mkccl's libnccl.so.2 in place of NVIDIA's NCCL.

Two ways to swap, both one step:

* ``mkccl-exec torchrun --nproc-per-node 2 train.py`` (or ``python -m mkccl
  ...``): runs the command, and every process it starts, with mkccl's library
  preloaded (LD_PRELOAD). Nothing in the program changes.
* ``import mkccl; mkccl.preload()`` before ``import torch`` (or cupy): loads
  mkccl's libnccl.so.2 into this process, so that when torch's CUDA library
  asks for libnccl.so.2 the dynamic linker hands it the one already loaded.

The library finds its plugins and manifest next to itself (``lib/mkccl/``);
``mkccl-info`` lists them.
"""

import ctypes
import os

__all__ = ["LIB_DIR", "BIN_DIR", "library_path", "preload", "version"]

_HERE = os.path.dirname(os.path.abspath(__file__))
LIB_DIR = os.path.join(_HERE, "lib")
BIN_DIR = os.path.join(_HERE, "bin")

_loaded = None


def library_path():
    """The path of the packaged libnccl.so.2."""
    return os.path.join(LIB_DIR, "libnccl.so.2")


def preload():
    """Loads mkccl's libnccl.so.2 (once) with RTLD_GLOBAL and returns it.

    Call it before anything loads NCCL: a process that holds NVIDIA's
    libnccl.so.2 already keeps it."""
    global _loaded
    if _loaded is None:
        _loaded = ctypes.CDLL(library_path(), mode=ctypes.RTLD_GLOBAL)
    return _loaded


def version():
    """ncclGetVersion of the packaged library, as NCCL encodes it (22809)."""
    lib = preload()
    v = ctypes.c_int(0)
    res = lib.ncclGetVersion(ctypes.byref(v))
    if res != 0:
        raise RuntimeError("ncclGetVersion failed: %d" % res)
    return v.value
