#!/usr/bin/env python3
"""Where a message's time goes inside net-socket: stage-to-stage times of
every message of 64 KB or more, from a build with
tools/bench/socket_timeline.patch applied (each rank writes
$MKCCL_SOCK_TL/tl-PID.txt at exit). A send is matched with its receive by
connection and message number. Prints p10, median and p90 in us of:
header written; the sending helper's first try, its send syscall; the
receiver's header read and match, its helper's first try and read; and
isend to the receive's test done. Benchmarks print; this asserts nothing.
    tools/bench/socket_timeline.py DIR [messages to skip per connection, default 200]"""
import glob
import sys

# Stages, as indices into the 8 times of a line (tl[] in the patch).
# send: 0 isend, 1 header written, 4 helper's first try, 5 first bytes moved,
#       6 last chunk moved, 7 test done
# recv: 0 irecv, 1 header read, 2 matched, 4 helper's first try,
#       5 first bytes moved, 6 last chunk moved, 7 test done
ROWS = [  # (label, later stage, earlier stage): a stage is S or R and a time index
    ("S isend -> header written", "S1", "S0"),
    ("S isend -> helper first try", "S4", "S0"),
    ("S helper first try -> first bytes", "S5", "S4"),
    ("S all sent -> test done", "S7", "S6"),
    ("R irecv posted before isend", "S0", "R0"),
    ("isend -> R header read", "R1", "S0"),
    ("R header read -> matched", "R2", "R1"),
    ("R matched -> helper first try", "R4", "R2"),
    ("R helper first try -> first bytes", "R5", "R4"),
    ("R helper read span", "R6", "R5"),
    ("S all sent -> R all received", "R6", "S6"),
    ("R all received -> test done", "R7", "R6"),
    ("isend -> R test done", "R7", "S0"),
]


def load(d):
    sends, recvs = {}, {}
    for f in glob.glob(d + '/tl-*.txt'):
        for line in open(f):
            p = line.split()
            (sends if p[0] == 'S' else recvs)[(p[1], int(p[2]))] = [int(x) for x in p[4:12]]
    return sends, recvs


def quantiles(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return "-"
    return "p10 %7.1f  med %7.1f  p90 %7.1f" % (xs[n // 10] / 1e3, xs[n // 2] / 1e3, xs[9 * n // 10] / 1e3)


def main():
    sends, recvs = load(sys.argv[1])
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    keys = [k for k in sends if k in recvs and k[1] >= skip]
    print("# %d matched messages (from message %d of each connection)" % (len(keys), skip))
    def at(k, stage):
        return (sends if stage[0] == 'S' else recvs)[k][int(stage[1])]

    for label, later, earlier in ROWS:
        # a stage a message skipped (no helper, inline) reads 0: its differences are dropped
        xs = [at(k, later) - at(k, earlier) for k in keys]
        name = "%s (%s-%s)" % (label, later, earlier)
        print("%-42s %s" % (name, quantiles([x for x in xs if abs(x) < 1e9])))


if __name__ == '__main__':
    main()
