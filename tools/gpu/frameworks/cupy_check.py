"""CuPy's NCCL binding (cupy.cuda.nccl) on mkccl: communicators, every
reduction op on every NCCL type, the other collectives and grouped
send/recv, each result checked on every rank, then the proof that mkccl
served (as torch_check.py does it).

  mkccl-exec python3 tools/gpu/frameworks/cupy_check.py --nranks 2
starts the ranks as processes (this program again with --rank R), one per
GPU where there are enough, sharing one otherwise (MKCCL_ALLOW_SAME_GPU=1).
Lines: PASS name / FAIL name: why / NOTRUN name: why; exit 1 if any rank
failed. Environment as torch_check.py: FW_MKCCL_LIB, FW_EXPECT,
FW_DEADLINE_S, FW_PID_DIR, NCCL_DEBUG=INFO, NCCL_DEBUG_FILE=..._%p.log."""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwlib  # noqa: E402
from fwlib import CheckFailed, NotRun, compare, run_check  # noqa: E402

# nccl.h's enums; CuPy's constants are used where it has them (and must agree).
NCCL_TYPES = {"int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5, "float16": 6,
              "float32": 7, "float64": 8, "bfloat16": 9, "float8_e4m3fn": 10, "float8_e5m2": 11}
CUPY_TYPE_NAMES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32", "uint32": "NCCL_UINT32",
                   "int64": "NCCL_INT64", "uint64": "NCCL_UINT64", "float16": "NCCL_FLOAT16",
                   "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "bfloat16": "NCCL_BFLOAT16"}
NCCL_OPS = {"SUM": 0, "PRODUCT": 1, "MAX": 2, "MIN": 3, "AVG": 4}
CUPY_OP_NAMES = {"SUM": "NCCL_SUM", "PRODUCT": "NCCL_PROD", "MAX": "NCCL_MAX", "MIN": "NCCL_MIN",
                 "AVG": "NCCL_AVG"}


def launch(n, argv0):
    """Starts n ranks and waits; the exit code is 1 if any rank failed."""
    uid = "/tmp/fw_cupy_uid_%d_%d.json" % (os.getpid(), int(time.time()))
    procs = [subprocess.Popen([sys.executable, argv0, "--rank", str(r), "--nranks", str(n), "--uid-file", uid])
             for r in range(n)]
    limit = float(os.environ.get("FW_DEADLINE_S", "150")) + 15
    end = time.monotonic() + limit
    rcs = []
    for p in procs:
        try:
            rcs.append(p.wait(timeout=max(1, end - time.monotonic())))
        except subprocess.TimeoutExpired:
            p.kill()
            rcs.append(p.wait())
            print("FAIL cupy.launch: rank process %d did not end in %d s" % (p.pid, limit), flush=True)
    try:
        os.unlink(uid)
    except OSError:
        pass
    print("RESULT cupy launcher: rank exit codes %s" % rcs, flush=True)
    return 0 if all(rc == 0 for rc in rcs) else 1


def rank_main(rank, n, uid_file):
    rep = fwlib.Report(rank, n)
    fwlib.write_pid(os.environ.get("FW_PID_DIR"))
    deadline = fwlib.Bound(rep, "cupy_check.deadline", float(os.environ.get("FW_DEADLINE_S", "150")), code=125)
    deadline.__enter__()
    try:
        import cupy
        import numpy as np
        from cupy.cuda import nccl
    except ImportError as e:
        rep.notrun("cupy", "CuPy or its NCCL binding cannot be imported: %s" % e)
        return 0
    if not getattr(nccl, "available", True):
        rep.notrun("cupy", "cupy.cuda.nccl is not available (CuPy found no NCCL)")
        return 0
    ndev = cupy.cuda.runtime.getDeviceCount()
    cupy.cuda.Device(rank % ndev).use()
    # The current stream, so that the arrays' fills and copies come before the
    # collectives on it and their results before the reads.
    stream = cupy.cuda.Stream(non_blocking=True)
    stream.use()
    comm = None

    def init():
        nonlocal comm
        if rank == 0:
            uid = nccl.get_unique_id()
            tmp = uid_file + ".tmp"
            # A tuple of ints in older CuPy, bytes in newer: passed on as it came.
            with open(tmp, "w") as f:
                json.dump({"hex": uid.hex()} if isinstance(uid, bytes) else list(uid), f)
            os.rename(tmp, uid_file)
        else:
            end = time.monotonic() + 60
            while not os.path.exists(uid_file):
                if time.monotonic() > end:
                    raise CheckFailed("rank 0's unique id never came")
                time.sleep(0.05)
            with open(uid_file) as f:
                got = json.load(f)
            uid = bytes.fromhex(got["hex"]) if isinstance(got, dict) else tuple(got)
        comm = nccl.NcclCommunicator(n, uid, rank)
        if comm.rank_id() != rank or comm.size() != n:
            raise CheckFailed("communicator says rank %d of %d" % (comm.rank_id(), comm.size()))
        return "NCCL %s as CuPy sees it" % nccl.get_version()

    if not run_check(rep, "cupy.init", init, 90):
        return 1

    def nccl_type(name):
        const = CUPY_TYPE_NAMES.get(name)
        if const and hasattr(nccl, const) and getattr(nccl, const) != NCCL_TYPES[name]:
            raise CheckFailed("CuPy's %s is %d, nccl.h's %d" % (const, getattr(nccl, const), NCCL_TYPES[name]))
        return NCCL_TYPES[name]

    def to_device(values, name):
        """A CuPy array of the values' bits in NCCL's type (bfloat16 and fp8
        as their bit patterns: numpy has neither)."""
        if name == "bfloat16":
            bits = (np.array(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
            return cupy.asarray(bits)
        if name in fwlib.FP8:
            return cupy.asarray(np.array([fwlib.fp8_encode(v, name) for v in values], dtype=np.uint8))
        return cupy.asarray(np.array(values, dtype=getattr(np, name)))

    def from_device(arr, name):
        host = cupy.asnumpy(arr)
        if name == "bfloat16":
            return (host.astype(np.uint32) << 16).view(np.float32).astype(np.float64).tolist()
        if name in fwlib.FP8:
            return [fwlib.fp8_decode(int(b), name) for b in host]
        return host.tolist()

    def empty(count, name):
        like = to_device([0] * count if fwlib.DTYPES[name][0] != "float" else [0.0] * count, name)
        return cupy.full_like(like, 0)

    def sync():
        stream.synchronize()

    count = int(os.environ.get("FW_COUNT", "1031"))
    salt = 0
    for name in NCCL_TYPES:
        for op in NCCL_OPS:
            salt += 1

            def case(name=name, op=op, salt=salt):
                ins = fwlib.reduce_input(name, op, n, rank, count, salt)
                src, dst = to_device(ins, name), empty(count, name)
                opc = NCCL_OPS[op]
                if hasattr(nccl, CUPY_OP_NAMES[op]) and getattr(nccl, CUPY_OP_NAMES[op]) != opc:
                    raise CheckFailed("CuPy's %s is not nccl.h's %d" % (CUPY_OP_NAMES[op], opc))
                comm.allReduce(src.data.ptr, dst.data.ptr, count, nccl_type(name), opc, stream.ptr)
                sync()
                exp, tol = fwlib.expected_reduce(name, op, n, count, salt)
                compare(from_device(dst, name), exp, tol)

            run_check(rep, "cupy.allReduce.%s.%s" % (name, op), case, 30)

    cv = fwlib.coll_value
    f32 = NCCL_TYPES["float32"]

    def farr(values):
        return cupy.asarray(np.array(values, dtype=np.float32))

    def bcast():
        root = n - 1
        buf = farr([cv(rank, i, 11) for i in range(count)])
        comm.bcast(buf.data.ptr, count, f32, root, stream.ptr)
        sync()
        compare(cupy.asnumpy(buf).tolist(), [cv(root, i, 11) for i in range(count)])
        return "root %d, in place" % root

    def broadcast():
        root = 0
        src, dst = farr([cv(rank, i, 12) for i in range(count)]), farr([-1.0] * count)
        comm.broadcast(src.data.ptr, dst.data.ptr, count, f32, root, stream.ptr)
        sync()
        compare(cupy.asnumpy(dst).tolist(), [cv(root, i, 12) for i in range(count)])

    def reduce():
        root = (n // 2) % n
        src, dst = farr([cv(rank, i, 13) for i in range(count)]), farr([-1.0] * count)
        comm.reduce(src.data.ptr, dst.data.ptr, count, f32, NCCL_OPS["SUM"], root, stream.ptr)
        comm.bcast(dst.data.ptr, count, f32, root, stream.ptr)  # root's result, checked everywhere
        sync()
        compare(cupy.asnumpy(dst).tolist(), [sum(cv(r, i, 13) for r in range(n)) for i in range(count)])
        return "root %d's result, broadcast, checked here" % root

    def all_gather():
        src, dst = farr([cv(rank, i, 14) for i in range(count)]), farr([-1.0] * (n * count))
        comm.allGather(src.data.ptr, dst.data.ptr, count, f32, stream.ptr)
        sync()
        compare(cupy.asnumpy(dst).tolist(), [cv(j, i, 14) for j in range(n) for i in range(count)])

    def reduce_scatter():
        src, dst = farr([cv(rank, i, 15) for i in range(n * count)]), farr([-1.0] * count)
        comm.reduceScatter(src.data.ptr, dst.data.ptr, count, f32, NCCL_OPS["SUM"], stream.ptr)
        sync()
        compare(cupy.asnumpy(dst).tolist(), [sum(cv(r, rank * count + k, 15) for r in range(n)) for k in range(count)])

    def send_recv():
        if n < 2:
            raise NotRun("one rank")
        if not (hasattr(comm, "send") and hasattr(nccl, "groupStart")):
            raise NotRun("this CuPy has no NcclCommunicator.send or nccl.groupStart")
        nxt, prv = (rank + 1) % n, (rank - 1) % n
        src, dst = farr([cv(rank, i, 16) for i in range(count)]), farr([-1.0] * count)
        nccl.groupStart()
        comm.send(src.data.ptr, count, f32, nxt, stream.ptr)
        comm.recv(dst.data.ptr, count, f32, prv, stream.ptr)
        nccl.groupEnd()
        sync()
        compare(cupy.asnumpy(dst).tolist(), [cv(prv, i, 16) for i in range(count)])
        return "a ring in one group"

    def grouped_colls():
        if not hasattr(nccl, "groupStart"):
            raise NotRun("this CuPy has no nccl.groupStart")
        a = farr(fwlib.reduce_input("float32", "SUM", n, rank, count, 17))
        b = farr(fwlib.reduce_input("float32", "MAX", n, rank, 77, 18))
        nccl.groupStart()
        comm.allReduce(a.data.ptr, a.data.ptr, count, f32, NCCL_OPS["SUM"], stream.ptr)
        comm.allReduce(b.data.ptr, b.data.ptr, 77, f32, NCCL_OPS["MAX"], stream.ptr)
        nccl.groupEnd()
        sync()
        compare(cupy.asnumpy(a).tolist(), fwlib.expected_reduce("float32", "SUM", n, count, 17)[0])
        compare(cupy.asnumpy(b).tolist(), fwlib.expected_reduce("float32", "MAX", n, 77, 18)[0])
        return "two in-place all-reduces in one group"

    for cname, fn in (("cupy.bcast", bcast), ("cupy.broadcast", broadcast), ("cupy.reduce", reduce),
                      ("cupy.allGather", all_gather), ("cupy.reduceScatter", reduce_scatter),
                      ("cupy.send_recv.group", send_recv), ("cupy.group.allReduce", grouped_colls)):
        run_check(rep, cname, fn, 30)

    def proof():
        # The compiled module that calls NCCL (cupy.cuda.nccl re-exports it).
        mod = sys.modules.get(getattr(nccl.NcclCommunicator, "__module__", ""), nccl)
        lib = getattr(mod, "__file__", None) or ""
        if not lib.endswith(".so") or fwlib.symbol_in(lib, "ncclAllReduce") is None:
            # It does not link NCCL itself: prove on the copy a load by name gets.
            lib = "libnccl.so.2"
        text = None
        path = fwlib.log_path_for(os.environ.get("NCCL_DEBUG_FILE", ""))
        if path and os.path.exists(path):
            with open(path, errors="replace") as f:
                text = f.read()
        mk = os.environ.get("FW_MKCCL_LIB", "")
        pr = fwlib.prove(lib, mk or "/nonexistent", "ncclAllReduce", text, [(rank, n)])
        for fact in pr["facts"]:
            print("INFO proof: %s [rank %d/%d]" % (fact, rank, n), flush=True)
        if os.environ.get("FW_EXPECT", "mkccl") == "nvidia":
            if pr["verdict"] != "nvidia":
                raise CheckFailed("expected NVIDIA's NCCL, found %s: %s" % (pr["verdict"], pr["problems"]))
            return "served by NVIDIA (%s)" % pr["nvidia_file"]
        if not mk:
            raise CheckFailed("FW_MKCCL_LIB is not set (mkccl-exec --lib)")
        if text is None:
            raise CheckFailed("no NCCL log to read (NCCL_DEBUG=INFO, NCCL_DEBUG_FILE=..._%p.log)")
        for part in ("binding", "global", "log"):
            if pr["parts"][part]:
                rep.failed("cupy.proof." + part, "; ".join(pr["parts"][part]))
            else:
                rep.passed("cupy.proof." + part)
        if pr["verdict"] != "mkccl":
            raise CheckFailed("verdict %s: %s" % (pr["verdict"], "; ".join(pr["problems"])))
        return "served by mkccl (%s, checked through %s)" % (mk, os.path.basename(lib))

    run_check(rep, "cupy.proof", proof, 30)
    run_check(rep, "cupy.destroy", lambda: comm.destroy(), 30)
    print("RESULT rank %d/%d: %d PASS, %d FAIL, %d NOTRUN" % (
        rank, n, rep.counts["PASS"], rep.counts["FAIL"], rep.counts["NOTRUN"]), flush=True)
    return 1 if rep.counts["FAIL"] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nranks", type=int, default=2)
    ap.add_argument("--rank", type=int)
    ap.add_argument("--uid-file")
    a = ap.parse_args()
    if a.rank is None:
        return launch(a.nranks, os.path.abspath(__file__))
    return rank_main(a.rank, a.nranks, a.uid_file)


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    os._exit(rc)
