#!/usr/bin/env python3
"""Checks and compares nccl-tests-style runs made by the GPU check scripts
(one_gpu.sh and multi_gpu.sh: NVIDIA's nccl-tests, and mkccl-perf-gpu).

For each program P it reads LOGDIR/PREFIX_P_mkccl.log and
LOGDIR/PREFIX_P_nccl.log (the programs' stdout+stderr; PREFIX is nt unless
--prefix says) and the loader traces LOGDIR/PREFIX_P_<lib>.ld.* (LD_DEBUG=libs),
then:
  - checks every result row: #wrong is 0 (or N/A, for the in-place half of
    sendrecv and alltoall, which nccl-tests does not check) in both halves;
  - checks the footer said "Out of bounds values : 0 OK";
  - checks which libnccl.so.2 the process really loaded ("calling init:" in
    the loader trace): mkccl's for the mkccl run, NCCL's for the NCCL run;
  - prints one table per program, out-of-place results side by side.
Exit 1 if any check fails or a log is missing or has no rows.

    tools/gpu/nccl_tests_table.py [--prefix PREFIX] [--label TEXT] LOGDIR MKCCL_LIB NCCL_LIB PROGRAM...
--label says what ran (default "1 rank"), in each table's title.
"""
import glob
import os
import re
import sys

LIBS = ("mkccl", "nccl")


def parse(path):
    """(rows, footer_errors or None, text) of one nccl-tests log; rows are
    (size, time_us, algbw, busbw, wrong_oop, wrong_ip) of the 13-field lines."""
    rows, oob = [], None
    text = open(path, errors="replace").read() if os.path.exists(path) else ""
    for line in text.splitlines():
        m = re.match(r"#\s*Out of bounds values\s*:\s*(\d+)", line)
        if m:
            oob = int(m.group(1))
            continue
        f = line.split()
        if len(f) != 13 or not f[0].isdigit() or not f[1].isdigit():
            continue
        try:
            rows.append((int(f[0]), float(f[5]), float(f[6]), float(f[7]), f[8], f[12]))
        except ValueError:
            continue
    return rows, oob, text


def loaded_nccl(logdir, prefix, prog, lib):
    """The libnccl the run's processes initialised, from the LD_DEBUG traces."""
    found = set()
    for fn in glob.glob(os.path.join(logdir, f"{prefix}_{prog}_{lib}.ld.*")):
        for line in open(fn, errors="replace"):
            m = re.search(r"calling init: (\S*libnccl\.so[^\s]*)", line)
            if m:
                found.add(os.path.realpath(m.group(1)))
    return sorted(found)


def wrong(v):
    return v not in ("0", "N/A")


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def main():
    argv, prefix, label = sys.argv[1:], "nt", "1 rank"
    while argv and argv[0] in ("--prefix", "--label") and len(argv) > 1:
        if argv[0] == "--prefix":
            prefix = argv[1]
        else:
            label = argv[1]
        argv = argv[2:]
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    logdir, mk_lib, nc_lib = argv[0], os.path.realpath(argv[1]), os.path.realpath(argv[2])
    want = {"mkccl": mk_lib, "nccl": nc_lib}
    bad = 0
    for prog in argv[3:]:
        res = {}
        for lib in LIBS:
            path = os.path.join(logdir, f"{prefix}_{prog}_{lib}.log")
            rows, oob, text = parse(path)
            problems = []
            if not text:
                problems.append("no log")
            elif not rows:
                problems.append("no result rows")
            nwrong = sum(1 for r in rows if wrong(r[4]) or wrong(r[5]))
            if nwrong:
                problems.append(f"{nwrong} rows with #wrong != 0")
            if text and oob is None:
                problems.append("no 'Out of bounds values' footer (did it finish?)")
            elif oob:
                problems.append(f"Out of bounds values: {oob}")
            libs = loaded_nccl(logdir, prefix, prog, lib)
            if libs != [want[lib]]:
                problems.append(f"loaded {libs or 'no libnccl (no loader trace)'}, expected {want[lib]}")
            res[lib] = rows
            state = "FAIL" if problems else "PASS"
            print(f"{state} {prefix}_{prog}_{lib}_check: {len(rows)} sizes, loaded {', '.join(libs) or '?'}"
                  + (f" -- {'; '.join(problems)}" if problems else ", #wrong 0 everywhere"))
            bad += bool(problems)
        nc = {r[0]: r for r in res["nccl"]}
        if not res["mkccl"] and not nc:
            continue
        print(f"  {prog}, {label}, out-of-place: time (us), algbw/busbw (GB/s); "
              "x = NCCL time / mkccl time (>1: mkccl faster)")
        print(f"  {'size':>6} | {'mkccl us':>9} {'algbw':>7} {'busbw':>7} | {'NCCL us':>9} {'algbw':>7} {'busbw':>7} | {'x':>6}")
        for r in res["mkccl"]:
            o = nc.get(r[0])
            mk = f"{r[1]:9.2f} {r[2]:7.2f} {r[3]:7.2f}"
            if o:
                x = f"{o[1] / r[1]:6.2f}" if r[1] > 0 else "     -"
                print(f"  {human(r[0]):>6} | {mk} | {o[1]:9.2f} {o[2]:7.2f} {o[3]:7.2f} | {x}")
            else:
                print(f"  {human(r[0]):>6} | {mk} | {'-':>9} {'-':>7} {'-':>7} | {'-':>6}")
        for size in sorted(set(nc) - {r[0] for r in res["mkccl"]}):
            o = nc[size]
            print(f"  {human(size):>6} | {'-':>9} {'-':>7} {'-':>7} | {o[1]:9.2f} {o[2]:7.2f} {o[3]:7.2f} | {'-':>6}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
