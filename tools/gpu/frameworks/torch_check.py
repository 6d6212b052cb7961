"""PyTorch's ProcessGroupNCCL on mkccl: every path a training job takes,
each result checked against its expected value on every rank, then the
proof that mkccl's libnccl.so.2, not NVIDIA's, served the calls.

Run under torchrun, through mkccl-exec (tools/gpu/frameworks.sh does):
  mkccl-exec python3 -m torch.distributed.run --standalone --nproc-per-node 2 \\
      tools/gpu/frameworks/torch_check.py
One rank per GPU where there are enough (rank % device count); ranks share
a GPU otherwise (mkccl needs MKCCL_ALLOW_SAME_GPU=1 for that).

Each check prints, on every rank, PASS name / FAIL name: why / NOTRUN name:
why (the installed torch lacks it: never a pass); the process exits 1 if
any rank failed one. Environment:
  FW_MKCCL_LIB    mkccl's library (mkccl-exec --lib), for the proof
  FW_EXPECT       mkccl (default) or nvidia: which library must have served
  FW_CHECKS       comma-separated groups (default all): init smoke allreduce
                  colls groups ddp fsdp graph mempool abort shrink symm_mem proof
  FW_DEADLINE_S   bound on the whole run (default 240 s)
  FW_HOSTID_PER_RANK=1  NCCL_HOSTID differs by rank (NVIDIA's NCCL then
                  takes ranks sharing a GPU for ranks on different hosts)
  FW_PID_DIR      where each rank leaves its pid (the shell ends leftovers)
  NCCL_DEBUG=INFO NCCL_DEBUG_FILE=DIR/torch_%h_%p.log  the log the proof reads
"""

import copy
import datetime
import inspect
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwlib  # noqa: E402
from fwlib import CheckFailed, NotRun, compare, run_check  # noqa: E402

RANK = int(os.environ.get("RANK", "0"))
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
LOCAL = int(os.environ.get("LOCAL_RANK", str(RANK)))
EXPECT = os.environ.get("FW_EXPECT", "mkccl")
MKLIB = os.environ.get("FW_MKCCL_LIB", "")
CHECKS = set(os.environ.get("FW_CHECKS", "all").split(","))
COUNT = int(os.environ.get("FW_COUNT", "1031"))
REP = fwlib.Report(RANK, WORLD)
# (rank in the communicator, its size) of every communicator this rank made
# and used: the NCCL log must show each complete.
COMMS = []
INFO = []

if os.environ.get("FW_HOSTID_PER_RANK") == "1":
    os.environ["NCCL_HOSTID"] = "fwhost%d" % RANK
fwlib.write_pid(os.environ.get("FW_PID_DIR"))
_deadline = fwlib.Bound(REP, "torch_check.deadline", float(os.environ.get("FW_DEADLINE_S", "240")), code=125)
_deadline.__enter__()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

DEV = None
GROUP_MEMBER = getattr(dist, "GroupMember", None)


def want(group):
    return "all" in CHECKS or group in CHECKS


def info(text):
    INFO.append(text)
    print("INFO %s [rank %d/%d]" % (text, RANK, WORLD), flush=True)


# --------------------------------------------------------------- tensors

def tdtype(name):
    td = getattr(torch, name, None)
    if td is None:
        raise NotRun("torch %s has no torch.%s" % (torch.__version__, name))
    return td


def make(values, name):
    """A tensor on this rank's GPU holding values exactly (fp8 and unsigned
    types built from their bits, so no conversion kernel is needed)."""
    td = tdtype(name)
    try:
        if name in fwlib.FP8:
            t = torch.tensor([fwlib.fp8_encode(v, name) for v in values], dtype=torch.uint8).view(td)
        elif name == "uint32":
            t = torch.tensor(values, dtype=torch.int32).view(td)
        elif name == "uint64":
            t = torch.tensor(values, dtype=torch.int64).view(td)
        elif name == "bool":
            t = torch.tensor(values, dtype=torch.bool)
        elif fwlib.DTYPES[name][0] == "float":
            t = torch.tensor(values, dtype=torch.float64).to(td)
        else:
            t = torch.tensor(values, dtype=td)
    except (RuntimeError, TypeError) as e:
        raise NotRun("torch cannot make a %s tensor on the CPU: %s" % (name, e))
    return t.to(DEV)  # a CUDA error here is a failure, not a missing feature


def read(t, name):
    t = t.detach().cpu()
    if name in fwlib.FP8:
        return [fwlib.fp8_decode(b, name) for b in t.view(torch.uint8).tolist()]
    if name == "uint32":
        return t.view(torch.int32).tolist()
    if name == "uint64":
        return t.view(torch.int64).tolist()
    if name != "bool" and fwlib.DTYPES[name][0] == "float":
        return t.to(torch.float64).tolist()
    return t.tolist()


def f32(values):
    return make(values, "float32")


def refusal(e):
    """torch's own refusal of a call (a type or op it does not pass to NCCL),
    as a NOTRUN reason; an NCCL error is never one."""
    first = str(e).strip().split("\n")[0]
    backend_error = getattr(dist, "DistBackendError", None)
    if backend_error and isinstance(e, backend_error):
        return None
    if re.search(r"NCCL error|nccl[A-Z][a-zA-Z]*(Error|Usage|Argument)", first):
        return None
    if re.search(r"float8.*support|unsupported (data ?type|dtype)|not supported|premulsum data type|"
                 r"cannot use reduceop|does not support", first, re.I):
        return "torch refuses it: " + " ".join(first.split())[:200]
    return None


def default_store():
    return dist.distributed_c10d._get_default_store()


def member(g):
    return g is not None and not (GROUP_MEMBER is not None and g == GROUP_MEMBER.NON_GROUP_MEMBER)


def has_param(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def new_group(ranks, eager=True, **kw):
    if eager and has_param(dist.new_group, "device_id"):
        kw["device_id"] = DEV
    return dist.new_group(ranks=ranks, **kw)


# ------------------------------------------------------------------ init

def log_text():
    path = fwlib.log_path_for(os.environ.get("NCCL_DEBUG_FILE", ""))
    if not path or not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        return f.read()


def init():
    timeout = datetime.timedelta(seconds=float(os.environ.get("FW_PG_TIMEOUT_S", "120")))
    eager = has_param(dist.init_process_group, "device_id")
    with fwlib.Bound(REP, "init", 120):
        if eager:
            dist.init_process_group("nccl", device_id=DEV, timeout=timeout)
        else:
            dist.init_process_group("nccl", timeout=timeout)
    COMMS.append((RANK, WORLD))

    def eager_made():
        if not eager:
            raise NotRun("init_process_group has no device_id in torch %s" % torch.__version__)
        text = log_text()
        if text is None:
            raise NotRun("no NCCL log to read (NCCL_DEBUG=INFO, NCCL_DEBUG_FILE)")
        c = fwlib.log_comms(text)
        if (RANK, WORLD) not in c["mkccl"] + c["nvidia"]:
            raise CheckFailed("no Init COMPLETE for rank %d of %d before any collective" % (RANK, WORLD))
        return "the communicator was complete before the first collective"

    if want("init"):
        run_check(REP, "init.eager", eager_made, 30)


# ------------------------------------------------------------ all-reduce

def allreduce_case(dtype, op, where=None, salt=0):
    ins = fwlib.reduce_input(dtype, op, WORLD, RANK, COUNT, salt)
    t = make(ins, dtype)
    factor = None
    if op == "PREMUL_SUM":
        mk = getattr(dist, "_make_nccl_premul_sum", None)
        if mk is None:
            raise NotRun("torch.distributed._make_nccl_premul_sum is missing")
        given, factor = fwlib.premul_factor(dtype, where)
        if where == "host":
            rop = mk(given)
        else:
            # torch reads a bfloat16 operation's factor tensor as float32.
            ftype = torch.float32 if dtype == "bfloat16" else tdtype(dtype)
            rop = mk(torch.tensor([given], dtype=ftype, device=DEV))
    else:
        rop = getattr(dist.ReduceOp, op)
    dist.all_reduce(t, op=rop)
    exp, tol = fwlib.expected_reduce(dtype, op, WORLD, COUNT, salt, factor=factor)
    compare(read(t, dtype), exp, tol)


def check_allreduce():
    fp8 = {d: {"ran": [], "refused": [], "failed": []} for d in fwlib.FP8}
    salt = 0
    for dtype in fwlib.DTYPES:
        ops = ["SUM", "PRODUCT", "MIN", "MAX"] + ([] if dtype == "bool" else ["AVG"])
        cases = [(op, None) for op in ops]
        if dtype in fwlib.PREMUL_DTYPES:
            cases += [("PREMUL_SUM", "host"), ("PREMUL_SUM", "device")]
        for op, where in cases:
            salt += 1
            name = "allreduce.%s.%s%s" % (dtype, op, "." + where if where else "")
            reason = []

            def classify(e, reason=reason):
                r = refusal(e)
                reason.append(r)
                return r

            ok = run_check(REP, name, lambda: allreduce_case(dtype, op, where, salt), 30, classify)
            if dtype in fp8:
                fp8[dtype]["ran" if ok else "refused" if reason and reason[-1] else "failed"].append(op)
    for d, how in fp8.items():
        info("%s all_reduce: torch passed %s to NCCL; refused %s; failed %s" % (
            d, ",".join(how["ran"]) or "none", ",".join(how["refused"]) or "none", ",".join(how["failed"]) or "none"))

    def large():
        n = 4 * 1024 * 1024
        i = torch.arange(n, device=DEV, dtype=torch.int64)

        def x(r):
            return ((i * 131 + r * 977 + (i // 4096) * 7) % 1021 - 510).to(torch.float32)

        t = x(RANK)
        dist.all_reduce(t)
        exp = sum(x(r) for r in range(WORLD))
        bad = int((t != exp).sum().item())
        if bad:
            k = int((t != exp).nonzero()[0].item())
            raise CheckFailed("%d of %d differ, first %d: %r, expected %r" % (bad, n, k, t[k].item(), exp[k].item()))
        return "16 MB"

    run_check(REP, "allreduce.large.float32.SUM", large, 60)


# ----------------------------------------------------- other collectives

def check_colls():
    W, R, C = WORLD, RANK, COUNT
    cv = fwlib.coll_value

    def broadcast():
        root = W - 1
        t = f32([cv(R, i, 11) for i in range(C)])
        dist.broadcast(t, src=root)
        compare(read(t, "float32"), [cv(root, i, 11) for i in range(C)])
        return "root %d" % root

    def reduce():
        root = (W // 2) % W
        t = f32([cv(R, i, 12) for i in range(C)])
        dist.reduce(t, dst=root, op=dist.ReduceOp.SUM)
        res = t.clone() if R == root else torch.zeros_like(t)
        dist.broadcast(res, src=root)
        compare(read(res, "float32"), [sum(cv(r, i, 12) for r in range(W)) for i in range(C)])
        return "root %d's result, broadcast, checked here" % root

    def all_gather():
        t = f32([cv(R, i, 13) for i in range(C)])
        out = [torch.full_like(t, -1) for _ in range(W)]
        dist.all_gather(out, t)
        for j in range(W):
            compare(read(out[j], "float32"), [cv(j, i, 13) for i in range(C)], what="rank %d element" % j)

    def all_gather_into_tensor():
        t = f32([cv(R, i, 14) for i in range(C)])
        out = torch.full((W * C,), -1.0, device=DEV)
        dist.all_gather_into_tensor(out, t)
        compare(read(out, "float32"), [cv(j, i, 14) for j in range(W) for i in range(C)])

    def all_gather_fp8():
        name = "float8_e4m3fn"
        vals = lambda r: [float((r * 3 + i) % 17 - 8) for i in range(C)]  # noqa: E731
        t = make(vals(R), name)
        out = make([0.0] * (W * C), name)
        dist.all_gather_into_tensor(out, t)
        compare(read(out, name), [v for j in range(W) for v in vals(j)])

    def reduce_scatter_tensor():
        inp = f32([cv(R, i, 15) for i in range(W * C)])
        out = torch.full((C,), -1.0, device=DEV)
        dist.reduce_scatter_tensor(out, inp, op=dist.ReduceOp.SUM)
        compare(read(out, "float32"), [sum(cv(r, R * C + k, 15) for r in range(W)) for k in range(C)])

    def alltoall_even():
        c = 37
        inp = f32([fwlib.tagged(R, j, k) for j in range(W) for k in range(c)])
        out = torch.full((W * c,), -1.0, device=DEV)
        dist.all_to_all_single(out, inp)
        compare(read(out, "float32"), [fwlib.tagged(j, R, k) for j in range(W) for k in range(c)])

    def alltoall_uneven():
        splits = fwlib.alltoall_splits(W)
        inp = f32(fwlib.alltoall_uneven_input(W, R))
        exp = fwlib.alltoall_uneven_expected(W, R)
        out = torch.full((len(exp),), -1.0, device=DEV)
        dist.all_to_all_single(out, inp, output_split_sizes=[splits[j][R] for j in range(W)],
                               input_split_sizes=splits[R])
        compare(read(out, "float32"), exp)
        return "sends %s" % splits[R]

    def ring():
        if W < 2:
            raise NotRun("one rank")
        return (R + 1) % W, (R - 1) % W

    def send_recv():
        nxt, prv = ring()
        snd = f32([cv(R, i, 16) for i in range(C)])
        rcv = torch.full((C,), -1.0, device=DEV)
        if R % 2 == 0:  # even ranks send first, odd ranks receive first
            dist.send(snd, nxt)
            dist.recv(rcv, prv)
        else:
            dist.recv(rcv, prv)
            dist.send(snd, nxt)
        compare(read(rcv, "float32"), [cv(prv, i, 16) for i in range(C)])

    def batch_p2p():
        nxt, prv = ring()
        snd = f32([cv(R, i, 17) for i in range(C)])
        rcv = torch.full((C,), -1.0, device=DEV)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, snd, nxt), dist.P2POp(dist.irecv, rcv, prv)])
        for q in reqs:
            q.wait()
        compare(read(rcv, "float32"), [cv(prv, i, 17) for i in range(C)])

    def barrier():
        store = default_store()
        key = "fw/barrier_mark"
        if R == 0:
            time.sleep(0.3)
            store.set(key, "1")
        dist.barrier()
        if not store.check([key]):
            raise CheckFailed("barrier returned before rank 0 reached it")

    def async_ops():
        ts = [f32(fwlib.reduce_input("float32", "SUM", W, R, C, salt=20 + k)) for k in range(3)]
        works = [dist.all_reduce(t, async_op=True) for t in ts]
        fut = works[2].get_future()
        works[0].wait()
        works[1].wait()
        fut.wait()
        torch.cuda.synchronize()
        if not all(w.is_completed() for w in works):
            raise CheckFailed("a waited work is not completed")
        for k, t in enumerate(ts):
            compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", W, C, salt=20 + k)[0])
        return "3 in flight, waited by work and by future"

    def coalescing_manager():
        cm = getattr(dist, "_coalescing_manager", None) or getattr(dist.distributed_c10d, "_coalescing_manager", None)
        if cm is None:
            raise NotRun("torch.distributed._coalescing_manager is missing")
        return cm

    def run_coalesced(body):
        cm = coalescing_manager()
        if has_param(cm, "async_ops"):
            with cm(device=DEV, async_ops=True) as m:
                body()
            m.wait()
        else:
            with cm(device=DEV):
                body()

    def coalesced_allreduce():
        sizes = (C, 17, 4099)
        ts = [f32(fwlib.reduce_input("float32", "SUM", W, R, n, salt=30 + k)) for k, n in enumerate(sizes)]
        run_coalesced(lambda: [dist.all_reduce(t) for t in ts])
        for k, (t, n) in enumerate(zip(ts, sizes)):
            compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", W, n, salt=30 + k)[0])

    def coalesced_allgather():
        ins = [f32([cv(R, i, 40 + k) for i in range(C)]) for k in range(2)]
        outs = [torch.full((W * C,), -1.0, device=DEV) for _ in range(2)]
        run_coalesced(lambda: [dist.all_gather_into_tensor(o, t) for o, t in zip(outs, ins)])
        for k in range(2):
            compare(read(outs[k], "float32"), [cv(j, i, 40 + k) for j in range(W) for i in range(C)])

    def coalesced_reduce_scatter():
        ins = [f32([cv(R, i, 50 + k) for i in range(W * C)]) for k in range(2)]
        outs = [torch.full((C,), -1.0, device=DEV) for _ in range(2)]
        run_coalesced(lambda: [dist.reduce_scatter_tensor(o, t) for o, t in zip(outs, ins)])
        for k in range(2):
            compare(read(outs[k], "float32"), [sum(cv(r, R * C + i, 50 + k) for r in range(W)) for i in range(C)])

    for name, fn in (("broadcast", broadcast), ("reduce", reduce), ("all_gather", all_gather),
                     ("all_gather_into_tensor", all_gather_into_tensor),
                     ("all_gather_into_tensor.float8_e4m3fn", all_gather_fp8),
                     ("reduce_scatter_tensor", reduce_scatter_tensor),
                     ("all_to_all_single.even", alltoall_even), ("all_to_all_single.uneven", alltoall_uneven),
                     ("send_recv", send_recv), ("batch_isend_irecv", batch_p2p), ("barrier", barrier),
                     ("async_op", async_ops), ("coalesced.all_reduce", coalesced_allreduce),
                     ("coalesced.all_gather_into_tensor", coalesced_allgather),
                     ("coalesced.reduce_scatter_tensor", coalesced_reduce_scatter)):
        run_check(REP, name, fn, 45, refusal)


# ---------------------------------------------------------------- groups

def gathered_in_group(g, members, salt):
    """all_gather on g: slot k must hold what global rank members[k] sent."""
    t = f32([fwlib.coll_value(RANK, i, salt) for i in range(64)])
    out = [torch.full_like(t, -1) for _ in members]
    dist.all_gather(out, t, group=g)
    for k, r in enumerate(members):
        compare(read(out[k], "float32"), [fwlib.coll_value(r, i, salt) for i in range(64)],
                what="slot %d (rank %d) element" % (k, r))


def check_groups():
    def new_group_subset():
        ranks = sorted({0, WORLD - 1})
        g = new_group(ranks, eager=False)  # made by the first collective
        if RANK not in ranks:
            if member(g):
                raise CheckFailed("a rank outside %s got a group" % ranks)
            return "not a member of %s: NON_GROUP_MEMBER" % ranks
        COMMS.append((ranks.index(RANK), len(ranks)))
        t = f32([fwlib.coll_value(RANK, i, 60) for i in range(COUNT)])
        dist.all_reduce(t, group=g)
        compare(read(t, "float32"), [sum(fwlib.coll_value(r, i, 60) for r in ranks) for i in range(COUNT)])
        return "ranks %s, made lazily" % ranks

    def split(lists, salt):
        sg = getattr(dist, "split_group", None)
        if sg is None:
            raise NotRun("torch.distributed.split_group is missing in torch %s" % torch.__version__)
        lists = [x for x in lists if x]
        g = sg(split_ranks=lists)
        mine = [x for x in lists if RANK in x][0]
        if not member(g):
            raise CheckFailed("split_group gave this rank no group (it is in %s)" % mine)
        members = dist.get_process_group_ranks(g)
        if sorted(members) != sorted(mine):
            raise CheckFailed("group ranks %s, asked for %s" % (members, mine))
        if dist.get_rank(g) != members.index(RANK) or dist.get_world_size(g) != len(mine):
            raise CheckFailed("group rank %d of %d, torch's map says %d of %d" % (
                dist.get_rank(g), dist.get_world_size(g), members.index(RANK), len(mine)))
        COMMS.append((members.index(RANK), len(mine)))
        gathered_in_group(g, members, salt)
        return "ranks in group order %s" % members

    def nonblocking():
        opts_t = getattr(getattr(dist, "ProcessGroupNCCL", None), "Options", None)
        if opts_t is None:
            raise NotRun("no ProcessGroupNCCL.Options")
        opts = opts_t()
        if not hasattr(opts, "config"):
            raise NotRun("ProcessGroupNCCL.Options has no config (ncclConfig_t)")
        opts.config.blocking = 0
        if opts.config.blocking != 0:
            raise NotRun("ProcessGroupNCCL.Options.config.blocking does not keep 0")
        g = new_group(list(range(WORLD)), pg_options=opts)
        COMMS.append((RANK, WORLD))
        t = f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, COUNT, salt=61))
        dist.all_reduce(t, group=g)
        compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, COUNT, salt=61)[0])
        try:
            seen = g._get_backend(DEV).options.config.blocking
            return "config.blocking %d on the group's backend" % seen
        except (AttributeError, RuntimeError):
            return "config.blocking 0 asked (the backend's options not readable)"

    run_check(REP, "new_group", new_group_subset, 60)
    run_check(REP, "split_group.parity", lambda: split(
        [[r for r in range(WORLD) if r % 2 == 0], [r for r in range(WORLD) if r % 2 == 1]], 62), 60)
    run_check(REP, "split_group.reversed", lambda: split([list(range(WORLD))[::-1]], 63), 60)
    run_check(REP, "init.nonblocking", nonblocking, 60)


# -------------------------------------------------------------- training

def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4)).to(DEV)


def batch(step, n):
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(n, 8, generator=g).to(DEV), torch.randn(n, 4, generator=g).to(DEV)


def close(a, b, rtol=1e-4, atol=1e-5):
    return abs(a - b) <= atol + rtol * abs(b)


def check_ddp():
    from torch.nn.parallel import DistributedDataParallel as DDP
    local, steps, lr = 4, 4, 0.05
    m = model(1234)
    ref = copy.deepcopy(m)  # rank 0's start, trained on the whole batch in this process
    if RANK:
        with torch.no_grad():  # DDP must start every rank from rank 0's parameters
            for p in m.parameters():
                p.add_(0.01 * RANK)
    ddp = DDP(m, device_ids=[DEV.index])
    opt = torch.optim.SGD(ddp.parameters(), lr=lr)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=lr)
    for step in range(steps):
        x, y = batch(step, local * WORLD)
        sl = slice(RANK * local, (RANK + 1) * local)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[sl]), y[sl]).backward()
        opt.step()
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
    flat = torch.cat([p.detach().reshape(-1) for p in m.parameters()])
    bits = flat.view(torch.int32).to(torch.int64)
    cks = (bits * torch.arange(1, bits.numel() + 1, device=DEV, dtype=torch.int64)).sum().reshape(1)
    all_cks = [torch.zeros_like(cks) for _ in range(WORLD)]
    dist.all_gather(all_cks, cks)
    vals = [int(c.item()) for c in all_cks]
    if len(set(vals)) != 1:
        raise CheckFailed("parameter checksums differ across ranks: %s" % vals)
    worst = max(float(((a.detach() - b.detach()).abs() / (b.detach().abs() + 1e-3)).max())
                for a, b in zip(m.parameters(), ref.parameters()))
    if worst > 1e-4:
        raise CheckFailed("parameters off the one-process run by %.2e (relative)" % worst)
    return "checksum %d on every rank; %.1e from the one-process run" % (vals[0], worst)


def check_fsdp():
    fully_shard = None
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import fully_shard
        except ImportError:
            raise NotRun("no torch.distributed.fsdp.fully_shard in torch %s" % torch.__version__)
    local, steps, lr = 4, 5, 0.05
    m = model(4321)
    ref = copy.deepcopy(m)
    for layer in m:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(m)
    opt = torch.optim.SGD(m.parameters(), lr=lr)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=lr)
    losses, ref_losses = [], []
    for step in range(steps):
        x, y = batch(100 + step, local * WORLD)
        sl = slice(RANK * local, (RANK + 1) * local)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(m(x[sl]), y[sl])
        loss.backward()
        opt.step()
        g = loss.detach().clone()
        dist.all_reduce(g, op=dist.ReduceOp.AVG)  # the global batch's loss
        losses.append(g.item())
        ref_opt.zero_grad()
        rl = torch.nn.functional.mse_loss(ref(x), y)
        rl.backward()
        ref_opt.step()
        ref_losses.append(rl.item())
    off = [k for k in range(steps) if not close(losses[k], ref_losses[k])]
    if off:
        raise CheckFailed("losses %s, one process %s" % (losses, ref_losses))
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        full = p.full_tensor() if hasattr(p, "full_tensor") else p
        if not torch.allclose(full.detach(), q.detach(), rtol=1e-4, atol=1e-5):
            raise CheckFailed("parameter %s off the one-process run" % name)
    return "losses %.5f .. %.5f match the one-process run" % (losses[0], losses[-1])


# ------------------------------------------------------- graphs, memory

def check_graph():
    if not hasattr(torch.cuda, "graph"):
        raise NotRun("no torch.cuda.graph")
    W, R, C = WORLD, RANK, COUNT
    static = f32(fwlib.reduce_input("float32", "SUM", W, R, C, salt=70))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            dist.all_reduce(static.clone())
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dist.all_reduce(static)
    for k in range(3):
        static.copy_(f32(fwlib.reduce_input("float32", "SUM", W, R, C, salt=71 + k)))
        g.replay()
        torch.cuda.synchronize()
        compare(read(static, "float32"), fwlib.expected_reduce("float32", "SUM", W, C, salt=71 + k)[0],
                what="replay %d element" % k)
    return "captured once, replayed 3 times with new inputs"


def check_graph_premul():
    mk = getattr(dist, "_make_nccl_premul_sum", None)
    if mk is None:
        raise NotRun("torch.distributed._make_nccl_premul_sum is missing")
    W, R, C = WORLD, RANK, COUNT
    factor = torch.tensor([fwlib.PREMUL_DEVICE_FACTOR], dtype=torch.float32, device=DEV)
    static = f32(fwlib.reduce_input("float32", "PREMUL_SUM", W, R, C, salt=80))
    dist.all_reduce(static.clone(), op=mk(factor))
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dist.all_reduce(static, op=mk(factor))
    for k, f in enumerate((fwlib.PREMUL_DEVICE_FACTOR, 0.5, fwlib.PREMUL_HOST_FACTOR)):
        # The factor lives in device memory: NCCL reads it as the work runs.
        factor.fill_(f)
        static.copy_(f32(fwlib.reduce_input("float32", "PREMUL_SUM", W, R, C, salt=81 + k)))
        g.replay()
        torch.cuda.synchronize()
        compare(read(static, "float32"),
                fwlib.expected_reduce("float32", "PREMUL_SUM", W, C, salt=81 + k, factor=f)[0],
                what="replay %d (factor %g) element" % (k, f))
    return "factors -2, 0.5, 3 set between replays"


_CALLER = []


def torch_cuda_lib():
    """torch's library that calls NCCL: lib/libtorch_cuda.so, or (should a
    release move the calls) the first of torch's libraries importing
    ncclAllReduce."""
    if _CALLER:
        return _CALLER[0]
    d = os.path.join(os.path.dirname(torch.__file__), "lib")
    first = os.path.join(d, "libtorch_cuda.so")
    found = first
    try:
        others = sorted(f for f in os.listdir(d) if f.endswith(".so") and f != "libtorch_cuda.so")
    except OSError:
        others = []
    for cand in [first] + [os.path.join(d, f) for f in others]:
        try:
            if "ncclAllReduce" in fwlib.elf_imports(cand):
                found = cand
                break
        except (OSError, ValueError):
            continue
    if found != first:
        info("torch's NCCL calls are in %s" % os.path.basename(found))
    _CALLER.append(found)
    return found


def check_mempool():
    pg = dist.distributed_c10d._get_default_group()
    backend = pg._get_backend(DEV)
    try:
        alloc = getattr(backend, "mem_allocator", None)
    except RuntimeError as e:
        # torch offers NCCL's allocator only where the GPU has multicast,
        # whichever library serves it.
        if fwlib.cuda_multicast_supported(DEV.index) == 0:
            raise NotRun("torch offers ncclMemAlloc's pool only on GPUs with multicast, and this one has none (%s)" % e)
        raise
    if alloc is None:
        raise NotRun("ProcessGroupNCCL has no mem_allocator in torch %s" % torch.__version__)
    pool_t = getattr(torch.cuda, "MemPool", None) or getattr(torch.cuda.memory, "MemPool", None)
    use = getattr(torch.cuda, "use_mem_pool", None) or getattr(torch.cuda.memory, "use_mem_pool", None)
    if pool_t is None or use is None:
        raise NotRun("no torch.cuda.MemPool / use_mem_pool")
    pool = pool_t(alloc)
    with use(pool):
        t = torch.empty(COUNT * 32, dtype=torch.float32, device=DEV)
    segs = pool.snapshot() if hasattr(pool, "snapshot") else []
    ptr = t.data_ptr()
    if segs and not any(s["address"] <= ptr < s["address"] + s["total_size"] for s in segs):
        raise CheckFailed("the tensor is not in the pool's segments")
    n = t.numel()
    t.copy_(f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, n, salt=90)))
    dist.all_reduce(t)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, n, salt=90)[0])
    note = "%d segment(s) from the NCCL allocator" % len(segs)
    if EXPECT == "mkccl" and MKLIB:
        try:
            binds = [b for b in fwlib.got_bindings(torch_cuda_lib()) if b[0] == "ncclMemAlloc"]
        except (OSError, ValueError) as e:
            binds = []
            note += "; GOT not read: %s" % e
        if binds and not all(s == "bound" and fwlib.same_file(p, MKLIB) for _, s, p in binds):
            raise CheckFailed("torch's ncclMemAlloc is not mkccl's: %s" % binds)
        if binds:
            note += "; ncclMemAlloc bound to mkccl"
    state = {"pool": pool, "t": t, "backend": backend}
    return note, state


def default_pool_state():
    """A pool of torch's own allocator, for registration where torch offers
    no NCCL allocator."""
    pool_t = getattr(torch.cuda, "MemPool", None) or getattr(torch.cuda.memory, "MemPool", None)
    use = getattr(torch.cuda, "use_mem_pool", None) or getattr(torch.cuda.memory, "use_mem_pool", None)
    if pool_t is None or use is None:
        raise NotRun("no torch.cuda.MemPool / use_mem_pool")
    pool = pool_t()
    with use(pool):
        t = torch.empty(COUNT * 32, dtype=torch.float32, device=DEV)
    backend = dist.distributed_c10d._get_default_group()._get_backend(DEV)
    return {"pool": pool, "t": t, "backend": backend}


def check_register(state):
    backend, pool, t = state["backend"], state["pool"], state["t"]
    reg = getattr(backend, "register_mem_pool", None)
    dereg = getattr(backend, "deregister_mem_pool", None)
    if reg is None:
        raise NotRun("ProcessGroupNCCL has no register_mem_pool in torch %s" % torch.__version__)
    reg(pool)  # ncclCommRegister on each of the pool's segments
    n = t.numel()
    t.copy_(f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, n, salt=91)))
    dist.all_reduce(t)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, n, salt=91)[0])
    if dereg is not None:
        dereg(pool)
    return "registered, all_reduce on the registered tensor, deregistered"


# ------------------------------------------------------- abort, shrink

def abort_fn():
    fn = getattr(dist.distributed_c10d, "_abort_process_group", None)
    if fn is not None:
        return fn
    return lambda g: g.abort()


def check_default_still_works(salt):
    t = f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, COUNT, salt=salt))
    dist.all_reduce(t)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, COUNT, salt=salt)[0])


def check_abort_idle():
    g = new_group(list(range(WORLD)))
    COMMS.append((RANK, WORLD))
    t = f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, COUNT, salt=100))
    dist.all_reduce(t, group=g)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, COUNT, salt=100)[0])
    if not hasattr(dist.distributed_c10d, "_abort_process_group") and not hasattr(g, "abort"):
        raise NotRun("neither _abort_process_group nor ProcessGroup.abort in torch %s" % torch.__version__)
    t0 = time.monotonic()
    abort_fn()(g)
    dt = time.monotonic() - t0
    check_default_still_works(101)
    return "aborted in %.2f s; the default group still right" % dt


def check_abort_blocked():
    """Rank 0 starts an all-reduce the others never join; aborting the group
    must end it (the GPU free again) and leave the default group working."""
    if WORLD < 2:
        raise NotRun("one rank")
    if not hasattr(dist.distributed_c10d, "_abort_process_group") and not hasattr(dist.ProcessGroup, "abort"):
        raise NotRun("no way to abort a process group in torch %s" % torch.__version__)
    old = os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING")
    # This group's watchdog must not end the process over the aborted work.
    os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0"
    try:
        g = new_group(list(range(WORLD)))
    finally:
        if old is None:
            os.environ.pop("TORCH_NCCL_ASYNC_ERROR_HANDLING", None)
        else:
            os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = old
    COMMS.append((RANK, WORLD))
    t = f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, COUNT, salt=110))
    dist.all_reduce(t, group=g)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, COUNT, salt=110)[0])
    store = default_store()
    work = dist.all_reduce(t, group=g, async_op=True) if RANK == 0 else None
    if not fwlib.store_barrier(store, "fw/abort_blocked", WORLD, 30):
        raise CheckFailed("the ranks did not meet before the abort")
    time.sleep(1.0)
    t0 = time.monotonic()
    abort_fn()(g)
    torch.cuda.synchronize()
    dt = time.monotonic() - t0
    note = "aborted in %.2f s" % dt
    if work is not None:
        try:
            work.wait()
            note += "; the blocked work returned"
        except Exception as e:  # noqa: BLE001 - an aborted work may raise
            note += "; the blocked work raised %s" % type(e).__name__
    if not fwlib.store_barrier(store, "fw/abort_blocked_after", WORLD, 30):
        raise CheckFailed("the ranks did not meet after the abort")
    check_default_still_works(111)
    return note + "; the default group still right"


def check_shrink():
    shrink = getattr(dist, "shrink_group", None)
    if shrink is None:
        raise NotRun("torch.distributed.shrink_group is missing in torch %s" % torch.__version__)
    if WORLD < 2:
        raise NotRun("one rank")
    g = new_group(list(range(WORLD)))
    COMMS.append((RANK, WORLD))
    t = f32(fwlib.reduce_input("float32", "SUM", WORLD, RANK, COUNT, salt=120))
    dist.all_reduce(t, group=g)
    compare(read(t, "float32"), fwlib.expected_reduce("float32", "SUM", WORLD, COUNT, salt=120)[0])
    store = default_store()
    out = WORLD - 1
    survivors = list(range(out))
    error = None
    if RANK != out:  # the excluded rank takes no part, as ncclCommShrink asks
        try:
            ng = shrink([out], group=g) if has_param(shrink, "group") else shrink([out], g)
            if ng.size() != len(survivors):
                raise CheckFailed("the shrunk group has %d ranks, expected %d" % (ng.size(), len(survivors)))
            COMMS.append((dist.get_rank(ng), len(survivors)))
            v = f32([fwlib.coll_value(RANK, i, 121) for i in range(COUNT)])
            dist.all_reduce(v, group=ng)
            compare(read(v, "float32"), [sum(fwlib.coll_value(r, i, 121) for r in survivors) for i in range(COUNT)])
            store.set("fw/shrink/%d" % RANK, "ok")
        except Exception as e:  # noqa: BLE001 - told to the excluded rank, then raised
            store.set("fw/shrink/%d" % RANK, ("%s: %s" % (type(e).__name__, e))[:300])
            error = e
    met = fwlib.store_barrier(store, "fw/shrink_done", WORLD, 45)
    if error is not None:
        raise error
    if not met:
        raise CheckFailed("the ranks did not meet after the shrink")
    if RANK == out:
        said = {r: store.get("fw/shrink/%d" % r).decode() for r in survivors}
        bad = {r: s for r, s in said.items() if s != "ok"}
        if bad:
            raise CheckFailed("survivors failed: %s" % bad)
        return "excluded; every survivor's all_reduce on the shrunk group was right"
    return "rank %d of the shrunk group of %d, all_reduce right" % (dist.get_rank(ng), len(survivors))


# ------------------------------------------------------ symmetric memory

# Symmetric tensors stay alive to the end: torch never deregisters their
# windows, so freeing one would free memory a window still maps.
SYMM_KEEP = []


class Symm:
    """torch's symmetric memory on its NCCL backend: the module, the world
    group's name, and whether the ranks share a host (NCCL maps peers for
    loads and stores only within one)."""

    def __init__(self):
        try:
            import torch.distributed._symmetric_memory as sm
        except ImportError as e:
            raise NotRun("torch %s has no torch.distributed._symmetric_memory: %s" % (torch.__version__, e))
        self.sm = sm
        self.group = dist.group.WORLD
        self.name = getattr(self.group, "group_name", None)
        store = default_store()
        store.set("fw/symm/host/%d" % RANK, os.environ.get("NCCL_HOSTID") or os.uname().nodename)
        self.hosts = fwlib.hosts_of([store.get("fw/symm/host/%d" % r).decode() for r in range(WORLD)])
        self.hdl = None
        self.broken = None  # why the checks after rendezvous cannot run

    def empty(self, n, dtype=torch.float32):
        t = self.sm.empty(n, dtype=dtype, device=DEV)
        SYMM_KEEP.append(t)
        return t

    def rendezvous(self, t):
        try:
            return self.sm.rendezvous(t, group=self.group)
        except Exception as e:  # noqa: BLE001 - classified below
            r = fwlib.symm_refusal(e)
            if r:
                raise NotRun(r)
            if self.hosts:
                # NCCL's device API reaches peers on other hosts only through
                # GIN (the network): a copy without it refuses.
                raise NotRun("ranks on %s: rendezvous needs NCCL's network side (GIN) there: %s: %s" % (
                    self.hosts, type(e).__name__, " ".join(str(e).split())[:300]))
            raise

    def need(self):
        if self.broken:
            raise NotRun(self.broken)
        if self.hosts:
            raise NotRun("ranks on %s: peers' buffers are mapped only within a host" % self.hosts)

    def op(self, name):
        ops = getattr(torch.ops, "symm_mem", None)
        fn = getattr(ops, name, None) if ops is not None else None
        if fn is None:
            raise NotRun("torch %s has no torch.ops.symm_mem.%s" % (torch.__version__, name))
        return fn


def sync_all():
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()


def symm_values(r, n, salt):
    return [fwlib.coll_value(r, i, salt) for i in range(n)]


def zero_own_signal_pad(S, hdl):
    """Signal pads start as ncclMemAlloc left them; torch's kernels expect zeros."""
    pad = getattr(hdl, "get_signal_pad", None)
    if pad is not None:
        pad(RANK).zero_()
    sync_all()


def check_symm_mem():
    n, m = COUNT, 257
    try:
        S = Symm()
    except NotRun as e:
        REP.notrun("symm_mem", e)
        return

    def backend():
        setb = getattr(S.sm, "set_backend", None)
        if setb is None:
            raise NotRun("torch %s has no symm_mem.set_backend" % torch.__version__)
        try:
            setb("NCCL")
        except Exception as e:  # noqa: BLE001 - torch built without it refuses
            raise NotRun("torch refuses set_backend('NCCL'): %s" % " ".join(str(e).split())[:300])
        getb = getattr(S.sm, "get_backend", None)
        seen = getb(DEV) if getb is not None else None
        if seen is not None and seen != "NCCL":
            raise CheckFailed("get_backend says %r after set_backend('NCCL')" % seen)
        enable = getattr(S.sm, "enable_symm_mem_for_group", None)
        if enable is not None and S.name is not None:
            enable(S.name)
        return "backend %s%s" % (seen or "NCCL (get_backend missing)",
                                 "; ranks on " + S.hosts if S.hosts else "")

    if not run_check(REP, "symm_mem.set_backend", backend, 30):
        REP.notrun("symm_mem", "the NCCL backend could not be selected")
        return
    state = {}

    def empty_and_rendezvous():
        t = S.empty(n)
        t.copy_(f32(symm_values(RANK, n, 130)))
        state["t"] = t
        hdl = S.rendezvous(t)
        state["hdl"] = hdl
        if hdl.rank != RANK or hdl.world_size != WORLD:
            raise CheckFailed("handle says rank %d of %d" % (hdl.rank, hdl.world_size))
        ptrs = list(hdl.buffer_ptrs)
        if len(ptrs) != WORLD:
            raise CheckFailed("%d buffer pointers for %d ranks" % (len(ptrs), WORLD))
        if not S.hosts and (0 in ptrs or len(set(ptrs)) != WORLD):
            raise CheckFailed("buffer pointers not one per peer: %s" % [hex(p) for p in ptrs])
        size = getattr(hdl, "buffer_size", None)
        if size is not None and size < n * 4:
            raise CheckFailed("buffer_size %d, less than the %d bytes allocated" % (size, n * 4))
        return "%d peers' buffers mapped%s" % (len(ptrs), ", buffer_size %s" % size if size else "")

    def rendezvous_check():
        try:
            return empty_and_rendezvous()
        except NotRun as e:
            S.broken = "rendezvous did not run: %s" % e
            raise
        except Exception:
            S.broken = "rendezvous failed (FAIL symm_mem.rendezvous)"
            raise

    if not run_check(REP, "symm_mem.rendezvous", rendezvous_check, 60):
        S.broken = S.broken or "rendezvous failed"

    def peer_buffers():
        S.need()
        hdl, t = state["hdl"], state["t"]
        sync_all()
        for p in range(WORLD):
            got = hdl.get_buffer(p, (n,), torch.float32).clone()
            compare(read(got, "float32"), symm_values(p, n, 130), what="rank %d's element" % p)
        return "every peer's buffer read through get_buffer"

    def peer_stores():
        S.need()
        t = S.empty(WORLD * m)
        t.fill_(-1.0)
        hdl = S.rendezvous(t)
        sync_all()
        for p in range(WORLD):
            dst = hdl.get_buffer(p, (WORLD, m), torch.float32)
            dst[RANK].copy_(f32([fwlib.tagged(RANK, p, k) for k in range(m)]))
        sync_all()
        compare(read(t, "float32"), fwlib.symm_scatter_expected(WORLD, RANK, m))
        return "every rank stored its slot in every peer's buffer"

    def signal_pads():
        S.need()
        hdl = state["hdl"]
        if not hasattr(hdl, "get_signal_pad"):
            raise NotRun("the handle has no get_signal_pad in torch %s" % torch.__version__)
        if len(list(hdl.signal_pad_ptrs)) != WORLD:
            raise CheckFailed("%d signal pad pointers for %d ranks" % (len(list(hdl.signal_pad_ptrs)), WORLD))
        nxt = (RANK + 1) % WORLD
        sync_all()
        # Only the last word, one writer per pad: torch's kernels use the front.
        hdl.get_signal_pad(nxt).view(torch.int32)[-1:].fill_(7000 + RANK)
        sync_all()
        got = [int(hdl.get_signal_pad(p).view(torch.int32)[-1:].clone().cpu().item()) for p in range(WORLD)]
        sync_all()  # every rank has read every pad before any clears its own
        hdl.get_signal_pad(RANK).view(torch.int32)[-1:].fill_(0)
        sync_all()
        exp = [7000 + (p - 1) % WORLD for p in range(WORLD)]
        if got != exp:
            raise CheckFailed("the pads' last words are %s, expected %s" % (got, exp))
        return "each rank stored in the next rank's signal pad; every pad read by every rank"

    def barrier():
        S.need()
        hdl = state["hdl"]
        store, key = default_store(), "fw/symm/barrier_mark"
        sync_all()
        if RANK == 0:
            time.sleep(0.3)
            store.set(key, "1")
        hdl.barrier(channel=0)
        torch.cuda.synchronize()
        if not store.check([key]):
            raise CheckFailed("the handle's barrier returned before rank 0 reached it")

    def signal_ring():
        S.need()
        hdl = state["hdl"]
        if WORLD < 2:
            raise NotRun("one rank")
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        sync_all()
        if RANK % 2 == 0:
            hdl.put_signal(nxt, channel=0)
            hdl.wait_signal(prv, channel=0)
        else:
            hdl.wait_signal(prv, channel=0)
            hdl.put_signal(nxt, channel=0)
        torch.cuda.synchronize()
        return "a ring of put_signal/wait_signal"

    def one_sided(kind):
        S.need()
        if S.name != "0":
            raise NotRun("torch's nccl_%s uses group '0'; the world group is %r" % (kind, S.name))
        if WORLD < 2:
            raise NotRun("one rank")
        fn = S.op({"put": "nccl_put", "get": "nccl_get", "signal": "nccl_put_with_signal"}[kind])
        wait = S.op("nccl_wait_for_signal") if kind == "signal" else None
        salt = {"put": 150, "get": 151, "signal": 152}[kind]
        t = S.empty(n)
        hdl = S.rendezvous(t)
        if kind == "signal":
            zero_own_signal_pad(S, hdl)
        for rnd, (actor, target) in enumerate(fwlib.symm_rounds(WORLD)):
            t.copy_(f32(symm_values(RANK, n, salt)))
            sync_all()
            if kind == "signal":
                if RANK == actor:
                    fn(t, 100 + rnd, target)
                elif RANK == target:
                    wait(t, 100 + rnd)  # the signal, not a barrier, orders the read
            elif RANK == actor:
                fn(t, target)
            if kind != "signal":
                sync_all()
            torch.cuda.synchronize()
            op = "get" if kind == "get" else "put"
            exp = fwlib.symm_round_expected(WORLD, RANK, actor, target,
                                            lambda r: symm_values(r, n, salt), op)
            compare(read(t, "float32"), exp, what="round %d (rank %d to %d) element" % (rnd, actor, target))
            sync_all()
        return "%d rounds, rank s on rank s+1" % WORLD

    def reduce_op(name, inplace=False, out=False):
        S.need()
        fn = S.op(name)
        salt, big = 160 + len(name), 4096  # a multiple of every rank count's split
        t = S.empty(big)
        hdl = S.rendezvous(t)
        zero_own_signal_pad(S, hdl)
        t.copy_(f32(symm_values(RANK, big, salt)))
        sync_all()
        if out:
            res = torch.full((big,), -1.0, device=DEV)
            fn(t, "sum", S.name, res)
        else:
            res = fn(t, "sum", S.name)
            if inplace:
                res = t
        torch.cuda.synchronize()
        compare(read(res, "float32"), [sum(fwlib.coll_value(r, i, salt) for r in range(WORLD)) for i in range(big)])
        sync_all()
        return "%d floats" % (big)

    def c10d_on_symm():
        S.need()
        t = S.empty(n)
        S.rendezvous(t)  # windows registered: NCCL may take its symmetric path
        t.copy_(f32(symm_values(RANK, n, 170)))
        dist.all_reduce(t)
        compare(read(t, "float32"), [sum(fwlib.coll_value(r, i, 170) for r in range(WORLD)) for i in range(n)])
        return "all_reduce on a rendezvoused tensor"

    def classify(e):
        return fwlib.symm_refusal(e)

    for name, fn, lim in (("symm_mem.get_buffer", peer_buffers, 45),
                          ("symm_mem.get_buffer.store", peer_stores, 45),
                          ("symm_mem.signal_pad", signal_pads, 45),
                          ("symm_mem.barrier", barrier, 45),
                          ("symm_mem.put_signal_wait_signal", signal_ring, 45),
                          ("symm_mem.nccl_put", lambda: one_sided("put"), 60),
                          ("symm_mem.nccl_get", lambda: one_sided("get"), 60),
                          ("symm_mem.nccl_put_with_signal", lambda: one_sided("signal"), 60),
                          ("symm_mem.one_shot_all_reduce", lambda: reduce_op("one_shot_all_reduce"), 60),
                          ("symm_mem.one_shot_all_reduce_out",
                           lambda: reduce_op("one_shot_all_reduce_out", out=True), 60),
                          ("symm_mem.two_shot_all_reduce_",
                           lambda: reduce_op("two_shot_all_reduce_", inplace=True), 60),
                          ("symm_mem.c10d_all_reduce", c10d_on_symm, 45)):
        run_check(REP, name, fn, lim, classify)

    # Multicast is never created here (no NVLink multicast, NCCL_NVLS_ENABLE=0).
    hdl = state.get("hdl")
    mc = getattr(hdl, "multicast_ptr", None) if hdl is not None else None
    gpu_mc = fwlib.cuda_multicast_supported(DEV.index)
    why = "needs NVLink multicast: the handle's multicast_ptr is %s, the GPU's multicast support %s" % (
        "0" if not mc else hex(mc), {0: "none", 1: "yes"}.get(gpu_mc, "unknown"))
    for name in ("multimem_all_reduce_", "multimem_one_shot_all_reduce", "multimem_all_gather_out"):
        REP.notrun("symm_mem." + name, why)
    ops = getattr(torch.ops, "symm_mem", None)
    for name in ("nccl_all_gather_offset", "nccl_reduce_scatter_offset"):
        if ops is not None and hasattr(ops, name):
            REP.notrun("symm_mem." + name, "in torch %s but not checked here (device-API reductions)" % torch.__version__)


# ------------------------------------------------------------------ proof

def check_proof():
    lib = torch_cuda_lib()
    text = log_text()
    if EXPECT == "nvidia":
        pr = fwlib.prove(lib, MKLIB or "/nonexistent", "ncclAllReduce", text, ())
        for f in pr["facts"]:
            info("proof: " + f)
        c = fwlib.log_comms(text or "")
        if pr["verdict"] != "nvidia":
            raise CheckFailed("expected NVIDIA's NCCL to serve, found %s: %s" % (pr["verdict"], pr["problems"]))
        seen = "its log has NVIDIA's lines" if c["nvidia"] or c["banner"] else "no NVIDIA line recognised in its log"
        REP.passed("proof.nvidia", "served by NVIDIA (%s), %s: the check tells the copies apart" % (
            pr["nvidia_file"], seen))
        return
    if not MKLIB:
        raise CheckFailed("FW_MKCCL_LIB is not set (mkccl-exec --lib)")
    if text is None:
        raise CheckFailed("no NCCL log to read (NCCL_DEBUG=INFO, NCCL_DEBUG_FILE=..._%p.log)")
    pr = fwlib.prove(lib, MKLIB, "ncclAllReduce", text, COMMS)
    for f in pr["facts"]:
        info("proof: " + f)
    parts = pr["parts"]
    for part, title in (("binding", "%s's NCCL calls go to mkccl's file" % os.path.basename(lib)),
                        ("global", "mkcclInfoReport in the global scope"),
                        ("log", "mkccl's Init COMPLETE for each of %d communicators, no NVIDIA line" % len(COMMS))):
        if parts[part]:
            REP.failed("proof." + part, "; ".join(parts[part]))
        else:
            REP.passed("proof." + part, title)
    if pr["verdict"] != "mkccl":
        raise CheckFailed("verdict %s: %s" % (pr["verdict"], "; ".join(pr["problems"])))
    return "served by mkccl (%s)" % MKLIB


# ------------------------------------------------------------------- main

def finish():
    store = default_store()
    mine = REP.counts["FAIL"]
    store.add("fw/fail", mine)
    met = fwlib.store_barrier(store, "fw/done", WORLD, 60)
    total = store.add("fw/fail", 0)
    print("RESULT rank %d/%d: %d PASS, %d FAIL, %d NOTRUN here; %d FAIL on all ranks%s" % (
        RANK, WORLD, REP.counts["PASS"], mine, REP.counts["NOTRUN"], total,
        "" if met else " (not every rank reached the end)"), flush=True)
    rc = 1 if total or not met else 0
    run_check(REP, "destroy_process_group", dist.destroy_process_group, 60)
    return 1 if REP.counts["FAIL"] > mine else rc


def main():
    global DEV
    if not torch.cuda.is_available():
        REP.failed("cuda", "torch sees no GPU")
        return 1
    ndev = torch.cuda.device_count()
    DEV = torch.device("cuda", LOCAL % ndev)
    torch.cuda.set_device(DEV)
    if RANK == 0:
        nv = getattr(torch.cuda, "nccl", None)
        print("INFO torch %s, its NCCL %s, %d GPU(s), %d ranks, expecting %s" % (
            torch.__version__, nv.version() if nv else "?", ndev, WORLD, EXPECT), flush=True)
    try:
        init()
    except Exception as e:  # noqa: BLE001
        REP.failed("init", "%s: %s" % (type(e).__name__, e))
        return 1
    if want("smoke") and not want("allreduce"):
        run_check(REP, "allreduce.float32.SUM", lambda: allreduce_case("float32", "SUM"), 30)
    if want("allreduce"):
        check_allreduce()
    if want("colls"):
        check_colls()
    if want("groups"):
        check_groups()
    if want("ddp"):
        run_check(REP, "ddp", check_ddp, 90)
    if want("fsdp"):
        run_check(REP, "fsdp2", check_fsdp, 90)
    if want("graph"):
        run_check(REP, "cuda_graph", check_graph, 60)
        run_check(REP, "cuda_graph.premul_sum_device_factor", check_graph_premul, 60, refusal)
    if want("mempool"):
        state = {}

        def mempool():
            note, st = check_mempool()
            state.update(st)
            return note

        if run_check(REP, "mempool.nccl_mem_alloc", mempool, 60):
            run_check(REP, "mempool.register", lambda: check_register(state), 60)
        else:
            run_check(REP, "mempool.register.default_pool", lambda: check_register(default_pool_state()), 60)
        state.clear()
    if want("abort"):
        run_check(REP, "abort.idle", check_abort_idle, 60)
    if want("shrink"):
        run_check(REP, "shrink_group", check_shrink, 90)
    if want("symm_mem"):
        check_symm_mem()
    if want("proof"):
        run_check(REP, "proof", check_proof, 60)
    if want("abort"):
        run_check(REP, "abort.blocked", check_abort_blocked, 90)
    return finish()


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)  # past destroy_process_group; no interpreter teardown to hang in
