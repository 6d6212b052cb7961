"""Loads a library that calls NCCL (fw_user.c) the way torch loads
libtorch_cuda.so, calls it, and prints fwlib.prove's answer as JSON.
  proof_probe.py FWLIB_DIR USER_LIB MKCCL_LIB [PREMAP_LIB]
PREMAP_LIB is mapped first with RTLD_GLOBAL, as torch preloads its own NCCL;
FW_PROBE_SYMBOL names the symbol to follow (default ncclGetVersion)."""
import ctypes
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import fwlib  # noqa: E402

user, mk = sys.argv[2], sys.argv[3]
if len(sys.argv) > 4:
    ctypes.CDLL(sys.argv[4], mode=os.RTLD_GLOBAL)
version = ctypes.CDLL(user).fw_user_version()
proof = fwlib.prove(user, mk, symbol=os.environ.get("FW_PROBE_SYMBOL", "ncclGetVersion"))
proof["version"] = version
print(json.dumps(proof))
