#!/usr/bin/env python3
"""Plants known bugs into a copy of the tree, one at a time, and runs the
collective tests against each: every mutant must make at least one test
fail. Prints a markdown table (the one in docs/TESTING.md) and exits 1 when
a mutant survives, or when the tests fail without any mutant.

  tools/dev/mutate.py [--check] [--list] [NAME ...]

--check only verifies that every mutant still applies to the tree (each
replaced text is found exactly once), without building anything.
MUTATE_DIR (default /tmp/mkccl-mutate) holds the copy and its build;
MUTATE_TESTS is the ctest regex of the tests run against each mutant;
MUTATE_TEST_TIMEOUT_S bounds each test (a mutant that hangs is caught when
its test is killed)."""
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# name, what it plants, file, text, replacement
MUTANTS = [
    ("block-shift", "AllGather: the last rank's block lands one element early",
     "device/common/coll_ring.h",
     "char* dst = isGather ? MK_AT(w->recvbuff, owner * count + off, c->ts) : MK_AT(w->recvbuff, off, c->ts);",
     "char* dst = isGather ? MK_AT(w->recvbuff, owner * count + off - (owner == N - 1 && owner * count + off > 0), c->ts)"
     " : MK_AT(w->recvbuff, off, c->ts);"),
    ("chunk-off-by-one", "ring AllReduce: the second chunk of each step starts one element late",
     "device/common/coll_ring.h",
     "int64_t off = grid + ((int64_t)c->bid * N + chunk) * real;",
     "int64_t off = grid + ((int64_t)c->bid * N + chunk) * real + (chunk == 1 && real > 1);"),
    ("last-dropped", "ring Broadcast and Reduce: the last element never moves",
     "device/common/coll_ring.h",
     "if (MK_PRIMS_CHUNK(p, prim, MK_AT(w->sendbuff, off, c->ts), MK_AT(w->recvbuff, off, c->ts),\n"
     "                       coll_clamp(count, off, real)))",
     "if (MK_PRIMS_CHUNK(p, prim, MK_AT(w->sendbuff, off, c->ts), MK_AT(w->recvbuff, off, c->ts),\n"
     "                       coll_clamp(count - 1, off, real)))"),
    ("wrong-peer", "Gather: the root receives each block from the next rank instead",
     "kernel-core/api/coll_api.c",
     "if (res == ncclSuccess && comm->rank == root) res = p2p_task(comm, fn, TASK_RECV, NULL, r + at, count, type, p, stream);",
     "if (res == ncclSuccess && comm->rank == root) res = p2p_task(comm, fn, TASK_RECV, NULL, r + at, count, type, "
     "(p + 1) % comm->nRanks, stream);"),
    ("stale-reduce", "ring AllReduce: the middle steps pass the partial sum on without this rank's value",
     "device/common/sched_ring.h",
     "if (j < nranks - 1) { *chunk = sched_mod(ringIx - 1 - j, nranks); return MK_PRIM_RECV_REDUCE_SEND; }",
     "if (j < nranks - 1) { *chunk = sched_mod(ringIx - 1 - j, nranks); return MK_PRIM_RECV_COPY_SEND; }"),
    ("lost-completion", "host executor: a channel never reports its 40th item done",
     "device/host/host_exec.c",
     "    cursor += sizeof(item);\n    atomic_store_explicit(&w->cursor, cursor, memory_order_release);",
     "    cursor += sizeof(item);\n    static _Atomic int mutantItems;\n"
     "    if (atomic_fetch_add(&mutantItems, 1) != 40) atomic_store_explicit(&w->cursor, cursor, memory_order_release);"),
]

DEFAULT_TESTS = ("^(test_coll_public_(shm|net)_[34]|test_coll_public_tree_3|test_plan_algo_(shm|net)_3_[a-z]+|"
                 "test_plan_rooted_(shm|net)_3|test_netdev_coll.*|test_premulsum_device|test_group_streams)$")


def sh(cmd, cwd, log=None, timeout=None, env=None):
    with open(log, "w") if log else open(os.devnull, "w") as out:
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            return 124


def apply(text, m, undo=False):
    old, new = (m[4], m[3]) if undo else (m[3], m[4])
    n = text.count(old)
    if n != 1:
        raise SystemExit(f"mutant {m[0]}: the text to replace is found {n} times in {m[2]} (not once): update the mutant")
    return text.replace(old, new)


def copy_tree(dst):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        f = f.decode()
        src = os.path.join(ROOT, f)
        if not os.path.isfile(src):
            continue
        d = os.path.join(dst, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not os.path.exists(d) or open(src, "rb").read() != open(d, "rb").read():
            shutil.copy2(src, d)


def list_tests(build, regex):
    out = subprocess.run(["ctest", "--test-dir", build, "-N", "-R", regex], capture_output=True, text=True).stdout
    return re.findall(r"Test +#\d+: (\S+)", out)


def run_tests(build, tests, timeout, logdir):
    """The tests that failed, each run alone under its own bound."""
    failed = []
    env = dict(os.environ, MKCCL_TIMEOUT="30")
    for t in tests:
        rc = sh(["ctest", "--test-dir", build, "-R", f"^{t}$", "--output-on-failure"], build,
                os.path.join(logdir, t + ".log"), timeout, env)
        if rc != 0:
            failed.append(t + (" (hung, killed)" if rc == 124 else ""))
    return failed


def main(argv):
    check = "--check" in argv
    if "--list" in argv:
        for m in MUTANTS:
            print(f"{m[0]}: {m[1]} ({m[2]})")
        return 0
    names = [a for a in argv if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not names or m[0] in names]
    if names and len(chosen) != len(names):
        raise SystemExit(f"unknown mutant among {names}; --list shows them")
    for m in chosen:
        text = open(os.path.join(ROOT, m[2])).read()
        apply(apply(text, m), m, undo=True)
    if check:
        print(f"all {len(chosen)} mutants apply")
        return 0

    work = os.environ.get("MUTATE_DIR", "/tmp/mkccl-mutate")
    src, build, logs = os.path.join(work, "src"), os.path.join(work, "build"), os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    copy_tree(src)
    jobs = str(os.cpu_count() or 2)
    timeout = int(os.environ.get("MUTATE_TEST_TIMEOUT_S", "300"))
    regex = os.environ.get("MUTATE_TESTS", DEFAULT_TESTS)
    if sh(["cmake", "-S", src, "-B", build, "-DMKCCL_ENABLE_CUDA=OFF", "-DMKCCL_WERROR=ON"], src,
          os.path.join(logs, "configure.log")) != 0:
        raise SystemExit(f"configure failed: {logs}/configure.log")

    def build_ok(tag):
        return sh(["cmake", "--build", build, "-j", jobs], src, os.path.join(logs, f"build-{tag}.log")) == 0

    if not build_ok("base"):
        raise SystemExit(f"the tree does not build: {logs}/build-base.log")
    tests = list_tests(build, regex)
    if not tests:
        raise SystemExit(f"no test matches {regex}")
    t0 = time.time()
    base = run_tests(build, tests, timeout, logs)
    print(f"# {len(tests)} tests, each under {timeout} s: {' '.join(tests)}", flush=True)
    if base:
        print(f"FAIL: without any mutant these fail: {', '.join(base)} (logs in {logs})")
        return 1
    print(f"# without a mutant: all pass ({time.time() - t0:.0f} s)\n", flush=True)
    print("| mutant | what it plants | caught by | verdict |\n|---|---|---|---|", flush=True)
    survivors = 0
    for m in chosen:
        path = os.path.join(src, m[2])
        text = open(path).read()
        open(path, "w").write(apply(text, m))
        try:
            if not build_ok(m[0]):
                caught, verdict = ["(the build)"], "CAUGHT"
            else:
                mlogs = os.path.join(logs, m[0])
                os.makedirs(mlogs, exist_ok=True)
                caught = run_tests(build, tests, timeout, mlogs)
                verdict = "CAUGHT" if caught else "SURVIVED"
        finally:
            open(path, "w").write(text)
        survivors += verdict == "SURVIVED"
        print(f"| {m[0]} | {m[1]} (`{m[2]}`) | {len(caught)}: {', '.join(caught) if caught else '-'} | {verdict} |",
              flush=True)
    build_ok("restored")
    print(f"\n{len(chosen) - survivors} of {len(chosen)} mutants caught; logs in {logs}")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
