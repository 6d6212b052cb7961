#!/usr/bin/env python3
"""Turns a host_vs_mpi.sh log into markdown tables: per rank count and path
(net-socket vs Open MPI tcp, SHM vs Open MPI vader), mkccl's out-of-place
busbw next to MPI_Allreduce's, and their ratio; then the 8 B latencies.

    bench/side_by_side.py bench.log
"""
import re
import sys


def parse(path):
    """{ranks: {section title: {size: (time_us, busbw)}}} in file order."""
    runs, ranks, title = {}, None, None
    for line in open(path):
        m = re.match(r"## (\d+) ranks", line)
        if m:
            ranks = int(m.group(1))
            runs.setdefault(ranks, {})
            continue
        if line.startswith("### "):
            title = line[4:].strip()
            continue
        if line.startswith("#") or ranks is None or title is None:
            continue
        f = line.split()
        if len(f) >= 8 and f[4] in ("-1", "0") and f[3].isalpha():  # mkccl-perf row
            size, time, busbw = int(f[0]), float(f[5]), float(f[7])
        elif len(f) == 6 and f[0].isdigit():  # mkccl-mpi-allreduce row
            size, time, busbw = int(f[0]), float(f[3]), float(f[5])
        else:
            continue
        sec = runs[ranks].setdefault(title, [])
        sec.append((size, time, busbw))
    return runs


def human(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def table(mine, theirs, label_mine, label_theirs):
    print(f"| size | {label_mine} busbw (GB/s) | {label_theirs} busbw (GB/s) | ratio |")
    print("|---:|---:|---:|---:|")
    their = {s: b for s, _, b in theirs}
    for s, _, b in mine:
        o = their.get(s)
        ratio = f"{b / o:.2f}x" if o else "-"
        print(f"| {human(s)} | {b:.2f} | {o:.2f} | {ratio} |" if o is not None else f"| {human(s)} | {b:.2f} | - | - |")
    print()


def main():
    runs = parse(sys.argv[1])
    for ranks, secs in runs.items():
        names = list(secs)
        sock = next((n for n in names if "net-socket" in n), None)
        tcp = next((n for n in names if "tcp" in n), None)
        shm = next((n for n in names if "transport-shm" in n), None)
        vader = next((n for n in names if n.startswith("Open MPI, btl vader")), None)
        lat = next((n for n in names if "latency" in n), None)
        if sock and tcp:
            print(f"**{ranks} ranks, net-socket vs Open MPI tcp BTL**\n")
            table(secs[sock], secs[tcp], "mkccl net-socket", "Open MPI tcp")
        if shm and vader:
            print(f"**{ranks} ranks, SHM vs Open MPI vader**\n")
            table(secs[shm], secs[vader], "mkccl SHM", "Open MPI vader")
        if lat and len(secs[lat]) >= 2:
            (_, t_mine, _), (_, t_mpi, _) = secs[lat][0], secs[lat][1]
            print(f"**{ranks} ranks, 8 B AllReduce latency**: mkccl SHM {t_mine:.2f} us, Open MPI vader {t_mpi:.2f} us\n")


if __name__ == "__main__":
    main()
